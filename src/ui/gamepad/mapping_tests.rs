//! The mapping's tests: the default equals the example file, each axis drives the right joint
//! on each page, deadband and inversion, tool mode, the enable through a trigger sweep,
//! unplugging, and the mapping file's error messages.

use std::path::Path;

use super::mapping::*;
use crate::model::jog::{Deflection, EnableState, Frame};

fn pad() -> RawPad {
    RawPad::at_rest()
}

/// A default mapping and its state after the pad has connected at rest with the enable
/// released (armed), for an arm of `joints` joints.
fn connected(joints: usize) -> (Mapping, PadState) {
    let m = Mapping::default();
    let mut s = PadState::new(&m);
    let i = m.intent(&pad(), joints, &mut s);
    assert!(i.connected);
    assert_eq!(i.enable, EnableState::Released);
    (m, s)
}

/// Presses and releases `button` (one edge).
fn click(m: &Mapping, s: &mut PadState, joints: usize, button: Button) -> PadIntent {
    m.intent(&pad().with_button(button, 1.0), joints, s);
    m.intent(&pad(), joints, s)
}

fn joints_of(i: &PadIntent) -> Vec<f64> {
    match &i.deflection {
        Deflection::Joints(d) => d.clone(),
        other => panic!("not a joint deflection: {other:?}"),
    }
}

#[test]
fn the_default_mapping_equals_the_example_file() {
    let from_file = Mapping::parse(EXAMPLE_TOML, Path::new("assets/gamepad.toml")).unwrap();
    assert_eq!(from_file, Mapping::default());
    // And the default written out reads back the same.
    let again = Mapping::parse(&Mapping::default().to_toml(), Path::new("x.toml")).unwrap();
    assert_eq!(again, Mapping::default());
}

#[test]
fn load_reads_the_example_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/gamepad.toml");
    assert_eq!(Mapping::load(&path).unwrap(), Mapping::default());
}

#[test]
fn each_page_drives_its_joints_with_the_vertical_axes() {
    let (m, mut s) = connected(7);
    let expected = [(1, Some(2)), (3, Some(4)), (5, Some(6)), (7, None)];
    for (page, (left, right)) in expected.into_iter().enumerate() {
        let i = m.intent(&pad(), 7, &mut s);
        assert_eq!((i.page, i.pages), (page, 4));
        let i = m.intent(&pad().with_axis(Axis::LeftStickY, 1.0), 7, &mut s);
        assert_eq!(
            joints_of(&i),
            Deflection::joint(7, left - 1, 1.0).joints_or_empty()
        );
        let i = m.intent(&pad().with_axis(Axis::RightStickY, -1.0), 7, &mut s);
        match right {
            Some(r) => {
                assert_eq!(
                    joints_of(&i),
                    Deflection::joint(7, r - 1, -1.0).joints_or_empty()
                );
            }
            None => assert_eq!(i.deflection, Deflection::Released),
        }
        click(&m, &mut s, 7, Button::RightBumper);
    }
    // The last page stays the last.
    assert_eq!(m.intent(&pad(), 7, &mut s).page, 3);
}

/// Test helper: the joint vector of a `Deflection::joint`.
trait JointsOrEmpty {
    fn joints_or_empty(&self) -> Vec<f64>;
}

impl JointsOrEmpty for Deflection {
    fn joints_or_empty(&self) -> Vec<f64> {
        match self {
            Deflection::Joints(d) => d.clone(),
            _ => Vec::new(),
        }
    }
}

#[test]
fn a_six_joint_arm_has_three_pages_and_previous_stops_at_the_first() {
    let (m, mut s) = connected(6);
    for _ in 0..5 {
        click(&m, &mut s, 6, Button::RightBumper);
    }
    let i = m.intent(&pad(), 6, &mut s);
    assert_eq!((i.page, i.pages), (2, 3));
    let i = m.intent(&pad().with_axis(Axis::RightStickY, 0.6), 6, &mut s);
    assert_eq!(i.axes.len(), 2);
    assert!(joints_of(&i)[5] > 0.0);
    for _ in 0..5 {
        click(&m, &mut s, 6, Button::LeftBumper);
    }
    assert_eq!(m.intent(&pad(), 6, &mut s).page, 0);
}

