//! The 3D arm view: bounding cylinders, links, joints, tool point, frames and a ground grid,
//! drawn with three-d's core (programs from `shaders/`) inside an egui paint callback.
//!
//! Three parts, as in egui's `custom_3d_glow` example:
//! - [`SceneInput`] and [`Camera`]: plain data, what to draw and from where;
//! - [`Scene`]: the GPU side (compiled programs, unit meshes), made once from a
//!   [`three_d::Context`] and kept behind `Arc<Mutex<..>>` because the callback must be
//!   `Send + Sync`; [`Scene::render`] draws into whatever framebuffer is bound, which lets the
//!   offscreen test render exactly what the window shows;
//! - [`ArmView`]: the egui widget (allocate, orbit/pan/zoom/fit, paint callback).
//!
//! **Frames.** Inputs are in the vehicle frame (+x front, +y right, +z down, metres). The scene
//! is drawn in a *world* frame with z up: world = (x, −y, −z), i.e. the vehicle frame turned
//! 180° about its x axis (a rotation, so handedness and the arm's shape are kept). The ground
//! grid is the vehicle's z = 0 plane. [`Camera`] angles are measured in the world frame.
//!
//! **Draw order.** Opaque parts (links, joints, triads) write depth; then the grid and every
//! translucent part (bounding volumes, the ghost arm) are blended back to front without
//! writing depth; the live tool-point marker is drawn last, over everything, so the operator
//! never loses it inside a bounding volume. The window needs a depth buffer:
//! `NativeOptions { depth_buffer: 24, .. }`.

use std::sync::{Arc, Mutex, PoisonError};

use eframe::egui;
use eframe::egui_glow;
use glam::dcamera::rh;
use glam::{DMat3, DMat4, DVec3, DVec4};
use three_d::{
    Blend, ClearState, Context, Cull, DepthTest, ElementBuffer, Mat3, Mat4, Program, RenderStates,
    RenderTarget, ScissorBox, Vec3, Vec4, VertexBuffer, Viewport, WriteMask,
};

use crate::model::kinematics::ArmPose;

const MESH_VERT: &str = include_str!("../../shaders/mesh.vert");
const SOLID_FRAG: &str = include_str!("../../shaders/solid.frag");
const VOLUME_FRAG: &str = include_str!("../../shaders/volume.frag");
const GRID_VERT: &str = include_str!("../../shaders/grid.vert");
const GRID_FRAG: &str = include_str!("../../shaders/grid.frag");

/// What to draw this frame (all geometry in the VEHICLE frame, metres: +x front, +y right,
/// +z down).
#[derive(Debug, Clone, PartialEq)]
pub struct SceneInput {
    /// The live arm (from `model::kinematics::forward`). With neither a pose nor a ghost only
    /// the grid is drawn.
    pub pose: Option<ArmPose>,
    /// A preset being previewed, drawn as a translucent ghost arm.
    pub ghost: Option<ArmPose>,
    /// Per joint (joint 1 first), 0..1: how close to a limit. Tints that joint's bounding
    /// cylinders amber, then red. Missing entries count as 0.
    pub joint_warning: Vec<f32>,
    /// Radius for cylinders whose specification gives none, m; those are drawn banded so they
    /// cannot be mistaken for reported radii.
    pub default_radius: f64,
    /// Draw each joint axis (z of each joint frame) as a thin line.
    pub show_axes: bool,
    /// Draw an x/y/z triad at each joint frame.
    pub show_frames: bool,
    /// Dark theme.
    pub dark: bool,
}

impl Default for SceneInput {
    fn default() -> Self {
        Self {
            pose: None,
            ghost: None,
            joint_warning: Vec::new(),
            default_radius: 0.03,
            show_axes: false,
            show_frames: false,
            dark: true,
        }
    }
}

