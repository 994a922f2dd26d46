//! The thin socket loop around the sans-I/O [`Component`]: one thread blocks on the UDP
//! socket and hands datagrams over a bounded channel; the component thread waits on that
//! channel with a precise deadline (socket read timeouts have jiffy granularity, too coarse
//! for 1 kHz), runs the component and sends through the fault injector.

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, bounded};
use tracing::warn;

use crate::jaus::judp;
use crate::sim::component::{Component, Outgoing, SimStats};
use crate::sim::rng::Rng;

/// Faults applied to what the simulator sends (for tests of the OCU's tolerance).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Faults {
    /// Probability a datagram is dropped.
    pub loss: f64,
    /// Probability a datagram is sent twice.
    pub duplicate: f64,
    /// Probability a datagram is held back and sent after the next one.
    pub reorder: f64,
    /// Delay added to every datagram.
    pub delay: Duration,
}

/// Counters of the fault injector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Datagrams dropped on purpose.
    pub dropped: u64,
    /// Extra copies sent.
    pub duplicated: u64,
    /// Datagrams sent out of order.
    pub reordered: u64,
    /// Datagrams the socket refused to send.
    pub send_errors: u64,
}

/// Where sent datagrams go: a socket, or a test's vector.
pub trait Sink {
    /// Sends one datagram.
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()>;
}

impl Sink for UdpSocket {
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        UdpSocket::send_to(self, bytes, to).map(|_| ())
    }
}

impl Sink for Vec<Outgoing> {
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        self.push(Outgoing {
            to,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }
}

/// Applies [`Faults`] between the component and the socket.
#[derive(Debug)]
pub struct FaultyLink {
    faults: Faults,
    rng: Rng,
    delayed: VecDeque<(f64, Outgoing)>,
    held: Option<(f64, Outgoing)>,
    /// Counters.
    pub stats: FaultStats,
}

impl FaultyLink {
    /// A link with `faults`, its randomness from `seed`.
    pub fn new(faults: Faults, seed: u64) -> Self {
        Self {
            faults,
            rng: Rng::new(seed ^ 0x5EED_FA17),
            delayed: VecDeque::new(),
            held: None,
            stats: FaultStats::default(),
        }
    }

    /// Submits one datagram at `now`.
    pub fn submit(&mut self, now: f64, o: Outgoing, sink: &mut impl Sink) {
        if self.rng.chance(self.faults.loss) {
            self.stats.dropped += 1;
            return;
        }
        let copies = if self.rng.chance(self.faults.duplicate) {
            self.stats.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            if self.held.is_none() && self.rng.chance(self.faults.reorder) {
                self.stats.reordered += 1;
                self.held = Some((now, o.clone()));
                continue;
            }
            self.emit(now, o.clone(), sink);
            if let Some((_, h)) = self.held.take() {
                self.emit(now, h, sink);
            }
        }
    }

    fn emit(&mut self, now: f64, o: Outgoing, sink: &mut impl Sink) {
        if self.faults.delay.is_zero() {
            self.write(&o, sink);
        } else {
            self.delayed
                .push_back((now + self.faults.delay.as_secs_f64(), o));
        }
    }

    fn write(&mut self, o: &Outgoing, sink: &mut impl Sink) {
        if let Err(e) = sink.send_to(&o.bytes, o.to) {
            self.stats.send_errors += 1;
            if self.stats.send_errors.is_power_of_two() {
                warn!(
                    "sim: cannot send to {}: {e} ({} send errors so far)",
                    o.to, self.stats.send_errors
                );
            }
        }
    }

    /// Sends what is due at `now`: delayed datagrams, and a reordered one held for more than
    /// 50 ms with nothing after it.
    pub fn release(&mut self, now: f64, sink: &mut impl Sink) {
        if let Some((since, _)) = &self.held
            && now - since > 0.05
            && let Some((_, h)) = self.held.take()
        {
            self.emit(now, h, sink);
        }
        while self.delayed.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, o)) = self.delayed.pop_front() {
                self.write(&o, sink);
            }
        }
    }

    /// When `release` next has something to do.
    pub fn next_release(&self) -> f64 {
        let delayed = self.delayed.front().map_or(f64::INFINITY, |(d, _)| *d);
        let held = self.held.as_ref().map_or(f64::INFINITY, |(t, _)| t + 0.05);
        delayed.min(held)
    }
}

/// A running simulator: its address, live counters, and a stop switch.
#[derive(Debug)]
pub struct SimHandle {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<(SimStats, FaultStats)>>,
    threads: Vec<JoinHandle<()>>,
}

impl SimHandle {
    /// The address the simulator's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The component's and the fault injector's counters (refreshed every tick).
    pub fn stats(&self) -> (SimStats, FaultStats) {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Stops the simulator and waits for its threads.
    pub fn stop(mut self) -> (SimStats, FaultStats) {
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A datagram as the receive thread hands it over: arrival instant, sender, bytes.
pub type Received = (Instant, SocketAddr, Vec<u8>);

/// Starts the named thread that blocks on `socket` and hands every datagram, stamped with its
/// arrival, to `tx`. A full channel means the consumer is overwhelmed: the datagram is
/// dropped and counted in `dropped`, never waited for. Stops within 50 ms of `stop`.
pub fn spawn_receiver(
    name: &str,
    socket: &UdpSocket,
    stop: Arc<AtomicBool>,
    tx: crossbeam_channel::Sender<Received>,
    dropped: Arc<AtomicU64>,
) -> io::Result<JoinHandle<()>> {
    let rx_socket = socket.try_clone()?;
    rx_socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let label = name.to_string();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                match rx_socket.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        if tx
                            .try_send((Instant::now(), from, buf[..n].to_vec()))
                            .is_err()
                        {
                            dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) => {}
                    // ICMP port unreachable from a peer that went away: not our problem.
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                    Err(e) => {
                        warn!("{label}: receive error: {e}");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        })
}

/// Binds `bind` and joins the JUDP multicast group when the address is not loopback (to
/// receive multicast discovery, bind 0.0.0.0:3794).
pub fn bind(bind: SocketAddr) -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind(bind).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot bind UDP {bind}: {e} (is another JAUS component using the port? choose another with --bind)"),
        )
    })?;
    if let IpAddr::V4(ip) = bind.ip()
        && !ip.is_loopback()
    {
        let iface = if ip.is_unspecified() {
            Ipv4Addr::UNSPECIFIED
        } else {
            ip
        };
        if let Err(e) = socket.join_multicast_v4(&judp::MULTICAST_GROUP, &iface) {
            warn!(
                "sim: cannot join multicast group {}: {e}; discovery needs --connect",
                judp::MULTICAST_GROUP
            );
        }
    }
    Ok(socket)
}

