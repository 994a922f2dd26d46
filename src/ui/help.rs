//! The keyboard shortcut overlay.

use eframe::egui;

use super::app::OcuApp;

/// Every shortcut, as the help overlay lists it.
pub const SHORTCUTS: [(&str, &str); 14] = [
    ("Space", "Live: emergency stop · Replay: play / pause"),
    ("E", "Emergency stop (live)"),
    ("C", "Request / release control"),
    ("U", "Toggle degrees / radians"),
    ("L", "Back to live (replay: the plots follow the cursor)"),
    ("← / →", "Step to the previous / next report"),
    ("Shift+← / → or , / .", "Previous / next timeline mark"),
    (
        "Home / End",
        "Start of the session / its end (live: back to live)",
    ),
    (
        "Ctrl+O",
        "Open a recording or capture (or drop it on the window)",
    ),
    ("Ctrl+R", "Start / stop recording"),
    ("F", "3D: fit the arm"),
    ("R", "3D: reset the camera"),
    ("Esc", "Cancel a preview or confirmation, close this help"),
    ("F1 / H", "This help"),
];

/// Draws the overlay when open.
pub fn show(app: &mut OcuApp, ctx: &egui::Context) {
    if !app.view.show_help {
        return;
    }
    let mut open = true;
    egui::Window::new("Keyboard shortcuts")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                for (k, what) in SHORTCUTS {
                    ui.label(egui::RichText::new(k).monospace().strong());
                    ui.label(what);
                    ui.end_row();
                }
            });
        });
    if !open {
        app.view.show_help = false;
    }
}
