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

use std::fmt;
use std::path::Path;

use crate::model::arm::ArmSpec;

mod repr;
mod rules;

use repr::FileRepr;
use rules::check;

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

    /// The presets as the arm reports them (`ReportPresetPoseCapabilities` and
    /// `ReportPresetPoseSpecifications`: id, name and positions), in file order.
    pub fn preset_infos(&self) -> Vec<crate::model::update::PresetInfo> {
        self.presets
            .iter()
            .map(|p| crate::model::update::PresetInfo {
                id: p.id,
                name: p.name.clone(),
                positions: Some(p.positions.clone()),
            })
            .collect()
    }

    /// The built-in demo arm (`assets/arms/demo.toml`): a 7-joint ground-robot manipulator.
    ///
    /// # Panics
    ///
    /// Never for the shipped file: it is compiled in and `tests/arm_files.rs` checks it.
    #[allow(
        clippy::expect_used,
        reason = "\"demo\" is built in, and tests/arm_files.rs proves every built-in file valid"
    )]
    pub fn demo() -> ArmFile {
        Self::builtin("demo").expect("the demo arm is built in")
    }

    /// A built-in arm by name (see [`BUILTIN`]): `"demo"`, `"puma560"` or `"ur5e"`.
    ///
    /// # Panics
    ///
    /// If a built-in file breaks the rules: a bug in the build, caught by `tests/arm_files.rs`,
    /// which parses every one.
    pub fn builtin(name: &str) -> Option<ArmFile> {
        let text = match name {
            "demo" => include_str!("../../../assets/arms/demo.toml"),
            "puma560" => include_str!("../../../assets/arms/puma560.toml"),
            "ur5e" => include_str!("../../../assets/arms/ur5e.toml"),
            _ => return None,
        };
        let origin = format!("assets/arms/{name}.toml");
        // tests/arm_files.rs proves every built-in file is valid.
        Some(Self::parse(text, &origin).unwrap_or_else(|e| panic!("built-in arm: {e}")))
    }

    /// The arm as an arm file. For any `ArmFile` that `parse` returned,
    /// `parse(&to_toml(), _)` gives it back unchanged.
    ///
    /// # Panics
    ///
    /// Never: the file's TOML form is plain data (strings, floats, integers and arrays), which
    /// always serializes.
    pub fn to_toml(&self) -> String {
        let repr = FileRepr::from(self);
        // Plain data of strings, floats, integers and arrays always serializes.
        toml::to_string(&repr).unwrap_or_else(|e| panic!("arm file serialization: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::rules::num;
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
        assert_eq!(num(25.132_741_228_718_345), "25.132741");
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
