//! The orbit camera of the 3D view and the frame change it works in: plain data, what the
//! scene is seen from. World = the vehicle frame turned 180° about x (z up).

use glam::dcamera::rh;
use glam::{DMat4, DVec3, DVec4};

use crate::model::kinematics::{ArmPose, DEFAULT_CYLINDER_RADIUS, Reach};

/// Vehicle frame → world frame (z up); its own inverse.
pub(super) fn to_world(p: DVec3) -> DVec3 {
    DVec3::new(p.x, -p.y, -p.z)
}

/// Orbit camera state (transient per-view state).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// The point the camera looks at and orbits, vehicle frame, m.
    pub target: [f64; 3],
    /// Azimuth of the eye about the vertical through the target, rad: 0 puts the eye in
    /// front of the target (towards +x), +π/2 to its left (vehicle −y), π behind it.
    pub yaw: f64,
    /// Elevation of the eye above the target, rad (positive looks down); kept within
    /// ±[`Camera::MAX_PITCH`].
    pub pitch: f64,
    /// Eye to target, m.
    pub distance: f64,
    /// Width / height of the viewport last drawn (what [`Camera::fit`] frames for; the view
    /// sets it every frame).
    pub aspect: f64,
    /// Height of the ground grid, world z (up), m: the vehicle's ground (0) unless the arm
    /// hangs from its mount, then just under the lowest point framed (see [`Camera::fit_all`]).
    pub ground: f64,
}

impl Default for Camera {
    fn default() -> Self {
        // Behind the vehicle, to its left and above: the arm reaches away from the operator.
        Self {
            target: [0.3, 0.0, -0.5],
            yaw: 2.35,
            pitch: 0.45,
            distance: 3.0,
            aspect: 1.6,
            ground: 0.0,
        }
    }
}

impl Camera {
    /// Vertical field of view, rad.
    pub const FOV_Y: f64 = 45.0 * std::f64::consts::PI / 180.0;
    /// Largest |pitch|, rad (just short of straight down, where "up" is undefined).
    pub const MAX_PITCH: f64 = 1.55;
    /// Closest and farthest the eye may be from the target, m.
    pub const DISTANCE_RANGE: (f64, f64) = (0.05, 500.0);

    /// Part of each half field of view the framed points may use (the rest is margin).
    pub const FIT_FILL: f64 = 0.9;
    /// How far below the ground the eye may go by orbiting without Ctrl, m (none: a view
    /// from under the floor is never what a drag overshooting the horizon meant).
    pub const GROUND_CLEARANCE: f64 = 0.02;

    /// Radius of the focused arm's tool-point marker on screen, pixels: the same however
    /// near or far the camera is (see [`Camera::metres_per_pixel_at`]).
    pub const MARKER_PX: f64 = 7.0;

    /// Metres that span one pixel of a viewport `height_px` pixels tall at the
    /// vehicle-frame point `p_vehicle` (by its depth in front of the eye): what makes a
    /// marker a constant size on screen.
    pub fn metres_per_pixel_at(&self, p_vehicle: [f64; 3], height_px: f64) -> f64 {
        let (_, _, forward) = self.basis();
        let p = to_world(DVec3::from_array(p_vehicle));
        let depth = (p - self.eye_world()).dot(forward).max(self.near());
        2.0 * depth * (Self::FOV_Y * 0.5).tan() / height_px.max(1.0)
    }

    /// The near clipping distance, m.
    fn near(&self) -> f64 {
        (self.distance * 0.01).max(0.002)
    }

    /// Looks at the whole arm: see [`Camera::fit_all`].
    pub fn fit(&mut self, pose: &ArmPose) {
        self.fit_all(std::slice::from_ref(pose));
    }

