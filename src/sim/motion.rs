//! The simulated arm's physics, simple but honest: per-joint trajectories with acceleration and
//! speed limits, velocities that are the derivative of the positions, joint efforts from
//! inertia, friction and a gravity-like load, and an end-effector force/torque sensor with
//! noise and occasional contact transients.
//!
//! A tool-point twist ([`Mode::Tool`]) is turned into joint velocities every step by the damped
//! least-squares inverse of the arm's Jacobian (`model::kinematics`), then moved like a joint
//! velocity command: the same speed caps, accelerations and joint limits.

use glam::{DMat3, DVec3};

use crate::jaus::manipulator::EndEffectorVelocity;
use crate::model::arm::ArmSpec;
use crate::model::arm::JointType;
use crate::model::kinematics;
use crate::net::rng::Rng;

/// Speed used for a joint whose specification gives none (rad/s or m/s).
const DEFAULT_SPEED: [f64; 2] = [0.5, 0.1];
/// Time to reach full speed; sets each joint's acceleration limit.
const RAMP_S: f64 = 0.3;
/// Mass of the tool/gripper the force/torque sensor carries, kg.
const TOOL_MASS: f64 = 1.5;
/// Standard gravity, m/s².
const G: f64 = 9.81;
/// Damping λ of the tool-point driver's least-squares inverse: near a singularity no joint is
/// asked for more than |twist|/2λ (then scaled down to its speed); elsewhere each component of
/// the twist along a singular direction σ of the Jacobian is followed short by λ²/(σ² + λ²)
/// (1 % where σ = 0.1).
const TOOL_DAMPING: f64 = 0.01;

/// What the joints are doing.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// At rest (decelerating to rest if moving).
    Idle,
    /// Moving to these positions, each joint at up to its maximum speed.
    Position(Vec<f64>),
    /// Moving at these velocities (clamped to max speed; stops at limits).
    Velocity(Vec<f64>),
    /// Moving the tool point at this twist (manipulator frame): joint velocities from the
    /// Jacobian each step, scaled down together so no joint passes its speed, and joints at a
    /// limit left out.
    Tool(EndEffectorVelocity),
}

#[derive(Debug, Clone)]
struct JointModel {
    kind: JointType,
    min: Option<f64>,
    max: Option<f64>,
    max_speed: f64,
    accel: f64,
    max_effort: f64,
    inertia: f64,
    friction: f64,
    gravity: f64,
}

/// A transient contact seen by the force/torque sensor.
#[derive(Debug, Clone, Copy)]
struct Contact {
    start: f64,
    peak: DVec3,
}

/// The arm's state and how it evolves.
#[derive(Debug, Clone)]
pub struct Motion {
    joints: Vec<JointModel>,
    /// The chain, for the tool-point driver's Jacobian.
    spec: ArmSpec,
    /// The tool point in the end-effector frame, m.
    tool_point: [f64; 3],
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
    mode: Mode,
    /// A speed cap per joint below its maximum (a motion profile), `INFINITY` for none.
    caps: Vec<f64>,
    held: bool,
    rng: Rng,
    contact: Option<Contact>,
}

