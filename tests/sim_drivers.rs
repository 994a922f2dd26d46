//! The simulator's side of jogging (issue 32), driven with a fake clock and no sockets: the
//! motion-profile guard of the position and velocity drivers, the profile's speed caps, the
//! commanded-velocity echo, the arm stopping when control lapses, and `--drivers`; the
//! tool-point driver (`SetEndEffectorVelocityState`) under the same guard.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::net::SocketAddr;

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::judp::{self, Datagram, Header};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::{JausId, JointKind, Message};
use jaus_ocu::model::kinematics;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, Drivers, SimConfig};
use jaus_ocu::sim::motion::Mode;

const A: JausId = JausId::new(126, 1, 20);
const B: JausId = JausId::new(126, 1, 30);

fn addr(id: JausId) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + u16::from(id.component)))
}

struct Bench {
    sim: Component,
    seq: u16,
}

impl Bench {
    fn new(cfg: SimConfig) -> Self {
        Self {
            sim: Component::new(ArmFile::demo(), cfg),
            seq: 0,
        }
    }

    /// Sends `m` from `from` at `now`; returns the messages that came back.
    fn send(&mut self, now: f64, from: JausId, m: impl Into<Message>) -> Vec<Message> {
        self.seq += 1;
        let d = judp::single(
            &Header::new(self.sim.id(), from, self.seq),
            &m.into().emit().unwrap(),
        )
        .unwrap();
        let mut out = Vec::new();
        self.sim.handle_datagram(now, addr(from), &d, &mut out);
        out.iter()
            .flat_map(|o| {
                let dg = Datagram::new_checked(&o.bytes).unwrap();
                dg.blocks()
                    .map(|b| Message::parse(b.unwrap().block.payload()).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Runs the clock from `from` to `to` in 10 ms ticks.
    fn run(&mut self, from: f64, to: f64) {
        let mut out = Vec::new();
        let mut t = from;
        while t < to {
            t = (t + 0.01).min(to);
            self.sim.tick(t, &mut out);
        }
    }

    /// The one answer to `query` from `from`.
    fn ask(&mut self, now: f64, from: JausId, query: impl Into<Message>) -> Option<Message> {
        let mut r = self.send(now, from, query);
        assert!(r.len() <= 1, "{r:?}");
        r.pop()
    }

    /// A bench whose arm starts at the demo arm's "Deploy" preset: the arm out in front, away
    /// from its limits and singularities (the stowed home is folded against them).
    fn deployed() -> Self {
        let mut arm = ArmFile::demo();
        let deploy = arm.presets.iter().find(|p| p.name == "Deploy").unwrap();
        arm.home.clone_from(&deploy.positions);
        Self {
            sim: Component::new(arm, SimConfig::default()),
            seq: 0,
        }
    }

    /// The tool point now, manipulator (base) frame, m.
    fn tool_point(&self) -> [f64; 3] {
        let arm = self.sim.arm();
        kinematics::tool_point(&arm.spec, self.sim.positions(), arm.tool_point)
            .unwrap()
            .to_array()
    }

    /// Runs the clock from `from` in 10 ms ticks until `done` holds, at most until `deadline`;
    /// returns the time it held, or `None`.
    fn run_until(
        &mut self,
        from: f64,
        deadline: f64,
        mut done: impl FnMut(&Component) -> bool,
    ) -> Option<f64> {
        let mut out = Vec::new();
        let mut t = from;
        while t < deadline {
            t += 0.01;
            self.sim.tick(t, &mut out);
            if done(&self.sim) {
                return Some(t);
            }
        }
        None
    }

    /// `ReportCommandedEndEffectorVelocityState`'s twist, asked by `from`.
    fn commanded_twist(&mut self, now: f64, from: JausId) -> EndEffectorVelocity {
        match self.ask(now, from, QueryCommandedEndEffectorVelocityState) {
            Some(Message::ReportCommandedEndEffectorVelocityState(r)) => r.velocity,
            other => panic!("{other:?}"),
        }
    }

    /// `ReportCommandedJointVelocity`'s values, asked by `from`.
    fn commanded_velocity(&mut self, now: f64, from: JausId) -> Vec<f64> {
        match self.ask(now, from, QueryCommandedJointVelocity) {
            Some(Message::ReportCommandedJointVelocity(r)) => {
                r.joint_velocities.iter().map(|v| v.value).collect()
            }
            other => panic!("{other:?}"),
        }
    }
}

fn kinds() -> Vec<JointKind> {
    ArmFile::demo()
        .spec
        .joints
        .iter()
        .map(|j| j.kind.into())
        .collect()
}

/// A profile with `speed` (rad/s or m/s) for every joint.
fn profile(speed: f64) -> SetJointMotionProfile {
    SetJointMotionProfile {
        joint_motion_profiles: kinds()
            .into_iter()
            .map(|joint_type| JointMotionProfile {
                joint_type,
                max_speed: speed,
                max_acceleration: 1.0,
                max_deceleration: 2.0,
            })
            .collect(),
    }
}

/// Joint values of the demo arm's kinds.
fn values(v: &[f64]) -> Vec<JointValue> {
    kinds()
        .into_iter()
        .zip(v)
        .map(|(joint_type, &value)| JointValue { joint_type, value })
        .collect()
}

/// Velocity `v` on the first joint, the others still.
fn jog_first(v: f64) -> SetJointVelocity {
    let mut all = vec![0.0; kinds().len()];
    all[0] = v;
    SetJointVelocity {
        joint_velocities: values(&all),
    }
}

fn near(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

const LSB: f64 = 1e-7;

/// A tool-point twist: linear velocity `v` (m/s), no rotation.
fn linear(v: [f64; 3]) -> SetEndEffectorVelocityState {
    SetEndEffectorVelocityState {
        velocity: EndEffectorVelocity {
            angular: [0.0; 3],
            linear: v,
        },
    }
}

/// Whether two twists agree within one LSB of the wire's scales.
fn same_twist(a: &EndEffectorVelocity, b: &EndEffectorVelocity) -> bool {
    near(&a.angular, &b.angular, 3e-8) && near(&a.linear, &b.linear, 5e-9)
}

#[test]
fn velocity_and_position_commands_are_refused_until_the_controller_sets_a_motion_profile() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let start = b.sim.positions().to_vec();
    b.send(0.0, A, jog_first(0.2));
    let mut target = start.clone();
    target[0] += 0.3;
    b.send(
        0.0,
        A,
        SetJointPositions {
            joint_positions: values(&target),
        },
    );
    b.run(0.0, 0.5);
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.positions(), start.as_slice(), "the arm did not move");
    let s = b.sim.stats();
    assert_eq!((s.refused_without_profile, s.refused_commands), (2, 2));
    // A client without control can set no profile either.
    b.send(0.5, B, profile(0.5));
    assert_eq!(b.sim.stats().refused_commands, 3);
    // With a profile from the controller, both drivers move the arm.
    b.send(0.5, A, profile(0.5));
    b.send(0.5, A, jog_first(0.2));
    assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
    b.run(0.5, 1.0);
    assert!(b.sim.positions()[0] > start[0]);
    b.send(
        1.0,
        A,
        SetJointPositions {
            joint_positions: values(&target),
        },
    );
    assert!(matches!(b.sim.mode(), Mode::Position(_)));
    assert_eq!(b.sim.stats().refused_without_profile, 2);
}

#[test]
fn the_effort_driver_needs_no_profile() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let start = b.sim.positions().to_vec();
    b.send(
        0.0,
        A,
        SetJointEffort {
            joint_efforts: vec![20.0; kinds().len()],
        },
    );
    b.run(0.0, 0.5);
    assert_ne!(b.sim.positions(), start.as_slice());
    assert_eq!(b.sim.stats().refused_commands, 0);
}

#[test]
fn the_profile_is_forgotten_when_control_passes_and_each_controller_sets_its_own() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    b.send(0.0, A, jog_first(0.2));
    assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
    // B takes control with a higher authority: A's motion stops, its profile goes with it.
    b.send(0.1, B, RequestControl { authority_code: 5 });
    assert_eq!(b.sim.mode(), &Mode::Idle);
    b.send(0.1, B, jog_first(0.2));
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.stats().refused_without_profile, 1);
    b.send(0.1, B, profile(0.5));
    b.send(0.1, B, jog_first(0.2));
    assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
    // B releases; A takes control again and must send a profile again.
    b.send(0.2, B, ReleaseControl);
    b.send(0.2, A, RequestControl { authority_code: 1 });
    b.send(0.2, A, jog_first(0.2));
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.stats().refused_without_profile, 2);
}

