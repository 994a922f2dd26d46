//! The plots' envelope cache (`model::history::EnvelopeCache`) and the band mesh that draws it
//! (`ui::widgets::envelope_band`), issue 31: the cached envelope is the exact min/max over
//! the raw samples of each anchored column, at a plot's width, over hours of 100 Hz history;
//! a cache carried through appends, a sliding window, a zoom, compaction and floor
//! coarsening equals one computed cold; gaps and missing values still break the line; the
//! mesh has the vertices it should and stays inside the plot; a memo keeps a band's mesh
//! while nothing it is drawn from changed, and a lane's signals share one mesh.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::sync::Arc;

use eframe::egui::{Color32, Rect, pos2};
use egui_plot::{PlotBounds, PlotTransform};
use jaus_ocu::model::history::{Column, EnvelopeCache, History, Lines, column_width};
use jaus_ocu::ui::widgets::envelope_band::{BandMemo, EnvelopeBand};

/// The plot width of the 8 h bench's lanes, pixel columns.
const WIDTH: usize = 1216;

/// Sample `i` at 100 Hz: a slow sine with a spike every 7919 samples (a column off by one
/// sample, or a wrong column, loses or moves a spike).
fn sample(i: usize) -> (f64, f64) {
    let t = i as f64 * 0.01;
    let spike = if i.is_multiple_of(7919) {
        50.0 + (i % 13) as f64
    } else {
        0.0
    };
    (
        t,
        (t * 0.01).sin() + spike - 0.5 * f64::from(u8::from(i % 6007 == 3)),
    )
}

/// `hours` of [`sample`] at 100 Hz, pushed one by one.
fn hours(hours: f64) -> History {
    let n = (hours * 3600.0 * 100.0) as usize;
    let mut h = History::new(1);
    h.reserve(n);
    for i in 0..n {
        let (t, v) = sample(i);
        h.push(t, &[v]);
    }
    h
}

/// The time of every sample of `n` and its value as the history stores it (f32).
fn raw(n: usize) -> (Vec<f64>, Vec<f32>) {
    (0..n)
        .map(|i| {
            let (t, v) = sample(i);
            (t, v as f32)
        })
        .unzip()
}

/// The envelope of `(ts, vs)` by brute force over every sample, on the anchored grid of
/// `[t0, t1]` over `cols` columns, edges rounded up to `f` samples when `snap`.
fn brute(
    (ts, vs): (&[f64], &[f32]),
    (t0, t1): (f64, f64),
    cols: usize,
    snap: bool,
    f: usize,
) -> Vec<Column> {
    let dt = column_width(t0, t1, cols);
    let ka = (t0 / dt).floor() as i64;
    let kb = ((t1 / dt).ceil() as i64).max(ka + 1);
    let n = ts.len();
    let edge = |k: i64| {
        let e = k as f64 * dt;
        let i = ts.partition_point(|x| *x < e);
        if snap { (i.div_ceil(f) * f).min(n) } else { i }
    };
    (ka..kb)
        .map(|k| {
            let (a, b) = (edge(k), edge(k + 1).max(edge(k)));
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in &vs[a..b] {
                if !v.is_nan() {
                    lo = lo.min(f64::from(*v));
                    hi = hi.max(f64::from(*v));
                }
            }
            Column {
                index: k,
                samples: (a, b),
                min: lo,
                max: hi,
            }
        })
        .collect()
}

/// Asserts two envelopes equal, naming the first column that differs.
fn same(got: &[Column], want: &[Column], what: &str) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        first.is_none() && got.len() == want.len(),
        "{what}: {} vs {} columns, first difference at {first:?}: {:?} vs {:?}",
        got.len(),
        want.len(),
        first.map(|i| got[i]),
        first.map(|i| want[i])
    );
}

/// A cold cache's columns of `h` over `range` (channel 0).
fn cold(h: &History, range: (f64, f64), cols: usize) -> Vec<Column> {
    let mut c = EnvelopeCache::new();
    assert!(c.update(h, range, cols, &[0]), "decimated");
    c.columns(0)
}

