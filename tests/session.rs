//! `model::session::Session`: the state at any time, checkpoints, marks, stepping by report.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use jaus_ocu::model::command::*;
use jaus_ocu::model::session::{CHECKPOINT_EVERY, EPISODE_MERGE_S, FT_CHANNELS, Mark, Session};
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::*;

/// The arm of this suite's sessions.
const ARM: ComponentId = ComponentId::new(126, 1, 1);

mod common;
use common::Feed;
use proptest::prelude::*;

fn positions(t: f64, values: &[f64]) -> Update {
    Update::arm(
        ARM,
        ArmFact::JointPositions {
            t,
            values: values.to_vec(),
        },
    )
}

fn id(c: u8) -> ComponentId {
    ComponentId::new(126, 1, c)
}

#[test]
fn state_at_gives_the_last_sample_at_or_before_the_time() {
    let mut s = Session::new();
    s.apply(&Update::net(NetFact::Selected { t: 0.0, id: id(1) }));
    s.apply(&positions(1.0, &[0.5, -0.25]));
    s.apply(&positions(2.0, &[1.5, 0.75]));
    s.apply(&Update::arm(
        ARM,
        ArmFact::ForceTorque {
            t: 1.5,
            force: [Some(1.0), None, Some(-2.0)],
            torque: [Some(0.5), Some(0.25), Some(0.125)],
        },
    ));

    let before = s.state_at(0.5);
    assert_eq!(before.selected, Some(id(1)));
    assert!(before.positions.is_none(), "no sample yet at 0.5 s");
    assert!(before.force_torque.is_none());
    assert!(before.counts.is_empty());

    let at = s.state_at(1.0);
    let p = at.positions.expect("a sample at exactly 1.0 s");
    assert_eq!((p.t, p.value), (1.0, vec![0.5, -0.25]));
    assert_eq!(at.counts.get(&Signal::JointPositions), Some(&1));

    let between = s.state_at(1.7);
    let p = between.positions.expect("the sample of 1.0 s still holds");
    assert_eq!((p.t, p.value), (1.0, vec![0.5, -0.25]));
    let ft = between.force_torque.expect("F/T sampled at 1.5 s");
    assert_eq!(ft.t, 1.5);
    assert_eq!(
        ft.value,
        (
            [Some(1.0), None, Some(-2.0)],
            [Some(0.5), Some(0.25), Some(0.125)]
        ),
        "absent parts come back absent"
    );

    let after = s.state_at(10.0);
    assert_eq!(after.positions.map(|p| p.value), Some(vec![1.5, 0.75]));
    assert_eq!(after.counts.get(&Signal::JointPositions), Some(&2));
    assert_eq!(s.span(), Some((0.0, 2.0)));
}

#[test]
fn force_magnitude_channel_is_nan_when_a_force_part_is_absent() {
    let mut s = Session::new();
    s.apply(&Update::arm(
        ARM,
        ArmFact::ForceTorque {
            t: 1.0,
            force: [Some(3.0), Some(4.0), Some(0.0)],
            torque: [None; 3],
        },
    ));
    s.apply(&Update::arm(
        ARM,
        ArmFact::ForceTorque {
            t: 2.0,
            force: [Some(3.0), None, Some(0.0)],
            torque: [None; 3],
        },
    ));
    assert_eq!(s.ft.channels(), FT_CHANNELS.len());
    assert_eq!(s.ft.value_at(6, 1.0), Some((1.0, 5.0)));
    assert!(s.ft.value_at(6, 2.0).unwrap().1.is_nan());
    assert!(s.ft.value_at(3, 2.0).unwrap().1.is_nan());
}

#[test]
fn refuses_and_counts_samples_older_than_the_last() {
    let mut s = Session::new();
    s.apply(&positions(2.0, &[1.0]));
    s.apply(&positions(1.0, &[9.0]));
    assert_eq!(s.refused_samples(), 1);
    assert_eq!(s.positions.len(), 1);
    assert_eq!(s.latest.positions.as_ref().map(|p| p.t), Some(2.0));
    assert_eq!(s.state_at(1.5).positions, None);
}

