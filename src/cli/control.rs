//! `jaus-ocu control`: commands the arm from a terminal with the GUI's client and outcome logic
//! (`NetHandle`, `Command`, `Remark::CommandOutcome`). Each action waits for its true outcome;
//! the exit status is 0 only when every action happened.
//!
//! Actions run in the order given, in one session: control is held from the first action that
//! needs it until the process ends (its shutdown releases control, as the GUI's does). An action
//! that needs control (go-to, resume, standby) requests it first when it is not held.
//!
//! The commands go to the arm `--component` names; when several manipulators answer and none
//! is named, nothing is commanded (exit 4): the first to answer is not the operator's choice.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::probe::{NetArgs, components_text, controller_json, followed_at};
use crate::jaus::JausId;
use crate::model::command::{Command, CommandKind};
use crate::model::jog::{Deflection, Frame, Input, JogOptions, JogRequest, JogSettings, Source};
use crate::model::state::ArmState;
use crate::model::update::{
    ComponentId, ControlState, ManagementState, Outcome, Remark, StopState, Update,
};
use crate::model::vehicle::Vehicle;
use crate::net::thread::NetHandle;

/// Exit status: every action happened.
pub const EXIT_OK: i32 = 0;
/// Exit status: an action did not happen (refused, failed, or no answer).
pub const EXIT_NOT_DONE: i32 = 1;
/// Exit status: no manipulator found within `--timeout`.
pub const EXIT_NO_ARM: i32 = 3;
/// Exit status: several manipulators answered and `--component` did not say which to command.
pub const EXIT_WHICH_ARM: i32 = 4;
/// Exit status: an action did not happen, and the arm's own words show another client using
/// this process's JAUS ID (every command but the emergency stop is refused meanwhile).
pub const EXIT_ID_CONFLICT: i32 = 5;
/// Exit status: the emergency stop was sent (and sent again every 150 ms) but the arm did not
/// report EMERGENCY within `--timeout`: nothing says it stopped (never "refused": any client
/// may stop an arm).
pub const EXIT_STOP_NOT_CONFIRMED: i32 = 6;

/// Arguments of `jaus-ocu control`.
#[derive(Debug, Args)]
pub struct ControlArgs {
    /// Where to look and who we are.
    #[command(flatten)]
    pub net: NetArgs,
    /// Actions, in order: `request-control`, `go-to ID|NAME`, `emergency set`,
    /// `emergency clear`, `resume`, `standby`, `release`, `jog JOINT SPEED SECONDS` (JOINT a
    /// 1-based number or a name, SPEED in the joint's units per second: rad/s or m/s),
    /// `jog tool AXIS SPEED SECONDS` (AXIS x, y, z in m/s or rx, ry, rz in rad/s).
    #[arg(required = true, value_name = "ACTION", num_args = 1.., allow_negative_numbers = true)]
    pub actions: Vec<String>,
    /// Authority code for control requests.
    #[arg(long, default_value_t = 10)]
    pub authority: u8,
    /// Print one JSON object per action (and one for a failure to find the arm) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the manipulator before giving up (exit status 3).
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub timeout: f64,
    /// Jog: the fraction of each joint's maximum speed a jog may reach (SPEED is clamped to
    /// it), 0..1.
    #[arg(long, value_name = "F", default_value_t = 0.2)]
    pub speed_scale: f64,
    /// Jog: accept an arm without the position driver whose access timeout is 0 (never) or
    /// longer than `--timeout-limit` (it keeps moving that long if this process dies).
    #[arg(long)]
    pub acknowledge_timeout: bool,
    /// Jog: the longest access timeout accepted without `--acknowledge-timeout`, s.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub timeout_limit: f64,
    /// Jog: send efforts as velocities (for arms that read `SetJointEffort` so; off by
    /// default: on other arms 50 % would mean 50 rad/s).
    #[arg(long)]
    pub effort_as_velocity: bool,
    /// Jog: tool-point axes are the tool's own (default: the arm's base frame).
    #[arg(long)]
    pub tool_frame: bool,
    /// The vehicle file (ground, obstacles, pairs allowed to touch) the jog keeps clear of,
    /// e.g. assets/vehicles/demo.toml (none: only the arms' own cylinders are checked).
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<std::path::PathBuf>,
    /// Jog: the clearance warning band, m: gap-closing motion slows inside it.
    #[arg(long, value_name = "M", default_value_t = crate::model::clearance::DEFAULT_BAND_M)]
    pub clearance_band: f64,
    /// Jog: the clearance stop margin, m (at least 0.005): gap-closing motion stops here.
    #[arg(long, value_name = "M", default_value_t = crate::model::clearance::DEFAULT_MARGIN_M)]
    pub clearance_margin: f64,
}