    /// Frames several poses at once, the current one and every preset: where the arm is and
    /// where it will go, so the view need not follow it, while the arm still fills the view
    /// (the whole reachable envelope, a sphere of the arm's full reach, would leave a
    /// folded arm a small part of it). Keeps yaw and pitch; the target goes to the middle of
    /// the points as seen from the eye, the distance is the least that keeps every point
    /// inside both fields of view (the narrower one decides) with a margin.
    ///
    /// An arm whose mount turns it upside down (it hangs under the vehicle's ground, as the
    /// PUMA 560 and `UR5e` files mount theirs) gets its grid just under the lowest point
    /// framed: drawn at the vehicle's ground it would cut through the arm.
    pub fn fit_all(&mut self, poses: &[ArmPose]) {
        let points: Vec<DVec3> = poses.iter().flat_map(arm_points).map(to_world).collect();
        if points.is_empty() {
            return;
        }
        // The volumes drawn around the axes: a cylinder without a radius is drawn with the
        // default one.
        let padding = poses
            .iter()
            .flat_map(|p| p.cylinders.iter())
            .map(|c| c.radius.map_or(DEFAULT_CYLINDER_RADIUS, f64::abs))
            .fold(0.0, f64::max);
        self.ground = poses
            .first()
            .map_or(0.0, |p| ground_for(p, &points, padding));
        self.fit_points(&points, padding);
    }

    /// Keeps every sphere of `reaches` ([`Reach`]: a point and its margin) in view: every
    /// sphere inside both fields of view with the margin, whatever the arm does within its
    /// limits. Keeps yaw and pitch, as [`Camera::fit_all`]; the grid goes just under the
    /// first reach when that arm hangs from its mount and its reach goes below the ground.
    pub fn fit_reach(&mut self, reaches: &[Reach]) {
        let spheres: Vec<(DVec3, f64)> = reaches
            .iter()
            .map(|r| (to_world(r.centre), r.radius))
            .collect();
        let Some(first) = reaches.first() else {
            return;
        };
        let lowest = spheres
            .iter()
            .map(|(c, r)| c.z - r)
            .fold(f64::INFINITY, f64::min);
        self.ground = if first.hangs && lowest < 0.0 {
            lowest - 0.01
        } else {
            0.0
        };
        self.fit_spheres(&spheres);
    }

    /// Sets target and distance so every world point (grown by `padding`) is in view.
    fn fit_points(&mut self, points: &[DVec3], padding: f64) {
        let spheres: Vec<(DVec3, f64)> = points.iter().map(|p| (*p, padding)).collect();
        self.fit_spheres(&spheres);
    }

