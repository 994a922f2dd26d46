//! Loads a recording or capture into a [`Vehicle`] (one session per arm: the observer follows
//! every manipulator in the file, the first one focused) on a background thread, with
//! progress; the UI draws what is loaded while the rest arrives.
//!
//! The reader thread (`jaus-replay-read`) reads wire records (file reads, chunk decompression)
//! and hands them over in runs of [`READ_BATCH`]; the loader thread (`jaus-replay-load`) runs
//! them through the [`Observer`] (the same decoder and report mapping as live mode) and applies
//! the updates to the shared session in batches: it takes the write lock once per
//! [`BATCH_RECORDS`] records or [`BATCH_INTERVAL`], whichever comes first, never per datagram,
//! so the UI thread's read lock waits at most one batch. The two stages run on two cores at
//! once (issue 14: a full load at 3 M datagrams/s). Dropping the [`Replay`] stops both.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::observer::Observer;
use super::source::{SourceError, SourceInfo, WireSource};
use crate::model::events::{Note, NotesFile, sidecar_path};
use crate::model::update::Update;
use crate::model::vehicle::{SharedVehicle, Vehicle};
use crate::net::tap::WireRecord;

/// Called when more of the file has been loaded (the GUI passes a repaint request).
pub type LoadWaker = Arc<dyn Fn() + Send + Sync>;

/// Records per batch applied under one write lock.
pub const BATCH_RECORDS: usize = 4096;
/// Longest time between two batches (so a slow source still shows progress).
pub const BATCH_INTERVAL: Duration = Duration::from_millis(20);
/// Records per hand-over from the reader thread to the loader.
pub const READ_BATCH: usize = 1024;
/// Datagrams applied before the session reserves room for the rest of an indexed file
/// ([`Session::reserve_for_rest`]): enough to see every signal's rate.
const RESERVE_AFTER: u64 = 4096;
/// Hand-overs in flight between the reader thread and the loader.
const READ_AHEAD: usize = 8;

/// What the reader thread hands over: records, and where the source stands after them.
struct ReadBatch {
    records: Vec<WireRecord>,
    /// Operator notes read with them.
    notes: Vec<Note>,
    /// Bytes of the file read.
    position: u64,
    /// The source's problems, when they changed.
    problems: Option<Vec<String>>,
    /// The last batch: the source has ended.
    last: bool,
    /// On the last batch, why reading stopped early, if it did.
    stopped: Option<String>,
    /// On the last batch of a file without a JUDP datagram: what it held.
    held: Option<String>,
}

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
    /// Once finished, for a file that held no JUDP datagram: what it held instead ("500
    /// packets, none on UDP 3794; try --port").
    pub held: Option<String>,
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

/// Progress shared with the loader thread, with a condition variable for [`Replay::wait`].
type SharedProgress = Arc<(Mutex<LoadProgress>, Condvar)>;

/// A lock that survives a panicked holder: progress and session stay readable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A file being (or done being) loaded.
pub struct Replay {
    /// The file.
    pub path: PathBuf,
    /// What the file says of itself (known at open: kind, size; from an index: span, counts).
    pub info: SourceInfo,
    /// The session, filled by the loader thread.
    pub session: SharedVehicle,
    /// The time origin, published by the loader once the first record is read (0 before).
    start_ns: Arc<AtomicU64>,
    progress: SharedProgress,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Reads a source to its end through an observer, handing updates over in batches.
struct Loader {
    source: WireSource,
    progress: LoadProgress,
    /// The file (its notes sidecar is beside it).
    path: PathBuf,
}

impl Loader {
    /// Opens the source: the format check and, for MCAP, its summary. Nothing that scans
    /// the file happens here (this runs on the caller's thread, the UI's included).
    fn open(path: &Path, port: u16) -> Result<(Loader, SourceInfo), SourceError> {
        let source = WireSource::open(path, port)?;
        let info = source.info().clone();
        let progress = LoadProgress {
            total_bytes: info.total_bytes,
            ..LoadProgress::default()
        };
        Ok((
            Loader {
                source,
                progress,
                path: path.to_path_buf(),
            },
            info,
        ))
    }

