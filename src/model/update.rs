//! The two doors between the network thread and everything above it: [`Update`] (facts, in
//! SI units, stamped with the receive time in seconds since the session started) and
//! [`Command`](crate::model::command::Command) (the operator's intent). No wire types cross
//! them.

use std::net::SocketAddr;

use super::arm::ArmSpec;
use super::command::CommandKind;
pub use super::id::ComponentId;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The peer confirmed it.
    Confirmed,
    /// Refused, with the reason (the peer's, or ours when refused locally).
    Rejected(String),
    /// No answer in time (recordings and the replay observer, which cannot ask again).
    TimedOut,
    /// A preset transition ended at the pose.
    Completed,
    /// A preset transition failed, with the reason in words.
    Failed(String),
    /// The command was sent `tries` times with no answer and no sign of its effect; `state`
    /// is what the arm reported last (control and management state), queried again after.
    NoAnswer {
        /// How many times the command was sent.
        tries: u8,
        /// The actual state as last reported, in words.
        state: String,
    },
}

impl Outcome {
    /// Whether the command happened (confirmed, or the transition completed).
    pub fn succeeded(&self) -> bool {
        matches!(self, Outcome::Confirmed | Outcome::Completed)
    }
}

impl std::fmt::Display for Outcome {
    /// The outcome in words, as the operator reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Confirmed => f.write_str("confirmed"),
            Outcome::Completed => f.write_str("completed"),
            Outcome::Rejected(why) => write!(f, "refused: {why}"),
            Outcome::TimedOut => f.write_str("no answer in time"),
            Outcome::Failed(why) => write!(f, "failed: {why}"),
            Outcome::NoAnswer { tries, state } => {
                write!(f, "no answer after {tries} tries; the arm reports {state}")
            }
        }
    }
}

/// Whether we hold control of the selected manipulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControlState {
    /// Not held.
    #[default]
    Released,
    /// Asked for, no answer yet.
    Requested,
    /// Held with this authority.
    Held {
        /// Our authority code.
        authority: u8,
    },
}

impl ControlState {
    /// `"released"`, `"requested"` or `"held"` (recordings, CLI and summary JSON).
    pub fn name(self) -> &'static str {
        match self {
            ControlState::Released => "released",
            ControlState::Requested => "requested",
            ControlState::Held { .. } => "held",
        }
    }
}

/// Who holds control of the selected manipulator, as the arm itself reports it
/// (`ReportControl`): the one source of "held by …" and "free".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controller {
    /// The controlling client, `None` when nobody holds control.
    pub id: Option<ComponentId>,
    /// Its authority code (0 when nobody holds control).
    pub authority: u8,
}

impl std::fmt::Display for Controller {
    /// `"200.7.3 (authority 200)"`, or `"nobody"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.id {
            Some(id) => write!(f, "{id} (authority {})", self.authority),
            None => f.write_str("nobody"),
        }
    }
}

/// Our emergency stop of an arm: an intent that lasts until the arm confirms it (issue 44).
/// The network side sends `SetEmergency` at once and again every 150 ms
/// (`net::client::STOP_REPEAT_S`) until a status received after the press says EMERGENCY,
/// across a lost link; it never gives up while the arm is followed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum StopState {
    /// No stop of ours waits for the arm's word.
    #[default]
    Idle,
    /// Sent, not yet confirmed by the arm.
    Pending {
        /// When the stop was first pressed, s.
        since: f64,
        /// `SetEmergency`s sent so far.
        tries: u32,
        /// When the last one went out, s.
        last_try: f64,
    },
}

impl StopState {
    /// Whether a stop waits for the arm's confirmation.
    pub fn is_pending(&self) -> bool {
        matches!(self, StopState::Pending { .. })
    }
}

/// Why control we held was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlLoss {
    /// Another client with a higher authority took it (as the arm's `ReportControl` says).
    Taken {
        /// The new controller.
        by: ComponentId,
        /// Its authority code.
        authority: u8,
    },
    /// The arm let it lapse: it heard no keep-alive `RequestControl` within its timeout.
    TimedOut,
    /// The arm released it without a request of ours, and nobody holds it now.
    ReleasedByArm,
    /// The arm went silent (link lost); control is asked for again when it is back.
    LinkLost,
}

