//! The plot panel: stacked plots on one linked time axis, each showing the signals the
//! operator picked ([`super::plot_picker`]; the catalogue is [`crate::model::signals`]) in
//! the units the gauges use. Default: end-effector force (Fx Fy Fz |F|, N), torque (Tx Ty
//! Tz, N·m) and every joint's position. The choice persists ([`Settings::plots`]).
//!
//! Points are decimated before `egui_plot` sees them (min/max envelope per pixel column over
//! the time-indexed [`History`] of the session), so hours of 1 kHz data stay fluid; where
//! samples are missing (a stale episode, a lost link) the line and its band break
//! ([`History::plot_lines_multi`]), one `Line` per run. Following, the window ends at the
//! drawn time (now live, the cursor in replay); drag or zoom pauses, `L` returns. A vertical
//! line marks the cursor when there is one.
//!
//! Each plot has its legend above it (a chip per signal with its value at the drawn time;
//! click to hide it), never over the data. Hovering a plot shows every signal's value at the
//! pointer's time in the legends of every plot (with that time), and a line at that time
//! across the plots: nothing is drawn over the data or over the next plot's legend. The Y
//! axis has at least two labelled ticks with units ([`fit_y`], [`y_steps`]) and includes the
//! force threshold when it is on; the wheel zooms the time axis around the pointer (Shift or
//! Ctrl + wheel: the value axis).

use eframe::egui::{self, RichText, Vec2, vec2};
use egui_plot::{
    AxisHints, GridMark, HLine, Line, LineStyle, Plot, PlotBounds, PlotPoints, VLine,
    uniform_grid_spacer,
};

use super::plot_picker;
use crate::model::history::{History, Lines};
use crate::model::session::Session;
use crate::model::signals::{PlotSpec, Series, SignalInfo, SignalRef, Units, describe};
use crate::ui::commands::UiCommand;
use crate::ui::settings::Settings;
use crate::ui::simplify::simplify;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;

/// The plots' own state (transient): following the drawn time, the range they show, whether
/// points are decimated, and the time under the pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotsView {
    /// The plots follow the drawn time (now live, the cursor otherwise); dragging or zooming
    /// pauses them, `L` returns.
    pub follow: bool,
    /// The time range the plots showed last frame (for the CSV export), when shown.
    pub range: Option<(f64, f64)>,
    /// Decimate plot data before `egui_plot` sees it (off only to measure what it saves).
    pub decimate: bool,
    /// The time under the pointer over a plot last frame: the legends show that time.
    pub hover: Option<f64>,
    /// What each plot showed last frame, top to bottom.
    pub frames: Vec<PlotFrame>,
    /// Seconds of data per pixel column of the plots last frame (their window over the
    /// width of their data area in pixels), when shown.
    pub column: Option<f64>,
}

impl PlotsView {
    /// Seconds in which the plots move by one pixel column while they follow the drawn time,
    /// when they are `shown`: how often a new column of data appears ([`crate::ui::app::repaint_after`]).
    pub fn column_seconds(&self, shown: bool) -> Option<f64> {
        self.column
            .filter(|_| shown && self.follow && !self.frames.is_empty())
    }
}

/// What one plot showed in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotFrame {
    /// Its time range, s.
    pub x: (f64, f64),
    /// Its value range, in the units shown.
    pub y: (f64, f64),
    /// The height of its data area, points.
    pub height: f32,
    /// The width of its data area, pixels.
    pub width_px: f32,
}

impl Default for PlotsView {
    fn default() -> Self {
        Self {
            follow: true,
            range: None,
            decimate: true,
            hover: None,
            frames: Vec::new(),
            column: None,
        }
    }
}

/// The least height of one plot, points: two or three labelled Y ticks.
pub const MIN_PLOT_HEIGHT: f32 = 64.0;

/// The least height a plot is drawn at when a small window gives the panel less than it
/// asks (800×600: the 3D arm keeps its room; two labelled ticks still show). More plots than
/// fit at this height are left out (a line says so).
pub const SMALLEST_PLOT_HEIGHT: f32 = 48.0;

/// The height of the panel's header row, points (title, follow, window, threshold).
pub const HEADER_HEIGHT: f32 = 30.0;

/// The height of a plot's legend row with its spacing, points.
pub const LEGEND_HEIGHT: f32 = 28.0;

