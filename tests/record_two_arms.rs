//! A vehicle with two arms, recorded and replayed (issue 19): both arms in the replay's
//! vehicle, every decoded message naming its arm (`"component"`) and valid under its channel's
//! JSON Schema, one "arm/S.N.C" metadata record and one Foxglove frame tree per arm, the CSV
//! and URDF exports and `inspect` of every arm.
//!
//! Two ways: in memory (one live client per arm on one wire, the real recorder, fake clock),
//! and end to end — two `jaus-ocu sim` processes mounted left and right and
//! `jaus-ocu record --connect A --connect B`, the file then read by the repository's reader
//! and, where the CI scripts have installed them (`.ci/mcap-python.sh`, `.ci/mcap-js.sh`), by
//! the Python `mcap` reader (`.ci/check_mcap.py`, which also validates every decoded message
//! against its schema) and `@mcap/core` (`.ci/mcap-js.mjs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              the free-port probe is a raw socket outside net/ on purpose"
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use jaus_ocu::jaus::JausId;
use jaus_ocu::model::arm::Mount;
use jaus_ocu::model::update::ComponentId;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::tap::{Tap, WireRecord};
use jaus_ocu::record::format::{self, DecodedTopic};
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::record::source::WireSource;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::ui::scene::ScenePalette;

const ARM_A: ComponentId = ComponentId::new(126, 1, 10);
const ARM_B: ComponentId = ComponentId::new(126, 1, 11);
/// Where each arm is mounted: left (y −0.4 m) as is, right (y +0.4 m) turned 180° about z —
/// `jaus-ocu sim --mount 0,-0.4,0` and `--mount 0,0.4,0,180`.
const MOUNT_A: ([f64; 3], f64) = ([0.0, -0.4, 0.0], 0.0);
const MOUNT_B: ([f64; 3], f64) = ([0.0, 0.4, 0.0], 180.0);
const START_NS: u64 = 1_700_000_000_000_000_000;

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("two-arms-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_jaus-ocu")
}

