//! Time-indexed history of sampled signals, built for plotting hours of data: a shared time
//! column, `f32` value columns, and min/max summaries over blocks of 8, 64, 512 and 4096
//! samples, so the min/max of any sample range takes at most ~7 steps per level, and the
//! envelope of any time range over `n` pixel columns costs about `n` small scans however long
//! the history is.
//!
//! # Two tiers under a memory limit
//!
//! Without a limit ([`History::set_memory_limit`]`(None)`, the default) every sample is kept.
//! With one, the history keeps two tiers:
//! - the **exact tier**: the newest samples, every one, as above;
//! - the **envelope tier**: older samples held only as the min/max summaries at a *floor*
//!   block size ([`History::floor_block`]: 64 samples, coarsened to 512 then 4096 when the
//!   envelope itself outgrows half the limit), plus per floor block its start time and the
//!   time and values of its last sample (a real sample, one in 64).
//!
//! Samples move from the exact tier to the envelope in big steps (a quarter of the exact tier,
//! in whole 4096-sample blocks, so the summary alignment holds with an absolute sample index),
//! only when the exact tier is full; the memory held only changes at those moments and when
//! the exact tier grows (to sizes planned to fit the limit, never by doubling), so the limit
//! costs nothing per push. The limit is never exceeded except below its floor: a history keeps
//! room for at least [`MIN_EXACT_SAMPLES`] exact samples and its envelope at 4096-sample
//! blocks (about 0.4 % of the full size), whatever the limit.
//!
//! Which accessor sees what:
//! - by time, both tiers: [`History::span`], [`History::value_at`], [`History::nearest`],
//!   [`History::row_at`], [`History::next_time_after`], [`History::prev_time_before`],
//!   [`History::typical_period`], [`History::envelope`], [`History::plot_lines_multi`],
//!   [`History::plot_points`]; [`History::len`] counts the samples of both tiers;
//! - by index, the exact tier only (index 0 is its oldest sample): [`History::times`],
//!   [`History::time`], [`History::value`], [`History::index_at`], [`History::column_bounds`],
//!   [`History::exact_len`].
//!
//! # Column edges on block boundaries
//!
//! A pixel column's min/max over the envelope tier can only cover whole floor blocks. So that
//! the picture is the same before and after old samples are compacted (and does not jump when
//! they are), the plots snap every column edge to the first floor block starting at or after
//! it whenever the view holds at least one floor block per column, in both tiers and in a
//! history without a limit alike: `envelope` and `plot_lines_multi` give bit-identical output
//! before and after compaction. An edge moves by less than one floor block (64 ms at 1 kHz;
//! at 12 h over 1920 columns a column is 22 s). Coarsening the floor moves edges once, by less
//! than the coarser block. Zoomed in further over the envelope tier, each column holds the
//! floor blocks that start in it (the min/max pairs of whole blocks, never invented samples);
//! [`History::envelope_only`] tells a plot when that is the case.

/// Samples per block at each summary level (each level is 8 blocks of the one below).
const LEVELS: [usize; 4] = [8, 64, 512, 4096];

// Block starts are found with masks (`History::push`): every size is a power of two.
const _: () = {
    let mut k = 0;
    while k < LEVELS.len() {
        assert!(LEVELS[k].is_power_of_two());
        k += 1;
    }
};

/// The coarsest block: the exact tier starts and is dropped in whole blocks of this size.
const TOP: usize = LEVELS[3];

/// The level of the floor blocks an envelope starts with (64 samples).
const FIRST_FLOOR: usize = 1;

/// Fewest exact samples a history with a memory limit keeps room for, however small the
/// limit (a limit below that is exceeded by it: 8192 samples, 0.4 MB for 7 channels).
pub const MIN_EXACT_SAMPLES: usize = 2 * TOP;

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

    /// Takes `v` in; a missing value (NaN) changes nothing: every comparison with NaN is
    /// false, and `min`/`max` are never NaN themselves. Plain comparisons: `f32::min`/`max`
    /// pay for their rule on NaN in either operand (a replay load's `push` went from 100.3 to
    /// 88.8 M instructions for 240,000 datagrams without it).
    fn add(&mut self, v: f32) {
        self.min = if v < self.min { v } else { self.min };
        self.max = if v > self.max { v } else { self.max };
    }

    fn merge(&mut self, o: MinMax) {
        self.min = if o.min < self.min { o.min } else { self.min };
        self.max = if o.max > self.max { o.max } else { self.max };
    }
}

