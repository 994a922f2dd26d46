//! The OCU's network side: the only owner of the OCU's UDP socket. `client` is the sans-I/O
//! protocol state machine; `thread` is the thin socket loop that feeds it and publishes
//! [`crate::model::update::Update`]s on one bounded channel.

pub mod client;
pub mod thread;
