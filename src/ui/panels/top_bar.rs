//! Top bar: the LIVE ARM area (emergency stop of the focused arm, "stop all" of its vehicle,
//! the arm list ([`super::arm_list`]) that picks the focused arm, its link, management state,
//! control, Resume / Clear emergency), Record, and the File and View menus; and under it the
//! PAST area while the drawn time is not the live now ([`past`]). Every command button names
//! the arm it acts on (`E-STOP 126.1.10`); "stop all" says how many arms of which subsystem.
//!
//! The rule (issue 12): everything in the live area is drawn from the live arm's newest state
//! (`live`), never from the drawn state, because its buttons act on the live arm — live,
//! scrubbed back and over a replay alike (`Shown::allows`, issue 18). The past is drawn only
//! in the past area, as text with its time, with no buttons. With no live source (a replay on
//! its own) there is no live arm: the emergency stop is disabled and says why.
//!
//! Control is said as the arm reports it (`ArmState::control_words`: "control held (authority
//! 100)", "held by 200.7.3 (authority 200)", "free"), and after a loss, why, on a line under
//! the bar until control is held again. While another client uses our JAUS ID every live
//! button but the emergency stop is disabled and says why.
//!
//! The controls whose text changes with the state (Record among them) sit in slots of fixed
//! width, so nothing slides under the pointer when the state changes; the bar wraps onto a
//! second row in a narrow window instead of overlapping.

use eframe::egui::{self, RichText};

use super::arm_list::{self, naming};
use crate::model::command::Command;
use crate::model::state::{ArmState, Freshness};
use crate::model::update::{ControlState, LinkState, ManagementState};
use crate::ui::action::Action;
use crate::ui::arms::ArmRow;
use crate::ui::commands::UiCommand;
use crate::ui::memory::{Budget, BudgetSource, MIN_LIMIT, format_bytes};
use crate::ui::recording::{self, Recording};
use crate::ui::settings::Settings;
use crate::ui::sources::Badge;
use crate::ui::theme::Theme;
use crate::ui::tiles::{NamedLayout, TileLayout};
use crate::ui::time_control::Shown;
use crate::ui::words::{conflict_refusal, file_name, status_word};

/// Why the emergency stop is disabled in a replay on its own.
pub const NO_LIVE_ARM: &str = "No live arm: this window only replays a file";

/// Size of the emergency stop (the same in every state; it names the arm).
const ESTOP_SIZE: egui::Vec2 = egui::vec2(150.0, 26.0);
/// Widths of the slots whose text changes with the live state.
const LINK_W: f32 = 84.0;
const STATUS_W: f32 = 92.0;
const CONTROL_WORDS_W: f32 = 196.0;
const CONTROL_W: f32 = CONTROL_WORDS_W + 180.0;
const ACTION_W: f32 = 190.0;
/// Width of the Record slot: wide enough for the recording's time, size and datagrams, so
/// the menus after it do not move when recording starts.
const RECORD_W: f32 = 300.0;
/// The width of Record, the menus, help and the badge before they are first drawn.
const REST_W: f32 = RECORD_W + 240.0;

/// What the top bar shows.
pub struct TopBar<'a> {
    /// The live arm's newest state (whatever is drawn); `None` without a live source.
    pub live: Option<&'a ArmState>,
    /// What the window shows.
    pub shown: Shown,
    /// The SIMULATED or REPLAY mark.
    pub badge: Option<&'a Badge>,
    /// The recorder.
    pub recording: &'a Recording,
    /// A live source runs (recording is possible).
    pub can_record: bool,
    /// The authority our control requests go with (`Settings::authority`).
    pub authority: u8,
    /// What the File menu offers.
    pub file: FileMenu,
    /// The memory budget: in force, the automatic one, and what the sessions hold.
    pub memory: MemoryMenu,
    /// The live arms, one row each, by subsystem ([`crate::ui::arms::rows`]).
    pub arms: &'a [ArmRow],
    /// What "stop all" reaches: how many followed arms of which subsystem.
    pub stop_all: Option<(usize, u16)>,
    /// The live view server's address while it runs (View → Live view server).
    pub live_view: Option<std::net::SocketAddr>,
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

