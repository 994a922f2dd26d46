//! The boundary between the wire and the domain: the report →
//! [`Update`](crate::model::update::Update) mapping, shared by the live client (`net::client`) and
//! the replay observer (`record::observer`) — replay shows what live mode showed because both
//! decode reports through these functions — and every conversion between a wire type (`jaus::…`)
//! and its domain type (`model::…`): JAUS IDs, joint types, the manipulator specification. Nothing
//! above `net` imports the codec's types for these; the model imports no wire module at all.

use crate::jaus::core::{ReportControl, ReportServices, ServiceRec, Status};
use crate::jaus::iop::{
    PresetTarget, ReportCurrentPose, ReportPresetPoseCapabilities, ReportPresetPoseSpecifications,
};
use crate::jaus::manipulator::{
    FirstJointParameters, JointSpecification, JointValue, Pose, PrismaticJoint1,
    PrismaticJointSpecification, ReportManipulatorSpecifications, RevoluteJoint1,
    RevoluteJointSpecification,
};
use crate::jaus::{DecodeContext, JausId, JointKind, Message};
use crate::model::arm::{ArmSpec, Joint, JointType, Mount};
use crate::model::update::{ArmFact, ComponentId, ManagementState, PoseState, PresetInfo, Signal};

impl From<JausId> for ComponentId {
    fn from(id: JausId) -> Self {
        ComponentId::new(id.subsystem, id.node, id.component)
    }
}

impl From<ComponentId> for JausId {
    fn from(id: ComponentId) -> Self {
        JausId::new(id.subsystem, id.node, id.component)
    }
}

impl From<JointKind> for JointType {
    fn from(k: JointKind) -> Self {
        match k {
            JointKind::Revolute => JointType::Revolute,
            JointKind::Prismatic => JointType::Prismatic,
        }
    }
}

impl From<JointType> for JointKind {
    fn from(k: JointType) -> Self {
        match k {
            JointType::Revolute => JointKind::Revolute,
            JointType::Prismatic => JointKind::Prismatic,
        }
    }
}

/// What a decoder needs to know of an arm: its joint kinds settle the unit codes of the
/// dialects (wire reference §9 C1).
pub fn decode_context(spec: &ArmSpec) -> DecodeContext {
    DecodeContext {
        joint_kinds: Some(spec.joints.iter().map(|j| j.kind.into()).collect()),
    }
}

/// The arm a `ReportManipulatorSpecifications` describes. Joint names beyond the joint count are ignored; missing
/// ones stay `None`.
pub fn arm_spec(r: &ReportManipulatorSpecifications) -> ArmSpec {
    let mount = r.manipulator_coordinate_system.map(|p| Mount {
        position: [p.x, p.y, p.z],
        orientation: [p.d, p.a, p.b, p.c],
    });
    let mut joints = Vec::with_capacity(r.joint_count());
    joints.push(match &r.first_joint_parameters {
        FirstJointParameters::Revolute(j) => Joint {
            min: j.joint1_min_value,
            max: j.joint1_max_value,
            max_speed: j.joint1_max_speed,
            max_effort: j.joint1_max_torque,
            axis_radius: j.offset_bounding_cylinder_radius,
            ..Joint::revolute(0.0, 0.0, j.joint1_offset)
        },
        FirstJointParameters::Prismatic(j) => Joint {
            max_speed: j.joint1_max_speed,
            max_effort: j.joint1_max_force,
            axis_radius: j.joint_bounding_cylinder_radius,
            ..Joint::prismatic(
                0.0,
                0.0,
                j.joint1_angle,
                j.joint1_min_value,
                j.joint1_max_value,
            )
        },
    });
    for s in &r.joint_specifications {
        joints.push(match s {
            JointSpecification::Revolute(j) => Joint {
                min: j.min_value,
                max: j.max_value,
                max_speed: j.max_speed,
                max_effort: j.max_torque,
                axis_radius: j.offset_bounding_cylinder_radius,
                link_radius: j.link_length_bounding_cylinder_radius,
                ..Joint::revolute(j.link_length, j.twist_angle, j.joint_offset)
            },
            JointSpecification::Prismatic(j) => Joint {
                max_speed: j.max_speed,
                max_effort: j.max_force,
                axis_radius: j.joint_bounding_cylinder_radius,
                link_radius: j.link_length_bounding_cylinder_radius,
                ..Joint::prismatic(
                    j.link_length,
                    j.twist_angle,
                    j.joint_angle,
                    j.min_value,
                    j.max_value,
                )
            },
        });
    }
    if let Some(names) = &r.joint_names {
        for (j, n) in joints.iter_mut().zip(names) {
            j.name = Some(n.clone());
        }
    }
    ArmSpec { mount, joints }
}

