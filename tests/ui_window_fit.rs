//! A window that fits (issue 20): at 800×600, 1280×800 and 1920×1080 every timeline control is
//! on screen, live, scrubbed back and over a replay; nothing the pointer may be on moves when
//! a long status message arrives or recording starts, and when an emergency begins nothing in
//! the bars does (the tiles move down once, under the banner's strip); in an emergency at
//! 800×600 the 3D view keeps its minimum height; the joint gauges show every joint or say how
//! many more there are; scrubbed back, the gauges and the 3D view say how far back. Through
//! the real UI code with `egui_kittest` (no display, no GPU).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::{text, window};

use std::path::Path;
use std::time::{Duration, Instant};

use eframe::egui::Rect;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::update::*;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::commands::UiCommand;
use jaus_ocu::ui::panels::view3d::MIN_VIEW3D_HEIGHT;
use jaus_ocu::ui::sources::read_vehicle;
use jaus_ocu::ui::tiles::{Pane, pane_rects};
use jaus_ocu::ui::time_control::Shown;

const SAE: &str = "tests/data/SAE_Management_PacketCapture.pcap";

/// What [`rect_of`] takes for the timeline's elapsed time and length.
const TIME: &str = "elapsed / length";

/// The window sizes an operator uses.
const SIZES: [(f32, f32); 3] = [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)];

/// A live app (detached network handle) with 4 s of the demo arm, marks of several kinds
/// (control, status, stale), the clock at the end.
fn live_app() -> OcuApp {
    // The demo arm (7 joints).
    let mut updates = ui_common::recorded(4.0, None);
    let end = updates.last().map_or(0.0, Update::t);
    let arm = ui_common::ARM;
    let extra = [
        ArmFact::Control {
            t: end - 2.0,
            state: ControlState::Held { authority: 100 },
        },
        ArmFact::Status {
            t: end - 1.5,
            state: ManagementState::Standby,
        },
        ArmFact::Status {
            t: end - 1.0,
            state: ManagementState::Ready,
        },
        ArmFact::Stale {
            t: end - 0.8,
            signal: Signal::JointVelocities,
            stale: true,
        },
        ArmFact::Stale {
            t: end - 0.5,
            signal: Signal::JointVelocities,
            stale: false,
        },
    ];
    updates.extend(extra.into_iter().map(|u| Update::arm(arm, u)));
    let mut app = ui_common::app_with(&updates);
    app.freeze_clock(end);
    app
}

fn harness(app: OcuApp, (w, h): (f32, f32)) -> Harness<'static, OcuApp> {
    ui_common::sized(app, [w, h])
}

/// The rect of the widget labelled exactly `label`, or whose label starts with it when
/// `prefix`.
fn rect_of(h: &Harness<'_, OcuApp>, label: &str, prefix: bool) -> Rect {
    let node = if label == TIME {
        // The elapsed time / the length: `0:00:04.000 / 0:00:04.000`.
        h.query_all_by(|n| text(n).is_some_and(|l| l.contains(" / ") && l.contains(":0")))
            .next()
    } else if prefix {
        h.query_all_by(|n| text(n).is_some_and(|l| l.starts_with(label)))
            .next()
    } else {
        h.query_by_label(label)
    };
    let node = node.unwrap_or_else(|| {
        let near: Vec<String> = h
            .query_all_by(|n| text(n).is_some_and(|l| l.contains(':') || l.contains('/')))
            .filter_map(|n| text(&n.accesskit_node()))
            .collect();
        panic!(
            "no widget labelled {label:?} in {:?}; labels with : or /: {near:?}",
            h.state().shown()
        )
    });
    node.rect()
}

