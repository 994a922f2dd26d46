//! The confirmation dialog of a command to the live arm (going to a preset, clearing an
//! emergency, resuming): it names the arm it commands (`the live arm 126.1.10`), says what
//! will happen, and returns the operator's answer. Drawn from the live arm's state, like the
//! top bar's live area, whatever time is drawn.

use eframe::egui::{self, RichText};

use crate::model::state::ArmState;
use crate::ui::action::Confirm;
use crate::ui::commands::UiCommand;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::live_arm_words;

/// The dialog's title and question for `confirm` to the arm in `live`.
pub fn words(confirm: Confirm, live: Option<&ArmState>, shown: Shown) -> (&'static str, String) {
    let arm = live_arm_words(live);
    match confirm {
        Confirm::GoToPreset(id) => {
            let name = live
                .and_then(|l| l.presets.iter().find(|p| p.id == id))
                .map_or_else(|| id.to_string(), |p| p.name.clone());
            (
                "Go to preset",
                format!("Move {arm} to \"{name}\"? Make sure the path is clear."),
            )
        }
        Confirm::ClearEmergency => (
            "Clear emergency",
            format!(
                "Clear the emergency stop of {arm}?\nIt goes to STANDBY and stays stopped: \
                 nothing moves until you {} ({}).",
                UiCommand::Resume.text().trim_end_matches('…'),
                UiCommand::Resume.keys_text(shown)
            ),
        ),
        Confirm::Resume => (
            "Resume",
            format!(
                "Resume {arm}?\nIt goes from STANDBY to READY and accepts motion commands \
                 again. Make sure nobody is near the arm and its path is clear."
            ),
        ),
    }
}

/// Draws the dialog for `confirm` with its clearance `advice` (a preset move's: the target
/// and the path; a line saying the target touches another arm or an obstacle in the
/// warning colour); the operator's answer, once given.
///
/// From the keyboard: Enter confirms, Esc (the table's Cancel) cancels, Tab reaches the two
/// buttons. Enter counts from the dialog's second frame on only (the Enter that pressed a
/// focused "Go to…" opened it and must not also answer it), and only while the keyboard
/// focus is on the dialog or nowhere (never while it presses a button behind it).
pub fn show(
    ctx: &egui::Context,
    confirm: Confirm,
    live: Option<&ArmState>,
    (shown, advice): (Shown, &[String]),
    theme: &Theme,
) -> Option<bool> {
    let (title, question) = words(confirm, live, shown);
    let opened = opened_frame(ctx, title);
    let first_frame = opened == ctx.cumulative_frame_nr();
    if first_frame {
        // The focus leaves what opened the dialog: Enter now answers the dialog, not that
        // button again.
        ctx.memory_mut(|m| {
            if let Some(id) = m.focused() {
                m.surrender_focus(id);
            }
        });
    }
    let mut decision = None;
    let mut buttons = Vec::with_capacity(2);
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(question);
            for line in advice {
                let touches = line.starts_with("The target touches");
                let color = if touches { theme.danger } else { theme.muted };
                ui.label(RichText::new(line).color(color).small());
            }
            ui.horizontal(|ui| {
                let yes = ui
                    .button(RichText::new("Confirm").color(theme.warn))
                    .on_hover_text("Enter");
                let no = ui.button("Cancel").on_hover_text("Esc");
                buttons.extend([yes.id, no.id]);
                if yes.clicked() {
                    decision = Some(true);
                } else if no.clicked() {
                    decision = Some(false);
                }
            });
        });
    let focus_here = ctx
        .memory(egui::Memory::focused)
        .is_none_or(|id| buttons.contains(&id));
    if decision.is_none()
        && !first_frame
        && focus_here
        && ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Enter))
    {
        decision = Some(true);
    }
    decision
}

/// The frame the dialog titled `title` was first drawn in, of its showing now (kept in
/// egui's memory: a view detail): reset when it was not drawn the frame before.
fn opened_frame(ctx: &egui::Context, title: &str) -> u64 {
    let id = egui::Id::unique(("confirm_opened", title));
    let frame = ctx.cumulative_frame_nr();
    ctx.data_mut(|d| {
        let (first, last) = d.get_temp::<(u64, u64)>(id).unwrap_or((frame, frame));
        // Drawn last frame (or earlier this frame): the same showing.
        let first = if last + 1 >= frame { first } else { frame };
        d.insert_temp(id, (first, frame));
        first
    })
}
