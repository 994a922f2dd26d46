//! A recording started in the middle of a session stands on its own: the network side's latch
//! (`net::latch`) hands the recorder the state it learned before recording began, so a replay
//! shows the arm, its limits, presets, control and status from the first frame — every arm's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use jaus_ocu::jaus::judp;
use jaus_ocu::model::command::Command;
use jaus_ocu::model::update::{ControlState, ManagementState};
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::tap::Tap;
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;

#[path = "common/sim_net.rs"]
mod sim_net;
use sim_net::{OCU, SIM};

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    dir.join(format!("latched-{}-{name}", std::process::id()))
}

/// A session of `before` s, then a recording of `during` s started mid-session; with `latch`
/// the recorder is fed through a tap that saw the whole session (as the GUI's is), without it
/// only what crossed the wire after recording began. Returns the file and the time recording
/// began (s since the session started).
fn record_mid_session(name: &str, before: f64, during: f64, latch: bool) -> (PathBuf, f64) {
    let mut net = sim_net::sim_net(ArmFile::demo(), 7);
    let tap = Tap::new();
    let mut feed = |p: &jaus_ocu::sim::harness::Passage<'_>| {
        tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    };
    net.run_with(1.0, &mut feed);
    net.command(Command::RequestControl { authority: 100 });
    net.run_with(before - 1.0, &mut feed);
    let path = temp(name);
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), 0)).unwrap();
    let start = net.now();
    if latch {
        let sent = tap.connect_at(recorder.sender(), net.now_ns());
        assert!(sent > 5, "only {sent} datagrams latched");
    } else {
        let fresh = Tap::new();
        fresh.connect_at(recorder.sender(), net.now_ns());
        let mut only_new = |p: &jaus_ocu::sim::harness::Passage<'_>| {
            fresh.offer(p.t_ns, p.direction, p.peer, p.bytes);
        };
        net.run_with(during, &mut only_new);
        recorder.stop().unwrap();
        return (path, start);
    }
    net.run_with(during, &mut feed);
    recorder.stop().unwrap();
    (path, start)
}

#[test]
fn a_recording_started_mid_session_replays_with_the_arm_from_its_first_frame() {
    // Several start times, so that recording begins at different points of the keep-alive
    // and event cycles (e.g. between a control request and its answer).
    for before in [8.0, 8.101, 8.333, 9.517] {
        check_recording_started_at(before);
    }
}

