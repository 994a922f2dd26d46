//! Unit tests of every rule of the OCU's client state machine (`net::client`), driven with a
//! fake clock and no sockets: the client and simulated manipulator components exchange
//! datagrams in memory, with seeded loss, duplication and reordering of what the peers send,
//! peers that can be silenced, replaced (a restarted process) or wrapped to misbehave, and
//! hand-made datagrams from anyone. Each test names the rule it proves; the rules are listed in
//! the module doc of `src/net/client.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use jaus_ocu::jaus::core::{
    ClearEmergency, ConfirmControl, ConfirmControlCode, CreateEvent, Event, EventType,
    QueryIdentification, QueryStatus, QueryType, RejectEventCode, RejectEventRequest,
    ReportHeartbeatPulse, RequestControl, SetEmergency, Status,
};
use jaus_ocu::jaus::judp::{self, AckNak, DatagramWriter, Header};
use jaus_ocu::jaus::manipulator::{
    JointMotionProfile, JointValue, QueryJointPositions, ReportJointPositions, ReportToolOffset,
    SetJointMotionProfile, SetJointVelocity,
};
use jaus_ocu::jaus::message::ids;
use jaus_ocu::jaus::wire::scales;
use jaus_ocu::jaus::{EmbeddedMessage, JausId, JointKind, Message};
use jaus_ocu::model::arm::ArmSpec;
use jaus_ocu::model::command::*;
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::{ClientConfig, DEFAULT_OCU_ID, Rates};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::Direction;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{self, Component, SimConfig};
use jaus_ocu::sim::harness::{Passage, SimNet, Verdict};

mod common;
use common::Feed;
#[path = "common/sim_net.rs"]
mod sim_net;
use sim_net::{
    OCU, OCU_ID, OTHER, OTHER_ID, SIM, SIM_B, SIM_B_ID, SIM_ID, Suite, client_cfg, decode, local,
    sim_cfg,
};

const FOREIGN_ID: JausId = JausId::new(127, 1, 10);

// -------------------------------------------------------------------------------------------
// The harness.

/// `SplitMix64`: every hand-made sequence number and jitter is reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) / ((1u64 << 53) as f64) < p
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A message the client sent.
#[derive(Debug, Clone)]
struct Sent {
    t: f64,
    to: SocketAddr,
    header: Header,
    msg: Option<Message>,
}

/// A non-Event message a peer delivered to the client.
#[derive(Debug, Clone)]
struct Heard {
    t: f64,
    peer: usize,
    msg: Message,
}

/// An Event a peer delivered to the client (recorded only when asked for).
#[derive(Debug, Clone, Copy)]
struct EventSeen {
    event_id: u8,
    sequence: u8,
    report_id: Option<u16>,
}

/// What this suite reads off the wire beside the in-memory network, and the randomness of
/// its hand-made datagrams.
struct Wire {
    rng: Rng,
    sent: Vec<Sent>,
    heard: Vec<Heard>,
    record_events: bool,
    events: Vec<EventSeen>,
}

/// The client and its peers on the in-memory network, with this suite's wire log.
type Net = sim_net::Net<Wire>;

impl Suite for Wire {
    fn log(&mut self, p: &Passage<'_>, peers: &[SocketAddr]) {
        log_passage(
            p,
            peers,
            &mut self.sent,
            &mut self.heard,
            self.record_events,
            &mut self.events,
        );
    }
}

/// The message ID of the report inside an Event datagram.
fn report_in_event(bytes: &[u8]) -> Option<u16> {
    match decode(bytes).into_iter().next() {
        Some((_, Some(Message::Event(e)))) => e.report_message.message_id(),
        _ => None,
    }
}

/// One datagram carrying `m` from `src` to `dst`.
fn datagram(dst: JausId, src: JausId, seq: u16, m: impl Into<Message>) -> Vec<u8> {
    judp::single(&Header::new(dst, src, seq), &m.into().emit().unwrap()).unwrap()
}

/// What this suite keeps of a datagram on the wire: every message the client sent; what peers
/// delivered to it (Events only when `record_events`).
fn log_passage(
    p: &Passage<'_>,
    peers: &[SocketAddr],
    sent: &mut Vec<Sent>,
    heard: &mut Vec<Heard>,
    record_events: bool,
    events: &mut Vec<EventSeen>,
) {
    if p.direction == Direction::Tx {
        for (header, msg) in decode(p.bytes) {
            sent.push(Sent {
                t: p.t,
                to: p.peer,
                header,
                msg,
            });
        }
        return;
    }
    // Events are most of the traffic: recognise them by ID before decoding anything.
    let bytes = p.bytes;
    let is_event = bytes.len() > 16 && bytes[13..15] == ids::Event.to_le_bytes();
    if is_event && !record_events {
        return;
    }
    let peer = peers
        .iter()
        .position(|a| *a == p.peer)
        .unwrap_or(usize::MAX);
    for (_, msg) in decode(bytes) {
        match msg {
            Some(Message::Event(e)) => events.push(EventSeen {
                event_id: e.event_id,
                sequence: e.sequence_number,
                report_id: e.report_message.message_id(),
            }),
            Some(msg) => heard.push(Heard { t: p.t, peer, msg }),
            None => {}
        }
    }
}

impl Net {
    fn new(cfg: ClientConfig) -> Self {
        Net::start(
            cfg,
            Duration::from_millis(1),
            0x5EED,
            Wire {
                rng: Rng(0x5EED),
                sent: Vec::new(),
                heard: Vec::new(),
                record_events: false,
                events: Vec::new(),
            },
        )
    }

    /// A client connected to one demo-arm sim at [`SIM`].
    fn with_sim(sim: SimConfig, cfg: ClientConfig) -> Self {
        let mut net = Net::new(cfg);
        net.add_peer(SIM, Component::new(ArmFile::demo(), sim));
        net
    }

    /// [`Net::with_sim`], run until the link is live and setup is over.
    fn live(sim: SimConfig, cfg: ClientConfig) -> Self {
        let mut net = Net::with_sim(sim, cfg);
        net.connect();
        net
    }

    /// Runs until the link is live, then a little longer so every query is answered.
    fn connect(&mut self) {
        assert!(
            self.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
            "no live link within 5 s; updates: {:?}",
            self.discrete_updates(0)
        );
        self.run(0.2);
    }

    /// A hand-made message to peer `i` from `src` at `from`.
    fn send_to_peer(&mut self, i: usize, from: SocketAddr, src: JausId, m: impl Into<Message>) {
        let seq = self.suite.rng.next() as u16;
        let bytes = self.harness.datagram_to_peer(i, src, seq, &m.into());
        self.harness.inject_to_peer(i, from, &bytes);
    }

    /// A datagram from `from` handed straight to the client now.
    fn inject(&mut self, from: SocketAddr, bytes: &[u8]) {
        self.harness.inject_to_client(from, bytes);
        self.flush();
    }

    fn link(&self) -> Option<LinkState> {
        self.updates.iter().rev().find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Link { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
    }

    fn control(&self) -> Option<ControlState> {
        self.updates.iter().rev().find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Control { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
    }

    /// The outcomes of commands since update `mark`.
    fn outcomes(&self, mark: usize) -> Vec<(f64, CommandKind, Outcome)> {
        self.updates[mark..]
            .iter()
            .filter_map(|u| match u.remark() {
                Some(Remark::CommandOutcome {
                    t,
                    command,
                    outcome,
                }) => Some((*t, *command, outcome.clone())),
                _ => None,
            })
            .collect()
    }

    /// Runs until `kind` has an outcome (since `mark`), at most `secs`.
    fn outcome_of(&mut self, mark: usize, kind: CommandKind, secs: f64) -> Option<(f64, Outcome)> {
        let find = |n: &Net| {
            n.outcomes(mark)
                .into_iter()
                .find(|o| o.1 == kind)
                .map(|(t, _, o)| (t, o))
        };
        if find(self).is_none() {
            self.run_until(secs, |n| find(n).is_some());
        }
        find(self)
    }

    /// Joint positions the client applied since update `mark`, with their times.
    fn positions(&self, mark: usize) -> Vec<(f64, Vec<f64>)> {
        self.updates[mark..]
            .iter()
            .filter_map(|u| match u {
                Update::Arm {
                    fact: ArmFact::JointPositions { t, values },
                    ..
                } => Some((*t, values.clone())),
                _ => None,
            })
            .collect()
    }

    /// Samples of `signal` the client published in `(from, to]`.
    fn samples(&self, signal: Signal, from: f64, to: f64) -> usize {
        self.updates
            .iter()
            .filter(|u| {
                u.coalesce_key().map(|k| k.1) == Some(signal) && u.t() > from && u.t() <= to
            })
            .count()
    }

    /// Messages the client sent at or after `t` that satisfy `pred`.
    fn sent_since(&self, t: f64, pred: impl Fn(&Message) -> bool) -> Vec<&Sent> {
        self.suite
            .sent
            .iter()
            .filter(|s| s.t >= t && s.msg.as_ref().is_some_and(&pred))
            .collect()
    }

    /// Updates since `mark` other than samples and counters (for failure messages).
    fn discrete_updates(&self, mark: usize) -> Vec<&Update> {
        self.updates[mark..]
            .iter()
            .filter(|u| {
                u.coalesce_key().is_none() && !matches!(u, Update::Net(NetFact::Stats { .. }))
            })
            .collect()
    }

    /// The last `Identity` update's conflict (`None` when there is no conflict).
    fn conflict(&self) -> Option<jaus_ocu::model::update::IdConflict> {
        self.updates.iter().rev().find_map(|u| match u {
            Update::Net(NetFact::Identity { conflict, .. }) => Some(conflict.clone()),
            _ => None,
        })?
    }

    /// The last `Identity` update's suspicion (datagrams with our ID from a stranger).
    fn suspect(&self) -> Option<jaus_ocu::model::update::IdConflict> {
        self.updates.iter().rev().find_map(|u| match u {
            Update::Net(NetFact::Identity { suspect, .. }) => Some(suspect.clone()),
            _ => None,
        })?
    }

    /// The client's counters now.
    fn client_stats(&self) -> jaus_ocu::model::update::NetStats {
        self.harness.client.stats()
    }

    /// When the conflict over our ID was first published since update `mark`.
    fn conflict_at(&self, mark: usize) -> Option<f64> {
        self.updates[mark..].iter().find_map(|u| match u {
            Update::Net(NetFact::Identity {
                t,
                conflict: Some(_),
                ..
            }) => Some(*t),
            _ => None,
        })
    }

    /// Asks for control and waits until it is held.
    /// The demo arm alone on a harness of 5 ms steps seeded with `seed`.
    fn on_fresh_arm(seed: u64) -> Self {
        let mut net = Net::new(client_cfg());
        net.harness = SimNet::new(client_cfg(), OCU, Duration::from_millis(5), seed);
        net.add_peer(SIM, Component::new(ArmFile::demo(), sim_cfg()));
        net
    }

    /// Drops each datagram with probability `loss`, both ways.
    fn lossy_both_ways(&mut self, loss: f64) {
        let faults = Faults {
            loss,
            ..Faults::default()
        };
        self.set_faults_to_client(faults);
        self.set_faults_from_client(faults);
    }

    /// Sends `command` and waits up to `within` s for the outcome of `kind`: when it was sent,
    /// when the outcome came, and the outcome.
    fn outcome_after(
        &mut self,
        command: Command,
        kind: CommandKind,
        within: f64,
    ) -> (f64, f64, Outcome) {
        let mark = self.mark();
        let t0 = self.now();
        self.command(command);
        let (t, outcome) = self
            .outcome_of(mark, kind, within)
            .unwrap_or_else(|| panic!("an outcome of {kind:?} within {within} s"));
        (t0, t, outcome)
    }

    fn take_control(&mut self, authority: u8) {
        self.command(Command::RequestControl { authority });
        assert!(
            self.run_until(1.0, |n| matches!(
                n.control(),
                Some(ControlState::Held { .. })
            )),
            "control not held"
        );
    }
}

/// Whether `m` is a `CreateEvent` for the query with ID `query`.
fn creates(m: &Message, query: u16) -> bool {
    matches!(m, Message::CreateEvent(c) if c.query_message.message_id() == Some(query))
}

/// One LSB of the joint position field for `kind`.
fn position_lsb(kind: JointKind) -> f64 {
    match kind {
        JointKind::Revolute => scales::JOINT_POSITION_RAD.lsb(),
        JointKind::Prismatic => scales::JOINT_POSITION_M.lsb(),
    }
}

/// Asserts `got` equals `want` within one LSB of the position field, joint by joint.
fn assert_positions_close(got: &[f64], want: &[f64], spec: &ArmSpec) {
    assert_eq!(got.len(), want.len(), "joint count: {got:?} vs {want:?}");
    for (i, ((g, w), j)) in got.iter().zip(want).zip(&spec.joints).enumerate() {
        let lsb = position_lsb(j.kind.into());
        assert!((g - w).abs() <= lsb, "joint {i}: {g} vs {w} (LSB {lsb})");
    }
}

/// The demo arm's home, the position every fresh demo sim reports until it moves.
fn demo_home() -> Vec<f64> {
    ArmFile::demo().home
}

// -------------------------------------------------------------------------------------------
// Discovery, selection, setup.

#[test]
fn discovery_selects_the_manipulator_retries_the_specification_and_goes_live() {
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    let dropped = Rc::new(Cell::new(0));
    let d = dropped.clone();
    net.peers[0].intercept = Some(Box::new(move |_, m| {
        if matches!(m, Message::QueryManipulatorSpecifications(_)) && d.get() < 3 {
            d.set(d.get() + 1);
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    }));
    net.connect();
    assert_eq!(dropped.get(), 3);

    let arm = ArmFile::demo();
    let services: Vec<(String, u8, u8)> = component::services()
        .into_iter()
        .map(|s| (s.uri, s.major_version_number, s.minor_version_number))
        .collect();
    let info = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Net(NetFact::Component { info, .. }) if info.id == SIM_ID.into() => {
                Some(info.clone())
            }
            _ => None,
        })
        .expect("Update::Component for the sim");
    assert!(info.manipulator);
    assert_eq!(info.address, SIM);
    assert_eq!(info.services, services);
    assert!(info.identification.unwrap().contains(&arm.name));
    assert!(
        net.updates.iter().any(
            |u| matches!(u, Update::Net(NetFact::Selected { id, .. }) if *id == SIM_ID.into())
        )
    );
    assert_eq!(net.client.selected(), Some(SIM_ID));

    // The specification is asked every `retry` s until answered.
    let asks: Vec<f64> = net
        .sent_since(0.0, |m| {
            matches!(m, Message::QueryManipulatorSpecifications(_))
        })
        .iter()
        .map(|s| s.t)
        .collect();
    assert_eq!(asks.len(), 4, "three lost, the fourth answered: {asks:?}");
    for w in asks.windows(2) {
        assert!(
            (w[1] - w[0] - 0.5).abs() <= 0.0015,
            "retry interval: {asks:?}"
        );
    }
    let spec = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Specification { t, spec },
                ..
            } => Some((*t, spec.clone())),
            _ => None,
        })
        .expect("Specification");
    assert!(spec.0 >= asks[3]);
    assert_eq!(spec.1.joints.len(), arm.spec.joints.len());
    let names: Vec<_> = spec.1.joints.iter().map(|j| j.name.clone()).collect();
    let want: Vec<_> = arm.spec.joints.iter().map(|j| j.name.clone()).collect();
    assert_eq!(names, want);

    // Connecting, then Live once samples arrive (after the specification).
    let links: Vec<(f64, LinkState)> = net
        .updates
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Link { t, state },
                ..
            } => Some((*t, *state)),
            _ => None,
        })
        .collect();
    assert_eq!(
        links.iter().map(|l| l.1).collect::<Vec<_>>(),
        [LinkState::Connecting, LinkState::Live]
    );
    assert!(links[1].0 >= spec.0);

    let tool = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::ToolOffset { point, .. },
                ..
            } => Some(*point),
            _ => None,
        })
        .expect("ToolOffset");
    for (g, w) in tool.iter().zip(arm.tool_point) {
        assert!((g - w).abs() < 1e-6, "tool {tool:?}");
    }
    let presets = net
        .updates
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Presets { presets, .. },
                ..
            } => Some(presets.clone()),
            _ => None,
        })
        .expect("Presets");
    assert_eq!(presets.len(), arm.presets.len());
    for (got, want) in presets.iter().zip(&arm.presets) {
        assert_eq!((got.id, &got.name), (want.id, &want.name));
        let positions = got.positions.as_ref().expect("preset positions");
        assert_positions_close(positions, &want.positions, &arm.spec);
    }

    // One delivery per signal: events at the requested rates, on change for pose and status.
    let rates = Rates::default();
    let requested = [
        (Signal::JointPositions, rates.positions),
        (Signal::JointVelocities, rates.velocities),
        (Signal::JointEfforts, rates.efforts),
        (Signal::JointForceTorques, rates.joint_force_torques),
        (Signal::EndEffectorForceTorque, rates.force_torque),
    ];
    let deliveries: Vec<(Signal, Delivery)> = net
        .updates
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Delivery {
                    signal, delivery, ..
                },
                ..
            } => Some((*signal, *delivery)),
            _ => None,
        })
        .collect();
    assert_eq!(deliveries.len(), 7, "{deliveries:?}");
    for (signal, rate) in requested {
        match deliveries.iter().find(|d| d.0 == signal) {
            Some((_, Delivery::Event(confirmed))) => assert!(
                (confirmed - rate).abs() <= rate * 0.01,
                "{signal:?}: confirmed {confirmed} for {rate}"
            ),
            other => panic!("{signal:?}: {other:?}"),
        }
    }
    for signal in [Signal::CurrentPose, Signal::Status] {
        assert!(
            deliveries.contains(&(signal, Delivery::OnChange)),
            "{signal:?}: {deliveries:?}"
        );
    }
    assert!(net.updates.iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Status {
                state: ManagementState::Ready,
                ..
            },
            ..
        }
    )));
    assert!(net.updates.iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::CurrentPose {
                pose: PoseState::At(1),
                ..
            },
            ..
        }
    )));
}

