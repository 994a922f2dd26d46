//! The MCAP recorder and the wire source that reads recordings and captures back: round trips,
//! the file as the `mcap` crate's own readers see it, crash safety through periodic flushes,
//! damaged files, write failures, and format sniffing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::collections::BTreeMap;
use std::io::{self, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jaus_ocu::jaus::JausId;
use jaus_ocu::jaus::judp::{self, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions};
use jaus_ocu::jaus::message::Message;
use jaus_ocu::net::tap::{Direction, Tap, WireRecord};
use jaus_ocu::record::format::{self, DecodedTopic};
use jaus_ocu::record::recorder::{RecordCompression, Recorder, RecorderConfig};
use jaus_ocu::record::source::{SourceError, SourceKind, WireSource};
use jaus_ocu::sim::arm_file::ArmFile;

/// 2025-01-01T00:00:00Z.
const START_NS: u64 = 1_735_689_600_000_000_000;

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recorder-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}-{}.mcap", std::process::id()))
}

fn peers() -> [SocketAddr; 3] {
    [
        "127.0.0.1:3794".parse().unwrap(),
        "192.168.10.20:40000".parse().unwrap(),
        "[fe80::1]:3794".parse().unwrap(),
    ]
}

/// `n` records over three peers in both directions, payloads of varying length and content,
/// 1 ms apart.
fn records(n: usize) -> Vec<WireRecord> {
    let peers = peers();
    (0..n)
        .map(|i| WireRecord {
            t_ns: START_NS + 1_000_000 * i as u64 + (i as u64 % 7),
            direction: if i % 3 == 0 {
                Direction::Tx
            } else {
                Direction::Rx
            },
            peer: peers[i % peers.len()],
            bytes: (0..(20 + i % 90))
                .map(|k| (i.wrapping_mul(31) ^ k) as u8)
                .collect(),
            latched: None,
        })
        .collect()
}

fn raw_config(path: &Path) -> RecorderConfig {
    let mut cfg = RecorderConfig::new(path.to_path_buf(), START_NS);
    cfg.decoded = false;
    cfg
}

fn record_all(cfg: RecorderConfig, recs: &[WireRecord]) {
    let recorder = Recorder::start(cfg).unwrap();
    let tx = recorder.sender();
    for r in recs {
        tx.send(r.clone()).unwrap();
    }
    let stats = recorder.stop().unwrap();
    assert_eq!(stats.rx + stats.tx, recs.len() as u64);
    assert!(!stats.running);
    assert_eq!(stats.error, None);
}

fn read_all(path: &Path) -> (Vec<WireRecord>, WireSource) {
    let mut src = WireSource::open(path, 3794).unwrap();
    let recs = src.by_ref().collect();
    (recs, src)
}

/// Whether `got` is `all` with some records left out, order kept.
fn is_subsequence(got: &[WireRecord], all: &[WireRecord]) -> bool {
    let mut it = all.iter();
    got.iter().all(|g| it.any(|a| a == g))
}

