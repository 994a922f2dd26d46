//! The simulated manipulator over real loopback UDP, driven by a small test client built on
//! `jaus_ocu::jaus` only (not on the OCU's network code).

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

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::iop::*;
use jaus_ocu::jaus::judp::{self, AckNak, Broadcast, DataFlags, Datagram, Header};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::wire::scales;
use jaus_ocu::jaus::{DecodeContext, Dialect, EmbeddedMessage, JausId, JointKind, Message};
use jaus_ocu::model::arm::{ArmSpec, JointType};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::reassembly::{Reassembler, Reassembly};
use jaus_ocu::sim::arm_file::{ArmFile, Preset};
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host::{self, SimHandle};

mod common;
use common::wait_until;

const CLIENT: JausId = JausId::new(126, 1, 20);
const OTHER: JausId = JausId::new(126, 1, 30);

fn start(arm: ArmFile, cfg: SimConfig) -> SimHandle {
    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let seed = cfg.seed;
    host::spawn(Component::new(arm, cfg), socket, Faults::default(), seed).unwrap()
}

/// A minimal JAUS client: one socket, one sequence counter, reassembly of multi-packet replies.
struct Client {
    socket: UdpSocket,
    id: JausId,
    sim: SocketAddr,
    sim_id: JausId,
    seq: u16,
    reassembler: Reassembler,
    ctx: DecodeContext,
    queue: std::collections::VecDeque<(Header, Message)>,
    /// Re-sends `RequestControl` every second while waiting, as an OCU holding control does.
    keep_control: Option<Instant>,
}

impl Client {
    fn new(sim: &SimHandle, id: JausId) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        Self {
            socket,
            id,
            sim: sim.local_addr(),
            sim_id: SimConfig::default().id,
            seq: 0,
            reassembler: Reassembler::default(),
            ctx: DecodeContext::NONE,
            queue: std::collections::VecDeque::default(),
            keep_control: None,
        }
    }

    fn send_with(&mut self, header: Header, m: impl Into<Message>) {
        let bytes = m.into().emit().unwrap();
        self.socket
            .send_to(&judp::single(&header, &bytes).unwrap(), self.sim)
            .unwrap();
    }

    fn send(&mut self, m: impl Into<Message>) {
        self.seq = self.seq.wrapping_add(1);
        let h = Header::new(self.sim_id, self.id, self.seq);
        self.send_with(h, m);
    }

    /// The next message within `timeout`.
    fn recv(&mut self, timeout: Duration) -> Option<(Header, Message)> {
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; 65_536];
        loop {
            if let Some(x) = self.queue.pop_front() {
                return Some(x);
            }
            if let Some(last) = self.keep_control
                && last.elapsed() >= Duration::from_secs(1)
            {
                self.keep_control = Some(Instant::now());
                self.send(RequestControl {
                    authority_code: 100,
                });
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            let left = left.min(Duration::from_millis(200));
            self.socket
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .unwrap();
            let Ok((n, _)) = self.socket.recv_from(&mut buf) else {
                if Instant::now() >= deadline {
                    return None;
                }
                continue;
            };
            let dg = Datagram::new_checked(&buf[..n]).expect("the sim sends valid datagrams");
            for b in dg.blocks() {
                let b = b.expect("valid blocks");
                let h = Header::parse(&b.block);
                assert_eq!(
                    h.destination, self.id,
                    "the sim answers the asking client only"
                );
                if h.ack_nak == AckNak::Ack {
                    self.queue.push_back((
                        h,
                        Message::Unknown {
                            id: 0xACAC,
                            body: vec![],
                        },
                    ));
                    continue;
                }
                let bytes = if h.data_flags == DataFlags::Single {
                    b.block.payload().to_vec()
                } else {
                    match self.reassembler.push(0.0, &h, b.block.payload()) {
                        Reassembly::Complete(m) => m,
                        _ => continue,
                    }
                };
                let m =
                    Message::parse_with(&bytes, &self.ctx).expect("the sim sends valid messages");
                self.queue.push_back((h, m));
            }
        }
    }

    /// Waits for the first message `pick` accepts, dropping others.
    fn wait_for<T>(
        &mut self,
        timeout: Duration,
        mut pick: impl FnMut(&Message) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let (_, m) = self.recv(left)?;
            if let Some(t) = pick(&m) {
                return Some(t);
            }
        }
        None
    }

    fn positions(&mut self) -> Vec<f64> {
        self.send(QueryJointPositions);
        self.wait_for(Duration::from_secs(2), |m| match m {
            Message::ReportJointPositions(r) => {
                Some(r.joint_positions.iter().map(|v| v.value).collect())
            }
            _ => None,
        })
        .expect("joint positions")
    }

    fn status(&mut self) -> Status {
        self.send(QueryStatus);
        self.wait_for(Duration::from_secs(2), |m| match m {
            Message::ReportStatus(r) => Some(r.status),
            _ => None,
        })
        .expect("status")
    }

    fn take_control(&mut self) {
        self.send(RequestControl {
            authority_code: 100,
        });
        let code = self
            .wait_for(Duration::from_secs(2), |m| match m {
                Message::ConfirmControl(c) => Some(c.response_code),
                _ => None,
            })
            .expect("ConfirmControl");
        assert_eq!(code, ConfirmControlCode::ControlAccepted);
        self.keep_control = Some(Instant::now());
    }

    fn transition_result(&mut self, request_id: u8, timeout: Duration) -> Option<TransitionStatus> {
        self.wait_for(timeout, |m| match m {
            Message::ReportTransitionCompleted(r) if r.request_id == request_id => {
                Some(r.transition_status)
            }
            _ => None,
        })
    }
}

