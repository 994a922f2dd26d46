//! OCU network-side load (issue 4): joint-position Events through the client state machine
//! and the network thread. Run: `cargo bench --bench net` (about three minutes).
//!
//! 1. In memory, one core, criterion (target: >= 1,000,000 datagrams/s). A [`Client`] and the
//!    sim [`Component`] are wired on the in-memory network ([`SimNet`], 1 ms fake clock) until
//!    the link is Live and the
//!    joint-position event is active. A real `JointPositions` Event datagram the sim sent
//!    (7-joint demo arm) is then replayed as a stream of distinct datagrams: each gets the next
//!    JUDP sequence number (last 2 bytes of the block) and the next Event sequence number, and
//!    the fake clock advances 20 us (50 kHz). Before timing, `stream_is_applied_in_full`
//!    proves every datagram yields one `JointPositions` update across JUDP sequence wraps.
//!    `handle_publish_drain` (the target) times per datagram: `handle_datagram`, then
//!    [`Publisher::publish`] of each update into a bounded crossbeam channel (4096, the
//!    network thread's default), then the consumer's `try_recv` drain in the same thread, so
//!    the channel never fills and nothing is coalesced. `batch_256_...` batches as the network
//!    thread does. The `part_*` functions price the pieces (codec, `handle_datagram` alone,
//!    publish + drain; the shared [`Endpoint`]'s intake of one datagram and its duplicate check
//!    ([`SeqWindow`], the client's since the endpoint replaced its linear scan); and copies of
//!    private client code: the `DecodeContext` clone, a `SipHash` map insert). The printed
//!    loss-burst check shows how many valid datagrams the client discards after a burst of
//!    lost ones (u8 Event sequence numbers). (The bitset window is proved equal to the scan it
//!    replaced by a unit test of `net::endpoint`.)
//!
//! 2. Over real loopback UDP (target: `NET_LOAD_RATE` = 50,000 datagrams/s for
//!    `NET_LOAD_SECONDS` = 10 s, 0 skips this part, with zero loss inside the OCU and p99
//!    receive->update latency <= 1 ms). A real sim (`sim::host::spawn`) serves discovery,
//!    the specification and the subscriptions to a real [`NetHandle`] through a proxy thread
//!    (`bench-proxy`) that owns the address the OCU knows as the sim's: it forwards both ways
//!    and watches the sim's Events for the joint-position event ID, its last Event sequence
//!    number, the last JUDP sequence number, and a template. Once Live, the proxy blasts
//!    copies of that Event (the sim's JAUS ID, the active event ID: nothing is `unexpected`)
//!    with consecutive JUDP and Event sequence numbers and the blaster index as joint 1's raw
//!    position integer, keeping each index's send instant in a table. It withholds the sim's
//!    own joint-position Events meanwhile (they would be out of order) and forwards the rest,
//!    renumbered from the same JUDP counter. The blaster must send from the sim's address: the
//!    client re-learns a peer's address from every datagram, so a blaster on another socket
//!    would divert the OCU's queries away from the sim.
//!    The consumer (the main thread) drains `handle.updates()` with a blocking receive and
//!    takes, per blaster update, receive->update = (now - `handle.start()`) - t (the OCU's
//!    clock, from the receive thread's timestamp) and send->update = now - send instant.
//!    Loss is counted at each stage: at the OCU's socket (/proc/net/udp `drops`), before the
//!    client (everything the proxy sent vs `NetStats.datagrams`, read once the proxy has
//!    stopped sending), inside the OCU (`queue_dropped`, `duplicates`, `unexpected`,
//!    `updates_coalesced`, `updates_dropped`), and as the runs of indices that never reached
//!    the consumer.
//!    CPU: on a quiet machine the blaster busy-waits on `Instant` (with `yield_now`, so the
//!    scheduler can run others on its core) and takes a large share of one of the 2 cores
//!    this was written for; the OCU's two threads, the consumer and the sim share the rest.
//!    Loaded, the blaster stands in for the arm, another machine whose sending the OCU's busy
//!    cores must not slow: it runs at real-time priority (`net::priority`) and paces by
//!    sleeping to 1 ms slots (bursts of rate/1000 datagrams), as `NET_LOAD_PACING=sleep`
//!    does on request. Each thread's CPU time, run-queue wait and context switches, and the
//!    share of the machine other processes used during the run, are printed so contention
//!    can be judged.
//!    Six variants run side by side (issue 14), then a table: the receive thread handing
//!    each datagram over alone (`NetConfig::receive_batch` 1, the way before batches) or in
//!    batches (the default); the network threads at normal priority or raised to real time
//!    (`NetConfig::raise_priority`, the default where the system allows it: root,
//!    `CAP_SYS_NICE` or an `rtprio` limit); on the quiet machine or "loaded": two busy-loop
//!    threads (`bench-busy-0/1`, always at normal priority) spinning on the two cores for the
//!    whole blast, as a GUI on the software renderer and a recorder would. With raised
//!    network threads the consumer (the measuring instrument) is raised too, so that its
//!    own run-queue wait is not counted as the OCU's; one variant leaves it normal to show
//!    what that wait is. The table gives loss inside the OCU, in the
//!    kernel's socket buffer (`/proc/net/udp` drops, also `NetStats::kernel_dropped`) and
//!    before the client, latency percentiles, the CPU of `jaus-net-rx` and `jaus-net` per
//!    datagram and their context switches per datagram. `NET_LOAD_VARIANTS=loaded`
//!    (comma-separated parts of names; a variant runs when its name holds any) runs a subset.
//!    JUDP sequence numbers wrap every 65,536 datagrams (1.3 s at 50 kHz), inside the client's
//!    2 s duplicate window; the window also stops at 256 entries, which is why the wraps pass
//!    (the in-memory check and the run's `duplicates` show it).

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
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use crossbeam_channel::{Receiver, bounded};
use jaus_ocu::jaus::core::Event;
use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::jaus::manipulator::POSITION;
use jaus_ocu::jaus::wire::Scale;
use jaus_ocu::jaus::{DecodeContext, JausId, Message};
use jaus_ocu::model::update::{
    ArmFact, ComponentId, Delivery, LinkState, NetFact, NetStats, Remark, Signal, Update,
};
use jaus_ocu::net::client::{Client, ClientConfig, Output};
use jaus_ocu::net::endpoint::{Endpoint, InboundKind, Numbering, SeqWindow};
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::Direction;
use jaus_ocu::net::thread::{NetConfig, NetHandle, Publisher};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::sim::host;