#[test]
fn another_joint_count_starts_a_fresh_history_and_keeps_the_old_samples_reachable() {
    let mut s = Session::new();
    s.apply(&positions(1.0, &[1.0, 2.0]));
    s.apply(&positions(2.0, &[3.0, 4.0]));
    s.apply(&positions(3.0, &[5.0, 6.0, 7.0]));
    assert_eq!(s.positions.channels(), 3);
    assert_eq!(s.positions.len(), 1);
    assert_eq!(
        s.state_at(2.5).positions.map(|p| p.value),
        Some(vec![3.0, 4.0])
    );
    assert_eq!(
        s.state_at(3.0).positions.map(|p| p.value),
        Some(vec![5.0, 6.0, 7.0])
    );
    assert_eq!(
        s.state_at(3.0).counts.get(&Signal::JointPositions),
        Some(&3)
    );
    assert_eq!(s.prev_report(3.0), Some(2.0));
    assert_eq!(s.next_report(1.0), Some(2.0));
}

#[test]
fn samples_from_before_a_selection_change_are_not_shown_for_the_new_arm() {
    let mut s = Session::new();
    s.apply(&Update::net(NetFact::Selected { t: 0.0, id: id(1) }));
    s.apply(&positions(1.0, &[1.0]));
    s.apply(&Update::net(NetFact::Selected { t: 2.0, id: id(2) }));
    assert_eq!(s.state_at(1.5).positions.map(|p| p.t), Some(1.0));
    let after = s.state_at(2.5);
    assert_eq!(after.selected, Some(id(2)));
    assert!(after.positions.is_none());
    assert!(after.counts.is_empty());
}

#[test]
fn next_and_prev_report_step_over_every_signal_strictly() {
    let mut s = Session::new();
    for t in [0.0, 1.0, 2.0] {
        s.apply(&positions(t, &[t]));
    }
    for t in [0.5, 1.5] {
        s.apply(&Update::arm(
            ARM,
            ArmFact::ForceTorque {
                t,
                force: [Some(t); 3],
                torque: [None; 3],
            },
        ));
    }
    // A discrete update is not a report.
    s.apply(&Update::arm(
        ARM,
        ArmFact::Status {
            t: 1.2,
            state: ManagementState::Ready,
        },
    ));
    assert_eq!(s.next_report(1.0), Some(1.5));
    assert_eq!(s.prev_report(1.0), Some(0.5));
    assert_eq!(s.next_report(-5.0), Some(0.0));
    assert_eq!(s.prev_report(1.7), Some(1.5));
    assert_eq!(s.next_report(2.0), None);
    assert_eq!(s.prev_report(0.0), None);
    assert_eq!(Session::new().next_report(0.0), None);
}

fn control(t: f64, state: ControlState) -> Update {
    Update::arm(ARM, ArmFact::Control { t, state })
}

fn status(t: f64, state: ManagementState) -> Update {
    Update::arm(ARM, ArmFact::Status { t, state })
}

