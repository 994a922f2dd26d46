//! The window's clearance (issue 45): beside the jog strip the focused arm's nearest pair and
//! its gap in mm, in the zone's words; every pair allowed to touch listed with its depth and
//! why, the count always said.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::sync::Arc;

use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};
use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::{ArmInput, Part};
use jaus_ocu::model::clearance::{ArmFacts, Clearance, Settings, Zone, joint_name};
use jaus_ocu::model::update::{ArmFact, ControlState, Update};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::app::OcuApp;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

/// The demo arm's preset `name`, as the arm reported it.
fn preset(app: &OcuApp, name: &str) -> Vec<f64> {
    let drawn = app.drawn_state();
    let p = drawn.presets.iter().find(|p| p.name == name);
    p.and_then(|p| p.positions.clone())
        .unwrap_or_else(|| panic!("preset {name} reported with positions"))
}

/// A live demo window on the demo vehicle, the arm seen at home first.
fn demo_window() -> Harness<'static, OcuApp> {
    let (mut app, _out) = live_app(&recorded(1.0, None));
    app.set_vehicle_geometry(Arc::new(VehicleGeometry::demo()));
    let mut h = harness(app);
    h.step();
    h
}

/// The window's line for a pair: its words, the gap in mm and, unless clear, the zone.
fn line_of((words, gap, zone): (String, f64, Zone)) -> String {
    let mm = gap * 1000.0;
    match zone {
        Zone::Clear => format!("nearest: {words} {mm:.0} mm"),
        z => format!("nearest: {words} {mm:.0} mm — {}", z.name()),
    }
}

/// Moves the arm to `q` (a positions report after the recorded session).
fn move_to(h: &mut Harness<'static, OcuApp>, q: &[f64], t: f64) {
    h.state_mut().apply(&Update::arm(
        ARM,
        ArmFact::JointPositions {
            t,
            values: q.to_vec(),
        },
    ));
    h.step();
    h.step();
}

/// The nearest pair at `q` (`allowed`: the nearest of those allowed to touch), measured
/// afresh from the arm's reported specification and presets (seen first at home, as the
/// window saw it), in the window's words.
fn expected(app: &OcuApp, home: &[f64], q: &[f64], allowed: bool) -> (String, f64, Zone) {
    let drawn = app.drawn_state();
    let spec = drawn.spec.as_ref().expect("the arm's specification");
    let settings = Settings {
        band: app.settings.clearance_band,
        margin: app.settings.clearance_margin,
    };
    let mut c = Clearance::new(settings, Arc::new(VehicleGeometry::demo()));
    for positions in [home, q] {
        c.update(&[ArmFacts {
            input: ArmInput {
                id: ARM,
                spec,
                positions,
            },
            presets: &drawn.presets,
        }]);
    }
    let n = if allowed {
        c.nearest_allowed(ARM)
    } else {
        c.nearest(ARM)
    };
    let n = n.expect("a nearest pair").clone();
    let words = c.pair_words(Some(ARM), &n.gap.a, &n.gap.b, |_, j| joint_name(spec, j));
    (words, n.effective, n.zone)
}

fn label_with(h: &Harness<'static, OcuApp>, text: &str) -> String {
    h.query_all_by_label_contains(text)
        .find_map(|n| {
            let node = n.accesskit_node();
            node.label().or_else(|| node.value())
        })
        .unwrap_or_else(|| panic!("a label with {text:?}"))
}

#[test]
fn the_nearest_pair_and_its_gap_in_mm_are_said_beside_the_jog_strip() {
    let mut h = demo_window();
    let home = h
        .state()
        .drawn_state()
        .positions
        .as_ref()
        .expect("positions")
        .value
        .clone();
    let q = preset(h.state(), "Deploy");
    move_to(&mut h, &q, 1.5);
    let want = expected(h.state(), &home, &q, false);
    assert!(want.0.contains(" and "), "a pair: {want:?}");
    assert_eq!(
        label_with(&h, "nearest: "),
        line_of(want),
        "the window's line"
    );
}

#[test]
fn the_allowed_pairs_are_counted_and_listed_with_the_stowed_presets_pairs() {
    let mut h = demo_window();
    let n = h.state().clearance().allowed().len();
    assert!(n > 0, "the demo arm's presets overlap by design");
    let header = format!("{n} pairs allowed to touch");
    h.get_by_label(&header).click();
    h.step();
    h.step();
    let stowed = h
        .query_all_by_label_contains("deepest in preset \"Stowed\"")
        .count();
    assert!(stowed > 0, "the Stowed preset's pairs are listed");
    // Every one with a depth in mm.
    assert!(h.query_all_by_label_contains("mm deep").count() >= stowed);
    assert!(
        h.query_by_label_contains("turret stands on the deck")
            .is_some()
    );
}

