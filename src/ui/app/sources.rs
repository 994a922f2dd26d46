//! The sources of `OcuApp`: updates applied and drained within a time budget, replays opened
//! and closed (and the previous view restored), the drawn time moved, the drawn state synced
//! with it, the focused arm, exact values read back from a recording, the memory line, the
//! live side shut down. The `Sources` types are `ui/sources.rs`.

use super::OcuApp;
use crate::model::command::Command;
use crate::model::session::Session;
use crate::model::update::{ComponentId, NetFact, Remark, Update};
use crate::model::vehicle::Vehicle;
use crate::record::player::{LoadWaker, Replay};
use crate::ui::format::format_hms;
use crate::ui::notice::NoticeLevel;
use crate::ui::sources::{Previous, ReplayState, read_vehicle, write_vehicle};
use crate::ui::time_control::{Shown, TimeCommand, TimeControl};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl OcuApp {
    /// Applies one live update to the live session (the drawn state while following live is
    /// its newest, read in place: `OcuApp::with_drawn`). Without a live source the update is
    /// dropped.
    pub fn apply(&mut self, u: &Update) {
        let Some(live) = self.sources.live.as_ref().map(|l| l.vehicle.clone()) else {
            return;
        };
        let mut s = write_vehicle(&live);
        self.apply_to(&mut s, u);
    }

    fn apply_to(&mut self, live: &mut Vehicle, u: &Update) {
        live.apply(u);
        if let Some(r @ Remark::CommandOutcome { .. }) = u.remark() {
            // The outcome of a command to one arm is told with that arm's state.
            let state = u
                .arm_id()
                .and_then(|id| live.arm(id))
                .unwrap_or(live.focused());
            self.outcome_notice(&state.latest, r);
        }
        if let Update::Net(NetFact::Selected { .. }) = u {
            self.view.preview = None;
        }
    }

    /// Drains the update channel for at most `budget` (Rerun: 10 ms, then ask for another
    /// frame); `true` when more is waiting. The session's lock is taken once per drain; when
    /// an export is reading the session the drain waits for the next frame (the network
    /// side coalesces meanwhile).
    pub fn drain(&mut self, budget: Duration) -> bool {
        let Some(live) = &self.sources.live else {
            return false;
        };
        let Some(net) = &live.net else { return false };
        let rx = net.updates().clone();
        if rx.is_empty() {
            return false;
        }
        let vehicle = live.vehicle.clone();
        let mut s = match vehicle.try_write() {
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

    /// Opens `path` for replay (loading in the background). The live source, if any, keeps
    /// running underneath ("Back to live" returns to it). A file that cannot be opened leaves
    /// everything as it was and says why.
    pub fn open_replay(&mut self, path: &Path) -> Result<(), String> {
        let waker: Option<LoadWaker> = self.egui_ctx.clone().map(|ctx| {
            Arc::new(move || ctx.request_repaint_after(Duration::from_millis(30))) as LoadWaker
        });
        // The replay's share: half, with the live session's other half (`apply_budget`).
        let share = self.budget().as_usize() / if self.sources.live.is_some() { 2 } else { 1 };
        match Replay::open_within(path, self.replay_port, waker, Some(share)) {
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

    pub(crate) fn show_replay(&mut self, replay: Replay) {
        self.sources.previous = Some(Box::new(Previous {
            replay: self.sources.replay.take(),
            time: self.time.clone(),
            replay_focus: self.view.replay_focus,
        }));
        self.sources.replay = Some(ReplayState {
            progress: replay.progress(),
            replay,
            reported: false,
            auto_cursor: Some(0.0),
            seek_when_loaded: None,
            exact: crate::ui::exact::ExactWindow::default(),
        });
        self.time = TimeControl::replay();
        // The whole file in the plots (its span, growing while it loads), not the empty
        // window before the cursor at its start.
        self.view.plots.show_whole();
        self.view.preview = None;
        self.view.confirm = None;
        self.view.replay_focus = None;
        self.drawn = None;
        self.drawn_arms.clear();
        self.past = None;
        self.view.arm = crate::ui::panels::view3d::ArmPanel::default();
    }

    /// Shows again what was shown before the replay now loaded (see [`Sources::previous`]);
    /// whether there was something to go back to.
    fn restore_previous(&mut self) -> bool {
        let Some(prev) = self.sources.previous.take() else {
            return false;
        };
        match prev.replay {
            Some(replay) => {
                self.sources.replay = Some(replay);
                self.time = prev.time;
                self.view.replay_focus = prev.replay_focus;
            }
            None if self.sources.live.is_some() => {
                self.back_to_live();
                self.time = prev.time;
            }
            None => return false,
        }
        self.drawn = None;
        self.drawn_arms.clear();
        self.view.arm = crate::ui::panels::view3d::ArmPanel::default();
        self.sync_state();
        true
    }

    /// Leaves the replay and follows the live source again (no-op without one).
    pub fn back_to_live(&mut self) {
        if self.sources.live.is_none() {
            return;
        }
        self.sources.replay = None;
        self.view.replay_focus = None;
        self.time = TimeControl::live();
        self.view.arm = crate::ui::panels::view3d::ArmPanel::default();
        self.view.plots.follow = true;
        self.sync_state();
    }

    /// Carries out a time command on the drawn session; when the time rejoins live, the plots
    /// follow again too.
    pub fn time_command(&mut self, cmd: TimeCommand) {
        let vehicle = self.sources.vehicle().clone();
        let rejoined = {
            let s = read_vehicle(&vehicle);
            let cx = self
                .sources
                .time_context(s.arm_or_focused(self.focus), self.now());
            self.time.apply(cmd, &cx)
        };
        if rejoined {
            self.view.plots.follow = true;
        }
        self.sync_state();
    }

    /// Moves the drawn time to `t` (clamped to the session); live, the view stops following
    /// now.
    pub fn seek(&mut self, t: f64) {
        self.time_command(TimeCommand::Seek(t));
    }

    /// Advances playback by `dt` seconds of wall-clock time (once per frame, before drawing).
    pub(crate) fn tick(&mut self, dt: f64) {
        let vehicle = self.sources.vehicle().clone();
        self.place_at_first_positions(read_vehicle(&vehicle).arm_or_focused(self.focus));
        let rejoined = {
            let s = read_vehicle(&vehicle);
            let cx = self
                .sources
                .time_context(s.arm_or_focused(self.focus), self.now());
            self.time.tick(dt, &cx)
        };
        if rejoined {
            self.view.plots.follow = true;
        }
    }

    /// A replay opens where the arm can be drawn: at its first joint positions (or its start
    /// when it has none), until the operator moves the cursor.
    fn place_at_first_positions(&mut self, s: &Session) {
        let Some(r) = &mut self.sources.replay else {
            return;
        };
        if let Some(t) = r.seek_when_loaded {
            if s.span().is_some_and(|(_, b)| b >= t) || !r.loading() {
                r.seek_when_loaded = None;
                r.auto_cursor = None;
                let cx = self.sources.time_context(s, 0.0);
                self.time.apply(TimeCommand::Seek(t), &cx);
            }
            return;
        }
        let Some(auto) = r.auto_cursor else { return };
        if self.time.cursor() != Some(auto) || self.time.playing() {
            r.auto_cursor = None;
            return;
        }
        let Some((a, _)) = s.span() else { return };
        let first = s.positions.span().map(|p| p.0);
        let t = first.unwrap_or(a);
        // Settled once positions arrived or the file is fully loaded without any.
        r.auto_cursor = (first.is_none() && r.loading()).then_some(t);
        let cx = self.sources.time_context(s, 0.0);
        self.time.apply(TimeCommand::Seek(t), &cx);
    }

    /// Keeps a replay's exact window (`exact.rs`): takes a finished read (the drawn state is
    /// rebuilt with it) and, where what is drawn reaches into the envelope-only past, asks for
    /// the window around the cursor. Once per frame.
    pub(crate) fn upkeep_exact_window(&mut self) {
        let Some(t) = self.shown().cursor() else {
            return;
        };
        let window = self.settings.plot_window_s;
        // The plots' range when a read around the cursor can hold it; plots showing more (the
        // whole file) draw the envelope, which is right at their pixel width, and only the
        // cursor's neighbourhood is read (a wider range would be asked for every frame).
        let (r0, r1) = crate::ui::exact::range_for(t, window);
        let drawn = self
            .view
            .plots
            .range
            .filter(|(a, b)| *a >= r0 && *b <= r1)
            .unwrap_or((t - window, t));
        let range = (drawn.0.min(t), drawn.1.max(t));
        let wake = self
            .egui_ctx
            .clone()
            .map(|ctx| Arc::new(move || ctx.request_repaint()) as Arc<dyn Fn() + Send + Sync>);
        let port = self.replay_port;
        let Some(r) = &mut self.sources.replay else {
            return;
        };
        let envelope = read_vehicle(&r.replay.session).envelope_before();
        if r.exact.poll() {
            self.drawn = None;
        }
        r.exact
            .want((&r.replay.path, port), range, t, window, envelope, wake);
    }

    /// Bytes held for what the window shows: the sessions' histories and what the plots keep
    /// from frame to frame (their envelope caches, lines and meshes).
    pub(crate) fn memory_used(&self) -> u64 {
        (self.sources.memory_bytes() + self.view.plot_caches.memory_bytes()) as u64
    }

    /// What the status bar says of memory this frame.
    pub(crate) fn memory_line(&self, shown: Shown) -> crate::ui::panels::status_bar::Memory {
        let drawn = read_vehicle(self.sources.vehicle()).envelope_before();
        let t = shown.time(self.now());
        let live_past = !shown.is_replay() && drawn.is_some_and(|e| t < e);
        crate::ui::panels::status_bar::Memory {
            used: self.memory_used(),
            budget: self.budget(),
            envelope_before: drawn,
            recording_holds_exact: live_past && self.recording.is_active(),
            exact: self
                .sources
                .replay()
                .map_or(crate::ui::exact::ExactStatus::Idle, |r| r.exact.status()),
        }
    }

    /// Opens the running recording at the drawn time (the status bar's memory figure, when
    /// the live session holds the drawn time only as an envelope).
    pub(crate) fn exact_from_recording(&mut self) {
        let Some(path) = self.recording.path().map(Path::to_path_buf) else {
            self.notify(
                NoticeLevel::Info,
                "Nothing is being recorded: the exact values of the envelope-only past are \
                 not kept anywhere. Record (R) to keep them from now on.",
            );
            return;
        };
        let t = self.shown().time(self.now());
        self.open_recording_at(&path, t);
    }

    /// Opens the file being recorded as a replay over live at `t` (where the live session
    /// holds only an envelope, the recording holds every exact value).
    pub fn open_recording_at(&mut self, path: &Path, t: f64) {
        if self.open_replay(path).is_ok()
            && let Some(r) = &mut self.sources.replay
        {
            r.seek_when_loaded = Some(t);
            r.auto_cursor = None;
            // Opened for the values at `t`: the plots follow the cursor there, not the whole
            // file.
            self.view.plots.follow_time();
        }
    }

    /// Rebuilds `past` for the drawn time and focus when either changed (or more of the file
    /// arrived), and the drawn states of the other arms with it.
    pub fn sync_state(&mut self) {
        self.focus = self.focus_now();
        match self.shown().cursor() {
            None => {
                if self.drawn.take().is_some() {
                    // Following live: the live session's newest is drawn in place.
                    self.past = None;
                    self.drawn_arms.clear();
                }
            }
            Some(t) => {
                let generation = self
                    .sources
                    .replay
                    .as_ref()
                    .map_or(0, |r| r.progress.datagrams + (r.exact.generation() << 48));
                let key = (t, generation, self.focus);
                if self.drawn != Some(key) {
                    // Where the session holds an envelope only, the exact values read back
                    // from the file (when they cover `t`).
                    let envelope = read_vehicle(self.sources.vehicle()).envelope_before();
                    let exact = self
                        .sources
                        .replay
                        .as_ref()
                        .filter(|_| envelope.is_some_and(|e| t < e))
                        .and_then(|r| r.exact.covering(t, t));
                    let v = read_vehicle(exact.unwrap_or(self.sources.vehicle()));
                    self.past = Some(v.arm_or_focused(self.focus).state_at(t));
                    self.drawn_arms = v.arms().map(|(id, s)| (id, s.state_at(t))).collect();
                    drop(v);
                    self.drawn = Some(key);
                }
            }
        }
    }

    /// The arm the view is about now: live, the network's focused arm (where commands go);
    /// in a replay, the one the operator picked in it ([`OcuApp::focus_arm`]) while the
    /// recording holds it, else the recording's focused arm.
    fn focus_now(&self) -> Option<ComponentId> {
        let v = read_vehicle(self.sources.vehicle());
        match (self.sources.replay.is_some(), self.view.replay_focus) {
            (true, Some(id)) if v.arm(id).is_some() => Some(id),
            _ => v.focused_id(),
        }
    }

    /// Brings arm `id` into view: in a replay the view's own focus changes; live, the
    /// network is asked to focus it (`Command::Select`: commands go to the focused arm) and
    /// the view follows when it says so.
    pub fn focus_arm(&mut self, id: ComponentId) {
        if self.sources.replay.is_some() {
            self.view.replay_focus = Some(id);
            self.view.preview = None;
            self.sync_state();
        } else {
            self.command(Command::Select(id));
        }
    }

    /// Polls the loader: progress, and once loading ends, what stopped it.
    pub(crate) fn poll_replay(&mut self) {
        let Some(r) = &mut self.sources.replay else {
            return;
        };
        r.progress = r.replay.progress();
        if r.progress.datagrams > 0 {
            self.sources.previous = None;
        }
        if !r.progress.finished || r.reported {
            return;
        }
        r.reported = true;
        let p = r.progress.clone();
        let name = r.name();
        let end = read_vehicle(&r.replay.session).span().map_or(0.0, |s| s.1);
        if p.datagrams == 0
            && let Some(held) = &p.held
        {
            let text = format!("{name} holds no JUDP data: {held}");
            if self.restore_previous() {
                self.notify(
                    NoticeLevel::Error,
                    format!("{text}. Still showing what was shown before."),
                );
                return;
            }
            self.notify(NoticeLevel::Error, text);
        }
        if let Some(why) = &p.stopped {
            self.notify(
                NoticeLevel::Warning,
                format!(
                    "{name}: loaded up to {} ({} datagrams); {why}",
                    format_hms(end, false),
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

    /// At exit: stops the network side (releasing control, cancelling events).
    pub(crate) fn shutdown_live(&mut self, grace: Duration) {
        if let Some(net) = self.sources.live.as_mut().and_then(|l| l.net.take()) {
            net.shutdown(grace);
        }
    }
}