#[test]
fn marks_are_derived_from_state_changes_only() {
    let mut s = Session::new();
    let updates = [
        control(1.0, ControlState::Requested),
        control(1.1, ControlState::Held { authority: 200 }),
        control(1.2, ControlState::Held { authority: 200 }),
        status(2.0, ManagementState::Standby),
        status(2.1, ManagementState::Standby),
        status(3.0, ManagementState::Ready),
        status(4.0, ManagementState::Emergency),
        status(4.5, ManagementState::Emergency),
        status(5.0, ManagementState::Ready),
        Update::arm(
            ARM,
            ArmFact::CurrentPose {
                t: 6.0,
                pose: PoseState::Moving { from: 1, to: 2 },
            },
        ),
        Update::arm(
            ARM,
            ArmFact::CurrentPose {
                t: 6.1,
                pose: PoseState::Moving { from: 1, to: 2 },
            },
        ),
        Update::net(Remark::CommandOutcome {
            t: 7.0,
            command: CommandKind::GoToPreset,
            outcome: Outcome::Completed,
        }),
        Update::net(Remark::CommandOutcome {
            t: 7.1,
            command: CommandKind::Resume,
            outcome: Outcome::Confirmed,
        }),
        Update::arm(
            ARM,
            ArmFact::Link {
                t: 8.0,
                state: LinkState::Lost,
            },
        ),
        Update::arm(
            ARM,
            ArmFact::Link {
                t: 8.5,
                state: LinkState::Lost,
            },
        ),
        Update::arm(
            ARM,
            ArmFact::Stale {
                t: 9.0,
                signal: Signal::JointPositions,
                stale: true,
            },
        ),
        Update::arm(
            ARM,
            ArmFact::Stale {
                t: 9.5,
                signal: Signal::JointPositions,
                stale: false,
            },
        ),
        control(10.0, ControlState::Released),
        Update::net(Remark::Mark {
            t: 11.0,
            kind: MarkKind::Emergency,
            label: "SetEmergency from 126.1.20".into(),
        }),
    ];
    for u in &updates {
        s.apply(u);
    }
    let got = marks(&s);
    assert_eq!(
        got,
        vec![
            (1.0, MarkKind::Control, "control requested"),
            (1.1, MarkKind::Control, "control granted (authority 200)"),
            (2.0, MarkKind::Status, "STANDBY"),
            (3.0, MarkKind::Status, "READY"),
            (4.0, MarkKind::Emergency, "EMERGENCY"),
            (5.0, MarkKind::Emergency, "emergency cleared (READY)"),
            (6.0, MarkKind::Transition, "moving from pose 1 to pose 2"),
            (7.0, MarkKind::Transition, "transition completed"),
            // Outcomes of commands other than presets are events of their own (the log's).
            (7.1, MarkKind::Command, "Resume: confirmed"),
            (8.0, MarkKind::Gap, "link lost"),
            (9.0, MarkKind::Stale, "positions stale"),
            (10.0, MarkKind::Control, "control released"),
            (11.0, MarkKind::Emergency, "SetEmergency from 126.1.20"),
        ]
    );
}

#[test]
fn an_explicit_mark_replaces_the_derived_one_for_the_same_change_and_late_marks_sort_in() {
    let mut s = Session::new();
    s.apply(&Update::arm(
        ARM,
        ArmFact::Link {
            t: 5.0,
            state: LinkState::Lost,
        },
    ));
    s.apply(&Update::arm(
        ARM,
        ArmFact::Link {
            t: 9.0,
            state: LinkState::Live,
        },
    ));
    s.apply(&Update::arm(
        ARM,
        ArmFact::Status {
            t: 9.5,
            state: ManagementState::Ready,
        },
    ));
    // The observer knows the gap's length only when traffic resumes.
    s.apply(&Update::net(Remark::Mark {
        t: 5.0,
        kind: MarkKind::Gap,
        label: "no traffic for 7.0 s".into(),
    }));
    s.apply(&Update::net(Remark::Mark {
        t: 1.0,
        kind: MarkKind::Control,
        label: "RequestControl from 126.1.20".into(),
    }));
    // Derived after an explicit mark of the same change: still one mark.
    s.apply(&Update::net(Remark::Mark {
        t: 12.0,
        kind: MarkKind::Control,
        label: "control granted to 126.1.20 (authority 200)".into(),
    }));
    s.apply(&control(12.0, ControlState::Held { authority: 200 }));
    let got: Vec<(f64, &str)> = s.marks.iter().map(|m| (m.t, m.label.as_str())).collect();
    assert_eq!(
        got,
        vec![
            (1.0, "RequestControl from 126.1.20"),
            (5.0, "no traffic for 7.0 s"),
            (9.0, "link live again"),
            (9.5, "READY"),
            (12.0, "control granted to 126.1.20 (authority 200)"),
        ]
    );
    assert!(s.marks.windows(2).all(|w| w[0].t <= w[1].t));
}

#[test]
fn a_discrete_update_stamped_late_takes_effect_when_it_arrived() {
    let mut s = Session::new();
    s.apply(&status(5.0, ManagementState::Ready));
    s.apply(&Update::net(Remark::Error {
        t: 0.0,
        message: "could not encode".into(),
    }));
    assert!(s.state_at(4.0).errors.is_empty());
    assert_eq!(s.state_at(5.0).errors.len(), 1);
    assert_eq!(s.latest.errors.len(), 1);
}