/// Vehicle frame → world frame (z up); its own inverse.
fn to_world(p: DVec3) -> DVec3 {
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

    fn target_world(&self) -> DVec3 {
        to_world(DVec3::from_array(self.target))
    }

    fn eye_world(&self) -> DVec3 {
        let (sin_yaw, cos_yaw) = self.yaw.sin_cos();
        let (sin_pitch, cos_pitch) = self.pitch.sin_cos();
        let direction = DVec3::new(cos_pitch * cos_yaw, cos_pitch * sin_yaw, sin_pitch);
        self.target_world() + direction * self.distance
    }

    /// Clip ← world for a viewport of width/height `aspect` (OpenGL clip space).
    fn view_projection(&self, aspect: f64) -> DMat4 {
        let view = rh::view::look_at_mat4(self.eye_world(), self.target_world(), DVec3::Z);
        let near = (self.distance * 0.01).max(0.002);
        let far = self.distance * 100.0 + 10.0;
        rh::proj::opengl::perspective(Self::FOV_Y, aspect.max(1e-3), near, far) * view
    }

    /// Turns the eye about the target by `yaw` and `pitch` rad.
    fn orbit(&mut self, yaw: f64, pitch: f64) {
        self.yaw = (self.yaw + yaw).rem_euclid(std::f64::consts::TAU);
        self.pitch = (self.pitch + pitch).clamp(-Self::MAX_PITCH, Self::MAX_PITCH);
    }

    /// Moves the target so the scene follows a drag of `right`, `down` pixels in a viewport
    /// `height` pixels tall.
    fn pan(&mut self, right: f64, down: f64, height: f64) {
        let metres_per_pixel = 2.0 * self.distance * (Self::FOV_Y * 0.5).tan() / height.max(1.0);
        let forward = (self.target_world() - self.eye_world()).normalize();
        let screen_right = forward.cross(DVec3::Z).normalize_or_zero();
        let screen_up = screen_right.cross(forward);
        let shift = (-screen_right * right + screen_up * down) * metres_per_pixel;
        self.target = to_world(self.target_world() + shift).to_array();
    }

    /// Multiplies the distance by `factor` (< 1 moves closer).
    fn zoom(&mut self, factor: f64) {
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

/// The arm's size, m: the farthest frame origin or tool point from its base, kept within a
/// range so markers and lines stay visible on tiny arms and thin on huge ones.
fn arm_scale(pose: &ArmPose) -> f64 {
    let base = pose.mount.translation;
    pose.frames
        .iter()
        .map(|f| (pose.mount * *f).translation)
        .chain([pose.tool_point_vehicle])
        .map(|p| p.distance(base))
        .fold(0.0, f64::max)
        .clamp(0.3, 20.0)
}

/// Colours of the 3D view for one theme (sRGB components 0..1, alpha where given). The
/// near/at-limit colours are the app theme's `warn` and `danger` (`ui::theme`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenePalette {
    /// Behind everything.
    pub background: [f32; 3],
    /// Minor grid lines.
    pub grid_minor: [f32; 4],
    /// Major grid lines (every 10 minor).
    pub grid_major: [f32; 4],
    /// x axes (grid line and triads).
    pub x_axis: [f32; 3],
    /// y axes.
    pub y_axis: [f32; 3],
    /// z axes.
    pub z_axis: [f32; 3],
    /// Links between joint frames.
    pub link: [f32; 3],
    /// Joint spheres.
    pub joint: [f32; 3],
    /// Joint axes (`show_axes`).
    pub joint_axis: [f32; 3],
    /// Bounding cylinders with a radius from the specification.
    pub cylinder: [f32; 3],
    /// Bounding cylinders drawn with the default radius.
    pub cylinder_default: [f32; 3],
    /// The ghost (previewed preset) arm.
    pub ghost: [f32; 3],
    /// The live tool point marker (flat, drawn over everything).
    pub tool_marker: [f32; 3],
    /// Ring around the tool point marker.
    pub marker_outline: [f32; 3],
    /// A joint getting near its limit.
    pub near_limit: [f32; 3],
    /// A joint at its limit.
    pub at_limit: [f32; 3],
}

impl ScenePalette {
    /// The palette for the dark or light theme.
    pub fn new(dark: bool) -> Self {
        let rgb = |r: u8, g: u8, b: u8| [r, g, b].map(|v| f32::from(v) / 255.0);
        let (near_limit, at_limit) = if dark {
            (rgb(240, 170, 40), rgb(235, 70, 60))
        } else {
            (rgb(190, 120, 0), rgb(200, 30, 30))
        };
        let common = Self {
            background: [0.0; 3],
            grid_minor: [0.0; 4],
            grid_major: [0.0; 4],
            x_axis: [0.9, 0.25, 0.2],
            y_axis: [0.3, 0.78, 0.3],
            z_axis: [0.25, 0.45, 0.95],
            link: [0.0; 3],
            joint: [0.0; 3],
            joint_axis: [0.0; 3],
            cylinder: [0.0; 3],
            cylinder_default: [0.0; 3],
            ghost: [0.0; 3],
            tool_marker: [1.0, 0.2, 0.85],
            marker_outline: [0.0; 3],
            near_limit,
            at_limit,
        };
        if dark {
            Self {
                background: [0.105, 0.11, 0.12],
                grid_minor: [0.55, 0.58, 0.62, 0.22],
                grid_major: [0.6, 0.63, 0.68, 0.5],
                link: [0.86, 0.87, 0.9],
                joint: [0.58, 0.64, 0.74],
                joint_axis: [0.55, 0.8, 1.0],
                cylinder: [0.3, 0.6, 1.0],
                cylinder_default: [0.8, 0.55, 1.0],
                ghost: [0.3, 0.95, 0.7],
                marker_outline: [0.02, 0.02, 0.03],
                ..common
            }
        } else {
            Self {
                background: [0.94, 0.945, 0.95],
                grid_minor: [0.35, 0.37, 0.4, 0.2],
                grid_major: [0.3, 0.32, 0.36, 0.45],
                link: [0.28, 0.3, 0.34],
                joint: [0.45, 0.5, 0.58],
                joint_axis: [0.1, 0.35, 0.75],
                cylinder: [0.1, 0.38, 0.9],
                cylinder_default: [0.5, 0.25, 0.75],
                ghost: [0.05, 0.62, 0.42],
                marker_outline: [1.0, 1.0, 1.0],
                ..common
            }
        }
    }

    /// The tint of a bounding cylinder whose joint is `warning` (0..1) close to a limit:
    /// `base` when far, turning amber as soon as the joint is near and red at the limit.
    pub fn warning_tint(&self, base: [f32; 3], warning: f32) -> [f32; 3] {
        let w = unit_warning(warning);
        let alarm = lerp3(self.near_limit, self.at_limit, w);
        lerp3(base, alarm, (w * 3.0).min(1.0))
    }
}

/// A warning level within 0..1 (NaN counts as 0).
fn unit_warning(warning: f32) -> f32 {
    if warning.is_nan() {
        0.0
    } else {
        warning.clamp(0.0, 1.0)
    }
}

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * t)
}

