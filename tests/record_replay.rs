//! Record and replay end to end: a live session against the simulator over loopback UDP,
//! recorded at the wire, replays to the same model states; a recorder killed with SIGKILL
//! leaves a file that replays up to about a second before the kill.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              their peers and load generators are raw sockets outside net/ on purpose"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use jaus_ocu::model::command::*;
use jaus_ocu::model::session::Session;
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::{Epoch, Tap, WireRecord};
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::record::observer::Observer;
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host;

mod common;
use common::Feed;
use common::wait_until;

fn temp_path(name: &str) -> PathBuf {
    // Inside target/ (cargo's scratch space for tests), not the machine's /tmp.
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()))
}

fn records(path: &Path) -> (Vec<WireRecord>, WireSource) {
    let mut source = WireSource::open(path, 3794).unwrap();
    let recs: Vec<WireRecord> = source.by_ref().collect();
    (recs, source)
}

/// The sampled facts of a stream of updates, in order (one arm): what the model's history is
/// made of.
fn samples(updates: &[Update]) -> Vec<ArmFact> {
    updates
        .iter()
        .filter_map(|u| match u {
            Update::Arm { fact, .. } => Some(fact),
            Update::Net(_) => None,
        })
        .filter(|u| {
            matches!(
                u,
                ArmFact::JointPositions { .. }
                    | ArmFact::JointVelocities { .. }
                    | ArmFact::JointEfforts { .. }
                    | ArmFact::JointForceTorques { .. }
                    | ArmFact::ForceTorque { .. }
                    | ArmFact::CurrentPose { .. }
                    | ArmFact::Status { .. }
            )
        })
        .cloned()
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Same kind, same values, same time (to the ns the recording stores).
fn same_sample(live: &ArmFact, replay: &ArmFact) -> bool {
    if !close(live.t(), replay.t()) {
        return false;
    }
    let strip = |u: &ArmFact| {
        let mut u = u.clone();
        match &mut u {
            ArmFact::JointPositions { t, .. }
            | ArmFact::JointVelocities { t, .. }
            | ArmFact::JointEfforts { t, .. }
            | ArmFact::JointForceTorques { t, .. }
            | ArmFact::ForceTorque { t, .. }
            | ArmFact::CurrentPose { t, .. }
            | ArmFact::Status { t, .. } => *t = 0.0,
            _ => {}
        }
        u
    };
    strip(live) == strip(replay)
}

#[test]
fn replay_of_a_recorded_sim_session_equals_the_live_session() {
    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sim_addr = socket.local_addr().unwrap();
    let sim = host::spawn(
        Component::new(
            ArmFile::demo(),
            SimConfig {
                tour: true,
                seed: 3,
                ..SimConfig::default()
            },
        ),
        socket,
        Faults::default(),
        3,
    )
    .unwrap();

    let path = temp_path("roundtrip.mcap");
    let epoch = Epoch::now();
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), epoch.unix_ns)).unwrap();
    let tap = Tap::new();
    tap.connect(recorder.sender());
    let net = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim_addr],
            multicast: None,
            ..ClientConfig::default()
        },
        update_capacity: 1 << 16,
        tap: tap.clone(),
        epoch: Some(epoch),
        ..NetConfig::default()
    })
    .unwrap();

    // The live session: every update, in order, with control taken and a preset commanded.
    let mut live: Vec<Update> = Vec::new();
    let mut state = ArmState::default();
    let mut asked = false;
    let mut went = false;
    // Until the session holds what is compared below: a preset commanded and 2.5 s of its
    // motion, over 150 positions, and positions over most of the session (the replay is probed
    // at 200 times across it). Measured on the updates' own receive times, so a loaded machine
    // makes the session take longer, not thinner. Past the deadline, the checks below say what
    // is missing.
    let deadline = Instant::now() + Duration::from_mins(1);
    let (mut first_t, mut first_position_t, mut last_t) = (None, None, 0.0);
    let mut went_t = None;
    let mut positions = 0;
    while Instant::now() < deadline {
        if let Ok(u) = net.updates().recv_timeout(Duration::from_millis(20)) {
            for u in std::iter::once(u).chain(net.updates().try_iter()) {
                state.apply(&u);
                last_t = u.t();
                first_t.get_or_insert(last_t);
                if matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::JointPositions { .. },
                        ..
                    }
                ) {
                    positions += 1;
                    first_position_t.get_or_insert(last_t);
                }
                live.push(u);
            }
        }
        if let (Some(t0), Some(tp), Some(tw)) = (first_t, first_position_t, went_t)
            && last_t - tw >= 2.5
            && positions > 150
            && last_t - tp >= 0.85 * (last_t - t0)
        {
            break;
        }
        if !asked && state.positions.is_some() {
            net.send(Command::RequestControl { authority: 100 })
                .unwrap();
            asked = true;
        }
        if asked && !went && matches!(state.control, ControlState::Held { .. }) {
            let pose = state.presets.first().map_or(1, |p| p.id);
            net.send(Command::GoToPreset { pose_id: pose }).unwrap();
            went = true;
            went_t = Some(last_t);
        }
    }
    let updates = net.updates().clone();
    net.shutdown(Duration::from_millis(300));
    for u in updates.try_iter() {
        live.push(u);
    }
    tap.disconnect();
    let stats = recorder.stop().unwrap();
    drop(sim);
    assert_eq!(tap.dropped(), 0, "the recorder kept up");
    assert!(went, "control was granted and a preset commanded");
    let last_stats = live
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Net(NetFact::Stats { stats, .. }) => Some(**stats),
            _ => None,
        })
        .expect("network counters were published");
    assert_eq!(
        (last_stats.updates_coalesced, last_stats.updates_dropped),
        (0, 0),
        "the live stream is complete (nothing coalesced), so it can be compared"
    );

    // The file holds every datagram both ways.
    let (recs, source) = records(&path);
    assert!(source.stopped().is_none(), "{:?}", source.stopped());
    assert!(source.info().complete);
    let rx = recs
        .iter()
        .filter(|r| r.direction == jaus_ocu::net::tap::Direction::Rx)
        .count() as u64;
    assert_eq!(rx, stats.rx);
    assert_eq!(recs.len() as u64, stats.rx + stats.tx);
    assert!(
        rx >= last_stats.datagrams,
        "every datagram the client handled was recorded ({rx} < {})",
        last_stats.datagrams
    );

    // Replay through the passive observer: the same samples, value for value, time for time.
    let mut observer = Observer::new(epoch.unix_ns);
    let mut replayed = Vec::new();
    for r in &recs {
        observer.observe(r, &mut replayed);
    }
    let live_samples = samples(&live);
    let replay_samples = samples(&replayed);
    assert!(
        live_samples
            .iter()
            .filter(|u| matches!(u, ArmFact::JointPositions { .. }))
            .count()
            > 100,
        "a few seconds of positions"
    );
    assert_eq!(live_samples.len(), replay_samples.len(), "sample counts");
    for (i, (a, b)) in live_samples.iter().zip(&replay_samples).enumerate() {
        assert!(same_sample(a, b), "sample {i}: live {a:?} != replay {b:?}");
    }
    // The discrete facts the operator sees end the same.
    let mut replay_state = ArmState::default();
    for u in &replayed {
        replay_state.apply(u);
    }
    assert_eq!(replay_state.selected, state.selected);
    assert_eq!(replay_state.spec, state.spec);
    assert_eq!(replay_state.presets, state.presets);
    assert_eq!(replay_state.tool_point, state.tool_point);

    // The player's session equals a session built from the live updates, at any time.
    let (replay_vehicle, progress) = Replay::load_blocking(&path, 3794).unwrap();
    assert!(progress.stopped.is_none(), "{:?}", progress.stopped);
    assert_eq!(replay_vehicle.arm_count(), 1);
    let replay_session = replay_vehicle.focused();
    let mut live_session = Session::new();
    for u in &live {
        live_session.apply(u);
    }
    let (t0, t1) = live_session.span().unwrap();
    let mut checked = 0;
    for k in 0..200 {
        let t = t0 + (t1 - t0) * f64::from(k) / 199.0;
        let (a, b) = (live_session.state_at(t), replay_session.state_at(t));
        assert_eq!(
            a.positions.as_ref().map(|p| &p.value),
            b.positions.as_ref().map(|p| &p.value),
            "positions at t = {t}"
        );
        assert_eq!(
            a.force_torque.as_ref().map(|p| p.value),
            b.force_torque.as_ref().map(|p| p.value),
            "force/torque at t = {t}"
        );
        assert_eq!(a.status, b.status, "status at t = {t}");
        assert_eq!(a.pose, b.pose, "pose at t = {t}");
        assert_eq!(a.control, b.control, "control at t = {t}");
        // (Selection is not compared moment by moment: the live client selects an arm when it
        // hears its services, the observer when the arm's specification or reports show it;
        // both end on the same arm, asserted above.)
        assert_eq!(
            a.spec.is_some(),
            b.spec.is_some(),
            "specification known at t = {t}"
        );
        checked += usize::from(a.positions.is_some());
    }
    assert!(checked > 150, "most probe times had positions ({checked})");
    let _ = std::fs::remove_file(&path);
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn recorder_killed_with_sigkill_leaves_a_file_that_replays_to_within_a_second_of_the_kill() {
    let exe = env!("CARGO_BIN_EXE_jaus-ocu");
    let port = free_udp_port();
    let sim_addr = SocketAddr::from(([127, 0, 0, 1], port));
    let _sim = Killed(
        Process::new(exe)
            .args(["sim", "--bind", &sim_addr.to_string(), "--tour"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let path = temp_path("killed.mcap");
    let _ = std::fs::remove_file(&path);
    let mut rec = Killed(
        Process::new(exe)
            .env("JAUS_OCU_CONFIG_DIR", env!("CARGO_TARGET_TMPDIR"))
            .args(["record", "--no-multicast", "--quiet", "--connect"])
            .arg(sim_addr.to_string())
            .arg("--out")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Record for a while: until a copy of the file (what a kill would leave) holds 3 s of
    // datagrams (about 150 a second, so several flushes) and the arm's positions. A loaded
    // machine makes this take longer.
    let copy = temp_path("killed-copy.mcap");
    wait_until(
        Duration::from_mins(1),
        "3 s of datagrams and 100 positions in the recording",
        || {
            // Reading the file again is not free: every 0.2 s is often enough.
            std::thread::sleep(Duration::from_millis(200));
            if std::fs::copy(&path, &copy).is_err() {
                return false;
            }
            let Ok(mut source) = WireSource::open(&copy, 3794) else {
                return false;
            };
            let times: Vec<u64> = source.by_ref().map(|r| r.t_ns).collect();
            let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) else {
                return false;
            };
            times.len() > 400
                && (last - first) as f64 / 1e9 >= 3.0
                && Replay::load_blocking(&copy, 3794)
                    .is_ok_and(|(vehicle, _)| vehicle.focused().positions.len() > 100)
        },
    );
    let _ = std::fs::remove_file(&copy);
    assert!(
        rec.0.try_wait().unwrap().is_none(),
        "the recorder is still running before the kill"
    );
    let killed_at = Epoch::now().unix_ns;
    rec.0.kill().unwrap(); // SIGKILL: no destructor, no summary.
    rec.0.wait().unwrap();

    let (recs, source) = records(&path);
    assert!(
        !source.info().complete,
        "a killed recorder writes no summary"
    );
    assert!(recs.len() > 200, "seconds of reports: {}", recs.len());
    let last = recs.iter().map(|r| r.t_ns).max().unwrap();
    let lost_s = killed_at.saturating_sub(last) as f64 / 1e9;
    eprintln!("last datagram recorded {lost_s:.3} s before the kill");
    assert!(
        lost_s <= 1.5,
        "the file ends {lost_s:.3} s before the kill (flushes are at most a second apart)"
    );
    // And it replays: the arm and its motion are there.
    let (vehicle, progress) = Replay::load_blocking(&path, 3794).unwrap();
    let session = vehicle.focused();
    assert!(session.latest.spec.is_some(), "specification replayed");
    // Positions arrive at 50 Hz (the OCU's default rate) once the arm is set up.
    assert!(
        session.positions.len() > 50,
        "positions replayed: {}",
        session.positions.len()
    );
    assert_eq!(
        progress.datagrams as usize,
        recs.len(),
        "the player read every record"
    );
    let _ = std::fs::remove_file(&path);
}
