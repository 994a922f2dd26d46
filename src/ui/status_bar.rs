//! Status bar: report rates per signal, drops and malformed counters, last outcome and error,
//! the recording's figures and a replay's loading state.

use eframe::egui::{self, RichText};

use super::app::{OcuApp, file_name};
use super::theme::Theme;
use super::timeline::group_digits;
use crate::model::update::{Delivery, Outcome};

/// Draws the status bar.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.horizontal_wrapped(|ui| {
        if let Some(text) = app.recording.summary() {
            ui.label(RichText::new(format!("{text}  ")).small().strong().color(theme.recording))
                .on_hover_text("Recording every datagram of the live session (Ctrl+R stops)");
            ui.separator();
        }
        if let Some(r) = &app.replay {
            let p = &r.progress;
            let name = file_name(&r.replay.path);
            let (text, colour) = if !p.finished {
                (format!("{name}: loading {:.0} %", p.fraction() * 100.0), theme.accent)
            } else if let Some(why) = &p.stopped {
                (format!("{name}: loaded partly ({} datagrams): {why}", group_digits(p.datagrams)), theme.warn)
            } else {
                (format!("{name}: {} datagrams", group_digits(p.datagrams)), theme.muted)
            };
            let problems = if p.problems.is_empty() {
                String::new()
            } else {
                format!(" · {} problem(s)", p.problems.len())
            };
            ui.label(RichText::new(format!("{text}{problems}")).small().color(colour))
                .on_hover_text(if p.problems.is_empty() { "What the replay's file held".to_string() } else { p.problems.join("\n") });
            ui.separator();
        }
        for (signal, d) in &app.state.delivery {
            let stale = app.state.stale.get(signal).copied().unwrap_or(false);
            let text = match d {
                Delivery::Event(r) => format!("{} {r:.0} Hz", signal.name()),
                Delivery::OnChange => format!("{} on change", signal.name()),
                Delivery::Polling(r) => format!("{} polled {r:.0} Hz", signal.name()),
            };
            ui.label(RichText::new(text).small().color(if stale { theme.warn } else { theme.muted }));
        }
        // Age of the newest joint sample when this frame is drawn: receive-to-display latency
        // live; in a replay, how old the drawn positions are at the cursor.
        if let Some(p) = &app.state.positions {
            let age_ms = (app.time() - p.t) * 1000.0;
            let (name, hover) = if app.read_only() {
                ("sample age", "Age of the joint positions drawn, at the cursor")
            } else {
                ("latency", "Age of the newest joint sample when this frame was drawn")
            };
            ui.label(RichText::new(format!("{name} {age_ms:.0} ms")).small().color(theme.muted))
                .on_hover_text(hover);
        }
        ui.separator();
        let s = &app.state.stats;
        // The OCU's own network counters; a replay has none of its own.
        if !app.read_only() || s.datagrams > 0 {
            let text = format!(
                "rx {}  malformed {}  foreign {}  dup {}  dropped {}",
                s.datagrams,
                s.malformed,
                s.foreign_version + s.foreign_reports,
                s.duplicates,
                s.queue_dropped + s.updates_dropped
            );
            ui.label(RichText::new(text).small().color(theme.muted)).on_hover_text(
                "Datagrams received; malformed; from other components or JUDP versions; duplicates suppressed; dropped because a thread was behind",
            );
        }
        if let Some((kind, outcome)) = &app.last_outcome() {
            ui.separator();
            let colour = match outcome {
                Outcome::Confirmed | Outcome::Completed => theme.ok,
                _ => theme.danger,
            };
            ui.label(RichText::new(format!("{kind:?}: {outcome:?}")).small().color(colour));
        }
        if let Some((t, e)) = app.state.errors.last() {
            ui.separator();
            ui.label(RichText::new(format!("{t:.1} s: {e}")).small().color(theme.danger));
        }
    });
}
