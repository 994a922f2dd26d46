//! Manipulator service set v2.0 (AS6057A) messages (wire reference §6).
//!
//! Over 800 lines on purpose: one file per message set, like the specification's tables.

use serde::Serialize;

use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::wire::{Body, Dialect, JointKind, Reader, Scale, Writer, scales};

/// A joint value from a variable field (§3.5): a type-and-units code, then a u32 scaled by that
/// code. The unit follows the kind: rad, rad/s, N·m for revolute; m, m/s, N for prismatic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JointValue {
    /// Which unit the value is in.
    pub joint_type: JointKind,
    /// The value in SI units.
    pub value: f64,
}

impl JointValue {
    /// A revolute value (rad, rad/s or N·m).
    pub const fn revolute(value: f64) -> Self {
        Self {
            joint_type: JointKind::Revolute,
            value,
        }
    }

    /// A prismatic value (m, m/s or N).
    pub const fn prismatic(value: f64) -> Self {
        Self {
            joint_type: JointKind::Prismatic,
            value,
        }
    }
}

/// The two scales of one variable-field family.
#[derive(Debug, Clone, Copy)]
pub struct VariableFamily {
    /// Scale for the rotary unit.
    pub revolute: Scale,
    /// Scale for the linear unit.
    pub prismatic: Scale,
}

impl VariableFamily {
    /// The scale for `kind`.
    pub fn scale(&self, kind: JointKind) -> Scale {
        match kind {
            JointKind::Revolute => self.revolute,
            JointKind::Prismatic => self.prismatic,
        }
    }
}

/// `JointPosition`: rad ±8π or m ±10.
pub const POSITION: VariableFamily = VariableFamily {
    revolute: scales::JOINT_POSITION_RAD,
    prismatic: scales::JOINT_POSITION_M,
};
/// `JointVelocity`: rad/s ±10π or m/s ±5.
pub const VELOCITY: VariableFamily = VariableFamily {
    revolute: scales::JOINT_VELOCITY_RAD,
    prismatic: scales::JOINT_VELOCITY_M,
};
/// `JointForceTorque`: N·m ±1000 or N ±500.
pub const FORCE_TORQUE: VariableFamily = VariableFamily {
    revolute: scales::JOINT_TORQUE,
    prismatic: scales::JOINT_FORCE,
};

/// Reads a u8-counted list of variable fields.
///
/// Dialects (§9 C1, UNCONFIRMED which one the SAE tables print): SAE JSIDL writes code 1 for the
/// rotary unit and 2 for the linear one; OpenJAUS writes 0 and 1. Codes 0 and 2 are unambiguous.
/// Code 1 is resolved, in order, by the other codes in the same list (a 0 anywhere means
/// OpenJAUS, a 2 means JSIDL), then by the joint type from the specification in the decode
/// context, and last by the JSIDL reading (rotary).
pub fn parse_joint_values(
    r: &mut Reader<'_>,
    family: VariableFamily,
    list: &'static str,
    field: &'static str,
) -> Result<Vec<JointValue>, DecodeError> {
    let n = r.count_u8(5, list)?;
    let codes = r.peek(n * 5).unwrap_or(&[]);
    let has0 = codes.iter().step_by(5).any(|&c| c == 0);
    let has2 = codes.iter().step_by(5).any(|&c| c == 2);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let at = r.offset();
        let code = r.u8(field)?;
        let kind = match code {
            0 => JointKind::Revolute,
            2 => JointKind::Prismatic,
            1 => match (has0, has2) {
                (true, false) => JointKind::Prismatic,
                (false, true) => JointKind::Revolute,
                _ => r.ctx().joint_kind(i).unwrap_or(JointKind::Revolute),
            },
            other => {
                return Err(DecodeError::new(
                    field,
                    at,
                    DecodeErrorKind::BadUnitCode(other),
                ));
            }
        };
        let value = r.scaled(family.scale(kind), field)?;
        out.push(JointValue {
            joint_type: kind,
            value,
        });
    }
    Ok(out)
}

/// The type-and-units code `dialect` writes for `kind`.
pub fn unit_code(kind: JointKind, dialect: Dialect) -> u8 {
    // Each dialect's own code table.
    match dialect {
        Dialect::Jsidl => match kind {
            JointKind::Revolute => 1,
            JointKind::Prismatic => 2,
        },
        Dialect::OpenJaus => match kind {
            JointKind::Revolute => 0,
            JointKind::Prismatic => 1,
        },
    }
}

