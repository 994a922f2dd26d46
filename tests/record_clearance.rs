//! Clearance in the recording and the live view (issue 45): the pipeline's `/jaus/arm_state`
//! carries each arm's nearest pair, and `/jaus/events` says once when a pair enters the
//! warning band, however long it stays there.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::convert::Infallible;
use std::sync::Arc;

use jaus_ocu::model::clearance::obstacles::VehicleGeometry;
use jaus_ocu::model::clearance::scene::ArmInput;
use jaus_ocu::model::clearance::{ArmFacts, Clearance, Settings, Zone, joint_name};
use jaus_ocu::model::id::ComponentId;
use jaus_ocu::model::update::{ArmFact, PresetInfo, Update};
use jaus_ocu::record::format::{DecodedTopic, SCHEMA_EVENTS};
use jaus_ocu::record::pipeline::{Channel, Out, Pipeline, PipelineConfig};
use jaus_ocu::record::summary::SCHEMA_ARM_STATE;
use jaus_ocu::sim::arm_file::ArmFile;
use serde_json::Value;

const ARM: ComponentId = ComponentId::new(126, 1, 10);
/// 2025-01-01T00:00:00Z.
const START_NS: u64 = 1_735_689_600_000_000_000;
/// Samples 10 ms apart.
const STEP_NS: u64 = 10_000_000;

/// The demo vehicle without ground or obstacles, with the telescope's cylinders allowed to
/// slide along the elbow's link (they sit 10 mm apart in every pose of the demo arm).
const VEHICLE: &str = r#"
name = "test"
[[allow]]
a = "link 3"
b = "link 4"
why = "the telescope slides along the elbow's link"
[[allow]]
a = "link 3"
b = "joint 4"
why = "the telescope slides along the elbow's link"
"#;

fn demo() -> (ArmFile, Vec<PresetInfo>) {
    let f = ArmFile::builtin("demo").unwrap();
    let presets = f.preset_infos();
    (f, presets)
}

/// What the pipeline handed out.
#[derive(Default)]
struct Sink {
    events: Vec<Value>,
    states: Vec<Value>,
    logs: Vec<Value>,
}

impl Sink {
    fn take(&mut self, out: &Out<'_>) {
        if let Out::Message { channel, bytes, .. } = out {
            let v: Value = serde_json::from_slice(bytes).unwrap();
            match channel {
                Channel::Decoded(DecodedTopic::Events) => self.events.push(v),
                Channel::ArmState => self.states.push(v),
                Channel::Foxglove(_) if v.get("level").is_some() => self.logs.push(v),
                _ => {}
            }
        }
    }

    fn clearance_events(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["kind"] == "clearance")
            .collect()
    }
}

/// The pose `s` of the way (joint space) from the demo arm's "Reach forward" to "Stowed".
fn along(f: &ArmFile, s: f64) -> Vec<f64> {
    let from = &f
        .presets
        .iter()
        .find(|p| p.name == "Reach forward")
        .unwrap()
        .positions;
    let to = &f
        .presets
        .iter()
        .find(|p| p.name == "Stowed")
        .unwrap()
        .positions;
    from.iter().zip(to).map(|(a, b)| a + (b - a) * s).collect()
}

