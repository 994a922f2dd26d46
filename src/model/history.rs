//! Time-indexed history of sampled signals, built for plotting hours of data: a shared time
//! column, `f32` value columns, and min/max summaries over blocks of 8, 64, 512 and 4096
//! samples, so the min/max of any sample range takes at most ~7 steps per level, and the
//! envelope of any time range over `n` pixel columns costs about `n` small scans however long
//! the history is.

/// Samples per block at each summary level (each level is 8 blocks of the one below).
const LEVELS: [usize; 4] = [8, 64, 512, 4096];

/// Min and max of one channel over one block.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MinMax {
    min: f32,
    max: f32,
}

impl MinMax {
    const EMPTY: MinMax = MinMax {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
    };

    fn add(&mut self, v: f32) {
        if v.is_nan() {
            return;
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    fn merge(&mut self, o: MinMax) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// One channel's values and block summaries.
#[derive(Debug, Clone, Default)]
struct Channel {
    values: Vec<f32>,
    levels: [Vec<MinMax>; 4],
}

/// The min/max of a channel over one pixel column of a plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envelope {
    /// Column start time, s.
    pub t0: f64,
    /// Column end time, s.
    pub t1: f64,
    /// Smallest value in the column.
    pub min: f64,
    /// Largest value in the column.
    pub max: f64,
}

/// Sample intervals longer than this many typical periods are gaps in a plot.
pub const GAP_PERIODS: f64 = 4.0;

/// Sample intervals at most this long are never gaps in a plot, s.
pub const GAP_FLOOR_S: f64 = 0.05;

/// A channel's plot points in runs: the line is drawn through each run and broken between
/// them (where samples are missing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lines {
    /// Every point, run after run.
    pub points: Vec<[f64; 2]>,
    /// Where each run after the first starts in `points`.
    pub breaks: Vec<usize>,
}

impl Lines {
    /// Starts a new run at the next point (nothing before the first point).
    fn break_here(&mut self) {
        let n = self.points.len();
        if n > 0 && self.breaks.last() != Some(&n) {
            self.breaks.push(n);
        }
    }

