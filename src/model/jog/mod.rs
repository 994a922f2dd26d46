//! Moving the arm by hand (issue 32), the pure part: the three-position enable ([`Enable`]),
//! the gates that must all pass for motion ([`Gate`], [`Gates`]), the per-arm streaming state
//! machine that turns the operator's deflection into the command to send each period
//! ([`JogController`]), soft limits ([`SoftLimits`]), the stop bound of a position-target
//! jog ([`position_target`], [`stop_bound`]) and whether a tool-point jog keeps to its axis
//! ([`AxisTrack`]).
//!
//! Sans-I/O: no socket, no clock (time is passed in, s), no threads; SI units throughout
//! (rad, m, rad/s, m/s). Imports run one way: `controller` and `bound` use `soft`,
//! `controller` uses `gate`; `request` uses `controller` and `gate`; `enable`, `gate`, `soft` and `axis` use none of their siblings.

pub mod axis;
pub mod bound;
pub mod controller;
pub mod enable;
pub mod gate;
pub mod request;
pub mod soft;

#[cfg(test)]
mod controller_tests;

pub use axis::{AxisTrack, OFF_AXIS_M, joint_at_limit};
pub use bound::{joint_target, position_target, stop_bound};
pub use controller::{
    Deflection, Event, Frame, GuardLimit, Input, JogController, JogOut, JogSettings, Motion,
    MotionGuard, NoGuard, StopReason, Twist,
};
pub use enable::{Enable, EnableState, EnableThresholds};
pub use gate::{ArmGateFacts, Gate, GateSet, Gates, Source};
pub use request::{JogDriver, JogOptions, JogRequest, JogStatus};
pub use soft::{Margin, SoftLimits};
