//! The Foxglove channel builders write messages valid under the published JSON Schemas
//! (vendored in assets/foxglove/, checked against the npm package by .ci/mcap-js.sh), and the
//! transforms composed along the chain put the tool point where our kinematics does; with two
//! arms, one frame tree and one set of scene entities per arm.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::collections::HashMap;
use std::path::Path;

use glam::{DAffine3, DQuat, DVec3};
use serde_json::Value;

use jaus_ocu::model::arm::ArmSpec;
use jaus_ocu::model::kinematics;
use jaus_ocu::model::update::*;
use jaus_ocu::record::foxglove::{self, ArmFrames, LogLevel, SceneLook};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::scene::ScenePalette;

#[path = "common/sim_net.rs"]
mod sim_net;

fn validator(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn valid(v: &jsonschema::Validator, bytes: &[u8], what: &str) -> Value {
    let value: Value = serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", String::from_utf8_lossy(bytes)));
    let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
    value
}

fn arms() -> Vec<(String, ArmFile)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/arms");
    let mut arms = vec![("demo".to_string(), ArmFile::demo())];
    for name in ["puma560", "ur5e"] {
        arms.push((
            name.to_string(),
            ArmFile::load(&dir.join(format!("{name}.toml"))).unwrap(),
        ));
    }
    arms
}

