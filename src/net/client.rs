//! The OCU's protocol logic as a sans-I/O state machine: `(now, datagram | command | tick)`
//! in, datagrams to send and [`Update`]s out. Every rule here is tested with a fake clock
//! (`tests/net_client.rs`); the socket loop around it (`net::thread`) stays thin.
//!
//! Rules, in the order a session meets them:
//! - Discovery: QueryIdentification to the multicast group and every `--connect` address each
//!   `discovery_period`; QueryServices to each responder; every listed component is recorded;
//!   components silent for `discovery_period * 2 + lost_after` are marked lost, not forgotten.
//! - Selection: the configured component, else the first manipulator found. Its
//!   specification is queried until answered (every `retry` s); then tool offset, presets,
//!   control and event timeouts (a few tries each), then one subscription per signal.
//! - Subscriptions: CreateEvent (periodic for samples, every-change for pose and status);
//!   renewed at half the peer's event timeout; a RejectEventRequest or three unanswered
//!   requests fall back to periodic queries; a signal overdue by three periods is stale, and
//!   an event stale for more than a second is re-created (a restarted peer forgot it).
//! - Liveness: QueryHeartbeatPulse every `heartbeat_period`; silence longer than `lost_after`
//!   marks the link lost; the first datagram after that re-queries the specification and
//!   re-creates everything (and re-requests control if we held it).
//! - JUDP: ACK requests answered; duplicates (same source and sequence within 2 s) dropped;
//!   multi-packet messages reassembled with bounded memory; every block of a datagram handled.
//!   Reports from components other than the selected one are counted, never applied; events
//!   arriving out of order (older event sequence number) are dropped.
//! - Commands: each ends in one [`Update::CommandOutcome`]. Control is kept by re-requesting
//!   at a third of the peer's timeout. GoToPreset, Resume and Standby are refused locally
//!   unless control is held.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use crate::jaus::core::*;
use crate::jaus::iop::*;
use crate::jaus::judp::{
    self, AckNak, Broadcast, DataFlags, Datagram, Header, Inbound, Inbox, Reassembler,
};
use crate::jaus::manipulator::*;
use crate::jaus::{DecodeContext, Dialect, EmbeddedMessage, JausId, Message};
use crate::model::arm::ArmSpec;
use crate::model::update::*;
use crate::net::reports;

/// The OCU's default JAUS ID.
pub const DEFAULT_OCU_ID: JausId = JausId::new(200, 1, 1);

/// Most peers remembered (the oldest silent ones are forgotten first).
const MAX_PEERS: usize = 256;
/// How long a (source, sequence) pair counts as a duplicate (the replay observer uses the same).
pub const DUPLICATE_WINDOW_S: f64 = 2.0;
/// Sequence numbers remembered per source for the duplicate check (the observer: per pair).
pub const DUPLICATE_MEMORY: usize = 256;

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
    /// Unicast addresses to query for discovery (networks without multicast).
    pub connect: Vec<SocketAddr>,
    /// The multicast group to query, if multicast is usable.
    pub multicast: Option<SocketAddr>,
    /// The manipulator to select; `None` selects the first one found.
    pub component: Option<JausId>,
    /// Event rates to request.
    pub rates: Rates,
    /// Seconds between discovery rounds.
    pub discovery_period: f64,
    /// Seconds of silence after which the selected manipulator is lost.
    pub lost_after: f64,
    /// Seconds between heartbeat queries to the selected manipulator.
    pub heartbeat_period: f64,
    /// Seconds between retries of unanswered queries.
    pub retry: f64,
    /// Seconds a command waits for its answer.
    pub command_timeout: f64,
    /// Seconds a preset transition may take before it counts as timed out.
    pub transition_timeout: f64,
    /// Dialect of what we send.
    pub dialect: Dialect,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            id: DEFAULT_OCU_ID,
            connect: Vec::new(),
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
        }
    }
}

/// What one step produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Datagrams to send.
    pub datagrams: Vec<(SocketAddr, Vec<u8>)>,
    /// Updates for the UI.
    pub updates: Vec<Update>,
}

impl Output {
    /// Empties both lists.
    pub fn clear(&mut self) {
        self.datagrams.clear();
        self.updates.clear();
    }
}

#[derive(Debug, Clone)]
struct Peer {
    addr: SocketAddr,
    identification: Option<String>,
    services: Vec<(String, u8, u8)>,
    services_asked: f64,
    last_heard: f64,
    lost: bool,
    seq_out: u16,
    recent: VecDeque<(u16, f64)>,
}

impl Peer {
    fn new(addr: SocketAddr, now: f64) -> Self {
        Self {
            addr,
            identification: None,
            services: Vec::new(),
            services_asked: f64::NEG_INFINITY,
            last_heard: now,
            lost: false,
            seq_out: 0,
            recent: VecDeque::new(),
        }
    }

    fn is_manipulator(&self) -> bool {
        reports::is_manipulator(&self.services)
    }

    fn offers(&self, uri: &str) -> bool {
        // Before ReportServices arrives we do not know, so we try.
        self.services.is_empty() || self.services.iter().any(|(u, _, _)| u == uri)
    }

    /// Records `seq` and says whether it was seen within the duplicate window.
    fn duplicate(&mut self, seq: u16, now: f64) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|(_, t)| now - t > DUPLICATE_WINDOW_S)
        {
            self.recent.pop_front();
        }
        if self.recent.iter().any(|(s, _)| *s == seq) {
            return true;
        }
        if self.recent.len() >= DUPLICATE_MEMORY {
            self.recent.pop_front();
        }
        self.recent.push_back((seq, now));
        false
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum SubState {
    /// CreateEvent sent, no answer yet.
    Requesting { sent: f64, tries: u8 },
    /// Events arriving.
    Active {
        event_id: u8,
        rate: f64,
        renew_at: f64,
    },
    /// Periodic queries instead of events.
    Polling { next: f64, rate: f64 },
}

