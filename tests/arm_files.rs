//! Arm description files: the shipped arms are valid and faithful, every rule refuses a bad
//! file with a message that names the file, the joint or preset and the key, `to_toml` round
//! trips, and no input makes the parser panic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jaus_ocu::jaus::Message;
use jaus_ocu::jaus::manipulator::ReportManipulatorSpecifications;
use jaus_ocu::jaus::wire::{Scale, scales};
use jaus_ocu::model::arm::JointType;
use jaus_ocu::model::arm::{ArmSpec, Joint, Mount};
use jaus_ocu::sim::arm_file::{ArmFile, ArmFileErrorKind, BUILTIN, Preset};
use proptest::prelude::*;

const PI: f64 = std::f64::consts::PI;

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/arms/{name}.toml"))
}

/// The message for `text`, which must be refused.
fn refusal(text: &str) -> String {
    match ArmFile::parse(text, "x.toml") {
        Ok(a) => panic!("accepted a bad file:\n{text}\nas {a:?}"),
        Err(e) => e.to_string(),
    }
}

/// An arm named "t" with the given `[[joint]]`/`[[preset]]` tables appended.
fn arm(tables: &str) -> String {
    format!("name = \"t\"\n{tables}")
}

/// A one-joint arm: joint 1 is "waist", revolute, with `extra` keys.
fn waist(extra: &str) -> String {
    arm(&format!(
        "[[joint]]\nname = \"waist\"\ntype = \"revolute\"\n{extra}\n"
    ))
}

/// A two-joint arm: "waist" (revolute, ±2 rad) then joint 2 "slide" of `kind` with `extra`.
fn two(kind: &str, extra: &str) -> String {
    arm(&format!(
        "[[joint]]\nname = \"waist\"\ntype = \"revolute\"\nmin = -2.0\nmax = 2.0\n\
         [[joint]]\nname = \"slide\"\ntype = \"{kind}\"\nlink_length = 0.1\ntwist = 0.0\n{extra}\n"
    ))
}

/// A two-joint arm (waist ±2 rad, continuous "roll") with `presets` appended.
fn with_presets(presets: &str) -> String {
    arm(&format!(
        "[[joint]]\nname = \"waist\"\ntype = \"revolute\"\nmin = -2.0\nmax = 2.0\n\
         [[joint]]\nname = \"roll\"\ntype = \"revolute\"\nlink_length = 0.0\ntwist = 0.0\n\
         {presets}"
    ))
}

// --- The shipped files --------------------------------------------------------------------

#[test]
fn shipped_arm_files_load_and_equal_the_builtins() {
    for name in BUILTIN {
        let loaded = ArmFile::load(&asset(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Some(&loaded), ArmFile::builtin(name).as_ref(), "{name}");
    }
    assert_eq!(ArmFile::demo(), ArmFile::builtin("demo").unwrap());
}

/// `a` and `b` differ by at most one LSB of `scale` (both present or both absent).
fn close(a: Option<f64>, b: Option<f64>, scale: Scale, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= scale.lsb(),
            "{what}: {a} vs {b} (LSB {})",
            scale.lsb()
        ),
        (None, None) => {}
        _ => panic!("{what}: {a:?} vs {b:?}"),
    }
}

/// The decoded specification equals the sent one within one LSB per field.
fn assert_within_one_lsb(sent: &ArmSpec, got: &ArmSpec) {
    let sm = sent.mount.map(|m| (m.position, m.orientation));
    let gm = got.mount.map(|m| (m.position, m.orientation));
    assert_eq!(sm.is_some(), gm.is_some(), "mount presence");
    if let (Some((sp, so)), Some((gp, go))) = (sm, gm) {
        for i in 0..3 {
            close(
                Some(sp[i]),
                Some(gp[i]),
                scales::POSITION_30M,
                "mount position",
            );
        }
        for i in 0..4 {
            close(
                Some(so[i]),
                Some(go[i]),
                scales::QUATERNION,
                "mount orientation",
            );
        }
    }
    assert_eq!(sent.joints.len(), got.joints.len());
    for (k, (s, g)) in sent.joints.iter().zip(&got.joints).enumerate() {
        let what = |f: &str| format!("joint {}: {f}", k + 1);
        assert_eq!(s.name, g.name, "{}", what("name"));
        assert_eq!(s.kind, g.kind, "{}", what("kind"));
        let (limit, speed) = match s.kind {
            JointType::Revolute => (scales::LIMIT_RAD, scales::MAX_SPEED_RAD),
            JointType::Prismatic => (scales::LIMIT_M, scales::MAX_SPEED_M),
        };
        let l = scales::LENGTH_U16;
        let a = scales::ANGLE_U16;
        close(
            Some(s.link_length),
            Some(g.link_length),
            l,
            &what("link_length"),
        );
        close(Some(s.twist), Some(g.twist), a, &what("twist"));
        close(Some(s.offset), Some(g.offset), l, &what("offset"));
        close(Some(s.angle), Some(g.angle), a, &what("angle"));
        close(s.min, g.min, limit, &what("min"));
        close(s.max, g.max, limit, &what("max"));
        close(s.max_speed, g.max_speed, speed, &what("max_speed"));
        close(
            s.max_effort,
            g.max_effort,
            scales::MAX_EFFORT,
            &what("max_effort"),
        );
        close(
            s.axis_radius,
            g.axis_radius,
            scales::RADIUS,
            &what("axis_radius"),
        );
        close(
            s.link_radius,
            g.link_radius,
            scales::RADIUS,
            &what("link_radius"),
        );
    }
}

