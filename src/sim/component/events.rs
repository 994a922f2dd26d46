//! Events v1.1 as the simulator serves them: `CreateEvent` / `UpdateEvent` / `CancelEvent` /
//! `QueryEvents`, the confirmed rate, and firing an event (the report computed once per tick for
//! every subscriber of the same query), and the bounds of the subscription table.

use std::net::SocketAddr;

use super::{Component, Outgoing};
use crate::jaus::core::{
    ConfirmEventRequest, CreateEvent, Event, EventType, QueryEvents, RejectEventCode,
    RejectEventRequest, ReportEventRec, ReportEvents, UpdateEvent,
};
use crate::jaus::wire::scales;
use crate::jaus::{EmbeddedMessage, JausId, Message};

/// Most subscriptions the component keeps, all clients together.
///
/// Events are not answers (no per-datagram budget holds them back once a subscription exists),
/// so the table they come from is bounded instead: a flood of `CreateEvent` from random source
/// IDs fills it to here and no further. Our OCU subscribes to seven signals per arm; the load
/// benchmark's ten subscribers hold 30. A full table refuses new subscriptions with
/// `RejectEventRequest` `CONNECTION_REFUSED` (counted, [`super::SimStats::subscriptions_refused`]),
/// which the OCU answers by polling; the ones made before keep being served, and a flood's own
/// expire after the event timeout unless renewed.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// Most subscriptions one client (source JAUS ID) keeps: twice what our OCU asks for, and a
/// quarter of the table, so one client cannot take all of it.
pub const MAX_SUBSCRIPTIONS_PER_CLIENT: usize = 16;

#[derive(Debug, Clone)]
pub(super) struct Subscription {
    pub(super) event_id: u8,
    pub(super) client: JausId,
    /// Where the client made or last renewed it (events still reach it when a flood of random
    /// IDs pushed it out of the peer table).
    pub(super) addr: Option<SocketAddr>,
    pub(super) request_id: u8,
    pub(super) kind: EventType,
    pub(super) query_bytes: Vec<u8>,
    pub(super) query: Message,
    pub(super) rate: f64,
    pub(super) next_due: f64,
    pub(super) sequence: u8,
    pub(super) last_report: Option<Vec<u8>>,
    pub(super) refreshed: f64,
}

impl Component {
    /// The Events service's messages from `from`.
    pub(super) fn events_message(
        &mut self,
        now: f64,
        from: JausId,
        m: Message,
        out: &mut Vec<Outgoing>,
    ) {
        if matches!(m, Message::CreateEvent(_) | Message::UpdateEvent(_)) && !self.may_answer() {
            // A subscription its requester cannot be told of is not set up: it would send
            // events on a request nobody confirmed. The requester asks again (ours does).
            self.stats.replies_refused += 1;
            return;
        }
        match m {
            Message::CreateEvent(c) => self.create_event(now, from, &c, out),
            Message::UpdateEvent(u) => self.update_event(now, from, u, out),
            Message::CancelEvent(c) => {
                if let Some(i) = self
                    .events
                    .iter()
                    .position(|e| e.event_id == c.event_id && e.client == from)
                {
                    self.events.remove(i);
                    let m = ConfirmEventRequest {
                        request_id: c.request_id,
                        event_id: c.event_id,
                        confirmed_periodic_rate: 0.0,
                    };
                    self.send(from, &m.into(), out);
                } else {
                    self.reject_event(from, c.request_id, RejectEventCode::InvalidEventId, out);
                }
            }
            Message::QueryEvents(q) => {
                let events = self
                    .events
                    .iter()
                    .filter(|e| match q {
                        QueryEvents::MessageId { message_code } => e.query.id() == message_code,
                        QueryEvents::EventType { event_type } => e.kind == event_type,
                        QueryEvents::EventId { event_id } => e.event_id == event_id,
                        QueryEvents::AllEvents { .. } => true,
                    })
                    .map(|e| ReportEventRec {
                        event_type: e.kind,
                        event_id: e.event_id,
                        query_message: EmbeddedMessage(e.query_bytes.clone()),
                    })
                    .collect();
                self.send(from, &ReportEvents { events }.into(), out);
            }
            _ => {}
        }
    }

    fn reject_event(
        &mut self,
        to: JausId,
        request_id: u8,
        code: RejectEventCode,
        out: &mut Vec<Outgoing>,
    ) {
        let m = RejectEventRequest {
            request_id,
            response_code: Some(code),
            error_message: None,
        };
        self.send(to, &m.into(), out);
    }

    fn confirmed_rate(&self, requested: f64) -> f64 {
        let r = requested.min(self.cfg.rate_hz);
        scales::EVENT_RATE.quantize(r).unwrap_or(r)
    }