/// The height of the time axis under the bottom plot, points.
pub const TIME_AXIS_HEIGHT: f32 = 20.0;

/// The least height of the plots panel, points: the header, two legends and two plots of
/// [`MIN_PLOT_HEIGHT`] (other panels may use it to decide who gives way).
pub const MIN_PANEL_HEIGHT: f32 = panel_height(2, MIN_PLOT_HEIGHT);

/// The panel's height for `plots` plots of `plot_height` each.
pub const fn panel_height(plots: usize, plot_height: f32) -> f32 {
    HEADER_HEIGHT + plots as f32 * (plot_height + LEGEND_HEIGHT) + TIME_AXIS_HEIGHT
}

/// The panel's starting height in a window area `available` points tall with `plots` plots:
/// a third of it, more to give each plot [`MIN_PLOT_HEIGHT`], never more than half of it, and
/// in a small window (800×600) no more than 42 % of it (the plots give way first; plots that
/// do not fit are left out, [`shown_plots`]).
pub fn default_panel_height(available: f32, plots: usize) -> f32 {
    let wanted = panel_height(plots.max(1), MIN_PLOT_HEIGHT);
    let cap = if available < 560.0 { 0.42 } else { 0.5 };
    (available * 0.34)
        .max(wanted.min(available * cap))
        .max(MIN_PANEL_HEIGHT.min(available * 0.42))
}

/// The height of a Y tick label with its margin, points (`egui_plot` draws no label closer to
/// the next than this).
const TICK_LABEL_HEIGHT: f64 = 14.0;

/// Labelled Y ticks are chosen at least this far apart when the plot is tall enough, points.
const TICK_COMFORTABLE_SPACING: f64 = 28.0;

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
/// `px_per_value` points per unit: labelled ticks [`TICK_COMFORTABLE_SPACING`] apart when
/// the plot is tall enough, closer (down to a third of the range) until at least two of them
/// fall where their labels show whole.
pub fn y_steps(bounds: (f64, f64), px_per_value: f64) -> [f64; 3] {
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    let range = hi - lo;
    if !(range > 0.0 && range.is_finite() && px_per_value > 0.0 && px_per_value.is_finite()) {
        return [0.2, 1.0, 5.0];
    }
    let margin = 0.5 * TICK_LABEL_HEIGHT / px_per_value;
    let mut step = nice_at_least(TICK_COMFORTABLE_SPACING / px_per_value);
    for _ in 0..64 {
        if multiples_in(lo + margin, hi - margin, step) >= 2 || step < range * 1e-6 {
            break;
        }
        step = step_down(step);
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

/// How many labelled Y ticks `egui_plot` shows over `bounds` in a plot `height` points tall
/// with [`y_steps`]: those whose label shows whole, when labels are far enough apart.
pub fn labelled_ticks(bounds: (f64, f64), height: f64) -> usize {
    let range = (bounds.1 - bounds.0).abs();
    if range.is_nan() || range <= 0.0 || height <= 0.0 {
        return 0;
    }
    let px = height / range;
    let [_, step, _] = y_steps(bounds, px);
    if step * px < TICK_LABEL_HEIGHT {
        return 0;
    }
    let margin = 0.5 * TICK_LABEL_HEIGHT / px;
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    multiples_in(lo + margin, hi - margin, step)
}

/// The Y range that fits values `[lo, hi]` (and the `threshold` line when given, and its
/// negative when values go below zero) in a plot `height` points tall, padded, with at least
/// two labelled ticks ([`labelled_ticks`]): when the padded range leaves too little room, it
/// widens to two 1-2-5 multiples around the data with half a label beyond each. `None` when
/// there is nothing to fit.
pub fn fit_y(lo: f64, hi: f64, threshold: Option<f64>, height: f64) -> Option<(f64, f64)> {
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
    if labelled_ticks(fitted, height) >= 2 {
        return Some(fitted);
    }
    let label = TICK_LABEL_HEIGHT + 2.0;
    if height <= 2.0 * label {
        return Some(fitted);
    }
    let mut step = nice_at_least((hi - lo).max(pad));
    let mut bounds = fitted;
    for _ in 0..16 {
        let a = (lo / step).floor() * step;
        let b = ((hi / step).ceil() * step).max(a + step);
        // Half a label beyond each end tick: m = label/2 · (b − a + 2m) / height.
        let m = 0.5 * label * (b - a) / (height - label);
        bounds = (a - m, b + m);
        if labelled_ticks(bounds, height) >= 2 {
            break;
        }
        step = nice_above(step);
    }
    Some(bounds)
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

/// What the plots show.
pub struct PlotsInput<'a> {
    /// The session drawn.
    pub session: &'a Session,
    /// What the window shows (the drawn time and the cursor).
    pub shown: Shown,
    /// The drawn time, s.
    pub time: f64,
}

/// The time window to draw: the last `window` seconds when following live.
pub fn live_window(now: f64, window: f64) -> (f64, f64) {
    (now - window, now)
}

/// One signal of a plot as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// The signal.
    pub signal: SignalRef,
    /// It resolved against the arm shown; `None` when the arm has no such signal.
    pub info: Option<SignalInfo>,
    /// Hidden by the operator.
    pub hidden: bool,
    /// Its colour's index in the theme's series colours.
    pub colour: usize,
}

impl Channel {
    /// Its name in a legend; `mixed` when the plot holds several series.
    pub fn label(&self, mixed: bool) -> String {
        match &self.info {
            Some(i) if mixed => i.medium.clone(),
            Some(i) => i.short.clone(),
            None => fallback_name(self.signal),
        }
    }

    /// Its unit (empty when unavailable).
    pub fn unit(&self, units: Units) -> &'static str {
        self.info.as_ref().map_or("", |i| i.unit(units))
    }

    /// Drawn: available and not hidden.
    pub fn drawn(&self) -> bool {
        self.info.is_some() && !self.hidden
    }
}

