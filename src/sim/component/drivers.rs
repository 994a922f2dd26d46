//! The joint drivers the simulator offers and the motion profile that guards them (issue 32).
//!
//! `sim --drivers` picks which of the position, velocity, effort and tool-point drivers the
//! component lists in discovery and obeys; a message of a driver it does not offer is not handled (counted in
//! [`super::SimStats::unhandled`]), as on an arm without that service.
//!
//! The position, velocity and tool-point drivers move only within a joint motion profile: their
//! commands
//! are refused (counted) until the client holding control has sent `SetJointMotionProfile`, and
//! every joint then moves at most at the profile's `JointMaxSpeed`. The profile is forgotten
//! when control is lost, so each controller sets its own. Its acceleration and deceleration
//! rates are kept and reported but not enforced: the arm ramps at its own rate. The effort
//! driver (`PrimitiveManipulator`) needs no profile, as the standard says; its motion is capped
//! by a profile in force all the same.

use super::Component;
use crate::jaus::core::ServiceRec;
use crate::jaus::manipulator::{
    EndEffectorVelocity, JointMotionProfile, ReportJointMotionProfile, SetJointMotionProfile,
};
use crate::jaus::wire::{Scale, scales};
use crate::jaus::{JausId, JointKind, Message};
use crate::sim::motion::Mode;

/// Which joint drivers the component offers (`sim --drivers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drivers {
    /// `ManipulatorJointPositionDriver`: `SetJointPositions`, `QueryCommandedJointPositions`.
    pub position: bool,
    /// `ManipulatorJointVelocityDriver`: `SetJointVelocity`, `QueryCommandedJointVelocity`.
    pub velocity: bool,
    /// `PrimitiveManipulator`: `SetJointEffort`, `QueryJointEffort`.
    pub effort: bool,
    /// `ManipulatorEndEffectorVelocityStateDriver`: `SetEndEffectorVelocityState` (a tool-point
    /// twist in the manipulator frame), `QueryCommandedEndEffectorVelocityState`.
    pub tool: bool,
}

impl Drivers {
    /// Every driver the simulator has.
    pub const ALL: Drivers = Drivers {
        position: true,
        velocity: true,
        effort: true,
        tool: true,
    };

    /// Whether a component offering these drivers handles `m` (messages of no driver: yes).
    pub fn handles(self, m: &Message) -> bool {
        match m {
            Message::SetJointPositions(_) | Message::QueryCommandedJointPositions(_) => {
                self.position
            }
            Message::SetJointVelocity(_) | Message::QueryCommandedJointVelocity(_) => self.velocity,
            Message::SetJointEffort(_) | Message::QueryJointEffort(_) => self.effort,
            Message::SetEndEffectorVelocityState(_)
            | Message::QueryCommandedEndEffectorVelocityState(_) => self.tool,
            _ => true,
        }
    }

    /// The manipulator service names of the drivers offered, as discovery lists them.
    pub fn service_names(self) -> Vec<&'static str> {
        [
            (self.effort, "PrimitiveManipulator"),
            (self.position, "ManipulatorJointPositionDriver"),
            (self.velocity, "ManipulatorJointVelocityDriver"),
            (self.tool, "ManipulatorEndEffectorVelocityStateDriver"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// The services a component with these drivers lists in `ReportServices`.
    pub fn services(self) -> Vec<ServiceRec> {
        super::answers::services_with(self)
    }
}

impl Default for Drivers {
    fn default() -> Self {
        Self::ALL
    }
}

/// `v` with every component within one LSB of zero made zero: the scaled u32 cannot carry
/// 0 exactly (the nearest code, 2^31, reads as half an LSB, 2.3 nm/s or 15 nrad/s), and a
/// zero twist must stop the arm rather than let it creep.
pub(super) fn snap_to_zero(v: EndEffectorVelocity) -> EndEffectorVelocity {
    let snap = |s: Scale| move |x: f64| if x.abs() <= s.lsb() { 0.0 } else { x };
    EndEffectorVelocity {
        angular: v.angular.map(snap(scales::EE_ANGULAR_VELOCITY)),
        linear: v.linear.map(snap(scales::EE_LINEAR_VELOCITY)),
    }
}

/// A motion profile in force and the client that set it.
#[derive(Debug, Clone)]
pub(super) struct ActiveProfile {
    client: JausId,
    joints: Vec<JointMotionProfile>,
}

impl Component {
    /// `SetJointMotionProfile` from the controlling client: one entry per joint, of the joint's
    /// kind, else refused (counted).
    pub(super) fn set_profile(&mut self, now: f64, from: JausId, s: SetJointMotionProfile) {
        let joints = &self.arm.spec.joints;
        let fits = s.joint_motion_profiles.len() == joints.len()
            && s.joint_motion_profiles
                .iter()
                .zip(joints)
                .all(|(p, j)| p.joint_type == JointKind::from(j.kind));
        if !fits {
            self.stats.refused_commands += 1;
            self.warn_limited(
                now,
                &format!(
                    "ignored SetJointMotionProfile from {from}: {} entries for {} joints, or a \
                     joint of the wrong kind",
                    s.joint_motion_profiles.len(),
                    joints.len()
                ),
            );
            return;
        }
        let caps: Vec<f64> = s
            .joint_motion_profiles
            .iter()
            .map(|p| p.max_speed)
            .collect();
        self.motion.set_speed_caps(Some(&caps));
        self.profile = Some(ActiveProfile {
            client: from,
            joints: s.joint_motion_profiles,
        });
    }

    /// Forgets the profile (control lost): the arm's own limits apply again.
    pub(super) fn clear_profile(&mut self) {
        self.profile = None;
        self.motion.set_speed_caps(None);
    }

    /// Whether `from` set the profile in force: its position and velocity commands may move
    /// the arm.
    pub(super) fn has_profile(&self, from: JausId) -> bool {
        self.profile.as_ref().is_some_and(|p| p.client == from)
    }

    /// `ReportJointMotionProfile`: the profile in force, or the arm's own limits when no
    /// client has set one.
    pub(super) fn profile_report(&self) -> ReportJointMotionProfile {
        if let Some(p) = &self.profile {
            return ReportJointMotionProfile {
                joint_motion_profiles: p.joints.clone(),
            };
        }
        let joint_motion_profiles = self
            .arm
            .spec
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let joint_type = JointKind::from(j.kind);
                let (speed, rate) = JointMotionProfile::scales(joint_type);
                let accel = rate.clamp(self.motion.acceleration(i));
                JointMotionProfile {
                    joint_type,
                    max_speed: speed.clamp(self.motion.speed(i)),
                    max_acceleration: accel,
                    max_deceleration: accel,
                }
            })
            .collect();
        ReportJointMotionProfile {
            joint_motion_profiles,
        }
    }

    /// The velocities the arm is commanded to move at (after the speed caps): a velocity
    /// command's, zeros in every other mode (stopped, stopping, moving to positions, moving
    /// the tool point).
    pub(super) fn commanded_velocities(&self) -> Vec<f64> {
        match self.motion.mode() {
            Mode::Velocity(v) => v.clone(),
            _ => vec![0.0; self.arm.spec.joint_count()],
        }
    }

    /// The tool-point twist last commanded (`ReportCommandedEndEffectorVelocityState`): a
    /// `SetEndEffectorVelocityState`'s while the arm follows it, zeros in every other mode
    /// (before any, after a stop, control lost, an emergency, a joint command).
    pub(super) fn commanded_twist(&self) -> EndEffectorVelocity {
        match self.motion.mode() {
            Mode::Tool(t) => *t,
            _ => EndEffectorVelocity::ZERO,
        }
    }
}
