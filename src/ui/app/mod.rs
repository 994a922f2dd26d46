//! The eframe application. Three layers of state (Rerun): facts (the [`Sources`]' vehicle
//! stores, every arm's session with every update and its history, and the [`ArmState`] drawn
//! this frame), persisted [`Settings`], and transient view state ([`ViewState`]); plus the
//! [`TimeControl`] that says which time is drawn.
//!
//! Live and replay share every drawing path: panels are handed `app.state`, which is the
//! live session's latest state while following live, and `session.state_at(cursor)` in a
//! replay or when the operator has scrubbed back ([`Shown`] says which).
//!
//! The rest of `OcuApp` lives by concern, one file each: `sources.rs` (sources, draining,
//! the drawn state), `frame.rs` (the frame and its panels), `perform.rs` (what the operator
//! asked, carried out in one place), `live.rs` (the live arm versus the drawn state),
//! `recording.rs` (the recorder's life), `event_log.rs` (the log panel's answers). Only
//! these files import `ui/app`; panels and the vocabulary (`ui/action.rs`, `ui/settings.rs`,
//! `ui/words.rs`, ...) do not.

mod clearance;
mod event_log;
mod frame;
mod jog_frame;
pub use jog_frame::{Pad, mapping_path};
mod live;
mod live_view;
mod perform;
mod recording;
mod sources;
mod work_area;

use std::time::{Duration, Instant};

use eframe::egui;

use crate::model::command::{Command, CommandKind};
use crate::model::state::ArmState;
use crate::model::update::{ComponentId, ControlState, NetFact, Outcome, Remark, Update};
use crate::model::vehicle::SharedVehicle;
use crate::net::thread::NetHandle;
use crate::sim::host::SimHandle;
use crate::ui::files::Jobs;
use crate::ui::pace::{self, Pace};
use crate::ui::panels::{plots, view3d};
use crate::ui::recording::Recording;
use crate::ui::sources::Sources;
use crate::ui::time_control::{Shown, TimeControl};

use crate::ui::action::Confirm;
use crate::ui::notice::{Notice, NoticeLevel};
use crate::ui::settings::Settings;
use crate::ui::sources::{LiveKind, ReplayState};
use crate::ui::words::{arm_name, last_outcome};

/// A command sent to the live arm while the past was drawn, whose outcome is told in a
/// notice when it comes (the past drawn hides the live effect).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Awaited {
    /// Which command.
    pub kind: CommandKind,
    /// The live arm it went to.
    pub arm: Option<ComponentId>,
}

/// Commands awaited at most (the oldest are forgotten first).
const MAX_AWAITED: usize = 8;

/// Per-view state that is not persisted.
#[derive(Default)]
pub struct ViewState {
    /// The 3D view: `app.view.arm.camera`.
    pub arm: view3d::ArmPanel,
    /// The preset being previewed as a ghost.
    pub preview: Option<u8>,
    /// A command awaiting confirmation.
    pub confirm: Option<Confirm>,
    /// The live arm the confirmation was asked about (a confirmation never goes to an arm
    /// focused while it was open).
    pub confirm_arm: Option<ComponentId>,
    /// The arm picked in a replay (focus there is the view's own; live it is the network's).
    pub replay_focus: Option<ComponentId>,
    /// The help overlay.
    pub show_help: bool,
    /// The plots: following, visible range, decimation, the time under the pointer.
    pub plots: plots::PlotsView,
    /// What the plots keep from frame to frame (derived: dropping it costs a frame).
    pub plot_caches: crate::ui::plot_caches::PlotCaches,
    /// Frames drawn (for the status bar).
    pub frames: u64,
    /// Messages for the operator, oldest first.
    pub notices: Vec<Notice>,
    /// Files are being dragged over the window.
    pub drop_hover: bool,
    /// Live commands sent while the past was drawn, whose outcomes become notices.
    pub awaited: Vec<Awaited>,
    /// The event log: the note being written, notes not saved.
    pub log: crate::ui::panels::event_log::LogView,
    /// Where each visible tile's pane was drawn in the last frame.
    pub tile_rects: Vec<(crate::ui::tiles::Pane, egui::Rect)>,
    /// Where the notices' strip was drawn in the last frame (none without a notice).
    pub notice_rect: Option<egui::Rect>,
    /// The layout changes Ctrl+Z undoes.
    pub layout_history: crate::ui::tiles::LayoutHistory,
    /// The jog: mode, selected axis, the button held, the session's acknowledgement.
    pub jog: crate::ui::jog_input::JogUi,
}

