//! The OCU's protocol logic as a sans-I/O state machine: `(now, datagram | command | tick)`
//! in, datagrams to send and [`Update`]s out. Every rule here is tested with a fake clock
//! (`tests/net_client.rs`); the socket loop around it (`net::thread`) stays thin.
//!
//! Rules, in the order a session meets them:
//! - Discovery: `QueryIdentification` to the multicast group and every `--connect` address each
//!   `discovery_period`; for the first 10 s, fast rounds every `retry / 2` to the `--connect`
//!   addresses where no arm answers yet (and the group while none is followed), never to an
//!   arm already followed; a `QueryServices` with each query to an address without an arm;
//!   `QueryServices` to each responder; every listed component is recorded;
//!   components silent for `discovery_period * 2 + lost_after` are marked lost. Discovery
//!   answers are taken only where we asked, within bounds (`discovery` module doc: solicited
//!   reports, queries outstanding, components per report, strangers forgotten first).
//! - Untrusted senders: a followed arm is pinned to the address it answered our own query
//!   from; a block with its ID from elsewhere is counted (`NetStats::spoofed`), said once and
//!   never applied, and re-pins the arm only when the arm is silent where it was found and
//!   answers our services query at the new address (said to the operator).
//! - Addresses (`address`): where each arm is followed is said ([`ArmFact::Address`]); the
//!   same ID answering our own discovery at two addresses is a conflict said in words, the
//!   arm followed at the `--connect` address when exactly one of the two is one, else its
//!   commands but the stop and the release refused naming both addresses. Discovery asks
//!   the `--connect` addresses first, then the implicit ones (`ClientConfig::implicit`).
//! - Following: every manipulator found is followed, up to
//!   [`MAX_ARMS`](crate::model::update::MAX_ARMS) (past it: listed, counted in
//!   [`NetStats::arms_not_followed`], said once). Each followed arm has its own state (one
//!   `FollowedArm` per arm in a map: the rules below are written once, for the arm in hand) and
//!   everything said about it is wrapped in [`Update::Arm`]. Its specification is queried
//!   until answered (every `retry` s); then tool offset, presets, control and event timeouts
//!   (a few tries each), then one subscription per signal.
//! - Focus: the configured component, else the first manipulator found ([`NetFact::Selected`]);
//!   [`Command::Select`] moves it. Commands go to the focused arm only;
//!   [`Command::SetEmergencyAll`] stops every followed arm of the focused arm's subsystem.
//! - Subscriptions: `CreateEvent` (periodic for samples, every-change for pose and status);
//!   renewed at half the peer's event timeout; a `RejectEventRequest` or three unanswered
//!   requests fall back to periodic queries; a signal overdue by three periods (at least
//!   0.5 s, plus the tick's own lateness) is stale, its flag changes at most once a second,
//!   and an event stale for more than a second is re-created (a restarted peer forgot it).
//! - Liveness: `QueryHeartbeatPulse` every `heartbeat_period`; silence longer than `lost_after`
//!   marks the link lost: everything towards the arm stops but one `QueryStatus` every 2 s;
//!   the first datagram after that re-queries the specification and re-creates everything
//!   (and re-requests control if we held it).
//! - Deadlines: [`Client::next_deadline`] is never left in the past by a tick (the network
//!   thread sleeps until it); tests count wake-ups with a fake clock.
//! - Identity: our ID in [`NetFact::Identity`] at the first tick. The arm's own words decide
//!   whether another client uses it: a `ReportControl` naming our ID that we did not cause
//!   (no request of ours, or an authority we did not ask for), a `ConfirmControl` we did not
//!   request, or control we held and kept alive gone to nobody without our release and
//!   without the arm's `RejectControl` — each a conflict at once (the arm is asked who holds
//!   control every 1.5 s, every 1 s while we want it, so within 2 s): every command but the
//!   emergency stop is refused until 15 s pass without another sign. A datagram with our ID
//!   from a stranger's address is only a suspicion (`NetFact::Identity::suspect`, counted in
//!   `NetStats::same_id_strangers`): anyone can forge it, and a forger must not lock the
//!   operator out. Request IDs start at a random value per process.
//! - JUDP, through the shared [`Endpoint`]: ACK requests answered; duplicates (same source and
//!   sequence within 2 s) dropped; multi-packet messages reassembled with bounded memory; every
//!   block of a datagram handled; at most `MAX_COMPONENTS` (256) peers remembered (strangers
//!   that never answered a query of ours forgotten first, never a followed arm). Reports from components other than the
//!   followed arms are counted, never applied; events arriving out of order (older event
//!   sequence number) are dropped.
//!
//! The rules live in one file per concern: `discovery` (peers, selection, liveness of
//! components), `address` (where an arm is followed, one ID at two addresses), `arm` (a followed arm's setup queries, its link, its reports),
//! `subscriptions` (events, polling, staleness), `commands` (operator commands and control).
//! - Commands: each ends in one true [`Remark::CommandOutcome`]: sent again with backoff until
//!   its effect is seen (control reports, the status, the current pose), refusals in words,
//!   `NoAnswer { tries, state }` after the last try (then the state is queried). The status is
//!   queried until known. Control is kept by re-requesting at a third of the peer's timeout
//!   (sooner while a keep-alive is unanswered). `GoToPreset`, Resume and Standby are refused
//!   locally unless control is held. Control is shown held only on the arm's word
//!   (`ConfirmControl`, `ReportControl` naming us); who holds it is the arm's `ReportControl`
//!   ([`ArmFact::Controller`], asked every 1.5 s and after every change we make or see); a
//!   loss says why
//!   ([`ArmFact::ControlLost`]: taken by whom, timed out, released, link lost) and a refusal
//!   names the holder, each waiting up to a second for the arm's answer to `QueryControl`.
//! - Tolerated deviations (wire reference §9) are counted in [`NetStats::tolerated`].

