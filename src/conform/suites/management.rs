//! The `management` suite: the Management v1.1 state machine (STANDBY, READY, EMERGENCY),
//! commands from a client without control, emergencies from one and from two clients, and
//! Reset (wire reference §8.2 Management, §8.4, §9 C10).
//!
//! Every check that changes the state takes control first (`RequestControl` with
//! `--authority`), returns the component to the state it was found in (READY or STANDBY) and
//! releases control. Shutdown is never sent: it would stop the component under test.

use std::io;

use crate::conform::check::{Evidence, Outcome, Verdict};
use crate::conform::run::{Facts, Options, Run, ask};
use crate::conform::tester::{Received, Sent, Tester, Wire};
use crate::jaus::core::{
    ClearEmergency, ConfirmControlCode, QueryControl, QueryStatus, ReleaseControl, RequestControl,
    Reset, Resume, SetEmergency, Standby, Status,
};
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};

/// Where the Management behaviour is defined.
const REFERENCE: &str = "wire reference §8.2 Management, §8.4";
/// Where the emergency behaviour is defined.
const REFERENCE_EMERGENCY: &str = "wire reference §8.2 Management, §8.4, §9 C10";
/// `EmergencyCode` STOP, sent as a u16 (§9 C10).
const STOP: u16 = 1;

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    r.check(
        "query-status",
        "QueryStatus is answered with ReportStatus carrying a defined status",
        REFERENCE,
        query_status,
    );
    r.check(
        "standby-resume",
        "Standby moves the component to STANDBY, Resume back to READY",
        REFERENCE,
        |t, facts, opts| controlled(t, facts, opts, standby_resume),
    );
    r.check(
        "command-without-control",
        "Standby from a client that does not hold control changes nothing",
        "wire reference §8.2 Access control, Management",
        |t, facts, opts| controlled(t, facts, opts, command_without_control),
    );
    r.check(
        "emergency-one-client",
        "SetEmergency → EMERGENCY; ClearEmergency → STANDBY; Resume → READY",
        REFERENCE_EMERGENCY,
        |t, facts, opts| controlled(t, facts, opts, emergency_one_client),
    );
    r.check(
        "emergency-two-clients",
        "An emergency set by two clients ends only when both have cleared it",
        REFERENCE_EMERGENCY,
        |t, facts, opts| controlled(t, facts, opts, emergency_two_clients),
    );
    r.check(
        "reset-not-restart",
        "Reset → STANDBY, and the component keeps running and answering (Shutdown is not sent)",
        REFERENCE,
        |t, facts, opts| controlled(t, facts, opts, reset_not_restart),
    );
}

/// A status as the reports print it: its name and value, or that none came.
pub(super) fn said(s: Option<Status>) -> String {
    s.map_or_else(
        || "no ReportStatus".into(),
        |s| format!("{s} ({})", s.raw()),
    )
}

/// The status a `ReportStatus` carries, when it decoded.
fn status_of(r: &Received) -> Option<Status> {
    match r.message() {
        Some(Message::ReportStatus(s)) => Some(s.status),
        _ => None,
    }
}

/// One `QueryStatus` → `ReportStatus`: what was sent, and the reply with its status.
pub(super) fn read_status<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
) -> io::Result<(Sent, Option<(Received, Status)>)> {
    let (sent, reply) = ask(t, facts, &QueryStatus.into(), ids::ReportStatus)?;
    Ok((sent, reply.and_then(|r| status_of(&r).map(|s| (r, s)))))
}

/// What polling the status found.
pub(super) struct Polled {
    /// The last query and its report.
    pub evidence: Vec<Evidence>,
    /// The last status read (`None`: no report came).
    pub status: Option<Status>,
    /// Whether it was the one wanted.
    pub reached: bool,
}

/// Seconds a state change may take to show in `ReportStatus`: twice the reply bound.
pub(super) fn settle_bound<W: Wire>(t: &Tester<W>) -> f64 {
    2.0 * t.reply_bound
}