#[test]
fn setup_completes_over_a_lossy_link() {
    // A fifth of what the sim sends is lost: every query is retried until answered.
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.set_faults_to_client(Faults {
        loss: 0.2,
        ..Faults::default()
    });
    net.connect();
    net.run(3.0);
    let has = |f: fn(&Update) -> bool| net.updates.iter().any(f);
    assert!(has(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Specification { .. },
            ..
        }
    )));
    assert!(has(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::ToolOffset { .. },
            ..
        }
    )));
    assert!(has(
        |u| matches!(u, Update::Arm { fact: ArmFact::Presets { presets, .. }, .. } if presets.iter().all(|p| p.positions.is_some()))
    ));
    let signals: BTreeSet<Signal> = net
        .updates
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Delivery { signal, .. },
                ..
            } => Some(*signal),
            _ => None,
        })
        .collect();
    assert_eq!(signals.len(), 7, "{signals:?}");
    let t = net.now();
    let n = net.samples(Signal::JointPositions, t - 2.0, t);
    assert!(n >= 70, "{n} samples in 2 s");
}

#[test]
fn samples_arrive_at_the_configured_rates() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let t0 = net.now();
    net.run(10.0);
    let rates = Rates::default();
    for (signal, rate) in [
        (Signal::JointPositions, rates.positions),
        (Signal::JointVelocities, rates.velocities),
        (Signal::JointEfforts, rates.efforts),
        (Signal::JointForceTorques, rates.joint_force_torques),
        (Signal::EndEffectorForceTorque, rates.force_torque),
    ] {
        let n = net.samples(signal, t0, t0 + 10.0) as f64;
        let want = rate * 10.0;
        assert!(
            (n - want).abs() <= want * 0.03 + 1.0,
            "{signal:?}: {n} samples in 10 s, want {want}"
        );
    }
}

// -------------------------------------------------------------------------------------------
// Subscriptions.

#[test]
fn subscriptions_are_renewed_before_the_peers_event_timeout() {
    let sim = SimConfig {
        event_timeout_min: 1,
        ..sim_cfg()
    };
    let cfg = ClientConfig {
        rates: Rates {
            positions: 50.0,
            velocities: 0.0,
            efforts: 0.0,
            joint_force_torques: 0.0,
            force_torque: 0.0,
        },
        ..client_cfg()
    };
    let mut net = Net::live(sim, cfg);
    net.step_size = Duration::from_millis(5);
    let start = net.now();
    let mark = net.mark();
    net.run(300.0);

    // Samples never stop: not at 1, 2, ... or 5 minutes.
    let times: Vec<f64> = net.positions(mark).iter().map(|p| p.0).collect();
    let gap = times.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(gap < 0.05, "a {gap} s gap in samples");
    for minute in [4.0, 5.0] {
        let to = start + minute * 60.0;
        let n = net.samples(Signal::JointPositions, to - 60.0, to);
        assert!((2900..=3100).contains(&n), "{n} samples in minute {minute}");
    }
    // The peer never cancelled the event; the client renewed every half timeout.
    let cancel = cancelled_at(&net, positions_event(&net), start);
    assert_eq!(cancel, None, "the sim cancelled the positions event");
    let renewals = net.sent_since(start, |m| creates(m, ids::QueryJointPositions));
    assert!(
        (9..=11).contains(&renewals.len()),
        "{} renewals in 5 min",
        renewals.len()
    );
    assert_eq!(net.peers[0].sim.subscriptions(), 3);
    assert!(!net.updates.iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Stale { stale: true, .. },
            ..
        }
    )));
}

#[test]
fn an_event_the_peer_cancelled_for_want_of_renewal_is_re_created() {
    // Renewals of the positions event are lost until the peer's event timeout cancels it
    // (ConfirmEventRequest with rate 0, Events v1.1); from then on nothing is lost.
    let cfg = ClientConfig {
        rates: Rates {
            positions: 50.0,
            velocities: 0.0,
            efforts: 0.0,
            joint_force_torques: 0.0,
            force_torque: 0.0,
        },
        ..client_cfg()
    };
    let mut net = Net::live(sim_cfg(), cfg);
    net.step_size = Duration::from_millis(5);
    let blocking = Rc::new(Cell::new(true));
    let b = blocking.clone();
    net.peers[0].intercept = Some(Box::new(move |_, m| {
        if b.get() && creates(m, ids::QueryJointPositions) {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    }));
    let id = positions_event(&net);
    assert!(
        net.run_until(70.0, |n| cancelled_at(n, id, 0.0).is_some()),
        "the sim never cancelled the event"
    );
    let t_cancel = cancelled_at(&net, id, 0.0).unwrap();
    blocking.set(false);
    net.run(3.0);
    let resumed = net
        .positions(0)
        .into_iter()
        .find(|p| p.0 > t_cancel + 0.05)
        .map(|p| p.0);
    assert!(
        resumed.is_some_and(|t| t - t_cancel < 1.5),
        "positions stopped at {t_cancel} (peer cancelled the event) and resumed at {resumed:?}; \
         stale updates: {:?}",
        net.updates
            .iter()
            .filter(|u| matches!(
                u,
                Update::Arm {
                    fact: ArmFact::Stale { .. },
                    ..
                }
            ))
            .collect::<Vec<_>>()
    );
}

#[test]
fn rejected_subscriptions_fall_back_to_polling() {
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.peers[0].intercept = Some(Box::new(|_, m| match m {
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
    net.connect();
    let mut deliveries: Vec<(Signal, Delivery)> = net
        .updates
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Delivery {
                    signal, delivery, ..
                },
                ..
            } => Some((*signal, *delivery)),
            _ => None,
        })
        .collect();
    deliveries.sort_by_key(|d| d.0);
    assert_eq!(
        deliveries,
        [
            (Signal::JointPositions, Delivery::Polling(20.0)),
            (Signal::JointVelocities, Delivery::Polling(20.0)),
            (Signal::JointEfforts, Delivery::Polling(10.0)),
            (Signal::JointForceTorques, Delivery::Polling(10.0)),
            (Signal::EndEffectorForceTorque, Delivery::Polling(20.0)),
            (Signal::CurrentPose, Delivery::Polling(2.0)),
            (Signal::Status, Delivery::Polling(2.0)),
        ]
    );
    assert_eq!(net.peers[0].sim.subscriptions(), 0);
    let t0 = net.now();
    net.run(5.0);
    let n = net.samples(Signal::JointPositions, t0, t0 + 5.0);
    assert!(
        (97..=103).contains(&n),
        "{n} polled samples in 5 s at 20 Hz"
    );
    let queries = net
        .sent_since(t0, |m| matches!(m, Message::QueryJointPositions(_)))
        .len();
    assert!((99..=101).contains(&queries), "{queries} queries in 5 s");
    assert_eq!(net.link(), Some(LinkState::Live));
}

#[test]
fn unanswered_subscriptions_fall_back_to_polling_after_three_tries() {
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.peers[0].intercept = Some(Box::new(|_, m| match m {
        Message::CreateEvent(_) => Verdict::Drop,
        _ => Verdict::Pass,
    }));
    net.connect();
    net.run(2.0);
    let tries: Vec<f64> = net
        .sent_since(0.0, |m| creates(m, ids::QueryJointPositions))
        .iter()
        .map(|s| s.t)
        .collect();
    assert_eq!(tries.len(), 3, "{tries:?}");
    assert!(
        (tries[1] - tries[0] - 0.5).abs() < 0.0015 && (tries[2] - tries[1] - 0.5).abs() < 0.0015
    );
    let polling = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact:
                    ArmFact::Delivery {
                        t,
                        signal: Signal::JointPositions,
                        delivery,
                    },
                ..
            } => Some((*t, *delivery)),
            _ => None,
        })
        .expect("a delivery for positions");
    assert_eq!(polling.1, Delivery::Polling(20.0));
    assert!(
        (polling.0 - tries[2] - 0.5).abs() < 0.0015,
        "polling from {}",
        polling.0
    );
    let t0 = net.now();
    net.run(2.0);
    let n = net.samples(Signal::JointPositions, t0, t0 + 2.0);
    assert!((38..=42).contains(&n), "{n} polled samples in 2 s at 20 Hz");
}

/// A live net whose positions events can be cut off (only those) by setting the flag.
fn net_with_cuttable_positions() -> (Net, Rc<Cell<bool>>) {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let cut = Rc::new(Cell::new(false));
    let c = cut.clone();
    net.drop_to_client = Some(Box::new(move |_, bytes| {
        c.get() && report_in_event(bytes) == Some(ids::ReportJointPositions)
    }));
    (net, cut)
}

#[test]
fn a_silent_signal_goes_stale_after_three_periods_at_least_half_a_second_and_its_event_is_re_created()
 {
    let (mut net, cut) = net_with_cuttable_positions();
    let mark = net.mark();
    let last = net.positions(0).last().unwrap().0;
    cut.set(true);
    net.run(1.5);
    let stale: Vec<(f64, Signal, bool)> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Stale { t, signal, stale },
                ..
            } => Some((*t, *signal, *stale)),
            _ => None,
        })
        .collect();
    assert_eq!(
        stale.first().map(|s| (s.1, s.2)),
        Some((Signal::JointPositions, true)),
        "{stale:?}"
    );
    // 50 Hz: three periods are 60 ms, under the floor of half a second (issue 18: shorter
    // gaps flapped the link text at 30 % loss and on a busy machine).
    let overdue = stale[0].0 - last;
    assert!((0.5..=0.503).contains(&overdue), "stale after {overdue} s");
    assert!(
        stale.iter().all(|s| s.1 == Signal::JointPositions),
        "{stale:?}"
    );
    // Stale for more than a second: the event is created again.
    let again = net.sent_since(last + 0.001, |m| creates(m, ids::QueryJointPositions));
    let first = again.first().expect("CreateEvent again").t;
    assert!(
        (1.0..=1.003).contains(&(first - last)),
        "re-created {} s after the last sample",
        first - last
    );
    // Samples resume: fresh again (the flag went stale more than a second ago, so no
    // hysteresis wait).
    let resume = net.now();
    cut.set(false);
    net.run(0.5);
    let fresh = net.updates[mark..].iter().find_map(|u| match u {
        Update::Arm {
            fact:
                ArmFact::Stale {
                    t,
                    signal: Signal::JointPositions,
                    stale: false,
                },
            ..
        } => Some(*t),
        _ => None,
    });
    assert!(
        fresh.is_some_and(|t| t - resume <= 0.03),
        "fresh again at {fresh:?}, resumed at {resume}"
    );
    assert!(net.samples(Signal::JointPositions, resume, resume + 0.5) >= 24);
}

#[test]
fn a_stale_event_is_re_created_at_most_once_a_second() {
    let (mut net, cut) = net_with_cuttable_positions();
    let t0 = net.now();
    cut.set(true);
    net.run(3.0);
    let creates = net
        .sent_since(t0, |m| creates(m, ids::QueryJointPositions))
        .len();
    let deliveries = net
        .updates
        .iter()
        .filter(
            |u| matches!(u, Update::Arm { fact: ArmFact::Delivery { t, signal: Signal::JointPositions, .. }, .. } if *t > t0),
        )
        .count();
    assert!(
        creates <= 3,
        "{creates} CreateEvents (and {deliveries} Delivery updates) for positions in 3 s of silence"
    );
}

// -------------------------------------------------------------------------------------------
// Liveness.

#[test]
fn silence_marks_the_link_then_the_component_lost_and_both_recover() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    let t1 = net.now();
    net.peers[0].silenced = true;
    net.run(8.0);
    let lost = net.updates[mark..]
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact:
                    ArmFact::Link {
                        t,
                        state: LinkState::Lost,
                    },
                ..
            } => Some(*t),
            _ => None,
        })
        .expect("Link Lost");
    assert!(
        (3.0..=3.01).contains(&(lost - t1)),
        "lost after {} s",
        lost - t1
    );
    let gone = net.updates[mark..]
        .iter()
        .find_map(|u| match u {
            Update::Net(NetFact::ComponentLost { t, id, lost: true }) if *id == SIM_ID.into() => {
                Some(*t)
            }
            _ => None,
        })
        .expect("ComponentLost");
    assert!(
        (7.0..=7.01).contains(&(gone - t1)),
        "component lost after {} s",
        gone - t1
    );

    let mark = net.mark();
    let t2 = net.now();
    net.peers[0].silenced = false;
    assert!(
        net.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
        "not live again"
    );
    let links: Vec<LinkState> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Link { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(links, [LinkState::Connecting, LinkState::Live]);
    assert!(
        net.updates[mark..]
            .iter()
            .any(|u| matches!(u, Update::Net(NetFact::ComponentLost { lost: false, .. })))
    );
    net.run(1.0);
    let t3 = net.now();
    assert!(net.samples(Signal::JointPositions, t3 - 1.0, t3) >= 48);
    assert!(t3 - t2 < 5.0);
}

#[test]
fn a_restarted_peer_is_set_up_again_and_control_held_again() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.peers[0].silenced = true;
    net.run(4.0);
    assert_eq!(net.link(), Some(LinkState::Lost));
    // The process restarts: no subscriptions, no controller, sequence numbers from 0.
    net.peers[0].sim = Component::new(ArmFile::demo(), sim_cfg());
    net.peers[0].silenced = false;
    let mark = net.mark();
    let t2 = net.now();
    assert!(
        net.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
        "not live again"
    );
    assert!(
        net.run_until(5.0 - (net.now() - t2), |n| matches!(
            n.control(),
            Some(ControlState::Held { authority: 10 })
        )),
        "control not held again: {:?}",
        net.discrete_updates(mark)
    );
    net.run(1.0);
    let t3 = net.now();
    assert!(net.samples(Signal::JointPositions, t3 - 1.0, t3) >= 48);
    assert_eq!(net.peers[0].sim.controller(), Some(OCU_ID));
    assert_eq!(net.peers[0].sim.subscriptions(), 7);
    let controls: Vec<ControlState> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Control { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(
        controls.last(),
        Some(&ControlState::Held { authority: 10 }),
        "{controls:?}"
    );
}

// -------------------------------------------------------------------------------------------
// Control.

