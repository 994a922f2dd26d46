//! The preset pose picker: the arm's presets, the current one highlighted; selecting one
//! previews it as a ghost; "Go to" needs control (and offers to request it) and a
//! confirmation, then shows progress and the transition's result.

use eframe::egui::{self, RichText};

use super::app::{Confirm, OcuApp};
use super::theme::Theme;
use crate::model::update::{Command, CommandKind, Outcome, PoseState};

/// Progress of a transition 0..1 from the joint-space distance to the target, when the start
/// and target presets' positions are known.
pub fn progress(app: &OcuApp, from: u8, to: u8) -> Option<f64> {
    let q = &app.state.positions.as_ref()?.value;
    let start = app
        .state
        .presets
        .iter()
        .find(|p| p.id == from)?
        .positions
        .as_ref()?;
    let goal = app
        .state
        .presets
        .iter()
        .find(|p| p.id == to)?
        .positions
        .as_ref()?;
    let dist = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let total = dist(start, goal);
    (total > 1e-9).then(|| (1.0 - dist(q, goal) / total).clamp(0.0, 1.0))
}

/// Draws the panel.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.heading("Presets");
    if app.state.presets.is_empty() {
        ui.label("This arm reports no preset poses (IOP PresetPose).");
        return;
    }
    let pose = app.state.pose;
    let presets = app.state.presets.clone();
    for p in &presets {
        let here = pose == PoseState::At(p.id);
        let previewing = app.view.preview == Some(p.id);
        let mut text = RichText::new(format!("{}  {}", p.id, p.name));
        if here {
            text = text.strong().color(theme.ok);
        }
        let r = ui
            .selectable_label(previewing, text)
            .on_hover_text(if here {
                "The arm is at this pose"
            } else {
                "Click to preview this pose as a ghost arm"
            });
        if r.clicked() {
            app.view.preview = if previewing { None } else { Some(p.id) };
        }
    }
    ui.separator();
    if let PoseState::Moving { from, to } = pose {
        let name = presets
            .iter()
            .find(|p| p.id == to)
            .map_or(to.to_string(), |p| p.name.clone());
        ui.label(format!("moving to {name}"));
        if let Some(f) = progress(app, from, to) {
            ui.add(egui::ProgressBar::new(f as f32).show_percentage());
        }
    }
    if let Some(id) = app.view.preview {
        let name = presets
            .iter()
            .find(|p| p.id == id)
            .map_or(String::new(), |p| p.name.clone());
        if app.read_only() {
            ui.label(RichText::new("Preview only (replay: read-only)").color(theme.muted));
        } else if app.holds_control() {
            if ui
                .button(format!("Go to {name}…"))
                .on_hover_text("Move the arm to this preset (asks for confirmation)")
                .clicked()
            {
                app.view.confirm = Some(Confirm::GoToPreset(id));
            }
        } else {
            ui.label(RichText::new("Going to a preset needs control.").color(theme.warn));
            if ui
                .button("Request control")
                .on_hover_text("Ask for control (C)")
                .clicked()
            {
                app.command(Command::RequestControl {
                    authority: app.settings.authority,
                });
            }
        }
    }
    if let Some((CommandKind::GoToPreset, outcome)) = &app.last_outcome() {
        let (text, colour) = match outcome {
            Outcome::Completed => ("last transition: completed".to_string(), theme.ok),
            other => (format!("last transition: {other:?}"), theme.danger),
        };
        ui.label(RichText::new(text).color(colour));
    }
}

/// Confirmation dialogs for commands that move the arm or leave an emergency.
pub fn confirmations(app: &mut OcuApp, ctx: &egui::Context, theme: &Theme) {
    let Some(confirm) = app.view.confirm.clone() else {
        return;
    };
    if app.read_only() {
        // Nothing may leave in a replay; a confirmation left over from live is dropped.
        app.view.confirm = None;
        return;
    }
    let (title, question) = match &confirm {
        Confirm::GoToPreset(id) => {
            let name = app
                .state
                .presets
                .iter()
                .find(|p| p.id == *id)
                .map_or(id.to_string(), |p| p.name.clone());
            (
                "Go to preset",
                format!("Move the arm to \"{name}\"? Make sure the path is clear."),
            )
        }
        Confirm::ClearEmergency => (
            "Clear emergency",
            "Clear the emergency stop and resume motion commands?".to_string(),
        ),
    };
    let mut decision = None;
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(question);
            ui.horizontal(|ui| {
                if ui
                    .button(RichText::new("Confirm").color(theme.warn))
                    .clicked()
                {
                    decision = Some(true);
                }
                if ui.button("Cancel").clicked() {
                    decision = Some(false);
                }
            });
        });
    match decision {
        Some(true) => {
            app.view.confirm = None;
            match confirm {
                Confirm::GoToPreset(id) => app.command(Command::GoToPreset { pose_id: id }),
                Confirm::ClearEmergency => {
                    app.command(Command::ClearEmergency);
                    if app.holds_control() {
                        app.command(Command::Resume);
                    }
                }
            }
        }
        Some(false) => app.view.confirm = None,
        None => {}
    }
}
