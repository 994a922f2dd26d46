//! The jog's clearance guard: each command checked on the pose one stop distance ahead.
//!
//! For a command the arm would follow at joint velocities q̇ (a tool-point twist is turned
//! into them through the damped inverse of the Jacobian), each joint's stop distance is the
//! bound the jog already states, `v²/2a + v·T` (a = the profile's deceleration, T the
//! streaming period): the arm can be anywhere on that stretch before the next command or
//! its stop takes effect, so the check rate can never be outrun. The pose is sampled along
//! it ([`SAMPLES`] points); for every pair of the jogged arm whose effective gap there is
//! smaller than now (the motion closes it):
//! - inside the band the command is scaled by `(gap − margin) / (band − margin)`;
//! - at the margin it is stopped;
//!
//! and motion that opens every gap it touches is never slowed. The scaled command is
//! checked once more on its own stop distance; if it would still close a gap inside the
//! margin it is stopped.

use glam::{DQuat, DVec3};

use super::scene::{ArmInput, PairKey, gaps};
use super::{Checked, Clearance, joint_name};
use crate::model::arm::ArmSpec;
use crate::model::id::ComponentId;
use crate::model::jog::{Frame, GuardLimit, Motion, MotionGuard};
use crate::model::kinematics::{damped_least_squares, end_effector_pose, jacobian};

/// Points sampled along the stop distance (the last at its end).
pub const SAMPLES: usize = 4;
/// A gap smaller by less than this is not closing, m (rounding).
const CLOSING_EPS_M: f64 = 1e-6;
/// Halvings of the scale's interval: to 1/64 of full speed.
const BISECTIONS: usize = 6;
/// Damping of the twist → joint velocities inverse, as the arm's own would be.
const DAMPING: f64 = 0.01;

/// The guard of one arm's jog.
pub struct JogGuard<'a> {
    /// The tracker (allowances, settings, vehicle).
    pub clearance: &'a Clearance,
    /// The jogged arm.
    pub arm: ComponentId,
    /// Its specification.
    pub spec: &'a ArmSpec,
    /// Its tool point, end-effector frame, m.
    pub tool_point: [f64; 3],
    /// Every other arm at its latest positions.
    pub others: Vec<ArmInput<'a>>,
    /// Each joint's deceleration, rad/s² or m/s² (the jog's motion profile).
    pub decel: Vec<f64>,
    /// The streaming period, s.
    pub period: f64,
    /// The pairs never checked ([`Clearance::never_checked`], taken once).
    pub never: std::collections::BTreeSet<PairKey>,
}

/// A guard's finding: the limiting pair and its effective gaps now and ahead.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The fraction of the command that may go out.
    pub scale: f64,
    /// The pair that limits it, with its effective gap now (m).
    pub pair: Option<(Checked, f64)>,
}

