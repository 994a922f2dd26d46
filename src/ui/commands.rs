//! The table of UI commands (after Rerun's `re_ui` `UICommand`): each command's label,
//! tooltip, keyboard shortcuts and the modes it is available in. The key handling, the help
//! overlay and the menus and buttons are generated from it, so changing a key is an edit
//! here and nowhere else. A test walks the table: in every mode a key press means at most
//! one command.

use eframe::egui::{self, InputState, Key, Modifiers};

use super::time_control::Shown;
use crate::model::command::Command;

/// Everything the operator can ask of the UI by name (menus, buttons, keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiCommand {
    /// Open a recording or capture for replay.
    Open,
    /// Start or stop recording the live session.
    ToggleRecording,
    /// Export the series over the plots' range as CSV.
    ExportCsv,
    /// Export the 3D view as PNG.
    ExportPng,
    /// Export the arm's specification as URDF.
    ExportUrdf,
    /// Close the replay and show the live source again.
    BackToLive,
    /// Show or hide the keyboard shortcuts.
    ToggleHelp,
    /// Cancel a preview or confirmation, close the help.
    Cancel,
    /// Emergency stop of the focused live arm.
    EmergencyStop,
    /// Emergency stop of every followed arm of the focused arm's subsystem (the vehicle).
    EmergencyStopAll,
    /// Clear the emergency stop (asks for confirmation): the arm goes to STANDBY and stays
    /// stopped (reset is not restart: IEC 60204-1, ISO 13850).
    ClearEmergency,
    /// Request control, or release it when held.
    ToggleControl,
    /// Request control.
    RequestControl,
    /// Release control.
    ReleaseControl,
    /// STANDBY to READY: the arm accepts motion commands again (asks for confirmation; its
    /// own deliberate action, never a side effect of clearing an emergency).
    Resume,
    /// Play or pause the timeline.
    TogglePlay,
    /// Follow now again (replay: the plots follow the cursor).
    FollowLive,
    /// Degrees or radians.
    ToggleUnits,
    /// Dark or light theme.
    ToggleTheme,
    /// To the previous timeline mark.
    PrevMark,
    /// To the next timeline mark.
    NextMark,
    /// Back by one pixel column of the plots (to the report there).
    StepBack,
    /// Forward by one pixel column of the plots (to the report there).
    StepForward,
    /// To the previous report.
    StepReportBack,
    /// To the next report.
    StepReportForward,
    /// To the start of the session.
    Home,
    /// To the end of the session (live: follow now).
    End,
    /// Follow the focused arm in the 3D view: its whole reach kept in view.
    FitView,
    /// Reset the 3D camera and follow the whole vehicle (the reach of every arm of the
    /// focused arm's subsystem).
    ResetCamera,
    /// Add a note (or an empty bookmark) at the drawn time.
    AddNote,
    /// Save a replay's notes to the sidecar file beside it.
    SaveNotes,
    /// Jog the selected joint (or tool-point axis) in its positive direction while the key
    /// is held (the held key is the enable): read as held, not as a press.
    JogPlus,
    /// Jog the selected joint (or tool-point axis) in its negative direction while held.
    JogMinus,
    /// Select the previous joint (or tool-point axis) to jog.
    JogPrevAxis,
    /// Select the next joint (or tool-point axis) to jog.
    JogNextAxis,
    /// Switch between joint jog and tool-point jog.
    ToggleJogMode,
    /// Start or stop the live view server (the live session served read-only to Foxglove
    /// and Lichtblick).
    ToggleLiveView,
    /// Undo the last change to the tiles (a tab dropped, a tile closed, a layout chosen).
    UndoLayout,
    /// Close the window (a recording running is finished and its file closed first).
    Quit,
}

/// How a shortcut is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// egui's `consume_shortcut`: the modifiers must be held (extra Shift or Alt allowed) and
    /// the key press is taken, so no later shortcut or widget sees it.
    Consume,
    /// Fires whenever the key is pressed with at least the modifiers held, and leaves the
    /// press for widgets too (the operator's single keys: they work whatever is held down).
    Press,
}

/// A key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    /// Modifiers that must be held.
    pub modifiers: Modifiers,
    /// The key.
    pub key: Key,
    /// How it is matched.
    pub trigger: Trigger,
}

const fn ctrl(key: Key) -> Shortcut {
    Shortcut {
        modifiers: Modifiers::COMMAND,
        key,
        trigger: Trigger::Consume,
    }
}

const fn key(key: Key) -> Shortcut {
    Shortcut {
        modifiers: Modifiers::NONE,
        key,
        trigger: Trigger::Consume,
    }
}

