//! The OCU's network side (`NetHandle`: socket threads + client state machine) against the
//! simulator over real loopback UDP, including faults, a restart, foreign and hostile senders.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              their peers and load generators are raw sockets outside net/ on purpose"
)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use jaus_ocu::jaus::core::Event;
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::{EmbeddedMessage, JausId, Message};
use jaus_ocu::model::command::*;
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host::{self, SimHandle};

mod common;
use common::{Feed, wait_until};
use common::{outcome_of, pump};

fn start_sim(arm: ArmFile, cfg: SimConfig, faults: Faults, bind: &str) -> SimHandle {
    let socket = host::bind(bind.parse().unwrap()).unwrap();
    let seed = cfg.seed;
    host::spawn(Component::new(arm, cfg), socket, faults, seed).unwrap()
}

fn ocu(sim: SocketAddr) -> NetHandle {
    ocu_with_epoch(sim, None)
}

/// The OCU with its clock's `t = 0` at `epoch` (so a test can place its own moments on the
/// time axis of the updates).
fn ocu_with_epoch(sim: SocketAddr, epoch: Option<Epoch>) -> NetHandle {
    NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim],
            multicast: None,
            ..ClientConfig::default()
        },
        epoch,
        ..NetConfig::default()
    })
    .unwrap()
}

fn held_puma() -> (ArmFile, SimConfig) {
    (
        ArmFile::builtin("puma560").unwrap(),
        SimConfig {
            hold: Some(vec![0.3, 0.6, -1.2, 0.4, -0.7, 1.1]),
            seed: 5,
            ..SimConfig::default()
        },
    )
}

/// What the OCU's wire tap saw of the joint-position subscription: the rate the client asked
/// for and the rate confirmed, the confirmed event's ID, the sequence numbers of its Events,
/// and every `ReportJointPositions` received (direct or inside an Event).
#[derive(Debug, Default)]
struct PositionsOnWire {
    /// `RequestedPeriodicRate` of the client's `CreateEvent`s for `QueryJointPositions`.
    requested: Vec<f64>,
    /// Request IDs of those `CreateEvent`s.
    request_ids: Vec<u8>,
    /// (event ID, confirmed rate) of each `ConfirmEventRequest` answering one of them.
    confirmed: Vec<(u8, f64)>,
    /// (event ID, sequence number) of each Event carrying `ReportJointPositions`, in order.
    events: Vec<(u8, u8)>,
    /// `ReportJointPositions` received, direct or in an Event.
    reports: u64,
}

impl PositionsOnWire {
    fn see(&mut self, rec: &jaus_ocu::net::tap::WireRecord) {
        use jaus_ocu::jaus::judp::{AckNak, DataFlags, Datagram};
        use jaus_ocu::jaus::message::ids;
        use jaus_ocu::net::tap::Direction;
        let Ok(dg) = Datagram::new_checked(&rec.bytes[..]) else {
            return;
        };
        for b in dg.blocks().map_while(Result::ok) {
            let h = Header::parse(&b.block);
            if h.data_flags != DataFlags::Single || h.ack_nak != AckNak::None {
                continue;
            }
            let Ok(m) = Message::parse(b.block.payload()) else {
                continue;
            };
            match (rec.direction, m) {
                (Direction::Tx, Message::CreateEvent(c))
                    if c.query_message.message_id() == Some(ids::QueryJointPositions) =>
                {
                    self.requested.push(c.requested_periodic_rate);
                    self.request_ids.push(c.request_id);
                }
                (Direction::Rx, Message::ConfirmEventRequest(c))
                    if self.request_ids.contains(&c.request_id) =>
                {
                    self.confirmed.push((c.event_id, c.confirmed_periodic_rate));
                }
                (Direction::Rx, Message::Event(e))
                    if e.report_message.message_id() == Some(ids::ReportJointPositions) =>
                {
                    self.events.push((e.event_id, e.sequence_number));
                    self.reports += 1;
                }
                (Direction::Rx, Message::ReportJointPositions(_)) => self.reports += 1,
                _ => {}
            }
        }
    }

