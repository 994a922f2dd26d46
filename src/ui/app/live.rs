//! The live arm versus the drawn state (issue 12, "the window never misleads the operator").
//!
//! The rule: a control that commands the live arm is always drawn from the live arm's newest
//! state ([`OcuApp::live_state`]), never from the drawn state (which is the past while the
//! operator has scrubbed back or a replay is open). The past is shown as the past, in its own
//! area with the time it is at ([`past_label`]), with no buttons beside it.

use super::app::OcuApp;
use super::arms::{ArmRow, rows};
use super::format::{format_hms, wall_ns};
use super::notices::NoticeLevel;
use super::time_control::Shown;
use crate::model::clock::format_utc_time;
use crate::model::state::{ArmState, outcome_text};
use crate::model::update::{CommandKind, ComponentId, ControlState, ManagementState, Update};

impl OcuApp {
    /// The live arm's newest state, whatever is drawn: `None` when no live source exists
    /// (a replay on its own).
    pub fn live_state(&self) -> Option<ArmState> {
        self.sources.live_source().map(|l| {
            super::sources::read_session(&l.session)
                .focused()
                .latest
                .clone()
        })
    }

    /// The live arms, one row each from its newest state, with the manipulators found whose
    /// state is not kept (empty without a live source).
    pub fn live_arm_rows(&self) -> Vec<ArmRow> {
        let Some(l) = self.sources.live_source() else {
            return Vec::new();
        };
        let v = super::sources::read_session(&l.session);
        let arms = v.arms().map(|(id, s)| (id, &s.latest));
        rows(arms, Some(&v.focused().latest), v.focused_id())
    }

    /// The live arms other than the focused one that report EMERGENCY now (their link not
    /// lost): the banner says so whichever arm is focused.
    pub fn live_others_in_emergency(&self) -> Vec<ComponentId> {
        let Some(l) = self.sources.live_source() else {
            return Vec::new();
        };
        let v = super::sources::read_session(&l.session);
        v.arms()
            .filter(|(id, s)| {
                Some(*id) != v.focused_id()
                    && s.latest.status == ManagementState::Emergency
                    && !s.latest.freshness().is_lost()
            })
            .map(|(id, _)| id)
            .collect()
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

    /// Tells in a notice the outcome `u` of a command to the live arm where the operator
    /// would not see it otherwise: one sent while the past was drawn (the status bar shows
    /// the past then), and a refused control request (its reason says who holds control at
    /// what authority, and ours). `live` is the live arm's state with `u` applied.
    pub(crate) fn outcome_notice(&mut self, live: &ArmState, u: &Update) {
        let Update::CommandOutcome {
            command, outcome, ..
        } = u
        else {
            return;
        };
        let awaited = self.view.awaited.iter().position(|a| a.kind == *command);
        let refused_control = *command == CommandKind::RequestControl && !outcome.succeeded();
        if awaited.is_none() && !refused_control {
            return;
        }
        let arm = awaited
            .and_then(|i| self.view.awaited.remove(i).arm)
            .or(live.selected)
            .map_or("live arm".to_string(), |id| format!("live arm {id}"));
        // The network side's refusal names the holder and both authorities.
        let text = format!("{arm}: {} {}", command.name(), outcome_text(outcome, live));
        let level = if outcome.succeeded() {
            NoticeLevel::Info
        } else {
            NoticeLevel::Warning
        };
        self.notify(level, text);
    }
}

/// The live arm as dialogs and notices name it: `the live arm 126.1.10`.
pub fn live_arm_words(live: Option<&ArmState>) -> String {
    match live.and_then(|l| l.selected) {
        Some(id) => format!("the live arm {id}"),
        None => "the live arm".to_string(),
    }
}

/// Our own JAUS ID in words (`200.1.1`, or `?` before the network side has said).
pub fn ocu_id_words(live: &ArmState) -> String {
    live.ocu_id.map_or("?".to_string(), |id| id.to_string())
}

/// Why commands other than the emergency stop are refused now, when another client uses our
/// JAUS ID (the network side refuses them too); for disabled buttons and notices.
pub fn conflict_refusal(live: &ArmState) -> Option<String> {
    let conflict = live.id_conflict.as_ref()?;
    let seen = conflict
        .address
        .map_or(String::new(), |a| format!(" (seen at {a})"));
    Some(format!(
        "Refused: another OCU uses this OCU's JAUS ID {}{seen}. Only the emergency stop works \
         until it is resolved.",
        ocu_id_words(live)
    ))
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