/// One action, parsed.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    RequestControl,
    GoTo(String),
    SetEmergency,
    ClearEmergency,
    Resume,
    Standby,
    Release,
    /// Joint (number or name), speed (rad/s or m/s), seconds.
    Jog(String, f64, f64),
    /// Tool-point axis (0..6: x, y, z, rx, ry, rz), speed, seconds.
    JogTool(usize, f64, f64),
}

/// The tool-point axes, in `Deflection::Twist` order.
const TOOL_AXES: [&str; 6] = ["x", "y", "z", "rx", "ry", "rz"];

impl Action {
    fn name(&self) -> String {
        match self {
            Action::RequestControl => "request-control".into(),
            Action::GoTo(p) => format!("go-to {p}"),
            Action::SetEmergency => "emergency set".into(),
            Action::ClearEmergency => "emergency clear".into(),
            Action::Resume => "resume".into(),
            Action::Standby => "standby".into(),
            Action::Release => "release".into(),
            Action::Jog(j, v, t) => format!("jog {j} {v} {t}"),
            Action::JogTool(a, v, t) => format!("jog tool {} {v} {t}", TOOL_AXES[*a]),
        }
    }

    fn needs_control(&self) -> bool {
        matches!(
            self,
            Action::GoTo(_)
                | Action::Resume
                | Action::Standby
                | Action::Jog(..)
                | Action::JogTool(..)
        )
    }
}

fn parse_actions(words: &[String]) -> Result<Vec<Action>> {
    let mut actions = Vec::new();
    let mut it = words.iter().map(String::as_str);
    while let Some(w) = it.next() {
        actions.push(match w {
            "request-control" => Action::RequestControl,
            "release" | "release-control" => Action::Release,
            "resume" => Action::Resume,
            "standby" => Action::Standby,
            "go-to" => match it.next() {
                Some(p) => Action::GoTo(p.to_string()),
                None => bail!("go-to needs a preset: its id or name (e.g. `go-to 2`)"),
            },
            "jog" => parse_jog(&mut it)?,
            "emergency" => match it.next() {
                Some("set") => Action::SetEmergency,
                Some("clear") => Action::ClearEmergency,
                other => bail!(
                    "emergency needs `set` or `clear`, not {}",
                    other.map_or("nothing".into(), |o| format!("`{o}`"))
                ),
            },
            other => bail!(
                "unknown action `{other}`: use request-control, go-to ID|NAME, emergency set, \
                 emergency clear, resume, standby, release, jog JOINT SPEED SECONDS or \
                 jog tool AXIS SPEED SECONDS"
            ),
        });
    }
    Ok(actions)
}

/// `jog JOINT SPEED SECONDS` or `jog tool AXIS SPEED SECONDS` (after the word `jog`).
fn parse_jog<'a>(it: &mut impl Iterator<Item = &'a str>) -> Result<Action> {
    const USE: &str = "use `jog JOINT SPEED SECONDS` (e.g. `jog 2 0.1 1.5`: joint 2 at \
                       0.1 rad/s for 1.5 s) or `jog tool AXIS SPEED SECONDS` (AXIS x, y, z, \
                       rx, ry or rz)";
    let Some(first) = it.next() else {
        bail!("jog needs a joint: {USE}");
    };
    let axis = if first == "tool" {
        let Some(a) = it.next() else {
            bail!("jog tool needs an axis: {USE}");
        };
        match TOOL_AXES.iter().position(|x| x.eq_ignore_ascii_case(a)) {
            Some(i) => Some(i),
            None => bail!("jog tool: no axis `{a}`: {USE}"),
        }
    } else {
        None
    };
    let mut number = |what: &str| -> Result<f64> {
        let w = it
            .next()
            .ok_or_else(|| anyhow::anyhow!("jog needs {what}: {USE}"))?;
        match w.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => bail!("jog: {what} `{w}` is not a number: {USE}"),
        }
    };
    let speed = number("a speed")?;
    let seconds = number("a duration in seconds")?;
    if seconds <= 0.0 {
        bail!("jog: {seconds} s: give a positive duration");
    }
    Ok(match axis {
        Some(a) => Action::JogTool(a, speed, seconds),
        None => Action::Jog(first.to_string(), speed, seconds),
    })
}

