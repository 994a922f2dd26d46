//! `record::observer::Observer`: the passive decoder replay runs. The heart of "replay equals
//! live": the live client and a simulated arm talk in memory under a fake clock, every datagram
//! both ways goes to the observer as a wire record, and the observer's facts equal the
//! client's, value for value and time for time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use jaus_ocu::jaus::core::{
    ConfirmControl, ConfirmControlCode, Event, QueryType, ReportIdentification, ReportServices,
    ReportStatus, RequestControl, ServiceRec, Status,
};
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions};
use jaus_ocu::jaus::{Dialect, EmbeddedMessage, JausId, Message};
use jaus_ocu::model::session::Session;
use jaus_ocu::model::update::{
    Command, ControlState, LinkState, ManagementState, MarkKind, Update,
};
use jaus_ocu::net::client::{ClientConfig, DEFAULT_OCU_ID};
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::capture::{CaptureEvent, CaptureReader, JUDP_PORT};
use jaus_ocu::record::observer::{GAP_S, Observer};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{self, Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use proptest::prelude::*;

const fn local(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

const OCU: SocketAddr = local(5000);
const SIM: SocketAddr = local(3794);
const SIM_ID: JausId = component::DEFAULT_ID;
const OTHER_OCU: JausId = JausId::new(150, 1, 1);
const START_NS: u64 = 1_700_000_000_000_000_000;

fn capture_records(path: &str) -> Vec<WireRecord> {
    CaptureReader::open(std::path::Path::new(path), JUDP_PORT)
        .expect("the capture opens")
        .filter_map(|e| match e {
            Ok(CaptureEvent::Datagram(d)) => Some(WireRecord {
                t_ns: (d.time * 1e9).round() as u64,
                direction: Direction::Rx,
                peer: d.source,
                bytes: d.payload,
                latched: None,
            }),
            _ => None,
        })
        .collect()
}

fn observe_all(records: &[WireRecord], start_ns: u64) -> (Observer, Vec<Update>) {
    let mut obs = Observer::new(start_ns);
    let mut out = Vec::new();
    for r in records {
        obs.observe(r, &mut out);
    }
    if let Some(last) = records.last() {
        obs.finish(last.t_ns, &mut out);
    }
    (obs, out)
}

#[test]
fn sae_capture_gives_control_status_emergency_and_gap_marks() {
    let records = capture_records("tests/data/SAE_Management_PacketCapture.pcap");
    assert_eq!(records.len(), 22);
    let (obs, updates) = observe_all(&records, records[0].t_ns);

    let selected: Vec<JausId> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Selected { id, .. } => Some(JausId::from(*id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        selected,
        vec![JausId::new(126, 1, 10)],
        "the commanded component"
    );

    let control: Vec<ControlState> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Control { state, .. } => Some(*state),
            _ => None,
        })
        .collect();
    let held = ControlState::Held { authority: 200 };
    assert_eq!(
        control,
        vec![
            ControlState::Requested,
            held,
            ControlState::Released,
            ControlState::Requested,
            held
        ]
    );

    let status: Vec<ManagementState> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Status { state, .. } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(
        status,
        vec![
            ManagementState::Standby,
            ManagementState::Ready,
            ManagementState::Emergency,
            ManagementState::Ready,
            ManagementState::Standby
        ]
    );

    let mut session = Session::new();
    for u in &updates {
        session.apply(u);
    }
    let labels = |kind: MarkKind| -> Vec<String> {
        session
            .marks
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.label.clone())
            .collect()
    };
    assert_eq!(
        labels(MarkKind::Emergency),
        vec![
            "SetEmergency from 126.1.20",
            "EMERGENCY",
            "ClearEmergency from 126.1.20",
            "emergency cleared (READY)"
        ]
    );
    let control_marks = labels(MarkKind::Control);
    assert_eq!(
        control_marks.first().map(String::as_str),
        Some("RequestControl from 126.1.20 (authority 200)")
    );
    assert!(control_marks.contains(&"control granted to 126.1.20 (authority 200)".to_string()));
    assert!(control_marks.contains(&"ReleaseControl from 126.1.20".to_string()));
    assert!(control_marks.contains(&"control released (126.1.20)".to_string()));
    let gaps = labels(MarkKind::Gap);
    assert!(
        gaps.contains(&"no traffic from 126.1.10 for 24.6 s".to_string()),
        "{gaps:?}"
    );
    assert_eq!(gaps.len(), obs.stats().gaps.len());
    assert!(obs.stats().gaps.iter().all(|(a, b)| b - a > GAP_S));
    assert!(session.marks.windows(2).all(|w| w[0].t <= w[1].t));
    let state = session.state_at(63.5);
    assert_eq!(state.status, ManagementState::Emergency);
    assert_eq!(state.control, held);

    let stats = obs.stats();
    assert_eq!(stats.datagrams, 22);
    assert_eq!(stats.malformed, 0);
    assert_eq!(stats.messages.get("ack"), Some(&1));
    assert_eq!(stats.messages.get("ReportStatus"), Some(&5));
    assert_eq!(stats.peers.len(), 2);
}