#[test]
fn a_pair_inside_the_band_or_closer_is_said_in_its_zones_words() {
    let mut h = demo_window();
    let home = h
        .state()
        .drawn_state()
        .positions
        .as_ref()
        .expect("positions")
        .value
        .clone();
    // Inspect low with the shoulder lowered to 0.13 rad: the gripper about 10 mm above the
    // ground, inside the default 15 mm stop margin.
    let mut deploy = preset(h.state(), "Inspect low");
    deploy[1] = 0.13;
    move_to(&mut h, &deploy, 1.5);
    let want = expected(h.state(), &home, &deploy, false);
    assert_eq!(want.2, Zone::Margin, "{want:?}");
    assert_eq!(label_with(&h, "nearest: "), line_of(want));
    // A margin of 5 mm and a band of 20 mm (the settings feed the window's clearance): the
    // same pair is inside the band.
    h.state_mut().settings.clearance_margin = 0.005;
    h.state_mut().settings.clearance_band = 0.02;
    h.step();
    h.step();
    let want = expected(h.state(), &home, &deploy, false);
    assert_eq!(want.2, Zone::Band, "{want:?}");
    let line = label_with(&h, "nearest: ");
    assert!(line.ends_with("— inside the warning band"), "{line}");
    assert_eq!(line, line_of(want));
    // From Stowed, the telescope 40 mm out: the wrist in the turret (issue 45), in contact.
    let mut q = preset(h.state(), "Stowed");
    q[3] += 0.04;
    move_to(&mut h, &q, 1.6);
    let want = expected(h.state(), &home, &q, false);
    assert_eq!(want.2, Zone::Contact, "{want:?}");
    let line = label_with(&h, "nearest: ");
    assert!(line.ends_with("— in contact"), "{line}");
    assert_eq!(line, line_of(want));
}

/// Runs `jaus-ocu demo --vehicle FILE` with no display: a file that cannot be used stops it
/// before any window, with the file named.
fn demo_with_vehicle(file: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_jaus-ocu"))
        .args(["demo", "--vehicle"])
        .arg(file)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("jaus-ocu runs")
}

