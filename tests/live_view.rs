//! The live view server (`record::live`, issue 33), seen by a client of Foxglove's WebSocket
//! protocol: read-only, every channel with its JSON schema, the latched state at once for a
//! viewer that connects late, the same messages as the recording of the same session, a
//! viewer that stops reading costs the feed nothing, and what a viewer on a thin link does
//! not receive is counted for it and told to it (issue 46) while a fast viewer loses nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

#[path = "common/sim_net.rs"]
mod sim_net;
#[path = "common/ws.rs"]
mod ws;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use jaus_ocu::jaus::judp;
use jaus_ocu::model::command::Command;
use jaus_ocu::net::tap::Tap;
use jaus_ocu::record::live::{LiveConfig, LiveServer};
use jaus_ocu::record::live_file;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::harness::{Passage, SimNet};
use ws::{Received, Viewer};

/// Generous: a busy machine; every wait ends as soon as its condition holds.
const DEADLINE: Duration = Duration::from_secs(20);

/// The client and the simulated demo arm in memory.
fn demo_net() -> SimNet {
    sim_net::sim_net(ArmFile::demo(), 7)
}

fn server(backlog: usize) -> LiveServer {
    let mut cfg = LiveConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        0,
        Some(jaus_ocu::ui::theme::ScenePalette::new(true).foxglove_look()),
    );
    cfg.backlog = backlog;
    LiveServer::start(&cfg).unwrap()
}