/// `ReportJointPositions`' message ID.
const REPORT_JOINT_POSITIONS: u16 = 0x4602;
/// Offset of the Event's `SequenceNumber` in a single-block datagram: version byte, 12-byte
/// block header, message ID (2), `EventID` (1).
const EVENT_SEQ_AT: usize = 1 + 12 + 2 + 1;
/// Offset of joint 1's raw position integer: then `SequenceNumber` (1), `ReportMessage` count
/// (u32), the report's message ID (2), joint count (1), joint 1's unit code (1).
const JOINT1_RAW_AT: usize = EVENT_SEQ_AT + 1 + 4 + 2 + 1 + 1;
/// Fake-clock step between datagrams in memory: the loopback rate, 50 kHz.
const STEP_S: f64 = 20e-6;

/// The Event inside a single-block datagram, with the block's JUDP sequence number.
fn event_of(bytes: &[u8]) -> Option<(u16, Option<Event>)> {
    let dg = Datagram::new_checked(bytes).ok()?;
    let mut blocks = dg.blocks();
    let b = blocks.next()?.ok()?;
    if blocks.next().is_some() {
        return None;
    }
    let seq = Header::parse(&b.block).sequence;
    match Message::parse(b.block.payload()) {
        Ok(Message::Event(e)) => Some((seq, Some(e))),
        _ => Some((seq, None)),
    }
}

/// Whether `e` carries a `ReportJointPositions`.
fn is_positions(e: &Event) -> bool {
    e.report_message.message_id() == Some(REPORT_JOINT_POSITIONS)
}

/// Writes the JUDP sequence, the Event sequence and joint 1's raw integer into `dg`.
fn stamp(dg: &mut [u8], judp_seq: u16, event_seq: u8, joint1_raw: Option<u32>) {
    let n = dg.len();
    dg[n - 2..].copy_from_slice(&judp_seq.to_le_bytes());
    dg[EVENT_SEQ_AT] = event_seq;
    if let Some(raw) = joint1_raw {
        dg[JOINT1_RAW_AT..JOINT1_RAW_AT + 4].copy_from_slice(&raw.to_le_bytes());
    }
}

/// The scale of joint 1's position on the demo arm (to write and read blaster indices).
fn joint1_scale() -> Scale {
    POSITION.scale(ArmFile::demo().spec.joint_types()[0].into())
}

/// Checks the offsets above against the decoder on a stamped copy of `template`.
fn check_offsets(template: &[u8]) {
    let mut dg = template.to_vec();
    stamp(&mut dg, 0xbeef, 0x5a, Some(123_456));
    let (seq, e) = event_of(&dg).expect("a single-block datagram");
    let e = e.expect("an Event");
    assert_eq!((seq, e.sequence_number), (0xbeef, 0x5a));
    let ctx = DecodeContext {
        joint_kinds: jaus_ocu::net::reports::decode_context(&ArmFile::demo().spec).joint_kinds,
    };
    match e.report_message.decode(&ctx) {
        Ok(Message::ReportJointPositions(r)) => {
            assert_eq!(r.joint_positions.len(), 7);
            assert_eq!(
                joint1_scale().encode(r.joint_positions[0].value),
                Ok(123_456)
            );
        }
        other => panic!("not a ReportJointPositions: {other:?}"),
    }
}

/// A stream of distinct joint-position Events continuing the sim's own.
struct Stream {
    dg: Vec<u8>,
    judp_seq: u16,
    event_seq: u8,
    now: f64,
    from: SocketAddr,
}

impl Stream {
    /// The next datagram, the time it arrives and where from.
    fn next(&mut self) -> (f64, SocketAddr, &[u8]) {
        self.judp_seq = self.judp_seq.wrapping_add(1);
        self.event_seq = self.event_seq.wrapping_add(1);
        self.now += STEP_S;
        stamp(&mut self.dg, self.judp_seq, self.event_seq, None);
        (self.now, self.from, &self.dg)
    }
}

/// A client with a Live session and an active joint-position event against the sim, on the
/// in-memory network with a 1 ms fake clock, and the stream continuing the sim's last
/// positions Event.
fn live_client() -> (Client, Stream) {
    let (client, mut streams) = live_vehicle(1);
    (client, streams.pop().unwrap())
}

/// A client following `n` simulated arms (126.1.10, 126.1.11, …, each at its own address),
/// every one Live with an active joint-position event, and one stream per arm continuing
/// that arm's last positions Event.
fn live_vehicle(n: usize) -> (Client, Vec<Stream>) {
    let addrs: Vec<SocketAddr> = (0..n)
        .map(|i| SocketAddr::from(([127, 0, 0, 1], 3794 + i as u16)))
        .collect();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let mut net = SimNet::new(
        ClientConfig {
            connect: addrs.clone(),
            multicast: None,
            ..ClientConfig::default()
        },
        ocu_addr,
        Duration::from_millis(1),
        1,
    );
    for (i, addr) in addrs.iter().enumerate() {
        // No event timeout: the fake clock runs for minutes of simulated time without renewals.
        let cfg = SimConfig {
            id: JausId::new(126, 1, 10 + i as u8),
            event_timeout_min: 0,
            seed: 1 + i as u64,
            ..SimConfig::default()
        };
        net.add_peer(*addr, Component::new(ArmFile::demo(), cfg));
    }
    let mut live: HashMap<ComponentId, (bool, bool)> = HashMap::new();
    let mut last_judp: HashMap<SocketAddr, u16> = HashMap::new();
    let mut templates: HashMap<SocketAddr, (Vec<u8>, u8)> = HashMap::new();
    for _ in 0..20_000 {
        let t = net.now();
        net.step_with(&mut |p| {
            if p.direction == Direction::Rx
                && let Some((seq, e)) = event_of(p.bytes)
            {
                last_judp.insert(p.peer, seq);
                if let Some(e) = e.filter(is_positions) {
                    templates.insert(p.peer, (p.bytes.to_vec(), e.sequence_number));
                }
            }
        });
        for u in net.updates.drain(..) {
            let Update::Arm { arm, fact } = u else {
                continue;
            };
            let entry = live.entry(arm).or_default();
            match fact {
                ArmFact::Link { state, .. } => entry.0 = state == LinkState::Live,
                ArmFact::Delivery {
                    signal: Signal::JointPositions,
                    delivery: Delivery::Event(_),
                    ..
                } => entry.1 = true,
                _ => {}
            }
        }
        let ready = live.len() == n
            && live.values().all(|(l, s)| *l && *s)
            && addrs.iter().all(|a| templates.contains_key(a));
        if ready {
            let streams = addrs
                .iter()
                .map(|a| {
                    let (dg, event_seq) = templates.remove(a).unwrap();
                    check_offsets(&dg);
                    Stream {
                        dg,
                        judp_seq: last_judp[a],
                        event_seq,
                        now: t,
                        from: *a,
                    }
                })
                .collect();
            return (net.client, streams);
        }
    }
    panic!(
        "the in-memory client did not follow {n} arms Live with active joint-position events in 20 s"
    );
}