fn check_recording_started_at(before: f64) {
    let (path, start) = record_mid_session(&format!("with-latch-{before}.mcap"), before, 2.0, true);
    let (vehicle, progress) = Replay::load_blocking(&path, judp::PORT).unwrap();
    assert!(progress.stopped.is_none(), "{progress:?}");
    assert_eq!(vehicle.arm_count(), 1);
    let session = vehicle.focused();
    let (first, _) = session.span().unwrap();
    assert!(
        (first - start).abs() < 0.01,
        "the replay starts when recording began ({start} s), not at {first} s"
    );
    let s = session.state_at(first);
    let spec = s
        .spec
        .as_ref()
        .expect("the specification at the first frame");
    assert_eq!(spec.joint_count(), ArmFile::demo().spec.joint_count());
    assert!(spec.joints.iter().any(|j| j.min.is_some()), "limits");
    assert_eq!(s.presets.len(), ArmFile::demo().presets.len(), "presets");
    assert!(
        s.presets.iter().all(|p| p.positions.is_some()),
        "preset poses"
    );
    assert!(s.tool_point.is_some(), "tool offset");
    assert!(
        matches!(s.control, ControlState::Held { authority: 100 }),
        "{:?}",
        s.control
    );
    assert_eq!(s.status, ManagementState::Ready);
    assert!(s.positions.is_some(), "the arm's pose at the first frame");
    assert!(s.selected.is_some());

    // Every latched datagram is marked as such in the file, and only those.
    let latched: Vec<_> = WireSource::open(&path, judp::PORT)
        .unwrap()
        .filter(|r| r.latched.is_some())
        .collect();
    assert!(latched.len() > 5);
    assert!(
        latched.iter().all(|r| r.latched.unwrap() < r.t_ns),
        "latched datagrams keep their own, earlier receive time"
    );
    // `inspect` says how many.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jaus-ocu"))
        .args(["inspect", "--summary", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["datagrams"]["latched"], latched.len());
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_jaus-ocu"))
        .args(["inspect", "--summary"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("latched   {} datagrams", latched.len())),
        "{text}"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn without_the_latch_the_same_recording_has_no_arm_at_its_start() {
    // The failure the latch fixes, shown: this is what a mid-session recording was before.
    let (path, _) = record_mid_session("without-latch.mcap", 8.0, 2.0, false);
    let (vehicle, _) = Replay::load_blocking(&path, judp::PORT).unwrap();
    let session = vehicle.focused();
    let (first, last) = session.span().unwrap();
    assert!(session.state_at(first).spec.is_none());
    assert!(session.state_at(last).presets.is_empty());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_recording_started_mid_session_replays_every_arm_from_its_first_frame() {
    // Two arms, each worked with by the OCU (one in-memory client per arm, one tap for both,
    // as one network side following both would have): the latch keeps the state of each.
    use jaus_ocu::jaus::JausId;
    use jaus_ocu::model::arm::Mount;
    use jaus_ocu::model::update::ComponentId;
    use jaus_ocu::sim::harness::Passage;

    let arms = [
        (JausId::new(126, 1, 10), SIM, [0.0, -0.4, 0.0]),
        (
            JausId::new(126, 1, 11),
            SocketAddr::from(([127, 0, 0, 1], judp::PORT + 1)),
            [0.0, 0.4, 0.0],
        ),
    ];
    let mut nets: Vec<SimNet> = arms
        .iter()
        .enumerate()
        .map(|(i, (id, addr, at))| {
            let mut net = SimNet::new(
                ClientConfig {
                    connect: vec![*addr],
                    multicast: None,
                    ..ClientConfig::default()
                },
                OCU,
                Duration::from_millis(2),
                11 + i as u64,
            );
            let mut arm = ArmFile::demo();
            arm.spec.mount = Some(Mount::at(*at, 0.0));
            net.add_peer(
                *addr,
                Component::new(
                    arm,
                    SimConfig {
                        id: *id,
                        ..SimConfig::default()
                    },
                ),
            );
            net
        })
        .collect();
    let tap = Tap::new();
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    let run = |nets: &mut [SimNet], secs: f64, feed: &mut dyn FnMut(&Passage<'_>)| {
        for _ in 0..(secs * 500.0).round() as usize {
            for net in nets.iter_mut() {
                net.step_with(feed);
            }
        }
    };
    run(&mut nets, 1.0, &mut feed);
    // Control of the second arm only.
    nets[1].command(Command::RequestControl { authority: 100 });
    run(&mut nets, 7.0, &mut feed);
    let path = temp("two-arms.mcap");
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), 0)).unwrap();
    let start = nets[0].now();
    let sent = tap.connect_at(recorder.sender(), nets[0].now_ns());
    assert!(sent > 10, "only {sent} datagrams latched");
    run(&mut nets, 2.0, &mut feed);
    recorder.stop().unwrap();

    let (vehicle, progress) = Replay::load_blocking(&path, judp::PORT).unwrap();
    assert!(progress.stopped.is_none(), "{progress:?}");
    assert_eq!(vehicle.arm_count(), 2);
    let (first, _) = vehicle.span().unwrap();
    assert!((first - start).abs() < 0.01, "{first} vs {start}");
    for (id, _, at) in arms {
        let s = vehicle.arm(ComponentId::from(id)).unwrap().state_at(first);
        let spec = s
            .spec
            .as_ref()
            .unwrap_or_else(|| panic!("{id}: no specification"));
        let mount = spec.mount.unwrap().position;
        assert!(
            mount.iter().zip(at).all(|(m, a)| (m - a).abs() < 1e-6),
            "{id}: mounted at {mount:?}"
        );
        assert_eq!(
            s.presets.len(),
            ArmFile::demo().presets.len(),
            "{id}: presets"
        );
        assert!(s.tool_point.is_some(), "{id}: tool offset");
        assert!(s.positions.is_some(), "{id}: pose at the first frame");
        assert_eq!(s.status, ManagementState::Ready, "{id}");
        let expected = if id.component == 11 {
            ControlState::Held { authority: 100 }
        } else {
            ControlState::Released
        };
        assert_eq!(s.control, expected, "{id}: control");
    }
    let _ = std::fs::remove_file(&path);
}
