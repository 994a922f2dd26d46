//! The `manipulator` suite: the specification and its dialect, each sensor's report against
//! it, the IOP end-effector force/torque and preset poses, the commanded positions, and —
//! only with `--allow-motion` — one small, slow joint step and back (wire reference §6, §7,
//! §9 C1/C2).
//!
//! Without `--allow-motion` nothing that moves the arm is sent.

use std::collections::BTreeSet;
use std::io;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Facts, Options, Run, ask};
use crate::conform::tester::{Body, Received, Tester, Wire};
use crate::jaus::core::Standby;
use crate::jaus::core::Status;
use crate::jaus::iop::{
    PresetTarget, QueryManipulatorEndEffectorForceTorque, QueryPresetPoseCapabilities,
    QueryPresetPoseSpecifications,
};
use crate::jaus::manipulator::{
    FirstJointParameters, JointMotionProfile, JointSpecification, JointValue,
    QueryCommandedJointPositions, QueryEndEffectorPose, QueryJointEffort, QueryJointForceTorques,
    QueryJointPositions, QueryJointVelocity, QueryManipulatorSpecifications, QueryToolOffset,
    ReportManipulatorSpecifications, SetJointMotionProfile, SetJointPositions, unit_code,
};
use crate::jaus::message::ids;
use crate::jaus::wire::scales;
use crate::jaus::{Dialect, JointKind, Message};

use super::management::{
    await_status, read_status, release_control, restore, said, settle_bound, take_control,
};

/// Slack on a limit: 1 mrad or 1 mm (quantisation and a settling arm).
const LIMIT_SLACK: f64 = 1e-3;
/// Largest revolute step of the motion check, rad.
const STEP_RAD: f64 = 0.05;
/// Largest prismatic step of the motion check, m.
const STEP_M: f64 = 0.01;
/// Fraction of a joint's maximum speed the motion check allows.
const SPEED_FRACTION: f64 = 0.1;
/// Where a joint counts as settled on its target: 0.1 mrad or 0.1 mm.
const SETTLED: f64 = 1e-4;
/// Speed when the specification gives none: rad/s or m/s.
const DEFAULT_SPEED: (f64, f64) = (0.05, 0.01);

/// One joint as the specification gives it.
#[derive(Debug, Clone, Copy)]
struct Joint {
    kind: JointKind,
    min: Option<f64>,
    max: Option<f64>,
    max_speed: Option<f64>,
    max_effort: Option<f64>,
}

fn joints_of(spec: &ReportManipulatorSpecifications) -> Vec<Joint> {
    let first = match &spec.first_joint_parameters {
        FirstJointParameters::Revolute(j) => Joint {
            kind: JointKind::Revolute,
            min: j.joint1_min_value,
            max: j.joint1_max_value,
            max_speed: j.joint1_max_speed,
            max_effort: j.joint1_max_torque,
        },
        FirstJointParameters::Prismatic(j) => Joint {
            kind: JointKind::Prismatic,
            min: Some(j.joint1_min_value),
            max: Some(j.joint1_max_value),
            max_speed: j.joint1_max_speed,
            max_effort: j.joint1_max_force,
        },
    };
    std::iter::once(first)
        .chain(spec.joint_specifications.iter().map(|j| match j {
            JointSpecification::Revolute(j) => Joint {
                kind: JointKind::Revolute,
                min: j.min_value,
                max: j.max_value,
                max_speed: j.max_speed,
                max_effort: j.max_torque,
            },
            JointSpecification::Prismatic(j) => Joint {
                kind: JointKind::Prismatic,
                min: Some(j.min_value),
                max: Some(j.max_value),
                max_speed: j.max_speed,
                max_effort: j.max_force,
            },
        }))
        .collect()
}

