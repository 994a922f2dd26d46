//! The eframe application: drains [`Update`]s into the model, lays out the panels and sends
//! the operator's [`Command`]s. Three layers of state (Rerun): facts (the [`Session`] with
//! every update and its history, and the [`ArmState`] drawn this frame), persisted
//! [`Settings`], and transient view state ([`ViewState`]).
//!
//! Live and replay share every drawing path: panels read `app.state`, which is the session's
//! latest state while following live, and `session.state_at(cursor)` in replay or when the
//! operator has scrubbed back.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use eframe::egui;
use serde::{Deserialize, Serialize};

use super::files::{self, Jobs};
use super::recording::Recording;
use super::theme::Theme;
use super::timeline::{self, Playback};
use super::{gauges, help, plots, presets, status_bar, top_bar, view3d};
use crate::model::session::{Session, SharedSession};
use crate::model::state::ArmState;
use crate::model::update::{Command, CommandKind, ControlState, Outcome, Update};
use crate::net::thread::NetHandle;
use crate::record::player::{LoadProgress, LoadWaker, Replay};
use crate::sim::host::SimHandle;

pub use crate::model::session::FT_CHANNELS;

/// Where the data comes from (the window title and badge say it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Arms on the network.
    Live,
    /// The built-in simulator on loopback.
    Simulated,
    /// A recording or capture being replayed (read-only: no command leaves).
    Replay(PathBuf),
}

impl Mode {
    /// Whether this is a replay.
    pub fn is_replay(&self) -> bool {
        matches!(self, Mode::Replay(_))
    }
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

/// How serious a notice is (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// Something finished as asked.
    Info,
    /// Done, but not completely (a truncated file).
    Warning,
    /// Failed.
    Error,
}

/// A message for the operator, shown under the top bar until dismissed.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// How serious.
    pub level: NoticeLevel,
    /// What happened and what to do.
    pub text: String,
}

/// Notices kept at most (the oldest go first).
pub const MAX_NOTICES: usize = 6;

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
    /// Plots follow the drawn time (now when live, the cursor in replay); else paused / zoomed.
    pub follow_live: bool,
    /// Frames drawn (for the status bar).
    pub frames: u64,
    /// Decimate plot data before egui_plot sees it (off only to measure what it saves).
    pub decimate: bool,
    /// The time the UI draws: `None` follows now (live); replay and scrubbing set it.
    pub cursor: Option<f64>,
    /// Play/pause, speed and loop of the timeline.
    pub playback: Playback,
    /// The time range the plots show (for the CSV export), when they are shown.
    pub plot_range: Option<(f64, f64)>,
    /// Where the 3D view was drawn last frame, in points (for the PNG export).
    pub view3d_rect: Option<egui::Rect>,
    /// Messages for the operator, oldest first.
    pub notices: Vec<Notice>,
    /// Files are being dragged over the window.
    pub drop_hover: bool,
    /// What `state` was rebuilt for: `None` while it is the live latest state.
    drawn: Option<(f64, u64)>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            arm_view: view3d::ArmView3d::default(),
            preview: None,
            confirm: None,
            show_help: false,
            follow_live: true,
            frames: 0,
            decimate: true,
            cursor: None,
            playback: Playback::new(0.0),
            plot_range: None,
            view3d_rect: None,
            notices: Vec::new(),
            drop_hover: false,
            drawn: None,
        }
    }
}

/// A file being replayed, with how far its loading has come.
pub struct ReplayState {
    /// The file and its loader.
    pub replay: Replay,
    /// Loading progress as of this frame.
    pub progress: LoadProgress,
    /// The end of loading has been reported to the operator.
    reported: bool,
    /// Where the UI last put the cursor by itself (at the first joint positions, so the arm
    /// shows at once); `None` once the operator has moved it or the place is settled.
    pub(crate) auto_cursor: Option<f64>,
}

impl ReplayState {
    /// Whether the loader is still adding to the session.
    pub fn loading(&self) -> bool {
        !self.progress.finished
    }
}