#[test]
fn round_trip_yields_the_same_records_in_order_with_session_metadata() {
    let path = temp("round-trip");
    let recs = records(10_000);
    let mut cfg = raw_config(&path);
    cfg.metadata.insert("ocu_id".into(), "200.1.1".into());
    record_all(cfg, &recs);

    let (got, src) = read_all(&path);
    assert_eq!(got.len(), recs.len());
    assert!(got == recs, "records differ after the round trip");
    assert_eq!(src.stopped(), None);
    assert!(src.problems().is_empty(), "{:?}", src.problems());
    let info = src.info();
    assert_eq!(info.kind, Some(SourceKind::Mcap));
    assert!(info.complete);
    assert_eq!(info.datagram_count, Some(recs.len() as u64));
    assert_eq!(info.start_ns, Some(recs[0].t_ns));
    assert_eq!(info.end_ns, Some(recs.last().unwrap().t_ns));
    assert_eq!(src.position(), info.total_bytes);
    let session = &info.metadata[format::SESSION_METADATA];
    assert_eq!(session[format::KEY_SESSION_START_NS], START_NS.to_string());
    assert_eq!(session[format::KEY_OCU_VERSION], env!("CARGO_PKG_VERSION"));
    assert_eq!(session[format::KEY_START_TIME], "2025-01-01T00:00:00.000Z");
    assert_eq!(session["ocu_id"], "200.1.1");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn every_compression_round_trips() {
    for (name, compression) in [
        ("none", RecordCompression::None),
        ("lz4", RecordCompression::Lz4),
        ("zstd", RecordCompression::Zstd),
    ] {
        let path = temp(&format!("compression-{name}"));
        let recs = records(3_000);
        let mut cfg = raw_config(&path);
        cfg.compression = compression;
        cfg.message_indexes = compression == RecordCompression::Lz4;
        cfg.chunk_size = 32 * 1024;
        record_all(cfg, &recs);
        let (got, src) = read_all(&path);
        assert!(got == recs, "{name}: records differ");
        assert_eq!(src.stopped(), None, "{name}");
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn the_mcap_crate_reads_the_file_with_the_expected_channels_and_counts() {
    let path = temp("mcap-crate");
    let recs = records(5_000);
    record_all(raw_config(&path), &recs);
    let bytes = std::fs::read(&path).unwrap();

    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for r in &recs {
        *expected
            .entry(format::raw_topic(r.direction, r.peer))
            .or_default() += 1;
    }
    let stats = summary.stats.as_ref().unwrap();
    assert_eq!(stats.message_count, recs.len() as u64);
    assert!(stats.chunk_count >= 1);
    assert!(!summary.chunk_indexes.is_empty());
    let mut counted = BTreeMap::new();
    for (id, channel) in &summary.channels {
        assert_eq!(channel.message_encoding, format::RAW_ENCODING);
        assert!(channel.schema.is_none(), "raw channels have no schema");
        let (d, p) = format::parse_raw_channel("", &channel.metadata).expect("metadata");
        assert_eq!(channel.topic, format::raw_topic(d, p));
        counted.insert(channel.topic.clone(), stats.channel_message_counts[id]);
    }
    assert_eq!(counted, expected);
    let names: Vec<_> = summary
        .metadata_indexes
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        names,
        [format::SESSION_METADATA, format::SESSION_END_METADATA]
    );

    let mut n = 0;
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let r = &recs[n];
        assert_eq!(m.channel.topic, format::raw_topic(r.direction, r.peer));
        assert_eq!(m.log_time, r.t_ns);
        assert_eq!(m.publish_time, r.t_ns);
        assert_eq!(&*m.data, &r.bytes[..]);
        n += 1;
    }
    assert_eq!(n, recs.len());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_copy_taken_while_recording_holds_everything_older_than_a_flush() {
    let path = temp("flush");
    let recs = records(2_000);
    let mut cfg = raw_config(&path);
    cfg.flush_interval = Duration::from_millis(100);
    let recorder = Recorder::start(cfg).unwrap();
    let tx = recorder.sender();
    for r in &recs {
        tx.send(r.clone()).unwrap();
    }
    // Nothing more arrives: the flush must happen on the thread's own clock. Poll a copy
    // (a loaded machine may delay the thread; only "eventually, without stop" matters).
    let copy = temp("flush-copy");
    let deadline = Instant::now() + Duration::from_secs(10);
    let (got, src) = loop {
        std::thread::sleep(Duration::from_millis(50));
        let stats = recorder.stats();
        assert!(stats.running);
        std::fs::copy(&path, &copy).unwrap();
        let (got, src) = read_all(&copy);
        // The figures are published after the write they count: a copy can hold every record
        // while the figures read just before it do not count them yet.
        let counted = stats.rx + stats.tx == recs.len() as u64;
        if (got.len() == recs.len() && counted) || Instant::now() > deadline {
            assert_eq!(stats.rx + stats.tx, recs.len() as u64);
            assert_eq!(stats.last_ns, recs.last().unwrap().t_ns);
            break (got, src);
        }
    };
    assert!(
        got == recs,
        "{} of {} records in the copy",
        got.len(),
        recs.len()
    );
    assert!(!src.info().complete);
    let why = src.stopped().expect("a copy without summary says so");
    assert!(why.contains("without its summary"), "{why}");
    assert!(why.contains("2000 datagrams read"), "{why}");
    assert!(src.info().metadata.contains_key(format::SESSION_METADATA));

    recorder.stop().unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&copy).unwrap();
}

/// A recording with many small chunks.
fn chunky(name: &str, n: usize) -> (PathBuf, Vec<WireRecord>, Vec<u8>) {
    let path = temp(name);
    let recs = records(n);
    let mut cfg = raw_config(&path);
    cfg.chunk_size = 16 * 1024;
    record_all(cfg, &recs);
    let bytes = std::fs::read(&path).unwrap();
    (path, recs, bytes)
}

#[test]
fn truncated_copies_yield_a_prefix_and_say_where_they_stop() {
    let (path, recs, bytes) = chunky("truncated", 20_000);
    let len = bytes.len();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let chunk = &summary.chunk_indexes[summary.chunk_indexes.len() / 2];
    let inside_chunk = (chunk.chunk_start_offset + chunk.chunk_length / 2) as usize;
    let cut_path = temp("truncated-cut");
    for cut in [
        9,
        30,
        200,
        len / 10,
        len / 3,
        inside_chunk,
        len / 2,
        len * 4 / 5,
        len - 100,
        len - 1,
    ] {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let (got, src) = read_all(&cut_path);
        assert!(
            got[..] == recs[..got.len()],
            "cut at {cut}: not a prefix of the recording"
        );
        if got.len() < recs.len() {
            let why = src
                .stopped()
                .unwrap_or_else(|| panic!("cut at {cut}: {} records and no reason", got.len()));
            assert!(why.contains(&format!("{cut}")), "cut at {cut}: {why}");
            assert!(
                why.contains(&format!("{} datagrams read", got.len())),
                "cut at {cut}: {why}"
            );
        }
        assert!(!src.info().complete, "cut at {cut}");
        if cut == inside_chunk {
            let why = src.stopped().unwrap();
            assert!(
                why.contains(&format!(
                    "truncated at byte {cut} inside a chunk that starts at byte {}",
                    chunk.chunk_start_offset
                )),
                "{why}"
            );
            assert!(why.contains("stopped abruptly"), "{why}");
            assert!(!got.is_empty());
        }
    }
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&cut_path).unwrap();
}

