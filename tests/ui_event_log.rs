//! The event log panel and operator notes through the real UI code with `egui_kittest`: the
//! log lists the session's events with words, a kind's chip hides its lines, a click on a line
//! moves the cursor there, and N adds a note that shows in the log and on the timeline.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::command::*;
use jaus_ocu::model::update::*;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::{LiveKind, read_vehicle};

/// A live app (no network) fed a few events, with the log shown and the clock at 10 s.
fn app() -> OcuApp {
    let settings = Settings {
        show_log: true,
        ..Settings::default()
    };
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), settings);
    let arm = ComponentId::new(126, 1, 10);
    for u in [
        Update::net(NetFact::Selected { t: 0.5, id: arm }),
        Update::arm(
            arm,
            ArmFact::JointPositions {
                t: 1.0,
                values: vec![0.0; 3],
            },
        ),
        Update::arm(
            arm,
            ArmFact::Status {
                t: 1.5,
                state: ManagementState::Ready,
            },
        ),
        Update::net(Remark::CommandOutcome {
            t: 2.0,
            command: CommandKind::ClearEmergency,
            outcome: Outcome::Confirmed,
        }),
        Update::arm(
            arm,
            ArmFact::Controller {
                t: 3.0,
                controller: Controller {
                    id: Some(ComponentId::new(200, 7, 3)),
                    authority: 200,
                },
            },
        ),
        Update::arm(
            arm,
            ArmFact::JointPositions {
                t: 9.0,
                values: vec![0.1; 3],
            },
        ),
    ] {
        app.apply(&u);
    }
    app.freeze_clock(10.0);
    app
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    ui_common::sized(app, [1280.0, 800.0])
}

/// The log line of the outcome (the status bar's text has no kind before it).
const OUTCOME_LINE: &str = "command  ClearEmergency: confirmed";

#[test]
fn the_log_lists_events_in_words_with_who_holds_control() {
    let mut h = harness(app());
    h.step();
    h.get_by_label_contains(OUTCOME_LINE);
    h.get_by_label_contains("control held by 200.7.3 (authority 200)");
    h.get_by_label_contains("status  READY");
}

#[test]
fn a_kinds_chip_hides_its_lines() {
    let mut h = harness(app());
    h.step();
    assert!(h.query_by_label_contains(OUTCOME_LINE).is_some());
    // The log's chip and the timeline's share one filter: either hides the kind.
    h.get_all_by_label("command 1").next().unwrap().click();
    h.step();
    h.step();
    assert!(h.query_by_label_contains(OUTCOME_LINE).is_none());
    assert!(!h.state().settings.marks.shows(MarkKind::Command));
    assert!(h.query_by_label_contains("status  READY").is_some());
}

#[test]
fn clicking_a_line_moves_the_cursor_there() {
    let mut h = harness(app());
    h.step();
    assert!((h.state().time() - 10.0).abs() < 1e-9, "following live");
    h.get_by_label_contains(OUTCOME_LINE).click();
    h.step();
    assert!(h.state().shown().is_past());
    assert!(
        (h.state().time() - 2.0).abs() < 1e-6,
        "{}",
        h.state().time()
    );
}

#[test]
fn n_adds_a_note_that_shows_in_the_log_and_on_the_timeline() {
    let mut h = harness(app());
    h.step();
    h.key_press(egui::Key::N);
    h.step();
    h.step();
    h.get_by_label_contains("Enter saves");
    let field = h.get_by_role(egui::accesskit::Role::TextInput);
    field.focus();
    field.type_text("valve opened");
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    assert!(
        h.query_by_label_contains("Enter saves").is_none(),
        "window closed"
    );
    let marks: Vec<(f64, MarkKind, String)> = read_vehicle(h.state().vehicle())
        .focused()
        .marks
        .iter()
        .map(|m| (m.t, m.kind, m.label.clone()))
        .collect();
    assert!(
        marks.contains(&(10.0, MarkKind::Note, "valve opened".to_owned())),
        "{marks:?}"
    );
    h.get_by_label_contains("note  valve opened");
    // A note without text is a bookmark; Esc cancels without one.
    h.key_press(egui::Key::N);
    h.step();
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    h.step();
    assert!(
        h.query_by_label_contains("Enter saves").is_none(),
        "Esc closed it"
    );
    h.get_by_label_contains("Add note").click();
    h.step();
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    let notes = read_vehicle(h.state().vehicle()).notes();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(notes[1].text, "");
    h.get_by_label_contains("note  bookmark");
}