/// The name of a signal the arm shown does not have.
fn fallback_name(signal: SignalRef) -> String {
    match signal.series {
        Series::ForceTorque => format!("F/T {}", signal.channel + 1),
        s => format!(
            "J{} {}",
            signal.channel.saturating_add(1),
            s.title().to_lowercase()
        ),
    }
}

/// The signals of `spec` on the arm in `session`, each resolved, with its colour (the
/// end-effector channels keep theirs, joints take theirs by joint, a second series in the
/// plot shifts its colours so two signals rarely share one).
pub fn channels(session: &Session, spec: &PlotSpec) -> Vec<Channel> {
    let signals = spec.signals_on(session);
    let mut series_seen: Vec<Series> = Vec::new();
    signals
        .into_iter()
        .map(|signal| {
            let k = match series_seen.iter().position(|s| *s == signal.series) {
                Some(k) => k,
                None => {
                    series_seen.push(signal.series);
                    series_seen.len() - 1
                }
            };
            Channel {
                signal,
                info: describe(session, signal),
                hidden: spec.hidden.contains(&signal),
                colour: signal.channel + 3 * k,
            }
        })
        .collect()
}

/// Whether the channels come from more than one series.
pub fn mixed(channels: &[Channel]) -> bool {
    channels
        .windows(2)
        .any(|w| w[0].signal.series != w[1].signal.series)
}

/// The unit of the drawn channels when they share one, else empty (each legend chip carries
/// its own).
pub fn common_unit(channels: &[Channel], units: Units) -> &'static str {
    let mut drawn = channels.iter().filter(|c| c.drawn()).map(|c| c.unit(units));
    let Some(first) = drawn.next() else {
        return "";
    };
    if drawn.all(|u| u == first) { first } else { "" }
}

/// Whether the plot draws an end-effector force (the threshold applies to |F|).
pub fn shows_force(channels: &[Channel]) -> bool {
    channels.iter().any(|c| {
        c.drawn() && c.signal.series == Series::ForceTorque && !(3..6).contains(&c.signal.channel)
    })
}

