//! The keyboard shortcut overlay, generated from the command table for what is shown now.

use eframe::egui;

use crate::ui::commands::help_rows;
use crate::ui::time_control::Shown;

/// Draws the overlay while `open`; closing its window clears `open`.
pub fn show(ctx: &egui::Context, shown: Shown, open: &mut bool) {
    if !*open {
        return;
    }
    egui::Window::new("Keyboard shortcuts")
        .open(open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(egui::RichText::new(format!("Keys while showing: {}", shown.name())).weak());
            egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                for row in help_rows(shown) {
                    ui.label(egui::RichText::new(row.keys).monospace().strong());
                    ui.label(row.what);
                    ui.end_row();
                }
            });
        });
}