#[derive(Debug, Clone)]
struct Sub {
    signal: Signal,
    query: Message,
    kind: EventType,
    rate: f64,
    request_id: u8,
    state: SubState,
    /// When the subscription last became active (staleness counts from here).
    since: f64,
    last_event_seq: Option<u8>,
    /// Events dropped in a row as older than the last applied.
    old_in_a_row: u8,
}

impl Sub {
    fn period(&self) -> Option<f64> {
        match self.state {
            SubState::Active { rate, .. } if rate > 0.0 => Some(1.0 / rate),
            SubState::Polling { rate, .. } if self.kind == EventType::Periodic => Some(1.0 / rate),
            _ => None,
        }
    }
}

/// A query asked a few times until answered.
#[derive(Debug, Clone, Copy)]
struct Ask {
    answered: bool,
    next: f64,
    tries: u8,
}

impl Ask {
    const NEW: Ask = Ask {
        answered: false,
        next: f64::NEG_INFINITY,
        tries: 0,
    };
}

#[derive(Debug, Clone, Copy)]
struct PendingStatus {
    kind: CommandKind,
    sent: f64,
}

/// The protocol state for the selected manipulator: what has been asked and answered, its
/// subscriptions, control and pending commands. Replaced whole when another arm is selected.
#[derive(Debug)]
struct SelectedArm {
    id: JausId,
    link: LinkState,
    spec: Option<ArmSpec>,
    ctx: DecodeContext,
    spec_next: f64,
    tool: Ask,
    capabilities: Ask,
    preset_specs: Ask,
    control_timeout_ask: Ask,
    event_timeout_ask: Ask,
    presets: Vec<PresetInfo>,
    control_timeout: Option<u8>,
    event_timeout_min: Option<u8>,
    subs: Vec<Sub>,
    last_heard: f64,
    next_heartbeat: f64,
    control: ControlState,
    wanted_authority: Option<u8>,
    control_pending: Option<(CommandKind, f64)>,
    control_renew_at: f64,
    status_pending: Vec<PendingStatus>,
    transition: Option<(u8, f64)>,
    last_sample: HashMap<Signal, f64>,
    stale: HashMap<Signal, bool>,
    cancelled_unknown: HashMap<u8, f64>,
    live_announced: bool,
}

impl SelectedArm {
    fn new(id: JausId, now: f64) -> Self {
        Self {
            id,
            link: LinkState::Connecting,
            spec: None,
            ctx: DecodeContext::NONE,
            spec_next: now,
            tool: Ask::NEW,
            capabilities: Ask::NEW,
            preset_specs: Ask::NEW,
            control_timeout_ask: Ask::NEW,
            event_timeout_ask: Ask::NEW,
            presets: Vec::new(),
            control_timeout: None,
            event_timeout_min: None,
            subs: Vec::new(),
            last_heard: now,
            next_heartbeat: now,
            control: ControlState::Released,
            wanted_authority: None,
            control_pending: None,
            control_renew_at: f64::INFINITY,
            status_pending: Vec::new(),
            transition: None,
            last_sample: HashMap::new(),
            stale: HashMap::new(),
            cancelled_unknown: HashMap::new(),
            live_announced: false,
        }
    }

    fn renew_interval(&self) -> f64 {
        // Half the peer's event timeout; assume the v1.1 minimum of one minute when unknown.
        match self.event_timeout_min {
            Some(0) => 600.0,
            Some(m) => f64::from(m) * 30.0,
            None => 20.0,
        }
    }

    fn control_renew_interval(&self) -> f64 {
        match self.control_timeout {
            Some(0) => 5.0,
            Some(s) => (f64::from(s) / 3.0).max(0.2),
            None => 1.0,
        }
    }
}

/// The OCU's client state machine.
#[derive(Debug)]
pub struct Client {
    cfg: ClientConfig,
    stats: NetStats,
    peers: HashMap<JausId, Peer>,
    reassembler: Reassembler,
    arm: Option<SelectedArm>,
    next_discovery: f64,
    next_stats: f64,
    next_request_id: u8,
    shut_down: bool,
}

fn label<T: std::fmt::Display>(v: T) -> String {
    v.to_string()
}