#[test]
fn a_profile_of_the_wrong_length_or_joint_kind_is_refused() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let mut short = profile(0.5);
    short.joint_motion_profiles.pop();
    b.send(0.0, A, short);
    let mut wrong_kind = profile(0.5);
    let k = &mut wrong_kind.joint_motion_profiles[0].joint_type;
    *k = match *k {
        JointKind::Revolute => JointKind::Prismatic,
        JointKind::Prismatic => JointKind::Revolute,
    };
    b.send(0.0, A, wrong_kind);
    assert_eq!(b.sim.stats().refused_commands, 2);
    b.send(0.0, A, jog_first(0.2));
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.stats().refused_without_profile, 1);
}

#[test]
fn motion_stays_within_the_profiles_max_speed() {
    let mut b = Bench::new(SimConfig::default());
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.05));
    // A velocity past the profile is clamped to it, and the echo says so.
    b.send(0.0, A, jog_first(0.5));
    let mut want = vec![0.0; kinds().len()];
    want[0] = 0.05;
    assert!(near(&b.commanded_velocity(0.0, A), &want, LSB));
    let mut t = 0.0;
    for _ in 0..100 {
        b.run(t, t + 0.02);
        t += 0.02;
        let v = b.sim.velocities();
        assert!(v.iter().all(|v| v.abs() <= 0.05 + LSB), "{v:?}");
    }
    // A position move far away goes no faster either.
    let mut target = b.sim.positions().to_vec();
    target[0] -= 0.5;
    target[1] += 0.3;
    b.send(
        t,
        A,
        SetJointPositions {
            joint_positions: values(&target),
        },
    );
    let mut peak: f64 = 0.0;
    for _ in 0..200 {
        b.run(t, t + 0.02);
        t += 0.02;
        peak = b.sim.velocities().iter().fold(peak, |p, v| p.max(v.abs()));
    }
    assert!(peak <= 0.05 + LSB && peak > 0.04, "peak {peak}");
}

