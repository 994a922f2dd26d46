//! The MCAP layout jaus-ocu writes and reads: raw channels (one per direction and peer,
//! message = the UDP payload untouched), decoded JSON channels with JSON Schema for Foxglove
//! and Lichtblick, and metadata records.
//!
//! Raw channels are the recording; everything else is derived from them (replay re-decodes the
//! raw datagrams and never reads the decoded channels), so the decoded layout can change
//! without breaking old files.
//!
//! # Which arm a decoded message is about
//!
//! One rule for every decoded channel: a message about one manipulator carries
//! `"component": "S.N.C"`, the arm's JAUS ID (subsystem.node.component), right after `"t"`;
//! a message about no arm in particular (a component found, the focus, an error of the
//! network) has no `component`. Topics are the same whatever the number of arms:
//! `/jaus/joint_positions` holds the positions of every arm, `/jaus/specification` every
//! arm's specification, each message naming its arm — a reader filters on `component` (in
//! Foxglove: a message path filter such as `/jaus/joint_positions{component=="126.1.10"}`).
//! Per-arm topics were not chosen: the channel set would depend on the arms present, and
//! readers written for one arm would find nothing under the names they know. The joint,
//! force/torque and specification schemas require `component` (every such message is about
//! one arm); in `/jaus/events` it is present exactly when the event is about one arm (control,
//! status, emergency, transitions, gaps, link, outcomes of commands to it).
//!
//! The recorder gets every per-arm fact from the observer as an [`Update::Arm`], which is
//! where `component` comes from.
//!
//! The "arm" metadata: one record per arm, named `arm/S.N.C` ([`arm_metadata_name`]), written
//! when that arm's first specification is seen, with its `component_id`, `joints` and, when
//! known, `name`. Per-arm names rather than one name repeated: readers that index metadata by
//! name (jaus-ocu's own, `mcap info`) keep every arm. Files recorded before issue 19 have one
//! record named `arm` ([`ARM_METADATA`]) for the arm the OCU selected.
//!
//! Decoded messages are written as JSON text straight into a reused buffer: the recorder runs
//! this for every report at up to hundreds of thousands of datagrams a second, and a
//! `serde_json::Value` tree per message would cost an allocation per field.
//!
//! Over 800 lines with its tests: the layout and the tests that pin it stay in one file.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::SocketAddr;

use crate::model::arm::ArmSpec;
use crate::model::arm::JointType;
use crate::model::update::{
    ArmFact, ComponentId, ControlState, ManagementState, NetFact, Outcome, PoseState, Remark,
    Signal, Update,
};
use crate::net::tap::Direction;

/// The MCAP header's profile.
pub const PROFILE: &str = "jaus-ocu";

/// The MCAP header's library field: the program and its version.
pub const LIBRARY: &str = concat!("jaus-ocu ", env!("CARGO_PKG_VERSION"));

/// Message encoding of the raw channels: one JUDP datagram (the UDP payload) per message.
pub const RAW_ENCODING: &str = "judp";

/// Message encoding of the decoded channels.
pub const JSON_ENCODING: &str = "json";

/// Schema encoding of the decoded channels (MCAP well-known encoding for JSON Schema text).
pub const SCHEMA_ENCODING: &str = "jsonschema";

/// Topic prefix of datagrams received from a peer.
pub const RX_TOPIC_PREFIX: &str = "/judp/rx/";

/// Topic prefix of datagrams sent to a peer.
pub const TX_TOPIC_PREFIX: &str = "/judp/tx/";

/// Raw channel metadata key: `"rx"` or `"tx"`.
pub const META_DIRECTION: &str = "direction";

/// Raw channel metadata key: the peer as `ip:port`.
pub const META_PEER: &str = "peer";

/// Name of the metadata record written when recording starts.
pub const SESSION_METADATA: &str = "session";

/// Name of the one "arm" metadata record of files recorded before issue 19 (the selected
/// arm's); files now have one per arm, named by [`arm_metadata_name`].
pub const ARM_METADATA: &str = "arm";

/// Prefix of the per-arm metadata records: `arm/S.N.C`.
pub const ARM_METADATA_PREFIX: &str = "arm/";

/// The name of arm `id`'s metadata record, written when its first specification is seen:
/// `arm/126.1.10`.
pub fn arm_metadata_name(id: ComponentId) -> String {
    format!("{ARM_METADATA_PREFIX}{id}")
}

/// Name of the metadata record written when a recording is finished properly (absent after
/// a crash): datagram counts, end time, and datagrams dropped because the recorder was behind.
pub const SESSION_END_METADATA: &str = "session_end";

/// Name of the metadata record written after the latched datagrams at the start of a
/// recording (`net::latch`): state received before recording began, written first so the
/// recording stands on its own. Those messages are logged at the recording's start and
/// published at their own receive time (publish time < log time marks each of them).
pub const LATCHED_METADATA: &str = "latched";

/// "latched" key (and "`session_end`" key): how many datagrams were latched.
pub const KEY_LATCHED_COUNT: &str = "latched_datagrams";

/// "latched" key: when recording began, ns since the Unix epoch (decimal).
pub const KEY_RECORDING_START_NS: &str = "recording_start_ns";

/// "`session_end`" key: datagrams received and recorded.
pub const KEY_DATAGRAMS_RX: &str = "datagrams_rx";

/// "`session_end`" key: datagrams sent and recorded.
pub const KEY_DATAGRAMS_TX: &str = "datagrams_tx";

/// "`session_end`" key: time of the last datagram, RFC 3339 UTC.
pub const KEY_END_TIME: &str = "end_time";

/// "`session_end`" key: datagrams the network side could not hand to the recorder (it was
/// behind), so not in the file. Absent when the recorder was not fed by a tap.
pub const KEY_DROPPED: &str = "dropped";

/// "`session_end`" key: datagrams the kernel dropped at the OCU's socket while recording (its
/// receive buffer was full), so neither seen by the OCU nor in the file. Absent when the
/// recorder was not fed by a network side's tap or the system does not say.
pub const KEY_KERNEL_DROPPED: &str = "kernel_dropped";