#[test]
fn the_cached_envelope_is_the_brute_force_min_max_over_1_8_and_12_hours() {
    for length in [1.0, 8.0, 12.0] {
        let h = hours(length);
        let (ts, vs) = raw(h.len());
        let end = ts[ts.len() - 1];
        for (range, snap) in [
            // The whole history in view (snapped to 64-sample blocks).
            ((0.0, end), true),
            // The last ten minutes: 49 samples per column, edges not snapped.
            ((end - 600.0, end), false),
        ] {
            let mut c = EnvelopeCache::new();
            assert!(c.update(&h, range, WIDTH, &[0]));
            assert_eq!(c.snapped(), snap, "{length} h {range:?}");
            let got = c.columns(0);
            assert!(got.len() == WIDTH || got.len() == WIDTH + 1);
            same(
                &got,
                &brute((&ts, &vs), range, WIDTH, snap, h.floor_block()),
                &format!("{length} h, {range:?}"),
            );
            // Every spike in view is a column's max.
            let spikes = got.iter().filter(|c| c.max >= 50.0).count();
            assert!(spikes > 0, "{length} h");
        }
    }
}

#[test]
fn a_cache_following_new_samples_equals_a_cold_one_and_computes_only_the_tail() {
    let mut h = hours(1.0);
    let mut next = h.len();
    for window in [3600.0, 60.0] {
        let mut warm = EnvelopeCache::new();
        for frame in 0..400 {
            // A frame's 33 ms of new samples (3 or 4 at 100 Hz).
            let upto = next + if frame % 3 == 0 { 4 } else { 3 };
            while next < upto {
                let (t, v) = sample(next);
                h.push(t, &[v]);
                next += 1;
            }
            let end = h.span().unwrap().1;
            let range = (end - window, end);
            assert!(warm.update(&h, range, WIDTH, &[0]));
            same(
                &warm.columns(0),
                &cold(&h, range, WIDTH),
                &format!("{window} s window, frame {frame}"),
            );
            if frame > 0 {
                // The tail only: the last column or two, and one newly exposed.
                assert!(warm.computed() <= 3, "frame {frame}: {}", warm.computed());
            }
        }
    }
}

#[test]
fn a_cache_after_a_zoom_a_pan_or_a_narrower_plot_equals_a_cold_one() {
    let h = hours(1.0);
    let mut warm = EnvelopeCache::new();
    let views = [
        ((0.0, 3599.0), WIDTH),
        ((1000.0, 2000.0), WIDTH),
        ((1000.0, 1100.0), WIDTH),
        ((1005.0, 1105.0), WIDTH),
        ((0.0, 3599.0), WIDTH),
        ((0.0, 3599.0), 700),
        ((900.0, 3500.0), 700),
    ];
    for (range, cols) in views {
        warm.update(&h, range, cols, &[0]);
        same(
            &warm.columns(0),
            &cold(&h, range, cols),
            &format!("{range:?}/{cols}"),
        );
    }
}

/// `n` samples into a history without a limit and one with `limit`.
fn pair(n: usize, limit: usize) -> (History, History) {
    let mut full = History::new(1);
    let mut small = History::new(1);
    small.set_memory_limit(Some(limit));
    for i in 0..n {
        let (t, v) = sample(i);
        full.push(t, &[v]);
        small.push(t, &[v]);
    }
    (full, small)
}

