//! Force/torque plots: Fx Fy Fz (N) with |F|, and Tx Ty Tz (N·m), on linked time axes. Points
//! are decimated before egui_plot sees them (min/max envelope per pixel column over the
//! time-indexed [`History`] of the session), so hours of 1 kHz data stay
//! fluid. Following, the window ends at the drawn time (now live, the cursor in replay); drag
//! or zoom pauses, `L` returns. A vertical line marks the cursor when there is one.

use eframe::egui::{self, RichText};
use egui_plot::{HLine, Legend, Line, Plot, PlotBounds, VLine};

use super::app::{FT_CHANNELS, OcuApp, read_session};
use super::theme::Theme;
use crate::model::history::History;

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

fn one_plot(
    app: &mut OcuApp,
    ui: &mut egui::Ui,
    theme: &Theme,
    id: &str,
    channels: &[usize],
    unit: &str,
    height: f32,
) {
    let group = egui::Id::NULL.with("ft_time_axis");
    let now = app.time();
    let follow = app.view.follow_live;
    let window = app.settings.plot_window_s;
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
    // The guard borrows a clone of the Arc, not `app`, so `app` stays free to change below.
    let session = app.session.clone();
    let guard = read_session(&session);
    let history = &guard.ft;
    let lines = if app.view.decimate {
        decimated(history, channels, q0, q1, columns)
    } else {
        // Every sample in range, as a naive plot would hand them over.
        decimated(history, channels, q0, q1, usize::MAX / 4)
    };
    let threshold = app.settings.force_threshold;
    let hover_channel = channels[0];
    let cursor = app.view.cursor;
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
    drop(guard);
    let (b0, b1, interacted, hover) = response.inner;
    ui.ctx().data_mut(|d| d.insert_temp(bounds_id, (b0, b1)));
    if id == "force" {
        app.view.plot_range = Some((b0, b1));
    }
    if interacted && app.view.follow_live {
        app.view.follow_live = false;
    }
    if let Some((t, v)) = hover {
        response.response.on_hover_text(format!(
            "{} at {t:.3} s: {v:.3} {unit}",
            FT_CHANNELS[hover_channel]
        ));
    }
}

/// Draws the panel.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    ui.horizontal(|ui| {
        ui.heading("End-effector force / torque");
        let replay = app.read_only();
        if app.view.follow_live {
            let (text, hover) = if replay {
                (
                    "following the cursor",
                    "The plots end at the timeline's cursor",
                )
            } else if app.view.cursor.is_some() {
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
            .on_hover_text("Follow the drawn time again (L)")
            .clicked()
        {
            app.view.follow_live = true;
        }
        ui.add(
            egui::Slider::new(&mut app.settings.plot_window_s, 1.0..=3600.0)
                .logarithmic(true)
                .suffix(" s")
                .text("window"),
        )
        .on_hover_text("Seconds of history shown while following live");
        let mut on = app.settings.force_threshold.is_some();
        if ui
            .checkbox(&mut on, "threshold")
            .on_hover_text("Show ± force threshold lines")
            .changed()
        {
            app.settings.force_threshold = on.then_some(50.0);
        }
        if let Some(th) = &mut app.settings.force_threshold {
            ui.add(egui::DragValue::new(th).range(0.0..=100_000.0).suffix(" N"));
        }
        let samples = read_session(&app.session).ft.len();
        ui.label(
            RichText::new(format!("{samples} samples"))
                .small()
                .color(theme.muted),
        );
    });
    let h = ((ui.available_height() - 10.0) / 2.0).max(60.0);
    one_plot(app, ui, theme, "force", &[0, 1, 2, 6], "N", h);
    one_plot(app, ui, theme, "torque", &[3, 4, 5], "N·m", h);
}
