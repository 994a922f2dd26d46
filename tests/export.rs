//! `jaus-ocu export` end to end: MCAP → pcapng read back by our capture reader with the same
//! datagrams, times and peers; MCAP → pcapng → replay gives the same session as replaying
//! the MCAP; a damaged MCAP exports its readable part and says where it stopped; an output
//! that cannot be written is an error that leaves nothing behind; the CSV is the GUI's
//! while its plots are hidden (shown, the GUI writes what they show).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use jaus_ocu::model::session::Session;
use jaus_ocu::net::tap::{Direction, WireRecord};
use jaus_ocu::record::capture::{CaptureEvent, CaptureReader};
use jaus_ocu::record::export::write_csv;
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::harness::simulated_session;

const SIM: &str = "127.0.0.1:3794";
const START_NS: u64 = 1_700_000_000_000_000_000;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jaus-ocu-export-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Records `seconds` of an in-memory session between the real client and the simulator
/// (fake clock, no sockets) at the wire, as the network thread would offer it, to MCAP.
/// The first datagram is at the session's start, so the MCAP's time origin (its session
/// metadata) and a capture's (its first packet) coincide.
fn record_in_memory(path: &Path, seconds: f64) {
    let sim_addr: SocketAddr = SIM.parse().unwrap();
    let recorder = Recorder::start(RecorderConfig::new(path.to_path_buf(), START_NS)).unwrap();
    let tx = recorder.sender();
    simulated_session(ArmFile::demo(), seconds, |t, direction, bytes| {
        tx.send(WireRecord {
            t_ns: START_NS + (t * 1e9).round() as u64,
            direction,
            peer: sim_addr,
            bytes: bytes.to_vec(),
            latched: None,
        })
        .unwrap();
    });
    drop(tx);
    recorder.stop().unwrap();
}

