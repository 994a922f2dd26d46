//! The event log panel: every event of the drawn arm's session (its timeline marks, see
//! [`crate::model::events`]) as lines with the time of day (UTC) and the session time,
//! filtered by kind with the timeline's own chips (one filter: hiding a kind hides it on the
//! timeline too), the newest at the bottom. The list follows the newest line while it is
//! scrolled to the bottom and stays where the operator scrolled it otherwise. A click on a
//! line moves the cursor there (the timeline's seek).
//!
//! Also the operator's notes: the "Add note" button (and the table's key) opens a small
//! window at the drawn time; Enter saves the typed text (or an empty bookmark), Esc cancels.
//! Where a note goes is [`OcuApp::add_note`]'s business.

use eframe::egui::{self, RichText};

use super::actions::Action;
use super::app::OcuApp;
use super::commands::UiCommand;
use super::files;
use super::format::{format_hms, wall_ns};
use super::notices::NoticeLevel;
use super::sources::read_session;
use super::theme::Theme;
use super::time_control::{Shown, TimeCommand};
use super::widgets::scrub_bar::{MarkFilter, kind_chips};
use crate::model::clock::format_utc_time;
use crate::model::events::{self, Event, Note, NotesFile, sidecar_path};
use crate::model::session::{Mark, Session};

/// The panel's width to start with, points (resizable; small so the 3D view keeps its room).
pub const DEFAULT_WIDTH: f32 = 260.0;

/// Events closer than this to the drawn time are "now" (highlighted), s.
const NOW_S: f64 = 0.05;

/// The log's transient state.
#[derive(Debug, Default)]
pub struct LogView {
    /// The note being written, while its window is open.
    pub draft: Option<NoteDraft>,
    /// Notes added to a replay and not saved to its sidecar yet, with the replay's file (a
    /// count for another file, or for none, is stale).
    pub unsaved: Option<(std::path::PathBuf, usize)>,
}

impl LogView {
    /// Notes added to the replay of `path` and not saved yet.
    pub fn unsaved(&self, path: Option<&std::path::Path>) -> usize {
        match (&self.unsaved, path) {
            (Some((p, n)), Some(path)) if p == path => *n,
            _ => 0,
        }
    }
}

/// A note being written: at the time drawn when it was begun.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteDraft {
    /// Session time of the note, s.
    pub t: f64,
    /// The text typed so far.
    pub text: String,
    /// The text field has been given the keyboard.
    focused: bool,
}

impl NoteDraft {
    /// An empty note at `t`.
    pub fn new(t: f64) -> Self {
        Self {
            t,
            text: String::new(),
            focused: false,
        }
    }
}

/// What the panel shows.
pub struct LogInput<'a> {
    /// The drawn arm's session.
    pub session: &'a Session,
    /// What the window shows.
    pub shown: Shown,
    /// The drawn time, s.
    pub time: f64,
    /// The session's time origin, ns since the Unix epoch, when known.
    pub start_ns: Option<u64>,
    /// Notes added to a replay and not saved (the Save button says how many).
    pub unsaved: usize,
}

/// `12:03:04` (UTC) of session time `t`, or `—` when the wall clock is unknown.
pub fn time_of_day(start_ns: Option<u64>, t: f64) -> String {
    match start_ns {
        Some(start) => {
            let full = format_utc_time(wall_ns(start, t));
            full.split('.').next().unwrap_or(&full).to_string()
        }
        None => "—".to_owned(),
    }
}

/// One line of the log as text: `12:03:04  0:00:12.3  control  control granted`.
pub fn line_text(e: &Event, start_ns: Option<u64>) -> String {
    format!(
        "{}  {}  {}  {}",
        time_of_day(start_ns, e.t),
        format_hms(e.t, true),
        e.kind.name(),
        e.text
    )
}

/// Draws the panel.
pub fn show(
    ui: &mut egui::Ui,
    input: &LogInput<'_>,
    filter: &mut MarkFilter,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("Event log");
        let add = UiCommand::AddNote;
        if ui
            .button(add.text())
            .on_hover_text(add.hover_text(input.shown))
            .clicked()
        {
            actions.push(Action::Ui(add));
        }
        if input.shown.is_replay() {
            let save = UiCommand::SaveNotes;
            let text = if input.unsaved > 0 {
                format!("{} ({})", save.text(), input.unsaved)
            } else {
                save.text().to_owned()
            };
            if ui
                .button(text)
                .on_hover_text(save.hover_text(input.shown))
                .clicked()
            {
                actions.push(Action::Ui(save));
            }
        }
    });
    ui.horizontal_wrapped(|ui| chips(ui, input.session, filter, theme));
    ui.separator();
    // Only the visible rows are worded (a long session has thousands of marks).
    let events: Vec<&Mark> = input
        .session
        .marks
        .iter()
        .filter(|m| filter.shows(m.kind))
        .collect();
    if events.is_empty() {
        ui.label(RichText::new("No events yet").color(theme.muted));
        return;
    }
    // The line at or just before the drawn time is highlighted: where the cursor is.
    let current = events
        .partition_point(|e| e.t <= input.time + NOW_S)
        .checked_sub(1);
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .stick_to_bottom(true)
        .show_rows(ui, row_height, events.len(), |ui, rows| {
            for i in rows {
                let e = Event::of_mark(events[i]);
                let text = RichText::new(line_text(&e, input.start_ns))
                    .small()
                    .color(theme.mark(e.kind));
                let r = ui
                    .selectable_label(Some(i) == current, text)
                    .on_hover_text(format!(
                        "{} (session time {:.3} s): click to move the cursor here",
                        e.text, e.t
                    ));
                if r.clicked() {
                    actions.push(Action::Time(TimeCommand::Seek(e.t)));
                }
            }
        });
}