#[test]
fn a_chunk_cut_while_being_written_says_it_was_never_finished() {
    // The writer streams a chunk behind a placeholder header whose length is all ones, and
    // fills it in when the chunk is done: a killed recorder leaves exactly this.
    let (path, recs, mut bytes) = chunky("unfinished", 5_000);
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let chunk = summary.chunk_indexes[summary.chunk_indexes.len() / 2].clone();
    let at = chunk.chunk_start_offset as usize;
    bytes[at + 1..at + 9].copy_from_slice(&u64::MAX.to_le_bytes());
    let cut = at + chunk.chunk_length as usize / 2;
    let killed = temp("unfinished-copy");
    std::fs::write(&killed, &bytes[..cut]).unwrap();
    let (got, src) = read_all(&killed);
    let before: Vec<_> = recs
        .iter()
        .filter(|r| r.t_ns < chunk.message_start_time)
        .cloned()
        .collect();
    assert!(
        got == before,
        "{} records, {} before the chunk",
        got.len(),
        before.len()
    );
    let why = src.stopped().unwrap();
    assert!(
        why.contains(&format!(
            "truncated at byte {cut} inside a chunk that starts at byte {at} and was never \
             finished"
        )),
        "{why}"
    );
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&killed).unwrap();
}

#[test]
fn a_corrupt_chunk_is_skipped_and_reported_and_reading_goes_on() {
    let (path, recs, mut bytes) = chunky("corrupt", 20_000);
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    assert!(summary.chunk_indexes.len() > 4);
    let chunk = summary.chunk_indexes[summary.chunk_indexes.len() / 2].clone();
    let at = (chunk.chunk_start_offset + chunk.chunk_length / 2) as usize;
    bytes[at] ^= 0x5a;
    let bad = temp("corrupt-copy");
    std::fs::write(&bad, &bytes).unwrap();

    // Before the damage: every chunk decompressed whole (the fast path), the same records.
    let (intact, src) = read_all(&path);
    assert!(intact == recs);
    assert_eq!(src.chunks_read_whole(), summary.chunk_indexes.len() as u64);

    let (got, src) = read_all(&bad);
    // The damaged chunk alone is left to the streaming reader, which reports it.
    assert_eq!(
        src.chunks_read_whole(),
        summary.chunk_indexes.len() as u64 - 1
    );
    let expected: Vec<_> = recs
        .iter()
        .filter(|r| !(chunk.message_start_time..=chunk.message_end_time).contains(&r.t_ns))
        .cloned()
        .collect();
    assert!(expected.len() < recs.len());
    assert!(
        got == expected,
        "{} records, expected {}",
        got.len(),
        expected.len()
    );
    assert_eq!(src.stopped(), None);
    assert_eq!(src.problems().len(), 1, "{:?}", src.problems());
    let p = &src.problems()[0];
    assert!(
        p.contains(&format!("chunk at byte {}", chunk.chunk_start_offset)) && p.contains("skipped"),
        "{p}"
    );
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&bad).unwrap();
}

