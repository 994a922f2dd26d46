//! The record button and the recorder's life in the UI: start (save dialog, then
//! [`Recorder::start`] and the network tap connected), the running figures on the button,
//! stop off the UI thread (finishing the file can take about a second), and a write error
//! that stops recording with a message while the live view carries on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError, bounded};
use eframe::egui::{self, RichText};

use super::commands::UiCommand;
use super::format::{format_hms, group_digits};
use super::notice::{Notice, NoticeLevel};
use super::theme::Theme;
use super::time_control::Shown;
use crate::model::clock::utc;
use crate::model::events::Note;
use crate::net::tap::Tap;
use crate::record::recorder::{Recorder, RecorderStats};

/// A recording in progress.
pub struct Active {
    recorder: Recorder,
    /// The file.
    pub path: PathBuf,
    /// When it started.
    pub started: Instant,
    /// The recorder's figures as of this frame.
    pub stats: RecorderStats,
}

/// The recorder's state in the UI.
#[derive(Default)]
pub enum Recording {
    /// Not recording.
    #[default]
    Idle,
    /// Recording (boxed: the recorder's handles are large next to the other states).
    Active(Box<Active>),
    /// Finishing the file on the thread `jaus-recorder-stop`.
    Stopping {
        /// The file.
        path: PathBuf,
        /// The stop's result.
        rx: Receiver<Result<RecorderStats, String>>,
    },
}

impl Recording {
    /// Whether datagrams are being recorded.
    pub fn is_active(&self) -> bool {
        matches!(self, Recording::Active(_))
    }

    /// The file being recorded, while recording.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Recording::Active(a) => Some(&a.path),
            _ => None,
        }
    }

    /// Whether a stop is finishing the file.
    pub fn is_stopping(&self) -> bool {
        matches!(self, Recording::Stopping { .. })
    }

    /// `REC 0:01:23 · 12.3 MB · 45 123 datagrams` while recording (the UI puts a red dot
    /// before it, in the monospace font: the proportional one has no `●`).
    pub fn summary(&self) -> Option<String> {
        match self {
            Recording::Active(a) => Some(format!(
                "REC {} · {:.1} MB · {} datagrams",
                format_hms(a.started.elapsed().as_secs_f64(), false),
                a.stats.bytes as f64 / 1e6,
                group_digits(a.stats.rx + a.stats.tx)
            )),
            Recording::Stopping { .. } => Some("finishing the recording…".into()),
            Recording::Idle => None,
        }
    }

    /// Hands `note` to the recorder, never blocking: `Ok` when not recording (nothing to
    /// write), an error for the operator when the recorder's queue is full or gone.
    pub fn note(&self, note: &Note) -> Result<(), String> {
        let Recording::Active(a) = self else {
            return Ok(());
        };
        a.recorder
            .note_sender()
            .try_send(note.clone())
            .map_err(|_| {
                format!(
                    "The note \"{}\" could not be written into the recording {} (the recorder is \
                 busy or stopped); it stays on the timeline of this session",
                    note.label(),
                    a.path.display()
                )
            })
    }

    /// Connects a started recorder to the live session's `tap`; the button shows its figures
    /// from now on.
    pub fn attach(&mut self, recorder: Recorder, tap: &Tap) -> Result<(), String> {
        if !matches!(self, Recording::Idle) {
            return Err("Already recording; stop the current recording first.".into());
        }
        tap.connect(recorder.sender());
        let stats = recorder.stats();
        *self = Recording::Active(Box::new(Active {
            path: stats.path.clone(),
            recorder,
            started: Instant::now(),
            stats,
        }));
        Ok(())
    }

    /// Stops recording: the tap is disconnected at once and the file is finished off the UI
    /// thread (`ctx` is woken when done).
    pub fn stop(&mut self, tap: Option<&Tap>, ctx: Option<egui::Context>) {
        let Recording::Active(a) = std::mem::take(self) else {
            return;
        };
        if let Some(tap) = tap {
            tap.disconnect();
        }
        let rx = spawn_stop(a.recorder, ctx);
        *self = Recording::Stopping { path: a.path, rx };
    }

    /// Refreshes the figures (every frame). A recorder that stopped by itself (a write
    /// error) is reported and the state returns to idle; a finished stop says what was
    /// written.
    pub fn poll(&mut self, tap: Option<&Tap>) -> Option<Notice> {
        match self {
            Recording::Idle => None,
            Recording::Active(a) => {
                a.stats = a.recorder.stats();
                if a.stats.running && a.stats.error.is_none() {
                    return None;
                }
                let why = a
                    .stats
                    .error
                    .clone()
                    .unwrap_or_else(|| "the recorder stopped by itself".into());
                let Recording::Active(a) = std::mem::take(self) else {
                    return None;
                };
                if let Some(tap) = tap {
                    tap.disconnect();
                }
                // Finish what can be finished; the error is already known and shown.
                let _ = spawn_stop(a.recorder, None);
                Some(Notice::new(
                    NoticeLevel::Error,
                    format!(
                        "Recording to {} stopped: {why}. The live view carries on; free some space or choose another disk and record again.",
                        a.path.display()
                    ),
                ))
            }
            Recording::Stopping { path, rx } => {
                let result = match rx.try_recv() {
                    Ok(r) => r,
                    Err(TryRecvError::Empty) => return None,
                    Err(TryRecvError::Disconnected) => {
                        Err("the recorder's stop did not report back".into())
                    }
                };
                let path = path.clone();
                *self = Recording::Idle;
                Some(finished(&path, result))
            }
        }
    }

    /// At exit: the file must be finished, so this waits for the recorder (about a second).
    pub fn finish_on_exit(&mut self, tap: Option<&Tap>) {
        match std::mem::take(self) {
            Recording::Active(a) => {
                if let Some(tap) = tap {
                    tap.disconnect();
                }
                if let Err(e) = a.recorder.stop() {
                    tracing::warn!("finishing the recording at exit: {e}");
                }
            }
            Recording::Stopping { rx, .. } => {
                let _ = rx.recv_timeout(Duration::from_secs(10));
            }
            Recording::Idle => {}
        }
    }
}

