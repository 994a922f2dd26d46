//! Arm description files (`assets/arms/*.toml`): what the simulated manipulator reports in
//! `ReportManipulatorSpecifications`, plus its tool point, start pose and preset poses.
//!
//! The schema is a public interface (the keys below are what users write):
//!
//! ```toml
//! name = "PUMA 560"                  # shown in the UI
//! [mount]                            # ManipulatorCoordinateSystemRec; omit to leave it out
//! position = [0.0, 0.0, 0.0]         # m, vehicle frame (+x front, +y right, +z down)
//! orientation = [1.0, 0.0, 0.0, 0.0] # unit quaternion d, a, b, c (scalar first)
//! [tool]                             # omit for a tool point at the frame-n origin
//! point = [0.0, 0.0, 0.0]            # tool offset in the end-effector frame n
//! [[joint]]                          # one table per joint, joint 1 first
//! name = "waist"                     # optional
//! type = "revolute"                  # "revolute" or "prismatic"
//! offset = 0.67183                   # revolute only (default 0)
//! min = -2.79                        # optional for revolute (both absent = continuous)
//! max = 2.79
//! [[preset]]
//! id = 1
//! name = "Stowed"
//! positions = [0.0]                  # one per joint
//! ```
//!
//! A `[mount]` table gives both `position` and `orientation` (a forgotten orientation would
//! turn the arm upside down in a z-down vehicle frame). Joints 2..n must give `link_length` and
//! `twist` (no default, so a forgotten key cannot silently make a different arm); `angle` is
//! for prismatic joints (default 0). Optional per joint: `max_speed`, `max_effort` (N·m or N),
//! `axis_radius`, `link_radius` (joints 2..n), `home` (default: 0 clamped into the limits).
//!
//! Every value must fit the scaled field that carries it on the wire (`jaus::wire::scales`):
//! we refuse a file we could not report faithfully rather than clamp it. A refusal names the
//! file, the joint or preset (number and name), the key, what is wrong and what is allowed.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::jaus::wire::{Scale, scales};
use crate::model::arm::JointType;
use crate::model::arm::{ArmSpec, Joint, Mount};

/// The names [`ArmFile::builtin`] knows.
pub const BUILTIN: [&str; 3] = ["demo", "puma560", "ur5e"];

/// Most joints `ReportManipulatorSpecifications` can carry (joint 1 + a u8-counted list).
pub const MAX_JOINTS: usize = 255;

/// How far |q| of the mount orientation may be from 1.
pub const UNIT_QUATERNION_TOLERANCE: f64 = 1e-6;

/// The preset ID the wire reserves (IOP `PresetPose`: 255 is never a valid `PoseID`).
pub const RESERVED_PRESET_ID: u8 = 255;

/// Longest joint or preset name, in bytes (u8-counted strings on the wire).
pub const MAX_NAME_BYTES: usize = 255;

/// A named pose the operator can send the arm to (IOP `PresetPose`).
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// `PoseID`, unique within the file, never 255.
    pub id: u8,
    /// `PoseName`, unique within the file.
    pub name: String,
    /// One position per joint, joint 1 first (rad or m), each within the joint's limits.
    pub positions: Vec<f64>,
}

/// A checked arm description: everything the simulated manipulator says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmFile {
    /// Display name of the arm.
    pub name: String,
    /// The specification: mount and joints.
    pub spec: ArmSpec,
    /// Tool point in the end-effector frame n, m (`ReportToolOffset`).
    pub tool_point: [f64; 3],
    /// Start position per joint (rad or m); by default 0 clamped into the joint's limits.
    pub home: Vec<f64>,
    /// Preset poses, in file order.
    pub presets: Vec<Preset>,
}

/// Why an arm file was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub struct ArmFileError {
    /// The file as named in the message (the path for `load`, the origin for `parse`).
    pub file: String,
    /// What went wrong.
    pub kind: ArmFileErrorKind,
}

/// What went wrong with an arm file.
#[derive(Debug, Clone, PartialEq)]
pub enum ArmFileErrorKind {
    /// The file could not be read: the operating system's reason.
    Read(String),
    /// Not TOML, or not this schema (unknown key, missing key, wrong type): the toml crate's
    /// message with line and column.
    Syntax(String),
    /// Well-formed, but breaks a rule.
    Invalid {
        /// The part of the file: `joint 2 ("shoulder")`, `preset 1 ("Stowed")`, `mount`,
        /// `tool`; `None` for the file as a whole. Joints and presets count from 1 in file order.
        place: Option<String>,
        /// The key at fault (`link_length`, `position[2]`), if one key is.
        field: Option<String>,
        /// What is wrong and what is allowed.
        problem: String,
    },
}