const fn shift(key: Key) -> Shortcut {
    Shortcut {
        modifiers: Modifiers::SHIFT,
        key,
        trigger: Trigger::Consume,
    }
}

const fn alt(key: Key) -> Shortcut {
    Shortcut {
        modifiers: Modifiers::ALT,
        key,
        trigger: Trigger::Consume,
    }
}

const fn press(key: Key) -> Shortcut {
    Shortcut {
        modifiers: Modifiers::NONE,
        key,
        trigger: Trigger::Press,
    }
}

/// A `'static` slice of shortcuts made by the `const fn`s above.
macro_rules! keys {
    ($($s:expr),* $(,)?) => {{
        const KEYS: &[Shortcut] = &[$($s),*];
        KEYS
    }};
}

impl Shortcut {
    /// Whether this frame's input holds the shortcut (consuming it for [`Trigger::Consume`]).
    pub fn fires(&self, input: &mut InputState) -> bool {
        match self.trigger {
            Trigger::Consume => input.consume_key(self.modifiers, self.key),
            Trigger::Press => input.key_pressed(self.key) && held(input.modifiers, self.modifiers),
        }
    }

    /// How the help and tooltips write it: `Ctrl+O`, `Shift+←`, `Space`.
    pub fn text(&self) -> String {
        let m = self.modifiers;
        let mut text = String::new();
        if m.command || m.ctrl || m.mac_cmd {
            text.push_str("Ctrl+");
        }
        if m.alt {
            text.push_str("Alt+");
        }
        if m.shift {
            text.push_str("Shift+");
        }
        text.push_str(key_name(self.key));
        text
    }
}

/// How the help, tooltips and menus write a key: what is printed on it (`[`, `-`, `=`,
/// `←`), else its name (`Space`, `Esc`, `F1`).
pub fn key_name(key: Key) -> &'static str {
    match key {
        Key::ArrowLeft => "←",
        Key::ArrowRight => "→",
        Key::ArrowUp => "↑",
        Key::ArrowDown => "↓",
        Key::Escape => "Esc",
        // The key's own hyphen, not egui's typographic minus sign.
        Key::Minus => "-",
        other => other.symbol_or_name(),
    }
}

/// Whether every modifier of `pattern` is held in `now`.
fn held(now: Modifiers, pattern: Modifiers) -> bool {
    (!pattern.shift || now.shift)
        && (!pattern.alt || now.alt)
        && (!(pattern.ctrl || pattern.command) || now.ctrl || now.command)
}

impl UiCommand {
    /// Every command, in the order keys are matched: Ctrl combinations first (so that
    /// Ctrl+R does not also reset the camera with R), Shift+ and Alt+arrows before plain
    /// arrows. Shift+E (stop all) is matched before E (stop the focused arm), as Shift+R
    /// before R.
    pub const ALL: [UiCommand; 39] = [
        UiCommand::Open,
        UiCommand::ToggleRecording,
        UiCommand::ExportCsv,
        UiCommand::ExportPng,
        UiCommand::ExportUrdf,
        UiCommand::BackToLive,
        UiCommand::ToggleHelp,
        UiCommand::Cancel,
        UiCommand::EmergencyStopAll,
        UiCommand::EmergencyStop,
        UiCommand::ClearEmergency,
        UiCommand::ToggleControl,
        UiCommand::RequestControl,
        UiCommand::ReleaseControl,
        UiCommand::Resume,
        UiCommand::TogglePlay,
        UiCommand::FollowLive,
        UiCommand::ToggleUnits,
        UiCommand::ToggleTheme,
        UiCommand::PrevMark,
        UiCommand::NextMark,
        UiCommand::StepReportBack,
        UiCommand::StepReportForward,
        UiCommand::StepBack,
        UiCommand::StepForward,
        UiCommand::Home,
        UiCommand::End,
        UiCommand::FitView,
        UiCommand::ResetCamera,
        UiCommand::AddNote,
        UiCommand::SaveNotes,
        UiCommand::JogPrevAxis,
        UiCommand::JogNextAxis,
        UiCommand::JogMinus,
        UiCommand::JogPlus,
        UiCommand::ToggleJogMode,
        UiCommand::ToggleLiveView,
        UiCommand::UndoLayout,
        UiCommand::Quit,
    ];

