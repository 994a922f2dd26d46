//! `record::observer::Observer`: the passive decoder replay runs. The heart of "replay equals
//! live": the live client and a simulated arm talk in memory under a fake clock, every datagram
//! both ways goes to the observer as a wire record, and the observer's facts equal the
//! client's, value for value and time for time. With two arms on one wire each arm's facts
//! equal its own session's, and nothing of one shows under the other.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::time::Duration;

use jaus_ocu::jaus::core::{
    ConfirmControl, ConfirmControlCode, Event, QueryType, ReportIdentification, ReportServices,
    ReportStatus, RequestControl, ServiceRec, SetEmergency, Status,
};
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions};
use jaus_ocu::jaus::{Dialect, EmbeddedMessage, JausId, Message};
use jaus_ocu::model::arm::Mount;
use jaus_ocu::model::command::Command;
use jaus_ocu::model::session::Session;
use jaus_ocu::model::update::*;
use jaus_ocu::model::vehicle::Vehicle;
use jaus_ocu::net::client::{ClientConfig, DEFAULT_OCU_ID};
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::capture::{CaptureEvent, CaptureReader, JUDP_PORT};
use jaus_ocu::record::observer::{GAP_S, Observer};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use proptest::prelude::*;

mod common;
use common::Feed;
#[path = "common/sim_net.rs"]
mod sim_net;
use sim_net::{OCU, OTHER_ID as OTHER_OCU, SIM, SIM_ID, local};

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
    let (obs, wrapped) = observe_all(&records, records[0].t_ns);
    // Every fact about the arm names it; the rest are facts of the network.
    let arm = JausId::new(126, 1, 10);
    for u in &wrapped {
        if let Update::Arm { arm: about, .. } = u {
            assert_eq!(*about, arm.into(), "{u:?}");
        }
        if let Some(Remark::Mark { .. }) = u.remark() {
            assert_eq!(
                u.arm_id(),
                Some(arm.into()),
                "a mark is about the arm: {u:?}"
            );
        }
    }
    let updates = wrapped.clone();

    let selected: Vec<JausId> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Net(NetFact::Selected { id, .. }) => Some(JausId::from(*id)),
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
            Update::Arm {
                fact: ArmFact::Control { state, .. },
                ..
            } => Some(*state),
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
            Update::Arm {
                fact: ArmFact::Status { state, .. },
                ..
            } => Some(*state),
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
    for u in &wrapped {
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
    assert!(obs.stats().gaps.iter().all(|g| g.end - g.start > GAP_S));
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
    // One arm (the OCU 126.1.20 commands, so it is no arm), its counts apart.
    assert_eq!(obs.arms().collect::<Vec<_>>(), vec![arm]);
    let counts = &stats.arms[&arm.into()];
    assert_eq!(counts.sent.get("ReportStatus"), Some(&5));
    assert!(counts.received.contains_key("RequestControl"), "{counts:?}");
    assert_eq!(counts.gaps.len(), stats.gaps.len());
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
                    Update::Arm {
                        fact: ArmFact::Status { .. },
                        ..
                    } | Update::Arm {
                        fact: ArmFact::CurrentPose { .. },
                        ..
                    } | Update::Arm {
                        fact: ArmFact::Specification { .. },
                        ..
                    } | Update::Arm {
                        fact: ArmFact::ToolOffset { .. },
                        ..
                    } | Update::Arm {
                        fact: ArmFact::Presets { .. },
                        ..
                    }
                )
        })
        .cloned()
        .collect()
}

