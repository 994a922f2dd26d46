//! Jogging an arm by hand (issue 32): the stream of motion commands runs here, next to the
//! socket, so a window that stalls cannot leave a command latched.
//!
//! - The window (or `jaus-ocu control … jog`) sends [`Command::Jog`] with what the operator
//!   holds, at every change and at least once a period while anything is held. Each followed
//!   arm keeps one [`JogController`](crate::model::jog::JogController): it streams a command
//!   every period while every gate passes and the input is younger than one period, and
//!   otherwise sends an explicit zero at once, repeats it, then goes silent. The arm's timers tick it
//!   ([`Client::arm_deadline`] includes its schedule), so input that stops arriving stops the
//!   arm within one period without any new message.
//! - Gates known here are filled from the arm's own state: the focused, live arm; no
//!   emergency; control held (the arm's word); READY; joint positions fresh (the staleness
//!   rule of `sub`); one input at a time. The window's own gates (live view, focus,
//!   gamepad, enable) come with the input.
//! - The driver follows the services the arm lists: position targets where it offers
//!   `ManipulatorJointPositionDriver` (each leads the arm by at most its stopping distance
//!   plus one period, so a cut link or a dead OCU leaves it stopping within that bound);
//!   else joint velocities, else efforts. Before the first command of each jog a
//!   `SetJointMotionProfile` with the reduced speeds goes out (the drivers move only within
//!   one). A velocity or effort jog first needs the arm's access timeout: unknown, 0 (never)
//!   or longer than the operator's limit, it is refused unless acknowledged for the session.
//! - What happens is said: [`ArmFact::Jog`] on every change of the status, and a timeline
//!   mark for each start, stop (with why) and refusal.

use super::arm_jog::ArmJog;
use super::{Client, Output};
use glam::{DQuat, DVec3};

use super::clearance::jog_guard;
use crate::jaus::manipulator::{
    EndEffectorVelocity, JointMotionProfile, JointValue, SetEndEffectorVelocityState,
    SetJointEffort, SetJointMotionProfile, SetJointPositions, SetJointVelocity,
};
use crate::jaus::{JausId, JointKind, Message};
use crate::model::arm::{ArmSpec, JointType};
use crate::model::clearance::guard::JogGuard;
use crate::model::clearance::{Settings as ClearanceSettings, limits as clearance_limits};
use crate::model::command::CommandKind;
use crate::model::fresh::Samples;
use crate::model::jog::ArmGateFacts;
use crate::model::jog::{
    AxisTrack, Deflection, Event, Frame, Gate, Gates, Input, JogDriver, JogOut, JogRequest,
    JogStatus, Motion, OFF_AXIS_M, StopReason, Twist, joint_at_limit, joint_target, stop_bound,
};
use crate::model::kinematics::{end_effector_pose, tool_point};
use crate::model::update::{
    ArmFact, ControlState, LinkState, ManagementState, MarkKind, Outcome, Remark, Signal,
};

/// Seconds in which the motion profile we send lets a joint brake from its reduced speed to
/// rest: its deceleration rate is the reduced speed over this. A position target leads the
/// arm by the stopping distance at that rate plus one period of motion.
pub const BRAKE_S: f64 = 0.25;

impl ArmJog {
    /// A jog's first motion went out: a tool-point jog's track starts where the tool point
    /// is, along the commanded linear velocity in the manipulator frame.
    fn start_track(&mut self, spec: &ArmSpec, o: &JogOut, driver: Option<JogDriver>) {
        self.track = match (&o.motion, driver) {
            (Motion::Twist(t), Some(JogDriver::Tool)) => {
                let linear = tool_command(spec, &self.positions, t).velocity.linear;
                tool_point(spec, &self.positions, [0.0; 3])
                    .ok()
                    .map(|p| AxisTrack::new(p, glam::DVec3::from_array(linear)))
            }
            _ => None,
        };
    }

