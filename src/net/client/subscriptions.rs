//! Subscriptions: one `CreateEvent` per signal (periodic for samples, every-change for pose and
//! status), renewed at half the peer's event timeout; `RejectEventRequest` or three unanswered
//! requests fall back to periodic queries; events older than the last one applied are dropped
//! (reordered in flight); a signal overdue by three periods (at least
//! [`STALE_FLOOR`](crate::model::fresh::STALE_FLOOR), plus how late the network thread's own tick ran)
//! is stale, its stale flag changes at most once per [`STALE_DWELL`], and an event stale for
//! more than a second is re-created. Nothing of this runs while the arm's link is lost.

use super::sub::{STALE_DWELL, Sub, SubState};
use super::{Client, Output};
use crate::jaus::core::{CancelEvent, CreateEvent, Event, EventType, QueryStatus};
use crate::jaus::iop::{QueryCurrentPose, QueryManipulatorEndEffectorForceTorque};
use crate::jaus::manipulator::{
    QueryJointEffort, QueryJointForceTorques, QueryJointPositions, QueryJointVelocity,
};
use crate::jaus::{EmbeddedMessage, JausId, Message};
use crate::model::fresh::stale_limit;
use crate::model::update::{ArmFact, Delivery, LinkState, Signal};

impl Client {
    pub(super) fn start_subscriptions(&mut self, now: f64, out: &mut Output) {
        let rates = self.cfg.rates;
        let Some(s) = &self.arm else { return };
        let peer = self.endpoint.peer(s.id).map(|p| p.data.clone());
        let offers = |uri: &str| peer.as_ref().is_none_or(|p| p.offers(uri));
        let mut wanted: Vec<(Signal, Message, EventType, f64)> = Vec::new();
        let m = "urn:jaus:jss:manipulator:";
        if offers(&format!("{m}ManipulatorJointPositionSensor")) {
            wanted.push((
                Signal::JointPositions,
                QueryJointPositions.into(),
                EventType::Periodic,
                rates.positions,
            ));
        }
        if offers(&format!("{m}ManipulatorJointVelocitySensor")) {
            wanted.push((
                Signal::JointVelocities,
                QueryJointVelocity.into(),
                EventType::Periodic,
                rates.velocities,
            ));
        }
        if offers(&format!("{m}PrimitiveManipulator")) {
            wanted.push((
                Signal::JointEfforts,
                QueryJointEffort.into(),
                EventType::Periodic,
                rates.efforts,
            ));
        }
        if offers(&format!("{m}ManipulatorJointForceTorqueSensor")) {
            wanted.push((
                Signal::JointForceTorques,
                QueryJointForceTorques.into(),
                EventType::Periodic,
                rates.joint_force_torques,
            ));
        }
        if offers("urn:jaus:jss:iop:ManipulatorEndEffectorForceTorqueSensor") {
            wanted.push((
                Signal::EndEffectorForceTorque,
                QueryManipulatorEndEffectorForceTorque {
                    presence_vector: 0x3f,
                }
                .into(),
                EventType::Periodic,
                rates.force_torque,
            ));
        }
        if offers("urn:jaus:jss:iop:PresetPose") {
            wanted.push((
                Signal::CurrentPose,
                QueryCurrentPose.into(),
                EventType::EveryChange,
                0.0,
            ));
        }
        wanted.push((
            Signal::Status,
            QueryStatus.into(),
            EventType::EveryChange,
            0.0,
        ));
        let mut subs = Vec::new();
        for (signal, query, kind, rate) in wanted
            .into_iter()
            .filter(|w| w.3 > 0.0 || w.2 == EventType::EveryChange)
        {
            let request_id = self.request_id();
            subs.push(Sub {
                signal,
                query,
                kind,
                rate,
                request_id,
                state: SubState::Requesting {
                    sent: f64::NEG_INFINITY,
                    tries: 0,
                },
                since: now,
                last_event_seq: None,
                old_in_a_row: 0,
            });
        }
        if let Some(s) = &mut self.arm {
            s.subs = subs;
        }
        self.drive_subscriptions(now, out);
    }

    fn create_event(&mut self, to: JausId, sub: &Sub, out: &mut Output) {
        let Ok(q) = EmbeddedMessage::with_dialect(&sub.query, self.cfg.dialect) else {
            return;
        };
        let m = CreateEvent {
            request_id: sub.request_id,
            event_type: sub.kind,
            requested_periodic_rate: sub.rate.min(1092.0),
            query_message: q,
        };
        self.send(to, m, out);
    }

