//! What the plots keep from frame to frame so that a frame costs what changed: the envelope
//! of each history drawn ([`EnvelopeCache`]), each decimated signal's lines read from it, and
//! each band's mesh ([`BandMemo`]). Derived data, never state: dropping it
//! ([`PlotCaches::default`]) only makes the next frame compute everything again.
//!
//! A signal's lines are read again only when its cache's [`EnvelopeCache::revision`] or its
//! gap threshold changed, and replaced only when they read differently; a band's mesh is
//! built again only when its lines or the plot's transform did ([`crate::ui::widgets::envelope_band`]). While the plots show a past range, or
//! follow a drawn time that brings no new sample into a column, a frame builds nothing.

use std::sync::Arc;

use crate::model::history::{EnvelopeCache, Lines};
use crate::model::session::Session;
use crate::model::signals::{Series, SignalRef};
use crate::ui::widgets::envelope_band::BandMemo;

/// What a band is drawn for: a lane (the plot's id, the lane's unit); one band draws all of
/// a lane's decimated signals.
pub type BandId = (u32, &'static str);

/// The plots' caches (module documentation).
#[derive(Debug, Default)]
pub struct PlotCaches {
    held: Vec<SeriesCache>,
    /// One memo per band drawn, with the frame it was last asked for.
    bands: Vec<(BandId, u64, BandMemo)>,
    /// Frames updated.
    frame: u64,
}

/// One series' cache, its gap threshold this frame, and the lines read from it.
#[derive(Debug)]
struct SeriesCache {
    series: Series,
    cache: EnvelopeCache,
    gap: f64,
    lines: Vec<ChannelLines>,
}

/// One channel's lines as the cache's revision and the gap threshold gave them.
#[derive(Debug)]
struct ChannelLines {
    channel: usize,
    revision: u64,
    gap: f64,
    lines: Arc<Lines>,
    /// The smallest and largest value in them.
    range: (f64, f64),
}

/// A decimated signal's lines: min/max pairs per column, shared with the cache.
#[derive(Debug, Clone)]
pub struct BandLines {
    /// The pairs, run after run, in the history's units.
    pub lines: Arc<Lines>,
    /// Their smallest and largest value (`+inf, -inf` when empty).
    pub range: (f64, f64),
}

impl PlotCaches {
    /// Brings the cache of every series in `wanted` (with the channels of it drawn) to
    /// `range` over `columns` columns, once per history per frame, and drops the others;
    /// reads again the lines of the channels whose view changed; drops the band memos not
    /// asked for since the last update.
    pub fn update(
        &mut self,
        session: &Session,
        wanted: &[(Series, Vec<usize>)],
        range: (f64, f64),
        columns: usize,
    ) {
        let frame = self.frame;
        self.bands.retain(|(_, seen, _)| *seen >= frame);
        self.frame += 1;
        self.held
            .retain(|c| wanted.iter().any(|(s, _)| *s == c.series));
        for (series, chans) in wanted {
            let history = series.history(session);
            let k = match self.held.iter().position(|c| c.series == *series) {
                Some(k) => k,
                None => {
                    self.held.push(SeriesCache {
                        series: *series,
                        cache: EnvelopeCache::new(),
                        gap: f64::INFINITY,
                        lines: Vec::new(),
                    });
                    self.held.len() - 1
                }
            };
            let held = &mut self.held[k];
            held.cache.update(history, range, columns, chans);
            held.gap = history.gap_threshold(range.0, range.1);
            held.lines.retain(|l| chans.contains(&l.channel));
            if !held.cache.decimated() {
                held.lines.clear();
                continue;
            }
            let revision = held.cache.revision();
            for &channel in chans {
                let gap = held.gap;
                let k = match held.lines.iter().position(|l| l.channel == channel) {
                    Some(k)
                        if held.lines[k].revision == revision
                            && held.lines[k].gap.to_bits() == gap.to_bits() =>
                    {
                        continue;
                    }
                    Some(k) => k,
                    None => {
                        held.lines.push(ChannelLines {
                            channel,
                            revision: revision.wrapping_sub(1),
                            gap,
                            lines: Arc::default(),
                            range: (f64::INFINITY, f64::NEG_INFINITY),
                        });
                        held.lines.len() - 1
                    }
                };
                let lines = held.cache.lines(channel, gap);
                let l = &mut held.lines[k];
                (l.revision, l.gap) = (revision, gap);
                // Samples that change no column's min/max (most, following a long window)
                // keep the lines, and so the meshes drawn from them.
                if *l.lines != lines {
                    l.range = lines
                        .points
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                            (a.min(p[1]), b.max(p[1]))
                        });
                    l.lines = Arc::new(lines);
                }
            }
        }
    }

    /// The lines of `signal` when its series decimates this frame.
    pub fn band_lines(&self, signal: SignalRef) -> Option<BandLines> {
        let held = self
            .held
            .iter()
            .find(|c| c.series == signal.series && c.cache.decimated())?;
        let l = held.lines.iter().find(|l| l.channel == signal.channel)?;
        Some(BandLines {
            lines: l.lines.clone(),
            range: l.range,
        })
    }

    /// Makes sure a memo exists for band `id` and marks it asked for this frame.
    pub fn want_band(&mut self, id: BandId) {
        let frame = self.frame;
        match self.bands.iter_mut().find(|(b, _, _)| *b == id) {
            Some((_, seen, _)) => *seen = frame,
            None => self.bands.push((id, frame, BandMemo::default())),
        }
    }

    /// The memo of band `id` (after [`Self::want_band`] asked for it).
    pub fn band(&self, id: BandId) -> Option<&BandMemo> {
        self.bands
            .iter()
            .find(|(b, _, _)| *b == id)
            .map(|(_, _, m)| m)
    }

    /// Band memos held.
    pub fn bands(&self) -> usize {
        self.bands.len()
    }

    /// Band meshes built so far, every band memo held counted.
    pub fn meshes_built(&self) -> u64 {
        self.bands.iter().map(|(_, _, m)| m.built()).sum()
    }

    /// Column min/max pairs computed this frame, every series and channel.
    pub fn computed(&self) -> usize {
        self.held.iter().map(|c| c.cache.computed()).sum()
    }

    /// Bytes the caches hold: envelopes, lines and meshes.
    pub fn memory_bytes(&self) -> usize {
        let lines: usize = self
            .held
            .iter()
            .flat_map(|c| &c.lines)
            .map(|l| (l.lines.points.capacity() * 2 + l.lines.breaks.capacity()) * 8)
            .sum();
        let meshes: usize = self.bands.iter().map(|(_, _, m)| m.memory_bytes()).sum();
        self.held
            .iter()
            .map(|c| c.cache.memory_bytes())
            .sum::<usize>()
            + lines
            + meshes
    }
}
