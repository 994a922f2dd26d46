//! The `events` suite: `CreateEvent` (periodic and every change), the confirmed and measured
//! rate, the Event's sequence number and report, `UpdateEvent`, `QueryEvents`, `CancelEvent`
//! (known and unknown `EventID`) and the event timeout (wire reference §8.2 "Events", layouts
//! §8.4, the Events v1.1 transition table).
//!
//! Every check makes its own event and cancels it before it ends, failure paths included, so
//! the component is left with the subscriptions it had.

use std::io;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Answered, Facts, Options, RateConfirmed, Run, ask};
use crate::conform::tester::{Received, Sent, Tester, Wire, name_of};
use crate::jaus::core::{
    CancelEvent, CreateEvent, EventType, QueryEventTimeout, QueryEvents, QueryHeartbeatPulse,
    QueryStatus, RejectEventCode, UpdateEvent,
};
use crate::jaus::manipulator::QueryJointPositions;
use crate::jaus::message::ids;
use crate::jaus::{EmbeddedMessage, Message};

/// Where the Events behaviour is defined.
const REFERENCE: &str = "wire reference §8.2 Events, §8.4";

/// The periodic rate `create-periodic` asks for, Hz.
const RATE_HZ: f64 = 10.0;

/// The rate `update-event` changes it to, Hz.
const UPDATED_HZ: f64 = 4.0;

/// A measured rate within this fraction of the confirmed one passes.
const RATE_TOLERANCE: f64 = 0.25;

/// Events already on their way when a cancellation is confirmed may still arrive for this long.
const CANCEL_GRACE_S: f64 = 0.2;

/// After the grace, no event may come for this long.
const CANCEL_WATCH_S: f64 = 0.5;

/// Events within this long after an update's confirmation may still follow the old rate.
const UPDATE_SETTLE_S: f64 = 0.1;

/// Seconds the every-change event is watched.
const ON_CHANGE_WATCH_S: f64 = 0.5;

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    // The event timeout event-timeout read, for event-timeout-lapse.
    let mut minutes: Option<u8> = None;
    r.check(
        "create-periodic",
        "CreateEvent (periodic) is confirmed and Event messages come at the confirmed rate",
        REFERENCE,
        create_periodic,
    );
    r.check(
        "create-on-change",
        "CreateEvent (every change) is confirmed",
        REFERENCE,
        create_on_change,
    );
    r.check(
        "update-event",
        "UpdateEvent with a new rate is confirmed and events follow the new rate",
        REFERENCE,
        update_event,
    );
    r.check(
        "query-events",
        "QueryEvents lists the event created",
        REFERENCE,
        query_events,
    );
    r.check(
        "cancel-event",
        "CancelEvent is confirmed and the events stop",
        REFERENCE,
        cancel_event,
    );
    r.check(
        "cancel-unknown",
        "CancelEvent of an EventID that does not exist is rejected",
        REFERENCE,
        cancel_unknown,
    );
    r.check(
        "event-timeout",
        "QueryEventTimeout is answered with ReportEventTimeout (minutes)",
        REFERENCE,
        |t, f, o| event_timeout(t, f, o, &mut minutes),
    );
    r.check(
        "event-timeout-lapse",
        "An event not renewed within the event timeout is cancelled",
        REFERENCE,
        |_, f, _| Ok(event_timeout_lapse(f, minutes)),
    );
}

/// The query the events are made on, and the report they carry.
struct Subject {
    query: Message,
    report_id: u16,
}

impl Subject {
    /// A query the component answers, by the services it lists: `QueryStatus` (Management),
    /// `QueryHeartbeatPulse` (Liveness), `QueryJointPositions` (the joint position sensor);
    /// `QueryStatus` when its services are unknown.
    fn pick(facts: &Facts) -> Subject {
        let management = Subject {
            query: QueryStatus.into(),
            report_id: ids::ReportStatus,
        };
        if facts.services.is_none() || facts.lists("core:Management") == Some(true) {
            management
        } else if facts.lists("core:Liveness") == Some(true) {
            Subject {
                query: QueryHeartbeatPulse.into(),
                report_id: ids::ReportHeartbeatPulse,
            }
        } else if facts.lists("ManipulatorJointPositionSensor") == Some(true) {
            Subject {
                query: QueryJointPositions.into(),
                report_id: ids::ReportJointPositions,
            }
        } else {
            management
        }
    }