/// A button for a live-arm command of the table: its label, enabled when the command is
/// available and nothing `blocked` it (another client uses our JAUS ID: the reason), with
/// `hover` (its tooltip and keys) or the reason it is disabled; `true` when clicked.
fn command_button(
    ui: &mut egui::Ui,
    cmd: UiCommand,
    live: &ArmState,
    shown: Shown,
    blocked: Option<&str>,
    hover: String,
) -> bool {
    let disabled = blocked.unwrap_or(NO_LIVE_ARM);
    ui.add_enabled(
        blocked.is_none() && cmd.available(shown),
        egui::Button::new(naming(cmd.text(), live.selected)),
    )
    .on_hover_text(hover)
    .on_disabled_hover_text(disabled)
    .clicked()
}

/// A slot exactly `width` wide in which `add` lays out left to right, clipped to it: what
/// follows does not move when its content changes.
fn slot<R>(ui: &mut egui::Ui, width: f32, add: impl FnOnce(&mut egui::Ui) -> R) -> R {
    slot_in(
        ui,
        width,
        egui::Layout::left_to_right(egui::Align::Center),
        add,
    )
}

/// A [`slot`] whose content sits at its right edge (words that belong to the button after
/// them: "free" beside Request control, not a slot's width away from it).
fn slot_right<R>(ui: &mut egui::Ui, width: f32, add: impl FnOnce(&mut egui::Ui) -> R) -> R {
    slot_in(
        ui,
        width,
        egui::Layout::right_to_left(egui::Align::Center),
        add,
    )
}

fn slot_in<R>(
    ui: &mut egui::Ui,
    width: f32,
    layout: egui::Layout,
    add: impl FnOnce(&mut egui::Ui) -> R,
) -> R {
    let height = ui.spacing().interact_size.y;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, height), egui::Sense::hover());
    let mut child = ui.new_child(egui::UiBuilder::new().max_rect(rect).layout(layout));
    child.set_clip_rect(rect.intersect(ui.clip_rect()));
    add(&mut child)
}

/// The emergency stop of the focused live arm, naming it: the same look in every state.
fn estop(ui: &mut egui::Ui, bar: &TopBar<'_>, theme: &Theme, actions: &mut Vec<Action>) {
    let shown = bar.shown;
    let stop = UiCommand::EmergencyStop;
    let arm = bar.live.and_then(|l| l.selected);
    // Pressed and not yet confirmed by the arm: said on the button itself (a press sends it
    // once more at once); the banner says for how long.
    let pending = bar.live.is_some_and(|l| l.stop.is_pending());
    let (text, size, hover) = if pending {
        (
            naming("STOP SENT", arm),
            13.0,
            format!(
                "Sent, not yet confirmed by the arm: it is repeated every 150 ms until the arm \
                 reports EMERGENCY. Pressing again sends it once more now.\n{}",
                stop.hover_text(shown)
            ),
        )
    } else {
        (naming(stop.text(), arm), 15.0, stop.hover_text(shown))
    };
    let button = egui::Button::new(
        RichText::new(text)
            .strong()
            .size(size)
            .color(theme.on_danger),
    )
    .fill(theme.danger)
    .min_size(ESTOP_SIZE);
    let enabled = bar.live.is_some() && stop.available(shown);
    if ui
        .add_enabled(enabled, button)
        .on_hover_text(hover)
        .on_disabled_hover_text(NO_LIVE_ARM)
        .clicked()
    {
        actions.push(Action::Ui(stop));
    }
}

