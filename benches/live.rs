//! The live view server under a 1 kHz arm (issue 33). Run: `cargo bench --bench live`
//! (about 1.5 minutes with the defaults; `LIVE_SECONDS` per phase, default 10;
//! `LIVE_STALL_SECONDS`, default 30, 0 skips the stalled viewer).
//!
//! One run, everything side by side over real loopback UDP: a real sim (`sim::host::spawn`,
//! physics at 1 kHz) serves one arm to a real [`NetHandle`] that subscribes to joint positions
//! and end-effector force/torque at 1 kHz each (`ClientConfig::rates`). The main thread is the
//! OCU's consumer: it drains `handle.updates()` and takes, per `JointPositions` and
//! `ForceTorque` update, receive->update = (now - `handle.start()`) - t, as `benches/net.rs`
//! does. A [`LiveServer`] is attached to the handle's tap (as `jaus-ocu serve` wires it) in
//! some phases, with viewer threads (`tests/common/ws.rs`) reading continuously.
//!
//! 1. Receive -> WebSocket latency, per data message on `/jaus/joint_positions` and
//!    `/jaus/force_torque` a viewer receives: (its arrival in the viewer) - (its log time, the
//!    OCU's receive timestamp of the datagram). Both are on the tap's clock
//!    ([`Epoch::unix_ns_at`]: ns since the Unix epoch, advanced by the monotonic clock), so a
//!    wall-clock step during the run cannot skew them. Counted over a window of the phase's
//!    log times, per viewer, against rate x seconds and against what the OCU's consumer got.
//! 2. The OCU's receive->update percentiles in phases: no server (first), 1 viewer,
//!    4 viewers, the stalled viewer's phases, no server (last). The two no-server phases are
//!    the run's spread.
//! 3. A viewer that stops reading for `LIVE_STALL_SECONDS` while the feed goes on: the
//!    process's RSS every 5 s, receive->update before and during the stall, the feed's losses
//!    (`LiveStats::dropped`), then whether the viewer gets fresh data when it reads again and
//!    whether a new viewer gets the latched state at once.
//!
//! Every wait has a deadline and fails with what it waited for.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

#[path = "../tests/common/ws.rs"]
mod ws;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use jaus_ocu::jaus::JausId;
use jaus_ocu::model::update::{ArmFact, Update};
use jaus_ocu::net::client::{ClientConfig, Rates};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::{Epoch, Tap};
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::record::live::{LiveConfig, LiveServer, LiveStats};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host;
use ws::Viewer;

/// The arm's rate for each of the two signals, Hz.
const RATE: f64 = 1000.0;
/// The two sample topics measured.
const TOPICS: [&str; 2] = ["/jaus/joint_positions", "/jaus/force_torque"];
/// Every wait ends when its condition holds, else fails after this.
const DEADLINE: Duration = Duration::from_secs(20);
/// A viewer keeps reading this long after its window, for the window's last messages.
const DRAIN: Duration = Duration::from_millis(1500);

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The process's resident set, MiB (`VmRSS` in /proc/self/status).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Per thread name: (CPU ns, run-queue wait ns) from /proc/self/task/*/schedstat, summed
/// over threads of the same name.
fn thread_cpu() -> std::collections::BTreeMap<String, (u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        let v: Vec<u64> = stat
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if v.len() >= 2 {
            let e: &mut (u64, u64) = m.entry(comm.trim().to_owned()).or_default();
            e.0 += v[0];
            e.1 += v[1];
        }
    }
    m
}

