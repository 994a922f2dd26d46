//! Reading a [`History`] for the plots: sample ranges by absolute index across both tiers,
//! column bounds snapped to floor blocks, the min/max envelope per pixel column, plot points
//! and plot lines broken at gaps (`plot_lines_multi`).

use super::{Envelope, GAP_FLOOR_S, GAP_PERIODS, History, LEVELS, Lines, MinMax, gallop};

impl History {
    /// The time of absolute sample `a`: exact, or a block's first or last sample (plot
    /// bounds in the envelope tier are whole blocks, so those are the ones asked for).
    pub(super) fn abs_time(&self, a: usize) -> f64 {
        if a >= self.base {
            return self.t[a - self.base];
        }
        let f = self.floor_block();
        if a.is_multiple_of(f) {
            self.block_t0[a / f]
        } else {
            self.block_t1[a / f]
        }
    }

    /// The interval after absolute sample `a` (in the envelope tier: its block's mean).
    fn abs_interval(&self, a: usize) -> f64 {
        if a >= self.base {
            return self.t[a - self.base + 1] - self.t[a - self.base];
        }
        let f = self.floor_block();
        let b = a / f;
        if a + 1 == self.base {
            return self.t.first().map_or(0.0, |t| t - self.block_t1[b]);
        }
        (self.block_t1[b] - self.block_t0[b]) / (f - 1) as f64
    }

    /// The absolute index where samples `< e` (`<= e` when `inclusive`) end, searched from
    /// absolute index `from`: in the envelope tier rounded up to a block boundary (down, to
    /// take in the block straddling `e`, when `down`); in the exact tier rounded up to a
    /// block boundary when `snap`, else exact.
    pub(super) fn bound(
        &self,
        from: usize,
        e: f64,
        inclusive: bool,
        snap: bool,
        down: bool,
    ) -> usize {
        let before = |x: f64| if inclusive { x <= e } else { x < e };
        let f = self.floor_block();
        let blocks = self.block_t0.len();
        if from < self.base || (from == self.base && blocks > 0) {
            let nb = gallop(&self.block_t0, from / f, before);
            if nb < blocks || self.t.first().is_none_or(|t| !before(*t)) {
                let straddled = nb > 0 && !before(self.block_t1[nb - 1]);
                return if down && straddled { nb - 1 } else { nb } * f;
            }
        }
        let r = self.base + gallop(&self.t, from.saturating_sub(self.base), before);
        if snap {
            r.div_ceil(f).saturating_mul(f).min(self.len())
        } else {
            r
        }
    }

    /// Whether some envelope-tier sample lies in `[t0, t1]`.
    pub(super) fn touches_envelope(&self, t0: f64, t1: f64) -> bool {
        match (self.block_t0.first(), self.block_t1.last()) {
            (Some(a), Some(b)) => *b >= t0 && *a <= t1,
            _ => false,
        }
    }

    /// Whether a view of `[t0, t1]` over `columns` columns holds at least one floor block
    /// per column: column edges then snap to block boundaries (module documentation).
    pub(super) fn snaps(&self, t0: f64, t1: f64, columns: usize) -> bool {
        if columns == 0 || t1 <= t0 || !t0.is_finite() || !t1.is_finite() {
            return false;
        }
        let i = self.bound(0, t0, false, true, false);
        let j = self.bound(i, t1, true, true, false);
        j.saturating_sub(i) >= self.floor_block().saturating_mul(columns)
    }

    /// Absolute sample bounds of `columns` equal time columns over `[t0, t1]` (the last
    /// column includes `t1`), snapped to floor blocks when `snap`; in the envelope tier
    /// always in whole blocks (the first column taking in the block straddling `t0`).
    fn abs_bounds(&self, t0: f64, t1: f64, columns: usize, snap: bool, out: &mut Vec<usize>) {
        out.clear();
        let dt = (t1 - t0) / columns as f64;
        let mut i = self.bound(0, t0, false, snap, !snap);
        out.push(i);
        for col in 0..columns {
            i = if col + 1 == columns {
                self.bound(i, t1, true, snap, false)
            } else {
                self.bound(i, t0 + dt * (col + 1) as f64, false, snap, false)
            }
            .max(i);
            out.push(i);
        }
    }

