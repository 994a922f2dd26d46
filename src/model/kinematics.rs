//! Forward kinematics from an [`ArmSpec`] and joint positions: joint frames, the tool point,
//! the end-effector pose and the bounding cylinders (kinematics.md §5 and §7).
//!
//! Convention (Crane & Duffy, kinematics.md §2–§5): frame j sits on joint axis **S**j at the
//! foot of the common normal **a**j,j+1, z along **S**j, x along **a**j,j+1. The manipulator
//! frame M has z along **S**1 and its origin on it; frame n is the end-effector frame in which
//! the tool point is given. The chain is
//!
//! ```text
//! ^M T_1     = Rz(θ1) · Tz(S11)
//! ^k T_{k+1} = Tx(a_{k,k+1}) · Rx(α_{k,k+1}) · Rz(θ_{k+1}) · Tz(S_{k+1,k+1})
//! ```
//!
//! where the joint position `q_j` is θj for a revolute joint and Sjj for a prismatic one.
//! `Joint::link_length`/`twist` of joint k+1 are a(k,k+1)/α(k,k+1); joint 1's are ignored,
//! because the message has no link before joint 1 (they never reach the wire either).
//!
//! [`tool_point`] and [`end_effector_pose`] allocate nothing: the simulator calls them at up
//! to 1 kHz. [`forward`] builds everything the 3D view needs for one configuration.

use glam::{DAffine3, DMat3, DQuat, DVec3};

use super::arm::{ArmSpec, Joint, Mount};
use crate::model::arm::JointType;

/// Why forward kinematics could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KinematicsError {
    /// The specification lists no joints.
    #[error(
        "the arm specification has no joints; a ReportManipulatorSpecifications always \
         describes at least joint 1"
    )]
    NoJoints,
    /// The number of joint positions differs from the number of joints.
    #[error(
        "{given} joint positions given for a {expected}-joint arm; give one position per \
         joint, joint 1 first"
    )]
    JointCount {
        /// Positions given.
        given: usize,
        /// Joints in the specification.
        expected: usize,
    },
    /// A joint position is NaN or infinite.
    #[error(
        "joint {joint} position is {value}; joint positions must be finite (rad for a \
         revolute joint, m for a prismatic one)"
    )]
    NonFiniteJointPosition {
        /// The joint, 1-based.
        joint: usize,
        /// The offending value.
        value: f64,
    },
    /// A link parameter of the specification is NaN or infinite.
    #[error(
        "joint {joint} {parameter} is {value}; the arm specification must hold finite link \
         parameters"
    )]
    NonFiniteParameter {
        /// The joint, 1-based.
        joint: usize,
        /// Which parameter: "link length", "twist", "offset" or "angle".
        parameter: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A tool point coordinate is NaN or infinite.
    #[error(
        "tool point {tool_point:?} is not finite; give the tool offset in metres in the \
         end-effector frame"
    )]
    NonFiniteToolPoint {
        /// The tool point given.
        tool_point: [f64; 3],
    },
    /// The mount cannot be turned into a rigid transform.
    #[error(
        "mount position {position:?} with orientation {orientation:?} cannot place the arm: \
         the position must be finite and the quaternion [d, a, b, c] finite and non-zero"
    )]
    InvalidMount {
        /// The mount position, m.
        position: [f64; 3],
        /// The mount quaternion `[d, a, b, c]`.
        orientation: [f64; 4],
    },
}

/// Which bounding cylinder of a joint (kinematics.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CylinderKind {
    /// Along a revolute joint's axis, covering the constant offset Sjj.
    Offset,
    /// Along a prismatic joint's axis, covering the current extension Sjj.
    Joint,
    /// Along the common normal a(k,k+1) from axis k to axis k+1.
    LinkLength,
}

