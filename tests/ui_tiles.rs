//! The tiled window (issue 30): at a laptop's 1280×800 and 1366×768 the default layout shows
//! every joint of the 7-joint demo arm, the 3D view and three plots without scrolling; twelve
//! joints at 1920×1080; the banner and E-STOP stay whole in an emergency whatever is done to
//! the tiles; notices never cover the banner, the top bar or the preset list, and an Info
//! notice expires; the layout survives a save and load of the settings, and a corrupt one
//! loads as the default. Through the real UI code with `egui_kittest` (no display, no GPU).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::{text, window};

use std::collections::HashMap;
use std::time::Duration;

use eframe::egui::Rect;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::update::*;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::notice::{self, NoticeLevel};
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;
use jaus_ocu::ui::tiles::{NamedLayout, Pane, TileLayout};

/// A live app (detached network handle) with 2 s of `arm`, the clock at the end.
fn live_app(arm: ArmFile, settings: Settings) -> OcuApp {
    let updates = ui_common::updates_after(ui_common::sim_net(arm, 1), 2.0);
    let end = updates.last().map_or(0.0, Update::t);
    let (net, _rx, _updates) = NetHandle::detached(Epoch::now());
    let mut app = OcuApp::new(LiveKind::Simulated, Some(net), Vec::new(), settings);
    for u in &updates {
        app.apply(u);
    }
    app.freeze_clock(end);
    app
}

fn twelve() -> ArmFile {
    ArmFile::load(std::path::Path::new("tests/data/arm12.toml")).unwrap()
}

fn harness(app: OcuApp, (w, h): (f32, f32)) -> Harness<'static, OcuApp> {
    let mut h = ui_common::sized(app, [w, h]);
    for _ in 0..3 {
        h.step();
    }
    h
}

/// Where each visible pane was drawn.
fn tiles(h: &Harness<'_, OcuApp>) -> HashMap<Pane, Rect> {
    h.state().view.tile_rects.iter().copied().collect()
}

/// The rects of joint `i`'s gauge or row (its text: `3 elbow: 12.0°, limits …`).
fn joint_rects(h: &Harness<'_, OcuApp>, i: usize) -> Vec<Rect> {
    let gauge = |l: &str| {
        l.starts_with(&format!("{i} ")) && (l.contains("limits") || l.contains("continuous"))
    };
    h.query_all_by(|n| text(n).is_some_and(|l| gauge(&l)))
        .map(|n| n.rect())
        .collect()
}

/// Every one of `n` joints readable: its row inside the gauges' tile and the window, with
/// no "more joints below" cue.
fn assert_every_joint_readable(h: &Harness<'_, OcuApp>, n: usize, what: &str) {
    let win = window(h);
    let gauges = *tiles(h)
        .get(&Pane::Gauges)
        .unwrap_or_else(|| panic!("{what}: no gauges tile"));
    assert!(
        h.query_all_by_label_contains("more joint").next().is_none(),
        "{what}: the gauges say there are more joints below"
    );
    for i in 1..=n {
        let rects = joint_rects(h, i);
        assert!(
            rects.iter().any(|r| gauges.expand(0.5).contains_rect(*r)
                && win.contains_rect(*r)
                && r.height() >= 20.0),
            "{what}: joint {i} not whole inside the gauges tile {gauges:?}: {rects:?}"
        );
    }
}

/// The default layout's 3D view and three plots: the view at least 200 pt tall, each plot's
/// legend inside the plots' tile, no "more plots below" cue.
fn assert_view_and_three_plots(h: &Harness<'_, OcuApp>, what: &str) {
    let t = tiles(h);
    let view = h.query_by_label("3D arm view").expect("the 3D view").rect();
    assert!(
        view.height() >= 200.0 && window(h).contains_rect(view),
        "{what}: 3D view {view:?}"
    );
    let plots = *t.get(&Pane::Plots).expect("a plots tile");
    assert!(
        h.query_all_by_label_contains("more plot").next().is_none(),
        "{what}: plots left out; tiles {t:?}"
    );
    for legend in ["Fx", "Tx", "J1"] {
        let r = h
            .query_all_by_label_contains(legend)
            .map(|n| n.rect())
            .find(|r| plots.contains_rect(*r))
            .unwrap_or_else(|| panic!("{what}: no {legend} legend inside the plots {plots:?}"));
        assert!(r.height() > 1.0, "{what}: {legend} {r:?}");
    }
}