/// The application.
pub struct OcuApp {
    /// The live source and the replay.
    pub(crate) sources: Sources,
    /// The drawn time.
    pub(crate) time: TimeControl,
    /// The facts drawn this frame while the past is drawn: the session's state at the cursor.
    /// `None` while following live: the drawn state is then the live session's newest, read
    /// in place ([`OcuApp::with_drawn`]), so each live sample is applied to one `ArmState`.
    pub(crate) past: Option<ArmState>,
    /// What `past` was rebuilt for (time, loaded datagrams, focused arm): `None` while
    /// following live.
    pub(crate) drawn: Option<(f64, u64, Option<ComponentId>)>,
    /// Every arm's state at the drawn time while the past is drawn (empty while following
    /// live: the live sessions' latest states are read in place).
    pub(crate) drawn_arms: Vec<(ComponentId, ArmState)>,
    /// The arm the view is about this frame (the drawn state is its state): the network's
    /// focused arm live, the operator's pick in a replay.
    pub(crate) focus: Option<ComponentId>,
    /// UDP port of JUDP in captures opened from the UI.
    pub replay_port: u16,
    /// Persisted settings.
    pub settings: Settings,
    /// Transient view state.
    pub view: ViewState,
    /// The recorder, when recording.
    pub recording: Recording,
    /// The live view server, while it runs (View → Live view server).
    pub live_view: Option<crate::record::live::LiveServer>,
    /// File dialogs and exports running off the UI thread.
    pub(crate) jobs: Jobs,
    /// The egui context, once a frame has run (for wakers of background work).
    pub(crate) egui_ctx: Option<egui::Context>,
    start: Instant,
    /// The window title last sent (sending one asks for a repaint: only on change).
    title_sent: String,
    /// Playback ran in the frame before this one (so a repaint was due [`FRAME_INTERVAL`]
    /// later and the time since that frame is the playback's step).
    played: bool,
    /// A fixed "now" instead of the wall clock (offscreen renders: a picture must not depend
    /// on when it was taken).
    clock: Option<f64>,
    /// `--memory-limit` of this run, bytes (wins over the settings; not saved).
    pub memory_override: Option<u64>,
    /// The machine's physical memory, bytes (read once; `None`: unknown).
    ram: Option<u64>,
    /// The budget last given to the sessions (applied again when it changes).
    budget_applied: Option<usize>,
    /// Since when frames are counted for the debug log: (when, frames then, 3D pictures then).
    rate_log: Option<(Instant, u64, u64)>,
    /// The spacing of the window's own frames within its CPU budget.
    pace: Pace,
    /// The gamepad, its mapping and what it asked last (`None`: no gamepad input, as in
    /// tests and offscreen renders).
    pub(crate) pad: Option<jog_frame::Pad>,
    /// Clearance at the drawn time, against the vehicle file the window was started with.
    pub(crate) clearance: crate::model::clearance::Clearance,
}

const SETTINGS_KEY: &str = "jaus-ocu-settings";

/// The shortest frame interval the window asks for by itself (input draws at once): a
/// 60 Hz display's.
pub const FRAME_INTERVAL: Duration = MOTION_INTERVAL;

/// How often what moves by itself may be drawn at most: the arm's own motion in the 3D view
/// ([`RepaintNeeds::moving`]) and the plots' scroll, live and playing — the display's rate
/// (60 Hz; the demo's positions arrive at 50 Hz). Where frames are cheap (a GPU: a few ms
/// of CPU each) that is the rate drawn; where they are not (Mesa's software renderer: about
/// 40 ms a frame at 1280×800, egui draws the whole window; ARCHITECTURE.md, "Where a frame's
/// time goes") the window's [`Pace`] stretches it to what the CPU budget allows, starting
/// from [`pace::BUSY_START`]. A drag or a zoom of the view is input, drawn at once.
pub const MOTION_INTERVAL: Duration = Duration::from_micros(16_667);

/// How often numbers (gauges, read-outs, the status bar) are drawn while new data arrives: a
/// readable rate. New samples wake the window through the network side's waker after this;
/// discrete facts (status, emergency, link, control, outcomes) at once.
pub const NUMBERS_INTERVAL: Duration = Duration::from_millis(100);

/// How often a live view is drawn when its data is not fresh (waiting, stale, link lost):
/// the clock and the plots' window move on with time, at a cost of a few frames a minute.
pub const LIVE_IDLE_INTERVAL: Duration = Duration::from_secs(1);