/// Reads a session, whatever a panicking writer left behind (the data is append-only, so a
/// half-applied batch is still a consistent prefix).
pub fn read_session(s: &SharedSession) -> RwLockReadGuard<'_, Session> {
    s.read().unwrap_or_else(|e| e.into_inner())
}

fn write_session(s: &SharedSession) -> RwLockWriteGuard<'_, Session> {
    s.write().unwrap_or_else(|e| e.into_inner())
}

/// The application.
pub struct OcuApp {
    /// What is shown: the live source, or a replay.
    pub mode: Mode,
    /// The live source's mode (what "Back to live" returns to), when there is one.
    live_mode: Option<Mode>,
    pub(crate) net: Option<NetHandle>,
    _sim: Option<SimHandle>,
    /// The facts drawn this frame: the live latest state, or the session's state at the cursor.
    pub state: ArmState,
    /// The session drawn (the live one, or the replay's).
    pub session: SharedSession,
    /// The live session, filled from the network whatever is shown.
    pub live_session: SharedSession,
    /// The replay, when one is open.
    pub replay: Option<ReplayState>,
    /// UDP port of JUDP in captures opened from the UI.
    pub replay_port: u16,
    /// Persisted settings.
    pub settings: Settings,
    /// Transient view state.
    pub view: ViewState,
    /// Commands the UI issued this frame (sent to the network thread, and kept for tests).
    pub sent: Vec<Command>,
    /// The recorder, when recording.
    pub recording: Recording,
    /// File dialogs and exports running off the UI thread.
    pub(crate) jobs: Jobs,
    /// The egui context, once a frame has run (for wakers of background work).
    pub(crate) egui_ctx: Option<egui::Context>,
    start: Instant,
    /// A fixed "now" instead of the wall clock (offscreen renders: a picture must not depend
    /// on when it was taken).
    clock: Option<f64>,
}

const SETTINGS_KEY: &str = "jaus-ocu-settings";

/// The JUDP port captures are filtered on unless told otherwise.
pub const DEFAULT_REPLAY_PORT: u16 = 3794;

impl OcuApp {
    /// An app on a running network side (and the simulator it talks to, in demo mode).
    pub fn new(
        mode: Mode,
        net: Option<NetHandle>,
        sim: Option<SimHandle>,
        settings: Settings,
    ) -> Self {
        let start = net.as_ref().map_or_else(Instant::now, |n| n.start());
        let live: SharedSession = Arc::new(std::sync::RwLock::new(Session::new()));
        Self {
            live_mode: (!mode.is_replay()).then(|| mode.clone()),
            mode,
            net,
            _sim: sim,
            state: ArmState::default(),
            session: live.clone(),
            live_session: live,
            replay: None,
            replay_port: DEFAULT_REPLAY_PORT,
            settings,
            view: ViewState::default(),
            sent: Vec::new(),
            recording: Recording::Idle,
            jobs: Jobs::default(),
            egui_ctx: None,
            start,
            clock: None,
        }
    }

    /// An app replaying `replay` (no network side).
    pub fn with_replay(replay: Replay, settings: Settings) -> Self {
        let mut app = Self::new(Mode::Replay(replay.path.clone()), None, None, settings);
        app.show_replay(replay);
        app
    }

    /// Restores settings from eframe storage.
    pub fn load_settings(storage: Option<&dyn eframe::Storage>) -> Settings {
        storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default()
    }

    /// Seconds since the live session started (the time base of every live update).
    pub fn now(&self) -> f64 {
        self.clock
            .unwrap_or_else(|| self.start.elapsed().as_secs_f64())
    }

    /// Stops the clock at `t`: [`OcuApp::now`] returns it from now on (offscreen renders and
    /// tests of a live app fed recorded updates).
    pub fn freeze_clock(&mut self, t: f64) {
        self.clock = Some(t);
    }

    /// The time the UI draws ("the state at time t"): now when live, the cursor in replay.
    pub fn time(&self) -> f64 {
        self.view.cursor.unwrap_or_else(|| self.now())
    }

    /// Whether commands are refused (a replay is shown).
    pub fn read_only(&self) -> bool {
        self.replay.is_some()
    }