    /// Sets target and distance so every world sphere (centre, radius) is in view.
    fn fit_spheres_once(&mut self, spheres: &[(DVec3, f64)]) {
        if spheres.is_empty() {
            return;
        }
        let (right, up, forward) = self.basis();
        let extent = |axis: DVec3| {
            spheres
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (p, r)| {
                    let v = p.dot(axis);
                    (lo.min(v - r), hi.max(v + r))
                })
        };
        let (x0, x1) = extent(right);
        let (y0, y1) = extent(up);
        let (z0, z1) = extent(forward);
        let mut centre = right * (x0 + x1) * 0.5 + up * (y0 + y1) * 0.5 + forward * (z0 + z1) * 0.5;
        let tan_y = (Self::FOV_Y * 0.5).tan() * Self::FIT_FILL;
        let tan_x = tan_y * self.aspect.max(1e-3);
        let (sin_x, sin_y) = (tan_x.atan().sin(), tan_y.atan().sin());
        // A sphere at view offsets (x, y), depth z past the target and radius r is inside
        // the side planes of the view when its centre is at least r from each:
        // (d + z) sin θ − |x| cos θ >= r, i.e. d >= |x| / tan θ + r / sin θ − z.
        let distance_for = |centre: DVec3| {
            spheres
                .iter()
                .map(|(p, r)| {
                    let v = *p - centre;
                    let (x, y, z) = (v.dot(right).abs(), v.dot(up).abs(), v.dot(forward));
                    (x / tan_x + r / sin_x).max(y / tan_y + r / sin_y) - z
                })
                .fold(0.1, f64::max)
        };
        let mut distance = distance_for(centre);
        // Perspective draws near points larger: the middle of the points in the world is
        // not the middle on screen. Move the target to the middle of the projected extent
        // and fit again; a few rounds settle it.
        for _ in 0..30 {
            let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for (p, r) in spheres {
                let v = *p - centre;
                let depth = (distance + v.dot(forward)).max(1e-6);
                let ndc = [v.dot(right) / depth, v.dot(up) / depth];
                let grow = r / depth;
                for k in 0..2 {
                    lo[k] = lo[k].min(ndc[k] - grow);
                    hi[k] = hi[k].max(ndc[k] + grow);
                }
            }
            let shift = [(lo[0] + hi[0]) * 0.5, (lo[1] + hi[1]) * 0.5];
            centre += (right * shift[0] + up * shift[1]) * distance * 0.5;
            distance = distance_for(centre);
        }
        self.target = to_world(centre).to_array();
        self.distance = distance.clamp(Self::DISTANCE_RANGE.0, Self::DISTANCE_RANGE.1);
    }

    /// [`Camera::fit_spheres_once`], then raised above the ground; raising the eye turns
    /// the view, so the spheres are fitted again for it (pitch only grows: a few rounds).
    fn fit_spheres(&mut self, spheres: &[(DVec3, f64)]) {
        for _ in 0..4 {
            self.fit_spheres_once(spheres);
            let pitch = self.pitch;
            self.keep_above_ground();
            if self.pitch == pitch {
                break;
            }
        }
    }

    /// Screen right, screen up and the viewing direction (eye to target), world frame.
    fn basis(&self) -> (DVec3, DVec3, DVec3) {
        let forward = (self.target_world() - self.eye_world()).normalize();
        let right = forward.cross(DVec3::Z).normalize_or_zero();
        let right = if right == DVec3::ZERO {
            DVec3::X
        } else {
            right
        };
        let up = right.cross(forward);
        (right, up, forward)
    }

    /// Whether the eye is above the ground grid.
    pub fn above_ground(&self) -> bool {
        self.eye_world().z >= self.ground
    }

    /// Raises the pitch until the eye is above the ground (a fit must never look from under
    /// the floor); impossible only when the target itself is below it.
    fn keep_above_ground(&mut self) {
        let lowest = (self.ground + Self::GROUND_CLEARANCE - self.target_world().z) / self.distance;
        if lowest > 1.0 {
            return;
        }
        let min_pitch = lowest.clamp(-1.0, 1.0).asin();
        if self.pitch < min_pitch {
            self.pitch = min_pitch.min(Self::MAX_PITCH);
        }
    }

    /// Back to the default view.
    pub fn reset(&mut self) {
        *self = Self {
            aspect: self.aspect,
            ..Self::default()
        };
    }

    /// Where a vehicle-frame point appears in a viewport of `viewport` = [width, height]
    /// pixels: pixel coordinates, origin top-left. `None` when the point is behind the eye.
    /// Points outside the viewport still get coordinates (outside 0..width, 0..height).
    pub fn project(&self, p_vehicle: [f64; 3], viewport: [f32; 2]) -> Option<[f32; 2]> {
        let [width, height] = viewport.map(f64::from);
        if !(width > 0.0 && height > 0.0) {
            return None;
        }
        let world = to_world(DVec3::from_array(p_vehicle));
        let clip = self.view_projection(width / height) * DVec4::from((world, 1.0));
        if clip.w <= 1e-9 {
            return None;
        }
        let ndc = clip.truncate() / clip.w;
        Some([
            ((ndc.x + 1.0) * 0.5 * width) as f32,
            ((1.0 - ndc.y) * 0.5 * height) as f32,
        ])
    }

    /// The eye position, vehicle frame, m.
    pub fn eye(&self) -> [f64; 3] {
        to_world(self.eye_world()).to_array()
    }

    pub(super) fn target_world(&self) -> DVec3 {
        to_world(DVec3::from_array(self.target))
    }

    pub(super) fn eye_world(&self) -> DVec3 {
        let (sin_yaw, cos_yaw) = self.yaw.sin_cos();
        let (sin_pitch, cos_pitch) = self.pitch.sin_cos();
        let direction = DVec3::new(cos_pitch * cos_yaw, cos_pitch * sin_yaw, sin_pitch);
        self.target_world() + direction * self.distance
    }

    /// Clip ← world for a viewport of width/height `aspect` (OpenGL clip space).
    pub(super) fn view_projection(&self, aspect: f64) -> DMat4 {
        let view = rh::view::look_at_mat4(self.eye_world(), self.target_world(), DVec3::Z);
        let near = self.near();
        let far = self.distance * 100.0 + 10.0;
        rh::proj::opengl::perspective(Self::FOV_Y, aspect.max(1e-3), near, far) * view
    }

    /// Turns the eye about the target by `yaw` and `pitch` rad. The eye stops at the ground
    /// unless `below` (the operator holds Ctrl: going under the floor is then deliberate);
    /// an eye already below (put there deliberately) may move freely until it comes back up.
    pub fn orbit(&mut self, yaw: f64, pitch: f64, below: bool) {
        let was_above = self.above_ground();
        self.yaw = (self.yaw + yaw).rem_euclid(std::f64::consts::TAU);
        self.pitch = (self.pitch + pitch).clamp(-Self::MAX_PITCH, Self::MAX_PITCH);
        if was_above && !below {
            self.keep_above_ground();
        }
    }

    /// Moves the target so the scene follows a drag of `right`, `down` pixels in a viewport
    /// `height` pixels tall.
    pub(super) fn pan(&mut self, right: f64, down: f64, height: f64) {
        let metres_per_pixel = 2.0 * self.distance * (Self::FOV_Y * 0.5).tan() / height.max(1.0);
        let forward = (self.target_world() - self.eye_world()).normalize();
        let screen_right = forward.cross(DVec3::Z).normalize_or_zero();
        let screen_up = screen_right.cross(forward);
        let shift = (-screen_right * right + screen_up * down) * metres_per_pixel;
        self.target = to_world(self.target_world() + shift).to_array();
    }

    /// Multiplies the distance by `factor` (< 1 moves closer).
    pub fn zoom(&mut self, factor: f64) {
        if factor.is_finite() && factor > 0.0 {
            self.distance =
                (self.distance * factor).clamp(Self::DISTANCE_RANGE.0, Self::DISTANCE_RANGE.1);
        }
    }

    /// Zooms by `factor` toward the point under the pointer, at `ndc` = normalised device
    /// coordinates in the viewport (−1..1, y up): that point, taken on the plane through the
    /// target facing the eye, stays under the pointer.
    pub fn zoom_at(&mut self, factor: f64, ndc: [f64; 2]) {
        if !(factor.is_finite() && factor > 0.0) {
            return;
        }
        let before = self.distance;
        self.zoom(factor);
        let applied = self.distance / before;
        let (right, up, _) = self.basis();
        let tan_y = (Self::FOV_Y * 0.5).tan();
        let tan_x = tan_y * self.aspect.max(1e-3);
        let under = right * ndc[0] * before * tan_x + up * ndc[1] * before * tan_y;
        let target = self.target_world() + under * (1.0 - applied);
        self.target = to_world(target).to_array();
    }
}