/// How often background work (a replay loading, an export, a file dialog) is polled.
pub const BACKGROUND_POLL: Duration = Duration::from_millis(100);

/// What decides when the window is drawn next, with no input and no new data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepaintNeeds {
    /// What the window shows.
    pub shown: Shown,
    /// Playback runs (the cursor moves).
    pub playing: bool,
    /// Background work whose progress is shown (loading, exports, dialogs).
    pub background: bool,
    /// The 3D view changed visibly in the frame just drawn (the arm or the camera moves):
    /// it is likely to move on.
    pub moving: bool,
    /// Wall-clock time in which the plots that follow the drawn time move by one pixel
    /// column (the plot window's seconds over its width in pixels, over the playback
    /// speed); `None` when no plot follows (paused, hidden, zoomed into the past).
    pub plot_column: Option<Duration>,
    /// The live data is fresh (samples arrive): while it is not, nothing new comes to plot.
    pub live_fresh: bool,
}

impl RepaintNeeds {
    /// Nothing moves by itself: what a paused replay needs.
    pub fn still(shown: Shown) -> Self {
        Self {
            shown,
            playing: false,
            background: false,
            moving: false,
            plot_column: None,
            live_fresh: false,
        }
    }
}

/// How soon to draw again when nothing else asks (input and egui's own animations ask by
/// themselves; new live data wakes the window through the network side's waker, samples
/// after [`NUMBERS_INTERVAL`], discrete facts at once). Each part at the rate its content
/// changes: the 3D view while it moves and the plots when they move by a pixel column, both
/// at most every [`MOTION_INTERVAL`], numbers at [`NUMBERS_INTERVAL`] while playing, a live
/// view without fresh data every [`LIVE_IDLE_INTERVAL`]. `None`: not until
/// something happens, so a paused replay costs nothing. Drawing at 30 frames/s whatever
/// changed kept a software renderer busy most of a core.
pub fn repaint_after(needs: RepaintNeeds) -> Option<Duration> {
    repaint_after_with(needs, MOTION_INTERVAL, LIVE_IDLE_INTERVAL)
}

/// [`repaint_after`] with `frame` as the interval of moving parts and numbers (at least
/// [`FRAME_INTERVAL`]) and `idle` as a live view's without fresh data: the window's
/// [`Pace`] stretches both to keep its CPU budget.
pub fn repaint_after_with(
    needs: RepaintNeeds,
    frame: Duration,
    idle: Duration,
) -> Option<Duration> {
    let frame = frame.max(FRAME_INTERVAL);
    let live = matches!(needs.shown, Shown::Live);
    let moving = needs.moving.then_some(frame);
    let numbers = needs.playing.then_some(NUMBERS_INTERVAL.max(frame));
    let plots = needs
        .plot_column
        .filter(|_| needs.playing || (live && needs.live_fresh))
        .map(|c| c.max(frame));
    let idle = live.then_some(idle);
    let background = needs.background.then_some(BACKGROUND_POLL);
    [moving, numbers, plots, idle, background]
        .into_iter()
        .flatten()
        .min()
}

/// What the window is doing, for its CPU budget ([`Pace`]): drawing by itself at a
/// sub-second rate (the arm moving, live samples arriving, playing), a live view ticking with
/// nothing fresh, or still.
pub fn pace_mode(needs: &RepaintNeeds) -> pace::Mode {
    let live = matches!(needs.shown, Shown::Live);
    if needs.moving || needs.playing || (live && needs.live_fresh) {
        pace::Mode::Busy
    } else if live {
        pace::Mode::Idle
    } else {
        pace::Mode::Still
    }
}

impl OcuApp {
    /// Replaces the window's pace (the window's runner makes it first, to share its busy
    /// spacing with the network side's waker: [`Pace::shared_busy`]).
    pub fn set_pace(&mut self, pace: Pace) {
        self.pace = pace;
    }
}

/// The frame interval of moving parts in the window: [`MOTION_INTERVAL`], or for measuring
/// what frames cost (ARCHITECTURE.md, "Where a frame's time goes") the milliseconds in the
/// environment variable `JAUS_OCU_FRAME_MS`.
pub fn moving_interval() -> Duration {
    static MS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    MS.get_or_init(|| std::env::var("JAUS_OCU_FRAME_MS").ok()?.parse().ok())
        .map_or(MOTION_INTERVAL, Duration::from_millis)
}

