//! Operator flows through the real UI code with `egui_kittest` (no display, no GPU): the app is
//! fed updates recorded from the simulator (in memory, through the real client state machine),
//! the test clicks like an operator and checks the commands the UI sends (read where they
//! leave it: a detached network handle) and what it shows.
//!
//! Longer than 800 lines for now: the live flows and the replay flows (`mod replay_flows`)
//! share the in-memory client+simulator session `recorded`, which the network side's
//! restructuring (issue 10) moves into shared test support; the two then become two files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::command::*;
use jaus_ocu::model::update::*;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::app::OcuApp;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

#[test]
fn emergency_stop_is_one_click() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    h.get_by_label_contains("E-STOP").click();
    h.step();
    assert!(
        out.sent().contains(&Command::SetEmergencyOf(ARM)),
        "{:?}",
        out.sent()
    );
}

#[test]
fn request_control_from_the_top_bar() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    h.get_by_label_contains("Request control").click();
    h.step();
    assert!(
        out.sent()
            .iter()
            .any(|c| matches!(c, Command::RequestControl { .. }))
    );
}

#[test]
fn units_toggle_changes_what_the_gauges_say() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    assert!(
        h.query_all_by_label_contains("°").count() > 0,
        "gauges in degrees by default"
    );
    h.get_by_label("Angles in degrees").click();
    h.step();
    h.step();
    assert!(!h.state().settings.degrees);
    assert_eq!(h.query_all_by_label_contains("°").count(), 0);
    assert!(
        h.query_all_by_label_contains(" rad").count() > 0,
        "gauges now in radians"
    );
    // The button reads the unit shown now ("rad", named "Angles in radians"), and a click
    // brings degrees back.
    assert!(h.query_by_label("Angles in degrees").is_none());
    h.get_by_label("Angles in radians").click();
    h.step();
    assert!(h.state().settings.degrees);
    // Lengths the same way: metres by default, the button says "m" ("Lengths in metres").
    h.get_by_label("Lengths in metres").click();
    h.step();
    assert!(h.state().settings.millimetres);
    h.step();
    h.get_by_label("Lengths in millimetres");
}

/// A live app holding control with the fourth preset clicked (previewed), its outbox and the
/// preset.
fn preset_previewed_with_control() -> (
    Harness<'static, OcuApp>,
    Outbox,
    jaus_ocu::sim::arm_file::Preset,
) {
    let mut updates = recorded(1.0, None);
    updates.push(Update::arm(
        crate::ARM,
        ArmFact::Control {
            t: 1.0,
            state: ControlState::Held { authority: 100 },
        },
    ));
    let (app, out) = live_app(&updates);
    let mut h = harness(app);
    h.step();
    let goal = ArmFile::demo().presets[3].clone();
    h.get_by_label_contains(&goal.name).click();
    h.step();
    (h, out, goal)
}

#[test]
fn preview_then_command_a_preset_with_control_and_confirmation() {
    let (mut h, mut out, goal) = preset_previewed_with_control();
    assert_eq!(
        h.state().view.preview,
        Some(goal.id),
        "clicking a preset previews it"
    );
    h.get_by_label_contains("Go to").click();
    // The confirmation window appears on the next frames.
    h.step();
    h.step();
    assert!(!out.sent_a_preset_move(), "not before confirming");
    h.get_by_label("Confirm").click();
    h.step();
    assert!(
        out.sent()
            .contains(&Command::GoToPreset { pose_id: goal.id }),
        "{:?}",
        out.sent()
    );
}

#[test]
fn a_confirmation_never_goes_to_an_arm_selected_while_it_was_open() {
    let (mut h, mut out, _) = preset_previewed_with_control();
    h.get_by_label_contains("Go to").click();
    h.step();
    h.step();
    // Another arm is selected while the question is open, and it too would accept the move
    // (live, READY, control held): only the arm the question named may receive it.
    for u in [
        Update::net(NetFact::Selected {
            t: 1.1,
            id: ComponentId::new(126, 1, 11),
        }),
        Update::arm(
            ComponentId::new(126, 1, 11),
            ArmFact::Link {
                t: 1.1,
                state: LinkState::Live,
            },
        ),
        Update::arm(
            ComponentId::new(126, 1, 11),
            ArmFact::Status {
                t: 1.1,
                state: ManagementState::Ready,
            },
        ),
        Update::arm(
            ComponentId::new(126, 1, 11),
            ArmFact::Control {
                t: 1.1,
                state: ControlState::Held { authority: 100 },
            },
        ),
    ] {
        h.state_mut().apply(&u);
    }
    h.step();
    if let Some(confirm) = h.query_by_label("Confirm") {
        confirm.click();
        h.step();
    }
    assert!(!out.sent_a_preset_move(), "{:?}", out.sent());
}

#[test]
fn going_to_a_preset_without_control_offers_to_request_it() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    let goal = ArmFile::demo().presets[2].clone();
    h.get_by_label_contains(&goal.name).click();
    h.step();
    assert!(h.query_by_label_contains("Go to").is_none());
    assert!(h.query_by_label_contains("needs control").is_some());
}

#[test]
fn selecting_another_arm_sends_select() {
    let other = ComponentId::new(127, 1, 10);
    let (app, mut out) = live_app(&recorded(
        1.0,
        Some((JausIdLike(other), ArmFile::builtin("ur5e").unwrap())),
    ));
    let mut h = harness(app);
    h.step();
    assert_eq!(
        h.state()
            .drawn_state()
            .components
            .values()
            .filter(|c| c.0.manipulator)
            .count(),
        2
    );
    let selected = h.state().drawn_state().selected.unwrap();
    h.get_by_label("arm").click();
    h.step();
    h.step();
    let target = if selected == other {
        ComponentId::new(126, 1, 10)
    } else {
        other
    };
    h.get_by_label_contains(&target.to_string()).click();
    h.step();
    assert!(
        out.sent().contains(&Command::Select(target)),
        "{:?}",
        out.sent()
    );
}

/// One `ArmState` per arm (issue 47): while following live the window draws the live
/// session's newest state itself, so what the window says and what the session keeps (the
/// event log, a recording's summary) cannot part. A command the network thread could not take
/// is said there too, not in a copy of the window's own that the next focus change forgot.
#[test]
fn the_drawn_state_is_the_live_sessions_newest_and_a_refused_send_is_kept_in_it() {
    let (mut app, out) = live_app(&recorded(1.0, None));
    let latest = |app: &OcuApp| {
        jaus_ocu::ui::sources::read_vehicle(app.vehicle())
            .focused()
            .latest
            .clone()
    };
    let mut h = harness(app);
    h.step();
    // (Compared in full through Debug: `ArmState` has no `PartialEq`.)
    let same = |app: &OcuApp| format!("{:?}", app.drawn_state()) == format!("{:?}", latest(app));
    assert!(same(h.state()));
    // The network side gone: its command channel is closed.
    drop(out);
    app = h.into_state();
    assert!(!app.command(Command::Select(ComponentId::new(126, 1, 10))));
    let said = |s: &jaus_ocu::model::state::ArmState| {
        s.errors
            .iter()
            .any(|(_, m)| m.contains("the network thread has stopped"))
    };
    assert!(said(&latest(&app)), "kept in the live session");
    assert!(
        said(&app.drawn_state()),
        "and drawn: {:?}",
        app.drawn_state().errors
    );
    assert!(same(&app));
}

// ---------------------------------------------------------------------------------------
// Record and replay (issue 6).

mod replay_flows {
    use std::net::SocketAddr;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use eframe::egui;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use jaus_ocu::model::command::*;
    use jaus_ocu::model::update::*;
    use jaus_ocu::net::client::ClientConfig;
    use jaus_ocu::net::fault::Faults;
    use jaus_ocu::net::tap::WireRecord;
    use jaus_ocu::net::thread::{NetConfig, NetHandle};
    use jaus_ocu::record::player::Replay;
    use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::sim::component::{Component, SimConfig};
    use jaus_ocu::sim::harness::simulated_session;
    use jaus_ocu::sim::host;
    use jaus_ocu::ui::app::OcuApp;
    use jaus_ocu::ui::files::Task;
    use jaus_ocu::ui::notice::{Notice, NoticeLevel};
    use jaus_ocu::ui::panels::gauges::gauge_data;
    use jaus_ocu::ui::recording::Recording;
    use jaus_ocu::ui::settings::Settings;
    use jaus_ocu::ui::sources::Badge;
    use jaus_ocu::ui::sources::{LiveKind, read_vehicle};
    use jaus_ocu::ui::time_control::{Shown, TimeCommand};

    use super::{Outbox, live_app};