fn kind_word(k: JointKind) -> &'static str {
    match k {
        JointKind::Revolute => "revolute",
        JointKind::Prismatic => "prismatic",
    }
}

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    let mut joints: Option<Vec<Joint>> = None;
    r.check(
        "specification",
        "QueryManipulatorSpecifications → a specification that decodes, with sane limits",
        "wire reference §6.2, §6.3 0x4600, §9 C1/C2",
        |t, facts, _| specification(t, facts, &mut joints),
    );
    let js = joints.as_deref();
    r.check(
        "joint-positions",
        "QueryJointPositions → one position per joint, inside the joint limits",
        "wire reference §6.2, §6.3 0x4602, §9 C1",
        |t, facts, _| joint_values(t, facts, js, &Family::POSITIONS),
    );
    r.check(
        "joint-velocities",
        "QueryJointVelocity → one velocity per joint, within the maximum speeds",
        "wire reference §6.2, §6.3 0x4603, §9 C1",
        |t, facts, _| joint_values(t, facts, js, &Family::VELOCITIES),
    );
    r.check(
        "joint-efforts",
        "QueryJointEffort → one effort per joint, −100..100 %",
        "wire reference §6.2, §6.3 0x4601",
        |t, facts, _| joint_values(t, facts, js, &Family::EFFORTS),
    );
    r.check(
        "joint-force-torques",
        "QueryJointForceTorques → one force or torque per joint, of its kind, within its maximum",
        "wire reference §6.2, §6.3 0x4605, §9 C1",
        |t, facts, _| joint_values(t, facts, js, &Family::FORCE_TORQUES),
    );
    r.check(
        "commanded-positions",
        "QueryCommandedJointPositions → one commanded position per joint (the last command)",
        "wire reference §6.1, §6.3 0x4608",
        |t, facts, _| joint_values(t, facts, js, &Family::COMMANDED),
    );
    r.check(
        "tool-offset",
        "QueryToolOffset → ReportToolOffset",
        "wire reference §6.2, §6.3 0x4604",
        tool_offset,
    );
    r.check(
        "end-effector-pose",
        "QueryEndEffectorPose → a position and a unit quaternion",
        "wire reference §6.2, §6.3 0x4615",
        end_effector_pose,
    );
    r.check(
        "end-effector-force-torque",
        "QueryManipulatorEndEffectorForceTorque (all six) → all six forces and torques",
        "wire reference §7.1",
        end_effector_force_torque,
    );
    r.check(
        "preset-poses",
        "Preset pose capabilities and specifications agree and fit the arm",
        "wire reference §7.2",
        |t, facts, _| preset_poses(t, facts, js),
    );
    r.check(
        "motion",
        "One joint steps ≤ 0.05 rad at ≤ 10 % of its speed and back (only with --allow-motion)",
        "wire reference §6.1, §6.3 0x0602, 0x0607, §8.2 Management",
        |t, facts, opts| motion(t, facts, opts, js),
    );
}

/// The reply's decode error, when it is a message that did not decode.
fn decode_error(r: &Received) -> Option<String> {
    match &r.body {
        Body::Message { parsed: Err(e), .. } => Some(e.to_string()),
        _ => None,
    }
}

/// The type-and-units codes of a joint-value list message (`bytes` = ID + body).
fn unit_codes(bytes: &[u8]) -> Vec<u8> {
    let n = bytes.get(2).copied().map_or(0, usize::from);
    (0..n)
        .filter_map(|i| bytes.get(3 + 5 * i).copied())
        .collect()
}