    /// The label of its button or menu entry, and what it does.
    pub fn text_and_tooltip(self) -> (&'static str, &'static str) {
        match self {
            UiCommand::Open => (
                "Open…",
                "Replay a .mcap recording or a .pcap / .pcapng capture; you can also drop a file on the window",
            ),
            UiCommand::ToggleLiveView => (
                "Live view server",
                "Serve the live session to Foxglove or Lichtblick on this machine or through an \
                 SSH tunnel (Open connection > Foxglove WebSocket): read-only, viewers cannot \
                 command the arm",
            ),
            UiCommand::ToggleRecording => (
                "Record",
                "Start / stop recording every datagram sent and received to an MCAP file",
            ),
            UiCommand::ExportCsv => (
                "Export CSV…",
                "What the plots show (their signals over their time range) as CSV",
            ),
            UiCommand::ExportPng => (
                "Export 3D view as PNG…",
                "The 3D view as it is on screen now",
            ),
            UiCommand::ExportUrdf => (
                "Export URDF…",
                "The arm as its JAUS specification describes it, as URDF for RViz, MoveIt, \
                 Foxglove and other URDF tools: joints with axes and limits, the mount, the \
                 bounding cylinders as collision geometry",
            ),
            UiCommand::BackToLive => (
                "Back to live",
                "Close the replay and show the live session again",
            ),
            UiCommand::ToggleHelp => ("?", "Keyboard shortcuts (this help)"),
            UiCommand::Cancel => (
                "Cancel",
                "Cancel a preview or confirmation, close this help",
            ),
            UiCommand::EmergencyStop => (
                "E-STOP",
                "Emergency stop of the focused arm (the one its button names): stops its \
                 motion at once. Clearing it asks for confirmation.",
            ),
            UiCommand::EmergencyStopAll => (
                "STOP ALL",
                "Emergency stop of every arm of the focused arm's vehicle (its subsystem), at \
                 once, without asking. Each arm's emergency is cleared on its own.",
            ),
            UiCommand::ClearEmergency => (
                "Clear emergency…",
                "Clear the emergency stop (asks for confirmation): the arm goes to STANDBY and \
                 stays stopped until Resume",
            ),
            UiCommand::ToggleControl => ("Request / release control", "Request / release control"),
            UiCommand::RequestControl => (
                "Request control",
                "Ask for control of the manipulator; needed to command presets",
            ),
            UiCommand::ReleaseControl => ("Release", "Give control back"),
            UiCommand::Resume => (
                "Resume…",
                "STANDBY to READY: the arm accepts motion commands again (asks for confirmation; \
                 needs control)",
            ),
            UiCommand::TogglePlay => (
                "Play",
                "Play / pause the timeline (live: pausing freezes the view; the arm is not affected)",
            ),
            UiCommand::FollowLive => (
                "Back to live",
                "Follow the newest live data again (over a live source: close the replay)",
            ),
            UiCommand::ToggleUnits => ("deg", "Revolute joints in degrees (else radians)"),
            UiCommand::ToggleTheme => ("Dark theme", "Dark theme (else light)"),
            UiCommand::PrevMark => ("◀ mark", "Previous mark"),
            UiCommand::NextMark => ("mark ▶", "Next mark"),
            UiCommand::StepBack => (
                "◀ step",
                "Step back by one pixel column of the plots, to the report there",
            ),
            UiCommand::StepForward => (
                "step ▶",
                "Step forward by one pixel column of the plots, to the report there",
            ),
            UiCommand::StepReportBack => ("◀ report", "Previous report"),
            UiCommand::StepReportForward => ("report ▶", "Next report"),
            UiCommand::Home => ("Start", "Start of the session"),
            UiCommand::End => ("End", "End of the session (live: back to live)"),
            UiCommand::FitView => (
                "fit arm",
                "3D: follow the focused arm, its whole reach kept in view whatever it does \
                 (orbit, pan or zoom to look freely; this or a double-click follows again)",
            ),
            UiCommand::ResetCamera => (
                "whole vehicle",
                "3D: reset the camera and follow the whole vehicle (the reach of every arm of \
                 the focused arm's subsystem)",
            ),
            UiCommand::AddNote => (
                "Add note…",
                "Add a note at the drawn time: typed text, or an empty bookmark. It shows on the \
                 timeline and in the event log, and goes into the recording while one runs",
            ),
            UiCommand::SaveNotes => (
                "Save notes",
                "Save this replay's notes beside its file (<file>.notes.json, read when the file \
                 is opened again); the recording itself is never changed",
            ),
            UiCommand::JogPlus => ("Jog +", "Jog the selected joint + while held"),
            UiCommand::JogMinus => ("Jog −", "Jog the selected joint − while held"),
            UiCommand::JogPrevAxis => ("◀ axis", "Select the previous joint to jog"),
            UiCommand::JogNextAxis => ("axis ▶", "Select the next joint to jog"),
            UiCommand::ToggleJogMode => (
                "Joint / tool jog",
                "Switch between joint jog and tool-point jog",
            ),
            UiCommand::UndoLayout | UiCommand::Quit => self.window_text_and_tooltip(),
        }
    }