    /// One line for a failure message (the sequence numbers would be hundreds).
    fn summary(&self) -> String {
        format!(
            "asked {:?} Hz, confirmed (event ID, Hz) {:?}, {} position Events (event IDs {:?}), {} reports",
            self.requested,
            self.confirmed,
            self.events.len(),
            self.events
                .iter()
                .map(|(id, _)| *id)
                .collect::<std::collections::BTreeSet<u8>>(),
            self.reports
        )
    }

    /// Events of subscription `event_id` that the simulator sent between the first and the
    /// last one seen (its sequence numbers count every Event it sends on the subscription)
    /// and did not arrive.
    fn missing(&self, event_id: u8) -> u64 {
        let seqs: Vec<u8> = self
            .events
            .iter()
            .filter(|(id, _)| *id == event_id)
            .map(|(_, s)| *s)
            .collect();
        seqs.windows(2)
            .map(|w| u64::from(w[1].wrapping_sub(w[0]).wrapping_sub(1)))
            .sum()
    }
}

#[test]
fn discovery_specification_and_live_updates() {
    let sim = start_sim(
        ArmFile::demo(),
        SimConfig::default(),
        Faults::default(),
        "127.0.0.1:0",
    );
    // Every datagram the OCU handles and sends, from the first on.
    let (wire_tx, wire) = crossbeam_channel::unbounded();
    let tap = jaus_ocu::net::tap::Tap::new();
    tap.connect(wire_tx);
    let client = ClientConfig {
        connect: vec![sim.local_addr()],
        multicast: None,
        ..ClientConfig::default()
    };
    let rate = client.rates.positions;
    let h = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client,
        tap,
        ..NetConfig::default()
    })
    .unwrap();
    let updates = h.updates().clone();
    let mut s = ArmState::default();
    assert!(
        pump(&h, &mut s, Duration::from_secs(5), |s, _| s.is_complete()
            && s.link == LinkState::Live
            && s.presets.iter().all(|p| p.positions.is_some())
            && !s.presets.is_empty()),
        "not live: {s:?}"
    );
    assert_eq!(s.selected, Some(SimConfig::default().id.into()));
    assert_eq!(s.spec.as_ref().unwrap().joint_count(), 7);
    assert_eq!(s.presets.len(), ArmFile::demo().presets.len());
    // Samples keep coming at the requested rate. Not measured on the wall clock (a loaded
    // machine starves the simulator, which then skips periods it is more than 50 ms late for,
    // by design): the client asked for the rate, the simulator confirmed it (and schedules its
    // Events by it), and 250 Events in a row — 5 s of that schedule — arrive with no sequence
    // number missing.
    let mut seen = PositionsOnWire::default();
    let window = 250;
    assert!(
        pump(&h, &mut s, Duration::from_mins(2), |_, _| {
            for rec in wire.try_iter() {
                seen.see(&rec);
            }
            seen.confirmed
                .last()
                .is_some_and(|(id, _)| seen.events.iter().filter(|(e, _)| e == id).count() > window)
        }),
        "{window} position Events did not arrive within 2 min: {}",
        seen.summary()
    );
    let scale = jaus_ocu::jaus::wire::scales::EVENT_RATE;
    assert!(!seen.requested.is_empty());
    for asked in &seen.requested {
        assert!((asked - rate).abs() <= scale.lsb(), "asked for {asked} Hz");
    }
    let (event_id, confirmed) = *seen.confirmed.last().unwrap();
    assert!(
        (confirmed - rate).abs() <= scale.lsb(),
        "confirmed {confirmed} Hz"
    );
    assert_eq!(
        s.delivery.get(&Signal::JointPositions),
        Some(&Delivery::Event(confirmed))
    );
    assert!(s.force_torque.is_some() && s.velocities.is_some() && s.efforts.is_some());
    h.shutdown(Duration::from_millis(300));
    // The goodbye cancelled our events at the sim: wait until it stops sending them (no event
    // in a tenth of a second, where 50 Hz subscriptions would have sent several each).
    let mut sent = sim.stats().0.events_sent;
    wait_until(
        Duration::from_secs(10),
        "the sim stopping our events after the goodbye",
        || {
            std::thread::sleep(Duration::from_millis(100));
            let now = sim.stats().0.events_sent;
            std::mem::replace(&mut sent, now) == now
        },
    );
    let (stats, _) = sim.stop();
    assert_eq!(stats.malformed, 0);
    // The network side has stopped: what it handled and published is all in the channels.
    for rec in wire.try_iter() {
        seen.see(&rec);
    }
    for u in updates.try_iter() {
        s.apply(&u);
    }
    // Nothing the simulator sent on the subscription was lost on the way...
    assert_eq!(
        seen.missing(event_id),
        0,
        "position Events lost: {}",
        seen.summary()
    );
    // ...and every position report that reached the client became an update.
    assert_eq!(
        s.counts.get(&Signal::JointPositions).copied().unwrap_or(0),
        seen.reports,
        "position reports received but not applied (stats: {:?})",
        s.stats
    );
}

