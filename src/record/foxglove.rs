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
//! One frame tree per arm, every arm's root a child of the vehicle frame, each name but
//! `world` and `vehicle` prefixed with the arm's JAUS ID and a slash ([`arm_prefix`]):
//!
//! ```text
//! world ─▶ vehicle ─┬─▶ 126.1.10/manipulator ─▶ 126.1.10/link_1 ─▶ … ─▶ 126.1.10/link_n
//!                   │     ─▶ 126.1.10/end_effector ─▶ 126.1.10/tool_point
//!                   └─▶ 126.1.11/manipulator ─▶ 126.1.11/link_1 ─▶ …
//! ```
//!
//! - `vehicle`: the JAUS vehicle frame, +x front, +y right, **+z down**. Foxglove draws the
//!   display frame with +z up, so with `vehicle` as the display frame the arms appear upside
//!   down. Choose **`world`** as the display frame instead: it is the vehicle frame turned
//!   180° about x (+x front, +y left, +z up), the same world the OCU's own 3D view uses.
//! - `S.N.C/manipulator`: the arm's base (its mount; identity when the specification has
//!   none).
//! - `S.N.C/link_j`: Crane & Duffy frame j (z along joint axis j), the names the URDF export
//!   ([`crate::record::urdf`]) gives its links, so a URDF loaded in Foxglove follows these
//!   transforms.
//! - `S.N.C/end_effector`: frame n; `S.N.C/tool_point`: the tool offset in it.
//!
//! Each arm's transforms are one `foxglove.FrameTransforms` message (world → vehicle → its
//! chain); its scene entities are named `S.N.C/frame_k`. A single-arm producer that names no
//! arm gets the names without a prefix ([`ArmFrames`] takes any prefix).
//!
//! # Cost
//!
//! Built at up to 50 Hz per arm. The JSON is written by hand into the reused buffer (numbers
//! through `serde_json`'s float formatter, as `format.rs` does); what allocates is the forward
//! kinematics ([`kinematics::forward`], one small `Vec` of frames and one of cylinders).

use glam::{DAffine3, DQuat, DVec3};

use crate::model::arm::ArmSpec;
use crate::model::kinematics::{self, CylinderKind, KinematicsError};
use crate::model::limits::limit_tint;
use crate::model::state::ArmState;
use crate::model::update::{
    ArmFact, ComponentId, LinkState, MAX_ARMS, ManagementState, MarkKind, NetFact, Outcome, Remark,
    Update,
};

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

/// How the scene looks: colours (sRGB 0..1 with alpha) and sizes. The caller passes the 3D
/// view's own palette (`ui::theme::ScenePalette::foxglove_look`), so Foxglove shows what the
/// OCU shows; cylinders are tinted by nearness to limits with the model's rule
/// ([`crate::model::limits::limit_tint`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneLook {
    /// Radius of cylinders the specification gives none for, m.
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
    /// A joint getting near its limit.
    pub near_limit: [f32; 3],
    /// A joint at its limit.
    pub at_limit: [f32; 3],
}