    fn name(&self) -> &'static str {
        self.query.name()
    }

    fn embedded(&self) -> io::Result<EmbeddedMessage> {
        EmbeddedMessage::new(&self.query)
            .map_err(|e| io::Error::other(format!("encoding {}: {e}", self.name())))
    }
}

/// What a `CreateEvent` (or `UpdateEvent`, `CancelEvent`) got.
enum Answer {
    /// `ConfirmEventRequest`: the `EventID` and the confirmed rate.
    Confirmed(Received, u8, f64),
    /// `RejectEventRequest` and its code.
    Rejected(Received, Option<RejectEventCode>),
    /// Nothing within the reply bound.
    Silent,
}

/// Waits for `ConfirmEventRequest` or `RejectEventRequest` with `request_id` from the target.
fn answer<W: Wire>(t: &mut Tester<W>, request_id: u8) -> io::Result<Answer> {
    let target = t.target;
    let reply = t.wait_for(t.reply_bound, |r| {
        r.header.source == target
            && match r.message() {
                Some(Message::ConfirmEventRequest(c)) => c.request_id == request_id,
                Some(Message::RejectEventRequest(j)) => j.request_id == request_id,
                _ => false,
            }
    })?;
    Ok(match reply {
        None => Answer::Silent,
        Some(r) => match r.message() {
            Some(Message::ConfirmEventRequest(c)) => {
                let (id, rate) = (c.event_id, c.confirmed_periodic_rate);
                Answer::Confirmed(r, id, rate)
            }
            Some(Message::RejectEventRequest(j)) => {
                let code = j.response_code;
                Answer::Rejected(r, code)
            }
            _ => Answer::Silent,
        },
    })
}

fn note_answered(facts: &mut Facts, query: &str, answer: &Answer) {
    let reply = match answer {
        Answer::Confirmed(..) => ids::ConfirmEventRequest,
        Answer::Rejected(..) => ids::RejectEventRequest,
        Answer::Silent => {
            facts.unanswered.insert(query.into());
            return;
        }
    };
    facts.answered.insert(Answered {
        query: query.into(),
        reply: name_of(reply),
    });
}

fn code_text(code: Option<RejectEventCode>) -> String {
    code.map_or_else(
        || "no ResponseCode".into(),
        |c| format!("ResponseCode {c:?}"),
    )
}

/// Sends `CreateEvent` and waits for its answer.
fn create<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    s: &Subject,
    kind: EventType,
    rate: f64,
    request_id: u8,
) -> io::Result<(Sent, Answer)> {
    let m = CreateEvent {
        request_id,
        event_type: kind,
        requested_periodic_rate: rate,
        query_message: s.embedded()?,
    };
    let sent = t.send(&m.into())?;
    let a = answer(t, request_id)?;
    note_answered(facts, "CreateEvent", &a);
    Ok((sent, a))
}

/// Sends `CancelEvent` for `event_id` and waits for its answer.
fn cancel<W: Wire>(t: &mut Tester<W>, event_id: u8, request_id: u8) -> io::Result<(Sent, Answer)> {
    let sent = t.send(
        &CancelEvent {
            request_id,
            event_id,
        }
        .into(),
    )?;
    let a = answer(t, request_id)?;
    Ok((sent, a))
}

/// Cancels `event_id` after a check, whatever the check found; the check's own result wins.
fn cleanup<W: Wire>(
    t: &mut Tester<W>,
    event_id: u8,
    result: io::Result<Outcome>,
) -> io::Result<Outcome> {
    let cancelled = cancel(t, event_id, event_id.wrapping_add(0x80));
    let outcome = result?;
    cancelled?;
    Ok(outcome)
}

