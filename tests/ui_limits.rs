//! A preset move that ends on a limit is not an alarm (issue 46): "Reach forward" puts the
//! demo arm's telescope exactly on its upper limit; once the arm is still there, the gauge
//! says "at limit" (its screen-reader text says where the preset put it) and the 3D view
//! does not tint the link; on the way there, moving toward the limit, the alarm stands.
//! Through the real client, simulator and UI code (`egui_kittest`, no display).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::command::Command;
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::{ArmFact, PoseState, Update};
use jaus_ocu::sim::arm_file::ArmFile;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

/// The telescope's joint (0-based) in the demo arm.
const TELESCOPE: usize = 3;

/// A session that takes control and goes to "Reach forward"; the updates up to the first
/// report where the telescope is within the near band of its upper limit and still moving,
/// and up to the arm resting at the preset (stepped until it is, with a deadline).
fn reach_forward() -> (Vec<Update>, Vec<Update>) {
    let arm = ArmFile::demo();
    let preset = arm
        .presets
        .iter()
        .find(|p| p.name == "Reach forward")
        .unwrap()
        .clone();
    let upper = arm.spec.joints[TELESCOPE].max.unwrap();
    assert!(
        (preset.positions[TELESCOPE] - upper).abs() < 1e-9,
        "the preset puts the telescope on its upper limit"
    );
    let mut net = sim_net(arm, 7);
    net.run_with(1.0, &mut |_| {});
    net.command(Command::RequestControl { authority: 100 });
    net.run_with(1.0, &mut |_| {});
    net.command(Command::GoToPreset { pose_id: preset.id });
    let mut arriving = None;
    let mut velocities = vec![1.0; 7];
    let mut position = 0.0;
    // At most 60 s of simulated time.
    for _ in 0..600 {
        net.run_with(0.1, &mut |_| {});
        for u in &net.updates {
            if let Update::Arm { fact, .. } = u {
                match fact {
                    ArmFact::JointVelocities { values, .. } => velocities.clone_from(values),
                    ArmFact::JointPositions { values, .. } => position = values[TELESCOPE],
                    _ => {}
                }
            }
        }
        let moving = velocities.iter().any(|v| v.abs() > 1e-6);
        if arriving.is_none() && moving && position > upper - 0.02 {
            arriving = Some(net.updates.clone());
        }
        let at_pose = net.updates.iter().any(|u| {
            matches!(u, Update::Arm { fact: ArmFact::CurrentPose { pose, .. }, .. }
                if *pose == PoseState::At(preset.id))
        });
        if !moving && at_pose && (position - upper).abs() < 1e-6 {
            return (
                arriving.expect("seen moving inside the band before arriving"),
                net.updates.clone(),
            );
        }
    }
    panic!("the arm did not settle at Reach forward in 60 s (telescope at {position} m)");
}

/// What the telescope's gauge says to a screen reader in the window fed `updates`.
fn telescope_words(updates: &[Update]) -> String {
    let mut h = harness(app_with(updates));
    h.step();
    let node = h.get_by_label_contains("4 telescope:");
    node.accesskit_node().label().unwrap_or_default()
}

#[test]
fn a_preset_that_ends_on_a_limit_is_said_not_alarmed_once_the_arm_is_still() {
    let (arriving, arrived) = reach_forward();

    // Arriving, still moving toward the limit: the alarm stands.
    let text = telescope_words(&arriving);
    assert!(
        text.contains("NEAR UPPER LIMIT") || text.contains("AT LIMIT"),
        "moving toward the limit is an alarm: {text}"
    );

    // Arrived and still: said, not alarmed.
    let text = telescope_words(&arrived);
    assert!(
        text.contains("at its limit where preset \"Reach forward\" puts it"),
        "{text}"
    );
    assert!(!text.contains("AT LIMIT"), "{text}");
    // The 3D view's tint of every link is the base colour (no warning): the state the
    // view draws, from the same facts.
    let mut state = ArmState::default();
    for u in &arrived {
        if let Update::Arm { arm, fact } = u
            && *arm == ARM
        {
            state.apply_arm(fact);
        }
    }
    assert!(
        state.joint_warnings().iter().all(|w| *w == 0.0),
        "{:?}",
        state.joint_warnings()
    );
}
