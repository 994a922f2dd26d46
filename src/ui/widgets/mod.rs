//! Reusable widgets, in egui's toggle-switch anatomy: size → allocate → interact → paint (only
//! if visible) → `widget_info` for accessibility and tests.

pub mod envelope_band;
pub mod hold_button;
pub mod joint_gauge;
pub mod scrub_bar;
pub mod state_lanes;