/// The outcome of a `CreateEvent` that was not confirmed.
fn not_confirmed(
    facts: &Facts,
    s: &Subject,
    sent: &Sent,
    a: Answer,
    what: &str,
    bound: f64,
) -> Outcome {
    match a {
        Answer::Rejected(r, code) => Outcome::fail(format!(
            "CreateEvent ({what}, on {}) was answered with RejectEventRequest ({}): a component \
             listing core:Events accepts an event on a query it answers",
            s.name(),
            code_text(code)
        ))
        .with([sent.evidence(), r.evidence()]),
        Answer::Silent | Answer::Confirmed(..) => Outcome::fail(format!(
            "CreateEvent ({what}, on {}) got neither ConfirmEventRequest nor RejectEventRequest \
             with its RequestID within {:.1} s{}",
            s.name(),
            bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]),
    }
}

/// Event messages from the target to the tester with `event_id`, for `within` seconds.
fn collect_events<W: Wire>(
    t: &mut Tester<W>,
    event_id: u8,
    within: f64,
) -> io::Result<Vec<Received>> {
    let (target, me) = (t.target, t.me);
    t.collect(within, |r| {
        r.header.source == target
            && r.header.destination == me
            && matches!(r.message(), Some(Message::Event(e)) if e.event_id == event_id)
    })
}

/// The rate of events received at `at` (seconds, in order): one over the median interval
/// between consecutive ones; `None` with fewer than two or a median of zero.
///
/// A median, not the count over the first-to-last span, because the times are when the tester
/// read each event: a tester held up on a busy machine reads the events queued meanwhile in a
/// burst, which makes one interval long and a few short, and a component held up skips a
/// period, which makes one interval long. Neither moves the median, while a component at another
/// rate moves every interval. The count over the window is judged too ([`judge_times`]), so a
/// component that stops halfway does not pass on the intervals it kept.
fn median_rate(at: &[f64]) -> Option<f64> {
    let mut gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    let n = gaps.len();
    let median = if n % 2 == 1 {
        gaps[n / 2]
    } else {
        f64::midpoint(gaps[n / 2 - 1], gaps[n / 2])
    };
    (median > 0.0).then(|| 1.0 / median)
}

/// The first problem with a run of events' sequence numbers or reports, with its evidence.
fn sequence_problem(events: &[Received], report_id: u16) -> Option<(String, Vec<Evidence>)> {
    let mut problem = None;
    let mut previous: Option<(&Received, u8)> = None;
    for r in events {
        let Some(Message::Event(e)) = r.message() else {
            continue;
        };
        let inner = e.report_message.message_id();
        if inner != Some(report_id) {
            problem = Some((
                format!(
                    "Event (frame {}) carries {} where {} was asked for: ReportMessage is the \
                     report of the event's query",
                    r.first_frame,
                    inner.map_or_else(|| "no message ID".into(), name_of),
                    name_of(report_id)
                ),
                vec![r.evidence()],
            ));
            break;
        }
        if let Some((p, seq)) = previous
            && e.sequence_number != seq.wrapping_add(1)
        {
            problem = Some((
                format!(
                    "Event SequenceNumber went from {seq} (frame {}) to {} (frame {}): it \
                     increments by one per event",
                    p.first_frame, e.sequence_number, r.first_frame
                ),
                vec![p.evidence(), r.evidence()],
            ));
            break;
        }
        previous = Some((r, e.sequence_number));
    }
    problem
}

/// Seconds to watch events at `hz`: eight periods, at least 2 s, at most 4 s (long enough that
/// a held-up read or a skipped period is a small part of the count).
fn window(hz: f64) -> f64 {
    if hz > 0.0 {
        (8.0 / hz).clamp(2.0, 4.0)
    } else {
        2.0
    }
}

/// Whether `count` events in `within` s are as many as `hz` gives, within [`RATE_TOLERANCE`]
/// and one event either way (the window's edges cut a period).
fn count_fits(count: usize, hz: f64, within: f64) -> bool {
    let expected = hz * within;
    (count as f64 - expected).abs() <= RATE_TOLERANCE * expected + 1.0
}

/// The rate of events read at `at` against the `confirmed` Hz over `within` s: the measured
/// rate, and `Ok` with the words when the median interval and the count both fit, else `Err`
/// with what did not.
fn judge_times(at: &[f64], confirmed: f64, within: f64) -> (Option<f64>, Result<String, String>) {
    let rate = median_rate(at);
    (rate, judge_rate_of(at.len(), rate, confirmed, within))
}