/// To the wire specification. Prismatic limits are mandatory on the wire: a missing one
/// is sent as 0 (arm files refuse that case before it gets here). Names are sent when
/// every joint has one.
pub fn spec_report(spec: &ArmSpec) -> ReportManipulatorSpecifications {
    let manipulator_coordinate_system = spec.mount.map(|m| Pose {
        x: m.position[0],
        y: m.position[1],
        z: m.position[2],
        d: m.orientation[0],
        a: m.orientation[1],
        b: m.orientation[2],
        c: m.orientation[3],
    });
    let first = &spec.joints[0];
    let first_joint_parameters = match first.kind {
        JointType::Revolute => FirstJointParameters::Revolute(RevoluteJoint1 {
            joint1_offset: first.offset,
            joint1_min_value: first.min,
            joint1_max_value: first.max,
            joint1_max_speed: first.max_speed,
            joint1_max_torque: first.max_effort,
            offset_bounding_cylinder_radius: first.axis_radius,
        }),
        JointType::Prismatic => FirstJointParameters::Prismatic(PrismaticJoint1 {
            joint1_angle: first.angle,
            joint1_min_value: first.min.unwrap_or(0.0),
            joint1_max_value: first.max.unwrap_or(0.0),
            joint1_max_speed: first.max_speed,
            joint1_max_force: first.max_effort,
            joint_bounding_cylinder_radius: first.axis_radius,
        }),
    };
    let joint_specifications = spec.joints[1..]
        .iter()
        .map(|j| match j.kind {
            JointType::Revolute => JointSpecification::Revolute(RevoluteJointSpecification {
                link_length: j.link_length,
                twist_angle: j.twist,
                joint_offset: j.offset,
                min_value: j.min,
                max_value: j.max,
                max_speed: j.max_speed,
                max_torque: j.max_effort,
                offset_bounding_cylinder_radius: j.axis_radius,
                link_length_bounding_cylinder_radius: j.link_radius,
            }),
            JointType::Prismatic => JointSpecification::Prismatic(PrismaticJointSpecification {
                link_length: j.link_length,
                twist_angle: j.twist,
                joint_angle: j.angle,
                min_value: j.min.unwrap_or(0.0),
                max_value: j.max.unwrap_or(0.0),
                max_speed: j.max_speed,
                max_force: j.max_effort,
                joint_bounding_cylinder_radius: j.axis_radius,
                link_length_bounding_cylinder_radius: j.link_radius,
            }),
        })
        .collect();
    let joint_names = spec
        .joints
        .iter()
        .map(|j| j.name.clone())
        .collect::<Option<Vec<String>>>();
    ReportManipulatorSpecifications {
        manipulator_coordinate_system,
        first_joint_parameters,
        joint_specifications,
        joint_names,
    }
}

/// The management state a `ReportStatus` carries (undefined codes are `Unknown`).
pub fn status_of(s: Status) -> ManagementState {
    match s {
        Status::Initialize => ManagementState::Initialize,
        Status::Ready => ManagementState::Ready,
        Status::Standby => ManagementState::Standby,
        Status::Shutdown => ManagementState::Shutdown,
        Status::Failure => ManagementState::Failure,
        Status::Emergency => ManagementState::Emergency,
        Status::Other(_) => ManagementState::Unknown,
    }
}

