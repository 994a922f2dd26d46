//! The jog's streaming state machine, one per arm: fed the time, the operator's deflection,
//! the gates and the arm's positions each tick, it returns the command to put on the wire.
//!
//! JAUS velocity commands carry no time-to-live (`SetJointVelocity` "begins motion
//! immediately" and holds), so the OCU owns the stop:
//! - **Stream, don't latch**: while every gate passes and an axis is deflected, a command
//!   goes out every period (default 50 ms, 20 Hz), each built from input no older than one
//!   period; older input counts as released.
//! - **Stop explicitly**: a gate lost or the deflection released gives a zero at once (a stop
//!   never waits for the schedule), repeated each period up to [`JogSettings::zero_repeats`]
//!   zeros in all, then silence (`None`).
//! - **Speed**: deflection × the speed scale (default 20 %) × each joint's maximum speed,
//!   slowed by the soft limits ([`SoftLimits`]), then clamped to the reduced limit after
//!   every other scaling.
//!
//! Sans-I/O: no clock is read and nothing is sent here. The app ticks it at
//! [`JogController::next_due`] (and may tick it any time: on every input or gate change, so
//! a stop goes out at once), sends what it returns, and records [`JogController::events`].

use super::gate::{Gate, Gates};
use super::soft::SoftLimits;
use crate::model::arm::ArmSpec;

/// Slack for comparing times (s), so a tick at exactly the due time counts as due.
const TIME_EPS: f64 = 1e-9;

/// How a jog streams and how fast it moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JogSettings {
    /// Streaming period, s (default 0.05: 20 Hz).
    pub period: f64,
    /// Fraction of each joint's maximum speed at full deflection, 0..1 (default 0.2).
    pub speed_scale: f64,
    /// Zero commands sent after a stop, one per period, the first at once (default 3).
    pub zero_repeats: u32,
    /// Deflections smaller than this count as none (a gamepad stick's drift), 0..1.
    pub deadband: f64,
    /// Where joints slow down and stop short of their limits.
    pub soft: SoftLimits,
    /// Tool-point linear speed at full deflection and a scale of 100 %, m/s.
    pub tool_linear_speed: f64,
    /// Tool-point angular speed at full deflection and a scale of 100 %, rad/s.
    pub tool_angular_speed: f64,
}

impl Default for JogSettings {
    fn default() -> Self {
        Self {
            period: 0.05,
            speed_scale: 0.2,
            zero_repeats: 3,
            deadband: 0.05,
            soft: SoftLimits::default(),
            tool_linear_speed: 0.25,
            tool_angular_speed: 1.0,
        }
    }
}

/// The frame a tool-point twist is expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// The arm's base (manipulator) frame.
    Base,
    /// The tool frame: the gripper's own axes.
    Tool,
}

/// What the operator asks for, each axis −1..1.
#[derive(Debug, Clone, PartialEq)]
pub enum Deflection {
    /// Nothing held.
    Released,
    /// Per joint, joint 1 first (joints not listed are not moved).
    Joints(Vec<f64>),
    /// Tool point: linear x, y, z then angular x, y, z.
    Twist {
        /// The six axes.
        axes: [f64; 6],
        /// The frame they are in.
        frame: Frame,
    },
}

impl Deflection {
    /// Joint `index` (0-based) of an `n`-joint arm deflected by `amount` (a held key: ±1).
    pub fn joint(n: usize, index: usize, amount: f64) -> Deflection {
        let mut d = vec![0.0; n];
        if let Some(x) = d.get_mut(index) {
            *x = amount;
        }
        Deflection::Joints(d)
    }

    fn axes(&self) -> &[f64] {
        match self {
            Deflection::Released => &[],
            Deflection::Joints(d) => d,
            Deflection::Twist { axes, .. } => axes,
        }
    }
}

/// The operator's input and when it was read (s, the app's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// When the input was read, s.
    pub at: f64,
    /// What it asks for.
    pub deflection: Deflection,
}

