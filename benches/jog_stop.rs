//! The jog's stop on the wire (issue 32, "Done means"): for each way a jog can be stopped, the
//! time from the trigger to the first zero command the simulator's side of the link receives,
//! and the time until the arm's own echo reads zero. Run:
//! `cargo bench --bench jog_stop` (1,000 trials per trigger and driver: about 15–25 min);
//! `JOG_STOP_TRIALS=20 cargo bench --bench jog_stop` is the quick form.
//!
//! The rig, all on loopback UDP, all real: an in-process simulator (`sim::host::spawn`), a
//! relay (two named threads) that owns the address the OCU knows as the arm's, and the real
//! network thread ([`NetHandle`]) following it. The relay is the wire: it timestamps each
//! datagram as its socket receives it (before forwarding), so "on the wire" means "received
//! by the socket on the arm's side of the link". It can cut the arm→OCU direction (the link
//! cut; the OCU's commands still pass, so its zero is seen). A second raw JAUS client (its
//! own socket, built on `jaus_ocu::jaus` only) talks to the simulator directly: it takes
//! control away, sets the emergency, and polls the echoes.
//!
//! Two simulators, one after the other: the position driver only (the OCU jogs by position
//! targets) and the velocity driver only with an access timeout of 1 s (joint velocities).
//! The main thread stands in for the window: it sends `Command::Jog` every 10 ms (joint 1 at
//! full deflection, alternating direction per trial so the joint stays mid-range), waits
//! until a motion command reaches the relay, keeps jogging a random 0–50 ms more (so the
//! trigger falls at any phase of the 50 ms stream), then pulls one trigger:
//! - `enable released`, `focus lost`, `gamepad unplugged` (source Gamepad,
//!   `gamepad_connected` false: the input layer): the requests carry the gate off from then
//!   on, every 10 ms, as the window's would;
//! - `input stopped`: no more `Command::Jog` (the window or its input thread stalls); measured
//!   from the last request's input time, so one period of it is the rule itself (the input
//!   may be that old), and the time past that period is printed too;
//! - `control lost`: the raw client sends `RequestControl` with a higher authority (the arm
//!   tells the OCU with `RejectControl`); recovered by its `ReleaseControl` and the OCU's
//!   `Command::RequestControl`;
//! - `emergency`: the raw client's `SetEmergency` (the OCU learns it from the arm's status);
//!   recovered by its `ClearEmergency` and the OCU's `Command::Resume`;
//! - `link cut`: the relay stops forwarding arm→OCU. The OCU's joint data go stale after the
//!   staleness rule (three event periods, at least `STALE_FLOOR` = 0.5 s), so this zero is
//!   measured from the cut (≈ 0.5 s by design) and also from the `ArmFact::Stale` the OCU
//!   publishes (negative: the jog's gate closes before that fact is published).
//!
//! The first zero: for joint velocities, the first `SetJointVelocity` whose values are all 0.
//! For position targets, the OCU's zero re-sends the last targets (the arm is braking towards
//! them already), so the first zero is the first `SetJointPositions` equal to the one before
//! it (while jogging every target advances by one period of motion; the joint stays far from
//! its soft limits, where a target could stop advancing). The echo: the velocity simulator's
//! `ReportCommandedJointVelocity` (0x4611, polled every ~5 ms with 0x2611) reading all 0; the
//! position simulator has no commanded-velocity echo (it offers no velocity driver), so its
//! rows give the time until `ReportJointVelocity` (the arm's own motion) reads 0 — braking
//! from the reduced speed takes up to `BRAKE_S` = 0.25 s by design, so that column is the arm
//! at rest, not an echo of the command; it is polled in every tenth trial (the wait is long).
//!
//! Trials alternate triggers (round-robin), so machine noise spreads evenly. Every wait has
//! a deadline; a failed trial is counted with its reason. The first trial of each trigger is
//! written to a pcapng (both directions, the relay's receive times) named in the output:
//! `$CARGO_TARGET_DIR` (or `target/`) `/jog-stop/jog-stop-<driver>.pcapng`, readable in
//! Wireshark (the JAUS dissector decodes port 3794; these are ephemeral ports: "Decode As").
//!
//! Environment: `JOG_STOP_TRIALS` (default 1000) trials per trigger and driver;
//! `JOG_STOP_LINK_TRIALS` for the link cut alone (default the same: each takes ~1.5 s, the
//! staleness rule and its 1 s dwell); `JOG_STOP_DRIVERS` (default `position,velocity`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              their peers and load generators are raw sockets outside net/ on purpose"
)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Sender, bounded};
use jaus_ocu::jaus::core::{
    ClearEmergency, QueryStatus, ReleaseControl, RequestControl, SetEmergency,
};
use jaus_ocu::jaus::judp::{self, DataFlags, Datagram, Header};
use jaus_ocu::jaus::manipulator::{QueryCommandedJointVelocity, QueryJointVelocity};
use jaus_ocu::jaus::{DecodeContext, JausId, Message};
use jaus_ocu::model::command::Command;
use jaus_ocu::model::jog::{Deflection, Input, JogOptions, JogRequest, Source};
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::{
    ArmFact, ComponentId, ControlState, ManagementState, Signal, Update,
};
use jaus_ocu::model::vehicle::Vehicle;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::record::pcapng::PcapngWriter;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, Drivers, SimConfig};
use jaus_ocu::sim::host::{self, SimHandle};

