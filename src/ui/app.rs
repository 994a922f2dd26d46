//! The eframe application: drains [`Update`]s into the model, lays out the panels and sends
//! the operator's [`Command`]s. Three layers of state (Rerun): facts ([`ArmState`] and the
//! force/torque [`History`], changed only by updates), persisted [`Settings`], and transient
//! view state ([`ViewState`]).

use std::time::{Duration, Instant};

use eframe::egui;
use serde::{Deserialize, Serialize};

use super::theme::Theme;
use super::{gauges, help, plots, presets, status_bar, top_bar, view3d};
use crate::model::history::History;
use crate::model::state::ArmState;
use crate::model::update::{Command, CommandKind, ControlState, Outcome, Update};
use crate::net::server::SimHandle;
use crate::net::thread::NetHandle;

/// Where the data comes from (the window title and badge say it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Arms on the network.
    Live,
    /// The built-in simulator on loopback.
    Simulated,
}

/// Settings kept between runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// Dark theme.
    pub dark: bool,
    /// Angles in degrees (else radians).
    pub degrees: bool,
    /// Lengths in millimetres (else metres).
    pub millimetres: bool,
    /// Show the joint gauges panel.
    pub show_gauges: bool,
    /// Show the force/torque plots.
    pub show_plots: bool,
    /// Show the preset picker.
    pub show_presets: bool,
    /// Draw joint axes in 3D.
    pub show_axes: bool,
    /// Draw joint frames in 3D.
    pub show_frames: bool,
    /// Seconds of history the plots show while following live.
    pub plot_window_s: f64,
    /// Optional force threshold line (N).
    pub force_threshold: Option<f64>,
    /// Authority used when requesting control.
    pub authority: u8,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            dark: true,
            degrees: true,
            millimetres: false,
            show_gauges: true,
            show_plots: true,
            show_presets: true,
            show_axes: false,
            show_frames: false,
            plot_window_s: 30.0,
            force_threshold: None,
            authority: 100,
        }
    }
}

/// A confirmation the operator must give before a command leaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    /// Go to this preset.
    GoToPreset(u8),
    /// Clear the emergency and resume.
    ClearEmergency,
}

/// Per-view state that is not persisted.
pub struct ViewState {
    /// The 3D view (camera).
    pub arm_view: view3d::ArmView3d,
    /// The preset being previewed as a ghost.
    pub preview: Option<u8>,
    /// A command awaiting confirmation.
    pub confirm: Option<Confirm>,
    /// The help overlay.
    pub show_help: bool,
    /// Plots follow live time (else paused / zoomed).
    pub follow_live: bool,
    /// The latest outcome shown in the status bar.
    pub last_outcome: Option<(CommandKind, Outcome)>,
    /// Frames drawn (for the status bar).
    pub frames: u64,
    /// Decimate plot data before egui_plot sees it (off only to measure what it saves).
    pub decimate: bool,
    /// The time the UI draws: `None` follows now (live); replay sets it.
    pub cursor: Option<f64>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            arm_view: view3d::ArmView3d::default(),
            preview: None,
            confirm: None,
            show_help: false,
            follow_live: true,
            last_outcome: None,
            frames: 0,
            decimate: true,
            cursor: None,
        }
    }
}

/// Force/torque channels in the history.
pub const FT_CHANNELS: [&str; 7] = ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz", "|F|"];

/// The application.
pub struct OcuApp {
    /// Data source.
    pub mode: Mode,
    net: Option<NetHandle>,
    _sim: Option<SimHandle>,
    /// Facts.
    pub state: ArmState,
    /// Force/torque history (7 channels).
    pub ft: History,
    /// Persisted settings.
    pub settings: Settings,
    /// Transient view state.
    pub view: ViewState,
    /// Commands the UI issued this frame (sent to the network thread, and kept for tests).
    pub sent: Vec<Command>,
    start: Instant,
}

const SETTINGS_KEY: &str = "jaus-ocu-settings";

impl OcuApp {
    /// An app on a running network side (and the simulator it talks to, in demo mode).
    pub fn new(
        mode: Mode,
        net: Option<NetHandle>,
        sim: Option<SimHandle>,
        settings: Settings,
    ) -> Self {
        let start = net.as_ref().map_or_else(Instant::now, |n| n.start());
        Self {
            mode,
            net,
            _sim: sim,
            state: ArmState::default(),
            ft: History::new(FT_CHANNELS.len()),
            settings,
            view: ViewState::default(),
            sent: Vec::new(),
            start,
        }
    }

    /// Restores settings from eframe storage.
    pub fn load_settings(storage: Option<&dyn eframe::Storage>) -> Settings {
        storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default()
    }

    /// Seconds since the session started (the time base of every update).
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The time the UI draws ("the state at time t"): now when live, the cursor in replay.
    pub fn time(&self) -> f64 {
        self.view.cursor.unwrap_or_else(|| self.now())
    }