/// The ground height (world z) for an arm of `pose` framed at world `points`: the vehicle's
/// ground, unless the mount turns the arm's z axis downwards (the arm hangs) and the points
/// reach below the ground, then just under the lowest point.
fn ground_for(pose: &ArmPose, points: &[DVec3], padding: f64) -> f64 {
    let arm_up = to_world(pose.mount.matrix3 * DVec3::Z);
    let lowest = points.iter().map(|p| p.z).fold(f64::INFINITY, f64::min) - padding;
    if arm_up.z < 0.0 && lowest < 0.0 {
        lowest - 0.01
    } else {
        0.0
    }
}

/// Every point that shapes the arm, vehicle frame: base, frame origins, tool point and the
/// ends of the bounding-cylinder axes.
fn arm_points(pose: &ArmPose) -> Vec<DVec3> {
    let mut points = vec![pose.mount.translation, pose.tool_point_vehicle];
    points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
    for c in &pose.cylinders {
        points.push(pose.mount.transform_point3(c.from));
        points.push(pose.mount.transform_point3(c.to));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinematics::forward;
    use crate::sim::arm_file::{ArmFile, BUILTIN};

    /// The arm at its home and at every preset, as the view frames them.
    fn poses(name: &str) -> Vec<ArmPose> {
        let file = ArmFile::builtin(name).unwrap();
        std::iter::once(file.home.clone())
            .chain(file.presets.iter().map(|p| p.positions.clone()))
            .map(|q| forward(&file.spec, &q, file.tool_point).unwrap())
            .collect()
    }

    /// Every point of `poses` projected into a `w`×`h` viewport.
    fn projected(camera: &Camera, poses: &[ArmPose], w: f32, h: f32) -> Vec<[f32; 2]> {
        poses
            .iter()
            .flat_map(arm_points)
            .map(|p| {
                camera
                    .project(p.to_array(), [w, h])
                    .expect("in front of the eye")
            })
            .collect()
    }

    #[test]
    fn fit_puts_every_arm_in_view_filling_the_narrower_side_for_wide_and_tall_views() {
        for name in BUILTIN {
            let poses = poses(name);
            for (w, h) in [(1000.0_f32, 400.0_f32), (400.0, 1000.0), (600.0, 600.0)] {
                for (yaw, pitch) in [(2.35, 0.45), (0.0, 0.2), (4.0, 1.2)] {
                    let mut camera = Camera {
                        yaw,
                        pitch,
                        aspect: f64::from(w / h),
                        ..Camera::default()
                    };
                    camera.fit_all(&poses);
                    let points = projected(&camera, &poses, w, h);
                    let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
                    for p in &points {
                        assert!(
                            (0.0..=w).contains(&p[0]) && (0.0..=h).contains(&p[1]),
                            "{name} {w}x{h} yaw {yaw}: {p:?} cropped"
                        );
                        for k in 0..2 {
                            lo[k] = lo[k].min(p[k]);
                            hi[k] = hi[k].max(p[k]);
                        }
                    }
                    // The narrower side decides: the arm (its axes; the cylinders around them add their
                    // radius as margin) spans at least half of one of the two sides.
                    let fill = ((hi[0] - lo[0]) / w).max((hi[1] - lo[1]) / h);
                    assert!(fill > 0.5, "{name} {w}x{h} yaw {yaw}: fills only {fill}");
                    // Centred: the middle of the arm's extent near the middle of the view
                    // (looking steeply down, parts close to the eye loom large and the
                    // middle drifts further).
                    let mid = [
                        f32::midpoint(lo[0], hi[0]) / w,
                        f32::midpoint(lo[1], hi[1]) / h,
                    ];
                    let off = if pitch > 1.0 { 0.25 } else { 0.1 };
                    assert!(
                        (mid[0] - 0.5).abs() < off && (mid[1] - 0.5).abs() < off,
                        "{name} {w}x{h} yaw {yaw}: off-centre {mid:?}"
                    );
                    assert!(
                        camera.above_ground(),
                        "{name}: fitted from under the ground"
                    );
                }
            }
        }
    }

    #[test]
    fn an_arm_hanging_from_its_mount_gets_its_grid_under_it_and_a_standing_arm_the_ground() {
        for name in ["puma560", "ur5e"] {
            let poses = poses(name);
            let mut camera = Camera::default();
            camera.fit_all(&poses);
            let lowest = poses
                .iter()
                .flat_map(arm_points)
                .map(|p| to_world(p).z)
                .fold(f64::INFINITY, f64::min);
            assert!(lowest < 0.0, "{name} hangs below the vehicle's ground");
            assert!(
                camera.ground < lowest,
                "{name}: grid {} above {lowest}",
                camera.ground
            );
        }
        let mut camera = Camera::default();
        camera.fit_all(&poses("demo"));
        assert_eq!(camera.ground, 0.0);
    }

    #[test]
    fn orbiting_stops_at_the_ground_unless_ctrl_is_held() {
        let mut camera = Camera::default();
        camera.fit_all(&poses("demo"));
        for _ in 0..100 {
            camera.orbit(0.0, -0.05, false);
        }
        assert!(camera.above_ground());
        assert!(camera.pitch < 0.45, "it did move down to the ground");
        for _ in 0..100 {
            camera.orbit(0.0, -0.05, true);
        }
        assert!(
            !camera.above_ground(),
            "Ctrl takes the eye under the ground"
        );
        // Once below, dragging without Ctrl is not blocked (it is how the eye comes back).
        let pitch = camera.pitch;
        camera.orbit(0.0, 0.05, false);
        assert!(camera.pitch > pitch);
    }

    #[test]
    fn zooming_at_the_pointer_keeps_the_point_under_it_in_place() {
        let mut camera = Camera {
            aspect: 2.0,
            ..Camera::default()
        };
        let (w, h) = (800.0_f32, 400.0_f32);
        // The point under the pointer at ndc (0.5, -0.4), on the plane through the target.
        let ndc = [0.5, -0.4];
        let (right, up, _) = camera.basis();
        let tan_y = (Camera::FOV_Y * 0.5).tan();
        let under = camera.target_world()
            + right * ndc[0] * camera.distance * tan_y * 2.0
            + up * ndc[1] * camera.distance * tan_y;
        let under = to_world(under).to_array();
        let before = camera.project(under, [w, h]).unwrap();
        assert!((before[0] - 600.0).abs() < 0.5 && (before[1] - 280.0).abs() < 0.5);
        camera.zoom_at(0.5, ndc);
        let after = camera.project(under, [w, h]).unwrap();
        assert!((after[0] - before[0]).abs() < 0.5 && (after[1] - before[1]).abs() < 0.5);
        assert!((camera.distance - 1.5).abs() < 1e-9);
    }

    /// Points on the surface of every volume the view draws around the arm's axes: each
    /// cylinder's end circles at its radius (the default one when it has none).
    fn volume_points(pose: &ArmPose) -> Vec<DVec3> {
        let mut out = Vec::new();
        for c in &pose.cylinders {
            let r = c.radius.map_or(DEFAULT_CYLINDER_RADIUS, f64::abs);
            let (a, b) = (
                pose.mount.transform_point3(c.from),
                pose.mount.transform_point3(c.to),
            );
            let axis = (b - a).normalize_or(DVec3::Z);
            let u = axis.any_orthonormal_vector();
            let v = axis.cross(u);
            for k in 0..12 {
                let angle = f64::from(k) * std::f64::consts::TAU / 12.0;
                let off = (u * angle.cos() + v * angle.sin()) * r;
                out.extend([a + off, b + off]);
            }
        }
        out
    }

    #[test]
    fn fit_keeps_every_volume_drawn_in_view_for_aspects_from_half_to_three() {
        for name in BUILTIN {
            let poses = poses(name);
            for aspect in [0.5_f32, 0.75, 1.0, 1.5, 2.0, 3.0] {
                let (w, h) = (500.0 * aspect, 500.0);
                let mut camera = Camera {
                    aspect: f64::from(aspect),
                    ..Camera::default()
                };
                camera.fit_all(&poses);
                for p in poses.iter().flat_map(|p| {
                    let mut all = arm_points(p);
                    all.extend(volume_points(p));
                    all
                }) {
                    let [x, y] = camera.project(p.to_array(), [w, h]).expect("in front");
                    assert!(
                        (0.0..=w).contains(&x) && (0.0..=h).contains(&y),
                        "{name} aspect {aspect}: {p} at ({x}, {y}) is cropped"
                    );
                }
            }
        }
    }

    #[test]
    fn the_tool_marker_keeps_its_size_on_screen_near_and_far() {
        let pose = &poses("demo")[0];
        let tool = pose.tool_point_vehicle.to_array();
        let (w, h) = (900.0_f32, 600.0_f32);
        for distance in [0.5, 2.0, 8.0, 40.0] {
            let mut camera = Camera {
                aspect: f64::from(w / h),
                ..Camera::default()
            };
            camera.fit(pose);
            camera.zoom(distance / camera.distance);
            let r = camera.metres_per_pixel_at(tool, f64::from(h)) * Camera::MARKER_PX;
            // A point at the marker's radius from the tool point, across the screen.
            let (right, _, _) = camera.basis();
            let edge = DVec3::from_array(tool) + to_world(right) * r;
            let a = camera.project(tool, [w, h]).expect("in front");
            let b = camera.project(edge.to_array(), [w, h]).expect("in front");
            let px = f64::from(((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt());
            assert!(
                (px - Camera::MARKER_PX).abs() < 0.1 * Camera::MARKER_PX,
                "at {distance} m the marker is {px} px"
            );
        }
    }
}
