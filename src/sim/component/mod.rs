//! The simulated manipulator as a sans-I/O JAUS component: datagrams and the clock go in,
//! datagrams to send come out. Every protocol rule lives here and is tested without sockets.
//!
//! Services (listed in ReportServices): core Transport, Events, `AccessControl`, Management,
//! Liveness, Discovery; Manipulator v2.0 `ManipulatorSpecificationService`,
//! `ManipulatorJointPositionSensor`, `ManipulatorJointVelocitySensor`,
//! `ManipulatorJointForceTorqueSensor`, `ManipulatorToolOffsetService`,
//! `ManipulatorEndEffectorPoseSensor`, `ManipulatorEndEffectorVelocityStateSensor`,
//! `ManipulatorJointMotionProfile`, and of the drivers `PrimitiveManipulator`,
//! `ManipulatorJointPositionDriver`, `ManipulatorJointVelocityDriver`,
//! `ManipulatorEndEffectorVelocityStateDriver` those [`SimConfig::drivers`] offers (all by
//! default); IOP
//! `ManipulatorEndEffectorForceTorqueSensor` and `PresetPose`.
//!
//! Behaviour choices where the standards leave room (documented for operators and tests):
//! - Commands (`Set…`, `SetCurrentPose`, Standby, Resume, Shutdown, Reset, `SetAuthority`) are
//!   executed only for the client holding control, as `AccessControl` says; others are counted
//!   and ignored, except `SetCurrentPose`, which is answered with `ReportTransitionCompleted`
//!   `TRANSITION_FAILED` so the requester learns it was refused.
//! - `SetEmergency` is accepted from any client (an emergency stop must always work); the
//!   emergency ends when every client that set it has cleared it, leaving the component in
//!   STANDBY until a Resume from the controlling client. At most [`MAX_EMERGENCY_SETTERS`]
//!   setters are remembered; past them the emergency is latched (see the constant).
//! - Control lapses after the access-control timeout without a new `RequestControl`: the client
//!   gets `RejectControl` `CONTROL_RELEASED`, any motion it commanded stops at once (an OCU that
//!   dies mid-jog stops the arm within the timeout, `sim --control-timeout`) and its motion
//!   profile is forgotten.
//! - `SetJointPositions`, `SetJointVelocity` and `SetEndEffectorVelocityState` move the arm
//!   only once the controlling client has set a joint motion profile, and within its speeds
//!   (module `drivers`); before that they are refused and counted
//!   ([`SimStats::refused_without_profile`]).
//! - Events v1.1: a subscription not refreshed (CreateEvent/UpdateEvent) within the event
//!   timeout is cancelled and the client gets `ConfirmEventRequest`, as the Events service says.
//! - JUDP intake is the shared [`Endpoint`]'s (as the OCU's): ACK requests answered,
//!   multi-packet messages reassembled, and a message whose sequence number its source used
//!   within 2 s dropped as a duplicate ([`SimStats::duplicates`]). What it sends is numbered
//!   from one counter for all peers (from 0) and cut into multi-packet blocks when large.
//!
//! - Untrusted senders (issue 29): answers (ACKs, reports, confirmations, refusals) are bounded
//!   per received datagram and per second per sender address ([`MAX_ANSWERS_PER_DATAGRAM`],
//!   [`ANSWERS_PER_SECOND`], [`ANSWER_BURST`], module `budget`); what is past the budget is
//!   dropped and counted ([`SimStats::replies_refused`]), never an emergency stop, a control
//!   request or a command, which are acted on all the same. Every table is bounded:
//!   subscriptions ([`MAX_SUBSCRIPTIONS`], [`MAX_SUBSCRIPTIONS_PER_CLIENT`]), emergency setters
//!   ([`MAX_EMERGENCY_SETTERS`]), sender addresses ([`MAX_SENDERS`]), peers (256), the report
//!   cache (one entry per subscription at most).
//!
//! Files: this one (intake, access control, management, motion commands, the tick),
//! `events` (the Events service), `answers` (the report for each query), `budget` (the answer
//! budget), `drivers` (which drivers are offered, the motion profile guard).

use std::collections::HashMap;
use std::net::SocketAddr;

use tracing::{info, warn};

mod answers;
mod budget;
mod drivers;
mod events;

pub use answers::{services, services_with};
pub use budget::{ANSWER_BURST, ANSWERS_PER_SECOND, MAX_ANSWERS_PER_DATAGRAM, MAX_SENDERS};
use budget::{Answering, Senders};
use drivers::ActiveProfile;
pub use drivers::Drivers;
use events::Subscription;
pub use events::{MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_PER_CLIENT};

use super::arm_file::ArmFile;
use super::motion::{Mode, Motion};
use crate::jaus::core::{
    ConfirmControl, ConfirmControlCode, ConfirmEventRequest, EventType, RejectControl,
    RejectControlCode, Status, short_emergency,
};
use crate::jaus::iop::{ReportTransitionCompleted, SetCurrentPose, TransitionStatus};
use crate::jaus::judp::{self, Broadcast};
use crate::jaus::{DecodeContext, Dialect, JausId, Message};
use crate::model::update::Tolerated;
use crate::net::endpoint::{Endpoint, InboundKind, Numbering};
use crate::net::reports;

