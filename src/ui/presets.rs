//! The preset pose picker: the arm's presets, the current one highlighted; selecting one
//! previews it as a ghost; "Go to" needs control (and offers to request it) and a
//! confirmation, then shows progress and the transition's result.

use eframe::egui::{self, RichText};

use super::actions::Action;
use super::app::{Confirm, last_outcome};
use super::commands::UiCommand;
use super::theme::Theme;
use super::time_control::Shown;
use crate::model::state::ArmState;
use crate::model::update::{CommandKind, ControlState, Outcome, PoseState};

/// Progress of a transition 0..1 from the joint-space distance to the target, when the start
/// and target presets' positions are known.
pub fn progress(state: &ArmState, from: u8, to: u8) -> Option<f64> {
    let q = &state.positions.as_ref()?.value;
    let start = state
        .presets
        .iter()
        .find(|p| p.id == from)?
        .positions
        .as_ref()?;
    let goal = state
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

/// The name of preset `id` in `state`.
fn preset_name(state: &ArmState, id: u8) -> Option<String> {
    state
        .presets
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.name.clone())
}

/// Draws the panel for `state` with preset `preview` previewed.
pub fn show(
    ui: &mut egui::Ui,
    state: &ArmState,
    preview: Option<u8>,
    shown: Shown,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    ui.heading("Presets");
    if state.presets.is_empty() {
        ui.label("This arm reports no preset poses (IOP PresetPose).");
        return;
    }
    let pose = state.pose;
    // A click previews at once: the rest of the panel already shows the new preview.
    let mut preview = preview;
    for p in &state.presets {
        let here = pose == PoseState::At(p.id);
        let previewing = preview == Some(p.id);
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
            preview = if previewing { None } else { Some(p.id) };
            actions.push(Action::Preview(preview));
        }
    }
    ui.separator();
    if let PoseState::Moving { from, to } = pose {
        let name = preset_name(state, to).unwrap_or_else(|| to.to_string());
        ui.label(format!("moving to {name}"));
        if let Some(f) = progress(state, from, to) {
            ui.add(egui::ProgressBar::new(f as f32).show_percentage());
        }
    }
    if let Some(id) = preview {
        let name = preset_name(state, id).unwrap_or_default();
        if !shown.commands_reach_live_arm() {
            ui.label(RichText::new("Preview only (replay: read-only)").color(theme.muted));
        } else if matches!(state.control, ControlState::Held { .. }) {
            if ui
                .button(format!("Go to {name}…"))
                .on_hover_text("Move the arm to this preset (asks for confirmation)")
                .clicked()
            {
                actions.push(Action::Ask(Confirm::GoToPreset(id)));
            }
        } else {
            ui.label(RichText::new("Going to a preset needs control.").color(theme.warn));
            let request = UiCommand::RequestControl;
            if ui
                .button(request.text())
                .on_hover_text(format!(
                    "Ask for control ({})",
                    UiCommand::ToggleControl.keys_text(shown)
                ))
                .clicked()
            {
                actions.push(Action::Ui(request));
            }
        }
    }
    if let Some((CommandKind::GoToPreset, outcome)) = &last_outcome(state) {
        let (text, colour) = match outcome {
            Outcome::Completed => ("last transition: completed".to_string(), theme.ok),
            other => (format!("last transition: {other:?}"), theme.danger),
        };
        ui.label(RichText::new(text).color(colour));
    }
}

/// The confirmation dialog for a command that moves the arm or leaves an emergency: the
/// operator's answer, once given.
pub fn confirmation(
    ctx: &egui::Context,
    confirm: &Confirm,
    state: &ArmState,
    theme: &Theme,
) -> Option<bool> {
    let (title, question) = match confirm {
        Confirm::GoToPreset(id) => {
            let name = preset_name(state, *id).unwrap_or_else(|| id.to_string());
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
    decision
}