/// One step of a generated session.
#[derive(Debug, Clone)]
enum Op {
    Sample(u8),
    Select(u8),
    Control(u8),
    Status(u8),
    Link(u8),
    Stale(bool),
    Pose(u8, u8),
    Outcome(bool),
    Stats(u8),
    Mark,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..5).prop_map(Op::Sample),
        1 => (1u8..4).prop_map(Op::Select),
        2 => (0u8..3).prop_map(Op::Control),
        2 => (0u8..7).prop_map(Op::Status),
        1 => (0u8..4).prop_map(Op::Link),
        1 => any::<bool>().prop_map(Op::Stale),
        1 => (0u8..4, 0u8..4).prop_map(|(a, b)| Op::Pose(a, b)),
        1 => any::<bool>().prop_map(Op::Outcome),
        1 => any::<u8>().prop_map(Op::Stats),
        1 => Just(Op::Mark),
    ]
}

/// Turns generated steps into updates with strictly increasing times; sample values are
/// multiples of 1/8 (exact in the history's f32 columns) and the joint count follows the
/// selected arm, so selection changes also change the number of channels.
fn updates(ops: &[Op]) -> Vec<Update> {
    let mut joints = 6;
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            let t = i as f64 * 0.01;
            let v = |k: usize| ((i * 7 + k) % 4096) as f64 / 8.0;
            match *op {
                Op::Sample(kind) => {
                    let values: Vec<f64> = (0..joints).map(v).collect();
                    match kind {
                        0 => Update::arm(ARM, ArmFact::JointPositions { t, values }),
                        1 => Update::arm(ARM, ArmFact::JointVelocities { t, values }),
                        2 => Update::arm(ARM, ArmFact::JointEfforts { t, values }),
                        3 => Update::arm(ARM, ArmFact::JointForceTorques { t, values }),
                        _ => Update::arm(
                            ARM,
                            ArmFact::ForceTorque {
                                t,
                                force: [Some(v(0)), (i % 3 != 0).then(|| v(1)), Some(v(2))],
                                torque: [Some(v(3)), Some(v(4)), (i % 5 != 0).then(|| v(5))],
                            },
                        ),
                    }
                }
                Op::Select(c) => {
                    joints = if c == 2 { 7 } else { 6 };
                    Update::net(NetFact::Selected { t, id: id(c) })
                }
                Op::Control(k) => Update::arm(
                    ARM,
                    ArmFact::Control {
                        t,
                        state: match k {
                            0 => ControlState::Released,
                            1 => ControlState::Requested,
                            _ => ControlState::Held { authority: 200 },
                        },
                    },
                ),
                Op::Status(k) => Update::arm(
                    ARM,
                    ArmFact::Status {
                        t,
                        state: [
                            ManagementState::Unknown,
                            ManagementState::Initialize,
                            ManagementState::Ready,
                            ManagementState::Standby,
                            ManagementState::Shutdown,
                            ManagementState::Failure,
                            ManagementState::Emergency,
                        ][k as usize],
                    },
                ),
                Op::Link(k) => Update::arm(
                    ARM,
                    ArmFact::Link {
                        t,
                        state: [
                            LinkState::Idle,
                            LinkState::Connecting,
                            LinkState::Live,
                            LinkState::Lost,
                        ][k as usize],
                    },
                ),
                Op::Stale(stale) => Update::arm(
                    ARM,
                    ArmFact::Stale {
                        t,
                        signal: Signal::JointPositions,
                        stale,
                    },
                ),
                Op::Pose(a, b) => Update::arm(
                    ARM,
                    ArmFact::CurrentPose {
                        t,
                        pose: if a == b {
                            PoseState::At(a)
                        } else {
                            PoseState::Moving { from: a, to: b }
                        },
                    },
                ),
                Op::Outcome(ok) => Update::net(Remark::CommandOutcome {
                    t,
                    command: CommandKind::GoToPreset,
                    outcome: if ok {
                        Outcome::Completed
                    } else {
                        Outcome::Failed("blocked".into())
                    },
                }),
                Op::Stats(n) => Update::net(NetFact::Stats {
                    t,
                    stats: Box::new(NetStats {
                        datagrams: u64::from(n),
                        ..NetStats::default()
                    }),
                }),
                Op::Mark => Update::net(Remark::Mark {
                    t,
                    kind: MarkKind::Control,
                    label: format!("mark {i}"),
                }),
            }
        })
        .collect()
}

