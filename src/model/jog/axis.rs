//! Whether a tool-point jog follows the axis it names (issue 44). The OCU sends a twist; the
//! arm's own solver turns it into joint motion, and where a joint is at its limit (or the arm
//! is near a singularity) a solver may leave that joint out and move the tool somewhere
//! else: a jog "x (base frame)" was seen moving the tool 57 mm along x and 87 mm down. The
//! OCU watches the tool point it computes from the reported joint positions and stops the jog
//! when it leaves the axis (or, for a turn, leaves its place) by more than [`OFF_AXIS_M`],
//! naming the joint at its limit when one is.
//!
//! Pure: the tool points are computed by the caller (`model::kinematics`).

use glam::DVec3;

use crate::model::arm::ArmSpec;

/// How far the tool point may leave the line of a linear jog (or its place, for a turn)
/// before the jog is stopped, m. Ten times what the reported positions' resolution and the
/// simulator's noise move it, a small fraction of what the operator sees.
pub const OFF_AXIS_M: f64 = 0.010;

/// A joint within this fraction of its range from a limit counts as at it.
const AT_LIMIT: f64 = 0.02;

/// One tool-point jog's track: where the tool point was when it started and the line it
/// should keep to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisTrack {
    start: DVec3,
    /// The unit direction of a linear jog in the manipulator frame (`None`: a turn, which
    /// should leave the tool point where it is).
    direction: Option<DVec3>,
}

impl AxisTrack {
    /// A track from `start` (m, manipulator frame) along `linear` (any length; zero for a
    /// turn).
    pub fn new(start: DVec3, linear: DVec3) -> Self {
        Self {
            start,
            direction: linear.try_normalize(),
        }
    }

    /// How far the tool point at `now` is off the track, m.
    pub fn off(&self, now: DVec3) -> f64 {
        let moved = now - self.start;
        match self.direction {
            Some(d) => (moved - d * moved.dot(d)).length(),
            None => moved.length(),
        }
    }

    /// How far along the axis the tool point has moved, m (0 for a turn).
    pub fn along(&self, now: DVec3) -> f64 {
        self.direction.map_or(0.0, |d| (now - self.start).dot(d))
    }
}

/// The joint (0-based) nearest its limit when it is within `AT_LIMIT` of its range from
/// it: the likely reason a tool-point jog left its axis.
pub fn joint_at_limit(spec: &ArmSpec, positions: &[f64]) -> Option<usize> {
    spec.joints
        .iter()
        .zip(positions)
        .enumerate()
        .filter_map(|(i, (j, q))| {
            let (lo, hi) = (j.min?, j.max?);
            let range = hi - lo;
            (range > 0.0).then(|| (i, ((q - lo).min(hi - q) / range)))
        })
        .filter(|(_, margin)| *margin <= AT_LIMIT)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arm::Joint;

    #[test]
    fn off_axis_is_the_distance_from_the_line_or_from_the_place() {
        let t = AxisTrack::new(DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.05, 0.0, 0.0));
        // The jog: 57 mm along x, 87 mm down.
        let now = DVec3::new(1.057, 0.0, -0.087);
        assert!((t.off(now) - 0.087).abs() < 1e-12);
        assert!((t.along(now) - 0.057).abs() < 1e-12);
        assert!(t.off(DVec3::new(1.2, 0.0, 0.0)) < 1e-12);
        let turn = AxisTrack::new(DVec3::ZERO, DVec3::ZERO);
        assert!((turn.off(DVec3::new(0.003, 0.004, 0.0)) - 0.005).abs() < 1e-12);
    }

    #[test]
    fn the_joint_at_its_limit_is_named() {
        let spec = ArmSpec {
            mount: None,
            joints: vec![
                Joint {
                    min: Some(-1.0),
                    max: Some(1.0),
                    ..Joint::revolute(0.0, 0.0, 0.0)
                },
                Joint::prismatic(0.2, 0.0, 0.0, 0.0, 0.5),
            ],
        };
        assert_eq!(joint_at_limit(&spec, &[0.0, 0.25]), None);
        assert_eq!(joint_at_limit(&spec, &[0.0, 0.499]), Some(1));
        assert_eq!(joint_at_limit(&spec, &[-0.99, 0.25]), Some(0));
    }
}
