//! The report → [`Update`] mapping, shared by the live client (`net::client`) and the replay
//! observer (`record::observer`): replay shows what live mode showed because both decode
//! reports through these functions.

use crate::jaus::Message;
use crate::jaus::core::{ServiceRec, Status};
use crate::jaus::iop::{
    PresetTarget, ReportCurrentPose, ReportPresetPoseCapabilities, ReportPresetPoseSpecifications,
};
use crate::jaus::manipulator::JointValue;
use crate::model::update::{ComponentId, ManagementState, PoseState, PresetInfo, Signal, Update};

/// The management state a ReportStatus carries (undefined codes are `Unknown`).
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

/// The update a report (received directly or inside an Event) means, stamped `now`, with the
/// signal it belongs to; `None` for messages that are not such reports.
pub fn report_update(now: f64, report: &Message) -> Option<(Signal, Update)> {
    let values = |v: &[JointValue]| v.iter().map(|x| x.value).collect::<Vec<f64>>();
    Some(match report {
        Message::ReportJointPositions(r) => (
            Signal::JointPositions,
            Update::JointPositions {
                t: now,
                values: values(&r.joint_positions),
            },
        ),
        Message::ReportJointVelocity(r) => (
            Signal::JointVelocities,
            Update::JointVelocities {
                t: now,
                values: values(&r.joint_velocities),
            },
        ),
        Message::ReportJointEffort(r) => (
            Signal::JointEfforts,
            Update::JointEfforts {
                t: now,
                values: r.joint_efforts.clone(),
            },
        ),
        Message::ReportJointForceTorques(r) => (
            Signal::JointForceTorques,
            Update::JointForceTorques {
                t: now,
                values: values(&r.joint_force_torques),
            },
        ),
        Message::ReportManipulatorEndEffectorForceTorque(r) => (
            Signal::EndEffectorForceTorque,
            Update::ForceTorque {
                t: now,
                force: [r.force_x, r.force_y, r.force_z],
                torque: [r.torque_x, r.torque_y, r.torque_z],
            },
        ),
        Message::ReportCurrentPose(r) => (
            Signal::CurrentPose,
            Update::CurrentPose {
                t: now,
                pose: match *r {
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
            Update::Status {
                t: now,
                state: status_of(r.status),
            },
        ),
        _ => return None,
    })
}

/// Whether a component's services (URI, major, minor) make it a manipulator.
pub fn is_manipulator(services: &[(String, u8, u8)]) -> bool {
    services.iter().any(|(uri, _, _)| {
        uri == "urn:jaus:jss:manipulator:ManipulatorSpecificationService"
            || uri == "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor"
    })
}

/// Reports an OCU reads without turning them into updates (so they are not "unexpected").
pub fn is_ignored_report(report: &Message) -> bool {
    matches!(
        report,
        Message::ReportControl(_) | Message::ReportAuthority(_) | Message::ReportEndEffectorPose(_)
    )
}

/// Merges a ReportPresetPoseCapabilities into `presets` (names; positions kept).
pub fn merge_preset_capabilities(presets: &mut Vec<PresetInfo>, r: &ReportPresetPoseCapabilities) {
    for p in &r.poses {
        match presets.iter_mut().find(|x| x.id == p.pose_id) {
            Some(x) => x.name = p.pose_name.clone(),
            None => presets.push(PresetInfo {
                id: p.pose_id,
                name: p.pose_name.clone(),
                positions: None,
            }),
        }
    }
}

/// Merges a ReportPresetPoseSpecifications from manipulator `from` into `presets`: names, and
/// the joint positions the pose gives for `from` itself.
pub fn merge_preset_specifications(
    presets: &mut Vec<PresetInfo>,
    r: &ReportPresetPoseSpecifications,
    from: ComponentId,
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
                x.name = p.pose_name.clone();
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

/// A component's services as (URI, major, minor), as ReportServices lists them.
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
