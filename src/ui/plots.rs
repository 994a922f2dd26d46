//! Force/torque plots: Fx Fy Fz (N) with |F|, and Tx Ty Tz (N·m), on linked time axes. Points
//! are decimated before `egui_plot` sees them (min/max envelope per pixel column over the
//! time-indexed [`History`] of the session), so hours of 1 kHz data stay
//! fluid. Following, the window ends at the drawn time (now live, the cursor in replay); drag
//! or zoom pauses, `L` returns. A vertical line marks the cursor when there is one.
//!
//! Each plot has its legend above it (a chip per channel with its value at the drawn time;
//! click to hide the channel), never over the data; the Y axis has ticks with units; the
//! wheel zooms the time axis around the pointer (Shift or Ctrl + wheel: the value axis);
//! the force threshold is drawn in a colour no channel uses, and the session marks where
//! |F| crosses it on the timeline.

use eframe::egui::{self, RichText, Vec2, vec2};
use egui_plot::{GridMark, HLine, Line, LineStyle, Plot, PlotBounds, VLine, uniform_grid_spacer};

use super::app::{FT_CHANNELS, Settings};
use super::commands::UiCommand;
use super::theme::Theme;
use super::time_control::Shown;
use crate::model::history::History;
use crate::model::session::Session;

/// The plots' own state (transient): following the drawn time, the range they show, and
/// whether points are decimated.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotsView {
    /// The plots follow the drawn time (now live, the cursor otherwise); dragging or zooming
    /// pauses them, `L` returns.
    pub follow: bool,
    /// The time range the plots showed last frame (for the CSV export), when shown.
    pub range: Option<(f64, f64)>,
    /// Decimate plot data before `egui_plot` sees it (off only to measure what it saves).
    pub decimate: bool,
    /// Channels hidden by the operator (indices into [`FT_CHANNELS`]).
    pub hidden: [bool; 7],
}

impl Default for PlotsView {
    fn default() -> Self {
        Self {
            follow: true,
            range: None,
            decimate: true,
            hidden: [false; 7],
        }
    }
}

/// The least height of the plots panel, points: the header, two legends and two plots of
/// [`MIN_PLOT_HEIGHT`].
pub const MIN_PANEL_HEIGHT: f32 = 2.0 * MIN_PLOT_HEIGHT + 90.0;

/// The least height of one plot, points: below it the Y axis cannot show three ticks.
pub const MIN_PLOT_HEIGHT: f32 = 90.0;

/// The least height a plot is drawn at when a small window gives the panel less than
/// [`MIN_PANEL_HEIGHT`] (800×600: the 3D arm keeps its room; two ticks still show).
const SMALLEST_PLOT_HEIGHT: f32 = 48.0;

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

/// Y grid steps (fine, labelled, coarse) for a visible value range: a 1-2-5 step giving about
/// three labelled ticks however small the range (powers of ten alone left a plot of small
/// torques with the single label "0").
pub fn y_steps(range: f64) -> [f64; 3] {
    let raw = (range.abs() / 3.0).max(1e-9);
    let power = 10f64.powf(raw.log10().floor());
    let step = match raw / power {
        m if m <= 1.5 => power,
        m if m <= 3.5 => 2.0 * power,
        m if m <= 7.5 => 5.0 * power,
        _ => 10.0 * power,
    };
    [step / 5.0, step, step * 5.0]
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
    format!("{value:.decimals$} {unit}")
}

/// What the plots show.
pub struct PlotsInput<'a> {
    /// The session drawn.
    pub session: &'a Session,
    /// What the window shows (the drawn time and the cursor).
    pub shown: Shown,
    /// The drawn time, s.
    pub time: f64,
}

/// Plot lines for `channels` over `[t0, t1]` decimated to `columns` pixel columns.
pub fn decimated(
    history: &History,
    channels: &[usize],
    t0: f64,
    t1: f64,
    columns: usize,
) -> Vec<(usize, Vec<[f64; 2]>)> {
    let mut bounds = Vec::new();
    channels
        .iter()
        .copied()
        .zip(history.plot_points_multi(channels, t0, t1, columns, &mut bounds))
        .collect()
}

/// The time window to draw: the last `window` seconds when following live.
pub fn live_window(now: f64, window: f64) -> (f64, f64) {
    (now - window, now)
}

/// One plot of `channels` (in `unit`) over the session's force/torque history.
struct OnePlot<'a> {
    id: &'a str,
    channels: &'a [usize],
    unit: &'a str,
    height: f32,
}