#[test]
fn a_replays_notes_are_saved_to_the_sidecar_and_read_back_with_the_file() {
    use jaus_ocu::model::events::{Note, NotesFile, sidecar_path};
    use jaus_ocu::record::player::Replay;
    use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
    use jaus_ocu::ui::commands::UiCommand;
    use std::time::{Duration, Instant};

    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{}-ui-notes.mcap", std::process::id()));
    let sidecar = sidecar_path(&path);
    let _ = std::fs::remove_file(&sidecar);
    let recorder =
        Recorder::start(RecorderConfig::new(path.clone(), 1_700_000_000_000_000_000)).unwrap();
    recorder
        .note_sender()
        .try_send(Note::new(1.0, "recorded live", None))
        .unwrap();
    recorder.stop().unwrap();

    let open = || {
        let replay = Replay::open(&path, 3794, None).unwrap();
        replay.wait();
        let settings = Settings {
            show_log: true,
            ..Settings::default()
        };
        OcuApp::with_replay(replay, settings)
    };
    let mut h = harness(open());
    h.step();
    let before = h.get_by_label("Save notes").rect();
    h.state_mut().add_note(2.0, "seen in the replay");
    assert_eq!(h.state().view.log.unsaved(Some(&path)), 1);
    // The button keeps its place (and row) when its count appears.
    h.step();
    let after = h.get_by_label("Save notes (1)").rect();
    assert_eq!(
        before, after,
        "Save notes moved when it became Save notes (1)"
    );
    h.state_mut().run(UiCommand::SaveNotes);
    let until = Instant::now() + Duration::from_secs(10);
    while h.state().view.notices.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    let notice = h
        .state()
        .view
        .notices
        .last()
        .expect("a notice")
        .text
        .clone();
    assert!(notice.contains("Saved 2 note(s)"), "{notice}");
    assert_eq!(h.state().view.log.unsaved(Some(&path)), 0);
    let file = NotesFile::parse(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    assert_eq!(file.notes.len(), 2);

    // Opened again: the recording's note once, the replay's from the sidecar.
    let app = open();
    let texts: Vec<String> = read_vehicle(app.vehicle())
        .notes()
        .into_iter()
        .map(|n| n.text)
        .collect();
    assert_eq!(texts, ["recorded live", "seen in the replay"]);
    let _ = std::fs::remove_file(&sidecar);
}

#[test]
fn the_event_log_screenshot_scenario_shows_the_log_with_two_notes() {
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::ui::screenshot::{Scenario, scenario_app};

    let app = scenario_app(ArmFile::demo(), 3.0, Scenario::parse("event-log").unwrap());
    assert!(app.settings.show_log);
    assert_eq!(read_vehicle(app.vehicle()).notes().len(), 2);
    let mut h = harness(app);
    h.step();
    h.get_by_label_contains("note  bookmark");
    h.get_by_label_contains("emergency  EMERGENCY");
    // The first note is a few lines up the log (the newest at the bottom): scrolled to.
    let log = h.get_by_label_contains("note  bookmark").rect().center();
    for _ in 0..20 {
        if h.query_by_label_contains("note  tour running, gripper open")
            .is_some()
        {
            break;
        }
        h.event(egui::Event::PointerMoved(log));
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, 40.0),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
        });
        h.step();
    }
    h.get_by_label_contains("note  tour running, gripper open");
}

