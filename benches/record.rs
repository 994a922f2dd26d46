//! Recording throughput (issue 6). Run: `cargo bench --bench record` (about three minutes).
//!
//! Target: the recorder writes >= 500,000 datagrams/s of ~100-byte JUDP datagrams on one core.
//!
//! The traffic is what a 7-joint arm streaming at 1 kHz sends: each datagram carries two JUDP
//! blocks from the arm to the OCU, a `ReportJointPositions` and a `ReportJointVelocity` of the
//! demo arm following a smooth trajectory (so the bytes compress like real ones, not like
//! copies), with consecutive JUDP sequence numbers, 1 ms apart. The first datagram is the
//! arm's `ReportManipulatorSpecifications`, so the observer selects the arm and decodes the rest.
//!
//! `write/*` times the real [`Recorder`] end to end: `start` (file created, header and session
//! metadata flushed), every datagram sent through its bounded channel from the bench thread,
//! `stop` (queue drained, summary written, thread joined). The recorder's work happens on its
//! one thread (`jaus-recorder`; zstd's worker threads are off), so datagrams/s here is what
//! one core sustains; the bench thread only moves pre-built records into the channel.
//! Variants, side by side in one run:
//! - `raw/zstd`: the default for raw channels (chunk indexes, no message indexes);
//! - `raw/zstd+msgidx`: the same with message indexes, the question being what they cost;
//! - `raw/lz4`, `raw/none`: the other compressions;
//! - `raw+decoded/zstd`: the default configuration: raw channels plus the replay observer's
//!   decoded JSON channels.
//!
//! `read/*` times [`WireSource`] over the files written (every datagram back as a record).
//! `format/*` prices the JSON of one joint sample. Bytes per datagram on disk are printed for
//! every variant before the timings.
//!
//! One run on the 2-core development machine (shared with other builds, so absolute numbers
//! move by ±30 % between runs; ratios are steadier), 105-byte datagrams:
//!
//! | variant            | bytes/datagram | write, datagrams/s |
//! |--------------------|---------------:|-------------------:|
//! | raw/zstd (level 1) |           66.0 |             1.06 M |
//! | raw/zstd+msgidx    |           82.0 |             0.99 M |
//! | raw/lz4            |           90.8 |             1.17 M |
//! | raw/none           |          136.0 |             1.97 M |
//! | raw+decoded/zstd   |          163.6 |             0.21 M |
//!
//! read: 4.9 M datagrams/s (raw), 1.7 M/s (raw+decoded: the JSON is decompressed and
//! skipped). One 7-joint JSON sample: 257 ns (862 ns with `f64`'s `Display`).
//! Level 3 (zstd's default) wrote 0.68 M/s at 67 bytes a datagram in the same conditions.
//! Hence zstd level 1, no message indexes (`RecorderConfig::compression`,
//! `RecorderConfig::message_indexes`). The decoded channels cost four fifths of the
//! recorder's time: the observer, two JSON samples per datagram and 2.5 times the bytes to
//! compress (zstd's streaming calls per record inside the `mcap` writer dominate).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jaus_ocu::jaus::judp::{DatagramWriter, Header};
use jaus_ocu::jaus::manipulator::{JointValue, ReportJointPositions, ReportJointVelocity};
use jaus_ocu::jaus::message::Message;
use jaus_ocu::jaus::{JausId, JointKind};
use jaus_ocu::model::update::{ArmFact, Update};
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::format;
use jaus_ocu::record::recorder::{RecordCompression, Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::theme::ScenePalette;

/// Datagrams per timed recording.
const N: usize = 100_000;

const START_NS: u64 = 1_735_689_600_000_000_000;
const ARM: JausId = JausId::new(1, 1, 1);
const OCU: JausId = JausId::new(200, 1, 1);

fn value(kind: JointKind, v: f64) -> JointValue {
    match kind {
        JointKind::Revolute => JointValue::revolute(v),
        JointKind::Prismatic => JointValue::prismatic(v),
    }
}

/// The specification, then `n` position + velocity datagrams.
fn traffic(n: usize) -> Vec<WireRecord> {
    let arm = ArmFile::demo();
    let peer: SocketAddr = "192.168.1.50:3794".parse().unwrap();
    let mut seq: u16 = 0;
    let mut next_header = || {
        let h = Header::new(OCU, ARM, seq);
        seq = seq.wrapping_add(1);
        h
    };
    let mut w = DatagramWriter::new();
    let spec = Message::from(jaus_ocu::net::reports::spec_report(&arm.spec))
        .emit()
        .unwrap();
    w.push(&next_header(), &spec).unwrap();
    let mut out = vec![WireRecord {
        t_ns: START_NS,
        direction: Direction::Rx,
        peer,
        bytes: w.finish(),
        latched: None,
    }];
    for i in 0..n {
        let t = i as f64 * 1e-3;
        let (mut q, mut dq) = (Vec::new(), Vec::new());
        for (j, joint) in arm.spec.joints.iter().enumerate() {
            let w = 0.5 + 0.1 * j as f64;
            q.push(value(joint.kind.into(), joint.clamp(0.4 * (w * t).sin())));
            dq.push(value(joint.kind.into(), 0.4 * w * (w * t).cos()));
        }
        let positions = Message::from(ReportJointPositions { joint_positions: q })
            .emit()
            .unwrap();
        let velocities = Message::from(ReportJointVelocity {
            joint_velocities: dq,
        })
        .emit()
        .unwrap();
        let mut w = DatagramWriter::new();
        w.push(&next_header(), &positions).unwrap();
        w.push(&next_header(), &velocities).unwrap();
        out.push(WireRecord {
            t_ns: START_NS + 1_000_000 + (t * 1e9) as u64,
            direction: Direction::Rx,
            peer,
            bytes: w.finish(),
            latched: None,
        });
    }
    out
}

struct Variant {
    name: &'static str,
    decoded: bool,
    foxglove: bool,
    compression: RecordCompression,
    message_indexes: bool,
    /// `RecorderConfig::thin_when_behind` (issue 14; always behind here: the bench thread
    /// keeps the queue full, so these variants say what a recorder at wire speed writes).
    thin: bool,
}

const VARIANTS: [Variant; 7] = [
    Variant {
        name: "raw/zstd",
        decoded: false,
        foxglove: false,
        compression: RecordCompression::Zstd,
        message_indexes: false,
        thin: false,
    },
    Variant {
        name: "raw/zstd+msgidx",
        decoded: false,
        foxglove: false,
        compression: RecordCompression::Zstd,
        message_indexes: true,
        thin: false,
    },
    Variant {
        name: "raw/lz4",
        decoded: false,
        foxglove: false,
        compression: RecordCompression::Lz4,
        message_indexes: false,
        thin: false,
    },
    Variant {
        name: "raw/none",
        decoded: false,
        foxglove: false,
        compression: RecordCompression::None,
        message_indexes: false,
        thin: false,
    },
    Variant {
        name: "raw+decoded/zstd",
        decoded: true,
        foxglove: false,
        compression: RecordCompression::Zstd,
        message_indexes: true,
        thin: false,
    },
    Variant {
        name: "raw+decoded+foxglove",
        decoded: true,
        foxglove: true,
        compression: RecordCompression::Zstd,
        message_indexes: true,
        thin: false,
    },
    Variant {
        name: "default (thinned)",
        decoded: true,
        foxglove: true,
        compression: RecordCompression::Zstd,
        message_indexes: true,
        thin: true,
    },
];

fn path_for(v: &Variant) -> PathBuf {
    let name = v.name.replace(['/', '+'], "_");
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-record-{name}.mcap"))
}

fn config(v: &Variant) -> RecorderConfig {
    let mut cfg = RecorderConfig::new(path_for(v), START_NS);
    cfg.decoded = v.decoded;
    cfg.compression = v.compression;
    cfg.message_indexes = v.message_indexes;
    cfg.thin_when_behind = v.thin;
    if v.foxglove {
        cfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
    }
    cfg
}

/// One recording, start to stop; the time it took and the decoded samples thinned.
fn record(cfg: RecorderConfig, recs: Vec<WireRecord>) -> (Duration, u64) {
    let t0 = Instant::now();
    let recorder = Recorder::start(cfg).unwrap();
    let tx = recorder.sender();
    for r in recs {
        tx.send(r).unwrap();
    }
    drop(tx);
    let stats = recorder.stop().unwrap();
    let took = t0.elapsed();
    assert_eq!(stats.rx, (N + 1) as u64);
    (took, stats.thinned)
}

/// Bytes per hour of a realistic session, not a stress stream: the demo arm (touring its
/// presets) with the OCU's default event rates (positions 50 Hz, velocities 20 Hz, efforts and
/// joint F/T 10 Hz, end-effector F/T 100 Hz), 60 s in memory through the real client and
/// simulator, recorded three ways. What an operator's default recording weighs.
fn session_sizes() {
    use jaus_ocu::net::client::ClientConfig;
    use jaus_ocu::net::tap::Tap;
    use jaus_ocu::sim::component::{Component, SimConfig};
    use jaus_ocu::sim::harness::{Passage, SimNet};
    const SECONDS: f64 = 60.0;
    let sim = SocketAddr::from(([127, 0, 0, 1], 3794));
    let mut net = SimNet::new(
        ClientConfig {
            connect: vec![sim],
            multicast: None,
            ..ClientConfig::default()
        },
        SocketAddr::from(([127, 0, 0, 1], 5000)),
        Duration::from_millis(2),
        1,
    );
    net.add_peer(
        sim,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                tour: true,
                ..SimConfig::default()
            },
        ),
    );
    // (name, decoded, Foxglove channels, message indexes); the first is the default
    // recording as it was before message indexes and the Foxglove channels (the baseline of
    // the size ratios).
    let variants = [
        ("before: raw+decoded", true, false, false),
        ("raw", false, false, true),
        ("raw+decoded", true, false, true),
        ("raw+decoded+foxglove", true, true, true),
    ];
    let recorders: Vec<(&str, PathBuf, Recorder, Tap)> = variants
        .iter()
        .map(|(name, decoded, foxglove, indexes)| {
            let path =
                Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-session-{name}.mcap"));
            let mut cfg = RecorderConfig::new(path.clone(), START_NS);
            cfg.decoded = *decoded;
            cfg.message_indexes = *indexes;
            if *foxglove {
                cfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
            }
            let recorder = Recorder::start(cfg).unwrap();
            let tap = Tap::new();
            tap.connect_at(recorder.sender(), START_NS);
            (*name, path, recorder, tap)
        })
        .collect();
    let mut datagrams = 0u64;
    net.run_with(SECONDS, &mut |p: &Passage<'_>| {
        datagrams += 1;
        for (_, _, _, tap) in &recorders {
            tap.offer(START_NS + p.t_ns, p.direction, p.peer, p.bytes);
        }
    });
    println!("\nsession: the demo arm at the default rates, {SECONDS} s, {datagrams} datagrams");
    println!(
        "{:<22} {:>12} {:>14}",
        "recording", "MB per hour", "× before"
    );
    let mut sizes = Vec::new();
    for (name, path, recorder, _) in recorders {
        recorder.stop().unwrap();
        let size = std::fs::metadata(&path).unwrap().len() as f64 * 3600.0 / SECONDS / 1e6;
        sizes.push((name, size));
    }
    let base = sizes[0].1;
    for (name, size) in sizes {
        println!("{name:<22} {size:>12.1} {:>10.2}", size / base);
    }
}

