//! Top bar: manipulator selector, link and staleness, control, emergency stop, record, and
//! the File menu (open, export, back to live). In a replay every command is disabled
//! ("replay: read-only").

use eframe::egui::{self, RichText};

use super::app::{Confirm, Mode, OcuApp, file_name};
use super::files::{self, Task};
use super::recording;
use super::theme::Theme;
use crate::model::update::{Command, ControlState, LinkState, ManagementState};

/// Why a command button is disabled in a replay.
pub const READ_ONLY: &str = "replay: read-only";

/// Draws the top bar.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    let live = !app.read_only();
    ui.horizontal(|ui| {
        // Emergency stop first: always visible, one click.
        let estop = egui::Button::new(RichText::new("E-STOP").strong().color(egui::Color32::WHITE)).fill(theme.danger);
        // Over a replay the live arm underneath can still be stopped (E, not Space).
        let hover = if live {
            "Emergency stop: stops all motion at once (Space or E). Clearing it asks for confirmation."
        } else {
            "Emergency stop of the LIVE arm running underneath this replay (E)."
        };
        if ui
            .add_enabled(live || app.has_live(), estop)
            .on_hover_text(hover)
            .on_disabled_hover_text(READ_ONLY)
            .clicked()
        {
            app.command(Command::SetEmergency);
        }
        if app.state.status == ManagementState::Emergency
            && ui
                .add_enabled(live, egui::Button::new("Clear emergency…"))
                .on_hover_text("Clear the emergency stop and resume (asks for confirmation)")
                .on_disabled_hover_text(READ_ONLY)
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
        ui.add_enabled_ui(live, |ui| {
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
                .on_hover_text("Manipulators found on the network (subsystem.node.component)")
                .on_disabled_hover_text("The manipulator selected in the recording at this time (replay: read-only)");
        });

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
                if ui
                    .add_enabled(live, egui::Button::new("Release"))
                    .on_hover_text("Give control back (C)")
                    .on_disabled_hover_text(READ_ONLY)
                    .clicked()
                {
                    app.command(Command::ReleaseControl);
                }
            }
            ControlState::Requested => {
                ui.label(RichText::new("control requested…").color(theme.warn));
            }
            ControlState::Released => {
                if ui
                    .add_enabled(live, egui::Button::new("Request control"))
                    .on_hover_text("Ask for control of the manipulator (C); needed to command presets")
                    .on_disabled_hover_text(READ_ONLY)
                    .clicked()
                {
                    app.command(Command::RequestControl {
                        authority: app.settings.authority,
                    });
                }
            }
        }
        if matches!(app.state.status, ManagementState::Standby)
            && app.holds_control()
            && ui
                .add_enabled(live, egui::Button::new("Resume"))
                .on_hover_text("STANDBY to READY")
                .on_disabled_hover_text(READ_ONLY)
                .clicked()
        {
            app.command(Command::Resume);
        }
        ui.separator();
        recording::button(app, ui, theme);

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
            file_menu(app, ui);
            match &app.mode {
                Mode::Simulated => {
                    ui.label(RichText::new("SIMULATED").strong().color(theme.simulated))
                        .on_hover_text("Data from the built-in simulator, not a real arm");
                }
                Mode::Replay(path) => {
                    ui.label(RichText::new(format!("REPLAY {}", file_name(path))).strong().color(theme.replay))
                        .on_hover_text(format!("Replaying {} (read-only: no command is sent)", path.display()));
                }
                Mode::Live => {}
            }
        });
    });
}

fn file_menu(app: &mut OcuApp, ui: &mut egui::Ui) {
    let (t0, t1, range) = files::csv_range(app);
    let busy = app.jobs.dialog_open();
    ui.menu_button("File", |ui| {
        if ui
            .add_enabled(!busy, egui::Button::new("Open…"))
            .on_hover_text("Replay a .mcap recording or a .pcap / .pcapng capture (Ctrl+O); you can also drop a file on the window")
            .clicked()
        {
            files::request(app, Task::Open);
        }
        ui.separator();
        if ui
            .add_enabled(!busy && t1 > t0, egui::Button::new("Export CSV…"))
            .on_hover_text(format!("Joint and force/torque series over {range}"))
            .on_disabled_hover_text("Nothing to export yet")
            .clicked()
        {
            files::request(app, Task::ExportCsv { t0, t1 });
        }
        if ui
            .add_enabled(!busy && app.view.view3d_rect.is_some(), egui::Button::new("Export 3D view as PNG…"))
            .on_hover_text("The 3D view as it is on screen now")
            .clicked()
        {
            files::request(app, Task::ExportPng);
        }
        if app.read_only() && app.has_live() {
            ui.separator();
            if ui
                .button("Back to live")
                .on_hover_text("Close the replay and show the live session again")
                .clicked()
            {
                app.back_to_live();
            }
        }
    });
}
