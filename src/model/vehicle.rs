//! Every manipulator of a session: one [`Session`] (state and histories) per arm, so nothing
//! of one arm shows under another, and the facts of the network beside them.
//!
//! Routing, one rule per kind of update, decided by the type (see [`Update`]; the matches
//! below name every kind, so a new one does not compile until it is routed):
//! - [`Update::Arm`] goes to its arm's session, created on first sight (at most
//!   [`MAX_ARMS`]; facts of further arms are counted in [`Vehicle::refused_arms`], not kept);
//! - [`NetFact::Selected`] names the focused arm (where live commands go, what the gauges
//!   show by default);
//! - every other [`NetFact`] (components, counters, identity, errors, marks, outcomes that
//!   name no arm) is news for every arm: applied to the network's own session and to every
//!   arm's.
//!
//! A new arm's session starts from what the network already knows (components, identity,
//! counters), applied through the same [`Session::apply_net`] as every later fact.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::events::{self, Note};
use super::session::{Mark, Session};
use super::state::ArmState;
use super::update::{ArmFact, ComponentId, MAX_ARMS, MarkKind, NetFact, Remark, Update};

/// What a [`Vehicle`] keeps per arm: a [`Session`] (state and histories, the UI and replay)
/// or only the latest [`ArmState`] (the headless tools, which run for hours and draw no
/// history). Both take updates through their one `apply`.
pub trait ArmStore {
    /// An empty store.
    fn empty() -> Self;
    /// Applies a fact about the store's arm.
    fn apply_arm(&mut self, fact: &ArmFact);
    /// Applies a fact of the network.
    fn apply_net(&mut self, fact: &NetFact);
    /// The state after every update applied.
    fn state(&self) -> &ArmState;
    /// The force threshold crossings are marked against (stores without marks ignore it).
    fn set_force_threshold(&mut self, _threshold: Option<f64>) {}
    /// The marks of the vehicle a new arm's session starts with (notes, recording start and
    /// stop); stores without marks have none.
    fn marks(&self) -> Vec<Mark> {
        Vec::new()
    }
    /// Sets the bytes the store may hold (stores without history ignore it).
    fn set_memory_budget(&mut self, _bytes: Option<usize>) {}
    /// Bytes held (stores without history count none).
    fn memory_bytes(&self) -> usize {
        0
    }
}

impl ArmStore for Session {
    fn empty() -> Self {
        Session::new()
    }
    fn apply_arm(&mut self, fact: &ArmFact) {
        Session::apply_arm(self, fact);
    }
    fn apply_net(&mut self, fact: &NetFact) {
        Session::apply_net(self, fact);
    }
    fn state(&self) -> &ArmState {
        &self.latest
    }
    fn set_force_threshold(&mut self, threshold: Option<f64>) {
        Session::set_force_threshold(self, threshold);
    }
    fn marks(&self) -> Vec<Mark> {
        self.marks
            .iter()
            .filter(|m| VEHICLE_MARKS.contains(&m.kind))
            .cloned()
            .collect()
    }
    fn set_memory_budget(&mut self, bytes: Option<usize>) {
        Session::set_memory_budget(self, bytes);
    }
    fn memory_bytes(&self) -> usize {
        Session::memory_bytes(self)
    }
}

/// Kinds of mark that are facts of the vehicle, not of one arm: given to every arm's session,
/// also to arms seen after them.
pub const VEHICLE_MARKS: [MarkKind; 2] = [MarkKind::Note, MarkKind::Recording];

impl ArmStore for ArmState {
    fn empty() -> Self {
        ArmState::default()
    }
    fn apply_arm(&mut self, fact: &ArmFact) {
        ArmState::apply_arm(self, fact);
    }
    fn apply_net(&mut self, fact: &NetFact) {
        ArmState::apply_net(self, fact);
    }
    fn state(&self) -> &ArmState {
        self
    }
}

/// A vehicle shared between a loader or the live intake (appending) and the UI (drawing).
pub type SharedVehicle = Arc<RwLock<Vehicle>>;