fn bench(c: &mut Criterion) {
    let recs = traffic(N);
    let payload = recs[1..].iter().map(|r| r.bytes.len()).sum::<usize>() as f64 / N as f64;
    println!("\ntraffic: {N} datagrams of {payload:.0} bytes (+ the specification)");
    println!(
        "{:<20} {:>10} {:>14} {:>12} {:>9}",
        "variant", "bytes/dgram", "decoded msgs", "one run", "thinned"
    );
    for v in &VARIANTS {
        let (took, thinned) = record(config(v), recs.clone());
        let size = std::fs::metadata(path_for(v)).unwrap().len();
        let mut decoded = 0;
        if v.decoded {
            let bytes = std::fs::read(path_for(v)).unwrap();
            let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
            let stats = summary.stats.unwrap();
            decoded = stats.message_count - (N + 1) as u64;
        }
        println!(
            "{:<20} {:>10.1} {:>14} {:>9.0} k/s {:>9}",
            v.name,
            size as f64 / (N + 1) as f64,
            decoded,
            N as f64 / took.as_secs_f64() / 1e3,
            thinned
        );
    }

    session_sizes();

    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(12));
    for v in &VARIANTS {
        g.bench_function(v.name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let batch = recs.clone();
                        record(config(v), batch).0
                    })
                    .sum()
            });
        });
    }
    g.finish();

    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements((N + 1) as u64));
    g.sample_size(10);
    for v in [&VARIANTS[0], &VARIANTS[4], &VARIANTS[5]] {
        g.bench_function(v.name, |b| {
            b.iter(|| {
                let mut src = WireSource::open(&path_for(v), 3794).unwrap();
                let n = src.by_ref().fold(0, |n, r| {
                    black_box(r.bytes.len());
                    n + 1
                });
                assert_eq!(n, N + 1);
                assert_eq!(src.stopped(), None);
                n
            });
        });
    }
    g.finish();

    parts(c, &recs);

    let mut g = c.benchmark_group("format");
    g.throughput(Throughput::Elements(1));
    // As the observer hands it over: about one arm (the message names its component).
    let sample = Update::arm(
        jaus_ocu::model::update::ComponentId::new(126, 1, 10),
        ArmFact::JointPositions {
            t: 1234.567,
            values: vec![0.123_456_7, -1.25, 0.6, 2.0943, -0.000_123_4, 3.1, 0.5],
        },
    );
    let mut json = Vec::new();
    g.bench_function("encode_joint_positions_7", |b| {
        b.iter(|| {
            format::encode_update(black_box(&sample), &mut json);
            json.len()
        });
    });
    g.finish();

    for v in &VARIANTS {
        let _ = std::fs::remove_file(path_for(v));
    }
}

