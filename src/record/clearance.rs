//! Clearance in the recording and the live view (issue 45): the pipeline's
//! [`ClearanceWatch`] keeps one [`Clearance`] tracker fed from every arm's specification,
//! presets and newest positions, gives each arm's `/jaus/arm_state` its `clearance` object
//! and says on `/jaus/events` when a pair *enters* the warning band, the stop margin or
//! contact.
//!
//! Events are per entry, not per sample: a pair is reported when its zone becomes more
//! severe than the zone last reported for it (a pair that opens again is forgotten quietly),
//! and at most once per [`EVENT_INTERVAL_NS`] per pair — an entry held back by that bound is
//! reported when the bound allows, if the pair is still in it. Pairs allowed to touch (by the
//! vehicle file, the arm's presets, or first sight) are reported only when they go deeper
//! than allowed: at their allowance they sit in the band by construction.
//!
//! Sans-I/O: time is the caller's log time (ns since the Unix epoch).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::arm::ArmSpec;
use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::clearance::scene::PairKey;
use crate::model::clearance::{ArmFacts, Checked, Clearance, Settings, Zone, joint_name};
use crate::model::id::ComponentId;

/// At most one event per pair in this long, ns.
pub const EVENT_INTERVAL_NS: u64 = 1_000_000_000;

/// How much deeper than allowed an allowed pair may be before it is news, m: the wire's
/// resolution of lengths (0.3 mm).
pub const ALLOWED_SLACK_M: f64 = 0.0003;

/// A pair that entered a zone, for `/jaus/events`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClearanceEvent {
    /// The arm it is about (the first part's).
    pub arm: ComponentId,
    /// The pair in words, e.g. `wrist_roll (joint 5) and turret (joint 1)`.
    pub pair: String,
    /// Its surface gap, m (negative: overlapping).
    pub gap: f64,
    /// The zone it entered.
    pub zone: Zone,
}

impl ClearanceEvent {
    /// The event's label, e.g. `clearance: wrist_roll (joint 5) and turret (joint 1) 12 mm,
    /// inside the stop margin`.
    pub fn label(&self) -> String {
        format!(
            "clearance: {} {:.0} mm, {}",
            self.pair,
            self.gap * 1e3,
            self.zone.name()
        )
    }
}

/// What the watch remembers of one pair.
#[derive(Debug, Clone, Copy)]
struct PairMemo {
    /// The zone last reported (or opened to).
    reported: Zone,
    /// When it was last reported, ns.
    last_event_ns: Option<u64>,
}

/// The pipeline's clearance tracker and its event memory (see the module doc).
#[derive(Debug, Clone)]
pub struct ClearanceWatch {
    clearance: Clearance,
    pairs: HashMap<PairKey, PairMemo>,
}

impl Default for ClearanceWatch {
    fn default() -> Self {
        ClearanceWatch::new(None)
    }
}

impl ClearanceWatch {
    /// A watch for `vehicle` (`None`: no vehicle file — the arms' own cylinders only, no
    /// ground and no obstacles), with the default band and margin.
    pub fn new(vehicle: Option<Arc<VehicleGeometry>>) -> ClearanceWatch {
        ClearanceWatch {
            clearance: Clearance::new(Settings::default(), vehicle.unwrap_or_default()),
            pairs: HashMap::new(),
        }
    }

    /// The tracker.
    pub fn clearance(&self) -> &Clearance {
        &self.clearance
    }