    /// The runs, each drawn as one line.
    pub fn runs(&self) -> impl Iterator<Item = &[[f64; 2]]> {
        let starts = std::iter::once(0).chain(self.breaks.iter().copied());
        let ends = self
            .breaks
            .iter()
            .copied()
            .chain(std::iter::once(self.points.len()));
        starts
            .zip(ends)
            .map(|(a, b)| &self.points[a..b])
            .filter(|r| !r.is_empty())
    }
}

/// Several channels sampled at the same times (e.g. Fx, Fy, Fz, Tx, Ty, Tz, |F|).
#[derive(Debug, Clone, Default)]
pub struct History {
    t: Vec<f64>,
    channels: Vec<Channel>,
}

impl History {
    /// An empty history of `channels` channels.
    pub fn new(channels: usize) -> Self {
        Self {
            t: Vec::new(),
            channels: vec![Channel::default(); channels],
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Number of channels.
    pub fn channels(&self) -> usize {
        self.channels.len()
    }

    /// First and last sample times.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((*self.t.first()?, *self.t.last()?))
    }

    /// Bytes held (for the memory figures).
    pub fn memory_bytes(&self) -> usize {
        self.t.capacity() * 8
            + self
                .channels
                .iter()
                .map(|c| {
                    c.values.capacity() * 4
                        + c.levels.iter().map(|l| l.capacity() * 8).sum::<usize>()
                })
                .sum::<usize>()
    }

    /// Makes room for `additional` more samples at once, so that a long load grows each
    /// column once instead of doubling it again and again (each doubling copies the column and
    /// touches twice its memory: a quarter of the replay loader's time for an hour-long file).
    /// A hint: when the memory cannot be had, nothing is reserved and the columns grow as
    /// they fill.
    pub fn reserve(&mut self, additional: usize) {
        fn grow<T>(v: &mut Vec<T>, n: usize) -> bool {
            v.try_reserve_exact(n).is_ok()
        }
        if !grow(&mut self.t, additional) {
            return;
        }
        for c in &mut self.channels {
            if !grow(&mut c.values, additional) {
                return;
            }
            for (level, size) in c.levels.iter_mut().zip(LEVELS) {
                if !grow(level, additional / size + 1) {
                    return;
                }
            }
        }
    }

    /// Gives back room reserved beyond what was used, when that is more than a sixteenth
    /// (a file whose index promised more samples than it held).
    pub fn trim_reserve(&mut self) {
        fn fit<T>(v: &mut Vec<T>) {
            if v.capacity() > v.len() + v.len() / 16 + 64 {
                v.shrink_to_fit();
            }
        }
        fit(&mut self.t);
        for c in &mut self.channels {
            fit(&mut c.values);
            c.levels.iter_mut().for_each(fit);
        }
    }

    /// Appends one sample. Times must not go backwards (a sample older than the last one is
    /// refused and `false` returned); missing channels are NaN (not drawn).
    pub fn push(&mut self, t: f64, values: &[f64]) -> bool {
        if !t.is_finite() || self.t.last().is_some_and(|last| t < *last) {
            return false;
        }
        let i = self.t.len();
        self.t.push(t);
        for (k, c) in self.channels.iter_mut().enumerate() {
            let v = values.get(k).copied().unwrap_or(f64::NAN) as f32;
            c.values.push(v);
            for (level, size) in c.levels.iter_mut().zip(LEVELS) {
                if i.is_multiple_of(size) {
                    level.push(MinMax::EMPTY);
                }
                if let Some(b) = level.last_mut() {
                    b.add(v);
                }
            }
        }
        true
    }

    /// The time of sample `i`.
    pub fn time(&self, i: usize) -> Option<f64> {
        self.t.get(i).copied()
    }

    /// Every sample time, oldest first (for merging several histories' time columns).
    pub fn times(&self) -> &[f64] {
        &self.t
    }

    /// The value of `channel` at sample `i` (NaN where the sample lacked the channel).
    pub fn value(&self, channel: usize, i: usize) -> Option<f64> {
        Some(f64::from(*self.channels.get(channel)?.values.get(i)?))
    }

    /// The sample index of the first time `>= t`.
    pub fn index_at(&self, t: f64) -> usize {
        self.t.partition_point(|x| *x < t)
    }

    /// The value of `channel` at the last sample at or before `t`.
    pub fn value_at(&self, channel: usize, t: f64) -> Option<(f64, f64)> {
        let i = self.t.partition_point(|x| *x <= t).checked_sub(1)?;
        let v = *self.channels.get(channel)?.values.get(i)?;
        Some((self.t[i], f64::from(v)))
    }

    /// The sample nearest to `t` (for hover read-outs).
    pub fn nearest(&self, channel: usize, t: f64) -> Option<(f64, f64)> {
        let i = self.index_at(t);
        let candidates = [i.checked_sub(1), (i < self.t.len()).then_some(i)];
        let j = candidates
            .into_iter()
            .flatten()
            .min_by(|a, b| (self.t[*a] - t).abs().total_cmp(&(self.t[*b] - t).abs()))?;
        Some((
            self.t[j],
            f64::from(*self.channels.get(channel)?.values.get(j)?),
        ))
    }

    /// Min and max of `channel` over samples `[i, j)`: at each level, at most 7 items at each
    /// end are taken one by one, the aligned middle moves up a level (each level is 8 blocks
    /// of the one below), so any range costs at most ~70 cheap steps.
    fn range_min_max(&self, channel: usize, i: usize, j: usize) -> MinMax {
        let c = &self.channels[channel];
        let mut m = MinMax::EMPTY;
        let (mut lo, mut hi) = (i, j);
        // Raw samples up to the first 8-aligned index, and back from the last.
        while lo < hi && lo & 7 != 0 {
            m.add(c.values[lo]);
            lo += 1;
        }
        while hi > lo && hi & 7 != 0 {
            hi -= 1;
            m.add(c.values[hi]);
        }
        // Now [lo, hi) is whole level-0 blocks; climb.
        let (mut lo, mut hi) = (lo >> 3, hi >> 3);
        for (k, level) in c.levels.iter().enumerate() {
            let last = k + 1 == c.levels.len();
            if last {
                for b in &level[lo..hi] {
                    m.merge(*b);
                }
                break;
            }
            while lo < hi && lo & 7 != 0 {
                m.merge(level[lo]);
                lo += 1;
            }
            while hi > lo && hi & 7 != 0 {
                hi -= 1;
                m.merge(level[hi]);
            }
            lo >>= 3;
            hi >>= 3;
        }
        m
    }

    /// The min/max envelope of `channel` over `[t0, t1]` in `columns` equal time columns;
    /// columns without samples are left out.
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
        let mut i = self.index_at(t0);
        for col in 0..columns {
            let c0 = t0 + dt * col as f64;
            let c1 = if col + 1 == columns { t1 } else { c0 + dt };
            // Inclusive end for the last column.
            let j = if col + 1 == columns {
                self.t.partition_point(|x| *x <= c1)
            } else {
                i + self.t[i..].partition_point(|x| *x < c1)
            };
            if j > i {
                let m = self.range_min_max(channel, i, j);
                if m.min <= m.max {
                    out.push(Envelope {
                        t0: c0,
                        t1: c1,
                        min: f64::from(m.min),
                        max: f64::from(m.max),
                    });
                }
            }
            i = j;
        }
    }

