//! The facts with their time history: what live mode accumulates and replay loads. The UI
//! draws "the state at time t" from here: live, t follows now; replay moves t.
//!
//! Two kinds of update are kept differently:
//! - samples (joint positions, velocities, efforts, joint and end-effector force/torque) go
//!   into one [`History`] per signal: a time column and `f32` channels, so an hour at 1 kHz
//!   costs tens of bytes per sample, and the value at any time is a binary search away;
//! - everything else ("discrete" updates: selection, specification, status, control, ...) is
//!   appended to a log, with a checkpoint of the [`ArmState`] every [`CHECKPOINT_EVERY`]
//!   discrete updates, so [`Session::state_at`] clones the nearest checkpoint and applies at
//!   most that many updates, however long the session.
//!
//! Discrete updates take effect in arrival order: one stamped earlier than its predecessor
//! (a late error, say) is indexed at its predecessor's time, so the log stays sorted and
//! `state_at` agrees with what live mode showed. Samples older than the last one of their
//! signal are refused (and counted, [`Session::refused_samples`]).
//!
//! Timeline marks are derived from state changes (control, status, emergency, preset
//! transitions, link lost, staleness) and taken from explicit [`Remark::Mark`]s. An explicit
//! mark describes the same change better (who sent the command, how long the gap was), so an
//! explicit mark and a derived one of the same kind at the same time are kept once, with the
//! explicit label.

use std::fmt::Write as _;

use super::arm::{ArmSpec, Joint};
use super::command::CommandKind;
use super::history::History;
use super::state::{ArmState, Stamped, outcome_text};
use super::update::{
    ArmFact, ComponentId, ComponentInfo, ControlLoss, ControlState, LinkState, ManagementState,
    MarkKind, NetFact, NetStats, Outcome, PoseState, PresetInfo, Remark, Signal,
};

/// Force/torque channels of [`Session::ft`].
pub const FT_CHANNELS: [&str; 7] = ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz", "|F|"];

/// Discrete updates between two [`ArmState`] checkpoints: `state_at` applies at most this many.
pub const CHECKPOINT_EVERY: usize = 256;

/// A stale signal that is fresh again for less than this long and goes stale again
/// continues the same episode (one mark), s. Under heavy loss a signal flips between stale
/// and fresh many times a minute; a mark per flip buried every other mark.
pub const EPISODE_MERGE_S: f64 = 2.0;

/// |F| must fall this far below the threshold (fraction of it) before a new crossing
/// counts: noise around the threshold is one episode, not hundreds.
pub const THRESHOLD_HYSTERESIS: f64 = 0.05;

/// A point of interest on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Time, s since the session started.
    pub t: f64,
    /// What about.
    pub kind: MarkKind,
    /// What happened.
    pub label: String,
    /// For a mark that opens an episode (a signal stale, |F| above the threshold): when it
    /// ended, `None` while it lasts (and for marks of a moment).
    pub end: Option<f64>,
    /// How many times the episode started (flips closer than [`EPISODE_MERGE_S`] are merged
    /// into one mark); 1 for a mark of a moment.
    pub times: u32,
}

impl Mark {
    /// A mark of a moment.
    pub fn new(t: f64, kind: MarkKind, label: impl Into<String>) -> Self {
        Self {
            t,
            kind,
            label: label.into(),
            end: None,
            times: 1,
        }
    }

    /// The label with the episode's duration and repeats, for tooltips.
    pub fn describe(&self) -> String {
        let mut text = self.label.clone();
        if let Some(end) = self.end {
            let _ = write!(text, " for {:.1} s", end - self.t);
        } else if matches!(self.kind, MarkKind::Stale | MarkKind::Threshold) {
            text.push_str(" (still)");
        }
        if self.times > 1 {
            let _ = write!(text, " ({} times)", self.times);
        }
        text
    }
}

/// Which episode a mark opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Episode {
    Stale(Signal),
    Threshold,
}

/// The newest episode of one kind: its mark's time and when it ended (`None`: open).
#[derive(Debug, Clone, Copy, PartialEq)]
struct EpisodeState {
    start: f64,
    end: Option<f64>,
}

/// The sampled signals, in the order of `Session::sampled`.
const SAMPLED: [Signal; 5] = [
    Signal::JointPositions,
    Signal::JointVelocities,
    Signal::JointEfforts,
    Signal::JointForceTorques,
    Signal::EndEffectorForceTorque,
];

/// Most samples [`Session::reserve_for_rest`] reserves per history: 2^26, 18.6 hours at
/// 1 kHz (a longer file grows its histories as it loads).
pub const MAX_RESERVED_SAMPLES: usize = 1 << 26;

/// Index of a sampled signal in [`SAMPLED`].
fn slot_of(signal: Signal) -> Option<usize> {
    SAMPLED.iter().position(|s| *s == signal)
}