fn assert_replay_equals_live(dialect: Dialect) {
    let live = live_session(dialect, 8);
    let (obs, wrapped) = observe_all(&live.records, START_NS);
    assert!(
        wrapped
            .iter()
            .all(|u| u.arm_id().is_none_or(|arm| arm == SIM_ID.into())),
        "every per-arm fact names the arm"
    );
    let replayed = wrapped.clone();
    let want = report_facts(&live.updates);
    let got = report_facts(&replayed);
    let count = |v: &[Update], f: fn(&Update) -> bool| v.iter().filter(|u| f(u)).count();
    assert!(
        count(&want, |u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::JointPositions { .. },
                ..
            }
        )) > 300,
        "the live session received positions"
    );
    assert!(
        count(&want, |u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::ForceTorque { .. },
                ..
            }
        )) > 300
    );
    assert!(
        count(&want, |u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::Specification { .. },
                ..
            }
        )) >= 1
    );
    assert!(
        count(&want, |u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::CurrentPose { .. },
                ..
            }
        )) >= 2,
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
                Update::Arm {
                    fact: ArmFact::Control { state, .. },
                    ..
                } if *state != ControlState::Released => Some(*state),
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
                Update::Arm {
                    fact: ArmFact::JointPositions { values, .. },
                    ..
                } => Some(values[0]),
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
        .filter(|u| {
            matches!(
                u,
                Update::Arm {
                    fact: ArmFact::Status { .. },
                    ..
                }
            )
        })
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
            Update::Arm {
                fact: ArmFact::JointPositions { values, .. },
                ..
            } => Some(values[0]),
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
            Update::Arm {
                fact: ArmFact::Link { t, state },
                ..
            } => Some((*t, *state)),
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
    let gap = obs.stats().gaps[0];
    assert_eq!(gap.arm, SIM_ID.into());
    assert!((gap.start - 0.99).abs() < 1e-9 && (gap.end - 5.99).abs() < 1e-9);
    let marks: Vec<(f64, String)> = updates
        .iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Mark {
                t,
                kind: MarkKind::Gap,
                label,
            }) => Some((*t, label.clone())),
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
            Update::Net(NetFact::Component { info, .. }) => Some(info.clone()),
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

// -------------------------------------------------------------------------------------------
// Two arms (issue 19): every manipulator followed, each with its own facts.

const ARM_A: JausId = JausId::new(126, 1, 10);
const ARM_B: JausId = JausId::new(126, 1, 11);

/// The demo arm as `id`, mounted at `position` turned by `yaw_deg` about z.
fn mounted_sim(id: JausId, position: [f64; 3], yaw_deg: f64) -> Component {
    let mut arm = ArmFile::demo();
    arm.spec.mount = Some(Mount::at(position, yaw_deg.to_radians()));
    Component::new(
        arm,
        SimConfig {
            id,
            ..SimConfig::default()
        },
    )
}

/// Two arms and one OCU working with each (one live client per arm, the same OCU ID and
/// address, different sequence numbers): every datagram of both on one wire, in time order,
/// and each client's facts.
struct TwoArms {
    records: Vec<WireRecord>,
    a: Vec<Update>,
    b: Vec<Update>,
}