/// The sessions of every manipulator seen, and of the network.
#[derive(Debug, Clone)]
pub struct Vehicle<S = Session> {
    /// One session per arm, by ID.
    arms: BTreeMap<ComponentId, S>,
    /// Facts of the network only: what a new arm's session starts from, and what shows
    /// while no arm is known.
    network: S,
    /// The arm last named by [`NetFact::Selected`].
    focused: Option<ComponentId>,
    /// Updates about arms past [`MAX_ARMS`], not kept.
    refused_arms: u64,
    /// The force threshold every arm's crossings are marked against, N.
    force_threshold: Option<f64>,
    /// Bytes every session together may hold (`None`: every sample kept).
    budget: Option<usize>,
    /// Bytes set aside for the network's session at the last split of the budget.
    network_allowance: usize,
    /// Updates applied to the network's session since its size was last checked.
    network_updates: u32,
}

impl<S: ArmStore> Default for Vehicle<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: ArmStore> Vehicle<S> {
    /// No arm yet.
    pub fn new() -> Self {
        Self {
            arms: BTreeMap::new(),
            network: S::empty(),
            focused: None,
            refused_arms: 0,
            force_threshold: None,
            budget: None,
            network_allowance: 0,
            network_updates: 0,
        }
    }

    /// Applies one update to the sessions it concerns (see the module's routing rules).
    pub fn apply(&mut self, u: &Update) {
        match u {
            Update::Arm { arm, fact } => {
                if let Some(s) = self.arm_session(*arm, fact.t()) {
                    s.apply_arm(fact);
                }
            }
            Update::Net(fact) => self.apply_net(fact),
        }
    }

    /// Applies a fact of the network: the focus, or news for every arm.
    fn apply_net(&mut self, fact: &NetFact) {
        match fact {
            NetFact::Selected { t, id } => {
                self.focused = Some(*id);
                self.network.apply_net(fact);
                if let Some(s) = self.arm_session(*id, *t) {
                    s.apply_net(fact);
                }
            }
            NetFact::Component { .. }
            | NetFact::ComponentLost { .. }
            | NetFact::Identity { .. }
            | NetFact::Stats { .. }
            | NetFact::Remark(_) => {
                self.network.apply_net(fact);
                for s in self.arms.values_mut() {
                    s.apply_net(fact);
                }
                self.network_grew();
            }
        }
    }

    /// Every 256 updates of the network's own session: shares the budget out again when that
    /// session outgrew what was set aside for it (it has no samples, only facts: it grows
    /// slowly).
    fn network_grew(&mut self) {
        if self.budget.is_none() {
            return;
        }
        self.network_updates += 1;
        if self.network_updates >= 256 {
            self.network_updates = 0;
            if self.network.memory_bytes() > self.network_allowance {
                self.split_budget();
            }
        }
    }

    /// Shares the budget out: the network's session keeps what it holds plus 256 KiB to grow
    /// into, every arm the same share of the rest (an arm added later gets its share, the
    /// others give theirs up at once).
    fn split_budget(&mut self) {
        let Some(budget) = self.budget else { return };
        self.network_allowance = self.network.memory_bytes() + 256 * 1024;
        let share = budget.saturating_sub(self.network_allowance) / self.arms.len().max(1);
        for s in self.arms.values_mut() {
            s.set_memory_budget(Some(share));
        }
    }

    /// The session of `arm`, created at `t` from the network's facts on first sight; `None`
    /// (and counted) past [`MAX_ARMS`].
    fn arm_session(&mut self, arm: ComponentId, t: f64) -> Option<&mut S> {
        if !self.arms.contains_key(&arm) {
            if self.arms.len() >= MAX_ARMS {
                self.refused_arms += 1;
                return None;
            }
            let mut s = S::empty();
            s.set_force_threshold(self.force_threshold);
            let known = self.network.state();
            for (info, lost) in known.components.values() {
                s.apply_net(&NetFact::Component {
                    t,
                    info: info.clone(),
                });
                if *lost {
                    s.apply_net(&NetFact::ComponentLost {
                        t,
                        id: info.id,
                        lost: true,
                    });
                }
            }
            if let Some(id) = known.ocu_id {
                s.apply_net(&NetFact::Identity {
                    t,
                    id,
                    conflict: known.id_conflict.clone(),
                    suspect: known.id_suspect.clone(),
                });
            }
            s.apply_net(&NetFact::Stats {
                t,
                stats: Box::new(known.stats),
            });
            // The arm's own state names it (`ArmState::selected`) from the start.
            s.apply_net(&NetFact::Selected { t, id: arm });
            // Facts of the vehicle written before the arm was seen (notes, recording start):
            // every arm's timeline and log has them.
            for m in self.network.marks() {
                s.apply_net(&NetFact::Remark(Remark::Mark {
                    t: m.t,
                    kind: m.kind,
                    label: m.label.clone(),
                }));
            }
            self.arms.insert(arm, s);
            self.split_budget();
        }
        self.arms.get_mut(&arm)
    }

