//! The preset pose picker: the arm's presets, the current one highlighted; selecting one
//! previews it as a ghost; "Go to" needs control (and offers to request it) and a
//! confirmation, then shows progress and the transition's result.

use eframe::egui::{self, RichText};

use super::arm_list::naming;
use crate::model::command::{Command, CommandKind};
use crate::model::state::{ArmState, outcome_text};
use crate::model::update::{ControlState, ManagementState, Outcome, PoseState};
use crate::ui::action::Action;
use crate::ui::action::Confirm;
use crate::ui::commands::{UiCommand, refusal};
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::conflict_refusal;
use crate::ui::words::last_outcome;

/// Progress of a transition 0..1 from the joint-space distance to the target, when the start
/// and target presets' positions are known; from no preset (`from` 255: the demo's tour
/// stopped between presets when control was taken), from `seen_start`, where the arm was
/// when the move was first seen.
pub fn progress(state: &ArmState, from: u8, to: u8, seen_start: Option<&[f64]>) -> Option<f64> {
    let q = &state.positions.as_ref()?.value;
    let start = state
        .presets
        .iter()
        .find(|p| p.id == from)
        .and_then(|p| p.positions.as_deref())
        .or(seen_start)?;
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

/// How tall the panel is with `presets` presets, points: the heading, a row each, the
/// separator and one row under it (the "Go to …" button of a preview).
pub fn wanted_height(ui: &egui::Ui, presets: usize) -> f32 {
    let spacing = ui.spacing();
    let row = spacing.interact_size.y + spacing.item_spacing.y + 2.0;
    let heading = ui.text_style_height(&egui::TextStyle::Heading) + spacing.item_spacing.y;
    heading + row * (presets.max(1) as f32 + 1.0) + 3.0 * spacing.item_spacing.y + 8.0
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
        ui.label(no_presets_words(state, shown));
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
        // Where the arm is, said in words too (on screen only by colour).
        let name = if here {
            format!("{}  {}, the arm is here", p.id, p.name)
        } else {
            format!("{}  {}", p.id, p.name)
        };
        let r = ui
            .selectable_label(previewing, text)
            .accessible_name(name)
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
    // Where the arm was when the current move was first seen (kept in egui's memory: a
    // view detail, not a fact of the session).
    let start_id = egui::Id::unique("preset_move_start");
    if let PoseState::Moving { from, to } = pose {
        let name = preset_name(state, to).unwrap_or_else(|| to.to_string());
        ui.label(format!("moving to {name}"));
        let here = state.positions.as_ref().map(|p| p.value.clone());
        let seen: Option<(u8, u8, Vec<f64>)> = ui.data_mut(|d| {
            let kept = d.get_temp::<(u8, u8, Vec<f64>)>(start_id);
            match (kept, here) {
                (Some(k), _) if k.0 == from && k.1 == to => Some(k),
                (_, Some(q)) => {
                    d.insert_temp(start_id, (from, to, q.clone()));
                    Some((from, to, q))
                }
                (_, None) => None,
            }
        });
        let seen_start = seen.as_ref().map(|k| k.2.as_slice());
        if let Some(f) = progress(state, from, to, seen_start) {
            ui.add(egui::ProgressBar::new(f as f32).show_percentage());
        }
    } else {
        ui.data_mut(|d| d.remove::<(u8, u8, Vec<f64>)>(start_id));
    }
    if let Some(id) = preview {
        go_to(ui, state, id, shown, theme, actions);
    }
    if let Some((CommandKind::GoToPreset, outcome)) = &last_outcome(state) {
        let (text, colour) = match outcome {
            Outcome::Completed => ("last transition: completed".to_string(), theme.ok),
            other => (
                format!("last transition {}", outcome_text(other, state)),
                theme.danger,
            ),
        };
        ui.label(RichText::new(text).color(colour));
    }
}

/// Whether the presets of the arm in `state` are still to come: it has not answered for them
/// yet, and it offers the preset service (or its services are not known yet).
pub fn presets_loading(state: &ArmState) -> bool {
    if state.presets_reported {
        return false;
    }
    let Some(id) = state.selected else {
        return false;
    };
    state.components.get(&id).is_none_or(|(c, _)| {
        c.services.is_empty()
            || c.services
                .iter()
                .any(|(uri, ..)| uri.contains("PresetPose"))
    })
}

/// What the panel says when `state` has no preset poses while `shown`: "Loading…" only while
/// a live arm's answer may still come (a file holds what it holds: it never waits).
pub fn no_presets_words(state: &ArmState, shown: Shown) -> &'static str {
    if state.selected.is_none() {
        if shown.is_replay() {
            "No manipulator in this file at this time."
        } else {
            "No manipulator focused."
        }
    } else if shown.is_replay() {
        "No preset poses recorded for this arm at this time."
    } else if presets_loading(state) {
        "Loading the arm's preset poses…"
    } else {
        "This arm reports no preset poses (IOP PresetPose)."
    }
}