impl fmt::Display for ArmFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ArmFileErrorKind::Read(reason) => write!(f, "cannot read {}: {reason}", self.file),
            ArmFileErrorKind::Syntax(message) => write!(f, "{}: {message}", self.file),
            ArmFileErrorKind::Invalid {
                place,
                field,
                problem,
            } => {
                write!(f, "{}: ", self.file)?;
                if let Some(place) = place {
                    write!(f, "{place}: ")?;
                }
                if let Some(field) = field {
                    write!(f, "{field} ")?;
                }
                f.write_str(problem)
            }
        }
    }
}

impl ArmFile {
    /// Reads and checks the arm file at `path`; messages name the file by `path`.
    pub fn load(path: &Path) -> Result<ArmFile, ArmFileError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ArmFileError {
            file: origin.clone(),
            kind: ArmFileErrorKind::Read(e.to_string()),
        })?;
        Self::parse(&text, &origin)
    }

    /// Parses and checks an arm file; `origin` names the file in error messages.
    pub fn parse(text: &str, origin: &str) -> Result<ArmFile, ArmFileError> {
        let repr: FileRepr = toml::from_str(text).map_err(|e| ArmFileError {
            file: origin.to_owned(),
            kind: ArmFileErrorKind::Syntax(e.to_string().trim_end().to_owned()),
        })?;
        check(repr).map_err(|b| b.into_error(origin))
    }

    /// The built-in demo arm (`assets/arms/demo.toml`): a 7-joint ground-robot manipulator.
    pub fn demo() -> ArmFile {
        Self::builtin("demo").expect("the demo arm is built in")
    }

    /// A built-in arm by name (see [`BUILTIN`]): `"demo"`, `"puma560"` or `"ur5e"`.
    pub fn builtin(name: &str) -> Option<ArmFile> {
        let text = match name {
            "demo" => include_str!("../../assets/arms/demo.toml"),
            "puma560" => include_str!("../../assets/arms/puma560.toml"),
            "ur5e" => include_str!("../../assets/arms/ur5e.toml"),
            _ => return None,
        };
        let origin = format!("assets/arms/{name}.toml");
        // tests/arm_files.rs proves every built-in file is valid.
        Some(Self::parse(text, &origin).unwrap_or_else(|e| panic!("built-in arm: {e}")))
    }

    /// The arm as an arm file. For any `ArmFile` that `parse` returned,
    /// `parse(&to_toml(), _)` gives it back unchanged.
    pub fn to_toml(&self) -> String {
        let repr = FileRepr::from(self);
        // Plain data of strings, floats, integers and arrays always serializes.
        toml::to_string(&repr).unwrap_or_else(|e| panic!("arm file serialization: {e}"))
    }
}