/// Home, every preset, and a pose with each joint at (or for continuous joints beyond) its
/// upper limit.
fn poses(arm: &ArmFile) -> Vec<Vec<f64>> {
    let mut out = vec![arm.home.clone()];
    out.extend(arm.presets.iter().map(|p| p.positions.clone()));
    out.push(
        arm.spec
            .joints
            .iter()
            .map(|j| j.max.unwrap_or(20.0))
            .collect(),
    );
    out
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn affine(t: &Value) -> DAffine3 {
    let p = &t["translation"];
    let r = &t["rotation"];
    DAffine3::from_rotation_translation(
        DQuat::from_xyzw(
            number(&r["x"]),
            number(&r["y"]),
            number(&r["z"]),
            number(&r["w"]),
        ),
        DVec3::new(number(&p["x"]), number(&p["y"]), number(&p["z"])),
    )
}

/// Vehicle ← `frame`, composed from the message's transforms.
fn in_vehicle(transforms: &[Value], frame: &str) -> DAffine3 {
    let by_child: HashMap<&str, &Value> = transforms
        .iter()
        .map(|t| (t["child_frame_id"].as_str().unwrap(), t))
        .collect();
    let mut pose = DAffine3::IDENTITY;
    let mut at = frame;
    while at != foxglove::VEHICLE_FRAME {
        let t = by_child
            .get(at)
            .unwrap_or_else(|| panic!("no transform to {at}"));
        pose = affine(t) * pose;
        at = t["parent_frame_id"].as_str().unwrap();
    }
    pose
}

fn spec_of(arm: &ArmFile) -> &ArmSpec {
    &arm.spec
}

#[test]
fn frame_transforms_are_valid_and_compose_to_our_tool_point() {
    let schema = validator(foxglove::FRAME_TRANSFORMS_SCHEMA);
    let mut buf = Vec::new();
    for (name, arm) in arms() {
        let frames = ArmFrames::new("", arm.spec.joints.len());
        for q in poses(&arm) {
            let t_ns = 1_700_000_000_123_456_789;
            foxglove::frame_transforms(&mut buf, t_ns, &frames, spec_of(&arm), &q, arm.tool_point)
                .unwrap();
            let msg = valid(&schema, &buf, &format!("{name} FrameTransforms"));
            let transforms = msg["transforms"].as_array().unwrap();
            // world, vehicle → manipulator, n links, end effector, tool point.
            assert_eq!(transforms.len(), arm.spec.joints.len() + 4);
            assert_eq!(transforms[0]["timestamp"]["sec"], 1_700_000_000);
            assert_eq!(transforms[0]["timestamp"]["nsec"], 123_456_789);
            let pose = kinematics::forward(&arm.spec, &q, arm.tool_point).unwrap();
            let tool = in_vehicle(transforms, frames.tool_point()).translation;
            assert!(
                tool.distance(pose.tool_point_vehicle) < 1e-6,
                "{name} q={q:?}: {tool} != {}",
                pose.tool_point_vehicle
            );
            for j in 1..=arm.spec.joints.len() {
                let ours = pose.mount * pose.frames[j - 1];
                let theirs = in_vehicle(transforms, frames.link(j).unwrap());
                // Numbers are written rounded to 1e-8 (foxglove::num): composed over the
                // chain, well within 1e-7.
                assert!(theirs.abs_diff_eq(ours, 1e-7), "{name}: frame {j}");
            }
            // The world frame shows the z-down vehicle frame upright.
            let world = affine(&transforms[0]);
            assert_eq!(transforms[0]["parent_frame_id"], "world");
            assert!(
                world
                    .transform_vector3(DVec3::Z)
                    .abs_diff_eq(-DVec3::Z, 1e-12)
            );
        }
    }
}

#[test]
fn frame_names_take_the_prefix_except_world_and_vehicle() {
    let frames = ArmFrames::new("126.1.10/", 2);
    assert_eq!(frames.manipulator(), "126.1.10/manipulator");
    assert_eq!(frames.link(1), Some("126.1.10/link_1"));
    assert_eq!(frames.link(3), None);
    assert_eq!(frames.link(0), None);
    assert_eq!(frames.tool_point(), "126.1.10/tool_point");
    let spec = ArmFile::builtin("ur5e").unwrap();
    let frames = ArmFrames::new("a\"b/", 6);
    let mut buf = Vec::new();
    foxglove::frame_transforms(&mut buf, 0, &frames, &spec.spec, &[0.0; 6], [0.0; 3]).unwrap();
    let msg = valid(
        &validator(foxglove::FRAME_TRANSFORMS_SCHEMA),
        &buf,
        "escaped",
    );
    assert_eq!(msg["transforms"][1]["parent_frame_id"], "vehicle");
    assert_eq!(msg["transforms"][1]["child_frame_id"], "a\"b/manipulator");
}

#[test]
fn scene_updates_are_valid_and_draw_every_cylinder_tinted_by_its_joint() {
    let schema = validator(foxglove::SCENE_UPDATE_SCHEMA);
    let palette = ScenePalette::new(true);
    let look: SceneLook = palette.foxglove_look();
    let mut buf = Vec::new();
    for (name, arm) in arms() {
        let n = arm.spec.joints.len();
        let frames = ArmFrames::new("", n);
        for q in poses(&arm) {
            // Joint 2 at its limit, the others far from theirs.
            let warning = |joint: usize, _: f64| if joint == 1 { 1.0 } else { 0.0 };
            foxglove::scene_update(
                &mut buf,
                42,
                &frames,
                &arm.spec,
                &q,
                arm.tool_point,
                &warning,
                &look,
            )
            .unwrap();
            let msg = valid(&schema, &buf, &format!("{name} SceneUpdate"));
            let pose = kinematics::forward(&arm.spec, &q, arm.tool_point).unwrap();
            let entities = msg["entities"].as_array().unwrap();
            assert_eq!(entities.len(), n + 1, "one entity per frame");
            // Where each entity's frame is, in the manipulator frame.
            let frame = |e: &Value| {
                let id = e["frame_id"].as_str().unwrap();
                if id == "manipulator" {
                    DAffine3::IDENTITY
                } else {
                    let j: usize = id.strip_prefix("link_").unwrap().parse().unwrap();
                    pose.frames[j - 1]
                }
            };
            let point = |p: &Value| DVec3::new(number(&p["x"]), number(&p["y"]), number(&p["z"]));
            // Every drawn cylinder, in the manipulator frame: (centre, length, colour r).
            let mut drawn = Vec::new();
            let mut spheres = 0;
            for e in entities {
                assert_eq!(e["frame_locked"], true);
                let f = frame(e);
                for d in e["cylinders"].as_array().unwrap() {
                    drawn.push((
                        f.transform_point3(point(&d["pose"]["position"])),
                        number(&d["size"]["z"]),
                        number(&d["color"]["r"]),
                    ));
                }
                spheres += e["spheres"].as_array().unwrap().len();
                // The link line runs from this frame's origin to the next frame's origin (the
                // tool point after the last).
                let line = &e["lines"][0]["points"];
                let end = f.transform_point3(point(&line[1]));
                let id = e["frame_id"].as_str().unwrap();
                let want = match id
                    .strip_prefix("link_")
                    .map(|j| j.parse::<usize>().unwrap())
                {
                    Some(j) if j == n => pose.tool_point_manipulator,
                    Some(j) => pose.frames[j].translation,
                    None => pose.frames[0].translation,
                };
                assert!(
                    end.distance(want) < 1e-9,
                    "{name}: line of {id} ends at {end}"
                );
            }
            let zero = pose.cylinders.iter().filter(|c| c.length() < 1e-9).count();
            assert_eq!(
                spheres,
                zero + 1,
                "{name}: zero-length cylinders and the tool point"
            );
            assert_eq!(drawn.len(), pose.cylinders.len() - zero, "{name}");
            for c in pose.cylinders.iter().filter(|c| c.length() >= 1e-9) {
                let centre = (c.from + c.to) * 0.5;
                let hit = drawn
                    .iter()
                    .find(|d| d.0.distance(centre) < 1e-9 && (d.1 - c.length()).abs() < 1e-9);
                let hit = hit.unwrap_or_else(|| panic!("{name}: cylinder {c:?} not drawn"));
                let base = if c.radius.is_some() {
                    palette.cylinder
                } else {
                    palette.cylinder_default
                };
                let w = if c.joint == 2 { 1.0 } else { 0.0 };
                let expected = palette.warning_tint(base, w);
                assert!(
                    (hit.2 as f32 - expected[0]).abs() < 1e-6,
                    "{name}: joint {} colour",
                    c.joint
                );
            }
        }
    }
}

#[test]
fn log_messages_are_valid_at_every_level_with_any_text() {
    let schema = validator(foxglove::LOG_SCHEMA);
    let mut buf = Vec::new();
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Fatal,
    ] {
        foxglove::log(
            &mut buf,
            1_700_000_000_000_000_001,
            level,
            "126.1.10",
            "emergency stop \"E\"\nline two — ünïcode \u{1}",
        );
        let msg = valid(&schema, &buf, "Log");
        assert_eq!(msg["level"], level as u8);
        assert_eq!(msg["timestamp"]["nsec"], 1);
        assert_eq!(
            msg["message"],
            "emergency stop \"E\"\nline two — ünïcode \u{1}"
        );
    }
    // The validator does refuse what the schema forbids (so the checks above mean something).
    let mut bad: Value = serde_json::from_slice(&buf).unwrap();
    bad["level"] = 9.into();
    assert!(!schema.is_valid(&bad), "level 9 is not a foxglove.LogLevel");
    bad.as_object_mut().unwrap().remove("file");
    bad["level"] = 2.into();
    assert!(!schema.is_valid(&bad), "file is required");
    // Which session events are logged, at what level.
    let gap = Update::net(Remark::Mark {
        t: 1.0,
        kind: MarkKind::Gap,
        label: "gap 3 s".into(),
    });
    assert_eq!(foxglove::event_level(&gap), Some(LogLevel::Warning));
    let sample = Update::arm(
        ComponentId::new(126, 1, 10),
        ArmFact::JointPositions {
            t: 1.0,
            values: vec![0.0],
        },
    );
    assert_eq!(foxglove::event_level(&sample), None);
}

