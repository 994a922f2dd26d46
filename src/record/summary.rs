//! The arm-state summary channel (`/jaus/arm_state`): per arm, once a second and at once when
//! it changes, what no generic bridge says — who holds control (ID and authority), the link's
//! health (age of the last report, rates, stale signals, silences), the management and
//! emergency state, the presets and the clearance of its nearest pairs
//! ([`crate::record::clearance`]). Built from the observer's updates by
//! [`crate::record::pipeline::Pipeline`], so a recording and the live view server carry the
//! same messages. Sans-I/O: time is the caller's (log time, ns since the Unix epoch).

use std::collections::BTreeMap;

use crate::model::clearance::ArmFacts;
use crate::model::clearance::scene::ArmInput;
use crate::model::state::ArmState;
use crate::model::update::{ArmFact, ComponentId, LinkState, MAX_ARMS, ManagementState, Signal};
use crate::record::clearance::ClearanceWatch;
use crate::record::format;

/// Longest time between two summaries of one arm, ns: the age of its last report grows
/// while it is silent, and a viewer that joins late sees it within this.
pub const SUMMARY_INTERVAL_NS: u64 = 1_000_000_000;

/// A signal with no sample for this long is called stale here (the OCU's own staleness
/// floor, `net::client::subscriptions`): s.
pub const STALE_AFTER_S: f64 = 0.5;

/// An arm with no report for this long is called silent: s. The observer only knows a
/// silence for sure when the arm is heard again; the summary says it while it lasts.
pub const SILENT_AFTER_S: f64 = 2.0;

/// JSON Schema of `/jaus/arm_state`.
pub const SCHEMA_ARM_STATE: &str = concat!(
    r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Arm state summary","type":"object","properties":{"t":{"type":"number","description":"Time, s since the session started"},"component":{"type":"string","pattern":"^[0-9]+\\.[0-9]+\\.[0-9]+$","description":"The arm: its JAUS ID subsystem.node.component"},"#,
    r#""name":{"type":["string","null"],"description":"Its identification, when it said it"},"#,
    r#""link":{"enum":["idle","connecting","live","lost"],"description":"The link as the arm's traffic shows it"},"#,
    r#""heard":{"enum":["live","stale","silent","waiting"],"description":"live: reports on time; stale: a signal overdue 0.5 s; silent: no report for 2 s; waiting: no report yet"},"#,
    r#""last_report_age_s":{"type":["number","null"],"description":"Seconds since the arm's newest report of any signal"},"#,
    r#""management":{"type":"string","description":"Management state, as /jaus/events names it (ready, standby, emergency, ...)"},"#,
    r#""emergency":{"type":"boolean"},"#,
    r#""control":{"type":"object","properties":{"holder":{"type":["string","null"],"description":"JAUS ID of the client holding control, as the arm reported it; null: nobody"},"authority":{"type":["integer","null"]},"reported":{"type":"boolean","description":"The arm has said who holds control"},"ocu":{"type":"string","description":"This OCU's control: held, requested, released"}},"required":["holder","authority","reported","ocu"]},"#,
    r#""rates_hz":{"type":"object","additionalProperties":{"type":"number"},"description":"Samples per second since the previous summary, by signal"},"#,
    r#""stale":{"type":"array","items":{"type":"string"},"description":"Signals the arm's reports say are overdue"},"#,
    r#""silences":{"type":"integer","description":"Silences of the arm seen so far"},"#,
    r#""presets":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["id","name"]}},"#,
    r##""clearance":{"description":"The arm's nearest pairs of bounding cylinders (with each other, another arm, the vehicle file's obstacles and ground); null until its specification and positions are known","oneOf":[{"type":"null"},{"type":"object","properties":{"nearest":{"description":"The pair not allowed to touch with the smallest gap; null: none checked","oneOf":[{"type":"null"},{"$ref":"#/$defs/pair"}]},"nearest_allowed":{"description":"The pair allowed to touch nearest its allowed depth; null: none","oneOf":[{"type":"null"},{"$ref":"#/$defs/pair"}]},"allowed_pairs":{"type":"integer","description":"Pairs of the arm allowed to touch (vehicle file, its presets, in contact when first seen)"}},"required":["nearest","nearest_allowed","allowed_pairs"]}]}},"##,
    r#""$defs":{"pair":{"type":"object","properties":{"pair":{"type":"string","description":"The two parts, e.g. wrist_roll (joint 5) and turret (joint 1)"},"gap_m":{"type":"number","description":"Surface gap, m; negative: overlapping"},"zone":{"enum":["in contact","inside the stop margin","inside the warning band","clear"]},"allowed_m":{"type":"number","description":"Allowed pairs: the depth they may overlap, m"},"effective_m":{"type":"number","description":"Allowed pairs: the gap plus the depth allowed, m"}},"required":["pair","gap_m","zone"]}},"#,
    r#""required":["t","component","link","heard","last_report_age_s","management","emergency","control","rates_hz","stale","silences","presets","clearance"]}"#
);

