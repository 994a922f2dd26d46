//! The whole operator UI rendered offscreen, for `jaus-ocu screenshot` and pixel tests: an
//! in-memory session between the real client state machine and the simulator
//! ([`simulated_updates`]: fake clock, no sockets) fills an [`OcuApp`], then `egui_glow` paints
//! it into an EGL pbuffer on Mesa's software device ([`super::gl_ffi::headless_pbuffer`]).
//! The pbuffer is framebuffer 0, so the 3D view's paint callback runs exactly as it does in a
//! window.

use std::net::SocketAddr;
use std::time::Duration;

use eframe::egui;
use eframe::egui_glow;

use super::app::{DEFAULT_REPLAY_PORT, OcuApp};
use super::gl_ffi;
use super::settings::Settings;
use super::sources::LiveKind;
use super::theme::Theme;
use crate::model::command::Command;
use crate::model::update::{ComponentId, Update};
use crate::net::client::ClientConfig;
use crate::sim::arm_file::ArmFile;
use crate::sim::component::{Component, DEFAULT_ID, SimConfig};
use crate::sim::harness::{SimNet, simulated_updates};
use crate::sim::vehicle::vehicle_arms;

/// egui passes run before the one that is painted (layout settles: panel sizes, text
/// measured, the 3D camera fitted).
const WARM_UP_PASSES: usize = 3;

/// An app on a [`LiveKind::Simulated`] source with default settings, fed `seconds` of a simulated session
/// of `arm` ([`simulated_updates`]), its clock stopped at the last update so that it follows
/// "live" at that moment and the plots show the recorded window.
pub fn simulated_app(arm: ArmFile, seconds: f64) -> OcuApp {
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
    let updates = simulated_updates(arm, seconds);
    for u in &updates {
        app.apply(u);
    }
    app.freeze_clock(updates.last().map_or(0.0, Update::t));
    app
}

/// What the simulated session of a screenshot shows at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scenario {
    /// The idle tour, all well.
    #[default]
    Normal,
    /// Then the operator pressed the emergency stop; a second more.
    Emergency,
    /// Then the operator took control (authority 100), a second later pressed the emergency
    /// stop; a second more (the banner's steps with control held).
    EmergencyHeld,
    /// Then the operator took control (authority 100), and a second later another OCU,
    /// [`OTHER_OCU`] with authority 200, took it; a second more.
    Taken,
    /// Then the arm fell silent for 4 s (past the link's limit): the link is lost.
    Lost,
    /// Two arms on one vehicle (IDs 126.1.10 and 126.1.11, mounted 0.8 m apart across it,
    /// facing outward: `sim::vehicle`), both followed, the first focused; the idle tour.
    VehicleTwoArms,
    /// The idle tour with the plots showing every joint's position and velocity.
    JointPlots,
    /// The event log shown, after the steps of [`Scenario::EmergencyHeld`], with two
    /// operator notes (one text, one bookmark).
    EventLog,
    /// [`SHIFT_S`] of the idle tour held within a memory budget of two thirds of what it takes:
    /// the far past as an envelope (the status bar says from when), the plots over the whole
    /// session.
    Shift,
}

/// The session's length in [`Scenario::Shift`], s.
pub const SHIFT_S: f64 = 600.0;

/// The second OCU of [`Scenario::Taken`]: its JAUS ID and address.
pub const OTHER_OCU: (ComponentId, SocketAddr) = (
    ComponentId {
        subsystem: 200,
        node: 7,
        component: 3,
    },
    SocketAddr::new(
        std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7)),
        3794,
    ),
);

/// The authority the second OCU of [`Scenario::Taken`] asks with.
pub const OTHER_AUTHORITY: u8 = 200;