/// One channel's values and block summaries.
#[derive(Debug, Clone, Default)]
struct Channel {
    /// Exact tier: the value of every exact sample.
    values: Vec<f32>,
    /// Block summaries per level. Levels at or above the floor cover every block since the
    /// first sample; levels below it only the exact tier's (from `base / size`). Every
    /// complete block is exact; a level's last block, while incomplete, holds only the
    /// complete blocks below it (a block is merged upwards when it completes: `push`), so
    /// readers take whole blocks only, the raw values for the rest (`range_min_max`).
    levels: [Vec<MinMax>; 4],
    /// Envelope tier: the value of each floor block's last sample.
    last: Vec<f32>,
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

/// Where a held sample is: in the exact tier (index from its start) or the last sample of an
/// envelope block.
#[derive(Debug, Clone, Copy)]
enum Loc {
    Exact(usize),
    Block(usize),
}

/// The first index `>= from` of `xs` where `before` stops holding, found by galloping
/// forward from `from`: neighbouring pixel columns are close together, so this touches a few
/// cache lines where a binary search over hours of samples would miss on every step.
fn gallop(xs: &[f64], from: usize, before: impl Fn(f64) -> bool) -> usize {
    let n = xs.len();
    let from = from.min(n);
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < n && before(xs[hi]) {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(n);
    lo + xs[lo..hi].partition_point(|x| before(*x))
}

/// Sets `v`'s capacity to `cap` (at least its length): grows with `try_reserve_exact` (left
/// as it is when the memory cannot be had), shrinks in place.
fn set_capacity<T>(v: &mut Vec<T>, cap: usize) {
    let cap = cap.max(v.len());
    if v.capacity() < cap {
        let _ = v.try_reserve_exact(cap - v.len());
    } else if v.capacity() > cap {
        v.shrink_to(cap);
    }
}

/// Pushes onto a vector whose room a memory limit planned: grows it by a quarter (not double)
/// when the plan fell short, so the overshoot stays small.
fn push_planned<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() {
        let _ = v.try_reserve_exact(v.len() / 4 + 16);
    }
    v.push(x);
}

/// Several channels sampled at the same times (e.g. Fx, Fy, Fz, Tx, Ty, Tz, |F|).
#[derive(Debug)]
pub struct History {
    /// Exact tier: the time of every exact sample (absolute index `base + i`).
    t: Vec<f64>,
    channels: Vec<Channel>,
    /// Samples held only in the envelope tier (a multiple of [`TOP`]).
    base: usize,
    /// Level index of the floor blocks (1, 2 or 3: 64, 512 or 4096 samples).
    floor: usize,
    /// Envelope tier: each floor block's first and last sample times.
    block_t0: Vec<f64>,
    block_t1: Vec<f64>,
    /// Bytes this history may hold (`None`: every sample is kept).
    limit: Option<usize>,
    /// What an [`EnvelopeCache`] of this history stays valid for: unique to this history
    /// (taken from [`NEXT_GENERATION`] when it is made), taken anew whenever its past columns
    /// change (the floor coarsened). Compaction keeps it: snapped columns read the same.
    generation: u64,
}

/// The next [`History::generation`]: unique over every history of the process.
static NEXT_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A generation no history has had yet.
fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Clone for History {
    /// A copy with a generation of its own: the two may take different samples from here.
    fn clone(&self) -> Self {
        Self {
            t: self.t.clone(),
            channels: self.channels.clone(),
            base: self.base,
            floor: self.floor,
            block_t0: self.block_t0.clone(),
            block_t1: self.block_t1.clone(),
            limit: self.limit,
            generation: next_generation(),
        }
    }
}

impl Default for History {
    fn default() -> Self {
        Self::new(0)
    }
}

impl History {
    /// An empty history of `channels` channels.
    pub fn new(channels: usize) -> Self {
        Self {
            t: Vec::new(),
            channels: vec![Channel::default(); channels],
            base: 0,
            floor: FIRST_FLOOR,
            block_t0: Vec::new(),
            block_t1: Vec::new(),
            limit: None,
            generation: next_generation(),
        }
    }

