//! One frame of the window: the work before drawing (background jobs, loading, dropped
//! files, keys, playback, the state at the drawn time), then the panels, each handed what it
//! shows; what the operator asked for is collected and carried out after the last panel
//! ([`OcuApp::perform`]), then the windows over the panels (help, confirmation, path
//! prompt), whose answers are carried out last.

use eframe::egui;

use super::OcuApp;
use crate::model::state::ArmState;
use crate::record::live::LiveServer;
use crate::ui::action::Action;
use crate::ui::arms;
use crate::ui::commands::refusal;
use crate::ui::files;
use crate::ui::notice::{self, NoticeLevel};
use crate::ui::panels::banner;
use crate::ui::panels::confirm;
use crate::ui::panels::help;
use crate::ui::panels::status_bar::{self, StatusBar};
use crate::ui::panels::timeline::{self, TimelineInput};
use crate::ui::panels::top_bar::{self, FileMenu, TopBar};
use crate::ui::scene::SceneArm;
use crate::ui::sources::{ReplayState, read_vehicle};
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::{last_known, past_label};

impl OcuApp {
    /// Draws one frame (also what the `egui_kittest` tests drive).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ctx.clone());
        }
        ctx.set_visuals(Theme::visuals(self.settings.dark));
        let theme = Theme::new(self.settings.dark);
        self.view.frames += 1;
        self.before_panels(&ctx);
        let mut actions = Vec::new();
        self.bars(ui, &theme, &mut actions);
        self.panels(ui, &theme, &mut actions);
        // The windows over the panels show what the panels asked for this frame (a
        // confirmation, the help).
        for a in actions.drain(..) {
            self.perform(a);
        }
        self.overlays(&ctx, &theme, &mut actions);
        for a in actions {
            self.perform(a);
        }
        // After the panels: the buttons held this frame are known.
        self.jog_frame(&ctx);
    }

    /// Work that must happen every frame before drawing: background jobs, loading progress,
    /// dropped files, keys, playback, and the state at the drawn time.
    fn before_panels(&mut self, ctx: &egui::Context) {
        self.poll_replay();
        self.poll_jobs(ctx);
        self.poll_recording();
        self.poll_live_view();
        self.take_dropped(ctx);
        self.keys(ctx);
        let dt = self.frame_dt(ctx);
        self.tick(dt);
        self.apply_budget();
        self.upkeep_exact_window();
        self.sync_state();
        self.sync_clearance();
        // When to draw again is decided once per frame in `App::ui` (app::repaint_after).
        self.sync_threshold();
    }

    /// What lives outside the tiles, never covered or cut by them: the top bar (the live
    /// arm, the emergency stop), the past area, the banner's strip (while it has something
    /// to say), the status bar and the timeline.
    fn bars(&mut self, ui: &mut egui::Ui, theme: &Theme, actions: &mut Vec<Action>) {
        let shown = self.shown();
        let badge = self.sources.badge();
        let span = read_vehicle(self.sources.vehicle()).span();
        let (t0, t1, range) = files::csv_range(self.view.plots.range, span);
        // The live area is drawn from the live arm now, never from the drawn state; a replay
        // on its own has no live arm.
        let live = self.live_state().filter(|_| shown.has_live_arm());
        let arm_rows = if live.is_some() {
            self.live_arm_rows()
        } else {
            Vec::new()
        };
        let bar = TopBar {
            arms: &arm_rows,
            stop_all: arms::stop_all_reach(&arm_rows, live.as_ref().and_then(|l| l.selected)),
            live: live.as_ref(),
            shown,
            badge: badge.as_ref(),
            recording: &self.recording,
            can_record: self.sources.live_running(),
            authority: self.settings.authority,
            file: FileMenu {
                busy: self.jobs.dialog_open(),
                csv: (t1 > t0).then_some(range),
                png: self.view.arm.rect.is_some(),
                urdf: self.with_drawn(|s| s.spec.is_some()),
            },
            memory: top_bar::MemoryMenu {
                in_force: self.budget(),
                automatic: self.automatic_budget(),
                used: self.memory_used(),
            },
            live_view: self.live_view.as_ref().map(LiveServer::address),
        };
        let settings = &mut self.settings;
        egui::Panel::top("top_bar")
            .show(ui, |ui| top_bar::show(ui, &bar, settings, theme, actions));
        let replay_name = self.sources.replay().map(ReplayState::name);
        let start_ns = self.sources.start_ns();
        if let Some(label) = past_label(shown, self.now(), start_ns, replay_name.as_deref()) {
            let past_arms = arms::rows(
                self.drawn_arms.iter().map(|(id, s)| (*id, s)),
                None,
                self.focus,
            );
            self.with_drawn(|state| {
                egui::Panel::top("past")
                    .frame(
                        egui::Frame::side_top_panel(ui.style())
                            .fill(theme.past_fill)
                            .stroke(egui::Stroke::new(2.0, theme.replay)),
                    )
                    .show(ui, |ui| {
                        top_bar::past(ui, &label, state, &past_arms, shown, theme, actions);
                    });
            });
        }
        let live_start = self
            .sources
            .net()
            .map(crate::net::thread::NetHandle::start_unix_ns);
        let others_stopped = self.live_others_in_emergency();
        let lines = live
            .as_ref()
            .map(|l| banner::lines(l, &others_stopped, live_start.or(start_ns), shown))
            .unwrap_or_default();
        if !lines.is_empty() {
            // Its own strip across the window under the bars: whatever the operator does to
            // the tiles, the emergency's steps are whole.
            egui::Panel::top("banner")
                .frame(egui::Frame::new())
                .show(ui, |ui| banner::show(ui, &lines, theme));
        }
        let open_recording = self.status_bar(ui, theme, shown, live.as_ref());
        if open_recording {
            actions.push(Action::ExactFromRecording);
        }
        let vehicle = read_vehicle(self.sources.vehicle());
        let input = TimelineInput {
            shown,
            time: &self.time,
            now: self.now(),
            session: vehicle.arm_or_focused(self.focus),
            start_ns: self.sources.start_ns(),
            replay: self.sources.replay(),
        };
        let filter = &mut self.settings.marks;
        // The lanes toggle is kept with the settings (a laptop's operator who turns the
        // lanes on finds them on the next time).
        let ctx = ui.ctx().clone();
        if let Some(on) = self.settings.show_lanes
            && timeline::lanes_set(&ctx).is_none()
        {
            timeline::show_lanes(&ctx, on);
        }
        egui::Panel::bottom("timeline")
            .show(ui, |ui| timeline::show(ui, &input, filter, theme, actions));
        self.settings.show_lanes = timeline::lanes_set(&ctx).or(self.settings.show_lanes);
    }

    /// The status bar, from the drawn state and the live arm's (`live`); `true` when the
    /// operator asked to read the exact values back from the recording.
    fn status_bar(
        &self,
        ui: &mut egui::Ui,
        theme: &Theme,
        shown: Shown,
        live: Option<&ArmState>,
    ) -> bool {
        let positions_rate = status_bar::measured_rate(
            &read_vehicle(self.sources.vehicle())
                .arm_or_focused(self.focus)
                .positions,
            shown.time(self.now()),
        );
        let recording = self.recording.summary();
        let live_view = self.live_view_line();
        let memory = self.memory_line(shown);
        let short_buffer = self
            .sources
            .live_source()
            .and_then(crate::ui::sources::LiveSource::short_buffer_advice);
        self.with_drawn(|state| {
            let status = StatusBar {
                state,
                shown,
                time: shown.time(self.now()),
                recording,
                live_view,
                replay: self.sources.replay(),
                ocu: live.and_then(|l| l.ocu_id.map(|id| (id, l.id_conflict.is_some()))),
                ocu_suspect: live.and_then(|l| {
                    l.id_suspect
                        .as_ref()
                        .map(|c| (c.address, c.evidence.clone()))
                }),
                short_buffer,
                positions_rate,
                memory,
            };
            egui::Panel::bottom("status_bar")
                .show(ui, |ui| status_bar::show(ui, &status, theme))
                .inner
        })
    }

    /// The tiles (`work_area.rs`) in the central panel, the notices in a strip of their own
    /// in the 3D view's tile: nothing is drawn over a tile.
    fn panels(&mut self, ui: &mut egui::Ui, theme: &Theme, actions: &mut Vec<Action>) {
        let shown = self.shown();
        let last_known = self.with_drawn(|s| last_known(s, self.sources.start_ns()));
        let past = past_label(
            shown,
            self.now(),
            self.sources.start_ns(),
            self.sources.replay().map(ReplayState::name).as_deref(),
        );
        // Over the gauges and the 3D view, `−12.4 s (12:03:04 UTC)`: the past area above
        // says "at".
        let short_past = past
            .as_deref()
            .map(|p| p.strip_prefix("at ").unwrap_or(p).to_string());
        // The notices are drawn in the 3D view's tile (`notices::strip`), in a strip of
        // their own.
        let ctx = ui.ctx().clone();
        let now = ctx.input(|i| i.time);
        if let Some(next) = notice::expire(&mut self.view.notices, now) {
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(next.max(0.05)));
        }
        self.view.notice_rect = None;
        let rects = self.work_area(ui, theme, last_known, short_past, actions);
        self.view.tile_rects = rects;
    }

    /// The help, the confirmation, the path prompt and the drop veil.
    fn overlays(&mut self, ctx: &egui::Context, theme: &Theme, actions: &mut Vec<Action>) {
        let shown = self.shown();
        help::show(ctx, shown, &mut self.view.show_help);
        if let Some(c) = self.view.confirm
            && let Some(why) = refusal(shown, &c.command())
        {
            // Its command may not leave in what is shown now (a preset's, once the past is
            // drawn): the question is dropped, saying why.
            self.view.confirm = None;
            let (title, _) = confirm::words(c, None, shown);
            self.notify(NoticeLevel::Warning, format!("{title}: cancelled. {why}"));
        }
        if let Some(c) = self.view.confirm {
            let live = self.live_state();
            let advice = match c {
                crate::ui::action::Confirm::GoToPreset(id) => self.preset_advice(id),
                _ => Vec::new(),
            };
            if let Some(yes) = confirm::show(ctx, c, live.as_ref(), (shown, &advice), theme) {
                actions.push(Action::Answer(yes));
            }
        }
        if let Some((task, path)) = files::prompt(ctx, &mut self.jobs, theme) {
            self.file_chosen(task, path);
        }
        self.note_overlay(ctx);
        self.gamepad_overlay(ctx, theme);
        if self.view.drop_hover {
            files::drop_overlay(ctx, theme);
        }
    }
}

