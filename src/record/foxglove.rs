//! Decoded channels in Foxglove's well-known JSON schemas, so Foxglove (and Lichtblick) show
//! the arm in their 3D panel and the session's events in their Log panel without knowing
//! JAUS: `foxglove.FrameTransforms`, `foxglove.SceneUpdate` and `foxglove.Log`, with the
//! published JSON Schemas vendored in `assets/foxglove/` (see its README for the package and
//! version). Pure functions: each writes one compact JSON message into a caller's buffer
//! (cleared first, reused between calls, as [`crate::record::format`] does); the recorder
//! decides when to call them.
//!
//! # Frames
//!
//! ```text
//! world ─▶ vehicle ─▶ manipulator ─▶ link_1 ─▶ … ─▶ link_n ─▶ end_effector ─▶ tool_point
//! ```
//!
//! - `vehicle`: the JAUS vehicle frame, +x front, +y right, **+z down**. Foxglove draws the
//!   display frame with +z up, so with `vehicle` as the display frame the arm appears upside
//!   down. Choose **`world`** as the display frame instead: it is the vehicle frame turned
//!   180° about x (+x front, +y left, +z up), the same world the OCU's own 3D view uses.
//! - `manipulator`: the manipulator base (the mount; identity when the specification has
//!   none).
//! - `link_j`: Crane & Duffy frame j (z along joint axis j), the names the URDF export
//!   ([`crate::record::urdf`]) gives its links, so a URDF loaded in Foxglove follows these
//!   transforms.
//! - `end_effector`: frame n; `tool_point`: the tool offset in it.
//!
//! Every name but `world` and `vehicle` takes the [`ArmFrames`] prefix, so two arms of one
//! vehicle (prefixes such as `126.1.10/`) do not share frames.
//!
//! # Cost
//!
//! Built at up to 50 Hz per arm. The JSON is written by hand into the reused buffer (numbers
//! through `serde_json`'s float formatter, as `format.rs` does); what allocates is the forward
//! kinematics ([`kinematics::forward`], one small `Vec` of frames and one of cylinders).

use glam::{DAffine3, DQuat, DVec3};

use crate::model::arm::ArmSpec;
use crate::model::kinematics::{self, KinematicsError};
use crate::model::update::{LinkState, ManagementState, MarkKind, Outcome, Update};

/// Schema name of the transforms channel.
pub const FRAME_TRANSFORMS_SCHEMA_NAME: &str = "foxglove.FrameTransforms";
/// The published JSON Schema of `foxglove.FrameTransforms`.
pub const FRAME_TRANSFORMS_SCHEMA: &str =
    include_str!("../../assets/foxglove/foxglove.FrameTransforms.json");
/// Schema name of the scene channel.
pub const SCENE_UPDATE_SCHEMA_NAME: &str = "foxglove.SceneUpdate";
/// The published JSON Schema of `foxglove.SceneUpdate`.
pub const SCENE_UPDATE_SCHEMA: &str =
    include_str!("../../assets/foxglove/foxglove.SceneUpdate.json");
/// Schema name of the log channel.
pub const LOG_SCHEMA_NAME: &str = "foxglove.Log";
/// The published JSON Schema of `foxglove.Log`.
pub const LOG_SCHEMA: &str = include_str!("../../assets/foxglove/foxglove.Log.json");

/// The root frame drawn with +z up (the vehicle frame turned 180° about x).
pub const WORLD_FRAME: &str = "world";
/// The JAUS vehicle frame (+x front, +y right, +z down).
pub const VEHICLE_FRAME: &str = "vehicle";

/// The frame names of one arm.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmFrames {
    manipulator: String,
    links: Vec<String>,
    end_effector: String,
    tool_point: String,
}

impl ArmFrames {
    /// Names for an arm of `joints` joints, each but `world` and `vehicle` starting with
    /// `prefix` (empty for a vehicle with one arm).
    pub fn new(prefix: &str, joints: usize) -> Self {
        Self {
            manipulator: format!("{prefix}manipulator"),
            links: (1..=joints).map(|j| format!("{prefix}link_{j}")).collect(),
            end_effector: format!("{prefix}end_effector"),
            tool_point: format!("{prefix}tool_point"),
        }
    }

    /// The manipulator base frame.
    pub fn manipulator(&self) -> &str {
        &self.manipulator
    }

    /// Frame j (1-based), or `None` beyond the arm.
    pub fn link(&self, j: usize) -> Option<&str> {
        self.links.get(j.checked_sub(1)?).map(String::as_str)
    }

    /// The end-effector frame (frame n).
    pub fn end_effector(&self) -> &str {
        &self.end_effector
    }