#[test]
fn at_1280x800_the_default_layout_shows_all_seven_joints_the_3d_view_and_three_plots() {
    let h = harness(
        live_app(ArmFile::demo(), Settings::default()),
        (1280.0, 800.0),
    );
    assert_every_joint_readable(&h, 7, "1280×800");
    assert_view_and_three_plots(&h, "1280×800");
}

#[test]
fn at_1366x768_the_default_layout_shows_all_seven_joints_the_3d_view_and_three_plots() {
    let h = harness(
        live_app(ArmFile::demo(), Settings::default()),
        (1366.0, 768.0),
    );
    assert_every_joint_readable(&h, 7, "1366×768");
    assert_view_and_three_plots(&h, "1366×768");
}

#[test]
fn at_1920x1080_the_default_layout_shows_twelve_joints() {
    let h = harness(live_app(twelve(), Settings::default()), (1920.0, 1080.0));
    assert_every_joint_readable(&h, 12, "1920×1080, 12 joints");
    assert_view_and_three_plots(&h, "1920×1080");
}

/// The live arm in emergency.
fn emergency(app: &mut OcuApp) {
    let t = app.now();
    app.apply(&Update::arm(
        ui_common::ARM,
        ArmFact::Status {
            t,
            state: ManagementState::Emergency,
        },
    ));
}

/// The notices' strip as drawn last frame, when it holds a notice.
fn notice_rect(h: &Harness<'_, OcuApp>) -> Option<Rect> {
    h.state().view.notice_rect
}

/// The banner (both its lines: the headline and the steps) and E-STOP inside the window,
/// and neither under a tile nor the notices.
fn assert_banner_and_estop_whole(h: &Harness<'_, OcuApp>, what: &str) {
    let win = window(h);
    let banner = h
        .query_all_by_label_contains("EMERGENCY STOP —")
        .next()
        .unwrap_or_else(|| panic!("{what}: no banner"));
    let label = text(&banner.accesskit_node()).unwrap_or_default();
    assert!(
        label.contains("1. ") && label.contains("2. "),
        "{what}: the banner's steps: {label:?}"
    );
    let banner = banner.rect();
    let estop = h
        .query_all_by_label_contains("E-STOP")
        .next()
        .expect("E-STOP")
        .rect();
    for (name, r) in [("banner", banner), ("E-STOP", estop)] {
        assert!(
            win.contains_rect(r) && r.width() > 10.0,
            "{what}: {name} {r:?} not inside {win:?}"
        );
        for (pane, t) in tiles(h) {
            assert!(
                !t.intersects(r),
                "{what}: the {pane:?} tile {t:?} covers the {name} {r:?}"
            );
        }
        if let Some(n) = notice_rect(h) {
            assert!(
                !n.intersects(r),
                "{what}: the notices {n:?} cover the {name} {r:?}"
            );
        }
    }
    // The banner's text is not cut: its label is as tall as its two lines (or more, wrapped).
    assert!(banner.height() >= 30.0, "{what}: banner {banner:?}");
}

/// Every tile shown (the log and the arms too).
fn every_tile() -> Settings {
    Settings {
        show_log: true,
        show_arms: true,
        ..Settings::default()
    }
}

#[test]
fn in_an_emergency_the_banner_and_estop_are_whole_with_every_tile_open_in_every_layout() {
    for size in [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)] {
        for named in NamedLayout::ALL {
            let mut settings = every_tile();
            settings.tiles = TileLayout(named.tree());
            let mut app = live_app(ArmFile::demo(), settings);
            emergency(&mut app);
            app.notify(NoticeLevel::Error, "a notice while the arm is stopped");
            let h = harness(app, size);
            assert_banner_and_estop_whole(&h, &format!("{size:?} {named:?}"));
        }
    }
}

