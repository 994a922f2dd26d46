//! `jaus-ocu probe` end to end: a real `jaus-ocu sim` process and the probe process, as an
//! operator runs them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              their peers and load generators are raw sockets outside net/ on purpose"
)]

use std::net::UdpSocket;
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{bin, free_port, sim};

fn reference_tool_point(q: &[f64]) -> [f64; 3] {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference-fk.json"
    ))
    .unwrap();
    let j: Value = serde_json::from_str(&text).unwrap();
    let puma = &j["arms"][0];
    let case = puma["reference_cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            let cq: Vec<f64> = c["q"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let tool: Vec<f64> = c["tool_point"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            cq == q && tool.iter().all(|t| *t == 0.0)
        })
        .expect("reference case");
    let p = case["expected_tool_point_manipulator_frame"]
        .as_array()
        .unwrap();
    [
        p[0].as_f64().unwrap(),
        p[1].as_f64().unwrap(),
        p[2].as_f64().unwrap(),
    ]
}

#[test]
fn probe_once_json_reports_the_reference_tool_point_of_a_held_puma_within_1_mm() {
    let q = [0.3, 0.6, -1.2, 0.4, -0.7, 1.1];
    let port = free_port();
    let _sim = sim(
        &["--arm", "puma560", "--hold", "0.3,0.6,-1.2,0.4,-0.7,1.1"],
        port,
    );
    let out = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "10",
        ])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(j["component"], "126.1.10");
    // Nobody holds control: `controller` is null (control's JSON has the same shape:
    // tests/many_ocus.rs), and the arm's answer is in (asked at once, every 1.5 s).
    assert!(j["controller"].is_null(), "{}", j["controller"]);
    assert_eq!(j["control_text"], "free", "{}", j["control_text"]);
    // The counters are a fresh snapshot, not the empty first one: datagrams counted, the
    // kernel's drops read (Linux), and what the network threads were granted, as far as this
    // machine allows (net::priority).
    let stats = &j["stats"];
    assert!(stats["datagrams"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["kernel_dropped"].is_u64(), "{stats}");
    let scheduling = stats["scheduling"].as_str().expect("stats.scheduling");
    assert!(
        ["real-time 10", "nice -10", "normal"].contains(&scheduling),
        "{scheduling}"
    );
    let joints = j["joints"].as_array().unwrap();
    assert_eq!(joints.len(), 6);
    assert_eq!(joints[0]["name"], "waist");
    assert_eq!(joints[0]["type"], "revolute");
    for (joint, want) in joints.iter().zip(q) {
        assert!((joint["position"].as_f64().unwrap() - want).abs() < 1e-6);
        assert!(joint["min"].as_f64().unwrap() < joint["max"].as_f64().unwrap());
    }
    let want = reference_tool_point(&q);
    let got: Vec<f64> = j["tool_point_manipulator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    for k in 0..3 {
        assert!(
            (got[k] - want[k]).abs() < 1e-3,
            "tool point {got:?} vs reference {want:?}"
        );
    }
    // The PUMA file mounts the arm at the vehicle origin with no rotation.
    let vehicle: Vec<f64> = j["tool_point_vehicle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    for k in 0..3 {
        assert!((vehicle[k] - got[k]).abs() < 1e-6);
    }
}

