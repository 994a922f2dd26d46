//! When a sampled signal is fresh: one rule for the network side (the stale flags it says and
//! the jog stream's gate) and the window (the jog gates' preview), so the two never disagree
//! on whether a jog may start. A signal due every `period` is stale once its last sample is
//! older than [`stale_limit`]; a signal with no period (an every-change event) is held to
//! [`STALE_FLOOR`]. How often a signal is due is its [`Delivery`]'s period, which the network
//! side announces in `ArmFact::Delivery` and keeps for itself.

use super::update::Delivery;

/// The least time a signal is overdue before it is called stale, s: shorter gaps are loss an
/// operator cannot see (at 30 % loss a 10 Hz signal misses three in a row every few seconds),
/// and a busy machine delays the network thread by tens of milliseconds.
pub const STALE_FLOOR: f64 = 0.5;

/// How long a signal of `period` may be overdue before it is stale, s.
pub fn stale_limit(period: f64) -> f64 {
    (3.0 * period).max(STALE_FLOOR)
}

/// What is known of one signal's samples, wherever it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Samples {
    /// The network side's stale flag (said with hysteresis: it lags the samples' age).
    pub stale: bool,
    /// Receive time of the last sample, s.
    pub last: Option<f64>,
    /// How the signal is delivered (`None` before it is subscribed).
    pub delivery: Option<Delivery>,
}

impl Samples {
    /// The limit the last sample's age is held to, s.
    pub fn limit(&self) -> f64 {
        self.delivery
            .and_then(Delivery::period)
            .map_or(STALE_FLOOR, stale_limit)
    }

    /// Fresh enough to act on at `now`: not flagged stale, and the last sample no older than
    /// [`Samples::limit`] plus `lateness` (how late the one judging ran: a thread that ran
    /// late has not looked for newer samples either).
    pub fn fresh_at(&self, now: f64, lateness: f64) -> bool {
        !self.stale
            && self
                .last
                .is_some_and(|t| now - t <= self.limit() + lateness)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_fresh_within_three_periods_and_never_under_the_floor() {
        let at = |rate: f64| Samples {
            stale: false,
            last: Some(10.0),
            delivery: Some(Delivery::Event(rate)),
        };
        // 10 Hz: 0.3 s is under the floor; 0.5 s it is.
        assert!(at(10.0).fresh_at(10.5, 0.0));
        assert!(!at(10.0).fresh_at(10.51, 0.0));
        // 1 Hz: three periods.
        assert!(at(1.0).fresh_at(13.0, 0.0));
        assert!(!at(1.0).fresh_at(13.01, 0.0));
        // A late judge is given its lateness.
        assert!(at(1.0).fresh_at(13.05, 0.1));
        // Polled at 2 Hz: the poll's period (an every-change signal polled included).
        let polled = Samples {
            delivery: Some(Delivery::Polling(2.0)),
            ..at(1.0)
        };
        assert!(polled.fresh_at(11.5, 0.0) && !polled.fresh_at(11.51, 0.0));
        // On change, or a rate of 0: the floor.
        for d in [Delivery::OnChange, Delivery::Event(0.0)] {
            let s = Samples {
                delivery: Some(d),
                ..at(1.0)
            };
            assert_eq!(s.limit(), STALE_FLOOR);
        }
    }

    #[test]
    fn flagged_stale_or_never_sampled_is_not_fresh() {
        let s = Samples {
            stale: true,
            last: Some(10.0),
            delivery: Some(Delivery::Event(100.0)),
        };
        assert!(!s.fresh_at(10.0, 0.0));
        assert!(!Samples::default().fresh_at(0.0, 1.0));
    }
}