fn cfg() -> SimConfig {
    SimConfig {
        seed: 7,
        ..SimConfig::default()
    }
}

/// The rate (Hz) of events `event_id`, measured over at least `window` seconds of their
/// arrivals, checking their sequence numbers increment. The window runs from the first event to
/// the last, not from when this thread started, so waiting for the CPU before the first event
/// does not count; a late wake-up at either end is small against a window of seconds.
fn rate(c: &mut Client, event_id: u8, window: f64) -> f64 {
    // Generous: a loaded machine makes this slower, not red. No events at all still fails.
    let deadline = Instant::now() + Duration::from_secs_f64(3.0 * window + 10.0);
    let mut first: Option<Instant> = None;
    let mut intervals = 0u32;
    let mut last_seq: Option<u8> = None;
    loop {
        assert!(
            Instant::now() < deadline,
            "{window} s of events {event_id} did not arrive in time ({intervals} so far)"
        );
        if let Some((_, Message::Event(e))) = c.recv(Duration::from_millis(100))
            && e.event_id == event_id
        {
            let now = Instant::now();
            if let Some(s) = last_seq {
                assert_eq!(
                    e.sequence_number,
                    s.wrapping_add(1),
                    "event sequence numbers increment"
                );
            }
            last_seq = Some(e.sequence_number);
            let Some(first) = first else {
                first = Some(now);
                continue;
            };
            intervals += 1;
            let span = now.duration_since(first).as_secs_f64();
            if span >= window {
                return f64::from(intervals) / span;
            }
        }
    }
}

/// Waits for `n` more events `event_id`: lets the sim's own clock run (`n` periods of the
/// event), however slowly this machine runs it.
fn let_events_pass(c: &mut Client, event_id: u8, n: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = 0;
    while got < n {
        assert!(
            Instant::now() < deadline,
            "only {got} of {n} events {event_id} arrived in time"
        );
        if let Some((_, Message::Event(e))) = c.recv(Duration::from_millis(100))
            && e.event_id == event_id
        {
            got += 1;
        }
    }
}