#[test]
fn in_an_emergency_the_banner_and_estop_are_whole_after_tiles_are_closed_and_shrunk() {
    for size in [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)] {
        let mut app = live_app(ArmFile::demo(), every_tile());
        emergency(&mut app);
        let mut h = harness(app, size);
        // Close the gauges and the presets with their tabs' close buttons, as an operator.
        for pane in [Pane::Gauges, Pane::Presets] {
            let tab = tiles(&h)[&pane];
            // The tab (its title, above the tile) and the "Close" button in it.
            let tab_rect = h
                .query_all_by_label(pane.title())
                .map(|n| n.rect())
                .find(|r| {
                    r.bottom() <= tab.top() + 1.0
                        && r.left() >= tab.left() - 1.0
                        && r.right() <= tab.right() + 1.0
                })
                .unwrap_or_else(|| panic!("{size:?}: no tab for {pane:?}"));
            let close = h
                .query_all_by_label("Close")
                .map(|n| n.rect())
                .find(|r| tab_rect.expand(1.0).contains_rect(*r))
                .unwrap_or_else(|| panic!("{size:?}: no close button on {pane:?}'s tab"));
            h.hover_at(close.center());
            h.step();
            h.drag_at(close.center());
            h.step();
            h.drop_at(close.center());
            h.step();
            h.step();
            assert!(
                !tiles(&h).contains_key(&pane),
                "{size:?}: {pane:?} still shown after its close button: {:?} {:?}",
                h.state().settings.show_presets,
                tiles(&h)
            );
        }
        assert!(!h.state().settings.show_gauges && !h.state().settings.show_presets);
        assert_banner_and_estop_whole(&h, &format!("{size:?} gauges and presets closed"));
        // Shrink the first tile of every split to nothing (the shares a drag would leave).
        let before = tiles(&h);
        let mut tree = h.state().settings.tiles.0.clone();
        for tile in tree.tiles.tiles_mut() {
            if let egui_tiles::Tile::Container(egui_tiles::Container::Linear(l)) = tile {
                let first = l.children[0];
                l.shares.set_share(first, 0.001);
            }
        }
        h.state_mut().settings.tiles = TileLayout(tree);
        h.step();
        h.step();
        let after = tiles(&h);
        assert!(
            after.iter().any(|(p, r)| before
                .get(p)
                .is_some_and(|b| r.width() < b.width() - 10.0 || r.height() < b.height() - 10.0)),
            "{size:?}: nothing shrank: {before:?} {after:?}"
        );
        assert_banner_and_estop_whole(&h, &format!("{size:?} shrunk"));
        // And back: View → Layout → Reset layout shows every tile again.
        h.state_mut().settings.reset_layout();
        h.step();
        h.step();
        assert!(tiles(&h).contains_key(&Pane::Gauges));
        assert_banner_and_estop_whole(&h, &format!("{size:?} reset"));
    }
}

#[test]
fn notices_never_cover_the_banner_the_top_bar_or_the_preset_list_and_an_info_expires() {
    for size in [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)] {
        let mut app = live_app(ArmFile::demo(), Settings::default());
        emergency(&mut app);
        let mut h = harness(app, size);
        for i in 0..6 {
            h.state_mut().notify(
                NoticeLevel::Info,
                format!(
                    "live arm 126.1.10: command {i} confirmed, a long outcome to wrap the notice \
                     over more than one line in a narrow window"
                ),
            );
        }
        h.state_mut()
            .notify(NoticeLevel::Error, "the export failed: disk full");
        h.step();
        h.step();
        let n = notice_rect(&h).expect("the notices are drawn");
        assert!(
            h.query_all_by_label_contains("disk full").next().is_some(),
            "{size:?}: the error notice is shown"
        );
        let banner = h
            .query_all_by_label_contains("EMERGENCY STOP —")
            .next()
            .unwrap()
            .rect();
        let file = h.query_by_label("File").unwrap().rect();
        let presets = tiles(&h)[&Pane::Presets];
        for (name, r) in [("banner", banner), ("top bar", file), ("presets", presets)] {
            assert!(
                !n.intersects(r),
                "{size:?}: notices {n:?} over the {name} {r:?}"
            );
        }
        assert!(window(&h).contains_rect(n), "{size:?}: notices {n:?}");
        // The Info notices go after a few seconds of frames (egui's clock: 0.25 s a step);
        // the error stays until dismissed.
        for _ in 0..(notice::INFO_SECONDS / 0.25) as usize + 4 {
            h.step();
        }
        let left: Vec<NoticeLevel> = h.state().view.notices.iter().map(|n| n.level).collect();
        assert_eq!(left, vec![NoticeLevel::Error], "{size:?}");
    }
}

/// eframe's storage, in memory.
#[derive(Default)]
struct Memory(HashMap<String, String>);