impl Input {
    /// Nothing held, read at `at`.
    pub fn released(at: f64) -> Input {
        Input {
            at,
            deflection: Deflection::Released,
        }
    }
}

/// A tool-point velocity: the linear and angular parts of `SetEndEffectorVelocityState`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Twist {
    /// Linear velocity, m/s.
    pub linear: [f64; 3],
    /// Angular velocity, rad/s.
    pub angular: [f64; 3],
    /// The frame they are in.
    pub frame: Frame,
}

/// The motion commanded.
#[derive(Debug, Clone, PartialEq)]
pub enum Motion {
    /// Joint velocities, joint 1 first: rad/s (revolute) or m/s (prismatic).
    Joints(Vec<f64>),
    /// A tool-point twist.
    Twist(Twist),
}

impl Motion {
    /// Whether every component is zero.
    pub fn is_zero(&self) -> bool {
        match self {
            Motion::Joints(v) => v.iter().all(|x| *x == 0.0),
            Motion::Twist(t) => t.linear.iter().chain(&t.angular).all(|x| *x == 0.0),
        }
    }
}

/// The command to put on the wire this tick.
#[derive(Debug, Clone, PartialEq)]
pub struct JogOut {
    /// The velocities to command (all zero when `stop`).
    pub motion: Motion,
    /// Whether this is one of the explicit zeros after a stop.
    pub stop: bool,
}

/// Why a jog stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The operator let go of every axis.
    Released,
    /// The input was older than one period (the input thread or the window stalled).
    InputStale,
    /// A gate was lost (the first in [`Gate::ALL`] order of those blocking).
    Gate(Gate),
    /// The input switched between joint and tool-point jog (or the arm's joint count
    /// changed): the old motion is stopped before the new one starts.
    ModeChanged,
    /// The guard let none of the motion through (clearance: the words are
    /// [`JogController::guard_words`]).
    Guard,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Released => f.write_str("released"),
            StopReason::InputStale => f.write_str("input older than one period"),
            StopReason::Gate(g) => f.write_str(g.lost()),
            StopReason::ModeChanged => f.write_str("switched between joint and tool-point jog"),
            StopReason::Guard => f.write_str("stopped short of contact"),
        }
    }
}

/// What may limit a jog command beyond the controller's own rules: a [`MotionGuard`] sees
/// each command before it goes out and says which fraction of it may go (the clearance
/// guard, `model::clearance::guard`). The controller stops for a guard's zero as for any
/// other stop, and scales by its fraction otherwise.
/// A guard's verdict on one command.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardLimit {
    /// The fraction of the command that may go out, 0..=1.
    pub scale: f64,
    /// Why it is below 1, in words ("stopped 16 mm from contact: … and …").
    pub words: Option<String>,
}

impl GuardLimit {
    /// No limit.
    pub const FREE: GuardLimit = GuardLimit {
        scale: 1.0,
        words: None,
    };
}

/// Sees each jog command before it goes out.
pub trait MotionGuard {
    /// The fraction of `motion` that may be commanded with the arm at `positions`.
    fn limit(&self, positions: &[f64], motion: &Motion) -> GuardLimit;
}

/// The guard of a jog with none: everything passes.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGuard;

impl MotionGuard for NoGuard {
    fn limit(&self, _positions: &[f64], _motion: &Motion) -> GuardLimit {
        GuardLimit::FREE
    }
}

/// What the app records on the timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// Motion commanded after none.
    Started {
        /// When, s.
        at: f64,
    },
    /// Motion stopped: the first zero went out.
    Stopped {
        /// When, s.
        at: f64,
        /// Why.
        reason: StopReason,
    },
    /// The operator asked for motion and a gate blocks it (said once per gate).
    Refused {
        /// When, s.
        at: f64,
        /// The first gate blocking.
        gate: Gate,
    },
}

