//! What the window (or `jaus-ocu control … jog`) tells the network side about a jog each time
//! its input is read ([`JogRequest`]), and what the network side says back ([`JogStatus`]).
//!
//! The jog's stream runs where the socket is (`net::client`): the window only reports what
//! the operator holds, at least once per period while anything is held. If the window stalls
//! its last input ages past one period and the stream stops on its own: the watchdog lives
//! next to the socket, not in the thread that can freeze.

use super::controller::Input;
use super::gate::{GateSet, Source};
use crate::model::id::ComponentId;

/// How the operator wants jogs to behave (the settings the window keeps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JogOptions {
    /// Fraction of each joint's maximum speed at full deflection, 0..1.
    pub speed_scale: f64,
    /// The longest access timeout (s) a velocity or effort jog accepts without an
    /// acknowledgement: past it, or with none (0), a cut link leaves the arm moving that long.
    pub timeout_limit: f64,
    /// The operator acknowledged, for this session, that a velocity or effort jog keeps
    /// moving until the arm's access timeout lapses if the link drops.
    pub acknowledge_timeout: bool,
    /// Send effort percentages as velocities (rad/s or m/s), for arms that read
    /// `SetJointEffort` that way (FKIE's: 50 % means 50 rad/s). Off by default.
    pub effort_as_velocity: bool,
    /// Clearance warning band, m: gap-closing motion slows inside it (floored as
    /// `model::clearance::Settings::floored` says; default 0.05).
    pub clearance_band: f64,
    /// Clearance stop margin, m: gap-closing motion stops here (floored; default 0.015).
    pub clearance_margin: f64,
}

impl Default for JogOptions {
    fn default() -> Self {
        Self {
            speed_scale: 0.2,
            timeout_limit: 1.0,
            acknowledge_timeout: false,
            effort_as_velocity: false,
            clearance_band: 0.05,
            clearance_margin: 0.015,
        }
    }
}

/// The operator's jog input for one arm, as read now, with the gates only the input side
/// knows (the network side adds control, READY, fresh data, emergency and one source).
#[derive(Debug, Clone, PartialEq)]
pub struct JogRequest {
    /// The arm the jog acts on: the one the window shows (never another one focused since).
    pub arm: ComponentId,
    /// Which input this comes from.
    pub source: Source,
    /// The deflection and when it was read, s on the network side's clock
    /// (`NetHandle::start`).
    pub input: Input,
    /// The window shows the live arm (not the past, not a replay).
    pub live: bool,
    /// The window has the keyboard focus.
    pub window_focused: bool,
    /// The gamepad is connected (always true for other sources).
    pub gamepad_connected: bool,
    /// The enable is held (the three-position trigger, or the held key or button).
    pub enable_held: bool,
    /// How the operator wants jogs to behave.
    pub options: JogOptions,
}

impl JogRequest {
    /// A request from `source` for `arm` with every input-side gate passing (a terminal or a
    /// test; the window fills the gates from what it knows).
    pub fn new(arm: ComponentId, source: Source, input: Input, options: JogOptions) -> Self {
        Self {
            arm,
            source,
            input,
            live: true,
            window_focused: true,
            gamepad_connected: true,
            enable_held: true,
            options,
        }
    }
}

/// How the network side moves the arm: the driver it chose from the services the arm
/// offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JogDriver {
    /// `SetJointPositions` targets that lead the arm by at most its stopping distance plus
    /// one period (`ManipulatorJointPositionDriver`): a cut link stops the arm within the
    /// bound by construction.
    Position,
    /// `SetJointVelocity` (`ManipulatorJointVelocityDriver`): moves until told otherwise.
    Velocity,
    /// `SetJointEffort` percentages (`PrimitiveManipulator`).
    Effort,
    /// `SetJointEffort` carrying velocities (the compatibility mode for arms that read it
    /// so).
    EffortAsVelocity,
    /// `SetEndEffectorVelocityState` (`ManipulatorEndEffectorVelocityStateDriver`).
    Tool,
}

impl JogDriver {
    /// The driver's name as the window shows it.
    pub fn name(self) -> &'static str {
        match self {
            JogDriver::Position => "position targets",
            JogDriver::Velocity => "joint velocities",
            JogDriver::Effort => "joint efforts",
            JogDriver::EffortAsVelocity => "efforts read as velocities (compatibility mode)",
            JogDriver::Tool => "tool-point velocity",
        }
    }

    /// Whether a link cut leaves the arm stopping on its own within the stated bound.
    pub fn stops_by_itself(self) -> bool {
        self == JogDriver::Position
    }
}

/// Where a jog of one arm stands, as the network side says it (sent on every change).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JogStatus {
    /// Motion commands are streaming.
    pub moving: bool,
    /// The input whose jog streams (or last streamed).
    pub source: Option<Source>,
    /// The gates blocking the last input that asked for motion (empty when none blocks).
    pub blocking: GateSet,
    /// The driver a jog of this arm uses (`None`: the arm offers none).
    pub driver: Option<JogDriver>,
    /// Why a jog is refused before any gate (no driver, an access timeout too long to
    /// accept without an acknowledgement), in words with what to do.
    pub refusal: Option<String>,
    /// Why the clearance guard slows or holds the jog, in words ("stopped 16 mm from
    /// contact: `wrist_roll` (joint 5) and turret (joint 1)"); `None` while it passes all.
    pub clearance: Option<String>,
    /// The refusal is the arm's access timeout, past the limit: the operator's
    /// acknowledgement (once per session) lets the jog go ahead.
    pub acknowledgeable: bool,
    /// What happens if the link drops mid-jog, in words (the bound, or the timeout), for the
    /// joint driver.
    pub if_link_drops: Option<String>,
    /// The same for a tool-point jog (`None`: the arm offers no tool-point driver): the
    /// strip says the words of the mode the next jog will use.
    pub if_link_drops_tool: Option<String>,
    /// Where the joint driver is the position driver: each joint's stop bound if the link
    /// drops, joint 1 first, in its own unit (rad or m; `NaN` where its speed is unknown).
    pub position_bounds: Vec<f64>,
    /// The joint (0-based) the operator deflects whose soft limit holds it still: the jog
    /// streams, and the joint does not move (said as stopped at the limit, not as moving).
    pub at_soft_limit: Option<usize>,
    /// Jog commands sent to this arm since the session started (motion and zeros).
    pub commands_sent: u64,
}