/// The server's and the viewers' threads' CPU and run-queue wait over `ns`, % of one core.
fn cpu_line(
    a: &std::collections::BTreeMap<String, (u64, u64)>,
    b: &std::collections::BTreeMap<String, (u64, u64)>,
    ns: u64,
) -> String {
    b.iter()
        .filter(|(n, _)| n.starts_with("jaus-live") || n.starts_with("bench-viewer"))
        .map(|(n, (cpu, wait))| {
            let (c0, w0) = a.get(n).copied().unwrap_or_default();
            format!(
                "{n} {:.0}/{:.0}",
                100.0 * cpu.saturating_sub(c0) as f64 / ns as f64,
                100.0 * wait.saturating_sub(w0) as f64 / ns as f64
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Latency percentiles of `v` (ms, sorted here): p50, p99, p99.9, max.
#[derive(Debug, Clone, Copy)]
struct Pct {
    n: usize,
    p50: f64,
    p99: f64,
    p999: f64,
    max: f64,
}

impl Pct {
    fn of(mut v: Vec<f64>) -> Pct {
        v.sort_by(f64::total_cmp);
        Pct {
            n: v.len(),
            p50: percentile(&v, 0.5),
            p99: percentile(&v, 0.99),
            p999: percentile(&v, 0.999),
            max: v.last().copied().unwrap_or(f64::NAN),
        }
    }

    fn line(&self) -> String {
        format!(
            "p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms (n {})",
            self.p50, self.p99, self.p999, self.max, self.n
        )
    }
}

/// The OCU under test: the sim, the network side and its tap.
struct Rig {
    net: NetHandle,
    tap: Tap,
    epoch: Epoch,
    _sim: host::SimHandle,
}

impl Rig {
    fn start() -> Rig {
        let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let sim_addr = socket.local_addr().unwrap();
        let cfg = SimConfig {
            id: JausId::new(126, 1, 10),
            rate_hz: RATE,
            event_timeout_min: 0,
            tour: true,
            ..SimConfig::default()
        };
        let sim = host::spawn(
            Component::new(ArmFile::demo(), cfg),
            socket,
            Faults::default(),
            1,
        )
        .unwrap();
        let epoch = Epoch::now();
        let tap = Tap::new();
        let net = NetHandle::spawn(NetConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            client: ClientConfig {
                connect: vec![sim_addr],
                multicast: None,
                rates: Rates {
                    positions: RATE,
                    force_torque: RATE,
                    ..Rates::default()
                },
                ..ClientConfig::default()
            },
            tap: tap.clone(),
            epoch: Some(epoch),
            ..NetConfig::default()
        })
        .unwrap();
        Rig {
            net,
            tap,
            epoch,
            _sim: sim,
        }
    }

    /// Seconds since the session's start now.
    fn now_s(&self) -> f64 {
        self.epoch.seconds(Instant::now())
    }

    /// Waits until both signals arrive at >= 90 % of the rate over one second.
    fn wait_for_rate(&self) -> f64 {
        let end = Instant::now() + DEADLINE;
        let setup = Instant::now();
        loop {
            let c = self.consume(1.0, &mut |_| {});
            if c.positions as f64 >= 0.9 * RATE && c.force_torque as f64 >= 0.9 * RATE {
                return setup.elapsed().as_secs_f64();
            }
            assert!(
                Instant::now() < end,
                "the OCU did not get joint positions and F/T at {RATE} Hz within {DEADLINE:?} \
                 (last second: {} positions, {} F/T updates)",
                c.positions,
                c.force_torque
            );
        }
    }

    /// Drains the OCU's updates for `secs`, calling `tick` with the seconds elapsed at least
    /// every 50 ms, and measures receive->update of the sample updates received in the window.
    fn consume(&self, secs: f64, tick: &mut dyn FnMut(f64)) -> Consumed {
        let start = Instant::now();
        let from_s = self.now_s();
        let end = start + Duration::from_secs_f64(secs);
        let mut c = Consumed {
            from_ns: self.epoch.unix_ns_at(start),
            to_ns: 0,
            lat: Vec::new(),
            positions: 0,
            force_torque: 0,
        };
        // Touched now, so that the RSS read during the phase is not this vector growing.
        c.lat.resize((secs * RATE * 2.2) as usize + 16, 0.0);
        c.lat.clear();
        let mut last_sample = Instant::now();
        while Instant::now() < end {
            if let Ok(u) = self.net.updates().recv_timeout(Duration::from_millis(50)) {
                let now = self.now_s();
                let sample = match &u {
                    Update::Arm {
                        fact: ArmFact::JointPositions { t, .. },
                        ..
                    } => Some((0, *t)),
                    Update::Arm {
                        fact: ArmFact::ForceTorque { t, .. },
                        ..
                    } => Some((1, *t)),
                    _ => None,
                };
                if let Some((kind, t)) = sample
                    && t >= from_s
                {
                    if kind == 0 {
                        c.positions += 1;
                    } else {
                        c.force_torque += 1;
                    }
                    c.lat.push((now - t) * 1e3);
                    last_sample = Instant::now();
                }
            }
            assert!(
                last_sample.elapsed() < Duration::from_secs(3),
                "no joint positions or F/T reached the OCU's consumer for 3 s"
            );
            tick(start.elapsed().as_secs_f64());
        }
        c.to_ns = self.epoch.unix_ns_at(Instant::now());
        c
    }
}

/// What the OCU's consumer got in one window.
struct Consumed {
    from_ns: u64,
    to_ns: u64,
    /// receive->update, ms, of both signals.
    lat: Vec<f64>,
    positions: u64,
    force_torque: u64,
}

/// What a viewer received: per topic, (log time, arrival) on the tap's clock, ns.
#[derive(Default)]
struct Seen {
    samples: [Vec<(u64, u64)>; 2],
}

impl Seen {
    fn record(&mut self, r: &ws::Received, epoch: &Epoch) {
        if let Some(i) = TOPICS.iter().position(|t| *t == r.topic) {
            self.samples[i].push((r.log_time, epoch.unix_ns_at(r.at)));
        }
    }

    /// Count per topic and latencies (ms) of the messages logged in [from, to].
    fn window(&self, from: u64, to: u64) -> ([u64; 2], Vec<f64>) {
        let mut counts = [0; 2];
        let mut lat = Vec::new();
        for (i, s) in self.samples.iter().enumerate() {
            for &(log, at) in s.iter().filter(|(log, _)| (from..=to).contains(log)) {
                counts[i] += 1;
                lat.push((at as f64 - log as f64) / 1e6);
            }
        }
        (counts, lat)
    }
}

/// Connects, subscribes to everything and waits for both sample topics.
fn connect_and_subscribe(addr: SocketAddr, epoch: &Epoch, seen: &mut Seen) -> Viewer {
    let mut viewer = Viewer::connect(addr);
    let mut got = Vec::new();
    let ok = viewer.read_until(DEADLINE, &mut got, &|got, _| {
        TOPICS.iter().all(|t| got.iter().any(|r| r.topic == *t))
    });
    assert!(
        ok,
        "a viewer did not get both {TOPICS:?} within {DEADLINE:?} of connecting"
    );
    for r in &got {
        seen.record(r, epoch);
    }
    viewer
}

/// A viewer thread reading continuously until `stop`; `ready` once it has both topics.
fn spawn_viewer(
    name: String,
    addr: SocketAddr,
    epoch: Epoch,
    ready: Arc<std::sync::atomic::AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> JoinHandle<(Viewer, Seen)> {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let mut seen = Seen::default();
            let mut viewer = connect_and_subscribe(addr, &epoch, &mut seen);
            ready.fetch_add(1, Ordering::SeqCst);
            let mut channels = viewer.channels.len();
            while !stop.load(Ordering::Relaxed) {
                if let Some(r) = viewer.poll() {
                    seen.record(&r, &epoch);
                }
                if viewer.channels.len() != channels {
                    channels = viewer.channels.len();
                    viewer.subscribe_all();
                }
            }
            (viewer, seen)
        })
        .unwrap()
}

/// Starts a server attached to the rig's tap.
fn server(rig: &Rig) -> LiveServer {
    let cfg = LiveConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        rig.epoch.unix_ns,
        Some(jaus_ocu::ui::theme::ScenePalette::new(true).foxglove_look()),
    );
    let mut s = LiveServer::start(&cfg).unwrap();
    assert!(s.attach(&rig.tap), "the tap takes no more sinks");
    s
}

/// Starts `n` reading viewers and waits until each has both sample topics, consuming the
/// OCU's updates meanwhile.
fn viewers(
    rig: &Rig,
    addr: SocketAddr,
    n: usize,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<(Viewer, Seen)>> {
    let ready = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let threads: Vec<_> = (0..n)
        .map(|i| {
            spawn_viewer(
                format!("bench-viewer-{i}"),
                addr,
                rig.epoch,
                ready.clone(),
                stop.clone(),
            )
        })
        .collect();
    let end = Instant::now() + DEADLINE;
    while ready.load(Ordering::SeqCst) < n {
        assert!(
            threads.iter().all(|t| !t.is_finished()),
            "a viewer thread ended before it was ready (see its panic above)"
        );
        assert!(
            Instant::now() < end,
            "only {} of {n} viewers got both sample topics within {DEADLINE:?}",
            ready.load(Ordering::SeqCst)
        );
        rig.consume(0.05, &mut |_| {});
    }
    threads
}

/// One phase's figures.
struct Phase {
    name: String,
    ocu: Pct,
    ocu_counts: (u64, u64),
    secs: f64,
    viewers: Vec<([u64; 2], Pct)>,
    stats: Option<LiveStats>,
    /// CPU and run-queue wait of the server's and the viewers' threads.
    cpu: String,
}

/// Runs a phase with a server and `n` continuously reading viewers (none: no server).
fn phase(rig: &Rig, name: &str, n: Option<usize>, secs: f64) -> Phase {
    let Some(n) = n else {
        let c = rig.consume(secs, &mut |_| {});
        return Phase {
            name: name.into(),
            secs: (c.to_ns - c.from_ns) as f64 / 1e9,
            ocu_counts: (c.positions, c.force_torque),
            ocu: Pct::of(c.lat),
            viewers: Vec::new(),
            stats: None,
            cpu: String::new(),
        };
    };
    let server = server(rig);
    let stop = Arc::new(AtomicBool::new(false));
    let threads = viewers(rig, server.address(), n, &stop);
    let cpu0 = thread_cpu();
    let c = rig.consume(secs, &mut |_| {});
    let cpu = cpu_line(&cpu0, &thread_cpu(), c.to_ns - c.from_ns);
    // The window's last messages are in flight: keep consuming while the viewers drain.
    rig.consume(DRAIN.as_secs_f64(), &mut |_| {});
    stop.store(true, Ordering::Relaxed);
    let stats = server.stats();
    let viewers = threads
        .into_iter()
        .map(|t| {
            let (_viewer, seen) = t.join().expect("a viewer thread panicked");
            let (counts, lat) = seen.window(c.from_ns, c.to_ns);
            (counts, Pct::of(lat))
        })
        .collect();
    server.stop();
    Phase {
        name: name.into(),
        secs: (c.to_ns - c.from_ns) as f64 / 1e9,
        ocu_counts: (c.positions, c.force_torque),
        ocu: Pct::of(c.lat),
        viewers,
        stats: Some(stats),
        cpu,
    }
}

fn print_phase(p: &Phase) {
    println!("\n{} ({:.2} s):", p.name, p.secs);
    println!(
        "  OCU receive->update: {}; consumer got {} positions + {} F/T updates (expected {:.0} each)",
        p.ocu.line(),
        p.ocu_counts.0,
        p.ocu_counts.1,
        RATE * p.secs
    );
    for (i, (counts, pct)) in p.viewers.iter().enumerate() {
        println!(
            "  viewer {i}: receive->WebSocket {}; got {} positions + {} F/T messages (expected {:.0} each)",
            pct.line(),
            counts[0],
            counts[1],
            RATE * p.secs
        );
    }
    if let Some(s) = &p.stats {
        println!(
            "  server: {} viewers, {} datagrams decoded, {} messages logged, {} feed drops, {} latched sent",
            s.viewers, s.datagrams, s.messages, s.dropped, s.latched_sent
        );
        println!(
            "  threads, % of one core (CPU / waiting for a CPU): {}",
            p.cpu
        );
    }
}

/// What the stalled-viewer phase found.
struct Stall {
    secs: f64,
    rss: Vec<(f64, f64)>,
    before: Pct,
    during: Pct,
    dropped_before: u64,
    dropped_after: u64,
    /// Resumed viewer: stale messages read first, then seconds to the first fresh one of each
    /// topic (logged after it resumed), and the oldest message's age when read, s.
    stale: usize,
    fresh_after: Option<f64>,
    oldest_age: f64,
    /// New viewer: seconds to `/jaus/specification` and `/jaus/arm_state`.
    latched_after: Option<f64>,
    latched_sent: u64,
}

fn stall_phase(rig: &Rig, stall_secs: f64, before_secs: f64) -> Stall {
    let server = server(rig);
    let addr = server.address();
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = viewers(rig, addr, 1, &stop);
    let before = rig.consume(before_secs, &mut |_| {});
    stop.store(true, Ordering::Relaxed);
    let (mut stuck, _) = threads.pop().unwrap().join().expect("the viewer panicked");
    // From here nobody reads `stuck`; its socket stays open.
    let dropped_before = server.stats().dropped;
    let mut rss = vec![(0.0, rss_mib())];
    let mut next = 5.0;
    let during = rig.consume(stall_secs, &mut |t| {
        if t >= next {
            rss.push((t, rss_mib()));
            next += 5.0;
        }
    });
    rss.push((stall_secs, rss_mib()));
    let dropped_after = server.stats().dropped;

    // The stuck viewer reads again; a new viewer connects; the OCU keeps consuming.
    let resumed_ns = rig.epoch.unix_ns_at(Instant::now());
    let epoch = rig.epoch;
    let resume = std::thread::Builder::new()
        .name("bench-resumed".into())
        .spawn(move || {
            let start = Instant::now();
            let (mut stale, mut oldest_age) = (0usize, 0.0f64);
            let mut fresh = [false; 2];
            while start.elapsed() < DEADLINE && !fresh.iter().all(|f| *f) {
                let Some(r) = stuck.poll() else { continue };
                let Some(i) = TOPICS.iter().position(|t| *t == r.topic) else {
                    continue;
                };
                let at = epoch.unix_ns_at(r.at);
                oldest_age = oldest_age.max((at as f64 - r.log_time as f64) / 1e9);
                if r.log_time >= resumed_ns {
                    fresh[i] = true;
                } else {
                    stale += 1;
                }
            }
            let fresh_after = fresh
                .iter()
                .all(|f| *f)
                .then(|| start.elapsed().as_secs_f64());
            (stale, fresh_after, oldest_age)
        })
        .unwrap();
    let late = std::thread::Builder::new()
        .name("bench-late".into())
        .spawn(move || {
            let start = Instant::now();
            let mut viewer = Viewer::connect(addr);
            let mut got = Vec::new();
            viewer
                .read_until(DEADLINE, &mut got, &|got, _| {
                    ["/jaus/specification", "/jaus/arm_state"]
                        .iter()
                        .all(|t| got.iter().any(|r| r.topic == *t))
                })
                .then(|| start.elapsed().as_secs_f64())
        })
        .unwrap();
    let end = Instant::now() + DEADLINE + Duration::from_secs(5);
    while !(resume.is_finished() && late.is_finished()) {
        assert!(
            Instant::now() < end,
            "the resumed or the new viewer did not finish within {DEADLINE:?}"
        );
        rig.consume(0.05, &mut |_| {});
    }
    let (stale, fresh_after, oldest_age) = resume.join().expect("the resumed viewer panicked");
    let latched_after = late.join().expect("the new viewer panicked");
    let latched_sent = server.stats().latched_sent;
    server.stop();
    Stall {
        secs: stall_secs,
        rss,
        before: Pct::of(before.lat),
        during: Pct::of(during.lat),
        dropped_before,
        dropped_after,
        stale,
        fresh_after,
        oldest_age,
        latched_after,
        latched_sent,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to configure.
    let secs = env_f64("LIVE_SECONDS", 10.0).max(1.0);
    let stall_secs = env_f64("LIVE_STALL_SECONDS", 30.0).max(0.0);
    println!("command: cargo bench --bench live");
    println!(
        "  LIVE_SECONDS={secs} per phase, LIVE_STALL_SECONDS={stall_secs}; one arm (sim, physics {RATE} Hz) -> real NetHandle over loopback UDP, joint positions + end-effector F/T at {RATE} Hz each; {} cores",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    // The consumer is the measuring instrument: raised as the OCU's network threads are
    // (where the system allows; `benches/net.rs` does the same), so that the viewers' and the
    // server's threads competing for the cores show in the OCU's figures, not in the
    // instrument's own wake-ups.
    let consumer = jaus_ocu::net::priority::raise_current();
    println!("  consumer (the measuring instrument): {consumer:?}");
    let rss_start = rss_mib();
    let rig = Rig::start();
    let setup = rig.wait_for_rate();
    println!(
        "  setup: both signals at >= 90 % of {RATE} Hz after {setup:.2} s; RSS {rss_start:.1} MiB at start"
    );

    let mut phases = vec![phase(&rig, "no server (first)", None, secs)];
    print_phase(&phases[0]);
    for (name, n) in [("server, 1 viewer", 1), ("server, 4 viewers", 4)] {
        phases.push(phase(&rig, name, Some(n), secs));
        print_phase(phases.last().unwrap());
    }
    let stall = (stall_secs > 0.0).then(|| stall_phase(&rig, stall_secs, secs.min(5.0)));
    if let Some(s) = &stall {
        println!("\nstalled viewer ({:.0} s without reading):", s.secs);
        let rss: Vec<String> = s
            .rss
            .iter()
            .map(|(t, m)| format!("{t:.0} s {m:.1}"))
            .collect();
        println!("  RSS MiB: {}", rss.join(", "));
        println!("  OCU receive->update before: {}", s.before.line());
        println!("  OCU receive->update during: {}", s.during.line());
        println!(
            "  feed drops (LiveStats.dropped): {} before the stall, {} after",
            s.dropped_before, s.dropped_after
        );
        println!(
            "  reading again: {} stale sample messages first (oldest {:.2} s old when read), fresh data on both topics {}",
            s.stale,
            s.oldest_age,
            s.fresh_after.map_or_else(
                || format!("NOT within {DEADLINE:?}"),
                |t| format!("after {t:.3} s")
            )
        );
        println!(
            "  a new viewer: specification + arm_state {} (server's latched_sent {})",
            s.latched_after.map_or_else(
                || format!("NOT within {DEADLINE:?}"),
                |t| format!("after {t:.3} s")
            ),
            s.latched_sent
        );
    }
    phases.push(phase(&rig, "no server (last)", None, secs));
    print_phase(phases.last().unwrap());
    let rss_end = rss_mib();
    rig.net.shutdown(Duration::from_millis(200));

    // The summary, for the README.
    println!("\n--- summary (cargo bench --bench live; {secs} s per phase, one run) ---");
    println!(
        "OCU receive->update (positions + F/T at {RATE} Hz each), ms:\n  {:<26} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "phase", "n", "p50", "p99", "p99.9", "max"
    );
    let row = |name: &str, p: &Pct| {
        println!(
            "  {name:<26} {:>7} {:>7.3} {:>7.3} {:>7.3} {:>7.3}",
            p.n, p.p50, p.p99, p.p999, p.max
        );
    };
    for p in &phases {
        row(&p.name, &p.ocu);
    }
    if let Some(s) = &stall {
        row("stall: before", &s.before);
        row("stall: during", &s.during);
    }
    let spread = (phases[0].ocu.p99 - phases.last().unwrap().ocu.p99).abs();
    println!("  spread of p99 (no server, first vs last): {spread:.3} ms");
    println!(
        "receive->WebSocket per viewer, ms (received / expected per topic):\n  {:<26} {:>7} {:>7} {:>7} {:>7} {:>15} {:>15}",
        "phase, viewer", "p50", "p99", "p99.9", "max", "positions", "F/T"
    );
    for p in phases.iter().filter(|p| !p.viewers.is_empty()) {
        for (i, (counts, pct)) in p.viewers.iter().enumerate() {
            println!(
                "  {:<26} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>15} {:>15}",
                format!("{} #{i}", p.name),
                pct.p50,
                pct.p99,
                pct.p999,
                pct.max,
                format!("{}/{:.0}", counts[0], RATE * p.secs),
                format!("{}/{:.0}", counts[1], RATE * p.secs),
            );
        }
    }
    if let Some(s) = &stall {
        let first = s.rss.first().map_or(f64::NAN, |r| r.1);
        let peak = s.rss.iter().map(|r| r.1).fold(f64::NAN, f64::max);
        println!(
            "stalled viewer ({:.0} s): RSS {first:.1} -> peak {peak:.1} MiB; feed drops {}; fresh data on reading again: {}; new viewer's latched state: {}",
            s.secs,
            s.dropped_after,
            s.fresh_after.map_or("NO".into(), |t| format!("{t:.3} s")),
            s.latched_after.map_or("NO".into(), |t| format!("{t:.3} s")),
        );
    }
    println!("RSS: {rss_start:.1} MiB at start, {rss_end:.1} MiB at the end");
}
