//! The plots (force/torque and any joint signal, the picker, gaps, hover, threshold and
//! ticks, the choice persisted), the timeline's mark filter and the repaint policy, through
//! the real UI code with `egui_kittest` (no display, no GPU) and unit checks of the zoom and
//! tick maths.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use std::time::Duration;

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::signals::{PlotLayout, PlotSpec, Series, SignalRef, Units};
use jaus_ocu::model::update::*;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::app::{
    LIVE_IDLE_INTERVAL, MOTION_INTERVAL, NUMBERS_INTERVAL, OcuApp, RepaintNeeds, repaint_after,
};
use jaus_ocu::ui::panels::plots::{
    DEFAULT_TICK_LABEL_HEIGHT, MIN_PLOT_HEIGHT, SMALLEST_PLOT_HEIGHT, channels, fit_y,
    labelled_ticks, plot_lines, tick_label, tick_values, wheel_zoom, y_steps,
};
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::{LiveKind, read_vehicle};
use jaus_ocu::ui::tiles::{NamedLayout, TileLayout};
use jaus_ocu::ui::time_control::Shown;

/// The arm the apps' facts are about (focused first, as the network side does).
const ARM: ComponentId = ComponentId::new(126, 1, 10);

/// Gives `app` a fact about [`ARM`].
fn feed(app: &mut OcuApp, fact: ArmFact) {
    app.apply(&Update::arm(ARM, fact));
}

/// A live app (detached network handle) fed 20 s of a wrench at 100 Hz whose Fz rises
/// through 60 N at 10 s and falls back at 12 s, and a signal flapping stale 100 times.
fn app(settings: Settings) -> OcuApp {
    let (net, _rx, _updates) = NetHandle::detached(Epoch::now());
    let mut app = OcuApp::new(LiveKind::Simulated, Some(net), Vec::new(), settings);
    app.apply(&Update::net(NetFact::Selected { t: 0.0, id: ARM }));
    for i in 0..2000 {
        let t = f64::from(i) * 0.01;
        let fz = if (10.0..12.0).contains(&t) {
            60.0
        } else {
            5.0 * t.sin()
        };
        feed(
            &mut app,
            ArmFact::ForceTorque {
                t,
                force: [Some(1.0), Some(-2.0), Some(fz)],
                torque: [Some(0.1), Some(0.2), Some(0.3)],
            },
        );
        if i % 10 == 0 {
            feed(
                &mut app,
                ArmFact::Stale {
                    t: t + 0.001,
                    signal: Signal::JointPositions,
                    stale: i % 20 == 0,
                },
            );
        }
    }
    app.freeze_clock(20.0);
    app
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    harness_sized(app, 1280.0, 800.0)
}

/// `app` drawn `w`×`h`. These tests are about the plots as they are drawn three deep and
/// as wide as the 3D view above them: an app given the default layout gets the wide-plots
/// one (the default's narrower plots: [`the_default_layout_at_1280x800_draws_four_plots`]).
fn harness_sized(mut app: OcuApp, w: f32, h: f32) -> Harness<'static, OcuApp> {
    if app.settings.tiles == TileLayout::default() {
        app.settings.tiles = TileLayout(NamedLayout::LaptopWidePlots.tree());
    }
    ui_common::sized(app, [w, h])
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
    let marks = read_vehicle(h.state().vehicle())
        .focused()
        .marks
        .iter()
        .map(|m| (m.t, m.kind, m.end))
        .filter(|m| m.1 == MarkKind::Threshold)
        .collect::<Vec<_>>();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!((marks[0].0 - 10.0).abs() < 0.011 && marks[0].2.is_some());
    // 100 stale flips, 0.1 s apart: one stale episode.
    let stale = read_vehicle(h.state().vehicle())
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
    assert_eq!(tick_label(45.0, 5.0, "°"), "45°");
    // About three labelled ticks over any range at a comfortable height, tiny torques
    // included.
    for range in [0.004, 0.08, 0.3, 7.0, 45.0, 900.0] {
        let [fine, step, coarse] = y_steps((0.0, range), 120.0 / range, DEFAULT_TICK_LABEL_HEIGHT);
        let labelled = range / step;
        assert!((1.5..=6.0).contains(&labelled), "{range}: {labelled} ticks");
        assert!(fine < step && step < coarse);
    }
}

#[test]
fn the_y_axis_always_has_two_labelled_ticks_down_to_the_smallest_plot() {
    let heights = [
        f64::from(SMALLEST_PLOT_HEIGHT),
        56.0,
        64.0,
        90.0,
        200.0,
        500.0,
    ];
    let data = [
        (0.0, 0.0),
        (0.1, 1.6),
        (-0.02, 0.03),
        (14.2, 15.9),
        (-183.0, 179.0),
        (1.57, 1.571),
        (-0.4, 62.0),
        (999.0, 1001.0),
        (-3.3e-4, 2.7e-4),
    ];
    for height in heights {
        for (lo, hi) in data {
            for threshold in [None, Some(50.0)] {
                let bounds = fit_y(lo, hi, threshold, height, DEFAULT_TICK_LABEL_HEIGHT).unwrap();
                assert!(bounds.0 <= lo && bounds.1 >= hi, "{lo}..{hi} in {bounds:?}");
                if let Some(th) = threshold {
                    assert!(bounds.1 > th, "the threshold {th} is in {bounds:?}");
                }
                let ticks = labelled_ticks(bounds, height, DEFAULT_TICK_LABEL_HEIGHT);
                assert!(
                    ticks >= 2,
                    "{lo}..{hi} at {height} pt: {ticks} labelled ticks over {bounds:?}"
                );
            }
        }
    }
    assert_eq!(
        fit_y(
            f64::INFINITY,
            f64::NEG_INFINITY,
            None,
            60.0,
            DEFAULT_TICK_LABEL_HEIGHT
        ),
        None
    );
}