#[test]
fn live_through_loss_duplication_and_reordering() {
    let faults = Faults {
        loss: 0.3,
        duplicate: 0.1,
        reorder: 0.1,
        delay: Duration::ZERO,
    };
    let sim = start_sim(
        ArmFile::demo(),
        SimConfig {
            tour: true,
            ..SimConfig::default()
        },
        faults,
        "127.0.0.1:0",
    );
    let h = ocu(sim.local_addr());
    let mut s = ArmState::default();
    assert!(
        pump(&h, &mut s, Duration::from_secs(10), |s, _| s.is_complete()),
        "not complete: {s:?}"
    );
    // Positions keep flowing and time never runs backwards in what is applied. Counted over
    // 2 s of their receive times (stamped by the network thread), however long reading takes.
    let mut last_t = 0.0;
    let mut first_t = None;
    let mut samples = 0;
    assert!(
        pump(&h, &mut s, Duration::from_mins(1), |_, u| {
            if let Update::Arm {
                fact: ArmFact::JointPositions { t, .. },
                ..
            } = u
            {
                assert!(*t >= last_t);
                last_t = *t;
                samples += 1;
                first_t.get_or_insert(*t);
            }
            first_t.is_some_and(|t0| last_t - t0 >= 2.0)
        }),
        "2 s of positions did not arrive within 60 s ({samples} samples)"
    );
    assert!(
        samples > 40,
        "{samples} samples in 2 s at 50 Hz with 30 % loss"
    );
    assert!(
        s.stats.duplicates > 0,
        "duplicates were suppressed and counted: {:?}",
        s.stats
    );
}

#[test]
fn back_to_live_within_five_seconds_after_the_sim_restarts() {
    let sim = start_sim(
        ArmFile::demo(),
        SimConfig::default(),
        Faults::default(),
        "127.0.0.1:0",
    );
    let addr = sim.local_addr();
    // The five seconds are measured on the OCU's own clock (the receive time it stamps on the
    // first fresh sample), not by when this thread got round to reading it.
    let epoch = Epoch::now();
    let h = ocu_with_epoch(addr, Some(epoch));
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(5), |s, _| s.is_complete()));
    drop(sim);
    // Silence: the link is lost.
    assert!(
        pump(&h, &mut s, Duration::from_secs(30), |s, _| s.link
            == LinkState::Lost),
        "link not lost"
    );
    // A new process on the same port.
    let restarted = epoch.seconds(Instant::now());
    let _sim2 = start_sim(
        ArmFile::demo(),
        SimConfig::default(),
        Faults::default(),
        &addr.to_string(),
    );
    let mut fresh = None;
    assert!(
        pump(&h, &mut s, Duration::from_secs(30), |s, u| {
            if let Update::Arm {
                fact: ArmFact::JointPositions { t, .. },
                ..
            } = u
                && s.link == LinkState::Live
            {
                fresh = Some(*t);
            }
            fresh.is_some()
        }),
        "not live again within 30 s"
    );
    let after = fresh.unwrap() - restarted;
    assert!(after < 5.0, "live again {after:.2} s after the restart");
}