fn export(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jaus-ocu"))
        .arg("export")
        .args(args)
        .output()
        .expect("jaus-ocu runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn wire_records(path: &Path) -> Vec<WireRecord> {
    WireSource::open(path, 3794).unwrap().collect()
}

fn capture(path: &Path) -> Vec<jaus_ocu::record::capture::CaptureDatagram> {
    CaptureReader::open(path, 3794)
        .unwrap()
        .map(|e| match e.unwrap() {
            CaptureEvent::Datagram(d) => d,
            other => panic!("every frame is a JUDP datagram: {other:?}"),
        })
        .collect()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn mcap_to_pcapng_keeps_every_datagram_with_its_time_and_peers() {
    let dir = temp_dir("pcapng");
    let mcap = dir.join("session.mcap");
    let pcapng = dir.join("session.pcapng");
    record_in_memory(&mcap, 4.0);
    let o = export(&[s(&mcap), "--pcapng", s(&pcapng)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("placeholder") || stderr(&o).contains("--local"));

    let records = wire_records(&mcap);
    let packets = capture(&pcapng);
    assert!(records.len() > 300, "{} datagrams", records.len());
    assert_eq!(packets.len(), records.len());
    let sim: SocketAddr = SIM.parse().unwrap();
    let ocu: SocketAddr = "127.0.0.1:0".parse().unwrap();
    for (rec, p) in records.iter().zip(&packets) {
        assert_eq!(p.payload, rec.bytes);
        // The capture reader gives f64 seconds (sub-µs at today's epoch).
        assert!(
            (p.time - rec.t_ns as f64 / 1e9).abs() < 1e-6,
            "{} vs {}",
            p.time,
            rec.t_ns
        );
        let expected = match rec.direction {
            Direction::Rx => (sim, ocu),
            Direction::Tx => (ocu, sim),
        };
        assert_eq!((p.source, p.destination), expected);
    }
    // With --local, the OCU's side is that address.
    let local = dir.join("local.pcapng");
    let o = export(&[
        s(&mcap),
        "--pcapng",
        s(&local),
        "--local",
        "127.0.0.7:40000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let packets = capture(&local);
    let ocu: SocketAddr = "127.0.0.7:40000".parse().unwrap();
    for (rec, p) in records.iter().zip(&packets) {
        match rec.direction {
            Direction::Rx => assert_eq!(p.destination, ocu),
            Direction::Tx => assert_eq!(p.source, ocu),
        }
    }
    assert_eq!(
        entries(&dir),
        ["local.pcapng", "session.mcap", "session.pcapng"]
    );
}

fn sample_times(s: &Session) -> [Vec<f64>; 3] {
    [
        s.positions.times().to_vec(),
        s.velocities.times().to_vec(),
        s.ft.times().to_vec(),
    ]
}

#[test]
fn replaying_the_exported_pcapng_gives_the_session_of_the_mcap() {
    let dir = temp_dir("replay");
    let mcap = dir.join("session.mcap");
    let pcapng = dir.join("session.pcapng");
    record_in_memory(&mcap, 6.0);
    let o = export(&[s(&mcap), "--pcapng", s(&pcapng)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let (va, pa) = Replay::load_blocking(&mcap, 3794).unwrap();
    let (vb, pb) = Replay::load_blocking(&pcapng, 3794).unwrap();
    assert_eq!((va.arm_count(), vb.arm_count()), (1, 1));
    let (a, b) = (va.focused(), vb.focused());
    assert!(
        pa.stopped.is_none() && pb.stopped.is_none(),
        "{pa:?} {pb:?}"
    );
    assert_eq!(pa.datagrams, pb.datagrams);
    assert!(a.latest.spec.is_some());
    assert_eq!(a.latest.spec, b.latest.spec);
    assert_eq!(a.latest.tool_point, b.latest.tool_point);
    assert!(!a.latest.presets.is_empty());
    assert_eq!(a.latest.presets, b.latest.presets);
    assert_eq!(a.latest.selected, b.latest.selected);
    assert_eq!(a.latest.control, b.latest.control);
    assert_eq!(a.latest.status, b.latest.status);
    assert_eq!(a.latest.pose, b.latest.pose);
    assert!(
        a.positions.len() > 100,
        "{} position samples",
        a.positions.len()
    );
    // Both time origins are the first datagram (see `record_in_memory`); the capture's
    // times carry the f64 seconds of the capture reader (sub-µs).
    for (x, y) in sample_times(a).iter().zip(sample_times(b).iter()) {
        assert_eq!(x.len(), y.len());
        for (p, q) in x.iter().zip(y) {
            assert!((p - q).abs() < 1e-6, "{p} vs {q}");
        }
    }
    for (x, y) in [(&a.positions, &b.positions), (&a.ft, &b.ft)] {
        for i in 0..x.len() {
            for c in 0..x.channels() {
                let bits = |v: Option<f64>| v.map(f64::to_bits);
                assert_eq!(bits(x.value(c, i)), bits(y.value(c, i)));
            }
        }
    }
    let marks = |s: &Session| {
        s.marks
            .iter()
            .map(|m| (m.kind, m.label.clone()))
            .collect::<Vec<_>>()
    };
    assert!(!a.marks.is_empty());
    assert_eq!(marks(a), marks(b));
    for (x, y) in a.marks.iter().zip(&b.marks) {
        assert!((x.t - y.t).abs() < 1e-6, "{x:?} vs {y:?}");
    }
}

#[test]
fn a_truncated_mcap_exports_what_is_readable_and_says_where_it_stopped() {
    let dir = temp_dir("damaged");
    let mcap = dir.join("session.mcap");
    record_in_memory(&mcap, 4.0);
    let whole = std::fs::read(&mcap).unwrap();
    let cut = dir.join("cut.mcap");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).unwrap();
    let readable = wire_records(&cut);
    assert!(!readable.is_empty());

    let pcapng = dir.join("cut.pcapng");
    let csv = dir.join("cut.csv");
    let o = export(&[s(&cut), "--pcapng", s(&pcapng), "--csv", s(&csv)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("reading stopped early"), "{err}");
    assert!(err.contains("byte"), "says where: {err}");
    assert!(err.contains("hold everything before that point"), "{err}");
    let packets = capture(&pcapng);
    assert_eq!(packets.len(), readable.len());
    assert_eq!(
        packets.last().unwrap().payload,
        readable.last().unwrap().bytes
    );
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 10);
}

#[test]
fn an_output_that_cannot_be_written_is_a_clear_error_and_leaves_nothing() {
    let dir = temp_dir("unwritable");
    let mcap = dir.join("session.mcap");
    record_in_memory(&mcap, 1.0);
    let before = entries(&dir);

    let missing = dir.join("no-such-folder").join("out.pcapng");
    let o = export(&[s(&mcap), "--pcapng", s(&missing)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cannot write") && err.contains("out.pcapng"),
        "{err}"
    );
    assert!(err.contains("folder does not exist"), "{err}");
    assert!(!missing.exists());

    // A folder as the output; and a good output beside it is not left half-done either.
    let good = dir.join("good.csv");
    let o = export(&[s(&mcap), "--csv", s(&good), "--pcapng", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("folder"), "{}", stderr(&o));
    assert_eq!(
        entries(&dir),
        before,
        "nothing written, no temporary file left"
    );

    // A file that cannot be read is an error before any output exists.
    let o = export(&[s(&dir.join("absent.mcap")), "--csv", s(&good)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(entries(&dir), before);
}

#[test]
fn csv_export_equals_what_the_gui_writes_for_the_same_range() {
    let dir = temp_dir("csv");
    let mcap = dir.join("session.mcap");
    record_in_memory(&mcap, 3.0);
    let (session, _) = Replay::load_blocking(&mcap, 3794).unwrap();
    let (t0, t1) = session.span().unwrap();
    for (range, (from, to)) in [(None, (t0, t1)), (Some((0.5, 2.25)), (0.5, 2.25))] {
        let csv = dir.join("out.csv");
        let mut args = vec![s(&mcap).to_string(), "--csv".into(), s(&csv).into()];
        if let Some((a, b)) = range {
            args.extend(["--from".into(), a.to_string(), "--to".into(), b.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = export(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut gui = Vec::new();
        let rows = write_csv(session.focused(), from, to, &mut gui).unwrap();
        assert!(rows > 10);
        assert_eq!(std::fs::read(&csv).unwrap(), gui);
    }
}

#[test]
fn urdf_export_writes_the_recorded_arm() {
    let dir = temp_dir("urdf");
    let mcap = dir.join("session.mcap");
    record_in_memory(&mcap, 2.0);
    let urdf = dir.join("arm.urdf");
    let o = export(&[s(&mcap), "--urdf", s(&urdf)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let robot = urdf_rs::read_file(&urdf).unwrap();
    let demo = ArmFile::demo();
    let moving = robot
        .joints
        .iter()
        .filter(|j| !matches!(j.joint_type, urdf_rs::JointType::Fixed))
        .count();
    assert_eq!(moving, demo.spec.joints.len());
    // Names carry the arm's ID, as the Foxglove frames do.
    // Named as the arm names itself (its "arm/126.1.10" metadata).
    assert_eq!(robot.name, "jaus-ocu sim: Demo EOD arm");
    assert!(robot.links.iter().any(|l| l.name == "126.1.10/tool_point"));
    assert!(robot.links.iter().any(|l| l.name == "vehicle"));
    assert!(
        robot.joints.iter().all(|j| j.name.starts_with("126.1.10/")),
        "{:?}",
        robot.joints.iter().map(|j| &j.name).collect::<Vec<_>>()
    );
    assert!(stderr(&o).contains("1 arm: 126.1.10 ("), "{}", stderr(&o));

    // --component: that arm; an arm the file does not hold is an error naming the arms.
    let one = dir.join("one.urdf");
    let o = export(&[s(&mcap), "--urdf", s(&one), "--component", "126.1.10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&urdf).unwrap());
    let o = export(&[s(&mcap), "--urdf", s(&one), "--component", "1.2.3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("its arms: 126.1.10"), "{}", stderr(&o));

    // A capture without a specification: nothing to write, exit status 1, no file.
    let sae =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/SAE_Management_PacketCapture.pcap");
    let none = dir.join("none.urdf");
    let o = export(&[s(&sae), "--urdf", s(&none)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no manipulator specification"));
    assert!(!none.exists());
}