impl eframe::Storage for Memory {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn the_layout_survives_a_save_and_load_and_a_corrupt_one_loads_as_the_default() {
    let mut settings = every_tile();
    settings.tiles = TileLayout(NamedLayout::Small.tree());
    settings.tiles.make_active(Pane::EventLog);
    settings.show_plots = false;
    let mut app = live_app(ArmFile::demo(), settings.clone());
    let mut storage = Memory::default();
    eframe::App::save(&mut app, &mut storage);
    let loaded = OcuApp::load_settings(Some(&storage));
    assert!(loaded.tiles == settings.tiles, "{loaded:?}");
    assert_eq!(loaded, settings);
    assert!(loaded.tiles != TileLayout::default());
    // A saved tree that names a child that is not there, or is not a tree at all: the
    // default layout, the other settings kept.
    let saved = storage.0.values().next().unwrap().clone();
    let key = storage.0.keys().next().unwrap().clone();
    for (what, broken) in [
        (
            "not a tree",
            saved.replacen("tiles:\"", "tiles:42,old_tiles:\"", 1),
        ),
        ("not JSON", saved.replacen("tiles:\"", "tiles:\"}{", 1)),
        (
            "a dangling child",
            saved.replacen("\\\"children\\\":[", "\\\"children\\\":[999999,", 1),
        ),
    ] {
        assert_ne!(broken, saved, "{what}: the test's edit did not apply");
        let mut corrupt = Memory::default();
        corrupt.0.insert(key.clone(), broken);
        let loaded = OcuApp::load_settings(Some(&corrupt));
        assert!(loaded.tiles == TileLayout::default(), "{what}: {loaded:?}");
        assert!(!loaded.show_plots, "{what}: the other settings are kept");
        // And the window draws with it.
        let h = harness(live_app(ArmFile::demo(), loaded), (1280.0, 800.0));
        assert_every_joint_readable(&h, 7, what);
    }
}

/// Control taken by another OCU: the live area says so without a row of its own.
fn take_control(app: &mut OcuApp) {
    let t = app.now();
    app.apply(&Update::arm(
        ui_common::ARM,
        ArmFact::Control {
            t,
            state: jaus_ocu::model::update::ControlState::Held { authority: 100 },
        },
    ));
    app.apply(&Update::arm(
        ui_common::ARM,
        ArmFact::Control {
            t: t + 0.001,
            state: jaus_ocu::model::update::ControlState::Released,
        },
    ));
    app.apply(&Update::arm(
        ui_common::ARM,
        ArmFact::ControlLost {
            t: t + 0.001,
            reason: jaus_ocu::model::update::ControlLoss::Taken {
                by: ComponentId::new(200, 7, 3),
                authority: 200,
            },
        },
    ));
}

#[test]
fn losing_control_adds_no_row_and_needs_control_is_whole_beside_resume() {
    for size in [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)] {
        let mut h = harness(live_app(ArmFile::demo(), Settings::default()), size);
        let view = |h: &Harness<'_, OcuApp>| tiles(h)[&Pane::View3d];
        let before = view(&h);
        take_control(h.state_mut());
        h.step();
        h.step();
        assert!(
            h.query_all_by_label_contains("no control — taken by 200.7.3")
                .next()
                .is_some(),
            "{size:?}: the loss is said"
        );
        assert_eq!(view(&h), before, "{size:?}: the tiles moved");
        // STANDBY without control: the disabled Resume and "needs control" both whole.
        let t = h.state().now();
        h.state_mut().apply(&Update::arm(
            ui_common::ARM,
            ArmFact::Status {
                t,
                state: ManagementState::Standby,
            },
        ));
        h.step();
        h.step();
        let needs = h
            .query_by_label("needs control")
            .expect("needs control")
            .rect();
        let resume = h
            .query_all_by(|n| text(n).is_some_and(|l| l.starts_with("Resume")))
            .map(|n| n.rect())
            .find(|r| r.bottom() <= before.top())
            .expect("Resume in the top bar");
        // The label's text fits its rect: not cut by the slot (its rect is as wide as its
        // text, and the slot's clip would cut a rect past its end).
        let slot_end = resume.left() + 190.0;
        assert!(
            needs.right() <= slot_end + 0.5 && needs.left() >= resume.right(),
            "{size:?}: needs control {needs:?} cut beside Resume {resume:?}"
        );
        assert_eq!(view(&h), before, "{size:?}: the tiles moved");
    }
}

/// The tab of `pane`: its title's rect above its tile.
fn tab_of(h: &Harness<'_, OcuApp>, pane: Pane) -> Rect {
    let tile = tiles(h)[&pane];
    h.query_all_by_label(pane.title())
        .map(|n| n.rect())
        .find(|r| {
            r.bottom() <= tile.top() + 1.0
                && r.left() >= tile.left() - 1.0
                && r.right() <= tile.right() + 1.0
        })
        .unwrap_or_else(|| panic!("no tab for {pane:?}"))
}