/// "`session_end`" key: decoded samples left out of the decoded channels while the recorder
/// was behind (`RecorderConfig::thin_when_behind`); their datagrams are in the raw channels.
/// Absent when none were.
pub const KEY_THINNED: &str = "decoded_thinned";

/// "session" key: the version of jaus-ocu that recorded.
pub const KEY_OCU_VERSION: &str = "ocu_version";

/// "session" key: the time origin, ns since the Unix epoch (decimal); replay times are seconds
/// since it.
pub const KEY_SESSION_START_NS: &str = "session_start_ns";

/// "session" key: the time origin as RFC 3339 UTC, for people.
pub const KEY_START_TIME: &str = "start_time";

/// "session" key: the recording OCU's own address (`ip:port` its socket is bound to), when
/// the caller knows it when recording starts (the GUI does); `jaus-ocu export --pcapng` puts
/// it on the OCU's side of every packet.
pub const KEY_LOCAL_ADDRESS: &str = "local_address";

/// "session" key: the recording OCU's JAUS ID (given by the caller).
pub const KEY_OCU_ID: &str = "ocu_id";

/// "arm" key: the manipulator's JAUS ID (`S.N.C`).
pub const KEY_COMPONENT_ID: &str = "component_id";

/// "arm" key: the number of joints.
pub const KEY_JOINTS: &str = "joints";

/// "arm" key: the component's identification string, when known.
pub const KEY_NAME: &str = "name";

/// The topic of a raw channel: `/judp/rx/<ip:port>` or `/judp/tx/<ip:port>`.
pub fn raw_topic(direction: Direction, peer: SocketAddr) -> String {
    let prefix = match direction {
        Direction::Rx => RX_TOPIC_PREFIX,
        Direction::Tx => TX_TOPIC_PREFIX,
    };
    format!("{prefix}{peer}")
}

/// The metadata of a raw channel.
pub fn raw_channel_metadata(direction: Direction, peer: SocketAddr) -> BTreeMap<String, String> {
    BTreeMap::from([
        (META_DIRECTION.to_owned(), direction.as_str().to_owned()),
        (META_PEER.to_owned(), peer.to_string()),
    ])
}

/// Direction and peer of a raw channel: from its metadata, else from its topic; `None` when
/// neither says.
pub fn parse_raw_channel(
    topic: &str,
    metadata: &BTreeMap<String, String>,
) -> Option<(Direction, SocketAddr)> {
    let from_meta = || {
        let direction = match metadata.get(META_DIRECTION)?.as_str() {
            "rx" => Direction::Rx,
            "tx" => Direction::Tx,
            _ => return None,
        };
        Some((direction, metadata.get(META_PEER)?.parse().ok()?))
    };
    from_meta().or_else(|| {
        if let Some(peer) = topic.strip_prefix(RX_TOPIC_PREFIX) {
            Some((Direction::Rx, peer.parse().ok()?))
        } else {
            Some((
                Direction::Tx,
                topic.strip_prefix(TX_TOPIC_PREFIX)?.parse().ok()?,
            ))
        }
    })
}

/// A decoded (JSON) channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecodedTopic {
    /// Joint positions: `{"t", "component", "positions": [rad or m]}`.
    JointPositions,
    /// Joint velocities: `{"t", "component", "velocities": [rad/s or m/s]}`.
    JointVelocities,
    /// Joint efforts: `{"t", "component", "efforts": [% of maximum]}`.
    JointEfforts,
    /// Joint forces/torques: `{"t", "component", "force_torques": [N·m or N]}`.
    JointForceTorques,
    /// End-effector force/torque: `{"t", "component", "force": {x,y,z}, "torque": {x,y,z}}`.
    ForceTorque,
    /// Every arm's specification, each naming its `component`.
    Specification,
    /// Discrete events: control, status, emergency, transitions, gaps, outcomes, ...;
    /// `component` when about one arm.
    Events,
}

impl DecodedTopic {
    /// Every decoded topic.
    pub const ALL: [DecodedTopic; 7] = [
        DecodedTopic::JointPositions,
        DecodedTopic::JointVelocities,
        DecodedTopic::JointEfforts,
        DecodedTopic::JointForceTorques,
        DecodedTopic::ForceTorque,
        DecodedTopic::Specification,
        DecodedTopic::Events,
    ];

    /// Position in [`DecodedTopic::ALL`] (for per-topic tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The MCAP topic.
    pub fn topic(self) -> &'static str {
        match self {
            DecodedTopic::JointPositions => "/jaus/joint_positions",
            DecodedTopic::JointVelocities => "/jaus/joint_velocities",
            DecodedTopic::JointEfforts => "/jaus/joint_efforts",
            DecodedTopic::JointForceTorques => "/jaus/joint_force_torques",
            DecodedTopic::ForceTorque => "/jaus/force_torque",
            DecodedTopic::Specification => "/jaus/specification",
            DecodedTopic::Events => "/jaus/events",
        }
    }

    /// The topic of a decoded channel by name.
    pub fn from_topic(topic: &str) -> Option<DecodedTopic> {
        Self::ALL.into_iter().find(|d| d.topic() == topic)
    }

    /// The schema record's name.
    pub fn schema_name(self) -> &'static str {
        match self {
            DecodedTopic::JointPositions => "jaus_ocu.JointPositions",
            DecodedTopic::JointVelocities => "jaus_ocu.JointVelocities",
            DecodedTopic::JointEfforts => "jaus_ocu.JointEfforts",
            DecodedTopic::JointForceTorques => "jaus_ocu.JointForceTorques",
            DecodedTopic::ForceTorque => "jaus_ocu.ForceTorque",
            DecodedTopic::Specification => "jaus_ocu.Specification",
            DecodedTopic::Events => "jaus_ocu.Event",
        }
    }

    /// The JSON Schema (draft 2020-12) of the topic's messages.
    pub fn schema(self) -> &'static str {
        match self {
            DecodedTopic::JointPositions => SCHEMA_JOINT_POSITIONS,
            DecodedTopic::JointVelocities => SCHEMA_JOINT_VELOCITIES,
            DecodedTopic::JointEfforts => SCHEMA_JOINT_EFFORTS,
            DecodedTopic::JointForceTorques => SCHEMA_JOINT_FORCE_TORQUES,
            DecodedTopic::ForceTorque => SCHEMA_FORCE_TORQUE,
            DecodedTopic::Specification => SCHEMA_SPECIFICATION,
            DecodedTopic::Events => SCHEMA_EVENTS,
        }
    }

    /// The key of the value array, for the joint topics.
    fn array_key(self) -> &'static str {
        match self {
            DecodedTopic::JointPositions => "positions",
            DecodedTopic::JointVelocities => "velocities",
            DecodedTopic::JointEfforts => "efforts",
            _ => "force_torques",
        }
    }
}