/// Issue 19: two arms on one vehicle, each mounted elsewhere: `probe --once --json` lists
/// both in `arms`, each tool point in the vehicle frame equal to the reference forward
/// kinematics (tests/data/reference-fk.json, not our kinematics) moved by its mount, computed
/// here by hand.
#[test]
fn probe_once_json_lists_every_arm_with_its_tool_point_in_the_vehicle_frame() {
    let q = [0.3, 0.6, -1.2, 0.4, -0.7, 1.1];
    let hold = "0.3,0.6,-1.2,0.4,-0.7,1.1";
    // (ID, --mount, position, yaw in degrees)
    let arms = [
        ("126.1.10", "0,-0.4,0", [0.0, -0.4, 0.0], 0.0_f64),
        ("126.1.11", "0.2,0.4,-0.1,180", [0.2, 0.4, -0.1], 180.0),
    ];
    let ports = [free_port(), free_port()];
    let _sims: Vec<_> = arms
        .iter()
        .zip(ports)
        .map(|((id, mount, _, _), port)| {
            sim(
                &[
                    "--arm", "puma560", "--hold", hold, "--id", id, "--mount", mount,
                ],
                port,
            )
        })
        .collect();
    let out = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "15",
        ])
        .args(["--connect", &format!("127.0.0.1:{}", ports[0])])
        .args(["--connect", &format!("127.0.0.1:{}", ports[1])])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let listed = j["arms"].as_array().expect("arms");
    assert_eq!(listed.len(), 2, "{j}");
    // The top level is the focused arm's, as before several arms were followed.
    assert!(
        arms.iter().any(|a| j["component"] == a.0),
        "{}",
        j["component"]
    );
    let p = reference_tool_point(&q);
    for (id, _, position, yaw) in arms {
        let arm = listed
            .iter()
            .find(|a| a["component"] == id)
            .unwrap_or_else(|| panic!("{id} in arms: {j}"));
        assert_eq!(arm["link"], "live", "{arm}");
        assert_eq!(arm["joints"].as_array().unwrap().len(), 6);
        let got: Vec<f64> = arm["tool_point_vehicle"]
            .as_array()
            .unwrap_or_else(|| panic!("{id}: tool_point_vehicle in {arm}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let (s, c) = yaw.to_radians().sin_cos();
        let want = [
            position[0] + c * p[0] - s * p[1],
            position[1] + s * p[0] + c * p[1],
            position[2] + p[2],
        ];
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() < 1e-3,
                "{id}: tool point in the vehicle frame {got:?}, expected {want:?}"
            );
        }
    }
}

#[test]
fn probe_once_text_shows_joints_tool_point_and_presets() {
    let port = free_port();
    let _sim = sim(&[], port);
    let out = bin()
        .args(["probe", "--once", "--no-multicast", "--timeout", "10"])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "manipulator 126.1.10",
        "telescope",
        "prismatic",
        "continuous",
        "tool point:",
        "presets:",
        "Stowed",
        "clearance: nearest ",
        " mm, ",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
}

#[test]
fn probe_once_json_gives_each_arm_its_nearest_pair_with_a_finite_gap() {
    let port = free_port();
    let _sim = sim(&[], port);
    let out = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "10",
        ])
        .args([
            "--vehicle",
            concat!(env!("CARGO_MANIFEST_DIR"), "/assets/vehicles/demo.toml"),
        ])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    for arm in std::iter::once(&j).chain(j["arms"].as_array().unwrap()) {
        let nearest = &arm["clearance"]["nearest"];
        let gap = nearest["gap_m"]
            .as_f64()
            .unwrap_or_else(|| panic!("gap_m in {arm}"));
        assert!(gap.is_finite() && gap.abs() < 2.0, "{nearest}");
        let pair = nearest["pair"].as_str().unwrap();
        assert!(pair.contains(" and ") && pair.contains("(joint "), "{pair}");
        assert!(nearest["zone"].is_string(), "{nearest}");
        assert!(
            arm["clearance"]["allowed_pairs"].as_u64().unwrap() > 0,
            "{arm}"
        );
    }
}