    /// The label and tooltip of the window's own commands (undo a layout change, quit).
    fn window_text_and_tooltip(self) -> (&'static str, &'static str) {
        match self {
            UiCommand::UndoLayout => (
                "Undo layout change",
                "Undo the last change to the tiles: a tab dropped, a tile closed, a layout \
                 chosen (View > Layout > Reset layout is the default layout)",
            ),
            UiCommand::Quit => (
                "Quit",
                "Close the window (a recording running is finished and its file closed)",
            ),
            _ => ("", ""),
        }
    }

    /// The label.
    pub fn text(self) -> &'static str {
        self.text_and_tooltip().0
    }

    /// What it does, as it reads while `shown` (the emergency stop over a replay reaches the
    /// live arm underneath, not the one drawn).
    pub fn tooltip(self, shown: Shown) -> &'static str {
        match (self, shown) {
            (UiCommand::EmergencyStop, Shown::ReplayOverLive { .. }) => {
                "Emergency stop of the LIVE arm running underneath this replay."
            }
            (UiCommand::EmergencyStop, Shown::LiveScrubbed { .. }) => {
                "Emergency stop of the LIVE arm now (not the past drawn)."
            }
            (UiCommand::EmergencyStopAll, Shown::ReplayOverLive { .. }) => {
                "Emergency stop of every LIVE arm of the vehicle running underneath this \
                 replay, at once."
            }
            (UiCommand::EmergencyStopAll, Shown::LiveScrubbed { .. }) => {
                "Emergency stop of every LIVE arm of the vehicle now (not the past drawn), at \
                 once."
            }
            _ => self.text_and_tooltip().1,
        }
    }

    /// The keys that run it while `shown` (none when it has no key there). Since issue 12 no
    /// key depends on the mode (a key means one thing); whether the command is available
    /// there is [`UiCommand::available`].
    pub fn shortcuts(self, _shown: Shown) -> &'static [Shortcut] {
        match self {
            UiCommand::Open => keys![ctrl(Key::O)],
            UiCommand::ToggleRecording => keys![ctrl(Key::R)],
            // Every command has a key (issue 46). Ctrl only with letters no single key uses
            // (Ctrl+E would hold back E, the emergency stop, while Ctrl is down); C, V and X
            // with Ctrl are the clipboard's.
            UiCommand::ExportCsv => keys![ctrl(Key::D)],
            UiCommand::ExportPng => keys![ctrl(Key::P)],
            UiCommand::ExportUrdf => keys![ctrl(Key::M)],
            UiCommand::SaveNotes => keys![ctrl(Key::S)],
            UiCommand::ToggleLiveView => keys![ctrl(Key::B)],
            UiCommand::ToggleTheme => keys![ctrl(Key::I)],
            // Shift: clearing is deliberate, like Resume's Shift+R (and asks first); taken
            // before C, the control toggle (see `ALL`).
            UiCommand::ClearEmergency => keys![shift(Key::C)],
            UiCommand::ToggleHelp => keys![
                press(Key::F1),
                // `?` with or without Shift: it needs Shift on some layouts, not on others,
                // and tools that type it (xdotool) send it without.
                press(Key::Questionmark),
                press(Key::H),
            ],
            UiCommand::Cancel => keys![press(Key::Escape)],
            // One meaning per key whatever is shown: a timeline is always on screen, so Space
            // is its Play button everywhere; the emergency stop is E wherever a live arm runs
            // (never Space: a key meant for the timeline must not stop an arm, nor a key meant
            // to stop the arm only play a replay).
            UiCommand::EmergencyStop => keys![press(Key::E)],
            // Shift+E: every arm of the vehicle; taken before E (see `ALL`).
            UiCommand::EmergencyStopAll => keys![shift(Key::E)],
            UiCommand::TogglePlay => keys![press(Key::Space)],
            UiCommand::ToggleControl => keys![press(Key::C)],
            // Shift: motion is enabled deliberately, never by a stray key (and plain R is the
            // camera's reset; Shift+R is taken before it, as Ctrl+R is).
            UiCommand::Resume => keys![shift(Key::R)],
            UiCommand::FollowLive => keys![press(Key::L)],
            UiCommand::ToggleUnits => keys![press(Key::U)],
            UiCommand::PrevMark => keys![shift(Key::ArrowLeft), key(Key::Comma)],
            UiCommand::NextMark => keys![shift(Key::ArrowRight), key(Key::Period)],
            UiCommand::StepBack => keys![key(Key::ArrowLeft)],
            UiCommand::StepForward => keys![key(Key::ArrowRight)],
            // Alt: the finest step, one report; taken before the plain arrows (see `ALL`).
            UiCommand::StepReportBack => keys![alt(Key::ArrowLeft)],
            UiCommand::StepReportForward => keys![alt(Key::ArrowRight)],
            UiCommand::Home => keys![key(Key::Home)],
            UiCommand::End => keys![key(Key::End)],
            UiCommand::FitView => keys![press(Key::F)],
            UiCommand::ResetCamera => keys![press(Key::R)],
            UiCommand::AddNote => keys![press(Key::N)],
            UiCommand::JogPlus => keys![press(Key::Equals)],
            UiCommand::JogMinus => keys![press(Key::Minus)],
            UiCommand::JogPrevAxis => keys![press(Key::OpenBracket)],
            UiCommand::JogNextAxis => keys![press(Key::CloseBracket)],
            UiCommand::ToggleJogMode => keys![press(Key::T)],
            UiCommand::UndoLayout => keys![ctrl(Key::Z)],
            UiCommand::Quit => keys![ctrl(Key::Q)],
            _ => keys![],
        }
    }

    /// The command to the live arm it sends in the end (after any confirmation), when it
    /// sends one: its availability is [`Shown::allows`] of that command.
    pub fn arm_command(self) -> Option<Command> {
        match self {
            UiCommand::EmergencyStop => Some(Command::SetEmergency),
            UiCommand::EmergencyStopAll => Some(Command::SetEmergencyAll),
            UiCommand::ClearEmergency => Some(Command::ClearEmergency),
            UiCommand::ToggleControl | UiCommand::RequestControl => {
                Some(Command::RequestControl { authority: 0 })
            }
            UiCommand::ReleaseControl => Some(Command::ReleaseControl),
            UiCommand::Resume => Some(Command::Resume),
            _ => None,
        }
    }

    /// Whether it means anything while `shown`: a command to the arm when
    /// [`Shown::allows`] it (the one rule: wherever a live arm runs underneath), "Back to
    /// live" only over a running live source.
    pub fn available(self, shown: Shown) -> bool {
        match (self, self.arm_command()) {
            (_, Some(cmd)) => shown.allows(&cmd),
            (UiCommand::BackToLive, None) => matches!(shown, Shown::ReplayOverLive { .. }),
            (UiCommand::SaveNotes, None) => shown.is_replay(),
            // Jogging acts on the live arm now, never on the past or a replay.
            (
                UiCommand::JogPlus
                | UiCommand::JogMinus
                | UiCommand::JogPrevAxis
                | UiCommand::JogNextAxis
                | UiCommand::ToggleJogMode,
                None,
            ) => shown == Shown::Live,
            _ => true,
        }
    }

    /// Whether its keys work while a text field has the keyboard.
    pub fn while_typing(self) -> bool {
        matches!(self, UiCommand::Open | UiCommand::ToggleRecording)
    }

    /// The command whose keys also reach this one (request and release are both the
    /// control toggle's C; L follows live, which over a live source closes the replay).
    fn keyed_by(self) -> UiCommand {
        match self {
            UiCommand::RequestControl | UiCommand::ReleaseControl => UiCommand::ToggleControl,
            UiCommand::BackToLive => UiCommand::FollowLive,
            other => other,
        }
    }

    /// The keys of it while `shown`, as text: `Space or E`.
    pub fn keys_text(self, shown: Shown) -> String {
        let keys: Vec<String> = self
            .keyed_by()
            .shortcuts(shown)
            .iter()
            .map(Shortcut::text)
            .collect();
        keys.join(" or ")
    }

    /// The tooltip with its keys: `Previous report (←)`.
    pub fn hover_text(self, shown: Shown) -> String {
        let keys = self.keys_text(shown);
        if keys.is_empty() {
            self.tooltip(shown).to_string()
        } else {
            format!("{} ({keys})", self.tooltip(shown).trim_end_matches('.'))
        }
    }

    /// Commands the help lists as one row (previous / next), with the row's text.
    fn help_group(self) -> Option<&'static str> {
        match self {
            UiCommand::PrevMark | UiCommand::NextMark => Some("Previous / next timeline mark"),
            UiCommand::StepBack | UiCommand::StepForward => {
                Some("Step back / forward by one pixel column of the plots")
            }
            UiCommand::StepReportBack | UiCommand::StepReportForward => {
                Some("Step to the previous / next report")
            }
            UiCommand::Home | UiCommand::End => {
                Some("Start of the session / its end (live: back to live)")
            }
            UiCommand::JogPrevAxis | UiCommand::JogNextAxis => {
                Some("Select the previous / next joint (or tool-point axis) to jog")
            }
            UiCommand::JogMinus | UiCommand::JogPlus => Some(
                "Jog the selected joint − / + while held (the held key is the enable; \
                 control, READY and the live arm needed)",
            ),
            _ => None,
        }
    }
}

