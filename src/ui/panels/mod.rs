//! The panels, one per file (egui's one widget per file). Each is handed what it shows and
//! returns what the operator asked for ([`crate::ui::action::Action`]s, mostly
//! [`crate::ui::commands::UiCommand`]s); none of them imports `ui/app` (the
//! `ui_imports_run_one_way` test of `tests/layers.rs`). `app/frame.rs` lays them out.

pub mod arm_list;
pub mod banner;
pub mod clearance;
pub mod confirm;
pub mod event_log;
pub mod gamepad;
pub mod gauges;
pub mod help;
pub mod jog_strip;
pub mod notices;
pub mod plot_picker;
pub mod plots;
pub mod presets;
pub mod status_bar;
pub mod timeline;
pub mod top_bar;
pub mod view3d;
