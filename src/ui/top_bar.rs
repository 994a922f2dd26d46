//! Top bar: emergency stop, manipulator selector, link and staleness, control, record, and
//! the File and View menus. Commands to the arm are enabled only while they reach the live
//! arm ([`Shown`]); in a replay they are disabled ("replay: read-only").

use eframe::egui::{self, RichText};

use super::actions::Action;
use super::app::{Settings, file_name};
use super::commands::UiCommand;
use super::recording::{self, Recording};
use super::sources::Badge;
use super::theme::Theme;
use super::time_control::Shown;
use crate::model::state::ArmState;
use crate::model::update::{Command, ControlState, LinkState, ManagementState};

/// Why a command button is disabled in a replay.
pub const READ_ONLY: &str = "replay: read-only";

/// What the top bar shows.
pub struct TopBar<'a> {
    /// The state drawn.
    pub state: &'a ArmState,
    /// What the window shows.
    pub shown: Shown,
    /// The SIMULATED or REPLAY mark.
    pub badge: Option<&'a Badge>,
    /// The recorder.
    pub recording: &'a Recording,
    /// A live source runs (recording is possible).
    pub can_record: bool,
    /// What the File menu offers.
    pub file: FileMenu,
}

/// What the File menu offers.
pub struct FileMenu {
    /// A file dialog is open (one at a time).
    pub busy: bool,
    /// There is something to export as CSV, described for the tooltip.
    pub csv: Option<String>,
    /// The 3D view is on screen.
    pub png: bool,
    /// An arm is shown (its specification can be exported as URDF).
    pub urdf: bool,
}

/// A button for a table command: its label, enabled when the command is available (and
/// `enabled`), with its tooltip and keys; `true` when clicked.
fn command_button(ui: &mut egui::Ui, cmd: UiCommand, shown: Shown, enabled: bool) -> bool {
    ui.add_enabled(
        enabled && cmd.available(shown),
        egui::Button::new(cmd.text()),
    )
    .on_hover_text(cmd.hover_text(shown))
    .on_disabled_hover_text(READ_ONLY)
    .clicked()
}

/// Draws the top bar; the View menu changes `settings`.
pub fn show(
    ui: &mut egui::Ui,
    bar: &TopBar<'_>,
    settings: &mut Settings,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let shown = bar.shown;
    let state = bar.state;
    ui.horizontal(|ui| {
        // Emergency stop first: always visible, one click.
        let stop = UiCommand::EmergencyStop;
        let estop = egui::Button::new(
            RichText::new(stop.text())
                .strong()
                .color(egui::Color32::WHITE),
        )
        .fill(theme.danger);
        if ui
            .add_enabled(stop.available(shown), estop)
            .on_hover_text(stop.hover_text(shown))
            .on_disabled_hover_text(READ_ONLY)
            .clicked()
        {
            actions.push(Action::Ui(stop));
        }
        if state.status == ManagementState::Emergency
            && command_button(ui, UiCommand::ClearEmergency, shown, true)
        {
            actions.push(Action::Ui(UiCommand::ClearEmergency));
        }
        ui.separator();
        selector(ui, state, shown, actions);
        link(ui, state, theme);
        ui.separator();
        control(ui, state, shown, theme, actions);
        ui.separator();
        if recording::button(ui, bar.recording, bar.can_record, shown, theme) {
            actions.push(Action::Ui(UiCommand::ToggleRecording));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let help = UiCommand::ToggleHelp;
            if ui
                .button(help.text())
                .on_hover_text(help.hover_text(shown))
                .clicked()
            {
                actions.push(Action::Ui(help));
            }
            let theme_button = if settings.dark { "Light" } else { "Dark" };
            if ui
                .button(theme_button)
                .on_hover_text(UiCommand::ToggleTheme.hover_text(shown))
                .clicked()
            {
                actions.push(Action::Ui(UiCommand::ToggleTheme));
            }
            view_menu(ui, settings);
            file_menu(ui, &bar.file, shown, actions);
            badge(ui, bar.badge, theme);
        });
    });
}

/// The manipulator selector (disabled in a replay: it shows the arm selected then).
fn selector(ui: &mut egui::Ui, state: &ArmState, shown: Shown, actions: &mut Vec<Action>) {
    let selected = state.selected;
    let label = selected.map_or("no manipulator found".to_string(), |id| {
        let name = state
            .components
            .get(&id)
            .and_then(|c| c.0.identification.clone())
            .unwrap_or_default();
        format!("{id} {name}")
    });
    let manipulators: Vec<_> = state
        .components
        .values()
        .filter(|(c, _)| c.manipulator)
        .map(|(c, lost)| (c.id, c.identification.clone().unwrap_or_default(), *lost))
        .collect();
    ui.add_enabled_ui(shown.commands_reach_live_arm(), |ui| {
        egui::ComboBox::new("manipulator", "arm")
            .selected_text(label)
            .show_ui(ui, |ui| {
                for (id, name, lost) in manipulators {
                    let text = format!("{id} {name}{}", if lost { " (lost)" } else { "" });
                    if ui.selectable_label(Some(id) == selected, text).clicked()
                        && Some(id) != selected
                    {
                        actions.push(Action::Send(Command::Select(id)));
                    }
                }
            })
            .response
            .on_hover_text("Manipulators found on the network (subsystem.node.component)")
            .on_disabled_hover_text(
                "The manipulator selected in the recording at this time (replay: read-only)",
            );
    });
}