/// What a finished stop says about the file.
pub(crate) fn finished(path: &std::path::Path, result: Result<RecorderStats, String>) -> Notice {
    match result {
        Ok(stats) if stats.dropped > 0 => Notice::new(
            NoticeLevel::Error,
            format!(
                "Recorded {} datagrams to {}, but {} more could not be recorded because the disk did not keep up (the file says so in its session_end metadata).",
                group_digits(stats.rx + stats.tx),
                path.display(),
                group_digits(stats.dropped)
            ),
        ),
        Ok(stats) => Notice::new(
            NoticeLevel::Info,
            format!(
                "Recorded {} datagrams ({} received, {} sent; {:.1} MB) to {}{}",
                group_digits(stats.rx + stats.tx),
                group_digits(stats.rx),
                group_digits(stats.tx),
                stats.bytes as f64 / 1e6,
                path.display(),
                if stats.thinned > 0 {
                    format!(
                        "; {} decoded samples thinned while the recorder was behind (raw datagrams complete)",
                        group_digits(stats.thinned)
                    )
                } else {
                    String::new()
                }
            ),
        ),
        Err(e) => Notice::new(
            NoticeLevel::Error,
            format!("Finishing the recording {} failed: {e}", path.display()),
        ),
    }
}

/// Keeps letters, digits, `-` and `_`; everything else becomes `-` (runs collapsed, ends
/// trimmed, at most 40 characters), so an arm's name is safe in a file name.
pub fn sanitise(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '-'
        };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
        if out.len() >= 40 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

/// `YYYYMMDD-HHMMSS-<arm>.mcap` (UTC), the arm's part left out when unknown (the
/// program's name is not repeated: the `.mcap` files of a shift sort by time and name their
/// arm).
pub fn default_file_name(arm: Option<&str>, now_ns: u64) -> String {
    let u = utc(now_ns);
    let stamp = format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        u.year, u.month, u.day, u.hour, u.minute, u.second
    );
    match arm.map(sanitise).filter(|a| !a.is_empty()) {
        Some(arm) => format!("{stamp}-{arm}.mcap"),
        None => format!("{stamp}.mcap"),
    }
}

fn spawn_stop(
    recorder: Recorder,
    ctx: Option<egui::Context>,
) -> Receiver<Result<RecorderStats, String>> {
    let (tx, rx) = bounded(1);
    let job = move || {
        let result = recorder.stop().map_err(|e| e.to_string());
        let _ = tx.send(result);
        if let Some(ctx) = ctx {
            ctx.request_repaint();
        }
    };
    if let Err(e) = std::thread::Builder::new()
        .name("jaus-recorder-stop".into())
        .spawn(job)
    {
        // Without a thread the receiver reports a disconnect, which says the stop failed.
        tracing::warn!("cannot start the thread that finishes the recording: {e}");
    }
    rx
}

/// The record button of the top bar; `true` when clicked ([`UiCommand::ToggleRecording`]).
/// Recording needs a running live source (`can_record`).
pub fn button(
    ui: &mut egui::Ui,
    recording: &Recording,
    can_record: bool,
    shown: Shown,
    theme: &Theme,
) -> bool {
    let cmd = UiCommand::ToggleRecording;
    match recording {
        Recording::Idle => ui
            .add_enabled(can_record, egui::Button::new(cmd.text()))
            .on_hover_text(cmd.hover_text(shown))
            .on_disabled_hover_text("Recording needs a live or demo session")
            .clicked(),
        Recording::Active(a) => {
            let text = recording.summary().unwrap_or_default();
            let hover = format!(
                "Recording to {} — click to stop ({})",
                a.path.display(),
                cmd.keys_text(shown)
            );
            let label = (
                RichText::new("●").monospace().color(theme.recording),
                RichText::new(text).strong().color(theme.recording),
            );
            ui.add(egui::Button::new(label))
                .on_hover_text(hover)
                .clicked()
        }
        Recording::Stopping { path, .. } => {
            let hover = format!("Writing the summary and indexes of {}", path.display());
            ui.add_enabled(false, egui::Button::new("finishing recording…"))
                .on_disabled_hover_text(hover);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_names_become_safe_file_name_parts() {
        assert_eq!(sanitise("EOD arm #2 (left)"), "EOD-arm-2-left");
        assert_eq!(sanitise("126.1.10"), "126-1-10");
        assert_eq!(sanitise("../../etc/passwd"), "etc-passwd");
        assert_eq!(sanitise("ÄÖ"), "");
        assert!(sanitise(&"x".repeat(100)).len() <= 40);
    }

    #[test]
    fn the_default_name_has_utc_date_time_and_arm() {
        // 2024-03-05T07:08:09Z.
        let ns = 1_709_622_489_000_000_000;
        assert_eq!(
            default_file_name(Some("126.1.10"), ns),
            "20240305-070809-126-1-10.mcap"
        );
        assert_eq!(default_file_name(None, ns), "20240305-070809.mcap");
        assert_eq!(default_file_name(Some("//"), ns), "20240305-070809.mcap");
    }
}
