//! Reads recordings (`.mcap`) and captures (`.pcap`, `.pcapng`) as a stream of
//! [`WireRecord`]s, whatever the file name says (the format is sniffed from the first bytes).
//! Damaged input yields every readable record, then says where and why it stopped.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::net::tap::WireRecord;

/// The kind of file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// An MCAP recording.
    Mcap,
    /// A classic pcap capture.
    Pcap,
    /// A pcapng capture.
    Pcapng,
}

/// What is known of a source before (and while) reading it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceInfo {
    /// The file.
    pub path: PathBuf,
    /// Its kind (`None` only in `Default`).
    pub kind: Option<SourceKind>,
    /// File size, bytes (progress is `position() / total_bytes`).
    pub total_bytes: u64,
    /// First and last datagram times (ns since the Unix epoch), when an index says so.
    pub start_ns: Option<u64>,
    /// See `start_ns`.
    pub end_ns: Option<u64>,
    /// Raw datagrams in the file, when an index says so.
    pub datagram_count: Option<u64>,
    /// Metadata records by name (MCAP), merged as they are read.
    pub metadata: BTreeMap<String, BTreeMap<String, String>>,
    /// Whether the file ended properly with a summary (MCAP) — `false` for a recording whose
    /// recorder was killed.
    pub complete: bool,
}

/// Why a source could not be opened at all.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a format we read.
    #[error(
        "{path} is not an MCAP recording or a pcap/pcapng capture (first bytes {magic}); jaus-ocu reads .mcap, .pcap and .pcapng"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The first bytes, hex.
        magic: String,
    },
}

/// A stream of wire records from a file.
#[derive(Debug)]
pub struct WireSource {
    info: SourceInfo,
}

impl WireSource {
    /// Opens `path`; captures are filtered to UDP `port` (JUDP: 3794).
    pub fn open(path: &Path, port: u16) -> Result<WireSource, SourceError> {
        let _ = (path, port);
        todo!("issue 6: WireSource::open")
    }

    /// What is known of the source (metadata grows as records are read).
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// Bytes of the file consumed so far (for progress bars).
    pub fn position(&self) -> u64 {
        todo!("issue 6: WireSource::position")
    }

    /// Non-fatal problems met so far (a skipped corrupt chunk, a bad frame), each saying where.
    pub fn problems(&self) -> &[String] {
        todo!("issue 6: WireSource::problems")
    }

    /// Why reading stopped before the end of the file, with the byte offset; `None` while
    /// reading or after a clean end.
    pub fn stopped(&self) -> Option<&str> {
        todo!("issue 6: WireSource::stopped")
    }
}

impl Iterator for WireSource {
    type Item = WireRecord;

    fn next(&mut self) -> Option<WireRecord> {
        todo!("issue 6: WireSource::next")
    }
}