/// Which dialect's unit codes (§9 C1) a list uses, given the joints' kinds when known.
fn unit_dialect(codes: &[u8], kinds: Option<&[JointKind]>) -> Result<Dialect, String> {
    let Some(kinds) = kinds.filter(|k| k.len() == codes.len()) else {
        return Ok(if codes.contains(&0) {
            Dialect::OpenJaus
        } else {
            Dialect::Jsidl
        });
    };
    let fits = |d| codes.iter().zip(kinds).all(|(c, k)| *c == unit_code(*k, d));
    if fits(Dialect::Jsidl) {
        Ok(Dialect::Jsidl)
    } else if fits(Dialect::OpenJaus) {
        Ok(Dialect::OpenJaus)
    } else {
        Err(format!(
            "unit codes {codes:?} fit neither SAE JSIDL (1 rotary, 2 linear) nor OpenJAUS (0, 1) \
             for joints of kinds {}",
            kinds
                .iter()
                .map(|k| kind_word(*k))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The C1 deviation text.
const C1: &str = "deviation: joint values carry OpenJAUS unit codes 0/1, not SAE JSIDL 1/2 \
                  (wire reference §9 C1)";
/// The C2 deviation text.
const C2: &str = "deviation: JointNamesList sent without presence-vector bit 1 (OpenJAUS 2019 \
                  model; wire reference §9 C2)";

fn note_deviation(facts: &mut Facts, text: &str, reference: &str) {
    facts.deviations.insert(
        text.trim_start_matches("deviation: ").into(),
        reference.into(),
    );
}

fn specification<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    joints: &mut Option<Vec<Joint>>,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("manipulator:ManipulatorSpecificationService") {
        return Ok(na);
    }
    let query = QueryManipulatorSpecifications {
        presence_vector: 0x03,
    };
    let (sent, reply) = ask(
        t,
        facts,
        &query.into(),
        ids::ReportManipulatorSpecifications,
    )?;
    let Some(reply) = reply else {
        return Ok(Outcome::fail(format!(
            "QueryManipulatorSpecifications (PV 0x03) got no ReportManipulatorSpecifications \
             within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]));
    };
    let mut ev = vec![sent.evidence(), reply.evidence()];
    let Some(Message::ReportManipulatorSpecifications(spec)) = reply.message() else {
        return Ok(Outcome::fail(format!(
            "ReportManipulatorSpecifications does not decode: {} (wire reference §6.3 0x4600)",
            decode_error(&reply).unwrap_or_default()
        ))
        .with(ev));
    };
    let js = joints_of(spec);
    for (i, j) in js.iter().enumerate() {
        if let (Some(lo), Some(hi)) = (j.min, j.max)
            && lo >= hi
        {
            return Ok(Outcome::fail(format!(
                "joint {} ({}) has MinValue {lo:.4} not below MaxValue {hi:.4}",
                i + 1,
                kind_word(j.kind)
            ))
            .with(ev));
        }
    }
    if let Some(names) = &spec.joint_names
        && names.len() != js.len()
    {
        return Ok(Outcome::fail(format!(
            "JointNamesList has {} names for {} joints: one name per joint expected",
            names.len(),
            js.len()
        ))
        .with(ev));
    }
    let kinds: Vec<JointKind> = js.iter().map(|j| j.kind).collect();
    t.ctx.joint_kinds = Some(kinds.clone());
    *joints = Some(js.clone());
    let mut deviations = Vec::new();
    let pv = match &reply.body {
        Body::Message { bytes, .. } => bytes.get(2).copied().unwrap_or(0),
        _ => 0,
    };
    let names = match &spec.joint_names {
        Some(_) if pv & 2 == 0 => {
            deviations.push(C2);
            "joint names without PV bit 1 (OpenJAUS)"
        }
        Some(_) => "joint names under PV bit 1 (SAE JSIDL)",
        None => "no joint names",
    };
    // The unit codes (§9 C1) show in a joint-value report: one position report names them.
    let mut units = "unit codes not seen (no position sensor)".to_string();
    if facts.lists("manipulator:ManipulatorJointPositionSensor") != Some(false) {
        let (q, r) = ask(
            t,
            facts,
            &QueryJointPositions.into(),
            ids::ReportJointPositions,
        )?;
        if let Some(r) = r
            && let Body::Message { bytes, .. } = &r.body
        {
            ev.extend([q.evidence(), r.evidence()]);
            units = match unit_dialect(&unit_codes(bytes), Some(&kinds)) {
                Ok(Dialect::Jsidl) => "unit codes 1/2 (SAE JSIDL)".into(),
                Ok(Dialect::OpenJaus) => {
                    deviations.push(C1);
                    "unit codes 0/1 (OpenJAUS)".into()
                }
                Err(e) => e,
            };
        }
    }
    let summary = format!(
        "{} joints ({}), limits sane, {names}, {units}",
        js.len(),
        kinds
            .iter()
            .map(|k| kind_word(*k))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if deviations.is_empty() {
        return Ok(Outcome::pass(summary).with(ev));
    }
    for d in &deviations {
        note_deviation(facts, d, if *d == C1 { "§9 C1" } else { "§9 C2" });
    }
    Ok(Outcome::warning(format!("{}; {summary}", deviations.join("; "))).with(ev))
}

/// One joint-value report family: its service, query, reply and limits.
struct Family {
    service: &'static str,
    query: fn() -> Message,
    reply: u16,
    what: &'static str,
    /// The values, from the reply.
    values: fn(&Message) -> Option<Vec<JointValue>>,
    /// The range a joint's value must be in, when one applies.
    range: fn(&Joint) -> (Option<f64>, Option<f64>),
    /// Whether the values carry type-and-units codes (§9 C1).
    coded: bool,
}

fn symmetric(v: Option<f64>) -> (Option<f64>, Option<f64>) {
    (v.map(|v| -v), v)
}

impl Family {
    const POSITIONS: Family = Family {
        service: "manipulator:ManipulatorJointPositionSensor",
        query: || QueryJointPositions.into(),
        reply: ids::ReportJointPositions,
        what: "position",
        values: |m| match m {
            Message::ReportJointPositions(r) => Some(r.joint_positions.clone()),
            _ => None,
        },
        range: |j| (j.min, j.max),
        coded: true,
    };
    const VELOCITIES: Family = Family {
        service: "manipulator:ManipulatorJointVelocitySensor",
        query: || QueryJointVelocity.into(),
        reply: ids::ReportJointVelocity,
        what: "velocity",
        values: |m| match m {
            Message::ReportJointVelocity(r) => Some(r.joint_velocities.clone()),
            _ => None,
        },
        range: |j| symmetric(j.max_speed),
        coded: true,
    };
    const EFFORTS: Family = Family {
        service: "manipulator:PrimitiveManipulator",
        query: || QueryJointEffort.into(),
        reply: ids::ReportJointEffort,
        what: "effort (%)",
        values: |m| match m {
            Message::ReportJointEffort(r) => Some(
                r.joint_efforts
                    .iter()
                    .map(|e| JointValue::revolute(*e))
                    .collect(),
            ),
            _ => None,
        },
        range: |_| (Some(-100.0), Some(100.0)),
        coded: false,
    };
    const FORCE_TORQUES: Family = Family {
        service: "manipulator:ManipulatorJointForceTorqueSensor",
        query: || QueryJointForceTorques.into(),
        reply: ids::ReportJointForceTorques,
        what: "force/torque",
        values: |m| match m {
            Message::ReportJointForceTorques(r) => Some(r.joint_force_torques.clone()),
            _ => None,
        },
        range: |j| symmetric(j.max_effort),
        coded: true,
    };
    const COMMANDED: Family = Family {
        service: "manipulator:ManipulatorJointPositionDriver",
        query: || QueryCommandedJointPositions.into(),
        reply: ids::ReportCommandedJointPositions,
        what: "commanded position",
        values: |m| match m {
            Message::ReportCommandedJointPositions(r) => Some(r.joint_positions.clone()),
            _ => None,
        },
        range: |j| (j.min, j.max),
        coded: true,
    };
}

/// What is wrong with `values` against the joints, if anything.
fn judge_values(values: &[JointValue], joints: &[Joint], f: &Family) -> Option<String> {
    if values.len() != joints.len() {
        return Some(format!(
            "{} {} values for {} joints: one per joint expected",
            values.len(),
            f.what,
            joints.len()
        ));
    }
    for (i, (v, j)) in values.iter().zip(joints).enumerate() {
        if f.coded && v.joint_type != j.kind {
            return Some(format!(
                "joint {} is {} by the specification, its {} is coded {}",
                i + 1,
                kind_word(j.kind),
                f.what,
                kind_word(v.joint_type)
            ));
        }
        let (lo, hi) = (f.range)(j);
        if lo.is_some_and(|lo| v.value < lo - LIMIT_SLACK)
            || hi.is_some_and(|hi| v.value > hi + LIMIT_SLACK)
        {
            return Some(format!(
                "joint {} {} {:.4} is outside {:.4}..{:.4} from the specification",
                i + 1,
                f.what,
                v.value,
                lo.unwrap_or(f64::NEG_INFINITY),
                hi.unwrap_or(f64::INFINITY)
            ));
        }
    }
    None
}

fn joint_values<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    joints: Option<&[Joint]>,
    f: &Family,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires(f.service) {
        return Ok(na);
    }
    let query = (f.query)();
    let (sent, reply) = ask(t, facts, &query, f.reply)?;
    let Some(reply) = reply else {
        return Ok(Outcome::fail(format!(
            "{} got no reply within {:.1} s{}",
            query.name(),
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]));
    };
    let ev = [sent.evidence(), reply.evidence()];
    let Some(values) = reply.message().and_then(f.values) else {
        return Ok(Outcome::fail(format!(
            "the reply to {} does not decode: {}",
            query.name(),
            decode_error(&reply).unwrap_or_default()
        ))
        .with(ev));
    };
    let shown = values
        .iter()
        .map(|v| format!("{:.3}", v.value))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(joints) = joints else {
        return Ok(Outcome::fail(format!(
            "{} values [{shown}] decode, but there is no specification to judge them by (the \
             specification check did not pass)",
            values.len()
        ))
        .with(ev));
    };
    if let Some(wrong) = judge_values(&values, joints, f) {
        return Ok(Outcome::fail(wrong).with(ev));
    }
    if f.coded
        && let Body::Message { bytes, .. } = &reply.body
    {
        let kinds: Vec<JointKind> = joints.iter().map(|j| j.kind).collect();
        match unit_dialect(&unit_codes(bytes), Some(&kinds)) {
            Ok(Dialect::OpenJaus) => {
                note_deviation(facts, C1, "§9 C1");
                return Ok(Outcome::warning(format!("{C1}; values [{shown}]")).with(ev));
            }
            Err(e) => return Ok(Outcome::fail(e).with(ev)),
            Ok(Dialect::Jsidl) => {}
        }
    }
    Ok(Outcome::pass(format!(
        "one {} per joint, within the specification: [{shown}]",
        f.what
    ))
    .with(ev))
}

/// Asks `query` for `reply_id` when `service` is listed (or unknown); `Err` is the outcome
/// to return at once (n/a, no reply, no decode).
fn ask_decoded<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    service: &str,
    query: &Message,
    reply_id: u16,
) -> io::Result<Result<(Vec<Evidence>, Message), Outcome>> {
    if let Some(na) = facts.requires(service) {
        return Ok(Err(na));
    }
    let (sent, reply) = ask(t, facts, query, reply_id)?;
    let Some(reply) = reply else {
        return Ok(Err(Outcome::fail(format!(
            "{} got no reply within {:.1} s{}",
            query.name(),
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()])));
    };
    let ev = vec![sent.evidence(), reply.evidence()];
    match reply.message() {
        Some(m) => Ok(Ok((ev, m.clone()))),
        None => Ok(Err(Outcome::fail(format!(
            "the reply to {} does not decode: {}",
            query.name(),
            decode_error(&reply).unwrap_or_default()
        ))
        .with(ev))),
    }
}

fn tool_offset<W: Wire>(t: &mut Tester<W>, facts: &mut Facts, _: &Options) -> io::Result<Outcome> {
    let service = "manipulator:ManipulatorToolOffsetService";
    let (ev, m) = match ask_decoded(
        t,
        facts,
        service,
        &QueryToolOffset.into(),
        ids::ReportToolOffset,
    )? {
        Ok(x) => x,
        Err(o) => return Ok(o),
    };
    Ok(match m {
        Message::ReportToolOffset(r) => Outcome::pass(format!(
            "tool point ({:.3}, {:.3}, {:.3}) m in the end-effector frame",
            r.x, r.y, r.z
        )),
        _ => Outcome::fail("the reply is not a ReportToolOffset"),
    }
    .with(ev))
}

fn end_effector_pose<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let service = "manipulator:ManipulatorEndEffectorPoseSensor";
    let query = QueryEndEffectorPose.into();
    let (ev, m) = match ask_decoded(t, facts, service, &query, ids::ReportEndEffectorPose)? {
        Ok(x) => x,
        Err(o) => return Ok(o),
    };
    let Message::ReportEndEffectorPose(r) = m else {
        return Ok(Outcome::fail("the reply is not a ReportEndEffectorPose").with(ev));
    };
    let p = r.pose;
    let norm = (p.d * p.d + p.a * p.a + p.b * p.b + p.c * p.c).sqrt();
    Ok(if (norm - 1.0).abs() > 1e-3 {
        Outcome::fail(format!(
            "the orientation quaternion (D, A, B, C) = ({:.4}, {:.4}, {:.4}, {:.4}) has norm \
             {norm:.4}, a unit quaternion expected",
            p.d, p.a, p.b, p.c
        ))
    } else {
        Outcome::pass(format!(
            "position ({:.3}, {:.3}, {:.3}) m, unit quaternion (norm {norm:.5})",
            p.x, p.y, p.z
        ))
    }
    .with(ev))
}

fn end_effector_force_torque<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let service = "iop:ManipulatorEndEffectorForceTorqueSensor";
    let query = QueryManipulatorEndEffectorForceTorque {
        presence_vector: 0x3F,
    }
    .into();
    let reply = ids::ReportManipulatorEndEffectorForceTorque;
    let (ev, m) = match ask_decoded(t, facts, service, &query, reply)? {
        Ok(x) => x,
        Err(o) => return Ok(o),
    };
    let Message::ReportManipulatorEndEffectorForceTorque(r) = m else {
        return Ok(
            Outcome::fail("the reply is not a ReportManipulatorEndEffectorForceTorque").with(ev),
        );
    };
    let fields = [
        ("ForceX", r.force_x),
        ("ForceY", r.force_y),
        ("ForceZ", r.force_z),
        ("TorqueX", r.torque_x),
        ("TorqueY", r.torque_y),
        ("TorqueZ", r.torque_z),
    ];
    let missing: Vec<&str> = fields
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Ok(Outcome::fail(format!(
            "all six were asked for (PV 0x3F) but {} are absent",
            missing.join(", ")
        ))
        .with(ev));
    }
    let v: Vec<String> = fields
        .iter()
        .map(|(_, v)| format!("{:.2}", v.unwrap_or_default()))
        .collect();
    Ok(Outcome::pass(format!("forces and torques: [{}] N, N·m", v.join(", "))).with(ev))
}

fn preset_poses<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    joints: Option<&[Joint]>,
) -> io::Result<Outcome> {
    let service = "iop:PresetPose";
    let query = QueryPresetPoseCapabilities.into();
    let (mut ev, m) =
        match ask_decoded(t, facts, service, &query, ids::ReportPresetPoseCapabilities)? {
            Ok(x) => x,
            Err(o) => return Ok(o),
        };
    let Message::ReportPresetPoseCapabilities(caps) = m else {
        return Ok(Outcome::fail("the reply is not a ReportPresetPoseCapabilities").with(ev));
    };
    let query = QueryPresetPoseSpecifications.into();
    let (ev2, m) = match ask_decoded(
        t,
        facts,
        service,
        &query,
        ids::ReportPresetPoseSpecifications,
    )? {
        Ok(x) => x,
        Err(o) => return Ok(o.with(ev)),
    };
    ev.extend(ev2);
    let Message::ReportPresetPoseSpecifications(specs) = m else {
        return Ok(Outcome::fail("the reply is not a ReportPresetPoseSpecifications").with(ev));
    };
    let pose_ids: BTreeSet<u8> = caps.poses.iter().map(|p| p.pose_id).collect();
    let fail = |why: String| Ok(Outcome::fail(why).with(ev.clone()));
    if pose_ids.len() != caps.poses.len() || pose_ids.contains(&255) {
        return fail("pose IDs repeat or use 255 (never a valid PoseID)".into());
    }
    let transitions: Vec<_> = caps.poses.iter().flat_map(|p| &p.transitions).collect();
    if let Some(tr) = transitions
        .iter()
        .find(|tr| !pose_ids.contains(&tr.start_pose_id) || !pose_ids.contains(&tr.end_pose_id))
    {
        return fail(format!(
            "transition {} → {} names a pose the capabilities do not list",
            tr.start_pose_id, tr.end_pose_id
        ));
    }
    let spec_ids: BTreeSet<u8> = specs.poses.iter().map(|p| p.pose_id).collect();
    if spec_ids != pose_ids {
        return fail(format!(
            "the capabilities list poses {pose_ids:?}, the specifications {spec_ids:?}"
        ));
    }
    let target = t.target;
    for p in &specs.poses {
        for pos in p.positions.iter().filter(|pos| pos.jaus_id == target) {
            if let (PresetTarget::JointPositions { joint_positions }, Some(js)) =
                (&pos.target, joints)
                && let Some(wrong) = judge_values(joint_positions, js, &Family::POSITIONS)
            {
                return fail(format!("pose {} \"{}\": {wrong}", p.pose_id, p.pose_name));
            }
        }
    }
    let names: Vec<&str> = caps.poses.iter().map(|p| p.pose_name.as_str()).collect();
    Ok(Outcome::pass(format!(
        "{} poses ({}), {} transitions, specifications agree and fit the joints",
        pose_ids.len(),
        names.join(", "),
        transitions.len()
    ))
    .with(ev))
}

/// The joint positions now, with the query and report as evidence.
fn positions_now<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
) -> io::Result<(Vec<Evidence>, Option<Vec<f64>>)> {
    let (sent, reply) = ask(
        t,
        facts,
        &QueryJointPositions.into(),
        ids::ReportJointPositions,
    )?;
    let mut ev = vec![sent.evidence()];
    let q = reply.and_then(|r| {
        ev.push(r.evidence());
        match r.message() {
            Some(Message::ReportJointPositions(p)) => {
                Some(p.joint_positions.iter().map(|v| v.value).collect())
            }
            _ => None,
        }
    });
    Ok((ev, q))
}