fn wait_for(what: &str, cond: &dyn Fn() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the session in steps of 20 ms of its time while `viewer` reads, until `cond` holds.
fn pump(
    net: &mut SimNet,
    feed: &mut dyn FnMut(&Passage<'_>),
    viewer: &mut Viewer,
    got: &mut Vec<Received>,
    cond: &dyn Fn(&[Received]) -> bool,
) {
    let end = Instant::now() + DEADLINE;
    while !cond(got) {
        assert!(Instant::now() < end, "timed out: got {:?}", topics(got));
        net.run_with(0.02, feed);
        while let Some(r) = viewer.poll() {
            got.push(r);
        }
        viewer.subscribe_all();
    }
}

fn topics(got: &[Received]) -> BTreeSet<&str> {
    got.iter().map(|r| r.topic.as_str()).collect()
}

fn json(r: &Received) -> serde_json::Value {
    serde_json::from_slice(&r.payload).unwrap_or_else(|e| panic!("{}: not JSON ({e})", r.topic))
}

/// Every key the channel's schema requires is in the message (the CI's npm client checks
/// the whole schema with ajv).
fn check_required(viewer: &Viewer, got: &[Received]) {
    for r in got {
        let channel = viewer
            .channels
            .values()
            .find(|c| c.topic == r.topic)
            .unwrap();
        let schema: serde_json::Value = serde_json::from_str(&channel.schema).unwrap();
        let v = json(r);
        for key in schema["required"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap();
            assert!(v.get(key).is_some(), "{}: no {key} in {v}", r.topic);
        }
    }
}

#[test]
fn a_late_viewer_gets_the_latched_state_at_once_on_read_only_json_channels() {
    let mut net = demo_net();
    let tap = Tap::new();
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(1.0, &mut feed);
    net.command(Command::RequestControl { authority: 100 });
    net.run_with(2.0, &mut feed);
    // The server starts mid-session: the tap's latch hands it the state learned before.
    let mut server = server(1024);
    assert!(server.attach(&tap));
    net.run_with(1.0, &mut feed);
    let fed = tap.latched().len();
    wait_for("the server to decode what it was fed", &|| {
        server.stats().datagrams as usize >= fed
    });
    // The session is over: nothing new arrives, whatever the viewer gets now was latched.
    let mut viewer = Viewer::connect(server.address());
    let mut got = Vec::new();
    let latched = viewer.read_until(DEADLINE, &mut got, &|got, _| {
        ["/jaus/specification", "/jaus/arm_state", "/foxglove/scene"]
            .iter()
            .all(|t| got.iter().any(|r| r.topic == *t))
    });
    assert!(
        latched,
        "the latched state did not arrive: got {:?}",
        got.iter().map(|r| &r.topic).collect::<BTreeSet<_>>()
    );
    let info = viewer.server_info.clone().expect("serverInfo");
    let caps: Vec<&str> = info["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for forbidden in [
        "clientPublish",
        "services",
        "parameters",
        "parametersSubscribe",
    ] {
        assert!(
            !caps.contains(&forbidden),
            "advertises {forbidden}: {caps:?}"
        );
    }
    for c in viewer.channels.values() {
        assert_eq!(c.encoding, "json", "{}", c.topic);
        assert_eq!(c.schema_encoding, "jsonschema", "{}", c.topic);
        let _: serde_json::Value = serde_json::from_str(&c.schema)
            .unwrap_or_else(|e| panic!("{}: schema is not JSON: {e}", c.topic));
    }
    check_required(&viewer, &got);
    let state = got.iter().find(|r| r.topic == "/jaus/arm_state").unwrap();
    let state = json(state);
    assert_eq!(state["component"], "126.1.10");
    assert_eq!(state["management"], "ready", "{state}");
    assert_eq!(state["control"]["authority"], 100, "{state}");
    assert!(state["control"]["holder"].is_string(), "{state}");
    assert!(server.stats().latched_sent >= 3);

    // A viewer may not publish: the server says no, and the session goes on.
    viewer.send_text(
        r#"{"op":"advertise","channels":[{"id":1,"topic":"/cmd","encoding":"json","schemaName":"x"}]}"#,
    );
    let mut more = Vec::new();
    viewer.read_until(Duration::from_secs(2), &mut more, &|_, v| {
        !v.statuses.is_empty()
    });
    assert!(server.stats().running);
    server.stop();
}

#[test]
fn the_live_view_sends_the_same_messages_as_the_recording_of_the_same_session() {
    let mut net = demo_net();
    let tap = Tap::new();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("live-same-{}.mcap", std::process::id()));
    let mut rcfg = RecorderConfig::new(path.clone(), 0);
    rcfg.foxglove = Some(jaus_ocu::ui::theme::ScenePalette::new(true).foxglove_look());
    let recorder = Recorder::start(rcfg).unwrap();
    tap.connect_at(recorder.sender(), 0);
    let mut server = server(1 << 16);
    assert!(server.attach(&tap));
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(1.0, &mut feed);
    let mut viewer = Viewer::connect(server.address());
    let mut got = Vec::new();
    // Subscribed to the sample channels before the compared seconds.
    pump(&mut net, &mut feed, &mut viewer, &mut got, &|got| {
        [
            "/jaus/joint_positions",
            "/jaus/force_torque",
            "/foxglove/transforms",
        ]
        .iter()
        .all(|t| got.iter().any(|r| r.topic == *t))
    });
    let from_ns = net.now_ns();
    net.run_with(2.0, &mut feed);
    let to_ns = net.now_ns();
    recorder.stop().unwrap();
    // Everything the server logged in those seconds reaches the viewer.
    let compared = [
        "/jaus/joint_positions",
        "/jaus/force_torque",
        "/foxglove/transforms",
    ];
    let bytes = std::fs::read(&path).unwrap();
    let mut recorded: Vec<(String, u64, Vec<u8>)> = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| compared.contains(&m.channel.topic.as_str()))
        .filter(|m| m.log_time > from_ns && m.log_time <= to_ns)
        .map(|m| (m.channel.topic.clone(), m.log_time, m.data.to_vec()))
        .collect();
    recorded.sort();
    assert!(recorded.len() > 200, "only {} recorded", recorded.len());
    let in_window = |r: &Received| {
        compared.contains(&r.topic.as_str()) && r.log_time > from_ns && r.log_time <= to_ns
    };
    let want = recorded.len();
    viewer.read_until(DEADLINE, &mut got, &|got, _| {
        got.iter().filter(|r| in_window(r)).count() >= want
    });
    let mut live: Vec<(String, u64, Vec<u8>)> = got
        .iter()
        .filter(|r| in_window(r))
        .map(|r| (r.topic.clone(), r.log_time, r.payload.clone()))
        .collect();
    live.sort();
    let missing: Vec<_> = recorded
        .iter()
        .filter(|r| !live.contains(r))
        .map(|r| (&r.0, r.1))
        .collect();
    assert!(missing.is_empty(), "not sent live: {missing:?}");
    assert_eq!(live.len(), recorded.len(), "message counts differ");
    for (l, r) in live.iter().zip(&recorded) {
        assert_eq!(l, r, "live and recorded differ");
    }
    server.stop();
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_viewer_that_stops_reading_costs_the_feed_nothing_and_loses_no_latched_state() {
    let mut net = demo_net();
    let tap = Tap::new();
    let mut server = server(64);
    assert!(server.attach(&tap));
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(0.5, &mut feed);
    let mut stuck = Viewer::connect(server.address());
    let mut got = Vec::new();
    pump(&mut net, &mut feed, &mut stuck, &mut got, &|got| {
        got.iter().any(|r| r.topic == "/jaus/joint_positions")
    });
    // From here the viewer reads nothing. The session goes on for 20 s of its time, fed as
    // fast as the server takes it (the tap drops for the server alone when it is behind).
    let before = server.stats().datagrams;
    let mut offered = 0u64;
    let mut count = |p: &Passage<'_>| {
        offered += 1;
        tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    };
    for _ in 0..40 {
        net.run_with(0.5, &mut count);
        // Paced so the feed's own queue never overflows: what is measured is the viewer.
        wait_for("the server to keep up", &|| server.queued() < 1000);
    }
    wait_for("every datagram decoded", &|| {
        server.stats().datagrams + server.stats().dropped >= before + offered
    });
    let stats = server.stats();
    assert_eq!(
        stats.dropped, 0,
        "the stuck viewer slowed the server: {stats:?}"
    );
    // A new viewer gets the arm at once all the same.
    let mut fresh = Viewer::connect(server.address());
    let mut got = Vec::new();
    assert!(fresh.read_until(DEADLINE, &mut got, &|got, _| {
        got.iter().any(|r| r.topic == "/jaus/specification")
            && got.iter().any(|r| r.topic == "/jaus/arm_state")
    }));
    assert_eq!(server.stats().viewers, 2);
    drop(stuck);
    server.stop();
}

