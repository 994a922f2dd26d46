//! Forward kinematics (kinematics.md §5, §7) against the reference arms of
//! `tests/data/reference-fk.json` (PUMA 560, `UR5e`), the telemax arm of kinematics.md §9.3, and
//! properties that hold for any arm.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::f64::consts::{FRAC_PI_2, FRAC_PI_3, PI, TAU};

use glam::{DAffine3, DMat3, DQuat, DVec3};
use jaus_ocu::jaus::Message;
use jaus_ocu::model::arm::JointType;
use jaus_ocu::model::arm::{ArmSpec, Joint, Mount};
use jaus_ocu::model::kinematics::{
    ArmPose, CylinderKind, DEFAULT_CYLINDER_RADIUS, KinematicsError, end_effector_pose, forward,
    mount_transform, reach, tool_point,
};
use jaus_ocu::sim::arm_file::{ArmFile, BUILTIN};
use proptest::prelude::*;
use serde_json::Value;

const REFERENCE_JSON: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/reference-fk.json"
));

/// The reference file prints every value to 6 decimals, so its rounding (up to 5e-7 per
/// coordinate, plus the rounded q it lists) limits the comparison, not our arithmetic, which
/// reproduces the unrounded values to ~1e-12.
const REFERENCE_TOLERANCE: f64 = 1e-6;

/// After a JAUS wire round trip the link parameters sit on the 16-bit grid (0.3 mm, 9.6e-5
/// rad); kinematics.md §3 measured at most 0.9 mm of tool movement for the test arms.
const WIRE_TOLERANCE: f64 = 1e-3;

/// Two computations of the same exact quantity (no reference rounding involved).
const EXACT: f64 = 1e-9;

// ---------------------------------------------------------------------------------------------
// Helpers.

fn assert_close(actual: DVec3, expected: DVec3, tolerance: f64, what: &str) {
    let error = (actual - expected).abs().max_element();
    assert!(
        error <= tolerance,
        "{what}: got {actual:?}, expected {expected:?} (off by {error:e}, tolerance {tolerance:e})"
    );
}

fn assert_rotation_close(actual: DMat3, expected: DMat3, tolerance: f64, what: &str) {
    for row in 0..3 {
        assert_close(
            actual.row(row),
            expected.row(row),
            tolerance,
            &format!("{what}, row {row}"),
        );
    }
}

fn quaternion_matrix(q: [f64; 4]) -> DMat3 {
    let [d, a, b, c] = q;
    DMat3::from_quat(DQuat::from_xyzw(a, b, c, d))
}

/// R(q) exactly as kinematics.md §5 writes it (rows), after normalising; independent of glam's
/// quaternion code.
fn rotation_as_kinematics_md_writes_it(q: [f64; 4]) -> DMat3 {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    let [d, a, b, c] = q.map(|v| v / n);
    let rows = [
        DVec3::new(
            1.0 - 2.0 * (b * b + c * c),
            2.0 * (a * b - c * d),
            2.0 * (a * c + b * d),
        ),
        DVec3::new(
            2.0 * (a * b + c * d),
            1.0 - 2.0 * (a * a + c * c),
            2.0 * (b * c - a * d),
        ),
        DVec3::new(
            2.0 * (a * c - b * d),
            2.0 * (b * c + a * d),
            1.0 - 2.0 * (a * a + b * b),
        ),
    ];
    DMat3::from_cols(rows[0], rows[1], rows[2]).transpose()
}

fn through_the_wire(spec: &ArmSpec) -> ArmSpec {
    let bytes = Message::from(jaus_ocu::net::reports::spec_report(spec))
        .emit()
        .expect("the specification encodes");
    match Message::parse(&bytes).expect("the specification decodes") {
        Message::ReportManipulatorSpecifications(report) => {
            jaus_ocu::net::reports::arm_spec(&report)
        }
        other => panic!("decoded as {}", other.name()),
    }
}

// ---------------------------------------------------------------------------------------------
// The reference arms (PUMA 560, UR5e) from the JSON.

fn reference() -> Value {
    serde_json::from_str(REFERENCE_JSON).expect("reference-fk.json is JSON")
}

fn number(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {v}"))
}

fn optional(v: &Value, key: &str) -> Option<f64> {
    v.get(key).map(|_| number(v, key))
}

fn vec3(v: &Value) -> DVec3 {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("{v} is not an array"));
    assert_eq!(a.len(), 3, "{v} is not a 3-vector");
    DVec3::new(
        a[0].as_f64().unwrap(),
        a[1].as_f64().unwrap(),
        a[2].as_f64().unwrap(),
    )
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{v} is not an array"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("{x} is not a number")))
        .collect()
}

/// Fails on fields this test does not know, so a field added to the file cannot be ignored
/// silently.
fn assert_known_keys(v: &Value, known: &[&str], what: &str) {
    for key in v.as_object().unwrap().keys() {
        assert!(
            known.contains(&key.as_str()),
            "{what}: unknown field `{key}`; teach tests/kinematics.rs what it means"
        );
    }
}

