//! The simulator's protocol rules driven with a fake clock, no sockets: event timeouts,
//! every-change events, control preemption and timeout, management states.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::iop::*;
use jaus_ocu::jaus::judp::{self, Datagram, Header};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::{DecodeContext, EmbeddedMessage, JausId, Message};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, Outgoing, SimConfig};

const A: JausId = JausId::new(126, 1, 20);
const B: JausId = JausId::new(126, 1, 30);

fn addr(id: JausId) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + u16::from(id.component)))
}

struct Bench {
    sim: Component,
    seq: u16,
}

impl Bench {
    fn new(cfg: SimConfig) -> Self {
        Self {
            sim: Component::new(ArmFile::demo(), cfg),
            seq: 0,
        }
    }

    /// Sends `m` from `from` at `now`; returns what came back, decoded, with its destination.
    fn send(&mut self, now: f64, from: JausId, m: impl Into<Message>) -> Vec<(JausId, Message)> {
        self.seq += 1;
        let d = judp::single(
            &Header::new(self.sim.id(), from, self.seq),
            &m.into().emit().unwrap(),
        )
        .unwrap();
        let mut out = Vec::new();
        self.sim.handle_datagram(now, addr(from), &d, &mut out);
        decode(&out)
    }

    fn tick(&mut self, now: f64) -> Vec<(JausId, Message)> {
        let mut out = Vec::new();
        self.sim.tick(now, &mut out);
        decode(&out)
    }
}

