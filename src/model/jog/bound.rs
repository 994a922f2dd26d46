//! The stop bound of a position-target jog: where the arm offers the joint position driver
//! (`SetJointPositions`), the OCU jogs by sending targets that lead the arm by its stopping
//! distance plus one period of motion. Each target is reachable at jog speed, so the arm
//! moves smoothly while targets keep coming; when they stop (the OCU killed, the link cut)
//! the arm runs to the last target and stops there. Its motion after the last command is
//! then at most [`stop_bound`], by construction, whatever happens to the OCU.
//!
//! This holds when the arm's driver moves no faster than `max_speed` and can decelerate at
//! `max_accel` (the motion profile the OCU sends before a jog, `SetJointMotionProfile`).

use super::soft::SoftLimits;
use crate::model::arm::Joint;

/// How far ahead of `current` a target is put for a jog at speed `speed` (rad/s or m/s):
/// the stopping distance at `max_accel`, v²/2a, plus one `period` of motion at v.
fn lead(speed: f64, max_accel: f64, period: f64) -> f64 {
    let v = speed.abs();
    if !v.is_finite() || max_accel <= 0.0 || !max_accel.is_finite() {
        return 0.0;
    }
    v * v / (2.0 * max_accel) + v * period.max(0.0)
}

/// The most a joint moves after the last position target of a jog at up to `max_speed`
/// (rad/s or m/s), with a driver decelerating at `max_accel` (rad/s² or m/s²) and targets
/// sent every `period` s: `max_speed² / (2 · max_accel) + max_speed · period` (rad or m).
/// This is the bound to state and to measure. Zero when the acceleration is not positive
/// (no target is then sent ahead of the arm).
pub fn stop_bound(max_speed: f64, max_accel: f64, period: f64) -> f64 {
    lead(max_speed, max_accel, period)
}

/// The position target (rad or m) for a joint at `current` jogged at `velocity` (signed,
/// rad/s or m/s, clamped to `max_speed`): `current` plus the lead at that speed, in the
/// direction of motion. Zero velocity gives `current`. To stop, re-send the last target
/// instead (the arm is already braking towards it; the measured position lags the arm, so
/// sending it would turn the arm back). Clamp the result into the joint's soft limits
/// before sending it.
pub fn position_target(
    current: f64,
    velocity: f64,
    max_speed: f64,
    max_accel: f64,
    period: f64,
) -> f64 {
    if !velocity.is_finite() || velocity == 0.0 {
        return current;
    }
    let v = velocity.abs().min(max_speed.abs());
    current + lead(v, max_accel, period).copysign(velocity)
}

