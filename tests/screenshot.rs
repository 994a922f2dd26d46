//! `jaus-ocu screenshot` end to end: the whole UI rendered offscreen through EGL on Mesa's
//! software device into a pbuffer (no display, no GPU). The PNG must show the UI (many
//! colours), the SIMULATED badge, and the 3D view's tool marker, which only the three-d paint
//! callback draws: proof that the callback ran inside `egui_glow`'s paint.
//!
//! Needs Mesa's EGL at run time (Debian: `libegl1 libegl-mesa0 libgl1-mesa-dri`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use jaus_ocu::model::update::*;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::vehicle::vehicle_updates;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::commands::UiCommand;
use jaus_ocu::ui::scene::ScenePalette;
use jaus_ocu::ui::screenshot::{Scenario, render, scenario_app, simulated_app};
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;
use jaus_ocu::ui::theme::Theme;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jaus-ocu"))
        .args(args)
        .output()
        .expect("jaus-ocu runs")
}

/// Pixels within `tolerance` (per channel) of `rgb`.
fn count_near(image: &image::RgbaImage, rgb: [u8; 3], tolerance: u8) -> usize {
    image
        .pixels()
        .filter(|p| (0..3).all(|c| p.0[c].abs_diff(rgb[c]) <= tolerance))
        .count()
}

#[test]
fn screenshot_shows_the_ui_the_badge_and_the_3d_arm() {
    let out: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "screenshot_test_shot.png"]
        .iter()
        .collect();
    let _ = std::fs::remove_file(&out);
    let o = run(&[
        "screenshot",
        "--out",
        out.to_str().unwrap(),
        "--size",
        "800x500",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "exit {:?}: {stderr}", o.status.code());
    assert!(String::from_utf8_lossy(&o.stdout).contains("800x500"));

    let image = image::open(&out)
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()))
        .to_rgba8();
    assert_eq!(image.dimensions(), (800, 500));

    let colours: HashSet<[u8; 3]> = image.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]).collect();
    assert!(
        colours.len() > 500,
        "only {} distinct colours: blank?",
        colours.len()
    );

    let badge = Theme::new(true).simulated.to_array();
    let badge_pixels = count_near(&image, [badge[0], badge[1], badge[2]], 3);
    assert!(
        badge_pixels >= 20,
        "SIMULATED badge colour {badge:?}: {badge_pixels} pixels"
    );

    // Only the three-d paint callback draws these: the view's background (its partial clear)
    // and the tool-point marker (flat, over everything; a few pixels at this size).
    let palette = ScenePalette::new(true);
    let to_u8 = |c: [f32; 3]| c.map(|v| (v * 255.0).round() as u8);
    let background = to_u8(palette.background);
    let background_pixels = count_near(&image, background, 1);
    assert!(
        background_pixels >= 5000,
        "3D background colour {background:?}: {background_pixels} pixels (did the paint callback run?)"
    );
    let marker = to_u8(palette.tool_marker);
    let marker_pixels = count_near(&image, marker, 3);
    assert!(
        marker_pixels >= 3,
        "3D tool marker colour {marker:?}: {marker_pixels} pixels (is the arm drawn?)"
    );
}

#[test]
fn a_bad_size_fails_with_a_message_and_exit_2() {
    let out: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "screenshot_bad_size.png"]
        .iter()
        .collect();
    let o = run(&["screenshot", "--out", out.to_str().unwrap(), "--size", "10"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--size 10") && stderr.contains("WIDTHxHEIGHT"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn an_unwritable_path_fails_with_a_message_and_exit_2() {
    let out: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "no such dir", "shot.png"]
        .iter()
        .collect();
    let o = run(&[
        "screenshot",
        "--out",
        out.to_str().unwrap(),
        "--size",
        "800x500",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("cannot write") && stderr.contains("no such dir"),
        "{stderr}"
    );
}

#[test]
fn the_simulated_session_moves_the_arm_off_home() {
    let arm = ArmFile::demo();
    let home = arm.home.clone();
    let app = simulated_app(arm, 6.0);
    let q = app
        .drawn_state()
        .positions
        .expect("positions arrived")
        .value;
    assert_eq!(q.len(), home.len());
    let moved = q
        .iter()
        .zip(&home)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        moved > 0.1,
        "largest joint move {moved}: {q:?} vs home {home:?}"
    );
    assert!(
        app.drawn_state().spec.is_some(),
        "the specification arrived"
    );
    let ft = app
        .vehicle()
        .read()
        .expect("session lock")
        .focused()
        .ft
        .len();
    assert!(ft > 100, "force/torque history: {ft}");
    // The app follows "live" at the end of the session: its clock stopped there.
    assert_eq!(app.time_control().cursor(), None);
    let now = app.now();
    assert!((5.9..=6.1).contains(&now), "now {now}");
}

#[test]
fn the_same_app_renders_twice_alike() {
    let mut app = simulated_app(ArmFile::demo(), 6.0);
    let first = render(&mut app, 800, 500).unwrap_or_else(|e| panic!("{e}"));
    // A new EGL context: the 3D view must make its GPU objects again, not reuse stale ones.
    let second = render(&mut app, 800, 500).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.dimensions(), (800, 500));
    let marker = ScenePalette::new(true)
        .tool_marker
        .map(|c| (c * 255.0).round() as u8);
    assert!(count_near(&first, marker, 3) >= 3, "the 3D arm is drawn");
    let differing = first
        .pixels()
        .zip(second.pixels())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differing, 0,
        "pixels that differ between two renders of the same app"
    );
}