/// "Stop all": every followed arm of the focused arm's subsystem, at once, no question; it
/// says how many arms of which subsystem.
fn stop_all(ui: &mut egui::Ui, bar: &TopBar<'_>, theme: &Theme, actions: &mut Vec<Action>) {
    let Some((n, subsystem)) = bar.stop_all else {
        return;
    };
    let shown = bar.shown;
    let cmd = UiCommand::EmergencyStopAll;
    let arms = if n == 1 { "arm" } else { "arms" };
    let button = egui::Button::new(
        RichText::new(format!("{} {n} {arms} of {subsystem}", cmd.text()))
            .strong()
            .color(theme.on_danger),
    )
    .fill(theme.danger);
    if ui
        .add_enabled(cmd.available(shown), button)
        .on_hover_text(cmd.hover_text(shown))
        .on_disabled_hover_text(NO_LIVE_ARM)
        .clicked()
    {
        actions.push(Action::Ui(cmd));
    }
}

/// What View → Memory budget shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryMenu {
    /// The budget in force.
    pub in_force: Budget,
    /// The automatic budget on this machine, bytes.
    pub automatic: u64,
    /// Bytes the sessions hold.
    pub used: u64,
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
    ui.horizontal_wrapped(|ui| {
        // Emergency stop first: always visible, one click, the same look.
        estop(ui, bar, theme, actions);
        stop_all(ui, bar, theme, actions);
        if let Some(live) = bar.live {
            ui.label(
                RichText::new("LIVE ARM")
                    .small()
                    .strong()
                    .color(theme.muted),
            )
            .on_hover_text(
                "Everything from here to Record is the live arm now, whatever time is drawn; \
                     its buttons act on the live arm",
            );
            let blocked = conflict_refusal(live);
            selector(ui, bar, live, blocked.as_deref(), theme, actions);
            let freshness = live.freshness();
            link(ui, live, &freshness, theme);
            status(ui, live, &freshness, theme);
            // Why control was lost, until it is held again: in the action slot while that is
            // free, else after the control words; never a row of its own (which moved the
            // window down).
            let loss = live
                .control_loss
                .map(|(_, why)| format!("no control — {why}"));
            let slot_busy = matches!(
                live.status,
                ManagementState::Emergency | ManagementState::Standby
            );
            let (in_words, in_slot) = if slot_busy {
                (loss, None)
            } else {
                (None, loss)
            };
            control(
                ui,
                live,
                bar,
                in_words.as_deref(),
                blocked.as_deref(),
                theme,
                actions,
            );
            let slot = ActionSlot {
                blocked: blocked.as_deref(),
                loss: in_slot.as_deref(),
            };
            action_slot(ui, live, shown, &slot, theme, actions);
        } else {
            ui.label(RichText::new("no live arm").color(theme.muted))
                .on_hover_text(NO_LIVE_ARM);
        }
        ui.separator();
        // The rest as one group: in a narrow window it wraps onto the next row whole (its
        // width as last drawn decides).
        let rest = ui.scope_id().with("rest of the bar");
        let width = ui.data(|d| d.get_temp::<f32>(rest)).unwrap_or(REST_W);
        if ui.max_rect().right() - ui.cursor().min.x < width {
            ui.end_row();
        }
        let drawn = ui.horizontal(|ui| {
            let record = slot(ui, RECORD_W, |ui| {
                recording::button(ui, bar.recording, bar.can_record, shown, theme)
            });
            if record {
                actions.push(Action::Ui(UiCommand::ToggleRecording));
            }
            ui.separator();
            file_menu(ui, &bar.file, shown, actions);
            view_menu(ui, settings, bar, actions);
            let help = UiCommand::ToggleHelp;
            if ui
                .button(help.text())
                .accessible_name("Keyboard shortcuts")
                .on_hover_text(help.hover_text(shown))
                .clicked()
            {
                actions.push(Action::Ui(help));
            }
            badge(ui, bar.badge, theme);
        });
        ui.data_mut(|d| d.insert_temp(rest, drawn.response.rect.width()));
    });
}

/// The PAST area: the drawn time and the drawn state in words, no command buttons. `label`
/// says when (`at −12.4 s (12:03:04 UTC)`, `file.mcap at 0:01:02`). With several arms, a
/// second row lists each at the drawn time ([`arm_list::strip`]); clicking one shows it.
pub fn past(
    ui: &mut egui::Ui,
    label: &str,
    state: &ArmState,
    arms: &[ArmRow],
    shown: Shown,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    past_words(ui, label, state, shown, theme);
    if arms.len() > 1 {
        ui.horizontal_wrapped(|ui| arm_list::strip(ui, arms, theme, actions));
    }
}

