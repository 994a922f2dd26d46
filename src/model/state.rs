//! The latest known facts about the network and the selected arm, changed only by applying
//! facts ([`ArmFact`]s about the arm, [`NetFact`]s of the network). `probe` prints it; the GUI draws from it (with the time-indexed history that
//! the recording work adds beside it).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use super::arm::ArmSpec;
use super::command::CommandKind;
use super::fresh::Samples;
use super::jog::{ArmGateFacts, Gates};
use super::kinematics;
use super::limits::LimitState;
use super::update::{
    ArmFact, ComponentId, ComponentInfo, ControlLoss, ControlState, Controller, Delivery,
    IdConflict, LinkState, MAX_COMPONENTS, ManagementState, NetFact, NetStats, Outcome, PoseState,
    PresetInfo, Remark, Signal,
};

/// A value and when it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped<T> {
    /// Receive time, s since the session started.
    pub t: f64,
    /// The value.
    pub value: T,
}

/// End-effector force (N) and torque (N·m); absent components `None`.
pub type Wrench = ([Option<f64>; 3], [Option<f64>; 3]);

/// The OCU's picture of the world.
#[derive(Debug, Clone, Default)]
pub struct ArmState {
    /// Every component found, by ID, with whether it is lost.
    pub components: BTreeMap<ComponentId, (ComponentInfo, bool)>,
    /// The manipulator being worked with.
    pub selected: Option<ComponentId>,
    /// Reachability of the selected manipulator.
    pub link: LinkState,
    /// Its specification.
    pub spec: Option<ArmSpec>,
    /// Its tool point (end-effector frame), m.
    pub tool_point: Option<[f64; 3]>,
    /// Its presets.
    pub presets: Vec<PresetInfo>,
    /// Joint positions.
    pub positions: Option<Stamped<Vec<f64>>>,
    /// Joint velocities.
    pub velocities: Option<Stamped<Vec<f64>>>,
    /// Joint efforts (percent).
    pub efforts: Option<Stamped<Vec<f64>>>,
    /// Joint torques/forces.
    pub joint_force_torques: Option<Stamped<Vec<f64>>>,
    /// End-effector force and torque.
    pub force_torque: Option<Stamped<Wrench>>,
    /// Where the arm is among its presets.
    pub pose: PoseState,
    /// Management state.
    pub status: ManagementState,
    /// Our control, as our requests' answers and the arm's reports say.
    pub control: ControlState,
    /// Who holds control, as the arm last reported it (`None` until it has said).
    pub controller: Option<Controller>,
    /// The last loss of control we held, with when; cleared when control is held again.
    pub control_loss: Option<(f64, ControlLoss)>,
    /// Our own JAUS ID (`None` until the network side has said).
    pub ocu_id: Option<ComponentId>,
    /// Another client uses our JAUS ID: commands are refused while this is `Some`.
    pub id_conflict: Option<IdConflict>,
    /// Datagrams with our JAUS ID from a stranger's address: shown, nothing refused.
    pub id_suspect: Option<IdConflict>,
    /// Stale signals.
    pub stale: BTreeMap<Signal, bool>,
    /// How each signal is delivered.
    pub delivery: BTreeMap<Signal, Delivery>,
    /// Where a jog of the arm stands, as the network side last said it.
    pub jog: crate::model::jog::JogStatus,
    /// Our emergency stop of the arm, pending until the arm confirms it.
    pub stop: crate::model::update::StopState,
    /// Latest counters.
    pub stats: NetStats,
    /// Command outcomes, newest last (at most 50 kept).
    pub outcomes: Vec<(f64, CommandKind, Outcome)>,
    /// Errors for the operator, newest last (at most 50 kept).
    pub errors: Vec<(f64, String)>,
    /// Samples received per signal (for rates).
    pub counts: BTreeMap<Signal, u64>,
    /// The arm has answered for its presets (an empty list then means it has none, not that
    /// they are still loading).
    pub presets_reported: bool,
    /// Where the arm is followed (`None` until the network side has said: a replay).
    pub address: Option<SocketAddr>,
    /// Another address answering our discovery with the arm's ID, while it does.
    pub address_other: Option<SocketAddr>,
    /// Per joint (joint 1 first): it entered its limit's near band while our own jog
    /// streamed, and has not left the band since: the operator put it there
    /// ([`Self::limit_rests`]).
    pub limit_jogged: Vec<bool>,
}