#[test]
fn control_is_requested_held_and_kept_past_the_peers_timeout() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.step_size = Duration::from_millis(5);
    let mark = net.mark();
    let t0 = net.now();
    net.command(Command::RequestControl { authority: 10 });
    net.run(0.1);
    let controls: Vec<ControlState> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Control { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(
        controls,
        [
            ControlState::Requested,
            ControlState::Held { authority: 10 }
        ]
    );
    assert_eq!(
        net.outcomes(mark)
            .iter()
            .map(|o| (o.1, o.2.clone()))
            .collect::<Vec<_>>(),
        [(CommandKind::RequestControl, Outcome::Confirmed)]
    );
    // The sim lets control lapse after 2 s without a RequestControl; the client re-requests.
    for _ in 0..60 {
        net.run(1.0);
        assert_eq!(
            net.peers[0].sim.controller(),
            Some(OCU_ID),
            "at {}",
            net.now()
        );
    }
    assert_eq!(net.control(), Some(ControlState::Held { authority: 10 }));
    assert!(
        !net.updates[mark..]
            .iter()
            .any(|u| matches!(u.remark(), Some(Remark::Error { .. })))
    );
    let requests = net
        .sent_since(t0, |m| matches!(m, Message::RequestControl(_)))
        .len();
    assert!(
        (85..=95).contains(&requests),
        "{requests} RequestControl in 60 s (every 2/3 s)"
    );
}

#[test]
fn release_control_is_confirmed() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::ReleaseControl);
    let outcome = net.outcome_of(mark, CommandKind::ReleaseControl, 1.0);
    assert_eq!(outcome.map(|o| o.1), Some(Outcome::Confirmed));
    assert_eq!(net.control(), Some(ControlState::Released));
    assert_eq!(net.peers[0].sim.controller(), None);
    // No more keep-alives.
    let t = net.now();
    net.run(3.0);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::RequestControl(_)))
            .is_empty()
    );
}

#[test]
fn a_higher_authority_takes_control_and_the_client_reports_the_loss() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    let t = net.now();
    // A second OCU with a higher authority.
    net.send_to_peer(
        0,
        OTHER,
        OTHER_ID,
        RequestControl {
            authority_code: 200,
        },
    );
    net.run(0.1);
    let granted = net.stray.iter().any(|o| {
        o.to == OTHER
            && matches!(
                decode(&o.bytes).first(),
                Some((_, Some(Message::ConfirmControl(c)))) if c.response_code == ConfirmControlCode::ControlAccepted
            )
    });
    assert!(granted, "the sim did not grant the other OCU control");
    assert_eq!(net.peers[0].sim.controller(), Some(OTHER_ID));
    assert_eq!(net.control(), Some(ControlState::Released));
    // Issue 18: the loss says it was taken, and by whom (the arm's ReportControl, asked
    // when its RejectControl came).
    let lost = net.updates[mark..].iter().find_map(|u| match u {
        Update::Arm {
            fact: ArmFact::ControlLost { reason, .. },
            ..
        } => Some(*reason),
        _ => None,
    });
    assert_eq!(
        lost,
        Some(ControlLoss::Taken {
            by: OTHER_ID.into(),
            authority: 200
        })
    );
    let holder = net.updates[mark..].iter().rev().find_map(|u| match u {
        Update::Arm {
            fact: ArmFact::Controller { controller, .. },
            ..
        } => Some(*controller),
        _ => None,
    });
    assert_eq!(
        holder,
        Some(Controller {
            id: Some(OTHER_ID.into()),
            authority: 200
        })
    );
    // The client does not fight for control it lost (the other OCU keeps renewing).
    for _ in 0..3 {
        net.send_to_peer(
            0,
            OTHER,
            OTHER_ID,
            RequestControl {
                authority_code: 200,
            },
        );
        net.run(1.0);
    }
    assert!(
        net.sent_since(t + 0.001, |m| matches!(m, Message::RequestControl(_)))
            .is_empty()
    );
    assert_eq!(net.peers[0].sim.controller(), Some(OTHER_ID));
    assert_eq!(net.control(), Some(ControlState::Released));
}

#[test]
fn an_unanswered_control_request_times_out() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.peers[0].intercept = Some(Box::new(|_, m| match m {
        Message::RequestControl(_) => Verdict::Drop,
        _ => Verdict::Pass,
    }));
    let mark = net.mark();
    let t0 = net.now();
    net.command(Command::RequestControl { authority: 10 });
    assert_eq!(net.control(), Some(ControlState::Requested));
    let (t, outcome) = net
        .outcome_of(mark, CommandKind::RequestControl, 3.0)
        .expect("an outcome");
    // Issue 12: "no answer after N tries", with the state the arm reports.
    assert!(
        matches!(&outcome, Outcome::NoAnswer { tries, state } if *tries >= 3 && state.contains("control free")),
        "{outcome:?}"
    );
    assert!(
        (2.0..=2.002).contains(&(t - t0)),
        "timed out after {} s",
        t - t0
    );
    assert_eq!(net.control(), Some(ControlState::Released));
}

// -------------------------------------------------------------------------------------------
// Commands.

#[test]
fn go_to_preset_is_refused_locally_without_control() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    let t = net.now();
    net.command(Command::GoToPreset { pose_id: 2 });
    let outcomes = net.outcomes(mark);
    assert!(
        matches!(
            &outcomes[..],
            [(_, CommandKind::GoToPreset, Outcome::Rejected(_))]
        ),
        "{outcomes:?}"
    );
    net.run(0.5);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::SetCurrentPose(_)))
            .is_empty()
    );
}

#[test]
fn go_to_an_unknown_preset_is_refused_locally() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    let t = net.now();
    net.command(Command::GoToPreset { pose_id: 99 });
    let outcomes = net.outcomes(mark);
    assert!(
        matches!(&outcomes[..], [(_, CommandKind::GoToPreset, Outcome::Rejected(r))] if r.contains("99")),
        "{outcomes:?}"
    );
    net.run(0.5);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::SetCurrentPose(_)))
            .is_empty()
    );
}

#[test]
fn go_to_preset_completes_at_the_preset() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 2 });
    assert_eq!(
        net.sent_since(
            net.now(),
            |m| matches!(m, Message::SetCurrentPose(s) if s.pose_id == 2)
        )
        .len(),
        1
    );
    let (t, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 20.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Completed);
    net.run(0.1);
    let arm = ArmFile::demo();
    let (_, last) = net.positions(mark).pop().unwrap();
    assert_positions_close(&last, &arm.presets[1].positions, &arm.spec);
    assert!(net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::CurrentPose {
                pose: PoseState::Moving { from: 1, to: 2 },
                ..
            },
            ..
        }
    )));
    assert!(net.updates[mark..].iter().any(
        |u| matches!(u, Update::Arm { fact: ArmFact::CurrentPose { t: tp, pose: PoseState::At(2) }, .. } if *tp <= t + 0.001)
    ));
}

#[test]
fn an_emergency_during_a_transition_fails_it() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 2 });
    net.run(0.5);
    net.command(Command::SetEmergency);
    net.run(0.1);
    let outcomes: Vec<(CommandKind, Outcome)> =
        net.outcomes(mark).into_iter().map(|o| (o.1, o.2)).collect();
    assert!(
        // Issue 12: the reason in words, not `TRANSITION_FAILED`.
        outcomes.contains(&(
            CommandKind::GoToPreset,
            Outcome::Failed("the arm is in EMERGENCY".into())
        )),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&(CommandKind::SetEmergency, Outcome::Confirmed)),
        "{outcomes:?}"
    );
}

#[test]
fn emergency_set_and_clear_are_confirmed_by_the_status() {
    // Without control: an emergency stop must always work.
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    net.command(Command::SetEmergency);
    assert_eq!(
        net.outcome_of(mark, CommandKind::SetEmergency, 1.0)
            .map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    assert_eq!(net.peers[0].sim.status(), Status::Emergency);
    assert!(net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Status {
                state: ManagementState::Emergency,
                ..
            },
            ..
        }
    )));
    let mark = net.mark();
    net.command(Command::ClearEmergency);
    assert_eq!(
        net.outcome_of(mark, CommandKind::ClearEmergency, 1.0)
            .map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    assert!(net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Status {
                state: ManagementState::Standby,
                ..
            },
            ..
        }
    )));
}

#[test]
fn standby_and_resume_are_confirmed_with_control() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::Standby);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Standby, 1.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    assert_eq!(net.peers[0].sim.status(), Status::Standby);
    let mark = net.mark();
    net.command(Command::Resume);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Resume, 1.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    assert_eq!(net.peers[0].sim.status(), Status::Ready);
    assert!(net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::Status {
                state: ManagementState::Ready,
                ..
            },
            ..
        }
    )));
}

#[test]
fn standby_and_resume_are_refused_locally_without_control() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    let t = net.now();
    net.command(Command::Standby);
    net.command(Command::Resume);
    let outcomes = net.outcomes(mark);
    assert!(
        matches!(
            &outcomes[..],
            [
                (_, CommandKind::Standby, Outcome::Rejected(_)),
                (_, CommandKind::Resume, Outcome::Rejected(_))
            ]
        ),
        "{outcomes:?}"
    );
    net.run(0.5);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::Standby(_) | Message::Resume(_)))
            .is_empty()
    );
    assert_eq!(net.peers[0].sim.status(), Status::Ready);
}

#[test]
fn status_commands_time_out_when_the_peer_is_silent() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.peers[0].silenced = true;
    let mark = net.mark();
    let t0 = net.now();
    net.command(Command::Standby);
    net.run(2.5);
    let outcomes = net.outcomes(mark);
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    let (t, _, outcome) = &outcomes[0];
    // Issue 12: "no answer after N tries", with the state last reported and how old it is;
    // issue 44: no sign that it arrived is said as such, never as a refusal.
    assert!(
        matches!(outcome, Outcome::NoAnswer { tries, state }
            if *tries >= 3 && state.contains("status READY, reported")
                && state.contains("no sign that any try reached it")),
        "{outcome:?}"
    );
    assert!(
        (2.0..=2.002).contains(&(t - t0)),
        "timed out after {} s",
        t - t0
    );
}

// -------------------------------------------------------------------------------------------
// The emergency stop as an intent (issue 44).

/// The last [`ArmFact::Stop`] said about the arm.
fn stop_state(net: &Net) -> StopState {
    net.facts_of(SIM_ID.into(), 0)
        .filter_map(|f| match f {
            ArmFact::Stop { state, .. } => Some(*state),
            _ => None,
        })
        .last()
        .unwrap_or_default()
}

/// Cuts (or mends) the link both ways, as a radio link drops.
fn cut(net: &mut Net, cut: bool) {
    let faults = Faults {
        loss: if cut { 1.0 } else { 0.0 },
        ..Faults::default()
    };
    net.set_faults_to_client(faults);
    net.set_faults_from_client(faults);
}

#[test]
fn a_stop_pressed_while_the_link_is_cut_is_repeated_until_the_arm_confirms_it() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.step_size = Duration::from_millis(5);
    net.take_control(100);
    cut(&mut net, true);
    net.run(0.5);
    let mark = net.mark();
    let pressed = net.now();
    net.command(Command::SetEmergency);
    net.run(7.0);
    // Seven seconds later: never given up, no verdict, still sent every 150 ms.
    assert_ne!(net.peers[0].sim.status(), Status::Emergency);
    let tries = net
        .sent_since(pressed, |m| matches!(m, Message::SetEmergency(_)))
        .len();
    assert!((44..=48).contains(&tries), "{tries} SetEmergency in 7 s");
    assert!(
        !net.outcomes(mark)
            .iter()
            .any(|o| o.1 == CommandKind::SetEmergency),
        "{:?}",
        net.outcomes(mark)
    );
    assert!(
        matches!(stop_state(&net), StopState::Pending { since, tries: n, .. }
            if since == pressed && n as usize == tries),
        "{:?}",
        stop_state(&net)
    );
    assert_eq!(net.link(), Some(LinkState::Lost));
    // Nothing that moves the arm or undoes the stop goes out meanwhile.
    net.command(Command::GoToPreset { pose_id: 2 });
    net.command(Command::ClearEmergency);
    let refused: Vec<_> = net
        .outcomes(mark)
        .into_iter()
        .filter(|o| matches!(&o.2, Outcome::Rejected(w) if w.contains("not confirmed yet")))
        .map(|o| o.1)
        .collect();
    assert_eq!(
        refused,
        [CommandKind::GoToPreset, CommandKind::ClearEmergency]
    );
    // The link returns: the stop goes first, control is not re-taken before the arm
    // confirms, and the confirmation is said once.
    let back = net.now();
    cut(&mut net, false);
    assert!(
        net.run_until(2.0, |n| stop_state(n) == StopState::Idle),
        "not confirmed 2 s after the link returned"
    );
    assert_eq!(net.peers[0].sim.status(), Status::Emergency);
    let confirmed = net.now();
    assert!(
        net.sent_since(back, |m| matches!(
            m,
            Message::RequestControl(_) | Message::SetCurrentPose(_) | Message::ClearEmergency(_)
        ))
        .iter()
        .all(|s| s.t >= confirmed - 0.005),
        "control re-taken (or motion sent) before the stop was confirmed"
    );
    let outcomes: Vec<_> = net
        .outcomes(mark)
        .into_iter()
        .filter(|o| o.1 == CommandKind::SetEmergency)
        .map(|o| o.2)
        .collect();
    assert_eq!(outcomes, [Outcome::Confirmed]);
    let marks: Vec<String> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Mark { label, .. }) if label.starts_with("E-STOP") => Some(label.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(marks.len(), 2, "{marks:?}");
    assert!(marks[0].starts_with("E-STOP pressed") && marks[1].starts_with("E-STOP confirmed"));
    // After the confirmation control is asked for again by itself (the operator wanted it).
    assert!(
        net.run_until(3.0, |n| matches!(
            n.control(),
            Some(ControlState::Held { .. })
        )),
        "control held again after the confirmation"
    );
    // Nothing more is sent for the stop.
    let t = net.now();
    net.run(1.0);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::SetEmergency(_)))
            .is_empty()
    );
}

#[test]
fn a_stop_gets_through_40_percent_loss_each_way() {
    // Twenty presses, each on a fresh arm, through 40 % loss both ways: each ends confirmed,
    // never refused, and the first SetEmergency reaches the arm quickly.
    let mut firsts = Vec::new();
    let mut confirm = Vec::new();
    for seed in 0..20_u64 {
        let mut net = Net::on_fresh_arm(100 + seed);
        net.lossy_both_ways(0.4);
        assert!(
            net.run_until(10.0, |n| n.link() == Some(LinkState::Live)),
            "seed {seed}"
        );
        let (t0, t, outcome) =
            net.outcome_after(Command::SetEmergency, CommandKind::SetEmergency, 30.0);
        assert_eq!(outcome, Outcome::Confirmed, "seed {seed}");
        assert_eq!(net.peers[0].sim.status(), Status::Emergency);
        confirm.push(t - t0);
        let first = net
            .sent_since(t0, |m| matches!(m, Message::SetEmergency(_)))
            .first()
            .map(|s| s.t - t0);
        firsts.push(first.expect("sent"));
    }
    assert!(firsts.iter().all(|t| *t < 0.01), "first tries {firsts:?}");
    confirm.sort_by(f64::total_cmp);
    assert!(confirm[19] < 5.0, "confirmations {confirm:?}");
}

