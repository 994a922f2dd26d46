//! Issue 13: the OCU against a JAUS peer that behaves like the implementations found in the
//! field, over real loopback UDP. The peer is hand-rolled here: every datagram it sends is
//! built byte by byte from the wire reference's tables (§4.2 framing, the message layouts of
//! §6–§7), and what it receives is read the same way — never with `jaus_ocu::jaus`, so a bug in
//! our codec cannot hide behind the same bug in the peer. Each quirk has its switch:
//! - Junior's duplicate window: a block whose (source, sequence number) repeats within 3 s is
//!   dropped, whatever its destination (§9 C12);
//! - `ReportServices` answering a wildcard query by echoing node/component 255 with no
//!   services, and answering properly when asked with its own node and component (§9 C8);
//! - an ACK block carrying the acknowledged payload, bundled before its `ConfirmControl`
//!   (§9 C11);
//! - `ReportControl` writing the controller ID in the header's byte order (§9 C9);
//! - `SetEmergency`/`ClearEmergency` with a 1-byte or empty `EmergencyCode` (§9 C10), sent by
//!   the peer as a client to our simulator.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests report a failure by panicking; a scenario reads best whole; the field peer is \
              a raw socket outside net/ on purpose"
)]

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use jaus_ocu::model::command::{Command, CommandKind};
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::{ComponentId, ControlState, ManagementState, Outcome};
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host;

mod common;
use common::wait_until;
use common::{outcome_of, pump};

/// The peer's JAUS ID in wire order (§4.3): component 10, node 1, subsystem 126.
const PEER_ID: [u8; 4] = [10, 1, 126, 0];
/// The OCU's default ID, 200.1.1, in wire order.
const OCU_ID: [u8; 4] = [1, 1, 200, 0];

/// Which field behaviours the peer shows.
#[derive(Debug, Clone, Copy, Default)]
struct Quirks {
    junior_duplicates: bool,
    wildcard_services: bool,
    ack_with_payload: bool,
    reversed_control: bool,
    /// Never answers `RequestControl` (control is learnt from `ReportControl` only).
    silent_on_request_control: bool,
}

/// What the peer saw.
#[derive(Debug, Default)]
struct PeerLog {
    /// Blocks dropped by the duplicate window.
    repeats_dropped: u64,
    /// Blocks accepted, by message ID.
    accepted: HashMap<u16, u64>,
    /// Sequence numbers of accepted `QueryIdentification` blocks.
    identification_seqs: Vec<u16>,
}