    const SAE: &str = "tests/data/SAE_Management_PacketCapture.pcap";

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jaus-ocu-ui-flows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
        crate::ui_common::sized(app, [1280.0, 800.0])
    }

    fn replay_app(path: &Path) -> OcuApp {
        let replay = Replay::open(path, 3794, None).unwrap_or_else(|e| panic!("{e}"));
        let p = replay.wait();
        assert!(p.finished && p.stopped.is_none(), "{p:?}");
        OcuApp::with_replay(replay, Settings::default())
    }

    /// Steps the app until a background job posts a notice (10 s at most); that notice.
    fn first_notice(h: &mut Harness<'static, OcuApp>) -> Notice {
        let until = Instant::now() + Duration::from_secs(10);
        while h.state().view.notices.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
            h.step();
        }
        h.state().view.notices.last().expect("a notice").clone()
    }

    fn span(app: &OcuApp) -> (f64, f64) {
        read_vehicle(app.vehicle())
            .focused()
            .span()
            .expect("something loaded")
    }

    fn cursor(h: &Harness<'_, OcuApp>) -> f64 {
        h.state()
            .time_control()
            .cursor()
            .expect("replay has a cursor")
    }

    /// What the window's badge says: the simulator, or the file replayed.
    fn badge(app: &OcuApp) -> Option<Badge> {
        app.sources().badge()
    }

    /// A replay window has no network side: nothing it does can send a command.
    fn sends_nothing(app: &OcuApp) -> bool {
        app.net().is_none()
    }

    /// Records `seconds` of an in-memory session between the real client and the simulator
    /// (fake clock, no sockets) at the wire, as the network thread would offer it, to MCAP.
    fn record_in_memory(path: &Path, seconds: f64) {
        let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
        let start_ns = 1_700_000_000_000_000_000u64;
        let recorder = Recorder::start(RecorderConfig::new(path.to_path_buf(), start_ns)).unwrap();
        let tx = recorder.sender();
        simulated_session(ArmFile::demo(), seconds, |t, direction, bytes| {
            tx.send(WireRecord {
                t_ns: start_ns + (t * 1e9) as u64,
                direction,
                peer: sim_addr,
                bytes: bytes.to_vec(),
                latched: None,
            })
            .unwrap();
        });
        drop(tx);
        recorder.stop().unwrap();
    }

    /// Records `seconds` of the two-arm demo vehicle (the real client and two simulated
    /// peers at their own mounts, in memory) at the wire to MCAP.
    fn record_vehicle_in_memory(path: &Path, seconds: f64) {
        use jaus_ocu::sim::harness::{Passage, SimNet};
        use jaus_ocu::sim::vehicle::vehicle_arms;

        let start_ns = 1_700_000_000_000_000_000u64;
        let recorder = Recorder::start(RecorderConfig::new(path.to_path_buf(), start_ns)).unwrap();
        let tx = recorder.sender();
        let arms = vehicle_arms(&ArmFile::demo(), 2);
        let addrs: Vec<SocketAddr> = (0..arms.len())
            .map(|i| SocketAddr::from(([127, 0, 0, 1], 3794 + i as u16)))
            .collect();
        let cfg = ClientConfig {
            connect: addrs.clone(),
            multicast: None,
            ..ClientConfig::default()
        };
        let ocu: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let mut net = SimNet::new(cfg, ocu, Duration::from_millis(2), 1);
        for ((id, arm), addr) in arms.into_iter().zip(addrs) {
            let sim = SimConfig {
                id,
                ..SimConfig::default()
            };
            net.add_peer(addr, Component::new(arm, sim));
        }
        let mut tap = |p: &Passage<'_>| {
            tx.send(WireRecord {
                t_ns: start_ns + p.t_ns,
                direction: p.direction,
                peer: p.peer,
                bytes: p.bytes.to_vec(),
                latched: None,
            })
            .unwrap();
        };
        while net.now() < seconds {
            net.step_with(&mut tap);
        }
        drop(tx);
        recorder.stop().unwrap();
    }

    /// Issue 19's "replay of a two-arm recording shows both": passes once the network side
    /// and the replay observer follow every arm (the lead's branch).
    #[test]
    fn replay_of_a_two_arm_recording_shows_both_and_picking_one_is_the_views_own_focus() {
        let path = temp_path("vehicle.mcap");
        record_vehicle_in_memory(&path, 3.0);
        let app = replay_app(&path);
        let (_, end) = span(&app);
        let mut h = harness(app);
        h.state_mut().seek(end);
        h.step();
        h.step();
        let (a, b) = (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11));
        let drawn = h.state().view.arm.drawn_arms().to_vec();
        assert_eq!(drawn.len(), 2, "{drawn:?}");
        assert!(drawn.contains(&a) && drawn.contains(&b), "{drawn:?}");
        let other = if drawn[0] == a { b } else { a };
        // The past area lists both; picking the other shows it, and sends nothing.
        h.query_all_by_label_contains(&other.to_string())
            .next()
            .unwrap_or_else(|| panic!("no row of {other}"))
            .click();
        h.step();
        h.step();
        assert_eq!(h.state().focus(), Some(other));
        assert_eq!(h.state().view.arm.drawn_arms()[0], other);
        assert_eq!(h.state().drawn_state().selected, Some(other));
        assert!(sends_nothing(h.state()));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn replay_of_the_sae_capture_shows_the_timeline_with_its_marks() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let app = h.state();
        assert_eq!(badge(app), Some(Badge::Replay(PathBuf::from(SAE))));
        assert!(
            app.title()
                .contains("REPLAY SAE_Management_PacketCapture.pcap"),
            "{}",
            app.title()
        );
        let kinds: Vec<MarkKind> = read_vehicle(app.vehicle())
            .focused()
            .marks
            .iter()
            .map(|m| m.kind)
            .collect();
        for kind in [MarkKind::Control, MarkKind::Emergency, MarkKind::Status] {
            assert!(kinds.contains(&kind), "{kind:?} mark missing: {kinds:?}");
        }
        assert!(h.query_by_label("timeline").is_some(), "the scrub bar");
        assert!(h.query_by_label("Play").is_some());
        assert!(h.query_by_label("mark ▶").is_some());
        assert!(
            h.query_by_label_contains("REPLAY SAE_Management").is_some(),
            "the badge"
        );
        assert_eq!(cursor(&h), span(h.state()).0, "a replay opens at its start");
    }

    #[test]
    fn space_plays_and_pauses_a_replay_and_sends_nothing() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let t0 = cursor(&h);
        h.key_press(egui::Key::Space);
        h.step();
        assert!(h.state().time_control().playing(), "space plays");
        h.step();
        assert!(
            cursor(&h) > t0,
            "playing moves the cursor: {} vs {t0}",
            cursor(&h)
        );
        h.key_press(egui::Key::Space);
        h.step();
        assert!(!h.state().time_control().playing(), "space pauses");
        let paused_at = cursor(&h);
        h.step();
        h.step();
        assert_eq!(cursor(&h), paused_at, "paused stays put");
        assert!(sends_nothing(h.state()));
    }

    #[test]
    fn end_shows_the_last_state_standby_and_home_the_first() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let (a, b) = span(h.state());
        h.key_press(egui::Key::End);
        h.step();
        h.step();
        assert_eq!(cursor(&h), b);
        assert_eq!(h.state().drawn_state().status, ManagementState::Standby);
        assert!(h.query_by_label("STANDBY").is_some(), "the top bar says so");
        h.key_press(egui::Key::Home);
        h.step();
        h.step();
        assert_eq!(cursor(&h), a);
        assert_ne!(h.state().drawn_state().status, ManagementState::Standby);
        assert!(h.query_by_label("STANDBY").is_none());
    }

    #[test]
    fn mark_keys_and_buttons_jump_from_mark_to_mark() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let marks: Vec<f64> = read_vehicle(h.state().vehicle())
            .focused()
            .marks
            .iter()
            .map(|m| m.t)
            .collect();
        let start = cursor(&h);
        let first_after = *marks.iter().find(|t| **t > start + 1e-9).unwrap();
        h.key_press(egui::Key::Period);
        h.step();
        assert_eq!(cursor(&h), first_after);
        let second_after = *marks.iter().find(|t| **t > first_after + 1e-9).unwrap();
        h.get_by_label("mark ▶").click();
        h.step();
        assert_eq!(cursor(&h), second_after);
        h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::ArrowLeft);
        h.step();
        assert_eq!(cursor(&h), first_after, "shift+left goes back one mark");
    }

    #[test]
    fn replay_is_read_only_whatever_the_operator_clicks_or_presses() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        h.key_press(egui::Key::End);
        h.step();
        h.get_by_label_contains("E-STOP").click();
        h.step();
        for key in [egui::Key::E, egui::Key::C, egui::Key::Space] {
            h.key_press(key);
            h.step();
        }
        if let Some(release) = h.query_by_label_contains("Release") {
            release.click();
            h.step();
        }
        assert!(sends_nothing(h.state()));
        // Sending directly is refused too.
        assert!(!h.state_mut().command(Command::SetEmergency));
        assert!(sends_nothing(h.state()));
    }

    #[test]
    fn stepping_moves_by_a_pixel_column_of_the_plots_and_alt_by_one_report() {
        let path = temp_path("stepping.mcap");
        record_in_memory(&path, 3.0);
        let mut h = harness(replay_app(&path));
        h.step();
        // The plots follow the cursor (L) over their 30 s window: a pixel column is 30 s over
        // the width of their data area, about 25 ms at 1280 points.
        h.key_press(egui::Key::L);
        h.step();
        h.key_press(egui::Key::Home);
        h.step();
        h.step();
        let column = h.state().view.plots.column.expect("plots drawn");
        // (The plots' tile is narrower than the window: 30 s over its data area's width.)
        let width = f64::from(h.state().view.plots.frames[0].width_px);
        assert!(
            (column - 30.0 / width).abs() < 1e-3,
            "{column} s a column of {width} px"
        );
        let report_after = |h: &Harness<'_, OcuApp>, t: f64| {
            read_vehicle(h.state().vehicle())
                .focused()
                .next_report(t)
                .expect("reports recorded")
        };
        let report_before = |h: &Harness<'_, OcuApp>, t: f64| {
            read_vehicle(h.state().vehicle())
                .focused()
                .prev_report(t)
                .expect("reports recorded")
        };
        // Alt+→: the next report, the finest step.
        let start = cursor(&h);
        h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowRight);
        h.step();
        let first = report_after(&h, start);
        assert_eq!(cursor(&h), first);
        assert!(first - start < 0.01, "one report is a few ms");
        // →: a pixel column on at least, to the report there.
        h.key_press(egui::Key::ArrowRight);
        h.step();
        let stepped = cursor(&h);
        assert_eq!(stepped, report_after(&h, first + column - 1e-9));
        assert!(stepped - first >= column - 1e-9, "{}", stepped - first);
        // Three presses: three columns at least (not 2 ms), as the step ▶ button does.
        for _ in 0..2 {
            h.key_press(egui::Key::ArrowRight);
            h.step();
        }
        h.get_by_label("step ▶").click();
        h.step();
        assert!(
            cursor(&h) - stepped >= 3.0 * column - 1e-9,
            "{} s for three steps",
            cursor(&h) - stepped
        );
        // ←: a column back at least; Alt+←: the previous report.
        let here = cursor(&h);
        h.key_press(egui::Key::ArrowLeft);
        h.step();
        let back = cursor(&h);
        assert_eq!(back, report_before(&h, here - column + 1e-9));
        h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowLeft);
        h.step();
        assert_eq!(
            cursor(&h),
            report_before(&h, back),
            "Alt+← steps back one report"
        );
        // The state drawn is the session's state at the cursor.
        h.step();
        let want = read_vehicle(h.state().vehicle())
            .focused()
            .state_at(cursor(&h));
        assert_eq!(h.state().drawn_state().positions, want.positions);
        // F1's help lists both strides.
        let rows = jaus_ocu::ui::commands::help_rows(h.state().shown());
        assert!(
            rows.iter()
                .any(|r| r.keys == "← / →" && r.what.contains("pixel column"))
        );
        assert!(
            rows.iter()
                .any(|r| r.keys == "Alt+← / Alt+→" && r.what.contains("report"))
        );
    }

    #[test]
    fn a_replay_opens_with_the_whole_file_plotted_until_the_operator_follows_or_pans() {
        let path = temp_path("whole.mcap");
        record_in_memory(&path, 3.0);
        let replay = Replay::open(&path, 3794, None).unwrap();
        // Not waiting: the first frames may run while the file loads.
        // Tall enough for every default plot (the test is about what they show, not the fit:
        // ui_tiles checks that).
        let mut h = crate::ui_common::sized(
            OcuApp::with_replay(replay, Settings::default()),
            [1280.0, 1000.0],
        );
        h.state().replay().unwrap().replay.wait();
        h.step();
        h.step();
        let (a, b) = span(h.state());
        let view = h.state().view.plots.clone();
        assert!(view.whole && !view.follow);
        assert!(!view.frames.is_empty());
        for f in &view.frames {
            assert_eq!(f.x, (a, b), "{f:?}");
        }
        // The data is drawn: every joint's position across the file, the wrench too.
        for unit in ["°", "N"] {
            let lane = view
                .frames
                .iter()
                .find(|f| f.unit == unit)
                .unwrap_or_else(|| panic!("no {unit} lane in {:?}", view.frames));
            assert!(lane.points > 100 && lane.signals > 0, "{lane:?}");
        }
        assert!(h.query_by_label("whole file").is_some());
        // The cursor (at the first joint positions) is inside, drawn as a line.
        let c = cursor(&h);
        assert!(a < c && c < b);
        // L: the plots follow the cursor, their window ending at it.
        h.key_press(egui::Key::L);
        h.step();
        h.step();
        let f = h.state().view.plots.frames[0];
        assert_eq!(f.x, (c - 30.0, c));
        // "Whole file" shows all of it again; a drag pans it and pauses there.
        h.get_by_label("Whole file").click();
        h.step();
        h.step();
        let f = h.state().view.plots.frames[0];
        assert_eq!(f.x, (a, b));
        let from = f.rect.center();
        h.hover_at(from);
        h.step();
        h.drag_at(from);
        h.step();
        for k in 1..=10 {
            h.hover_at(from + egui::vec2(-10.0 * k as f32, 0.0));
            h.step();
        }
        h.drop_at(from + egui::vec2(-100.0, 0.0));
        h.step();
        h.step();
        let v = &h.state().view.plots;
        assert!(!v.whole && !v.follow, "paused on the operator's range");
        let moved = v.frames[0].x;
        // Dragged left by 100 points: later times come into view.
        let dt = (b - a) * 100.0 / f64::from(f.rect.width());
        assert!(
            (moved.0 - (a + dt)).abs() < 0.1 * dt && (moved.1 - moved.0 - (b - a)).abs() < 1e-9,
            "{moved:?} after a {dt} s drag"
        );
        for g in &v.frames {
            assert_eq!(g.x, moved, "every plot at the same range");
        }
    }

    #[test]
    fn a_recording_opens_at_its_first_joint_positions_so_the_arm_shows() {
        let path = temp_path("first-positions.mcap");
        record_in_memory(&path, 1.0);
        let replay = Replay::open(&path, 3794, None).unwrap();
        // Not waiting: the first frames may run while the file loads.
        let mut h = harness(OcuApp::with_replay(replay, Settings::default()));
        h.state().replay().unwrap().replay.wait();
        h.step();
        h.step();
        let first = read_vehicle(h.state().vehicle())
            .focused()
            .positions
            .span()
            .expect("positions recorded")
            .0;
        assert!(
            first > span(h.state()).0,
            "the recording starts before the arm reports"
        );
        assert_eq!(cursor(&h), first);
        assert!(
            h.state().drawn_state().positions.is_some(),
            "the arm is drawn"
        );
        // Home still goes to the very start.
        h.key_press(egui::Key::Home);
        h.step();
        assert_eq!(cursor(&h), span(h.state()).0);
        h.step();
        assert_eq!(cursor(&h), span(h.state()).0, "and stays there");
    }

    #[test]
    fn playing_a_recording_advances_by_speed_and_pauses_at_the_end() {
        let path = temp_path("playing.mcap");
        record_in_memory(&path, 2.0);
        let mut h = harness(replay_app(&path));
        h.step();
        h.state_mut().time_command(TimeCommand::SetSpeed(2.0));
        let t0 = cursor(&h);
        h.get_by_label("Play").click();
        h.step();
        h.step();
        let moved = cursor(&h) - t0;
        // Each kittest step is 0.25 s of wall-clock time; at 2x the cursor moves 0.5 s a step.
        assert!(
            (0.49..=1.01).contains(&moved),
            "moved {moved} s in one or two steps"
        );
        for _ in 0..20 {
            h.step();
        }
        let (_, end) = span(h.state());
        assert_eq!(cursor(&h), end);
        assert!(!h.state().time_control().playing(), "paused at the end");
        assert!(h.query_by_label("Play").is_some());
    }

    #[test]
    fn a_live_app_scrubbed_back_shows_the_older_joint_positions() {
        let updates = super::recorded(3.0, None);
        let (app, mut out) = live_app(&updates);
        let mut h = harness(app);
        h.step();
        let latest = h
            .state()
            .drawn_state()
            .positions
            .clone()
            .expect("positions");
        assert!(h.query_by_label("LIVE").is_some(), "following live");
        // Back to 1.5 s: every panel draws the state then.
        h.state_mut().seek(1.5);
        h.step();
        h.step();
        let then = h
            .state()
            .drawn_state()
            .positions
            .clone()
            .expect("positions at 1.5 s");
        assert!(then.t <= 1.5 && then.t > 1.4, "sample at {}", then.t);
        assert_ne!(then.value, latest.value, "the arm moved in between");
        let want = read_vehicle(h.state().vehicle())
            .focused()
            .state_at(1.5)
            .positions
            .unwrap();
        assert_eq!(then, want);
        let gauge = gauge_data(&h.state().drawn_state(), &h.state().settings)[0].describe();
        assert!(
            h.query_by_label(&gauge).is_some(),
            "the first gauge shows the older value: {gauge}"
        );
        assert!(h.query_by_label("LIVE").is_none());
        // L returns to following now.
        h.key_press(egui::Key::L);
        h.step();
        h.step();
        assert_eq!(h.state().time_control().cursor(), None);
        assert_eq!(h.state().drawn_state().positions.as_ref(), Some(&latest));
        assert!(h.query_by_label("LIVE").is_some());
        // The emergency stop stays on E while live, scrubbed or not (issue 12: Space is the
        // timeline's Play everywhere and never stops an arm).
        h.state_mut().seek(1.0);
        h.step();
        h.key_press(egui::Key::E);
        h.step();
        assert!(out.sent().contains(&Command::SetEmergencyOf(super::ARM)));
    }

    #[test]
    fn clicking_the_scrub_bar_moves_the_cursor_there() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let (a, b) = span(h.state());
        h.get_by_label("timeline").click();
        h.step();
        let t = cursor(&h);
        // The middle of the bar is the middle of the session (within a few pixels).
        let per_px = (b - a) / 1000.0;
        assert!(
            (t - f64::midpoint(a, b)).abs() < 6.0 * per_px.max(0.01),
            "cursor {t} in {a}..{b}"
        );
    }

    /// A classic pcap of `n` UDP datagrams from 10.0.0.1:5000 to 10.0.0.2:5001 (no JUDP).
    fn pcap_without_judp(path: &Path, n: u32) {
        let mut f = Vec::new();
        f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        f.extend_from_slice(&2u16.to_le_bytes());
        f.extend_from_slice(&4u16.to_le_bytes());
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&65535u32.to_le_bytes());
        f.extend_from_slice(&1u32.to_le_bytes());
        for i in 0..n {
            let payload = b"not jaus";
            let udp_len = 8 + payload.len() as u16;
            let mut frame = vec![0u8; 12];
            frame.extend_from_slice(&[0x08, 0x00]);
            frame.extend_from_slice(&[0x45, 0, 0, 0]);
            frame[16..18].copy_from_slice(&(20 + udp_len).to_be_bytes());
            frame.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            frame.extend_from_slice(&5000u16.to_be_bytes());
            frame.extend_from_slice(&5001u16.to_be_bytes());
            frame.extend_from_slice(&udp_len.to_be_bytes());
            frame.extend_from_slice(&[0, 0]);
            frame.extend_from_slice(payload);
            f.extend_from_slice(&(1_700_000_000 + i).to_le_bytes());
            f.extend_from_slice(&0u32.to_le_bytes());
            f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            f.extend_from_slice(&frame);
        }
        std::fs::write(path, f).unwrap();
    }

    #[test]
    fn opening_a_capture_without_judp_keeps_the_replay_and_says_what_it_held() {
        let path = temp_path("no-judp.pcap");
        pcap_without_judp(&path, 3);
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        let before = span(h.state());
        h.state_mut().open_replay(&path).unwrap();
        let notice = first_notice(&mut h);
        h.step();
        assert!(
            notice
                .text
                .contains("3 packets, none on UDP 3794; try --port"),
            "{}",
            notice.text
        );
        assert!(notice.text.contains("Still showing"), "{}", notice.text);
        assert_eq!(
            badge(h.state()),
            Some(Badge::Replay(PathBuf::from(SAE))),
            "the SAE replay is shown again"
        );
        assert_eq!(span(h.state()), before);
    }

    #[test]
    fn opening_a_file_that_is_not_a_recording_says_why_and_keeps_the_view() {
        let path = temp_path("not-a-capture.mcap");
        std::fs::write(&path, b"this is not a capture at all").unwrap();
        let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
        for u in &super::recorded(1.0, None) {
            app.apply(u);
        }
        let before = app.drawn_state().positions.clone();
        let mut h = harness(app);
        h.step();
        let err = h.state_mut().open_replay(&path).unwrap_err();
        h.step();
        assert!(err.contains("not an MCAP recording"), "{err}");
        assert_eq!(badge(h.state()), Some(Badge::Simulated));
        assert!(h.state().replay().is_none());
        assert_eq!(h.state().drawn_state().positions, before);
        let notice = &h.state().view.notices.last().unwrap();
        assert_eq!(notice.level, NoticeLevel::Error);
        assert!(h.query_by_label_contains("not an MCAP recording").is_some());
        // A frame for the new strip to settle (its wrapped text sizes it on the second), as
        // before any click a person makes.
        h.step();
        h.get_by_label("Dismiss").click();
        h.step();
        assert!(
            h.state().view.notices.is_empty(),
            "{:?}",
            h.state().view.notices
        );
    }

    #[test]
    fn a_truncated_capture_loads_what_is_readable_and_says_where_it_stopped() {
        let bytes = std::fs::read(SAE).unwrap();
        let path = temp_path("truncated.pcap");
        std::fs::write(&path, &bytes[..bytes.len() - 30]).unwrap();
        let replay = Replay::open(&path, 3794, None).unwrap();
        let p = replay.wait();
        assert!(p.stopped.is_some(), "the reader says it stopped: {p:?}");
        let mut h = harness(OcuApp::with_replay(replay, Settings::default()));
        h.step();
        h.step();
        let notice = h.state().view.notices.first().expect("a notice").clone();
        assert_eq!(notice.level, NoticeLevel::Warning);
        assert!(
            notice.text.contains("loaded up to 0:01:")
                && notice.text.contains(p.stopped.as_deref().unwrap()),
            "{}",
            notice.text
        );
        assert!(h.query_by_label_contains("loaded up to").is_some(), "shown");
        assert_eq!(
            h.query_all_by_label_contains("loaded partly").count(),
            2,
            "the timeline and the status bar say so too"
        );
        assert!(!read_vehicle(h.state().vehicle()).focused().marks.is_empty());
    }

    #[derive(Debug)]
    struct Dropped(PathBuf);

    impl egui::DroppedFile for Dropped {
        fn path(&self) -> &Path {
            &self.0
        }
        fn bytes(&self) -> Result<Vec<u8>, String> {
            std::fs::read(&self.0).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn dropping_a_capture_on_the_window_replays_it_and_back_to_live_returns() {
        let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
        for u in &super::recorded(1.0, None) {
            app.apply(u);
        }
        let live_positions = app.drawn_state().positions.clone();
        let mut h = harness(app);
        h.step();
        h.input_mut().hovered_files.push(egui::HoveredFile {
            path: Some(PathBuf::from(SAE)),
            mime: String::new(),
        });
        h.step();
        assert!(h.state().view.drop_hover, "the drop veil shows");
        // As winit does: a drop ends the hover.
        h.input_mut().hovered_files.clear();
        h.input_mut()
            .dropped_files
            .push(Arc::new(Dropped(PathBuf::from(SAE))));
        h.step();
        assert!(!h.state().view.drop_hover);
        assert_eq!(badge(h.state()), Some(Badge::Replay(PathBuf::from(SAE))));
        h.state().replay().unwrap().replay.wait();
        h.key_press(egui::Key::End);
        h.step();
        h.step();
        assert_eq!(h.state().drawn_state().status, ManagementState::Standby);
        h.state_mut().back_to_live();
        h.step();
        assert_eq!(badge(h.state()), Some(Badge::Simulated));
        assert!(h.state().replay().is_none());
        assert_eq!(h.state().drawn_state().positions, live_positions);
    }

    #[test]
    fn csv_export_writes_the_series_off_the_ui_thread_and_says_so() {
        let path = temp_path("stepping-export.mcap");
        record_in_memory(&path, 2.0);
        let csv = temp_path("export.csv");
        let _ = std::fs::remove_file(&csv);
        let mut h = harness(replay_app(&path));
        h.step();
        let (a, b) = span(h.state());
        h.state_mut()
            .file_chosen(Task::ExportCsv { t0: a, t1: b }, csv.clone());
        let notice = first_notice(&mut h);
        assert_eq!(notice.level, NoticeLevel::Info, "{}", notice.text);
        assert!(notice.text.contains("Exported"), "{}", notice.text);
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.lines().count() > 100, "{} lines", text.lines().count());
    }

    #[test]
    fn urdf_export_from_the_file_menu_writes_the_arm_shown() {
        let path = temp_path("urdf-export.mcap");
        record_in_memory(&path, 2.0);
        let urdf = temp_path("arm.urdf");
        let _ = std::fs::remove_file(&urdf);
        let mut h = harness(replay_app(&path));
        h.step();
        let (_, b) = span(h.state());
        h.state_mut().seek(b);
        h.step();
        h.get_by_label("File").click();
        h.step();
        h.step();
        assert!(
            h.query_by_label_contains("Export URDF").is_some(),
            "File → Export URDF… is offered"
        );
        h.state_mut().file_chosen(Task::ExportUrdf, urdf.clone());
        let notice = first_notice(&mut h);
        assert_eq!(notice.level, NoticeLevel::Info, "{}", notice.text);
        let text = std::fs::read_to_string(&urdf).unwrap();
        assert!(text.contains("<robot"), "{text}");
        let joints = ArmFile::demo().spec.joint_count();
        assert_eq!(
            text.matches("<joint ").count() - text.matches("type=\"fixed\"").count(),
            joints,
            "one moving joint per JAUS joint"
        );
    }

    #[test]
    fn help_lists_the_replay_and_recording_shortcuts() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        h.key_press(egui::Key::F1);
        h.step();
        h.step();
        for key in ["Ctrl+R", "Ctrl+O", "Home / End", "← / →"] {
            assert!(h.query_by_label(key).is_some(), "{key} not in the help");
        }
    }

    #[test]
    fn question_mark_opens_the_help_with_or_without_shift() {
        let mut h = harness(replay_app(Path::new(SAE)));
        h.step();
        for modifiers in [egui::Modifiers::NONE, egui::Modifiers::SHIFT] {
            assert!(!h.state().view.show_help);
            h.key_press_modifiers(modifiers, egui::Key::Questionmark);
            h.step();
            assert!(h.state().view.show_help, "? with {modifiers:?}");
            h.key_press(egui::Key::F1);
            h.step();
        }
        assert!(!h.state().view.show_help);
    }

    /// The simulator on loopback and a network side talking to it, as `jaus-ocu demo` runs.
    fn demo_app() -> OcuApp {
        let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let sim_addr = socket.local_addr().unwrap();
        let sim = host::spawn(
            Component::new(
                ArmFile::demo(),
                SimConfig {
                    tour: true,
                    seed: 1,
                    ..SimConfig::default()
                },
            ),
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
        OcuApp::new(
            LiveKind::Simulated,
            Some(net),
            vec![sim],
            Settings::default(),
        )
    }

    /// Steps (draining the network like eframe's `logic` does) until `done` or `secs` pass.
    fn run_until(h: &mut Harness<'_, OcuApp>, secs: f64, done: impl Fn(&OcuApp) -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < until {
            h.state_mut().drain(Duration::from_millis(10));
            h.step();
            if done(h.state()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn recording_from_the_ui_writes_a_file_that_replays() {
        let path = temp_path("ui-recording.mcap");
        let _ = std::fs::remove_file(&path);
        let mut h = harness(demo_app());
        assert!(
            run_until(&mut h, 10.0, |a| a.drawn_state().positions.is_some()),
            "the demo arm reports"
        );
        h.state_mut().start_recording(path.clone()).unwrap();
        assert!(
            run_until(&mut h, 10.0, |a| match &a.recording {
                Recording::Active(r) => r.stats.rx > 50,
                _ => false,
            }),
            "datagrams recorded"
        );
        let rec_button = || {
            egui_kittest::kittest::By::new()
                .role(egui::accesskit::Role::Button)
                .label_contains("REC ")
        };
        assert!(h.query(rec_button()).is_some(), "the button says REC");
        h.get(rec_button()).click();
        h.step();
        assert!(
            h.state().recording.is_stopping() || matches!(h.state().recording, Recording::Idle)
        );
        assert!(
            run_until(&mut h, 10.0, |a| matches!(a.recording, Recording::Idle)),
            "the stop finishes"
        );
        let notice = h.state().view.notices.last().expect("a notice").clone();
        assert_eq!(notice.level, NoticeLevel::Info, "{}", notice.text);
        assert!(notice.text.starts_with("Recorded"), "{}", notice.text);
        assert!(
            h.query_by_label("Record").is_some(),
            "the button is idle again"
        );
        let (session, progress) = Replay::load_blocking(&path, 3794).unwrap();
        assert!(progress.stopped.is_none(), "{progress:?}");
        assert!(progress.datagrams > 50, "{progress:?}");
        assert!(
            !session.focused().positions.is_empty(),
            "joint positions replay"
        );
    }

    #[test]
    fn over_a_replay_the_live_arm_can_still_be_stopped_with_e_but_not_space() {
        let (app, mut out): (OcuApp, Outbox) = live_app(&super::recorded(1.0, None));
        let mut h = harness(app);
        assert!(
            run_until(&mut h, 10.0, |a| a.drawn_state().positions.is_some()),
            "the demo arm reports"
        );
        h.state_mut()
            .open_replay(std::path::Path::new(SAE))
            .unwrap();
        h.step();
        assert!(h.state().shown().is_replay());
        assert!(matches!(h.state().shown(), Shown::ReplayOverLive { .. }));
        h.key_press(egui::Key::Space);
        h.step();
        assert!(
            !out.sent().contains(&Command::SetEmergencyOf(super::ARM)),
            "Space plays the replay"
        );
        h.key_press(egui::Key::E);
        h.step();
        assert_eq!(
            out.sent(),
            [Command::SetEmergencyOf(super::ARM)],
            "E stops the live arm underneath, and nothing else is sent"
        );
    }

    /// A sink that fails every write once told to (a disk filling up).
    struct Failing {
        inner: std::io::Cursor<Vec<u8>>,
        fail: Arc<AtomicBool>,
    }

    impl std::io::Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.fail.load(Ordering::Relaxed) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "no space left on device",
                ));
            }
            self.inner.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl std::io::Seek for Failing {
        fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    #[test]
    fn a_write_error_stops_recording_with_a_message_and_the_live_view_carries_on() {
        let mut h = harness(demo_app());
        assert!(run_until(&mut h, 10.0, |a| a
            .drawn_state()
            .positions
            .is_some()));
        let fail = Arc::new(AtomicBool::new(false));
        let cfg = h
            .state()
            .recorder_config(temp_path("never-written.mcap"))
            .expect("live");
        let recorder = Recorder::start_with_sink(
            cfg,
            Failing {
                inner: std::io::Cursor::new(Vec::new()),
                fail: fail.clone(),
            },
        )
        .unwrap();
        h.state_mut().attach_recorder(recorder).unwrap();
        h.step();
        assert!(h.state().recording.is_active());
        fail.store(true, Ordering::Relaxed);
        assert!(
            run_until(&mut h, 10.0, |a| matches!(a.recording, Recording::Idle)),
            "the error stops recording"
        );
        let notice = h.state().view.notices.last().expect("a notice").clone();
        assert_eq!(notice.level, NoticeLevel::Error);
        assert!(
            notice.text.contains("stopped") && notice.text.contains("live view carries on"),
            "{}",
            notice.text
        );
        assert!(
            !h.state().net().unwrap().tap().is_connected(),
            "tap disconnected"
        );
        let t = h.state().drawn_state().positions.as_ref().unwrap().t;
        assert!(
            run_until(&mut h, 5.0, |a| a
                .drawn_state()
                .positions
                .as_ref()
                .unwrap()
                .t
                > t + 0.2),
            "live positions keep arriving"
        );
        assert!(h.query_by_label("Record").is_some());
    }

    #[test]
    fn recording_needs_a_live_source() {
        let mut app = replay_app(Path::new(SAE));
        let err = app.start_recording(temp_path("x.mcap")).unwrap_err();
        assert!(err.contains("live or demo"), "{err}");
        assert!(matches!(app.recording, Recording::Idle));
    }
}