/// The session: the network side and the state its updates built (every arm followed; the
/// commands and their outcomes are the focused arm's, `--component` or the first found).
struct Session {
    handle: NetHandle,
    vehicle: Vehicle<ArmState>,
}

impl Session {
    /// Applies updates until `done` says so or `timeout` passes; the matching update is
    /// returned through `done`'s own captures.
    fn pump(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&ArmState, &Update) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self
                .handle
                .updates()
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                Ok(u) => {
                    self.vehicle.apply(&u);
                    // What is said about another arm is not about this command's.
                    if u.arm_id().is_some() && u.arm_id() != self.vehicle.focused_id() {
                        continue;
                    }
                    if done(self.vehicle.focused(), &u) {
                        return true;
                    }
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    if done(
                        self.vehicle.focused(),
                        &Update::net(Remark::Error {
                            t: 0.0,
                            message: String::new(),
                        }),
                    ) {
                        return true;
                    }
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// Sends `cmd` and waits for its outcome (at most `timeout`).
    fn run(&mut self, cmd: Command, timeout: Duration) -> Result<Outcome> {
        let kind = cmd.kind();
        self.handle
            .send(cmd)
            .map_err(|e| anyhow::anyhow!("the network side refused the command: {e}"))?;
        Ok(self.outcome(kind, timeout))
    }

    /// Waits for the outcome of a command of `kind` (at most `timeout`).
    fn outcome(&mut self, kind: CommandKind, timeout: Duration) -> Outcome {
        let mut outcome = None;
        self.pump(timeout, |_, u| match u.remark() {
            Some(Remark::CommandOutcome {
                command,
                outcome: o,
                ..
            }) if *command == kind => {
                outcome = Some(o.clone());
                true
            }
            _ => false,
        });
        outcome.unwrap_or(Outcome::TimedOut)
    }
}

/// `outcome` as printed beside `state`: one object never says two states, so a "no answer"
/// carries the state printed with it (the newest reported), not the words of the moment of
/// the verdict, keeping what the verdict says of the tries.
fn as_printed(outcome: &Outcome, state: &ArmState) -> Outcome {
    let now_words = format!("{}, status {}", state.control_words(), state.status.name());
    match outcome {
        Outcome::NoAnswer {
            tries,
            state: words,
        } => Outcome::NoAnswer {
            tries: *tries,
            state: match words
                .find(" (no sign")
                .or_else(|| words.find(" (it acknowledged"))
            {
                Some(i) => format!("{now_words}{}", &words[i..]),
                None => now_words,
            },
        },
        o => o.clone(),
    }
}

fn report(json_out: bool, action: &Action, outcome: &Outcome, state: &ArmState) {
    let ok = outcome.succeeded();
    let outcome = &as_printed(outcome, state);
    if json_out {
        println!(
            "{}",
            json!({
                "action": action.name(),
                "ok": ok,
                "arm": state.selected.map(|id| id.to_string()),
                "address": followed_at(state).map(|a| a.to_string()),
                "address_conflict": state.address_other.map(|a| a.to_string()),
                "ocu_id": state.ocu_id.map(|id| id.to_string()),
                "outcome": outcome_json(outcome),
                "status": state.status.name(),
                "control": state.control.name(),
                "control_text": state.control_words(),
                "controller": controller_json(state),
                "id_conflict": state.id_conflict.as_ref().map(|c| json!({
                    "address": c.address.map(|a| a.to_string()), "evidence": c.evidence,
                })),
                "id_suspect": state.id_suspect.as_ref().map(|c| json!({
                    "address": c.address.map(|a| a.to_string()), "evidence": c.evidence,
                })),
            })
        );
    } else if ok {
        println!("{}: {outcome}", action.name());
    } else {
        eprintln!("{}: {outcome}", action.name());
    }
}

fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Confirmed => json!({ "result": "confirmed" }),
        Outcome::Completed => json!({ "result": "completed" }),
        Outcome::Rejected(why) => json!({ "result": "refused", "reason": why }),
        Outcome::Failed(why) => json!({ "result": "failed", "reason": why }),
        Outcome::TimedOut => json!({ "result": "no_answer" }),
        Outcome::NoAnswer { tries, state } => {
            json!({ "result": "no_answer", "tries": tries, "state": state })
        }
    }
}