/// Sends `spec` as `ReportManipulatorSpecifications` and decodes it again.
fn over_the_wire(spec: &ArmSpec) -> (usize, ArmSpec) {
    let bytes = Message::from(jaus_ocu::net::reports::spec_report(spec))
        .emit()
        .unwrap_or_else(|e| panic!("encode: {e}"));
    let report: ReportManipulatorSpecifications = match Message::parse(&bytes) {
        Ok(Message::ReportManipulatorSpecifications(r)) => *r,
        other => panic!("decoded as {other:?}"),
    };
    (bytes.len(), jaus_ocu::net::reports::arm_spec(&report))
}

#[test]
fn shipped_specifications_survive_the_wire_within_one_lsb() {
    for name in BUILTIN {
        let a = ArmFile::builtin(name).unwrap();
        let (_, decoded) = over_the_wire(&a.spec);
        assert_within_one_lsb(&a.spec, &decoded);
    }
}

#[test]
fn demo_arm_has_a_prismatic_a_continuous_joint_radii_mount_tool_and_presets() {
    let a = ArmFile::demo();
    let j = &a.spec.joints;
    assert!(j.len() == 6 || j.len() == 7, "{} joints", j.len());
    assert!(j.iter().any(|j| j.kind == JointType::Prismatic));
    assert!(j.iter().any(Joint::is_continuous));
    for (k, joint) in j.iter().enumerate() {
        assert!(joint.name.is_some(), "joint {} has no name", k + 1);
        assert!(
            joint.axis_radius.is_some(),
            "joint {} has no axis_radius",
            k + 1
        );
        assert!(
            joint.max_speed.is_some(),
            "joint {} has no max_speed",
            k + 1
        );
        assert!(
            joint.max_effort.is_some(),
            "joint {} has no max_effort",
            k + 1
        );
        if k > 0 {
            assert!(
                joint.link_radius.is_some(),
                "joint {} has no link_radius",
                k + 1
            );
        }
    }
    let m = a.spec.mount.expect("the demo arm has a mount");
    assert_ne!(m, Mount::IDENTITY);
    assert_ne!(a.tool_point, [0.0; 3]);
    assert!(a.presets.len() >= 4, "{} presets", a.presets.len());
}

// A small copy of the chain in kinematics.md §5, to check that the demo's poses look the part.

type M4 = [[f64; 4]; 4];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut o = [[0.0; 4]; 4];
    for (i, row) in o.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    o
}

fn tx(a: f64) -> M4 {
    [
        [1., 0., 0., a],
        [0., 1., 0., 0.],
        [0., 0., 1., 0.],
        [0., 0., 0., 1.],
    ]
}

fn tz(s: f64) -> M4 {
    [
        [1., 0., 0., 0.],
        [0., 1., 0., 0.],
        [0., 0., 1., s],
        [0., 0., 0., 1.],
    ]
}

fn rx(t: f64) -> M4 {
    let (s, c) = t.sin_cos();
    [
        [1., 0., 0., 0.],
        [0., c, -s, 0.],
        [0., s, c, 0.],
        [0., 0., 0., 1.],
    ]
}

fn rz(t: f64) -> M4 {
    let (s, c) = t.sin_cos();
    [
        [c, -s, 0., 0.],
        [s, c, 0., 0.],
        [0., 0., 1., 0.],
        [0., 0., 0., 1.],
    ]
}

fn mount_matrix(m: Mount) -> M4 {
    let [d, a, b, c] = m.orientation;
    let [x, y, z] = m.position;
    [
        [
            1. - 2. * (b * b + c * c),
            2. * (a * b - c * d),
            2. * (a * c + b * d),
            x,
        ],
        [
            2. * (a * b + c * d),
            1. - 2. * (a * a + c * c),
            2. * (b * c - a * d),
            y,
        ],
        [
            2. * (a * c - b * d),
            2. * (b * c + a * d),
            1. - 2. * (a * a + b * b),
            z,
        ],
        [0., 0., 0., 1.],
    ]
}

/// Tool point and the tool's z axis in the vehicle frame at joint positions `q`.
fn tool_in_vehicle(a: &ArmFile, q: &[f64]) -> ([f64; 3], [f64; 3]) {
    let mut t = mount_matrix(a.spec.mount_or_identity());
    for (j, &qj) in a.spec.joints.iter().zip(q) {
        let (theta, s) = match j.kind {
            JointType::Revolute => (qj, j.offset),
            JointType::Prismatic => (j.angle, qj),
        };
        let link = mul(
            &mul(&tx(j.link_length), &rx(j.twist)),
            &mul(&rz(theta), &tz(s)),
        );
        t = mul(&t, &link);
    }
    let [x, y, z] = a.tool_point;
    let p = [0, 1, 2].map(|i| t[i][0] * x + t[i][1] * y + t[i][2] * z + t[i][3]);
    (p, [0, 1, 2].map(|i| t[i][2]))
}

#[test]
fn fk_copy_reproduces_the_puma_reference_case() {
    let a = ArmFile::builtin("puma560").unwrap();
    let (p, _) = tool_in_vehicle(&a, &[0.3, 0.6, -1.2, 0.4, -0.7, 1.1]);
    let want = [0.633_735, 0.038_972, 1.26056];
    assert!((0..3).all(|i| (p[i] - want[i]).abs() < 1e-6), "{p:?}");
}