struct FieldPeer {
    addr: SocketAddr,
    log: Arc<Mutex<PeerLog>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for FieldPeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// One block (§4.2): type/HC 0, data size = 14 + payload, flags, destination, source, payload,
/// sequence number; all little-endian.
fn block(flags: u8, dst: [u8; 4], src: [u8; 4], payload: &[u8], seq: u16) -> Vec<u8> {
    let mut b = vec![0x00];
    b.extend_from_slice(&(14 + payload.len() as u16).to_le_bytes());
    b.push(flags);
    b.extend_from_slice(&dst);
    b.extend_from_slice(&src);
    b.extend_from_slice(payload);
    b.extend_from_slice(&seq.to_le_bytes());
    b
}

/// A JAUS message: ID (u16 LE) then body.
fn msg(id: u16, body: &[u8]) -> Vec<u8> {
    let mut m = id.to_le_bytes().to_vec();
    m.extend_from_slice(body);
    m
}

fn string8(s: &str) -> Vec<u8> {
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// One received block.
struct Rx {
    flags: u8,
    src: [u8; 4],
    payload: Vec<u8>,
    seq: u16,
}

/// The blocks of a datagram, read by §4.2 (stops at the first that does not fit).
fn blocks(d: &[u8]) -> Vec<Rx> {
    let mut out = Vec::new();
    if d.first() != Some(&0x02) {
        return out;
    }
    let mut pos = 1;
    while pos + 14 <= d.len() {
        let size = usize::from(u16::from_le_bytes([d[pos + 1], d[pos + 2]]));
        if size < 14 || pos + size > d.len() {
            break;
        }
        let b = &d[pos..pos + size];
        out.push(Rx {
            flags: b[3],
            src: [b[8], b[9], b[10], b[11]],
            payload: b[12..size - 2].to_vec(),
            seq: u16::from_le_bytes([b[size - 2], b[size - 1]]),
        });
        pos += size;
    }
    out
}

const SERVICES: [&str; 8] = [
    "urn:jaus:jss:core:Transport",
    "urn:jaus:jss:core:Events",
    "urn:jaus:jss:core:AccessControl",
    "urn:jaus:jss:core:Management",
    "urn:jaus:jss:core:Liveness",
    "urn:jaus:jss:core:Discovery",
    "urn:jaus:jss:manipulator:ManipulatorSpecificationService",
    "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor",
];

struct Subscription {
    client: SocketAddr,
    client_id: [u8; 4],
    event_id: u8,
    report: u16,
    period: Option<Duration>,
    next: Instant,
    sequence: u8,
    sent_once: bool,
}

struct PeerState {
    socket: UdpSocket,
    quirks: Quirks,
    seq: u16,
    seen: HashMap<([u8; 4], u16), Instant>,
    controller: Option<[u8; 4]>,
    subs: Vec<Subscription>,
    log: Arc<Mutex<PeerLog>>,
}

impl PeerState {
    fn send(&mut self, to: SocketAddr, dst: [u8; 4], payload: &[u8]) {
        let mut d = vec![0x02];
        d.extend(block(0x01, dst, PEER_ID, payload, self.seq));
        self.seq = self.seq.wrapping_add(1);
        let _ = self.socket.send_to(&d, to);
    }

    /// The report answering query `id` now.
    fn report(id: u16) -> Option<Vec<u8>> {
        Some(match id {
            // ReportJointPositions: 1 joint, type&units 1 = radian, u32 over -8π..8π: 0 rad.
            0x2602 => msg(0x4602, &[1, 1, 0x00, 0x00, 0x00, 0x80]),
            // ReportStatus: Status 1 = READY, Reserved u32.
            0x2002 => msg(0x4002, &[1, 0, 0, 0, 0]),
            _ => return None,
        })
    }

    fn handle(&mut self, from: SocketAddr, rx: &Rx) {
        let now = Instant::now();
        if self.quirks.junior_duplicates {
            self.seen
                .retain(|_, t| now.duration_since(*t) < Duration::from_secs(3));
            if self.seen.insert((rx.src, rx.seq), now).is_some() {
                self.log.lock().unwrap().repeats_dropped += 1;
                return;
            }
        }
        if (rx.flags >> 4) & 3 >= 2 || rx.payload.len() < 2 {
            return;
        }
        let id = u16::from_le_bytes([rx.payload[0], rx.payload[1]]);
        let body = &rx.payload[2..];
        {
            let mut log = self.log.lock().unwrap();
            *log.accepted.entry(id).or_default() += 1;
            if id == 0x2B00 {
                log.identification_seqs.push(rx.seq);
            }
        }
        let to = rx.src;
        match id {
            // QueryIdentification → ReportIdentification: QueryType echoed, Type 10001
            // (VEHICLE), Identification.
            0x2B00 => {
                let mut b = vec![body.first().copied().unwrap_or(2)];
                b.extend_from_slice(&10001u16.to_le_bytes());
                b.extend(string8("field peer"));
                self.send(from, to, &msg(0x4B00, &b));
            }
            // QueryServices → ReportServices.
            0x2B03 => {
                let wildcard = body.get(1) == Some(&255) || body.get(3) == Some(&255);
                let b = if self.quirks.wildcard_services && wildcard {
                    // One node 255, one component 255 (instance 0), no services.
                    vec![1, 255, 1, 255, 0, 0]
                } else {
                    let mut b = vec![1, PEER_ID[1], 1, PEER_ID[0], 0, SERVICES.len() as u8];
                    for uri in SERVICES {
                        b.extend(string8(uri));
                        b.extend_from_slice(&[1, 0]);
                    }
                    b
                };
                self.send(from, to, &msg(0x4B03, &b));
            }
            // QueryManipulatorSpecifications → ReportManipulatorSpecifications: PV 0, first
            // joint revolute (tag 0) with PV 0 and Joint1Offset 0 m (u16 over -10..10 = 0x8000),
            // no further joints.
            0x2600 => self.send(from, to, &msg(0x4600, &[0, 0, 0, 0x00, 0x80, 0])),
            // QueryHeartbeatPulse → ReportHeartbeatPulse.
            0x2202 => self.send(from, to, &msg(0x4202, &[])),
            0x2602 | 0x2002 => {
                let r = Self::report(id).unwrap();
                self.send(from, to, &r);
            }
            // CreateEvent: RequestID, EventType, RequestedPeriodicRate u16, QueryMessage
            // (u32 count + message) → ConfirmEventRequest: RequestID, EventID, rate.
            0x01F0 if body.len() >= 10 => {
                let (request_id, kind) = (body[0], body[1]);
                let rate_raw = u16::from_le_bytes([body[2], body[3]]);
                let query = u16::from_le_bytes([body[8], body[9]]);
                if Self::report(query).is_none() {
                    // RejectEventRequest: PV 1, RequestID, ResponseCode 1 (message not
                    // supported).
                    self.send(from, to, &msg(0x01F4, &[1, request_id, 1]));
                    return;
                }
                let event_id = self
                    .subs
                    .iter()
                    .find(|s| s.client_id == to && s.report == query)
                    .map_or(self.subs.len() as u8, |s| s.event_id);
                self.subs
                    .retain(|s| !(s.client_id == to && s.report == query));
                let hz = f64::from(rate_raw) * 1092.0 / 65535.0;
                self.subs.push(Subscription {
                    client: from,
                    client_id: to,
                    event_id,
                    report: query,
                    period: (kind == 0 && hz > 0.0).then(|| Duration::from_secs_f64(1.0 / hz)),
                    next: now,
                    sequence: 0,
                    sent_once: false,
                });
                let mut b = vec![request_id, event_id];
                b.extend_from_slice(&rate_raw.to_le_bytes());
                self.send(from, to, &msg(0x01F3, &b));
            }
            // RequestControl → ConfirmControl 0 (CONTROL_ACCEPTED).
            0x000D => {
                self.controller = Some(to);
                if self.quirks.silent_on_request_control {
                    return;
                }
                let confirm = msg(0x000F, &[0]);
                if self.quirks.ack_with_payload {
                    // An ACK block (flags: ACK/NAK 3) copying the acknowledged payload, then
                    // the ConfirmControl block, in one datagram.
                    let mut d = vec![0x02];
                    d.extend(block(0x31, to, PEER_ID, &rx.payload, rx.seq));
                    d.extend(block(0x01, to, PEER_ID, &confirm, self.seq));
                    self.seq = self.seq.wrapping_add(1);
                    let _ = self.socket.send_to(&d, from);
                } else {
                    self.send(from, to, &confirm);
                }
            }
            // ReleaseControl → RejectControl 0 (CONTROL_RELEASED).
            0x000E => {
                self.controller = None;
                self.send(from, to, &msg(0x0010, &[0]));
            }
            // QueryControl → ReportControl: JSIDL SubsystemID u16, NodeID, ComponentID,
            // AuthorityCode; reversed: the ID as in a header (component, node, subsystem).
            0x200D => {
                let c = self.controller.unwrap_or([0; 4]);
                let mut b = if self.quirks.reversed_control {
                    c.to_vec()
                } else {
                    vec![c[2], c[3], c[1], c[0]]
                };
                b.push(if self.controller.is_some() { 10 } else { 0 });
                self.send(from, to, &msg(0x400D, &b));
            }
            _ => {}
        }
    }

    fn fire_events(&mut self) {
        let now = Instant::now();
        let mut due = Vec::new();
        for s in &mut self.subs {
            let fire = match s.period {
                Some(p) if now >= s.next => {
                    s.next = now + p;
                    true
                }
                None => !s.sent_once,
                _ => false,
            };
            if fire {
                s.sent_once = true;
                due.push((s.client, s.client_id, s.event_id, s.sequence, s.report));
                s.sequence = s.sequence.wrapping_add(1);
            }
        }
        for (to, id, event_id, seq, query) in due {
            let report = Self::report(query).unwrap();
            // Event: EventID, SequenceNumber, ReportMessage (u32 count + message).
            let mut b = vec![event_id, seq];
            b.extend_from_slice(&(report.len() as u32).to_le_bytes());
            b.extend(report);
            self.send(to, id, &msg(0x41F1, &b));
        }
    }
}

/// Starts the peer at `bind` (port 0: any).
fn field_peer(quirks: Quirks, bind: SocketAddr) -> FieldPeer {
    let socket = UdpSocket::bind(bind).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(5)))
        .unwrap();
    let addr = socket.local_addr().unwrap();
    let log = Arc::new(Mutex::new(PeerLog::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut st = PeerState {
        socket,
        quirks,
        seq: 0,
        seen: HashMap::new(),
        controller: None,
        subs: Vec::new(),
        log: log.clone(),
    };
    let stopping = stop.clone();
    let thread = std::thread::Builder::new()
        .name("field-peer".into())
        .spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !stopping.load(Ordering::Relaxed) {
                if let Ok((n, from)) = st.socket.recv_from(&mut buf) {
                    for rx in blocks(&buf[..n]) {
                        st.handle(from, &rx);
                    }
                }
                st.fire_events();
            }
        })
        .unwrap();
    FieldPeer {
        addr,
        log,
        stop,
        thread: Some(thread),
    }
}