/// The position target of a joint at `current` jogged at `velocity` (what the jog
/// controller commands for it): [`position_target`] at the joint's reduced maximum speed
/// `max_speed`, kept inside the soft limits' stop line in the direction of motion (a joint
/// already past it and moving away is not pulled back).
pub fn joint_target(
    joint: &Joint,
    soft: &SoftLimits,
    current: f64,
    velocity: f64,
    max_speed: f64,
    profile: (f64, f64),
) -> f64 {
    let (max_accel, period) = profile;
    let target = position_target(current, velocity, max_speed, max_accel, period);
    match soft.stop_lines(joint) {
        Some((_, hi)) if velocity > 0.0 => target.min(hi.max(current)),
        Some((lo, _)) if velocity < 0.0 => target.max(lo.min(current)),
        _ => target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position driver: moves towards its target at most at `vmax`, accelerating and
    /// braking at most at `amax`, braking so as to stop at the target (stepped at `dt`).
    struct Driver {
        q: f64,
        v: f64,
        vmax: f64,
        amax: f64,
    }

    impl Driver {
        fn step(&mut self, target: f64, dt: f64) {
            let d = target - self.q;
            // The speed from which the arm can still stop at the target, towards it.
            let want = (2.0 * self.amax * d.abs())
                .sqrt()
                .min(self.vmax)
                .copysign(d);
            let dv = (want - self.v).clamp(-self.amax * dt, self.amax * dt);
            self.v += dv;
            self.q += self.v * dt;
        }
    }

    const VMAX: f64 = 0.4;
    const AMAX: f64 = 2.0;
    const T: f64 = 0.05;
    const DT: f64 = 1e-4;

    #[test]
    fn the_bound_is_stopping_distance_plus_one_period() {
        assert!((stop_bound(0.4, 2.0, 0.05) - (0.04 + 0.02)).abs() < 1e-12);
        assert_eq!(stop_bound(0.4, 0.0, 0.05), 0.0);
        assert_eq!(stop_bound(0.0, 2.0, 0.05), 0.0);
    }

    #[test]
    fn the_target_leads_in_the_direction_of_motion_and_never_beyond_the_bound() {
        let b = stop_bound(VMAX, AMAX, T);
        assert!((position_target(1.0, 0.4, VMAX, AMAX, T) - (1.0 + b)).abs() < 1e-12);
        assert!((position_target(1.0, -0.4, VMAX, AMAX, T) - (1.0 - b)).abs() < 1e-12);
        // Faster than the maximum: clamped to it.
        assert!((position_target(1.0, 9.0, VMAX, AMAX, T) - (1.0 + b)).abs() < 1e-12);
        assert_eq!(position_target(1.0, 0.0, VMAX, AMAX, T), 1.0);
        assert_eq!(position_target(1.0, f64::NAN, VMAX, AMAX, T), 1.0);
        let slow = position_target(1.0, 0.1, VMAX, AMAX, T) - 1.0;
        assert!(slow > 0.0 && slow < b);
    }

    /// Jogs the driver at `speed` with a target each period, computed from the measured
    /// position, until `kill` s; returns (speed reached, motion after the last target).
    fn jog_then_kill(speed: f64, kill: f64) -> (f64, f64) {
        let mut arm = Driver {
            q: 0.0,
            v: 0.0,
            vmax: VMAX,
            amax: AMAX,
        };
        let per = (T / DT).round() as usize;
        let mut target = 0.0;
        let mut at_kill = 0.0;
        let mut reached = 0.0_f64;
        let steps = (kill / DT) as usize + 30_000;
        for i in 0..steps {
            let t = i as f64 * DT;
            if i % per == 0 && t < kill {
                target = position_target(arm.q, speed, VMAX, AMAX, T);
                at_kill = arm.q;
            }
            arm.step(target, DT);
            reached = reached.max(arm.v.abs());
        }
        assert!(arm.v.abs() < 1e-3, "the arm stopped: {}", arm.v);
        (reached, (arm.q - at_kill).abs())
    }

    #[test]
    fn the_arm_keeps_jog_speed_while_targets_come() {
        let (reached, _) = jog_then_kill(VMAX, 2.0);
        assert!(reached > 0.98 * VMAX, "{reached}");
        let (reached, _) = jog_then_kill(0.1, 2.0);
        assert!(reached > 0.095, "{reached}");
    }

    #[test]
    fn a_killed_jog_stops_within_the_bound() {
        let bound = stop_bound(VMAX, AMAX, T);
        let mut worst = 0.0_f64;
        // Kills at many phases of the period, while accelerating and at full speed.
        for k in 0..40 {
            let kill = 0.013 * f64::from(k) + 0.001;
            for speed in [VMAX, -VMAX, 0.2] {
                let (_, after) = jog_then_kill(speed, kill);
                worst = worst.max(after);
                assert!(after <= bound + 1e-3, "kill at {kill}: {after} > {bound}");
            }
        }
        // The bound is tight enough to be worth stating: full speed uses most of it.
        assert!(worst > 0.7 * bound, "{worst} of {bound}");
    }

    #[test]
    fn a_joint_target_stays_inside_the_stop_line_but_never_pulls_back() {
        let joint = Joint {
            min: Some(-1.0),
            max: Some(1.0),
            ..Joint::revolute(0.0, 0.0, 0.0)
        };
        let soft = SoftLimits::default();
        let p = (AMAX, T);
        // Stop lines at ±0.98.
        assert!((joint_target(&joint, &soft, 0.0, 0.4, VMAX, p) - 0.06).abs() < 1e-12);
        assert!((joint_target(&joint, &soft, 0.95, 0.4, VMAX, p) - 0.98).abs() < 1e-12);
        assert!((joint_target(&joint, &soft, -0.95, -0.4, VMAX, p) + 0.98).abs() < 1e-12);
        // Past the line: motion further is refused, motion away is not pulled back.
        assert_eq!(joint_target(&joint, &soft, 0.99, 0.4, VMAX, p), 0.99);
        let away = joint_target(&joint, &soft, 0.99, -0.4, VMAX, p);
        assert!((away - 0.93).abs() < 1e-12, "{away}");
        assert_eq!(joint_target(&joint, &soft, 0.99, 0.0, VMAX, p), 0.99);
        let free = Joint::revolute(0.0, 0.0, 0.0);
        assert!((joint_target(&free, &soft, 5.0, 0.4, VMAX, p) - 5.06).abs() < 1e-12);
    }
}