#[test]
fn screenshot_of_a_replay_shows_the_replay_badge_and_refuses_a_time_outside_the_file() {
    let sae = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/SAE_Management_PacketCapture.pcap"
    );
    let out: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "screenshot_replay_shot.png"]
        .iter()
        .collect();
    let _ = std::fs::remove_file(&out);
    let o = run(&[
        "screenshot",
        "--replay",
        sae,
        "--at",
        "90",
        "--size",
        "800x500",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let image = image::open(&out).unwrap().to_rgba8();
    let badge = Theme::new(true).replay.to_array();
    let badge_pixels = count_near(&image, [badge[0], badge[1], badge[2]], 3);
    assert!(
        badge_pixels >= 20,
        "REPLAY badge colour {badge:?}: {badge_pixels} pixels"
    );

    let o = run(&[
        "screenshot",
        "--replay",
        sae,
        "--at",
        "1000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--at 1000: give a time between 0 and 92.046 s"),
        "{err}"
    );
}

#[test]
fn the_emergency_and_lost_link_scenarios_show_their_banner_and_a_bad_name_fails() {
    use jaus_ocu::ui::screenshot::{Scenario, scenario_app};
    let danger = Theme::new(true).danger.to_array();
    let danger = [danger[0], danger[1], danger[2]];
    let normal = render(&mut simulated_app(ArmFile::demo(), 3.0), 1280, 800).unwrap();
    let emergency = render(
        &mut scenario_app(ArmFile::demo(), 3.0, Scenario::Emergency),
        1280,
        800,
    )
    .unwrap();
    // The red banner across the window and the red frame around the 3D view.
    let (n, e) = (
        count_near(&normal, danger, 2),
        count_near(&emergency, danger, 2),
    );
    assert!(e > n + 20_000, "emergency red pixels {e}, normal {n}");
    let app = scenario_app(ArmFile::demo(), 3.0, Scenario::Lost);
    assert!(
        app.drawn_state().freshness().is_lost(),
        "{:?}",
        app.drawn_state().link
    );
    let o = run(&["screenshot", "--out", "x.png", "--scenario", "meltdown"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "expected normal, emergency, emergency-held, taken, lost, vehicle-two-arms, joint-plots, event-log or shift"
    ));
}

#[test]
fn the_taken_and_emergency_held_scenarios_end_as_they_say() {
    use jaus_ocu::model::update::{ControlLoss, ControlState, ManagementState};
    use jaus_ocu::ui::screenshot::{OTHER_AUTHORITY, OTHER_OCU, Scenario, scenario_app};
    // Another OCU took control: the arm says who, the client says why ours was lost.
    let app = scenario_app(ArmFile::demo(), 3.0, Scenario::Taken);
    let (by, _) = OTHER_OCU;
    assert_eq!(app.drawn_state().control, ControlState::Released);
    assert_eq!(
        app.drawn_state().control_words(),
        format!("held by {by} (authority {OTHER_AUTHORITY})")
    );
    assert!(
        matches!(app.drawn_state().control_loss, Some((_, ControlLoss::Taken { by: b, .. })) if b == by),
        "{:?}",
        app.drawn_state().control_loss
    );
    // Control held, then the emergency stop.
    let app = scenario_app(ArmFile::demo(), 3.0, Scenario::EmergencyHeld);
    assert_eq!(app.drawn_state().status, ManagementState::Emergency);
    assert!(matches!(
        app.drawn_state().control,
        ControlState::Held { .. }
    ));
}

/// Pixels of the focused arm's tool marker and of the other arms' (dimmed) in `image`.
fn markers(image: &image::RgbaImage) -> (usize, usize) {
    let palette = ScenePalette::new(true);
    let to_u8 = |c: [f32; 3]| c.map(|v| (v * 255.0).round() as u8);
    (
        count_near(image, to_u8(palette.tool_marker), 3),
        count_near(image, to_u8(palette.dimmed(palette.tool_marker)), 3),
    )
}

#[test]
fn a_two_arm_vehicle_draws_both_arms_the_other_one_dimmed() {
    // Fed as a network side following both arms publishes them (each fact wrapped for its
    // arm), whatever the client of this build follows.
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
    let updates = vehicle_updates(&ArmFile::demo(), 2, 4.0);
    for u in &updates {
        app.apply(u);
    }
    app.freeze_clock(updates.iter().map(Update::t).fold(0.0, f64::max));
    // The whole vehicle framed (R): following the focused arm, the other may stand behind it.
    app.run(UiCommand::ResetCamera);
    let image = render(&mut app, 1280, 800).unwrap_or_else(|e| panic!("{e}"));
    let out: PathBuf = [env!("CARGO_TARGET_TMPDIR"), "vehicle_two_arms_test.png"]
        .iter()
        .collect();
    image.save(&out).unwrap();
    assert_eq!(
        app.view.arm.drawn_arms(),
        [ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11)]
    );
    let (focused, other) = markers(&image);
    assert!(
        focused >= 3,
        "the focused arm's tool marker: {focused} pixels"
    );
    assert!(
        other >= 3,
        "the other arm's dimmed tool marker: {other} pixels ({})",
        out.display()
    );
}

/// The scenario `jaus-ocu screenshot --scenario vehicle-two-arms` renders, through the real
/// client in memory with two simulated peers: both arms once the network side follows every
/// arm it finds (issue 19's client).
#[test]
fn the_vehicle_two_arms_scenario_draws_both_arms() {
    let mut app = scenario_app(ArmFile::demo(), 4.0, Scenario::VehicleTwoArms);
    let image = render(&mut app, 1280, 800).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        app.view.arm.drawn_arms().len(),
        2,
        "{:?}",
        app.view.arm.drawn_arms()
    );
    let (focused, other) = markers(&image);
    assert!(focused >= 3 && other >= 3, "{focused} {other}");
    assert_eq!(
        Scenario::parse("vehicle-two-arms"),
        Ok(Scenario::VehicleTwoArms)
    );
}
