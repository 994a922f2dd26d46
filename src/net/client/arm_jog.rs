//! One arm's jog as the client keeps it per arm ([`ArmJog`]): the stream's state machine and
//! what it last sent and said. A leaf: the arm's record (`arm.rs`) holds it, `jog_stream.rs` drives
//! it.

use crate::model::jog::{AxisTrack, JogController, JogDriver, JogRequest, JogSettings, JogStatus};

/// How far past one period an input's age is judged stale, s (past the controller's own
/// comparison slack).
const STALE_SLACK: f64 = 1e-6;

/// One arm's jog: the stream's state machine and what it last sent and said.
#[derive(Debug)]
pub(super) struct ArmJog {
    pub(super) controller: JogController,
    /// The last input of the source whose jog this is.
    pub(super) request: Option<JogRequest>,
    /// The status last said (`ArmFact::Jog`).
    pub(super) said: JogStatus,
    /// Another input asked for motion while this one held the arm (said in the status).
    pub(super) other_refused: bool,
    /// When that other input was read (said only while it is younger than one period).
    pub(super) other_at: f64,
    /// Position targets of the current jog (position driver), joint 1 first.
    pub(super) targets: Vec<f64>,
    /// Commands sent (motion and zeros).
    pub(super) sent: u64,
    /// The speed scale of the motion profile last sent (`NaN`: none yet).
    pub(super) profile_scale: f64,
    /// The driver of the motion last sent: a stop goes out with it, whatever the input now
    /// asks (a released tool-point jog is no longer a twist, and its zero must still be one).
    pub(super) moving_with: Option<JogDriver>,
    /// The tool point's track of the tool-point jog streaming (`axis`).
    pub(super) track: Option<AxisTrack>,
    /// The tool-point jog left its axis: why, in words; it is held stopped until let go.
    pub(super) off_axis: Option<String>,
    /// The arm's joint positions, last reported (rad or m).
    pub(super) positions: Vec<f64>,
    /// The arm's tool point, end-effector frame, m (`ReportToolOffset`; zero until said).
    pub(super) tool_point: [f64; 3],
}

impl Default for ArmJog {
    fn default() -> Self {
        Self {
            controller: JogController::new(JogSettings::default()),
            request: None,
            said: JogStatus::default(),
            other_refused: false,
            other_at: f64::NEG_INFINITY,
            targets: Vec::new(),
            sent: 0,
            profile_scale: f64::NAN,
            moving_with: None,
            track: None,
            off_axis: None,
            positions: Vec::new(),
            tool_point: [0.0; 3],
        }
    }
}

impl ArmJog {
    /// When the stream next needs a tick (`None`: silent): the next command on schedule,
    /// and while it moves also the instant its input turns one period old (so input that
    /// stops arriving is stopped when it goes stale, not at the schedule after).
    pub(super) fn next_due(&self) -> Option<f64> {
        let due = self.controller.next_due()?;
        let stale_at = self
            .request
            .as_ref()
            .filter(|_| self.controller.is_moving())
            .map_or(f64::INFINITY, |r| {
                r.input.at + self.controller.settings().period + STALE_SLACK
            });
        Some(due.min(stale_at))
    }
}
