//! The arm's description in domain terms: what ReportManipulatorSpecifications says
//! (Crane & Duffy link parameters, limits, bounding radii, names) plus where it is mounted.
//! Converts to and from the wire `Repr`; everything else in the program uses this type.

use crate::jaus::JointKind;
use crate::jaus::manipulator::{
    FirstJointParameters, JointSpecification, Pose, PrismaticJoint1, PrismaticJointSpecification,
    ReportManipulatorSpecifications, RevoluteJoint1, RevoluteJointSpecification,
};

/// A rigid placement: position (m) and unit quaternion `[d, a, b, c]` (scalar first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mount {
    /// Origin of the manipulator frame in the vehicle frame (+x front, +y right, +z down), m.
    pub position: [f64; 3],
    /// Orientation of the manipulator frame in the vehicle frame, `[d, a, b, c]`.
    pub orientation: [f64; 4],
}

impl Mount {
    /// The identity placement.
    pub const IDENTITY: Mount = Mount {
        position: [0.0; 3],
        orientation: [1.0, 0.0, 0.0, 0.0],
    };
}

/// One joint and the link before it, in Crane & Duffy terms (kinematics.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Joint name, if the specification gives one.
    pub name: Option<String>,
    /// Revolute or prismatic.
    pub kind: JointKind,
    /// Link length a(k−1,k) from the previous joint axis, m (0 for joint 1).
    pub link_length: f64,
    /// Twist angle α(k−1,k) of that link, rad (0 for joint 1).
    pub twist: f64,
    /// Revolute only: the constant joint offset S(k,k) (joint 1: Joint1Offset), m.
    pub offset: f64,
    /// Prismatic only: the constant joint angle θk (joint 1: Joint1Angle), rad.
    pub angle: f64,
    /// Lower limit (rad or m); `None` for a continuous revolute joint.
    pub min: Option<f64>,
    /// Upper limit (rad or m); `None` for a continuous revolute joint.
    pub max: Option<f64>,
    /// Maximum speed (rad/s or m/s).
    pub max_speed: Option<f64>,
    /// Maximum effort: N·m for revolute, N for prismatic.
    pub max_effort: Option<f64>,
    /// Radius of the bounding cylinder along the joint axis (offset / joint cylinder), m.
    pub axis_radius: Option<f64>,
    /// Radius of the bounding cylinder along the link from the previous joint, m (joints 2..n).
    pub link_radius: Option<f64>,
}

impl Joint {
    /// A revolute joint with no limits, radii or name.
    pub fn revolute(link_length: f64, twist: f64, offset: f64) -> Self {
        Self {
            name: None,
            kind: JointKind::Revolute,
            link_length,
            twist,
            offset,
            angle: 0.0,
            min: None,
            max: None,
            max_speed: None,
            max_effort: None,
            axis_radius: None,
            link_radius: None,
        }
    }

    /// A prismatic joint travelling `min..=max` m.
    pub fn prismatic(link_length: f64, twist: f64, angle: f64, min: f64, max: f64) -> Self {
        Self {
            kind: JointKind::Prismatic,
            angle,
            offset: 0.0,
            min: Some(min),
            max: Some(max),
            ..Self::revolute(link_length, twist, 0.0)
        }
    }

    /// Whether the joint slides (positions in m) rather than turns (rad).
    pub fn is_prismatic(&self) -> bool {
        self.kind == JointKind::Prismatic
    }

    /// Whether the joint turns without limits.
    pub fn is_continuous(&self) -> bool {
        self.kind == JointKind::Revolute && (self.min.is_none() || self.max.is_none())
    }

    /// `v` clamped into the joint's limits (unchanged for a continuous joint).
    pub fn clamp(&self, v: f64) -> f64 {
        let v = self.min.map_or(v, |m| v.max(m));
        self.max.map_or(v, |m| v.min(m))
    }
}

/// A manipulator's description: mount and joints, base to tip.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmSpec {
    /// Placement in the vehicle frame; `None` when the specification leaves it out (drawn at
    /// the identity, kinematics.md §3 UNCONFIRMED).
    pub mount: Option<Mount>,
    /// Joints, joint 1 first. Never empty.
    pub joints: Vec<Joint>,
}

impl ArmSpec {
    /// Number of joints.
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// Joint kinds, joint 1 first.
    pub fn joint_kinds(&self) -> Vec<JointKind> {
        self.joints.iter().map(|j| j.kind).collect()
    }

    /// The mount, or the identity when the specification gives none.
    pub fn mount_or_identity(&self) -> Mount {
        self.mount.unwrap_or(Mount::IDENTITY)
    }