impl Client {
    /// A client with `cfg`.
    pub fn new(cfg: ClientConfig) -> Self {
        Self {
            cfg,
            stats: NetStats::default(),
            peers: HashMap::new(),
            reassembler: Reassembler::default(),
            arm: None,
            next_discovery: f64::NEG_INFINITY,
            next_stats: 1.0,
            next_request_id: 1,
            shut_down: false,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Our JAUS ID.
    pub fn id(&self) -> JausId {
        self.cfg.id
    }

    /// The selected manipulator.
    pub fn selected(&self) -> Option<JausId> {
        self.arm.as_ref().map(|s| s.id)
    }

    /// Whether [`Command::Shutdown`] ran.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// When [`Client::tick`] should next run.
    pub fn next_deadline(&self) -> f64 {
        let mut d = self.next_discovery.min(self.next_stats);
        if let Some(s) = &self.arm {
            d = d.min(s.next_heartbeat).min(s.control_renew_at);
            if s.spec.is_none() {
                d = d.min(s.spec_next);
            }
            for sub in &s.subs {
                d = d.min(match sub.state {
                    SubState::Requesting { sent, .. } => sent + self.cfg.retry,
                    SubState::Active { renew_at, .. } => renew_at,
                    SubState::Polling { next, .. } => next,
                });
                if let Some(p) = sub.period() {
                    let last = s.last_sample.get(&sub.signal).copied().unwrap_or(sub.since);
                    d = d.min(last + 3.0 * p + 1e-3);
                }
            }
            // Pending commands time out.
            if let Some((_, sent)) = s.control_pending {
                d = d.min(sent + self.cfg.command_timeout);
            }
            for p in &s.status_pending {
                d = d.min(p.sent + self.cfg.command_timeout);
            }
        }
        d
    }

    fn request_id(&mut self) -> u8 {
        let r = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        r
    }

    fn send_to_addr(
        &mut self,
        addr: SocketAddr,
        dest: JausId,
        broadcast: bool,
        m: &Message,
        out: &mut Output,
    ) {
        let seq = match self.peers.get_mut(&dest) {
            Some(p) => {
                p.seq_out = p.seq_out.wrapping_add(1);
                p.seq_out
            }
            None => 0,
        };
        let header = Header {
            broadcast: if broadcast {
                Broadcast::Global
            } else {
                Broadcast::None
            },
            ..Header::new(dest, self.cfg.id, seq)
        };
        match m
            .emit_with(self.cfg.dialect)
            .and_then(|b| judp::single(&header, &b))
        {
            Ok(d) => {
                out.datagrams.push((addr, d));
                self.stats.sent += 1;
            }
            Err(e) => out.updates.push(Update::Error {
                t: 0.0,
                message: format!("could not encode {}: {e}", m.name()),
            }),
        }
    }

    fn send(&mut self, to: JausId, m: impl Into<Message>, out: &mut Output) {
        if let Some(addr) = self.peers.get(&to).map(|p| p.addr) {
            self.send_to_addr(addr, to, false, &m.into(), out);
        }
    }

    /// Takes one datagram received at `now` from `from`.
    pub fn handle_datagram(&mut self, now: f64, from: SocketAddr, bytes: &[u8], out: &mut Output) {
        self.stats.datagrams += 1;
        let dg = match Datagram::new_checked(bytes) {
            Ok(d) => d,
            Err(e) => {
                if judp::is_foreign(&e) {
                    self.stats.foreign_version += 1;
                } else {
                    self.stats.malformed += 1;
                }
                return;
            }
        };
        // Out of `self` while the inbox holds it, so the handlers can take `&mut self`.
        let mut reassembler = std::mem::take(&mut self.reassembler);
        for item in Inbox::new(&dg, self.cfg.id, now, &mut reassembler) {
            let Ok(inbound) = item else {
                self.stats.malformed += 1;
                break;
            };
            let h = *inbound.header();
            match &inbound {
                Inbound::NotForUs(_) => {
                    self.stats.not_for_us += 1;
                    continue;
                }
                Inbound::BadSource(_) => {
                    self.stats.malformed += 1;
                    continue;
                }
                _ => {}
            }
            self.heard(now, h.source, from, out);
            if h.ack_nak == AckNak::Request
                && let Ok(d) = judp::single(&h.ack(), &[])
            {
                out.datagrams.push((from, d));
                self.stats.acks_sent += 1;
                self.stats.sent += 1;
            }
            let Inbound::Message(_, message) = inbound else {
                continue;
            };
            if self
                .peers
                .get_mut(&h.source)
                .is_some_and(|p| p.duplicate(h.sequence, now))
            {
                self.stats.duplicates += 1;
                continue;
            }
            if h.data_flags != DataFlags::Single {
                self.stats.reassembled += 1;
            }
            let ctx = match &self.arm {
                Some(s) if s.id == h.source => s.ctx.clone(),
                _ => DecodeContext::NONE,
            };
            match Message::parse_with(&message, &ctx) {
                Ok(m) => self.handle_message(now, h.source, from, m, out),
                Err(_) => self.stats.malformed += 1,
            }
        }
        self.reassembler = reassembler;
        self.stats.fragments_dropped = self.reassembler.dropped;
    }

    fn heard(&mut self, now: f64, id: JausId, addr: SocketAddr, out: &mut Output) {
        if !self.peers.contains_key(&id) && self.peers.len() >= MAX_PEERS {
            let selected = self.selected();
            let oldest = self
                .peers
                .iter()
                .filter(|(k, _)| Some(**k) != selected)
                .min_by(|a, b| a.1.last_heard.total_cmp(&b.1.last_heard))
                .map(|(k, _)| *k);
            if let Some(k) = oldest {
                self.peers.remove(&k);
            }
        }
        let p = self.peers.entry(id).or_insert_with(|| Peer::new(addr, now));
        p.addr = addr;
        p.last_heard = now;
        if p.lost {
            p.lost = false;
            out.updates.push(Update::ComponentLost {
                t: now,
                id: id.into(),
                lost: false,
            });
        }
        let Some(s) = &mut self.arm else { return };
        if s.id != id {
            return;
        }
        s.last_heard = now;
        if s.link == LinkState::Lost {
            // Back (same or new process): start over, keeping our intent to hold control.
            s.link = LinkState::Connecting;
            s.spec = None;
            s.spec_next = now;
            s.subs.clear();
            s.tool = Ask::NEW;
            s.control_timeout_ask = Ask::NEW;
            s.event_timeout_ask = Ask::NEW;
            s.live_announced = false;
            s.control = ControlState::Released;
            if s.wanted_authority.is_some() {
                s.control = ControlState::Requested;
                s.control_renew_at = now;
            }
            out.updates.push(Update::Link {
                t: now,
                state: LinkState::Connecting,
            });
            out.updates.push(Update::Control {
                t: now,
                state: s.control,
            });
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
            Message::ReportIdentification(r) => {
                if let Some(p) = self.peers.get_mut(&from) {
                    p.identification = Some(r.identification);
                    if now - p.services_asked > self.cfg.discovery_period * 5.0
                        || p.services.is_empty() && now - p.services_asked > self.cfg.retry * 2.0
                    {
                        p.services_asked = now;
                        self.send(from, QueryServices::all(), out);
                    }
                }
            }
            Message::ReportServices(r) => self.services_reported(now, from, addr, r, out),
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
                if self.arm.as_ref().is_some_and(|s| s.id == from) {
                    self.arm_message(now, from, m, out);
                } else if matches!(m, Message::ReportHeartbeatPulse(_)) {
                } else {
                    self.stats.foreign_reports += 1;
                }
            }
        }
    }

    fn services_reported(
        &mut self,
        now: f64,
        from: JausId,
        addr: SocketAddr,
        r: ReportServices,
        out: &mut Output,
    ) {
        for node in &r.nodes {
            for c in &node.components {
                let id = JausId::new(from.subsystem, node.node_id, c.component_id);
                let identification = self.peers.get(&from).and_then(|p| p.identification.clone());
                let peer = self.peers.entry(id).or_insert_with(|| Peer::new(addr, now));
                peer.services = reports::service_list(&c.services);
                if peer.identification.is_none() {
                    peer.identification = identification;
                }
                let info = ComponentInfo {
                    id: id.into(),
                    address: peer.addr,
                    identification: peer.identification.clone(),
                    services: peer.services.clone(),
                    manipulator: peer.is_manipulator(),
                };
                let manipulator = info.manipulator;
                out.updates.push(Update::Component { t: now, info });
                if manipulator && self.arm.is_none() && self.cfg.component.is_none_or(|c| c == id) {
                    self.select(now, id, out);
                }
            }
        }
    }

    fn select(&mut self, now: f64, id: JausId, out: &mut Output) {
        self.teardown(now, out);
        self.arm = Some(SelectedArm::new(id, now));
        out.updates.push(Update::Selected {
            t: now,
            id: id.into(),
        });
        out.updates.push(Update::Link {
            t: now,
            state: LinkState::Connecting,
        });
        out.updates.push(Update::Control {
            t: now,
            state: ControlState::Released,
        });
    }

    /// Cancels the selected arm's events and releases control.
    fn teardown(&mut self, _now: f64, out: &mut Output) {
        let Some(s) = self.arm.take() else { return };
        for sub in &s.subs {
            if let SubState::Active { event_id, .. } = sub.state {
                let rid = self.request_id();
                self.send(
                    s.id,
                    CancelEvent {
                        request_id: rid,
                        event_id,
                    },
                    out,
                );
            }
        }
        if matches!(
            s.control,
            ControlState::Held { .. } | ControlState::Requested
        ) {
            self.send(s.id, ReleaseControl, out);
        }
    }

    fn outcome(out: &mut Output, now: f64, command: CommandKind, outcome: Outcome) {
        out.updates.push(Update::CommandOutcome {
            t: now,
            command,
            outcome,
        });
    }

    /// Takes one command from the UI.
    pub fn handle_command(&mut self, now: f64, cmd: Command, out: &mut Output) {
        if let Command::Shutdown = cmd {
            self.teardown(now, out);
            self.shut_down = true;
            return;
        }
        if let Command::Select(id) = cmd {
            let id = JausId::from(id);
            if self.selected() != Some(id) {
                if !self.peers.contains_key(&id)
                    && let Some(addr) = self.cfg.connect.first().copied()
                {
                    // Not discovered yet: try the first --connect address.
                    self.peers.insert(id, Peer::new(addr, now));
                }
                self.select(now, id, out);
            }
            Self::outcome(out, now, CommandKind::Select, Outcome::Confirmed);
            return;
        }
        let Some(s) = &mut self.arm else {
            let kind = cmd.kind();
            Self::outcome(
                out,
                now,
                kind,
                Outcome::Rejected("no manipulator selected".into()),
            );
            return;
        };
        let id = s.id;
        let held = matches!(s.control, ControlState::Held { .. });
        match cmd {
            Command::RequestControl { authority } => {
                s.wanted_authority = Some(authority);
                s.control = ControlState::Requested;
                s.control_pending = Some((CommandKind::RequestControl, now));
                s.control_renew_at = f64::INFINITY;
                out.updates.push(Update::Control {
                    t: now,
                    state: ControlState::Requested,
                });
                self.send(
                    id,
                    RequestControl {
                        authority_code: authority,
                    },
                    out,
                );
            }
            Command::ReleaseControl => {
                s.wanted_authority = None;
                s.control_renew_at = f64::INFINITY;
                if s.control == ControlState::Released {
                    Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
                } else {
                    s.control_pending = Some((CommandKind::ReleaseControl, now));
                    self.send(id, ReleaseControl, out);
                }
            }
            Command::GoToPreset { pose_id } => {
                if !held {
                    Self::outcome(
                        out,
                        now,
                        CommandKind::GoToPreset,
                        Outcome::Rejected("control is not held: request control first".into()),
                    );
                } else if !s.presets.is_empty() && s.presets.iter().all(|p| p.id != pose_id) {
                    Self::outcome(
                        out,
                        now,
                        CommandKind::GoToPreset,
                        Outcome::Rejected(format!("the arm has no preset with id {pose_id}")),
                    );
                } else {
                    let rid = self.request_id();
                    if let Some(s) = &mut self.arm {
                        s.transition = Some((rid, now));
                    }
                    self.send(
                        id,
                        SetCurrentPose {
                            request_id: rid,
                            pose_id,
                        },
                        out,
                    );
                }
            }
            Command::SetEmergency
            | Command::ClearEmergency
            | Command::Resume
            | Command::Standby => {
                let kind = cmd.kind();
                if matches!(cmd, Command::Resume | Command::Standby) && !held {
                    Self::outcome(
                        out,
                        now,
                        kind,
                        Outcome::Rejected("control is not held: request control first".into()),
                    );
                    return;
                }
                s.status_pending.push(PendingStatus { kind, sent: now });
                let m: Message = match cmd {
                    Command::SetEmergency => SetEmergency { emergency_code: 1 }.into(),
                    Command::ClearEmergency => ClearEmergency { emergency_code: 1 }.into(),
                    Command::Resume => Resume.into(),
                    _ => Standby.into(),
                };
                self.send(id, m, out);
                // The answer is the status that follows.
                self.send(id, QueryStatus, out);
            }
            Command::Select(_) | Command::Shutdown => {}
        }
    }

    fn arm_message(&mut self, now: f64, from: JausId, m: Message, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        match m {
            Message::ReportManipulatorSpecifications(r) => {
                let spec = reports::arm_spec(&r);
                s.ctx = reports::decode_context(&spec);
                let first = s.spec.is_none();
                s.spec = Some(spec.clone());
                out.updates.push(Update::Specification { t: now, spec });
                if first {
                    self.start_subscriptions(now, out);
                }
            }
            Message::ReportToolOffset(t) => {
                s.tool.answered = true;
                out.updates.push(Update::ToolOffset {
                    t: now,
                    point: [t.x, t.y, t.z],
                });
            }
            Message::ReportPresetPoseCapabilities(r) => {
                s.capabilities.answered = true;
                reports::merge_preset_capabilities(&mut s.presets, &r);
                out.updates.push(Update::Presets {
                    t: now,
                    presets: s.presets.clone(),
                });
            }
            Message::ReportPresetPoseSpecifications(r) => {
                s.preset_specs.answered = true;
                reports::merge_preset_specifications(&mut s.presets, &r, from);
                out.updates.push(Update::Presets {
                    t: now,
                    presets: s.presets.clone(),
                });
            }
            Message::ReportTimeout(r) => {
                s.control_timeout_ask.answered = true;
                s.control_timeout = Some(r.timeout);
            }
            Message::ReportEventTimeout(r) => {
                s.event_timeout_ask.answered = true;
                s.event_timeout_min = Some(r.timeout);
                let interval = s.renew_interval();
                for sub in &mut s.subs {
                    if let SubState::Active { renew_at, .. } = &mut sub.state {
                        *renew_at = renew_at.min(now + interval);
                    }
                }
            }
            Message::ConfirmEventRequest(c) => {
                let interval = s.renew_interval();
                match s.subs.iter_mut().find(|x| x.request_id == c.request_id) {
                    Some(sub) => {
                        let was_active = matches!(sub.state, SubState::Active { .. });
                        if was_active
                            && sub.kind == EventType::Periodic
                            && c.confirmed_periodic_rate == 0.0
                        {
                            // The peer cancelled it (event timeout): create it again.
                            sub.state = SubState::Requesting {
                                sent: f64::NEG_INFINITY,
                                tries: 0,
                            };
                            sub.since = now;
                            sub.last_event_seq = None;
                            return;
                        }
                        sub.state = SubState::Active {
                            event_id: c.event_id,
                            rate: c.confirmed_periodic_rate,
                            renew_at: now + interval,
                        };
                        if !was_active {
                            sub.since = now;
                            out.updates.push(Update::Delivery {
                                t: now,
                                signal: sub.signal,
                                delivery: if sub.kind == EventType::Periodic {
                                    Delivery::Event(c.confirmed_periodic_rate)
                                } else {
                                    Delivery::OnChange
                                },
                            });
                        }
                    }
                    None => {
                        // The peer cancelled an event of ours (timeout), or confirms a cancel.
                        if let Some(sub) = s
                            .subs
                            .iter_mut()
                            .find(|x| matches!(x.state, SubState::Active { event_id, .. } if event_id == c.event_id) && c.confirmed_periodic_rate == 0.0 && x.kind == EventType::Periodic)
                        {
                            sub.state = SubState::Requesting { sent: f64::NEG_INFINITY, tries: 0 };
                        }
                    }
                }
            }
            Message::RejectEventRequest(r) => {
                if let Some(sub) = s.subs.iter_mut().find(|x| x.request_id == r.request_id) {
                    let rate = if sub.kind == EventType::Periodic {
                        sub.rate.min(20.0)
                    } else {
                        2.0
                    };
                    sub.state = SubState::Polling { next: now, rate };
                    sub.since = now;
                    out.updates.push(Update::Delivery {
                        t: now,
                        signal: sub.signal,
                        delivery: Delivery::Polling(rate),
                    });
                } else {
                    self.stats.unexpected += 1;
                }
            }
            Message::Event(e) => {
                let known = s.subs.iter_mut().find(|x| matches!(x.state, SubState::Active { event_id, .. } if event_id == e.event_id));
                match known {
                    Some(sub) => {
                        // Drop events older than the last one applied (reordered in flight).
                        // The u8 sequence cannot tell "older" from "128+ events were lost", so
                        // a run of apparently old events is a gap, not reordering: after
                        // three in a row, follow the new numbering.
                        if let Some(last) = sub.last_event_seq {
                            let d = e.sequence_number.wrapping_sub(last);
                            if (d == 0 || d > 128) && sub.old_in_a_row < 2 {
                                sub.old_in_a_row += 1;
                                self.stats.out_of_order += 1;
                                return;
                            }
                        }
                        sub.old_in_a_row = 0;
                        sub.last_event_seq = Some(e.sequence_number);
                    }
                    None => {
                        self.stats.unexpected += 1;
                        // An event we no longer want (e.g. from before a restart): cancel it,
                        // at most once a second per event ID.
                        let last = s
                            .cancelled_unknown
                            .get(&e.event_id)
                            .copied()
                            .unwrap_or(f64::NEG_INFINITY);
                        let setting_up = s
                            .subs
                            .iter()
                            .any(|x| matches!(x.state, SubState::Requesting { .. }));
                        if !setting_up && now - last >= 1.0 {
                            s.cancelled_unknown.insert(e.event_id, now);
                            let rid = self.request_id();
                            self.send(
                                from,
                                CancelEvent {
                                    request_id: rid,
                                    event_id: e.event_id,
                                },
                                out,
                            );
                        }
                    }
                }
                let ctx = self.arm.as_ref().map(|s| s.ctx.clone()).unwrap_or_default();
                match e.report_message.decode(&ctx) {
                    Ok(report) => self.apply_report(now, report, false, out),
                    Err(_) => self.stats.malformed += 1,
                }
            }
            Message::ConfirmControl(c) => {
                let pending = s.control_pending.take();
                match c.response_code {
                    ConfirmControlCode::ControlAccepted => {
                        let authority = s.wanted_authority.unwrap_or(0);
                        let newly = !matches!(s.control, ControlState::Held { .. });
                        s.control = ControlState::Held { authority };
                        s.control_renew_at = now + s.control_renew_interval();
                        if newly {
                            out.updates.push(Update::Control {
                                t: now,
                                state: s.control,
                            });
                        }
                        if let Some((CommandKind::RequestControl, _)) = pending {
                            Self::outcome(
                                out,
                                now,
                                CommandKind::RequestControl,
                                Outcome::Confirmed,
                            );
                        }
                    }
                    code => {
                        s.control = ControlState::Released;
                        s.control_renew_at = f64::INFINITY;
                        s.wanted_authority = None;
                        out.updates.push(Update::Control {
                            t: now,
                            state: s.control,
                        });
                        let reason = format!("the manipulator refused control: {}", label(code));
                        if let Some((CommandKind::RequestControl, _)) = pending {
                            Self::outcome(
                                out,
                                now,
                                CommandKind::RequestControl,
                                Outcome::Rejected(reason),
                            );
                        } else {
                            out.updates.push(Update::Error {
                                t: now,
                                message: format!("control lost: {reason}"),
                            });
                        }
                    }
                }
            }
            Message::RejectControl(r) => {
                let pending = s.control_pending.take();
                let was_held = matches!(s.control, ControlState::Held { .. });
                s.control = ControlState::Released;
                s.control_renew_at = f64::INFINITY;
                out.updates.push(Update::Control {
                    t: now,
                    state: s.control,
                });
                match pending {
                    Some((CommandKind::ReleaseControl, _)) => {
                        Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed)
                    }
                    Some((kind, _)) => {
                        Self::outcome(out, now, kind, Outcome::Rejected(label(r.response_code)))
                    }
                    None if was_held => {
                        s.wanted_authority = None;
                        out.updates.push(Update::Error {
                            t: now,
                            message: format!(
                                "control lost: the manipulator sent RejectControl {}",
                                label(r.response_code)
                            ),
                        });
                    }
                    None => {}
                }
            }
            Message::ReportTransitionCompleted(r) => match s.transition {
                Some((rid, _)) if rid == r.request_id => {
                    s.transition = None;
                    let outcome = if r.transition_status == TransitionStatus::Completed {
                        Outcome::Completed
                    } else {
                        Outcome::Failed(label(r.transition_status))
                    };
                    Self::outcome(out, now, CommandKind::GoToPreset, outcome);
                }
                _ => self.stats.unexpected += 1,
            },
            Message::ReportHeartbeatPulse(_) => {}
            report => self.apply_report(now, report, true, out),
        }
    }

