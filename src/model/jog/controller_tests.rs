//! Tests of the jog controller, driven by a fake clock.

use super::*;
use crate::model::arm::{ArmSpec, Joint};

const T: f64 = 0.05;

/// Two joints: a revolute one (±1 rad, 1 rad/s) and a prismatic one (0..0.5 m, 0.1 m/s).
fn spec() -> ArmSpec {
    ArmSpec {
        mount: None,
        joints: vec![
            Joint {
                min: Some(-1.0),
                max: Some(1.0),
                max_speed: Some(1.0),
                ..Joint::revolute(0.0, 0.0, 0.0)
            },
            Joint {
                max_speed: Some(0.1),
                ..Joint::prismatic(0.2, 0.0, 0.0, 0.0, 0.5)
            },
        ],
    }
}

const Q: [f64; 2] = [0.0, 0.25];

fn pass() -> Gates {
    Gates::all_pass(Source::Gamepad)
}

fn joints(at: f64, d: [f64; 2]) -> Input {
    Input {
        at,
        deflection: Deflection::Joints(d.to_vec()),
    }
}

fn velocities(out: Option<JogOut>) -> Vec<f64> {
    match out.expect("a command").motion {
        Motion::Joints(v) => v,
        Motion::Twist(t) => panic!("a twist: {t:?}"),
    }
}

fn is_zero_stop(out: Option<&JogOut>) -> bool {
    out.is_some_and(|o| o.stop && o.motion.is_zero())
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
}

#[test]
fn streams_at_the_period_while_deflected() {
    let mut c = JogController::new(JogSettings::default());
    assert_eq!(c.next_due(), None);
    assert!(
        c.tick(0.0, &joints(0.0, [1.0, 0.0]), &pass(), &spec(), &Q)
            .is_some()
    );
    assert_eq!(c.next_due(), Some(T));
    assert!(!c.is_due(0.02));
    assert_eq!(
        c.tick(0.02, &joints(0.02, [1.0, 0.0]), &pass(), &spec(), &Q),
        None
    );
    assert!(c.is_due(T));
    assert!(
        c.tick(T, &joints(T, [1.0, 0.0]), &pass(), &spec(), &Q)
            .is_some()
    );
    assert!(c.is_moving());
    let started: Vec<Event> = c.events().collect();
    assert_eq!(started, [Event::Started { at: 0.0 }]);
}

#[test]
fn velocity_is_deflection_times_the_scale_times_the_joints_maximum() {
    let mut c = JogController::new(JogSettings::default());
    let v = velocities(c.tick(0.0, &joints(0.0, [0.5, -1.0]), &pass(), &spec(), &Q));
    // 20 % of 1 rad/s at half deflection; 20 % of 0.1 m/s backwards.
    assert!(close(&v, &[0.1, -0.02]), "{v:?}");
}

#[test]
fn the_speed_scale_is_settable_and_clamped_to_the_reduced_limit() {
    let mut c = JogController::new(JogSettings::default());
    c.set_speed_scale(0.5);
    let v = velocities(c.tick(0.0, &joints(0.0, [5.0, 0.0]), &pass(), &spec(), &Q));
    // A deflection past full counts as full: 50 % of 1 rad/s.
    assert!(close(&v, &[0.5, 0.0]), "{v:?}");
    c.set_speed_scale(1.5);
    assert_eq!(c.settings().speed_scale, 1.0);
    c.set_speed_scale(-0.1);
    assert_eq!(c.settings().speed_scale, 0.0);
    c.set_speed_scale(f64::NAN);
    assert_eq!(c.settings().speed_scale, 0.0);
}