fn rgba(rgb: [f32; 3], alpha: f32) -> [f32; 4] {
    [rgb[0], rgb[1], rgb[2], alpha]
}

/// Why the GPU side of the scene could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A program in `shaders/` did not compile or link for this GL context.
    #[error("the 3D view's {program} shader does not compile on this OpenGL: {message}")]
    Shader {
        /// Which program: "solid", "volume" or "grid".
        program: &'static str,
        /// The driver's message.
        message: String,
    },
    /// three-d could not wrap the GL context.
    #[error("the 3D view cannot use this OpenGL context: {0}")]
    Context(String),
}

/// A unit mesh on the GPU.
struct GpuMesh {
    positions: VertexBuffer<[f32; 3]>,
    normals: VertexBuffer<[f32; 3]>,
    indices: ElementBuffer<u32>,
}

impl GpuMesh {
    fn new(context: &Context, mesh: &CpuMesh) -> Self {
        Self {
            positions: VertexBuffer::new_with_data(context, &mesh.positions),
            normals: VertexBuffer::new_with_data(context, &mesh.normals),
            indices: ElementBuffer::new_with_data(context, &mesh.indices),
        }
    }
}

/// A mesh before upload: triangles wound counter-clockwise seen from outside.
struct CpuMesh {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    indices: Vec<u32>,
}

/// Radius 1 about the z axis, from z = 0 to z = 1, with flat caps.
fn unit_cylinder(segments: u32) -> CpuMesh {
    let mut mesh = CpuMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
    };
    let ring = |i: u32| {
        let angle = std::f32::consts::TAU * i as f32 / segments as f32;
        (angle.cos(), angle.sin())
    };
    // Side: a bottom and a top vertex per segment edge, normals radial.
    for i in 0..=segments {
        let (c, s) = ring(i);
        mesh.positions.extend([[c, s, 0.0], [c, s, 1.0]]);
        mesh.normals.extend([[c, s, 0.0], [c, s, 0.0]]);
    }
    for i in 0..segments {
        let (b0, t0, b1, t1) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
        mesh.indices.extend([b0, b1, t1, b0, t1, t0]);
    }
    // Caps: a centre and a ring each, normals along ∓z.
    for (z, normal_z) in [(0.0, -1.0), (1.0, 1.0)] {
        let centre = mesh.positions.len() as u32;
        mesh.positions.push([0.0, 0.0, z]);
        mesh.normals.push([0.0, 0.0, normal_z]);
        for i in 0..=segments {
            let (c, s) = ring(i);
            mesh.positions.push([c, s, z]);
            mesh.normals.push([0.0, 0.0, normal_z]);
        }
        for i in 0..segments {
            let (a, b) = (centre + 1 + i, centre + 2 + i);
            if normal_z > 0.0 {
                mesh.indices.extend([centre, a, b]);
            } else {
                mesh.indices.extend([centre, b, a]);
            }
        }
    }
    mesh
}

/// Radius 1 about the origin.
fn unit_sphere(slices: u32, stacks: u32) -> CpuMesh {
    let mut mesh = CpuMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
    };
    for i in 0..=stacks {
        let polar = std::f32::consts::PI * i as f32 / stacks as f32;
        for j in 0..=slices {
            let azimuth = std::f32::consts::TAU * j as f32 / slices as f32;
            let p = [
                polar.sin() * azimuth.cos(),
                polar.sin() * azimuth.sin(),
                polar.cos(),
            ];
            mesh.positions.push(p);
            mesh.normals.push(p);
        }
    }
    let row = slices + 1;
    for i in 0..stacks {
        for j in 0..slices {
            let (a, b) = (i * row + j, (i + 1) * row + j);
            // No zero-area triangles at the poles, where a whole row is one point.
            if i + 1 < stacks {
                mesh.indices.extend([a, b, b + 1]);
            }
            if i > 0 {
                mesh.indices.extend([a, b + 1, a + 1]);
            }
        }
    }
    mesh
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Cylinder,
    Sphere,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    /// Shaded (or flat when `lit` is false) colour with alpha.
    Solid { color: [f32; 4], lit: bool },
    /// Fresnel volume: `color.a` facing the viewer, `rim_alpha` at grazing angles; banded
    /// every `dash_period` m along the axis when `Some`.
    Volume {
        color: [f32; 4],
        rim_alpha: f32,
        dash_period: Option<f64>,
    },
}