/// Every update of a session, kept so that the state at any time can be rebuilt.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The state after every update applied so far (what live mode shows at "now").
    pub latest: ArmState,
    /// Joint positions, one channel per joint (rad or m).
    pub positions: History,
    /// Joint velocities, one channel per joint.
    pub velocities: History,
    /// Joint efforts, one channel per joint (percent).
    pub efforts: History,
    /// Joint torques/forces, one channel per joint.
    pub joint_force_torques: History,
    /// End-effector force/torque, channels [`FT_CHANNELS`] (absent parts NaN).
    pub ft: History,
    /// Timeline marks, in time order.
    pub marks: Vec<Mark>,
    /// Whether `marks[i]` was derived from a state change (else explicit).
    derived: Vec<bool>,
    /// Discrete updates in arrival order, with their (non-decreasing) index times.
    log: Vec<Logged>,
    log_t: Vec<f64>,
    /// `checkpoints[k]` = the discrete state after the first `(k + 1) * CHECKPOINT_EVERY`
    /// updates of the log (sampled fields empty).
    checkpoints: Vec<ArmState>,
    /// The discrete state after the whole log (what marks are derived against).
    discrete: ArmState,
    /// Index times of the selection changes (samples before one belong to another arm).
    selections: Vec<f64>,
    /// Histories replaced because the number of channels changed, per signal, oldest first.
    retired: [Vec<History>; 5],
    /// Whether a `CurrentPose` has been applied (the first says where the arm starts: no mark).
    pose_seen: bool,
    /// Control we held is gone and the reason (`ControlLost`) has not come yet: the log says
    /// the loss once, with its reason ("control taken by 200.7.3 (authority 200)"), not
    /// "control released" and "held by …" before it.
    loss_unexplained: bool,
    /// Samples refused because they were older than the last of their signal.
    refused: u64,
    /// First and last update times.
    span: Option<(f64, f64)>,
    /// The newest episode per kind (stale signals, |F| above the threshold).
    episodes: std::collections::BTreeMap<Episode, EpisodeState>,
    /// The force threshold crossings are marked against, N.
    force_threshold: Option<f64>,
    /// Bytes the session may hold (`None`: every sample kept).
    budget: Option<usize>,
    /// Heap bytes of the log's updates and of the checkpoints, added up as they are kept
    /// (counting the whole log on every [`Session::memory_bytes`] would cost a scan of it).
    log_heap: usize,
    checkpoint_heap: usize,
}

/// How long after control went its reason (`ControlLost`) may come and still rename the
/// "control released" mark, s (the client waits up to a second for the arm's `ReportControl`).
const LOSS_REASON_WAIT: f64 = 2.0;

/// The marks of the events the log tells beside the timeline's classic ones: the link live
/// (again) and who holds control (`before`: the discrete state before `fact`).
fn event_mark(before: &ArmState, fact: &ArmFact) -> Option<(f64, MarkKind, String)> {
    match fact {
        // The end of a lost link completes the story the log tells ("link lost" is the gap's
        // mark; the first "live" is the start of every session, not news). A kind of its own
        // (the network's), so the gap marks stay one per gap.
        ArmFact::Link {
            t,
            state: LinkState::Live,
        } if before.link == LinkState::Lost => {
            Some((*t, MarkKind::Network, "link live again".to_string()))
        }
        ArmFact::Controller { t, controller } if before.controller != Some(*controller) => Some((
            *t,
            MarkKind::Control,
            match controller.id {
                Some(_) => format!("control held by {controller}"),
                None => "control free".to_string(),
            },
        )),
        _ => None,
    }
}

/// The mark of what is said (about the arm or the network alike): a preset move's outcome
/// as a transition, every other command's outcome in words as the status bar words it, an
/// error. Explicit marks are not derived ([`Session::apply_arm`] keeps them as they come).
fn remark_mark(before: &ArmState, r: &Remark) -> Option<(f64, MarkKind, String)> {
    match r {
        Remark::CommandOutcome {
            t,
            command: CommandKind::GoToPreset,
            outcome,
        } => Some((
            *t,
            MarkKind::Transition,
            match outcome {
                Outcome::Completed => "transition completed".to_string(),
                Outcome::Failed(why) => format!("transition failed: {why}"),
                Outcome::TimedOut => "transition timed out".to_string(),
                Outcome::Rejected(why) => format!("go to preset refused: {why}"),
                Outcome::Confirmed => "go to preset confirmed".to_string(),
                no_answer @ Outcome::NoAnswer { .. } => format!("go to preset: {no_answer}"),
            },
        )),
        Remark::CommandOutcome {
            t,
            command,
            outcome,
        } => Some((
            *t,
            MarkKind::Command,
            format!("{}: {}", command.name(), outcome_text(outcome, before)),
        )),
        Remark::Error { t, message } => Some((*t, MarkKind::Network, message.clone())),
        Remark::Mark { .. } => None,
    }
}

/// The mark of a kind of peer deviation tolerated for the first time (the counters rise with
/// every datagram: one mark per kind, not per datagram).
fn deviation_mark(before: &ArmState, t: f64, stats: &NetStats) -> Option<(f64, MarkKind, String)> {
    let was = before.stats.tolerated.named();
    let text: Vec<String> = stats
        .tolerated
        .named()
        .into_iter()
        .zip(was)
        .filter(|((_, now), (_, was))| *now > 0 && *was == 0)
        .map(|((name, _), _)| deviation_words(name).to_string())
        .collect();
    (!text.is_empty()).then(|| {
        (
            t,
            MarkKind::Network,
            format!("peer deviation tolerated: {}", text.join("; ")),
        )
    })
}

/// A discrete fact as one arm's session keeps it in its log (the arm is the session's).
#[derive(Debug, Clone)]
enum Logged {
    Arm(ArmFact),
    Net(NetFact),
}

impl Logged {
    fn apply_to(&self, s: &mut ArmState) {
        match self {
            Logged::Arm(fact) => s.apply_arm(fact),
            Logged::Net(fact) => s.apply_net(fact),
        }
    }
}

