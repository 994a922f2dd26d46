//! Reads recordings (`.mcap`) and captures (`.pcap`, `.pcapng`) as a stream of
//! [`WireRecord`]s, whatever the file name says (the format is sniffed from the first bytes).
//! Damaged input yields every readable record, then says where and why it stopped.
//!
//! MCAP files are streamed, never loaded whole: the summary at the end (when there is one) is read
//! first for the time range, the datagram count and the metadata, then the data section is read
//! front to back in 1 MiB reads through the `mcap` crate's sans-I/O
//! [`LinearReader`](mcap::sans_io::LinearReader). That reader hands over whole chunks
//! (`emit_chunks`), so this module knows the byte offset of every top-level record: a chunk that
//! fails its CRC or does not decompress is skipped (a [`WireSource::problems`] entry) and reading
//! goes on at the next record, and a cut or a lying length stops reading with the offset and the
//! cause ([`WireSource::stopped`]). Each chunk is decoded by its own sans-I/O reader, which checks
//! the chunk's CRC before yielding anything from it, so a damaged chunk yields nothing rather than
//! garbage.
//!
//! Only raw channels (message encoding `judp`) become records; the decoded JSON channels are
//! derived data, skipped here (replay decodes the raw datagrams again). The operator's notes
//! are not derived: they are read from their channel and handed over on their own
//! ([`WireSource::take_notes`]).

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

mod mcap_stream;

use mcap_stream::McapReader;

use crate::model::events::Note;
use crate::net::tap::{Direction, WireRecord};
use crate::record::capture::{CaptureEvent, CaptureReader, CaptureStats};

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
    /// recorder was killed. Captures have no summary to lose: `true`.
    pub complete: bool,
}

impl SourceInfo {
    /// The time origin of replay times, ns since the Unix epoch: the recording's
    /// `session_start_ns` metadata when present (then replay times equal the live session's),
    /// else the first record's time (`first`), else 0.
    pub fn time_origin(&self, first: Option<&WireRecord>) -> u64 {
        self.metadata
            .get(super::format::SESSION_METADATA)
            .and_then(|m| m.get(super::format::KEY_SESSION_START_NS))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .or_else(|| first.map(|r| r.t_ns))
            .unwrap_or(0)
    }
}

/// Why a source could not be opened at all.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be read.
    // The cause is part of the message (the UI shows only the message), so it is not also
    // chained as a `source` (anyhow would print it twice).
    #[error("cannot read {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
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

/// The MCAP magic that starts (and ends) a recording.
pub const MCAP_MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// The largest record (a chunk, compressed or not) read into memory. jaus-ocu writes chunks
/// of about 1 MiB; a length beyond this is damage, and refusing it keeps a corrupt length
/// field from allocating gigabytes.
pub const MAX_RECORD_LEN: usize = 256 * 1024 * 1024;

/// Problems listed one by one; beyond this they are counted in a last entry.
const MAX_PROBLEMS: usize = 100;

/// A stream of wire records from a file.
#[derive(Debug)]
pub struct WireSource {
    info: SourceInfo,
    log: Log,
    inner: Inner,
    /// The UDP port captures are filtered to.
    port: u16,
}

/// What went wrong so far, shared by the readers.
#[derive(Debug, Default)]
struct Log {
    problems: Vec<String>,
    unlisted: u64,
    stopped: Option<String>,
    /// Records yielded so far.
    yielded: u64,
    /// A capture's counts, kept when the reader is done.
    capture_stats: Option<CaptureStats>,
    /// Operator notes read from the notes channel, not yet taken ([`WireSource::take_notes`]).
    notes: Vec<Note>,
    /// Notes read in all (at most [`MAX_NOTES`] are kept).
    notes_read: usize,
    /// MCAP chunks decompressed whole ([`WireSource::chunks_read_whole`]).
    whole_chunks: u64,
}

/// Most operator notes read from one recording (a hostile file must not fill the timeline).
pub const MAX_NOTES: usize = 10_000;

