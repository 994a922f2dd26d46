//! The rules an arm file must follow: the keys each joint takes, every value inside the
//! scaled field that carries it on the wire, presets unique and inside the joints' limits.
//! A broken rule names the place, the key, what is wrong and what is allowed.

use std::collections::HashMap;

use super::repr::{FileRepr, JointRepr, KindRepr, MountRepr, PresetRepr};
use super::{
    ArmFile, ArmFileError, ArmFileErrorKind, MAX_JOINTS, MAX_NAME_BYTES, Preset,
    RESERVED_PRESET_ID, UNIT_QUATERNION_TOLERANCE,
};
use crate::jaus::wire::{Scale, scales};
use crate::model::arm::{ArmSpec, Joint, JointType, Mount};

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
pub(super) fn num(v: f64) -> String {
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
pub(super) struct Broken {
    place: Option<String>,
    field: Option<String>,
    problem: String,
}

impl Broken {
    pub(super) fn into_error(self, file: &str) -> ArmFileError {
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

pub(super) type Check<T = ()> = Result<T, Broken>;

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
pub(super) fn check(repr: FileRepr) -> Check<ArmFile> {
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
    joint_keys(number, place, kind, j)?;
    joint_values(number, place, kind, j)?;
    let joint = Joint {
        name: j.name.clone(),
        kind,
        link_length: j.link_length.unwrap_or(0.0),
        twist: j.twist.unwrap_or(0.0),
        offset: j.offset.unwrap_or(0.0),
        angle: j.angle.unwrap_or(0.0),
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

/// Which keys joint `number` may and must have: the name's length, the link keys joint 1 does
/// not have, and each kind's constant parameter and limits.
fn joint_keys(number: usize, place: &str, kind: JointType, j: &JointRepr) -> Check {
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
    Ok(())
}

/// Joint `number`'s values: finite and inside the field's scaled range, limits in order,
/// speed above 0, effort and radii not negative.
fn joint_values(number: usize, place: &str, kind: JointType, j: &JointRepr) -> Check {
    let u = units(kind);
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
    Ok(())
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