/// Lines of the drawn `channels` over `[t0, t1]` in `columns` columns, broken at gaps, in
/// shown units: `(index into channels, lines)`.
pub fn plot_lines(
    session: &Session,
    channels: &[Channel],
    units: Units,
    (t0, t1): (f64, f64),
    columns: usize,
) -> Vec<(usize, Lines)> {
    let mut out = Vec::new();
    let mut bounds = Vec::new();
    for series in Series::ALL {
        let of_series: Vec<usize> = channels
            .iter()
            .enumerate()
            .filter(|(_, c)| c.drawn() && c.signal.series == series)
            .map(|(i, _)| i)
            .collect();
        if of_series.is_empty() {
            continue;
        }
        let history = series.history(session);
        let wanted: Vec<usize> = of_series
            .iter()
            .map(|&i| channels[i].signal.channel)
            .collect();
        let gap = history.gap_threshold(t0, t1);
        let lines = history.plot_lines_multi(&wanted, t0, t1, columns, gap, &mut bounds);
        for (i, mut l) in of_series.into_iter().zip(lines) {
            let scale = channels[i]
                .info
                .as_ref()
                .map_or(1.0, |info| info.scale(units));
            if scale != 1.0 {
                l.points.iter_mut().for_each(|p| p[1] *= scale);
            }
            out.push((i, l));
        }
    }
    out
}

/// The value of `channel` shown at time `t`: the last sample at or before it (`hover`: the
/// sample nearest it, unless that is farther than a gap away), scaled to shown units.
pub fn value_at(
    session: &Session,
    channel: &Channel,
    units: Units,
    t: f64,
    hover: bool,
) -> Option<f64> {
    let info = channel.info.as_ref()?;
    let history: &History = channel.signal.series.history(session);
    let c = channel.signal.channel;
    let (ts, v) = if hover {
        let (ts, v) = history.nearest(c, t)?;
        let gap = history.gap_threshold(t - 30.0, t + 30.0);
        if (ts - t).abs() > gap.min(30.0) {
            return None;
        }
        (ts, v)
    } else {
        history.value_at(c, t)?
    };
    let _ = ts;
    Some(v * info.scale(units)).filter(|v| v.is_finite())
}

/// One plot of the panel.
struct OnePlot<'a> {
    index: usize,
    channels: &'a [Channel],
    height: f32,
    /// The bottom plot: its time axis is labelled.
    last: bool,
}

/// What one plot reports after drawing: its time range, whether the operator moved it, the
/// time under the pointer.
struct Drawn {
    frame: PlotFrame,
    interacted: bool,
    hover: Option<f64>,
}

