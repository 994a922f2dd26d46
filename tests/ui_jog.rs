//! The window's jog input (issue 32): the buttons beside the gauges and the jog keys say
//! what is held to the network side (`Command::Jog`), every frame while held and once when
//! let go; the jog strip says what blocks a jog before the operator tries.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::model::command::*;
use jaus_ocu::model::jog::{Deflection, JogRequest, Source};
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::tap::Epoch;
use jaus_ocu::net::thread::NetHandle;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;

const ARM: ComponentId = ComponentId::new(126, 1, 10);

/// Updates from `seconds` of an in-memory session between the real client and the simulator.
fn recorded(seconds: f64, extra: Option<(JausIdLike, ArmFile)>) -> Vec<Update> {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let other_addr: SocketAddr = "127.0.0.1:3795".parse().unwrap();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let mut connect = vec![sim_addr];
    if extra.is_some() {
        connect.push(other_addr);
    }
    let cfg = ClientConfig {
        connect,
        multicast: None,
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, ocu_addr, Duration::from_millis(2), 1);
    net.add_peer(
        sim_addr,
        Component::new(ArmFile::demo(), SimConfig::default()),
    );
    if let Some((id, arm)) = extra {
        let cfg = SimConfig {
            id: id.0.into(),
            ..SimConfig::default()
        };
        net.add_peer(other_addr, Component::new(arm, cfg));
    }
    for _ in 0..(seconds / 0.002) as usize {
        net.step();
    }
    net.updates
}

/// A JAUS ID wrapper so the helper's signature stays readable.
struct JausIdLike(ComponentId);

/// The commands an app sent, read at its network handle.
struct Outbox {
    rx: jaus_ocu::net::thread::Commands,
    seen: Vec<Command>,
}

impl Outbox {
    /// Every command sent so far, in the order the network side takes them (an emergency
    /// stop ahead of what waited before it).
    fn sent(&mut self) -> &[Command] {
        self.seen.extend(self.rx.try_iter());
        &self.seen
    }
}

/// A live (simulated) app on a detached network handle, fed `updates`; its commands arrive in
/// the outbox.
fn live_app(updates: &[Update]) -> (OcuApp, Outbox) {
    let (net, rx, _updates) = NetHandle::detached(Epoch::now());
    let mut app = OcuApp::new(
        LiveKind::Simulated,
        Some(net),
        Vec::new(),
        Settings::default(),
    );
    for u in updates {
        app.apply(u);
    }
    (
        app,
        Outbox {
            rx,
            seen: Vec::new(),
        },
    )
}

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    Harness::builder()
        .with_size([1280.0, 800.0])
        .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app)
}

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
    let plus = h
        .query_all_by_label("+")
        .nth(1)
        .expect("joint 2's + button")
        .rect();
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
    let minus = h
        .query_all_by_label("−")
        .next()
        .expect("joint 1's − button")
        .rect();
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
    let updates = recorded(1.0, None);
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
    for u in &updates {
        app.apply(u);
    }
    let mut h = harness(app);
    h.step();
    assert!(h.query_by_label_contains("To jog").is_none());
    assert_eq!(
        h.query_all_by_label("+").count(),
        0,
        "no jog buttons without a live arm"
    );
}
