//! IOP v3 manipulator additions: end-effector force/torque and `PresetPose` (wire reference §7).
//! Every layout here has a single source (OpenJAUS's IOP v3 model); see the notes per message.

use serde::Serialize;

use super::error::{DecodeError, EncodeError};
use super::id::JausId;
use super::manipulator::{JointValue, POSITION, Pose, emit_joint_values, parse_joint_values};
use super::wire::{Body, Reader, Writer, scales};

/// 0xD998 `QueryManipulatorEndEffectorForceTorque`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueryManipulatorEndEffectorForceTorque {
    /// `PresenceVector`: which report fields are wanted (bit 0 `ForceX` … bit 5 `TorqueZ`; 255 = all).
    pub presence_vector: u8,
}

impl Body for QueryManipulatorEndEffectorForceTorque {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            presence_vector: r.u8("PresenceVector")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.presence_vector);
        Ok(())
    }
}

/// 0xD999 `ReportManipulatorEndEffectorForceTorque`, in the end-effector frame.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ReportManipulatorEndEffectorForceTorque {
    /// `ForceX`, N (PV bit 0).
    pub force_x: Option<f64>,
    /// `ForceY`, N (PV bit 1).
    pub force_y: Option<f64>,
    /// `ForceZ`, N (PV bit 2).
    pub force_z: Option<f64>,
    /// `TorqueX`, N·m (PV bit 3).
    pub torque_x: Option<f64>,
    /// `TorqueY`, N·m (PV bit 4).
    pub torque_y: Option<f64>,
    /// `TorqueZ`, N·m (PV bit 5).
    pub torque_z: Option<f64>,
}

const FT_FIELDS: [&str; 6] = [
    "ForceX", "ForceY", "ForceZ", "TorqueX", "TorqueY", "TorqueZ",
];

impl ReportManipulatorEndEffectorForceTorque {
    /// A report with all six components.
    pub fn full(force: [f64; 3], torque: [f64; 3]) -> Self {
        Self {
            force_x: Some(force[0]),
            force_y: Some(force[1]),
            force_z: Some(force[2]),
            torque_x: Some(torque[0]),
            torque_y: Some(torque[1]),
            torque_z: Some(torque[2]),
        }
    }

    fn slots(&self) -> [Option<f64>; 6] {
        [
            self.force_x,
            self.force_y,
            self.force_z,
            self.torque_x,
            self.torque_y,
            self.torque_z,
        ]
    }
}

impl Body for ReportManipulatorEndEffectorForceTorque {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let pv = r.presence_u8(0x3f, "PresenceVector")?;
        let mut v = [None; 6];
        for (i, slot) in v.iter_mut().enumerate() {
            if pv & (1 << i) != 0 {
                let scale = if i < 3 {
                    scales::IOP_FORCE
                } else {
                    scales::IOP_TORQUE
                };
                *slot = Some(r.scaled(scale, FT_FIELDS[i])?);
            }
        }
        Ok(Self {
            force_x: v[0],
            force_y: v[1],
            force_z: v[2],
            torque_x: v[3],
            torque_y: v[4],
            torque_z: v[5],
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let slots = self.slots();
        let pv = slots
            .iter()
            .enumerate()
            .fold(0u8, |pv, (i, s)| pv | u8::from(s.is_some()) << i);
        w.u8(pv);
        for (i, s) in slots.iter().enumerate() {
            if let Some(v) = s {
                let scale = if i < 3 {
                    scales::IOP_FORCE
                } else {
                    scales::IOP_TORQUE
                };
                w.scaled(scale, *v, FT_FIELDS[i])?;
            }
        }
        Ok(())
    }
}

empty_message! {
    /// 0xF001 `QueryPresetPoseCapabilities`.
    QueryPresetPoseCapabilities,
    /// 0xF002 `QueryCurrentPose`.
    QueryCurrentPose,
    /// 0xF005 `QueryPresetPoseSpecifications`.
    QueryPresetPoseSpecifications,
}

/// An allowed transition between two poses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// `StartPoseID`.
    pub start_pose_id: u8,
    /// `EndPoseID`.
    pub end_pose_id: u8,
    /// `TransitionProperties` (reserved bits, sent as 0).
    pub transition_properties: u8,
}

/// A pose and the transitions that start at it (`ReportPresetPoseCapabilities`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoseCapability {
    /// `PoseID` (255 is never a valid ID).
    pub pose_id: u8,
    /// `PoseName`.
    pub pose_name: String,
    /// `TransitionList` (u16 count). UNCONFIRMED whether it is per pose, as OpenJAUS renders it
    /// and as decoded here, or global (§9 U2).
    pub transitions: Vec<Transition>,
}

