//! What a plot is made of and how much room it takes: its signals resolved against the arm
//! shown ([`Channel`], [`channels`]), one lane per unit ([`Lane`], [`lanes`]), the panel's
//! heights ([`panel_height`], [`default_panel_height`]) and how many plots fit
//! ([`shown_plots`]). No drawing.

use crate::model::session::Session;
use crate::model::signals::{PlotSpec, Series, SignalInfo, SignalRef, Units, describe};
use crate::ui::settings::Settings;

/// The least width of the Y label gutter, points.
pub const MIN_GUTTER: f32 = 64.0;

/// The least height of one plot, points: two or three labelled Y ticks.
pub const MIN_PLOT_HEIGHT: f32 = 64.0;

/// The least height a plot (each lane of it) is drawn at when a small window gives the panel
/// less than it asks (800×600: the 3D arm keeps its room; two labelled ticks still show).
/// More plots than fit at this height are left out (a line says so).
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

/// The panel's height for `plots` plots of one lane each, `plot_height` each.
pub const fn panel_height(plots: usize, plot_height: f32) -> f32 {
    HEADER_HEIGHT + plots as f32 * (plot_height + LEGEND_HEIGHT) + TIME_AXIS_HEIGHT
}

/// The panel's height for plots of `lanes[i]` lanes each, `plot_height` each lane.
pub fn panel_height_lanes(lanes: &[usize], plot_height: f32) -> f32 {
    let plots: f32 = lanes
        .iter()
        .map(|&n| LEGEND_HEIGHT + lanes_height(n, plot_height))
        .sum();
    HEADER_HEIGHT + plots + TIME_AXIS_HEIGHT
}

/// The panel's starting height in a window area `available` points tall with `plots` plots:
/// a third of it, more to give each plot [`MIN_PLOT_HEIGHT`], never more than half of it, and
/// in a small window (800×600) no more than 42 % of it (the plots give way first; plots that
/// do not fit are left out, [`shown_plots`]).
pub fn default_panel_height(available: f32, plots: usize) -> f32 {
    default_panel_height_for(available, panel_height(plots.max(1), MIN_PLOT_HEIGHT))
}

/// [`default_panel_height`] for plots of `lanes[i]` lanes each ([`lane_counts`]): a plot of
/// several units asks for a lane per unit.
pub fn default_panel_height_lanes(available: f32, lanes: &[usize]) -> f32 {
    let wanted = if lanes.is_empty() {
        panel_height(1, MIN_PLOT_HEIGHT)
    } else {
        panel_height_lanes(lanes, MIN_PLOT_HEIGHT)
    };
    default_panel_height_for(available, wanted)
}

/// The panel's starting height in `available` points when it wants `wanted`.
fn default_panel_height_for(available: f32, wanted: f32) -> f32 {
    let cap = if available < 560.0 { 0.42 } else { 0.5 };
    (available * 0.34)
        .max(wanted.min(available * cap))
        .max(MIN_PANEL_HEIGHT.min(available * 0.42))
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

/// Whether the plot draws an end-effector force (the threshold applies to |F|).
pub fn shows_force(channels: &[Channel]) -> bool {
    channels.iter().any(|c| {
        c.drawn() && c.signal.series == Series::ForceTorque && !(3..6).contains(&c.signal.channel)
    })
}

/// One lane of a plot: the channels of one unit, drawn against one Y axis labelled in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The unit of its axis ("" for a plot without available signals).
    pub unit: &'static str,
    /// Its channels: indices into the plot's channels.
    pub channels: Vec<usize>,
}

/// The lanes of a plot of `channels` in `units`: one per unit, in the order the units first
/// appear, each with the channels in that unit (hidden ones included, so hiding a chip never
/// moves a lane). Signals the arm lacks are in none. A plot without available signals is one
/// lane without a unit.
pub fn lanes(channels: &[Channel], units: Units) -> Vec<Lane> {
    let mut out: Vec<Lane> = Vec::new();
    for (i, c) in channels.iter().enumerate() {
        if c.info.is_none() {
            continue;
        }
        let unit = c.unit(units);
        match out.iter_mut().find(|l| l.unit == unit) {
            Some(lane) => lane.channels.push(i),
            None => out.push(Lane {
                unit,
                channels: vec![i],
            }),
        }
    }
    if out.is_empty() {
        out.push(Lane {
            unit: "",
            channels: Vec::new(),
        });
    }
    out
}

/// Points between two lanes of one plot.
pub const LANE_GAP: f32 = 2.0;

/// The height of `lanes` lanes of one plot, each `height` tall, with the gaps between them.
fn lanes_height(lanes: usize, height: f32) -> f32 {
    let n = lanes.max(1) as f32;
    n * height + (n - 1.0) * LANE_GAP
}

/// How many lanes each plot of `settings` takes on the arm in `session`: what a layout sizing
/// the panel gives [`panel_height_lanes`].
pub fn lane_counts(session: &Session, settings: &Settings) -> Vec<usize> {
    let units = units(settings);
    settings
        .plots
        .plots
        .iter()
        .map(|spec| lanes(&channels(session, spec), units).len())
        .collect()
}

/// The least free width of the header's row, points, for the plots left out to be said
/// there.
pub const NOTE_IN_HEADER_W: f32 = 150.0;

/// How many of the plots of `lanes[i]` lanes each a panel with `room` points under its
/// header shows, each plot taking `legend` points for its legend (with its spacing) and its
/// lanes at least [`SMALLEST_PLOT_HEIGHT`] each, [`LANE_GAP`] apart: as many as fit (with
/// room left for the line that says the rest do not), at least one. A scrolled panel would hide widgets under the
/// bars below it and fight the wheel, which zooms the plots.
pub fn shown_plots(room: f32, legend: f32, lanes: &[usize]) -> usize {
    shown_plots_noted(room, legend, lanes, legend)
}

/// [`shown_plots`] with the line that says the rest do not fit taking `note` points (0
/// where it is written in the header's row).
pub fn shown_plots_noted(room: f32, legend: f32, lanes: &[usize], note: f32) -> usize {
    let cost = |n: usize| -> f32 {
        lanes[..n]
            .iter()
            .map(|&k| legend + lanes_height(k, SMALLEST_PLOT_HEIGHT))
            .sum()
    };
    let all = lanes.len();
    if room + 0.5 >= cost(all) {
        return all;
    }
    // Room for the note too.
    (1..all)
        .rev()
        .find(|&n| cost(n) + note <= room + 0.5)
        .unwrap_or(1)
        .min(all)
}

/// The unit choices of `settings`.
pub fn units(settings: &Settings) -> Units {
    Units {
        degrees: settings.degrees,
        millimetres: settings.millimetres,
    }
}
