//! Operator commands and control: each command ends in one [`Update::CommandOutcome`];
//! control is kept by re-requesting at a third of the peer's timeout; `GoToPreset`, Resume and
//! Standby are refused locally unless control is held; status commands are judged by the
//! status that follows them.

use super::{Client, Output, label};
use crate::jaus::core::{
    ClearEmergency, ConfirmControlCode, QueryStatus, ReleaseControl, RequestControl, Resume,
    SetEmergency, Standby,
};
use crate::jaus::iop::{SetCurrentPose, TransitionStatus};
use crate::jaus::{JausId, Message};
use crate::model::update::{Command, CommandKind, ControlState, Outcome, Update};

#[derive(Debug, Clone, Copy)]
pub(super) struct PendingStatus {
    pub(super) kind: CommandKind,
    pub(super) sent: f64,
}

impl Client {
    /// Takes one command from the UI.
    pub fn handle_command(&mut self, now: f64, cmd: Command, out: &mut Output) {
        if let Command::Shutdown = cmd {
            self.teardown(now, out);
            self.shut_down = true;
            return;
        }
        if let Command::Select(id) = cmd {
            let id = JausId::from(id);
            if self.selected() != Some(id) {
                if !self.endpoint.contains(id)
                    && let Some(addr) = self.cfg.connect.first().copied()
                {
                    // Not discovered yet: try the first --connect address.
                    self.endpoint.insert_peer(id, addr, now);
                }
                self.select(now, id, out);
            }
            Self::outcome(out, now, CommandKind::Select, Outcome::Confirmed);
            return;
        }
        let Some(s) = &mut self.arm else {
            let kind = cmd.kind();
            Self::outcome(
                out,
                now,
                kind,
                Outcome::Rejected("no manipulator selected".into()),
            );
            return;
        };
        let id = s.id;
        let held = matches!(s.control, ControlState::Held { .. });
        match cmd {
            Command::RequestControl { authority } => {
                s.wanted_authority = Some(authority);
                s.control = ControlState::Requested;
                s.control_pending = Some((CommandKind::RequestControl, now));
                s.control_renew_at = f64::INFINITY;
                out.updates.push(Update::Control {
                    t: now,
                    state: ControlState::Requested,
                });
                self.send(
                    id,
                    RequestControl {
                        authority_code: authority,
                    },
                    out,
                );
            }
            Command::ReleaseControl => {
                s.wanted_authority = None;
                s.control_renew_at = f64::INFINITY;
                if s.control == ControlState::Released {
                    Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
                } else {
                    s.control_pending = Some((CommandKind::ReleaseControl, now));
                    self.send(id, ReleaseControl, out);
                }
            }
            Command::GoToPreset { pose_id } => {
                if !held {
                    Self::outcome(
                        out,
                        now,
                        CommandKind::GoToPreset,
                        Outcome::Rejected("control is not held: request control first".into()),
                    );
                } else if !s.presets.is_empty() && s.presets.iter().all(|p| p.id != pose_id) {
                    Self::outcome(
                        out,
                        now,
                        CommandKind::GoToPreset,
                        Outcome::Rejected(format!("the arm has no preset with id {pose_id}")),
                    );
                } else {
                    let rid = self.request_id();
                    if let Some(s) = &mut self.arm {
                        s.transition = Some((rid, now));
                    }
                    self.send(
                        id,
                        SetCurrentPose {
                            request_id: rid,
                            pose_id,
                        },
                        out,
                    );
                }
            }
            Command::SetEmergency
            | Command::ClearEmergency
            | Command::Resume
            | Command::Standby => {
                let kind = cmd.kind();
                if matches!(cmd, Command::Resume | Command::Standby) && !held {
                    Self::outcome(
                        out,
                        now,
                        kind,
                        Outcome::Rejected("control is not held: request control first".into()),
                    );
                    return;
                }
                s.status_pending.push(PendingStatus { kind, sent: now });
                let m: Message = match cmd {
                    Command::SetEmergency => SetEmergency { emergency_code: 1 }.into(),
                    Command::ClearEmergency => ClearEmergency { emergency_code: 1 }.into(),
                    Command::Resume => Resume.into(),
                    _ => Standby.into(),
                };
                self.send(id, m, out);
                // The answer is the status that follows.
                self.send(id, QueryStatus, out);
            }
            Command::Select(_) | Command::Shutdown => {}
        }
    }