/// Writes a u8-counted list of variable fields in the writer's dialect.
pub fn emit_joint_values(
    w: &mut Writer,
    values: &[JointValue],
    family: VariableFamily,
    list: &'static str,
    field: &'static str,
) -> Result<(), EncodeError> {
    w.count_u8(values.len(), list)?;
    for v in values {
        w.u8(unit_code(v.joint_type, w.dialect()));
        w.scaled(family.scale(v.joint_type), v.value, field)?;
    }
    Ok(())
}

/// A list of joint values (positions, velocities or force/torques) message.
macro_rules! joint_values_message {
    ($( $(#[$meta:meta])* $name:ident { $vfield:ident, $family:expr, $list:literal, $item:literal } ),* $(,)?) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name {
            /// One entry per joint, base to tip.
            pub $vfield: Vec<JointValue>,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self { $vfield: parse_joint_values(r, $family, $list, $item)? })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                emit_joint_values(w, &self.$vfield, $family, $list, $item)
            }
        }
    )*};
}

joint_values_message! {
    /// 0x4602 `ReportJointPositions`.
    ReportJointPositions { joint_positions, POSITION, "JointPositionList", "JointPosition" },
    /// 0x0602 `SetJointPositions`.
    SetJointPositions { joint_positions, POSITION, "JointPositionList", "JointPosition" },
    /// 0x4608 `ReportCommandedJointPositions`.
    ReportCommandedJointPositions { joint_positions, POSITION, "JointPositionList", "JointPosition" },
    /// 0x4603 `ReportJointVelocity`.
    ReportJointVelocity { joint_velocities, VELOCITY, "JointVelocityList", "JointVelocity" },
    /// 0x0603 `SetJointVelocity`.
    SetJointVelocity { joint_velocities, VELOCITY, "JointVelocityList", "JointVelocity" },
    /// 0x4611 `ReportCommandedJointVelocity`: the velocities last commanded (the arm's echo).
    ReportCommandedJointVelocity { joint_velocities, VELOCITY, "JointVelocityList", "JointVelocity" },
    /// 0x4605 `ReportJointForceTorques`.
    ReportJointForceTorques { joint_force_torques, FORCE_TORQUE, "ActuatorForceTorqueList", "JointForceTorque" },
}

/// A list of joint efforts message (percent of maximum, ±100).
macro_rules! effort_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name {
            /// `JointEffort` per joint, percent of maximum effort (−100..=100).
            pub joint_efforts: Vec<f64>,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let n = r.count_u8(2, "JointEffortList")?;
                let mut joint_efforts = Vec::with_capacity(n);
                for _ in 0..n {
                    joint_efforts.push(r.scaled(scales::EFFORT, "JointEffort")?);
                }
                Ok(Self { joint_efforts })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.count_u8(self.joint_efforts.len(), "JointEffortList")?;
                self.joint_efforts.iter().try_for_each(|&e| w.scaled(scales::EFFORT, e, "JointEffort"))
            }
        }
    )*};
}

effort_message! {
    /// 0x4601 `ReportJointEffort`.
    ReportJointEffort,
    /// 0x0601 `SetJointEffort`.
    SetJointEffort
}

/// A tool point message (`ToolPointRec`, ±15 m).
macro_rules! tool_offset_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Serialize)]
        pub struct $name {
            /// `ToolPointCoordinateX` in the end-effector frame, m.
            pub x: f64,
            /// `ToolPointCoordinateY`, m.
            pub y: f64,
            /// `ToolPointCoordinateZ`, m.
            pub z: f64,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self {
                    x: r.scaled(scales::TOOL_OFFSET, "ToolPointCoordinateX")?,
                    y: r.scaled(scales::TOOL_OFFSET, "ToolPointCoordinateY")?,
                    z: r.scaled(scales::TOOL_OFFSET, "ToolPointCoordinateZ")?,
                })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.scaled(scales::TOOL_OFFSET, self.x, "ToolPointCoordinateX")?;
                w.scaled(scales::TOOL_OFFSET, self.y, "ToolPointCoordinateY")?;
                w.scaled(scales::TOOL_OFFSET, self.z, "ToolPointCoordinateZ")
            }
        }
    )*};
}

tool_offset_message! {
    /// 0x4604 `ReportToolOffset`.
    ReportToolOffset,
    /// 0x0604 `SetToolOffset`.
    SetToolOffset
}

/// A position (±30 m) and unit quaternion d + ai + bj + ck (d scalar), as in
/// `EndEffectorPoseRec` and `ManipulatorCoordinateSystemRec`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pose {
    /// X, m.
    pub x: f64,
    /// Y, m.
    pub y: f64,
    /// Z, m.
    pub z: f64,
    /// Quaternion scalar part D.
    pub d: f64,
    /// Quaternion A (i).
    pub a: f64,
    /// Quaternion B (j).
    pub b: f64,
    /// Quaternion C (k).
    pub c: f64,
}

