//! Clearance (issue 45): the gap against brute force, allowed pairs from presets and files,
//! first-seen contact, the jog guard's scaling and its never-closing-inside-the-margin rule.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::sync::Arc;

use glam::{DAffine3, DQuat, DVec3};
use jaus_ocu::model::arm::{ArmSpec, Mount};
use jaus_ocu::model::clearance::geometry::{Capsule, OrientedBox, capsule_box};
use jaus_ocu::model::clearance::guard::JogGuard;
use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::{ArmInput, PairKey, Part, arm_bodies, gaps};
use jaus_ocu::model::clearance::{
    AllowSource, ArmFacts, Clearance, Settings, Zone, joint_name, limits,
};
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::jog::{
    Deflection, Frame, Gates, Input, JogController, JogSettings, Motion, MotionGuard, NoGuard,
    Source,
};
use jaus_ocu::model::update::PresetInfo;
use jaus_ocu::sim::arm_file::ArmFile;
use proptest::prelude::*;

const ARM: ComponentId = ComponentId::new(126, 1, 10);
const OTHER: ComponentId = ComponentId::new(126, 1, 11);
const PERIOD: f64 = 0.05;
const BRAKE_S: f64 = 0.25;

fn demo() -> (ArmFile, Vec<PresetInfo>) {
    let f = ArmFile::builtin("demo").unwrap();
    let presets = f.preset_infos();
    (f, presets)
}

fn preset(f: &ArmFile, name: &str) -> Vec<f64> {
    f.presets
        .iter()
        .find(|p| p.name == name)
        .unwrap()
        .positions
        .clone()
}

fn tracker() -> Clearance {
    Clearance::new(Settings::default(), Arc::new(VehicleGeometry::demo()))
}

fn see(c: &mut Clearance, spec: &ArmSpec, q: &[f64], presets: &[PresetInfo]) {
    c.update(&[ArmFacts {
        input: ArmInput {
            id: ARM,
            spec,
            positions: q,
        },
        presets,
    }]);
}

fn guard<'a>(c: &'a Clearance, spec: &'a ArmSpec, scale: f64) -> JogGuard<'a> {
    JogGuard {
        clearance: c,
        arm: ARM,
        spec,
        tool_point: [0.0, 0.0, 0.15],
        others: Vec::new(),
        decel: spec
            .joints
            .iter()
            .map(|j| j.max_speed.unwrap() * scale / BRAKE_S)
            .collect(),
        period: PERIOD,
        never: c.never_checked(),
    }
}

fn random_pose(spec: &ArmSpec, u: &[f64]) -> Vec<f64> {
    spec.joints
        .iter()
        .zip(u)
        .map(|(j, u)| {
            let (lo, hi) = (
                j.min.unwrap_or(-std::f64::consts::PI),
                j.max.unwrap_or(std::f64::consts::PI),
            );
            lo + (hi - lo) * u
        })
        .collect()
}