impl std::fmt::Display for ControlLoss {
    /// The reason in words: "taken by 200.7.3 (authority 200)", "timed out …".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlLoss::Taken { by, authority } => {
                write!(f, "taken by {by} (authority {authority})")
            }
            ControlLoss::TimedOut => f.write_str("timed out: the arm heard no keep-alive in time"),
            ControlLoss::ReleasedByArm => f.write_str("released by the arm; nobody holds it"),
            ControlLoss::LinkLost => f.write_str("the link to the arm was lost"),
        }
    }
}

/// Another JAUS client uses our ID: the arm cannot tell us apart, so commands are refused
/// until it has been quiet for a while ([`NetFact::Identity`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdConflict {
    /// Where the other user of our ID was seen, when a datagram showed it.
    pub address: Option<SocketAddr>,
    /// What gave it away, in words.
    pub evidence: String,
}

/// The manipulator's management state (`ReportStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ManagementState {
    /// Not known yet.
    #[default]
    Unknown,
    /// Initialising.
    Initialize,
    /// Ready: commands are executed.
    Ready,
    /// Standby.
    Standby,
    /// Shut down.
    Shutdown,
    /// Failed.
    Failure,
    /// Emergency stop.
    Emergency,
}

impl ManagementState {
    /// The state's name in upper case, as the specification writes it (`UNKNOWN` when none
    /// was reported): what marks and the status show.
    pub fn name(self) -> &'static str {
        match self {
            ManagementState::Unknown => "UNKNOWN",
            ManagementState::Initialize => "INITIALIZE",
            ManagementState::Ready => "READY",
            ManagementState::Standby => "STANDBY",
            ManagementState::Shutdown => "SHUTDOWN",
            ManagementState::Failure => "FAILURE",
            ManagementState::Emergency => "EMERGENCY",
        }
    }
}

/// Where the arm is among its presets (`ReportCurrentPose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoseState {
    /// Not known, or between poses without a transition.
    #[default]
    Unknown,
    /// At this preset.
    At(u8),
    /// Moving from one preset to another.
    Moving {
        /// Pose being left.
        from: u8,
        /// Pose being approached.
        to: u8,
    },
}

/// How reachable the selected manipulator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkState {
    /// Nothing selected.
    #[default]
    Idle,
    /// Selected, setting up (specification, subscriptions).
    Connecting,
    /// Reports arriving.
    Live,
    /// Silent for longer than the configured limit; being re-established.
    Lost,
}

impl LinkState {
    /// `"idle"`, `"connecting"`, `"live"` or `"lost"` (CLI output, recordings, the UI).
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Idle => "idle",
            LinkState::Connecting => "connecting",
            LinkState::Live => "live",
            LinkState::Lost => "lost",
        }
    }
}

/// What a timeline mark is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MarkKind {
    /// Control requested, granted, refused, released or lost.
    Control,
    /// An emergency stop set or cleared.
    Emergency,
    /// A management state change (ready, standby, ...).
    Status,
    /// A preset transition started, completed or failed.
    Transition,
    /// No traffic from the manipulator for a while, or the link lost.
    Gap,
    /// A signal overdue (stale) or fresh again.
    Stale,
    /// The force magnitude crossed the operator's threshold.
    Threshold,
    /// A command's outcome (confirmed, refused, no answer), in words.
    Command,
    /// The network side: the link live again after a loss, an error for the operator, a peer
    /// deviation tolerated.
    Network,
    /// A recording of the live session started or stopped.
    Recording,
    /// An operator's note or bookmark (a fact of the vehicle, not of one arm).
    Note,
    /// A pair of bodies entered the clearance band or margin, or touched, or a jog was
    /// slowed or stopped for clearance.
    Clearance,
}

impl MarkKind {
    /// Every kind, in the order the timeline's filter lists them.
    /// New kinds go at the end: the timeline's filter stores the hidden kinds by index.
    pub const ALL: [MarkKind; 12] = [
        MarkKind::Control,
        MarkKind::Emergency,
        MarkKind::Status,
        MarkKind::Transition,
        MarkKind::Gap,
        MarkKind::Stale,
        MarkKind::Threshold,
        MarkKind::Command,
        MarkKind::Network,
        MarkKind::Recording,
        MarkKind::Note,
        MarkKind::Clearance,
    ];