    fn sample(&mut self, now: f64, signal: Signal, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        s.last_sample.insert(signal, now);
        if s.stale.get(&signal).copied().unwrap_or(false) {
            s.stale.insert(signal, false);
            out.updates.push(Update::Stale {
                t: now,
                signal,
                stale: false,
            });
        }
        if !s.live_announced && s.link != LinkState::Lost {
            s.live_announced = true;
            s.link = LinkState::Live;
            out.updates.push(Update::Link {
                t: now,
                state: LinkState::Live,
            });
        }
    }

    fn apply_report(&mut self, now: f64, report: Message, direct: bool, out: &mut Output) {
        let Some((signal, update)) = reports::report_update(now, &report) else {
            if !reports::is_ignored_report(&report) {
                self.stats.unexpected += 1;
            }
            return;
        };
        if let (Message::ReportStatus(r), Some(s)) = (&report, &mut self.arm) {
            let state = reports::status_of(r.status);
            let pending: Vec<PendingStatus> = if direct && !s.status_pending.is_empty() {
                vec![s.status_pending.remove(0)]
            } else {
                Vec::new()
            };
            for p in pending {
                let ok = match p.kind {
                    CommandKind::SetEmergency => state == ManagementState::Emergency,
                    CommandKind::ClearEmergency => state != ManagementState::Emergency,
                    CommandKind::Resume => state == ManagementState::Ready,
                    _ => state == ManagementState::Standby,
                };
                let outcome = if ok {
                    Outcome::Confirmed
                } else {
                    Outcome::Rejected(format!("the manipulator's status is {}", label(r.status)))
                };
                Self::outcome(out, now, p.kind, outcome);
            }
        }
        out.updates.push(update);
        self.sample(now, signal, out);
    }