#[test]
fn the_window_repaints_only_when_something_moves() {
    let needs = |shown, playing, background| {
        repaint_after(RepaintNeeds {
            playing,
            background,
            ..RepaintNeeds::still(shown)
        })
    };
    let replay = Shown::Replay { t: 1.0 };
    assert_eq!(
        needs(replay, false, false),
        None,
        "a paused replay costs nothing"
    );
    assert_eq!(
        needs(replay, true, false),
        Some(NUMBERS_INTERVAL),
        "playing: the numbers at a readable rate"
    );
    assert_eq!(needs(Shown::Live, false, false), Some(LIVE_IDLE_INTERVAL));
    assert_eq!(
        needs(Shown::LiveScrubbed { t: 1.0 }, false, false),
        None,
        "scrubbed back and paused: new data wakes the window itself"
    );
    assert!(needs(replay, false, true).is_some(), "loading is polled");
    // A live app following now keeps a slow pace even when no data arrives (its data is
    // not fresh: the frozen clock is 20 s, the last sample too old).
    let app = app(Settings::default());
    assert_eq!(repaint_after(app.repaint_needs()), Some(LIVE_IDLE_INTERVAL));
}

#[test]
fn each_part_sets_the_pace_at_the_rate_its_content_changes() {
    let live = RepaintNeeds {
        live_fresh: true,
        ..RepaintNeeds::still(Shown::Live)
    };
    // Live with fresh data and nothing moving: new samples wake the window (the network
    // side's waker, NUMBERS_INTERVAL); the frame itself asks only for the idle pace.
    assert_eq!(repaint_after(live), Some(LIVE_IDLE_INTERVAL));
    // Plots that follow now move by a pixel column every 250 ms (a long window): a frame
    // then.
    let column = Duration::from_millis(250);
    assert_eq!(
        repaint_after(RepaintNeeds {
            plot_column: Some(column),
            ..live
        }),
        Some(column)
    );
    // A column shorter than the motion interval is drawn at the motion interval.
    assert_eq!(
        repaint_after(RepaintNeeds {
            plot_column: Some(Duration::from_millis(5)),
            ..live
        }),
        Some(MOTION_INTERVAL)
    );
    // Without fresh data nothing new comes to plot: the plots do not set the pace.
    assert_eq!(
        repaint_after(RepaintNeeds {
            plot_column: Some(column),
            live_fresh: false,
            ..live
        }),
        Some(LIVE_IDLE_INTERVAL)
    );
    // The 3D view changed visibly (the arm or the camera moves): the motion rate.
    assert_eq!(
        repaint_after(RepaintNeeds {
            moving: true,
            ..live
        }),
        Some(MOTION_INTERVAL)
    );
    // A paused replay whose plots were left following does not repaint for them.
    assert_eq!(
        repaint_after(RepaintNeeds {
            plot_column: Some(column),
            ..RepaintNeeds::still(Shown::Replay { t: 1.0 })
        }),
        None
    );
    // Playing: the numbers' rate or the plots' column, whichever comes first.
    assert_eq!(
        repaint_after(RepaintNeeds {
            playing: true,
            plot_column: Some(column),
            ..RepaintNeeds::still(Shown::Replay { t: 1.0 })
        }),
        Some(NUMBERS_INTERVAL)
    );
}

#[test]
fn the_plots_report_their_column_time_while_they_follow() {
    let mut h = harness(app(Settings::default()));
    h.step();
    h.step();
    let view = &h.state().view.plots;
    let column = view
        .column_seconds(true)
        .expect("the plots are shown and follow");
    // 30 s over the width of a plot's data area in the plots' tile (one pixel per point).
    let width = 30.0 / column;
    let tile = h
        .state()
        .view
        .tile_rects
        .iter()
        .find(|(p, _)| *p == jaus_ocu::ui::tiles::Pane::Plots)
        .map(|(_, r)| f64::from(r.width()))
        .expect("the plots' tile");
    assert!((tile * 0.7..=tile).contains(&width), "{width} px of {tile}");
    assert_eq!(view.column_seconds(false), None, "plots hidden");
    h.state_mut().view.plots.follow = false;
    assert_eq!(
        h.state().view.plots.column_seconds(true),
        None,
        "plots paused"
    );
}