/// Why a joint on (or next to) its limit, and still, is not an alarm: it rests where it
/// was sent ([`ArmState::limit_rests`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitRest {
    /// The arm is at this preset (reported at it, or every joint within 0.02 of its
    /// positions), which has the joint there: the arm's maker put it there.
    Preset(String),
    /// The operator's jog took it there.
    Jogged,
}

impl LimitRest {
    /// In words, after "at its limit": "where preset “Reach forward” puts it".
    pub fn words(&self) -> String {
        match self {
            Self::Preset(name) => format!("where preset \"{name}\" puts it"),
            Self::Jogged => "where the operator's jog stopped it".into(),
        }
    }
}

/// A joint slower than this fraction of its maximum speed counts as still.
const STILL_FRACTION: f64 = 0.01;

/// A joint slower than this (rad/s or m/s) counts as still whatever its maximum speed.
const STILL_SPEED: f64 = 1e-3;

/// How fresh the selected arm's data is: what the operator may trust of what is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Freshness {
    /// No arm selected, or its link not set up yet: nothing has arrived to be fresh.
    Waiting,
    /// Reports arrive on time.
    Live,
    /// These signals are overdue (3 periods); the rest is on time.
    Stale {
        /// The overdue signals.
        signals: Vec<Signal>,
        /// When the newest sample of any signal arrived, s since the session started.
        last: Option<f64>,
    },
    /// The arm is silent past the link's limit: everything drawn is the last known.
    Lost {
        /// When the newest sample of any signal arrived, s since the session started.
        last: Option<f64>,
    },
}

impl Freshness {
    /// One word for badges and the arm selector: `live`, `stale`, `lost`, `waiting`.
    pub fn word(&self) -> &'static str {
        match self {
            Freshness::Waiting => "waiting",
            Freshness::Live => "live",
            Freshness::Stale { .. } => "stale",
            Freshness::Lost { .. } => "lost",
        }
    }

    /// Whether the joint positions drawn are the arm's current ones (live, or only other
    /// signals stale).
    pub fn positions_fresh(&self) -> bool {
        match self {
            Freshness::Live => true,
            Freshness::Stale { signals, .. } => !signals.contains(&Signal::JointPositions),
            Freshness::Waiting | Freshness::Lost { .. } => false,
        }
    }

    /// Whether the arm is lost (its states, e.g. READY, are then unknown).
    pub fn is_lost(&self) -> bool {
        matches!(self, Freshness::Lost { .. })
    }

    /// When the newest sample arrived, for "last known at …".
    pub fn last(&self) -> Option<f64> {
        match self {
            Freshness::Stale { last, .. } | Freshness::Lost { last } => *last,
            Freshness::Waiting | Freshness::Live => None,
        }
    }
}

/// A command outcome in words for the operator. A reason the peer or the client gave as a
/// code (`TRANSITION_FAILED`) is explained from `state`, the arm's state now: an emergency,
/// no control, else the arm refusing.
pub fn outcome_text(outcome: &Outcome, state: &ArmState) -> String {
    let why = || {
        if state.status == ManagementState::Emergency {
            "the arm is in EMERGENCY".to_string()
        } else if !matches!(state.control, ControlState::Held { .. }) {
            "no control".to_string()
        } else {
            "the arm refused the pose".to_string()
        }
    };
    // A reason in words has a space or is lower case; a code is one upper-case token.
    let words = |r: &str| {
        let code = !r.is_empty()
            && r.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if r.trim().is_empty() || code {
            why()
        } else {
            r.to_string()
        }
    };
    match outcome {
        Outcome::Confirmed => "confirmed".into(),
        Outcome::Completed => "completed".into(),
        Outcome::TimedOut => "no answer in time".into(),
        Outcome::Rejected(r) => format!("refused: {}", words(r)),
        Outcome::Failed(r) => format!("failed: {}", words(r)),
        Outcome::NoAnswer { .. } => outcome.to_string(),
    }
}

