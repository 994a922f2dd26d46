//! The recorder: its own thread (`jaus-recorder`), fed raw datagrams through a bounded
//! channel (see [`crate::net::tap::Tap`]), writing an MCAP file flushed at least every
//! second, so a killed process loses at most about a second.
//!
//! Layout (see [`crate::record::format`]): one raw channel per direction and peer, created on
//! first use; with [`RecorderConfig::decoded`], the datagrams also go through the decoded
//! [`Pipeline`] (the replay observer, shared with the live view server) and what it hands out
//! is written to the JSON channels (same log time as the datagram that caused them), plus an
//! "arm" metadata record per arm (`arm/S.N.C`) the first time its specification is seen. Every arm the observer follows is written: each per-arm
//! message names its arm (`"component"`, see [`crate::record::format`]), and the Foxglove
//! channels draw each arm in its own frame tree. A "session" metadata record is written and flushed before the thread starts, so
//! even an empty recording says when and by what it was made.
//!
//! Crash safety: [`mcap::write::Writer::flush`] closes the open chunk and hands everything to
//! the operating system, so a file whose writer was killed is readable (by
//! [`crate::record::source::WireSource`]) up to the last flush. Flushes happen every
//! `flush_interval`, also when no datagram arrives (the thread wakes up for it).
//!
//! A write error (disk full, device gone) stops the thread: the error goes into
//! [`RecorderStats::error`], the channel's receiver is dropped (the tap then disconnects
//! itself) and whatever was flushed before stays readable.
//!
//! Over 800 lines on purpose: the thread, its file state, the thinning rule and the error
//! texts share the crash-safety rules above and are read together.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use mcap::McapError;
use mcap::records::{MessageHeader, Metadata};
use mcap::write::{WriteOptions, Writer};

use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::events::Note;
use crate::net::tap::{Direction, Tap, WireRecord};
use crate::record::format;
use crate::record::foxglove::SceneLook;
use crate::record::io_error::describe_io;
use crate::record::pipeline::{Channel, Out, Pipeline, PipelineConfig};

/// How chunks are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordCompression {
    /// Not compressed.
    None,
    /// LZ4 frames.
    Lz4,
    /// Zstandard, level 1. The default: see [`RecorderConfig::compression`].
    #[default]
    Zstd,
}

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
    /// Also write the decoded JSON channels (default `true`; `false` records the raw
    /// datagrams only, which is all replay needs).
    pub decoded: bool,
    /// Chunk compression. Zstd (level 1) by default: on ~100-byte JUDP datagrams
    /// `cargo bench --bench record` measured 66 bytes a datagram on disk at 1.06 M
    /// datagrams/s, against 91 bytes at 1.17 M/s for LZ4 and 136 bytes at 1.97 M/s
    /// uncompressed: a quarter smaller than LZ4 for a tenth less speed, both twice the
    /// 500 k/s target.
    pub compression: RecordCompression,
    /// Write a message index after each chunk (default `true`). They are 16 bytes a message,
    /// uncompressed: measured 66 → 82 bytes a datagram (+24 %), at the same write speed.
    /// jaus-ocu reads front to back and does not need them, but indexed readers do:
    /// `@mcap/core`'s `McapIndexedReader` (Foxglove's web reader) refuses a file whose chunk
    /// indexes have no message indexes ("Encountered a chunk index without message indexes
    /// and non-zero start and end times"); `.ci/mcap-js.sh` checks it reads every message.
    pub message_indexes: bool,
    /// Target uncompressed chunk size, bytes (default 1 MiB).
    pub chunk_size: u64,
    /// Also write the Foxglove channels (`/foxglove/transforms`, `/foxglove/scene`,
    /// `/foxglove/log` in Foxglove's published schemas: every arm in Foxglove's and
    /// Lichtblick's 3D panel, each its own frame tree, the events in their Log panel), drawn with this look — the 3D view's palette,
    /// `ui::theme::ScenePalette::foxglove_look`. `None` (the default here; `jaus-ocu record`
    /// and the GUI set it) writes none; they are decoded channels, so `decoded: false` writes
    /// none either.
    pub foxglove: Option<SceneLook>,
    /// The tap that feeds this recorder, if any: the datagrams it had to drop while the
    /// recorder was behind are then counted in the stats and written in the file's
    /// "`session_end`" metadata, so an incomplete recording says so.
    pub tap: Option<Tap>,
    /// Thin the decoded sample channels while the recorder is behind (default `true`): with
    /// more than a quarter of [`RecorderConfig::capacity`] queued, a decoded joint or
    /// force/torque sample is written only if [`THIN_INTERVAL_NS`] of log time passed since the
    /// last one on its channel. The raw channels (what replay reads) and the decoded events,
    /// specification and Foxglove channels stay complete; thinned samples are counted
    /// ([`RecorderStats::thinned`], "`session_end`"). A recorder that keeps up (every
    /// normal-rate session) writes every sample. `false` writes every sample however far
    /// behind (the tap then drops raw datagrams sooner). Why: ARCHITECTURE.md, "Recording at
    /// wire speed".
    pub thin_when_behind: bool,
    /// The vehicle file clearance measures against in the decoded channels (`None`, the
    /// default: the arms' own cylinders only, no ground and no obstacles).
    pub vehicle: Option<Arc<VehicleGeometry>>,
}