fn arm_from_json(arm: &Value) -> ArmSpec {
    let mount = arm.get("manipulator_coordinate_system").map(|m| Mount {
        position: [number(m, "x"), number(m, "y"), number(m, "z")],
        orientation: [
            number(m, "d"),
            number(m, "a"),
            number(m, "b"),
            number(m, "c"),
        ],
    });
    let first = &arm["first_joint"];
    assert_known_keys(
        first,
        &[
            "type",
            "Joint1Offset",
            "Joint1Angle",
            "Joint1MinValue",
            "Joint1MaxValue",
            "Joint1MaxSpeed",
            "Joint1MaxTorque",
            "Joint1MaxForce",
        ],
        "first_joint",
    );
    let mut joints = vec![match first["type"].as_str() {
        Some("revolute") => Joint {
            min: optional(first, "Joint1MinValue"),
            max: optional(first, "Joint1MaxValue"),
            max_speed: optional(first, "Joint1MaxSpeed"),
            max_effort: optional(first, "Joint1MaxTorque"),
            ..Joint::revolute(0.0, 0.0, number(first, "Joint1Offset"))
        },
        Some("prismatic") => Joint {
            max_speed: optional(first, "Joint1MaxSpeed"),
            max_effort: optional(first, "Joint1MaxForce"),
            ..Joint::prismatic(
                0.0,
                0.0,
                number(first, "Joint1Angle"),
                number(first, "Joint1MinValue"),
                number(first, "Joint1MaxValue"),
            )
        },
        other => panic!("first_joint type {other:?}"),
    }];
    for s in arm["joint_specs"].as_array().unwrap() {
        assert_known_keys(
            s,
            &[
                "type",
                "LinkLength",
                "TwistAngle",
                "JointOffset",
                "JointAngle",
                "MinValue",
                "MaxValue",
                "MaxSpeed",
                "MaxTorque",
                "MaxForce",
            ],
            "joint_specs element",
        );
        let (a, alpha) = (number(s, "LinkLength"), number(s, "TwistAngle"));
        joints.push(match s["type"].as_str() {
            Some("revolute") => Joint {
                min: optional(s, "MinValue"),
                max: optional(s, "MaxValue"),
                max_speed: optional(s, "MaxSpeed"),
                max_effort: optional(s, "MaxTorque"),
                ..Joint::revolute(a, alpha, number(s, "JointOffset"))
            },
            Some("prismatic") => Joint {
                max_speed: optional(s, "MaxSpeed"),
                max_effort: optional(s, "MaxForce"),
                ..Joint::prismatic(
                    a,
                    alpha,
                    number(s, "JointAngle"),
                    number(s, "MinValue"),
                    number(s, "MaxValue"),
                )
            },
            other => panic!("joint_specs type {other:?}"),
        });
    }
    if let Some(names) = arm.get("joint_names") {
        let names = names.as_array().unwrap();
        assert_eq!(names.len(), joints.len(), "one name per joint");
        for (joint, name) in joints.iter_mut().zip(names) {
            joint.name = Some(name.as_str().unwrap().to_owned());
        }
    }
    ArmSpec { mount, joints }
}

fn reference_arms() -> Vec<(String, ArmSpec, Vec<Value>)> {
    reference()["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arm| {
            (
                arm["name"].as_str().unwrap().to_owned(),
                arm_from_json(arm),
                arm["reference_cases"].as_array().unwrap().clone(),
            )
        })
        .collect()
}

fn cylinder_kind(name: &str) -> CylinderKind {
    match name {
        "offset" => CylinderKind::Offset,
        "joint" => CylinderKind::Joint,
        "link_length" => CylinderKind::LinkLength,
        other => panic!("unknown cylinder kind {other:?}"),
    }
}

const CASE_KEYS: &[&str] = &[
    "q",
    "tool_point",
    "expected_tool_point_manipulator_frame",
    "expected_frame_n_origin_manipulator_frame",
    "expected_frame_n_rotation_manipulator_frame",
    "expected_joint_frame_origins_manipulator_frame",
    "expected_bounding_cylinder_axes_manipulator_frame",
    "expected_tool_point_vehicle_frame",
    // Provenance of the reference values, not expectations about ours.
    "max_abs_diff_vs_rtb_std_dh",
    "max_abs_diff_vs_rtb_mdh",
];

/// Checks one reference case against `pose`; returns how many cylinder lists it checked.
fn check_reference_case(spec: &ArmSpec, case: &Value, pose: &ArmPose, what: &str) -> usize {
    let n = spec.joint_count();
    let tool = vec3(&case["tool_point"]).to_array();
    let q = numbers(&case["q"]);

    let expected_tool = vec3(&case["expected_tool_point_manipulator_frame"]);
    assert_close(
        pose.tool_point_manipulator,
        expected_tool,
        REFERENCE_TOLERANCE,
        &format!("{what}: tool point"),
    );
    assert_close(
        pose.end_effector.translation,
        vec3(&case["expected_frame_n_origin_manipulator_frame"]),
        REFERENCE_TOLERANCE,
        &format!("{what}: frame {n} origin"),
    );
    assert_eq!(pose.frames.len(), n, "{what}: one frame per joint");
    assert_eq!(pose.frames[n - 1], pose.end_effector, "{what}: last frame");
    let rows = case["expected_frame_n_rotation_manipulator_frame"]
        .as_array()
        .unwrap();
    let expected_rotation =
        DMat3::from_cols(vec3(&rows[0]), vec3(&rows[1]), vec3(&rows[2])).transpose();
    assert_rotation_close(
        pose.end_effector.matrix3,
        expected_rotation,
        REFERENCE_TOLERANCE,
        &format!("{what}: frame {n} rotation"),
    );

    // The fast paths against the same reference.
    assert_close(
        tool_point(spec, &q, tool).unwrap(),
        expected_tool,
        REFERENCE_TOLERANCE,
        &format!("{what}: tool_point()"),
    );
    let (position, quaternion) = end_effector_pose(spec, &q, tool).unwrap();
    assert_close(
        position,
        expected_tool,
        REFERENCE_TOLERANCE,
        &format!("{what}: end_effector_pose() position"),
    );
    assert_rotation_close(
        quaternion_matrix(quaternion),
        expected_rotation,
        REFERENCE_TOLERANCE,
        &format!("{what}: end_effector_pose() orientation"),
    );

    // Vehicle frame: the file's own mount through kinematics.md §5, written out independently.
    let mount = spec.mount_or_identity();
    let expected_vehicle = DVec3::from_array(mount.position)
        + rotation_as_kinematics_md_writes_it(mount.orientation) * expected_tool;
    assert_close(
        pose.tool_point_vehicle,
        expected_vehicle,
        REFERENCE_TOLERANCE,
        &format!("{what}: tool point, vehicle frame"),
    );
    if let Some(v) = case.get("expected_tool_point_vehicle_frame") {
        assert_close(
            pose.tool_point_vehicle,
            vec3(v),
            REFERENCE_TOLERANCE,
            &format!("{what}: tool point, vehicle frame (file)"),
        );
    }

    if let Some(origins) = case.get("expected_joint_frame_origins_manipulator_frame") {
        let origins = origins.as_array().unwrap();
        assert_eq!(origins.len(), n, "{what}: one origin per joint");
        for (j, (frame, expected)) in pose.frames.iter().zip(origins).enumerate() {
            assert_close(
                frame.translation,
                vec3(expected),
                REFERENCE_TOLERANCE,
                &format!("{what}: frame {} origin", j + 1),
            );
        }
    }

    let Some(cylinders) = case.get("expected_bounding_cylinder_axes_manipulator_frame") else {
        return 0;
    };
    let cylinders = cylinders.as_array().unwrap();
    assert_eq!(
        pose.cylinders.len(),
        cylinders.len(),
        "{what}: cylinder count"
    );
    for (i, (got, expected)) in pose.cylinders.iter().zip(cylinders).enumerate() {
        let what = format!("{what}: cylinder {i} ({})", expected["axis"]);
        assert_eq!(
            got.joint as u64,
            expected["joint"].as_u64().unwrap(),
            "{what}: joint"
        );
        assert_eq!(
            got.kind,
            cylinder_kind(expected["kind"].as_str().unwrap()),
            "{what}: kind"
        );
        assert_close(
            got.from,
            vec3(&expected["from"]),
            REFERENCE_TOLERANCE,
            &format!("{what}: from"),
        );
        assert_close(
            got.to,
            vec3(&expected["to"]),
            REFERENCE_TOLERANCE,
            &format!("{what}: to"),
        );
        // The file publishes no radii, so none may appear.
        assert_eq!(got.radius, None, "{what}: radius");
    }
    1
}

