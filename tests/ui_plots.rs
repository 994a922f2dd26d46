//! The force/torque plots, the timeline's mark filter and the repaint policy, through the real
//! UI code with `egui_kittest` (no display, no GPU) and unit checks of the zoom and tick maths.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::update::{MarkKind, Signal, Update};
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::ui::app::{
    FRAME_INTERVAL, LIVE_IDLE_INTERVAL, LiveKind, OcuApp, RepaintNeeds, Settings, read_session,
    repaint_after,
};
use jaus_ocu::ui::plots::{MIN_PLOT_HEIGHT, tick_label, wheel_zoom, y_steps};
use jaus_ocu::ui::time_control::Shown;

/// A live app (detached network handle) fed 20 s of a wrench at 100 Hz whose Fz rises
/// through 60 N at 10 s and falls back at 12 s, and a signal flapping stale 100 times.
fn app(settings: Settings) -> OcuApp {
    let (net, _rx, _updates) = NetHandle::detached(Epoch::now());
    let mut app = OcuApp::new(LiveKind::Simulated, Some(net), Vec::new(), settings);
    for i in 0..2000 {
        let t = f64::from(i) * 0.01;
        let fz = if (10.0..12.0).contains(&t) {
            60.0
        } else {
            5.0 * t.sin()
        };
        app.apply(&Update::ForceTorque {
            t,
            force: [Some(1.0), Some(-2.0), Some(fz)],
            torque: [Some(0.1), Some(0.2), Some(0.3)],
        });
        if i % 10 == 0 {
            app.apply(&Update::Stale {
                t: t + 0.001,
                signal: Signal::JointPositions,
                stale: i % 20 == 0,
            });
        }
    }
    app.freeze_clock(20.0);
    app
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    Harness::builder()
        .with_size([1280.0, 800.0])
        .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app)
}

/// The top of the first widget whose label contains `text`.
fn top_of(h: &Harness<'_, OcuApp>, text: &str) -> f32 {
    h.query_all_by_label_contains(text)
        .next()
        .unwrap_or_else(|| panic!("no widget labelled …{text}…"))
        .rect()
        .top()
}

#[test]
fn the_plots_keep_a_readable_height_frame_after_frame_with_their_legends_above_the_data() {
    let mut h = harness(app(Settings::default()));
    h.step();
    h.step();
    let gap = |h: &Harness<'_, OcuApp>| top_of(h, "Tx") - top_of(h, "Fx");
    let first = gap(&h);
    for _ in 0..60 {
        h.step();
    }
    let later = gap(&h);
    // The legend chips sit above each plot: the gap between the two legends is one plot.
    assert!(first >= MIN_PLOT_HEIGHT, "force plot only {first} pt tall");
    assert!(
        (later - first).abs() < 1.0,
        "the panel shrank from {first} to {later}"
    );
    // Every channel's chip, |F| included, carries its value at the drawn time with the unit.
    for name in ["Fx", "Fy", "Fz", "|F|", "Tx", "Ty", "Tz"] {
        assert!(
            h.query_all_by_label_contains(name).next().is_some(),
            "{name}"
        );
    }
    assert!(h.query_all_by_label_contains("Fy -2.00 N").next().is_some());
    assert!(
        h.query_all_by_label_contains("Tz 0.30 N·m")
            .next()
            .is_some()
    );
}

#[test]
fn a_crossed_threshold_is_a_timeline_mark_and_the_kind_filter_hides_marks() {
    let settings = Settings {
        force_threshold: Some(50.0),
        ..Settings::default()
    };
    let mut h = harness(app(settings));
    h.step();
    let marks = read_session(h.state().session())
        .focused()
        .marks
        .iter()
        .map(|m| (m.t, m.kind, m.end))
        .filter(|m| m.1 == MarkKind::Threshold)
        .collect::<Vec<_>>();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!((marks[0].0 - 10.0).abs() < 0.011 && marks[0].2.is_some());
    // 100 stale flips, 0.1 s apart: one stale episode.
    let stale = read_session(h.state().session())
        .focused()
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Stale)
        .count();
    assert_eq!(stale, 1);
    // Hide the stale marks with their chip; the setting remembers it.
    h.get_by_label_contains("stale 1").click();
    h.step();
    assert!(!h.state().settings.marks.shows(MarkKind::Stale));
    assert!(h.state().settings.marks.shows(MarkKind::Threshold));
}

