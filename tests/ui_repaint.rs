//! Each part of the window drawn at the rate its content changes (issue 21): the 3D view's
//! picture is rendered again only when what it shows changed by more than a pixel, a drag
//! redraws it at once and sets the frame rate, discrete facts (an emergency) wake the window
//! at once while samples wait for the readable rate. Through the real UI code with
//! `egui_kittest` (no display, no GPU: the view decides, the paint callback is not run).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use eframe::egui::{Event, Modifiers, PointerButton};
use egui_kittest::Harness;
use jaus_ocu::model::update::*;
use jaus_ocu::net::thread::{is_urgent, wakes_window};
use jaus_ocu::ui::app::{MOTION_INTERVAL, OcuApp, repaint_after};

/// A live app fed `updates`, its clock stopped at the last one.
fn harness(updates: &[Update]) -> Harness<'static, OcuApp> {
    let mut app = ui_common::app_with(updates);
    let t = updates.iter().filter_map(time_of).fold(0.0, f64::max);
    app.freeze_clock(t);
    ui_common::harness(app)
}

fn time_of(u: &Update) -> Option<f64> {
    match u {
        Update::Arm {
            fact: ArmFact::JointPositions { t, .. },
            ..
        } => Some(*t),
        _ => None,
    }
}

/// The focused arm's last joint positions in `updates`, wrapped as they came.
fn last_positions(updates: &[Update]) -> (ComponentId, f64, Vec<f64>) {
    updates
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Arm {
                arm,
                fact: ArmFact::JointPositions { t, values },
            } => Some((*arm, *t, values.clone())),
            _ => None,
        })
        .expect("joint positions in the session")
}

fn positions(arm: ComponentId, t: f64, values: Vec<f64>) -> Update {
    Update::arm(arm, ArmFact::JointPositions { t, values })
}

#[test]
fn the_3d_view_renders_again_only_when_it_changes_by_more_than_a_pixel() {
    let updates = ui_common::recorded(2.0, None);
    let (arm, t, q) = last_positions(&updates);
    let mut h = harness(&updates);
    h.step();
    h.step();
    assert!(
        !h.state().view.arm.changed(),
        "nothing changed since the last frame: the picture is reused"
    );
    // A micro-radian of noise on the first joint is not a visible change.
    let mut noisy = q.clone();
    noisy[0] += 1e-6;
    h.state_mut().apply(&positions(arm, t + 0.01, noisy));
    h.step();
    assert!(
        !h.state().view.arm.changed(),
        "sub-pixel motion redrew the view"
    );
    // A tenth of a radian is.
    let mut moved = q.clone();
    moved[0] += 0.1;
    h.state_mut().apply(&positions(arm, t + 0.02, moved));
    h.step();
    assert!(
        h.state().view.arm.changed(),
        "the arm moved, the view did not"
    );
    assert_eq!(
        repaint_after(h.state().repaint_needs()),
        Some(MOTION_INTERVAL),
        "a moving arm is drawn at the frame rate"
    );
    h.step();
    assert!(!h.state().view.arm.changed());
}

#[test]
fn a_drag_in_the_3d_view_redraws_it_at_once() {
    let updates = ui_common::recorded(2.0, None);
    let mut h = harness(&updates);
    h.step();
    h.step();
    assert!(!h.state().view.arm.changed());
    let rect = h.state().view.arm.rect.expect("the 3D view was drawn");
    let (a, b) = (
        rect.center(),
        rect.center() + eframe::egui::vec2(40.0, 10.0),
    );
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
    assert!(
        h.state().view.arm.changed(),
        "the camera turned in this frame: the view is rendered again"
    );
    assert_eq!(
        repaint_after(h.state().repaint_needs()),
        Some(MOTION_INTERVAL)
    );
    h.event(Event::PointerButton {
        pos: b,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.step();
    assert!(
        !h.state().view.arm.changed(),
        "at rest again after the drag"
    );
}

#[test]
fn discrete_facts_wake_the_window_at_once_samples_do_not() {
    let arm = ComponentId::new(126, 1, 10);
    let emergency = Update::arm(
        arm,
        ArmFact::Status {
            t: 1.0,
            state: ManagementState::Emergency,
        },
    );
    assert!(is_urgent(&emergency));
    let sample = Update::arm(
        arm,
        ArmFact::JointPositions {
            t: 1.0,
            values: vec![0.0; 6],
        },
    );
    assert!(!is_urgent(&sample));
    let wrench = Update::arm(
        arm,
        ArmFact::ForceTorque {
            t: 1.0,
            force: [Some(1.0); 3],
            torque: [None; 3],
        },
    );
    assert!(!is_urgent(&wrench));
    let error = Update::net(Remark::Error {
        t: 1.0,
        message: "socket closed".into(),
    });
    assert!(is_urgent(&error));
    // Samples ask for a frame (at the readable pace); the counters (once a second) ride on
    // the next one, so a lost link's window is not drawn once a second for them.
    assert!(wakes_window(&wrench) && wakes_window(&emergency));
    let counters = Update::net(NetFact::Stats {
        t: 1.0,
        stats: Box::default(),
    });
    assert!(!is_urgent(&counters));
    assert!(!wakes_window(&counters));
}
