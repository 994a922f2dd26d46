//! The network side's jog rules (issue 32), end to end: the real client's jog stream
//! (`net::client::jog_stream`) against the simulator's drivers in the in-memory harness, under a fake
//! clock. Inputs are re-sent every 20 ms of fake time while held, as the window does; what the
//! client puts on the wire, what the simulated arm does with it and what the client says
//! (`ArmFact::Jog`, timeline marks) are checked. Each test names the rule it proves.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::time::Duration;

use jaus_ocu::jaus::core::{RequestControl, SetEmergency};
use jaus_ocu::jaus::manipulator::QueryCommandedJointVelocity;
use jaus_ocu::jaus::{JausId, Message};
use jaus_ocu::model::command::Command;
use jaus_ocu::model::jog::{
    Deflection, Gate, Input, JogDriver, JogOptions, JogRequest, JogStatus, Source, stop_bound,
};
use jaus_ocu::model::update::{ArmFact, ControlState, LinkState, Remark, Update};
use jaus_ocu::net::client::{BRAKE_S, Client, ClientConfig, Output};
use jaus_ocu::net::tap::Direction;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, Drivers, SimConfig};
use jaus_ocu::sim::harness::Passage;
use jaus_ocu::sim::motion::Mode;

#[path = "common/sim_net.rs"]
mod sim_net;
use sim_net::{
    OCU_ID, OTHER, OTHER_ID, SIM, SIM_B, SIM_B_ID, SIM_ID, Suite, client_cfg, decode, sim_cfg,
};

/// The jog's streaming period (`JogSettings::default`), s.
const PERIOD: f64 = 0.05;
/// How often a held input is re-sent (the window's rate), s.
const INPUT_EVERY: f64 = 0.02;
/// The harness's clock step, s.
const STEP: f64 = 0.001;
/// The demo arm's joint count.
const JOINTS: usize = 7;
/// Slack for comparing fake times that are whole steps apart.
const EPS: f64 = 1e-6;

// -------------------------------------------------------------------------------------------
// The harness.

/// A message the client sent.
#[derive(Debug, Clone)]
struct Sent {
    t: f64,
    to: SocketAddr,
    msg: Message,
}

/// An input held: re-sent every [`INPUT_EVERY`] from `next` on.
#[derive(Debug, Clone)]
struct Held {
    req: JogRequest,
    next: f64,
}

/// A second OCU on the same network, routed by hand: what it sends reaches peer 0 as from
/// [`OTHER`]; what the peers send to [`OTHER`] (the harness's strays) reaches it.
struct Second {
    client: Client,
    out: Output,
    updates: Vec<Update>,
    sent: Vec<Message>,
    held: Option<Held>,
}

/// What this suite keeps beside the in-memory network: the messages the client sent, the
/// inputs held, and a second OCU.
#[derive(Default)]
struct Jog {
    sent: Vec<Sent>,
    held: Vec<Held>,
    second: Option<Second>,
}

/// The client and its peers on the in-memory network, with this suite's wire log and inputs.
type Net = sim_net::Net<Jog>;

impl Suite for Jog {
    fn log(&mut self, p: &Passage<'_>, _peers: &[SocketAddr]) {
        if p.direction == Direction::Tx {
            for msg in messages(p.bytes) {
                self.sent.push(Sent {
                    t: p.t,
                    to: p.peer,
                    msg,
                });
            }
        }
    }

    fn before_step(net: &mut Net) {
        net.send_held();
    }

    fn after_step(net: &mut Net) {
        net.step_second();
    }
}

/// The messages of a datagram (ACKs, fragments and undecodable blocks left out).
fn messages(bytes: &[u8]) -> Vec<Message> {
    decode(bytes).into_iter().filter_map(|(_, m)| m).collect()
}

/// Whether `m` moves the arm (or is a jog's zero): a joint driver's command.
fn is_motion(m: &Message) -> bool {
    matches!(
        m,
        Message::SetJointPositions(_) | Message::SetJointVelocity(_) | Message::SetJointEffort(_)
    )
}

/// Whether `m` is anything a jog sends: a motion command or the motion profile.
fn is_jog(m: &Message) -> bool {
    is_motion(m) || matches!(m, Message::SetJointMotionProfile(_))
}

/// The values a joint command carries (rad, rad/s or %), joint 1 first.
fn values(m: &Message) -> Vec<f64> {
    match m {
        Message::SetJointPositions(s) => s.joint_positions.iter().map(|v| v.value).collect(),
        Message::SetJointVelocity(s) => s.joint_velocities.iter().map(|v| v.value).collect(),
        Message::SetJointEffort(s) => s.joint_efforts.clone(),
        _ => Vec::new(),
    }
}

/// The demo arm starting in its Deploy preset, where every joint and the tool point may be
/// jogged either way with room to spare: from Stowed (its home) the clearance guard holds
/// motions that would drive the gripper deeper into the turret (issue 45), which is not what
/// these tests are about.
fn free_arm() -> ArmFile {
    let mut arm = ArmFile::demo();
    let deploy = arm.presets.iter().find(|p| p.name == "Deploy").unwrap();
    arm.home.clone_from(&deploy.positions);
    arm
}

/// A sim offering only these drivers, with this access timeout.
fn sim_with(drivers: Drivers, control_timeout_s: u8) -> SimConfig {
    SimConfig {
        control_timeout_s,
        drivers,
        ..SimConfig::default()
    }
}

const VELOCITY_ONLY: Drivers = Drivers {
    position: false,
    velocity: true,
    effort: false,
    tool: false,
};

const EFFORT_ONLY: Drivers = Drivers {
    position: false,
    velocity: false,
    effort: true,
    tool: false,
};

/// A request from `source` to move joint `joint` (0-based) of `arm` by `amount`.
fn request(arm: JausId, source: Source, joint: usize, amount: f64) -> JogRequest {
    JogRequest::new(
        arm.into(),
        source,
        Input {
            at: 0.0,
            deflection: Deflection::joint(JOINTS, joint, amount),
        },
        JogOptions::default(),
    )
}

/// [`request`] from the keys.
fn keys(joint: usize, amount: f64) -> JogRequest {
    request(SIM_ID, Source::Keys, joint, amount)
}

