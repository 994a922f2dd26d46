//! Soft limits of a jog: within a margin of a joint's limit the commanded speed towards it
//! falls linearly, to zero at a stop line short of the limit; motion away from a limit is
//! never slowed. The arm's own limits stay the last word; this keeps a jog from driving into
//! them at speed.

use crate::model::arm::Joint;

/// A distance from a joint limit: a fraction of the joint's range, or a fixed distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Margin {
    /// This fraction of the range (max − min).
    Fraction(f64),
    /// This distance, rad or m.
    Distance(f64),
}

impl Margin {
    /// The margin in the joint's units for a joint whose range is `range` (rad or m).
    pub fn of(self, range: f64) -> f64 {
        let m = match self {
            Margin::Fraction(f) => f * range.abs(),
            Margin::Distance(d) => d,
        };
        if m.is_finite() { m.max(0.0) } else { 0.0 }
    }
}

/// Where a jog slows down and where it stops, against each joint's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftLimits {
    /// From this far from a limit the speed towards it falls (default 5 % of the range, the
    /// same band the gauges call "near", `model::limits::NEAR_LIMIT`).
    pub slow: Margin,
    /// This far from a limit the joint stops (default 1 % of the range).
    pub stop: Margin,
}

impl Default for SoftLimits {
    fn default() -> Self {
        Self {
            slow: Margin::Fraction(crate::model::limits::NEAR_LIMIT),
            stop: Margin::Fraction(0.01),
        }
    }
}

impl SoftLimits {
    /// Where `joint` stops, low and high (rad or m): each limit less the stop distance.
    /// `None` for a joint without limits.
    pub fn stop_lines(&self, joint: &Joint) -> Option<(f64, f64)> {
        let (lo, hi) = (joint.min?, joint.max?);
        let stop = self.stop.of(hi - lo);
        Some((lo + stop, hi - stop))
    }

    /// The velocity `v` (rad/s or m/s) allowed for `joint` at `position`, when a command
    /// holds for `period` s: unchanged away from a limit or well inside the range; towards a
    /// limit scaled by the distance left to the stop line over the slowing band, and never
    /// more than reaches the stop line within one period. Zero at or past the stop line.
    /// A joint without limits (continuous) is not limited.
    pub fn limit(&self, joint: &Joint, position: f64, v: f64, period: f64) -> f64 {
        let (Some(lo), Some(hi)) = (joint.min, joint.max) else {
            return v;
        };
        if !position.is_finite() || !v.is_finite() {
            return 0.0;
        }
        let range = hi - lo;
        let stop = self.stop.of(range);
        // The band must be wider than the stop distance, or the ramp would divide by zero.
        let slow = self.slow.of(range).max(stop + 1e-9);
        let left = if v > 0.0 {
            hi - stop - position
        } else if v < 0.0 {
            position - (lo + stop)
        } else {
            return 0.0;
        };
        if left <= 0.0 {
            return 0.0;
        }
        let ramp = (left / (slow - stop)).min(1.0);
        let mut speed = v.abs() * ramp;
        if period > 0.0 {
            speed = speed.min(left / period);
        }
        speed.copysign(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joint() -> Joint {
        // Range 2 rad: slow band 0.1 rad, stop 0.02 rad short of each limit.
        Joint {
            min: Some(-1.0),
            max: Some(1.0),
            ..Joint::revolute(0.0, 0.0, 0.0)
        }
    }

    const T: f64 = 0.05;

    #[test]
    fn full_speed_well_inside_the_range() {
        let s = SoftLimits::default();
        assert_eq!(s.limit(&joint(), 0.0, 0.3, T), 0.3);
        assert_eq!(s.limit(&joint(), 0.0, -0.3, T), -0.3);
    }

    #[test]
    fn slows_linearly_inside_the_band_towards_a_limit() {
        let s = SoftLimits::default();
        // 0.04 rad left to the stop line of a 0.08 rad ramp: half speed.
        let v = s.limit(&joint(), 0.94, 0.3, 1e-6);
        assert!((v - 0.15).abs() < 1e-9, "{v}");
        let v = s.limit(&joint(), -0.94, -0.3, 1e-6);
        assert!((v + 0.15).abs() < 1e-9, "{v}");
    }

    #[test]
    fn stops_short_of_the_limit() {
        let s = SoftLimits::default();
        assert_eq!(s.limit(&joint(), 0.98, 0.3, T), 0.0);
        assert_eq!(s.limit(&joint(), 0.99, 0.3, T), 0.0);
        assert_eq!(s.limit(&joint(), 1.2, 0.3, T), 0.0);
        assert_eq!(s.limit(&joint(), -0.985, -0.3, T), 0.0);
    }

    #[test]
    fn always_allows_motion_away_from_a_limit() {
        let s = SoftLimits::default();
        assert_eq!(s.limit(&joint(), 0.99, -0.3, T), -0.3);
        assert_eq!(s.limit(&joint(), 1.5, -0.3, T), -0.3);
        assert_eq!(s.limit(&joint(), -0.99, 0.3, T), 0.3);
    }

    #[test]
    fn one_period_of_motion_never_crosses_the_stop_line() {
        let s = SoftLimits {
            slow: Margin::Distance(0.5),
            stop: Margin::Distance(0.02),
        };
        let j = joint();
        let mut q = 0.0;
        // A fast joint stepped each period with the allowed speed: it creeps up to the stop
        // line and never past it.
        for _ in 0..500 {
            let v = s.limit(&j, q, 5.0, T);
            q += v * T;
            assert!(q <= 0.98 + 1e-12, "{q}");
        }
        assert!(q > 0.97, "{q}");
    }

    #[test]
    fn a_continuous_joint_is_not_limited() {
        let s = SoftLimits::default();
        let j = Joint::revolute(0.0, 0.0, 0.0);
        assert_eq!(s.limit(&j, 100.0, 0.3, T), 0.3);
    }

    #[test]
    fn a_fixed_margin_is_in_the_joints_units() {
        assert_eq!(Margin::Distance(0.1).of(2.0), 0.1);
        assert_eq!(Margin::Fraction(0.05).of(2.0), 0.1);
        assert_eq!(Margin::Distance(f64::NAN).of(2.0), 0.0);
    }
}
