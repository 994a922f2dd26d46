//! The timeline's scrub bar: the session's span, the part already loaded, the marks as
//! coloured ticks (hover for the label, click to jump), and the time cursor. Click or drag
//! anywhere else to seek.

use eframe::egui::{
    self, Pos2, Rect, Response, Sense, Shape, Stroke, StrokeKind, Ui, WidgetInfo, pos2, vec2,
};

use crate::model::session::Mark;
use crate::model::update::MarkKind;
use crate::ui::theme::Theme;

/// Pixels either side of a mark's tick that still hit it.
pub const MARK_HIT_PX: f32 = 4.0;

/// What the bar shows.
#[derive(Debug, Clone, Copy)]
pub struct ScrubBar<'a> {
    /// The times at the bar's two ends, s.
    pub range: (f64, f64),
    /// The part of the session loaded so far (all of it once loading ends).
    pub loaded: Option<(f64, f64)>,
    /// The drawn time; `None` while following live (drawn at the end of `loaded`).
    pub cursor: Option<f64>,
    /// Timeline marks, in time order.
    pub marks: &'a [Mark],
    /// Which kinds of mark are drawn and hit.
    pub filter: MarkFilter,
    /// Height, points.
    pub height: f32,
}

/// Which kinds of timeline mark are shown: a set of [`MarkKind`]s, stored as the bits of
/// the hidden ones so that a kind added later is shown in settings saved before it existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct MarkFilter(u16);

impl MarkFilter {
    /// Every kind shown.
    pub const ALL: MarkFilter = MarkFilter(0);

    fn bit(kind: MarkKind) -> u16 {
        1 << (MarkKind::ALL.iter().position(|k| *k == kind).unwrap_or(15))
    }

    /// Whether marks of `kind` are shown.
    pub fn shows(self, kind: MarkKind) -> bool {
        self.0 & Self::bit(kind) == 0
    }

    /// Shows or hides marks of `kind`.
    pub fn set(&mut self, kind: MarkKind, shown: bool) {
        if shown {
            self.0 &= !Self::bit(kind);
        } else {
            self.0 |= Self::bit(kind);
        }
    }
}

/// One toggle chip per kind of mark present (in the kind's colour, with its count, `counts`
/// in the order of [`MarkKind::ALL`]; a hidden kind keeps its chip so it can be shown
/// again): a click hides or shows that kind `where_` ("on the timeline", "here and on the
/// timeline"). The timeline and the event log draw the same chips on the same filter.
pub fn kind_chips(
    ui: &mut egui::Ui,
    counts: &[usize; MarkKind::ALL.len()],
    filter: &mut MarkFilter,
    theme: &Theme,
    small: bool,
    where_: &str,
) {
    for (kind, &count) in MarkKind::ALL.into_iter().zip(counts) {
        if count == 0 && filter.shows(kind) {
            continue;
        }
        let mut on = filter.shows(kind);
        let colour = if on { theme.mark(kind) } else { theme.muted };
        let mut text = egui::RichText::new(format!("{} {count}", kind.name())).color(colour);
        if small {
            text = text.small();
        }
        if ui
            .toggle_value(&mut on, text)
            .on_hover_text(format!("Show or hide the {} marks {where_}", kind.name()))
            .changed()
        {
            filter.set(kind, on);
        }
    }
}

/// What the operator did on the bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScrubAction {
    /// Seek to this time (click or drag on the bar).
    Seek(f64),
    /// Jump to this mark's time (click on its tick).
    Mark(f64),
}

