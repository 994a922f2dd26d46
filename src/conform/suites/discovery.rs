//! The `discovery` suite (wire reference §8.1, §8.2 "Discovery", §9 C7, C8, C13): the
//! component identifies itself, lists its services for its own ID and for a wildcard query,
//! with the versions of the service definitions, and every service it lists answers a query
//! of its own.

use std::io;

use crate::conform::check::Outcome;
use crate::conform::run::{Facts, Options, Run, ask};
use crate::conform::tester::{Received, Tester, Wire};
use crate::jaus::core::{
    QueryControl, QueryEvents, QueryHeartbeatPulse, QueryIdentification, QueryServices,
    QueryServicesNode, QueryStatus, QueryType, ReportServices, ServiceRec,
};
use crate::jaus::iop::{QueryManipulatorEndEffectorForceTorque, QueryPresetPoseCapabilities};
use crate::jaus::manipulator::{
    QueryCommandedEndEffectorVelocityState, QueryCommandedJointPositions,
    QueryCommandedJointVelocity, QueryEndEffectorPose, QueryEndEffectorVelocityState,
    QueryJointEffort, QueryJointForceTorques, QueryJointMotionProfile, QueryJointPositions,
    QueryJointVelocity, QueryManipulatorSpecifications, QueryToolOffset,
};
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    r.check(
        "identification",
        "QueryIdentification (subsystem) is answered with ReportIdentification",
        "wire reference §8.2 Discovery, §8.4 0x2B00/0x4B00",
        identification,
    );
    r.check(
        "services-own-id",
        "QueryServices naming the component lists its services",
        "wire reference §8.2 Discovery, §8.4 0x2B03/0x4B03, §9 C13",
        services_own_id,
    );
    r.check(
        "services-wildcard",
        "QueryServices with wildcard node and component lists it too",
        "wire reference §8.4 0x2B03 (255 = all), §9 C8",
        services_wildcard,
    );
    r.check(
        "service-versions",
        "The listed services carry the versions of their definitions",
        "wire reference §6.1, §7, §8.1, §9 C7",
        |_, facts, _| Ok(versions(facts)),
    );
    let services = r.facts.services.clone().unwrap_or_default();
    let mut asked = Vec::new();
    for rec in services {
        let Some(short) = rec.uri.rsplit(':').next().map(str::to_string) else {
            continue;
        };
        if asked.contains(&short) {
            continue;
        }
        asked.push(short.clone());
        let Some((query, reply)) = query_of(&rec.uri) else {
            continue;
        };
        r.check(
            format!("answers-{short}"),
            format!("{short} answers {}", query.name()),
            "wire reference §6.1, §7, §8.1 (the service's messages)",
            move |t, facts, _| {
                let (sent, got) = ask(t, facts, &query, reply)?;
                Ok(match got {
                    Some(g) if g.message().is_some() => Outcome::pass(format!(
                        "{} answered with {} in {:.1} ms",
                        query.name(),
                        name(reply),
                        (g.at - t.frames()[sent.first_frame as usize - 1].at) * 1e3
                    ))
                    .with([sent.evidence(), g.evidence()]),
                    Some(g) => Outcome::fail(format!(
                        "{} was answered with a {} that does not decode: {}",
                        query.name(),
                        name(reply),
                        decode_error(&g)
                    ))
                    .with([sent.evidence(), g.evidence()]),
                    None => Outcome::fail(format!(
                        "{} got no {} within {:.1} s, though the component lists {}",
                        query.name(),
                        name(reply),
                        t.reply_bound,
                        rec.uri
                    ))
                    .with([sent.evidence()]),
                })
            },
        );
    }
}

fn name(id: u16) -> String {
    crate::conform::tester::name_of(id)
}

fn decode_error(r: &Received) -> String {
    match &r.body {
        crate::conform::tester::Body::Message { parsed: Err(e), .. } => e.to_string(),
        _ => "not a message".into(),
    }
}

fn identification<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let q: Message = QueryIdentification {
        query_type: QueryType::Subsystem,
    }
    .into();
    let (sent, got) = ask(t, facts, &q, ids::ReportIdentification)?;
    let Some(got) = got else {
        return Ok(Outcome::fail(format!(
            "no ReportIdentification within {:.1} s: OCUs find subsystems this way",
            t.reply_bound
        ))
        .with([sent.evidence()]));
    };
    let evidence = [sent.evidence(), got.evidence()];
    Ok(match got.message() {
        Some(Message::ReportIdentification(ri)) => {
            facts.identification = Some(format!("{:?} \"{}\"", ri.kind, ri.identification));
            if ri.query_type == QueryType::Subsystem {
                Outcome::pass(format!(
                    "ReportIdentification: type {:?}, \"{}\"",
                    ri.kind, ri.identification
                ))
            } else {
                Outcome::fail(format!(
                    "ReportIdentification answers query type {:?}, not the SUBSYSTEM asked",
                    ri.query_type
                ))
            }
        }
        _ => Outcome::fail(format!(
            "ReportIdentification does not decode: {}",
            decode_error(&got)
        )),
    }
    .with(evidence))
}