#[test]
fn horizontal_axes_drive_nothing_in_joint_mode() {
    let (m, mut s) = connected(7);
    let raw = pad()
        .with_axis(Axis::LeftStickX, 1.0)
        .with_axis(Axis::RightStickX, -1.0);
    assert_eq!(m.intent(&raw, 7, &mut s).deflection, Deflection::Released);
}

#[test]
fn the_deadband_zeroes_drift_and_the_rest_is_rescaled() {
    let (m, mut s) = connected(7);
    let at = |s: &mut PadState, v: f64| {
        let i = m.intent(&pad().with_axis(Axis::LeftStickY, v), 7, s);
        match i.deflection {
            Deflection::Released => 0.0,
            _ => joints_of(&i)[0],
        }
    };
    assert_eq!(at(&mut s, 0.1), 0.0);
    assert_eq!(at(&mut s, -0.15), 0.0);
    assert!((at(&mut s, 0.575) - 0.5).abs() < 1e-9);
    assert_eq!(at(&mut s, 1.0), 1.0);
    assert_eq!(at(&mut s, -1.0), -1.0);
    // Out of range and unreadable values.
    assert_eq!(at(&mut s, 3.0), 1.0);
    assert_eq!(at(&mut s, f64::NAN), 0.0);
}

#[test]
fn an_inverted_axis_is_reversed() {
    let m = Mapping {
        invert: vec![Axis::LeftStickY],
        ..Mapping::default()
    };
    let mut s = PadState::new(&m);
    m.intent(&pad(), 7, &mut s);
    let i = m.intent(&pad().with_axis(Axis::LeftStickY, 1.0), 7, &mut s);
    assert_eq!(joints_of(&i)[0], -1.0);
    let i = m.intent(&pad().with_axis(Axis::RightStickY, 1.0), 7, &mut s);
    assert_eq!(joints_of(&i)[1], 1.0);
}

#[test]
fn tool_mode_drives_the_twist_with_its_signs_and_the_frame_toggles() {
    let (m, mut s) = connected(6);
    let i = click(&m, &mut s, 6, Button::North);
    assert_eq!(
        (i.mode, i.page, i.pages, i.frame),
        (Mode::Tool, 0, 2, Frame::Base)
    );
    let raw = pad()
        .with_axis(Axis::LeftStickY, 1.0)
        .with_axis(Axis::LeftStickX, 1.0)
        .with_axis(Axis::RightStickY, -1.0);
    let i = m.intent(&raw, 6, &mut s);
    assert_eq!(
        i.deflection,
        Deflection::Twist {
            axes: [1.0, -1.0, -1.0, 0.0, 0.0, 0.0],
            frame: Frame::Base
        }
    );
    m.intent(&pad(), 6, &mut s);
    let i = click(&m, &mut s, 6, Button::West);
    assert_eq!(i.frame, Frame::Tool);
    click(&m, &mut s, 6, Button::RightBumper);
    let raw = pad()
        .with_axis(Axis::LeftStickX, 1.0)
        .with_axis(Axis::LeftStickY, 1.0)
        .with_axis(Axis::RightStickX, 1.0);
    let i = m.intent(&raw, 6, &mut s);
    assert_eq!(
        i.deflection,
        Deflection::Twist {
            axes: [0.0, 0.0, 0.0, 1.0, 1.0, -1.0],
            frame: Frame::Tool
        }
    );
    // Back to joint mode, page 1.
    m.intent(&pad(), 6, &mut s);
    let i = click(&m, &mut s, 6, Button::North);
    assert_eq!((i.mode, i.page), (Mode::Joint, 0));
}

#[test]
fn a_stick_held_through_a_page_change_drives_nothing_until_centred() {
    let (m, mut s) = connected(7);
    let held = pad().with_axis(Axis::LeftStickY, 1.0);
    assert!(joints_of(&m.intent(&held, 7, &mut s))[0] > 0.0);
    let i = m.intent(&held.with_button(Button::RightBumper, 1.0), 7, &mut s);
    assert_eq!(i.page, 1);
    assert_eq!(i.deflection, Deflection::Released);
    assert!(i.recentring);
    let i = m.intent(&held, 7, &mut s);
    assert_eq!(i.deflection, Deflection::Released);
    // Centred, then pushed again: now it drives joint 3.
    assert!(!m.intent(&pad(), 7, &mut s).recentring);
    let i = m.intent(&held, 7, &mut s);
    assert_eq!(joints_of(&i)[2], 1.0);
}

