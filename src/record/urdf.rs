//! The arm's specification as URDF, so RViz, MoveIt, Foxglove and any URDF tool get the arm
//! that the JAUS component described (kinematics.md §5 and §7).
//!
//! The tree, root first:
//!
//! ```text
//! vehicle ──(fixed "vehicle_to_manipulator" = the mount; identity without one)──▶ manipulator
//!   ──(joint 1)──▶ link_1 ──(joint 2)──▶ link_2 … ──(joint n)──▶ link_n
//!   ──(fixed, identity)──▶ end_effector ──(fixed, the tool offset, when known)──▶ tool_point
//! ```
//!
//! `link_j` is Crane & Duffy frame j: origin on joint axis **S**j at the foot of **a**j,j+1,
//! z along **S**j. Each URDF joint is the C&D link transform with the joint motion split off
//! (Rz and Tz commute, so the motion can be the last factor, as URDF wants it):
//!
//! - revolute joint 1: Rz(q)·Tz(S11) → origin (0, 0, S11), axis z;
//! - revolute joint k+1: Tx(a)·Rx(α)·Rz(q)·Tz(S) → origin Tx(a)·Rx(α)·Tz(S), axis z;
//! - prismatic joint 1: Rz(θ)·Tz(q) → origin Rz(θ), axis z;
//! - prismatic joint k+1: Tx(a)·Rx(α)·Rz(θ)·Tz(q) → origin Tx(a)·Rx(α)·Rz(θ), axis z.
//!
//! The vehicle frame is JAUS's: +x front, +y right, +z down.
//!
//! A vehicle with several arms ([`write_vehicle_urdf`]): one `vehicle` root, each arm's tree
//! as above attached to it at the arm's mount, every name of an arm prefixed with its JAUS
//! ID and a slash (`126.1.10/manipulator`, `126.1.10/link_1`, the joint
//! `126.1.10/vehicle_to_manipulator`, `126.1.10/<joint name>`) — the frame names of the
//! Foxglove channels ([`crate::record::foxglove`]).
//!
//! Joint names come from the specification (else `joint_1`…`joint_n`), made unique. A
//! revolute joint without both limits is `continuous`. Limits are SI (rad, m, rad/s, m/s,
//! N·m, N); where the specification gives no maximum speed or effort, `velocity="0"` or
//! `effort="0"` is written (URDF requires the attribute) with a comment saying so.
//!
//! Geometry: the bounding cylinders of kinematics.md §7, each on the link that carries it —
//! the link-length cylinder of joint k+1 along x of `link_k` from its origin to (a, 0, 0),
//! a revolute joint's offset cylinder along z of its own link from (0, 0, −S) to its origin.
//! A prismatic joint's cylinder changes length with the joint, so it is written at its full
//! stroke, on the parent link (fixed relative to the cylinder's foot): along the joint axis
//! from the foot over every extension between `min(0, lower)` and `max(0, upper)`. Zero-length
//! cylinders become spheres of their radius. Cylinders with a radius from the specification
//! are collision and visual geometry; those without one are visual only, drawn with the
//! default radius in another colour (as the 3D view draws them banded), never collision.

use std::fmt::Write as _;

use glam::{DAffine3, DMat3, DQuat, DVec3};

use crate::model::arm::{ArmSpec, Joint, JointType};
use crate::model::kinematics::{self, KinematicsError};
use crate::model::update::ComponentId;
use crate::record::xml::xml_escape as escape;

/// Why no URDF could be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UrdfError {
    /// The specification cannot place the arm (no joints, a non-finite parameter, a bad mount).
    #[error("{0}")]
    Kinematics(#[from] KinematicsError),
    /// A limit, speed, effort or radius is NaN or infinite.
    #[error(
        "joint {joint} {field} is {value}; the specification must give finite values (SI units)"
    )]
    NonFinite {
        /// The joint, 1-based.
        joint: usize,
        /// Which field.
        field: &'static str,
        /// The value.
        value: f64,
    },
    /// One arm of a vehicle cannot be written ([`write_vehicle_urdf`]).
    #[error("arm {arm}: {error}")]
    Arm {
        /// The arm.
        arm: ComponentId,
        /// Why.
        error: Box<UrdfError>,
    },
}

