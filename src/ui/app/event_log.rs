//! The event log of `OcuApp` (its tile is laid out in `work_area.rs`): the note window,
//! notes added (into the running recording live, kept unsaved in a replay) and saved beside
//! the file. The drawing is `ui/panels/event_log.rs`.

use super::OcuApp;
use crate::model::events::{Note, NotesFile, sidecar_path};
use crate::ui::files;
use crate::ui::notice::NoticeLevel;
use crate::ui::panels::event_log::{NoteAnswer, NoteDraft, note_window};
use crate::ui::sources::read_vehicle;
use eframe::egui::{self};

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
            .vehicle()
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add_note(&note);
        if !added {
            return;
        }
        if let Some(path) = self.replay().map(|r| r.replay.path.clone()) {
            let n = self.view.log.unsaved(Some(&path));
            self.view.log.unsaved = Some((path, n + 1));
        } else {
            self.live_view_note(&note);
            if let Err(why) = self.recording.note(&note) {
                self.notify(NoticeLevel::Warning, why);
            }
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
        let notes = read_vehicle(self.vehicle()).notes();
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