impl Scenario {
    /// By name: `normal`, `emergency`, `emergency-held`, `taken`, `lost`,
    /// `vehicle-two-arms`, `joint-plots`, `event-log`, `shift`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "normal" | "" => Ok(Scenario::Normal),
            "emergency" => Ok(Scenario::Emergency),
            "emergency-held" => Ok(Scenario::EmergencyHeld),
            "taken" => Ok(Scenario::Taken),
            "lost" => Ok(Scenario::Lost),
            "vehicle-two-arms" => Ok(Scenario::VehicleTwoArms),
            "joint-plots" => Ok(Scenario::JointPlots),
            "event-log" => Ok(Scenario::EventLog),
            "shift" => Ok(Scenario::Shift),
            other => Err(format!(
                "--scenario {other}: expected normal, emergency, emergency-held, taken, lost, \
                 vehicle-two-arms, joint-plots, event-log or shift"
            )),
        }
    }

    /// Simulated seconds after the session's first part.
    fn tail(self) -> f64 {
        match self {
            Scenario::Normal
            | Scenario::VehicleTwoArms
            | Scenario::JointPlots
            | Scenario::Shift => 0.0,
            Scenario::Emergency => 1.0,
            Scenario::EmergencyHeld | Scenario::Taken | Scenario::EventLog => 2.0,
            Scenario::Lost => 4.0,
        }
    }
}

/// What happens at each of a scenario's steps, a second apart.
type Step = fn(&mut SimNet);

/// The operator asks for control with the GUI's default authority.
fn take_control(n: &mut SimNet) {
    n.command(Command::RequestControl {
        authority: Settings::default().authority,
    });
}

/// The updates of `seconds` of an in-memory session of `arm` (the idle tour on, seed 1) that
/// ends in `scenario`: [`simulated_updates`] for [`Scenario::Normal`]; otherwise the same
/// session, then an emergency stop commanded and 1 s more, or the arm silenced for 4 s
/// more; for [`Scenario::VehicleTwoArms`] two copies of `arm` on one vehicle, each a peer at
/// its own address (the JUDP port and the next), both given to the client.
pub fn scenario_updates(arm: ArmFile, seconds: f64, scenario: Scenario) -> Vec<Update> {
    let steps: &[Step] = match scenario {
        Scenario::Normal | Scenario::JointPlots | Scenario::Shift => {
            return simulated_updates(arm, seconds);
        }
        Scenario::VehicleTwoArms => &[],
        Scenario::Emergency => &[|n| n.command(Command::SetEmergency)],
        Scenario::EmergencyHeld | Scenario::EventLog => {
            &[take_control, |n| n.command(Command::SetEmergency)]
        }
        Scenario::Taken => &[take_control, |n| {
            let (id, addr) = OTHER_OCU;
            n.request_control_from(0, addr, id, OTHER_AUTHORITY, 1);
        }],
        Scenario::Lost => &[|n| {
            for p in &mut n.peers {
                p.silenced = true;
            }
        }],
    };
    // The simulators at the JUDP port and after it, as `jaus-ocu demo` has them.
    let arms = match scenario {
        Scenario::VehicleTwoArms => vehicle_arms(&arm, 2),
        _ => vec![(DEFAULT_ID, arm)],
    };
    let addrs: Vec<SocketAddr> = (0..arms.len())
        .map(|i| SocketAddr::from(([127, 0, 0, 1], DEFAULT_REPLAY_PORT + i as u16)))
        .collect();
    let mut net = SimNet::new(
        ClientConfig {
            connect: addrs.clone(),
            multicast: None,
            ..ClientConfig::default()
        },
        SocketAddr::from(([127, 0, 0, 1], 5000)),
        Duration::from_millis(2),
        1,
    );
    for ((id, arm), addr) in arms.into_iter().zip(addrs) {
        let sim = SimConfig {
            id,
            tour: true,
            seed: 1,
            ..SimConfig::default()
        };
        net.add_peer(addr, Component::new(arm, sim));
    }
    let before = seconds.max(0.5);
    for (i, step) in steps.iter().enumerate() {
        while net.now() < before + i as f64 {
            net.step();
        }
        step(&mut net);
    }
    while net.now() < before + scenario.tail() {
        net.step();
    }
    net.published(0)
}