#[test]
fn the_commanded_velocity_echo_reads_the_command_and_zero_after_every_stop() {
    let mut b = Bench::new(SimConfig::default());
    let n = kinds().len();
    let zeros = vec![0.0; n];
    assert!(near(&b.commanded_velocity(0.0, A), &zeros, LSB));
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    b.send(0.0, A, jog_first(-0.2));
    let mut want = zeros.clone();
    want[0] = -0.2;
    assert!(near(&b.commanded_velocity(0.1, A), &want, LSB));
    // An explicit zero.
    b.send(0.2, A, jog_first(0.0));
    assert!(near(&b.commanded_velocity(0.2, A), &zeros, LSB));
    // Standby, then Resume and jog again: Standby stops it.
    b.send(0.3, A, jog_first(0.2));
    b.send(0.3, A, Standby);
    assert!(near(&b.commanded_velocity(0.3, A), &zeros, LSB));
    b.send(0.4, A, Resume);
    b.send(0.4, A, jog_first(0.2));
    assert!(!near(&b.commanded_velocity(0.4, A), &zeros, LSB));
    // An emergency from anyone.
    b.send(0.5, B, SetEmergency { emergency_code: 1 });
    assert!(near(&b.commanded_velocity(0.5, A), &zeros, LSB));
    b.send(0.6, B, ClearEmergency { emergency_code: 1 });
    b.send(0.6, A, Resume);
    b.send(0.6, A, jog_first(0.2));
    assert!(!near(&b.commanded_velocity(0.6, A), &zeros, LSB));
    // Releasing control.
    b.send(0.7, A, ReleaseControl);
    assert!(near(&b.commanded_velocity(0.7, A), &zeros, LSB));
}