/// Schema name of `/jaus/arm_state`.
pub const SCHEMA_ARM_STATE_NAME: &str = "jaus_ocu.ArmState";

/// Topic of the arm-state summary.
pub const ARM_STATE_TOPIC: &str = "/jaus/arm_state";

#[derive(Debug, Clone)]
struct Arm {
    id: ComponentId,
    state: ArmState,
    /// A slow field (link, status, control, stale signals, presets) changed since the last
    /// summary: it is due at once.
    changed: bool,
    last_ns: Option<u64>,
    /// Samples seen per signal (by position in `Signal::ALL`), and as of the last summary.
    seen: [u64; Signal::ALL.len()],
    written: [u64; Signal::ALL.len()],
    /// The newest sample's time, s since the session started.
    last_sample: Option<f64>,
    silences: u64,
    /// The newest joint positions (for clearance), empty until the first.
    positions: Vec<f64>,
}

/// Every followed arm's summary (at most [`MAX_ARMS`], as the observer follows).
#[derive(Debug, Clone, Default)]
pub struct Summaries {
    start_ns: u64,
    arms: Vec<Arm>,
    names: BTreeMap<ComponentId, String>,
    /// Positions, a specification or presets changed since [`Summaries::take_moved`].
    moved: bool,
}

impl Summaries {
    /// Summaries of a session that started at `start_ns`.
    pub fn new(start_ns: u64) -> Self {
        Self {
            start_ns,
            ..Self::default()
        }
    }

    /// Remembers an arm's identification (bounded: names of arms not followed are dropped
    /// past [`MAX_ARMS`] times four).
    pub fn name(&mut self, id: ComponentId, name: &str) {
        if self.names.len() >= MAX_ARMS * 4 && !self.names.contains_key(&id) {
            return;
        }
        self.names.insert(id, name.to_owned());
    }

    /// Takes a fact about `arm`; returns whether its summary is due now (a slow field
    /// changed), to be written by [`Summaries::write`].
    pub fn apply(&mut self, arm: ComponentId, fact: &ArmFact) -> bool {
        let i = match self.arms.iter().position(|a| a.id == arm) {
            Some(i) => i,
            None if self.arms.len() < MAX_ARMS => {
                let mut state = ArmState {
                    selected: Some(arm),
                    ..ArmState::default()
                };
                state.link = LinkState::Connecting;
                self.arms.push(Arm {
                    id: arm,
                    state,
                    changed: true,
                    last_ns: None,
                    seen: [0; Signal::ALL.len()],
                    written: [0; Signal::ALL.len()],
                    last_sample: None,
                    silences: 0,
                    positions: Vec::new(),
                });
                self.arms.len() - 1
            }
            None => return false,
        };
        let a = &mut self.arms[i];
        if matches!(
            fact,
            ArmFact::Link {
                state: LinkState::Lost,
                ..
            }
        ) {
            a.silences += 1;
        }
        // Samples (the 1 kHz part) are counted and timed, not kept: no copy of their values
        // but the newest positions, in place (clearance needs them).
        if let ArmFact::JointPositions { values, .. } = fact {
            a.positions.clone_from(values);
            self.moved = true;
        }
        if matches!(
            fact,
            ArmFact::Specification { .. } | ArmFact::Presets { .. }
        ) {
            self.moved = true;
        }
        if let (Some(signal), Some(t)) = (fact.signal(), sample_time(fact)) {
            if let Some(k) = Signal::ALL.iter().position(|s| *s == signal) {
                a.seen[k] += 1;
            }
            a.last_sample = Some(a.last_sample.map_or(t, |l| l.max(t)));
            return false;
        }
        a.state.apply_arm(fact);
        if matches!(
            fact,
            ArmFact::Link { .. }
                | ArmFact::Status { .. }
                | ArmFact::Control { .. }
                | ArmFact::Controller { .. }
                | ArmFact::ControlLost { .. }
                | ArmFact::Stale { .. }
                | ArmFact::Presets { .. }
        ) {
            a.changed = true;
        }
        a.changed
    }