/// Asserts the joint positions stay `want`, checked again and again for `window`. That
/// something does not happen has no moment to wait for; a loaded machine only means fewer checks
/// in the window, never a false failure.
fn assert_still(c: &mut Client, want: &[f64], window: Duration, what: &str) {
    let start = Instant::now();
    loop {
        assert_eq!(c.positions(), want, "{what}");
        if start.elapsed() >= window {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn lsb_close(a: f64, b: f64, lsb: f64) -> bool {
    (a - b).abs() <= lsb * 1.000_001
}

#[test]
fn discovery_answers_identification_and_lists_every_service() {
    let sim = start(ArmFile::demo(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    // Broadcast query, as an OCU discovering the network sends it (numbered 0 like ours: the
    // counter of `send` starts at 1, and the sim drops a number its source repeats within 2 s).
    let h = Header {
        broadcast: Broadcast::Global,
        ..Header::new(JausId::BROADCAST, CLIENT, 0)
    };
    c.send_with(
        h,
        QueryIdentification {
            query_type: QueryType::Subsystem,
        },
    );
    let (h, m) = c.recv(Duration::from_secs(2)).expect("identification");
    assert_eq!(h.source, SimConfig::default().id);
    let Message::ReportIdentification(r) = m else {
        panic!("{m:?}")
    };
    assert_eq!(r.kind, IdentificationType::Vehicle);
    assert!(r.identification.contains(&ArmFile::demo().name));

    c.send(QueryServices::all());
    let services = c
        .wait_for(Duration::from_secs(2), |m| match m {
            Message::ReportServices(r) => Some(r.nodes[0].components[0].services.clone()),
            _ => None,
        })
        .unwrap();
    let uris: Vec<&str> = services.iter().map(|s| s.uri.as_str()).collect();
    for want in [
        "urn:jaus:jss:core:Transport",
        "urn:jaus:jss:core:Events",
        "urn:jaus:jss:core:AccessControl",
        "urn:jaus:jss:core:Management",
        "urn:jaus:jss:core:Liveness",
        "urn:jaus:jss:core:Discovery",
        "urn:jaus:jss:manipulator:ManipulatorSpecificationService",
        "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor",
        "urn:jaus:jss:manipulator:ManipulatorJointVelocitySensor",
        "urn:jaus:jss:manipulator:PrimitiveManipulator",
        "urn:jaus:jss:manipulator:ManipulatorJointForceTorqueSensor",
        "urn:jaus:jss:manipulator:ManipulatorToolOffsetService",
        "urn:jaus:jss:manipulator:ManipulatorEndEffectorPoseSensor",
        "urn:jaus:jss:iop:ManipulatorEndEffectorForceTorqueSensor",
        "urn:jaus:jss:iop:PresetPose",
    ] {
        assert!(uris.contains(&want), "{want} missing from {uris:?}");
    }
    c.send(QueryHeartbeatPulse);
    assert!(
        c.wait_for(Duration::from_secs(2), |m| matches!(
            m,
            Message::ReportHeartbeatPulse(_)
        )
        .then_some(()))
            .is_some()
    );
}

fn assert_spec_close(got: &ArmSpec, want: &ArmSpec) {
    assert_eq!(got.joint_count(), want.joint_count());
    let close = |a: Option<f64>, b: Option<f64>, lsb: f64, what: &str, i: usize| match (a, b) {
        (Some(a), Some(b)) => assert!(lsb_close(a, b, lsb), "joint {} {what}: {a} vs {b}", i + 1),
        (None, None) => {}
        _ => panic!("joint {} {what}: {a:?} vs {b:?}", i + 1),
    };
    for (i, (g, w)) in got.joints.iter().zip(&want.joints).enumerate() {
        assert_eq!(g.kind, w.kind);
        assert_eq!(g.name, w.name);
        close(
            Some(g.link_length),
            Some(w.link_length),
            scales::LENGTH_U16.lsb(),
            "link_length",
            i,
        );
        close(
            Some(g.twist),
            Some(w.twist),
            scales::ANGLE_U16.lsb(),
            "twist",
            i,
        );
        match g.kind {
            JointType::Revolute => {
                close(
                    Some(g.offset),
                    Some(w.offset),
                    scales::LENGTH_U16.lsb(),
                    "offset",
                    i,
                );
                close(g.min, w.min, scales::LIMIT_RAD.lsb(), "min", i);
                close(g.max, w.max, scales::LIMIT_RAD.lsb(), "max", i);
                close(
                    g.max_speed,
                    w.max_speed,
                    scales::MAX_SPEED_RAD.lsb(),
                    "max_speed",
                    i,
                );
            }
            JointType::Prismatic => {
                close(
                    Some(g.angle),
                    Some(w.angle),
                    scales::ANGLE_U16.lsb(),
                    "angle",
                    i,
                );
                close(g.min, w.min, scales::LIMIT_M.lsb(), "min", i);
                close(g.max, w.max, scales::LIMIT_M.lsb(), "max", i);
                close(
                    g.max_speed,
                    w.max_speed,
                    scales::MAX_SPEED_M.lsb(),
                    "max_speed",
                    i,
                );
            }
        }
        close(
            g.max_effort,
            w.max_effort,
            scales::MAX_EFFORT.lsb(),
            "max_effort",
            i,
        );
        close(
            g.axis_radius,
            w.axis_radius,
            scales::RADIUS.lsb(),
            "axis_radius",
            i,
        );
        close(
            g.link_radius,
            w.link_radius,
            scales::RADIUS.lsb(),
            "link_radius",
            i,
        );
    }
    match (got.mount, want.mount) {
        (Some(g), Some(w)) => {
            for k in 0..3 {
                assert!(lsb_close(
                    g.position[k],
                    w.position[k],
                    scales::POSITION_30M.lsb()
                ));
            }
            for k in 0..4 {
                assert!(lsb_close(
                    g.orientation[k],
                    w.orientation[k],
                    scales::QUATERNION.lsb()
                ));
            }
        }
        (None, None) => {}
        (g, w) => panic!("mount {g:?} vs {w:?}"),
    }
}

#[test]
fn specification_from_the_wire_equals_every_shipped_arm_file() {
    for name in ["demo", "puma560", "ur5e"] {
        let arm = ArmFile::builtin(name).unwrap();
        let sim = start(arm.clone(), cfg());
        let mut c = Client::new(&sim, CLIENT);
        c.send(QueryManipulatorSpecifications {
            presence_vector: 0x03,
        });
        let spec = c
            .wait_for(Duration::from_secs(2), |m| match m {
                Message::ReportManipulatorSpecifications(r) => {
                    Some(jaus_ocu::net::reports::arm_spec(r))
                }
                _ => None,
            })
            .expect("specification");
        assert_spec_close(&spec, &arm.spec);
        c.send(QueryToolOffset);
        let tool = c
            .wait_for(Duration::from_secs(2), |m| match m {
                Message::ReportToolOffset(t) => Some([t.x, t.y, t.z]),
                _ => None,
            })
            .unwrap();
        for (got, want) in tool.iter().zip(arm.tool_point) {
            assert!(
                lsb_close(*got, want, scales::TOOL_OFFSET.lsb()),
                "{name} tool point"
            );
        }
        // Without the optional bits, the optional parts are left out.
        c.send(QueryManipulatorSpecifications { presence_vector: 0 });
        let r = c
            .wait_for(Duration::from_secs(2), |m| match m {
                Message::ReportManipulatorSpecifications(r) => Some(r.clone()),
                _ => None,
            })
            .unwrap();
        assert!(r.manipulator_coordinate_system.is_none() && r.joint_names.is_none());
    }
}

fn create_event(
    c: &mut Client,
    request_id: u8,
    kind: EventType,
    rate: f64,
    query: &Message,
) -> (u8, f64) {
    c.send(CreateEvent {
        request_id,
        event_type: kind,
        requested_periodic_rate: rate,
        query_message: EmbeddedMessage::new(query).unwrap(),
    });
    c.wait_for(Duration::from_secs(2), |m| match m {
        Message::ConfirmEventRequest(e) if e.request_id == request_id => {
            Some((e.event_id, e.confirmed_periodic_rate))
        }
        _ => None,
    })
    .expect("ConfirmEventRequest")
}

#[test]
fn periodic_events_arrive_at_the_confirmed_rate_for_several_subscribers() {
    let sim = start(ArmFile::demo(), cfg());
    let mut a = Client::new(&sim, CLIENT);
    let mut b = Client::new(&sim, OTHER);
    let (ea, ra) = create_event(
        &mut a,
        1,
        EventType::Periodic,
        50.0,
        &QueryJointPositions.into(),
    );
    let (eb, rb) = create_event(
        &mut b,
        1,
        EventType::Periodic,
        200.0,
        &QueryManipulatorEndEffectorForceTorque {
            presence_vector: 0xff,
        }
        .into(),
    );
    assert!(
        (ra - 50.0).abs() < 0.02 && (rb - 200.0).abs() < 0.02,
        "{ra} {rb}"
    );
    assert_ne!((ea, CLIENT), (eb, OTHER));
    // Each over 4 s of arrivals; the bounds are the confirmed rates ± 15 %.
    let (ha, hb) = std::thread::scope(|scope| {
        let ta = scope.spawn(|| rate(&mut a, ea, 4.0));
        let tb = scope.spawn(|| rate(&mut b, eb, 4.0));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    assert!((42.5..=57.5).contains(&ha), "50 Hz gave {ha:.1} Hz");
    assert!((170.0..=230.0).contains(&hb), "200 Hz gave {hb:.1} Hz");
    // Cancel: the events stop.
    a.send(CancelEvent {
        request_id: 9,
        event_id: ea,
    });
    assert!(
        a.wait_for(Duration::from_secs(5), |m| {
            matches!(m, Message::ConfirmEventRequest(e) if e.request_id == 9).then_some(())
        })
        .is_some()
    );
    // B's events are the clock: after a round trip of b's, they were sent after the sim
    // handled the cancel. What the sim sent a before that may still be on its way: let 0.1 s of
    // the sim's time pass, then drop it.
    b.status();
    let_events_pass(&mut b, eb, 20);
    while a.recv(Duration::from_millis(10)).is_some() {}
    // 0.3 s of the sim's time, in which a's 50 Hz would have brought about 15 events.
    let_events_pass(&mut b, eb, 60);
    let mut late = 0;
    while let Some((_, m)) = a.recv(Duration::from_millis(10)) {
        late += u32::from(matches!(m, Message::Event(e) if e.event_id == ea));
    }
    assert_eq!(late, 0, "events after the cancel");
}

#[test]
fn unsupported_event_query_is_rejected() {
    let sim = start(ArmFile::demo(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    c.send(CreateEvent {
        request_id: 4,
        event_type: EventType::Periodic,
        requested_periodic_rate: 10.0,
        query_message: EmbeddedMessage(vec![0x34, 0x12]),
    });
    let code = c
        .wait_for(Duration::from_secs(2), |m| match m {
            Message::RejectEventRequest(r) if r.request_id == 4 => Some(r.response_code),
            _ => None,
        })
        .unwrap();
    assert_eq!(code, Some(RejectEventCode::MessageNotSupported));
}

#[test]
fn preset_transition_ends_at_the_preset_and_reports_completion() {
    let arm = ArmFile::demo();
    let target = arm.presets[1].clone();
    let sim = start(arm.clone(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    let (_, _) = create_event(
        &mut c,
        2,
        EventType::EveryChange,
        0.0,
        &QueryCurrentPose.into(),
    );
    c.take_control();
    c.send(SetCurrentPose {
        request_id: 11,
        pose_id: target.id,
    });
    let mut saw_moving = false;
    let result = c.wait_for(Duration::from_mins(1), |m| match m {
        Message::Event(e) => {
            if let Ok(Message::ReportCurrentPose(ReportCurrentPose::Moving {
                end_state_id, ..
            })) = e.report_message.decode(&DecodeContext::NONE)
            {
                saw_moving |= end_state_id == target.id;
            }
            None
        }
        Message::ReportTransitionCompleted(r) if r.request_id == 11 => Some(r.transition_status),
        _ => None,
    });
    assert_eq!(result, Some(TransitionStatus::Completed));
    assert!(
        saw_moving,
        "ReportCurrentPose reported the transition while it ran"
    );
    let q = c.positions();
    for (i, (got, want)) in q.iter().zip(&target.positions).enumerate() {
        let lsb = match arm.spec.joints[i].kind {
            JointType::Revolute => scales::JOINT_POSITION_RAD.lsb(),
            JointType::Prismatic => scales::JOINT_POSITION_M.lsb(),
        };
        assert!(
            lsb_close(*got, *want, lsb),
            "joint {} at {got}, preset {want}",
            i + 1
        );
    }
    c.send(QueryCurrentPose);
    let pose = c
        .wait_for(Duration::from_secs(2), |m| match m {
            Message::ReportCurrentPose(p) => Some(*p),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        pose,
        ReportCurrentPose::AtPose {
            current_state_id: target.id
        }
    );
    // An unknown pose is refused as such.
    c.send(SetCurrentPose {
        request_id: 12,
        pose_id: 254,
    });
    assert_eq!(
        c.transition_result(12, Duration::from_secs(2)),
        Some(TransitionStatus::UnrecognizedPose)
    );
}

#[test]
fn commands_without_control_are_refused() {
    let arm = ArmFile::demo();
    let sim = start(arm.clone(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    let before = c.positions();
    c.send(SetCurrentPose {
        request_id: 3,
        pose_id: arm.presets[1].id,
    });
    assert_eq!(
        c.transition_result(3, Duration::from_secs(2)),
        Some(TransitionStatus::Failed)
    );
    let moved: Vec<JointValue> = arm.presets[1]
        .positions
        .iter()
        .zip(&arm.spec.joints)
        .map(|(v, j)| JointValue {
            joint_type: j.kind.into(),
            value: *v,
        })
        .collect();
    c.send(SetJointPositions {
        joint_positions: moved,
    });
    wait_until(
        Duration::from_secs(10),
        "the sim refusing SetCurrentPose and SetJointPositions",
        || sim.stats().0.refused_commands >= 2,
    );
    assert_still(
        &mut c,
        &before,
        Duration::from_millis(500),
        "the arm did not move",
    );
    // Another client holds control: a second client is refused too, and cannot take it with
    // a lower authority.
    let mut other = Client::new(&sim, OTHER);
    other.take_control();
    c.send(RequestControl { authority_code: 50 });
    let code = c
        .wait_for(Duration::from_secs(2), |m| match m {
            Message::ConfirmControl(cc) => Some(cc.response_code),
            _ => None,
        })
        .unwrap();
    assert_eq!(code, ConfirmControlCode::InsufficientAuthority);
    assert!(sim.stats().0.refused_commands >= 2);
}

#[test]
fn emergency_stops_motion_until_cleared_and_resumed() {
    let arm = ArmFile::demo();
    let far = arm.presets.iter().max_by(|a, b| {
        let d = |p: &Preset| {
            p.positions
                .iter()
                .zip(&arm.home)
                .map(|(x, y)| (x - y).abs())
                .sum::<f64>()
        };
        d(a).total_cmp(&d(b))
    });
    let far = far.unwrap().clone();
    let sim = start(arm, cfg());
    let mut c = Client::new(&sim, CLIENT);
    c.take_control();
    let home = c.positions();
    c.send(SetCurrentPose {
        request_id: 21,
        pose_id: far.id,
    });
    // The emergency interrupts a motion under way.
    wait_until(
        Duration::from_secs(10),
        "the arm starting towards the preset",
        || c.positions() != home,
    );
    // Anyone may stop the arm.
    let mut bystander = Client::new(&sim, OTHER);
    bystander.send(SetEmergency { emergency_code: 1 });
    assert_eq!(
        c.transition_result(21, Duration::from_secs(2)),
        Some(TransitionStatus::Failed)
    );
    let stopped = c.positions();
    assert_still(
        &mut c,
        &stopped,
        Duration::from_millis(400),
        "no motion during the emergency",
    );
    assert_eq!(c.status(), Status::Emergency);
    c.send(SetCurrentPose {
        request_id: 22,
        pose_id: far.id,
    });
    assert_eq!(
        c.transition_result(22, Duration::from_secs(2)),
        Some(TransitionStatus::Failed)
    );
    // Clearing leaves STANDBY; Resume from the controller makes it READY again.
    bystander.send(ClearEmergency { emergency_code: 1 });
    wait_until(
        Duration::from_secs(10),
        "STANDBY after ClearEmergency",
        || c.status() == Status::Standby,
    );
    c.take_control();
    c.send(Resume);
    wait_until(Duration::from_secs(10), "READY after Resume", || {
        c.status() == Status::Ready
    });
    c.send(SetCurrentPose {
        request_id: 23,
        pose_id: far.id,
    });
    assert_eq!(
        c.transition_result(23, Duration::from_mins(1)),
        Some(TransitionStatus::Completed)
    );
}

#[test]
fn control_lapses_without_renewal() {
    let sim = start(
        ArmFile::demo(),
        SimConfig {
            control_timeout_s: 1,
            ..cfg()
        },
    );
    let mut c = Client::new(&sim, CLIENT);
    c.take_control();
    let t0 = Instant::now();
    // The configured 1 s lapse, not the default 5 s: 4 s leaves a loaded machine 3 s of slack
    // and still tells the two apart.
    let code = c
        .wait_for(Duration::from_secs(4), |m| match m {
            Message::RejectControl(r) => Some(r.response_code),
            _ => None,
        })
        .expect("RejectControl after the timeout");
    assert_eq!(code, RejectControlCode::ControlReleased);
    assert!(t0.elapsed() >= Duration::from_millis(900));
}

#[test]
fn held_joints_report_exactly_and_answer_ack_requests() {
    let arm = ArmFile::builtin("puma560").unwrap();
    let q = vec![0.3, 0.6, -1.2, 0.4, -0.7, 1.1];
    let sim = start(
        arm,
        SimConfig {
            hold: Some(q.clone()),
            ..cfg()
        },
    );
    let mut c = Client::new(&sim, CLIENT);
    let got = c.positions();
    for (g, w) in got.iter().zip(&q) {
        assert!(lsb_close(*g, *w, scales::JOINT_POSITION_RAD.lsb()));
    }
    assert_still(
        &mut c,
        &got,
        Duration::from_millis(200),
        "held joints do not move",
    );
    let h = Header {
        ack_nak: AckNak::Request,
        ..Header::new(SimConfig::default().id, CLIENT, 77)
    };
    c.send_with(h, QueryStatus);
    let (ack, _) = c.recv(Duration::from_secs(2)).unwrap();
    assert_eq!((ack.ack_nak, ack.sequence), (AckNak::Ack, 77));
}

#[test]
fn a_255_joint_specification_arrives_as_a_multi_packet_message() {
    let arm = common::long_arm();
    let encoded = Message::from(jaus_ocu::net::reports::spec_report(&arm.spec))
        .emit()
        .unwrap();
    assert!(
        encoded.len() > judp::MAX_BLOCK_PAYLOAD,
        "needs several blocks: {} bytes",
        encoded.len()
    );
    let sim = start(arm.clone(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    c.send(QueryManipulatorSpecifications {
        presence_vector: 0x03,
    });
    let spec = c
        .wait_for(Duration::from_secs(3), |m| match m {
            Message::ReportManipulatorSpecifications(r) => {
                Some(jaus_ocu::net::reports::arm_spec(r))
            }
            _ => None,
        })
        .expect("the reassembled specification");
    assert_spec_close(&spec, &arm.spec);
}

#[test]
fn openjaus_dialect_writes_codes_zero_and_one() {
    let arm = ArmFile::demo();
    let sim = start(
        arm.clone(),
        SimConfig {
            dialect: Dialect::OpenJaus,
            ..cfg()
        },
    );
    let mut c = Client::new(&sim, CLIENT);
    c.ctx = jaus_ocu::net::reports::decode_context(&arm.spec);
    let kinds: Vec<JointKind> = {
        c.send(QueryJointPositions);
        c.wait_for(Duration::from_secs(2), |m| match m {
            Message::ReportJointPositions(r) => {
                Some(r.joint_positions.iter().map(|v| v.joint_type).collect())
            }
            _ => None,
        })
        .unwrap()
    };
    assert_eq!(
        kinds,
        arm.spec
            .joint_types()
            .into_iter()
            .map(JointKind::from)
            .collect::<Vec<_>>()
    );
}

#[test]
fn hostile_datagrams_change_nothing_but_counters() {
    let sim = start(ArmFile::demo(), cfg());
    let mut c = Client::new(&sim, CLIENT);
    let (event, _) = create_event(
        &mut c,
        1,
        EventType::Periodic,
        100.0,
        &QueryJointPositions.into(),
    );
    let mut rng = 0x1234_5678_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let hostile = UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..3000 {
        let len = (next() % 80) as usize;
        let mut d: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        match i % 3 {
            0 if !d.is_empty() => d[0] = 2,
            1 => d = b"JAUS01.0 legacy framing".to_vec(),
            _ => {}
        }
        hostile.send_to(&d, sim.local_addr()).unwrap();
        // Paced a little so the kernel's socket buffer (outside the sim) does not overflow.
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Reports keep flowing at the confirmed rate while and after the flood arrives.
    let hz = rate(&mut c, event, 2.0);
    assert!(
        hz >= 80.0,
        "only {hz:.1} Hz of events at 100 Hz during a flood"
    );
    let s = sim.stats().0;
    // Every hostile datagram that reached the sim was counted (allow a few lost in the kernel).
    assert!(
        s.malformed + s.foreign_version + s.not_for_us >= 2700,
        "{s:?}"
    );
    assert!(s.foreign_version >= 900, "{s:?}");
    assert_eq!(c.status(), Status::Ready);
}