    /// Whether the tool-point jog streaming still keeps to its axis: once the tool point
    /// computed from the reported positions leaves it by more than [`OFF_AXIS_M`], the jog is
    /// held stopped (said in words, with the joint at its limit) until the input is let go.
    /// Returns the words when it left just now.
    fn watch_axis(
        &mut self,
        spec: &ArmSpec,
        req: &JogRequest,
        driver: Option<JogDriver>,
    ) -> Option<String> {
        if req.input.deflection == Deflection::Released {
            self.off_axis = None;
            self.track = None;
            return None;
        }
        if self.off_axis.is_some()
            || driver != Some(JogDriver::Tool)
            || !self.controller.is_moving()
        {
            return None;
        }
        let track = self.track?;
        let now = tool_point(spec, &self.positions, [0.0; 3]).ok()?;
        let off = track.off(now);
        if off <= OFF_AXIS_M {
            return None;
        }
        let why = joint_at_limit(spec, &self.positions).map_or_else(
            || "the arm could not follow it (near a singularity?)".to_string(),
            |i| format!("joint {} is at its limit", i + 1),
        );
        let words = format!(
            "the tool point left the jog's axis by {:.0} mm after {:.0} mm along it: {why}. \
             Let go, then jog that joint away from its limit or choose another axis",
            off * 1000.0,
            track.along(now).abs() * 1000.0
        );
        self.off_axis = Some(words.clone());
        Some(words)
    }
}

/// The driver a jog of this deflection uses on an arm offering `offers`.
fn choose_driver(
    offers: &dyn Fn(&str) -> bool,
    twist: bool,
    effort_as_velocity: bool,
) -> Option<JogDriver> {
    let m = "urn:jaus:jss:manipulator:";
    if twist {
        return offers(&format!("{m}ManipulatorEndEffectorVelocityStateDriver"))
            .then_some(JogDriver::Tool);
    }
    if offers(&format!("{m}ManipulatorJointPositionDriver")) {
        Some(JogDriver::Position)
    } else if offers(&format!("{m}ManipulatorJointVelocityDriver")) {
        Some(JogDriver::Velocity)
    } else if offers(&format!("{m}PrimitiveManipulator")) {
        Some(if effort_as_velocity {
            JogDriver::EffortAsVelocity
        } else {
            JogDriver::Effort
        })
    } else {
        None
    }
}

/// The largest stop bound over the arm's joints at the reduced speeds, in the units of the
/// joint it belongs to, and whether that joint is revolute.
fn position_bound(spec: &ArmSpec, scale: f64, period: f64) -> (f64, bool) {
    spec.joints
        .iter()
        .filter_map(|j| {
            let v = j.max_speed.filter(|v| v.is_finite() && *v > 0.0)? * scale;
            let b = stop_bound(v, v / BRAKE_S, period);
            Some((b, j.kind == JointType::Revolute))
        })
        .fold((0.0, true), |a, b| if b.0 > a.0 { b } else { a })
}

/// What a cut link does to a jog with `driver` ([`link_drop_words`]), or why there is no
/// driver for it, in words.
fn driver_words(
    driver: Option<JogDriver>,
    twist: bool,
    spec: &ArmSpec,
    req: &JogRequest,
    period: f64,
    control_timeout: Option<u8>,
) -> Result<String, (String, bool)> {
    match driver {
        Some(d) => link_drop_words(d, spec, req, period, control_timeout),
        None if twist => Err((
            "this arm offers no tool-point velocity driver \
             (ManipulatorEndEffectorVelocityStateDriver): jog its joints instead"
                .into(),
            false,
        )),
        None => Err((
            "this arm offers no joint driver (position, velocity or effort): it cannot be \
             jogged"
                .into(),
            false,
        )),
    }
}

/// The words for the mode the next jog may use, whatever this input's (the strip says the
/// selected mode's): the tool driver's (`None`: not offered), and the position driver's
/// bound per joint (empty: the joint driver is another).
fn next_jog_words(
    offers: &dyn Fn(&str) -> bool,
    spec: &ArmSpec,
    req: &JogRequest,
    period: f64,
    control_timeout: Option<u8>,
) -> (Option<String>, Vec<f64>) {
    let joint_driver = choose_driver(offers, false, req.options.effort_as_velocity);
    let tool = choose_driver(offers, true, false)
        .map(|d| link_drop_words(d, spec, req, period, control_timeout).unwrap_or_else(|(w, _)| w));
    let bounds = if joint_driver == Some(JogDriver::Position) {
        joint_bounds(spec, req.options.speed_scale, period)
    } else {
        Vec::new()
    };
    (tool, bounds)
}

/// Each joint's stop bound at the reduced speed (rad or m; `NaN` where its maximum speed is
/// unknown), joint 1 first.
fn joint_bounds(spec: &ArmSpec, scale: f64, period: f64) -> Vec<f64> {
    spec.joints
        .iter()
        .map(|j| {
            j.max_speed
                .filter(|v| v.is_finite() && *v > 0.0)
                .map_or(f64::NAN, |v| {
                    let v = v * scale;
                    stop_bound(v, v / BRAKE_S, period)
                })
        })
        .collect()
}