#[test]
fn a_plots_panel_dragged_taller_keeps_its_height() {
    use eframe::egui::{Event, Modifiers, PointerButton, pos2};
    // A window with room above the 3D view's minimum to drag into.
    let mut h = harness_sized(app(Settings::default()), 1280.0, 1000.0);
    h.step();
    h.step();
    let gap = |h: &Harness<'_, OcuApp>| top_of(h, "Tx") - top_of(h, "Fx");
    let before = gap(&h);
    // The splitter is the gap above the plots' tile, just above its tab.
    let title = h
        .query_all_by_label("Plots")
        .map(|n| n.rect())
        .min_by(|a, b| a.top().total_cmp(&b.top()))
        .unwrap();
    let x = title.center().x + 100.0;
    let y = title.top() - 2.0;
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
        // The plots' lanes share the drag, and the tile stops where the 3D view would go
        // under its minimum (view3d::MIN_VIEW3D_HEIGHT).
        dragged > before + 8.0,
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

/// A live app whose network side focused the demo arm (7 joints) and gave its specification.
fn demo_arm_app(settings: Settings) -> OcuApp {
    let (net, _rx, _updates) = NetHandle::detached(Epoch::now());
    let mut app = OcuApp::new(LiveKind::Simulated, Some(net), Vec::new(), settings);
    app.apply(&Update::net(NetFact::Selected { t: 0.0, id: ARM }));
    feed(
        &mut app,
        ArmFact::Specification {
            t: 0.0,
            spec: ArmFile::demo().spec,
        },
    );
    app
}

/// A live app fed 20 s of the demo arm (7 joints): joint positions at 100 Hz, joint `k` at
/// `(k + 1) · 0.05 · t` rad, nothing from 8 s to 10 s (a gap); velocities alike; a small
/// wrench.
fn arm_app(settings: Settings) -> OcuApp {
    let mut app = demo_arm_app(settings);
    for i in 0..2000 {
        let t = f64::from(i) * 0.01;
        if (8.0..10.0).contains(&t) {
            continue;
        }
        let q: Vec<f64> = (0..7).map(|k| f64::from(k + 1) * 0.05 * t).collect();
        feed(
            &mut app,
            ArmFact::JointPositions {
                t,
                values: q.clone(),
            },
        );
        feed(&mut app, ArmFact::JointVelocities { t, values: q });
        feed(
            &mut app,
            ArmFact::ForceTorque {
                t,
                force: [Some(1.0), Some(-2.0), Some(3.0)],
                torque: [Some(0.1), Some(0.2), Some(0.3)],
            },
        );
    }
    app.freeze_clock(20.0);
    app
}

fn has_label(h: &Harness<'_, OcuApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn a_joint_positions_plot_shows_a_chip_per_joint_with_its_value_in_the_gauges_units() {
    let mut h = harness(arm_app(Settings {
        // The plots the whole window's width (no side tiles): every chip on its row.
        show_gauges: false,
        show_presets: false,
        show_arms: false,
        ..Settings::default()
    }));
    h.step();
    h.step();
    // The default plots: force, torque, and every joint's position (in degrees).
    let spec = ArmFile::demo().spec;
    for k in 1..=7 {
        let q = f64::from(k) * 0.05 * 19.99;
        let text = if spec.joints[k as usize - 1].is_prismatic() {
            format!("J{k} {q:.4} m")
        } else {
            format!("J{k} {:.1}°", q.to_degrees())
        };
        assert!(has_label(&h, &text), "no chip {text}");
    }
    assert!(has_label(&h, "Fy -2.00 N"));
    // Radians when the gauges say so.
    h.state_mut().settings.degrees = false;
    h.step();
    h.step();
    let name = "J7 ";
    let j7 = h
        .query_all_by_label_contains(name)
        .filter_map(|n| n.accesskit_node().label())
        .find(|l| l.ends_with(" rad"))
        .expect("J7 in rad");
    let v: f64 = j7[3..j7.len() - 4].parse().unwrap();
    assert!((v - 0.35 * 19.99).abs() < 1e-3, "{j7}");
    // Three plots drawn, the joints' in two lanes (the telescope's metres under the
    // revolute joints' radians), each lane with two labelled ticks at least.
    let frames = h.state().view.plots.frames.clone();
    assert_eq!(h.state().view.plots.plots_drawn(), 3);
    let lanes: Vec<(usize, &str)> = frames.iter().map(|f| (f.plot, f.unit)).collect();
    assert_eq!(lanes, [(0, "N"), (1, "N·m"), (2, "rad"), (2, "m")]);
    for f in frames {
        assert!(f.ticks >= 2, "{f:?}");
    }
}

#[test]
fn the_joint_lines_break_where_the_samples_stop() {
    let app = arm_app(Settings::default());
    let v = read_vehicle(app.vehicle());
    let s = v.focused();
    let spec = PlotSpec::of_series(1, &[Series::Positions]);
    let chans = channels(s, &spec);
    assert_eq!(chans.len(), 7);
    let units = Units::default();
    for columns in [1280, 200] {
        let lines = plot_lines(s, &chans, units, (0.0, 20.0), columns);
        assert_eq!(lines.len(), 7);
        for (_, l) in &lines {
            let runs: Vec<_> = l.runs().collect();
            assert_eq!(runs.len(), 2, "{columns} columns");
            assert!(runs[0].last().unwrap()[0] < 8.0 && runs[1][0][0] >= 9.9);
        }
    }
}

#[test]
fn a_plot_added_with_the_picker_shows_its_signals_and_the_choice_persists() {
    // A window and a panel with room for a fourth plot of two units (two lanes): an empty
    // one, removed with its ×. (Tall: the timeline's state lanes are shown.)
    let mut settings = Settings::default();
    settings.plots.add();
    let mut h = harness_sized(arm_app(settings), 1280.0, 1660.0);
    h.step();
    h.step();
    h.query_all_by_label("×").last().unwrap().click();
    h.step();
    assert_eq!(h.state().settings.plots.plots.len(), 3);
    h.get_by_label("+ Plot").click();
    h.step();
    h.step();
    assert_eq!(h.state().settings.plots.plots.len(), 4);
    assert_eq!(
        h.state().view.plots.plots_drawn(),
        4,
        "the new plot is shown"
    );
    // The new plot's picker is the last one.
    h.query_all_by_label("Signals…").last().unwrap().click();
    h.step();
    h.step();
    h.get_by_label("J2 velocity").click();
    h.step();
    h.get_by_label("Fz").click();
    h.step();
    let added = h.state().settings.plots.plots[3].clone();
    assert!(added.contains(SignalRef::new(Series::Velocities, 1)));
    assert!(added.contains(SignalRef::new(Series::ForceTorque, 2)));
    // Close the menu; the new plot's legend carries both, the units mixed.
    h.input_mut().events.push(eframe::egui::Event::Key {
        key: eframe::egui::Key::Escape,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: eframe::egui::Modifiers::NONE,
    });
    h.step();
    h.step();
    // Velocities were fed equal to the positions.
    let vel = (2.0 * 0.05 * 19.99f64).to_degrees();

    assert!(
        has_label(&h, &format!("J2 vel {vel:.1} °/s")),
        "velocity chip"
    );
    assert!(has_label(&h, "Fz 3.00 N"));
    // The choice goes through the settings store as eframe keeps it (RON) and back.
    let mut store = MemoryStorage::default();
    let mut app = h.state().settings.clone();
    app.plots.plots[3]
        .hidden
        .push(SignalRef::new(Series::ForceTorque, 2));
    eframe::set_value(&mut store, "jaus-ocu-settings", &app);
    let back = OcuApp::load_settings(Some(&store));
    assert_eq!(back.plots, app.plots);
}

/// eframe's storage in memory.
#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.into(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn settings_saved_before_plots_were_chosen_load_with_the_default_plots() {
    let mut store = MemoryStorage::default();
    // What an older version saved: no `plots`, no `marks`.
    store.0.insert(
        "jaus-ocu-settings".into(),
        "(dark:false,degrees:false,millimetres:true,show_gauges:true,show_plots:true,\
         show_presets:true,show_axes:false,show_frames:false,plot_window_s:12.0,\
         force_threshold:Some(40.0),authority:90)"
            .into(),
    );
    let s = OcuApp::load_settings(Some(&store));
    assert!(!s.dark && s.millimetres);
    assert!((s.plot_window_s - 12.0).abs() < 1e-12);
    assert_eq!(s.plots, PlotLayout::default());
}