pub use crate::record::pipeline::THIN_INTERVAL_NS;

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
            decoded: true,
            compression: RecordCompression::Zstd,
            message_indexes: true,
            chunk_size: 1024 * 1024,
            foxglove: None,
            tap: None,
            thin_when_behind: true,
            vehicle: None,
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
    /// Datagrams the tap dropped because the recorder was behind (not in the file).
    pub dropped: u64,
    /// Decoded samples left out of the decoded channels while the recorder was behind
    /// ([`RecorderConfig::thin_when_behind`]; their datagrams are in the raw channels).
    pub thinned: u64,
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
    /// Operator notes to write ([`Recorder::note_sender`]).
    notes: Sender<Note>,
    /// Dropped to tell the thread to drain, finish the file and end.
    stop: Option<Sender<()>>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
    path: PathBuf,
}

/// What the thread publishes.
#[derive(Debug, Default)]
struct Shared {
    stats: RecorderStats,
    /// The error without the "recording stopped: <path>: " prefix, for [`RecordError`].
    detail: Option<String>,
}

/// Stats are published at most this often between flushes.
const PUBLISH_EVERY: Duration = Duration::from_millis(50);

/// Notes queued for the recorder thread at most (the operator writes a few a minute).
const NOTES_QUEUE: usize = 64;

/// Records handled per wake-up before the thread looks at the clock again.
const BATCH: usize = 1024;

/// zstd level 1 (the "fast" strategy) rather than the library's default 3: measured 680 k →
/// 1.06 M datagrams/s with files 1.5 % smaller (67 → 66 bytes a datagram). Ignored by LZ4.
const ZSTD_LEVEL: u32 = 1;

/// A buffer between the MCAP writer and the file: the chunk compressor writes in small
/// pieces, and each would otherwise be a system call.
const FILE_BUFFER: usize = 256 * 1024;

impl Recorder {
    /// Creates the file, writes the header and session metadata, starts the thread.
    pub fn start(cfg: RecorderConfig) -> Result<Recorder, RecordError> {
        let file = File::create(&cfg.path).map_err(|e| RecordError::Write {
            path: cfg.path.clone(),
            message: describe_io(&e),
        })?;
        Self::start_with_sink(cfg, file)
    }

