//! The arm's description in domain terms: what `ReportManipulatorSpecifications` says
//! (Crane & Duffy link parameters, limits, bounding radii, names) plus where it is mounted.
//! Everything above the codec uses this type; the conversion to and from the wire `Repr` is
//! at the boundary, `net::reports`.

/// The two kinds of joint, and so the units of a joint value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JointType {
    /// Rotary joint: rad, rad/s, N·m.
    Revolute,
    /// Linear joint: m, m/s, N.
    Prismatic,
}

impl JointType {
    /// `"revolute"` or `"prismatic"`.
    pub fn name(self) -> &'static str {
        match self {
            JointType::Revolute => "revolute",
            JointType::Prismatic => "prismatic",
        }
    }
}

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

    /// A placement at `position` (m), turned by `yaw` (rad) about the vehicle's z axis.
    pub fn at(position: [f64; 3], yaw: f64) -> Mount {
        let (s, c) = (yaw / 2.0).sin_cos();
        Mount {
            position,
            orientation: [c, 0.0, 0.0, s],
        }
    }
}

/// One joint and the link before it, in Crane & Duffy terms (kinematics.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Joint name, if the specification gives one.
    pub name: Option<String>,
    /// Revolute or prismatic.
    pub kind: JointType,
    /// Link length a(k−1,k) from the previous joint axis, m (0 for joint 1).
    pub link_length: f64,
    /// Twist angle α(k−1,k) of that link, rad (0 for joint 1).
    pub twist: f64,
    /// Revolute only: the constant joint offset S(k,k) (joint 1: `Joint1Offset`), m.
    pub offset: f64,
    /// Prismatic only: the constant joint angle θk (joint 1: `Joint1Angle`), rad.
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
            kind: JointType::Revolute,
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
            kind: JointType::Prismatic,
            angle,
            offset: 0.0,
            min: Some(min),
            max: Some(max),
            ..Self::revolute(link_length, twist, 0.0)
        }
    }

    /// Whether the joint slides (positions in m) rather than turns (rad).
    pub fn is_prismatic(&self) -> bool {
        self.kind == JointType::Prismatic
    }

    /// Whether the joint turns without limits.
    pub fn is_continuous(&self) -> bool {
        self.kind == JointType::Revolute && (self.min.is_none() || self.max.is_none())
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

    /// Joint types, joint 1 first.
    pub fn joint_types(&self) -> Vec<JointType> {
        self.joints.iter().map(|j| j.kind).collect()
    }

    /// The mount, or the identity when the specification gives none.
    pub fn mount_or_identity(&self) -> Mount {
        self.mount.unwrap_or(Mount::IDENTITY)
    }
}