#[test]
fn a_stick_held_as_the_pad_connects_drives_nothing_until_centred() {
    let m = Mapping::default();
    let mut s = PadState::new(&m);
    let held = pad().with_axis(Axis::LeftStickY, 1.0);
    assert_eq!(m.intent(&held, 7, &mut s).deflection, Deflection::Released);
    m.intent(&pad(), 7, &mut s);
    assert_eq!(joints_of(&m.intent(&held, 7, &mut s))[0], 1.0);
}

#[test]
fn the_enable_has_three_positions_through_a_trigger_sweep() {
    use EnableState::{Enabled, Released, Squeezed};
    let (m, mut s) = connected(7);
    let at = |s: &mut PadState, v: f64| {
        m.intent(&pad().with_button(Button::LeftTrigger, v), 7, s)
            .enable
    };
    // Squeeze slowly all the way, then let go slowly.
    let sweep_in = [
        (0.0, Released),
        (0.2, Released),
        (0.3, Enabled),
        (0.6, Enabled),
        (0.89, Enabled),
        (0.95, Squeezed),
        (1.0, Squeezed),
    ];
    let sweep_out = [
        (0.6, Squeezed),
        (0.3, Squeezed),
        (0.15, Squeezed),
        (0.05, Released),
        (0.5, Enabled),
        (0.0, Released),
    ];
    for (v, want) in sweep_in.into_iter().chain(sweep_out) {
        assert_eq!(at(&mut s, v), want, "trigger at {v}");
    }
    let i = m.intent(&pad().with_button(Button::LeftTrigger, 0.5), 7, &mut s);
    assert!(i.enabled());
}

#[test]
fn a_trigger_held_as_the_pad_connects_does_not_enable() {
    let m = Mapping::default();
    let mut s = PadState::new(&m);
    let held = pad().with_button(Button::LeftTrigger, 0.5);
    for _ in 0..3 {
        assert_eq!(m.intent(&held, 7, &mut s).enable, EnableState::Unarmed);
    }
    m.intent(&pad(), 7, &mut s);
    assert!(m.intent(&held, 7, &mut s).enabled());
}

#[test]
fn unplugging_releases_the_sticks_and_disarms_the_enable() {
    let (m, mut s) = connected(7);
    let moving = pad()
        .with_button(Button::LeftTrigger, 0.5)
        .with_axis(Axis::LeftStickY, 1.0);
    let i = m.intent(&moving, 7, &mut s);
    assert!(i.enabled());
    assert_ne!(i.deflection, Deflection::Released);

    let i = m.intent(&RawPad::unplugged(), 7, &mut s);
    assert!(!i.connected);
    assert_eq!(i.deflection, Deflection::Released);
    assert_eq!(i.enable, EnableState::Unarmed);
    assert!(!i.recentring);

    // Plugged back in still held: neither enabled nor moving until released and centred.
    let i = m.intent(&moving, 7, &mut s);
    assert!(i.connected);
    assert_eq!(i.enable, EnableState::Unarmed);
    assert_eq!(i.deflection, Deflection::Released);
}

#[test]
fn a_button_held_as_the_pad_connects_is_not_a_press() {
    let m = Mapping::default();
    let mut s = PadState::new(&m);
    let i = m.intent(&pad().with_button(Button::North, 1.0), 7, &mut s);
    assert_eq!(i.mode, Mode::Joint);
    let i = m.intent(&pad(), 7, &mut s);
    assert_eq!(i.mode, Mode::Joint);
}

#[test]
fn the_intent_names_what_each_axis_drives() {
    let (m, mut s) = connected(7);
    let i = m.intent(&pad(), 7, &mut s);
    assert_eq!(
        i.axes,
        vec![
            (Axis::LeftStickY, "joint 1".to_string()),
            (Axis::RightStickY, "joint 2".to_string())
        ]
    );
    let i = click(&m, &mut s, 7, Button::North);
    assert!(
        i.axes
            .contains(&(Axis::LeftStickX, "-linear_y".to_string()))
    );
}

