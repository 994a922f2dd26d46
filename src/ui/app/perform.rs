//! What the operator asked for, carried out in one place. Panels and keys only describe
//! requests ([`Action`]s, most of them [`UiCommand`]s from the table); [`OcuApp::perform`]
//! changes the app and sends commands to the arm, and every command to the arm goes through
//! [`OcuApp::command`], which asks [`crate::ui::time_control::Shown::allows`].

use std::path::PathBuf;

use super::OcuApp;
use crate::model::command::Command;
use crate::model::update::{ControlState, ManagementState};
use crate::ui::action::{Action, Confirm};
use crate::ui::commands::{self, UiCommand};
use crate::ui::export;
use crate::ui::files::{self, Task};
use crate::ui::notice::NoticeLevel;
use crate::ui::sources::read_vehicle;
use crate::ui::time_control::{Shown, TimeCommand};
use crate::ui::words::file_name;

impl OcuApp {
    /// Carries out what the operator asked.
    pub fn perform(&mut self, action: Action) {
        match action {
            Action::Ui(cmd) => self.run(cmd),
            Action::Time(cmd) => self.time_command(cmd),
            Action::Send(cmd) => {
                self.command(cmd);
            }
            Action::Focus(id) => self.focus_arm(id),
            Action::Preview(id) => self.view.preview = id,
            Action::Ask(confirm) => self.ask(confirm),
            Action::Answer(yes) => {
                let Some(confirm) = self.view.confirm.take() else {
                    return;
                };
                if yes {
                    self.confirmed(confirm);
                }
            }
            Action::ExactFromRecording => self.exact_from_recording(),
            Action::Dismiss(i) => {
                if i < self.view.notices.len() {
                    self.view.notices.remove(i);
                }
            }
        }
    }

