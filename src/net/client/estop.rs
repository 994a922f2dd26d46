//! The emergency stop as an intent (issue 44): once pressed it lasts until the arm confirms it.
//!
//! - The press sends `SetEmergency` (with a `QueryStatus`, whose answer is the confirmation)
//!   at once, whatever the link's state: nothing waits for discovery, a live link or control
//!   (any client may stop an arm).
//! - It is sent again every [`STOP_REPEAT_S`] until a status *received after the press* says
//!   EMERGENCY: across a lost link, the arm's return and a re-take of control. It is never
//!   given up while the arm is followed; leaving the arm (the process ends, the arm is
//!   forgotten) ends it with a "not confirmed" outcome, never a refusal (any client may stop
//!   an arm: there is nothing to refuse).
//! - While it waits, motion is held back: the jog's emergency gate is closed, a preset move,
//!   Resume and `ClearEmergency` are refused in words, and control is not re-taken by itself
//!   (a keep-alive of control still held goes on).
//! - What happens is said: [`ArmFact::Stop`] at the press and at every try (the window's
//!   "STOP SENT — not confirmed by …" line), a timeline mark at the press and at the
//!   confirmation, and one [`Remark::CommandOutcome`] when the arm confirms.

use super::{Client, Output};
use crate::jaus::JausId;
use crate::jaus::core::{QueryStatus, SetEmergency};
use crate::model::command::CommandKind;
use crate::model::update::{ArmFact, ManagementState, MarkKind, Outcome, Remark, StopState};

/// Seconds between two `SetEmergency`s of a stop the arm has not confirmed: a lost datagram
/// costs 150 ms, and a silent arm about 13 small datagrams a second (the figures through a
/// lossy relay are in README, "Emergency stop").
pub const STOP_REPEAT_S: f64 = 0.15;

/// An emergency stop sent and not yet confirmed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StopIntent {
    /// When it was first pressed.
    pub(super) since: f64,
    /// `SetEmergency`s sent.
    pub(super) tries: u32,
    /// When the last went out.
    pub(super) last_try: f64,
    /// When the next goes out.
    pub(super) next: f64,
}

impl StopIntent {
    fn state(&self) -> StopState {
        StopState::Pending {
            since: self.since,
            tries: self.tries,
            last_try: self.last_try,
        }
    }
}

/// The pending stop in words, for a refusal: "an emergency stop of 126.1.10 is not
/// confirmed yet (sent 12 times over 1.8 s)".
pub(super) fn pending_words(id: JausId, stop: &StopIntent, now: f64) -> String {
    format!(
        "an emergency stop of {id} is not confirmed yet (sent {} times over {:.1} s); it is \
         repeated until the arm reports EMERGENCY",
        stop.tries,
        (now - stop.since).max(0.0)
    )
}

impl Client {
    /// The emergency stop pressed for the arm in hand: the intent taken (or, already pending,
    /// one more try at once) and `SetEmergency` sent now.
    pub(super) fn stop_pressed(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        let first = s.stop.is_none();
        s.stop.get_or_insert(StopIntent {
            since: now,
            tries: 0,
            last_try: now,
            next: now,
        });
        if first {
            let at = self
                .endpoint
                .peer(id)
                .map_or_else(String::new, |p| format!(" at {}", p.addr));
            out.remark(Remark::Mark {
                t: now,
                kind: MarkKind::Command,
                label: format!(
                    "E-STOP pressed: SetEmergency to {id}{at}, repeated until it confirms"
                ),
            });
        }
        self.stop_try(now, out);
    }

    /// One try of the pending stop of the arm in hand: `SetEmergency` and the `QueryStatus`
    /// whose answer confirms it, and the state said.
    fn stop_try(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let Some(intent) = &mut s.stop else { return };
        intent.tries = intent.tries.saturating_add(1);
        intent.last_try = now;
        intent.next = now + STOP_REPEAT_S;
        let state = intent.state();
        let id = s.id;
        out.fact(ArmFact::Stop { t: now, state });
        self.send(id, SetEmergency { emergency_code: 1 }, out);
        self.send(id, QueryStatus, out);
        self.stop_other(out);
    }

    /// The pending stop's repeats, due or not: called first among the arm's timers, so after
    /// a silence the stop goes out before anything else.
    pub(super) fn stop_timers(&mut self, now: f64, out: &mut Output) {
        let due = self
            .arm
            .as_ref()
            .and_then(|s| s.stop.as_ref())
            .is_some_and(|st| now >= st.next - 1e-9);
        if due {
            self.stop_try(now, out);
        }
    }

    /// The arm in hand was heard after a silence: a pending stop goes out now, first.
    pub(super) fn stop_on_return(&mut self, now: f64, out: &mut Output) {
        if self.arm.as_ref().is_some_and(|s| s.stop.is_some()) {
            self.stop_try(now, out);
        }
    }

    /// A status from the arm in hand, received now: EMERGENCY confirms a pending stop (every
    /// status taken here was received after the press that made the intent).
    pub(super) fn stop_status(&mut self, now: f64, state: ManagementState, out: &mut Output) {
        if state != ManagementState::Emergency {
            return;
        }
        let Some(s) = &mut self.arm else { return };
        let Some(intent) = s.stop.take() else { return };
        let id = s.id;
        out.fact(ArmFact::Stop {
            t: now,
            state: StopState::Idle,
        });
        out.remark(Remark::Mark {
            t: now,
            kind: MarkKind::Command,
            label: format!(
                "E-STOP confirmed by {id}: EMERGENCY reported {:.2} s after the press, {} tries",
                now - intent.since,
                intent.tries
            ),
        });
        Self::outcome(out, now, CommandKind::SetEmergency, Outcome::Confirmed);
    }

    /// The arm in hand is left (the process ends or the arm is forgotten) with its stop
    /// pending: said as not confirmed, with the state last reported and how old it is.
    pub(super) fn stop_abandoned(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let Some(intent) = s.stop.take() else { return };
        out.fact(ArmFact::Stop {
            t: now,
            state: StopState::Idle,
        });
        let state = self.state_words_at(now);
        Self::outcome(
            out,
            now,
            CommandKind::SetEmergency,
            Outcome::NoAnswer {
                tries: u8::try_from(intent.tries).unwrap_or(u8::MAX),
                state,
            },
        );
    }
}