fn ocu(peer: SocketAddr) -> NetHandle {
    NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![peer],
            multicast: None,
            ..ClientConfig::default()
        },
        ..NetConfig::default()
    })
    .unwrap()
}

fn peer_component() -> ComponentId {
    ComponentId {
        subsystem: 126,
        node: 1,
        component: 10,
    }
}

/// Discovery, subscription and a status from the peer, through `h`.
fn goes_live(h: &NetHandle, s: &mut ArmState) {
    assert!(
        pump(h, s, Duration::from_secs(15), |s, _| s.selected
            == Some(peer_component())
            && s.spec.is_some()
            && s.positions.is_some()
            && s.status == ManagementState::Ready),
        "not live against the field peer: {s:?}"
    );
}

#[test]
fn a_junior_duplicate_window_peer_keeps_answering_discovery_and_after_restarts() {
    let peer = field_peer(
        Quirks {
            junior_duplicates: true,
            ..Quirks::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    );
    let addr = peer.addr;
    let h = ocu(addr);
    let mut s = ArmState::default();
    goes_live(&h, &mut s);
    // Three discovery rounds (2 s apart) all reach the peer: none repeats a number.
    wait_until(
        Duration::from_secs(10),
        "three discovery rounds accepted",
        || peer.log.lock().unwrap().identification_seqs.len() >= 3,
    );
    assert_eq!(peer.log.lock().unwrap().repeats_dropped, 0);
    let seqs = peer.log.lock().unwrap().identification_seqs.clone();
    assert!(seqs.windows(2).all(|w| w[0] != w[1]), "{seqs:?}");
    // The OCU restarts (a new process: its counter starts again) and finds the peer.
    h.shutdown(Duration::from_millis(300));
    let h = ocu(addr);
    let mut s = ArmState::default();
    goes_live(&h, &mut s);
    // The peer restarts (same address, empty duplicate table) and is found again.
    drop(peer);
    let peer = field_peer(
        Quirks {
            junior_duplicates: true,
            ..Quirks::default()
        },
        addr,
    );
    wait_until(
        Duration::from_secs(10),
        "the restarted peer asked again",
        || {
            peer.log
                .lock()
                .unwrap()
                .accepted
                .get(&0x2600)
                .copied()
                .unwrap_or(0)
                > 0
                || peer.log.lock().unwrap().identification_seqs.len() >= 2
        },
    );
    let mut s2 = ArmState::default();
    assert!(pump(&h, &mut s2, Duration::from_secs(10), |s, _| s
        .positions
        .is_some()));
}

#[test]
fn a_wildcard_report_services_peer_is_found_under_its_own_id() {
    let peer = field_peer(
        Quirks {
            wildcard_services: true,
            ..Quirks::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    );
    let h = ocu(peer.addr);
    let mut s = ArmState::default();
    goes_live(&h, &mut s);
    assert!(
        s.components
            .keys()
            .all(|id| id.node != 255 && id.component != 255),
        "phantom component: {:?}",
        s.components.keys().collect::<Vec<_>>()
    );
    let (info, _) = &s.components[&peer_component()];
    assert!(info.manipulator, "{info:?}");
    assert!(pump(&h, &mut s, Duration::from_secs(3), |s, _| s
        .stats
        .tolerated
        .wildcard_services
        > 0));
}

#[test]
fn control_works_with_an_ack_carrying_a_payload_and_a_reversed_report_control() {
    let peer = field_peer(
        Quirks {
            ack_with_payload: true,
            ..Quirks::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    );
    let h = ocu(peer.addr);
    let mut s = ArmState::default();
    goes_live(&h, &mut s);
    h.send(Command::RequestControl { authority: 10 }).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::RequestControl,
            Duration::from_secs(5)
        ),
        Some(Outcome::Confirmed)
    );
    assert!(matches!(s.control, ControlState::Held { .. }));
    assert!(pump(&h, &mut s, Duration::from_secs(3), |s, _| s
        .stats
        .tolerated
        .ack_payload
        > 0));
    h.send(Command::ReleaseControl).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::ReleaseControl,
            Duration::from_secs(5)
        ),
        Some(Outcome::Confirmed)
    );

    // A peer that only tells who holds control in a reversed ReportControl.
    let peer = field_peer(
        Quirks {
            reversed_control: true,
            silent_on_request_control: true,
            ..Quirks::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    );
    let h = ocu(peer.addr);
    let mut s = ArmState::default();
    goes_live(&h, &mut s);
    h.send(Command::RequestControl { authority: 10 }).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::RequestControl,
            Duration::from_secs(5)
        ),
        Some(Outcome::Confirmed)
    );
    assert!(pump(&h, &mut s, Duration::from_secs(3), |s, _| s
        .stats
        .tolerated
        .controller_id_order
        > 0));
    assert!(
        s.errors.iter().any(|(_, e)| e.contains("byte order")),
        "{:?}",
        s.errors
    );
}