/// The `component` property of the decoded schemas (see the module's doc).
macro_rules! component_property {
    () => {
        r#""component":{"type":"string","pattern":"^[0-9]+\\.[0-9]+\\.[0-9]+$","description":"The arm this message is about: its JAUS ID subsystem.node.component"}"#
    };
}

macro_rules! joint_schema {
    ($title:literal, $key:literal, $unit:literal) => {
        concat!(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":""#,
            $title,
            r#"","type":"object","properties":{"t":{"type":"number","description":"Receive time, s since the session started"},"#,
            component_property!(),
            r#",""#,
            $key,
            r#"":{"type":"array","description":""#,
            $unit,
            r#", joint 1 first","items":{"type":["number","null"]}}},"required":["t","component",""#,
            $key,
            r#""]}"#
        )
    };
}

/// JSON Schema of `/jaus/joint_positions`.
pub const SCHEMA_JOINT_POSITIONS: &str = joint_schema!(
    "Joint positions",
    "positions",
    "rad (revolute) or m (prismatic)"
);

/// JSON Schema of `/jaus/joint_velocities`.
pub const SCHEMA_JOINT_VELOCITIES: &str = joint_schema!(
    "Joint velocities",
    "velocities",
    "rad/s (revolute) or m/s (prismatic)"
);

/// JSON Schema of `/jaus/joint_efforts`.
pub const SCHEMA_JOINT_EFFORTS: &str =
    joint_schema!("Joint efforts", "efforts", "percent of maximum effort");

/// JSON Schema of `/jaus/joint_force_torques`.
pub const SCHEMA_JOINT_FORCE_TORQUES: &str = joint_schema!(
    "Joint forces and torques",
    "force_torques",
    "N·m (revolute) or N (prismatic)"
);

/// JSON Schema of `/jaus/force_torque`.
pub const SCHEMA_FORCE_TORQUE: &str = concat!(
    r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"End-effector force and torque","type":"object","$defs":{"vec":{"type":"object","properties":{"x":{"type":["number","null"]},"y":{"type":["number","null"]},"z":{"type":["number","null"]}},"required":["x","y","z"]}},"properties":{"t":{"type":"number","description":"Receive time, s since the session started"},"##,
    component_property!(),
    r##","force":{"$ref":"#/$defs/vec","description":"N, end-effector frame; null when not reported"},"torque":{"$ref":"#/$defs/vec","description":"N·m, end-effector frame; null when not reported"}},"required":["t","component","force","torque"]}"##
);

/// JSON Schema of `/jaus/specification`.
pub const SCHEMA_SPECIFICATION: &str = concat!(
    r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Manipulator specification (Crane & Duffy parameters)","type":"object","properties":{"t":{"type":"number","description":"Receive time, s since the session started"},"#,
    component_property!(),
    r#","mount":{"description":"Manipulator frame in the vehicle frame (+x front, +y right, +z down); null when not given","oneOf":[{"type":"null"},{"type":"object","properties":{"position":{"type":"array","items":{"type":"number"},"minItems":3,"maxItems":3,"description":"m"},"orientation":{"type":"array","items":{"type":"number"},"minItems":4,"maxItems":4,"description":"unit quaternion [d, a, b, c], scalar first"}},"required":["position","orientation"]}]},"joints":{"type":"array","description":"Joint 1 first","items":{"type":"object","properties":{"name":{"type":["string","null"]},"kind":{"enum":["revolute","prismatic"]},"link_length":{"type":"number","description":"a(k-1,k), m"},"twist":{"type":"number","description":"alpha(k-1,k), rad"},"offset":{"type":"number","description":"revolute: joint offset S(k,k), m"},"angle":{"type":"number","description":"prismatic: joint angle theta(k), rad"},"min":{"type":["number","null"],"description":"rad or m; null = continuous"},"max":{"type":["number","null"],"description":"rad or m; null = continuous"},"max_speed":{"type":["number","null"],"description":"rad/s or m/s"},"max_effort":{"type":["number","null"],"description":"N·m or N"},"axis_radius":{"type":["number","null"],"description":"bounding cylinder along the joint axis, m"},"link_radius":{"type":["number","null"],"description":"bounding cylinder along the link, m"}},"required":["kind","link_length","twist","offset","angle"]}}},"required":["t","component","joints"]}"#
);

/// JSON Schema of `/jaus/events`.
pub const SCHEMA_EVENTS: &str = concat!(
    r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Session event","type":"object","properties":{"t":{"type":"number","description":"Time, s since the session started"},"#,
    component_property!(),
    r#","kind":{"enum":["control","status","emergency","transition","gap","stale","outcome","component","link","error","threshold","command","network","recording","note","clearance"]},"label":{"type":"string","description":"What happened, for people"},"pair":{"type":"string","description":"clearance: the two parts, e.g. wrist_roll (joint 5) and turret (joint 1)"},"gap_m":{"type":"number","description":"clearance: their surface gap, m; negative: overlapping"},"zone":{"enum":["in contact","inside the stop margin","inside the warning band"],"description":"clearance: the zone the pair entered"},"state":{"type":"string"},"authority":{"type":["integer","null"]},"pose":{"type":["integer","null"]},"from":{"type":"integer"},"to":{"type":"integer"},"command":{"type":"string"},"outcome":{"enum":["confirmed","rejected","timed_out","completed","failed","no_answer"]},"reason":{"type":"string"},"id":{"type":"string","description":"JAUS ID subsystem.node.component"},"address":{"type":"string"},"identification":{"type":["string","null"]},"lost":{"type":"boolean"},"signal":{"type":"string"},"stale":{"type":"boolean"}},"required":["t","kind","label"]}"#
);

/// Topic of the operator's notes: one JSON message per note ([`SCHEMA_NOTE`]), logged at the
/// note's session time. Also written as a `foxglove.Log` line on `/foxglove/log`, so
/// Foxglove's Log panel lists them. Unlike the decoded channels, notes are not derived from
/// the raw datagrams: replay reads them back from this channel.
pub const NOTES_TOPIC: &str = "/ocu/notes";

/// Schema name of [`NOTES_TOPIC`].
pub const SCHEMA_NOTE_NAME: &str = "jaus_ocu.Note";

/// JSON Schema of [`NOTES_TOPIC`].
pub const SCHEMA_NOTE: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Operator note","type":"object","properties":{"t":{"type":"number","description":"Time, s since the session started"},"text":{"type":"string","description":"What the operator wrote; empty for a bookmark"},"bookmark":{"type":"boolean","description":"A note without text"},"arm":{"type":["string","null"],"description":"JAUS ID subsystem.node.component of the arm focused when the note was written"}},"required":["t","text","bookmark"]}"#;

/// Writes `note` as one JSON message of [`NOTES_TOPIC`] into `out` (cleared first).
pub fn encode_note(note: &crate::model::events::Note, out: &mut Vec<u8>) {
    out.clear();
    let body = serde_json::json!({
        "t": if note.t.is_finite() { note.t } else { 0.0 },
        "text": note.text,
        "bookmark": note.text.is_empty(),
        "arm": note.arm,
    });
    // Writing a JSON value into a Vec cannot fail.
    let _ = serde_json::to_writer(out, &body);
}

/// Reads one message of [`NOTES_TOPIC`]; `None` when it is not a note (no finite `t`).
pub fn parse_note(bytes: &[u8]) -> Option<crate::model::events::Note> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let t = v.get("t")?.as_f64().filter(|t| t.is_finite())?;
    let text = v
        .get("text")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let mut note = crate::model::events::Note::new(t, text, None);
    note.arm = v
        .get("arm")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    Some(note)
}

