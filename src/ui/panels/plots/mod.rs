//! The plot panel: stacked plots on one time axis, each showing the signals the operator
//! picked ([`super::plot_picker`]; the catalogue is [`crate::model::signals`]) in the units
//! the gauges use. Default: end-effector force (Fx Fy Fz |F|, N), torque (Tx Ty Tz, N·m) and
//! every joint's position. The choice persists ([`Settings::plots`]).
//!
//! **One time axis.** The panel's width is taken once, before anything is laid out, and every
//! part of the panel gets an exact rectangle of it: nothing a legend or the header holds can
//! widen a plot. Every plot's data area has the same left edge (after a Y label gutter as
//! wide as the widest tick label of any plot, [`PlotsView::gutter`]) and the same right edge,
//! and every plot is handed the same time range each frame ([`PlotsView::range`]): the same
//! time is at the same x in every plot. The panel owns the time range itself (it does not
//! rely on `egui_plot`'s axis linking, which lags a frame): a drag pans it, the wheel zooms it
//! around the pointer, and every plot draws it in the same frame.
//!
//! **One Y axis per unit.** A plot whose signals have several units (the telescope's metres
//! among the revolute joints' degrees, velocities with efforts) is drawn as one *lane* per
//! unit, stacked under the plot's one legend, each lane with its own Y axis labelled in its
//! unit ([`lanes`]). Two units never share an axis, so neither is flattened by the other's
//! scale. (`egui_plot` draws several Y axes only as labels of one coordinate system, so a
//! second scale would be a relabelling of the first: lanes are simpler and read at once.)
//!
//! **Labelled ticks.** The Y tick labels are drawn by the panel in the gutter, not by
//! `egui_plot`: a label is drawn only where it stands whole inside its lane and at least a
//! label's height from the next ([`tick_values`]), so what [`labelled_ticks`] counts is what
//! the operator sees. The value range is fitted ([`fit_y`]) so that at least two are labelled
//! at every lane height down to [`SMALLEST_PLOT_HEIGHT`]. (`egui_plot`'s own labels faded out
//! below 28 points of spacing, vanished below their 15-point height although the fit assumed
//! 14, and the fit used the previous frame's height: a force plot could show "0 N" alone.)
//!
//! **Time range.** Following, the window ends at the drawn time (now live, the cursor in
//! replay). A replay opens showing the whole file (its span, growing while it loads), with
//! the cursor as a vertical line; "Whole file" returns to that view. Drag or the wheel pauses
//! the plots on the range the operator chose; `L` returns to following. Shift or Ctrl +
//! wheel zooms the value axis of the lane under the pointer (until the plots follow again).
//!
//! Points are decimated before `egui_plot` sees them (min/max envelope per pixel column over the
//! time-indexed [`History`](crate::model::history::History) of the session), so hours of 1 kHz data
//! stay fluid; where samples are missing (a stale episode, a lost link) the line and its band
//! break.
//!
//! **A frame costs what changed, not the history's length** (issue 31). The envelope of each
//! history drawn is kept from frame to frame ([`PlotCaches`], one
//! [`crate::model::history::EnvelopeCache`] per series, brought to the frame's range once
//! for every lane before any is drawn): its columns sit on an absolute time grid, so while
//! the plots follow only the newest columns are computed (the picture is within a column,
//! under a pixel, of columns starting at the window's start). A decimated run is drawn as
//! one mesh ([`EnvelopeBand`]: a triangle strip through each column's min and max widened
//! by the line width, what `egui_plot`'s band looked like, without its general polygon
//! tessellation); raw samples (zoomed in) as `Line`s, simplified
//! ([`History::plot_lines_multi`](crate::model::history::History::plot_lines_multi), [`simplify`]).
//!
//! Each plot has its legend above it, one row whatever the number of signals: a chip per
//! signal with its value at the drawn time (click to hide it: a hidden signal's chip is
//! struck through and dimmed, its tooltip "hidden: click to show"); chips that do not fit fold
//! into a "+N more" menu. Hovering a plot shows every signal's value at the pointer's time in
//! the legends of every plot (with that time, in a place kept for it at the row's end) and a
//! line at that time across the plots: nothing is drawn over the data.

use eframe::egui::{self, Rect, RichText, Sense, UiBuilder, pos2, vec2};
use egui::containers::menu::{MenuButton, MenuConfig};
use egui_plot::{
    AxisHints, GridInput, HLine, Line, LineStyle, Plot, PlotPoints, VLine, uniform_grid_spacer,
};

mod axis;
mod caches;
mod lanes;

use axis::LABEL_MARGIN;
pub use axis::{
    DEFAULT_TICK_LABEL_HEIGHT, fit_y, labelled_ticks, tick_label, tick_label_height, tick_values,
    value_text, wheel_zoom, y_steps,
};
pub use caches::{LaneData, cached_lines, plot_lines, value_at};
use lanes::NOTE_IN_HEADER_W;
pub use lanes::{
    Channel, HEADER_HEIGHT, LANE_GAP, LEGEND_HEIGHT, Lane, MIN_GUTTER, MIN_PANEL_HEIGHT,
    MIN_PLOT_HEIGHT, SMALLEST_PLOT_HEIGHT, TIME_AXIS_HEIGHT, channels, default_panel_height,
    default_panel_height_lanes, lane_counts, lanes, mixed, panel_height, panel_height_lanes,
    shown_plots, shown_plots_noted, shows_force, units,
};

use super::plot_picker;
use crate::model::session::Session;
use crate::model::signals::{PlotSpec, Series, SignalRef, Units};
use crate::ui::commands::UiCommand;
use crate::ui::plot_caches::PlotCaches;
use crate::ui::settings::Settings;
use crate::ui::simplify::simplify;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::widgets::envelope_band::{BandMemo, EnvelopeBand};