    /// The tool point frame.
    pub fn tool_point(&self) -> &str {
        &self.tool_point
    }

    /// Number of link frames (joints).
    pub fn joints(&self) -> usize {
        self.links.len()
    }
}

/// `foxglove.Log` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// 1.
    Debug = 1,
    /// 2.
    Info = 2,
    /// 3.
    Warning = 3,
    /// 4.
    Error = 4,
    /// 5.
    Fatal = 5,
}

/// How the scene looks: colours (sRGB 0..1 with alpha), sizes and the near-limit tint. The
/// caller passes the 3D view's own palette and rule (`ui::scene::ScenePalette`), so Foxglove
/// shows what the OCU shows.
pub struct SceneLook<'a> {
    /// Radius of cylinders the specification gives none for, m (the 3D view's default).
    pub default_radius: f64,
    /// Cylinders with a reported radius.
    pub cylinder: [f32; 4],
    /// Cylinders drawn with the default radius.
    pub cylinder_default: [f32; 4],
    /// The line through the frame origins to the tool point.
    pub link: [f32; 4],
    /// The tool point sphere.
    pub tool_point: [f32; 4],
    /// Width of the link line, pixels.
    pub link_width_px: f64,
    /// Diameter of the tool point sphere, m.
    pub tool_point_diameter: f64,
    /// A cylinder's colour for its joint's near-limit warning level (0..1): `(base, level)`.
    pub tint: &'a dyn Fn([f32; 3], f32) -> [f32; 3],
}

/// Writes a `foxglove.FrameTransforms` message for joint positions `q` (rad or m, joint 1
/// first) and a tool point in the end-effector frame (m): world → vehicle → manipulator →
/// `link_1` … `link_n` → `end_effector` → `tool_point`, stamped `t_ns` (ns since the Unix epoch).
pub fn frame_transforms(
    out: &mut Vec<u8>,
    t_ns: u64,
    frames: &ArmFrames,
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
) -> Result<(), KinematicsError> {
    out.clear();
    let pose = kinematics::forward(spec, q, tool_point)?;
    out.extend_from_slice(b"{\"transforms\":[");
    transform(
        out,
        t_ns,
        WORLD_FRAME,
        VEHICLE_FRAME,
        &DAffine3::from_rotation_x(std::f64::consts::PI),
    );
    out.push(b',');
    transform(out, t_ns, VEHICLE_FRAME, &frames.manipulator, &pose.mount);
    let mut parent = &frames.manipulator;
    let mut previous = DAffine3::IDENTITY;
    for (frame, name) in pose.frames.iter().zip(&frames.links) {
        out.push(b',');
        transform(out, t_ns, parent, name, &(previous.inverse() * *frame));
        parent = name;
        previous = *frame;
    }
    out.push(b',');
    transform(out, t_ns, parent, &frames.end_effector, &DAffine3::IDENTITY);
    out.push(b',');
    transform(
        out,
        t_ns,
        &frames.end_effector,
        &frames.tool_point,
        &DAffine3::from_translation(DVec3::from_array(tool_point)),
    );
    out.extend_from_slice(b"]}");
    Ok(())
}