fn brute_axis(a: &Capsule, b: &Capsule, n: usize) -> f64 {
    let mut best = f64::INFINITY;
    for i in 0..n {
        let p = a.from.lerp(a.to, i as f64 / (n - 1) as f64);
        for k in 0..n {
            let q = b.from.lerp(b.to, k as f64 / (n - 1) as f64);
            best = best.min(p.distance(q));
        }
    }
    best - a.radius - b.radius
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every capsule pair's closed-form gap against the smallest distance between points
    /// sampled on the two cylinders' axes, for random poses of two demo arms.
    #[test]
    fn the_gap_matches_brute_force_sampling(
        u in proptest::collection::vec(0.0..1.0f64, 14),
    ) {
        let (f, _) = demo();
        let mut other = f.spec.clone();
        other.mount = Some(Mount::at([0.35, 0.8, -0.25], 0.5));
        let qa = random_pose(&f.spec, &u[..7]);
        let qb = random_pose(&other, &u[7..]);
        let arms = [
            ArmInput { id: ARM, spec: &f.spec, positions: &qa },
            ArmInput { id: OTHER, spec: &other, positions: &qb },
        ];
        let bodies: Vec<_> = arms.iter().flat_map(|a| arm_bodies(a).unwrap()).collect();
        let capsule = |p: &Part| bodies.iter().find(|b| b.part == *p).unwrap().capsule.unwrap();
        let n = 120;
        let pairs = gaps(&arms, &VehicleGeometry::default(), |_| true);
        prop_assert!(pairs.len() > 100);
        for g in pairs {
            let (a, b) = (capsule(&g.a), capsule(&g.b));
            let brute = brute_axis(&a, &b, n);
            let step = (a.from.distance(a.to) + b.from.distance(b.to)) / (n - 1) as f64;
            prop_assert!(g.contact.gap <= brute + 1e-9, "{g:?} brute {brute}");
            prop_assert!(brute - g.contact.gap <= step / 2.0 + 1e-9, "{g:?} brute {brute}");
            let d = g.contact.on_a.distance(g.contact.on_b) - a.radius - b.radius;
            prop_assert!((d - g.contact.gap).abs() < 1e-9);
        }
    }

    /// A capsule outside a box: the gap against points sampled on the box's faces.
    #[test]
    fn the_box_gap_matches_brute_force_sampling(
        c in proptest::array::uniform3(-0.3..0.3f64),
        half in proptest::array::uniform3(0.05..0.4f64),
        yaw in -3.0..3.0f64,
        from in proptest::array::uniform3(-1.5..1.5f64),
        to in proptest::array::uniform3(-1.5..1.5f64),
    ) {
        let b = OrientedBox {
            pose: DAffine3::from_rotation_translation(DQuat::from_rotation_z(yaw), DVec3::from_array(c)),
            half: DVec3::from_array(half),
        };
        let a = Capsule { from: DVec3::from_array(from), to: DVec3::from_array(to), radius: 0.05 };
        let got = capsule_box(&a, &b);
        let n = 40;
        let mut surface = Vec::new();
        for axis in 0..3 {
            for sign in [-1.0, 1.0] {
                for i in 0..n {
                    for k in 0..n {
                        let (s, t) = (i as f64 / (n - 1) as f64 * 2.0 - 1.0, k as f64 / (n - 1) as f64 * 2.0 - 1.0);
                        let mut p = DVec3::ZERO;
                        p[axis] = sign * half[axis];
                        p[(axis + 1) % 3] = s * half[(axis + 1) % 3];
                        p[(axis + 2) % 3] = t * half[(axis + 2) % 3];
                        surface.push(b.pose.transform_point3(p));
                    }
                }
            }
        }
        let m = 200;
        let axis_points: Vec<DVec3> = (0..m).map(|i| a.from.lerp(a.to, i as f64 / (m - 1) as f64)).collect();
        let inside = axis_points.iter().any(|p| {
            let l = b.pose.inverse().transform_point3(*p);
            l.abs().cmple(DVec3::from_array(half)).all()
        });
        prop_assume!(!inside);
        let brute = axis_points
            .iter()
            .flat_map(|p| surface.iter().map(move |s| p.distance(*s)))
            .fold(f64::INFINITY, f64::min) - a.radius;
        let cell = 2.0 * DVec3::from_array(half).max_element() / (n - 1) as f64;
        let step = a.from.distance(a.to) / (m - 1) as f64;
        prop_assert!(got.gap <= brute + 1e-6, "{got:?} brute {brute}");
        prop_assert!(brute - got.gap <= cell + step / 2.0 + 1e-6, "{got:?} brute {brute}");
    }
}

#[test]
fn allowed_pairs_come_from_the_presets_and_the_vehicle_file() {
    let (f, presets) = demo();
    let mut c = tracker();
    see(&mut c, &f.spec, &preset(&f, "Deploy"), &presets);
    let names = |_: ComponentId, j: usize| joint_name(&f.spec, j);
    let allowed: Vec<(String, Option<f64>, AllowSource)> = c
        .allowed()
        .into_iter()
        .map(|(k, a)| {
            (
                c.pair_words(Some(ARM), &k.0, &k.1, names),
                a.depth,
                a.source,
            )
        })
        .collect();
    let find = |w: &str| {
        allowed
            .iter()
            .find(|(p, _, _)| p == w)
            .unwrap_or_else(|| panic!("{w} in {allowed:#?}"))
    };
    let (_, depth, source) = find("turret (joint 1) and gripper_roll (joint 7)");
    assert!((depth.unwrap() - 0.038).abs() < 0.001, "{depth:?}");
    assert_eq!(
        *source,
        AllowSource::Preset {
            name: "Stowed".into()
        }
    );
    let (_, depth, source) = find("turret (joint 1) and chassis");
    assert_eq!(*depth, Some(0.125));
    assert!(matches!(source, AllowSource::File { .. }));
    // The wrist and the turret are apart in every preset: never allowed.
    assert!(
        allowed
            .iter()
            .all(|(p, _, _)| p != "turret (joint 1) and wrist_roll (joint 5)")
    );
    // A file pair with no depth is never checked.
    let text = format!(
        "{}\n[[allow]]\na = \"joint 1\"\nb = \"joint 5\"\nwhy = \"test\"\n",
        include_str!("../assets/vehicles/demo.toml")
    );
    let v = VehicleGeometry::parse(&text, "t").unwrap();
    let mut c2 = Clearance::new(Settings::default(), Arc::new(v));
    see(&mut c2, &f.spec, &preset(&f, "Deploy"), &presets);
    let turret_wrist = |c: &Clearance| {
        c.checked().iter().any(|x| {
            matches!(
                (x.gap.a, x.gap.b),
                (
                    Part::Cylinder {
                        joint: 1,
                        link: false,
                        ..
                    },
                    Part::Cylinder {
                        joint: 5,
                        link: false,
                        ..
                    }
                )
            )
        })
    };
    assert!(turret_wrist(&c) && !turret_wrist(&c2));
    // In every preset, no pair is in contact beyond what is allowed.
    for p in &f.presets {
        see(&mut c, &f.spec, &p.positions, &presets);
        assert!(
            c.checked().iter().all(|x| x.zone != Zone::Contact),
            "{}",
            p.name
        );
    }
}

