//! Waiting in tests: poll for what should happen, with a generous deadline, instead of sleeping
//! a fixed time and then asserting. A loaded machine then only makes a test slower, never red.

use std::time::{Duration, Instant};

/// How often a condition is checked again.
#[allow(dead_code, reason = "not every suite waits")]
const POLL: Duration = Duration::from_millis(10);

/// Checks `cond` until it holds. Panics naming `what` (what did not happen) if it still does
/// not after `deadline`.
#[allow(dead_code, reason = "not every suite waits")]
pub fn wait_until(deadline: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < deadline,
            "{what} did not happen within {deadline:?}"
        );
        std::thread::sleep(POLL);
    }
}

/// A store of one arm fed whole updates: the suites that use it speak to one arm, so its facts
/// and the network's go into one store (in the application `model::vehicle` routes them).
#[allow(
    dead_code,
    reason = "shared by the suites of one arm; others use only wait_until"
)]
pub trait Feed {
    /// Applies `u`, whichever arm it names.
    fn apply(&mut self, u: &jaus_ocu::model::update::Update);
}

impl Feed for jaus_ocu::model::session::Session {
    fn apply(&mut self, u: &jaus_ocu::model::update::Update) {
        match u {
            jaus_ocu::model::update::Update::Arm { fact, .. } => self.apply_arm(fact),
            jaus_ocu::model::update::Update::Net(fact) => self.apply_net(fact),
        }
    }
}

impl Feed for jaus_ocu::model::state::ArmState {
    fn apply(&mut self, u: &jaus_ocu::model::update::Update) {
        match u {
            jaus_ocu::model::update::Update::Arm { fact, .. } => self.apply_arm(fact),
            jaus_ocu::model::update::Update::Net(fact) => self.apply_net(fact),
        }
    }
}

/// Applies a live network side's updates to `state` until `done` holds or `timeout` passes;
/// returns whether it held.
#[allow(
    dead_code,
    reason = "shared by the loopback suites; other suites use only wait_until"
)]
pub fn pump(
    h: &jaus_ocu::net::thread::NetHandle,
    state: &mut jaus_ocu::model::state::ArmState,
    timeout: Duration,
    mut done: impl FnMut(&jaus_ocu::model::state::ArmState, &jaus_ocu::model::update::Update) -> bool,
) -> bool {
    let deadline = Instant::now() + timeout;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if let Ok(u) = h
            .updates()
            .recv_timeout(left.min(Duration::from_millis(50)))
        {
            state.apply(&u);
            if done(state, &u) {
                return true;
            }
        }
    }
    false
}

/// The outcome of the next command of `kind` the network side reports within `timeout`
/// (applying every update to `state` meanwhile); `None` if none came.
#[allow(
    dead_code,
    reason = "shared by the loopback suites; other suites use only wait_until"
)]
pub fn outcome_of(
    h: &jaus_ocu::net::thread::NetHandle,
    state: &mut jaus_ocu::model::state::ArmState,
    kind: jaus_ocu::model::command::CommandKind,
    timeout: Duration,
) -> Option<jaus_ocu::model::update::Outcome> {
    let mut o = None;
    pump(h, state, timeout, |_, u| match u.remark() {
        Some(jaus_ocu::model::update::Remark::CommandOutcome {
            command, outcome, ..
        }) if *command == kind => {
            o = Some(outcome.clone());
            true
        }
        _ => false,
    });
    o
}

/// An arm of 255 joints with long names: its specification needs several JUDP blocks.
#[allow(
    dead_code,
    reason = "shared by the suites that send a long specification"
)]
pub fn long_arm() -> jaus_ocu::sim::arm_file::ArmFile {
    let joints: Vec<jaus_ocu::model::arm::Joint> = (0..255)
        .map(|i| jaus_ocu::model::arm::Joint {
            name: Some(format!(
                "joint number {i:03} with a deliberately long descriptive name"
            )),
            min: Some(-1.0),
            max: Some(1.0),
            max_speed: Some(1.0),
            axis_radius: Some(0.05),
            link_radius: (i > 0).then_some(0.04),
            ..jaus_ocu::model::arm::Joint::revolute(
                if i == 0 { 0.0 } else { 0.1 },
                if i == 0 { 0.0 } else { 0.2 },
                0.05,
            )
        })
        .collect();
    jaus_ocu::sim::arm_file::ArmFile {
        name: "long arm".into(),
        spec: jaus_ocu::model::arm::ArmSpec {
            mount: None,
            joints,
        },
        tool_point: [0.0; 3],
        home: vec![0.0; 255],
        presets: vec![],
    }
}

// -------------------------------------------------------------------------------------------
// The binary as a process: `jaus-ocu sim` on a port, and the CLI with its identity file in the
// tests' scratch directory (not the user's).

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;

/// The binary, with its identity file in the tests' scratch directory (not the user's).
#[allow(dead_code, reason = "shared by the process suites")]
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_jaus-ocu"));
    c.env("JAUS_OCU_CONFIG_DIR", env!("CARGO_TARGET_TMPDIR"));
    c
}

/// A UDP port that was free a moment ago.
#[allow(
    dead_code,
    clippy::disallowed_methods,
    reason = "shared by the process suites; a raw socket outside net/ finds a free port"
)]
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[allow(dead_code, reason = "shared by the process suites")]
pub struct Sim(pub Child);

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[allow(dead_code, reason = "shared by the process suites")]
pub fn sim(args: &[&str], port: u16) -> Sim {
    let mut child = bin()
        .arg("sim")
        .args(args)
        .args(["--bind", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .spawn()
        .expect("sim starts");
    // Ready once it says where it listens, which it prints after binding the port. The reader
    // keeps draining stderr so the sim never blocks on a full pipe.
    let stderr = child.stderr.take().expect("piped stderr");
    let (ready_tx, ready) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("sim-stderr".into())
        .spawn(move || {
            let mut ready_tx = Some(ready_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(" on udp ")
                    && let Some(tx) = ready_tx.take()
                {
                    let _ = tx.send(());
                }
            }
        })
        .unwrap();
    let sim = Sim(child);
    match ready.recv_timeout(Duration::from_secs(30)) {
        Ok(()) => sim,
        Err(RecvTimeoutError::Timeout) => panic!("the sim did not say it listens within 30 s"),
        Err(RecvTimeoutError::Disconnected) => {
            panic!("the sim ended its output without saying it listens (port {port} taken?)")
        }
    }
}