    /// Measures every pair of `arms` at `now_ns` and pushes onto `events` the pairs that
    /// entered a zone (`specs` names their joints).
    pub fn update(&mut self, arms: &[ArmFacts<'_>], now_ns: u64, events: &mut Vec<ClearanceEvent>) {
        self.clearance.update(arms);
        let specs: BTreeMap<ComponentId, &ArmSpec> =
            arms.iter().map(|a| (a.input.id, a.input.spec)).collect();
        let names =
            |arm: ComponentId, joint: usize| specs.get(&arm).and_then(|s| joint_name(s, joint));
        let mut live = HashMap::with_capacity(self.clearance.checked().len());
        for c in self.clearance.checked() {
            let key = PairKey::new(c.gap.a, c.gap.b);
            // An allowed pair is only news when it goes deeper than allowed, by more than
            // the wire's resolution (at a preset it sits at its allowance, give or take a
            // rounding).
            let zone = if c.allowed > 0.0 && c.effective >= -ALLOWED_SLACK_M {
                Zone::Clear
            } else {
                c.zone
            };
            let mut memo = self.pairs.get(&key).copied().unwrap_or(PairMemo {
                reported: Zone::Clear,
                last_event_ns: None,
            });
            if zone > memo.reported {
                // Opened: forgotten quietly, so the next entry is news.
                memo.reported = zone;
            } else if zone < memo.reported
                && memo
                    .last_event_ns
                    .is_none_or(|l| now_ns.saturating_sub(l) >= EVENT_INTERVAL_NS)
            {
                memo.reported = zone;
                memo.last_event_ns = Some(now_ns);
                let arm = c.gap.a.arm().or(c.gap.b.arm());
                if let Some(arm) = arm {
                    events.push(ClearanceEvent {
                        arm,
                        pair: self
                            .clearance
                            .pair_words(Some(arm), &c.gap.a, &c.gap.b, names),
                        gap: c.gap.contact.gap,
                        zone,
                    });
                }
            }
            live.insert(key, memo);
        }
        // Pairs no longer measured (an arm gone) are forgotten: the memory stays bounded
        // by the pairs checked.
        self.pairs = live;
    }

    /// `arm`'s `clearance` object for `/jaus/arm_state`: its nearest pair not allowed to
    /// touch, its allowed pair nearest its allowance, and how many allowed pairs there are;
    /// `None` (written `null`) when nothing of it is measured (no specification or no
    /// positions yet). `spec` names its joints.
    pub fn summary(&self, arm: ComponentId, spec: Option<&ArmSpec>) -> Option<serde_json::Value> {
        let c = &self.clearance;
        // Nothing of the arm measured: nothing to say.
        c.of_arm(arm).next()?;
        let names = joint_names(arm, spec);
        let pair = |k: &Checked| {
            let mut v = serde_json::json!({
                "pair": c.pair_words(Some(arm), &k.gap.a, &k.gap.b, names),
                "gap_m": round4(k.gap.contact.gap),
                "zone": k.zone.name(),
            });
            if k.allowed > 0.0 {
                v["allowed_m"] = serde_json::json!(round4(k.allowed));
                v["effective_m"] = serde_json::json!(round4(k.effective));
            }
            v
        };
        let allowed_pairs = c
            .allowed()
            .iter()
            .filter(|(k, _)| k.0.arm() == Some(arm) || k.1.arm() == Some(arm))
            .count();
        Some(serde_json::json!({
            "nearest": c.nearest(arm).map(pair),
            "nearest_allowed": c.nearest_allowed(arm).map(pair),
            "allowed_pairs": allowed_pairs,
        }))
    }
}

impl ClearanceWatch {
    /// `arm`'s nearest pair in words, for terminals, e.g. `nearest wrist_roll (joint 5) ↔
    /// turret (joint 1) 43 mm, inside the warning band`; `None` when nothing of it is
    /// measured.
    pub fn nearest_words(&self, arm: ComponentId, spec: Option<&ArmSpec>) -> Option<String> {
        let c = &self.clearance;
        // Nothing of the arm measured: nothing to say.
        c.of_arm(arm).next()?;
        let names = joint_names(arm, spec);
        Some(match c.nearest(arm) {
            Some(n) => format!(
                "nearest {} {:.0} mm, {}",
                c.pair_words(Some(arm), &n.gap.a, &n.gap.b, names),
                n.gap.contact.gap * 1e3,
                n.zone.name()
            ),
            None => "every pair measured is allowed to touch".to_owned(),
        })
    }
}

/// To 0.1 mm: the wire's resolution of lengths is 0.3 mm.
fn round4(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

/// The joint names of `arm` (from `spec`) as [`Clearance::pair_words`] takes them; another
/// arm's joints go by number.
fn joint_names(
    arm: ComponentId,
    spec: Option<&ArmSpec>,
) -> impl Fn(ComponentId, usize) -> Option<String> + Copy + '_ {
    move |a: ComponentId, joint: usize| {
        if a == arm {
            spec.and_then(|s| joint_name(s, joint))
        } else {
            None
        }
    }
}