/// 0xF0F1 `ReportPresetPoseCapabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportPresetPoseCapabilities {
    /// `PoseList`.
    pub poses: Vec<PoseCapability>,
}

impl Body for ReportPresetPoseCapabilities {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(4, "PoseList")?;
        let mut poses = Vec::with_capacity(n);
        for _ in 0..n {
            let pose_id = r.u8("PoseID")?;
            let pose_name = r.string_u8("PoseName")?;
            let m = r.count_u16(3, "TransitionList")?;
            let mut transitions = Vec::with_capacity(m);
            for _ in 0..m {
                transitions.push(Transition {
                    start_pose_id: r.u8("StartPoseID")?,
                    end_pose_id: r.u8("EndPoseID")?,
                    transition_properties: r.u8("TransitionProperties")?,
                });
            }
            poses.push(PoseCapability {
                pose_id,
                pose_name,
                transitions,
            });
        }
        Ok(Self { poses })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.poses.len(), "PoseList")?;
        for p in &self.poses {
            w.u8(p.pose_id);
            w.string_u8(&p.pose_name, "PoseName")?;
            w.count_u16(p.transitions.len(), "TransitionList")?;
            for t in &p.transitions {
                w.u8(t.start_pose_id);
                w.u8(t.end_pose_id);
                w.u8(t.transition_properties);
            }
        }
        Ok(())
    }
}

/// 0xF0F2 `ReportCurrentPose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "report_current_pose_var", rename_all = "snake_case")]
pub enum ReportCurrentPose {
    /// Tag 0: at a pose.
    AtPose {
        /// `CurrentStateID`: the `PoseID` (255 = unknown).
        current_state_id: u8,
    },
    /// Tag 1: moving between poses.
    Moving {
        /// `StartStateID`: the pose being left.
        start_state_id: u8,
        /// `EndStateID`: the pose being approached.
        end_state_id: u8,
    },
}

impl Body for ReportCurrentPose {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.tag(2, "ReportCurrentPoseVar")? {
            0 => Self::AtPose {
                current_state_id: r.u8("CurrentStateID")?,
            },
            _ => Self::Moving {
                start_state_id: r.u8("StartStateID")?,
                end_state_id: r.u8("EndStateID")?,
            },
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match *self {
            Self::AtPose { current_state_id } => {
                w.u8(0);
                w.u8(current_state_id);
            }
            Self::Moving {
                start_state_id,
                end_state_id,
            } => {
                w.u8(1);
                w.u8(start_state_id);
                w.u8(end_state_id);
            }
        }
        Ok(())
    }
}

/// 0xF003 `SetCurrentPose`: go to a preset pose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SetCurrentPose {
    /// `RequestID`, echoed in `ReportTransitionCompleted`.
    pub request_id: u8,
    /// `PoseID` of the target pose.
    pub pose_id: u8,
}

impl Body for SetCurrentPose {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            pose_id: r.u8("PoseID")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.pose_id);
        Ok(())
    }
}

wire_enum! {
    /// `PresetPose`: ReportTransitionCompleted.TransitionStatus.
    pub enum TransitionStatus: u8 {
        /// The pose was reached.
        Completed = 0 => "TRANSITION_COMPLETED",
        /// No allowed transition from the current pose.
        InvalidTransition = 1 => "INVALID_TRANSITION",
        /// Unknown `PoseID`.
        UnrecognizedPose = 2 => "UNRECOGNIZED_POSE",
        /// The transition failed.
        Failed = 3 => "TRANSITION_FAILED",
        /// The transition failed and the original pose was restored.
        FailedOriginalPoseRestored = 4 => "TRANSITION_FAILED_ORIGINAL_POSE_RESTORED",
        /// The transition timed out.
        TimedOut = 5 => "TRANSITION_TIMED_OUT",
    }
}

/// 0xF0F4 `ReportTransitionCompleted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportTransitionCompleted {
    /// `RequestID` from `SetCurrentPose`.
    pub request_id: u8,
    /// `TransitionStatus`.
    pub transition_status: TransitionStatus,
}

impl Body for ReportTransitionCompleted {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            transition_status: TransitionStatus::from_raw(r.u8("TransitionStatus")?),
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.transition_status.raw());
        Ok(())
    }
}

