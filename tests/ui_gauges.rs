//! The joint gauges stay where they are while a jog starts and ends (issue 46: the rows
//! jumped 13 px under the pointer after a − / + button was let go): the jog strip's state
//! line and the clearance guard's line keep their height whatever they say. Through the real
//! UI code (`egui_kittest`, no display).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use egui_kittest::kittest::Queryable;
use jaus_ocu::model::jog::{Gate, GateSet, JogStatus, Source};
use jaus_ocu::model::update::*;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

#[test]
fn gauges_do_not_move_when_a_jog_starts_slows_is_blocked_or_ends() {
    let mut updates = recorded(1.0, None);
    updates.push(Update::arm(
        ARM,
        ArmFact::Control {
            t: 1.0,
            state: ControlState::Held { authority: 100 },
        },
    ));
    let (app, _out) = live_app(&updates);
    let mut h = harness(app);
    h.step();
    h.step();
    let top = |h: &mut egui_kittest::Harness<'static, jaus_ocu::ui::app::OcuApp>| {
        h.step();
        h.get_by_label_contains("1 turret:").rect().top()
    };
    let idle = top(&mut h);
    let statuses = [
        // Moving with the screen's buttons, slowed by the clearance guard.
        JogStatus {
            moving: true,
            source: Some(Source::Screen),
            clearance: Some(
                "slowed to 40 %: 35 mm from contact: wrist_roll (joint 5) and turret".into(),
            ),
            ..JogStatus::default()
        },
        // Let go.
        JogStatus {
            source: Some(Source::Screen),
            ..JogStatus::default()
        },
        // Pressed while blocked: the gate and its remedy.
        JogStatus {
            source: Some(Source::Screen),
            blocking: GateSet::EMPTY.with(Gate::ControlHeld),
            ..JogStatus::default()
        },
        // Moving again, then let go.
        JogStatus {
            moving: true,
            source: Some(Source::Keys),
            ..JogStatus::default()
        },
        JogStatus::default(),
    ];
    for (i, status) in statuses.into_iter().enumerate() {
        h.state_mut().apply(&Update::arm(
            ARM,
            ArmFact::Jog {
                t: 1.1 + i as f64 * 0.1,
                status: Box::new(status.clone()),
            },
        ));
        let now = top(&mut h);
        assert!(
            (now - idle).abs() < 0.5,
            "step {i} ({status:?}): the first gauge moved from y {idle} to {now}"
        );
    }
}