/// Polls positions until joint `i` is within `tol` of `goal` or `within` seconds pass.
fn await_position<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    i: usize,
    goal: f64,
    tol: f64,
    within: f64,
) -> io::Result<(Vec<Evidence>, Option<f64>, bool)> {
    let deadline = t.now() + within;
    loop {
        let (ev, q) = positions_now(t, facts)?;
        let now = q.and_then(|q| q.get(i).copied());
        let there = now.is_some_and(|v| (v - goal).abs() <= tol);
        if there || t.now() >= deadline {
            return Ok((ev, now, there));
        }
        t.collect(0.05, |_| false)?;
    }
}

/// The joint to step, its step (signed) and its speed: the first whose position ± the step
/// stays a step inside its limits.
fn pick_joint(joints: &[Joint], q: &[f64]) -> Option<(usize, f64, f64)> {
    joints.iter().zip(q).enumerate().find_map(|(i, (j, &q))| {
        let (step, default_speed) = match j.kind {
            JointKind::Revolute => (STEP_RAD, DEFAULT_SPEED.0),
            JointKind::Prismatic => (STEP_M, DEFAULT_SPEED.1),
        };
        let speed = j
            .max_speed
            .filter(|v| *v > 0.0)
            .map_or(default_speed, |v| v * SPEED_FRACTION);
        let inside =
            |x: f64| j.min.is_none_or(|lo| x >= lo + step) && j.max.is_none_or(|hi| x <= hi - step);
        if inside(q + step) {
            Some((i, step, speed))
        } else if inside(q - step) {
            Some((i, -step, speed))
        } else {
            None
        }
    })
}