impl Pose {
    /// The identity pose at the origin.
    pub const IDENTITY: Pose = Pose {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        d: 1.0,
        a: 0.0,
        b: 0.0,
        c: 0.0,
    };

    /// Reads the seven u32 fields.
    pub fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            x: r.scaled(scales::POSITION_30M, "ToolPointCoordinateX")?,
            y: r.scaled(scales::POSITION_30M, "ToolPointCoordinateY")?,
            z: r.scaled(scales::POSITION_30M, "ToolPointCoordinateZ")?,
            d: r.scaled(scales::QUATERNION, "DComponentOfUnitQuaternionQ")?,
            a: r.scaled(scales::QUATERNION, "AComponentOfUnitQuaternionQ")?,
            b: r.scaled(scales::QUATERNION, "BComponentOfUnitQuaternionQ")?,
            c: r.scaled(scales::QUATERNION, "CComponentOfUnitQuaternionQ")?,
        })
    }

    /// Writes the seven u32 fields.
    pub fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.scaled(scales::POSITION_30M, self.x, "ToolPointCoordinateX")?;
        w.scaled(scales::POSITION_30M, self.y, "ToolPointCoordinateY")?;
        w.scaled(scales::POSITION_30M, self.z, "ToolPointCoordinateZ")?;
        w.scaled(scales::QUATERNION, self.d, "DComponentOfUnitQuaternionQ")?;
        w.scaled(scales::QUATERNION, self.a, "AComponentOfUnitQuaternionQ")?;
        w.scaled(scales::QUATERNION, self.b, "BComponentOfUnitQuaternionQ")?;
        w.scaled(scales::QUATERNION, self.c, "CComponentOfUnitQuaternionQ")
    }
}

/// 0x4615 `ReportEndEffectorPose`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReportEndEffectorPose {
    /// The end-effector pose in the manipulator frame.
    #[serde(flatten)]
    pub pose: Pose,
}

impl Body for ReportEndEffectorPose {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            pose: Pose::parse(r)?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        self.pose.emit(w)
    }
}

/// The tool point's twist (`EndEffectorVelocityRec`, §6.3 0x0612): angular velocity of the
/// end-effector frame, then linear velocity of the tool point, both in the manipulator (base)
/// frame; on the wire angular X, Y, Z then linear X, Y, Z, each a u32.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct EndEffectorVelocity {
    /// `AngularVelocityComponentX/Y/Z`: rad/s, ±20π.
    pub angular: [f64; 3],
    /// `LinearVelocityComponentX/Y/Z`: m/s, ±10.
    pub linear: [f64; 3],
}

const ANGULAR_FIELDS: [&str; 3] = [
    "AngularVelocityComponentX",
    "AngularVelocityComponentY",
    "AngularVelocityComponentZ",
];
const LINEAR_FIELDS: [&str; 3] = [
    "LinearVelocityComponentX",
    "LinearVelocityComponentY",
    "LinearVelocityComponentZ",
];

impl EndEffectorVelocity {
    /// No motion.
    pub const ZERO: EndEffectorVelocity = EndEffectorVelocity {
        angular: [0.0; 3],
        linear: [0.0; 3],
    };

    /// Whether every component is zero (the arm is told to stop).
    pub fn is_zero(&self) -> bool {
        self.angular.iter().chain(&self.linear).all(|v| *v == 0.0)
    }

    /// Reads the six u32 fields.
    pub fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut v = Self::ZERO;
        for (x, field) in v.angular.iter_mut().zip(ANGULAR_FIELDS) {
            *x = r.scaled(scales::EE_ANGULAR_VELOCITY, field)?;
        }
        for (x, field) in v.linear.iter_mut().zip(LINEAR_FIELDS) {
            *x = r.scaled(scales::EE_LINEAR_VELOCITY, field)?;
        }
        Ok(v)
    }

    /// Writes the six u32 fields.
    pub fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        for (&x, field) in self.angular.iter().zip(ANGULAR_FIELDS) {
            w.scaled(scales::EE_ANGULAR_VELOCITY, x, field)?;
        }
        for (&x, field) in self.linear.iter().zip(LINEAR_FIELDS) {
            w.scaled(scales::EE_LINEAR_VELOCITY, x, field)?;
        }
        Ok(())
    }
}

/// A message whose body is one `EndEffectorVelocityRec`.
macro_rules! end_effector_velocity_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Serialize)]
        pub struct $name {
            /// `EndEffectorVelocityRec`: the twist, manipulator frame.
            #[serde(flatten)]
            pub velocity: EndEffectorVelocity,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self {
                    velocity: EndEffectorVelocity::parse(r)?,
                })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                self.velocity.emit(w)
            }
        }
    )*};
}

