//! One joint's gauge: value against the specification's limits, speed against max speed,
//! effort against max effort, with a near-limit warning (the model's rule,
//! [`crate::model::limits`]: within 5 % of the range).

use eframe::egui::accesskit::Role;
use eframe::egui::{
    self, Align2, Color32, FontId, Painter, Rect, Response, Sense, Stroke, StrokeKind, Ui, Vec2,
    WidgetInfo, pos2, vec2,
};

pub use crate::model::limits::{LimitState, NEAR_LIMIT};
use crate::model::limits::{limit_state, warning_level};
use crate::ui::format::format_joint_value;
use crate::ui::theme::Theme;

/// What a gauge shows.
#[derive(Debug, Clone)]
pub struct GaugeData {
    /// Joint label (number and name).
    pub label: String,
    /// A prismatic joint (m); else revolute (rad).
    pub prismatic: bool,
    /// Position (rad or m).
    pub value: Option<f64>,
    /// Lower limit; `None` with `max` `None` means continuous.
    pub min: Option<f64>,
    /// Upper limit.
    pub max: Option<f64>,
    /// Speed (rad/s or m/s).
    pub speed: Option<f64>,
    /// Maximum speed.
    pub max_speed: Option<f64>,
    /// Effort, percent of maximum.
    pub effort_percent: Option<f64>,
    /// Show angles in degrees.
    pub degrees: bool,
    /// Show lengths in millimetres.
    pub millimetres: bool,
    /// The position is stale.
    pub stale: bool,
    /// The joint is still on (or next to) its limit where it was sent
    /// (`ArmState::limit_rests`), in words ("where preset \"Stowed\" puts it"): the limit is
    /// said with a neutral mark, not alarmed. `None`: a limit here is an alarm.
    pub rest: Option<String>,
}

impl GaugeData {
    /// The value against the limits (the model's near-limit rule).
    pub fn limit_state(&self) -> LimitState {
        limit_state(self.value, self.min, self.max)
    }

    /// How close to a limit, 0 (far) .. 1 (at the limit), as the 3D view tints it.
    pub fn warning_level(&self) -> f32 {
        warning_level(self.value, self.min, self.max)
    }

    /// A value in display units with its unit.
    pub fn format(&self, v: f64) -> String {
        format_joint_value(v, self.prismatic, self.degrees, self.millimetres)
    }

    /// A speed in display units with its unit: `12.0°/s`, `0.100 rad/s`, `250.0 mm/s`.
    pub fn format_speed(&self, v: f64) -> String {
        format!("{}/s", self.format(v))
    }

    /// The tooltip: the description, speed and effort with their units.
    pub fn tooltip(&self) -> String {
        format!(
            "{}\nspeed {} of max {}\neffort {}",
            self.describe(),
            self.speed.map_or("—".into(), |s| self.format_speed(s)),
            self.max_speed.map_or("—".into(), |s| self.format_speed(s)),
            self.effort_percent
                .map_or("—".into(), |e| format!("{e:.1} %")),
        )
    }

    /// The text a screen reader (and a test) gets.
    pub fn describe(&self) -> String {
        let value = self.value.map_or("no data".to_string(), |v| self.format(v));
        let limits = match (self.min, self.max) {
            (Some(a), Some(b)) => format!("limits {} to {}", self.format(a), self.format(b)),
            _ => "continuous".to_string(),
        };
        let warning = match (self.limit_state(), &self.rest) {
            (LimitState::NearMin | LimitState::NearMax | LimitState::AtLimit, Some(why)) => {
                format!(", at its limit {why}")
            }
            (LimitState::NearMin, _) => ", NEAR LOWER LIMIT".into(),
            (LimitState::NearMax, _) => ", NEAR UPPER LIMIT".into(),
            (LimitState::AtLimit, _) => ", AT LIMIT".into(),
            _ => String::new(),
        };
        format!(
            "{}: {value}, {limits}{warning}{}",
            self.label,
            if self.stale { ", stale" } else { "" }
        )
    }
}

fn bar(ui: &Ui, rect: Rect, fraction: f64, colour: Color32, theme: &Theme) {
    let p = ui.painter();
    p.rect_filled(rect, 2.0, theme.track);
    let w = rect.width() * fraction.clamp(0.0, 1.0) as f32;
    p.rect_filled(
        Rect::from_min_size(rect.min, vec2(w, rect.height())),
        2.0,
        colour,
    );
}

