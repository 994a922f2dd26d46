//! Force/torque plots: Fx Fy Fz (N) with |F|, and Tx Ty Tz (N·m), on linked time axes. Points
//! are decimated before `egui_plot` sees them (min/max envelope per pixel column over the
//! time-indexed [`History`] of the session), so hours of 1 kHz data stay
//! fluid. Following, the window ends at the drawn time (now live, the cursor in replay); drag
//! or zoom pauses, `L` returns. A vertical line marks the cursor when there is one.

use eframe::egui::{self, RichText};
use egui_plot::{HLine, Legend, Line, Plot, PlotBounds, VLine};

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
}

impl Default for PlotsView {
    fn default() -> Self {
        Self {
            follow: true,
            range: None,
            decimate: true,
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
    let response = Plot::new(id)
        .height(height)
        .link_axis(group, [true, false])
        .legend(Legend::default())
        .y_axis_label(unit)
        .allow_drag(true)
        .allow_zoom(true)
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
                plot_ui.hline(HLine::new("threshold", th).color(theme.danger));
                plot_ui.hline(HLine::new("threshold", -th).color(theme.danger));
            }
            let b = plot_ui.plot_bounds();
            let hover = plot_ui
                .pointer_coordinate()
                .and_then(|p| history.nearest(hover_channel, p.x));
            (
                b.min()[0],
                b.max()[0],
                plot_ui.response().dragged()
                    || plot_ui.response().hovered()
                        && plot_ui.ctx().input(|i| i.smooth_scroll_delta.y != 0.0),
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
        let replay = input.shown.read_only();
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
            .on_hover_text("Show ± force threshold lines")
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
    let h = ((ui.available_height() - 10.0) / 2.0).max(60.0);
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
}
