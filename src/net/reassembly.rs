//! Multi-packet reassembly (§4.6): stateful protocol code, so it lives here and not with the
//! pure framing in [`crate::jaus::judp`] (smoltcp keeps `wire/` apart from
//! `iface/fragmentation.rs` the same way). Keyed by (source, destination) and sequence number,
//! tolerant of reordering and duplicates, with memory bounded by fragment count, bytes and age.

use std::collections::HashMap;

use crate::jaus::JausId;
use crate::jaus::judp::{DataFlags, Header};

/// Most fragments held for one (source, destination) pair: a JUDP message has at most 65,535
/// fragments in theory, but the largest message we take (a 255-joint specification with
/// names) is under 64 KiB, about 50 fragments.
pub const MAX_FRAGMENTS_PER_LINK: usize = 256;

/// Limits of a [`Reassembler`].
#[derive(Debug, Clone, Copy)]
pub struct ReassemblyLimits {
    /// Most fragments held at once, over all senders.
    pub max_fragments: usize,
    /// Most bytes held at once, over all senders.
    pub max_bytes: usize,
    /// Seconds a fragment waits for the rest of its message.
    pub timeout: f64,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        Self {
            max_fragments: 1024,
            max_bytes: 1 << 20,
            timeout: 2.0,
        }
    }
}

/// What pushing a fragment produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reassembly {
    /// A whole message.
    Complete(Vec<u8>),
    /// Stored, waiting for more.
    Pending,
    /// Not stored: the limits are reached.
    Refused,
}

#[derive(Debug)]
struct Fragment {
    flags: DataFlags,
    bytes: Vec<u8>,
    arrived: f64,
}

/// Multi-packet reassembly keyed by (source, destination) and sequence number, tolerant of
/// reordering and duplicates, with bounded memory (§4.6).
#[derive(Debug, Default)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    frags: HashMap<(JausId, JausId), HashMap<u16, Fragment>>,
    held_fragments: usize,
    held_bytes: usize,
    /// Fragments dropped by timeout or limits since creation.
    pub dropped: u64,
}

impl Reassembler {
    /// A reassembler with `limits`.
    pub fn new(limits: ReassemblyLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Fragments currently held.
    pub fn held_fragments(&self) -> usize {
        self.held_fragments
    }

    /// Bytes currently held.
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Takes one fragment (a block whose data flags are not Single) received at `now` seconds.
    pub fn push(&mut self, now: f64, header: &Header, payload: &[u8]) -> Reassembly {
        self.expire(now);
        let key = (header.source, header.destination);
        if payload.len() > self.limits.max_bytes
            || self
                .frags
                .get(&key)
                .is_some_and(|f| f.len() >= MAX_FRAGMENTS_PER_LINK)
        {
            self.dropped += 1;
            return Reassembly::Refused;
        }
        // Full: the oldest fragments make room. A sender that never completes its messages
        // (a flood of first fragments) so only ever displaces its own kind: a real message's
        // fragments arrive within milliseconds of each other, far faster than a flood can
        // push a thousand others through.
        while self.held_fragments >= self.limits.max_fragments
            || self.held_bytes + payload.len() > self.limits.max_bytes
        {
            if !self.drop_oldest() {
                break;
            }
        }
        let frags = self.frags.entry(key).or_default();
        let old = frags.insert(
            header.sequence,
            Fragment {
                flags: header.data_flags,
                bytes: payload.to_vec(),
                arrived: now,
            },
        );
        self.held_fragments += 1;
        self.held_bytes += payload.len();
        if let Some(old) = old {
            // A duplicate replaces the earlier copy.
            self.held_fragments -= 1;
            self.held_bytes -= old.bytes.len();
        }
        match Self::try_complete(frags, header.sequence) {
            Some((message, removed)) => {
                self.held_fragments -= removed;
                self.held_bytes -= message.len();
                if frags.is_empty() {
                    self.frags.remove(&key);
                }
                Reassembly::Complete(message)
            }
            None => Reassembly::Pending,
        }
    }

    /// Finds a complete First..Last run containing `seq`, removes it and returns its bytes
    /// and how many fragments it had.
    fn try_complete(frags: &mut HashMap<u16, Fragment>, seq: u16) -> Option<(Vec<u8>, usize)> {
        let n = frags.len() as u16;
        // Walk back to the First fragment.
        let mut first = seq;
        let mut steps = 0u16;
        loop {
            let f = frags.get(&first)?;
            if f.flags == DataFlags::First {
                break;
            }
            if f.flags != DataFlags::Middle && f.flags != DataFlags::Last || steps > n {
                return None;
            }
            first = first.wrapping_sub(1);
            steps += 1;
        }
        // Walk forward to the Last fragment.
        let mut last = first;
        let mut count = 1usize;
        loop {
            last = last.wrapping_add(1);
            count += 1;
            let f = frags.get(&last)?;
            match f.flags {
                DataFlags::Last => break,
                DataFlags::Middle if count <= usize::from(n) => {}
                _ => return None,
            }
        }
        let mut message = Vec::new();
        let mut s = first;
        for _ in 0..count {
            if let Some(f) = frags.remove(&s) {
                message.extend_from_slice(&f.bytes);
            }
            s = s.wrapping_add(1);
        }
        Some((message, count))
    }

    /// Drops the fragment that arrived first; whether there was one.
    fn drop_oldest(&mut self) -> bool {
        let oldest = self
            .frags
            .iter()
            .flat_map(|(k, f)| f.iter().map(move |(seq, f)| (*k, *seq, f.arrived)))
            .min_by(|a, b| a.2.total_cmp(&b.2));
        let Some((key, seq, _)) = oldest else {
            return false;
        };
        if let Some(frags) = self.frags.get_mut(&key) {
            if let Some(f) = frags.remove(&seq) {
                self.held_fragments -= 1;
                self.held_bytes -= f.bytes.len();
                self.dropped += 1;
            }
            if frags.is_empty() {
                self.frags.remove(&key);
            }
        }
        true
    }

    /// Drops fragments older than the timeout.
    pub fn expire(&mut self, now: f64) {
        let timeout = self.limits.timeout;
        let mut dropped = 0u64;
        let mut fragments = 0usize;
        let mut bytes = 0usize;
        self.frags.retain(|_, frags| {
            frags.retain(|_, f| {
                let keep = now - f.arrived <= timeout;
                if !keep {
                    dropped += 1;
                    fragments += 1;
                    bytes += f.bytes.len();
                }
                keep
            });
            !frags.is_empty()
        });
        self.dropped += dropped;
        self.held_fragments -= fragments;
        self.held_bytes -= bytes;
    }
}

impl Reassembly {
    /// The completed message, if this push completed one.
    pub fn complete(self) -> Option<Vec<u8>> {
        match self {
            Reassembly::Complete(m) => Some(m),
            Reassembly::Pending | Reassembly::Refused => None,
        }
    }
}

impl Reassembler {
    /// This reassembler as the fragment sink [`crate::jaus::dump::decode_datagram`] takes, for
    /// fragments received at `now`.
    pub fn defragmenter(&mut self, now: f64) -> impl FnMut(&Header, &[u8]) -> Option<Vec<u8>> + '_ {
        move |h, payload| self.push(now, h, payload).complete()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jaus::judp::fragment;