    /// A short name for legends and exports.
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Control => "control",
            MarkKind::Emergency => "emergency",
            MarkKind::Status => "status",
            MarkKind::Transition => "transition",
            MarkKind::Gap => "gap",
            MarkKind::Stale => "stale",
            MarkKind::Threshold => "threshold",
            MarkKind::Command => "command",
            MarkKind::Network => "network",
            MarkKind::Recording => "recording",
            MarkKind::Note => "note",
            MarkKind::Clearance => "clearance",
        }
    }
}

/// A time series the OCU receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signal {
    /// Joint positions.
    JointPositions,
    /// Joint velocities.
    JointVelocities,
    /// Joint efforts.
    JointEfforts,
    /// Joint forces/torques.
    JointForceTorques,
    /// End-effector force/torque.
    EndEffectorForceTorque,
    /// Current preset pose.
    CurrentPose,
    /// Management status.
    Status,
}

impl Signal {
    /// Every signal.
    pub const ALL: [Signal; 7] = [
        Signal::JointPositions,
        Signal::JointVelocities,
        Signal::JointEfforts,
        Signal::JointForceTorques,
        Signal::EndEffectorForceTorque,
        Signal::CurrentPose,
        Signal::Status,
    ];

    /// A short name for status lines.
    pub fn name(self) -> &'static str {
        match self {
            Signal::JointPositions => "positions",
            Signal::JointVelocities => "velocities",
            Signal::JointEfforts => "efforts",
            Signal::JointForceTorques => "joint F/T",
            Signal::EndEffectorForceTorque => "F/T",
            Signal::CurrentPose => "pose",
            Signal::Status => "status",
        }
    }
}

/// How a signal is being received.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delivery {
    /// Periodic event at this confirmed rate, Hz.
    Event(f64),
    /// Every-change event.
    OnChange,
    /// The peer refused or lacks events: periodic queries at this rate, Hz.
    Polling(f64),
}

impl Delivery {
    /// How often a sample is due, s: a periodic event's or a poll's period; `None` for an
    /// every-change event (and a rate of 0, which is one).
    pub fn period(self) -> Option<f64> {
        match self {
            Delivery::Event(rate) | Delivery::Polling(rate) if rate > 0.0 => Some(1.0 / rate),
            Delivery::Event(_) | Delivery::Polling(_) | Delivery::OnChange => None,
        }
    }
}

/// A preset pose as the arm describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetInfo {
    /// `PoseID`.
    pub id: u8,
    /// `PoseName`.
    pub name: String,
    /// Joint positions of the pose for this manipulator, when `ReportPresetPoseSpecifications` gave them.
    pub positions: Option<Vec<f64>>,
}

/// A component found on the network.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentInfo {
    /// Its ID.
    pub id: ComponentId,
    /// Where it answers.
    pub address: SocketAddr,
    /// The identification string of its subsystem, if known.
    pub identification: Option<String>,
    /// Service URIs with major.minor versions.
    pub services: Vec<(String, u8, u8)>,
    /// Whether it offers manipulator services.
    pub manipulator: bool,
}

/// Counters of the network side, published about once a second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Datagrams received.
    pub datagrams: u64,
    /// Datagrams or blocks that did not frame or decode.
    pub malformed: u64,
    /// Datagrams of another JUDP version or framing.
    pub foreign_version: u64,
    /// Blocks addressed to another component.
    pub not_for_us: u64,
    /// Blocks dropped as duplicates (same source and sequence number).
    pub duplicates: u64,
    /// Events dropped as older than the last one applied (reordered in flight).
    pub out_of_order: u64,
    /// Reports from components that are not followed manipulators (not applied).
    pub foreign_reports: u64,
    /// Manipulators found but not followed: [`MAX_ARMS`] were followed already.
    pub arms_not_followed: u64,
    /// Messages we did not expect (unknown event IDs, stray replies).
    pub unexpected: u64,
    /// Signs from the arm's own messages that another client uses our JAUS ID (a control
    /// answer we did not cause, control gone without our release).
    pub id_conflicts: u64,
    /// Datagrams carrying our own ID from a stranger's address (not the arm's): shown,
    /// counted, lock nothing by themselves.
    pub same_id_strangers: u64,
    /// Blocks carrying a followed arm's ID from another address than the one it was found at
    /// (spoofed, or an arm that moved: re-pinned only once it answers our query there), not
    /// counting those of `address_conflict`.
    pub spoofed: u64,
    /// Blocks carrying a followed arm's ID from the other address of an address conflict
    /// (another component under the arm's ID that answered our own discovery): not applied.
    pub address_conflict: u64,
    /// Discovery reports (`ReportServices`, `ReportIdentification`) nobody asked for, or past
    /// the bound of queries outstanding: counted, not applied.
    pub unsolicited: u64,
    /// Peers forgotten to keep the peer table within its bound (strangers first).
    pub peers_evicted: u64,
    /// Multi-packet messages reassembled.
    pub reassembled: u64,
    /// Fragments dropped (timeouts, limits).
    pub fragments_dropped: u64,
    /// ACKs sent in answer to requests.
    pub acks_sent: u64,
    /// Updates replaced by a newer sample of the same signal because the UI was behind.
    pub updates_coalesced: u64,
    /// Updates dropped outright because the UI was far behind.
    pub updates_dropped: u64,
    /// Datagrams received by the socket but dropped because the protocol thread was behind.
    pub queue_dropped: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams the socket refused to send (no route to a multicast group, peer gone).
    pub send_errors: u64,
    /// Deviations of peers from the wire reference that were accepted (and how often).
    pub tolerated: Tolerated,
    /// Datagrams the kernel dropped at our socket because its receive buffer was full (the
    /// OCU never saw them), since the socket was made; `None` where the system does not say
    /// (`net::socket::KernelDrops`).
    pub kernel_dropped: Option<u64>,
    /// Scheduling the network threads got (`net::priority`).
    pub scheduling: Scheduling,
}

