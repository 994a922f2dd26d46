//! The 3D view follows the arm (issue 30): through the real UI code with `egui_kittest`, the
//! demo arm touring its presets (the simulator's idle tour, as `jaus-ocu demo` runs it) stays
//! whole in the view — every joint point and the tool point, projected with the view's own
//! camera — for the whole tour, in a 1280×800 and an 800×600 window and across a resize to
//! 1920×1080; orbiting leaves the follow mode and F returns to it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use eframe::egui::{self, Event, Modifiers, PointerButton};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::DVec3;
use jaus_ocu::model::kinematics::forward;
use jaus_ocu::model::update::*;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::harness::simulated_updates;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::panels::view3d::Follow;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;

/// Seconds of the demo's tour: from the stowed home through every preset and back.
const TOUR_SECONDS: f64 = 60.0;

/// Wall-clock seconds of the session between two frames drawn.
const FRAME_STEP: f64 = 0.25;

fn live_app() -> OcuApp {
    let (net, _rx, _updates) = NetHandle::detached(Epoch::now());
    OcuApp::new(
        LiveKind::Simulated,
        Some(net),
        Vec::new(),
        Settings::default(),
    )
}

fn harness(size: [f32; 2]) -> Harness<'static, OcuApp> {
    ui_common::sized(live_app(), size)
}

fn positions_of(u: &Update) -> Option<(f64, &[f64])> {
    match u {
        Update::Arm {
            fact: ArmFact::JointPositions { t, values },
            ..
        } => Some((*t, values.as_slice())),
        _ => None,
    }
}

/// The base, every joint point and the tool point of the demo arm at `q`, vehicle frame.
fn arm_points(file: &ArmFile, q: &[f64]) -> Vec<DVec3> {
    let pose = forward(&file.spec, q, file.tool_point).unwrap();
    let mut points = vec![pose.mount.translation, pose.tool_point_vehicle];
    points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
    points
}

/// Plays the tour into a window of `size`, resized to `resize` halfway; after every frame
/// the pose drawn must be whole inside the 3D view.
fn tour_stays_in_view(size: [f32; 2], resize: Option<[f32; 2]>) {
    let file = ArmFile::demo();
    let updates = simulated_updates(file.clone(), TOUR_SECONDS);
    let mut h = harness(size);
    let (mut next, mut frames, mut checked) = (0_usize, 0_u32, 0_usize);
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let end = updates
        .iter()
        .filter_map(positions_of)
        .map(|(t, _)| t)
        .fold(0.0, f64::max);
    let mut t = FRAME_STEP;
    let mut width_before = None;
    while t <= end {
        let mut batch = Vec::new();
        while let Some(u) = updates.get(next) {
            if u.t() > t {
                break;
            }
            h.state_mut().apply(u);
            if let Some((_, q)) = positions_of(u) {
                batch.push(q.to_vec());
            }
            next += 1;
        }
        h.state_mut().freeze_clock(t);
        if let Some(to) = resize.filter(|_| frames == (end / FRAME_STEP / 2.0) as u32) {
            width_before = h.state().view.arm.rect.map(|r| r.width());
            h.set_size(egui::Vec2::from(to));
        }
        h.step();
        frames += 1;
        let panel = &h.state().view.arm;
        let Some(rect) = panel.rect else {
            t += FRAME_STEP;
            continue;
        };
        if h.state().view.arm.drawn_arms().is_empty() {
            t += FRAME_STEP;
            continue;
        }
        assert_ne!(panel.follow(), Follow::Free, "nothing left the follow mode");
        // The pose drawn: the last of the frame's updates.
        if let Some(q) = batch.last() {
            for p in arm_points(&file, q) {
                lo = lo.min(p);
                hi = hi.max(p);
                let at = panel
                    .camera
                    .project(p.to_array(), [rect.width(), rect.height()]);
                assert!(
                    at.is_some_and(|[x, y]| (0.0..=rect.width()).contains(&x)
                        && (0.0..=rect.height()).contains(&y)),
                    "{size:?} at t = {t:.2} s: {p} drawn at {at:?}, outside the {:?} view",
                    rect.size()
                );
                checked += 1;
            }
        }
        t += FRAME_STEP;
    }
    // The tour did tour: the arm swept well over a metre, and every pose was checked.
    let swept = hi - lo;
    assert!(
        swept.x > 1.0 && swept.z > 0.5,
        "the tour swept only {swept} m"
    );
    assert!(checked > 1_500, "only {checked} points checked");
    if let Some(r) = resize {
        let rect = h.state().view.arm.rect.unwrap();
        let before = width_before.expect("the view was drawn before the resize");
        // The window 1.5 times as wide: the view's share of it grows as much, less the
        // fixed widths beside it.
        assert!(
            rect.width() > before * 1.3 && r[0] > size[0],
            "the view grew with the window: {before} -> {rect:?}"
        );
    }
}

#[test]
fn the_touring_demo_arm_stays_in_a_1280x800_view() {
    tour_stays_in_view([1280.0, 800.0], None);
}

#[test]
fn the_touring_demo_arm_stays_in_an_800x600_view() {
    tour_stays_in_view([800.0, 600.0], None);
}

#[test]
fn the_touring_demo_arm_stays_in_view_across_a_resize_to_1920x1080() {
    tour_stays_in_view([1280.0, 800.0], Some([1920.0, 1080.0]));
}

#[test]
fn orbiting_leaves_follow_and_f_returns_to_it() {
    let file = ArmFile::demo();
    let updates = simulated_updates(file, 3.0);
    let mut h = harness([1280.0, 800.0]);
    for u in &updates {
        h.state_mut().apply(u);
    }
    h.state_mut().freeze_clock(3.0);
    h.step();
    h.step();
    assert_eq!(h.state().view.arm.follow(), Follow::Arm);
    let rect = h.state().view.arm.rect.expect("the 3D view was drawn");
    let (a, b) = (rect.center(), rect.center() + egui::vec2(60.0, 10.0));
    h.event(Event::PointerMoved(a));
    h.event(Event::PointerButton {
        pos: a,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.event(Event::PointerMoved(b));
    h.step();
    h.event(Event::PointerButton {
        pos: b,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    assert_eq!(
        h.state().view.arm.follow(),
        Follow::Free,
        "the drag left it"
    );
    let turned = h.state().view.arm.camera.yaw;
    // The toolbar says how to come back.
    h.get_by_label_contains("free camera · F: follow");
    h.key_press(egui::Key::F);
    h.step();
    h.step();
    assert_eq!(h.state().view.arm.follow(), Follow::Arm);
    assert!(
        (h.state().view.arm.camera.yaw - turned).abs() < 1e-9,
        "F follows from where the operator looks"
    );
    h.key_press(egui::Key::R);
    h.step();
    assert_eq!(h.state().view.arm.follow(), Follow::Vehicle);
}