/// The slow profile: every joint at most 10 % of its maximum speed, braking in 0.25 s.
fn slow_profile(joints: &[Joint]) -> SetJointMotionProfile {
    SetJointMotionProfile {
        joint_motion_profiles: joints
            .iter()
            .map(|j| {
                let (speed_scale, rate_scale) = JointMotionProfile::scales(j.kind);
                let default_speed = match j.kind {
                    JointKind::Revolute => DEFAULT_SPEED.0,
                    JointKind::Prismatic => DEFAULT_SPEED.1,
                };
                let v = speed_scale.clamp(
                    j.max_speed
                        .filter(|v| *v > 0.0)
                        .map_or(default_speed, |v| v * SPEED_FRACTION),
                );
                JointMotionProfile {
                    joint_type: j.kind,
                    max_speed: v,
                    max_acceleration: rate_scale.clamp(v / 0.25),
                    max_deceleration: rate_scale.clamp(v / 0.25),
                }
            })
            .collect(),
    }
}

fn set_positions(joints: &[Joint], q: &[f64]) -> Message {
    SetJointPositions {
        joint_positions: joints
            .iter()
            .zip(q)
            .map(|(j, &v)| match j.kind {
                JointKind::Revolute => JointValue::revolute(scales::JOINT_POSITION_RAD.clamp(v)),
                JointKind::Prismatic => JointValue::prismatic(scales::JOINT_POSITION_M.clamp(v)),
            })
            .collect(),
    }
    .into()
}

