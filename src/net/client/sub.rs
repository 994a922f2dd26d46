//! A signal's subscription as the client keeps it per arm ([`Sub`], [`SubState`]) and when
//! a signal is stale ([`stale_limit`], [`STALE_FLOOR`], [`STALE_DWELL`]). A leaf: the arm's
//! record (`arm.rs`) holds them, `subscriptions.rs` drives them, the jog and discovery read
//! them.

use crate::jaus::Message;
use crate::jaus::core::EventType;
use crate::model::update::Signal;

/// The least time a signal is overdue before it is called stale, s: shorter gaps are loss an
/// operator cannot see (at 30 % loss a 10 Hz signal misses three in a row every few seconds),
/// and a busy machine delays the network thread by tens of milliseconds.
pub(super) const STALE_FLOOR: f64 = 0.5;
/// A signal's stale flag changes at most once per this many seconds (the link text does not
/// flap on a lossy link).
pub(super) const STALE_DWELL: f64 = 1.0;

/// How long a signal of `period` may be overdue before it is stale, s.
pub(super) fn stale_limit(period: f64) -> f64 {
    (3.0 * period).max(STALE_FLOOR)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum SubState {
    /// `CreateEvent` sent, no answer yet.
    Requesting { sent: f64, tries: u8 },
    /// Events arriving.
    Active {
        event_id: u8,
        rate: f64,
        renew_at: f64,
    },
    /// Periodic queries instead of events.
    Polling { next: f64, rate: f64 },
}

#[derive(Debug, Clone)]
pub(super) struct Sub {
    pub(super) signal: Signal,
    pub(super) query: Message,
    pub(super) kind: EventType,
    pub(super) rate: f64,
    pub(super) request_id: u8,
    pub(super) state: SubState,
    /// When the subscription last became active (staleness counts from here).
    pub(super) since: f64,
    pub(super) last_event_seq: Option<u8>,
    /// Events dropped in a row as older than the last applied.
    pub(super) old_in_a_row: u8,
}

impl Sub {
    pub(super) fn period(&self) -> Option<f64> {
        match self.state {
            SubState::Active { rate, .. } if rate > 0.0 => Some(1.0 / rate),
            SubState::Polling { rate, .. } if self.kind == EventType::Periodic => Some(1.0 / rate),
            _ => None,
        }
    }
}