    /// Runs a command of the table (nothing when it is not available in what is shown).
    pub fn run(&mut self, cmd: UiCommand) {
        if !cmd.available(self.shown()) {
            return;
        }
        match cmd {
            UiCommand::Open => self.request_file(Task::Open),
            UiCommand::ToggleRecording => self.toggle_recording(),
            UiCommand::ExportCsv => {
                let span = read_vehicle(self.vehicle()).span();
                let (t0, t1, _) = files::csv_range(self.view.plots.range, span);
                self.request_file(Task::ExportCsv { t0, t1 });
            }
            UiCommand::ExportPng => self.request_file(Task::ExportPng),
            UiCommand::ExportUrdf => self.request_file(Task::ExportUrdf),
            UiCommand::BackToLive => self.back_to_live(),
            UiCommand::ToggleHelp => self.view.show_help = !self.view.show_help,
            UiCommand::Cancel => {
                // The topmost thing first: an open path prompt is all Esc closes.
                if self.jobs.close_prompt() {
                    return;
                }
                self.view.show_help = false;
                self.view.confirm = None;
                self.view.preview = None;
            }
            UiCommand::EmergencyStop => {
                // The emergency stop never asks twice. It stops the arm its label names: the
                // stop overtakes a `Select` still queued, so the arm goes with it.
                let arm = self.live_state().and_then(|s| s.selected);
                self.command(arm.map_or(Command::SetEmergency, Command::SetEmergencyOf));
            }
            UiCommand::EmergencyStopAll => {
                // Nor does stopping every arm.
                self.command(Command::SetEmergencyAll);
            }
            // Only the live arm's emergency is cleared: an emergency drawn from the past is
            // not one to clear.
            UiCommand::ClearEmergency if self.live_in_emergency() => {
                self.ask(Confirm::ClearEmergency);
            }
            // Not in emergency: nothing to clear. The jog keys are held, not pressed: read
            // each frame by `jog_frame`.
            UiCommand::ClearEmergency | UiCommand::JogPlus | UiCommand::JogMinus => {}
            UiCommand::ToggleControl if self.live_holds_control() => {
                self.run(UiCommand::ReleaseControl);
            }
            UiCommand::ToggleControl => self.run(UiCommand::RequestControl),
            UiCommand::RequestControl => {
                let authority = self.settings.authority;
                self.command(Command::RequestControl { authority });
            }
            UiCommand::ReleaseControl => {
                self.command(Command::ReleaseControl);
            }
            // Resume is its own deliberate step, confirmed like clearing the emergency, and
            // only for the live arm in STANDBY with control held.
            UiCommand::Resume => match self.resume_refused() {
                Some(why) => self.notify(NoticeLevel::Warning, why),
                None => self.ask(Confirm::Resume),
            },
            UiCommand::TogglePlay => self.time_command(TimeCommand::TogglePlay),
            UiCommand::AddNote => self.begin_note(),
            UiCommand::SaveNotes => self.save_notes(),
            // Over a live source "back to live" closes the replay; L says the same.
            UiCommand::FollowLive if matches!(self.shown(), Shown::ReplayOverLive { .. }) => {
                self.back_to_live();
            }
            UiCommand::FollowLive => {
                self.view.plots.follow_time();
                self.time_command(TimeCommand::FollowLive);
            }
            UiCommand::ToggleUnits => self.settings.degrees = !self.settings.degrees,
            UiCommand::JogPrevAxis | UiCommand::JogNextAxis => {
                let joints = self.live_joint_count();
                let delta = if cmd == UiCommand::JogNextAxis { 1 } else { -1 };
                self.view.jog.step_axis(delta, joints);
            }
            UiCommand::ToggleJogMode => self.view.jog.toggle_mode(),
            UiCommand::ToggleLiveView => self.toggle_live_view(),
            UiCommand::ToggleTheme => self.settings.dark = !self.settings.dark,
            UiCommand::PrevMark => self.time_command(TimeCommand::JumpMark { forward: false }),
            UiCommand::NextMark => self.time_command(TimeCommand::JumpMark { forward: true }),
            UiCommand::StepBack | UiCommand::StepForward => {
                // One pixel column of the plots (ui::panels::plots::PlotsView::step_stride).
                let stride = self.view.plots.step_stride(self.settings.plot_window_s);
                let forward = cmd == UiCommand::StepForward;
                self.time_command(TimeCommand::Step { forward, stride });
            }
            UiCommand::StepReportBack => {
                self.time_command(TimeCommand::StepReport { forward: false });
            }
            UiCommand::StepReportForward => {
                self.time_command(TimeCommand::StepReport { forward: true });
            }
            UiCommand::Home => self.time_command(TimeCommand::Home),
            UiCommand::End => self.time_command(TimeCommand::End),
            // The focused arm's whole reach, followed; R (reset) the whole vehicle's.
            UiCommand::FitView => self.view.arm.follow_arm(),
            UiCommand::ResetCamera => self.view.arm.reset(),
            UiCommand::UndoLayout => self.undo_layout(),
            UiCommand::Quit => {
                // eframe then saves the settings and runs `on_exit` (the recording is
                // finished, the live side shut down).
                if let Some(ctx) = &self.egui_ctx {
                    ctx.send_viewport_cmd(eframe::egui::ViewportCommand::Close);
                }
            }
        }
    }

    /// Runs the commands whose keys were pressed this frame.
    pub(crate) fn keys(&mut self, ctx: &eframe::egui::Context) {
        for cmd in commands::from_keys(ctx, self.shown()) {
            self.run(cmd);
        }
    }

    /// Opens the confirmation of `confirm` about the live arm selected now.
    fn ask(&mut self, confirm: Confirm) {
        self.view.confirm_arm = self.live_state().and_then(|s| s.selected);
        self.view.confirm = Some(confirm);
    }

