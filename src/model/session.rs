//! The facts with their time history: what live mode accumulates and replay loads. The UI
//! draws "the state at time t" from here: live, t follows now; replay moves t.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::sync::{Arc, RwLock};

use super::history::History;
use super::state::ArmState;
use super::update::{MarkKind, Update};

/// Force/torque channels of [`Session::ft`].
pub const FT_CHANNELS: [&str; 7] = ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz", "|F|"];

/// A point of interest on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Time, s since the session started.
    pub t: f64,
    /// What about.
    pub kind: MarkKind,
    /// What happened.
    pub label: String,
}

/// A session shared between a loader thread (appending) and the UI (drawing).
pub type SharedSession = Arc<RwLock<Session>>;

/// Every update of a session, kept so that the state at any time can be rebuilt.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The state after every update applied so far (what live mode shows at "now").
    pub latest: ArmState,
    /// Joint positions, one channel per joint (rad or m).
    pub positions: History,
    /// Joint velocities, one channel per joint.
    pub velocities: History,
    /// Joint efforts, one channel per joint (percent).
    pub efforts: History,
    /// Joint torques/forces, one channel per joint.
    pub joint_force_torques: History,
    /// End-effector force/torque, channels [`FT_CHANNELS`] (absent parts NaN).
    pub ft: History,
    /// Timeline marks, in time order.
    pub marks: Vec<Mark>,
}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        todo!("issue 6: Session::new")
    }

    /// Applies one update (times must not go backwards; older samples are refused).
    pub fn apply(&mut self, u: &Update) {
        let _ = u;
        todo!("issue 6: Session::apply")
    }

    /// The state as it was at time `t` (samples: the last at or before `t`).
    pub fn state_at(&self, t: f64) -> ArmState {
        let _ = t;
        todo!("issue 6: Session::state_at")
    }

    /// First and last update times.
    pub fn span(&self) -> Option<(f64, f64)> {
        todo!("issue 6: Session::span")
    }

    /// The time of the first report (sample) strictly after `t`.
    pub fn next_report(&self, t: f64) -> Option<f64> {
        let _ = t;
        todo!("issue 6: Session::next_report")
    }

    /// The time of the last report (sample) strictly before `t`.
    pub fn prev_report(&self, t: f64) -> Option<f64> {
        let _ = t;
        todo!("issue 6: Session::prev_report")
    }

    /// Bytes held (for the memory figures).
    pub fn memory_bytes(&self) -> usize {
        todo!("issue 6: Session::memory_bytes")
    }
}