impl Net {
    fn new(cfg: ClientConfig) -> Self {
        Net::start(cfg, Duration::from_secs_f64(STEP), 0x10C, Jog::default())
    }

    /// A client connected to one demo-arm sim at [`SIM`] (starting in Deploy), run until the
    /// link is live.
    fn live(sim: SimConfig) -> Self {
        Net::live_with(free_arm(), sim)
    }

    /// [`Net::live`] with `arm`.
    fn live_with(arm: ArmFile, sim: SimConfig) -> Self {
        let mut net = Net::new(client_cfg());
        net.add_peer(SIM, Component::new(arm, sim));
        net.connect();
        net
    }

    /// A client following two demo arms, A at [`SIM`] (focused) and B at [`SIM_B`] (held).
    fn two_arms() -> Self {
        let mut net = Net::new(ClientConfig {
            connect: vec![SIM, SIM_B],
            component: Some(SIM_ID),
            ..client_cfg()
        });
        net.add_peer(SIM, Component::new(free_arm(), sim_cfg()));
        // B stands 5 m to the side: the two arms never meet (clearance between arms is
        // tests/clearance_wire.rs's).
        let mut b = free_arm();
        b.spec.mount = Some(jaus_ocu::model::arm::Mount {
            position: [0.35, 5.0, -0.25],
            ..b.spec.mount.unwrap()
        });
        net.add_peer(
            SIM_B,
            Component::new(
                b,
                SimConfig {
                    id: SIM_B_ID,
                    hold: Some(vec![0.5; JOINTS]),
                    ..sim_cfg()
                },
            ),
        );
        assert!(
            net.run_until(5.0, |n| n.all_live(&[SIM_ID, SIM_B_ID])),
            "both arms live within 5 s"
        );
        net.run(0.3);
        net
    }

    /// Runs until the link is live, then a little longer so every query is answered.
    fn connect(&mut self) {
        assert!(
            self.run_until(5.0, |n| n.link_of(SIM_ID) == Some(LinkState::Live)),
            "no live link within 5 s"
        );
        self.run(0.3);
    }

    /// The held inputs due now go to the client (each stamped now).
    fn send_held(&mut self) {
        let now = self.now();
        let mut due = Vec::new();
        for h in &mut self.suite.held {
            if now >= h.next - EPS {
                h.req.input.at = now;
                h.next += INPUT_EVERY;
                due.push(h.req.clone());
            }
        }
        for req in due {
            self.command(Command::Jog(Box::new(req)));
        }
    }

    /// [`Net::run`], calling `watch` after every step.
    fn run_watching(&mut self, secs: f64, mut watch: impl FnMut(&Net)) {
        let end = self.now_ns() + (secs * 1e9).round() as u64;
        while self.now_ns() < end {
            self.step();
            watch(self);
        }
    }

    /// Holds `req`: sent now and every [`INPUT_EVERY`] (replacing its source's held input).
    fn hold(&mut self, req: JogRequest) {
        self.hold_from(req, self.now());
    }

    /// Holds `req`, first sent at `first`.
    fn hold_from(&mut self, req: JogRequest, first: f64) {
        self.suite.held.retain(|h| h.req.source != req.source);
        self.suite.held.push(Held { req, next: first });
        self.send_held();
    }

    /// Changes `source`'s held input with `f` and sends it now.
    fn change(&mut self, source: Source, f: impl FnOnce(&mut JogRequest)) {
        let now = self.now();
        let h = self
            .suite
            .held
            .iter_mut()
            .find(|h| h.req.source == source)
            .expect("that source holds an input");
        f(&mut h.req);
        h.next = now;
        self.send_held();
    }

    /// `source` lets go: its held input stops and a release is sent now.
    fn release(&mut self, source: Source) {
        let now = self.now();
        let mut req = self.stop_sending(source);
        req.input = Input::released(now);
        self.command(Command::Jog(Box::new(req)));
    }

    /// `source`'s input stops arriving (a stalled window); returns its last request.
    fn stop_sending(&mut self, source: Source) -> JogRequest {
        let i = self
            .suite
            .held
            .iter()
            .position(|h| h.req.source == source)
            .expect("that source holds an input");
        self.suite.held.remove(i).req
    }

    /// Asks for control and waits until it is held.
    fn take_control(&mut self, authority: u8) {
        self.command(Command::RequestControl { authority });
        assert!(
            self.run_until(1.0, |n| matches!(
                n.control_of(SIM_ID),
                Some(ControlState::Held { .. })
            )),
            "control not held"
        );
        self.run(0.1);
    }

    /// A hand-made message to peer `i` from [`OTHER`] as `src`.
    fn send_to_peer(&mut self, i: usize, src: JausId, m: impl Into<Message>) {
        let bytes = self.harness.datagram_to_peer(i, src, 777, &m.into());
        self.harness.inject_to_peer(i, OTHER, &bytes);
    }

    /// Jog commands (motion and profile) the client sent to `to` at or after `t`.
    fn jog_sent(&self, to: SocketAddr, t: f64) -> Vec<&Sent> {
        self.suite
            .sent
            .iter()
            .filter(|s| s.to == to && s.t >= t - EPS && is_jog(&s.msg))
            .collect()
    }

    /// Motion commands the client sent to `to` at or after `t`.
    fn motion_sent(&self, to: SocketAddr, t: f64) -> Vec<&Sent> {
        self.suite
            .sent
            .iter()
            .filter(|s| s.to == to && s.t >= t - EPS && is_motion(&s.msg))
            .collect()
    }

    /// The jog statuses the client said about `arm` since update `mark`, with their times.
    fn statuses(&self, arm: JausId, mark: usize) -> Vec<(f64, JogStatus)> {
        self.facts_of(arm.into(), mark)
            .filter_map(|f| match f {
                ArmFact::Jog { t, status } => Some((*t, (**status).clone())),
                _ => None,
            })
            .collect()
    }

    /// The last jog status said about `arm`.
    fn status(&self, arm: JausId) -> JogStatus {
        self.statuses(arm, 0)
            .pop()
            .map(|s| s.1)
            .expect("a jog status was said")
    }