impl SceneLook {
    /// The colour of a cylinder whose joint is at warning level `w` (0..1).
    fn tint(&self, base: [f32; 4], w: f32) -> [f32; 4] {
        let [r, g, b] = limit_tint(
            [base[0], base[1], base[2]],
            self.near_limit,
            self.at_limit,
            w,
        );
        [r, g, b, base[3]]
    }
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
/// frame, m). Every primitive is frame-locked to the frame it moves with — one entity per
/// frame (`manipulator`, `link_1` … `link_n`, `end_effector`): the bounding cylinders (those
/// the specification gives a radius for in [`SceneLook::cylinder`], the others at the default
/// radius in [`SceneLook::cylinder_default`]; zero-length ones as spheres), the link line to
/// the next frame's origin, and the tool point sphere. So the scene follows the arm through
/// the transforms alone and changes only when a prismatic joint moves, a joint's nearness to
/// its limits changes its colour, or the specification or tool point changes: the recorder
/// writes it then (and once a second for readers that start in the middle).
/// `warning(joint, position)` is the near-limit level 0..1 of a joint (0-based index).
#[allow(clippy::too_many_arguments)]
pub fn scene_update(
    out: &mut Vec<u8>,
    t_ns: u64,
    frames: &ArmFrames,
    spec: &ArmSpec,
    q: &[f64],
    tool_point: [f64; 3],
    warning: &dyn Fn(usize, f64) -> f32,
    look: &SceneLook,
) -> Result<(), KinematicsError> {
    out.clear();
    let pose = kinematics::forward(spec, q, tool_point)?;
    let prefix = frames.manipulator.strip_suffix("manipulator").unwrap_or("");
    let n = pose.frames.len();
    // Frame f (0 = manipulator, j = link_j) as a transform from the manipulator frame.
    let frame_of = |f: usize| {
        if f == 0 {
            DAffine3::IDENTITY
        } else {
            pose.frames[f - 1]
        }
    };
    let level = |joint: usize| {
        let index = joint.saturating_sub(1);
        q.get(index).map_or(0.0, |&v| warning(index, v))
    };
    out.extend_from_slice(b"{\"deletions\":[],\"entities\":[");
    for f in 0..=n {
        if f > 0 {
            out.push(b',');
        }
        let name = if f == 0 {
            frames.manipulator.as_str()
        } else {
            frames.link(f).unwrap_or_default()
        };
        let to_local = frame_of(f).inverse();
        // A link-length cylinder lies along x of the frame before its joint; an offset or
        // joint cylinder along z of its joint's frame (kinematics.md §7).
        let mine = pose.cylinders.iter().filter(|c| {
            let owner = match c.kind {
                CylinderKind::LinkLength => c.joint.saturating_sub(1),
                CylinderKind::Offset | CylinderKind::Joint => c.joint,
            };
            owner == f
        });
        let id = format!("frame_{f}");
        entity_head(out, t_ns, name, prefix, &id);
        out.extend_from_slice(b",\"metadata\":[],\"arrows\":[],\"cubes\":[],\"spheres\":[");
        let mut first = true;
        let colour = |c: &kinematics::Cylinder| {
            let base = if c.radius.is_some() {
                look.cylinder
            } else {
                look.cylinder_default
            };
            look.tint(base, level(c.joint))
        };
        for c in mine.clone().filter(|c| c.length() < 1e-9) {
            comma(out, &mut first);
            let d = 2.0 * c.radius.unwrap_or(look.default_radius).abs();
            out.extend_from_slice(b"{\"pose\":");
            pose_json(out, to_local.transform_point3(c.from), DQuat::IDENTITY);
            out.extend_from_slice(b",\"size\":");
            vec3(out, DVec3::splat(d));
            out.extend_from_slice(b",\"color\":");
            color(out, colour(c));
            out.push(b'}');
        }
        if f == n {
            // The tool point, in the end-effector frame (frame n).
            comma(out, &mut first);
            out.extend_from_slice(b"{\"pose\":");
            pose_json(out, DVec3::from_array(tool_point), DQuat::IDENTITY);
            out.extend_from_slice(b",\"size\":");
            vec3(out, DVec3::splat(look.tool_point_diameter));
            out.extend_from_slice(b",\"color\":");
            color(out, look.tool_point);
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"cylinders\":[");
        let mut first = true;
        for c in mine.filter(|c| c.length() >= 1e-9) {
            comma(out, &mut first);
            let d = 2.0 * c.radius.unwrap_or(look.default_radius).abs();
            let (from, to) = (
                to_local.transform_point3(c.from),
                to_local.transform_point3(c.to),
            );
            let length = from.distance(to);
            out.extend_from_slice(b"{\"pose\":");
            pose_json(
                out,
                (from + to) * 0.5,
                DQuat::from_rotation_arc(DVec3::Z, (to - from) / length),
            );
            out.extend_from_slice(b",\"size\":");
            vec3(out, DVec3::new(d, d, length));
            out.extend_from_slice(b",\"bottom_scale\":1,\"top_scale\":1,\"color\":");
            color(out, colour(c));
            out.push(b'}');
        }
        // The link line from this frame's origin to the next frame's (or to the tool point).
        let next = if f < n {
            to_local.transform_point3(frame_of(f + 1).translation)
        } else {
            DVec3::from_array(tool_point)
        };
        out.extend_from_slice(b"],\"lines\":[{\"type\":0,\"pose\":");
        pose_json(out, DVec3::ZERO, DQuat::IDENTITY);
        out.extend_from_slice(b",\"thickness\":");
        num(out, look.link_width_px);
        out.extend_from_slice(b",\"scale_invariant\":true,\"points\":[");
        vec3(out, DVec3::ZERO);
        out.push(b',');
        vec3(out, next);
        out.extend_from_slice(b"],\"color\":");
        color(out, look.link);
        out.extend_from_slice(
            b",\"colors\":[],\"indices\":[]}],\"triangles\":[],\"texts\":[],\"models\":[]}",
        );
    }
    out.extend_from_slice(b"]}");
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
    match update {
        Update::Arm { fact, .. } => Some(match fact {
            ArmFact::Control { .. } | ArmFact::CurrentPose { .. } => LogLevel::Info,
            ArmFact::Status { state, .. } => match state {
                ManagementState::Emergency | ManagementState::Failure => LogLevel::Error,
                _ => LogLevel::Info,
            },
            ArmFact::Link { state, .. } => match state {
                LinkState::Lost => LogLevel::Warning,
                _ => LogLevel::Info,
            },
            ArmFact::Remark(r) => remark_level(r),
            _ => return None,
        }),
        Update::Net(NetFact::Remark(r)) => Some(remark_level(r)),
        Update::Net(_) => None,
    }
}

/// [`event_level`] of what is said about an arm or the network.
fn remark_level(r: &Remark) -> LogLevel {
    match r {
        Remark::CommandOutcome { outcome, .. } => match outcome {
            Outcome::Confirmed | Outcome::Completed => LogLevel::Info,
            Outcome::Rejected(_)
            | Outcome::TimedOut
            | Outcome::Failed(_)
            | Outcome::NoAnswer { .. } => LogLevel::Warning,
        },
        Remark::Mark { kind, .. } => match kind {
            MarkKind::Emergency => LogLevel::Error,
            MarkKind::Gap
            | MarkKind::Stale
            | MarkKind::Threshold
            | MarkKind::Network
            | MarkKind::Clearance => LogLevel::Warning,
            MarkKind::Control
            | MarkKind::Status
            | MarkKind::Transition
            | MarkKind::Command
            | MarkKind::Recording
            | MarkKind::Note => LogLevel::Info,
        },
        Remark::Error { .. } => LogLevel::Error,
    }
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

/// A number rounded to 1e-8 (10 nm, 10 nrad: far below what a JAUS specification or a joint
/// position carries) in its shortest form, so the JSON is half as long and compresses better
/// than with every float's 17 digits. The schemas require numbers, so a non-finite value
/// (which forward kinematics has already refused for every input) is written as 0.
fn num(out: &mut Vec<u8>, v: f64) {
    let v = if v.is_finite() {
        (v * 1e8).round() / 1e8
    } else {
        0.0
    };
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

/// The Foxglove channels of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoxgloveTopic {
    /// `foxglove.FrameTransforms`.
    Transforms,
    /// `foxglove.SceneUpdate`.
    Scene,
    /// `foxglove.Log`.
    Log,
}

impl FoxgloveTopic {
    /// Every Foxglove topic.
    pub const ALL: [FoxgloveTopic; 3] = [
        FoxgloveTopic::Transforms,
        FoxgloveTopic::Scene,
        FoxgloveTopic::Log,
    ];

    /// The MCAP topic.
    pub fn topic(self) -> &'static str {
        match self {
            FoxgloveTopic::Transforms => "/foxglove/transforms",
            FoxgloveTopic::Scene => "/foxglove/scene",
            FoxgloveTopic::Log => "/foxglove/log",
        }
    }

    /// The schema's name and the published JSON Schema.
    pub fn schema(self) -> (&'static str, &'static str) {
        match self {
            FoxgloveTopic::Transforms => (FRAME_TRANSFORMS_SCHEMA_NAME, FRAME_TRANSFORMS_SCHEMA),
            FoxgloveTopic::Scene => (SCENE_UPDATE_SCHEMA_NAME, SCENE_UPDATE_SCHEMA),
            FoxgloveTopic::Log => (LOG_SCHEMA_NAME, LOG_SCHEMA),
        }
    }
}

/// Where [`FoxgloveStream`] hands each message to write: its topic and its JSON.
pub type Emit<'a, E> = dyn FnMut(FoxgloveTopic, &[u8]) -> Result<(), E> + 'a;

/// Shortest time between two transform messages, ns: at most 25 Hz, whatever the joint
/// position rate. Foxglove interpolates between transforms, so the arm moves smoothly; at
/// 50 Hz the default recording would grow past twice its size without these channels
/// (`cargo bench --bench record` prints the sizes per hour).
pub const TRANSFORMS_INTERVAL_NS: u64 = 40_000_000;
/// Longest time between two scene messages, ns: the scene is frame-locked and changes
/// rarely, but a reader that starts in the middle of a file needs one within a second.
pub const SCENE_REFRESH_NS: u64 = 1_000_000_000;
/// Shortest time between two scene messages, ns: a telescoping joint that moves all the time
/// would otherwise rewrite the whole scene at the joint position rate (the scene is ten times
/// the size of the transforms); its cylinder's length follows at 4 Hz.
pub const SCENE_INTERVAL_NS: u64 = 250_000_000;

/// One arm's part of the Foxglove channels: its frames, what it looks like, when its
/// transforms and scene were last written.
#[derive(Debug, Clone)]
struct ArmScene {
    /// The arm (`None`: facts of a single-arm producer with no focus named).
    id: Option<ComponentId>,
    frames: ArmFrames,
    tool_point: [f64; 3],
    last_transforms: Option<u64>,
    last_scene: Option<u64>,
    scene_key: Vec<i64>,
    changed: bool,
    /// What the arm said of its specification, presets, pose, speeds and where its joints
    /// are: a joint resting on a limit where a preset or a rest pose put it is not tinted
    /// ([`ArmState::joint_warnings`], as the window draws it). The operator's jogs are not
    /// in the updates: a joint jogged onto its limit is tinted here.
    state: ArmState,
}

impl ArmScene {
    fn new(id: Option<ComponentId>) -> Self {
        Self {
            id,
            frames: ArmFrames::new(&arm_prefix(id), 0),
            tool_point: [0.0; 3],
            last_transforms: None,
            last_scene: None,
            scene_key: Vec::new(),
            changed: true,
            state: ArmState::default(),
        }
    }
}

/// The frame name prefix of an arm: its JAUS ID and a slash (`126.1.10/`), nothing for a
/// single-arm producer that names no arm.
pub fn arm_prefix(id: Option<ComponentId>) -> String {
    id.map(|id| format!("{id}/")).unwrap_or_default()
}

/// What goes to the Foxglove channels of a recording, decided from the observer's updates,
/// for every arm: each arm its own frame tree under the vehicle (names prefixed with its
/// ID, [`arm_prefix`]) and its own scene entities, so the 3D panel shows the whole vehicle.
/// Per arm: the transforms on joint positions (at most every [`TRANSFORMS_INTERVAL_NS`]), the
/// scene when the specification or tool point changes, when a prismatic joint moved by a
/// millimetre or a joint's near-limit colour by a step of 1/20 (at most every
/// [`SCENE_INTERVAL_NS`]), and every [`SCENE_REFRESH_NS`]; and a log line for each event
/// [`event_level`] names (its `name` is `S.N.C/kind` for an event about one arm, the kind
/// otherwise). Facts about an arm come as [`Update::Arm`], which names it. At most [`MAX_ARMS`] arms are
/// drawn (the observer follows no more). Sans-I/O: the recorder writes what it is handed.
#[derive(Debug, Clone)]
pub struct FoxgloveStream {
    look: SceneLook,
    arms: Vec<ArmScene>,
    /// The key of the newest sample, kept between samples to avoid an allocation each.
    key_buf: Vec<i64>,
    buf: Vec<u8>,
}

impl FoxgloveStream {
    /// A stream drawing the scene with `look`.
    pub fn new(look: SceneLook) -> Self {
        Self {
            look,
            arms: Vec::new(),
            key_buf: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// The index of `id`'s scene, made on first sight; `None` past [`MAX_ARMS`].
    fn arm(&mut self, id: Option<ComponentId>) -> Option<usize> {
        if let Some(i) = self.arms.iter().position(|a| a.id == id) {
            return Some(i);
        }
        if self.arms.len() >= MAX_ARMS {
            return None;
        }
        self.arms.push(ArmScene::new(id));
        Some(self.arms.len() - 1)
    }

    /// Takes one update, logged at `t_ns` (ns since the Unix epoch), and hands `emit` each
    /// message to write then.
    pub fn update<E>(
        &mut self,
        update: &Update,
        t_ns: u64,
        emit: &mut Emit<'_, E>,
    ) -> Result<(), E> {
        let arm = update.arm_id();
        match update {
            Update::Arm {
                arm,
                fact: ArmFact::Specification { spec, .. },
            } => {
                if let Some(i) = self.arm(Some(*arm)) {
                    let a = &mut self.arms[i];
                    a.frames = ArmFrames::new(&arm_prefix(a.id), spec.joint_count());
                    a.state.spec = Some(spec.clone());
                    a.changed = true;
                }
            }
            Update::Arm {
                arm,
                fact: ArmFact::ToolOffset { point, .. },
            } => {
                if let Some(i) = self.arm(Some(*arm)) {
                    self.arms[i].tool_point = *point;
                    self.arms[i].changed = true;
                }
            }
            Update::Arm {
                arm,
                fact: fact @ ArmFact::JointPositions { values, .. },
            } => {
                return match self.arm(Some(*arm)) {
                    Some(i) => {
                        self.arms[i].state.apply_arm(fact);
                        self.positions(i, values, t_ns, emit)
                    }
                    None => Ok(()),
                };
            }
            Update::Arm {
                arm,
                fact:
                    fact @ (ArmFact::Presets { .. }
                    | ArmFact::CurrentPose { .. }
                    | ArmFact::JointVelocities { .. }),
            } => {
                if let Some(i) = self.arm(Some(*arm)) {
                    self.arms[i].state.apply_arm(fact);
                }
            }
            _ => {}
        }
        if let Some(level) = event_level(update)
            && let Some((kind, label)) = crate::record::format::event_label(update)
        {
            match arm {
                Some(arm) => log(&mut self.buf, t_ns, level, &format!("{arm}/{kind}"), &label),
                None => log(&mut self.buf, t_ns, level, kind, &label),
            }
            emit(FoxgloveTopic::Log, &self.buf)?;
        }
        Ok(())
    }

    fn positions<E>(
        &mut self,
        i: usize,
        q: &[f64],
        t_ns: u64,
        emit: &mut Emit<'_, E>,
    ) -> Result<(), E> {
        let Self {
            look,
            arms,
            key_buf,
            buf,
            ..
        } = self;
        let a = &mut arms[i];
        let Some(spec) = &a.state.spec else {
            return Ok(());
        };
        if q.len() != spec.joint_count() {
            return Ok(());
        }
        if a.last_transforms
            .is_none_or(|last| t_ns.saturating_sub(last) >= TRANSFORMS_INTERVAL_NS)
            && frame_transforms(buf, t_ns, &a.frames, spec, q, a.tool_point).is_ok()
        {
            a.last_transforms = Some(t_ns);
            emit(FoxgloveTopic::Transforms, buf)?;
        }
        let due = a
            .last_scene
            .is_none_or(|last| t_ns.saturating_sub(last) >= SCENE_REFRESH_NS);
        let allowed = a
            .last_scene
            .is_none_or(|last| t_ns.saturating_sub(last) >= SCENE_INTERVAL_NS);
        // Inside the scene interval nothing below can emit: skip the per-joint work (the
        // recorder meets this on almost every 1 kHz sample, issue 14).
        if !(a.changed || due || allowed) {
            return Ok(());
        }
        // The key of what the scene shows (near-limit steps, prismatic millimetres), built
        // in a kept buffer: most samples compare equal and emit nothing.
        // Rest-aware: a joint resting where it was sent counts 0 (as the window).
        let warnings = a.state.joint_warnings();
        key_buf.clear();
        key_buf.extend(
            warnings
                .iter()
                .map(|w| (f64::from(*w) * 20.0).round() as i64)
                .chain(
                    spec.joints
                        .iter()
                        .zip(q)
                        .filter(|(j, _)| j.is_prismatic())
                        .map(|(_, v)| (v * 1000.0).round() as i64),
                ),
        );
        if !(a.changed || due || *key_buf != a.scene_key) {
            return Ok(());
        }
        let key = std::mem::take(key_buf);
        if scene_update(
            buf,
            t_ns,
            &a.frames,
            spec,
            q,
            a.tool_point,
            &|j, _| warnings.get(j).copied().unwrap_or(0.0),
            look,
        )
        .is_ok()
        {
            a.changed = false;
            *key_buf = std::mem::replace(&mut a.scene_key, key);
            a.last_scene = Some(t_ns);
            emit(FoxgloveTopic::Scene, buf)?;
        }
        Ok(())
    }
}
