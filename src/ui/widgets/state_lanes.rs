//! The timeline's state lanes: one labelled row per [`Lane`] under the scrub bar, each span a
//! coloured bar from its start to its end on the scrub bar's time axis (hover for its value
//! and times, click to move the cursor to its start). Spans narrower than a pixel column are
//! merged into the column they fall in (drawn in the colour of the most serious of them), so
//! a row costs at most a rectangle per pixel column however many spans a session has.
//!
//! The spans come from [`LanesCache`]: the session's discrete updates folded into
//! [`StateLanes`], only the new ones each frame.

use std::sync::{Arc, Mutex};

use eframe::egui::{self, Color32, Rect, Sense, Ui, WidgetInfo, pos2, vec2};

use crate::model::lanes::{Lane, Span, StateLanes, Tone};
use crate::model::session::Session;
use crate::model::state::ArmState;
use crate::ui::format::format_hms;
use crate::ui::theme::Theme;

/// The height of one lane's row, points.
pub const ROW_HEIGHT: f32 = 6.0;

/// The gap between two rows, points.
pub const ROW_GAP: f32 = 1.0;

/// The height of every row, points.
pub const LANES_HEIGHT: f32 = Lane::ALL.len() as f32 * (ROW_HEIGHT + ROW_GAP);

/// A session's state lanes kept from frame to frame: folding the session's discrete updates
/// costs only the updates new since the last frame.
#[derive(Debug, Default)]
pub struct LanesCache {
    /// The session folded (its address and the start of its span): another one starts over.
    key: Option<(usize, u64)>,
    /// Discrete updates folded so far.
    next: usize,
    state: ArmState,
    lanes: StateLanes,
}

impl LanesCache {
    /// Brings the lanes up to `session`'s newest discrete update and returns them.
    pub fn update(&mut self, session: &Session) -> &StateLanes {
        let key = (
            std::ptr::from_ref(session) as usize,
            session.span().map_or(0, |s| s.0.to_bits()),
        );
        if self.key != Some(key) || session.discrete_updates() < self.next {
            *self = Self {
                key: Some(key),
                ..Self::default()
            };
        }
        let lanes = &mut self.lanes;
        self.next = session.fold_discrete(self.next, &mut self.state, |t, s| lanes.observe(t, s));
        &self.lanes
    }

    /// The lanes as last brought up to date.
    pub fn lanes(&self) -> &StateLanes {
        &self.lanes
    }
}

/// The lanes of `session` from the cache kept in `ui`'s memory under `id`.
pub fn cached_lanes(ui: &Ui, id: egui::Id, session: &Session) -> Arc<Mutex<LanesCache>> {
    let cache = ui.data_mut(|d| {
        d.get_temp_mut_or_default::<Arc<Mutex<LanesCache>>>(id)
            .clone()
    });
    if let Ok(mut c) = cache.lock() {
        c.update(session);
    }
    cache
}

/// What the rows show.
#[derive(Debug, Clone, Copy)]
pub struct LanesInput<'a> {
    /// The spans.
    pub lanes: &'a StateLanes,
    /// The times at the rows' two ends (the scrub bar's), s.
    pub range: (f64, f64),
    /// Where an open span ends (the newest data, or now live), s.
    pub now: f64,
    /// The drawn time, drawn as a line across the rows.
    pub cursor: Option<f64>,
}

/// The x of time `t` in `rect` showing `range` (the scrub bar's mapping).
pub fn x_of(rect: Rect, range: (f64, f64), t: f64) -> f32 {
    let (a, b) = range;
    let b = if b > a { b } else { a + 1.0 };
    rect.left() + (((t - a) / (b - a)).clamp(0.0, 1.0) as f32) * rect.width()
}

/// The time at `x` in `rect` showing `range`.
pub fn t_of(rect: Rect, range: (f64, f64), x: f32) -> f64 {
    let (a, b) = range;
    let b = if b > a { b } else { a + 1.0 };
    a + f64::from(((x - rect.left()) / rect.width().max(1.0)).clamp(0.0, 1.0)) * (b - a)
}

/// The colour of a span of `tone`.
pub fn tone_colour(theme: &Theme, tone: Tone) -> Color32 {
    match tone {
        Tone::Ok => theme.ok,
        Tone::Warn => theme.warn,
        Tone::Danger => theme.danger,
        Tone::Ours => theme.accent,
        Tone::Neutral => theme.muted,
    }
}

/// How serious a tone is: a merged column takes the most serious of its spans' colours.
fn rank(tone: Tone) -> u8 {
    match tone {
        Tone::Danger => 4,
        Tone::Warn => 3,
        Tone::Ours => 2,
        Tone::Ok => 1,
        Tone::Neutral => 0,
    }
}