#[test]
fn query_joint_motion_profile_reports_the_arms_limits_then_the_profile_set() {
    let mut b = Bench::new(SimConfig::default());
    let arm = ArmFile::demo();
    let Some(Message::ReportJointMotionProfile(r)) = b.ask(0.0, A, QueryJointMotionProfile) else {
        panic!()
    };
    assert_eq!(r.joint_motion_profiles.len(), arm.spec.joint_count());
    for (p, j) in r.joint_motion_profiles.iter().zip(&arm.spec.joints) {
        assert_eq!(p.joint_type, JointKind::from(j.kind));
        if let Some(max) = j.max_speed {
            assert!((p.max_speed - max).abs() < 1e-6, "{p:?} {max}");
        }
        assert!(p.max_acceleration > 0.0 && p.max_deceleration > 0.0);
    }
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let set = profile(0.25);
    b.send(0.0, A, set.clone());
    let Some(Message::ReportJointMotionProfile(r)) = b.ask(0.0, B, QueryJointMotionProfile) else {
        panic!()
    };
    for (got, sent) in r
        .joint_motion_profiles
        .iter()
        .zip(&set.joint_motion_profiles)
    {
        assert_eq!(got.joint_type, sent.joint_type);
        assert!((got.max_speed - 0.25).abs() < LSB);
        assert!((got.max_deceleration - 2.0).abs() < LSB);
    }
}

#[test]
fn when_the_controller_stops_renewing_control_the_arm_stops_at_the_timeout() {
    let mut b = Bench::new(SimConfig {
        control_timeout_s: 1,
        ..SimConfig::default()
    });
    assert!(matches!(
        b.ask(0.0, A, QueryTimeout),
        Some(Message::ReportTimeout(ReportTimeout { timeout: 1 }))
    ));
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    b.send(0.0, A, jog_first(0.3));
    // Renewed every 0.5 s, the jog goes on for 3 s.
    for i in 1..=6 {
        let t = f64::from(i) * 0.5;
        b.run(t - 0.5, t);
        b.send(t, A, RequestControl { authority_code: 1 });
        assert_eq!(b.sim.controller(), Some(A));
        assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
    }
    // The OCU dies at 3 s: nothing more comes. Still moving just before the timeout.
    b.run(3.0, 3.95);
    assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
    b.run(3.95, 4.05);
    assert_eq!(b.sim.controller(), None);
    assert_eq!(b.sim.mode(), &Mode::Idle);
    let stopped = b.sim.positions().to_vec();
    b.run(4.05, 5.0);
    assert_eq!(
        b.sim.positions(),
        stopped.as_slice(),
        "the arm stays stopped"
    );
    assert!(near(
        &b.commanded_velocity(5.0, B),
        &vec![0.0; kinds().len()],
        LSB
    ));
}

/// The manipulator services `sim` lists.
fn listed(b: &mut Bench) -> Vec<String> {
    let Some(Message::ReportServices(r)) = b.ask(0.0, A, QueryServices::all()) else {
        panic!()
    };
    r.nodes[0].components[0]
        .services
        .iter()
        .map(|s| s.uri.clone())
        .collect()
}

#[test]
fn a_velocity_only_sim_lists_and_obeys_only_the_velocity_driver() {
    let mut b = Bench::new(SimConfig {
        drivers: Drivers {
            position: false,
            velocity: true,
            effort: false,
            tool: false,
        },
        ..SimConfig::default()
    });
    let uris = listed(&mut b);
    let has = |name: &str| uris.contains(&format!("urn:jaus:jss:manipulator:{name}"));
    assert!(has("ManipulatorJointVelocityDriver") && has("ManipulatorJointMotionProfile"));
    assert!(!has("ManipulatorJointPositionDriver") && !has("PrimitiveManipulator"));
    assert!(has("ManipulatorJointPositionSensor"), "sensors stay");
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    let start = b.sim.positions().to_vec();
    let mut target = start.clone();
    target[0] += 0.3;
    b.send(
        0.0,
        A,
        SetJointPositions {
            joint_positions: values(&target),
        },
    );
    b.send(
        0.0,
        A,
        SetJointEffort {
            joint_efforts: vec![30.0; kinds().len()],
        },
    );
    b.run(0.0, 0.3);
    assert_eq!(b.sim.positions(), start.as_slice());
    assert_eq!(b.sim.stats().unhandled, 2);
    assert_eq!(b.ask(0.3, A, QueryCommandedJointPositions), None);
    assert_eq!(b.ask(0.3, A, QueryJointEffort), None);
    b.send(0.3, A, jog_first(0.2));
    assert!(matches!(b.sim.mode(), Mode::Velocity(_)));
}