    fn create_event(&mut self, now: f64, from: JausId, c: &CreateEvent, out: &mut Vec<Outgoing>) {
        let query = match c.query_message.decode(&self.ctx) {
            Ok(q) if self.answer(now, &q).is_some() => q,
            _ => {
                self.reject_event(
                    from,
                    c.request_id,
                    RejectEventCode::MessageNotSupported,
                    out,
                );
                return;
            }
        };
        if c.event_type == EventType::Periodic && c.requested_periodic_rate <= 0.0 {
            self.reject_event(from, c.request_id, RejectEventCode::InvalidSetup, out);
            return;
        }
        if let EventType::Other(_) = c.event_type {
            self.reject_event(from, c.request_id, RejectEventCode::InvalidSetup, out);
            return;
        }
        let rate = match c.event_type {
            EventType::Periodic => self.confirmed_rate(c.requested_periodic_rate),
            _ => 0.0,
        };
        // A CreateEvent for an event that exists already updates it (Events v1.1).
        let existing = self.events.iter().position(|e| {
            e.client == from && e.kind == c.event_type && e.query_bytes == c.query_message.0
        });
        let index = match existing {
            Some(i) => {
                let sender = self.sender();
                let e = &mut self.events[i];
                e.rate = rate;
                e.request_id = c.request_id;
                e.refreshed = now;
                e.addr = sender.or(e.addr);
                // The requester asked again: it gets the current report even if unchanged.
                e.last_report = None;
                i
            }
            None => {
                let mine = self.events.iter().filter(|e| e.client == from).count();
                if self.events.len() >= MAX_SUBSCRIPTIONS || mine >= MAX_SUBSCRIPTIONS_PER_CLIENT {
                    self.stats.subscriptions_refused += 1;
                    self.warn_limited(
                        now,
                        &format!(
                            "refused a subscription of {from}: {} held, {mine} of them its own",
                            self.events.len()
                        ),
                    );
                    self.reject_event(from, c.request_id, RejectEventCode::ConnectionRefused, out);
                    return;
                }
                let Some(event_id) =
                    (0..=254u8).find(|id| self.events.iter().all(|e| e.event_id != *id))
                else {
                    self.reject_event(from, c.request_id, RejectEventCode::ConnectionRefused, out);
                    return;
                };
                self.events.push(Subscription {
                    event_id,
                    client: from,
                    addr: self.sender(),
                    request_id: c.request_id,
                    kind: c.event_type,
                    query_bytes: c.query_message.0.clone(),
                    query,
                    rate,
                    next_due: now,
                    sequence: 0,
                    last_report: None,
                    refreshed: now,
                });
                self.events.len() - 1
            }
        };
        // The first report goes out at once (as the peers we observed do), so the next periodic
        // one is due a period later, not at once (it went out twice in one millisecond).
        if rate > 0.0 {
            self.events[index].next_due = now + 1.0 / rate;
        }
        let e = &self.events[index];
        let confirm = ConfirmEventRequest {
            request_id: c.request_id,
            event_id: e.event_id,
            confirmed_periodic_rate: rate,
        };
        self.send(from, &confirm.into(), out);
        self.fire(now, index, out);
    }

    fn update_event(&mut self, now: f64, from: JausId, u: UpdateEvent, out: &mut Vec<Outgoing>) {
        let Some(i) = self
            .events
            .iter()
            .position(|e| e.event_id == u.event_id && e.client == from)
        else {
            self.reject_event(from, u.request_id, RejectEventCode::InvalidEventId, out);
            return;
        };
        let query = match u.query_message.decode(&self.ctx) {
            Ok(q) if self.answer(now, &q).is_some() => q,
            _ => {
                self.reject_event(
                    from,
                    u.request_id,
                    RejectEventCode::MessageNotSupported,
                    out,
                );
                return;
            }
        };
        let rate = match u.event_type {
            EventType::Periodic if u.requested_periodic_rate > 0.0 => {
                self.confirmed_rate(u.requested_periodic_rate)
            }
            EventType::EveryChange => 0.0,
            _ => {
                self.reject_event(from, u.request_id, RejectEventCode::InvalidSetup, out);
                return;
            }
        };
        let sender = self.sender();
        let e = &mut self.events[i];
        e.kind = u.event_type;
        e.rate = rate;
        e.request_id = u.request_id;
        e.query_bytes = u.query_message.0;
        e.query = query;
        e.refreshed = now;
        e.addr = sender.or(e.addr);
        let confirm = ConfirmEventRequest {
            request_id: u.request_id,
            event_id: u.event_id,
            confirmed_periodic_rate: rate,
        };
        self.send(from, &confirm.into(), out);
    }

    /// The report bytes answering `query` now, computed once per tick for all subscribers.
    fn report_bytes(&mut self, now: f64, index: usize) -> Option<Vec<u8>> {
        let key = &self.events[index].query_bytes;
        if let Some(r) = self.cache.get(key) {
            return r.clone();
        }
        let key = key.clone();
        let query = self.events[index].query.clone();
        let bytes = self
            .answer(now, &query)
            .and_then(|m| m.emit_with(self.cfg.dialect).ok());
        if self.cache.len() >= MAX_SUBSCRIPTIONS {
            // Only reports of live subscriptions are worth keeping; create/cancel between two
            // ticks must not grow it.
            self.cache.clear();
        }
        self.cache.insert(key, bytes.clone());
        bytes
    }

    /// Sends event `index` now.
    pub(super) fn fire(&mut self, now: f64, index: usize, out: &mut Vec<Outgoing>) {
        let Some(report) = self.report_bytes(now, index) else {
            return;
        };
        let e = &mut self.events[index];
        if e.kind == EventType::EveryChange && e.last_report.as_deref() == Some(&report[..]) {
            return;
        }
        let event = Event {
            event_id: e.event_id,
            sequence_number: e.sequence,
            report_message: EmbeddedMessage(report.clone()),
        };
        e.sequence = e.sequence.wrapping_add(1);
        let (client, known) = (e.client, e.addr);
        if e.kind == EventType::EveryChange {
            e.last_report = Some(report);
        }
        self.stats.events_sent += 1;
        // To the address the subscription was asked (or last renewed) from, not the newest
        // address of the client's ID: a datagram forging the client's ID from elsewhere must
        // not redirect its events (a flood of such made the OCU's slower signals stale).
        let via = known.or_else(|| self.via(client, known));
        self.send_outside_budget(client, via, &event.into(), out);
    }
}