/// Steps the app until `done` (at most `seconds`); whether it came.
fn run_until(
    h: &mut Harness<'static, OcuApp>,
    seconds: f64,
    done: impl Fn(&OcuApp) -> bool,
) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
    while std::time::Instant::now() < until {
        // Drain the network as eframe's `logic` does.
        h.state_mut().drain(std::time::Duration::from_millis(10));
        h.step();
        if done(h.state()) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[test]
fn a_live_note_goes_into_the_recording_and_recording_start_and_stop_are_events() {
    use jaus_ocu::net::client::ClientConfig;
    use jaus_ocu::net::fault::Faults;
    use jaus_ocu::net::thread::{NetConfig, NetHandle};
    use jaus_ocu::record::format;
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::sim::component::{Component, SimConfig};
    use jaus_ocu::sim::host;
    use jaus_ocu::ui::recording::Recording;

    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sim_addr = socket.local_addr().unwrap();
    let sim = host::spawn(
        Component::new(ArmFile::demo(), SimConfig::default()),
        socket,
        Faults::default(),
        1,
    )
    .unwrap();
    let net = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim_addr],
            multicast: None,
            ..ClientConfig::default()
        },
        ..NetConfig::default()
    })
    .unwrap();
    let settings = Settings {
        show_log: true,
        ..Settings::default()
    };
    let app = OcuApp::new(LiveKind::Simulated, Some(net), vec![sim], settings);
    let mut h = harness(app);
    assert!(
        run_until(&mut h, 10.0, |a| a.drawn_state().positions.is_some()),
        "the arm reports"
    );
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{}-ui-live-note.mcap", std::process::id()));
    h.state_mut().start_recording(path.clone()).unwrap();
    h.step();
    h.key_press(egui::Key::N);
    h.step();
    h.step();
    let field = h.get_by_role(egui::accesskit::Role::TextInput);
    field.focus();
    field.type_text("valve opened");
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
    h.state_mut().stop_recording();
    assert!(
        run_until(&mut h, 10.0, |a| matches!(a.recording, Recording::Idle)),
        "the stop finishes"
    );
    h.get_by_label_contains("note  valve opened");
    h.get_by_label_contains("recording  recording started: ");
    h.get_by_label_contains("recording  recording stopped: ");

    let bytes = std::fs::read(&path).unwrap();
    let notes: Vec<serde_json::Value> = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == format::NOTES_TOPIC)
        .map(|m| serde_json::from_slice(&m.data).unwrap())
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["text"], "valve opened");
    assert_eq!(notes[0]["arm"], "126.1.10");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn next_mark_steps_through_two_marks_at_one_instant_one_by_one() {
    let mut app = app();
    // A second mark at the instant of the outcome (2.0 s).
    app.apply(&Update::net(Remark::Mark {
        t: 2.0,
        kind: MarkKind::Note,
        label: "beside the outcome".into(),
    }));
    let mut h = harness(app);
    h.step();
    h.state_mut()
        .time_command(jaus_ocu::ui::time_control::TimeCommand::Seek(1.8));
    h.step();
    let selected = |h: &Harness<'static, OcuApp>, text: &str| {
        h.get_by_label_contains(text).accesskit_node().toggled()
            == Some(egui::accesskit::Toggled::True)
    };
    let mut seen = Vec::new();
    for _ in 0..2 {
        h.key_press(egui::Key::Period);
        h.step();
        h.step();
        assert!(
            (h.state().time() - 2.0).abs() < 1e-9,
            "{}",
            h.state().time()
        );
        seen.push((
            selected(&h, OUTCOME_LINE),
            selected(&h, "beside the outcome"),
        ));
    }
    // Each of the two is highlighted in turn, the cursor staying at 2.0 s.
    assert!(
        seen.contains(&(true, false)) && seen.contains(&(false, true)),
        "{seen:?}"
    );
    // Then on to the next instant.
    h.key_press(egui::Key::Period);
    h.step();
    assert!(h.state().time() > 2.5, "{}", h.state().time());
}