impl Log {
    fn note(&mut self, note: Note) {
        self.notes_read += 1;
        if self.notes_read <= MAX_NOTES {
            self.notes.push(note);
        } else if self.notes_read == MAX_NOTES + 1 {
            self.problem(format!(
                "more than {MAX_NOTES} operator notes: the rest are not shown"
            ));
        }
    }

    fn problem(&mut self, p: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(p);
        } else {
            self.unlisted += 1;
            let line = format!("{} more problems not listed", self.unlisted);
            if self.unlisted == 1 {
                self.problems.push(line);
            } else if let Some(last) = self.problems.last_mut() {
                *last = line;
            }
        }
    }
}

enum Inner {
    Mcap(Box<McapReader>),
    Capture(Box<CaptureReader<BufReader<File>>>),
    Done,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inner::Mcap(m) => f
                .debug_struct("Mcap")
                .field("offset", &m.offset)
                .field("in_chunk", &m.chunk.is_some())
                .finish_non_exhaustive(),
            Inner::Capture(c) => c.fmt(f),
            Inner::Done => f.write_str("Done"),
        }
    }
}

impl WireSource {
    /// Opens `path`; captures are filtered to UDP `port` (JUDP: 3794).
    pub fn open(path: &Path, port: u16) -> Result<WireSource, SourceError> {
        let io_err = |error| SourceError::Io {
            path: path.to_path_buf(),
            error,
        };
        let mut file = File::open(path).map_err(io_err)?;
        let total_bytes = file.metadata().map_err(io_err)?.len();
        let mut head = [0u8; 8];
        let mut got = 0;
        while got < head.len() {
            match file.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            }
        }
        let head = &head[..got];
        let mut info = SourceInfo {
            path: path.to_path_buf(),
            total_bytes,
            ..SourceInfo::default()
        };
        let mut log = Log::default();
        let inner = if head == MCAP_MAGIC {
            info.kind = Some(SourceKind::Mcap);
            Inner::Mcap(Box::new(McapReader::open(file, &mut info, &mut log)))
        } else {
            info.kind = match head.get(..4) {
                Some(
                    [0xd4, 0xc3, 0xb2, 0xa1]
                    | [0x4d, 0x3c, 0xb2, 0xa1]
                    | [0xa1, 0xb2, 0xc3, 0xd4]
                    | [0xa1, 0xb2, 0x3c, 0x4d],
                ) => Some(SourceKind::Pcap),
                Some([0x0a, 0x0d, 0x0d, 0x0a]) => Some(SourceKind::Pcapng),
                _ => {
                    return Err(SourceError::UnknownFormat {
                        path: path.to_path_buf(),
                        magic: if head.is_empty() {
                            "none: the file is empty".to_owned()
                        } else {
                            head.iter()
                                .map(|b| format!("{b:02x}"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        },
                    });
                }
            };
            // Captures have no summary: nothing is known to be missing.
            info.complete = true;
            let reader = CaptureReader::open(path, port)
                .map_err(|e| io_err(io::Error::new(ErrorKind::InvalidData, e.to_string())))?;
            Inner::Capture(Box::new(reader))
        };
        Ok(WireSource {
            info,
            log,
            inner,
            port,
        })
    }

    /// What is known of the source (metadata grows as records are read).
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// Bytes of the file consumed so far (for progress bars).
    pub fn position(&self) -> u64 {
        match &self.inner {
            Inner::Mcap(m) => m.offset.min(self.info.total_bytes),
            Inner::Capture(c) => c.offset(),
            Inner::Done => self.info.total_bytes,
        }
    }

    /// Non-fatal problems met so far (a skipped corrupt chunk, a bad frame), each saying where.
    pub fn problems(&self) -> &[String] {
        &self.log.problems
    }

    /// Why reading stopped before the end of the file, with the byte offset; `None` while
    /// reading or after a clean end.
    pub fn stopped(&self) -> Option<&str> {
        self.log.stopped.as_deref()
    }

    /// The operator notes read since the last call (MCAP recordings: the
    /// [`crate::record::format::NOTES_TOPIC`] channel), in file order.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.log.notes)
    }

