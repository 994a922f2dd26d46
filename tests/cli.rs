//! The `decode` and `inspect` subcommands end to end, as a user runs them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod common;

const PCAP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/SAE_Management_PacketCapture.pcap"
);

/// The binary, with its identity file in the tests' scratch directory (not the user's).
fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_jaus-ocu"));
    c.env("JAUS_OCU_CONFIG_DIR", env!("CARGO_TARGET_TMPDIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("jaus-ocu runs")
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jaus-ocu runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

#[test]
fn decode_prints_one_readable_line_per_block() {
    let o = run(&[
        "decode",
        "02 00 11 00 19 0a 01 7e 00 14 01 7e 00 0d 00 c8 01 00",
    ]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).trim(),
        "126.1.20 -> 126.1.10 seq 1 [bcast=global ack=request]  RequestControl (0x000D) authority_code=200"
    );
}

#[test]
fn decode_json_has_the_documented_shape() {
    let o = run(&[
        "decode",
        "--json",
        "0200",
        "1100190a017e0014017e000d00c80100",
    ]);
    assert!(o.status.success());
    let j = &json_lines(&o)[0];
    assert_eq!(j["version"], 2);
    let b = &j["blocks"][0];
    assert_eq!(b["priority"], 1);
    assert_eq!(b["broadcast"], 2);
    assert_eq!(b["ack_nak"], 1);
    assert_eq!(b["data_flags"], 0);
    assert_eq!(b["destination"], "126.1.10");
    assert_eq!(b["source"], "126.1.20");
    assert_eq!(b["sequence"], 1);
    assert_eq!(b["message"]["id"], "0x000D");
    assert_eq!(b["message"]["name"], "RequestControl");
    assert_eq!(b["message"]["authority_code"], 200);
}

#[test]
fn decode_bare_message() {
    let o = run(&["decode", "--json", "--message", "02 40 05 00 00 00 00"]);
    assert!(o.status.success());
    let j = &json_lines(&o)[0];
    assert_eq!(j["name"], "ReportStatus");
    assert_eq!(j["status"], "EMERGENCY");
}

#[test]
fn decode_joint_types_resolve_openjaus_codes() {
    // Two joints sent with the ambiguous code 1; --joints RP says joint 2 is prismatic.
    let msg = "02 46 02 01 00 00 00 80 01 00 00 00 80";
    let o = run(&["decode", "--json", "--message", "--joints", "RP", msg]);
    let j = &json_lines(&o)[0];
    assert_eq!(j["joint_positions"][1]["joint_type"], "prismatic");
    let bad = run(&["decode", "--joints", "RX", msg]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("'X' is not a joint type"));
}

#[test]
fn decode_stdin_reports_bad_lines_and_carries_on() {
    let input = "02 00 10 00 01 0a 01 7e 00 14 01 7e 00 02 20 02 00\n\
                 not hex\n\
                 02 00 40 00\n\
                 03 00 10 00 01 0a 01 7e 00 14 01 7e 00 02 20 02 00\n\
                 02 00 11 00 01 14 01 7e 00 0a 01 7e 00 0f 00 00 01 00\n";
    let o = run_stdin(&["decode", "--json", "-"], input);
    assert_eq!(o.status.code(), Some(0));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["blocks"][0]["message"]["name"], "QueryStatus");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("not a hex digit")
    );
    assert!(lines[2]["error"].as_str().unwrap().contains("truncated"));
    assert_eq!(lines[2]["offset"], 1);
    assert!(lines[3]["error"].as_str().unwrap().contains("version 3"));
    assert_eq!(
        lines[4]["blocks"][0]["message"]["response_code"],
        "CONTROL_ACCEPTED"
    );
}