/// The first row of the PAST area: when, and the drawn arm's state then.
fn past_words(ui: &mut egui::Ui, label: &str, state: &ArmState, shown: Shown, theme: &Theme) {
    ui.horizontal_wrapped(|ui| {
        let title = if shown.is_replay() {
            "SHOWING A RECORDING"
        } else {
            "SHOWING THE PAST"
        };
        ui.label(RichText::new(title).strong().color(theme.replay));
        ui.label(RichText::new(label).strong().monospace());
        let freshness = state.freshness();
        let link = match &freshness {
            Freshness::Waiting => "no arm yet".to_string(),
            f => format!("link {}", f.word()),
        };
        let status = if freshness.is_lost() {
            "state unknown".to_string()
        } else {
            status_word(state.status).to_string()
        };
        let control = state.control_words();
        let colour = if state.status == ManagementState::Emergency {
            theme.danger
        } else {
            ui.visuals().text_color()
        };
        let then = "The arm's state at the drawn time (not now)";
        ui.label(RichText::new("then:").color(theme.muted))
            .on_hover_text(then);
        ui.label(link).on_hover_text(then);
        ui.label(RichText::new(status).strong().color(colour))
            .on_hover_text(then);
        ui.label(control).on_hover_text(then);
        let hint = match shown {
            Shown::Replay { .. } => "read-only".to_string(),
            Shown::ReplayOverLive { .. } => format!(
                "read-only · the buttons above are the LIVE arm · {} closes the replay",
                UiCommand::FollowLive.keys_text(shown)
            ),
            _ => format!(
                "the buttons above are the LIVE arm · {} back to live",
                UiCommand::FollowLive.keys_text(shown)
            ),
        };
        ui.label(RichText::new(hint).small().color(theme.muted));
    });
}

/// The arm list as the live selector ([`arm_list::selector`]), in a slot: the combo box
/// grows with its text, the slot caps it (the text truncates). Disabled where a focus may not
/// be sent.
fn selector(
    ui: &mut egui::Ui,
    bar: &TopBar<'_>,
    live: &ArmState,
    blocked: Option<&str>,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    slot(ui, arm_list::SELECTOR_W + 34.0, |ui| {
        let allowed = live
            .selected
            .is_none_or(|id| bar.shown.allows(&Command::Select(id)));
        ui.add_enabled_ui(allowed && blocked.is_none(), |ui| {
            arm_list::selector(ui, bar.arms, blocked.unwrap_or(NO_LIVE_ARM), theme, actions);
        });
    });
}

/// The live link and staleness.
fn link(ui: &mut egui::Ui, live: &ArmState, freshness: &Freshness, theme: &Theme) {
    let (text, colour) = match (live.link, freshness) {
        (LinkState::Idle, _) => ("searching…".to_string(), theme.muted),
        (LinkState::Connecting, _) => ("connecting…".to_string(), theme.warn),
        (_, Freshness::Lost { .. }) => ("LINK LOST".to_string(), theme.danger),
        (_, Freshness::Stale { signals, .. }) => {
            let names: Vec<&str> = signals.iter().map(|s| s.name()).collect();
            (format!("stale: {}", names.join(", ")), theme.warn)
        }
        _ => ("link live".to_string(), theme.ok),
    };
    slot(ui, LINK_W, |ui| {
        ui.add(egui::Label::new(RichText::new(&text).strong().color(colour)).truncate())
            .on_hover_text(format!(
                "Link to the live arm: {text}. A signal is stale when 3 periods overdue; the link \
                 is lost when the arm is silent"
            ));
    });
}