/// The JUDP port captures are filtered on unless told otherwise.
pub const DEFAULT_REPLAY_PORT: u16 = 3794;

impl OcuApp {
    /// An app on a live source: a running network side (and the simulators it talks to, in
    /// demo mode), or `None` for an app fed updates with [`OcuApp::apply`].
    pub fn new(
        kind: LiveKind,
        net: Option<NetHandle>,
        sims: Vec<SimHandle>,
        settings: Settings,
    ) -> Self {
        let start = net.as_ref().map_or_else(Instant::now, NetHandle::start);
        Self::from_sources(Sources::live(kind, net, sims), start, settings)
    }

    /// An app replaying `replay` (no live source).
    pub fn with_replay(replay: crate::record::player::Replay, settings: Settings) -> Self {
        let mut app = Self::from_sources(Sources::none(), Instant::now(), settings);
        app.show_replay(replay);
        app
    }

    fn from_sources(sources: Sources, start: Instant, settings: Settings) -> Self {
        let settings_clearance = settings.clearance();
        Self {
            sources,
            time: TimeControl::live(),
            past: None,
            drawn: None,
            drawn_arms: Vec::new(),
            focus: None,
            replay_port: DEFAULT_REPLAY_PORT,
            settings,
            view: ViewState::default(),
            recording: Recording::Idle,
            live_view: None,
            jobs: Jobs::default(),
            egui_ctx: None,
            start,
            title_sent: String::new(),
            played: false,
            clock: None,
            memory_override: None,
            ram: crate::ui::memory::physical_memory(),
            budget_applied: None,
            rate_log: None,
            pace: Pace::from_env(moving_interval(), LIVE_IDLE_INTERVAL),
            pad: None,
            clearance: crate::model::clearance::Clearance::new(
                settings_clearance,
                std::sync::Arc::default(),
            ),
        }
    }

    /// The memory budget in force: `--memory-limit`, else the settings', else automatic.
    pub fn budget(&self) -> crate::ui::memory::Budget {
        crate::ui::memory::Budget::choose(
            self.memory_override,
            self.settings.memory_limit,
            self.ram,
        )
    }

    /// The automatic budget on this machine, bytes.
    pub fn automatic_budget(&self) -> u64 {
        crate::ui::memory::automatic(self.ram)
    }

    /// Gives the budget to the sessions when it changed since it was last given: all of it
    /// to the one session there is, half each to a live session and a replay open over it
    /// (so the two together stay within it). A replay opens with its share already set.
    pub(crate) fn apply_budget(&mut self) {
        let (bytes, _) = self.session_budgets();
        if self.budget_applied == Some(bytes) {
            return;
        }
        self.budget_applied = Some(bytes);
        for session in self.sources.vehicles() {
            match session.write() {
                Ok(mut v) => v.set_memory_budget(Some(bytes)),
                Err(e) => e.into_inner().set_memory_budget(Some(bytes)),
            }
        }
    }

    /// Each session's share of the budget now, and how many sessions share it.
    pub(crate) fn session_budgets(&self) -> (usize, usize) {
        let whole = self.budget().as_usize();
        let n = self.sources.vehicles().count().max(1);
        (whole / n, n)
    }