// -------------------------------------------------------------------------------------------
// The live client and the simulator in memory, everything on the wire recorded.

/// A live session: the client's updates and every datagram both ways as wire records.
struct Live {
    updates: Vec<Update>,
    records: Vec<WireRecord>,
}

fn live_session(dialect: Dialect, seconds: u64) -> Live {
    let cfg = ClientConfig {
        connect: vec![SIM],
        multicast: None,
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, OCU, Duration::from_millis(1), 1);
    net.add_peer(
        SIM,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                dialect,
                ..SimConfig::default()
            },
        ),
    );
    let mut records = Vec::new();
    for ms in 0..seconds * 1000 {
        match ms {
            2000 => net.command(Command::RequestControl { authority: 100 }),
            3000 => net.command(Command::GoToPreset { pose_id: 2 }),
            6000 => net.command(Command::SetEmergency),
            6500 => net.command(Command::ClearEmergency),
            _ => {}
        }
        // The same clock as the network thread: the client's now and the record's t_ns are
        // one instant.
        net.step_with(&mut |p| {
            records.push(WireRecord {
                t_ns: START_NS + p.t_ns,
                direction: p.direction,
                peer: p.peer,
                bytes: p.bytes.to_vec(),
                latched: None,
            });
        });
    }
    Live {
        updates: net.updates,
        records,
    }
}

/// The facts that come from reports: what replay must reproduce exactly.
fn report_facts(updates: &[Update]) -> Vec<Update> {
    updates
        .iter()
        .filter(|u| {
            u.coalesce_key().is_some()
                || matches!(
                    u,
                    Update::Status { .. }
                        | Update::CurrentPose { .. }
                        | Update::Specification { .. }
                        | Update::ToolOffset { .. }
                        | Update::Presets { .. }
                )
        })
        .cloned()
        .collect()
}

fn assert_replay_equals_live(dialect: Dialect) {
    let live = live_session(dialect, 8);
    let (obs, replayed) = observe_all(&live.records, START_NS);
    let want = report_facts(&live.updates);
    let got = report_facts(&replayed);
    let count = |v: &[Update], f: fn(&Update) -> bool| v.iter().filter(|u| f(u)).count();
    assert!(
        count(&want, |u| matches!(u, Update::JointPositions { .. })) > 300,
        "the live session received positions"
    );
    assert!(count(&want, |u| matches!(u, Update::ForceTorque { .. })) > 300);
    assert!(count(&want, |u| matches!(u, Update::Specification { .. })) >= 1);
    assert!(
        count(&want, |u| matches!(u, Update::CurrentPose { .. })) >= 2,
        "the preset transition was reported"
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "fact {i} differs");
    }
    assert_eq!(got.len(), want.len());
    assert_eq!(obs.stats().malformed, 0);
    assert_eq!(obs.selected(), Some(SIM_ID));

    // Control as inferred from the wire follows the client's own account.
    let control = |v: &[Update]| -> Vec<ControlState> {
        v.iter()
            .filter_map(|u| match u {
                Update::Control { state, .. } if *state != ControlState::Released => Some(*state),
                _ => None,
            })
            .collect()
    };
    assert_eq!(control(&replayed), control(&live.updates));
    assert!(control(&replayed).contains(&ControlState::Held { authority: 100 }));

    // And the same session state at any time.
    let (mut a, mut b) = (Session::new(), Session::new());
    for u in &live.updates {
        a.apply(u);
    }
    for u in &replayed {
        b.apply(u);
    }
    for t in [1.0, 2.5, 3.3, 4.75, 6.2, 7.9] {
        let (sa, sb) = (a.state_at(t), b.state_at(t));
        assert_eq!(sa.positions, sb.positions, "positions at {t}");
        assert_eq!(sa.force_torque, sb.force_torque, "F/T at {t}");
        assert_eq!(sa.status, sb.status, "status at {t}");
        assert_eq!(sa.pose, sb.pose, "pose at {t}");
        assert_eq!(sa.spec, sb.spec, "spec at {t}");
    }
    assert!(
        b.marks
            .iter()
            .any(|m| m.label == "SetEmergency from 200.1.1"),
        "{:?}",
        b.marks
    );
}

