//! Events v1.1 as the simulator serves them: `CreateEvent` / `UpdateEvent` / `CancelEvent` /
//! `QueryEvents`, the confirmed rate, and firing an event (the report computed once per tick for
//! every subscriber of the same query).

use super::{Component, Outgoing};
use crate::jaus::core::{
    ConfirmEventRequest, CreateEvent, Event, EventType, QueryEvents, RejectEventCode,
    RejectEventRequest, ReportEventRec, ReportEvents, UpdateEvent,
};
use crate::jaus::wire::scales;
use crate::jaus::{EmbeddedMessage, JausId, Message};

#[derive(Debug, Clone)]
pub(super) struct Subscription {
    pub(super) event_id: u8,
    pub(super) client: JausId,
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
                let e = &mut self.events[i];
                e.rate = rate;
                e.request_id = c.request_id;
                e.refreshed = now;
                // The requester asked again: it gets the current report even if unchanged.
                e.last_report = None;
                i
            }
            None => {
                let Some(event_id) =
                    (0..=254u8).find(|id| self.events.iter().all(|e| e.event_id != *id))
                else {
                    self.reject_event(from, c.request_id, RejectEventCode::ConnectionRefused, out);
                    return;
                };
                self.events.push(Subscription {
                    event_id,
                    client: from,
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
        let e = &mut self.events[i];
        e.kind = u.event_type;
        e.rate = rate;
        e.request_id = u.request_id;
        e.query_bytes = u.query_message.0;
        e.query = query;
        e.refreshed = now;
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
        let client = e.client;
        if e.kind == EventType::EveryChange {
            e.last_report = Some(report);
        }
        self.stats.events_sent += 1;
        self.send(client, &event.into(), out);
    }
}