#[test]
fn a_cache_kept_through_compaction_and_coarsening_equals_a_cold_one() {
    // 300 kB: room for about 20 000 exact samples (compacted every minute or so of 100 Hz);
    // the 64-sample envelope outgrows half of it after about 330 000 samples.
    let (mut full, mut small) = pair(200_000, 300_000);
    assert!(small.exact_from().is_some());
    // The plot's width, and 300 columns (snapped at 512-sample blocks too).
    let mut warm = [EnvelopeCache::new(), EnvelopeCache::new()];
    let mut next = small.len();
    let (mut compactions, mut coarsened) = (0, false);
    let generation = small.generation();
    for _ in 0..60 {
        let from = small.exact_from();
        let end = small.span().unwrap().1;
        // The whole history in a window of a fixed length (one grid: the cache is carried
        // over from step to step).
        let range = (end - 6000.0, end);
        for (warm, cols) in warm.iter_mut().zip([WIDTH, 300]) {
            assert!(warm.update(&small, range, cols, &[0]));
            let got = warm.columns(0);
            same(
                &got,
                &cold(&small, range, cols),
                &format!("{cols} at {end} s"),
            );
            if small.floor_block() == 64 {
                // Before the floor coarsens, the picture of the history without a limit.
                same(
                    &got,
                    &cold(&full, range, cols),
                    &format!("unlimited at {end}"),
                );
            }
        }
        // Forty seconds more per step.
        for _ in 0..4000 {
            let (t, v) = sample(next);
            small.push(t, &[v]);
            full.push(t, &[v]);
            next += 1;
        }
        compactions += usize::from(small.exact_from() != from);
        coarsened |= small.floor_block() > 64;
    }
    assert!(compactions >= 3, "{compactions}");
    assert!(coarsened, "floor {}", small.floor_block());
    assert_ne!(
        small.generation(),
        generation,
        "coarsening changes the generation"
    );
}

/// 100 Hz from 0 to 60 s, nothing from 20 s to 25 s, values missing from 40 s to 42 s.
fn with_a_gap() -> History {
    let mut h = History::new(1);
    for k in 0..6000 {
        let t = f64::from(k) * 0.01;
        if (20.0..25.0).contains(&t) {
            continue;
        }
        let v = if (40.0..42.0).contains(&t) {
            f64::NAN
        } else {
            t.sin()
        };
        h.push(t, &[v]);
    }
    h
}

#[test]
fn the_cached_line_breaks_at_a_gap_and_at_missing_values() {
    let h = with_a_gap();
    let gap = h.gap_threshold(0.0, 60.0);
    let mut c = EnvelopeCache::new();
    // 60 s over 300 columns: 0.2 s a column, the gap spans 25 of them.
    assert!(c.update(&h, (0.0, 59.99), 300, &[0]));
    let lines: Lines = c.lines(0, gap);
    assert_eq!(lines.breaks.len(), 2, "{:?}", lines.breaks);
    let runs: Vec<_> = lines.runs().collect();
    // Each run ends in the column of its last sample (less than a column past it).
    assert!(runs[0].last().unwrap()[0] < 20.2 && runs[1][0][0] > 24.8);
    assert!(runs[1].last().unwrap()[0] < 40.2 && runs[2][0][0] > 41.8);
    assert!(lines.points.iter().all(|p| !(20.2..24.8).contains(&p[0])));
    // The same view while it slides on: still broken there.
    for step in 1..=10 {
        let d = f64::from(step) * 0.033;
        c.update(&h, (d, 59.99 + d), 300, &[0]);
        assert_eq!(c.lines(0, gap).breaks.len(), 2, "{d}");
    }
}

/// A plot transform of `frame` showing `x` by `y`.
fn transform(frame: Rect, x: (f64, f64), y: (f64, f64)) -> PlotTransform {
    PlotTransform::new(
        frame,
        PlotBounds::from_min_max([x.0, y.0], [x.1, y.1]),
        false,
    )
}