/// The fact about its arm a report (received directly or inside an Event) means, stamped `now`, with the
/// signal it belongs to; the message back when it is no such report.
///
/// It takes the report: a joint list becomes the fact's values in the list's own allocation
/// (`Vec::into_iter().map().collect()` collects in place when the element shrinks, here from
/// 16 to 8 bytes), one allocation less for each report of a 1 kHz stream.
pub fn report_update(now: f64, report: Message) -> Result<(Signal, ArmFact), Message> {
    let values = |v: Vec<JointValue>| v.into_iter().map(|x| x.value).collect::<Vec<f64>>();
    Ok(match report {
        Message::ReportJointPositions(r) => (
            Signal::JointPositions,
            ArmFact::JointPositions {
                t: now,
                values: values(r.joint_positions),
            },
        ),
        Message::ReportJointVelocity(r) => (
            Signal::JointVelocities,
            ArmFact::JointVelocities {
                t: now,
                values: values(r.joint_velocities),
            },
        ),
        Message::ReportJointEffort(r) => (
            Signal::JointEfforts,
            ArmFact::JointEfforts {
                t: now,
                values: r.joint_efforts,
            },
        ),
        Message::ReportJointForceTorques(r) => (
            Signal::JointForceTorques,
            ArmFact::JointForceTorques {
                t: now,
                values: values(r.joint_force_torques),
            },
        ),
        Message::ReportManipulatorEndEffectorForceTorque(r) => (
            Signal::EndEffectorForceTorque,
            ArmFact::ForceTorque {
                t: now,
                force: [r.force_x, r.force_y, r.force_z],
                torque: [r.torque_x, r.torque_y, r.torque_z],
            },
        ),
        Message::ReportCurrentPose(r) => (
            Signal::CurrentPose,
            ArmFact::CurrentPose {
                t: now,
                pose: match r {
                    // 255: the arm is at none of its presets.
                    ReportCurrentPose::AtPose {
                        current_state_id: 255,
                    } => PoseState::Unknown,
                    ReportCurrentPose::AtPose { current_state_id } => {
                        PoseState::At(current_state_id)
                    }
                    ReportCurrentPose::Moving {
                        start_state_id,
                        end_state_id,
                    } => PoseState::Moving {
                        from: start_state_id,
                        to: end_state_id,
                    },
                },
            },
        ),
        Message::ReportStatus(r) => (
            Signal::Status,
            ArmFact::Status {
                t: now,
                state: status_of(r.status),
            },
        ),
        other => return Err(other),
    })
}

/// The controller a `ReportControl` names (`None`: nobody, all zero), and whether it was read
/// in another byte order (wire reference §9 C9): decoded per JSIDL (`SubsystemID` u16, `NodeID`,
/// `ComponentID`); when that is no component `known` says it knows while the order one peer
/// writes (`NodeID`, `ComponentID`, `SubsystemID` u16) is, the latter is taken and `true`
/// returned, for the caller to count and log once.
pub fn controller_of(r: &ReportControl, known: impl Fn(JausId) -> bool) -> (Option<JausId>, bool) {
    let jsidl = JausId::new(r.subsystem_id, r.node_id, r.component_id);
    if r.subsystem_id == 0 && r.node_id == 0 && r.component_id == 0 {
        return (None, false);
    }
    if known(jsidl) {
        return (Some(jsidl), false);
    }
    // The bytes as sent: the peer's first two fields where JSIDL has the subsystem, its
    // subsystem where JSIDL has node and component. Observed live: component, node (the order
    // of a JAUS ID in a header); node, component as its documentation says.
    let [b0, b1] = r.subsystem_id.to_le_bytes();
    let subsystem = u16::from_le_bytes([r.node_id, r.component_id]);
    [
        JausId::new(subsystem, b1, b0),
        JausId::new(subsystem, b0, b1),
    ]
    .into_iter()
    .find(|id| known(*id))
    .map_or((Some(jsidl), false), |id| (Some(id), true))
}

/// The component a `ReportServices` from `source` lists as (`node`, `component`), and whether
/// the listing used wildcard IDs (wire reference §9 C8: a peer echoes the query's 255s). A
/// wildcard is never a component: the datagram's source ID stands for it, and the caller
/// counts the deviation.
pub fn listed_component(source: JausId, node: u8, component: u8) -> (JausId, bool) {
    if node == 255 || component == 255 || node == 0 || component == 0 {
        (source, true)
    } else {
        (JausId::new(source.subsystem, node, component), false)
    }
}

/// One component a `ReportServices` lists, every record naming it merged (wire reference
/// §9 C13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedServices {
    /// The component ([`listed_component`]: the sender stands for wildcard IDs).
    pub id: JausId,
    /// How many of the records naming it used wildcard IDs (§9 C8), for the caller to count.
    pub wildcard_records: u64,
    /// Its services (URI, major, minor): the union of its records' lists, in the order listed,
    /// each once.
    pub services: Vec<(String, u8, u8)>,
}