    /// Like [`Recorder::start`], writing to `sink` instead of creating `cfg.path` (which then
    /// only names the recording in stats and messages). For tests of write failures and for
    /// benchmarks.
    pub fn start_with_sink<W>(cfg: RecorderConfig, sink: W) -> Result<Recorder, RecordError>
    where
        W: Write + Seek + Send + 'static,
    {
        let path = cfg.path.clone();
        let fail = |e: McapError| RecordError::Write {
            path: path.clone(),
            message: describe_mcap(&e),
        };
        let end = Arc::new(AtomicU64::new(0));
        let sink = BufWriter::with_capacity(
            FILE_BUFFER,
            Counted {
                inner: sink,
                pos: 0,
                end: end.clone(),
            },
        );
        let compression = match cfg.compression {
            RecordCompression::None => None,
            RecordCompression::Lz4 => Some(mcap::Compression::Lz4),
            RecordCompression::Zstd => Some(mcap::Compression::Zstd),
        };
        let options = WriteOptions::new()
            .profile(format::PROFILE)
            .library(format::LIBRARY)
            .compression(compression)
            // The recorder is meant to use one core: zstd's worker threads would compete
            // with the network thread and the UI for the other.
            .compression_threads(0)
            .compression_level(ZSTD_LEVEL)
            .chunk_size(Some(cfg.chunk_size.max(4096)))
            .emit_message_indexes(cfg.message_indexes);
        let mut writer = options.create(sink).map_err(fail)?;
        let mut session = BTreeMap::from([
            (
                format::KEY_OCU_VERSION.to_owned(),
                env!("CARGO_PKG_VERSION").to_owned(),
            ),
            (
                format::KEY_SESSION_START_NS.to_owned(),
                cfg.session_start_ns.to_string(),
            ),
            (
                format::KEY_START_TIME.to_owned(),
                crate::model::clock::rfc3339_utc(cfg.session_start_ns),
            ),
        ]);
        session.extend(cfg.metadata.clone());
        writer
            .write_metadata(&Metadata {
                name: format::SESSION_METADATA.to_owned(),
                metadata: session,
            })
            .map_err(fail)?;
        writer.flush().map_err(fail)?;

        let shared = Arc::new(Mutex::new(Shared {
            stats: RecorderStats {
                path: path.clone(),
                bytes: end.load(Ordering::Relaxed),
                running: true,
                ..RecorderStats::default()
            },
            detail: None,
        }));
        let (tx, rx) = crossbeam_channel::bounded(cfg.capacity.max(1));
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
        let (notes_tx, notes_rx) = crossbeam_channel::bounded::<Note>(NOTES_QUEUE);
        let machine = RecordingFile {
            writer,
            end,
            path: path.clone(),
            start_ns: cfg.session_start_ns,
            raw: HashMap::new(),
            last_raw: None,
            pipeline: Pipeline::new(PipelineConfig {
                start_ns: cfg.session_start_ns,
                foxglove: cfg.foxglove.filter(|_| cfg.decoded),
                vehicle: cfg.vehicle.clone(),
            }),
            decoded: cfg.decoded,
            channels: [None; Channel::ALL.len()],
            rx_count: 0,
            tx_count: 0,
            decoded_count: 0,
            thin: cfg.thin_when_behind,
            behind: false,
            last_ns: 0,
            flushed_count: 0,
            flushed_ns: None,
            kernel_base: cfg.tap.as_ref().and_then(Tap::kernel_dropped),
            tap: cfg.tap.map(|t| {
                let base = t.dropped();
                (t, base)
            }),
            latched_count: 0,
            latched_written: false,
            notes: 0,
        };
        let interval = cfg.flush_interval.max(Duration::from_millis(10));
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("jaus-recorder".into())
            .spawn(move || {
                let inputs = Inputs {
                    rx,
                    notes: notes_rx,
                    stop: stop_rx,
                };
                run(machine, inputs, interval, thread_shared);
            })
            .map_err(|e| RecordError::Write {
                path: path.clone(),
                message: format!("cannot start the recorder thread: {e}"),
            })?;
        Ok(Recorder {
            tx,
            notes: notes_tx,
            stop: Some(stop_tx),
            shared,
            thread: Some(thread),
            path,
        })
    }

    /// The channel to connect to a [`crate::net::tap::Tap`].
    pub fn sender(&self) -> Sender<WireRecord> {
        self.tx.clone()
    }

    /// The channel operator notes are handed over on (the UI's): each is written to
    /// [`format::NOTES_TOPIC`] and as a `foxglove.Log` line at the note's session time. The
    /// queue is short and never blocks: a sender uses `try_send` and tells the operator when
    /// it is full.
    pub fn note_sender(&self) -> Sender<Note> {
        self.notes.clone()
    }

    /// What the recorder has done so far.
    pub fn stats(&self) -> RecorderStats {
        lock(&self.shared).stats.clone()
    }