/// The state after applying every update up to `t`, the slow way.
fn reference(updates: &[Update], t: f64) -> ArmState {
    let mut s = ArmState::default();
    for u in updates.iter().filter(|u| u.t() <= t) {
        s.apply(u);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn state_at_from_checkpoints_equals_applying_everything(
        ops in prop::collection::vec(op(), 1500..2500),
        queries in prop::collection::vec(0.0f64..1.0, 12),
    ) {
        let updates = updates(&ops);
        let mut s = Session::new();
        for u in &updates {
            s.apply(u);
        }
        prop_assert!(s.discrete_updates() > CHECKPOINT_EVERY * 2, "checkpoints in use");
        let end = updates.last().map_or(0.0, Update::t);
        // Random times, exact update times, and both ends.
        let mut times: Vec<f64> = queries.iter().map(|q| q * (end + 0.5) - 0.25).collect();
        times.extend(queries.iter().map(|q| updates[(q * updates.len() as f64) as usize].t()));
        times.extend([end, -1.0]);
        for t in times {
            let want = reference(&updates, t);
            let got = s.state_at(t);
            prop_assert_eq!(format!("{got:?}"), format!("{want:?}"), "at t = {}", t);
        }
        prop_assert_eq!(format!("{:?}", s.state_at(end)), format!("{:?}", s.latest));
    }
}

#[test]
fn arriving_at_a_preset_is_a_transition_mark_but_the_starting_pose_is_not() {
    let mut s = Session::new();
    s.apply(&Update::arm(
        ARM,
        ArmFact::Presets {
            t: 0.0,
            presets: vec![PresetInfo {
                id: 2,
                name: "Deploy".into(),
                positions: None,
            }],
        },
    ));
    let pose = |t: f64, pose: PoseState| Update::arm(ARM, ArmFact::CurrentPose { t, pose });
    for u in [
        pose(0.5, PoseState::At(1)),
        pose(1.0, PoseState::Unknown),
        pose(2.0, PoseState::At(2)),
        pose(2.5, PoseState::At(2)),
        pose(3.0, PoseState::Unknown),
        pose(4.0, PoseState::At(7)),
    ] {
        s.apply(&u);
    }
    let got = marks(&s);
    assert_eq!(
        got,
        vec![
            (2.0, MarkKind::Transition, "at preset Deploy (2)"),
            (4.0, MarkKind::Transition, "at preset pose 7"),
        ]
    );
}

/// The session's marks as (time, kind, label).
fn marks(s: &Session) -> Vec<(f64, MarkKind, &str)> {
    s.marks
        .iter()
        .map(|m| (m.t, m.kind, m.label.as_str()))
        .collect()
}

#[test]
fn a_flapping_signal_gives_one_mark_per_stale_episode_with_its_duration() {
    let mut s = Session::new();
    s.apply(&control(0.5, ControlState::Held { authority: 200 }));
    let stale = |t: f64, stale: bool| {
        Update::arm(
            ARM,
            ArmFact::Stale {
                t,
                signal: Signal::EndEffectorForceTorque,
                stale,
            },
        )
    };
    // 300 stale/fresh flips 0.3 s apart (30 % loss): one episode of flapping.
    let mut t = 1.0;
    for _ in 0..150 {
        s.apply(&stale(t, true));
        s.apply(&stale(t + 0.1, false));
        t += 0.3;
    }
    s.apply(&status(60.0, ManagementState::Emergency));
    // A second episode, well apart from the first, still open.
    s.apply(&stale(100.0, true));
    let stale_marks: Vec<&Mark> = s
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Stale)
        .collect();
    assert_eq!(stale_marks.len(), 2, "{stale_marks:?}");
    let first = stale_marks[0];
    assert_eq!(first.t, 1.0);
    assert_eq!(first.times, 150);
    let end = first.end.expect("the first episode ended");
    assert!((end - (1.0 + 149.0 * 0.3 + 0.1)).abs() < 1e-9, "{end}");
    assert!(
        first.describe().contains("for 44.8 s"),
        "{}",
        first.describe()
    );
    assert!(first.describe().contains("150 times"));
    assert_eq!(stale_marks[1].end, None);
    // Control and emergency marks are still there, not buried.
    let kinds: Vec<MarkKind> = s.marks.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            MarkKind::Control,
            MarkKind::Stale,
            MarkKind::Emergency,
            MarkKind::Stale
        ]
    );
}