impl std::fmt::Display for Event {
    /// "jog started", "jog stopped: control lost", "jog refused: no control of this arm".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Started { .. } => f.write_str("jog started"),
            Event::Stopped { reason, .. } => write!(f, "jog stopped: {reason}"),
            Event::Refused { gate, .. } => write!(f, "jog refused: {}", gate.blocks()),
        }
    }
}

/// What is streaming: the shape of its zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Joints(usize),
    Twist(Frame),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Silent.
    Idle,
    /// Streaming motion.
    Moving,
    /// Streaming zeros: this many still to send.
    Stopping(u32),
}

/// The per-arm jog state machine (module doc).
#[derive(Debug, Clone)]
pub struct JogController {
    settings: JogSettings,
    phase: Phase,
    mode: Mode,
    last_sent: f64,
    refused: Option<Gate>,
    events: Vec<Event>,
    /// A joint deflected by the operator that its soft limit holds still (last motion).
    at_limit: Option<usize>,
    /// Why the guard last limited the motion asked (`None` while it let it all through).
    guard_words: Option<String>,
}

impl JogController {
    /// A silent controller with these settings: the speed scale and the deadband clamped
    /// into 0..1, a period that is not a positive number replaced by the default's (a stream
    /// must have a schedule).
    pub fn new(mut settings: JogSettings) -> Self {
        let default = JogSettings::default();
        if !(settings.period.is_finite() && settings.period > 0.0) {
            settings.period = default.period;
        }
        settings.deadband = if settings.deadband.is_nan() {
            default.deadband
        } else {
            settings.deadband.clamp(0.0, 1.0)
        };
        let mut c = Self {
            settings,
            phase: Phase::Idle,
            mode: Mode::Joints(0),
            last_sent: f64::NEG_INFINITY,
            refused: None,
            events: Vec::new(),
            at_limit: None,
            guard_words: None,
        };
        c.set_speed_scale(settings.speed_scale);
        c
    }

    /// The settings in force.
    pub fn settings(&self) -> &JogSettings {
        &self.settings
    }

    /// Sets the operator's speed scale, 0..1 (clamped; not a number leaves it unchanged).
    pub fn set_speed_scale(&mut self, scale: f64) {
        if !scale.is_nan() {
            self.settings.speed_scale = scale.clamp(0.0, 1.0);
        } else if self.settings.speed_scale.is_nan() {
            self.settings.speed_scale = 0.0;
        }
    }

    /// Whether commands are streaming (motion or the zeros after it).
    pub fn is_streaming(&self) -> bool {
        self.phase != Phase::Idle
    }

    /// Whether the last command sent was motion (not a zero after a stop).
    pub fn is_moving(&self) -> bool {
        self.phase == Phase::Moving
    }

    /// When the next command is due, s; `None` when silent (tick on the next input).
    pub fn next_due(&self) -> Option<f64> {
        (self.phase != Phase::Idle).then_some(self.last_sent + self.settings.period)
    }

    /// Whether a tick at `now` would send on schedule (always true when silent).
    pub fn is_due(&self, now: f64) -> bool {
        self.next_due().is_none_or(|t| now >= t - TIME_EPS)
    }

    /// The joint (0-based) the last motion deflected and its soft limit held still (`None`
    /// while every deflected joint moves, or nothing moves).
    pub fn at_soft_limit(&self) -> Option<usize> {
        self.at_limit.filter(|_| self.phase == Phase::Moving)
    }

    /// Why the guard slowed or held the last motion asked, in its words (`None` while it
    /// passed all of it, or nothing was asked).
    pub fn guard_words(&self) -> Option<&str> {
        self.guard_words.as_deref()
    }