fn run(args: &[&str]) -> Output {
    Command::new(exe())
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

/// Records `seconds` of two arms in memory: one live client per arm (the same OCU ID and
/// address: one OCU to the arms), every datagram of both in time order to one recorder with
/// the decoded and Foxglove channels on.
fn record_in_memory(path: &Path, seconds: f64) {
    let net = |id: ComponentId, (at, yaw): ([f64; 3], f64), port: u16, seed: u64| {
        let sim = SocketAddr::from(([127, 0, 0, 1], port));
        let mut net = SimNet::new(
            ClientConfig {
                connect: vec![sim],
                multicast: None,
                ..ClientConfig::default()
            },
            SocketAddr::from(([127, 0, 0, 1], 5000)),
            Duration::from_millis(2),
            seed,
        );
        let mut arm = ArmFile::demo();
        arm.spec.mount = Some(Mount::at(at, yaw.to_radians()));
        net.add_peer(
            sim,
            Component::new(
                arm,
                SimConfig {
                    id: JausId::from(id),
                    tour: true,
                    seed,
                    ..SimConfig::default()
                },
            ),
        );
        net
    };
    let mut nets = [net(ARM_A, MOUNT_A, 3794, 1), net(ARM_B, MOUNT_B, 3795, 2)];
    // Fed through a tap, as the network side feeds it (the file then says what it dropped:
    // nothing).
    let tap = Tap::new();
    let mut cfg = RecorderConfig::new(path.to_path_buf(), START_NS);
    cfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
    cfg.tap = Some(tap.clone());
    let recorder = Recorder::start(cfg).unwrap();
    tap.connect_at(recorder.sender(), START_NS);
    for _ in 0..(seconds * 500.0).round() as usize {
        for net in &mut nets {
            net.step_with(&mut |p| tap.offer(START_NS + p.t_ns, p.direction, p.peer, p.bytes));
        }
    }
    tap.disconnect();
    assert_eq!(recorder.stop().unwrap().dropped, 0);
}

/// What the JSON channels of a recording hold, every message checked against its channel's
/// schema on the way.
#[derive(Debug, Default)]
struct Decoded {
    /// Messages per topic.
    counts: BTreeMap<String, usize>,
    /// Components named on each decoded `/jaus/*` topic, with how many messages each.
    components: BTreeMap<String, BTreeMap<String, usize>>,
    /// Per-arm decoded messages (samples, specifications) that name no component.
    unnamed: Vec<String>,
    /// Every `/foxglove/transforms` message.
    transforms: Vec<Value>,
    /// Every `/foxglove/scene` message.
    scenes: Vec<Value>,
    /// Every specification message.
    specifications: Vec<Value>,
}

fn decoded(path: &Path) -> Decoded {
    let bytes = std::fs::read(path).unwrap();
    let mut validators: HashMap<String, jsonschema::Validator> = HashMap::new();
    let mut out = Decoded::default();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if m.channel.message_encoding != format::JSON_ENCODING {
            continue;
        }
        let topic = m.channel.topic.clone();
        let schema = m
            .channel
            .schema
            .as_ref()
            .expect("a JSON channel has a schema");
        assert_eq!(schema.encoding, format::SCHEMA_ENCODING);
        let validator = validators.entry(schema.name.clone()).or_insert_with(|| {
            let schema: Value = serde_json::from_slice(&schema.data).unwrap();
            jsonschema::validator_for(&schema).unwrap()
        });
        let value: Value = serde_json::from_slice(&m.data).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{topic}: {value}: {errors:#?}");
        *out.counts.entry(topic.clone()).or_default() += 1;
        match DecodedTopic::from_topic(&topic) {
            Some(d) => {
                match value.get("component").and_then(Value::as_str) {
                    Some(c) => {
                        *out.components
                            .entry(topic.clone())
                            .or_default()
                            .entry(c.to_owned())
                            .or_default() += 1;
                    }
                    None if d != DecodedTopic::Events => out.unnamed.push(value.to_string()),
                    None => {}
                }
                if d == DecodedTopic::Specification {
                    out.specifications.push(value);
                }
            }
            None if topic == "/foxglove/transforms" => out.transforms.push(value),
            None if topic == "/foxglove/scene" => out.scenes.push(value),
            None => {}
        }
    }
    out
}

/// Checks the Foxglove transforms hold one frame tree per arm: every message is one arm's
/// tree (world → vehicle → `S.N.C/manipulator` → that arm's frames), each arm's base where
/// its mount puts it. Returns the arms that have a tree.
fn frame_trees(transforms: &[Value]) -> BTreeSet<String> {
    let mut arms = BTreeSet::new();
    for msg in transforms {
        let list = msg["transforms"].as_array().unwrap();
        assert_eq!(list[0]["parent_frame_id"], "world");
        assert_eq!(list[0]["child_frame_id"], "vehicle");
        assert_eq!(list[1]["parent_frame_id"], "vehicle");
        let base = list[1]["child_frame_id"].as_str().unwrap();
        let arm = base
            .strip_suffix("/manipulator")
            .unwrap_or_else(|| panic!("{base}: not an arm's base"));
        for t in &list[2..] {
            for key in ["parent_frame_id", "child_frame_id"] {
                let frame = t[key].as_str().unwrap();
                assert!(
                    frame.starts_with(&format!("{arm}/")),
                    "{frame} in the tree of {arm}"
                );
            }
        }
        // The mount: y −0.4 m as is, or y +0.4 m turned 180° about z.
        let y = list[1]["translation"]["y"].as_f64().unwrap();
        let z_turn = list[1]["rotation"]["z"].as_f64().unwrap().abs();
        match arm {
            "126.1.10" => assert!((y + 0.4).abs() < 1e-6 && z_turn < 1e-6, "{}", list[1]),
            "126.1.11" => {
                assert!(
                    (y - 0.4).abs() < 1e-6 && (z_turn - 1.0).abs() < 1e-6,
                    "{}",
                    list[1]
                );
            }
            other => panic!("a frame tree of an unknown arm {other}"),
        }
        arms.insert(arm.to_owned());
    }
    arms
}

#[test]
fn a_two_arm_recording_replays_exports_and_names_each_arm_everywhere() {
    let dir = temp("memory");
    let mcap = dir.join("two.mcap");
    record_in_memory(&mcap, 4.0);

    // Every decoded message valid, every per-arm one naming its arm; both arms everywhere.
    let d = decoded(&mcap);
    assert!(
        d.unnamed.is_empty(),
        "per-arm messages without a component: {:?}",
        d.unnamed
    );
    let both: BTreeSet<String> = [ARM_A, ARM_B].iter().map(ToString::to_string).collect();
    for topic in [
        DecodedTopic::Specification,
        DecodedTopic::JointPositions,
        DecodedTopic::ForceTorque,
        DecodedTopic::Events,
    ] {
        let named: BTreeSet<String> = d
            .components
            .get(topic.topic())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(named, both, "{}", topic.topic());
    }
    for (arm, n) in &d.components[DecodedTopic::JointPositions.topic()] {
        assert!(*n > 100, "{arm}: {n} positions");
    }
    let mount_y = |c: &str| {
        d.specifications
            .iter()
            .find(|v| v["component"] == c)
            .unwrap()["mount"]["position"][1]
            .as_f64()
            .unwrap()
    };
    assert!((mount_y("126.1.10") + 0.4).abs() < 1e-6);
    assert!((mount_y("126.1.11") - 0.4).abs() < 1e-6);
    assert_eq!(frame_trees(&d.transforms), both);
    for scene in &d.scenes {
        let entities = scene["entities"].as_array().unwrap();
        let arm = entities[0]["id"]
            .as_str()
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        assert!(both.contains(arm));
        assert!(entities.iter().all(|e| {
            e["frame_id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{arm}/"))
        }));
    }

    // One metadata record per arm.
    let source = WireSource::open(&mcap, 3794).unwrap();
    for arm in [ARM_A, ARM_B] {
        let meta = &source.info().metadata[&format::arm_metadata_name(arm)];
        assert_eq!(meta[format::KEY_COMPONENT_ID], arm.to_string());
        assert_eq!(
            meta[format::KEY_JOINTS],
            ArmFile::demo().spec.joint_count().to_string()
        );
    }
    drop(source);

    // The replay's vehicle holds both arms, focused on the first.
    let (vehicle, progress) = Replay::load_blocking(&mcap, 3794).unwrap();
    assert!(progress.stopped.is_none(), "{progress:?}");
    assert_eq!(vehicle.arm_count(), 2);
    assert_eq!(vehicle.focused_id(), Some(ARM_A));
    for arm in [ARM_A, ARM_B] {
        let s = vehicle.arm(arm).unwrap();
        assert!(s.latest.spec.is_some(), "{arm}");
        assert!(s.positions.len() > 100, "{arm}: {}", s.positions.len());
    }

    // CSV: every arm, columns prefixed with its ID; or one arm with --component.
    let csv = dir.join("two.csv");
    let o = run(&["export", s(&mcap), "--csv", s(&csv)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("arms 126.1.10, 126.1.11"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert_eq!(header[0], "t_s");
    for arm in ["126.1.10", "126.1.11"] {
        assert!(
            header.contains(&format!("{arm}/q_turret").as_str()),
            "{header:?}"
        );
        assert!(header.contains(&format!("{arm}/fx").as_str()), "{header:?}");
    }
    assert!(
        header[1..].iter().all(|c| c.starts_with("126.1.1")),
        "{header:?}"
    );
    let one = dir.join("one.csv");
    let o = run(&[
        "export",
        s(&mcap),
        "--csv",
        s(&one),
        "--component",
        "126.1.11",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read_to_string(&one).unwrap();
    assert!(first.starts_with("t_s,q_turret,"), "{first}");

    // URDF: the vehicle with both arms, names prefixed; --component: one arm.
    let urdf = dir.join("two.urdf");
    let o = run(&["export", s(&mcap), "--urdf", s(&urdf)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let robot = urdf_rs::read_file(&urdf).unwrap();
    for arm in ["126.1.10", "126.1.11"] {
        let mount = robot
            .joints
            .iter()
            .find(|j| j.name == format!("{arm}/vehicle_to_manipulator"))
            .unwrap_or_else(|| panic!("{arm}: no mount joint"));
        assert_eq!(mount.parent.link, "vehicle");
        let y = mount.origin.xyz.0[1];
        assert!((y.abs() - 0.4).abs() < 1e-6, "{arm}: mounted at y {y}");
        assert!(
            robot
                .links
                .iter()
                .any(|l| l.name == format!("{arm}/tool_point"))
        );
    }
    let one = dir.join("one.urdf");
    let o = run(&[
        "export",
        s(&mcap),
        "--urdf",
        s(&one),
        "--component",
        "126.1.10",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let robot = urdf_rs::read_file(&one).unwrap();
    assert!(
        robot
            .links
            .iter()
            .all(|l| l.name == "vehicle" || l.name.starts_with("126.1.10/"))
    );

    // inspect: counts per arm.
    let o = run(&["inspect", "--summary", "--json", s(&mcap)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["focus"], "126.1.10");
    assert_eq!(summary["arms_not_followed"], 0);
    for arm in ["126.1.10", "126.1.11"] {
        let a = &summary["arms"][arm];
        assert_eq!(a["joints"], ArmFile::demo().spec.joint_count(), "{a}");
        assert!(
            a["sent"]["Event(ReportJointPositions)"].as_u64().unwrap() > 100,
            "{a}"
        );
        assert!(a["messages_received"].as_u64().unwrap() > 0, "{a}");
        assert!(summary["metadata"][format!("arm/{arm}")].is_object());
    }
    std::fs::write(dir.join("summary.json"), &o.stdout).unwrap();
    external_readers(&mcap, &dir.join("summary.json"));
    let o = run(&["inspect", "--summary", s(&mcap)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("arms      2 followed (replay opens on 126.1.10)"),
        "{text}"
    );
    assert!(text.contains("    126.1.11"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

// -------------------------------------------------------------------------------------------
// End to end: two simulator processes, `jaus-ocu record` following both.

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn sim(port: u16, id: ComponentId, mount: &str) -> Killed {
    Killed(
        Command::new(exe())
            .args(["sim", "--tour", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--id", &id.to_string(), "--mount", mount])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// The Python `mcap` reader `.ci/mcap-python.sh` installs, if it has run.
fn ci_python() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcap-python/venv/bin/python");
    p.exists().then_some(p)
}

/// The npm packages `.ci/mcap-js.sh` installs, if it has run.
fn ci_npm() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcap-js/npm");
    p.join("node_modules/@mcap/core").exists().then_some(p)
}

/// Reads `mcap` with the Python `mcap` reader (`.ci/check_mcap.py`: counts against `summary`,
/// every JSON message against its schema, both arms named and with a frame tree) and with
/// `@mcap/core` (`.ci/mcap-js.mjs`), each when the CI scripts have installed it; says so when
/// not.
fn external_readers(mcap: &Path, summary: &Path) {
    let arms = format!("{ARM_A},{ARM_B}");
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci");
    match ci_python() {
        Some(python) => {
            let o = Command::new(&python)
                .arg(ci.join("check_mcap.py"))
                .arg(mcap)
                .arg(summary)
                .arg(&arms)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "check_mcap.py: {}{}",
                String::from_utf8_lossy(&o.stdout),
                stderr(&o)
            );
            eprint!("{}", String::from_utf8_lossy(&o.stdout));
        }
        None => eprintln!("note: the Python mcap reader is not installed (run .ci/mcap-python.sh)"),
    }
    match ci_npm() {
        Some(npm) => {
            // Run from the packages' folder, as .ci/mcap-js.sh runs it (module resolution).
            let script = npm.join(format!("mcap-js-{}.mjs", std::process::id()));
            std::fs::copy(ci.join("mcap-js.mjs"), &script).unwrap();
            let o = Command::new("node")
                .arg(&script)
                .arg(mcap)
                .arg(summary)
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/foxglove"))
                .env("EXPECT_ARMS", &arms)
                .output()
                .unwrap();
            let _ = std::fs::remove_file(&script);
            assert!(
                o.status.success(),
                "mcap-js.mjs: {}{}",
                String::from_utf8_lossy(&o.stdout),
                stderr(&o)
            );
            eprint!("{}", String::from_utf8_lossy(&o.stdout));
        }
        None => eprintln!("note: @mcap/core is not installed (run .ci/mcap-js.sh)"),
    }
}

#[test]
fn two_sims_recorded_by_jaus_ocu_record_give_both_arms_in_every_reader() {
    let dir = temp("e2e");
    let (pa, pb) = (free_udp_port(), free_udp_port());
    let _a = sim(pa, ARM_A, "0,-0.4,0");
    let _b = sim(pb, ARM_B, "0,0.4,0,180");
    let mcap = dir.join("two.mcap");
    let o = Command::new(exe())
        .env("JAUS_OCU_CONFIG_DIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["record", "--no-multicast", "--quiet"])
        .args(["--connect", &format!("127.0.0.1:{pa}")])
        .args(["--connect", &format!("127.0.0.1:{pb}")])
        .arg("--out")
        .arg(&mcap)
        .args(["--duration", "4"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    // The repository's reader: complete, every datagram of both peers.
    let mut source = WireSource::open(&mcap, 3794).unwrap();
    let records: Vec<WireRecord> = source.by_ref().collect();
    assert!(source.stopped().is_none(), "{:?}", source.stopped());
    assert!(source.info().complete);
    let peers: BTreeSet<u16> = records.iter().map(|r| r.peer.port()).collect();
    assert!(peers.contains(&pa) && peers.contains(&pb), "{peers:?}");
    let summary = run(&["inspect", "--summary", "--json", s(&mcap)]);
    assert!(summary.status.success(), "{}", stderr(&summary));
    std::fs::write(dir.join("summary.json"), &summary.stdout).unwrap();

    // Every decoded message valid under its schema; every per-arm one names its arm.
    let d = decoded(&mcap);
    assert!(d.unnamed.is_empty(), "{:?}", d.unnamed);
    for topic in ["/foxglove/transforms", "/foxglove/scene", "/foxglove/log"] {
        assert!(
            d.counts.get(topic).copied().unwrap_or(0) > 0,
            "{topic}: {:?}",
            d.counts
        );
    }

    // The Python `mcap` reader and @mcap/core, when the CI scripts have installed them (they
    // also run on a two-arm recording of their own in CI).
    external_readers(&mcap, &dir.join("summary.json"));

    // Both arms: their specifications and joint positions in the decoded channels with their
    // IDs, their metadata, one Foxglove frame tree each, both in the replay's vehicle and in
    // inspect's per-arm counts. (The network side follows every manipulator it finds.)
    let both: BTreeSet<String> = [ARM_A, ARM_B].iter().map(ToString::to_string).collect();
    for topic in [DecodedTopic::Specification, DecodedTopic::JointPositions] {
        let named: BTreeSet<String> = d
            .components
            .get(topic.topic())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(named, both, "{}: {:?}", topic.topic(), d.components);
    }
    for (arm, n) in &d.components[DecodedTopic::JointPositions.topic()] {
        assert!(*n > 50, "{arm}: {n} positions in 4 s");
    }
    assert_eq!(frame_trees(&d.transforms), both);
    for arm in [ARM_A, ARM_B] {
        assert!(
            source
                .info()
                .metadata
                .contains_key(&format::arm_metadata_name(arm)),
            "{arm}: {:?}",
            source.info().metadata.keys()
        );
    }
    let (vehicle, _) = Replay::load_blocking(&mcap, 3794).unwrap();
    assert_eq!(vehicle.arm_count(), 2);
    let summary: Value = serde_json::from_slice(&summary.stdout).unwrap();
    for arm in &both {
        assert!(
            summary["arms"][arm]["messages_sent"].as_u64().unwrap() > 50,
            "{summary}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