    /// Records yielded so far.
    pub fn records_read(&self) -> u64 {
        self.log.yielded
    }

    /// The capture reader's counts (frames skipped as not JUDP, fragments, ...); `None` for
    /// MCAP recordings.
    pub fn capture_stats(&self) -> Option<CaptureStats> {
        match &self.inner {
            Inner::Capture(c) => Some(*c.stats()),
            _ => self.log.capture_stats,
        }
    }

    /// MCAP chunks read by decompressing them whole into a reused buffer, the fast path
    /// every intact zstd or uncompressed chunk takes; the others (damaged, lz4) are read by a
    /// streaming reader that says what is wrong with them. For tests and diagnostics.
    pub fn chunks_read_whole(&self) -> u64 {
        self.log.whole_chunks
    }

    /// What the file held, for a file that yielded no JUDP datagram (`None` once one was
    /// read): the operator learns why nothing shows and what to try.
    pub fn held_no_judp(&self) -> Option<String> {
        // Operator notes alone are something to show (a timeline of notes).
        if self.log.yielded > 0 || self.log.notes_read > 0 {
            return None;
        }
        let port = self.port;
        Some(match self.capture_stats() {
            Some(s) if s.frames == 0 => "an empty capture (no packets)".to_owned(),
            Some(s) => format!(
                "{} packet{}, none on UDP {port}; try --port (`jaus-ocu replay --port PORT FILE` \
                 when JUDP runs on another UDP port)",
                s.frames,
                if s.frames == 1 { "" } else { "s" }
            ),
            None => "an MCAP file with no JUDP datagrams (no raw jaus-ocu channels)".to_owned(),
        })
    }
}

impl WireSource {
    /// The next datagram into `slot`, reusing its byte buffer (the replay's reader thread
    /// recycles its records: no allocation per datagram); `false` at the end, `slot` then
    /// unchanged. The same records as the iterator.
    pub fn next_into(&mut self, slot: &mut WireRecord) -> bool {
        let got = match &mut self.inner {
            Inner::Mcap(m) => m.next_into(&mut self.info, &mut self.log, slot),
            Inner::Capture(c) => match next_capture(c, &mut self.log) {
                Some(rec) => {
                    *slot = rec;
                    true
                }
                None => false,
            },
            Inner::Done => false,
        };
        if got {
            self.log.yielded += 1;
        } else {
            if let Inner::Capture(c) = &self.inner {
                self.log.capture_stats = Some(*c.stats());
            }
            if let Inner::Mcap(m) = &self.inner {
                // Keep the final position for progress bars.
                self.info.total_bytes = self.info.total_bytes.max(m.offset);
            }
            self.inner = Inner::Done;
        }
        got
    }
}

impl Iterator for WireSource {
    type Item = WireRecord;

    fn next(&mut self) -> Option<WireRecord> {
        let mut slot = WireRecord::empty();
        self.next_into(&mut slot).then_some(slot)
    }
}

impl std::iter::FusedIterator for WireSource {}

fn next_capture(c: &mut CaptureReader<BufReader<File>>, log: &mut Log) -> Option<WireRecord> {
    loop {
        match c.next()? {
            Ok(CaptureEvent::Datagram(d)) => {
                return Some(WireRecord {
                    t_ns: seconds_to_ns(d.time),
                    direction: Direction::Rx,
                    peer: d.source,
                    bytes: d.payload,
                    latched: None,
                });
            }
            Ok(CaptureEvent::Bad { frame, reason, .. }) => {
                log.problem(format!("frame {frame}: {reason}"));
            }
            Ok(CaptureEvent::Skipped { .. } | CaptureEvent::Fragment { .. }) => {}
            Err(e) => {
                log.stopped = Some(format!("{e}; {} datagrams read", log.yielded));
                return None;
            }
        }
    }
}

/// Capture times are f64 seconds; negative or absurd ones saturate rather than wrap.
fn seconds_to_ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}