/// Asks `QueryStatus` until the status is one `want` accepts or `within` seconds have passed
/// (a query every 50 ms at most; every reply waited for within the reply bound).
pub(super) fn await_status<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    within: f64,
    want: impl Fn(Status) -> bool,
) -> io::Result<Polled> {
    let deadline = t.now() + within;
    loop {
        let (sent, got) = read_status(t, facts)?;
        let mut evidence = vec![sent.evidence()];
        let status = got.map(|(r, s)| {
            evidence.push(r.evidence());
            s
        });
        let reached = status.is_some_and(&want);
        if reached || t.now() >= deadline {
            return Ok(Polled {
                evidence,
                status,
                reached,
            });
        }
        // A short pause that keeps whatever comes meanwhile.
        t.collect(0.05, |_| false)?;
    }
}

/// `RequestControl` with `authority`: the evidence when `ConfirmControl` accepted it, else the
/// failure to return (the checks that need control cannot run).
pub(super) fn take_control<W: Wire>(
    t: &mut Tester<W>,
    authority: u8,
) -> io::Result<Result<Vec<Evidence>, Outcome>> {
    let me = t.me;
    let sent = t.send_as(
        &RequestControl {
            authority_code: authority,
        }
        .into(),
        None,
    )?;
    let Some(reply) = t.reply_to(me, ids::ConfirmControl)? else {
        return Ok(Err(Outcome::fail(format!(
            "RequestControl (authority {authority}) got no ConfirmControl within {:.1} s: the \
             check needs control (wire reference §8.2 Access control)",
            t.reply_bound
        ))
        .with([sent.evidence()])));
    };
    let evidence = vec![sent.evidence(), reply.evidence()];
    match reply.message() {
        Some(Message::ConfirmControl(c))
            if c.response_code == ConfirmControlCode::ControlAccepted =>
        {
            Ok(Ok(evidence))
        }
        Some(Message::ConfirmControl(c)) => Ok(Err(Outcome::fail(format!(
            "RequestControl (authority {authority}) was refused with ConfirmControl {}: the \
             check needs control; release it elsewhere or give a higher --authority",
            c.response_code
        ))
        .with(evidence))),
        _ => Ok(Err(Outcome::fail(
            "RequestControl was answered with a ConfirmControl that does not decode (wire \
             reference §8.4 0x000F)",
        )
        .with(evidence))),
    }
}

/// `ReleaseControl`, and the `RejectControl` that confirms it when it comes within the reply
/// bound (not judged here: the access-control suite does).
pub(super) fn release_control<W: Wire>(t: &mut Tester<W>) -> io::Result<Vec<Evidence>> {
    let me = t.me;
    let sent = t.send_as(&ReleaseControl.into(), None)?;
    let reply = t.reply_to(me, ids::RejectControl)?;
    Ok(std::iter::once(sent.evidence())
        .chain(reply.map(|r| r.evidence()))
        .collect())
}

/// Brings the component (control held) back to `found`, READY or STANDBY; `None` when it is
/// there, else what went wrong.
pub(super) fn restore<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    found: Status,
) -> io::Result<Option<String>> {
    let (_, got) = read_status(t, facts)?;
    let now = got.map(|(_, s)| s);
    if now == Some(found) {
        return Ok(None);
    }
    if now == Some(Status::Emergency) {
        // Our own emergency, left by a failed check: clear it.
        t.send(
            &ClearEmergency {
                emergency_code: STOP,
            }
            .into(),
        )?;
    }
    let command: Message = if found == Status::Ready {
        Resume.into()
    } else {
        Standby.into()
    };
    t.send(&command)?;
    let within = settle_bound(t);
    let p = await_status(t, facts, within, |s| s == found)?;
    Ok((!p.reached).then(|| {
        format!(
            "; the component could not be returned to {found}: {} after {} ({within:.1} s)",
            said(p.status),
            command.name()
        )
    }))
}

