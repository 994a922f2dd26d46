//! A signal's subscription as the client keeps it per arm ([`Sub`], [`SubState`]) and how
//! often its stale flag may change ([`STALE_DWELL`]); when a signal is stale is
//! `model::fresh`'s rule, the window's too. A leaf: the arm's record (`arm.rs`) holds them,
//! `subscriptions.rs` drives them, the jog and discovery read them.

use crate::jaus::Message;
use crate::jaus::core::EventType;
use crate::model::update::{Delivery, Signal};
/// A signal's stale flag changes at most once per this many seconds (the link text does not
/// flap on a lossy link).
pub(super) const STALE_DWELL: f64 = 1.0;

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
    /// How the signal is delivered now (`None` while its event is being asked for): what
    /// `ArmFact::Delivery` says to the window.
    pub(super) fn delivery(&self) -> Option<Delivery> {
        match self.state {
            SubState::Active { rate, .. } if self.kind == EventType::Periodic => {
                Some(Delivery::Event(rate))
            }
            SubState::Active { .. } => Some(Delivery::OnChange),
            SubState::Polling { rate, .. } => Some(Delivery::Polling(rate)),
            SubState::Requesting { .. } => None,
        }
    }

    /// How often a sample is due, s, for the stale flags (`subscriptions.rs`): for a periodic
    /// signal (the joint positions among them) its [`Delivery::period`], as the window and the
    /// jog judge it; an every-change signal polled instead is not flagged stale (its polls
    /// answer whether or not it changed: the link's silence says it is gone).
    pub(super) fn period(&self) -> Option<f64> {
        match self.state {
            SubState::Active { rate, .. } if rate > 0.0 => Some(1.0 / rate),
            SubState::Polling { rate, .. } if self.kind == EventType::Periodic => {
                Delivery::Polling(rate).period()
            }
            _ => None,
        }
    }
}