#[test]
fn release_sends_a_zero_at_once_then_repeats_it_then_falls_silent() {
    let mut c = JogController::new(JogSettings::default());
    c.tick(0.0, &joints(0.0, [1.0, 0.0]), &pass(), &spec(), &Q);
    c.tick(T, &joints(T, [1.0, 0.0]), &pass(), &spec(), &Q);
    // Released between ticks: the zero goes out now, not at the next due time.
    let first = c.tick(0.06, &Input::released(0.06), &pass(), &spec(), &Q);
    assert!(is_zero_stop(first.as_ref()), "{first:?}");
    assert_eq!(
        first.map(|o| o.motion),
        Some(Motion::Joints(vec![0.0, 0.0]))
    );
    let mut zeros = 1;
    let mut t = 0.06;
    while t < 1.0 {
        t += 0.01;
        if let Some(o) = c.tick(t, &Input::released(t), &pass(), &spec(), &Q) {
            assert!(is_zero_stop(Some(&o)));
            zeros += 1;
        }
    }
    assert_eq!(zeros, 3);
    assert!(!c.is_streaming());
    let events: Vec<Event> = c.events().collect();
    assert_eq!(
        events,
        [
            Event::Started { at: 0.0 },
            Event::Stopped {
                at: 0.06,
                reason: StopReason::Released
            }
        ]
    );
}

/// `pass()` with gate `g` failing.
fn without(g: Gate) -> Gates {
    let mut x = pass();
    x.set(g, false);
    x
}

#[test]
fn every_gate_lost_stops_with_a_zero_at_the_next_tick_and_says_why() {
    for g in Gate::ALL {
        let mut c = JogController::new(JogSettings::default());
        c.tick(0.0, &joints(0.0, [1.0, 1.0]), &pass(), &spec(), &Q);
        // The gate goes while the operator still deflects: the next scheduled tick stops.
        let out = c.tick(T, &joints(T, [1.0, 1.0]), &without(g), &spec(), &Q);
        assert!(is_zero_stop(out.as_ref()), "{g:?}: {out:?}");
        let events: Vec<Event> = c.events().collect();
        assert_eq!(
            events[1],
            Event::Stopped {
                at: T,
                reason: StopReason::Gate(g)
            },
            "{g:?}"
        );
        // Still deflected, still blocked: zeros, then silence, never motion.
        let mut t = T;
        for _ in 0..20 {
            t += T;
            let out = c.tick(t, &joints(t, [1.0, 1.0]), &without(g), &spec(), &Q);
            assert!(
                out.is_none() || is_zero_stop(out.as_ref()),
                "{g:?}: {out:?}"
            );
        }
        assert!(!c.is_streaming());
        assert_eq!(c.events().count(), 0, "{g:?}: said once");
    }
}

#[test]
fn a_gate_lost_between_ticks_stops_at_once() {
    let mut c = JogController::new(JogSettings::default());
    c.tick(0.0, &joints(0.0, [1.0, 0.0]), &pass(), &spec(), &Q);
    let out = c.tick(
        0.01,
        &joints(0.01, [1.0, 0.0]),
        &without(Gate::ControlHeld),
        &spec(),
        &Q,
    );
    assert!(is_zero_stop(out.as_ref()));
    let words: Vec<String> = c.events().map(|e| e.to_string()).collect();
    assert_eq!(words, ["jog started", "jog stopped: control lost"]);
}

#[test]
fn input_older_than_one_period_counts_as_released() {
    let mut c = JogController::new(JogSettings::default());
    let held = joints(0.0, [1.0, 0.0]);
    assert!(!velocities(c.tick(0.0, &held, &pass(), &spec(), &Q)).is_empty());
    // One period old: still fresh.
    let out = c.tick(T, &held, &pass(), &spec(), &Q);
    assert!(out.is_some_and(|o| !o.stop));
    // Older: stopped, and stale input never starts motion.
    let out = c.tick(2.0 * T, &held, &pass(), &spec(), &Q);
    assert!(is_zero_stop(out.as_ref()));
    assert!(c.events().any(|e| e
        == Event::Stopped {
            at: 2.0 * T,
            reason: StopReason::InputStale
        }));
    let mut fresh = JogController::new(JogSettings::default());
    assert_eq!(fresh.tick(1.0, &held, &pass(), &spec(), &Q), None);
}

#[test]
fn a_blocked_request_sends_nothing_and_is_said_once_per_gate() {
    let mut c = JogController::new(JogSettings::default());
    let no_control = without(Gate::ControlHeld);
    for i in 0..5 {
        let t = f64::from(i) * T;
        assert_eq!(
            c.tick(t, &joints(t, [1.0, 0.0]), &no_control, &spec(), &Q),
            None
        );
    }
    let events: Vec<Event> = c.events().collect();
    assert_eq!(
        events,
        [Event::Refused {
            at: 0.0,
            gate: Gate::ControlHeld
        }]
    );
    assert_eq!(events[0].to_string(), "jog refused: no control of this arm");
    // Control taken: motion starts at once.
    let out = c.tick(0.3, &joints(0.3, [1.0, 0.0]), &pass(), &spec(), &Q);
    assert!(out.is_some_and(|o| !o.stop));
    assert_eq!(c.events().collect::<Vec<_>>(), [Event::Started { at: 0.3 }]);
}

