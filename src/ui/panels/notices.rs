//! Messages for the operator (what finished, what failed and what to do), in a strip of
//! their own along the bottom of the 3D view's tile (its room taken from the view while
//! there is a notice): never over the arm, the view's controls, the event log or any other
//! tile, at any size of window, and nothing outside the view moves when one arrives. The same message again is one notice with a count (`×3`); each is whole,
//! wrapped, with its full text on hover. An Info (a command's outcome, a file written) goes
//! after [`INFO_SECONDS`], a warning after [`WARNING_SECONDS`], an error stays until
//! dismissed. Command outcomes stay in the event log (`MarkKind::Command` marks of the
//! session).

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
    /// How many times it was said (the same level and text, merged into this one).
    pub count: u32,
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
            count: 1,
        }
    }

    /// Its text as shown: `… (×3)` when it was said three times.
    pub fn shown_text(&self) -> String {
        if self.count > 1 {
            format!("{} (×{})", self.text, self.count)
        } else {
            self.text.clone()
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

/// Adds `notice` to `notices`, newest last: the same message (level and text) as one shown
/// already is merged into it, counted, made the newest and shown for its full time again.
pub fn push(notices: &mut Vec<Notice>, notice: Notice) {
    if let Some(i) = notices.iter().position(|n| *n == notice) {
        let mut same = notices.remove(i);
        same.count = same.count.saturating_add(notice.count);
        same.since = None;
        notices.push(same);
        return;
    }
    if notices.len() >= MAX_NOTICES {
        notices.remove(0);
    }
    notices.push(notice);
}

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