    /// The arm last named by [`NetFact::Selected`].
    pub fn focused_id(&self) -> Option<ComponentId> {
        self.focused
    }

    /// The focused arm's session; the network's while no arm is focused.
    pub fn focused(&self) -> &S {
        self.focused
            .and_then(|id| self.arms.get(&id))
            .unwrap_or(&self.network)
    }

    /// The session of `id`, else the focused one ([`Vehicle::focused`]): what a view that
    /// picked an arm of its own draws.
    pub fn arm_or_focused(&self, id: Option<ComponentId>) -> &S {
        id.and_then(|id| self.arms.get(&id))
            .unwrap_or_else(|| self.focused())
    }

    /// The session of one arm.
    pub fn arm(&self, id: ComponentId) -> Option<&S> {
        self.arms.get(&id)
    }

    /// Every arm's session, by ID.
    pub fn arms(&self) -> impl Iterator<Item = (ComponentId, &S)> {
        self.arms.iter().map(|(id, s)| (*id, s))
    }

    /// How many arms have a session.
    pub fn arm_count(&self) -> usize {
        self.arms.len()
    }

    /// The network's own session (facts of no arm).
    pub fn network(&self) -> &S {
        &self.network
    }

    /// Updates about arms past [`MAX_ARMS`], not kept.
    pub fn refused_arms(&self) -> u64 {
        self.refused_arms
    }
}