#[test]
fn a_saved_signal_the_arm_lacks_shows_as_unavailable() {
    let mut settings = Settings::default();
    settings.plots.plots.push(PlotSpec::of_signals(
        9,
        &[SignalRef::new(Series::Positions, 9)],
    ));
    let mut h = harness_sized(arm_app(settings), 1280.0, 1100.0);
    h.step();
    h.step();
    assert!(has_label(&h, "J10 joint positions: not on this arm"));
}

#[test]
fn the_enabled_threshold_is_inside_the_y_range_while_following() {
    let settings = Settings {
        force_threshold: Some(50.0),
        // Fz stays under 6 N in the last 5 s.
        plot_window_s: 5.0,
        ..Settings::default()
    };
    let mut h = harness(app(settings));
    h.step();
    h.step();
    let frames = h.state().view.plots.frames.clone();
    let force = frames[0];
    assert!(force.y.1 > 50.0 && force.y.0 < 0.0, "{force:?}");
    // The torque plot has no threshold: it fits its own values.
    assert!(frames[1].y.1 < 5.0, "{:?}", frames[1]);
}

#[test]
fn hovering_a_plot_lists_every_signal_at_the_pointer_time() {
    use eframe::egui::{Event, pos2};
    let mut h = harness(arm_app(Settings {
        // The plots the whole window's width (no side tiles): every chip on its row.
        show_gauges: false,
        show_presets: false,
        show_arms: false,
        ..Settings::default()
    }));
    h.step();
    h.step();
    let frames = h.state().view.plots.frames.clone();
    assert_eq!(frames.len(), 4);
    // The middle of the joint plot's degrees lane.
    let lane = frames.iter().find(|f| f.unit == "°").unwrap().rect;
    h.input_mut()
        .events
        .push(Event::PointerMoved(pos2(640.0, lane.center().y)));
    h.step();
    h.step();
    let hover = h
        .state()
        .view
        .plots
        .hover
        .expect("the pointer is over a plot");
    assert!((0.0..20.0).contains(&hover), "{hover}");
    let at = format!("at {hover:.3} s");
    assert!(has_label(&h, &at), "no {at}");
    // Every joint's chip shows its value at that time (the nearest sample).
    let spec = ArmFile::demo().spec;
    for k in (1..=7).filter(|k| !spec.joints[*k as usize - 1].is_prismatic()) {
        let name = format!("J{k} ");
        let chip = h
            .query_all_by_label_contains(&name)
            .find(|n| n.accesskit_node().label().is_some_and(|l| l.ends_with('°')))
            .unwrap_or_else(|| panic!("J{k}"));
        let text = chip.accesskit_node().label().unwrap();
        let value: f64 = text
            .trim_start_matches(&format!("J{k} "))
            .trim_end_matches('°')
            .parse()
            .unwrap();
        let want = (f64::from(k) * 0.05 * hover).to_degrees();
        assert!((value - want).abs() < 0.5, "J{k}: {value} vs {want}");
    }
    // The force plot's legend holds the time too (its values at that time).
    assert!(has_label(&h, "Fy -2.00 N"));
    assert_eq!(h.query_all_by_label_contains(&at).count(), 3);
}

#[test]
fn the_joint_plots_screenshot_scenario_plots_joint_positions_and_velocities() {
    use jaus_ocu::ui::screenshot::Scenario;
    assert_eq!(Scenario::parse("joint-plots"), Ok(Scenario::JointPlots));
    assert!(Scenario::parse("nope").unwrap_err().contains("joint-plots"));
}

#[test]
fn plots_that_do_not_fit_are_left_out_and_said_so() {
    let mut settings = Settings::default();
    for _ in 0..3 {
        settings.plots.add();
    }
    let mut h = harness(arm_app(settings));
    h.step();
    h.step();
    let shown = h.state().view.plots.plots_drawn();
    assert!((1..6).contains(&shown), "{shown} of 6 shown");
    let note = format!("{} more plot(s) below", 6 - shown);
    assert!(has_label(&h, &note), "no {note}");
    for f in h.state().view.plots.frames.clone() {
        assert!(f.height >= SMALLEST_PLOT_HEIGHT - 24.0, "{f:?}");
    }
}