/// What a cut link does to a jog with `driver`, and whether that needs the operator's
/// acknowledgement first (`Err`: refused, in words with what to do).
fn link_drop_words(
    driver: JogDriver,
    spec: &ArmSpec,
    req: &JogRequest,
    period: f64,
    control_timeout: Option<u8>,
) -> Result<String, (String, bool)> {
    if driver.stops_by_itself() {
        // The joint jogged, in its own unit; else (released) the largest of the arm's.
        let jogged = match &req.input.deflection {
            Deflection::Joints(d) => d.iter().position(|x| *x != 0.0),
            _ => None,
        };
        let (b, revolute) = jogged
            .and_then(|i| {
                let joint = spec.joints.get(i)?;
                let b = *joint_bounds(spec, req.options.speed_scale, period).get(i)?;
                b.is_finite()
                    .then_some((b, joint.kind == JointType::Revolute))
            })
            .unwrap_or_else(|| position_bound(spec, req.options.speed_scale, period));
        let bound = if revolute {
            format!("{b:.3} rad ({:.1}°)", b.to_degrees())
        } else {
            format!("{:.1} mm", b * 1000.0)
        };
        // Each position target leads the arm by at most its stopping distance plus one
        // period of motion: a cut link leaves it stopping within that.
        return Ok(format!("if the link drops: the arm stops within {bound}"));
    }
    let Some(t) = control_timeout else {
        return Err((
            format!(
                "the arm's access timeout is not known yet (QueryTimeout unanswered): a {} jog \
             would keep moving for an unknown time if this link drops. Wait for the answer, \
             or jog an arm that offers the position driver",
                driver.name()
            ),
            false,
        ));
    };
    let t = f64::from(t);
    let moves_on = if t == 0.0 {
        "keeps moving until stopped (its access timeout is 0: never)".to_string()
    } else {
        format!("keeps moving for up to {t:.0} s (its access timeout)")
    };
    if (t == 0.0 || t > req.options.timeout_limit) && !req.options.acknowledge_timeout {
        return Err((
            format!(
                "the arm {moves_on} if this link drops, past the {:.1} s limit: acknowledge \
                 it for this session (the jog strip's button, or `--acknowledge-timeout`), or \
                 jog an arm that offers the position driver",
                req.options.timeout_limit
            ),
            true,
        ));
    }
    Ok(format!("if the link drops: the arm {moves_on}"))
}

/// A joint value of `kind`'s unit.
fn joint_value(kind: JointType, value: f64) -> JointValue {
    match kind {
        JointType::Revolute => JointValue::revolute(value),
        JointType::Prismatic => JointValue::prismatic(value),
    }
}

/// The motion profile of a jog at `scale`: each joint's reduced speed, braking in
/// [`BRAKE_S`]. Joints without a known maximum speed get a zero speed (not jogged).
fn motion_profile(spec: &ArmSpec, scale: f64) -> SetJointMotionProfile {
    SetJointMotionProfile {
        joint_motion_profiles: spec
            .joints
            .iter()
            .map(|j| {
                let v = j
                    .max_speed
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .unwrap_or(0.0)
                    * scale;
                JointMotionProfile {
                    joint_type: match j.kind {
                        JointType::Revolute => JointKind::Revolute,
                        JointType::Prismatic => JointKind::Prismatic,
                    },
                    max_speed: v,
                    max_acceleration: v / BRAKE_S,
                    max_deceleration: v / BRAKE_S,
                }
            })
            .collect(),
    }
}

impl Client {
    /// [`Command::Jog`](crate::model::command::Command::Jog): the operator's input for an
    /// arm. Refused in words only when the arm is not followed (nothing here could move or
    /// stop it); otherwise taken, and the stream ticked at once (a release stops now).
    pub(super) fn jog_command(&mut self, now: f64, req: JogRequest, out: &mut Output) {
        let id = JausId::from(req.arm);
        if !self.follows(id) {
            Self::outcome(
                out,
                now,
                CommandKind::Jog,
                Outcome::Rejected(format!("{id} is not followed: nothing to jog")),
            );
            return;
        }
        self.with_arm(id, out, |c, out| {
            c.jog_input(now, req);
            c.jog_tick(now, out);
        });
    }

    /// Stops the arm in hand's jog now, if one streams (its first zero goes out; the
    /// process is leaving or the arm is forgotten, so no repeats follow).
    pub(super) fn jog_stop_now(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        if !s.jog.controller.is_streaming() {
            return;
        }
        if let Some(r) = &mut s.jog.request {
            r.input = Input::released(now);
        }
        self.jog_tick(now, out);
    }