    /// Applies one update to the facts.
    pub fn apply(&mut self, u: &Update) {
        if let Update::ForceTorque { t, force, torque } = u {
            let f = force.map(|x| x.unwrap_or(f64::NAN));
            let m = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
            let tq = torque.map(|x| x.unwrap_or(f64::NAN));
            self.ft
                .push(*t, &[f[0], f[1], f[2], tq[0], tq[1], tq[2], m]);
        }
        if let Update::CommandOutcome {
            command, outcome, ..
        } = u
        {
            self.view.last_outcome = Some((*command, outcome.clone()));
        }
        if let Update::Selected { .. } = u {
            self.ft = History::new(FT_CHANNELS.len());
            self.view.preview = None;
        }
        self.state.apply(u);
    }

    /// Drains the update channel for at most `budget` (Rerun: 10 ms, then ask for another frame).
    pub fn drain(&mut self, budget: Duration) -> bool {
        let Some(net) = &self.net else { return false };
        let until = Instant::now() + budget;
        let rx = net.updates().clone();
        let mut more = false;
        while let Ok(u) = rx.try_recv() {
            self.apply(&u);
            if Instant::now() >= until {
                more = true;
                break;
            }
        }
        more
    }

    /// Sends a command to the network thread (and records it).
    pub fn command(&mut self, cmd: Command) {
        if let Some(net) = &self.net
            && let Err(e) = net.send(cmd.clone())
        {
            let t = self.now();
            self.state.apply(&Update::Error { t, message: e });
        }
        self.sent.push(cmd);
    }

    /// Whether we hold control.
    pub fn holds_control(&self) -> bool {
        matches!(self.state.control, ControlState::Held { .. })
    }

    /// The window title: arm and mode.
    pub fn title(&self) -> String {
        let arm = self
            .state
            .selected
            .and_then(|id| self.state.components.get(&id))
            .and_then(|c| c.0.identification.clone())
            .or_else(|| self.state.selected.map(|id| id.to_string()))
            .unwrap_or_else(|| "no manipulator".into());
        let mode = match self.mode {
            Mode::Live => "live",
            Mode::Simulated => "SIMULATED",
        };
        format!("jaus-ocu — {arm} ({mode})")
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        use egui::Key;
        let (f1, esc, space, l, u, c, e, h) = ctx.input(|i| {
            (
                i.key_pressed(Key::F1) || (i.modifiers.shift && i.key_pressed(Key::Questionmark)),
                i.key_pressed(Key::Escape),
                i.key_pressed(Key::Space),
                i.key_pressed(Key::L),
                i.key_pressed(Key::U),
                i.key_pressed(Key::C),
                i.key_pressed(Key::E),
                i.key_pressed(Key::H),
            )
        });
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        if f1 || h {
            self.view.show_help = !self.view.show_help;
        }
        if esc {
            self.view.show_help = false;
            self.view.confirm = None;
            self.view.preview = None;
        }
        if space || e {
            // The emergency stop never asks twice.
            self.command(Command::SetEmergency);
        }
        if l {
            self.view.follow_live = true;
        }
        if u {
            self.settings.degrees = !self.settings.degrees;
        }
        if c {
            if self.holds_control() {
                self.command(Command::ReleaseControl);
            } else {
                self.command(Command::RequestControl {
                    authority: self.settings.authority,
                });
            }
        }
    }

    /// Draws one frame (also what the egui_kittest tests drive).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        ctx.set_visuals(Theme::visuals(self.settings.dark));
        let theme = Theme::new(self.settings.dark);
        self.view.frames += 1;
        self.shortcuts(&ctx);
        egui::Panel::top("top_bar").show(ui, |ui| top_bar::show(self, ui, &theme));
        egui::Panel::bottom("status_bar").show(ui, |ui| status_bar::show(self, ui, &theme));
        if self.settings.show_plots {
            egui::Panel::bottom("plots")
                .resizable(true)
                .default_size(260.0)
                .show(ui, |ui| plots::show(self, ui, &theme));
        }
        if self.settings.show_gauges {
            egui::Panel::left("gauges")
                .resizable(true)
                .default_size(300.0)
                .show(ui, |ui| gauges::show(self, ui, &theme));
        }
        if self.settings.show_presets {
            egui::Panel::right("presets")
                .resizable(true)
                .default_size(220.0)
                .show(ui, |ui| presets::show(self, ui, &theme));
        }
        egui::CentralPanel::default().show(ui, |ui| view3d::show(self, ui, &theme));
        help::show(self, &ctx);
        presets::confirmations(self, &ctx, &theme);
    }
}

impl eframe::App for OcuApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if self.drain(Duration::from_millis(10)) {
            ctx.request_repaint();
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(self.title()));
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
        self.sent.clear();
        // Live data: redraw at a steady pace (the network thread also wakes us on bursts).
        ui.ctx().request_repaint_after(Duration::from_millis(33));
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        if let Some(net) = self.net.take() {
            net.shutdown(Duration::from_millis(300));
        }
    }
}