    /// The labels of the timeline marks since update `mark` that start with "jog".
    fn jog_marks(&self, mark: usize) -> Vec<String> {
        self.updates[mark..]
            .iter()
            .filter_map(|u| match u.remark() {
                Some(Remark::Mark { label, .. }) if label.starts_with("jog") => Some(label.clone()),
                _ => None,
            })
            .collect()
    }

    /// Adds a second OCU with JAUS ID [`OTHER_ID`] at [`OTHER`], following peer 0.
    fn add_second(&mut self) {
        let client = Client::new(ClientConfig {
            id: OTHER_ID,
            ..client_cfg()
        })
        .with_local_addr(OTHER);
        self.suite.second = Some(Second {
            client,
            out: Output::default(),
            updates: Vec::new(),
            sent: Vec::new(),
            held: None,
        });
    }

    /// The second OCU's turn: its held input, its timers, its datagrams to peer 0, and what
    /// the peers sent it.
    fn step_second(&mut self) {
        let Some(mut s) = self.suite.second.take() else {
            return;
        };
        let now = self.now();
        if let Some(h) = &mut s.held
            && now >= h.next - EPS
        {
            h.req.input.at = now;
            h.next += INPUT_EVERY;
            let req = h.req.clone();
            s.client
                .handle_command(now, Command::Jog(Box::new(req)), &mut s.out);
        }
        for o in std::mem::take(&mut self.harness.stray) {
            if o.to == OTHER {
                s.client.handle_datagram(now, SIM, &o.bytes, &mut s.out);
            }
        }
        s.client.tick(now, &mut s.out);
        for (to, bytes) in std::mem::take(&mut s.out.datagrams) {
            s.sent.extend(messages(&bytes));
            if to == SIM {
                self.harness.inject_to_peer(0, OTHER, &bytes);
            }
        }
        s.updates.append(&mut s.out.updates);
        self.suite.second = Some(s);
    }
}

/// The sim's joint positions (peer `i`).
fn sim_q(net: &Net, i: usize) -> Vec<f64> {
    net.peers[i].sim.positions().to_vec()
}

/// The demo arm's reduced speed of joint `i` at the default scale, rad/s or m/s.
fn reduced_speed(i: usize) -> f64 {
    ArmFile::demo().spec.joints[i].max_speed.unwrap() * JogOptions::default().speed_scale
}

/// A session with control of the default sim and a keys jog of joint 1 streaming for 0.5 s.
fn jogging() -> Net {
    let mut net = Net::live(sim_cfg());
    net.take_control(10);
    net.hold(keys(0, 1.0));
    net.run(0.5);
    assert!(net.status(SIM_ID).moving, "{:?}", net.status(SIM_ID));
    net
}

// -------------------------------------------------------------------------------------------
// 1. The stream.

#[test]
fn a_joint_jog_sends_the_reduced_profile_first_then_one_target_a_period_at_the_reduced_speed() {
    let mut net = Net::live(sim_cfg());
    net.take_control(10);
    let t0 = net.now();
    let q0 = sim_q(&net, 0);
    net.hold(keys(0, 1.0));
    let mut fastest = 0.0_f64;
    net.run_watching(1.0, |n| {
        fastest = fastest.max(n.peers[0].sim.velocities()[0].abs());
    });
    let sent = net.jog_sent(SIM, t0);
    // The profile first, with each joint's reduced speed.
    let Message::SetJointMotionProfile(p) = &sent[0].msg else {
        panic!("the first jog message is {:?}", sent[0].msg);
    };
    let spec = ArmFile::demo().spec;
    assert_eq!(p.joint_motion_profiles.len(), spec.joints.len());
    for (i, jp) in p.joint_motion_profiles.iter().enumerate() {
        let want = reduced_speed(i);
        assert!(
            (jp.max_speed - want).abs() <= 1e-3 * want.max(1.0),
            "joint {}: profile speed {} for a reduced speed of {want}",
            i + 1,
            jp.max_speed
        );
    }
    assert!(matches!(sent[1].msg, Message::SetJointPositions(_)));
    assert_eq!(net.peers[0].sim.stats().refused_without_profile, 0);
    // One target a period.
    let targets: Vec<&&Sent> = sent
        .iter()
        .filter(|s| matches!(s.msg, Message::SetJointPositions(_)))
        .collect();
    assert!(
        (20..=21).contains(&targets.len()),
        "{} targets in 1 s",
        targets.len()
    );
    for w in targets.windows(2) {
        let gap = w[1].t - w[0].t;
        assert!(
            (gap - PERIOD).abs() <= STEP + EPS,
            "targets {gap:.4} s apart"
        );
    }
    // Each target ahead of the last on joint 1, never beyond the stop bound.
    for w in targets.windows(2) {
        assert!(values(&w[1].msg)[0] >= values(&w[0].msg)[0]);
    }
    // The arm moved the asked way at no more than the reduced speed.
    let v = reduced_speed(0);
    let q1 = sim_q(&net, 0);
    assert!(q1[0] - q0[0] > 0.8 * v, "joint 1 moved {}", q1[0] - q0[0]);
    assert!(
        // The profile's speed as encoded: within a few LSBs of the reduced speed.
        fastest <= v * (1.0 + 1e-6),
        "joint 1 reached {fastest} rad/s, reduced speed {v}"
    );
    for (i, (a, b)) in q1.iter().zip(&q0).enumerate().skip(1) {
        assert!((a - b).abs() < 1e-3, "joint {} moved", i + 1);
    }
    // The client's own reports agree on the direction.
    let reported: Vec<f64> = net
        .facts_of(SIM_ID.into(), 0)
        .filter_map(|f| match f {
            ArmFact::JointPositions { t, values } if *t >= t0 => Some(values[0]),
            _ => None,
        })
        .collect();
    assert!(reported.last().unwrap() - reported[0] > 0.7 * v);
    let s = net.status(SIM_ID);
    assert_eq!(s.driver, Some(JogDriver::Position));
    assert!(s.moving && s.blocking.is_empty(), "{s:?}");
    assert!(net.jog_marks(0).contains(&"jog started".to_string()));
}