impl ScrubBar<'_> {
    fn span(&self) -> (f64, f64) {
        let (a, b) = self.range;
        if b > a { (a, b) } else { (a, a + 1.0) }
    }

    /// The x of time `t` in `rect`.
    pub fn x_of(&self, rect: Rect, t: f64) -> f32 {
        let (a, b) = self.span();
        rect.left() + (((t - a) / (b - a)).clamp(0.0, 1.0) as f32) * rect.width()
    }

    /// The time at `x` in `rect`.
    pub fn t_of(&self, rect: Rect, x: f32) -> f64 {
        let (a, b) = self.span();
        let f = f64::from(((x - rect.left()) / rect.width().max(1.0)).clamp(0.0, 1.0));
        a + f * (b - a)
    }

    /// The marks whose ticks are within [`MARK_HIT_PX`] of `x`, nearest first.
    pub fn marks_near(&self, rect: Rect, x: f32) -> Vec<&Mark> {
        let lo = self.t_of(rect, x - MARK_HIT_PX);
        let hi = self.t_of(rect, x + MARK_HIT_PX);
        let i = self.marks.partition_point(|m| m.t < lo);
        let j = self.marks.partition_point(|m| m.t <= hi);
        let mut near: Vec<&Mark> = self.marks[i..j.max(i)]
            .iter()
            .filter(|m| self.filter.shows(m.kind))
            .collect();
        near.sort_by(|a, b| {
            (self.x_of(rect, a.t) - x)
                .abs()
                .total_cmp(&(self.x_of(rect, b.t) - x).abs())
        });
        near
    }
}