#[test]
fn a_resume_in_an_emergency_is_said_refused_through_30_percent_loss_each_way() {
    // CI once saw `control resume` answered "no answer (it acknowledged the command but
    // reported no status since)" on the simulator's 30 % loss: the status that judges an
    // acknowledged command was left to the tries that happened to follow the ACK. Now it is
    // asked for at the ACK and waited for; the tries come every 0.25 s. Sixty presses, each
    // on a fresh arm: every one that arrived is said refused with the reason, and a "no
    // answer" says no try was acknowledged (all eight lost one way or the other).
    let mut refused = 0;
    let mut unheard = Vec::new();
    for seed in 0..60_u64 {
        let mut net = Net::on_fresh_arm(500 + seed);
        assert!(
            net.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
            "seed {seed}"
        );
        net.take_control(10);
        net.command(Command::SetEmergency);
        assert!(net.run_until(1.0, |n| stop_state(n) == StopState::Idle));
        net.lossy_both_ways(0.3);
        let (t0, t, outcome) = net.outcome_after(Command::Resume, CommandKind::Resume, 10.0);
        assert!(t - t0 <= 4.01, "seed {seed}: judged after {} s", t - t0);
        match &outcome {
            Outcome::Rejected(why) if why == "the arm is in EMERGENCY" => refused += 1,
            Outcome::NoAnswer { tries, state }
                if state.contains("no sign that any try reached it") =>
            {
                assert!(*tries >= 8, "seed {seed}: {tries} tries");
                unheard.push(seed);
            }
            other => panic!("seed {seed}: {other:?}"),
        }
        assert_eq!(net.peers[0].sim.status(), Status::Emergency);
    }
    // Eight round trips each lost with probability 0.51: 0.5 % of presses unheard.
    assert!(unheard.len() <= 2, "unheard: seeds {unheard:?}");
    assert!(refused >= 58, "{refused} refused");
}

#[test]
fn a_late_acknowledgement_gets_a_status_of_its_own_and_one_more_command_time() {
    // Every ACK comes back 1.9 s late, so the Resume is known to have arrived only then;
    // every ReportStatus is `status_late` s late. A status received after the ACK judges the
    // command: asked for at the ACK and every 0.25 s, and waited for until 2 s after it.
    // Before, the status was left to the tries that followed the ACK (none after 1.75 s), so
    // each of these ended "no answer" at 2.0 s. The Resume itself is never sent after its 2 s.
    for (status_late, refused, within) in [
        (0.0, true, 1.9..=2.0),
        (2.5, true, 2.5..=3.9),
        (4.5, false, 3.85..=3.95),
    ] {
        let mut net = Net::live(sim_cfg(), client_cfg());
        net.take_control(10);
        net.command(Command::SetEmergency);
        assert!(net.run_until(1.0, |n| stop_state(n) == StopState::Idle));
        net.delay_to_client = Some(Box::new(move |_, b| match decode(b).first() {
            Some((h, None)) if h.ack_nak == AckNak::Ack => Duration::from_secs_f64(1.9),
            Some((_, Some(Message::ReportStatus(_)))) => Duration::from_secs_f64(status_late),
            _ => Duration::ZERO,
        }));
        let (t0, t, outcome) = net.outcome_after(Command::Resume, CommandKind::Resume, 10.0);
        let took = t - t0;
        assert!(
            within.contains(&took),
            "{status_late} s late: judged after {took} s"
        );
        if refused {
            assert_eq!(
                outcome,
                Outcome::Rejected("the arm is in EMERGENCY".into()),
                "{status_late} s late"
            );
        } else {
            assert!(
                matches!(&outcome, Outcome::NoAnswer { state, .. }
                    if state.contains("it acknowledged the command but reported no status since")),
                "{outcome:?}"
            );
        }
        assert!(
            net.sent_since(t0 + 2.0, |m| matches!(m, Message::Resume(_)))
                .is_empty(),
            "a Resume sent after its 2 s"
        );
    }
}

#[test]
fn a_lost_clear_is_not_blamed_on_another_client_and_a_real_refusal_is_said() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.command(Command::SetEmergency);
    assert!(net.run_until(1.0, |n| stop_state(n) == StopState::Idle));
    // Lost command: nothing we send arrives; the arm's status events still come.
    net.set_faults_from_client(Faults {
        loss: 1.0,
        ..Faults::default()
    });
    let mark = net.mark();
    net.command(Command::ClearEmergency);
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::ClearEmergency, 3.0)
        .expect("an outcome");
    assert!(
        matches!(&outcome, Outcome::NoAnswer { state, .. }
            if state.contains("no sign that any try reached it") && !state.contains("another")),
        "{outcome:?}"
    );
    net.set_faults_from_client(Faults::default());
    // Lost answers: the clear arrives, nothing comes back for 2.5 s.
    let mark = net.mark();
    net.peers[0].silenced = true;
    net.command(Command::ClearEmergency);
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::ClearEmergency, 3.0)
        .expect("an outcome");
    assert!(matches!(outcome, Outcome::NoAnswer { .. }), "{outcome:?}");
    net.peers[0].silenced = false;
    net.run(0.5);
    // A real refusal: another client's emergency holds the arm.
    net.send_to_peer(0, OTHER, OTHER_ID, SetEmergency { emergency_code: 1 });
    net.command(Command::SetEmergency);
    assert!(net.run_until(1.0, |n| stop_state(n) == StopState::Idle));
    let mark = net.mark();
    net.command(Command::ClearEmergency);
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::ClearEmergency, 3.0)
        .expect("an outcome");
    assert!(
        matches!(&outcome, Outcome::Rejected(w) if w.contains("acknowledged") && w.contains("another client")),
        "{outcome:?}"
    );
    assert_eq!(net.peers[0].sim.status(), Status::Emergency);
}

#[test]
fn control_of_an_arm_with_a_one_second_access_timeout_is_never_lost() {
    // Issue 44: control is confirmed before the arm's ReportTimeout arrives (here held 2 s
    // in flight), so the first keep-alive is scheduled before the timeout is known; it must
    // still come in time for a 1 s timeout, and the report, when it comes, reschedules it.
    for timeout in [1_u8, 5] {
        let mut net = Net::with_sim(
            SimConfig {
                control_timeout_s: timeout,
                ..sim_cfg()
            },
            client_cfg(),
        );
        net.delay_to_client = Some(Box::new(|_, b| match decode(b).first() {
            Some((_, Some(Message::ReportTimeout(_)))) => Duration::from_secs(2),
            _ => Duration::ZERO,
        }));
        // 10 ms each way, as a real link has: a keep-alive sent exactly one timeout after
        // the last arrives too late.
        let late = Faults {
            delay: Duration::from_millis(10),
            ..Faults::default()
        };
        net.set_faults_from_client(late);
        net.set_faults_to_client(late);
        net.connect();
        net.step_size = Duration::from_millis(5);
        let mark = net.mark();
        net.take_control(10);
        for _ in 0..20 {
            net.run(0.5);
            assert_eq!(
                net.peers[0].sim.controller(),
                Some(OCU_ID),
                "timeout {timeout} s: control lost at {}",
                net.now()
            );
        }
        assert!(
            !net.facts_of(SIM_ID.into(), mark)
                .any(|f| matches!(f, ArmFact::ControlLost { .. })),
            "timeout {timeout} s"
        );
    }
}

#[test]
fn each_status_command_is_judged_by_the_status_that_follows_it() {
    // With 20 ms of latency, the status answering Standby is still in flight when Resume goes
    // out 5 ms later; Resume must be judged by the status after it, not by that one.
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.set_faults_to_client(Faults {
        delay: Duration::from_millis(20),
        ..Faults::default()
    });
    let mark = net.mark();
    net.command(Command::Standby);
    net.run(0.005);
    net.command(Command::Resume);
    net.run(0.5);
    assert_eq!(net.peers[0].sim.status(), Status::Ready);
    let outcomes: Vec<(CommandKind, Outcome)> =
        net.outcomes(mark).into_iter().map(|o| (o.1, o.2)).collect();
    assert_eq!(
        outcomes,
        [
            (CommandKind::Standby, Outcome::Confirmed),
            (CommandKind::Resume, Outcome::Confirmed)
        ]
    );
}

/// Runs until an `Update::Status` with `state` arrives (since `mark`), at most `secs`.
fn sees_status(net: &mut Net, mark: usize, state: ManagementState, secs: f64) -> bool {
    let seen = |n: &Net| {
        n.updates[mark..]
            .iter()
            .any(|u| matches!(u, Update::Arm { fact: ArmFact::Status { state: s, .. }, .. } if *s == state))
    };
    seen(net) || net.run_until(secs, seen)
}

#[test]
fn an_event_overtaking_its_confirmation_keeps_its_subscription() {
    // Every ConfirmEventRequest arrives 10 ms late, after the first report the peer sends
    // right behind it (UDP may reorder). The subscriptions must survive.
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.delay_to_client = Some(Box::new(|_, b| match decode(b).first() {
        Some((_, Some(Message::ConfirmEventRequest(_)))) => Duration::from_millis(10),
        _ => Duration::ZERO,
    }));
    net.connect();
    net.run(2.0);
    let cancels = net
        .sent_since(0.0, |m| matches!(m, Message::CancelEvent(_)))
        .len();
    assert_eq!(
        net.peers[0].sim.subscriptions(),
        7,
        "the client sent {cancels} CancelEvent"
    );
    // Another OCU's emergency stop shows (the status event works).
    let mark = net.mark();
    net.send_to_peer(0, OTHER, OTHER_ID, SetEmergency { emergency_code: 1 });
    assert!(
        sees_status(&mut net, mark, ManagementState::Emergency, 1.0),
        "the emergency never showed"
    );
}

#[test]
fn a_quickly_restarted_peer_gets_every_subscription_back() {
    // The peer restarts within `lost_after`: the link is never lost, the new process knows no
    // subscription. Periodic ones go stale and are re-created; the on-change ones must be too.
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.peers[0].silenced = true;
    net.run(1.0);
    net.peers[0].sim = Component::new(ArmFile::demo(), sim_cfg());
    net.peers[0].silenced = false;
    net.run(3.0);
    assert_eq!(net.link(), Some(LinkState::Live));
    let t = net.now();
    assert!(net.samples(Signal::JointPositions, t - 1.0, t) >= 48);
    let mark = net.mark();
    net.send_to_peer(0, OTHER, OTHER_ID, SetEmergency { emergency_code: 1 });
    assert!(
        sees_status(&mut net, mark, ManagementState::Emergency, 1.0),
        "the emergency never showed: the peer has {} subscriptions",
        net.peers[0].sim.subscriptions()
    );
}

// -------------------------------------------------------------------------------------------
// JUDP duties.

#[test]
fn ack_requests_are_answered_with_an_ack() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let t = net.now();
    let header = Header {
        ack_nak: AckNak::Request,
        ..Header::new(OCU_ID, SIM_ID, 61_234)
    };
    let bytes = judp::single(
        &header,
        &Message::from(ReportHeartbeatPulse).emit().unwrap(),
    )
    .unwrap();
    net.inject(SIM, &bytes);
    let acks: Vec<&Sent> = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t >= t && s.header.ack_nak == AckNak::Ack)
        .collect();
    assert_eq!(acks.len(), 1, "{acks:?}");
    let ack = acks[0];
    assert_eq!(ack.to, SIM);
    assert_eq!(
        (
            ack.header.sequence,
            ack.header.destination,
            ack.header.source
        ),
        (61_234, SIM_ID, OCU_ID)
    );
    assert_eq!(net.client.stats().acks_sent, 1);
}

#[test]
fn duplicated_datagrams_are_applied_once() {
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.set_faults_to_client(Faults {
        duplicate: 1.0,
        ..Faults::default()
    });
    net.connect();
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let t0 = net.now();
    net.run(5.0);
    let count = |f: fn(&Update) -> bool| net.updates.iter().filter(|u| f(u)).count();
    assert_eq!(
        count(|u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::Specification { .. },
                ..
            }
        )),
        1
    );
    assert_eq!(
        count(|u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::ToolOffset { .. },
                ..
            }
        )),
        1
    );
    // One for the capabilities, one for the specifications.
    assert_eq!(
        count(|u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::Presets { .. },
                ..
            }
        )),
        2
    );
    assert_eq!(
        count(|u| matches!(
            u,
            Update::Arm {
                fact: ArmFact::Delivery { .. },
                ..
            }
        )),
        7
    );
    assert_eq!(net.outcomes(mark).len(), 1);
    let n = net.samples(Signal::JointPositions, t0, t0 + 5.0);
    assert!((245..=255).contains(&n), "{n} samples in 5 s at 50 Hz");
    let stats = net.client.stats();
    assert!(stats.duplicates * 2 >= stats.datagrams - 2, "{stats:?}");
}

#[test]
fn reordered_events_never_move_positions_backwards() {
    let sim = SimConfig {
        control_timeout_s: 10,
        ..SimConfig::default()
    };
    let mut net = Net::live(sim, client_cfg());
    // Someone else drives the turret at a steady +0.5 rad/s (the velocity driver needs a
    // motion profile first: the arm's own speeds).
    net.send_to_peer(0, OTHER, OTHER_ID, RequestControl { authority_code: 50 });
    let profile = SetJointMotionProfile {
        joint_motion_profiles: ArmFile::demo()
            .spec
            .joints
            .iter()
            .map(|j| JointMotionProfile {
                joint_type: j.kind.into(),
                max_speed: j.max_speed.unwrap_or(0.1),
                max_acceleration: 1.0,
                max_deceleration: 1.0,
            })
            .collect(),
    };
    net.send_to_peer(0, OTHER, OTHER_ID, profile);
    let velocities: Vec<JointValue> = ArmFile::demo()
        .spec
        .joints
        .iter()
        .enumerate()
        .map(|(i, j)| JointValue {
            joint_type: j.kind.into(),
            value: if i == 0 { 0.5 } else { 0.0 },
        })
        .collect();
    net.send_to_peer(
        0,
        OTHER,
        OTHER_ID,
        SetJointVelocity {
            joint_velocities: velocities,
        },
    );
    // Each datagram to the client takes 0..=50 ms more, uniformly: reordering.
    let mut jitter = Rng(0x5EED);
    net.delay_to_client = Some(Box::new(move |_, _| {
        Duration::from_millis(jitter.below(51))
    }));
    net.suite.record_events = true;
    let mark = net.mark();
    let dropped_before = net.client.stats().out_of_order;
    net.run(3.0);
    // The peer's positions events really arrived out of order...
    let id = positions_event(&net);
    let seqs: Vec<u8> = net
        .suite
        .events
        .iter()
        .filter(|e| e.event_id == id && e.report_id == Some(ids::ReportJointPositions))
        .map(|e| e.sequence)
        .collect();
    let inversions = seqs
        .windows(2)
        .filter(|w| w[1].wrapping_sub(w[0]) > 128)
        .count();
    assert!(inversions >= 10, "only {inversions} reorderings");
    // ...yet the applied turret angle only ever grows.
    let turret: Vec<f64> = net.positions(mark).iter().map(|p| p.1[0]).collect();
    for w in turret.windows(2) {
        assert!(w[1] >= w[0], "turret moved back from {} to {}", w[0], w[1]);
    }
    assert!(turret.last().unwrap() - turret[0] > 1.0, "{turret:?}");
    assert!(net.client.stats().out_of_order - dropped_before >= inversions as u64);
}

#[test]
fn a_multi_packet_specification_is_reassembled() {
    let arm = common::long_arm();
    let encoded = Message::from(jaus_ocu::net::reports::spec_report(&arm.spec))
        .emit()
        .unwrap();
    assert!(
        encoded.len() > judp::MAX_BLOCK_PAYLOAD,
        "{} bytes",
        encoded.len()
    );
    let cfg = ClientConfig {
        rates: Rates {
            positions: 10.0,
            velocities: 0.0,
            efforts: 0.0,
            joint_force_torques: 0.0,
            force_torque: 0.0,
        },
        ..client_cfg()
    };
    let mut net = Net::new(cfg);
    net.add_peer(SIM, Component::new(arm.clone(), sim_cfg()));
    net.connect();
    let spec = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Specification { spec, .. },
                ..
            } => Some(spec.clone()),
            _ => None,
        })
        .expect("Specification");
    assert_eq!(spec.joints.len(), 255);
    assert_eq!(spec.joints[254].name, arm.spec.joints[254].name);
    assert!(net.client.stats().reassembled >= 1);
    let (_, values) = net.positions(0).pop().expect("positions");
    assert_eq!(values.len(), 255);
}