mod address;
mod arm;
mod arm_jog;
mod clearance;
mod commands;
mod discovery;
mod estop;
mod jog_stream;
mod pending;
mod sub;
mod subscriptions;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use crate::jaus::core::{IdentificationType, ReportHeartbeatPulse, ReportIdentification};
use crate::jaus::judp::{self, Broadcast};
use crate::jaus::message::ids;
use crate::jaus::{DecodeContext, Dialect, JausId, Message};
use crate::model::command::{Command, CommandKind};
use crate::model::update::{
    ArmFact, ComponentId, IdConflict, NetFact, NetStats, Outcome, Remark, Update,
};
use crate::net::endpoint::{Endpoint, InboundKind, Numbering};
use crate::net::rng::Rng;

use arm::FollowedArm;
use discovery::Known;
pub use estop::STOP_REPEAT_S;
pub use jog_stream::BRAKE_S;

/// The JAUS ID of `ClientConfig::default()` (the in-memory harness, the screenshot session,
/// tests). OCU processes take one of their own (`cli::identity`): two processes under one ID
/// are one client to the arm.
pub const DEFAULT_OCU_ID: JausId = JausId::new(200, 1, 1);

/// A tick this much later than planned means the process was held up, s (the network thread
/// wakes at least every 50 ms).
pub const STALL_S: f64 = 0.5;

/// Seconds after the start during which discovery rounds come every `retry / 2` s while a
/// `--connect` address has no followed arm.
const FAST_DISCOVERY_FOR: f64 = 10.0;
/// Most peers remembered: strangers that never answered a query of ours are forgotten first,
/// a followed arm never (`discovery` module doc).
const MAX_PEERS: usize = crate::model::update::MAX_COMPONENTS;
/// Seconds without new evidence after which a conflict over our JAUS ID is over.
const CONFLICT_QUIET: f64 = 15.0;
/// Most components taken from one `ReportServices` (a node lists a handful; the format
/// allows 255 × 255).
const MAX_LISTED: usize = 32;
/// Requested event rates, Hz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Joint positions.
    pub positions: f64,
    /// Joint velocities.
    pub velocities: f64,
    /// Joint efforts.
    pub efforts: f64,
    /// Joint forces/torques.
    pub joint_force_torques: f64,
    /// End-effector force/torque.
    pub force_torque: f64,
}