/// A lane of the panel: the plot's id and the lane's unit.
pub type LaneKey = (u32, &'static str);

/// The plots' own state (transient): how the time range is chosen and what it was, whether
/// points are decimated, and what was drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotsView {
    /// The plots follow the drawn time (now live, the cursor otherwise); dragging or zooming
    /// pauses them, `L` returns. Wins over [`PlotsView::whole`].
    pub follow: bool,
    /// The plots show the whole session (a replay's file, growing while it loads): what a
    /// replay opens with.
    pub whole: bool,
    /// The time range every plot showed last frame (for the CSV export; paused, the range
    /// the operator chose), when shown.
    pub range: Option<(f64, f64)>,
    /// Decimate plot data before `egui_plot` sees it (off only to measure what it saves).
    pub decimate: bool,
    /// The time under the pointer over a plot this frame: the legends show that time.
    pub hover: Option<f64>,
    /// What each lane showed last frame, top to bottom (a plot of one unit is one lane).
    pub frames: Vec<PlotFrame>,
    /// Seconds of data per pixel column of the plots last frame (their window over the
    /// width of their data area in pixels), when shown.
    pub column: Option<f64>,
    /// Value ranges the operator set with Shift or Ctrl + wheel, per lane (until the plots
    /// follow or show the whole session again).
    pub value_zoom: Vec<(LaneKey, (f64, f64))>,
    /// The width of the Y label gutter left of every plot, points: the widest label drawn
    /// last frame (at least [`MIN_GUTTER`]), the same for every plot.
    pub gutter: f32,
}

impl PlotsView {
    /// Seconds in which the plots move by one pixel column while they follow the drawn time,
    /// when they are `shown`: how often a new column of data appears ([`crate::ui::app::repaint_after`]).
    pub fn column_seconds(&self, shown: bool) -> Option<f64> {
        self.column
            .filter(|_| shown && self.follow && !self.frames.is_empty())
    }

    /// Shows the whole session (a replay just opened), until the operator pans, zooms or
    /// follows.
    pub fn show_whole(&mut self) {
        self.follow = false;
        self.whole = true;
        self.value_zoom.clear();
    }

    /// Follows the drawn time again.
    pub fn follow_time(&mut self) {
        self.follow = true;
        self.whole = false;
        self.value_zoom.clear();
    }

    /// How far ← and → step, s: one pixel column of the plots as drawn last frame, or
    /// without plots drawn the column of a plot [`FALLBACK_COLUMNS`] wide showing `window_s`;
    /// never less than [`MIN_STEP_S`]. The cursor then goes to the report there.
    pub fn step_stride(&self, window_s: f64) -> f64 {
        let drawn = self
            .column
            .filter(|c| self.range.is_some() && !self.frames.is_empty() && c.is_finite());
        drawn.unwrap_or(window_s / FALLBACK_COLUMNS).max(MIN_STEP_S)
    }

    /// The number of plots drawn last frame (each of one lane or more).
    pub fn plots_drawn(&self) -> usize {
        let mut plots: Vec<usize> = self.frames.iter().map(|f| f.plot).collect();
        plots.dedup();
        plots.len()
    }
}

/// Pixel columns assumed for ← → when no plot is drawn.
pub const FALLBACK_COLUMNS: f64 = 1000.0;

/// The least step of ← and →, s.
pub const MIN_STEP_S: f64 = 0.001;

/// What one lane of a plot showed in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotFrame {
    /// The index of its plot in the layout.
    pub plot: usize,
    /// The lane's unit (empty for a plot without signals).
    pub unit: &'static str,
    /// Its time range, s.
    pub x: (f64, f64),
    /// Its value range, in the units shown.
    pub y: (f64, f64),
    /// Its data area on screen, points (the time axis under the bottom lane is not in it).
    pub rect: Rect,
    /// The height of its data area, points.
    pub height: f32,
    /// The width of its data area, pixels.
    pub width_px: f32,
    /// The Y ticks labelled (drawn whole, with their unit).
    pub ticks: usize,
    /// The signals drawn in it (available and not hidden).
    pub signals: usize,
    /// Points handed to `egui_plot` for its lines.
    pub points: usize,
}

impl PlotFrame {
    /// The x of time `t` in this lane, points.
    pub fn x_of(&self, t: f64) -> f32 {
        let (a, b) = self.x;
        self.rect.left() + ((t - a) / (b - a)) as f32 * self.rect.width()
    }
}