/// One bounding cylinder, its axis given by two end points in the manipulator frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cylinder {
    /// The joint whose specification record gives the radius, 1-based.
    pub joint: usize,
    /// Which of the joint's cylinders this is.
    pub kind: CylinderKind,
    /// Start of the axis, manipulator frame, m.
    pub from: DVec3,
    /// End of the axis, manipulator frame, m (equal to `from` for a zero-length cylinder).
    pub to: DVec3,
    /// Radius as the specification gives it, m; `None` when it gives none (the viewer picks).
    pub radius: Option<f64>,
}

impl Cylinder {
    /// Length of the axis, m (|a| or |S|; never negative).
    pub fn length(&self) -> f64 {
        self.from.distance(self.to)
    }
}

/// The radius a bounding cylinder is drawn with when the specification gives none, m: the
/// 3D view, the Foxglove scene of recordings and the URDF export draw such cylinders, in a
/// colour of their own, at this radius.
pub const DEFAULT_CYLINDER_RADIUS: f64 = 0.03;

/// Everything the 3D view and the probe need for one configuration of the arm.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmPose {
    /// Vehicle ← manipulator (identity when the specification gives no mount).
    pub mount: DAffine3,
    /// Manipulator ← frame j for j = 1..n; index 0 is frame 1.
    pub frames: Vec<DAffine3>,
    /// Manipulator ← frame n, the end-effector frame (equal to the last of `frames`).
    pub end_effector: DAffine3,
    /// The tool point in the manipulator frame, m.
    pub tool_point_manipulator: DVec3,
    /// The tool point in the vehicle frame, m.
    pub tool_point_vehicle: DVec3,
    /// Bounding cylinders in the manipulator frame, base to tip: joint 1's offset/joint
    /// cylinder, then for each later joint its link-length cylinder and its offset/joint
    /// cylinder (2n − 1 in all; zero-length ones included).
    pub cylinders: Vec<Cylinder>,
}

/// Computes every frame, the tool point and the bounding cylinders for joint positions `q`
/// (rad or m, joint 1 first) and a tool point given in the end-effector frame, m.
pub fn forward(
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
) -> Result<ArmPose, KinematicsError> {
    let tool = checked_tool_point(tool_point)?;
    let mount = mount_transform(&spec.mount_or_identity())?;
    let n = spec.joints.len();
    let mut frames = Vec::with_capacity(n);
    let mut cylinders = Vec::with_capacity(2 * n);
    let mut previous = DAffine3::IDENTITY;
    let end_effector = walk(spec, q, |index, joint, frame| {
        let foot = if index == 0 {
            previous.translation
        } else {
            // The foot of a(k,k+1) on S(k+1): the signed link length along x_k.
            let foot = previous.transform_point3(DVec3::new(joint.link_length, 0.0, 0.0));
            cylinders.push(Cylinder {
                joint: index + 1,
                kind: CylinderKind::LinkLength,
                from: previous.translation,
                to: foot,
                radius: joint.link_radius,
            });
            foot
        };
        cylinders.push(Cylinder {
            joint: index + 1,
            kind: match joint.kind {
                JointType::Revolute => CylinderKind::Offset,
                JointType::Prismatic => CylinderKind::Joint,
            },
            from: foot,
            to: frame.translation,
            radius: joint.axis_radius,
        });
        frames.push(frame);
        previous = frame;
    })?;
    let tool_point_manipulator = end_effector.transform_point3(tool);
    Ok(ArmPose {
        mount,
        frames,
        end_effector,
        tool_point_manipulator,
        tool_point_vehicle: mount.transform_point3(tool_point_manipulator),
        cylinders,
    })
}

/// The tool point in the manipulator frame, m, for joint positions `q` and a tool point
/// given in the end-effector frame. Allocates nothing.
pub fn tool_point(
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
) -> Result<DVec3, KinematicsError> {
    let tool = checked_tool_point(tool_point)?;
    Ok(walk(spec, q, |_, _, _| {})?.transform_point3(tool))
}