/// Round robin over one stream per arm, one clock for all: the datagrams of a vehicle.
struct Vehicle {
    streams: Vec<Stream>,
    next: usize,
    now: f64,
}

impl Vehicle {
    fn new(streams: Vec<Stream>) -> Self {
        let now = streams.iter().map(|s| s.now).fold(0.0, f64::max);
        Self {
            streams,
            next: 0,
            now,
        }
    }

    fn next(&mut self) -> (f64, SocketAddr, &[u8]) {
        let i = self.next;
        self.next = (i + 1) % self.streams.len();
        self.now += STEP_S;
        let s = &mut self.streams[i];
        s.now = self.now - STEP_S;
        s.next()
    }
}

/// Proves every datagram of the stream is applied (one `JointPositions` update each), across a
/// JUDP sequence wrap inside the 2 s duplicate window.
fn stream_is_applied_in_full() {
    let (mut client, mut stream) = live_client();
    let before = client.stats();
    let mut out = Output::default();
    let n = 200_000u64;
    let mut positions = 0u64;
    for _ in 0..n {
        let (now, from, dg) = stream.next();
        client.handle_datagram(now, from, dg, &mut out);
        positions += out
            .updates
            .iter()
            .filter(|u| {
                matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::JointPositions { .. },
                        ..
                    }
                )
            })
            .count() as u64;
        out.clear();
    }
    let after = client.stats();
    println!(
        "in-memory stream check: {n} datagrams ({:.1} s of fake time, {} JUDP sequence wraps) -> {positions} JointPositions updates; duplicates +{}, unexpected +{}, malformed +{}",
        n as f64 * STEP_S,
        n / 65_536,
        after.duplicates - before.duplicates,
        after.unexpected - before.unexpected,
        after.malformed - before.malformed,
    );
    assert_eq!(positions, n, "every datagram of the stream must be applied");
}

/// How many valid datagrams the client discards after a burst of lost ones: the Event
/// sequence number is a u8 and an event more than 128 ahead of the last one applied is taken
/// for an old one, so a loss burst of 128..=255 events makes it drop the next 256 - burst.
fn loss_burst_discards_valid_events() {
    let (mut client, mut stream) = live_client();
    let mut out = Output::default();
    let mut line = Vec::new();
    for burst in [100, 127, 128, 129, 200, 255, 256, 300, 400] {
        for _ in 0..burst {
            stream.next();
        }
        let before = client.stats().duplicates;
        let mut applied = 0;
        for _ in 0..300 {
            let (now, from, dg) = stream.next();
            client.handle_datagram(now, from, dg, &mut out);
            applied += out
                .updates
                .iter()
                .filter(|u| {
                    matches!(
                        u,
                        Update::Arm {
                            fact: ArmFact::JointPositions { .. },
                            ..
                        }
                    )
                })
                .count();
            out.clear();
        }
        line.push(format!(
            "{burst} lost -> {} discarded (duplicates +{})",
            300 - applied,
            client.stats().duplicates - before
        ));
    }
    println!(
        "in-memory loss-burst check (300 valid datagrams after each burst): {}",
        line.join(", ")
    );
}

fn drain(rx: &Receiver<Update>) -> usize {
    let mut n = 0;
    while let Ok(u) = rx.try_recv() {
        black_box(u);
        n += 1;
    }
    n
}