// -------------------------------------------------------------------------------------------
// 2. Every gate lost: a zero at once, repeated, then silence.

/// Proves the stop after `lose` (at `t_lost`, or the time it returns): the first zero within
/// one period, three zeros in all re-sending the last targets, silence after, the status not
/// moving with `gate` blocking, and the mark "jog stopped: `reason`".
fn assert_stops(
    net: &mut Net,
    arm: JausId,
    to: SocketAddr,
    lose: impl FnOnce(&mut Net) -> f64,
    gate: Option<Gate>,
    reason: &str,
    within: f64,
) {
    let mark = net.mark();
    let t = net.now();
    let t_lost = lose(net);
    net.run(0.6);
    let all: Vec<(f64, Vec<f64>)> = net
        .motion_sent(to, 0.0)
        .iter()
        .map(|s| (s.t, values(&s.msg)))
        .collect();
    // The first zero: the first command since the loss that re-sends the one before it (no
    // new advance). A motion command may precede it at the instant of the loss only (the
    // news had not reached the client yet).
    let first = (1..all.len())
        .find(|i| all[*i].0 >= t - EPS && all[*i].1 == all[*i - 1].1)
        .unwrap_or_else(|| panic!("{reason}: no zero re-sending the last targets"));
    let before: Vec<f64> = all[..first]
        .iter()
        .map(|a| a.0)
        .filter(|at| *at >= t - EPS)
        .collect();
    assert!(
        before.iter().all(|at| *at <= t + STEP + EPS),
        "{reason}: motion after the loss at {before:?}"
    );
    let last = &all[first - 1].1;
    let after = &all[first..];
    assert_eq!(
        after.len(),
        3,
        "three zeros then silence after {reason}: {:?}",
        after.iter().map(|a| a.0).collect::<Vec<_>>()
    );
    let delay = after[0].0 - t_lost;
    assert!(
        delay <= within + EPS,
        "{reason}: the first zero {delay:.4} s after, more than {within} s"
    );
    for w in after.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            (gap - PERIOD).abs() <= STEP + EPS,
            "{reason}: zeros {gap} s apart"
        );
    }
    for (_, v) in after {
        assert_eq!(v, last, "{reason}: a zero re-sends the last targets");
    }
    let s = net.status(arm);
    assert!(!s.moving, "{reason}: {s:?}");
    if let Some(g) = gate {
        assert!(s.blocking.contains(g), "{reason}: {g:?} not in {s:?}");
    }
    let marks = net.jog_marks(mark);
    let want = format!("jog stopped: {reason}");
    assert_eq!(
        marks.iter().filter(|m| **m == want).count(),
        1,
        "marks: {marks:?}"
    );
}

/// [`assert_stops`] for a gate the held keys' input carries, changed by `f`.
fn input_gate_stops(source: Source, f: impl FnOnce(&mut JogRequest), gate: Gate) {
    let mut net = Net::live(sim_cfg());
    net.take_control(10);
    net.hold(request(SIM_ID, source, 0, 1.0));
    net.run(0.5);
    assert!(net.status(SIM_ID).moving);
    assert_stops(
        &mut net,
        SIM_ID,
        SIM,
        |n| {
            let t = n.now();
            n.change(source, f);
            t
        },
        Some(gate),
        gate.lost(),
        PERIOD,
    );
}

#[test]
fn releasing_the_enable_stops_with_three_zeros_then_silence() {
    input_gate_stops(Source::Keys, |r| r.enable_held = false, Gate::EnableHeld);
}

#[test]
fn losing_the_window_focus_stops_with_three_zeros_then_silence() {
    input_gate_stops(
        Source::Keys,
        |r| r.window_focused = false,
        Gate::WindowFocused,
    );
}

#[test]
fn a_gamepad_unplugged_stops_its_jog_with_three_zeros_then_silence() {
    input_gate_stops(
        Source::Gamepad,
        |r| r.gamepad_connected = false,
        Gate::GamepadConnected,
    );
}

#[test]
fn leaving_the_live_view_stops_with_three_zeros_then_silence() {
    input_gate_stops(Source::Keys, |r| r.live = false, Gate::LiveFocusedArm);
}

#[test]
fn control_taken_by_another_ocu_stops_with_three_zeros_then_silence() {
    let mut net = jogging();
    assert_stops(
        &mut net,
        SIM_ID,
        SIM,
        |n| {
            let t = n.now();
            n.send_to_peer(0, OTHER_ID, RequestControl { authority_code: 50 });
            t
        },
        Some(Gate::ControlHeld),
        Gate::ControlHeld.lost(),
        PERIOD,
    );
    assert_eq!(net.peers[0].sim.controller(), Some(OTHER_ID));
}

#[test]
fn an_emergency_from_another_ocu_stops_with_three_zeros_then_silence() {
    let mut net = jogging();
    assert_stops(
        &mut net,
        SIM_ID,
        SIM,
        |n| {
            let t = n.now();
            n.send_to_peer(0, OTHER_ID, SetEmergency { emergency_code: 1 });
            t
        },
        Some(Gate::NoEmergency),
        Gate::NoEmergency.lost(),
        PERIOD,
    );
}

#[test]
fn input_that_stops_arriving_stops_the_jog_with_no_new_command() {
    let mut net = jogging();
    // The input stops as the window would stall: the last one was sent at `at`. The zero
    // comes within one period of the input going stale (older than one period).
    assert_stops(
        &mut net,
        SIM_ID,
        SIM,
        |n| n.stop_sending(Source::Keys).input.at,
        None,
        "input older than one period",
        2.0 * PERIOD,
    );
    // The same with the client woken only at its own deadlines, as the network thread does.
    let mut net = jogging();
    let t = net.now();
    let at = net.stop_sending(Source::Keys).input.at;
    net.run_by_deadlines(0.6);
    let after = net.motion_sent(SIM, t);
    let stop = after
        .iter()
        .find(|s| s.t > at + PERIOD)
        .expect("a zero after the input went stale");
    assert!(
        stop.t - at <= 2.0 * PERIOD + EPS,
        "woken by deadlines, the first zero came {:.4} s after the last input",
        stop.t - at
    );
    let stops = after.iter().filter(|s| s.t > at + PERIOD).count();
    assert_eq!(stops, 3, "three zeros then silence");
    assert!(!net.status(SIM_ID).moving);
}