end_effector_velocity_message! {
    /// 0x0612 `SetEndEffectorVelocityState`: move the tool point at this twist (manipulator
    /// frame) until told otherwise; all zeros stop.
    SetEndEffectorVelocityState,
    /// 0x4612 `ReportCommandedEndEffectorVelocityState`: the twist last commanded (the arm's
    /// echo).
    ReportCommandedEndEffectorVelocityState,
    /// 0x4616 `ReportEndEffectorVelocityState`: the tool point's twist now, as measured.
    ReportEndEffectorVelocityState
}

/// One joint's limits in a motion profile (`JointMotionProfileList` entry, §6.3 0x0607): a
/// variant by joint type, tag 0 revolute (rad/s, rad/s²), tag 1 prismatic (m/s, m/s²).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JointMotionProfile {
    /// Which alternative, and so which units.
    pub joint_type: JointKind,
    /// `JointMaxSpeed`: rad/s 0..10π or m/s 0..5.
    pub max_speed: f64,
    /// `JointMaxAccelerationRate`: rad/s² 0..10π or m/s² 0..20.
    pub max_acceleration: f64,
    /// `JointMaxDecelerationRate`: rad/s² 0..10π or m/s² 0..20.
    pub max_deceleration: f64,
}

impl JointMotionProfile {
    /// The speed and rate scales of `kind`.
    pub fn scales(kind: JointKind) -> (Scale, Scale) {
        match kind {
            JointKind::Revolute => (scales::PROFILE_RAD, scales::PROFILE_RAD),
            JointKind::Prismatic => (scales::PROFILE_SPEED_M, scales::PROFILE_ACCEL_M),
        }
    }

    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let joint_type = match r.tag(2, "JointType")? {
            0 => JointKind::Revolute,
            _ => JointKind::Prismatic,
        };
        let (speed, rate) = Self::scales(joint_type);
        Ok(Self {
            joint_type,
            max_speed: r.scaled(speed, "JointMaxSpeed")?,
            max_acceleration: r.scaled(rate, "JointMaxAccelerationRate")?,
            max_deceleration: r.scaled(rate, "JointMaxDecelerationRate")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        // A variant tag, not a type-and-units code: the same in both dialects.
        w.u8(match self.joint_type {
            JointKind::Revolute => 0,
            JointKind::Prismatic => 1,
        });
        let (speed, rate) = Self::scales(self.joint_type);
        w.scaled(speed, self.max_speed, "JointMaxSpeed")?;
        w.scaled(rate, self.max_acceleration, "JointMaxAccelerationRate")?;
        w.scaled(rate, self.max_deceleration, "JointMaxDecelerationRate")
    }
}

/// A joint motion profile message: one entry per joint, base to tip.
macro_rules! motion_profile_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name {
            /// `JointMotionProfileList`: one entry per joint, base to tip.
            pub joint_motion_profiles: Vec<JointMotionProfile>,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                // Each entry is at least a tag and three u32s.
                let n = r.count_u8(13, "JointMotionProfileList")?;
                let mut joint_motion_profiles = Vec::with_capacity(n);
                for _ in 0..n {
                    joint_motion_profiles.push(JointMotionProfile::parse(r)?);
                }
                Ok(Self { joint_motion_profiles })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.count_u8(self.joint_motion_profiles.len(), "JointMotionProfileList")?;
                self.joint_motion_profiles.iter().try_for_each(|p| p.emit(w))
            }
        }
    )*};
}

motion_profile_message! {
    /// 0x0607 `SetJointMotionProfile`: the speed and rate limits the position, velocity and
    /// tool-point drivers move within.
    SetJointMotionProfile,
    /// 0x4607 `ReportJointMotionProfile`.
    ReportJointMotionProfile
}

empty_message! {
    /// 0x2601 `QueryJointEffort`.
    QueryJointEffort,
    /// 0x2602 `QueryJointPositions`.
    QueryJointPositions,
    /// 0x2603 `QueryJointVelocity`.
    QueryJointVelocity,
    /// 0x2604 `QueryToolOffset`.
    QueryToolOffset,
    /// 0x2605 `QueryJointForceTorques`.
    QueryJointForceTorques,
    /// 0x2608 `QueryCommandedJointPositions`.
    QueryCommandedJointPositions,
    /// 0x2607 `QueryJointMotionProfile`.
    QueryJointMotionProfile,
    /// 0x2611 `QueryCommandedJointVelocity`.
    QueryCommandedJointVelocity,
    /// 0x2612 `QueryCommandedEndEffectorVelocityState`.
    QueryCommandedEndEffectorVelocityState,
    /// 0x2615 `QueryEndEffectorPose`.
    QueryEndEffectorPose,
    /// 0x2616 `QueryEndEffectorVelocityState`.
    QueryEndEffectorVelocityState,
}