/// One mesh to draw, in the world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Item {
    shape: Shape,
    model: DMat4,
    normal_matrix: DMat3,
    /// Metres per unit of the mesh's local z (length for cylinders, radius for spheres).
    local_z_metres: f64,
    /// Where it is, for back-to-front sorting.
    centre: DVec3,
    style: Style,
}

impl Item {
    /// A cylinder of `radius` from `from` to `to` (world); a sphere when they coincide.
    fn cylinder(from: DVec3, to: DVec3, radius: f64, style: Style) -> Self {
        // A zero radius would make the normal matrix infinite; such a cylinder is invisible.
        let radius = radius.max(1e-9);
        let axis = to - from;
        let length = axis.length();
        if length < 1e-9 {
            return Self::sphere(from, radius, style);
        }
        let z = axis / length;
        let (x, y) = z.any_orthonormal_pair();
        let linear = DMat3::from_cols(x * radius, y * radius, z * length);
        Self {
            shape: Shape::Cylinder,
            model: DMat4::from_cols(
                (linear.x_axis, 0.0).into(),
                (linear.y_axis, 0.0).into(),
                (linear.z_axis, 0.0).into(),
                (from, 1.0).into(),
            ),
            normal_matrix: DMat3::from_cols(x / radius, y / radius, z / length),
            local_z_metres: length,
            centre: (from + to) * 0.5,
            style,
        }
    }

    /// A sphere of `radius` about `centre` (world).
    fn sphere(centre: DVec3, radius: f64, style: Style) -> Self {
        Self {
            shape: Shape::Sphere,
            model: DMat4::from_translation(centre) * DMat4::from_scale(DVec3::splat(radius)),
            normal_matrix: DMat3::IDENTITY,
            local_z_metres: radius,
            centre,
            style,
        }
    }
}

/// Everything to draw this frame, by pass.
#[derive(Default)]
struct DrawList {
    opaque: Vec<Item>,
    translucent: Vec<Item>,
    overlay: Vec<Item>,
}

/// Sizes of the markers and lines, m, for an arm of size `scale` m.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    link: f64,
    joint: f64,
    marker: f64,
    marker_outline: f64,
    triad: f64,
    line: f64,
    axis: f64,
    dash: f64,
}

impl Sizes {
    fn for_scale(scale: f64) -> Self {
        Self {
            link: 0.008 * scale,
            joint: 0.016 * scale,
            marker: 0.018 * scale,
            marker_outline: 0.025 * scale,
            triad: 0.1 * scale,
            line: 0.0035 * scale,
            axis: 0.12 * scale,
            dash: 0.04 * scale,
        }
    }
}

const GHOST_ALPHA: f32 = 0.4;

impl DrawList {
    fn build(input: &SceneInput, palette: &ScenePalette) -> Self {
        let mut list = Self::default();
        let scale = input
            .pose
            .as_ref()
            .or(input.ghost.as_ref())
            .map_or(1.0, arm_scale);
        let sizes = Sizes::for_scale(scale);
        if let Some(ghost) = &input.ghost {
            list.add_ghost(ghost, input, palette, &sizes);
        }
        if let Some(pose) = &input.pose {
            list.add_live(pose, input, palette, &sizes);
        }
        list
    }

    fn add_live(
        &mut self,
        pose: &ArmPose,
        input: &SceneInput,
        palette: &ScenePalette,
        sizes: &Sizes,
    ) {
        for c in &pose.cylinders {
            let warning = input
                .joint_warning
                .get(c.joint.wrapping_sub(1))
                .copied()
                .unwrap_or(0.0);
            let w = unit_warning(warning);
            // Banded volumes fill only every other band: fill those more so the bands read.
            let (base, radius, dash_period, alpha) = match c.radius {
                Some(r) => (palette.cylinder, r, None, 0.1),
                None => (
                    palette.cylinder_default,
                    input.default_radius,
                    Some(sizes.dash),
                    0.2,
                ),
            };
            let style = Style::Volume {
                color: rgba(palette.warning_tint(base, w), alpha + 0.15 * w),
                rim_alpha: 0.75,
                dash_period,
            };
            self.translucent.push(Item::cylinder(
                to_world(pose.mount.transform_point3(c.from)),
                to_world(pose.mount.transform_point3(c.to)),
                radius.abs(),
                style,
            ));
        }
        let link = Style::Solid {
            color: rgba(palette.link, 1.0),
            lit: true,
        };
        let joint = Style::Solid {
            color: rgba(palette.joint, 1.0),
            lit: true,
        };
        let origins = frame_origins(pose);
        for pair in origins.windows(2) {
            self.opaque
                .push(Item::cylinder(pair[0], pair[1], sizes.link, link));
        }
        for origin in &origins[1..] {
            self.opaque.push(Item::sphere(*origin, sizes.joint, joint));
        }
        let tool = to_world(pose.tool_point_vehicle);
        if let Some(last) = origins.last() {
            self.opaque
                .push(Item::cylinder(*last, tool, sizes.link * 0.7, link));
        }
        // The vehicle frame at its origin and the manipulator frame at the mount.
        self.add_triad(&glam::DAffine3::IDENTITY, palette, sizes.triad * 1.5, sizes);
        self.add_triad(&pose.mount, palette, sizes.triad, sizes);
        for frame in &pose.frames {
            let frame = pose.mount * *frame;
            if input.show_frames {
                self.add_triad(&frame, palette, sizes.triad * 0.8, sizes);
            }
            if input.show_axes {
                let origin = frame.translation;
                let z = frame.matrix3.z_axis * sizes.axis;
                self.opaque.push(Item::cylinder(
                    to_world(origin - z),
                    to_world(origin + z),
                    sizes.line,
                    Style::Solid {
                        color: rgba(palette.joint_axis, 1.0),
                        lit: false,
                    },
                ));
            }
        }
        let flat = |rgb| Style::Solid {
            color: rgba(rgb, 1.0),
            lit: false,
        };
        self.overlay.push(Item::sphere(
            tool,
            sizes.marker_outline,
            flat(palette.marker_outline),
        ));
        self.overlay
            .push(Item::sphere(tool, sizes.marker, flat(palette.tool_marker)));
    }