#[test]
fn reference_arms_match_every_reference_case() {
    let mut cases = 0;
    let mut cylinder_lists = 0;
    for (name, spec, reference_cases) in reference_arms() {
        for (i, case) in reference_cases.iter().enumerate() {
            let what = format!("{name}, case {i}");
            assert_known_keys(case, CASE_KEYS, &what);
            let q = numbers(&case["q"]);
            let tool = vec3(&case["tool_point"]).to_array();
            let pose = forward(&spec, &q, tool).unwrap_or_else(|e| panic!("{what}: {e}"));
            cylinder_lists += check_reference_case(&spec, case, &pose, &what);
            cases += 1;
        }
    }
    // The file holds 4 PUMA and 2 UR5e cases, two of them with cylinders; a loader that
    // skipped some would otherwise pass vacuously.
    assert_eq!(cases, 6, "reference cases checked");
    assert_eq!(cylinder_lists, 2, "cylinder lists checked");
}

#[test]
fn reference_arms_after_a_wire_round_trip_stay_within_a_millimetre() {
    let mut cases = 0;
    for (name, spec, reference_cases) in reference_arms() {
        let received = through_the_wire(&spec);
        assert_eq!(received.joint_types(), spec.joint_types(), "{name}");
        for (i, case) in reference_cases.iter().enumerate() {
            let what = format!("{name} after the wire, case {i}");
            let q = numbers(&case["q"]);
            let tool = vec3(&case["tool_point"]).to_array();
            let pose = forward(&received, &q, tool).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_close(
                pose.tool_point_manipulator,
                vec3(&case["expected_tool_point_manipulator_frame"]),
                WIRE_TOLERANCE,
                &format!("{what}: tool point"),
            );
            assert_close(
                pose.end_effector.translation,
                vec3(&case["expected_frame_n_origin_manipulator_frame"]),
                WIRE_TOLERANCE,
                &format!("{what}: frame n origin"),
            );
            if let Some(origins) = case.get("expected_joint_frame_origins_manipulator_frame") {
                for (j, (frame, expected)) in pose
                    .frames
                    .iter()
                    .zip(origins.as_array().unwrap())
                    .enumerate()
                {
                    assert_close(
                        frame.translation,
                        vec3(expected),
                        WIRE_TOLERANCE,
                        &format!("{what}: frame {} origin", j + 1),
                    );
                }
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 6, "reference cases checked");
}

#[test]
fn ur5e_zero_pose_is_the_well_known_flange_position() {
    // kinematics.md §9.2: x = a2 + a3, y = −(d4 + d6), z = d1 − d5, straight from the table.
    let (_, ur5e, _) = reference_arms()
        .into_iter()
        .find(|(name, ..)| name.contains("UR5e"))
        .unwrap();
    let p = tool_point(&ur5e, &[0.0; 6], [0.0; 3]).unwrap();
    assert_close(
        p,
        DVec3::new(-0.425 - 0.3922, -(0.1333 + 0.0996), 0.1625 - 0.0997),
        EXACT,
        "UR5e flange at q = 0",
    );
}

// ---------------------------------------------------------------------------------------------
// telerob telemax (kinematics.md §9.3): RRPRRRR, a prismatic list element, a continuous joint.

/// The §9.3 table, with the illustrative mount t = (0.3, 0, −0.25), q = (0, 1, 0, 0).
fn telemax() -> ArmSpec {
    let limited = |joint: Joint, limit: (f64, f64), name: &str| Joint {
        min: Some(limit.0),
        max: Some(limit.1),
        name: Some(name.to_owned()),
        ..joint
    };
    let named = |joint: Joint, name: &str| Joint {
        name: Some(name.to_owned()),
        ..joint
    };
    ArmSpec {
        mount: Some(Mount {
            position: [0.3, 0.0, -0.25],
            orientation: [0.0, 1.0, 0.0, 0.0],
        }),
        joints: vec![
            limited(
                Joint::revolute(0.0, 0.0, 0.155),
                (-3.66519, 3.66519),
                "turretTurn_joint",
            ),
            limited(
                Joint::revolute(0.06, -FRAC_PI_2, 0.0),
                (-1.15192, 2.61799),
                "upperArmTilt_joint",
            ),
            named(
                Joint::prismatic(0.0, FRAC_PI_2, 0.0, 0.6205, 0.9115),
                "telescope_joint",
            ),
            limited(
                Joint::revolute(0.0, -FRAC_PI_2, 0.0),
                (-2.96706, 2.96706),
                "lowerArmTilt_joint",
            ),
            limited(
                Joint::revolute(0.0, FRAC_PI_2, 0.6286),
                (-3.66519, 3.66519),
                "lowerArmTurn_joint",
            ),
            limited(
                Joint::revolute(0.0, -FRAC_PI_2, 0.0),
                (-2.26893, 2.26893),
                "gripperTilt_joint",
            ),
            // Continuous: no limits.
            named(Joint::revolute(0.0, FRAC_PI_2, 0.109), "gripperTurn_joint"),
        ],
    }
}

/// JAUS joint values from URDF ones (kinematics.md §9.3): θ2 = q2 + π/2, S33 = q3 + 0.621.
fn telemax_jaus_q(urdf: [f64; 7]) -> [f64; 7] {
    let mut q = urdf;
    q[1] += FRAC_PI_2;
    q[2] += 0.621;
    q
}

/// The telemax URDF joints quoted in `fkie/iop_jaus_manipulator` `ManipulatorUrdfReader.cpp`
/// (kinematics.md §1 item 5): origin xyz (all rpy = 0), axis, prismatic or not.
const TELEMAX_URDF: [([f64; 3], [f64; 3], bool); 7] = [
    ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], false), // turretTurn
    ([0.06, -0.081, 0.155], [0.0, 1.0, 0.0], false), // upperArmTilt
    ([0.089, 0.0, 0.0], [1.0, 0.0, 0.0], true), // telescope
    ([0.532, 0.081, 0.0], [0.0, 1.0, 0.0], false), // lowerArmTilt
    ([0.1646, 0.0, 0.0], [1.0, 0.0, 0.0], false), // lowerArmTurn
    ([0.464, 0.0, 0.0], [0.0, 1.0, 0.0], false), // gripperTilt
    ([0.109, 0.0, 0.0], [1.0, 0.0, 0.0], false), // gripperTurn (continuous)
];