    /// The notes of the sidecar file beside the recording ([`sidecar_path`]), those the
    /// recording does not hold already, as updates; a sidecar that cannot be read is a
    /// problem of the load (the replay goes on without it).
    fn sidecar_notes(
        path: &Path,
        seen: &[(f64, String)],
        updates: &mut Vec<Update>,
        progress: &mut LoadProgress,
    ) {
        let path = sidecar_path(path);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                progress.problems.push(format!(
                    "notes file {}: cannot read it: {e}",
                    path.display()
                ));
                return;
            }
        };
        match NotesFile::parse(&text) {
            Ok(file) => {
                for note in file.notes {
                    let label = note.label();
                    let twin = seen
                        .iter()
                        .any(|(t, l)| *l == label && (t - note.t).abs() < 1e-6);
                    if !twin {
                        updates.push(note.update());
                    }
                }
            }
            Err(e) => progress.problems.push(format!(
                "notes file {}: {e}; its notes are not shown",
                path.display()
            )),
        }
    }

    /// Runs to the end (or until `cancel`, checked before every record: a capture can hold
    /// long stretches of other traffic between two datagrams). `origin` gets the time origin
    /// once the first record settles it; `flush` gets every batch of updates with the
    /// progress so far, and a last one with `finished` set.
    fn run(
        mut self,
        cancel: &AtomicBool,
        origin: impl FnOnce(u64),
        mut flush: impl FnMut(&mut Vec<Update>, &LoadProgress),
    ) {
        let mut updates = Vec::with_capacity(BATCH_RECORDS * 2);
        // The first record settles the time origin (and the metadata written before it has
        // been read by then).
        let first = self.source.next();
        let start_ns = self.source.info().time_origin(first.as_ref());
        origin(start_ns);
        let mut observer = Observer::new(start_ns);
        let mut in_batch = 0usize;
        let mut batch_start = Instant::now();
        let mut last_ns: Option<u64> = None;
        let mut progress = self.progress;
        let path = self.path;
        let (recycle, recycled) = crossbeam_channel::bounded(READ_AHEAD + 2);
        let batches = spawn_reader(self.source, first, recycled);
        let mut stopped = None;
        // The recording's notes, so the sidecar's copies of them are not added twice.
        let mut notes: Vec<(f64, String)> = Vec::new();
        'read: for batch in &batches {
            if let Some(p) = batch.problems {
                progress.problems = p;
            }
            progress.done_bytes = batch.position;
            for note in &batch.notes {
                updates.push(note.update());
                notes.push((note.t, note.label()));
            }
            for rec in &batch.records {
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
                observer.observe(rec, &mut updates);
                last_ns = Some(last_ns.map_or(rec.t_ns, |l| l.max(rec.t_ns)));
                progress.datagrams += 1;
                in_batch += 1;
                // The clock is read every 256 records: cheap, and still well inside the
                // interval.
                if in_batch >= BATCH_RECORDS
                    || (in_batch.is_multiple_of(256) && batch_start.elapsed() >= BATCH_INTERVAL)
                {
                    flush(&mut updates, &progress);
                    updates.clear();
                    in_batch = 0;
                    batch_start = Instant::now();
                }
            }
            // Back to the reader for reuse (dropped if it has enough).
            let _ = recycle.try_send(batch.records);
            if batch.last {
                progress.held.clone_from(&batch.held);
                stopped = Some(batch.stopped);
                break 'read;
            }
        }
        let Some(stopped) = stopped else {
            // The reader ended without a last batch: it was cancelled (or panicked).
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            progress.finished = true;
            progress.stopped = Some("the reader thread failed".to_owned());
            flush(&mut updates, &progress);
            return;
        };
        if let Some(end) = last_ns {
            observer.finish(end, &mut updates);
        }
        Self::sidecar_notes(&path, &notes, &mut updates, &mut progress);
        progress.finished = true;
        progress.stopped = stopped;
        progress.done_bytes = progress.done_bytes.max(progress.total_bytes);
        flush(&mut updates, &progress);
    }
}