impl Default for PlotsView {
    fn default() -> Self {
        Self {
            follow: true,
            whole: false,
            range: None,
            decimate: true,
            hover: None,
            frames: Vec::new(),
            column: None,
            value_zoom: Vec::new(),
            gutter: MIN_GUTTER,
        }
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

/// Brings the envelope caches to this frame's `range` for every signal the lanes of `slots`
/// draw: once per history, every lane being as wide.
fn update_caches(
    view: &PlotsView,
    caches: &mut PlotCaches,
    session: &Session,
    slots: &[PlotSlot],
    range: (f64, f64),
) {
    if let Some(lane) = slots.first().and_then(|p| p.lanes.first())
        && view.decimate
    {
        let columns = lane_columns(view, lane.data.width());
        let wanted = wanted_channels(slots);
        caches.update(session, &wanted, range, columns);
    }
}

/// The series and channels drawn by the lanes of `slots`, each series once.
fn wanted_channels(slots: &[PlotSlot]) -> Vec<(Series, Vec<usize>)> {
    let mut out: Vec<(Series, Vec<usize>)> = Vec::new();
    for plot in slots {
        for lane in &plot.lanes {
            for c in lane
                .lane
                .channels
                .iter()
                .filter_map(|&i| plot.channels.get(i))
            {
                if !c.drawn() {
                    continue;
                }
                let (series, channel) = (c.signal.series, c.signal.channel);
                match out.iter_mut().find(|(s, _)| *s == series) {
                    Some((_, chans)) if !chans.contains(&channel) => chans.push(channel),
                    Some(_) => {}
                    None => out.push((series, vec![channel])),
                }
            }
        }
    }
    out
}

/// The lines of a lane `width` points wide ([`cached_lines`]; every point when the view
/// does not decimate).
fn lane_lines(
    session: &Session,
    view: &PlotsView,
    caches: &PlotCaches,
    chans: &[Channel],
    units: Units,
    range: (f64, f64),
    width: f32,
) -> Vec<(usize, LaneData)> {
    let columns = lane_columns(view, width);
    if view.decimate {
        return cached_lines(session, caches, chans, units, range, columns);
    }
    plot_lines(session, chans, units, range, columns)
        .into_iter()
        .map(|(i, l)| (i, LaneData::Raw(l)))
        .collect()
}

/// The pixel columns of a lane whose data area is `width` points wide.
fn lane_columns(view: &PlotsView, width: f32) -> usize {
    if view.decimate {
        width.max(100.0) as usize
    } else {
        usize::MAX / 4
    }
}

/// Where one plot of the panel goes this frame.
struct PlotSlot {
    /// Its index in the layout.
    index: usize,
    /// Its channels.
    channels: Vec<Channel>,
    /// Its legend row.
    legend: Rect,
    /// Its lanes.
    lanes: Vec<LaneSlot>,
}

/// Where one lane goes this frame.
struct LaneSlot {
    lane: Lane,
    key: LaneKey,
    /// The lane's row: gutter, data area and (bottom lane) the time axis.
    row: Rect,
    /// Its data area.
    data: Rect,
}

/// What the panel's pieces measure, points.
#[derive(Debug, Clone, Copy)]
struct Metrics {
    width: f32,
    left: f32,
    legend: f32,
    gap: f32,
    gutter: f32,
}

/// Places the plots `0..n` (their channels and lanes given) from `top` down, each lane
/// `height` tall: a legend row, then the plot's lanes [`LANE_GAP`] apart (the bottom lane of
/// the last plot with the time axis under it), then a gap.
fn place(
    plots: Vec<(usize, Vec<Channel>, Vec<Lane>, u32)>,
    top: f32,
    height: f32,
    m: Metrics,
) -> Vec<PlotSlot> {
    let mut y = top;
    let count = plots.len();
    let mut out = Vec::with_capacity(count);
    for (k, (index, channels, lanes, id)) in plots.into_iter().enumerate() {
        let legend = Rect::from_min_size(pos2(m.left, y), vec2(m.width, m.legend));
        y += m.legend + m.gap;
        let n = lanes.len();
        let mut slots = Vec::with_capacity(n);
        for (j, lane) in lanes.into_iter().enumerate() {
            let axis = if k + 1 == count && j + 1 == n {
                TIME_AXIS_HEIGHT
            } else {
                0.0
            };
            let row = Rect::from_min_size(pos2(m.left, y), vec2(m.width, height + axis));
            let data = Rect::from_min_max(
                pos2(m.left + m.gutter, y),
                pos2(m.left + m.width, y + height),
            );
            slots.push(LaneSlot {
                key: (id, lane.unit),
                lane,
                row,
                data,
            });
            y += height + axis + if j + 1 < n { LANE_GAP } else { 0.0 };
        }
        y += m.gap;
        out.push(PlotSlot {
            index,
            channels,
            legend,
            lanes: slots,
        });
    }
    out
}

/// The time range the plots show this frame before the operator's input: the window ending
/// at the drawn time (following), the session's span (whole), the range chosen (paused).
fn base_range(input: &PlotsInput<'_>, view: &PlotsView, window: f64) -> (f64, f64) {
    let following = live_window(input.time, window);
    if view.follow {
        return following;
    }
    if view.whole {
        return match input.session.span() {
            Some((a, b)) if b - a > 1e-6 => (a, b),
            Some((_, b)) => live_window(b, window),
            None => following,
        };
    }
    view.range
        .filter(|(a, b)| a.is_finite() && b.is_finite() && b > a)
        .unwrap_or(following)
}

/// What the pointer did over the lanes this frame: the time under it, and the panning and
/// zooming it asked (applied to `range` and `view`).
fn pointer(
    ui: &egui::Ui,
    slots: &[PlotSlot],
    view: &mut PlotsView,
    range: &mut (f64, f64),
) -> Option<f64> {
    let mut hover = None;
    for plot in slots {
        for lane in &plot.lanes {
            let id = egui::Id::NULL.with(("plot_lane", lane.key.0, lane.key.1));
            let response = ui.interact(lane.data, id, Sense::click_and_drag());
            let width = f64::from(lane.data.width().max(1.0));
            let (a, b) = *range;
            let time_at = |x: f32| a + f64::from(x - lane.data.left()) / width * (b - a);
            if response.dragged() {
                let dx = f64::from(response.drag_delta().x);
                if dx != 0.0 {
                    let dt = -dx / width * (b - a);
                    *range = (a + dt, b + dt);
                    view.follow = false;
                    view.whole = false;
                }
            }
            let Some(pos) = response.hover_pos() else {
                continue;
            };
            hover = Some(time_at(pos.x));
            let (scroll, pinch, shift) = ui
                .ctx()
                .input(|i| (i.smooth_scroll_delta, i.zoom_delta(), i.modifiers.shift));
            let zoom = wheel_zoom(scroll, pinch, shift);
            if zoom.x != 1.0 {
                let t = time_at(pos.x);
                let f = f64::from(zoom.x);
                *range = (t + (a - t) / f, t + (b - t) / f);
                view.follow = false;
                view.whole = false;
            }
            if zoom.y != 1.0
                && let Some(last) = view
                    .frames
                    .iter()
                    .find(|f| (f.plot, f.unit) == (plot.index, lane.key.1))
            {
                let (y0, y1) = last.y;
                let h = f64::from(lane.data.height().max(1.0));
                let v = y1 - f64::from(pos.y - lane.data.top()) / h * (y1 - y0);
                let f = f64::from(zoom.y);
                let zoomed = (v + (y0 - v) / f, v + (y1 - v) / f);
                view.value_zoom.retain(|(k, _)| *k != lane.key);
                view.value_zoom.push((lane.key, zoomed));
            }
        }
    }
    hover
}

/// Draws the panel. The header's controls, the pickers and the legend chips change
/// `settings`; `caches` keeps what the next frame can reuse.
pub fn show(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    caches: &mut PlotCaches,
    settings: &mut Settings,
    theme: &Theme,
) {
    // The panel's width, taken before anything is laid out: nothing in it widens a plot.
    let full = ui.max_rect();
    let width = ui.available_width();
    let left = ui.available_rect_before_wrap().left();
    if view.follow {
        view.whole = false;
    }
    let header_row = header(ui, input, view, settings, theme);
    let gap = ui.spacing().item_spacing.y;
    let m = Metrics {
        width,
        left,
        legend: ui.spacing().interact_size.y,
        gap,
        gutter: view.gutter.max(MIN_GUTTER).min(width * 0.5),
    };
    let units = units(settings);
    let all: Vec<(usize, Vec<Channel>, Vec<Lane>, u32)> = settings
        .plots
        .plots
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let chans = channels(input.session, spec);
            let lanes = lanes(&chans, units);
            (i, chans, lanes, spec.id)
        })
        .collect();
    let counts: Vec<usize> = all.iter().map(|p| p.2.len()).collect();
    let top = ui.available_rect_before_wrap().top();
    let room = (full.bottom() - top - TIME_AXIS_HEIGHT).max(0.0);
    // Each plot: its legend and a gap after it and after its lanes.
    let per_plot = m.legend + 2.0 * gap;
    // The line that says how many plots are left out goes in the header's row when there is
    // room there (a row of its own would leave out one plot more: adding a fourth plot at
    // 1280×800 hid two).
    let in_header = header_row.width() >= NOTE_IN_HEADER_W;
    let note_row = if in_header { 0.0 } else { m.legend + gap };
    let n = shown_plots_noted(room, per_plot, &counts, note_row);
    let note = if n < all.len() { note_row } else { 0.0 };
    let lanes_shown: usize = counts[..n].iter().sum();
    let gaps = (lanes_shown - n.min(lanes_shown)) as f32 * LANE_GAP;
    let h = ((room - note - n as f32 * per_plot - gaps) / lanes_shown.max(1) as f32)
        .floor()
        .max(SMALLEST_PLOT_HEIGHT);
    let more = all.len() - n;
    let slots = place(all.into_iter().take(n).collect(), top, h, m);
    let mut range = base_range(input, view, settings.plot_window_s);
    view.hover = pointer(ui, &slots, view, &mut range);
    update_caches(view, caches, input.session, &slots, range);
    let white = band_texture(ui.ctx());
    let label = tick_label_height(ui);
    let mut remove = None;
    let mut frames = Vec::with_capacity(lanes_shown);
    let mut widest: f32 = 0.0;
    let mut bottom = top;
    for plot in &slots {
        let mut child = ui.new_child(UiBuilder::new().max_rect(plot.legend));
        child.set_clip_rect(plot.legend.intersect(ui.clip_rect()));
        let legend = LegendInput {
            input,
            hover: view.hover,
            index: plot.index,
            channels: &plot.channels,
        };
        if legend_row(&mut child, &legend, settings, theme) == LegendAsk::Remove {
            remove = Some(plot.index);
        }
        for lane in &plot.lanes {
            let drawn = draw_lane(
                ui,
                &LaneInput {
                    input,
                    view,
                    settings,
                    theme,
                    plot,
                    lane,
                    range,
                    label,
                    white,
                },
                caches,
            );
            widest = widest.max(drawn.1);
            frames.push(drawn.0);
            bottom = lane.row.bottom();
        }
    }
    if more > 0 {
        let own_row = Rect::from_min_size(pos2(left, bottom + gap), vec2(width, m.legend));
        left_out(
            ui,
            more,
            in_header.then_some(header_row).ok_or(own_row),
            theme,
        );
    }
    if settings.plots.plots.is_empty() {
        ui.label(RichText::new("No plots: add one with + Plot").color(theme.muted));
    }
    if let Some(i) = remove {
        settings.plots.remove(i);
    }
    view.range = (!frames.is_empty()).then_some(range);
    view.column = frames
        .first()
        .filter(|f| f.width_px >= 1.0)
        .map(|f| (f.x.1 - f.x.0) / f64::from(f.width_px));
    view.frames = frames;
    // Every plot's gutter as wide as the widest label (slowly narrower: no jitter).
    let wanted = (widest + 2.0 * LABEL_MARGIN).ceil().max(MIN_GUTTER);
    if wanted > view.gutter || view.gutter - wanted > 12.0 {
        view.gutter = wanted;
        ui.ctx().request_repaint();
    }
    // The panel keeps the height its content takes: claim all of it (allocating
    // `available_size` left the item spacing out, so a panel dragged taller crept back a few
    // points every frame).
    ui.expand_to_include_rect(full);
}

