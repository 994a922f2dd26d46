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

use super::export::{ExportJob, PendingShot};
use super::format::format_hms;
use super::recording;
use super::theme::Theme;

/// A dialog that returns sooner than this without a path did not show at all.
pub const DIALOG_FAILED_WITHIN: Duration = Duration::from_millis(400);

/// Extensions File > Open offers.
pub const REPLAY_EXTENSIONS: [&str; 3] = ["mcap", "pcap", "pcapng"];

/// What a chosen path is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Task {
    /// Replay a recording or capture.
    Open,
    /// Record the live session to a new MCAP file.
    Record,
    /// Export the plots' signals (every series when the plots are hidden) in `[t0, t1]` as
    /// CSV.
    ExportCsv {
        /// From, s.
        t0: f64,
        /// To, s.
        t1: f64,
    },
    /// Save the 3D view as PNG.
    ExportPng,
    /// Save the arm's specification as URDF.
    ExportUrdf,
}

impl Task {
    fn verb(&self) -> &'static str {
        match self {
            Task::Open => "Open",
            Task::Record => "Record",
            Task::ExportCsv { .. } | Task::ExportPng | Task::ExportUrdf => "Export",
        }
    }
}

struct Dialog {
    task: Task,
    /// The name proposed, kept for the prompt should the dialog fail to show.
    name: String,
    rx: Receiver<Option<PathBuf>>,
    started: Instant,
}

struct Prompt {
    task: Task,
    text: String,
    why: String,
    /// Where the proposed path lands, in words (shown under the path).
    folder: String,
    focused: bool,
}

/// The folder a save proposes (and File > Open starts in): [`recordings_dir`], created; the
/// working directory when it cannot be.
pub struct DefaultFolder {
    /// The folder, absolute.
    pub path: PathBuf,
    /// Why it is not the recordings folder (it could not be created), if it is not.
    pub fallback: Option<String>,
}

impl DefaultFolder {
    /// The folder in words for the prompt: "Folder: /home/op/.local/share/jaus-ocu/recordings".
    pub fn words(&self) -> String {
        match &self.fallback {
            None => format!("Folder: {}", self.path.display()),
            Some(why) => format!("Folder: {} ({why})", self.path.display()),
        }
    }
}

/// The recordings folder: `$JAUS_OCU_RECORDINGS_DIR`, else
/// `$XDG_DATA_HOME/jaus-ocu/recordings`, else `$HOME/.local/share/jaus-ocu/recordings` (the
/// XDG base directory default); `None` without any of them. Relative values are ignored, as
/// the XDG specification says.
pub fn recordings_dir() -> Option<PathBuf> {
    recordings_dir_with(|name| std::env::var_os(name))
}

/// [`recordings_dir`] with the environment read through `env`.
fn recordings_dir_with(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    var("JAUS_OCU_RECORDINGS_DIR")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("jaus-ocu").join("recordings")))
        .or_else(|| {
            var("HOME").map(|h| {
                h.join(".local")
                    .join("share")
                    .join("jaus-ocu")
                    .join("recordings")
            })
        })
}

/// The folder a dialog or prompt for `task` starts in: the recordings folder, created (for
/// recordings and exports alike), else the working directory with the reason.
pub fn default_folder(task: &Task) -> DefaultFolder {
    folder_in(task, recordings_dir())
}

/// [`default_folder`] with the recordings folder `dir`.
fn folder_in(task: &Task, dir: Option<PathBuf>) -> DefaultFolder {
    let cwd = || std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let Some(dir) = dir else {
        return DefaultFolder {
            path: cwd(),
            fallback: Some("no HOME or XDG_DATA_HOME for the recordings folder".into()),
        };
    };
    if matches!(task, Task::Open) {
        // Opening creates nothing: start there if it exists.
        return if dir.is_dir() {
            DefaultFolder {
                path: dir,
                fallback: None,
            }
        } else {
            DefaultFolder {
                path: cwd(),
                fallback: None,
            }
        };
    }
    match std::fs::create_dir_all(&dir) {
        Ok(()) => DefaultFolder {
            path: dir,
            fallback: None,
        },
        Err(e) => DefaultFolder {
            path: cwd(),
            fallback: Some(format!(
                "the recordings folder {} could not be created: {e}",
                dir.display()
            )),
        },
    }
}

