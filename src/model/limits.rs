//! Where a joint stands against its limits: the near-limit rule (within 5 % of the range)
//! that the joint gauges colour and the 3D view tints by. One rule, here, so the two views
//! cannot disagree about what "near a limit" means.
//!
//! A rest pose (stowed, parked) often puts a joint on its limit on purpose: a telescope
//! retracted, an upper arm folded back. There a limit is said, not alarmed
//! ([`is_rest_name`], `ArmState::at_rest`).

use super::arm::{ArmSpec, Joint};

/// Fraction of the range next to a limit that counts as "near".
pub const NEAR_LIMIT: f64 = 0.05;

/// Where a value sits against its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitState {
    /// Well inside.
    Inside,
    /// Within 5 % of the lower limit.
    NearMin,
    /// Within 5 % of the upper limit.
    NearMax,
    /// At or beyond a limit.
    AtLimit,
    /// No limits (continuous joint) or no value.
    Unlimited,
}

/// Whether a preset named `name` is a rest pose, where joints sit on their limits by design.
/// JAUS carries no such mark (IOP `PresetPose` has an ID and a name), so it is the name: it
/// starts with or holds the word stow, rest, park or transport (any case: "Stowed", "Park
/// position", "Transport").
pub fn is_rest_name(name: &str) -> bool {
    name.split(|c: char| !c.is_alphanumeric())
        .map(str::to_ascii_lowercase)
        .any(|w| {
            ["stow", "rest", "park", "transport"]
                .iter()
                .any(|r| w.starts_with(r))
        })
}

/// `value` against the limits `min..=max` (either missing: unlimited).
pub fn limit_state(value: Option<f64>, min: Option<f64>, max: Option<f64>) -> LimitState {
    let (Some(v), Some(lo), Some(hi)) = (value, min, max) else {
        return LimitState::Unlimited;
    };
    let margin = (hi - lo).abs() * NEAR_LIMIT;
    if v <= lo || v >= hi {
        LimitState::AtLimit
    } else if v - lo < margin {
        LimitState::NearMin
    } else if hi - v < margin {
        LimitState::NearMax
    } else {
        LimitState::Inside
    }
}

/// How close `value` is to a limit, 0 (outside the near band, or no limits) .. 1 (at it).
pub fn warning_level(value: Option<f64>, min: Option<f64>, max: Option<f64>) -> f32 {
    let (Some(v), Some(lo), Some(hi)) = (value, min, max) else {
        return 0.0;
    };
    let margin = ((hi - lo).abs() * NEAR_LIMIT).max(1e-9);
    let d = (v - lo).min(hi - v);
    (1.0 - d / margin).clamp(0.0, 1.0) as f32
}

impl Joint {
    /// Where `position` (rad or m) sits against this joint's limits.
    pub fn limit_state(&self, position: Option<f64>) -> LimitState {
        limit_state(position, self.min, self.max)
    }

    /// How close `position` is to one of this joint's limits, 0..1.
    pub fn warning_level(&self, position: Option<f64>) -> f32 {
        warning_level(position, self.min, self.max)
    }
}

/// The warning level of every joint of `spec` at `positions` (joint 1 first; a joint
/// without a position counts as far from its limits).
pub fn joint_warnings(spec: &ArmSpec, positions: Option<&[f64]>) -> Vec<f32> {
    spec.joints
        .iter()
        .enumerate()
        .map(|(i, j)| j.warning_level(positions.and_then(|q| q.get(i).copied())))
        .collect()
}

/// The colour of something drawn for a joint that is `warning` (0..1, NaN as 0) close to a
/// limit: `base` when far, turning `near` as soon as the joint is near and `at` at the limit.
/// The 3D view and the Foxglove scene of recordings both tint bounding cylinders with it.
pub fn limit_tint(base: [f32; 3], near: [f32; 3], at: [f32; 3], warning: f32) -> [f32; 3] {
    let w = if warning.is_nan() {
        0.0
    } else {
        warning.clamp(0.0, 1.0)
    };
    let lerp = |a: [f32; 3], b: [f32; 3], t: f32| [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * t);
    let alarm = lerp(near, at, w);
    lerp(base, alarm, (w * 3.0).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_poses_are_known_by_their_words() {
        for rest in [
            "Stowed",
            "stow",
            "Park position",
            "REST",
            "Transport",
            "arm-parked",
        ] {
            assert!(is_rest_name(rest), "{rest}");
        }
        for not in [
            "Deploy",
            "Inspect low",
            "Reach forward",
            "Hand-off",
            "interest",
            "",
        ] {
            assert!(!is_rest_name(not), "{not}");
        }
    }

    fn joint() -> Joint {
        Joint {
            min: Some(-1.0),
            max: Some(1.0),
            ..Joint::revolute(0.0, 0.0, 0.0)
        }
    }

    #[test]
    fn near_is_within_five_percent_of_the_range_and_at_is_on_or_past_a_limit() {
        let j = joint();
        assert_eq!(j.limit_state(Some(0.0)), LimitState::Inside);
        assert_eq!(j.limit_state(Some(0.89)), LimitState::Inside);
        assert_eq!(j.limit_state(Some(0.91)), LimitState::NearMax);
        assert_eq!(j.limit_state(Some(-0.95)), LimitState::NearMin);
        assert_eq!(j.limit_state(Some(1.0)), LimitState::AtLimit);
        assert_eq!(j.limit_state(Some(-3.0)), LimitState::AtLimit);
        assert_eq!(j.limit_state(None), LimitState::Unlimited);
        let continuous = Joint::revolute(0.0, 0.0, 0.0);
        assert_eq!(continuous.limit_state(Some(100.0)), LimitState::Unlimited);
    }

    #[test]
    fn the_warning_level_rises_across_the_near_band() {
        let j = joint();
        assert_eq!(j.warning_level(Some(0.0)), 0.0);
        assert_eq!(j.warning_level(Some(0.85)), 0.0);
        assert!((j.warning_level(Some(0.95)) - 0.5).abs() < 1e-6);
        assert_eq!(j.warning_level(Some(1.0)), 1.0);
        assert_eq!(j.warning_level(None), 0.0);
    }

    #[test]
    fn every_joint_gets_a_warning_level_even_without_positions() {
        let spec = ArmSpec {
            mount: None,
            joints: vec![joint(), joint()],
        };
        let w = joint_warnings(&spec, Some(&[0.0, 0.98]));
        assert_eq!(w.len(), 2);
        assert_eq!(w[0], 0.0);
        assert!((w[1] - 0.8).abs() < 1e-5, "{w:?}");
        assert_eq!(joint_warnings(&spec, None), [0.0, 0.0]);
    }
}
