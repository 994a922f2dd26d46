//! The answer budget (issue 29, untrusted senders): what the component sends because it was
//! asked is bounded per received datagram and per second per sender address, so a datagram of
//! 3,000 queries, or a stream of them, cannot turn the simulator into an amplifier.
//!
//! An *answer* is every datagram sent, while a received datagram is handled, to the address it
//! came from: ACKs, reports, confirmations and refusals (a message cut into multi-packet blocks
//! is one answer). Events sent by subscription are not answers (their table is bounded
//! instead, [`super::MAX_SUBSCRIPTIONS`]); neither is what goes to another client (the
//! previous holder told it lost control). The budget drops answers only: an emergency stop, a
//! control request and every command are acted on whatever is left of it.
//!
//! What a real component does: JTS Junior, the reference implementation, frames one message
//! per datagram and processes the blocks of a datagram in order, one reply per request; its
//! receive path is bounded by the rate it runs at, so what it can be made to send is too. The
//! simulator answers within the same bounds, stated here as numbers.

use std::collections::HashMap;
use std::net::SocketAddr;

/// Most answers sent for one received datagram.
///
/// Our OCU (and Junior) sends one message per datagram, so an honest datagram asks for at
/// most two answers: its ACK and its reply. Four leaves room for a peer that packs a few
/// messages together; a datagram holding 3,000 `QueryStatus` blocks gets four answers, not
/// 3,000.
pub const MAX_ANSWERS_PER_DATAGRAM: u32 = 4;

/// Answers a sender address earns per second (the token bucket's refill rate).
///
/// Our OCU asks an arm a few tens of times a second in bursts: setup queries, control renewal,
/// `QueryControl` every 5 s. The most it ever asks is polling after events were refused: at
/// most 20 Hz for each of five sampled signals and 2 Hz for two every-change ones, 104
/// queries/s (84 with the default rates; a 30 s polling session over a lossy link, in
/// `tests/sim_component.rs`, sends about 90 datagrams/s). 200/s, twice that, is never met by
/// an honest OCU, and caps what one address can draw from the component (an answer is a few
/// hundred bytes, a `ReportManipulatorSpecifications` a few kB).
pub const ANSWERS_PER_SECOND: f64 = 200.0;

/// Answers a sender address may spend at once (the bucket's depth): the OCU's setup burst
/// (discovery, specifications, presets, seven subscriptions, control: about 20 messages) five
/// times over, so retries on a lossy link fit too.
pub const ANSWER_BURST: f64 = 100.0;

/// Most sender addresses whose buckets are remembered; the least recently used is forgotten
/// first. A forgotten address comes back with a full bucket, which loses nothing for one
/// unused for `ANSWER_BURST / ANSWERS_PER_SECOND` (0.5 s): its bucket was full again anyway.
/// A sender cycling through more addresses than this is still held to
/// [`MAX_ANSWERS_PER_DATAGRAM`] per datagram.
pub const MAX_SENDERS: usize = 256;

/// One sender address's token bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    /// When `tokens` was last brought up to date (also the address's last use).
    at: f64,
}

impl Bucket {
    /// The tokens at `now` (the clock may step back a little: receive stamps are taken on
    /// another thread than ticks; time never runs backwards for the bucket).
    fn refill(&mut self, now: f64) {
        if now > self.at {
            self.tokens = (self.tokens + (now - self.at) * ANSWERS_PER_SECOND).min(ANSWER_BURST);
            self.at = now;
        }
    }
}

/// The token buckets of the sender addresses heard recently (at most [`MAX_SENDERS`]).
#[derive(Debug, Default)]
pub(super) struct Senders {
    buckets: HashMap<SocketAddr, Bucket>,
}

impl Senders {
    /// Whether `addr` has an answer left at `now` (nothing is taken).
    pub(super) fn has_answer(&self, addr: SocketAddr, now: f64) -> bool {
        self.buckets.get(&addr).is_none_or(|b| {
            let mut b = *b;
            b.refill(now);
            b.tokens >= 1.0
        })
    }

    /// Takes one answer from `addr`'s bucket at `now`; `false` when it is empty.
    pub(super) fn take(&mut self, addr: SocketAddr, now: f64) -> bool {
        if self.buckets.len() >= MAX_SENDERS && !self.buckets.contains_key(&addr) {
            let oldest = self
                .buckets
                .iter()
                .min_by(|a, b| a.1.at.total_cmp(&b.1.at))
                .map(|(k, _)| *k);
            if let Some(k) = oldest {
                self.buckets.remove(&k);
            }
        }
        let b = self.buckets.entry(addr).or_insert(Bucket {
            tokens: ANSWER_BURST,
            at: now,
        });
        b.refill(now);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Addresses remembered.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.buckets.len()
    }
}

/// The datagram being handled: where answers go and how many it may still have.
#[derive(Debug, Clone, Copy)]
pub(super) struct Answering {
    pub(super) addr: SocketAddr,
    pub(super) now: f64,
    pub(super) left: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let mut s = Senders::default();
        let burst = (0..1000).filter(|_| s.take(addr(1), 0.0)).count();
        assert_eq!(burst as f64, ANSWER_BURST);
        assert!(!s.has_answer(addr(1), 0.0));
        // One second later: one second's worth, not more.
        let later = (0..1000).filter(|_| s.take(addr(1), 1.0)).count();
        assert_eq!(later as f64, ANSWERS_PER_SECOND.min(ANSWER_BURST));
        // Another address is not touched by the first one's spending.
        assert!(s.take(addr(2), 1.0));
    }

    #[test]
    fn the_table_forgets_the_least_recently_used_address_first() {
        let mut s = Senders::default();
        for p in 0..MAX_SENDERS as u16 {
            while s.take(addr(p), f64::from(p) * 1e-6) {}
        }
        assert_eq!(s.len(), MAX_SENDERS);
        // Address 1 used again: address 0 is now the least recently used and goes first.
        assert!(!s.take(addr(1), 3e-4));
        assert!(s.take(addr(9999), 3e-4));
        assert_eq!(s.len(), MAX_SENDERS);
        assert!(
            s.has_answer(addr(0), 3e-4),
            "forgotten: a full bucket again"
        );
        assert!(!s.has_answer(addr(1), 3e-4), "remembered: still empty");
    }
}