#[test]
fn selecting_another_arm_stops_the_jog_of_the_first() {
    let mut net = Net::two_arms();
    net.take_control(10);
    net.hold(keys(0, 1.0));
    net.run(0.5);
    assert!(net.status(SIM_ID).moving);
    assert_stops(
        &mut net,
        SIM_ID,
        SIM,
        |n| {
            let t = n.now();
            n.command(Command::Select(SIM_B_ID.into()));
            t
        },
        Some(Gate::LiveFocusedArm),
        Gate::LiveFocusedArm.lost(),
        PERIOD,
    );
    assert!(
        net.jog_sent(SIM_B, 0.0).is_empty(),
        "B was never asked to move"
    );
}

// -------------------------------------------------------------------------------------------
// 3. Refused while a gate blocks.

#[test]
fn without_control_a_jog_is_refused_once_in_words_and_nothing_goes_out() {
    let mut net = Net::live(sim_cfg());
    let mark = net.mark();
    net.hold(keys(0, 1.0));
    net.run(1.0);
    assert!(
        net.jog_sent(SIM, 0.0).is_empty(),
        "nothing of a jog on the wire: {:?}",
        net.jog_sent(SIM, 0.0)
    );
    let s = net.status(SIM_ID);
    assert!(!s.moving);
    assert!(s.blocking.contains(Gate::ControlHeld), "{s:?}");
    assert_eq!(s.blocking.first(), Some(Gate::ControlHeld));
    assert_eq!(s.commands_sent, 0);
    let marks = net.jog_marks(mark);
    assert_eq!(
        marks,
        vec![format!("jog refused: {}", Gate::ControlHeld.blocks())],
        "said once, not per input (50 inputs sent)"
    );
}

// -------------------------------------------------------------------------------------------
// 4. The access timeout of a velocity-only arm.

#[test]
fn a_velocity_jog_against_a_long_access_timeout_is_refused_naming_it() {
    let mut net = Net::live(sim_with(VELOCITY_ONLY, 5));
    net.take_control(10);
    let mark = net.mark();
    net.hold(keys(0, 1.0));
    net.run(0.5);
    assert!(net.jog_sent(SIM, 0.0).is_empty(), "nothing on the wire");
    let s = net.status(SIM_ID);
    assert_eq!(s.driver, Some(JogDriver::Velocity));
    assert!(!s.moving);
    let refusal = s.refusal.expect("refused");
    assert!(refusal.contains("5 s"), "{refusal}");
    assert!(refusal.contains("1.0 s limit"), "{refusal}");
    assert!(!net.jog_marks(mark).contains(&"jog started".to_string()));
}

/// Jogs joint 1 for `secs` against a velocity-only sim with this access timeout and these
/// options; returns the session and the jog's start time.
fn velocity_jog(control_timeout_s: u8, options: JogOptions, secs: f64) -> (Net, f64) {
    let mut net = Net::live(sim_with(VELOCITY_ONLY, control_timeout_s));
    net.take_control(10);
    let t0 = net.now();
    net.hold(JogRequest {
        options,
        ..keys(0, 1.0)
    });
    net.run(secs);
    (net, t0)
}

/// Checks a velocity stream since `t0`: `SetJointVelocity` each period, joint 1 at its
/// reduced speed, the others still.
fn assert_velocity_stream(net: &Net, t0: f64, until: f64) {
    let v: Vec<&Sent> = net
        .motion_sent(SIM, t0)
        .into_iter()
        .filter(|s| s.t <= until)
        .collect();
    assert!(
        v.iter()
            .all(|s| matches!(s.msg, Message::SetJointVelocity(_)))
    );
    let expected = ((until - t0) / PERIOD).floor() as usize;
    assert!(
        v.len() + 1 >= expected && v.len() <= expected + 1,
        "{} commands in {:.2} s",
        v.len(),
        until - t0
    );
    for w in v.windows(2) {
        assert!((w[1].t - w[0].t - PERIOD).abs() <= STEP + EPS);
    }
    let want = reduced_speed(0);
    for s in &v {
        let x = values(&s.msg);
        assert!((x[0] - want).abs() < 1e-3, "{x:?}");
        assert!(x[1..].iter().all(|x| x.abs() < 1e-6), "{x:?}");
    }
    assert_eq!(net.status(SIM_ID).driver, Some(JogDriver::Velocity));
}

#[test]
fn an_acknowledged_access_timeout_lets_a_velocity_jog_stream_and_the_echo_reads_zero_soon_after() {
    let options = JogOptions {
        acknowledge_timeout: true,
        ..JogOptions::default()
    };
    let (mut net, t0) = velocity_jog(5, options, 0.5);
    let until = net.now();
    assert_velocity_stream(&net, t0, until);
    let s = net.status(SIM_ID);
    assert!(s.moving && s.refusal.is_none(), "{s:?}");
    assert!(
        s.if_link_drops.as_deref().unwrap_or("").contains("5 s"),
        "{s:?}"
    );
    assert!(matches!(net.peers[0].sim.mode(), Mode::Velocity(v) if v[0] > 0.0));
    // The input stops arriving: the arm's commanded velocity reads 0 within 250 ms.
    let at = net.stop_sending(Source::Keys).input.at;
    let mut zero_at = None;
    net.run_watching(0.3, |n| {
        let zero = match n.peers[0].sim.mode() {
            Mode::Velocity(v) => v.iter().all(|x| x.abs() < 1e-6),
            _ => true,
        };
        if zero && zero_at.is_none() {
            zero_at = Some(n.now());
        }
    });
    let zero_at = zero_at.expect("the commanded velocity went to zero");
    assert!(
        zero_at - at <= 0.25,
        "commanded velocity zero {:.3} s after the last input",
        zero_at - at
    );
    // And the arm's own echo on the wire says so.
    net.send_to_peer(0, OTHER_ID, QueryCommandedJointVelocity);
    let echo = net
        .stray
        .iter()
        .filter(|o| o.to == OTHER)
        .flat_map(|o| messages(&o.bytes))
        .find_map(|m| match m {
            Message::ReportCommandedJointVelocity(r) => Some(r),
            _ => None,
        })
        .expect("ReportCommandedJointVelocity");
    assert!(
        echo.joint_velocities.iter().all(|v| v.value.abs() < 1e-6),
        "{echo:?}"
    );
    assert!(net.now() - at <= 0.35);
}

