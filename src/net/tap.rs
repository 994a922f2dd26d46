//! The recording tap: every datagram the OCU sends and receives, raw, with its time, direction
//! and peer, offered to its sinks behind bounded channels — the recorder ([`Tap::connect`])
//! and others, such as the live view server ([`Tap::attach`], at most [`MAX_ATTACHED`]). The
//! network thread never waits on them: a sink that is behind loses the datagram, counted for
//! that sink alone.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Sender, TrySendError};

use super::latch::Latch;
use super::socket::KernelDrops;

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
    /// `Some(receive or send time, ns since the Unix epoch)` for a latched datagram: one that
    /// crossed the wire before the recording began and is written at its start (`t_ns` is
    /// then the recording's start) so that the recording stands on its own. In an MCAP file
    /// it is the message's publish time, earlier than its log time.
    pub latched: Option<u64>,
}

impl WireRecord {
    /// A record with no bytes (at time 0, from 0.0.0.0:0): a slot that a reader fills again
    /// and again, reusing its byte buffer.
    pub fn empty() -> WireRecord {
        WireRecord {
            t_ns: 0,
            direction: Direction::Rx,
            peer: SocketAddr::from(([0, 0, 0, 0], 0)),
            bytes: Vec::new(),
            latched: None,
        }
    }
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

/// A switchable tap shared by the network thread (which offers every datagram) and whoever
/// records (which connects a channel). Cloning shares it. It also keeps the [`Latch`]: the
/// newest state-bearing datagrams of every component, which [`Tap::connect`] sends first, so
/// a recording started mid-session stands on its own.
#[derive(Debug, Clone, Default)]
pub struct Tap {
    inner: Arc<Mutex<Inner>>,
    dropped: Arc<AtomicU64>,
    offered: Arc<AtomicU64>,
}

/// Sinks attached besides the recorder at most ([`Tap::attach`]).
pub const MAX_ATTACHED: usize = 4;

/// A sink attached with [`Tap::attach`]: detach with [`Tap::detach`]; its own drop count.
#[derive(Debug, Clone)]
pub struct Attached {
    id: u64,
    dropped: Arc<AtomicU64>,
    offered: Arc<AtomicU64>,
}

impl Attached {
    /// Datagrams this sink lost because it was behind (its channel was full).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Datagrams offered to this sink.
    pub fn offered(&self) -> u64 {
        self.offered.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
struct Sink {
    id: u64,
    tx: Sender<WireRecord>,
    dropped: Arc<AtomicU64>,
    offered: Arc<AtomicU64>,
}

#[derive(Debug, Default)]
struct Inner {
    tx: Option<Sender<WireRecord>>,
    /// Sinks besides the recorder.
    attached: Vec<Sink>,
    next_id: u64,
    latch: Latch,
    epoch: Option<Epoch>,
    kernel_drops: Option<KernelDrops>,
}

impl Tap {
    /// A tap with nothing connected.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the session's clock (the network side does when it starts): the time stamp of
    /// latched datagrams sent at [`Tap::connect`].
    pub fn set_epoch(&self, epoch: Epoch) {
        self.lock().epoch = Some(epoch);
    }

    /// Sends every following datagram to `tx` (replacing any earlier recorder), after the
    /// latched ones: those are stamped with the time of connecting and carry their own
    /// receive time in [`WireRecord::latched`]. Returns how many latched datagrams were sent.
    pub fn connect(&self, tx: Sender<WireRecord>) -> usize {
        let now = self
            .lock()
            .epoch
            .map_or_else(|| Epoch::now().unix_ns, |e| e.unix_ns_at(Instant::now()));
        self.connect_at(tx, now)
    }

    /// [`Tap::connect`] at `now` on the caller's clock (ns since the Unix epoch, or since the
    /// start of a fake-clock session).
    pub fn connect_at(&self, tx: Sender<WireRecord>, now: u64) -> usize {
        let mut inner = self.lock();
        let mut sent = 0;
        for mut r in inner.latch.records() {
            r.latched = Some(r.t_ns);
            r.t_ns = now.max(r.t_ns);
            match tx.try_send(r) {
                Ok(()) => sent += 1,
                Err(_) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        inner.tx = Some(tx);
        sent
    }

    /// Stops sending datagrams to the recorder (attached sinks stay).
    pub fn disconnect(&self) {
        self.lock().tx = None;
    }

    /// Sends every following datagram to `tx` as well, after the latched ones (as
    /// [`Tap::connect`] does), besides the recorder and any other attached sink. `None` when
    /// [`MAX_ATTACHED`] sinks are attached already. The sink's losses are its own
    /// ([`Attached::dropped`]); a sink whose receiver is gone is detached.
    pub fn attach(&self, tx: Sender<WireRecord>) -> Option<Attached> {
        let mut inner = self.lock();
        if inner.attached.len() >= MAX_ATTACHED {
            return None;
        }
        let now = inner
            .epoch
            .map_or_else(|| Epoch::now().unix_ns, |e| e.unix_ns_at(Instant::now()));
        let dropped = Arc::new(AtomicU64::new(0));
        for mut r in inner.latch.records() {
            r.latched = Some(r.t_ns);
            r.t_ns = now.max(r.t_ns);
            if tx.try_send(r).is_err() {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        inner.next_id += 1;
        let id = inner.next_id;
        let offered = Arc::new(AtomicU64::new(0));
        inner.attached.push(Sink {
            id,
            tx,
            dropped: dropped.clone(),
            offered: offered.clone(),
        });
        Some(Attached {
            id,
            dropped,
            offered,
        })
    }

    /// Stops sending datagrams to an attached sink.
    pub fn detach(&self, sink: &Attached) {
        self.lock().attached.retain(|s| s.id != sink.id);
    }

    /// Whether `other` is this tap (a clone of it), not another one.
    pub fn is_same(&self, other: &Tap) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Sinks attached now (besides the recorder).
    pub fn attached(&self) -> usize {
        self.lock().attached.len()
    }

    /// Tells the tap where the kernel counts drops at the receiving socket (the network side
    /// does when it starts), so that a recording can say how many it missed.
    pub fn set_kernel_drops(&self, drops: KernelDrops) {
        self.lock().kernel_drops = Some(drops);
    }

    /// Datagrams the kernel dropped at the receiving socket so far (its buffer was full), if
    /// a network side has set its counter and the system says ([`KernelDrops::read`]).
    pub fn kernel_dropped(&self) -> Option<u64> {
        let drops = self.lock().kernel_drops?;
        drops.read()
    }

    /// Whether a recorder is connected.
    pub fn is_connected(&self) -> bool {
        self.lock().tx.is_some()
    }

    /// Offers a datagram received from or sent to `peer` at `t_ns` (ns since the Unix epoch):
    /// the latch looks at it, and a connected recorder gets a copy. Never blocks: a full
    /// channel drops the datagram and counts it; a recorder that has gone away disconnects.
    pub fn offer(&self, t_ns: u64, direction: Direction, peer: SocketAddr, bytes: &[u8]) {
        let mut inner = self.lock();
        inner.latch.observe(t_ns, direction, peer, bytes);
        if !inner.attached.is_empty() {
            send_attached(&mut inner, t_ns, direction, peer, bytes);
        }
        if inner.tx.is_some() {
            self.send(&mut inner, t_ns, direction, peer, bytes.to_vec());
        }
    }

    /// [`Tap::offer`] for a datagram the caller no longer needs (it is moved, not copied).
    pub fn offer_owned(&self, t_ns: u64, direction: Direction, peer: SocketAddr, bytes: Vec<u8>) {
        let mut inner = self.lock();
        inner.latch.observe(t_ns, direction, peer, &bytes);
        if !inner.attached.is_empty() {
            send_attached(&mut inner, t_ns, direction, peer, &bytes);
        }
        if inner.tx.is_some() {
            self.send(&mut inner, t_ns, direction, peer, bytes);
        }
    }

    fn send(
        &self,
        inner: &mut Inner,
        t_ns: u64,
        direction: Direction,
        peer: SocketAddr,
        bytes: Vec<u8>,
    ) {
        let Some(tx) = inner.tx.as_ref() else { return };
        self.offered.fetch_add(1, Ordering::Relaxed);
        let record = WireRecord {
            t_ns,
            direction,
            peer,
            bytes,
            latched: None,
        };
        match tx.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => inner.tx = None,
        }
    }

    /// The datagrams latched so far, oldest first (what [`Tap::connect`] would send).
    pub fn latched(&self) -> Vec<WireRecord> {
        self.lock().latch.records()
    }

    /// Datagrams dropped because the recorder was behind (since the tap was made).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Datagrams offered while a recorder was connected (since the tap was made).
    pub fn offered(&self) -> u64 {
        self.offered.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the state half-written in a way that
        // matters: the worst is one datagram missing from the latch.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A copy of a datagram for each attached sink; a full channel drops it for that sink, a
/// receiver that is gone detaches it.
fn send_attached(
    inner: &mut Inner,
    t_ns: u64,
    direction: Direction,
    peer: SocketAddr,
    bytes: &[u8],
) {
    inner.attached.retain(|sink| {
        sink.offered.fetch_add(1, Ordering::Relaxed);
        let record = WireRecord {
            t_ns,
            direction,
            peer,
            bytes: bytes.to_vec(),
            latched: None,
        };
        match sink.tx.try_send(record) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                sink.dropped.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    });
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
            latched: None,
        }
    }

    #[test]
    fn offers_nothing_until_connected_then_counts_drops_when_full() {
        let tap = Tap::new();
        tap.offer(0, Direction::Rx, rec(0).peer, &[]);
        assert_eq!(tap.offered(), 0, "nothing offered without a recorder");
        let (tx, rx) = crossbeam_channel::bounded(2);
        tap.connect(tx);
        for n in 0..5 {
            let r = rec(n);
            tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
        }
        assert_eq!(tap.offered(), 5);
        assert_eq!(tap.dropped(), 3);
        assert_eq!(
            rx.try_iter().map(|r| r.bytes[0]).collect::<Vec<_>>(),
            [0, 1]
        );
        drop(rx);
        let r = rec(9);
        tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
        assert!(
            !tap.is_connected(),
            "a vanished recorder disconnects the tap"
        );
    }

    #[test]
    fn an_attached_sink_loses_only_its_own_datagrams() {
        let tap = Tap::new();
        let (rec_tx, rec_rx) = crossbeam_channel::bounded(16);
        tap.connect(rec_tx);
        let (slow_tx, slow_rx) = crossbeam_channel::bounded(2);
        let slow = tap.attach(slow_tx).unwrap();
        for n in 0..5 {
            let r = rec(n);
            tap.offer(r.t_ns, r.direction, r.peer, &r.bytes);
        }
        assert_eq!(tap.dropped(), 0, "the recorder kept up");
        assert_eq!(rec_rx.try_iter().count(), 5);
        assert_eq!(slow.dropped(), 3);
        assert_eq!(slow.offered(), 5);
        assert_eq!(slow_rx.try_iter().count(), 2);
        drop(slow_rx);
        tap.offer(9, Direction::Rx, rec(9).peer, &[9]);
        assert_eq!(tap.attached(), 0, "a vanished sink is detached");
        assert!(tap.is_connected(), "the recorder stays");
    }

    #[test]
    fn attached_sinks_are_bounded_and_detach() {
        let tap = Tap::new();
        let sinks: Vec<_> = (0..MAX_ATTACHED)
            .map(|_| {
                let (tx, rx) = crossbeam_channel::bounded(1);
                (tap.attach(tx).unwrap(), rx)
            })
            .collect();
        let (tx, _rx) = crossbeam_channel::bounded(1);
        assert!(tap.attach(tx).is_none());
        tap.detach(&sinks[0].0);
        assert_eq!(tap.attached(), MAX_ATTACHED - 1);
    }
}
