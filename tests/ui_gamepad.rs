//! The gamepad panel through the real UI code with `egui_kittest`, fed by a fake pad through
//! the same snapshot path as the gilrs worker: the mapping table, the pad's name, the enable's
//! state, the page, the unplugged pad and missing gamepad support.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::jog::{Deflection, EnableState};
use jaus_ocu::ui::gamepad::worker::FAKE_NAME;
use jaus_ocu::ui::gamepad::{
    Axis, Button, FakePad, Gamepad, Mapping, PadIntent, PadState, RawPad, Snapshot, Support,
};
use jaus_ocu::ui::panels::gamepad;
use jaus_ocu::ui::theme::Theme;

/// What the app would hold: the pad, the mapping and the intent of the last frame.
struct State {
    gamepad: Gamepad,
    mapping: Mapping,
    pad: PadState,
    intent: Option<PadIntent>,
}

fn harness() -> (Harness<'static, State>, FakePad) {
    let (gp, fake) = Gamepad::fake();
    let mapping = Mapping::default();
    let state = State {
        gamepad: gp,
        pad: PadState::new(&mapping),
        mapping,
        intent: None,
    };
    let theme = Theme::new(true);
    let h = Harness::builder()
        .with_size(egui::vec2(700.0, 600.0))
        .build_ui_state(
            move |ui, s: &mut State| {
                let snapshot = s.gamepad.snapshot();
                let intent = s.mapping.intent(&snapshot.pad, 6, &mut s.pad);
                gamepad::show(ui, &theme, &s.mapping, &snapshot, Some(&intent));
                s.intent = Some(intent);
            },
            state,
        );
    (h, fake)
}

#[test]
fn the_panel_shows_the_mapping_and_the_live_pad() {
    let (mut h, fake) = harness();
    h.run();
    h.get_by_label("no gamepad connected");
    h.get_by_label("Sticks: released (no gamepad)");
    h.get_by_label_contains("enable: released (up to 0.1) = off · held (from 0.25) = on");
    h.get_by_label("left_stick_y: joint 1, right_stick_y: joint 2");
    h.get_by_label("left_stick_x: -linear_y, left_stick_y: linear_x, right_stick_y: linear_z");
    h.get_by_label_contains("not a safety-rated enabling device");

    // Plugged in at rest, then the enable released, then held with the left stick pushed.
    fake.set(RawPad::at_rest());
    h.run();
    h.get_by_label(&format!("connected: {FAKE_NAME}"));
    h.get_by_label("released: off");
    h.get_by_label("Joint mode, page 1 of 3");
    fake.set(
        RawPad::at_rest()
            .with_button(Button::LeftTrigger, 0.5)
            .with_axis(Axis::LeftStickY, 0.8),
    );
    h.run();
    h.get_by_label("held: motion allowed");
    let intent = h.state().intent.clone().unwrap();
    assert_eq!(intent.enable, EnableState::Enabled);
    assert!(matches!(intent.deflection, Deflection::Joints(ref d) if d[0] > 0.0));

    // The next page: joints 3 and 4, after the sticks centre.
    fake.set(RawPad::at_rest().with_button(Button::RightBumper, 1.0));
    h.run();
    fake.set(RawPad::at_rest());
    h.run();
    h.get_by_label("Joint mode, page 2 of 3");
    h.get_by_label("joint 3");

    // Squeezed fully, then unplugged.
    fake.set(RawPad::at_rest().with_button(Button::LeftTrigger, 1.0));
    h.run();
    h.get_by_label("squeezed fully: off until released");
    fake.unplug();
    h.run();
    h.get_by_label("no gamepad connected");
    h.get_by_label("off until the trigger is fully released");
    let intent = h.state().intent.clone().unwrap();
    assert!(!intent.connected);
    assert_eq!(intent.deflection, Deflection::Released);
}

#[test]
fn the_panel_says_why_there_is_no_gamepad_support() {
    let mapping = Mapping::default();
    let snapshot = Snapshot::empty(Support::Missing("udev could not be opened".into()));
    let theme = Theme::new(false);
    let mut h = Harness::new_ui(|ui| gamepad::show(ui, &theme, &mapping, &snapshot, None));
    h.run();
    h.get_by_label("no gamepad support: udev could not be opened");
    // Each stick axis: its name and its bar (a slider-like widget with the same name).
    assert_eq!(h.query_all_by_label("left_stick_x").count(), 2);
}