#[test]
fn every_block_of_a_datagram_is_handled() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    let not_for_us = net.client.stats().not_for_us;
    let values: Vec<f64> = vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
    let joints: Vec<JointValue> = ArmFile::demo()
        .spec
        .joints
        .iter()
        .zip(&values)
        .map(|(j, v)| JointValue {
            joint_type: j.kind.into(),
            value: *v,
        })
        .collect();
    let mut w = DatagramWriter::new();
    let tool = Message::from(ReportToolOffset {
        x: 0.01,
        y: 0.02,
        z: 0.03,
    })
    .emit()
    .unwrap();
    let positions = Message::from(ReportJointPositions {
        joint_positions: joints,
    })
    .emit()
    .unwrap();
    w.push(&Header::new(OCU_ID, SIM_ID, 50_001), &tool).unwrap();
    w.push(&Header::new(JausId::new(200, 1, 2), SIM_ID, 50_002), &tool)
        .unwrap();
    w.push(&Header::new(OCU_ID, SIM_ID, 50_003), &positions)
        .unwrap();
    net.inject(SIM, &w.finish());
    let tool = net.updates[mark..].iter().find_map(|u| match u {
        Update::Arm {
            fact: ArmFact::ToolOffset { point, .. },
            ..
        } => Some(*point),
        _ => None,
    });
    assert!(
        tool.is_some_and(|p| (p[0] - 0.01).abs() < 1e-6 && (p[2] - 0.03).abs() < 1e-6),
        "{tool:?}"
    );
    let (_, got) = net
        .positions(mark)
        .pop()
        .expect("the third block's positions");
    assert_positions_close(&got, &values, &ArmFile::demo().spec);
    assert_eq!(net.client.stats().not_for_us, not_for_us + 1);
}

// -------------------------------------------------------------------------------------------
// Foreign and hostile input.

#[test]
fn reports_from_another_component_are_counted_never_applied() {
    let home = demo_home();
    let sim = SimConfig {
        hold: Some(home.clone()),
        ..sim_cfg()
    };
    let mut net = Net::live(
        sim,
        ClientConfig {
            component: Some(SIM_ID),
            ..client_cfg()
        },
    );
    let foreign = net.add_peer(
        OTHER,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                id: FOREIGN_ID,
                hold: Some(vec![0.5; 7]),
                ..sim_cfg()
            },
        ),
    );
    let before = net.client.stats().foreign_reports;
    let mark = net.mark();
    // The foreign component streams events and answers queries to the client's address.
    let query = EmbeddedMessage::new(&QueryJointPositions.into()).unwrap();
    net.send_to_peer(
        foreign,
        OCU,
        OCU_ID,
        CreateEvent {
            request_id: 1,
            event_type: EventType::Periodic,
            requested_periodic_rate: 50.0,
            query_message: query,
        },
    );
    for _ in 0..20 {
        net.send_to_peer(foreign, OCU, OCU_ID, QueryJointPositions);
        net.run(0.1);
    }
    let foreign_reports = net.client.stats().foreign_reports - before;
    assert!(
        foreign_reports >= 110,
        "{foreign_reports} foreign reports counted"
    );
    let applied = net.positions(mark);
    assert!(applied.len() >= 95);
    let spec = ArmFile::demo().spec;
    for (_, values) in applied {
        assert_positions_close(&values, &home, &spec);
    }
    assert_eq!(net.client.selected(), Some(SIM_ID));
    assert!(!net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Net(NetFact::Component { .. } | NetFact::Selected { .. })
    )));
}

/// A datagram that is wrong in one of many ways; never from the selected component.
fn hostile_datagram(rng: &mut Rng) -> Vec<u8> {
    let known = [
        ids::ReportJointPositions,
        ids::Event,
        ids::ReportServices,
        ids::ReportIdentification,
        ids::ConfirmEventRequest,
        ids::ConfirmControl,
        ids::RejectControl,
        ids::ReportStatus,
        ids::ReportManipulatorSpecifications,
        ids::QueryIdentification,
        ids::QueryHeartbeatPulse,
        ids::ReportTransitionCompleted,
        0xFFFF,
    ];
    let random_id = |rng: &mut Rng| {
        let id = JausId::from_u32(rng.next() as u32);
        if id == SIM_ID {
            JausId::new(1, 1, 1)
        } else {
            id
        }
    };
    match rng.below(5) {
        0 => {
            let n = rng.below(40) as usize;
            rng.bytes(n)
        }
        1 => {
            let n = rng.below(60) as usize;
            let mut b = vec![judp::VERSION];
            b.extend(rng.bytes(n));
            b
        }
        2 | 3 => {
            // Well-framed blocks with random flags, addresses and bodies, perhaps cut short.
            let mut b = vec![judp::VERSION];
            for _ in 0..=rng.below(3) {
                let dst = match rng.below(3) {
                    0 => OCU_ID,
                    1 => JausId::BROADCAST,
                    _ => random_id(rng),
                };
                let src = match rng.below(4) {
                    0 => JausId::new(0, 1, 1),
                    1 => JausId::BROADCAST,
                    _ => random_id(rng),
                };
                let id = known[rng.below(known.len() as u64) as usize];
                let mut payload = id.to_le_bytes().to_vec();
                let n = rng.below(40) as usize;
                payload.extend(rng.bytes(n));
                let at = b.len();
                Header::new(dst, src, rng.next() as u16)
                    .emit(&payload, &mut b)
                    .unwrap();
                // Flags: priority, broadcast, ACK/NAK, data flags.
                b[at + 3] = rng.next() as u8;
                if rng.chance(0.1) {
                    b[at + 1] = rng.next() as u8;
                }
            }
            if rng.chance(0.3) {
                b.truncate(rng.below(b.len() as u64 + 1) as usize);
            }
            b
        }
        _ => {
            // A valid event from someone else, with a few bits flipped.
            let report = ReportJointPositions {
                joint_positions: (0..7).map(|_| JointValue::revolute(0.25)).collect(),
            };
            let event = Event {
                event_id: rng.below(8) as u8,
                sequence_number: rng.next() as u8,
                report_message: EmbeddedMessage::new(&report.into()).unwrap(),
            };
            let mut b = datagram(OCU_ID, random_id(rng), rng.next() as u16, event);
            for _ in 0..rng.below(4) {
                let i = rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
            b
        }
    }
}

#[test]
fn random_datagrams_change_nothing_but_counters() {
    let home = demo_home();
    let sim = SimConfig {
        hold: Some(home.clone()),
        ..sim_cfg()
    };
    let mut net = Net::live(sim, client_cfg());
    let mark = net.mark();
    let before = net.client.stats();
    let mut rng = Rng(42);
    for i in 0..10_000u32 {
        let bytes = hostile_datagram(&mut rng);
        let from = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, rng.next() as u8)), 3794);
        net.inject(from, &bytes);
        if i.is_multiple_of(10) {
            net.step();
        }
    }
    net.run(1.0);
    let after = net.client.stats();
    assert!(after.datagrams - before.datagrams >= 10_000);
    assert!(after.malformed > before.malformed, "{after:?}");
    assert!(after.foreign_version > before.foreign_version, "{after:?}");
    assert!(after.not_for_us > before.not_for_us, "{after:?}");
    assert!(after.foreign_reports > before.foreign_reports, "{after:?}");
    // Only samples from the sim, counters and (fake) components found.
    for u in &net.updates[mark..] {
        match u {
            Update::Arm {
                fact: ArmFact::JointPositions { values, .. },
                ..
            } => {
                assert_positions_close(values, &home, &ArmFile::demo().spec);
            }
            Update::Net(NetFact::Component { info, .. }) => assert_ne!(info.id, SIM_ID.into()),
            Update::Net(NetFact::ComponentLost { id, .. }) => assert_ne!(*id, SIM_ID.into()),
            u if u.coalesce_key().is_some() => {}
            Update::Net(NetFact::Stats { .. }) => {}
            // Random bytes that happen to carry a discovery report's ID: said once in the log.
            u if matches!(
                u.remark(),
                Some(Remark::Error { message, .. }) if message.contains("no query of ours asked for")
            ) => {}
            u => panic!("unexpected update {u:?}"),
        }
    }
    assert_eq!(net.client.selected(), Some(SIM_ID));
    assert_eq!(net.link(), Some(LinkState::Live));
    let t = net.now();
    assert!(net.samples(Signal::JointPositions, t - 1.0, t) >= 48);
}

#[test]
fn arbitrary_bytes_never_panic_a_live_client() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let net = RefCell::new(Net::live(sim_cfg(), client_cfg()));
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..200),
    );
    runner
        .run(&strategy, |(framed, mut bytes)| {
            if framed {
                bytes.insert(0, judp::VERSION);
            }
            let mut net = net.borrow_mut();
            let before = net.client.stats().datagrams;
            net.inject(OTHER, &bytes);
            prop_assert_eq!(net.client.stats().datagrams, before + 1);
            Ok(())
        })
        .unwrap();
    assert_eq!(net.borrow().client.selected(), Some(SIM_ID));
}

// -------------------------------------------------------------------------------------------
// Select and shutdown.

/// The event IDs peer `peer` confirmed to the client.
fn confirmed_events(net: &Net, peer: usize) -> BTreeSet<u8> {
    net.suite
        .heard
        .iter()
        .filter(|h| h.peer == peer)
        .filter_map(|h| match &h.msg {
            Message::ConfirmEventRequest(c) => Some(c.event_id),
            _ => None,
        })
        .collect()
}

/// The event ID of the first periodic subscription peer 0 confirmed (positions: created first).
fn positions_event(net: &Net) -> u8 {
    net.suite
        .heard
        .iter()
        .find_map(|h| match &h.msg {
            Message::ConfirmEventRequest(c) if c.confirmed_periodic_rate > 0.0 => Some(c.event_id),
            _ => None,
        })
        .expect("a periodic event")
}

/// When peer 0 cancelled event `id` (`ConfirmEventRequest` with rate 0 for a periodic event).
fn cancelled_at(net: &Net, id: u8, after: f64) -> Option<f64> {
    net.suite.heard.iter().find_map(|h| match &h.msg {
        Message::ConfirmEventRequest(c)
            if h.t > after && c.event_id == id && c.confirmed_periodic_rate == 0.0 =>
        {
            Some(h.t)
        }
        _ => None,
    })
}

// ---- Issue 19: every manipulator followed at once ----

/// Two arms on one subsystem, A (126.1.10, moving) focused by `--component` and B
/// (126.1.11) holding its joints at 0.5, both connected.
fn two_arms() -> (Net, usize, usize) {
    let mut net = Net::new(ClientConfig {
        connect: vec![SIM, SIM_B],
        component: Some(SIM_ID),
        ..client_cfg()
    });
    let a = net.add_peer(SIM, Component::new(ArmFile::demo(), sim_cfg()));
    let b = net.add_peer(
        SIM_B,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                id: SIM_B_ID,
                hold: Some(vec![0.5; 7]),
                ..sim_cfg()
            },
        ),
    );
    assert!(
        net.run_until(5.0, |n| n.all_live(&[SIM_ID, SIM_B_ID])),
        "both arms live within 5 s: {:?}",
        net.discrete_updates(0)
    );
    net.run(0.3);
    (net, a, b)
}

/// The last joint positions the client published about `arm` since `mark`.
fn last_positions_of(net: &Net, arm: JausId, mark: usize) -> Option<Vec<f64>> {
    net.facts_of(arm.into(), mark)
        .filter_map(|u| match u {
            ArmFact::JointPositions { values, .. } => Some(values.clone()),
            _ => None,
        })
        .last()
}

#[test]
fn every_manipulator_found_is_followed_each_with_its_own_subscriptions_and_facts() {
    let (net, a, b) = two_arms();
    assert_eq!(net.client.selected(), Some(SIM_ID), "--component focuses A");
    assert_eq!(
        net.client.followed().collect::<BTreeSet<_>>(),
        BTreeSet::from([SIM_ID, SIM_B_ID])
    );
    assert_eq!(net.peers[a].sim.subscriptions(), 7);
    assert_eq!(net.peers[b].sim.subscriptions(), 7);
    // Each arm's samples come wrapped with its own ID: B's are its held joints, A's are not.
    let spec = ArmFile::demo().spec;
    assert_positions_close(
        &last_positions_of(&net, SIM_B_ID, 0).expect("positions of B"),
        &[0.5; 7],
        &spec,
    );
    let from_a = last_positions_of(&net, SIM_ID, 0).expect("positions of A");
    assert!(
        from_a.iter().any(|q| (q - 0.5).abs() > 0.05),
        "A's positions are A's own: {from_a:?}"
    );
    // Per-arm facts never arrive without their arm: the type says so (`Update::Arm`).
    assert!(
        net.updates.iter().all(
            |u| !matches!(u, Update::Net(NetFact::Selected { id, .. }) if *id == SIM_B_ID.into())
        ),
        "B was followed, never focused"
    );
}

#[test]
fn commands_go_only_to_the_focused_arm_and_focus_moves_without_dropping_the_other() {
    let (mut net, a, b) = two_arms();
    net.take_control(10);
    assert_eq!(net.peers[a].sim.controller(), Some(DEFAULT_OCU_ID));
    assert_eq!(net.peers[b].sim.controller(), None, "B was not asked");

    let mark = net.mark();
    let t = net.now();
    net.command(Command::Select(SIM_B_ID.into()));
    assert_eq!(net.client.selected(), Some(SIM_B_ID));
    assert!(
        net.updates[mark..].iter().any(
            |u| matches!(u, Update::Net(NetFact::Selected { id, .. }) if *id == SIM_B_ID.into())
        )
    );
    net.command(Command::SetEmergency);
    net.run(0.5);
    // A keeps its subscriptions and our control; nothing was cancelled or released there.
    let to_a: Vec<&Sent> = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t >= t && s.to == SIM)
        .collect();
    assert!(
        !to_a.iter().any(|s| matches!(
            s.msg,
            Some(Message::CancelEvent(_) | Message::ReleaseControl(_) | Message::SetEmergency(_))
        )),
        "nothing of the focus change or the stop reached A: {:?}",
        to_a.iter().map(|s| &s.msg).collect::<Vec<_>>()
    );
    assert_eq!(net.peers[a].sim.subscriptions(), 7);
    assert_eq!(net.peers[a].sim.controller(), Some(DEFAULT_OCU_ID));
    assert_ne!(net.peers[a].sim.status(), Status::Emergency);
    assert_eq!(net.peers[b].sim.status(), Status::Emergency);
    // The stop's outcome is B's.
    assert!(
        net.facts_of(SIM_B_ID.into(), mark).any(|u| matches!(
            u,
            ArmFact::Remark(Remark::CommandOutcome {
                command: CommandKind::SetEmergency,
                outcome: Outcome::Confirmed,
                ..
            })
        )),
        "{:?}",
        net.discrete_updates(mark)
    );
    // Control of A is kept alive while B is focused.
    net.run(12.0);
    assert_eq!(net.peers[a].sim.controller(), Some(DEFAULT_OCU_ID));
}

#[test]
fn an_arm_named_by_its_stop_is_stopped_whichever_arm_is_focused() {
    // The window's E-STOP names its arm: the stop overtakes a queued `Select`, so the
    // focus when the network side takes it must not decide which arm stops.
    // A is focused (`component: Some(SIM_ID)`).
    let (mut net, a, b) = two_arms();
    let mark = net.mark();
    net.command(Command::SetEmergencyOf(SIM_B_ID.into()));
    assert!(
        net.run_until(2.0, |n| n.peers[b].sim.status() == Status::Emergency),
        "B stopped"
    );
    net.run(1.0);
    assert_ne!(
        net.peers[a].sim.status(),
        Status::Emergency,
        "A not stopped"
    );
    assert!(
        !net.updates[mark..]
            .iter()
            .any(|u| matches!(u, Update::Net(NetFact::Selected { .. }))),
        "the focus stays on A"
    );
    assert!(
        net.facts_of(SIM_B_ID.into(), mark).any(|u| matches!(
            u,
            ArmFact::Remark(Remark::CommandOutcome {
                command: CommandKind::SetEmergency,
                outcome: Outcome::Confirmed,
                ..
            })
        )),
        "B's own outcome: {:?}",
        net.discrete_updates(mark)
    );
    // An arm named but not found yet (`--component`): followed at the first --connect
    // address and stopped there at once, repeated until it confirms (issue 44); the arm
    // that answers there under another ID is not stopped.
    let mark = net.mark();
    let named = ComponentId::new(126, 9, 9);
    net.command(Command::SetEmergencyOf(named));
    net.run(0.5);
    assert!(
        net.facts_of(named, mark).any(|f| matches!(
            f,
            ArmFact::Stop {
                state: StopState::Pending { tries: 4.., .. },
                ..
            }
        )),
        "{:?}",
        net.discrete_updates(mark)
    );
    assert_ne!(net.peers[a].sim.status(), Status::Emergency);
}