/// What to write besides the specification.
#[derive(Debug, Clone, PartialEq)]
pub struct UrdfOptions {
    /// The robot's name (any text: it is escaped).
    pub name: String,
    /// The tool point in the end-effector frame, m, when known: a `tool_point` link there.
    pub tool_point: Option<[f64; 3]>,
    /// Radius for cylinders the specification gives none for, m (visual only).
    pub default_radius: f64,
}

/// Fixed joint names (joint names must be unique across the file).
const FIXED_JOINTS: [&str; 3] = [
    "vehicle_to_manipulator",
    "end_effector_fixed",
    "tool_point_fixed",
];

/// Colour (RGBA) of cylinders with a reported radius.
const REPORTED_RGBA: &str = "0.3 0.6 1 0.35";
/// Colour of cylinders drawn with the default radius.
const DEFAULT_RGBA: &str = "0.8 0.55 1 0.25";

/// Writes `spec` as a URDF document: one arm, its names without a prefix.
pub fn write_urdf(spec: &ArmSpec, options: &UrdfOptions) -> Result<String, UrdfError> {
    check(spec, options.tool_point, options.default_radius)?;
    let mut out = String::with_capacity(4096 + 1500 * spec.joints.len());
    head(
        &mut out,
        &options.name,
        "link_j is C&D frame j (z along joint axis j)",
    );
    write_arm(
        &mut out,
        "",
        spec,
        options.tool_point,
        options.default_radius,
    )?;
    out.push_str("</robot>\n");
    Ok(out)
}

/// One arm of a vehicle ([`write_vehicle_urdf`]).
#[derive(Debug, Clone, Copy)]
pub struct UrdfArm<'a> {
    /// The arm's JAUS ID: the prefix of its names (`126.1.10/`).
    pub id: ComponentId,
    /// Its specification (the mount places it on the vehicle).
    pub spec: &'a ArmSpec,
    /// Its tool point in the end-effector frame, m, when known.
    pub tool_point: Option<[f64; 3]>,
}