/// The commands whose keys were pressed this frame, in table order. While a text field has
/// the keyboard (`typing`), only the commands that work while typing are looked at.
pub fn pressed(input: &mut InputState, shown: Shown, typing: bool) -> Vec<UiCommand> {
    let mut fired = Vec::new();
    for cmd in UiCommand::ALL {
        if typing && !cmd.while_typing() {
            continue;
        }
        // Every shortcut is tried, so a consumed key is taken even if another one fired; the
        // keys of a command not available here are taken too, so that they do nothing rather
        // than reach another command (Shift+R in a replay is not the camera's R).
        let hit = cmd
            .shortcuts(shown)
            .iter()
            .fold(false, |hit, s| s.fires(input) | hit);
        if hit && cmd.available(shown) {
            fired.push(cmd);
        }
    }
    fired
}

/// Why `cmd` may not leave while `shown` ([`Shown::allows`]), in words for a notice or a
/// disabled button; `None` when it may.
pub fn refusal(shown: Shown, cmd: &Command) -> Option<String> {
    if shown.allows(cmd) {
        None
    } else if !shown.has_live_arm() {
        Some("No live arm: this window only replays a file".to_string())
    } else {
        Some(format!(
            "{} ({}) to command a preset: the preset picker shows the past",
            UiCommand::FollowLive.text(),
            UiCommand::FollowLive.keys_text(shown)
        ))
    }
}