/// The tool frame in the manipulator frame, as `ReportEndEffectorPose` carries it: the tool
/// point (m) and the orientation of frame n as a unit quaternion `[d, a, b, c]` (scalar
/// first, `d >= 0`). With a zero tool point this is frame n itself. Allocates nothing.
pub fn end_effector_pose(
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
) -> Result<(DVec3, [f64; 4]), KinematicsError> {
    let tool = checked_tool_point(tool_point)?;
    let frame = walk(spec, q, |_, _, _| {})?;
    let mut rotation = DQuat::from_mat3(&frame.matrix3).normalize();
    // q and −q are the same rotation; report one of them so equal poses compare equal.
    if rotation.w < 0.0 {
        rotation = -rotation;
    }
    Ok((
        frame.transform_point3(tool),
        [rotation.w, rotation.x, rotation.y, rotation.z],
    ))
}

/// Step of the central differences in [`jacobian`] (rad or m): the truncation error goes as
/// its square, the rounding error as 1e-16 over it; both stay far below 1e-8 at 1e-6.
const JACOBIAN_STEP: f64 = 1e-6;

/// The arm's Jacobian at `q`: per joint (joint 1 first), the twist of the tool per unit joint
/// velocity, `[ωx, ωy, ωz, vx, vy, vz]` in the manipulator frame — the angular velocity of
/// frame n (rad/s) and the linear velocity of the tool point (m/s), in the order of
/// `EndEffectorVelocityRec`. Computed numerically, by central differences of the forward
/// kinematics, so it follows the chain whatever its joint types.
pub fn jacobian(
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
) -> Result<Vec<[f64; 6]>, KinematicsError> {
    let tool = checked_tool_point(tool_point)?;
    check(spec, q)?;
    let mut moved = q.to_vec();
    let mut columns = Vec::with_capacity(q.len());
    for j in 0..q.len() {
        moved[j] = q[j] + JACOBIAN_STEP;
        let plus = walk(spec, &moved, |_, _, _| {})?;
        moved[j] = q[j] - JACOBIAN_STEP;
        let minus = walk(spec, &moved, |_, _, _| {})?;
        moved[j] = q[j];
        let h2 = 2.0 * JACOBIAN_STEP;
        let linear = (plus.transform_point3(tool) - minus.transform_point3(tool)) / h2;
        // R+ · R−ᵀ is a rotation by ω·2h; its skew-symmetric part is sin(2h|ω|) about ω.
        let r = plus.matrix3 * minus.matrix3.transpose();
        let angular = DVec3::new(
            r.y_axis.z - r.z_axis.y,
            r.z_axis.x - r.x_axis.z,
            r.x_axis.y - r.y_axis.x,
        ) / (2.0 * h2);
        columns.push([
            angular.x, angular.y, angular.z, linear.x, linear.y, linear.z,
        ]);
    }
    Ok(columns)
}

/// The tool twist of joint velocities `qd` through Jacobian `columns` (see [`jacobian`]).
pub fn twist(columns: &[[f64; 6]], qd: &[f64]) -> [f64; 6] {
    let mut out = [0.0; 6];
    for (c, v) in columns.iter().zip(qd) {
        for (o, x) in out.iter_mut().zip(c) {
            *o += x * v;
        }
    }
    out
}

/// Joint velocities that move the tool at `twist` (`[ωx, ωy, ωz, vx, vy, vz]`, manipulator
/// frame) as closely as the arm can: the damped least-squares inverse of the Jacobian,
/// `q̇ = Jᵀ (J Jᵀ + λ² I)⁻¹ x`. Where the arm can follow, the error is of order λ²/σ² (σ the
/// singular values of J); near a singularity the damping trades accuracy for bounded joint
/// speeds (at most |x|/2λ). A zero column (a joint left out) gets zero velocity.
pub fn damped_least_squares(columns: &[[f64; 6]], twist: [f64; 6], damping: f64) -> Vec<f64> {
    // A = J Jᵀ + λ² I, 6×6, symmetric positive definite for λ > 0.
    let mut a = [[0.0; 6]; 6];
    for c in columns {
        for (r, row) in a.iter_mut().enumerate() {
            for (k, x) in row.iter_mut().enumerate() {
                *x += c[r] * c[k];
            }
        }
    }
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += damping * damping;
    }
    let y = solve_spd(&a, twist);
    columns
        .iter()
        .map(|c| c.iter().zip(&y).map(|(a, b)| a * b).sum())
        .collect()
}