/// An app like [`simulated_app`] whose session ends in `scenario` ([`scenario_updates`]).
pub fn scenario_app(arm: ArmFile, seconds: f64, scenario: Scenario) -> OcuApp {
    let seconds = if scenario == Scenario::Shift {
        SHIFT_S
    } else {
        seconds
    };
    let mut settings = Settings::default();
    if scenario == Scenario::JointPlots {
        use crate::model::signals::{PlotLayout, PlotSpec, Series};
        settings.plots = PlotLayout {
            plots: vec![
                PlotSpec::of_series(1, &[Series::Positions]),
                PlotSpec::of_series(2, &[Series::Velocities]),
            ],
        };
    }
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), settings);
    let updates = scenario_updates(arm, seconds, scenario);
    for u in &updates {
        app.apply(u);
    }
    // The clock at the session's end (the silent arm sends nothing to mark it).
    let end = seconds + scenario.tail();
    app.freeze_clock(updates.last().map_or(0.0, Update::t).max(end));
    if scenario == Scenario::EventLog {
        app.settings.show_log = true;
        app.add_note(seconds * 0.5, "tour running, gripper open");
        app.add_note(seconds + 1.5, "");
    }
    if scenario == Scenario::VehicleTwoArms {
        // The picture is of the vehicle: framed whole (R), as an operator looking at both
        // arms would (following the focused arm, the other may stand behind it).
        app.run(super::commands::UiCommand::ResetCamera);
    }
    if scenario == Scenario::Shift {
        let bytes = super::sources::read_vehicle(app.sources().vehicle()).memory_bytes();
        app.memory_override = Some(bytes as u64 * 2 / 3);
        app.settings.plot_window_s = SHIFT_S;
    }
    app
}

/// Renders `app` at `width` × `height` pixels (1 pixel per point) offscreen and returns the
/// image, rows top-down, opaque. Runs a few egui passes first so the layout settles; the
/// egui time is fixed, so the same app renders the same image. The app must not be painting
/// in another GL context (a window) at the same time: its 3D view's GPU objects are made in
/// this one and freed before returning.
pub fn render(app: &mut OcuApp, width: u32, height: u32) -> Result<image::RgbaImage, String> {
    let surface = gl_ffi::headless_pbuffer(width, height)?;
    let mut painter = egui_glow::Painter::new(surface.glow.clone(), "", None, false)
        .map_err(|e| format!("egui_glow cannot paint on the EGL context: {e}"))?;
    let result = paint(app, &mut painter, [width, height]);
    // The 3D view made its GPU objects in this context on first paint: free them now, while
    // it is current, so the app can be rendered again (in a new context) or dropped safely.
    app.view.arm.release_gpu();
    painter.destroy();
    result
}

/// The egui passes and the paint; `painter` draws into framebuffer 0 of size `size`.
fn paint(
    app: &mut OcuApp,
    painter: &mut egui_glow::Painter,
    size: [u32; 2],
) -> Result<image::RgbaImage, String> {
    let ctx = egui::Context::default();
    ctx.set_theme(if app.settings.dark {
        egui::Theme::Dark
    } else {
        egui::Theme::Light
    });
    ctx.set_visuals(Theme::visuals(app.settings.dark));
    let screen =
        egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
    let mut output = None;
    for pass in 0..=WARM_UP_PASSES {
        let raw_input = egui::RawInput {
            screen_rect: Some(screen),
            // Fixed times: deterministic, and animations (if any) finish between passes.
            time: Some(pass as f64),
            predicted_dt: 1.0,
            focused: false,
            ..Default::default()
        };
        let mut full = ctx.run_ui(raw_input, |ui| app.frame(ui));
        if pass < WARM_UP_PASSES {
            // Fonts and images uploaded in warm-up passes are needed by the painted one.
            painter.paint_and_update_textures(
                size,
                full.pixels_per_point,
                &[],
                &mut full.textures_delta,
            );
        } else {
            output = Some(full);
        }
    }
    let mut full = output.ok_or("no egui pass ran")?;
    let primitives = ctx.tessellate(std::mem::take(&mut full.shapes), full.pixels_per_point);
    let clear = Theme::background(app.settings.dark);
    painter.clear(size, clear.to_normalized_gamma_f32());
    painter.paint_and_update_textures(
        size,
        full.pixels_per_point,
        &primitives,
        &mut full.textures_delta,
    );
    let shot = painter.read_screen_rgba(size);
    let bytes: Vec<u8> = shot
        .pixels
        .iter()
        .flat_map(|c| {
            let [r, g, b, _] = c.to_array();
            [r, g, b, 255]
        })
        .collect();
    image::RgbaImage::from_raw(size[0], size[1], bytes)
        .ok_or_else(|| "the read-back has the wrong size".to_string())
}