/// A tolerated peer deviation ([`super::update::Tolerated::named`]) in words.
fn deviation_words(name: &str) -> &'static str {
    match name {
        "ack_payload" => "ACK/NAK with a payload (skipped)",
        "short_emergency_code" => "emergency message with a short body",
        "wildcard_services" => "ReportServices with wildcard IDs",
        "controller_id_order" => "ReportControl controller ID in another byte order",
        _ => "another deviation",
    }
}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self {
            ft: History::new(FT_CHANNELS.len()),
            ..Self::default()
        }
    }

    fn history(&self, slot: usize) -> &History {
        match slot {
            0 => &self.positions,
            1 => &self.velocities,
            2 => &self.efforts,
            3 => &self.joint_force_torques,
            _ => &self.ft,
        }
    }

    fn history_mut(&mut self, slot: usize) -> &mut History {
        match slot {
            0 => &mut self.positions,
            1 => &mut self.velocities,
            2 => &mut self.efforts,
            3 => &mut self.joint_force_torques,
            _ => &mut self.ft,
        }
    }

    /// Every history of a signal, oldest first (retired ones, then the current one).
    fn histories(&self, slot: usize) -> impl DoubleEndedIterator<Item = &History> {
        self.retired[slot]
            .iter()
            .chain(std::iter::once(self.history(slot)))
    }

    /// A loader that has applied the first `seen` of `total` datagrams reserves room for the
    /// rest of every history at the rate seen so far, plus 1 % (a history that outgrows it
    /// grows as usual). At most [`MAX_RESERVED_SAMPLES`] per history: `total` comes from
    /// the file, which may lie.
    pub fn reserve_for_rest(&mut self, seen: u64, total: u64) {
        if seen == 0 || total <= seen {
            return;
        }
        let rest = (total - seen) as f64 / seen as f64;
        for slot in 0..SAMPLED.len() {
            let h = self.history_mut(slot);
            let more = (h.len() as f64 * rest * 1.01) as usize;
            if more > 0 {
                h.reserve(more.min(MAX_RESERVED_SAMPLES));
            }
        }
    }

    /// After a load: gives back what [`Session::reserve_for_rest`] reserved and the file did
    /// not fill.
    pub fn trim_reserve(&mut self) {
        for slot in 0..SAMPLED.len() {
            self.history_mut(slot).trim_reserve();
        }
    }

    /// Samples refused because they were older than the last sample of their signal.
    pub fn refused_samples(&self) -> u64 {
        self.refused
    }

    /// Discrete (non-sample) updates kept.
    pub fn discrete_updates(&self) -> usize {
        self.log.len()
    }

    /// Applies the discrete updates from the `from`-th on to `state` (the state after the
    /// first `from`, default for 0), calling `f` with each one's index time and the state
    /// after it; returns the number of discrete updates, the next call's `from`. What the
    /// state lanes are computed from ([`crate::model::lanes`]), a few new updates a frame.
    pub fn fold_discrete(
        &self,
        from: usize,
        state: &mut ArmState,
        mut f: impl FnMut(f64, &ArmState),
    ) -> usize {
        for (u, t) in self.log.iter().zip(&self.log_t).skip(from) {
            u.apply_to(state);
            f(*t, state);
        }
        self.log.len()
    }

    /// Applies a fact about this session's arm (the vehicle routed it here: see
    /// `model::vehicle`). Times must not go backwards; older samples are refused.
    pub fn apply_arm(&mut self, fact: &ArmFact) {
        let t = fact.t();
        if !t.is_finite() {
            return;
        }
        let mut ft = [0.0; 7];
        if let Some((slot, values)) = sample(fact, &mut ft) {
            if !self.push_sample(slot, t, values) {
                self.refused += 1;
                return;
            }
            if slot == 4 {
                self.threshold_sample(t, ft[6]);
            }
            self.latest.apply_arm(fact);
        } else if let ArmFact::Remark(r) = fact {
            self.remark(r, || Logged::Arm(fact.clone()));
        } else {
            self.derive_mark(fact);
            self.keep(t, Logged::Arm(fact.clone()));
        }
        self.widen_span(t);
    }

    /// Applies a fact of the network: news for this arm's session as for every other.
    pub fn apply_net(&mut self, fact: &NetFact) {
        let t = fact.t();
        if !t.is_finite() {
            return;
        }
        if let NetFact::Remark(r) = fact {
            self.remark(r, || Logged::Net(fact.clone()));
        } else {
            if let NetFact::Stats { t, stats } = fact
                && let Some((t, kind, label)) = deviation_mark(&self.discrete, *t, stats)
            {
                self.add_mark(t, kind, label, true);
            }
            self.keep(t, Logged::Net(fact.clone()));
        }
        self.widen_span(t);
    }

    /// What is said, about the arm or the network: an explicit mark goes on the timeline as
    /// it is; an outcome or an error is marked and kept in the log (`logged`).
    fn remark(&mut self, r: &Remark, logged: impl FnOnce() -> Logged) {
        if let Remark::Mark { t, kind, label } = r {
            self.add_mark(*t, *kind, label.clone(), false);
            return;
        }
        if let Some((t, kind, label)) = remark_mark(&self.discrete, r) {
            self.add_mark(t, kind, label, true);
        }
        self.keep(r.t(), logged());
    }

    fn widen_span(&mut self, t: f64) {
        self.span = Some(match self.span {
            Some((a, b)) => (a.min(t), b.max(t)),
            None => (t, t),
        });
    }

    /// Keeps a discrete fact at `t` in the log (with a checkpoint every
    /// [`CHECKPOINT_EVERY`]) and applies it to the discrete and latest states.
    fn keep(&mut self, t: f64, logged: Logged) {
        let index_t = self.log_t.last().map_or(t, |last| last.max(t));
        if let Logged::Net(NetFact::Selected { id, .. }) = &logged
            && self.discrete.selected != Some(*id)
        {
            self.selections.push(index_t);
        }
        logged.apply_to(&mut self.discrete);
        logged.apply_to(&mut self.latest);
        let grows = self.budget.is_some() && self.log.len() == self.log.capacity();
        if grows {
            // A quarter more, not double: the budget plans for this step.
            let more = self.log.len() / 4 + 64;
            let _ = self.log.try_reserve_exact(more);
            let _ = self.log_t.try_reserve_exact(more);
        }
        self.log_heap += logged_heap_bytes(&logged);
        self.log.push(logged);
        self.log_t.push(index_t);
        if self.log.len().is_multiple_of(CHECKPOINT_EVERY) {
            if self.budget.is_some() && self.checkpoints.len() == self.checkpoints.capacity() {
                let _ = self
                    .checkpoints
                    .try_reserve_exact(self.checkpoints.len() / 4 + 4);
            }
            let c = self.discrete.clone();
            self.checkpoint_heap += state_heap_bytes(&c);
            self.checkpoints.push(c);
        }
        if grows {
            self.rebalance();
        }
    }

    fn push_sample(&mut self, slot: usize, t: f64, values: &[f64]) -> bool {
        // Time order across retired histories too: a fresh history would accept anything.
        let last = self
            .histories(slot)
            .rev()
            .find_map(|h| h.span().map(|(_, b)| b));
        if last.is_some_and(|last| t < last) {
            return false;
        }
        let channels = if slot == 4 {
            FT_CHANNELS.len()
        } else {
            values.len()
        };
        let h = self.history_mut(slot);
        if h.channels() != channels {
            // A history has a fixed number of channels. A report with another joint count
            // comes from another arm (or a broken peer): its joints must not be drawn as
            // continuations of these, so it starts a fresh history. The old one is kept for
            // `state_at` and stepping, not for plotting.
            let mut old = std::mem::replace(h, History::new(channels));
            if !old.is_empty() {
                if self.budget.is_some() {
                    // Under a budget an old arm's samples keep their envelope, little else.
                    old.set_memory_limit(Some(0));
                }
                self.retired[slot].push(old);
            }
            self.rebalance();
        }
        if self.history(slot).needs_room() {
            self.rebalance();
        }
        self.history_mut(slot).push(t, values)
    }

    fn derive_mark(&mut self, u: &ArmFact) {
        let pose_seen = self.pose_seen;
        if matches!(u, ArmFact::CurrentPose { .. }) {
            self.pose_seen = true;
        }
        let held_before = matches!(self.discrete.control, ControlState::Held { .. });
        let loss_unexplained = self.note_loss(u, held_before);
        let before = &self.discrete;
        let mark = match u {
            // Who holds it now is said by the loss that follows ("taken by …"): another
            // named while we hold control, or after control we held went.
            ArmFact::Controller { controller, .. }
                if loss_unexplained || held_before && controller.id != before.ocu_id =>
            {
                None
            }
            ArmFact::Control { t, state } if *state != before.control => Some((
                *t,
                MarkKind::Control,
                match state {
                    ControlState::Held { authority } => {
                        format!("control granted (authority {authority})")
                    }
                    ControlState::Released => "control released".to_string(),
                    ControlState::Requested => "control requested".to_string(),
                },
            )),
            ArmFact::ControlLost { t, reason } => self.loss_mark(*t, *reason),
            ArmFact::Status { t, state } if *state != before.status => {
                Some(if *state == ManagementState::Emergency {
                    (*t, MarkKind::Emergency, "EMERGENCY".to_string())
                } else if before.status == ManagementState::Emergency {
                    (
                        *t,
                        MarkKind::Emergency,
                        format!("emergency cleared ({})", state.name()),
                    )
                } else {
                    (*t, MarkKind::Status, state.name().to_string())
                })
            }
            ArmFact::CurrentPose {
                t,
                pose: pose @ PoseState::Moving { from, to },
            } if *pose != before.pose => {
                let name = |id: u8| {
                    before
                        .presets
                        .iter()
                        .find(|p| p.id == id)
                        .map_or_else(|| format!("pose {id}"), |p| format!("{} ({id})", p.name))
                };
                Some((
                    *t,
                    MarkKind::Transition,
                    format!("moving from {} to {}", name(*from), name(*to)),
                ))
            }
            // Arriving at a preset ends a transition, commanded or not (a tour, another
            // OCU's command): worth a mark. The first report of where the arm is is not news.
            ArmFact::CurrentPose {
                t,
                pose: pose @ PoseState::At(id),
            } if *pose != before.pose && pose_seen => {
                let name = before
                    .presets
                    .iter()
                    .find(|p| p.id == *id)
                    .map_or_else(|| format!("pose {id}"), |p| format!("{} ({id})", p.name));
                Some((*t, MarkKind::Transition, format!("at preset {name}")))
            }
            ArmFact::Link {
                t,
                state: LinkState::Lost,
            } if before.link != LinkState::Lost => {
                Some((*t, MarkKind::Gap, "link lost".to_string()))
            }
            ArmFact::Stale {
                t,
                signal,
                stale: true,
            } if before.stale.get(signal) != Some(&true) => {
                let label = format!("{} stale", signal.name());
                self.episode_start(Episode::Stale(*signal), *t, MarkKind::Stale, label);
                None
            }
            ArmFact::Stale {
                t,
                signal,
                stale: false,
            } if before.stale.get(signal) == Some(&true) => {
                self.episode_end(Episode::Stale(*signal), *t);
                None
            }
            _ => event_mark(before, u),
        };
        if let Some((t, kind, label)) = mark {
            self.add_mark(t, kind, label, true);
        }
    }

    /// Notes control we held going (a loss whose reason is yet to come) from `u`; whether a
    /// loss is waiting for its reason after `u`.
    fn note_loss(&mut self, u: &ArmFact, held_before: bool) -> bool {
        match u {
            ArmFact::Control {
                state: ControlState::Released,
                ..
            } if held_before => self.loss_unexplained = true,
            ArmFact::Control {
                state: ControlState::Held { .. },
                ..
            }
            | ArmFact::ControlLost { .. } => self.loss_unexplained = false,
            _ => {}
        }
        self.loss_unexplained
    }

    /// The mark of a loss of control: "control taken by 200.7.3 (authority 200)", "control
    /// lost: timed out …". The "control released" said a moment ago was this loss: it is
    /// renamed (said once, with its reason, at the moment control went) and `None` returned.
    fn loss_mark(&mut self, t: f64, reason: ControlLoss) -> Option<(f64, MarkKind, String)> {
        let label = match reason {
            ControlLoss::Taken { .. } => format!("control {reason}"),
            _ => format!("control lost: {reason}"),
        };
        if let Some(i) = self.released_mark_before(t) {
            self.marks[i].label = label;
            None
        } else {
            Some((t, MarkKind::Control, label))
        }
    }

    /// The derived "control released" mark of the last [`LOSS_REASON_WAIT`] s before `t`, if
    /// it is the last control mark (a loss's reason comes that much after the loss).
    fn released_mark_before(&self, t: f64) -> Option<usize> {
        let i = self
            .marks
            .iter()
            .rposition(|m| m.kind == MarkKind::Control)?;
        let m = &self.marks[i];
        (self.derived.get(i) == Some(&true)
            && m.label == "control released"
            && t - m.t <= LOSS_REASON_WAIT
            && m.t <= t)
            .then_some(i)
    }

    fn add_mark(&mut self, t: f64, kind: MarkKind, label: String, derived: bool) {
        let end = self.marks.partition_point(|m| m.t <= t);
        let start = self.marks[..end].partition_point(|m| m.t < t);
        // The same change described twice (derived, and explicitly by the observer).
        let twin = (start..end)
            .find(|&i| self.marks[i].kind == kind && self.derived.get(i).copied() != Some(derived));
        if let Some(i) = twin {
            if !derived {
                self.marks[i].label = label;
                if let Some(d) = self.derived.get_mut(i) {
                    *d = false;
                }
            }
            return;
        }
        self.marks.insert(end, Mark::new(t, kind, label));
        if end <= self.derived.len() {
            self.derived.insert(end, derived);
        }
    }

    /// Opens an episode at `t`, or continues the newest one of `key` when it ended less than
    /// [`EPISODE_MERGE_S`] ago (its mark is kept, its end cleared and its count raised).
    fn episode_start(&mut self, key: Episode, t: f64, kind: MarkKind, label: String) {
        if let Some(e) = self.episodes.get_mut(&key) {
            match e.end {
                None => return,
                Some(end) if t - end < EPISODE_MERGE_S => {
                    e.end = None;
                    let start = e.start;
                    if let Some(m) = self.episode_mark(start, kind) {
                        m.end = None;
                        m.times += 1;
                    }
                    return;
                }
                Some(_) => {}
            }
        }
        self.episodes.insert(
            key,
            EpisodeState {
                start: t,
                end: None,
            },
        );
        self.add_mark(t, kind, label, true);
    }

    /// Ends the open episode of `key` at `t` (its mark gets the end time).
    fn episode_end(&mut self, key: Episode, t: f64) {
        let kind = match key {
            Episode::Stale(_) => MarkKind::Stale,
            Episode::Threshold => MarkKind::Threshold,
        };
        let Some(e) = self.episodes.get_mut(&key) else {
            return;
        };
        if e.end.is_some() {
            return;
        }
        e.end = Some(t);
        let start = e.start;
        if let Some(m) = self.episode_mark(start, kind) {
            m.end = Some(t.max(start));
        }
    }

    /// The derived mark of `kind` at `start` (an episode's).
    fn episode_mark(&mut self, start: f64, kind: MarkKind) -> Option<&mut Mark> {
        let end = self.marks.partition_point(|m| m.t <= start);
        let from = self.marks[..end].partition_point(|m| m.t < start);
        self.marks[from..end].iter_mut().find(|m| m.kind == kind)
    }

    /// The force threshold crossings are marked against (N; `None`: no marks). Changing it
    /// marks the crossings of the whole history again.
    pub fn set_force_threshold(&mut self, threshold: Option<f64>) {
        let threshold = threshold.filter(|th| th.is_finite() && *th > 0.0);
        if threshold == self.force_threshold {
            return;
        }
        self.force_threshold = threshold;
        let keep: Vec<bool> = self
            .marks
            .iter()
            .map(|m| m.kind != MarkKind::Threshold)
            .collect();
        let mut i = 0;
        self.marks.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.derived.retain(|_| {
            i += 1;
            keep.get(i - 1).copied().unwrap_or(true)
        });
        self.episodes.remove(&Episode::Threshold);
        if threshold.is_none() {
            return;
        }
        let magnitude = FT_CHANNELS.len() - 1;
        let samples: Vec<(f64, f64)> = self
            .histories(4)
            .flat_map(|h| {
                // In the envelope tier one sample per block: crossings there are marked at
                // block resolution.
                h.samples_of(magnitude)
            })
            .collect();
        for (t, m) in samples {
            self.threshold_sample(t, m);
        }
    }

    /// The force threshold crossings are marked against.
    pub fn force_threshold(&self) -> Option<f64> {
        self.force_threshold
    }

    /// Marks |F| = `magnitude` at `t` crossing the threshold (up: a mark; down by more than
    /// the hysteresis: the episode's end).
    fn threshold_sample(&mut self, t: f64, magnitude: f64) {
        let Some(th) = self.force_threshold else {
            return;
        };
        if !magnitude.is_finite() {
            return;
        }
        let open = self
            .episodes
            .get(&Episode::Threshold)
            .is_some_and(|e| e.end.is_none());
        if !open && magnitude > th {
            let label = format!("|F| {magnitude:.1} N above the {th} N threshold");
            self.episode_start(Episode::Threshold, t, MarkKind::Threshold, label);
        } else if open && magnitude < th * (1.0 - THRESHOLD_HYSTERESIS) {
            self.episode_end(Episode::Threshold, t);
        }
    }

    /// The state as it was at time `t`: the nearest checkpoint at or before `t` plus the
    /// discrete updates up to `t`; samples are the last at or before `t` (as stored, `f32`
    /// precision) and `counts` the samples up to `t`, both since the last selection change
    /// (samples of a previously selected arm are not this arm's, as in live mode).
    pub fn state_at(&self, t: f64) -> ArmState {
        let n = self.log_t.partition_point(|x| *x <= t);
        let k = n / CHECKPOINT_EVERY;
        let mut s = match k.checked_sub(1).and_then(|i| self.checkpoints.get(i)) {
            Some(c) => c.clone(),
            None => ArmState::default(),
        };
        for u in &self.log[(k * CHECKPOINT_EVERY).min(n)..n] {
            u.apply_to(&mut s);
        }
        // Samples from before the last selection change belong to another arm.
        let since = {
            let i = self.selections.partition_point(|x| *x <= t);
            i.checked_sub(1)
                .map_or(f64::NEG_INFINITY, |i| self.selections[i])
        };
        s.counts.clear();
        for (slot, signal) in SAMPLED.iter().enumerate() {
            let Some((ts, values)) = self.sample_at(slot, t) else {
                continue;
            };
            if ts < since {
                continue;
            }
            let count: usize = self
                .histories(slot)
                .map(|h| {
                    h.count_until(t, true)
                        .saturating_sub(h.count_until(since, false))
                })
                .sum();
            if count > 0 {
                s.counts.insert(*signal, count as u64);
            }
            let stamped = |value| Stamped { t: ts, value };
            match slot {
                0 => s.positions = Some(stamped(values)),
                1 => s.velocities = Some(stamped(values)),
                2 => s.efforts = Some(stamped(values)),
                3 => s.joint_force_torques = Some(stamped(values)),
                _ => {
                    let part = |i: usize| values.get(i).copied().filter(|v| !v.is_nan());
                    s.force_torque = Some(Stamped {
                        t: ts,
                        value: ([part(0), part(1), part(2)], [part(3), part(4), part(5)]),
                    });
                }
            }
        }
        s
    }

    /// The last sample of a signal at or before `t`: its time and channel values.
    fn sample_at(&self, slot: usize, t: f64) -> Option<(f64, Vec<f64>)> {
        self.histories(slot).rev().find_map(|h| {
            let mut values = Vec::with_capacity(h.channels());
            let ts = h.row_at(t, &mut values)?;
            if slot == 4 {
                // |F| is derived, not part of the wrench.
                values.truncate(FT_CHANNELS.len() - 1);
            }
            Some((ts, values))
        })
    }

    /// First and last update times.
    pub fn span(&self) -> Option<(f64, f64)> {
        self.span
    }

    /// Sets the bytes the session may hold (`None`: keep every sample, the default). The
    /// budget covers everything [`Session::memory_bytes`] counts. The discrete log,
    /// checkpoints and marks are kept whole (they are small: tens of bytes per discrete
    /// update) with room for their next growth step set aside; the rest is shared between
    /// the five histories in proportion to their bytes at full resolution so far (so each
    /// keeps about the same time span exact), and each moves its old samples into its
    /// envelope tier beyond its share ([`History::set_memory_limit`]). Histories retired by
    /// a change of joint count keep only their envelope and the minimum exact room. Shares
    /// are recomputed when a history is full, and when the log grows.
    ///
    /// A budget below the floor (each history's [`super::history::MIN_EXACT_SAMPLES`] and
    /// its coarsest envelope, plus the discrete parts) is exceeded by that floor: samples are
    /// never thrown away, only held at coarser resolution.
    pub fn set_memory_budget(&mut self, bytes: Option<usize>) {
        self.budget = bytes;
        match bytes {
            None => {
                for slot in 0..SAMPLED.len() {
                    self.history_mut(slot).set_memory_limit(None);
                }
            }
            Some(_) => {
                for h in self.retired.iter_mut().flatten() {
                    h.set_memory_limit(Some(0));
                }
                self.rebalance();
            }
        }
    }

    /// The bytes the session may hold (`None`: no budget).
    pub fn memory_budget(&self) -> Option<usize> {
        self.budget
    }

    /// The time before which samples of some signal are held only as an envelope (min/max
    /// per block, one real sample per block: [`History::exact_from`]); `None` when every
    /// sample is exact. Exact values before it are only in the recording.
    pub fn envelope_before(&self) -> Option<f64> {
        (0..SAMPLED.len())
            .flat_map(|slot| self.histories(slot))
            .filter_map(History::exact_from)
            .max_by(f64::total_cmp)
    }

    /// Bytes the discrete parts may add before the budget is shared out again: the log's
    /// next growth step, a checkpoint and the checkpoints' next step, and room for marks.
    fn growth_margin(&self) -> usize {
        let state = std::mem::size_of::<ArmState>() + state_heap_bytes(&self.discrete);
        (self.log.len() / 4 + 64) * (std::mem::size_of::<Logged>() + 8)
            + (self.checkpoints.len() / 4 + 6) * state
            + 64 * 1024
    }

    /// Shares the budget out between the current histories (see
    /// [`Session::set_memory_budget`]): lowered limits first, so the held bytes never pass
    /// the budget on the way.
    fn rebalance(&mut self) {
        let Some(budget) = self.budget else { return };
        let held: usize = (0..SAMPLED.len())
            .map(|slot| self.history(slot).memory_bytes())
            .sum();
        let other = self.memory_bytes().saturating_sub(held) + self.growth_margin();
        let available = budget.saturating_sub(other) as f64;
        let weights: [f64; 5] = std::array::from_fn(|slot| {
            let h = self.history(slot);
            // Bytes per sample at full resolution (time, values, summaries), times samples
            // so far: each history keeps about the same span exact. A signal that just
            // started counts a few thousand samples, so it has room to start.
            let per = 8.0 + 5.2 * h.channels() as f64;
            h.len().max(super::history::MIN_EXACT_SAMPLES) as f64 * per
        });
        let total: f64 = weights.iter().sum();
        let limits = weights.map(|w| (available * w / total) as usize);
        for lower in [true, false] {
            for (slot, limit) in limits.iter().enumerate() {
                let h = self.history_mut(slot);
                if h.memory_limit().is_none_or(|old| *limit <= old) == lower {
                    h.set_memory_limit(Some(*limit));
                }
            }
        }
    }

    /// The time of the first report (sample) strictly after `t`.
    pub fn next_report(&self, t: f64) -> Option<f64> {
        (0..SAMPLED.len())
            .flat_map(|slot| self.histories(slot))
            .filter_map(|h| h.next_time_after(t))
            .min_by(f64::total_cmp)
    }

    /// The time of the last report (sample) strictly before `t`.
    pub fn prev_report(&self, t: f64) -> Option<f64> {
        (0..SAMPLED.len())
            .flat_map(|slot| self.histories(slot))
            .filter_map(|h| h.prev_time_before(t))
            .max_by(f64::total_cmp)
    }

    /// Bytes held (for the memory figures and the budget): the histories' columns; discrete
    /// updates, checkpoints and marks by their inline size plus their largest heap parts
    /// (added up as they are kept: this costs a scan of the marks, not of the log).
    pub fn memory_bytes(&self) -> usize {
        let histories: usize = (0..SAMPLED.len())
            .flat_map(|slot| self.histories(slot))
            .map(History::memory_bytes)
            .sum();
        let log = self.log.capacity() * std::mem::size_of::<Logged>()
            + self.log_t.capacity() * 8
            + self.log_heap;
        let checkpoints =
            self.checkpoints.capacity() * std::mem::size_of::<ArmState>() + self.checkpoint_heap;
        let marks = self.marks.capacity() * std::mem::size_of::<Mark>()
            + self.marks.iter().map(|m| m.label.capacity()).sum::<usize>()
            + self.derived.capacity();
        std::mem::size_of::<Self>()
            + histories
            + log
            + checkpoints
            + marks
            + state_heap_bytes(&self.latest)
            + state_heap_bytes(&self.discrete)
            + self.selections.capacity() * 8
    }
}

