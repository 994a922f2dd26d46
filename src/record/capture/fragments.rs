//! IP fragment reassembly, within fixed bounds of memory and capture time.

use std::net::IpAddr;
use std::ops::Range;

use super::{FRAGMENT_TIMEOUT_SECONDS, MAX_PENDING_DATAGRAMS};

/// The largest reassembled IP payload: the IPv4 total length and IPv6 payload length are 16 bits.
const MAX_DATAGRAM_LEN: usize = 65_535;

/// What identifies the fragments of one datagram (RFC 791; RFC 8200 for IPv6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FragmentKey {
    pub(super) source: IpAddr,
    pub(super) destination: IpAddr,
    pub(super) protocol: u8,
    pub(super) identification: u32,
}

impl FragmentKey {
    pub(super) fn version(&self) -> &'static str {
        if self.source.is_ipv4() {
            "IPv4"
        } else {
            "IPv6"
        }
    }
}

/// One fragment: `payload` goes at byte `offset` of the datagram's IP payload.
pub(super) struct Fragment<'a> {
    pub(super) key: FragmentKey,
    pub(super) offset: usize,
    pub(super) more: bool,
    pub(super) payload: &'a [u8],
}

/// A datagram waiting for fragments.
pub(super) struct Pending {
    pub(super) key: FragmentKey,
    /// Capture time of its first fragment: the timeout runs from there.
    started: f64,
    pub(super) data: Vec<u8>,
    /// Byte ranges received, sorted, disjoint and not touching.
    pub(super) received: Vec<Range<usize>>,
    /// Length of the datagram, known once the last fragment arrives.
    pub(super) end: Option<usize>,
}

pub(super) enum FragmentOutcome {
    Stored,
    Complete(Vec<u8>),
    Rejected(String),
}

/// Reassembles fragmented datagrams within fixed bounds: [`MAX_PENDING_DATAGRAMS`] at once, each
/// at most 65,535 bytes, each for at most [`FRAGMENT_TIMEOUT_SECONDS`] of capture time.
///
/// Not etherparse's `defrag::IpDefragPool`: by its own documentation it has no bound on the
/// datagrams it holds, and it has no notion of capture time.
///
/// Overlapping fragments keep the bytes that arrived first, so a later overlapping fragment
/// cannot rewrite data already received (the choice RFC 5722 motivates); exact duplicates are
/// harmless.
#[derive(Default)]
pub(super) struct Reassembler {
    /// Oldest first, so eviction takes index 0.
    pub(super) pending: Vec<Pending>,
}

impl Reassembler {
    /// Drops datagrams whose first fragment is more than the timeout before `now`; returns how
    /// many.
    pub(super) fn expire(&mut self, now: f64) -> u64 {
        let before = self.pending.len();
        self.pending.retain(|p| {
            let age = now - p.started;
            // A timestamp that is not a number cannot age anything out.
            age.is_nan() || age <= FRAGMENT_TIMEOUT_SECONDS
        });
        (before - self.pending.len()) as u64
    }

    /// Drops every pending datagram; returns how many.
    pub(super) fn clear(&mut self) -> u64 {
        let count = self.pending.len() as u64;
        self.pending.clear();
        count
    }

    /// Stores a fragment; returns the outcome and how many pending datagrams were evicted to make
    /// room.
    pub(super) fn add(&mut self, fragment: &Fragment<'_>, now: f64) -> (FragmentOutcome, u64) {
        let start = fragment.offset;
        let end = start + fragment.payload.len();
        if end > MAX_DATAGRAM_LEN {
            let why = format!("it ends at byte {end}, beyond the {MAX_DATAGRAM_LEN}-byte limit");
            return (FragmentOutcome::Rejected(why), 0);
        }
        if fragment.more && !fragment.payload.len().is_multiple_of(8) {
            let why = format!(
                "a fragment with more to follow has {} bytes, not a multiple of 8",
                fragment.payload.len()
            );
            return (FragmentOutcome::Rejected(why), 0);
        }
        let mut evicted = 0;
        let index = match self.pending.iter().position(|p| p.key == fragment.key) {
            Some(index) => index,
            None => {
                if self.pending.len() >= MAX_PENDING_DATAGRAMS {
                    self.pending.remove(0);
                    evicted = 1;
                }
                self.pending.push(Pending {
                    key: fragment.key,
                    started: now,
                    data: Vec::new(),
                    received: Vec::new(),
                    end: None,
                });
                self.pending.len() - 1
            }
        };
        let Some(pending) = self.pending.get_mut(index) else {
            return (
                FragmentOutcome::Rejected("lost pending datagram".into()),
                evicted,
            );
        };
        if let Some(known) = pending.end
            && (end > known || (!fragment.more && end != known))
        {
            let why = format!(
                "it ends at byte {end}, but the last fragment ended the datagram at {known}"
            );
            return (FragmentOutcome::Rejected(why), evicted);
        }
        if !fragment.more {
            let seen = pending.received.last().map_or(0, |r| r.end);
            if seen > end {
                let why =
                    format!("it ends the datagram at byte {end}, but bytes up to {seen} arrived");
                return (FragmentOutcome::Rejected(why), evicted);
            }
            pending.end = Some(end);
        }
        if start < end {
            pending.fill(start, fragment.payload);
        }
        let complete = pending.end.is_some_and(|end| {
            matches!(pending.received.as_slice(), [only] if only.start == 0 && only.end == end)
        });
        if complete {
            let mut done = self.pending.remove(index);
            done.data.truncate(done.end.unwrap_or_default());
            return (FragmentOutcome::Complete(done.data), evicted);
        }
        (FragmentOutcome::Stored, evicted)
    }
}

impl Pending {
    /// Copies `payload` to `start` wherever no byte has been received yet, and records the range.
    fn fill(&mut self, start: usize, payload: &[u8]) {
        let end = start + payload.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        let mut copy = |from: usize, to: usize| {
            if let (Some(target), Some(source)) = (
                self.data.get_mut(from..to),
                payload.get(from - start..to - start),
            ) {
                target.copy_from_slice(source);
            }
        };
        let mut position = start;
        for range in &self.received {
            if range.end <= position {
                continue;
            }
            if range.start >= end {
                break;
            }
            if range.start > position {
                copy(position, range.start);
            }
            position = position.max(range.end);
            if position >= end {
                break;
            }
        }
        if position < end {
            copy(position, end);
        }
        // Insert the new range and merge it with any it overlaps or touches.
        let mut merged = start..end;
        self.received.retain(|range| {
            let touches = range.start <= merged.end && merged.start <= range.end;
            if touches {
                merged = merged.start.min(range.start)..merged.end.max(range.end);
            }
            !touches
        });
        let at = self
            .received
            .partition_point(|range| range.start < merged.start);
        self.received.insert(at, merged);
    }
}