impl Vehicle<Session> {
    /// First and last update times of any arm or the network.
    pub fn span(&self) -> Option<(f64, f64)> {
        self.arms
            .values()
            .chain(std::iter::once(&self.network))
            .filter_map(Session::span)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// Sets every arm's force threshold ([`Session::set_force_threshold`]), and new arms'.
    pub fn set_force_threshold(&mut self, threshold: Option<f64>) {
        self.force_threshold = threshold;
        self.network.set_force_threshold(threshold);
        for s in self.arms.values_mut() {
            s.set_force_threshold(threshold);
        }
    }

    /// The force threshold crossings are marked against.
    pub fn force_threshold(&self) -> Option<f64> {
        self.network.force_threshold()
    }

    /// [`Session::reserve_for_rest`] for every arm.
    pub fn reserve_for_rest(&mut self, seen: u64, total: u64) {
        for s in self.arms.values_mut() {
            s.reserve_for_rest(seen, total);
        }
    }

    /// [`Session::trim_reserve`] for every arm.
    pub fn trim_reserve(&mut self) {
        for s in self.arms.values_mut() {
            s.trim_reserve();
        }
    }

    /// Samples refused as older than their signal's last, over every arm.
    pub fn refused_samples(&self) -> u64 {
        self.arms.values().map(Session::refused_samples).sum()
    }

    /// Discrete updates kept, over every arm and the network.
    pub fn discrete_updates(&self) -> usize {
        self.arms
            .values()
            .chain(std::iter::once(&self.network))
            .map(Session::discrete_updates)
            .sum()
    }

    /// The operator's notes, oldest first (the network's session has every one).
    pub fn notes(&self) -> Vec<Note> {
        events::notes(&self.network)
    }

    /// Adds `note` to every arm's timeline and log, unless a note with the same time and
    /// text is there already (a sidecar saved from a replay also holds the recording's own
    /// notes); `true` when added.
    pub fn add_note(&mut self, note: &Note) -> bool {
        let label = note.label();
        let twin =
            self.network.marks.iter().any(|m| {
                m.kind == MarkKind::Note && m.label == label && (m.t - note.t).abs() < 1e-6
            });
        if twin {
            return false;
        }
        self.apply(&note.update());
        true
    }

    /// Sets the bytes every session together may hold (`None`: keep every sample, the
    /// default): the network's session keeps what it holds plus room to grow, each arm gets an
    /// equal share of the rest ([`Session::set_memory_budget`]; arms seen later get theirs
    /// and the others give up theirs).
    pub fn set_memory_budget(&mut self, bytes: Option<usize>) {
        self.budget = bytes;
        match bytes {
            Some(_) => self.split_budget(),
            None => {
                for s in self.arms.values_mut() {
                    s.set_memory_budget(None);
                }
            }
        }
    }

    /// The bytes every session together may hold (`None`: no budget).
    pub fn memory_budget(&self) -> Option<usize> {
        self.budget
    }

    /// The time before which samples of some signal of some arm are held only as an
    /// envelope ([`Session::envelope_before`]); `None` when every sample is exact.
    pub fn envelope_before(&self) -> Option<f64> {
        self.arms
            .values()
            .filter_map(Session::envelope_before)
            .max_by(f64::total_cmp)
    }

    /// Bytes held by every session.
    pub fn memory_bytes(&self) -> usize {
        self.arms
            .values()
            .chain(std::iter::once(&self.network))
            .map(Session::memory_bytes)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: u8) -> ComponentId {
        ComponentId::new(126, 1, c)
    }

    fn positions(t: f64, v: f64) -> ArmFact {
        ArmFact::JointPositions {
            t,
            values: vec![v, v],
        }
    }

    #[test]
    fn each_arm_keeps_its_own_samples() {
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::arm(id(10), positions(1.0, 0.1)));
        v.apply(&Update::arm(id(11), positions(1.5, 0.2)));
        v.apply(&Update::arm(id(10), positions(2.0, 0.3)));
        assert_eq!(v.arm_count(), 2);
        assert_eq!(v.arm(id(10)).unwrap().positions.len(), 2);
        assert_eq!(v.arm(id(11)).unwrap().positions.len(), 1);
        let s11 = v.arm(id(11)).unwrap().state_at(5.0);
        assert_eq!(s11.selected, Some(id(11)));
        assert!((s11.positions.unwrap().value[0] - 0.2).abs() < 1e-6);
        assert_eq!(v.span(), Some((1.0, 2.0)));
    }