    fn start_subscriptions(&mut self, now: f64, out: &mut Output) {
        let rates = self.cfg.rates;
        let Some(s) = &self.arm else { return };
        let peer = self.peers.get(&s.id).cloned();
        let offers = |uri: &str| peer.as_ref().is_none_or(|p| p.offers(uri));
        let mut wanted: Vec<(Signal, Message, EventType, f64)> = Vec::new();
        let m = "urn:jaus:jss:manipulator:";
        if offers(&format!("{m}ManipulatorJointPositionSensor")) {
            wanted.push((
                Signal::JointPositions,
                QueryJointPositions.into(),
                EventType::Periodic,
                rates.positions,
            ));
        }
        if offers(&format!("{m}ManipulatorJointVelocitySensor")) {
            wanted.push((
                Signal::JointVelocities,
                QueryJointVelocity.into(),
                EventType::Periodic,
                rates.velocities,
            ));
        }
        if offers(&format!("{m}PrimitiveManipulator")) {
            wanted.push((
                Signal::JointEfforts,
                QueryJointEffort.into(),
                EventType::Periodic,
                rates.efforts,
            ));
        }
        if offers(&format!("{m}ManipulatorJointForceTorqueSensor")) {
            wanted.push((
                Signal::JointForceTorques,
                QueryJointForceTorques.into(),
                EventType::Periodic,
                rates.joint_force_torques,
            ));
        }
        if offers("urn:jaus:jss:iop:ManipulatorEndEffectorForceTorqueSensor") {
            wanted.push((
                Signal::EndEffectorForceTorque,
                QueryManipulatorEndEffectorForceTorque {
                    presence_vector: 0x3f,
                }
                .into(),
                EventType::Periodic,
                rates.force_torque,
            ));
        }
        if offers("urn:jaus:jss:iop:PresetPose") {
            wanted.push((
                Signal::CurrentPose,
                QueryCurrentPose.into(),
                EventType::EveryChange,
                0.0,
            ));
        }
        wanted.push((
            Signal::Status,
            QueryStatus.into(),
            EventType::EveryChange,
            0.0,
        ));
        let mut subs = Vec::new();
        for (signal, query, kind, rate) in wanted
            .into_iter()
            .filter(|w| w.3 > 0.0 || w.2 == EventType::EveryChange)
        {
            let request_id = self.request_id();
            subs.push(Sub {
                signal,
                query,
                kind,
                rate,
                request_id,
                state: SubState::Requesting {
                    sent: f64::NEG_INFINITY,
                    tries: 0,
                },
                since: now,
                last_event_seq: None,
                old_in_a_row: 0,
            });
        }
        if let Some(s) = &mut self.arm {
            s.subs = subs;
        }
        self.drive_subscriptions(now, out);
    }