/// Solves `a · y = b` for a symmetric positive definite `a` (Cholesky); zeros if it is not.
fn solve_spd(a: &[[f64; 6]; 6], b: [f64; 6]) -> [f64; 6] {
    let mut l = [[0.0; 6]; 6];
    for i in 0..6 {
        for k in 0..=i {
            let sum: f64 = (0..k).map(|m| l[i][m] * l[k][m]).sum();
            if i == k {
                let d = a[i][i] - sum;
                if d <= 0.0 || !d.is_finite() {
                    return [0.0; 6];
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][k] = (a[i][k] - sum) / l[k][k];
            }
        }
    }
    // L z = b, then Lᵀ y = z.
    let mut z = [0.0; 6];
    for i in 0..6 {
        let sum: f64 = (0..i).map(|m| l[i][m] * z[m]).sum();
        z[i] = (b[i] - sum) / l[i][i];
    }
    let mut y = [0.0; 6];
    for i in (0..6).rev() {
        let sum: f64 = (i + 1..6).map(|m| l[m][i] * y[m]).sum();
        y[i] = (z[i] - sum) / l[i][i];
    }
    y
}

/// A sphere holding every point an arm can reach with its joints anywhere within their
/// limits: the frame origins, the tool point and the bounding cylinders around them
/// (what the 3D view keeps in view while it follows the arm, so a tour or a jog never
/// leaves the picture). Conservative, not tight: see [`reach`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reach {
    /// The centre, vehicle frame, m.
    pub centre: DVec3,
    /// The radius, m.
    pub radius: f64,
    /// The mount turns the arm's z axis (joint 1's axis, "up" of the arm) downwards in the
    /// vehicle's world: the arm hangs from its mount.
    pub hangs: bool,
}

/// The arm's workspace as a [`Reach`] sphere, from the specification alone (link lengths,
/// offsets, prismatic limits) and the tool point: centred on joint 1's axis where frame 1
/// sits (the middle of its stroke for a prismatic joint 1), its radius the sum of every
/// later link length and offset (the farthest extension of a prismatic joint), the tool
/// point's distance and half joint 1's stroke, grown by the widest bounding cylinder. Each
/// link-to-link step `Tx(a)·Rx(α)·Rz(θ)·Tz(S)` moves a frame origin by at most |a| + |S|
/// whatever the angles, so no pose within the limits leaves it. A prismatic joint without
/// limits counts as not extending (the message makes its limits mandatory).
pub fn reach(spec: &ArmSpec, tool_point: [f64; 3]) -> Result<Reach, KinematicsError> {
    let tool = checked_tool_point(tool_point)?;
    let mount = mount_transform(&spec.mount_or_identity())?;
    let Some(first) = spec.joints.first() else {
        return Err(KinematicsError::NoJoints);
    };
    let farthest = |joint: &Joint| match joint.kind {
        JointType::Revolute => joint.offset.abs(),
        JointType::Prismatic => joint
            .min
            .unwrap_or(0.0)
            .abs()
            .max(joint.max.unwrap_or(0.0).abs()),
    };
    // Frame 1's origin: fixed on S1 for a revolute joint 1, along S1 within its stroke for
    // a prismatic one.
    let (height, stroke) = match first.kind {
        JointType::Revolute => (first.offset, 0.0),
        JointType::Prismatic => {
            let (lo, hi) = (first.min.unwrap_or(0.0), first.max.unwrap_or(0.0));
            ((lo + hi) * 0.5, (hi - lo).abs() * 0.5)
        }
    };
    let chain: f64 = spec
        .joints
        .iter()
        .skip(1)
        .map(|j| j.link_length.abs() + farthest(j))
        .sum::<f64>()
        + tool.length();
    let widest = spec
        .joints
        .iter()
        .flat_map(|j| [j.axis_radius, j.link_radius])
        .map(|r| r.map_or(DEFAULT_CYLINDER_RADIUS, f64::abs))
        .fold(DEFAULT_CYLINDER_RADIUS, f64::max);
    // The mount's origin (where joint 1's cylinder starts) is in it too.
    let radius = (chain + stroke).max(height.abs()) + widest;
    if !radius.is_finite() || !height.is_finite() {
        return Err(KinematicsError::NonFiniteParameter {
            joint: 1,
            parameter: "offset",
            value: radius,
        });
    }
    Ok(Reach {
        centre: mount.transform_point3(DVec3::new(0.0, 0.0, height)),
        radius,
        // Vehicle +z is down: the arm's up points down when its z has a positive vehicle z.
        hangs: mount.transform_vector3(DVec3::Z).z > 0.0,
    })
}

