//! What the simulator answers to queries: one report per query, from the arm's state now.

use glam::{DMat3, DQuat, DVec3};

use super::{Component, Drivers};
use crate::jaus::Message;
use crate::jaus::core::{
    ComponentInstance, ComponentServices, ConfigurationNode, IdentificationType, NodeServices,
    QueryType, ReportAuthority, ReportConfiguration, ReportControl, ReportEventTimeout,
    ReportHeartbeatPulse, ReportIdentification, ReportServiceList, ReportServices, ReportStatus,
    ReportSubsystemList, ReportTimeout, ServiceRec, SubsystemRec, SubsystemServices,
};
use crate::jaus::iop::{
    PoseCapability, PresetPoseSpecification, PresetPositions, PresetTarget, ReportCurrentPose,
    ReportManipulatorEndEffectorForceTorque, ReportPresetPoseCapabilities,
    ReportPresetPoseSpecifications, Transition,
};
use crate::jaus::manipulator::{
    EndEffectorVelocity, FORCE_TORQUE, JointValue, POSITION, Pose,
    ReportCommandedEndEffectorVelocityState, ReportCommandedJointPositions,
    ReportCommandedJointVelocity, ReportEndEffectorPose, ReportEndEffectorVelocityState,
    ReportJointEffort, ReportJointForceTorques, ReportJointPositions, ReportJointVelocity,
    ReportToolOffset, VELOCITY, VariableFamily,
};
use crate::jaus::wire::{Scale, scales};
use crate::model::kinematics;
use crate::net::reports;

impl Component {
    fn joint_values(&self, values: &[f64], family: VariableFamily) -> Vec<JointValue> {
        values
            .iter()
            .zip(&self.arm.spec.joints)
            .map(|(&v, j)| JointValue {
                joint_type: j.kind.into(),
                value: family.scale(j.kind.into()).clamp(v),
            })
            .collect()
    }

    fn vehicle_from_end_effector(&self) -> DMat3 {
        let m = self.arm.spec.mount_or_identity();
        let [d, a, b, c] = m.orientation;
        let mount = DQuat::from_xyzw(a, b, c, d).normalize();
        let ee = kinematics::end_effector_pose(&self.arm.spec, self.motion.positions(), [0.0; 3])
            .map_or(DQuat::IDENTITY, |(_, [d, a, b, c])| {
                DQuat::from_xyzw(a, b, c, d)
            });
        DMat3::from_quat(mount * ee)
    }

