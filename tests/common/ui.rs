//! A live window over an in-memory session, for the window's tests (`ui_flows`, `ui_jog`):
//! the updates of a session between the real client and the simulator, an app on a detached
//! network handle fed with them, and what it sends.

use std::net::SocketAddr;
use std::time::Duration;

use egui_kittest::Harness;
use jaus_ocu::model::command::*;
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

/// The arm of the simulated sessions (the simulator's default ID): what their facts are about.
#[allow(dead_code, reason = "not every suite names it")]
pub const ARM: ComponentId = ComponentId::new(126, 1, 10);

/// Updates from `seconds` of an in-memory session between the real client and the simulator.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn recorded(seconds: f64, extra: Option<(JausIdLike, ArmFile)>) -> Vec<Update> {
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
pub struct JausIdLike(pub ComponentId);

/// The commands an app sent, read at its network handle.
pub struct Outbox {
    rx: jaus_ocu::net::thread::Commands,
    seen: Vec<Command>,
}

impl Outbox {
    /// Whether a `GoToPreset` was sent so far.
    #[allow(dead_code, reason = "not every suite uses each")]
    pub fn sent_a_preset_move(&mut self) -> bool {
        self.sent()
            .iter()
            .any(|c| matches!(c, Command::GoToPreset { .. }))
    }

    /// Every command sent so far, in the order the network side takes them (an emergency
    /// stop ahead of what waited before it).
    pub fn sent(&mut self) -> &[Command] {
        self.seen.extend(self.rx.try_iter());
        &self.seen
    }
}

/// A live (simulated) app on a detached network handle, fed `updates`; its commands arrive in
/// the outbox.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn live_app(updates: &[Update]) -> (OcuApp, Outbox) {
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

/// A simulated app with no network side (nothing live to command or serve), fed `updates`.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn app_without_net(updates: &[Update]) -> OcuApp {
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
    for u in updates {
        app.apply(u);
    }
    app
}

#[allow(dead_code, reason = "not every suite uses each")]
pub fn app_with(updates: &[Update]) -> OcuApp {
    live_app(updates).0
}

/// `app`'s window at 1280×800.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    sized(app, [1280.0, 800.0])
}

/// `app`'s window at `size` (points), drawn by its own frame.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn sized(app: OcuApp, size: impl Into<eframe::egui::Vec2>) -> Harness<'static, OcuApp> {
    Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app)
}

/// The real client (at 127.0.0.1:5000, 2 ms steps, seeded with `seed`) and the simulator
/// running `arm` at 127.0.0.1:3794, in memory.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn sim_net(arm: ArmFile, seed: u64) -> SimNet {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let cfg = ClientConfig {
        connect: vec![sim_addr],
        multicast: None,
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(
        cfg,
        "127.0.0.1:5000".parse().unwrap(),
        Duration::from_millis(2),
        seed,
    );
    net.add_peer(sim_addr, Component::new(arm, SimConfig::default()));
    net
}

/// The window's rectangle in the harness `h`.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn window(h: &Harness<'_, OcuApp>) -> eframe::egui::Rect {
    eframe::egui::Rect::from_min_size(eframe::egui::Pos2::ZERO, h.ctx.content_rect().size())
}

/// A node's text as `egui_kittest` matches it: a label keeps its text as its value.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn text(n: &egui_kittest::kittest::AccessKitNode<'_>) -> Option<String> {
    if n.role() == eframe::egui::accesskit::Role::Label {
        n.value()
    } else {
        n.label()
    }
}