/// `manipulator_base_link` ← `gripperTurn_link` by the URDF rules, then frame 7 as §9.3 places
/// it: same origin, x7 = −`z_tip`, y7 = +`y_tip`, z7 = +`x_tip`. Shares no code with the C&D chain.
fn telemax_by_urdf(urdf_q: [f64; 7]) -> DAffine3 {
    let mut t = DAffine3::IDENTITY;
    for (&(origin, axis, prismatic), q) in TELEMAX_URDF.iter().zip(urdf_q) {
        let axis = DVec3::from_array(axis);
        t *= DAffine3::from_translation(DVec3::from_array(origin));
        t *= if prismatic {
            DAffine3::from_translation(axis * q)
        } else {
            DAffine3::from_axis_angle(axis, q)
        };
    }
    let tip_to_frame_7 = DAffine3::from_mat3(DMat3::from_cols(
        DVec3::new(0.0, 0.0, -1.0),
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
    ));
    t * tip_to_frame_7
}

/// Sum of the lengths along the stretched-out arm: a12 + S33(q = 0) + S55 + S77.
const TELEMAX_REACH: f64 = 0.06 + 0.621 + 0.6286 + 0.109;

#[test]
fn telemax_urdf_zero_pose_reaches_the_tip_kinematics_md_gives() {
    let pose = forward(&telemax(), &telemax_jaus_q([0.0; 7]), [0.0; 3]).unwrap();
    // kinematics.md §8: "The true tip is at (1.419, 0, 0.155)", printed to the millimetre.
    assert_close(
        pose.tool_point_manipulator,
        DVec3::new(1.419, 0.0, 0.155),
        0.5e-3,
        "tip, kinematics.md §8",
    );
    // Unrounded: the arm lies along x_M at the height of joint 2.
    assert_close(
        pose.tool_point_manipulator,
        DVec3::new(TELEMAX_REACH, 0.0, 0.155),
        EXACT,
        "tip, from the table",
    );
    // §9.3: x7 = −z_tip, y7 = +y_tip, z7 = +x_tip, and at URDF zero the tip link is parallel
    // to manipulator_base_link (every URDF joint origin has rpy = 0).
    let r = pose.end_effector.matrix3;
    assert_close(r.x_axis, -DVec3::Z, EXACT, "x7");
    assert_close(r.y_axis, DVec3::Y, EXACT, "y7");
    assert_close(r.z_axis, DVec3::X, EXACT, "z7");
}

#[test]
fn telemax_tool_point_in_vehicle_frame_goes_through_the_flipped_mount() {
    let pose = forward(&telemax(), &telemax_jaus_q([0.0; 7]), [0.0, 0.0, 0.05]).unwrap();
    // The tool offset lies along z7 = x_M, so the tip moves 5 cm further out.
    let tip = DVec3::new(TELEMAX_REACH + 0.05, 0.0, 0.155);
    assert_close(pose.tool_point_manipulator, tip, EXACT, "tool point");
    // 180° about vehicle x: y and z flip, then t = (0.3, 0, −0.25). Manipulator up is
    // vehicle −z (up in a z-down frame), so the tip is 0.155 m above the mount point.
    assert_close(
        pose.tool_point_vehicle,
        DVec3::new(0.3 + TELEMAX_REACH + 0.05, 0.0, -0.25 - 0.155),
        EXACT,
        "tool point, vehicle frame",
    );
    assert_close(
        pose.mount.transform_vector3(DVec3::X),
        DVec3::X,
        EXACT,
        "x_M",
    );
    assert_close(
        pose.mount.transform_vector3(DVec3::Y),
        -DVec3::Y,
        EXACT,
        "y_M",
    );
    assert_close(
        pose.mount.transform_vector3(DVec3::Z),
        -DVec3::Z,
        EXACT,
        "z_M",
    );
}