#[test]
fn replay_of_a_live_session_gives_the_clients_facts_value_for_value() {
    assert_replay_equals_live(Dialect::Jsidl);
}

#[test]
fn replay_of_an_openjaus_dialect_arm_gives_the_clients_facts() {
    assert_replay_equals_live(Dialect::OpenJaus);
}

// -------------------------------------------------------------------------------------------
// Hand-made traffic.

fn record(ms: u64, src: JausId, dst: JausId, seq: u16, m: impl Into<Message>) -> WireRecord {
    WireRecord {
        t_ns: START_NS + ms * 1_000_000,
        direction: Direction::Rx,
        peer: if src == SIM_ID { SIM } else { OCU },
        bytes: judp::single(&Header::new(dst, src, seq), &m.into().emit().unwrap()).unwrap(),
        latched: None,
    }
}

fn positions(v: f64) -> ReportJointPositions {
    ReportJointPositions {
        joint_positions: vec![JointValue::revolute(v)],
    }
}

fn status(s: Status) -> ReportStatus {
    ReportStatus {
        status: s,
        reserved: 0,
    }
}

/// One datagram from the sim to the OCU carrying `m` in `dialect`.
fn record_in(ms: u64, seq: u16, dialect: Dialect, m: &Message) -> WireRecord {
    WireRecord {
        t_ns: START_NS + ms * 1_000_000,
        direction: Direction::Rx,
        peer: SIM,
        bytes: judp::single(
            &Header::new(DEFAULT_OCU_ID, SIM_ID, seq),
            &m.emit_with(dialect).unwrap(),
        )
        .unwrap(),
        latched: None,
    }
}

#[test]
fn reports_decode_with_the_senders_specification() {
    // An all-prismatic arm in the OpenJAUS dialect writes unit code 1 for every joint: only
    // the specification says that means metres (alone, 1 reads as the JSIDL rotary code).
    let mut spec = ArmFile::demo().spec;
    spec.joints
        .retain(|j| j.kind == jaus_ocu::model::arm::JointType::Prismatic);
    assert_eq!(spec.joints.len(), 1);
    let report: Message = ReportJointPositions {
        joint_positions: vec![JointValue::prismatic(0.3)],
    }
    .into();
    let event: Message = Event {
        event_id: 1,
        sequence_number: 1,
        report_message: EmbeddedMessage::with_dialect(&report, Dialect::OpenJaus).unwrap(),
    }
    .into();
    let first_position = |records: &[WireRecord]| {
        observe_all(records, START_NS)
            .1
            .iter()
            .find_map(|u| match u {
                Update::JointPositions { values, .. } => Some(values[0]),
                _ => None,
            })
    };
    let spec_record = record_in(
        0,
        1,
        Dialect::OpenJaus,
        &jaus_ocu::net::reports::spec_report(&spec).into(),
    );
    let with_spec = first_position(&[spec_record, record_in(10, 2, Dialect::OpenJaus, &event)]);
    let without = first_position(&[record_in(10, 2, Dialect::OpenJaus, &event)]);
    let with_spec = with_spec.expect("positions with the specification");
    assert!((with_spec - 0.3).abs() < 1e-6, "{with_spec}");
    assert!(
        without.is_some_and(|v| (v - 0.3).abs() > 1e-3),
        "without the specification the code reads as rotary: {without:?}"
    );
}

