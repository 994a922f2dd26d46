//! Clearance on the network side (issue 45): the vehicle's [`Clearance`] tracker fed every
//! followed arm's reported positions, a mark when a pair enters the warning band or the
//! stop margin or touches, and the guard each jog command passes ([`JogGuard`]).
//!
//! The tracker runs on a `ReportJointPositions` of any followed arm, at most every
//! `ClientConfig::clearance_every` (10 ms: microseconds each, every pair of a 7-joint arm and
//! its vehicle, so a flood of reports costs at most 100 measurements a second); a silent arm
//! costs nothing. Marks are said on
//! entry into a worse zone, at most once per pair per [`MARK_EVERY_S`].

use std::collections::BTreeMap;

use super::arm::FollowedArm;
use super::{Client, Output};
use crate::jaus::JausId;
use crate::model::arm::ArmSpec;
use crate::model::clearance::guard::JogGuard;
use crate::model::clearance::scene::{ArmInput, PairKey};
use crate::model::clearance::{ArmFacts, Clearance, Settings, Zone, joint_name};
use crate::model::update::{MarkKind, Remark};

/// A pair's zone entries are said at most this often, s.
pub const MARK_EVERY_S: f64 = 1.0;
/// How much deeper than allowed an allowed pair goes before its contact is news, m (the
/// wire's 0.3 mm resolution either side of the allowed depth).
const ALLOWED_SLACK_M: f64 = 0.0005;
/// Most pairs whose last zone is remembered (a bound, like every table).
const MAX_ZONES: usize = 4096;

/// The tracker and what was last said of each pair.
#[derive(Debug, Default)]
pub(super) struct ClearanceWatch {
    /// The vehicle's tracker.
    pub(super) clearance: Clearance,
    /// Each pair's last zone, and when its entry was last said.
    zones: BTreeMap<PairKey, (Zone, f64)>,
    /// When the pairs were last measured (`NEG_INFINITY`: never).
    measured: f64,
}

impl ClearanceWatch {
    /// A watch of `cfg`'s vehicle.
    pub(super) fn new(
        vehicle: std::sync::Arc<crate::model::clearance::obstacles::VehicleGeometry>,
    ) -> Self {
        ClearanceWatch {
            clearance: Clearance::new(Settings::default(), vehicle),
            zones: BTreeMap::new(),
            measured: f64::NEG_INFINITY,
        }
    }
}

impl Client {
    /// Every followed arm with a specification and positions, as clearance takes them.
    fn clearance_arms(&self) -> Vec<ArmFacts<'_>> {
        self.arms
            .values()
            .chain(self.arm.as_ref())
            .filter_map(|s| {
                let spec = s.spec.as_ref()?;
                (s.jog.positions.len() == spec.joints.len()).then(|| ArmFacts {
                    input: ArmInput {
                        id: s.id.into(),
                        spec,
                        positions: &s.jog.positions,
                    },
                    presets: &s.presets,
                })
            })
            .collect()
    }

    /// Measures every pair at the latest positions and says the pairs that entered a worse
    /// zone (band, margin, contact).
    pub(super) fn clearance_update(&mut self, now: f64, out: &mut Output) {
        // `is_finite`: an infinite period (never) and a broken one measure nothing.
        let every = self.cfg.clearance_every;
        if !every.is_finite() || now - self.clearance.measured < every {
            return;
        }
        self.clearance.measured = now;
        let mut watch = std::mem::take(&mut self.clearance);
        {
            let arms = self.clearance_arms();
            watch.clearance.update(&arms);
            for c in watch.clearance.checked() {
                let key = PairKey::new(c.gap.a, c.gap.b);
                let before = watch.zones.get(&key).copied();
                // An allowed pair sits at its allowed depth in the preset it was measured in:
                // news only when deeper than allowed (past the wire's resolution).
                let zone = if c.allowed > 0.0 && c.effective >= -ALLOWED_SLACK_M {
                    Zone::Clear
                } else {
                    c.zone
                };
                let worse = before.is_none_or(|(z, _)| zone < z) && zone != Zone::Clear;
                let quiet = before.is_none_or(|(_, at)| now - at >= MARK_EVERY_S);
                if worse && quiet {
                    let arm = c.gap.a.arm();
                    let spec_of = |id| arms.iter().find(|a| a.input.id == id).map(|a| a.input.spec);
                    let words = watch
                        .clearance
                        .pair_words(arm, &c.gap.a, &c.gap.b, |id, j| {
                            spec_of(id).and_then(|s| joint_name(s, j))
                        });
                    let allowed = if c.allowed > 0.0 {
                        format!(" (allowed {:.0} mm deep)", c.allowed * 1000.0)
                    } else {
                        String::new()
                    };
                    out.remark(Remark::Mark {
                        t: now,
                        kind: MarkKind::Clearance,
                        label: format!(
                            "clearance: {words} {:.0} mm{allowed}, {}",
                            c.gap.contact.gap * 1000.0,
                            zone.name()
                        ),
                    });
                    watch.zones.insert(key, (zone, now));
                } else if let Some((z, at)) = before {
                    if zone != z {
                        watch.zones.insert(key, (zone, at));
                    }
                } else if watch.zones.len() < MAX_ZONES {
                    watch.zones.insert(key, (zone, f64::NEG_INFINITY));
                }
            }
        }
        self.clearance = watch;
    }
}

/// The guard of arm `arm`'s jog: its specification and tool point, the other arms where
/// they are, each joint's deceleration in the jog's motion profile at `scale`, the period.
pub(super) fn jog_guard<'a>(
    watch: &'a ClearanceWatch,
    arms: &'a BTreeMap<JausId, FollowedArm>,
    arm: JausId,
    spec: &'a ArmSpec,
    (tool_point, scale, period): ([f64; 3], f64, f64),
) -> JogGuard<'a> {
    let others = arms
        .values()
        .filter_map(|o| {
            let spec = o.spec.as_ref()?;
            (o.jog.positions.len() == spec.joints.len()).then(|| ArmInput {
                id: o.id.into(),
                spec,
                positions: &o.jog.positions,
            })
        })
        .collect();
    let decel = spec
        .joints
        .iter()
        .map(|j| j.max_speed.unwrap_or(0.0) * scale / super::jog_stream::BRAKE_S)
        .collect();
    JogGuard {
        clearance: &watch.clearance,
        arm: arm.into(),
        spec,
        tool_point,
        others,
        decel,
        period,
        never: watch.clearance.never_checked(),
    }
}
