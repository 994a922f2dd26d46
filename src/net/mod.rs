//! The network side: the only owner of UDP sockets, and the JUDP protocol state both ends
//! share. Nothing here knows the simulator: `sim` builds on `net`, never the reverse.
//!
//! - `endpoint`: the one sans-I/O JUDP endpoint (intake, peer table, duplicates, reassembly,
//!   ACKs, framing of what is sent) used by the client, the simulator and the observer;
//!   `reassembly` is its multi-packet reassembler.
//! - `client`: the OCU's protocol state machine (sans-I/O), `reports` its report → update
//!   mapping (shared with replay).
//! - `socket` (bind, receive thread, [`socket::Sink`]), `fault` (fault injection around any
//!   sink), `thread` (the OCU's thin socket loop, publishing
//!   [`crate::model::update::Update`]s on one bounded channel), `tap` (recording at the wire).
//! - `priority`: raising the network threads' scheduling priority (real time where allowed).
//! - `link`: a plain socket with a clock for `jaus-ocu conform`, which frames and reads every
//!   datagram itself.
//! - `rng`: the seeded generator of fault injection (and the simulator's noise).
//! - `relay`: the sans-I/O part of `jaus-ocu relay` (hidden), a lossy two-way relay between
//!   an OCU and an arm on this machine: who is the OCU side, the seeded drop decisions, the
//!   counters, and the message names of a datagram for its log.

pub mod client;
pub mod endpoint;
pub mod fault;
pub mod latch;
pub mod link;
pub mod priority;
pub mod reassembly;
pub mod relay;
pub mod reports;
pub mod rng;
pub mod socket;
pub mod tap;
pub mod thread;