    /// The report answering a query now, or `None` if we do not answer it (also a query of a
    /// driver not offered).
    #[allow(
        clippy::too_many_lines,
        reason = "one arm per query, a table read top to bottom; split up, it would be scattered \
                  over functions that each build one report"
    )]
    pub fn answer(&mut self, now: f64, query: &Message) -> Option<Message> {
        let id = self.cfg.id;
        if !self.cfg.drivers.handles(query) {
            return None;
        }
        Some(match query {
            Message::QueryIdentification(q) => ReportIdentification {
                query_type: q.query_type,
                kind: match q.query_type {
                    QueryType::System | QueryType::Subsystem => IdentificationType::Vehicle,
                    QueryType::Node => IdentificationType::Node,
                    _ => IdentificationType::Component,
                },
                identification: format!("jaus-ocu sim: {}", self.arm.name)
                    .chars()
                    .take(255)
                    .collect(),
            }
            .into(),
            Message::QueryConfiguration(_) => ReportConfiguration {
                nodes: vec![ConfigurationNode {
                    node_id: id.node,
                    components: vec![ComponentInstance {
                        component_id: id.component,
                        instance_id: 0,
                    }],
                }],
            }
            .into(),
            Message::QuerySubsystemList(_) => ReportSubsystemList {
                subsystems: vec![SubsystemRec {
                    subsystem_id: id.subsystem,
                    node_id: id.node,
                    component_id: id.component,
                }],
            }
            .into(),
            Message::QueryServices(q) => {
                let wanted = q.nodes.iter().any(|n| {
                    (n.node_id == 255 || n.node_id == id.node)
                        && n.components.iter().any(|c| *c == 255 || *c == id.component)
                });
                let wildcard = q
                    .nodes
                    .iter()
                    .any(|n| n.node_id == 255 || n.components.contains(&255));
                ReportServices {
                    nodes: if self.cfg.quirks.wildcard_services_echo && wildcard {
                        // §9 C8: the wildcard echoed, no services.
                        vec![NodeServices {
                            node_id: 255,
                            components: vec![ComponentServices {
                                component_id: 255,
                                instance_id: 0,
                                services: vec![],
                            }],
                        }]
                    } else if wanted {
                        vec![self.node_services()]
                    } else {
                        vec![]
                    },
                }
                .into()
            }
            Message::QueryServiceList(q) => {
                let wanted = q.subsystems.iter().any(|s| {
                    (s.subsystem_id == u16::MAX || s.subsystem_id == id.subsystem)
                        && s.nodes.iter().any(|n| {
                            (n.node_id == 255 || n.node_id == id.node)
                                && n.components.iter().any(|c| {
                                    c.component_id == 255 || c.component_id == id.component
                                })
                        })
                });
                ReportServiceList {
                    subsystems: if wanted {
                        vec![SubsystemServices {
                            subsystem_id: id.subsystem,
                            nodes: vec![self.node_services()],
                        }]
                    } else {
                        vec![]
                    },
                }
                .into()
            }
            Message::QueryHeartbeatPulse(_) => ReportHeartbeatPulse.into(),
            Message::QueryStatus(_) => ReportStatus {
                status: self.status,
                reserved: 0,
            }
            .into(),
            Message::QueryControl(_) => match self.controller {
                // §9 C9: the ID's bytes as in a header (component, node, subsystem LE).
                Some(c) if self.cfg.quirks.reversed_control_id => {
                    let [low, high] = c.id.subsystem.to_le_bytes();
                    ReportControl {
                        subsystem_id: u16::from_le_bytes([c.id.component, c.id.node]),
                        node_id: low,
                        component_id: high,
                        authority_code: c.authority,
                    }
                }
                Some(c) => ReportControl {
                    subsystem_id: c.id.subsystem,
                    node_id: c.id.node,
                    component_id: c.id.component,
                    authority_code: c.authority,
                },
                None => ReportControl {
                    subsystem_id: 0,
                    node_id: 0,
                    component_id: 0,
                    authority_code: 0,
                },
            }
            .into(),
            Message::QueryAuthority(_) => ReportAuthority {
                authority_code: self.controller.map_or(0, |c| c.authority),
            }
            .into(),
            Message::QueryTimeout(_) => ReportTimeout {
                timeout: self.cfg.control_timeout_s,
            }
            .into(),
            Message::QueryEventTimeout(_) => ReportEventTimeout {
                timeout: self.cfg.event_timeout_min,
            }
            .into(),
            Message::QueryManipulatorSpecifications(q) => {
                let mut r = reports::spec_report(&self.arm.spec);
                if q.presence_vector & 1 == 0 {
                    r.manipulator_coordinate_system = None;
                }
                if q.presence_vector & 2 == 0 {
                    r.joint_names = None;
                }
                r.into()
            }
            Message::QueryJointPositions(_) => ReportJointPositions {
                joint_positions: self.joint_values(self.motion.positions(), POSITION),
            }
            .into(),
            Message::QueryCommandedJointPositions(_) => {
                let target = self
                    .motion
                    .target()
                    .unwrap_or(self.motion.positions())
                    .to_vec();
                ReportCommandedJointPositions {
                    joint_positions: self.joint_values(&target, POSITION),
                }
                .into()
            }
            Message::QueryCommandedJointVelocity(_) => ReportCommandedJointVelocity {
                joint_velocities: self.joint_values(&self.commanded_velocities(), VELOCITY),
            }
            .into(),
            Message::QueryJointMotionProfile(_) => self.profile_report().into(),
            Message::QueryCommandedEndEffectorVelocityState(_) => {
                ReportCommandedEndEffectorVelocityState {
                    velocity: clamped_twist(self.commanded_twist()),
                }
                .into()
            }
            Message::QueryEndEffectorVelocityState(_) => {
                let [wx, wy, wz, vx, vy, vz] = self.motion.tool_twist();
                ReportEndEffectorVelocityState {
                    velocity: clamped_twist(EndEffectorVelocity {
                        angular: [wx, wy, wz],
                        linear: [vx, vy, vz],
                    }),
                }
                .into()
            }
            Message::QueryJointVelocity(_) => ReportJointVelocity {
                joint_velocities: self.joint_values(self.motion.velocities(), VELOCITY),
            }
            .into(),
            Message::QueryJointEffort(_) => ReportJointEffort {
                joint_efforts: self.motion.effort_percent(),
            }
            .into(),
            Message::QueryJointForceTorques(_) => ReportJointForceTorques {
                joint_force_torques: self.joint_values(&self.motion.joint_efforts(), FORCE_TORQUE),
            }
            .into(),
            Message::QueryToolOffset(_) => ReportToolOffset {
                x: self.tool_point[0],
                y: self.tool_point[1],
                z: self.tool_point[2],
            }
            .into(),
            Message::QueryEndEffectorPose(_) => {
                let (p, [d, a, b, c]) = kinematics::end_effector_pose(
                    &self.arm.spec,
                    self.motion.positions(),
                    self.tool_point,
                )
                .ok()?;
                let s = scales::POSITION_30M;
                ReportEndEffectorPose {
                    pose: Pose {
                        x: s.clamp(p.x),
                        y: s.clamp(p.y),
                        z: s.clamp(p.z),
                        d,
                        a,
                        b,
                        c,
                    },
                }
                .into()
            }
            Message::QueryManipulatorEndEffectorForceTorque(q) => {
                let r = self.vehicle_from_end_effector();
                let (f, t) =
                    self.motion
                        .end_effector_ft(now, r, DVec3::from_array(self.tool_point));
                let pick = |bit: u8, v: f64, s: Scale| {
                    (q.presence_vector & (1 << bit) != 0).then(|| s.clamp(v))
                };
                ReportManipulatorEndEffectorForceTorque {
                    force_x: pick(0, f[0], scales::IOP_FORCE),
                    force_y: pick(1, f[1], scales::IOP_FORCE),
                    force_z: pick(2, f[2], scales::IOP_FORCE),
                    torque_x: pick(3, t[0], scales::IOP_TORQUE),
                    torque_y: pick(4, t[1], scales::IOP_TORQUE),
                    torque_z: pick(5, t[2], scales::IOP_TORQUE),
                }
                .into()
            }
            Message::QueryPresetPoseCapabilities(_) => {
                let ids: Vec<u8> = self.arm.presets.iter().map(|p| p.id).collect();
                ReportPresetPoseCapabilities {
                    poses: self
                        .arm
                        .presets
                        .iter()
                        .map(|p| PoseCapability {
                            pose_id: p.id,
                            pose_name: p.name.clone(),
                            // Every preset can be reached from every other.
                            transitions: ids
                                .iter()
                                .filter(|&&to| to != p.id)
                                .map(|&to| Transition {
                                    start_pose_id: p.id,
                                    end_pose_id: to,
                                    transition_properties: 0,
                                })
                                .collect(),
                        })
                        .collect(),
                }
                .into()
            }
            Message::QueryCurrentPose(_) => match self.transition {
                Some(t) => ReportCurrentPose::Moving {
                    start_state_id: t.from,
                    end_state_id: t.to,
                },
                None => ReportCurrentPose::AtPose {
                    current_state_id: self.current_pose_id(),
                },
            }
            .into(),
            Message::QueryPresetPoseSpecifications(_) => ReportPresetPoseSpecifications {
                poses: self
                    .arm
                    .presets
                    .iter()
                    .map(|p| PresetPoseSpecification {
                        pose_id: p.id,
                        pose_name: p.name.clone(),
                        positions: vec![PresetPositions {
                            jaus_id: id,
                            target: PresetTarget::JointPositions {
                                joint_positions: self.joint_values(&p.positions, POSITION),
                            },
                        }],
                    })
                    .collect(),
            }
            .into(),
            _ => return None,
        })
    }

    fn node_services(&self) -> NodeServices {
        let mut services = services_with(self.cfg.drivers);
        if self.cfg.quirks.core_v1_0 {
            // §9 C7: OpenJAUS's versions of these three.
            for s in &mut services {
                if ["Transport", "Discovery", "Liveness"]
                    .iter()
                    .any(|n| s.uri == format!("urn:jaus:jss:core:{n}"))
                {
                    s.minor_version_number = 0;
                }
            }
        }
        let record = |services| ComponentServices {
            component_id: self.cfg.id.component,
            instance_id: 0,
            services,
        };
        NodeServices {
            node_id: self.cfg.id.node,
            components: if self.cfg.quirks.split_services {
                // §9 C13: one record per service, all naming this component.
                services.into_iter().map(|s| record(vec![s])).collect()
            } else {
                vec![record(services)]
            },
        }
    }
}