/// Scheduling priority of the network threads (`net::priority`): under a busy CPU a thread at
/// normal priority can wait milliseconds to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// Not known yet (the threads have not started).
    #[default]
    Unknown,
    /// Normal priority: raising it was refused (no privilege) or not asked for.
    Normal,
    /// Normal scheduler with this raised nice value (-20..=-1).
    Nice(i8),
    /// Real-time `SCHED_FIFO` at this priority (1..=99).
    Realtime(u8),
}

impl Scheduling {
    /// Short text for the status bar and JSON ("real-time 10", "nice -10", "normal").
    pub fn label(self) -> String {
        match self {
            Scheduling::Unknown => "unknown".to_owned(),
            Scheduling::Normal => "normal".to_owned(),
            Scheduling::Nice(n) => format!("nice {n}"),
            Scheduling::Realtime(p) => format!("real-time {p}"),
        }
    }
}

/// Peer deviations from the wire reference that are accepted and counted (wire reference §9:
/// strict in what we send, tolerant in what we accept, count what we tolerated). Counted by the
/// live client ([`NetStats::tolerated`]), the simulator and the replay observer (`inspect
/// --summary --json`, key `tolerated`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tolerated {
    /// ACK/NAK blocks carrying a payload (§9 C11): the payload skipped by the data size, the
    /// next block of the datagram decoded.
    pub ack_payload: u64,
    /// `SetEmergency`/`ClearEmergency` with a 1-byte or empty body (§9 C10): taken as the
    /// emergency stop / its clearing; never tolerated for any other message.
    pub short_emergency_code: u64,
    /// `ReportServices` naming wildcard node/component IDs (§9 C8): the datagram's source ID
    /// used instead.
    pub wildcard_services: u64,
    /// `ReportControl` whose controller ID is no known component while a permutation of its
    /// bytes is one (§9 C9): logged once.
    pub controller_id_order: u64,
}

impl Tolerated {
    /// Adds `other`'s counts to these.
    #[must_use]
    pub fn plus(self, other: Tolerated) -> Tolerated {
        Tolerated {
            ack_payload: self.ack_payload + other.ack_payload,
            short_emergency_code: self.short_emergency_code + other.short_emergency_code,
            wildcard_services: self.wildcard_services + other.wildcard_services,
            controller_id_order: self.controller_id_order + other.controller_id_order,
        }
    }

    /// Total of every count.
    pub fn total(&self) -> u64 {
        self.ack_payload
            + self.short_emergency_code
            + self.wildcard_services
            + self.controller_id_order
    }

