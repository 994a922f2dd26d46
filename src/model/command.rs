//! The operator's intent: [`Command`], what the UI (or a script) asks the network thread to
//! do, and [`CommandKind`], which command an outcome belongs to.
//!
//! `Command` is `Clone`, not `Copy`: a command may carry data (per-joint velocities for a
//! jog, say), so it is moved into the network side's queue, never copied implicitly. The
//! emergency stops ([`Command::SetEmergency`], [`Command::SetEmergencyAll`]) do not wait in
//! that queue: `net::thread::NetHandle::send` puts them on a lane of their own that a full
//! queue can neither delay nor refuse ([`Command::is_emergency`]).

use super::id::ComponentId;
use super::jog::JogRequest;

/// The operator's intent, sent to the network thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Focus this manipulator: the commands that follow go to it. Every manipulator found
    /// stays followed (subscriptions, link, control) whichever is focused.
    Select(ComponentId),
    /// Ask for control with this authority (kept by re-requesting before the peer's timeout).
    RequestControl {
        /// Authority code 0..=255.
        authority: u8,
    },
    /// Give control back.
    ReleaseControl,
    /// Go to a preset pose (refused locally unless control is held).
    GoToPreset {
        /// `PoseID`.
        pose_id: u8,
    },
    /// Emergency stop of the focused arm (accepted by the peer whoever holds control): the
    /// arm the network side has focused when it takes the stop. The stops travel ahead of
    /// every queued command, a `Select` too, so a window names its arm
    /// ([`Command::SetEmergencyOf`]).
    SetEmergency,
    /// Emergency stop of this arm, whichever is focused when the stop is taken: what the
    /// window's E-STOP sends, for the arm its label names (a `Select` still queued behind the
    /// stop cannot turn it onto another arm).
    SetEmergencyOf(ComponentId),
    /// Emergency stop of every arm followed on the focused arm's subsystem (the vehicle):
    /// `SetEmergency` to each, each with its own outcome.
    SetEmergencyAll,
    /// Clear our emergency stop.
    ClearEmergency,
    /// Management Resume (STANDBY → READY).
    Resume,
    /// Management Standby.
    Standby,
    /// The operator's jog input for an arm, read now (sent at every change and at least
    /// once per jog period while anything is held; boxed: it carries the deflection). The
    /// network side streams the commands and stops them itself when this input ages.
    Jog(Box<JogRequest>),
    /// Cancel subscriptions, release control, stop the thread.
    Shutdown,
}

impl Command {
    /// Whether this is an emergency stop (of the focused arm or of every arm): it travels on
    /// the emergency lane, ahead of every other command.
    pub fn is_emergency(&self) -> bool {
        matches!(
            self,
            Command::SetEmergency | Command::SetEmergencyOf(_) | Command::SetEmergencyAll
        )
    }

    /// Which kind of command this is (what its outcome is reported as).
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Select(_) => CommandKind::Select,
            Command::RequestControl { .. } => CommandKind::RequestControl,
            Command::ReleaseControl => CommandKind::ReleaseControl,
            Command::GoToPreset { .. } => CommandKind::GoToPreset,
            Command::SetEmergency | Command::SetEmergencyOf(_) | Command::SetEmergencyAll => {
                CommandKind::SetEmergency
            }
            Command::ClearEmergency => CommandKind::ClearEmergency,
            Command::Resume => CommandKind::Resume,
            Command::Standby => CommandKind::Standby,
            Command::Jog(_) => CommandKind::Jog,
            Command::Shutdown => CommandKind::Shutdown,
        }
    }
}

/// Which command an outcome belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// [`Command::Select`].
    Select,
    /// [`Command::RequestControl`].
    RequestControl,
    /// [`Command::ReleaseControl`].
    ReleaseControl,
    /// [`Command::GoToPreset`].
    GoToPreset,
    /// [`Command::SetEmergency`].
    SetEmergency,
    /// [`Command::ClearEmergency`].
    ClearEmergency,
    /// [`Command::Resume`].
    Resume,
    /// [`Command::Standby`].
    Standby,
    /// [`Command::Jog`].
    Jog,
    /// [`Command::Shutdown`].
    Shutdown,
}

impl CommandKind {
    /// The command's name as the operator knows it (its JAUS-like name: `"GoToPreset"`).
    pub fn name(self) -> &'static str {
        match self {
            CommandKind::Select => "Select",
            CommandKind::RequestControl => "RequestControl",
            CommandKind::ReleaseControl => "ReleaseControl",
            CommandKind::GoToPreset => "GoToPreset",
            CommandKind::SetEmergency => "SetEmergency",
            CommandKind::ClearEmergency => "ClearEmergency",
            CommandKind::Resume => "Resume",
            CommandKind::Standby => "Standby",
            CommandKind::Jog => "Jog",
            CommandKind::Shutdown => "Shutdown",
        }
    }
}