#[test]
fn demo_presets_are_kinematically_sensible() {
    let a = ArmFile::demo();
    let preset = |name: &str| {
        let p = a.presets.iter().find(|p| p.name == name);
        tool_in_vehicle(
            &a,
            &p.unwrap_or_else(|| panic!("no preset {name}")).positions,
        )
    };
    let mount = a.spec.mount.unwrap().position;
    // Stowed: the tool stays within half a metre of the mount, below 0.5 m (z is down).
    let (stowed, _) = preset("Stowed");
    let horizontal = (stowed[0] - mount[0]).hypot(stowed[1] - mount[1]);
    assert!(
        horizontal < 0.5 && stowed[2] > -0.5,
        "stowed tool at {stowed:?}"
    );
    // Reach forward: the tool is far ahead, and the gripper points forward.
    let (reach, reach_z) = preset("Reach forward");
    assert!(reach[0] > mount[0] + 1.5, "reach tool at {reach:?}");
    assert!(reach_z[0] > 0.95, "reach gripper axis {reach_z:?}");
    // Inspect low: near the ground in front, gripper pointing down (+z).
    let (inspect, inspect_z) = preset("Inspect low");
    assert!(
        inspect[0] > mount[0] + 0.8 && inspect[2] > -0.3,
        "inspect tool at {inspect:?}"
    );
    assert!(inspect_z[2] > 0.9, "inspect gripper axis {inspect_z:?}");
    // The presets look different: every pair of tool points is at least 0.3 m apart.
    let points: Vec<_> = a
        .presets
        .iter()
        .map(|p| tool_in_vehicle(&a, &p.positions).0)
        .collect();
    for (i, p) in points.iter().enumerate() {
        for (k, q) in points.iter().enumerate().skip(i + 1) {
            let d = (0..3).map(|n| (p[n] - q[n]).powi(2)).sum::<f64>().sqrt();
            assert!(d > 0.3, "presets {} and {} are {d} m apart", i + 1, k + 1);
        }
    }
}

fn reference_arm(index: usize) -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/reference-fk.json");
    let text = std::fs::read_to_string(path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["arms"][index].clone()
}

/// Checks `file` against arm `index` of reference-fk.json: every parameter, limit, speed,
/// effort and name equal, nothing extra, mount identity and reference q as preset "Reference".
fn assert_matches_reference(file: &str, index: usize) {
    let a = ArmFile::builtin(file).unwrap();
    let r = reference_arm(index);
    let f = |v: &serde_json::Value| v.as_f64();
    let mcs = &r["manipulator_coordinate_system"];
    let mount = a.spec.mount.expect("mount");
    assert_eq!(
        mount.position,
        [
            f(&mcs["x"]).unwrap(),
            f(&mcs["y"]).unwrap(),
            f(&mcs["z"]).unwrap()
        ]
    );
    assert_eq!(
        mount.orientation,
        ["d", "a", "b", "c"].map(|k| f(&mcs[k]).unwrap())
    );
    let first = &r["first_joint"];
    let specs = r["joint_specs"].as_array().unwrap();
    let names = r["joint_names"].as_array().unwrap();
    assert_eq!(a.spec.joints.len(), 1 + specs.len());
    let j1 = &a.spec.joints[0];
    assert_eq!(first["type"], "revolute");
    assert_eq!(j1.kind, JointType::Revolute);
    assert_eq!((j1.link_length, j1.twist), (0.0, 0.0));
    assert_eq!(Some(j1.offset), f(&first["Joint1Offset"]));
    assert_eq!(j1.min, f(&first["Joint1MinValue"]));
    assert_eq!(j1.max, f(&first["Joint1MaxValue"]));
    assert_eq!(j1.max_speed, f(&first["Joint1MaxSpeed"]));
    assert_eq!(j1.max_effort, f(&first["Joint1MaxTorque"]));
    for (k, s) in specs.iter().enumerate() {
        let j = &a.spec.joints[k + 1];
        assert_eq!(s["type"], "revolute");
        assert_eq!(j.kind, JointType::Revolute, "joint {}", k + 2);
        assert_eq!(Some(j.link_length), f(&s["LinkLength"]), "joint {}", k + 2);
        assert_eq!(Some(j.twist), f(&s["TwistAngle"]), "joint {}", k + 2);
        assert_eq!(Some(j.offset), f(&s["JointOffset"]), "joint {}", k + 2);
        assert_eq!(j.min, f(&s["MinValue"]), "joint {}", k + 2);
        assert_eq!(j.max, f(&s["MaxValue"]), "joint {}", k + 2);
        assert_eq!(j.max_speed, f(&s["MaxSpeed"]), "joint {}", k + 2);
        assert_eq!(j.max_effort, f(&s["MaxTorque"]), "joint {}", k + 2);
    }
    for (j, n) in a.spec.joints.iter().zip(names) {
        assert_eq!(j.name.as_deref(), n.as_str());
    }
    assert_eq!(a.tool_point, [0.0; 3]);
    let reference_q: Vec<f64> = r["reference_cases"][1]["q"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let preset = a.presets.iter().find(|p| p.name == "Reference").unwrap();
    assert_eq!(preset.positions, reference_q);
}

#[test]
fn puma560_file_equals_the_reference_parameters() {
    assert_matches_reference("puma560", 0);
}

#[test]
fn ur5e_file_equals_the_reference_parameters() {
    assert_matches_reference("ur5e", 1);
}

// --- Reading ------------------------------------------------------------------------------

#[test]
fn missing_file_is_refused_naming_the_path() {
    let path = std::env::temp_dir().join("jaus-ocu-no-such-arm-file.toml");
    let e = ArmFile::load(&path).unwrap_err();
    assert!(matches!(e.kind, ArmFileErrorKind::Read(_)));
    assert!(
        e.to_string()
            .starts_with(&format!("cannot read {}: ", path.display())),
        "{e}"
    );
}

#[test]
fn load_names_the_file_in_rule_errors() {
    let path = std::env::temp_dir().join(format!("jaus-ocu-arm-{}.toml", std::process::id()));
    std::fs::write(&path, waist("link_length = 0.1")).unwrap();
    let e = ArmFile::load(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(
        e.starts_with(&format!("{}: joint 1 (\"waist\"): ", path.display())),
        "{e}"
    );
}

#[test]
fn toml_syntax_error_is_prefixed_with_the_file_and_gives_line_and_column() {
    let e = refusal("name = \"t\"\n[[joint]\n");
    assert!(
        e.starts_with("x.toml: TOML parse error at line 2, column"),
        "{e}"
    );
}

#[test]
fn unknown_key_is_refused_with_its_line() {
    let e = refusal(&waist("lenght = 0.1"));
    assert!(
        e.starts_with("x.toml: TOML parse error at line 5, column 1"),
        "{e}"
    );
    assert!(e.contains("unknown field `lenght`"), "{e}");
    let e = refusal(&arm("colour = \"red\"\n[[joint]]\ntype = \"revolute\"\n"));
    assert!(e.contains("unknown field `colour`"), "{e}");
    let e = refusal(&format!(
        "{}[mount]\nposition = [0.0, 0.0, 0.0]\norientation = [1.0, 0.0, 0.0, 0.0]\nscale = 2.0\n",
        waist("")
    ));
    assert!(e.contains("unknown field `scale`"), "{e}");
}

#[test]
fn unknown_joint_type_is_refused() {
    let e = refusal(&arm("[[joint]]\ntype = \"rotary\"\n"));
    assert!(
        e.contains("unknown variant `rotary`, expected `revolute` or `prismatic`"),
        "{e}"
    );
}

// --- One test per rule --------------------------------------------------------------------

#[test]
fn link_length_on_joint_1_is_refused() {
    assert_eq!(
        refusal(&waist("link_length = 0.1")),
        "x.toml: joint 1 (\"waist\"): link_length is not allowed on joint 1 \
         (the first joint has no link before it; remove it)"
    );
}

#[test]
fn twist_on_joint_1_is_refused() {
    assert_eq!(
        refusal(&waist("twist = 0.1")),
        "x.toml: joint 1 (\"waist\"): twist is not allowed on joint 1 \
         (the first joint has no link before it; remove it)"
    );
}

#[test]
fn link_radius_on_joint_1_is_refused() {
    assert_eq!(
        refusal(&waist("link_radius = 0.1")),
        "x.toml: joint 1 (\"waist\"): link_radius is not allowed on joint 1 \
         (the first joint has no link before it; remove it)"
    );
}

#[test]
fn link_length_and_twist_are_required_on_later_joints() {
    let text = arm(
        "[[joint]]\ntype = \"revolute\"\n[[joint]]\nname = \"b\"\ntype = \"revolute\"\ntwist = 0.0\n",
    );
    assert_eq!(
        refusal(&text),
        "x.toml: joint 2 (\"b\"): link_length is required on joints 2..n (the length of the \
         link from joint 1 in m, -10..10; write 0.0 if the axes intersect)"
    );
    let text =
        arm("[[joint]]\ntype = \"revolute\"\n[[joint]]\ntype = \"revolute\"\nlink_length = 0.0\n");
    assert_eq!(
        refusal(&text),
        "x.toml: joint 2: twist is required on joints 2..n (the twist of the link from \
         joint 1 in rad, -π..π; write 0.0 if the axes are parallel)"
    );
}

#[test]
fn offset_on_a_prismatic_joint_is_refused() {
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0\nmax = 0.5\noffset = 0.1")),
        "x.toml: joint 2 (\"slide\"): offset is not allowed on a prismatic joint (its offset is \
         the joint's variable; the constant parameter of a prismatic joint is `angle`)"
    );
}

#[test]
fn angle_on_a_revolute_joint_is_refused() {
    assert_eq!(
        refusal(&two("revolute", "angle = 0.1")),
        "x.toml: joint 2 (\"slide\"): angle is not allowed on a revolute joint (its angle is \
         the joint's variable; the constant parameter of a revolute joint is `offset`)"
    );
}

#[test]
fn prismatic_joint_without_min_or_max_is_refused() {
    assert_eq!(
        refusal(&two("prismatic", "max = 0.5")),
        "x.toml: joint 2 (\"slide\"): min is required on a prismatic joint \
         (give both min and max travel in m)"
    );
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0")),
        "x.toml: joint 2 (\"slide\"): max is required on a prismatic joint \
         (give both min and max travel in m)"
    );
}

