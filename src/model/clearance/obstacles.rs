//! The vehicle file (`assets/vehicles/*.toml`): what the OCU knows of the vehicle beyond the
//! wire — the ground, the body's obstacles, and the pairs that may touch by design. JAUS
//! carries none of it (a manipulator reports its own cylinders only).
//!
//! The schema is a public interface:
//!
//! ```toml
//! name = "Demo UGV"
//! [ground]
//! z = 0.30                        # m; vehicle frame, +z down: 0.30 m below the origin
//! [[obstacle]]
//! name = "chassis"
//! box = { centre = [0.0, 0.0, 0.0], size = [1.2, 0.7, 0.4], yaw = 0.0 }   # m, m, rad
//! [[obstacle]]
//! name = "mast"
//! cylinder = { from = [-0.3, 0.0, -0.25], to = [-0.3, 0.0, -1.2], radius = 0.04 }
//! [[allow]]                       # a pair that may touch by design
//! a = "joint 1"                   # "joint K": joint K's offset (or joint) cylinder;
//! b = "chassis"                   # "link K": its link-length cylinder; an obstacle; "ground"
//! depth = 0.13                    # optional: no deeper than this, m (absent: never checked)
//! why = "the turret stands on the deck"
//! arm = "126.1.10"                # optional: only this arm (absent: every arm)
//! ```
//!
//! A cylinder obstacle is modelled with rounded ends (a capsule), as the arm's cylinders
//! are: its ends reach `radius` beyond `from` and `to`. Pure: the caller reads the file.

use glam::{DAffine3, DQuat, DVec3};
use serde::Deserialize;

use super::geometry::{Capsule, Ground, OrientedBox};
use crate::model::id::ComponentId;

/// Most obstacles and allowed pairs one file may give (a bound, like every table).
pub const MAX_ENTRIES: usize = 256;

/// One obstacle of the vehicle.
#[derive(Debug, Clone, PartialEq)]
pub struct Obstacle {
    /// Its name, as pairs and messages say it.
    pub name: String,
    /// Its shape, vehicle frame.
    pub shape: ObstacleShape,
}

/// An obstacle's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ObstacleShape {
    /// A box.
    Box(OrientedBox),
    /// A cylinder with rounded ends.
    Capsule(Capsule),
}

/// A part named in a vehicle file's allowed pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PartName {
    /// Joint K's offset (or joint) cylinder, 1-based.
    Joint(usize),
    /// Joint K's link-length cylinder, 1-based (K ≥ 2).
    Link(usize),
    /// An obstacle, by index into [`VehicleGeometry::obstacles`].
    Obstacle(usize),
    /// The ground.
    Ground,
}

/// A pair the vehicle file says may touch.
#[derive(Debug, Clone, PartialEq)]
pub struct FileAllow {
    /// One part.
    pub a: PartName,
    /// The other.
    pub b: PartName,
    /// How deep they may overlap, m; `None`: never checked.
    pub depth: Option<f64>,
    /// Why, in the file's words.
    pub why: String,
    /// Only this arm; `None`: every arm.
    pub arm: Option<ComponentId>,
}

/// Everything a vehicle file gives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VehicleGeometry {
    /// The vehicle's name.
    pub name: String,
    /// Where the file came from (shown with every message about it).
    pub origin: String,
    /// The ground, if the file gives it.
    pub ground: Option<Ground>,
    /// The body's obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Pairs that may touch by design.
    pub allow: Vec<FileAllow>,
}

