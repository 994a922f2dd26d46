//! Tests of [`History`]: the envelope against brute force, gaps, the two tiers under a
//! memory limit (bit-identical lines before and after compaction).

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
fn columns_of(h: &History, c: usize, (t0, t1): (f64, f64), cols: usize) -> Vec<(usize, f64, f64)> {
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