fn motion<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
    joints: Option<&[Joint]>,
) -> io::Result<Outcome> {
    if !opts.allow_motion {
        return Ok(Outcome::not_applicable(
            "not sent: --allow-motion not given",
        ));
    }
    if let Some(na) = facts.requires("manipulator:ManipulatorJointPositionDriver") {
        return Ok(na);
    }
    let Some(joints) = joints else {
        return Ok(Outcome::fail(
            "no specification: the motion check needs the joint limits and speeds (the \
             specification check did not pass), so nothing was sent",
        ));
    };
    let (sent, got) = read_status(t, facts)?;
    let Some((reply, found)) = got else {
        return Ok(Outcome::fail(format!(
            "QueryStatus got no ReportStatus within {:.1} s: nothing was sent",
            t.reply_bound
        ))
        .with([sent.evidence()]));
    };
    let mut ev = vec![sent.evidence(), reply.evidence()];
    if !matches!(found, Status::Ready | Status::Standby) {
        return Ok(Outcome::not_applicable(format!(
            "the component was found in {}: no motion is commanded outside READY or STANDBY",
            said(Some(found))
        ))
        .with(ev));
    }
    match take_control(t, opts.authority)? {
        Ok(e) => ev.extend(e),
        Err(o) => return Ok(o.with(ev)),
    }
    let outcome = step_and_back(t, facts, joints, &mut ev);
    // Standby stops whatever moves; then the state found, and control released.
    ev.push(t.send(&Standby.into())?.evidence());
    let restored = restore(t, facts, found);
    ev.extend(release_control(t)?);
    let mut o = outcome?;
    if let Some(note) = restored? {
        o.verdict = crate::conform::check::Verdict::Fail;
        o.reason.push_str(&note);
    }
    ev.append(&mut o.evidence);
    o.evidence = ev;
    Ok(o)
}