fn two_arm_session(seconds: u64) -> TwoArms {
    let net = |sim: SocketAddr, component: Component, seed: u64| {
        let cfg = ClientConfig {
            connect: vec![sim],
            multicast: None,
            ..ClientConfig::default()
        };
        let mut net = SimNet::new(cfg, OCU, Duration::from_millis(1), seed);
        net.add_peer(sim, component);
        net
    };
    let mut a = net(SIM, mounted_sim(ARM_A, [0.0, -0.4, 0.0], 0.0), 1);
    let mut b = net(local(3795), mounted_sim(ARM_B, [0.0, 0.4, 0.0], 180.0), 2);
    let mut records = Vec::new();
    for ms in 0..seconds * 1000 {
        match ms {
            2000 => a.command(Command::RequestControl { authority: 100 }),
            3000 => a.command(Command::GoToPreset { pose_id: 2 }),
            4000 => b.command(Command::SetEmergency),
            4500 => b.command(Command::ClearEmergency),
            _ => {}
        }
        for net in [&mut a, &mut b] {
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
    }
    TwoArms {
        records,
        a: a.updates,
        b: b.updates,
    }
}

/// The facts about `arm` among the observer's updates.
fn facts_of(updates: &[Update], arm: JausId) -> Vec<Update> {
    updates
        .iter()
        .filter(|u| u.arm_id() == Some(arm.into()))
        .cloned()
        .collect()
}

#[test]
fn two_arms_replay_each_with_its_own_facts_equal_to_its_live_session() {
    let live = two_arm_session(6);
    let (obs, replayed) = observe_all(&live.records, START_NS);
    assert_eq!(obs.arms().collect::<Vec<_>>(), vec![ARM_A, ARM_B]);
    assert_eq!(obs.stats().malformed, 0);
    // Only the first arm is focused (every per-arm fact names its arm: `Update::Arm`).
    let selected: Vec<_> = replayed
        .iter()
        .filter_map(|u| match u {
            Update::Net(NetFact::Selected { id, .. }) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(selected, vec![ARM_A.into()], "the focus a replay opens on");

    // Each arm's facts equal its own live session's, value for value.
    for (arm, want) in [(ARM_A, &live.a), (ARM_B, &live.b)] {
        let got = report_facts(&facts_of(&replayed, arm));
        let want = report_facts(want);
        assert!(
            want.iter()
                .filter(|u| matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::JointPositions { .. },
                        ..
                    }
                ))
                .count()
                > 200,
            "{arm}: the live session received positions"
        );
        assert_eq!(got.len(), want.len(), "{arm}: fact count");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, &w, "{arm}: fact {i} differs");
        }
    }

    // Both arms in the vehicle, each mounted where its sim said, each with its own control and
    // status: the control asked of A and the emergency stop of B stay with their arm.
    let mut vehicle: Vehicle = Vehicle::new();
    for u in &replayed {
        vehicle.apply(u);
    }
    assert_eq!(vehicle.arm_count(), 2);
    assert_eq!(vehicle.focused_id(), Some(ARM_A.into()));
    let (a, b) = (
        vehicle.arm(ARM_A.into()).unwrap(),
        vehicle.arm(ARM_B.into()).unwrap(),
    );
    let mount_y = |s: &Session| s.latest.spec.as_ref().unwrap().mount.unwrap().position[1];
    assert!((mount_y(a) + 0.4).abs() < 1e-6 && (mount_y(b) - 0.4).abs() < 1e-6);
    let (sa, sb) = (a.state_at(4.2), b.state_at(4.2));
    assert_eq!(sa.control, ControlState::Held { authority: 100 });
    assert_eq!(sb.control, ControlState::Released);
    assert_eq!(sb.status, ManagementState::Emergency);
    assert_ne!(sa.status, ManagementState::Emergency);
    assert!(
        a.marks
            .iter()
            .any(|m| m.label.starts_with("RequestControl from"))
    );
    assert!(
        !b.marks
            .iter()
            .any(|m| m.label.starts_with("RequestControl from"))
    );
    assert!(
        b.marks
            .iter()
            .any(|m| m.label == "SetEmergency from 200.1.1")
    );
    assert!(!a.marks.iter().any(|m| m.label.starts_with("SetEmergency")));
    assert!(a.positions.len() > 200 && b.positions.len() > 200);

    // The summary counts each arm apart.
    let stats = obs.stats();
    assert_eq!(stats.focus, Some(ARM_A.into()));
    for arm in [ARM_A, ARM_B] {
        let s = &stats.arms[&arm.into()];
        assert_eq!(s.joints, Some(ArmFile::demo().spec.joint_count()));
        assert!(s.sent["Event(ReportJointPositions)"] > 200, "{arm}: {s:?}");
        assert!(s.received.contains_key("CreateEvent"), "{arm}: {s:?}");
    }
    assert!(
        stats.arms[&ARM_B.into()]
            .received
            .contains_key("SetEmergency")
    );
    assert!(
        !stats.arms[&ARM_A.into()]
            .received
            .contains_key("SetEmergency")
    );
}