#[test]
fn preset_needs_control_then_completes() {
    let arm = ArmFile::demo();
    let goal = arm.presets[3].clone();
    let sim = start_sim(arm, SimConfig::default(), Faults::default(), "127.0.0.1:0");
    let h = ocu(sim.local_addr());
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(5), |s, _| s
        .is_complete()
        && !s.presets.is_empty()));
    h.send(Command::GoToPreset { pose_id: goal.id }).unwrap();
    let outcome = outcome_of(&h, &mut s, CommandKind::GoToPreset, Duration::from_secs(2));
    assert!(
        matches!(outcome, Some(Outcome::Rejected(ref r)) if r.contains("control")),
        "{outcome:?}"
    );
    h.send(Command::RequestControl { authority: 50 }).unwrap();
    assert!(pump(&h, &mut s, Duration::from_secs(2), |s, _| matches!(
        s.control,
        ControlState::Held { .. }
    )));
    h.send(Command::GoToPreset { pose_id: goal.id }).unwrap();
    let outcome = outcome_of(&h, &mut s, CommandKind::GoToPreset, Duration::from_mins(1));
    assert_eq!(outcome, Some(Outcome::Completed));
    // Control was kept (the sim's timeout is 5 s; the transition takes longer).
    assert!(matches!(s.control, ControlState::Held { .. }));
    // The samples sent after the transition ended catch up with the outcome.
    pump(&h, &mut s, Duration::from_secs(10), |s, _| {
        let at_goal = s.positions.as_ref().is_some_and(|p| {
            p.value
                .iter()
                .zip(&goal.positions)
                .all(|(got, want)| (got - want).abs() < 1e-6)
        });
        at_goal && s.pose == PoseState::At(goal.id)
    });
    let q = &s.positions.as_ref().unwrap().value;
    for (got, want) in q.iter().zip(&goal.positions) {
        assert!((got - want).abs() < 1e-6, "{q:?} vs {:?}", goal.positions);
    }
    assert_eq!(s.pose, PoseState::At(goal.id));
}

/// A JUDP datagram from `src` to `dst` carrying `m`.
fn datagram(src: JausId, dst: JausId, seq: u16, m: impl Into<Message>) -> Vec<u8> {
    judp::single(&Header::new(dst, src, seq), &m.into().emit().unwrap()).unwrap()
}

#[test]
fn a_foreign_component_flooding_valid_reports_cannot_move_the_displayed_arm() {
    let (arm, cfg) = held_puma();
    let sim = start_sim(arm, cfg, Faults::default(), "127.0.0.1:0");
    let h = ocu(sim.local_addr());
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(5), |s, _| s.is_complete()));
    let truth = s.positions.as_ref().unwrap().value.clone();
    let intruder = UdpSocket::bind("127.0.0.1:0").unwrap();
    let foreign = JausId::new(127, 1, 10);
    let fake = ReportJointPositions {
        joint_positions: vec![JointValue::revolute(2.0); 6],
    };
    let ocu_id = ClientConfig::default().id;
    for i in 0..2000u16 {
        let m: Message = if i % 2 == 0 {
            fake.clone().into()
        } else {
            Event {
                event_id: 0,
                sequence_number: i as u8,
                report_message: EmbeddedMessage::new(&fake.clone().into()).unwrap(),
            }
            .into()
        };
        intruder
            .send_to(&datagram(foreign, ocu_id, i, m), h.local_addr())
            .unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Until the counters (published once a second) show the flood was handled.
    let mut moved = false;
    pump(&h, &mut s, Duration::from_secs(30), |s, u| {
        if let Update::Arm {
            fact: ArmFact::JointPositions { values, .. },
            ..
        } = u
        {
            moved |= values.iter().zip(&truth).any(|(a, b)| (a - b).abs() > 1e-6);
        }
        s.stats.foreign_reports >= 1000
    });
    assert!(!moved, "a foreign report was applied");
    assert!(s.stats.foreign_reports >= 1000, "{:?}", s.stats);
}

