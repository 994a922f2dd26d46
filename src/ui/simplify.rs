//! Plot lines with no point the screen cannot show: a polyline reduced to the points that
//! move it by more than a fraction of a pixel (issue 21, "draw less, not worse").
//!
//! A live plot draws thousands of points per frame (the demo arm's force/torque at 100 Hz over
//! a ten-second window is 1000 points per channel), and under a software renderer every
//! segment costs: the tessellator makes four triangles of it and the rasterizer sets each one
//! up, whatever its size. Most of those points lie on the line through their neighbours to
//! well within a pixel (a flat channel, a slow joint), so they add triangles and no ink.
//!
//! [`simplify`] keeps a point only where leaving it out would move the drawn line by more than
//! `tolerance` pixels: the sleeve (cone) method of Zhao and Saalfeld, one pass, O(n). From the
//! last kept point (the anchor) every skipped point allows the directions that pass within
//! `tolerance` of it; the next point is skipped as long as its direction lies in what all of
//! them allow and it is at least as far from the anchor as they are. So every dropped point
//! is within `tolerance` of the segment drawn in its place (within `tolerance * sqrt(2)` at a
//! segment's far end). Kept points are input points, in order, first and last always.

/// A direction in pixel space (not necessarily unit length).
type Dir = [f64; 2];

/// The length of `v`: pixel distances need none of `hypot`'s care for overflow, and this is
/// the loop's hot path.
fn length(v: Dir) -> f64 {
    (v[0] * v[0] + v[1] * v[1]).sqrt()
}

fn cross(a: Dir, b: Dir) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

/// `v` turned by the angle whose sine is `sin` and cosine `cos` (counter-clockwise for a
/// positive sine).
fn turned(v: Dir, sin: f64, cos: f64) -> Dir {
    [v[0] * cos - v[1] * sin, v[0] * sin + v[1] * cos]
}

/// The directions a segment from the anchor may take: from `lo` counter-clockwise to `hi`
/// (always less than half a turn), or none at all.
#[derive(Clone, Copy)]
enum Cone {
    /// No point constrains the direction yet.
    Any,
    /// Between `lo` and `hi`.
    Between(Dir, Dir),
    /// The points skipped so far allow no common direction.
    Empty,
}

impl Cone {
    fn allows(self, v: Dir) -> bool {
        match self {
            Cone::Any => true,
            Cone::Between(lo, hi) => cross(lo, v) >= 0.0 && cross(v, hi) >= 0.0,
            Cone::Empty => false,
        }
    }

    /// What is left once a point at `v` (pixels from the anchor, `d` its length, more than
    /// `tolerance`) also has to be passed within `tolerance`.
    fn narrowed(self, v: Dir, d: f64, tolerance: f64) -> Cone {
        let sin = tolerance / d;
        let cos = (1.0 - sin * sin).max(0.0).sqrt();
        let (lo_p, hi_p) = (turned(v, -sin, cos), turned(v, sin, cos));
        match self {
            Cone::Any => Cone::Between(lo_p, hi_p),
            Cone::Between(lo, hi) => {
                let lo = if cross(lo, lo_p) > 0.0 { lo_p } else { lo };
                let hi = if cross(hi_p, hi) > 0.0 { hi_p } else { hi };
                // Both bounds lie within a quarter turn of `v`: they cross exactly when the
                // intersection is empty.
                if cross(lo, hi) < 0.0 {
                    Cone::Empty
                } else {
                    Cone::Between(lo, hi)
                }
            }
            Cone::Empty => Cone::Empty,
        }
    }
}