/// Stowed with the telescope out by 121 mm: the wrist 43 mm inside the turret (issue 45).
fn wrist_in_turret(f: &ArmFile) -> Vec<f64> {
    let mut q = preset(f, "Stowed");
    q[3] += 0.121;
    q
}

#[test]
fn an_arm_first_seen_in_contact_can_only_open_the_gap() {
    let (f, presets) = demo();
    let mut c = tracker();
    let q = wrist_in_turret(&f);
    see(&mut c, &f.spec, &q, &presets);
    let names = |_: ComponentId, j: usize| joint_name(&f.spec, j);
    let (key, a) = c
        .allowed()
        .into_iter()
        .find(|(k, a)| {
            a.source == AllowSource::FirstSeen
                && c.pair_words(Some(ARM), &k.0, &k.1, names)
                    == "turret (joint 1) and wrist_roll (joint 5)"
        })
        .expect("the wrist in the turret, a first-seen contact");
    let first = a.depth.unwrap();
    assert!(first > 0.02, "{first}");
    let g = guard(&c, &f.spec, 0.2);
    let closing = g.find(&q, &[0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0]);
    assert_eq!(closing.scale, 0.0, "{closing:?}");
    assert!(g.words(&closing).unwrap().contains("turret (joint 1)"));
    let opening = g.find(&q, &[0.0, 0.0, 0.0, -0.02, 0.0, 0.0, 0.0]);
    assert_eq!(opening.scale, 1.0, "{opening:?}");
    // Opened by 10 mm: the allowance follows it and never grows back.
    let mut q2 = q.clone();
    q2[3] -= 0.01;
    see(&mut c, &f.spec, &q2, &presets);
    let now = c
        .allowed()
        .into_iter()
        .find(|(k, _)| *k == key)
        .unwrap()
        .1
        .depth
        .unwrap();
    assert!(now < first - 0.001, "{now} vs {first}");
    see(&mut c, &f.spec, &q, &presets);
    let back = c
        .allowed()
        .into_iter()
        .find(|(k, _)| *k == key)
        .unwrap()
        .1
        .depth
        .unwrap();
    assert!((back - now).abs() < 1e-9);
    assert!(
        c.checked()
            .iter()
            .any(|x| PairKey::new(x.gap.a, x.gap.b) == key && x.zone == Zone::Contact)
    );
}

fn joint_input(n: usize, joint: usize, amount: f64, at: f64) -> Input {
    Input {
        at,
        deflection: Deflection::joint(n, joint, amount),
    }
}