/// 0x2600 `QueryManipulatorSpecifications`: a presence vector asking for the report's optional
/// parts (same bit numbering as the report's top-level presence vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueryManipulatorSpecifications {
    /// `PresenceVector`: bit 0 = `ManipulatorCoordinateSystemRec`, bit 1 = `JointNamesList`.
    pub presence_vector: u8,
}

impl Body for QueryManipulatorSpecifications {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            presence_vector: r.u8("PresenceVector")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.presence_vector);
        Ok(())
    }
}

fn opt(
    r: &mut Reader<'_>,
    pv: u8,
    bit: u8,
    scale: Scale,
    field: &'static str,
) -> Result<Option<f64>, DecodeError> {
    if pv & (1 << bit) != 0 {
        r.scaled(scale, field).map(Some)
    } else {
        Ok(None)
    }
}

fn put_opt(
    w: &mut Writer,
    v: Option<f64>,
    scale: Scale,
    field: &'static str,
) -> Result<(), EncodeError> {
    match v {
        Some(v) => w.scaled(scale, v, field),
        None => Ok(()),
    }
}

fn pv_of(bits: &[bool]) -> u8 {
    bits.iter()
        .enumerate()
        .fold(0, |pv, (i, &b)| pv | u8::from(b) << i)
}

/// `FirstJointParameters`, tag 0: a revolute joint 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RevoluteJoint1 {
    /// `Joint1Offset` S11, m (±10, u16).
    pub joint1_offset: f64,
    /// `Joint1MinValue`, rad (PV bit 0; absent = no limit).
    pub joint1_min_value: Option<f64>,
    /// `Joint1MaxValue`, rad (PV bit 1).
    pub joint1_max_value: Option<f64>,
    /// `Joint1MaxSpeed`, rad/s (PV bit 2).
    pub joint1_max_speed: Option<f64>,
    /// `Joint1MaxTorque`, N·m (PV bit 3).
    pub joint1_max_torque: Option<f64>,
    /// `OffsetBoundingCylinderRadius`, m (PV bit 4).
    pub offset_bounding_cylinder_radius: Option<f64>,
}

/// `FirstJointParameters`, tag 1: a prismatic joint 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrismaticJoint1 {
    /// `Joint1Angle` θ1, rad (±π, u16).
    pub joint1_angle: f64,
    /// `Joint1MinValue`, m.
    pub joint1_min_value: f64,
    /// `Joint1MaxValue`, m.
    pub joint1_max_value: f64,
    /// `Joint1MaxSpeed`, m/s (PV bit 0).
    pub joint1_max_speed: Option<f64>,
    /// `Joint1MaxForce`, N (PV bit 1).
    pub joint1_max_force: Option<f64>,
    /// `JointBoundingCylinderRadius`, m (PV bit 2).
    pub joint_bounding_cylinder_radius: Option<f64>,
}

/// `FirstJointParameters` variant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "joint_type", rename_all = "snake_case")]
pub enum FirstJointParameters {
    /// Tag 0.
    Revolute(RevoluteJoint1),
    /// Tag 1.
    Prismatic(PrismaticJoint1),
}

