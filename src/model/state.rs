//! The latest known facts about the network and the selected arm, changed only by applying
//! [`Update`]s. `probe` prints it; the GUI draws from it (with the time-indexed history that
//! the recording work adds beside it).

use std::collections::BTreeMap;

use super::arm::ArmSpec;
use super::kinematics;
use super::update::{
    CommandKind, ComponentId, ComponentInfo, ControlState, Delivery, LinkState, ManagementState,
    NetStats, Outcome, PoseState, PresetInfo, Signal, Update,
};

/// A value and when it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped<T> {
    /// Receive time, s since the session started.
    pub t: f64,
    /// The value.
    pub value: T,
}

/// End-effector force (N) and torque (N·m); absent components `None`.
pub type Wrench = ([Option<f64>; 3], [Option<f64>; 3]);

/// The OCU's picture of the world.
#[derive(Debug, Clone, Default)]
pub struct ArmState {
    /// Every component found, by ID, with whether it is lost.
    pub components: BTreeMap<ComponentId, (ComponentInfo, bool)>,
    /// The manipulator being worked with.
    pub selected: Option<ComponentId>,
    /// Reachability of the selected manipulator.
    pub link: LinkState,
    /// Its specification.
    pub spec: Option<ArmSpec>,
    /// Its tool point (end-effector frame), m.
    pub tool_point: Option<[f64; 3]>,
    /// Its presets.
    pub presets: Vec<PresetInfo>,
    /// Joint positions.
    pub positions: Option<Stamped<Vec<f64>>>,
    /// Joint velocities.
    pub velocities: Option<Stamped<Vec<f64>>>,
    /// Joint efforts (percent).
    pub efforts: Option<Stamped<Vec<f64>>>,
    /// Joint torques/forces.
    pub joint_force_torques: Option<Stamped<Vec<f64>>>,
    /// End-effector force and torque.
    pub force_torque: Option<Stamped<Wrench>>,
    /// Where the arm is among its presets.
    pub pose: PoseState,
    /// Management state.
    pub status: ManagementState,
    /// Our control.
    pub control: ControlState,
    /// Stale signals.
    pub stale: BTreeMap<Signal, bool>,
    /// How each signal is delivered.
    pub delivery: BTreeMap<Signal, Delivery>,
    /// Latest counters.
    pub stats: NetStats,
    /// Command outcomes, newest last (at most 50 kept).
    pub outcomes: Vec<(f64, CommandKind, Outcome)>,
    /// Errors for the operator, newest last (at most 50 kept).
    pub errors: Vec<(f64, String)>,
    /// Samples received per signal (for rates).
    pub counts: BTreeMap<Signal, u64>,
}

fn push_bounded<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= 50 {
        v.remove(0);
    }
    v.push(x);
}

impl ArmState {
    /// Applies one update.
    pub fn apply(&mut self, u: &Update) {
        match u {
            Update::Component { info, .. } => {
                self.components.insert(info.id, (info.clone(), false));
            }
            Update::ComponentLost { id, lost, .. } => {
                if let Some(c) = self.components.get_mut(id) {
                    c.1 = *lost;
                }
            }
            Update::Selected { id, .. } => {
                if self.selected != Some(*id) {
                    // A different arm: nothing of the previous one applies.
                    *self = ArmState {
                        components: std::mem::take(&mut self.components),
                        stats: self.stats,
                        errors: std::mem::take(&mut self.errors),
                        outcomes: std::mem::take(&mut self.outcomes),
                        ..ArmState::default()
                    };
                    self.selected = Some(*id);
                }
            }
            Update::Link { state, .. } => self.link = *state,
            Update::Specification { spec, .. } => self.spec = Some(spec.clone()),
            Update::ToolOffset { point, .. } => self.tool_point = Some(*point),
            Update::Presets { presets, .. } => self.presets.clone_from(presets),
            Update::JointPositions { t, values } => {
                self.positions = Some(Stamped {
                    t: *t,
                    value: values.clone(),
                });
                *self.counts.entry(Signal::JointPositions).or_default() += 1;
            }
            Update::JointVelocities { t, values } => {
                self.velocities = Some(Stamped {
                    t: *t,
                    value: values.clone(),
                });
                *self.counts.entry(Signal::JointVelocities).or_default() += 1;
            }
            Update::JointEfforts { t, values } => {
                self.efforts = Some(Stamped {
                    t: *t,
                    value: values.clone(),
                });
                *self.counts.entry(Signal::JointEfforts).or_default() += 1;
            }
            Update::JointForceTorques { t, values } => {
                self.joint_force_torques = Some(Stamped {
                    t: *t,
                    value: values.clone(),
                });
                *self.counts.entry(Signal::JointForceTorques).or_default() += 1;
            }
            Update::ForceTorque { t, force, torque } => {
                self.force_torque = Some(Stamped {
                    t: *t,
                    value: (*force, *torque),
                });
                *self
                    .counts
                    .entry(Signal::EndEffectorForceTorque)
                    .or_default() += 1;
            }
            Update::CurrentPose { pose, .. } => self.pose = *pose,
            Update::Status { state, .. } => self.status = *state,
            Update::Control { state, .. } => self.control = *state,
            Update::CommandOutcome {
                t,
                command,
                outcome,
            } => push_bounded(&mut self.outcomes, (*t, *command, outcome.clone())),
            Update::Stale { signal, stale, .. } => {
                self.stale.insert(*signal, *stale);
            }
            Update::Delivery {
                signal, delivery, ..
            } => {
                self.delivery.insert(*signal, *delivery);
            }
            Update::Stats { stats, .. } => self.stats = *stats,
            // Marks live on the session's timeline, not in the latest state.
            Update::Mark { .. } => {}
            Update::Error { t, message } => push_bounded(&mut self.errors, (*t, message.clone())),
        }
    }

    /// The tool point in the manipulator and vehicle frames, when the specification, the
    /// positions and the tool offset are known.
    pub fn tool_point_frames(&self) -> Option<([f64; 3], [f64; 3])> {
        let spec = self.spec.as_ref()?;
        let q = &self.positions.as_ref()?.value;
        let pose = kinematics::forward(spec, q, self.tool_point.unwrap_or([0.0; 3])).ok()?;
        Some((
            pose.tool_point_manipulator.to_array(),
            pose.tool_point_vehicle.to_array(),
        ))
    }

    /// Whether the selected arm is fully known: specification, tool point and positions.
    pub fn is_complete(&self) -> bool {
        self.spec.is_some() && self.tool_point.is_some() && self.positions.is_some()
    }

    /// Components answered, none of them is a manipulator (the empty state says who answered
    /// instead of "no manipulator found"; `probe` exits with status 3).
    pub fn none_is_a_manipulator(&self) -> bool {
        self.selected.is_none()
            && !self.components.is_empty()
            && self.components.values().all(|(c, _)| !c.manipulator)
    }
}
