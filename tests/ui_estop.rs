//! The emergency stop pressed while the link is cut, as the window shows it (issue 44): the
//! real client and simulator in memory (fake clock) produce the updates, the real window reads
//! them. Before the arm confirms, the banner and the E-STOP button say the stop is sent and
//! not confirmed; once the link returns the arm ends in EMERGENCY and the window says so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use egui_kittest::kittest::Queryable;
use jaus_ocu::jaus::core::Status;
use jaus_ocu::model::command::Command;
use jaus_ocu::model::update::{ArmFact, StopState, Update};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::harness::SimNet;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

fn run(net: &mut SimNet, secs: f64) {
    for _ in 0..(secs / 0.002).round() as usize {
        net.step();
    }
}

fn cut(net: &mut SimNet, cut: bool) {
    let faults = Faults {
        loss: if cut { 1.0 } else { 0.0 },
        ..Faults::default()
    };
    net.set_faults_to_client(faults);
    net.set_faults_from_client(faults);
}

fn last_stop(updates: &[Update]) -> StopState {
    updates
        .iter()
        .rev()
        .find_map(|u| match u {
            Update::Arm {
                fact: ArmFact::Stop { state, .. },
                ..
            } => Some(*state),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn a_stop_pressed_while_the_link_is_cut_shows_as_sent_until_the_arm_confirms_it() {
    let mut net = sim_net(ArmFile::demo(), 7);
    run(&mut net, 2.0);
    net.command(Command::RequestControl { authority: 100 });
    run(&mut net, 1.0);
    cut(&mut net, true);
    run(&mut net, 1.0);
    net.command(Command::SetEmergency);
    run(&mut net, 3.0);
    assert!(last_stop(&net.updates).is_pending());
    assert_ne!(net.peers[0].sim.status(), Status::Emergency);

    let seen = net.updates.len();
    let (app, _out) = live_app(&net.updates);
    let mut h = harness(app);
    h.step();
    h.step();
    h.get_by_label_contains("STOP SENT — not confirmed by 126.1.10 for 2.8 s, 20 tries");
    h.get_by_label_contains("The link is lost: the stop goes out first when it returns");
    h.get_by_label_contains("STOP SENT 126.1.10");
    assert!(
        h.query_by_label_contains("EMERGENCY STOP —").is_none(),
        "the arm is not shown as stopped before it says so"
    );

    // The link returns: the stop goes out first and the arm confirms it.
    cut(&mut net, false);
    run(&mut net, 2.0);
    assert_eq!(net.peers[0].sim.status(), Status::Emergency);
    assert_eq!(last_stop(&net.updates), StopState::Idle);
    for u in &net.updates[seen..] {
        h.state_mut().apply(u);
    }
    h.step();
    h.step();
    assert!(h.query_by_label_contains("STOP SENT").is_none());
    h.get_by_label_contains("EMERGENCY STOP — the live arm 126.1.10 is stopped.");
}
