//! Clearance on the wire (issue 45): the real client and two simulated demo arms on one
//! vehicle (`demo --arms 2`'s mounts), in memory under a fake clock. Jogging one arm's turret
//! into the other stops at the margin, said in words naming the other arm; every pair that
//! was apart stays apart, measured from the positions the simulators report.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::{ArmInput, gaps};
use jaus_ocu::model::command::Command;
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::jog::{Deflection, Input, JogOptions, JogRequest, Source};
use jaus_ocu::model::update::{ArmFact, ManagementState, Remark};
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::sim::vehicle::vehicle_arms;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The newest positions of `arm` among the updates published so far.
fn positions(net: &SimNet, arm: ComponentId) -> Option<Vec<f64>> {
    net.facts_of(arm, 0)
        .filter_map(|f| match f {
            ArmFact::JointPositions { values, .. } => Some(values.clone()),
            _ => None,
        })
        .last()
}

fn jog_status(net: &SimNet, arm: ComponentId) -> Option<jaus_ocu::model::jog::JogStatus> {
    net.facts_of(arm, 0)
        .filter_map(|f| match f {
            ArmFact::Jog { status, .. } => Some((**status).clone()),
            _ => None,
        })
        .last()
}

fn status(net: &SimNet, arm: ComponentId) -> Option<ManagementState> {
    net.facts_of(arm, 0)
        .filter_map(|f| match f {
            ArmFact::Status { state, .. } => Some(*state),
            _ => None,
        })
        .last()
}

/// Steps until `done` or `secs` of fake time pass; whether it was done.
fn run_until(net: &mut SimNet, secs: f64, mut done: impl FnMut(&SimNet) -> bool) -> bool {
    let end = net.now() + secs;
    while net.now() < end {
        net.step();
        if done(net) {
            return true;
        }
    }
    false
}

#[test]
fn jogging_one_arm_into_the_other_stops_at_the_margin() {
    let demo = ArmFile::builtin("demo").unwrap();
    let arms = vehicle_arms(&demo, 2);
    let (id_a, id_b) = (arms[0].0, arms[1].0);
    let (a, b) = (ComponentId::from(id_a), ComponentId::from(id_b));
    let inspect = demo
        .presets
        .iter()
        .find(|p| p.name == "Reach forward")
        .unwrap();
    let stowed = demo.presets.iter().find(|p| p.name == "Stowed").unwrap();
    let mut arm_a = arms[0].1.clone();
    arm_a.home.clone_from(&inspect.positions);
    let cfg = ClientConfig {
        connect: vec![addr(3794), addr(3795)],
        multicast: None,
        component: Some(id_a),
        vehicle: Arc::new(VehicleGeometry::demo()),
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, addr(5000), Duration::from_millis(2), 45);
    net.add_peer(
        addr(3794),
        Component::new(
            arm_a.clone(),
            SimConfig {
                id: id_a,
                ..SimConfig::default()
            },
        ),
    );
    net.add_peer(
        addr(3795),
        Component::new(
            arms[1].1.clone(),
            SimConfig {
                id: id_b,
                hold: Some(stowed.positions.clone()),
                ..SimConfig::default()
            },
        ),
    );
    assert!(run_until(&mut net, 10.0, |n| positions(n, a).is_some()
        && positions(n, b).is_some()));
    net.command(Command::RequestControl { authority: 10 });
    net.command(Command::Resume);
    assert!(run_until(&mut net, 10.0, |n| status(n, a)
        == Some(ManagementState::Ready)));
    // The turret towards the other arm, full deflection at full speed, held.
    let options = JogOptions {
        speed_scale: 1.0,
        ..JogOptions::default()
    };
    let mut stopped = None;
    let mut min_gap = f64::INFINITY;
    let end = net.now() + 12.0;
    while net.now() < end {
        let t = net.now();
        if (t / 0.02).fract() < 0.1 {
            net.command(Command::Jog(Box::new(JogRequest::new(
                a,
                Source::Keys,
                Input {
                    at: t,
                    deflection: Deflection::joint(7, 0, -1.0),
                },
                options,
            ))));
        }
        net.step();
        if let (Some(qa), Some(qb)) = (positions(&net, a), positions(&net, b)) {
            let cross = gaps(
                &[
                    ArmInput {
                        id: a,
                        spec: &arm_a.spec,
                        positions: &qa,
                    },
                    ArmInput {
                        id: b,
                        spec: &arms[1].1.spec,
                        positions: &qb,
                    },
                ],
                &VehicleGeometry::default(),
                |k| k.0.arm() != k.1.arm(),
            );
            let m = cross
                .iter()
                .map(|g| g.contact.gap)
                .fold(f64::INFINITY, f64::min);
            min_gap = min_gap.min(m);
        }
        if let Some(s) = jog_status(&net, a)
            && !s.moving
            && let Some(w) = s.clearance.clone()
            && w.starts_with("stopped")
        {
            stopped.get_or_insert(w);
        }
        if stopped.is_some() && net.now() > end - 10.0 {
            break;
        }
    }
    let words = stopped.expect("the jog stopped for clearance");
    assert!(words.contains(&format!("of {b}")), "{words}");
    assert!(min_gap >= 0.0, "a cross-arm pair touched: {min_gap} m");
    // Let go and the marks say why.
    let marks: Vec<String> = net
        .facts_of(a, 0)
        .filter_map(|f| match f {
            ArmFact::Remark(Remark::Mark { label, .. }) => Some(label.clone()),
            _ => None,
        })
        .collect();
    assert!(
        marks
            .iter()
            .any(|m| m.starts_with("jog stopped") && m.contains(&format!("of {b}"))),
        "{marks:#?}"
    );
    println!("{words}; closest {:.1} mm", min_gap * 1e3);
}