fn one_plot(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    settings: &Settings,
    theme: &Theme,
    plot: &OnePlot<'_>,
) {
    let OnePlot {
        id,
        channels,
        unit,
        height,
    } = *plot;
    let group = egui::Id::NULL.with("ft_time_axis");
    let now = input.time;
    let follow = view.follow;
    let window = settings.plot_window_s;
    let columns = ui.available_width().max(100.0) as usize;
    let (t0, t1) = live_window(now, window);
    // What range is visible decides what we decimate; when paused, the plot's own bounds.
    let bounds_id = egui::Id::NULL.with(id).with("bounds");
    let (q0, q1) = if follow {
        (t0, t1)
    } else {
        ui.ctx()
            .data(|d| d.get_temp::<(f64, f64)>(bounds_id))
            .unwrap_or((t0, t1))
    };
    let history = &input.session.ft;
    let lines = if view.decimate {
        decimated(history, channels, q0, q1, columns)
    } else {
        // Every sample in range, as a naive plot would hand them over.
        decimated(history, channels, q0, q1, usize::MAX / 4)
    };
    let threshold = settings.force_threshold;
    let hover_channel = channels[0];
    let cursor = input.shown.cursor();
    legend_row(ui, input, view, theme, plot);
    let hidden = view.hidden;
    let lines: Vec<_> = lines.into_iter().filter(|(c, _)| !hidden[*c]).collect();
    let tick_unit = unit.to_string();
    let response = Plot::new(id)
        .height(height)
        .link_axis(group, [true, false])
        .y_axis_formatter(move |mark: GridMark, _range| {
            tick_label(mark.value, mark.step_size, &tick_unit)
        })
        .y_axis_min_width(64.0)
        .y_grid_spacer(uniform_grid_spacer(|input| {
            y_steps(input.bounds.1 - input.bounds.0)
        }))
        .allow_drag(true)
        // The wheel is handled below: time by default, values with Shift or Ctrl.
        .allow_zoom(false)
        .allow_scroll(false)
        .show(ui, |plot_ui| {
            if follow {
                let b = plot_ui.plot_bounds();
                let (mut y0, mut y1) = (b.min()[1], b.max()[1]);
                // Fit y to what is visible.
                let (lo, hi) = lines
                    .iter()
                    .flat_map(|(_, pts)| pts.iter().map(|p| p[1]))
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                        (a.min(y), b.max(y))
                    });
                if lo.is_finite() {
                    let pad = ((hi - lo) * 0.1).max(0.1);
                    y0 = lo - pad;
                    y1 = hi + pad;
                }
                plot_ui.set_plot_bounds(PlotBounds::from_min_max([t0, y0], [t1, y1]));
            }
            let zoomed = wheel(plot_ui);
            for (c, pts) in lines {
                plot_ui.line(
                    Line::new(FT_CHANNELS[c], pts)
                        .color(theme.series[c])
                        .width(1.5),
                );
            }
            // No name: the cursor stays out of the legend.
            if let Some(t) = cursor {
                plot_ui.vline(VLine::new("", t).color(theme.cursor).width(1.0));
            }
            if unit == "N"
                && let Some(th) = threshold
            {
                for y in [th, -th] {
                    plot_ui.hline(
                        HLine::new("", y)
                            .color(theme.threshold)
                            .width(1.5)
                            .style(LineStyle::dashed_loose()),
                    );
                }
            }
            let b = plot_ui.plot_bounds();
            let hover = plot_ui
                .pointer_coordinate()
                .and_then(|p| history.nearest(hover_channel, p.x));
            (
                b.min()[0],
                b.max()[0],
                plot_ui.response().dragged() || zoomed,
                hover,
            )
        });
    let (b0, b1, interacted, hover) = response.inner;
    ui.ctx().data_mut(|d| d.insert_temp(bounds_id, (b0, b1)));
    if id == "force" {
        view.range = Some((b0, b1));
    }
    if interacted && view.follow {
        view.follow = false;
    }
    if let Some((t, v)) = hover {
        response.response.on_hover_text(format!(
            "{} at {t:.3} s: {v:.3} {unit}",
            FT_CHANNELS[hover_channel]
        ));
    }
}

/// Zooms with the wheel around the pointer (time; Shift or Ctrl: values); whether it did.
fn wheel(plot_ui: &mut egui_plot::PlotUi<'_>) -> bool {
    if !plot_ui.response().hovered() {
        return false;
    }
    let (scroll, pinch, shift) = plot_ui
        .ctx()
        .input(|i| (i.smooth_scroll_delta, i.zoom_delta(), i.modifiers.shift));
    let zoom = wheel_zoom(scroll, pinch, shift);
    if zoom == Vec2::splat(1.0) {
        return false;
    }
    let Some(at) = plot_ui.pointer_coordinate() else {
        return false;
    };
    plot_ui.zoom_bounds(zoom, at);
    true
}