impl Motion {
    /// An arm at `start` (clamped into the limits). `held` pins it there: no motion, no noise.
    pub fn new(spec: &ArmSpec, start: &[f64], seed: u64, held: bool) -> Self {
        let n = spec.joint_count();
        let joints: Vec<JointModel> = spec
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let k = usize::from(j.kind == JointType::Prismatic);
                let max_speed = j.max_speed.filter(|s| *s > 0.0).unwrap_or(DEFAULT_SPEED[k]);
                let max_effort =
                    j.max_effort
                        .filter(|e| *e > 0.0)
                        .unwrap_or(if k == 0 { 100.0 } else { 500.0 });
                // Joints near the base carry more of the arm.
                let share = 1.0 - i as f64 / n as f64;
                JointModel {
                    kind: j.kind,
                    min: j.min,
                    max: j.max,
                    max_speed,
                    accel: max_speed / RAMP_S,
                    max_effort,
                    inertia: 0.15 * max_effort * share,
                    friction: 0.08 * max_effort / max_speed,
                    gravity: if i == 0 {
                        0.0
                    } else {
                        0.35 * max_effort * share
                    },
                }
            })
            .collect();
        let q = joints
            .iter()
            .zip(start)
            .map(|(j, &v)| clamp(j, v))
            .collect();
        Self {
            joints,
            spec: spec.clone(),
            tool_point: [0.0; 3],
            q,
            qd: vec![0.0; n],
            qdd: vec![0.0; n],
            mode: Mode::Idle,
            caps: vec![f64::INFINITY; n],
            held,
            rng: Rng::new(seed),
            contact: None,
        }
    }

    /// Joint positions (rad or m).
    pub fn positions(&self) -> &[f64] {
        &self.q
    }

    /// Joint velocities (rad/s or m/s).
    pub fn velocities(&self) -> &[f64] {
        &self.qd
    }

    /// The current mode.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// Whether the arm is pinned (`--hold`).
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// Whether every joint is at rest.
    pub fn at_rest(&self) -> bool {
        self.qd.iter().all(|v| *v == 0.0)
    }

    /// The target of a position move, if one is under way or reached.
    pub fn target(&self) -> Option<&[f64]> {
        match &self.mode {
            Mode::Position(t) => Some(t),
            _ => None,
        }
    }

    /// Moves every joint to `target` (clamped into the limits). Returns the clamped target.
    pub fn move_to(&mut self, target: &[f64]) -> Vec<f64> {
        let t: Vec<f64> = self
            .joints
            .iter()
            .zip(target)
            .map(|(j, &v)| clamp(j, v))
            .collect();
        if !self.held {
            self.mode = Mode::Position(t.clone());
        }
        t
    }

    /// Moves at `velocities` (clamped to each joint's speed, [`Motion::speed`]).
    pub fn move_at(&mut self, velocities: &[f64]) {
        if !self.held {
            let v = velocities
                .iter()
                .enumerate()
                .take(self.joints.len())
                .map(|(i, &v)| v.clamp(-self.speed(i), self.speed(i)))
                .collect();
            self.mode = Mode::Velocity(v);
        }
    }

    /// Moves the tool point at `twist` (manipulator frame; all zeros decelerate to rest).
    pub fn move_tool(&mut self, twist: EndEffectorVelocity) {
        if !self.held {
            self.mode = Mode::Tool(twist);
        }
    }

    /// Sets the tool point the tool-point driver moves (end-effector frame, m).
    pub fn set_tool_point(&mut self, tool_point: [f64; 3]) {
        self.tool_point = tool_point;
    }

    /// The tool's twist now (`[ωx, ωy, ωz, vx, vy, vz]`, manipulator frame): the Jacobian
    /// times the joint velocities; zeros if the chain cannot be evaluated.
    pub fn tool_twist(&self) -> [f64; 6] {
        kinematics::jacobian(&self.spec, &self.q, self.tool_point)
            .map_or([0.0; 6], |j| kinematics::twist(&j, &self.qd))
    }

    /// The joint velocities that move the tool at `twist` now: the damped least-squares
    /// solution, re-solved without any joint that sits at a limit and would push past it,
    /// then scaled down together (the direction kept) so no joint passes [`Motion::speed`].
    fn tool_velocities(&self, twist: &EndEffectorVelocity) -> Vec<f64> {
        let n = self.joints.len();
        let x = [
            twist.angular[0],
            twist.angular[1],
            twist.angular[2],
            twist.linear[0],
            twist.linear[1],
            twist.linear[2],
        ];
        let Ok(mut columns) = kinematics::jacobian(&self.spec, &self.q, self.tool_point) else {
            return vec![0.0; n];
        };
        let mut qd = vec![0.0; n];
        for _ in 0..=n {
            qd = kinematics::damped_least_squares(&columns, x, TOOL_DAMPING);
            let mut blocked = false;
            for (i, j) in self.joints.iter().enumerate() {
                let outward = (qd[i] < 0.0 && j.min.is_some_and(|m| self.q[i] <= m))
                    || (qd[i] > 0.0 && j.max.is_some_and(|m| self.q[i] >= m));
                if outward {
                    columns[i] = [0.0; 6];
                    blocked = true;
                }
            }
            if !blocked {
                break;
            }
        }
        let over = (0..n)
            .map(|i| qd[i].abs() / self.speed(i))
            .fold(1.0, f64::max);
        qd.iter().map(|v| v / over).collect()
    }

    /// Caps each joint's speed below its maximum (a motion profile's `JointMaxSpeed`), from
    /// now on and for the motion under way; `None` lifts the caps.
    pub fn set_speed_caps(&mut self, caps: Option<&[f64]>) {
        for (i, c) in self.caps.iter_mut().enumerate() {
            *c = caps
                .and_then(|caps| caps.get(i))
                .map_or(f64::INFINITY, |c| c.max(0.0));
        }
        if let Mode::Velocity(v) = &self.mode {
            let v = v.clone();
            self.move_at(&v);
        }
    }

    /// Joint `i`'s acceleration limit (rad/s² or m/s²), also its deceleration limit.
    pub fn acceleration(&self, i: usize) -> f64 {
        self.joints[i].accel
    }

    /// The speed joint `i` moves at most: its maximum, or its cap when lower (rad/s or m/s).
    pub fn speed(&self, i: usize) -> f64 {
        self.joints[i].max_speed.min(self.caps[i])
    }

    /// Decelerates every joint to rest at its acceleration limit.
    pub fn stop_smoothly(&mut self) {
        self.mode = Mode::Idle;
    }

    /// Stops at once (emergency): velocities drop to zero this instant.
    pub fn halt(&mut self) {
        self.mode = Mode::Idle;
        self.qd.iter_mut().for_each(|v| *v = 0.0);
        self.qdd.iter_mut().for_each(|a| *a = 0.0);
    }

    /// Whether a position move has reached its target and stopped.
    pub fn reached(&self) -> bool {
        match &self.mode {
            Mode::Position(t) => self.at_rest() && self.q.iter().zip(t).all(|(q, t)| q == t),
            _ => false,
        }
    }

    /// Advances the physics by `dt` seconds.
    pub fn step(&mut self, dt: f64) {
        if self.held || dt <= 0.0 {
            return;
        }
        let tool = match &self.mode {
            Mode::Tool(twist) => self.tool_velocities(twist),
            _ => Vec::new(),
        };
        for i in 0..self.joints.len() {
            let speed = self.speed(i);
            let j = &self.joints[i];
            let (q, v) = (self.q[i], self.qd[i]);
            let (mut nq, mut nv) = match &self.mode {
                Mode::Position(t) => {
                    let e = t[i] - q;
                    // Velocity that still stops at the target with the acceleration limit.
                    let vd = e.signum() * speed.min((2.0 * j.accel * e.abs()).sqrt());
                    let nv = v + (vd - v).clamp(-j.accel * dt, j.accel * dt);
                    let nq = q + 0.5 * (v + nv) * dt;
                    // Arrived (or would overshoot): settle exactly on the target.
                    if e == 0.0
                        || (t[i] - nq).signum() != e.signum()
                        || (e.abs() < 1e-9 && nv.abs() < 1e-6)
                    {
                        (t[i], 0.0)
                    } else {
                        (nq, nv)
                    }
                }
                Mode::Velocity(vs) => {
                    let nv = v + (vs[i] - v).clamp(-j.accel * dt, j.accel * dt);
                    (q + 0.5 * (v + nv) * dt, nv)
                }
                Mode::Tool(_) => {
                    let nv = v + (tool[i] - v).clamp(-j.accel * dt, j.accel * dt);
                    (q + 0.5 * (v + nv) * dt, nv)
                }
                Mode::Idle => {
                    let nv = v - v.clamp(-j.accel * dt, j.accel * dt);
                    (q + 0.5 * (v + nv) * dt, nv)
                }
            };
            // Hard limits stop the joint.
            let clamped = clamp(j, nq);
            if clamped != nq {
                nq = clamped;
                nv = 0.0;
            }
            self.qdd[i] = (nv - v) / dt;
            self.q[i] = nq;
            self.qd[i] = nv;
        }
    }

    /// Joint torques (N·m) / forces (N): inertia, viscous friction and a gravity-like load,
    /// within ± the joint's maximum effort.
    pub fn joint_efforts(&self) -> Vec<f64> {
        self.joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let load = match j.kind {
                    JointType::Revolute => j.gravity * self.q[i].cos(),
                    JointType::Prismatic => j.gravity * 0.3,
                };
                let tau = j.inertia * self.qdd[i] + j.friction * self.qd[i] + load;
                tau.clamp(-j.max_effort, j.max_effort)
            })
            .collect()
    }

    /// Joint efforts as percent of each joint's maximum effort (−100..=100).
    pub fn effort_percent(&self) -> Vec<f64> {
        self.joint_efforts()
            .iter()
            .zip(&self.joints)
            .map(|(t, j)| (t / j.max_effort * 100.0).clamp(-100.0, 100.0))
            .collect()
    }

    /// The end-effector force (N) and torque (N·m) in the end-effector frame, given the
    /// rotation from that frame to the vehicle frame and the tool point. Gravity on the tool,
    /// a dynamic term from the joints' accelerations, sensor noise and (when moving freely)
    /// occasional contacts that rise and decay over half a second. Held arms read gravity only.
    pub fn end_effector_ft(
        &mut self,
        now: f64,
        vehicle_from_ee: DMat3,
        tool_point: DVec3,
    ) -> ([f64; 3], [f64; 3]) {
        // Vehicle frame: +z is down, so gravity pulls along +z.
        let gravity = vehicle_from_ee.transpose() * DVec3::new(0.0, 0.0, TOOL_MASS * G);
        let mut force = gravity;
        if !self.held {
            let agitation: f64 = self.qdd.iter().map(|a| a.abs()).sum::<f64>().min(50.0);
            force += DVec3::new(0.0, 0.0, 0.4 * agitation);
            force += DVec3::new(self.rng.normal(), self.rng.normal(), self.rng.normal()) * 0.15;
            // About one contact every 20 s.
            if self.contact.is_none() && self.rng.chance(0.05 / 1000.0) {
                let peak = DVec3::new(
                    self.rng.normal() * 5.0,
                    self.rng.normal() * 5.0,
                    -(20.0 + 25.0 * self.rng.uniform()),
                );
                self.contact = Some(Contact { start: now, peak });
            }
            if let Some(c) = self.contact {
                let t = now - c.start;
                if (0.0..=0.6).contains(&t) {
                    // Fast rise, exponential decay.
                    force += c.peak * (1.0 - (-t / 0.02).exp()) * (-t / 0.15).exp();
                } else {
                    self.contact = None;
                }
            }
        }
        let mut torque = tool_point.cross(force);
        if !self.held {
            torque += DVec3::new(self.rng.normal(), self.rng.normal(), self.rng.normal()) * 0.01;
        }
        (force.to_array(), torque.to_array())
    }
}

