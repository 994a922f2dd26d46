//! The recorder: its own thread (`jaus-recorder`), fed raw datagrams through a bounded
//! channel (see [`crate::net::tap::Tap`]), writing an MCAP file flushed at least every
//! second, so a killed process loses at most about a second.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crossbeam_channel::Sender;

use crate::net::tap::WireRecord;

/// How to record.
#[derive(Debug, Clone)]
pub struct RecorderConfig {
    /// The file to write (created or truncated).
    pub path: PathBuf,
    /// The session's time origin, ns since the Unix epoch (written in the metadata; replay
    /// times are seconds since it).
    pub session_start_ns: u64,
    /// Extra metadata for the "session" record (OCU ID, connect addresses, ...).
    pub metadata: BTreeMap<String, String>,
    /// Capacity of the channel from the network thread.
    pub capacity: usize,
    /// Longest time between flushes to the file.
    pub flush_interval: Duration,
}

impl RecorderConfig {
    /// Defaults for `path` with the given time origin: 65 536 datagrams of buffer, flush
    /// every second.
    pub fn new(path: PathBuf, session_start_ns: u64) -> Self {
        Self {
            path,
            session_start_ns,
            metadata: BTreeMap::new(),
            capacity: 65_536,
            flush_interval: Duration::from_secs(1),
        }
    }
}

/// What the recorder has done so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecorderStats {
    /// The file.
    pub path: PathBuf,
    /// Datagrams written (received, sent).
    pub rx: u64,
    /// See `rx`.
    pub tx: u64,
    /// Decoded messages written to the JSON channels.
    pub decoded: u64,
    /// Bytes in the file so far (as of the last flush).
    pub bytes: u64,
    /// Time of the last datagram written, ns since the Unix epoch.
    pub last_ns: u64,
    /// Still running (false after `stop` or after a write error).
    pub running: bool,
    /// The write error that stopped recording (what failed and what to do).
    pub error: Option<String>,
}

/// Why recording could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be created or written.
    #[error("cannot write recording {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// A running recorder.
#[derive(Debug)]
pub struct Recorder {
    tx: Sender<WireRecord>,
}

impl Recorder {
    /// Creates the file, writes the header and session metadata, starts the thread.
    pub fn start(cfg: RecorderConfig) -> Result<Recorder, RecordError> {
        let _ = cfg;
        todo!("issue 6: Recorder::start")
    }

    /// The channel to connect to a [`crate::net::tap::Tap`].
    pub fn sender(&self) -> Sender<WireRecord> {
        self.tx.clone()
    }

    /// What the recorder has done so far.
    pub fn stats(&self) -> RecorderStats {
        todo!("issue 6: Recorder::stats")
    }

    /// Writes what is queued, finishes the file (summary and indexes), joins the thread.
    pub fn stop(self) -> Result<RecorderStats, RecordError> {
        todo!("issue 6: Recorder::stop")
    }
}
