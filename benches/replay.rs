//! Replay of a long recording (issue 6). Run: `cargo bench --bench replay` (about three
//! minutes; `REPLAY_BENCH_SECONDS` shortens the recording, default one hour;
//! `REPLAY_BENCH_OUT=FILE` writes the recording there and keeps it, `REPLAY_BENCH_IN=FILE`
//! loads one kept before instead of recording; `REPLAY_BENCH_NODE=off` skips `@mcap/core`).
//!
//! The recording is made once, outside the timed part: a 7-joint arm (the demo arm) reporting
//! joint positions and end-effector force/torque at 1 kHz each through Events, as the OCU
//! receives them (real JUDP datagrams from `jaus::`), plus its specification at the start,
//! written by the real recorder (`record::recorder::Recorder`, default settings: zstd chunks
//! and the decoded JSON channels beside the raw ones) into a temporary file. Its size and
//! datagram count are printed.
//!
//! Then, side by side in one run:
//! - (a) `open_to_first_frame` (criterion; target <= 2 s): `Replay::open` until the shared
//!   session has the specification and a positions sample and `state_at(first t)` returns
//!   positions: the first drawn frame minus the UI's own frame cost (`cargo bench --bench
//!   ui`, ~3 ms). The replay is dropped (loader cancelled) outside the timed part.
//! - (b) full load (printed, 3 runs): `Replay::open` + `wait`, and datagrams/s; before it
//!   (b0), the same work on one thread as the loader did before issue 14 (`WireSource`,
//!   `Observer`, `Session::apply` in turn) for the comparison in one run; after it (b2),
//!   Foxglove's own reader, `@mcap/core` (Node), iterating every message of the same file
//!   and only the raw `/judp/` channels replay reads (`.ci/mcap-iterate.sh --topic-prefix`),
//!   and the ratios (issues 31 and 47: at least 5x over the raw channels).
//! - (c) seek on the fully loaded session (criterion; target <= 16 ms): `state_at(t)` at
//!   random times over the hour; `next_report` / `prev_report` at random times.
//! - (d) memory per hour: `Session::memory_bytes()` of the loaded session, MB, and bytes per
//!   datagram.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use crossbeam_channel::bounded;
use jaus_ocu::jaus::core::Event;
use jaus_ocu::jaus::iop::ReportManipulatorEndEffectorForceTorque;
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions};
use jaus_ocu::jaus::{EmbeddedMessage, JausId, Message};
use jaus_ocu::model::session::Session;
use jaus_ocu::model::update::Update;
use jaus_ocu::net::rng::Rng;
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::observer::Observer;
use jaus_ocu::record::player::{LoadWaker, Replay};
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;

const SIM: JausId = JausId::new(126, 1, 10);
const OCU: JausId = JausId::new(200, 1, 1);
const START_NS: u64 = 1_700_000_000_000_000_000;
const PORT: u16 = 3794;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One datagram from the arm to the OCU.
fn datagram(seq: u16, m: &Message) -> Vec<u8> {
    judp::single(&Header::new(OCU, SIM, seq), &m.emit().expect("encodes"))
        .expect("fits one datagram")
}

/// An Event carrying `report`.
fn event(event_id: u8, sequence_number: u8, report: &Message) -> Message {
    Event {
        event_id,
        sequence_number,
        report_message: EmbeddedMessage::new(report).expect("encodes"),
    }
    .into()
}

/// Records `seconds` of 1 kHz positions and 1 kHz F/T into `path`; returns the datagrams.
fn record(path: &Path, seconds: u64) -> u64 {
    let arm = ArmFile::demo();
    let kinds = arm.spec.joint_types();
    let recorder = Recorder::start(RecorderConfig {
        // Every decoded sample, as a recorder that keeps up writes them: this bench pushes
        // as fast as the recorder takes, which would otherwise thin them (issue 14) and
        // make the file lighter than a live hour's.
        thin_when_behind: false,
        ..RecorderConfig::new(path.to_path_buf(), START_NS)
    })
    .expect("recorder");
    let tx = recorder.sender();
    let peer = "192.168.0.10:3794".parse().unwrap();
    let mut seq = 0u16;
    let mut send = |t_ns: u64, m: &Message| {
        seq = seq.wrapping_add(1);
        tx.send(WireRecord {
            t_ns,
            direction: Direction::Rx,
            peer,
            bytes: datagram(seq, m),
            latched: None,
        })
        .expect("the recorder is running");
    };
    send(
        START_NS + 200_000_000,
        &jaus_ocu::net::reports::spec_report(&arm.spec).into(),
    );
    let mut rng = Rng::new(7);
    let mut n = 1u64;
    for ms in 0..seconds * 1000 {
        let t = ms as f64 / 1000.0;
        let t_ns = START_NS + 500_000_000 + ms * 1_000_000;
        let positions: Message = ReportJointPositions {
            joint_positions: kinds
                .iter()
                .enumerate()
                .map(|(i, k)| JointValue {
                    joint_type: (*k).into(),
                    value: 0.3 * (t / 60.0 + i as f64).sin() + 0.001 * rng.normal(),
                })
                .collect(),
        }
        .into();
        send(t_ns, &event(1, ms as u8, &positions));
        let mut f = |a: f64| 20.0 * (t / 7.0 + a).sin() + 0.5 * rng.normal();
        let ft: Message = ReportManipulatorEndEffectorForceTorque::full(
            [f(0.0), f(1.0), f(2.0)],
            [0.1 * f(3.0), 0.1 * f(4.0), 0.1 * f(5.0)],
        )
        .into();
        send(t_ns + 500_000, &event(2, ms as u8, &ft));
        n += 2;
    }
    drop(tx);
    let stats = recorder.stop().expect("the recording finishes");
    assert_eq!(stats.rx, n, "every datagram recorded");
    n
}

