//! The simulator's host: the thin socket loop around the sans-I/O [`Component`]. One thread
//! blocks on the UDP socket and hands datagrams over a bounded channel
//! ([`crate::net::socket::spawn_receiver`], shared with the OCU); the component thread waits on
//! that channel with a precise deadline (socket read timeouts have jiffy granularity, too coarse
//! for 1 kHz), runs the component and sends through a [`FaultInjector`].

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, bounded};

use super::component::{Component, SimStats};
use crate::net::fault::{FaultInjector, FaultStats, Faults};
use crate::net::socket::{self, Membership, Received, spawn_receiver};

/// Binds `addr` for a simulator and joins the JUDP multicast group unless it is loopback (to
/// receive multicast discovery, bind 0.0.0.0:3794).
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    socket::bind(addr, Membership::Component)
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
    let send_socket = socket;
    let worker = std::thread::Builder::new()
        .name("jaus-sim".into())
        .spawn(move || {
            let start = Instant::now();
            let clock = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
            let mut link = FaultInjector::new(send_socket, faults, seed).with_label("sim");
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
                    link.send(now, o.to, o.bytes);
                }
                link.poll(now);
                if now - last_publish >= 0.01 {
                    last_publish = now;
                    if let Ok(mut s) = loop_stats.lock() {
                        *s = (component.stats(), link.stats());
                    }
                }
            }
            if let Ok(mut s) = loop_stats.lock() {
                *s = (component.stats(), link.stats());
            }
        })?;

    Ok(SimHandle {
        local_addr,
        stop,
        stats,
        threads: vec![receiver, worker],
    })
}