/// A zero on the wire: the scaled integers have no exact zero (0 rad/s encodes to the middle
/// code, which reads back as half a step, about 7e-9 rad/s), so a value under a micro-unit
/// is a zero.
const ZERO_LSB: f64 = 1e-6;

/// The jog's streaming period (`JogSettings::default().period`): the rule is a zero within it.
const PERIOD: f64 = 0.05;
/// How often the stand-in window reports its input.
const INPUT_EVERY: Duration = Duration::from_millis(10);
/// The echo must read zero within this.
const ECHO_LIMIT: f64 = 0.25;
/// Our OCU's JAUS ID and authority; the other client's, higher.
const OCU_ID: JausId = JausId::new(200, 32, 1);
const OCU_AUTHORITY: u8 = 10;
const OTHER_ID: JausId = JausId::new(200, 32, 2);
const OTHER_AUTHORITY: u8 = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    EnableReleased,
    FocusLost,
    GamepadUnplugged,
    InputStopped,
    ControlLost,
    Emergency,
    LinkCut,
}

impl Trigger {
    const ALL: [Trigger; 7] = [
        Trigger::EnableReleased,
        Trigger::FocusLost,
        Trigger::GamepadUnplugged,
        Trigger::InputStopped,
        Trigger::ControlLost,
        Trigger::Emergency,
        Trigger::LinkCut,
    ];

    fn name(self) -> &'static str {
        match self {
            Trigger::EnableReleased => "enable released",
            Trigger::FocusLost => "focus lost",
            Trigger::GamepadUnplugged => "gamepad unplugged",
            Trigger::InputStopped => "input stopped",
            Trigger::ControlLost => "control lost",
            Trigger::Emergency => "emergency",
            Trigger::LinkCut => "link cut",
        }
    }
}

/// Which way a datagram went through the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    ToArm,
    ToOcu,
}

/// One datagram on the wire, as the relay's socket received it.
#[derive(Debug, Clone)]
struct Wire {
    at: Instant,
    dir: Dir,
    bytes: Vec<u8>,
}

/// What a datagram to the arm means for the jog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Motion,
    Zero,
    Other,
}