/// Writes a `foxglove.SceneUpdate` for joint positions `q` and a tool point (end-effector
/// frame, m), in the manipulator frame: one entity with every bounding cylinder the
/// specification gives a radius for, one with the cylinders drawn at the default radius,
/// and one with the line through the frame origins to the tool point and a sphere there.
/// `warning(joint, position)` is the near-limit level 0..1 of a joint (0-based index) that
/// tints its cylinders through [`SceneLook::tint`].
#[allow(clippy::too_many_arguments)]
pub fn scene_update(
    out: &mut Vec<u8>,
    t_ns: u64,
    frames: &ArmFrames,
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
    warning: &dyn Fn(usize, f64) -> f32,
    look: &SceneLook<'_>,
) -> Result<(), KinematicsError> {
    out.clear();
    let pose = kinematics::forward(spec, q, tool_point)?;
    let prefix = frames.manipulator.strip_suffix("manipulator").unwrap_or("");
    out.extend_from_slice(b"{\"deletions\":[],\"entities\":[");
    for (e, reported) in [true, false].into_iter().enumerate() {
        if e > 0 {
            out.push(b',');
        }
        let id = if reported {
            "bounding_cylinders"
        } else {
            "bounding_cylinders_default_radius"
        };
        entity_head(out, t_ns, &frames.manipulator, prefix, id);
        let meta = if reported {
            "specification"
        } else {
            "default (the specification gives none)"
        };
        out.extend_from_slice(b",\"metadata\":[{\"key\":\"radius\",\"value\":");
        string(out, meta);
        out.extend_from_slice(b"}],\"arrows\":[],\"cubes\":[]");
        let chosen = pose
            .cylinders
            .iter()
            .filter(|c| c.radius.is_some() == reported);
        let base = if reported {
            look.cylinder
        } else {
            look.cylinder_default
        };
        let color_of = |joint: usize| {
            let index = joint.saturating_sub(1);
            let level = q.get(index).map_or(0.0, |&v| warning(index, v));
            let [r, g, b] = (look.tint)([base[0], base[1], base[2]], level);
            [r, g, b, base[3]]
        };
        // Zero-length cylinders are drawn as spheres of their radius (kinematics.md §7).
        out.extend_from_slice(b",\"spheres\":[");
        let mut first = true;
        for c in chosen.clone().filter(|c| c.length() < 1e-9) {
            comma(out, &mut first);
            let d = 2.0 * c.radius.unwrap_or(look.default_radius).abs();
            out.extend_from_slice(b"{\"pose\":");
            pose_json(out, c.from, DQuat::IDENTITY);
            out.extend_from_slice(b",\"size\":");
            vec3(out, DVec3::splat(d));
            out.extend_from_slice(b",\"color\":");
            color(out, color_of(c.joint));
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"cylinders\":[");
        let mut first = true;
        for c in chosen.filter(|c| c.length() >= 1e-9) {
            comma(out, &mut first);
            let d = 2.0 * c.radius.unwrap_or(look.default_radius).abs();
            let length = c.length();
            let axis = (c.to - c.from) / length;
            out.extend_from_slice(b"{\"pose\":");
            pose_json(
                out,
                (c.from + c.to) * 0.5,
                DQuat::from_rotation_arc(DVec3::Z, axis),
            );
            out.extend_from_slice(b",\"size\":");
            vec3(out, DVec3::new(d, d, length));
            out.extend_from_slice(b",\"bottom_scale\":1,\"top_scale\":1,\"color\":");
            color(out, color_of(c.joint));
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"lines\":[],\"triangles\":[],\"texts\":[],\"models\":[]}");
    }
    // The arm: a line through the frame origins to the tool point, a sphere on the tool point.
    out.push(b',');
    entity_head(out, t_ns, &frames.manipulator, prefix, "arm");
    out.extend_from_slice(b",\"metadata\":[],\"arrows\":[],\"cubes\":[],\"spheres\":[");
    out.extend_from_slice(b"{\"pose\":");
    pose_json(out, pose.tool_point_manipulator, DQuat::IDENTITY);
    out.extend_from_slice(b",\"size\":");
    vec3(out, DVec3::splat(look.tool_point_diameter));
    out.extend_from_slice(b",\"color\":");
    color(out, look.tool_point);
    out.extend_from_slice(b"}],\"cylinders\":[],\"lines\":[{\"type\":0,\"pose\":");
    pose_json(out, DVec3::ZERO, DQuat::IDENTITY);
    out.extend_from_slice(b",\"thickness\":");
    num(out, look.link_width_px);
    out.extend_from_slice(b",\"scale_invariant\":true,\"points\":[");
    vec3(out, DVec3::ZERO);
    for f in &pose.frames {
        out.push(b',');
        vec3(out, f.translation);
    }
    out.push(b',');
    vec3(out, pose.tool_point_manipulator);
    out.extend_from_slice(b"],\"color\":");
    color(out, look.link);
    out.extend_from_slice(
        b",\"colors\":[],\"indices\":[]}],\"triangles\":[],\"texts\":[],\"models\":[]}]}",
    );
    Ok(())
}

/// Writes a `foxglove.Log` message: `name` is the source (e.g. the component or "jaus-ocu"),
/// `message` the text.
pub fn log(out: &mut Vec<u8>, t_ns: u64, level: LogLevel, name: &str, message: &str) {
    out.clear();
    out.extend_from_slice(b"{\"timestamp\":");
    time(out, t_ns);
    out.extend_from_slice(b",\"level\":");
    out.push(b'0' + level as u8);
    out.extend_from_slice(b",\"message\":");
    string(out, message);
    out.extend_from_slice(b",\"name\":");
    string(out, name);
    out.extend_from_slice(b",\"file\":\"\",\"line\":0}");
}