/// The components one `ReportServices` from `source` lists, each once, in the order first
/// named. A peer may list one (node, component) in several records (the JAUS Tool Set puts
/// each service in a record of its own, §9 C13): within one report their services are merged.
/// The result is the component's whole list as of this report; the caller replaces what an
/// earlier report said with it, never merges across reports.
pub fn listed_services(source: JausId, r: &ReportServices) -> Vec<ListedServices> {
    listed_services_bounded(source, r, usize::MAX).0
}

/// [`listed_services`] of at most `max` components: the list, and how many records naming
/// further components were left out (a report may name 255 × 255 components; merging them is
/// quadratic, so the bound comes first).
pub fn listed_services_bounded(
    source: JausId,
    r: &ReportServices,
    max: usize,
) -> (Vec<ListedServices>, usize) {
    let mut listed: Vec<ListedServices> = Vec::new();
    let mut past = 0usize;
    for node in &r.nodes {
        for c in &node.components {
            let (id, wildcard) = listed_component(source, node.node_id, c.component_id);
            let i = match listed.iter().position(|l| l.id == id) {
                Some(i) => i,
                None if listed.len() >= max => {
                    past += 1;
                    continue;
                }
                None => {
                    listed.push(ListedServices {
                        id,
                        wildcard_records: 0,
                        services: Vec::new(),
                    });
                    listed.len() - 1
                }
            };
            let entry = &mut listed[i];
            entry.wildcard_records += u64::from(wildcard);
            for s in service_list(&c.services) {
                if !entry.services.contains(&s) {
                    entry.services.push(s);
                }
            }
        }
    }
    (listed, past)
}

/// Takes a report's list for a component (from [`listed_services`]) as its services: the list
/// replaces what an earlier report said, except that an empty list (a peer that echoed the
/// query's wildcards, §9 C8) does not replace a list already known.
pub fn take_services(known: &mut Vec<(String, u8, u8)>, reported: Vec<(String, u8, u8)>) {
    if !reported.is_empty() || known.is_empty() {
        *known = reported;
    }
}

/// Whether a component's services (URI, major, minor) make it a manipulator
/// ([`is_manipulator_service`]).
pub fn is_manipulator(services: &[(String, u8, u8)]) -> bool {
    services
        .iter()
        .any(|(uri, _, _)| is_manipulator_service(uri))
}

/// Whether offering the service `uri` makes a component a manipulator: its specification or
/// its joint positions (what the OCU follows and `conform` tests).
pub fn is_manipulator_service(uri: &str) -> bool {
    uri == "urn:jaus:jss:manipulator:ManipulatorSpecificationService"
        || uri == "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor"
}

/// Reports an OCU reads without turning them into updates (so they are not "unexpected").
pub fn is_ignored_report(report: &Message) -> bool {
    matches!(
        report,
        Message::ReportControl(_) | Message::ReportAuthority(_) | Message::ReportEndEffectorPose(_)
    )
}

/// Merges a `ReportPresetPoseCapabilities` into `presets` (names; positions kept).
pub fn merge_preset_capabilities(presets: &mut Vec<PresetInfo>, r: &ReportPresetPoseCapabilities) {
    for p in &r.poses {
        match presets.iter_mut().find(|x| x.id == p.pose_id) {
            Some(x) => x.name.clone_from(&p.pose_name),
            None => presets.push(PresetInfo {
                id: p.pose_id,
                name: p.pose_name.clone(),
                positions: None,
            }),
        }
    }
}

/// Merges a `ReportPresetPoseSpecifications` from manipulator `from` into `presets`: names, and
/// the joint positions the pose gives for `from` itself.
pub fn merge_preset_specifications(
    presets: &mut Vec<PresetInfo>,
    r: &ReportPresetPoseSpecifications,
    from: JausId,
) {
    for p in &r.poses {
        let positions = p.positions.iter().find_map(|pp| match &pp.target {
            PresetTarget::JointPositions { joint_positions } if pp.jaus_id == from => Some(
                joint_positions
                    .iter()
                    .map(|v| v.value)
                    .collect::<Vec<f64>>(),
            ),
            _ => None,
        });
        match presets.iter_mut().find(|x| x.id == p.pose_id) {
            Some(x) => {
                x.name.clone_from(&p.pose_name);
                x.positions = positions;
            }
            None => presets.push(PresetInfo {
                id: p.pose_id,
                name: p.pose_name.clone(),
                positions,
            }),
        }
    }
}