    #[test]
    fn arm_facts_go_to_their_arm_and_news_to_every_arm() {
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::net(NetFact::Selected { t: 0.0, id: id(10) }));
        v.apply(&Update::arm(id(10), positions(1.0, 0.1)));
        v.apply(&Update::arm(id(11), positions(1.0, 0.2)));
        v.apply(&Update::net(Remark::Error {
            t: 2.0,
            message: "socket closed".into(),
        }));
        assert_eq!(v.focused_id(), Some(id(10)));
        assert_eq!(v.focused().positions.len(), 1);
        for (_, s) in v.arms() {
            assert_eq!(s.latest.errors.len(), 1);
        }
        assert!(v.network().positions.is_empty());
    }

    #[test]
    fn a_new_arm_starts_from_what_the_network_knows() {
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::net(NetFact::Identity {
            t: 0.0,
            id: ComponentId::new(200, 4, 1),
            conflict: None,
            suspect: None,
        }));
        v.apply(&Update::arm(id(10), positions(1.0, 0.1)));
        let s = v.arm(id(10)).unwrap();
        assert_eq!(s.latest.ocu_id, Some(ComponentId::new(200, 4, 1)));
        assert_eq!(s.latest.selected, Some(id(10)));
    }

    #[test]
    fn notes_reach_every_arm_also_arms_seen_later_and_are_added_once() {
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::arm(id(10), positions(1.0, 0.1)));
        let note = Note::new(2.0, "valve opened", Some(id(10)));
        assert!(v.add_note(&note));
        assert!(!v.add_note(&note), "the same note twice is kept once");
        v.apply(&Update::arm(id(11), positions(3.0, 0.2)));
        for arm in [10, 11] {
            let notes = events::notes(v.arm(id(arm)).unwrap());
            assert_eq!(notes.len(), 1, "arm {arm}");
            assert_eq!(notes[0].text, "valve opened");
        }
        assert_eq!(v.notes().len(), 1);
    }

    #[test]
    fn arms_past_the_bound_are_counted_not_kept() {
        let mut v: Vehicle = Vehicle::new();
        for c in 0..=u8::try_from(MAX_ARMS).unwrap() {
            v.apply(&Update::arm(id(c + 1), positions(1.0, 0.0)));
        }
        assert_eq!(v.arm_count(), MAX_ARMS);
        assert_eq!(v.refused_arms(), 1);
    }

    #[test]
    fn the_budget_is_shared_by_every_arm_also_arms_seen_later() {
        let budget = 3 << 20;
        let mut v: Vehicle = Vehicle::new();
        v.set_memory_budget(Some(budget));
        assert_eq!(v.memory_budget(), Some(budget));
        let sample = |t: f64| ArmFact::JointPositions {
            t,
            values: vec![t.sin(); 7],
        };
        for i in 0..240_000 {
            let t = f64::from(i) * 0.001;
            v.apply(&Update::arm(id(10), sample(t)));
            if i >= 120_000 {
                v.apply(&Update::arm(id(11), sample(t)));
            }
            if i % 1000 == 0 {
                v.apply(&Update::net(Remark::Error {
                    t,
                    message: "news for every arm".into(),
                }));
            }
            assert!(v.memory_bytes() <= budget, "{} at {i}", v.memory_bytes());
        }
        let first = v.arm(id(10)).unwrap();
        let second = v.arm(id(11)).unwrap();
        assert_eq!(first.positions.len(), 240_000);
        assert_eq!(second.positions.len(), 120_000);
        let share = first.memory_budget().unwrap();
        assert_eq!(second.memory_budget(), Some(share));
        assert!(share < budget / 2);
        let before = v.envelope_before().unwrap();
        assert_eq!(
            before,
            first
                .envelope_before()
                .unwrap()
                .max(second.envelope_before().unwrap_or(0.0))
        );
        v.set_memory_budget(None);
        assert_eq!(v.arm(id(10)).unwrap().memory_budget(), None);
    }

    // The routing of every kind of fact, by its type. `arm_kind` and `net_kind` name every
    // variant (no `_`): a new kind does not compile here until it is named, and then fails
    // `every_kind_is_routed_*` until a sample of it is listed.

    use crate::model::arm::{ArmSpec, Joint};
    use crate::model::command::CommandKind;
    use crate::model::update::{
        ComponentInfo, ControlLoss, ControlState, Controller, Delivery, LinkState, ManagementState,
        NetStats, Outcome, PoseState, PresetInfo, Signal,
    };
    use std::collections::BTreeSet;

    fn remark_kind(r: &Remark) -> &'static str {
        match r {
            Remark::CommandOutcome { .. } => "CommandOutcome",
            Remark::Mark { .. } => "Mark",
            Remark::Error { .. } => "Error",
        }
    }

    fn arm_kind(f: &ArmFact) -> &'static str {
        match f {
            ArmFact::Link { .. } => "Link",
            ArmFact::Specification { .. } => "Specification",
            ArmFact::ToolOffset { .. } => "ToolOffset",
            ArmFact::Presets { .. } => "Presets",
            ArmFact::JointPositions { .. } => "JointPositions",
            ArmFact::JointVelocities { .. } => "JointVelocities",
            ArmFact::JointEfforts { .. } => "JointEfforts",
            ArmFact::JointForceTorques { .. } => "JointForceTorques",
            ArmFact::ForceTorque { .. } => "ForceTorque",
            ArmFact::CurrentPose { .. } => "CurrentPose",
            ArmFact::Status { .. } => "Status",
            ArmFact::Control { .. } => "Control",
            ArmFact::Controller { .. } => "Controller",
            ArmFact::ControlLost { .. } => "ControlLost",
            ArmFact::Stale { .. } => "Stale",
            ArmFact::Delivery { .. } => "Delivery",
            ArmFact::Jog { .. } => "Jog",
            ArmFact::Stop { .. } => "Stop",
            ArmFact::Address { .. } => "Address",
            ArmFact::Remark(r) => remark_kind(r),
        }
    }

    fn net_kind(f: &NetFact) -> &'static str {
        match f {
            NetFact::Component { .. } => "Component",
            NetFact::ComponentLost { .. } => "ComponentLost",
            NetFact::Selected { .. } => "Selected",
            NetFact::Identity { .. } => "Identity",
            NetFact::Stats { .. } => "Stats",
            NetFact::Remark(r) => remark_kind(r),
        }
    }

    /// Said about an arm or the network alike.
    fn remarks(t: f64) -> [Remark; 3] {
        [
            Remark::CommandOutcome {
                t,
                command: CommandKind::Resume,
                outcome: Outcome::Rejected("not held".into()),
            },
            Remark::Mark {
                t,
                kind: MarkKind::Gap,
                label: "no traffic for 5 s".into(),
            },
            Remark::Error {
                t,
                message: "something went wrong".into(),
            },
        ]
    }

    /// One fact of every kind about an arm (none of them what an empty state holds).
    fn every_arm_fact(t: f64) -> Vec<ArmFact> {
        let values = vec![0.1, 0.2];
        let mut facts = vec![
            ArmFact::Link {
                t,
                state: LinkState::Lost,
            },
            ArmFact::Specification {
                t,
                spec: ArmSpec {
                    mount: None,
                    joints: vec![Joint::revolute(0.5, 0.0, 0.0); 2],
                },
            },
            ArmFact::ToolOffset {
                t,
                point: [0.0, 0.0, 0.1],
            },
            ArmFact::Presets {
                t,
                presets: vec![PresetInfo {
                    id: 1,
                    name: "home".into(),
                    positions: None,
                }],
            },
            ArmFact::JointPositions {
                t,
                values: values.clone(),
            },
            ArmFact::JointVelocities {
                t,
                values: values.clone(),
            },
            ArmFact::JointEfforts {
                t,
                values: values.clone(),
            },
            ArmFact::JointForceTorques { t, values },
            ArmFact::ForceTorque {
                t,
                force: [Some(1.0); 3],
                torque: [None; 3],
            },
            ArmFact::CurrentPose {
                t,
                pose: PoseState::At(1),
            },
            ArmFact::Status {
                t,
                state: ManagementState::Emergency,
            },
            ArmFact::Control {
                t,
                state: ControlState::Requested,
            },
            ArmFact::Controller {
                t,
                controller: Controller {
                    id: Some(ComponentId::new(200, 7, 3)),
                    authority: 200,
                },
            },
            ArmFact::ControlLost {
                t,
                reason: ControlLoss::TimedOut,
            },
            ArmFact::Stale {
                t,
                signal: Signal::JointPositions,
                stale: true,
            },
            ArmFact::Delivery {
                t,
                signal: Signal::JointPositions,
                delivery: Delivery::Polling(10.0),
            },
            ArmFact::Jog {
                t,
                status: Box::new(crate::model::jog::JogStatus {
                    moving: true,
                    ..Default::default()
                }),
            },
        ];
        facts.extend(remarks(t).map(ArmFact::Remark));
        facts
    }

    /// One fact of every kind of the network (`Selected` names `selected`).
    fn every_net_fact(t: f64, selected: ComponentId) -> Vec<NetFact> {
        let mut facts = vec![
            NetFact::Component {
                t,
                info: ComponentInfo {
                    id: ComponentId::new(126, 1, 30),
                    address: "127.0.0.1:3794".parse().unwrap(),
                    identification: Some("camera".into()),
                    services: Vec::new(),
                    manipulator: false,
                },
            },
            NetFact::ComponentLost {
                t,
                id: ComponentId::new(126, 1, 30),
                lost: true,
            },
            NetFact::Selected { t, id: selected },
            NetFact::Identity {
                t,
                id: ComponentId::new(200, 4, 1),
                conflict: None,
                suspect: None,
            },
            NetFact::Stats {
                t,
                stats: Box::new(NetStats {
                    datagrams: 7,
                    ..NetStats::default()
                }),
            },
        ];
        facts.extend(remarks(t).map(NetFact::Remark));
        facts
    }

    /// What a session holds: discrete facts, marks, samples, and its latest state in words.
    fn footprint(s: &Session) -> (usize, usize, usize, String) {
        let samples = s.positions.len()
            + s.velocities.len()
            + s.efforts.len()
            + s.joint_force_torques.len()
            + s.ft.len();
        (
            s.discrete_updates(),
            s.marks.len(),
            samples,
            format!("{:?}", s.latest),
        )
    }

    /// Arms 10 (focused) and 11 known, each with a sample, and the network's session.
    fn two_arm_vehicle() -> Vehicle {
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::net(NetFact::Selected { t: 0.0, id: id(10) }));
        v.apply(&Update::arm(id(10), positions(0.5, 0.0)));
        v.apply(&Update::arm(id(11), positions(0.5, 0.0)));
        v
    }

    #[test]
    fn every_kind_is_routed_a_fact_about_an_arm_to_that_arm_alone() {
        let kinds: BTreeSet<&str> = every_arm_fact(1.0).iter().map(arm_kind).collect();
        assert_eq!(kinds.len(), every_arm_fact(1.0).len(), "one sample of each");
        assert_eq!(
            kinds.len(),
            20,
            "every kind of ArmFact has a sample: {kinds:?}"
        );
        for fact in every_arm_fact(1.0) {
            let kind = arm_kind(&fact);
            let mut v = two_arm_vehicle();
            let (a, b, net) = (
                footprint(v.arm(id(10)).unwrap()),
                footprint(v.arm(id(11)).unwrap()),
                footprint(v.network()),
            );
            v.apply(&Update::arm(id(11), fact));
            assert_eq!(v.arm_count(), 2, "{kind}");
            assert_ne!(
                footprint(v.arm(id(11)).unwrap()),
                b,
                "{kind}: its arm has it"
            );
            assert_eq!(
                footprint(v.arm(id(10)).unwrap()),
                a,
                "{kind}: not another arm"
            );
            assert_eq!(footprint(v.network()), net, "{kind}: not the network's");
            assert_eq!(v.focused_id(), Some(id(10)), "{kind}: the focus stays");
        }
    }

    #[test]
    fn every_kind_is_routed_a_fact_of_the_network_to_the_network_and_every_arm() {
        let kinds: BTreeSet<&str> = every_net_fact(1.0, id(11)).iter().map(net_kind).collect();
        assert_eq!(kinds.len(), every_net_fact(1.0, id(11)).len());
        assert_eq!(
            kinds.len(),
            8,
            "every kind of NetFact has a sample: {kinds:?}"
        );
        for fact in every_net_fact(1.0, id(11)) {
            let kind = net_kind(&fact);
            let selects = matches!(fact, NetFact::Selected { .. });
            let mut v = two_arm_vehicle();
            let (a, b, net) = (
                footprint(v.arm(id(10)).unwrap()),
                footprint(v.arm(id(11)).unwrap()),
                footprint(v.network()),
            );
            v.apply(&Update::net(fact));
            assert_eq!(v.arm_count(), 2, "{kind}");
            assert_ne!(footprint(v.network()), net, "{kind}: the network's");
            assert_ne!(footprint(v.arm(id(11)).unwrap()), b, "{kind}: arm 11's");
            if selects {
                // The focus: the network's and the arm it names, no other.
                assert_eq!(footprint(v.arm(id(10)).unwrap()), a, "{kind}");
                assert_eq!(v.focused_id(), Some(id(11)));
            } else {
                // News for every arm.
                assert_ne!(footprint(v.arm(id(10)).unwrap()), a, "{kind}: arm 10's");
                assert_eq!(v.focused_id(), Some(id(10)), "{kind}: the focus stays");
            }
        }
    }

    #[test]
    fn only_samples_of_an_arm_coalesce_keyed_by_their_arm() {
        for fact in every_arm_fact(1.0) {
            let signal = fact.signal();
            let u = Update::arm(id(11), fact);
            assert_eq!(u.coalesce_key(), signal.map(|s| (id(11), s)));
        }
        let samples = every_arm_fact(1.0)
            .iter()
            .filter(|f| f.signal().is_some())
            .count();
        assert_eq!(samples, 5, "positions, velocities, efforts, joint F/T, F/T");
        for fact in every_net_fact(1.0, id(11)) {
            assert_eq!(Update::net(fact).coalesce_key(), None);
        }
    }
}