    /// The first index `>= from` whose time is `>= t` (or `<= t` when `inclusive`), found by
    /// galloping forward from `from`: neighbouring pixel columns are close together, so this
    /// touches a few cache lines where a binary search over hours of samples would miss on
    /// every step.
    fn gallop(&self, from: usize, t: f64, inclusive: bool) -> usize {
        let before = |x: f64| if inclusive { x <= t } else { x < t };
        let n = self.t.len();
        let mut lo = from;
        let mut step = 1;
        let mut hi = from;
        while hi < n && before(self.t[hi]) {
            lo = hi + 1;
            hi = from + step;
            step *= 2;
        }
        let hi = hi.min(n);
        lo + self.t[lo..hi].partition_point(|x| before(*x))
    }

    /// Sample index bounds of `columns` equal time columns over `[t0, t1]`: column `k` holds
    /// samples `bounds[k]..bounds[k + 1]` (the last column includes `t1`).
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
                self.gallop(i, t1, true)
            } else {
                self.gallop(i, t0 + dt * (col + 1) as f64, false)
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
    /// intervals spread over the range (a few gaps do not move a median); `None` with fewer
    /// than two samples.
    pub fn typical_period(&self, t0: f64, t1: f64) -> Option<f64> {
        let i = self.index_at(t0);
        let j = self.t.partition_point(|x| *x <= t1);
        if j < i + 2 {
            return None;
        }
        let pairs = j - i - 1;
        let take = pairs.min(33);
        let mut dts: Vec<f64> = (0..take)
            .map(|k| {
                let a = i + k * pairs / take;
                self.t[a + 1] - self.t[a]
            })
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
    /// at most `2 * columns` of them, else a min/max pair per column (drawn as a vertical
    /// stroke, so spikes stay visible at any zoom). The band `egui_plot` draws for such pairs
    /// is drawn per run, so it never spans a gap either.
    pub fn plot_lines_multi(
        &self,
        channels: &[usize],
        t0: f64,
        t1: f64,
        columns: usize,
        gap: f64,
        bounds: &mut Vec<usize>,
    ) -> Vec<Lines> {
        let i = self.index_at(t0);
        let j = self.t.partition_point(|x| *x <= t1);
        if j.saturating_sub(i) <= 2 * columns {
            return channels
                .iter()
                .map(|&c| match self.channels.get(c) {
                    Some(ch) => self.raw_lines(&ch.values, i, j, gap),
                    None => Lines::default(),
                })
                .collect();
        }
        self.column_bounds(t0, t1, columns, bounds);
        let dt = (t1 - t0) / columns as f64;
        let gap = gap.max(dt);
        channels
            .iter()
            .map(|&c| {
                let mut lines = Lines::default();
                if c >= self.channels.len() {
                    return lines;
                }
                lines.points.reserve(columns * 2);
                // The last sample of the column drawn before, and whether values went
                // missing since.
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
                    let apart = last.is_some_and(|p| self.t[w[0]] - self.t[p] > gap);
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
            })
            .collect()
    }

    /// Every sample of `values` in `[i, j)`, broken where samples are more than `gap`
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
    /// vertical stroke, which keeps spikes visible at any zoom).
    pub fn plot_points(
        &self,
        channel: usize,
        t0: f64,
        t1: f64,
        columns: usize,
        scratch: &mut Vec<Envelope>,
    ) -> Vec<[f64; 2]> {
        let i = self.index_at(t0);
        let j = self.t.partition_point(|x| *x <= t1);
        if channel >= self.channels.len() {
            return Vec::new();
        }
        if j.saturating_sub(i) <= 2 * columns {
            let c = &self.channels[channel];
            return (i..j)
                .filter(|k| !c.values[*k].is_nan())
                .map(|k| [self.t[k], f64::from(c.values[k])])
                .collect();
        }
        self.envelope(channel, t0, t1, columns, scratch);
        let mut pts = Vec::with_capacity(scratch.len() * 2);
        for e in scratch.iter() {
            let mid = 0.5 * (e.t0 + e.t1);
            pts.push([mid, e.min]);
            pts.push([mid, e.max]);
        }
        pts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: usize) -> History {
        let mut h = History::new(2);
        for i in 0..n {
            let t = i as f64 * 0.01;
            h.push(t, &[(t * 3.0).sin(), i as f64]);
        }
        h
    }

    #[test]
    fn reserving_changes_room_not_content() {
        let plain = filled(10_000);
        let mut reserved = filled(100);
        reserved.reserve(9_900);
        let room = reserved.t.capacity();
        assert!(room >= 10_000, "{room}");
        for i in 100..10_000 {
            let t = i as f64 * 0.01;
            reserved.push(t, &[(t * 3.0).sin(), i as f64]);
        }
        // Filled without growing again, and sample for sample (summaries too) the same.
        assert_eq!(reserved.t.capacity(), room);
        assert_eq!(reserved.t, plain.t);
        for (a, b) in reserved.channels.iter().zip(&plain.channels) {
            assert_eq!(a.values, b.values);
            assert_eq!(a.levels, b.levels);
        }
        // Room kept when nearly used; given back when a promise was not kept.
        reserved.trim_reserve();
        assert_eq!(reserved.t.capacity(), room);
        let mut promised = filled(100);
        promised.reserve(1_000_000);
        assert!(promised.memory_bytes() > 1_000_000 * 8);
        promised.trim_reserve();
        assert!(promised.memory_bytes() < filled(200).memory_bytes() * 2);
        assert_eq!(promised.t, filled(100).t);
    }

    #[test]
    fn envelope_equals_brute_force_min_max_per_column() {
        let h = filled(20_000);
        let mut env = Vec::new();
        for (t0, t1, cols) in [
            (0.0, 199.99, 300),
            (12.345, 98.7, 333),
            (100.0, 100.5, 10),
            (0.0, 1.0, 100),
        ] {
            h.envelope(0, t0, t1, cols, &mut env);
            for e in &env {
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                for k in 0..h.len() {
                    let t = h.t[k];
                    let inside = t >= e.t0 && (t < e.t1 || (e.t1 == t1 && t <= t1));
                    if inside {
                        let v = f64::from(h.channels[0].values[k]);
                        lo = lo.min(v);
                        hi = hi.max(v);
                    }
                }
                assert_eq!((e.min, e.max), (lo, hi), "column {}..{}", e.t0, e.t1);
            }
        }
    }

    #[test]
    fn plot_points_are_bounded_by_columns_and_keep_spikes() {
        let h = filled(300_000);
        let mut h2 = History::new(1);
        for i in 0..300_000 {
            let v = if i == 123_457 { 50.0 } else { 0.0 };
            h2.push(i as f64 * 0.01, &[v]);
        }
        let mut scratch = Vec::new();
        let pts = h2.plot_points(0, 0.0, 3000.0, 800, &mut scratch);
        assert!(pts.len() <= 1600);
        assert!(
            pts.iter().any(|p| p[1] == 50.0),
            "the spike survives decimation"
        );
        let few = h.plot_points(1, 10.0, 10.5, 800, &mut scratch);
        assert_eq!(few.len(), 51, "short ranges give the raw samples");
    }

    #[test]
    fn multi_channel_points_equal_single_channel_points() {
        let h = filled(50_000);
        let mut scratch = Vec::new();
        let mut bounds = Vec::new();
        for (t0, t1, cols) in [(0.0, 499.99, 300), (3.3, 250.0, 777), (10.0, 10.3, 100)] {
            let multi = h.plot_points_multi(&[0, 1], t0, t1, cols, &mut bounds);
            for (c, got) in multi.iter().enumerate() {
                let want = h.plot_points(c, t0, t1, cols, &mut scratch);
                assert_eq!(got.len(), want.len());
                // Same samples; column centres may differ in the last bit of rounding.
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(a, b)| a[1] == b[1] && (a[0] - b[0]).abs() < 1e-9)
                );
            }
        }
    }