/// A recording of an eventful in-memory session (control, a preset move, an emergency and
/// its clearing) made by the real recorder with the Foxglove channels on.
fn eventful_recording(path: &Path) {
    use jaus_ocu::model::command::Command;
    use jaus_ocu::net::tap::Tap;
    use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
    use jaus_ocu::sim::harness::Passage;

    let mut net = sim_net::sim_net(ArmFile::demo(), 3);
    let mut cfg = RecorderConfig::new(path.to_path_buf(), 0);
    cfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
    let recorder = Recorder::start(cfg).unwrap();
    let tap = Tap::new();
    tap.connect_at(recorder.sender(), 0);
    let mut feed = |p: &Passage<'_>| tap.offer(p.t_ns, p.direction, p.peer, p.bytes);
    net.run_with(1.0, &mut feed);
    net.command(Command::RequestControl { authority: 100 });
    net.run_with(1.0, &mut feed);
    net.command(Command::GoToPreset { pose_id: 2 });
    net.run_with(3.0, &mut feed);
    net.command(Command::SetEmergency);
    net.run_with(1.0, &mut feed);
    net.command(Command::ClearEmergency);
    net.run_with(1.0, &mut feed);
    recorder.stop().unwrap();
}

#[test]
fn every_json_message_a_recording_holds_validates_against_its_channels_schema() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("foxglove-eventful-{}.mcap", std::process::id()));
    eventful_recording(&path);
    let bytes = std::fs::read(&path).unwrap();
    let mut validators: HashMap<String, jsonschema::Validator> = HashMap::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut logs = Vec::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if m.channel.message_encoding != "json" {
            continue;
        }
        let schema = m
            .channel
            .schema
            .as_ref()
            .expect("a JSON channel has a schema");
        assert_eq!(schema.encoding, "jsonschema");
        let v = validators
            .entry(schema.name.clone())
            .or_insert_with(|| validator(std::str::from_utf8(&schema.data).unwrap()));
        let value = valid(
            v,
            &m.data,
            &format!("{} on {}", schema.name, m.channel.topic),
        );
        *counts.entry(m.channel.topic.clone()).or_default() += 1;
        if m.channel.topic == "/foxglove/log" {
            logs.push(value["message"].as_str().unwrap_or_default().to_owned());
        }
    }
    let _ = std::fs::remove_file(&path);
    for topic in [
        "/foxglove/transforms",
        "/foxglove/scene",
        "/foxglove/log",
        "/jaus/joint_positions",
        "/jaus/specification",
        "/jaus/events",
    ] {
        assert!(
            counts.get(topic).copied().unwrap_or(0) > 0,
            "nothing on {topic}: {counts:?}"
        );
    }
    // Transforms at most 25 Hz over the 7 s (positions arrive at 50 Hz); the scene far less
    // often than the transforms.
    let transforms = counts["/foxglove/transforms"];
    assert!(
        (100..=176).contains(&transforms),
        "{transforms} transform messages"
    );
    assert!(counts["/foxglove/scene"] * 3 < transforms, "{counts:?}");
    for needle in [
        "control held",
        "emergency stop",
        "moving from preset 1 to preset 2",
    ] {
        assert!(
            logs.iter().any(|l| l.contains(needle)),
            "no log line with {needle:?}: {logs:#?}"
        );
    }
}