#[test]
fn decode_undecodable_body_keeps_the_header_and_says_where() {
    // ReportStatus cut short: the block frames, the message does not decode.
    let o = run(&[
        "decode",
        "--json",
        "02 00 11 00 01 14 01 7e 00 0a 01 7e 00 02 40 02 01 00",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let b = &json_lines(&o)[0]["blocks"][0];
    assert_eq!(b["source"], "126.1.10");
    assert!(b["message"].is_null());
    assert!(b["error"].as_str().unwrap().contains("Reserved"));
    assert_eq!(b["offset"], 16);
}

#[test]
fn decode_rejects_bad_hex_arguments_with_usage_status() {
    let o = run(&["decode", "02 0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("odd number of hex digits"));
}

#[test]
fn inspect_decodes_all_22_frames_of_the_real_capture_with_their_meaning() {
    let o = run(&["inspect", "--json", PCAP]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 22);
    let expected = [
        ("RequestControl", None),
        ("ACK", None),
        (
            "ConfirmControl",
            Some(("response_code", "CONTROL_ACCEPTED")),
        ),
        ("QueryStatus", None),
        ("ReportStatus", Some(("status", "STANDBY"))),
        ("Resume", None),
        ("QueryStatus", None),
        ("ReportStatus", Some(("status", "READY"))),
        ("SetEmergency", None),
        ("QueryStatus", None),
        ("ReportStatus", Some(("status", "EMERGENCY"))),
        ("ClearEmergency", None),
        ("QueryStatus", None),
        ("ReportStatus", Some(("status", "READY"))),
        ("Resume", None),
        ("Standby", None),
        ("ReleaseControl", None),
        ("RejectControl", Some(("response_code", "CONTROL_RELEASED"))),
        ("RequestControl", None),
        (
            "ConfirmControl",
            Some(("response_code", "CONTROL_ACCEPTED")),
        ),
        ("QueryStatus", None),
        ("ReportStatus", Some(("status", "STANDBY"))),
    ];
    for (i, (line, (name, field))) in lines.iter().zip(expected).enumerate() {
        assert_eq!(line["frame"], i as u64 + 1);
        let blocks = line["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 1, "frame {}", i + 1);
        let b = &blocks[0];
        assert!(
            b.get("error").is_none(),
            "frame {} has an error: {b}",
            i + 1
        );
        if name == "ACK" {
            assert_eq!(b["ack_nak"], 3);
            assert!(b["message"].is_null());
            continue;
        }
        assert_eq!(b["message"]["name"], name, "frame {}", i + 1);
        if let Some((k, v)) = field {
            assert_eq!(b["message"][k], v, "frame {}", i + 1);
        }
    }
    assert_eq!(lines[0]["source"], "192.168.0.242:3794");
    assert_eq!(lines[0]["destination"], "239.255.0.1:3794");
    assert_eq!(lines[0]["blocks"][0]["message"]["authority_code"], 200);
    assert_eq!(lines[0]["elapsed"], 0.0);
    assert!(lines[21]["elapsed"].as_f64().unwrap() > 90.0);
    let summary = String::from_utf8_lossy(&o.stderr);
    assert!(summary.contains("22 JUDP datagrams"), "{summary}");
}

#[test]
fn inspect_human_dump_names_every_frame() {
    let o = run(&["inspect", PCAP]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 22);
    assert!(out.lines().nth(10).unwrap().contains("status=EMERGENCY"));
}

#[test]
fn inspect_truncated_capture_shows_what_it_read_then_says_where_it_stopped() {
    let bytes = std::fs::read(PCAP).unwrap();
    let path = std::env::temp_dir().join(format!("jaus-ocu-truncated-{}.pcap", std::process::id()));
    std::fs::write(&path, &bytes[..1000]).unwrap();
    let o = run(&["inspect", "--json", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(1));
    let lines = json_lines(&o);
    assert!(
        lines.len() >= 10 && lines.len() < 22,
        "{} datagrams before the cut",
        lines.len()
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("reading stopped early"), "{err}");
}

#[test]
fn inspect_missing_file_is_a_clear_error() {
    let o = run(&["inspect", "/nonexistent/capture.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/capture.pcap"), "{err}");
}

#[test]
fn inspect_refuses_a_file_that_is_not_a_capture() {
    let o = run(&[
        "inspect",
        concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    // The same words as the GUI says for the same file.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not an MCAP recording or a pcap/pcapng capture"),
        "{err}"
    );
}

#[test]
fn connect_accepts_host_forms_and_a_bad_one_names_the_accepted_forms() {
    for bad in ["10.0.0.5:notaport", "two words", "10.0.0.5:70000"] {
        let o = run(&["probe", "--connect", bad, "--timeout", "0.1"]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("IP, IP:PORT, HOST or HOST:PORT") && err.contains("3794"),
            "{bad}: {err}"
        );
    }
    // A host name without a port is accepted (clap parses it before anything runs: the
    // probe then finds nothing in its 0.1 s and exits 2 for "no answer", not a usage error).
    let o = run(&[
        "probe",
        "--connect",
        "localhost",
        "--no-multicast",
        "--timeout",
        "0.1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("IP, IP:PORT"), "{err}");
}

#[test]
fn a_bad_memory_limit_is_a_usage_error_that_says_what_is_accepted() {
    for (args, why) in [
        (
            &["replay", "--memory-limit", "lots", "x.mcap"][..],
            "512M, 2G",
        ),
        (&["demo", "--memory-limit", "2X"][..], "unknown unit"),
        (&["--memory-limit", "1M"][..], "at least 32 MB"),
        (
            &["replay", "--memory-limit", "150%", "x.mcap"][..],
            "at most 100 %",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(why) && err.contains("--memory-limit"),
            "{args:?}: {err}"
        );
    }
    // A good limit gets past the parser: the missing file is what fails then.
    let o = run(&["replay", "--memory-limit", "512M", "/nonexistent/x.mcap"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("memory limit"), "{err}");
}

#[test]
fn sim_with_an_unknown_arm_name_lists_the_built_in_arms() {
    let o = run(&["sim", "--arm", "puma"]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("demo, puma560, ur5e"), "{err}");
}

#[test]
fn inspect_summary_of_the_real_capture_counts_messages_peers_and_gaps() {
    let o = run(&["inspect", "--summary", "--json", PCAP]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 1, "one summary object");
    let s = &lines[0];
    assert_eq!(s["format"], "pcap");
    assert_eq!(s["datagrams"]["total"], 22);
    assert_eq!(s["messages"]["ReportStatus"], 5);
    assert_eq!(s["messages"]["QueryStatus"], 5);
    assert_eq!(s["messages"]["RequestControl"], 2);
    assert_eq!(s["messages"]["SetEmergency"], 1);
    let peers = s["peers"].as_object().unwrap();
    assert_eq!(peers.len(), 2, "{peers:?}");
    let duration = s["duration_s"].as_f64().unwrap();
    assert!((duration - 92.046).abs() < 0.01, "duration {duration}");
    // Frames 1 to 4 are 24.6 s apart: a gap in the manipulator's traffic.
    let gaps = s["gaps"].as_array().unwrap();
    assert!(
        gaps.iter().any(|g| g["length_s"].as_f64().unwrap() > 20.0),
        "{gaps:?}"
    );
}

#[test]
fn record_refuses_a_nonsense_duration_with_usage_status() {
    let o = run(&[
        "record",
        "--out",
        "/tmp/never-written.mcap",
        "--duration",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--duration 0: give a positive number"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!std::path::Path::new("/tmp/never-written.mcap").exists());
}

#[test]
fn record_into_a_missing_directory_says_which_path_failed() {
    // Its own address to ask (nothing there), whatever runs on 127.0.0.1:3794.
    let connect = format!("127.0.0.1:{}", common::free_port());
    let o = run(&[
        "record",
        "--out",
        "/nonexistent-dir/x.mcap",
        "--duration",
        "1",
        "--no-multicast",
        "--connect",
        &connect,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-dir/x.mcap"), "{err}");
}

#[test]
fn export_without_an_output_is_a_usage_error_naming_the_outputs() {
    let o = run(&["export", PCAP]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--pcapng") && err.contains("--csv") && err.contains("--urdf"),
        "{err}"
    );
}

#[test]
fn export_help_says_what_stands_for_the_ocus_own_address() {
    let o = run(&["export", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    assert!(help.contains("127.0.0.1:0"), "{help}");
    assert!(help.contains("--local"), "{help}");
}

#[test]
fn export_of_the_real_capture_to_pcapng_reads_back_frame_for_frame() {
    let dir = std::env::temp_dir().join(format!("jaus-ocu-cli-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("sae.pcapng");
    let o = run(&["export", PCAP, "--pcapng", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let original = json_lines(&run(&["inspect", "--json", PCAP]));
    let exported = json_lines(&run(&["inspect", "--json", out.to_str().unwrap()]));
    assert_eq!(original.len(), 22);
    assert_eq!(exported.len(), original.len());
    for (a, b) in original.iter().zip(&exported) {
        let (mut a, mut b) = (a.clone(), b.clone());
        for v in [&mut a, &mut b] {
            let o = v.as_object_mut().unwrap();
            // Frame numbers count every frame of a file; times are compared below.
            o.remove("frame");
            o.remove("time");
            o.remove("elapsed");
        }
        assert_eq!(a, b);
    }
    for (a, b) in original.iter().zip(&exported) {
        let (ta, tb) = (a["time"].as_f64().unwrap(), b["time"].as_f64().unwrap());
        assert!((ta - tb).abs() < 1e-6, "{ta} vs {tb}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inspect_summary_counts_the_tolerated_peer_deviations() {
    // Issue 13: an ACK carrying a payload bundled before a ConfirmControl (§9 C11), and a
    // SetEmergency with a 1-byte code (§9 C10), hand-built (wire reference §4.2).
    fn block(flags: u8, dst: [u8; 4], src: [u8; 4], payload: &[u8], seq: u16) -> Vec<u8> {
        let mut b = vec![0x00];
        b.extend_from_slice(&(14 + payload.len() as u16).to_le_bytes());
        b.push(flags);
        b.extend_from_slice(&dst);
        b.extend_from_slice(&src);
        b.extend_from_slice(payload);
        b.extend_from_slice(&seq.to_le_bytes());
        b
    }
    let (arm, ocu) = ([10u8, 1, 126, 0], [1u8, 1, 200, 0]);
    let mut ack = vec![0x02];
    ack.extend(block(0x31, ocu, arm, &[0x0d, 0x00, 0xc8], 1));
    ack.extend(block(0x01, ocu, arm, &[0x0f, 0x00, 0x00], 2));
    let mut stop = vec![0x02];
    stop.extend(block(0x01, arm, ocu, &[0x06, 0x00, 0x01], 7));
    let (a, o): (std::net::SocketAddr, std::net::SocketAddr) = (
        "127.0.0.1:3794".parse().unwrap(),
        "127.0.0.1:40000".parse().unwrap(),
    );
    let path =
        std::env::temp_dir().join(format!("jaus-ocu-tolerated-{}.pcapng", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let mut w = jaus_ocu::record::pcapng::PcapngWriter::new(file, None).unwrap();
    w.write_udp(1_000_000_000, a, o, None, &ack).unwrap();
    w.write_udp(1_100_000_000, o, a, None, &stop).unwrap();
    w.finish().unwrap();
    let out = run(&["inspect", "--summary", "--json", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = &json_lines(&out)[0];
    assert_eq!(s["tolerated"]["ack_payload"], 1, "{s}");
    assert_eq!(s["tolerated"]["short_emergency_code"], 1, "{s}");
    assert_eq!(s["messages"]["ConfirmControl"], 1, "{s}");
    assert_eq!(s["malformed"], 0, "{s}");
}

#[test]
fn serve_on_an_address_in_use_says_so_and_what_to_do() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let connect = format!("127.0.0.1:{}", common::free_port());
    let o = run(&[
        "serve",
        "--listen",
        &addr,
        "--no-multicast",
        "--connect",
        &connect,
        "--duration",
        "1",
    ]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&addr) && err.contains("in use"), "{err}");
    assert!(err.contains("--listen"), "{err}");
}

#[test]
fn serve_a_missing_file_names_it() {
    let o = run(&[
        "serve",
        "/nonexistent-dir/x.mcap",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-dir/x.mcap"), "{err}");
}