    /// Writes what is queued, finishes the file (summary and indexes), joins the thread.
    /// Returns the final counts, or the error that stopped recording (earlier, or while
    /// finishing); what was flushed before an error stays readable.
    pub fn stop(mut self) -> Result<RecorderStats, RecordError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<RecorderStats, RecordError> {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            // The guard in `run` has already put the panic into the stats.
            let shared = lock(&self.shared);
            return Err(RecordError::Write {
                path: self.path.clone(),
                message: shared
                    .detail
                    .clone()
                    .unwrap_or_else(|| "the recorder thread failed".to_owned()),
            });
        }
        let shared = lock(&self.shared);
        match &shared.detail {
            Some(detail) => Err(RecordError::Write {
                path: self.path.clone(),
                message: detail.clone(),
            }),
            None => Ok(shared.stats.clone()),
        }
    }
}

impl Drop for Recorder {
    /// A recorder dropped without [`Recorder::stop`] still finishes its file.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.shutdown();
        }
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // The thread only writes whole values under the lock; a panic elsewhere in it cannot
    // leave them half-written.
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Passes writes and seeks through, keeping the end of what has been written for the stats
/// (the writer owns the sink, so its size cannot be asked for otherwise).
struct Counted<W> {
    inner: W,
    pos: u64,
    end: Arc<AtomicU64>,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pos += n as u64;
        if self.pos > self.end.load(Ordering::Relaxed) {
            self.end.store(self.pos, Ordering::Relaxed);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Seek> Seek for Counted<W> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.pos = self.inner.seek(pos)?;
        Ok(self.pos)
    }
}

type McapWriter<W> = Writer<BufWriter<Counted<W>>>;

/// A raw channel's ID and next sequence number.
#[derive(Debug, Clone, Copy)]
struct RawChannel {
    id: u16,
    sequence: u32,
}

/// Writes one JSON message on a decoded or Foxglove channel, making its schema and channel
/// the first time (`slot` empty).
fn write_json<W: Write + Seek>(
    writer: &mut McapWriter<W>,
    slot: &mut Option<RawChannel>,
    (schema_name, schema): (&str, &str),
    topic: &str,
    log_time: u64,
    bytes: &[u8],
) -> Result<(), McapError> {
    let channel = match slot {
        Some(c) => c,
        slot => {
            let schema =
                writer.add_schema(schema_name, format::SCHEMA_ENCODING, schema.as_bytes())?;
            let id = writer.add_channel(schema, topic, format::JSON_ENCODING, &BTreeMap::new())?;
            slot.insert(RawChannel { id, sequence: 0 })
        }
    };
    let header = MessageHeader {
        channel_id: channel.id,
        sequence: channel.sequence,
        log_time,
        publish_time: log_time,
    };
    channel.sequence = channel.sequence.wrapping_add(1);
    writer.write_to_known_channel(&header, bytes)
}

/// Writes one thing the pipeline hands out: a JSON message on its channel (counted in
/// `count`), or an arm's metadata record.
fn write_out<W: Write + Seek>(
    writer: &mut McapWriter<W>,
    channels: &mut [Option<RawChannel>; Channel::ALL.len()],
    count: &mut u64,
    out: Out<'_>,
) -> Result<(), McapError> {
    match out {
        Out::Message {
            channel,
            log_time,
            bytes,
            ..
        } => {
            write_json(
                writer,
                &mut channels[channel.index()],
                channel.schema(),
                channel.topic(),
                log_time,
                bytes,
            )?;
            *count += 1;
            Ok(())
        }
        Out::ArmMetadata { name, metadata } => writer.write_metadata(&Metadata { name, metadata }),
    }
}

/// The MCAP file being written: the writer, its channels and what has been written.
struct RecordingFile<W: Write + Seek> {
    writer: McapWriter<W>,
    end: Arc<AtomicU64>,
    path: PathBuf,
    start_ns: u64,
    raw: HashMap<(Direction, SocketAddr), RawChannel>,
    /// The last raw channel used: traffic comes in runs from one peer, and this skips the
    /// hash of a socket address for most datagrams.
    last_raw: Option<(Direction, SocketAddr, RawChannel)>,
    /// The decoded side (observer, decoded, summary and Foxglove channels, notes).
    pipeline: Pipeline,
    /// Whether records go through the pipeline (`RecorderConfig::decoded`; notes always do).
    decoded: bool,
    /// The JSON channels once made, by [`Channel::index`].
    channels: [Option<RawChannel>; Channel::ALL.len()],
    rx_count: u64,
    tx_count: u64,
    decoded_count: u64,
    /// Whether to thin decoded samples when behind, and whether the recorder is behind now.
    thin: bool,
    behind: bool,
    last_ns: u64,
    /// Datagrams and the last datagram time as of the last successful flush: what a reader
    /// is sure to find after a failure.
    flushed_count: u64,
    flushed_ns: Option<u64>,
    /// The feeding tap and its drop count when recording started.
    tap: Option<(Tap, u64)>,
    /// The kernel's drop count at the network side's socket when recording started.
    kernel_base: Option<u64>,
    /// Latched datagrams written (`net::latch`), and whether their metadata record is.
    latched_count: u64,
    latched_written: bool,
    /// Notes written.
    notes: u64,
}