/// The live management state; unknown while the link is lost.
fn status(ui: &mut egui::Ui, live: &ArmState, freshness: &Freshness, theme: &Theme) {
    let (text, colour) = if freshness.is_lost() {
        ("state unknown".to_string(), theme.muted)
    } else {
        let colour = match live.status {
            ManagementState::Ready => theme.ok,
            ManagementState::Emergency | ManagementState::Failure => theme.danger,
            _ => theme.warn,
        };
        (status_word(live.status).to_string(), colour)
    };
    slot(ui, STATUS_W, |ui| {
        ui.add(egui::Label::new(RichText::new(&text).strong().color(colour)).truncate())
            .on_hover_text(if freshness.is_lost() {
                format!(
                    "Management state of the live arm: unknown while the link is lost (last \
                     reported {})",
                    status_word(live.status)
                )
            } else {
                format!("Management state of the live arm: {text}")
            });
    });
}

/// The live control as the arm reports it, with Request / Release, in a slot of fixed width;
/// the slot's left edge (where the loss is said under it).
fn control(
    ui: &mut egui::Ui,
    live: &ArmState,
    bar: &TopBar<'_>,
    loss: Option<&str>,
    blocked: Option<&str>,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let shown = bar.shown;
    let words = match loss {
        // The loss first: the slot cuts what does not fit (the whole text is the tooltip's
        // and a screen reader's).
        Some(loss) => format!("{loss} · {}", live.control_words()),
        None => live.control_words(),
    };
    let (colour, hover) = match live.control {
        ControlState::Held { .. } => (
            theme.ok,
            format!("We hold control of the live arm: {words}"),
        ),
        ControlState::Requested => (
            theme.warn,
            "Asked the live arm for control; waiting for its answer".to_string(),
        ),
        ControlState::Released => match live.controller {
            Some(c) if live.other_controller().is_some() => (
                theme.warn,
                format!("The live arm reports that another client holds control: {c}"),
            ),
            Some(_) => (
                theme.muted,
                "The live arm reports that nobody holds control".to_string(),
            ),
            None => (
                theme.muted,
                "We do not hold control of the live arm (it has not said who does)".to_string(),
            ),
        },
    };
    let colour = if loss.is_some() { theme.warn } else { colour };
    slot(ui, CONTROL_W, |ui| {
        slot_right(ui, CONTROL_WORDS_W, |ui| {
            ui.add(egui::Label::new(RichText::new(&words).color(colour)).truncate())
                .on_hover_text(format!("{words}\n{hover}"));
        });
        let cmd = match live.control {
            ControlState::Held { .. } => UiCommand::ReleaseControl,
            ControlState::Requested => return,
            ControlState::Released => UiCommand::RequestControl,
        };
        let hover = if cmd == UiCommand::RequestControl {
            request_hover(live, bar.authority, shown)
        } else {
            cmd.hover_text(shown)
        };
        if command_button(ui, cmd, live, shown, blocked, hover) {
            actions.push(Action::Ui(cmd));
        }
    });
}

/// The Request control tooltip: who holds control and at what authority, and what ours
/// would be.
fn request_hover(live: &ArmState, authority: u8, shown: Shown) -> String {
    let base = UiCommand::RequestControl.hover_text(shown);
    match live.other_controller() {
        Some(c) => {
            let outcome = if authority > c.authority {
                format!(
                    "higher: the arm will pass control to us and {} loses it",
                    c.id.map_or(String::new(), |id| id.to_string())
                )
            } else {
                "not higher, so the arm will refuse".to_string()
            };
            format!(
                "{base}. Control is held by {c}; ours would be authority {authority} (Settings): {outcome}."
            )
        }
        None => format!("{base}. Ours would be authority {authority} (Settings)."),
    }
}

/// What the action slot says besides its button.
struct ActionSlot<'a> {
    /// Why commands are refused (a duplicate JAUS ID).
    blocked: Option<&'a str>,
    /// Why we lost control, while the slot has no button.
    loss: Option<&'a str>,
}