#[test]
fn stop_all_sends_set_emergency_to_every_arm_of_the_vehicle() {
    let (mut net, a, b) = two_arms();
    let mark = net.mark();
    net.command(Command::SetEmergencyAll);
    assert!(
        net.run_until(2.0, |n| n.peers[a].sim.status() == Status::Emergency
            && n.peers[b].sim.status() == Status::Emergency),
        "both arms stopped"
    );
    for arm in [SIM_ID, SIM_B_ID] {
        assert!(
            net.run_until(2.0, |n| n.facts_of(arm.into(), mark).any(|u| matches!(
                u,
                ArmFact::Remark(Remark::CommandOutcome {
                    command: CommandKind::SetEmergency,
                    outcome: Outcome::Confirmed,
                    ..
                })
            ))),
            "{arm}: its own confirmed outcome"
        );
    }
}

#[test]
fn a_silent_arm_is_lost_alone_and_probed_slowly_while_the_other_stays_live() {
    let (mut net, _a, b) = two_arms();
    net.peers[b].silenced = true;
    let t = net.now();
    let mark = net.mark();
    assert!(net.run_until(5.0, |n| {
        n.facts_of(SIM_B_ID.into(), mark).any(|u| {
            matches!(
                u,
                ArmFact::Link {
                    state: LinkState::Lost,
                    ..
                }
            )
        })
    }));
    net.run(10.0);
    assert!(
        !net.facts_of(SIM_ID.into(), mark).any(|u| matches!(
            u,
            ArmFact::Link {
                state: LinkState::Lost,
                ..
            }
        )),
        "A stays live"
    );
    let a_samples = net
        .facts_of(SIM_ID.into(), mark)
        .filter(|u| matches!(u, ArmFact::JointPositions { .. }))
        .count();
    assert!(a_samples > 400, "A's positions keep coming: {a_samples}");
    // Towards the silent arm: at most one query a second (the re-probe and discovery).
    let late = t + 5.0;
    let to_b = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t >= late && s.to == SIM_B)
        .count();
    let secs = net.now() - late;
    assert!(
        (to_b as f64) <= secs * 1.0 + 2.0,
        "{to_b} datagrams to the silent arm in {secs:.1} s"
    );
}

#[test]
fn fast_discovery_rounds_for_an_address_without_an_arm_do_not_ask_the_followed_arm() {
    // A --connect address where nothing answers (the default local one, say) keeps the first
    // seconds' fast rounds going; they must go there only, not to the arm already followed.
    let dead = local(3999);
    let mut net = Net::new(ClientConfig {
        connect: vec![SIM, dead],
        ..client_cfg()
    });
    net.add_peer(SIM, Component::new(ArmFile::demo(), sim_cfg()));
    net.connect();
    let from = net.now();
    net.run(8.0 - from);
    let to = net.now();
    let asked = |addr: SocketAddr| {
        net.suite
            .sent
            .iter()
            .filter(|s| {
                s.t >= from
                    && s.to == addr
                    && matches!(s.msg, Some(Message::QueryIdentification(_)))
            })
            .count()
    };
    let period = client_cfg().discovery_period;
    let full_rounds = ((to - from) / period).ceil() as usize + 1;
    assert!(
        asked(SIM) <= full_rounds,
        "{} discovery queries to the followed arm in {:.1} s (full rounds: {full_rounds})",
        asked(SIM),
        to - from
    );
    assert!(
        asked(dead) > full_rounds,
        "the address without an arm still gets the fast rounds: {}",
        asked(dead)
    );
}

#[test]
fn arms_past_the_bound_are_listed_but_not_followed_and_the_operator_is_told() {
    let mut net = Net::new(ClientConfig {
        connect: (0..=MAX_ARMS).map(|i| local(4000 + i as u16)).collect(),
        ..client_cfg()
    });
    for i in 0..=MAX_ARMS {
        net.add_peer(
            local(4000 + i as u16),
            Component::new(
                ArmFile::demo(),
                SimConfig {
                    id: JausId::new(126, 1, 10 + i as u8),
                    hold: Some(vec![0.0; 7]),
                    rate_hz: 50.0,
                    ..sim_cfg()
                },
            ),
        );
    }
    assert!(
        net.run_until(10.0, |n| n.client.stats().arms_not_followed > 0),
        "the {}th manipulator is noticed",
        MAX_ARMS + 1
    );
    net.run(1.0);
    assert_eq!(net.client.followed().count(), MAX_ARMS);
    let told = net
        .updates
        .iter()
        .filter(
            |u| matches!(u.remark(), Some(Remark::Error { message, .. }) if message.contains("followed already")),
        )
        .count();
    assert_eq!(told, 1, "said once");
    let listed = net
        .updates
        .iter()
        .filter_map(|u| match u {
            Update::Net(NetFact::Component { info, .. }) if info.manipulator => Some(info.id),
            _ => None,
        })
        .collect::<BTreeSet<_>>();
    assert_eq!(listed.len(), MAX_ARMS + 1, "every manipulator is listed");
}

#[test]
fn shutdown_cancels_every_event_and_releases_control() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let events = confirmed_events(&net, 0);
    assert_eq!(events.len(), 7);
    let t = net.now();
    net.command(Command::Shutdown);
    assert!(net.client.is_shut_down());
    let cancelled: BTreeSet<u8> = net
        .sent_since(t, |m| matches!(m, Message::CancelEvent(_)))
        .iter()
        .filter_map(|s| match &s.msg {
            Some(Message::CancelEvent(c)) => Some(c.event_id),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, events);
    assert_eq!(
        net.sent_since(t, |m| matches!(m, Message::ReleaseControl(_)))
            .len(),
        1
    );
    assert_eq!(net.peers[0].sim.subscriptions(), 0);
    assert_eq!(net.peers[0].sim.controller(), None);
    // Nothing more leaves the client.
    let n = net.suite.sent.len();
    net.run(2.0);
    assert_eq!(net.suite.sent.len(), n, "{:?}", &net.suite.sent[n..]);
}

#[test]
fn identification_queries_are_answered_from_anyone() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let t = net.now();
    let q = datagram(
        OCU_ID,
        OTHER_ID,
        7,
        QueryIdentification {
            query_type: QueryType::Subsystem,
        },
    );
    net.inject(OTHER, &q);
    let answers: Vec<&Sent> = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t >= t && s.to == OTHER)
        .collect();
    assert!(
        matches!(
            answers.first().and_then(|s| s.msg.as_ref()),
            Some(Message::ReportIdentification(_))
        ),
        "{answers:?}"
    );
}

// -------------------------------------------------------------------------------------------
// Issue 12: true outcomes under loss.

/// The management state last published.
fn status_of(net: &Net) -> Option<ManagementState> {
    net.updates.iter().rev().find_map(|u| match u {
        Update::Arm {
            fact: ArmFact::Status { state, .. },
            ..
        } => Some(*state),
        _ => None,
    })
}

#[test]
fn the_status_is_queried_when_its_event_does_not_deliver_it() {
    // Every status report inside an Event is lost: the client asks.
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    net.drop_to_client = Some(Box::new(|_, bytes| {
        report_in_event(bytes) == Some(ids::ReportStatus)
    }));
    let t0 = net.now();
    assert!(
        net.run_until(3.0, |n| status_of(n) == Some(ManagementState::Ready)),
        "status unknown 3 s after start"
    );
    assert!(net.now() - t0 < 2.0, "known after {} s", net.now() - t0);
    assert!(
        !net.sent_since(t0, |m| matches!(m, Message::QueryStatus(_)))
            .is_empty()
    );
}

#[test]
fn a_lost_control_request_is_sent_again_and_confirmed() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let dropped = Rc::new(Cell::new(0));
    let d = dropped.clone();
    net.peers[0].intercept = Some(Box::new(move |_, m| match m {
        Message::RequestControl(_) if d.get() < 2 => {
            d.set(d.get() + 1);
            Verdict::Drop
        }
        _ => Verdict::Pass,
    }));
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::RequestControl, 3.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Confirmed);
    assert_eq!(dropped.get(), 2);
    assert_eq!(net.peers[0].sim.controller(), Some(OCU_ID));
}

#[test]
fn a_resume_the_arm_performed_is_confirmed_though_its_answers_were_lost() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::Standby);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Standby, 1.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    // Every direct ReportStatus is lost from now on; only the status event tells.
    net.drop_to_client = Some(Box::new(|_, bytes| {
        matches!(
            decode(bytes).first(),
            Some((_, Some(Message::ReportStatus(_))))
        )
    }));
    let mark = net.mark();
    net.command(Command::Resume);
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::Resume, 3.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Confirmed);
    assert_eq!(status_of(&net), Some(ManagementState::Ready));
}

#[test]
fn a_resume_in_an_emergency_is_refused_with_the_reason_in_words() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.command(Command::SetEmergency);
    assert!(sees_status(&mut net, 0, ManagementState::Emergency, 1.0));
    let mark = net.mark();
    net.command(Command::Resume);
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::Resume, 3.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Rejected("the arm is in EMERGENCY".into()));
}

#[test]
fn a_lost_preset_command_is_sent_again_and_completes() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let dropped = Rc::new(Cell::new(0));
    let d = dropped.clone();
    net.peers[0].intercept = Some(Box::new(move |_, m| match m {
        Message::SetCurrentPose(_) if d.get() < 1 => {
            d.set(d.get() + 1);
            Verdict::Drop
        }
        _ => Verdict::Pass,
    }));
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 2 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 30.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(dropped.get(), 1);
    assert_eq!(
        net.outcomes(mark).len(),
        1,
        "one outcome: {:?}",
        net.outcomes(mark)
    );
}

#[test]
fn a_preset_move_whose_completion_report_is_lost_completes_by_the_pose() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.drop_to_client = Some(Box::new(|_, bytes| {
        matches!(
            decode(bytes).first(),
            Some((_, Some(Message::ReportTransitionCompleted(_))))
        )
    }));
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 2 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 30.0)
        .expect("an outcome");
    assert_eq!(outcome, Outcome::Completed);
}

#[test]
fn every_command_ends_in_one_outcome_that_agrees_with_the_state_under_loss() {
    // 30 % loss both ways, duplicates and reordering: each command ends in exactly one outcome,
    // and a confirmed one agrees with the state the client shows.
    let mut net = Net::with_sim(sim_cfg(), client_cfg());
    let faults = Faults {
        loss: 0.3,
        duplicate: 0.1,
        reorder: 0.1,
        delay: Duration::from_millis(20),
    };
    net.set_faults_to_client(faults);
    net.set_faults_from_client(faults);
    let t0 = net.now();
    assert!(
        net.run_until(3.0, |n| status_of(n)
            .is_some_and(|s| s != ManagementState::Unknown)),
        "status unknown 3 s after start"
    );
    assert!(net.now() - t0 <= 3.0);
    assert!(net.run_until(20.0, |n| n.link() == Some(LinkState::Live)));
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let (_, o) = net
        .outcome_of(mark, CommandKind::RequestControl, 5.0)
        .expect("an outcome");
    assert_eq!(o, Outcome::Confirmed);
    for (i, pose) in [2u8, 1, 3, 1, 2].into_iter().enumerate() {
        let mark = net.mark();
        net.command(Command::GoToPreset { pose_id: pose });
        let (_, o) = net
            .outcome_of(mark, CommandKind::GoToPreset, 60.0)
            .expect("an outcome");
        assert_eq!(o, Outcome::Completed, "go-to #{i} (pose {pose})");
        net.run(0.5);
        let outcomes = net.outcomes(mark);
        assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    }
}

// -------------------------------------------------------------------------------------------
// Issue 18: many OCUs, one arm; a silent arm costs nothing.

#[test]
fn a_silent_arm_costs_a_few_wake_ups_and_at_most_one_query_a_second() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.peers[0].silenced = true;
    let silent = net.now();
    // The link is lost after `lost_after` (3 s); then only the slow re-probe and discovery.
    let wakeups = net.run_by_deadlines(63.0);
    let lost_at = net
        .updates
        .iter()
        .find_map(|u| match u {
            Update::Arm {
                fact:
                    ArmFact::Link {
                        t,
                        state: LinkState::Lost,
                    },
                ..
            } if *t > silent => Some(*t),
            _ => None,
        })
        .expect("the link was lost");
    assert!(lost_at - silent < 3.6, "lost after {} s", lost_at - silent);
    // A spinning client reaches the cap of 100,000; a sleeping one wakes for discovery (every
    // 2 s), counters (1 s), the re-probe (2 s) and the first seconds' retries.
    assert!(wakeups <= 5 * 63, "{wakeups} wake-ups in 63 s");
    let to_arm: Vec<&Sent> = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t > lost_at + 0.01 && s.to == SIM)
        .collect();
    let span = net.now() - lost_at;
    assert!(
        to_arm.len() as f64 <= span + 1.0,
        "{} datagrams to the silent arm in {span:.1} s: {:?}",
        to_arm.len(),
        to_arm
            .iter()
            .map(|s| s.msg.as_ref().map(Message::name))
            .collect::<Vec<_>>()
    );
    // Back at once when the arm is heard again: live within a re-probe period and a setup.
    net.peers[0].silenced = false;
    let back = net.now();
    assert!(
        net.run_until(4.0, |n| n.link() == Some(LinkState::Live)),
        "not live again"
    );
    assert!(
        net.now() - back < 3.0,
        "live again after {} s",
        net.now() - back
    );
    // Control we held when the link was lost is asked for again and held.
    assert!(net.run_until(2.0, |n| matches!(
        n.control(),
        Some(ControlState::Held { .. })
    )));
}

#[test]
fn losing_the_link_says_control_is_no_longer_known_to_be_held() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.peers[0].silenced = true;
    assert!(net.run_until(4.0, |n| n.link() == Some(LinkState::Lost)));
    assert_eq!(net.control(), Some(ControlState::Requested));
    assert!(net.updates[mark..].iter().any(|u| matches!(
        u,
        Update::Arm {
            fact: ArmFact::ControlLost {
                reason: ControlLoss::LinkLost,
                ..
            },
            ..
        }
    )));
}

#[test]
fn a_stale_signal_leaves_no_deadline_behind() {
    // Issue 18 item 6: once a signal was stale its check stayed in the past and the network
    // thread spun. Positions cut off (the arm still answers everything else) for 30 s.
    let (mut net, cut) = net_with_cuttable_positions();
    cut.set(true);
    let wakeups = net.run_by_deadlines(30.0);
    assert!(wakeups <= 10 * 30, "{wakeups} wake-ups in 30 s");
    assert_eq!(
        net.updates.iter().rev().find_map(|u| match u {
            Update::Arm {
                fact:
                    ArmFact::Stale {
                        signal: Signal::JointPositions,
                        stale,
                        ..
                    },
                ..
            } => Some(*stale),
            _ => None,
        }),
        Some(true)
    );
}

#[test]
fn a_live_arm_costs_few_wake_ups_between_datagrams() {
    // The same class of bug on a healthy link: deadlines alone wake the client a few times a
    // second (datagrams wake it besides, as they arrive).
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let wakeups = net.run_by_deadlines(20.0);
    assert!(wakeups <= 10 * 20, "{wakeups} wake-ups in 20 s");
}

#[test]
fn at_30_percent_loss_the_link_word_changes_at_most_once_a_second() {
    let mut net = Net::new(client_cfg());
    net.add_peer(SIM, Component::new(ArmFile::demo(), sim_cfg()));
    net.set_faults_to_client(Faults {
        loss: 0.3,
        ..Faults::default()
    });
    net.connect();
    let mark = net.mark();
    net.run(60.0);
    let mut state = ArmState::default();
    for u in &net.updates[..mark] {
        state.apply(u);
    }
    let mut word = state.freshness().word();
    let mut changes = Vec::new();
    for u in &net.updates[mark..] {
        state.apply(u);
        let w = state.freshness().word();
        if w != word {
            changes.push((u.t(), w));
            word = w;
        }
    }
    assert!(
        changes.windows(2).all(|w| w[1].0 - w[0].0 >= 1.0),
        "{changes:?}"
    );
}