fn error_of(text: &str) -> String {
    Mapping::parse(text, Path::new("/home/op/.config/jaus-ocu/gamepad.toml"))
        .unwrap_err()
        .to_string()
}

fn example_with(from: &str, to: &str) -> String {
    assert!(EXAMPLE_TOML.contains(from), "{from}");
    EXAMPLE_TOML.replacen(from, to, 1)
}

/// The 1-based line of the first occurrence of `needle` in `text`.
fn line_in(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn an_unknown_key_names_the_file_line_and_what_to_do() {
    let text = example_with("deadband = 0.15", "deadbnad = 0.15");
    let e = error_of(&text);
    let line = line_in(&text, "deadbnad");
    assert!(
        e.starts_with(&format!("/home/op/.config/jaus-ocu/gamepad.toml:{line}:")),
        "{e}"
    );
    assert!(e.contains("deadbnad"), "{e}");
    assert!(e.contains("assets/gamepad.toml"), "{e}");
}

#[test]
fn an_unknown_button_name_is_reported_on_its_line() {
    let text = example_with("mode = \"north\"", "mode = \"triangle\"");
    let e = error_of(&text);
    assert!(
        e.contains(&format!(":{}:", line_in(&text, "\"triangle\""))),
        "{e}"
    );
    assert!(e.contains("triangle"), "{e}");
}

#[test]
fn an_unknown_tool_axis_says_which_names_exist() {
    let text = example_with("\"linear_z\"", "\"linear_w\"");
    let e = error_of(&text);
    assert!(
        e.contains(&format!(":{}:", line_in(&text, "linear_w"))),
        "{e}"
    );
    assert!(e.contains("unknown tool axis `linear_w`"), "{e}");
    assert!(e.contains("angular_z"), "{e}");
}

#[test]
fn bad_toml_is_reported_on_its_line() {
    let text = example_with("squeeze = 0.9", "squeeze = ");
    let e = error_of(&text);
    assert!(
        e.contains(&format!(":{}:", line_in(&text, "squeeze ="))),
        "{e}"
    );
}

#[test]
fn thresholds_out_of_order_are_refused_with_the_default() {
    let text = example_with("engage = 0.25", "engage = 0.95");
    let e = error_of(&text);
    let line = line_in(&text, "release = 0.1");
    assert!(
        e.starts_with(&format!("/home/op/.config/jaus-ocu/gamepad.toml:{line}: ")),
        "{e}"
    );
    assert!(e.contains("release < engage < squeeze"), "{e}");
    assert!(e.contains("0.1, 0.25, 0.9"), "{e}");
}

#[test]
fn a_two_position_button_cannot_be_the_enable() {
    let e = error_of(&example_with(
        "trigger = \"left_trigger\"",
        "trigger = \"south\"",
    ));
    assert!(
        e.contains("three-position enable needs an analog trigger"),
        "{e}"
    );
}

#[test]
fn a_button_used_twice_is_refused() {
    let text = example_with("frame = \"west\"", "frame = \"north\"");
    let e = error_of(&text);
    assert!(
        e.contains(&format!(":{}:", line_in(&text, "frame ="))),
        "{e}"
    );
    assert!(e.contains("`north` is both `mode` and `frame`"), "{e}");
}

#[test]
fn joint_zero_is_refused_on_its_line() {
    let text = example_with("right_stick_y = 4", "right_stick_y = 0");
    let e = error_of(&text);
    assert!(
        e.contains(&format!(":{}:", line_in(&text, "right_stick_y = 0"))),
        "{e}"
    );
    assert!(e.contains("joints are numbered from 1"), "{e}");
}

#[test]
fn a_missing_file_says_it_cannot_be_read() {
    let e = Mapping::load(Path::new("/nonexistent/gamepad.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read the gamepad mapping /nonexistent/gamepad.toml"),
        "{e}"
    );
    assert!(e.contains("default mapping"), "{e}");
}