    #[test]
    fn refuses_time_going_backwards_and_reads_values() {
        let mut h = History::new(1);
        assert!(h.push(1.0, &[1.0]));
        assert!(h.push(2.0, &[2.0]));
        assert!(!h.push(1.5, &[9.0]));
        assert_eq!(h.value_at(0, 1.7), Some((1.0, 1.0)));
        assert_eq!(h.nearest(0, 1.7), Some((2.0, 2.0)));
        assert_eq!(h.value_at(0, 0.5), None);
    }

    /// 100 Hz with ±30 % jitter from 0 to 60 s, nothing from 20 s to 25 s.
    fn with_a_gap() -> History {
        let mut h = History::new(1);
        let mut k = 0u32;
        loop {
            let jitter = f64::from(k.wrapping_mul(2_654_435_761) % 61) / 100.0 - 0.3;
            let t = (f64::from(k) + jitter) * 0.01;
            if t > 60.0 {
                break;
            }
            if !(20.0..25.0).contains(&t) {
                h.push(t, &[t.sin()]);
            }
            k += 1;
        }
        h
    }

    #[test]
    fn a_gap_in_the_samples_breaks_the_line_and_jitter_does_not() {
        let h = with_a_gap();
        let gap = h.gap_threshold(0.0, 60.0);
        assert!((0.05..0.1).contains(&gap), "{gap}");
        let mut bounds = Vec::new();
        // Raw samples (zoomed in around the gap): one break, at the gap.
        let raw = &h.plot_lines_multi(&[0], 18.0, 27.0, 5000, gap, &mut bounds)[0];
        assert_eq!(raw.breaks.len(), 1, "{:?}", raw.breaks);
        let runs: Vec<_> = raw.runs().collect();
        assert!(runs[0].last().unwrap()[0] < 20.0 && runs[1][0][0] >= 25.0);
        // Jitter alone never breaks.
        let calm = &h.plot_lines_multi(&[0], 0.0, 19.9, 5000, gap, &mut bounds)[0];
        assert!(calm.breaks.is_empty());
        assert!(calm.points.len() > 1900);
    }