/// Appends to `out` the points of `points` (plot units) that the line needs at `scale`
/// (pixels per unit of x and of y) to stay within `tolerance` pixels of the full line. With a
/// scale that is not finite and positive (an empty axis range), every point.
pub fn simplify(points: &[[f64; 2]], scale: [f64; 2], tolerance: f64, out: &mut Vec<[f64; 2]>) {
    let usable = scale.iter().all(|s| s.is_finite() && *s > 0.0) && tolerance > 0.0;
    let (Some(&first), Some(&last), true) = (points.first(), points.last(), usable) else {
        out.extend_from_slice(points);
        return;
    };
    let px = |p: [f64; 2]| [p[0] * scale[0], p[1] * scale[1]];
    out.push(first);
    let mut anchor = px(first);
    let mut cone = Cone::Any;
    // The farthest any skipped point is from the anchor, pixels.
    let mut reach = 0.0_f64;
    for (i, &p) in points.iter().enumerate().skip(1) {
        let here = px(p);
        let mut v = [here[0] - anchor[0], here[1] - anchor[1]];
        let mut d = length(v);
        if !(d >= reach && cone.allows(v)) {
            // `p` cannot end the segment: the point before it (not the anchor: the first point
            // after an anchor is always allowed) becomes the next anchor.
            let kept = points[i - 1];
            out.push(kept);
            anchor = px(kept);
            cone = Cone::Any;
            reach = 0.0;
            v = [here[0] - anchor[0], here[1] - anchor[1]];
            d = length(v);
        }
        // A point within the tolerance of the anchor is passed by any segment from it.
        if d > tolerance {
            cone = cone.narrowed(v, d, tolerance);
        }
        reach = reach.max(d);
    }
    if points.len() > 1 {
        out.push(last);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use super::*;

    /// Distance from `p` to the segment `a`–`b`.
    fn to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len2 = dx * dx + dy * dy;
        let t = if len2 > 0.0 {
            (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy)
    }

    /// The farthest any input point is from the kept polyline, pixels; and whether the kept
    /// points are input points in input order, first and last included.
    fn check(points: &[[f64; 2]], scale: [f64; 2], tol: f64) -> (f64, usize) {
        let mut out = Vec::new();
        simplify(points, scale, tol, &mut out);
        assert_eq!(out.first(), points.first());
        assert_eq!(out.last(), points.last());
        let mut at = 0;
        let mut positions = Vec::new();
        for k in &out {
            at += points[at..].iter().position(|p| p == k).unwrap();
            positions.push(at);
        }
        let px = |p: [f64; 2]| [p[0] * scale[0], p[1] * scale[1]];
        let mut worst = 0.0_f64;
        for w in positions.windows(2) {
            let (a, b) = (px(points[w[0]]), px(points[w[1]]));
            for p in &points[w[0]..=w[1]] {
                worst = worst.max(to_segment(px(*p), a, b));
            }
        }
        (worst, out.len())
    }

    /// A deterministic noisy walk: `n` samples 1 ms apart, steps of up to `step`.
    fn walk(n: usize, step: f64, seed: u64) -> Vec<[f64; 2]> {
        let mut s = seed;
        let mut y = 0.0;
        (0..n)
            .map(|i| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                y += ((s >> 33) as f64 / f64::from(1_u32 << 31) - 0.5) * 2.0 * step;
                [i as f64 * 0.001, y]
            })
            .collect()
    }

    #[test]
    fn a_straight_line_keeps_its_ends() {
        let line: Vec<_> = (0..1000)
            .map(|i| [f64::from(i), 2.0 * f64::from(i)])
            .collect();
        assert_eq!(check(&line, [1.0, 1.0], 0.25).1, 2);
    }

    #[test]
    fn no_point_moves_more_than_the_tolerance() {
        for (seed, step) in [(1, 0.01), (2, 0.1), (3, 1.0), (4, 5.0)] {
            let points = walk(3000, step, seed);
            let (worst, kept) = check(&points, [1000.0, 10.0], 0.25);
            assert!(
                worst <= 0.25 * 2f64.sqrt() + 1e-9,
                "seed {seed}: {worst} px"
            );
            assert!(kept <= points.len());
        }
    }

    #[test]
    fn smooth_signals_shrink_and_noise_is_kept() {
        let sine: Vec<_> = (0..1000)
            .map(|i| [f64::from(i) * 0.01, (f64::from(i) * 0.01).sin()])
            .collect();
        // Ten seconds over 1000 px, one unit over 60 px.
        let (_, kept) = check(&sine, [100.0, 60.0], 0.25);
        assert!(kept < 100, "{kept} of 1000 points kept for a sine");
        // Noise of several pixels at a sample per pixel: nearly every point is a corner.
        let noisy = walk(1000, 0.5, 9);
        let (_, kept) = check(&noisy, [1000.0, 10.0], 0.25);
        assert!(kept > 500, "{kept} of 1000 points kept for noise");
    }

    #[test]
    fn a_spike_and_a_turning_back_are_kept() {
        // A vertical min/max stroke per column, as decimated lines are drawn.
        let columns = [[0.0, 0.0], [0.0, 10.0], [1.0, 0.0], [1.0, 10.0], [2.0, 0.0]];
        let mut out = Vec::new();
        simplify(&columns, [1.0, 1.0], 0.25, &mut out);
        assert_eq!(out, columns);
        // Out and back along one direction: the far point stays.
        let back = [[0.0, 0.0], [10.0, 0.0], [5.0, 0.0]];
        out.clear();
        simplify(&back, [1.0, 1.0], 0.25, &mut out);
        assert_eq!(out, back);
    }

    #[test]
    fn degenerate_input_passes_through() {
        let mut out = Vec::new();
        simplify(&[], [1.0, 1.0], 0.25, &mut out);
        assert!(out.is_empty());
        simplify(&[[1.0, 2.0]], [1.0, 1.0], 0.25, &mut out);
        assert_eq!(out, [[1.0, 2.0]]);
        out.clear();
        let three = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]];
        simplify(&three, [1.0, f64::INFINITY], 0.25, &mut out);
        assert_eq!(out, three);
        out.clear();
        simplify(&three, [1.0, 0.0], 0.25, &mut out);
        assert_eq!(out, three);
    }
}