#[test]
fn probe_record_and_serve_with_a_vehicle_file_they_cannot_use_name_it_and_what_to_fix() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let bad = dir.join(format!("bad-vehicle-{}.toml", std::process::id()));
    std::fs::write(&bad, "name = \"x\"\n[ground]\nz = 1000.0\n").unwrap();
    let missing = dir.join("no-such-vehicle.toml");
    let out_file = dir.join(format!("never-written-{}.mcap", std::process::id()));
    let commands: [Vec<String>; 3] = [
        ["probe", "--once", "--timeout", "1"]
            .map(String::from)
            .to_vec(),
        ["record", "--duration", "1", "--out"]
            .map(String::from)
            .into_iter()
            .chain([out_file.display().to_string()])
            .collect(),
        ["serve", "--duration", "1", "--listen", "127.0.0.1:0"]
            .map(String::from)
            .to_vec(),
    ];
    for command in &commands {
        for (path, want) in [
            (&bad, "give the ground's height in m"),
            (&missing, "cannot read it"),
        ] {
            let out = bin()
                .args(command)
                .args(["--no-multicast", "--connect", "127.0.0.1:9"])
                .arg("--vehicle")
                .arg(path)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command:?} {}: {err}",
                path.display()
            );
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(want), "{err}");
        }
    }
    assert!(
        !out_file.exists(),
        "nothing recorded with a vehicle file it cannot use"
    );
}

#[test]
fn probe_without_an_arm_says_where_it_looked_and_exits_1() {
    let port = free_port();
    let out = bin()
        .args(["probe", "--once", "--no-multicast", "--timeout", "1"])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(err.contains("no JAUS component answered"), "{err}");
}

#[test]
fn probe_rejects_a_bad_timeout() {
    let out = bin().args(["probe", "--timeout", "-1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A peer with only core services (no manipulator), answering discovery by hand-built bytes
/// (wire reference §4.2, `ReportIdentification` 0x4B00, `ReportServices` 0x4B03).
fn core_only_peer() -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let port = socket.local_addr().unwrap().port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = stop.clone();
    std::thread::Builder::new()
        .name("core-only-peer".into())
        .spawn(move || {
            let me = [10u8, 1, 126, 0];
            let mut seq = 0u16;
            let mut buf = vec![0u8; 2048];
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let d = &buf[..n];
                if n < 17 || d[0] != 2 {
                    continue;
                }
                let src = [d[9], d[10], d[11], d[12]];
                let id = u16::from_le_bytes([d[13], d[14]]);
                let payload: Vec<u8> = match id {
                    0x2B00 => {
                        let mut p = vec![0x00, 0x4B, 2];
                        p.extend_from_slice(&30001u16.to_le_bytes());
                        p.push(9);
                        p.extend_from_slice(b"core only");
                        p
                    }
                    0x2B03 => {
                        let mut p = vec![0x03, 0x4B, 1, 1, 1, 10, 0, 2];
                        for uri in ["urn:jaus:jss:core:Transport", "urn:jaus:jss:core:Discovery"] {
                            p.push(uri.len() as u8);
                            p.extend_from_slice(uri.as_bytes());
                            p.extend_from_slice(&[1, 1]);
                        }
                        p
                    }
                    _ => continue,
                };
                let mut out = vec![0x02, 0x00];
                out.extend_from_slice(&(14 + payload.len() as u16).to_le_bytes());
                out.push(0x01);
                out.extend_from_slice(&src);
                out.extend_from_slice(&me);
                out.extend_from_slice(&payload);
                out.extend_from_slice(&seq.to_le_bytes());
                seq = seq.wrapping_add(1);
                let _ = socket.send_to(&out, from);
            }
        })
        .unwrap();
    (port, stop)
}

#[test]
fn probe_names_who_answered_when_none_is_a_manipulator_and_exits_3() {
    let (port, stop) = core_only_peer();
    let out = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "30",
        ])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("none offers manipulator services"),
        "{v}"
    );
    let c = &v["components"][0];
    assert_eq!(c["id"], "126.1.10");
    assert_eq!(c["address"], format!("127.0.0.1:{port}"));
    assert_eq!(c["identification"], "core only");
    assert_eq!(c["manipulator"], false);
    assert_eq!(c["services"][1]["uri"], "urn:jaus:jss:core:Discovery");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("126.1.10") && err.contains("core only"),
        "{err}"
    );
}