    /// Takes `req` as the arm's jog input, unless another input holds the arm: the jog of
    /// the input that moves the arm goes on, and the other is said to be refused.
    fn jog_input(&mut self, now: f64, req: JogRequest) {
        let Some(s) = &mut self.arm else { return };
        let j = &mut s.jog;
        let period = j.controller.settings().period;
        let holder = j.request.as_ref().filter(|r| {
            j.controller.is_moving()
                && r.source != req.source
                && now - r.input.at <= period
                && r.input.deflection != Deflection::Released
        });
        if holder.is_some() {
            j.other_refused = req.input.deflection != Deflection::Released;
            j.other_at = req.input.at;
            return;
        }
        // The holder's own inputs leave the other's refusal said (it is still asking: the
        // status must not flicker at each input); another input taken ends it.
        if j.request.as_ref().is_none_or(|r| r.source != req.source) {
            j.other_refused = false;
        }
        j.request = Some(req);
    }

    /// The clearance band and margin of the arm in hand's jog request (the window's
    /// settings, `control`'s options), floored, in force for its guard.
    fn clearance_settings_of_request(&mut self) {
        let Some(o) = self
            .arm
            .as_ref()
            .and_then(|s| s.jog.request.as_ref())
            .map(|r| r.options)
        else {
            return;
        };
        let wanted = ClearanceSettings {
            band: o.clearance_band,
            margin: o.clearance_margin,
        }
        .floored();
        if self.clearance.clearance.settings() != wanted {
            self.clearance.clearance.set_settings(wanted);
        }
    }

    /// The arm in hand's jog at `now`: gates, driver, then the controller's command (if
    /// any) on the wire; the status and events said.
    pub(super) fn jog_tick(&mut self, now: f64, out: &mut Output) {
        // An arm never jogged costs nothing here (this runs at every step of every arm).
        if self.arm.as_ref().is_none_or(|s| s.jog.request.is_none()) {
            return;
        }
        let focus = self.focus;
        let peer = self.arm.as_ref().and_then(|s| self.endpoint.peer(s.id));
        let peer = peer.map(|p| p.data.clone());
        self.clearance_settings_of_request();
        let Some(s) = &mut self.arm else { return };
        let Some(req) = s.jog.request.clone() else {
            return;
        };
        let Some(spec) = s.spec.clone() else { return };
        let offers = |uri: &str| peer.as_ref().is_none_or(|p| p.offers(uri));
        let twist = matches!(req.input.deflection, Deflection::Twist { .. });
        let driver = choose_driver(&offers, twist, req.options.effort_as_velocity);
        let period = s.jog.controller.settings().period;
        let words = driver_words(driver, twist, &spec, &req, period, s.control_timeout);
        let (if_link_drops_tool, position_bounds) =
            next_jog_words(&offers, &spec, &req, period, s.control_timeout);
        // The arm's own gates by the window's rule (`Gates::with_arm`), from what this side
        // knows of it.
        let gates = Gates {
            source: req.source,
            live_focused_arm: req.live && focus == Some(s.id) && s.link == LinkState::Live,
            one_source: true,
            window_focused: req.window_focused,
            gamepad_connected: req.gamepad_connected,
            enable_held: req.enable_held,
            ..Gates::all_pass(req.source)
        }
        .with_arm(ArmGateFacts {
            emergency: s.status == Some(ManagementState::Emergency),
            stop_pending: s.stop.is_some(),
            control_held: matches!(s.control, ControlState::Held { .. }),
            ready: s.status == Some(ManagementState::Ready),
            positions_fresh: positions_samples(s).fresh_at(now, self.lateness),
        });
        let j = &mut s.jog;
        let left_axis = j.watch_axis(&spec, &req, driver);
        let input = if words.is_ok() && j.off_axis.is_none() {
            req.input.clone()
        } else {
            Input::released(req.input.at)
        };
        j.controller.set_speed_scale(req.options.speed_scale);
        let starting = !j.controller.is_moving();
        let guard = jog_guard(
            &self.clearance,
            &self.arms,
            s.id,
            &spec,
            (j.tool_point, req.options.speed_scale, period),
        );
        let sent = j
            .controller
            .tick_guarded(now, &input, &gates, &spec, &j.positions, &guard);
        let asked = input.deflection != Deflection::Released;
        let mut blocking = if asked || j.controller.is_streaming() {
            gates.blocking()
        } else {
            crate::model::jog::GateSet::EMPTY
        };
        if j.other_refused && now - j.other_at <= period {
            blocking = blocking.with(Gate::OneSource);
        }
        let events: Vec<_> = j.controller.events().collect();
        let clearance = j.controller.guard_words().map(str::to_owned);
        let id = s.id;
        if let Some(o) = &sent
            && starting
            && !o.stop
        {
            j.start_track(&spec, o, driver);
        }
        if let Some(o) = sent {
            // Motion goes out with the driver the input asks for; a stop (and every zero
            // after it) with the driver of the motion it stops.
            let with = if o.stop {
                j.moving_with.or(driver)
            } else {
                j.moving_with = driver;
                driver
            };
            let scale = req.options.speed_scale;
            let messages = jog_messages(j, with, (&spec, &guard, scale), &o, starting);
            j.sent += 1;
            for m in messages {
                self.send(id, m, out);
            }
        }
        let why = (left_axis.as_deref(), clearance.as_deref());
        say_events(now, &events, why, out);
        let Some(s) = &mut self.arm else { return };
        let j = &mut s.jog;
        let status = JogStatus {
            moving: j.controller.is_moving(),
            source: Some(req.source),
            blocking,
            driver,
            refusal: j
                .off_axis
                .clone()
                .or_else(|| words.as_ref().err().map(|(w, _)| w.clone())),
            acknowledgeable: j.off_axis.is_none() && words.as_ref().err().is_some_and(|(_, a)| *a),
            if_link_drops: words.ok(),
            if_link_drops_tool,
            position_bounds,
            at_soft_limit: j.controller.at_soft_limit(),
            clearance,
            commands_sent: j.sent,
        };
        if !j.controller.is_streaming() && req.input.deflection == Deflection::Released {
            // Let go and silent: nothing left to tick until the next input.
            j.request = None;
        }
        if status != j.said {
            j.said = status.clone();
            out.fact(ArmFact::Jog {
                t: now,
                status: Box::new(status),
            });
        }
    }
}