    /// From the wire specification. Joint names beyond the joint count are ignored; missing
    /// ones stay `None`.
    pub fn from_report(r: &ReportManipulatorSpecifications) -> Self {
        let mount = r.manipulator_coordinate_system.map(|p| Mount {
            position: [p.x, p.y, p.z],
            orientation: [p.d, p.a, p.b, p.c],
        });
        let mut joints = Vec::with_capacity(r.joint_count());
        joints.push(match &r.first_joint_parameters {
            FirstJointParameters::Revolute(j) => Joint {
                min: j.joint1_min_value,
                max: j.joint1_max_value,
                max_speed: j.joint1_max_speed,
                max_effort: j.joint1_max_torque,
                axis_radius: j.offset_bounding_cylinder_radius,
                ..Joint::revolute(0.0, 0.0, j.joint1_offset)
            },
            FirstJointParameters::Prismatic(j) => Joint {
                max_speed: j.joint1_max_speed,
                max_effort: j.joint1_max_force,
                axis_radius: j.joint_bounding_cylinder_radius,
                ..Joint::prismatic(
                    0.0,
                    0.0,
                    j.joint1_angle,
                    j.joint1_min_value,
                    j.joint1_max_value,
                )
            },
        });
        for s in &r.joint_specifications {
            joints.push(match s {
                JointSpecification::Revolute(j) => Joint {
                    min: j.min_value,
                    max: j.max_value,
                    max_speed: j.max_speed,
                    max_effort: j.max_torque,
                    axis_radius: j.offset_bounding_cylinder_radius,
                    link_radius: j.link_length_bounding_cylinder_radius,
                    ..Joint::revolute(j.link_length, j.twist_angle, j.joint_offset)
                },
                JointSpecification::Prismatic(j) => Joint {
                    max_speed: j.max_speed,
                    max_effort: j.max_force,
                    axis_radius: j.joint_bounding_cylinder_radius,
                    link_radius: j.link_length_bounding_cylinder_radius,
                    ..Joint::prismatic(
                        j.link_length,
                        j.twist_angle,
                        j.joint_angle,
                        j.min_value,
                        j.max_value,
                    )
                },
            });
        }
        if let Some(names) = &r.joint_names {
            for (j, n) in joints.iter_mut().zip(names) {
                j.name = Some(n.clone());
            }
        }
        Self { mount, joints }
    }

    /// To the wire specification. Prismatic limits are mandatory on the wire: a missing one
    /// is sent as 0 (arm files refuse that case before it gets here). Names are sent when
    /// every joint has one.
    pub fn to_report(&self) -> ReportManipulatorSpecifications {
        let manipulator_coordinate_system = self.mount.map(|m| Pose {
            x: m.position[0],
            y: m.position[1],
            z: m.position[2],
            d: m.orientation[0],
            a: m.orientation[1],
            b: m.orientation[2],
            c: m.orientation[3],
        });
        let first = &self.joints[0];
        let first_joint_parameters = match first.kind {
            JointKind::Revolute => FirstJointParameters::Revolute(RevoluteJoint1 {
                joint1_offset: first.offset,
                joint1_min_value: first.min,
                joint1_max_value: first.max,
                joint1_max_speed: first.max_speed,
                joint1_max_torque: first.max_effort,
                offset_bounding_cylinder_radius: first.axis_radius,
            }),
            JointKind::Prismatic => FirstJointParameters::Prismatic(PrismaticJoint1 {
                joint1_angle: first.angle,
                joint1_min_value: first.min.unwrap_or(0.0),
                joint1_max_value: first.max.unwrap_or(0.0),
                joint1_max_speed: first.max_speed,
                joint1_max_force: first.max_effort,
                joint_bounding_cylinder_radius: first.axis_radius,
            }),
        };
        let joint_specifications = self.joints[1..]
            .iter()
            .map(|j| match j.kind {
                JointKind::Revolute => JointSpecification::Revolute(RevoluteJointSpecification {
                    link_length: j.link_length,
                    twist_angle: j.twist,
                    joint_offset: j.offset,
                    min_value: j.min,
                    max_value: j.max,
                    max_speed: j.max_speed,
                    max_torque: j.max_effort,
                    offset_bounding_cylinder_radius: j.axis_radius,
                    link_length_bounding_cylinder_radius: j.link_radius,
                }),
                JointKind::Prismatic => {
                    JointSpecification::Prismatic(PrismaticJointSpecification {
                        link_length: j.link_length,
                        twist_angle: j.twist,
                        joint_angle: j.angle,
                        min_value: j.min.unwrap_or(0.0),
                        max_value: j.max.unwrap_or(0.0),
                        max_speed: j.max_speed,
                        max_force: j.max_effort,
                        joint_bounding_cylinder_radius: j.axis_radius,
                        link_length_bounding_cylinder_radius: j.link_radius,
                    })
                }
            })
            .collect();
        let joint_names = self
            .joints
            .iter()
            .map(|j| j.name.clone())
            .collect::<Option<Vec<String>>>();
        ReportManipulatorSpecifications {
            manipulator_coordinate_system,
            first_joint_parameters,
            joint_specifications,
            joint_names,
        }
    }
}