/// The target's services in `rs` (every record naming it, §9 C13) and how many records.
fn services_in(rs: &ReportServices, source: JausId, target: JausId) -> (Vec<ServiceRec>, usize) {
    let mut services = Vec::new();
    let mut records = 0;
    if source.subsystem != target.subsystem {
        return (services, 0);
    }
    for node in rs.nodes.iter().filter(|n| n.node_id == target.node) {
        for c in node
            .components
            .iter()
            .filter(|c| c.component_id == target.component)
        {
            records += 1;
            services.extend(c.services.iter().cloned());
        }
    }
    (services, records)
}

/// What the other suites need when this one does not run: the component's services, asked
/// for its own ID (not a check; its frames are in the capture all the same).
pub fn learn<W: Wire>(t: &mut Tester<W>, facts: &mut Facts) -> io::Result<()> {
    let _ = services_own_id(
        t,
        facts,
        &Options {
            suites: Vec::new(),
            authority: 0,
            allow_motion: false,
        },
    )?;
    Ok(())
}

fn services_own_id<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let q: Message = QueryServices {
        nodes: vec![QueryServicesNode {
            node_id: t.target.node,
            components: vec![t.target.component],
        }],
    }
    .into();
    let (sent, got) = ask(t, facts, &q, ids::ReportServices)?;
    let Some(got) = got else {
        return Ok(Outcome::fail(format!(
            "no ReportServices within {:.1} s: an OCU cannot learn what the component offers",
            t.reply_bound
        ))
        .with([sent.evidence()]));
    };
    let evidence = [sent.evidence(), got.evidence()];
    let Some(Message::ReportServices(rs)) = got.message() else {
        return Ok(Outcome::fail(format!(
            "ReportServices does not decode: {}",
            decode_error(&got)
        ))
        .with(evidence));
    };
    let (services, records) = services_in(rs, got.header.source, t.target);
    facts.services = Some(services.clone());
    Ok(if services.is_empty() {
        Outcome::fail(format!(
            "ReportServices lists no service for {} (it lists {} node records)",
            t.target,
            rs.nodes.len()
        ))
    } else if records > 1 {
        let d = format!(
            "the component's services are spread over {records} records naming it in one report"
        );
        facts
            .deviations
            .insert(d.clone(), "wire reference §9 C13".into());
        Outcome::warning(format!(
            "deviation: {d} (the JTS examples do this; read as their union, §9 C13): {} services",
            services.len()
        ))
    } else {
        Outcome::pass(format!("{} services listed", services.len()))
    }
    .with(evidence))
}

fn services_wildcard<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let q: Message = QueryServices::all().into();
    let (sent, got) = ask(t, facts, &q, ids::ReportServices)?;
    let Some(got) = got else {
        let d = "no answer to a wildcard QueryServices";
        facts
            .deviations
            .insert(d.into(), "wire reference §8.4 0x2B03".into());
        return Ok(Outcome::warning(format!(
            "deviation: {d} within {:.1} s; an OCU that discovers by wildcard (jaus-ocu does, \
             then asks each ID) learns its services only when it asks for its own ID",
            t.reply_bound
        ))
        .with([sent.evidence()]));
    };
    let evidence = [sent.evidence(), got.evidence()];
    let Some(Message::ReportServices(rs)) = got.message() else {
        return Ok(Outcome::fail(format!(
            "ReportServices does not decode: {}",
            decode_error(&got)
        ))
        .with(evidence));
    };
    let echoes_wildcard = rs
        .nodes
        .iter()
        .any(|n| n.node_id == 255 || n.components.iter().any(|c| c.component_id == 255));
    let (services, _) = services_in(rs, got.header.source, t.target);
    Ok(if !services.is_empty() {
        let own = facts.services.as_ref().map_or(0, Vec::len);
        if own > 0 && services.len() != own {
            Outcome::fail(format!(
                "the wildcard answer lists {} services for {}, the answer to its own ID {own}",
                services.len(),
                t.target
            ))
        } else {
            Outcome::pass(format!(
                "the wildcard answer lists the component with {} services",
                services.len()
            ))
        }
    } else if echoes_wildcard {
        let d = "answers a wildcard QueryServices by echoing node/component 255 with no services";
        facts
            .deviations
            .insert(d.into(), "wire reference §9 C8".into());
        Outcome::warning(format!(
            "deviation: {d} (format.py's bug, §9 C8); asked for its own ID it answers properly"
        ))
    } else {
        Outcome::fail(format!(
            "the wildcard answer does not name {} (it lists {} node records)",
            t.target,
            rs.nodes.len()
        ))
    }
    .with(evidence))
}