    /// The counts as `(name, count)`, names as `inspect --summary --json` writes them.
    pub fn named(&self) -> [(&'static str, u64); 4] {
        [
            ("ack_payload", self.ack_payload),
            ("short_emergency_code", self.short_emergency_code),
            ("wildcard_services", self.wildcard_services),
            ("controller_id_order", self.controller_id_order),
        ]
    }
}

/// Most manipulators followed at once (the network side, the replay observer and the session
/// alike). A vehicle carries a handful; past the bound a manipulator is listed as found but not
/// followed, and the operator is told (an error naming it). The bound keeps a network full of
/// manipulators (or a hostile capture) from growing the per-arm state without end.
pub const MAX_ARMS: usize = 16;

/// Most components the network side remembers (and a state lists) at once: a flood of
/// discovery replies from made-up IDs must not grow memory without bound. Past it, the
/// strangers that only sent unsolicited reports are forgotten first, never a followed arm.
pub const MAX_COMPONENTS: usize = 256;

/// A fact from the network, stamped `t` = receive time in seconds since the session started.
///
/// The type routes it: a fact about one manipulator is an [`Update::Arm`], which names the
/// arm and holds an [`ArmFact`]; a fact of the network (components found, counters, our
/// identity, the focus, news for every arm) is an [`Update::Net`]. The network side and the
/// replay observer follow every manipulator they find, and nothing of one arm may show under
/// another, so there is no unwrapped per-arm fact: a producer that speaks for one arm (a
/// test, a file decoded before issue 19) wraps its facts at its boundary. Neither part can
/// hold an `Update`, so nothing nests, and nothing is boxed per sample. A new kind of fact
/// goes into [`ArmFact`] or [`NetFact`], and every `match` that routes them (no `_` arm
/// there) fails to compile until it says where the new kind goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// A fact about one manipulator.
    Arm {
        /// The manipulator.
        arm: ComponentId,
        /// The fact.
        fact: ArmFact,
    },
    /// A fact of the network, or news for every arm.
    Net(NetFact),
}

/// A fact that can only be about one manipulator: its link, specification, samples, state,
/// control, signals, and what is said about it ([`Remark`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ArmFact {
    /// Reachability of the arm.
    Link {
        /// Receive time.
        t: f64,
        /// State.
        state: LinkState,
    },
    /// The arm's specification.
    Specification {
        /// Receive time.
        t: f64,
        /// The arm.
        spec: ArmSpec,
    },
    /// The tool point in the end-effector frame, m.
    ToolOffset {
        /// Receive time.
        t: f64,
        /// x, y, z.
        point: [f64; 3],
    },
    /// The arm's preset poses.
    Presets {
        /// Receive time.
        t: f64,
        /// Presets.
        presets: Vec<PresetInfo>,
    },
    /// Joint positions (rad or m), joint 1 first.
    JointPositions {
        /// Receive time.
        t: f64,
        /// Values.
        values: Vec<f64>,
    },
    /// Joint velocities (rad/s or m/s).
    JointVelocities {
        /// Receive time.
        t: f64,
        /// Values.
        values: Vec<f64>,
    },
    /// Joint efforts, percent of maximum.
    JointEfforts {
        /// Receive time.
        t: f64,
        /// Values.
        values: Vec<f64>,
    },
    /// Joint torques (N·m) / forces (N).
    JointForceTorques {
        /// Receive time.
        t: f64,
        /// Values.
        values: Vec<f64>,
    },
    /// End-effector force (N) and torque (N·m) in the end-effector frame; absent parts `None`.
    ForceTorque {
        /// Receive time.
        t: f64,
        /// Fx, Fy, Fz.
        force: [Option<f64>; 3],
        /// Tx, Ty, Tz.
        torque: [Option<f64>; 3],
    },
    /// Where the arm is among its presets.
    CurrentPose {
        /// Receive time.
        t: f64,
        /// Pose state.
        pose: PoseState,
    },
    /// Management state.
    Status {
        /// Receive time.
        t: f64,
        /// State.
        state: ManagementState,
    },
    /// Our control of the arm.
    Control {
        /// Receive time.
        t: f64,
        /// State.
        state: ControlState,
    },
    /// Who holds control of the arm, as the arm reports it.
    Controller {
        /// Receive time.
        t: f64,
        /// The controller and its authority.
        controller: Controller,
    },
    /// Control we held was lost, and why.
    ControlLost {
        /// Receive time.
        t: f64,
        /// Why.
        reason: ControlLoss,
    },
    /// A signal became stale (overdue by 3 periods) or fresh again.
    Stale {
        /// Receive time.
        t: f64,
        /// Which signal.
        signal: Signal,
        /// `true` when stale.
        stale: bool,
    },
    /// How a signal is delivered (event rate, on change, or polling fallback).
    Delivery {
        /// Receive time.
        t: f64,
        /// Which signal.
        signal: Signal,
        /// How.
        delivery: Delivery,
    },
    /// Where a jog of the arm stands (sent by the network side on every change; boxed:
    /// it carries words).
    Jog {
        /// Time.
        t: f64,
        /// The jog's state.
        status: Box<crate::model::jog::JogStatus>,
    },
    /// Our emergency stop of the arm: pending until the arm confirms it, or idle.
    Stop {
        /// Time.
        t: f64,
        /// Where it stands.
        state: StopState,
    },
    /// Where the arm is followed: the address its facts are taken from and its commands go
    /// to (said when it is followed and whenever that changes), and another address that
    /// answered our own discovery with its ID as well (two components under one JAUS ID).
    Address {
        /// Time.
        t: f64,
        /// The address followed.
        address: SocketAddr,
        /// The other address answering with the arm's ID, while it does.
        other: Option<SocketAddr>,
    },
    /// A command's outcome, a mark or an error about this arm.
    Remark(Remark),
}