/// Discards what is written; seeks only move the position (the `mcap` writer seeks back to
/// patch chunk headers).
#[derive(Default)]
struct NullSink {
    pos: u64,
    end: u64,
}

impl std::io::Write for NullSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pos += buf.len() as u64;
        self.end = self.end.max(self.pos);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for NullSink {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = match pos {
            std::io::SeekFrom::Start(p) => p,
            std::io::SeekFrom::End(d) => self.end.saturating_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

/// The decoded path's parts on their own, per datagram: the observer, the JSON of its
/// updates, and the `mcap` writer (to a sink that discards) given the raw bytes alone or the
/// raw bytes and the JSON messages, per compression.
fn parts(c: &mut Criterion, recs: &[WireRecord]) {
    use jaus_ocu::record::observer::Observer;

    let mut g = c.benchmark_group("parts");
    g.throughput(Throughput::Elements(recs.len() as u64));
    g.sample_size(10);
    g.bench_function("observe", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            let mut obs = Observer::new(START_NS);
            let mut n = 0;
            for r in recs {
                obs.observe(r, &mut out);
                n += out.len();
                out.clear();
            }
            n
        });
    });
    let mut obs = Observer::new(START_NS);
    let mut updates = Vec::new();
    let per_record: Vec<Vec<Update>> = recs
        .iter()
        .map(|r| {
            obs.observe(r, &mut updates);
            std::mem::take(&mut updates)
        })
        .collect();
    g.bench_function("encode", |b| {
        let mut json = Vec::new();
        b.iter(|| {
            let mut n = 0;
            for u in per_record.iter().flatten() {
                format::encode_update(u, &mut json);
                n += json.len();
            }
            n
        });
    });
    let jsons: Vec<Vec<Vec<u8>>> = per_record
        .iter()
        .map(|us| {
            us.iter()
                .filter_map(|u| {
                    let mut json = Vec::new();
                    format::encode_update(u, &mut json).map(|_| json)
                })
                .collect()
        })
        .collect();
    let json_bytes: usize = jsons.iter().flatten().map(Vec::len).sum();
    println!(
        "parts: {} JSON messages, {:.1} bytes each",
        jsons.iter().flatten().count(),
        json_bytes as f64 / jsons.iter().flatten().count() as f64
    );
    let compressions = [
        ("none", None),
        ("lz4", Some(mcap::Compression::Lz4)),
        ("zstd", Some(mcap::Compression::Zstd)),
    ];
    for (name, compression) in compressions {
        for with_json in [false, true] {
            let id = format!("mcap/{name}/{}", if with_json { "raw+json" } else { "raw" });
            let mut size = 0;
            g.bench_function(&id, |b| {
                b.iter(|| {
                    let mut w = mcap::WriteOptions::new()
                        .compression(compression)
                        .compression_threads(0)
                        .compression_level(1)
                        .chunk_size(Some(1024 * 1024))
                        .emit_message_indexes(false)
                        .create(NullSink::default())
                        .unwrap();
                    let raw = w.add_channel(0, "/judp/rx/x", "judp", &BTreeMap::default());
                    let raw = raw.unwrap();
                    let schema = w.add_schema("s", "jsonschema", b"{}").unwrap();
                    let json = w
                        .add_channel(schema, "/jaus/x", "json", &BTreeMap::default())
                        .unwrap();
                    for (i, (r, js)) in recs.iter().zip(&jsons).enumerate() {
                        let mut header = mcap::records::MessageHeader {
                            channel_id: raw,
                            sequence: i as u32,
                            log_time: r.t_ns,
                            publish_time: r.t_ns,
                        };
                        w.write_to_known_channel(&header, &r.bytes).unwrap();
                        if with_json {
                            header.channel_id = json;
                            for j in js {
                                w.write_to_known_channel(&header, j).unwrap();
                            }
                        }
                    }
                    w.finish().unwrap();
                    size = w.into_inner().end;
                });
            });
            println!(
                "{id}: {:.1} bytes/datagram",
                size as f64 / recs.len() as f64
            );
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