/// Starts the thread `jaus-replay-read`: it reads `source` to its end (after `first`, already
/// read) and hands the records over in runs of [`READ_BATCH`], the last one marked. It stops
/// when the receiver is gone (the loader returns at once when cancelled), at most
/// [`READ_AHEAD`] runs later. If the thread cannot start, the channel ends with no last run
/// and the loader reports the failure.
fn spawn_reader(
    mut source: WireSource,
    first: Option<WireRecord>,
    recycled: crossbeam_channel::Receiver<Vec<WireRecord>>,
) -> crossbeam_channel::Receiver<ReadBatch> {
    let (tx, rx) = crossbeam_channel::bounded::<ReadBatch>(READ_AHEAD);
    let spawned = std::thread::Builder::new()
        .name("jaus-replay-read".into())
        .spawn(move || {
            let mut problems_seen = (0usize, None::<String>);
            let mut next = first;
            loop {
                // A run the loader is done with, its records' byte buffers reused: no
                // allocation here and no free on the loader's side per datagram (they were a
                // tenth of each thread's time).
                let mut records = recycled
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(READ_BATCH));
                let mut n = 0;
                if let Some(rec) = next.take() {
                    records.truncate(0);
                    records.push(rec);
                    n = 1;
                }
                while n < READ_BATCH {
                    if n == records.len() {
                        records.push(WireRecord::empty());
                    }
                    if !source.next_into(&mut records[n]) {
                        break;
                    }
                    n += 1;
                }
                records.truncate(n);
                let end = records.len() < READ_BATCH;
                let notes = source.take_notes();
                let problems = source.problems();
                // Past the listed limit the last entry counts the rest: compare it too.
                let changed = problems.len() != problems_seen.0
                    || problems.last() != problems_seen.1.as_ref();
                let batch = ReadBatch {
                    records,
                    notes,
                    position: source.position(),
                    problems: changed.then(|| {
                        problems_seen = (problems.len(), problems.last().cloned());
                        problems.to_vec()
                    }),
                    last: end,
                    stopped: source.stopped().map(str::to_string),
                    held: if end { source.held_no_judp() } else { None },
                };
                if tx.send(batch).is_err() || end {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("replay: cannot start the reader thread: {e}");
    }
    rx
}

/// Marks loading finished even if the loader thread panics, so [`Replay::wait`] returns.
struct FinishGuard(SharedProgress);

impl Drop for FinishGuard {
    fn drop(&mut self) {
        let (m, cv) = &*self.0;
        let mut p = lock(m);
        if !p.finished {
            p.finished = true;
            if p.stopped.is_none() && std::thread::panicking() {
                p.stopped = Some(
                    "loading failed with an internal error (a bug: please report it with the file)"
                        .into(),
                );
            }
        }
        cv.notify_all();
    }
}

impl Replay {
    /// Opens `path` (captures filtered to UDP `port`) and starts loading it on the thread
    /// `jaus-replay-load`; `waker` is called as batches arrive. Fails at once only if the file
    /// cannot be read or is not a format we read.
    pub fn open(path: &Path, port: u16, waker: Option<LoadWaker>) -> Result<Replay, SourceError> {
        Self::open_within(path, port, waker, None)
    }

    /// [`Replay::open`] into a session of at most `budget` bytes (`None`: unbounded): a file
    /// larger than that loads all the same, its far past held as a min/max envelope
    /// (`Vehicle::set_memory_budget`); [`read_window`] reads exact values back from the file.
    pub fn open_within(
        path: &Path,
        port: u16,
        waker: Option<LoadWaker>,
        budget: Option<usize>,
    ) -> Result<Replay, SourceError> {
        let (loader, info) = Loader::open(path, port)?;
        let (datagram_count, total_bytes) = (info.datagram_count, info.total_bytes);
        let start_ns = Arc::new(AtomicU64::new(0));
        let mut vehicle = Vehicle::new();
        vehicle.set_memory_budget(budget);
        let session: SharedVehicle = Arc::new(RwLock::new(vehicle));
        let progress: SharedProgress =
            Arc::new((Mutex::new(loader.progress.clone()), Condvar::new()));
        let cancel = Arc::new(AtomicBool::new(false));
        let thread = {
            let (session, progress, cancel) = (session.clone(), progress.clone(), cancel.clone());
            let origin = start_ns.clone();
            std::thread::Builder::new()
                .name("jaus-replay-load".into())
                .spawn(move || {
                    let _guard = FinishGuard(progress.clone());
                    let origin = |ns| origin.store(ns, Ordering::Relaxed);
                    let mut reserved = false;
                    loader.run(&cancel, origin, |updates, p| {
                        {
                            let mut s = session
                                .write()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            for u in updates.iter() {
                                s.apply(u);
                            }
                            // Once enough has been seen to know the rates: room for the rest
                            // of the file (its index says how many datagrams it holds).
                            if !reserved
                                && p.datagrams >= RESERVE_AFTER
                                && let Some(total) = datagram_count
                            {
                                reserved = true;
                                // Every datagram takes at least a byte of the file.
                                s.reserve_for_rest(p.datagrams, total.min(total_bytes));
                            }
                            if p.finished && reserved {
                                s.trim_reserve();
                            }
                        }
                        // Wake before publishing: once `wait` sees the end, the last wake
                        // has happened (the UI's wake is a repaint a few ms later, by when
                        // the progress is published).
                        if let Some(w) = &waker {
                            w();
                        }
                        {
                            let (m, cv) = &*progress;
                            *lock(m) = p.clone();
                            cv.notify_all();
                        }
                    });
                })
                .map_err(|error| SourceError::Io {
                    path: path.to_path_buf(),
                    error,
                })?
        };
        Ok(Replay {
            path: path.to_path_buf(),
            info,
            session,
            start_ns,
            progress,
            cancel,
            thread: Some(thread),
        })
    }

    /// How far loading has come.
    pub fn progress(&self) -> LoadProgress {
        lock(&self.progress.0).clone()
    }

    /// Blocks until loading has ended.
    pub fn wait(&self) -> LoadProgress {
        let (m, cv) = &*self.progress;
        let mut p = lock(m);
        while !p.finished {
            p = cv
                .wait(p)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        p.clone()
    }

    /// Time origin of the session's times, ns since the Unix epoch (for wall-clock display);
    /// 0 until the loader has read the first record (the first batch).
    pub fn start_ns(&self) -> u64 {
        self.start_ns.load(Ordering::Relaxed)
    }

    /// Loads `path` completely before returning (for `inspect`, tests and benchmarks).
    pub fn load_blocking(path: &Path, port: u16) -> Result<(Vehicle, LoadProgress), SourceError> {
        let (loader, _) = Loader::open(path, port)?;
        let mut session = Vehicle::new();
        let mut last = LoadProgress::default();
        loader.run(
            &AtomicBool::new(false),
            |_| {},
            |updates, p| {
                for u in updates.iter() {
                    session.apply(u);
                }
                last = p.clone();
            },
        );
        Ok((session, last))
    }
}

/// Whether `u` is a sample of a sampled signal (what a session keeps in its histories).
fn is_sample(u: &Update) -> bool {
    u.coalesce_key().is_some()
}

/// Reads `path` again for the exact samples of `[t0, t1]` (session seconds): a replay whose
/// far past is held as an envelope (its session is over budget) gets its exact values around
/// the cursor from here. The vehicle returned holds every discrete fact of the file up to
/// `t1` (specification, state, control, marks: its `state_at` is complete but for the sample
/// counts, which count the window's samples only) and only the samples inside the window, so it is small whatever the file's length. Reading starts at
/// the file's beginning (the observer needs the discrete state from there) and stops just
/// past `t1`; `cancel` ends it early (`None` is returned). `progress` hears how far through the
/// window's end the read is, 0 to 1.
pub fn read_window(
    path: &Path,
    port: u16,
    (t0, t1): (f64, f64),
    cancel: &AtomicBool,
    mut progress: impl FnMut(f32),
) -> Result<Option<Vehicle>, SourceError> {
    let (loader, _) = Loader::open(path, port)?;
    let mut vehicle = Vehicle::new();
    // Stopping early: the flush callback raises its own flag (the caller's is only read).
    let past_end = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    loader.run(
        &stop,
        |_| {},
        |updates, _| {
            let mut last = None::<f64>;
            for u in updates.iter() {
                let t = u.t();
                last = Some(last.map_or(t, |l| l.max(t)));
                if !is_sample(u) || (t0..=t1).contains(&t) {
                    vehicle.apply(u);
                }
            }
            if let Some(t) = last {
                progress((t / t1.max(f64::EPSILON)).clamp(0.0, 1.0) as f32);
                // A second past the end: records are in time order but for the jitter of
                // the receive path (the recording's log time is the receive time).
                if t > t1 + 1.0 {
                    past_end.store(true, Ordering::Relaxed);
                }
            }
            if past_end.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
        },
    );
    if cancel.load(Ordering::Relaxed) {
        return Ok(None);
    }
    vehicle.trim_reserve();
    Ok(Some(vehicle))
}

impl Drop for Replay {
    fn drop(&mut self) {
        // The loader sees the flag before its next record and ends on its own; it holds
        // only shared handles, so the UI thread does not wait for it (a read of the file
        // can take a while on a slow disk).
        self.cancel.store(true, Ordering::Relaxed);
        drop(self.thread.take());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::jaus::JausId;
    use crate::jaus::judp::{self, Header};
    use crate::jaus::manipulator::{JointValue, ReportJointPositions};
    use crate::model::update::{ManagementState, MarkKind};
    use crate::net::tap::Direction;
    use crate::net::tap::WireRecord;
    use crate::record::recorder::{Recorder, RecorderConfig};

    const SAE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/SAE_Management_PacketCapture.pcap"
    );

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jaus-ocu-player-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// Records one joint-positions datagram from the arm per (time, joints), then stops.
    fn record_positions(recorder: Recorder, samples: impl Iterator<Item = (u64, Vec<JointValue>)>) {
        let tx = recorder.sender();
        let (sim, ocu) = (JausId::new(126, 1, 10), JausId::new(200, 1, 1));
        for (seq, (t_ns, joint_positions)) in (1u16..).zip(samples) {
            let m: crate::jaus::Message = ReportJointPositions { joint_positions }.into();
            tx.send(WireRecord {
                t_ns,
                direction: Direction::Rx,
                peer: "127.0.0.1:3794".parse().unwrap(),
                bytes: judp::single(&Header::new(ocu, sim, seq), &m.emit().unwrap()).unwrap(),
                latched: None,
            })
            .unwrap();
        }
        drop(tx);
        recorder.stop().unwrap();
    }

    fn marks(s: &Vehicle) -> Vec<(f64, MarkKind, String)> {
        s.focused()
            .marks
            .iter()
            .map(|m| (m.t, m.kind, m.label.clone()))
            .collect()
    }

    #[test]
    fn loads_a_capture_completely_with_its_marks() {
        let (session, progress) = Replay::load_blocking(Path::new(SAE), 3794).unwrap();
        assert!(progress.finished);
        assert_eq!(progress.datagrams, 22);
        assert_eq!(progress.stopped, None);
        assert_eq!(progress.done_bytes, progress.total_bytes);
        assert!(progress.total_bytes > 0);
        let kinds: Vec<MarkKind> = session.focused().marks.iter().map(|m| m.kind).collect();
        for kind in [
            MarkKind::Control,
            MarkKind::Status,
            MarkKind::Emergency,
            MarkKind::Gap,
        ] {
            assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
        }
        let (first, last) = session.span().unwrap();
        assert_eq!(first, 0.0, "times count from the first record");
        assert!((last - 92.046).abs() < 0.01, "{last}");
        assert_eq!(session.focused().latest.status, ManagementState::Standby);
    }

    #[test]
    fn background_load_equals_blocking_load_and_wakes_the_caller() {
        let wakes = Arc::new(AtomicUsize::new(0));
        let waker: LoadWaker = {
            let wakes = wakes.clone();
            Arc::new(move || {
                wakes.fetch_add(1, Ordering::Relaxed);
            })
        };
        let replay = Replay::open(Path::new(SAE), 3794, Some(waker)).unwrap();
        let progress = replay.wait();
        assert!(progress.finished);
        assert_eq!(progress.fraction(), 1.0);
        let (blocking, _) = Replay::load_blocking(Path::new(SAE), 3794).unwrap();
        let session = replay.session.clone();
        let start_ns = replay.start_ns();
        let total_bytes = replay.info.total_bytes;
        // The loader woke the caller before it published the end.
        drop(replay);
        assert!(wakes.load(Ordering::Relaxed) >= 1);
        let loaded = session.read().unwrap();
        assert_eq!(marks(&loaded), marks(&blocking));
        assert_eq!(
            format!("{:?}", loaded.focused().state_at(63.5)),
            format!("{:?}", blocking.focused().state_at(63.5))
        );
        // No metadata in a capture: the first datagram is t = 0 (frame 1 of the capture).
        let first = WireSource::open(Path::new(SAE), 3794)
            .unwrap()
            .next()
            .unwrap();
        assert_eq!(start_ns, first.t_ns);
        assert_eq!(total_bytes, progress.total_bytes);
    }

    #[test]
    fn a_recordings_session_start_is_the_time_origin() {
        let path = temp_path("origin.mcap");
        let start_ns = 1_700_000_000_000_000_000u64;
        let recorder = Recorder::start(RecorderConfig {
            decoded: false,
            ..RecorderConfig::new(path.clone(), start_ns)
        })
        .unwrap();
        // The first datagram 1.5 s after the session started.
        record_positions(
            recorder,
            (0..50u16).map(|k| {
                (
                    start_ns + 1_500_000_000 + u64::from(k) * 10_000_000,
                    vec![JointValue::revolute(f64::from(k) * 0.01)],
                )
            }),
        );

        let replay = Replay::open(&path, 3794, None).unwrap();
        let progress = replay.wait();
        assert_eq!(progress.datagrams, 50);
        assert_eq!(replay.start_ns(), start_ns);
        let s = replay.session.read().unwrap();
        assert_eq!(s.focused().positions.len(), 50);
        assert_eq!(s.focused().positions.span(), Some((1.5, 1.99)));
        let at = s.focused().state_at(1.755).positions.unwrap();
        assert_eq!(at.t, 1.75);
        assert!((at.value[0] - 0.25).abs() < 1e-6);
        drop(s);
        drop(replay);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_window_read_back_holds_exact_samples_of_its_range_only_and_stops_past_its_end() {
        let path = temp_path("window.mcap");
        let start_ns = 1_700_000_000_000_000_000u64;
        let recorder = Recorder::start(RecorderConfig::new(path.clone(), start_ns)).unwrap();
        // 100 s at 100 Hz.
        record_positions(
            recorder,
            (0..10_000u16).map(|k| {
                (
                    start_ns + u64::from(k) * 10_000_000,
                    vec![JointValue::revolute(f64::from(k % 500) * 0.001)],
                )
            }),
        );
        let (plain, _) = Replay::load_blocking(&path, 3794).unwrap();
        let mut last = 0.0f32;
        let window = read_window(&path, 3794, (40.0, 50.0), &AtomicBool::new(false), |f| {
            last = f;
        })
        .unwrap()
        .unwrap();
        let held = &window.focused().positions;
        let (a, b) = held.span().unwrap();
        assert!(
            (40.0..40.02).contains(&a) && (49.98..=50.0).contains(&b),
            "{a}..{b}"
        );
        // Every sample of the window, exactly; the discrete state is there too (the sample
        // counts count the window's samples only).
        for t in [40.0, 43.217, 45.5, 49.99] {
            let (mut got, mut want) = (window.focused().state_at(t), plain.focused().state_at(t));
            got.counts.clear();
            want.counts.clear();
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{t}");
        }
        // It stopped a batch or so past the end, not at the file's end.
        assert!(last >= 1.0, "{last}");
        assert!(window.focused().discrete_updates() <= plain.focused().discrete_updates());
        // Cancelled: nothing.
        let cancelled = read_window(&path, 3794, (40.0, 50.0), &AtomicBool::new(true), |_| {});
        assert!(matches!(cancelled, Ok(None)));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_long_indexed_recording_loads_equal_to_a_plain_load_with_no_room_to_spare() {
        // More datagrams than RESERVE_AFTER, so the background load reserves room for the rest
        // from the file's index (tests/session.rs proves the reservation itself); the
        // blocking load grows as it goes.
        let path = temp_path("reserve.mcap");
        let start_ns = 1_700_000_000_000_000_000u64;
        let recorder = Recorder::start(RecorderConfig::new(path.clone(), start_ns)).unwrap();
        let n = 3 * RESERVE_AFTER as u16;
        record_positions(
            recorder,
            (0..n).map(|k| {
                (
                    start_ns + u64::from(k) * 1_000_000,
                    vec![
                        JointValue::revolute(f64::from(k % 300) * 0.01),
                        JointValue::revolute(-0.5),
                    ],
                )
            }),
        );

        let replay = Replay::open(&path, 3794, None).unwrap();
        assert_eq!(replay.info.datagram_count, Some(u64::from(n)));
        let progress = replay.wait();
        assert_eq!(progress.datagrams, u64::from(n));
        let (plain, _) = Replay::load_blocking(&path, 3794).unwrap();
        let s = replay.session.read().unwrap();
        assert_eq!(s.focused().positions.len(), usize::from(n));
        assert_eq!(
            s.focused().positions.times(),
            plain.focused().positions.times()
        );
        for t in [0.0, 1.234, 5.5, 12.287] {
            assert_eq!(
                format!("{:?}", s.focused().state_at(t)),
                format!("{:?}", plain.focused().state_at(t))
            );
        }
        // No room left over from reserving (or, without an index, from doubling): trimmed
        // at the end when more than a sixteenth is unused.
        let (loaded, doubled) = (
            s.focused().positions.memory_bytes(),
            plain.focused().positions.memory_bytes(),
        );
        assert!(loaded * 5 < doubled * 4, "{loaded} vs {doubled} bytes");
        drop(s);
        drop(replay);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn unreadable_files_fail_at_open_with_the_path() {
        let missing = temp_path("missing.mcap");
        let e = Replay::open(&missing, 3794, None).unwrap_err();
        assert!(e.to_string().contains("missing.mcap"), "{e}");
        let junk = temp_path("junk.bin");
        std::fs::write(&junk, b"not a recording at all").unwrap();
        assert!(matches!(
            Replay::load_blocking(&junk, 3794),
            Err(SourceError::UnknownFormat { .. })
        ));
    }
}