fn decode(out: &[Outgoing]) -> Vec<(JausId, Message)> {
    out.iter()
        .flat_map(|o| {
            let dg = Datagram::new_checked(&o.bytes).unwrap();
            dg.blocks()
                .map(|b| {
                    let b = b.unwrap();
                    let h = Header::parse(&b.block);
                    assert_eq!(
                        o.to,
                        addr(h.destination),
                        "replies go to the address the client used"
                    );
                    (h.destination, Message::parse(b.block.payload()).unwrap())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn subscribe(b: &mut Bench, now: f64, from: JausId, kind: EventType, rate: f64, q: &Message) -> u8 {
    let r = b.send(
        now,
        from,
        CreateEvent {
            request_id: 1,
            event_type: kind,
            requested_periodic_rate: rate,
            query_message: EmbeddedMessage::new(q).unwrap(),
        },
    );
    match &r[0].1 {
        Message::ConfirmEventRequest(c) => c.event_id,
        other => panic!("{other:?}"),
    }
}

fn events(msgs: &[(JausId, Message)]) -> usize {
    msgs.iter()
        .filter(|(_, m)| matches!(m, Message::Event(_)))
        .count()
}

#[test]
fn event_not_refreshed_within_its_timeout_is_cancelled_and_confirmed() {
    let mut b = Bench::new(SimConfig {
        event_timeout_min: 1,
        ..SimConfig::default()
    });
    let id = subscribe(
        &mut b,
        0.0,
        A,
        EventType::Periodic,
        1.0,
        &QueryJointPositions.into(),
    );
    assert_eq!(events(&b.tick(30.0)), 1);
    // Refreshing with the same CreateEvent keeps it alive past the first minute.
    subscribe(
        &mut b,
        45.0,
        A,
        EventType::Periodic,
        1.0,
        &QueryJointPositions.into(),
    );
    assert!(
        b.tick(90.0)
            .iter()
            .any(|(_, m)| matches!(m, Message::Event(_)))
    );
    assert_eq!(b.sim.subscriptions(), 1);
    let out = b.tick(106.0);
    assert!(out.iter().any(
        |(to, m)| *to == A && matches!(m, Message::ConfirmEventRequest(c) if c.event_id == id)
    ));
    assert_eq!(b.sim.subscriptions(), 0);
    assert_eq!(events(&b.tick(107.0)), 0);
}

#[test]
fn every_change_event_fires_only_when_the_report_changes() {
    let mut b = Bench::new(SimConfig::default());
    subscribe(
        &mut b,
        0.0,
        A,
        EventType::EveryChange,
        0.0,
        &QueryStatus.into(),
    );
    assert_eq!(
        events(&b.tick(0.1)),
        0,
        "nothing changed since the first report"
    );
    b.send(0.2, B, SetEmergency { emergency_code: 1 });
    let out = b.tick(0.3);
    assert_eq!(events(&out), 1);
    let Message::Event(e) = &out
        .iter()
        .find(|(_, m)| matches!(m, Message::Event(_)))
        .unwrap()
        .1
    else {
        unreachable!()
    };
    assert_eq!(
        e.report_message.decode(&DecodeContext::NONE).unwrap(),
        Message::ReportStatus(ReportStatus {
            status: Status::Emergency,
            reserved: 0
        })
    );
    assert_eq!(events(&b.tick(0.4)), 0);
}

#[test]
fn periodic_rate_is_capped_at_the_physics_rate_and_zero_rate_is_refused() {
    let mut b = Bench::new(SimConfig {
        rate_hz: 100.0,
        ..SimConfig::default()
    });
    let r = b.send(
        0.0,
        A,
        CreateEvent {
            request_id: 5,
            event_type: EventType::Periodic,
            requested_periodic_rate: 1000.0,
            query_message: EmbeddedMessage::new(&QueryJointPositions.into()).unwrap(),
        },
    );
    let Message::ConfirmEventRequest(c) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert!((c.confirmed_periodic_rate - 100.0).abs() < 0.02);
    let r = b.send(
        0.0,
        A,
        CreateEvent {
            request_id: 6,
            event_type: EventType::Periodic,
            requested_periodic_rate: 0.0,
            query_message: EmbeddedMessage::new(&QueryJointPositions.into()).unwrap(),
        },
    );
    assert!(
        matches!(&r[0].1, Message::RejectEventRequest(x) if x.response_code == Some(RejectEventCode::InvalidSetup))
    );
}

#[test]
fn higher_authority_preempts_control_and_the_loser_is_told() {
    let mut b = Bench::new(SimConfig::default());
    let r = b.send(0.0, A, RequestControl { authority_code: 10 });
    assert!(
        matches!(&r[0].1, Message::ConfirmControl(c) if c.response_code == ConfirmControlCode::ControlAccepted)
    );
    let r = b.send(0.1, B, RequestControl { authority_code: 10 });
    assert!(
        matches!(&r[0].1, Message::ConfirmControl(c) if c.response_code == ConfirmControlCode::InsufficientAuthority)
    );
    let r = b.send(0.2, B, RequestControl { authority_code: 11 });
    assert!(r.iter().any(|(to, m)| *to == A && matches!(m, Message::RejectControl(x) if x.response_code == RejectControlCode::ControlReleased)));
    assert!(r.iter().any(|(to, m)| *to == B && matches!(m, Message::ConfirmControl(c) if c.response_code == ConfirmControlCode::ControlAccepted)));
    assert_eq!(b.sim.controller(), Some(B));
    let r = b.send(0.3, A, QueryControl);
    assert!(
        matches!(&r[0].1, Message::ReportControl(c) if c.component_id == 30 && c.authority_code == 11)
    );
}

#[test]
fn control_times_out_and_renewal_keeps_it() {
    let mut b = Bench::new(SimConfig {
        control_timeout_s: 2,
        ..SimConfig::default()
    });
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(1.5, A, RequestControl { authority_code: 1 });
    assert!(b.tick(3.0).is_empty() || b.sim.controller() == Some(A));
    assert_eq!(b.sim.controller(), Some(A));
    let out = b.tick(3.6);
    assert!(
        out.iter()
            .any(|(to, m)| *to == A && matches!(m, Message::RejectControl(_)))
    );
    assert_eq!(b.sim.controller(), None);
}

#[test]
fn transition_interrupted_by_standby_fails_and_resume_allows_a_new_one() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let goal = ArmFile::demo().presets[3].id;
    assert!(
        b.send(
            0.0,
            A,
            SetCurrentPose {
                request_id: 1,
                pose_id: goal
            }
        )
        .is_empty()
    );
    b.tick(0.5);
    let r = b.send(0.5, A, Standby);
    assert!(r.iter().any(|(_, m)| matches!(m, Message::ReportTransitionCompleted(t) if t.request_id == 1 && t.transition_status == TransitionStatus::Failed)));
    assert_eq!(b.sim.status(), Status::Standby);
    let r = b.send(
        0.6,
        A,
        SetCurrentPose {
            request_id: 2,
            pose_id: goal,
        },
    );
    assert!(
        matches!(&r[0].1, Message::ReportTransitionCompleted(t) if t.transition_status == TransitionStatus::Failed)
    );
    b.send(0.7, A, Resume);
    assert_eq!(b.sim.status(), Status::Ready);
    assert!(
        b.send(
            0.8,
            A,
            SetCurrentPose {
                request_id: 3,
                pose_id: goal
            }
        )
        .is_empty()
    );
    let mut done = None;
    let mut t = 0.8;
    while done.is_none() && t < 60.0 {
        t += 0.01;
        if b.sim.controller().is_some() {
            b.send(t, A, RequestControl { authority_code: 1 });
        }
        done = b.tick(t).into_iter().find_map(|(_, m)| match m {
            Message::ReportTransitionCompleted(r) => Some(r),
            _ => None,
        });
    }
    let done = done.expect("transition finished");
    assert_eq!(
        (done.request_id, done.transition_status),
        (3, TransitionStatus::Completed)
    );
    assert_eq!(
        b.sim.positions(),
        ArmFile::demo().presets[3].positions.as_slice()
    );
}

#[test]
fn queries_with_presence_vectors_return_only_what_was_asked() {
    let mut b = Bench::new(SimConfig::default());
    let r = b.send(
        0.0,
        A,
        QueryManipulatorEndEffectorForceTorque {
            presence_vector: 0b0000_0101,
        },
    );
    let Message::ReportManipulatorEndEffectorForceTorque(ft) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert!(
        ft.force_x.is_some()
            && ft.force_y.is_none()
            && ft.force_z.is_some()
            && ft.torque_x.is_none()
    );
}

#[test]
fn tour_moves_the_arm_only_while_nobody_holds_control() {
    let mut b = Bench::new(SimConfig {
        tour: true,
        ..SimConfig::default()
    });
    let start = b.sim.positions().to_vec();
    for i in 1..=300 {
        b.tick(f64::from(i) * 0.01);
    }
    assert_ne!(
        b.sim.positions(),
        start.as_slice(),
        "the tour moves the arm"
    );
    b.send(3.0, A, RequestControl { authority_code: 1 });
    // Control holds the arm still (the tour's move stops with the command of the operator).
    let held = {
        for i in 301..=600 {
            b.tick(f64::from(i) * 0.01);
            b.send(f64::from(i) * 0.01, A, RequestControl { authority_code: 1 });
        }
        b.sim.positions().to_vec()
    };
    for i in 601..=700 {
        b.tick(f64::from(i) * 0.01);
    }
    assert_eq!(b.sim.positions(), held.as_slice());
}

#[test]
fn the_first_periodic_event_is_sent_once_and_the_next_a_period_later() {
    // Issue 13 item 5: the immediate report after CreateEvent left the periodic timer due at
    // once (two events in the same millisecond).
    let mut b = Bench::new(SimConfig::default());
    b.tick(0.0);
    let r = b.send(
        0.001,
        A,
        CreateEvent {
            request_id: 1,
            event_type: EventType::Periodic,
            requested_periodic_rate: 10.0,
            query_message: EmbeddedMessage::new(&QueryJointPositions.into()).unwrap(),
        },
    );
    assert_eq!(events(&r), 1, "the first report at once");
    assert_eq!(
        events(&b.tick(0.001)),
        0,
        "not again in the same millisecond"
    );
    assert_eq!(events(&b.tick(0.05)), 0, "not before a period");
    assert_eq!(events(&b.tick(0.1011)), 1, "one period later");
}

#[test]
fn release_control_from_a_client_without_control_is_answered_control_released() {
    // Issue 13 item 6: AccessControl v1.1 answers RejectControl(CONTROL_RELEASED).
    let mut b = Bench::new(SimConfig::default());
    let r = b.send(0.0, A, ReleaseControl);
    assert!(
        matches!(&r[..], [(to, Message::RejectControl(x))] if *to == A && x.response_code == RejectControlCode::ControlReleased),
        "{r:?}"
    );
    // Also while another client holds it (which keeps it).
    b.send(0.1, B, RequestControl { authority_code: 5 });
    let r = b.send(0.2, A, ReleaseControl);
    assert!(
        matches!(&r[..], [(to, Message::RejectControl(x))] if *to == A && x.response_code == RejectControlCode::ControlReleased),
        "{r:?}"
    );
    assert_eq!(b.sim.controller(), Some(B));
}

#[test]
fn a_short_emergency_code_stops_the_arm_and_is_counted_nothing_else_is_tolerated() {
    // Issue 13 item 7 (wire reference §9 C10).
    let mut b = Bench::new(SimConfig::default());
    let raw = |b: &mut Bench, now: f64, payload: &[u8]| {
        b.seq += 1;
        let d = judp::single(&Header::new(b.sim.id(), A, b.seq), payload).unwrap();
        let mut out = Vec::new();
        b.sim.handle_datagram(now, addr(A), &d, &mut out);
    };
    raw(&mut b, 0.0, &[0x06, 0x00, 0x01]);
    assert_eq!(b.sim.status(), Status::Emergency);
    raw(&mut b, 0.1, &[0x07, 0x00]);
    assert_eq!(b.sim.status(), Status::Standby);
    // A short Resume body is not a thing; a 1-byte SetJointPositions body stays malformed.
    let before = b.sim.stats().malformed;
    raw(&mut b, 0.2, &[0x02, 0x06, 0x01]);
    assert_eq!(b.sim.stats().malformed, before + 1);
    assert_eq!(b.sim.stats().tolerated.short_emergency_code, 2);
}