// ---------------------------------------------------------------------------------------------
// The file as written: every key optional where the schema allows, checked afterwards.

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mount: Option<MountRepr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<ToolRepr>,
    #[serde(default, rename = "joint")]
    joints: Vec<JointRepr>,
    #[serde(default, rename = "preset", skip_serializing_if = "Vec::is_empty")]
    presets: Vec<PresetRepr>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MountRepr {
    position: [f64; 3],
    orientation: [f64; 4],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolRepr {
    point: [f64; 3],
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum KindRepr {
    Revolute,
    Prismatic,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JointRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(rename = "type")]
    kind: KindRepr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link_length: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    twist: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offset: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    angle: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_effort: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    axis_radius: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link_radius: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    home: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetRepr {
    // Wider than u8 so an out-of-range ID gets our message rather than serde's.
    id: i64,
    name: String,
    positions: Vec<f64>,
}

impl From<&ArmFile> for FileRepr {
    fn from(a: &ArmFile) -> Self {
        let joints = a
            .spec
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let later = i > 0;
                let revolute = j.kind == JointType::Revolute;
                JointRepr {
                    name: j.name.clone(),
                    kind: match j.kind {
                        JointType::Revolute => KindRepr::Revolute,
                        JointType::Prismatic => KindRepr::Prismatic,
                    },
                    link_length: later.then_some(j.link_length),
                    twist: later.then_some(j.twist),
                    offset: revolute.then_some(j.offset),
                    angle: (!revolute).then_some(j.angle),
                    min: j.min,
                    max: j.max,
                    max_speed: j.max_speed,
                    max_effort: j.max_effort,
                    axis_radius: j.axis_radius,
                    link_radius: if later { j.link_radius } else { None },
                    home: a.home.get(i).copied(),
                }
            })
            .collect();
        FileRepr {
            name: a.name.clone(),
            mount: a.spec.mount.map(|m| MountRepr {
                position: m.position,
                orientation: m.orientation,
            }),
            tool: Some(ToolRepr {
                point: a.tool_point,
            }),
            joints,
            presets: a
                .presets
                .iter()
                .map(|p| PresetRepr {
                    id: i64::from(p.id),
                    name: p.name.clone(),
                    positions: p.positions.clone(),
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The rules.

/// Units of one joint kind, for messages.
struct Units {
    position: &'static str,
    speed: &'static str,
    effort: &'static str,
}

fn units(kind: JointType) -> Units {
    match kind {
        JointType::Revolute => Units {
            position: "rad",
            speed: "rad/s",
            effort: "N·m",
        },
        JointType::Prismatic => Units {
            position: "m",
            speed: "m/s",
            effort: "N",
        },
    }
}

/// A number for a message: at most six decimals, no trailing zeros (tiny ones in `e` form).
fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v != 0.0 && v.abs() < 1e-4 {
        return format!("{v:e}");
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// `v` with its unit, if it has one: `1.5 m`, `0.2`.
fn with_unit(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        num(v)
    } else {
        format!("{} {unit}", num(v))
    }
}

/// `"waist"`: the name in quotes, control characters escaped.
fn quoted(name: &str) -> String {
    format!("{name:?}")
}

fn joint_place(number: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("joint {number} ({})", quoted(n)),
        None => format!("joint {number}"),
    }
}

/// A rule broken at `place`, in key `field`.
struct Broken {
    place: Option<String>,
    field: Option<String>,
    problem: String,
}

impl Broken {
    fn into_error(self, file: &str) -> ArmFileError {
        ArmFileError {
            file: file.to_owned(),
            kind: ArmFileErrorKind::Invalid {
                place: self.place,
                field: self.field,
                problem: self.problem,
            },
        }
    }

    fn at(place: &str, field: &str, problem: impl Into<String>) -> Self {
        Self {
            place: Some(place.to_owned()),
            field: Some(field.to_owned()),
            problem: problem.into(),
        }
    }
}

type Check<T = ()> = Result<T, Broken>;

/// `value` must be finite and inside `scale`'s range.
fn in_scale(place: &str, field: &str, value: f64, scale: Scale, unit: &str) -> Check {
    if !value.is_finite() {
        return Err(Broken::at(
            place,
            field,
            format!("is not a finite number ({value})"),
        ));
    }
    if value < scale.lo || value > scale.hi {
        return Err(Broken::at(
            place,
            field,
            format!(
                "{} is outside the range the wire can carry (allowed {}..{})",
                with_unit(value, unit),
                num(scale.lo),
                with_unit(scale.hi, unit)
            ),
        ));
    }
    Ok(())
}

/// A value with range `0..=scale.hi` (radius, effort): negative gets its own message.
fn non_negative(place: &str, field: &str, value: f64, scale: Scale, unit: &str) -> Check {
    if value.is_finite() && value < 0.0 {
        return Err(Broken::at(
            place,
            field,
            format!(
                "{} must not be negative (allowed 0..{})",
                with_unit(value, unit),
                with_unit(scale.hi, unit)
            ),
        ));
    }
    in_scale(
        place,
        field,
        value,
        Scale::new(0.0, scale.hi, scale.bytes),
        unit,
    )
}

/// A key that describes the link before a joint, which joint 1 does not have.
fn not_on_first_joint(place: &str, field: &str, present: bool) -> Check {
    if present {
        return Err(Broken::at(
            place,
            field,
            "is not allowed on joint 1 (the first joint has no link before it; remove it)",
        ));
    }
    Ok(())
}

/// Checks the whole file against the rules.
fn check(repr: FileRepr) -> Check<ArmFile> {
    let n = repr.joints.len();
    if n == 0 {
        return Err(Broken {
            place: None,
            field: None,
            problem: "the arm has no joints (add at least one [[joint]] table)".into(),
        });
    }
    if n > MAX_JOINTS {
        return Err(Broken {
            place: None,
            field: None,
            problem: format!(
                "the arm has {n} joints (at most {MAX_JOINTS} fit in ReportManipulatorSpecifications)"
            ),
        });
    }
    let mount = repr.mount.as_ref().map(mount).transpose()?;
    let tool_point = match &repr.tool {
        Some(t) => {
            for (i, &v) in t.point.iter().enumerate() {
                in_scale("tool", &format!("point[{i}]"), v, scales::TOOL_OFFSET, "m")?;
            }
            t.point
        }
        None => [0.0; 3],
    };
    let mut joints = Vec::with_capacity(n);
    let mut home = Vec::with_capacity(n);
    for (i, j) in repr.joints.iter().enumerate() {
        let (joint, h) = joint(i + 1, j)?;
        joints.push(joint);
        home.push(h);
    }
    let presets = presets(&repr.presets, &joints)?;
    Ok(ArmFile {
        name: repr.name,
        spec: ArmSpec { mount, joints },
        tool_point,
        home,
        presets,
    })
}

/// Checks the mount pose.
fn mount(m: &MountRepr) -> Check<Mount> {
    for (i, &v) in m.position.iter().enumerate() {
        in_scale(
            "mount",
            &format!("position[{i}]"),
            v,
            scales::POSITION_30M,
            "m",
        )?;
    }
    for (i, &v) in m.orientation.iter().enumerate() {
        in_scale(
            "mount",
            &format!("orientation[{i}]"),
            v,
            scales::QUATERNION,
            "",
        )?;
    }
    let norm = m.orientation.iter().map(|c| c * c).sum::<f64>().sqrt();
    if (norm - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
        return Err(Broken::at(
            "mount",
            "orientation",
            format!(
                "is not a unit quaternion: |q| = {norm} (allowed: within 1e-6 of 1; \
                 [d, a, b, c] with d the scalar part, [1.0, 0.0, 0.0, 0.0] for no rotation)"
            ),
        ));
    }
    Ok(Mount {
        position: m.position,
        orientation: m.orientation,
    })
}

/// Checks joint `number` (from 1) and returns it with its home position.
fn joint(number: usize, j: &JointRepr) -> Check<(Joint, f64)> {
    let place = joint_place(number, j.name.as_deref());
    let place = place.as_str();
    let kind = match j.kind {
        KindRepr::Revolute => JointType::Revolute,
        KindRepr::Prismatic => JointType::Prismatic,
    };
    let u = units(kind);

    if let Some(name) = &j.name
        && name.len() > MAX_NAME_BYTES
    {
        return Err(Broken::at(
            place,
            "name",
            format!(
                "is {} bytes long (allowed at most {MAX_NAME_BYTES} bytes in JointNamesList)",
                name.len()
            ),
        ));
    }

    // Which keys belong on this joint.
    if number == 1 {
        not_on_first_joint(place, "link_length", j.link_length.is_some())?;
        not_on_first_joint(place, "twist", j.twist.is_some())?;
        not_on_first_joint(place, "link_radius", j.link_radius.is_some())?;
    } else {
        if j.link_length.is_none() {
            return Err(Broken::at(
                place,
                "link_length",
                format!(
                    "is required on joints 2..n (the length of the link from joint {} in m, \
                     -10..10; write 0.0 if the axes intersect)",
                    number - 1
                ),
            ));
        }
        if j.twist.is_none() {
            return Err(Broken::at(
                place,
                "twist",
                format!(
                    "is required on joints 2..n (the twist of the link from joint {} in rad, \
                     -π..π; write 0.0 if the axes are parallel)",
                    number - 1
                ),
            ));
        }
    }
    match kind {
        JointType::Revolute => {
            if j.angle.is_some() {
                return Err(Broken::at(
                    place,
                    "angle",
                    "is not allowed on a revolute joint (its angle is the joint's variable; \
                     the constant parameter of a revolute joint is `offset`)",
                ));
            }
            match (j.min, j.max) {
                (Some(_), None) => {
                    return Err(Broken::at(
                        place,
                        "max",
                        "is missing (a revolute joint gives both min and max, or neither for a \
                         continuous joint)",
                    ));
                }
                (None, Some(_)) => {
                    return Err(Broken::at(
                        place,
                        "min",
                        "is missing (a revolute joint gives both min and max, or neither for a \
                         continuous joint)",
                    ));
                }
                _ => {}
            }
        }
        JointType::Prismatic => {
            if j.offset.is_some() {
                return Err(Broken::at(
                    place,
                    "offset",
                    "is not allowed on a prismatic joint (its offset is the joint's variable; \
                     the constant parameter of a prismatic joint is `angle`)",
                ));
            }
            for (field, v) in [("min", j.min), ("max", j.max)] {
                if v.is_none() {
                    return Err(Broken::at(
                        place,
                        field,
                        "is required on a prismatic joint (give both min and max travel in m)",
                    ));
                }
            }
        }
    }

    // Values: finite and inside the field's scaled range.
    let link_length = j.link_length.unwrap_or(0.0);
    let twist = j.twist.unwrap_or(0.0);
    let offset = j.offset.unwrap_or(0.0);
    let angle = j.angle.unwrap_or(0.0);
    if number > 1 {
        in_scale(place, "link_length", link_length, scales::LENGTH_U16, "m")?;
        in_scale(place, "twist", twist, scales::ANGLE_U16, "rad")?;
    }
    match kind {
        JointType::Revolute => in_scale(place, "offset", offset, scales::LENGTH_U16, "m")?,
        JointType::Prismatic => in_scale(place, "angle", angle, scales::ANGLE_U16, "rad")?,
    }
    let limit_scale = match kind {
        JointType::Revolute => scales::LIMIT_RAD,
        JointType::Prismatic => scales::LIMIT_M,
    };
    for (field, v) in [("min", j.min), ("max", j.max)] {
        if let Some(v) = v {
            in_scale(place, field, v, limit_scale, u.position)?;
        }
    }
    if let (Some(lo), Some(hi)) = (j.min, j.max)
        && lo >= hi
    {
        return Err(Broken::at(
            place,
            "min",
            format!(
                "{} {p} must be less than max {} {p}",
                num(lo),
                num(hi),
                p = u.position
            ),
        ));
    }
    if let Some(v) = j.max_speed {
        let scale = match kind {
            JointType::Revolute => scales::MAX_SPEED_RAD,
            JointType::Prismatic => scales::MAX_SPEED_M,
        };
        if v.is_finite() && v <= 0.0 {
            return Err(Broken::at(
                place,
                "max_speed",
                format!(
                    "{} {s} must be greater than 0 (allowed above 0 up to {} {s})",
                    num(v),
                    num(scale.hi),
                    s = u.speed
                ),
            ));
        }
        in_scale(
            place,
            "max_speed",
            v,
            Scale::new(0.0, scale.hi, scale.bytes),
            u.speed,
        )?;
    }
    if let Some(v) = j.max_effort {
        non_negative(place, "max_effort", v, scales::MAX_EFFORT, u.effort)?;
    }
    if let Some(v) = j.axis_radius {
        non_negative(place, "axis_radius", v, scales::RADIUS, "m")?;
    }
    if let Some(v) = j.link_radius {
        non_negative(place, "link_radius", v, scales::RADIUS, "m")?;
    }

    let joint = Joint {
        name: j.name.clone(),
        kind,
        link_length,
        twist,
        offset,
        angle,
        min: j.min,
        max: j.max,
        max_speed: j.max_speed,
        max_effort: j.max_effort,
        axis_radius: j.axis_radius,
        link_radius: j.link_radius,
    };
    let home = match j.home {
        Some(h) => {
            within_limits(&joint, place, "home", h, "")?;
            h
        }
        None => joint.clamp(0.0),
    };
    Ok((joint, home))
}

/// `v` (`what` says which value, for presets) must be a position `joint` can take.
fn within_limits(joint: &Joint, place: &str, field: &str, v: f64, what: &str) -> Check {
    let p = units(joint.kind).position;
    if !v.is_finite() {
        return Err(Broken::at(
            place,
            field,
            format!("{what}is not a finite number ({v})"),
        ));
    }
    match (joint.min, joint.max) {
        (Some(lo), Some(hi)) if v < lo || v > hi => Err(Broken::at(
            place,
            field,
            format!(
                "{what}{} {p} is outside the joint's limits (allowed {}..{} {p})",
                num(v),
                num(lo),
                num(hi)
            ),
        )),
        (Some(_), Some(_)) => Ok(()),
        _ => {
            // A continuous joint: any value the position field can carry.
            let s = scales::JOINT_POSITION_RAD;
            if v < s.lo || v > s.hi {
                Err(Broken::at(
                    place,
                    field,
                    format!(
                        "{what}{} {p} is outside the range the wire can carry for a continuous \
                         joint (allowed {}..{} {p})",
                        num(v),
                        num(s.lo),
                        num(s.hi)
                    ),
                ))
            } else {
                Ok(())
            }
        }
    }
}

/// Checks the presets against each other and against the joints' limits.
fn presets(list: &[PresetRepr], joints: &[Joint]) -> Check<Vec<Preset>> {
    let mut out: Vec<Preset> = Vec::with_capacity(list.len());
    let mut by_id: HashMap<u8, usize> = HashMap::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, p) in list.iter().enumerate() {
        let number = i + 1;
        let place = format!("preset {number} ({})", quoted(&p.name));
        let place = place.as_str();
        let id = match u8::try_from(p.id) {
            Ok(RESERVED_PRESET_ID) => {
                return Err(Broken::at(
                    place,
                    "id",
                    "255 is reserved (it means \"no pose\" on the wire; allowed 0..254)",
                ));
            }
            Ok(id) => id,
            Err(_) => {
                return Err(Broken::at(
                    place,
                    "id",
                    format!("{} is out of range (allowed 0..254)", p.id),
                ));
            }
        };
        if p.name.len() > MAX_NAME_BYTES {
            return Err(Broken::at(
                place,
                "name",
                format!(
                    "is {} bytes long (allowed at most {MAX_NAME_BYTES} bytes in PoseName)",
                    p.name.len()
                ),
            ));
        }
        if let Some(&first) = by_id.get(&id) {
            return Err(Broken::at(
                place,
                "id",
                format!(
                    "{id} is already used by preset {} ({}) (preset IDs must be unique)",
                    first + 1,
                    quoted(&list[first].name)
                ),
            ));
        }
        if let Some(&first) = by_name.get(p.name.as_str()) {
            return Err(Broken::at(
                place,
                "name",
                format!(
                    "{} is already used by preset {} (id {}) (preset names must be unique)",
                    quoted(&p.name),
                    first + 1,
                    list[first].id
                ),
            ));
        }
        if p.positions.len() != joints.len() {
            return Err(Broken::at(
                place,
                "positions",
                format!(
                    "has {} values but the arm has {} joints (give one per joint, joint 1 first)",
                    p.positions.len(),
                    joints.len()
                ),
            ));
        }
        for (k, (&v, joint)) in p.positions.iter().zip(joints).enumerate() {
            let what = format!("value for {}: ", joint_place(k + 1, joint.name.as_deref()));
            within_limits(joint, place, "positions", v, &what)?;
        }
        by_id.insert(id, i);
        by_name.insert(&p.name, i);
        out.push(Preset {
            id,
            name: p.name.clone(),
            positions: p.positions.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_JOINT: &str = "name = \"one\"\n[[joint]]\ntype = \"revolute\"\n";

    #[test]
    fn one_revolute_joint_defaults_to_continuous_with_home_zero() {
        let a = ArmFile::parse(ONE_JOINT, "one.toml").unwrap();
        assert_eq!(a.spec.joints.len(), 1);
        assert!(a.spec.joints[0].is_continuous());
        assert_eq!(a.home, vec![0.0]);
        assert_eq!(a.tool_point, [0.0; 3]);
        assert_eq!(a.spec.mount, None);
    }

    #[test]
    fn default_home_is_zero_clamped_into_the_limits() {
        let text = "name = \"p\"\n[[joint]]\ntype = \"prismatic\"\nmin = 0.3\nmax = 0.8\n";
        let a = ArmFile::parse(text, "p.toml").unwrap();
        assert_eq!(a.home, vec![0.3]);
    }

    #[test]
    fn integers_are_accepted_where_floats_are_expected() {
        let text = "name = \"i\"\n[[joint]]\ntype = \"revolute\"\nmin = -2\nmax = 2\n";
        let a = ArmFile::parse(text, "i.toml").unwrap();
        assert_eq!(a.spec.joints[0].min, Some(-2.0));
    }

    #[test]
    fn error_without_place_or_field_is_file_then_problem() {
        let e = ArmFile::parse("name = \"none\"\n", "none.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "none.toml: the arm has no joints (add at least one [[joint]] table)"
        );
    }

    #[test]
    fn message_numbers_are_short() {
        assert_eq!(num(25.132741228718345), "25.132741");
        assert_eq!(num(-10.0), "-10");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(1e-9), "1e-9");
    }

    #[test]
    fn to_toml_of_demo_parses_back_equal() {
        let a = ArmFile::demo();
        assert_eq!(ArmFile::parse(&a.to_toml(), "x.toml").unwrap(), a);
    }

    #[test]
    fn unknown_builtin_is_none() {
        assert!(ArmFile::builtin("telemax").is_none());
        for name in BUILTIN {
            assert!(ArmFile::builtin(name).is_some(), "{name}");
        }
    }
}