/// [`judge_times`]'s verdict for `n` events at the median `rate`.
fn judge_rate_of(
    n: usize,
    rate: Option<f64>,
    confirmed: f64,
    within: f64,
) -> Result<String, String> {
    let Some(rate) = rate else {
        let why = if n < 2 {
            "at least two are needed to measure the rate"
        } else {
            "more than half of them at the same instant, so no rate"
        };
        return Err(format!(
            "{n} Event message(s) came within {within:.1} s at a confirmed {confirmed:.2} Hz; \
             {why}"
        ));
    };
    let apart = 1.0 / rate;
    let allowed = RATE_TOLERANCE * 100.0;
    if (rate - confirmed).abs() > RATE_TOLERANCE * confirmed {
        return Err(format!(
            "{n} Event messages in {within:.1} s came a median {apart:.3} s apart, {rate:.2} Hz, \
             not the confirmed {confirmed:.2} Hz (±{allowed:.0} % allowed)"
        ));
    }
    if !count_fits(n, confirmed, within) {
        return Err(format!(
            "{n} Event messages came in {within:.1} s, where {:.0} are due at the confirmed \
             {confirmed:.2} Hz (±{allowed:.0} % and one allowed), though a median {apart:.3} s \
             apart",
            confirmed * within
        ));
    }
    Ok(format!(
        "{n} Event messages in {within:.1} s, a median {apart:.3} s apart: {rate:.2} Hz \
         (confirmed {confirmed:.2} Hz)"
    ))
}

/// Judges events at `confirmed` Hz watched for `within` s; `Ok(text)` when they pass.
fn judge_rate(
    events: &[Received],
    report_id: u16,
    confirmed: f64,
    within: f64,
) -> (Result<String, String>, Option<f64>, Vec<Evidence>) {
    let mut evidence: Vec<Evidence> = events.first().map(Received::evidence).into_iter().collect();
    evidence.extend(
        events
            .last()
            .filter(|_| events.len() > 1)
            .map(Received::evidence),
    );
    let at: Vec<f64> = events.iter().map(|r| r.at).collect();
    let (rate, verdict) = judge_times(&at, confirmed, within);
    if let Some((text, ev)) = sequence_problem(events, report_id) {
        return (Err(text), rate, ev);
    }
    let verdict = verdict.map(|text| {
        format!(
            "{text}, SequenceNumber +1 each, each carrying {}",
            name_of(report_id)
        )
    });
    (verdict, rate, evidence)
}

/// A confirmed event: the `CreateEvent`, its confirmation, the `EventID` and confirmed rate.
struct Made {
    sent: Sent,
    confirm: Received,
    event_id: u8,
    confirmed: f64,
}

impl Made {
    fn evidence(&self) -> [Evidence; 2] {
        [self.sent.evidence(), self.confirm.evidence()]
    }
}

/// Makes an event; `Err(outcome)` when it was not confirmed.
fn make<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    s: &Subject,
    kind: EventType,
    rate: f64,
    request_id: u8,
) -> io::Result<Result<Made, Outcome>> {
    let (sent, a) = create(t, facts, s, kind, rate, request_id)?;
    let what = match kind {
        EventType::Periodic => "periodic",
        _ => "every change",
    };
    Ok(match a {
        Answer::Confirmed(confirm, event_id, confirmed) => Ok(Made {
            sent,
            confirm,
            event_id,
            confirmed,
        }),
        Answer::Rejected(r, code)
            if kind == EventType::EveryChange && facts.lists("core:Events") != Some(true) =>
        {
            Err(Outcome::not_applicable(format!(
                "CreateEvent (every change, on {}) was rejected ({}) and the component's \
                 services are unknown, so nothing says it offers every-change events",
                s.name(),
                code_text(code)
            ))
            .with([sent.evidence(), r.evidence()]))
        }
        other => Err(not_confirmed(facts, s, &sent, other, what, t.reply_bound)),
    })
}

/// Makes an event, runs `body` on it and cancels it, whatever `body` found.
fn with_event<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    (kind, rate, request_id): (EventType, f64, u8),
    body: impl FnOnce(&mut Tester<W>, &mut Facts, &Subject, &Made) -> io::Result<Outcome>,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:Events") {
        return Ok(na);
    }
    let s = Subject::pick(facts);
    let made = match make(t, facts, &s, kind, rate, request_id)? {
        Ok(m) => m,
        Err(outcome) => return Ok(outcome),
    };
    let result = body(t, facts, &s, &made);
    cleanup(t, made.event_id, result)
}

