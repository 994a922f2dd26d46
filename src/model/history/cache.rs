//! The plots' envelope of a [`History`] kept from frame to frame ([`EnvelopeCache`]), so a
//! frame costs what changed (new samples, newly exposed columns), not the history's length.
//!
//! **Anchored columns.** The columns are on an absolute time grid: column `k` is
//! `[k·dt, (k+1)·dt)` with `dt` the window over the plot's width ([`column_width`], rounded so
//! that a window of fixed length gives the same `dt` every frame). While the plots follow the
//! drawn time the window slides by whole columns over the grid and a column once computed
//! stays valid: each frame computes only the columns past the last *final* one (a column is
//! final when samples after its end exist, so no later sample can fall in it, and its snapped
//! end does not wait on an unfinished block) and the columns newly exposed. The window
//! `[t0, t1]` is drawn as the columns it touches, the first and the last partly outside it:
//! against columns starting at `t0` (what [`History::plot_lines_multi`] draws) the picture
//! moves by less than one column, less than a pixel.
//!
//! **Column edges** snap to floor blocks as the module documentation of [`History`] says,
//! when the window holds at least a floor block per column; found in the cache's own index of
//! floor-block start times (every 64th sample time at the first floor; the envelope tier's
//! block start times are those already), kept up to date from the history as it grows: a few
//! hundred kilobytes that stay in the processor's caches, where searching the time column
//! itself missed them on every probe. Snapped edges read the same before and after compaction,
//! so compaction keeps a cache; a coarsened floor changes the history's
//! [`History::generation`] and the cache starts over. Zoomed in further (no snapping), edges
//! are found in the time column (close together there, so that is cheap).
//!
//! **Keyed by what makes it invalid:** the history's generation, the floor block, `dt`,
//! whether edges snap, and, unsnapped, the start of the exact tier. The cache holds the
//! column bounds and times once per history and the min/max of the channels asked for in the
//! last update (the others are dropped).

use super::{History, Lines, MinMax, gallop};

/// The width of one column for `columns` columns over `[t0, t1]`, s: the exact width with
/// its last 24 bits cleared (a relative change below 3e-9), so that a sliding window of a
/// fixed length, whose `t1 - t0` rounds differently from frame to frame, keeps one grid.
pub fn column_width(t0: f64, t1: f64, columns: usize) -> f64 {
    let dt = (t1 - t0) / columns as f64;
    f64::from_bits(dt.to_bits() & !((1u64 << 24) - 1))
}

/// What a cache's columns are valid for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key {
    generation: u64,
    floor: usize,
    dt: u64,
    snap: bool,
    /// The first exact sample's absolute index when unsnapped (unsnapped edges in the
    /// envelope tier round to blocks, so they move when samples are compacted), else 0.
    base: usize,
}

/// One channel's min/max per cached column.
#[derive(Debug, Clone)]
struct Held {
    channel: usize,
    columns: Vec<MinMax>,
}

/// One column of a cached envelope (for tests and read-outs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The column's index on the grid: it covers `[index·dt, (index+1)·dt)`.
    pub index: i64,
    /// Absolute sample indices `[from, to)` of the samples in it (both tiers).
    pub samples: (usize, usize),
    /// Smallest value (NaN samples left out; `+inf` when none).
    pub min: f64,
    /// Largest value (`-inf` when none).
    pub max: f64,
}

/// A history's envelope per anchored pixel column, kept across frames (module
/// documentation). Pure data: the plot panel keeps one per history it draws.
#[derive(Debug, Clone, Default)]
pub struct EnvelopeCache {
    key: Option<Key>,
    /// The generation and floor the start index was read at.
    starts_key: Option<(u64, usize)>,
    /// The start time of every floor block, both tiers, by absolute block index.
    starts: Vec<f64>,
    /// The grid index of the first cached column.
    k0: i64,
    /// Column `k0 + i` holds absolute samples `edges[i]..edges[i + 1]`.
    edges: Vec<usize>,
    /// The time of each column's first and last sample (NaN when it has none).
    first: Vec<f64>,
    last: Vec<f64>,
    /// How many leading columns are final.
    fixed: usize,
    /// Column width, s.
    dt: f64,
    /// The channels asked for in the last update.
    held: Vec<Held>,
    /// Whether the last update decimated (else the view is drawn from raw samples).
    decimated: bool,
    /// Columns whose min/max were computed in the last update (every channel counted).
    computed: usize,
    /// Counts the updates after which the view read differently ([`Self::revision`]).
    revision: u64,
    /// What the view was after the last update: key, first column, column edges, channels.
    seen: Seen,
}