/// The simulator's default JAUS ID (the server ID of the wire reference's examples).
pub const DEFAULT_ID: JausId = JausId::new(126, 1, 10);

/// Most peers whose address and sequence counter are remembered (oldest forgotten first).
const MAX_PEERS: usize = 256;

/// Most clients remembered as having set the emergency.
///
/// Management ends an emergency when every client that set it has cleared it, so the
/// component keeps who set it (Junior keeps the same list, unbounded). A vehicle has a handful
/// of OCUs and emergency-stop boxes; 32 is far beyond, and bounds the list against a flood of
/// `SetEmergency` from random IDs. Past it a further setter still stops the arm (stopping never
/// depends on a table) but is not remembered ([`SimStats::emergency_setters_untracked`]), and
/// the emergency is *latched*: it ends only once every remembered setter has cleared it and a
/// `ClearEmergency` comes from the client holding control (the one party an operator can be
/// sure of; an unremembered setter's own clear cannot be told from anyone else's). No setter is
/// ever forgotten to make room, so a flood can neither block an emergency nor clear one it did
/// not set.
pub const MAX_EMERGENCY_SETTERS: usize = 32;

/// A datagram to send (the type the network side sends from).
pub use crate::net::socket::Outgoing;

/// How the component is set up.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The component's JAUS ID.
    pub id: JausId,
    /// Unit codes and `JointNamesList` form the component writes.
    pub dialect: Dialect,
    /// Physics update rate and the highest event rate confirmed, Hz.
    pub rate_hz: f64,
    /// Seed of the sensor noise.
    pub seed: u64,
    /// Pins the joints at these values: no motion, no noise.
    pub hold: Option<Vec<f64>>,
    /// Access-control timeout, s (0 = never).
    pub control_timeout_s: u8,
    /// Event timeout, minutes (0 = never).
    pub event_timeout_min: u8,
    /// Cycles through the presets while nobody holds control (the demo's idle motion).
    pub tour: bool,
    /// The joint drivers offered (listed and obeyed).
    pub drivers: Drivers,
    /// Field behaviours of other implementations to show (none by default).
    pub quirks: Quirks,
}

/// Behaviours of JAUS implementations found in the field (wire reference §9) the simulator
/// can show, so that an OCU, or `jaus-ocu conform`, can be tried against them. The unit
/// codes and joint names of OpenJAUS (§9 C1, C2) are [`SimConfig::dialect`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quirks {
    /// §9 C8 (format.py): a wildcard `QueryServices` is answered by echoing node and
    /// component 255 with no services; asked for its own ID it answers properly.
    pub wildcard_services_echo: bool,
    /// §9 C9 (format.py): `ReportControl` writes the controller's ID in the header's byte
    /// order (component, node, subsystem) instead of JSIDL's (subsystem, node, component).
    pub reversed_control_id: bool,
    /// §9 C13 (the JTS examples): `ReportServices` lists each service in a component record
    /// of its own, all naming the same node and component.
    pub split_services: bool,
    /// §9 C7 (OpenJAUS's rendering): Transport, Discovery and Liveness listed as version 1.0.
    pub core_v1_0: bool,
    /// §9 C11 (format.py): an ACK block carries a copy of the acknowledged payload.
    pub ack_with_payload: bool,
}

impl Quirks {
    /// The names `jaus-ocu sim --quirk` takes, each with its §9 entry.
    pub const NAMES: [(&'static str, &'static str); 5] = [
        ("wildcard-services", "§9 C8"),
        ("reversed-control", "§9 C9"),
        ("split-services", "§9 C13"),
        ("core-v1.0", "§9 C7"),
        ("ack-payload", "§9 C11"),
    ];

