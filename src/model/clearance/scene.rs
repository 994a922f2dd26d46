//! The bodies clearance is measured between — every bounding cylinder of every arm, placed
//! at its mount, from the same [`forward`] the 3D view draws, plus the vehicle file's ground
//! and obstacles — and the surface gap of every pair that is checked.
//!
//! Pairs checked: within one arm every pair that is not neighbours; across two arms every
//! pair; every arm cylinder against every obstacle and the ground.
//!
//! **Neighbours** are cylinders on the same or adjacent rigid bodies (MoveIt's "adjacent"
//! links: a joint between them, so they meet by design). Body j is the link moved by joints
//! 1..j (body 0 the base): the link-length cylinder of joint k runs along x(k−1) and the
//! offset cylinder of a revolute joint k along its own axis, both fixed in frame k−1 (body
//! k−1); a prismatic joint k's cylinder is its two telescoping tubes (bodies k−1 and k).
//! Consecutive cylinders, or cylinders with only zero-length ones between them ("zero"
//! within [`ZERO_LENGTH_M`]), meet at a point and are neighbours too.

use super::geometry::{Capsule, Contact, capsule_box, capsule_capsule, capsule_ground};
use super::obstacles::{ObstacleShape, PartName, VehicleGeometry};
use crate::model::arm::ArmSpec;
use crate::model::id::ComponentId;
use crate::model::kinematics::{CylinderKind, DEFAULT_CYLINDER_RADIUS, KinematicsError, forward};

/// Arms with more joints than this are not checked (said by the window as no pair): the
/// pairs grow with the square of the cylinders, and the wire allows 255 joints (about
/// 130,000 pairs, milliseconds a check). Real manipulators have 6 to 8.
pub const MAX_CHECKED_JOINTS: usize = 32;

/// A cylinder this short (m) is zero long: the wire's resolution for lengths is 0.3 mm.
pub const ZERO_LENGTH_M: f64 = 0.001;

/// One body of the scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// A bounding cylinder of an arm: its index in [`forward`]'s list (base to tip), the
    /// joint whose record gives it (1-based) and whether it is the link-length one.
    Cylinder {
        /// The arm.
        arm: ComponentId,
        /// Index in the arm's cylinder list.
        index: usize,
        /// The joint, 1-based.
        joint: usize,
        /// The link-length cylinder (else the offset or joint cylinder).
        link: bool,
    },
    /// An obstacle of the vehicle file, by index.
    Obstacle(usize),
    /// The ground.
    Ground,
}

impl std::hash::Hash for Part {
    /// One word per part (the allowances are looked up for every pair of every check): the
    /// kind, the arm's ID and the cylinder's index — the joint and the kind of cylinder
    /// follow from the index, so equal parts hash equal.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let word = match self {
            Part::Cylinder { arm, index, .. } => {
                (1 << 62)
                    | (u64::from(arm.subsystem) << 32)
                    | (u64::from(arm.node) << 24)
                    | (u64::from(arm.component) << 16)
                    | (*index as u64 & 0xffff)
            }
            Part::Obstacle(i) => (2 << 62) | (*i as u64 & 0xffff_ffff),
            Part::Ground => 3 << 62,
        };
        state.write_u64(word);
    }
}

impl Part {
    /// Whether this part is what a vehicle file's `name` names (for arm `arm`).
    pub fn is(&self, name: &PartName) -> bool {
        match (self, name) {
            (Part::Cylinder { joint, link, .. }, PartName::Joint(k)) => !link && joint == k,
            (Part::Cylinder { joint, link, .. }, PartName::Link(k)) => *link && joint == k,
            (Part::Obstacle(i), PartName::Obstacle(j)) => i == j,
            (Part::Ground, PartName::Ground) => true,
            _ => false,
        }
    }

    /// The arm the part belongs to, if any.
    pub fn arm(&self) -> Option<ComponentId> {
        match self {
            Part::Cylinder { arm, .. } => Some(*arm),
            _ => None,
        }
    }
}

/// A pair of parts, the smaller first (so each pair has one key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PairKey(pub Part, pub Part);

impl PairKey {
    /// The key of `a` and `b` in either order.
    pub fn new(a: Part, b: Part) -> PairKey {
        if a <= b { PairKey(a, b) } else { PairKey(b, a) }
    }
}

/// One arm as clearance needs it.
#[derive(Debug, Clone, Copy)]
pub struct ArmInput<'a> {
    /// Its ID.
    pub id: ComponentId,
    /// Its specification (mount and cylinders).
    pub spec: &'a ArmSpec,
    /// Its joint positions, joint 1 first.
    pub positions: &'a [f64],
}

/// A placed body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Which part.
    pub part: Part,
    /// Its capsule, vehicle frame (for an arm cylinder or a cylinder obstacle).
    pub capsule: Option<Capsule>,
    /// The rigid bodies of the arm it lies on, first and last (module doc).
    pub bodies: (usize, usize),
}

/// The gap of one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairGap {
    /// The pair (the arm cylinder first when one of the two is an obstacle or the ground).
    pub a: Part,
    /// The other part.
    pub b: Part,
    /// The gap, the closest points and the direction that opens it (moving `a`).
    pub contact: Contact,
}