/// A component's services as (URI, major, minor), as `ReportServices` lists them.
pub fn service_list(services: &[ServiceRec]) -> Vec<(String, u8, u8)> {
    services
        .iter()
        .map(|s| {
            (
                s.uri.clone(),
                s.major_version_number,
                s.minor_version_number,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(node: u8, component: u8, uris: &[&str]) -> crate::jaus::core::NodeServices {
        crate::jaus::core::NodeServices {
            node_id: node,
            components: vec![crate::jaus::core::ComponentServices {
                component_id: component,
                instance_id: 0,
                services: uris.iter().map(|u| ServiceRec::new(u, 1, 0)).collect(),
            }],
        }
    }

    fn uris(l: &ListedServices) -> Vec<&str> {
        l.services.iter().map(|(u, _, _)| u.as_str()).collect()
    }

    #[test]
    fn records_of_one_component_in_one_report_are_merged_in_order_without_duplicates() {
        // §9 C13: the JAUS Tool Set lists each service in a node record of its own.
        let source = JausId::new(126, 1, 199);
        let r = ReportServices {
            nodes: vec![
                record(1, 199, &["a"]),
                record(1, 11, &["x"]),
                record(1, 199, &["b", "a"]),
                record(1, 199, &["c"]),
            ],
        };
        let listed = listed_services(source, &r);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].id, source);
        assert_eq!(uris(&listed[0]), ["a", "b", "c"]);
        assert_eq!(listed[1].id, JausId::new(126, 1, 11));
        assert_eq!(uris(&listed[1]), ["x"]);
        assert!(listed.iter().all(|l| l.wildcard_records == 0));
        // The same URI at another version is another service.
        let r = ReportServices {
            nodes: vec![record(1, 199, &["a"]), {
                let mut n = record(1, 199, &[]);
                n.components[0].services.push(ServiceRec::new("a", 2, 0));
                n
            }],
        };
        assert_eq!(listed_services(source, &r)[0].services.len(), 2);
    }

    #[test]
    fn wildcard_records_stand_for_the_sender_and_are_counted_per_record() {
        let source = JausId::new(126, 1, 10);
        let r = ReportServices {
            nodes: vec![record(255, 255, &[]), record(1, 10, &["a"])],
        };
        let listed = listed_services(source, &r);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, source);
        assert_eq!(listed[0].wildcard_records, 1);
        assert_eq!(uris(&listed[0]), ["a"]);
    }

    #[test]
    fn a_later_list_replaces_the_earlier_one_unless_it_is_empty() {
        let s = |u: &str| (u.to_string(), 1, 0);
        let mut known = Vec::new();
        take_services(&mut known, vec![s("a"), s("b")]);
        take_services(&mut known, vec![s("b")]);
        assert_eq!(known, [s("b")]);
        take_services(&mut known, Vec::new());
        assert_eq!(known, [s("b")]);
    }

    #[test]
    fn a_report_control_in_the_header_byte_order_is_read_when_only_that_is_known() {
        // Issue 13 item 8 (§9 C9): `14 01 7e 00 c8` for controller 126.1.20, authority 200.
        let r = ReportControl {
            subsystem_id: u16::from_le_bytes([0x14, 0x01]),
            node_id: 0x7e,
            component_id: 0x00,
            authority_code: 200,
        };
        let ours = JausId::new(126, 1, 20);
        assert_eq!(controller_of(&r, |id| id == ours), (Some(ours), true));
        // Nobody known either way: the JSIDL reading, no deviation claimed.
        assert_eq!(
            controller_of(&r, |_| false),
            (Some(JausId::new(0x0114, 0x7e, 0)), false)
        );
        // JSIDL order, known: taken as is.
        let jsidl = ReportControl {
            subsystem_id: 126,
            node_id: 1,
            component_id: 20,
            authority_code: 200,
        };
        assert_eq!(controller_of(&jsidl, |id| id == ours), (Some(ours), false));
        let nobody = ReportControl {
            subsystem_id: 0,
            node_id: 0,
            component_id: 0,
            authority_code: 0,
        };
        assert_eq!(controller_of(&nobody, |_| true), (None, false));
    }
}