    fn confirmed(&mut self, confirm: Confirm) {
        // The question named one arm: if another was focused meanwhile, nothing is sent.
        let now = self.live_state().and_then(|s| s.selected);
        if now != self.view.confirm_arm.take() {
            self.notify(
                NoticeLevel::Warning,
                format!(
                    "Nothing sent: the focused arm changed to {} while the question was open. \
                     Ask again.",
                    now.map_or_else(|| "none".to_string(), |id| id.to_string())
                ),
            );
            return;
        }
        match confirm {
            Confirm::GoToPreset(id) => {
                // The live arm may have changed while the question was open.
                if let Some(why) = self
                    .live_state()
                    .as_ref()
                    .and_then(crate::ui::panels::presets::go_to_refused)
                {
                    self.notify(NoticeLevel::Warning, why);
                    return;
                }
                self.command(Command::GoToPreset { pose_id: id });
            }
            Confirm::ClearEmergency => {
                // Asked about the live arm's emergency: still one when confirmed? Clearing
                // never resumes: the arm stays stopped in STANDBY until Resume (IEC 60204-1,
                // ISO 13850: reset is not restart).
                if !self.live_in_emergency() {
                    return;
                }
                self.command(Command::ClearEmergency);
            }
            Confirm::Resume => {
                // Still in STANDBY with control when confirmed?
                if let Some(why) = self.resume_refused() {
                    self.notify(NoticeLevel::Warning, format!("Not resumed. {why}"));
                    return;
                }
                self.command(Command::Resume);
            }
        }
    }

    /// Why Resume cannot be offered for the live arm now: it is not in STANDBY, or control is
    /// not held.
    fn resume_refused(&self) -> Option<String> {
        let live = self.live_state()?;
        let arm = crate::ui::words::live_arm_words(Some(&live));
        if live.status == ManagementState::Emergency {
            // Resume never clears an emergency: that is its own confirmed step first.
            return Some(format!(
                "Not resumed: {arm} is in EMERGENCY. Clear the emergency first (the top bar's \
                 {}), then Resume ({}) takes it from STANDBY to READY",
                UiCommand::ClearEmergency.text(),
                UiCommand::Resume.keys_text(self.shown())
            ));
        }
        if live.status != ManagementState::Standby {
            let word = crate::ui::words::status_word(live.status);
            return Some(format!(
                "Nothing to resume: {arm} is {word} (Resume takes an arm from STANDBY to READY)"
            ));
        }
        if !matches!(live.control, ControlState::Held { .. }) {
            return Some(format!(
                "Resume needs control of {arm}: {} first ({})",
                UiCommand::RequestControl.text(),
                UiCommand::ToggleControl.keys_text(self.shown())
            ));
        }
        None
    }

    /// Asks for a path for `task` with a native dialog off the UI thread (one at a time).
    pub fn request_file(&mut self, task: Task) {
        let name = self.default_file_name(&task);
        if let Err(text) = self.jobs.request(task, name, self.egui_ctx.clone()) {
            self.notify(NoticeLevel::Info, text);
        }
    }

    /// The name a save dialog proposes for `task`.
    pub fn default_file_name(&self, task: &Task) -> String {
        let stem = self.replay().map(|r| {
            r.replay
                .path
                .file_stem()
                .map_or("session".into(), |s| s.to_string_lossy().into_owned())
        });
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        files::default_name(
            task,
            stem.as_deref(),
            self.live_arm_name().as_deref(),
            now_ns,
            self.time(),
        )
    }

    /// The session a CSV export of `[t0, t1]` reads: the drawn one, or where that holds part
    /// of the range only as an envelope, the exact values a replay read back from its file
    /// (when they cover the range). Otherwise the rows before the envelope's edge are not in
    /// the file, and a notice says so and where they are.
    fn csv_vehicle(&mut self, t0: f64, t1: f64) -> crate::model::vehicle::SharedVehicle {
        let vehicle = self.vehicle().clone();
        let Some(edge) = read_vehicle(&vehicle).envelope_before().filter(|e| t0 < *e) else {
            return vehicle;
        };
        if let Some(exact) = self.sources.replay().and_then(|r| r.exact.covering(t0, t1)) {
            return exact.clone();
        }
        let from = match (self.sources.replay(), self.recording.path()) {
            (Some(r), _) => format!(
                "export them from the file: jaus-ocu export {} --csv OUT --from {t0:.3} --to {t1:.3}",
                r.replay.path.display()
            ),
            (None, Some(path)) => format!(
                "the recording running holds them: jaus-ocu export {} --csv OUT --from {t0:.3} \
                 --to {t1:.3} once it is stopped",
                path.display()
            ),
            (None, None) => "they were not recorded".to_string(),
        };
        self.notify(
            NoticeLevel::Warning,
            format!(
                "The CSV starts at {}: the samples before are held only as their min/max \
                 envelope (memory budget); {from}.",
                crate::ui::format::format_hms(edge, true)
            ),
        );
        vehicle
    }

