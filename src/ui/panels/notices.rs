//! Messages for the operator (what finished, what failed and what to do), in a strip of
//! their own along the bottom of the 3D view's tile (its room taken from the view while
//! there is a notice): never over the arm, the view's controls, the event log or any other
//! tile, at any size of window, and nothing outside the view moves when one arrives. The
//! same message again is one notice with a count (`×3`); each is whole, wrapped, with its
//! full text on hover. How long each stays and the list's rules are the notice's own
//! ([`crate::ui::notice`]). Command outcomes stay in the event log (`MarkKind::Command` marks
//! of the session).

use eframe::egui;

use crate::ui::action::Action;
use crate::ui::notice::{Notice, NoticeLevel};
use crate::ui::theme::Theme;

/// Tallest the strip grows, as a share of the 3D view's tile (more notices scroll, the
/// newest in view).
const MAX_SHARE: f32 = 0.4;

/// Draws the notices in a strip along the bottom of `ui` (the 3D view's tile, under its
/// toolbar), newest last, taking its room from the view drawn after it: never over the arm,
/// the view's controls or any other tile, and nothing outside the 3D view moves when one
/// arrives. Nothing without a notice. Returns the strip's rect.
pub fn strip(
    ui: &mut egui::Ui,
    notices: &[Notice],
    theme: &Theme,
    actions: &mut Vec<Action>,
) -> Option<egui::Rect> {
    if notices.is_empty() {
        return None;
    }
    let max = (ui.available_height() * MAX_SHARE).clamp(24.0, 140.0);
    let panel = egui::Panel::bottom("notices")
        .resizable(false)
        .show_separator_line(false)
        .frame(
            egui::Frame::popup(ui.style())
                .inner_margin(egui::Margin::symmetric(6, 3))
                .outer_margin(egui::Margin::ZERO),
        )
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .max_height(max)
                .stick_to_bottom(true)
                .auto_shrink([false, true])
                .show(ui, |ui| show(ui, notices, theme, actions));
        });
    Some(panel.response.rect)
}

/// Draws the notices; "Dismiss" asks for [`Action::Dismiss`]. Each is wrapped whole (never
/// cut mid-word), its full text on hover too.
pub fn show(ui: &mut egui::Ui, notices: &[Notice], theme: &Theme, actions: &mut Vec<Action>) {
    for (i, n) in notices.iter().enumerate() {
        ui.horizontal(|ui| {
            let colour = match n.level {
                NoticeLevel::Info => theme.ok,
                NoticeLevel::Warning => theme.warn,
                NoticeLevel::Error => theme.danger,
            };
            if ui
                .small_button("Dismiss")
                .on_hover_text("Hide this message")
                .clicked()
            {
                actions.push(Action::Dismiss(i));
            }
            let text = n.shown_text();
            ui.add(egui::Label::new(egui::RichText::new(&text).color(colour)).wrap())
                .on_hover_text(text);
        });
    }
}