    const C: JausId = JausId::new(126, 1, 20);
    const S: JausId = JausId::new(126, 1, 10);

    #[test]
    fn fragments_and_reassembles_out_of_order_with_duplicates() {
        let message: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let parts = fragment(&Header::new(C, S, 65534), &message, 1385);
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0].0.data_flags, DataFlags::First);
        assert_eq!(parts[3].0.data_flags, DataFlags::Last);
        assert_eq!(parts[3].0.sequence, 1); // wrapped
        let mut r = Reassembler::default();
        let order = [2, 0, 0, 3, 1];
        let mut out = None;
        for &i in &order {
            let (h, p) = &parts[i];
            if let Reassembly::Complete(m) = r.push(0.0, h, p) {
                out = Some(m);
            }
        }
        assert_eq!(out.as_deref(), Some(message.as_slice()));
        assert_eq!(r.held_fragments(), 0);
        assert_eq!(r.held_bytes(), 0);
    }

    #[test]
    fn reassembler_drops_stale_fragments_and_the_oldest_past_limits() {
        let message = vec![7u8; 3000];
        let parts = fragment(&Header::new(C, S, 1), &message, 1000);
        let mut r = Reassembler::new(ReassemblyLimits {
            max_fragments: 2,
            max_bytes: 10_000,
            timeout: 1.0,
        });
        assert_eq!(r.push(0.0, &parts[0].0, parts[0].1), Reassembly::Pending);
        assert_eq!(r.push(0.1, &parts[1].0, parts[1].1), Reassembly::Pending);
        // Full: the oldest (the first fragment) makes room, so this message never completes.
        assert_eq!(r.push(0.2, &parts[2].0, parts[2].1), Reassembly::Pending);
        assert_eq!(r.held_fragments(), 2);
        assert_eq!(r.dropped, 1);
        r.expire(5.0);
        assert_eq!(r.held_fragments(), 0);
        assert_eq!(r.dropped, 3);
    }

    #[test]
    fn a_flood_of_fragments_that_never_complete_does_not_block_a_real_message() {
        let mut r = Reassembler::default();
        let limits = ReassemblyLimits::default();
        // Thousands of first fragments from made-up sources, each never completed.
        let mut now = 0.0;
        for i in 0..5000u32 {
            let src = JausId::new(1 + (i % 250) as u16, 1 + (i / 250 % 250) as u8, 1);
            let h = Header {
                data_flags: DataFlags::First,
                ..Header::new(S, src, i as u16)
            };
            assert_ne!(r.push(now, &h, &[0u8; 1000]), Reassembly::Refused);
            now += 0.001;
            assert!(r.held_fragments() <= limits.max_fragments);
            assert!(r.held_bytes() <= limits.max_bytes);
        }
        // The real arm's message, cut in five, in the middle of the flood.
        let message: Vec<u8> = (0..6000u32).map(|i| i as u8).collect();
        let mut done = None;
        for (h, p) in fragment(&Header::new(S, C, 40000), &message, 1385) {
            if let Reassembly::Complete(m) = r.push(now, &h, p) {
                done = Some(m);
            }
        }
        assert_eq!(done.as_deref(), Some(message.as_slice()));
    }
}