/// Runs `body` with control held, from a component found in READY or STANDBY, and afterwards
/// returns it to that state and releases control. The status read, the control request and
/// the release are evidence around the body's own.
fn controlled<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
    body: impl FnOnce(&mut Tester<W>, &mut Facts, Status, &Options) -> io::Result<Outcome>,
) -> io::Result<Outcome> {
    let (sent, got) = read_status(t, facts)?;
    let Some((reply, found)) = got else {
        return Ok(Outcome::fail(format!(
            "QueryStatus got no ReportStatus within {:.1} s{}: the state cannot be followed",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]));
    };
    let mut before = vec![sent.evidence(), reply.evidence()];
    if !matches!(found, Status::Ready | Status::Standby) {
        return Ok(Outcome::not_applicable(format!(
            "the component was found in {}: the state-machine checks start from READY or \
             STANDBY and are not run from another state",
            said(Some(found))
        ))
        .with(before));
    }
    match take_control(t, opts.authority)? {
        Ok(e) => before.extend(e),
        Err(o) => return Ok(o.with(before)),
    }
    let outcome = body(t, facts, found, opts);
    let restored = restore(t, facts, found);
    let released = release_control(t)?;
    let mut o = outcome?;
    if let Some(note) = restored? {
        o.verdict = Verdict::Fail;
        o.reason.push_str(&note);
    }
    before.append(&mut o.evidence);
    before.extend(released);
    o.evidence = before;
    Ok(o)
}

fn query_status<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:Management") {
        return Ok(na);
    }
    let (sent, reply) = ask(t, facts, &QueryStatus.into(), ids::ReportStatus)?;
    let Some(reply) = reply else {
        return Ok(Outcome::fail(format!(
            "QueryStatus got no ReportStatus within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]));
    };
    let evidence = [sent.evidence(), reply.evidence()];
    Ok(match status_of(&reply) {
        Some(Status::Other(v)) => Outcome::fail(format!(
            "ReportStatus carries Status {v}, which Management 1.1 does not define (0 INITIALIZE \
             … 5 EMERGENCY)"
        )),
        Some(s) => Outcome::pass(format!("ReportStatus: {}", said(Some(s)))),
        None => Outcome::fail(
            "ReportStatus does not decode: its body must be Status u8 and Reserved u32 (wire \
             reference §8.4 0x4002)",
        ),
    }
    .with(evidence))
}

/// Sends `m` (control held) and waits for a status `want` accepts; the evidence of both.
fn command_then<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    m: &Message,
    from: Option<JausId>,
    want: impl Fn(Status) -> bool,
) -> io::Result<(Vec<Evidence>, Polled)> {
    let sent = t.send_as(m, from)?;
    let within = settle_bound(t);
    let p = await_status(t, facts, within, want)?;
    let mut ev = vec![sent.evidence()];
    ev.extend(p.evidence.iter().cloned());
    Ok((ev, p))
}

fn standby_resume<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _found: Status,
    _opts: &Options,
) -> io::Result<Outcome> {
    let within = settle_bound(t);
    let (mut ev, p) = command_then(t, facts, &Standby.into(), None, |s| s == Status::Standby)?;
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "Standby from the controlling client: {} within {within:.1} s, STANDBY expected",
            said(p.status)
        ))
        .with(ev));
    }
    let (ev2, p) = command_then(t, facts, &Resume.into(), None, |s| s == Status::Ready)?;
    ev.extend(ev2);
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "Standby gave STANDBY, but Resume from the controlling client gave {} within \
             {within:.1} s, READY expected",
            said(p.status)
        ))
        .with(ev));
    }
    Ok(Outcome::pass("Standby → STANDBY, Resume → READY (ReportStatus after each)").with(ev))
}

