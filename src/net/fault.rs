//! Fault injection around any sender (smoltcp's `phy::FaultInjector` wraps a device the same
//! way): loss, duplication, reordering and delay between a protocol machine and its [`Sink`].
//! The simulator's host puts it on the simulator's send side (`jaus-ocu sim --loss …`), the
//! OCU's network thread on its own when [`crate::net::thread::NetConfig::faults`] says so,
//! and the in-memory harness (`sim::harness`) on each direction.
//!
//! Time-driven: what is delayed or held back is released by [`FaultInjector::poll`] at the
//! caller's clock; [`FaultInjector::next_release`] says when that is next needed. Randomness is
//! seeded, so every fault pattern is repeatable.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use tracing::warn;

use crate::net::rng::Rng;
use crate::net::socket::{Outgoing, Sink};

/// How long a datagram held back for reordering waits for a successor before it goes alone, s.
const HOLD_S: f64 = 0.05;
/// Most destinations whose first send error is said in the log (each once; every error is
/// counted in [`FaultStats::send_errors`]).
const SAID_DESTINATIONS: usize = 16;

/// Faults applied to what a sender sends (for tests of the receiver's tolerance).
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

impl Faults {
    /// Whether no fault is configured (the injector passes everything straight through).
    pub fn is_none(&self) -> bool {
        *self == Faults::default()
    }
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
    /// Datagrams the sink refused to send.
    pub send_errors: u64,
}

/// Applies [`Faults`] to what is sent through it into the sink `S`.
#[derive(Debug)]
pub struct FaultInjector<S: Sink> {
    inner: S,
    faults: Faults,
    rng: Rng,
    delayed: VecDeque<(f64, Outgoing)>,
    held: Option<(f64, Outgoing)>,
    stats: FaultStats,
    label: &'static str,
    /// Destinations whose send error was said (at most [`SAID_DESTINATIONS`]).
    said: Vec<SocketAddr>,
}

impl<S: Sink> FaultInjector<S> {
    /// An injector of `faults` in front of `inner`, its randomness from `seed`.
    pub fn new(inner: S, faults: Faults, seed: u64) -> Self {
        Self {
            inner,
            faults,
            rng: Rng::new(seed ^ 0x5EED_FA17),
            delayed: VecDeque::new(),
            held: None,
            stats: FaultStats::default(),
            label: "net",
            said: Vec::new(),
        }
    }

    /// Names the sender in log lines about send errors (default "net").
    pub fn with_label(mut self, label: &'static str) -> Self {
        self.label = label;
        self
    }

    /// The faults applied.
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// Changes the faults (what is already delayed or held back keeps its release time).
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// The counters.
    pub fn stats(&self) -> FaultStats {
        self.stats
    }

    /// The sink.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The sink, writable (e.g. to take what an in-memory sink collected).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Sends `bytes` to `to` at `now`, through the faults.
    pub fn send(&mut self, now: f64, to: SocketAddr, bytes: Vec<u8>) {
        let o = Outgoing { to, bytes };
        if self.rng.chance(self.faults.loss) {
            self.stats.dropped += 1;
            return;
        }
        let extra = if self.rng.chance(self.faults.duplicate) {
            self.stats.duplicated += 1;
            Some(o.clone())
        } else {
            None
        };
        for o in extra.into_iter().chain(std::iter::once(o)) {
            if self.held.is_none() && self.rng.chance(self.faults.reorder) {
                self.stats.reordered += 1;
                self.held = Some((now, o));
                continue;
            }
            self.emit(now, o);
            if let Some((_, h)) = self.held.take() {
                self.emit(now, h);
            }
        }
    }

    fn emit(&mut self, now: f64, o: Outgoing) {
        if self.faults.delay.is_zero() {
            self.write(&o);
        } else {
            self.delayed
                .push_back((now + self.faults.delay.as_secs_f64(), o));
        }
    }

    fn write(&mut self, o: &Outgoing) {
        if let Err(e) = self.inner.send_to(&o.bytes, o.to) {
            self.stats.send_errors += 1;
            // Once per destination: a multicast group without a route fails every round,
            // and the log must not repeat it every few seconds.
            if !self.said.contains(&o.to) && self.said.len() < SAID_DESTINATIONS {
                self.said.push(o.to);
                warn!(
                    "{}: cannot send to {}: {e}; said once, further errors are only counted \
                     ('send_errors'){}",
                    self.label,
                    o.to,
                    if o.to.ip().is_multicast() {
                        " (no multicast route? --no-multicast with --connect ADDR queries only \
                         the addresses given)"
                    } else {
                        ""
                    }
                );
            }
        }
    }

    /// Sends what is due at `now`: delayed datagrams, and one held back for reordering for
    /// more than 50 ms with nothing after it.
    pub fn poll(&mut self, now: f64) {
        if let Some((since, _)) = &self.held
            && now - since > HOLD_S
            && let Some((_, h)) = self.held.take()
        {
            self.emit(now, h);
        }
        while self.delayed.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, o)) = self.delayed.pop_front() {
                self.write(&o);
            }
        }
    }

    /// When [`FaultInjector::poll`] next has something to do (infinity: nothing waits).
    pub fn next_release(&self) -> f64 {
        let delayed = self.delayed.front().map_or(f64::INFINITY, |(d, _)| *d);
        let held = self
            .held
            .as_ref()
            .map_or(f64::INFINITY, |(t, _)| t + HOLD_S);
        delayed.min(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to() -> SocketAddr {
        "127.0.0.1:9".parse().unwrap()
    }

    #[test]
    fn no_faults_passes_everything_in_order() {
        let mut link = FaultInjector::new(Vec::new(), Faults::default(), 1);
        for i in 0..100 {
            link.send(0.0, to(), vec![i]);
        }
        let got: Vec<u8> = link.get_ref().iter().map(|x| x.bytes[0]).collect();
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
        let mut link = FaultInjector::new(Vec::new(), faults, 42);
        let n = 20_000u32;
        for i in 0..n {
            link.send(0.0, to(), vec![(i % 256) as u8]);
        }
        link.poll(1.0);
        let s = link.stats();
        let sink = link.get_ref();
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
        let mut link = FaultInjector::new(Vec::new(), faults, 1);
        link.send(1.0, to(), vec![1]);
        assert!(link.get_ref().is_empty());
        assert!((link.next_release() - 1.02).abs() < 1e-12);
        link.poll(1.019);
        assert!(link.get_ref().is_empty());
        link.poll(1.021);
        assert_eq!(link.get_ref().len(), 1);
    }
}