/// The view an update left ([`EnvelopeCache::revision`]): with the history append-only and
/// the key unchanged, equal edges hold equal samples, so equal views read equal columns.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    key: Option<Key>,
    decimated: bool,
    k0: i64,
    edges: Vec<usize>,
    channels: Vec<usize>,
}

impl EnvelopeCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the cache to the view of `h` over `[t0, t1]` in `columns` pixel columns for
    /// `channels`, computing only what it lacks. `false` when the view is not decimated
    /// (at most two samples per column, all exact, or an invalid view): the plot then draws
    /// the raw samples ([`History::plot_lines_multi`]) and the cache holds nothing.
    pub fn update(
        &mut self,
        h: &History,
        (t0, t1): (f64, f64),
        columns: usize,
        channels: &[usize],
    ) -> bool {
        self.computed = 0;
        let valid = columns > 0 && t1 > t0 && t0.is_finite() && t1.is_finite() && !h.is_empty();
        let snap = valid && h.snaps(t0, t1, columns);
        let raw = !snap
            && !h.touches_envelope(t0, t1)
            && h.t.partition_point(|x| *x <= t1) - h.index_at(t0) <= 2 * columns;
        let dt = if valid {
            column_width(t0, t1, columns)
        } else {
            0.0
        };
        if !valid || raw || dt <= 0.0 {
            self.clear_columns();
            self.key = None;
            self.decimated = false;
            self.note_revision();
            return false;
        }
        self.decimated = true;
        let key = Key {
            generation: h.generation,
            floor: h.floor_block(),
            dt: dt.to_bits(),
            snap,
            base: if snap { 0 } else { h.base },
        };
        if self.key != Some(key) {
            self.clear_columns();
            self.key = Some(key);
            self.dt = dt;
        }
        if snap {
            self.sync_starts(h);
        }
        let ka = (t0 / dt).floor() as i64;
        let kb = ((t1 / dt).ceil() as i64).max(ka + 1);
        self.keep(ka, kb);
        self.held.retain(|c| channels.contains(&c.channel));
        let n = self.first.len();
        // New channels: every column held so far.
        for &c in channels {
            if c < h.channels.len() && !self.held.iter().any(|x| x.channel == c) {
                let columns = self.edges.windows(2).map(|w| minmax(h, c, w)).collect();
                self.computed += n;
                self.held.push(Held {
                    channel: c,
                    columns,
                });
            }
        }
        self.extend(h, kb, snap);
        self.note_revision();
        true
    }

    /// Counts a new revision when the view differs from the last update's.
    fn note_revision(&mut self) {
        let same = self.seen.key == self.key
            && self.seen.decimated == self.decimated
            && self.seen.k0 == self.k0
            && self.seen.edges == self.edges
            && self.seen.channels.len() == self.held.len()
            && self
                .held
                .iter()
                .zip(&self.seen.channels)
                .all(|(h, c)| h.channel == *c);
        if same {
            return;
        }
        self.revision += 1;
        self.seen.key = self.key;
        self.seen.decimated = self.decimated;
        self.seen.k0 = self.k0;
        self.seen.edges.clone_from(&self.edges);
        self.seen.channels.clear();
        self.seen
            .channels
            .extend(self.held.iter().map(|h| h.channel));
    }

    /// Changes each time an update leaves the view reading differently (other columns,
    /// other samples in them, other channels): what [`Self::lines`] returns is the same
    /// while this is. A frame that adds no sample to the view keeps it.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Drops every column (the key is kept).
    fn clear_columns(&mut self) {
        self.edges.clear();
        self.first.clear();
        self.last.clear();
        self.fixed = 0;
        for c in &mut self.held {
            c.columns.clear();
        }
    }

    /// Keeps the final columns within `[ka, kb)` and starts the cache at `ka`: anything
    /// before `ka` not held (the view moved back) starts it over.
    fn keep(&mut self, ka: i64, kb: i64) {
        let held_to = self.k0 + self.fixed as i64;
        if self.edges.is_empty() || ka < self.k0 || ka >= held_to {
            self.clear_columns();
            self.k0 = ka;
            return;
        }
        let keep = (held_to.min(kb) - self.k0) as usize;
        let drop = (ka - self.k0) as usize;
        self.edges.truncate(keep + 1);
        self.edges.drain(..drop);
        for v in [&mut self.first, &mut self.last] {
            v.truncate(keep);
            v.drain(..drop);
        }
        for c in &mut self.held {
            c.columns.truncate(keep);
            c.columns.drain(..drop);
        }
        self.k0 = ka;
        self.fixed = keep - drop;
    }

    /// Computes the columns from the last held one to `kb` (exclusive) for every held
    /// channel, and how many of them are final.
    fn extend(&mut self, h: &History, kb: i64, snap: bool) {
        let dt = self.dt;
        let f = h.floor_block();
        let len = h.len();
        let last_time = h.last_time().unwrap_or(f64::NEG_INFINITY);
        // The grid edge `k` as an absolute sample index, searched from `from`, and whether
        // no later sample can move it.
        let edge = |k: i64, from: usize, starts: &[f64]| -> (usize, bool) {
            let e = k as f64 * dt;
            let after = last_time >= e;
            if snap {
                let nb = gallop(starts, from / f, |x| x < e);
                let i = nb * f;
                (i.min(len), after && i <= len)
            } else {
                (h.bound(from, e, false, false, false), after)
            }
        };
        if self.edges.is_empty() {
            let (i, _) = edge(self.k0, 0, &self.starts);
            self.edges.push(i);
        }
        let mut k = self.k0 + self.first.len() as i64;
        let mut all_final = self.fixed == self.first.len();
        while k < kb {
            let a = *self.edges.last().unwrap_or(&0);
            let (b, fin) = edge(k + 1, a, &self.starts);
            let b = b.max(a);
            self.edges.push(b);
            let (t_first, t_last) = if b > a {
                (h.abs_time(a), h.abs_time(b - 1))
            } else {
                (f64::NAN, f64::NAN)
            };
            self.first.push(t_first);
            self.last.push(t_last);
            for c in &mut self.held {
                c.columns.push(minmax(h, c.channel, &[a, b]));
            }
            self.computed += self.held.len();
            if all_final && fin {
                self.fixed += 1;
            } else {
                all_final = false;
            }
            k += 1;
        }
    }

    /// Reads the start of every floor block of `h` not read yet (every one when the
    /// generation or the floor changed).
    fn sync_starts(&mut self, h: &History) {
        let f = h.floor_block();
        let key = (h.generation, f);
        let blocks = h.len().div_ceil(f);
        if self.starts_key != Some(key) || self.starts.len() > blocks {
            self.starts.clear();
            self.starts_key = Some(key);
        }
        let envelope = h.base / f;
        self.starts.reserve(blocks - self.starts.len());
        for b in self.starts.len()..blocks {
            self.starts.push(if b < envelope {
                h.block_t0[b]
            } else {
                h.t[b * f - h.base]
            });
        }
    }

    /// Whether the last update decimated (else nothing is held: draw the raw samples).
    pub fn decimated(&self) -> bool {
        self.decimated
    }

    /// Whether the last update's column edges snapped to floor blocks.
    pub fn snapped(&self) -> bool {
        self.key.is_some_and(|k| k.snap)
    }

    /// The column width of the last update, s ([`column_width`]).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Column min/max pairs computed by the last update, over every channel: what a frame
    /// cost (a cold view computes every column of every channel, a sliding one a few).
    pub fn computed(&self) -> usize {
        self.computed
    }

    /// Bytes held: the start index, the columns and the channels' min/max.
    pub fn memory_bytes(&self) -> usize {
        (self.starts.capacity()
            + self.edges.capacity()
            + self.first.capacity()
            + self.last.capacity())
            * 8
            + (self.seen.edges.capacity() + self.seen.channels.capacity()) * 8
            + self
                .held
                .iter()
                .map(|c| c.columns.capacity() * 8 + std::mem::size_of::<Held>())
                .sum::<usize>()
    }

    /// The columns of `channel` held (the view of the last update), empty columns included.
    pub fn columns(&self, channel: usize) -> Vec<Column> {
        let Some(held) = self.held.iter().find(|c| c.channel == channel) else {
            return Vec::new();
        };
        held.columns
            .iter()
            .enumerate()
            .map(|(i, m)| Column {
                index: self.k0 + i as i64,
                samples: (self.edges[i], self.edges[i + 1]),
                min: f64::from(m.min),
                max: f64::from(m.max),
            })
            .collect()
    }

    /// The plot line of `channel` over the view of the last update: a min/max pair at the
    /// middle of each column with samples, broken where consecutive samples are more than
    /// `gap` seconds apart (and more than a column: a narrower gap cannot be drawn) or values
    /// are missing, as [`History::plot_lines_multi`] breaks them. Empty when `channel` was
    /// not asked for.
    pub fn lines(&self, channel: usize, gap: f64) -> Lines {
        let mut lines = Lines::default();
        let Some(held) = self.held.iter().find(|c| c.channel == channel) else {
            return lines;
        };
        let gap = gap.max(self.dt);
        lines.points.reserve(2 * held.columns.len());
        let mut last: Option<f64> = None;
        let mut missing = false;
        for (i, m) in held.columns.iter().enumerate() {
            if self.edges[i + 1] <= self.edges[i] {
                continue;
            }
            if m.min > m.max {
                missing = true;
                continue;
            }
            if missing || last.is_some_and(|p| self.first[i] - p > gap) {
                lines.break_here();
            }
            let mid = ((self.k0 + i as i64) as f64 + 0.5) * self.dt;
            lines.points.push([mid, f64::from(m.min)]);
            lines.points.push([mid, f64::from(m.max)]);
            last = Some(self.last[i]);
            missing = false;
        }
        lines
    }
}