    /// When the subscriptions next need a tick (nothing while the link is lost).
    pub(super) fn subscription_deadline(&self, s: &super::arm::FollowedArm) -> f64 {
        if s.link == LinkState::Lost {
            return f64::INFINITY;
        }
        let mut d = f64::INFINITY;
        for sub in &s.subs {
            d = d.min(match sub.state {
                SubState::Requesting { sent, .. } => sent + self.cfg.retry,
                SubState::Active { renew_at, .. } => renew_at,
                SubState::Polling { next, .. } => next,
            });
            if let Some(p) = sub.period() {
                let last = s.last_sample.get(&sub.signal).copied().unwrap_or(sub.since);
                // Set by every judgement to a later time; a subscription not judged yet is
                // judged when it could first be stale.
                d = d.min(
                    s.stale_check
                        .get(&sub.signal)
                        .copied()
                        .unwrap_or(last + stale_limit(p) + 1e-3),
                );
                if s.stale.get(&sub.signal).copied().unwrap_or(false)
                    && matches!(sub.state, SubState::Active { .. })
                {
                    d = d.min(recreate_at(sub, last, p));
                }
            }
        }
        d
    }

    pub(super) fn drive_subscriptions(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &self.arm else { return };
        if s.link == LinkState::Lost {
            return;
        }
        let id = s.id;
        let retry = self.cfg.retry;
        let count = s.subs.len();
        for i in 0..count {
            let Some(s) = &mut self.arm else { return };
            let sub = s.subs[i].clone();
            match sub.state {
                SubState::Requesting { sent, tries } if now - sent >= retry => {
                    if tries >= 3 {
                        // No answer to three requests: fall back to queries.
                        let rate = if sub.kind == EventType::Periodic {
                            sub.rate.min(20.0)
                        } else {
                            2.0
                        };
                        s.subs[i].state = SubState::Polling { next: now, rate };
                        s.subs[i].since = now;
                        out.fact(ArmFact::Delivery {
                            t: now,
                            signal: sub.signal,
                            delivery: Delivery::Polling(rate),
                        });
                    } else {
                        s.subs[i].state = SubState::Requesting {
                            sent: now,
                            tries: tries + 1,
                        };
                        self.create_event(id, &sub, out);
                    }
                }
                SubState::Active {
                    event_id,
                    rate,
                    renew_at,
                } if now >= renew_at => {
                    // Renew (a CreateEvent for an existing event is an update, Events v1.1).
                    let interval = s.renew_interval();
                    s.subs[i].state = SubState::Active {
                        event_id,
                        rate,
                        renew_at: now + interval,
                    };
                    self.create_event(id, &sub, out);
                }
                SubState::Polling { next, rate } if now >= next => {
                    s.subs[i].state = SubState::Polling {
                        next: now + 1.0 / rate,
                        rate,
                    };
                    self.send(id, sub.query.clone(), out);
                }
                _ => {}
            }
        }
    }

    /// The selected arm's answers about events, and the events themselves.
    pub(super) fn subscription_message(
        &mut self,
        now: f64,
        from: JausId,
        m: Message,
        out: &mut Output,
    ) {
        let Some(s) = &mut self.arm else { return };
        match m {
            Message::ConfirmEventRequest(c) => {
                let interval = s.renew_interval();
                match s.subs.iter_mut().find(|x| x.request_id == c.request_id) {
                    Some(sub) => {
                        let was_active = matches!(sub.state, SubState::Active { .. });
                        if was_active
                            && sub.kind == EventType::Periodic
                            && c.confirmed_periodic_rate == 0.0
                        {
                            // The peer cancelled it (event timeout): create it again.
                            sub.state = SubState::Requesting {
                                sent: f64::NEG_INFINITY,
                                tries: 0,
                            };
                            sub.since = now;
                            sub.last_event_seq = None;
                            return;
                        }
                        sub.state = SubState::Active {
                            event_id: c.event_id,
                            rate: c.confirmed_periodic_rate,
                            renew_at: now + interval,
                        };
                        if !was_active && let Some(delivery) = sub.delivery() {
                            sub.since = now;
                            out.fact(ArmFact::Delivery {
                                t: now,
                                signal: sub.signal,
                                delivery,
                            });
                        }
                    }
                    None => {
                        // The peer cancelled an event of ours (timeout), or confirms a cancel.
                        if let Some(sub) = s
                            .subs
                            .iter_mut()
                            .find(|x| matches!(x.state, SubState::Active { event_id, .. } if event_id == c.event_id) && c.confirmed_periodic_rate == 0.0 && x.kind == EventType::Periodic)
                        {
                            sub.state = SubState::Requesting { sent: f64::NEG_INFINITY, tries: 0 };
                        }
                    }
                }
            }
            Message::RejectEventRequest(r) => {
                if let Some(sub) = s.subs.iter_mut().find(|x| x.request_id == r.request_id) {
                    let rate = if sub.kind == EventType::Periodic {
                        sub.rate.min(20.0)
                    } else {
                        2.0
                    };
                    sub.state = SubState::Polling { next: now, rate };
                    sub.since = now;
                    out.fact(ArmFact::Delivery {
                        t: now,
                        signal: sub.signal,
                        delivery: Delivery::Polling(rate),
                    });
                } else {
                    self.stats.unexpected += 1;
                }
            }
            Message::Event(e) => self.event(now, from, &e, out),
            _ => {}
        }
    }

