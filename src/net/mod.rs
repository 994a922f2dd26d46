//! The network side: the only owner of UDP sockets. The OCU's socket (`thread`, around the
//! `client` state machine) and the simulator's (`server`, around `sim::component`). `client` is the sans-I/O
//! protocol state machine; `thread` is the thin socket loop that feeds it and publishes
//! [`crate::model::update::Update`]s on one bounded channel.

pub mod client;
pub mod reports;
pub mod server;
pub mod tap;
pub mod thread;