/// `v` within the wire's ranges (a report saturates rather than fails).
fn clamped_twist(v: EndEffectorVelocity) -> EndEffectorVelocity {
    EndEffectorVelocity {
        angular: v.angular.map(|x| scales::EE_ANGULAR_VELOCITY.clamp(x)),
        linear: v.linear.map(|x| scales::EE_LINEAR_VELOCITY.clamp(x)),
    }
}

/// The services the simulator implements with every driver, as `ReportServices` lists them.
pub fn services() -> Vec<ServiceRec> {
    services_with(Drivers::ALL)
}

/// The services of a simulator offering `drivers`, as `ReportServices` lists them.
pub fn services_with(drivers: Drivers) -> Vec<ServiceRec> {
    let core = [
        "Transport",
        "Events",
        "AccessControl",
        "Management",
        "Liveness",
        "Discovery",
    ];
    let manipulator = [
        "ManipulatorSpecificationService",
        "ManipulatorJointPositionSensor",
        "ManipulatorJointVelocitySensor",
        "ManipulatorJointForceTorqueSensor",
        "ManipulatorToolOffsetService",
        "ManipulatorEndEffectorPoseSensor",
        "ManipulatorEndEffectorVelocityStateSensor",
        "ManipulatorJointMotionProfile",
    ]
    .into_iter()
    .chain(drivers.service_names());
    let iop = ["ManipulatorEndEffectorForceTorqueSensor", "PresetPose"];
    core.iter()
        .map(|s| ServiceRec::new(&format!("urn:jaus:jss:core:{s}"), 1, 1))
        .chain(manipulator.map(|s| ServiceRec::new(&format!("urn:jaus:jss:manipulator:{s}"), 2, 0)))
        .chain(
            iop.iter()
                .map(|s| ServiceRec::new(&format!("urn:jaus:jss:iop:{s}"), 1, 1)),
        )
        .collect()
}