/// The plot's legend, above it: one chip per channel in its colour with its value at the
/// drawn time (click to hide or show the channel), and the threshold when drawn.
fn legend_row(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    theme: &Theme,
    plot: &OnePlot<'_>,
) {
    ui.horizontal(|ui| {
        for &c in plot.channels {
            let value = input
                .session
                .ft
                .value_at(c, input.time)
                .map(|(_, v)| v)
                .filter(|v| v.is_finite());
            let text = match value {
                Some(v) => format!("{} {v:.2} {}", FT_CHANNELS[c], plot.unit),
                None => format!("{} — {}", FT_CHANNELS[c], plot.unit),
            };
            let colour = if view.hidden[c] {
                theme.muted
            } else {
                theme.series[c]
            };
            let mut shown = !view.hidden[c];
            if ui
                .toggle_value(&mut shown, RichText::new(text).monospace().color(colour))
                .on_hover_text(format!(
                    "{} at the drawn time; click to hide or show it",
                    FT_CHANNELS[c]
                ))
                .changed()
            {
                view.hidden[c] = !shown;
            }
        }
        if plot.unit == "N"
            && let Some(th) = input.session.force_threshold()
        {
            ui.label(RichText::new(format!("threshold ±{th} N")).color(theme.threshold))
                .on_hover_text("Crossings are marked on the timeline (threshold marks)");
        }
    });
}

/// Draws the panel. The window and threshold controls change `settings`.
pub fn show(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    settings: &mut Settings,
    theme: &Theme,
) {
    ui.horizontal(|ui| {
        ui.heading("End-effector force / torque");
        let replay = input.shown.is_replay();
        if view.follow {
            let (text, hover) = if replay {
                (
                    "following the cursor",
                    "The plots end at the timeline's cursor",
                )
            } else if input.shown.is_past() {
                (
                    "following the cursor",
                    "The plots end at the timeline's cursor (scrubbed back)",
                )
            } else {
                ("live", "The plots end at now")
            };
            ui.label(RichText::new(text).color(theme.ok))
                .on_hover_text(hover);
        } else if ui
            .button(if replay {
                "Follow cursor"
            } else {
                "Back to live"
            })
            .on_hover_text(format!(
                "Follow the drawn time again ({})",
                UiCommand::FollowLive.keys_text(input.shown)
            ))
            .clicked()
        {
            view.follow = true;
        }
        ui.add(
            egui::Slider::new(&mut settings.plot_window_s, 1.0..=3600.0)
                .logarithmic(true)
                .suffix(" s")
                .text("window"),
        )
        .on_hover_text("Seconds of history shown while following live");
        let mut on = settings.force_threshold.is_some();
        if ui
            .checkbox(&mut on, "threshold")
            .on_hover_text("Show ± force threshold lines; crossings are marked on the timeline")
            .changed()
        {
            settings.force_threshold = on.then_some(50.0);
        }
        if let Some(th) = &mut settings.force_threshold {
            ui.add(egui::DragValue::new(th).range(0.0..=100_000.0).suffix(" N"));
        }
        let samples = input.session.ft.len();
        ui.label(
            RichText::new(format!("{samples} samples"))
                .small()
                .color(theme.muted),
        );
    });
    // Fill the panel: content shorter than the panel made it shrink a little every frame,
    // down to plots 40 px tall.
    let spacing = ui.spacing().item_spacing.y;
    let legend = ui.spacing().interact_size.y;
    let h =
        ((ui.available_height() - 2.0 * (legend + 2.0 * spacing)) / 2.0).max(SMALLEST_PLOT_HEIGHT);
    let force = OnePlot {
        id: "force",
        channels: &[0, 1, 2, 6],
        unit: "N",
        height: h,
    };
    let torque = OnePlot {
        id: "torque",
        channels: &[3, 4, 5],
        unit: "N·m",
        height: h,
    };
    one_plot(ui, input, view, settings, theme, &force);
    one_plot(ui, input, view, settings, theme, &torque);
    // The panel keeps the height its content takes: claim all of it, the item spacing after
    // the last plot included (allocating `available_size` left those points out, so a panel
    // dragged taller crept back a few points every frame).
    let full = ui.max_rect();
    ui.expand_to_include_rect(full);
}