/// What one lane is drawn from.
struct LaneInput<'a> {
    input: &'a PlotsInput<'a>,
    view: &'a PlotsView,
    settings: &'a Settings,
    theme: &'a Theme,
    plot: &'a PlotSlot,
    lane: &'a LaneSlot,
    range: (f64, f64),
    label: f64,
    /// The bands' texture ([`band_texture`]).
    white: egui::TextureId,
}

/// A white texel the bands draw with: a texture of their own, so that epaint gives each its
/// own primitive ([`crate::ui::widgets::envelope_band`]). One per context, kept by egui while
/// asked for every frame.
fn band_texture(ctx: &egui::Context) -> egui::TextureId {
    ctx.load_texture_cached(
        "plot bands",
        egui::Id::unique("jaus-ocu plot band texel"),
        egui::ColorImage::filled([1, 1], egui::Color32::WHITE),
        egui::TextureOptions::NEAREST,
    )
    .id()
}

/// The value range a lane shows: the operator's zoom, else `lines` fitted with `threshold`
/// in view and two labelled ticks.
fn lane_values(
    view: &PlotsView,
    lane: &LaneSlot,
    lines: &[(usize, LaneData)],
    threshold: Option<f64>,
    label: f64,
) -> (f64, f64) {
    let (lo, hi) = lines
        .iter()
        .map(|(_, d)| d.range())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (lo, hi)| {
            (a.min(lo), b.max(hi))
        });
    let height = f64::from(lane.data.height());
    let zoomed = view
        .value_zoom
        .iter()
        .find(|(k, _)| *k == lane.key)
        .map(|(_, y)| *y);
    zoomed
        .or_else(|| fit_y(lo, hi, threshold, height, label))
        .or_else(|| fit_y(0.0, 0.0, threshold, height, label))
        .unwrap_or((-1.0, 1.0))
}

