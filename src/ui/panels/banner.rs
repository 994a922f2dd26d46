//! The banner across the window under the top bar: our emergency stop not yet confirmed by
//! the live arm, the live arm's emergency (with the steps
//! out of it), the other arms of the vehicle in emergency, another OCU using our JAUS ID, or
//! the live arm's lost link, in words with what
//! to do. Drawn from the live arm's newest state, like the top bar's live area: none of these
//! is ever missed, whatever time is drawn.
//!
//! Its strip takes room from the tiles, so it holds only what stops or refuses something.
//! Datagrams with our JAUS ID from a stranger (nothing refused: anyone can forge an ID) are
//! said in the status bar's OCU item instead, where nothing moves (issue 46: the amber line
//! pushed a plot out of view for the 15 s it lasted).

use eframe::egui::{self, RichText, text::LayoutJob};

use crate::model::state::{ArmState, Freshness};
use crate::model::update::{ComponentId, ControlState, ManagementState, StopState};
use crate::ui::commands::UiCommand;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::{clock_text, live_arm_words, ocu_id_words};

/// What a banner line is about (how it looks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Our emergency stop of the live arm is sent and not yet confirmed (danger fill).
    StopPending,
    /// The live arm is in emergency (danger fill).
    Emergency,
    /// Another client uses our JAUS ID (danger fill).
    IdConflict,
    /// The live arm's link is lost (danger text).
    LinkLost,
}

/// One line of the banner: a headline and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// What it is about.
    pub kind: Kind,
    /// The headline, in capitals where it is an alarm.
    pub title: String,
    /// What it means and what to do (may be empty).
    pub detail: String,
    /// More for the tooltip (may be empty).
    pub hover: String,
}

impl Line {
    /// The whole line as one text, as drawn: the headline, then the detail under it.
    pub fn text(&self) -> String {
        if self.detail.is_empty() {
            self.title.clone()
        } else {
            format!("{}\n{}", self.title, self.detail)
        }
    }
}

/// The emergency's line: the steps out of it. Reset is not restart (IEC 60204-1, ISO
/// 13850): clearing leaves the arm stopped in STANDBY, and Resume is a second, deliberate
/// step that needs control.
fn emergency(live: &ArmState, shown: Shown) -> Line {
    let arm = live_arm_words(Some(live));
    let resume = format!(
        "{} ({})",
        UiCommand::Resume.text(),
        UiCommand::Resume.keys_text(shown)
    );
    let step2 = if matches!(live.control, ControlState::Held { .. }) {
        format!("2. {resume} when it is safe: the arm accepts motion again.")
    } else {
        format!(
            "2. {} ({}), then {resume} when it is safe: the arm accepts motion again.",
            UiCommand::RequestControl.text(),
            UiCommand::ToggleControl.keys_text(shown)
        )
    };
    Line {
        kind: Kind::Emergency,
        title: format!("EMERGENCY STOP — {arm} is stopped."),
        detail: format!(
            "1. {} ({}; asks for confirmation): the arm goes to STANDBY and stays stopped.   {step2}",
            UiCommand::ClearEmergency.text(),
            UiCommand::ClearEmergency.keys_text(shown)
        ),
        hover: String::new(),
    }
}

/// The pending stop's line: sent, not confirmed, for how long and how many tries (as of the
/// last try, said every 150 ms), and what holds meanwhile.
fn stop_pending(live: &ArmState) -> Option<Line> {
    let StopState::Pending {
        since,
        tries,
        last_try,
    } = live.stop
    else {
        return None;
    };
    let arm = live
        .selected
        .map_or_else(|| "the arm".to_string(), |id| id.to_string());
    let link = if live.freshness().is_lost() {
        " The link is lost: the stop goes out first when it returns."
    } else {
        ""
    };
    Some(Line {
        kind: Kind::StopPending,
        title: format!(
            "STOP SENT — not confirmed by {arm} for {:.1} s, {tries} {}",
            (last_try - since).max(0.0),
            if tries == 1 { "try" } else { "tries" }
        ),
        detail: format!(
            "SetEmergency is sent again every 150 ms until the arm reports EMERGENCY.{link} \
             Until then nothing moves it from here, nothing clears the stop and control is not \
             re-taken. If it must stop now, use its own emergency stop."
        ),
        hover: "The arm's state shown is the last it reported, before the stop reached it: \
                it is not known to be stopped until it says so."
            .to_string(),
    })
}