fn create_periodic<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    with_event(
        t,
        facts,
        (EventType::Periodic, RATE_HZ, 0x41),
        periodic_body,
    )
}

fn periodic_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    s: &Subject,
    made: &Made,
) -> io::Result<Outcome> {
    let (event_id, confirmed) = (made.event_id, made.confirmed);
    if confirmed <= 0.0 {
        return Ok(Outcome::fail(format!(
            "ConfirmEventRequest for a periodic event at {RATE_HZ} Hz confirmed 0 Hz: a periodic \
             event has a rate"
        ))
        .with(made.evidence()));
    }
    let within = window(confirmed);
    let events = collect_events(t, event_id, within)?;
    let (verdict, measured, evidence) = judge_rate(&events, s.report_id, confirmed, within);
    facts.rates.push(RateConfirmed {
        report: name_of(s.report_id),
        requested_hz: RATE_HZ,
        confirmed_hz: confirmed,
        measured_hz: measured,
    });
    let head = format!(
        "CreateEvent (periodic {RATE_HZ} Hz on {}) confirmed as EventID {event_id} at \
         {confirmed:.2} Hz",
        s.name()
    );
    let outcome = match verdict {
        Ok(text) => Outcome::pass(format!("{head}; {text}")),
        Err(text) => Outcome::fail(format!("{head}, but {text}")),
    };
    Ok(outcome.with(made.evidence()).with(evidence))
}

fn create_on_change<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    with_event(
        t,
        facts,
        (EventType::EveryChange, 0.0, 0x42),
        on_change_body,
    )
}

fn on_change_body<W: Wire>(
    t: &mut Tester<W>,
    _facts: &mut Facts,
    s: &Subject,
    made: &Made,
) -> io::Result<Outcome> {
    let event_id = made.event_id;
    let events = collect_events(t, event_id, ON_CHANGE_WATCH_S)?;
    let head = format!(
        "CreateEvent (every change on {}) confirmed as EventID {event_id}",
        s.name()
    );
    if let Some((text, ev)) = sequence_problem(&events, s.report_id) {
        return Ok(Outcome::fail(format!("{head}, but {text}"))
            .with(made.evidence())
            .with(ev));
    }
    let seen = if events.is_empty() {
        format!(
            "no Event within {ON_CHANGE_WATCH_S} s (the report did not change, or changes are \
             sent later)"
        )
    } else {
        format!(
            "{} Event message(s) within {ON_CHANGE_WATCH_S} s, each carrying {}",
            events.len(),
            name_of(s.report_id)
        )
    };
    Ok(Outcome::pass(format!("{head}; {seen}"))
        .with(made.evidence())
        .with(events.first().map(Received::evidence)))
}

fn update_event<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    with_event(t, facts, (EventType::Periodic, RATE_HZ, 0x43), update_body)
}