/// A fact of the network: components found or lost, the focus, our identity, counters, and
/// what is said about no arm in particular ([`Remark`]: news for every arm).
#[derive(Debug, Clone, PartialEq)]
pub enum NetFact {
    /// A component was found or its services changed.
    Component {
        /// Receive time.
        t: f64,
        /// What we know of it.
        info: ComponentInfo,
    },
    /// A component went silent (kept, marked lost) or came back.
    ComponentLost {
        /// Receive time.
        t: f64,
        /// Which.
        id: ComponentId,
        /// `true` when lost, `false` when heard again.
        lost: bool,
    },
    /// The focused manipulator: where the operator's commands go, what the gauges show.
    Selected {
        /// Receive time.
        t: f64,
        /// Which.
        id: ComponentId,
    },
    /// Our own JAUS ID, and whether another client uses it too (published at start and on
    /// every change).
    Identity {
        /// Time.
        t: f64,
        /// Our JAUS ID.
        id: ComponentId,
        /// `Some` while another client is seen with the same ID: commands are refused.
        conflict: Option<IdConflict>,
        /// `Some` while datagrams carrying our ID come from a stranger's address (not the
        /// arm's, so anyone could have forged them): shown and counted, nothing is refused
        /// unless the arm's own messages confirm it (then `conflict` is set).
        suspect: Option<IdConflict>,
    },
    /// Network counters.
    Stats {
        /// Time.
        t: f64,
        /// Counters (boxed: 232 bytes, once a second, where every other update is at most
        /// ~120; unboxed they made every update, samples at kHz included, twice as big to move).
        stats: Box<NetStats>,
    },
    /// A command's outcome, a mark or an error about no arm in particular.
    Remark(Remark),
}

/// What is said about an arm ([`ArmFact::Remark`]) or the network ([`NetFact::Remark`]):
/// the same words either way, only where they are kept differs.
#[derive(Debug, Clone, PartialEq)]
pub enum Remark {
    /// How a command ended.
    CommandOutcome {
        /// Receive time.
        t: f64,
        /// Which command.
        command: CommandKind,
        /// Result.
        outcome: Outcome,
    },
    /// Something seen on the wire that deserves a timeline mark and is not a fact of its own
    /// (a command another OCU sent, a gap in traffic). The replay observer emits these.
    Mark {
        /// Time.
        t: f64,
        /// What about.
        kind: MarkKind,
        /// What happened, for the operator.
        label: String,
    },
    /// Something went wrong that the operator should see.
    Error {
        /// Time.
        t: f64,
        /// What happened and what to do.
        message: String,
    },
}

impl Update {
    /// `fact` about `arm`.
    pub fn arm(arm: ComponentId, fact: impl Into<ArmFact>) -> Update {
        Update::Arm {
            arm,
            fact: fact.into(),
        }
    }

    /// `fact` of the network.
    pub fn net(fact: impl Into<NetFact>) -> Update {
        Update::Net(fact.into())
    }

    /// The update's time stamp.
    pub fn t(&self) -> f64 {
        match self {
            Update::Arm { fact, .. } => fact.t(),
            Update::Net(fact) => fact.t(),
        }
    }