/// Writes `update` as one JSON message (UTF-8) of its decoded topic into `out` (cleared first) and
/// returns the topic; `None` (and `out` empty) for updates that have no decoded channel
/// (presets, tool offset, delivery, counters). A fact about an arm ([`Update::Arm`]) carries its
/// arm as `"component"` (see the module's doc).
pub fn encode_update(update: &Update, out: &mut Vec<u8>) -> Option<DecodedTopic> {
    out.clear();
    let (arm, fact) = match update {
        Update::Arm { arm, fact } => (*arm, fact),
        Update::Net(fact) => {
            return match fact {
                NetFact::Stats { .. } => None,
                NetFact::Component { .. }
                | NetFact::ComponentLost { .. }
                | NetFact::Selected { .. }
                | NetFact::Identity { .. }
                | NetFact::Remark(_) => {
                    event(out, update);
                    Some(DecodedTopic::Events)
                }
            };
        }
    };
    let arm = Some(arm);
    let topic = match fact {
        ArmFact::JointPositions { t, values } => {
            joints(out, DecodedTopic::JointPositions, *t, arm, values)
        }
        ArmFact::JointVelocities { t, values } => {
            joints(out, DecodedTopic::JointVelocities, *t, arm, values)
        }
        ArmFact::JointEfforts { t, values } => {
            joints(out, DecodedTopic::JointEfforts, *t, arm, values)
        }
        ArmFact::JointForceTorques { t, values } => {
            joints(out, DecodedTopic::JointForceTorques, *t, arm, values)
        }
        ArmFact::ForceTorque { t, force, torque } => {
            start(out, *t, arm);
            out.extend_from_slice(b",\"force\":");
            xyz(out, force);
            out.extend_from_slice(b",\"torque\":");
            xyz(out, torque);
            out.push(b'}');
            DecodedTopic::ForceTorque
        }
        ArmFact::Specification { t, spec } => {
            specification(out, *t, arm, spec);
            DecodedTopic::Specification
        }
        ArmFact::Presets { .. }
        | ArmFact::ToolOffset { .. }
        | ArmFact::Delivery { .. }
        | ArmFact::Jog { .. }
        | ArmFact::Stop { .. }
        | ArmFact::Address { .. } => {
            return None;
        }
        ArmFact::Link { .. }
        | ArmFact::CurrentPose { .. }
        | ArmFact::Status { .. }
        | ArmFact::Control { .. }
        | ArmFact::Controller { .. }
        | ArmFact::ControlLost { .. }
        | ArmFact::Stale { .. }
        | ArmFact::Remark(_) => {
            event(out, update);
            DecodedTopic::Events
        }
    };
    Some(topic)
}

/// `{"t":…` and, for a fact about one arm, `,"component":"S.N.C"`.
fn start(out: &mut Vec<u8>, t: f64, arm: Option<ComponentId>) {
    out.extend_from_slice(b"{\"t\":");
    num(out, t);
    if let Some(arm) = arm {
        // Digits and dots, nothing to escape; written by hand (`write!` through the
        // formatter cost a quarter of a sample's encoding: `cargo bench --bench record`).
        out.extend_from_slice(b",\"component\":\"");
        decimal(out, u32::from(arm.subsystem));
        out.push(b'.');
        decimal(out, u32::from(arm.node));
        out.push(b'.');
        decimal(out, u32::from(arm.component));
        out.push(b'"');
    }
}