#[test]
fn the_summary_names_the_nearest_pair_and_one_event_marks_its_entry_into_the_band() {
    let (f, presets) = demo();
    let vehicle = Arc::new(VehicleGeometry::parse(VEHICLE, "test vehicle").unwrap());
    let names = |_: ComponentId, j: usize| joint_name(&f.spec, j);

    // The model on its own: the first pose of the way where the nearest pair not allowed to
    // touch is inside the band, every pose before it clear.
    let mut model = Clearance::new(Settings::default(), vehicle.clone());
    let mut entry = None;
    for k in 0..=100 {
        let q = along(&f, f64::from(k) / 100.0);
        model.update(&[ArmFacts {
            input: ArmInput {
                id: ARM,
                spec: &f.spec,
                positions: &q,
            },
            presets: &presets,
        }]);
        let n = model.nearest(ARM).unwrap();
        if n.zone != Zone::Clear {
            assert_eq!(n.zone, Zone::Band, "step {k}: {n:?}");
            entry = Some((
                k,
                q,
                model.pair_words(Some(ARM), &n.gap.a, &n.gap.b, names),
                n.gap.contact.gap,
            ));
            break;
        }
    }
    let (k, inside, pair, gap) = entry.expect("the way into Stowed enters the band");
    assert!(k > 0, "the way starts clear");
    assert!(pair.contains("turret (joint 1)"), "{pair}");

    // The pipeline: specification, presets, then samples at 100 Hz — clear for a second,
    // then inside the band for two.
    let mut pipeline = Pipeline::new(PipelineConfig {
        start_ns: START_NS,
        foxglove: Some(jaus_ocu::ui::theme::ScenePalette::new(true).foxglove_look()),
        vehicle: Some(vehicle),
    });
    let mut sink = Sink::default();
    let mut emit = |out: Out<'_>| -> Result<(), Infallible> {
        sink.take(&out);
        Ok(())
    };
    let t = |ns: u64| (ns - START_NS) as f64 * 1e-9;
    pipeline
        .apply(
            [
                Update::arm(
                    ARM,
                    ArmFact::Specification {
                        t: 0.0,
                        spec: f.spec.clone(),
                    },
                ),
                Update::arm(
                    ARM,
                    ArmFact::Presets {
                        t: 0.0,
                        presets: presets.clone(),
                    },
                ),
            ],
            START_NS,
            false,
            &mut emit,
        )
        .unwrap();
    let clear = along(&f, 0.0);
    let mut now = START_NS;
    for i in 0..300 {
        now += STEP_NS;
        let values = if i < 100 {
            clear.clone()
        } else {
            inside.clone()
        };
        pipeline
            .apply(
                [Update::arm(
                    ARM,
                    ArmFact::JointPositions { t: t(now), values },
                )],
                now,
                false,
                &mut emit,
            )
            .unwrap();
    }
    pipeline.tick(now + 1_000_000_000, &mut emit).unwrap();

    let events = sink.clearance_events();
    let of_pair: Vec<_> = events
        .iter()
        .filter(|e| e["pair"] == pair.as_str())
        .collect();
    assert_eq!(of_pair.len(), 1, "one event for the entry: {events:#?}");
    let e = of_pair[0];
    assert_eq!(e["component"], "126.1.10");
    assert_eq!(e["zone"], "inside the warning band");
    assert!((e["gap_m"].as_f64().unwrap() - gap).abs() < 1e-3, "{e}");
    let label = e["label"].as_str().unwrap();
    assert!(
        label.starts_with(&format!("clearance: {pair} "))
            && label.ends_with("mm, inside the warning band"),
        "{label}"
    );
    // At 1 s (the entry), not before.
    assert!((e["t"].as_f64().unwrap() - 1.01).abs() < 1e-6, "{e}");
    assert!(
        sink.logs.iter().any(|l| l["message"] == label),
        "{:?}",
        sink.logs
    );
    // The events' schema knows the kind and the zone.
    let schema: Value = serde_json::from_str(SCHEMA_EVENTS).unwrap();
    let props = &schema["properties"];
    assert!(
        props["kind"]["enum"]
            .as_array()
            .unwrap()
            .contains(&e["kind"])
    );
    assert!(
        props["zone"]["enum"]
            .as_array()
            .unwrap()
            .contains(&e["zone"])
    );
    for key in ["pair", "gap_m"] {
        assert!(props.get(key).is_some(), "{key} not in the events' schema");
    }
    // Nothing entered anything while the arm was clear.
    assert!(
        events.iter().all(|e| e["t"].as_f64().unwrap() > 1.0),
        "{events:#?}"
    );

    let state = sink.states.last().unwrap();
    let nearest = &state["clearance"]["nearest"];
    assert_eq!(nearest["pair"], pair.as_str(), "{state}");
    assert_eq!(nearest["zone"], "inside the warning band", "{state}");
    assert!(
        (nearest["gap_m"].as_f64().unwrap() - gap).abs() < 1e-3,
        "{state}"
    );
    assert!(
        state["clearance"]["allowed_pairs"].as_u64().unwrap() > 0,
        "{state}"
    );
    assert!(state["clearance"]["nearest_allowed"].is_object(), "{state}");
    // The summary's schema says what it has.
    let schema: Value = serde_json::from_str(SCHEMA_ARM_STATE).unwrap();
    for key in schema["required"].as_array().unwrap() {
        assert!(
            state.get(key.as_str().unwrap()).is_some(),
            "{key} missing: {state}"
        );
    }
}

#[test]
fn a_pair_entering_again_and_again_is_said_at_most_once_a_second() {
    let (f, presets) = demo();
    let vehicle = Arc::new(VehicleGeometry::parse(VEHICLE, "test vehicle").unwrap());
    let mut pipeline = Pipeline::new(PipelineConfig {
        start_ns: START_NS,
        foxglove: None,
        vehicle: Some(vehicle),
    });
    let mut sink = Sink::default();
    let mut emit = |out: Out<'_>| -> Result<(), Infallible> {
        sink.take(&out);
        Ok(())
    };
    pipeline
        .apply(
            [
                Update::arm(
                    ARM,
                    ArmFact::Specification {
                        t: 0.0,
                        spec: f.spec.clone(),
                    },
                ),
                Update::arm(ARM, ArmFact::Presets { t: 0.0, presets }),
            ],
            START_NS,
            false,
            &mut emit,
        )
        .unwrap();
    // Clear and inside the band by turns, every 100 ms, for 3 s: an entry every 200 ms.
    let (clear, inside) = (along(&f, 0.0), along(&f, 0.9));
    let mut now = START_NS;
    for i in 0..30 {
        now += 100_000_000;
        let values = if i % 2 == 0 {
            clear.clone()
        } else {
            inside.clone()
        };
        pipeline
            .apply(
                [Update::arm(ARM, ArmFact::JointPositions { t: 0.0, values })],
                now,
                false,
                &mut emit,
            )
            .unwrap();
    }
    let events = sink.clearance_events();
    assert!(!events.is_empty(), "the band was entered");
    let mut by_pair: std::collections::BTreeMap<String, Vec<f64>> =
        std::collections::BTreeMap::default();
    for e in &events {
        by_pair
            .entry(e["pair"].as_str().unwrap().to_owned())
            .or_default()
            .push(e["t"].as_f64().unwrap());
    }
    for (pair, times) in by_pair {
        // Entered 15 times in 3 s, said at most once a second.
        assert!((2..=4).contains(&times.len()), "{pair}: {times:?}");
        for w in times.windows(2) {
            assert!(w[1] - w[0] >= 1.0 - 1e-9, "{pair}: {times:?}");
        }
    }
}
