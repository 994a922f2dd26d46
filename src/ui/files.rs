//! Files in and out of the UI: File > Open, the record and export save dialogs, and
//! drag-and-drop. rfd's dialogs block, so each runs on its own thread (`jaus-file-dialog`) and
//! hands the chosen path back through a channel polled every frame. When no dialog can be
//! shown (no XDG desktop portal and no `zenity`, as on a bare X server) rfd returns at once as
//! if cancelled; a dialog "cancelled" that fast is taken as that failure, and a small prompt
//! asks for the path instead, so the operator is never stuck.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError, bounded};
use eframe::egui::{self, RichText};

use super::app::{NoticeLevel, OcuApp, file_name};
use super::export::{self, ExportJob, PendingShot};
use super::recording;
use super::theme::Theme;
use super::timeline::format_hms;

/// A dialog that returns sooner than this without a path did not show at all.
pub const DIALOG_FAILED_WITHIN: Duration = Duration::from_millis(400);

/// Extensions File > Open offers.
pub const REPLAY_EXTENSIONS: [&str; 3] = ["mcap", "pcap", "pcapng"];

/// What a chosen path is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    /// Replay a recording or capture.
    Open,
    /// Record the live session to a new MCAP file.
    Record,
    /// Export joint and force/torque series in `[t0, t1]` as CSV.
    ExportCsv {
        /// From, s.
        t0: f64,
        /// To, s.
        t1: f64,
    },
    /// Save the 3D view as PNG.
    ExportPng,
}

impl Task {
    fn verb(&self) -> &'static str {
        match self {
            Task::Open => "Open",
            Task::Record => "Record",
            Task::ExportCsv { .. } | Task::ExportPng => "Export",
        }
    }
}

struct Dialog {
    task: Task,
    rx: Receiver<Option<PathBuf>>,
    started: Instant,
}

struct Prompt {
    task: Task,
    text: String,
    why: String,
    focused: bool,
}

/// Work running off the UI thread: at most one file dialog, exports being written, a
/// screenshot being taken.
#[derive(Default)]
pub struct Jobs {
    dialog: Option<Dialog>,
    prompt: Option<Prompt>,
    pub(crate) exports: Vec<ExportJob>,
    pub(crate) shot: Option<PendingShot>,
}

impl Jobs {
    /// Whether anything is still running (the UI then polls a few times a second).
    pub fn busy(&self) -> bool {
        self.dialog.is_some() || !self.exports.is_empty() || self.shot.is_some()
    }

    /// Whether a file dialog (or the prompt standing in for one) is open.
    pub fn dialog_open(&self) -> bool {
        self.dialog.is_some() || self.prompt.is_some()
    }
}