impl FirstJointParameters {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.tag(2, "FirstJointParameters")? {
            0 => {
                let pv = r.presence_u8(0x1f, "PresenceVector")?;
                Self::Revolute(RevoluteJoint1 {
                    joint1_offset: r.scaled(scales::LENGTH_U16, "Joint1Offset")?,
                    joint1_min_value: opt(r, pv, 0, scales::LIMIT_RAD, "Joint1MinValue")?,
                    joint1_max_value: opt(r, pv, 1, scales::LIMIT_RAD, "Joint1MaxValue")?,
                    joint1_max_speed: opt(r, pv, 2, scales::MAX_SPEED_RAD, "Joint1MaxSpeed")?,
                    joint1_max_torque: opt(r, pv, 3, scales::MAX_EFFORT, "Joint1MaxTorque")?,
                    offset_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        4,
                        scales::RADIUS,
                        "OffsetBoundingCylinderRadius",
                    )?,
                })
            }
            _ => {
                let pv = r.presence_u8(0x07, "PresenceVector")?;
                Self::Prismatic(PrismaticJoint1 {
                    joint1_angle: r.scaled(scales::ANGLE_U16, "Joint1Angle")?,
                    joint1_min_value: r.scaled(scales::LIMIT_M, "Joint1MinValue")?,
                    joint1_max_value: r.scaled(scales::LIMIT_M, "Joint1MaxValue")?,
                    joint1_max_speed: opt(r, pv, 0, scales::MAX_SPEED_M, "Joint1MaxSpeed")?,
                    joint1_max_force: opt(r, pv, 1, scales::MAX_EFFORT, "Joint1MaxForce")?,
                    joint_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        2,
                        scales::RADIUS,
                        "JointBoundingCylinderRadius",
                    )?,
                })
            }
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match self {
            Self::Revolute(j) => {
                w.u8(0);
                w.u8(pv_of(&[
                    j.joint1_min_value.is_some(),
                    j.joint1_max_value.is_some(),
                    j.joint1_max_speed.is_some(),
                    j.joint1_max_torque.is_some(),
                    j.offset_bounding_cylinder_radius.is_some(),
                ]));
                w.scaled(scales::LENGTH_U16, j.joint1_offset, "Joint1Offset")?;
                put_opt(w, j.joint1_min_value, scales::LIMIT_RAD, "Joint1MinValue")?;
                put_opt(w, j.joint1_max_value, scales::LIMIT_RAD, "Joint1MaxValue")?;
                put_opt(
                    w,
                    j.joint1_max_speed,
                    scales::MAX_SPEED_RAD,
                    "Joint1MaxSpeed",
                )?;
                put_opt(
                    w,
                    j.joint1_max_torque,
                    scales::MAX_EFFORT,
                    "Joint1MaxTorque",
                )?;
                put_opt(
                    w,
                    j.offset_bounding_cylinder_radius,
                    scales::RADIUS,
                    "OffsetBoundingCylinderRadius",
                )
            }
            Self::Prismatic(j) => {
                w.u8(1);
                w.u8(pv_of(&[
                    j.joint1_max_speed.is_some(),
                    j.joint1_max_force.is_some(),
                    j.joint_bounding_cylinder_radius.is_some(),
                ]));
                w.scaled(scales::ANGLE_U16, j.joint1_angle, "Joint1Angle")?;
                w.scaled(scales::LIMIT_M, j.joint1_min_value, "Joint1MinValue")?;
                w.scaled(scales::LIMIT_M, j.joint1_max_value, "Joint1MaxValue")?;
                put_opt(w, j.joint1_max_speed, scales::MAX_SPEED_M, "Joint1MaxSpeed")?;
                put_opt(w, j.joint1_max_force, scales::MAX_EFFORT, "Joint1MaxForce")?;
                put_opt(
                    w,
                    j.joint_bounding_cylinder_radius,
                    scales::RADIUS,
                    "JointBoundingCylinderRadius",
                )
            }
        }
    }

    /// The joint's kind.
    pub fn kind(&self) -> JointKind {
        match self {
            Self::Revolute(_) => JointKind::Revolute,
            Self::Prismatic(_) => JointKind::Prismatic,
        }
    }
}

/// `JointSpecifications`, tag 0: link k→k+1 and a revolute joint k+1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RevoluteJointSpecification {
    /// `LinkLength` a(k,k+1), m (±10, u16).
    pub link_length: f64,
    /// `TwistAngle` α(k,k+1), rad (±π, u16).
    pub twist_angle: f64,
    /// `JointOffset` S(k+1,k+1), m (±10, u16).
    pub joint_offset: f64,
    /// `MinValue`, rad (PV bit 0; absent = no limit).
    pub min_value: Option<f64>,
    /// `MaxValue`, rad (PV bit 1).
    pub max_value: Option<f64>,
    /// `MaxSpeed`, rad/s (PV bit 2).
    pub max_speed: Option<f64>,
    /// `MaxTorque`, N·m (PV bit 3).
    pub max_torque: Option<f64>,
    /// `OffsetBoundingCylinderRadius`, m (PV bit 4).
    pub offset_bounding_cylinder_radius: Option<f64>,
    /// `LinkLengthBoundingCylinderRadius`, m (PV bit 5).
    pub link_length_bounding_cylinder_radius: Option<f64>,
}

/// `JointSpecifications`, tag 1: link k→k+1 and a prismatic joint k+1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrismaticJointSpecification {
    /// `LinkLength` a(k,k+1), m (±10, u16).
    pub link_length: f64,
    /// `TwistAngle` α(k,k+1), rad (±π, u16).
    pub twist_angle: f64,
    /// `JointAngle` θ(k+1), rad (±π, u16).
    pub joint_angle: f64,
    /// `MinValue`, m.
    pub min_value: f64,
    /// `MaxValue`, m.
    pub max_value: f64,
    /// `MaxSpeed`, m/s (PV bit 0).
    pub max_speed: Option<f64>,
    /// `MaxForce`, N (PV bit 1).
    pub max_force: Option<f64>,
    /// `JointBoundingCylinderRadius`, m (PV bit 2).
    pub joint_bounding_cylinder_radius: Option<f64>,
    /// `LinkLengthBoundingCylinderRadius`, m (PV bit 3).
    pub link_length_bounding_cylinder_radius: Option<f64>,
}