impl<W: Write + Seek> RecordingFile<W> {
    fn write(&mut self, rec: &WireRecord) -> Result<(), McapError> {
        let key = (rec.direction, rec.peer);
        let mut channel = match self.last_raw {
            Some((d, p, c)) if (d, p) == key => c,
            last => {
                if let Some((d, p, c)) = last {
                    self.raw.insert((d, p), c);
                }
                match self.raw.get(&key) {
                    Some(c) => *c,
                    None => RawChannel {
                        id: self.writer.add_channel(
                            0,
                            &format::raw_topic(rec.direction, rec.peer),
                            format::RAW_ENCODING,
                            &format::raw_channel_metadata(rec.direction, rec.peer),
                        )?,
                        sequence: 0,
                    },
                }
            }
        };
        // A latched datagram (received before recording began, net::latch) is logged at the
        // recording's start and published at its own receive time.
        let header = MessageHeader {
            channel_id: channel.id,
            sequence: channel.sequence,
            log_time: rec.t_ns,
            publish_time: rec.latched.unwrap_or(rec.t_ns),
        };
        if rec.latched.is_some() {
            self.latched_count += 1;
        } else if self.latched_count > 0 && !self.latched_written {
            self.write_latched_metadata(rec.t_ns)?;
        }
        channel.sequence = channel.sequence.wrapping_add(1);
        self.last_raw = Some((rec.direction, rec.peer, channel));
        self.writer.write_to_known_channel(&header, &rec.bytes)?;
        match rec.direction {
            Direction::Rx => self.rx_count += 1,
            Direction::Tx => self.tx_count += 1,
        }
        self.last_ns = rec.t_ns;
        if self.decoded {
            let Self {
                pipeline,
                writer,
                channels,
                decoded_count,
                behind,
                ..
            } = self;
            pipeline.observe(rec, *behind, &mut |out| {
                write_out(writer, channels, decoded_count, out)
            })?;
        }
        Ok(())
    }

    /// Writes an operator's note at its session time: on the notes channel and as a
    /// `foxglove.Log` line.
    fn write_note(&mut self, note: &Note) -> Result<(), McapError> {
        let Self {
            pipeline,
            writer,
            channels,
            notes,
            ..
        } = self;
        let mut written = 0;
        pipeline.note(note, &mut |out| {
            write_out(writer, channels, &mut written, out)
        })?;
        *notes += 1;
        Ok(())
    }

    /// The "latched" metadata record: how many datagrams at the start of the file were
    /// received before recording began, and when recording began.
    fn write_latched_metadata(&mut self, recording_start_ns: u64) -> Result<(), McapError> {
        self.latched_written = true;
        self.writer.write_metadata(&Metadata {
            name: format::LATCHED_METADATA.to_owned(),
            metadata: BTreeMap::from([
                (
                    format::KEY_LATCHED_COUNT.to_owned(),
                    self.latched_count.to_string(),
                ),
                (
                    format::KEY_RECORDING_START_NS.to_owned(),
                    recording_start_ns.to_string(),
                ),
            ]),
        })
    }

    fn flush(&mut self) -> Result<(), McapError> {
        self.writer.flush()?;
        self.flushed_count = self.rx_count + self.tx_count;
        if self.flushed_count > 0 {
            self.flushed_ns = Some(self.last_ns);
        }
        Ok(())
    }