fn clamp(j: &JointModel, v: f64) -> f64 {
    let v = j.min.map_or(v, |m| v.max(m));
    j.max.map_or(v, |m| v.min(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arm::Joint;

    fn arm() -> ArmSpec {
        ArmSpec {
            mount: None,
            joints: vec![
                Joint {
                    min: Some(-1.0),
                    max: Some(1.0),
                    max_speed: Some(1.0),
                    ..Joint::revolute(0.0, 0.0, 0.3)
                },
                Joint {
                    max_speed: Some(0.1),
                    ..Joint::prismatic(0.1, 0.0, 0.0, 0.0, 0.5)
                },
                Joint {
                    max_speed: Some(2.0),
                    ..Joint::revolute(0.0, 1.0, 0.0)
                },
            ],
        }
    }

    #[test]
    fn reaches_target_exactly_without_exceeding_max_speed() {
        let mut m = Motion::new(&arm(), &[0.0, 0.0, 0.0], 1, false);
        let t = m.move_to(&[0.8, 0.4, -7.0]);
        let mut prev = m.positions().to_vec();
        for _ in 0..20_000 {
            m.step(0.001);
            for (i, (q, p)) in m.positions().iter().zip(&prev).enumerate() {
                let speed = (q - p).abs() / 0.001;
                assert!(speed <= [1.0, 0.1, 2.0][i] + 1e-9, "joint {i} at {speed}");
            }
            prev = m.positions().to_vec();
            if m.reached() {
                break;
            }
        }
        assert!(m.reached());
        assert_eq!(m.positions(), t.as_slice());
    }

    #[test]
    fn speed_caps_slow_position_and_velocity_moves_and_lift_again() {
        let mut m = Motion::new(&arm(), &[0.0, 0.0, 0.0], 1, false);
        m.set_speed_caps(Some(&[0.25, 0.05, 5.0]));
        assert_eq!([m.speed(0), m.speed(1), m.speed(2)], [0.25, 0.05, 2.0]);
        m.move_to(&[0.8, 0.4, -7.0]);
        for _ in 0..3000 {
            m.step(0.001);
            let v = m.velocities();
            assert!(v[0].abs() <= 0.25 + 1e-9 && v[1].abs() <= 0.05 + 1e-9);
        }
        m.move_at(&[-1.0, 1.0, 0.0]);
        assert_eq!(m.mode(), &Mode::Velocity(vec![-0.25, 0.05, 0.0]));
        m.set_speed_caps(None);
        assert_eq!(m.mode(), &Mode::Velocity(vec![-0.25, 0.05, 0.0]));
        m.move_at(&[-1.0, 1.0, 0.0]);
        assert_eq!(m.mode(), &Mode::Velocity(vec![-1.0, 0.1, 0.0]));
        // A cap set during a velocity move slows it at once.
        m.set_speed_caps(Some(&[0.5, 0.5, 0.5]));
        assert_eq!(m.mode(), &Mode::Velocity(vec![-0.5, 0.1, 0.0]));
    }

    #[test]
    fn velocities_are_the_derivative_of_positions() {
        let mut m = Motion::new(&arm(), &[0.0, 0.0, 0.0], 1, false);
        m.move_to(&[1.0, 0.5, 3.0]);
        for _ in 0..500 {
            let before = m.positions().to_vec();
            m.step(0.002);
            for i in 0..3 {
                let avg = (m.positions()[i] - before[i]) / 0.002;
                // Trapezoidal integration: the position change is the mean of the two velocities.
                assert!(
                    (avg - m.velocities()[i]).abs()
                        <= 0.5 * 0.002 * [1.0, 0.1, 2.0][i] / RAMP_S + 1e-9
                );
            }
        }
    }

    #[test]
    fn limits_are_never_exceeded_and_targets_are_clamped() {
        let mut m = Motion::new(&arm(), &[5.0, -1.0, 0.0], 1, false);
        assert_eq!(&m.positions()[..2], &[1.0, 0.0]);
        assert_eq!(m.move_to(&[-3.0, 0.9, 0.0])[..2], [-1.0, 0.5]);
        m.move_at(&[-1.0, 1.0, 0.0]);
        for _ in 0..10_000 {
            m.step(0.001);
            assert!((-1.0..=1.0).contains(&m.positions()[0]));
            assert!((0.0..=0.5).contains(&m.positions()[1]));
        }
    }

    #[test]
    fn held_arm_does_not_move_and_reads_noise_free_gravity() {
        let mut m = Motion::new(&arm(), &[0.2, 0.1, 0.3], 1, true);
        m.move_to(&[0.9, 0.4, 1.0]);
        m.step(1.0);
        assert_eq!(m.positions(), &[0.2, 0.1, 0.3]);
        let a = m.end_effector_ft(0.0, DMat3::IDENTITY, DVec3::ZERO);
        let b = m.end_effector_ft(1.0, DMat3::IDENTITY, DVec3::ZERO);
        assert_eq!(a, b);
        assert!((a.0[2] - TOOL_MASS * G).abs() < 1e-12);
    }

    #[test]
    fn tool_twists_keep_joint_limits_and_speeds_and_a_zero_twist_comes_to_rest() {
        let mut m = Motion::new(&arm(), &[0.9, 0.45, 0.3], 1, false);
        m.set_tool_point([0.0, 0.0, 0.2]);
        m.set_speed_caps(Some(&[0.5, 0.05, 0.5]));
        m.move_tool(EndEffectorVelocity {
            angular: [0.0, 0.0, 0.3],
            linear: [0.2, 0.1, 0.1],
        });
        for _ in 0..5000 {
            m.step(0.001);
            let (q, v) = (m.positions(), m.velocities());
            assert!(
                (-1.0..=1.0).contains(&q[0]) && (0.0..=0.5).contains(&q[1]),
                "{q:?}"
            );
            assert!(
                v[0].abs() <= 0.5 + 1e-9 && v[1].abs() <= 0.05 + 1e-9,
                "{v:?}"
            );
        }
        assert!(!m.at_rest(), "joints not at a limit still move");
        m.move_tool(EndEffectorVelocity::ZERO);
        for _ in 0..1000 {
            m.step(0.001);
        }
        assert!(m.at_rest());
        assert_eq!(m.tool_twist(), [0.0; 6]);
    }

    #[test]
    fn halt_stops_immediately() {
        let mut m = Motion::new(&arm(), &[0.0, 0.0, 0.0], 1, false);
        m.move_to(&[1.0, 0.5, 1.0]);
        for _ in 0..300 {
            m.step(0.001);
        }
        assert!(!m.at_rest());
        m.halt();
        let q = m.positions().to_vec();
        m.step(0.001);
        assert!(m.at_rest());
        assert_eq!(m.positions(), q.as_slice());
    }

    #[test]
    fn efforts_stay_within_max_and_follow_motion() {
        let mut m = Motion::new(&arm(), &[0.0, 0.0, 0.0], 1, false);
        let rest = m.joint_efforts();
        m.move_to(&[1.0, 0.5, 3.0]);
        m.step(0.01);
        let moving = m.joint_efforts();
        assert_ne!(rest, moving);
        assert!(
            m.effort_percent()
                .iter()
                .all(|p| (-100.0..=100.0).contains(p))
        );
    }
}