/// `JointSpecifications` variant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "joint_type", rename_all = "snake_case")]
pub enum JointSpecification {
    /// Tag 0.
    Revolute(RevoluteJointSpecification),
    /// Tag 1.
    Prismatic(PrismaticJointSpecification),
}

impl JointSpecification {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.tag(2, "JointSpecifications")? {
            0 => {
                let pv = r.presence_u8(0x3f, "PresenceVector")?;
                Self::Revolute(RevoluteJointSpecification {
                    link_length: r.scaled(scales::LENGTH_U16, "LinkLength")?,
                    twist_angle: r.scaled(scales::ANGLE_U16, "TwistAngle")?,
                    joint_offset: r.scaled(scales::LENGTH_U16, "JointOffset")?,
                    min_value: opt(r, pv, 0, scales::LIMIT_RAD, "MinValue")?,
                    max_value: opt(r, pv, 1, scales::LIMIT_RAD, "MaxValue")?,
                    max_speed: opt(r, pv, 2, scales::MAX_SPEED_RAD, "MaxSpeed")?,
                    max_torque: opt(r, pv, 3, scales::MAX_EFFORT, "MaxTorque")?,
                    offset_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        4,
                        scales::RADIUS,
                        "OffsetBoundingCylinderRadius",
                    )?,
                    link_length_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        5,
                        scales::RADIUS,
                        "LinkLengthBoundingCylinderRadius",
                    )?,
                })
            }
            _ => {
                let pv = r.presence_u8(0x0f, "PresenceVector")?;
                Self::Prismatic(PrismaticJointSpecification {
                    link_length: r.scaled(scales::LENGTH_U16, "LinkLength")?,
                    twist_angle: r.scaled(scales::ANGLE_U16, "TwistAngle")?,
                    joint_angle: r.scaled(scales::ANGLE_U16, "JointAngle")?,
                    min_value: r.scaled(scales::LIMIT_M, "MinValue")?,
                    max_value: r.scaled(scales::LIMIT_M, "MaxValue")?,
                    max_speed: opt(r, pv, 0, scales::MAX_SPEED_M, "MaxSpeed")?,
                    max_force: opt(r, pv, 1, scales::MAX_EFFORT, "MaxForce")?,
                    joint_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        2,
                        scales::RADIUS,
                        "JointBoundingCylinderRadius",
                    )?,
                    link_length_bounding_cylinder_radius: opt(
                        r,
                        pv,
                        3,
                        scales::RADIUS,
                        "LinkLengthBoundingCylinderRadius",
                    )?,
                })
            }
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match self {
            Self::Revolute(j) => {
                w.u8(0);
                w.u8(pv_of(&[
                    j.min_value.is_some(),
                    j.max_value.is_some(),
                    j.max_speed.is_some(),
                    j.max_torque.is_some(),
                    j.offset_bounding_cylinder_radius.is_some(),
                    j.link_length_bounding_cylinder_radius.is_some(),
                ]));
                w.scaled(scales::LENGTH_U16, j.link_length, "LinkLength")?;
                w.scaled(scales::ANGLE_U16, j.twist_angle, "TwistAngle")?;
                w.scaled(scales::LENGTH_U16, j.joint_offset, "JointOffset")?;
                put_opt(w, j.min_value, scales::LIMIT_RAD, "MinValue")?;
                put_opt(w, j.max_value, scales::LIMIT_RAD, "MaxValue")?;
                put_opt(w, j.max_speed, scales::MAX_SPEED_RAD, "MaxSpeed")?;
                put_opt(w, j.max_torque, scales::MAX_EFFORT, "MaxTorque")?;
                put_opt(
                    w,
                    j.offset_bounding_cylinder_radius,
                    scales::RADIUS,
                    "OffsetBoundingCylinderRadius",
                )?;
                put_opt(
                    w,
                    j.link_length_bounding_cylinder_radius,
                    scales::RADIUS,
                    "LinkLengthBoundingCylinderRadius",
                )
            }
            Self::Prismatic(j) => {
                w.u8(1);
                w.u8(pv_of(&[
                    j.max_speed.is_some(),
                    j.max_force.is_some(),
                    j.joint_bounding_cylinder_radius.is_some(),
                    j.link_length_bounding_cylinder_radius.is_some(),
                ]));
                w.scaled(scales::LENGTH_U16, j.link_length, "LinkLength")?;
                w.scaled(scales::ANGLE_U16, j.twist_angle, "TwistAngle")?;
                w.scaled(scales::ANGLE_U16, j.joint_angle, "JointAngle")?;
                w.scaled(scales::LIMIT_M, j.min_value, "MinValue")?;
                w.scaled(scales::LIMIT_M, j.max_value, "MaxValue")?;
                put_opt(w, j.max_speed, scales::MAX_SPEED_M, "MaxSpeed")?;
                put_opt(w, j.max_force, scales::MAX_EFFORT, "MaxForce")?;
                put_opt(
                    w,
                    j.joint_bounding_cylinder_radius,
                    scales::RADIUS,
                    "JointBoundingCylinderRadius",
                )?;
                put_opt(
                    w,
                    j.link_length_bounding_cylinder_radius,
                    scales::RADIUS,
                    "LinkLengthBoundingCylinderRadius",
                )
            }
        }
    }

    /// The kind of the joint this entry describes.
    pub fn kind(&self) -> JointKind {
        match self {
            Self::Revolute(_) => JointKind::Revolute,
            Self::Prismatic(_) => JointKind::Prismatic,
        }
    }
}