#[test]
fn a_hostile_sender_of_random_datagrams_changes_nothing_but_counters() {
    let (arm, cfg) = held_puma();
    let sim = start_sim(arm, cfg, Faults::default(), "127.0.0.1:0");
    let h = ocu(sim.local_addr());
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(5), |s, _| s.is_complete()));
    let truth = s.positions.as_ref().unwrap().value.clone();
    let hostile = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut x = 0x9E37_79B9_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..3000 {
        let len = (next() % 120) as usize;
        let mut d: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if i % 2 == 0 && !d.is_empty() {
            d[0] = 2;
        }
        hostile.send_to(&d, h.local_addr()).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Until the counters (published once a second) show the flood was handled.
    let mut moved = false;
    pump(&h, &mut s, Duration::from_secs(30), |s, u| {
        if let Update::Arm {
            fact: ArmFact::JointPositions { values, .. },
            ..
        } = u
        {
            moved |= values.iter().zip(&truth).any(|(a, b)| (a - b).abs() > 1e-6);
        }
        s.stats.malformed + s.stats.foreign_version + s.stats.not_for_us >= 2500
    });
    assert!(!moved);
    assert_eq!(s.link, LinkState::Live);
    assert!(
        s.stats.malformed + s.stats.foreign_version + s.stats.not_for_us >= 2500,
        "{:?}",
        s.stats
    );
}

#[test]
fn emergency_and_control_outcomes_come_back_as_updates() {
    let sim = start_sim(
        ArmFile::demo(),
        SimConfig::default(),
        Faults::default(),
        "127.0.0.1:0",
    );
    let h = ocu(sim.local_addr());
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(5), |s, _| s.is_complete()));
    h.send(Command::Resume).unwrap();
    assert!(matches!(
        outcome_of(&h, &mut s, CommandKind::Resume, Duration::from_secs(3)),
        Some(Outcome::Rejected(_))
    ));
    h.send(Command::SetEmergency).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::SetEmergency,
            Duration::from_secs(3)
        ),
        Some(Outcome::Confirmed)
    );
    assert!(pump(&h, &mut s, Duration::from_secs(2), |s, _| s.status
        == ManagementState::Emergency));
    h.send(Command::ClearEmergency).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::ClearEmergency,
            Duration::from_secs(3)
        ),
        Some(Outcome::Confirmed)
    );
    h.send(Command::RequestControl { authority: 10 }).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::RequestControl,
            Duration::from_secs(3)
        ),
        Some(Outcome::Confirmed)
    );
    h.send(Command::Resume).unwrap();
    assert_eq!(
        outcome_of(&h, &mut s, CommandKind::Resume, Duration::from_secs(3)),
        Some(Outcome::Confirmed)
    );
    h.send(Command::ReleaseControl).unwrap();
    assert_eq!(
        outcome_of(
            &h,
            &mut s,
            CommandKind::ReleaseControl,
            Duration::from_secs(3)
        ),
        Some(Outcome::Confirmed)
    );
    assert_eq!(s.control, ControlState::Released);
}