#[test]
fn a_stream_of_two_arms_draws_one_frame_tree_and_one_scene_per_arm() {
    use jaus_ocu::model::arm::Mount;
    use jaus_ocu::model::update::ComponentId;
    use jaus_ocu::record::foxglove::{FoxgloveStream, FoxgloveTopic};

    let (a, b) = (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11));
    let mut left = ArmFile::demo();
    left.spec.mount = Some(Mount::at([0.0, -0.4, 0.0], 0.0));
    let mut right = ArmFile::builtin("ur5e").unwrap();
    right.spec.mount = Some(Mount::at([0.0, 0.4, 0.0], std::f64::consts::PI));
    let mut stream = FoxgloveStream::new(ScenePalette::new(true).foxglove_look());
    let mut out: Vec<(FoxgloveTopic, Value)> = Vec::new();
    let mut feed = |u: Update, t_ns: u64, out: &mut Vec<(FoxgloveTopic, Value)>| {
        stream
            .update(&u, t_ns, &mut |topic, bytes| {
                out.push((topic, serde_json::from_slice(bytes).unwrap()));
                Ok::<(), ()>(())
            })
            .unwrap();
    };
    feed(
        Update::net(NetFact::Selected { t: 0.0, id: a }),
        0,
        &mut out,
    );
    for (id, arm) in [(a, &left), (b, &right)] {
        let spec = ArmFact::Specification {
            t: 0.0,
            spec: arm.spec.clone(),
        };
        feed(Update::arm(id, spec), 0, &mut out);
        let tool = ArmFact::ToolOffset {
            t: 0.0,
            point: arm.tool_point,
        };
        feed(Update::arm(id, tool), 0, &mut out);
    }
    let positions = |arm: &ArmFile| ArmFact::JointPositions {
        t: 0.0,
        values: arm.home.clone(),
    };
    feed(Update::arm(b, positions(&right)), 1_000, &mut out);
    feed(Update::arm(a, positions(&left)), 2_000, &mut out);
    let gap = Remark::Mark {
        t: 0.0,
        kind: MarkKind::Gap,
        label: "no traffic from 126.1.11 for 3.0 s".into(),
    };
    feed(Update::arm(b, gap), 3_000, &mut out);

    let transforms: Vec<&Value> = out
        .iter()
        .filter(|(t, _)| *t == FoxgloveTopic::Transforms)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(transforms.len(), 2, "one message per arm's positions");
    let schema = validator(foxglove::FRAME_TRANSFORMS_SCHEMA);
    let mut roots = Vec::new();
    for msg in &transforms {
        assert!(schema.is_valid(msg));
        let list = msg["transforms"].as_array().unwrap();
        // One tree: world → vehicle → the arm's base, then its own frames only.
        assert_eq!(list[0]["child_frame_id"], "vehicle");
        assert_eq!(list[1]["parent_frame_id"], "vehicle");
        let base = list[1]["child_frame_id"].as_str().unwrap().to_owned();
        let prefix = base.strip_suffix("manipulator").unwrap().to_owned();
        for t in &list[2..] {
            assert!(t["child_frame_id"].as_str().unwrap().starts_with(&prefix));
            assert!(t["parent_frame_id"].as_str().unwrap().starts_with(&prefix));
        }
        roots.push(base);
    }
    roots.sort();
    assert_eq!(roots, ["126.1.10/manipulator", "126.1.11/manipulator"]);
    // Each arm's tool point where our kinematics puts it on the vehicle.
    for (id, arm) in [(a, &left), (b, &right)] {
        let msg = transforms
            .iter()
            .find(|m| m["transforms"][1]["child_frame_id"] == format!("{id}/manipulator"))
            .unwrap();
        let list = msg["transforms"].as_array().unwrap();
        let pose = kinematics::forward(&arm.spec, &arm.home, arm.tool_point).unwrap();
        let tool = in_vehicle(list, &format!("{id}/tool_point")).translation;
        assert!(tool.distance(pose.tool_point_vehicle) < 1e-6, "{id}");
    }
    // Scene entities per arm, locked to that arm's frames.
    let scenes: Vec<&Value> = out
        .iter()
        .filter(|(t, _)| *t == FoxgloveTopic::Scene)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(scenes.len(), 2);
    for scene in scenes {
        let entities = scene["entities"].as_array().unwrap();
        let id = entities[0]["id"].as_str().unwrap();
        let prefix = &id[..=id.find('/').unwrap()];
        assert!(entities.iter().all(|e| {
            e["id"].as_str().unwrap().starts_with(prefix)
                && e["frame_id"].as_str().unwrap().starts_with(prefix)
        }));
    }
    // The log names the arm an event is about.
    let log = out
        .iter()
        .find(|(t, _)| *t == FoxgloveTopic::Log)
        .map(|(_, v)| v)
        .unwrap();
    assert_eq!(log["name"], "126.1.11/gap");
}