#[test]
fn a_one_second_access_timeout_streams_velocities_without_acknowledgement() {
    let (net, t0) = velocity_jog(1, JogOptions::default(), 2.5);
    assert_velocity_stream(&net, t0, net.now());
    let s = net.status(SIM_ID);
    assert!(s.moving && s.refusal.is_none(), "{s:?}");
    assert!(
        s.if_link_drops.as_deref().unwrap_or("").contains("1 s"),
        "{s:?}"
    );
    // Past the access timeout twice: the client kept control and the arm kept moving.
    assert_eq!(net.peers[0].sim.controller(), Some(OCU_ID));
    assert!(matches!(net.peers[0].sim.mode(), Mode::Velocity(v) if v[0] > 0.0));
}

// -------------------------------------------------------------------------------------------
// 5. The stop bound of a position jog when the OCU dies.

#[test]
fn a_dead_ocu_leaves_a_position_jog_stopping_within_the_stated_bound() {
    let v = reduced_speed(0);
    let bound = stop_bound(v, v / BRAKE_S, PERIOD);
    let mut worst = 0.0_f64;
    let mut measured = Vec::new();
    for k in 0..20_u32 {
        let mut net = Net::live(sim_cfg());
        net.take_control(10);
        let amount = if k % 2 == 0 { 1.0 } else { -1.0 };
        net.hold(keys(0, amount));
        // Kills at many phases of the period, while accelerating and at full speed. Where
        // the joint is at the start of each step (when that step's commands reach the sim).
        let mut history: Vec<(f64, f64)> = vec![(net.now(), sim_q(&net, 0)[0])];
        net.run_watching(0.001 + 0.0237 * f64::from(k), |n| {
            history.push((n.now(), sim_q(n, 0)[0]));
        });
        // The OCU dies: from now on only the sim runs. Measured from where the joint was
        // when the OCU's last motion command reached it.
        let last = net.motion_sent(SIM, 0.0).last().map(|s| s.t).unwrap();
        let q_last = history
            .iter()
            .find(|(t, _)| (t - last).abs() < EPS)
            .map(|h| h.1)
            .expect("the joint's position when the last command arrived");
        let speed_at_kill = net.peers[0].sim.velocities()[0];
        for _ in 0..2000 {
            net.harness.tick_sims();
            net.harness.advance();
        }
        assert!(
            net.peers[0].sim.velocities()[0].abs() < 1e-9,
            "the joint stopped"
        );
        assert!(
            net.suite.sent.last().is_some_and(|s| net.now() - s.t > 1.9),
            "nothing was sent after the kill"
        );
        let after = (sim_q(&net, 0)[0] - q_last).abs();
        measured.push((after, speed_at_kill));
        worst = worst.max(after);
        assert!(
            after <= bound,
            "kill {k}: the joint moved {after:.5} rad after the OCU's last datagram (at \
             {speed_at_kill:.4} rad/s), bound {bound:.5} rad"
        );
    }
    eprintln!(
        "stop bound {bound:.5} rad; worst measured {worst:.5} rad; each (moved, speed at kill): \
         {measured:.5?}"
    );
    // The bound is worth stating: a kill at full speed uses a real part of it.
    assert!(worst > 0.1 * bound, "worst {worst} of {bound}");
}

// -------------------------------------------------------------------------------------------
// 6. One source per arm.

#[test]
fn a_second_input_waits_while_the_first_jogs_and_is_taken_once_it_releases() {
    let mut net = Net::live(sim_cfg());
    net.take_control(10);
    net.hold(keys(0, 1.0));
    net.run(0.3);
    let mark = net.mark();
    let t = net.now();
    let q = sim_q(&net, 0);
    // The screen asks joint 2 to move (down: the demo arm starts near its upper limit),
    // between the keys' inputs.
    net.hold_from(request(SIM_ID, Source::Screen, 1, -1.0), t + 0.01);
    net.run(0.5);
    let moved = sim_q(&net, 0);
    assert!(moved[0] - q[0] > 0.05, "the keys' jog goes on");
    assert!((moved[1] - q[1]).abs() < 1e-3, "the screen's is not taken");
    for s in net.motion_sent(SIM, t) {
        let x = values(&s.msg);
        assert!((x[1] - q[1]).abs() < 0.01, "joint 2 never targeted: {x:?}");
    }
    let said = net.statuses(SIM_ID, mark);
    assert!(
        said.iter()
            .all(|(_, s)| s.source == Some(Source::Keys) && s.moving),
        "{said:?}"
    );
    // Once the screen asks, every status says another input is jogging the arm (no flicker
    // at each input of the keys).
    let flicker: Vec<f64> = said
        .iter()
        .filter(|(at, s)| *at > t + 0.011 && !s.blocking.contains(Gate::OneSource))
        .map(|(at, _)| *at)
        .collect();
    assert!(
        flicker.is_empty(),
        "statuses without OneSource while the screen asks, at {flicker:?}"
    );
    assert!(net.status(SIM_ID).blocking.contains(Gate::OneSource));
    // The keys let go: the screen's input is taken.
    net.release(Source::Keys);
    let q = sim_q(&net, 0);
    net.run(1.0);
    let moved = sim_q(&net, 0);
    assert!(q[1] - moved[1] > 0.05, "joint 2 moves: {q:?} to {moved:?}");
    let s = net.status(SIM_ID);
    assert_eq!(s.source, Some(Source::Screen));
    assert!(s.moving && !s.blocking.contains(Gate::OneSource), "{s:?}");
}

// -------------------------------------------------------------------------------------------
// 7. Effort drivers: percentages by default, velocities only in the compatibility mode.