/// `m` from `src` to `dst` at `ms`, from `peer`.
fn from_to(
    ms: u64,
    peer: SocketAddr,
    src: JausId,
    dst: JausId,
    seq: u16,
    m: &Message,
) -> WireRecord {
    WireRecord {
        t_ns: START_NS + ms * 1_000_000,
        direction: Direction::Rx,
        peer,
        bytes: judp::single(&Header::new(dst, src, seq), &m.emit().unwrap()).unwrap(),
        latched: None,
    }
}

#[test]
fn one_silent_arm_is_a_gap_of_its_own_while_the_other_talks_on() {
    let ocu = DEFAULT_OCU_ID;
    let (pa, pb) = (SIM, local(3795));
    let mut records = Vec::new();
    // Both arms report positions every 10 ms; B falls silent from 1 s to 5 s.
    for k in 0..600u16 {
        let ms = u64::from(k) * 10;
        records.push(from_to(ms, pa, ARM_A, ocu, k, &positions(0.1).into()));
        if !(1000..5000).contains(&ms) {
            records.push(from_to(ms, pb, ARM_B, ocu, k, &positions(0.2).into()));
        }
    }
    let (obs, updates) = observe_all(&records, START_NS);
    assert_eq!(obs.arms().collect::<Vec<_>>(), vec![ARM_A, ARM_B]);
    let gaps = obs.stats().gaps;
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0].arm, ARM_B.into());
    assert!((gaps[0].start - 0.99).abs() < 1e-9 && (gaps[0].end - 5.0).abs() < 1e-9);
    let lost = |arm| {
        facts_of(&updates, arm)
            .iter()
            .filter(|u| {
                matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::Link {
                            state: LinkState::Lost,
                            ..
                        },
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!((lost(ARM_A), lost(ARM_B)), (0, 1));
    let gap_marks: Vec<String> = facts_of(&updates, ARM_B)
        .into_iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Mark {
                kind: MarkKind::Gap,
                label,
                ..
            }) => Some(label.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(gap_marks, vec!["no traffic from 126.1.11 for 4.0 s"]);
    // Each arm's positions are its own.
    let mut vehicle: Vehicle = Vehicle::new();
    for u in &updates {
        vehicle.apply(u);
    }
    let at = |arm: JausId| {
        vehicle
            .arm(arm.into())
            .unwrap()
            .state_at(5.5)
            .positions
            .unwrap()
            .value[0]
    };
    assert!((at(ARM_A) - 0.1).abs() < 1e-4 && (at(ARM_B) - 0.2).abs() < 1e-4);
    assert_eq!(
        vehicle.arm(ARM_B.into()).unwrap().state_at(3.0).link,
        LinkState::Lost
    );
    assert_eq!(
        vehicle.arm(ARM_A.into()).unwrap().state_at(3.0).link,
        LinkState::Live
    );
}

#[test]
fn arms_past_the_bound_are_counted_and_said_once_not_followed() {
    let spec: Message = jaus_ocu::net::reports::spec_report(&ArmFile::demo().spec).into();
    let n = u8::try_from(MAX_ARMS).unwrap() + 3;
    let records: Vec<WireRecord> = (1..=n)
        .map(|c| {
            from_to(
                u64::from(c),
                SIM,
                JausId::new(126, 1, c),
                DEFAULT_OCU_ID,
                1,
                &spec,
            )
        })
        .collect();
    let (obs, updates) = observe_all(&records, START_NS);
    assert_eq!(obs.arms().count(), MAX_ARMS);
    assert_eq!(obs.stats().arms_not_followed, 3);
    assert_eq!(obs.stats().arms.len(), MAX_ARMS);
    let errors: Vec<&str> = updates
        .iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Error { message, .. }) => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("126.1.17"), "{errors:?}");
    let specs = updates
        .iter()
        .filter(|u| {
            matches!(
                u,
                Update::Arm {
                    fact: ArmFact::Specification { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(specs, MAX_ARMS);
}

#[test]
fn an_ocu_and_a_component_that_lists_no_manipulator_service_are_never_arms() {
    let ocu = DEFAULT_OCU_ID;
    let platform = JausId::new(126, 1, 30);
    let services = ReportServices {
        nodes: vec![jaus_ocu::jaus::core::NodeServices {
            node_id: 1,
            components: vec![jaus_ocu::jaus::core::ComponentServices {
                component_id: 30,
                instance_id: 0,
                services: vec![ServiceRec::new("urn:jaus:jss:core:Management", 1, 1)],
            }],
        }],
    };
    let records = [
        from_to(0, local(3796), platform, ocu, 1, &services.into()),
        // The platform answers with its status: a component, not an arm.
        from_to(
            10,
            local(3796),
            platform,
            ocu,
            2,
            &status(Status::Ready).into(),
        ),
        // The OCU commands the arm, and answers a status query of its own (odd, but seen).
        from_to(
            20,
            OCU,
            ocu,
            ARM_A,
            1,
            &RequestControl { authority_code: 9 }.into(),
        ),
        from_to(30, OCU, ocu, ARM_B, 2, &status(Status::Ready).into()),
    ];
    let (obs, updates) = observe_all(&records, START_NS);
    assert_eq!(obs.arms().collect::<Vec<_>>(), vec![ARM_A], "{updates:#?}");
}

#[test]
fn the_focus_moves_once_to_the_first_arm_whose_specification_is_seen() {
    let ocu = DEFAULT_OCU_ID;
    let spec: Message = jaus_ocu::net::reports::spec_report(&ArmFile::demo().spec).into();
    let records = [
        // A found by its traffic (a capture started late), then B's specification, then A's.
        from_to(0, SIM, ARM_A, ocu, 1, &status(Status::Ready).into()),
        from_to(10, local(3795), ARM_B, ocu, 1, &spec),
        from_to(20, SIM, ARM_A, ocu, 2, &spec),
    ];
    let (obs, updates) = observe_all(&records, START_NS);
    let selected: Vec<_> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Net(NetFact::Selected { id, .. }) => Some(JausId::from(*id)),
            _ => None,
        })
        .collect();
    assert_eq!(selected, vec![ARM_A, ARM_B]);
    assert_eq!(obs.selected(), Some(ARM_B));
    assert_eq!(obs.arms().collect::<Vec<_>>(), vec![ARM_A, ARM_B]);
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

#[test]
fn a_stop_repeated_until_confirmed_is_one_press_on_the_timeline_and_its_confirmation_one_more() {
    // Issue 44: the OCU sends SetEmergency every 150 ms until the arm says EMERGENCY. The
    // recording marks the press once and the confirmation (the status), not every try.
    let ocu = DEFAULT_OCU_ID;
    let mut records = vec![record(0, SIM_ID, ocu, 1, status(Status::Ready))];
    for i in 0..20_u16 {
        records.push(record(
            100 + 150 * u64::from(i),
            ocu,
            SIM_ID,
            100 + i,
            SetEmergency { emergency_code: 1 },
        ));
    }
    records.push(record(3200, SIM_ID, ocu, 2, status(Status::Emergency)));
    // A press 20 s later is a press of its own.
    records.push(record(
        23_000,
        ocu,
        SIM_ID,
        200,
        SetEmergency { emergency_code: 1 },
    ));
    let (_, updates) = observe_all(&records, START_NS);
    let presses = updates
        .iter()
        .filter(|u| {
            matches!(u.remark(), Some(Remark::Mark { label, .. }) if label.starts_with("SetEmergency from"))
        })
        .count();
    assert_eq!(presses, 2);
    assert!(updates.iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Status {
                state: ManagementState::Emergency,
                ..
            },
            ..
        }
    )));
}