/// [`pressed`] on this frame's input.
pub fn from_keys(ctx: &egui::Context, shown: Shown) -> Vec<UiCommand> {
    let typing = ctx.egui_wants_keyboard_input();
    ctx.input_mut(|i| pressed(i, shown, typing))
}

/// One row of the help: keys and what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpRow {
    /// `← / →`, `Ctrl+O`.
    pub keys: String,
    /// What they do.
    pub what: String,
}

/// The help while `shown`: every available command that has keys there, pairs (previous /
/// next) on one row.
pub fn help_rows(shown: Shown) -> Vec<HelpRow> {
    let mut groups: Vec<Vec<UiCommand>> = Vec::new();
    for cmd in UiCommand::ALL {
        if !cmd.available(shown) || cmd.shortcuts(shown).is_empty() {
            continue;
        }
        match groups.last_mut() {
            Some(last)
                if cmd.help_group().is_some() && last[0].help_group() == cmd.help_group() =>
            {
                last.push(cmd);
            }
            _ => groups.push(vec![cmd]),
        }
    }
    groups
        .into_iter()
        .map(|members| {
            let alternatives = members
                .iter()
                .map(|c| c.shortcuts(shown).len())
                .max()
                .unwrap_or(0);
            let keys: Vec<String> = (0..alternatives)
                .map(|k| {
                    let pair: Vec<String> = members
                        .iter()
                        .filter_map(|c| c.shortcuts(shown).get(k).map(Shortcut::text))
                        .collect();
                    pair.join(" / ")
                })
                .collect();
            let what = members[0]
                .help_group()
                .unwrap_or_else(|| members[0].tooltip(shown));
            HelpRow {
                keys: keys.join(" or "),
                what: what.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands one key press fires while `shown`.
    fn fired_by(s: Shortcut, shown: Shown) -> Vec<UiCommand> {
        let ctx = egui::Context::default();
        let input = egui::RawInput {
            events: vec![
                egui::Event::ModifiersChanged(s.modifiers),
                egui::Event::Key {
                    key: s.key,
                    physical_key: None,
                    pressed: true,
                    repeat: false,
                    modifiers: s.modifiers,
                },
            ],
            ..Default::default()
        };
        let mut fired = Vec::new();
        let mut output = ctx.run_ui(input, |ui| {
            fired = ui.ctx().input_mut(|i| pressed(i, shown, false));
        });
        // Nothing is painted here.
        output.textures_delta.clear();
        fired
    }

    #[test]
    fn in_every_mode_a_key_means_one_command_at_most() {
        for shown in Shown::ALL {
            let mut seen: Vec<(Shortcut, UiCommand)> = Vec::new();
            for cmd in UiCommand::ALL.into_iter().filter(|c| c.available(shown)) {
                for s in cmd.shortcuts(shown) {
                    let same = seen
                        .iter()
                        .find(|(o, _)| o.key == s.key && o.modifiers == s.modifiers);
                    assert!(
                        same.is_none(),
                        "{}: {} is both {cmd:?} and {:?}",
                        shown.name(),
                        s.text(),
                        same.map(|x| x.1)
                    );
                    seen.push((*s, cmd));
                    // And pressing it (as the dispatcher matches) runs exactly this command.
                    assert_eq!(fired_by(*s, shown), [cmd], "{}: {}", shown.name(), s.text());
                }
            }
        }
    }

    /// (The name is from before issue 12; Space now plays everywhere and never stops an arm.)
    #[test]
    fn space_stops_the_live_arm_and_plays_a_replay_and_e_reaches_the_live_arm_only() {
        let space = press(Key::Space);
        let e = press(Key::E);
        // Space is the timeline's Play in every mode: it never sends an emergency stop.
        for shown in Shown::ALL {
            assert_eq!(
                fired_by(space, shown),
                [UiCommand::TogglePlay],
                "{}",
                shown.name()
            );
        }
        // E stops the live arm wherever one runs, and is nothing in a pure replay.
        for shown in [
            Shown::Live,
            Shown::LiveScrubbed { t: 1.0 },
            Shown::ReplayOverLive { t: 1.0 },
        ] {
            assert_eq!(
                fired_by(e, shown),
                [UiCommand::EmergencyStop],
                "{}",
                shown.name()
            );
        }
        assert!(fired_by(e, Shown::Replay { t: 1.0 }).is_empty());
        assert!(fired_by(press(Key::C), Shown::Replay { t: 1.0 }).is_empty());
        // Ctrl+R records and does not also reset the camera.
        assert_eq!(
            fired_by(ctrl(Key::R), Shown::Live),
            [UiCommand::ToggleRecording]
        );
    }

    #[test]
    fn shift_e_stops_every_arm_of_the_vehicle_and_e_alone_the_focused_arm() {
        for shown in [
            Shown::Live,
            Shown::LiveScrubbed { t: 1.0 },
            Shown::ReplayOverLive { t: 1.0 },
        ] {
            assert_eq!(
                fired_by(shift(Key::E), shown),
                [UiCommand::EmergencyStopAll],
                "{}",
                shown.name()
            );
            assert_eq!(fired_by(press(Key::E), shown), [UiCommand::EmergencyStop]);
        }
        assert!(fired_by(shift(Key::E), Shown::Replay { t: 1.0 }).is_empty());
        assert_eq!(
            UiCommand::EmergencyStopAll.arm_command(),
            Some(Command::SetEmergencyAll)
        );
        assert!(
            help_rows(Shown::Live)
                .iter()
                .any(|r| r.keys == "Shift+E" && r.what.contains("every arm"))
        );
    }

    #[test]
    fn shift_r_resumes_wherever_a_live_arm_runs_and_r_alone_resets_the_camera() {
        for shown in [
            Shown::Live,
            Shown::LiveScrubbed { t: 1.0 },
            Shown::ReplayOverLive { t: 1.0 },
        ] {
            assert_eq!(
                fired_by(shift(Key::R), shown),
                [UiCommand::Resume],
                "{}",
                shown.name()
            );
            assert_eq!(fired_by(press(Key::R), shown), [UiCommand::ResetCamera]);
        }
        // With no live arm Shift+R does nothing (not the camera's R either).
        assert!(fired_by(shift(Key::R), Shown::Replay { t: 1.0 }).is_empty());
        assert_eq!(
            UiCommand::Resume.hover_text(Shown::Live),
            "STANDBY to READY: the arm accepts motion commands again (asks for confirmation; \
             needs control) (Shift+R)"
        );
    }

    #[test]
    fn every_live_arm_command_is_available_alike_live_scrubbed_and_over_a_replay() {
        let live: Vec<UiCommand> = UiCommand::ALL
            .into_iter()
            .filter(|c| c.arm_command().is_some())
            .collect();
        assert_eq!(live.len(), 7, "{live:?}");
        for cmd in live {
            for shown in [
                Shown::Live,
                Shown::LiveScrubbed { t: 1.0 },
                Shown::ReplayOverLive { t: 1.0 },
            ] {
                assert!(cmd.available(shown), "{cmd:?} in {}", shown.name());
            }
            assert!(!cmd.available(Shown::Replay { t: 1.0 }), "{cmd:?}");
        }
        let go = Command::GoToPreset { pose_id: 1 };
        assert_eq!(refusal(Shown::Live, &go), None);
        assert_eq!(
            refusal(Shown::LiveScrubbed { t: 1.0 }, &go).as_deref(),
            Some("Back to live (L) to command a preset: the preset picker shows the past")
        );
    }

    #[test]
    fn no_key_changes_meaning_with_the_mode() {
        // Across every mode, a key (with its modifiers) belongs to one command at most.
        let mut owner: Vec<(Key, Modifiers, UiCommand)> = Vec::new();
        for shown in Shown::ALL {
            for cmd in UiCommand::ALL.into_iter().filter(|c| c.available(shown)) {
                for s in cmd.shortcuts(shown) {
                    match owner.iter().find(|o| o.0 == s.key && o.1 == s.modifiers) {
                        Some(o) => assert_eq!(o.2, cmd, "{} in {}", s.text(), shown.name()),
                        None => owner.push((s.key, s.modifiers, cmd)),
                    }
                }
            }
        }
    }

    #[test]
    fn the_help_pairs_previous_and_next_and_lists_only_what_the_mode_offers() {
        let rows = help_rows(Shown::Replay { t: 0.0 });
        let keys: Vec<&str> = rows.iter().map(|r| r.keys.as_str()).collect();
        for k in [
            "Ctrl+O",
            "Ctrl+R",
            "← / →",
            "Alt+← / Alt+→",
            "Home / End",
            "Space",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(!keys.contains(&"C"), "no control in a replay: {keys:?}");
        let live = help_rows(Shown::Live);
        assert!(
            live.iter()
                .any(|r| r.keys == "E" && r.what.contains("Emergency"))
        );
        assert!(
            live.iter()
                .any(|r| r.keys == "Space" && r.what.contains("Play"))
        );
    }

    #[test]
    fn keys_are_written_as_printed_on_them_in_the_help_and_tooltips() {
        for (k, name) in [
            (Key::OpenBracket, "["),
            (Key::CloseBracket, "]"),
            (Key::Minus, "-"),
            (Key::Equals, "="),
            (Key::Comma, ","),
            (Key::Period, "."),
            (Key::ArrowLeft, "←"),
            (Key::Escape, "Esc"),
            (Key::Space, "Space"),
            (Key::F1, "F1"),
            (Key::Q, "Q"),
        ] {
            assert_eq!(key_name(k), name, "{k:?}");
        }
        let live = help_rows(Shown::Live);
        let keys: Vec<&str> = live.iter().map(|r| r.keys.as_str()).collect();
        assert!(keys.contains(&"[ / ]"), "{keys:?}");
        assert!(keys.contains(&"- / ="), "{keys:?}");
        for row in &live {
            for word in ["Bracket", "Minus", "Equals", "Period", "Comma"] {
                assert!(!row.keys.contains(word), "{word} in {:?}", row.keys);
            }
        }
        assert_eq!(
            UiCommand::JogPrevAxis.hover_text(Shown::Live),
            "Select the previous joint to jog ([)"
        );
    }

    #[test]
    fn ctrl_q_quits_and_ctrl_z_undoes_a_layout_change_in_every_mode() {
        for shown in Shown::ALL {
            assert_eq!(fired_by(ctrl(Key::Q), shown), [UiCommand::Quit]);
            assert_eq!(fired_by(ctrl(Key::Z), shown), [UiCommand::UndoLayout]);
        }
        assert!(
            help_rows(Shown::Replay { t: 0.0 })
                .iter()
                .any(|r| r.keys == "Ctrl+Q" && r.what.starts_with("Close the window"))
        );
    }

    #[test]
    fn tooltips_carry_the_keys_of_the_mode() {
        assert_eq!(
            UiCommand::StepReportBack.hover_text(Shown::Live),
            "Previous report (Alt+←)"
        );
        assert_eq!(
            UiCommand::StepForward.hover_text(Shown::Live),
            "Step forward by one pixel column of the plots, to the report there (→)"
        );
        assert_eq!(
            UiCommand::NextMark.hover_text(Shown::Live),
            "Next mark (Shift+→ or .)"
        );
        assert!(
            UiCommand::EmergencyStop
                .hover_text(Shown::ReplayOverLive { t: 0.0 })
                .ends_with("(E)")
        );
    }
}