    fn add_ghost(
        &mut self,
        pose: &ArmPose,
        input: &SceneInput,
        palette: &ScenePalette,
        sizes: &Sizes,
    ) {
        for c in &pose.cylinders {
            let (radius, dash_period) = match c.radius {
                Some(r) => (r, None),
                None => (input.default_radius, Some(sizes.dash)),
            };
            self.translucent.push(Item::cylinder(
                to_world(pose.mount.transform_point3(c.from)),
                to_world(pose.mount.transform_point3(c.to)),
                radius.abs(),
                Style::Volume {
                    color: rgba(palette.ghost, 0.06),
                    rim_alpha: 0.45,
                    dash_period,
                },
            ));
        }
        let solid = Style::Solid {
            color: rgba(palette.ghost, GHOST_ALPHA),
            lit: true,
        };
        let origins = frame_origins(pose);
        for pair in origins.windows(2) {
            self.translucent
                .push(Item::cylinder(pair[0], pair[1], sizes.link, solid));
        }
        for origin in &origins[1..] {
            self.translucent
                .push(Item::sphere(*origin, sizes.joint, solid));
        }
        let tool = to_world(pose.tool_point_vehicle);
        if let Some(last) = origins.last() {
            self.translucent
                .push(Item::cylinder(*last, tool, sizes.link * 0.7, solid));
        }
        self.translucent
            .push(Item::sphere(tool, sizes.marker, solid));
    }

    /// x/y/z of `frame` (vehicle ← frame), `length` m long.
    fn add_triad(
        &mut self,
        frame: &glam::DAffine3,
        palette: &ScenePalette,
        length: f64,
        sizes: &Sizes,
    ) {
        let origin = frame.translation;
        for (axis, rgb) in [
            (frame.matrix3.x_axis, palette.x_axis),
            (frame.matrix3.y_axis, palette.y_axis),
            (frame.matrix3.z_axis, palette.z_axis),
        ] {
            self.opaque.push(Item::cylinder(
                to_world(origin),
                to_world(origin + axis * length),
                sizes.line,
                Style::Solid {
                    color: rgba(rgb, 1.0),
                    lit: false,
                },
            ));
        }
    }
}

/// World positions of the manipulator origin and of frames 1..n.
fn frame_origins(pose: &ArmPose) -> Vec<DVec3> {
    std::iter::once(pose.mount.translation)
        .chain(pose.frames.iter().map(|f| (pose.mount * *f).translation))
        .map(to_world)
        .collect()
}

fn mat4(m: DMat4) -> Mat4 {
    Mat4::from(m.as_mat4().to_cols_array_2d())
}

fn mat3(m: DMat3) -> Mat3 {
    Mat3::from(m.as_mat3().to_cols_array_2d())
}

fn vec3(v: DVec3) -> Vec3 {
    Vec3::from(v.as_vec3().to_array())
}

const OPAQUE: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR_AND_DEPTH,
    depth_test: DepthTest::Less,
    blend: Blend::Disabled,
    cull: Cull::Back,
};

const TRANSLUCENT: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::Less,
    blend: Blend::TRANSPARENCY,
    cull: Cull::Back,
};

const GRID: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::LessOrEqual,
    blend: Blend::TRANSPARENCY,
    cull: Cull::None,
};

const OVERLAY: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::Always,
    blend: Blend::Disabled,
    cull: Cull::Back,
};

/// The GPU side: created once from the GL context (its programs and buffers belong to it);
/// kept in `Arc<Mutex<..>>` for the paint callback.
pub struct Scene {
    context: Context,
    solid: Program,
    volume: Program,
    grid: Program,
    cylinder: GpuMesh,
    sphere: GpuMesh,
    square: GpuMesh,
}