/// The history slot and channel values of a sampled update (F/T written into `ft`).
fn sample<'a>(u: &'a ArmFact, ft: &'a mut [f64; 7]) -> Option<(usize, &'a [f64])> {
    let slot = slot_of(u.signal()?)?;
    let values: &[f64] = match u {
        ArmFact::JointPositions { values, .. }
        | ArmFact::JointVelocities { values, .. }
        | ArmFact::JointEfforts { values, .. }
        | ArmFact::JointForceTorques { values, .. } => values,
        ArmFact::ForceTorque { force, torque, .. } => {
            let f = force.map(|x| x.unwrap_or(f64::NAN));
            let tq = torque.map(|x| x.unwrap_or(f64::NAN));
            // NaN if any force part is absent: a magnitude of two parts would mislead.
            let m = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
            *ft = [f[0], f[1], f[2], tq[0], tq[1], tq[2], m];
            ft
        }
        _ => return None,
    };
    Some((slot, values))
}

/// Rough heap bytes of a discrete fact kept in the log (vectors and strings it owns).
fn logged_heap_bytes(u: &Logged) -> usize {
    let remark = |r: &Remark| match r {
        Remark::CommandOutcome {
            outcome: Outcome::Rejected(s) | Outcome::Failed(s),
            ..
        } => s.capacity(),
        Remark::Mark { label, .. } => label.capacity(),
        Remark::Error { message, .. } => message.capacity(),
        Remark::CommandOutcome { .. } => 0,
    };
    match u {
        Logged::Net(NetFact::Component { info, .. }) => {
            info.identification.as_ref().map_or(0, String::capacity)
                + info
                    .services
                    .iter()
                    .map(|s| std::mem::size_of_val(s) + s.0.capacity())
                    .sum::<usize>()
        }
        Logged::Arm(ArmFact::Specification { spec, .. }) => spec_heap_bytes(spec),
        Logged::Arm(ArmFact::Presets { presets, .. }) => presets
            .iter()
            .map(|p| {
                std::mem::size_of_val(p)
                    + p.name.capacity()
                    + p.positions.as_ref().map_or(0, |v| v.capacity() * 8)
            })
            .sum(),
        Logged::Arm(ArmFact::Remark(r)) | Logged::Net(NetFact::Remark(r)) => remark(r),
        Logged::Arm(_) | Logged::Net(_) => 0,
    }
}