/// The relay between the OCU and the arm: the wire.
struct Relay {
    /// The address the OCU knows as the arm's.
    front: SocketAddr,
    cut: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    /// Datagrams the channel had no room for (the main thread fell behind).
    lost: Arc<AtomicU64>,
    rx: Receiver<Wire>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Relay {
    fn new(arm: SocketAddr) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let front_addr = front.local_addr().unwrap();
        let (tx, rx) = bounded::<Wire>(65_536);
        let cut = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicU64::new(0));
        let ocu: Arc<std::sync::Mutex<Option<SocketAddr>>> = Arc::default();
        let push = |tx: &Sender<Wire>, lost: &AtomicU64, w: Wire| {
            if tx.try_send(w).is_err() {
                lost.fetch_add(1, Ordering::Relaxed);
            }
        };
        let up = {
            let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
            let (tx, stop, lost, ocu) = (tx.clone(), stop.clone(), lost.clone(), ocu.clone());
            std::thread::Builder::new()
                .name("jog-relay-up".into())
                .spawn(move || {
                    let mut buf = vec![0u8; 65_536];
                    while !stop.load(Ordering::Relaxed) {
                        let Ok((n, from)) = front.recv_from(&mut buf) else {
                            continue;
                        };
                        let at = Instant::now();
                        *ocu.lock().unwrap() = Some(from);
                        let _ = back.send_to(&buf[..n], arm);
                        let bytes = buf[..n].to_vec();
                        push(
                            &tx,
                            &lost,
                            Wire {
                                at,
                                dir: Dir::ToArm,
                                bytes,
                            },
                        );
                    }
                })
                .unwrap()
        };
        let down = {
            let (tx, stop, lost, cut) = (tx, stop.clone(), lost.clone(), cut.clone());
            std::thread::Builder::new()
                .name("jog-relay-down".into())
                .spawn(move || {
                    let mut buf = vec![0u8; 65_536];
                    while !stop.load(Ordering::Relaxed) {
                        let Ok((n, _)) = back.recv_from(&mut buf) else {
                            continue;
                        };
                        let at = Instant::now();
                        let to = *ocu.lock().unwrap();
                        if cut.load(Ordering::Relaxed) {
                            continue;
                        }
                        if let Some(to) = to {
                            let _ = front.send_to(&buf[..n], to);
                            let bytes = buf[..n].to_vec();
                            push(
                                &tx,
                                &lost,
                                Wire {
                                    at,
                                    dir: Dir::ToOcu,
                                    bytes,
                                },
                            );
                        }
                    }
                })
                .unwrap()
        };
        Relay {
            front: front_addr,
            cut,
            stop,
            lost,
            rx,
            threads: vec![up, down],
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The messages of a datagram (single-block messages only: what the OCU's commands are).
fn messages(bytes: &[u8]) -> Vec<Message> {
    let Ok(dg) = Datagram::new_checked(bytes) else {
        return Vec::new();
    };
    dg.blocks()
        .filter_map(Result::ok)
        .filter_map(|b| {
            let h = Header::parse(&b.block);
            (h.data_flags == DataFlags::Single)
                .then(|| Message::parse_with(b.block.payload(), &DecodeContext::NONE).ok())
                .flatten()
        })
        .collect()
}

/// A raw JAUS client on its own socket, talking to the arm directly (not through the relay).
struct Other {
    socket: UdpSocket,
    arm: SocketAddr,
    arm_id: JausId,
    seq: u16,
}

impl Other {
    fn new(arm: SocketAddr, arm_id: JausId) -> Other {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        Other {
            socket,
            arm,
            arm_id,
            seq: 0,
        }
    }

    fn send(&mut self, m: impl Into<Message>) {
        self.seq = self.seq.wrapping_add(1);
        let h = Header::new(self.arm_id, OTHER_ID, self.seq);
        let bytes = m.into().emit().unwrap();
        let _ = self
            .socket
            .send_to(&judp::single(&h, &bytes).unwrap(), self.arm);
    }

    /// Reads what is queued without waiting (answers to earlier sends).
    fn drain(&mut self) {
        self.socket.set_nonblocking(true).unwrap();
        let mut buf = vec![0u8; 65_536];
        while self.socket.recv_from(&mut buf).is_ok() {}
        self.socket.set_nonblocking(false).unwrap();
    }

    /// Asks `query` and returns the first answer `pick` takes and when it arrived (within
    /// `timeout`).
    fn ask<T>(
        &mut self,
        query: impl Into<Message>,
        timeout: Duration,
        mut pick: impl FnMut(&Message) -> Option<T>,
    ) -> Option<(T, Instant)> {
        self.drain();
        self.send(query);
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; 65_536];
        while Instant::now() < deadline {
            let Ok((n, _)) = self.socket.recv_from(&mut buf) else {
                continue;
            };
            let at = Instant::now();
            for m in messages(&buf[..n]) {
                if let Some(t) = pick(&m) {
                    return Some((t, at));
                }
            }
        }
        None
    }
}

/// A small deterministic generator for the trigger phase.
struct XorShift(u64);

impl XorShift {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One trial's measurements, s.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Trigger → first zero received on the arm's side.
    zero: f64,
    /// Trigger → echo reads zero (`None`: not within 1 s).
    echo: Option<f64>,
    /// Whether the echo was polled in this trial (the position driver's, every tenth).
    echo_polled: bool,
    /// Link cut only: the OCU's stale declaration → the first zero.
    from_stale: Option<f64>,
}

#[derive(Debug, Default)]
struct Results {
    samples: Vec<Sample>,
    failures: Vec<String>,
}

/// One simulator, the relay, the OCU, and the other client.
struct Rig {
    driver: &'static str,
    velocity: bool,
    sim: SimHandle,
    relay: Relay,
    handle: NetHandle,
    vehicle: Vehicle<ArmState>,
    arm: ComponentId,
    joints: usize,
    other: Other,
    /// The targets of the last `SetJointPositions` seen.
    last_targets: Option<Vec<f64>>,
    /// When the OCU declared the joint positions stale (its clock), since the last cut.
    stale_at: Option<f64>,
    /// When the last `Command::Jog` went and its input time.
    last_input: Instant,
    /// Zeros seen while the jog streamed, before any trigger (the position driver's zero
    /// test would be wrong if a moving target ever repeated): expected 0.
    spurious_zeros: u64,
    /// Datagrams kept for the capture.
    captured: Vec<Wire>,
    capture: bool,
}

/// The jog input of one trial.
#[derive(Debug, Clone)]
struct Jog {
    source: Source,
    deflection: Deflection,
    window_focused: bool,
    gamepad_connected: bool,
    enable_held: bool,
}

impl Rig {
    fn new(velocity: bool) -> Rig {
        let cfg = SimConfig {
            drivers: Drivers {
                position: !velocity,
                velocity,
                effort: false,
                tool: false,
            },
            control_timeout_s: if velocity { 1 } else { 5 },
            ..SimConfig::default()
        };
        let arm_id = cfg.id;
        let sim = host::spawn(
            Component::new(ArmFile::demo(), cfg),
            host::bind("127.0.0.1:0".parse().unwrap()).unwrap(),
            Faults::default(),
            1,
        )
        .unwrap();
        let relay = Relay::new(sim.local_addr());
        let handle = NetHandle::spawn(NetConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            client: ClientConfig {
                id: OCU_ID,
                connect: vec![relay.front],
                multicast: None,
                component: Some(arm_id),
                ..ClientConfig::default()
            },
            ..NetConfig::default()
        })
        .unwrap();
        let other = Other::new(sim.local_addr(), arm_id);
        let mut rig = Rig {
            driver: if velocity {
                "velocity (access timeout 1 s)"
            } else {
                "position"
            },
            velocity,
            sim,
            relay,
            handle,
            vehicle: Vehicle::new(),
            arm: ComponentId::from(arm_id),
            joints: 0,
            other,
            last_targets: None,
            stale_at: None,
            last_input: Instant::now(),
            spurious_zeros: 0,
            captured: Vec::new(),
            capture: false,
        };
        assert!(
            rig.pump_until(Duration::from_secs(15), |s| s.spec.is_some()
                && s.status != ManagementState::Unknown
                && s.positions.is_some()),
            "the OCU did not follow the simulator within 15 s"
        );
        rig.arm = rig.vehicle.focused_id().unwrap();
        rig.joints = rig.vehicle.focused().spec.as_ref().unwrap().joints.len();
        rig.take_control();
        rig.resume();
        rig
    }

    /// Applies the OCU's updates for `dur` or until `done`.
    fn pump_until(&mut self, dur: Duration, done: impl Fn(&ArmState) -> bool) -> bool {
        let deadline = Instant::now() + dur;
        loop {
            self.drain_updates();
            self.drain_wire(|_, _| false);
            if done(self.vehicle.focused()) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn drain_updates(&mut self) {
        while let Ok(u) = self.handle.updates().try_recv() {
            if let Update::Arm {
                fact:
                    ArmFact::Stale {
                        t,
                        signal: Signal::JointPositions,
                        stale,
                    },
                ..
            } = &u
                && *stale
            {
                self.stale_at.get_or_insert(*t);
            }
            self.vehicle.apply(&u);
        }
    }

    fn take_control(&mut self) {
        let _ = self.handle.send(Command::RequestControl {
            authority: OCU_AUTHORITY,
        });
        assert!(
            self.pump_until(Duration::from_secs(5), |s| matches!(
                s.control,
                ControlState::Held { .. }
            )),
            "control not granted within 5 s"
        );
    }

    fn resume(&mut self) {
        let _ = self.handle.send(Command::Resume);
        assert!(
            self.pump_until(Duration::from_secs(5), |s| s.status
                == ManagementState::Ready),
            "the arm did not become READY within 5 s"
        );
    }

    /// Classifies a datagram to the arm and remembers the position targets.
    fn classify(&mut self, w: &Wire) -> Kind {
        if w.dir != Dir::ToArm {
            return Kind::Other;
        }
        let mut kind = Kind::Other;
        for m in messages(&w.bytes) {
            match m {
                Message::SetJointVelocity(s) => {
                    kind = if s.joint_velocities.iter().all(|v| v.value.abs() < ZERO_LSB) {
                        Kind::Zero
                    } else {
                        Kind::Motion
                    };
                }
                Message::SetJointPositions(s) => {
                    let q: Vec<f64> = s.joint_positions.iter().map(|v| v.value).collect();
                    kind = if self.last_targets.as_ref() == Some(&q) {
                        Kind::Zero
                    } else {
                        Kind::Motion
                    };
                    self.last_targets = Some(q);
                }
                _ => {}
            }
        }
        kind
    }

    /// Takes what the relay received; returns the receive time of the first datagram `pick`
    /// takes (the rest stay unread).
    fn drain_wire(&mut self, mut pick: impl FnMut(Kind, &Wire) -> bool) -> Option<Instant> {
        while let Ok(w) = self.relay.rx.try_recv() {
            let kind = self.classify(&w);
            if self.capture {
                self.captured.push(w.clone());
            }
            if pick(kind, &w) {
                return Some(w.at);
            }
        }
        None
    }

    fn send_jog(&mut self, j: &Jog) {
        let at = self.handle.start().elapsed().as_secs_f64();
        let mut r = JogRequest::new(
            self.arm,
            j.source,
            Input {
                at,
                deflection: j.deflection.clone(),
            },
            JogOptions::default(),
        );
        r.window_focused = j.window_focused;
        r.gamepad_connected = j.gamepad_connected;
        r.enable_held = j.enable_held;
        self.last_input = Instant::now();
        let _ = self.handle.send(Command::Jog(Box::new(r)));
    }

    /// Runs the stand-in window until `deadline`: sends `jog` every [`INPUT_EVERY`] (none:
    /// silent), applies updates, reads the wire; returns when `pick` takes a datagram to
    /// the arm (its receive time).
    fn run(
        &mut self,
        deadline: Instant,
        jog: Option<&Jog>,
        mut pick: impl FnMut(Kind) -> bool,
    ) -> Option<Instant> {
        let mut next = Instant::now();
        loop {
            let now = Instant::now();
            if let Some(j) = jog
                && now >= next
            {
                self.send_jog(j);
                next = now + INPUT_EVERY;
            }
            self.drain_updates();
            if let Some(at) = self.drain_wire(|k, _| pick(k)) {
                return Some(at);
            }
            if now >= deadline {
                return None;
            }
            let wake = if jog.is_some() {
                next.min(deadline)
            } else {
                deadline
            };
            let wait = wake
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(1));
            if let Ok(w) = self.relay.rx.recv_timeout(wait) {
                let kind = self.classify(&w);
                if self.capture {
                    self.captured.push(w.clone());
                }
                if pick(kind) {
                    return Some(w.at);
                }
            }
        }
    }

    /// Polls the echo until it reads zero (within 1 s), keeping `jog` going; the time it
    /// arrived.
    fn echo_zero(&mut self, jog: Option<&Jog>) -> Option<Instant> {
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            let got = if self.velocity {
                self.other.ask(
                    QueryCommandedJointVelocity,
                    Duration::from_millis(20),
                    |m| match m {
                        Message::ReportCommandedJointVelocity(r) => {
                            Some(r.joint_velocities.iter().all(|v| v.value.abs() < ZERO_LSB))
                        }
                        _ => None,
                    },
                )
            } else {
                self.other
                    .ask(QueryJointVelocity, Duration::from_millis(20), |m| match m {
                        Message::ReportJointVelocity(r) => {
                            Some(r.joint_velocities.iter().all(|v| v.value.abs() < 1e-3))
                        }
                        _ => None,
                    })
            };
            if let Some((true, at)) = got {
                return Some(at);
            }
            self.run(Instant::now() + Duration::from_millis(5), jog, |_| false);
        }
        None
    }

    fn trial(&mut self, trigger: Trigger, k: usize, rng: &mut XorShift) -> Result<Sample, String> {
        let sign = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        let mut jog = Jog {
            source: if trigger == Trigger::GamepadUnplugged {
                Source::Gamepad
            } else {
                Source::Keys
            },
            deflection: Deflection::joint(self.joints, 0, sign),
            window_focused: true,
            gamepad_connected: true,
            enable_held: true,
        };
        self.drain_updates();
        self.drain_wire(|_, _| false);
        let started = self.run(Instant::now() + Duration::from_secs(2), Some(&jog), |k| {
            k == Kind::Motion
        });
        if started.is_none() {
            let s = self.vehicle.focused();
            return Err(format!(
                "no motion command reached the arm within 2 s (jog {:?}, control {:?}, status {:?})",
                s.jog, s.control, s.status
            ));
        }
        // The trigger at any phase of the stream.
        let phase = Duration::from_secs_f64(rng.next_f64() * PERIOD);
        let mut spurious = 0;
        self.run(Instant::now() + phase, Some(&jog), |k| {
            spurious += u64::from(k == Kind::Zero);
            false
        });
        self.spurious_zeros += spurious;
        self.stale_at = None;
        let mut t0 = Instant::now();
        let mut keep = Some(jog.clone());
        match trigger {
            Trigger::EnableReleased => jog.enable_held = false,
            Trigger::FocusLost => jog.window_focused = false,
            Trigger::GamepadUnplugged => jog.gamepad_connected = false,
            Trigger::InputStopped => {
                t0 = self.last_input;
                keep = None;
            }
            Trigger::ControlLost => self.other.send(RequestControl {
                authority_code: OTHER_AUTHORITY,
            }),
            Trigger::Emergency => self.other.send(SetEmergency { emergency_code: 1 }),
            Trigger::LinkCut => self.relay.cut.store(true, Ordering::Relaxed),
        }
        if keep.is_some() {
            keep = Some(jog.clone());
        }
        let zero = self.run(t0 + Duration::from_secs(2), keep.as_ref(), |k| {
            k == Kind::Zero
        });
        let result = match zero {
            None => Err("no zero command within 2 s".to_string()),
            Some(at) => {
                // The arm at rest takes up to BRAKE_S after a position zero: polled in every
                // tenth trial only, so the trials stay short.
                let echo_polled = self.velocity || k.is_multiple_of(10);
                let echo = if echo_polled {
                    self.echo_zero(keep.as_ref())
                } else {
                    None
                };
                let mut from_stale = None;
                if trigger == Trigger::LinkCut {
                    let until = Instant::now() + Duration::from_millis(1500);
                    while self.stale_at.is_none() && Instant::now() < until {
                        self.run(Instant::now() + Duration::from_millis(5), None, |_| false);
                    }
                    from_stale = self.stale_at.map(|t| {
                        let declared = self.handle.start() + Duration::from_secs_f64(t);
                        if at >= declared {
                            (at - declared).as_secs_f64()
                        } else {
                            -(declared - at).as_secs_f64()
                        }
                    });
                }
                Ok(Sample {
                    zero: (at - t0).as_secs_f64(),
                    echo: echo.map(|e| (e - t0).as_secs_f64()),
                    echo_polled,
                    from_stale,
                })
            }
        };
        // Let go, then undo the trigger.
        jog.deflection = Deflection::Released;
        self.send_jog(&jog);
        match trigger {
            Trigger::ControlLost => {
                self.other.send(ReleaseControl);
                self.pump_until(Duration::from_millis(200), |s| {
                    !matches!(s.control, ControlState::Held { .. })
                });
                self.take_control();
            }
            Trigger::Emergency => {
                self.pump_until(Duration::from_secs(1), |s| {
                    s.status == ManagementState::Emergency
                });
                self.other.send(ClearEmergency { emergency_code: 1 });
                let _ = self
                    .other
                    .ask(QueryStatus, Duration::from_millis(200), |_| Some(()));
                self.pump_until(Duration::from_secs(1), |s| {
                    s.status != ManagementState::Emergency
                });
                self.resume();
            }
            Trigger::LinkCut => {
                self.relay.cut.store(false, Ordering::Relaxed);
                // Fresh again: the stale flag changes at most once a second.
                let until = Instant::now() + Duration::from_secs(3);
                loop {
                    self.pump_until(Duration::from_millis(20), |_| false);
                    let s = self.vehicle.focused();
                    let fresh = !s
                        .stale
                        .get(&Signal::JointPositions)
                        .copied()
                        .unwrap_or(false);
                    if fresh || Instant::now() >= until {
                        break;
                    }
                }
            }
            _ => {}
        }
        result
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes the captured datagrams as a pcapng; the file's path.
fn write_pcapng(rig: &Rig, epoch: (Instant, u64)) -> std::io::Result<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(
        std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()),
    )
    .join("jog-stop");
    std::fs::create_dir_all(&dir)?;
    let name = if rig.velocity { "velocity" } else { "position" };
    let path = dir.join(format!("jog-stop-{name}.pcapng"));
    let file = std::io::BufWriter::new(std::fs::File::create(&path)?);
    let comment = format!(
        "jaus-ocu benches/jog_stop.rs: the first trial of each trigger, {} driver; the OCU is \
         {}, the arm's side of the link {}",
        rig.driver,
        rig.handle.local_addr(),
        rig.relay.front
    );
    let mut w = PcapngWriter::new(file, Some(comment.as_str()))?;
    let (ocu, arm) = (rig.handle.local_addr(), rig.relay.front);
    for x in &rig.captured {
        let t = epoch.1 + x.at.saturating_duration_since(epoch.0).as_nanos() as u64;
        let (from, to) = match x.dir {
            Dir::ToArm => (ocu, arm),
            Dir::ToOcu => (arm, ocu),
        };
        let _ = w.write_udp(t, from, to, None, &x.bytes);
    }
    w.finish()?;
    Ok(path)
}

fn ms(x: f64) -> String {
    format!("{:.1}", x * 1000.0)
}

fn report(driver: &str, results: &[(Trigger, Results)]) {
    let echo = if driver.starts_with("position") {
        "echo = ReportJointVelocity reads 0 (the arm at rest; every tenth trial)"
    } else {
        "echo = ReportCommandedJointVelocity reads 0"
    };
    println!("\n== {driver}: trigger -> first zero on the wire (ms); {echo}");
    println!(
        "{:<18} {:>5} {:>5} {:>7} {:>7} {:>7} {:>9} {:>8} {:>9}  notes",
        "trigger", "N", "fail", "p50", "p99", "max", "<=50ms", "echo p99", "echo<=250"
    );
    for (trigger, r) in results {
        let mut z: Vec<f64> = r.samples.iter().map(|s| s.zero).collect();
        z.sort_by(f64::total_cmp);
        let within = z.iter().filter(|x| **x <= PERIOD).count() as f64 / z.len().max(1) as f64;
        let mut e: Vec<f64> = r
            .samples
            .iter()
            .filter(|s| s.echo_polled)
            .map(|s| s.echo.unwrap_or(f64::INFINITY))
            .collect();
        e.sort_by(f64::total_cmp);
        let echo_ok = e.iter().filter(|x| **x <= ECHO_LIMIT).count() as f64 / e.len().max(1) as f64;
        let mut notes = String::new();
        if *trigger == Trigger::InputStopped {
            let past: Vec<f64> = z.iter().map(|x| x - PERIOD).collect();
            notes = format!(
                "past input age 50 ms: p50 {} p99 {} max {}",
                ms(percentile(&past, 0.5)),
                ms(percentile(&past, 0.99)),
                ms(past.last().copied().unwrap_or(f64::NAN))
            );
        }
        if *trigger == Trigger::LinkCut {
            let mut s: Vec<f64> = r.samples.iter().filter_map(|s| s.from_stale).collect();
            s.sort_by(f64::total_cmp);
            notes = format!(
                "from the OCU's stale fact ({} of {}): p50 {} p99 {} max {}",
                s.len(),
                r.samples.len(),
                ms(percentile(&s, 0.5)),
                ms(percentile(&s, 0.99)),
                ms(s.last().copied().unwrap_or(f64::NAN))
            );
        }
        println!(
            "{:<18} {:>5} {:>5} {:>7} {:>7} {:>7} {:>8.1}% {:>8} {:>8.1}%  {notes}",
            trigger.name(),
            r.samples.len(),
            r.failures.len(),
            ms(percentile(&z, 0.5)),
            ms(percentile(&z, 0.99)),
            ms(z.last().copied().unwrap_or(f64::NAN)),
            within * 100.0,
            ms(percentile(&e, 0.99)),
            echo_ok * 100.0,
        );
        for f in r.failures.iter().take(3) {
            println!("    failed: {f}");
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks drivers too.
    let trials = env_usize("JOG_STOP_TRIALS", 1000);
    let link_trials = env_usize("JOG_STOP_LINK_TRIALS", trials);
    let drivers = std::env::var("JOG_STOP_DRIVERS").unwrap_or_else(|_| "position,velocity".into());
    let epoch = (
        Instant::now(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    println!(
        "jog_stop: {trials} trials per trigger ({link_trials} for the link cut), drivers {drivers}"
    );
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for velocity in [false, true] {
        let name = if velocity { "velocity" } else { "position" };
        if !drivers.split(',').any(|d| d.trim() == name) {
            continue;
        }
        let began = Instant::now();
        let mut rig = Rig::new(velocity);
        let mut results: Vec<(Trigger, Results)> = Trigger::ALL
            .iter()
            .map(|t| (*t, Results::default()))
            .collect();
        let rounds = trials.max(link_trials);
        for k in 0..rounds {
            rig.capture = k == 0;
            for (trigger, r) in &mut results {
                let n = if *trigger == Trigger::LinkCut {
                    link_trials
                } else {
                    trials
                };
                if k >= n {
                    continue;
                }
                match rig.trial(*trigger, k, &mut rng) {
                    Ok(s) => r.samples.push(s),
                    Err(e) => {
                        r.failures.push(format!("trial {k}: {e}"));
                        // Start the next trial from a known state.
                        rig.relay.cut.store(false, Ordering::Relaxed);
                        if !matches!(rig.vehicle.focused().control, ControlState::Held { .. }) {
                            rig.other.send(ReleaseControl);
                            let _ = rig.handle.send(Command::RequestControl {
                                authority: OCU_AUTHORITY,
                            });
                        }
                        rig.pump_until(Duration::from_millis(500), |_| false);
                    }
                }
            }
            if k == 0 {
                match write_pcapng(&rig, epoch) {
                    Ok(p) => println!(
                        "capture ({name} driver, first trial of each trigger): {}",
                        p.display()
                    ),
                    Err(e) => println!("capture not written: {e}"),
                }
                rig.captured = Vec::new();
            }
            if (k + 1) % 100 == 0 {
                eprintln!(
                    "jog_stop: {name}: round {} of {rounds}, {:.0} s",
                    k + 1,
                    began.elapsed().as_secs_f64()
                );
            }
        }
        let (sim_stats, _) = rig.sim.stats();
        report(rig.driver, &results);
        println!(
            "   {:.0} s; zeros while jogging before a trigger {}; relay channel overflow {}; \
             sim: {} datagrams received, {} commands refused",
            began.elapsed().as_secs_f64(),
            rig.spurious_zeros,
            rig.relay.lost.load(Ordering::Relaxed),
            sim_stats.received,
            sim_stats.refused_commands
        );
        let Rig { handle, .. } = rig;
        handle.shutdown(Duration::from_millis(300));
    }
}