/// Issue 12: the window never misleads the operator. The top bar's live area is always the
/// live arm; the past is shown as the past; keys mean one thing; emergency and link loss are
/// unmistakable; the layout holds from 800×600 to 1920×1080.
mod trust {
    use std::path::Path;

    use eframe::egui;
    use egui_kittest::Harness;
    use egui_kittest::kittest::{By, NodeT, Queryable};
    use jaus_ocu::model::command::*;
    use jaus_ocu::model::update::*;
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::ui::action::Action;
    use jaus_ocu::ui::action::Confirm;
    use jaus_ocu::ui::app::OcuApp;
    use jaus_ocu::ui::screenshot::{Scenario, scenario_updates};
    use jaus_ocu::ui::time_control::Shown;

    use super::{Outbox, live_app, recorded};

    const SAE: &str = "tests/data/SAE_Management_PacketCapture.pcap";

    fn harness_sized(app: OcuApp, w: f32, h: f32) -> Harness<'static, OcuApp> {
        crate::ui_common::sized(app, [w, h])
    }

    fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
        harness_sized(app, 1280.0, 800.0)
    }

    fn last_t(updates: &[Update]) -> f64 {
        updates.last().map_or(0.0, Update::t)
    }

    fn status(t: f64, state: ManagementState) -> Update {
        Update::arm(crate::ARM, ArmFact::Status { t, state })
    }

    /// 3 s of the simulated arm with an emergency at 2.0–2.5 s, READY again after; the clock
    /// at the end.
    fn earlier_emergency() -> (OcuApp, Outbox, f64) {
        let mut updates = recorded(3.0, None);
        let end = last_t(&updates);
        updates.push(status(end + 0.1, ManagementState::Emergency));
        updates.push(status(end + 0.6, ManagementState::Ready));
        let (mut app, out) = live_app(&updates);
        app.freeze_clock(end + 1.0);
        (app, out, end + 0.3)
    }

    fn sent_clear(out: &mut Outbox) -> bool {
        out.sent().contains(&Command::ClearEmergency)
    }

    #[test]
    fn scrubbed_back_over_an_earlier_emergency_the_bar_shows_the_live_arm_and_clear_sends_nothing()
    {
        let (app, mut out, during) = earlier_emergency();
        let mut h = harness(app);
        h.step();
        h.state_mut().seek(during);
        h.step();
        h.step();
        assert!(matches!(h.state().shown(), Shown::LiveScrubbed { .. }));
        assert_eq!(
            h.state().drawn_state().status,
            ManagementState::Emergency,
            "drawn: the past"
        );
        // The live area shows the live arm (READY) and offers no Clear; the past area says
        // EMERGENCY as text, with its time.
        assert!(h.query_by_label_contains("Clear emergency 1").is_none());
        assert!(h.query_by_label("READY").is_some(), "the live arm's state");
        assert!(h.query_by_label("EMERGENCY").is_some(), "the past's state");
        assert!(h.query_by_label("SHOWING THE PAST").is_some());
        assert!(
            h.query(By::new().label_contains("at −")).is_some(),
            "the past says when it is"
        );
        // Neither the command nor a forced confirmation sends a ClearEmergency.
        h.state_mut()
            .run(jaus_ocu::ui::commands::UiCommand::ClearEmergency);
        assert_eq!(h.state().view.confirm, None);
        h.state_mut().view.confirm = Some(Confirm::ClearEmergency);
        h.state_mut().perform(Action::Answer(true));
        h.step();
        assert!(!sent_clear(&mut out), "{:?}", out.sent());
    }

    #[test]
    fn with_the_live_arm_in_emergency_clear_is_offered_from_the_live_state_even_scrubbed_back() {
        let mut updates = recorded(3.0, None);
        let end = last_t(&updates);
        updates.push(status(end + 0.1, ManagementState::Emergency));
        let (mut app, mut out) = live_app(&updates);
        app.freeze_clock(end + 0.5);
        let mut h = harness(app);
        h.step();
        // Back before the emergency: the drawn arm was READY, the live one is not.
        h.state_mut().seek(end - 1.0);
        h.step();
        h.step();
        assert_eq!(h.state().drawn_state().status, ManagementState::Ready);
        assert!(h.query_by_label("EMERGENCY").is_some(), "the live state");
        assert!(
            h.query(By::new().label_contains("EMERGENCY STOP — the live arm 126.1.10 is stopped"))
                .is_some(),
            "the banner"
        );
        h.get_by_label_contains("Clear emergency 1").click();
        // The confirmation window appears on the next frames; it names the live arm.
        h.step();
        h.step();
        assert!(
            h.query(By::new().label_contains("emergency stop of the live arm 126.1.10"))
                .is_some()
        );
        h.get_by_label("Confirm").click();
        h.step();
        assert_eq!(out.sent(), [Command::ClearEmergency]);
        // The past is drawn, so the live outcome is told where the operator looks.
        h.state_mut().apply(&Update::net(Remark::CommandOutcome {
            t: end + 0.4,
            command: CommandKind::ClearEmergency,
            outcome: Outcome::Confirmed,
        }));
        h.step();
        assert!(
            h.query_by_label("live arm 126.1.10: ClearEmergency confirmed")
                .is_some(),
            "{:?}",
            h.state().view.notices
        );
    }

    #[test]
    fn over_a_replay_clear_is_for_the_live_arm_not_the_file_and_l_goes_back_to_live() {
        let (app, mut out, _) = earlier_emergency();
        let mut h = harness(app);
        h.step();
        h.state_mut().open_replay(Path::new(SAE)).unwrap();
        h.step();
        assert!(matches!(h.state().shown(), Shown::ReplayOverLive { .. }));
        h.state_mut().view.confirm = Some(Confirm::ClearEmergency);
        h.state_mut().perform(Action::Answer(true));
        h.state_mut()
            .run(jaus_ocu::ui::commands::UiCommand::ClearEmergency);
        h.step();
        assert!(!sent_clear(&mut out));
        // The live arm's area is there, showing the live arm.
        assert!(h.query_by_label("LIVE ARM").is_some());
        assert!(h.query_by_label("SHOWING A RECORDING").is_some());
        // L says "back to live" and does it.
        h.key_press(egui::Key::L);
        h.step();
        h.step();
        assert_eq!(h.state().shown(), Shown::Live);
        assert!(h.state().replay().is_none());
    }

    #[test]
    fn space_never_sends_an_emergency_stop_live_scrubbed_or_over_a_replay() {
        let (app, mut out, during) = earlier_emergency();
        let mut h = harness(app);
        h.step();
        h.key_press(egui::Key::Space);
        h.step();
        h.state_mut().seek(during);
        h.step();
        h.key_press(egui::Key::Space);
        h.step();
        h.state_mut().open_replay(Path::new(SAE)).unwrap();
        h.step();
        h.key_press(egui::Key::Space);
        h.step();
        assert!(
            !out.sent().contains(&Command::SetEmergencyOf(super::ARM)),
            "{:?}",
            out.sent()
        );
        // E is the emergency stop, over the replay too.
        h.key_press(egui::Key::E);
        h.step();
        assert_eq!(out.sent(), [Command::SetEmergencyOf(super::ARM)]);
    }

    #[test]
    fn standby_disables_go_to_with_the_step_to_take() {
        let mut updates = recorded(3.0, None);
        let end = last_t(&updates);
        updates.push(Update::arm(
            crate::ARM,
            ArmFact::Control {
                t: end,
                state: ControlState::Held { authority: 100 },
            },
        ));
        updates.push(status(end + 0.1, ManagementState::Standby));
        let (app, mut out) = live_app(&updates);
        let mut h = harness(app);
        h.step();
        let first = h.state().drawn_state().presets[0].id;
        h.state_mut().perform(Action::Preview(Some(first)));
        h.step();
        assert!(
            h.query(By::new().label_contains(
                "Go to is disabled: the arm is in STANDBY. Resume first (Shift+R)"
            ))
            .is_some(),
            "Go to says why it is disabled and what to do"
        );
        assert!(
            h.query(By::new().label_contains("make sure the path is clear"))
                .is_none()
        );
        assert!(out.sent().is_empty(), "{:?}", out.sent());
        // Back to READY: offered again.
        h.state_mut()
            .apply(&status(end + 0.2, ManagementState::Ready));
        h.step();
        assert!(
            h.query(By::new().label_contains("Go to is disabled"))
                .is_none()
        );
    }

    #[test]
    fn an_emergency_is_a_banner_and_disables_go_to_with_the_reason() {
        let mut updates = recorded(3.0, None);
        let end = last_t(&updates);
        updates.push(Update::arm(
            crate::ARM,
            ArmFact::Control {
                t: end,
                state: ControlState::Held { authority: 100 },
            },
        ));
        updates.push(status(end + 0.1, ManagementState::Emergency));
        let (app, _out) = live_app(&updates);
        let mut h = harness(app);
        h.step();
        assert!(
            h.query(By::new().label_contains("EMERGENCY STOP"))
                .is_some(),
            "the banner"
        );
        let first = h.state().drawn_state().presets[0].id;
        h.state_mut().perform(Action::Preview(Some(first)));
        h.step();
        assert!(
            h.query(By::new().label_contains("Go to is disabled: the arm is in EMERGENCY"))
                .is_some(),
            "Go to says why it is disabled"
        );
        // A refusal given as a code is said in words, from the state now.
        h.state_mut().apply(&Update::net(Remark::CommandOutcome {
            t: end + 0.2,
            command: CommandKind::GoToPreset,
            outcome: Outcome::Failed("TRANSITION_FAILED".into()),
        }));
        h.step();
        assert!(
            h.query(By::new().label_contains("GoToPreset: failed: the arm is in EMERGENCY"))
                .is_some(),
            "the status bar says why in words"
        );
        assert!(
            h.query(By::new().label_contains("TRANSITION_FAILED"))
                .is_none()
        );
    }

    #[test]
    fn a_lost_link_says_unknown_last_known_and_zero_rates() {
        let updates = scenario_updates(ArmFile::demo(), 8.0, Scenario::Lost);
        let (mut app, _out) = live_app(&updates);
        app.freeze_clock(last_t(&updates));
        let mut h = harness(app);
        h.step();
        assert!(
            h.state().drawn_state().freshness().is_lost(),
            "{:?}",
            h.state().drawn_state().link
        );
        assert!(h.query_by_label("LINK LOST").is_some());
        assert!(h.query_by_label("READY").is_none(), "no READY while lost");
        assert!(
            h.query(By::new().label_contains("state unknown")).is_some(),
            "the state is unknown"
        );
        assert!(
            h.query(By::new().label_contains("last known at")).is_some(),
            "the gauges say the values are the last known"
        );
        assert!(
            h.query(By::new().label_contains("positions 0 Hz"))
                .is_some(),
            "the rates say 0"
        );
        h.get_by_label("arm").click();
        h.step();
        h.step();
        assert!(
            h.query(By::new().label_contains("— LINK LOST · state unknown"))
                .is_some(),
            "the arm list marks the arm lost"
        );
    }

    #[test]
    fn presets_say_loading_until_the_arm_answers() {
        let updates = recorded(3.0, None);
        let cut = updates
            .iter()
            .position(|u| {
                matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::Presets { .. },
                        ..
                    }
                )
            })
            .expect("presets reported");
        let mut h = harness(live_app(&updates[..cut]).0);
        h.step();
        assert!(
            h.query_by_label("Loading the arm's preset poses…")
                .is_some()
        );
        assert!(
            h.query(By::new().label_contains("reports no preset poses"))
                .is_none()
        );
    }

    #[test]
    fn a_replay_on_its_own_has_no_live_arm() {
        let replay = jaus_ocu::record::player::Replay::open(Path::new(SAE), 3794, None).unwrap();
        replay.wait();
        let app = OcuApp::with_replay(replay, jaus_ocu::ui::settings::Settings::default());
        let mut h = harness(app);
        h.step();
        assert!(h.query_by_label("no live arm").is_some());
        assert!(
            h.query_by_label("link live").is_none(),
            "no 'live' in a replay"
        );
        assert!(h.query_by_label("LIVE ARM").is_none());
    }

    /// Rects of the interactive widgets on screen.
    fn interactive(h: &Harness<'_, OcuApp>) -> Vec<(String, egui::Rect)> {
        use egui::accesskit::Role;
        let mut out = Vec::new();
        for role in [Role::Button, Role::ComboBox, Role::CheckBox] {
            for n in h.query_all(By::new().role(role)) {
                let label = n.accesskit_node().label().unwrap_or_default();
                out.push((label, n.rect()));
            }
        }
        out
    }

    fn check_layout(w: f32, hgt: f32) {
        let mut updates = recorded(3.0, None);
        let end = last_t(&updates);
        updates.push(Update::arm(
            crate::ARM,
            ArmFact::Control {
                t: end,
                state: ControlState::Held { authority: 100 },
            },
        ));
        updates.push(status(end, ManagementState::Standby));
        let (app, _out) = live_app(&updates);
        let mut h = harness_sized(app, w, hgt);
        h.step();
        h.step();
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(w, hgt));
        let widgets = interactive(&h);
        for name in [
            "E-STOP",
            "Record",
            "Release",
            "Resume…",
            "File",
            "View",
            "Keyboard shortcuts",
        ] {
            let (_, r) = widgets
                .iter()
                // Buttons name the arm: `E-STOP 126.1.10`, `Resume 126.1.10…`.
                .find(|(l, _)| {
                    l == name || l.starts_with(&format!("{} ", name.trim_end_matches('…')))
                })
                .unwrap_or_else(|| panic!("{name} not on screen at {w}x{hgt}: {widgets:?}"));
            assert!(
                screen.contains_rect(*r),
                "{name} at {r:?} is outside {w}x{hgt}: {widgets:?}"
            );
        }
        for (i, (a, ra)) in widgets.iter().enumerate() {
            for (b, rb) in &widgets[i + 1..] {
                // A tile's tab holds its close button.
                let nested = |x: &str, rx: &egui::Rect, ry: &egui::Rect| {
                    x == "Close" && ry.contains_rect(*rx)
                };
                if nested(a, ra, rb) || nested(b, rb, ra) {
                    continue;
                }
                let overlap = ra.intersect(*rb);
                assert!(
                    !(overlap.width() > 1.0 && overlap.height() > 1.0),
                    "{a} {ra:?} overlaps {b} {rb:?} at {w}x{hgt}"
                );
            }
        }
    }

    #[test]
    fn the_layout_holds_at_800x600() {
        check_layout(800.0, 600.0);
    }

    #[test]
    fn the_layout_holds_at_1920x1080() {
        check_layout(1920.0, 1080.0);
    }

    #[test]
    fn record_does_not_move_when_the_live_state_changes() {
        let updates = recorded(3.0, None);
        let end = last_t(&updates);
        let (app, _out) = live_app(&updates);
        let mut h = harness(app);
        h.step();
        let record = |h: &Harness<'_, OcuApp>| h.get_by_label("Record").rect();
        let before = record(&h);
        for u in [
            Update::arm(
                crate::ARM,
                ArmFact::Control {
                    t: end,
                    state: ControlState::Held { authority: 100 },
                },
            ),
            status(end, ManagementState::Standby),
            status(end, ManagementState::Emergency),
            status(end, ManagementState::Ready),
            Update::arm(
                crate::ARM,
                ArmFact::Control {
                    t: end,
                    state: ControlState::Requested,
                },
            ),
        ] {
            h.state_mut().apply(&u);
            h.step();
            h.step();
            assert_eq!(record(&h), before, "after {u:?}");
        }
    }
}