/// Issue 12: at 30 % loss (plus duplicates, reordering and 50 ms of delay) both ways over
/// real UDP, the OCU knows the management state within 3 s of its start, and 20 preset moves
/// in a row each end in one outcome, `Completed`, never contradicting the state.
/// The first of the commands `kinds` the OCU sent, in the order it sent them, among `records`.
fn first_sent(
    records: &[jaus_ocu::net::tap::WireRecord],
    kinds: &[fn(&Message) -> bool],
) -> Option<Message> {
    use jaus_ocu::jaus::judp::{AckNak, DataFlags, Datagram};
    records
        .iter()
        .filter(|r| r.direction == jaus_ocu::net::tap::Direction::Tx)
        .filter_map(|r| Datagram::new_checked(&r.bytes[..]).ok())
        .flat_map(|dg| {
            dg.blocks()
                .map_while(Result::ok)
                .filter_map(|b| {
                    let h = Header::parse(&b.block);
                    (h.data_flags == DataFlags::Single && h.ack_nak == AckNak::None)
                        .then(|| Message::parse(b.block.payload()).ok())
                        .flatten()
                })
                .collect::<Vec<_>>()
        })
        .find(|m| kinds.iter().any(|k| k(m)))
}

#[test]
fn an_emergency_stop_is_accepted_and_sent_first_with_the_command_queue_full() {
    use jaus_ocu::net::thread::{COMMAND_QUEUE, Waker};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let sim = start_sim(
        ArmFile::demo(),
        SimConfig::default(),
        Faults::default(),
        "127.0.0.1:0",
    );
    let (wire_tx, wire) = crossbeam_channel::unbounded();
    let tap = jaus_ocu::net::tap::Tap::new();
    tap.connect(wire_tx);
    // The network thread calls its waker after publishing: once `stall` is set, the next call
    // says so on `stalled` and waits there for `release`, and the thread takes no command.
    let stall = Arc::new(AtomicBool::new(false));
    let (stalled_tx, stalled) = crossbeam_channel::bounded::<()>(1);
    let (release, release_rx) = crossbeam_channel::bounded::<()>(1);
    let waker: Waker = Arc::new({
        let stall = stall.clone();
        move || {
            if stall.swap(false, Ordering::SeqCst) {
                let _ = stalled_tx.send(());
                let _ = release_rx.recv();
            }
        }
    });
    let h = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim.local_addr()],
            multicast: None,
            ..ClientConfig::default()
        },
        tap,
        waker: Some(waker.clone()),
        urgent_waker: Some(waker),
        ..NetConfig::default()
    })
    .unwrap();
    let mut s = ArmState::default();
    assert!(pump(&h, &mut s, Duration::from_secs(10), |s, _| s
        .is_complete()
        && s.link == LinkState::Live));

    stall.store(true, Ordering::SeqCst);
    stalled
        .recv_timeout(Duration::from_secs(10))
        .expect("the network thread publishes (and so stalls) within 10 s");
    // The ordinary queue fills: every command past its room is refused.
    let mut queued = 0;
    while h.send(Command::RequestControl { authority: 10 }).is_ok() {
        queued += 1;
        assert!(queued <= COMMAND_QUEUE, "the queue is bounded");
    }
    assert_eq!(queued, COMMAND_QUEUE);
    assert!(h.send(Command::Resume).is_err(), "a full queue refuses");
    // The emergency stops are accepted all the same...
    h.send(Command::SetEmergency)
        .expect("an emergency stop is never refused for a full queue");
    h.send(Command::SetEmergencyAll)
        .expect("stop all is never refused for a full queue");
    let is_stop: fn(&Message) -> bool = |m| matches!(m, Message::SetEmergency(_));
    let is_request: fn(&Message) -> bool = |m| matches!(m, Message::RequestControl(_));
    let mut seen: Vec<jaus_ocu::net::tap::WireRecord> = wire.try_iter().collect();
    assert!(
        first_sent(&seen, &[is_stop, is_request]).is_none(),
        "nothing commanded yet"
    );
    // ...and leave before every command queued ahead of them.
    release.send(()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let first = loop {
        seen.extend(wire.try_iter());
        if let Some(m) = first_sent(&seen, &[is_stop, is_request]) {
            break m;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no command left within 10 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(
        matches!(first, Message::SetEmergency(_)),
        "the emergency stop left first, not {first:?}"
    );
    assert!(
        pump(&h, &mut s, Duration::from_secs(10), |s, _| s.status
            == ManagementState::Emergency),
        "the arm is stopped"
    );
}

#[test]
fn twenty_preset_moves_at_30_percent_loss_each_end_with_the_right_outcome() {
    let faults = Faults {
        loss: 0.3,
        duplicate: 0.1,
        reorder: 0.1,
        delay: Duration::from_millis(50),
    };
    // Fast joints (within the field's range: 5 m/s prismatic): the moves are short, the
    // protocol is what is tested.
    let mut arm = ArmFile::demo();
    for j in &mut arm.spec.joints {
        j.max_speed = Some(4.0);
    }
    let sim = start_sim(
        arm,
        SimConfig {
            seed: 12,
            ..SimConfig::default()
        },
        faults,
        "127.0.0.1:0",
    );
    let h = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim.local_addr()],
            multicast: None,
            ..ClientConfig::default()
        },
        faults,
        ..NetConfig::default()
    })
    .unwrap();
    let start = Instant::now();
    let mut s = ArmState::default();
    assert!(
        pump(&h, &mut s, Duration::from_secs(10), |s, _| s.status
            != ManagementState::Unknown),
        "status never known"
    );
    let known_after = start.elapsed();
    assert!(
        known_after < Duration::from_secs(3),
        "management state known after {known_after:?}"
    );
    assert!(
        pump(&h, &mut s, Duration::from_secs(30), |s, _| s.spec.is_some()
            && !s.presets.is_empty()),
        "no specification and presets: {s:?}"
    );
    // Control (an operator asks again after an honest "no answer").
    let mut held = false;
    for _ in 0..5 {
        h.send(Command::RequestControl { authority: 10 }).unwrap();
        let mut outcome = None;
        pump(&h, &mut s, Duration::from_secs(10), |_, u| {
            match u.remark() {
                Some(Remark::CommandOutcome {
                    command: CommandKind::RequestControl,
                    outcome: o,
                    ..
                }) => {
                    outcome = Some(o.clone());
                    true
                }
                _ => false,
            }
        });
        let outcome = outcome.expect("every command ends in an outcome");
        if outcome == Outcome::Confirmed {
            assert!(matches!(s.control, ControlState::Held { .. }));
            held = true;
            break;
        }
        assert!(matches!(outcome, Outcome::NoAnswer { .. }), "{outcome:?}");
    }
    assert!(held, "control never confirmed");
    let poses = [3u8, 4];
    for i in 0..20 {
        let pose = poses[i % 2];
        h.send(Command::GoToPreset { pose_id: pose }).unwrap();
        let mut outcomes = Vec::new();
        pump(&h, &mut s, Duration::from_mins(1), |_, u| {
            match u.remark() {
                Some(Remark::CommandOutcome {
                    command, outcome, ..
                }) => {
                    outcomes.push((*command, outcome.clone()));
                    *command == CommandKind::GoToPreset
                }
                _ => false,
            }
        });
        assert_eq!(
            outcomes.last(),
            Some(&(CommandKind::GoToPreset, Outcome::Completed)),
            "go-to #{i} (pose {pose}): {outcomes:?}; control {:?}, status {:?}, pose {:?}",
            s.control,
            s.status,
            s.pose
        );
        // No outcome contradicts the state: a completed move leaves the arm at the pose,
        // under control, READY.
        assert!(
            matches!(s.control, ControlState::Held { .. }),
            "go-to #{i}: {:?}",
            s.control
        );
        assert_eq!(s.status, ManagementState::Ready, "go-to #{i}");
        assert!(
            pump(&h, &mut s, Duration::from_secs(5), |s, _| s.pose
                == PoseState::At(pose)),
            "go-to #{i}: completed, but the arm reports {:?}",
            s.pose
        );
    }
    drop(sim);
}