/// The r of each cylinder drawn for joint `joint` (1-based: the entity of frame
/// `…link_{joint}`, after the arm's prefix) in a `SceneUpdate`.
fn joint_reds(msg: &Value, joint: usize) -> Vec<f64> {
    let id = format!("link_{joint}");
    msg["entities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["frame_id"].as_str().unwrap().ends_with(&id))
        .flat_map(|e| e["cylinders"].as_array().unwrap().clone())
        .map(|c| number(&c["color"]["r"]))
        .collect()
}

/// Issue 46: a joint resting on its limit where a preset put it is not tinted in the
/// recording's scene (as in the window); the same pose reached with no preset said is.
#[test]
fn a_joint_resting_on_its_limit_at_a_preset_is_not_tinted_in_the_scene() {
    let arm = ArmFile::demo();
    let reach = arm
        .presets
        .iter()
        .find(|p| p.name == "Reach forward")
        .unwrap()
        .clone();
    // The telescope (joint 4) on its upper limit.
    assert_eq!(Some(reach.positions[3]), arm.spec.joints[3].max);
    let id = ComponentId::new(126, 1, 10);
    let palette = ScenePalette::new(true);
    let tinted = |said_preset: bool, q: &[f64]| -> Vec<f64> {
        let mut stream = foxglove::FoxgloveStream::new(palette.foxglove_look());
        let mut scene = None;
        let mut emit = |topic: foxglove::FoxgloveTopic, bytes: &[u8]| -> Result<(), ()> {
            if topic == foxglove::FoxgloveTopic::Scene {
                scene = Some(serde_json::from_slice::<Value>(bytes).unwrap());
            }
            Ok(())
        };
        let mut facts = vec![ArmFact::Specification {
            t: 0.0,
            spec: arm.spec.clone(),
        }];
        if said_preset {
            facts.push(ArmFact::Presets {
                t: 0.0,
                presets: vec![PresetInfo {
                    id: reach.id,
                    name: reach.name.clone(),
                    positions: Some(reach.positions.clone()),
                }],
            });
            facts.push(ArmFact::CurrentPose {
                t: 0.1,
                pose: PoseState::At(reach.id),
            });
        }
        facts.push(ArmFact::JointVelocities {
            t: 0.2,
            values: vec![0.0; 7],
        });
        facts.push(ArmFact::JointPositions {
            t: 0.2,
            values: q.to_vec(),
        });
        for (k, fact) in facts.into_iter().enumerate() {
            stream
                .update(&Update::arm(id, fact), 1_000 + k as u64, &mut emit)
                .unwrap();
        }
        joint_reds(&scene.expect("a scene was written"), 4)
    };
    // The telescope's colour halfway out, far from its limits (home has it retracted, on
    // its lower limit).
    let mut halfway = arm.home.clone();
    let telescope = &arm.spec.joints[3];
    halfway[3] = 0.5 * (telescope.min.unwrap() + telescope.max.unwrap());
    let plain = tinted(false, &halfway);
    assert!(!plain.is_empty());
    let at_preset = tinted(true, &reach.positions);
    assert_eq!(
        at_preset, plain,
        "at the preset the telescope is not tinted"
    );
    let unsent = tinted(false, &reach.positions);
    assert!(
        unsent.iter().zip(&plain).all(|(a, b)| (a - b).abs() > 1e-3),
        "arrived unsent: {unsent:?} tinted (plain {plain:?})"
    );
}