#[test]
fn the_status_bar_shows_kernel_drops_and_tolerated_deviations_only_when_there_are_some() {
    let mut updates = recorded(1.0, None);
    let stats = NetStats {
        datagrams: 100,
        kernel_dropped: Some(0),
        ..NetStats::default()
    };
    updates.push(Update::net(NetFact::Stats {
        t: 1.0,
        stats: Box::new(stats),
    }));
    let mut h = harness(app_with(&updates));
    h.step();
    assert!(h.query_by_label_contains("kernel dropped").is_none());
    assert!(h.query_by_label_contains("tolerated").is_none());

    let stats = NetStats {
        datagrams: 200,
        kernel_dropped: Some(7),
        tolerated: Tolerated {
            ack_payload: 2,
            ..Tolerated::default()
        },
        ..NetStats::default()
    };
    h.state_mut().apply(&Update::net(NetFact::Stats {
        t: 1.5,
        stats: Box::new(stats),
    }));
    h.step();
    h.get_by_label("kernel dropped 7");
    h.get_by_label("tolerated 2");
}

/// Issue 18: many OCUs, one arm. The app on the real client and simulator in memory (what
/// the app sends reaches the client, what the client publishes reaches the app): control as
/// the arm reports it, a second OCU taking it, reset is not restart, one rule for the past,
/// a duplicate JAUS ID.
mod many_ocus {
    use std::net::SocketAddr;
    use std::path::Path;