    #[test]
    fn decimated_lines_still_break_at_a_gap_wider_than_a_pixel_column() {
        let h = with_a_gap();
        let gap = h.gap_threshold(0.0, 60.0);
        let mut bounds = Vec::new();
        // 60 s over 300 columns: 0.2 s a column, the 5 s gap spans 25 of them.
        let lines = &h.plot_lines_multi(&[0], 0.0, 60.0, 300, gap, &mut bounds)[0];
        assert!(lines.points.len() <= 600);
        assert_eq!(lines.breaks.len(), 1);
        let runs: Vec<_> = lines.runs().collect();
        assert!(runs[0].last().unwrap()[0] < 20.0 && runs[1][0][0] > 25.0);
        // No min/max pair is drawn inside the gap.
        assert!(lines.points.iter().all(|p| !(20.2..24.8).contains(&p[0])));
        // Unbroken, the same points (what the old plots drew).
        let flat = &h.plot_points_multi(&[0], 0.0, 60.0, 300, &mut bounds)[0];
        assert_eq!(flat, &lines.points);
        // A gap narrower than a column is not drawn at that width: 8 columns of 7.5 s.
        let coarse = &h.plot_lines_multi(&[0], 0.0, 60.0, 8, gap, &mut bounds)[0];
        assert!(coarse.breaks.is_empty());
    }

    #[test]
    fn missing_values_break_the_line_too() {
        let mut h = History::new(2);
        for k in 0..30 {
            let t = f64::from(k) * 0.01;
            let second = if (10..15).contains(&k) { f64::NAN } else { 1.0 };
            h.push(t, &[0.0, second]);
        }
        let mut bounds = Vec::new();
        let l = h.plot_lines_multi(&[0, 1], 0.0, 1.0, 100, 1.0, &mut bounds);
        assert!(l[0].breaks.is_empty());
        assert_eq!(l[1].breaks, vec![10]);
        assert_eq!(l[1].points.len(), 25);
    }
}