    /// The events since the last call, oldest first.
    pub fn events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// One tick at `now` (s): the command to send now, or `None` for nothing.
    /// `positions` are the arm's joint positions (rad or m, joint 1 first); missing or
    /// wrong in number, they block as [`Gate::FreshJointData`].
    pub fn tick(
        &mut self,
        now: f64,
        input: &Input,
        gates: &Gates,
        spec: &ArmSpec,
        positions: &[f64],
    ) -> Option<JogOut> {
        self.tick_guarded(now, input, gates, spec, positions, &NoGuard)
    }

    /// [`JogController::tick`] with `guard` seeing each command first: motion it lets none
    /// of through is stopped ([`StopReason::Guard`]), motion it limits is scaled.
    pub fn tick_guarded(
        &mut self,
        now: f64,
        input: &Input,
        gates: &Gates,
        spec: &ArmSpec,
        positions: &[f64],
        guard: &dyn MotionGuard,
    ) -> Option<JogOut> {
        let mut blocking = gates.blocking();
        if positions.len() != spec.joints.len() || positions.iter().any(|q| !q.is_finite()) {
            blocking = blocking.with(Gate::FreshJointData);
        }
        let age = now - input.at;
        // Input read a little after `now` (the caller's `now` taken before the input arrived)
        // is fresh; more than a period ahead is a broken clock, and stale.
        let fresh = (-self.settings.period..=self.settings.period + TIME_EPS).contains(&age);
        let mode = match input.deflection {
            Deflection::Twist { frame, .. } => Mode::Twist(frame),
            _ => Mode::Joints(spec.joints.len()),
        };
        // Only axes that move something count: a joint deflection past the arm's last joint
        // does not.
        let axes = input.deflection.axes();
        let axes = match mode {
            Mode::Joints(n) => &axes[..axes.len().min(n)],
            Mode::Twist(_) => axes,
        };
        let asked = axes
            .iter()
            .any(|d| d.abs() >= self.settings.deadband.max(f64::MIN_POSITIVE));
        let stop = if let Some(g) = blocking.first() {
            Some(StopReason::Gate(g))
        } else if asked && !fresh {
            Some(StopReason::InputStale)
        } else if !asked {
            Some(StopReason::Released)
        } else if self.phase != Phase::Idle && mode != self.mode {
            Some(StopReason::ModeChanged)
        } else {
            None
        };
        // The operator asking while a gate blocks is said once per gate (a gate lost while
        // moving is said by the stop).
        match blocking.first() {
            Some(g) if asked && fresh => {
                if self.refused != Some(g) && self.phase != Phase::Moving {
                    self.events.push(Event::Refused { at: now, gate: g });
                }
                self.refused = Some(g);
            }
            _ => self.refused = None,
        }
        match stop {
            None => {
                let motion = self.motion(&input.deflection, spec, positions);
                let limit = guard.limit(positions, &motion);
                self.guard_words = limit.words;
                let scale = if limit.scale.is_nan() {
                    0.0
                } else {
                    limit.scale.clamp(0.0, 1.0)
                };
                if scale == 0.0 {
                    return self.stop_tick(now, StopReason::Guard);
                }
                self.move_tick(
                    now,
                    &input.deflection,
                    scaled(motion, scale),
                    mode,
                    spec,
                    positions,
                )
            }
            Some(reason) => self.stop_tick(now, reason),
        }
    }

    /// The motion the deflection asks for, before any guard.
    fn motion(&self, deflection: &Deflection, spec: &ArmSpec, positions: &[f64]) -> Motion {
        match deflection {
            Deflection::Twist { axes, frame } => Motion::Twist(self.twist(axes, *frame)),
            _ => Motion::Joints(self.joint_velocities(deflection.axes(), spec, positions)),
        }
    }