#[test]
fn a_refused_request_says_who_holds_control_and_at_what_authority() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.send_to_peer(0, OTHER, OTHER_ID, RequestControl { authority_code: 10 });
    net.run(0.05);
    assert_eq!(net.peers[0].sim.controller(), Some(OTHER_ID));
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::RequestControl, 1.5)
        .expect("an outcome");
    match &outcome {
        Outcome::Rejected(why) => assert!(
            why.contains("held by 150.1.1 (authority 10)") && why.contains("ours is 10"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    // The holder was published before the outcome (the live area and `control --json` read
    // it from the state).
    let holder_at = net.updates[mark..]
        .iter()
        .position(|u| matches!(u, Update::Arm { fact: ArmFact::Controller { controller, .. }, .. } if controller.id == Some(OTHER_ID.into())));
    let outcome_at = net.updates[mark..]
        .iter()
        .position(|u| matches!(u.remark(), Some(Remark::CommandOutcome { .. })));
    assert!(holder_at < outcome_at, "{holder_at:?} {outcome_at:?}");
    assert_eq!(net.control(), Some(ControlState::Released));
}

#[test]
fn a_stranger_datagram_with_our_id_is_shown_but_locks_nothing() {
    // Anyone can forge our ID: a datagram from a stranger's address (not the arm's) carrying
    // it is counted and shown, and locks nothing by itself.
    let mut net = Net::live(sim_cfg(), client_cfg());
    assert_eq!(net.conflict(), None);
    let mark = net.mark();
    net.inject(
        OTHER,
        &datagram(
            JausId::BROADCAST,
            OCU_ID,
            777,
            QueryIdentification {
                query_type: QueryType::Subsystem,
            },
        ),
    );
    assert_eq!(
        net.conflict(),
        None,
        "a stranger's datagram locked commands"
    );
    let suspect = net.suspect().expect("shown as a suspicion");
    assert_eq!(suspect.address, Some(OTHER));
    net.command(Command::RequestControl { authority: 10 });
    assert_eq!(
        net.outcome_of(mark, CommandKind::RequestControl, 1.0)
            .map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    net.run(1.5);
    assert_eq!(net.client_stats().same_id_strangers, 1);
    assert!(net.client_stats().id_conflicts == 0);
    // Quiet for 15 s: the suspicion ends too.
    assert!(net.run_until(16.0, |n| n.suspect().is_none()));
}

#[test]
fn our_own_echo_is_not_a_conflict() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    // Everything the client sent, handed back to it from its own address (a multicast
    // echo): numbers it sent, from its port.
    let echoes: Vec<Vec<u8>> = net
        .suite
        .sent
        .iter()
        .rev()
        .take(50)
        .filter_map(|s| {
            let m = s.msg.clone()?;
            Some(judp::single(&s.header, &m.emit().unwrap()).unwrap())
        })
        .collect();
    assert!(!echoes.is_empty());
    for e in &echoes {
        net.inject(OCU, e);
    }
    assert_eq!(net.conflict(), None);
}

#[test]
fn a_control_acceptance_we_did_not_ask_for_is_a_conflict() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.run(3.5);
    // The arm's sequence numbers start at a random point: a number it used within the last
    // 2 s is dropped as a duplicate (about 2 % of runs with one fixed number). Two numbers
    // half the counter apart: the arm's last 2 s (a few hundred numbers) hold one at most.
    for seq in [4242, 4242 + 32_768] {
        net.inject(
            SIM,
            &datagram(
                OCU_ID,
                SIM_ID,
                seq,
                ConfirmControl {
                    response_code: ConfirmControlCode::ControlAccepted,
                },
            ),
        );
    }
    assert!(
        net.conflict().is_some(),
        "{:#?}",
        net.updates.iter().rev().take(8).collect::<Vec<_>>()
    );
}

#[test]
fn clearing_an_emergency_leaves_the_arm_in_standby_until_resume() {
    // Reset is not restart: ClearEmergency alone never makes the arm READY.
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::SetEmergency);
    assert_eq!(
        net.outcome_of(mark, CommandKind::SetEmergency, 2.0)
            .map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    let mark = net.mark();
    net.command(Command::ClearEmergency);
    assert_eq!(
        net.outcome_of(mark, CommandKind::ClearEmergency, 2.0)
            .map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    net.run(2.0);
    assert!(
        net.sent_since(0.0, |m| matches!(m, Message::Resume(_)))
            .is_empty()
    );
    assert_eq!(net.peers[0].sim.status(), Status::Standby);
    let mark = net.mark();
    net.command(Command::Resume);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Resume, 2.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
}

// -------------------------------------------------------------------------------------------
// Issue 29: untrusted senders. Bounded tables, arms pinned to where they were found, a shared
// ID caught from the arm's own words within 2 s, control facts always fresh.

/// A `ReportServices` from `id` naming `components` of its node, each with `services`.
fn services_report(id: JausId, components: &[u8], services: &[&str]) -> Message {
    use jaus_ocu::jaus::core::{ComponentServices, NodeServices, ReportServices, ServiceRec};
    ReportServices {
        nodes: vec![NodeServices {
            node_id: id.node,
            components: components
                .iter()
                .map(|c| ComponentServices {
                    component_id: *c,
                    instance_id: 0,
                    services: services.iter().map(|s| ServiceRec::new(s, 2, 0)).collect(),
                })
                .collect(),
        }],
    }
    .into()
}

const MANIPULATOR_SERVICES: [&str; 2] = [
    "urn:jaus:jss:manipulator:ManipulatorSpecificationService",
    "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor",
];

/// The joint counts of every specification published since `mark`.
fn spec_joint_counts(net: &Net, mark: usize) -> Vec<usize> {
    net.updates[mark..]
        .iter()
        .filter_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Specification { spec, .. },
                ..
            } => Some(spec.joint_count()),
            _ => None,
        })
        .collect()
}

#[test]
fn spoofed_facts_from_another_address_never_rewrite_the_arm() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let joints = net.peers[0].sim.arm().spec.joint_count();
    let mark = net.mark();
    // A specification of 255 joints and joint positions under the arm's ID, from another port.
    let mut spec = net.peers[0].sim.arm().spec.clone();
    let extra = spec.joints[1].clone();
    while spec.joints.len() < 255 {
        spec.joints.push(extra.clone());
    }
    let forged = jaus_ocu::net::reports::spec_report(&spec);
    net.inject(OTHER, &datagram(OCU_ID, SIM_ID, 901, forged));
    let positions = ReportJointPositions {
        joint_positions: vec![JointValue::revolute(3.0); 255],
    };
    for i in 0..50 {
        net.inject(
            OTHER,
            &datagram(OCU_ID, SIM_ID, 1000 + i, positions.clone()),
        );
    }
    net.run(1.0);
    assert!(
        spec_joint_counts(&net, mark).iter().all(|n| *n == joints),
        "a forged specification was applied: {:?}",
        spec_joint_counts(&net, mark)
    );
    assert!(
        net.positions(mark).iter().all(|(_, q)| q.len() == joints),
        "forged positions were applied"
    );
    assert!(net.client_stats().spoofed >= 51, "{:?}", net.client_stats());
    // Said once, not once per datagram.
    let said = net.updates[mark..]
        .iter()
        .filter(|u| matches!(u.remark(), Some(Remark::Error { message, .. }) if message.contains("not applied")))
        .count();
    assert_eq!(said, 1);
    // Where we send to the arm did not move.
    let t = net.now();
    net.run(1.0);
    let to_arm = net.sent_since(t, |m| matches!(m, Message::QueryHeartbeatPulse(_)));
    assert!(!to_arm.is_empty());
    assert!(
        to_arm.iter().all(|s| s.to == SIM),
        "sent elsewhere: {:?}",
        to_arm.iter().map(|s| s.to).collect::<Vec<_>>()
    );
    // And the arm is still live with its own samples.
    assert_eq!(net.link(), Some(LinkState::Live));
}

#[test]
fn an_arm_that_moved_is_re_pinned_once_it_answers_our_query_at_its_new_address() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    // The arm's process goes quiet at SIM and comes back at SIM_B (a restart on another
    // port): the link is lost first.
    net.peers[0].silenced = true;
    assert!(net.run_until(5.0, |n| n.link() == Some(LinkState::Lost)));
    let mark = net.mark();
    net.peers[0].addr = SIM_B;
    net.peers[0].silenced = false;
    // Its events reach us from SIM_B (counted as spoofed: not applied), we ask SIM_B, it
    // answers, and the arm is followed there.
    assert!(
        net.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
        "not re-pinned: {:?}",
        net.discrete_updates(mark)
    );
    let told = net.updates[mark..]
        .iter()
        .any(|u| matches!(u.remark(), Some(Remark::Error { message, .. }) if message.contains("moved") && message.contains(&SIM_B.to_string())));
    assert!(
        told,
        "the operator was not told: {:?}",
        net.discrete_updates(mark)
    );
    let t = net.now();
    net.run(1.0);
    let to_arm = net.sent_since(t, |m| matches!(m, Message::QueryHeartbeatPulse(_)));
    assert!(!to_arm.is_empty() && to_arm.iter().all(|s| s.to == SIM_B));
}

#[test]
fn a_live_arm_is_never_re_pinned_by_a_stranger_answering_for_it() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    // A stranger answers as the arm from another port, services and all, while the arm is
    // live where it was found.
    for i in 0..20 {
        net.inject(
            OTHER,
            &datagram(
                OCU_ID,
                SIM_ID,
                2000 + i,
                services_report(SIM_ID, &[SIM_ID.component], &MANIPULATOR_SERVICES),
            ),
        );
        net.run(0.1);
    }
    let t = net.now();
    net.run(1.0);
    let to_arm = net.sent_since(t, |m| matches!(m, Message::QueryHeartbeatPulse(_)));
    assert!(!to_arm.is_empty() && to_arm.iter().all(|s| s.to == SIM));
    assert!(
        !net.updates[mark..]
            .iter()
            .any(|u| matches!(u.remark(), Some(Remark::Error { message, .. }) if message.contains(" moved: "))),
    );
    // Nothing was asked of the stranger either: the arm is not silent.
    assert!(net.sent_since(0.0, |_| true).iter().all(|s| s.to != OTHER));
}

#[test]
fn unsolicited_discovery_reports_never_take_a_slot() {
    let mut net = Net::live(
        sim_cfg(),
        ClientConfig {
            connect: vec![SIM, SIM_B],
            ..client_cfg()
        },
    );
    let mark = net.mark();
    // Manipulators "found" by reports nobody asked for, from random IDs at a stranger's port.
    for i in 0..40u8 {
        let id = JausId::new(90, 1 + i, 10);
        net.inject(
            OTHER,
            &datagram(
                OCU_ID,
                id,
                3000 + u16::from(i),
                services_report(id, &[10], &MANIPULATOR_SERVICES),
            ),
        );
    }
    net.run(1.0);
    let followed: Vec<JausId> = net.client.followed().collect();
    assert_eq!(followed, vec![SIM_ID]);
    assert!(net.client_stats().unsolicited >= 40);
    let components = net.updates[mark..]
        .iter()
        .filter(|u| matches!(u, Update::Net(NetFact::Component { .. })))
        .count();
    assert_eq!(components, 0, "unsolicited components published");
    // A second real arm answering our own discovery is followed as before.
    net.add_peer(
        SIM_B,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                id: SIM_B_ID,
                ..sim_cfg()
            },
        ),
    );
    assert!(net.run_until(5.0, |n| n.client.followed().count() == 2));
}

#[test]
fn a_flood_of_discovery_replies_keeps_every_table_bounded_and_the_arm_followed() {
    // Multicast discovery on: every identification is an answer to the group query, so the
    // bounds (not the solicitation rule) are what hold here.
    let mut net = Net::live(
        sim_cfg(),
        ClientConfig {
            multicast: Some(local(3794)),
            ..client_cfg()
        },
    );
    let joints = net.peers[0].sim.arm().spec.joint_count();
    let mut rng = Rng(29);
    let mut max = jaus_ocu::net::client::TableSizes::default();
    for i in 0..20_000u32 {
        let id = JausId::new(
            1 + (rng.next() % 250) as u16,
            1 + (rng.next() % 250) as u8,
            1 + (rng.next() % 250) as u8,
        );
        let m: Message = if i % 2 == 0 {
            jaus_ocu::jaus::core::ReportIdentification {
                query_type: QueryType::Subsystem,
                kind: jaus_ocu::jaus::core::IdentificationType::Vehicle,
                identification: "x".repeat(200),
            }
            .into()
        } else {
            let comps: Vec<u8> = (1..=200).collect();
            services_report(id, &comps, &MANIPULATOR_SERVICES)
        };
        net.harness
            .inject_to_client(OTHER, &datagram(OCU_ID, id, i as u16, m));
        if i % 100 == 0 {
            net.step();
            let t = net.client.table_sizes();
            max.peers = max.peers.max(t.peers);
            max.outstanding = max.outstanding.max(t.outstanding);
            max.arms = max.arms.max(t.arms);
        }
    }
    net.run(2.0);
    assert!(
        max.peers <= jaus_ocu::model::update::MAX_COMPONENTS,
        "{max:?}"
    );
    assert!(max.outstanding <= 64, "{max:?}");
    assert_eq!(max.arms, 1, "a flood took an arm slot: {max:?}");
    let followed: Vec<JausId> = net.client.followed().collect();
    assert_eq!(followed, vec![SIM_ID]);
    assert_eq!(net.link(), Some(LinkState::Live));
    let mark = net.mark();
    net.run(0.5);
    assert!(net.positions(mark).iter().all(|(_, q)| q.len() == joints));
    assert!(!net.positions(mark).is_empty(), "the arm's samples stopped");
    assert!(net.client_stats().peers_evicted > 0);
}

#[test]
fn a_report_naming_our_id_that_we_did_not_cause_is_a_conflict_within_2_s() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let mark = net.mark();
    // Another process under our ID, at another port, takes control.
    let t0 = net.now();
    net.send_to_peer(0, OTHER, OCU_ID, RequestControl { authority_code: 10 });
    assert!(
        net.run_until(2.0, |n| n.conflict().is_some()),
        "no conflict within 2 s"
    );
    let at = net.conflict_at(mark).unwrap();
    assert!(at - t0 <= 2.0, "{}", at - t0);
    // Commands refused, the emergency stop still sent.
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::RequestControl, 0.1)
        .expect("refused at once");
    assert!(
        matches!(&outcome, Outcome::Rejected(why) if why.contains("another client uses")),
        "{outcome:?}"
    );
    let t = net.now();
    net.command(Command::SetEmergency);
    assert!(
        !net.sent_since(t, |m| matches!(m, Message::SetEmergency(_)))
            .is_empty()
    );
    assert_eq!(net.peers[0].sim.status(), Status::Emergency);
}

#[test]
fn an_authority_we_did_not_ask_for_is_a_conflict_within_2_s() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(100);
    net.run(1.0);
    assert_eq!(net.conflict(), None);
    let mark = net.mark();
    let t0 = net.now();
    // The other process under our ID asks with authority 150: the arm takes it as ours.
    net.send_to_peer(
        0,
        OTHER,
        OCU_ID,
        RequestControl {
            authority_code: 150,
        },
    );
    assert!(
        net.run_until(2.0, |n| n.conflict().is_some()),
        "no conflict within 2 s"
    );
    assert!(net.conflict_at(mark).unwrap() - t0 <= 2.0);
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 1 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 0.1)
        .expect("refused");
    assert!(matches!(outcome, Outcome::Rejected(_)));
}

#[test]
fn control_gone_without_our_release_is_a_conflict_within_2_s() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(100);
    net.run(1.0);
    let mark = net.mark();
    let t0 = net.now();
    // The other process under our ID exits and releases "our" control.
    net.send_to_peer(0, OTHER, OCU_ID, jaus_ocu::jaus::core::ReleaseControl);
    assert!(
        net.run_until(2.0, |n| n.conflict().is_some()),
        "no conflict within 2 s: {:?}",
        net.discrete_updates(mark)
    );
    assert!(net.conflict_at(mark).unwrap() - t0 <= 2.0);
}