    fn create_event(&mut self, to: JausId, sub: &Sub, out: &mut Output) {
        let Ok(q) = EmbeddedMessage::with_dialect(&sub.query, self.cfg.dialect) else {
            return;
        };
        let m = CreateEvent {
            request_id: sub.request_id,
            event_type: sub.kind,
            requested_periodic_rate: sub.rate.min(1092.0),
            query_message: q,
        };
        self.send(to, m, out);
    }

    fn drive_subscriptions(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &self.arm else { return };
        let id = s.id;
        let retry = self.cfg.retry;
        let count = s.subs.len();
        for i in 0..count {
            let Some(s) = &mut self.arm else { return };
            let sub = s.subs[i].clone();
            match sub.state {
                SubState::Requesting { sent, tries } if now - sent >= retry => {
                    if tries >= 3 {
                        // No answer to three requests: fall back to queries.
                        let rate = if sub.kind == EventType::Periodic {
                            sub.rate.min(20.0)
                        } else {
                            2.0
                        };
                        s.subs[i].state = SubState::Polling { next: now, rate };
                        s.subs[i].since = now;
                        out.updates.push(Update::Delivery {
                            t: now,
                            signal: sub.signal,
                            delivery: Delivery::Polling(rate),
                        });
                    } else {
                        s.subs[i].state = SubState::Requesting {
                            sent: now,
                            tries: tries + 1,
                        };
                        self.create_event(id, &sub, out);
                    }
                }
                SubState::Active {
                    event_id,
                    rate,
                    renew_at,
                } if now >= renew_at => {
                    // Renew (a CreateEvent for an existing event is an update, Events v1.1).
                    let interval = s.renew_interval();
                    s.subs[i].state = SubState::Active {
                        event_id,
                        rate,
                        renew_at: now + interval,
                    };
                    self.create_event(id, &sub, out);
                }
                SubState::Polling { next, rate } if now >= next => {
                    s.subs[i].state = SubState::Polling {
                        next: now + 1.0 / rate,
                        rate,
                    };
                    self.send(id, sub.query.clone(), out);
                }
                _ => {}
            }
        }
    }