#[test]
fn a_missing_or_invalid_vehicle_file_is_an_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("jaus-ocu-vehicle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("no-such-vehicle.toml");
    let out = demo_with_vehicle(&missing);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no-such-vehicle.toml") && err.contains("cannot be read"),
        "{err}"
    );
    let bad = dir.join("bad-vehicle.toml");
    std::fs::write(&bad, "name = \"x\"\n[ground]\nheight = 1.0\n").unwrap();
    let out = demo_with_vehicle(&bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("bad-vehicle.toml"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_band_and_margin_set_in_the_window_travel_with_every_jog_request() {
    use jaus_ocu::model::command::Command;
    let (mut app, mut out) = live_app(&recorded(1.0, None));
    app.settings.clearance_margin = 0.02;
    app.settings.clearance_band = 0.08;
    let mut h = harness(app);
    h.step();
    let plus = h.get_by_label("Jog joint 2 shoulder +").rect();
    let press = |pressed| eframe::egui::Event::PointerButton {
        pos: plus.center(),
        button: eframe::egui::PointerButton::Primary,
        pressed,
        modifiers: eframe::egui::Modifiers::NONE,
    };
    h.event(eframe::egui::Event::PointerMoved(plus.center()));
    h.event(press(true));
    for _ in 0..3 {
        h.step();
    }
    h.event(press(false));
    h.step();
    let jogs: Vec<_> = out
        .sent()
        .iter()
        .filter_map(|c| match c {
            Command::Jog(r) => Some(r.options),
            _ => None,
        })
        .collect();
    assert!(!jogs.is_empty(), "jog requests were sent");
    for o in jogs {
        assert!((o.clearance_margin - 0.02).abs() < 1e-12, "{o:?}");
        assert!((o.clearance_band - 0.08).abs() < 1e-12, "{o:?}");
    }
}

#[test]
fn in_a_small_window_the_clearance_is_one_line_and_the_allowed_pairs_a_popup() {
    let (mut app, _out) = live_app(&recorded(1.0, None));
    app.set_vehicle_geometry(Arc::new(VehicleGeometry::demo()));
    let mut h = ui_common::sized(app, [800.0, 600.0]);
    h.step();
    h.step();
    let n = h.state().clearance().allowed().len();
    assert!(label_with(&h, "nearest: ").contains(" mm"));
    // The count is said on the button that opens the list.
    h.get_by_label(&format!("{n} allowed")).click();
    h.step();
    h.step();
    assert!(
        h.query_by_label(&format!("{n} pairs allowed to touch"))
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("deepest in preset \"Stowed\"")
            .count()
            > 0
    );
}

/// Drags the primary button over the 3D view by `dy` points (no modifier).
fn drag_view(h: &mut Harness<'static, OcuApp>, dy: f32) {
    use eframe::egui::{Event, Modifiers, PointerButton, vec2};
    let rect = h.state().view.arm.rect.expect("the 3D view was drawn");
    let (a, b) = (rect.center(), rect.center() + vec2(0.0, dy));
    h.event(Event::PointerMoved(a));
    let button = |pos, pressed| Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::NONE,
    };
    h.event(button(a, true));
    h.step();
    for k in 1..=8 {
        h.event(Event::PointerMoved(a + (b - a) * (k as f32 / 8.0)));
        h.step();
    }
    h.event(button(b, false));
    h.step();
}

/// Whether a drag up and a drag down of the view (no Ctrl) can take the eye under the ground.
fn eye_goes_below(h: &mut Harness<'static, OcuApp>) -> bool {
    let mut below = false;
    for dy in [-250.0, 500.0, -500.0] {
        drag_view(h, dy);
        below |= !h.state().view.arm.camera.above_ground();
    }
    below
}

#[test]
fn the_eye_may_orbit_under_the_ground_while_an_arm_reaches_below_it() {
    let mut h = demo_window();
    assert!(
        !eye_goes_below(&mut h),
        "above the ground, the eye stops at it without Ctrl"
    );
    // The forearm through the ground (issue 45: the shoulder at its soft stop, the elbow
    // folded): the first such pose of a sweep of the shoulder and the elbow.
    let spec = h
        .state()
        .drawn_state()
        .spec
        .clone()
        .expect("the specification");
    let home = h
        .state()
        .drawn_state()
        .positions
        .as_ref()
        .expect("positions")
        .value
        .clone();
    let vehicle = VehicleGeometry::demo();
    let below = |q: &[f64]| {
        let input = ArmInput {
            id: ARM,
            spec: &spec,
            positions: q,
        };
        jaus_ocu::model::clearance::scene::gaps(&[input], &vehicle, |_| true)
            .iter()
            .any(|g| g.b == Part::Ground && g.contact.gap < -0.05)
    };
    let (lo1, hi1) = (spec.joints[1].min.unwrap(), spec.joints[1].max.unwrap());
    let (lo2, hi2) = (spec.joints[2].min.unwrap(), spec.joints[2].max.unwrap());
    let q = (0..=20)
        .flat_map(|i| (0..=20).map(move |j| (i, j)))
        .map(|(i, j)| {
            let mut q = home.clone();
            q[1] = lo1 + (hi1 - lo1) * f64::from(i) / 20.0;
            q[2] = lo2 + (hi2 - lo2) * f64::from(j) / 20.0;
            q[3] = spec.joints[3].max.unwrap();
            q
        })
        .find(|q| below(q))
        .expect("a pose of the demo arm reaching below the ground");
    move_to(&mut h, &q, 1.5);
    assert!(
        h.state()
            .clearance()
            .checked()
            .iter()
            .any(|k| k.gap.b == Part::Ground && k.gap.contact.gap < 0.0),
        "the window's clearance sees it"
    );
    assert!(
        eye_goes_below(&mut h),
        "the part under the ground can be seen"
    );
}

/// Before Go to, the confirmation says the preset's clearance at the target and along a
/// joint-interpolated path (advice: the arm plans its own).
#[test]
fn go_to_a_preset_says_its_clearance_before_the_confirmation() {
    let mut h = demo_window();
    h.state_mut().apply(&Update::arm(
        ARM,
        ArmFact::Control {
            t: 1.0,
            state: ControlState::Held { authority: 100 },
        },
    ));
    h.step();
    let goal = ArmFile::demo().presets[3].clone();
    h.get_by_label_contains(&goal.name).click();
    h.step();
    h.get_by_label_contains("Go to").click();
    h.step();
    h.step();
    h.get_by_label("Confirm");
    let target = h.query(By::new().label_contains("At the target: nearest"));
    assert!(target.is_some(), "the target's nearest pair is said");
    let path = h.query(By::new().label_contains("Along a joint-interpolated path"));
    assert!(path.is_some(), "the path's nearest pair is said");
}