#[test]
fn soft_limits_stop_short_of_a_limit_and_allow_motion_away() {
    let mut c = JogController::new(JogSettings::default());
    let near = [0.99, 0.499];
    let v = velocities(c.tick(0.0, &joints(0.0, [1.0, 1.0]), &pass(), &spec(), &near));
    assert_eq!(v, [0.0, 0.0]);
    let v = velocities(c.tick(T, &joints(T, [-1.0, -1.0]), &pass(), &spec(), &near));
    assert!(close(&v, &[-0.2, -0.02]), "{v:?}");
}

#[test]
fn missing_or_unreadable_positions_block_as_stale_joint_data() {
    let mut c = JogController::new(JogSettings::default());
    let d = joints(0.0, [1.0, 0.0]);
    assert_eq!(c.tick(0.0, &d, &pass(), &spec(), &[]), None);
    assert_eq!(c.tick(0.0, &d, &pass(), &spec(), &[0.0, f64::NAN]), None);
    assert_eq!(
        c.events().next(),
        Some(Event::Refused {
            at: 0.0,
            gate: Gate::FreshJointData
        })
    );
}

#[test]
fn a_joint_without_a_maximum_speed_is_not_moved() {
    let mut s = spec();
    s.joints[0].max_speed = None;
    let mut c = JogController::new(JogSettings::default());
    let v = velocities(c.tick(0.0, &joints(0.0, [1.0, 1.0]), &pass(), &s, &Q));
    assert!(close(&v, &[0.0, 0.02]), "{v:?}");
}

#[test]
fn drift_inside_the_deadband_and_unreadable_axes_are_no_deflection() {
    let mut c = JogController::new(JogSettings::default());
    assert_eq!(
        c.tick(0.0, &joints(0.0, [0.01, -0.02]), &pass(), &spec(), &Q),
        None
    );
    assert_eq!(
        c.tick(0.0, &joints(0.0, [f64::NAN, 0.0]), &pass(), &spec(), &Q),
        None
    );
    assert_eq!(c.events().count(), 0);
}

fn twist(at: f64, axes: [f64; 6]) -> Input {
    Input {
        at,
        deflection: Deflection::Twist {
            axes,
            frame: Frame::Tool,
        },
    }
}

#[test]
fn a_tool_point_twist_is_scaled_and_stopped_in_its_own_frame() {
    let mut c = JogController::new(JogSettings::default());
    let out = c.tick(
        0.0,
        &twist(0.0, [1.0, 0.0, -0.5, 0.0, 0.0, 1.0]),
        &pass(),
        &spec(),
        &Q,
    );
    let Some(JogOut {
        motion: Motion::Twist(t),
        stop: false,
    }) = out
    else {
        panic!("not a moving twist");
    };
    assert_eq!(t.frame, Frame::Tool);
    assert!(close(&t.linear, &[0.05, 0.0, -0.025]), "{t:?}");
    assert!(close(&t.angular, &[0.0, 0.0, 0.2]), "{t:?}");
    let out = c.tick(0.01, &Input::released(0.01), &pass(), &spec(), &Q);
    assert_eq!(
        out,
        Some(JogOut {
            motion: Motion::Twist(Twist {
                linear: [0.0; 3],
                angular: [0.0; 3],
                frame: Frame::Tool
            }),
            stop: true
        })
    );
}