impl JogGuard<'_> {
    /// The joint velocities the arm would follow for `motion` at `q`.
    pub fn joint_rates(&self, q: &[f64], motion: &Motion) -> Option<Vec<f64>> {
        match motion {
            Motion::Joints(v) => Some(v.clone()),
            Motion::Twist(t) => {
                let (linear, angular) = match t.frame {
                    Frame::Base => (DVec3::from_array(t.linear), DVec3::from_array(t.angular)),
                    Frame::Tool => {
                        let (_, r) = end_effector_pose(self.spec, q, [0.0; 3]).ok()?;
                        let r = DQuat::from_xyzw(r[1], r[2], r[3], r[0]);
                        (
                            r.mul_vec3(DVec3::from_array(t.linear)),
                            r.mul_vec3(DVec3::from_array(t.angular)),
                        )
                    }
                };
                let j = jacobian(self.spec, q, self.tool_point).ok()?;
                let x = [
                    angular.x, angular.y, angular.z, linear.x, linear.y, linear.z,
                ];
                Some(damped_least_squares(&j, x, DAMPING))
            }
        }
    }

    /// The pose one stop distance ahead of `q` at joint velocities `v`.
    pub fn ahead(&self, q: &[f64], v: &[f64]) -> Vec<f64> {
        q.iter()
            .zip(v)
            .enumerate()
            .map(|(i, (q, v))| {
                let a = self.decel.get(i).copied().unwrap_or(0.0);
                let d = if a > 0.0 && a.is_finite() && v.is_finite() {
                    v * v / (2.0 * a) + v.abs() * self.period.max(0.0)
                } else {
                    v.abs() * self.period.max(0.0)
                };
                let q2 = q + d.copysign(*v);
                self.spec.joints.get(i).map_or(q2, |j| j.clamp(q2))
            })
            .collect()
    }

    /// The effective gaps of the jogged arm's pairs at `q`.
    pub fn effective_at(&self, q: &[f64]) -> Vec<Checked> {
        let mut arms = Vec::with_capacity(self.others.len() + 1);
        arms.push(ArmInput {
            id: self.arm,
            spec: self.spec,
            positions: q,
        });
        arms.extend(self.others.iter().copied());
        let never = &self.never;
        let arm = self.arm;
        gaps(&arms, &self.clearance.vehicle, |k: &PairKey| {
            (k.0.arm() == Some(arm) || k.1.arm() == Some(arm))
                && (never.is_empty() || !never.contains(k))
        })
        .into_iter()
        .map(|g| self.clearance.check(g))
        .collect()
    }

    /// The smallest effective gap of each pair over the samples of the stretch from `q` to
    /// `ahead`, in the order of [`JogGuard::effective_at`].
    fn worst_on(&self, q: &[f64], ahead: &[f64]) -> Vec<Checked> {
        let mut worst: Vec<Checked> = Vec::new();
        for k in 1..=SAMPLES {
            let s = k as f64 / SAMPLES as f64;
            let p: Vec<f64> = q.iter().zip(ahead).map(|(a, b)| a + (b - a) * s).collect();
            let at = self.effective_at(&p);
            if worst.is_empty() {
                worst = at;
            } else {
                for (w, c) in worst.iter_mut().zip(at) {
                    if c.effective < w.effective {
                        *w = c;
                    }
                }
            }
        }
        worst
    }

    /// Whether `v` scaled by `s` keeps every gap it closes within its band rule (scale at
    /// most `(gap − margin) / (band − margin)` of the gap one stop distance ahead): `None`
    /// if so, else the pair that forbids it.
    fn forbids(&self, q: &[f64], now: &[Checked], v: &[f64], s: f64) -> Option<Checked> {
        let settings = self.clearance.settings();
        let vs: Vec<f64> = v.iter().map(|x| x * s).collect();
        let worst = self.worst_on(q, &self.ahead(q, &vs));
        let mut out: Option<(f64, Checked)> = None;
        for (n, w) in now.iter().zip(worst) {
            if w.effective >= n.effective - CLOSING_EPS_M {
                continue; // opening, or not moving relative to each other
            }
            let (margin, band) = super::limits(&settings, w.allowed > 0.0);
            let most = ((w.effective - margin) / (band - margin)).clamp(0.0, 1.0);
            if s > most && out.as_ref().is_none_or(|(m, _)| most < *m) {
                out = Some((most, w));
            }
        }
        out.map(|(_, w)| w)
    }

    /// The fraction of joint velocities `v` that may go out at `q`, and the pair that limits
    /// it: the largest scale whose own stop distance keeps the band rule (bisection to
    /// 1/64), zero below 1/64.
    pub fn find(&self, q: &[f64], v: &[f64]) -> Finding {
        let now = self.effective_at(q);
        let Some(mut pair) = self.forbids(q, &now, v, 1.0) else {
            return Finding {
                scale: 1.0,
                pair: None,
            };
        };
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        for _ in 0..BISECTIONS {
            let mid = f64::midpoint(lo, hi);
            match self.forbids(q, &now, v, mid) {
                None => lo = mid,
                Some(p) => {
                    hi = mid;
                    pair = p;
                }
            }
        }
        let scale = lo;
        let key = super::scene::PairKey::new(pair.gap.a, pair.gap.b);
        let gap_now = now
            .iter()
            .find(|n| super::scene::PairKey::new(n.gap.a, n.gap.b) == key)
            .map_or(pair.effective, |n| n.effective);
        Finding {
            scale,
            pair: Some((pair, gap_now)),
        }
    }

    /// A finding in words: "stopped 16 mm from contact: `wrist_roll` (joint 5) and turret
    /// (joint 1)", "slowed to 40 % 31 mm from contact: …".
    pub fn words(&self, f: &Finding) -> Option<String> {
        let (c, now) = f.pair.as_ref()?;
        let names = |arm: ComponentId, joint: usize| {
            if arm == self.arm {
                joint_name(self.spec, joint)
            } else {
                self.others
                    .iter()
                    .find(|o| o.id == arm)
                    .and_then(|o| joint_name(o.spec, joint))
            }
        };
        let pair = self
            .clearance
            .pair_words(Some(self.arm), &c.gap.a, &c.gap.b, names);
        let key = super::scene::PairKey::new(c.gap.a, c.gap.b);
        let why = if c.allowed > 0.0 {
            self.clearance
                .allowed()
                .into_iter()
                .find(|(k, _)| *k == key)
                .map_or_else(String::new, |(_, a)| format!(", {}", a.source))
        } else {
            String::new()
        };
        let mm = now * 1000.0;
        let (stop, slow) = ("stopped", format!("slowed to {:.0} %", f.scale * 100.0));
        let verb = if f.scale <= 0.0 { stop } else { slow.as_str() };
        Some(if c.allowed > 0.0 {
            format!(
                "{verb} {mm:.0} mm short of the overlap allowed ({:.0} mm{why}): {pair}",
                c.allowed * 1000.0
            )
        } else if *now < 0.0 {
            format!(
                "{verb} {:.0} mm in contact: {pair}; only motion that opens it",
                -mm
            )
        } else {
            format!("{verb} {mm:.0} mm from contact: {pair}")
        })
    }
}

impl MotionGuard for JogGuard<'_> {
    fn limit(&self, positions: &[f64], motion: &Motion) -> GuardLimit {
        let Some(v) = self.joint_rates(positions, motion) else {
            // Nothing to predict with: the motion goes as asked (the controller's own gates
            // stop a jog whose positions are missing).
            return GuardLimit::FREE;
        };
        let f = self.find(positions, &v);
        GuardLimit {
            scale: f.scale,
            words: self.words(&f),
        }
    }
}