/// A live app fed 20 s of the demo arm (7 joints, the telescope J4 prismatic) with every
/// series at 100 Hz: positions, velocities, efforts, joint torques/forces and a wrench.
fn full_arm_app(settings: Settings) -> OcuApp {
    let mut app = demo_arm_app(settings);
    for i in 0..2000 {
        let t = f64::from(i) * 0.01;
        let wave = |k: i32, a: f64| -> Vec<f64> {
            (0..7)
                .map(|j| a * f64::from(j + k).mul_add(0.1, (t + f64::from(j)).sin()))
                .collect()
        };
        feed(
            &mut app,
            ArmFact::JointPositions {
                t,
                values: wave(0, 0.5),
            },
        );
        feed(
            &mut app,
            ArmFact::JointVelocities {
                t,
                values: wave(1, 0.2),
            },
        );
        feed(
            &mut app,
            ArmFact::JointEfforts {
                t,
                values: wave(2, 40.0),
            },
        );
        feed(
            &mut app,
            ArmFact::JointForceTorques {
                t,
                values: wave(3, 12.0),
            },
        );
        feed(
            &mut app,
            ArmFact::ForceTorque {
                t,
                force: [Some(t.sin()), Some(-2.0), Some(5.0 * t.cos())],
                torque: [Some(0.1), Some(0.2 * t.sin()), Some(0.3)],
            },
        );
    }
    app.freeze_clock(20.0);
    app
}

fn ft(c: usize) -> SignalRef {
    SignalRef::new(Series::ForceTorque, c)
}

/// Force (4 signals), joint velocities and efforts (14), and everything (35: the four joint
/// series and the seven end-effector channels).
fn layout_4_14_35() -> PlotLayout {
    let mut all = PlotSpec::of_series(
        3,
        &[
            Series::Positions,
            Series::Velocities,
            Series::Efforts,
            Series::JointForceTorques,
        ],
    );
    all.signals = (0..7).map(ft).collect();
    PlotLayout {
        plots: vec![
            PlotSpec::of_signals(1, &[ft(0), ft(1), ft(2), ft(6)]),
            PlotSpec::of_series(2, &[Series::Velocities, Series::Efforts]),
            all,
        ],
    }
}

/// Every lane's data area has the same left and right edges and the same time range: the
/// same time is at the same x in every plot. The data areas' edges.
fn one_time_axis(frames: &[jaus_ocu::ui::panels::plots::PlotFrame]) -> (f32, f32) {
    let first = frames.first().expect("plots drawn");
    for f in frames {
        assert_eq!(f.rect.left(), first.rect.left(), "{f:?}");
        assert_eq!(f.rect.right(), first.rect.right(), "{f:?}");
        assert_eq!(f.x, first.x, "{f:?}");
        let (a, b) = f.x;
        for t in [a, 0.5 * (a + b), b - 0.25] {
            assert!((f.x_of(t) - first.x_of(t)).abs() < 0.01, "{t} s in {f:?}");
        }
    }
    (first.rect.left(), first.rect.right())
}

/// Every widget of the window lies inside it (`w` points wide).
fn inside_the_window(h: &Harness<'_, OcuApp>, w: f32) {
    for node in h.query_all_by(|n| n.bounding_box().is_some()) {
        let r = node.rect();
        if r.width() > 0.0 && r.left() < w {
            assert!(
                r.right() <= w + 0.5,
                "{:?} ends at {} beyond the window ({w})",
                node.accesskit_node().label(),
                r.right()
            );
        }
    }
}

#[test]
fn plots_of_14_and_35_signals_keep_the_one_time_axis_their_chips_fold() {
    // Where the default plots' data areas are at 1280 points.
    let mut h = harness_sized(full_arm_app(Settings::default()), 1280.0, 2400.0);
    h.step();
    h.step();
    let default_edges = one_time_axis(&h.state().view.plots.frames);
    let settings = Settings {
        plots: layout_4_14_35(),
        ..Settings::default()
    };
    let mut h = harness_sized(full_arm_app(settings), 1280.0, 2400.0);
    h.step();
    h.step();
    let view = &h.state().view.plots;
    assert_eq!(view.plots_drawn(), 3, "{:?}", view.frames);
    // One lane per unit: N; °/s, m/s, %; and N, N·m, °, m, °/s, m/s, %.
    assert_eq!(view.frames.len(), 1 + 3 + 7);
    let edges = one_time_axis(&view.frames);
    assert_eq!(edges, default_edges, "14 and 35 chips move no data area");
    assert!(edges.1 <= 1280.0);
    // Following now: the last 30 s, whatever the legends hold.
    assert_eq!(view.frames[0].x, (-10.0, 20.0));
    // The legends fold what does not fit into "+N more", and stay inside the window.
    assert!(has_label(&h, "Fx "), "the force chips fit");
    let more: Vec<String> = h
        .query_all_by_label_contains(" more")
        .filter_map(|n| n.accesskit_node().label())
        .filter(|l| l.starts_with('+'))
        .collect();
    assert_eq!(more.len(), 2, "{more:?}");
    inside_the_window(&h, 1280.0);
    // The folded chips are in the menu, with their values.
    let n_shown = h.query_all_by_label_contains("J7 eff").count();
    assert_eq!(n_shown, 0, "J7 effort is folded in both plots");
    h.query_all_by_label_contains(" more")
        .find(|n| {
            n.accesskit_node()
                .label()
                .is_some_and(|l| l.starts_with('+'))
        })
        .unwrap()
        .click();
    h.step();
    h.step();
    assert!(has_label(&h, "J7 eff "), "J7 effort in the menu");
    h.key_press(eframe::egui::Key::Escape);
    h.step();
    // Hovering the 35-signal plot: its time in every legend, inside the window, and the
    // axis does not move.
    let lane = h.state().view.plots.frames[10].rect;
    h.input_mut()
        .events
        .push(eframe::egui::Event::PointerMoved(lane.center()));
    h.step();
    h.step();
    let hover = h.state().view.plots.hover.expect("over a plot");
    let at = format!("at {hover:.3} s");
    assert_eq!(h.query_all_by_label_contains(&at).count(), 3, "{at}");
    inside_the_window(&h, 1280.0);
    assert_eq!(one_time_axis(&h.state().view.plots.frames), default_edges);
}