    /// The arms whose summary is due at `now_ns`: a changed slow field, or
    /// [`SUMMARY_INTERVAL_NS`] since the last.
    pub fn due(&self, now_ns: u64) -> impl Iterator<Item = ComponentId> + '_ {
        self.arms
            .iter()
            .filter(move |a| {
                a.changed
                    || a.last_ns
                        .is_none_or(|l| now_ns.saturating_sub(l) >= SUMMARY_INTERVAL_NS)
            })
            .map(|a| a.id)
    }

    /// Whether any summary is due at `now_ns` (cheap: for every record).
    pub fn any_due(&self, now_ns: u64) -> bool {
        self.due(now_ns).next().is_some()
    }

    /// Whether positions, a specification or presets changed since the last call (clearance
    /// is then due), and clears it.
    pub fn take_moved(&mut self) -> bool {
        std::mem::take(&mut self.moved)
    }

    /// Makes `arm`'s summary due at once (its clearance entered a zone).
    pub fn touch(&mut self, arm: ComponentId) {
        if let Some(a) = self.arms.iter_mut().find(|a| a.id == arm) {
            a.changed = true;
        }
    }

    /// Every arm with a specification and positions, as clearance takes them.
    pub fn arm_facts(&self) -> Vec<ArmFacts<'_>> {
        self.arms
            .iter()
            .filter(|a| !a.positions.is_empty())
            .filter_map(|a| {
                Some(ArmFacts {
                    input: ArmInput {
                        id: a.id,
                        spec: a.state.spec.as_ref()?,
                        positions: &a.positions,
                    },
                    presets: &a.state.presets,
                })
            })
            .collect()
    }

    /// Writes `arm`'s summary at `now_ns` into `out` (cleared first), its clearance as
    /// `clearance` measured it; false (and `out` empty) for an arm not followed.
    pub fn write(
        &mut self,
        arm: ComponentId,
        now_ns: u64,
        clearance: &ClearanceWatch,
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        let Some(a) = self.arms.iter_mut().find(|a| a.id == arm) else {
            return false;
        };
        let t = now_ns.saturating_sub(self.start_ns) as f64 * 1e-9;
        let s = &a.state;
        let age = a.last_sample.map(|last| (t - last).max(0.0));
        let stale: Vec<&str> = s
            .stale
            .iter()
            .filter(|(_, st)| **st)
            .map(|(sig, _)| format::signal_key(*sig))
            .collect();
        let heard = match age {
            None => "waiting",
            Some(age) if age >= SILENT_AFTER_S => "silent",
            Some(age) if age >= STALE_AFTER_S || !stale.is_empty() => "stale",
            Some(_) => "live",
        };
        let dt = a.last_ns.map(|l| now_ns.saturating_sub(l) as f64 * 1e-9);
        let mut rates = serde_json::Map::new();
        for (k, sig) in Signal::ALL.iter().enumerate() {
            if a.seen[k] == 0 {
                continue;
            }
            let rate = match dt {
                Some(dt) if dt > 0.0 => a.seen[k].saturating_sub(a.written[k]) as f64 / dt,
                _ => 0.0,
            };
            rates.insert(
                format::signal_key(*sig).to_owned(),
                serde_json::json!(round3(rate)),
            );
        }
        a.written = a.seen;
        let (holder, authority) = match s.controller {
            Some(c) => (c.id.map(|id| id.to_string()), c.id.map(|_| c.authority)),
            None => (None, None),
        };
        let body = serde_json::json!({
            "t": round9(t),
            "component": arm.to_string(),
            "name": self.names.get(&arm),
            "link": s.link.name(),
            "heard": heard,
            "last_report_age_s": age.map(round3),
            "management": format::management_name(s.status),
            "emergency": s.status == ManagementState::Emergency,
            "control": {
                "holder": holder,
                "authority": authority,
                "reported": s.controller.is_some(),
                "ocu": s.control.name(),
            },
            "rates_hz": rates,
            "stale": stale,
            "silences": a.silences,
            "presets": s.presets.iter().map(|p| serde_json::json!({"id": p.id, "name": p.name})).collect::<Vec<_>>(),
            "clearance": clearance.summary(arm, s.spec.as_ref()),
        });
        // Writing a JSON value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &body);
        a.changed = false;
        a.last_ns = Some(now_ns);
        true
    }
}