    /// The arm this fact is about; `None` for a fact of the network.
    pub fn arm_id(&self) -> Option<ComponentId> {
        match self {
            Update::Arm { arm, .. } => Some(*arm),
            Update::Net(_) => None,
        }
    }

    /// What is said in this update (an outcome, a mark, an error), about an arm or not.
    pub fn remark(&self) -> Option<&Remark> {
        match self {
            Update::Arm {
                fact: ArmFact::Remark(r),
                ..
            }
            | Update::Net(NetFact::Remark(r)) => Some(r),
            Update::Arm { .. } | Update::Net(_) => None,
        }
    }

    /// The arm and signal a sample belongs to, for updates that may be coalesced (only the
    /// newest of each arm's signal matters when the UI falls behind). Discrete facts return
    /// `None` and are never coalesced.
    pub fn coalesce_key(&self) -> Option<(ComponentId, Signal)> {
        match self {
            Update::Arm { arm, fact } => Some((*arm, fact.signal()?)),
            Update::Net(_) => None,
        }
    }
}

impl From<NetFact> for Update {
    fn from(fact: NetFact) -> Self {
        Update::Net(fact)
    }
}

impl From<Remark> for ArmFact {
    fn from(r: Remark) -> Self {
        ArmFact::Remark(r)
    }
}

impl From<Remark> for NetFact {
    fn from(r: Remark) -> Self {
        NetFact::Remark(r)
    }
}

impl ArmFact {
    /// The fact's time stamp.
    pub fn t(&self) -> f64 {
        match self {
            ArmFact::Link { t, .. }
            | ArmFact::Specification { t, .. }
            | ArmFact::ToolOffset { t, .. }
            | ArmFact::Presets { t, .. }
            | ArmFact::JointPositions { t, .. }
            | ArmFact::JointVelocities { t, .. }
            | ArmFact::JointEfforts { t, .. }
            | ArmFact::JointForceTorques { t, .. }
            | ArmFact::ForceTorque { t, .. }
            | ArmFact::CurrentPose { t, .. }
            | ArmFact::Status { t, .. }
            | ArmFact::Control { t, .. }
            | ArmFact::Controller { t, .. }
            | ArmFact::ControlLost { t, .. }
            | ArmFact::Stale { t, .. }
            | ArmFact::Delivery { t, .. }
            | ArmFact::Jog { t, .. }
            | ArmFact::Stop { t, .. }
            | ArmFact::Address { t, .. } => *t,
            ArmFact::Remark(r) => r.t(),
        }
    }

    /// The signal of a sample (`None` for a discrete fact): what [`Update::coalesce_key`]
    /// and the session's histories key on. Every kind named, so a new one is placed here.
    pub fn signal(&self) -> Option<Signal> {
        match self {
            ArmFact::JointPositions { .. } => Some(Signal::JointPositions),
            ArmFact::JointVelocities { .. } => Some(Signal::JointVelocities),
            ArmFact::JointEfforts { .. } => Some(Signal::JointEfforts),
            ArmFact::JointForceTorques { .. } => Some(Signal::JointForceTorques),
            ArmFact::ForceTorque { .. } => Some(Signal::EndEffectorForceTorque),
            ArmFact::Link { .. }
            | ArmFact::Specification { .. }
            | ArmFact::ToolOffset { .. }
            | ArmFact::Presets { .. }
            | ArmFact::CurrentPose { .. }
            | ArmFact::Status { .. }
            | ArmFact::Control { .. }
            | ArmFact::Controller { .. }
            | ArmFact::ControlLost { .. }
            | ArmFact::Stale { .. }
            | ArmFact::Delivery { .. }
            | ArmFact::Jog { .. }
            | ArmFact::Stop { .. }
            | ArmFact::Address { .. }
            | ArmFact::Remark(_) => None,
        }
    }
}

impl NetFact {
    /// The fact's time stamp.
    pub fn t(&self) -> f64 {
        match self {
            NetFact::Component { t, .. }
            | NetFact::ComponentLost { t, .. }
            | NetFact::Selected { t, .. }
            | NetFact::Identity { t, .. }
            | NetFact::Stats { t, .. } => *t,
            NetFact::Remark(r) => r.t(),
        }
    }
}

impl Remark {
    /// The remark's time stamp.
    pub fn t(&self) -> f64 {
        match self {
            Remark::CommandOutcome { t, .. } | Remark::Mark { t, .. } | Remark::Error { t, .. } => {
                *t
            }
        }
    }
}