/// The name a save dialog proposes for `task`.
pub fn default_name(app: &OcuApp, task: &Task) -> String {
    let stem = match &app.replay {
        Some(r) => r
            .replay
            .path
            .file_stem()
            .map_or("session".into(), |s| s.to_string_lossy().into_owned()),
        None => "jaus-ocu-live".into(),
    };
    match task {
        Task::Open => String::new(),
        Task::Record => recording::default_file_name(
            app.live_arm_name().as_deref(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        ),
        Task::ExportCsv { t0, t1 } => {
            format!("{stem}-{:.0}s-{:.0}s.csv", t0.max(0.0), t1.max(0.0))
        }
        Task::ExportPng => format!("{stem}-3d-{:.1}s.png", app.time().max(0.0)),
    }
}

fn run_dialog(task: &Task, name: &str) -> Option<PathBuf> {
    let dialog = rfd::FileDialog::new();
    let dialog = match std::env::current_dir() {
        Ok(dir) => dialog.set_directory(dir),
        Err(_) => dialog,
    };
    match task {
        Task::Open => dialog
            .set_title("Open a recording or capture")
            .add_filter("Recordings and captures", &REPLAY_EXTENSIONS)
            .add_filter("All files", &["*"])
            .pick_file(),
        Task::Record => dialog
            .set_title("Record to")
            .add_filter("MCAP recording", &["mcap"])
            .set_file_name(name)
            .save_file(),
        Task::ExportCsv { .. } => dialog
            .set_title("Export CSV")
            .add_filter("CSV", &["csv"])
            .set_file_name(name)
            .save_file(),
        Task::ExportPng => dialog
            .set_title("Export the 3D view as PNG")
            .add_filter("PNG image", &["png"])
            .set_file_name(name)
            .save_file(),
    }
}

/// Asks for a path for `task` with a native dialog on its own thread (one at a time).
pub fn request(app: &mut OcuApp, task: Task) {
    if app.jobs.dialog_open() {
        app.notify(
            NoticeLevel::Info,
            "A file dialog is already open; finish it first.",
        );
        return;
    }
    let name = default_name(app, &task);
    let (tx, rx) = bounded(1);
    let ctx = app.egui_ctx.clone();
    let for_thread = task.clone();
    let spawned = std::thread::Builder::new()
        .name("jaus-file-dialog".into())
        .spawn(move || {
            let picked = run_dialog(&for_thread, &name);
            let _ = tx.send(picked);
            if let Some(ctx) = ctx {
                ctx.request_repaint();
            }
        });
    match spawned {
        Ok(_) => {
            app.jobs.dialog = Some(Dialog {
                task,
                rx,
                started: Instant::now(),
            })
        }
        Err(e) => {
            let why = format!("The file dialog could not start ({e}).");
            open_prompt(app, task, why);
        }
    }
}

fn open_prompt(app: &mut OcuApp, task: Task, why: String) {
    let name = default_name(app, &task);
    let text = if name.is_empty() {
        String::new()
    } else {
        std::env::current_dir()
            .map(|d| d.join(&name))
            .unwrap_or_else(|_| PathBuf::from(&name))
            .display()
            .to_string()
    };
    app.jobs.prompt = Some(Prompt {
        task,
        text,
        why,
        focused: false,
    });
}

/// Carries out `task` on the chosen `path`.
pub fn dispatch(app: &mut OcuApp, task: Task, path: PathBuf) {
    match task {
        Task::Open => {
            // A failure is shown as a notice by `open_replay`; nothing else changes.
            let _ = app.open_replay(&path);
        }
        Task::Record => {
            if let Err(e) = app.start_recording(path) {
                app.notify(NoticeLevel::Error, e);
            }
        }
        Task::ExportCsv { t0, t1 } => export::export_csv(app, path, t0, t1),
        Task::ExportPng => export::request_png(app, path),
    }
}

/// Polls the dialog and the exports (every frame).
pub fn poll(app: &mut OcuApp, ctx: &egui::Context) {
    if let Some(d) = &app.jobs.dialog {
        let outcome = match d.rx.try_recv() {
            Ok(picked) => Some(picked.ok_or(d.started.elapsed() < DIALOG_FAILED_WITHIN)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(true)),
        };
        if let Some(outcome) = outcome
            && let Some(d) = app.jobs.dialog.take()
        {
            match outcome {
                Ok(path) => dispatch(app, d.task, path),
                Err(true) => open_prompt(
                    app,
                    d.task,
                    "No file dialog could be shown (it needs the XDG desktop portal over D-Bus, or the zenity program). Type the path instead, or drop a file on the window.".into(),
                ),
                // Cancelled by the operator.
                Err(false) => {}
            }
        }
    }
    export::poll(app, ctx);
}

/// The path prompt that stands in for a dialog that could not be shown.
pub fn prompt(app: &mut OcuApp, ctx: &egui::Context, theme: &Theme) {
    let Some(p) = &mut app.jobs.prompt else {
        return;
    };
    let mut decision = None;
    let title = match p.task {
        Task::Open => "Open a recording or capture",
        Task::Record => "Record to",
        Task::ExportCsv { .. } => "Export CSV to",
        Task::ExportPng => "Export the 3D view to",
    };
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(RichText::new(&p.why).color(theme.warn));
            let edit = ui.add(
                egui::TextEdit::singleline(&mut p.text)
                    .hint_text(match p.task {
                        Task::Open => "/path/to/recording.mcap",
                        _ => "/path/to/file",
                    })
                    .desired_width(480.0),
            );
            if !p.focused {
                edit.request_focus();
                p.focused = true;
            }
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                decision = Some(true);
            }
            ui.horizontal(|ui| {
                if ui.button(p.task.verb()).clicked() {
                    decision = Some(true);
                }
                if ui.button("Cancel").clicked() {
                    decision = Some(false);
                }
            });
        });
    match decision {
        Some(true) if !p.text.trim().is_empty() => {
            if let Some(p) = app.jobs.prompt.take() {
                dispatch(app, p.task, PathBuf::from(p.text.trim()));
            }
        }
        Some(false) => app.jobs.prompt = None,
        _ => {}
    }
}

/// Files dropped on the window: the first one with a path is opened for replay.
pub fn dropped(app: &mut OcuApp, ctx: &egui::Context) {
    let (hovering, dropped) =
        ctx.input(|i| (!i.raw.hovered_files.is_empty(), i.raw.dropped_files.clone()));
    app.view.drop_hover = hovering;
    if dropped.is_empty() {
        return;
    }
    let path = dropped
        .iter()
        .map(|f| f.path().to_path_buf())
        .find(|p| !p.as_os_str().is_empty());
    match path {
        Some(path) => {
            if dropped.len() > 1 {
                app.notify(
                    NoticeLevel::Info,
                    format!(
                        "{} files dropped; opening the first, {}",
                        dropped.len(),
                        file_name(&path)
                    ),
                );
            }
            let _ = app.open_replay(&path);
        }
        None => app.notify(
            NoticeLevel::Error,
            "The dropped item has no file path (drop a file from the file manager, or use File > Open).",
        ),
    }
}

/// The veil shown while files are dragged over the window.
pub fn drop_overlay(app: &OcuApp, ctx: &egui::Context, theme: &Theme) {
    if !app.view.drop_hover {
        return;
    }
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("drop_overlay"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, theme.drop_veil);
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        "Drop a .mcap recording or a .pcap / .pcapng capture to replay it",
        egui::FontId::proportional(22.0),
        theme.accent,
    );
}

/// A short description of the CSV export's range for the menu's tooltip.
pub fn csv_range(app: &OcuApp) -> (f64, f64, String) {
    let span = super::app::read_session(&app.session).span();
    match (app.view.plot_range, span) {
        (Some((a, b)), _) => (
            a.max(span.map_or(a, |s| s.0)),
            b.min(span.map_or(b, |s| s.1)),
            format!(
                "the plots' visible range, {} to {}",
                format_hms(a.max(0.0), true),
                format_hms(b.max(0.0), true)
            ),
        ),
        (None, Some((a, b))) => (a, b, "the whole session (the plots are hidden)".into()),
        (None, None) => (0.0, 0.0, "nothing yet: the session is empty".into()),
    }
}