#[test]
fn a_plot_of_14_signals_in_a_laptop_window_keeps_the_time_axis_and_follows_now() {
    // The operator's case: joint velocities and efforts ticked in one plot, 1280×800.
    let settings = Settings {
        plots: PlotLayout {
            plots: vec![PlotSpec::of_series(
                2,
                &[Series::Velocities, Series::Efforts],
            )],
        },
        ..Settings::default()
    };
    let mut h = harness_sized(full_arm_app(settings), 1280.0, 800.0);
    for _ in 0..3 {
        h.step();
    }
    let reference = {
        let mut d = harness_sized(full_arm_app(Settings::default()), 1280.0, 800.0);
        d.step();
        d.step();
        one_time_axis(&d.state().view.plots.frames)
    };
    let frames = h.state().view.plots.frames.clone();
    assert_eq!(frames.len(), 3, "{frames:?}");
    assert_eq!(one_time_axis(&frames), reference);
    for f in &frames {
        // The last 30 s up to now, not 19.5 s lagging by 10.
        assert_eq!(f.x, (-10.0, 20.0));
        assert!(f.ticks >= 2 && f.height >= SMALLEST_PLOT_HEIGHT, "{f:?}");
    }
    inside_the_window(&h, 1280.0);
}

#[test]
fn mixed_units_never_share_an_axis_each_lane_is_labelled_in_its_unit() {
    use jaus_ocu::ui::panels::plots::{lanes, units};
    let settings = Settings {
        plots: layout_4_14_35(),
        ..Settings::default()
    };
    let mut h = harness_sized(full_arm_app(settings), 1280.0, 2400.0);
    h.step();
    h.step();
    let check = |h: &Harness<'_, OcuApp>| {
        let app = h.state();
        let v = read_vehicle(app.vehicle());
        let s = v.focused();
        let u = units(&app.settings);
        for (i, spec) in app.settings.plots.plots.iter().enumerate() {
            let chans = channels(s, spec);
            let lanes = lanes(&chans, u);
            let mut seen = Vec::new();
            for lane in &lanes {
                assert!(!lane.unit.is_empty(), "plot {i}: a lane without a unit");
                assert!(!seen.contains(&lane.unit), "plot {i}: {} twice", lane.unit);
                seen.push(lane.unit);
                for &c in &lane.channels {
                    assert_eq!(chans[c].unit(u), lane.unit, "plot {i}");
                }
            }
            // Every available signal is in one lane.
            let placed: usize = lanes.iter().map(|l| l.channels.len()).sum();
            assert_eq!(placed, chans.iter().filter(|c| c.info.is_some()).count());
            // Drawn: one frame per lane, each labelled (two ticks at least, with its unit).
            let drawn: Vec<&str> = app
                .view
                .plots
                .frames
                .iter()
                .filter(|f| f.plot == i)
                .map(|f| f.unit)
                .collect();
            assert_eq!(drawn, seen, "plot {i}");
        }
        for f in &app.view.plots.frames {
            assert!(f.ticks >= 2, "{f:?}");
            assert!(tick_label(1.0, 1.0, f.unit).ends_with(f.unit));
        }
        app.view
            .plots
            .frames
            .iter()
            .map(|f| f.unit)
            .collect::<Vec<_>>()
    };
    let deg_m = check(&h);
    assert_eq!(
        deg_m,
        [
            "N", "°/s", "m/s", "%", "°", "m", "°/s", "m/s", "%", "N·m", "N"
        ]
    );
    // In radians and millimetres the telescope and the revolute joints are still apart.
    h.state_mut().settings.degrees = false;
    h.state_mut().settings.millimetres = true;
    h.step();
    h.step();
    let rad_mm = check(&h);
    assert!(rad_mm.contains(&"mm") && rad_mm.contains(&"rad") && rad_mm.contains(&"mm/s"));
    // The default joint plot: the telescope in its own lane, not flat on the degrees axis.
    let mut h = harness(full_arm_app(Settings::default()));
    h.step();
    h.step();
    let joints: Vec<_> = h
        .state()
        .view
        .plots
        .frames
        .iter()
        .filter(|f| f.plot == 2)
        .map(|f| (f.unit, f.signals))
        .collect();
    assert_eq!(joints, [("°", 6), ("m", 1)]);
}