/// Draws one lane: its lines over `range`, the cursor, the hover line and the threshold, and
/// its Y tick labels in the gutter. What it showed, and the width of its widest label.
fn draw_lane(ui: &mut egui::Ui, l: &LaneInput<'_>, caches: &mut PlotCaches) -> (PlotFrame, f32) {
    let LaneInput {
        input,
        view,
        settings,
        theme,
        plot,
        lane,
        range,
        label,
        white,
    } = *l;
    let units = units(settings);
    let chans: Vec<Channel> = lane
        .lane
        .channels
        .iter()
        .filter_map(|&i| plot.channels.get(i).cloned())
        .collect();
    let lines = lane_lines(
        input.session,
        view,
        caches,
        &chans,
        units,
        range,
        lane.data.width(),
    );
    caches.want_band(lane.key);
    let caches = &*caches;
    let memo = caches.band(lane.key);
    let threshold = settings.force_threshold.filter(|_| shows_force(&chans));
    let y = lane_values(view, lane, &lines, threshold, label);
    let colours: Vec<_> = lines
        .iter()
        .map(|(i, _)| theme.series[chans[*i].colour % theme.series.len()])
        .collect();
    let last = lane.row.height() > lane.data.height() + 0.5;
    let points: usize = lines.iter().map(|(_, d)| d.points()).sum();
    let plot_rect = Rect::from_min_max(pos2(lane.data.left(), lane.row.top()), lane.row.max);
    let mut child = ui.new_child(UiBuilder::new().max_rect(plot_rect));
    let cursor = input.shown.cursor();
    let hover_line = view.hover;
    let response = Plot::new(("plot", lane.key.0, lane.key.1))
        .id(egui::Id::NULL.with(("plot", lane.key.0, lane.key.1)))
        .width(plot_rect.width())
        .height(plot_rect.height())
        .show_axes([last, false])
        .custom_x_axes(vec![AxisHints::new_x().min_thickness(TIME_AXIS_HEIGHT)])
        .y_grid_spacer(uniform_grid_spacer(move |g: GridInput| {
            // egui_plot's base step is 8 points' worth of value (its grid spacing minimum).
            y_steps(
                g.bounds,
                8.0 / g.base_step_size.max(f64::MIN_POSITIVE),
                label,
            )
        }))
        // The hover read-out is in the legends, never over the data.
        .show_x(false)
        .show_y(false)
        // The panel pans and zooms (`pointer`): the same range for every plot.
        .sense(Sense::hover())
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .allow_axis_zoom_drag(false)
        .show(&mut child, |plot_ui| {
            plot_ui.set_plot_bounds_x(range.0..=range.1);
            plot_ui.set_plot_bounds_y(y.0..=y.1);
            if lines_drawn() {
                let scale = pixels_per_unit(plot_ui.ctx(), lane.data, range, y);
                draw_lines(plot_ui, lines, &colours, memo, white, scale);
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
        });
    let transform = response.transform;
    let data = *transform.frame();
    let bounds = transform.bounds();
    let shown_y = (bounds.min()[1], bounds.max()[1]);
    let gutter = Rect::from_min_max(
        pos2(lane.row.left(), data.top()),
        pos2(data.left(), data.bottom()),
    );
    let (ticks, widest) = paint_ticks(ui, gutter, shown_y, label, lane.lane.unit);
    let frame = PlotFrame {
        plot: plot.index,
        unit: lane.lane.unit,
        x: (bounds.min()[0], bounds.max()[0]),
        y: shown_y,
        rect: data,
        height: data.height(),
        width_px: data.width() * ui.ctx().pixels_per_point(),
        ticks,
        signals: chans.iter().filter(|c| c.drawn()).count(),
        points,
    };
    (frame, widest)
}

/// Paints the labelled Y ticks of a data area whose rows are `gutter`'s (value range `y`)
/// right-aligned in `gutter`: how many, and the widest label's width.
fn paint_ticks(ui: &egui::Ui, gutter: Rect, y: (f64, f64), label: f64, unit: &str) -> (usize, f32) {
    let (values, step) = tick_values(y, f64::from(gutter.height()), label);
    let painter = ui
        .painter()
        .with_clip_rect(gutter.intersect(ui.clip_rect()));
    let font = egui::TextStyle::Body.resolve(ui.style());
    let colour = ui.visuals().text_color();
    let px = f64::from(gutter.height()) / (y.1 - y.0);
    let mut widest: f32 = 0.0;
    for v in &values {
        let text = tick_label(*v, step, unit);
        let galley = painter.layout_no_wrap(text, font.clone(), colour);
        let size = galley.size();
        widest = widest.max(size.x);
        let centre = gutter.top() + ((y.1 - v) * px) as f32;
        let pos = pos2(
            gutter.right() - LABEL_MARGIN - size.x,
            centre - size.y / 2.0,
        );
        painter.galley(pos, galley, colour);
    }
    (values.len(), widest)
}

/// How far, in physical pixels, a plot line may pass from a sample it leaves out
/// ([`simplify`]): a sixth of the line's width, below what anti-aliasing shows.
pub const LINE_TOLERANCE_PX: f64 = 0.25;

/// Physical pixels per plot unit along x and y with `x` and `y` shown in `data`.
fn pixels_per_unit(ctx: &egui::Context, data: Rect, x: (f64, f64), y: (f64, f64)) -> [f64; 2] {
    let ppp = f64::from(ctx.pixels_per_point());
    [
        f64::from(data.width()) * ppp / (x.1 - x.0),
        f64::from(data.height()) * ppp / (y.1 - y.0),
    ]
}

/// The data lines: the decimated ones as one band mesh ([`EnvelopeBand`], kept in `memo`,
/// drawn with the texture `white`), raw ones run by run without the points the screen cannot
/// show at `scale` ([`simplify`]).
fn draw_lines<'a>(
    plot_ui: &mut egui_plot::PlotUi<'a>,
    lines: Vec<(usize, LaneData)>,
    colours: &[egui::Color32],
    memo: Option<&'a BandMemo>,
    white: egui::TextureId,
    scale: [f64; 2],
) {
    // The band's tolerance in points (`scale` is in physical pixels).
    let ppp = plot_ui.ctx().pixels_per_point();
    let mut bands: Option<EnvelopeBand<'a>> = None;
    for ((i, data), colour) in lines.into_iter().zip(colours) {
        let l = match data {
            LaneData::Band { lines, scale: unit } => {
                let band =
                    EnvelopeBand::with_range(lines.lines, lines.range, *colour, 1.5, "bands")
                        .scale(unit);
                bands = Some(match bands {
                    Some(b) => b.with(band),
                    None => band,
                });
                continue;
            }
            LaneData::Raw(l) => l,
        };
        for (k, run) in l.runs().enumerate() {
            let mut drawn = Vec::with_capacity(run.len().min(4096));
            simplify(run, scale, LINE_TOLERANCE_PX, &mut drawn);
            plot_ui.line(
                Line::new("", PlotPoints::from(drawn))
                    .id((i, k))
                    .color(*colour)
                    .width(1.5)
                    .allow_hover(false),
            );
        }
    }
    if let Some(mut band) = bands {
        band = band
            .texture(white)
            .tolerance(LINE_TOLERANCE_PX as f32 / ppp);
        if let Some(memo) = memo {
            band = band.memo(memo);
        }
        plot_ui.add(band);
    }
}