    /// Advances timers at `now`: discovery, retries, renewals, staleness, liveness, commands.
    pub fn tick(&mut self, now: f64, out: &mut Output) {
        if self.shut_down {
            return;
        }
        if now >= self.next_discovery {
            self.next_discovery = now + self.cfg.discovery_period;
            self.discover(out);
        }
        if now >= self.next_stats {
            self.next_stats = now + 1.0;
            out.updates.push(Update::Stats {
                t: now,
                stats: self.stats,
            });
        }
        self.reassembler.expire(now);
        self.stats.fragments_dropped = self.reassembler.dropped;
        self.peer_liveness(now, out);
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        // Liveness of the selected manipulator.
        if s.link != LinkState::Lost && now - s.last_heard > self.cfg.lost_after {
            s.link = LinkState::Lost;
            s.live_announced = false;
            out.updates.push(Update::Link {
                t: now,
                state: LinkState::Lost,
            });
        }
        let mut to_send: Vec<Message> = Vec::new();
        if now >= s.next_heartbeat {
            s.next_heartbeat = now + self.cfg.heartbeat_period;
            to_send.push(QueryHeartbeatPulse.into());
        }
        if s.spec.is_none() && now >= s.spec_next {
            s.spec_next = now + self.cfg.retry;
            to_send.push(
                QueryManipulatorSpecifications {
                    presence_vector: 0x03,
                }
                .into(),
            );
        }
        if s.spec.is_some() {
            let retry = self.cfg.retry;
            let peer = self.peers.get(&id);
            let offers = |uri: &str| peer.is_none_or(|p| p.offers(uri));
            let presets = offers("urn:jaus:jss:iop:PresetPose");
            let tool = offers("urn:jaus:jss:manipulator:ManipulatorToolOffsetService");
            let asks: [(&mut Ask, Message, bool); 5] = [
                (&mut s.tool, QueryToolOffset.into(), tool),
                (
                    &mut s.capabilities,
                    QueryPresetPoseCapabilities.into(),
                    presets,
                ),
                (
                    &mut s.preset_specs,
                    QueryPresetPoseSpecifications.into(),
                    presets,
                ),
                (&mut s.control_timeout_ask, QueryTimeout.into(), true),
                (&mut s.event_timeout_ask, QueryEventTimeout.into(), true),
            ];
            for (ask, m, wanted) in asks {
                if wanted && !ask.answered && ask.tries < 5 && now >= ask.next {
                    ask.tries += 1;
                    ask.next = now + retry * 2.0;
                    to_send.push(m);
                }
            }
        }
        // Control keep-alive and command timeouts.
        if now >= s.control_renew_at {
            s.control_renew_at = now + s.control_renew_interval();
            if let Some(authority) = s.wanted_authority {
                if s.control_pending.is_none() && s.control == ControlState::Requested {
                    s.control_pending = Some((CommandKind::RequestControl, now));
                }
                to_send.push(
                    RequestControl {
                        authority_code: authority,
                    }
                    .into(),
                );
            }
        }
        if let Some((kind, sent)) = s.control_pending
            && now - sent > self.cfg.command_timeout
        {
            s.control_pending = None;
            if kind == CommandKind::ReleaseControl {
                s.control = ControlState::Released;
            } else if s.control == ControlState::Requested {
                s.control = ControlState::Released;
                s.wanted_authority = None;
            }
            out.updates.push(Update::Control {
                t: now,
                state: s.control,
            });
            Self::outcome(out, now, kind, Outcome::TimedOut);
        }
        let timeout = self.cfg.command_timeout;
        let expired: Vec<PendingStatus> = s
            .status_pending
            .iter()
            .filter(|p| now - p.sent > timeout)
            .copied()
            .collect();
        s.status_pending.retain(|p| now - p.sent <= timeout);
        for p in expired {
            Self::outcome(out, now, p.kind, Outcome::TimedOut);
        }
        if let Some((_, sent)) = s.transition
            && now - sent > self.cfg.transition_timeout
        {
            s.transition = None;
            Self::outcome(out, now, CommandKind::GoToPreset, Outcome::TimedOut);
        }
        // Staleness, and re-creating events a restarted peer forgot.
        let mut recreate = Vec::new();
        for (i, sub) in s.subs.iter().enumerate() {
            let Some(period) = sub.period() else { continue };
            let last = s.last_sample.get(&sub.signal).copied().unwrap_or(sub.since);
            let overdue = now - last;
            let stale = overdue > 3.0 * period;
            if stale != s.stale.get(&sub.signal).copied().unwrap_or(false) {
                s.stale.insert(sub.signal, stale);
                out.updates.push(Update::Stale {
                    t: now,
                    signal: sub.signal,
                    stale,
                });
            }
            if stale
                && now - last.max(sub.since) > (3.0 * period).max(1.0)
                && matches!(sub.state, SubState::Active { .. })
                && s.link != LinkState::Lost
            {
                recreate.push(i);
            }
        }
        if !recreate.is_empty() {
            for (i, sub) in s.subs.iter().enumerate() {
                if sub.kind == EventType::EveryChange
                    && matches!(sub.state, SubState::Active { .. })
                {
                    recreate.push(i);
                }
            }
        }
        for i in recreate {
            s.subs[i].state = SubState::Requesting {
                sent: f64::NEG_INFINITY,
                tries: 0,
            };
            s.subs[i].since = now;
            s.subs[i].last_event_seq = None;
        }
        for m in to_send {
            self.send(id, m, out);
        }
        self.drive_subscriptions(now, out);
    }

    fn discover(&mut self, out: &mut Output) {
        let q: Message = QueryIdentification {
            query_type: QueryType::Subsystem,
        }
        .into();
        if let Some(addr) = self.cfg.multicast {
            self.send_to_addr(addr, JausId::BROADCAST, true, &q, out);
        }
        for addr in self.cfg.connect.clone() {
            self.send_to_addr(addr, JausId::BROADCAST, false, &q, out);
        }
    }

    fn peer_liveness(&mut self, now: f64, out: &mut Output) {
        let limit = self.cfg.discovery_period * 2.0 + self.cfg.lost_after;
        for (id, p) in self.peers.iter_mut() {
            if !p.lost
                && now - p.last_heard > limit
                && (!p.services.is_empty() || p.identification.is_some())
            {
                p.lost = true;
                out.updates.push(Update::ComponentLost {
                    t: now,
                    id: (*id).into(),
                    lost: true,
                });
            }
        }
    }
}