/// Why a component may list no services (said by `probe` and the GUI's empty state).
pub const NO_SERVICES_NOTE: &str = "listed no services: it may implement only the core services without Discovery's service list, or answer the wildcard query by echoing it (the OCU then asks with its own node and component)";

/// Records `info` in `components`, keeping at most [`MAX_COMPONENTS`]: a new one past the
/// bound replaces a lost component that is no manipulator, else any that is no manipulator,
/// else it is not kept (the network side's own table is bounded the same way, so this is a
/// second line, for producers such as files).
fn insert_component(
    components: &mut BTreeMap<ComponentId, (ComponentInfo, bool)>,
    info: &ComponentInfo,
) {
    if components.len() >= MAX_COMPONENTS && !components.contains_key(&info.id) {
        let victim = components
            .iter()
            .find(|(_, (c, lost))| *lost && !c.manipulator)
            .or_else(|| components.iter().find(|(_, (c, _))| !c.manipulator))
            .map(|(id, _)| *id);
        match victim {
            Some(id) => {
                components.remove(&id);
            }
            None => return,
        }
    }
    components.insert(info.id, (info.clone(), false));
}

/// The components that answered when none is a manipulator, one line each, for the GUI's
/// empty state (the terminal's longer form is `probe`'s).
pub fn components_summary(state: &ArmState) -> String {
    let mut lines = vec!["components answered, none is a manipulator:".to_string()];
    for (info, lost) in state.components.values() {
        let name = info.identification.as_deref().unwrap_or("unidentified");
        let services = if info.services.is_empty() {
            "no services listed".to_string()
        } else {
            format!("{} services", info.services.len())
        };
        let lost = if *lost { ", lost" } else { "" };
        lines.push(format!(
            "{} at {} \"{name}\" ({services}{lost})",
            info.id, info.address
        ));
    }
    lines.push("check the arm's address (--connect) or that it offers Manipulator services".into());
    lines.join("\n")
}

/// Which limit `value` is on or next to (within the near band): `Some(false)` the lower,
/// `Some(true)` the upper, `None` neither (or no limits, or no value).
fn limit_side(joint: &super::arm::Joint, value: Option<f64>) -> Option<bool> {
    match joint.limit_state(value) {
        LimitState::Inside | LimitState::Unlimited => None,
        LimitState::NearMin => Some(false),
        LimitState::NearMax => Some(true),
        LimitState::AtLimit => {
            let (v, lo, hi) = (value?, joint.min?, joint.max?);
            Some(v - lo > hi - v)
        }
    }
}

fn push_bounded<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= 50 {
        v.remove(0);
    }
    v.push(x);
}

impl ArmState {
    /// Control in words for the live area, from our requests' answers and the arm's
    /// `ReportControl`: "control held (authority 100)", "held by 200.7.3 (authority 200)",
    /// "free", "control requested", or "control not held" while the arm has not said who
    /// holds it.
    pub fn control_words(&self) -> String {
        match self.control {
            ControlState::Held { authority } => format!("control held (authority {authority})"),
            ControlState::Requested => "control requested".into(),
            ControlState::Released => match self.controller {
                Some(Controller { id: None, .. }) => "free".into(),
                Some(c @ Controller { id: Some(id), .. }) if Some(id) != self.ocu_id => {
                    format!("held by {c}")
                }
                _ => "control not held".into(),
            },
        }
    }