#[test]
fn a_viewer_on_a_thin_link_has_its_losses_counted_and_told_while_a_fast_one_loses_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let mut net = demo_net();
    let tap = Tap::new();
    let mut server = server(1024);
    assert!(server.attach(&tap));
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(0.5, &mut feed);
    // Both subscribe to everything and get the positions.
    let mut fast = Viewer::connect(server.address());
    let mut slow = Viewer::connect_small(server.address(), 4096);
    let (mut got_fast, mut got_slow) = (Vec::new(), Vec::new());
    let positions = |got: &[Received]| got.iter().any(|r| r.topic == "/jaus/joint_positions");
    let end = Instant::now() + DEADLINE;
    while !(positions(&got_fast) && positions(&got_slow)) {
        assert!(Instant::now() < end, "the viewers never got the positions");
        net.run_with(0.02, &mut feed);
        for (v, got) in [(&mut fast, &mut got_fast), (&mut slow, &mut got_slow)] {
            while let Some(r) = v.poll() {
                got.push(r);
            }
            v.subscribe_all();
        }
    }
    let (fast_at, slow_at) = (fast.local_addr(), slow.local_addr());
    // From here the slow viewer reads nothing; the fast one reads all the time on its own
    // thread.
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let reader = {
        let (stop, received) = (stop.clone(), received.clone());
        std::thread::Builder::new()
            .name("fast-viewer".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if fast.poll().is_some() {
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                }
                fast
            })
            .unwrap()
    };
    let viewer = |at: SocketAddr| {
        let stats = server.stats();
        stats.per_viewer.iter().find(|v| v.peer == at).cloned()
    };
    let end = Instant::now() + Duration::from_mins(1);
    while viewer(slow_at).is_none_or(|v| v.not_received == 0) {
        assert!(
            Instant::now() < end,
            "the slow viewer never lost anything: {:?}",
            server.stats()
        );
        net.run_with(0.5, &mut feed);
        wait_for("the server to keep up", &|| server.queued() < 1000);
    }
    let stats = server.stats();
    let slow_stats = viewer(slow_at).unwrap();
    let fast_stats = viewer(fast_at).expect("the fast viewer is counted too");
    assert!(slow_stats.not_received > 0, "{stats:?}");
    assert_eq!(
        fast_stats.not_received, 0,
        "the fast viewer lost: {stats:?}"
    );
    assert!(fast_stats.sent > slow_stats.sent, "{stats:?}");
    assert_eq!(stats.not_received, slow_stats.not_received, "{stats:?}");
    assert_eq!(stats.dropped, 0, "the feed itself kept up: {stats:?}");
    // The slow viewer reads again: it is told what it did not receive.
    let told = |_: &[Received], v: &Viewer| {
        v.statuses.iter().any(|s| {
            s["id"] == "jaus-ocu-not-received"
                && s["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("did not receive"))
        })
    };
    assert!(
        slow.read_until(DEADLINE, &mut got_slow, &told),
        "the slow viewer was not told: {:?}",
        slow.statuses
    );
    stop.store(true, Ordering::Relaxed);
    let fast = reader.join().unwrap();
    assert!(received.load(Ordering::Relaxed) > 0);
    assert!(
        !fast
            .statuses
            .iter()
            .any(|s| s["id"] == "jaus-ocu-not-received"),
        "the fast viewer was told of losses: {:?}",
        fast.statuses
    );
    server.stop();
}