/// Why "Go to" cannot be offered for the arm in `state` now (the live arm), when it cannot.
pub fn go_to_refused(state: &ArmState) -> Option<String> {
    if let Some(why) = conflict_refusal(state) {
        Some(why)
    } else if state.status == ManagementState::Emergency {
        Some("Go to is disabled: the arm is in EMERGENCY. Clear the emergency first.".into())
    } else if state.status == ManagementState::Standby {
        // The arm refuses motion in STANDBY: offering the move (and its confirmation) would
        // only end in a refusal.
        Some(format!(
            "Go to is disabled: the arm is in STANDBY. Resume first ({}).",
            UiCommand::Resume.keys_text(Shown::Live)
        ))
    } else if state.freshness().is_lost() {
        Some("Go to is disabled: the link to the arm is lost.".into())
    } else {
        None
    }
}

/// "Go to" the previewed preset `id`, or why not.
fn go_to(
    ui: &mut egui::Ui,
    state: &ArmState,
    id: u8,
    shown: Shown,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let name = preset_name(state, id).unwrap_or_default();
    // The button names the arm it moves.
    let name = state
        .selected
        .map_or(name.clone(), |arm| format!("{name} ({arm})"));
    let go = Command::GoToPreset { pose_id: id };
    if let Some(why) = refusal(shown, &go) {
        // The presets drawn are the past's; a preset is commanded from the live picture only
        // (`Shown::allows`).
        ui.label(RichText::new(format!("Preview only. {why}")).color(theme.muted));
    } else if let Some(why) = go_to_refused(state) {
        ui.add_enabled(false, egui::Button::new(format!("Go to {name}…")))
            .on_disabled_hover_text(&why);
        ui.label(RichText::new(why).color(theme.danger));
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
            .button(naming(request.text(), state.selected))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::Stamped;
    use crate::model::update::{ComponentId, PresetInfo};

    #[test]
    fn a_file_never_says_it_is_loading_presets() {
        // A capture with no arm, and one whose arm never reported presets: nothing to wait
        // for, said so (it read "Loading the arm's preset poses…" for good).
        let none = ArmState::default();
        let replay = Shown::Replay { t: 1.0 };
        assert_eq!(
            no_presets_words(&none, replay),
            "No manipulator in this file at this time."
        );
        let arm = ArmState {
            selected: Some(ComponentId::new(126, 1, 10)),
            ..ArmState::default()
        };
        assert_eq!(
            no_presets_words(&arm, replay),
            "No preset poses recorded for this arm at this time."
        );
        // Live, an arm whose services are not known yet may still answer.
        assert_eq!(
            no_presets_words(&arm, Shown::Live),
            "Loading the arm's preset poses…"
        );
        assert_eq!(
            no_presets_words(&none, Shown::Live),
            "No manipulator focused."
        );
    }

    #[test]
    fn progress_from_between_presets_counts_from_where_the_move_began() {
        let state = ArmState {
            presets: vec![PresetInfo {
                id: 1,
                name: "home".into(),
                positions: Some(vec![0.0, 0.0]),
            }],
            positions: Some(Stamped {
                t: 1.0,
                value: vec![0.5, 0.0],
            }),
            ..ArmState::default()
        };
        // From pose 255 (no preset), the preset's positions are unknown: only the start seen
        // gives a progress.
        assert_eq!(progress(&state, 255, 1, None), None);
        let f = progress(&state, 255, 1, Some(&[1.0, 0.0])).unwrap();
        assert!((f - 0.5).abs() < 1e-12, "{f}");
    }
}
