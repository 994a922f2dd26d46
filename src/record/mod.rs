//! Recording, replay and capture import.
//!
//! - [`recorder`]: the recorder thread, raw datagrams (and decoded channels) → MCAP.
//! - [`format`](mod@format): the MCAP layout both sides agree on (topics, schemas, metadata).
//! - [`source`]: reads `.mcap` recordings and `.pcap`/`.pcapng` captures as [`WireRecord`]s,
//!   tolerant of damage.
//! - [`observer`]: a passive, sans-I/O decoder: wire records → [`Update`]s, for replay and for
//!   the recorder's decoded channels.
//! - [`player`]: loads a file into a [`Vehicle`] (every arm) on a background thread, with
//!   progress.
//! - [`export`]: CSV of joint and force/torque series (one arm, or every arm of a vehicle).
//! - [`capture`]: the pcap/pcapng reader.
//! - [`pcapng`]: the pcapng writer (`jaus-ocu export --pcapng`).
//! - [`urdf`]: an arm's specification, or a vehicle's arms, as URDF (`jaus-ocu export --urdf`).
//! - [`pipeline`]: the decoded side shared by every sink (recorder, live view server):
//!   observer → updates → decoded, summary and Foxglove channels, notes.
//! - [`live`]: the live view server (Foxglove WebSocket), fed by the tap or a replay, through
//!   the pipeline.
//! - [`live_file`]: a file served to the live view, with Foxglove's playback control.
//! - [`summary`]: the per-arm summary channel `/jaus/arm_state` (control holder, link
//!   health, management state).
//! - [`clearance`]: the clearance of every arm's cylinders in the summary, and an event when
//!   a pair enters the warning band, the stop margin or contact.
//! - [`foxglove`]: builders of Foxglove's well-known JSON messages (transforms, scene, log).
//!
//! [`WireRecord`]: crate::net::tap::WireRecord
//! [`Update`]: crate::model::update::Update
//! [`Vehicle`]: crate::model::vehicle::Vehicle
pub mod capture;
pub mod clearance;
pub mod export;
pub mod format;
pub mod foxglove;
pub mod io_error;
pub mod live;
pub mod live_file;
pub mod observer;
pub mod pcapng;
pub mod pipeline;
pub mod player;
pub mod recorder;
pub mod source;
pub mod summary;
pub mod urdf;
pub mod xml;
