//! The recording tap: every datagram the OCU sends and receives, raw, with its time, direction
//! and peer, offered to a recorder behind a bounded channel. The network thread never waits on
//! it: when the recorder is behind, the datagram is dropped from the recording and counted.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Sender, TrySendError};

/// Which way a datagram went, seen from the OCU that recorded it. Datagrams imported from a
/// capture (where neither end is us) are `Rx`, with the sender as peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Received from `peer`.
    Rx,
    /// Sent to `peer`.
    Tx,
}

impl Direction {
    /// `"rx"` or `"tx"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Rx => "rx",
            Direction::Tx => "tx",
        }
    }
}

/// One datagram as it crossed the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRecord {
    /// Receive (Rx) or send (Tx) time, ns since the Unix epoch.
    pub t_ns: u64,
    /// Which way it went.
    pub direction: Direction,
    /// The other end: the source of an Rx datagram, the destination of a Tx one.
    pub peer: SocketAddr,
    /// The UDP payload, untouched.
    pub bytes: Vec<u8>,
}

/// The time origin of a session: one instant on the monotonic clock and the same moment as
/// ns since the Unix epoch. Live update times are seconds since `instant`; recorded datagram
/// times are `unix_ns` plus the same elapsed time, so replay times equal live times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    /// `t = 0` on the monotonic clock.
    pub instant: Instant,
    /// `t = 0` as ns since the Unix epoch.
    pub unix_ns: u64,
}

impl Epoch {
    /// Now.
    pub fn now() -> Self {
        let instant = Instant::now();
        let unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Self { instant, unix_ns }
    }

    /// Seconds since `t = 0` at `at` (0 before it).
    pub fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.instant).as_secs_f64()
    }

    /// `at` as ns since the Unix epoch.
    pub fn unix_ns_at(&self, at: Instant) -> u64 {
        let elapsed = at.saturating_duration_since(self.instant).as_nanos();
        self.unix_ns
            .saturating_add(u64::try_from(elapsed).unwrap_or(u64::MAX))
    }
}

/// A switchable tap shared by the network thread (which offers) and whoever records (which
/// connects a channel). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Tap {
    inner: Arc<Mutex<Option<Sender<WireRecord>>>>,
    dropped: Arc<AtomicU64>,
    offered: Arc<AtomicU64>,
}

impl Tap {
    /// A tap with nothing connected.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends every following datagram to `tx` (replacing any earlier recorder).
    pub fn connect(&self, tx: Sender<WireRecord>) {
        *self.lock() = Some(tx);
    }

    /// Stops sending datagrams anywhere.
    pub fn disconnect(&self) {
        *self.lock() = None;
    }

    /// Whether a recorder is connected.
    pub fn is_connected(&self) -> bool {
        self.lock().is_some()
    }

    /// Offers a datagram; `make` runs only when a recorder is connected. Never blocks: a full
    /// channel drops the datagram and counts it; a recorder that has gone away disconnects.
    pub fn offer(&self, make: impl FnOnce() -> WireRecord) {
        let mut guard = self.lock();
        let Some(tx) = guard.as_ref() else { return };
        self.offered.fetch_add(1, Ordering::Relaxed);
        match tx.try_send(make()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => *guard = None,
        }
    }

    /// Datagrams dropped because the recorder was behind (since the tap was made).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Datagrams offered while a recorder was connected (since the tap was made).
    pub fn offered(&self) -> u64 {
        self.offered.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Sender<WireRecord>>> {
        // A panic while holding this lock cannot leave the Option half-written.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(n: u8) -> WireRecord {
        WireRecord {
            t_ns: u64::from(n),
            direction: Direction::Rx,
            peer: SocketAddr::from(([127, 0, 0, 1], crate::jaus::judp::PORT)),
            bytes: vec![n],
        }
    }

    #[test]
    fn offers_nothing_until_connected_then_counts_drops_when_full() {
        let tap = Tap::new();
        tap.offer(|| panic!("built without a recorder"));
        let (tx, rx) = crossbeam_channel::bounded(2);
        tap.connect(tx);
        for n in 0..5 {
            tap.offer(|| rec(n));
        }
        assert_eq!(tap.offered(), 5);
        assert_eq!(tap.dropped(), 3);
        assert_eq!(
            rx.try_iter().map(|r| r.bytes[0]).collect::<Vec<_>>(),
            [0, 1]
        );
        drop(rx);
        tap.offer(|| rec(9));
        assert!(
            !tap.is_connected(),
            "a vanished recorder disconnects the tap"
        );
    }
}