#[test]
fn stale_episodes_further_apart_than_the_merge_window_are_marked_apart() {
    let mut s = Session::new();
    for k in 0..5 {
        let t = f64::from(k) * (EPISODE_MERGE_S + 1.0);
        for (dt, stale) in [(0.0, true), (0.5, false)] {
            s.apply(&Update::arm(
                ARM,
                ArmFact::Stale {
                    t: t + dt,
                    signal: Signal::JointPositions,
                    stale,
                },
            ));
        }
    }
    assert_eq!(s.marks.len(), 5);
    assert!(
        s.marks
            .iter()
            .all(|m| m.times == 1 && m.end == Some(m.t + 0.5))
    );
}

fn wrench(t: f64, fz: f64) -> Update {
    Update::arm(
        ARM,
        ArmFact::ForceTorque {
            t,
            force: [Some(0.0), Some(0.0), Some(fz)],
            torque: [Some(0.0); 3],
        },
    )
}

#[test]
fn crossing_the_force_threshold_is_a_mark_and_changing_it_marks_the_history_again() {
    let mut s = Session::new();
    s.set_force_threshold(Some(50.0));
    // Up through 50 N, noise around it (one episode: hysteresis), down, and up again later.
    let profile = [
        (1.0, 10.0),
        (2.0, 60.0),
        (2.1, 49.0),
        (2.2, 51.0),
        (3.0, 20.0),
        (10.0, 80.0),
        (11.0, -70.0),
        (12.0, 0.0),
    ];
    for (t, fz) in profile {
        s.apply(&wrench(t, fz));
    }
    let got: Vec<(f64, Option<f64>)> = s
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Threshold)
        .map(|m| (m.t, m.end))
        .collect();
    assert_eq!(got, [(2.0, Some(3.0)), (10.0, Some(12.0))]);
    assert!(s.marks[0].label.contains("60.0 N above the 50 N threshold"));
    // A higher threshold: only the 80 N peak crosses it.
    s.set_force_threshold(Some(75.0));
    let got: Vec<f64> = s.marks.iter().map(|m| m.t).collect();
    assert_eq!(got, [10.0]);
    s.set_force_threshold(None);
    assert!(s.marks.is_empty());
}

#[test]
fn reserving_for_the_rest_of_a_file_grows_each_history_once_and_keeps_every_sample() {
    let (seen, total) = (4096u64, 12_288u64);
    let fill = |s: &mut Session, from: u64, to: u64| {
        for k in from..to {
            let t = k as f64 * 0.001;
            s.apply(&positions(t, &[t.sin(), -0.5, 0.25]));
            s.apply(&Update::arm(
                ARM,
                ArmFact::ForceTorque {
                    t: t + 0.0005,
                    force: [Some(t), None, Some(-t)],
                    torque: [Some(0.5), Some(0.25), None],
                },
            ));
        }
    };
    let mut plain = Session::new();
    fill(&mut plain, 0, total);

    let mut reserved = Session::new();
    fill(&mut reserved, 0, seen);
    reserved.reserve_for_rest(seen, total);
    let room = reserved.memory_bytes();
    fill(&mut reserved, seen, total);
    // The rest fitted in the room reserved: nothing grew.
    assert_eq!(reserved.memory_bytes(), room);
    assert!(
        room < plain.memory_bytes(),
        "{room} vs {} bytes doubling",
        plain.memory_bytes()
    );
    assert_eq!(reserved.positions.times(), plain.positions.times());
    assert_eq!(reserved.ft.times(), plain.ft.times());
    for t in [0.0, 1.2345, 7.0, 12.287] {
        assert_eq!(
            format!("{:?}", reserved.state_at(t)),
            format!("{:?}", plain.state_at(t))
        );
    }

    // A file that lies about its size reserves a bounded amount, and gives it back.
    let mut lied = Session::new();
    fill(&mut lied, 0, 100);
    lied.reserve_for_rest(100, u64::MAX);
    assert!(lied.memory_bytes() > 1 << 28, "room was reserved");
    lied.trim_reserve();
    fill(&mut lied, 100, 200);
    assert!(lied.memory_bytes() < 1 << 20, "{}", lied.memory_bytes());
    assert_eq!(lied.positions.len(), 200);
}