/// Whether the data lines are drawn: always, unless the environment variable
/// `JAUS_OCU_PLOT_LINES=off` leaves them out for measuring what they cost (ARCHITECTURE.md,
/// "Where a frame's time goes").
fn lines_drawn() -> bool {
    static DRAWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DRAWN.get_or_init(|| std::env::var("JAUS_OCU_PLOT_LINES").as_deref() != Ok("off"))
}

/// What a plot's legend row asks: to remove the plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LegendAsk {
    Nothing,
    Remove,
}

/// What a legend row shows.
struct LegendInput<'a> {
    input: &'a PlotsInput<'a>,
    /// The time under the pointer, when a plot is hovered.
    hover: Option<f64>,
    /// The plot's index in the layout.
    index: usize,
    /// The plot's channels.
    channels: &'a [Channel],
}

/// One chip of a legend.
struct Chip {
    text: RichText,
    tooltip: String,
    /// The signal it hides or shows when clicked (none: a signal the arm lacks, a note).
    signal: Option<SignalRef>,
    shown: bool,
    /// Its width, points: at least what a value of three digits takes, so chips do not move
    /// as values change.
    width: f32,
}

/// The chips of a legend at time `t` (`hover`: the sample nearest it).
fn chips(
    ui: &egui::Ui,
    l: &LegendInput<'_>,
    units: Units,
    theme: &Theme,
    empty: bool,
) -> Vec<Chip> {
    let padding = 2.0 * ui.spacing().button_padding.x;
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let body = egui::TextStyle::Body.resolve(ui.style());
    let measure = |text: &str, font: &egui::FontId| {
        ui.painter()
            .layout_no_wrap(text.to_string(), font.clone(), theme.muted)
            .size()
            .x
    };
    let mut out = Vec::new();
    if empty {
        let text = "no signals: choose some with Signals";
        out.push(Chip {
            text: RichText::new(text).color(theme.muted),
            tooltip: "This plot has no signals yet".into(),
            signal: None,
            shown: true,
            width: measure(text, &body),
        });
    }
    let mixed = mixed(l.channels);
    let t = l.hover.unwrap_or(l.input.time);
    for c in l.channels {
        let name = c.label(mixed);
        let Some(info) = &c.info else {
            let text = format!("{name}: not on this arm");
            out.push(Chip {
                width: measure(&text, &body),
                text: RichText::new(text).color(theme.muted),
                tooltip: "The arm shown has no such signal (another arm's choice)".into(),
                signal: None,
                shown: true,
            });
            continue;
        };
        let unit = info.unit(units);
        let text = match value_at(l.input.session, c, units, t, l.hover.is_some()) {
            Some(v) => format!("{name} {}", value_text(v, unit)),
            None => format!("{name} — {unit}"),
        };
        let template = format!("{name} {}", value_text(-888.888_888, unit));
        let colour = if c.hidden {
            theme.muted
        } else {
            theme.series[c.colour % theme.series.len()]
        };
        let mut rich = RichText::new(text.clone()).monospace().color(colour);
        if c.hidden {
            // Said, not silent: struck through and dimmed, with a tooltip that says so.
            rich = rich.strikethrough();
        }
        let tooltip = if c.hidden {
            format!("{}: hidden: click to show", info.name)
        } else {
            format!("{} at the time shown; click to hide it", info.name)
        };
        out.push(Chip {
            width: measure(&text, &mono).max(measure(&template, &mono)) + padding,
            text: rich,
            tooltip,
            signal: Some(c.signal),
            shown: !c.hidden,
        });
    }
    out
}