/// `v` in decimal.
fn decimal(out: &mut Vec<u8>, v: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn joints(
    out: &mut Vec<u8>,
    topic: DecodedTopic,
    t: f64,
    arm: Option<ComponentId>,
    values: &[f64],
) -> DecodedTopic {
    start(out, t, arm);
    out.extend_from_slice(b",\"");
    out.extend_from_slice(topic.array_key().as_bytes());
    out.extend_from_slice(b"\":");
    samples(out, values);
    out.push(b'}');
    topic
}

/// A finite number in its shortest round-trip form, through `serde_json`'s float formatter
/// (`Display` for f64 measured about 110 ns a number, six times slower: `cargo bench --bench
/// record -- format`); NaN and infinities as `null`.
fn num(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &v);
    } else {
        out.extend_from_slice(b"null");
    }
}

fn opt_num(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => num(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// A measured value rounded to 1e-9 (below 1e6 in magnitude), then as [`num`].
///
/// Values decoded from scaled integers print with 16-17 digits, most of them noise that
/// neither compresses nor means anything: the finest scale of any sampled signal (prismatic
/// joint velocity, ±5 m/s in 32 bits) has steps of 2.3e-9, so rounding to 1e-9 keeps every
/// wire value distinct and within a quarter step, and made the decoded channels 25 % smaller
/// (`cargo bench --bench record`). Specifications are not rounded: quaternion steps are
/// 4.7e-10.
fn sample(out: &mut Vec<u8>, v: f64) {
    if v.abs() < 1e6 {
        num(out, (v * 1e9).round() / 1e9);
    } else {
        num(out, v);
    }
}

fn opt_sample(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => sample(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

fn samples(out: &mut Vec<u8>, values: &[f64]) {
    out.push(b'[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        sample(out, *v);
    }
    out.push(b']');
}

fn array(out: &mut Vec<u8>, values: &[f64]) {
    out.push(b'[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        num(out, *v);
    }
    out.push(b']');
}

fn xyz(out: &mut Vec<u8>, v: &[Option<f64>; 3]) {
    out.extend_from_slice(b"{\"x\":");
    opt_sample(out, v[0]);
    out.extend_from_slice(b",\"y\":");
    opt_sample(out, v[1]);
    out.extend_from_slice(b",\"z\":");
    opt_sample(out, v[2]);
    out.push(b'}');
}

/// A JSON string literal.
fn string(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn key(out: &mut Vec<u8>, k: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn specification(out: &mut Vec<u8>, t: f64, arm: Option<ComponentId>, spec: &ArmSpec) {
    start(out, t, arm);
    key(out, "mount");
    match &spec.mount {
        None => out.extend_from_slice(b"null"),
        Some(m) => {
            out.extend_from_slice(b"{\"position\":");
            array(out, &m.position);
            out.extend_from_slice(b",\"orientation\":");
            array(out, &m.orientation);
            out.push(b'}');
        }
    }
    key(out, "joints");
    out.push(b'[');
    for (i, j) in spec.joints.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        match &j.name {
            Some(n) => string(out, n),
            None => out.extend_from_slice(b"null"),
        }
        key(out, "kind");
        out.extend_from_slice(match j.kind {
            JointType::Revolute => b"\"revolute\"",
            JointType::Prismatic => b"\"prismatic\"",
        });
        for (k, v) in [
            ("link_length", j.link_length),
            ("twist", j.twist),
            ("offset", j.offset),
            ("angle", j.angle),
        ] {
            key(out, k);
            num(out, v);
        }
        for (k, v) in [
            ("min", j.min),
            ("max", j.max),
            ("max_speed", j.max_speed),
            ("max_effort", j.max_effort),
            ("axis_radius", j.axis_radius),
            ("link_radius", j.link_radius),
        ] {
            key(out, k);
            opt_num(out, v);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

fn event_head(out: &mut Vec<u8>, t: f64, arm: Option<ComponentId>, kind: &str, label: &str) {
    start(out, t, arm);
    key(out, "kind");
    string(out, kind);
    key(out, "label");
    string(out, label);
}

fn str_field(out: &mut Vec<u8>, k: &str, v: &str) {
    key(out, k);
    string(out, v);
}

/// A management state as the decoded channels write it: its name ([`ManagementState::name`])
/// in lower case, `ready`, `emergency`, ….
pub fn management_name(s: ManagementState) -> String {
    s.name().to_ascii_lowercase()
}

/// A signal as the decoded channels name it: its channel without `/jaus/`
/// (`joint_positions`, `force_torque`, …).
pub fn signal_key(s: Signal) -> &'static str {
    match s {
        Signal::JointPositions => "joint_positions",
        Signal::JointVelocities => "joint_velocities",
        Signal::JointEfforts => "joint_efforts",
        Signal::JointForceTorques => "joint_force_torques",
        Signal::EndEffectorForceTorque => "force_torque",
        Signal::CurrentPose => "current_pose",
        Signal::Status => "status",
    }
}

/// The kind and the label of a discrete update as the `/jaus/events` channel and the Foxglove
/// log channel say it ("control held (authority 100)", "emergency stop", ...); `None` for
/// samples, the specification, and the updates without an event. Labels are built with
/// `format!`: events are rare next to samples.
pub fn event_label(update: &Update) -> Option<(&'static str, String)> {
    match update {
        // The label is the fact's; which arm goes beside it (`component`, the log's name).
        Update::Arm { fact, .. } => arm_event_label(fact),
        Update::Net(fact) => net_event_label(fact),
    }
}

/// [`event_label`] of a fact about an arm.
fn arm_event_label(fact: &ArmFact) -> Option<(&'static str, String)> {
    Some(match fact {
        ArmFact::Control { state, .. } => (
            "control",
            match state {
                ControlState::Released => "control released".to_owned(),
                ControlState::Requested => "control requested".to_owned(),
                ControlState::Held { authority } => {
                    format!("control held (authority {authority})")
                }
            },
        ),
        ArmFact::Controller { controller, .. } => (
            "control",
            match controller.id {
                Some(_) => format!("control held by {controller}"),
                None => "control free".to_owned(),
            },
        ),
        ArmFact::ControlLost { reason, .. } => ("control", format!("control lost: {reason}")),
        ArmFact::Status { state, .. } => {
            if *state == ManagementState::Emergency {
                ("emergency", "emergency stop".to_owned())
            } else {
                ("status", format!("status {}", management_name(*state)))
            }
        }
        ArmFact::CurrentPose { pose, .. } => (
            "transition",
            match pose {
                PoseState::Unknown => "pose unknown".to_owned(),
                PoseState::At(p) => format!("at preset {p}"),
                PoseState::Moving { from, to } => {
                    format!("moving from preset {from} to preset {to}")
                }
            },
        ),
        ArmFact::Link { state, .. } => ("link", format!("link {}", state.name())),
        ArmFact::Stale { signal, stale, .. } => (
            "stale",
            format!(
                "{} {}",
                signal.name(),
                if *stale { "stale" } else { "fresh again" }
            ),
        ),
        ArmFact::Remark(r) => remark_label(r),
        ArmFact::Specification { .. }
        | ArmFact::ToolOffset { .. }
        | ArmFact::Presets { .. }
        | ArmFact::JointPositions { .. }
        | ArmFact::JointVelocities { .. }
        | ArmFact::JointEfforts { .. }
        | ArmFact::JointForceTorques { .. }
        | ArmFact::ForceTorque { .. }
        | ArmFact::Delivery { .. }
        | ArmFact::Jog { .. }
        | ArmFact::Stop { .. }
        | ArmFact::Address { .. } => return None,
    })
}

/// [`event_label`] of a fact of the network.
fn net_event_label(fact: &NetFact) -> Option<(&'static str, String)> {
    Some(match fact {
        NetFact::Component { info, .. } => (
            "component",
            match &info.identification {
                Some(s) => format!("found {} \"{s}\" at {}", info.id, info.address),
                None => format!("found {} at {}", info.id, info.address),
            },
        ),
        NetFact::ComponentLost { id, lost, .. } => (
            "component",
            if *lost {
                format!("{id} lost")
            } else {
                format!("{id} heard again")
            },
        ),
        NetFact::Selected { id, .. } => ("component", format!("selected {id}")),
        NetFact::Remark(r) => remark_label(r),
        NetFact::Identity { .. } | NetFact::Stats { .. } => return None,
    })
}

/// [`event_label`] of what is said about an arm or the network.
fn remark_label(r: &Remark) -> (&'static str, String) {
    match r {
        Remark::CommandOutcome {
            command, outcome, ..
        } => {
            let (name, reason) = outcome_name(outcome);
            let name = name.replace('_', " ");
            let c = command.name();
            (
                "outcome",
                match reason {
                    Some(r) => format!("{c} {name}: {r}"),
                    None => format!("{c} {name}"),
                },
            )
        }
        Remark::Mark { kind, label, .. } => (kind.name(), label.clone()),
        Remark::Error { message, .. } => ("error", message.clone()),
    }
}

/// An outcome's name and, when it has one, its reason.
fn outcome_name(outcome: &Outcome) -> (&'static str, Option<&str>) {
    match outcome {
        Outcome::Confirmed => ("confirmed", None),
        Outcome::Rejected(r) => ("rejected", Some(r.as_str())),
        Outcome::TimedOut => ("timed_out", None),
        Outcome::Completed => ("completed", None),
        Outcome::Failed(r) => ("failed", Some(r.as_str())),
        Outcome::NoAnswer { state, .. } => ("no_answer", Some(state.as_str())),
    }
}

/// Discrete updates as `/jaus/events` messages: [`event_label`] and the fields of each kind,
/// with `component` when the event is about one arm.
fn event(out: &mut Vec<u8>, update: &Update) {
    let (t, arm) = (update.t(), update.arm_id());
    let Some((kind, label)) = event_label(update) else {
        // Samples, the specification and the updates without a channel are handled by
        // `encode_update`; a fact without a label (our identity) still gets a readable event.
        event_head(out, t, arm, "error", &format!("unmapped update {update:?}"));
        out.push(b'}');
        return;
    };
    event_head(out, t, arm, kind, &label);
    match update {
        Update::Arm { fact, .. } => match fact {
            ArmFact::Control { state, .. } => {
                str_field(out, "state", state.name());
                key(out, "authority");
                match state {
                    ControlState::Held { authority } => {
                        let _ = write!(out, "{authority}");
                    }
                    ControlState::Released | ControlState::Requested => {
                        out.extend_from_slice(b"null");
                    }
                }
            }
            ArmFact::Status { state, .. } => str_field(out, "state", &management_name(*state)),
            ArmFact::CurrentPose { pose, .. } => match pose {
                PoseState::Unknown => {
                    str_field(out, "state", "unknown");
                    out.extend_from_slice(b",\"pose\":null");
                }
                PoseState::At(p) => {
                    str_field(out, "state", "at");
                    let _ = write!(out, ",\"pose\":{p}");
                }
                PoseState::Moving { from, to } => {
                    str_field(out, "state", "moving");
                    let _ = write!(out, ",\"from\":{from},\"to\":{to}");
                }
            },
            ArmFact::Link { state, .. } => str_field(out, "state", state.name()),
            ArmFact::Stale { signal, stale, .. } => {
                str_field(out, "signal", signal_key(*signal));
                let _ = write!(out, ",\"stale\":{stale}");
            }
            ArmFact::Remark(r) => remark_fields(out, r),
            _ => {}
        },
        Update::Net(fact) => match fact {
            NetFact::Component { info, .. } => {
                str_field(out, "id", &info.id.to_string());
                str_field(out, "address", &info.address.to_string());
                key(out, "identification");
                match &info.identification {
                    Some(s) => string(out, s),
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(b",\"lost\":false");
            }
            NetFact::ComponentLost { id, lost, .. } => {
                str_field(out, "id", &id.to_string());
                let _ = write!(out, ",\"lost\":{lost}");
            }
            NetFact::Selected { id, .. } => {
                str_field(out, "id", &id.to_string());
                str_field(out, "state", "selected");
            }
            NetFact::Remark(r) => remark_fields(out, r),
            _ => {}
        },
    }
    out.push(b'}');
}

/// A clearance event ([`crate::record::clearance`]) as a `/jaus/events` message at `t`
/// (s since the session started), into `out` (cleared first): kind `clearance`, its label,
/// `pair`, `gap_m` and `zone`.
pub fn encode_clearance_event(
    out: &mut Vec<u8>,
    t: f64,
    e: &crate::record::clearance::ClearanceEvent,
) {
    out.clear();
    event_head(out, t, Some(e.arm), "clearance", &e.label());
    str_field(out, "pair", &e.pair);
    key(out, "gap_m");
    num(out, (e.gap * 1e4).round() / 1e4);
    str_field(out, "zone", e.zone.name());
    out.push(b'}');
}

/// The fields of an outcome event (marks and errors have only their label).
fn remark_fields(out: &mut Vec<u8>, r: &Remark) {
    match r {
        Remark::CommandOutcome {
            command, outcome, ..
        } => {
            let (name, reason) = outcome_name(outcome);
            str_field(out, "command", command.name());
            str_field(out, "outcome", name);
            if let Some(r) = reason {
                str_field(out, "reason", r);
            }
        }
        Remark::Mark { .. } | Remark::Error { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARM: ComponentId = ComponentId::new(126, 1, 10);
    use crate::model::arm::{Joint, Mount};
    use crate::model::command::CommandKind;
    use crate::model::update::{ComponentId, ComponentInfo, LinkState, MarkKind};

    fn parse(s: impl AsRef<[u8]>) -> serde_json::Value {
        let s = s.as_ref();
        serde_json::from_slice(s)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(s)))
    }

    #[test]
    fn every_schema_is_json_with_the_required_time() {
        for d in DecodedTopic::ALL {
            let v = parse(d.schema());
            assert_eq!(v["type"], "object", "{d:?}");
            let required = v["required"].as_array().unwrap();
            assert!(required.contains(&"t".into()), "{d:?}");
            for r in required {
                assert!(
                    v["properties"].get(r.as_str().unwrap()).is_some(),
                    "{d:?}: required {r} has no property"
                );
            }
            assert_eq!(DecodedTopic::from_topic(d.topic()), Some(d));
            assert_eq!(DecodedTopic::ALL[d.index()], d);
        }
    }

    #[test]
    fn joint_samples_become_arrays_with_null_for_non_finite() {
        let mut s = Vec::new();
        let u = Update::arm(
            ARM,
            ArmFact::JointPositions {
                t: 1.5,
                values: vec![0.1, -2.0, f64::NAN, 1e-7, 3e20],
            },
        );
        assert_eq!(
            encode_update(&u, &mut s),
            Some(DecodedTopic::JointPositions)
        );
        let v = parse(&s);
        assert_eq!(v["t"], 1.5);
        assert_eq!(v["positions"][0], 0.1);
        assert_eq!(v["positions"][1], -2.0);
        assert!(v["positions"][2].is_null());
        assert_eq!(v["positions"][3], 1e-7);
        assert_eq!(v["positions"][4], 3e20);
        let u = Update::arm(
            ARM,
            ArmFact::JointVelocities {
                t: 0.25,
                values: vec![0.123_456_789_012_345, -4.999_999_999_7, 2.3e-9],
            },
        );
        encode_update(&u, &mut s);
        assert_eq!(
            std::str::from_utf8(&s).unwrap(),
            r#"{"t":0.25,"component":"126.1.10","velocities":[0.123456789,-5.0,2e-9]}"#,
            "samples are rounded to 1e-9"
        );
        let u = Update::arm(
            ARM,
            ArmFact::JointForceTorques {
                t: 0.0,
                values: vec![],
            },
        );
        assert_eq!(
            encode_update(&u, &mut s),
            Some(DecodedTopic::JointForceTorques)
        );
        assert_eq!(parse(&s)["force_torques"], serde_json::json!([]));
    }

    #[test]
    fn force_torque_has_xyz_objects_with_null_for_absent_parts() {
        let mut s = Vec::new();
        let u = Update::arm(
            ARM,
            ArmFact::ForceTorque {
                t: 2.0,
                force: [Some(1.0), None, Some(-3.5)],
                torque: [None, Some(0.25), None],
            },
        );
        assert_eq!(encode_update(&u, &mut s), Some(DecodedTopic::ForceTorque));
        let v = parse(&s);
        assert_eq!(v["force"]["x"], 1.0);
        assert!(v["force"]["y"].is_null());
        assert_eq!(v["force"]["z"], -3.5);
        assert_eq!(v["torque"]["y"], 0.25);
    }

    #[test]
    fn specification_lists_joints_with_their_parameters_and_mount() {
        let mut named = Joint::revolute(0.5, 1.25, 0.1);
        named.name = Some("shoulder \"1\"".into());
        named.min = Some(-1.0);
        let spec = ArmSpec {
            mount: Some(Mount {
                position: [1.0, 2.0, 3.0],
                orientation: [1.0, 0.0, 0.0, 0.0],
            }),
            joints: vec![named, Joint::prismatic(0.0, 0.0, 0.3, 0.0, 0.5)],
        };
        let mut s = Vec::new();
        let u = Update::arm(ARM, ArmFact::Specification { t: 0.5, spec });
        assert_eq!(encode_update(&u, &mut s), Some(DecodedTopic::Specification));
        let v = parse(&s);
        assert_eq!(v["mount"]["position"][2], 3.0);
        assert_eq!(v["joints"][0]["name"], "shoulder \"1\"");
        assert_eq!(v["joints"][0]["kind"], "revolute");
        assert_eq!(v["joints"][0]["link_length"], 0.5);
        assert_eq!(v["joints"][0]["twist"], 1.25);
        assert_eq!(v["joints"][0]["min"], -1.0);
        assert!(v["joints"][0]["max"].is_null());
        assert_eq!(v["joints"][1]["kind"], "prismatic");
        assert_eq!(v["joints"][1]["angle"], 0.3);
        assert_eq!(v["joints"][1]["max"], 0.5);
    }

    #[test]
    fn discrete_updates_become_events_with_kind_and_label() {
        let id = ComponentId::new(1, 2, 3);
        let arm = |fact: ArmFact| Update::arm(ARM, fact);
        let cases = [
            (
                arm(ArmFact::Control {
                    t: 1.0,
                    state: ControlState::Held { authority: 200 },
                }),
                "control",
            ),
            (
                arm(ArmFact::Status {
                    t: 1.0,
                    state: ManagementState::Emergency,
                }),
                "emergency",
            ),
            (
                arm(ArmFact::Status {
                    t: 1.0,
                    state: ManagementState::Ready,
                }),
                "status",
            ),
            (
                arm(ArmFact::CurrentPose {
                    t: 1.0,
                    pose: PoseState::Moving { from: 1, to: 2 },
                }),
                "transition",
            ),
            (
                Update::net(Remark::CommandOutcome {
                    t: 1.0,
                    command: CommandKind::GoToPreset,
                    outcome: Outcome::Rejected("not \\ controlled\n".into()),
                }),
                "outcome",
            ),
            (
                Update::net(NetFact::Component {
                    t: 1.0,
                    info: ComponentInfo {
                        id,
                        address: "127.0.0.1:3794".parse().unwrap(),
                        identification: Some("arm\u{1}".into()),
                        services: vec![],
                        manipulator: true,
                    },
                }),
                "component",
            ),
            (
                Update::net(NetFact::ComponentLost {
                    t: 1.0,
                    id,
                    lost: true,
                }),
                "component",
            ),
            (
                arm(ArmFact::Link {
                    t: 1.0,
                    state: LinkState::Lost,
                }),
                "link",
            ),
            (
                arm(ArmFact::Stale {
                    t: 1.0,
                    signal: Signal::JointPositions,
                    stale: true,
                }),
                "stale",
            ),
            (
                Update::net(Remark::Mark {
                    t: 1.0,
                    kind: MarkKind::Gap,
                    label: "no traffic for 2.0 s".into(),
                }),
                "gap",
            ),
            (
                Update::net(Remark::Error {
                    t: 1.0,
                    message: "bad".into(),
                }),
                "error",
            ),
        ];
        let mut s = Vec::new();
        for (u, kind) in cases {
            assert_eq!(encode_update(&u, &mut s), Some(DecodedTopic::Events));
            let v = parse(&s);
            assert_eq!(v["kind"], kind, "{}", String::from_utf8_lossy(&s));
            assert_eq!(v["t"], 1.0);
            assert!(!v["label"].as_str().unwrap().is_empty());
        }
        let u = arm(ArmFact::ToolOffset {
            t: 0.0,
            point: [0.0; 3],
        });
        assert_eq!(encode_update(&u, &mut s), None);
        assert!(s.is_empty());
    }

    #[test]
    fn a_fact_about_one_arm_names_its_component_and_validates() {
        let arm = ComponentId::new(126, 1, 11);
        let mut s = Vec::new();
        let u = Update::arm(
            arm,
            ArmFact::JointPositions {
                t: 0.5,
                values: vec![0.25],
            },
        );
        assert_eq!(
            encode_update(&u, &mut s),
            Some(DecodedTopic::JointPositions)
        );
        assert_eq!(
            std::str::from_utf8(&s).unwrap(),
            r#"{"t":0.5,"component":"126.1.11","positions":[0.25]}"#
        );
        let spec = ArmSpec {
            mount: None,
            joints: vec![Joint::revolute(0.0, 0.0, 0.1)],
        };
        let cases = [
            Update::arm(arm, ArmFact::Specification { t: 1.0, spec }),
            Update::arm(
                arm,
                ArmFact::ForceTorque {
                    t: 1.0,
                    force: [Some(1.0); 3],
                    torque: [None; 3],
                },
            ),
            Update::arm(
                arm,
                Remark::Mark {
                    t: 1.0,
                    kind: MarkKind::Gap,
                    label: "no traffic from 126.1.11 for 3.0 s".into(),
                },
            ),
            Update::arm(
                arm,
                ArmFact::Link {
                    t: 1.0,
                    state: LinkState::Live,
                },
            ),
        ];
        for u in cases {
            let topic = encode_update(&u, &mut s).unwrap();
            let v = parse(&s);
            assert_eq!(v["component"], "126.1.11", "{topic:?}");
            assert_eq!(v["t"], 1.0);
            // The component is a property of every schema, and required but in events.
            let schema = parse(topic.schema());
            assert_eq!(schema["properties"]["component"]["type"], "string");
            let required = schema["required"].as_array().unwrap();
            assert_eq!(
                required.contains(&"component".into()),
                topic != DecodedTopic::Events,
                "{topic:?}"
            );
        }
        // A fact of the network names none.
        let u = Update::net(Remark::Error {
            t: 1.0,
            message: "x".into(),
        });
        encode_update(&u, &mut s);
        assert!(parse(&s).get("component").is_none());
        assert_eq!(arm_metadata_name(arm), "arm/126.1.11");
        // Every digit count of the three parts, written by hand.
        for id in [
            ComponentId::new(65534, 254, 1),
            ComponentId::new(1, 10, 100),
            ComponentId::new(0, 0, 0),
        ] {
            encode_update(
                &Update::arm(
                    id,
                    ArmFact::Link {
                        t: 0.0,
                        state: LinkState::Live,
                    },
                ),
                &mut s,
            );
            assert_eq!(parse(&s)["component"], id.to_string());
        }
    }

    #[test]
    fn raw_topics_round_trip_through_metadata_and_topic() {
        for (d, peer) in [
            (Direction::Rx, "10.0.0.7:3794"),
            (Direction::Tx, "[fe80::1]:40000"),
        ] {
            let peer: SocketAddr = peer.parse().unwrap();
            let topic = raw_topic(d, peer);
            let meta = raw_channel_metadata(d, peer);
            assert_eq!(parse_raw_channel(&topic, &meta), Some((d, peer)));
            assert_eq!(parse_raw_channel(&topic, &BTreeMap::new()), Some((d, peer)));
        }
        assert_eq!(parse_raw_channel("/other", &BTreeMap::new()), None);
    }
}
