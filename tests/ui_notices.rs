//! Notices that do not pile up (issue 46): the same message again is one notice with a count
//! (`×3`); the notices have a strip of their own at the bottom of the 3D view's tile (the
//! view takes what is left), so at any size, with four different ones, none covers the arm,
//! the event log's "Add note…" or any other tile's control; a
//! long one is whole (wrapped, never cut mid-word) and its full text is on hover; Resume in
//! an emergency says to clear the emergency first. Through the real UI code with
//! `egui_kittest` (no display, no GPU).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use eframe::egui::{Key, Modifiers, Rect, accesskit::Role};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::update::*;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::notice::NoticeLevel;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::tiles::{NamedLayout, Pane, TileLayout};
use ui_common::{ARM, recorded, text, window};

/// A live app (detached network handle) after 2 s of the simulated arm, the clock at the
/// end, with `settings`.
fn live(settings: Settings) -> OcuApp {
    let updates = recorded(2.0, None);
    let end = updates.last().map_or(0.0, Update::t);
    let (mut app, _outbox) = ui_common::live_app(&[]);
    app.settings = settings;
    for u in &updates {
        app.apply(u);
    }
    app.freeze_clock(end);
    app
}

fn harness(app: OcuApp, (w, h): (f32, f32)) -> Harness<'static, OcuApp> {
    let mut h = ui_common::sized(app, [w, h]);
    for _ in 0..3 {
        h.step();
    }
    h
}

/// Every tile shown, the event log among them.
fn every_tile() -> Settings {
    Settings {
        show_log: true,
        show_arms: true,
        ..Settings::default()
    }
}

#[test]
fn three_identical_refusals_are_one_notice_counted_x3_that_says_clear_the_emergency_first() {
    let mut h = harness(live(Settings::default()), (1280.0, 800.0));
    let t = h.state().now();
    h.state_mut().apply(&Update::arm(
        ARM,
        ArmFact::Status {
            t,
            state: ManagementState::Emergency,
        },
    ));
    h.step();
    // Shift+R (Resume) three times, as an operator would, in EMERGENCY.
    for _ in 0..3 {
        h.key_press_modifiers(Modifiers::SHIFT, Key::R);
        h.step();
    }
    h.step();
    let notices = h.state().view.notices.clone();
    assert_eq!(notices.len(), 1, "one notice, not three: {notices:?}");
    let n = &notices[0];
    assert_eq!(n.count, 3, "{n:?}");
    assert!(
        n.text.contains("clear the emergency first")
            || n.text.contains("Clear the emergency first"),
        "{}",
        n.text
    );
    assert!(!n.text.contains("Nothing to resume"), "{}", n.text);
    // And the strip shows it once, with its count.
    let shown: Vec<String> = h
        .query_all_by(|node| text(node).is_some_and(|l| l.starts_with("Not resumed")))
        .filter_map(|node| text(&node.accesskit_node()))
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].ends_with("(×3)"), "{shown:?}");
    // A different message is a notice of its own.
    h.state_mut()
        .notify(NoticeLevel::Warning, "another message entirely");
    h.step();
    assert_eq!(h.state().view.notices.len(), 2);
}