fn in_memory(c: &mut Criterion) {
    stream_is_applied_in_full();
    loss_burst_discards_valid_events();
    let mut g = c.benchmark_group("client_in_memory");
    g.throughput(Throughput::Elements(1));

    // The target: decode + state machine + publication + the consumer's drain, per datagram.
    {
        let (mut client, mut stream) = live_client();
        let (tx, rx) = bounded::<Update>(4096);
        let mut publisher = Publisher::new(tx, 4096);
        let mut out = Output::default();
        g.bench_function("handle_publish_drain", |b| {
            b.iter(|| {
                let (now, from, dg) = stream.next();
                client.handle_datagram(now, from, dg, &mut out);
                out.datagrams.clear();
                for u in out.updates.drain(..) {
                    publisher.publish(u);
                }
                drain(&rx)
            });
        });
        assert_eq!(publisher.coalesced + publisher.dropped, 0);
    }

    // Issue 19: the same per-datagram cost with 1 and with 8 arms followed, the datagrams of
    // the 8 arms interleaved (round robin), side by side.
    for n in [1usize, 8] {
        let (mut client, streams) = live_vehicle(n);
        let mut vehicle = Vehicle::new(streams);
        let (tx, rx) = bounded::<Update>(4096);
        let mut publisher = Publisher::new(tx, 4096);
        let mut out = Output::default();
        let mut applied = 0usize;
        g.bench_function(format!("vehicle_{n}_arms_handle_publish_drain"), |b| {
            b.iter(|| {
                let (now, from, dg) = vehicle.next();
                client.handle_datagram(now, from, dg, &mut out);
                out.datagrams.clear();
                for u in out.updates.drain(..) {
                    applied += usize::from(matches!(
                        u,
                        Update::Arm {
                            fact: ArmFact::JointPositions { .. },
                            ..
                        }
                    ));
                    publisher.publish(u);
                }
                drain(&rx)
            });
        });
        assert_eq!(publisher.coalesced + publisher.dropped, 0);
        assert!(applied > 0, "the {n}-arm stream was applied");
    }

    // As the network thread does it: up to 256 datagrams, then publish and flush, then the
    // consumer drains (channel of 4096: never full).
    {
        let (mut client, mut stream) = live_client();
        let (tx, rx) = bounded::<Update>(4096);
        let mut publisher = Publisher::new(tx, 4096);
        let mut out = Output::default();
        g.throughput(Throughput::Elements(256));
        g.bench_function("batch_256_handle_publish_drain", |b| {
            b.iter(|| {
                for _ in 0..256 {
                    let (now, from, dg) = stream.next();
                    client.handle_datagram(now, from, dg, &mut out);
                }
                out.datagrams.clear();
                for u in out.updates.drain(..) {
                    publisher.publish(u);
                }
                publisher.flush();
                drain(&rx)
            });
        });
        assert_eq!(publisher.coalesced + publisher.dropped, 0);
        g.throughput(Throughput::Elements(1));
    }

    // Parts, to see where the time goes.
    {
        let (mut client, mut stream) = live_client();
        let mut out = Output::default();
        g.bench_function("part_handle_datagram_only", |b| {
            b.iter(|| {
                let (now, from, dg) = stream.next();
                client.handle_datagram(now, from, dg, &mut out);
                let n = out.updates.len();
                out.clear();
                n
            });
        });
    }
    {
        let (_, mut stream) = live_client();
        let ctx = DecodeContext {
            joint_kinds: jaus_ocu::net::reports::decode_context(&ArmFile::demo().spec).joint_kinds,
        };
        g.bench_function("part_codec_only", |b| {
            b.iter(|| {
                let (_, _, dg) = stream.next();
                let dg = Datagram::new_checked(dg).unwrap();
                let block = dg.blocks().next().unwrap().unwrap();
                let h = Header::parse(&block.block);
                let Ok(Message::Event(e)) = Message::parse_with(block.block.payload(), &ctx) else {
                    unreachable!()
                };
                (h, e.report_message.decode(&ctx).unwrap())
            });
        });
        g.bench_function("part_stream_stamp_only", |b| {
            b.iter(|| stream.next().2.len());
        });
    }
    {
        // The endpoint's intake of one datagram of the stream (version, block walk, filters,
        // peer table, duplicate check), without decoding: what the client, the sim and the
        // observer all pay per datagram before their own work.
        let (client, mut stream) = live_client();
        let mut endpoint: Endpoint = Endpoint::addressed(client.id(), Numbering::OneCounter, 256);
        g.bench_function("part_endpoint_intake", |b| {
            b.iter(|| {
                let (now, from, dg) = stream.next();
                let mut intake = endpoint.receive(now, from, dg).unwrap();
                let mut messages = 0;
                while let Some(Ok(inbound)) = intake.next(&mut endpoint) {
                    messages += usize::from(matches!(inbound.kind, InboundKind::Message(_)));
                }
                messages
            });
        });
        assert_eq!(endpoint.stats().duplicates, 0);
    }
    {
        // The client's per-datagram bookkeeping, priced alone: the endpoint's duplicate check
        // (the real one), then copies of private client code.
        let mut window = SeqWindow::new();
        let (mut seq, mut now) = (0u16, 0.0);
        g.bench_function("part_duplicate_check_as_in_client", |b| {
            b.iter(|| {
                seq = seq.wrapping_add(1);
                now += STEP_S;
                window.duplicate(black_box(seq), now)
            });
        });
        let ctx = DecodeContext {
            joint_kinds: jaus_ocu::net::reports::decode_context(&ArmFile::demo().spec).joint_kinds,
        };
        g.bench_function("part_decode_context_clone", |b| {
            b.iter(|| black_box(&ctx).clone());
        });
        let mut last_sample: HashMap<Signal, f64> = HashMap::new();
        g.bench_function("part_siphash_map_insert", |b| {
            b.iter(|| {
                now += STEP_S;
                last_sample.insert(black_box(Signal::JointPositions), now)
            });
        });
    }
    {
        let (tx, rx) = bounded::<Update>(4096);
        let mut publisher = Publisher::new(tx, 4096);
        let u = Update::arm(
            ComponentId::new(126, 1, 10),
            ArmFact::JointPositions {
                t: 1.0,
                values: vec![0.1; 7],
            },
        );
        g.bench_function("part_clone_publish_drain", |b| {
            b.iter(|| {
                publisher.publish(u.clone());
                drain(&rx)
            });
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// Loopback.

/// Phases of the proxy; it starts in 0, setup (forwarding only).
const BLAST: u8 = 1;
const QUIT: u8 = 2;

/// Flags between the consumer (main thread) and the proxy.
#[derive(Default)]
struct Shared {
    /// 0 (setup), [`BLAST`] or [`QUIT`].
    phase: AtomicU8,
    /// The proxy has seen a joint-position Event to use as template.
    template_ready: AtomicBool,
    /// The blast is over and the proxy has stopped forwarding to the OCU.
    done: AtomicBool,
}

/// What the proxy did.
#[derive(Debug, Default)]
struct ProxyReport {
    /// Send instant of each blaster index.
    send_times: Vec<Instant>,
    /// Datagrams sent to the OCU: forwarded from the sim and blasted.
    to_ocu: u64,
    /// Sim datagrams forwarded to the OCU during the blast (renumbered).
    forwarded_during_blast: u64,
    /// The sim's own joint-position Events dropped during the blast.
    sim_positions_dropped: u64,
    /// Sim datagrams not forwarded after the blast (so the OCU's count can be compared).
    held_back: u64,
    /// Datagrams from the OCU to the sim.
    to_sim: u64,
    /// Largest delay of a send behind its schedule.
    max_late: Duration,
    /// Sends more than 100 us behind schedule.
    late_100us: u64,
    /// The joint-position event ID.
    event_id: u8,
    /// Send errors.
    send_errors: u64,
    /// When the last blaster datagram left.
    ended: Option<Instant>,
}

struct ProxyCfg {
    front: UdpSocket,
    back: UdpSocket,
    sim: SocketAddr,
    count: usize,
    rate: f64,
    sleep_pacing: bool,
    /// Run the proxy (the arm's side of the link) at real-time priority.
    realtime: bool,
}

/// Forwards OCU <-> sim; on [`BLAST`], blasts `count` joint-position Events at `rate`.
fn proxy(cfg: ProxyCfg, shared: &Shared) -> ProxyReport {
    let ProxyCfg {
        front,
        back,
        sim,
        count,
        rate,
        sleep_pacing,
        realtime,
    } = cfg;
    if realtime {
        let got = jaus_ocu::net::priority::raise_current();
        println!("  blaster scheduling: {}", got.label());
    }
    front.set_nonblocking(true).unwrap();
    back.set_nonblocking(true).unwrap();
    let mut r = ProxyReport {
        send_times: Vec::with_capacity(count),
        ..ProxyReport::default()
    };
    let mut buf = vec![0u8; 65_536];
    let mut ocu: Option<SocketAddr> = None;
    let mut last_judp = 0u16;
    let mut template: Option<(Vec<u8>, u8, u8)> = None;
    // Blast state.
    let mut blasting: Option<(Vec<u8>, Instant)> = None;
    let mut judp_seq = 0u16;
    let mut event_seq = 0u8;
    let mut ended: Option<Instant> = None;
    let period_ns = 1e9 / rate;
    let ns = |i: usize| Duration::from_nanos((i as f64 * period_ns) as u64);
    loop {
        let phase = shared.phase.load(Ordering::Relaxed);
        if phase == QUIT {
            break;
        }
        let mut idle = true;
        while let Ok((n, from)) = front.recv_from(&mut buf) {
            idle = false;
            ocu = Some(from);
            r.to_sim += 1;
            let _ = back.send_to(&buf[..n], sim);
        }
        while let Ok((n, _)) = back.recv_from(&mut buf) {
            idle = false;
            let dg = &mut buf[..n];
            let parsed = event_of(dg);
            if blasting.is_some() {
                if ended.is_some_and(|e| e.elapsed() > Duration::from_millis(200)) {
                    r.held_back += 1;
                    continue;
                }
                if let Some((_, Some(e))) = &parsed
                    && is_positions(e)
                {
                    r.sim_positions_dropped += 1;
                    continue;
                }
                if parsed.is_some() {
                    judp_seq = judp_seq.wrapping_add(1);
                    let n = dg.len();
                    dg[n - 2..].copy_from_slice(&judp_seq.to_le_bytes());
                }
                r.forwarded_during_blast += 1;
            } else if let Some((seq, e)) = parsed {
                last_judp = seq;
                if let Some(e) = e.filter(is_positions) {
                    template = Some((dg.to_vec(), e.event_id, e.sequence_number));
                    shared.template_ready.store(true, Ordering::Relaxed);
                }
            }
            if let Some(to) = ocu {
                match front.send_to(dg, to) {
                    Ok(_) => r.to_ocu += 1,
                    Err(_) => r.send_errors += 1,
                }
            }
        }
        if phase == BLAST && blasting.is_none() {
            let (dg, event_id, seq) = template.clone().expect("a template before the blast");
            check_offsets(&dg);
            r.event_id = event_id;
            judp_seq = last_judp;
            event_seq = seq;
            blasting = Some((dg, Instant::now() + Duration::from_millis(1)));
        }
        let Some((dg, t0)) = &mut blasting else {
            if idle {
                std::thread::sleep(Duration::from_micros(100));
            }
            continue;
        };
        let to = ocu.expect("the OCU has spoken");
        let mut now = Instant::now();
        let mut sent_now = 0;
        while r.send_times.len() < count && *t0 + ns(r.send_times.len()) <= now {
            let i = r.send_times.len();
            judp_seq = judp_seq.wrapping_add(1);
            event_seq = event_seq.wrapping_add(1);
            stamp(dg, judp_seq, event_seq, Some(i as u32));
            let late = now - (*t0 + ns(i));
            r.max_late = r.max_late.max(late);
            if late > Duration::from_micros(100) {
                r.late_100us += 1;
            }
            r.send_times.push(now);
            match front.send_to(dg, to) {
                Ok(_) => r.to_ocu += 1,
                Err(_) => r.send_errors += 1,
            }
            now = Instant::now();
            sent_now += 1;
            // Keep forwarding the sim's datagrams during a catch-up burst.
            if sent_now % 64 == 0 {
                break;
            }
        }
        if r.send_times.len() == count && ended.is_none() {
            ended = Some(now);
        }
        if ended.is_some_and(|e| e.elapsed() > Duration::from_millis(200)) {
            shared.done.store(true, Ordering::Relaxed);
        }
        if ended.is_some() {
            std::thread::sleep(Duration::from_micros(200));
        } else if sleep_pacing {
            let next = *t0 + ns(r.send_times.len());
            let now = Instant::now();
            if next > now {
                std::thread::sleep((next - now).max(Duration::from_micros(950)));
            }
        } else {
            std::thread::yield_now();
        }
    }
    r.ended = ended;
    r
}

/// Scheduler counters of one thread (or several with one name).
#[derive(Debug, Clone, Copy, Default)]
struct ThreadStat {
    /// Time on a CPU, s.
    cpu: f64,
    /// Time runnable but waiting for a CPU, s.
    wait: f64,
    /// Voluntary context switches (blocking, e.g. waiting on a channel or socket).
    voluntary: u64,
    /// Involuntary context switches (preempted).
    involuntary: u64,
}

impl std::ops::Sub for ThreadStat {
    type Output = ThreadStat;
    fn sub(self, o: ThreadStat) -> ThreadStat {
        ThreadStat {
            cpu: self.cpu - o.cpu,
            wait: self.wait - o.wait,
            voluntary: self.voluntary - o.voluntary,
            involuntary: self.involuntary - o.involuntary,
        }
    }
}

/// Scheduler counters of this process's threads by name; the main thread (the consumer) is
/// "consumer".
fn thread_stats() -> HashMap<String, ThreadStat> {
    let mut all: HashMap<String, ThreadStat> = HashMap::new();
    let pid = std::process::id().to_string();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return all;
    };
    for t in tasks.flatten() {
        let path = t.path();
        let name = if t.file_name().to_string_lossy() == pid {
            "consumer".to_string()
        } else {
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            comm.trim().to_string()
        };
        let sched = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
        let mut f = sched
            .split_whitespace()
            .map(|x| x.parse::<f64>().unwrap_or(0.0));
        let (cpu, wait) = (f.next().unwrap_or(0.0) / 1e9, f.next().unwrap_or(0.0) / 1e9);
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        let e = all.entry(name).or_default();
        e.cpu += cpu;
        e.wait += wait;
        e.voluntary += field("voluntary_ctxt_switches:");
        e.involuntary += field("nonvoluntary_ctxt_switches:");
    }
    all
}

/// The kernel's drop counter of the UDP socket bound to `port` (/proc/net/udp), if found.
fn kernel_drops(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    let want = format!(":{port:04X}");
    table.lines().skip(1).find_map(|l| {
        let cols: Vec<&str> = l.split_whitespace().collect();
        (cols.get(1)?.ends_with(&want)).then(|| cols.last()?.parse().ok())?
    })
}

/// (busy, total) clock ticks of all CPUs (/proc/stat), and this process's (/proc/self/stat).
fn cpu_ticks() -> (u64, u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = cpu.iter().take(8).sum();
    let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
    let me = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest: Vec<u64> = me
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let own = rest.get(11).copied().unwrap_or(0) + rest.get(12).copied().unwrap_or(0);
    (total - idle, total, own)
}

/// How many datagrams like `dg` a UDP socket holds unread: with the system's default receive
/// buffer (`wanted` 0), or sized as the OCU sizes its own.
fn socket_buffer_capacity(dg: &[u8], wanted: usize) -> usize {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    if wanted > 0 {
        jaus_ocu::net::socket::size_receive_buffer(&rx, wanted).unwrap();
    }
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap();
    for _ in 0..100_000 {
        let _ = tx.send_to(dg, to);
    }
    rx.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 2048];
    let mut n = 0;
    while rx.recv_from(&mut buf).is_ok() {
        n += 1;
    }
    n
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One loopback run's setup: how the OCU hands datagrams over, and the load beside it.
struct Variant {
    name: &'static str,
    /// `NetConfig::receive_batch`: 1 is one datagram per hand-over (before batches).
    batch: usize,
    /// Busy-loop threads occupying the cores during the run.
    load_threads: usize,
    /// `NetConfig::raise_priority`: the OCU's network threads at real-time priority.
    raise: bool,
    /// The consumer, the measuring instrument, takes the same priority for the run, so that
    /// the latency is the OCU's receive -> published plus a prompt reader's wake-up, not the
    /// reader's own run-queue wait (the UI thread reads once per frame in any case, every
    /// 33 ms at most). One loaded variant leaves it normal to show what that wait adds.
    raise_consumer: bool,
    /// `ClientConfig::clearance_every`: the clearance marks measured (10 ms, the default) or
    /// never (before issue 45).
    clearance: bool,
}

/// Raises the calling thread as the OCU raises its network threads; back to normal on drop.
struct ConsumerPriority(bool);

impl ConsumerPriority {
    fn raise(raise: bool) -> Self {
        let got = raise.then(jaus_ocu::net::priority::raise_current);
        println!(
            "  consumer scheduling: {}",
            got.map_or_else(
                || "normal".to_string(),
                jaus_ocu::model::update::Scheduling::label
            )
        );
        ConsumerPriority(raise)
    }
}

impl Drop for ConsumerPriority {
    fn drop(&mut self) {
        if self.0 {
            jaus_ocu::net::priority::reset_current();
        }
    }
}

/// What a loopback run found, for the side-by-side table.
struct Summary {
    name: &'static str,
    sent: u64,
    rate: f64,
    discarded: u64,
    kernel: Option<u64>,
    lost_before_ocu: i64,
    p50: f64,
    p99: f64,
    max: f64,
    rx_us: f64,
    net_us: f64,
    rx_switches: f64,
    net_switches: f64,
    buffer: String,
}

/// Spins `n` named threads until `stop`: the "laptop is busy" load (issue 14).
fn busy_loops(n: usize, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..n)
        .map(|i| {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(format!("bench-busy-{i}"))
                .spawn(move || {
                    // Spawned from the consumer, which may run raised: the load is ordinary
                    // programs at normal priority.
                    jaus_ocu::net::priority::reset_current();
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1000 {
                            x = black_box(
                                x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                            );
                        }
                    }
                })
                .unwrap()
        })
        .collect()
}

fn loopback(variant: &Variant) -> Summary {
    println!(
        "\n== loopback variant `{}`: receive batch {}, {} busy-loop threads, raised network threads {}, raised consumer {} ==",
        variant.name, variant.batch, variant.load_threads, variant.raise, variant.raise_consumer
    );
    let secs = env_f64("NET_LOAD_SECONDS", 10.0);
    let rate = env_f64("NET_LOAD_RATE", 50_000.0);
    // Loaded, the blaster stands in for the arm, another machine whose sending the OCU's busy
    // cores must not slow: it runs at real-time priority and paces by sleeping to 1 ms slots
    // (busy-waiting at real-time priority would take a whole core from the load).
    let blaster_realtime = variant.load_threads > 0;
    let sleep_pacing =
        blaster_realtime || std::env::var("NET_LOAD_PACING").is_ok_and(|p| p == "sleep");
    let count = (secs * rate) as usize;
    let scale = joint1_scale();

    let template = live_client().1.dg;
    let capacity = socket_buffer_capacity(&template, 0);
    let ocu_capacity =
        socket_buffer_capacity(&template, jaus_ocu::net::socket::RECEIVE_BUFFER_WANTED);
    let sim = host::spawn(
        Component::new(ArmFile::demo(), SimConfig::default()),
        host::bind("127.0.0.1:0".parse().unwrap()).unwrap(),
        Faults::default(),
        1,
    )
    .unwrap();
    let front = UdpSocket::bind("127.0.0.1:0").unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sim_view = front.local_addr().unwrap();
    let handle = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim_view],
            multicast: None,
            clearance_every: if variant.clearance {
                ClientConfig::default().clearance_every
            } else {
                f64::INFINITY
            },
            ..ClientConfig::default()
        },
        receive_batch: variant.batch,
        raise_priority: variant.raise,
        ..NetConfig::default()
    })
    .unwrap();
    let start = handle.start();
    let ocu_port = handle.local_addr().port();
    let shared = Arc::new(Shared::default());
    let proxy_thread = {
        let shared = shared.clone();
        let cfg = ProxyCfg {
            front,
            back,
            sim: sim.local_addr(),
            count,
            rate,
            sleep_pacing,
            realtime: blaster_realtime,
        };
        std::thread::Builder::new()
            .name("bench-proxy".into())
            .spawn(move || proxy(cfg, &shared))
            .unwrap()
    };

    // Setup: wait until Live with the joint-position event active.
    let updates = handle.updates();
    let setup_deadline = Instant::now() + Duration::from_secs(15);
    let (mut live, mut subscribed) = (false, false);
    let mut stats = NetStats::default();
    while !(live && subscribed && shared.template_ready.load(Ordering::Relaxed)) {
        assert!(
            Instant::now() < setup_deadline,
            "the OCU did not go Live with an active joint-position event in 15 s"
        );
        // One arm: its facts, and the network's counters.
        match updates.recv_timeout(Duration::from_millis(50)) {
            Ok(Update::Arm {
                fact: ArmFact::Link { state, .. },
                ..
            }) => live = state == LinkState::Live,
            Ok(Update::Arm {
                fact:
                    ArmFact::Delivery {
                        signal: Signal::JointPositions,
                        delivery: Delivery::Event(_),
                        ..
                    },
                ..
            }) => subscribed = true,
            Ok(Update::Net(NetFact::Stats { stats: s, .. })) => stats = *s,
            _ => {}
        }
    }
    let setup_s = start.elapsed().as_secs_f64();
    let before = stats;
    let drops_before = kernel_drops(ocu_port);
    let cpu_names = [
        "bench-busy-0",
        "bench-busy-1",
        "jaus-net-rx",
        "jaus-net",
        "consumer",
        "bench-proxy",
        "jaus-sim",
        "jaus-sim-rx",
    ];
    let consumer_priority = ConsumerPriority::raise(variant.raise_consumer);
    let load_stop = Arc::new(AtomicBool::new(false));
    let load = busy_loops(variant.load_threads, &load_stop);
    let threads0 = thread_stats();
    let ticks0 = cpu_ticks();
    let wall0 = Instant::now();
    shared.phase.store(BLAST, Ordering::Relaxed);

    // Consume.
    let mut records: Vec<(u32, f64, Instant)> = Vec::with_capacity(count);
    let mut other_positions = 0u64;
    let mut events: Vec<(f64, String)> = Vec::new();
    let mut done_at: Option<f64> = None;
    let final_stats = loop {
        let Ok(u) = updates.recv_timeout(Duration::from_millis(50)) else {
            if done_at.is_none() && shared.done.load(Ordering::Relaxed) {
                done_at = Some(start.elapsed().as_secs_f64());
            }
            continue;
        };
        let now = Instant::now();
        match &u {
            Update::Arm {
                fact: ArmFact::JointPositions { t, values },
                ..
            } => {
                match scale
                    .encode(values[0])
                    .ok()
                    .filter(|&i| (i as usize) < count)
                {
                    Some(i) => records.push((i, (now - start).as_secs_f64() - *t, now)),
                    None => other_positions += 1,
                }
            }
            // The first counters taken 0.2 s after the proxy stopped sending are final.
            Update::Net(NetFact::Stats { t, stats: s })
                if done_at.is_some_and(|d| *t > d + 0.2) =>
            {
                break **s;
            }
            Update::Arm {
                fact: ArmFact::Link { t, state },
                ..
            } => events.push((*t, format!("link {state:?}"))),
            Update::Arm {
                fact: ArmFact::Stale { t, signal, stale },
                ..
            } => {
                events.push((*t, format!("{signal:?} stale={stale}")));
            }
            u => {
                if let Some(Remark::Error { t, message }) = u.remark() {
                    events.push((*t, format!("error {message}")));
                }
            }
        }
        if done_at.is_none() && shared.done.load(Ordering::Relaxed) {
            done_at = Some(start.elapsed().as_secs_f64());
        }
    };
    let wall = wall0.elapsed().as_secs_f64();
    let ticks1 = cpu_ticks();
    let threads1 = thread_stats();
    let thread = |n: &str| {
        threads1.get(n).copied().unwrap_or_default() - threads0.get(n).copied().unwrap_or_default()
    };
    let drops_after = kernel_drops(ocu_port);
    load_stop.store(true, Ordering::Relaxed);
    for t in load {
        t.join().unwrap();
    }
    drop(consumer_priority);
    shared.phase.store(QUIT, Ordering::Relaxed);
    let report = proxy_thread.join().unwrap();
    handle.shutdown(Duration::from_millis(200));
    drop(sim);

    // Accounting.
    let sent = report.send_times.len() as u64;
    let blast_s = match (report.send_times.first(), report.send_times.last()) {
        (Some(a), Some(b)) => (*b - *a).as_secs_f64(),
        _ => 0.0,
    };
    let mut seen = vec![false; count];
    let mut distinct = 0u64;
    let mut recv_lat = Vec::with_capacity(records.len());
    let mut send_lat = Vec::with_capacity(records.len());
    for &(i, rl, at) in &records {
        let i = i as usize;
        if !seen[i] {
            seen[i] = true;
            distinct += 1;
        }
        recv_lat.push(rl * 1e3);
        send_lat.push((at - report.send_times[i]).as_secs_f64() * 1e3);
    }
    // Runs of blaster indices that never reached the consumer. With the u8 Event sequence
    // check, a loss burst of 128..=255 before the client becomes a run of exactly 256.
    let mut runs: Vec<usize> = Vec::new();
    let mut run = 0;
    for &s in &seen[..sent as usize] {
        if s {
            if run > 0 {
                runs.push(run);
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    if run > 0 {
        runs.push(run);
    }
    let runs_256 = runs.iter().filter(|&&r| r % 256 == 0).count();
    recv_lat.sort_by(f64::total_cmp);
    send_lat.sort_by(f64::total_cmp);
    let d = |f: fn(&NetStats) -> u64| f(&final_stats) - f(&before);
    let kernel_n = drops_before.zip(drops_after).map(|(a, b)| b - a);
    let kernel = match kernel_n {
        Some(n) => format!("{n}"),
        None => "unknown (socket not found in /proc/net/udp)".into(),
    };
    let lost_before_ocu = report.to_ocu as i64 - final_stats.datagrams as i64;
    // Discarded inside the OCU process (its own counters); the rest of the missing blaster
    // datagrams were lost in the socket buffer (whose drops also include sim datagrams).
    let discarded = d(|s| s.queue_dropped)
        + d(|s| s.duplicates)
        + d(|s| s.unexpected)
        + d(|s| s.malformed)
        + d(|s| s.updates_dropped);
    let coalesced = d(|s| s.updates_coalesced);
    let missing = sent - distinct;

    println!(
        "OCU over loopback UDP: blaster at {rate:.0} datagrams/s for {secs} s ({} pacing), setup (discovery -> Live) took {:.0} ms",
        if sleep_pacing {
            "1 ms-slot sleep"
        } else {
            "busy-wait"
        },
        setup_s * 1e3
    );
    println!(
        "  blaster: sent {sent} JointPositions Events (event ID {}) in {blast_s:.3} s = {:.0}/s; {} send errors; max {:.2} ms behind schedule, {} sends > 100 us late",
        report.event_id,
        sent as f64 / blast_s.max(1e-9),
        report.send_errors,
        report.max_late.as_secs_f64() * 1e3,
        report.late_100us,
    );
    println!(
        "  proxy: {} sim datagrams forwarded during the blast (renumbered), {} sim JointPositions Events withheld, {} held back after the blast; {} datagrams sent to the OCU in all",
        report.forwarded_during_blast,
        report.sim_positions_dropped,
        report.held_back,
        report.to_ocu
    );
    println!(
        "  kernel: {kernel} datagrams dropped at the OCU's socket (/proc/net/udp; NetStats.kernel_dropped {:?} -> {:?}); to the OCU {} - seen by the client {} = {lost_before_ocu} lost before the client",
        before.kernel_dropped, final_stats.kernel_dropped, report.to_ocu, final_stats.datagrams
    );
    println!(
        "  OCU counters during the run: datagrams +{}, queue_dropped +{}, duplicates +{}, unexpected +{}, malformed +{}, foreign_reports +{}, updates_coalesced +{}, updates_dropped +{}",
        d(|s| s.datagrams),
        d(|s| s.queue_dropped),
        d(|s| s.duplicates),
        d(|s| s.unexpected),
        d(|s| s.malformed),
        d(|s| s.foreign_reports),
        d(|s| s.updates_coalesced),
        d(|s| s.updates_dropped),
    );
    println!(
        "  consumer: {} JointPositions updates from the blaster ({distinct} distinct indices of {sent}), {other_positions} other JointPositions updates",
        records.len()
    );
    println!(
        "  blaster datagrams: {distinct} of {sent} reached the consumer; {missing} missing = {discarded} discarded inside the OCU (queue_dropped + duplicates + unexpected + malformed + updates_dropped) + {coalesced} coalesced by the publisher (consumer behind, newest kept; counts every signal) + {} lost in the socket buffer",
        missing as i64 - discarded as i64 - coalesced as i64,
    );
    println!(
        "  missing blaster indices: {} in {} runs, longest {}; {runs_256} runs of a multiple of 256 (the signature of the Event-sequence check: a burst of 128..=255 lost, then the rest of 256 discarded; blaster JUDP sequences never repeat within 65,536, so `duplicates` above are such discards)",
        runs.iter().sum::<usize>(),
        runs.len(),
        runs.iter().max().copied().unwrap_or(0),
    );
    println!(
        "  receive->update latency (OCU clock): p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms",
        percentile(&recv_lat, 0.5),
        percentile(&recv_lat, 0.99),
        percentile(&recv_lat, 0.999),
        recv_lat.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "  send->update latency:               p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms",
        percentile(&send_lat, 0.5),
        percentile(&send_lat, 0.99),
        percentile(&send_lat, 0.999),
        send_lat.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "  threads over {wall:.2} s wall ({} cores); CPU and run-queue wait as % of one core, context switches per blaster datagram:",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
    );
    for n in cpu_names {
        let t = thread(n);
        println!(
            "    {n:<12} CPU {:>3.0} % ({:>4.1} us/datagram), waiting for a CPU {:>3.0} %, switches/datagram: {:.2} voluntary, {:.2} preempted",
            100.0 * t.cpu / wall,
            t.cpu / sent.max(1) as f64 * 1e6,
            100.0 * t.wait / wall,
            t.voluntary as f64 / sent.max(1) as f64,
            t.involuntary as f64 / sent.max(1) as f64,
        );
    }
    let (busy, total, own) = (
        ticks1.0 - ticks0.0,
        (ticks1.1 - ticks0.1).max(1),
        ticks1.2 - ticks0.2,
    );
    println!(
        "  machine during the run: all CPUs {:.0} % busy, this process {:.0} %, other processes {:.0} % (shares of all cores; loadavg after: {})",
        100.0 * busy as f64 / total as f64,
        100.0 * own as f64 / total as f64,
        100.0 * busy.saturating_sub(own) as f64 / total as f64,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "  a default socket (net.core.rmem_default = {} B) holds {capacity} such datagrams unread = {:.1} ms at {rate:.0}/s; the OCU's (SO_RCVBUF as granted, net.core.rmem_max = {} B) holds {ocu_capacity} = {:.1} ms",
        std::fs::read_to_string("/proc/sys/net/core/rmem_default")
            .unwrap_or_default()
            .trim(),
        capacity as f64 / rate * 1e3,
        std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .unwrap_or_default()
            .trim(),
        ocu_capacity as f64 / rate * 1e3
    );
    let end_t = report
        .ended
        .map_or(f64::INFINITY, |e| (e - start).as_secs_f64());
    let (during, after): (Vec<_>, Vec<_>) = events.iter().partition(|(t, _)| *t <= end_t);
    let list = |v: Vec<&(f64, String)>| {
        let v: Vec<String> = v.iter().map(|(t, e)| format!("t={t:.3} {e}")).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join("; ")
        }
    };
    println!(
        "  link/stale/error updates during the blast: {}",
        list(during)
    );
    println!(
        "  ... after it (the proxy stops forwarding the sim, so signals go stale): {}",
        list(after)
    );
    let zero_loss = discarded == 0;
    let p99_ok = percentile(&recv_lat, 0.99) <= 1.0;
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "  target: zero loss inside the OCU {} (and {} lost in the OCU's socket buffer); p99 receive->update <= 1 ms {}",
        met(zero_loss),
        lost_before_ocu,
        met(p99_ok)
    );
    let rx = thread("jaus-net-rx");
    let net = thread("jaus-net");
    Summary {
        name: variant.name,
        sent,
        rate: sent as f64 / blast_s.max(1e-9),
        discarded,
        kernel: kernel_n,
        lost_before_ocu,
        p50: percentile(&recv_lat, 0.5),
        p99: percentile(&recv_lat, 0.99),
        max: recv_lat.last().copied().unwrap_or(f64::NAN),
        rx_us: rx.cpu / sent.max(1) as f64 * 1e6,
        net_us: net.cpu / sent.max(1) as f64 * 1e6,
        rx_switches: (rx.voluntary + rx.involuntary) as f64 / sent.max(1) as f64,
        net_switches: (net.voluntary + net.involuntary) as f64 / sent.max(1) as f64,
        buffer: format!("{:.0} ms", ocu_capacity as f64 / rate * 1e3),
    }
}