/// The log level of an update that goes to the log channel: control changes, management
/// status (emergency as an error), preset transitions, command outcomes (failures as
/// warnings), timeline marks (gaps and staleness as warnings), link changes (lost as a
/// warning) and errors; `None` for samples and the other facts.
pub fn event_level(update: &Update) -> Option<LogLevel> {
    Some(match update {
        Update::Control { .. } | Update::CurrentPose { .. } => LogLevel::Info,
        Update::Status { state, .. } => match state {
            ManagementState::Emergency | ManagementState::Failure => LogLevel::Error,
            _ => LogLevel::Info,
        },
        Update::CommandOutcome { outcome, .. } => match outcome {
            Outcome::Confirmed | Outcome::Completed => LogLevel::Info,
            Outcome::Rejected(_) | Outcome::TimedOut | Outcome::Failed(_) => LogLevel::Warning,
        },
        Update::Mark { kind, .. } => match kind {
            MarkKind::Emergency => LogLevel::Error,
            MarkKind::Gap | MarkKind::Stale => LogLevel::Warning,
            MarkKind::Control | MarkKind::Status | MarkKind::Transition => LogLevel::Info,
        },
        Update::Link { state, .. } => match state {
            LinkState::Lost => LogLevel::Warning,
            _ => LogLevel::Info,
        },
        Update::Error { .. } => LogLevel::Error,
        _ => return None,
    })
}

fn entity_head(out: &mut Vec<u8>, t_ns: u64, frame: &str, prefix: &str, id: &str) {
    out.extend_from_slice(b"{\"timestamp\":");
    time(out, t_ns);
    out.extend_from_slice(b",\"frame_id\":");
    string(out, frame);
    out.extend_from_slice(b",\"id\":");
    string(out, &format!("{prefix}{id}"));
    out.extend_from_slice(b",\"lifetime\":{\"sec\":0,\"nsec\":0},\"frame_locked\":true");
}

fn transform(out: &mut Vec<u8>, t_ns: u64, parent: &str, child: &str, t: &DAffine3) {
    out.extend_from_slice(b"{\"timestamp\":");
    time(out, t_ns);
    out.extend_from_slice(b",\"parent_frame_id\":");
    string(out, parent);
    out.extend_from_slice(b",\"child_frame_id\":");
    string(out, child);
    out.extend_from_slice(b",\"translation\":");
    vec3(out, t.translation);
    out.extend_from_slice(b",\"rotation\":");
    quaternion(out, rotation(t));
    out.push(b'}');
}

/// The rotation of `t` as a unit quaternion with w ≥ 0 (either sign is the same rotation).
fn rotation(t: &DAffine3) -> DQuat {
    let q = DQuat::from_mat3(&t.matrix3).normalize();
    if q.w < 0.0 { -q } else { q }
}

fn time(out: &mut Vec<u8>, t_ns: u64) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "{{\"sec\":{},\"nsec\":{}}}",
        t_ns / 1_000_000_000,
        t_ns % 1_000_000_000
    );
}

fn pose_json(out: &mut Vec<u8>, position: DVec3, orientation: DQuat) {
    out.extend_from_slice(b"{\"position\":");
    vec3(out, position);
    out.extend_from_slice(b",\"orientation\":");
    quaternion(out, orientation);
    out.push(b'}');
}

fn vec3(out: &mut Vec<u8>, v: DVec3) {
    out.extend_from_slice(b"{\"x\":");
    num(out, v.x);
    out.extend_from_slice(b",\"y\":");
    num(out, v.y);
    out.extend_from_slice(b",\"z\":");
    num(out, v.z);
    out.push(b'}');
}

fn quaternion(out: &mut Vec<u8>, q: DQuat) {
    out.extend_from_slice(b"{\"x\":");
    num(out, q.x);
    out.extend_from_slice(b",\"y\":");
    num(out, q.y);
    out.extend_from_slice(b",\"z\":");
    num(out, q.z);
    out.extend_from_slice(b",\"w\":");
    num(out, q.w);
    out.push(b'}');
}

fn color(out: &mut Vec<u8>, [r, g, b, a]: [f32; 4]) {
    out.extend_from_slice(b"{\"r\":");
    num32(out, r);
    out.extend_from_slice(b",\"g\":");
    num32(out, g);
    out.extend_from_slice(b",\"b\":");
    num32(out, b);
    out.extend_from_slice(b",\"a\":");
    num32(out, a);
    out.push(b'}');
}

fn comma(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
}

/// A number in its shortest round-trip form. The schemas require numbers, so a non-finite
/// value (which forward kinematics has already refused for every input) is written as 0.
fn num(out: &mut Vec<u8>, v: f64) {
    let v = if v.is_finite() { v } else { 0.0 };
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, &v);
}

/// A colour component, clamped to 0..1, in f32's shortest form ("0.3", not f64's widening).
fn num32(out: &mut Vec<u8>, v: f32) {
    let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    let _ = serde_json::to_writer(&mut *out, &v);
}

fn string(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}