impl Default for Rates {
    fn default() -> Self {
        Self {
            positions: 50.0,
            velocities: 20.0,
            efforts: 10.0,
            joint_force_torques: 10.0,
            force_torque: 100.0,
        }
    }
}

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Our JAUS ID.
    pub id: JausId,
    /// Unicast addresses the operator named for discovery (`--connect`), in order: an arm
    /// that answers at one of these and elsewhere too is followed here.
    pub connect: Vec<SocketAddr>,
    /// Unicast addresses queried as well that nobody named (the local 127.0.0.1:3794 of a
    /// `jaus-ocu sim`, unless `--no-multicast`), after `connect`.
    pub implicit: Vec<SocketAddr>,
    /// The multicast group to query, if multicast is usable.
    pub multicast: Option<SocketAddr>,
    /// The manipulator to focus; `None` focuses the first one found (every one is followed).
    pub component: Option<JausId>,
    /// Event rates to request.
    pub rates: Rates,
    /// Seconds between discovery rounds.
    pub discovery_period: f64,
    /// Seconds of silence after which a followed manipulator is lost.
    pub lost_after: f64,
    /// Seconds between heartbeat queries to each followed manipulator.
    pub heartbeat_period: f64,
    /// Seconds between retries of unanswered queries.
    pub retry: f64,
    /// Seconds a command waits for its answer.
    pub command_timeout: f64,
    /// Seconds a preset transition may take before it counts as timed out.
    pub transition_timeout: f64,
    /// Dialect of what we send.
    pub dialect: Dialect,
    /// What the OCU knows of the vehicle beyond the wire (ground, obstacles, pairs allowed
    /// to touch): the jog's clearance guard keeps off it (`--vehicle`; none: only the arms'
    /// own cylinders are checked).
    pub vehicle: std::sync::Arc<crate::model::clearance::obstacles::VehicleGeometry>,
    /// The clearance marks are measured on a positions report at most this often, s
    /// (default 0.01: a flood of reports costs at most 100 measurements a second; infinite:
    /// never — the jog's guard measures on its own, every command).
    pub clearance_every: f64,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            id: DEFAULT_OCU_ID,
            connect: Vec::new(),
            implicit: Vec::new(),
            multicast: Some(SocketAddr::from((judp::MULTICAST_GROUP, judp::PORT))),
            component: None,
            rates: Rates::default(),
            discovery_period: 2.0,
            lost_after: 3.0,
            heartbeat_period: 0.5,
            retry: 0.5,
            command_timeout: 2.0,
            transition_timeout: 120.0,
            dialect: Dialect::Jsidl,
            vehicle: std::sync::Arc::default(),
            clearance_every: 0.01,
        }
    }
}

/// How full the client's bounded tables are (`probe --json` and the flood tests read it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableSizes {
    /// Peers remembered (at most `MAX_COMPONENTS`).
    pub peers: usize,
    /// Manipulators followed (at most `MAX_ARMS`).
    pub arms: usize,
    /// Services queries outstanding (at most `discovery::MAX_OUTSTANDING`).
    pub outstanding: usize,
    /// Fragments waiting for the rest of their message.
    pub fragments: usize,
    /// Bytes those fragments hold.
    pub fragment_bytes: usize,
}

/// Kinds of untrusted input the log mentions once (then only the counters go on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Warned {
    /// Discovery reports nobody asked for.
    Unsolicited,
    /// A report naming more components than taken.
    TooManyListed,
    /// A followed arm's ID from another address.
    Spoofed,
    /// Our own ID from a stranger's address.
    SameIdStranger,
}

/// What one step produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Datagrams to send.
    pub datagrams: Vec<(SocketAddr, Vec<u8>)>,
    /// Updates for the UI.
    pub updates: Vec<Update>,
    /// The arm in hand during a step about one arm ([`Client::with_arm`]): what the per-arm
    /// rules say is about it.
    in_hand: Option<ComponentId>,
}

impl Output {
    /// Empties both lists.
    pub fn clear(&mut self) {
        self.datagrams.clear();
        self.updates.clear();
    }

    /// Says `fact` about `arm`.
    fn arm(&mut self, arm: impl Into<ComponentId>, fact: impl Into<ArmFact>) {
        self.updates.push(Update::arm(arm.into(), fact));
    }

    /// Says `fact` about the arm in hand: the per-arm rules run only with an arm in hand
    /// ([`Client::with_arm`]); said with none, the fact is about no known arm and is
    /// dropped (a bug, caught by the tests' debug assertion).
    fn fact(&mut self, fact: impl Into<ArmFact>) {
        debug_assert!(self.in_hand.is_some(), "a per-arm fact with no arm in hand");
        if let Some(arm) = self.in_hand {
            self.arm(arm, fact);
        }
    }

