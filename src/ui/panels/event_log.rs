//! The event log panel: every event of the drawn arm's session (its timeline marks, see
//! [`crate::model::events`]) as lines with the time of day (UTC) and the session time,
//! filtered by kind with the timeline's own chips (one filter: hiding a kind hides it on the
//! timeline too), the newest at the bottom. The list follows the newest line while it is
//! scrolled to the bottom and stays where the operator scrolled it otherwise. A click on a
//! line moves the cursor there (the timeline's seek).
//!
//! Also the operator's notes: the "Add note" button (and the table's key) opens a small
//! window at the drawn time; Enter saves the typed text (or an empty bookmark), Esc cancels.
//! Where a note goes is [`OcuApp::add_note`](crate::ui::app::OcuApp::add_note)'s business.

use eframe::egui::{self, RichText};

use crate::model::clock::format_utc_time;
use crate::model::events::{self, Event};
use crate::model::session::Session;
use crate::ui::action::Action;
use crate::ui::commands::UiCommand;
use crate::ui::format::{format_hms, wall_ns};
use crate::ui::theme::Theme;
use crate::ui::time_control::{Shown, TimeCommand};
use crate::ui::widgets::scrub_bar::{MarkFilter, kind_chips};

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
    /// The mark the last mark jump (`,` `.`) landed on, an index into the session's marks,
    /// while the cursor is at it: highlighted rather than the last mark at the drawn time
    /// (two marks at one instant are each shown in turn).
    pub landed: Option<usize>,
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
            // As wide as it will be with a count: the button never moves to another row
            // when a note is added (a click aimed at it would land on nothing).
            let widest = egui::WidgetText::from(format!("{} (999)", save.text())).into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Button,
            );
            let width = widest.size().x + 2.0 * ui.spacing().button_padding.x;
            if ui
                .add(egui::Button::new(text).min_size(egui::vec2(width, 0.0)))
                .on_hover_text(save.hover_text(input.shown))
                .clicked()
            {
                actions.push(Action::Ui(save));
            }
        }
    });
    let rows = log_rows(ui, input.session, *filter);
    ui.horizontal_wrapped(|ui| {
        kind_chips(
            ui,
            &rows.counts,
            filter,
            theme,
            true,
            "here and on the timeline",
        );
    });
    ui.separator();
    // Only the visible rows are worded (a long session has thousands of marks); which marks
    // the filter shows is kept until a mark comes or the filter changes.
    let marks = &input.session.marks;
    let events: &[usize] = &rows.shown;
    let mark = |i: usize| events.get(i).and_then(|&k| marks.get(k));
    if events.is_empty() {
        ui.label(RichText::new("No events yet").color(theme.muted));
        return;
    }
    // The line at or just before the drawn time is highlighted: where the cursor is.
    let current = input
        .landed
        .and_then(|l| events.iter().position(|&k| k == l))
        .or_else(|| {
            events
                .partition_point(|&k| marks.get(k).is_some_and(|e| e.t <= input.time + NOW_S))
                .checked_sub(1)
        });
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .stick_to_bottom(true)
        .show_rows(ui, row_height, events.len(), |ui, rows| {
            for i in rows {
                let Some(m) = mark(i) else {
                    continue;
                };
                let e = Event::of_mark(m);
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

/// What the log lists, kept from frame to frame (in the window's memory): the count of each
/// kind and the indices of the marks the filter shows. A frame with no new mark and the same
/// filter reads them as they were: its cost is the visible rows, not the session's marks.
#[derive(Debug, Clone, Default)]
struct LogRows {
    /// The session, its number of marks and the filter they were read with.
    key: Option<(usize, usize, MarkFilter)>,
    counts: [usize; crate::model::update::MarkKind::ALL.len()],
    shown: std::sync::Arc<Vec<usize>>,
}

/// The log's rows of `session` under `filter`, read again only when they may differ.
fn log_rows(ui: &egui::Ui, session: &Session, filter: MarkFilter) -> LogRows {
    let id = egui::Id::unique("event log rows");
    let key = (
        std::ptr::from_ref(session) as usize,
        session.marks.len(),
        filter,
    );
    if let Some(rows) = ui.data(|d| d.get_temp::<LogRows>(id))
        && rows.key == Some(key)
    {
        return rows;
    }
    let rows = LogRows {
        key: Some(key),
        counts: events::counts(session),
        shown: std::sync::Arc::new(
            session
                .marks
                .iter()
                .enumerate()
                .filter(|(_, m)| filter.shows(m.kind))
                .map(|(i, _)| i)
                .collect(),
        ),
    };
    ui.data_mut(|d| d.insert_temp(id, rows.clone()));
    rows
}

/// What the operator did in the note window this frame.
pub enum NoteAnswer {
    /// Nothing yet: the window stays open.
    Open,
    /// Save this text (empty: a bookmark).
    Save(String),
    /// Close without a note.
    Cancel,
}

/// The note window.
pub fn note_window(
    ctx: &egui::Context,
    draft: &mut NoteDraft,
    start_ns: Option<u64>,
) -> NoteAnswer {
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