    /// Whether a live source runs underneath (live or demo), even while a replay is shown.
    pub fn has_live(&self) -> bool {
        self.net.is_some()
    }

    /// The network side, when there is one.
    pub fn net(&self) -> Option<&NetHandle> {
        self.net.as_ref()
    }

    /// The time origin of the drawn session, ns since the Unix epoch, when known.
    pub fn start_ns(&self) -> Option<u64> {
        match &self.replay {
            // 0 until the loader has read the first record.
            Some(r) => Some(r.replay.start_ns()).filter(|&ns| ns > 0),
            None => self.net.as_ref().map(NetHandle::start_unix_ns),
        }
    }

    /// Applies one live update to the live session (and to the drawn state while following).
    pub fn apply(&mut self, u: &Update) {
        let live = self.live_session.clone();
        let mut s = write_session(&live);
        self.apply_to(&mut s, u);
    }

    fn apply_to(&mut self, live: &mut Session, u: &Update) {
        live.apply(u);
        if let Update::Selected { .. } = u {
            self.view.preview = None;
        }
        // The drawn state follows the live session only while it is the live latest state.
        if self.replay.is_none() && self.view.drawn.is_none() && self.view.cursor.is_none() {
            self.state.apply(u);
        }
    }

    /// Drains the update channel for at most `budget` (Rerun: 10 ms, then ask for another
    /// frame). The session's lock is taken once per drain; when an export is reading the
    /// session the drain waits for the next frame (the network side coalesces meanwhile).
    pub fn drain(&mut self, budget: Duration) -> bool {
        let Some(net) = &self.net else { return false };
        let rx = net.updates().clone();
        if rx.is_empty() {
            return false;
        }
        let live = self.live_session.clone();
        let mut s = match live.try_write() {
            Ok(s) => s,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return true,
        };
        let until = Instant::now() + budget;
        let mut more = false;
        while let Ok(u) = rx.try_recv() {
            self.apply_to(&mut s, &u);
            if Instant::now() >= until {
                more = true;
                break;
            }
        }
        more
    }