/// 0x4600 `ReportManipulatorSpecifications`: the arm's kinematic description (Crane & Duffy).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportManipulatorSpecifications {
    /// `ManipulatorCoordinateSystemRec`: the manipulator frame in the vehicle frame (PV bit 0).
    pub manipulator_coordinate_system: Option<Pose>,
    /// `FirstJointParameters`: joint 1.
    pub first_joint_parameters: FirstJointParameters,
    /// `JointSpecificationList`: one entry per joint after the first, base to tip.
    pub joint_specifications: Vec<JointSpecification>,
    /// `JointNamesList`: one name per joint, joint 1 first (PV bit 1).
    pub joint_names: Option<Vec<String>>,
}

impl ReportManipulatorSpecifications {
    /// Joint types, joint 1 first (the decode context for joint-value lists).
    pub fn joint_kinds(&self) -> Vec<JointKind> {
        std::iter::once(self.first_joint_parameters.kind())
            .chain(
                self.joint_specifications
                    .iter()
                    .map(JointSpecification::kind),
            )
            .collect()
    }

    /// Number of joints (1 + the list's length).
    pub fn joint_count(&self) -> usize {
        1 + self.joint_specifications.len()
    }
}

fn parse_names(r: &mut Reader<'_>) -> Result<Vec<String>, DecodeError> {
    let n = r.count_u8(1, "JointNamesList")?;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        names.push(r.string_u8("Description")?);
    }
    Ok(names)
}

impl Body for ReportManipulatorSpecifications {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let pv = r.presence_u8(0x03, "PresenceVector")?;
        let manipulator_coordinate_system = if pv & 1 != 0 {
            Some(Pose::parse(r)?)
        } else {
            None
        };
        let first_joint_parameters = FirstJointParameters::parse(r)?;
        let n = r.count_u8(4, "JointSpecificationList")?;
        let mut joint_specifications = Vec::with_capacity(n);
        for _ in 0..n {
            joint_specifications.push(JointSpecification::parse(r)?);
        }
        let joint_names = if pv & 2 != 0 {
            Some(parse_names(r)?)
        } else if r.remaining() > 0 {
            // §9 C2: OpenJAUS (2019 model) sends JointNamesList as mandatory and never sets
            // PV bit 1. Accept such a trailing list when it parses exactly; an empty one reads
            // as absent. Anything else is left for the caller's trailing-bytes check.
            let mut probe = r.clone();
            match parse_names(&mut probe) {
                Ok(names) if probe.remaining() == 0 => {
                    *r = probe;
                    (!names.is_empty()).then_some(names)
                }
                _ => None,
            }
        } else {
            None
        };
        Ok(Self {
            manipulator_coordinate_system,
            first_joint_parameters,
            joint_specifications,
            joint_names,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let names_bit = w.dialect() == Dialect::Jsidl && self.joint_names.is_some();
        w.u8(pv_of(&[
            self.manipulator_coordinate_system.is_some(),
            names_bit,
        ]));
        if let Some(p) = &self.manipulator_coordinate_system {
            p.emit(w)?;
        }
        self.first_joint_parameters.emit(w)?;
        w.count_u8(self.joint_specifications.len(), "JointSpecificationList")?;
        for j in &self.joint_specifications {
            j.emit(w)?;
        }
        let names = match (w.dialect(), &self.joint_names) {
            (_, Some(names)) => names.as_slice(),
            // OpenJAUS always carries the list.
            (Dialect::OpenJaus, None) => &[],
            (Dialect::Jsidl, None) => return Ok(()),
        };
        w.count_u8(names.len(), "JointNamesList")?;
        names.iter().try_for_each(|n| w.string_u8(n, "Description"))
    }
}