    /// Min and max of `channel` over absolute samples `[i, j)`: at each level, at most 7
    /// items at each end are taken one by one, the aligned middle moves up a level (each level
    /// is 8 blocks of the one below), so any range costs at most ~70 cheap steps. Bounds in
    /// the envelope tier are floor-block aligned, so only the levels kept there are read.
    pub(super) fn range_min_max(&self, channel: usize, i: usize, j: usize) -> MinMax {
        let c = &self.channels[channel];
        let base = self.base;
        let mut m = MinMax::EMPTY;
        let (mut lo, mut hi) = (i, j);
        // Raw samples up to the first 8-aligned index, and back from the last.
        while lo < hi && lo & 7 != 0 {
            m.add(c.values[lo - base]);
            lo += 1;
        }
        while hi > lo && hi & 7 != 0 {
            hi -= 1;
            m.add(c.values[hi - base]);
        }
        // Now [lo, hi) is whole level-0 blocks; climb.
        let (mut lo, mut hi) = (lo >> 3, hi >> 3);
        for (k, level) in c.levels.iter().enumerate() {
            let off = if k < self.floor { base / LEVELS[k] } else { 0 };
            if k + 1 == c.levels.len() {
                for b in &level[lo..hi] {
                    m.merge(*b);
                }
                break;
            }
            while lo < hi && lo & 7 != 0 {
                m.merge(level[lo - off]);
                lo += 1;
            }
            while hi > lo && hi & 7 != 0 {
                hi -= 1;
                m.merge(level[hi - off]);
            }
            lo >>= 3;
            hi >>= 3;
        }
        m
    }

    /// The min/max envelope of `channel` over `[t0, t1]` in `columns` equal time columns;
    /// columns without samples are left out. Column edges snap to floor blocks when the view
    /// holds at least one per column (module documentation); `t0`/`t1` of each item are the
    /// column's own edges.
    pub fn envelope(
        &self,
        channel: usize,
        t0: f64,
        t1: f64,
        columns: usize,
        out: &mut Vec<Envelope>,
    ) {
        out.clear();
        if channel >= self.channels.len()
            || columns == 0
            || t1 <= t0
            || !t0.is_finite()
            || !t1.is_finite()
        {
            return;
        }
        let dt = (t1 - t0) / columns as f64;
        let mut bounds = Vec::with_capacity(columns + 1);
        let snap = self.snaps(t0, t1, columns);
        self.abs_bounds(t0, t1, columns, snap, &mut bounds);
        for (col, w) in bounds.windows(2).enumerate() {
            if w[1] <= w[0] {
                continue;
            }
            let m = self.range_min_max(channel, w[0], w[1]);
            if m.min <= m.max {
                let c0 = t0 + dt * col as f64;
                let c1 = if col + 1 == columns { t1 } else { c0 + dt };
                out.push(Envelope {
                    t0: c0,
                    t1: c1,
                    min: f64::from(m.min),
                    max: f64::from(m.max),
                });
            }
        }
    }

    /// Exact sample index bounds of `columns` equal time columns over `[t0, t1]`: column `k`
    /// holds exact samples `bounds[k]..bounds[k + 1]` (the last column includes `t1`). The
    /// exact tier only, edges not snapped.
    pub fn column_bounds(&self, t0: f64, t1: f64, columns: usize, bounds: &mut Vec<usize>) {
        bounds.clear();
        if columns == 0 || t1 <= t0 || !t0.is_finite() || !t1.is_finite() {
            return;
        }
        let dt = (t1 - t0) / columns as f64;
        let mut i = self.index_at(t0);
        bounds.push(i);
        for col in 0..columns {
            i = if col + 1 == columns {
                gallop(&self.t, i, |x| x <= t1)
            } else {
                let e = t0 + dt * (col + 1) as f64;
                gallop(&self.t, i, |x| x < e)
            };
            bounds.push(i);
        }
    }

    /// Plot points for several channels over `[t0, t1]` at once (the column bounds are found
    /// once for all of them); see [`History::plot_points`]. Gaps are not broken here: see
    /// [`History::plot_lines_multi`].
    pub fn plot_points_multi(
        &self,
        channels: &[usize],
        t0: f64,
        t1: f64,
        columns: usize,
        bounds: &mut Vec<usize>,
    ) -> Vec<Vec<[f64; 2]>> {
        self.plot_lines_multi(channels, t0, t1, columns, f64::INFINITY, bounds)
            .into_iter()
            .map(|l| l.points)
            .collect()
    }

    /// The typical time between samples in `[t0, t1]`: the median of up to 33 sample
    /// intervals spread over the range (a few gaps do not move a median; in the envelope
    /// tier an interval is its block's mean); `None` with fewer than two samples.
    pub fn typical_period(&self, t0: f64, t1: f64) -> Option<f64> {
        let i = self.bound(0, t0, false, false, false);
        let j = self.bound(i, t1, true, false, false);
        if j < i + 2 {
            return None;
        }
        let pairs = j - i - 1;
        let take = pairs.min(33);
        let mut dts: Vec<f64> = (0..take)
            .map(|k| self.abs_interval(i + k * pairs / take))
            .collect();
        dts.sort_by(f64::total_cmp);
        dts.get(dts.len() / 2).copied()
    }