#[test]
fn a_server_that_falls_behind_loses_datagrams_counted_and_tells_its_viewers() {
    let mut cfg = LiveConfig::new("127.0.0.1:0".parse().unwrap(), 0, None);
    cfg.capacity = 1;
    let server = LiveServer::start(&cfg).unwrap();
    let mut viewer = Viewer::connect(server.address());
    let mut got = Vec::new();
    // A viewer is connected (the server info came) before anything is lost.
    assert!(viewer.read_until(DEADLINE, &mut got, &|_, v| v.server_info.is_some()));
    let mut net = demo_net();
    let mut records = Vec::new();
    net.run_with(2.0, &mut |p: &Passage<'_>| {
        records.push(jaus_ocu::net::tap::WireRecord {
            t_ns: p.t_ns,
            direction: p.direction,
            peer: p.peer,
            bytes: p.bytes.to_vec(),
            latched: None,
        });
    });
    for r in records {
        server.offer(r);
    }
    assert!(
        server.stats().dropped > 0,
        "a queue of one keeps nothing up"
    );
    assert!(
        viewer.read_until(DEADLINE, &mut got, &|_, v| {
            v.statuses.iter().any(|s| {
                s["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("fell behind"))
            })
        }),
        "no status said so: {:?}",
        viewer.statuses
    );
    server.stop();
}

/// A recording of `seconds` of a simulated session, with control taken at 1 s.
fn recording(name: &str, seconds: f64) -> PathBuf {
    let mut net = demo_net();
    let tap = Tap::new();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("live-{name}-{}.mcap", std::process::id()));
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), 0)).unwrap();
    tap.connect_at(recorder.sender(), 0);
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(1.0, &mut feed);
    net.command(Command::RequestControl { authority: 100 });
    net.run_with(seconds - 1.0, &mut feed);
    recorder.stop().unwrap();
    path
}

#[test]
fn a_served_file_follows_foxglove_s_playback_control_seek_and_pause() {
    let path = recording("playback", 8.0);
    let port = judp::PORT;
    let span = live_file::span(&path, port).unwrap().unwrap();
    assert!(span.last_ns - span.first_ns > 7_000_000_000, "{span:?}");
    let mut cfg = LiveConfig::new("127.0.0.1:0".parse().unwrap(), span.origin, None);
    cfg.playback = Some((span.first_ns, span.last_ns));
    let server = std::sync::Arc::new(LiveServer::start(&cfg).unwrap());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let player = {
        let (server, stop, path, span) = (server.clone(), stop.clone(), path.clone(), span.clone());
        std::thread::Builder::new()
            .name("test-file-player".into())
            .spawn(move || {
                let done = || stop.load(std::sync::atomic::Ordering::Relaxed);
                live_file::play(&server, &path, port, &span, false, &done, &mut |_| {}).unwrap()
            })
            .unwrap()
    };
    let mut viewer = Viewer::connect(server.address());
    let mut got = Vec::new();
    assert!(viewer.read_until(DEADLINE, &mut got, &|got, _| {
        got.iter().any(|r| r.topic == "/jaus/joint_positions")
    }));
    let caps = viewer.server_info.clone().unwrap()["capabilities"].to_string();
    assert!(caps.contains("playbackControl"), "{caps}");
    assert!(!caps.contains("clientPublish"), "{caps}");

    // Seek to 6 s: the arm as it was then at once (specification again, control held), and
    // the positions go on from there.
    let to = span.first_ns + 6_000_000_000;
    viewer.send_playback(true, 1.0, Some(to));
    let mut after = Vec::new();
    assert!(viewer.read_until(DEADLINE, &mut after, &|got, v| {
        v.playback.iter().any(|p| p.3)
            && got.iter().any(|r| r.topic == "/jaus/specification")
            && got
                .iter()
                .any(|r| r.topic == "/jaus/joint_positions" && r.log_time >= to)
    }));
    let state = after
        .iter()
        .rev()
        .find(|r| r.topic == "/jaus/arm_state")
        .map(json)
        .expect("the summary again after the seek");
    assert_eq!(state["control"]["authority"], 100, "{state}");

    // Pause: the positions stop where the playback said it paused.
    viewer.send_playback(false, 1.0, None);
    let mut paused = Vec::new();
    assert!(viewer.read_until(DEADLINE, &mut paused, &|_, v| {
        v.playback.last().is_some_and(|p| p.0 == 1)
    }));
    let at = viewer.playback.last().unwrap().1;
    let mut later = Vec::new();
    viewer.read_until(Duration::from_millis(800), &mut later, &|_, _| false);
    let newest = later
        .iter()
        .filter(|r| r.topic == "/jaus/joint_positions")
        .map(|r| r.log_time)
        .max()
        .unwrap_or(0);
    assert!(
        newest <= at + 100_000_000,
        "positions went on {} ms past the pause",
        (newest - at) / 1_000_000
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(player.join().unwrap(), 1);
    let _ = std::fs::remove_file(path);
}