/// Draws the bar; returns its response and what the operator did.
pub fn scrub_bar(
    ui: &mut Ui,
    bar: &ScrubBar<'_>,
    theme: &Theme,
) -> (Response, Option<ScrubAction>) {
    let size = vec2(ui.available_width().max(50.0), bar.height);
    let (rect, mut response) = ui.allocate_exact_size(size, Sense::click_and_drag());
    let value = bar
        .cursor
        .or(bar.loaded.map(|l| l.1))
        .unwrap_or(bar.range.0);
    response.widget_info(|| WidgetInfo::slider(true, value, "timeline"));

    let mut action = None;
    if let Some(p) = response.interact_pointer_pos() {
        if response.clicked()
            && let Some(m) = bar.marks_near(rect, p.x).first()
        {
            action = Some(ScrubAction::Mark(m.t));
        } else if response.clicked() || response.dragged() {
            action = Some(ScrubAction::Seek(bar.t_of(rect, p.x)));
        }
    }
    if let Some(p) = response.hover_pos() {
        let near = bar.marks_near(rect, p.x);
        let text = if near.is_empty() {
            format!(
                "{} — click or drag to move the cursor",
                crate::ui::format::format_hms(bar.t_of(rect, p.x), true)
            )
        } else {
            let mut lines: Vec<String> = near
                .iter()
                .take(6)
                .map(|m| {
                    format!(
                        "{}  {}: {}",
                        crate::ui::format::format_hms(m.t, true),
                        m.kind.name(),
                        m.describe()
                    )
                })
                .collect();
            if near.len() > 6 {
                lines.push(format!("and {} more", near.len() - 6));
            }
            lines.push("click to jump there".into());
            lines.join("\n")
        };
        response = response.on_hover_text_at_pointer(text);
    }

    if ui.is_rect_visible(rect) {
        let painter = ui.painter_at(rect.expand(2.0));
        let track = rect.shrink2(vec2(0.0, rect.height() * 0.25));
        painter.rect_filled(track, 3.0, theme.track);
        if let Some((a, b)) = bar.loaded {
            let loaded = Rect::from_min_max(
                pos2(bar.x_of(rect, a), track.top()),
                pos2(
                    bar.x_of(rect, b).max(bar.x_of(rect, a) + 1.0),
                    track.bottom(),
                ),
            );
            painter.rect_filled(loaded, 3.0, theme.loaded);
        }
        // One tick per pixel column and kind is enough however many marks there are.
        let mut last: Option<(i32, MarkKind)> = None;
        for m in bar.marks.iter().filter(|m| bar.filter.shows(m.kind)) {
            let x = bar.x_of(rect, m.t);
            // An episode (stale, above the threshold) also shows how long it lasted.
            if let Some(end) = m.end {
                let x1 = bar.x_of(rect, end);
                if x1 > x + 1.0 {
                    painter.hline(
                        x..=x1,
                        rect.bottom() - 3.0,
                        Stroke::new(2.0, theme.mark(m.kind)),
                    );
                }
            }
            let key = (x.round() as i32, m.kind);
            if last == Some(key) {
                continue;
            }
            last = Some(key);
            painter.vline(
                x,
                rect.top() + 2.0..=rect.bottom() - 2.0,
                Stroke::new(2.0, theme.mark(m.kind)),
            );
        }
        let (cursor_t, colour) = match bar.cursor {
            Some(t) => (Some(t), theme.cursor),
            None => (bar.loaded.map(|l| l.1), theme.ok),
        };
        if let Some(t) = cursor_t {
            let x = bar.x_of(rect, t);
            painter.vline(x, rect.y_range(), Stroke::new(2.0, colour));
            painter.add(Shape::convex_polygon(
                vec![
                    Pos2::new(x - 5.0, rect.top()),
                    Pos2::new(x + 5.0, rect.top()),
                    Pos2::new(x, rect.top() + 6.0),
                ],
                colour,
                Stroke::NONE,
            ));
        }
        if response.hovered() {
            painter.rect_stroke(rect, 3.0, Stroke::new(1.0, theme.muted), StrokeKind::Inside);
        }
    }
    (response, action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(t: f64) -> Mark {
        Mark::new(t, MarkKind::Control, format!("at {t}"))
    }

    #[test]
    fn time_and_x_map_back_and_forth_and_clamp_outside_the_bar() {
        let marks = [];
        let bar = ScrubBar {
            range: (10.0, 110.0),
            loaded: None,
            cursor: None,
            marks: &marks,
            filter: MarkFilter::ALL,
            height: 20.0,
        };
        let rect = Rect::from_min_size(pos2(100.0, 0.0), vec2(200.0, 20.0));
        assert_eq!(bar.x_of(rect, 60.0), 200.0);
        assert!((bar.t_of(rect, 250.0) - 85.0).abs() < 1e-9);
        assert_eq!(bar.t_of(rect, 0.0), 10.0);
        assert_eq!(bar.x_of(rect, 1e9), 300.0);
    }

    #[test]
    fn only_marks_within_a_few_pixels_are_hit_nearest_first() {
        let marks = [mark(10.0), mark(50.0), mark(51.0), mark(90.0)];
        let bar = ScrubBar {
            range: (0.0, 100.0),
            loaded: None,
            cursor: None,
            marks: &marks,
            filter: MarkFilter::ALL,
            height: 20.0,
        };
        // 1 px per second.
        let rect = Rect::from_min_size(pos2(0.0, 0.0), vec2(100.0, 20.0));
        let near = bar.marks_near(rect, 51.4);
        assert_eq!(near.iter().map(|m| m.t).collect::<Vec<_>>(), [51.0, 50.0]);
        assert!(bar.marks_near(rect, 30.0).is_empty());
    }

    #[test]
    fn hidden_kinds_are_not_hit_and_the_filter_round_trips() {
        let mut marks = vec![mark(50.0), mark(51.0)];
        marks[1].kind = MarkKind::Stale;
        let mut filter = MarkFilter::ALL;
        filter.set(MarkKind::Stale, false);
        assert!(!filter.shows(MarkKind::Stale));
        assert!(filter.shows(MarkKind::Control) && filter.shows(MarkKind::Threshold));
        let bar = ScrubBar {
            range: (0.0, 100.0),
            loaded: None,
            cursor: None,
            marks: &marks,
            filter,
            height: 20.0,
        };
        let rect = Rect::from_min_size(pos2(0.0, 0.0), vec2(100.0, 20.0));
        let near = bar.marks_near(rect, 51.0);
        assert_eq!(near.iter().map(|m| m.t).collect::<Vec<_>>(), [50.0]);
        let json = serde_json::to_string(&filter).unwrap();
        assert_eq!(serde_json::from_str::<MarkFilter>(&json).unwrap(), filter);
        filter.set(MarkKind::Stale, true);
        assert_eq!(filter, MarkFilter::ALL);
    }
}