#[test]
fn revolute_joint_with_only_one_limit_is_refused() {
    assert_eq!(
        refusal(&waist("min = -1.0")),
        "x.toml: joint 1 (\"waist\"): max is missing (a revolute joint gives both min and max, \
         or neither for a continuous joint)"
    );
    assert_eq!(
        refusal(&waist("max = 1.0")),
        "x.toml: joint 1 (\"waist\"): min is missing (a revolute joint gives both min and max, \
         or neither for a continuous joint)"
    );
}

#[test]
fn min_not_below_max_is_refused() {
    assert_eq!(
        refusal(&two("prismatic", "min = 0.5\nmax = 0.2")),
        "x.toml: joint 2 (\"slide\"): min 0.5 m must be less than max 0.2 m"
    );
    assert_eq!(
        refusal(&waist("min = 1.0\nmax = 1.0")),
        "x.toml: joint 1 (\"waist\"): min 1 rad must be less than max 1 rad"
    );
}

#[test]
fn link_length_and_offset_outside_plus_minus_10_m_are_refused() {
    assert_eq!(
        refusal(&two("revolute", "").replace("link_length = 0.1", "link_length = 10.5")),
        "x.toml: joint 2 (\"slide\"): link_length 10.5 m is outside the range the wire can \
         carry (allowed -10..10 m)"
    );
    assert_eq!(
        refusal(&waist("offset = -10.01")),
        "x.toml: joint 1 (\"waist\"): offset -10.01 m is outside the range the wire can carry \
         (allowed -10..10 m)"
    );
}