/// Vehicle ← manipulator for a mount; its quaternion is normalised first (kinematics.md §5).
pub fn mount_transform(mount: &Mount) -> Result<DAffine3, KinematicsError> {
    let [d, a, b, c] = mount.orientation;
    let quaternion = DQuat::from_xyzw(a, b, c, d);
    let length = quaternion.length();
    let position = DVec3::from_array(mount.position);
    if !(length.is_finite() && length > 0.0 && position.is_finite()) {
        return Err(KinematicsError::InvalidMount {
            position: mount.position,
            orientation: mount.orientation,
        });
    }
    Ok(DAffine3::from_rotation_translation(
        quaternion / length,
        position,
    ))
}

/// ^k T_{k+1} = Tx(a) · Rx(α) · Rz(θ) · Tz(S), in closed form (kinematics.md §2): two sin/cos
/// pairs instead of four matrix products.
fn link_transform(a: f64, alpha: f64, theta: f64, s: f64) -> DAffine3 {
    let (st, ct) = theta.sin_cos();
    let (sa, ca) = alpha.sin_cos();
    DAffine3 {
        matrix3: DMat3::from_cols(
            DVec3::new(ct, st * ca, st * sa),
            DVec3::new(-st, ct * ca, ct * sa),
            DVec3::new(0.0, -sa, ca),
        ),
        translation: DVec3::new(a, -sa * s, ca * s),
    }
}

/// Checks `spec` and `q`, then walks the chain base to tip, calling `visit(index, joint,
/// ^M T_j)` for each joint (index 0 is joint 1). Returns ^M `T_n`.
fn walk(
    spec: &ArmSpec,
    q: &[f64],
    mut visit: impl FnMut(usize, &Joint, DAffine3),
) -> Result<DAffine3, KinematicsError> {
    check(spec, q)?;
    let mut frame = DAffine3::IDENTITY;
    for (index, (joint, &position)) in spec.joints.iter().zip(q).enumerate() {
        let (theta, s) = match joint.kind {
            JointType::Revolute => (position, joint.offset),
            JointType::Prismatic => (joint.angle, position),
        };
        let (a, alpha) = if index == 0 {
            (0.0, 0.0)
        } else {
            (joint.link_length, joint.twist)
        };
        frame *= link_transform(a, alpha, theta, s);
        visit(index, joint, frame);
    }
    Ok(frame)
}