    /// The sample spacing beyond which [`History::plot_lines_multi`] breaks the line in
    /// `[t0, t1]`: [`GAP_PERIODS`] typical periods, at least [`GAP_FLOOR_S`] (jitter on a
    /// busy host delays single reports by a few periods; a stale episode or a lost link
    /// stops them for much longer).
    pub fn gap_threshold(&self, t0: f64, t1: f64) -> f64 {
        self.typical_period(t0, t1)
            .map_or(f64::INFINITY, |p| (p * GAP_PERIODS).max(GAP_FLOOR_S))
    }

    /// Plot lines for several channels over `[t0, t1]` in `columns` pixel columns, broken
    /// where samples are missing: where two consecutive samples are more than `gap` seconds
    /// apart (and, decimated, more than a column apart: a gap narrower than a pixel cannot
    /// be drawn), and where a channel's value is missing (NaN). Every sample when there are
    /// at most `2 * columns` of them (all exact), else a min/max pair per column (drawn as a
    /// vertical stroke, so spikes stay visible at any zoom; edges snapped to floor blocks as
    /// the module documentation says). The band `egui_plot` draws for such pairs is drawn
    /// per run, so it never spans a gap either. `bounds` is scratch (absolute indices).
    pub fn plot_lines_multi(
        &self,
        channels: &[usize],
        t0: f64,
        t1: f64,
        columns: usize,
        gap: f64,
        bounds: &mut Vec<usize>,
    ) -> Vec<Lines> {
        let valid = columns > 0 && t1 > t0 && t0.is_finite() && t1.is_finite();
        let snap = self.snaps(t0, t1, columns);
        if !snap && !self.touches_envelope(t0, t1) {
            let i = self.index_at(t0);
            let j = self.t.partition_point(|x| *x <= t1).max(i);
            if !valid || j - i <= 2 * columns {
                return channels
                    .iter()
                    .map(|&c| match self.channels.get(c) {
                        Some(ch) => self.raw_lines(&ch.values, i, j, gap),
                        None => Lines::default(),
                    })
                    .collect();
            }
        }
        if !valid {
            return vec![Lines::default(); channels.len()];
        }
        self.abs_bounds(t0, t1, columns, snap, bounds);
        let dt = (t1 - t0) / columns as f64;
        let gap = gap.max(dt);
        channels
            .iter()
            .map(|&c| self.decimated(c, bounds, t0, dt, gap))
            .collect()
    }

    /// A min/max pair per column of absolute `bounds`, broken at gaps and missing values.
    fn decimated(&self, c: usize, bounds: &[usize], t0: f64, dt: f64, gap: f64) -> Lines {
        let mut lines = Lines::default();
        if c >= self.channels.len() {
            return lines;
        }
        lines.points.reserve(bounds.len() * 2);
        // The last sample of the column drawn before, and whether values went missing since.
        let mut last: Option<usize> = None;
        let mut missing = false;
        for (k, w) in bounds.windows(2).enumerate() {
            if w[1] <= w[0] {
                continue;
            }
            let m = self.range_min_max(c, w[0], w[1]);
            if m.min > m.max {
                missing = true;
                continue;
            }
            let apart = last.is_some_and(|p| self.abs_time(w[0]) - self.abs_time(p) > gap);
            if missing || apart {
                lines.break_here();
            }
            let mid = t0 + dt * (k as f64 + 0.5);
            lines.points.push([mid, f64::from(m.min)]);
            lines.points.push([mid, f64::from(m.max)]);
            last = Some(w[1] - 1);
            missing = false;
        }
        lines
    }

    /// Every exact sample of `values` in `[i, j)`, broken where samples are more than `gap`
    /// apart or a value is missing.
    fn raw_lines(&self, values: &[f32], i: usize, j: usize, gap: f64) -> Lines {
        let mut lines = Lines::default();
        let mut last: Option<f64> = None;
        let mut missing = false;
        for (&v, &t) in values[i..j].iter().zip(&self.t[i..j]) {
            if v.is_nan() {
                missing = true;
                continue;
            }
            if missing || last.is_some_and(|p| t - p > gap) {
                lines.break_here();
            }
            lines.points.push([t, f64::from(v)]);
            last = Some(t);
            missing = false;
        }
        lines
    }

    /// Plot points for `channel` over `[t0, t1]` in at most `2 * columns` points: every sample
    /// when there are fewer samples than that, else a min/max pair per column (drawn as a
    /// vertical stroke, which keeps spikes visible at any zoom); the points of
    /// [`History::plot_points_multi`]. `scratch` is kept for callers; unused.
    pub fn plot_points(
        &self,
        channel: usize,
        t0: f64,
        t1: f64,
        columns: usize,
        scratch: &mut Vec<Envelope>,
    ) -> Vec<[f64; 2]> {
        scratch.clear();
        if channel >= self.channels.len() {
            return Vec::new();
        }
        let mut bounds = Vec::new();
        self.plot_points_multi(&[channel], t0, t1, columns, &mut bounds)
            .pop()
            .unwrap_or_default()
    }
}
