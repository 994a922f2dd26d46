//! Messages for the operator under the top bar (what finished, what failed and what to do),
//! until dismissed.

use eframe::egui;

use crate::ui::action::Action;
use crate::ui::theme::Theme;

/// How serious a notice is (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// Something finished as asked.
    Info,
    /// Done, but not completely (a truncated file).
    Warning,
    /// Failed.
    Error,
}

/// A message for the operator, shown under the top bar until dismissed.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// How serious.
    pub level: NoticeLevel,
    /// What happened and what to do.
    pub text: String,
}

impl Notice {
    /// A notice of `level` saying `text`.
    pub fn new(level: NoticeLevel, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
        }
    }
}

/// Notices kept at most (the oldest go first).
pub const MAX_NOTICES: usize = 6;

/// Widest a notice overlay is drawn, points.
pub const OVERLAY_WIDTH: f32 = 520.0;

/// Draws the notices over the window's top right corner, `top` points from the top (under
/// the bars), without taking room from any panel. Called every frame, with no notice too:
/// an area drawn for the first time spends that frame measuring itself, invisible, and a
/// notice must show in the frame it arrives.
pub fn overlay(
    ctx: &egui::Context,
    top: f32,
    notices: &[Notice],
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let screen = ctx.content_rect();
    // A fixed width and a fixed left edge: placed by its own size, a new area would sit
    // elsewhere for its first frame (it knows its size only after drawing), and a click
    // aimed at what was drawn there would miss.
    let margin = 8.0;
    let width = OVERLAY_WIDTH.min(screen.width() - 4.0 * margin).max(120.0);
    let left = (screen.right() - width - 3.0 * margin).max(screen.left());
    egui::Area::new(egui::Id::unique("notices"))
        .order(egui::Order::Foreground)
        .fixed_pos(egui::pos2(left, top + 4.0))
        // Empty, the pointer goes through to what is under it.
        .interactable(!notices.is_empty())
        .show(ctx, |ui| {
            if notices.is_empty() {
                return;
            }
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_width(width);
                show(ui, notices, theme, actions);
            });
        });
}

/// Draws the notices; "Dismiss" asks for [`Action::Dismiss`].
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
            ui.add(egui::Label::new(egui::RichText::new(&n.text).color(colour)).wrap());
        });
    }
}