/// The versions the definitions carry: core 1.1 (1.0 for Transport, Discovery, Liveness is
/// OpenJAUS's rendering, §9 C7), manipulator 2.x (§6.1), IOP 1.x (§7).
fn versions(facts: &mut Facts) -> Outcome {
    let Some(services) = facts.services.clone() else {
        return Outcome::not_applicable(
            "the component's services are unknown (QueryServices not answered)",
        );
    };
    let mut wrong = Vec::new();
    let mut old = Vec::new();
    for s in &services {
        let (major, minor) = (s.major_version_number, s.minor_version_number);
        let expected_major = if s.uri.starts_with("urn:jaus:jss:core:") {
            1
        } else if s.uri.starts_with("urn:jaus:jss:manipulator:") {
            2
        } else if s.uri.starts_with("urn:jaus:jss:iop:") {
            1
        } else {
            continue;
        };
        if major != expected_major {
            wrong.push(format!(
                "{} {major}.{minor} (expected {expected_major}.x)",
                s.uri
            ));
        } else if s.uri.starts_with("urn:jaus:jss:core:") && minor == 0 {
            old.push(format!("{} 1.0", s.uri));
        }
    }
    if !wrong.is_empty() {
        return Outcome::fail(format!(
            "an OCU matches services by URI and major version (§8.2): {}",
            wrong.join(", ")
        ));
    }
    if !old.is_empty() {
        let d = format!("core services at version 1.0: {}", old.join(", "));
        facts
            .deviations
            .insert(d.clone(), "wire reference §9 C7".into());
        return Outcome::warning(format!(
            "deviation: {d} (OpenJAUS's rendering; the layouts are byte-identical, §9 C7)"
        ));
    }
    Outcome::pass(format!(
        "{} services, each at the major version of its definition",
        services.len()
    ))
}

/// One query a service answers, and its reply, by the service's URI (§6.1, §7, §8.1).
fn query_of(uri: &str) -> Option<(Message, u16)> {
    let name = uri.rsplit(':').next()?;
    Some(match name {
        "Events" => (
            QueryEvents::AllEvents { all_events: 0 }.into(),
            ids::ReportEvents,
        ),
        "AccessControl" => (QueryControl.into(), ids::ReportControl),
        "Management" => (QueryStatus.into(), ids::ReportStatus),
        "Liveness" => (QueryHeartbeatPulse.into(), ids::ReportHeartbeatPulse),
        "Discovery" => (
            QueryIdentification {
                query_type: QueryType::Subsystem,
            }
            .into(),
            ids::ReportIdentification,
        ),
        "ManipulatorSpecificationService" => (
            QueryManipulatorSpecifications {
                presence_vector: 0x03,
            }
            .into(),
            ids::ReportManipulatorSpecifications,
        ),
        "ManipulatorJointPositionSensor" => (QueryJointPositions.into(), ids::ReportJointPositions),
        "ManipulatorJointVelocitySensor" => (QueryJointVelocity.into(), ids::ReportJointVelocity),
        "ManipulatorJointForceTorqueSensor" => {
            (QueryJointForceTorques.into(), ids::ReportJointForceTorques)
        }
        "ManipulatorEndEffectorPoseSensor" => {
            (QueryEndEffectorPose.into(), ids::ReportEndEffectorPose)
        }
        "ManipulatorEndEffectorVelocityStateSensor" => (
            QueryEndEffectorVelocityState.into(),
            ids::ReportEndEffectorVelocityState,
        ),
        "ManipulatorToolOffsetService" => (QueryToolOffset.into(), ids::ReportToolOffset),
        "ManipulatorJointMotionProfile" => (
            QueryJointMotionProfile.into(),
            ids::ReportJointMotionProfile,
        ),
        "PrimitiveManipulator" => (QueryJointEffort.into(), ids::ReportJointEffort),
        "ManipulatorJointPositionDriver" => (
            QueryCommandedJointPositions.into(),
            ids::ReportCommandedJointPositions,
        ),
        "ManipulatorJointVelocityDriver" => (
            QueryCommandedJointVelocity.into(),
            ids::ReportCommandedJointVelocity,
        ),
        "ManipulatorEndEffectorVelocityStateDriver" => (
            QueryCommandedEndEffectorVelocityState.into(),
            ids::ReportCommandedEndEffectorVelocityState,
        ),
        "ManipulatorEndEffectorForceTorqueSensor" => (
            QueryManipulatorEndEffectorForceTorque {
                presence_vector: 0xFF,
            }
            .into(),
            ids::ReportManipulatorEndEffectorForceTorque,
        ),
        "PresetPose" => (
            QueryPresetPoseCapabilities.into(),
            ids::ReportPresetPoseCapabilities,
        ),
        _ => return None,
    })
}