#[test]
fn the_band_mesh_has_two_or_four_vertices_a_column_and_stays_inside_the_plot() {
    let h = with_a_gap();
    let mut c = EnvelopeCache::new();
    let range = (0.0, 59.99);
    assert!(c.update(&h, range, 300, &[0]));
    let lines = c.lines(0, h.gap_threshold(0.0, 60.0));
    let columns = lines.points.len() / 2;
    let runs = lines.runs().count();
    assert_eq!(runs, 3);
    let band = EnvelopeBand::new(lines.clone(), Color32::RED, 1.5, 0);
    let frame = Rect::from_min_max(pos2(64.0, 10.0), pos2(364.0, 110.0));
    let tf = transform(frame, range, (-1.2, 1.2));
    // Without feathering: top and bottom of each column, two triangles between neighbours
    // within a run.
    let plain = band.mesh(&tf, 0.0);
    assert_eq!(plain.vertices.len(), 2 * columns);
    assert_eq!(plain.indices.len(), 3 * 2 * (columns - runs));
    // Feathered: a transparent row either side.
    let soft = band.mesh(&tf, 1.0);
    assert_eq!(soft.vertices.len(), 4 * columns);
    assert_eq!(soft.indices.len(), 3 * 6 * (columns - runs));
    let transparent = soft
        .vertices
        .iter()
        .filter(|v| v.color == Color32::TRANSPARENT);
    assert_eq!(transparent.count(), 2 * columns);
    for m in [&plain, &soft] {
        assert!(m.is_valid());
        for v in &m.vertices {
            assert!(
                frame.expand(1.0).contains(v.pos),
                "{:?} outside {frame:?}",
                v.pos
            );
        }
    }
    // A flat signal is still a stroke-wide line; a lone column a stroke-wide quad.
    let flat = Lines {
        points: vec![
            [10.0, 0.0],
            [10.0, 0.0],
            [20.0, 0.0],
            [20.0, 0.0],
            [40.0, 0.5],
            [40.0, 0.5],
        ],
        breaks: vec![4],
    };
    let m = EnvelopeBand::new(flat, Color32::RED, 1.5, 1).mesh(&tf, 0.0);
    // The two columns lie 50 points apart: each keeps its band over a point, a line joins
    // them (six edges of two vertices), then the lone quad.
    assert_eq!(m.vertices.len(), 12 + 4);
    assert_eq!(m.indices.len(), 3 * (10 + 2));
    for pair in m.vertices.chunks(2) {
        assert!((pair[1].pos.y - pair[0].pos.y - 1.5).abs() < 1e-4);
    }
    let lone = &m.vertices[12..];
    assert!((lone[2].pos.x - lone[0].pos.x - 1.5).abs() < 1e-4);
}

#[test]
fn a_band_leaves_out_only_columns_within_the_tolerance() {
    let frame = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 200.0));
    let tf = transform(frame, (0.0, 1000.0), (-2.0, 2.0));
    // A flat band of 1000 columns and one with a single-column spike in its middle.
    let pairs = |spike: bool| Lines {
        points: (0..1000)
            .flat_map(|k| {
                let x = f64::from(k) + 0.5;
                let hi = if spike && k == 500 { 1.5 } else { 0.5 };
                [[x, -0.5], [x, hi]]
            })
            .collect(),
        breaks: Vec::new(),
    };
    let flat = EnvelopeBand::new(pairs(false), Color32::RED, 1.5, 0).tolerance(0.25);
    let m = flat.mesh(&tf, 0.0);
    // Only the run's ends and every MAX_SKIP-th column.
    assert!(
        m.vertices.len() <= 2 * (2 + 1000 / 32),
        "{}",
        m.vertices.len()
    );
    let spiky = EnvelopeBand::new(pairs(true), Color32::RED, 1.5, 0).tolerance(0.25);
    let m = spiky.mesh(&tf, 0.0);
    let top_at_spike = m
        .vertices
        .chunks(2)
        .any(|v| (v[0].pos.x - 500.5).abs() < 1e-3 && v[0].pos.y < 70.0);
    assert!(top_at_spike, "the spike's column is kept");
    // Without a tolerance every column is drawn.
    let all = EnvelopeBand::new(pairs(true), Color32::RED, 1.5, 0).mesh(&tf, 0.0);
    assert_eq!(all.vertices.len(), 2000);
}

#[test]
fn a_cache_handed_another_history_starts_over() {
    let a = hours(0.5);
    let mut b = History::new(1);
    for i in 0..a.len() {
        let (t, v) = sample(i);
        b.push(t, &[-v]);
    }
    let range = (0.0, 1800.0);
    let mut c = EnvelopeCache::new();
    c.update(&a, range, WIDTH, &[0]);
    assert!(c.update(&b, range, WIDTH, &[0]));
    same(&c.columns(0), &cold(&b, range, WIDTH), "the second history");
}