/// Draws `chip`; a click hides or shows its signal in `spec`.
fn chip_ui(ui: &mut egui::Ui, chip: &Chip, spec: &mut PlotSpec) {
    let Some(signal) = chip.signal else {
        ui.add_sized(
            vec2(chip.width, ui.spacing().interact_size.y),
            egui::Label::new(chip.text.clone()),
        )
        .on_hover_text(&chip.tooltip);
        return;
    };
    let button =
        egui::Button::selectable(chip.shown, chip.text.clone()).min_size(vec2(chip.width, 0.0));
    if ui.add(button).on_hover_text(&chip.tooltip).clicked() {
        if chip.shown {
            spec.hidden.push(signal);
        } else {
            spec.hidden.retain(|s| *s != signal);
        }
    }
}

/// How many of chips `widths` fit in `room` points with `gap` between them, keeping room
/// for a `more`-wide "+N more" button when not all fit.
fn chips_that_fit(widths: &[f32], room: f32, gap: f32, more: f32) -> usize {
    let total: f32 = widths.iter().map(|w| w + gap).sum();
    if total <= room + 0.5 {
        return widths.len();
    }
    let mut used = more + gap;
    let mut n = 0;
    for w in widths {
        if used + w + gap > room + 0.5 {
            break;
        }
        used += w + gap;
        n += 1;
    }
    n
}

/// The plot's legend, one row above it whatever the number of signals: the signal picker
/// and the remove button, one chip per signal in its colour with its value at the drawn
/// time, or at the time under the pointer while a plot is hovered (click a chip to hide or
/// show the signal), the chips that do not fit in a "+N more" menu; at the row's end the
/// threshold when drawn, and a place kept for the hovered time.
fn legend_row(
    ui: &mut egui::Ui,
    l: &LegendInput<'_>,
    settings: &mut Settings,
    theme: &Theme,
) -> LegendAsk {
    let units = units(settings);
    let mut ask = LegendAsk::Nothing;
    let many = settings.plots.plots.len() > 1;
    let threshold = l
        .input
        .session
        .force_threshold()
        .filter(|_| shows_force(l.channels));
    let Some(spec) = settings.plots.plots.get_mut(l.index) else {
        return ask;
    };
    let chips = chips(ui, l, units, theme, spec.is_empty());
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let gap = ui.spacing().item_spacing.x;
    // The hovered time's place: as wide as the latest time of the session needs.
    let latest = l
        .input
        .session
        .span()
        .map_or(0.0, |(a, b)| a.abs().max(b.abs()))
        .max(l.input.time.abs());
    let slot = ui
        .painter()
        .layout_no_wrap(format!("at -{latest:.3} s"), mono, theme.accent)
        .size()
        .x;
    ui.horizontal(|ui| {
        plot_picker::picker(ui, spec, l.input.session, units, theme);
        if many
            && ui
                .small_button("×")
                .on_hover_text("Remove this plot")
                .clicked()
        {
            ask = LegendAsk::Remove;
        }
        let threshold_text = threshold.map(|th| format!("threshold ±{th} N"));
        let threshold_w = threshold_text.as_ref().map_or(0.0, |t| {
            ui.painter()
                .layout_no_wrap(
                    t.clone(),
                    egui::TextStyle::Body.resolve(ui.style()),
                    theme.threshold,
                )
                .size()
                .x
                + gap
        });
        let room = ui.available_width() - slot - gap - threshold_w;
        let widths: Vec<f32> = chips.iter().map(|c| c.width).collect();
        let more_w = ui
            .painter()
            .layout_no_wrap(
                "+99 more".to_string(),
                egui::TextStyle::Button.resolve(ui.style()),
                theme.muted,
            )
            .size()
            .x
            + 2.0 * ui.spacing().button_padding.x;
        let n = chips_that_fit(&widths, room, gap, more_w);
        for chip in &chips[..n] {
            chip_ui(ui, chip, spec);
        }
        if n < chips.len() {
            let folded = &chips[n..];
            let config =
                MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
            MenuButton::new(format!("+{} more", folded.len()))
                .config(config)
                .ui(ui, |ui| {
                    for chip in folded {
                        chip_ui(ui, chip, spec);
                    }
                })
                .0
                .on_hover_text("The signals whose chips do not fit in this row");
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let text = l.hover.map_or_else(String::new, |t| format!("at {t:.3} s"));
            ui.add_sized(
                vec2(slot, ui.spacing().interact_size.y),
                egui::Label::new(RichText::new(text).monospace().color(theme.accent)),
            )
            .on_hover_text("The values at the time under the pointer");
            if let Some(text) = threshold_text {
                ui.label(RichText::new(text).color(theme.threshold))
                    .on_hover_text("Crossings of |F| are marked on the timeline (threshold marks)");
            }
        });
    });
    ask
}