/// The loopback runs side by side: per-datagram hand-over (before issue 14) and batches,
/// each on a quiet machine and with both cores busy.
fn loopback_variants() {
    let batch = NetConfig::default().receive_batch;
    // Names: "per-datagram" hands each datagram over alone (before issue 14), "batched" is the
    // default; "normal" runs the network threads at normal priority, "raised" at real time
    // (the default where allowed: net::priority); "quiet" or "loaded" (two busy loops).
    let v = |name, batch, load_threads, raise, raise_consumer| Variant {
        name,
        batch,
        load_threads,
        raise,
        raise_consumer,
        clearance: true,
    };
    let variants = [
        v("per-datagram, normal, quiet", 1, 0, false, false),
        Variant {
            clearance: false,
            ..v("batched, raised, quiet, no clearance", batch, 0, true, true)
        },
        v("batched, raised, quiet", batch, 0, true, true),
        v("per-datagram, normal, loaded", 1, 2, false, false),
        v("batched, normal, loaded", batch, 2, false, false),
        v(
            "batched, raised, consumer normal, loaded",
            batch,
            2,
            true,
            false,
        ),
        v("batched, raised, loaded", batch, 2, true, true),
    ];
    let only = std::env::var("NET_LOAD_VARIANTS").unwrap_or_default();
    let summaries: Vec<Summary> = variants
        .iter()
        .filter(|v| only.is_empty() || only.split(',').any(|o| v.name.contains(o.trim())))
        .map(loopback)
        .collect();
    println!(
        "\nloopback side by side (\"loaded\" = 2 busy-loop threads on the 2 cores; CPU of the OCU's two threads per datagram; switches = voluntary + preempted per datagram):"
    );
    println!(
        "  {:<41} {:>8} {:>8} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} {:>8}",
        "variant",
        "sent",
        "rate/s",
        "in OCU",
        "kernel",
        "before",
        "p50 ms",
        "p99 ms",
        "max ms",
        "rx us/dg",
        "net us/dg",
        "rx sw",
        "net sw",
        "buffer"
    );
    for s in &summaries {
        println!(
            "  {:<41} {:>8} {:>8.0} {:>9} {:>7} {:>8} {:>8.3} {:>8.3} {:>8.3} {:>10.2} {:>10.2} {:>8.2} {:>8.2} {:>8}",
            s.name,
            s.sent,
            s.rate,
            s.discarded,
            s.kernel.map_or_else(|| "?".to_string(), |k| k.to_string()),
            s.lost_before_ocu,
            s.p50,
            s.p99,
            s.max,
            s.rx_us,
            s.net_us,
            s.rx_switches,
            s.net_switches,
            s.buffer
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    in_memory(&mut c);
    c.final_summary();
    if env_f64("NET_LOAD_SECONDS", 10.0) > 0.0 {
        loopback_variants();
    }
}