#[test]
fn a_memo_draws_the_same_mesh_until_the_lines_or_the_view_change() {
    let h = with_a_gap();
    let mut c = EnvelopeCache::new();
    let range = (0.0, 59.99);
    assert!(c.update(&h, range, 300, &[0]));
    let lines = Arc::new(c.lines(0, h.gap_threshold(0.0, 60.0)));
    let frame = Rect::from_min_max(pos2(64.0, 10.0), pos2(364.0, 110.0));
    let tf = transform(frame, range, (-1.2, 1.2));
    let memo = BandMemo::default();
    let band = || EnvelopeBand::new(lines.clone(), Color32::RED, 1.5, 0).memo(&memo);
    let first = band().drawn_mesh(&tf, 1.0);
    assert_eq!(memo.built(), 1);
    assert!(Arc::ptr_eq(&first, &band().drawn_mesh(&tf, 1.0)), "reused");
    assert_eq!(*first, band().mesh(&tf, 1.0), "and the same as one built");
    // The time axis slid a twentieth of a point: the same mesh; half a point: a new one.
    let point = (range.1 - range.0) / f64::from(frame.width());
    let slid = |d: f64| {
        transform(
            frame,
            (range.0 + d * point, range.1 + d * point),
            (-1.2, 1.2),
        )
    };
    assert!(Arc::ptr_eq(&first, &band().drawn_mesh(&slid(0.05), 1.0)));
    assert_eq!(memo.built(), 1);
    let moved = band().drawn_mesh(&slid(0.5), 1.0);
    assert_eq!(memo.built(), 2);
    assert_eq!(*moved, band().mesh(&slid(0.5), 1.0));
    // Other values shown, other feathering, equal lines in another allocation: built again.
    band().drawn_mesh(&transform(frame, range, (-2.0, 2.0)), 1.0);
    assert_eq!(memo.built(), 3);
    band().drawn_mesh(&transform(frame, range, (-2.0, 2.0)), 0.0);
    assert_eq!(memo.built(), 4);
    EnvelopeBand::new(Arc::new((*lines).clone()), Color32::RED, 1.5, 0)
        .memo(&memo)
        .drawn_mesh(&transform(frame, range, (-2.0, 2.0)), 0.0);
    assert_eq!(memo.built(), 5);
    // Without a memo, every call builds.
    let bare = EnvelopeBand::new(lines.clone(), Color32::RED, 1.5, 0);
    assert!(!Arc::ptr_eq(
        &bare.drawn_mesh(&tf, 1.0),
        &bare.drawn_mesh(&tf, 1.0)
    ));
}

#[test]
fn a_lanes_bands_are_one_mesh_each_signal_in_its_colour_and_scale() {
    let h = with_a_gap();
    let mut c = EnvelopeCache::new();
    let range = (0.0, 59.99);
    assert!(c.update(&h, range, 300, &[0]));
    let lines = c.lines(0, h.gap_threshold(0.0, 60.0));
    let frame = Rect::from_min_max(pos2(64.0, 10.0), pos2(364.0, 110.0));
    let tf = transform(frame, range, (-2.5, 2.5));
    let red = EnvelopeBand::new(lines.clone(), Color32::RED, 1.5, 0);
    let doubled: Lines = Lines {
        points: lines.points.iter().map(|p| [p[0], 2.0 * p[1]]).collect(),
        breaks: lines.breaks.clone(),
    };
    let blue_doubled = EnvelopeBand::new(doubled, Color32::BLUE, 1.5, 0);
    let blue_scaled = EnvelopeBand::new(lines.clone(), Color32::BLUE, 1.5, 0).scale(2.0);
    let (a, b) = (red.mesh(&tf, 1.0), blue_doubled.mesh(&tf, 1.0));
    let both = EnvelopeBand::new(lines.clone(), Color32::RED, 1.5, 0)
        .with(blue_scaled)
        .mesh(&tf, 1.0);
    assert!(both.is_valid());
    assert_eq!(both.vertices.len(), a.vertices.len() + b.vertices.len());
    assert_eq!(both.indices.len(), a.indices.len() + b.indices.len());
    assert_eq!(both.vertices[..a.vertices.len()], a.vertices[..]);
    // The second signal's vertices: its colour, its values times its scale.
    for (got, want) in both.vertices[a.vertices.len()..].iter().zip(&b.vertices) {
        assert_eq!(got.color, want.color);
        assert!((got.pos - want.pos).length() < 1e-3, "{got:?} {want:?}");
    }
    let offset = a.vertices.len() as u32;
    assert!(
        both.indices[a.indices.len()..]
            .iter()
            .zip(&b.indices)
            .all(|(g, w)| *g == w + offset)
    );
}

