//! The live arm versus the drawn state (issue 12, "the window never misleads the operator").
//!
//! The rule: a control that commands the live arm is always drawn from the live arm's newest
//! state ([`OcuApp::live_state`]), never from the drawn state (which is the past while the
//! operator has scrubbed back or a replay is open). The past is shown as the past, in its own
//! area with the time it is at ([`past_label`]), with no buttons beside it.

use super::OcuApp;
use crate::model::command::CommandKind;
use crate::model::state::{ArmState, outcome_text};
use crate::model::update::{ComponentId, ControlState, ManagementState, Remark};
use crate::ui::arms::{ArmRow, rows};
use crate::ui::notice::NoticeLevel;

impl OcuApp {
    /// The live arm's newest state, whatever is drawn: `None` when no live source exists
    /// (a replay on its own).
    pub fn live_state(&self) -> Option<ArmState> {
        self.sources.live_source().map(|l| {
            crate::ui::sources::read_vehicle(&l.vehicle)
                .focused()
                .latest
                .clone()
        })
    }

    /// `f` of the live arm's newest state, read in place (what [`OcuApp::live_state`] gives
    /// without the copy: for what runs every frame); `None` without a live source.
    pub fn with_live_state<R>(&self, f: impl FnOnce(&ArmState) -> R) -> Option<R> {
        self.sources.live_source().map(|l| {
            f(&crate::ui::sources::read_vehicle(&l.vehicle)
                .focused()
                .latest)
        })
    }

    /// The live arms, one row each from its newest state, with the manipulators found whose
    /// state is not kept (empty without a live source).
    pub fn live_arm_rows(&self) -> Vec<ArmRow> {
        let Some(l) = self.sources.live_source() else {
            return Vec::new();
        };
        let v = crate::ui::sources::read_vehicle(&l.vehicle);
        let arms = v.arms().map(|(id, s)| (id, &s.latest));
        rows(arms, Some(&v.focused().latest), v.focused_id())
    }

    /// The live arms other than the focused one that report EMERGENCY now (their link not
    /// lost): the banner says so whichever arm is focused.
    pub fn live_others_in_emergency(&self) -> Vec<ComponentId> {
        let Some(l) = self.sources.live_source() else {
            return Vec::new();
        };
        let v = crate::ui::sources::read_vehicle(&l.vehicle);
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
    pub(crate) fn outcome_notice(&mut self, live: &ArmState, u: &Remark) {
        let Remark::CommandOutcome {
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