#[test]
fn two_labelled_ticks_in_every_lane_at_every_window_size_down_to_the_smallest_plot() {
    let sizes = [
        (800.0, 600.0),
        (1024.0, 700.0),
        (1280.0, 800.0),
        (1366.0, 768.0),
        (1920.0, 1080.0),
    ];
    let layouts = [PlotLayout::default(), layout_4_14_35()];
    for (w, hh) in sizes {
        for layout in &layouts {
            for threshold in [None, Some(50.0)] {
                let settings = Settings {
                    plots: layout.clone(),
                    force_threshold: threshold,
                    ..Settings::default()
                };
                let mut h = harness_sized(app(settings), w, hh);
                // The force plot at several moments: Fz's spike to 60 N in the window, and
                // not.
                for now in [9.0, 10.5, 12.5, 15.0, 20.0] {
                    h.state_mut().freeze_clock(now);
                    h.step();
                    h.step();
                    let frames = h.state().view.plots.frames.clone();
                    // At 800×600 the plots give way to the 3D view (its minimum height),
                    // saying so in the 3D view's toolbar: no lane to label.
                    if w <= 800.0 && frames.is_empty() {
                        assert!(h.query_by_label_contains("plots hidden").is_some());
                        continue;
                    }
                    assert!(!frames.is_empty(), "{w}×{hh}");
                    for f in frames {
                        assert!(
                            f.height >= SMALLEST_PLOT_HEIGHT,
                            "{w}×{hh} at {now} s: {f:?}"
                        );
                        assert!(f.ticks >= 2, "{w}×{hh} at {now} s: {f:?}");
                        // What was drawn is what the rule counts, a label apart at least.
                        let label = DEFAULT_TICK_LABEL_HEIGHT;
                        let (values, step) = tick_values(f.y, f64::from(f.height), label - 0.1);
                        assert!(values.len() >= 2, "{f:?}");
                        let px = f64::from(f.height) / (f.y.1 - f.y.0);
                        assert!(step * px >= label - 0.1, "{f:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn tick_labels_stand_whole_a_label_apart_at_every_height_from_the_smallest_plot() {
    let data = [
        (0.0, 0.0),
        (-2.0, 5.0),
        (-14.8, 14.8),
        (1.0, 60.0),
        (-0.5, 0.5),
        (0.1, 1.6),
        (-183.0, 179.0),
        (1.57, 1.571),
        (999.0, 1001.0),
        (-3.3e-4, 2.7e-4),
    ];
    for label in [13.0, DEFAULT_TICK_LABEL_HEIGHT, 17.0] {
        let mut h = f64::from(SMALLEST_PLOT_HEIGHT);
        while h <= 300.0 {
            for (lo, hi) in data {
                for threshold in [None, Some(50.0)] {
                    let bounds = fit_y(lo, hi, threshold, h, label).unwrap();
                    let (values, step) = tick_values(bounds, h, label);
                    assert!(values.len() >= 2, "{lo}..{hi} at {h} pt: {bounds:?}");
                    let px = h / (bounds.1 - bounds.0);
                    assert!(step * px >= label, "labels overlap at {h} pt");
                    for v in values {
                        // Its label's box inside the data area.
                        let from_top = (bounds.1 - v) * px;
                        assert!(
                            from_top >= label / 2.0 - 1e-9 && from_top <= h - label / 2.0 + 1e-9,
                            "{v} at {from_top} of {h} pt"
                        );
                    }
                }
            }
            h += 1.0;
        }
    }
}

/// Issue 31: a frame whose view of the data did not change builds no band mesh (the plots
/// draw the meshes kept from the last frame); a sample that changes a column's min/max does.
#[test]
fn a_frame_that_changes_no_column_builds_no_band_mesh() {
    let mut app = demo_arm_app(Settings {
        plot_window_s: 600.0,
        ..Settings::default()
    });
    // 600 s at 100 Hz: ~50 samples a pixel column, so the plots decimate.
    for i in 0..60_000 {
        let t = f64::from(i) * 0.01;
        let q: Vec<f64> = (0..7)
            .map(|k| (t * 0.01 * f64::from(k + 1)).sin())
            .collect();
        feed(&mut app, ArmFact::JointPositions { t, values: q });
        feed(
            &mut app,
            ArmFact::ForceTorque {
                t,
                force: [Some((t * 0.7).sin()), Some(-2.0), Some(3.0)],
                torque: [Some(0.1), Some(0.2), Some(0.3)],
            },
        );
    }
    app.freeze_clock(600.0);
    let mut h = harness(app);
    h.step();
    h.step();
    let caches = |h: &Harness<'_, OcuApp>| {
        let c = &h.state().view.plot_caches;
        (c.bands(), c.meshes_built())
    };
    let (bands, built) = caches(&h);
    assert!(
        bands > 0 && built > 0,
        "the bands are drawn ({bands}, {built})"
    );
    for _ in 0..3 {
        h.step();
    }
    assert_eq!(
        caches(&h),
        (bands, built),
        "an unchanged view builds nothing"
    );
    // A force spike in the last column: that column reads differently.
    feed(
        h.state_mut(),
        ArmFact::ForceTorque {
            t: 599.995,
            force: [Some(40.0), Some(-2.0), Some(3.0)],
            torque: [Some(0.1), Some(0.2), Some(0.3)],
        },
    );
    h.step();
    let (_, after) = caches(&h);
    assert!(after > built, "the force lane's mesh is built again");
    assert!(after < built + bands as u64, "only the lanes that changed");
}

/// How tall `mesh` is along the vertical line at `x`, points (0 where nothing crosses it).
fn mesh_height_at(mesh: &eframe::egui::Mesh, x: f32) -> f32 {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for tri in mesh.indices.chunks_exact(3) {
        let p: Vec<_> = tri.iter().map(|&i| mesh.vertices[i as usize].pos).collect();
        for (a, b) in [(p[0], p[1]), (p[1], p[2]), (p[2], p[0])] {
            let (a, b) = if a.x <= b.x { (a, b) } else { (b, a) };
            if a.x <= x && x <= b.x && b.x > a.x {
                let y = a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x);
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
    }
    if hi >= lo { hi - lo } else { 0.0 }
}

/// The tallest the band of every lane drawn is over the times `[t0, t1]`, points, with
/// how many lanes had a band.
fn tallest_band(h: &Harness<'_, OcuApp>, (t0, t1): (f64, f64)) -> (f32, usize) {
    let app = h.state();
    let mut tallest: f32 = 0.0;
    let mut bands = 0;
    for f in &app.view.plots.frames {
        let id = app.settings.plots.plots[f.plot].id;
        let Some(mesh) = app
            .view
            .plot_caches
            .band((id, f.unit))
            .and_then(jaus_ocu::ui::widgets::envelope_band::BandMemo::mesh)
        else {
            continue;
        };
        bands += 1;
        let (a, b) = (
            f.x_of(t0).max(f.rect.left()),
            f.x_of(t1).min(f.rect.right()),
        );
        let mut x = a;
        while x <= b {
            tallest = tallest.max(mesh_height_at(&mesh, x));
            x += 0.5;
        }
    }
    (tallest, bands)
}

#[test]
fn velocity_and_effort_lanes_at_rest_draw_a_line_not_a_band() {
    let settings = Settings {
        plot_window_s: 600.0,
        plots: PlotLayout {
            plots: vec![PlotSpec::of_series(
                1,
                &[Series::Velocities, Series::Efforts],
            )],
        },
        ..Settings::default()
    };
    // Zero velocities and efforts at 20 Hz for 600 s: decimated (a column holds ~10 samples).
    let mut app = demo_arm_app(settings.clone());
    for i in 0..12_000 {
        let t = f64::from(i) * 0.05;
        feed(
            &mut app,
            ArmFact::JointVelocities {
                t,
                values: vec![0.0; 7],
            },
        );
        feed(
            &mut app,
            ArmFact::JointEfforts {
                t,
                values: vec![0.0; 7],
            },
        );
    }
    app.freeze_clock(600.0);
    let mut h = harness(app);
    h.step();
    h.step();
    let (tallest, bands) = tallest_band(&h, (0.5, 599.5));
    assert!(bands >= 2, "the lanes are drawn as bands ({bands})");
    // The stroke (1.5 points) and a point of feathering.
    assert!(
        tallest <= 2.5 + 1e-3,
        "zero signals drawn {tallest} points tall"
    );

    // Reported on change (at 100 Hz while it changes): a move from 100 s to 140 s (velocity
    // up and down), the zeros that end it, then nothing until one report at 500 s: decimated
    // (over two samples a column), the columns at rest far apart. At rest, a line.
    let mut app = demo_arm_app(settings);
    let report = |app: &mut OcuApp, t: f64, v: f64| {
        let values: Vec<f64> = (0..7).map(|k| v * f64::from(k + 1) / 7.0).collect();
        feed(
            app,
            ArmFact::JointVelocities {
                t,
                values: values.clone(),
            },
        );
        feed(
            app,
            ArmFact::JointEfforts {
                t,
                values: values.iter().map(|v| 50.0 * v).collect(),
            },
        );
    };
    report(&mut app, 1.0, 0.0);
    for i in 0..=4000 {
        let t = 100.0 + f64::from(i) * 0.01;
        let v = 0.35 * (std::f64::consts::PI * f64::from(i) / 4000.0).sin();
        report(&mut app, t, v);
    }
    report(&mut app, 140.01, 0.0);
    report(&mut app, 500.0, 0.0);
    app.freeze_clock(600.0);
    let mut h = harness(app);
    h.step();
    h.step();
    let (moving, bands) = tallest_band(&h, (100.5, 139.5));
    assert!(bands >= 2, "bands ({bands})");
    assert!(moving > 10.0, "the move is drawn ({moving} points)");
    for rest in [(5.0, 95.0), (145.0, 490.0)] {
        let (tallest, _) = tallest_band(&h, rest);
        // The stroke, a point of feathering widened at most fourfold at a steep turn.
        assert!(
            tallest <= 1.5 + 4.0 + 1e-3,
            "at rest over {rest:?} the lanes draw {tallest} points tall: a band where every value is 0"
        );
    }
}

#[test]
fn a_legend_chip_clicked_hides_its_signal_and_says_so() {
    let mut h = harness(arm_app(Settings {
        show_gauges: false,
        show_presets: false,
        show_arms: false,
        ..Settings::default()
    }));
    h.ctx
        .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
    h.step();
    h.step();
    let chip = h
        .query_all_by_label_contains("Fy ")
        .next()
        .expect("the Fy chip")
        .rect();
    h.get_by_label("Fy -2.00 N").click();
    h.step();
    h.step();
    let hidden = &h.state().settings.plots.plots[0].hidden;
    assert!(
        hidden.contains(&SignalRef::new(Series::ForceTorque, 1)),
        "Fy hidden: {hidden:?}"
    );
    // The chip stays, and its tooltip says it is hidden and how to show it.
    h.event(eframe::egui::Event::PointerMoved(chip.center()));
    h.step();
    h.step();
    assert!(
        h.query_by_label_contains("hidden: click to show").is_some(),
        "the hidden chip says so"
    );
    h.get_by_label("Fy -2.00 N").click();
    h.step();
    assert!(
        h.state().settings.plots.plots[0].hidden.is_empty(),
        "shown again"
    );
}

#[test]
fn a_plot_added_at_1280x800_leaves_the_three_defaults_in_view_and_says_it_in_the_header() {
    let mut settings = Settings::default();
    settings.plots.add();
    let mut h = harness(arm_app(settings));
    h.step();
    h.step();
    // Adding a fourth plot left out two (the line saying so took a plot's room).
    let shown = h.state().view.plots.plots_drawn();
    assert_eq!(shown, 3, "{shown} of 4 drawn");
    for f in h.state().view.plots.frames.clone() {
        assert!(f.height >= SMALLEST_PLOT_HEIGHT - 24.0, "{f:?}");
    }
    let note = h.get_by_label("1 more plot(s) below").rect();
    let add = h.get_by_label("+ Plot").rect();
    assert!(
        (note.top() - add.top()).abs() < 12.0 && note.left() > add.right(),
        "said in the header's row, right of its controls: {note:?} vs + Plot {add:?}"
    );
}

/// The default layout (the 3D view the centre's whole height, the plots right of it over the
/// presets) draws the three default plots and a fourth at 1280×800, each readable, and the
/// five presets whole under them.
#[test]
fn the_default_layout_at_1280x800_draws_four_plots() {
    let mut settings = Settings::default();
    settings.plots.add();
    let app = arm_app(settings);
    let mut h = ui_common::sized(app, [1280.0, 800.0]);
    h.step();
    h.step();
    let shown = h.state().view.plots.plots_drawn();
    assert_eq!(shown, 4, "{shown} of 4 drawn");
    for f in h.state().view.plots.frames.clone() {
        assert!(f.height >= SMALLEST_PLOT_HEIGHT - 24.0, "{f:?}");
    }
    assert!(h.query_by_label_contains("more plot(s) below").is_none());
}
