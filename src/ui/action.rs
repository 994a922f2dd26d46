//! What the operator asks for: [`Action`] (from a panel, a dialog or a key) and the
//! [`Confirm`]ations asked before a command to the live arm leaves. Panels return these;
//! `app/perform.rs` carries them out in one place. A leaf of the vocabulary.

use super::commands::UiCommand;
use super::time_control::TimeCommand;
use crate::model::command::Command;
use crate::model::update::ComponentId;

/// A request from a panel, a dialog or a key (not `Copy`: it may carry a [`Command`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A command of the table.
    Ui(UiCommand),
    /// Move the drawn time.
    Time(TimeCommand),
    /// A command to the arm built by the panel (e.g. focusing another live arm).
    Send(Command),
    /// Bring this arm into view ([`super::app::OcuApp::focus_arm`]: live, the network
    /// focuses it; in a replay, the view does).
    Focus(ComponentId),
    /// Preview this preset as a ghost (or stop previewing).
    Preview(Option<u8>),
    /// Ask the operator to confirm before the command leaves.
    Ask(Confirm),
    /// The operator's answer to the open confirmation: go ahead (`true`) or cancel.
    Answer(bool),
    /// Hide this notice.
    Dismiss(usize),
    /// Open the running recording at the drawn time, for the exact values the live session
    /// holds only as an envelope.
    ExactFromRecording,
}

/// A confirmation the operator must give before a command to the live arm leaves (the
/// dialog names the arm: `panels/confirm.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Confirm {
    /// Go to this preset.
    GoToPreset(u8),
    /// Clear the live arm's emergency: it goes to STANDBY and stays stopped (reset is not
    /// restart; [`Confirm::Resume`] is its own step).
    ClearEmergency,
    /// Resume the live arm: STANDBY to READY, motion commands accepted again.
    Resume,
}

impl Confirm {
    /// The command it sends once confirmed.
    pub fn command(self) -> Command {
        match self {
            Confirm::GoToPreset(pose_id) => Command::GoToPreset { pose_id },
            Confirm::ClearEmergency => Command::ClearEmergency,
            Confirm::Resume => Command::Resume,
        }
    }
}