fn update_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    s: &Subject,
    made: &Made,
) -> io::Result<Outcome> {
    let event_id = made.event_id;
    let update = UpdateEvent {
        request_id: 0x44,
        event_type: EventType::Periodic,
        requested_periodic_rate: UPDATED_HZ,
        event_id,
        query_message: s.embedded()?,
    };
    let sent = t.send(&update.into())?;
    let a = answer(t, 0x44)?;
    note_answered(facts, "UpdateEvent", &a);
    let (confirm, confirmed) = match a {
        Answer::Confirmed(r, id, rate) if id == event_id => (r, rate),
        Answer::Confirmed(r, id, _) => {
            return Ok(Outcome::fail(format!(
                "UpdateEvent of EventID {event_id} was confirmed for EventID {id}: the \
                 confirmation names the event updated"
            ))
            .with([sent.evidence(), r.evidence()]));
        }
        Answer::Rejected(r, code) => {
            return Ok(Outcome::fail(format!(
                "UpdateEvent of EventID {event_id} to {UPDATED_HZ} Hz was rejected ({}): an \
                 existing event can be updated",
                code_text(code)
            ))
            .with([sent.evidence(), r.evidence()]));
        }
        Answer::Silent => {
            return Ok(Outcome::fail(format!(
                "UpdateEvent of EventID {event_id} to {UPDATED_HZ} Hz got no \
                 ConfirmEventRequest or RejectEventRequest within {:.1} s",
                t.reply_bound
            ))
            .with([sent.evidence()]));
        }
    };
    // Events already under way at the old rate are not part of the new one.
    let within = window(confirmed);
    let all = collect_events(t, event_id, within + UPDATE_SETTLE_S)?;
    let events: Vec<Received> = all
        .into_iter()
        .filter(|r| r.at > confirm.at + UPDATE_SETTLE_S)
        .collect();
    let (verdict, _, evidence) = judge_rate(&events, s.report_id, confirmed, within);
    let head = format!(
        "UpdateEvent of EventID {event_id} from {RATE_HZ} Hz to {UPDATED_HZ} Hz confirmed at \
         {confirmed:.2} Hz"
    );
    let outcome = match verdict {
        Ok(text) => Outcome::pass(format!("{head}; then {text}")),
        Err(text) => Outcome::fail(format!("{head}, but then {text}")),
    };
    Ok(outcome
        .with([sent.evidence(), confirm.evidence()])
        .with(evidence))
}

fn query_events<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    // A slow rate: this check is about the list, not the events.
    with_event(
        t,
        facts,
        (EventType::Periodic, 1.0, 0x45),
        query_events_body,
    )
}

fn query_events_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    s: &Subject,
    made: &Made,
) -> io::Result<Outcome> {
    let event_id = made.event_id;
    let q: Message = QueryEvents::AllEvents { all_events: 0 }.into();
    let (sent, reply) = ask(t, facts, &q, ids::ReportEvents)?;
    let Some(reply) = reply else {
        return Ok(Outcome::fail(format!(
            "QueryEvents (all events) got no ReportEvents within {:.1} s",
            t.reply_bound
        ))
        .with([sent.evidence()]));
    };
    let Some(Message::ReportEvents(list)) = reply.message() else {
        return Ok(Outcome::fail(
            "QueryEvents (all events) was answered with a ReportEvents that does not decode as \
             §8.4 lays it out",
        )
        .with([sent.evidence(), reply.evidence()]));
    };
    let query_bytes = s.embedded()?;
    let outcome = match list.events.iter().find(|e| e.event_id == event_id) {
        Some(e) if e.event_type == EventType::Periodic && e.query_message == query_bytes => {
            Outcome::pass(format!(
                "ReportEvents lists {} event(s), among them EventID {event_id} (periodic, on {}) \
                 as created",
                list.events.len(),
                s.name()
            ))
        }
        Some(e) => Outcome::fail(format!(
            "ReportEvents lists EventID {event_id} as {:?} on {}, not the periodic event on {} \
             that was created",
            e.event_type,
            e.query_message
                .message_id()
                .map_or_else(|| "no message".into(), name_of),
            s.name()
        )),
        None => Outcome::fail(format!(
            "ReportEvents lists {} event(s) but not EventID {event_id}, confirmed just before",
            list.events.len()
        )),
    };
    Ok(outcome.with([made.sent.evidence(), sent.evidence(), reply.evidence()]))
}

fn cancel_event<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    // The cancellation after the body finds the event gone (RejectEventRequest) when it passed,
    // and ends it when it did not.
    with_event(t, facts, (EventType::Periodic, RATE_HZ, 0x46), cancel_body)
}