/// Heap bytes of a specification (its joints and their names).
fn spec_heap_bytes(spec: &ArmSpec) -> usize {
    spec.joints.capacity() * std::mem::size_of::<Joint>()
        + spec
            .joints
            .iter()
            .map(|j| j.name.as_ref().map_or(0, String::capacity))
            .sum::<usize>()
}

/// Rough heap bytes of an [`ArmState`] (its maps, lists and specification).
fn state_heap_bytes(s: &ArmState) -> usize {
    let entry = std::mem::size_of::<(ComponentId, (ComponentInfo, bool))>();
    s.components.len() * entry
        + s.spec.as_ref().map_or(0, spec_heap_bytes)
        + s.presets.capacity() * std::mem::size_of::<PresetInfo>()
        + s.outcomes.capacity() * 64
        + s.errors.capacity() * 64
        + s.stale.len() * 16
        + s.delivery.len() * 32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 7 joint positions and the wrench at `hz` for `seconds` from `start`, with a status
    /// change and an error now and then, into `s` (checking `check` after every update).
    fn feed_from(
        s: &mut Session,
        start: f64,
        seconds: f64,
        hz: f64,
        mut check: impl FnMut(&Session),
    ) {
        let n = (seconds * hz) as usize;
        for i in 0..n {
            let t = start + i as f64 / hz;
            let q: Vec<f64> = (0..7).map(|j| (t * 0.1 + f64::from(j)).sin()).collect();
            s.apply_arm(&ArmFact::JointPositions { t, values: q });
            let f = (t * 0.3).sin() * 20.0;
            s.apply_arm(&ArmFact::ForceTorque {
                t,
                force: [Some(f), Some(-f), Some(1.0)],
                torque: [Some(0.1), None, Some(t.cos())],
            });
            if i % 997 == 0 {
                let state = if i % 2 == 0 {
                    ManagementState::Ready
                } else {
                    ManagementState::Standby
                };
                s.apply_arm(&ArmFact::Status { t, state });
                s.apply_net(&NetFact::Remark(Remark::Error {
                    t,
                    message: format!("note {i}"),
                }));
            }
            check(s);
        }
    }

    /// [`feed_from`] from 0 s.
    fn feed(s: &mut Session, seconds: f64, hz: f64, check: impl FnMut(&Session)) {
        feed_from(s, 0.0, seconds, hz, check);
    }

    #[test]
    fn a_budget_holds_and_state_at_in_the_exact_window_is_unchanged() {
        let budget = 3 << 20;
        let mut full = Session::new();
        let mut small = Session::new();
        small.set_memory_budget(Some(budget));
        assert_eq!(small.memory_budget(), Some(budget));
        feed(&mut full, 300.0, 1000.0, |_| {});
        let mut peak = 0;
        feed(&mut small, 300.0, 1000.0, |s| {
            peak = peak.max(s.memory_bytes());
        });
        assert!(peak <= budget, "{peak} > {budget}");
        assert!(full.memory_bytes() > 4 * budget);
        let from = small
            .envelope_before()
            .expect("old samples held as an envelope");
        assert_eq!(full.envelope_before(), None);
        assert!(from > 100.0 && from < 290.0, "{from}");
        // Both signals keep about the same span exact.
        let (p, f) = (small.positions.exact_from(), small.ft.exact_from());
        assert!((p.unwrap() - f.unwrap()).abs() < 30.0, "{p:?} {f:?}");
        for k in 0..300 {
            let t = from + (300.0 - from) * f64::from(k) / 300.0;
            let (a, b) = (small.state_at(t), full.state_at(t));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "state at {t}");
            assert_eq!(small.next_report(t), full.next_report(t));
            assert_eq!(small.prev_report(t), full.prev_report(t));
        }
        // Before it: a real sample of its block, at block resolution.
        let old = small.state_at(50.0);
        let stamped = old.positions.expect("positions in the envelope region");
        assert!(stamped.t <= 50.0 && stamped.t > 49.8, "{}", stamped.t);
        let exact = full.positions.value_at(0, stamped.t).unwrap();
        assert_eq!(f64::from(stamped.value[0] as f32), exact.1);
        assert_eq!(old.status, full.state_at(50.0).status);
        assert_eq!(small.discrete_updates(), full.discrete_updates());
        // Envelopes of the whole session as the plots draw them: bit for bit.
        let (t0, t1) = full.span().unwrap();
        let mut bounds = Vec::new();
        for (a, b) in [(&small.positions, &full.positions), (&small.ft, &full.ft)] {
            let channels: Vec<usize> = (0..a.channels()).collect();
            assert_eq!(
                a.plot_lines_multi(&channels, t0, t1, 1920, 0.05, &mut bounds),
                b.plot_lines_multi(&channels, t0, t1, 1920, 0.05, &mut bounds)
            );
        }
    }

    #[test]
    fn reserving_for_the_rest_of_a_file_respects_the_budget() {
        let budget = 2 << 20;
        let mut s = Session::new();
        s.set_memory_budget(Some(budget));
        feed(&mut s, 2.0, 1000.0, |_| {});
        // A file promising 12 hours more.
        s.reserve_for_rest(4000, 4000 * 3600 * 6);
        assert!(s.memory_bytes() <= budget, "{}", s.memory_bytes());
        feed_from(&mut s, 2.0, 60.0, 1000.0, |s| {
            assert!(s.memory_bytes() <= budget);
        });
        assert_eq!(s.refused_samples(), 0);
        assert!(s.envelope_before().is_some());
        s.trim_reserve();
        assert!(s.memory_bytes() <= budget);
    }

    #[test]
    fn a_tiny_budget_keeps_its_floor_without_panicking() {
        for budget in [0, 1, 100_000] {
            let mut s = Session::new();
            s.set_memory_budget(Some(budget));
            feed(&mut s, 60.0, 1000.0, |_| {});
            assert_eq!(s.positions.len(), 60_000);
            assert!(s.memory_bytes() < 2_000_000, "{}", s.memory_bytes());
            assert!(s.state_at(30.0).positions.is_some());
            // Refused as before.
            let before = s.refused_samples();
            s.apply_arm(&ArmFact::JointPositions {
                t: 1.0,
                values: vec![0.0; 7],
            });
            assert_eq!(s.refused_samples(), before + 1);
        }
        // Lifting the budget keeps what is held and stops compacting.
        let mut s = Session::new();
        s.set_memory_budget(Some(1 << 20));
        feed(&mut s, 60.0, 1000.0, |_| {});
        let from = s.envelope_before();
        s.set_memory_budget(None);
        let held = s.memory_bytes();
        feed_from(&mut s, 60.0, 30.0, 1000.0, |_| {});
        assert_eq!(s.refused_samples(), 0);
        assert_eq!(s.envelope_before(), from);
        assert!(s.memory_bytes() > held + 30_000 * 40);
    }
}
