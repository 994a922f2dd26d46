//! Status bar: report rates per signal, drops and malformed counters, last outcome and error.

use eframe::egui::{self, RichText};

use super::app::OcuApp;
use super::theme::Theme;
use crate::model::update::{Delivery, Outcome};

/// Draws the status bar.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.horizontal_wrapped(|ui| {
        for (signal, d) in &app.state.delivery {
            let stale = app.state.stale.get(signal).copied().unwrap_or(false);
            let text = match d {
                Delivery::Event(r) => format!("{} {r:.0} Hz", signal.name()),
                Delivery::OnChange => format!("{} on change", signal.name()),
                Delivery::Polling(r) => format!("{} polled {r:.0} Hz", signal.name()),
            };
            ui.label(RichText::new(text).small().color(if stale { theme.warn } else { theme.muted }));
        }
        // Age of the newest joint sample when this frame is drawn: receive-to-display latency.
        if let Some(p) = &app.state.positions {
            let age_ms = (app.time() - p.t) * 1000.0;
            ui.label(RichText::new(format!("latency {age_ms:.0} ms")).small().color(theme.muted))
                .on_hover_text("Age of the newest joint sample when this frame was drawn");
        }
        ui.separator();
        let s = &app.state.stats;
        ui.label(RichText::new(format!(
            "rx {}  malformed {}  foreign {}  dup {}  dropped {}",
            s.datagrams,
            s.malformed,
            s.foreign_version + s.foreign_reports,
            s.duplicates,
            s.queue_dropped + s.updates_dropped
        ))
        .small()
        .color(theme.muted))
        .on_hover_text("Datagrams received; malformed; from other components or JUDP versions; duplicates suppressed; dropped because a thread was behind");
        if let Some((kind, outcome)) = &app.view.last_outcome {
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
