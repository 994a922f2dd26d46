//! The plots' value axis: the Y steps and tick values chosen so that at least two ticks are
//! labelled whole at every lane height ([`fit_y`], [`tick_values`], [`labelled_ticks`]), the
//! tick labels' words ([`tick_label`], [`value_text`]) and the wheel's zoom factors
//! ([`wheel_zoom`]). Pure maths: no drawing.

use eframe::egui::{self, Vec2, vec2};

/// Space between a Y tick label and the gutter's edges, points.
pub const LABEL_MARGIN: f32 = 4.0;

/// The height of a Y tick label at the body font of egui's default style, points (what the
/// unit tests use; the panel measures the font it draws with, [`tick_label_height`]).
pub const DEFAULT_TICK_LABEL_HEIGHT: f64 = 15.0;

/// Labelled Y ticks are chosen at least this far apart when the plot is tall enough, points.
const TICK_COMFORTABLE_SPACING: f64 = 28.0;

/// The height of a Y tick label in `ui`'s style, points (the row height of its body font).
pub fn tick_label_height(ui: &egui::Ui) -> f64 {
    f64::from(ui.text_style_height(&egui::TextStyle::Body))
}

/// Zoom factors (time, value) for one frame's wheel input; above 1 zooms in. The wheel
/// zooms time; Shift + wheel (which egui hands over as a horizontal scroll) and Ctrl +
/// wheel (which egui hands over as a pinch zoom) zoom the value axis.
pub fn wheel_zoom(scroll: Vec2, pinch: f32, shift: bool) -> Vec2 {
    if pinch.is_finite() && pinch > 0.0 && (pinch - 1.0).abs() > f32::EPSILON {
        return vec2(1.0, pinch);
    }
    let wheel = if scroll.y == 0.0 { scroll.x } else { scroll.y };
    let factor = (wheel * 0.002).exp();
    if shift {
        vec2(1.0, factor)
    } else {
        vec2(factor, 1.0)
    }
}

/// The 1-2-5 step at or above `x` (> 0).
fn nice_at_least(x: f64) -> f64 {
    let power = 10f64.powf(x.log10().floor());
    match x / power {
        m if m <= 1.0 => power,
        m if m <= 2.0 => 2.0 * power,
        m if m <= 5.0 => 5.0 * power,
        _ => 10.0 * power,
    }
}

/// The 1-2-5 step above the 1-2-5 step `s`.
fn nice_above(s: f64) -> f64 {
    nice_at_least(s * 1.01)
}

/// How many multiples of `step` lie in `[lo, hi]`.
fn multiples_in(lo: f64, hi: f64, step: f64) -> usize {
    if hi < lo || step <= 0.0 || !step.is_finite() {
        return 0;
    }
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if last >= first {
        (last - first) as usize + 1
    } else {
        0
    }
}

/// Y grid steps (fine, labelled, coarse) for the visible value range `bounds` drawn at
/// `px_per_value` points per unit with labels `label` points tall: labelled ticks
/// `TICK_COMFORTABLE_SPACING` apart when the plot is tall enough, closer (never closer than
/// a label) until at least two of them fall where their labels show whole.
pub fn y_steps(bounds: (f64, f64), px_per_value: f64, label: f64) -> [f64; 3] {
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    let range = hi - lo;
    if !(range > 0.0 && range.is_finite() && px_per_value > 0.0 && px_per_value.is_finite()) {
        return [0.2, 1.0, 5.0];
    }
    let margin = 0.5 * label / px_per_value;
    let mut step = nice_at_least(TICK_COMFORTABLE_SPACING.max(label) / px_per_value);
    for _ in 0..64 {
        if multiples_in(lo + margin, hi - margin, step) >= 2 {
            break;
        }
        let down = step_down(step);
        if down * px_per_value < label || down < range * 1e-6 {
            break;
        }
        step = down;
    }
    [step / 5.0, step, step * 5.0]
}

/// The 1-2-5 step below `s`.
fn step_down(s: f64) -> f64 {
    let power = 10f64.powf(s.log10().floor());
    let m = (s / power).round();
    if m >= 5.0 {
        2.0 * power
    } else if m >= 2.0 {
        power
    } else {
        0.5 * power
    }
}

/// The labelled Y ticks over `bounds` in a data area `height` points tall with labels
/// `label` points tall, and their step: the multiples of [`y_steps`]' labelled step whose
/// label stands whole inside the data area, when labels are at least a label apart. These
/// are the labels the panel draws.
pub fn tick_values(bounds: (f64, f64), height: f64, label: f64) -> (Vec<f64>, f64) {
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    let range = hi - lo;
    if !(range > 0.0 && range.is_finite() && height > 0.0) {
        return (Vec::new(), 1.0);
    }
    let px = height / range;
    let [_, step, _] = y_steps((lo, hi), px, label);
    if step * px < label {
        return (Vec::new(), step);
    }
    let margin = 0.5 * label / px;
    let first = ((lo + margin) / step).ceil() as i64;
    let last = ((hi - margin) / step).floor() as i64;
    let values = (first..=last).take(64).map(|k| k as f64 * step).collect();
    (values, step)
}

