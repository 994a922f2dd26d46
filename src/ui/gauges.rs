//! The joint gauges panel.

use eframe::egui;

use super::app::OcuApp;
use super::theme::Theme;
use super::widgets::joint_gauge::{GaugeData, joint_gauge};
use crate::model::update::Signal;

/// Gauge data for every joint of the selected arm.
pub fn gauge_data(app: &OcuApp) -> Vec<GaugeData> {
    let Some(spec) = &app.state.spec else {
        return Vec::new();
    };
    let at = |x: &Option<crate::model::state::Stamped<Vec<f64>>>, i: usize| {
        x.as_ref().and_then(|v| v.value.get(i).copied())
    };
    let stale = app
        .state
        .stale
        .get(&Signal::JointPositions)
        .copied()
        .unwrap_or(false);
    spec.joints
        .iter()
        .enumerate()
        .map(|(i, j)| GaugeData {
            label: format!("{} {}", i + 1, j.name.as_deref().unwrap_or("")),
            kind: j.kind,
            value: at(&app.state.positions, i),
            min: j.min,
            max: j.max,
            speed: at(&app.state.velocities, i),
            max_speed: j.max_speed,
            effort_percent: at(&app.state.efforts, i),
            degrees: app.settings.degrees,
            millimetres: app.settings.millimetres,
            stale,
        })
        .collect()
}

/// Draws the panel.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.horizontal(|ui| {
        ui.heading("Joints");
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.toggle_value(&mut app.settings.millimetres, "mm")
                .on_hover_text("Prismatic joints in millimetres (else metres)");
            ui.toggle_value(&mut app.settings.degrees, "deg")
                .on_hover_text("Revolute joints in degrees (else radians) — U");
        });
    });
    let data = gauge_data(app);
    if data.is_empty() {
        ui.label(if app.read_only() {
            "No specification recorded up to this time."
        } else {
            "Waiting for the manipulator's specification…"
        });
        return;
    }
    egui::ScrollArea::vertical().show(ui, |ui| {
        for d in &data {
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