/// How tall `mesh` is along the vertical line at `x`, points: the extent of every triangle's
/// crossing of it (0 where none crosses).
fn height_at(mesh: &eframe::egui::Mesh, x: f32) -> f32 {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for tri in mesh.indices.chunks_exact(3) {
        let p: Vec<_> = tri.iter().map(|&i| mesh.vertices[i as usize].pos).collect();
        for (a, b) in [(p[0], p[1]), (p[1], p[2]), (p[2], p[0])] {
            let (a, b) = if a.x <= b.x { (a, b) } else { (b, a) };
            if a.x <= x && x <= b.x && b.x > a.x {
                let y = a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x);
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
    }
    if hi >= lo { hi - lo } else { 0.0 }
}

#[test]
fn columns_apart_are_joined_by_a_line_not_a_band_over_values_no_sample_had() {
    // A column that spans a motion's end (-20 to 0) then, 40 columns later, the next sample
    // (0): a signal reported on change, at rest in between. Without samples between them
    // nothing but a stroke-wide line may be drawn there.
    let frame = Rect::from_min_max(pos2(0.0, 0.0), pos2(100.0, 100.0));
    let tf = transform(frame, (0.0, 100.0), (-25.0, 25.0));
    let lines = Lines {
        points: vec![
            [9.0, -20.0],
            [9.0, -20.0],
            [10.0, -20.0],
            [10.0, 0.0],
            [50.0, 0.0],
            [50.0, 0.0],
            [51.0, 0.0],
            [51.0, 0.0],
        ],
        breaks: Vec::new(),
    };
    let band = EnvelopeBand::new(lines, Color32::RED, 1.5, 0);
    let m = band.mesh(&tf, 0.0);
    assert!(m.is_valid());
    // 2 points a unit: the column spanning the motion is 40 points tall.
    assert!(height_at(&m, 10.0) > 39.0, "{}", height_at(&m, 10.0));
    for x in [12.0, 20.0, 30.0, 40.0, 49.0] {
        let h = height_at(&m, x);
        assert!(
            h <= 1.5 + 1e-3,
            "{h} points tall at x {x}: a band where no sample was"
        );
        assert!(h > 0.5, "the line is drawn at x {x}");
    }
    // Feathered alike: the line and its feathering only (a point of feathering, widened
    // at most fourfold where the edge it follows turns steeply).
    let soft = band.mesh(&tf, 1.0);
    for x in [20.0, 30.0, 40.0] {
        let h = height_at(&soft, x);
        assert!(h <= 1.5 + 4.0 + 1e-3, "{h} points tall at x {x}");
    }
    // Neighbouring columns (a point apart) keep the band between them.
    let steady = Lines {
        points: (0..50)
            .flat_map(|i| [[f64::from(i), -1.0], [f64::from(i), 1.0]])
            .collect(),
        breaks: Vec::new(),
    };
    let m = EnvelopeBand::new(steady, Color32::RED, 1.5, 0).mesh(&tf, 0.0);
    assert_eq!(m.vertices.len(), 100, "no joins between neighbours");
    assert!((height_at(&m, 20.5) - 5.5).abs() < 1e-3);
}