/// Writes a replay's notes to their sidecar file `path` off the UI thread (through a
/// temporary file renamed over it, so a failed write leaves the previous sidecar whole).
pub fn save_notes(
    path: PathBuf,
    file: crate::model::events::NotesFile,
    ctx: Option<egui::Context>,
) -> Result<super::export::ExportJob, String> {
    super::export::spawn_job("jaus-save-notes", ctx, move || {
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, file.to_json().as_bytes())
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                format!(
                    "Cannot save the notes to {}: {e} (is the recording's folder writable?)",
                    path.display()
                )
            })?;
        Ok(format!(
            "Saved {} note(s) to {}; they are read when the recording is opened again",
            file.notes.len(),
            path.display()
        ))
    })
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
    /// Closes the path prompt (Esc); whether one was open.
    pub fn close_prompt(&mut self) -> bool {
        self.prompt.take().is_some()
    }

    /// Whether anything is still running (the UI then polls a few times a second).
    pub fn busy(&self) -> bool {
        self.dialog.is_some() || !self.exports.is_empty() || self.shot.is_some()
    }

    /// Whether a file dialog (or the prompt standing in for one) is open.
    pub fn dialog_open(&self) -> bool {
        self.dialog.is_some() || self.prompt.is_some()
    }

    /// Asks for a path for `task` (proposing `name`) with a native dialog on its own thread,
    /// one at a time; `ctx` is woken when it closes. Fails with a message for the operator
    /// when a dialog is already open.
    pub fn request(
        &mut self,
        task: Task,
        name: String,
        ctx: Option<egui::Context>,
    ) -> Result<(), String> {
        if self.dialog_open() {
            return Err("A file dialog is already open; finish it first.".into());
        }
        let (tx, rx) = bounded(1);
        let for_thread = task;
        let proposed = name.clone();
        let spawned = std::thread::Builder::new()
            .name("jaus-file-dialog".into())
            .spawn(move || {
                let picked = run_dialog(&for_thread, &proposed);
                let _ = tx.send(picked);
                if let Some(ctx) = ctx {
                    ctx.request_repaint();
                }
            });
        match spawned {
            Ok(_) => {
                self.dialog = Some(Dialog {
                    task,
                    name,
                    rx,
                    started: Instant::now(),
                });
            }
            Err(e) => {
                let why = format!("The file dialog could not start ({e}).");
                self.open_prompt(task, &name, why);
            }
        }
        Ok(())
    }

    pub(crate) fn open_prompt(&mut self, task: Task, name: &str, why: String) {
        let folder = default_folder(&task);
        let text = if name.is_empty() {
            String::new()
        } else {
            folder.path.join(name).display().to_string()
        };
        self.prompt = Some(Prompt {
            task,
            text,
            why,
            folder: folder.words(),
            focused: false,
        });
    }

    /// Polls the dialog (every frame): the path chosen, once. A dialog that could not show
    /// opens the prompt instead.
    pub fn poll_dialog(&mut self) -> Option<(Task, PathBuf)> {
        let d = self.dialog.as_ref()?;
        let outcome = match d.rx.try_recv() {
            Ok(picked) => picked.ok_or(d.started.elapsed() < DIALOG_FAILED_WITHIN),
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => Err(true),
        };
        let d = self.dialog.take()?;
        match outcome {
            Ok(path) => Some((d.task, path)),
            Err(true) => {
                self.open_prompt(
                    d.task,
                    &d.name,
                    "No file dialog could be shown (it needs the XDG desktop portal over D-Bus, or the zenity program). Type the path instead, or drop a file on the window.".into(),
                );
                None
            }
            // Cancelled by the operator.
            Err(false) => None,
        }
    }
}

/// The name a save dialog proposes for `task`: from the replayed file's `stem` (else
/// `jaus-ocu-live`), the live arm's name, the wall clock `now_ns` and the drawn time `t`.
pub fn default_name(
    task: &Task,
    stem: Option<&str>,
    live_arm: Option<&str>,
    now_ns: u64,
    t: f64,
) -> String {
    let stem = stem.unwrap_or("jaus-ocu-live");
    match task {
        Task::Open => String::new(),
        Task::Record => recording::default_file_name(live_arm, now_ns),
        Task::ExportCsv { t0, t1 } => {
            format!("{stem}-{:.0}s-{:.0}s.csv", t0.max(0.0), t1.max(0.0))
        }
        Task::ExportPng => format!("{stem}-3d-{:.1}s.png", t.max(0.0)),
        Task::ExportUrdf => format!("{}.urdf", live_arm.unwrap_or(stem)),
    }
}

fn run_dialog(task: &Task, name: &str) -> Option<PathBuf> {
    let dialog = rfd::FileDialog::new().set_directory(default_folder(task).path);
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
        Task::ExportUrdf => dialog
            .set_title("Export the arm as URDF")
            .add_filter("URDF", &["urdf"])
            .set_file_name(name)
            .save_file(),
    }
}

/// The path prompt that stands in for a dialog that could not be shown; the path typed,
/// once confirmed.
pub fn prompt(ctx: &egui::Context, jobs: &mut Jobs, theme: &Theme) -> Option<(Task, PathBuf)> {
    let p = jobs.prompt.as_mut()?;
    let mut decision = None;
    let title = match p.task {
        Task::Open => "Open a recording or capture",
        Task::Record => "Record to",
        Task::ExportCsv { .. } => "Export CSV to",
        Task::ExportPng => "Export the 3D view to",
        Task::ExportUrdf => "Export the arm as URDF to",
    };
    // Wide enough for a whole path under the recordings folder (the folder is written whole
    // under the field too).
    let width = (ctx.content_rect().width() - 40.0).clamp(300.0, 640.0);
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .min_width(width)
        .max_width(width)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(RichText::new(&p.why).color(theme.warn));
            let edit = ui.add(
                egui::TextEdit::singleline(&mut p.text)
                    .hint_text(match p.task {
                        Task::Open => "/path/to/recording.mcap",
                        _ => "/path/to/file",
                    })
                    .desired_width(f32::INFINITY),
            );
            ui.label(RichText::new(&p.folder).small().color(theme.muted));
            if !p.focused {
                edit.request_focus();
                p.focused = true;
            }
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                decision = Some(true);
            }
            // Esc cancels, as in a file dialog (the text field would only lose its focus).
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                decision = Some(false);
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
            let p = jobs.prompt.take()?;
            Some((p.task, PathBuf::from(p.text.trim())))
        }
        Some(false) => {
            jobs.prompt = None;
            None
        }
        _ => None,
    }
}