#[test]
fn twist_and_angle_outside_plus_minus_pi_are_refused() {
    assert_eq!(
        refusal(&two("revolute", "").replace("twist = 0.0", "twist = 3.2")),
        "x.toml: joint 2 (\"slide\"): twist 3.2 rad is outside the range the wire can carry \
         (allowed -3.141593..3.141593 rad)"
    );
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0\nmax = 0.5\nangle = -3.2")),
        "x.toml: joint 2 (\"slide\"): angle -3.2 rad is outside the range the wire can carry \
         (allowed -3.141593..3.141593 rad)"
    );
    // ±π itself is carried.
    assert!(
        ArmFile::parse(
            &two("prismatic", &format!("min = 0.0\nmax = 0.5\nangle = {PI}")),
            "x"
        )
        .is_ok()
    );
}

#[test]
fn limits_outside_the_wire_range_are_refused() {
    assert_eq!(
        refusal(&waist("min = -26.0\nmax = 1.0")),
        "x.toml: joint 1 (\"waist\"): min -26 rad is outside the range the wire can carry \
         (allowed -25.132741..25.132741 rad)"
    );
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0\nmax = 10.5")),
        "x.toml: joint 2 (\"slide\"): max 10.5 m is outside the range the wire can carry \
         (allowed -10..10 m)"
    );
}

#[test]
fn max_speed_must_be_positive_and_within_the_wire_range() {
    assert_eq!(
        refusal(&waist("max_speed = -1.0")),
        "x.toml: joint 1 (\"waist\"): max_speed -1 rad/s must be greater than 0 \
         (allowed above 0 up to 31.415927 rad/s)"
    );
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0\nmax = 0.5\nmax_speed = 0.0")),
        "x.toml: joint 2 (\"slide\"): max_speed 0 m/s must be greater than 0 \
         (allowed above 0 up to 5 m/s)"
    );
    assert_eq!(
        refusal(&waist("max_speed = 32.0")),
        "x.toml: joint 1 (\"waist\"): max_speed 32 rad/s is outside the range the wire can \
         carry (allowed 0..31.415927 rad/s)"
    );
    assert_eq!(
        refusal(&two("prismatic", "min = 0.0\nmax = 0.5\nmax_speed = 6.0")),
        "x.toml: joint 2 (\"slide\"): max_speed 6 m/s is outside the range the wire can carry \
         (allowed 0..5 m/s)"
    );
}

#[test]
fn max_effort_must_be_non_negative_and_at_most_5000() {
    assert_eq!(
        refusal(&waist("max_effort = -5.0")),
        "x.toml: joint 1 (\"waist\"): max_effort -5 N·m must not be negative \
         (allowed 0..5000 N·m)"
    );
    assert_eq!(
        refusal(&two(
            "prismatic",
            "min = 0.0\nmax = 0.5\nmax_effort = 5001.0"
        )),
        "x.toml: joint 2 (\"slide\"): max_effort 5001 N is outside the range the wire can carry \
         (allowed 0..5000 N)"
    );
}

#[test]
fn radii_must_be_non_negative_and_at_most_10_m() {
    assert_eq!(
        refusal(&waist("axis_radius = -0.1")),
        "x.toml: joint 1 (\"waist\"): axis_radius -0.1 m must not be negative (allowed 0..10 m)"
    );
    assert_eq!(
        refusal(&two("revolute", "link_radius = 10.5")),
        "x.toml: joint 2 (\"slide\"): link_radius 10.5 m is outside the range the wire can \
         carry (allowed 0..10 m)"
    );
}

fn with_mount(position: &str, orientation: &str) -> String {
    format!(
        "{}[mount]\nposition = {position}\norientation = {orientation}\n",
        waist("")
    )
}

#[test]
fn mount_position_outside_plus_minus_30_m_is_refused() {
    assert_eq!(
        refusal(&with_mount("[0.0, 0.0, 31.0]", "[1.0, 0.0, 0.0, 0.0]")),
        "x.toml: mount: position[2] 31 m is outside the range the wire can carry \
         (allowed -30..30 m)"
    );
}

#[test]
fn mount_orientation_must_be_a_unit_quaternion() {
    assert_eq!(
        refusal(&with_mount("[0.0, 0.0, 0.0]", "[1.0, 0.0, 0.0, 0.1]")),
        "x.toml: mount: orientation is not a unit quaternion: |q| = 1.004987562112089 \
         (allowed: within 1e-6 of 1; [d, a, b, c] with d the scalar part, \
         [1.0, 0.0, 0.0, 0.0] for no rotation)"
    );
    assert_eq!(
        refusal(&with_mount("[0.0, 0.0, 0.0]", "[1.5, 0.0, 0.0, 0.0]")),
        "x.toml: mount: orientation[0] 1.5 is outside the range the wire can carry \
         (allowed -1..1)"
    );
    // Within the tolerance is accepted.
    assert!(
        ArmFile::parse(
            &with_mount("[0.0, 0.0, 0.0]", "[0.9999995, 0.0, 0.0, 0.0]"),
            "x"
        )
        .is_ok()
    );
}

#[test]
fn mount_without_orientation_is_refused() {
    let text = format!("{}[mount]\nposition = [0.0, 0.0, 0.0]\n", waist(""));
    assert!(refusal(&text).contains("missing field `orientation`"));
}

#[test]
fn tool_point_outside_plus_minus_15_m_is_refused() {
    let text = format!("{}[tool]\npoint = [0.0, -15.5, 0.0]\n", waist(""));
    assert_eq!(
        refusal(&text),
        "x.toml: tool: point[1] -15.5 m is outside the range the wire can carry \
         (allowed -15..15 m)"
    );
}