    /// Closes trailing gaps in the decoded channels, writes the summary, flushes the file.
    fn finish(mut self) -> Result<(), McapError> {
        if self.latched_count > 0 && !self.latched_written {
            let at = self.last_ns;
            self.write_latched_metadata(at)?;
        }
        if self.decoded {
            let Self {
                pipeline,
                writer,
                channels,
                decoded_count,
                last_ns,
                ..
            } = &mut self;
            pipeline.finish(*last_ns, &mut |out| {
                write_out(writer, channels, decoded_count, out)
            })?;
        }
        // How the recording ended: a reader can tell a complete one from one with holes.
        let mut end = BTreeMap::from([
            (
                format::KEY_DATAGRAMS_RX.to_owned(),
                self.rx_count.to_string(),
            ),
            (
                format::KEY_DATAGRAMS_TX.to_owned(),
                self.tx_count.to_string(),
            ),
            (
                format::KEY_LATCHED_COUNT.to_owned(),
                self.latched_count.to_string(),
            ),
        ]);
        if self.last_ns > 0 {
            end.insert(
                format::KEY_END_TIME.to_owned(),
                crate::model::clock::rfc3339_utc(self.last_ns),
            );
        }
        if self.tap.is_some() {
            end.insert(format::KEY_DROPPED.to_owned(), self.dropped().to_string());
        }
        if self.thinned() > 0 {
            end.insert(format::KEY_THINNED.to_owned(), self.thinned().to_string());
        }
        if let Some((tap, _)) = &self.tap
            && let (Some(base), Some(now)) = (self.kernel_base, tap.kernel_dropped())
        {
            end.insert(
                format::KEY_KERNEL_DROPPED.to_owned(),
                now.saturating_sub(base).to_string(),
            );
        }
        self.writer.write_metadata(&Metadata {
            name: format::SESSION_END_METADATA.to_owned(),
            metadata: end,
        })?;
        self.writer.finish()?;
        let mut file = self.writer.into_inner();
        file.flush()?;
        Ok(())
    }

    fn publish(&self, shared: &Mutex<Shared>) {
        let mut shared = lock(shared);
        let s = &mut shared.stats;
        s.rx = self.rx_count;
        s.tx = self.tx_count;
        s.decoded = self.decoded_count;
        s.bytes = self.end.load(Ordering::Relaxed);
        s.last_ns = self.last_ns;
        s.dropped = self.dropped();
        s.thinned = self.thinned();
    }

    /// Decoded samples thinned so far.
    fn thinned(&self) -> u64 {
        self.pipeline.thinned()
    }

    /// Datagrams the tap dropped since recording started.
    fn dropped(&self) -> u64 {
        self.tap
            .as_ref()
            .map_or(0, |(t, base)| t.dropped().saturating_sub(*base))
    }

    /// The stats' error for `e`: what failed, what to do, and what is still readable.
    fn failure(&self, e: &McapError) -> String {
        let readable = match self.flushed_ns {
            Some(ns) => format!(
                "{} datagrams recorded up to {} (session time) are readable",
                self.flushed_count,
                clock(ns.saturating_sub(self.start_ns))
            ),
            None => "no datagrams had been written yet".to_owned(),
        };
        format!("{}; {readable}", describe_mcap(e))
    }
}

