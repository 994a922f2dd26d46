//! Operator flows through the real UI code with egui_kittest (no display, no GPU): the app is
//! fed updates recorded from the simulator (in memory, through the real client state machine),
//! the test clicks like an operator and checks the commands the UI sends and what it shows.

use std::net::SocketAddr;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::{Client, ClientConfig, Output};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::ui::app::{Mode, OcuApp, Settings};

/// Updates from `seconds` of an in-memory session between the real client and the simulator.
fn recorded(seconds: f64, extra: Option<(JausIdLike, ArmFile)>) -> Vec<Update> {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let other_addr: SocketAddr = "127.0.0.1:3795".parse().unwrap();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let mut sims = vec![(
        sim_addr,
        Component::new(ArmFile::demo(), SimConfig::default()),
    )];
    if let Some((id, arm)) = extra {
        sims.push((
            other_addr,
            Component::new(
                arm,
                SimConfig {
                    id: id.0,
                    ..SimConfig::default()
                },
            ),
        ));
    }
    let mut client = Client::new(ClientConfig {
        connect: sims.iter().map(|s| s.0).collect(),
        multicast: None,
        ..ClientConfig::default()
    });
    let mut out = Output::default();
    let mut sim_out = Vec::new();
    let mut updates = Vec::new();
    let _ = &mut sim_out;
    let steps = (seconds / 0.002) as usize;
    for step in 0..steps {
        let t = step as f64 * 0.002;
        client.tick(t, &mut out);
        let datagrams = std::mem::take(&mut out.datagrams);
        for (addr, sim) in &mut sims {
            // Each sim's replies are handed over with that sim's address.
            for (to, d) in &datagrams {
                if to == addr {
                    sim.handle_datagram(t, ocu_addr, d, &mut sim_out);
                }
            }
            sim.tick(t, &mut sim_out);
            for o in sim_out.drain(..) {
                client.handle_datagram(t, *addr, &o.bytes, &mut out);
            }
        }
        updates.append(&mut out.updates);
    }
    updates
}

/// A JAUS ID wrapper so the helper's signature stays readable.
struct JausIdLike(ComponentId);

fn app_with(updates: &[Update]) -> OcuApp {
    let mut app = OcuApp::new(Mode::Simulated, None, None, Settings::default());
    for u in updates {
        app.apply(u);
    }
    app
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    Harness::builder()
        .with_size([1280.0, 800.0])
        .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app)
}

#[test]
fn emergency_stop_is_one_click() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    h.get_by_label("E-STOP").click();
    h.step();
    assert!(
        h.state().sent.contains(&Command::SetEmergency),
        "{:?}",
        h.state().sent
    );
}

#[test]
fn request_control_from_the_top_bar() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    h.get_by_label("Request control").click();
    h.step();
    assert!(
        h.state()
            .sent
            .iter()
            .any(|c| matches!(c, Command::RequestControl { .. }))
    );
}

#[test]
fn units_toggle_changes_what_the_gauges_say() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    assert!(
        h.query_all_by_label_contains("°").count() > 0,
        "gauges in degrees by default"
    );
    h.get_by_label("deg").click();
    h.step();
    h.step();
    assert!(!h.state().settings.degrees);
    assert_eq!(h.query_all_by_label_contains("°").count(), 0);
    assert!(
        h.query_all_by_label_contains(" rad").count() > 0,
        "gauges now in radians"
    );
}

#[test]
fn preview_then_command_a_preset_with_control_and_confirmation() {
    let mut updates = recorded(1.0, None);
    updates.push(Update::Control {
        t: 1.0,
        state: ControlState::Held { authority: 100 },
    });
    let mut h = harness(app_with(&updates));
    h.step();
    let goal = ArmFile::demo().presets[3].clone();
    h.get_by_label_contains(&goal.name).click();
    h.step();
    assert_eq!(
        h.state().view.preview,
        Some(goal.id),
        "clicking a preset previews it"
    );
    h.get_by_label_contains("Go to").click();
    // The confirmation window appears on the next frames.
    h.step();
    h.step();
    assert!(
        h.state()
            .sent
            .iter()
            .all(|c| !matches!(c, Command::GoToPreset { .. })),
        "not before confirming"
    );
    h.get_by_label("Confirm").click();
    h.step();
    assert!(
        h.state()
            .sent
            .contains(&Command::GoToPreset { pose_id: goal.id }),
        "{:?}",
        h.state().sent
    );
}

#[test]
fn going_to_a_preset_without_control_offers_to_request_it() {
    let mut h = harness(app_with(&recorded(1.0, None)));
    h.step();
    let goal = ArmFile::demo().presets[2].clone();
    h.get_by_label_contains(&goal.name).click();
    h.step();
    assert!(h.query_by_label_contains("Go to").is_none());
    assert!(h.query_by_label_contains("needs control").is_some());
}

#[test]
fn selecting_another_arm_sends_select() {
    let other = ComponentId::new(127, 1, 10);
    let mut h = harness(app_with(&recorded(
        1.0,
        Some((JausIdLike(other), ArmFile::builtin("ur5e").unwrap())),
    )));
    h.step();
    assert_eq!(
        h.state()
            .state
            .components
            .values()
            .filter(|c| c.0.manipulator)
            .count(),
        2
    );
    let selected = h.state().state.selected.unwrap();
    h.get_by_label("arm").click();
    h.step();
    h.step();
    let target = if selected == other {
        ComponentId::new(126, 1, 10)
    } else {
        other
    };
    h.get_by_label_contains(&target.to_string()).click();
    h.step();
    assert!(
        h.state().sent.contains(&Command::Select(target)),
        "{:?}",
        h.state().sent
    );
}