/// The receive time of a sample fact.
fn sample_time(fact: &ArmFact) -> Option<f64> {
    match fact {
        ArmFact::JointPositions { t, .. }
        | ArmFact::JointVelocities { t, .. }
        | ArmFact::JointEfforts { t, .. }
        | ArmFact::JointForceTorques { t, .. }
        | ArmFact::ForceTorque { t, .. } => Some(*t),
        _ => None,
    }
}

fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

fn round9(v: f64) -> f64 {
    (v * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::Controller;

    const START: u64 = 1_000_000_000_000;

    fn id() -> ComponentId {
        ComponentId::new(126, 1, 10)
    }

    fn json(out: &[u8]) -> serde_json::Value {
        serde_json::from_slice(out).unwrap()
    }

    #[test]
    fn a_control_change_is_due_at_once_and_names_the_holder() {
        let mut s = Summaries::new(START);
        let mut out = Vec::new();
        assert!(s.apply(
            id(),
            &ArmFact::Status {
                t: 0.0,
                state: ManagementState::Ready
            }
        ));
        assert!(s.write(id(), START, &ClearanceWatch::default(), &mut out));
        assert_eq!(s.due(START + 1).count(), 0);
        let holder = ComponentId::new(200, 7, 3);
        let fact = ArmFact::Controller {
            t: 0.1,
            controller: Controller {
                id: Some(holder),
                authority: 200,
            },
        };
        assert!(s.apply(id(), &fact));
        assert_eq!(s.due(START + 2).collect::<Vec<_>>(), vec![id()]);
        s.write(id(), START + 2, &ClearanceWatch::default(), &mut out);
        let v = json(&out);
        assert_eq!(v["control"]["holder"], "200.7.3");
        assert_eq!(v["control"]["authority"], 200);
        assert_eq!(v["management"], "ready");
    }

    #[test]
    fn a_silent_arm_is_said_silent_and_rates_are_per_second() {
        let mut s = Summaries::new(START);
        let mut out = Vec::new();
        for k in 0..50 {
            let t = f64::from(k) * 0.02;
            s.apply(
                id(),
                &ArmFact::JointPositions {
                    t,
                    values: vec![0.0],
                },
            );
        }
        s.write(id(), START, &ClearanceWatch::default(), &mut out);
        for k in 50..100 {
            let t = f64::from(k) * 0.02;
            s.apply(
                id(),
                &ArmFact::JointPositions {
                    t,
                    values: vec![0.0],
                },
            );
        }
        // Nothing changed but time: due after a second, not before.
        assert_eq!(s.due(START + 999_000_000).count(), 0);
        assert_eq!(s.due(START + 1_000_000_000).count(), 1);
        s.write(
            id(),
            START + 1_000_000_000,
            &ClearanceWatch::default(),
            &mut out,
        );
        let v = json(&out);
        assert_eq!(v["heard"], "live");
        assert!((v["rates_hz"]["joint_positions"].as_f64().unwrap() - 50.0).abs() < 1e-9);
        s.write(
            id(),
            START + 4_000_000_000,
            &ClearanceWatch::default(),
            &mut out,
        );
        let v = json(&out);
        assert_eq!(v["heard"], "silent");
        assert!(v["last_report_age_s"].as_f64().unwrap() > 2.0);
    }

    #[test]
    fn arms_past_the_bound_are_not_kept() {
        let mut s = Summaries::new(START);
        for n in 0..(MAX_ARMS as u8 + 5) {
            let id = ComponentId::new(126, 1, n + 1);
            s.apply(
                id,
                &ArmFact::Status {
                    t: 0.0,
                    state: ManagementState::Ready,
                },
            );
        }
        assert_eq!(s.due(START).count(), MAX_ARMS);
    }
}
