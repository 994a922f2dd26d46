//! The window's jog input (issue 32): the buttons beside the gauges and the jog keys say
//! what is held to the network side (`Command::Jog`), every frame while held and once when
//! let go; the jog strip says what blocks a jog before the operator tries.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::command::*;
use jaus_ocu::model::jog::{Deflection, JogRequest, Source};
use jaus_ocu::ui::app::OcuApp;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

impl Outbox {
    /// The jog requests sent so far.
    fn jogs(&mut self) -> Vec<JogRequest> {
        self.sent()
            .iter()
            .filter_map(|c| match c {
                Command::Jog(r) => Some((**r).clone()),
                _ => None,
            })
            .collect()
    }
}

/// Presses (or lets go of) the primary button at `pos`.
fn pointer(h: &Harness<'_, OcuApp>, pos: egui::Pos2, pressed: bool) {
    h.event(egui::Event::PointerMoved(pos));
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: egui::Modifiers::NONE,
    });
}

#[test]
fn holding_a_gauges_plus_button_jogs_that_joint_every_frame_and_letting_go_says_so_once() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    assert!(out.jogs().is_empty(), "nothing held, nothing said");
    let plus = h.get_by_label("Jog joint 2 shoulder +").rect();
    pointer(&h, plus.center(), true);
    for _ in 0..5 {
        h.step();
    }
    let held = out.jogs();
    assert!(
        held.len() >= 4,
        "one request per frame while held: {}",
        held.len()
    );
    for r in &held {
        assert_eq!(r.source, Source::Screen);
        assert_eq!(r.arm, ARM);
        assert!(r.enable_held && r.live);
        assert_eq!(r.input.deflection, Deflection::joint(7, 1, 1.0));
    }
    pointer(&h, plus.center(), false);
    for _ in 0..5 {
        h.step();
    }
    let after: Vec<JogRequest> = out.jogs()[held.len()..].to_vec();
    let released: Vec<&JogRequest> = after
        .iter()
        .filter(|r| r.input.deflection == Deflection::Released)
        .collect();
    assert_eq!(released.len(), 1, "the release is said once: {after:?}");
    assert_eq!(released[0].source, Source::Screen, "by the input let go");
    assert_eq!(after.last(), Some(released[0]), "and nothing after it");
}

#[test]
fn sliding_off_a_held_button_lets_go() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    let minus = h.get_by_label("Jog joint 1 turret −").rect();
    pointer(&h, minus.center(), true);
    h.step();
    h.step();
    assert_eq!(
        out.jogs().last().map(|r| r.input.deflection.clone()),
        Some(Deflection::joint(7, 0, -1.0))
    );
    // Still pressed, but the pointer left the button.
    h.event(egui::Event::PointerMoved(
        minus.center() + egui::vec2(300.0, 0.0),
    ));
    h.step();
    h.step();
    assert_eq!(
        out.jogs().last().map(|r| r.input.deflection.clone()),
        Some(Deflection::Released)
    );
}

#[test]
fn the_jog_keys_select_a_joint_and_jog_it_while_held() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    h.key_press(egui::Key::CloseBracket);
    h.step();
    h.key_press(egui::Key::CloseBracket);
    h.step();
    h.key_down(egui::Key::Minus);
    for _ in 0..3 {
        h.step();
    }
    let held = out.jogs();
    assert!(!held.is_empty());
    assert!(
        held.iter().all(
            |r| r.source == Source::Keys && r.input.deflection == Deflection::joint(7, 2, -1.0)
        )
    );
    h.key_up(egui::Key::Minus);
    h.step();
    h.step();
    assert_eq!(
        out.jogs().last().map(|r| r.input.deflection.clone()),
        Some(Deflection::Released)
    );
}

#[test]
fn the_jog_strip_says_what_a_jog_needs_before_the_operator_tries() {
    let (app, _out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    assert!(
        h.query_by_label_contains("To jog: take control of the arm")
            .is_some(),
        "without control the strip says what to do"
    );
}

#[test]
fn without_a_live_network_side_there_is_no_jog_strip_nor_buttons() {
    let mut h = harness(app_without_net(&recorded(1.0, None)));
    h.step();
    assert!(h.query_by_label_contains("To jog").is_none());
    assert_eq!(
        h.query_all_by_label_contains("Jog joint").count(),
        0,
        "no jog buttons without a live arm"
    );
}

/// Issue 44: the strip says what the next jog does: the selected joint's stop bound in its
/// own unit (the telescope's in mm, not the turret's in rad), the tool driver's words in tool
/// mode, and a joint its soft limit holds still as stopped there, not as moving.
#[test]
fn the_strip_says_the_stop_of_the_mode_and_joint_the_next_jog_uses() {
    use jaus_ocu::model::jog::JogStatus;
    use jaus_ocu::model::update::{ArmFact, Update};
    let (app, _out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    let status = |moving: bool, at_soft_limit: Option<usize>| Update::Arm {
        arm: ARM,
        fact: ArmFact::Jog {
            t: 1.0,
            status: Box::new(JogStatus {
                moving,
                source: Some(Source::Keys),
                at_soft_limit,
                if_link_drops: Some("if the link drops: the arm stops within 0.053 rad".into()),
                if_link_drops_tool: Some(
                    "if the link drops: the arm keeps moving for up to 5 s (its access timeout)"
                        .into(),
                ),
                position_bounds: vec![0.053, 0.04, 0.05, 0.0125, 0.08, 0.08, 0.1],
                ..JogStatus::default()
            }),
        },
    };
    h.state_mut().apply(&status(false, None));
    h.step();
    h.get_by_label_contains("joint 1 stops within 0.053 rad");
    // The demo arm's joint 4 is the telescope: its own bound, in mm.
    h.state_mut().view.jog.axis = 3;
    h.step();
    h.get_by_label_contains("joint 4 stops within 12.5 mm");
    h.state_mut().view.jog.toggle_mode();
    h.step();
    h.get_by_label_contains("keeps moving for up to 5 s");
    assert!(h.query_by_label_contains("stops within").is_none());
    h.state_mut().view.jog.toggle_mode();
    h.state_mut().apply(&status(true, Some(1)));
    h.step();
    h.get_by_label_contains("STOPPED at the soft limit of joint 2");
    assert!(h.query_by_label_contains("MOVING").is_none());
}
