//! When the 3D view's picture must be rendered again. The scene is rendered into a texture
//! and the texture is drawn while nothing in it changed *visibly*: under Mesa's software
//! renderer a render of the view costs several milliseconds, a copy of the texture a fraction
//! of one. Visibly means: anything of the [`SceneInput`] other than the arms' poses
//! (theme, axes, frames, ghost shown or not, limit tints), the camera, the view's size, or a
//! pose whose points moved more than [`VISIBLE_PX`] on the screen (measurement noise of a
//! resting arm is not redrawn). Plain data, no GL: `cargo test --lib scene::cache`.

use glam::{DAffine3, DVec3};

use super::{Camera, SceneArm, SceneInput};
use crate::model::kinematics::ArmPose;

/// How far a point of an arm must move on the screen, px, before the view is rendered again.
pub const VISIBLE_PX: f32 = 1.0;

/// A change of a joint's limit tint (0..1) smaller than this is not redrawn: about one step
/// of an 8-bit colour channel across the amber-to-red ramp.
const TINT_STEP: f32 = 1.0 / 128.0;

/// What a picture of the view was (or would be) rendered from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The scene.
    pub input: SceneInput,
    /// The camera.
    pub camera: Camera,
    /// The view's size on the screen, px.
    pub size_px: [f32; 2],
}

/// Whether `next` looks different from `last` on the screen (see the module doc).
pub fn visibly_changed(last: &Rendered, next: &Rendered) -> bool {
    if last.size_px != next.size_px || last.camera != next.camera {
        return true;
    }
    let (a, b) = (&last.input, &next.input);
    if a.default_radius != b.default_radius
        || a.show_axes != b.show_axes
        || a.show_frames != b.show_frames
        || a.dark != b.dark
        || tints_differ(&a.joint_warning, &b.joint_warning)
        || a.others.len() != b.others.len()
        || clearance_changed(&a.clearance, &b.clearance)
    {
        return true;
    }
    let moved = |p: Option<&ArmPose>, q: Option<&ArmPose>| match (p, q) {
        (None, None) => false,
        (Some(p), Some(q)) => moved_px(p, q, &next.camera, next.size_px) > VISIBLE_PX,
        _ => true,
    };
    moved(a.pose.as_ref(), b.pose.as_ref())
        || moved(a.ghost.as_ref(), b.ghost.as_ref())
        || a.others
            .iter()
            .zip(&b.others)
            .any(|(x, y)| other_changed(x, y) || moved(Some(&x.pose), Some(&y.pose)))
}

/// What of the clearance shows other than by the arms moving: the obstacles, the ground,
/// the tints and the pairs' zones (a line's ends move with the arm it is on).
fn clearance_changed(a: &super::SceneClearance, b: &super::SceneClearance) -> bool {
    a.focus != b.focus
        || a.ground != b.ground
        || a.below_ground != b.below_ground
        || a.obstacles != b.obstacles
        || a.tinted != b.tinted
        || a.lines.len() != b.lines.len()
        || a.lines.iter().zip(&b.lines).any(|(x, y)| x.zone != y.zone)
}

fn other_changed(a: &SceneArm, b: &SceneArm) -> bool {
    a.id != b.id || a.lost != b.lost || tints_differ(&a.joint_warning, &b.joint_warning)
}

fn tints_differ(a: &[f32], b: &[f32]) -> bool {
    a.len() != b.len()
        || a.iter().zip(b).any(|(x, y)| {
            // NaN counts as no warning, as the palette draws it.
            let (x, y) = (x.max(0.0), y.max(0.0));
            (x - y).abs() > TINT_STEP
        })
}

/// How far, px, the points that shape `a` and `b` (every frame's origin and the ends of its
/// x and z axes at a tenth of the arm's size, the tool point, the bounding cylinders' ends)
/// lie apart on a screen of `size_px` seen from `camera`; infinite when the two arms differ
/// in structure (joints, cylinders, radii) or a point leaves the screen's side of the eye.
pub fn moved_px(a: &ArmPose, b: &ArmPose, camera: &Camera, size_px: [f32; 2]) -> f32 {
    if a.frames.len() != b.frames.len()
        || a.cylinders.len() != b.cylinders.len()
        || a.cylinders
            .iter()
            .zip(&b.cylinders)
            .any(|(x, y)| x.radius != y.radius || x.joint != y.joint)
    {
        return f32::INFINITY;
    }
    let (pa, pb) = (shape_points(a), shape_points(b));
    pa.iter()
        .zip(&pb)
        .map(|(p, q)| {
            match (
                camera.project(p.to_array(), size_px),
                camera.project(q.to_array(), size_px),
            ) {
                (Some(p), Some(q)) => (p[0] - q[0]).hypot(p[1] - q[1]),
                (None, None) => 0.0,
                _ => f32::INFINITY,
            }
        })
        .fold(0.0, f32::max)
}

