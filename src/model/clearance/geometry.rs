//! The shapes clearance is measured between and their signed surface distances, closed form
//! or (for a capsule against a box) an exact one-dimensional convex search. Vehicle frame, m.
//!
//! Every function here returns a [`Contact`]: the signed gap between the two surfaces
//! (negative when they overlap, by the depth of the overlap), the closest points and the unit
//! direction in which moving the first shape away from the second opens the gap.

use glam::{DAffine3, DVec3};

/// A segment swept by a sphere: the bounding cylinders of kinematics.md §7 with rounded ends
/// (a zero-length cylinder is a sphere, the cap kinematics.md suggests).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capsule {
    /// One end of the axis, m.
    pub from: DVec3,
    /// The other end, m (equal to `from` for a sphere).
    pub to: DVec3,
    /// Radius, m (never negative).
    pub radius: f64,
}

/// An oriented box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrientedBox {
    /// World ← box: the box's centre and axes.
    pub pose: DAffine3,
    /// Half its size along its own x, y, z, m (never negative).
    pub half: DVec3,
}

/// The ground: everything with a vehicle z greater than `z` (vehicle +z is down) is below
/// it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ground {
    /// The ground's height in the vehicle frame, m (positive: below the vehicle origin).
    pub z: f64,
}

/// The signed gap between two shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Surface-to-surface distance, m; negative when they overlap (minus the depth).
    pub gap: f64,
    /// The point of the first shape's axis (or surface) nearest the second, m.
    pub on_a: DVec3,
    /// The point of the second shape's axis (or surface) nearest the first, m.
    pub on_b: DVec3,
    /// Unit direction moving the first shape along which opens the gap (from `on_b` to
    /// `on_a`); zero when the axes meet and no direction is defined.
    pub opens: DVec3,
}