/// Marks the recorder stopped however the thread ends, a panic included.
struct RunningGuard(Arc<Mutex<Shared>>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let mut shared = lock(&self.0);
        shared.stats.running = false;
        if std::thread::panicking() && shared.detail.is_none() {
            let detail = "the recorder failed (a bug: see the log); the file is readable up \
                          to the last flush"
                .to_owned();
            shared.stats.error = Some(format!(
                "recording stopped: {}: {detail}",
                shared.stats.path.display()
            ));
            shared.detail = Some(detail);
        }
    }
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the writer thread's body: it owns its channels and shared state for its whole life"
)]
fn run<W: Write + Seek>(
    mut m: RecordingFile<W>,
    inputs: Inputs,
    interval: Duration,
    shared: Arc<Mutex<Shared>>,
) {
    let Inputs { rx, notes, stop } = inputs;
    let _guard = RunningGuard(shared.clone());
    let mut next_flush = Instant::now() + interval;
    let mut last_publish = Instant::now();
    let mut dirty = false;
    let outcome = loop {
        let timeout = next_flush.saturating_duration_since(Instant::now());
        let mut stopping = false;
        let step = select! {
            recv(rx) -> rec => match rec {
                Ok(rec) => {
                    dirty = true;
                    write_batch(&mut m, &rec, &rx)
                }
                // Unreachable while the Recorder holds a sender; harmless if it happens.
                Err(_) => {
                    stopping = true;
                    Ok(())
                }
            },
            recv(notes) -> note => match note {
                Ok(note) => {
                    dirty = true;
                    m.write_note(&note)
                }
                Err(_) => Ok(()),
            },
            recv(stop) -> _ => {
                stopping = true;
                Ok(())
            },
            default(timeout) => Ok(()),
        };
        if let Err(e) = step {
            break Err(e);
        }
        if stopping {
            // Only what is queued now: a tap still offering must not keep the file open.
            let queued = rx.len();
            let drained = rx.try_iter().take(queued).try_for_each(|rec| m.write(&rec));
            if let Err(e) = drained {
                break Err(e);
            }
            // Notes handed over before the stop are written.
            let queued = notes.len();
            if let Err(e) = notes
                .try_iter()
                .take(queued)
                .try_for_each(|n| m.write_note(&n))
            {
                break Err(e);
            }
            break Ok(());
        }
        let now = Instant::now();
        if now >= next_flush {
            if dirty && let Err(e) = m.flush() {
                break Err(e);
            }
            dirty = false;
            next_flush = now + interval;
            m.publish(&shared);
            last_publish = now;
        } else if now.duration_since(last_publish) >= PUBLISH_EVERY {
            m.publish(&shared);
            last_publish = now;
        }
    };
    match outcome {
        Ok(()) => {
            m.publish(&shared);
            let path = m.path.clone();
            let end = m.end.clone();
            let failure = m.failure_for_finish();
            if let Err(e) = m.finish() {
                set_error(&shared, &path, format!("{}; {failure}", describe_mcap(&e)));
            }
            lock(&shared).stats.bytes = end.load(Ordering::Relaxed);
        }
        Err(e) => {
            m.publish(&shared);
            let detail = m.failure(&e);
            set_error(&shared, &m.path, detail);
        }
    }
}

impl<W: Write + Seek> RecordingFile<W> {
    /// What stays readable if finishing fails (finishing consumes the machine).
    fn failure_for_finish(&self) -> String {
        match self.flushed_ns {
            Some(ns) => format!(
                "the summary is missing, but {} datagrams recorded up to {} (session time) are \
                 readable",
                self.flushed_count,
                clock(ns.saturating_sub(self.start_ns))
            ),
            None => "the summary is missing".to_owned(),
        }
    }
}

/// What the recorder thread listens to: datagrams, notes, and the stop.
struct Inputs {
    rx: Receiver<WireRecord>,
    notes: Receiver<Note>,
    stop: Receiver<()>,
}

fn write_batch<W: Write + Seek>(
    m: &mut RecordingFile<W>,
    first: &WireRecord,
    rx: &Receiver<WireRecord>,
) -> Result<(), McapError> {
    // Behind: more than a quarter of the queue waits (the tap drops when it is full).
    m.behind = m.thin && rx.capacity().is_some_and(|c| rx.len() > c / 4);
    m.write(first)?;
    for rec in rx.try_iter().take(BATCH) {
        m.write(&rec)?;
    }
    Ok(())
}

fn set_error(shared: &Mutex<Shared>, path: &Path, detail: String) {
    let mut shared = lock(shared);
    shared.stats.error = Some(format!("recording stopped: {}: {detail}", path.display()));
    shared.detail = Some(detail);
    shared.stats.running = false;
}

/// `ns` as `HH:MM:SS`.
fn clock(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn describe_mcap(e: &McapError) -> String {
    if let McapError::Io(io) = e
        && (io.raw_os_error().is_some() || io.kind() != io::ErrorKind::Other)
    {
        return describe_io(io);
    }
    // Write errors can arrive wrapped (in binrw's error, or `io::Error::other`), which keeps
    // the words but not the kind: find the operating system's error number in the chain.
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if let Some(code) = text
            .rsplit_once("(os error ")
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .and_then(|n| n.parse().ok())
        {
            return describe_io(&io::Error::from_raw_os_error(code));
        }
        cause = c.source();
    }
    match e {
        McapError::Io(io) => describe_io(io),
        other => format!("{other} — this is a bug in jaus-ocu's recorder; please report it"),
    }
}