/// The arm follows each command for one period, and after the last it runs on by its stop
/// distance: every gap is measured along the way.
#[test]
fn a_jog_towards_the_ground_is_slowed_in_the_band_and_stopped_at_the_margin() {
    let (f, presets) = demo();
    let mut c = tracker();
    let spec = &f.spec;
    let mut q = preset(&f, "Inspect low");
    see(&mut c, spec, &q, &presets);
    let settings = JogSettings {
        speed_scale: 0.5,
        ..JogSettings::default()
    };
    let mut jog = JogController::new(settings);
    let mut guarded_scales = Vec::new();
    let mut stopped = None;
    for tick in 0..2000 {
        let now = tick as f64 * PERIOD;
        see(&mut c, spec, &q, &presets);
        let g = guard(&c, spec, 0.5);
        // Shoulder down: the gripper towards the ground.
        let input = joint_input(7, 1, -1.0, now);
        let free = JogController::new(settings)
            .tick(now, &input, &Gates::all_pass(Source::Keys), spec, &q)
            .unwrap();
        let out = jog.tick_guarded(now, &input, &Gates::all_pass(Source::Keys), spec, &q, &g);
        let Some(out) = out else { continue };
        let (Motion::Joints(v), Motion::Joints(vf)) = (&out.motion, &free.motion) else {
            panic!()
        };
        if out.stop {
            stopped = Some(jog.guard_words().unwrap().to_owned());
            break;
        }
        let scale = v[1] / vf[1];
        guarded_scales.push(scale);
        // The command is the free one times the guard's scale: nothing else.
        let expected = g.limit(&q, &free.motion).scale;
        assert!((scale - expected).abs() < 1e-9, "{scale} vs {expected}");
        for (qi, vi) in q.iter_mut().zip(v) {
            *qi += vi * PERIOD;
        }
    }
    let words = stopped.expect("the jog stopped");
    assert!(words.starts_with("stopped"), "{words}");
    assert!(
        guarded_scales.iter().any(|s| *s < 0.999 && *s > 0.0),
        "never slowed: {guarded_scales:?}"
    );
    // After the stop the arm runs on by at most its stop distance: still clear.
    let g = guard(&c, spec, 0.5);
    let v = [
        0.0,
        -spec.joints[1].max_speed.unwrap() * 0.5 * guarded_scales.last().unwrap(),
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    let end = g.ahead(&q, &v);
    for x in g.effective_at(&end) {
        let (margin, _) = limits(&c.settings(), x.allowed > 0.0);
        assert!(x.effective >= margin.min(0.0) - 1e-9, "{x:?}");
    }
    println!("{words}");
}

/// 20,000 random ticks from random poses and deflections (joints and tool point): no
/// command closes a gap whose effective value one stop distance ahead is inside its margin.
#[test]
fn random_jog_ticks_never_close_a_gap_inside_the_margin() {
    let (f, presets) = demo();
    let spec = &f.spec;
    let mut rng = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut limited = 0;
    for tick in 0..20_000 {
        let u: Vec<f64> = (0..7).map(|_| next()).collect();
        let q = random_pose(spec, &u);
        let mut c = tracker();
        if tick % 50 == 0 {
            // Some from presets' neighbourhoods, where allowed pairs sit at their depth.
            let p = &f.presets[tick / 50 % f.presets.len()].positions;
            see(&mut c, spec, p, &presets);
        }
        see(&mut c, spec, &q, &presets);
        let scale = 0.2 + 0.8 * next();
        let g = guard(&c, spec, scale);
        let deflection = if next() < 0.7 {
            Deflection::Joints((0..7).map(|_| next() * 2.0 - 1.0).collect())
        } else {
            let mut axes = [0.0; 6];
            for a in &mut axes {
                *a = next() * 2.0 - 1.0;
            }
            Deflection::Twist {
                axes,
                frame: if next() < 0.5 {
                    Frame::Base
                } else {
                    Frame::Tool
                },
            }
        };
        let mut jog = JogController::new(JogSettings {
            speed_scale: scale,
            ..JogSettings::default()
        });
        let input = Input {
            at: 0.0,
            deflection,
        };
        let Some(out) = jog.tick_guarded(0.0, &input, &Gates::all_pass(Source::Keys), spec, &q, &g)
        else {
            limited += usize::from(jog.guard_words().is_some());
            continue;
        };
        let v = g.joint_rates(&q, &out.motion).unwrap();
        let now = g.effective_at(&q);
        let ahead = g.ahead(&q, &v);
        let end = g.effective_at(&ahead);
        for (n, e) in now.iter().zip(&end) {
            let (margin, _) = limits(&c.settings(), e.allowed > 0.0);
            assert!(
                !(e.effective < margin && e.effective < n.effective - 1e-6),
                "tick {tick}: {:?} closes {} → {} inside the margin {margin}",
                input.deflection,
                n.effective,
                e.effective
            );
        }
    }
    assert!(limited > 100, "the guard stopped only {limited} ticks");
}

#[test]
fn no_guard_passes_everything() {
    let m = Motion::Joints(vec![1.0]);
    assert_eq!(NoGuard.limit(&[0.0], &m).scale, 1.0);
}

/// An arm of more joints than any real one (the wire allows 255) is not checked: its pairs
/// would grow with the square of its cylinders.
#[test]
fn an_arm_of_too_many_joints_is_not_checked() {
    use jaus_ocu::model::arm::Joint;
    use jaus_ocu::model::clearance::scene::MAX_CHECKED_JOINTS;
    let spec = |n: usize| ArmSpec {
        mount: None,
        joints: (0..n).map(|_| Joint::revolute(0.1, 0.3, 0.1)).collect(),
    };
    for (n, checked) in [
        (MAX_CHECKED_JOINTS, true),
        (MAX_CHECKED_JOINTS + 1, false),
        (255, false),
    ] {
        let s = spec(n);
        let q = vec![0.5; n];
        let pairs = gaps(
            &[ArmInput {
                id: ARM,
                spec: &s,
                positions: &q,
            }],
            &VehicleGeometry::default(),
            |_| true,
        );
        assert_eq!(
            !pairs.is_empty(),
            checked,
            "{n} joints: {} pairs",
            pairs.len()
        );
    }
}