/// The rectangles `(x0, x1, tone)` of `spans` in a row `rect` showing `range` (`now` ends an
/// open span): spans outside the range left out, those that share a pixel column merged
/// into one (the most serious tone): never more than the row's width in pixels.
pub fn span_rects(
    spans: &[Span],
    rect: Rect,
    range: (f64, f64),
    now: f64,
    pixels_per_point: f32,
) -> Vec<(f32, f32, Tone)> {
    let px = 1.0 / pixels_per_point.max(0.1);
    let first = spans.partition_point(|s| s.end_or(now) < range.0);
    let mut out: Vec<(f32, f32, Tone)> = Vec::new();
    for s in &spans[first..] {
        if s.start > range.1 {
            break;
        }
        let x0 = x_of(rect, range, s.start);
        let x1 = x_of(rect, range, s.end_or(now));
        let tone = s.value.tone();
        match out.last_mut() {
            // Ends within the last rectangle's pixel column (or inside the column it was
            // widened to): one column of both.
            Some(last) if x1 - last.0 < px || x1 <= last.1 => {
                last.1 = last.1.max(x1);
                if rank(tone) > rank(last.2) {
                    last.2 = tone;
                }
            }
            Some(last) => {
                let x0 = x0.max(last.1);
                out.push((x0, x1.max(x0 + px), tone));
            }
            None => out.push((x0, x1.max(x0 + px), tone)),
        }
    }
    out
}

/// Draws the rows; returns the time to move the cursor to when a span was clicked (its start).
pub fn state_lanes(ui: &mut Ui, input: &LanesInput<'_>, theme: &Theme) -> Option<f64> {
    let mut seek = None;
    let width = ui.available_width().max(50.0);
    let ppp = ui.ctx().pixels_per_point();
    let font = egui::FontId::proportional(ROW_HEIGHT + 1.0);
    for lane in Lane::ALL {
        let (rect, response) =
            ui.allocate_exact_size(vec2(width, ROW_HEIGHT + ROW_GAP), Sense::click());
        let row = Rect::from_min_size(rect.min, vec2(width, ROW_HEIGHT));
        let name = format!("{} lane", lane.name());
        response.widget_info(|| WidgetInfo::labeled(egui::Role::Group, true, &name));
        let spans = input.lanes.spans(lane);
        let under = |x: f32| {
            let t = t_of(row, input.range, x);
            // A span narrower than a few points is still hit near it.
            let slack = t_of(row, input.range, x + 3.0) - t;
            spans
                .iter()
                .rev()
                .find(|s| s.start <= t + slack && t - slack <= s.end_or(input.now))
        };
        if response.clicked()
            && let Some(span) = response.interact_pointer_pos().and_then(|p| under(p.x))
        {
            seek = Some(span.start);
        }
        let response = match response.hover_pos().and_then(|p| under(p.x)) {
            Some(span) => {
                let end = span.end.map_or_else(
                    || "now".to_string(),
                    |e| format!("{} ({:.1} s)", format_hms(e, true), e - span.start),
                );
                response.on_hover_text_at_pointer(format!(
                    "{}: {} from {} to {}: click to move the cursor to its start",
                    lane.name(),
                    span.value.label(),
                    format_hms(span.start, true),
                    end
                ))
            }
            None => response.on_hover_text_at_pointer(format!("{}: nothing known", lane.name())),
        };
        if !ui.is_rect_visible(response.rect) {
            continue;
        }
        let painter = ui.painter_at(row);
        painter.rect_filled(row, 0.0, theme.track.gamma_multiply(0.5));
        for (x0, x1, tone) in span_rects(spans, row, input.range, input.now, ppp) {
            let r = Rect::from_min_max(pos2(x0, row.top()), pos2(x1, row.bottom()));
            painter.rect_filled(r, 0.0, tone_colour(theme, tone).gamma_multiply(0.75));
        }
        if let Some(t) = input.cursor {
            let x = x_of(row, input.range, t);
            painter.vline(x, row.y_range(), egui::Stroke::new(1.0, theme.cursor));
        }
        let galley = painter.layout_no_wrap(lane.name().to_string(), font.clone(), theme.muted);
        let label = Rect::from_min_size(row.min, galley.size() + vec2(4.0, 0.0));
        painter.rect_filled(label, 0.0, theme.track);
        painter.galley(
            pos2(row.left() + 2.0, row.center().y - galley.size().y / 2.0),
            galley,
            ui.visuals().text_color(),
        );
    }
    seek
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::lanes::Value;
    use crate::model::update::ManagementState;

    fn span(start: f64, end: f64, state: ManagementState) -> Span {
        Span {
            start,
            end: Some(end),
            value: Value::State(state),
        }
    }

    #[test]
    fn spans_in_one_pixel_column_merge_into_one_rectangle_of_the_most_serious_tone() {
        let rect = Rect::from_min_size(pos2(0.0, 0.0), vec2(100.0, 10.0));
        // 10 000 spans of 1 ms over 10 s in 100 px: a hundred per column.
        let spans: Vec<Span> = (0..10_000)
            .map(|i| {
                let s = if i == 5_050 {
                    ManagementState::Emergency
                } else {
                    ManagementState::Ready
                };
                span(f64::from(i) * 0.001, f64::from(i + 1) * 0.001, s)
            })
            .collect();
        let rects = span_rects(&spans, rect, (0.0, 10.0), 10.0, 1.0);
        assert!(rects.len() <= 100, "{} rectangles", rects.len());
        assert!(rects.iter().any(|r| r.2 == Tone::Danger));
        // Two wide spans stay two.
        let two = [
            span(0.0, 5.0, ManagementState::Ready),
            span(5.0, 10.0, ManagementState::Standby),
        ];
        let rects = span_rects(&two, rect, (0.0, 10.0), 10.0, 1.0);
        assert_eq!(rects.len(), 2, "{rects:?}");
        assert!((rects[0].1 - 50.0).abs() < 1e-3 && (rects[1].0 - 50.0).abs() < 1e-3);
    }
}