impl Scene {
    /// Compiles the programs in `shaders/` and uploads the unit meshes.
    pub fn new(context: &Context) -> Result<Self, SceneError> {
        let program = |name, vertex, fragment| {
            Program::from_source(context, vertex, fragment).map_err(|e| SceneError::Shader {
                program: name,
                message: e.to_string(),
            })
        };
        let square = CpuMesh {
            positions: vec![
                [-1.0, -1.0, 0.0],
                [1.0, -1.0, 0.0],
                [1.0, 1.0, 0.0],
                [-1.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            indices: vec![0, 1, 2, 0, 2, 3],
        };
        Ok(Self {
            context: context.clone(),
            solid: program("solid", MESH_VERT, SOLID_FRAG)?,
            volume: program("volume", MESH_VERT, VOLUME_FRAG)?,
            grid: program("grid", GRID_VERT, GRID_FRAG)?,
            cylinder: GpuMesh::new(context, &unit_cylinder(32)),
            sphere: GpuMesh::new(context, &unit_sphere(32, 16)),
            square: GpuMesh::new(context, &square),
        })
    }

    /// The context the scene was made in; draw only into framebuffers of this context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The colour [`Scene::paint`] clears to.
    pub fn clear_state(dark: bool) -> ClearState {
        let [r, g, b] = ScenePalette::new(dark).background;
        ClearState::color_and_depth(r, g, b, 1.0, 1.0)
    }

    /// Clears `clip` ∩ `viewport` of `target` and renders `input` into it: what the egui
    /// callback does with the window (`RenderTarget::screen`) and the test with a texture.
    pub fn paint(
        &mut self,
        target: &RenderTarget<'_>,
        viewport: Viewport,
        clip: ScissorBox,
        input: &SceneInput,
        camera: &Camera,
    ) {
        let scissor = clip.intersection(viewport);
        if scissor.width == 0 || scissor.height == 0 {
            return;
        }
        target.clear_partially(scissor, Self::clear_state(input.dark));
        let Ok(_) = target.write_partially::<std::convert::Infallible>(scissor, || {
            self.render(viewport, input, camera);
            Ok(())
        });
    }

    /// Renders `input` with `camera` into the currently bound framebuffer, in `viewport`
    /// (x, y, w, h in pixels, GL bottom-left origin). Clears nothing; the caller sets the
    /// scissor box (see [`Scene::paint`]).
    pub fn render(&mut self, viewport: Viewport, input: &SceneInput, camera: &Camera) {
        if viewport.width == 0 || viewport.height == 0 {
            return;
        }
        let palette = ScenePalette::new(input.dark);
        let aspect = f64::from(viewport.width) / f64::from(viewport.height);
        let view_projection = camera.view_projection(aspect);
        let eye = camera.eye_world();
        let mut list = DrawList::build(input, &palette);

        for item in &list.opaque {
            self.draw(item, view_projection, eye, OPAQUE, viewport);
        }
        self.draw_grid(view_projection, camera, &palette, viewport);
        // Back to front; each volume's far side before its near side.
        list.translucent.sort_by(|a, b| {
            b.centre
                .distance_squared(eye)
                .total_cmp(&a.centre.distance_squared(eye))
        });
        for item in &list.translucent {
            if matches!(item.style, Style::Volume { .. }) {
                let back = RenderStates {
                    cull: Cull::Front,
                    ..TRANSLUCENT
                };
                self.draw(item, view_projection, eye, back, viewport);
            }
            self.draw(item, view_projection, eye, TRANSLUCENT, viewport);
        }
        for item in &list.overlay {
            self.draw(item, view_projection, eye, OVERLAY, viewport);
        }
    }

    fn draw(
        &self,
        item: &Item,
        view_projection: DMat4,
        eye: DVec3,
        states: RenderStates,
        viewport: Viewport,
    ) {
        let program = match item.style {
            Style::Solid { color, lit } => {
                let p = &self.solid;
                p.use_uniform("u_color", Vec4::from(color));
                p.use_uniform("u_lit", if lit { 1.0f32 } else { 0.0 });
                p
            }
            Style::Volume {
                color,
                rim_alpha,
                dash_period,
            } => {
                let p = &self.volume;
                p.use_uniform("u_color", Vec4::from(color));
                p.use_uniform("u_rim_alpha", rim_alpha);
                p.use_uniform("u_dashed", if dash_period.is_some() { 1.0f32 } else { 0.0 });
                let bands = dash_period.map_or(1.0, |d| item.local_z_metres / d.max(1e-6));
                p.use_uniform("u_dash_count", bands as f32);
                p
            }
        };
        program.use_uniform("u_view_projection", mat4(view_projection));
        program.use_uniform("u_model", mat4(item.model));
        program.use_uniform("u_normal_matrix", mat3(item.normal_matrix));
        program.use_uniform("u_eye", vec3(eye));
        let mesh = match item.shape {
            Shape::Cylinder => &self.cylinder,
            Shape::Sphere => &self.sphere,
        };
        program.use_vertex_attribute("a_position", &mesh.positions);
        program.use_vertex_attribute("a_normal", &mesh.normals);
        program.draw_elements(states, viewport, &mesh.indices);
    }

    fn draw_grid(
        &self,
        view_projection: DMat4,
        camera: &Camera,
        palette: &ScenePalette,
        viewport: Viewport,
    ) {
        let distance = camera.distance.max(0.01);
        // Minor lines a power of ten apart, about a tenth of the view.
        let spacing = 10f64.powf(distance.log10().floor()) / 10.0;
        let centre = camera.target_world();
        let p = &self.grid;
        p.use_uniform("u_view_projection", mat4(view_projection));
        p.use_uniform(
            "u_center",
            three_d::Vec2::new(centre.x as f32, centre.y as f32),
        );
        p.use_uniform("u_extent", (distance * 12.0).max(5.0) as f32);
        p.use_uniform("u_eye", vec3(camera.eye_world()));
        p.use_uniform("u_spacing", spacing as f32);
        p.use_uniform("u_fade_distance", (distance * 4.0).max(2.0) as f32);
        p.use_uniform("u_minor_color", Vec4::from(palette.grid_minor));
        p.use_uniform("u_major_color", Vec4::from(palette.grid_major));
        p.use_uniform("u_x_axis_color", Vec4::from(rgba(palette.x_axis, 0.8)));
        p.use_uniform("u_y_axis_color", Vec4::from(rgba(palette.y_axis, 0.8)));
        p.use_vertex_attribute("a_position", &self.square.positions);
        p.draw_elements(GRID, viewport, &self.square.indices);
    }
}

/// GPU state shared with the paint callback.
enum Gpu {
    /// Not made yet (no frame painted).
    Pending,
    /// Ready to draw.
    Ready(Box<Scene>),
    /// Could not be made; the message is shown in place of the view.
    Failed(String),
}

/// The 3D arm view widget: allocates the rect, handles orbit (drag), pan (right/middle drag
/// or shift+drag), zoom (scroll, pinch or ctrl+scroll), double-click = fit; paints through
/// an `egui::PaintCallback` with `egui_glow::CallbackFn`.
pub struct ArmView {
    /// The camera; the panel may fit or reset it.
    pub camera: Camera,
    scene: Arc<Mutex<Gpu>>,
}

impl Default for ArmView {
    fn default() -> Self {
        Self::new()
    }
}

impl ArmView {
    /// Orbit radians per dragged point.
    const ORBIT_PER_POINT: f64 = 0.008;

    /// A view with the default camera; the GPU side is made on the first paint.
    pub fn new() -> Self {
        Self {
            camera: Camera::default(),
            scene: Arc::new(Mutex::new(Gpu::Pending)),
        }
    }

    /// Shows the view in all the space `ui` has and handles the mouse over it.
    pub fn ui(&mut self, ui: &mut egui::Ui, input: SceneInput) -> egui::Response {
        let size = ui.available_size().max(egui::vec2(64.0, 64.0));
        let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
        response.widget_info(|| {
            egui::WidgetInfo::labeled(egui::Role::Canvas, ui.is_enabled(), "3D arm view")
        });
        self.interact(ui, &response, input.pose.as_ref());

        if !ui.is_rect_visible(rect) {
            return response;
        }
        let failure = match &*self.scene.lock().unwrap_or_else(PoisonError::into_inner) {
            Gpu::Failed(message) => Some(message.clone()),
            Gpu::Pending | Gpu::Ready(_) => None,
        };
        if let Some(message) = failure {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                message,
                egui::FontId::proportional(14.0),
                ui.visuals().error_fg_color,
            );
            return response;
        }
        let scene = Arc::clone(&self.scene);
        let camera = self.camera;
        let callback = egui_glow::CallbackFn::new(move |info, painter| {
            paint_callback(&scene, &info, painter, &input, &camera);
        });
        ui.painter().add(egui::PaintCallback {
            rect,
            callback: Arc::new(callback),
        });
        response
    }

    fn interact(&mut self, ui: &egui::Ui, response: &egui::Response, pose: Option<&ArmPose>) {
        let shift = ui.input(|i| i.modifiers.shift);
        let delta = response.drag_delta();
        let pixels_per_point = f64::from(ui.ctx().pixels_per_point());
        if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
            || (shift && response.dragged_by(egui::PointerButton::Primary))
        {
            self.camera.pan(
                f64::from(delta.x) * pixels_per_point,
                f64::from(delta.y) * pixels_per_point,
                f64::from(response.rect.height()) * pixels_per_point,
            );
        } else if response.dragged_by(egui::PointerButton::Primary) {
            self.camera.orbit(
                -f64::from(delta.x) * Self::ORBIT_PER_POINT,
                f64::from(delta.y) * Self::ORBIT_PER_POINT,
            );
        }
        if response.hovered() {
            let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            if scroll != 0.0 {
                self.camera.zoom((-f64::from(scroll) * 0.002).exp());
                // The view used the wheel: a surrounding scroll area must not scroll too.
                ui.ctx().input_mut(|i| i.smooth_scroll_delta.y = 0.0);
            }
            if zoom != 1.0 {
                self.camera.zoom(1.0 / f64::from(zoom));
            }
        }
        if response.double_clicked() {
            match pose {
                Some(pose) => self.camera.fit(pose),
                None => self.camera.reset(),
            }
        }
    }
}

/// Runs inside egui_glow's paint: makes the scene on first use, then clears and draws the
/// view's rect only (the rest of the window is egui's).
fn paint_callback(
    scene: &Mutex<Gpu>,
    info: &egui::PaintCallbackInfo,
    painter: &egui_glow::Painter,
    input: &SceneInput,
    camera: &Camera,
) {
    let mut gpu = scene.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(*gpu, Gpu::Pending) {
        let made = Context::from_gl_context(painter.gl().clone())
            .map_err(|e| SceneError::Context(e.to_string()))
            .and_then(|context| Scene::new(&context));
        *gpu = match made {
            Ok(scene) => Gpu::Ready(Box::new(scene)),
            Err(e) => {
                tracing::error!("3D view disabled: {e}");
                Gpu::Failed(e.to_string())
            }
        };
    }
    let Gpu::Ready(scene) = &mut *gpu else {
        return;
    };
    let view = info.viewport_in_pixels();
    let clip = info.clip_rect_in_pixels();
    let viewport = Viewport {
        x: view.left_px,
        y: view.from_bottom_px,
        width: view.width_px.max(0) as u32,
        height: view.height_px.max(0) as u32,
    };
    let clip = ScissorBox {
        x: clip.left_px,
        y: clip.from_bottom_px,
        width: clip.width_px.max(0) as u32,
        height: clip.height_px.max(0) as u32,
    };
    let [width, height] = info.screen_size_px;
    let target = RenderTarget::screen(scene.context(), width, height);
    scene.paint(&target, viewport, clip, input, camera);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_meshes_are_wound_counter_clockwise_seen_from_outside() {
        let sphere = unit_sphere(12, 8);
        for t in sphere.indices.chunks(3) {
            let [a, b, c] =
                [t[0], t[1], t[2]].map(|i| glam::Vec3::from(sphere.positions[i as usize]));
            let normal = (b - a).cross(c - a);
            assert!(normal.dot(a + b + c) > 0.0, "triangle {t:?} faces inwards");
        }
        // For the cylinder, "outside" is away from the axis on the side and along ±z on
        // the caps.
        let cylinder = unit_cylinder(12);
        for t in cylinder.indices.chunks(3) {
            let [a, b, c] =
                [t[0], t[1], t[2]].map(|i| glam::Vec3::from(cylinder.positions[i as usize]));
            let normal = (b - a).cross(c - a);
            let n = glam::Vec3::from(cylinder.normals[t[0] as usize]);
            assert!(normal.dot(n) > 0.0, "triangle {t:?} faces inwards");
        }
    }

    #[test]
    fn vehicle_down_is_world_down_and_right_is_world_minus_y() {
        assert_eq!(
            to_world(DVec3::new(1.0, 2.0, 3.0)),
            DVec3::new(1.0, -2.0, -3.0)
        );
        // A 180° turn about x keeps the frame right-handed.
        let x = to_world(DVec3::X);
        let y = to_world(DVec3::Y);
        assert_eq!(x.cross(y), to_world(DVec3::Z));
    }

    #[test]
    fn camera_projects_its_target_to_the_viewport_centre() {
        let camera = Camera::default();
        let p = camera.project(camera.target, [400.0, 300.0]).unwrap();
        assert!(
            (p[0] - 200.0).abs() < 1e-3 && (p[1] - 150.0).abs() < 1e-3,
            "{p:?}"
        );
        // Above the target (vehicle −z) is up on screen.
        let mut above = camera.target;
        above[2] -= 0.1;
        assert!(camera.project(above, [400.0, 300.0]).unwrap()[1] < 150.0);
        // The eye itself and points behind it do not project.
        let behind =
            (DVec3::from_array(camera.eye()) * 2.0 - DVec3::from_array(camera.target)).to_array();
        assert_eq!(camera.project(behind, [400.0, 300.0]), None);
    }

    #[test]
    fn pan_moves_the_target_across_the_screen() {
        let mut camera = Camera::default();
        let before = camera.target;
        camera.pan(100.0, 0.0, 300.0);
        // Dragging right moves the scene right: the old target now appears right of centre.
        let p = camera.project(before, [400.0, 300.0]).unwrap();
        assert!(p[0] > 250.0 && (p[1] - 150.0).abs() < 1.0, "{p:?}");
    }

    #[test]
    fn warning_tint_goes_from_base_through_amber_to_red() {
        let palette = ScenePalette::new(true);
        let base = palette.cylinder;
        assert_eq!(palette.warning_tint(base, 0.0), base);
        assert_eq!(palette.warning_tint(base, f32::NAN), base);
        let red = palette.warning_tint(base, 1.0);
        assert!((0..3).all(|i| (red[i] - palette.at_limit[i]).abs() < 1e-6));
        let near = palette.warning_tint(base, 0.34);
        let amber = lerp3(palette.near_limit, palette.at_limit, 0.34);
        assert!((0..3).all(|i| (near[i] - amber[i]).abs() < 1e-6));
    }
}
