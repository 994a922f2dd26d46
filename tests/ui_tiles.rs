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

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use eframe::egui::{Rect, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::panels::notices::{self, NoticeLevel};
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;
use jaus_ocu::ui::tiles::{NamedLayout, Pane, TileLayout};

/// Updates from `seconds` of an in-memory session between the real client and a simulated
/// `arm`.
fn recorded(arm: ArmFile, seconds: f64) -> Vec<Update> {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let cfg = ClientConfig {
        connect: vec![sim_addr],
        multicast: None,
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, ocu_addr, Duration::from_millis(2), 1);
    net.add_peer(sim_addr, Component::new(arm, SimConfig::default()));
    for _ in 0..(seconds / 0.002) as usize {
        net.step();
    }
    net.updates
}

/// The simulated arm's ID.
fn arm_id() -> ComponentId {
    ComponentId::new(126, 1, 10)
}

/// A live app (detached network handle) with 2 s of `arm`, the clock at the end.
fn live_app(arm: ArmFile, settings: Settings) -> OcuApp {
    let updates = recorded(arm, 2.0);
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
    let mut h = Harness::builder()
        .with_size([w, h])
        .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app);
    for _ in 0..3 {
        h.step();
    }
    h
}

fn window(h: &Harness<'_, OcuApp>) -> Rect {
    Rect::from_min_size(pos2(0.0, 0.0), h.ctx.content_rect().size())
}

/// A node's text as `egui_kittest` matches it: a label keeps its text as its value.
fn text(n: &egui_kittest::kittest::AccessKitNode<'_>) -> Option<String> {
    if n.role() == eframe::egui::accesskit::Role::Label {
        n.value()
    } else {
        n.label()
    }
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
        arm_id(),
        ArmFact::Status {
            t,
            state: ManagementState::Emergency,
        },
    ));
}

/// The notices' area as drawn last frame, when it holds a notice.
fn notice_rect(h: &Harness<'_, OcuApp>) -> Option<Rect> {
    if h.state().view.notices.is_empty() {
        return None;
    }
    h.ctx.memory(|m| m.area_rect(notices::area_id()))
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
        for _ in 0..(notices::INFO_SECONDS / 0.25) as usize + 4 {
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
        arm_id(),
        ArmFact::Control {
            t,
            state: jaus_ocu::model::update::ControlState::Held { authority: 100 },
        },
    ));
    app.apply(&Update::arm(
        arm_id(),
        ArmFact::Control {
            t: t + 0.001,
            state: jaus_ocu::model::update::ControlState::Released,
        },
    ));
    app.apply(&Update::arm(
        arm_id(),
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
            arm_id(),
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