/// Jogs joint 1 of an effort-only sim with these options for 0.3 s; returns the session and
/// the efforts of the motion commands sent.
fn effort_jog(options: JogOptions) -> (Net, Vec<Vec<f64>>) {
    let mut net = Net::live(sim_with(EFFORT_ONLY, 1));
    net.take_control(10);
    let t0 = net.now();
    net.hold(JogRequest {
        options,
        ..keys(0, 1.0)
    });
    net.run(0.3);
    let sent = net.motion_sent(SIM, t0);
    assert!(sent.len() >= 5, "{} commands", sent.len());
    assert!(
        sent.iter()
            .all(|s| matches!(s.msg, Message::SetJointEffort(_)))
    );
    let efforts = sent.iter().map(|s| values(&s.msg)).collect();
    (net, efforts)
}

#[test]
fn an_effort_jog_sends_percentages_unless_the_compatibility_mode_is_on() {
    let (net, efforts) = effort_jog(JogOptions::default());
    let s = net.status(SIM_ID);
    assert_eq!(s.driver, Some(JogDriver::Effort));
    assert!(s.moving, "{s:?}");
    for e in &efforts {
        // Full deflection × 20 % × 100.
        assert!((e[0] - 20.0).abs() < 0.01, "{e:?}");
        assert!(e[1..].iter().all(|x| x.abs() < 0.01), "{e:?}");
    }
    let (net, efforts) = effort_jog(JogOptions {
        effort_as_velocity: true,
        ..JogOptions::default()
    });
    let s = net.status(SIM_ID);
    assert_eq!(s.driver, Some(JogDriver::EffortAsVelocity));
    let v = reduced_speed(0);
    for e in &efforts {
        assert!((e[0] - v).abs() < 0.01, "the velocity in rad/s: {e:?}");
    }
}

// -------------------------------------------------------------------------------------------
// 8. Two OCUs.

#[test]
fn a_second_ocu_jogging_an_arm_the_first_controls_sends_nothing_and_names_the_holder() {
    let mut net = Net::live(sim_cfg());
    net.take_control(10);
    net.add_second();
    net.run(1.0);
    // The second asks for control with no more authority: refused by the arm.
    let now = net.now();
    {
        let s = net.suite.second.as_mut().unwrap();
        s.client
            .handle_command(now, Command::RequestControl { authority: 10 }, &mut s.out);
    }
    net.run(0.5);
    assert_eq!(net.peers[0].sim.controller(), Some(OCU_ID));
    // The second jogs the arm.
    {
        let s = net.suite.second.as_mut().unwrap();
        s.held = Some(Held {
            req: keys(0, 1.0),
            next: now + 0.5,
        });
    }
    let q = sim_q(&net, 0);
    net.run(2.0);
    let s = net.suite.second.as_ref().unwrap();
    let jogged: Vec<&Message> = s.sent.iter().filter(|m| is_jog(m)).collect();
    assert!(jogged.is_empty(), "the second OCU sent {jogged:?}");
    let status = s
        .updates
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Jog { status, .. },
                ..
            } => Some((**status).clone()),
            _ => None,
        })
        .expect("the second OCU said its jog status");
    assert!(!status.moving);
    assert!(status.blocking.contains(Gate::ControlHeld), "{status:?}");
    let controller = s
        .updates
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Controller { controller, .. },
                ..
            } => Some(*controller),
            _ => None,
        })
        .expect("the second OCU heard who holds the arm");
    assert_eq!(controller.id, Some(OCU_ID.into()), "{controller}");
    assert!(
        (sim_q(&net, 0)[0] - q[0]).abs() < 1e-6,
        "the arm did not move"
    );
}

// -------------------------------------------------------------------------------------------
// Every jog stops the way it was moving (issue 44).

/// What ends a jog in [`each_driver_stops_with_its_own_zero`].
#[derive(Debug, Clone, Copy)]
enum Cause {
    Release,
    FocusLoss,
    StaleInput,
    ControlLost,
    Emergency,
}

/// The driver a message belongs to, and whether it commands no motion (a zero velocity,
/// effort or twist within the wire's resolution; a position command is the driver's hold and
/// counts as a zero after a stop).
fn driver_of(m: &Message) -> Option<(JogDriver, bool)> {
    // Zero within the wire's resolution: a scaled integer need not hold 0 exactly.
    let zero = |v: &[f64]| v.iter().all(|x| x.abs() < 1e-3);
    match m {
        Message::SetJointPositions(_) => Some((JogDriver::Position, true)),
        Message::SetJointVelocity(s) => Some((
            JogDriver::Velocity,
            s.joint_velocities.iter().all(|v| v.value.abs() < 1e-3),
        )),
        // Percent in 16 bits over ±100 %: one step is 0.003 %.
        Message::SetJointEffort(s) => Some((
            JogDriver::Effort,
            s.joint_efforts.iter().all(|x| x.abs() < 0.01),
        )),
        Message::SetEndEffectorVelocityState(s) => Some((
            JogDriver::Tool,
            zero(&s.velocity.linear) && zero(&s.velocity.angular),
        )),
        _ => None,
    }
}