    /// Restores settings from eframe storage.
    pub fn load_settings(storage: Option<&dyn eframe::Storage>) -> Settings {
        let mut settings: Settings = storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default();
        settings.plots.fix_ids();
        settings
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

    /// What the window shows: live, live scrubbed back, a replay, a replay over live.
    pub fn shown(&self) -> Shown {
        self.sources.shown(&self.time)
    }

    /// The time control (cursor, playing, speed, loop).
    pub fn time_control(&self) -> &TimeControl {
        &self.time
    }

    /// The time the UI draws ("the state at time t"): now when live, the cursor otherwise.
    pub fn time(&self) -> f64 {
        self.shown().time(self.now())
    }

    /// Whether a live source runs underneath (live or demo), even while a replay is shown.
    pub fn has_live(&self) -> bool {
        self.sources.live_running()
    }

    /// The live source and the replay.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// The network side, when there is one.
    pub fn net(&self) -> Option<&NetHandle> {
        self.sources.net()
    }

    /// The vehicle store drawn (the live one, or the replay's).
    pub fn vehicle(&self) -> &SharedVehicle {
        self.sources.vehicle()
    }

    /// The arm the view is about this frame: the network's focused arm live, the arm picked
    /// in a replay.
    pub fn focus(&self) -> Option<ComponentId> {
        self.focus
    }

    /// The replay, when one is open.
    pub fn replay(&self) -> Option<&ReplayState> {
        self.sources.replay()
    }

    /// The time origin of the drawn session, ns since the Unix epoch, when known.
    pub fn start_ns(&self) -> Option<u64> {
        self.sources.start_ns()
    }

    /// Sends a command to the network thread, if what is shown allows it ([`Shown::allows`]:
    /// wherever a live arm runs underneath, going to a preset only while following live) and
    /// no other client uses our JAUS ID (then only the emergency stop leaves). A refusal is
    /// told in a notice. A command sent while the past is drawn has its outcome told in a
    /// notice too. Returns whether the command left.
    pub fn command(&mut self, cmd: Command) -> bool {
        let shown = self.shown();
        if let Some(why) = crate::ui::commands::refusal(shown, &cmd) {
            self.notify(NoticeLevel::Warning, why);
            return false;
        }
        let live = self.live_state();
        // An emergency stop is never refused here.
        if !cmd.is_emergency()
            && let Some(why) = live.as_ref().and_then(crate::ui::words::conflict_refusal)
        {
            self.notify(NoticeLevel::Error, why);
            return false;
        }
        let Some(net) = self.sources.net() else {
            return false;
        };
        let kind = cmd.kind();
        match net.send(cmd) {
            Ok(()) => {
                if shown.is_past() {
                    if self.view.awaited.len() >= MAX_AWAITED {
                        self.view.awaited.remove(0);
                    }
                    self.view.awaited.push(Awaited {
                        kind,
                        arm: live.and_then(|l| l.selected),
                    });
                }
                true
            }
            Err(e) => {
                // Said in the live session, as the network side's own errors are.
                let t = self.now();
                self.apply(&Update::Net(NetFact::Remark(Remark::Error {
                    t,
                    message: e,
                })));
                false
            }
        }
    }

    /// `f` of the drawn state: the state at the cursor while the past is drawn, else the live
    /// session's newest, read in place under its lock (take what else needs the session before:
    /// the lock is not taken twice).
    pub fn with_drawn<R>(&self, f: impl FnOnce(&ArmState) -> R) -> R {
        with_drawn_of(self.past.as_ref(), &self.sources, f)
    }

    /// A copy of the drawn state ([`OcuApp::with_drawn`] reads it without one).
    pub fn drawn_state(&self) -> ArmState {
        self.with_drawn(ArmState::clone)
    }

    /// Whether we hold control.
    pub fn holds_control(&self) -> bool {
        self.with_drawn(|s| matches!(s.control, ControlState::Held { .. }))
    }

    /// The newest command outcome in the drawn state.
    pub fn last_outcome(&self) -> Option<(CommandKind, Outcome)> {
        self.with_drawn(last_outcome)
    }

    /// The selected arm's name (identification, else its JAUS ID).
    pub fn arm_name(&self) -> Option<String> {
        self.with_drawn(arm_name)
    }

    /// The window title: arm and mode.
    pub fn title(&self) -> String {
        let arm = self.arm_name().unwrap_or_else(|| "no manipulator".into());
        format!("jaus-ocu — {arm} ({})", self.sources.title_mode())
    }

    /// What decides when the window must be drawn next ([`repaint_after`]).
    pub fn repaint_needs(&self) -> RepaintNeeds {
        let playing = self.time.playing();
        let speed = if playing { self.time.speed() } else { 1.0 };
        RepaintNeeds {
            shown: self.shown(),
            playing,
            background: self.sources.loading()
                || self.sources.replay().is_some_and(|r| r.exact.busy())
                || self.jobs.busy()
                || self.recording.is_active()
                || self.recording.is_stopping(),
            moving: self.view.arm.changed(),
            plot_column: self
                .view
                .plots
                .column_seconds(self.settings.show_plots)
                .map(|s| s / speed.abs().max(1e-3))
                .filter(|s| s.is_finite())
                .map(Duration::from_secs_f64),
            live_fresh: self.with_drawn(|s| s.freshness().positions_fresh()),
        }
    }

    /// Wall-clock seconds to advance playback by this frame. egui's `stable_dt` assumes
    /// 1/60 s after a frame that asked for no immediate repaint, which a delayed repaint
    /// (the playback's [`FRAME_INTERVAL`]) is not: replay would run at half speed. While
    /// playing, the measured time since the last frame is right; on the first frame of
    /// playback it would be the whole pause, so the prediction is used.
    pub(crate) fn frame_dt(&mut self, ctx: &egui::Context) -> f64 {
        let played = std::mem::replace(&mut self.played, self.time.playing());
        ctx.input(|i| f64::from(if played { i.unstable_dt } else { i.stable_dt }))
    }

    /// Marks force threshold crossings in the drawn session against the threshold set (the
    /// session rescans its history when the threshold changes).
    pub(crate) fn sync_threshold(&self) {
        let th = self.settings.force_threshold;
        let vehicle = self.sources.vehicle();
        let differs = vehicle.read().map_or_else(
            |e| e.into_inner().force_threshold(),
            |s| s.force_threshold(),
        ) != th.filter(|x| x.is_finite() && *x > 0.0);
        if differs {
            match vehicle.write() {
                Ok(mut s) => s.set_force_threshold(th),
                Err(e) => e.into_inner().set_force_threshold(th),
            }
        }
    }

    /// Shows a message for the operator in the notices' strip under the tiles: an Info for
    /// [`crate::ui::notice::INFO_SECONDS`], a warning for
    /// [`crate::ui::notice::WARNING_SECONDS`], an error until dismissed.
    pub fn notify(&mut self, level: NoticeLevel, text: impl Into<String>) {
        let text = text.into();
        match level {
            NoticeLevel::Error => tracing::warn!("{text}"),
            _ => tracing::info!("{text}"),
        }
        // The same message again is counted on the one shown (`notice::push`).
        crate::ui::notice::push(&mut self.view.notices, Notice::new(level, text));
    }
}

impl OcuApp {
    /// Every 10 s, at debug level (`RUST_LOG=jaus_ocu::ui::app=debug`): frames drawn and
    /// pictures of the 3D view rendered, for the per-frame figures of ARCHITECTURE.md.
    fn log_frame_rate(&mut self) {
        let now = Instant::now();
        let (since, frames, renders) = *self.rate_log.get_or_insert((now, self.view.frames, 0));
        let elapsed = now.duration_since(since).as_secs_f64();
        if elapsed >= 10.0 {
            let pictures = self.view.arm.renders();
            tracing::debug!(
                "{:.1} frames/s, {:.1} 3D pictures/s",
                (self.view.frames - frames) as f64 / elapsed,
                pictures.saturating_sub(renders) as f64 / elapsed
            );
            self.rate_log = Some((now, self.view.frames, pictures));
        }
    }
}

impl eframe::App for OcuApp {
    fn clear_color(&self, _visuals: &egui::Visuals) -> [f32; 4] {
        // The window's background: the panels draw none (`Theme::visuals`).
        crate::ui::theme::Theme::background(self.settings.dark).to_normalized_gamma_f32()
    }

    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if self.drain(Duration::from_millis(10)) {
            ctx.request_repaint();
        }
        // Sending a viewport command asks for a repaint: sent every frame, the title alone
        // kept the window drawing flat out.
        let title = self.title();
        if title != self.title_sent {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title_sent = title;
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
        let needs = self.repaint_needs();
        self.pace
            .observe(pace_mode(&needs), Instant::now(), pace::process_cpu_time);
        let mut after = repaint_after_with(needs, self.pace.busy(), self.pace.idle());
        if self.view.jog.is_active() {
            // Input first: while a jog input is held the window reports it every
            // JOG_FRAME whatever its CPU budget (the network side stops a jog whose input
            // ages past one period).
            after = Some(after.map_or(crate::ui::jog_input::JOG_FRAME, |a| {
                a.min(crate::ui::jog_input::JOG_FRAME)
            }));
        }
        if let Some(after) = after {
            ui.ctx().request_repaint_after(after);
        }
        self.log_frame_rate();
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.finish_recording_on_exit();
        self.stop_live_view("stopped: the window closed");
        self.shutdown_live(Duration::from_millis(300));
    }
}

/// [`OcuApp::with_drawn`] from the app's fields (`past`, `sources`), for a panel that borrows
/// other fields of the app mutably while it reads the drawn state.
pub(crate) fn with_drawn_of<R>(
    past: Option<&ArmState>,
    sources: &Sources,
    f: impl FnOnce(&ArmState) -> R,
) -> R {
    match past {
        Some(s) => f(s),
        None => f(&crate::ui::sources::read_vehicle(sources.vehicle())
            .focused()
            .latest),
    }
}
