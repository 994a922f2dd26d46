//! The orbit camera of the 3D view and the frame change it works in: plain data, what the
//! scene is seen from. World = the vehicle frame turned 180° about x (z up).

use glam::dcamera::rh;
use glam::{DMat4, DVec3, DVec4};

use crate::model::kinematics::ArmPose;

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
}

impl Default for Camera {
    fn default() -> Self {
        // Behind the vehicle, to its left and above: the arm reaches away from the operator.
        Self {
            target: [0.3, 0.0, -0.5],
            yaw: 2.35,
            pitch: 0.45,
            distance: 3.0,
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

    /// Looks at the whole arm: target at the centre of its points, distance so that they
    /// fit the vertical field of view. Keeps yaw and pitch.
    pub fn fit(&mut self, pose: &ArmPose) {
        self.fit_all(std::slice::from_ref(pose));
    }

    /// Looks at several poses at once (e.g. every preset: the arm's working space), so the
    /// view does not have to follow the arm as it moves between them. Keeps yaw and pitch.
    pub fn fit_all(&mut self, poses: &[ArmPose]) {
        let points: Vec<DVec3> = poses.iter().flat_map(arm_points).collect();
        if points.is_empty() {
            return;
        }
        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let centre = (lo + hi) * 0.5;
        let padding = poses
            .iter()
            .flat_map(|p| p.cylinders.iter())
            .filter_map(|c| c.radius)
            .fold(0.0, f64::max);
        let radius = points
            .iter()
            .map(|p| p.distance(centre))
            .fold(0.0, f64::max)
            + padding;
        let radius = radius.max(0.1) * 1.1;
        self.target = centre.to_array();
        self.distance = (radius / (Self::FOV_Y * 0.5).sin())
            .clamp(Self::DISTANCE_RANGE.0, Self::DISTANCE_RANGE.1);
    }

    /// Back to the default view.
    pub fn reset(&mut self) {
        *self = Self::default();
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
        let near = (self.distance * 0.01).max(0.002);
        let far = self.distance * 100.0 + 10.0;
        rh::proj::opengl::perspective(Self::FOV_Y, aspect.max(1e-3), near, far) * view
    }

    /// Turns the eye about the target by `yaw` and `pitch` rad.
    pub(super) fn orbit(&mut self, yaw: f64, pitch: f64) {
        self.yaw = (self.yaw + yaw).rem_euclid(std::f64::consts::TAU);
        self.pitch = (self.pitch + pitch).clamp(-Self::MAX_PITCH, Self::MAX_PITCH);
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
    pub(super) fn zoom(&mut self, factor: f64) {
        if factor.is_finite() && factor > 0.0 {
            self.distance =
                (self.distance * factor).clamp(Self::DISTANCE_RANGE.0, Self::DISTANCE_RANGE.1);
        }
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