/// Clear emergency… while the live arm is in emergency; Resume… when it is in STANDBY (or
/// what Resume needs, control); else nothing. A slot of fixed width.
fn action_slot(
    ui: &mut egui::Ui,
    live: &ArmState,
    shown: Shown,
    words: &ActionSlot<'_>,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let held = matches!(live.control, ControlState::Held { .. });
    let blocked = words.blocked;
    slot(ui, ACTION_W, |ui| {
        let cmd = match live.status {
            ManagementState::Emergency => Some(UiCommand::ClearEmergency),
            ManagementState::Standby if held => Some(UiCommand::Resume),
            ManagementState::Standby => {
                // Without the arm's ID (the E-STOP and the selector name it): the button and
                // "needs control" both fit the slot.
                ui.add_enabled(false, egui::Button::new(UiCommand::Resume.text()))
                    .on_disabled_hover_text(format!(
                        "Resume needs control: {} first ({})",
                        UiCommand::RequestControl.text(),
                        UiCommand::ToggleControl.keys_text(shown)
                    ));
                ui.label(RichText::new("needs control").small().color(theme.warn));
                None
            }
            _ => {
                if let Some(text) = words.loss {
                    // Why we lost control, cut to the slot, whole in the tooltip.
                    ui.add(
                        egui::Label::new(RichText::new(text).strong().color(theme.warn)).truncate(),
                    )
                    .on_hover_text(format!(
                        "{text}\nWhy we lost control of the live arm (it stays said until \
                         control is held again)"
                    ));
                }
                None
            }
        };
        if let Some(cmd) = cmd
            && command_button(ui, cmd, live, shown, blocked, cmd.hover_text(shown))
        {
            actions.push(Action::Ui(cmd));
        }
    });
}

fn view_menu(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    bar: &TopBar<'_>,
    actions: &mut Vec<Action>,
) {
    let shown = bar.shown;
    ui.menu_button("View", |ui| {
        memory_menu(ui, settings, &bar.memory);
        ui.separator();
        live_view_item(ui, bar, settings, actions);
        ui.separator();
        let dark = UiCommand::ToggleTheme;
        ui.checkbox(&mut settings.dark, dark.text())
            .on_hover_text(dark.hover_text(shown));
        ui.separator();
        ui.checkbox(&mut settings.show_gauges, "Joint gauges")
            .on_hover_text("Show the joint gauges panel");
        ui.checkbox(&mut settings.show_plots, "Plots")
            .on_hover_text("Show the end-effector force/torque plots");
        ui.checkbox(&mut settings.show_presets, "Presets")
            .on_hover_text("Show the preset pose picker");
        ui.checkbox(&mut settings.show_log, "Event log")
            .on_hover_text("Show the event log: every event of the session, and the notes");
        ui.checkbox(&mut settings.show_arms, "Arm list")
            .on_hover_text("Show the arms of the session, each with its state");
        layout_menu(ui, settings);
        ui.checkbox(&mut settings.show_axes, "Joint axes")
            .on_hover_text("Draw each joint's axis in the 3D view");
        ui.checkbox(&mut settings.show_frames, "Joint frames")
            .on_hover_text("Draw each joint's x/y/z frame in the 3D view");
    });
}

/// View → Live view server: a checkbox that starts or stops it, the address it serves on
/// (or will), and why it is off without a live session.
fn live_view_item(
    ui: &mut egui::Ui,
    bar: &TopBar<'_>,
    settings: &Settings,
    actions: &mut Vec<Action>,
) {
    let cmd = UiCommand::ToggleLiveView;
    let mut on = bar.live_view.is_some();
    let label = match bar.live_view {
        Some(at) => format!("{} (ws://{at})", cmd.text()),
        None => cmd.text().to_owned(),
    };
    let hover = match bar.live_view {
        Some(at) => format!(
            "{}\n\nServing on ws://{at}; click to stop (viewers are disconnected).",
            cmd.hover_text(bar.shown)
        ),
        None if bar.can_record => format!(
            "{}\n\nStarts on ws://{} (loopback: from another machine, ssh -L 8765:127.0.0.1:8765 \
             to this one).",
            cmd.hover_text(bar.shown),
            settings.live_view_listen
        ),
        None => "Serves a live or demo session; a replayed file is served with \
                 `jaus-ocu serve FILE`."
            .to_owned(),
    };
    let enabled = bar.can_record || on;
    if ui
        .add_enabled(enabled, egui::Checkbox::new(&mut on, label))
        .on_hover_text(hover.clone())
        .on_disabled_hover_text(hover)
        .clicked()
    {
        actions.push(Action::Ui(cmd));
    }
}