fn one_plot(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &PlotsView,
    settings: &Settings,
    theme: &Theme,
    plot: &OnePlot<'_>,
) -> Drawn {
    let id = settings.plots.plots.get(plot.index).map_or(0, |p| p.id);
    let group = egui::Id::NULL.with("plots_time_axis");
    let units = units(settings);
    let follow = view.follow;
    let columns = ui.available_width().max(100.0) as usize;
    let (t0, t1) = live_window(input.time, settings.plot_window_s);
    // What range is visible decides what we decimate; when paused, the plot's own bounds.
    let bounds_id = egui::Id::NULL.with("plot").with(id).with("bounds");
    let (q0, q1) = if follow {
        (t0, t1)
    } else {
        ui.ctx()
            .data(|d| d.get_temp::<(f64, f64)>(bounds_id))
            .unwrap_or((t0, t1))
    };
    let columns = if view.decimate {
        columns
    } else {
        usize::MAX / 4
    };
    let lines = plot_lines(input.session, plot.channels, units, (q0, q1), columns);
    let threshold = settings
        .force_threshold
        .filter(|_| shows_force(plot.channels));
    let unit = common_unit(plot.channels, units).to_string();
    let cursor = input.shown.cursor();
    let hover_line = view.hover;
    let y_axis = AxisHints::new_y()
        .formatter(move |mark: GridMark, _range| tick_label(mark.value, mark.step_size, &unit))
        .min_thickness(64.0)
        .label_spacing(TICK_LABEL_HEIGHT as f32..=TICK_COMFORTABLE_SPACING as f32);
    let (lo, hi) = lines
        .iter()
        .flat_map(|(_, l)| l.points.iter().map(|p| p[1]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
            (a.min(y), b.max(y))
        });
    let colours: Vec<_> = lines
        .iter()
        .map(|(i, _)| theme.series[plot.channels[*i].colour % theme.series.len()])
        .collect();
    let response = Plot::new(("plot", id))
        .height(plot.height + if plot.last { TIME_AXIS_HEIGHT } else { 0.0 })
        .link_axis(group, [true, false])
        .custom_y_axes(vec![y_axis])
        .show_axes([plot.last, true])
        .y_grid_spacer(uniform_grid_spacer(|input| {
            // egui_plot's base step is 8 points' worth of value (its grid spacing minimum).
            y_steps(
                input.bounds,
                8.0 / input.base_step_size.max(f64::MIN_POSITIVE),
            )
        }))
        // The hover read-out is in the legends, never over the data.
        .show_x(false)
        .show_y(false)
        .allow_drag(true)
        // The wheel is handled below: time by default, values with Shift or Ctrl.
        .allow_zoom(false)
        .allow_scroll(false)
        .show(ui, |plot_ui| {
            let mut shown = plot_ui.plot_bounds();
            if follow {
                let height = f64::from(plot_ui.transform().frame().height());
                let (y0, y1) =
                    fit_y(lo, hi, threshold, height).unwrap_or((shown.min()[1], shown.max()[1]));
                shown = PlotBounds::from_min_max([t0, y0], [t1, y1]);
                plot_ui.set_plot_bounds(shown);
            }
            let zoomed = wheel(plot_ui);
            if lines_drawn() {
                draw_lines(plot_ui, &lines, &colours, pixels_per_unit(plot_ui, &shown));
            }
            // No names: the cursor, the hover line and the threshold stay out of any legend.
            if let Some(t) = cursor {
                plot_ui.vline(VLine::new("", t).color(theme.cursor).width(1.0));
            }
            if let Some(t) = hover_line {
                plot_ui.vline(VLine::new("", t).color(theme.muted).width(1.0));
            }
            if let Some(th) = threshold {
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
            let frame = PlotFrame {
                x: (b.min()[0], b.max()[0]),
                y: (b.min()[1], b.max()[1]),
                height: plot_ui.transform().frame().height(),
                width_px: plot_ui.transform().frame().width() * plot_ui.ctx().pixels_per_point(),
            };
            let hover = plot_ui
                .response()
                .hovered()
                .then(|| plot_ui.pointer_coordinate().map(|p| p.x))
                .flatten();
            (frame, plot_ui.response().dragged() || zoomed, hover)
        });
    let (frame, interacted, hover) = response.inner;
    ui.ctx().data_mut(|d| d.insert_temp(bounds_id, frame.x));
    Drawn {
        frame,
        interacted,
        hover,
    }
}

/// How far, in physical pixels, a plot line may pass from a sample it leaves out
/// ([`simplify`]): a sixth of the line's width, below what anti-aliasing shows.
pub const LINE_TOLERANCE_PX: f64 = 0.25;

/// Physical pixels per plot unit along x and y with `bounds` shown in the plot's frame (its
/// size from the frame before: the bounds set in this frame apply to what is drawn in it).
fn pixels_per_unit(plot_ui: &egui_plot::PlotUi<'_>, bounds: &PlotBounds) -> [f64; 2] {
    let frame = plot_ui.transform().frame();
    let ppp = f64::from(plot_ui.ctx().pixels_per_point());
    [
        f64::from(frame.width()) * ppp / bounds.width(),
        f64::from(frame.height()) * ppp / bounds.height(),
    ]
}

/// The data lines, each run without the points the screen cannot show at `scale`
/// ([`simplify`]).
fn draw_lines(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    lines: &[(usize, Lines)],
    colours: &[egui::Color32],
    scale: [f64; 2],
) {
    for ((i, l), colour) in lines.iter().zip(colours) {
        for (k, run) in l.runs().enumerate() {
            let mut drawn = Vec::with_capacity(run.len().min(4096));
            simplify(run, scale, LINE_TOLERANCE_PX, &mut drawn);
            plot_ui.line(
                Line::new("", PlotPoints::from(drawn))
                    .id((*i, k))
                    .color(*colour)
                    .width(1.5)
                    .allow_hover(false),
            );
        }
    }
}

/// Whether the data lines are drawn: always, unless the environment variable
/// `JAUS_OCU_PLOT_LINES=off` leaves them out for measuring what they cost (ARCHITECTURE.md,
/// "Where a frame's time goes").
fn lines_drawn() -> bool {
    static DRAWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DRAWN.get_or_init(|| std::env::var("JAUS_OCU_PLOT_LINES").as_deref() != Ok("off"))
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

/// The unit choices of `settings`.
pub fn units(settings: &Settings) -> Units {
    Units {
        degrees: settings.degrees,
        millimetres: settings.millimetres,
    }
}

/// What a plot's legend row asks: to remove the plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LegendAsk {
    Nothing,
    Remove,
}

/// The plot's legend, above it: the signal picker and the remove button, then one chip per
/// signal in its colour with its value at the drawn time, or at the time under the pointer
/// while a plot is hovered (click a chip to hide or show the signal), the threshold when
/// drawn, and that time.
fn legend_row(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    hover: Option<f64>,
    settings: &mut Settings,
    theme: &Theme,
    index: usize,
    channels: &[Channel],
) -> LegendAsk {
    let units = units(settings);
    let mut ask = LegendAsk::Nothing;
    let many = settings.plots.plots.len() > 1;
    let Some(spec) = settings.plots.plots.get_mut(index) else {
        return ask;
    };
    ui.horizontal(|ui| {
        plot_picker::picker(ui, spec, input.session, units, theme);
        if many
            && ui
                .small_button("×")
                .on_hover_text("Remove this plot")
                .clicked()
        {
            ask = LegendAsk::Remove;
        }
        if spec.is_empty() {
            ui.label(RichText::new("no signals: choose some with Signals").color(theme.muted));
        }
        let mixed = mixed(channels);
        let t = hover.unwrap_or(input.time);
        for c in channels {
            let name = c.label(mixed);
            let Some(info) = &c.info else {
                ui.label(RichText::new(format!("{name}: not on this arm")).color(theme.muted))
                    .on_hover_text("The arm shown has no such signal (another arm's choice)");
                continue;
            };
            let unit = info.unit(units);
            let text = match value_at(input.session, c, units, t, hover.is_some()) {
                Some(v) => format!("{name} {}", value_text(v, unit)),
                None => format!("{name} — {unit}"),
            };
            let colour = if c.hidden {
                theme.muted
            } else {
                theme.series[c.colour % theme.series.len()]
            };
            let mut shown = !c.hidden;
            if ui
                .toggle_value(&mut shown, RichText::new(text).monospace().color(colour))
                .on_hover_text(format!(
                    "{} at the time shown; click to hide or show it",
                    info.name
                ))
                .changed()
            {
                if shown {
                    spec.hidden.retain(|s| *s != c.signal);
                } else {
                    spec.hidden.push(c.signal);
                }
            }
        }
        if shows_force(channels)
            && let Some(th) = input.session.force_threshold()
        {
            ui.label(RichText::new(format!("threshold ±{th} N")).color(theme.threshold))
                .on_hover_text("Crossings of |F| are marked on the timeline (threshold marks)");
        }
        if let Some(t) = hover {
            ui.label(
                RichText::new(format!("at {t:.3} s"))
                    .monospace()
                    .color(theme.accent),
            )
            .on_hover_text("The values at the time under the pointer");
        }
    });
    ask
}

/// The panel's header: title, following, window, threshold, samples, add a plot.
fn header(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    settings: &mut Settings,
    theme: &Theme,
) {
    ui.horizontal(|ui| {
        ui.heading("Plots");
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
            .on_hover_text(
                "Show the force threshold line; crossings of |F| are marked on the timeline",
            )
            .changed()
        {
            settings.force_threshold = on.then_some(50.0);
        }
        if let Some(th) = &mut settings.force_threshold {
            ui.add(egui::DragValue::new(th).range(0.0..=100_000.0).suffix(" N"));
        }
        if ui
            .add_enabled(
                settings.plots.plots.len() < crate::model::signals::MAX_PLOTS,
                egui::Button::new("+ Plot"),
            )
            .on_hover_text("Add a plot below the others; choose its signals with Signals")
            .clicked()
        {
            settings.plots.add();
        }
        let samples = input.session.ft.len() + input.session.positions.len();
        ui.label(
            RichText::new(format!("{samples} samples"))
                .small()
                .color(theme.muted),
        );
    });
}

/// How many of `all` plots a panel with `room` points under its header shows, each plot
/// taking `legend` points for its legend: as many as fit at [`SMALLEST_PLOT_HEIGHT`] (with a
/// line to say the rest do not), at least one. A scrolled panel would hide widgets under the
/// bars below it and fight the wheel, which zooms the plots.
pub fn shown_plots(room: f32, legend: f32, all: usize) -> usize {
    let each = SMALLEST_PLOT_HEIGHT + legend;
    if room + 0.5 >= all as f32 * each {
        return all;
    }
    // Room for the note too.
    (((room - legend) / each).floor().max(1.0) as usize).min(all)
}

/// Draws the panel. The header's controls, the pickers and the legend chips change
/// `settings`.
pub fn show(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    settings: &mut Settings,
    theme: &Theme,
) {
    header(ui, input, view, settings, theme);
    let all = settings.plots.plots.len();
    // Fill the panel: content shorter than the panel made it shrink a little every frame.
    let spacing = ui.spacing().item_spacing.y;
    let legend = ui.spacing().interact_size.y + 2.0 * spacing;
    let room = ui.available_height() - TIME_AXIS_HEIGHT;
    let n = shown_plots(room, legend + spacing, all);
    // A note under the plots says how many do not fit.
    let note = if n < all { legend } else { 0.0 };
    let h =
        ((room - note - n as f32 * (legend + spacing)) / n.max(1) as f32).max(SMALLEST_PLOT_HEIGHT);
    let mut hover = None;
    let mut remove = None;
    let mut frames = Vec::with_capacity(n);
    for index in 0..n {
        let Some(spec) = settings.plots.plots.get(index) else {
            break;
        };
        let chans = channels(input.session, spec);
        if legend_row(ui, input, view.hover, settings, theme, index, &chans) == LegendAsk::Remove {
            remove = Some(index);
        }
        // Chips clicked change what is drawn this frame already.
        let chans = settings
            .plots
            .plots
            .get(index)
            .map_or(chans, |spec| channels(input.session, spec));
        let plot = OnePlot {
            index,
            channels: &chans,
            height: h,
            last: index + 1 == n,
        };
        let drawn = one_plot(ui, input, view, settings, theme, &plot);
        if index == 0 {
            view.range = Some(drawn.frame.x);
        }
        frames.push(drawn.frame);
        if drawn.interacted {
            view.follow = false;
        }
        hover = hover.or(drawn.hover);
    }
    if n < all {
        ui.label(
            RichText::new(format!(
                "{} more plot(s) below: drag the panel's top edge up to see them",
                all - n
            ))
            .color(theme.warn),
        );
    }
    if all == 0 {
        view.range = None;
        ui.label(RichText::new("No plots: add one with + Plot").color(theme.muted));
    }
    if let Some(i) = remove {
        settings.plots.remove(i);
    }
    view.column = frames
        .first()
        .filter(|f| f.width_px >= 1.0)
        .map(|f| (f.x.1 - f.x.0) / f64::from(f.width_px));
    view.frames = frames;
    if hover != view.hover {
        view.hover = hover;
        // The legends show the hovered time from the next frame on.
        ui.ctx().request_repaint();
    }
    // The panel keeps the height its content takes: claim all of it, the item spacing after
    // the last plot included (allocating `available_size` left those points out, so a panel
    // dragged taller crept back a few points every frame).
    let full = ui.max_rect();
    ui.expand_to_include_rect(full);
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

    #[test]
    fn the_panel_starts_tall_enough_for_its_plots_but_gives_way_in_a_small_window() {
        // 1280×800: three plots of MIN_PLOT_HEIGHT fit in half the room.
        let h = default_panel_height(660.0, 3);
        assert!(
            h >= panel_height(3, MIN_PLOT_HEIGHT) - 1.0 && h <= 330.0,
            "{h}"
        );
        // 800×600: no more than 42 %; the plots that do not fit are left out, said below.
        assert_eq!(shown_plots(130.0, 30.0, 3), 1);
        assert_eq!(shown_plots(3.0 * 78.0, 30.0, 3), 3);
        assert_eq!(shown_plots(10.0, 30.0, 3), 1);
        assert_eq!(shown_plots(10.0, 30.0, 0), 0);
        assert!(default_panel_height(430.0, 3) <= 430.0 * 0.42 + 0.01);
        // One plot: a third, or the room of two plots when that is more.
        let one = default_panel_height(660.0, 1);
        assert!(
            (one - (660.0 * 0.34f32).max(MIN_PANEL_HEIGHT)).abs() < 1e-3,
            "{one}"
        );
    }
}