#[test]
fn four_notices_cover_no_tile_and_neither_the_event_logs_add_note_nor_any_other_control() {
    for size in [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)] {
        for named in NamedLayout::ALL {
            let mut settings = every_tile();
            settings.tiles = TileLayout(named.tree());
            let mut h = harness(live(settings), size);
            for i in 0..4 {
                h.state_mut().notify(
                    if i % 2 == 0 {
                        NoticeLevel::Warning
                    } else {
                        NoticeLevel::Error
                    },
                    format!(
                        "refusal {i}: no control — the link to the arm was lost; wait for the \
                         link to come back, then request control again (C)"
                    ),
                );
            }
            for _ in 0..3 {
                h.step();
            }
            let what = format!("{size:?} {named:?}");
            let strip = h
                .state()
                .view
                .notice_rect
                .unwrap_or_else(|| panic!("{what}: no notices' strip"));
            assert!(window(&h).contains_rect(strip), "{what}: strip {strip:?}");
            // The newest notice is in view.
            let newest = h
                .query_all_by_label_contains("refusal 3:")
                .next()
                .unwrap_or_else(|| panic!("{what}: the newest notice is not drawn"))
                .rect();
            assert!(
                strip.intersects(newest),
                "{what}: {newest:?} outside {strip:?}"
            );
            // In the 3D view's tile, over no other tile and not over the arm's view.
            let tiles = h.state().view.tile_rects.clone();
            for (pane, r) in &tiles {
                if *pane == Pane::View3d {
                    assert!(
                        r.expand(0.5).contains_rect(strip),
                        "{what}: the notices {strip:?} outside the 3D view's tile {r:?}"
                    );
                } else {
                    assert!(
                        !r.intersects(strip.shrink(0.5)),
                        "{what}: the notices {strip:?} cover the {pane:?} tile {r:?}"
                    );
                }
            }
            let view = h.query_by_label("3D arm view").expect("the 3D view").rect();
            assert!(
                !view.intersects(strip.shrink(0.5)),
                "{what}: the notices {strip:?} cover the arm's view {view:?}"
            );
            // The event log's "Add note…", where the log's tile is in front.
            if let Some(add) = h.query_all_by_label("Add note…").next() {
                let add = add.rect();
                assert!(
                    !add.intersects(strip),
                    "{what}: Add note… {add:?} under {strip:?}"
                );
            } else {
                assert!(
                    named != NamedLayout::Laptop,
                    "{what}: the event log's Add note… is not drawn"
                );
            }
            // Every button and toggle of a tile, as far as its tile shows it (a scrolled
            // list's rows run on under the tile's edge, clipped), is clear of the notices.
            let controls: Vec<(String, Rect)> = h
                .query_all_by(|n| matches!(n.role(), Role::Button | Role::CheckBox | Role::Slider))
                .map(|n| (text(&n.accesskit_node()).unwrap_or_default(), n.rect()))
                // The notices' own buttons.
                .filter(|(name, _)| name != "Dismiss")
                .filter_map(|(name, r)| {
                    let (_, tile) = tiles.iter().find(|(_, t)| t.contains(r.center()))?;
                    Some((name, r.intersect(*tile)))
                })
                .collect();
            assert!(!controls.is_empty(), "{what}: no tile controls found");
            for (name, r) in controls {
                assert!(
                    !r.intersects(strip.shrink(0.5)),
                    "{what}: the notices {strip:?} cover {name:?} {r:?}"
                );
            }
        }
    }
}

#[test]
fn a_long_notice_is_wrapped_whole_never_cut_and_its_full_text_is_on_hover() {
    let long = "Refused: no control — the link to the arm 126.1.10 was lost 3.2 s ago, so it \
                cannot be commanded; wait for the link to come back (the status bar says \
                when), then request control again (C) and repeat the command";
    let mut h = harness(live(Settings::default()), (800.0, 600.0));
    h.state_mut().notify(NoticeLevel::Warning, long);
    h.step();
    h.step();
    let label = h
        .query_all_by(|n| text(n).is_some_and(|l| l.starts_with("Refused: no control")))
        .next()
        .expect("the notice is drawn");
    let value = text(&label.accesskit_node()).unwrap();
    assert_eq!(value, long, "the whole text, not cut");
    let r = label.rect();
    assert!(
        window(&h).contains_rect(r),
        "{r:?} not inside the window {:?}",
        window(&h)
    );
    // Wider than the window on one line: wrapped to two lines or more, not elided.
    assert!(r.height() > 24.0, "one line only: {r:?}");
    // Hovered, a tooltip says it all again.
    h.hover_at(r.center());
    // egui shows a tooltip once the pointer rests (each step is a frame of egui's clock).
    for _ in 0..8 {
        h.step();
    }
    let copies = h
        .query_all_by(|n| text(n).is_some_and(|l| l == long))
        .count();
    assert!(copies >= 2, "no tooltip with the full text ({copies})");
}