#[test]
fn telemax_survives_a_wire_round_trip_within_a_millimetre() {
    let sent = telemax();
    let received = through_the_wire(&sent);
    assert_eq!(received.joints[2].kind, JointType::Prismatic);
    assert!(received.joints[6].min.is_none() && received.joints[6].max.is_none());
    for urdf in [
        [0.0; 7],
        [0.4, -1.0, 0.2, 1.1, -2.0, 0.6, 7.0],
        [-3.0, 0.9, 0.29, -2.9, 3.5, -2.2, -20.0],
    ] {
        let q = telemax_jaus_q(urdf);
        let exact = forward(&sent, &q, [0.01, -0.02, 0.15]).unwrap();
        let wire = forward(&received, &q, [0.01, -0.02, 0.15]).unwrap();
        assert_close(
            wire.tool_point_manipulator,
            exact.tool_point_manipulator,
            WIRE_TOLERANCE,
            &format!("manipulator frame at {urdf:?}"),
        );
        assert_close(
            wire.tool_point_vehicle,
            exact.tool_point_vehicle,
            WIRE_TOLERANCE,
            &format!("vehicle frame at {urdf:?}"),
        );
    }
}

#[test]
fn telemax_cylinders_follow_the_joint_kinds() {
    use CylinderKind::{Joint as J, LinkLength as L, Offset as O};
    let q = telemax_jaus_q([0.3, -0.4, 0.1, 0.5, 0.6, -0.7, 0.8]);
    let pose = forward(&telemax(), &q, [0.0; 3]).unwrap();
    let kinds: Vec<_> = pose.cylinders.iter().map(|c| (c.joint, c.kind)).collect();
    assert_eq!(
        kinds,
        [
            (1, O),
            (2, L),
            (2, O),
            (3, L),
            (3, J),
            (4, L),
            (4, O),
            (5, L),
            (5, O),
            (6, L),
            (6, O),
            (7, L),
            (7, O),
        ]
    );
    // The telescope's cylinder covers its current extension S33 = q3, along z3.
    let telescope = pose.cylinders[4];
    assert!((telescope.length() - q[2]).abs() < EXACT);
    assert_close(
        telescope.to - telescope.from,
        q[2] * pose.frames[2].matrix3.z_axis,
        EXACT,
        "telescope axis",
    );
    // a12 = 0.06 along x1; S11 = 0.155 along z_M.
    assert!((pose.cylinders[1].length() - 0.06).abs() < EXACT);
    assert!((pose.cylinders[0].length() - 0.155).abs() < EXACT);
}