    /// The selected arm's answers about control and preset transitions.
    pub(super) fn control_message(&mut self, now: f64, m: &Message, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        match m {
            Message::ConfirmControl(c) => {
                let pending = s.control_pending.take();
                match c.response_code {
                    ConfirmControlCode::ControlAccepted => {
                        let authority = s.wanted_authority.unwrap_or(0);
                        let newly = !matches!(s.control, ControlState::Held { .. });
                        s.control = ControlState::Held { authority };
                        s.control_renew_at = now + s.control_renew_interval();
                        if newly {
                            out.updates.push(Update::Control {
                                t: now,
                                state: s.control,
                            });
                        }
                        if let Some((CommandKind::RequestControl, _)) = pending {
                            Self::outcome(
                                out,
                                now,
                                CommandKind::RequestControl,
                                Outcome::Confirmed,
                            );
                        }
                    }
                    code => {
                        s.control = ControlState::Released;
                        s.control_renew_at = f64::INFINITY;
                        s.wanted_authority = None;
                        out.updates.push(Update::Control {
                            t: now,
                            state: s.control,
                        });
                        let reason = format!("the manipulator refused control: {}", label(code));
                        if let Some((CommandKind::RequestControl, _)) = pending {
                            Self::outcome(
                                out,
                                now,
                                CommandKind::RequestControl,
                                Outcome::Rejected(reason),
                            );
                        } else {
                            out.updates.push(Update::Error {
                                t: now,
                                message: format!("control lost: {reason}"),
                            });
                        }
                    }
                }
            }
            Message::RejectControl(r) => {
                let pending = s.control_pending.take();
                let was_held = matches!(s.control, ControlState::Held { .. });
                s.control = ControlState::Released;
                s.control_renew_at = f64::INFINITY;
                out.updates.push(Update::Control {
                    t: now,
                    state: s.control,
                });
                match pending {
                    Some((CommandKind::ReleaseControl, _)) => {
                        Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
                    }
                    Some((kind, _)) => {
                        Self::outcome(out, now, kind, Outcome::Rejected(label(r.response_code)));
                    }
                    None if was_held => {
                        s.wanted_authority = None;
                        out.updates.push(Update::Error {
                            t: now,
                            message: format!(
                                "control lost: the manipulator sent RejectControl {}",
                                label(r.response_code)
                            ),
                        });
                    }
                    None => {}
                }
            }
            Message::ReportTransitionCompleted(r) => match s.transition {
                Some((rid, _)) if rid == r.request_id => {
                    s.transition = None;
                    let outcome = if r.transition_status == TransitionStatus::Completed {
                        Outcome::Completed
                    } else {
                        Outcome::Failed(label(r.transition_status))
                    };
                    Self::outcome(out, now, CommandKind::GoToPreset, outcome);
                }
                _ => self.stats.unexpected += 1,
            },
            _ => {}
        }
    }

    /// Control keep-alive (a `RequestControl` appended to `to_send`) and command timeouts.
    pub(super) fn command_timers(
        &mut self,
        now: f64,
        to_send: &mut Vec<Message>,
        out: &mut Output,
    ) {
        let Some(s) = &mut self.arm else { return };
        if now >= s.control_renew_at {
            s.control_renew_at = now + s.control_renew_interval();
            if let Some(authority) = s.wanted_authority {
                if s.control_pending.is_none() && s.control == ControlState::Requested {
                    s.control_pending = Some((CommandKind::RequestControl, now));
                }
                to_send.push(
                    RequestControl {
                        authority_code: authority,
                    }
                    .into(),
                );
            }
        }
        if let Some((kind, sent)) = s.control_pending
            && now - sent > self.cfg.command_timeout
        {
            s.control_pending = None;
            if kind == CommandKind::ReleaseControl {
                s.control = ControlState::Released;
            } else if s.control == ControlState::Requested {
                s.control = ControlState::Released;
                s.wanted_authority = None;
            }
            out.updates.push(Update::Control {
                t: now,
                state: s.control,
            });
            Self::outcome(out, now, kind, Outcome::TimedOut);
        }
        let timeout = self.cfg.command_timeout;
        let expired: Vec<PendingStatus> = s
            .status_pending
            .iter()
            .filter(|p| now - p.sent > timeout)
            .copied()
            .collect();
        s.status_pending.retain(|p| now - p.sent <= timeout);
        for p in expired {
            Self::outcome(out, now, p.kind, Outcome::TimedOut);
        }
        if let Some((_, sent)) = s.transition
            && now - sent > self.cfg.transition_timeout
        {
            s.transition = None;
            Self::outcome(out, now, CommandKind::GoToPreset, Outcome::TimedOut);
        }
    }
}
