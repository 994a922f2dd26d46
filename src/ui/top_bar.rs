//! Top bar: manipulator selector, link and staleness, control, emergency stop, record.

use eframe::egui::{self, RichText};

use super::app::{Confirm, Mode, OcuApp};
use super::theme::Theme;
use crate::model::update::{Command, ControlState, LinkState, ManagementState};

/// Draws the top bar.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.horizontal(|ui| {
        // Emergency stop first: always visible, one click.
        let estop = egui::Button::new(RichText::new("E-STOP").strong().color(egui::Color32::WHITE)).fill(theme.danger);
        if ui
            .add(estop)
            .on_hover_text("Emergency stop: stops all motion at once (Space or E). Clearing it asks for confirmation.")
            .clicked()
        {
            app.command(Command::SetEmergency);
        }
        if app.state.status == ManagementState::Emergency
            && ui
                .button("Clear emergency…")
                .on_hover_text("Clear the emergency stop and resume (asks for confirmation)")
                .clicked()
        {
            app.view.confirm = Some(Confirm::ClearEmergency);
        }
        ui.separator();

        // Manipulator selector.
        let selected = app.state.selected;
        let label = selected.map_or("no manipulator found".to_string(), |id| {
            let name = app.state.components.get(&id).and_then(|c| c.0.identification.clone()).unwrap_or_default();
            format!("{id} {name}")
        });
        let manipulators: Vec<_> = app
            .state
            .components
            .values()
            .filter(|(c, _)| c.manipulator)
            .map(|(c, lost)| (c.id, c.identification.clone().unwrap_or_default(), *lost))
            .collect();
        egui::ComboBox::new("manipulator", "arm")
            .selected_text(label)
            .show_ui(ui, |ui| {
                for (id, name, lost) in manipulators {
                    let text = format!("{id} {name}{}", if lost { " (lost)" } else { "" });
                    if ui.selectable_label(Some(id) == selected, text).clicked() && Some(id) != selected {
                        app.command(Command::Select(id));
                    }
                }
            })
            .response
            .on_hover_text("Manipulators found on the network (subsystem.node.component)");

        // Link and staleness.
        let stale: Vec<&str> = app.state.stale.iter().filter(|(_, s)| **s).map(|(k, _)| k.name()).collect();
        let (text, colour) = match app.state.link {
            LinkState::Idle => ("searching…".to_string(), theme.muted),
            LinkState::Connecting => ("connecting…".to_string(), theme.warn),
            LinkState::Live if stale.is_empty() => ("live".to_string(), theme.ok),
            LinkState::Live => (format!("stale: {}", stale.join(", ")), theme.warn),
            LinkState::Lost => ("LOST".to_string(), theme.danger),
        };
        ui.label(RichText::new(text).color(colour))
            .on_hover_text("Link to the selected manipulator; a signal is stale when 3 periods overdue");
        ui.label(RichText::new(format!("{:?}", app.state.status).to_uppercase()).color(match app.state.status {
            ManagementState::Ready => theme.ok,
            ManagementState::Emergency | ManagementState::Failure => theme.danger,
            _ => theme.warn,
        }))
        .on_hover_text("Management state of the manipulator");
        ui.separator();

        // Control.
        match app.state.control {
            ControlState::Held { authority } => {
                ui.label(RichText::new(format!("control held ({authority})")).color(theme.ok));
                if ui.button("Release").on_hover_text("Give control back (C)").clicked() {
                    app.command(Command::ReleaseControl);
                }
            }
            ControlState::Requested => {
                ui.label(RichText::new("control requested…").color(theme.warn));
            }
            ControlState::Released => {
                if ui
                    .button("Request control")
                    .on_hover_text("Ask for control of the manipulator (C); needed to command presets")
                    .clicked()
                {
                    app.command(Command::RequestControl {
                        authority: app.settings.authority,
                    });
                }
            }
        }
        if matches!(app.state.status, ManagementState::Standby) && app.holds_control() && ui.button("Resume").on_hover_text("STANDBY to READY").clicked() {
            app.command(Command::Resume);
        }
        ui.separator();
        ui.add_enabled(false, egui::Button::new("Record"))
            .on_disabled_hover_text("Recording arrives with the record/replay work");

        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui.button("?").on_hover_text("Keyboard shortcuts (F1)").clicked() {
                app.view.show_help = !app.view.show_help;
            }
            let mode = if app.settings.dark { "Light" } else { "Dark" };
            if ui.button(mode).on_hover_text("Dark / light theme").clicked() {
                app.settings.dark = !app.settings.dark;
            }
            ui.menu_button("View", |ui| {
                ui.checkbox(&mut app.settings.show_gauges, "Joint gauges")
                    .on_hover_text("Show the joint gauges panel");
                ui.checkbox(&mut app.settings.show_plots, "Force/torque plots")
                    .on_hover_text("Show the end-effector force/torque plots");
                ui.checkbox(&mut app.settings.show_presets, "Presets")
                    .on_hover_text("Show the preset pose picker");
                ui.checkbox(&mut app.settings.show_axes, "Joint axes")
                    .on_hover_text("Draw each joint's axis in the 3D view");
                ui.checkbox(&mut app.settings.show_frames, "Joint frames")
                    .on_hover_text("Draw each joint's x/y/z frame in the 3D view");
            });
            if app.mode == Mode::Simulated {
                ui.label(RichText::new("SIMULATED").strong().color(theme.simulated))
                    .on_hover_text("Data from the built-in simulator, not a real arm");
            }
        });
    });
}