/// One toggle chip per kind present (with its count), as the timeline has: the same filter.
fn chips(ui: &mut egui::Ui, session: &Session, filter: &mut MarkFilter, theme: &Theme) {
    let counts = events::counts(session);
    kind_chips(ui, &counts, filter, theme, true, "here and on the timeline");
}

/// What the operator did in the note window this frame.
enum NoteAnswer {
    /// Nothing yet: the window stays open.
    Open,
    /// Save this text (empty: a bookmark).
    Save(String),
    /// Close without a note.
    Cancel,
}

/// The note window.
fn note_window(ctx: &egui::Context, draft: &mut NoteDraft, start_ns: Option<u64>) -> NoteAnswer {
    let mut answer = NoteAnswer::Open;
    egui::Window::new("Add note")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
        .show(ctx, |ui| {
            ui.label(format!(
                "At {} ({:.1} s). Enter saves; an empty note is a bookmark. Esc cancels.",
                time_of_day(start_ns, draft.t),
                draft.t
            ));
            let r = ui.add(
                egui::TextEdit::singleline(&mut draft.text)
                    .hint_text("what happened (optional)")
                    .desired_width(320.0)
                    .char_limit(events::MAX_NOTE_CHARS),
            );
            if !draft.focused {
                r.request_focus();
                draft.focused = true;
            }
            let (enter, escape) = ui.input(|i| {
                (
                    i.key_pressed(egui::Key::Enter),
                    i.key_pressed(egui::Key::Escape),
                )
            });
            ui.horizontal(|ui| {
                if ui.button("Save").clicked() || (enter && (r.lost_focus() || r.has_focus())) {
                    answer = NoteAnswer::Save(draft.text.clone());
                }
                if ui.button("Cancel").clicked() || escape {
                    answer = NoteAnswer::Cancel;
                }
            });
        });
    answer
}

impl OcuApp {
    /// Opens the note window at the drawn time.
    pub fn begin_note(&mut self) {
        if self.view.log.draft.is_none() {
            self.view.log.draft = Some(NoteDraft::new(self.time()));
        }
    }

    /// Draws the note window while a note is being written, and adds the note when saved.
    pub(crate) fn note_overlay(&mut self, ctx: &egui::Context) {
        let start_ns = self.start_ns();
        let Some(draft) = self.view.log.draft.as_mut() else {
            return;
        };
        let t = draft.t;
        match note_window(ctx, draft, start_ns) {
            NoteAnswer::Open => {}
            NoteAnswer::Cancel => self.view.log.draft = None,
            NoteAnswer::Save(text) => {
                self.view.log.draft = None;
                self.add_note(t, &text);
            }
        }
    }

    /// Adds a note at `t` to the drawn session (every arm's timeline and log). Live, it is
    /// also written into the recording while one runs; in a replay it counts as unsaved
    /// until [`OcuApp::save_notes`].
    pub fn add_note(&mut self, t: f64, text: &str) {
        let note = Note::new(t, text, self.focus);
        let added = self
            .session()
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add_note(&note);
        if !added {
            return;
        }
        if let Some(path) = self.replay().map(|r| r.replay.path.clone()) {
            let n = self.view.log.unsaved(Some(&path));
            self.view.log.unsaved = Some((path, n + 1));
        } else if let Err(why) = self.recording.note(&note) {
            self.notify(NoticeLevel::Warning, why);
        }
    }

    /// Saves the replay's notes to the sidecar beside its file, off the UI thread.
    pub fn save_notes(&mut self) {
        let Some(r) = self.replay() else {
            return;
        };
        let path = sidecar_path(&r.replay.path);
        let name = r.name();
        let start_ns = r.replay.start_ns();
        let notes = read_session(self.session()).notes();
        let file = NotesFile::new(&name, start_ns, notes);
        match files::save_notes(path, file, self.egui_ctx.clone()) {
            Ok(job) => {
                self.jobs.exports.push(job);
                self.view.log.unsaved = None;
            }
            Err(e) => self.notify(NoticeLevel::Error, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::MarkKind;

    #[test]
    fn a_line_has_the_time_of_day_the_session_time_the_kind_and_the_words() {
        let e = Event {
            t: 12.25,
            kind: MarkKind::Command,
            text: "ClearEmergency: confirmed".into(),
        };
        // 2023-11-14 22:13:20 UTC.
        let start = 1_700_000_000_000_000_000;
        let line = line_text(&e, Some(start));
        assert!(line.starts_with("22:13:32  "), "{line}");
        assert!(
            line.ends_with("command  ClearEmergency: confirmed"),
            "{line}"
        );
        assert!(line_text(&e, None).starts_with("—  "));
    }
}