    /// The rest pose (a preset named as one, [`super::limits::is_rest_name`]) the arm is at:
    /// reported at it, or every joint within 0.02 (rad or m) of its positions. A joint on its
    /// limit there is said, not alarmed.
    pub fn at_rest(&self) -> Option<&PresetInfo> {
        let q = self.positions.as_ref().map(|p| p.value.as_slice());
        self.presets.iter().find(|p| {
            super::limits::is_rest_name(&p.name)
                && (self.pose == PoseState::At(p.id)
                    || p.positions.as_deref().zip(q).is_some_and(|(at, q)| {
                        at.len() == q.len() && at.iter().zip(q).all(|(a, b)| (a - b).abs() < 0.02)
                    }))
        })
    }

    /// The preset the arm is at, whatever its name: reported at it, or every joint within
    /// 0.02 (rad or m) of its positions.
    pub fn at_preset(&self) -> Option<&PresetInfo> {
        let q = self.positions.as_ref().map(|p| p.value.as_slice());
        self.presets.iter().find(|p| {
            self.pose == PoseState::At(p.id)
                || p.positions.as_deref().zip(q).is_some_and(|(at, q)| {
                    at.len() == q.len() && at.iter().zip(q).all(|(a, b)| (a - b).abs() < 0.02)
                })
        })
    }