/// The timeline's controls in what is shown now: play/pause, the steps, the speed, LIVE or
/// Back to live, the time, and one chip per kind of mark present. Labels, exact or prefix.
fn timeline_controls(h: &Harness<'_, OcuApp>) -> Vec<(String, bool)> {
    let app = h.state();
    let shown = app.shown();
    let mut out: Vec<(String, bool)> = vec![
        ("speed".into(), false),
        ("◀ step".into(), false),
        ("step ▶".into(), false),
        ("◀ mark".into(), false),
        ("mark ▶".into(), false),
    ];
    out.push(match shown {
        Shown::Live => ("LIVE".into(), false),
        _ => ("Back to live".into(), false),
    });
    if shown.is_replay() {
        out.push(("loop".into(), false));
    }
    // The elapsed time / the length.
    out.push((TIME.into(), false));
    let session = read_vehicle(app.vehicle());
    let marks = &session.arm_or_focused(app.focus()).marks;
    for kind in MarkKind::ALL {
        let n = marks.iter().filter(|m| m.kind == kind).count();
        if n > 0 {
            out.push((format!("{} {n}", kind.name()), false));
        }
    }
    out
}

/// Asserts every timeline control is inside the window, saying which is not and where.
fn assert_timeline_inside(h: &Harness<'_, OcuApp>, what: &str) {
    let win = window(h);
    let controls = timeline_controls(h);
    assert!(controls.len() >= 9, "{what}: {controls:?}");
    for (label, prefix) in controls {
        let r = rect_of(h, &label, prefix);
        assert!(
            win.expand(0.5).contains_rect(r) && r.width() > 1.0,
            "{what} {}×{}: {label:?} at {r:?} is not inside the window",
            win.width(),
            win.height()
        );
    }
}