/// A vehicle file that cannot be used: the file, where in it, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("vehicle file {file}: {what}")]
pub struct VehicleFileError {
    /// The file.
    pub file: String,
    /// What is wrong and where, in words that say what to write instead.
    pub what: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    name: String,
    ground: Option<GroundRepr>,
    #[serde(default, rename = "obstacle")]
    obstacles: Vec<ObstacleRepr>,
    #[serde(default)]
    allow: Vec<AllowRepr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroundRepr {
    z: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObstacleRepr {
    name: String,
    #[serde(rename = "box")]
    cuboid: Option<BoxRepr>,
    cylinder: Option<CylinderRepr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxRepr {
    centre: [f64; 3],
    size: [f64; 3],
    #[serde(default)]
    yaw: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CylinderRepr {
    from: [f64; 3],
    to: [f64; 3],
    radius: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowRepr {
    a: String,
    b: String,
    depth: Option<f64>,
    #[serde(default)]
    why: String,
    arm: Option<String>,
}

/// A vehicle bigger than this is a mistake in units (mm for m), m.
const MAX_EXTENT_M: f64 = 100.0;

impl VehicleGeometry {
    /// The built-in demo vehicle (`assets/vehicles/demo.toml`), for `demo`.
    pub fn demo() -> VehicleGeometry {
        // tests prove the built-in file is valid.
        Self::parse(
            include_str!("../../../assets/vehicles/demo.toml"),
            "assets/vehicles/demo.toml",
        )
        .unwrap_or_default()
    }

    /// Reads a vehicle file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<VehicleGeometry, VehicleFileError> {
        let fail = |what: String| VehicleFileError {
            file: origin.to_owned(),
            what,
        };
        let repr: FileRepr =
            toml::from_str(text).map_err(|e| fail(e.to_string().trim_end().to_owned()))?;
        if repr.obstacles.len() > MAX_ENTRIES || repr.allow.len() > MAX_ENTRIES {
            return Err(fail(format!(
                "{} obstacles and {} allowed pairs: at most {MAX_ENTRIES} of each",
                repr.obstacles.len(),
                repr.allow.len()
            )));
        }
        let ground = match repr.ground {
            Some(g) if !(g.z.is_finite() && g.z.abs() <= MAX_EXTENT_M) => {
                return Err(fail(format!(
                    "[ground] z = {}: give the ground's height in m, vehicle frame (+z down), \
                     within ±{MAX_EXTENT_M} m",
                    g.z
                )));
            }
            Some(g) => Some(Ground { z: g.z }),
            None => None,
        };
        let mut obstacles = Vec::with_capacity(repr.obstacles.len());
        for (i, o) in repr.obstacles.into_iter().enumerate() {
            let at = format!("obstacle {} ({:?})", i + 1, o.name);
            if o.name.is_empty() || o.name == "ground" || parse_arm_part(&o.name).is_some() {
                return Err(fail(format!(
                    "{at}: name it (not empty, not \"ground\", not \"joint K\" or \"link K\")"
                )));
            }
            if obstacles.iter().any(|x: &Obstacle| x.name == o.name) {
                return Err(fail(format!("{at}: a second obstacle of this name")));
            }
            let shape =
                obstacle_shape(o.cuboid, o.cylinder).map_err(|w| fail(format!("{at}: {w}")))?;
            obstacles.push(Obstacle {
                name: o.name,
                shape,
            });
        }
        let mut allow = Vec::with_capacity(repr.allow.len());
        for (i, a) in repr.allow.into_iter().enumerate() {
            let at = format!("allow {}", i + 1);
            let part = |s: &str| {
                part_name(s, &obstacles).ok_or_else(|| {
                    fail(format!(
                        "{at}: {s:?} names no part: write \"joint K\", \"link K\" (K ≥ 2), \
                         \"ground\" or the name of an obstacle of this file"
                    ))
                })
            };
            let (pa, pb) = (part(&a.a)?, part(&a.b)?);
            if let Some(d) = a.depth
                && !(d.is_finite() && (0.0..=MAX_EXTENT_M).contains(&d))
            {
                return Err(fail(format!(
                    "{at}: depth = {d}: give a depth in m, 0 or more"
                )));
            }
            let arm = match a.arm {
                None => None,
                Some(s) => Some(parse_id(&s).ok_or_else(|| {
                    fail(format!(
                        "{at}: arm = {s:?}: write the arm's JAUS ID as \"126.1.10\""
                    ))
                })?),
            };
            allow.push(FileAllow {
                a: pa,
                b: pb,
                depth: a.depth,
                why: a.why,
                arm,
            });
        }
        Ok(VehicleGeometry {
            name: repr.name,
            origin: origin.to_owned(),
            ground,
            obstacles,
            allow,
        })
    }
}

fn finite(v: [f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite() && x.abs() <= MAX_EXTENT_M)
}

fn obstacle_shape(
    cuboid: Option<BoxRepr>,
    cylinder: Option<CylinderRepr>,
) -> Result<ObstacleShape, String> {
    match (cuboid, cylinder) {
        (Some(b), None) => {
            if !finite(b.centre) || !finite(b.size) || b.size.iter().any(|s| *s < 0.0) {
                return Err(format!(
                    "box centre {:?} size {:?}: give finite metres, sizes 0 or more",
                    b.centre, b.size
                ));
            }
            if !b.yaw.is_finite() {
                return Err("box yaw: give radians".into());
            }
            Ok(ObstacleShape::Box(OrientedBox {
                pose: DAffine3::from_rotation_translation(
                    DQuat::from_rotation_z(b.yaw),
                    DVec3::from_array(b.centre),
                ),
                half: DVec3::from_array(b.size) / 2.0,
            }))
        }
        (None, Some(c)) => {
            if !(finite(c.from) && finite(c.to) && c.radius.is_finite() && c.radius >= 0.0) {
                return Err(format!(
                    "cylinder from {:?} to {:?} radius {}: give finite metres, radius 0 or more",
                    c.from, c.to, c.radius
                ));
            }
            Ok(ObstacleShape::Capsule(Capsule {
                from: DVec3::from_array(c.from),
                to: DVec3::from_array(c.to),
                radius: c.radius,
            }))
        }
        _ => Err("give exactly one of box = {…} or cylinder = {…}".into()),
    }
}

fn parse_arm_part(s: &str) -> Option<PartName> {
    let (word, k) = s.trim().split_once(' ')?;
    let k: usize = k.trim().parse().ok()?;
    match word {
        "joint" if k >= 1 => Some(PartName::Joint(k)),
        "link" if k >= 2 => Some(PartName::Link(k)),
        _ => None,
    }
}

fn part_name(s: &str, obstacles: &[Obstacle]) -> Option<PartName> {
    if s == "ground" {
        return Some(PartName::Ground);
    }
    parse_arm_part(s).or_else(|| {
        obstacles
            .iter()
            .position(|o| o.name == s)
            .map(PartName::Obstacle)
    })
}

fn parse_id(s: &str) -> Option<ComponentId> {
    let mut it = s.trim().split('.');
    let id = ComponentId::new(
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    );
    it.next().is_none().then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_vehicle_file_is_valid() {
        let text = include_str!("../../../assets/vehicles/demo.toml");
        let v = VehicleGeometry::parse(text, "demo").unwrap();
        assert!(v.ground.is_some());
        assert!(!v.obstacles.is_empty());
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = VehicleGeometry::parse(
            "name = \"x\"\n[[obstacle]]\nname = \"m\"\ncylinder = { from = [0,0,0], to = [0,0,1], radius = -1 }\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("obstacle 1 (\"m\")"), "{e}");
        let e = VehicleGeometry::parse(
            "name = \"x\"\n[[allow]]\na = \"joint 1\"\nb = \"mast\"\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("\"mast\" names no part"), "{e}");
        let e = VehicleGeometry::parse("name = \"x\"\nfoo = 1\n", "f.toml").unwrap_err();
        assert!(e.to_string().contains("f.toml"), "{e}");
    }
}