    /// Switches on the quirk `name`; the error lists the names.
    pub fn set(&mut self, name: &str) -> Result<(), String> {
        match name {
            "wildcard-services" => self.wildcard_services_echo = true,
            "reversed-control" => self.reversed_control_id = true,
            "split-services" => self.split_services = true,
            "core-v1.0" => self.core_v1_0 = true,
            "ack-payload" => self.ack_with_payload = true,
            _ => {
                let names: Vec<String> = Self::NAMES
                    .iter()
                    .map(|(n, r)| format!("{n} ({r})"))
                    .collect();
                return Err(format!(
                    "no quirk `{name}`: the quirks are {}",
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            id: DEFAULT_ID,
            dialect: Dialect::Jsidl,
            rate_hz: 1000.0,
            seed: 1,
            hold: None,
            control_timeout_s: 5,
            event_timeout_min: 1,
            tour: false,
            drivers: Drivers::ALL,
            quirks: Quirks::default(),
        }
    }
}

/// Counters of what the component received and sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams or blocks that did not frame or decode.
    pub malformed: u64,
    /// Datagrams of another JUDP version or the legacy framing.
    pub foreign_version: u64,
    /// Blocks addressed to another component.
    pub not_for_us: u64,
    /// Messages dropped as duplicates (same source and sequence number within 2 s).
    pub duplicates: u64,
    /// Messages we do not handle (unknown IDs, reports sent to us).
    pub unhandled: u64,
    /// Commands ignored because the sender does not hold control or the state forbids them.
    pub refused_commands: u64,
    /// Of those, position, velocity and tool-point commands from a client that has set no
    /// motion profile.
    pub refused_without_profile: u64,
    /// Datagrams handed to the socket.
    pub sent: u64,
    /// Event messages sent.
    pub events_sent: u64,
    /// ACK blocks sent.
    pub acks_sent: u64,
    /// Messages we could not encode (should stay 0).
    pub encode_errors: u64,
    /// Answers not sent because the sender's answer budget (per datagram, per second) was
    /// spent: ACKs, replies, and requests not acted on because no answer could be sent
    /// (queries, `CreateEvent`, `UpdateEvent`).
    pub replies_refused: u64,
    /// `CreateEvent`s refused (`RejectEventRequest` `CONNECTION_REFUSED`) because the
    /// subscription table or the client's share of it was full.
    pub subscriptions_refused: u64,
    /// `SetEmergency`s from a client past [`MAX_EMERGENCY_SETTERS`]: the arm stopped, the
    /// setter not remembered, the emergency latched.
    pub emergency_setters_untracked: u64,
    /// Peer deviations accepted (short `EmergencyCode`, ACKs with a payload), counted.
    pub tolerated: Tolerated,
}

#[derive(Debug, Clone, Copy)]
struct Controller {
    id: JausId,
    /// Where it asked for control from.
    addr: Option<SocketAddr>,
    authority: u8,
    last_request: f64,
}

#[derive(Debug, Clone, Copy)]
struct ActiveTransition {
    request_id: u8,
    client: JausId,
    /// Where the client asked for it from.
    addr: Option<SocketAddr>,
    from: u8,
    to: u8,
}

/// Whether a message is a command that only the controlling client may give.
fn is_command(m: &Message) -> bool {
    matches!(
        m,
        Message::SetJointPositions(_)
            | Message::SetJointVelocity(_)
            | Message::SetJointEffort(_)
            | Message::SetJointMotionProfile(_)
            | Message::SetEndEffectorVelocityState(_)
            | Message::SetToolOffset(_)
            | Message::SetCurrentPose(_)
            | Message::Standby(_)
            | Message::Resume(_)
            | Message::Shutdown(_)
            | Message::Reset(_)
            | Message::SetAuthority(_)
    )
}

/// The simulated manipulator component.
#[derive(Debug)]
pub struct Component {
    cfg: SimConfig,
    arm: ArmFile,
    ctx: DecodeContext,
    motion: Motion,
    tool_point: [f64; 3],
    status: Status,
    /// Who set the emergency (at most [`MAX_EMERGENCY_SETTERS`]).
    emergency_setters: Vec<JausId>,
    /// A setter past the bound was not remembered: only the controller may end the emergency.
    emergency_latched: bool,
    controller: Option<Controller>,
    events: Vec<Subscription>,
    /// Intake (peers, duplicates, reassembly, ACKs) and framing; counts the transport side.
    endpoint: Endpoint,
    transition: Option<ActiveTransition>,
    /// The motion profile the controlling client set, if it did.
    profile: Option<ActiveProfile>,
    last_step: Option<f64>,
    tour_index: usize,
    tour_next: f64,
    touring: bool,
    /// The component's own counters ([`Component::stats`] adds the endpoint's).
    stats: SimStats,
    last_warning: f64,
    /// Reports computed this tick, by query bytes (at most [`MAX_SUBSCRIPTIONS`] entries).
    cache: HashMap<Vec<u8>, Option<Vec<u8>>>,
    /// Answer budgets of the sender addresses heard recently.
    senders: Senders,
    /// The datagram being handled (`None` outside `handle_datagram`: nothing is an answer).
    answering: Option<Answering>,
    /// ACKs the endpoint framed that the budget did not let out (taken off its counts).
    acks_refused: u64,
}

impl Component {
    /// A component for `arm`, set up by `cfg`.
    pub fn new(arm: ArmFile, cfg: SimConfig) -> Self {
        let start = cfg.hold.clone().unwrap_or_else(|| arm.home.clone());
        let mut motion = Motion::new(&arm.spec, &start, cfg.seed, cfg.hold.is_some());
        motion.set_tool_point(arm.tool_point);
        let ctx = reports::decode_context(&arm.spec);
        let endpoint = Endpoint::addressed(cfg.id, Numbering::OneCounter, MAX_PEERS);
        Self {
            tool_point: arm.tool_point,
            ctx,
            motion,
            arm,
            cfg,
            status: Status::Ready,
            emergency_setters: Vec::new(),
            emergency_latched: false,
            controller: None,
            events: Vec::new(),
            endpoint,
            transition: None,
            profile: None,
            last_step: None,
            tour_index: 0,
            tour_next: 1.0,
            touring: false,
            stats: SimStats::default(),
            last_warning: f64::NEG_INFINITY,
            cache: HashMap::new(),
            senders: Senders::default(),
            answering: None,
            acks_refused: 0,
        }
    }

    /// The component's JAUS ID.
    pub fn id(&self) -> JausId {
        self.cfg.id
    }

    /// The arm it simulates.
    pub fn arm(&self) -> &ArmFile {
        &self.arm
    }

    /// Counters (the component's own, joined with its endpoint's).
    pub fn stats(&self) -> SimStats {
        let e = self.endpoint.stats();
        SimStats {
            received: e.datagrams,
            malformed: e.malformed_with(self.stats.malformed),
            foreign_version: e.foreign_version,
            not_for_us: e.not_for_us,
            duplicates: e.duplicates,
            sent: e.sent - self.acks_refused,
            acks_sent: e.acks_sent - self.acks_refused,
            encode_errors: e.encode_errors + self.stats.encode_errors,
            tolerated: e.tolerated_with(self.stats.tolerated),
            ..self.stats.clone()
        }
    }

    /// Management status.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Joint positions now.
    pub fn positions(&self) -> &[f64] {
        self.motion.positions()
    }

    /// Joint velocities now.
    pub fn velocities(&self) -> &[f64] {
        self.motion.velocities()
    }

    /// What the joints are doing.
    pub fn mode(&self) -> &Mode {
        self.motion.mode()
    }

    /// The client holding control, if any.
    pub fn controller(&self) -> Option<JausId> {
        self.controller.map(|c| c.id)
    }

    /// Number of live event subscriptions.
    pub fn subscriptions(&self) -> usize {
        self.events.len()
    }

    /// Number of clients remembered as having set the emergency.
    pub fn emergency_setters(&self) -> usize {
        self.emergency_setters.len()
    }

    /// When `tick` should run next (s, same clock as `now`).
    pub fn next_deadline(&self) -> f64 {
        let step = self.last_step.unwrap_or(0.0) + 1.0 / self.cfg.rate_hz;
        self.events
            .iter()
            .filter(|e| e.kind == EventType::Periodic)
            .map(|e| e.next_due)
            .fold(step, f64::min)
    }

    fn warn_limited(&mut self, now: f64, what: &str) {
        // Hostile input must not flood the log: at most one line a second, with the counters.
        if now - self.last_warning >= 1.0 {
            self.last_warning = now;
            let s = self.stats();
            warn!(
                "sim {}: {what} (so far: {} malformed, {} foreign version, {} not for us, \
                 {} unhandled, {} refused, {} answers over budget, {} subscriptions refused, \
                 {} emergency setters untracked)",
                self.cfg.id,
                s.malformed,
                s.foreign_version,
                s.not_for_us,
                s.unhandled,
                s.refused_commands,
                s.replies_refused,
                s.subscriptions_refused,
                s.emergency_setters_untracked
            );
        }
    }

    /// Takes one datagram received at `now` from `from`; replies go to `out`, within the
    /// answer budget (module `budget`).
    pub fn handle_datagram(
        &mut self,
        now: f64,
        from: SocketAddr,
        bytes: &[u8],
        out: &mut Vec<Outgoing>,
    ) {
        let refused = self.stats.replies_refused;
        self.answering = Some(Answering {
            addr: from,
            now,
            left: MAX_ANSWERS_PER_DATAGRAM,
        });
        self.take_datagram(now, from, bytes, out);
        self.answering = None;
        let refused = self.stats.replies_refused - refused;
        if refused > 0 {
            self.warn_limited(
                now,
                &format!("answer budget of {from} spent: {refused} answers not sent"),
            );
        }
    }

    fn take_datagram(&mut self, now: f64, from: SocketAddr, bytes: &[u8], out: &mut Vec<Outgoing>) {
        let mut intake = match self.endpoint.receive(now, from, bytes) {
            Ok(i) => i,
            Err(e) => {
                self.warn_limited(now, &format!("dropped a datagram from {from}: {e}"));
                return;
            }
        };
        while let Some(item) = intake.next(&mut self.endpoint) {
            let inbound = match item {
                Ok(i) => i,
                Err(e) => {
                    self.warn_limited(
                        now,
                        &format!("dropped the rest of a datagram from {from}: {e}"),
                    );
                    break;
                }
            };
            let h = inbound.header;
            if let Some(mut bytes) = inbound.ack {
                if self.cfg.quirks.ack_with_payload
                    && let InboundKind::Message(m) = &inbound.kind
                    && let Ok(d) = judp::single(&h.ack(), m)
                {
                    bytes = d; // §9 C11: the acknowledged payload copied into the ACK.
                }
                if self.take_answer() {
                    out.push(Outgoing { to: from, bytes });
                } else {
                    self.acks_refused += 1;
                }
            }
            let message = match inbound.kind {
                InboundKind::Message(m) => m,
                InboundKind::BadSource => {
                    self.warn_limited(
                        now,
                        &format!(
                            "dropped a block from {from} with invalid source ID {}",
                            h.source
                        ),
                    );
                    continue;
                }
                _ => continue,
            };
            let parsed = Message::parse_with(&message, &self.ctx);
            let short = parsed
                .as_ref()
                .err()
                .and_then(|_| short_emergency(&message));
            match (parsed, short) {
                (Ok(m), _) => self.handle_message(now, h.source, m, out),
                (Err(_), Some(m)) => {
                    // §9 C10: an emergency stop with a short code still stops the arm.
                    self.stats.tolerated.short_emergency_code += 1;
                    if self.stats.tolerated.short_emergency_code == 1 {
                        warn!(
                            "sim {}: {} from {} with a {}-byte EmergencyCode (u16 expected); taken as STOP (tolerated dialect deviation, counted)",
                            self.cfg.id,
                            m.name(),
                            h.source,
                            message.len() - 2
                        );
                    }
                    self.handle_message(now, h.source, m, out);
                }
                (Err(e), None) => {
                    self.stats.malformed += 1;
                    self.warn_limited(
                        now,
                        &format!("dropped a message from {} ({from}): {e}", h.source),
                    );
                }
            }
        }
    }

    /// Encodes and sends `m` to `to`, cutting it into multi-packet blocks when it is large; an
    /// answer to the datagram being handled only within its sender's budget.
    fn send(&mut self, to: JausId, m: &Message, out: &mut Vec<Outgoing>) {
        self.send_via(to, None, m, out);
    }

    /// [`Self::send`] to a client we keep state for (a subscription, control, a transition):
    /// at its address in the peer table, else at `known`, where it asked for that state (a
    /// flood of random IDs may have pushed it out of the table).
    fn send_via(
        &mut self,
        to: JausId,
        known: Option<SocketAddr>,
        m: &Message,
        out: &mut Vec<Outgoing>,
    ) {
        let via = self.via(to, known);
        if self.is_answer(to, via) && !self.take_answer() {
            return;
        }
        self.send_outside_budget(to, via, m, out);
    }

    /// Sends `m` whatever the answer budget: events by subscription (bounded by their table).
    fn send_outside_budget(
        &mut self,
        to: JausId,
        via: Option<SocketAddr>,
        m: &Message,
        out: &mut Vec<Outgoing>,
    ) {
        match m.emit_with(self.cfg.dialect) {
            Ok(bytes) => self.send_bytes(to, via, &bytes, out),
            Err(e) => {
                self.stats.encode_errors += 1;
                warn!("sim {}: cannot encode {}: {e}", self.cfg.id, m.name());
            }
        }
    }

    /// Where to send to `to` when the peer table has forgotten it: `known`; `None` while the
    /// table has it (its newest address).
    fn via(&self, to: JausId, known: Option<SocketAddr>) -> Option<SocketAddr> {
        known.filter(|_| !self.endpoint.contains(to))
    }

    fn send_bytes(
        &mut self,
        to: JausId,
        via: Option<SocketAddr>,
        message: &[u8],
        out: &mut Vec<Outgoing>,
    ) {
        let framed = self
            .endpoint
            .send(to, via, Broadcast::None, message, |to, bytes| {
                out.push(Outgoing { to, bytes });
            });
        if let Err(e) = framed {
            warn!("sim {}: cannot frame a block: {e}", self.cfg.id);
        }
    }

    /// Whether a message to `to` (at `via` when given) now is an answer: it goes to the
    /// address of the datagram being handled.
    fn is_answer(&self, to: JausId, via: Option<SocketAddr>) -> bool {
        self.answering
            .is_some_and(|a| via.or_else(|| self.endpoint.peer(to).map(|p| p.addr)) == Some(a.addr))
    }

    /// The address of the datagram being handled.
    fn sender(&self) -> Option<SocketAddr> {
        self.answering.map(|a| a.addr)
    }

    /// Whether the datagram being handled may have one more answer (nothing is spent).
    fn may_answer(&self) -> bool {
        self.answering
            .is_none_or(|a| a.left > 0 && self.senders.has_answer(a.addr, a.now))
    }

    /// Spends one answer of the datagram being handled; `false`, counted, when none is left.
    fn take_answer(&mut self) -> bool {
        let Some(a) = &mut self.answering else {
            return true;
        };
        if a.left > 0 && self.senders.take(a.addr, a.now) {
            a.left -= 1;
            true
        } else {
            self.stats.replies_refused += 1;
            false
        }
    }

    fn holds_control(&self, id: JausId) -> bool {
        self.controller.is_some_and(|c| c.id == id)
    }

    fn handle_message(&mut self, now: f64, from: JausId, m: Message, out: &mut Vec<Outgoing>) {
        if is_command(&m) && !self.holds_control(from) {
            self.stats.refused_commands += 1;
            if let Message::SetCurrentPose(s) = &m {
                self.finish_request(from, None, s.request_id, TransitionStatus::Failed, out);
            }
            self.warn_limited(
                now,
                &format!("ignored {} from {from}: it does not hold control", m.name()),
            );
            return;
        }
        match m {
            Message::RequestControl(r) => self.request_control(now, from, r.authority_code, out),
            Message::ReleaseControl(_) => {
                if self.holds_control(from) {
                    self.lose_control(out);
                } else {
                    // AccessControl v1.1: released already (or never held), the client is
                    // told so (a lost reply to its release is answered by its retry).
                    self.stats.refused_commands += 1;
                    let m = RejectControl {
                        response_code: RejectControlCode::ControlReleased,
                    };
                    self.send(from, &m.into(), out);
                }
            }
            Message::SetAuthority(s) => {
                if let Some(c) = &mut self.controller {
                    c.authority = s.authority_code;
                }
            }
            Message::SetEmergency(_) => {
                // The arm stops first: nothing below (a full table) may stand in its way.
                if self.status != Status::Emergency {
                    info!("sim {}: EMERGENCY set by {from}", self.cfg.id);
                    if self.emergency_setters.is_empty() {
                        self.emergency_latched = false;
                    }
                }
                self.status = Status::Emergency;
                self.stop_motion(out);
                if !self.emergency_setters.contains(&from) {
                    if self.emergency_setters.len() < MAX_EMERGENCY_SETTERS {
                        self.emergency_setters.push(from);
                    } else {
                        self.emergency_latched = true;
                        self.stats.emergency_setters_untracked += 1;
                        self.warn_limited(
                            now,
                            &format!(
                                "EMERGENCY from {from} past {MAX_EMERGENCY_SETTERS} setters: \
                                 latched until the controlling client clears it"
                            ),
                        );
                    }
                }
            }
            Message::ClearEmergency(_) => {
                self.emergency_setters.retain(|id| *id != from);
                let ends = self.emergency_setters.is_empty()
                    && (!self.emergency_latched || self.holds_control(from));
                if self.status == Status::Emergency && ends {
                    info!(
                        "sim {}: emergency cleared by {from}; STANDBY until Resume",
                        self.cfg.id
                    );
                    self.status = Status::Standby;
                }
                if ends {
                    self.emergency_latched = false;
                }
            }
            Message::Standby(_) => {
                if matches!(self.status, Status::Ready | Status::Standby) {
                    self.status = Status::Standby;
                    self.stop_motion(out);
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            Message::Resume(_) => {
                if matches!(self.status, Status::Standby | Status::Ready) {
                    self.status = Status::Ready;
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            Message::Shutdown(_) => {
                self.status = Status::Shutdown;
                self.stop_motion(out);
            }
            Message::Reset(_) => {
                if self.status == Status::Emergency {
                    self.stats.refused_commands += 1;
                } else {
                    self.status = Status::Standby;
                    self.stop_motion(out);
                }
            }
            Message::SetJointPositions(_)
            | Message::SetJointVelocity(_)
            | Message::SetJointEffort(_)
            | Message::SetEndEffectorVelocityState(_) => self.motion_command(now, from, m, out),
            Message::SetJointMotionProfile(s) => self.set_profile(now, from, s),
            Message::SetToolOffset(t) => self.set_tool_point([t.x, t.y, t.z]),
            Message::SetCurrentPose(s) => self.set_current_pose(from, s, out),
            Message::CreateEvent(_)
            | Message::UpdateEvent(_)
            | Message::CancelEvent(_)
            | Message::QueryEvents(_) => self.events_message(now, from, m, out),
            // What is left is queries (answered, nothing else) and messages we do not handle:
            // with no answer to send, neither is worth the work.
            _ if !self.may_answer() => self.stats.replies_refused += 1,
            m => match self.answer(now, &m) {
                Some(report) => self.send(from, &report, out),
                None => {
                    self.stats.unhandled += 1;
                    self.warn_limited(
                        now,
                        &format!("no handler for {} (0x{:04X}) from {from}", m.name(), m.id()),
                    );
                }
            },
        }
    }

    /// `SetJointPositions`, `SetJointVelocity`, `SetJointEffort`, `SetEndEffectorVelocityState`
    /// from the controlling client: not handled for a driver not offered, refused without a
    /// motion profile (position, velocity and tool point) or in a state that forbids motion.
    fn motion_command(&mut self, now: f64, from: JausId, m: Message, out: &mut Vec<Outgoing>) {
        if !self.cfg.drivers.handles(&m) {
            self.stats.unhandled += 1;
            self.warn_limited(
                now,
                &format!("ignored {} from {from}: driver not offered", m.name()),
            );
            return;
        }
        let guarded = matches!(
            m,
            Message::SetJointPositions(_)
                | Message::SetJointVelocity(_)
                | Message::SetEndEffectorVelocityState(_)
        );
        if guarded && !self.has_profile(from) {
            self.stats.refused_commands += 1;
            self.stats.refused_without_profile += 1;
            self.warn_limited(
                now,
                &format!(
                    "ignored {} from {from}: no SetJointMotionProfile from it yet",
                    m.name()
                ),
            );
            return;
        }
        match m {
            Message::SetJointPositions(s) => {
                if self.can_move(s.joint_positions.len()) {
                    self.interrupt_transition(out);
                    let q: Vec<f64> = s.joint_positions.iter().map(|v| v.value).collect();
                    self.motion.move_to(&q);
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            Message::SetJointVelocity(s) => {
                if self.can_move(s.joint_velocities.len()) {
                    self.interrupt_transition(out);
                    let v: Vec<f64> = s.joint_velocities.iter().map(|v| v.value).collect();
                    self.motion.move_at(&v);
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            Message::SetEndEffectorVelocityState(s) => {
                if self.can_move(self.arm.spec.joint_count()) {
                    self.interrupt_transition(out);
                    self.motion.move_tool(drivers::snap_to_zero(s.velocity));
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            Message::SetJointEffort(s) => {
                // PrimitiveManipulator effort control, simplified: effort % of max commands
                // the same % of the joint's max speed.
                if self.can_move(s.joint_efforts.len()) {
                    self.interrupt_transition(out);
                    let v: Vec<f64> = s
                        .joint_efforts
                        .iter()
                        .zip(&self.arm.spec.joints)
                        .map(|(e, j)| e / 100.0 * j.max_speed.unwrap_or(0.5))
                        .collect();
                    self.motion.move_at(&v);
                } else {
                    self.stats.refused_commands += 1;
                }
            }
            _ => {}
        }
    }

    /// `SetToolOffset`: the point the pose and velocity reports and the tool-point driver use.
    fn set_tool_point(&mut self, tool_point: [f64; 3]) {
        self.tool_point = tool_point;
        self.motion.set_tool_point(tool_point);
    }

    fn can_move(&self, count: usize) -> bool {
        self.status == Status::Ready
            && !self.motion.is_held()
            && count == self.arm.spec.joint_count()
    }

    fn request_control(&mut self, now: f64, from: JausId, authority: u8, out: &mut Vec<Outgoing>) {
        let code = match self.controller {
            Some(c) if c.id == from => {
                self.controller = Some(Controller {
                    authority,
                    last_request: now,
                    addr: self.sender().or(c.addr),
                    ..c
                });
                ConfirmControlCode::ControlAccepted
            }
            Some(c) if authority > c.authority => {
                // A higher authority takes control; the previous holder is told.
                info!(
                    "sim {}: control passes from {} to {from} (authority {authority})",
                    self.cfg.id, c.id
                );
                self.lose_control(out);
                self.controller = Some(Controller {
                    id: from,
                    addr: self.sender(),
                    authority,
                    last_request: now,
                });
                ConfirmControlCode::ControlAccepted
            }
            Some(_) => ConfirmControlCode::InsufficientAuthority,
            None => {
                info!(
                    "sim {}: control granted to {from} (authority {authority})",
                    self.cfg.id
                );
                if self.touring {
                    // The operator takes over: the idle tour's move ends and the arm comes to rest.
                    self.touring = false;
                    self.motion.stop_smoothly();
                }
                self.controller = Some(Controller {
                    id: from,
                    addr: self.sender(),
                    authority,
                    last_request: now,
                });
                ConfirmControlCode::ControlAccepted
            }
        };
        self.send(
            from,
            &ConfirmControl {
                response_code: code,
            }
            .into(),
            out,
        );
    }

    /// Releases control (on request or timeout): the holder is told and its motion stops.
    fn lose_control(&mut self, out: &mut Vec<Outgoing>) {
        if let Some(c) = self.controller.take() {
            let m = RejectControl {
                response_code: RejectControlCode::ControlReleased,
            };
            self.send_via(c.id, c.addr, &m.into(), out);
            self.stop_motion(out);
            self.clear_profile();
        }
    }

    /// Stops every motion; a preset transition under way fails.
    fn stop_motion(&mut self, out: &mut Vec<Outgoing>) {
        self.motion.halt();
        self.interrupt_transition(out);
    }

    fn interrupt_transition(&mut self, out: &mut Vec<Outgoing>) {
        if let Some(t) = self.transition.take() {
            self.finish_request(
                t.client,
                t.addr,
                t.request_id,
                TransitionStatus::Failed,
                out,
            );
        }
    }

    fn finish_request(
        &mut self,
        to: JausId,
        addr: Option<SocketAddr>,
        request_id: u8,
        status: TransitionStatus,
        out: &mut Vec<Outgoing>,
    ) {
        let m = ReportTransitionCompleted {
            request_id,
            transition_status: status,
        };
        self.send_via(to, addr, &m.into(), out);
    }

    fn set_current_pose(&mut self, from: JausId, s: SetCurrentPose, out: &mut Vec<Outgoing>) {
        let Some(preset) = self.arm.presets.iter().find(|p| p.id == s.pose_id).cloned() else {
            self.finish_request(
                from,
                None,
                s.request_id,
                TransitionStatus::UnrecognizedPose,
                out,
            );
            return;
        };
        if !self.can_move(preset.positions.len()) {
            self.stats.refused_commands += 1;
            self.finish_request(from, None, s.request_id, TransitionStatus::Failed, out);
            return;
        }
        self.interrupt_transition(out);
        let from_pose = self.nearest_pose_id();
        self.motion.move_to(&preset.positions);
        self.transition = Some(ActiveTransition {
            request_id: s.request_id,
            client: from,
            addr: self.sender(),
            from: from_pose,
            to: s.pose_id,
        });
    }

    /// The pose a transition leaves: the preset the arm is at, else the nearest one (the
    /// demo's idle tour stops between presets when an operator takes control; with 255 as
    /// `StartStateID` no progress could be shown), or 255 without presets.
    fn nearest_pose_id(&self) -> u8 {
        let q = self.motion.positions();
        let dist = |p: &[f64]| -> f64 { p.iter().zip(q).map(|(a, b)| (a - b).powi(2)).sum() };
        self.arm
            .presets
            .iter()
            .min_by(|a, b| dist(&a.positions).total_cmp(&dist(&b.positions)))
            .map_or(255, |p| p.id)
    }

    /// The preset the arm is at (every joint within 1e-6), or 255.
    fn current_pose_id(&self) -> u8 {
        let q = self.motion.positions();
        self.arm
            .presets
            .iter()
            .find(|p| {
                p.positions
                    .iter()
                    .zip(q)
                    .all(|(a, b)| (a - b).abs() <= 1e-6)
            })
            .map_or(255, |p| p.id)
    }

    /// Advances the arm to `now` and sends what is due: events, transition results, control
    /// and event timeouts.
    pub fn tick(&mut self, now: f64, out: &mut Vec<Outgoing>) {
        self.cache.clear();
        let last = self.last_step.unwrap_or(now);
        // Integrate in steps no longer than the physics period; a stalled caller does not
        // make the arm jump (at most 0.1 s is caught up).
        let mut remaining = (now - last).clamp(0.0, 0.1);
        let step = 1.0 / self.cfg.rate_hz;
        while remaining > 1e-12 {
            let dt = remaining.min(step);
            self.motion.step(dt);
            remaining -= dt;
        }
        self.last_step = Some(now);

        if let Some(t) = self.transition
            && self.motion.reached()
        {
            self.transition = None;
            self.finish_request(
                t.client,
                t.addr,
                t.request_id,
                TransitionStatus::Completed,
                out,
            );
        }
        if let Some(c) = self.controller
            && self.cfg.control_timeout_s > 0
            && now - c.last_request > f64::from(self.cfg.control_timeout_s)
        {
            info!("sim {}: control of {} timed out", self.cfg.id, c.id);
            self.lose_control(out);
        }
        if self.cfg.event_timeout_min > 0 {
            let limit = f64::from(self.cfg.event_timeout_min) * 60.0;
            let expired: Vec<Subscription> = self
                .events
                .iter()
                .filter(|e| now - e.refreshed > limit)
                .cloned()
                .collect();
            self.events.retain(|e| now - e.refreshed <= limit);
            for e in expired {
                let m = ConfirmEventRequest {
                    request_id: e.request_id,
                    event_id: e.event_id,
                    confirmed_periodic_rate: 0.0,
                };
                self.send_via(e.client, e.addr, &m.into(), out);
            }
        }
        self.tour(now);
        for i in 0..self.events.len() {
            let e = &self.events[i];
            match e.kind {
                EventType::Periodic if now >= e.next_due => {
                    // Every period that is due is sent now: on a loaded machine the loop comes
                    // round less often than the rate, and one event per pass would make the
                    // rate the loop's. A lag beyond 50 ms (a stalled process) is skipped, not
                    // sent as a burst.
                    let period = 1.0 / e.rate.max(1e-3);
                    while now >= self.events[i].next_due {
                        let mut next = self.events[i].next_due + period;
                        if next < now - 0.05 {
                            next = now + period;
                        }
                        self.events[i].next_due = next;
                        self.fire(now, i, out);
                    }
                }
                EventType::EveryChange => self.fire(now, i, out),
                _ => {}
            }
        }
    }

    fn tour(&mut self, now: f64) {
        if !self.cfg.tour
            || self.controller.is_some()
            || self.status != Status::Ready
            || self.arm.presets.is_empty()
            || self.motion.is_held()
        {
            return;
        }
        let idle = matches!(self.motion.mode(), Mode::Idle) || self.motion.reached();
        if !idle {
            self.tour_next = now + 1.5;
            return;
        }
        if now >= self.tour_next {
            let p = &self.arm.presets[self.tour_index % self.arm.presets.len()];
            self.tour_index += 1;
            let q = p.positions.clone();
            self.motion.move_to(&q);
            self.touring = true;
            self.tour_next = now + 1.5;
        }
    }
}