/// The points whose places on the screen say what the arm looks like, vehicle frame.
fn shape_points(pose: &ArmPose) -> Vec<DVec3> {
    let base = pose.mount.translation;
    let size = pose
        .frames
        .iter()
        .map(|f| (pose.mount * *f).translation.distance(base))
        .fold(0.0, f64::max)
        .max(0.1);
    let axis = 0.1 * size;
    let frame_points = |f: DAffine3| {
        let f = pose.mount * f;
        [
            f.translation,
            f.transform_point3(DVec3::X * axis),
            f.transform_point3(DVec3::Z * axis),
        ]
    };
    let mut points: Vec<DVec3> = pose.frames.iter().flat_map(|f| frame_points(*f)).collect();
    points.extend(frame_points(pose.end_effector));
    points.push(pose.tool_point_vehicle);
    points.extend(
        pose.cylinders
            .iter()
            .flat_map(|c| [c.from, c.to].map(|p| pose.mount.transform_point3(p))),
    );
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinematics::forward;
    use crate::sim::arm_file::ArmFile;

    fn demo(q: &[f64]) -> ArmPose {
        let file = ArmFile::demo();
        forward(&file.spec, q, file.tool_point).unwrap_or_else(|e| panic!("{e}"))
    }

    fn drawn(q: &[f64]) -> Rendered {
        let pose = demo(q);
        let mut camera = Camera::default();
        camera.fit(&pose);
        Rendered {
            input: SceneInput {
                pose: Some(pose),
                joint_warning: vec![0.0; q.len()],
                ..SceneInput::default()
            },
            camera,
            size_px: [800.0, 500.0],
        }
    }

    fn zeros() -> Vec<f64> {
        ArmFile::demo().home
    }

    #[test]
    fn a_pose_moved_less_than_a_pixel_is_not_rendered_again() {
        let q = zeros();
        let last = drawn(&q);
        let mut q2 = q.clone();
        // A micro-radian of the first joint: far below a pixel at this size.
        q2[0] += 1e-6;
        let next = Rendered {
            input: SceneInput {
                pose: Some(demo(&q2)),
                ..last.input.clone()
            },
            ..last.clone()
        };
        let px = moved_px(
            last.input.pose.as_ref().expect("pose"),
            next.input.pose.as_ref().expect("pose"),
            &next.camera,
            next.size_px,
        );
        assert!(px < VISIBLE_PX, "moved {px} px");
        assert!(!visibly_changed(&last, &next));
        assert!(!visibly_changed(&last, &last.clone()));
    }

    #[test]
    fn a_pose_moved_more_than_a_pixel_is_rendered_again() {
        let q = zeros();
        let last = drawn(&q);
        let mut q2 = q.clone();
        // Two hundredths of a radian of the first joint: several pixels at the tip.
        q2[0] += 0.02;
        let next = Rendered {
            input: SceneInput {
                pose: Some(demo(&q2)),
                ..last.input.clone()
            },
            ..last.clone()
        };
        assert!(visibly_changed(&last, &next));
    }

    #[test]
    fn a_turn_of_the_last_joint_about_its_own_axis_is_seen() {
        // The wrist's origin stays where it is; its frame's x axis turns.
        let q = zeros();
        let last = drawn(&q);
        let mut q2 = q.clone();
        let n = q2.len();
        q2[n - 1] += 0.3;
        let next = Rendered {
            input: SceneInput {
                pose: Some(demo(&q2)),
                ..last.input.clone()
            },
            ..last.clone()
        };
        assert!(visibly_changed(&last, &next));
    }

    #[test]
    fn camera_size_theme_ghost_and_tints_are_rendered_again() {
        let last = drawn(&zeros());
        let mut camera = last.camera;
        camera.orbit(0.01, 0.0, false);
        let changes = [
            Rendered {
                camera,
                ..last.clone()
            },
            Rendered {
                size_px: [801.0, 500.0],
                ..last.clone()
            },
            Rendered {
                input: SceneInput {
                    dark: false,
                    ..last.input.clone()
                },
                ..last.clone()
            },
            Rendered {
                input: SceneInput {
                    ghost: last.input.pose.clone(),
                    ..last.input.clone()
                },
                ..last.clone()
            },
            Rendered {
                input: SceneInput {
                    show_axes: true,
                    ..last.input.clone()
                },
                ..last.clone()
            },
            Rendered {
                input: SceneInput {
                    joint_warning: {
                        let mut w = last.input.joint_warning.clone();
                        w[0] = 0.5;
                        w
                    },
                    ..last.input.clone()
                },
                ..last.clone()
            },
            Rendered {
                input: SceneInput {
                    pose: None,
                    ..last.input.clone()
                },
                ..last.clone()
            },
        ];
        for (i, next) in changes.iter().enumerate() {
            assert!(visibly_changed(&last, next), "change {i} not seen");
        }
    }
}