#[test]
fn non_finite_numbers_are_refused() {
    assert_eq!(
        refusal(&two("revolute", "").replace("link_length = 0.1", "link_length = nan")),
        "x.toml: joint 2 (\"slide\"): link_length is not a finite number (NaN)"
    );
    assert_eq!(
        refusal(&waist("max_effort = inf")),
        "x.toml: joint 1 (\"waist\"): max_effort is not a finite number (inf)"
    );
    assert_eq!(
        refusal(&waist("home = -inf")),
        "x.toml: joint 1 (\"waist\"): home is not a finite number (-inf)"
    );
    assert_eq!(
        refusal(&with_mount("[0.0, nan, 0.0]", "[1.0, 0.0, 0.0, 0.0]")),
        "x.toml: mount: position[1] is not a finite number (NaN)"
    );
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = 1\nname = \"p\"\npositions = [0.0, inf]\n"
        )),
        "x.toml: preset 1 (\"p\"): positions value for joint 2 (\"roll\"): is not a finite \
         number (inf)"
    );
}

#[test]
fn home_outside_the_limits_is_refused() {
    assert_eq!(
        refusal(&two("prismatic", "min = 0.3\nmax = 0.8\nhome = 0.9")),
        "x.toml: joint 2 (\"slide\"): home 0.9 m is outside the joint's limits \
         (allowed 0.3..0.8 m)"
    );
    assert_eq!(
        refusal(&waist("home = 30.0")),
        "x.toml: joint 1 (\"waist\"): home 30 rad is outside the range the wire can carry for \
         a continuous joint (allowed -25.132741..25.132741 rad)"
    );
}

#[test]
fn preset_with_the_wrong_number_of_positions_is_refused() {
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = 1\nname = \"Up\"\npositions = [0.0]\n"
        )),
        "x.toml: preset 1 (\"Up\"): positions has 1 values but the arm has 2 joints \
         (give one per joint, joint 1 first)"
    );
}

#[test]
fn preset_position_outside_the_limits_is_refused() {
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = 1\nname = \"Up\"\npositions = [2.5, 0.0]\n"
        )),
        "x.toml: preset 1 (\"Up\"): positions value for joint 1 (\"waist\"): 2.5 rad is outside \
         the joint's limits (allowed -2..2 rad)"
    );
    // A continuous joint takes any value the wire carries (±8π), and no more.
    assert!(
        ArmFile::parse(
            &with_presets("[[preset]]\nid = 1\nname = \"Up\"\npositions = [0.0, 25.0]\n"),
            "x"
        )
        .is_ok()
    );
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = 1\nname = \"Up\"\npositions = [0.0, -26.0]\n"
        )),
        "x.toml: preset 1 (\"Up\"): positions value for joint 2 (\"roll\"): -26 rad is outside \
         the range the wire can carry for a continuous joint (allowed -25.132741..25.132741 rad)"
    );
}

#[test]
fn duplicate_preset_ids_are_refused() {
    let text = with_presets(
        "[[preset]]\nid = 4\nname = \"A\"\npositions = [0.0, 0.0]\n\
         [[preset]]\nid = 4\nname = \"B\"\npositions = [0.0, 0.0]\n",
    );
    assert_eq!(
        refusal(&text),
        "x.toml: preset 2 (\"B\"): id 4 is already used by preset 1 (\"A\") \
         (preset IDs must be unique)"
    );
}

#[test]
fn duplicate_preset_names_are_refused() {
    let text = with_presets(
        "[[preset]]\nid = 1\nname = \"A\"\npositions = [0.0, 0.0]\n\
         [[preset]]\nid = 2\nname = \"A\"\npositions = [0.0, 0.0]\n",
    );
    assert_eq!(
        refusal(&text),
        "x.toml: preset 2 (\"A\"): name \"A\" is already used by preset 1 (id 1) \
         (preset names must be unique)"
    );
}

#[test]
fn preset_id_255_is_reserved_and_ids_must_fit_a_byte() {
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = 255\nname = \"A\"\npositions = [0.0, 0.0]\n"
        )),
        "x.toml: preset 1 (\"A\"): id 255 is reserved (it means \"no pose\" on the wire; \
         allowed 0..254)"
    );
    assert_eq!(
        refusal(&with_presets(
            "[[preset]]\nid = -1\nname = \"A\"\npositions = [0.0, 0.0]\n"
        )),
        "x.toml: preset 1 (\"A\"): id -1 is out of range (allowed 0..254)"
    );
    assert!(
        ArmFile::parse(
            &with_presets("[[preset]]\nid = 254\nname = \"A\"\npositions = [0.0, 0.0]\n"),
            "x"
        )
        .is_ok()
    );
}

#[test]
fn arm_without_joints_is_refused() {
    assert_eq!(
        refusal(&arm("")),
        "x.toml: the arm has no joints (add at least one [[joint]] table)"
    );
}

/// `n` joints: joint 1 revolute, then alternately prismatic and revolute, every optional
/// field given and each name `name_len` bytes long.
fn many_joints(n: usize, name_len: usize) -> String {
    let mut text = String::from(
        "name = \"long\"\n[mount]\nposition = [0.1, 0.2, -0.3]\norientation = [0.0, 1.0, 0.0, 0.0]\n",
    );
    for k in 1..=n {
        let name = format!("{k:03}{}", "j".repeat(name_len.saturating_sub(3)));
        let _ = writeln!(text, "[[joint]]\nname = \"{name}\"");
        if k == 1 {
            text += "type = \"revolute\"\noffset = 0.2\nmin = -3.0\nmax = 3.0\n";
        } else if k % 2 == 0 {
            text += "type = \"prismatic\"\nlink_length = 0.01\ntwist = 1.5\nangle = 0.1\nmin = 0.0\nmax = 0.5\nlink_radius = 0.02\n";
        } else {
            text += "type = \"revolute\"\nlink_length = 0.02\ntwist = -1.5\noffset = 0.03\nmin = -1.0\nmax = 1.0\nlink_radius = 0.02\n";
        }
        text += "max_speed = 0.5\nmax_effort = 100.0\naxis_radius = 0.03\n";
    }
    text
}