/// How many labelled Y ticks the panel draws over `bounds` in a data area `height` points
/// tall with labels `label` points tall ([`tick_values`]).
pub fn labelled_ticks(bounds: (f64, f64), height: f64, label: f64) -> usize {
    tick_values(bounds, height, label).0.len()
}

/// The Y range that fits values `[lo, hi]` (and the `threshold` line when given, and its
/// negative when values go below zero) in a data area `height` points tall with labels
/// `label` points tall, padded, with at least two labelled ticks ([`labelled_ticks`]): when
/// the padded range leaves too little room, a wider range around the data in which two
/// 1-2-5 multiples stand a label apart with half a label (and a point) inside each edge
/// (`two_ticks`). `None` when there is nothing to fit.
pub fn fit_y(
    lo: f64,
    hi: f64,
    threshold: Option<f64>,
    height: f64,
    label: f64,
) -> Option<(f64, f64)> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return None;
    }
    let (mut lo, mut hi) = (lo, hi);
    if let Some(th) = threshold.filter(|t| t.is_finite()) {
        hi = hi.max(th);
        if lo < 0.0 {
            lo = lo.min(-th);
        }
    }
    let pad = ((hi - lo) * 0.1).max(0.1);
    let fitted = (lo - pad, hi + pad);
    if labelled_ticks(fitted, height, label) >= 2 {
        return Some(fitted);
    }
    Some(two_ticks(lo - 0.25 * pad, hi + 0.25 * pad, height, label).unwrap_or(fitted))
}

/// The narrowest range (of a few tried per step) holding `[lo, hi]` in which two
/// multiples of a 1-2-5 step are labelled in a data area `height` points tall with labels
/// `label` points tall: the step's two labels at least a label apart (the range at most
/// `step · height / label` wide), each with half a label and a point between it and the
/// edge. Trying wider steps until one fits; `None` when the area is too short for two labels.
fn two_ticks(lo: f64, hi: f64, height: f64, label: f64) -> Option<(f64, f64)> {
    let room = label + 2.0;
    if height.is_nan() || height <= label + room || hi < lo {
        return None;
    }
    let span = (hi - lo).max(1e-9);
    let mut step = nice_at_least(span * label / height);
    for _ in 0..48 {
        // Two labels a label apart at most this wide; the labels' room at least this wide.
        let widest = step * height / (label + 0.25);
        let narrowest = (step * height / (height - room)).max(span);
        for k in 0..=4 {
            let d = narrowest + (widest - narrowest) * f64::from(k) / 4.0;
            if d > widest {
                break;
            }
            let r = 0.5 * room * d / height;
            let first = ((hi - d + r) / step).floor() as i64 - 1;
            let last = ((lo - r) / step).ceil() as i64 + 1;
            for j in first..=last.min(first + 64) {
                let tick = j as f64 * step;
                let from = (hi - d).max(tick + step - d + r);
                let to = lo.min(tick - r);
                if from <= to {
                    let y0 = (0.5 * (lo + hi - d)).clamp(from, to);
                    let bounds = (y0, y0 + d);
                    if labelled_ticks(bounds, height, label) >= 2 {
                        return Some(bounds);
                    }
                }
            }
        }
        step = nice_above(step);
    }
    None
}

/// A Y tick's label: the value with as many decimals as the tick spacing needs, and the unit.
pub fn tick_label(value: f64, step: f64, unit: &str) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        1
    };
    // -0.0 reads as a different value than 0.
    let value = if value.abs() < step.abs() * 1e-6 {
        0.0
    } else {
        value
    };
    let unit = if unit.is_empty() || unit == "°" {
        unit.to_string()
    } else {
        format!(" {unit}")
    };
    format!("{value:.decimals$}{unit}")
}

/// A value with its unit as the legends write it (decimals by unit, as the gauges do).
pub fn value_text(v: f64, unit: &str) -> String {
    let decimals = match unit {
        "rad" | "rad/s" => 3,
        "m" | "m/s" => 4,
        "°" | "°/s" | "mm" | "mm/s" | "%" => 1,
        _ => 2,
    };
    if unit == "°" {
        format!("{v:.decimals$}°")
    } else {
        format!("{v:.decimals$} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_go_up_and_down_the_1_2_5_ladder() {
        assert!((nice_at_least(0.3) - 0.5).abs() < 1e-12);
        assert!((nice_at_least(2.0) - 2.0).abs() < 1e-12);
        assert!((nice_at_least(7.0) - 10.0).abs() < 1e-12);
        assert!((step_down(10.0) - 5.0).abs() < 1e-12);
        assert!((step_down(5.0) - 2.0).abs() < 1e-12);
        assert!((step_down(2.0) - 1.0).abs() < 1e-12);
        assert!((nice_above(2.0) - 5.0).abs() < 1e-12);
        assert_eq!(multiples_in(0.5, 3.5, 1.0), 3);
        assert_eq!(multiples_in(0.1, 0.9, 1.0), 0);
    }
}