/// Why no manipulator is ready to command, in words; `named` is `--component`.
fn not_ready(st: &ArmState, need_presets: bool, named: Option<JausId>) -> String {
    // The arm named was never heard (it may be followed already: a stop goes to it before
    // discovery): say so, and who was (perhaps a typo, or the arm answers under another ID).
    if let Some(x) = named
        && !st.components.contains_key(&ComponentId::from(x))
    {
        if st.components.is_empty() {
            return format!("{x} never answered, nor did any other component");
        }
        return format!(
            "{x} never answered (the components that did: {})",
            st.components
                .values()
                .map(|(c, lost)| format!(
                    "{} ({}{}{})",
                    c.id,
                    c.address,
                    if c.manipulator { ", manipulator" } else { "" },
                    if *lost { ", silent now" } else { "" }
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    match st.selected {
        None if st.components.is_empty() => "no JAUS component answered".to_string(),
        None => format!(
            "{} component(s) answered, none is a manipulator:\n{}",
            st.components.len(),
            components_text(st)
        ),
        Some(id) if st.spec.is_none() => {
            format!("manipulator {id} never sent its specification")
        }
        Some(id) if need_presets && st.presets.is_empty() => {
            format!("manipulator {id} listed no preset poses")
        }
        Some(id) => format!("the status of manipulator {id} stayed unknown"),
    }
}

/// Whether the arm is followed where the operator said: with `--component` and `--connect`
/// both given, at one of the `--connect` addresses (the same ID answering elsewhere first is
/// not the arm named); otherwise anywhere.
fn at_named_address(args: &ControlArgs, st: &ArmState) -> bool {
    args.net.component.is_none()
        || args.net.connect.is_empty()
        || followed_at(st).is_some_and(|a| args.net.connect.contains(&a))
}

/// Why a ready arm is not commanded: it answered only at an address nobody named.
fn elsewhere_words(args: &ControlArgs, st: &ArmState) -> String {
    let named: Vec<String> = args.net.connect.iter().map(ToString::to_string).collect();
    format!(
        "{} answered at {}, not at the --connect address{} {}: nothing was commanded (give \
         its address with --connect, or leave out --connect)",
        st.selected.map(|id| id.to_string()).unwrap_or_default(),
        followed_at(st).map(|a| a.to_string()).unwrap_or_default(),
        if named.len() > 1 { "es" } else { "" },
        named.join(", ")
    )
}

/// Waits (at most `--timeout`) for the arm to command: its specification, its status, its
/// presets when `need_presets`, followed where the operator said ([`at_named_address`]).
/// `None` when it is ready, else says why not and returns [`EXIT_NO_ARM`].
fn wait_for_arm(
    s: &mut Session,
    args: &ControlArgs,
    need_presets: bool,
    looked: &str,
) -> Option<i32> {
    let ready = |st: &ArmState| {
        st.spec.is_some()
            && st.status != ManagementState::Unknown
            && (!need_presets || !st.presets.is_empty())
    };
    let found = s.pump(Duration::from_secs_f64(args.timeout), |st, _| {
        ready(st) && at_named_address(args, st)
    });
    if found {
        return None;
    }
    let st = s.vehicle.focused();
    let what = if ready(st) {
        elsewhere_words(args, st)
    } else {
        not_ready(st, need_presets, args.net.component)
    };
    if args.json {
        println!(
            "{}",
            json!({
                "error": what, "looked_at": looked,
                "ocu_id": st.ocu_id.map(|id| id.to_string()),
            })
        );
    }
    eprintln!(
        "error: no manipulator ready within {} s: {what}. Looked at {looked}.",
        args.timeout
    );
    Some(EXIT_NO_ARM)
}

/// A command never goes to an arm the operator did not pick: on a vehicle of several arms
/// without `--component`, says so and returns [`EXIT_WHICH_ARM`] (the caller stops the
/// session).
fn refuse_unnamed_arm(args: &ControlArgs, s: &Session) -> Option<i32> {
    let arms: Vec<String> = s
        .vehicle
        .focused()
        .components
        .values()
        .filter(|(c, _)| c.manipulator)
        .map(|(c, _)| c.id.to_string())
        .collect();
    if args.net.component.is_some() || arms.len() < 2 {
        return None;
    }
    let what = format!(
        "{} manipulators answered ({}): name the one to command with --component S.N.C",
        arms.len(),
        arms.join(", ")
    );
    if args.json {
        println!("{}", json!({ "error": what, "arms": arms }));
    }
    eprintln!("error: {what}. No command was sent.");
    Some(EXIT_WHICH_ARM)
}

/// The emergency stop of the arm this run acts on, named (the stop overtakes queued commands,
/// so it must not depend on the focus when the network side takes it).
fn stop_of_focused(vehicle: &Vehicle<ArmState>) -> Command {
    vehicle
        .focused_id()
        .map_or(Command::SetEmergency, Command::SetEmergencyOf)
}

/// `emergency set` for the arm named by `--component`, as the first action: the network side
/// took it before its first tick ([`NetConfig::first`](crate::net::thread::NetConfig::first): the first datagram sent, at the
/// `--connect` address, before discovery) and sends it again every 150 ms until the arm
/// confirms it; this waits for that up to `--timeout`. `None` when it was confirmed (the
/// other actions follow), else the exit status. Unnamed, a stop waits like any command for
/// discovery to show a single arm: it never goes to an arm nobody named.
fn stop_first(s: &mut Session, args: &ControlArgs, id: JausId) -> Option<i32> {
    let wait = Duration::from_secs_f64(args.timeout);
    let start = s.handle.start();
    let o = s.outcome(CommandKind::SetEmergency, wait);
    let after = start.elapsed().as_secs_f64();
    let st = s.vehicle.focused();
    let (tries, since) = match st.stop {
        StopState::Pending {
            tries,
            since,
            last_try,
        } => (tries, last_try - since),
        StopState::Idle => (0, after),
    };
    let arm = st
        .selected
        .map_or_else(|| "the arm".to_string(), |id| id.to_string());
    let address = followed_at(st);
    let at = address.map_or_else(String::new, |a| format!(" at {a}"));
    let status = st.status.name();
    // An arm that never said anything: why, in words (who did answer, at which address).
    let silent = (st.status == ManagementState::Unknown && st.spec.is_none())
        .then(|| not_ready(st, false, Some(id)));
    let code = match &o {
        Outcome::Confirmed => None,
        Outcome::Rejected(_) => Some(EXIT_NOT_DONE),
        _ => Some(EXIT_STOP_NOT_CONFIRMED),
    };
    if args.json {
        let outcome = match &o {
            Outcome::Confirmed => json!({ "result": "confirmed", "after_s": after }),
            Outcome::Rejected(why) => json!({ "result": "refused", "reason": why }),
            _ => json!({
                "result": "not_confirmed", "tries": tries, "pending_s": since,
                "last_reported_status": status,
            }),
        };
        println!(
            "{}",
            json!({
                "action": "emergency set", "ok": code.is_none(), "arm": arm,
                "address": address.map(|a| a.to_string()),
                "address_conflict": st.address_other.map(|a| a.to_string()),
                "ocu_id": st.ocu_id.map(|id| id.to_string()), "outcome": outcome,
                "error": silent,
            })
        );
    }
    // Not confirmed is said on stderr in both modes: a script must not miss it.
    match &o {
        Outcome::Confirmed if !args.json => println!(
            "emergency set: confirmed: {arm}{at} reported EMERGENCY {after:.2} s after the start"
        ),
        Outcome::Confirmed => {}
        Outcome::Rejected(why) => eprintln!("emergency set: refused: {why}"),
        _ => eprintln!(
            "emergency set: NOT CONFIRMED: SetEmergency sent to {arm}{at} {tries} times over \
                 {since:.1} s and the arm never reported EMERGENCY (last reported status: \
                 {status}{}). Nothing says it stopped: use the arm's own emergency stop.",
            silent.as_ref().map_or(String::new(), |w| format!("; {w}"))
        ),
    }
    code
}

/// How often the terminal jog reports its input: well inside one jog period, so the
/// network side never sees it age while the process runs.
const JOG_INPUT_EVERY: Duration = Duration::from_millis(20);
/// How long a jog may stay blocked by a gate before it counts as refused.
const JOG_BLOCKED_FOR: Duration = Duration::from_millis(700);

/// The deflection a jog action asks for (−1..1 of the reduced speed), or why it cannot.
fn jog_deflection(
    spec: &crate::model::arm::ArmSpec,
    args: &ControlArgs,
    action: &Action,
) -> std::result::Result<(Deflection, f64, String), String> {
    let scale = args.speed_scale.clamp(0.0, 1.0);
    match action {
        Action::Jog(joint, speed, seconds) => {
            let n = spec.joints.len();
            let index = match joint.parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => k - 1,
                Ok(k) => return Err(format!("the arm has joints 1 to {n}, not {k}")),
                Err(_) => spec
                    .joints
                    .iter()
                    .position(|j| {
                        j.name
                            .as_deref()
                            .is_some_and(|x| x.eq_ignore_ascii_case(joint))
                    })
                    .ok_or_else(|| format!("the arm has no joint named `{joint}`"))?,
            };
            let max = spec.joints[index]
                .max_speed
                .filter(|v| *v > 0.0)
                .ok_or_else(|| {
                    format!(
                        "joint {} has no maximum speed in its specification",
                        index + 1
                    )
                })?;
            let reduced = max * scale;
            let d = if reduced > 0.0 { speed / reduced } else { 0.0 };
            let what = format!(
                "joint {} at {:.4}/s (reduced limit {reduced:.4}/s)",
                index + 1,
                speed.clamp(-reduced, reduced)
            );
            Ok((
                Deflection::joint(n, index, d.clamp(-1.0, 1.0)),
                *seconds,
                what,
            ))
        }
        Action::JogTool(axis, speed, seconds) => {
            let s = JogSettings::default();
            let max = if *axis < 3 {
                s.tool_linear_speed
            } else {
                s.tool_angular_speed
            } * scale;
            let mut axes = [0.0; 6];
            axes[*axis] = if max > 0.0 {
                (speed / max).clamp(-1.0, 1.0)
            } else {
                0.0
            };
            let frame = if args.tool_frame {
                Frame::Tool
            } else {
                Frame::Base
            };
            let what = format!(
                "tool point along {} at {:.4}/s (reduced limit {max:.4}/s)",
                TOOL_AXES[*axis],
                speed.clamp(-max, max)
            );
            Ok((Deflection::Twist { axes, frame }, *seconds, what))
        }
        _ => Err("not a jog".into()),
    }
}

/// A jog from the terminal: hold-to-run for the process's life and at most the seconds
/// asked. The input goes to the network side every [`JOG_INPUT_EVERY`]; it streams the
/// commands and stops them itself if this process stops sending (killed, stalled).
fn jog(s: &mut Session, args: &ControlArgs, action: &Action) -> Result<Outcome> {
    let st = s.vehicle.focused();
    let (Some(arm), Some(spec)) = (s.vehicle.focused_id(), st.spec.clone()) else {
        return Ok(Outcome::Rejected(
            "no manipulator with a specification".into(),
        ));
    };
    let (deflection, seconds, what) = match jog_deflection(&spec, args, action) {
        Ok(x) => x,
        Err(why) => return Ok(Outcome::Rejected(why)),
    };
    let options = JogOptions {
        speed_scale: args.speed_scale.clamp(0.0, 1.0),
        timeout_limit: args.timeout_limit,
        acknowledge_timeout: args.acknowledge_timeout,
        effort_as_velocity: args.effort_as_velocity,
        clearance_band: args.clearance_band,
        clearance_margin: args.clearance_margin,
    };
    let before = st.positions.as_ref().map(|p| p.value.clone());
    let request = |s: &Session, deflection: Deflection| {
        let at = s.handle.start().elapsed().as_secs_f64();
        Command::Jog(Box::new(JogRequest::new(
            arm,
            Source::Terminal,
            Input { at, deflection },
            options,
        )))
    };
    eprintln!("jog: {what} for {seconds} s");
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut moved = false;
    let mut refused: Option<String> = None;
    let mut interrupted: Option<String> = None;
    let mut said_slowed: Option<String> = None;
    while Instant::now() < until {
        s.handle
            .send(request(s, deflection.clone()))
            .map_err(|e| anyhow::anyhow!("the network side refused the jog: {e}"))?;
        s.pump(JOG_INPUT_EVERY, |_, _| false);
        let j = &s.vehicle.focused().jog;
        if moved && !j.moving {
            // Stopped before its time (control or the link lost, an emergency, this process
            // frozen): the jog ends with that verdict and never resumes on its own.
            let why = j
                .clearance
                .clone()
                .or_else(|| j.refusal.clone())
                .unwrap_or_else(|| {
                    j.blocking.first().map_or_else(
                        || {
                            "the jog stopped (its input went stale: this process was held up)"
                                .into()
                        },
                        |g| g.lost().to_string(),
                    )
                });
            interrupted = Some(format!(
                "interrupted after {:.2} s of {seconds} s: {why}",
                started.elapsed().as_secs_f64()
            ));
            break;
        }
        moved |= j.moving;
        if let Some(w) = j.clearance.as_ref().filter(|_| j.moving)
            && said_slowed.is_none()
        {
            eprintln!("jog: {w}");
            said_slowed = Some(w.clone());
        }
        if !j.moving {
            if let Some(r) = j.clearance.as_ref().or(j.refusal.as_ref()) {
                refused = Some(r.clone());
            } else if let Some(g) = j.blocking.first()
                && started.elapsed() >= JOG_BLOCKED_FOR
            {
                refused = Some(g.to_string());
            }
        }
        if refused.is_some() && !moved {
            break;
        }
    }
    // Let go: the network side stops at once and repeats the zero.
    let _ = s.handle.send(request(s, Deflection::Released));
    s.pump(Duration::from_secs(1), |st, _| !st.jog.moving);
    s.pump(Duration::from_millis(200), |_, _| false);
    let after = s
        .vehicle
        .focused()
        .positions
        .as_ref()
        .map(|p| p.value.clone());
    if let (Some(a), Some(b)) = (before, after) {
        let moved_by: Vec<String> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| format!("{:+.4}", y - x))
            .collect();
        eprintln!("jog: joints moved by [{}]", moved_by.join(", "));
    }
    if let Some(why) = interrupted {
        return Ok(Outcome::Failed(why));
    }
    Ok(match (moved, refused) {
        (true, _) => Outcome::Completed,
        (false, Some(why)) => Outcome::Rejected(why),
        (false, None) => {
            Outcome::Rejected("the arm was not moved (no jog command streamed)".into())
        }
    })
}

/// Before a preset move: its clearance at the target and along a joint-interpolated path
/// (advice: the arm plans its own path), on stderr.
fn say_preset_advice(
    vehicle: &Vehicle<ArmState>,
    geometry: &std::sync::Arc<crate::model::clearance::obstacles::VehicleGeometry>,
    cmd: &Command,
) {
    let (Command::GoToPreset { pose_id }, Some(arm)) = (cmd, vehicle.focused_id()) else {
        return;
    };
    let states: Vec<_> = vehicle.arms().collect();
    let advice = crate::model::clearance::path::preset_advice(
        crate::model::clearance::Settings::default(),
        geometry.clone(),
        &states,
        arm,
        *pose_id,
    );
    for w in advice.map(|a| a.words).unwrap_or_default() {
        eprintln!("go-to: {w}");
    }
}

/// `GoToPreset` of the preset `p` names (its id or name), or the refusal that lists the
/// arm's presets.
fn preset_command(st: &ArmState, p: &str) -> std::result::Result<Command, Outcome> {
    match st
        .presets
        .iter()
        .find(|x| x.id.to_string() == *p || x.name.eq_ignore_ascii_case(p))
    {
        Some(x) => Ok(Command::GoToPreset { pose_id: x.id }),
        None => {
            let known: Vec<String> = st
                .presets
                .iter()
                .map(|x| format!("{} ({})", x.id, x.name))
                .collect();
            Err(Outcome::Rejected(format!(
                "the arm has no preset `{p}`; it has {}",
                known.join(", ")
            )))
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &ControlArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout {}: give a positive number of seconds",
            args.timeout
        );
    }
    let actions = parse_actions(&args.actions)?;
    let (mut cfg, _identity) = args.net.net_config()?;
    cfg.client.vehicle = super::read_vehicle_file(args.vehicle.as_deref())?.unwrap_or_default();
    let vehicle_geometry = cfg.client.vehicle.clone();
    if let (Some(Action::SetEmergency), Some(id)) = (actions.first(), args.net.component) {
        // The named arm's stop is the first datagram this process sends (`stop_first`).
        cfg.first.push(Command::SetEmergencyOf(id.into()));
    }
    let looked = args.net.looked_at(&cfg);
    // A command the arm acknowledged may wait one more command time for its status
    // (`Pending::verdict_at`): twice the time, and 3 s to spare.
    let command_wait = Duration::from_secs_f64(2.0 * cfg.client.command_timeout + 3.0);
    let transition_wait = Duration::from_secs_f64(cfg.client.transition_timeout + 3.0);
    let settle = Duration::from_secs_f64(cfg.client.discovery_period + cfg.client.retry);
    let handle = NetHandle::spawn(cfg)?;
    let mut s = Session {
        handle,
        vehicle: Vehicle::new(),
    };
    // A stop first goes out before anything else, discovery included.
    let mut actions = actions.as_slice();
    if let (Some((Action::SetEmergency, rest)), Some(id)) =
        (actions.split_first(), args.net.component)
    {
        if let Some(code) = stop_first(&mut s, args, id) {
            s.handle.shutdown(Duration::from_millis(300));
            return Ok(code);
        }
        if rest.is_empty() {
            s.handle.shutdown(Duration::from_millis(500));
            return Ok(EXIT_OK);
        }
        actions = rest;
    }
    // The arm, its specification, its presets (when it has any) and its status.
    let need_presets = actions.iter().any(|a| matches!(a, Action::GoTo(_)));
    if let Some(code) = wait_for_arm(&mut s, args, need_presets, &looked) {
        s.handle.shutdown(Duration::from_millis(300));
        return Ok(code);
    }
    if args.net.component.is_none() {
        // Unnamed, the arm is only the operator's choice if it is the only one: let a whole
        // discovery round be answered (another arm may answer a moment later) before
        // deciding. Naming the arm skips this wait.
        s.pump(settle, |_, _| false);
    }
    if let Some(code) = refuse_unnamed_arm(args, &s) {
        s.handle.shutdown(Duration::from_millis(300));
        return Ok(code);
    }
    let mut code = EXIT_OK;
    for action in actions {
        if action.needs_control()
            && !matches!(s.vehicle.focused().control, ControlState::Held { .. })
        {
            let o = s.run(
                Command::RequestControl {
                    authority: args.authority,
                },
                command_wait,
            )?;
            if !o.succeeded() {
                report(args.json, &Action::RequestControl, &o, s.vehicle.focused());
                code = EXIT_NOT_DONE;
                break;
            }
        }
        if matches!(action, Action::Jog(..) | Action::JogTool(..)) {
            let o = jog(&mut s, args, action)?;
            report(args.json, action, &o, s.vehicle.focused());
            if !o.succeeded() {
                code = EXIT_NOT_DONE;
                break;
            }
            continue;
        }
        let (cmd, wait) = match action {
            Action::Jog(..) | Action::JogTool(..) => continue,
            Action::RequestControl => (
                Command::RequestControl {
                    authority: args.authority,
                },
                command_wait,
            ),
            Action::Release => (Command::ReleaseControl, command_wait),
            Action::SetEmergency => (stop_of_focused(&s.vehicle), command_wait),
            Action::ClearEmergency => (Command::ClearEmergency, command_wait),
            Action::Resume => (Command::Resume, command_wait),
            Action::Standby => (Command::Standby, command_wait),
            Action::GoTo(p) => match preset_command(s.vehicle.focused(), p) {
                Ok(cmd) => {
                    say_preset_advice(&s.vehicle, &vehicle_geometry, &cmd);
                    (cmd, transition_wait)
                }
                Err(o) => {
                    report(args.json, action, &o, s.vehicle.focused());
                    code = EXIT_NOT_DONE;
                    break;
                }
            },
        };
        let o = s.run(cmd, wait)?;
        // Let the state that judged it arrive before printing it.
        s.pump(Duration::from_millis(100), |_, _| false);
        report(args.json, action, &o, s.vehicle.focused());
        if !o.succeeded() {
            // A stop sent and not confirmed is no refusal: said by an exit status of its own.
            code = if matches!(action, Action::SetEmergency) && !matches!(o, Outcome::Rejected(_)) {
                EXIT_STOP_NOT_CONFIRMED
            } else {
                EXIT_NOT_DONE
            };
            break;
        }
    }
    if code == EXIT_NOT_DONE && s.vehicle.focused().id_conflict.is_some() {
        code = EXIT_ID_CONFLICT;
    }
    s.handle.shutdown(Duration::from_millis(500));
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::{Action, parse_actions};

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_no_answer_says_the_state_printed_beside_it() {
        use crate::model::state::ArmState;
        use crate::model::update::{ManagementState, Outcome};
        let state = ArmState {
            status: ManagementState::Emergency,
            ..ArmState::default()
        };
        let o = Outcome::NoAnswer {
            tries: 4,
            state: "control held (authority 100), status READY, reported 3.2 s ago (no sign \
                    that any try reached it)"
                .into(),
        };
        let Outcome::NoAnswer { state: words, .. } = super::as_printed(&o, &state) else {
            panic!("still no answer");
        };
        assert!(
            words.contains("status EMERGENCY") && !words.contains("READY"),
            "{words}"
        );
        assert!(
            words.ends_with("(no sign that any try reached it)"),
            "{words}"
        );
    }

    #[test]
    fn control_actions_parse_in_order() {
        assert_eq!(
            parse_actions(&words(
                "request-control go-to ready emergency set emergency clear resume release"
            ))
            .unwrap(),
            [
                Action::RequestControl,
                Action::GoTo("ready".into()),
                Action::SetEmergency,
                Action::ClearEmergency,
                Action::Resume,
                Action::Release
            ]
        );
        assert!(
            parse_actions(&words("go-to"))
                .unwrap_err()
                .to_string()
                .contains("preset")
        );
        assert!(parse_actions(&words("emergency stop")).is_err());
        assert!(
            parse_actions(&words("jump"))
                .unwrap_err()
                .to_string()
                .contains("unknown action")
        );
    }
}