/// View → Layout: the named tile layouts, and the reset (the default layout, every tile
/// shown). The tiles' own splits, tabs and sizes are the operator's (saved with the settings).
fn layout_menu(ui: &mut egui::Ui, settings: &mut Settings) {
    ui.menu_button("Layout", |ui| {
        for named in NamedLayout::ALL {
            if ui
                .button(named.name())
                .on_hover_text("Arrange the tiles for this size of window")
                .clicked()
            {
                settings.tiles = TileLayout(named.tree());
                ui.close();
            }
        }
        ui.separator();
        if ui
            .button("Reset layout")
            .on_hover_text("The default layout, with every tile shown")
            .clicked()
        {
            settings.reset_layout();
            ui.close();
        }
    });
}

/// The session's memory budget: automatic or a size of the operator's (saved with the
/// settings); `--memory-limit` overrides both for its run, which the menu says.
fn memory_menu(ui: &mut egui::Ui, settings: &mut Settings, memory: &MemoryMenu) {
    ui.menu_button("Memory budget", |ui| {
        ui.label(format!(
            "In use: {} of {}",
            format_bytes(memory.used),
            format_bytes(memory.in_force.bytes)
        ))
        .on_hover_text(format!("The budget: {}", memory.in_force));
        let overridden = memory.in_force.source == BudgetSource::CommandLine;
        ui.add_enabled_ui(!overridden, |ui| {
            let auto = format!("Automatic ({})", format_bytes(memory.automatic));
            if ui
                .radio(settings.memory_limit.is_none(), auto)
                .on_hover_text(
                    "A quarter of this machine's memory, at most 4 GiB: twelve hours at 1 kHz \
                     fit as an envelope in a tenth of that",
                )
                .clicked()
            {
                settings.memory_limit = None;
            }
            let custom = settings.memory_limit.is_some();
            if ui.radio(custom, "Set:").clicked() && !custom {
                settings.memory_limit = Some(memory.automatic);
            }
            if let Some(bytes) = &mut settings.memory_limit {
                let mut mib = *bytes >> 20;
                let least = MIN_LIMIT >> 20;
                ui.add(
                    egui::DragValue::new(&mut mib)
                        .range(least..=1 << 20)
                        .speed(16)
                        .suffix(" MB"),
                )
                .on_hover_text(
                    "Beyond it the oldest samples are kept as their min/max envelope (the \
                     status bar says so)",
                );
                *bytes = mib << 20;
            }
        });
        if overridden {
            ui.label(
                RichText::new("Set by --memory-limit for this run")
                    .small()
                    .italics(),
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{ComponentId, Controller};

    #[test]
    fn request_control_says_who_holds_it_and_what_ours_would_be() {
        let other = ComponentId::new(200, 7, 3);
        let mut live = ArmState {
            ocu_id: Some(ComponentId::new(200, 1, 1)),
            controller: Some(Controller {
                id: Some(other),
                authority: 200,
            }),
            ..ArmState::default()
        };
        let hover = request_hover(&live, 100, Shown::Live);
        assert!(
            hover.ends_with(
                "Control is held by 200.7.3 (authority 200); ours would be authority 100 \
                 (Settings): not higher, so the arm will refuse."
            ),
            "{hover}"
        );
        let hover = request_hover(&live, 250, Shown::Live);
        assert!(
            hover.contains("higher: the arm will pass control to us and 200.7.3 loses it"),
            "{hover}"
        );
        live.controller = Some(Controller {
            id: None,
            authority: 0,
        });
        assert!(
            request_hover(&live, 100, Shown::Live)
                .ends_with("Ours would be authority 100 (Settings).")
        );
    }
}