fn cancel_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _s: &Subject,
    made: &Made,
) -> io::Result<Outcome> {
    let event_id = made.event_id;
    let (sent, a) = cancel(t, event_id, 0x47)?;
    note_answered(facts, "CancelEvent", &a);
    let confirm = match a {
        Answer::Confirmed(r, id, _) if id == event_id => r,
        Answer::Confirmed(r, id, _) => {
            return Ok(Outcome::fail(format!(
                "CancelEvent of EventID {event_id} was confirmed for EventID {id}: the \
                 confirmation names the event cancelled"
            ))
            .with([sent.evidence(), r.evidence()]));
        }
        Answer::Rejected(r, code) => {
            return Ok(Outcome::fail(format!(
                "CancelEvent of EventID {event_id}, confirmed just before, was rejected ({}): a \
                 cancellation of an existing event is confirmed",
                code_text(code)
            ))
            .with([sent.evidence(), r.evidence()]));
        }
        Answer::Silent => {
            return Ok(Outcome::fail(format!(
                "CancelEvent of EventID {event_id} got no ConfirmEventRequest within {:.1} s",
                t.reply_bound
            ))
            .with([sent.evidence()]));
        }
    };
    let events = collect_events(t, event_id, CANCEL_GRACE_S + CANCEL_WATCH_S)?;
    let late: Vec<&Received> = events
        .iter()
        .filter(|r| r.at > confirm.at + CANCEL_GRACE_S)
        .collect();
    if let Some(first) = late.first() {
        return Ok(Outcome::fail(format!(
            "CancelEvent of EventID {event_id} was confirmed, yet {} Event message(s) with that \
             EventID came more than {CANCEL_GRACE_S} s later (first: frame {})",
            late.len(),
            first.first_frame
        ))
        .with([sent.evidence(), confirm.evidence(), first.evidence()]));
    }
    Ok(Outcome::pass(format!(
        "CancelEvent of EventID {event_id} confirmed; no Event with that EventID from \
         {CANCEL_GRACE_S} s to {:.1} s after the confirmation",
        CANCEL_GRACE_S + CANCEL_WATCH_S
    ))
    .with([sent.evidence(), confirm.evidence()]))
}