/// Files over and dropped on the window this frame.
#[derive(Debug)]
pub struct DropEvent {
    /// Files are being dragged over the window.
    pub hovering: bool,
    /// The first dropped file with a path and how many were dropped, or why none could be
    /// taken; `None` when nothing was dropped.
    pub file: Option<Result<(PathBuf, usize), String>>,
}

/// What is dragged over or dropped on the window this frame.
pub fn dropped(ctx: &egui::Context) -> DropEvent {
    let (hovering, dropped) =
        ctx.input(|i| (!i.raw.hovered_files.is_empty(), i.raw.dropped_files.clone()));
    if dropped.is_empty() {
        return DropEvent {
            hovering,
            file: None,
        };
    }
    let path = dropped
        .iter()
        .map(|f| f.path().to_path_buf())
        .find(|p| !p.as_os_str().is_empty());
    let file = path.map(|p| (p, dropped.len())).ok_or_else(|| {
        "The dropped item has no file path (drop a file from the file manager, or use File > Open).".to_string()
    });
    DropEvent {
        hovering,
        file: Some(file),
    }
}

/// The veil shown while files are dragged over the window.
pub fn drop_overlay(ctx: &egui::Context, theme: &Theme) {
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

/// The CSV export's range: the plots' visible range (`plot_range`, when shown) within the
/// session's `span`, else the whole session; with a short description for the menu (the
/// columns: the plots' signals, or every series when the plots are hidden).
pub fn csv_range(plot_range: Option<(f64, f64)>, span: Option<(f64, f64)>) -> (f64, f64, String) {
    match (plot_range, span) {
        (Some((a, b)), _) => (
            a.max(span.map_or(a, |s| s.0)),
            b.min(span.map_or(b, |s| s.1)),
            format!(
                "the plots' signals over their visible range, {} to {}",
                format_hms(a.max(0.0), true),
                format_hms(b.max(0.0), true)
            ),
        ),
        (None, Some((a, b))) => (
            a,
            b,
            "every series over the whole session (the plots are hidden)".into(),
        ),
        (None, None) => (0.0, 0.0, "nothing yet: the session is empty".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recordings_go_to_the_xdg_data_folder_and_relative_values_are_ignored() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            recordings_dir_with(env(&[("HOME", "/home/op")])),
            Some(PathBuf::from("/home/op/.local/share/jaus-ocu/recordings"))
        );
        assert_eq!(
            recordings_dir_with(env(&[("HOME", "/home/op"), ("XDG_DATA_HOME", "/data")])),
            Some(PathBuf::from("/data/jaus-ocu/recordings"))
        );
        assert_eq!(
            recordings_dir_with(env(&[("HOME", "/home/op"), ("XDG_DATA_HOME", "rel")])),
            Some(PathBuf::from("/home/op/.local/share/jaus-ocu/recordings")),
            "a relative XDG_DATA_HOME is ignored"
        );
        assert_eq!(
            recordings_dir_with(env(&[
                ("JAUS_OCU_RECORDINGS_DIR", "/mnt/usb"),
                ("HOME", "/home/op")
            ])),
            Some(PathBuf::from("/mnt/usb"))
        );
        assert_eq!(recordings_dir_with(env(&[])), None);
    }

    #[test]
    fn a_save_creates_the_folder_and_says_it_whole() {
        let base = std::env::temp_dir().join(format!("jaus-ocu-folder-{}", std::process::id()));
        let dir = base.join("a").join("recordings");
        let _ = std::fs::remove_dir_all(&base);
        // Opening creates nothing.
        let open = folder_in(&Task::Open, Some(dir.clone()));
        assert!(!dir.exists());
        assert_ne!(open.path, dir);
        let f = folder_in(&Task::Record, Some(dir.clone()));
        assert!(dir.is_dir(), "created");
        assert_eq!(f.path, dir);
        assert!(f.path.is_absolute());
        assert_eq!(f.words(), format!("Folder: {}", dir.display()));
        assert_eq!(folder_in(&Task::ExportPng, Some(dir.clone())).path, dir);
        // A folder that cannot be created (a file is in its way): the working directory,
        // and why.
        let blocked = base.join("file");
        std::fs::write(&blocked, b"x").unwrap();
        let f = folder_in(&Task::Record, Some(blocked.join("recordings")));
        assert!(f.path.is_absolute());
        assert!(f.words().contains("could not be created"), "{}", f.words());
        let _ = std::fs::remove_dir_all(&base);
    }
}
