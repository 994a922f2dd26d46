//! The simulator's protocol rules driven with a fake clock, no sockets: event timeouts,
//! every-change events, control preemption and timeout, management states, and the bounds
//! that keep untrusted senders from using it as an amplifier (issue 29): answers per datagram
//! and per second per address, the subscription table, the emergency setters.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::time::Duration;

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::iop::*;
use jaus_ocu::jaus::judp::{self, AckNak, Datagram, DatagramWriter, Header};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::{DecodeContext, EmbeddedMessage, JausId, Message};
use jaus_ocu::model::command::Command;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::fault::Faults;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{
    ANSWER_BURST, ANSWERS_PER_SECOND, Component, MAX_ANSWERS_PER_DATAGRAM, MAX_EMERGENCY_SETTERS,
    MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_PER_CLIENT, Outgoing, SimConfig, SimStats,
};
use jaus_ocu::sim::harness::{SimNet, Verdict};

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

    /// One datagram from `from` with a block per message, each numbered, asking for ACKs when
    /// `ack`.
    fn datagram(
        &mut self,
        from: JausId,
        ack: bool,
        messages: impl IntoIterator<Item = Message>,
    ) -> Vec<u8> {
        let mut w = DatagramWriter::new();
        for m in messages {
            self.seq = self.seq.wrapping_add(1);
            let h = Header {
                ack_nak: if ack { AckNak::Request } else { AckNak::None },
                ..Header::new(self.sim.id(), from, self.seq)
            };
            w.push(&h, &m.emit().unwrap()).unwrap();
        }
        w.finish()
    }

    /// Hands `bytes` over as received at `now` from `at`; returns the datagrams sent.
    fn deliver(&mut self, now: f64, at: SocketAddr, bytes: &[u8]) -> Vec<Outgoing> {
        let mut out = Vec::new();
        self.sim.handle_datagram(now, at, bytes, &mut out);
        out
    }

    /// Queries from `from` at `now` until none is answered: its answer budget is spent.
    fn spend_budget(&mut self, now: f64, from: JausId) {
        let limit = 10 * ANSWER_BURST as usize;
        let asked = (0..limit)
            .take_while(|_| !self.send(now, from, QueryStatus).is_empty())
            .count();
        assert!(asked < limit, "{asked} queries all answered at {now} s");
    }
}

/// A sender of a flood: a JAUS ID and an address of its own.
fn stranger(i: u32) -> (JausId, SocketAddr) {
    let id = JausId::new(1000 + i as u16, 1 + (i % 200) as u8, 1 + (i % 250) as u8);
    let at = SocketAddr::from(([10, 9, (i >> 8) as u8, i as u8], 3794));
    (id, at)
}

