//! The words the window uses about arms, times and files, shared by panels and the app: the
//! live arm named in dialogs, our JAUS ID, why a command is refused while another OCU uses it,
//! clock times, the past area's label, the newest outcome, an arm's and a file's name. A leaf.

use std::path::Path;

use super::format::{format_hms, wall_ns};
use super::time_control::Shown;
use crate::model::clock::format_utc_time;
use crate::model::command::CommandKind;
use crate::model::state::{ArmState, Freshness};
use crate::model::update::{ManagementState, Outcome};

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

/// The newest command outcome in `state`.
pub fn last_outcome(state: &ArmState) -> Option<(CommandKind, Outcome)> {
    state
        .outcomes
        .last()
        .map(|(_, kind, outcome)| (*kind, outcome.clone()))
}

/// The selected arm's name in `state` (identification, else its JAUS ID).
pub fn arm_name(state: &ArmState) -> Option<String> {
    state
        .selected
        .and_then(|id| state.components.get(&id))
        .and_then(|c| c.0.identification.clone())
        .or_else(|| state.selected.map(|id| id.to_string()))
}

/// The file name of `path` for titles and messages.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `LINK LOST — last known at 12:03:04 UTC` when the joint positions in `state` are not the
/// arm's current ones (stale, or the link lost); `None` while they are fresh.
pub fn last_known(state: &ArmState, start_ns: Option<u64>) -> Option<String> {
    let fresh = state.freshness();
    if matches!(fresh, Freshness::Waiting) || fresh.positions_fresh() {
        return None;
    }
    let what = if fresh.is_lost() {
        "LINK LOST"
    } else {
        "POSITIONS STALE"
    };
    let when = state
        .positions
        .as_ref()
        .map(|p| p.t)
        .or(fresh.last())
        .map_or_else(
            || "nothing received".to_string(),
            |t| format!("last known at {}", clock_text(start_ns, t)),
        );
    Some(format!("{what} — {when}"))
}

/// The management state in words.
pub fn status_word(state: ManagementState) -> &'static str {
    match state {
        ManagementState::Unknown => "state unknown",
        known => known.name(),
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