    /// Carries out `task` on the chosen `path` (from a dialog, the prompt, or a caller).
    pub fn file_chosen(&mut self, task: Task, path: PathBuf) {
        match task {
            Task::Open => {
                // A failure is shown as a notice by `open_replay`; nothing else changes.
                let _ = self.open_replay(&path);
            }
            Task::Record => {
                if let Err(e) = self.start_recording(path) {
                    self.notify(NoticeLevel::Error, e);
                }
            }
            Task::ExportCsv { t0, t1 } => {
                if self.sources.loading() {
                    self.notify(
                        NoticeLevel::Warning,
                        "The file is still loading; export once it has loaded completely.",
                    );
                    return;
                }
                let vehicle = self.csv_vehicle(t0, t1);
                let columns = export::csv_columns(&self.settings);
                let ctx = self.egui_ctx.clone();
                match export::export_csv(vehicle, self.focus, path, (t0, t1), columns, ctx) {
                    Ok(job) => self.jobs.exports.push(job),
                    Err(e) => self.notify(NoticeLevel::Error, e),
                }
            }
            Task::ExportPng => {
                let Some(ctx) = self.egui_ctx.clone() else {
                    return;
                };
                if self.view.arm.rect.is_none() {
                    self.notify(
                        NoticeLevel::Error,
                        "The 3D view is not on screen; nothing to export.",
                    );
                    return;
                }
                self.jobs.shot = Some(export::request_png(&ctx, path));
            }
            Task::ExportUrdf => {
                let (spec, tool_point) = self.with_drawn(|s| (s.spec.clone(), s.tool_point));
                let Some(spec) = spec else {
                    self.notify(
                        NoticeLevel::Error,
                        "No specification shown: there is no arm to export yet.",
                    );
                    return;
                };
                let name = self.arm_name().unwrap_or_else(|| "jaus-arm".to_owned());
                match export::export_urdf(spec, name, tool_point, path, self.egui_ctx.clone()) {
                    Ok(job) => self.jobs.exports.push(job),
                    Err(e) => self.notify(NoticeLevel::Error, e),
                }
            }
        }
    }

    /// Polls the file dialog, the exports and the screenshot (every frame).
    pub(crate) fn poll_jobs(&mut self, ctx: &eframe::egui::Context) {
        if let Some((task, path)) = self.jobs.poll_dialog() {
            self.file_chosen(task, path);
        }
        let rect = self.view.arm.rect;
        for n in export::poll(&mut self.jobs, ctx, rect) {
            self.notify(n.level, n.text);
        }
    }

    /// Files dropped on the window: the first one with a path is opened for replay.
    pub(crate) fn take_dropped(&mut self, ctx: &eframe::egui::Context) {
        let drop = files::dropped(ctx);
        self.view.drop_hover = drop.hovering;
        match drop.file {
            None => {}
            Some(Ok((path, count))) => {
                if count > 1 {
                    self.notify(
                        NoticeLevel::Info,
                        format!(
                            "{count} files dropped; opening the first, {}",
                            file_name(&path)
                        ),
                    );
                }
                let _ = self.open_replay(&path);
            }
            Some(Err(text)) => self.notify(NoticeLevel::Error, text),
        }
    }
}