/// Steps until the replay opened over live has loaded (10 s at most).
fn wait_loaded(h: &mut Harness<'static, OcuApp>) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        h.step();
        let done = h.state().replay().is_some_and(|r| r.progress.finished);
        if done || Instant::now() > until {
            assert!(done, "the replay did not load within 10 s");
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
}

/// Live, live scrubbed back and a replay over live, at `size`: every timeline control is
/// inside the window.
fn timeline_fits(size: (f32, f32)) {
    let mut h = harness(live_app(), size);
    h.step();
    h.step();
    assert_eq!(h.state().shown(), Shown::Live);
    assert_timeline_inside(&h, "live");
    let now = h.state().now();
    h.state_mut().seek(now - 2.5);
    h.step();
    h.step();
    assert!(matches!(h.state().shown(), Shown::LiveScrubbed { .. }));
    assert_timeline_inside(&h, "scrubbed back");
    h.state_mut().open_replay(Path::new(SAE)).unwrap();
    wait_loaded(&mut h);
    assert!(matches!(h.state().shown(), Shown::ReplayOverLive { .. }));
    assert_timeline_inside(&h, "replay over live");
}

#[test]
fn every_timeline_control_is_inside_an_800x600_window() {
    timeline_fits(SIZES[0]);
}

#[test]
fn every_timeline_control_is_inside_a_1280x800_window() {
    timeline_fits(SIZES[1]);
}

#[test]
fn every_timeline_control_is_inside_a_1920x1080_window() {
    timeline_fits(SIZES[2]);
}

/// The controls whose place must not change under the pointer: the top bar's, the
/// timeline's, the gauges' unit toggles and the 3D view's buttons.
const STEADY: [&str; 10] = [
    "File",
    "View",
    "Keyboard shortcuts",
    "Pause",
    "speed",
    "LIVE",
    "◀ step",
    "Angles in degrees",
    "Lengths in metres",
    "fit arm",
];

/// Of [`STEADY`], the controls in tiles (under the banner's strip).
const TILED: [&str; 3] = ["Angles in degrees", "Lengths in metres", "fit arm"];

fn places(h: &Harness<'_, OcuApp>) -> Vec<(&'static str, Rect)> {
    STEADY.iter().map(|l| (*l, rect_of(h, l, false))).collect()
}

fn assert_same_places(before: &[(&str, Rect)], after: &[(&str, Rect)], what: &str) {
    for ((label, a), (_, b)) in before.iter().zip(after) {
        assert!(
            (a.min - b.min).length() < 0.5 && (a.max - b.max).length() < 0.5,
            "{what}: {label:?} moved from {a:?} to {b:?}"
        );
    }
}

#[test]
fn nothing_moves_under_the_pointer_when_an_emergency_begins_a_long_message_arrives_or_recording_starts()
 {
    for size in [SIZES[0], SIZES[1]] {
        let mut h = harness(live_app(), size);
        h.step();
        h.step();
        let before = places(&h);
        let bars = |p: &[(&'static str, Rect)]| -> Vec<(&'static str, Rect)> {
            p.iter()
                .filter(|(l, _)| !TILED.contains(l))
                .copied()
                .collect()
        };
        let t = h.state().now();
        h.state_mut().apply(&Update::arm(
            ui_common::ARM,
            ArmFact::Status {
                t,
                state: ManagementState::Emergency,
            },
        ));
        h.step();
        h.step();
        assert!(
            h.query_all_by_label_contains("EMERGENCY STOP")
                .next()
                .is_some(),
            "the banner"
        );
        // The banner takes its strip under the bars: the bars' controls stay, the tiles move
        // down once, and from then on nothing moves.
        assert_same_places(
            &bars(&before),
            &bars(&places(&h)),
            &format!("{size:?} emergency"),
        );
        let before = places(&h);
        let long = "the arm refused the command because the joint 4 brake reported a fault \
                    while the controller was switching its drive power stage, twice in a row, \
                    and asked for a manual inspection of the drive before any further motion";
        h.state_mut().apply(&Update::arm(
            ui_common::ARM,
            Remark::Error {
                t,
                message: long.into(),
            },
        ));
        h.step();
        h.step();
        assert_same_places(&before, &places(&h), &format!("{size:?} long message"));
        // The long line is one line, cut, with its whole text for the tooltip.
        let line = h
            .query_all_by_label_contains("manual inspection")
            .next()
            .expect("the status line carries the whole message");
        let r = line.rect();
        assert!(
            r.height() < 24.0,
            "{size:?}: the status line wrapped: {r:?}"
        );
        assert!(
            r.right() <= size.0 + 0.5,
            "{size:?}: past the window: {r:?}"
        );
        let dir = std::env::temp_dir().join(format!("jaus-ocu-fit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("rec-{}.mcap", size.0));
        h.state_mut().start_recording(path.clone()).unwrap();
        h.step();
        h.step();
        assert!(h.state().recording.is_active());
        assert_same_places(&before, &places(&h), &format!("{size:?} recording"));
        h.state_mut().stop_recording();
        h.state_mut().notify(
            jaus_ocu::ui::notice::NoticeLevel::Warning,
            "live arm 126.1.10: ClearEmergency confirmed (a notice, as after a command sent \
             while the past is drawn)",
        );
        h.step();
        h.step();
        assert!(
            h.query_by_label_contains("ClearEmergency confirmed")
                .is_some()
        );
        assert_same_places(&before, &places(&h), &format!("{size:?} notice"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The 3D view's rect.
fn view3d(h: &Harness<'_, OcuApp>) -> Rect {
    rect_of(h, "3D arm view", false)
}

#[test]
fn at_800x600_in_an_emergency_the_3d_view_keeps_its_minimum_height_and_the_plots_give_way() {
    let mut app = live_app();
    let t = app.now();
    app.apply(&Update::arm(
        ui_common::ARM,
        ArmFact::Status {
            t,
            state: ManagementState::Emergency,
        },
    ));
    let mut h = harness(app, SIZES[0]);
    h.step();
    h.step();
    h.step();
    let v = view3d(&h);
    assert!(
        v.height() >= MIN_VIEW3D_HEIGHT - 0.5,
        "the 3D view is {} tall, under its minimum {MIN_VIEW3D_HEIGHT}",
        v.height()
    );
    assert!(window(&h).expand(1.0).contains_rect(v), "{v:?}");
}

/// The demo arm's seven joints: every gauge is inside the gauges panel's visible part, or the
/// panel says how many more there are.
fn gauges_show_every_joint_or_say_how_many_more(size: (f32, f32)) {
    let mut h = harness(live_app(), size);
    h.step();
    h.step();
    // The joints scroll down to the cue line when there is one, else to where the gauges'
    // tile ends.
    let cue = h.query_all_by_label_contains("more joint").next();
    let tile = h
        .state()
        .view
        .tile_rects
        .iter()
        .find(|(p, _)| *p == jaus_ocu::ui::tiles::Pane::Gauges)
        .map(|(_, r)| *r)
        .expect("the gauges' tile");
    let bottom = cue.as_ref().map_or(tile.bottom(), |c| c.rect().top());
    let visible = (1..=7)
        .filter(|i| {
            // A gauge says its joint's number, name, value and limits.
            let gauge = |l: &str| {
                l.starts_with(&format!("{i} "))
                    && (l.contains("limits") || l.contains("continuous"))
            };
            h.query_all_by(|n| text(n).is_some_and(|l| gauge(&l)))
                .any(|n| {
                    let r = n.rect();
                    r.bottom() <= bottom + 0.5
                })
        })
        .count();
    assert!(
        visible == 7 || cue.is_some(),
        "{size:?}: only {visible} of 7 joints visible and no cue"
    );
    if let Some(cue) = cue {
        let label = text(&cue.accesskit_node()).unwrap_or_default();
        assert!(
            label.contains(&format!("{} more joint", 7 - visible)),
            "{size:?}: {label:?} with {visible} of 7 visible"
        );
    }
}

#[test]
fn at_1280x800_the_gauges_show_all_seven_joints_or_say_how_many_more() {
    gauges_show_every_joint_or_say_how_many_more(SIZES[1]);
}

#[test]
fn at_800x600_the_gauges_show_all_seven_joints_or_say_how_many_more() {
    gauges_show_every_joint_or_say_how_many_more(SIZES[0]);
}

#[test]
fn scrubbed_back_the_gauges_and_the_3d_view_say_how_far_back() {
    let mut h = harness(live_app(), SIZES[1]);
    h.step();
    h.step();
    let past = |h: &Harness<'_, OcuApp>| {
        h.query_all_by_label_contains("−2.5 s")
            .map(|n| n.rect().min)
            .collect::<Vec<_>>()
    };
    assert!(past(&h).is_empty(), "live: no past label");
    let now = h.state().now();
    h.state_mut().seek(now - 2.5);
    h.step();
    h.step();
    let gauges = rect_of(&h, "Angles in degrees", false);
    let view = view3d(&h);
    let labels = past(&h);
    assert!(
        labels
            .iter()
            .any(|p| p.x < view.left() && p.y > gauges.bottom()),
        "no past label over the gauges: {labels:?}"
    );
    assert!(
        labels.iter().any(|p| view.contains(*p)),
        "no past label in the 3D view {view:?}: {labels:?}"
    );
    h.state_mut().run(UiCommand::FollowLive);
    h.step();
    h.step();
    assert_eq!(h.state().shown(), Shown::Live);
    assert!(
        h.query_all_by_label_contains("(then)").next().is_none()
            // (a jog button's "−" is no time)
            && h.query_all_by(|n| text(n).is_some_and(|l| l.starts_with("−") && l != "−"))
                .next()
                .is_none(),
        "live again: no past label"
    );
}

/// Issue 46: in the default layout at a laptop's sizes the 3D view is the largest tile
/// (it was the smallest, about 250 points tall under three plots), and the presets are
/// whole with a preview's "Go to …" under them, nothing to scroll.
#[test]
fn at_laptop_sizes_the_3d_view_is_the_largest_tile_and_the_presets_show_their_go_to() {
    for size in [(1280.0, 800.0), (1366.0, 768.0)] {
        let mut h = harness(live_app(), size);
        h.step();
        h.step();
        let rects = pane_rects(&h.state().settings.tiles.0);
        let of = |pane| {
            rects.iter().find(|(p, _)| *p == pane).map_or_else(
                || panic!("{size:?}: {pane:?} not drawn: {rects:?}"),
                |(_, r)| *r,
            )
        };
        let view = of(Pane::View3d);
        assert!(view.height() > 500.0, "{size:?}: the view {view:?}");
        for (pane, r) in &rects {
            if *pane != Pane::View3d {
                assert!(
                    view.area() > r.area() && view.height() >= r.height() - 1.0,
                    "{size:?}: {pane:?} {r:?} larger than the 3D view {view:?}"
                );
            }
        }
        let presets = of(Pane::Presets);
        h.get_by_label_contains("Hand-off").click();
        h.step();
        h.step();
        let go = h.get_by_label_contains("Go to Hand-off").rect();
        assert!(
            presets.contains_rect(go),
            "{size:?}: Go to {go:?} outside the presets {presets:?}"
        );
    }
}
