//! What to draw this frame, as a list of meshes by pass (opaque, translucent, overlay),
//! built from the [`SceneInput`] and the [`ScenePalette`]. No GL here.

use glam::{DMat3, DMat4, DVec3};

use super::SceneInput;
use super::camera::to_world;
use crate::model::clearance::Zone;
use crate::model::clearance::obstacles::ObstacleShape;
use crate::model::kinematics::ArmPose;
use crate::ui::theme::{ScenePalette, unit_warning};

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

pub(super) fn rgba(rgb: [f32; 3], alpha: f32) -> [f32; 4] {
    [rgb[0], rgb[1], rgb[2], alpha]
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Shape {
    Cylinder,
    Sphere,
    /// The cube from −1 to 1.
    Box,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Style {
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
pub(super) struct Item {
    pub(super) shape: Shape,
    pub(super) model: DMat4,
    pub(super) normal_matrix: DMat3,
    /// Metres per unit of the mesh's local z (length for cylinders, radius for spheres).
    pub(super) local_z_metres: f64,
    /// Where it is, for back-to-front sorting.
    pub(super) centre: DVec3,
    pub(super) style: Style,
    /// Striped where it is below the ground (an arm's parts; not the vehicle's obstacles).
    pub(super) striped_below: bool,
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
            striped_below: true,
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
            striped_below: true,
        }
    }

    /// A box of half size `half` placed by `pose` (vehicle ← box).
    fn oriented_box(pose: &glam::DAffine3, half: DVec3, style: Style) -> Self {
        let half = half.max(DVec3::splat(1e-9));
        // World = the vehicle frame turned 180° about x.
        let turn = DMat4::from_diagonal(glam::DVec4::new(1.0, -1.0, -1.0, 1.0));
        let model = turn * DMat4::from(*pose) * DMat4::from_scale(half);
        let linear = DMat3::from_mat4(model);
        Self {
            shape: Shape::Box,
            model,
            normal_matrix: linear.inverse().transpose(),
            local_z_metres: 2.0 * half.z,
            centre: to_world(pose.translation),
            style,
            striped_below: false,
        }
    }
}

/// Everything to draw this frame, by pass.
#[derive(Default)]
pub(super) struct DrawList {
    pub(super) opaque: Vec<Item>,
    pub(super) translucent: Vec<Item>,
    pub(super) overlay: Vec<Item>,
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

/// How an arm is drawn: the focused one in its colours, the others of the vehicle dimmed
/// toward the background, an arm whose link is lost grey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Focused,
    Other,
    Lost,
}

impl Look {
    fn colour(self, palette: &ScenePalette, rgb: [f32; 3]) -> [f32; 3] {
        match self {
            Look::Focused => rgb,
            Look::Other => palette.dimmed(rgb),
            Look::Lost => palette.lost,
        }
    }

    /// Opacity of its volumes relative to the focused arm's.
    fn alpha(self) -> f32 {
        match self {
            Look::Focused => 1.0,
            Look::Other | Look::Lost => 0.6,
        }
    }
}

impl DrawList {
    /// The draw list of `input`; `marker`, when given, is the focused arm's tool-point
    /// marker radius, m (the size that keeps it [`super::Camera::MARKER_PX`] on screen).
    pub(super) fn build(input: &SceneInput, palette: &ScenePalette, marker: Option<f64>) -> Self {
        let mut list = Self::default();
        let scale = input
            .pose
            .as_ref()
            .or(input.ghost.as_ref())
            .or(input.others.first().map(|a| &a.pose))
            .map_or(1.0, arm_scale);
        let sizes = Sizes::for_scale(scale);
        if let Some(ghost) = &input.ghost {
            list.add_ghost(ghost, input, palette, &sizes);
        }
        list.add_clearance(input, palette, &sizes);
        // The vehicle frame at its origin, once.
        if input.pose.is_some() || !input.others.is_empty() {
            list.add_triad(
                &glam::DAffine3::IDENTITY,
                palette,
                sizes.triad * 1.5,
                &sizes,
            );
        }
        for other in &input.others {
            let look = if other.lost { Look::Lost } else { Look::Other };
            list.add_arm(
                &other.pose,
                &other.joint_warning,
                (look, Some(other.id)),
                input,
                palette,
                &sizes,
            );
        }
        if let Some(pose) = &input.pose {
            let focused = marker.map_or(sizes, |m| Sizes {
                marker: m,
                marker_outline: m * 25.0 / 18.0,
                ..sizes
            });
            list.add_arm(
                pose,
                &input.joint_warning,
                (Look::Focused, input.clearance.focus),
                input,
                palette,
                &focused,
            );
        }
        list
    }

    fn add_arm(
        &mut self,
        pose: &ArmPose,
        joint_warning: &[f32],
        (look, id): (Look, Option<crate::model::update::ComponentId>),
        input: &SceneInput,
        palette: &ScenePalette,
        sizes: &Sizes,
    ) {
        let focused = look == Look::Focused;
        for (index, c) in pose.cylinders.iter().enumerate() {
            // In a pair inside the band or closer: that pair's colour, whatever the joint's.
            let zone = input
                .clearance
                .tinted
                .iter()
                .filter(|(arm, i, _)| Some(*arm) == id && *i == index)
                .map(|(_, _, z)| *z)
                .min();
            let warning = joint_warning
                .get(c.joint.wrapping_sub(1))
                .copied()
                .unwrap_or(0.0);
            // A lost arm's limits are not known now: grey, untinted.
            let w = if look == Look::Lost {
                0.0
            } else {
                unit_warning(warning)
            };
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
            let style = match zone.and_then(|z| zone_colour(palette, z)) {
                Some(rgb) => Style::Volume {
                    color: rgba(rgb, 0.35),
                    rim_alpha: 0.9,
                    dash_period,
                },
                None => Style::Volume {
                    color: rgba(
                        look.colour(palette, palette.warning_tint(base, w)),
                        (alpha + 0.15 * w) * look.alpha(),
                    ),
                    rim_alpha: 0.75 * look.alpha(),
                    dash_period,
                },
            };
            self.translucent.push(Item::cylinder(
                to_world(pose.mount.transform_point3(c.from)),
                to_world(pose.mount.transform_point3(c.to)),
                radius.abs(),
                style,
            ));
        }
        let link = Style::Solid {
            color: rgba(look.colour(palette, palette.link), 1.0),
            lit: true,
        };
        let joint = Style::Solid {
            color: rgba(look.colour(palette, palette.joint), 1.0),
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
        // The manipulator frame at the mount.
        self.add_triad(&pose.mount, palette, sizes.triad, sizes);
        if focused {
            self.add_frames_and_axes(pose, input, palette, sizes);
        }
        let flat = |rgb| Style::Solid {
            color: rgba(rgb, 1.0),
            lit: false,
        };
        if focused {
            // The focused arm's tool point over everything, never lost in a volume.
            self.overlay.push(Item::sphere(
                tool,
                sizes.marker_outline,
                flat(palette.marker_outline),
            ));
            self.overlay
                .push(Item::sphere(tool, sizes.marker, flat(palette.tool_marker)));
        } else {
            self.opaque.push(Item::sphere(
                tool,
                sizes.marker,
                flat(look.colour(palette, palette.tool_marker)),
            ));
        }
    }

    /// The vehicle file's obstacles (translucent, tinted by the zone of a pair shown) and a
    /// line between the closest points of each pair shown, over everything.
    fn add_clearance(&mut self, input: &SceneInput, palette: &ScenePalette, sizes: &Sizes) {
        for o in &input.clearance.obstacles {
            let rgb = o
                .zone
                .and_then(|z| zone_colour(palette, z))
                .unwrap_or(palette.obstacle);
            let style = Style::Volume {
                color: rgba(rgb, 0.14),
                rim_alpha: 0.5,
                dash_period: None,
            };
            match o.shape {
                ObstacleShape::Box(b) => {
                    self.translucent
                        .push(Item::oriented_box(&b.pose, b.half, style));
                }
                ObstacleShape::Capsule(c) => {
                    let (from, to) = (to_world(c.from), to_world(c.to));
                    for mut item in [
                        Item::cylinder(from, to, c.radius, style),
                        Item::sphere(from, c.radius, style),
                        Item::sphere(to, c.radius, style),
                    ] {
                        item.striped_below = false;
                        self.translucent.push(item);
                    }
                }
            }
        }
        for line in &input.clearance.lines {
            let rgb = zone_colour(palette, line.zone).unwrap_or(palette.gap_line);
            let flat = Style::Solid {
                color: rgba(rgb, 1.0),
                lit: false,
            };
            let (a, b) = (to_world(line.on_a), to_world(line.on_b));
            self.overlay
                .push(Item::cylinder(a, b, sizes.line * 1.2, flat));
            for end in [a, b] {
                self.overlay
                    .push(Item::sphere(end, sizes.joint * 0.45, flat));
            }
        }
    }

    /// The joint frames and axes the operator asked for (the focused arm's).
    fn add_frames_and_axes(
        &mut self,
        pose: &ArmPose,
        input: &SceneInput,
        palette: &ScenePalette,
        sizes: &Sizes,
    ) {
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

/// The colour of a pair in `zone`: amber inside the band or the margin, red in contact;
/// `None` when clear.
fn zone_colour(palette: &ScenePalette, zone: Zone) -> Option<[f32; 3]> {
    match zone {
        Zone::Contact => Some(palette.at_limit),
        Zone::Margin | Zone::Band => Some(palette.near_limit),
        Zone::Clear => None,
    }
}

/// World positions of the manipulator origin and of frames 1..n.
fn frame_origins(pose: &ArmPose) -> Vec<DVec3> {
    std::iter::once(pose.mount.translation)
        .chain(pose.frames.iter().map(|f| (pose.mount * *f).translation))
        .map(to_world)
        .collect()
}