    use eframe::egui;
    use egui_kittest::Harness;
    use egui_kittest::kittest::{By, NodeT, Queryable};
    use jaus_ocu::jaus::JausId;
    use jaus_ocu::jaus::core::RequestControl;
    use jaus_ocu::model::command::*;
    use jaus_ocu::model::update::*;
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::sim::harness::SimNet;
    use jaus_ocu::ui::app::OcuApp;
    use jaus_ocu::ui::commands::UiCommand;
    use jaus_ocu::ui::time_control::Shown;

    use super::{Outbox, live_app, recorded};

    const SAE: &str = "tests/data/SAE_Management_PacketCapture.pcap";
    const OTHER: SocketAddr =
        SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 6000);
    const OTHER_ID: JausId = JausId::new(200, 7, 3);

    /// The app wired to an in-memory client and simulator.
    struct Wired {
        net: SimNet,
        h: Harness<'static, OcuApp>,
        out: Outbox,
        /// Commands of the outbox already handed to the client.
        forwarded: usize,
        /// Updates of the client already applied to the app.
        fed: usize,
    }

    impl Wired {
        /// `seconds` of the session, then the app fed what the client published.
        fn new(seconds: f64) -> Self {
            let mut net = crate::ui_common::sim_net(ArmFile::demo(), 1);
            net.run_with(seconds, &mut |_| {});
            let (mut app, out) = live_app(&net.updates);
            app.freeze_clock(net.now());
            let fed = net.updates.len();
            let mut h = crate::ui_common::sized(app, [1280.0, 800.0]);
            h.step();
            Self {
                net,
                h,
                out,
                forwarded: 0,
                fed,
            }
        }

        /// Hands the app's new commands to the client, runs the session 50 ms, feeds the app
        /// what the client published and draws a frame.
        fn pump(&mut self) {
            let sent = self.out.sent().to_vec();
            for cmd in &sent[self.forwarded..] {
                self.net.command(cmd.clone());
            }
            self.forwarded = sent.len();
            self.net.run_with(0.05, &mut |_| {});
            let app = self.h.state_mut();
            for u in &self.net.updates[self.fed..] {
                app.apply(u);
            }
            self.fed = self.net.updates.len();
            app.freeze_clock(self.net.now());
            self.h.step();
        }

        /// Pumps until `done` holds for the app (at most `secs` of simulated time).
        fn pump_until(&mut self, secs: f64, done: impl Fn(&OcuApp) -> bool) -> bool {
            let until = self.net.now() + secs;
            while self.net.now() < until {
                self.pump();
                if done(self.h.state()) {
                    return true;
                }
            }
            false
        }

        /// The second OCU asks the arm for control with `authority`.
        fn other_requests(&mut self, authority: u8) {
            let m = RequestControl {
                authority_code: authority,
            }
            .into();
            let bytes = self.net.datagram_to_peer(0, OTHER_ID, 77, &m);
            self.net.inject_to_peer(0, OTHER, &bytes);
        }

        /// Whether `text` is on screen (in one place or more: the jog strip repeats who
        /// holds control).
        fn has(&self, text: &str) -> bool {
            self.h
                .query_all(By::new().label_contains(text))
                .next()
                .is_some()
        }

        /// Draws frames until `text` is on screen (a window appears a frame or two after it
        /// is asked for; 10 frames at most).
        fn shows(&mut self, text: &str) -> bool {
            for _ in 0..10 {
                if self.has(text) {
                    return true;
                }
                self.h.step();
            }
            false
        }
    }

    fn held(a: &OcuApp) -> bool {
        matches!(a.drawn_state().control, ControlState::Held { .. })
    }

    #[test]
    fn a_second_ocu_with_a_higher_authority_takes_control_and_the_live_area_says_who_and_why() {
        let mut w = Wired::new(2.0);
        w.h.get_by_label_contains("Request control").click();
        assert!(w.pump_until(3.0, held), "control granted");
        assert!(w.has("control held (authority 100)"));
        // A second OCU, 200.7.3, asks with authority 200: the arm passes control to it.
        w.other_requests(200);
        assert!(
            w.pump_until(3.0, |a| a.drawn_state().control_loss.is_some()
                && a.drawn_state().other_controller().is_some()),
            "the loss and the new holder reported"
        );
        assert!(w.has("held by 200.7.3 (authority 200)"), "who holds it");
        assert!(
            w.has("no control — taken by 200.7.3 (authority 200)"),
            "why ours was lost"
        );
        // Asking again with our authority (100) is refused, and a notice says by whom.
        w.h.get_by_label_contains("Request control").click();
        assert!(
            w.pump_until(3.0, |a| a
                .view
                .notices
                .iter()
                .any(|n| n.text.contains("RequestControl refused"))),
            "{:?}",
            w.h.state().view.notices
        );
        let notice = w.h.state().view.notices.last().unwrap().text.clone();
        assert!(
            notice.starts_with("live arm 126.1.10: RequestControl refused")
                && notice.contains("200.7.3 (authority 200)")
                && notice.contains("ours is 100"),
            "{notice}"
        );
        assert!(
            w.has("no control — taken by"),
            "still said until held again"
        );
    }

    #[test]
    fn clearing_an_emergency_never_resumes_resume_is_its_own_confirmed_step() {
        let mut w = Wired::new(2.0);
        w.h.get_by_label_contains("Request control").click();
        assert!(w.pump_until(3.0, held));
        w.h.get_by_label_contains("E-STOP").click();
        assert!(w.pump_until(3.0, |a| a.drawn_state().status
            == ManagementState::Emergency));
        // The banner names the arm and says the two steps.
        assert!(w.has("EMERGENCY STOP — the live arm 126.1.10 is stopped."));
        assert!(w.has(
            "1. Clear emergency… (Shift+C; asks for confirmation): the arm goes to STANDBY and stays stopped."
        ));
        assert!(w.has("2. Resume… (Shift+R) when it is safe: the arm accepts motion again."));
        w.h.get_by_label_contains("Clear emergency 1").click();
        assert!(w.shows("Clear the emergency stop of the live arm 126.1.10?"));
        w.h.get_by_label("Confirm").click();
        assert!(w.pump_until(3.0, |a| a.drawn_state().status == ManagementState::Standby));
        let sent = w.out.sent().to_vec();
        assert!(sent.contains(&Command::ClearEmergency), "{sent:?}");
        assert!(
            !sent.contains(&Command::Resume),
            "clearing resumed: {sent:?}"
        );
        // Still STANDBY a while later: nothing resumed it.
        w.pump_until(1.0, |_| false);
        assert_eq!(w.h.state().drawn_state().status, ManagementState::Standby);
        // The top bar offers Resume…; its key asks first, and only Confirm sends it.
        assert!(w.h.query_by_label_contains("Resume 1").is_some());
        w.h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::R);
        assert!(w.shows("Resume the live arm 126.1.10?"));
        assert!(w.has("accepts motion commands again"));
        assert!(
            !w.out.sent().contains(&Command::Resume),
            "not before Confirm"
        );
        w.h.get_by_label("Confirm").click();
        assert!(w.pump_until(3.0, |a| a.drawn_state().status == ManagementState::Ready));
        assert_eq!(
            w.out
                .sent()
                .iter()
                .filter(|c| **c == Command::Resume)
                .count(),
            1
        );
    }

    /// Whether the button `label` is on screen and enabled.
    fn enabled(h: &Harness<'_, OcuApp>, label: &str) -> Option<bool> {
        // Buttons name the arm they act on (`E-STOP 126.1.10`).
        h.query(
            By::new()
                .role(egui::accesskit::Role::Button)
                .label_contains(label),
        )
        .map(|n| !n.accesskit_node().is_disabled())
    }

    #[test]
    fn live_buttons_and_keys_act_on_the_live_arm_alike_scrubbed_back_and_over_a_replay() {
        let mut updates = recorded(3.0, None);
        let end = updates.last().map_or(0.0, Update::t);
        updates.push(Update::arm(
            crate::ARM,
            ArmFact::Status {
                t: end,
                state: ManagementState::Emergency,
            },
        ));
        let (mut app, mut out) = live_app(&updates);
        app.freeze_clock(end + 0.5);
        let mut h = crate::ui_common::sized(app, [1280.0, 800.0]);
        h.step();
        let live_commands: Vec<UiCommand> = UiCommand::ALL
            .into_iter()
            .filter(|c| c.arm_command().is_some())
            .collect();
        let mut seen = Vec::new();
        for mode in ["live", "scrubbed", "replay over live"] {
            match mode {
                "scrubbed" => h.state_mut().seek(end - 1.0),
                "replay over live" => h.state_mut().open_replay(Path::new(SAE)).unwrap(),
                _ => {}
            }
            h.step();
            h.step();
            let shown = h.state().shown();
            assert_eq!(shown.name().contains("replay"), mode.contains("replay"));
            // The same availability of every live command, the same buttons enabled.
            let available: Vec<bool> = live_commands.iter().map(|c| c.available(shown)).collect();
            let buttons: Vec<Option<bool>> = ["E-STOP", "Request control", "Clear emergency"]
                .iter()
                .map(|b| enabled(&h, b))
                .collect();
            seen.push((mode, available, buttons));
            // C asks for control of the live arm, E stops it, whatever is drawn.
            // (Taken after each key: an emergency stop overtakes what waits in the queue.)
            let before = out.sent().len();
            h.key_press(egui::Key::C);
            h.step();
            out.sent();
            h.key_press(egui::Key::E);
            h.step();
            assert_eq!(
                out.sent()[before..],
                [
                    Command::RequestControl { authority: 100 },
                    Command::SetEmergencyOf(super::ARM)
                ],
                "{mode}"
            );
        }
        for (mode, available, buttons) in &seen[1..] {
            assert_eq!(*available, seen[0].1, "{mode}");
            assert_eq!(*buttons, seen[0].2, "{mode}");
        }
        assert_eq!(seen[0].2, [Some(true), Some(true), Some(true)]);
        // Only a replay with no live source underneath disables them.
        for cmd in live_commands {
            assert!(!cmd.available(Shown::Replay { t: 0.0 }), "{cmd:?}");
        }
    }

    #[test]
    fn going_to_a_preset_is_refused_while_the_past_is_shown_with_a_notice() {
        let mut updates = recorded(3.0, None);
        let end = updates.last().map_or(0.0, Update::t);
        updates.push(Update::arm(
            crate::ARM,
            ArmFact::Control {
                t: end,
                state: ControlState::Held { authority: 100 },
            },
        ));
        let (mut app, mut out) = live_app(&updates);
        app.freeze_clock(end + 0.5);
        let mut h = crate::ui_common::sized(app, [1280.0, 800.0]);
        h.step();
        let goal = ArmFile::demo().presets[1].clone();
        h.get_by_label_contains(&goal.name).click();
        h.step();
        h.get_by_label_contains("Go to").click();
        h.step();
        h.step();
        assert!(
            h.query(By::new().label_contains("Move the live arm 126.1.10 to"))
                .is_some()
        );
        // Scrubbed back with the question open: it is dropped, saying why.
        h.state_mut().seek(end - 1.0);
        h.step();
        h.step();
        assert_eq!(h.state().view.confirm, None);
        let why = "Back to live (L) to command a preset: the preset picker shows the past";
        let notice = &h.state().view.notices.last().expect("a notice").text;
        assert_eq!(*notice, format!("Go to preset: cancelled. {why}"));
        assert!(
            h.query_all(By::new().label_contains(why)).count() == 2,
            "the notice and the picker say why"
        );
        assert!(
            h.query(
                By::new()
                    .role(egui::accesskit::Role::Button)
                    .label_contains("Go to")
            )
            .is_none(),
            "no Go to button under a picture of the past"
        );
        assert!(
            !h.state_mut()
                .command(Command::GoToPreset { pose_id: goal.id }),
            "refused at the door too"
        );
        assert!(
            out.sent()
                .iter()
                .all(|c| !matches!(c, Command::GoToPreset { .. }))
        );
    }

    #[test]
    fn another_ocu_with_our_jaus_id_disables_the_commands_and_says_so() {
        let updates = recorded(2.0, None);
        let end = updates.last().map_or(0.0, Update::t);
        let (mut app, mut out) = live_app(&updates);
        app.freeze_clock(end);
        let mut h = crate::ui_common::sized(app, [1280.0, 800.0]);
        h.step();
        assert!(h.query_by_label("OCU 200.1.1").is_some(), "our ID, always");
        assert_eq!(enabled(&h, "Request control"), Some(true));
        h.state_mut().apply(&Update::net(NetFact::Identity {
            t: end,
            id: ComponentId::new(200, 1, 1),
            conflict: Some(IdConflict {
                address: Some("10.0.0.5:41234".parse().unwrap()),
                evidence: "a datagram from 200.1.1 that we did not send".into(),
            }),
            suspect: None,
        }));
        h.step();
        assert!(
            h.query(By::new().label_contains(
                "ANOTHER OCU USES THIS OCU'S JAUS ID 200.1.1 (seen at 10.0.0.5:41234)"
            ))
            .is_some(),
            "the banner"
        );
        assert!(
            h.query(By::new().label_contains("Commands are refused until it is resolved"))
                .is_some()
        );
        assert!(h.query_by_label("OCU 200.1.1").is_some());
        assert_eq!(enabled(&h, "Request control"), Some(false));
        assert_eq!(enabled(&h, "E-STOP"), Some(true), "the stop still works");
        h.key_press(egui::Key::C);
        h.step();
        assert!(out.sent().is_empty(), "{:?}", out.sent());
        assert!(
            h.state().view.notices.iter().any(|n| n
                .text
                .contains("another OCU uses this OCU's JAUS ID 200.1.1")),
            "{:?}",
            h.state().view.notices
        );
        h.key_press(egui::Key::E);
        h.step();
        assert_eq!(out.sent(), [Command::SetEmergencyOf(super::ARM)]);
        // Resolved: the banner goes, the buttons come back.
        // Only a stranger's datagram with our ID (the arm confirms nothing): said, nothing
        // refused.
        h.state_mut().apply(&Update::net(NetFact::Identity {
            t: end + 1.0,
            id: ComponentId::new(200, 1, 1),
            conflict: None,
            suspect: Some(IdConflict {
                address: Some("10.0.0.5:41234".parse().unwrap()),
                evidence: "a datagram from 10.0.0.5:41234 carried our ID".into(),
            }),
        }));
        h.step();
        assert!(h.query(By::new().label_contains("ANOTHER OCU")).is_none());
        assert!(
            h.query(By::new().label_contains("Datagrams with this OCU's JAUS ID"))
                .is_some()
        );
        assert_eq!(enabled(&h, "Request control"), Some(true));
    }
}