fn check(spec: &ArmSpec, q: &[f64]) -> Result<(), KinematicsError> {
    if spec.joints.is_empty() {
        return Err(KinematicsError::NoJoints);
    }
    if q.len() != spec.joints.len() {
        return Err(KinematicsError::JointCount {
            given: q.len(),
            expected: spec.joints.len(),
        });
    }
    for (index, (joint, &value)) in spec.joints.iter().zip(q).enumerate() {
        let number = index + 1;
        if !value.is_finite() {
            return Err(KinematicsError::NonFiniteJointPosition {
                joint: number,
                value,
            });
        }
        let constant = match joint.kind {
            JointType::Revolute => ("offset", joint.offset),
            JointType::Prismatic => ("angle", joint.angle),
        };
        let link = [("link length", joint.link_length), ("twist", joint.twist)];
        // Joint 1's link parameters are not used, so they cannot spoil the result.
        let used = if index == 0 { &link[..0] } else { &link[..] };
        for &(parameter, value) in used.iter().chain([&constant]) {
            if !value.is_finite() {
                return Err(KinematicsError::NonFiniteParameter {
                    joint: number,
                    parameter,
                    value,
                });
            }
        }
    }
    Ok(())
}

fn checked_tool_point(tool_point: [f64; 3]) -> Result<DVec3, KinematicsError> {
    let tool = DVec3::from_array(tool_point);
    if tool.is_finite() {
        Ok(tool)
    } else {
        Err(KinematicsError::NonFiniteToolPoint { tool_point })
    }
}

#[cfg(test)]
mod tests {
    use std::f64::consts::FRAC_PI_2;

    use super::*;

    fn product(a: f64, alpha: f64, theta: f64, s: f64) -> DAffine3 {
        DAffine3::from_translation(DVec3::new(a, 0.0, 0.0))
            * DAffine3::from_rotation_x(alpha)
            * DAffine3::from_rotation_z(theta)
            * DAffine3::from_translation(DVec3::new(0.0, 0.0, s))
    }

    #[test]
    fn closed_form_link_transform_equals_tx_rx_rz_tz_product() {
        for &(a, alpha, theta, s) in &[
            (0.0, 0.0, 0.0, 0.0),
            (0.4318, 0.0, -1.2, 0.15005),
            (-0.425, FRAC_PI_2, 0.5, 0.0),
            (0.0203, -FRAC_PI_2, 0.4, 0.4318),
            (1.3, 2.9, -20.0, -0.7),
        ] {
            let closed = link_transform(a, alpha, theta, s);
            let expected = product(a, alpha, theta, s);
            assert!(
                closed.abs_diff_eq(expected, 1e-12),
                "({a}, {alpha}, {theta}, {s}): {closed:?} != {expected:?}"
            );
        }
    }

    #[test]
    fn first_joint_ignores_link_parameters_the_wire_cannot_carry() {
        let mut joint = Joint::revolute(0.0, 0.0, 0.5);
        let plain = ArmSpec {
            mount: None,
            joints: vec![joint.clone()],
        };
        joint.link_length = 2.0;
        joint.twist = 1.0;
        let odd = ArmSpec {
            mount: None,
            joints: vec![joint],
        };
        let q = [0.7];
        assert_eq!(
            tool_point(&odd, &q, [0.1, 0.2, 0.3]),
            tool_point(&plain, &q, [0.1, 0.2, 0.3])
        );
    }

    /// The geometric Jacobian in closed form: a revolute joint turns about z of its frame
    /// through the frame's origin, a prismatic one slides along it.
    fn geometric_jacobian(spec: &ArmSpec, q: &[f64], tool: [f64; 3]) -> Vec<[f64; 6]> {
        let pose = forward(spec, q, tool).unwrap();
        let p = pose.tool_point_manipulator;
        pose.frames
            .iter()
            .zip(&spec.joints)
            .map(|(frame, joint)| {
                // Joint j turns or slides along the z of the frame before its Rz·Tz, which is
                // the z of its own frame; its origin lies on that axis.
                let (axis, origin) = (frame.matrix3.z_axis, frame.translation);
                match joint.kind {
                    JointType::Revolute => {
                        let v = axis.cross(p - origin);
                        [axis.x, axis.y, axis.z, v.x, v.y, v.z]
                    }
                    JointType::Prismatic => [0.0, 0.0, 0.0, axis.x, axis.y, axis.z],
                }
            })
            .collect()
    }