    /// Says `fact` of the network.
    fn net(&mut self, fact: impl Into<NetFact>) {
        self.updates.push(Update::net(fact));
    }

    /// Says `r` about the arm in hand, else about the network: what the client says during
    /// a step about one arm (an error, an outcome) is about that arm.
    fn remark(&mut self, r: Remark) {
        match self.in_hand {
            Some(arm) => self.arm(arm, r),
            None => self.net(r),
        }
    }
}

/// The OCU's client state machine.
#[derive(Debug)]
pub struct Client {
    cfg: ClientConfig,
    /// The client's own counters; the endpoint keeps the transport's ([`Client::stats`] joins
    /// them).
    stats: NetStats,
    endpoint: Endpoint<Known>,
    /// Every manipulator followed (at most `MAX_ARMS`), by ID, except the one in hand.
    arms: BTreeMap<JausId, FollowedArm>,
    /// The arm a step is about, taken out of `arms` for the step ([`Client::with_arm`]):
    /// every per-arm rule reads and writes it here, so each rule is written once, for one arm.
    arm: Option<FollowedArm>,
    /// The focused arm: where the operator's commands go.
    focus: Option<JausId>,
    /// Clearance of every followed arm (`clearance`): the jog's guard and the marks.
    clearance: clearance::ClearanceWatch,
    /// Manipulators found past `MAX_ARMS` were reported (once).
    warned_too_many: bool,
    next_discovery: f64,
    /// When the next full discovery round (the multicast group and every `--connect`
    /// address) is due; the fast rounds between go only where no arm answers yet.
    next_full_discovery: f64,
    /// When the first tick ran.
    started: Option<f64>,
    next_stats: f64,
    next_request_id: u8,
    shut_down: bool,
    /// The controller-ID byte order deviation was reported once.
    warned_controller_order: bool,
    /// Another client uses our ID, and when the last evidence of it came.
    conflict: Option<(IdConflict, f64)>,
    /// Datagrams with our ID came from a stranger's address (not the arm's), and when the
    /// last came: shown, nothing refused by it alone.
    suspect: Option<(IdConflict, f64)>,
    /// When the multicast group was last sent a discovery query.
    multicast_asked: f64,
    /// When each `--connect` address was last sent a discovery query.
    connect_asked: Vec<(SocketAddr, f64)>,
    /// Services queries outstanding (to whom, when), oldest first; at most
    /// `discovery::MAX_OUTSTANDING` within the solicitation window.
    services_asked: VecDeque<(JausId, f64)>,
    /// Kinds of untrusted input already said in the log.
    warned: Vec<Warned>,
    /// Blocks from elsewhere that found an arm placed before it was found (its answer at
    /// its real address): no spoofing.
    placed_found: u64,
    /// Our identity was published (first tick).
    identity_announced: bool,
    /// The deadline the last tick left ([`Client::next_deadline`] after it): how late the
    /// next tick runs is the thread's own lateness, a margin for staleness.
    planned: f64,
    /// How late the current tick runs after its planned deadline, s.
    pub(super) lateness: f64,
    /// When this process last woke from a stall (a tick later than [`STALL_S`]: it was
    /// frozen, or starved of the CPU): silence is judged from then, since what the arms sent
    /// meanwhile may still wait unread in the socket.
    pub(super) awake_since: f64,
    /// The JUDP sequence number of the block being handled (`None` outside
    /// [`Client::handle_datagram`], and for a reassembled message).
    pub(super) block_seq: Option<u16>,
}

fn label<T: std::fmt::Display>(v: T) -> String {
    v.to_string()
}

impl Client {
    /// A client with `cfg`.
    pub fn new(cfg: ClientConfig) -> Self {
        Self {
            endpoint: Endpoint::addressed(cfg.id, Numbering::OneCounter, MAX_PEERS),
            clearance: clearance::ClearanceWatch::new(cfg.vehicle.clone()),
            cfg,
            stats: NetStats::default(),
            arms: BTreeMap::new(),
            arm: None,
            focus: None,
            warned_too_many: false,
            next_discovery: f64::NEG_INFINITY,
            next_full_discovery: f64::NEG_INFINITY,
            started: None,
            next_stats: 1.0,
            // A random first request ID: two processes under one ID (which the arm cannot
            // tell apart) must not number their requests alike either.
            next_request_id: (Rng::from_entropy().next_u64() as u8).max(1),
            shut_down: false,
            warned_controller_order: false,
            conflict: None,
            suspect: None,
            multicast_asked: f64::NEG_INFINITY,
            connect_asked: Vec::new(),
            services_asked: VecDeque::new(),
            warned: Vec::new(),
            placed_found: 0,
            identity_announced: false,
            planned: f64::NEG_INFINITY,
            lateness: 0.0,
            awake_since: f64::NEG_INFINITY,
            block_seq: None,
        }
    }