#[test]
fn the_wheel_zooms_time_and_shift_or_ctrl_zoom_values() {
    let z = wheel_zoom(vec2(0.0, 100.0), 1.0, false);
    assert!(z.x > 1.0 && (z.y - 1.0).abs() < f32::EPSILON, "{z:?}");
    let z = wheel_zoom(vec2(0.0, -100.0), 1.0, false);
    assert!(z.x < 1.0);
    // Shift + wheel arrives as a horizontal scroll.
    let z = wheel_zoom(vec2(100.0, 0.0), 1.0, true);
    assert!((z.x - 1.0).abs() < f32::EPSILON && z.y > 1.0);
    // Ctrl + wheel arrives as a pinch.
    assert_eq!(wheel_zoom(vec2(0.0, 0.0), 1.25, false), vec2(1.0, 1.25));
    assert_eq!(wheel_zoom(vec2(0.0, 0.0), 1.0, false), vec2(1.0, 1.0));
}

#[test]
fn y_ticks_carry_units_and_enough_decimals() {
    assert_eq!(tick_label(20.0, 10.0, "N"), "20 N");
    assert_eq!(tick_label(0.25, 0.05, "N·m"), "0.25 N·m");
    assert_eq!(tick_label(-1e-12, 0.5, "N"), "0.0 N");
    // About three labelled ticks over any range, tiny torques included.
    for range in [0.004, 0.08, 0.3, 7.0, 45.0, 900.0] {
        let [fine, step, coarse] = y_steps(range);
        let labelled = range / step;
        assert!((1.5..=6.0).contains(&labelled), "{range}: {labelled} ticks");
        assert!(fine < step && step < coarse);
    }
}

#[test]
fn the_window_repaints_only_when_something_moves() {
    let needs = |shown, playing, background| {
        repaint_after(RepaintNeeds {
            shown,
            playing,
            background,
        })
    };
    let replay = Shown::Replay { t: 1.0 };
    assert_eq!(
        needs(replay, false, false),
        None,
        "a paused replay costs nothing"
    );
    assert_eq!(needs(replay, true, false), Some(FRAME_INTERVAL));
    assert_eq!(needs(Shown::Live, false, false), Some(LIVE_IDLE_INTERVAL));
    assert_eq!(
        needs(Shown::LiveScrubbed { t: 1.0 }, false, false),
        None,
        "scrubbed back and paused: new data wakes the window itself"
    );
    assert!(needs(replay, false, true).is_some(), "loading is polled");
    // A live app following now keeps a slow pace even when no data arrives.
    let app = app(Settings::default());
    assert_eq!(repaint_after(app.repaint_needs()), Some(LIVE_IDLE_INTERVAL));
}

#[test]
fn a_plots_panel_dragged_taller_keeps_its_height() {
    use eframe::egui::{Event, Modifiers, PointerButton, pos2};
    let mut h = harness(app(Settings::default()));
    h.step();
    h.step();
    let gap = |h: &Harness<'_, OcuApp>| top_of(h, "Tx") - top_of(h, "Fx");
    let before = gap(&h);
    // The splitter is the panel's top edge, a little above its title.
    let title = h
        .query_all_by_label_contains("End-effector force")
        .next()
        .unwrap()
        .rect();
    let x = 640.0;
    let y = title.top() - 4.0;
    let events = [
        Event::PointerMoved(pos2(x, y)),
        Event::PointerButton {
            pos: pos2(x, y),
            button: PointerButton::Primary,
            pressed: true,
            modifiers: Modifiers::NONE,
        },
    ];
    for e in events {
        h.input_mut().events.push(e);
        h.step();
    }
    for dy in 1..=15 {
        h.input_mut()
            .events
            .push(Event::PointerMoved(pos2(x, y - 10.0 * dy as f32)));
        h.step();
    }
    h.input_mut().events.push(Event::PointerButton {
        pos: pos2(x, y - 150.0),
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    let dragged = gap(&h);
    assert!(
        dragged > before + 40.0,
        "the drag did not make the plots taller: {before} -> {dragged}"
    );
    for _ in 0..60 {
        h.step();
    }
    let later = gap(&h);
    assert!(
        (later - dragged).abs() < 1.0,
        "the taller panel crept back from {dragged} to {later}"
    );
}