#[test]
fn any_flipped_byte_yields_a_subsequence_without_panicking() {
    let (path, recs, bytes) = chunky("flipped", 2_000);
    let bad = temp("flipped-copy");
    let step = (bytes.len() / 300).max(1);
    for at in (0..bytes.len()).step_by(step) {
        let mut b = bytes.clone();
        b[at] ^= 0xff;
        std::fs::write(&bad, &b).unwrap();
        let Ok(mut src) = WireSource::open(&bad, 3794) else {
            assert!(at < 8, "only the magic decides the format (byte {at})");
            continue;
        };
        let got: Vec<_> = src.by_ref().collect();
        assert!(
            is_subsequence(&got, &recs),
            "flipped byte {at}: records that were never recorded"
        );
        if got.len() < recs.len() {
            assert!(
                src.stopped().is_some() || !src.problems().is_empty(),
                "flipped byte {at}: {} records missing without a word",
                recs.len() - got.len()
            );
        }
    }
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&bad).unwrap();
}

#[test]
fn start_in_a_missing_directory_fails_naming_the_path() {
    let path = Path::new("/nonexistent-jaus-ocu-dir/session.mcap");
    let err = Recorder::start(RecorderConfig::new(path.to_path_buf(), START_NS)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("/nonexistent-jaus-ocu-dir/session.mcap"),
        "{msg}"
    );
    assert!(msg.contains("No such file or directory"), "{msg}");
    assert!(msg.contains("create it or choose another path"), "{msg}");
}

#[test]
fn recording_to_a_full_device_fails_with_a_clear_message() {
    let path = Path::new("/dev/full");
    if !path.exists() {
        eprintln!("no /dev/full here: skipped");
        return;
    }
    let mut cfg = RecorderConfig::new(path.to_path_buf(), START_NS);
    cfg.decoded = false;
    let msg = match Recorder::start(cfg) {
        // The header and session metadata are flushed at start, so this is expected.
        Err(e) => e.to_string(),
        Ok(recorder) => {
            let tx = recorder.sender();
            for r in records(10) {
                let _ = tx.send(r);
            }
            recorder.stop().unwrap_err().to_string()
        }
    };
    assert!(msg.contains("/dev/full"), "{msg}");
    assert!(msg.contains("No space left on device"), "{msg}");
    assert!(msg.contains("free space or choose another disk"), "{msg}");
}

/// A file that starts refusing writes (as a full disk does) when told to.
struct FillingDisk {
    file: std::fs::File,
    full: Arc<AtomicBool>,
}