    /// Our socket's local address: a datagram carrying our ID from another port is another
    /// client's (the network thread and the in-memory harness tell the client).
    pub fn set_local_addr(&mut self, addr: SocketAddr) {
        self.endpoint.set_local_port(Some(addr.port()));
    }

    /// The same client, told its socket's local address ([`Client::set_local_addr`]).
    #[must_use]
    pub fn with_local_addr(mut self, addr: SocketAddr) -> Self {
        self.set_local_addr(addr);
        self
    }

    /// Whether another client is seen using our JAUS ID (commands are refused meanwhile).
    pub fn id_conflict(&self) -> Option<&IdConflict> {
        self.conflict.as_ref().map(|(c, _)| c)
    }

    /// Evidence that another client uses our ID, at `now`: said once when it starts (an
    /// update and an error in words), remembered until [`CONFLICT_QUIET`] passes without more.
    pub(super) fn id_conflict_seen(
        &mut self,
        now: f64,
        address: Option<SocketAddr>,
        evidence: String,
        out: &mut Output,
    ) {
        self.stats.id_conflicts += 1;
        if let Some((_, last)) = &mut self.conflict {
            *last = now;
            return;
        }
        let conflict = IdConflict { address, evidence };
        out.remark(Remark::Error {
            t: now,
            message: format!(
                "another JAUS client uses this OCU's ID {}: {}. The arm cannot tell the two \
                 apart; commands other than the emergency stop are refused until it stops. \
                 Give each OCU its own ID (--jaus-id S.N.C, or leave the default: every \
                 process takes a free one).",
                self.cfg.id, conflict.evidence
            ),
        });
        self.conflict = Some((conflict, now));
        self.announce_identity(now, out);
    }

    /// A datagram with our ID from `address`, a stranger's (not a followed arm's): shown
    /// and counted, said once, but it locks nothing by itself — anyone can forge it. The
    /// arm's own messages decide ([`Client::id_conflict_seen`]).
    fn same_id_from_stranger(&mut self, now: f64, address: SocketAddr, out: &mut Output) {
        self.stats.same_id_strangers += 1;
        let evidence = format!(
            "a datagram from {address} carried our ID {} (we did not send it)",
            self.cfg.id
        );
        let new = self.suspect.is_none();
        self.suspect = Some((
            IdConflict {
                address: Some(address),
                evidence: evidence.clone(),
            },
            now,
        ));
        if new {
            self.warn_once(
                now,
                Warned::SameIdStranger,
                format!(
                    "{evidence}: another client may use this OCU's ID, or somebody forged it. Nothing is refused on this alone; commands are refused if the arm's own messages confirm it"
                ),
                out,
            );
            self.announce_identity(now, out);
        }
    }

    /// Says `message` in the log the first time input of kind `kind` is met (after that only
    /// its counter goes on: a flood must not flood the log).
    fn warn_once(&mut self, now: f64, kind: Warned, message: String, out: &mut Output) {
        if self.warned.contains(&kind) {
            return;
        }
        self.warned.push(kind);
        out.remark(Remark::Error { t: now, message });
    }

    fn announce_identity(&mut self, now: f64, out: &mut Output) {
        self.identity_announced = true;
        out.net(NetFact::Identity {
            t: now,
            id: self.cfg.id.into(),
            conflict: self.id_conflict().cloned(),
            suspect: self.suspect.as_ref().map(|(c, _)| c.clone()),
        });
    }

    /// Counters so far.
    pub fn stats(&self) -> NetStats {
        let e = self.endpoint.stats();
        NetStats {
            datagrams: e.datagrams,
            malformed: e.malformed_with(self.stats.malformed),
            foreign_version: e.foreign_version,
            not_for_us: e.not_for_us,
            duplicates: e.duplicates,
            reassembled: e.reassembled,
            fragments_dropped: e.fragments_dropped,
            acks_sent: e.acks_sent,
            sent: e.sent,
            // The other component of an address conflict is no spoofer: counted apart.
            spoofed: e
                .elsewhere
                .saturating_sub(self.stats.address_conflict + self.placed_found),
            peers_evicted: e.evicted,
            tolerated: e.tolerated_with(self.stats.tolerated),
            ..self.stats
        }
    }