#[test]
fn a_255_joint_arm_parses_and_needs_a_multi_packet_specification() {
    let a = ArmFile::parse(&many_joints(255, 200), "long.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.spec.joints.len(), 255);
    let (len, decoded) = over_the_wire(&a.spec);
    assert!(len > 4079, "encoded specification is only {len} bytes");
    assert_within_one_lsb(&a.spec, &decoded);
}

#[test]
fn more_than_255_joints_are_refused() {
    assert_eq!(
        refusal(&many_joints(256, 3)),
        "x.toml: the arm has 256 joints (at most 255 fit in ReportManipulatorSpecifications)"
    );
}

#[test]
fn joint_name_longer_than_255_bytes_is_refused() {
    let text = arm(&format!(
        "[[joint]]\nname = \"{}\"\ntype = \"revolute\"\n",
        "n".repeat(256)
    ));
    let e = refusal(&text);
    assert!(e.starts_with("x.toml: joint 1 (\"nnn"), "{e}");
    assert!(
        e.ends_with("\"): name is 256 bytes long (allowed at most 255 bytes in JointNamesList)"),
        "{e}"
    );
}

#[test]
fn unnamed_joint_is_named_by_number_only() {
    let text = arm("[[joint]]\ntype = \"revolute\"\nlink_length = 0.1\n");
    assert!(refusal(&text).starts_with("x.toml: joint 1: link_length is not allowed"));
}

#[test]
fn rule_errors_carry_place_and_field_separately() {
    let e = ArmFile::parse(&waist("twist = 0.1"), "x.toml").unwrap_err();
    assert_eq!(e.file, "x.toml");
    match e.kind {
        ArmFileErrorKind::Invalid { place, field, .. } => {
            assert_eq!(place.as_deref(), Some("joint 1 (\"waist\")"));
            assert_eq!(field.as_deref(), Some("twist"));
        }
        other => panic!("{other:?}"),
    }
}

// --- Properties ---------------------------------------------------------------------------

fn name_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..12).prop_map(String::from_iter)
}

/// A value in `lo..=hi` at fraction `t`.
fn lerp(lo: f64, hi: f64, t: f64) -> f64 {
    (lo + t * (hi - lo)).clamp(lo, hi)
}

fn ordered(lo: f64, hi: f64) -> impl Strategy<Value = (f64, f64)> {
    (lo..=hi, lo..=hi)
        .prop_filter("distinct", |(a, b)| a != b)
        .prop_map(|(a, b)| (a.min(b), a.max(b)))
}

fn joint_strategy(first: bool) -> impl Strategy<Value = (Joint, f64)> {
    let kind = prop_oneof![Just(JointType::Revolute), Just(JointType::Prismatic)];
    (
        kind,
        prop::option::of(name_strategy()),
        (-10.0..=10.0f64, -PI..=PI, -10.0..=10.0f64, -PI..=PI),
        (
            prop::option::of(ordered(-8.0 * PI, 8.0 * PI)),
            ordered(-10.0, 10.0),
        ),
        (
            prop::option::of(1e-6..=1.0f64),
            prop::option::of(0.0..=5000.0f64),
        ),
        (
            prop::option::of(0.0..=10.0f64),
            prop::option::of(0.0..=10.0f64),
        ),
        0.0..=1.0f64,
    )
        .prop_map(
            move |(kind, name, (a, alpha, s, theta), (rl, pl), (sp, ef), (ar, lr), t)| {
                let (min, max, speed) = match kind {
                    JointType::Revolute => {
                        (rl.map(|l| l.0), rl.map(|l| l.1), sp.map(|v| v * 10.0 * PI))
                    }
                    JointType::Prismatic => (Some(pl.0), Some(pl.1), sp.map(|v| v * 5.0)),
                };
                let revolute = kind == JointType::Revolute;
                let joint = Joint {
                    name,
                    kind,
                    link_length: if first { 0.0 } else { a },
                    twist: if first { 0.0 } else { alpha },
                    offset: if revolute { s } else { 0.0 },
                    angle: if revolute { 0.0 } else { theta },
                    min,
                    max,
                    max_speed: speed,
                    max_effort: ef,
                    axis_radius: ar,
                    link_radius: if first { None } else { lr },
                };
                let home = position_at(&joint, t);
                (joint, home)
            },
        )
}

/// A position `joint` can take, at fraction `t` of its range.
fn position_at(joint: &Joint, t: f64) -> f64 {
    match (joint.min, joint.max) {
        (Some(lo), Some(hi)) => lerp(lo, hi, t),
        _ => lerp(-8.0 * PI, 8.0 * PI, t),
    }
}

fn mount_strategy() -> impl Strategy<Value = Mount> {
    (
        prop::array::uniform3(-30.0..=30.0f64),
        prop::array::uniform4(-1.0..=1.0f64),
    )
        .prop_filter("quaternion not near zero", |(_, q)| {
            q.iter().map(|c| c * c).sum::<f64>() > 0.01
        })
        .prop_map(|(position, q)| {
            let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
            Mount {
                position,
                orientation: q.map(|c| (c / n).clamp(-1.0, 1.0)),
            }
        })
}