#[test]
fn switching_from_joint_to_tool_jog_stops_the_joints_first() {
    let mut c = JogController::new(JogSettings::default());
    c.tick(0.0, &joints(0.0, [1.0, 0.0]), &pass(), &spec(), &Q);
    let d = |t| twist(t, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let out = c.tick(T, &d(T), &pass(), &spec(), &Q);
    assert_eq!(
        out.as_ref().map(|o| &o.motion),
        Some(&Motion::Joints(vec![0.0, 0.0]))
    );
    assert!(c.events().any(|e| matches!(
        e,
        Event::Stopped {
            reason: StopReason::ModeChanged,
            ..
        }
    )));
    // The joint zeros finish, then the twist starts.
    let mut t = T;
    let mut seen = Vec::new();
    while seen.len() < 4 {
        t += T;
        if let Some(o) = c.tick(t, &d(t), &pass(), &spec(), &Q) {
            seen.push(o);
        }
    }
    assert!(
        seen[..2]
            .iter()
            .all(|o| o.stop && matches!(o.motion, Motion::Joints(_)))
    );
    assert!(
        seen[2..]
            .iter()
            .all(|o| !o.stop && matches!(o.motion, Motion::Twist(_)))
    );
}

/// A small deterministic generator for the property test below.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[test]
fn never_commands_motion_while_a_gate_blocks_and_always_stops_within_one_period() {
    let mut rng = Lcg(32);
    let mut c = JogController::new(JogSettings::default());
    let mut gates = pass();
    let mut deflected = true;
    let mut t = 0.0;
    for _ in 0..20_000 {
        // Ticks at uneven times, as frames and inputs come.
        t += 0.002 * (1 + rng.next() % 20) as f64;
        if rng.chance(3) {
            let g = Gate::ALL[(rng.next() % 9) as usize];
            gates = if rng.chance(50) { pass() } else { without(g) };
        }
        if rng.chance(3) {
            deflected = !deflected;
        }
        let input = if deflected {
            joints(t, [0.7, -0.3])
        } else {
            Input::released(t)
        };
        let blocked = !gates.blocking().is_empty();
        let was_moving = c.is_moving();
        let out = c.tick(t, &input, &gates, &spec(), &Q);
        if blocked || !deflected {
            assert!(
                out.is_none() || is_zero_stop(out.as_ref()),
                "at {t}: {out:?}"
            );
            if was_moving {
                // The stop goes out on the tick that first sees the loss.
                assert!(is_zero_stop(out.as_ref()), "at {t}");
            }
        }
        if let Some(due) = c.next_due() {
            assert!(
                due - t <= T + 1e-9,
                "the next command is at most a period away"
            );
        }
    }
}

#[test]
fn a_deflection_past_the_last_joint_asks_for_nothing() {
    let mut c = JogController::new(JogSettings::default());
    let extra = Input {
        at: 0.0,
        deflection: Deflection::Joints(vec![0.0, 0.0, 1.0]),
    };
    assert_eq!(c.tick(0.0, &extra, &pass(), &spec(), &Q), None);
    let key = Input {
        at: 0.0,
        deflection: Deflection::joint(2, 1, -1.0),
    };
    let v = velocities(c.tick(0.0, &key, &pass(), &spec(), &Q));
    assert!(close(&v, &[0.0, -0.02]), "{v:?}");
}

#[test]
fn settings_without_a_schedule_get_the_default_period() {
    for period in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let c = JogController::new(JogSettings {
            period,
            speed_scale: 3.0,
            ..JogSettings::default()
        });
        assert_eq!(c.settings().period, T);
        assert_eq!(c.settings().speed_scale, 1.0);
    }
}

#[test]
fn a_joint_held_still_by_its_soft_limit_is_said_as_such_not_as_moving() {
    let mut c = JogController::new(JogSettings::default());
    // Joint 1 at its upper limit, deflected upwards: the stream goes on, the joint does not.
    let at_limit = [1.0, 0.25];
    let out = c.tick(0.0, &joints(0.0, [1.0, 0.0]), &pass(), &spec(), &at_limit);
    assert!(close(&velocities(out), &[0.0, 0.0]));
    assert!(c.is_moving());
    assert_eq!(c.at_soft_limit(), Some(0));
    // Away from the limit it moves, and nothing is said.
    let out = c.tick(T, &joints(T, [-1.0, 0.0]), &pass(), &spec(), &at_limit);
    assert!(velocities(out)[0] < 0.0);
    assert_eq!(c.at_soft_limit(), None);
    // Mid-range: never at a limit.
    let out = c.tick(2.0 * T, &joints(2.0 * T, [1.0, 1.0]), &pass(), &spec(), &Q);
    assert!(velocities(out).iter().all(|v| *v > 0.0));
    assert_eq!(c.at_soft_limit(), None);
}