/// The panel's header: title, what the time range follows, window, threshold, add a plot,
/// samples; it wraps in a narrow window.
/// Says that `more` plots are left out: in the header's free part (`Ok`, short, the whole
/// text on hover), else in a row of its own under the plots (`Err`).
fn left_out(ui: &mut egui::Ui, more: usize, at: Result<Rect, Rect>, theme: &Theme) {
    let text = format!(
        "{more} more plot(s) below: make the tile taller (drag the gap at its edge) to see them"
    );
    match at {
        Ok(header_row) => {
            let mut child = ui.new_child(
                UiBuilder::new()
                    .max_rect(header_row)
                    .layout(egui::Layout::right_to_left(egui::Align::Center)),
            );
            child.set_clip_rect(header_row.intersect(ui.clip_rect()));
            child
                .add(
                    egui::Label::new(
                        RichText::new(format!("{more} more plot(s) below"))
                            .strong()
                            .color(theme.warn),
                    )
                    .truncate(),
                )
                .on_hover_text(text);
        }
        Err(row) => {
            // One line, cut to the row (whole on hover): a wrapped line ran past the tile.
            let mut child = ui.new_child(UiBuilder::new().max_rect(row));
            child.set_clip_rect(row.intersect(ui.clip_rect()));
            child
                .add(egui::Label::new(RichText::new(&text).color(theme.warn)).truncate())
                .on_hover_text(text);
        }
    }
}

/// Draws the header; returns the free part of its last row (right of its contents), where
/// the plots left out may be said.
fn header(
    ui: &mut egui::Ui,
    input: &PlotsInput<'_>,
    view: &mut PlotsView,
    settings: &mut Settings,
    theme: &Theme,
) -> Rect {
    let right = ui.max_rect().right();
    ui.horizontal_wrapped(|ui| {
        ui.heading("Plots");
        let replay = input.shown.is_replay();
        let whole_name = if replay {
            "Whole file"
        } else {
            "Whole session"
        };
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
        } else {
            if view.whole {
                ui.label(RichText::new(whole_name.to_lowercase()).color(theme.ok))
                    .on_hover_text("The plots show all of it; the cursor is the vertical line");
            }
            if ui
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
                view.follow_time();
            }
        }
        if !view.whole
            && ui
                .button(whole_name)
                .on_hover_text("Show all of it in the plots")
                .clicked()
        {
            view.show_whole();
        }
        ui.add(
            egui::Slider::new(&mut settings.plot_window_s, 1.0..=3600.0)
                .logarithmic(true)
                .suffix(" s")
                .text("window"),
        )
        .on_hover_text("Seconds of history shown while following");
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
        let last = ui.label(
            RichText::new(format!("{samples} samples"))
                .small()
                .color(theme.muted),
        );
        let row = last.rect;
        Rect::from_min_max(
            pos2(row.right() + 8.0, row.top() - 2.0),
            pos2(right.max(row.right() + 8.0), row.bottom() + 2.0),
        )
    })
    .inner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_starts_tall_enough_for_its_plots_but_gives_way_in_a_small_window() {
        // 1280×800: three plots of MIN_PLOT_HEIGHT fit in half the room.
        let h = default_panel_height(660.0, 3);
        assert!(
            h >= panel_height(3, MIN_PLOT_HEIGHT) - 1.0 && h <= 330.0,
            "{h}"
        );
        // 800×600: no more than 42 %; the plots that do not fit are left out, said below.
        assert_eq!(shown_plots(130.0, 30.0, &[1, 1, 1]), 1);
        assert_eq!(shown_plots(3.0 * 78.0, 30.0, &[1, 1, 1]), 3);
        assert_eq!(shown_plots(10.0, 30.0, &[1, 1, 1]), 1);
        assert_eq!(shown_plots(10.0, 30.0, &[]), 0);
        // A plot of two units takes two lanes.
        assert_eq!(shown_plots(3.0 * 78.0, 30.0, &[1, 1, 2]), 2);
        assert_eq!(
            shown_plots(3.0 * 78.0 + 48.0 + LANE_GAP, 30.0, &[1, 1, 2]),
            3
        );
        assert!(
            (panel_height_lanes(&[1, 1, 1], MIN_PLOT_HEIGHT) - panel_height(3, MIN_PLOT_HEIGHT))
                .abs()
                < 1e-3
        );
        assert!(default_panel_height(430.0, 3) <= 430.0 * 0.42 + 0.01);
        // One plot: a third, or the room of two plots when that is more.
        let one = default_panel_height(660.0, 1);
        assert!(
            (one - (660.0 * 0.34f32).max(MIN_PANEL_HEIGHT)).abs() < 1e-3,
            "{one}"
        );
    }
}