#[test]
fn control_waits_for_each_outcome_and_exits_0_only_when_it_happened() {
    // Issue 13 item 9, on a lossy link (issue 12): the same client and outcomes as the GUI.
    let port = free_port();
    let _sim = sim(
        &["--loss", "0.3", "--duplicate", "0.1", "--reorder", "0.1"],
        port,
    );
    let connect = format!("127.0.0.1:{port}");
    // One ID for the whole script: JAUS ends an emergency only when every client that set it
    // has cleared it, and each process otherwise takes an ID of its own (issue 18).
    let control = |actions: &[&str]| {
        bin()
            .args(["control", "--json", "--no-multicast", "--timeout", "30"])
            .args(["--jaus-id", "200.250.77", "--connect", &connect])
            .args(actions)
            .output()
            .unwrap()
    };
    let out = control(&["go-to", "Deploy", "emergency", "set"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["action"], "go-to Deploy");
    assert_eq!(lines[0]["outcome"]["result"], "completed");
    assert_eq!(lines[1]["outcome"]["result"], "confirmed");
    assert_eq!(lines[1]["status"], "EMERGENCY");
    // Resume in an emergency: refused, with the reason in words; exit status 1.
    let out = control(&["resume"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["outcome"]["reason"], "the arm is in EMERGENCY", "{v}");
    let out = control(&["emergency", "clear", "resume", "release"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A preset the arm does not have: refused, exit status 1; a bad action: usage, 2.
    assert_eq!(control(&["go-to", "Nowhere"]).status.code(), Some(1));
    assert_eq!(control(&["jump"]).status.code(), Some(2));
}

/// Issue 19: on a vehicle of two arms `control` commands only the arm named by
/// `--component`, and without it refuses to pick one (exit 4, nothing commanded).
#[test]
fn control_on_two_arms_needs_component_and_stops_only_the_named_arm() {
    let ports = [free_port(), free_port()];
    let _sims: Vec<_> = [("126.1.10", "0,-0.4,0"), ("126.1.11", "0,0.4,0,180")]
        .iter()
        .zip(ports)
        .map(|((id, mount), port)| sim(&["--id", id, "--mount", mount], port))
        .collect();
    let connect = |c: &mut std::process::Command| {
        c.args(["--no-multicast"])
            .args(["--connect", &format!("127.0.0.1:{}", ports[0])])
            .args(["--connect", &format!("127.0.0.1:{}", ports[1])]);
    };
    let mut unnamed = bin();
    unnamed.args(["control", "--json", "--timeout", "15"]);
    connect(&mut unnamed);
    let out = unnamed.args(["emergency", "set"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(j["error"].as_str().unwrap().contains("--component"), "{j}");
    assert_eq!(j["arms"].as_array().unwrap().len(), 2, "{j}");

    let mut named = bin();
    named.args([
        "control",
        "--json",
        "--timeout",
        "15",
        "--component",
        "126.1.11",
    ]);
    connect(&mut named);
    let out = named.args(["emergency", "set"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut probe = bin();
    probe.args(["probe", "--once", "--json", "--timeout", "15"]);
    connect(&mut probe);
    let out = probe.output().unwrap();
    assert!(out.status.success());
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let status = |id: &str| {
        j["arms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["component"] == id)
            .unwrap_or_else(|| panic!("{id} in {j}"))["status"]
            .clone()
    };
    assert_eq!(status("126.1.11"), "EMERGENCY");
    assert_eq!(
        status("126.1.10"),
        "READY",
        "the arm not named was not stopped"
    );
}

// -------------------------------------------------------------------------------------------
// Issue 44: the arm the operator named, at the address the operator named.

/// The status `probe --once --json` reports for the arm at `port`, asked there alone.
fn status_at(port: u16) -> String {
    let out = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "15",
        ])
        .args(["--connect", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "probe at {port}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(j["address"], format!("127.0.0.1:{port}"), "{j}");
    j["status"].as_str().unwrap_or_default().to_string()
}

/// Two `jaus-ocu sim` processes under one ID (126.1.10) on two free ports; `control
/// --connect P1 --no-multicast --component 126.1.10 emergency set`, in fresh runs, stops the
/// one at P1 and never the other, and says where it was.
#[test]
fn control_stops_the_arm_at_the_connect_address_never_its_twin() {
    for run in 0..4 {
        let ports = [free_port(), free_port()];
        // Started in either order: which is up first must not matter.
        let order = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut sims: Vec<(usize, common::Sim)> =
            order.iter().map(|&i| (i, sim(&[], ports[i]))).collect();
        sims.sort_by_key(|s| s.0);
        let (p1, p2) = (ports[0], ports[1]);
        let out = bin()
            .args(["control", "--json", "--no-multicast", "--timeout", "15"])
            .args(["--connect", &format!("127.0.0.1:{p1}")])
            .args(["--component", "126.1.10", "emergency", "set"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let j: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
            assert_eq!(j["outcome"]["result"], "confirmed", "run {run}: {j}");
            assert_eq!(j["address"], format!("127.0.0.1:{p1}"), "run {run}: {j}");
            assert_eq!(status_at(p1), "EMERGENCY", "run {run}: the arm named");
        } else {
            // The only other acceptable end: refused, naming both addresses.
            assert!(
                stdout.contains(&p1.to_string()) && stdout.contains(&p2.to_string())
                    || stderr.contains(&p1.to_string()) && stderr.contains(&p2.to_string()),
                "run {run}: exit {:?} without naming both addresses: {stdout} {stderr}",
                out.status.code()
            );
        }
        assert_eq!(status_at(p2), "READY", "run {run}: the twin at {p2}");
    }
}

/// `--no-multicast` queries only the addresses given: nothing reaches 127.0.0.1:3794 during
/// a `probe` and a `control` run (checked with a socket on 3794 when it is free; otherwise
/// the runs' own words are checked: no component at 3794 listed, not looked at).
#[test]
fn no_multicast_sends_nothing_to_the_default_local_address() {
    let port = free_port();
    let _sim = sim(&[], port);
    let listener = UdpSocket::bind("127.0.0.1:3794").ok();
    if listener.is_none() {
        eprintln!(
            "127.0.0.1:3794 is taken on this machine: not listening there; checking what the \
             runs say they looked at and found instead"
        );
    }
    // Our runs' own local port: what reaches 3794 from elsewhere is somebody else's.
    let ours = free_port();
    let bind = format!("127.0.0.1:{ours}");
    let connect = format!("127.0.0.1:{port}");
    let probe = bin()
        .args([
            "probe",
            "--once",
            "--json",
            "--no-multicast",
            "--timeout",
            "15",
        ])
        .args(["--bind", &bind, "--connect", &connect])
        .output()
        .unwrap();
    assert!(
        probe.status.success(),
        "{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let j: Value = serde_json::from_slice(&probe.stdout).expect("one JSON object");
    assert_eq!(j["address"], connect, "{j}");
    let listed: Vec<&str> = j["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["address"].as_str())
        .collect();
    assert!(listed.iter().all(|a| *a == connect), "{listed:?}");
    let control = bin()
        .args(["control", "--json", "--no-multicast", "--timeout", "15"])
        .args(["--bind", &bind, "--connect", &connect])
        .args(["--component", "126.1.10", "request-control", "release"])
        .output()
        .unwrap();
    assert!(
        control.status.success(),
        "{}",
        String::from_utf8_lossy(&control.stderr)
    );
    // Nothing without a --connect address to ask: said, exit 2, nothing sent.
    let none = bin()
        .args(["probe", "--once", "--no-multicast", "--timeout", "1"])
        .args(["--bind", &bind])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("--connect"),
        "{none:?}"
    );
    if let Some(socket) = listener {
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = [0u8; 2048];
        let mut ours_seen = 0;
        // Bounded: at most 10,000 datagrams are read (each 200 ms apart at worst would be
        // long, but a quiet socket ends the loop at the first timeout).
        for _ in 0..10_000 {
            match socket.recv_from(&mut buf) {
                Ok((_, from)) if from.port() == ours => ours_seen += 1,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert_eq!(
            ours_seen, 0,
            "datagrams from our runs reached 127.0.0.1:3794"
        );
    }
}