#[test]
fn duplicates_within_two_seconds_are_dropped_and_later_repeats_kept() {
    let ocu = DEFAULT_OCU_ID;
    let records = [
        record(0, SIM_ID, ocu, 7, status(Status::Ready)),
        record(10, SIM_ID, ocu, 7, status(Status::Ready)),
        // Same sequence number to another destination: not a duplicate.
        record(20, SIM_ID, OTHER_OCU, 7, status(Status::Ready)),
        record(2500, SIM_ID, ocu, 7, status(Status::Standby)),
    ];
    let (obs, updates) = observe_all(&records, START_NS);
    let n = updates
        .iter()
        .filter(|u| matches!(u, Update::Status { .. }))
        .count();
    assert_eq!(n, 3);
    assert_eq!(obs.stats().duplicates, 1);
}

#[test]
fn reordered_events_are_dropped_like_the_live_client_does() {
    let ocu = DEFAULT_OCU_ID;
    let ev = |seq: u8, v: f64| Event {
        event_id: 3,
        sequence_number: seq,
        report_message: EmbeddedMessage::new(&positions(v).into()).unwrap(),
    };
    let records = [
        record(0, SIM_ID, ocu, 1, status(Status::Ready)),
        record(10, SIM_ID, ocu, 2, ev(5, 0.5)),
        record(20, SIM_ID, ocu, 3, ev(7, 0.7)),
        record(30, SIM_ID, ocu, 4, ev(6, 0.6)),
        record(40, SIM_ID, ocu, 5, ev(8, 0.8)),
    ];
    let (_, updates) = observe_all(&records, START_NS);
    let got: Vec<f64> = updates
        .iter()
        .filter_map(|u| match u {
            Update::JointPositions { values, .. } => Some(values[0]),
            _ => None,
        })
        .collect();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!((got[1] - 0.7).abs() < 1e-4 && (got[2] - 0.8).abs() < 1e-4);
}

#[test]
fn silence_of_the_selected_component_is_a_gap_with_lost_and_live() {
    let ocu = DEFAULT_OCU_ID;
    let mut records = Vec::new();
    let mut seq = 0;
    let mut at = |ms: u64, m: Message| {
        seq += 1;
        record(ms, SIM_ID, ocu, seq, m)
    };
    for k in 0..100 {
        records.push(at(k * 10, positions(0.1).into()));
    }
    // 5 s of silence, 1 s of traffic, then 3 s of silence to the end.
    for k in 0..100 {
        records.push(at(5990 + k * 10, positions(0.2).into()));
    }
    let mut obs = Observer::new(START_NS);
    let mut updates = Vec::new();
    records.push(record(
        9980,
        OTHER_OCU,
        SIM_ID,
        1,
        RequestControl { authority_code: 5 },
    ));
    for r in &records {
        obs.observe(r, &mut updates);
    }
    obs.finish(START_NS + 9_980_000_000, &mut updates);

    let links: Vec<(f64, LinkState)> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Link { t, state } => Some((*t, *state)),
            _ => None,
        })
        .collect();
    let lost_at = 0.99 + GAP_S;
    assert_eq!(links[0], (0.0, LinkState::Connecting));
    assert_eq!(links[1], (0.0, LinkState::Live));
    assert!((links[2].0 - lost_at).abs() < 1e-9 && links[2].1 == LinkState::Lost);
    assert_eq!(links[3], (5.99, LinkState::Live));
    assert_eq!(links[4].1, LinkState::Lost, "the trailing gap");
    assert_eq!(obs.stats().gaps.len(), 2);
    let (a, b) = obs.stats().gaps[0];
    assert!((a - 0.99).abs() < 1e-9 && (b - 5.99).abs() < 1e-9);
    let marks: Vec<(f64, String)> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Mark {
                t,
                kind: MarkKind::Gap,
                label,
            } => Some((*t, label.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(marks.len(), 2);
    assert!((marks[0].0 - lost_at).abs() < 1e-9);
    assert_eq!(marks[0].1, "no traffic from 126.1.10 for 5.0 s");
    assert_eq!(
        marks[1].1,
        "no traffic from 126.1.10 for 3.0 s (to the end)"
    );

    // Live lasts until the threshold; the session keeps one mark per gap.
    let mut s = Session::new();
    for u in &updates {
        s.apply(u);
    }
    assert_eq!(s.state_at(2.5).link, LinkState::Live);
    assert_eq!(s.state_at(3.5).link, LinkState::Lost);
    assert_eq!(s.state_at(6.5).link, LinkState::Live);
    let gap_marks: Vec<&str> = s
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Gap)
        .map(|m| m.label.as_str())
        .collect();
    assert_eq!(gap_marks.len(), 2, "{gap_marks:?}");
}