#[test]
fn the_arm_releasing_control_itself_is_no_conflict() {
    // The arm's own RejectControl (it timed our control out) is the arm's word, not a
    // sign of another client.
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(100);
    net.run(1.0);
    let mark = net.mark();
    // Our keep-alives are lost: the arm times control out and tells us.
    net.harness.set_faults_from_client(Faults {
        loss: 1.0,
        ..Faults::default()
    });
    assert!(net.run_until(5.0, |n| {
        n.updates[mark..].iter().any(|u| {
            matches!(
                u,
                Update::Arm {
                    fact: ArmFact::ControlLost { .. },
                    ..
                }
            )
        })
    }));
    net.harness.set_faults_from_client(Faults::default());
    net.run(3.0);
    assert_eq!(net.conflict(), None, "{:?}", net.discrete_updates(mark));
}

#[test]
fn controller_is_the_arms_latest_answer_after_request_preemption_and_release() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    let controller = |n: &Net| {
        n.updates.iter().rev().find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Controller { controller, .. },
                ..
            } => Some(*controller),
            _ => None,
        })
    };
    net.take_control(10);
    assert!(
        net.run_until(0.5, |n| controller(n).and_then(|c| c.id)
            == Some(OCU_ID.into())),
        "{:?}",
        controller(&net)
    );
    // Pre-empted by a higher authority: the taker, and a motion command's refusal names it.
    net.send_to_peer(
        0,
        OTHER,
        OTHER_ID,
        RequestControl {
            authority_code: 200,
        },
    );
    assert!(net.run_until(1.0, |n| controller(n).and_then(|c| c.id)
        == Some(OTHER_ID.into())));
    assert!(net.run_until(1.0, |n| n.control() == Some(ControlState::Released)));
    let mark = net.mark();
    net.command(Command::GoToPreset { pose_id: 1 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 0.1)
        .expect("refused");
    match outcome {
        Outcome::Rejected(why) => {
            assert!(why.contains("taken by 150.1.1 (authority 200)"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // The taker releases: nobody, as the arm says.
    net.send_to_peer(0, OTHER, OTHER_ID, jaus_ocu::jaus::core::ReleaseControl);
    assert!(net.run_until(2.0, |n| controller(n).is_some_and(|c| c.id.is_none())));
    // Ours again, then released by us: nobody within a moment.
    net.take_control(10);
    assert!(net.run_until(0.5, |n| controller(n).and_then(|c| c.id)
        == Some(OCU_ID.into())));
    net.command(Command::ReleaseControl);
    assert!(net.run_until(0.5, |n| controller(n).is_some_and(|c| c.id.is_none())));
    assert_eq!(net.conflict(), None);
}

#[test]
fn request_ids_start_at_a_random_value_per_process() {
    let first = |seed: u64| {
        let _ = seed;
        let mut net = Net::live(sim_cfg(), client_cfg());
        net.take_control(10);
        let t = net.now();
        net.command(Command::GoToPreset { pose_id: 1 });
        net.run(0.2);
        net.sent_since(t, |m| matches!(m, Message::SetCurrentPose(_)))
            .first()
            .and_then(|s| match &s.msg {
                Some(Message::SetCurrentPose(p)) => Some(p.request_id),
                _ => None,
            })
            .unwrap()
    };
    // Eight processes: not all numbering alike (1 in 255^7 by chance).
    let ids: BTreeSet<u8> = (0..8).map(first).collect();
    assert!(ids.len() > 1, "{ids:?}");
}

#[test]
fn go_to_in_standby_is_refused_before_anything_is_sent_with_the_step_to_take() {
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    let mark = net.mark();
    net.command(Command::Standby);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Standby, 2.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    let mark = net.mark();
    let t = net.now();
    net.command(Command::GoToPreset { pose_id: 2 });
    let (_, outcome) = net
        .outcome_of(mark, CommandKind::GoToPreset, 0.1)
        .expect("refused at once");
    match outcome {
        Outcome::Rejected(why) => {
            assert!(why.contains("STANDBY") && why.contains("resume"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    net.run(0.5);
    assert!(
        net.sent_since(t, |m| matches!(m, Message::SetCurrentPose(_)))
            .is_empty()
    );
    // Resumed, the same move goes.
    let mark = net.mark();
    net.command(Command::Resume);
    assert_eq!(
        net.outcome_of(mark, CommandKind::Resume, 2.0).map(|o| o.1),
        Some(Outcome::Confirmed)
    );
    let t = net.now();
    net.command(Command::GoToPreset { pose_id: 2 });
    net.run(0.2);
    assert!(
        !net.sent_since(t, |m| matches!(m, Message::SetCurrentPose(_)))
            .is_empty()
    );
}

#[test]
fn a_process_held_up_3_s_reads_what_waited_before_it_judges_the_link() {
    // SIGSTOP for 3 s: the arm keeps sending, nothing is read. On waking the client may tick
    // before it reads the socket: the reports waiting there must not count as silence. (The
    // arm's access timeout, 5 s, outlasts the freeze: control is truly kept.)
    let mut net = Net::live(
        SimConfig {
            control_timeout_s: 5,
            ..sim_cfg()
        },
        client_cfg(),
    );
    net.take_control(10);
    let mark = net.mark();
    let end = net.now() + 3.5;
    while net.now() < end {
        net.harness.tick_sims();
        net.harness.advance();
    }
    net.harness.tick_client();
    net.run(1.0);
    assert!(
        !net.facts_of(SIM_ID.into(), mark).any(|f| matches!(
            f,
            ArmFact::Link {
                state: LinkState::Lost,
                ..
            } | ArmFact::ControlLost { .. }
        )),
        "{:?}",
        net.discrete_updates(mark)
    );
    // A real silence is still a lost link, 3 s after it starts.
    net.peers[0].silenced = true;
    let t = net.now();
    assert!(net.run_until(4.0, |n| n.link() == Some(LinkState::Lost)));
    assert!(
        net.now() - t >= 2.9,
        "lost {} s after the silence began",
        net.now() - t
    );
}

#[test]
fn a_status_sent_before_the_one_shown_never_rolls_it_back() {
    // Issue 44: "emergency cleared (READY)" between two EMERGENCY lines, from an older status
    // applied after a newer one. The arm's JUDP sequence numbers order its reports.
    let mut net = Net::live(sim_cfg(), client_cfg());
    // The next direct ReportStatus (READY) is held 200 ms in flight.
    let armed = Rc::new(Cell::new(true));
    let hold = armed.clone();
    net.delay_to_client = Some(Box::new(move |_, b| match decode(b).first() {
        Some((_, Some(Message::ReportStatus(_)))) if hold.get() => {
            hold.set(false);
            Duration::from_millis(200)
        }
        _ => Duration::ZERO,
    }));
    let mark = net.mark();
    // The arm answers a QueryStatus (READY, held back), then another client stops it: its
    // status event (EMERGENCY, a later number) arrives first.
    let query = datagram(SIM_ID, OCU_ID, 60_000, QueryStatus);
    net.harness.inject_to_peer(0, OCU, &query);
    net.run(0.01);
    net.send_to_peer(0, OTHER, OTHER_ID, SetEmergency { emergency_code: 1 });
    assert!(sees_status(&mut net, mark, ManagementState::Emergency, 0.1));
    assert!(!armed.get(), "the READY answer is in flight");
    let emergency_at = net.mark();
    net.run(0.5);
    assert!(
        !sees_status(&mut net, emergency_at, ManagementState::Ready, 0.0),
        "an older status rolled EMERGENCY back"
    );
    assert!(net.client_stats().out_of_order >= 1);
    // A newer number is applied (the rule orders, it does not mute): the arm's own
    // answer to a fresh query says EMERGENCY, and a clear is seen.
    net.send_to_peer(0, OTHER, OTHER_ID, ClearEmergency { emergency_code: 1 });
    assert!(sees_status(
        &mut net,
        emergency_at,
        ManagementState::Standby,
        1.0
    ));
}

#[test]
fn a_predecessor_that_died_holding_control_is_named_as_such() {
    // SIGKILL while holding control, restarted at once with the same ID: the arm still names
    // our ID as controller. Right after the start that is named as most likely our own dead
    // predecessor (commands wait either way, until the arm lets it lapse).
    let mut net = Net::live(sim_cfg(), client_cfg());
    net.take_control(10);
    net.harness.client = jaus_ocu::net::client::Client::new(client_cfg()).with_local_addr(OCU);
    assert!(
        net.run_until(3.0, |n| n.conflict().is_some()),
        "the arm's word was not noticed"
    );
    let evidence = net.conflict().unwrap().evidence;
    assert!(
        evidence.contains("most likely an earlier process with this ID"),
        "{evidence}"
    );
}

// -------------------------------------------------------------------------------------------
// Issue 44: the arm the operator named, at the address the operator named.

/// The `--connect` address the operator gave.
const NAMED: SocketAddr = local(4044);
/// The local address queried without being named (127.0.0.1:3794 of a `jaus-ocu sim`).
const IMPLICIT: SocketAddr = SIM;

/// Where the client last said arm `id` is followed, and the other address of its conflict.
fn followed_at(net: &Net, id: JausId) -> Option<(SocketAddr, Option<SocketAddr>)> {
    net.facts_of(id.into(), 0)
        .filter_map(|f| match f {
            ArmFact::Address { address, other, .. } => Some((*address, *other)),
            _ => None,
        })
        .last()
}

/// Errors said since `mark` (about any arm or the network) that name both addresses.
fn said_naming(net: &Net, mark: usize, a: SocketAddr, b: SocketAddr) -> Vec<String> {
    net.updates[mark..]
        .iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Error { message, .. })
                if message.contains(&a.to_string()) && message.contains(&b.to_string()) =>
            {
                Some(message.clone())
            }
            _ => None,
        })
        .collect()
}

/// Two demo arms under one ID ([`SIM_ID`]): one at the `--connect` address [`NAMED`], one at
/// the implicit [`IMPLICIT`]; which answers first is set by `case` (peer order, a delay on
/// one side, loss, the named one silent at first, the stop pressed before discovery).
/// Returns the net and the indexes of the named and the other peer.
fn one_id_at_two_addresses(case: u64) -> (Net, usize, usize) {
    let mut net = Net::new(ClientConfig {
        connect: vec![NAMED],
        implicit: vec![IMPLICIT],
        component: Some(SIM_ID),
        ..client_cfg()
    });
    let sim = || Component::new(ArmFile::demo(), sim_cfg());
    let (named, other) = if case.is_multiple_of(2) {
        let n = net.add_peer(NAMED, sim());
        (n, net.add_peer(IMPLICIT, sim()))
    } else {
        let o = net.add_peer(IMPLICIT, sim());
        (net.add_peer(NAMED, sim()), o)
    };
    let delay = Duration::from_millis(5 + 7 * (case % 5));
    match case % 3 {
        0 => net.set_faults_of(
            named,
            Faults {
                delay,
                ..Faults::default()
            },
        ),
        1 => net.set_faults_of(
            other,
            Faults {
                delay,
                ..Faults::default()
            },
        ),
        _ => {}
    }
    if case % 4 == 3 {
        for i in [named, other] {
            net.set_faults_of(
                i,
                Faults {
                    loss: 0.2,
                    ..Faults::default()
                },
            );
        }
    }
    (net, named, other)
}

#[test]
fn the_arm_named_is_followed_at_the_connect_address_whichever_answers_first() {
    for case in 0..48u64 {
        let (mut net, named, other) = one_id_at_two_addresses(case);
        // Some cases: the named arm silent at first, so the other is found, followed and
        // live before the named one answers at all.
        let late = case % 6 == 5;
        if late {
            net.peers[named].silenced = true;
            assert!(
                net.run_until(5.0, |n| n.link() == Some(LinkState::Live)),
                "case {case}: the other arm live first"
            );
            net.peers[named].silenced = false;
        }
        // Some cases: the stop pressed before anything was discovered (`control
        // --component … emergency set`).
        let stop_first = case % 8 == 4;
        if stop_first {
            net.command(Command::SetEmergencyOf(SIM_ID.into()));
        }
        let settled = net.run_until(8.0, |n| {
            followed_at(n, SIM_ID).map(|f| f.0) == Some(NAMED)
                && n.link() == Some(LinkState::Live)
                && !said_naming(n, 0, NAMED, IMPLICIT).is_empty()
        });
        assert!(
            settled,
            "case {case}: not followed at {NAMED} with the conflict said: {:?}",
            net.discrete_updates(0)
        );
        net.run(1.0);
        assert_eq!(
            followed_at(&net, SIM_ID),
            Some((NAMED, Some(IMPLICIT))),
            "case {case}"
        );
        // Said in words once, naming both addresses.
        let said = said_naming(&net, 0, NAMED, IMPLICIT);
        assert_eq!(said.len(), 1, "case {case}: {said:?}");
        assert!(said[0].contains("--connect"), "case {case}: {}", said[0]);
        // What goes to the arm goes to the named address.
        let t = net.now() - 0.8;
        let to_arm = net.sent_since(t, |m| matches!(m, Message::QueryHeartbeatPulse(_)));
        assert!(
            !to_arm.is_empty() && to_arm.iter().all(|s| s.to == NAMED),
            "case {case}: {:?}",
            to_arm.iter().map(|s| s.to).collect::<Vec<_>>()
        );
        // The other component is no spoofer, and the arm named is never counted as one.
        let stats = net.client_stats();
        assert_eq!(stats.spoofed, 0, "case {case}: {stats:?}");
        assert!(stats.address_conflict > 0, "case {case}: {stats:?}");
        // The stop reaches the arm named, and only it.
        if !stop_first {
            net.command(Command::SetEmergency);
        }
        assert!(
            net.run_until(3.0, |n| n.peers[named].sim.status() == Status::Emergency),
            "case {case}: the named arm stopped"
        );
        net.run(0.5);
        assert_eq!(
            net.peers[other].sim.status(),
            Status::Ready,
            "case {case}: the other arm untouched"
        );
    }
}

#[test]
fn one_id_at_two_addresses_nobody_named_refuses_commands_in_words_and_stops_both() {
    // Both addresses queried, neither a --connect one: nothing says which is the arm meant.
    let second = local(3796);
    let mut net = Net::new(ClientConfig {
        connect: Vec::new(),
        implicit: vec![IMPLICIT, second],
        ..client_cfg()
    });
    let a = net.add_peer(IMPLICIT, Component::new(ArmFile::demo(), sim_cfg()));
    let b = net.add_peer(second, Component::new(ArmFile::demo(), sim_cfg()));
    assert!(
        net.run_until(5.0, |n| {
            n.link() == Some(LinkState::Live) && !said_naming(n, 0, IMPLICIT, second).is_empty()
        }),
        "{:?}",
        net.discrete_updates(0)
    );
    net.run(0.5);
    let said = said_naming(&net, 0, IMPLICIT, second);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("refused"), "{}", said[0]);
    let mark = net.mark();
    net.command(Command::RequestControl { authority: 10 });
    let (_, o) = net
        .outcome_of(mark, CommandKind::RequestControl, 1.0)
        .expect("an outcome");
    match &o {
        Outcome::Rejected(why) => {
            assert!(
                why.contains(&IMPLICIT.to_string()) && why.contains(&second.to_string()),
                "{why}"
            );
        }
        o => panic!("not refused: {o:?}"),
    }
    assert!(
        net.sent_since(0.0, |m| matches!(m, Message::RequestControl(_)))
            .is_empty(),
        "nothing sent"
    );
    // The emergency stop is never refused: it goes to both.
    net.command(Command::SetEmergency);
    assert!(
        net.run_until(2.0, |n| n.peers[a].sim.status() == Status::Emergency
            && n.peers[b].sim.status() == Status::Emergency)
    );
}

#[test]
fn one_id_at_two_addresses_with_one_named_is_never_refused() {
    let (mut net, named, _) = one_id_at_two_addresses(2);
    assert!(net.run_until(5.0, |n| followed_at(n, SIM_ID)
        == Some((NAMED, Some(IMPLICIT)))));
    net.run(0.5);
    net.take_control(10);
    assert_eq!(net.peers[named].sim.controller(), Some(OCU_ID));
}
