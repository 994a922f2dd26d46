//! A session held within its memory budget, as the operator meets it (`egui_kittest`, no
//! display): a replay larger than its budget loads within it, the status bar says what is held
//! as an envelope, and the exact values around the cursor are read back from the file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::jaus::JausId;
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions};
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::exact::ExactStatus;
use jaus_ocu::ui::files::Task;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::read_vehicle;

/// Samples per second of the recording.
const RATE: u32 = 1000;

/// The recording's length, s.
const SECONDS: u32 = 120;

/// The value of joint 1 at sample `k`: a different value at every sample, so a value read
/// back names its sample.
fn q1(k: u32) -> f64 {
    f64::from(k % 100_000) * 1e-5
}

/// A recording of joint positions (two joints) at [`RATE`] for [`SECONDS`].
fn recording(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jaus-ocu-ui-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let start_ns = 1_700_000_000_000_000_000u64;
    let recorder = Recorder::start(RecorderConfig {
        decoded: false,
        ..RecorderConfig::new(path.clone(), start_ns)
    })
    .unwrap();
    let tx = recorder.sender();
    let (sim, ocu) = (JausId::new(126, 1, 10), JausId::new(200, 1, 1));
    for k in 0..RATE * SECONDS {
        let m: jaus_ocu::jaus::Message = ReportJointPositions {
            joint_positions: vec![JointValue::revolute(q1(k)), JointValue::revolute(-0.5)],
        }
        .into();
        tx.send(WireRecord {
            t_ns: start_ns + u64::from(k) * 1_000_000_000 / u64::from(RATE),
            direction: Direction::Rx,
            peer: "127.0.0.1:3794".parse().unwrap(),
            bytes: judp::single(&Header::new(ocu, sim, k as u16), &m.emit().unwrap()).unwrap(),
            latched: None,
        })
        .unwrap();
    }
    drop(tx);
    recorder.stop().unwrap();
    path
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    ui_common::sized(app, [1280.0, 800.0])
}

/// Steps until `done` holds, failing after `secs` (a read in the background on a busy machine).
fn step_until(h: &mut Harness<'static, OcuApp>, secs: u64, mut done: impl FnMut(&OcuApp) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done(h.state()) {
        if Instant::now() >= deadline {
            let app = h.state();
            let status = app.sources().replay().map(|r| r.exact.status());
            panic!(
                "not within {secs} s: exact window {status:?}, drawn {:?}",
                app.drawn_state().positions
            );
        }
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_replay_larger_than_its_budget_loads_within_it_and_reads_exact_values_at_the_cursor() {
    let path = recording("over-budget.mcap");
    // The whole file in a session takes about 2.5 MB; a third of that is the budget.
    let (unbounded, _) = Replay::load_blocking(&path, 3794).unwrap();
    let whole = unbounded.memory_bytes();
    let budget = whole / 3;
    let replay = Replay::open_within(&path, 3794, None, Some(budget)).unwrap();
    let progress = replay.wait();
    assert_eq!(progress.datagrams, u64::from(RATE * SECONDS));
    let mut app = OcuApp::with_replay(replay, Settings::default());
    app.memory_override = Some(budget as u64);
    let mut h = harness(app);
    h.step();

    // Loaded within the budget, the far past as an envelope, and the status bar says so.
    let edge = {
        let v = read_vehicle(h.state().sources().vehicle());
        assert!(
            v.memory_bytes() <= budget,
            "{} > {budget}",
            v.memory_bytes()
        );
        v.envelope_before().expect("the far past is an envelope")
    };
    assert!(edge > 10.0 && edge < f64::from(SECONDS), "{edge}");
    assert!(
        h.query_by_label_contains("envelope").is_some(),
        "the status bar says what is held as an envelope"
    );

    // A CSV of the whole file before the exact values are read back: it starts at the edge
    // and a notice says where the rest is.
    let dir = path.parent().unwrap().to_path_buf();
    let csv = dir.join("whole.csv");
    h.state_mut()
        .file_chosen(Task::ExportCsv { t0: 0.0, t1: 120.0 }, csv.clone());
    let notices = h.state().view.notices.clone();
    assert!(
        notices
            .iter()
            .any(|n| n.text.contains("The CSV starts at") && n.text.contains("jaus-ocu export")),
        "{notices:?}"
    );
    step_until(&mut h, 30, |app| {
        app.view.notices.iter().any(|n| n.text.contains("Exported"))
    });
    h.state_mut().view.notices.clear();

    // The cursor in the envelope-only past: the exact values there are read back from the
    // file, and the drawn state is the exact sample at the cursor.
    let k = RATE * 5 + 123;
    let t = f64::from(k) / f64::from(RATE);
    assert!(t < edge);
    // What a session holding every sample draws there (samples are kept as `f32`).
    let exact = unbounded.focused().state_at(t).positions.unwrap();
    assert!((exact.t - t).abs() < 1e-9 && (exact.value[0] - q1(k)).abs() < 1e-6);
    h.state_mut().seek(t);
    step_until(&mut h, 60, |app| {
        app.drawn_state().positions.as_ref() == Some(&exact)
    });
    let status = h
        .state()
        .sources()
        .replay()
        .map(|r| r.exact.status())
        .unwrap();
    assert!(
        matches!(status, ExactStatus::Ready { t0, t1 } if t0 <= t && t <= t1),
        "{status:?}"
    );
    h.step();
    assert!(
        h.query_by_label_contains("exact values from the file")
            .is_some(),
        "the status bar says where the values come from"
    );
    // A CSV of the range around the cursor now comes from the exact values: every sample.
    let csv = dir.join("window.csv");
    let _ = std::fs::remove_file(&csv);
    h.state_mut()
        .file_chosen(Task::ExportCsv { t0: t - 1.0, t1: t }, csv.clone());
    step_until(&mut h, 30, |app| !app.view.notices.is_empty());
    let notices = h.state().view.notices.clone();
    assert!(
        notices.len() == 1 && notices[0].text.contains("Exported"),
        "{notices:?}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(
        rows,
        RATE as usize + 1,
        "every sample of the second, both ends"
    );
    // Still within the budget: the window read back is small and held apart.
    assert!(read_vehicle(h.state().sources().vehicle()).memory_bytes() <= budget);
    let _ = std::fs::remove_file(path);
}

#[test]
fn without_a_recording_the_envelope_past_says_how_to_keep_exact_values() {
    // A live app with nothing recorded: asking for the recording says nothing is recorded.
    let (net, _rx, _updates) =
        jaus_ocu::net::thread::NetHandle::detached(jaus_ocu::net::tap::Epoch::now());
    let mut app = OcuApp::new(
        jaus_ocu::ui::sources::LiveKind::Simulated,
        Some(net),
        Vec::new(),
        Settings::default(),
    );
    app.perform(jaus_ocu::ui::action::Action::ExactFromRecording);
    assert!(
        app.view
            .notices
            .iter()
            .any(|n| n.text.contains("Nothing is being recorded")),
        "{:?}",
        app.view.notices
    );
}