    /// How full the bounded tables are now.
    pub fn table_sizes(&self) -> TableSizes {
        let (fragments, fragment_bytes) = self.endpoint.reassembly_held();
        TableSizes {
            peers: self.endpoint.peer_count(),
            arms: self.followed().count(),
            outstanding: self.services_asked.len(),
            fragments,
            fragment_bytes,
        }
    }

    /// Our JAUS ID.
    pub fn id(&self) -> JausId {
        self.cfg.id
    }

    /// The focused manipulator (where commands go).
    pub fn selected(&self) -> Option<JausId> {
        self.focus
    }

    /// Every manipulator followed, by ID.
    pub fn followed(&self) -> impl Iterator<Item = JausId> + '_ {
        self.arms
            .keys()
            .copied()
            .chain(self.arm.as_ref().map(|s| s.id))
    }

    /// Whether `id` is a followed manipulator.
    fn follows(&self, id: JausId) -> bool {
        self.arms.contains_key(&id) || self.arm.as_ref().is_some_and(|s| s.id == id)
    }

    /// Runs `f` with arm `id` in hand (`self.arm`, and `out`'s arm in hand), then puts it
    /// back; every per-arm fact and remark `f` says is about `id` (facts of the network it
    /// says, such as our identity, stay the network's). `None` when `id` is not followed.
    fn with_arm<R>(
        &mut self,
        id: JausId,
        out: &mut Output,
        f: impl FnOnce(&mut Self, &mut Output) -> R,
    ) -> Option<R> {
        debug_assert!(self.arm.is_none(), "one arm in hand at a time");
        let arm = self.arms.remove(&id)?;
        self.arm = Some(arm);
        let outer = out.in_hand.replace(id.into());
        let r = f(self, out);
        out.in_hand = outer;
        if let Some(arm) = self.arm.take() {
            self.arms.insert(arm.id, arm);
        }
        Some(r)
    }

    /// Whether [`Command::Shutdown`] ran.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// When [`Client::tick`] should next run: never in the past after a tick at `now` has
    /// run (a deadline left behind would make the network thread spin; the tests count
    /// wake-ups with a fake clock).
    pub fn next_deadline(&self) -> f64 {
        let mut d = self.next_discovery.min(self.next_stats);
        if !self.identity_announced {
            d = f64::NEG_INFINITY;
        }
        if let Some((_, last)) = &self.conflict {
            d = d.min(last + CONFLICT_QUIET);
        }
        if let Some((_, last)) = &self.suspect {
            d = d.min(last + CONFLICT_QUIET);
        }
        for s in self.arms.values() {
            d = d.min(self.arm_deadline(s));
        }
        d
    }

    fn request_id(&mut self) -> u8 {
        let r = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        r
    }

    /// Encodes `m` and frames it to `dest`: at `via` when given, else at the peer's address.
    fn send_to_addr(
        &mut self,
        via: Option<SocketAddr>,
        dest: JausId,
        broadcast: bool,
        m: &Message,
        out: &mut Output,
    ) {
        let broadcast = if broadcast {
            Broadcast::Global
        } else {
            Broadcast::None
        };
        let datagrams = &mut out.datagrams;
        let sent = m.emit_with(self.cfg.dialect).and_then(|b| {
            self.endpoint.send(dest, via, broadcast, &b, |addr, d| {
                datagrams.push((addr, d));
            })
        });
        if let Err(e) = sent {
            out.remark(Remark::Error {
                t: 0.0,
                message: format!("could not encode {}: {e}", m.name()),
            });
        }
    }

    fn send(&mut self, to: JausId, m: impl Into<Message>, out: &mut Output) {
        if self.endpoint.contains(to) {
            self.send_to_addr(None, to, false, &m.into(), out);
        }
    }

    /// [`Client::send`] with the JUDP ACK requested: the block's sequence number (`None`
    /// when nothing was sent), which the arm's ACK carries back as the evidence that the
    /// command arrived.
    fn send_acked(&mut self, to: JausId, m: impl Into<Message>, out: &mut Output) -> Option<u16> {
        let m = m.into();
        let datagrams = &mut out.datagrams;
        let sent = m.emit_with(self.cfg.dialect).and_then(|b| {
            self.endpoint
                .send_acked(to, &b, |addr, d| datagrams.push((addr, d)))
        });
        match sent {
            Ok(seq) => seq,
            Err(e) => {
                out.remark(Remark::Error {
                    t: 0.0,
                    message: format!("could not encode {}: {e}", m.name()),
                });
                None
            }
        }
    }

    /// Takes one datagram received at `now` from `from`.
    pub fn handle_datagram(&mut self, now: f64, from: SocketAddr, bytes: &[u8], out: &mut Output) {
        let Ok(mut intake) = self.endpoint.receive(now, from, bytes) else {
            return;
        };
        while let Some(item) = intake.next(&mut self.endpoint) {
            let Ok(inbound) = item else { break };
            if inbound.kind == InboundKind::SameId {
                self.same_id_from_stranger(now, from, out);
                continue;
            }
            if let InboundKind::Elsewhere(message) = &inbound.kind {
                let h = inbound.header;
                self.arm_elsewhere(now, h.source, from, message.as_deref(), out);
                continue;
            }
            if !inbound.heard() {
                continue;
            }
            let h = inbound.header;
            self.heard(now, h.source, out);
            if let Some(ack) = inbound.ack {
                out.datagrams.push((from, ack));
            }
            if inbound.kind == InboundKind::Ack && h.ack_nak == judp::AckNak::Ack {
                // The arm took in a block we asked it to acknowledge: a command arrived.
                self.with_arm(h.source, out, |c, out| {
                    c.command_acked(now, h.sequence, out);
                });
                continue;
            }
            let InboundKind::Message(message) = inbound.kind else {
                continue;
            };
            // A discovery report nobody asked for is refused before it is decoded: a flood
            // of 64 KiB ReportServices costs a look at two bytes each.
            match message.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) {
                Some(ids::ReportServices) if !self.services_solicited(h.source, from, now) => {
                    self.unsolicited(now, "ReportServices", out);
                    continue;
                }
                Some(ids::ReportIdentification)
                    if !self.asked_at(from, now) && !self.follows(h.source) =>
                {
                    self.unsolicited(now, "ReportIdentification", out);
                    continue;
                }
                _ => {}
            }
            let ctx = match self.arms.get(&h.source) {
                Some(s) => s.ctx.clone(),
                None => DecodeContext::NONE,
            };
            match Message::parse_with(&message, &ctx) {
                Ok(m) => {
                    // The block's JUDP sequence number orders what it reports (`arm`).
                    self.block_seq = Some(h.sequence);
                    self.handle_message(now, h.source, from, m, out);
                    self.block_seq = None;
                }
                Err(_) => self.stats.malformed += 1,
            }
        }
    }

    fn handle_message(
        &mut self,
        now: f64,
        from: JausId,
        addr: SocketAddr,
        m: Message,
        out: &mut Output,
    ) {
        match m {
            // Discovery answers come from anyone.
            Message::ReportIdentification(r) => self.identified(now, from, addr, r, out),
            Message::ReportServices(r) => self.services_reported(now, from, addr, &r, out),
            Message::QueryIdentification(q) => {
                let reply = ReportIdentification {
                    query_type: q.query_type,
                    kind: IdentificationType::Ocu,
                    identification: "jaus-ocu".into(),
                };
                self.send(from, reply, out);
            }
            Message::QueryHeartbeatPulse(_) => self.send(from, ReportHeartbeatPulse, out),
            m => {
                if self.follows(from) {
                    self.with_arm(from, out, |c, out| c.arm_message(now, from, m, out));
                } else if matches!(m, Message::ReportHeartbeatPulse(_)) {
                } else {
                    self.stats.foreign_reports += 1;
                }
            }
        }
    }

    fn outcome(out: &mut Output, now: f64, command: CommandKind, outcome: Outcome) {
        out.remark(Remark::CommandOutcome {
            t: now,
            command,
            outcome,
        });
    }

    /// A followed arm's messages (the arm in hand), each to the concern it belongs to.
    fn arm_message(&mut self, now: f64, from: JausId, m: Message, out: &mut Output) {
        match m {
            Message::ConfirmEventRequest(_)
            | Message::RejectEventRequest(_)
            | Message::Event(_) => self.subscription_message(now, from, m, out),
            Message::ConfirmControl(_)
            | Message::RejectControl(_)
            | Message::ReportControl(_)
            | Message::ReportTransitionCompleted(_) => self.control_message(now, &m, out),
            m => self.setup_message(now, from, m, out),
        }
    }

    /// Advances timers at `now`: discovery, retries, renewals, staleness, liveness, commands.
    pub fn tick(&mut self, now: f64, out: &mut Output) {
        if self.shut_down {
            return;
        }
        self.lateness = (now - self.planned).max(0.0);
        if self.lateness > STALL_S {
            // Held up (SIGSTOP, a suspended laptop, a starved CPU): the arms' reports of the
            // meantime are still to be read; nothing is judged lost for that silence.
            self.awake_since = now;
        }
        self.timers(now, out);
        self.planned = self.next_deadline();
    }

    fn timers(&mut self, now: f64, out: &mut Output) {
        if !self.identity_announced {
            self.announce_identity(now, out);
        }
        if let Some((_, last)) = &self.suspect
            && now >= last + CONFLICT_QUIET
        {
            self.suspect = None;
            self.announce_identity(now, out);
        }
        if let Some((_, last)) = &self.conflict
            && now >= last + CONFLICT_QUIET
        {
            self.conflict = None;
            out.remark(Remark::Error {
                t: now,
                message: format!(
                    "no sign of another client using our ID {} for {CONFLICT_QUIET:.0} s: \
                     commands are accepted again",
                    self.cfg.id
                ),
            });
            self.announce_identity(now, out);
        }
        if now >= self.next_discovery {
            // Full rounds every discovery period. For the first seconds, while a --connect
            // address has no arm, fast rounds every `retry / 2` s go to such addresses only
            // (and to the group while no arm is found at all): on a lossy network the first
            // answers must not wait whole periods, and an arm already followed is not asked
            // again for them (a dead address in the list must not cost the live arms).
            let first = *self.started.get_or_insert(now);
            let full = now >= self.next_full_discovery;
            if full {
                self.next_full_discovery = now + self.cfg.discovery_period;
            }
            let fast =
                self.unfollowed_connect().next().is_some() && now - first < FAST_DISCOVERY_FOR;
            self.next_discovery = if fast {
                (now + self.cfg.retry / 2.0).min(self.next_full_discovery)
            } else {
                self.next_full_discovery
            };
            self.discover(now, full, out);
        }
        if now >= self.next_stats {
            self.next_stats = now + 1.0;
            out.net(NetFact::Stats {
                t: now,
                stats: Box::new(self.stats()),
            });
        }
        self.endpoint.expire(now);
        self.peer_liveness(now, out);
        let ids: Vec<JausId> = self.arms.keys().copied().collect();
        for id in ids {
            self.with_arm(id, out, |c, out| c.arm_step(now, id, out));
        }
    }

    /// One arm's timers (the arm in hand): queries go out after every timer ran, in this
    /// order: the arm's, then control's; then its subscriptions.
    fn arm_step(&mut self, now: f64, id: JausId, out: &mut Output) {
        // A pending emergency stop first: after a silence it is the first thing sent.
        self.stop_timers(now, out);
        let mut to_send: Vec<Message> = Vec::new();
        self.arm_timers(now, &mut to_send, out);
        self.command_timers(now, &mut to_send, out);
        self.staleness(now, out);
        self.address_timers(now, out);
        for m in to_send {
            self.send(id, m, out);
        }
        self.jog_tick(now, out);
        self.drive_subscriptions(now, out);
    }

    /// Whether `cmd` is refused because another client uses our ID (the emergency stop
    /// never is: any client may stop the arm).
    fn refused_for_conflict(&self, cmd: &Command) -> Option<String> {
        let (c, _) = self.conflict.as_ref()?;
        if matches!(
            cmd,
            Command::SetEmergency
                | Command::SetEmergencyOf(_)
                | Command::SetEmergencyAll
                | Command::Select(_)
                | Command::Shutdown
        ) {
            return None;
        }
        Some(format!(
            "another client uses this OCU's JAUS ID {} ({}); the arm cannot tell us apart. \
             Give each OCU its own ID (--jaus-id S.N.C) and try again",
            self.cfg.id, c.evidence
        ))
    }
}