/// `PresetPositionsVar`: what a device's target in a preset pose is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "preset_positions_var", rename_all = "snake_case")]
pub enum PresetTarget {
    /// Tag 0: `JointPositionList`, one entry per joint.
    JointPositions {
        /// `JointPosition` per joint.
        joint_positions: Vec<JointValue>,
    },
    /// Tag 1: `EndEffectorPoseRec`.
    EndEffectorPose {
        /// The end-effector pose.
        #[serde(flatten)]
        pose: Pose,
    },
    /// Tag 2: `PanTiltJointPositionRec`.
    PanTilt {
        /// `Joint1Position`, rad.
        joint1_position: f64,
        /// `Joint2Position`, rad.
        joint2_position: f64,
    },
    /// Tag 3: `StabilizerPositionRec`. UNCONFIRMED whether IOP carries one record (as decoded
    /// here, per the OpenJAUS rendering) or a list of them (§7.2).
    Stabilizer {
        /// `StabilizerID`.
        stabilizer_id: u8,
        /// Position, rad (±π, u16).
        position: f64,
    },
}

/// One device's part of a preset pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PresetPositions {
    /// `JAUS_ID` of the device's component.
    pub jaus_id: JausId,
    /// The device's target.
    pub target: PresetTarget,
}

/// One preset pose with its per-device targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PresetPoseSpecification {
    /// `PoseID`.
    pub pose_id: u8,
    /// `PoseName`.
    pub pose_name: String,
    /// `PresetPositionsList`.
    pub positions: Vec<PresetPositions>,
}

/// 0xF0F5 `ReportPresetPoseSpecifications` (layout from `seeds/002_*.txt`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportPresetPoseSpecifications {
    /// `PresetPoseSpecificationsList`.
    pub poses: Vec<PresetPoseSpecification>,
}

impl Body for ReportPresetPoseSpecifications {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(3, "PresetPoseSpecificationsList")?;
        let mut poses = Vec::with_capacity(n);
        for _ in 0..n {
            let pose_id = r.u8("PoseID")?;
            let pose_name = r.string_u8("PoseName")?;
            let m = r.count_u8(6, "PresetPositionsList")?;
            let mut positions = Vec::with_capacity(m);
            for _ in 0..m {
                let jaus_id = JausId::from_u32(r.u32("JAUS_ID")?);
                let target = match r.tag(4, "PresetPositionsVar")? {
                    0 => PresetTarget::JointPositions {
                        joint_positions: parse_joint_values(
                            r,
                            POSITION,
                            "JointPositionList",
                            "JointPosition",
                        )?,
                    },
                    1 => PresetTarget::EndEffectorPose {
                        pose: Pose::parse(r)?,
                    },
                    2 => PresetTarget::PanTilt {
                        joint1_position: r.scaled(scales::JOINT_POSITION_RAD, "Joint1Position")?,
                        joint2_position: r.scaled(scales::JOINT_POSITION_RAD, "Joint2Position")?,
                    },
                    _ => PresetTarget::Stabilizer {
                        stabilizer_id: r.u8("StabilizerID")?,
                        position: r.scaled(scales::ANGLE_U16, "Position")?,
                    },
                };
                positions.push(PresetPositions { jaus_id, target });
            }
            poses.push(PresetPoseSpecification {
                pose_id,
                pose_name,
                positions,
            });
        }
        Ok(Self { poses })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.poses.len(), "PresetPoseSpecificationsList")?;
        for p in &self.poses {
            w.u8(p.pose_id);
            w.string_u8(&p.pose_name, "PoseName")?;
            w.count_u8(p.positions.len(), "PresetPositionsList")?;
            for pos in &p.positions {
                w.u32(pos.jaus_id.to_u32());
                match &pos.target {
                    PresetTarget::JointPositions { joint_positions } => {
                        w.u8(0);
                        emit_joint_values(
                            w,
                            joint_positions,
                            POSITION,
                            "JointPositionList",
                            "JointPosition",
                        )?;
                    }
                    PresetTarget::EndEffectorPose { pose } => {
                        w.u8(1);
                        pose.emit(w)?;
                    }
                    PresetTarget::PanTilt {
                        joint1_position,
                        joint2_position,
                    } => {
                        w.u8(2);
                        w.scaled(
                            scales::JOINT_POSITION_RAD,
                            *joint1_position,
                            "Joint1Position",
                        )?;
                        w.scaled(
                            scales::JOINT_POSITION_RAD,
                            *joint2_position,
                            "Joint2Position",
                        )?;
                    }
                    PresetTarget::Stabilizer {
                        stabilizer_id,
                        position,
                    } => {
                        w.u8(3);
                        w.u8(*stabilizer_id);
                        w.scaled(scales::ANGLE_U16, *position, "Position")?;
                    }
                }
            }
        }
        Ok(())
    }
}