/// Drags `pane`'s tab with the pointer and drops it at `to`, as an operator.
fn drag_tab(h: &mut Harness<'_, OcuApp>, pane: Pane, to: eframe::egui::Pos2) {
    let from = tab_of(h, pane).center();
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    // Past egui's drag threshold, then over the target for a few frames (the drop zone
    // is chosen from where the pointer is).
    for k in 1..=4 {
        let f = k as f32 / 4.0;
        h.hover_at(from + (to - from) * f);
        h.step();
    }
    h.step();
    h.drop_at(to);
    h.step();
    h.step();
}

/// The 3D view is drawn (its canvas at least `min` points tall) and has its tile to itself.
fn assert_view_in_front(h: &Harness<'_, OcuApp>, min: f32, what: &str) {
    let view = h
        .query_by_label("3D arm view")
        .unwrap_or_else(|| panic!("{what}: the 3D view is not drawn"))
        .rect();
    assert!(view.height() >= min, "{what}: 3D view {view:?}");
    assert!(
        h.state().settings.tiles.view3d_stacked_in().is_none(),
        "{what}: the 3D view shares its tabs: {:?}",
        h.state().settings.tiles
    );
}

#[test]
fn the_plots_tab_dropped_on_the_3d_view_goes_back_and_the_arm_stays_in_view() {
    for named in NamedLayout::ALL {
        let settings = Settings {
            tiles: TileLayout(named.tree()),
            ..Settings::default()
        };
        let mut h = harness(live_app(ArmFile::demo(), settings), (1280.0, 800.0));
        let before = h.state().settings.tiles.clone();
        let target = tiles(&h)[&Pane::View3d].center();
        // Aiming at the plots' top edge grabs their tab; dropped on the 3D view.
        drag_tab(&mut h, Pane::Plots, target);
        let what = format!("{named:?}");
        assert_view_in_front(&h, 150.0, &what);
        assert!(
            h.query_all_by_label_contains("The 3D view keeps a tile of its own")
                .next()
                .is_some(),
            "{what}: no notice says the drop was refused: {:?}",
            h.state().view.notices
        );
        assert!(
            h.state().settings.tiles == before,
            "{what}: the layout changed: {:?}",
            h.state().settings.tiles
        );
        // The plots are still drawn where they were.
        assert!(tiles(&h).contains_key(&Pane::Plots), "{what}");
        // A refused drop is not a change to undo.
        assert!(h.state().view.layout_history.is_empty(), "{what}");
    }
}

#[test]
fn ctrl_z_undoes_a_dropped_tab_and_a_layout_saved_with_the_view_stacked_is_repaired() {
    let mut h = harness(
        live_app(ArmFile::demo(), Settings::default()),
        (1280.0, 800.0),
    );
    let before = h.state().settings.tiles.clone();
    // The plots dropped on the gauges' tabs: allowed, the plots become a tab there.
    let gauges = tiles(&h)[&Pane::Gauges].center();
    drag_tab(&mut h, Pane::Plots, gauges);
    let layout = &h.state().settings.tiles;
    let parent = |l: &TileLayout, p: Pane| l.0.tiles.parent_of(l.tile_of(p).unwrap());
    assert_eq!(
        parent(layout, Pane::Plots),
        parent(layout, Pane::Gauges),
        "the drop did not happen: {layout:?}"
    );
    assert!(h.state().settings.tiles != before);
    assert_eq!(h.state().view.layout_history.len(), 1);
    // Ctrl+Z: the tree as it was.
    h.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::Z);
    h.step();
    h.step();
    assert!(
        h.state().settings.tiles == before,
        "{:?}",
        h.state().settings.tiles
    );
    assert!(tiles(&h).contains_key(&Pane::Plots));
    assert_view_in_front(&h, 200.0, "after Ctrl+Z");
    // Ctrl+Z with nothing left to undo says what else to do.
    h.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::Z);
    h.step();
    assert!(
        h.query_all_by_label_contains("No layout change to undo")
            .next()
            .is_some()
    );

    // A layout saved with the 3D view behind the plots (before this rule): the view comes
    // back in front at once, the plots in a tile of their own, and it says so.
    let mut t = egui_tiles::Tiles::default();
    let [view, gauges, plots, presets, log, arms] = Pane::ALL.map(|p| t.insert_pane(p));
    let stack = t.insert_tab_tile(vec![view, plots]);
    if let Some(egui_tiles::Tile::Container(egui_tiles::Container::Tabs(tabs))) = t.get_mut(stack) {
        tabs.set_active(plots);
    }
    let left = t.insert_tab_tile(vec![gauges, arms]);
    let right = t.insert_vertical_tile(vec![presets, log]);
    let root = t.insert_horizontal_tile(vec![left, stack, right]);
    let stacked = egui_tiles::Tree::new(eframe::egui::Id::unique("stacked"), root, t);
    assert!(TileLayout::valid(&stacked));
    let settings = Settings {
        tiles: TileLayout(stacked),
        ..Settings::default()
    };
    assert!(settings.tiles.view3d_stacked_in().is_some());
    let h = harness(live_app(ArmFile::demo(), settings), (1280.0, 800.0));
    assert_view_in_front(&h, 150.0, "a stacked layout loaded");
    assert!(tiles(&h).contains_key(&Pane::Plots));
    assert!(
        h.query_all_by_label_contains("The 3D view was behind the Plots tab")
            .next()
            .is_some(),
        "{:?}",
        h.state().view.notices
    );
}

