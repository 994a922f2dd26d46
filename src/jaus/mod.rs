//! The JAUS wire codec: JUDP transport framing (AS5669A), the encoding toolkit and every
//! message jaus-ocu speaks. Pure: no I/O, no threads, no clocks.
//!
//! Shape (after smoltcp `wire`): fixed headers get zero-copy checked views
//! ([`judp::Block`]); message bodies get a `Repr`-style struct per message with `parse` and
//! `emit` over a bounds-checked [`wire::Reader`] / [`wire::Writer`]. After `new_checked`
//! succeeds no view accessor panics, and no parse panics on any input.
//!
//! Units: every real value is SI `f64` (m, rad, m/s, rad/s, N, N·m, Hz); scaled integers stay
//! inside the codec. Optional fields are `Option`s and presence vectors are derived from them.

#[macro_use]
mod macros;

pub mod core;
pub mod dump;
pub mod error;
pub mod id;
pub mod iop;
pub mod judp;
pub mod manipulator;
pub mod message;
pub mod wire;

pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
pub use id::JausId;
pub use message::{EmbeddedMessage, Message};
pub use wire::{DecodeContext, Dialect, JointKind};