#[test]
fn an_emergency_stop_with_a_one_byte_or_empty_code_still_stops_the_simulator() {
    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sim_addr = socket.local_addr().unwrap();
    let sim = host::spawn(
        Component::new(ArmFile::demo(), SimConfig::default()),
        socket,
        jaus_ocu::net::fault::Faults::default(),
        1,
    )
    .unwrap();
    let me = UdpSocket::bind("127.0.0.1:0").unwrap();
    me.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let sim_id = PEER_ID; // the simulator's default ID is 126.1.10 too
    let mut seq = 0u16;
    let mut send = |payload: &[u8]| {
        let mut d = vec![0x02];
        d.extend(block(0x01, sim_id, OCU_ID, payload, seq));
        seq += 1;
        me.send_to(&d, sim_addr).unwrap();
    };
    let status = |send: &mut dyn FnMut(&[u8])| -> Option<u8> {
        send(&msg(0x2002, &[]));
        let mut buf = [0u8; 2048];
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok((n, _)) = me.recv_from(&mut buf) {
                for b in blocks(&buf[..n]) {
                    if b.payload.len() >= 3 && b.payload[..2] == [0x02, 0x40] {
                        return Some(b.payload[2]);
                    }
                }
            }
        }
        None
    };
    assert_eq!(status(&mut send), Some(1), "READY first");
    // SetEmergency with a u8 EmergencyCode (1 = STOP).
    send(&msg(0x0006, &[1]));
    assert_eq!(
        status(&mut send),
        Some(5),
        "EMERGENCY after a 1-byte SetEmergency"
    );
    // ClearEmergency with no body at all.
    send(&msg(0x0007, &[]));
    assert_eq!(
        status(&mut send),
        Some(2),
        "STANDBY after an empty ClearEmergency"
    );
    // Never for anything else: a 1-byte SetJointPositions-like body stays malformed.
    let stats = sim.stop().0;
    assert_eq!(stats.tolerated.short_emergency_code, 2);
}
