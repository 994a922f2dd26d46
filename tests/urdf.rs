//! Proof that the URDF export is the arm our kinematics computes: the URDF is read by an
//! independent parser (`urdf-rs`) and its forward kinematics computed by an independent
//! library (`k`); the tool point, every joint frame and every bounding cylinder must equal
//! `model::kinematics` in the vehicle frame, for the demo arm (prismatic joint, continuous
//! joint, mount, tool point), PUMA 560 and `UR5e` (also with a mount and a tool point), and a
//! synthetic arm with a prismatic first joint, a twisted prismatic joint and a skew mount; and a
//! vehicle of two arms, each at its mount under one `vehicle` root, its names prefixed with its ID.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::f64::consts::{FRAC_PI_2, PI};
use std::path::Path;

use glam::{DAffine3, DQuat, DVec3};
use k::nalgebra as na;

use jaus_ocu::model::arm::{ArmSpec, Joint, JointType, Mount};
use jaus_ocu::model::kinematics::{self, CylinderKind};
use jaus_ocu::record::urdf::{UrdfOptions, write_urdf};
use jaus_ocu::sim::arm_file::ArmFile;

fn arm(name: &str) -> ArmFile {
    ArmFile::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/arms/{name}.toml")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A pseudo-random joint vector within the limits (continuous joints over ±3 turns), from a
/// small LCG so the test is repeatable.
fn joint_vectors(spec: &ArmSpec, extra: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out: Vec<Vec<f64>> = extra.to_vec();
    for _ in 0..8 {
        out.push(
            spec.joints
                .iter()
                .map(|j| match (j.min, j.max) {
                    (Some(lo), Some(hi)) => lo + (hi - lo) * next(),
                    _ => (next() - 0.5) * 12.0 * PI,
                })
                .collect(),
        );
    }
    out
}

fn to_glam(iso: &na::Isometry3<f64>) -> DAffine3 {
    let t = iso.translation.vector;
    let q = iso.rotation.quaternion();
    DAffine3::from_rotation_translation(
        DQuat::from_xyzw(q.i, q.j, q.k, q.w),
        DVec3::new(t.x, t.y, t.z),
    )
}

fn origin(pose: &urdf_rs::Pose) -> DAffine3 {
    let [x, y, z] = pose.xyz.0;
    let [roll, pitch, yaw] = pose.rpy.0;
    DAffine3::from_translation(DVec3::new(x, y, z))
        * DAffine3::from_rotation_z(yaw)
        * DAffine3::from_rotation_y(pitch)
        * DAffine3::from_rotation_x(roll)
}

fn distance_to_segment(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// Writes `spec` as URDF, loads it with urdf-rs + k and compares with our kinematics for
/// every joint vector.
fn check(label: &str, spec: &ArmSpec, tool: [f64; 3], extra: &[Vec<f64>]) {
    let urdf = write_urdf(
        spec,
        &UrdfOptions {
            name: label.into(),
            tool_point: Some(tool),
            default_radius: 0.03,
        },
    )
    .unwrap();
    let robot = urdf_rs::read_from_string(&urdf).unwrap_or_else(|e| panic!("{label}: {e}\n{urdf}"));
    let moving: Vec<&urdf_rs::Joint> = robot
        .joints
        .iter()
        .filter(|j| !matches!(j.joint_type, urdf_rs::JointType::Fixed))
        .collect();
    assert_eq!(
        moving.len(),
        spec.joints.len(),
        "{label}: one URDF joint per JAUS joint"
    );
    for (j, (urdf_joint, joint)) in moving.iter().zip(&spec.joints).enumerate() {
        let expected = match joint.kind {
            JointType::Prismatic => urdf_rs::JointType::Prismatic,
            JointType::Revolute if joint.is_continuous() => urdf_rs::JointType::Continuous,
            JointType::Revolute => urdf_rs::JointType::Revolute,
        };
        assert_eq!(urdf_joint.joint_type, expected, "{label}: joint {}", j + 1);
        if let (Some(lo), Some(hi)) = (joint.min, joint.max) {
            assert_eq!((urdf_joint.limit.lower, urdf_joint.limit.upper), (lo, hi));
        }
        assert_eq!(urdf_joint.limit.velocity, joint.max_speed.unwrap_or(0.0));
        assert_eq!(urdf_joint.limit.effort, joint.max_effort.unwrap_or(0.0));
    }
    let chain = k::Chain::<f64>::from(&robot);
    for q in joint_vectors(spec, extra) {
        for (urdf_joint, &v) in moving.iter().zip(&q) {
            chain
                .find(&urdf_joint.name)
                .unwrap_or_else(|| panic!("{label}: k has no joint {}", urdf_joint.name))
                .set_joint_position_unchecked(v);
        }
        chain.update_transforms();
        let pose = kinematics::forward(spec, &q, tool).unwrap();
        let world = |link: &str| {
            to_glam(
                &chain
                    .find_link(link)
                    .unwrap_or_else(|| panic!("{label}: no link {link}"))
                    .world_transform()
                    .unwrap(),
            )
        };
        let tool_point = world("tool_point").translation;
        assert!(
            tool_point.distance(pose.tool_point_vehicle) < 1e-6,
            "{label} q={q:?}: URDF tool point {tool_point} != {}",
            pose.tool_point_vehicle
        );
        for (j, frame) in pose.frames.iter().enumerate() {
            let ours = pose.mount * *frame;
            let theirs = world(&format!("link_{}", j + 1));
            assert!(
                theirs.abs_diff_eq(ours, 1e-9),
                "{label} q={q:?}: frame {}: {theirs:?} != {ours:?}",
                j + 1
            );
        }
        let ee = world("end_effector");
        assert!(ee.abs_diff_eq(pose.mount * pose.end_effector, 1e-9));

        // Collision geometry: the reported bounding cylinders, where kinematics puts them.
        let mut collisions = Vec::new();
        for link in &robot.links {
            for c in &link.collision {
                collisions.push((world(&link.name) * origin(&c.origin), c.geometry.clone()));
            }
        }
        let reported: Vec<_> = pose
            .cylinders
            .iter()
            .filter(|c| c.radius.is_some())
            .collect();
        assert_eq!(
            collisions.len(),
            reported.len(),
            "{label}: one collision per reported cylinder"
        );
        for c in reported {
            let r = c.radius.unwrap().abs();
            let (from, to) = (
                pose.mount.transform_point3(c.from),
                pose.mount.transform_point3(c.to),
            );
            let found = collisions.iter().any(|(at, geometry)| match geometry {
                urdf_rs::Geometry::Cylinder { radius, length } if (radius - r).abs() < 1e-12 => {
                    let a = at.transform_point3(DVec3::new(0.0, 0.0, -length / 2.0));
                    let b = at.transform_point3(DVec3::new(0.0, 0.0, length / 2.0));
                    if c.kind == CylinderKind::Joint {
                        // A prismatic joint's cylinder at full stroke holds the current one.
                        distance_to_segment(from, a, b) < 1e-9
                            && distance_to_segment(to, a, b) < 1e-9
                    } else {
                        (a.distance(from) < 1e-9 && b.distance(to) < 1e-9)
                            || (a.distance(to) < 1e-9 && b.distance(from) < 1e-9)
                    }
                }
                urdf_rs::Geometry::Sphere { radius } if (radius - r).abs() < 1e-12 => {
                    c.length() < 1e-9 && at.translation.distance(from) < 1e-9
                }
                _ => false,
            });
            assert!(
                found,
                "{label} q={q:?}: no collision geometry for joint {} {:?} cylinder {from} → {to} (r {r})",
                c.joint, c.kind
            );
        }
    }
}

#[test]
fn demo_arm_urdf_has_our_tool_point_frames_and_cylinders() {
    let demo = ArmFile::demo();
    assert!(demo.spec.mount.is_some(), "the demo arm has a mount");
    assert!(
        demo.spec
            .joints
            .iter()
            .any(|j| j.kind == JointType::Prismatic)
    );
    assert!(
        demo.spec
            .joints
            .iter()
            .any(jaus_ocu::model::arm::Joint::is_continuous)
    );
    let mut extra = vec![demo.home.clone()];
    extra.extend(demo.presets.iter().map(|p| p.positions.clone()));
    check("demo", &demo.spec, demo.tool_point, &extra);
}

#[test]
fn puma560_urdf_has_our_tool_point_also_on_a_mount_with_a_tool() {
    let puma = arm("puma560");
    let reference = [
        vec![0.0; 6],
        vec![0.3, 0.6, -1.2, 0.4, -0.7, 1.1],
        vec![0.0, FRAC_PI_2 / 2.0, -PI, 0.0, FRAC_PI_2 / 2.0, 0.0],
    ];
    check("PUMA 560", &puma.spec, puma.tool_point, &reference);
    // kinematics.md §9.3's mount (180° about vehicle x) and §9.1's tool.
    let mut mounted = puma.spec.clone();
    mounted.mount = Some(Mount {
        position: [0.3, 0.0, -0.25],
        orientation: [0.0, 1.0, 0.0, 0.0],
    });
    check("PUMA 560 mounted", &mounted, [0.0, 0.0, 0.1], &reference);
}

#[test]
fn ur5e_urdf_has_our_tool_point_also_on_a_skew_mount() {
    let ur = arm("ur5e");
    let reference = [vec![0.0; 6], vec![0.5, -1.2, 1.4, -0.8, 1.1, 0.3]];
    check("UR5e", &ur.spec, ur.tool_point, &reference);
    let mut mounted = ur.spec.clone();
    let q = DQuat::from_euler(glam::EulerRot::ZYX, 0.4, -0.3, 2.0);
    mounted.mount = Some(Mount {
        position: [-0.2, 0.15, 0.4],
        orientation: [q.w, q.x, q.y, q.z],
    });
    check("UR5e mounted", &mounted, [0.01, -0.02, 0.15], &reference);
}

#[test]
fn synthetic_arm_with_prismatic_first_and_twisted_prismatic_joints() {
    let mut first = Joint::prismatic(0.0, 0.0, 0.7, 0.1, 0.6);
    first.axis_radius = Some(0.05);
    let mut second = Joint::revolute(0.2, -1.1, 0.05);
    second.min = Some(-2.0);
    second.max = Some(2.5);
    second.link_radius = Some(0.04);
    second.axis_radius = Some(0.045);
    second.max_speed = Some(1.5);
    second.max_effort = Some(40.0);
    let mut third = Joint::prismatic(0.1, 0.9, -2.3, -0.1, 0.4);
    third.axis_radius = Some(0.03);
    third.link_radius = Some(0.03);
    let mut fourth = Joint::revolute(0.0, FRAC_PI_2, 0.0);
    fourth.axis_radius = Some(0.02);
    // Only one limit: continuous.
    fourth.min = Some(-1.0);
    let fifth = Joint::revolute(-0.3, PI, 0.12);
    let q = DQuat::from_xyzw(0.2, -0.6, 0.3, 0.7).normalize();
    let spec = ArmSpec {
        mount: Some(Mount {
            position: [0.5, -0.1, 0.2],
            // Not normalised on purpose: the mount is normalised as kinematics.md §5 says.
            orientation: [2.0 * q.w, 2.0 * q.x, 2.0 * q.y, 2.0 * q.z],
        }),
        joints: vec![first, second, third, fourth, fifth],
    };
    check(
        "synthetic",
        &spec,
        [0.05, 0.0, 0.2],
        &[
            vec![0.1, 0.0, -0.1, 0.0, 0.0],
            vec![0.6, 2.5, 0.4, 40.0, -7.0],
        ],
    );
}

#[test]
fn a_vehicle_urdf_holds_every_arm_at_its_mount_with_prefixed_names() {
    use jaus_ocu::model::update::ComponentId;
    use jaus_ocu::record::urdf::{UrdfArm, UrdfError, write_vehicle_urdf};

    let mut left = ArmFile::demo();
    left.spec.mount = Some(Mount::at([0.0, -0.4, 0.0], 0.0));
    let mut right = arm("puma560");
    right.spec.mount = Some(Mount::at([0.0, 0.4, 0.0], PI));
    let ids = [ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11)];
    let arms = [
        UrdfArm {
            id: ids[0],
            spec: &left.spec,
            tool_point: Some(left.tool_point),
        },
        UrdfArm {
            id: ids[1],
            spec: &right.spec,
            tool_point: Some(right.tool_point),
        },
    ];
    let urdf = write_vehicle_urdf(&arms, "two arms", 0.03).unwrap();
    let robot = urdf_rs::read_from_string(&urdf).unwrap_or_else(|e| panic!("{e}\n{urdf}"));
    assert_eq!(robot.name, "two arms");
    // One root: every link but `vehicle` is some joint's child; each arm hangs from it.
    let children: Vec<&str> = robot.joints.iter().map(|j| j.child.link.as_str()).collect();
    let roots: Vec<&str> = robot
        .links
        .iter()
        .map(|l| l.name.as_str())
        .filter(|l| !children.contains(l))
        .collect();
    assert_eq!(roots, ["vehicle"]);
    for id in ids {
        let mount = robot
            .joints
            .iter()
            .find(|j| j.name == format!("{id}/vehicle_to_manipulator"))
            .unwrap_or_else(|| panic!("{id}: no mount joint"));
        assert_eq!(mount.parent.link, "vehicle");
        assert_eq!(mount.child.link, format!("{id}/manipulator"));
    }
    for name in robot
        .links
        .iter()
        .map(|l| &l.name)
        .chain(robot.joints.iter().map(|j| &j.name))
    {
        assert!(
            name == "vehicle" || ids.iter().any(|id| name.starts_with(&format!("{id}/"))),
            "{name} names no arm"
        );
    }
    // Both arms where our kinematics puts them, through k's tree.
    let chain = k::Chain::<f64>::from(&robot);
    for ((arm, id), file) in arms.iter().zip(ids).zip([&left, &right]) {
        let moving: Vec<&urdf_rs::Joint> = robot
            .joints
            .iter()
            .filter(|j| {
                j.name.starts_with(&format!("{id}/"))
                    && !matches!(j.joint_type, urdf_rs::JointType::Fixed)
            })
            .collect();
        assert_eq!(moving.len(), arm.spec.joints.len(), "{id}");
        for (j, &v) in moving.iter().zip(&file.home) {
            chain.find(&j.name).unwrap().set_joint_position_unchecked(v);
        }
        chain.update_transforms();
        let pose = kinematics::forward(arm.spec, &file.home, file.tool_point).unwrap();
        let world = |link: String| {
            to_glam(
                &chain
                    .find_link(&link)
                    .unwrap_or_else(|| panic!("no link {link}"))
                    .world_transform()
                    .unwrap(),
            )
        };
        let tool = world(format!("{id}/tool_point")).translation;
        assert!(
            tool.distance(pose.tool_point_vehicle) < 1e-6,
            "{id}: {tool} != {}",
            pose.tool_point_vehicle
        );
        for (j, frame) in pose.frames.iter().enumerate() {
            let theirs = world(format!("{id}/link_{}", j + 1));
            assert!(
                theirs.abs_diff_eq(pose.mount * *frame, 1e-9),
                "{id}: frame {}",
                j + 1
            );
        }
    }
    // An arm that cannot be written is named.
    let mut bad = right.spec.clone();
    bad.joints[0].max_speed = Some(f64::INFINITY);
    let e = write_vehicle_urdf(
        &[UrdfArm {
            id: ids[1],
            spec: &bad,
            tool_point: None,
        }],
        "x",
        0.03,
    )
    .unwrap_err();
    assert!(matches!(e, UrdfError::Arm { arm, .. } if arm == ids[1]));
    assert!(
        e.to_string().starts_with("arm 126.1.11: joint 1 max_speed"),
        "{e}"
    );
}