    /// Per joint (joint 1 first): why a joint on or next to its limit is not an alarm, or
    /// `None` (not near a limit, or an alarm). A limit is an alarm while the joint moves
    /// toward it, and when the joint arrived there unsent; it is said, not alarmed, when the
    /// joint is still and was sent there: the arm is at a rest pose ([`Self::at_rest`]), at
    /// a preset that has the joint on that limit, or the operator's own jog took it there
    /// ([`Self::limit_jogged`]). Still: slower than 1 % of its maximum speed (or 0.001);
    /// without velocity reports, still while our jog does not stream.
    pub fn limit_rests(&self) -> Vec<Option<LimitRest>> {
        let Some(spec) = &self.spec else {
            return Vec::new();
        };
        let q = self.positions.as_ref().map(|p| p.value.as_slice());
        let rest_pose = self.at_rest();
        let preset = self.at_preset();
        spec.joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let value = q.and_then(|q| q.get(i).copied());
                let side = limit_side(j, value)?;
                let speed = self.velocities.as_ref().and_then(|v| v.value.get(i));
                let still = speed.map_or(!self.jog.moving, |v| {
                    v.abs() <= (j.max_speed.unwrap_or(0.0) * STILL_FRACTION).max(STILL_SPEED)
                });
                if !still {
                    return None;
                }
                if let Some(p) = rest_pose {
                    return Some(LimitRest::Preset(p.name.clone()));
                }
                if let Some(p) = preset {
                    // The preset has this joint at the same limit (or the arm says it is at
                    // the preset without giving the preset's positions: the arm put it there).
                    let target = p.positions.as_ref().and_then(|t| t.get(i).copied());
                    let same = target.is_none_or(|t| limit_side(j, Some(t)) == Some(side));
                    if same {
                        return Some(LimitRest::Preset(p.name.clone()));
                    }
                }
                self.limit_jogged
                    .get(i)
                    .copied()
                    .unwrap_or(false)
                    .then_some(LimitRest::Jogged)
            })
            .collect()
    }

    /// How close each joint is to a limit, 0..1 ([`super::limits::joint_warnings`]), for the
    /// gauges' and the 3D view's colours: 0 for a joint resting where it was sent
    /// ([`Self::limit_rests`]).
    pub fn joint_warnings(&self) -> Vec<f32> {
        let Some(spec) = &self.spec else {
            return Vec::new();
        };
        let q = self.positions.as_ref().map(|p| p.value.as_slice());
        let rests = self.limit_rests();
        super::limits::joint_warnings(spec, q)
            .into_iter()
            .zip(rests)
            .map(|(w, rest)| if rest.is_some() { 0.0 } else { w })
            .collect()
    }

    /// Keeps [`Self::limit_jogged`] after new joint positions: a joint entering its
    /// limit's band while our jog streams was put there by the operator; one leaving the
    /// band forgets it.
    fn track_limit_arrivals(&mut self) {
        let (Some(spec), Some(q)) = (&self.spec, &self.positions) else {
            return;
        };
        if !self.jog.moving && !self.limit_jogged.contains(&true) {
            // Nothing jogged onto a limit, and no jog to bring one there (a replay's every
            // sample, and live ones at rest): nothing changes.
            return;
        }
        let n = spec.joints.len();
        self.limit_jogged.resize(n, false);
        for (i, j) in spec.joints.iter().enumerate() {
            let near = limit_side(j, q.value.get(i).copied()).is_some();
            self.limit_jogged[i] = near && (self.limit_jogged[i] || self.jog.moving);
        }
    }

    /// The holder of control when it is another client, as the arm reported it.
    pub fn other_controller(&self) -> Option<Controller> {
        self.controller
            .filter(|c| c.id.is_some() && c.id != self.ocu_id)
    }

    /// Applies a fact of the network (or news for every arm).
    pub fn apply_net(&mut self, fact: &NetFact) {
        match fact {
            NetFact::Component { info, .. } => insert_component(&mut self.components, info),
            NetFact::ComponentLost { id, lost, .. } => {
                if let Some(c) = self.components.get_mut(id) {
                    c.1 = *lost;
                }
            }
            NetFact::Selected { id, .. } => {
                if self.selected != Some(*id) {
                    // A different arm: nothing of the previous one applies.
                    *self = ArmState {
                        components: std::mem::take(&mut self.components),
                        stats: self.stats,
                        errors: std::mem::take(&mut self.errors),
                        outcomes: std::mem::take(&mut self.outcomes),
                        ocu_id: self.ocu_id,
                        id_conflict: self.id_conflict.take(),
                        id_suspect: self.id_suspect.take(),
                        ..ArmState::default()
                    };
                    self.selected = Some(*id);
                }
            }
            NetFact::Identity {
                id,
                conflict,
                suspect,
                ..
            } => {
                self.ocu_id = Some(*id);
                self.id_conflict.clone_from(conflict);
                self.id_suspect.clone_from(suspect);
            }
            NetFact::Stats { stats, .. } => self.stats = **stats,
            NetFact::Remark(r) => self.apply_remark(r),
        }
    }

    /// Applies a fact about the arm.
    pub fn apply_arm(&mut self, fact: &ArmFact) {
        match fact {
            ArmFact::Link { state, .. } => self.link = *state,
            ArmFact::Specification { spec, .. } => self.spec = Some(spec.clone()),
            ArmFact::ToolOffset { point, .. } => self.tool_point = Some(*point),
            ArmFact::Presets { presets, .. } => {
                self.presets.clone_from(presets);
                self.presets_reported = true;
            }
            ArmFact::JointPositions { t, values } => {
                set_stamped(&mut self.positions, *t, values);
                *self.counts.entry(Signal::JointPositions).or_default() += 1;
                self.track_limit_arrivals();
            }
            ArmFact::JointVelocities { t, values } => {
                set_stamped(&mut self.velocities, *t, values);
                *self.counts.entry(Signal::JointVelocities).or_default() += 1;
            }
            ArmFact::JointEfforts { t, values } => {
                set_stamped(&mut self.efforts, *t, values);
                *self.counts.entry(Signal::JointEfforts).or_default() += 1;
            }
            ArmFact::JointForceTorques { t, values } => {
                set_stamped(&mut self.joint_force_torques, *t, values);
                *self.counts.entry(Signal::JointForceTorques).or_default() += 1;
            }
            ArmFact::ForceTorque { t, force, torque } => {
                self.force_torque = Some(Stamped {
                    t: *t,
                    value: (*force, *torque),
                });
                *self
                    .counts
                    .entry(Signal::EndEffectorForceTorque)
                    .or_default() += 1;
            }
            ArmFact::CurrentPose { pose, .. } => self.pose = *pose,
            ArmFact::Status { state, .. } => self.status = *state,
            ArmFact::Control { state, .. } => {
                self.control = *state;
                if matches!(state, ControlState::Held { .. }) {
                    self.control_loss = None;
                }
            }
            ArmFact::Controller { controller, .. } => self.controller = Some(*controller),
            ArmFact::ControlLost { t, reason } => self.control_loss = Some((*t, *reason)),
            ArmFact::Stale { signal, stale, .. } => {
                self.stale.insert(*signal, *stale);
            }
            ArmFact::Delivery {
                signal, delivery, ..
            } => {
                self.delivery.insert(*signal, *delivery);
            }
            ArmFact::Jog { status, .. } => self.jog = (**status).clone(),
            ArmFact::Stop { state, .. } => self.stop = *state,
            ArmFact::Address { address, other, .. } => {
                self.address = Some(*address);
                self.address_other = *other;
            }
            ArmFact::Remark(r) => self.apply_remark(r),
        }
    }

    /// Applies what is said about the arm or the network (marks live on the session's
    /// timeline, not in the latest state).
    fn apply_remark(&mut self, r: &Remark) {
        match r {
            Remark::CommandOutcome {
                t,
                command,
                outcome,
            } => push_bounded(&mut self.outcomes, (*t, *command, outcome.clone())),
            Remark::Mark { .. } => {}
            Remark::Error { t, message } => push_bounded(&mut self.errors, (*t, message.clone())),
        }
    }

    /// The tool point in the manipulator and vehicle frames, when the specification, the
    /// positions and the tool offset are known.
    pub fn tool_point_frames(&self) -> Option<([f64; 3], [f64; 3])> {
        let spec = self.spec.as_ref()?;
        let q = &self.positions.as_ref()?.value;
        let pose = kinematics::forward(spec, q, self.tool_point.unwrap_or([0.0; 3])).ok()?;
        Some((
            pose.tool_point_manipulator.to_array(),
            pose.tool_point_vehicle.to_array(),
        ))
    }

    /// When the newest sample of any signal arrived, s since the session started.
    pub fn last_sample(&self) -> Option<f64> {
        [
            self.positions.as_ref().map(|s| s.t),
            self.velocities.as_ref().map(|s| s.t),
            self.efforts.as_ref().map(|s| s.t),
            self.joint_force_torques.as_ref().map(|s| s.t),
            self.force_torque.as_ref().map(|s| s.t),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::max)
    }

    /// How fresh the selected arm's data is: lost when the link is lost or the component is
    /// marked lost, stale when a signal is overdue, else live (waiting before the link is up).
    pub fn freshness(&self) -> Freshness {
        let Some(id) = self.selected else {
            return Freshness::Waiting;
        };
        let last = self.last_sample();
        let component_lost = self.components.get(&id).is_some_and(|c| c.1);
        if self.link == LinkState::Lost || component_lost {
            return Freshness::Lost { last };
        }
        if self.link != LinkState::Live {
            return Freshness::Waiting;
        }
        let signals: Vec<Signal> = self
            .stale
            .iter()
            .filter(|(_, s)| **s)
            .map(|(k, _)| *k)
            .collect();
        if signals.is_empty() {
            Freshness::Live
        } else {
            Freshness::Stale { signals, last }
        }
    }

    /// What this arm's joint positions are known to be: the stale flag, the last sample's
    /// receive time, how they are delivered (`model::fresh`: the network side's rule too).
    pub fn positions_samples(&self) -> Samples {
        Samples {
            stale: self
                .stale
                .get(&Signal::JointPositions)
                .copied()
                .unwrap_or(false),
            last: self.positions.as_ref().map(|p| p.t),
            delivery: self.delivery.get(&Signal::JointPositions).copied(),
        }
    }

    /// `gates` with this arm's facts filled in ([`Gates::with_arm`], the stream's rule):
    /// emergency, control, READY, and joint positions fresh at `now` ([`Samples::fresh_at`],
    /// `lateness` how late the one asking runs).
    pub fn jog_gates(&self, gates: Gates, now: f64, lateness: f64) -> Gates {
        gates.with_arm(ArmGateFacts {
            emergency: self.status == ManagementState::Emergency,
            stop_pending: self.stop.is_pending(),
            control_held: matches!(self.control, ControlState::Held { .. }),
            ready: self.status == ManagementState::Ready,
            positions_fresh: self.positions_samples().fresh_at(now, lateness),
        })
    }

    /// Whether the selected arm is fully known: specification, tool point and positions.
    pub fn is_complete(&self) -> bool {
        self.spec.is_some() && self.tool_point.is_some() && self.positions.is_some()
    }

    /// Components answered, none of them is a manipulator (the empty state says who answered
    /// instead of "no manipulator found"; `probe` exits with status 3).
    pub fn none_is_a_manipulator(&self) -> bool {
        self.selected.is_none()
            && !self.components.is_empty()
            && self.components.values().all(|(c, _)| !c.manipulator)
    }
}

