//! The live arm versus the drawn state (issue 12, "the window never misleads the operator").
//!
//! The rule: a control that commands the live arm is always drawn from the live arm's newest
//! state ([`OcuApp::live_state`]), never from the drawn state (which is the past while the
//! operator has scrubbed back or a replay is open). The past is shown as the past, in its own
//! area with the time it is at ([`past_label`]), with no buttons beside it.

use super::app::OcuApp;
use super::format::{format_hms, wall_ns};
use super::time_control::Shown;
use crate::model::clock::format_utc_time;
use crate::model::state::ArmState;
use crate::model::update::{ControlState, ManagementState};

impl OcuApp {
    /// The live arm's newest state, whatever is drawn: `None` when no live source exists
    /// (a replay on its own).
    pub fn live_state(&self) -> Option<ArmState> {
        self.sources
            .live_source()
            .map(|l| super::sources::read_session(&l.session).latest.clone())
    }

    /// Whether we hold control of the live arm (not of the arm drawn).
    pub fn live_holds_control(&self) -> bool {
        self.live_state()
            .is_some_and(|s| matches!(s.control, ControlState::Held { .. }))
    }

    /// Whether the live arm is in emergency (not the arm drawn).
    pub fn live_in_emergency(&self) -> bool {
        self.live_state()
            .is_some_and(|s| s.status == ManagementState::Emergency)
    }
}

/// `12:03:04` (UTC, whole seconds) for session time `t`, or the session time itself when the
/// wall clock is unknown.
pub fn clock_text(start_ns: Option<u64>, t: f64) -> String {
    match start_ns {
        Some(start) => {
            let full = format_utc_time(wall_ns(start, t));
            let hms = full.split('.').next().unwrap_or(&full).to_string();
            format!("{hms} UTC")
        }
        None => format_hms(t, false),
    }
}

/// What the past area says the drawn time is: `at −12.4 s (12:03:04 UTC)` scrubbed back,
/// `file.mcap at 0:01:02 (12:03:04 UTC)` in a replay (the area's title says it is a recording); `None` while following live.
pub fn past_label(
    shown: Shown,
    now: f64,
    start_ns: Option<u64>,
    replay: Option<&str>,
) -> Option<String> {
    let clock = |t: f64| match start_ns {
        Some(_) => format!(" ({})", clock_text(start_ns, t)),
        None => String::new(),
    };
    match shown {
        Shown::Live => None,
        Shown::LiveScrubbed { t } => Some(format!("at −{:.1} s{}", (now - t).max(0.0), clock(t))),
        Shown::Replay { t } | Shown::ReplayOverLive { t } => Some(format!(
            "{} at {}{}",
            replay.unwrap_or("file"),
            format_hms(t, false),
            clock(t)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_past_says_when_it_is() {
        assert_eq!(past_label(Shown::Live, 10.0, None, None), None);
        assert_eq!(
            past_label(Shown::LiveScrubbed { t: 2.5 }, 14.9, None, None).as_deref(),
            Some("at −12.4 s")
        );
        // 2025-01-01T00:00:00Z + 62 s.
        let start = 1_735_689_600_000_000_000;
        assert_eq!(
            past_label(Shown::Replay { t: 62.0 }, 0.0, Some(start), Some("a.mcap")).as_deref(),
            Some("a.mcap at 0:01:02 (00:01:02 UTC)")
        );
    }
}
