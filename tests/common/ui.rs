//! A live window over an in-memory session, for the window's tests (`ui_flows`, `ui_jog`):
//! the updates of a session between the real client and the simulator, an app on a detached
//! network handle fed with them, and what it sends.

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

#[path = "sim_net.rs"]
mod sim_net;
pub use sim_net::{sim_net, updates_after};

/// The arm of the simulated sessions (the simulator's default ID): what their facts are about.
#[allow(dead_code, reason = "not every suite names it")]
pub const ARM: ComponentId = ComponentId::new(126, 1, 10);

/// Updates from `seconds` of an in-memory session between the real client and the simulated
/// demo arm at [`sim_net::SIM`] (seed 1), and `extra`'s arm at [`sim_net::SIM_B`] if given.
#[allow(dead_code, reason = "not every suite uses each")]
pub fn recorded(seconds: f64, extra: Option<(JausIdLike, ArmFile)>) -> Vec<Update> {
    let Some((id, arm)) = extra else {
        return updates_after(sim_net(ArmFile::demo(), 1), seconds);
    };
    let cfg = ClientConfig {
        connect: vec![sim_net::SIM, sim_net::SIM_B],
        ..sim_net::client_cfg()
    };
    let mut net = SimNet::new(cfg, sim_net::OCU, Duration::from_millis(2), 1);
    net.add_peer(
        sim_net::SIM,
        Component::new(ArmFile::demo(), SimConfig::default()),
    );
    let cfg = SimConfig {
        id: id.0.into(),
        ..SimConfig::default()
    };
    net.add_peer(sim_net::SIM_B, Component::new(arm, cfg));
    updates_after(net, seconds)
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