/// Issue 45's case: from Stowed (the demo's home), the telescope out drove the wrist 43 mm
/// into the turret. Now the jog is held at once, said in words naming the pair, and no pair
/// that was apart comes closer than it was (measured from the reported positions).
#[test]
fn from_stowed_the_telescope_out_is_held_and_says_why() {
    let demo = ArmFile::builtin("demo").unwrap();
    let id = jaus_ocu::sim::component::DEFAULT_ID;
    let arm = ComponentId::from(id);
    let cfg = ClientConfig {
        connect: vec![addr(3794)],
        multicast: None,
        vehicle: Arc::new(VehicleGeometry::demo()),
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, addr(5000), Duration::from_millis(2), 46);
    net.add_peer(
        addr(3794),
        Component::new(demo.clone(), SimConfig::default()),
    );
    assert!(run_until(&mut net, 10.0, |n| positions(n, arm).is_some()));
    net.command(Command::RequestControl { authority: 10 });
    net.command(Command::Resume);
    assert!(run_until(&mut net, 10.0, |n| status(n, arm)
        == Some(ManagementState::Ready)));
    let start = positions(&net, arm).unwrap();
    let apart = |q: &[f64]| -> Vec<(String, f64)> {
        gaps(
            &[ArmInput {
                id: arm,
                spec: &demo.spec,
                positions: q,
            }],
            &VehicleGeometry::demo(),
            |_| true,
        )
        .into_iter()
        .map(|g| (format!("{:?}{:?}", g.a, g.b), g.contact.gap))
        .collect()
    };
    let before = apart(&start);
    let end = net.now() + 6.0;
    let mut words = None;
    while net.now() < end {
        let t = net.now();
        if (t / 0.02).fract() < 0.1 {
            net.command(Command::Jog(Box::new(JogRequest::new(
                arm,
                Source::Keys,
                Input {
                    at: t,
                    deflection: Deflection::joint(7, 3, 1.0),
                },
                JogOptions::default(),
            ))));
        }
        net.step();
        if let Some(w) = jog_status(&net, arm).and_then(|s| s.clearance) {
            words.get_or_insert(w);
        }
    }
    let words = words.expect("the guard said why");
    assert!(words.contains("turret (joint 1)"), "{words}");
    let after = apart(&positions(&net, arm).unwrap());
    for ((pair, b), (_, a)) in before.iter().zip(&after) {
        assert!(*b < 0.0 || *a >= 0.0, "{pair}: {b} → {a}");
    }
    println!("{words}");
}