/// Link, staleness and management state.
fn link(ui: &mut egui::Ui, state: &ArmState, theme: &Theme) {
    let stale: Vec<&str> = state
        .stale
        .iter()
        .filter(|(_, s)| **s)
        .map(|(k, _)| k.name())
        .collect();
    let (text, colour) = match state.link {
        LinkState::Idle => ("searching…".to_string(), theme.muted),
        LinkState::Connecting => ("connecting…".to_string(), theme.warn),
        LinkState::Live if stale.is_empty() => ("live".to_string(), theme.ok),
        LinkState::Live => (format!("stale: {}", stale.join(", ")), theme.warn),
        LinkState::Lost => ("LOST".to_string(), theme.danger),
    };
    ui.label(RichText::new(text).color(colour)).on_hover_text(
        "Link to the selected manipulator; a signal is stale when 3 periods overdue",
    );
    ui.label(
        RichText::new(format!("{:?}", state.status).to_uppercase()).color(match state.status {
            ManagementState::Ready => theme.ok,
            ManagementState::Emergency | ManagementState::Failure => theme.danger,
            _ => theme.warn,
        }),
    )
    .on_hover_text("Management state of the manipulator");
}

/// Control held / requested / released, and Resume from STANDBY.
fn control(
    ui: &mut egui::Ui,
    state: &ArmState,
    shown: Shown,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let held = matches!(state.control, ControlState::Held { .. });
    match state.control {
        ControlState::Held { authority } => {
            ui.label(RichText::new(format!("control held ({authority})")).color(theme.ok));
            if command_button(ui, UiCommand::ReleaseControl, shown, true) {
                actions.push(Action::Ui(UiCommand::ReleaseControl));
            }
        }
        ControlState::Requested => {
            ui.label(RichText::new("control requested…").color(theme.warn));
        }
        ControlState::Released => {
            if command_button(ui, UiCommand::RequestControl, shown, true) {
                actions.push(Action::Ui(UiCommand::RequestControl));
            }
        }
    }
    if matches!(state.status, ManagementState::Standby)
        && held
        && command_button(ui, UiCommand::Resume, shown, true)
    {
        actions.push(Action::Ui(UiCommand::Resume));
    }
}

fn view_menu(ui: &mut egui::Ui, settings: &mut Settings) {
    ui.menu_button("View", |ui| {
        ui.checkbox(&mut settings.show_gauges, "Joint gauges")
            .on_hover_text("Show the joint gauges panel");
        ui.checkbox(&mut settings.show_plots, "Force/torque plots")
            .on_hover_text("Show the end-effector force/torque plots");
        ui.checkbox(&mut settings.show_presets, "Presets")
            .on_hover_text("Show the preset pose picker");
        ui.checkbox(&mut settings.show_axes, "Joint axes")
            .on_hover_text("Draw each joint's axis in the 3D view");
        ui.checkbox(&mut settings.show_frames, "Joint frames")
            .on_hover_text("Draw each joint's x/y/z frame in the 3D view");
    });
}

fn file_menu(ui: &mut egui::Ui, menu: &FileMenu, shown: Shown, actions: &mut Vec<Action>) {
    ui.menu_button("File", |ui| {
        let entry = |ui: &mut egui::Ui, cmd: UiCommand, enabled: bool, hover: String| {
            let keys = cmd.keys_text(shown);
            let disabled = if menu.busy {
                "A file dialog is open"
            } else {
                "Nothing to export yet"
            };
            ui.add_enabled(
                enabled && cmd.available(shown),
                egui::Button::new(cmd.text()).shortcut_text(keys),
            )
            .on_hover_text(hover)
            .on_disabled_hover_text(disabled)
            .clicked()
        };
        let mut asked = None;
        if entry(
            ui,
            UiCommand::Open,
            !menu.busy,
            UiCommand::Open.hover_text(shown),
        ) {
            asked = Some(UiCommand::Open);
        }
        ui.separator();
        let csv_hover = format!(
            "Joint and force/torque series over {}",
            menu.csv.as_deref().unwrap_or("nothing yet")
        );
        if entry(
            ui,
            UiCommand::ExportCsv,
            !menu.busy && menu.csv.is_some(),
            csv_hover,
        ) {
            asked = Some(UiCommand::ExportCsv);
        }
        if entry(
            ui,
            UiCommand::ExportPng,
            !menu.busy && menu.png,
            UiCommand::ExportPng.hover_text(shown),
        ) {
            asked = Some(UiCommand::ExportPng);
        }
        if entry(
            ui,
            UiCommand::ExportUrdf,
            !menu.busy && menu.urdf,
            UiCommand::ExportUrdf.hover_text(shown),
        ) {
            asked = Some(UiCommand::ExportUrdf);
        }
        if UiCommand::BackToLive.available(shown) {
            ui.separator();
            if entry(
                ui,
                UiCommand::BackToLive,
                true,
                UiCommand::BackToLive.hover_text(shown),
            ) {
                asked = Some(UiCommand::BackToLive);
            }
        }
        if let Some(cmd) = asked {
            actions.push(Action::Ui(cmd));
        }
    });
}

/// SIMULATED or REPLAY file.mcap.
fn badge(ui: &mut egui::Ui, badge: Option<&Badge>, theme: &Theme) {
    match badge {
        Some(Badge::Simulated) => {
            ui.label(RichText::new("SIMULATED").strong().color(theme.simulated))
                .on_hover_text("Data from the built-in simulator, not a real arm");
        }
        Some(Badge::Replay(path)) => {
            ui.label(
                RichText::new(format!("REPLAY {}", file_name(path)))
                    .strong()
                    .color(theme.replay),
            )
            .on_hover_text(format!(
                "Replaying {} (read-only: no command is sent)",
                path.display()
            ));
        }
        None => {}
    }
}