/// What the network side knows of the arm's joint positions: its stale flag, the last
/// sample's receive time, how they are delivered (judged by `model::fresh`, the window's rule).
fn positions_samples(s: &super::FollowedArm) -> Samples {
    Samples {
        stale: s
            .stale
            .get(&Signal::JointPositions)
            .copied()
            .unwrap_or(false),
        last: s.last_sample.get(&Signal::JointPositions).copied(),
        delivery: s
            .subs
            .iter()
            .find(|x| x.signal == Signal::JointPositions)
            .and_then(super::sub::Sub::delivery),
    }
}

/// The controller's events as timeline marks; a stop for leaving the axis is said as that
/// (`left_axis`), not as a release; a stop for clearance in the guard's words.
fn say_events(
    now: f64,
    events: &[Event],
    (left_axis, clearance): (Option<&str>, Option<&str>),
    out: &mut Output,
) {
    for e in events {
        let (label, kind) = match (e, left_axis, clearance) {
            (Event::Stopped { .. }, Some(w), _) => (format!("jog stopped: {w}"), MarkKind::Command),
            (
                Event::Stopped {
                    reason: StopReason::Guard,
                    ..
                },
                None,
                Some(w),
            ) => (format!("jog {w}"), MarkKind::Clearance),
            _ => (e.to_string(), MarkKind::Command),
        };
        out.remark(Remark::Mark {
            t: now,
            kind,
            label,
        });
    }
}