/// The min/max of `channel` over absolute samples `w[0]..w[1]`.
fn minmax(h: &History, channel: usize, w: &[usize]) -> MinMax {
    if w[1] <= w[0] {
        return MinMax::EMPTY;
    }
    h.range_min_max(channel, w[0], w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sliding_window_of_fixed_length_keeps_one_column_width() {
        let window = 8.0 * 3600.0;
        let dt = column_width(0.0, window, 1216);
        let mut t1 = window;
        for _ in 0..10_000 {
            t1 += 0.033;
            assert_eq!(column_width(t1 - window, t1, 1216).to_bits(), dt.to_bits());
        }
        assert!((dt - window / 1216.0).abs() < dt * 1e-8);
    }

    #[test]
    fn the_generation_survives_compaction_and_changes_with_the_floor() {
        let mut h = History::new(1);
        h.set_memory_limit(Some(300_000));
        let g = h.generation();
        let mut floor_changed_at = None;
        for i in 0..600_000 {
            h.push(i as f64 * 0.01, &[1.0]);
            if floor_changed_at.is_none() && h.floor_block() > 64 {
                floor_changed_at = Some(i);
                assert_ne!(h.generation(), g);
            }
            if floor_changed_at.is_none() {
                assert_eq!(h.generation(), g, "at {i}");
            }
        }
        assert!(floor_changed_at.is_some());
        assert!(h.exact_from().is_some());
        assert_ne!(
            h.clone().generation(),
            h.generation(),
            "a clone is a history of its own"
        );
    }

    #[test]
    fn the_start_index_is_every_floor_block_start_across_both_tiers() {
        let mut h = History::new(1);
        h.set_memory_limit(Some(300_000));
        let mut c = EnvelopeCache::new();
        for i in 0..100_000 {
            h.push(i as f64 * 0.01, &[1.0]);
            if i % 9_999 == 0 {
                c.sync_starts(&h);
            }
        }
        c.sync_starts(&h);
        assert!(h.exact_from().is_some() && h.floor_block() == 64);
        assert_eq!(c.starts.len(), 100_000usize.div_ceil(64));
        for (b, t) in c.starts.iter().enumerate() {
            assert_eq!(*t, (b * 64) as f64 * 0.01, "block {b}");
        }
    }

    #[test]
    fn the_revision_moves_only_when_the_view_reads_differently() {
        let mut h = History::new(1);
        for i in 0..60_000 {
            h.push(i as f64 * 0.01, &[(i as f64 * 0.001).sin()]);
        }
        let mut c = EnvelopeCache::new();
        let view = (0.0, 600.0);
        assert!(c.update(&h, view, 1000, &[0]));
        let r = c.revision();
        c.update(&h, view, 1000, &[0]);
        assert_eq!(c.revision(), r, "the same view of the same samples");
        // A sample inside the view: its column reads differently.
        h.push(600.0, &[3.0]);
        c.update(&h, view, 1000, &[0]);
        assert_ne!(c.revision(), r);
        let r = c.revision();
        // Another channel set, another view, a view too narrow to decimate.
        c.update(&h, view, 1000, &[]);
        assert_ne!(c.revision(), r);
        let r = c.revision();
        c.update(&h, (0.0, 300.0), 1000, &[]);
        assert_ne!(c.revision(), r);
        let r = c.revision();
        assert!(!c.update(&h, (0.0, 1.0), 1000, &[0]));
        assert_ne!(c.revision(), r);
    }
}
