//! Clearance per report (issue 45): `Clearance::update` for the demo arm alone and for a
//! two-arm vehicle with the demo vehicle's obstacles and ground, and one guarded jog tick
//! (free, and limited near the ground: the bisection). Targets on this machine, release:
//! ≤ 20 µs for one 7-joint arm, ≤ 60 µs for the two-arm vehicle.
//!
//! `cargo bench --bench clearance`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use jaus_ocu::model::arm::Mount;
use jaus_ocu::model::clearance::guard::JogGuard;
use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::ArmInput;
use jaus_ocu::model::clearance::{ArmFacts, Clearance, Settings};
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::update::PresetInfo;
use jaus_ocu::sim::arm_file::ArmFile;

fn bench(c: &mut Criterion) {
    let f = ArmFile::builtin("demo").expect("the demo arm");
    let presets: Vec<PresetInfo> = f
        .presets
        .iter()
        .map(|p| PresetInfo {
            id: p.id,
            name: p.name.clone(),
            positions: Some(p.positions.clone()),
        })
        .collect();
    let deploy = f.presets[1].positions.clone();
    let mut right = f.spec.clone();
    right.mount = Some(Mount::at([0.35, 0.8, -0.25], 1.57));
    let (a, b) = (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11));
    let one = |q: &[f64]| {
        [ArmFacts {
            input: ArmInput {
                id: a,
                spec: &f.spec,
                positions: q,
            },
            presets: &presets,
        }]
    };
    let mut alone = Clearance::new(Settings::default(), Arc::default());
    alone.update(&one(&deploy));
    c.bench_function("clearance_update_one_arm", |bench| {
        bench.iter(|| alone.update(black_box(&one(&deploy))));
    });
    let mut vehicle = Clearance::new(Settings::default(), Arc::new(VehicleGeometry::demo()));
    let two = |q: &[f64]| {
        [
            ArmFacts {
                input: ArmInput {
                    id: a,
                    spec: &f.spec,
                    positions: q,
                },
                presets: &presets,
            },
            ArmFacts {
                input: ArmInput {
                    id: b,
                    spec: &right,
                    positions: q,
                },
                presets: &presets,
            },
        ]
    };
    vehicle.update(&two(&deploy));
    c.bench_function("clearance_update_two_arms_and_obstacles", |bench| {
        bench.iter(|| vehicle.update(black_box(&two(&deploy))));
    });
    let guard = |c: &Clearance| JogGuard {
        clearance: c,
        arm: a,
        spec: &f.spec,
        tool_point: f.tool_point,
        others: Vec::new(),
        decel: f
            .spec
            .joints
            .iter()
            .map(|j| j.max_speed.unwrap_or(0.0) * 0.2 / 0.25)
            .collect(),
        period: 0.05,
        never: c.never_checked(),
    };
    let mut v = vec![0.0; 7];
    v[1] = -0.12;
    let g = guard(&vehicle);
    c.bench_function("clearance_guard_tick_free", |bench| {
        bench.iter(|| g.find(black_box(&deploy), black_box(&v)));
    });
    // Near the ground: the bisection runs.
    let mut low = f.presets[2].positions.clone();
    low[1] = 0.2;
    c.bench_function("clearance_guard_tick_limited", |bench| {
        bench.iter(|| g.find(black_box(&low), black_box(&v)));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
