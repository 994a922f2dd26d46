//! The joint gauges panel.

use eframe::egui;

use super::app::Settings;
use super::commands::UiCommand;
use super::theme::Theme;
use super::time_control::Shown;
use super::widgets::joint_gauge::{GaugeData, joint_gauge};
use crate::model::state::{ArmState, Stamped};
use crate::model::update::Signal;

/// Gauge data for every joint of the selected arm in `state`, in the units of `settings`.
pub fn gauge_data(state: &ArmState, settings: &Settings) -> Vec<GaugeData> {
    let Some(spec) = &state.spec else {
        return Vec::new();
    };
    let at =
        |x: &Option<Stamped<Vec<f64>>>, i: usize| x.as_ref().and_then(|v| v.value.get(i).copied());
    // Greyed when the positions are not the arm's current ones: stale, or the link lost.
    let stale = state
        .stale
        .get(&Signal::JointPositions)
        .copied()
        .unwrap_or(false)
        || state.freshness().is_lost();
    spec.joints
        .iter()
        .enumerate()
        .map(|(i, j)| GaugeData {
            label: format!("{} {}", i + 1, j.name.as_deref().unwrap_or("")),
            prismatic: j.is_prismatic(),
            value: at(&state.positions, i),
            min: j.min,
            max: j.max,
            speed: at(&state.velocities, i),
            max_speed: j.max_speed,
            effort_percent: at(&state.efforts, i),
            degrees: settings.degrees,
            millimetres: settings.millimetres,
            stale,
        })
        .collect()
}

/// Draws the panel: `data` from [`gauge_data`]; the unit toggles change `settings`.
/// `last_known`, when given, says the values are the last known (`last known at 12:03:04
/// UTC`): it is written over the gauges, which are greyed.
pub fn show(
    ui: &mut egui::Ui,
    data: &[GaugeData],
    shown: Shown,
    last_known: Option<&str>,
    settings: &mut Settings,
    theme: &Theme,
) {
    ui.horizontal(|ui| {
        ui.heading("Joints");
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.toggle_value(&mut settings.millimetres, "mm")
                .on_hover_text("Prismatic joints in millimetres (else metres)");
            let units = UiCommand::ToggleUnits;
            ui.toggle_value(&mut settings.degrees, units.text())
                .on_hover_text(format!(
                    "{} — {}",
                    units.tooltip(shown),
                    units.keys_text(shown)
                ));
        });
    });
    if data.is_empty() {
        ui.label(if shown.is_replay() {
            "No specification recorded up to this time."
        } else {
            "Waiting for the manipulator's specification…"
        });
        return;
    }
    if let Some(text) = last_known {
        ui.label(egui::RichText::new(text).strong().color(theme.warn))
            .on_hover_text("The arm's reports stopped: the gauges show the last values received");
    }
    egui::ScrollArea::vertical().show(ui, |ui| {
        for d in data {
            joint_gauge(ui, d, theme);
            ui.add_space(6.0);
        }
        ui.label(
            egui::RichText::new("bars: speed / max speed, effort / max effort")
                .small()
                .color(theme.muted),
        );
    });
}