/// One arm offering `drivers`, jogged by the keys with `deflection` for 0.5 s, then stopped
/// by `cause`: the zero goes out within a period (two for stale input) with the driver that
/// moved the arm, nothing of another driver follows, "jog stopped" is said no earlier than
/// the zero, and the simulated arm then stands still.
fn stops_with_its_own_zero(
    drivers: Drivers,
    want: JogDriver,
    deflection: Deflection,
    cause: Cause,
) {
    let what = format!("{want:?} jog, {cause:?}");
    let mut net = Net::live(sim_with(drivers, 2));
    net.take_control(10);
    let mut req = keys(0, 1.0);
    req.input.deflection = deflection;
    req.options.acknowledge_timeout = true;
    net.hold(req);
    net.run(0.5);
    assert!(
        net.status(SIM_ID).moving,
        "{what}: {:?}",
        net.status(SIM_ID)
    );
    let moving: Vec<_> = net
        .suite
        .sent
        .iter()
        .filter_map(|s| driver_of(&s.msg))
        .collect();
    assert!(
        moving.iter().any(|(d, zero)| *d == want && !zero)
            || (want == JogDriver::Position && !moving.is_empty()),
        "{what}: moved with {moving:?}"
    );
    let mark = net.mark();
    let t = net.now();
    match cause {
        Cause::Release => net.release(Source::Keys),
        Cause::FocusLoss => net.change(Source::Keys, |r| r.window_focused = false),
        Cause::StaleInput => {
            net.stop_sending(Source::Keys);
        }
        Cause::ControlLost => {
            net.send_to_peer(0, OTHER_ID, RequestControl { authority_code: 50 });
        }
        Cause::Emergency => net.send_to_peer(0, OTHER_ID, SetEmergency { emergency_code: 1 }),
    }
    net.run(0.4);
    let after: Vec<(f64, JogDriver, bool)> = net
        .suite
        .sent
        .iter()
        .filter(|s| s.t >= t - EPS)
        .filter_map(|s| driver_of(&s.msg).map(|(d, z)| (s.t, d, z)))
        .collect();
    let zeros: Vec<_> = after.iter().filter(|(_, d, z)| *d == want && *z).collect();
    assert!(
        !zeros.is_empty(),
        "{what}: no zero of its driver: {after:?}; {:?}; {:?}",
        net.jog_marks(mark),
        net.statuses(SIM_ID, mark)
    );
    let within = match cause {
        Cause::StaleInput => 2.0 * PERIOD + INPUT_EVERY,
        _ => PERIOD,
    };
    assert!(
        zeros[0].0 - t <= within + EPS,
        "{what}: the first zero {:.3} s after the stop",
        zeros[0].0 - t
    );
    // From the first zero on (stale input may still send one command it read in time).
    assert!(
        after
            .iter()
            .filter(|(t, _, _)| *t >= zeros[0].0 - EPS)
            .all(|(_, d, z)| *d == want && *z),
        "{what}: after the stop only zeros of its driver: {after:?}"
    );
    let stopped: Vec<f64> = net.updates[mark..]
        .iter()
        .filter_map(|u| match u.remark() {
            Some(Remark::Mark { t, label, .. }) if label.starts_with("jog stopped") => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(stopped.len(), 1, "{what}: one 'jog stopped' mark");
    assert!(
        stopped[0] >= zeros[0].0 - EPS,
        "{what}: said before the zero went out"
    );
    // The arm stands still: what moves it now would be a runaway.
    net.run(0.5);
    let q0 = sim_q(&net, 0);
    net.run(1.0);
    let q1 = sim_q(&net, 0);
    let drift = q0
        .iter()
        .zip(&q1)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        drift < 1e-4,
        "{what}: the arm moved {drift} after the stop: {q0:?} → {q1:?}"
    );
}

#[test]
fn each_driver_stops_with_its_own_zero_whatever_ends_the_jog() {
    let only = |position, velocity, effort, tool| Drivers {
        position,
        velocity,
        effort,
        tool,
    };
    let twist = Deflection::Twist {
        axes: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        frame: jaus_ocu::model::jog::Frame::Base,
    };
    let joint = Deflection::joint(JOINTS, 0, 1.0);
    let cases = [
        (only(true, false, false, false), JogDriver::Position, &joint),
        (only(false, true, false, false), JogDriver::Velocity, &joint),
        (only(false, false, true, false), JogDriver::Effort, &joint),
        // The tool driver beside a joint driver: its release is not a twist, and the zero
        // must still be one (the runaway of issue 44).
        (only(true, false, false, true), JogDriver::Tool, &twist),
    ];
    for (drivers, want, deflection) in cases {
        for cause in [
            Cause::Release,
            Cause::FocusLoss,
            Cause::StaleInput,
            Cause::ControlLost,
            Cause::Emergency,
        ] {
            stops_with_its_own_zero(drivers, want, deflection.clone(), cause);
        }
    }
}

#[test]
fn a_tool_point_jog_that_leaves_its_axis_stops_and_names_the_joint_at_its_limit() {
    // Issue 44: "x (base frame)" moved the tool 57 mm along x and 87 mm down, the telescope at
    // its limit left out of the arm's solve, and nothing was said. From the demo arm's home
    // pose (Stowed) a jog up (+z) drives joint 3 to its limit within about 3 s.
    let mut net = Net::live_with(
        ArmFile::demo(),
        sim_with(
            Drivers {
                position: true,
                velocity: false,
                effort: false,
                tool: true,
            },
            2,
        ),
    );
    net.take_control(10);
    let mut req = keys(0, 1.0);
    req.options.acknowledge_timeout = true;
    req.input.deflection = Deflection::Twist {
        axes: [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        frame: jaus_ocu::model::jog::Frame::Base,
    };
    let mark = net.mark();
    net.hold(req);
    assert!(
        net.run_until(10.0, |n| n.status(SIM_ID).refusal.is_some()),
        "the jog never said it left its axis: {:?}",
        net.status(SIM_ID)
    );
    let t = net.now();
    let s = net.status(SIM_ID);
    let words = s.refusal.clone().unwrap();
    assert!(
        words.contains("left the jog's axis") && words.contains("joint 3 is at its limit"),
        "{words}"
    );
    assert!(!s.moving, "{s:?}");
    // The zero twist went out at once, and the arm stands still although the key is held.
    net.run(0.5);
    let after: Vec<_> = net
        .suite
        .sent
        .iter()
        .filter(|x| x.t >= t - EPS)
        .filter_map(|x| match &x.msg {
            Message::SetEndEffectorVelocityState(v) => Some(v.velocity.linear),
            _ => None,
        })
        .collect();
    assert!(!after.is_empty() && after.iter().all(|l| l.iter().all(|x| x.abs() < 1e-3)));
    let q0 = sim_q(&net, 0);
    net.run(1.0);
    let drift = q0
        .iter()
        .zip(sim_q(&net, 0))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(drift < 1e-4, "the arm moved {drift} while held stopped");
    assert!(
        net.jog_marks(mark)
            .iter()
            .any(|m| m.starts_with("jog stopped: the tool point left the jog's axis")),
        "{:?}",
        net.jog_marks(mark)
    );
    // Let go: the words go, a fresh press may jog again (another axis).
    net.release(Source::Keys);
    net.run(0.2);
    assert_eq!(net.status(SIM_ID).refusal, None);
}