    fn move_tick(
        &mut self,
        now: f64,
        deflection: &Deflection,
        motion: Motion,
        mode: Mode,
        spec: &ArmSpec,
        positions: &[f64],
    ) -> Option<JogOut> {
        // Motion follows the schedule once streaming; from silence it starts at once.
        if self.phase != Phase::Idle && !self.is_due(now) {
            return None;
        }
        self.at_limit = match &motion {
            Motion::Joints(_) => deflection
                .axes()
                .iter()
                .zip(spec.joints.iter().zip(positions))
                .position(|(d, (joint, q))| {
                    let d = self.shape(*d);
                    d != 0.0 && self.settings.soft.limit(joint, *q, d, self.settings.period) == 0.0
                }),
            Motion::Twist(_) => None,
        };
        if self.phase != Phase::Moving {
            self.events.push(Event::Started { at: now });
        }
        self.phase = Phase::Moving;
        self.mode = mode;
        self.last_sent = now;
        Some(JogOut {
            motion,
            stop: false,
        })
    }

    fn stop_tick(&mut self, now: f64, reason: StopReason) -> Option<JogOut> {
        if reason != StopReason::Guard {
            self.guard_words = None;
        }
        let left = match self.phase {
            Phase::Idle => return None,
            // A stop goes out at once, never waiting for the schedule.
            Phase::Moving => {
                self.events.push(Event::Stopped { at: now, reason });
                self.settings.zero_repeats.max(1)
            }
            Phase::Stopping(_) if !self.is_due(now) => return None,
            Phase::Stopping(left) => left,
        };
        let left = left - 1;
        self.phase = if left == 0 {
            Phase::Idle
        } else {
            Phase::Stopping(left)
        };
        self.last_sent = now;
        Some(JogOut {
            motion: self.zero(),
            stop: true,
        })
    }

    fn zero(&self) -> Motion {
        match self.mode {
            Mode::Joints(n) => Motion::Joints(vec![0.0; n]),
            Mode::Twist(frame) => Motion::Twist(Twist {
                linear: [0.0; 3],
                angular: [0.0; 3],
                frame,
            }),
        }
    }

    /// A deflection made safe: not a number is none, within the deadband none, else −1..1.
    fn shape(&self, d: f64) -> f64 {
        if d.is_nan() || d.abs() < self.settings.deadband {
            0.0
        } else {
            d.clamp(-1.0, 1.0)
        }
    }

    fn joint_velocities(&self, d: &[f64], spec: &ArmSpec, positions: &[f64]) -> Vec<f64> {
        let s = &self.settings;
        spec.joints
            .iter()
            .zip(positions)
            .enumerate()
            .map(|(i, (joint, q))| {
                // A joint whose maximum speed is unknown is not jogged: no speed to scale.
                let max = joint
                    .max_speed
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .unwrap_or(0.0);
                let reduced = max * s.speed_scale;
                let v = self.shape(d.get(i).copied().unwrap_or(0.0)) * reduced;
                let v = s.soft.limit(joint, *q, v, s.period);
                // The reduced limit is clamped last, after every other scaling.
                v.clamp(-reduced, reduced)
            })
            .collect()
    }

    fn twist(&self, axes: &[f64; 6], frame: Frame) -> Twist {
        let s = &self.settings;
        let lin = s.tool_linear_speed.max(0.0) * s.speed_scale;
        let ang = s.tool_angular_speed.max(0.0) * s.speed_scale;
        let axis = |i: usize, max: f64| (self.shape(axes[i]) * max).clamp(-max, max);
        Twist {
            linear: [axis(0, lin), axis(1, lin), axis(2, lin)],
            angular: [axis(3, ang), axis(4, ang), axis(5, ang)],
            frame,
        }
    }
}

/// `motion` times `scale` (every component).
fn scaled(motion: Motion, scale: f64) -> Motion {
    if scale >= 1.0 {
        return motion;
    }
    match motion {
        Motion::Joints(v) => Motion::Joints(v.into_iter().map(|x| x * scale).collect()),
        Motion::Twist(t) => Motion::Twist(Twist {
            linear: t.linear.map(|x| x * scale),
            angular: t.angular.map(|x| x * scale),
            frame: t.frame,
        }),
    }
}