impl Write for FillingDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.full.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(28));
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Seek for FillingDisk {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_disk_filling_up_stops_recording_with_a_clear_message_and_keeps_what_was_flushed() {
    let path = temp("disk-full");
    let full = Arc::new(AtomicBool::new(false));
    let sink = FillingDisk {
        file: std::fs::File::create(&path).unwrap(),
        full: full.clone(),
    };
    let mut cfg = raw_config(&path);
    cfg.flush_interval = Duration::from_millis(50);
    let recorder = Recorder::start_with_sink(cfg, sink).unwrap();
    let tap = Tap::new();
    tap.connect(recorder.sender());
    let recs = records(3_000);
    for r in &recs[..1_000] {
        tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
    }
    let flushed = std::fs::metadata(&path).unwrap().len();
    wait_until("the first flush", || {
        std::fs::metadata(&path).unwrap().len() > flushed
            && recorder.stats().rx + recorder.stats().tx == 1_000
    });
    // All of them flushed: the disk fills up after them.
    wait_until("the flush of the first 1000 datagrams", || {
        WireSource::open(&path, 3794).is_ok_and(|mut src| src.by_ref().count() == 1_000)
    });
    full.store(true, Ordering::SeqCst);
    for r in &recs[1_000..] {
        tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
    }
    wait_until("the recorder to stop", || !recorder.stats().running);
    let stats = recorder.stats();
    let err = stats.error.clone().expect("an error in the stats");
    assert!(
        err.starts_with(&format!("recording stopped: {}: ", path.display())),
        "{err}"
    );
    assert!(
        err.contains("No space left on device — free space or choose another disk"),
        "{err}"
    );
    assert!(
        err.contains("1000 datagrams recorded up to 00:00:00 (session time) are readable"),
        "{err}"
    );
    // The network side's tap lets go of a recorder that has gone away.
    wait_until("the tap to disconnect", || {
        tap.offer(
            recs[0].t_ns,
            recs[0].direction,
            recs[0].peer,
            &recs[0].bytes,
        );
        !tap.is_connected()
    });
    let stop = recorder.stop().unwrap_err().to_string();
    assert!(stop.contains("No space left on device"), "{stop}");

    let (got, src) = read_all(&path);
    assert!(got[..] == recs[..1_000], "{} records readable", got.len());
    assert!(src.stopped().is_some());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn dropping_a_recorder_without_stop_still_finishes_the_file() {
    let path = temp("dropped");
    let recs = records(500);
    {
        let recorder = Recorder::start(raw_config(&path)).unwrap();
        let tx = recorder.sender();
        for r in &recs {
            tx.send(r.clone()).unwrap();
        }
    }
    let (got, src) = read_all(&path);
    assert!(got == recs);
    assert!(src.info().complete);
    assert_eq!(src.stopped(), None);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_sae_capture_yields_its_22_datagrams_as_received() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/SAE_Management_PacketCapture.pcap");
    let (got, src) = read_all(&path);
    assert_eq!(got.len(), 22);
    assert_eq!(src.info().kind, Some(SourceKind::Pcap));
    assert_eq!(src.stopped(), None);
    assert!(got.iter().all(|r| r.direction == Direction::Rx));
    assert!(got.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(
        got[0].t_ns > 1_000_000_000_000_000_000,
        "Unix ns: {}",
        got[0].t_ns
    );
    assert_eq!(src.position(), src.info().total_bytes);
    assert!(got.iter().all(|r| !r.bytes.is_empty()));
}

/// The SAE capture's link type and frames: (seconds, microseconds, frame bytes).
fn sae_frames() -> (u32, Vec<(u32, u32, Vec<u8>)>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/SAE_Management_PacketCapture.pcap");
    let b = std::fs::read(path).unwrap();
    let u32le = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(u32le(0), 0xa1b2_c3d4, "a little-endian microsecond pcap");
    let mut frames = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let len = u32le(at + 8) as usize;
        frames.push((u32le(at), u32le(at + 4), b[at + 16..at + 16 + len].to_vec()));
        at += 16 + len;
    }
    (u32le(20), frames)
}

#[test]
fn captures_are_recognised_in_every_pcap_flavour_and_pcapng() {
    let (link, frames) = sae_frames();
    let (reference, _) = read_all(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/SAE_Management_PacketCapture.pcap"),
    );
    let pcap = |big: bool, nanos: bool| {
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut out = Vec::new();
        out.extend(w32(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
        out.extend(w16(2));
        out.extend(w16(4));
        out.extend(w32(0));
        out.extend(w32(0));
        out.extend(w32(65_535));
        out.extend(w32(link));
        for (s, us, f) in &frames {
            out.extend(w32(*s));
            out.extend(w32(if nanos { us * 1000 } else { *us }));
            out.extend(w32(f.len() as u32));
            out.extend(w32(f.len() as u32));
            out.extend(f);
        }
        out
    };
    let pcapng = {
        let block = |out: &mut Vec<u8>, kind: u32, body: &[u8]| {
            let len = (12 + body.len().div_ceil(4) * 4) as u32;
            out.extend(kind.to_le_bytes());
            out.extend(len.to_le_bytes());
            out.extend(body);
            out.resize(out.len() + (4 - body.len() % 4) % 4, 0);
            out.extend(len.to_le_bytes());
        };
        let mut out = Vec::new();
        let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
        shb.extend(1u16.to_le_bytes());
        shb.extend(0u16.to_le_bytes());
        shb.extend((-1i64).to_le_bytes());
        block(&mut out, 0x0a0d_0d0a, &shb);
        let mut idb = (link as u16).to_le_bytes().to_vec();
        idb.extend(0u16.to_le_bytes());
        idb.extend(65_535u32.to_le_bytes());
        block(&mut out, 1, &idb);
        for (s, us, f) in &frames {
            let ts = u64::from(*s) * 1_000_000 + u64::from(*us);
            let mut epb = 0u32.to_le_bytes().to_vec();
            epb.extend(((ts >> 32) as u32).to_le_bytes());
            epb.extend((ts as u32).to_le_bytes());
            epb.extend((f.len() as u32).to_le_bytes());
            epb.extend((f.len() as u32).to_le_bytes());
            epb.extend(f);
            block(&mut out, 6, &epb);
        }
        out
    };
    let path = temp("flavour").with_extension("bin");
    for (name, bytes, kind) in [
        ("pcap big-endian", pcap(true, false), SourceKind::Pcap),
        ("pcap nanoseconds", pcap(false, true), SourceKind::Pcap),
        (
            "pcap big-endian nanoseconds",
            pcap(true, true),
            SourceKind::Pcap,
        ),
        ("pcapng", pcapng, SourceKind::Pcapng),
    ] {
        std::fs::write(&path, bytes).unwrap();
        let (got, src) = read_all(&path);
        assert_eq!(src.info().kind, Some(kind), "{name}");
        assert_eq!(src.stopped(), None, "{name}");
        assert!(
            got == reference,
            "{name}: {} records differ from the pcap's",
            got.len()
        );
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_unknown_format_is_refused_naming_the_path_and_first_bytes() {
    let path = temp("unknown").with_extension("mcap");
    std::fs::write(&path, b"hello, world").unwrap();
    let err = WireSource::open(&path, 3794).unwrap_err();
    assert!(matches!(err, SourceError::UnknownFormat { .. }));
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("68 65 6c 6c 6f 2c 20 77"), "{msg}");
    std::fs::write(&path, b"").unwrap();
    let msg = WireSource::open(&path, 3794).unwrap_err().to_string();
    assert!(msg.contains("empty"), "{msg}");
    std::fs::remove_file(&path).unwrap();
    let msg = WireSource::open(&path, 3794).unwrap_err().to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
}

// Decoded channels: these run the replay observer on the recorded traffic.

const ARM: JausId = JausId::new(1, 1, 1);
const OCU: JausId = JausId::new(200, 1, 1);

fn datagram(seq: u16, m: &Message) -> Vec<u8> {
    judp::single(&Header::new(OCU, ARM, seq), &m.emit().unwrap()).unwrap()
}

/// The demo arm's specification, then joint positions, from the arm to the OCU.
fn arm_traffic(n: usize) -> (Vec<WireRecord>, usize) {
    let arm = ArmFile::demo();
    let joints = arm.spec.joint_count();
    let peer: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let mut recs = vec![WireRecord {
        t_ns: START_NS + 1_000_000,
        direction: Direction::Rx,
        peer,
        bytes: datagram(
            0,
            &Message::from(jaus_ocu::net::reports::spec_report(&arm.spec)),
        ),
        latched: None,
    }];
    for i in 0..n {
        let m = Message::from(ReportJointPositions {
            joint_positions: arm
                .spec
                .joints
                .iter()
                .enumerate()
                .map(|(j, joint)| {
                    let v = joint.clamp(0.001 * i as f64 + 0.01 * j as f64);
                    match joint.kind {
                        jaus_ocu::model::arm::JointType::Revolute => JointValue::revolute(v),
                        jaus_ocu::model::arm::JointType::Prismatic => JointValue::prismatic(v),
                    }
                })
                .collect(),
        });
        recs.push(WireRecord {
            t_ns: START_NS + 2_000_000 + 1_000_000 * i as u64,
            direction: Direction::Rx,
            peer,
            bytes: datagram(i as u16 + 1, &m),
            latched: None,
        });
    }
    (recs, joints)
}

#[test]
fn decoded_channels_carry_json_with_schemas_and_the_arm_metadata() {
    let path = temp("decoded");
    let (recs, joints) = arm_traffic(200);
    let cfg = RecorderConfig::new(path.clone(), START_NS);
    let recorder = Recorder::start(cfg).unwrap();
    let tx = recorder.sender();
    for r in &recs {
        tx.send(r.clone()).unwrap();
    }
    let stats = recorder.stop().unwrap();
    assert!(stats.decoded >= 200, "{stats:?}");

    // Replay reads only the raw channels.
    let (got, src) = read_all(&path);
    assert!(got == recs);
    assert_eq!(src.info().datagram_count, Some(recs.len() as u64));
    let arm = &src.info().metadata[&format::arm_metadata_name(ARM.into())];
    assert_eq!(arm[format::KEY_COMPONENT_ID], ARM.to_string());
    assert!(
        !src.info().metadata.contains_key(format::ARM_METADATA),
        "one record per arm, named after it"
    );
    assert_eq!(arm[format::KEY_JOINTS], joints.to_string());

    let bytes = std::fs::read(&path).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let topics: BTreeMap<_, _> = summary
        .channels
        .values()
        .map(|c| (c.topic.clone(), c.clone()))
        .collect();
    for d in [DecodedTopic::JointPositions, DecodedTopic::Specification] {
        let c = topics
            .get(d.topic())
            .unwrap_or_else(|| panic!("no {}", d.topic()));
        assert_eq!(c.message_encoding, format::JSON_ENCODING);
        let schema = c.schema.as_ref().expect("a schema");
        assert_eq!(schema.encoding, format::SCHEMA_ENCODING);
        assert_eq!(&*schema.data, d.schema().as_bytes());
    }
    let mut positions = 0;
    let mut spec = 0;
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if m.channel.message_encoding != format::JSON_ENCODING {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&m.data).unwrap();
        let t = v["t"].as_f64().expect("a time");
        assert!(
            (t - (m.log_time - START_NS) as f64 / 1e9).abs() < 1e-6,
            "t {t} vs log time {}",
            m.log_time
        );
        let topic = DecodedTopic::from_topic(&m.channel.topic);
        if topic != Some(DecodedTopic::Events) || v.get("component").is_some() {
            assert_eq!(v["component"], ARM.to_string(), "{v}");
        }
        match topic {
            Some(DecodedTopic::JointPositions) => {
                assert_eq!(v["positions"].as_array().unwrap().len(), joints);
                positions += 1;
            }
            Some(DecodedTopic::Specification) => {
                assert_eq!(v["joints"].as_array().unwrap().len(), joints);
                spec += 1;
            }
            _ => {}
        }
    }
    assert_eq!(positions, 200);
    assert_eq!(spec, 1);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn datagrams_the_tap_dropped_are_counted_and_written_in_the_session_end_metadata() {
    let path = temp("tap-drops");
    let recs = records(8);
    let tap = Tap::new();
    let mut cfg = raw_config(&path);
    cfg.tap = Some(tap.clone());
    // Drops from before this recording started are not its business.
    let (stuck, _keep) = crossbeam_channel::bounded(0);
    tap.connect(stuck);
    tap.offer(
        recs[0].t_ns,
        recs[0].direction,
        recs[0].peer,
        &recs[0].bytes,
    );
    let recorder = Recorder::start(cfg).unwrap();
    // A recorder that cannot keep up, as the tap sees it: these five are lost.
    for r in &recs[..5] {
        tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
    }
    tap.connect(recorder.sender());
    for r in &recs[5..] {
        tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
    }
    tap.disconnect();
    let stats = recorder.stop().unwrap();
    assert_eq!(stats.dropped, 5);
    assert_eq!(stats.rx + stats.tx, 3);

    let (got, src) = read_all(&path);
    assert_eq!(got, recs[5..].to_vec());
    let end = &src.info().metadata[format::SESSION_END_METADATA];
    assert_eq!(end[format::KEY_DROPPED], "5");
    let (rx, tx) = (
        recs[5..]
            .iter()
            .filter(|r| r.direction == Direction::Rx)
            .count(),
        recs[5..]
            .iter()
            .filter(|r| r.direction == Direction::Tx)
            .count(),
    );
    assert_eq!(end[format::KEY_DATAGRAMS_RX], rx.to_string());
    assert_eq!(end[format::KEY_DATAGRAMS_TX], tx.to_string());
    assert!(end.contains_key(format::KEY_END_TIME));
}

#[test]
fn datagrams_the_kernel_dropped_while_recording_are_written_in_the_session_end_metadata() {
    use jaus_ocu::net::socket::{self, KernelDrops, Membership, Sink};
    let path = temp("kernel-drops");
    let bind = || socket::bind("127.0.0.1:0".parse().unwrap(), Membership::Client).unwrap();
    // A socket nobody reads, with the smallest buffer the kernel grants: it fills, and the
    // kernel drops and counts the rest.
    let (unread, mut peer) = (bind(), bind());
    socket::size_receive_buffer(&unread, 4096).unwrap();
    let drops = KernelDrops::of(&unread);
    if drops.read().is_none() {
        return; // This system does not say (not Linux).
    }
    let to = unread.local_addr().unwrap();
    let flood = |peer: &mut std::net::UdpSocket, n: usize| {
        for _ in 0..n {
            Sink::send_to(peer, &[0u8; 100], to).unwrap();
        }
    };
    flood(&mut peer, 200);
    let tap = Tap::new();
    tap.set_kernel_drops(drops);
    let before = drops.read().unwrap();
    assert!(before > 0, "the flood overflowed the buffer");
    let mut cfg = raw_config(&path);
    cfg.tap = Some(tap.clone());
    let recorder = Recorder::start(cfg).unwrap();
    tap.connect(recorder.sender());
    flood(&mut peer, 100);
    let during = drops.read().unwrap() - before;
    assert_eq!(during, 100, "a full buffer drops every datagram");
    recorder.stop().unwrap();
    let (_, src) = read_all(&path);
    let end = &src.info().metadata[format::SESSION_END_METADATA];
    assert_eq!(end[format::KEY_KERNEL_DROPPED], during.to_string());
    std::fs::remove_file(&path).unwrap();
}

/// Joint-position messages on the decoded channel of the recording at `path`.
fn decoded_positions(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    let mut n = 0;
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if DecodedTopic::from_topic(&m.channel.topic) == Some(DecodedTopic::JointPositions) {
            n += 1;
        }
    }
    n
}

#[test]
fn a_recorder_behind_thins_decoded_samples_keeps_every_datagram_and_counts() {
    let (recs, _) = arm_traffic(3000);
    for thin in [true, false] {
        let path = temp(if thin { "thin-on" } else { "thin-off" });
        let mut cfg = RecorderConfig::new(path.clone(), START_NS);
        // A small queue that the sender below keeps full: the recorder is behind.
        cfg.capacity = 64;
        cfg.thin_when_behind = thin;
        let recorder = Recorder::start(cfg).unwrap();
        let tx = recorder.sender();
        for r in &recs {
            tx.send(r.clone()).unwrap();
        }
        let stats = recorder.stop().unwrap();
        let (got, src) = read_all(&path);
        assert!(got == recs, "every datagram is in the raw channels");
        let positions = decoded_positions(&path);
        assert_eq!(positions + stats.thinned, 3000, "thin {thin}: {stats:?}");
        let end = &src.info().metadata[format::SESSION_END_METADATA];
        if thin && stats.thinned > 0 {
            assert_eq!(end[format::KEY_THINNED], stats.thinned.to_string());
        } else {
            assert_eq!(stats.thinned, 0);
            assert!(!end.contains_key(format::KEY_THINNED));
        }
        std::fs::remove_file(&path).unwrap();
    }
}
