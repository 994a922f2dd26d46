//! The confirmation dialog of a command to the live arm (going to a preset, clearing an
//! emergency, resuming): it names the arm it commands (`the live arm 126.1.10`), says what
//! will happen, and returns the operator's answer. Drawn from the live arm's state, like the
//! top bar's live area, whatever time is drawn.

use eframe::egui::{self, RichText};

use crate::model::state::ArmState;
use crate::ui::action::Confirm;
use crate::ui::commands::UiCommand;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::live_arm_words;

/// The dialog's title and question for `confirm` to the arm in `live`.
pub fn words(confirm: Confirm, live: Option<&ArmState>, shown: Shown) -> (&'static str, String) {
    let arm = live_arm_words(live);
    match confirm {
        Confirm::GoToPreset(id) => {
            let name = live
                .and_then(|l| l.presets.iter().find(|p| p.id == id))
                .map_or_else(|| id.to_string(), |p| p.name.clone());
            (
                "Go to preset",
                format!("Move {arm} to \"{name}\"? Make sure the path is clear."),
            )
        }
        Confirm::ClearEmergency => (
            "Clear emergency",
            format!(
                "Clear the emergency stop of {arm}?\nIt goes to STANDBY and stays stopped: \
                 nothing moves until you {} ({}).",
                UiCommand::Resume.text().trim_end_matches('…'),
                UiCommand::Resume.keys_text(shown)
            ),
        ),
        Confirm::Resume => (
            "Resume",
            format!(
                "Resume {arm}?\nIt goes from STANDBY to READY and accepts motion commands \
                 again. Make sure nobody is near the arm and its path is clear."
            ),
        ),
    }
}

/// Draws the dialog for `confirm` with its clearance `advice` (a preset move's: the target
/// and the path; a line saying the target touches another arm or an obstacle in the
/// warning colour); the operator's answer, once given.
pub fn show(
    ctx: &egui::Context,
    confirm: Confirm,
    live: Option<&ArmState>,
    (shown, advice): (Shown, &[String]),
    theme: &Theme,
) -> Option<bool> {
    let (title, question) = words(confirm, live, shown);
    let mut decision = None;
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(question);
            for line in advice {
                let touches = line.starts_with("The target touches");
                let color = if touches { theme.danger } else { theme.muted };
                ui.label(RichText::new(line).color(color).small());
            }
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