// ---------------------------------------------------------------------------------------
// The whole vehicle (issue 19): two arms fed as the network side publishes them, each fact
// about one arm wrapped in `Update::Arm`.

mod vehicle_flows {
    use eframe::egui;
    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};
    use jaus_ocu::model::command::*;
    use jaus_ocu::model::update::*;
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::sim::vehicle::vehicle_updates;
    use jaus_ocu::ui::app::OcuApp;

    use super::{Outbox, harness, live_app};

    /// The two arms of the demo vehicle, 126.1.10 and 126.1.11.
    fn ids() -> (ComponentId, ComponentId) {
        (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11))
    }

    /// `seconds` of the two-arm demo vehicle, fed as the network side publishes it.
    fn two_arms(seconds: f64) -> Vec<Update> {
        vehicle_updates(&ArmFile::demo(), 2, seconds)
    }

    fn last_t(updates: &[Update]) -> f64 {
        updates.iter().map(Update::t).fold(0.0, f64::max)
    }

    /// The vehicle's app after `extra` facts, one frame drawn.
    fn vehicle(extra: &[Update]) -> (Harness<'static, OcuApp>, Outbox, f64) {
        let mut updates = two_arms(1.0);
        let end = last_t(&updates);
        updates.extend_from_slice(extra);
        let (app, out) = live_app(&updates);
        let mut h = harness(app);
        h.step();
        h.step();
        (h, out, end)
    }

    /// The label of `id`'s row in the arm list shown (`126.1.11 … — live · READY · free`).
    fn row(h: &Harness<'_, OcuApp>, id: ComponentId) -> String {
        let id = id.to_string();
        h.query_all_by_label_contains(&id)
            .filter_map(|n| n.accesskit_node().label())
            .find(|l| l.contains(" — "))
            .unwrap_or_else(|| panic!("no row of {id} in the arm list"))
    }

    /// Clicks `id`'s row in the arm list shown.
    fn pick(h: &mut Harness<'_, OcuApp>, id: ComponentId) {
        let id = id.to_string();
        h.query_all_by_label_contains(&id)
            .find(|n| {
                n.accesskit_node()
                    .label()
                    .is_some_and(|l| l.contains(" — "))
            })
            .unwrap_or_else(|| panic!("no row of {id} in the arm list"))
            .click();
        h.step();
    }

    /// Opens the live area's arm list.
    fn open_list(h: &mut Harness<'_, OcuApp>) {
        h.get_by_label("arm").click();
        h.step();
        h.step();
    }

    /// The network side focuses `id` (what it says after `Command::Select`).
    fn network_focuses(h: &mut Harness<'_, OcuApp>, id: ComponentId, t: f64) {
        h.state_mut()
            .apply(&Update::net(NetFact::Selected { t, id }));
        h.step();
        h.step();
    }

    #[test]
    fn both_arms_are_drawn_at_their_mounts_the_focused_one_first() {
        let (a, b) = ids();
        let (h, _, _) = vehicle(&[]);
        assert_eq!(h.state().view.arm.drawn_arms(), [a, b]);
        // Each at its own mount: their bases 0.8 m apart across the vehicle (to the
        // millimetre the specification's scaled integers carry).
        let session = h.state().vehicle().read().unwrap();
        let mount = |id| {
            session
                .arm(id)
                .unwrap()
                .latest
                .spec
                .as_ref()
                .unwrap()
                .mount
                .unwrap()
                .position
        };
        assert!((mount(b)[1] - mount(a)[1] - 0.8).abs() < 1e-3);
    }

    #[test]
    fn the_arm_list_says_each_arms_link_state_and_controller() {
        let (_, b) = ids();
        let other = ComponentId::new(200, 7, 3);
        let t = 1.0;
        let (mut h, _, _) = vehicle(&[
            Update::arm(
                b,
                ArmFact::Status {
                    t,
                    state: ManagementState::Emergency,
                },
            ),
            Update::arm(
                b,
                ArmFact::Controller {
                    t,
                    controller: Controller {
                        id: Some(other),
                        authority: 200,
                    },
                },
            ),
        ]);
        open_list(&mut h);
        let a_row = row(&h, ids().0);
        let b_row = row(&h, b);
        assert!(a_row.contains("— live · "), "{a_row}");
        assert!(
            !a_row.contains("EMERGENCY") && !a_row.contains("200.7.3"),
            "{a_row}"
        );
        assert!(
            b_row.contains("EMERGENCY · held by 200.7.3 (authority 200)"),
            "{b_row}"
        );
        // The focused arm's own slots are not the other arm's.
        assert!(h.query_by_label("EMERGENCY").is_none());
    }

    #[test]
    fn focusing_another_arm_sends_select_and_the_view_follows_the_network() {
        let (a, b) = ids();
        let (mut h, mut out, end) = vehicle(&[]);
        assert_eq!(h.state().focus(), Some(a));
        assert!(h.query_by_label("E-STOP 126.1.10").is_some());
        open_list(&mut h);
        pick(&mut h, b);
        assert_eq!(out.sent(), [Command::Select(b)]);
        // Nothing changes until the network says so.
        assert_eq!(h.state().focus(), Some(a));
        network_focuses(&mut h, b, end);
        assert_eq!(h.state().focus(), Some(b));
        // The gauges, presets and 3D view now draw b's own state.
        let b_latest = {
            let s = h.state().vehicle().read().unwrap();
            s.arm(b).unwrap().latest.positions.clone().unwrap()
        };
        let drawn = h.state().drawn_state().positions.clone().unwrap();
        assert_eq!(drawn.value, b_latest.value);
        assert_eq!(h.state().drawn_state().selected, Some(b));
        assert_eq!(h.state().view.arm.drawn_arms(), [b, a]);
        assert!(h.query_by_label("E-STOP 126.1.11").is_some());
        // Another arm's facts do not reach the drawn state.
        h.state_mut().apply(&Update::arm(
            a,
            ArmFact::Status {
                t: end + 0.1,
                state: ManagementState::Emergency,
            },
        ));
        h.step();
        assert_ne!(h.state().drawn_state().status, ManagementState::Emergency);
    }

    #[test]
    fn commands_go_only_to_the_focused_arm() {
        let (_, b) = ids();
        let (mut h, mut out, end) = vehicle(&[]);
        open_list(&mut h);
        pick(&mut h, b);
        assert_eq!(out.sent(), [Command::Select(b)]);
        network_focuses(&mut h, b, end);
        h.get_by_label("E-STOP 126.1.11").click();
        h.step();
        assert_eq!(out.sent(), [Command::Select(b), Command::SetEmergencyOf(b)]);
    }

    #[test]
    fn a_confirmation_opened_on_one_arm_sends_nothing_after_focusing_another() {
        let (a, b) = ids();
        let held = |id| {
            Update::arm(
                id,
                ArmFact::Control {
                    t: 1.0,
                    state: ControlState::Held { authority: 100 },
                },
            )
        };
        let (mut h, mut out, end) = vehicle(&[held(a), held(b)]);
        let goal = ArmFile::demo().presets[3].clone();
        h.get_by_label_contains(&goal.name).click();
        h.step();
        h.get_by_label_contains("Go to").click();
        h.step();
        h.step();
        assert!(
            h.query_by_label("Confirm").is_some(),
            "the question is open"
        );
        assert_eq!(h.state().view.confirm_arm, Some(a));
        // Focus moves to b (which would accept the move too) while the question is open.
        network_focuses(&mut h, b, end);
        if let Some(confirm) = h.query_by_label("Confirm") {
            confirm.click();
            h.step();
        }
        assert!(!out.sent_a_preset_move(), "{:?}", out.sent());
    }

    #[test]
    fn stop_all_reaches_every_arm_of_the_vehicle_without_asking() {
        let (mut h, mut out, _) = vehicle(&[]);
        h.get_by_label("STOP ALL 2 arms of 126").click();
        h.step();
        assert_eq!(out.sent(), [Command::SetEmergencyAll]);
        assert!(h.query_by_label("Confirm").is_none(), "no question");
        h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::E);
        h.step();
        assert_eq!(
            out.sent(),
            [Command::SetEmergencyAll, Command::SetEmergencyAll],
            "Shift+E is stop all, not also E"
        );
    }

    #[test]
    fn the_banner_says_another_arm_of_the_vehicle_is_stopped_whichever_is_focused() {
        let (a, b) = ids();
        let (mut h, _out, end) = vehicle(&[]);
        assert!(
            h.query_by_label_contains("also arm").is_none(),
            "nobody stopped yet"
        );
        // b (not focused) reports EMERGENCY: a STOP ALL, or another OCU's stop.
        h.state_mut().apply(&Update::arm(
            b,
            ArmFact::Status {
                t: end + 0.1,
                state: ManagementState::Emergency,
            },
        ));
        h.step();
        h.step();
        assert!(
            h.query_by_label_contains(&format!("also arm {b} is stopped"))
                .is_some(),
            "the banner names the other arm while {a} is focused"
        );
    }

    #[test]
    fn scrubbed_back_the_arm_list_shows_each_arm_then_and_picking_one_focuses_it_live() {
        let (a, b) = ids();
        let (mut h, mut out, end) = vehicle(&[]);
        // b goes into emergency after the drawn time.
        h.state_mut().apply(&Update::arm(
            b,
            ArmFact::Status {
                t: end + 0.5,
                state: ManagementState::Emergency,
            },
        ));
        h.state_mut().freeze_clock(end + 1.0);
        h.state_mut().seek(end - 0.2);
        h.step();
        h.step();
        let b_then = row(&h, b);
        assert!(!b_then.contains("EMERGENCY"), "{b_then}");
        assert_eq!(h.state().view.arm.drawn_arms(), [a, b]);
        pick(&mut h, b);
        assert_eq!(out.sent(), [Command::Select(b)]);
    }

    #[test]
    fn r_frames_the_whole_vehicle_f_the_focused_arm_and_a_new_focus_reframes() {
        let (a, b) = ids();
        let (mut h, _, end) = vehicle(&[]);
        let base = |h: &Harness<'_, OcuApp>, id: ComponentId| {
            let s = h.state().vehicle().read().unwrap();
            s.arm(id)
                .unwrap()
                .latest
                .spec
                .as_ref()
                .unwrap()
                .mount
                .unwrap()
                .position
        };
        let (base_a, base_b) = (base(&h, a), base(&h, b));
        h.key_press(egui::Key::R);
        h.step();
        h.step();
        let panel = &h.state().view.arm;
        let size = panel.rect.unwrap().size();
        for p in [base_a, base_b] {
            let [x, y] = panel.camera.project(p, [size.x, size.y]).unwrap();
            assert!(
                (0.0..=size.x).contains(&x) && (0.0..=size.y).contains(&y),
                "{p:?} at {x},{y} outside {size:?}"
            );
        }
        let whole = panel.camera.distance;
        h.key_press(egui::Key::F);
        h.step();
        assert!(
            h.state().view.arm.camera.distance < whole,
            "the arm alone is framed closer than the vehicle"
        );
        // Focusing b frames b: the camera's target moves to b's side of the vehicle.
        network_focuses(&mut h, b, end);
        let target = h.state().view.arm.camera.target;
        assert!(
            (target[1] - base_b[1]).abs() < (target[1] - base_a[1]).abs(),
            "target {target:?}, bases {base_a:?} {base_b:?}"
        );
    }
}