/// The capsules of one arm at `positions`, vehicle frame, base to tip (radius as the
/// specification gives it, or the default the 3D view draws).
pub fn arm_bodies(arm: &ArmInput<'_>) -> Result<Vec<Body>, KinematicsError> {
    let pose = forward(arm.spec, arm.positions, [0.0; 3])?;
    Ok(pose
        .cylinders
        .iter()
        .enumerate()
        .map(|(index, c)| Body {
            part: Part::Cylinder {
                arm: arm.id,
                index,
                joint: c.joint,
                link: c.kind == CylinderKind::LinkLength,
            },
            capsule: Some(Capsule {
                from: pose.mount.transform_point3(c.from),
                to: pose.mount.transform_point3(c.to),
                radius: c.radius.unwrap_or(DEFAULT_CYLINDER_RADIUS).max(0.0),
            }),
            bodies: match c.kind {
                CylinderKind::Joint => (c.joint - 1, c.joint),
                CylinderKind::Offset | CylinderKind::LinkLength => (c.joint - 1, c.joint - 1),
            },
        })
        .collect())
}

/// Whether cylinders `i < j` of one arm are neighbours (module doc): on the same or adjacent
/// bodies, or meeting at a point.
fn neighbours(bodies: &[Body], i: usize, j: usize) -> bool {
    let (a, b) = (bodies[i].bodies, bodies[j].bodies);
    if b.0.saturating_sub(a.1) <= 1 && a.0.saturating_sub(b.1) <= 1 {
        return true;
    }
    bodies[i + 1..j].iter().all(|b| {
        b.capsule
            .is_some_and(|c| c.from.distance(c.to) <= ZERO_LENGTH_M)
    })
}

/// Every checked pair's gap for `arms` in `vehicle`; `keep` says which pairs to measure
/// (all of them: `|_| true`). An arm whose specification and positions do not fit is left
/// out (nothing to place), and so is an arm of more than [`MAX_CHECKED_JOINTS`] joints.
pub fn gaps(
    arms: &[ArmInput<'_>],
    vehicle: &VehicleGeometry,
    mut keep: impl FnMut(&PairKey) -> bool,
) -> Vec<PairGap> {
    let placed: Vec<Vec<Body>> = arms
        .iter()
        .filter(|a| a.spec.joints.len() <= MAX_CHECKED_JOINTS)
        .filter_map(|a| arm_bodies(a).ok())
        .collect();
    let mut out = Vec::new();
    for (ai, bodies) in placed.iter().enumerate() {
        for (i, a) in bodies.iter().enumerate() {
            let Some(ca) = a.capsule else { continue };
            for j in i + 1..bodies.len() {
                if neighbours(bodies, i, j) {
                    continue;
                }
                push_capsules(&mut out, a.part, ca, &bodies[j], &mut keep);
            }
            for other in &placed[ai + 1..] {
                for b in other {
                    push_capsules(&mut out, a.part, ca, b, &mut keep);
                }
            }
            for (k, o) in vehicle.obstacles.iter().enumerate() {
                let key = PairKey::new(a.part, Part::Obstacle(k));
                if !keep(&key) {
                    continue;
                }
                let contact = match &o.shape {
                    ObstacleShape::Box(b) => capsule_box(&ca, b),
                    ObstacleShape::Capsule(c) => capsule_capsule(&ca, c),
                };
                out.push(PairGap {
                    a: a.part,
                    b: Part::Obstacle(k),
                    contact,
                });
            }
            if let Some(g) = vehicle.ground
                && keep(&PairKey::new(a.part, Part::Ground))
            {
                out.push(PairGap {
                    a: a.part,
                    b: Part::Ground,
                    contact: capsule_ground(&ca, &g),
                });
            }
        }
    }
    out
}

fn push_capsules(
    out: &mut Vec<PairGap>,
    a: Part,
    ca: Capsule,
    b: &Body,
    keep: &mut impl FnMut(&PairKey) -> bool,
) {
    let Some(cb) = b.capsule else { return };
    if keep(&PairKey::new(a, b.part)) {
        out.push(PairGap {
            a,
            b: b.part,
            contact: capsule_capsule(&ca, &cb),
        });
    }
}

/// A part in words: "`wrist_roll` (joint 5)", "link to elbow (joint 3)", "chassis", "ground";
/// with the arm's ID when `with_arm` (pairs across two arms). `joint_name` gives a joint's
/// name where the specification has one.
pub fn part_name(
    part: &Part,
    joint_name: impl Fn(ComponentId, usize) -> Option<String>,
    vehicle: &VehicleGeometry,
    with_arm: bool,
) -> String {
    match part {
        Part::Cylinder {
            arm, joint, link, ..
        } => {
            let name = joint_name(*arm, *joint).map_or(String::new(), |n| format!("{n} "));
            let what = if *link {
                format!("link to {name}(joint {joint})")
            } else {
                format!("{name}(joint {joint})")
            };
            if with_arm {
                format!("{what} of {arm}")
            } else {
                what
            }
        }
        Part::Obstacle(i) => vehicle
            .obstacles
            .get(*i)
            .map_or_else(|| format!("obstacle {}", i + 1), |o| o.name.clone()),
        Part::Ground => "ground".into(),
    }
}
