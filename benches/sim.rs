//! Simulator load (issue 3): one sim serving ten subscribers, each subscribed at 1 kHz to joint
//! positions, joint velocities and end-effector force/torque.
//!
//! Two measurements, run by `cargo bench --bench sim`:
//! 1. criterion, in memory: the sans-I/O component simulating one second (1000 ticks) with the
//!    30 subscriptions: the time it takes is the component's CPU share of one core.
//! 2. over real loopback UDP for `SIM_LOAD_SECONDS` (default 10): achieved event rates per
//!    subscription at the clients, and the CPU time of the sim's two threads (from
//!    /proc/self/task/*/schedstat), as a share of one core.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole; \
              their peers and load generators are raw sockets outside net/ on purpose"
)]

use std::collections::HashMap;
use std::hint::black_box;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use criterion::Criterion;
use jaus_ocu::jaus::core::{CreateEvent, EventType, RequestControl};
use jaus_ocu::jaus::iop::QueryManipulatorEndEffectorForceTorque;
use jaus_ocu::jaus::judp::{self, Datagram, Header};
use jaus_ocu::jaus::manipulator::{QueryJointPositions, QueryJointVelocity};
use jaus_ocu::jaus::{EmbeddedMessage, JausId, Message};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, Outgoing, SimConfig};
use jaus_ocu::sim::host;

const SUBSCRIBERS: u8 = 10;
const RATE: f64 = 1000.0;

fn queries() -> [Message; 3] {
    [
        QueryJointPositions.into(),
        QueryJointVelocity.into(),
        QueryManipulatorEndEffectorForceTorque {
            presence_vector: 0xff,
        }
        .into(),
    ]
}

fn subscribe(client: JausId, seq: &mut u16) -> Vec<Vec<u8>> {
    queries()
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let m: Message = CreateEvent {
                request_id: i as u8,
                event_type: EventType::Periodic,
                requested_periodic_rate: RATE,
                query_message: EmbeddedMessage::new(q).unwrap(),
            }
            .into();
            *seq += 1;
            judp::single(
                &Header::new(SimConfig::default().id, client, *seq),
                &m.emit().unwrap(),
            )
            .unwrap()
        })
        .collect()
}

fn client_id(i: u8) -> JausId {
    JausId::new(200, 1, i + 1)
}

fn in_memory(c: &mut Criterion) {
    // No event timeout: criterion runs far more simulated minutes than a subscription lives.
    let cfg = SimConfig {
        tour: true,
        event_timeout_min: 0,
        ..SimConfig::default()
    };
    let mut sim = Component::new(ArmFile::demo(), cfg);
    let mut out: Vec<Outgoing> = Vec::new();
    for i in 0..SUBSCRIBERS {
        let addr: SocketAddr = format!("127.0.0.1:{}", 40_000 + u16::from(i))
            .parse()
            .unwrap();
        let mut seq = 0;
        for d in subscribe(client_id(i), &mut seq) {
            sim.handle_datagram(0.0, addr, &d, &mut out);
        }
    }
    assert_eq!(sim.subscriptions(), 30);
    let mut now = 0.0;
    let mut g = c.benchmark_group("sim_component");
    g.sample_size(20);
    g.bench_function("one_simulated_second_10x3_subscriptions_at_1kHz", |b| {
        b.iter(|| {
            let mut sent = 0;
            for _ in 0..1000 {
                now += 0.001;
                sim.tick(now, &mut out);
                sent += out.len();
                out.clear();
            }
            // Every subscription fired every tick.
            assert!(sent >= 30 * 1000, "{sent} datagrams in a simulated second");
            black_box(sent)
        });
    });
    g.finish();
}

/// CPU time (s) of this process's threads whose name starts with `prefix`.
fn thread_cpu(prefix: &str) -> f64 {
    let mut total = 0.0;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.trim().starts_with(prefix) {
                let s = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
                let ns: f64 = s
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0.0);
                total += ns / 1e9;
            }
        }
    }
    total
}

fn loopback() {
    let secs: f64 = std::env::var("SIM_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sim = host::spawn(
        Component::new(
            ArmFile::demo(),
            SimConfig {
                tour: true,
                ..SimConfig::default()
            },
        ),
        socket,
        Faults::default(),
        1,
    )
    .unwrap();
    let addr = sim.local_addr();
    let cpu0 = thread_cpu("jaus-sim");
    let t0 = Instant::now();
    let results: Vec<HashMap<u8, u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SUBSCRIBERS)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("bench-client-{i}"))
                    .spawn_scoped(scope, move || {
                        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
                        let mut seq = 0;
                        for d in subscribe(client_id(i), &mut seq) {
                            s.send_to(&d, addr).unwrap();
                        }
                        // Warm-up second: not counted.
                        let start = Instant::now() + Duration::from_secs(1);
                        let end = start + Duration::from_secs_f64(secs);
                        let mut counts: HashMap<u8, u64> = HashMap::new();
                        let mut buf = [0u8; 2048];
                        while Instant::now() < end {
                            let Ok((n, _)) = s.recv_from(&mut buf) else {
                                continue;
                            };
                            if Instant::now() < start {
                                continue;
                            }
                            let Ok(dg) = Datagram::new_checked(&buf[..n]) else {
                                continue;
                            };
                            for b in dg.blocks().flatten() {
                                if let Ok(Message::Event(e)) = Message::parse(b.block.payload()) {
                                    *counts.entry(e.event_id).or_default() += 1;
                                }
                            }
                            // Keep the subscription alive like an OCU would (control is not needed
                            // for events, but this exercises a second message kind).
                            if counts.values().sum::<u64>() % 5000 == 0 {
                                seq += 1;
                                let m: Message = RequestControl { authority_code: 1 }.into();
                                let _ = s.send_to(
                                    &judp::single(
                                        &Header::new(SimConfig::default().id, client_id(i), seq),
                                        &m.emit().unwrap(),
                                    )
                                    .unwrap(),
                                    addr,
                                );
                            }
                        }
                        counts
                    })
                    .unwrap()
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu("jaus-sim") - cpu0;
    let (stats, _) = sim.stop();
    let mut rates: Vec<f64> = results
        .iter()
        .flat_map(|m| m.values().map(|n| *n as f64 / secs))
        .collect();
    rates.sort_by(f64::total_cmp);
    let total: f64 = rates.iter().sum();
    println!(
        "sim over loopback UDP: {SUBSCRIBERS} subscribers x 3 events at {RATE} Hz, {secs} s measured"
    );
    println!(
        "  achieved rate per subscription: min {:.1} Hz, median {:.1} Hz, max {:.1} Hz ({} subscriptions); total {:.0} events/s",
        rates.first().copied().unwrap_or(0.0),
        rates.get(rates.len() / 2).copied().unwrap_or(0.0),
        rates.last().copied().unwrap_or(0.0),
        rates.len(),
        total
    );
    println!(
        "  sim threads CPU: {:.2} s in {:.2} s wall = {:.1} % of one core; sent {} datagrams, {} events",
        cpu,
        wall,
        100.0 * cpu / wall,
        stats.sent,
        stats.events_sent
    );
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    in_memory(&mut c);
    c.final_summary();
    loopback();
}