#[test]
fn a_position_only_sim_refuses_velocity_and_has_no_velocity_echo() {
    let mut b = Bench::new(SimConfig {
        drivers: Drivers {
            position: true,
            velocity: false,
            effort: false,
            tool: false,
        },
        ..SimConfig::default()
    });
    let uris = listed(&mut b);
    assert!(uris.contains(&"urn:jaus:jss:manipulator:ManipulatorJointPositionDriver".into()));
    assert!(!uris.contains(&"urn:jaus:jss:manipulator:ManipulatorJointVelocityDriver".into()));
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    b.send(0.0, A, jog_first(0.2));
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.ask(0.0, A, QueryCommandedJointVelocity), None);
    let mut target = b.sim.positions().to_vec();
    target[0] += 0.1;
    b.send(
        0.0,
        A,
        SetJointPositions {
            joint_positions: values(&target),
        },
    );
    assert!(matches!(b.sim.mode(), Mode::Position(_)));
}

#[test]
fn a_tool_point_twist_along_x_moves_the_tool_along_the_base_x_axis() {
    let mut b = Bench::deployed();
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    let before = b.tool_point();
    b.send(0.0, A, linear([0.05, 0.0, 0.0]));
    assert!(matches!(b.sim.mode(), Mode::Tool(_)));
    b.run(0.0, 1.0);
    // Up to speed: the sensor reads the tool moving at the twist commanded.
    let Some(Message::ReportEndEffectorVelocityState(r)) =
        b.ask(1.0, B, QueryEndEffectorVelocityState)
    else {
        panic!()
    };
    let v = r.velocity;
    assert!((v.linear[0] - 0.05).abs() < 0.002, "{v:?}");
    assert!(
        v.linear[1].abs() < 0.002 && v.linear[2].abs() < 0.002,
        "{v:?}"
    );
    assert!(v.angular.iter().all(|w| w.abs() < 0.01), "{v:?}");
    b.run(1.0, 2.0);
    let after = b.tool_point();
    let d: Vec<f64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    // 2 s at 0.05 m/s, less the ramp up: about 9 cm along +x, next to nothing across.
    assert!(d[0] > 0.07 && d[0] < 0.1, "moved {d:?}");
    assert!(
        d[1].abs() < 0.05 * d[0] && d[2].abs() < 0.05 * d[0],
        "moved {d:?}"
    );
}

#[test]
fn tool_point_twists_are_refused_until_the_controller_sets_a_motion_profile() {
    let mut b = Bench::deployed();
    b.send(0.0, A, RequestControl { authority_code: 1 });
    let start = b.sim.positions().to_vec();
    b.send(0.0, A, linear([0.05, 0.0, 0.0]));
    b.run(0.0, 0.5);
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.positions(), start.as_slice(), "the arm did not move");
    let s = b.sim.stats();
    assert_eq!((s.refused_without_profile, s.refused_commands), (1, 1));
    // From a client without control it is refused as any command.
    b.send(0.5, B, linear([0.05, 0.0, 0.0]));
    assert_eq!(b.sim.stats().refused_commands, 2);
    assert_eq!(b.sim.stats().refused_without_profile, 1);
    b.send(0.5, A, profile(0.5));
    b.send(0.5, A, linear([0.05, 0.0, 0.0]));
    assert!(matches!(b.sim.mode(), Mode::Tool(_)));
}

#[test]
fn a_zero_twist_stops_the_tool_point() {
    let mut b = Bench::deployed();
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    b.send(0.0, A, linear([0.0, 0.04, -0.03]));
    b.run(0.0, 0.8);
    assert!(!b.sim.velocities().iter().all(|v| *v == 0.0), "moving");
    b.send(0.8, A, linear([0.0; 3]));
    let stopped = b.run_until(0.8, 2.0, |s| s.velocities().iter().all(|v| *v == 0.0));
    let t = stopped.unwrap_or_else(|| {
        panic!(
            "the arm comes to rest after a zero twist: {:?} {:?}",
            b.sim.mode(),
            b.sim.velocities()
        )
    });
    let rest = b.sim.positions().to_vec();
    b.run(t, t + 1.0);
    assert_eq!(b.sim.positions(), rest.as_slice(), "and stays there");
}

