//! Clearance per report (issue 45): `Clearance::update` for the demo arm alone and for a
//! two-arm vehicle with the demo vehicle's obstacles and ground, and one guarded jog tick
//! (free, and limited near the ground: the bisection). Targets on this machine, release:
//! ≤ 20 µs for one 7-joint arm, ≤ 60 µs for the two-arm vehicle.
//!
//! `cargo bench --bench clearance`

#![allow(
    clippy::expect_used,
    reason = "benchmarks report a failure by panicking"
)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use jaus_ocu::model::arm::ArmSpec;
use jaus_ocu::model::clearance::guard::JogGuard;
use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::ArmInput;
use jaus_ocu::model::clearance::{ArmFacts, Clearance, Settings};
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::update::PresetInfo;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::vehicle::vehicle_arms;

const A: ComponentId = ComponentId::new(126, 1, 10);
const B: ComponentId = ComponentId::new(126, 1, 11);

fn facts<'a>(
    id: ComponentId,
    spec: &'a ArmSpec,
    q: &'a [f64],
    presets: &'a [PresetInfo],
) -> ArmFacts<'a> {
    ArmFacts {
        input: ArmInput {
            id,
            spec,
            positions: q,
        },
        presets,
    }
}

fn guard<'a>(c: &'a Clearance, spec: &'a ArmSpec, tool_point: [f64; 3]) -> JogGuard<'a> {
    JogGuard {
        clearance: c,
        arm: A,
        spec,
        tool_point,
        others: Vec::new(),
        decel: spec
            .joints
            .iter()
            .map(|j| j.max_speed.unwrap_or(0.0) * 0.2 / 0.25)
            .collect(),
        period: 0.05,
        never: c.never_checked(),
    }
}

fn bench(c: &mut Criterion) {
    let f = ArmFile::builtin("demo").expect("the demo arm");
    let presets = f.preset_infos();
    let deploy = f.presets[1].positions.clone();
    let arms = vehicle_arms(&f, 2);
    let (left, right) = (&arms[0].1.spec, &arms[1].1.spec);

    let mut alone = Clearance::new(Settings::default(), Arc::default());
    let one = [facts(A, &f.spec, &deploy, &presets)];
    alone.update(&one);
    c.bench_function("clearance_update_one_arm", |b| {
        b.iter(|| alone.update(black_box(&one)));
    });

    let mut vehicle = Clearance::new(Settings::default(), Arc::new(VehicleGeometry::demo()));
    let two = [
        facts(A, left, &deploy, &presets),
        facts(B, right, &deploy, &presets),
    ];
    vehicle.update(&two);
    c.bench_function("clearance_update_two_arms_and_obstacles", |b| {
        b.iter(|| vehicle.update(black_box(&two)));
    });

    let mut v = vec![0.0; 7];
    v[1] = -0.12;
    let g = guard(&vehicle, left, f.tool_point);
    c.bench_function("clearance_guard_tick_free", |b| {
        b.iter(|| g.find(black_box(&deploy), black_box(&v)));
    });
    // Near the ground: the bisection runs.
    let mut low = f.presets[2].positions.clone();
    low[1] = 0.2;
    c.bench_function("clearance_guard_tick_limited", |b| {
        b.iter(|| g.find(black_box(&low), black_box(&v)));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