/// `slot` set to `values` at `t`, in the buffer it already has (one sample after another
/// allocates nothing).
fn set_stamped(slot: &mut Option<Stamped<Vec<f64>>>, t: f64, values: &[f64]) {
    match slot {
        Some(s) => {
            s.t = t;
            s.value.clear();
            s.value.extend_from_slice(values);
        }
        None => {
            *slot = Some(Stamped {
                t,
                value: values.to_vec(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{ComponentId, ComponentInfo};

    fn two_joint_arm(at: [f64; 2]) -> ArmState {
        use crate::model::arm::{ArmSpec, Joint};
        let spec = ArmSpec {
            mount: None,
            joints: vec![
                Joint::revolute(0.5, 0.0, 0.0),
                Joint::prismatic(0.0, 0.0, 0.0, 0.3, 0.9),
            ],
        };
        ArmState {
            spec: Some(spec),
            positions: Some(Stamped {
                t: 1.0,
                value: at.to_vec(),
            }),
            ..ArmState::default()
        }
    }

    fn preset(id: u8, name: &str, at: [f64; 2]) -> PresetInfo {
        PresetInfo {
            id,
            name: name.into(),
            positions: Some(at.to_vec()),
        }
    }

    #[test]
    fn a_limit_at_a_rest_pose_is_not_alarmed() {
        let mut s = two_joint_arm([0.0, 0.3]);
        s.presets = vec![preset(2, "Deploy", [0.0, 0.6])];
        // The telescope on its minimum, at no preset and not jogged there: alarmed.
        assert_eq!(s.at_rest(), None);
        assert_eq!(s.joint_warnings(), [0.0, 1.0]);
        assert_eq!(s.limit_rests(), [None, None]);
        // The same positions at "Stowed": said, not alarmed (by position or as reported).
        s.presets.push(preset(1, "Stowed", [0.0, 0.3]));
        assert_eq!(s.at_rest().map(|p| p.id), Some(1));
        assert_eq!(s.joint_warnings(), [0.0, 0.0]);
        s.presets[1].positions = None;
        assert_eq!(s.at_rest(), None);
        s.pose = PoseState::At(1);
        assert_eq!(s.at_rest().map(|p| p.id), Some(1));
    }

    #[test]
    fn a_preset_that_puts_a_joint_on_its_limit_is_not_an_alarm_once_the_joint_is_still() {
        let mut s = two_joint_arm([0.0, 0.9]);
        s.presets = vec![preset(3, "Reach forward", [0.0, 0.9])];
        let reach = Some(LimitRest::Preset("Reach forward".into()));
        assert_eq!(s.limit_rests(), [None, reach.clone()]);
        assert_eq!(s.joint_warnings(), [0.0, 0.0]);
        // Still arriving (0.05 m/s toward the limit): an alarm until it stops.
        s.velocities = Some(Stamped {
            t: 1.0,
            value: vec![0.0, 0.05],
        });
        assert_eq!(s.limit_rests(), [None, None]);
        assert_eq!(s.joint_warnings(), [0.0, 1.0]);
        s.velocities.as_mut().unwrap().value[1] = 0.0;
        assert_eq!(s.limit_rests(), [None, reach]);
        // At the preset's pose but on the other limit than the preset's: an alarm.
        s.presets[0].positions = Some(vec![0.0, 0.3]);
        s.pose = PoseState::At(3);
        assert_eq!(s.limit_rests(), [None, None]);
    }

    #[test]
    fn a_joint_the_operator_jogged_onto_its_limit_is_said_one_that_arrived_unsent_is_alarmed() {
        let mut s = two_joint_arm([0.0, 0.6]);
        let positions = |s: &mut ArmState, x: f64| {
            s.apply_arm(&ArmFact::JointPositions {
                t: 2.0,
                values: vec![0.0, x],
            });
        };
        s.jog.moving = true;
        positions(&mut s, 0.89);
        assert_eq!(s.limit_rests(), [None, None], "moving: an alarm");
        s.jog.moving = false;
        positions(&mut s, 0.9);
        assert_eq!(s.limit_rests(), [None, Some(LimitRest::Jogged)]);
        assert_eq!(s.joint_warnings(), [0.0, 0.0]);
        // Away from the limit and back without a jog of ours: an unexpected arrival.
        positions(&mut s, 0.6);
        positions(&mut s, 0.9);
        assert_eq!(s.limit_rests(), [None, None]);
        assert_eq!(s.joint_warnings(), [0.0, 1.0]);
    }

    #[test]
    fn the_empty_state_names_components_when_none_is_a_manipulator() {
        let mut s = ArmState::default();
        assert!(!s.none_is_a_manipulator(), "nobody answered yet");
        s.apply_net(&NetFact::Component {
            t: 0.0,
            info: ComponentInfo {
                id: ComponentId::new(9, 1, 1),
                address: "127.0.0.1:3794".parse().unwrap(),
                identification: Some("core only".into()),
                services: vec![],
                manipulator: false,
            },
        });
        assert!(s.none_is_a_manipulator());
        let text = components_summary(&s);
        assert!(text.contains("none is a manipulator"), "{text}");
        assert!(
            text.contains("9.1.1 at 127.0.0.1:3794 \"core only\" (no services listed)"),
            "{text}"
        );
    }

    fn selected(link: LinkState) -> ArmState {
        let mut s = ArmState::default();
        s.apply_net(&NetFact::Selected {
            t: 0.0,
            id: ComponentId::new(1, 1, 1),
        });
        s.apply_arm(&ArmFact::Link {
            t: 0.0,
            state: link,
        });
        s.apply_arm(&ArmFact::JointPositions {
            t: 1.5,
            values: vec![0.0],
        });
        s
    }

    #[test]
    fn freshness_is_live_stale_or_lost_since_the_last_sample() {
        assert_eq!(ArmState::default().freshness(), Freshness::Waiting);
        assert_eq!(selected(LinkState::Live).freshness(), Freshness::Live);
        let mut s = selected(LinkState::Live);
        s.apply_arm(&ArmFact::Stale {
            t: 2.0,
            signal: Signal::JointPositions,
            stale: true,
        });
        let f = s.freshness();
        assert_eq!(f.word(), "stale");
        assert!(!f.positions_fresh());
        assert_eq!(f.last(), Some(1.5));
        let lost = selected(LinkState::Lost).freshness();
        assert!(lost.is_lost());
        assert_eq!(lost.last(), Some(1.5));
    }

    #[test]
    fn a_refusal_code_is_said_in_words_from_the_state_now() {
        let mut s = selected(LinkState::Live);
        let failed = Outcome::Failed("TRANSITION_FAILED".into());
        assert_eq!(outcome_text(&failed, &s), "failed: no control");
        s.apply_arm(&ArmFact::Control {
            t: 0.0,
            state: ControlState::Held { authority: 1 },
        });
        assert_eq!(
            outcome_text(&failed, &s),
            "failed: the arm refused the pose"
        );
        s.apply_arm(&ArmFact::Status {
            t: 0.0,
            state: ManagementState::Emergency,
        });
        assert_eq!(outcome_text(&failed, &s), "failed: the arm is in EMERGENCY");
        assert_eq!(
            outcome_text(&Outcome::Rejected("control is held by 1.1.2".into()), &s),
            "refused: control is held by 1.1.2"
        );
    }
}