fn command_without_control<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    found: Status,
    _opts: &Options,
) -> io::Result<Outcome> {
    let mut ev = Vec::new();
    if found != Status::Ready {
        let (e, p) = command_then(t, facts, &Resume.into(), None, |s| s == Status::Ready)?;
        ev.extend(e);
        if !p.reached {
            return Ok(Outcome::fail(format!(
                "Resume from the controlling client gave {}, READY expected: the check starts \
                 from READY",
                said(p.status)
            ))
            .with(ev));
        }
    }
    let other = t.second_client();
    // Watch for a change for up to half a second (or the reply bound when shorter).
    let window = t.reply_bound.min(0.5);
    let sent = t.send_as(&Standby.into(), Some(other))?;
    ev.push(sent.evidence());
    let p = await_status(t, facts, window, |s| s != Status::Ready)?;
    ev.extend(p.evidence);
    Ok(match p.status {
        Some(Status::Ready) => Outcome::pass(format!(
            "Standby from {other}, which does not hold control (the tester {} does), left the \
             component READY for {window:.1} s",
            t.me
        )),
        None => Outcome::fail(format!(
            "after Standby from {other} (no control), QueryStatus got no ReportStatus within \
             {:.1} s",
            t.reply_bound
        )),
        Some(s) => Outcome::fail(format!(
            "Standby from {other}, which does not hold control, moved the component to {}: \
             commands are executed only for the controlling client",
            said(Some(s))
        )),
    }
    .with(ev))
}

/// Clears an emergency every setter may have left (a failed check's cleanup).
fn clear_all<W: Wire>(t: &mut Tester<W>, setters: &[Option<JausId>]) -> io::Result<()> {
    for from in setters {
        t.send_as(
            &ClearEmergency {
                emergency_code: STOP,
            }
            .into(),
            *from,
        )?;
    }
    Ok(())
}

/// What the state after the emergency ended says: STANDBY as expected, or READY named.
fn after_emergency(s: Option<Status>) -> &'static str {
    if s == Some(Status::Ready) {
        " (observed READY: Management 1.1 expects STANDBY until Resume)"
    } else {
        ""
    }
}

fn emergency_one_client<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _found: Status,
    _opts: &Options,
) -> io::Result<Outcome> {
    let within = settle_bound(t);
    let set = SetEmergency {
        emergency_code: STOP,
    }
    .into();
    let (mut ev, p) = command_then(t, facts, &set, None, |s| s == Status::Emergency)?;
    if !p.reached {
        clear_all(t, &[None])?;
        return Ok(Outcome::fail(format!(
            "SetEmergency (EmergencyCode u16 1 = STOP) gave {} within {within:.1} s, EMERGENCY \
             expected",
            said(p.status)
        ))
        .with(ev));
    }
    let clear = ClearEmergency {
        emergency_code: STOP,
    }
    .into();
    let (e, p) = command_then(t, facts, &clear, None, |s| s != Status::Emergency)?;
    ev.extend(e);
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "ClearEmergency (EmergencyCode 1) from the only client that set the emergency left \
             {} after {within:.1} s, STANDBY expected",
            said(p.status)
        ))
        .with(ev));
    }
    let cleared = p.status;
    if !matches!(cleared, Some(Status::Standby | Status::Ready)) {
        return Ok(Outcome::fail(format!(
            "ClearEmergency gave {}, STANDBY expected",
            said(cleared)
        ))
        .with(ev));
    }
    let (e, p) = command_then(t, facts, &Resume.into(), None, |s| s == Status::Ready)?;
    ev.extend(e);
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "after the emergency was cleared ({}), Resume gave {} within {within:.1} s, READY \
             expected",
            said(cleared),
            said(p.status)
        ))
        .with(ev));
    }
    Ok(Outcome::pass(format!(
        "SetEmergency → EMERGENCY, ClearEmergency → {}{}, Resume → READY",
        said(cleared),
        after_emergency(cleared)
    ))
    .with(ev))
}