/// The messages of `out` sent to `at`.
fn messages_to(out: &[Outgoing], at: SocketAddr) -> Vec<Message> {
    out.iter()
        .filter(|o| o.to == at)
        .flat_map(|o| {
            let dg = Datagram::new_checked(&o.bytes).unwrap();
            dg.blocks()
                .map(|b| Message::parse(b.unwrap().block.payload()).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
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

#[test]
fn a_datagram_of_3000_queries_gets_at_most_the_per_datagram_bound_of_answers() {
    let mut b = Bench::new(SimConfig::default());
    let most = MAX_ANSWERS_PER_DATAGRAM as usize;
    let d = b.datagram(A, false, (0..3000).map(|_| QueryStatus.into()));
    assert!(d.len() > 48_000, "{} bytes", d.len());
    let out = b.deliver(0.0, addr(A), &d);
    assert_eq!(out.len(), most);
    assert!(
        decode(&out)
            .iter()
            .all(|(to, m)| *to == A && matches!(m, Message::ReportStatus(_)))
    );
    assert_eq!(b.sim.stats().replies_refused, 3000 - most as u64);
    // ACKs are answers too: blocks asking for them get no more than the bound, ACKs included.
    let d = b.datagram(A, true, (0..3000).map(|_| QueryStatus.into()));
    let out = b.deliver(0.001, addr(A), &d);
    assert_eq!(out.len(), most);
    let s = b.sim.stats();
    assert_eq!((s.acks_sent, s.sent), (most as u64 / 2, 2 * most as u64));
}

#[test]
fn a_sender_over_its_rate_gets_a_buckets_worth_per_second_while_another_address_gets_every_answer()
{
    let mut b = Bench::new(SimConfig::default());
    // A asks 1,000 times a second (five times the rate) for two seconds, B 20 times a second.
    let (mut a_answers, mut b_asked, mut b_answers) = ([0usize; 2], 0, 0);
    for i in 0..2000 {
        let now = f64::from(i) * 1e-3;
        a_answers[i as usize / 1000] += b.send(now, A, QueryStatus).len();
        if i % 50 == 0 {
            b_asked += 1;
            b_answers += b.send(now, B, QueryStatus).len();
        }
    }
    let first = ANSWER_BURST + ANSWERS_PER_SECOND;
    assert!(
        a_answers[0] as f64 <= first && a_answers[0] as f64 >= first - 2.0,
        "first second: {} answers",
        a_answers[0]
    );
    assert!(
        a_answers[1] as f64 <= ANSWERS_PER_SECOND + 1.0
            && a_answers[1] as f64 >= ANSWERS_PER_SECOND - 2.0,
        "second second: {} answers",
        a_answers[1]
    );
    assert_eq!(b_answers, b_asked, "another address is answered every time");
    assert_eq!(
        b.sim.stats().replies_refused,
        2000 - (a_answers[0] + a_answers[1]) as u64
    );
}

#[test]
fn an_emergency_stop_and_control_requests_from_a_sender_over_its_budget_are_acted_on() {
    let mut b = Bench::new(SimConfig {
        control_timeout_s: 2,
        ..SimConfig::default()
    });
    let joints = ArmFile::demo().spec.joint_count();
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(
        0.0,
        A,
        SetJointEffort {
            joint_efforts: vec![30.0; joints],
        },
    );
    b.tick(0.5);
    let moving = b.sim.positions().to_vec();
    // Control renewed by a client whose budget is spent: no ConfirmControl, but it holds on
    // past the 2 s it would lapse after.
    for t in [1.0, 1.5, 2.0, 2.5, 3.0] {
        b.spend_budget(t, A);
        assert!(
            b.send(t, A, RequestControl { authority_code: 1 })
                .is_empty()
        );
        b.tick(t);
    }
    assert_eq!(b.sim.controller(), Some(A));
    assert_ne!(b.sim.positions(), moving.as_slice(), "the arm moves");
    // SetEmergency behind 3,000 queries in one datagram, from the spent sender: nothing is
    // answered, the arm stops.
    b.spend_budget(3.0, A);
    let d = b.datagram(
        A,
        true,
        (0..3000)
            .map(|_| QueryStatus.into())
            .chain([SetEmergency { emergency_code: 1 }.into()]),
    );
    assert!(b.deliver(3.0, addr(A), &d).is_empty());
    assert_eq!(b.sim.status(), Status::Emergency);
    b.tick(3.1);
    let stopped = b.sim.positions().to_vec();
    b.tick(3.5);
    assert_eq!(b.sim.positions(), stopped.as_slice(), "the arm stopped");
    // Clearing it is acted on too.
    b.spend_budget(3.5, A);
    assert!(
        b.send(3.5, A, ClearEmergency { emergency_code: 1 })
            .is_empty()
    );
    assert_eq!(b.sim.status(), Status::Standby);
}

#[test]
fn a_flood_of_create_event_from_random_ids_stops_at_the_cap_and_a_real_subscription_still_delivers()
{
    let mut b = Bench::new(SimConfig::default());
    let query: Message = QueryJointPositions.into();
    let id = subscribe(&mut b, 0.0, A, EventType::Periodic, 10.0, &query);
    let create = |rate: f64| -> Message {
        CreateEvent {
            request_id: 7,
            event_type: EventType::Periodic,
            requested_periodic_rate: rate,
            query_message: EmbeddedMessage::new(&QueryJointPositions.into()).unwrap(),
        }
        .into()
    };
    let flood = 1000;
    let mut refused = 0;
    for i in 0..flood {
        // Each from an address of its own: the answer budget does not hold them back, the
        // table's bound does.
        let (who, at) = stranger(i);
        let d = b.datagram(who, false, [create(1000.0)]);
        let out = b.deliver(0.01, at, &d);
        let connection_refused = |m: &&Message| {
            matches!(m, Message::RejectEventRequest(r)
                if r.response_code == Some(RejectEventCode::ConnectionRefused))
        };
        refused += messages_to(&out, at)
            .iter()
            .filter(connection_refused)
            .count();
    }
    assert_eq!(b.sim.subscriptions(), MAX_SUBSCRIPTIONS);
    let kept = MAX_SUBSCRIPTIONS - 1;
    assert_eq!(refused, flood as usize - kept);
    assert_eq!(
        b.sim.stats().subscriptions_refused,
        u64::from(flood) - kept as u64
    );
    // The real client's subscription, made before, still delivers, and it can still renew it.
    let mut out = Vec::new();
    b.sim.tick(0.15, &mut out);
    assert!(
        messages_to(&out, addr(A))
            .iter()
            .any(|m| matches!(m, Message::Event(e) if e.event_id == id)),
        "A's event at its period"
    );
    assert_eq!(
        subscribe(&mut b, 0.2, A, EventType::Periodic, 10.0, &query),
        id
    );
    assert_eq!(b.sim.subscriptions(), MAX_SUBSCRIPTIONS);
}

#[test]
fn one_client_holds_at_most_its_share_of_subscriptions() {
    let mut b = Bench::new(SimConfig::default());
    let (mut confirmed, mut refused) = (0, 0);
    for pv in 1..=40u8 {
        // Forty different subscriptions (the presence vector makes each query its own).
        let query = QueryManipulatorEndEffectorForceTorque {
            presence_vector: pv,
        };
        let r = b.send(
            f64::from(pv) * 0.01,
            B,
            CreateEvent {
                request_id: pv,
                event_type: EventType::Periodic,
                requested_periodic_rate: 10.0,
                query_message: EmbeddedMessage::new(&query.into()).unwrap(),
            },
        );
        match &r[0].1 {
            Message::ConfirmEventRequest(_) => confirmed += 1,
            Message::RejectEventRequest(x)
                if x.response_code == Some(RejectEventCode::ConnectionRefused) =>
            {
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(confirmed, MAX_SUBSCRIPTIONS_PER_CLIENT);
    assert_eq!(refused, 40 - MAX_SUBSCRIPTIONS_PER_CLIENT);
    assert_eq!(b.sim.subscriptions(), MAX_SUBSCRIPTIONS_PER_CLIENT);
    // Another client still has room.
    subscribe(
        &mut b,
        1.0,
        A,
        EventType::EveryChange,
        0.0,
        &QueryStatus.into(),
    );
}

#[test]
fn emergency_setters_are_bounded_and_a_flood_neither_clears_nor_blocks_a_real_emergency() {
    let mut b = Bench::new(SimConfig::default());
    let joints = ArmFile::demo().spec.joint_count();
    b.send(0.0, B, RequestControl { authority_code: 1 });
    b.send(
        0.0,
        B,
        SetJointEffort {
            joint_efforts: vec![30.0; joints],
        },
    );
    b.tick(0.1);
    let flood = MAX_EMERGENCY_SETTERS as u32 + 40;
    let from_stranger = |b: &mut Bench, i: u32, m: Message| {
        let (who, at) = stranger(i);
        let d = b.datagram(who, false, [m]);
        b.deliver(0.2, at, &d);
    };
    for i in 0..flood {
        from_stranger(&mut b, i, SetEmergency { emergency_code: 1 }.into());
    }
    assert_eq!(b.sim.emergency_setters(), MAX_EMERGENCY_SETTERS);
    // The operator's stop past the bound still stops the arm: never refused, not remembered.
    b.send(0.2, A, SetEmergency { emergency_code: 1 });
    assert_eq!(b.sim.status(), Status::Emergency);
    let stats = b.sim.stats();
    assert_eq!(
        stats.emergency_setters_untracked,
        u64::from(flood) - MAX_EMERGENCY_SETTERS as u64 + 1
    );
    b.tick(0.3);
    let stopped = b.sim.positions().to_vec();
    // The flood clears everything it set: the operator's emergency stays (latched).
    for i in 0..flood {
        from_stranger(&mut b, i, ClearEmergency { emergency_code: 1 }.into());
    }
    assert_eq!(b.sim.emergency_setters(), 0);
    assert_eq!(b.sim.status(), Status::Emergency);
    b.tick(0.5);
    assert_eq!(b.sim.positions(), stopped.as_slice(), "still stopped");
    // Latched: a clear from a client not holding control does not end it; the controller's does.
    b.send(0.6, A, ClearEmergency { emergency_code: 1 });
    assert_eq!(b.sim.status(), Status::Emergency);
    b.send(0.7, B, ClearEmergency { emergency_code: 1 });
    assert_eq!(b.sim.status(), Status::Standby);
    // The latch ends with the emergency: the next one is ended by its setter again.
    b.send(0.8, A, SetEmergency { emergency_code: 1 });
    b.send(0.9, A, ClearEmergency { emergency_code: 1 });
    assert_eq!(b.sim.status(), Status::Standby);
}

#[test]
fn an_operators_emergency_made_before_a_flood_of_setters_is_not_cleared_by_it() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, SetEmergency { emergency_code: 1 });
    let flood = 1000;
    for m in [
        Message::from(SetEmergency { emergency_code: 1 }),
        ClearEmergency { emergency_code: 1 }.into(),
    ] {
        for i in 0..flood {
            let (who, at) = stranger(i);
            let d = b.datagram(who, false, [m.clone()]);
            b.deliver(0.1, at, &d);
            assert!(b.sim.emergency_setters() <= MAX_EMERGENCY_SETTERS);
        }
    }
    // Nobody was forgotten to make room: the operator is still remembered, its stop stands.
    assert_eq!(b.sim.emergency_setters(), 1, "the operator, remembered");
    assert_eq!(b.sim.status(), Status::Emergency);
    b.send(0.2, A, ClearEmergency { emergency_code: 1 });
    assert_eq!(b.sim.status(), Status::Standby);
}

/// The simulator's counters after our OCU's client used it for 30 s over a link losing 30 % of
/// what the arm sends (retries): setup, subscriptions (or, with `refuse_events`, polling every
/// signal: the most the client ever asks), control, presets, an emergency stop and resume.
fn honest_session(refuse_events: bool) -> SimStats {
    let ocu = SocketAddr::from(([127, 0, 0, 1], 5000));
    let at = SocketAddr::from(([127, 0, 0, 1], 3794));
    let client = ClientConfig {
        connect: vec![at],
        multicast: None,
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(client, ocu, Duration::from_millis(1), 7);
    let i = net.add_peer(at, Component::new(ArmFile::demo(), SimConfig::default()));
    if refuse_events {
        net.peers[i].intercept = Some(Box::new(|_, m| match m {
            Message::CreateEvent(c) => Verdict::Reply(
                RejectEventRequest {
                    request_id: c.request_id,
                    response_code: Some(RejectEventCode::ConnectionRefused),
                    error_message: None,
                }
                .into(),
            ),
            _ => Verdict::Pass,
        }));
    }
    net.set_faults_to_client(Faults {
        loss: 0.3,
        ..Faults::default()
    });
    let presets: Vec<u8> = ArmFile::demo().presets.iter().map(|p| p.id).collect();
    let run = |net: &mut SimNet, secs: f64| net.run_with(secs, &mut |_| {});
    run(&mut net, 5.0);
    net.command(Command::RequestControl { authority: 10 });
    for &pose_id in presets.iter().cycle().take(6) {
        run(&mut net, 3.0);
        net.command(Command::GoToPreset { pose_id });
    }
    run(&mut net, 2.0);
    net.command(Command::SetEmergency);
    run(&mut net, 1.0);
    net.command(Command::ClearEmergency);
    run(&mut net, 1.0);
    net.command(Command::Resume);
    run(&mut net, 3.0);
    net.peers[i].sim.stats()
}

#[test]
fn our_ocu_never_meets_the_answer_budget_nor_the_subscription_bounds() {
    for (refuse_events, asked) in [(false, 100), (true, 2000)] {
        let s = honest_session(refuse_events);
        assert!(s.received > asked, "a busy session: {s:?}");
        assert_eq!(
            (
                s.replies_refused,
                s.subscriptions_refused,
                s.emergency_setters_untracked
            ),
            (0, 0, 0),
            "events refused: {refuse_events}: {s:?}"
        );
    }
}
