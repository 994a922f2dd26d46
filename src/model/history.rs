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
    /// once for all of them); see [`History::plot_points`].
    pub fn plot_points_multi(
        &self,
        channels: &[usize],
        t0: f64,
        t1: f64,
        columns: usize,
        bounds: &mut Vec<usize>,
    ) -> Vec<Vec<[f64; 2]>> {
        let i = self.index_at(t0);
        let j = self.t.partition_point(|x| *x <= t1);
        if j.saturating_sub(i) <= 2 * columns {
            return channels
                .iter()
                .map(|&c| match self.channels.get(c) {
                    Some(ch) => (i..j)
                        .filter(|k| !ch.values[*k].is_nan())
                        .map(|k| [self.t[k], f64::from(ch.values[k])])
                        .collect(),
                    None => Vec::new(),
                })
                .collect();
        }
        self.column_bounds(t0, t1, columns, bounds);
        let dt = (t1 - t0) / columns as f64;
        channels
            .iter()
            .map(|&c| {
                if c >= self.channels.len() {
                    return Vec::new();
                }
                let mut pts = Vec::with_capacity(columns * 2);
                for (k, w) in bounds.windows(2).enumerate() {
                    if w[1] > w[0] {
                        let m = self.range_min_max(c, w[0], w[1]);
                        if m.min <= m.max {
                            let mid = t0 + dt * (k as f64 + 0.5);
                            pts.push([mid, f64::from(m.min)]);
                            pts.push([mid, f64::from(m.max)]);
                        }
                    }
                }
                pts
            })
            .collect()
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
}