fn emergency_two_clients<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _found: Status,
    _opts: &Options,
) -> io::Result<Outcome> {
    let within = settle_bound(t);
    let other = t.second_client();
    let setters = [None, Some(other)];
    let set: Message = SetEmergency {
        emergency_code: STOP,
    }
    .into();
    let clear: Message = ClearEmergency {
        emergency_code: STOP,
    }
    .into();
    let mut ev = vec![t.send_as(&set, None)?.evidence()];
    let (e, p) = command_then(t, facts, &set, Some(other), |s| s == Status::Emergency)?;
    ev.extend(e);
    if !p.reached {
        clear_all(t, &setters)?;
        return Ok(Outcome::fail(format!(
            "SetEmergency from {} and from {other} gave {} within {within:.1} s, EMERGENCY \
             expected",
            t.me,
            said(p.status)
        ))
        .with(ev));
    }
    ev.push(t.send_as(&clear, None)?.evidence());
    let (sent, got) = read_status(t, facts)?;
    ev.push(sent.evidence());
    let first = got.map(|(r, s)| {
        ev.push(r.evidence());
        s
    });
    if first != Some(Status::Emergency) {
        clear_all(t, &setters)?;
        return Ok(Outcome::fail(format!(
            "{} cleared its emergency while {other} had not: {}, EMERGENCY expected (the \
             emergency ends when every client that set it has cleared it)",
            t.me,
            said(first)
        ))
        .with(ev));
    }
    let (e, p) = command_then(t, facts, &clear, Some(other), |s| s != Status::Emergency)?;
    ev.extend(e);
    if !p.reached {
        clear_all(t, &setters)?;
        return Ok(Outcome::fail(format!(
            "both clients cleared the emergency, yet {} after {within:.1} s, STANDBY expected",
            said(p.status)
        ))
        .with(ev));
    }
    Ok(Outcome::pass(format!(
        "set by {} and {other}: still EMERGENCY after the first ClearEmergency, {} after the \
         second{}",
        t.me,
        said(p.status),
        after_emergency(p.status)
    ))
    .with(ev))
}

fn reset_not_restart<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _found: Status,
    opts: &Options,
) -> io::Result<Outcome> {
    let within = 3.0 * t.reply_bound;
    let sent = t.send(&Reset.into())?;
    let at = t.now();
    // INITIALIZE may show on the way; STANDBY (or READY, named) ends the wait.
    let p = await_status(t, facts, within, |s| {
        matches!(s, Status::Standby | Status::Ready)
    })?;
    let took = t.now() - at;
    let mut ev = vec![sent.evidence()];
    ev.extend(p.evidence);
    if !p.reached {
        return Ok(Outcome::fail(format!(
            "Reset from the controlling client: {} within {within:.1} s, STANDBY expected \
             (Shutdown is deliberately not sent: it would stop the component)",
            said(p.status)
        ))
        .with(ev));
    }
    let (q, reply) = ask(t, facts, &QueryControl.into(), ids::ReportControl)?;
    ev.push(q.evidence());
    let me = t.me;
    let control = match reply.as_ref().and_then(Received::message) {
        Some(Message::ReportControl(c)) => {
            let holder = JausId::new(c.subsystem_id, c.node_id, c.component_id);
            if holder == me {
                "control kept by the tester".to_string()
            } else if holder == JausId::default() {
                // Control released by the Reset: take it back to restore the state.
                if let Ok(e) = take_control(t, opts.authority)? {
                    ev.extend(e);
                }
                "control released by the Reset (taken again to restore the state)".to_string()
            } else {
                ev.extend(reply.as_ref().map(Received::evidence));
                return Ok(Outcome::fail(format!(
                    "after Reset ReportControl names {holder} as controller, not the tester {me} \
                     that held control"
                ))
                .with(ev));
            }
        }
        _ => format!(
            "QueryControl got no ReportControl within {:.1} s",
            t.reply_bound
        ),
    };
    ev.extend(reply.as_ref().map(Received::evidence));
    Ok(Outcome::pass(format!(
        "Reset → {}{} after {:.0} ms, still answering; {control}; Shutdown deliberately not \
         sent (it would stop the component)",
        said(p.status),
        if p.status == Some(Status::Ready) {
            " (observed READY: Management 1.1 expects STANDBY)"
        } else {
            ""
        },
        took * 1e3
    ))
    .with(ev))
}