fn cancel_unknown<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:Events") {
        return Ok(na);
    }
    // An EventID nobody holds: not among those the component lists (if it lists them).
    let q: Message = QueryEvents::AllEvents { all_events: 0 }.into();
    let (_, reply) = ask(t, facts, &q, ids::ReportEvents)?;
    let used: Vec<u8> = match reply.as_ref().and_then(Received::message) {
        Some(Message::ReportEvents(l)) => l.events.iter().map(|e| e.event_id).collect(),
        _ => Vec::new(),
    };
    let Some(unknown) = (0..=254u8).rev().find(|id| !used.contains(id)) else {
        return Ok(Outcome::not_applicable(
            "the component lists every EventID 0..254 in use: none is unknown",
        ));
    };
    let (sent, a) = cancel(t, unknown, 0x48)?;
    note_answered(facts, "CancelEvent", &a);
    Ok(match a {
        Answer::Rejected(r, code) => Outcome::pass(format!(
            "CancelEvent of EventID {unknown}, which does not exist, was answered with \
             RejectEventRequest ({})",
            code_text(code)
        ))
        .with([sent.evidence(), r.evidence()]),
        Answer::Confirmed(r, ..) => Outcome::fail(format!(
            "CancelEvent of EventID {unknown}, which does not exist, was confirmed; the \
             reference answers it with RejectEventRequest"
        ))
        .with([sent.evidence(), r.evidence()]),
        Answer::Silent => Outcome::fail(format!(
            "CancelEvent of EventID {unknown}, which does not exist, got no RejectEventRequest \
             within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]),
    })
}

fn event_timeout<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
    minutes: &mut Option<u8>,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:Events") {
        return Ok(na);
    }
    let (sent, reply) = ask(t, facts, &QueryEventTimeout.into(), ids::ReportEventTimeout)?;
    let Some(reply) = reply else {
        return Ok(Outcome::fail(format!(
            "QueryEventTimeout got no ReportEventTimeout within {:.1} s (Events v1.1 answers \
             it){}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]));
    };
    let Some(Message::ReportEventTimeout(r)) = reply.message() else {
        return Ok(Outcome::fail(
            "ReportEventTimeout does not decode as §8.4 lays it out (one u8, minutes)",
        )
        .with([sent.evidence(), reply.evidence()]));
    };
    *minutes = Some(r.timeout);
    let text = if r.timeout == 0 {
        "0 (the timeout is disabled: events never lapse)".to_string()
    } else {
        format!(
            "{} minute(s): an event not renewed (CreateEvent or UpdateEvent) within it is \
             cancelled with a ConfirmEventRequest; the lapse is not waited for (see \
             event-timeout-lapse)",
            r.timeout
        )
    };
    Ok(Outcome::pass(format!("ReportEventTimeout: {text}"))
        .with([sent.evidence(), reply.evidence()]))
}

/// The lapse of the event timeout takes minutes: never waited for.
fn event_timeout_lapse(facts: &Facts, minutes: Option<u8>) -> Outcome {
    if let Some(na) = facts.requires("core:Events") {
        return na;
    }
    Outcome::not_applicable(match minutes {
        Some(0) => "the event timeout is disabled (ReportEventTimeout 0): no lapse to see".into(),
        Some(m) => format!(
            "event timeout {m} minute(s): its lapse was not waited for, the run stays short"
        ),
        None => "the event timeout is unknown (no ReportEventTimeout) and counted in minutes: \
                 its lapse was not waited for"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::{RATE_TOLERANCE, judge_times, median_rate, window};

    /// Reads at `hz` from 0 for `within` s, as a tester that is never held up sees them.
    fn steady(hz: f64, within: f64) -> Vec<f64> {
        let n = (hz * within).floor() as usize;
        (0..n).map(|k| k as f64 / hz).collect()
    }

    fn passes(at: &[f64], hz: f64, within: f64) -> bool {
        judge_times(at, hz, within).1.is_ok()
    }

    #[test]
    fn events_at_the_confirmed_rate_pass() {
        for hz in [4.0, 10.0, 25.0] {
            let w = window(hz);
            let at = steady(hz, w);
            let r = median_rate(&at).unwrap();
            assert!((r - hz).abs() < 1e-9, "{hz} Hz read as {r}");
            assert!(passes(&at, hz, w), "{hz} Hz over {w} s");
        }
    }

    /// The rate from the count over the first-to-last span, as this suite once read it.
    fn span_rate(at: &[f64]) -> f64 {
        (at.len() - 1) as f64 / (at[at.len() - 1] - at[0])
    }

    #[test]
    fn a_tester_held_up_for_0_7_s_still_reads_the_rate() {
        let (hz, w) = (10.0, window(10.0));
        // Held up at the start: the events of the first 0.7 s are read at once at 0.7 s.
        let start: Vec<f64> = steady(hz, w).into_iter().map(|t| t.max(0.7)).collect();
        // Held up in the middle, from 0.6 s to 1.3 s.
        let middle: Vec<f64> = steady(hz, w)
            .into_iter()
            .map(|t| if (0.6..1.3).contains(&t) { 1.3 } else { t })
            .collect();
        // Held up at the end: the last event read 0.7 s late.
        let mut end = steady(hz, w);
        *end.last_mut().unwrap() += 0.7;
        for at in [&start, &middle, &end] {
            assert!(passes(at, hz, w), "{at:?}");
        }
        // The span read a rate off by more than the tolerance at the start and at the end.
        for at in [&start, &end] {
            let r = span_rate(at);
            assert!(
                (r - hz).abs() > RATE_TOLERANCE * hz,
                "span {r} Hz for {at:?}"
            );
        }
    }

    #[test]
    fn a_component_that_skips_a_stalled_period_still_passes() {
        let (hz, w) = (4.0, window(4.0));
        let mut at = steady(hz, w);
        at.remove(3);
        assert!(passes(&at, hz, w), "{at:?}");
    }

    #[test]
    fn another_rate_a_stop_halfway_or_a_burst_fails_each_for_its_reason() {
        let w = window(10.0);
        let why = |at: &[f64]| judge_times(at, 10.0, w).1.unwrap_err();
        // Steady at 7 or 13 Hz where 10 were confirmed: the median says so.
        assert!(why(&steady(7.0, w)).contains("not the confirmed 10.00 Hz"));
        assert!(why(&steady(13.0, w)).contains("not the confirmed 10.00 Hz"));
        // 10 Hz for the first half of the window, then nothing: the count says so.
        assert!(why(&steady(10.0, w / 2.0)).contains("where 20 are due"));
        // Pairs at once every 0.2 s: 10 a second on average, not at 10 Hz.
        let pairs: Vec<f64> = (0..10).flat_map(|k| [0.2 * f64::from(k); 2]).collect();
        assert!(why(&pairs).contains("at the same instant"), "{pairs:?}");
        // Fewer than two events.
        assert!(why(&[0.5]).contains("at least two"));
        assert!(median_rate(&[0.5]).is_none());
    }
}
