//! Messages for the operator (what finished, what failed and what to do), over the bottom of
//! the 3D view's tile: never over the banner, the top bar or the preset list. An Info (a
//! command's outcome, a file written) goes after [`INFO_SECONDS`], a warning after
//! [`WARNING_SECONDS`], an error stays until dismissed. Command outcomes stay in the event
//! log (`MarkKind::Command` marks of the session).

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

/// A message for the operator, shown until it expires ([`Notice::expires_after`]) or is
/// dismissed.
#[derive(Debug, Clone)]
pub struct Notice {
    /// How serious.
    pub level: NoticeLevel,
    /// What happened and what to do.
    pub text: String,
    /// When it was first drawn (egui's input time, seconds): it expires from then.
    pub since: Option<f64>,
}

impl PartialEq for Notice {
    fn eq(&self, other: &Self) -> bool {
        self.level == other.level && self.text == other.text
    }
}

/// Seconds an Info notice stays once drawn.
pub const INFO_SECONDS: f64 = 6.0;

/// Seconds a warning stays once drawn.
pub const WARNING_SECONDS: f64 = 20.0;

impl Notice {
    /// A notice of `level` saying `text`.
    pub fn new(level: NoticeLevel, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
            since: None,
        }
    }

    /// Seconds it stays once drawn; `None`: until dismissed (an error).
    pub fn expires_after(&self) -> Option<f64> {
        match self.level {
            NoticeLevel::Info => Some(INFO_SECONDS),
            NoticeLevel::Warning => Some(WARNING_SECONDS),
            NoticeLevel::Error => None,
        }
    }
}

/// Stamps the notices first drawn at `now` (egui's input time) and drops those expired;
/// returns in how many seconds the next one expires.
pub fn expire(notices: &mut Vec<Notice>, now: f64) -> Option<f64> {
    for n in notices.iter_mut() {
        n.since.get_or_insert(now);
    }
    notices.retain(|n| {
        n.expires_after()
            .zip(n.since)
            .is_none_or(|(after, since)| now - since < after)
    });
    notices
        .iter()
        .filter_map(|n| Some(n.since? + n.expires_after()? - now))
        .reduce(f64::min)
}

/// Notices kept at most (the oldest go first).
pub const MAX_NOTICES: usize = 6;

/// Widest a notice overlay is drawn, points.
pub const OVERLAY_WIDTH: f32 = 520.0;

/// The ID of the notices' area (tests find its rect in egui's memory).
pub fn area_id() -> egui::Id {
    egui::Id::unique("jaus-ocu notices")
}

/// Draws the notices over the bottom of `over` (the 3D view's tile), newest last, taking at
/// most the lower 45 % of it, without taking room from any panel. Called every frame, with
/// no notice too: an area drawn for the first time spends that frame measuring itself,
/// invisible, and a notice must show in the frame it arrives.
pub fn overlay(
    ctx: &egui::Context,
    over: egui::Rect,
    notices: &[Notice],
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let margin = 6.0;
    let width = (over.width() - 2.0 * margin).clamp(60.0, OVERLAY_WIDTH);
    // A fixed top: placed by its own size, the area would sit elsewhere for its first
    // frame (it knows its size only after drawing), and a click aimed at it would miss.
    let height = (over.height() * 0.45).clamp(24.0, 180.0);
    let top = over.bottom() - height;
    egui::Area::new(area_id())
        .order(egui::Order::Foreground)
        .fixed_pos(egui::pos2(over.right() - width - margin, top))
        // Empty, the pointer goes through to what is under it.
        .interactable(!notices.is_empty())
        .show(ctx, |ui| {
            ui.set_max_size(egui::vec2(width, height - margin));
            if notices.is_empty() {
                return;
            }
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_width(width - 16.0);
                egui::ScrollArea::vertical()
                    .max_height(height - margin - 16.0)
                    .stick_to_bottom(true)
                    .show(ui, |ui| show(ui, notices, theme, actions));
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