#[test]
fn telemax_gripper_turn_is_continuous_and_repeats_every_full_turn() {
    let spec = telemax();
    assert!(spec.joints[6].is_continuous());
    let urdf = [0.2, -0.3, 0.15, 0.4, -0.5, 0.6, 0.7];
    let q = telemax_jaus_q(urdf);
    let tool = [0.02, 0.03, 0.2];
    let base = forward(&spec, &q, tool).unwrap();
    for turns in [1.0, -1.0, 3.0] {
        let mut turned = q;
        turned[6] += turns * TAU;
        let other = forward(&spec, &turned, tool).unwrap();
        assert!(other.end_effector.abs_diff_eq(base.end_effector, EXACT));
        assert_close(
            other.tool_point_manipulator,
            base.tool_point_manipulator,
            EXACT,
            "tool point after full turns",
        );
    }
    // Half a turn does move an off-axis tool point, so the comparison above means something.
    let mut half = q;
    half[6] += PI;
    let moved = forward(&spec, &half, tool).unwrap().tool_point_manipulator;
    assert!(moved.distance(base.tool_point_manipulator) > 0.05);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn telemax_matches_the_urdf_chain_anywhere_in_its_limits(
        turret in -3.66519..3.66519f64,
        upper in -2.72271..FRAC_PI_3,
        telescope in -0.0005..0.2905f64,
        lower_tilt in -2.96706..2.96706f64,
        lower_turn in -3.66519..3.66519f64,
        gripper_tilt in -2.26893..2.26893f64,
        gripper_turn in -30.0..30.0f64,
        tool in prop::array::uniform3(-0.3..0.3f64),
    ) {
        let urdf = [turret, upper, telescope, lower_tilt, lower_turn, gripper_tilt, gripper_turn];
        let expected = telemax_by_urdf(urdf);
        let pose = forward(&telemax(), &telemax_jaus_q(urdf), tool).unwrap();
        prop_assert!(
            pose.end_effector.abs_diff_eq(expected, EXACT),
            "frame 7 {:?} != URDF {:?}", pose.end_effector, expected
        );
        let p = expected.transform_point3(DVec3::from_array(tool));
        prop_assert!((pose.tool_point_manipulator - p).abs().max_element() < EXACT);
    }

    #[test]
    fn telemax_telescope_moves_the_tip_along_z3_by_exactly_the_change_in_q3(
        urdf in prop::array::uniform7(-2.0..2.0f64),
        s33 in 0.6205..0.9115f64,
        delta in -0.29..0.29f64,
        tool in prop::array::uniform3(-0.3..0.3f64),
    ) {
        let spec = telemax();
        let mut q = telemax_jaus_q(urdf);
        q[2] = s33;
        let before = forward(&spec, &q, tool).unwrap();
        q[2] += delta;
        let after = forward(&spec, &q, tool).unwrap();
        let z3 = before.frames[2].matrix3.z_axis;
        let moved = after.tool_point_manipulator - before.tool_point_manipulator;
        prop_assert!((moved - delta * z3).abs().max_element() < EXACT, "{moved:?} vs {delta} z3 = {z3:?}");
        // The whole distal chain translates rigidly: no rotation changes.
        prop_assert!(after.end_effector.matrix3.abs_diff_eq(before.end_effector.matrix3, EXACT));
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

#[test]
fn wrong_joint_count_says_how_many_were_given_for_how_many_joints() {
    let (_, puma, _) = reference_arms().into_iter().next().unwrap();
    let e = forward(&puma, &[0.0; 3], [0.0; 3]).unwrap_err();
    assert_eq!(
        e,
        KinematicsError::JointCount {
            given: 3,
            expected: 6
        }
    );
    assert!(
        e.to_string()
            .starts_with("3 joint positions given for a 6-joint arm"),
        "{e}"
    );
}

#[test]
fn non_finite_tool_point_is_an_error() {
    let spec = telemax();
    let q = telemax_jaus_q([0.0; 7]);
    for tool in [[f64::NAN, 0.0, 0.0], [0.0, f64::INFINITY, 0.0]] {
        assert!(matches!(
            forward(&spec, &q, tool),
            Err(KinematicsError::NonFiniteToolPoint { .. })
        ));
        assert!(matches!(
            tool_point(&spec, &q, tool),
            Err(KinematicsError::NonFiniteToolPoint { .. })
        ));
        assert!(matches!(
            end_effector_pose(&spec, &q, tool),
            Err(KinematicsError::NonFiniteToolPoint { .. })
        ));
    }
}

#[test]
fn unusable_mount_is_an_error_and_a_missing_one_is_the_identity() {
    let mut spec = telemax();
    let q = telemax_jaus_q([0.0; 7]);
    spec.mount = Some(Mount {
        position: [0.0; 3],
        orientation: [0.0; 4],
    });
    assert!(matches!(
        forward(&spec, &q, [0.0; 3]),
        Err(KinematicsError::InvalidMount { .. })
    ));
    spec.mount = Some(Mount {
        position: [f64::NAN, 0.0, 0.0],
        orientation: [1.0, 0.0, 0.0, 0.0],
    });
    assert!(matches!(
        forward(&spec, &q, [0.0; 3]),
        Err(KinematicsError::InvalidMount { .. })
    ));
    // The manipulator-frame answers do not need the mount.
    assert!(tool_point(&spec, &q, [0.0; 3]).is_ok());
    spec.mount = None;
    let pose = forward(&spec, &q, [0.0; 3]).unwrap();
    assert_eq!(pose.mount, DAffine3::IDENTITY);
    assert_eq!(pose.tool_point_vehicle, pose.tool_point_manipulator);
}

#[test]
fn arm_without_joints_is_an_error() {
    let spec = ArmSpec {
        mount: None,
        joints: vec![],
    };
    assert_eq!(
        forward(&spec, &[], [0.0; 3]).unwrap_err(),
        KinematicsError::NoJoints
    );
    assert_eq!(
        tool_point(&spec, &[], [0.0; 3]).unwrap_err(),
        KinematicsError::NoJoints
    );
}

#[test]
fn non_finite_link_parameter_is_an_error_naming_joint_and_parameter() {
    let mut spec = telemax();
    spec.joints[4].offset = f64::NAN;
    let e = tool_point(&spec, &telemax_jaus_q([0.0; 7]), [0.0; 3]).unwrap_err();
    assert!(
        matches!(
            e,
            KinematicsError::NonFiniteParameter {
                joint: 5,
                parameter: "offset",
                ..
            }
        ),
        "{e:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Properties of any arm.

fn arb_joint() -> impl Strategy<Value = Joint> {
    (
        any::<bool>(),
        -2.0..2.0f64,
        -PI..PI,
        -2.0..2.0f64,
        -PI..PI,
        proptest::option::of(0.0..0.5f64),
        proptest::option::of(0.0..0.5f64),
    )
        .prop_map(
            |(prismatic, a, alpha, offset, angle, axis_radius, link_radius)| {
                let joint = if prismatic {
                    Joint::prismatic(a, alpha, angle, -2.0, 2.0)
                } else {
                    Joint::revolute(a, alpha, offset)
                };
                Joint {
                    axis_radius,
                    link_radius,
                    ..joint
                }
            },
        )
}

fn arb_mount() -> impl Strategy<Value = Option<Mount>> {
    proptest::option::of(
        (
            prop::array::uniform3(-5.0..5.0f64),
            prop::array::uniform4(-1.0..1.0f64),
        )
            .prop_filter("a quaternion that can be normalised", |(_, q)| {
                q.iter().map(|v| v * v).sum::<f64>() > 0.01
            })
            .prop_map(|(position, orientation)| Mount {
                position,
                orientation,
            }),
    )
}

/// An arm (joint 1's link fields zeroed, as `from_report` builds it) and joint positions for it.
fn arb_arm_and_q() -> impl Strategy<Value = (ArmSpec, Vec<f64>)> {
    (prop::collection::vec(arb_joint(), 1..=8), arb_mount()).prop_flat_map(|(mut joints, mount)| {
        joints[0].link_length = 0.0;
        joints[0].twist = 0.0;
        let q: Vec<BoxedStrategy<f64>> = joints
            .iter()
            .map(|j| match j.kind {
                JointType::Revolute => (-8.0 * PI..8.0 * PI).boxed(),
                JointType::Prismatic => (-2.0..2.0f64).boxed(),
            })
            .collect();
        (Just(ArmSpec { mount, joints }), q)
    })
}

fn tool() -> impl Strategy<Value = [f64; 3]> {
    prop::array::uniform3(-1.0..1.0f64)
}

/// The chain of kinematics.md §5 as literal products of elementary transforms.
fn chain_as_kinematics_md_writes_it(spec: &ArmSpec, q: &[f64]) -> Vec<DAffine3> {
    let tx = |v: f64| DAffine3::from_translation(DVec3::new(v, 0.0, 0.0));
    let tz = |v: f64| DAffine3::from_translation(DVec3::new(0.0, 0.0, v));
    let mut frames = Vec::new();
    let mut t = DAffine3::IDENTITY;
    for (k, (joint, &v)) in spec.joints.iter().zip(q).enumerate() {
        let (theta, s) = match joint.kind {
            JointType::Revolute => (v, joint.offset),
            JointType::Prismatic => (joint.angle, v),
        };
        if k > 0 {
            t = t * tx(joint.link_length) * DAffine3::from_rotation_x(joint.twist);
        }
        t = t * DAffine3::from_rotation_z(theta) * tz(s);
        frames.push(t);
    }
    frames
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn every_frame_equals_the_chain_of_elementary_transforms((spec, q) in arb_arm_and_q(), tool in tool()) {
        let pose = forward(&spec, &q, tool).unwrap();
        let expected = chain_as_kinematics_md_writes_it(&spec, &q);
        prop_assert_eq!(pose.frames.len(), expected.len());
        for (j, (got, want)) in pose.frames.iter().zip(&expected).enumerate() {
            prop_assert!(got.abs_diff_eq(*want, EXACT), "frame {}: {got:?} vs {want:?}", j + 1);
        }
        let tip = expected[expected.len() - 1].transform_point3(DVec3::from_array(tool));
        prop_assert!((pose.tool_point_manipulator - tip).abs().max_element() < EXACT);
    }

    #[test]
    fn revolute_joints_repeat_every_full_turn((spec, q) in arb_arm_and_q(), tool in tool(), turns in -2i32..=2) {
        let base = forward(&spec, &q, tool).unwrap();
        let turned: Vec<f64> = q
            .iter()
            .zip(&spec.joints)
            .map(|(&v, j)| match j.kind {
                JointType::Revolute => v + f64::from(turns) * TAU,
                JointType::Prismatic => v,
            })
            .collect();
        let other = forward(&spec, &turned, tool).unwrap();
        for (j, (a, b)) in base.frames.iter().zip(&other.frames).enumerate() {
            prop_assert!(a.abs_diff_eq(*b, EXACT), "frame {}: {a:?} vs {b:?}", j + 1);
        }
        prop_assert!((base.tool_point_vehicle - other.tool_point_vehicle).abs().max_element() < EXACT);
    }

    #[test]
    fn consecutive_frame_origins_are_sqrt_a2_plus_s2_apart((spec, q) in arb_arm_and_q()) {
        let pose = forward(&spec, &q, [0.0; 3]).unwrap();
        let mut previous = DVec3::ZERO;
        for (k, ((joint, &v), frame)) in spec.joints.iter().zip(&q).zip(&pose.frames).enumerate() {
            let s = match joint.kind {
                JointType::Revolute => joint.offset,
                JointType::Prismatic => v,
            };
            // No link precedes joint 1: O_1 is S11 up z_M.
            let a = if k == 0 { 0.0 } else { joint.link_length };
            let distance = frame.translation.distance(previous);
            prop_assert!(
                (distance - a.hypot(s)).abs() < EXACT,
                "joint {}: |O{} − O{}| = {distance}, a = {a}, S = {s}", k + 1, k + 1, k
            );
            previous = frame.translation;
        }
        // Frame 1 lies on z_M, turned by θ1 (revolute) or the constant angle (prismatic).
        let first = pose.frames[0];
        prop_assert!(first.translation.truncate().length() < EXACT);
        prop_assert!((first.matrix3.z_axis - DVec3::Z).abs().max_element() < EXACT);
    }

    #[test]
    fn cylinders_run_base_to_end_effector_with_the_spec_radii((spec, q) in arb_arm_and_q()) {
        let pose = forward(&spec, &q, [0.0; 3]).unwrap();
        let n = spec.joint_count();
        prop_assert_eq!(pose.cylinders.len(), 2 * n - 1);
        prop_assert_eq!(pose.cylinders[0].from, DVec3::ZERO);
        prop_assert!((pose.cylinders[2 * n - 2].to - pose.end_effector.translation).abs().max_element() < EXACT);
        for pair in pose.cylinders.windows(2) {
            prop_assert!((pair[0].to - pair[1].from).abs().max_element() < EXACT, "gap between {:?} and {:?}", pair[0], pair[1]);
        }
        for c in &pose.cylinders {
            let joint = &spec.joints[c.joint - 1];
            let v = q[c.joint - 1];
            let (length, radius, kind) = match (c.kind, joint.kind) {
                (CylinderKind::LinkLength, _) => (joint.link_length.abs(), joint.link_radius, CylinderKind::LinkLength),
                (_, JointType::Revolute) => (joint.offset.abs(), joint.axis_radius, CylinderKind::Offset),
                (_, JointType::Prismatic) => (v.abs(), joint.axis_radius, CylinderKind::Joint),
            };
            prop_assert_eq!(c.kind, kind);
            prop_assert_eq!(c.radius, radius);
            prop_assert!((c.length() - length).abs() < EXACT, "{c:?}: length {} vs {length}", c.length());
        }
        // The link cylinder of joint k+1 runs along x_k; the other along z_{k+1}.
        for k in 1..n {
            let link = pose.cylinders[2 * k - 1];
            let a = spec.joints[k].link_length;
            prop_assert!((link.to - link.from - a * pose.frames[k - 1].matrix3.x_axis).abs().max_element() < EXACT);
            let axis = pose.cylinders[2 * k];
            let along = (axis.to - axis.from).cross(pose.frames[k].matrix3.z_axis);
            prop_assert!(along.length() < EXACT);
        }
    }

    #[test]
    fn fast_paths_agree_with_forward((spec, q) in arb_arm_and_q(), tool in tool()) {
        let pose = forward(&spec, &q, tool).unwrap();
        let p = tool_point(&spec, &q, tool).unwrap();
        prop_assert!((p - pose.tool_point_manipulator).abs().max_element() < 1e-12);
        let (position, quaternion) = end_effector_pose(&spec, &q, tool).unwrap();
        prop_assert!((position - pose.tool_point_manipulator).abs().max_element() < 1e-12);
        prop_assert!(quaternion[0] >= 0.0, "d = {}", quaternion[0]);
        let norm = quaternion.iter().map(|v| v * v).sum::<f64>().sqrt();
        prop_assert!((norm - 1.0).abs() < 1e-12);
        prop_assert!(quaternion_matrix(quaternion).abs_diff_eq(pose.end_effector.matrix3, 1e-9));
        // The tool point is given in frame n.
        let expected = pose.end_effector.translation + pose.end_effector.matrix3 * DVec3::from_array(tool);
        prop_assert!((p - expected).abs().max_element() < 1e-12);
    }

    #[test]
    fn vehicle_point_is_the_normalised_mount_applied_to_the_manipulator_point(
        (spec, q) in arb_arm_and_q(),
        tool in tool(),
        scale in 0.1..10.0f64,
    ) {
        let pose = forward(&spec, &q, tool).unwrap();
        let mount = spec.mount_or_identity();
        let expected = DVec3::from_array(mount.position)
            + rotation_as_kinematics_md_writes_it(mount.orientation) * pose.tool_point_manipulator;
        prop_assert!((pose.tool_point_vehicle - expected).abs().max_element() < EXACT);
        // Any positive multiple of the quaternion is the same mount.
        let scaled = Mount { orientation: mount.orientation.map(|v| v * scale), ..mount };
        prop_assert!(mount_transform(&scaled).unwrap().abs_diff_eq(pose.mount, EXACT));
    }

    #[test]
    fn wrong_length_q_is_an_error_never_a_panic((spec, q) in arb_arm_and_q(), extra in 1usize..4, shorter in any::<bool>()) {
        let n = spec.joint_count();
        let mut wrong = q.clone();
        if shorter {
            wrong.truncate(n.saturating_sub(extra));
        } else {
            wrong.extend(std::iter::repeat_n(0.0, extra));
        }
        let expected = KinematicsError::JointCount { given: wrong.len(), expected: n };
        prop_assert_eq!(forward(&spec, &wrong, [0.0; 3]).unwrap_err(), expected.clone());
        prop_assert_eq!(tool_point(&spec, &wrong, [0.0; 3]).unwrap_err(), expected.clone());
        prop_assert_eq!(end_effector_pose(&spec, &wrong, [0.0; 3]).unwrap_err(), expected);
    }

    #[test]
    fn non_finite_q_is_an_error_naming_the_joint_never_a_panic(
        (spec, q) in arb_arm_and_q(),
        index in any::<prop::sample::Index>(),
        bad in prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
    ) {
        let mut q = q;
        let i = index.index(q.len());
        q[i] = bad;
        for e in [
            forward(&spec, &q, [0.0; 3]).unwrap_err(),
            tool_point(&spec, &q, [0.0; 3]).unwrap_err(),
            end_effector_pose(&spec, &q, [0.0; 3]).unwrap_err(),
        ] {
            let KinematicsError::NonFiniteJointPosition { joint, value } = e else {
                return Err(TestCaseError::fail(format!("{e:?}")));
            };
            prop_assert_eq!(joint, i + 1);
            prop_assert!(value.is_nan() == bad.is_nan() && (value.is_nan() || value == bad));
        }
    }
}

/// Joint positions spread across every joint's limits (±π for a continuous joint), from
/// a fixed-seed generator: the corners of the ranges and points between.
fn poses_across_limits(spec: &ArmSpec, count: usize) -> Vec<Vec<f64>> {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..count)
        .map(|k| {
            spec.joints
                .iter()
                .map(|j| {
                    let lo = j.min.unwrap_or(-std::f64::consts::PI);
                    let hi = j.max.unwrap_or(std::f64::consts::PI);
                    // Every fourth pose has each joint at one of its limits.
                    let u = if k % 4 == 0 { next().round() } else { next() };
                    lo + (hi - lo) * u
                })
                .collect()
        })
        .collect()
}

#[test]
fn no_pose_within_the_limits_leaves_the_reach() {
    for name in BUILTIN {
        let file = ArmFile::builtin(name).unwrap();
        let reach = reach(&file.spec, file.tool_point).unwrap();
        let mut farthest: f64 = 0.0;
        for q in poses_across_limits(&file.spec, 4000) {
            let pose = forward(&file.spec, &q, file.tool_point).unwrap();
            let mut points = vec![pose.tool_point_vehicle, pose.mount.translation];
            points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
            for c in &pose.cylinders {
                let r = c.radius.map_or(DEFAULT_CYLINDER_RADIUS, f64::abs);
                for end in [c.from, c.to] {
                    let d = pose.mount.transform_point3(end).distance(reach.centre) + r;
                    farthest = farthest.max(d);
                    assert!(
                        d <= reach.radius + 1e-9,
                        "{name} {q:?}: {d} > {}",
                        reach.radius
                    );
                }
            }
            for p in points {
                let d = p.distance(reach.centre);
                farthest = farthest.max(d);
                assert!(
                    d <= reach.radius + 1e-9,
                    "{name} {q:?}: {d} > {}",
                    reach.radius
                );
            }
        }
        // Conservative, yet not wildly so: the arm gets within a fifth of its bound.
        assert!(
            farthest > 0.8 * reach.radius,
            "{name}: reach {} but the farthest point only {farthest}",
            reach.radius
        );
    }
    let demo = ArmFile::demo();
    assert!(!reach(&demo.spec, demo.tool_point).unwrap().hangs);
    let puma = ArmFile::builtin("puma560").unwrap();
    assert!(reach(&puma.spec, puma.tool_point).unwrap().hangs);
}