/// Writes a vehicle with every arm in `arms` as one URDF document: one `vehicle` root link,
/// each arm attached to it at its mount, every link and joint name of an arm prefixed with its
/// JAUS ID and a slash (`126.1.10/link_1`, `126.1.10/vehicle_to_manipulator`, the joints
/// `126.1.10/<name>`): the frame names of the Foxglove channels
/// ([`crate::record::foxglove`]), so the URDF follows a recording's transforms. A failure
/// names the arm.
pub fn write_vehicle_urdf(
    arms: &[UrdfArm<'_>],
    name: &str,
    default_radius: f64,
) -> Result<String, UrdfError> {
    let in_arm = |id: ComponentId, e: UrdfError| UrdfError::Arm {
        arm: id,
        error: Box::new(e),
    };
    for arm in arms {
        check(arm.spec, arm.tool_point, default_radius).map_err(|e| in_arm(arm.id, e))?;
    }
    let joints: usize = arms.iter().map(|a| a.spec.joints.len()).sum();
    let mut out = String::with_capacity(4096 * arms.len().max(1) + 1500 * joints);
    head(
        &mut out,
        name,
        "S.N.C/link_j is C&D frame j of arm S.N.C (its JAUS ID), z along its joint axis j",
    );
    for arm in arms {
        let prefix = format!("{}/", arm.id);
        write_arm(&mut out, &prefix, arm.spec, arm.tool_point, default_radius)
            .map_err(|e| in_arm(arm.id, e))?;
    }
    out.push_str("</robot>\n");
    Ok(out)
}

/// The XML declaration, the comment saying what the file is, `<robot>`, the materials and the
/// `vehicle` root link.
fn head(out: &mut String, name: &str, frames: &str) {
    out.push_str("<?xml version=\"1.0\"?>\n");
    let _ = writeln!(
        out,
        "<!-- Written by jaus-ocu from a JAUS ReportManipulatorSpecifications (Crane & Duffy \
         parameters). {frames}; the vehicle frame is +x front, +y right, +z down. SI \
         units. -->"
    );
    let _ = writeln!(out, "<robot name=\"{}\">", escape(name));
    let _ = writeln!(
        out,
        "  <material name=\"bounding_cylinder\"><color rgba=\"{REPORTED_RGBA}\"/></material>"
    );
    let _ = writeln!(
        out,
        "  <material name=\"bounding_cylinder_default_radius\"><color rgba=\"{DEFAULT_RGBA}\"/></material>"
    );
    out.push_str("  <link name=\"vehicle\"/>\n");
}

/// One arm's links and joints, every name prefixed with `prefix`, attached to `vehicle` at
/// its mount.
fn write_arm(
    out: &mut String,
    prefix: &str,
    spec: &ArmSpec,
    tool_point: Option<[f64; 3]>,
    default_radius: f64,
) -> Result<(), UrdfError> {
    let names = joint_names(spec);
    let n = spec.joints.len();
    write_links(out, prefix, &geometry(spec), tool_point, default_radius);

    // The mount.
    let mount = match spec.mount {
        Some(m) => kinematics::mount_transform(&m)?,
        None => DAffine3::IDENTITY,
    };
    if spec.mount.is_none() {
        out.push_str(
            "  <!-- The specification gives no mount: the manipulator frame is the vehicle \
             frame. -->\n",
        );
    }
    fixed_joint(
        out,
        &format!("{prefix}{}", FIXED_JOINTS[0]),
        "vehicle",
        &format!("{prefix}manipulator"),
        &mount,
    );

    // The JAUS joints.
    for (i, joint) in spec.joints.iter().enumerate() {
        write_joint(out, prefix, i, joint, &format!("{prefix}{}", names[i]));
    }
    fixed_joint(
        out,
        &format!("{prefix}{}", FIXED_JOINTS[1]),
        &format!("{prefix}link_{n}"),
        &format!("{prefix}end_effector"),
        &DAffine3::IDENTITY,
    );
    if let Some(tool) = tool_point {
        fixed_joint(
            out,
            &format!("{prefix}{}", FIXED_JOINTS[2]),
            &format!("{prefix}end_effector"),
            &format!("{prefix}tool_point"),
            &DAffine3::from_translation(DVec3::from_array(tool)),
        );
    }
    Ok(())
}

/// The bounding cylinders per link, each on the link that carries it: index 0 = manipulator,
/// j = `link_j`.
fn geometry(spec: &ArmSpec) -> Vec<Vec<Shape>> {
    let mut geometry: Vec<Vec<Shape>> = vec![Vec::new(); spec.joints.len() + 1];
    for (i, joint) in spec.joints.iter().enumerate() {
        let (a, alpha) = if i == 0 {
            (0.0, 0.0)
        } else {
            (joint.link_length, joint.twist)
        };
        if i > 0 {
            geometry[i].push(Shape {
                name: format!("link_length_{}", i + 1),
                from: DVec3::ZERO,
                to: DVec3::new(a, 0.0, 0.0),
                radius: joint.link_radius,
            });
        }
        match joint.kind {
            JointType::Revolute => geometry[i + 1].push(Shape {
                name: format!("offset_{}", i + 1),
                from: DVec3::new(0.0, 0.0, -joint.offset),
                to: DVec3::ZERO,
                radius: joint.axis_radius,
            }),
            JointType::Prismatic => {
                let origin = prismatic_origin(a, alpha, joint.angle);
                let foot = origin.translation;
                let axis = origin.matrix3.z_axis;
                let low = joint.min.unwrap_or(0.0).min(0.0);
                let high = joint.max.unwrap_or(0.0).max(0.0);
                geometry[i].push(Shape {
                    name: format!("joint_{}_full_stroke", i + 1),
                    from: foot + axis * low,
                    to: foot + axis * high,
                    radius: joint.axis_radius,
                });
            }
        }
    }
    geometry
}

/// One arm's links, base first, with their geometry (`geometry` from [`geometry`]), names
/// prefixed with `prefix`.
fn write_links(
    out: &mut String,
    prefix: &str,
    geometry: &[Vec<Shape>],
    tool_point: Option<[f64; 3]>,
    default_radius: f64,
) {
    for (index, shapes) in geometry.iter().enumerate() {
        let name = if index == 0 {
            format!("{prefix}manipulator")
        } else {
            format!("{prefix}link_{index}")
        };
        if shapes.is_empty() {
            let _ = writeln!(out, "  <link name=\"{}\"/>", escape(&name));
            continue;
        }
        let _ = writeln!(out, "  <link name=\"{}\">", escape(&name));
        for shape in shapes {
            shape.write(out, default_radius);
        }
        out.push_str("  </link>\n");
    }
    let _ = writeln!(out, "  <link name=\"{}end_effector\"/>", escape(prefix));
    if tool_point.is_some() {
        let _ = writeln!(out, "  <link name=\"{}tool_point\"/>", escape(prefix));
    }
}

/// JAUS joint `i` (0-based) as a URDF joint named `name`, with comments where the
/// specification leaves something unknown.
fn write_joint(out: &mut String, prefix: &str, i: usize, joint: &Joint, name: &str) {
    let (a, alpha) = if i == 0 {
        (0.0, 0.0)
    } else {
        (joint.link_length, joint.twist)
    };
    let parent = if i == 0 {
        format!("{prefix}manipulator")
    } else {
        format!("{prefix}link_{i}")
    };
    let child = format!("{prefix}link_{}", i + 1);
    let (kind, origin) = match joint.kind {
        JointType::Revolute => (
            if joint.is_continuous() {
                "continuous"
            } else {
                "revolute"
            },
            revolute_origin(a, alpha, joint.offset),
        ),
        JointType::Prismatic => ("prismatic", prismatic_origin(a, alpha, joint.angle)),
    };
    if joint.kind == JointType::Revolute
        && joint.is_continuous()
        && (joint.min.is_some() || joint.max.is_some())
    {
        out.push_str(
            "  <!-- Only one limit given: written as continuous, as the OCU treats it. -->\n",
        );
    }
    if joint.max_speed.is_none() {
        out.push_str(
            "  <!-- The specification gives no maximum speed: velocity=\"0\" means \
             unknown. -->\n",
        );
    }
    if joint.max_effort.is_none() {
        out.push_str(
            "  <!-- The specification gives no maximum effort: effort=\"0\" means \
             unknown. -->\n",
        );
    }
    let _ = writeln!(out, "  <joint name=\"{}\" type=\"{kind}\">", escape(name));
    let _ = writeln!(out, "    <parent link=\"{}\"/>", escape(&parent));
    let _ = writeln!(out, "    <child link=\"{}\"/>", escape(&child));
    write_origin(out, "    ", &origin);
    out.push_str("    <axis xyz=\"0 0 1\"/>\n");
    let velocity = num(joint.max_speed.unwrap_or(0.0));
    let effort = num(joint.max_effort.unwrap_or(0.0));
    match (kind, joint.min, joint.max) {
        ("continuous", _, _) | (_, None, _) | (_, _, None) => {
            let _ = writeln!(
                out,
                "    <limit effort=\"{effort}\" velocity=\"{velocity}\"/>"
            );
        }
        (_, Some(lower), Some(upper)) => {
            let _ = writeln!(
                out,
                "    <limit lower=\"{}\" upper=\"{}\" effort=\"{effort}\" velocity=\"{velocity}\"/>",
                num(lower),
                num(upper)
            );
        }
    }
    out.push_str("  </joint>\n");
}

/// A bounding cylinder on a link, its axis from `from` to `to` in the link's frame.
#[derive(Debug, Clone)]
struct Shape {
    name: String,
    from: DVec3,
    to: DVec3,
    radius: Option<f64>,
}

impl Shape {
    fn write(&self, out: &mut String, default_radius: f64) {
        let (radius, material, elements): (f64, &str, &[&str]) = match self.radius {
            Some(r) => (r.abs(), "bounding_cylinder", &["visual", "collision"]),
            None => {
                out.push_str(
                    "    <!-- No radius in the specification: drawn with the default radius, \
                     not collision geometry. -->\n",
                );
                (
                    default_radius.abs(),
                    "bounding_cylinder_default_radius",
                    &["visual"],
                )
            }
        };
        let length = self.from.distance(self.to);
        let (origin, geometry) = if length < 1e-9 {
            (
                DAffine3::from_translation(self.from),
                format!("<sphere radius=\"{}\"/>", num(radius)),
            )
        } else {
            let direction = (self.to - self.from) / length;
            (
                DAffine3::from_rotation_translation(
                    DQuat::from_rotation_arc(DVec3::Z, direction),
                    (self.from + self.to) * 0.5,
                ),
                format!(
                    "<cylinder radius=\"{}\" length=\"{}\"/>",
                    num(radius),
                    num(length)
                ),
            )
        };
        for element in elements {
            let _ = writeln!(out, "    <{element} name=\"{}\">", self.name);
            write_origin(out, "      ", &origin);
            let _ = writeln!(out, "      <geometry>{geometry}</geometry>");
            if *element == "visual" {
                let _ = writeln!(out, "      <material name=\"{material}\"/>");
            }
            let _ = writeln!(out, "    </{element}>");
        }
    }
}

/// Tx(a)·Rx(α)·Tz(S): a revolute joint's origin.
fn revolute_origin(a: f64, alpha: f64, s: f64) -> DAffine3 {
    DAffine3::from_translation(DVec3::new(a, 0.0, 0.0))
        * DAffine3::from_rotation_x(alpha)
        * DAffine3::from_translation(DVec3::new(0.0, 0.0, s))
}

/// Tx(a)·Rx(α)·Rz(θ): a prismatic joint's origin.
fn prismatic_origin(a: f64, alpha: f64, theta: f64) -> DAffine3 {
    DAffine3::from_translation(DVec3::new(a, 0.0, 0.0))
        * DAffine3::from_rotation_x(alpha)
        * DAffine3::from_rotation_z(theta)
}

fn fixed_joint(out: &mut String, name: &str, parent: &str, child: &str, origin: &DAffine3) {
    let _ = writeln!(out, "  <joint name=\"{}\" type=\"fixed\">", escape(name));
    let _ = writeln!(out, "    <parent link=\"{}\"/>", escape(parent));
    let _ = writeln!(out, "    <child link=\"{}\"/>", escape(child));
    write_origin(out, "    ", origin);
    out.push_str("  </joint>\n");
}

fn write_origin(out: &mut String, indent: &str, t: &DAffine3) {
    let [x, y, z] = t.translation.to_array();
    let [roll, pitch, yaw] = rpy(&t.matrix3);
    let _ = writeln!(
        out,
        "{indent}<origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>",
        num(x),
        num(y),
        num(z),
        num(roll),
        num(pitch),
        num(yaw)
    );
}

/// URDF's fixed-axis roll, pitch, yaw of a rotation matrix: R = Rz(yaw)·Ry(pitch)·Rx(roll).
/// Pitch comes from atan2, not asin: near ±90° (every cylinder along x) asin of a cosine
/// that rounding put a hair below 1 is off by 1e-8 rad. At ±90° itself (gimbal lock) roll
/// is 0 and yaw takes the whole turn about z.
pub fn rpy(m: &DMat3) -> [f64; 3] {
    // Row i, column j; glam stores columns.
    let at = |i: usize, j: usize| m.col(j)[i];
    let cos_pitch = at(0, 0).hypot(at(1, 0));
    let pitch = (-at(2, 0)).atan2(cos_pitch);
    if cos_pitch > 1e-10 {
        [at(2, 1).atan2(at(2, 2)), pitch, at(1, 0).atan2(at(0, 0))]
    } else {
        // Only yaw − roll (pitch +90°) or yaw + roll (−90°) is defined.
        [0.0, pitch, (-at(0, 1)).atan2(at(1, 1))]
    }
}

/// Joint names from the specification (else `joint_k`), unique and distinct from the fixed
/// joints; a repeated name gets `_2`, `_3`, ….
fn joint_names(spec: &ArmSpec) -> Vec<String> {
    let mut used: Vec<String> = FIXED_JOINTS
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    let mut names = Vec::with_capacity(spec.joints.len());
    for (i, joint) in spec.joints.iter().enumerate() {
        let base = match joint.name.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => format!("joint_{}", i + 1),
        };
        let mut name = base.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        used.push(name.clone());
        names.push(name);
    }
    names
}