/// The messages that put `o` on the wire with `driver`: the motion profile first when a jog
/// starts (the drivers move only within one), then the command.
fn jog_messages(
    j: &mut ArmJog,
    driver: Option<JogDriver>,
    (spec, guard, scale): (&ArmSpec, &JogGuard<'_>, f64),
    o: &JogOut,
    starting: bool,
) -> Vec<Message> {
    let mut messages = Vec::with_capacity(2);
    let Some(driver) = driver else {
        return messages;
    };
    if !o.stop && (starting || j.profile_scale != scale) {
        // Each jog sets its own profile (the arm forgets it when control passes), and a new
        // scale sets it again.
        messages.push(motion_profile(spec, scale).into());
        j.profile_scale = scale;
    }
    if starting && !o.stop {
        j.targets.clone_from(&j.positions);
    }
    let v = match &o.motion {
        Motion::Twist(t) if driver == JogDriver::Tool => {
            messages.push(tool_command(spec, &j.positions, t).into());
            return messages;
        }
        Motion::Twist(_) => return messages,
        Motion::Joints(v) => v,
    };
    let kinds = spec.joints.iter().map(|j| j.kind);
    match driver {
        JogDriver::Position => {
            let period = j.controller.settings().period;
            let soft = j.controller.settings().soft;
            if j.targets.len() != spec.joints.len() {
                j.targets.clone_from(&j.positions);
            }
            let before = j.targets.clone();
            for (i, joint) in spec.joints.iter().enumerate() {
                let (Some(&vi), Some(&q)) = (v.get(i), j.positions.get(i)) else {
                    continue;
                };
                if vi != 0.0 {
                    // The target advances one period of the commanded speed from the last
                    // (never from behind the arm), and never leads the arm by more than its
                    // stopping distance plus one period (the bound a cut link leaves).
                    let max = joint.max_speed.unwrap_or(0.0) * scale;
                    let lead = joint_target(joint, &soft, q, vi, max, (max / BRAKE_S, period));
                    let last = j.targets[i];
                    j.targets[i] = if vi > 0.0 {
                        (last.max(q) + vi * period).min(lead)
                    } else {
                        (last.min(q) + vi * period).max(lead)
                    };
                }
            }
            keep_targets_clear(guard, &j.positions, &mut j.targets, &before);
            // A zero re-sends the targets: the arm is braking towards them already.
            messages.push(
                SetJointPositions {
                    joint_positions: kinds
                        .zip(&j.targets)
                        .map(|(k, t)| joint_value(k, *t))
                        .collect(),
                }
                .into(),
            );
        }
        JogDriver::Velocity => messages.push(
            SetJointVelocity {
                joint_velocities: kinds.zip(v).map(|(k, x)| joint_value(k, *x)).collect(),
            }
            .into(),
        ),
        JogDriver::Effort | JogDriver::EffortAsVelocity => {
            let efforts = spec
                .joints
                .iter()
                .zip(v)
                .map(|(joint, x)| {
                    let e = if driver == JogDriver::EffortAsVelocity {
                        *x
                    } else {
                        let max = joint
                            .max_speed
                            .filter(|m| *m > 0.0)
                            .unwrap_or(f64::INFINITY);
                        x / max * 100.0
                    };
                    e.clamp(-100.0, 100.0)
                })
                .collect();
            messages.push(
                SetJointEffort {
                    joint_efforts: efforts,
                }
                .into(),
            );
        }
        // A joint deflection never picks the tool driver (`choose_driver`).
        JogDriver::Tool => {}
    }
    messages
}

/// Position targets are never placed where a gap they close is inside its stop margin: a
/// target that would be is not advanced (the last one, checked when it was placed, stays).
fn keep_targets_clear(
    guard: &JogGuard<'_>,
    positions: &[f64],
    targets: &mut Vec<f64>,
    before: &[f64],
) {
    if targets.len() != positions.len() || targets.as_slice() == before {
        return;
    }
    let settings = guard.clearance.settings();
    let now = guard.effective_at(positions);
    let at = guard.effective_at(targets);
    let closes_inside = now.iter().zip(&at).any(|(n, t)| {
        let (margin, _) = clearance_limits(&settings, t.allowed > 0.0);
        t.effective < n.effective - 1e-6 && t.effective < margin
    });
    if closes_inside {
        targets.clear();
        targets.extend_from_slice(before);
    }
}

/// `SetEndEffectorVelocityState` for `t`: the message has no frame field and means the
/// arm's base (manipulator) frame, so a twist in the tool frame is turned into it by the
/// orientation of frame n at `positions`. Where that cannot be computed (positions missing
/// or wrong in number) the command is a zero: nothing moves on a guess.
fn tool_command(spec: &ArmSpec, positions: &[f64], t: &Twist) -> SetEndEffectorVelocityState {
    let velocity = match t.frame {
        Frame::Base => Some((t.linear, t.angular)),
        Frame::Tool => end_effector_pose(spec, positions, [0.0; 3])
            .ok()
            .map(|(_, q)| {
                let r = DQuat::from_xyzw(q[1], q[2], q[3], q[0]);
                let turn = |v: [f64; 3]| r.mul_vec3(DVec3::from_array(v)).to_array();
                (turn(t.linear), turn(t.angular))
            }),
    };
    let (linear, angular) = velocity.unwrap_or(([0.0; 3], [0.0; 3]));
    SetEndEffectorVelocityState {
        velocity: EndEffectorVelocity { angular, linear },
    }
}