/// The duplicate JAUS ID's line, while another client is seen using ours.
fn id_conflict(live: &ArmState) -> Option<Line> {
    let conflict = live.id_conflict.as_ref()?;
    let seen = conflict
        .address
        .map_or(String::new(), |a| format!(" (seen at {a})"));
    Some(Line {
        kind: Kind::IdConflict,
        title: format!(
            "ANOTHER OCU USES THIS OCU'S JAUS ID {}{seen}",
            ocu_id_words(live)
        ),
        detail: "Commands are refused until it is resolved (the emergency stop still works): give \
                 one of them its own ID (start it with --jaus-id S.N.C, or give it another \
                 node in its identity file, ~/.config/jaus-ocu/identity.toml)."
            .to_string(),
        hover: format!(
            "The arm cannot tell two clients with one ID apart: a command from either would \
             look like ours. What showed it: {}",
            conflict.evidence
        ),
    })
}

/// The line for the other arms of the vehicle in emergency (after STOP ALL, or stopped by
/// someone else): the operator focused on one arm is never left unaware that another is
/// stopped.
fn others_stopped(others: &[ComponentId]) -> Option<Line> {
    if others.is_empty() {
        return None;
    }
    let ids: Vec<String> = others.iter().map(ToString::to_string).collect();
    let (which, verb) = if ids.len() == 1 {
        (format!("arm {}", ids[0]), "is")
    } else {
        (format!("arms {}", ids.join(", ")), "are")
    };
    Some(Line {
        kind: Kind::Emergency,
        title: format!("EMERGENCY STOP — also {which} {verb} stopped."),
        detail: "Focus it in the arm list to clear its emergency (each arm is cleared on its own, with its own confirmation)."
            .to_string(),
        hover: String::new(),
    })
}

/// What the banner says, most urgent first (empty when all is well): our stop of the live
/// arm not yet confirmed, the live (focused) arm's emergency, the other arms of the vehicle in emergency (`others_stopped`), a
/// duplicate ID, the live arm's lost link.
pub fn lines(
    live: &ArmState,
    others_stopped_now: &[ComponentId],
    start_ns: Option<u64>,
    shown: Shown,
) -> Vec<Line> {
    let mut out = Vec::new();
    out.extend(stop_pending(live));
    let lost = live.freshness();
    if live.status == ManagementState::Emergency && !lost.is_lost() {
        out.push(emergency(live, shown));
    }
    out.extend(others_stopped(others_stopped_now));
    out.extend(id_conflict(live));
    if let Freshness::Lost { last } = lost {
        let when = last.map_or(String::new(), |t| {
            format!(
                " Everything shown is the last known, at {}.",
                clock_text(start_ns, t)
            )
        });
        out.push(Line {
            kind: Kind::LinkLost,
            title: "LINK LOST — the live arm is silent; its state is unknown.".to_string(),
            detail: when.trim_start().to_string(),
            hover: String::new(),
        });
    }
    out
}

/// Draws the banner's lines, each across the window (the panel around them is the
/// caller's, without a fill of its own).
pub fn show(ui: &mut egui::Ui, lines: &[Line], theme: &Theme) {
    for line in lines {
        let filled = matches!(
            line.kind,
            Kind::StopPending | Kind::Emergency | Kind::IdConflict
        );
        let (fill, colour) = if filled {
            (theme.danger, theme.on_danger)
        } else {
            (egui::Color32::TRANSPARENT, theme.danger)
        };
        egui::Frame::new()
            .fill(fill)
            .inner_margin(8.0)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                let mut job = LayoutJob::default();
                let style = ui.style().clone();
                let mut append = |text: RichText| {
                    text.color(colour).append_to(
                        &mut job,
                        &style,
                        egui::FontSelection::Default,
                        egui::Align::Center,
                    );
                };
                append(RichText::new(&line.title).size(18.0).strong());
                if !line.detail.is_empty() {
                    append(RichText::new(format!("\n{}", line.detail)).size(15.0));
                }
                job.halign = egui::Align::Center;
                ui.vertical_centered(|ui| {
                    let r = ui.label(job);
                    if !line.hover.is_empty() {
                        r.on_hover_text(&line.hover);
                    }
                });
            });
    }
}
