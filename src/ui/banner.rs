//! The banner across the window under the top bar: the live arm's emergency, or its lost
//! link, in words with what to do. Drawn from the live arm's newest state, like the top bar's
//! live area: an emergency of the live arm is never missed, whatever time is drawn.

use eframe::egui::{self, RichText};

use super::commands::UiCommand;
use super::live::clock_text;
use super::theme::Theme;
use super::time_control::Shown;
use crate::model::state::{ArmState, Freshness};
use crate::model::update::{ControlState, ManagementState};

/// What the banner says, when it has something to say: (text, is it the emergency).
pub fn text(live: &ArmState, start_ns: Option<u64>, shown: Shown) -> Option<(String, bool)> {
    if live.status == ManagementState::Emergency && !live.freshness().is_lost() {
        let held = matches!(live.control, ControlState::Held { .. });
        let then = if held {
            "then Resume"
        } else {
            "then Request control and Resume"
        };
        let how = if UiCommand::ClearEmergency.available(shown) {
            format!("Clear it with \"Clear emergency…\" (asks for confirmation), {then}.")
        } else {
            format!("Back to live (L), then clear it (asks for confirmation), {then}.")
        };
        return Some((
            format!("EMERGENCY STOP — the live arm is stopped. {how}"),
            true,
        ));
    }
    if let Freshness::Lost { last } = live.freshness() {
        let when = last.map_or(String::new(), |t| {
            format!(
                " Everything shown is the last known, at {}.",
                clock_text(start_ns, t)
            )
        });
        return Some((
            format!("LINK LOST — the live arm is silent; its state is unknown.{when}"),
            false,
        ));
    }
    None
}

/// Draws the banner's content (the panel around it is the caller's, filled with
/// [`fill`]).
pub fn show(ui: &mut egui::Ui, text: &str, emergency: bool, theme: &Theme) {
    let colour = if emergency {
        theme.on_danger
    } else {
        theme.danger
    };
    ui.vertical_centered(|ui| {
        ui.label(RichText::new(text).size(18.0).strong().color(colour));
    });
}

/// The banner's fill: the danger colour for an emergency, the window's own otherwise.
pub fn fill(emergency: bool, theme: &Theme, visuals: &egui::Visuals) -> egui::Color32 {
    if emergency {
        theme.danger
    } else {
        visuals.panel_fill
    }
}