    /// An Event from the selected arm: applied unless older than the last one of its
    /// subscription; an unknown one is cancelled.
    fn event(&mut self, now: f64, from: JausId, e: &Event, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let known = s.subs.iter_mut().find(
            |x| matches!(x.state, SubState::Active { event_id, .. } if event_id == e.event_id),
        );
        match known {
            Some(sub) => {
                // Drop events older than the last one applied (reordered in flight).
                // The u8 sequence cannot tell "older" from "128+ events were lost", so
                // a run of apparently old events is a gap, not reordering: after
                // three in a row, follow the new numbering.
                if let Some(last) = sub.last_event_seq {
                    let d = e.sequence_number.wrapping_sub(last);
                    if (d == 0 || d > 128) && sub.old_in_a_row < 2 {
                        sub.old_in_a_row += 1;
                        self.stats.out_of_order += 1;
                        return;
                    }
                }
                sub.old_in_a_row = 0;
                sub.last_event_seq = Some(e.sequence_number);
            }
            None => {
                self.stats.unexpected += 1;
                // An event we no longer want (e.g. from before a restart): cancel it,
                // at most once a second per event ID.
                let last = s
                    .cancelled_unknown
                    .get(&e.event_id)
                    .copied()
                    .unwrap_or(f64::NEG_INFINITY);
                let setting_up = s
                    .subs
                    .iter()
                    .any(|x| matches!(x.state, SubState::Requesting { .. }));
                if !setting_up && now - last >= 1.0 {
                    s.cancelled_unknown.insert(e.event_id, now);
                    let rid = self.request_id();
                    self.send(
                        from,
                        CancelEvent {
                            request_id: rid,
                            event_id: e.event_id,
                        },
                        out,
                    );
                }
            }
        }
        let ctx = self.arm.as_ref().map(|s| s.ctx.clone()).unwrap_or_default();
        match e.report_message.decode(&ctx) {
            Ok(report) => self.apply_report(now, report, out),
            Err(_) => self.stats.malformed += 1,
        }
    }

    /// Staleness of every sampled signal, and re-creating events a restarted peer forgot.
    /// Judged on receive times, with the tick's own lateness as a margin (a thread that ran
    /// late has not looked at the socket either), and with hysteresis ([`STALE_DWELL`]).
    pub(super) fn staleness(&mut self, now: f64, out: &mut Output) {
        let margin = self.lateness;
        let Some(s) = &mut self.arm else { return };
        if s.link == LinkState::Lost {
            return;
        }
        let mut recreate = Vec::new();
        for (i, sub) in s.subs.iter().enumerate() {
            let Some(period) = sub.period() else { continue };
            let last = s.last_sample.get(&sub.signal).copied().unwrap_or(sub.since);
            let limit = stale_limit(period) + margin;
            let overdue = now - last > limit;
            let was = s.stale.get(&sub.signal).copied().unwrap_or(false);
            let changed = s
                .stale_changed
                .get(&sub.signal)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            let may_change = now - changed >= STALE_DWELL;
            let stale = if overdue != was && may_change {
                s.stale.insert(sub.signal, overdue);
                s.stale_changed.insert(sub.signal, now);
                out.fact(ArmFact::Stale {
                    t: now,
                    signal: sub.signal,
                    stale: overdue,
                });
                overdue
            } else {
                was
            };
            // The next judgement, always after now.
            let changed = s
                .stale_changed
                .get(&sub.signal)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            let next = if stale == overdue {
                if stale {
                    // Overdue and said so: only a sample changes that (`sample`).
                    f64::INFINITY
                } else {
                    last + limit + 1e-3
                }
            } else {
                // The flag waits for its dwell time to change.
                changed + STALE_DWELL
            };
            s.stale_check.insert(sub.signal, next.max(now + 1e-3));
            if stale
                && now >= recreate_at(sub, last, period)
                && matches!(sub.state, SubState::Active { .. })
            {
                recreate.push(i);
            }
        }
        if !recreate.is_empty() {
            for (i, sub) in s.subs.iter().enumerate() {
                if sub.kind == EventType::EveryChange
                    && matches!(sub.state, SubState::Active { .. })
                {
                    recreate.push(i);
                }
            }
        }
        for i in recreate {
            s.subs[i].state = SubState::Requesting {
                sent: f64::NEG_INFINITY,
                tries: 0,
            };
            s.subs[i].since = now;
            s.subs[i].last_event_seq = None;
        }
    }
}

/// When a stale event subscription is re-created (the peer may have forgotten it): stale for
/// more than three periods (at least a second) since its last sample or (re)creation.
fn recreate_at(sub: &Sub, last: f64, period: f64) -> f64 {
    last.max(sub.since) + (3.0 * period).max(1.0) + 1e-3
}