/// Opens `path` and waits until the first frame could be drawn; the time it took.
fn first_frame(path: &Path) -> (Duration, Replay) {
    let (wake_tx, wake_rx) = bounded::<()>(1);
    let waker: LoadWaker = Arc::new(move || {
        let _ = wake_tx.try_send(());
    });
    let t0 = Instant::now();
    let replay = Replay::open(path, PORT, Some(waker)).expect("opens");
    loop {
        {
            let v = replay.session.read().unwrap();
            let s = v.focused();
            if s.latest.spec.is_some()
                && let Some((first, _)) = s.positions.span()
                && black_box(s.state_at(first)).positions.is_some()
            {
                break;
            }
        }
        assert!(
            !replay.progress().finished,
            "the whole file loaded without a drawable frame"
        );
        let _ = wake_rx.recv_timeout(Duration::from_millis(5));
    }
    (t0.elapsed(), replay)
}

fn main() {
    let seconds = env_u64("REPLAY_BENCH_SECONDS", 3600);
    let dir = std::env::temp_dir().join(format!("jaus-ocu-bench-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // `REPLAY_BENCH_OUT=FILE` writes the recording there and keeps it (to profile the load or
    // read it with another tool); by default it is a temporary file, removed at the end.
    let path: PathBuf =
        std::env::var_os("REPLAY_BENCH_OUT").map_or_else(|| dir.join("hour.mcap"), PathBuf::from);
    let t = Instant::now();
    // `REPLAY_BENCH_IN=FILE` loads a recording this bench kept before instead of making one
    // (to profile the load alone: the datagram count is read from the file).
    let (path, datagrams, seconds) = match std::env::var_os("REPLAY_BENCH_IN").map(PathBuf::from) {
        Some(input) => {
            let n = WireSource::open(&input, PORT).expect("opens").count() as u64;
            // Two datagrams per millisecond (see `record`).
            (input, n, n / 2000)
        }
        None => {
            let n = record(&path, seconds);
            (path, n, seconds)
        }
    };
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "recording: {seconds} s at 1 kHz positions + 1 kHz F/T, {datagrams} datagrams, {:.1} MB ({:.1} bytes/datagram), made or counted in {:.1} s",
        size as f64 / 1e6,
        size as f64 / datagrams as f64,
        t.elapsed().as_secs_f64()
    );

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));

    // (a) Open to first frame.
    c.bench_function("open_to_first_frame", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (took, replay) = first_frame(&path);
                total += took;
                // Cancels the loader (joins within one batch), outside the timing.
                drop(replay);
            }
            total
        });
    });

    // (b0) Full load on one thread, as the loader did before issue 14 (read, decompress,
    // observe and apply in turn), for the comparison in the same run.
    let mut one_thread = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let mut source = WireSource::open(&path, PORT).expect("opens");
        let first = source.next();
        let start_ns = source.info().time_origin(first.as_ref());
        let mut observer = Observer::new(start_ns);
        let mut session = Session::new();
        let mut updates = Vec::new();
        let mut n = 0u64;
        for rec in first.into_iter().chain(&mut source) {
            observer.observe(&rec, &mut updates);
            n += 1;
            if n.is_multiple_of(4096) {
                for u in updates.drain(..) {
                    apply(&mut session, &u);
                }
            }
        }
        for u in updates.drain(..) {
            apply(&mut session, &u);
        }
        one_thread.push(t.elapsed().as_secs_f64());
        assert_eq!(n, datagrams);
        black_box(&session);
    }
    one_thread.sort_by(f64::total_cmp);
    println!(
        "full load on one thread (before issue 14): min {:.2} s, median {:.2} s of 3 ({:.0} datagrams/s at the median)",
        one_thread[0],
        one_thread[1],
        datagrams as f64 / one_thread[1]
    );

    // (b) Full load.
    let mut loads = Vec::new();
    let mut loaded: Option<Replay> = None;
    for _ in 0..3 {
        let t = Instant::now();
        let replay = Replay::open(&path, PORT, None).expect("opens");
        let p = replay.wait();
        loads.push(t.elapsed().as_secs_f64());
        assert!(p.finished && p.stopped.is_none(), "{p:?}");
        assert_eq!(p.datagrams, datagrams);
        loaded = Some(replay);
    }
    loads.sort_by(f64::total_cmp);
    println!(
        "full load: min {:.2} s, median {:.2} s of 3 ({:.0} datagrams/s at the median)",
        loads[0],
        loads[1],
        datagrams as f64 / loads[1]
    );
    // (b2) Foxglove's own reader on the same file, in the same run: @mcap/core iterating
    // every message, and only the raw `/judp/` channels replay reads (its own `topics`
    // filter), each beside the full load (`.ci/mcap-iterate.sh`; needs Node.js, installs the
    // locked npm packages once). `REPLAY_BENCH_NODE=off` skips them.
    if std::env::var("REPLAY_BENCH_NODE").as_deref() == Ok("off") {
        println!("@mcap/core: skipped (REPLAY_BENCH_NODE=off)");
    } else {
        for (what, prefix) in [
            ("every channel", None),
            ("the raw /judp/ channels", Some("/judp/")),
        ] {
            match mcap_core_seconds(&path, prefix) {
                Ok((seconds, messages)) => println!(
                    "@mcap/core (Node) iterating {what} of the same file ({messages} messages): \
                     {seconds:.2} s; full load {:.1}x faster (median)",
                    seconds / loads[1]
                ),
                Err(why) => println!("@mcap/core over {what}: not measured ({why})"),
            }
        }
    }
    let replay = loaded.expect("loaded");
    let vehicle = replay.session.read().unwrap();
    let session: &Session = vehicle.focused();
    let (t0, t1) = session.positions.span().expect("samples");
    assert!(session.positions.len() as u64 >= datagrams / 2);
    assert_eq!(session.ft.len(), session.positions.len());

    // (c) Seek.
    let mut rng = Rng::new(42);
    let times: Vec<f64> = (0..4096).map(|_| t0 + rng.uniform() * (t1 - t0)).collect();
    let mut i = 0;
    c.bench_function("seek_state_at_random_time", |b| {
        b.iter(|| {
            i = (i + 1) % times.len();
            let s = session.state_at(black_box(times[i]));
            assert!(s.positions.is_some());
            s
        });
    });
    c.bench_function("step_next_and_prev_report", |b| {
        b.iter(|| {
            i = (i + 1) % times.len();
            let t = black_box(times[i]);
            (session.next_report(t), session.prev_report(t))
        });
    });
    c.final_summary();

    // (d) Memory.
    let bytes = session.memory_bytes();
    println!(
        "memory: {:.1} MB for {seconds} s ({:.1} MB per hour, {:.1} bytes per datagram); {} position and {} F/T samples, {} discrete updates",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 * 3600.0 / seconds as f64,
        bytes as f64 / datagrams as f64,
        session.positions.len(),
        session.ft.len(),
        session.discrete_updates()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `.ci/mcap-iterate.sh` on `path` (only the channels whose topic starts with `prefix`,
/// when given): @mcap/core's seconds and message count.
fn mcap_core_seconds(path: &Path, prefix: Option<&str>) -> Result<(f64, u64), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mcap-iterate.sh");
    let mut command = std::process::Command::new("bash");
    command.arg(&script);
    if let Some(p) = prefix {
        command.args(["--topic-prefix", p]);
    }
    let out = command
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim())
        .map_err(|e| format!("unexpected output {line:?}: {e}"))?;
    match (v["seconds"].as_f64(), v["messages"].as_u64()) {
        (Some(s), Some(n)) => Ok((s, n)),
        _ => Err(format!("unexpected output {line:?}")),
    }
}

/// One arm's session fed the observer's updates (the one-thread load of before: a session, not
/// a vehicle).
fn apply(session: &mut Session, u: &Update) {
    match u {
        Update::Arm { fact, .. } => session.apply_arm(fact),
        Update::Net(fact) => session.apply_net(fact),
    }
}
