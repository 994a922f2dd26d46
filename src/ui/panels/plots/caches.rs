//! The data a lane draws: the lines of its signals over the time range, from the envelope
//! caches where a series decimates ([`cached_lines`], [`LaneData::Band`]) or read raw
//! ([`plot_lines`]), and the value shown at a time ([`value_at`]). No drawing.

use super::lanes::Channel;
use crate::model::history::{History, Lines};
use crate::model::session::Session;
use crate::model::signals::{Series, Units};
use crate::ui::plot_caches::{BandLines, PlotCaches};

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

/// One drawn signal's data in a lane.
#[derive(Debug, Clone)]
pub enum LaneData {
    /// Min/max pairs per pixel column from the caches, drawn as an [`crate::ui::widgets::envelope_band::EnvelopeBand`] with
    /// the values multiplied by `scale` (the shown unit's).
    Band {
        /// The pairs and their range, in the history's units.
        lines: BandLines,
        /// The shown unit's scale.
        scale: f64,
    },
    /// Points in shown units, drawn as lines.
    Raw(Lines),
}

impl LaneData {
    /// Points held (a band's two per column).
    pub fn points(&self) -> usize {
        match self {
            Self::Band { lines, .. } => lines.lines.points.len(),
            Self::Raw(l) => l.points.len(),
        }
    }

    /// The smallest and largest value shown (`+inf, -inf` when none).
    pub fn range(&self) -> (f64, f64) {
        match self {
            Self::Band { lines, scale } => {
                let (a, b) = (lines.range.0 * scale, lines.range.1 * scale);
                (a.min(b), a.max(b))
            }
            Self::Raw(l) => l
                .points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p[1]), b.max(p[1]))
                }),
        }
    }
}

/// Lines of the drawn `channels` over `[t0, t1]` in `columns` columns as
/// [`plot_lines`], from `caches` where a series decimates (brought to this view by
/// [`PlotCaches::update`]): `(index into channels, data)`.
pub fn cached_lines(
    session: &Session,
    caches: &PlotCaches,
    channels: &[Channel],
    units: Units,
    range: (f64, f64),
    columns: usize,
) -> Vec<(usize, LaneData)> {
    let mut out = Vec::new();
    let mut raw = Vec::new();
    for (i, c) in channels.iter().enumerate() {
        if !c.drawn() {
            continue;
        }
        match caches.band_lines(c.signal) {
            Some(lines) => {
                let scale = c.info.as_ref().map_or(1.0, |info| info.scale(units));
                out.push((i, LaneData::Band { lines, scale }));
            }
            None => raw.push(c.clone()),
        }
    }
    if !raw.is_empty() {
        // Keep the indices into `channels`: the raw ones are drawn as `plot_lines` draws them.
        let hidden: Vec<Channel> = channels
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.hidden |= !raw.iter().any(|r| r.signal == c.signal);
                c
            })
            .collect();
        out.extend(
            plot_lines(session, &hidden, units, range, columns)
                .into_iter()
                .map(|(i, l)| (i, LaneData::Raw(l))),
        );
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