#[test]
fn a_replay_keeps_its_own_layout_and_the_live_view_gets_its_own_back() {
    let mut h = harness(
        live_app(ArmFile::demo(), Settings::default()),
        (1280.0, 800.0),
    );
    // Live: the small window's layout.
    h.state_mut().settings.tiles = TileLayout(NamedLayout::Small.tree());
    h.step();
    let live_layout = h.state().settings.tiles.clone();
    h.state_mut()
        .open_replay(std::path::Path::new(
            "tests/data/SAE_Management_PacketCapture.pcap",
        ))
        .unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while !h.state().shown().is_replay() {
        assert!(std::time::Instant::now() < until, "the replay never showed");
        std::thread::sleep(Duration::from_millis(10));
        h.step();
    }
    h.step();
    // The replay opens in its own layout (the default, never set), not the live one.
    assert!(h.state().settings.tiles_are_replay);
    assert!(
        shape(&h.state().settings.tiles) == shape(&TileLayout::default())
            && shape(&live_layout) != shape(&TileLayout::default()),
        "{:?}",
        h.state().settings.tiles
    );
    h.state_mut().settings.tiles = TileLayout(NamedLayout::Desk.tree());
    h.step();
    let replay_layout = h.state().settings.tiles.clone();
    // Back to live: the live layout again; the replay's is kept for the next replay, and
    // both survive a save and load of the settings.
    h.state_mut().back_to_live();
    h.step();
    h.step();
    assert!(!h.state().settings.tiles_are_replay);
    assert!(h.state().settings.tiles == live_layout);
    assert!(h.state().settings.other_tiles == replay_layout);
    let mut storage = Memory::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let loaded = OcuApp::load_settings(Some(&storage));
    assert!(loaded.tiles == live_layout && loaded.other_tiles == replay_layout);
}

/// Each pane's containers up to the root, by kind: a layout's shape, whatever its shares.
fn shape(layout: &TileLayout) -> Vec<Vec<egui_tiles::ContainerKind>> {
    let tiles = &layout.0.tiles;
    Pane::ALL
        .iter()
        .map(|p| {
            let mut id = layout.tile_of(*p).unwrap();
            let mut kinds = Vec::new();
            while let Some(parent) = tiles.parent_of(id) {
                // A tab container of one tile is how every pane is drawn (its title).
                if let Some(egui_tiles::Tile::Container(c)) = tiles.get(parent)
                    && !(c.kind() == egui_tiles::ContainerKind::Tabs && c.num_children() == 1)
                {
                    kinds.push(c.kind());
                }
                id = parent;
            }
            kinds
        })
        .collect()
}

#[test]
fn ctrl_q_asks_the_window_to_close() {
    let mut h = harness(
        live_app(ArmFile::demo(), Settings::default()),
        (1280.0, 800.0),
    );
    let closes = |h: &Harness<'_, OcuApp>| {
        h.output()
            .viewport_output
            .values()
            .any(|v| v.commands.contains(&eframe::egui::ViewportCommand::Close))
    };
    assert!(!closes(&h));
    // The press in one frame's input (the harness keeps the last frame's output only).
    let ctrl = eframe::egui::Modifiers::COMMAND;
    let input = h.input_mut();
    input
        .events
        .push(eframe::egui::Event::ModifiersChanged(ctrl));
    input.events.push(eframe::egui::Event::Key {
        key: eframe::egui::Key::Q,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: ctrl,
    });
    h.step();
    assert!(closes(&h), "no Close asked for after Ctrl+Q");
}