/// Runs `component` on `socket` in two named threads until the handle is stopped or dropped.
pub fn spawn(
    mut component: Component,
    socket: UdpSocket,
    faults: Faults,
    seed: u64,
) -> io::Result<SimHandle> {
    let local_addr = socket.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stats = Arc::new(Mutex::new((SimStats::default(), FaultStats::default())));
    let (tx, rx) = bounded::<Received>(4096);

    let receiver = spawn_receiver(
        "jaus-sim-rx",
        &socket,
        stop.clone(),
        tx,
        Arc::new(AtomicU64::new(0)),
    )?;

    let loop_stop = stop.clone();
    let loop_stats = stats.clone();
    let mut send_socket = socket;
    let worker = std::thread::Builder::new()
        .name("jaus-sim".into())
        .spawn(move || {
            let start = Instant::now();
            let clock = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
            let mut link = FaultyLink::new(faults, seed);
            let mut out = Vec::new();
            let mut last_publish = 0.0;
            while !loop_stop.load(Ordering::Relaxed) {
                let now = clock(Instant::now());
                let deadline = component
                    .next_deadline()
                    .min(link.next_release())
                    .min(now + 0.05);
                let wait = Duration::from_secs_f64((deadline - now).max(0.0));
                match rx.recv_timeout(wait) {
                    Ok((at, from, bytes)) => {
                        component.handle_datagram(clock(at), from, &bytes, &mut out);
                        // Take whatever else is queued before ticking.
                        while let Ok((at, from, bytes)) = rx.try_recv() {
                            component.handle_datagram(clock(at), from, &bytes, &mut out);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                let now = clock(Instant::now());
                if now >= component.next_deadline() {
                    component.tick(now, &mut out);
                }
                for o in out.drain(..) {
                    link.submit(now, o, &mut send_socket);
                }
                link.release(now, &mut send_socket);
                if now - last_publish >= 0.01 {
                    last_publish = now;
                    if let Ok(mut s) = loop_stats.lock() {
                        *s = (component.stats().clone(), link.stats);
                    }
                }
            }
            if let Ok(mut s) = loop_stats.lock() {
                *s = (component.stats().clone(), link.stats);
            }
        })?;

    Ok(SimHandle {
        local_addr,
        stop,
        stats,
        threads: vec![receiver, worker],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(i: u8) -> Outgoing {
        Outgoing {
            to: "127.0.0.1:9".parse().unwrap(),
            bytes: vec![i],
        }
    }

    #[test]
    fn no_faults_passes_everything_in_order() {
        let mut link = FaultyLink::new(Faults::default(), 1);
        let mut sink = Vec::new();
        for i in 0..100 {
            link.submit(0.0, o(i), &mut sink);
        }
        let got: Vec<u8> = sink.iter().map(|x| x.bytes[0]).collect();
        assert_eq!(got, (0..100).collect::<Vec<u8>>());
    }

    #[test]
    fn loss_duplicate_and_reorder_happen_at_about_their_rates() {
        let faults = Faults {
            loss: 0.3,
            duplicate: 0.1,
            reorder: 0.1,
            delay: Duration::ZERO,
        };
        let mut link = FaultyLink::new(faults, 42);
        let mut sink = Vec::new();
        let n = 20_000u32;
        for i in 0..n {
            link.submit(0.0, o((i % 256) as u8), &mut sink);
        }
        link.release(1.0, &mut sink);
        let s = link.stats;
        let frac = |x: u64| x as f64 / f64::from(n);
        assert!((frac(s.dropped) - 0.3).abs() < 0.02, "{s:?}");
        assert!((frac(s.duplicated) - 0.07).abs() < 0.02, "{s:?}");
        assert!(s.reordered > 0);
        assert_eq!(sink.len() as u64, u64::from(n) - s.dropped + s.duplicated);
        // Some neighbours really are swapped.
        assert!(
            sink.windows(2)
                .any(|w| w[1].bytes[0] == w[0].bytes[0].wrapping_sub(1))
        );
    }

    #[test]
    fn delay_holds_datagrams_until_due() {
        let faults = Faults {
            delay: Duration::from_millis(20),
            ..Faults::default()
        };
        let mut link = FaultyLink::new(faults, 1);
        let mut sink = Vec::new();
        link.submit(1.0, o(1), &mut sink);
        assert!(sink.is_empty());
        assert!((link.next_release() - 1.02).abs() < 1e-12);
        link.release(1.019, &mut sink);
        assert!(sink.is_empty());
        link.release(1.021, &mut sink);
        assert_eq!(sink.len(), 1);
    }
}
