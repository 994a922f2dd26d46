//! Clearance (issue 45): the gap against brute force, allowed pairs from presets and files,
//! first-seen contact, the jog guard's scaling and its never-closing-inside-the-margin rule.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::sync::Arc;

use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::{ArmInput, Part};
use jaus_ocu::model::clearance::{ArmFacts, Clearance, Settings, joint_name};
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::update::PresetInfo;
use jaus_ocu::sim::arm_file::ArmFile;

const ARM: ComponentId = ComponentId::new(126, 1, 10);

fn demo() -> (ArmFile, Vec<PresetInfo>) {
    let f = ArmFile::builtin("demo").unwrap();
    let presets = f
        .presets
        .iter()
        .map(|p| PresetInfo {
            id: p.id,
            name: p.name.clone(),
            positions: Some(p.positions.clone()),
        })
        .collect();
    (f, presets)
}

#[test]
fn explore_demo_presets() {
    let (f, presets) = demo();
    let mut c = Clearance::new(Settings::default(), Arc::new(VehicleGeometry::demo()));
    for p in &f.presets {
        c.update(&[ArmFacts {
            input: ArmInput {
                id: ARM,
                spec: &f.spec,
                positions: &p.positions,
            },
            presets: &presets,
        }]);
        let names = |_: ComponentId, j: usize| joint_name(&f.spec, j);
        let n = c.nearest(ARM).unwrap();
        println!(
            "{}: nearest {} gap {:.1} mm eff {:.1} ({:?})",
            p.name,
            c.pair_words(Some(ARM), &n.gap.a, &n.gap.b, names),
            n.gap.contact.gap * 1e3,
            n.effective * 1e3,
            n.zone
        );
    }
    for (k, a) in c.allowed() {
        let names = |_: ComponentId, j: usize| joint_name(&f.spec, j);
        println!(
            "allowed {} {:?} {}",
            c.pair_words(Some(ARM), &k.0, &k.1, names),
            a.depth.map(|d| (d * 1e3).round()),
            a.source
        );
    }
    let _ = Part::Ground;
}