/// The closest points of segments `p1..q1` and `p2..q2`: parameters `(s, t)` in 0..=1
/// (Ericson, *Real-Time Collision Detection* §5.1.9; degenerate segments handled).
pub fn closest_segment_params(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> (f64, f64) {
    const EPS: f64 = 1e-18;
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    if a <= EPS && e <= EPS {
        return (0.0, 0.0);
    }
    if a <= EPS {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= EPS {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > EPS * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        // Parallel: any s; take the start.
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

fn contact(on_a: DVec3, on_b: DVec3, axis_distance: f64, radii: f64) -> Contact {
    let d = on_a - on_b;
    Contact {
        gap: axis_distance - radii,
        on_a,
        on_b,
        opens: d.try_normalize().unwrap_or(DVec3::ZERO),
    }
}

/// Capsule against capsule: axis distance minus both radii.
pub fn capsule_capsule(a: &Capsule, b: &Capsule) -> Contact {
    let (s, t) = closest_segment_params(a.from, a.to, b.from, b.to);
    let on_a = a.from.lerp(a.to, s);
    let on_b = b.from.lerp(b.to, t);
    contact(on_a, on_b, on_a.distance(on_b), a.radius + b.radius)
}

/// Capsule against the ground: the height of its lowest axis point above the ground minus
/// its radius. Opens upwards (vehicle −z).
pub fn capsule_ground(a: &Capsule, g: &Ground) -> Contact {
    let low = if a.from.z >= a.to.z { a.from } else { a.to };
    Contact {
        gap: g.z - low.z - a.radius,
        on_a: low,
        on_b: DVec3::new(low.x, low.y, g.z),
        opens: DVec3::NEG_Z,
    }
}

/// Signed distance from `p` to the box (negative inside) and the nearest point of its
/// surface.
pub fn box_point(b: &OrientedBox, p: DVec3) -> (f64, DVec3) {
    let (d, surface) = local_box_point(b.half, b.pose.inverse().transform_point3(p));
    (d, b.pose.transform_point3(surface))
}

/// [`box_point`] in the box's own frame.
fn local_box_point(half: DVec3, local: DVec3) -> (f64, DVec3) {
    let q = local.abs() - half;
    let outside = q.max(DVec3::ZERO);
    if outside.length_squared() > 0.0 {
        return (outside.length(), local.clamp(-half, half));
    }
    // Inside: the nearest face is the one with the largest (least negative) q.
    let axis = if q.x >= q.y && q.x >= q.z {
        0
    } else if q.y >= q.z {
        1
    } else {
        2
    };
    let mut surface = local;
    surface[axis] = half[axis].copysign(local[axis]);
    (q.max_element(), surface)
}

/// Capsule against box. The box's signed distance is convex, so along the capsule's axis it
/// has one minimum: found by golden-section search (in the box's frame) to well below a
/// micrometre.
pub fn capsule_box(a: &Capsule, b: &OrientedBox) -> Contact {
    let inv = b.pose.inverse();
    let (from, to) = (inv.transform_point3(a.from), inv.transform_point3(a.to));
    let at = |s: f64| local_box_point(b.half, from.lerp(to, s)).0;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    let ratio = (5.0_f64.sqrt() - 1.0) / 2.0;
    let mut x1 = hi - ratio * (hi - lo);
    let mut x2 = lo + ratio * (hi - lo);
    let (mut f1, mut f2) = (at(x1), at(x2));
    // 0.618^32 of a 10 m axis is under 2 µm.
    for _ in 0..32 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - ratio * (hi - lo);
            f1 = at(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + ratio * (hi - lo);
            f2 = at(x2);
        }
    }
    // The ends too: the minimum may sit on one.
    let best = [0.0, f64::midpoint(lo, hi), 1.0]
        .into_iter()
        .map(|s| (s, at(s)))
        .fold((0.0, f64::INFINITY), |m, x| if x.1 < m.1 { x } else { m });
    let (distance, surface) = local_box_point(b.half, from.lerp(to, best.0));
    let on_a = a.from.lerp(a.to, best.0);
    let mut c = contact(on_a, b.pose.transform_point3(surface), distance, a.radius);
    if distance < 0.0 {
        // Inside the box the way out is towards the nearest face.
        c.opens = -c.opens;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(from: [f64; 3], to: [f64; 3], radius: f64) -> Capsule {
        Capsule {
            from: DVec3::from_array(from),
            to: DVec3::from_array(to),
            radius,
        }
    }

    #[test]
    fn crossing_capsules_gap_is_axis_distance_minus_radii() {
        let a = cap([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1);
        let b = cap([0.0, -1.0, 0.5], [0.0, 1.0, 0.5], 0.2);
        let c = capsule_capsule(&a, &b);
        assert!((c.gap - 0.2).abs() < 1e-12, "{c:?}");
        assert!((c.opens - DVec3::NEG_Z).length() < 1e-12);
    }

    #[test]
    fn parallel_and_degenerate_segments() {
        let a = cap([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.0);
        let b = cap([0.5, 0.3, 0.0], [2.0, 0.3, 0.0], 0.0);
        assert!((capsule_capsule(&a, &b).gap - 0.3).abs() < 1e-12);
        let p = cap([3.0, 0.0, 0.0], [3.0, 0.0, 0.0], 0.5);
        assert!((capsule_capsule(&a, &p).gap - 1.5).abs() < 1e-12);
        assert!((capsule_capsule(&p, &p).gap + 1.0).abs() < 1e-12);
    }

    #[test]
    fn box_inside_and_outside() {
        let b = OrientedBox {
            pose: DAffine3::from_translation(DVec3::new(0.0, 0.0, 1.0)),
            half: DVec3::new(1.0, 1.0, 0.5),
        };
        let above = cap([-3.0, 0.0, 0.0], [3.0, 0.0, 0.0], 0.1);
        let c = capsule_box(&above, &b);
        assert!((c.gap - 0.4).abs() < 1e-9, "{c:?}");
        assert!((c.opens - DVec3::NEG_Z).length() < 1e-9);
        let into = cap([0.0, 0.0, 0.0], [0.0, 0.0, 0.7], 0.05);
        let c = capsule_box(&into, &b);
        assert!((c.gap + 0.25).abs() < 1e-6, "{c:?}");
        assert!((c.opens - DVec3::NEG_Z).length() < 1e-6, "{c:?}");
    }

    #[test]
    fn ground_gap_is_lowest_point_height_minus_radius() {
        let a = cap([0.0, 0.0, -0.5], [1.0, 0.0, 0.2], 0.05);
        let c = capsule_ground(&a, &Ground { z: 0.3 });
        assert!((c.gap - 0.05).abs() < 1e-12);
    }
}