#[test]
fn tool_point_motion_stays_within_the_profile_and_stops_when_control_lapses() {
    let mut b = Bench::new(SimConfig {
        control_timeout_s: 1,
        ..SimConfig::default()
    });
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.05));
    // Far more than the joints can give at 0.05 rad/s (m/s): every joint stays within it.
    b.send(0.0, A, linear([0.5, 0.0, 0.5]));
    let mut t = 0.0;
    let mut peak: f64 = 0.0;
    while t < 0.9 {
        b.run(t, t + 0.02);
        t += 0.02;
        peak = b.sim.velocities().iter().fold(peak, |p, v| p.max(v.abs()));
    }
    assert!(peak <= 0.05 + LSB && peak > 0.04, "peak {peak}");
    // Nothing renews control: at the timeout the arm stops as for a joint jog.
    let lapsed = b.run_until(t, 1.5, |s| s.controller().is_none());
    assert!(lapsed.is_some_and(|at| at > 1.0));
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert!(b.sim.velocities().iter().all(|v| *v == 0.0));
}

#[test]
fn the_commanded_twist_echo_reads_the_command_and_zero_after_a_zero() {
    let mut b = Bench::deployed();
    let zero = EndEffectorVelocity::ZERO;
    assert!(same_twist(&b.commanded_twist(0.0, A), &zero));
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    let sent = EndEffectorVelocity {
        angular: [0.0, 0.0, 0.1],
        linear: [0.02, -0.01, 0.03],
    };
    b.send(0.0, A, SetEndEffectorVelocityState { velocity: sent });
    b.run(0.0, 0.2);
    assert!(same_twist(&b.commanded_twist(0.2, B), &sent));
    b.send(0.3, A, linear([0.0; 3]));
    assert!(same_twist(&b.commanded_twist(0.3, B), &zero));
    // A joint command takes over: the twist echo reads zero.
    b.send(0.4, A, SetEndEffectorVelocityState { velocity: sent });
    b.send(0.4, A, jog_first(0.1));
    assert!(same_twist(&b.commanded_twist(0.4, B), &zero));
    // An emergency from anyone.
    b.send(0.5, A, SetEndEffectorVelocityState { velocity: sent });
    b.send(0.5, B, SetEmergency { emergency_code: 1 });
    assert!(same_twist(&b.commanded_twist(0.5, B), &zero));
}

#[test]
fn a_velocity_only_sim_neither_lists_nor_obeys_the_tool_point_driver() {
    let mut b = Bench::new(SimConfig {
        drivers: Drivers {
            position: false,
            velocity: true,
            effort: false,
            tool: false,
        },
        ..SimConfig::default()
    });
    let uris = listed(&mut b);
    let has = |name: &str| uris.contains(&format!("urn:jaus:jss:manipulator:{name}"));
    assert!(!has("ManipulatorEndEffectorVelocityStateDriver"));
    assert!(
        has("ManipulatorEndEffectorVelocityStateSensor"),
        "sensors stay"
    );
    b.send(0.0, A, RequestControl { authority_code: 1 });
    b.send(0.0, A, profile(0.5));
    let start = b.sim.positions().to_vec();
    b.send(0.0, A, linear([0.05, 0.0, 0.0]));
    b.run(0.0, 0.3);
    assert_eq!(b.sim.mode(), &Mode::Idle);
    assert_eq!(b.sim.positions(), start.as_slice());
    assert_eq!(b.sim.stats().unhandled, 1);
    assert_eq!(b.ask(0.3, A, QueryCommandedEndEffectorVelocityState), None);
    assert!(matches!(
        b.ask(0.3, A, QueryEndEffectorVelocityState),
        Some(Message::ReportEndEffectorVelocityState(_))
    ));
    // The full set, by default, lists it.
    let mut all = Bench::new(SimConfig::default());
    let uris = listed(&mut all);
    assert!(
        uris.contains(&"urn:jaus:jss:manipulator:ManipulatorEndEffectorVelocityStateDriver".into())
    );
}
