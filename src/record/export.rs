//! Exports from a session: CSV of joint and force/torque series over a time range.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::io::Write;

use crate::model::session::Session;

/// Writes joint positions, velocities, efforts, joint torques and end-effector force/torque
/// sampled in `[t0, t1]` as CSV (one row per sample time, empty cells where a series has no
/// sample at that time); returns the rows written.
pub fn write_csv(session: &Session, t0: f64, t1: f64, w: &mut dyn Write) -> std::io::Result<usize> {
    let _ = (session, t0, t1, w);
    todo!("issue 6: write_csv")
}
