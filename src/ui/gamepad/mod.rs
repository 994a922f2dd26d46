//! Gamepad input for jogging (issue 32): a worker thread reads the pad, a pure mapping turns
//! each reading into what the operator asks for.
//!
//! How it works:
//! - [`worker`]: [`Gamepad::spawn`] starts a named thread that owns `gilrs`, blocks on its
//!   events (with a timeout, so dropping the [`Gamepad`] stops it), and publishes the first
//!   connected pad's reading as a [`Snapshot`] (a plain [`RawPad`], the pad's name, a sequence
//!   number and the time read), waking the window with `request_repaint` on every change.
//!   Without gamepad support (no udev in a container, CI) the snapshot says why; nothing
//!   panics. [`Gamepad::fake`] drives the same path from a [`FakePad`] (tests, measurements).
//! - [`mapping`]: the [`Mapping`] (the mapping file, TOML; [`Mapping::default`] equals
//!   `assets/gamepad.toml`) and the pure step [`Mapping::intent`]: a [`RawPad`], the arm's
//!   joint count and a [`PadState`] give a [`PadIntent`]: connected, the three-position
//!   enable's state (through [`crate::model::jog::Enable`]), the
//!   [`crate::model::jog::Deflection`], and the mode, page and frame for the screen.
//!
//! The app calls `mapping.intent(&gamepad.snapshot().pad, joints, &mut state)` each frame (or
//! when [`Gamepad::seq`] changes) and feeds the jog: `gamepad_connected` from
//! `intent.connected`, `enable_held` from [`PadIntent::enabled`], the input from
//! `intent.deflection`. Imports run one way: `worker` uses `mapping`; `mapping` uses neither.

pub mod mapping;
pub mod worker;

#[cfg(test)]
mod mapping_tests;

pub use mapping::{
    Axis, Button, Buttons, EnableMapping, Mapping, MappingError, Mode, PadIntent, PadState, Page,
    RawPad, ToolTarget, TwistAxis,
};
pub use worker::{FakePad, Gamepad, Snapshot, Support};