#[test]
fn components_are_reported_with_the_senders_address() {
    let ocu = DEFAULT_OCU_ID;
    let services = ReportServices {
        nodes: vec![jaus_ocu::jaus::core::NodeServices {
            node_id: 1,
            components: vec![jaus_ocu::jaus::core::ComponentServices {
                component_id: 10,
                instance_id: 0,
                services: vec![ServiceRec::new(
                    "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor",
                    2,
                    0,
                )],
            }],
        }],
    };
    let records = [
        record(
            0,
            SIM_ID,
            ocu,
            1,
            ReportIdentification {
                query_type: QueryType::Subsystem,
                kind: jaus_ocu::jaus::core::IdentificationType::Vehicle,
                identification: "arm".into(),
            },
        ),
        record(5, SIM_ID, ocu, 2, services),
    ];
    let (_, updates) = observe_all(&records, START_NS);
    let info = updates
        .iter()
        .find_map(|u| match u {
            Update::Component { info, .. } => Some(info.clone()),
            _ => None,
        })
        .expect("a component update");
    assert_eq!(info.id, SIM_ID.into());
    assert_eq!(info.address, SIM);
    assert_eq!(info.identification.as_deref(), Some("arm"));
    assert!(info.manipulator);
}

#[test]
fn control_granted_to_another_ocu_says_who() {
    let records = [
        record(
            0,
            OTHER_OCU,
            SIM_ID,
            1,
            RequestControl { authority_code: 50 },
        ),
        record(
            10,
            SIM_ID,
            OTHER_OCU,
            1,
            ConfirmControl {
                response_code: ConfirmControlCode::InsufficientAuthority,
            },
        ),
    ];
    let (_, updates) = observe_all(&records, START_NS);
    let mut s = Session::new();
    for u in &updates {
        s.apply(u);
    }
    let labels: Vec<&str> = s.marks.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "RequestControl from 150.1.1 (authority 50)",
            "control refused to 150.1.1: INSUFFICIENT_AUTHORITY"
        ]
    );
    assert_eq!(s.latest.control, ControlState::Released);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(
        datagrams in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..20),
    ) {
        let mut obs = Observer::new(0);
        let mut out = Vec::new();
        for (i, bytes) in datagrams.into_iter().enumerate() {
            let rec = WireRecord {
                t_ns: i as u64 * 1_000_000,
                direction: Direction::Rx,
                peer: SIM,
                bytes, latched: None,
            };
            obs.observe(&rec, &mut out);
        }
        obs.finish(u64::MAX, &mut out);
        prop_assert!(obs.stats().datagrams > 0);
    }

    #[test]
    fn damaged_real_traffic_never_panics(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        // Valid JUDP with bytes changed: reaches the decoders, not only the framing.
        let records = capture_records("tests/data/SAE_Management_PacketCapture.pcap");
        let mut obs = Observer::new(records[0].t_ns);
        let mut out = Vec::new();
        for (i, r) in records.iter().enumerate() {
            let mut r = r.clone();
            for (at, v) in &flips {
                let n = r.bytes.len();
                if n > 0 {
                    r.bytes[(at + i) % n] ^= v;
                }
            }
            if i % 3 == 0 {
                let n = r.bytes.len();
                r.bytes.truncate(cut % (n + 1));
            }
            obs.observe(&r, &mut out);
        }
        prop_assert_eq!(obs.stats().datagrams, 22);
    }
}
