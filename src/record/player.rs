//! Loads a recording or capture into a [`Session`] on a background thread, with progress;
//! the UI draws what is loaded while the rest arrives.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::source::{SourceError, SourceInfo};
use crate::model::session::{Session, SharedSession};

/// Called when more of the file has been loaded (the GUI passes a repaint request).
pub type LoadWaker = Arc<dyn Fn() + Send + Sync>;

/// How far loading has come.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadProgress {
    /// Bytes of the file read.
    pub done_bytes: u64,
    /// File size, bytes.
    pub total_bytes: u64,
    /// Datagrams loaded.
    pub datagrams: u64,
    /// Loading has ended (completely or not).
    pub finished: bool,
    /// Why loading stopped before the end of the file (where and why), if it did.
    pub stopped: Option<String>,
    /// Non-fatal problems (skipped chunks, bad frames), each saying where.
    pub problems: Vec<String>,
}

impl LoadProgress {
    /// Fraction loaded, 0..=1.
    pub fn fraction(&self) -> f32 {
        if self.finished || self.total_bytes == 0 {
            1.0
        } else {
            (self.done_bytes as f64 / self.total_bytes as f64).clamp(0.0, 1.0) as f32
        }
    }
}

/// A file being (or done being) loaded.
pub struct Replay {
    /// The file.
    pub path: PathBuf,
    /// What the file says of itself (known at open: kind, size; from an index: span, counts).
    pub info: SourceInfo,
    /// The session, filled by the loader thread.
    pub session: SharedSession,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Replay {
    /// Opens `path` (captures filtered to UDP `port`) and starts loading it on the thread
    /// `jaus-replay-load`; `waker` is called as batches arrive. Fails at once only if the file
    /// cannot be read or is not a format we read.
    pub fn open(path: &Path, port: u16, waker: Option<LoadWaker>) -> Result<Replay, SourceError> {
        let _ = (path, port, waker);
        todo!("issue 6: Replay::open")
    }

    /// How far loading has come.
    pub fn progress(&self) -> LoadProgress {
        todo!("issue 6: Replay::progress")
    }

    /// Blocks until loading has ended.
    pub fn wait(&self) -> LoadProgress {
        todo!("issue 6: Replay::wait")
    }

    /// Time origin of the session's times, ns since the Unix epoch (for wall-clock display).
    pub fn start_ns(&self) -> u64 {
        todo!("issue 6: Replay::start_ns")
    }

    /// Loads `path` completely on this thread (for `inspect`, tests and benchmarks).
    pub fn load_blocking(path: &Path, port: u16) -> Result<(Session, LoadProgress), SourceError> {
        let _ = (path, port);
        todo!("issue 6: Replay::load_blocking")
    }
}