fn check(
    spec: &ArmSpec,
    tool_point: Option<[f64; 3]>,
    default_radius: f64,
) -> Result<(), UrdfError> {
    // Forward kinematics checks the link parameters, the mount and the tool point.
    let q = vec![0.0; spec.joints.len()];
    kinematics::forward(spec, &q, tool_point.unwrap_or([0.0; 3]))?;
    for (i, joint) in spec.joints.iter().enumerate() {
        let fields = [
            ("min", joint.min),
            ("max", joint.max),
            ("max_speed", joint.max_speed),
            ("max_effort", joint.max_effort),
            ("axis_radius", joint.axis_radius),
            ("link_radius", joint.link_radius),
        ];
        for (field, value) in fields {
            if let Some(value) = value.filter(|v| !v.is_finite()) {
                return Err(UrdfError::NonFinite {
                    joint: i + 1,
                    field,
                    value,
                });
            }
        }
    }
    if !default_radius.is_finite() {
        return Err(UrdfError::NonFinite {
            joint: 0,
            field: "default radius",
            value: default_radius,
        });
    }
    Ok(())
}

/// A number in its shortest round-trip form; rounding noise below 1e-15 written as 0.
fn num(v: f64) -> String {
    if v.abs() < 1e-15 {
        "0".to_owned()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use std::f64::consts::{FRAC_PI_2, PI};

    use super::*;
    use crate::model::arm::Joint;

    fn from_rpy([roll, pitch, yaw]: [f64; 3]) -> DMat3 {
        DMat3::from_rotation_z(yaw) * DMat3::from_rotation_y(pitch) * DMat3::from_rotation_x(roll)
    }

    #[test]
    fn rpy_reproduces_the_rotation_including_gimbal_lock() {
        let cases = [
            DMat3::IDENTITY,
            DMat3::from_rotation_x(FRAC_PI_2) * DMat3::from_rotation_z(-FRAC_PI_2),
            DMat3::from_rotation_x(-1.2) * DMat3::from_rotation_z(2.5),
            DMat3::from_rotation_y(FRAC_PI_2),
            DMat3::from_rotation_y(-FRAC_PI_2) * DMat3::from_rotation_x(0.3),
            DMat3::from_rotation_x(PI),
            DMat3::from_quat(DQuat::from_xyzw(0.3, -0.5, 0.2, 0.7).normalize()),
        ];
        for m in cases {
            let back = from_rpy(rpy(&m));
            assert!(
                back.abs_diff_eq(m, 1e-12),
                "{m:?} -> {:?} -> {back:?}",
                rpy(&m)
            );
        }
    }

    #[test]
    fn names_are_unique_escaped_and_numbered_when_missing() {
        let named = |n: &str| Joint {
            name: Some(n.into()),
            ..Joint::revolute(0.1, 0.0, 0.0)
        };
        let spec = ArmSpec {
            mount: None,
            joints: vec![
                named("a<b>&\"c\""),
                named("a<b>&\"c\""),
                Joint::revolute(0.1, 0.0, 0.0),
                named("end_effector_fixed"),
            ],
        };
        assert_eq!(
            joint_names(&spec),
            [
                "a<b>&\"c\"",
                "a<b>&\"c\"_2",
                "joint_3",
                "end_effector_fixed_2"
            ]
        );
        let urdf = write_urdf(
            &spec,
            &UrdfOptions {
                name: "arm & co".into(),
                tool_point: None,
                default_radius: 0.03,
            },
        )
        .unwrap();
        assert!(urdf.contains("<robot name=\"arm &amp; co\">"));
        assert!(urdf.contains("name=\"a&lt;b&gt;&amp;&quot;c&quot;_2\""));
    }

    #[test]
    fn a_non_finite_limit_is_refused_with_the_joint_named() {
        let mut joint = Joint::revolute(0.0, 0.0, 0.1);
        joint.max_speed = Some(f64::NAN);
        let spec = ArmSpec {
            mount: None,
            joints: vec![joint],
        };
        let options = UrdfOptions {
            name: "x".into(),
            tool_point: None,
            default_radius: 0.03,
        };
        let e = write_urdf(&spec, &options).unwrap_err();
        assert!(e.to_string().contains("joint 1 max_speed"), "{e}");
    }
}
