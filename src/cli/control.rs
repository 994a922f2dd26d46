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

use super::probe::{NetArgs, components_text, controller_json};
use crate::jaus::JausId;
use crate::model::command::Command;
use crate::model::state::ArmState;
use crate::model::update::{ComponentId, ControlState, ManagementState, Outcome, Remark, Update};
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

/// Arguments of `jaus-ocu control`.
#[derive(Debug, Args)]
pub struct ControlArgs {
    /// Where to look and who we are.
    #[command(flatten)]
    pub net: NetArgs,
    /// Actions, in order: `request-control`, `go-to ID|NAME`, `emergency set`,
    /// `emergency clear`, `resume`, `standby`, `release`.
    #[arg(required = true, value_name = "ACTION", num_args = 1..)]
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
}

/// One action, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    RequestControl,
    GoTo(String),
    SetEmergency,
    ClearEmergency,
    Resume,
    Standby,
    Release,
}

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
        }
    }

    fn needs_control(&self) -> bool {
        matches!(self, Action::GoTo(_) | Action::Resume | Action::Standby)
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
                 emergency clear, resume, standby or release"
            ),
        });
    }
    Ok(actions)
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
        Ok(outcome.unwrap_or(Outcome::TimedOut))
    }
}

fn report(json_out: bool, action: &Action, outcome: &Outcome, state: &ArmState) {
    let ok = outcome.succeeded();
    if json_out {
        println!(
            "{}",
            json!({
                "action": action.name(),
                "ok": ok,
                "ocu_id": state.ocu_id.map(|id| id.to_string()),
                "outcome": outcome_json(outcome),
                "status": format!("{:?}", state.status).to_uppercase(),
                "control": match state.control {
                    ControlState::Held { .. } => "held",
                    ControlState::Requested => "requested",
                    ControlState::Released => "released",
                },
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
    match st.selected {
        None if st.components.is_empty() => match named {
            Some(x) => format!("{x} never answered, nor did any other component"),
            None => "no JAUS component answered".to_string(),
        },
        // The arm named was never heard: say so, and who was (perhaps a typo, or the arm
        // answers under another ID).
        None if named.is_some_and(|x| !st.components.contains_key(&ComponentId::from(x))) => {
            format!(
                "{} never answered (the components that did: {})",
                named.map(|x| x.to_string()).unwrap_or_default(),
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
            )
        }
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

/// Runs the subcommand.
pub fn run(args: &ControlArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout {}: give a positive number of seconds",
            args.timeout
        );
    }
    let actions = parse_actions(&args.actions)?;
    let (cfg, _identity) = args.net.net_config()?;
    let looked = args.net.looked_at(&cfg);
    let command_wait = Duration::from_secs_f64(cfg.client.command_timeout + 3.0);
    let transition_wait = Duration::from_secs_f64(cfg.client.transition_timeout + 3.0);
    let settle = Duration::from_secs_f64(cfg.client.discovery_period + cfg.client.retry);
    let handle = NetHandle::spawn(cfg)?;
    let mut s = Session {
        handle,
        vehicle: Vehicle::new(),
    };
    // The arm, its specification, its presets (when it has any) and its status.
    let need_presets = actions.iter().any(|a| matches!(a, Action::GoTo(_)));
    let found = s.pump(Duration::from_secs_f64(args.timeout), |st, _| {
        st.spec.is_some()
            && st.status != ManagementState::Unknown
            && (!need_presets || !st.presets.is_empty())
    });
    if !found {
        let what = not_ready(s.vehicle.focused(), need_presets, args.net.component);
        if args.json {
            println!(
                "{}",
                json!({
                    "error": what, "looked_at": looked,
                    "ocu_id": s.vehicle.focused().ocu_id.map(|id| id.to_string()),
                })
            );
        }
        eprintln!(
            "error: no manipulator ready within {} s: {what}. Looked at {looked}.",
            args.timeout
        );
        s.handle.shutdown(Duration::from_millis(300));
        return Ok(EXIT_NO_ARM);
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
    for action in &actions {
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
        let (cmd, wait) = match action {
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
            Action::GoTo(p) => {
                let preset = s
                    .vehicle
                    .focused()
                    .presets
                    .iter()
                    .find(|x| x.id.to_string() == *p || x.name.eq_ignore_ascii_case(p));
                match preset {
                    Some(x) => (Command::GoToPreset { pose_id: x.id }, transition_wait),
                    None => {
                        let known: Vec<String> = s
                            .vehicle
                            .focused()
                            .presets
                            .iter()
                            .map(|x| format!("{} ({})", x.id, x.name))
                            .collect();
                        let o = Outcome::Rejected(format!(
                            "the arm has no preset `{p}`; it has {}",
                            known.join(", ")
                        ));
                        report(args.json, action, &o, s.vehicle.focused());
                        code = EXIT_NOT_DONE;
                        break;
                    }
                }
            }
        };
        let o = s.run(cmd, wait)?;
        // Let the state that judged it arrive before printing it.
        s.pump(Duration::from_millis(100), |_, _| false);
        report(args.json, action, &o, s.vehicle.focused());
        if !o.succeeded() {
            code = EXIT_NOT_DONE;
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