impl OcuApp {
    /// The gamepad window (opened from the jog strip): the mapping and the live pad.
    fn gamepad_overlay(&mut self, ctx: &egui::Context, theme: &Theme) {
        let mut open = self.view.jog.show_gamepad;
        let Some(pad) = self.pad.as_mut().filter(|_| open) else {
            return;
        };
        let snapshot = pad.gamepad.snapshot();
        egui::Window::new("Gamepad")
            .open(&mut open)
            .collapsible(false)
            .show(ctx, |ui| {
                crate::ui::panels::gamepad::show(
                    ui,
                    theme,
                    &pad.mapping,
                    &snapshot,
                    pad.intent.as_ref(),
                );
            });
        self.view.jog.show_gamepad = open;
    }

    /// The other arms of the focused arm's subsystem at the drawn time, for the 3D view: the
    /// live sessions' newest states while following live, else the states at the cursor.
    pub(crate) fn scene_arms(&self) -> Vec<SceneArm> {
        if self.drawn.is_some() {
            return arms::scene_arms(self.drawn_arms.iter().map(|(id, s)| (*id, s)), self.focus);
        }
        let v = read_vehicle(self.sources.vehicle());
        arms::scene_arms(v.arms().map(|(id, s)| (id, &s.latest)), self.focus)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::OcuApp;
    use crate::ui::files::Task;
    use crate::ui::settings::Settings;
    use crate::ui::sources::LiveKind;

    #[test]
    fn escape_closes_the_path_prompt_and_nothing_else() {
        let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
        app.jobs
            .open_prompt(Task::Open, "", "No file dialog could be shown.".into());
        app.view.show_help = true;
        let mut h = Harness::builder()
            .with_size([1280.0, 800.0])
            .build_ui_state(|ui, app: &mut OcuApp| app.frame(ui), app);
        h.step();
        assert!(h.query_by_label_contains("No file dialog").is_some());
        h.key_press(eframe::egui::Key::Escape);
        h.step();
        assert!(!h.state().jobs.dialog_open(), "Esc closed the prompt");
        assert!(h.state().view.show_help, "and only the prompt");
        h.key_press(eframe::egui::Key::Escape);
        h.step();
        assert!(!h.state().view.show_help, "the next Esc closes the help");
    }
}