    /// What identifies this history's past for an [`EnvelopeCache`]: unique to it, and
    /// changed whenever columns already drawn could read differently (the envelope floor
    /// coarsened). Appending samples and compacting them keep it.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of samples, in both tiers (the exact tier holds [`History::exact_len`]).
    pub fn len(&self) -> usize {
        self.base + self.t.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of samples held exactly: the index range of [`History::time`],
    /// [`History::value`] and [`History::times`].
    pub fn exact_len(&self) -> usize {
        self.t.len()
    }

    /// Number of channels.
    pub fn channels(&self) -> usize {
        self.channels.len()
    }

    /// Samples per envelope block (64, or 512 and 4096 once coarsened): the resolution of
    /// the envelope tier.
    pub fn floor_block(&self) -> usize {
        LEVELS[self.floor]
    }

    /// The time of the first sample held exactly when older ones are held only as an
    /// envelope (`None` when every sample is exact): before it, a plot shows min/max per
    /// floor block and `value_at` gives one real sample per block.
    pub fn exact_from(&self) -> Option<f64> {
        if self.base == 0 {
            return None;
        }
        self.t.first().or(self.block_t1.last()).copied()
    }

    /// Whether a plot of `[t0, t1]` over `columns` columns shows envelope blocks wider than a
    /// column (the view reaches into the envelope tier zoomed in beyond its resolution): the
    /// plot then shows one min/max pair per block, and exact values there are only in the
    /// recording.
    pub fn envelope_only(&self, t0: f64, t1: f64, columns: usize) -> bool {
        self.touches_envelope(t0, t1) && !self.snaps(t0, t1, columns)
    }

    /// First and last sample times.
    pub fn span(&self) -> Option<(f64, f64)> {
        let first = self.block_t0.first().or(self.t.first())?;
        let last = self.t.last().or(self.block_t1.last())?;
        Some((*first, *last))
    }

    /// The time of the newest sample.
    fn last_time(&self) -> Option<f64> {
        self.t.last().or(self.block_t1.last()).copied()
    }

    /// Bytes held (for the memory figures and the limit): the capacity of every column.
    pub fn memory_bytes(&self) -> usize {
        (self.t.capacity() + self.block_t0.capacity() + self.block_t1.capacity()) * 8
            + self.channels.capacity() * std::mem::size_of::<Channel>()
            + self
                .channels
                .iter()
                .map(|c| {
                    (c.values.capacity() + c.last.capacity()) * 4
                        + c.levels.iter().map(|l| l.capacity() * 8).sum::<usize>()
                })
                .sum::<usize>()
    }

    /// The bytes this history may hold (`None`: no limit).
    pub fn memory_limit(&self) -> Option<usize> {
        self.limit
    }

    /// Sets the bytes this history may hold (`None`: keep every sample, the default). A
    /// smaller limit than what is held compacts old samples into the envelope at once; see
    /// the module documentation for the floor below which a limit is exceeded.
    pub fn set_memory_limit(&mut self, limit: Option<usize>) {
        self.limit = limit;
        if limit.is_some() {
            self.rebudget(false);
        }
    }

    /// Bytes per exact sample, bytes per sample of the summary levels at and above the floor
    /// (kept for the whole history), bytes per envelope block.
    fn costs(&self) -> (f64, f64, f64) {
        let ch = self.channels.len() as f64;
        let below: f64 = LEVELS[..self.floor].iter().map(|s| 1.0 / *s as f64).sum();
        let above: f64 = LEVELS[self.floor..].iter().map(|s| 1.0 / *s as f64).sum();
        (
            8.0 + 4.0 * ch + 8.0 * ch * below,
            8.0 * ch * above,
            16.0 + 4.0 * ch,
        )
    }

    /// The exact samples a limit leaves room for, coarsening the envelope first while it
    /// takes more than half the limit. The plan: `cap` exact samples, the summaries at and
    /// above the floor up to `base + cap` samples, the envelope blocks plus the room the next
    /// compaction (a quarter of `cap`) adds to them.
    fn plan(&mut self, limit: usize) -> usize {
        loop {
            let (exact, above, block) = self.costs();
            let f = self.floor_block() as f64;
            // Rounding of every level's capacity, the channels themselves, and the envelope
            // room for one whole top block when a quarter of the exact tier is less.
            let slack = 1024.0
                + 128.0 * self.channels.len() as f64
                + (self.channels.len() * std::mem::size_of::<Channel>()) as f64
                + (TOP as f64 / f) * block;
            let envelope = self.base as f64 * above + (self.base as f64 / f) * block + slack;
            if envelope > limit as f64 / 2.0 && self.floor + 1 < LEVELS.len() {
                self.coarsen();
                continue;
            }
            let per = exact + above + block / (4.0 * f);
            let room = ((limit as f64 - envelope) / per).max(0.0) as usize;
            return room.max(MIN_EXACT_SAMPLES);
        }
    }

    /// Makes the envelope blocks 8 times coarser (64 -> 512 -> 4096 samples): keeps the
    /// first start time and the last sample of every 8 blocks, and drops the old floor
    /// level's summaries of the envelope tier.
    fn coarsen(&mut self) {
        let blocks = self.block_t0.len() / 8;
        for b in 0..blocks {
            self.block_t0[b] = self.block_t0[8 * b];
            self.block_t1[b] = self.block_t1[8 * b + 7];
        }
        self.block_t0.truncate(blocks);
        self.block_t1.truncate(blocks);
        self.block_t0.shrink_to_fit();
        self.block_t1.shrink_to_fit();
        let old = self.floor;
        let dropped = self.base / LEVELS[old];
        for c in &mut self.channels {
            for b in 0..blocks {
                c.last[b] = c.last[8 * b + 7];
            }
            c.last.truncate(blocks);
            c.last.shrink_to_fit();
            let level = &mut c.levels[old];
            level.drain(..dropped.min(level.len()));
            level.shrink_to_fit();
        }
        self.floor = old + 1;
        self.generation = next_generation();
    }

    /// Moves the oldest quarter of the exact tier (whole [`TOP`] blocks, keeping at least
    /// one sample) into the envelope tier; `false` when there is too little to move.
    fn drop_oldest(&mut self) -> bool {
        let len = self.t.len();
        let q = ((len / 4).max(TOP).min(len.saturating_sub(1)) / TOP) * TOP;
        if q == 0 {
            return false;
        }
        let f = self.floor_block();
        let blocks = q / f;
        let _ = self.block_t0.try_reserve_exact(blocks);
        let _ = self.block_t1.try_reserve_exact(blocks);
        for b in 0..blocks {
            self.block_t0.push(self.t[b * f]);
            self.block_t1.push(self.t[b * f + f - 1]);
        }
        self.t.drain(..q);
        let floor = self.floor;
        for c in &mut self.channels {
            let _ = c.last.try_reserve_exact(blocks);
            for b in 0..blocks {
                c.last.push(c.values[b * f + f - 1]);
            }
            c.values.drain(..q);
            for (level, size) in c.levels[..floor].iter_mut().zip(LEVELS) {
                level.drain(..(q / size).min(level.len()));
            }
        }
        self.base += q;
        true
    }

    /// Under a limit: moves old samples into the envelope until the exact tier fits the plan
    /// (with room for one more sample when `room`), then sets every column's capacity to it.
    fn rebudget(&mut self, room: bool) {
        let Some(limit) = self.limit else { return };
        let mut cap = self.plan(limit);
        while self.t.len() + usize::from(room) > cap && self.drop_oldest() {
            cap = self.plan(limit);
        }
        let len = self.t.len();
        let target = if room {
            cap.min((2 * len).max(4 * TOP)).max(len + 1)
        } else {
            cap.min(self.t.capacity()).max(len)
        };
        self.set_capacities(target);
    }

    /// Sets the capacity of every column for `exact` exact samples (see [`History::plan`]).
    fn set_capacities(&mut self, exact: usize) {
        let f = self.floor_block();
        let next_blocks = self.base / f + (exact / 4).max(TOP) / f;
        let total = self.base + exact;
        // Shrink first, then grow: the held bytes never pass the plan on the way.
        set_capacity(&mut self.t, exact);
        for c in &mut self.channels {
            set_capacity(&mut c.values, exact);
        }
        set_capacity(&mut self.block_t0, next_blocks);
        set_capacity(&mut self.block_t1, next_blocks);
        let floor = self.floor;
        for c in &mut self.channels {
            set_capacity(&mut c.last, next_blocks);
            for (k, (level, size)) in c.levels.iter_mut().zip(LEVELS).enumerate() {
                let blocks = if k < floor { exact } else { total } / size + 2;
                set_capacity(level, blocks);
            }
        }
    }

    /// Makes room for `additional` more samples at once, so that a long load grows each
    /// column once instead of doubling it again and again (each doubling copies the column and
    /// touches twice its memory: a quarter of the replay loader's time for an hour-long file).
    /// Under a limit, only as much as the limit leaves for the exact tier. A hint: when the
    /// memory cannot be had, nothing is reserved and the columns grow as they fill.
    pub fn reserve(&mut self, additional: usize) {
        fn grow<T>(v: &mut Vec<T>, n: usize) -> bool {
            v.try_reserve_exact(n).is_ok()
        }
        if let Some(limit) = self.limit {
            let cap = self.plan(limit);
            let want = cap.min(self.t.len().saturating_add(additional));
            if want > self.t.capacity() {
                self.set_capacities(want);
            }
            return;
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
    /// refused and `false` returned); missing channels are NaN (not drawn). Under a limit, a
    /// full exact tier first moves its oldest quarter into the envelope or grows to a planned
    /// size (see the module documentation).
    pub fn push(&mut self, t: f64, values: &[f64]) -> bool {
        if !t.is_finite() || self.last_time().is_some_and(|last| t < last) {
            return false;
        }
        let planned = self.limit.is_some();
        if planned && self.t.len() == self.t.capacity() {
            self.rebudget(true);
        }
        let i = self.len();
        if planned {
            push_planned(&mut self.t, t);
        } else {
            self.t.push(t);
        }
        // Six samples in eight neither start nor complete a block at any level (every size
        // is a multiple of the smallest): the value goes into its level-0 block only.
        let inside = i & (LEVELS[0] - 1) != 0 && (i + 1) & (LEVELS[0] - 1) != 0;
        // Which levels start a block with this sample, and which complete one: found once
        // for every channel, with masks (the sizes are powers of two; a division per level
        // and channel was a third of this function's time in a replay load).
        let starts = LEVELS.map(|size| i & (size - 1) == 0);
        let completes = LEVELS.map(|size| (i + 1) & (size - 1) == 0);
        for (k, c) in self.channels.iter_mut().enumerate() {
            let v = values.get(k).copied().unwrap_or(f64::NAN) as f32;
            if planned {
                push_planned(&mut c.values, v);
            } else {
                c.values.push(v);
            }
            if inside {
                if let Some(b) = c.levels[0].last_mut() {
                    b.add(v);
                }
                continue;
            }
            for (level, &start) in c.levels.iter_mut().zip(&starts) {
                if start {
                    if planned {
                        push_planned(level, MinMax::EMPTY);
                    } else {
                        level.push(MinMax::EMPTY);
                    }
                }
            }
            // The sample goes into its level-0 block; a block complete at one level is
            // merged into the block above (the `levels` invariant: complete blocks exact).
            let [l0, upper @ ..] = &mut c.levels;
            let Some(b) = l0.last_mut() else { continue };
            b.add(v);
            let mut below = *b;
            for (level, (&done, &up_done)) in
                upper.iter_mut().zip(completes.iter().zip(&completes[1..]))
            {
                if !done {
                    break;
                }
                let Some(up) = level.last_mut() else { break };
                up.merge(below);
                below = *up;
                if !up_done {
                    break;
                }
            }
        }
        true
    }

    /// Whether the next push under a limit has to compact or grow (for the session, which
    /// shares its budget out before that happens).
    pub fn needs_room(&self) -> bool {
        self.limit.is_some() && self.t.len() == self.t.capacity()
    }

    /// The time of exact sample `i` (index 0 is the oldest exact sample).
    pub fn time(&self, i: usize) -> Option<f64> {
        self.t.get(i).copied()
    }

    /// Every exact sample time, oldest first (for merging several histories' time columns).
    /// Only the exact tier: older samples are in [`History::span`] and the time-based
    /// accessors, not here.
    pub fn times(&self) -> &[f64] {
        &self.t
    }

    /// The value of `channel` at exact sample `i` (NaN where the sample lacked the channel).
    pub fn value(&self, channel: usize, i: usize) -> Option<f64> {
        Some(f64::from(*self.channels.get(channel)?.values.get(i)?))
    }

    /// The exact sample index of the first time `>= t` (0 for any time in the envelope tier).
    pub fn index_at(&self, t: f64) -> usize {
        self.t.partition_point(|x| *x < t)
    }

    /// The time of a held sample.
    fn loc_time(&self, loc: Loc) -> f64 {
        match loc {
            Loc::Exact(i) => self.t[i],
            Loc::Block(b) => self.block_t1[b],
        }
    }

    /// The value of `channel` at a held sample.
    fn loc_value(&self, channel: usize, loc: Loc) -> Option<f64> {
        let c = self.channels.get(channel)?;
        Some(f64::from(match loc {
            Loc::Exact(i) => *c.values.get(i)?,
            Loc::Block(b) => *c.last.get(b)?,
        }))
    }

    /// The last held sample before `t` (at or before when `inclusive`).
    fn last_before(&self, t: f64, inclusive: bool) -> Option<Loc> {
        let before = |x: &f64| if inclusive { *x <= t } else { *x < t };
        match self.t.partition_point(before) {
            0 => self
                .block_t1
                .partition_point(before)
                .checked_sub(1)
                .map(Loc::Block),
            i => Some(Loc::Exact(i - 1)),
        }
    }

    /// The first held sample at or after `t` (after when `strict`).
    fn first_after(&self, t: f64, strict: bool) -> Option<Loc> {
        let before = |x: &f64| if strict { *x <= t } else { *x < t };
        let i = self.t.partition_point(before);
        if i == 0 {
            let b = self.block_t1.partition_point(before);
            if b < self.block_t1.len() {
                return Some(Loc::Block(b));
            }
        }
        (i < self.t.len()).then_some(Loc::Exact(i))
    }

    /// The value of `channel` at the last sample at or before `t`: in the envelope tier the
    /// last sample of the last block ending at or before `t` (a real sample, with its time).
    pub fn value_at(&self, channel: usize, t: f64) -> Option<(f64, f64)> {
        let loc = self.last_before(t, true)?;
        Some((self.loc_time(loc), self.loc_value(channel, loc)?))
    }

    /// The sample nearest to `t` (for hover read-outs); in the envelope tier among the last
    /// samples of its blocks.
    pub fn nearest(&self, channel: usize, t: f64) -> Option<(f64, f64)> {
        let candidates = [self.last_before(t, false), self.first_after(t, false)];
        let loc = candidates.into_iter().flatten().min_by(|a, b| {
            (self.loc_time(*a) - t)
                .abs()
                .total_cmp(&(self.loc_time(*b) - t).abs())
        })?;
        Some((self.loc_time(loc), self.loc_value(channel, loc)?))
    }

    /// Every channel's value at the last sample at or before `t` into `out` (cleared first),
    /// and that sample's time; as [`History::value_at`].
    pub fn row_at(&self, t: f64, out: &mut Vec<f64>) -> Option<f64> {
        out.clear();
        let loc = self.last_before(t, true)?;
        out.extend((0..self.channels.len()).map(|c| self.loc_value(c, loc).unwrap_or(f64::NAN)));
        Some(self.loc_time(loc))
    }

    /// The time of the first held sample strictly after `t` (in the envelope tier: the next
    /// block's last sample).
    pub fn next_time_after(&self, t: f64) -> Option<f64> {
        Some(self.loc_time(self.first_after(t, true)?))
    }

    /// The time of the last held sample strictly before `t`.
    pub fn prev_time_before(&self, t: f64) -> Option<f64> {
        Some(self.loc_time(self.last_before(t, false)?))
    }

    /// Number of samples at or before `t` (before `t` when not `inclusive`), both tiers: exact
    /// in the exact tier; in the envelope tier to a block (a block straddling `t` counts
    /// one sample).
    pub fn count_until(&self, t: f64, inclusive: bool) -> usize {
        let before = |x: &f64| if inclusive { *x <= t } else { *x < t };
        let i = self.t.partition_point(before);
        if i > 0 || self.base == 0 {
            return self.base + i;
        }
        let whole = self.block_t1.partition_point(before);
        let straddles = self.block_t0.get(whole).is_some_and(before);
        whole * self.floor_block() + usize::from(straddles)
    }

    /// `(time, value)` of `channel` at every held sample, oldest first: one per envelope
    /// block (its last sample), then every exact sample.
    pub fn samples_of(&self, channel: usize) -> impl Iterator<Item = (f64, f64)> + '_ {
        let c = self.channels.get(channel);
        let blocks = c.map_or(&[][..], |c| &c.last[..]);
        let values = c.map_or(&[][..], |c| &c.values[..]);
        self.block_t1
            .iter()
            .zip(blocks)
            .chain(self.t.iter().zip(values))
            .map(|(t, v)| (*t, f64::from(*v)))
    }
}

mod cache;
mod plot;
pub use cache::{Column, EnvelopeCache, column_width};
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

    /// The envelope by brute force over every sample `(ts, vs)`: columns of `[t0, t1]`,
    /// edges rounded up to multiples of `f` samples when the view holds `f` per column
    /// (the documented snapping), empty columns left out: `(column, min, max)`.
    fn brute_envelope(
        ts: &[f64],
        vs: &[f32],
        (t0, t1): (f64, f64),
        cols: usize,
        f: usize,
    ) -> Vec<(usize, f64, f64)> {
        let r = |e: f64, incl: bool| ts.partition_point(|x| if incl { *x <= e } else { *x < e });
        let up = |i: usize| i.div_ceil(f) * f;
        let n = ts.len();
        let snap = up(r(t1, true)).min(n) - up(r(t0, false)).min(n) >= f * cols;
        let bound = |e: f64, incl: bool| {
            let i = r(e, incl);
            if snap { up(i).min(n) } else { i }
        };
        let dt = (t1 - t0) / cols as f64;
        let mut out = Vec::new();
        let mut a = bound(t0, false);
        for col in 0..cols {
            let b = if col + 1 == cols {
                bound(t1, true)
            } else {
                bound(t0 + dt * (col + 1) as f64, false)
            }
            .max(a);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in &vs[a..b] {
                if !v.is_nan() {
                    lo = lo.min(f64::from(*v));
                    hi = hi.max(f64::from(*v));
                }
            }
            if lo <= hi {
                out.push((col, lo, hi));
            }
            a = b;
        }
        out
    }

    /// `h`'s envelope as `(column, min, max)`.
    fn columns_of(
        h: &History,
        c: usize,
        (t0, t1): (f64, f64),
        cols: usize,
    ) -> Vec<(usize, f64, f64)> {
        let mut env = Vec::new();
        h.envelope(c, t0, t1, cols, &mut env);
        let dt = (t1 - t0) / cols as f64;
        env.iter()
            .map(|e| (((e.t0 - t0) / dt).round() as usize, e.min, e.max))
            .collect()
    }

    /// Asserts two envelopes equal, naming the first column that differs.
    fn same(a: &[(usize, f64, f64)], b: &[(usize, f64, f64)], what: &str) {
        let first = a.iter().zip(b).position(|(x, y)| x != y);
        assert!(
            first.is_none() && a.len() == b.len(),
            "{what}: {} vs {} columns, first difference at {first:?}: {:?} vs {:?}",
            a.len(),
            b.len(),
            first.map(|i| a[i]),
            first.map(|i| b[i])
        );
    }

    #[test]
    fn envelope_equals_brute_force_min_max_per_column() {
        let h = filled(20_000);
        let ts = h.t.clone();
        let vs = h.channels[0].values.clone();
        for (range, cols) in [
            ((0.0, 199.99), 300),
            ((0.0, 199.99), 30),
            ((12.345, 98.7), 333),
            ((12.345, 98.7), 50),
            ((100.0, 100.5), 10),
            ((0.0, 1.0), 100),
        ] {
            let want = brute_envelope(&ts, &vs, range, cols, 64);
            assert!(!want.is_empty());
            same(
                &columns_of(&h, 0, range, cols),
                &want,
                &format!("{range:?} over {cols}"),
            );
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

    /// Samples `i` of a 3-channel signal at 1 kHz with jitter, a gap and missing values.
    fn sample(i: usize) -> (f64, [f64; 3]) {
        let jitter = ((i * 2_654_435_761) % 97) as f64 * 1e-6;
        // A 2 s gap at 150 s.
        let t = i as f64 * 0.001 + jitter + if i >= 150_000 { 2.0 } else { 0.0 };
        let second = if (i / 1000) % 37 == 5 {
            f64::NAN
        } else {
            (t * 0.7).cos()
        };
        (
            t,
            [
                (t * 3.0).sin() + ((i * 7919) % 13) as f64 * 0.01,
                second,
                i as f64,
            ],
        )
    }

    /// The same samples into a history without a limit and one with `limit`, checking the
    /// limit after every push.
    fn pair(n: usize, limit: usize) -> (History, History) {
        let mut full = History::new(3);
        let mut small = History::new(3);
        small.set_memory_limit(Some(limit));
        for i in 0..n {
            let (t, v) = sample(i);
            assert!(full.push(t, &v));
            assert!(small.push(t, &v));
            assert!(
                small.memory_bytes() <= limit,
                "{} > {limit} at {i}",
                small.memory_bytes()
            );
        }
        (full, small)
    }

    #[test]
    fn compaction_keeps_the_envelope_and_lines_bit_identical() {
        let (full, small) = pair(400_000, 1 << 20);
        assert_eq!(small.len(), full.len());
        assert_eq!(small.span(), full.span());
        let from = small.exact_from().expect("old samples held as an envelope");
        assert!(small.exact_len() < 100_000 && from > 300.0, "{from}");
        assert_eq!(small.floor_block(), 64);
        let (a, b) = full.span().unwrap();
        let mut bounds = Vec::new();
        for (range, cols) in [
            ((a, b), 1920),
            ((a, b), 300),
            ((a, b), 7),
            ((10.0, 390.0), 1000),
            ((149.0, 160.0), 100),
            ((from - 20.0, from + 20.0), 200),
            ((from - 30.0, b), 300),
        ] {
            for c in 0..3 {
                let got = columns_of(&small, c, range, cols);
                same(
                    &got,
                    &columns_of(&full, c, range, cols),
                    &format!("{range:?}/{cols} {c}"),
                );
                let want = brute_envelope(&full.t, &full.channels[c].values, range, cols, 64);
                same(
                    &got,
                    &want,
                    &format!("brute force, {range:?}/{cols} ch {c}"),
                );
            }
            let gap = full.gap_threshold(range.0, range.1);
            assert_eq!(
                small.plot_lines_multi(&[0, 1, 2], range.0, range.1, cols, gap, &mut bounds),
                full.plot_lines_multi(&[0, 1, 2], range.0, range.1, cols, gap, &mut bounds),
                "{range:?}/{cols}"
            );
            assert!(!small.envelope_only(range.0, range.1, cols));
        }
        // Zoomed in on the envelope tier: whole blocks' min/max, no invented samples.
        assert!(small.envelope_only(100.0, 100.5, 1000));
        let zoomed = &small.plot_lines_multi(&[0], 100.0, 100.5, 1000, 0.05, &mut bounds)[0];
        assert!(
            zoomed.points.len() >= 14 && zoomed.points.len() <= 20,
            "{}",
            zoomed.points.len()
        );
        for p in &zoomed.points {
            let within = (0..full.len()).any(|k| f64::from(full.channels[0].values[k]) == p[1]);
            assert!(within, "{p:?} is a sample's value");
        }
        assert!(!full.envelope_only(100.0, 100.5, 1000));
    }

    #[test]
    fn values_and_times_read_across_the_boundary() {
        let (full, small) = pair(300_000, 1 << 20);
        let from = small.exact_from().unwrap();
        let mut row = Vec::new();
        for k in 0..2000 {
            let t = -1.0 + k as f64 * 0.1731;
            let (ts, v) = small.value_at(0, t).unwrap_or((f64::NAN, f64::NAN));
            if t >= from {
                assert_eq!(small.value_at(0, t), full.value_at(0, t), "{t}");
                assert_eq!(small.nearest(2, t), full.nearest(2, t), "{t}");
                assert_eq!(small.next_time_after(t), full.next_time_after(t));
                assert_eq!(small.count_until(t, true), full.count_until(t, true));
            } else if t >= 0.064 {
                // A real sample at or before t, less than two blocks before the last one.
                let (exact_ts, _) = full.value_at(0, t).unwrap();
                assert!(ts <= exact_ts && exact_ts - ts < 0.13, "{t}: {ts}");
                assert_eq!(full.value_at(0, ts), Some((ts, v)));
                let (nt, nv) = small.nearest(2, t).unwrap();
                assert_eq!(full.value_at(2, nt), Some((nt, nv)));
                let (exact_nt, _) = full.nearest(2, t).unwrap();
                assert!((nt - t).abs() <= (exact_nt - t).abs() + 0.13, "{t}: {nt}");
                let count = small.count_until(t, true) as f64;
                assert!((count - full.count_until(t, true) as f64).abs() < 64.0);
            } else {
                // Before the first block's last sample nothing is held.
                assert_eq!(small.value_at(0, t), None);
            }
            assert_eq!(small.row_at(t, &mut row).is_some(), t >= 0.064);
            let prev = small.prev_time_before(t);
            assert!(prev.is_none_or(|p| p < t));
            let period = small.typical_period(t - 10.0, t + 10.0).unwrap_or(0.001);
            assert!((0.0009..0.0012).contains(&period), "{t}: {period}");
        }
        assert_eq!(
            small.gap_threshold(0.0, 400.0),
            full.gap_threshold(0.0, 400.0)
        );
        // The index accessors address the exact tier.
        assert_eq!(small.times().len(), small.exact_len());
        assert_eq!(small.time(0), Some(from));
        assert_eq!(small.index_at(0.0), 0);
        assert_eq!(
            small.value(2, 0),
            Some(full.len() as f64 - small.exact_len() as f64)
        );
        assert_eq!(
            small.samples_of(2).count(),
            small.exact_len() + (full.len() - small.exact_len()) / 64
        );
    }

    #[test]
    fn refused_samples_stay_refused_under_a_limit() {
        let (_, mut small) = pair(100_000, 400_000);
        let (last, _) = sample(99_999);
        assert!(small.exact_from().is_some());
        assert!(!small.push(last - 0.5, &[1.0]));
        assert!(!small.push(1.0, &[1.0]));
        assert!(!small.push(f64::NAN, &[1.0]));
        assert!(small.push(last, &[1.0]));
        assert_eq!(small.len(), 100_001);
    }

    #[test]
    fn a_growing_envelope_coarsens_within_the_limit() {
        // 24 MB of samples at full resolution into 400 kB: the 64-sample envelope alone would
        // be 1.5 MB, at 512 samples 0.2 MB.
        let (full, small) = pair(1_000_000, 400_000);
        let f = small.floor_block();
        assert_eq!(f, 512, "coarsened once");
        assert_eq!(small.len(), full.len());
        let (a, b) = full.span().unwrap();
        for (range, cols) in [((a, b), 200), ((a, b), 50), ((300.0, 900.0), 100)] {
            let want = brute_envelope(&full.t, &full.channels[0].values, range, cols, f);
            same(
                &columns_of(&small, 0, range, cols),
                &want,
                &format!("{range:?}/{cols}"),
            );
        }
    }

    #[test]
    fn a_tiny_or_zero_limit_keeps_its_floor_without_panicking() {
        for limit in [0, 1, 10_000] {
            let mut h = History::new(7);
            h.set_memory_limit(Some(limit));
            for i in 0..200_000 {
                h.push(i as f64 * 0.001, &[1.0; 7]);
            }
            assert_eq!(h.len(), 200_000);
            assert!(h.exact_len() >= 4096 && h.exact_len() < MIN_EXACT_SAMPLES);
            // The floor: the minimum exact room and the coarsest envelope.
            assert!(h.memory_bytes() < 600_000, "{}", h.memory_bytes());
            let mut env = Vec::new();
            h.envelope(0, 0.0, 200.0, 10, &mut env);
            assert_eq!(env.len(), 10);
            assert_eq!(h.value_at(3, 100.0).map(|v| v.1), Some(1.0));
        }
        let mut empty = History::new(0);
        empty.set_memory_limit(Some(0));
        assert!(empty.push(1.0, &[]));
        assert_eq!(empty.span(), Some((1.0, 1.0)));
    }

    #[test]
    fn reserving_respects_the_limit() {
        let mut h = History::new(7);
        h.set_memory_limit(Some(2_000_000));
        h.reserve(10_000_000);
        assert!(h.memory_bytes() <= 2_000_000, "{}", h.memory_bytes());
        assert!(h.times().len() < h.t.capacity());
        let mut some = History::new(7);
        some.set_memory_limit(Some(2_000_000));
        some.reserve(1000);
        assert!(some.t.capacity() >= 1000 && some.memory_bytes() < 100_000);
        // A limit set after filling compacts at once.
        let mut grown = filled(300_000);
        grown.set_memory_limit(Some(1_000_000));
        assert!(grown.memory_bytes() <= 1_000_000);
        assert_eq!(grown.len(), 300_000);
    }
}