/// Control held: READY, the slow profile, one joint a step out and back. The evidence goes to
/// `ev`; the outcome carries none of its own.
fn step_and_back<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    joints: &[Joint],
    ev: &mut Vec<Evidence>,
) -> io::Result<Outcome> {
    let within = settle_bound(t);
    ev.push(t.send(&crate::jaus::core::Resume.into())?.evidence());
    let p = await_status(t, facts, within, |s| s == Status::Ready)?;
    ev.extend(p.evidence);
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "Resume gave {} within {within:.1} s, READY expected: no motion was commanded",
            said(p.status)
        )));
    }
    let (e, q0) = positions_now(t, facts)?;
    ev.extend(e);
    let Some(q0) = q0.filter(|q| q.len() == joints.len()) else {
        return Ok(Outcome::fail(
            "no ReportJointPositions with one position per joint: no motion was commanded",
        ));
    };
    let Some((i, step, speed)) = pick_joint(joints, &q0) else {
        return Ok(Outcome::fail(
            "no joint is a step inside its limits: no motion was commanded",
        ));
    };
    if facts.lists("manipulator:ManipulatorJointMotionProfile") != Some(false) {
        ev.push(t.send(&slow_profile(joints).into())?.evidence());
    }
    let tol = step.abs() * 0.1;
    let bound = (2.0 * step.abs() / speed + 2.0 * t.reply_bound).min(10.0);
    let mut goal = q0.clone();
    goal[i] += step;
    ev.push(t.send(&set_positions(joints, &goal))?.evidence());
    let (e, at, there) = await_position(t, facts, i, goal[i], tol, bound)?;
    ev.extend(e);
    if !there {
        return Ok(Outcome::fail(format!(
            "SetJointPositions moving joint {} from {:.4} to {:.4} (at {speed:.3}/s): it is at \
             {} after {bound:.1} s",
            i + 1,
            q0[i],
            goal[i],
            at.map_or_else(|| "unknown".into(), |v| format!("{v:.4}"))
        )));
    }
    ev.push(t.send(&set_positions(joints, &q0))?.evidence());
    // Back where it was found, closer than the step's tolerance: the arm is left as found.
    let home_tol = step.abs() * 0.02;
    // Waits for it to settle (0.1 mm or mrad) before Standby stops it, so that repeated runs
    // do not creep; within `home_tol` is enough to pass.
    let (e, back, _) = await_position(t, facts, i, q0[i], SETTLED, bound)?;
    let home = back.is_some_and(|v| (v - q0[i]).abs() <= home_tol);
    ev.extend(e);
    if !home {
        return Ok(Outcome::fail(format!(
            "joint {} reached {:.4}, but commanded back to {:.4} it is at {} after {bound:.1} s \
             ({home_tol:.4} expected)",
            i + 1,
            goal[i],
            q0[i],
            back.map_or_else(|| "unknown".into(), |v| format!("{v:.4}"))
        )));
    }
    Ok(Outcome::pass(format!(
        "joint {} ({}) stepped {step:+.3} to {:.4} (within {tol:.4}) and back to {:.4} (within \
         {home_tol:.4}, at {:.4}) at a profile of {speed:.3}/s, each within {bound:.1} s",
        i + 1,
        kind_word(joints[i].kind),
        goal[i],
        q0[i],
        back.unwrap_or(f64::NAN)
    )))
}