    /// Sends a command to the network thread (and records it). A replay is read-only: nothing
    /// is sent and nothing recorded — except the emergency stop while a live arm runs
    /// underneath the replay: that must never be out of the operator's reach.
    pub fn command(&mut self, cmd: Command) {
        if self.read_only() && !(cmd == Command::SetEmergency && self.has_live()) {
            return;
        }
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

    /// The newest command outcome in the drawn state.
    pub fn last_outcome(&self) -> Option<(CommandKind, Outcome)> {
        self.state
            .outcomes
            .last()
            .map(|(_, kind, outcome)| (*kind, outcome.clone()))
    }

    /// The selected arm's name (identification, else its JAUS ID).
    pub fn arm_name(&self) -> Option<String> {
        self.state
            .selected
            .and_then(|id| self.state.components.get(&id))
            .and_then(|c| c.0.identification.clone())
            .or_else(|| self.state.selected.map(|id| id.to_string()))
    }

    /// The window title: arm and mode.
    pub fn title(&self) -> String {
        let arm = self.arm_name().unwrap_or_else(|| "no manipulator".into());
        let mode = match &self.mode {
            Mode::Live => "live".to_string(),
            Mode::Simulated => "SIMULATED".to_string(),
            Mode::Replay(path) => format!("REPLAY {}", file_name(path)),
        };
        format!("jaus-ocu — {arm} ({mode})")
    }

    /// Shows a message under the top bar until the operator dismisses it.
    pub fn notify(&mut self, level: NoticeLevel, text: impl Into<String>) {
        let text = text.into();
        match level {
            NoticeLevel::Error => tracing::warn!("{text}"),
            _ => tracing::info!("{text}"),
        }
        if self.view.notices.len() >= MAX_NOTICES {
            self.view.notices.remove(0);
        }
        self.view.notices.push(Notice { level, text });
    }

    /// Opens `path` for replay (loading in the background). The live source, if any, keeps
    /// running underneath ("Back to live" returns to it). A file that cannot be opened leaves
    /// everything as it was and says why.
    pub fn open_replay(&mut self, path: &Path) -> Result<(), String> {
        let waker: Option<LoadWaker> = self.egui_ctx.clone().map(|ctx| {
            Arc::new(move || ctx.request_repaint_after(Duration::from_millis(30))) as LoadWaker
        });
        match Replay::open(path, self.replay_port, waker) {
            Ok(replay) => {
                self.show_replay(replay);
                Ok(())
            }
            Err(e) => {
                let text = format!("{e}");
                self.notify(NoticeLevel::Error, text.clone());
                Err(text)
            }
        }
    }

    fn show_replay(&mut self, replay: Replay) {
        self.mode = Mode::Replay(replay.path.clone());
        self.session = replay.session.clone();
        self.replay = Some(ReplayState {
            progress: replay.progress(),
            replay,
            reported: false,
            auto_cursor: Some(0.0),
        });
        self.view.cursor = Some(0.0);
        self.view.playback = Playback::new(0.0);
        self.view.follow_live = true;
        self.view.preview = None;
        self.view.confirm = None;
        self.view.drawn = None;
        self.state = ArmState::default();
        self.view.arm_view = view3d::ArmView3d::default();
    }

    /// Leaves the replay and follows the live source again (no-op without one).
    pub fn back_to_live(&mut self) {
        let Some(mode) = self.live_mode.clone() else {
            return;
        };
        self.replay = None;
        self.mode = mode;
        self.session = self.live_session.clone();
        self.view.playback = Playback::new(0.0);
        self.view.arm_view = view3d::ArmView3d::default();
        self.follow_live();
    }

    /// Follows now again (live), or makes the plots follow the cursor (replay).
    pub fn follow_live(&mut self) {
        self.view.follow_live = true;
        if self.replay.is_none() {
            // While scrubbed back the drawn state stopped following the live one.
            let scrubbed = self.view.cursor.take().is_some() | self.view.drawn.take().is_some();
            self.view.playback.playing = false;
            if scrubbed {
                self.state = read_session(&self.session).latest.clone();
            }
        }
    }

    /// Moves the drawn time to `t` (clamped to the session); live mode stops following now.
    pub fn seek(&mut self, t: f64) {
        let span = read_session(&self.session).span();
        self.view.playback.seek(t, span);
        self.view.cursor = Some(self.view.playback.cursor);
    }

    /// Rebuilds `state` for the drawn time when it changed (or more of the file arrived).
    pub fn sync_state(&mut self) {
        match self.view.cursor {
            None => {
                if self.view.drawn.take().is_some() {
                    self.state = read_session(&self.session).latest.clone();
                }
            }
            Some(t) => {
                let generation = self.replay.as_ref().map_or(0, |r| r.progress.datagrams);
                if self.view.drawn != Some((t, generation)) {
                    self.state = read_session(&self.session).state_at(t);
                    self.view.drawn = Some((t, generation));
                }
            }
        }
    }

    /// Polls the loader: progress, and once loading ends, what stopped it.
    fn poll_replay(&mut self) {
        let Some(r) = &mut self.replay else { return };
        r.progress = r.replay.progress();
        if !r.progress.finished || r.reported {
            return;
        }
        r.reported = true;
        let p = r.progress.clone();
        let name = file_name(&r.replay.path);
        let end = read_session(&self.session).span().map_or(0.0, |s| s.1);
        if let Some(why) = &p.stopped {
            self.notify(
                NoticeLevel::Warning,
                format!(
                    "{name}: loaded up to {} ({} datagrams); {why}",
                    timeline::format_hms(end, false),
                    p.datagrams
                ),
            );
        }
        if !p.problems.is_empty() {
            let first: Vec<&str> = p.problems.iter().take(3).map(String::as_str).collect();
            let more = p.problems.len().saturating_sub(first.len());
            self.notify(
                NoticeLevel::Warning,
                format!(
                    "{name}: {} problem(s) while loading: {}{}",
                    p.problems.len(),
                    first.join("; "),
                    if more > 0 {
                        format!("; and {more} more")
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        use egui::{Key, Modifiers};
        // Ctrl combinations first, consumed so that R (reset the 3D camera) does not fire too.
        let (open, record) = ctx.input_mut(|i| {
            (
                i.consume_key(Modifiers::COMMAND, Key::O),
                i.consume_key(Modifiers::COMMAND, Key::R),
            )
        });
        if open {
            files::request(self, files::Task::Open);
        }
        if record {
            self.toggle_recording();
        }
        if ctx.egui_wants_keyboard_input() {
            return;
        }
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
        if f1 || h {
            self.view.show_help = !self.view.show_help;
        }
        if esc {
            self.view.show_help = false;
            self.view.confirm = None;
            self.view.preview = None;
        }
        if self.read_only() {
            if space {
                timeline::toggle_play(self);
            }
            // E still stops a live arm running underneath the replay.
            if e && self.has_live() {
                self.command(Command::SetEmergency);
            }
        } else if space || e {
            // The emergency stop never asks twice.
            self.command(Command::SetEmergency);
        }
        if l {
            self.follow_live();
        }
        if u {
            self.settings.degrees = !self.settings.degrees;
        }
        if c && !self.read_only() {
            if self.holds_control() {
                self.command(Command::ReleaseControl);
            } else {
                self.command(Command::RequestControl {
                    authority: self.settings.authority,
                });
            }
        }
        timeline::keys(self, ctx);
    }

    /// Work that must happen every frame before drawing: background jobs, loading progress,
    /// dropped files, keys, playback, and the state at the drawn time.
    fn before_panels(&mut self, ctx: &egui::Context) {
        self.poll_replay();
        files::poll(self, ctx);
        self.poll_recording();
        files::dropped(self, ctx);
        self.shortcuts(ctx);
        let dt = ctx.input(|i| f64::from(i.stable_dt));
        timeline::tick(self, dt);
        self.sync_state();
        if self.view.playback.playing {
            ctx.request_repaint();
        } else if self.replay.as_ref().is_some_and(ReplayState::loading) || self.jobs.busy() {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }

    /// Draws one frame (also what the egui_kittest tests drive).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ctx.clone());
        }
        ctx.set_visuals(Theme::visuals(self.settings.dark));
        let theme = Theme::new(self.settings.dark);
        self.view.frames += 1;
        self.before_panels(&ctx);
        egui::Panel::top("top_bar").show(ui, |ui| top_bar::show(self, ui, &theme));
        if !self.view.notices.is_empty() {
            egui::Panel::top("notices").show(ui, |ui| show_notices(self, ui, &theme));
        }
        egui::Panel::bottom("status_bar").show(ui, |ui| status_bar::show(self, ui, &theme));
        egui::Panel::bottom("timeline").show(ui, |ui| timeline::show(self, ui, &theme));
        if self.settings.show_plots {
            egui::Panel::bottom("plots")
                .resizable(true)
                .default_size(260.0)
                .show(ui, |ui| plots::show(self, ui, &theme));
        } else {
            self.view.plot_range = None;
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
        files::prompt(self, &ctx, &theme);
        files::drop_overlay(self, &ctx, &theme);
    }
}

/// The file name of `path` for titles and messages.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn show_notices(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    let mut dismiss = None;
    for (i, n) in app.view.notices.iter().enumerate() {
        ui.horizontal(|ui| {
            let colour = match n.level {
                NoticeLevel::Info => theme.ok,
                NoticeLevel::Warning => theme.warn,
                NoticeLevel::Error => theme.danger,
            };
            if ui
                .small_button("Dismiss")
                .on_hover_text("Hide this message")
                .clicked()
            {
                dismiss = Some(i);
            }
            ui.add(egui::Label::new(egui::RichText::new(&n.text).color(colour)).wrap());
        });
    }
    if let Some(i) = dismiss {
        app.view.notices.remove(i);
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
        if self.has_live() {
            ui.ctx().request_repaint_after(Duration::from_millis(33));
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.finish_recording_on_exit();
        if let Some(net) = self.net.take() {
            net.shutdown(Duration::from_millis(300));
        }
    }
}