/// The position track: the range, the near-limit bands, the value's marker (in `colour`)
/// and the limits written under it.
fn paint_track(ui: &Ui, rect: Rect, d: &GaugeData, colour: Color32, theme: &Theme) {
    let p = ui.painter();
    let small = FontId::proportional(11.0);
    let track = Rect::from_min_size(
        pos2(rect.left(), rect.top() + 20.0),
        vec2(rect.width(), 10.0),
    );
    p.rect_filled(track, 3.0, theme.track);
    let (lo, hi) = match (d.min, d.max) {
        (Some(a), Some(b)) if b > a => (a, b),
        // Continuous: one turn either side of zero.
        _ => (-std::f64::consts::PI, std::f64::consts::PI),
    };
    let x_of =
        |v: f64| track.left() + track.width() * ((v - lo) / (hi - lo)).clamp(0.0, 1.0) as f32;
    if d.min.is_some() {
        let m = (hi - lo) * NEAR_LIMIT;
        for (a, b) in [(lo, lo + m), (hi - m, hi)] {
            let r = Rect::from_x_y_ranges(x_of(a)..=x_of(b), track.y_range());
            p.rect_filled(r, 0.0, theme.warn.gamma_multiply(0.35));
        }
    }
    if let Some(v) = d.value {
        let v = if d.min.is_none() {
            // Wrap a continuous joint into one turn for the marker.
            (v + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
        } else {
            v
        };
        let x = x_of(v);
        p.line_segment(
            [pos2(x, track.top() - 3.0), pos2(x, track.bottom() + 3.0)],
            Stroke::new(3.0, colour),
        );
    }
    p.rect_stroke(
        track,
        3.0,
        Stroke::new(1.0, theme.muted),
        StrokeKind::Inside,
    );
    if let (Some(a), Some(b)) = (d.min, d.max) {
        p.text(
            track.left_bottom() + vec2(0.0, 2.0),
            Align2::LEFT_TOP,
            d.format(a),
            small.clone(),
            theme.muted,
        );
        p.text(
            track.right_bottom() + vec2(0.0, 2.0),
            Align2::RIGHT_TOP,
            d.format(b),
            small.clone(),
            theme.muted,
        );
    }
}

/// A gauge's height, points.
pub const GAUGE_HEIGHT: f32 = 58.0;

/// A compact row's height ([`joint_row`]), points.
pub const ROW_HEIGHT: f32 = 30.0;

/// The colour of a value in `state` (near-limit, at limit, stale).
fn value_colour(d: &GaugeData, theme: &Theme) -> Color32 {
    match d.limit_state() {
        LimitState::AtLimit | LimitState::NearMin | LimitState::NearMax if d.rest.is_some() => {
            if d.stale { theme.muted } else { theme.accent }
        }
        LimitState::AtLimit => theme.danger,
        LimitState::NearMin | LimitState::NearMax => theme.warn,
        _ if d.stale => theme.muted,
        _ => theme.accent,
    }
}

/// Names a gauge or row for a screen reader (and a test): a meter (read-only: a slider
/// would say the operator can set it), labelled [`GaugeData::describe`] (`2 shoulder:
/// 12.0°, limits …`), its value as shown (`12.0°`) and in SI (rad or m) within its limits.
fn accessibility(response: &Response, d: &GaugeData) {
    let text = d.describe();
    response.widget_info(|| WidgetInfo::labeled(Role::Meter, true, &text));
    response.ctx.accesskit_node_builder(response.id, |node| {
        node.set_read_only();
        if let Some(v) = d.value {
            node.set_numeric_value(v);
            node.set_value(d.format(v));
        }
        if let (Some(lo), Some(hi)) = (d.min, d.max) {
            node.set_min_numeric_value(lo);
            node.set_max_numeric_value(hi);
        }
    });
}

/// Draws a joint in one compact row (where the full gauges do not all fit): the number
/// and name and the value with its unit (in the near-limit colour) over the limits and a
/// thin bar of the value within them. Speed and effort are in the tooltip.
pub fn joint_row(ui: &mut Ui, d: &GaugeData, theme: &Theme) -> Response {
    let size = Vec2::new(ui.available_width().max(120.0), ROW_HEIGHT);
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    accessibility(&response, d);
    if ui.is_rect_visible(rect) {
        let colour = value_colour(d, theme);
        let p = ui.painter();
        let small = FontId::proportional(10.5);
        name_and_value(p, rect, d, colour, ui.visuals().text_color(), "");
        // The limits leave the bar at least 24 points.
        let limits = limits_text(p, d, &small, rect.width() - 30.0);
        let y = rect.top() + 17.0;
        let limits_rect = p.text(
            pos2(rect.left(), y),
            Align2::LEFT_TOP,
            &limits,
            small,
            theme.muted,
        );
        let left = (limits_rect.right() + 6.0).min(rect.right() - 24.0);
        let track = Rect::from_min_max(pos2(left, y + 4.0), pos2(rect.right(), y + 8.0));
        p.rect_filled(track, 2.0, theme.track);
        let (lo, hi) = match (d.min, d.max) {
            (Some(a), Some(b)) if b > a => (a, b),
            _ => (-std::f64::consts::PI, std::f64::consts::PI),
        };
        if let Some(v) = d.value {
            let f = ((v - lo) / (hi - lo)).clamp(0.0, 1.0) as f32;
            let x = track.left() + f * track.width();
            p.rect_filled(
                Rect::from_center_size(pos2(x, track.center().y), vec2(4.0, 10.0)),
                1.0,
                colour,
            );
        }
        if d.stale {
            p.rect_filled(rect, 2.0, theme.stale_veil);
        }
    }
    response.on_hover_text(d.tooltip())
}

/// The first line of a gauge or a compact row: the value at the right in `colour`, `warn`
/// (if any) beside it in the same colour (never under a long name), and the joint's name at
/// the left, cut where it would meet them (the tooltip has it whole).
fn name_and_value(
    p: &Painter,
    rect: Rect,
    d: &GaugeData,
    colour: Color32,
    text_colour: Color32,
    warn: &str,
) {
    let font = FontId::proportional(13.0);
    let value = d.value.map_or("—".to_string(), |v| d.format(v));
    let value_rect = p.text(
        rect.right_top(),
        Align2::RIGHT_TOP,
        &value,
        font.clone(),
        colour,
    );
    let mut name_end = value_rect.left() - 6.0;
    if !warn.is_empty() {
        let warn_rect = p.text(
            pos2(name_end, rect.top() + 1.5),
            Align2::RIGHT_TOP,
            warn,
            FontId::proportional(11.0),
            colour,
        );
        name_end = warn_rect.left() - 6.0;
    }
    // A name longer than its room ends in "…" (never cut mid-letter; the tooltip and the
    // screen reader have it whole).
    let mut job = egui::text::LayoutJob::simple_singleline(d.label.clone(), font, text_colour);
    job.wrap = egui::text::TextWrapping::truncate_at_width((name_end - rect.left()).max(0.0));
    p.galley(rect.left_top(), p.layout_job(job), text_colour);
}

/// The limits of a compact row in the width `room`: "0.3000 m … 0.8000 m", else with the
/// unit once ("0.3000…0.8000 m"), else with it once and a digit fewer each.
fn limits_text(p: &Painter, d: &GaugeData, font: &FontId, room: f32) -> String {
    let (Some(a), Some(b)) = (d.min, d.max) else {
        return "continuous".to_string();
    };
    let (fa, fb) = (d.format(a), d.format(b));
    let full = format!("{fa} … {fb}");
    let width = |t: &str| {
        p.layout_no_wrap(t.to_string(), font.clone(), Color32::WHITE)
            .size()
            .x
    };
    if width(&full) <= room {
        return full;
    }
    let (na, unit) = split_unit(&fa);
    let (nb, _) = split_unit(&fb);
    let once = format!("{na}…{nb}{unit}");
    if width(&once) <= room {
        return once;
    }
    let shorter = |n: &str| match n.rfind('.') {
        Some(i) if n.len() - i > 2 => n[..n.len() - 1].to_string(),
        _ => n.to_string(),
    };
    format!("{}…{}{unit}", shorter(na), shorter(nb))
}

/// A formatted value's number and unit: ("0.3000", " m"), ("-171.9", "°").
fn split_unit(s: &str) -> (&str, &str) {
    if let Some(i) = s.find(' ') {
        s.split_at(i)
    } else if let Some(n) = s.strip_suffix('°') {
        (n, "°")
    } else {
        (s, "")
    }
}

/// Draws a gauge; returns its response (hover shows the details).
pub fn joint_gauge(ui: &mut Ui, d: &GaugeData, theme: &Theme) -> Response {
    // 1. Size.
    let size = Vec2::new(ui.available_width().max(180.0), GAUGE_HEIGHT);
    // 2. Allocate.
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    // 3. Interact: nothing to change; describe for accessibility.
    accessibility(&response, d);
    // 4. Paint, only if visible.
    if ui.is_rect_visible(rect) {
        let state = d.limit_state();
        let colour = value_colour(d, theme);
        let p = ui.painter();
        let warn_text = match state {
            LimitState::NearMin | LimitState::NearMax | LimitState::AtLimit if d.rest.is_some() => {
                "at limit"
            }
            LimitState::NearMin => "near lower limit",
            LimitState::NearMax => "near upper limit",
            LimitState::AtLimit => "AT LIMIT",
            LimitState::Unlimited if d.min.is_none() && !d.prismatic => "continuous",
            _ => "",
        };
        name_and_value(p, rect, d, colour, ui.visuals().text_color(), warn_text);
        paint_track(ui, rect, d, colour, theme);
        // Speed and effort.
        let half = (rect.width() - 8.0) / 2.0;
        let row = rect.top() + 48.0;
        let speed_rect = Rect::from_min_size(pos2(rect.left(), row), vec2(half, 6.0));
        let effort_rect = Rect::from_min_size(pos2(rect.left() + half + 8.0, row), vec2(half, 6.0));
        let speed_frac = match (d.speed, d.max_speed) {
            (Some(s), Some(m)) if m > 0.0 => s.abs() / m,
            _ => 0.0,
        };
        bar(ui, speed_rect, speed_frac, theme.series[1], theme);
        bar(
            ui,
            effort_rect,
            d.effort_percent.unwrap_or(0.0).abs() / 100.0,
            theme.series[3],
            theme,
        );
        if d.stale {
            // Last known, not now: veiled so it does not read as the arm's current value.
            ui.painter().rect_filled(rect, 2.0, theme.stale_veil);
        }
    }
    response.on_hover_text(d.tooltip())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(value: f64) -> GaugeData {
        GaugeData {
            label: "1 waist".into(),
            prismatic: false,
            value: Some(value),
            min: Some(-1.0),
            max: Some(1.0),
            speed: None,
            max_speed: None,
            effort_percent: None,
            degrees: true,
            millimetres: false,
            stale: false,
            rest: None,
        }
    }

    #[test]
    fn near_limit_is_within_five_percent_of_the_range() {
        assert_eq!(g(0.0).limit_state(), LimitState::Inside);
        assert_eq!(g(0.89).limit_state(), LimitState::Inside);
        assert_eq!(g(0.91).limit_state(), LimitState::NearMax);
        assert_eq!(g(-0.95).limit_state(), LimitState::NearMin);
        assert_eq!(g(1.0).limit_state(), LimitState::AtLimit);
        assert!(g(0.95).warning_level() > 0.4 && g(0.0).warning_level() == 0.0);
        assert!(g(0.95).describe().contains("NEAR UPPER LIMIT"));
        // Where a preset put it, a limit is said, not alarmed.
        let rest = GaugeData {
            rest: Some("where preset \"Stowed\" puts it".into()),
            ..g(1.0)
        };
        assert!(
            rest.describe()
                .ends_with("at its limit where preset \"Stowed\" puts it"),
            "{}",
            rest.describe()
        );
        let theme = Theme::new(true);
        assert_eq!(value_colour(&rest, &theme), theme.accent);
        assert_eq!(value_colour(&g(1.0), &theme), theme.danger);
    }

    #[test]
    fn a_value_splits_into_its_number_and_unit() {
        assert_eq!(split_unit("0.3000 m"), ("0.3000", " m"));
        assert_eq!(split_unit("-171.9°"), ("-171.9", "°"));
        assert_eq!(split_unit("250.0 mm"), ("250.0", " mm"));
        assert_eq!(split_unit("—"), ("—", ""));
    }

    #[test]
    fn units_follow_the_toggles() {
        let mut d = g(std::f64::consts::FRAC_PI_2);
        assert_eq!(d.format(std::f64::consts::FRAC_PI_2), "90.0°");
        d.degrees = false;
        assert_eq!(d.format(1.0), "1.000 rad");
        d.prismatic = true;
        d.millimetres = true;
        assert_eq!(d.format(0.25), "250.0 mm");
        d.min = None;
        d.max = None;
        assert_eq!(d.limit_state(), LimitState::Unlimited);
    }

    #[test]
    fn the_tooltip_gives_speeds_with_their_unit() {
        let mut d = g(0.0);
        d.speed = Some(std::f64::consts::FRAC_PI_2);
        d.max_speed = Some(std::f64::consts::PI);
        assert!(
            d.tooltip().contains("speed 90.0°/s of max 180.0°/s"),
            "{}",
            d.tooltip()
        );
        d.degrees = false;
        assert!(d.tooltip().contains("rad/s"));
        d.prismatic = true;
        d.millimetres = true;
        d.speed = Some(0.25);
        assert!(d.tooltip().contains("speed 250.0 mm/s"), "{}", d.tooltip());
    }
}