fn arm_file_strategy() -> impl Strategy<Value = ArmFile> {
    (
        joint_strategy(true),
        prop::collection::vec(joint_strategy(false), 0..7),
        name_strategy(),
        prop::option::of(mount_strategy()),
        prop::array::uniform3(-15.0..=15.0f64),
        prop::sample::subsequence((0u8..255).collect::<Vec<_>>(), 0..5),
        prop::collection::vec((name_strategy(), prop::collection::vec(0.0..=1.0f64, 8)), 5),
    )
        .prop_map(|(j1, rest, name, mount, tool_point, ids, preset_data)| {
            let (joints, home): (Vec<Joint>, Vec<f64>) = std::iter::once(j1).chain(rest).unzip();
            let presets = ids
                .into_iter()
                .zip(preset_data)
                .enumerate()
                .map(|(i, (id, (pname, ts)))| Preset {
                    id,
                    // Unique, whatever the random part is.
                    name: format!("{pname}#{i}"),
                    positions: joints
                        .iter()
                        .zip(&ts)
                        .map(|(j, &t)| position_at(j, t))
                        .collect(),
                })
                .collect();
            ArmFile {
                name,
                spec: ArmSpec { mount, joints },
                tool_point,
                home,
                presets,
            }
        })
}

/// A TOML value for a fuzzed document: numbers of every kind, strings, arrays, booleans.
fn toml_value() -> impl Strategy<Value = String> {
    let float = any::<f64>().prop_map(|v| {
        if v.is_nan() {
            "nan".to_owned()
        } else if v.is_infinite() {
            if v > 0.0 {
                "inf".to_owned()
            } else {
                "-inf".to_owned()
            }
        } else {
            format!("{v:?}")
        }
    });
    let small = (-30.0..30.0f64).prop_map(|v| format!("{v:?}"));
    let leaf = prop_oneof![
        float,
        small.clone(),
        any::<i64>().prop_map(|v| v.to_string()),
        (0i64..300).prop_map(|v| v.to_string()),
        Just("\"revolute\"".to_owned()),
        Just("\"prismatic\"".to_owned()),
        name_strategy().prop_map(|s| format!("{s:?}")),
        Just("true".to_owned()),
    ];
    prop_oneof![
        3 => leaf,
        1 => prop::collection::vec(small, 0..9).prop_map(|v| format!("[{}]", v.join(", "))),
    ]
}

fn toml_line() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "name",
        "type",
        "link_length",
        "twist",
        "offset",
        "angle",
        "min",
        "max",
        "max_speed",
        "max_effort",
        "axis_radius",
        "link_radius",
        "home",
        "id",
        "positions",
        "position",
        "orientation",
        "point",
        "bogus",
    ]);
    let header = prop::sample::select(vec![
        "[[joint]]",
        "[[preset]]",
        "[mount]",
        "[tool]",
        "[joint]",
        "[[mount]]",
        "[[",
        "=",
    ]);
    prop_oneof![
        4 => (key, toml_value()).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => header.prop_map(str::to_owned),
    ]
}

/// One edit of a document's lines.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(prop::sample::Index),
    Insert(prop::sample::Index, String),
    /// Keeps the key, replaces the value.
    Revalue(prop::sample::Index, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
        (any::<prop::sample::Index>(), toml_line()).prop_map(|(i, l)| Mutation::Insert(i, l)),
        (any::<prop::sample::Index>(), toml_value()).prop_map(|(i, v)| Mutation::Revalue(i, v)),
    ]
}

/// A valid arm file's text with a few random edits: sometimes still valid, often not.
fn mutated_document() -> impl Strategy<Value = String> {
    (arm_file_strategy(), prop::collection::vec(mutation(), 0..4)).prop_map(|(a, edits)| {
        let mut lines: Vec<String> = a.to_toml().lines().map(str::to_owned).collect();
        for m in edits {
            match m {
                Mutation::Delete(i) if !lines.is_empty() => {
                    lines.remove(i.index(lines.len()));
                }
                Mutation::Insert(i, l) => {
                    let at = i.index(lines.len() + 1);
                    lines.insert(at, l);
                }
                Mutation::Revalue(i, v) if !lines.is_empty() => {
                    let at = i.index(lines.len());
                    if let Some((key, _)) = lines[at].split_once(" = ") {
                        lines[at] = format!("{key} = {v}");
                    }
                }
                _ => {}
            }
        }
        lines.join("\n")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn valid_arm_files_round_trip_through_to_toml(a in arm_file_strategy()) {
        let text = a.to_toml();
        let back = ArmFile::parse(&text, "gen.toml");
        prop_assert_eq!(back.as_ref(), Ok(&a), "{}", text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = ArmFile::parse(&String::from_utf8_lossy(&bytes), "fuzz.toml");
    }

    #[test]
    fn random_toml_documents_never_panic_and_accepted_ones_round_trip(
        lines in prop::collection::vec(toml_line(), 0..40),
    ) {
        let text = format!("name = \"fuzz\"\n{}\n", lines.join("\n"));
        if let Ok(a) = ArmFile::parse(&text, "fuzz.toml") {
            prop_assert_eq!(ArmFile::parse(&a.to_toml(), "again.toml"), Ok(a));
        }
    }

    #[test]
    fn mutated_arm_files_never_panic_and_accepted_ones_round_trip(text in mutated_document()) {
        if let Ok(a) = ArmFile::parse(&text, "fuzz.toml") {
            prop_assert_eq!(ArmFile::parse(&a.to_toml(), "again.toml"), Ok(a));
        }
    }
}

#[test]
fn mutated_documents_are_sometimes_accepted_and_sometimes_refused() {
    // Guards the fuzz test above against exercising only one side of the parser.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = mutated_document();
    let accepted = (0..300)
        .filter(|_| {
            let text = strategy.new_tree(&mut runner).unwrap().current();
            ArmFile::parse(&text, "fuzz.toml").is_ok()
        })
        .count();
    assert!((30..270).contains(&accepted), "{accepted} of 300 accepted");
}