    fn rprr() -> ArmSpec {
        ArmSpec {
            mount: None,
            joints: vec![
                Joint::revolute(0.0, 0.0, 0.3),
                Joint::revolute(0.1, FRAC_PI_2, 0.0),
                Joint::prismatic(0.4, 0.0, 0.0, 0.2, 0.5),
                Joint::revolute(0.05, -FRAC_PI_2, 0.1),
            ],
        }
    }

    #[test]
    fn numerical_jacobian_matches_the_geometric_one() {
        let spec = rprr();
        let tool = [0.02, -0.03, 0.15];
        for q in [
            [0.0, 0.3, 0.2, 0.0],
            [1.2, -0.7, 0.35, 2.5],
            [-2.0, 1.4, 0.1, -1.0],
        ] {
            let numeric = jacobian(&spec, &q, tool).unwrap();
            let exact = geometric_jacobian(&spec, &q, tool);
            for (j, (n, e)) in numeric.iter().zip(&exact).enumerate() {
                for k in 0..6 {
                    assert!(
                        (n[k] - e[k]).abs() < 1e-7,
                        "q {q:?} joint {j} row {k}: {n:?} vs {e:?}"
                    );
                }
            }
        }
        assert!(matches!(
            jacobian(&spec, &[0.0; 3], tool),
            Err(KinematicsError::JointCount { .. })
        ));
    }

    #[test]
    fn damped_least_squares_follows_a_reachable_twist_and_skips_zero_columns() {
        let spec = rprr();
        let q = [0.4, 0.6, 0.3, 0.8];
        let tool = [0.0, 0.0, 0.1];
        let mut columns = jacobian(&spec, &q, tool).unwrap();
        // Four joints cannot follow every twist: ask for one they can (a combination of the
        // columns); with little damping it is followed.
        let wanted = twist(&columns, &[0.1, -0.2, 0.05, 0.3]);
        let qd = damped_least_squares(&columns, wanted, 1e-4);
        let got = twist(&columns, &qd);
        for k in 0..6 {
            assert!((got[k] - wanted[k]).abs() < 1e-6, "{got:?} vs {wanted:?}");
        }
        columns[2] = [0.0; 6];
        let qd = damped_least_squares(&columns, wanted, 1e-4);
        assert_eq!(qd[2], 0.0);
        assert_eq!(damped_least_squares(&columns, [0.0; 6], 0.02), vec![0.0; 4]);
    }

    #[test]
    fn zero_mount_quaternion_is_an_error() {
        let mount = Mount {
            position: [0.0; 3],
            orientation: [0.0; 4],
        };
        assert!(matches!(
            mount_transform(&mount),
            Err(KinematicsError::InvalidMount { .. })
        ));
    }

    #[test]
    fn end_effector_quaternion_has_non_negative_scalar_part() {
        // θ1 = 3 rad about z gives a quaternion whose natural form from the matrix may
        // have either sign; the reported one must have d >= 0 and still rotate correctly.
        let spec = ArmSpec {
            mount: None,
            joints: vec![Joint::revolute(0.0, 0.0, 0.0)],
        };
        for theta in [3.0, -3.0, 6.0, 9.0] {
            let (_, [d, a, b, c]) = end_effector_pose(&spec, &[theta], [0.0; 3]).unwrap();
            assert!(d >= 0.0, "θ = {theta}: d = {d}");
            let rotation = DQuat::from_xyzw(a, b, c, d);
            let expected = DQuat::from_rotation_z(theta);
            assert!(
                rotation.dot(expected).abs() > 1.0 - 1e-12,
                "θ = {theta}: {rotation:?}"
            );
        }
    }
}
