//! The `access-control` suite: `QueryControl`, `RequestControl` and what `ReportControl` then
//! says, `QueryAuthority`, `QueryTimeout`, a second client refused with a lower authority and
//! taking control with a higher one, `ReleaseControl`, and the control timeout's lapse (wire
//! reference §8.2 "Access control", layouts §8.4, §9 C9).
//!
//! The second client is a second JAUS ID on the tester's socket ([`Tester::add_identity`]).
//! Every check releases whatever control it took, both clients, on every path.

use std::io;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Facts, Options, Run, ask};
use crate::conform::tester::{Body, Received, Sent, Tester, Wire};
use crate::jaus::core::{
    ConfirmControlCode, QueryAuthority, QueryControl, QueryTimeout, RejectControlCode,
    ReleaseControl, ReportControl, RequestControl,
};
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};

/// Where the access-control behaviour is defined.
const REFERENCE: &str = "wire reference §8.2 Access control, §8.4";

/// `ReportControl`'s field order.
const REFERENCE_C9: &str = "wire reference §8.2 Access control, §8.4, §9 C9";

/// The longest control timeout whose lapse is waited for, s.
const LAPSE_MAX_S: u8 = 5;

/// How late after the timeout the release may come, s.
const LAPSE_SLACK_S: f64 = 1.0;

/// How early before the timeout a release still counts as the timeout's, s.
const LAPSE_EARLY_S: f64 = 0.5;

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    r.check(
        "query-control",
        "QueryControl is answered with ReportControl; nobody holds control at the start",
        REFERENCE,
        query_control,
    );
    r.check(
        "request-control",
        "RequestControl is accepted and ReportControl then names the tester and its authority",
        REFERENCE_C9,
        request_control,
    );
    r.check(
        "query-authority",
        "QueryAuthority is answered with ReportAuthority",
        REFERENCE,
        query_authority,
    );
    r.check(
        "query-timeout",
        "QueryTimeout is answered with ReportTimeout (seconds)",
        REFERENCE,
        query_timeout,
    );
    r.check(
        "lower-authority-refused",
        "A second client with a lower authority is refused while the tester holds control",
        REFERENCE,
        lower_authority_refused,
    );
    r.check(
        "preemption",
        "A second client with a higher authority takes control; the first is told",
        REFERENCE,
        preemption,
    );
    r.check(
        "release",
        "ReleaseControl is answered with RejectControl CONTROL_RELEASED; nobody holds control",
        REFERENCE,
        release,
    );
    r.check(
        "timeout-lapse",
        "Control not refreshed lapses after the timeout with RejectControl CONTROL_RELEASED",
        REFERENCE,
        timeout_lapse,
    );
}

/// Who is meant: the tester or the second client.
fn who<W: Wire>(t: &Tester<W>, as_id: Option<JausId>) -> JausId {
    as_id.unwrap_or(t.me)
}

/// `RequestControl` as `as_id` with `authority`; the `ConfirmControl` to it and its code.
fn request<W: Wire>(
    t: &mut Tester<W>,
    as_id: Option<JausId>,
    authority: u8,
) -> io::Result<(Sent, Option<(Received, ConfirmControlCode)>)> {
    let sent = t.send_as(
        &RequestControl {
            authority_code: authority,
        }
        .into(),
        as_id,
    )?;
    let to = who(t, as_id);
    let reply = t.reply_to(to, ids::ConfirmControl)?;
    Ok((
        sent,
        reply.and_then(|r| match r.message() {
            Some(Message::ConfirmControl(c)) => {
                let code = c.response_code;
                Some((r, code))
            }
            _ => None,
        }),
    ))
}

/// `ReleaseControl` as `as_id`; the `RejectControl` to it, if one came.
fn release_as<W: Wire>(
    t: &mut Tester<W>,
    as_id: Option<JausId>,
) -> io::Result<(Sent, Option<Received>)> {
    let sent = t.send_as(&ReleaseControl.into(), as_id)?;
    let to = who(t, as_id);
    let reply = t.reply_to(to, ids::RejectControl)?;
    Ok((sent, reply))
}

/// Releases control of the tester and of `second` after a check; the check's result wins.
fn cleanup<W: Wire>(
    t: &mut Tester<W>,
    second: Option<JausId>,
    result: io::Result<Outcome>,
) -> io::Result<Outcome> {
    let mut done = Ok(());
    if let Some(id) = second
        && let Err(e) = release_as(t, Some(id))
    {
        done = Err(e);
    }
    if let Err(e) = release_as(t, None) {
        done = Err(e);
    }
    let outcome = result?;
    done?;
    Ok(outcome)
}

/// What `ReportControl` said: the decoded controller, and its four ID bytes as sent.
struct Holder {
    report: ReportControl,
    raw: [u8; 4],
}

impl Holder {
    fn of(r: &Received) -> Option<Holder> {
        let Some(Message::ReportControl(report)) = r.message() else {
            return None;
        };
        let raw = match &r.body {
            Body::Message { bytes, .. } => {
                bytes.get(2..6).and_then(|b| <[u8; 4]>::try_from(b).ok())?
            }
            _ => return None,
        };
        Some(Holder {
            report: *report,
            raw,
        })
    }

    fn id(&self) -> JausId {
        JausId::new(
            self.report.subsystem_id,
            self.report.node_id,
            self.report.component_id,
        )
    }

    fn nobody(&self) -> bool {
        self.raw == [0; 4]
    }

    /// How the ID names `id`: JSIDL order (§8.4), the header's order (§4.3: component, node,
    /// subsystem), another permutation, or not at all.
    fn names(&self, id: JausId) -> Naming {
        let [lo, hi] = id.subsystem.to_le_bytes();
        let jsidl = [lo, hi, id.node, id.component];
        let header = [id.component, id.node, lo, hi];
        if self.raw == jsidl {
            Naming::Jsidl
        } else if self.raw == header {
            Naming::HeaderOrder
        } else {
            let (mut a, mut b) = (self.raw, jsidl);
            a.sort_unstable();
            b.sort_unstable();
            if a == b { Naming::Permuted } else { Naming::No }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    Jsidl,
    HeaderOrder,
    Permuted,
    No,
}

/// `QueryControl` → `ReportControl`, decoded; `Err(outcome)` when it did not come or decode.
fn holder<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
) -> io::Result<Result<(Sent, Received, Holder), Outcome>> {
    let (sent, reply) = ask(t, facts, &QueryControl.into(), ids::ReportControl)?;
    let Some(reply) = reply else {
        return Ok(Err(Outcome::fail(format!(
            "QueryControl got no ReportControl within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()])));
    };
    match Holder::of(&reply) {
        Some(h) => Ok(Ok((sent, reply, h))),
        None => Ok(Err(Outcome::fail(
            "ReportControl does not decode as §8.4 lays it out (SubsystemID u16, NodeID u8, \
             ComponentID u8, AuthorityCode u8)",
        )
        .with([sent.evidence(), reply.evidence()]))),
    }
}

fn query_control<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let (sent, reply, h) = match holder(t, facts)? {
        Ok(x) => x,
        Err(outcome) => return Ok(outcome),
    };
    let ev = [sent.evidence(), reply.evidence()];
    Ok(if h.nobody() {
        Outcome::pass("ReportControl: nobody holds control (0.0.0, authority 0)").with(ev)
    } else {
        Outcome::pass(format!(
            "ReportControl: {} holds control with authority {} at the start; the checks that \
             take control depend on its authority",
            h.id(),
            h.report.authority_code
        ))
        .with(ev)
    })
}

/// Takes control as the tester; `Err(outcome)` when it was not accepted.
fn take<W: Wire>(
    t: &mut Tester<W>,
    facts: &Facts,
    authority: u8,
) -> io::Result<Result<(Sent, Received), Outcome>> {
    let (sent, reply) = request(t, None, authority)?;
    Ok(match reply {
        Some((r, ConfirmControlCode::ControlAccepted)) => Ok((sent, r)),
        Some((r, code)) => Err(Outcome::fail(format!(
            "RequestControl (authority {authority}) was answered with ConfirmControl {code:?}; \
             with nobody in control it is accepted (is another client holding it? see \
             query-control)"
        ))
        .with([sent.evidence(), r.evidence()])),
        None => Err(Outcome::fail(format!(
            "RequestControl (authority {authority}) got no ConfirmControl within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()])),
    })
}

fn request_control<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let (sent, confirm) = match take(t, facts, opts.authority)? {
        Ok(x) => x,
        Err(outcome) => return cleanup(t, None, Ok(outcome)),
    };
    let result = names_tester(
        t,
        facts,
        opts.authority,
        [sent.evidence(), confirm.evidence()],
    );
    cleanup(t, None, result)
}

/// After the tester took control: `ReportControl` names it, with `authority`.
fn names_tester<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    authority: u8,
    before: [Evidence; 2],
) -> io::Result<Outcome> {
    let (sent, reply, h) = match holder(t, facts)? {
        Ok(x) => x,
        Err(outcome) => return Ok(outcome.with(before)),
    };
    let me = t.me;
    let ev = [sent.evidence(), reply.evidence()];
    let outcome = match h.names(me) {
        Naming::Jsidl if h.report.authority_code == authority => Outcome::pass(format!(
            "RequestControl (authority {authority}) accepted; ReportControl names the tester \
             {me} with authority {authority}"
        )),
        Naming::Jsidl => Outcome::fail(format!(
            "ReportControl names the tester {me} but with authority {}, not the {authority} it \
             asked with",
            h.report.authority_code
        )),
        Naming::HeaderOrder | Naming::Permuted => {
            let order = if h.names(me) == Naming::HeaderOrder {
                "in the JUDP header's byte order (component, node, subsystem)"
            } else {
                "with its bytes permuted"
            };
            let text = format!(
                "deviation: ReportControl names the controller {me} {order}, not SubsystemID, \
                 NodeID, ComponentID (wire reference §9 C9)"
            );
            facts.deviations.insert(
                "ReportControl's controller ID not in JSIDL field order".into(),
                "§9 C9".into(),
            );
            Outcome::warning(text)
        }
        Naming::No => Outcome::fail(format!(
            "RequestControl was accepted, yet ReportControl names {} (bytes {:02x?}), not the \
             tester {me}",
            h.id(),
            h.raw
        )),
    };
    Ok(outcome.with(before).with(ev))
}

fn query_authority<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let (sent, reply) = ask(t, facts, &QueryAuthority.into(), ids::ReportAuthority)?;
    Ok(match reply {
        None => Outcome::fail(format!(
            "QueryAuthority got no ReportAuthority within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]),
        Some(r) => match r.message() {
            Some(Message::ReportAuthority(a)) => Outcome::pass(format!(
                "ReportAuthority: authority code {}",
                a.authority_code
            ))
            .with([sent.evidence(), r.evidence()]),
            _ => Outcome::fail("ReportAuthority does not decode as §8.4 lays it out (one u8)")
                .with([sent.evidence(), r.evidence()]),
        },
    })
}

/// `QueryTimeout` → the timeout in seconds, kept in the facts.
fn read_timeout<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
) -> io::Result<(Sent, Option<(Received, u8)>)> {
    let (sent, reply) = ask(t, facts, &QueryTimeout.into(), ids::ReportTimeout)?;
    let got = reply.and_then(|r| match r.message() {
        Some(Message::ReportTimeout(x)) => {
            let s = x.timeout;
            Some((r, s))
        }
        _ => None,
    });
    if let Some((_, s)) = &got {
        facts.control_timeout_s = Some(*s);
    }
    Ok((sent, got))
}

fn query_timeout<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let (sent, got) = read_timeout(t, facts)?;
    Ok(match got {
        None => Outcome::fail(format!(
            "QueryTimeout got no ReportTimeout (one u8, seconds) within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        ))
        .with([sent.evidence()]),
        Some((r, 0)) => Outcome::pass(
            "ReportTimeout: 0 (control never lapses; an OCU need not refresh RequestControl)",
        )
        .with([sent.evidence(), r.evidence()]),
        Some((r, s)) => Outcome::pass(format!(
            "ReportTimeout: {s} s; a controlling client re-sends RequestControl well inside it"
        ))
        .with([sent.evidence(), r.evidence()]),
    })
}

fn lower_authority_refused<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let second = t.second_client();
    let (sent, confirm) = match take(t, facts, opts.authority)? {
        Ok(x) => x,
        Err(outcome) => return cleanup(t, None, Ok(outcome)),
    };
    let result = lower_body(
        t,
        facts,
        opts.authority,
        second,
        [sent.evidence(), confirm.evidence()],
    );
    cleanup(t, Some(second), result)
}

fn lower_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    held: u8,
    second: JausId,
    before: [Evidence; 2],
) -> io::Result<Outcome> {
    let (lower, how) = match held.checked_sub(1) {
        Some(l) => (l, "lower"),
        None => (0, "equal (the tester's is 0)"),
    };
    let (sent, reply) = request(t, Some(second), lower)?;
    let Some((reply, code)) = reply else {
        return Ok(Outcome::fail(format!(
            "RequestControl from a second client {second} (authority {lower}) got no \
             ConfirmControl within {:.1} s; every request is answered",
            t.reply_bound
        ))
        .with(before)
        .with([sent.evidence()]));
    };
    let ev = [sent.evidence(), reply.evidence()];
    if code == ConfirmControlCode::ControlAccepted {
        return Ok(Outcome::fail(format!(
            "a second client {second} with a {how} authority {lower} was given control \
             (ConfirmControl CONTROL_ACCEPTED) while the tester held it with {held}: only a \
             higher authority takes control"
        ))
        .with(before)
        .with(ev));
    }
    let (qs, qr, h) = match holder(t, facts)? {
        Ok(x) => x,
        Err(outcome) => return Ok(outcome.with(before).with(ev)),
    };
    let me = t.me;
    let outcome = if h.names(me) == Naming::No {
        Outcome::fail(format!(
            "the second client {second} was refused ({code:?}), but ReportControl then names {} \
             rather than the tester {me}",
            h.id()
        ))
    } else {
        Outcome::pass(format!(
            "a second client {second} with a {how} authority {lower} was refused with \
             ConfirmControl {code:?}; ReportControl still names the tester {me}"
        ))
    };
    Ok(outcome
        .with(before)
        .with(ev)
        .with([qs.evidence(), qr.evidence()]))
}

fn preemption<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    if opts.authority == u8::MAX {
        return Ok(Outcome::not_applicable(
            "the tester's authority is 255: no client can have a higher one (run with a lower \
             --authority)",
        ));
    }
    let second = t.second_client();
    let (sent, confirm) = match take(t, facts, opts.authority)? {
        Ok(x) => x,
        Err(outcome) => return cleanup(t, None, Ok(outcome)),
    };
    let before = [sent.evidence(), confirm.evidence()];
    let result = preempt_body(t, facts, opts.authority, second, before);
    cleanup(t, Some(second), result)
}

fn preempt_body<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    held: u8,
    second: JausId,
    before: [Evidence; 2],
) -> io::Result<Outcome> {
    // The component's authority as it reports it: a request must exceed it too.
    let (_, reply) = ask(t, facts, &QueryAuthority.into(), ids::ReportAuthority)?;
    let reported = match reply.as_ref().and_then(Received::message) {
        Some(Message::ReportAuthority(a)) => a.authority_code,
        _ => held,
    };
    let Some(higher) = held.max(reported).checked_add(1) else {
        return Ok(Outcome::not_applicable(format!(
            "ReportAuthority says {reported} while the tester holds control with {held}: no \
             authority is higher"
        )));
    };
    let (sent, reply) = request(t, Some(second), higher)?;
    let Some((reply, code)) = reply else {
        return Ok(Outcome::fail(format!(
            "RequestControl from a second client {second} (authority {higher}, above the \
             tester's {held}) got no ConfirmControl within {:.1} s",
            t.reply_bound
        ))
        .with(before)
        .with([sent.evidence()]));
    };
    let ev = [sent.evidence(), reply.evidence()];
    if code != ConfirmControlCode::ControlAccepted {
        return Ok(Outcome::fail(format!(
            "a second client {second} with a higher authority {higher} (the tester holds {held}) \
             got ConfirmControl {code:?}: a higher authority takes control"
        ))
        .with(before)
        .with(ev));
    }
    let me = t.me;
    let told = t.reply_to(me, ids::RejectControl)?;
    let Some(told) = told else {
        return Ok(Outcome::fail(format!(
            "the second client {second} took control, but the tester {me}, which held it, got \
             no RejectControl CONTROL_RELEASED within {:.1} s",
            t.reply_bound
        ))
        .with(before)
        .with(ev));
    };
    let code_ok = matches!(
        told.message(),
        Some(Message::RejectControl(r)) if r.response_code == RejectControlCode::ControlReleased
    );
    let (qs, qr, h) = match holder(t, facts)? {
        Ok(x) => x,
        Err(outcome) => return Ok(outcome.with(before).with(ev)),
    };
    let all = [told.evidence(), qs.evidence(), qr.evidence()];
    let outcome = if !code_ok {
        Outcome::fail(
            "the tester was told it lost control with a RejectControl whose ResponseCode is not \
             CONTROL_RELEASED (0)",
        )
    } else if h.names(second) == Naming::No {
        Outcome::fail(format!(
            "the second client {second} took control, but ReportControl then names {}",
            h.id()
        ))
    } else {
        Outcome::pass(format!(
            "a second client {second} with authority {higher} took control from the tester \
             ({held}): ConfirmControl CONTROL_ACCEPTED for it, RejectControl CONTROL_RELEASED \
             for the tester, ReportControl names {second}"
        ))
    };
    Ok(outcome.with(before).with(ev).with(all))
}

fn release<W: Wire>(t: &mut Tester<W>, facts: &mut Facts, opts: &Options) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let (sent, confirm) = match take(t, facts, opts.authority)? {
        Ok(x) => x,
        Err(outcome) => return cleanup(t, None, Ok(outcome)),
    };
    let before = [sent.evidence(), confirm.evidence()];
    let (rs, reply) = release_as(t, None)?;
    let Some(reply) = reply else {
        return cleanup(
            t,
            None,
            Ok(Outcome::fail(format!(
                "ReleaseControl got no RejectControl within {:.1} s; the reference answers it \
                 with RejectControl CONTROL_RELEASED",
                t.reply_bound
            ))
            .with(before)
            .with([rs.evidence()])),
        );
    };
    let ev = [rs.evidence(), reply.evidence()];
    let released = matches!(
        reply.message(),
        Some(Message::RejectControl(r)) if r.response_code == RejectControlCode::ControlReleased
    );
    if !released {
        return cleanup(
            t,
            None,
            Ok(Outcome::fail(
                "ReleaseControl was answered with a RejectControl whose ResponseCode is not \
                 CONTROL_RELEASED (0)",
            )
            .with(before)
            .with(ev)),
        );
    }
    let (qs, qr, h) = match holder(t, facts)? {
        Ok(x) => x,
        Err(outcome) => return Ok(outcome.with(before).with(ev)),
    };
    let outcome = if h.nobody() {
        Outcome::pass(
            "ReleaseControl answered with RejectControl CONTROL_RELEASED; ReportControl then \
             shows nobody (0.0.0)",
        )
    } else {
        Outcome::fail(format!(
            "ReleaseControl was answered with RejectControl CONTROL_RELEASED, yet ReportControl \
             then names {} with authority {}",
            h.id(),
            h.report.authority_code
        ))
    };
    Ok(outcome
        .with(before)
        .with(ev)
        .with([qs.evidence(), qr.evidence()]))
}

fn timeout_lapse<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    opts: &Options,
) -> io::Result<Outcome> {
    if let Some(na) = facts.requires("core:AccessControl") {
        return Ok(na);
    }
    let timeout = match facts.control_timeout_s {
        Some(s) => s,
        None => match read_timeout(t, facts)? {
            (_, Some((_, s))) => s,
            (sent, None) => {
                return Ok(Outcome::not_applicable(format!(
                    "the control timeout is unknown: QueryTimeout got no ReportTimeout within \
                     {:.1} s",
                    t.reply_bound
                ))
                .with([sent.evidence()]));
            }
        },
    };
    if timeout == 0 {
        return Ok(Outcome::not_applicable(
            "timeout 0: control never lapses (ReportTimeout 0)",
        ));
    }
    if timeout > LAPSE_MAX_S {
        return Ok(Outcome::not_applicable(format!(
            "timeout {timeout} s: not waited, the run stays short (run the component with a \
             timeout of at most {LAPSE_MAX_S} s to see the lapse)"
        )));
    }
    let (sent, confirm) = match take(t, facts, opts.authority)? {
        Ok(x) => x,
        Err(outcome) => return cleanup(t, None, Ok(outcome)),
    };
    let result = lapse_body(t, timeout, &sent, &confirm);
    cleanup(t, None, result)
}

fn lapse_body<W: Wire>(
    t: &mut Tester<W>,
    timeout: u8,
    sent: &Sent,
    confirm: &Received,
) -> io::Result<Outcome> {
    let me = t.me;
    let target = t.target;
    let bound = f64::from(timeout) + LAPSE_SLACK_S;
    // The component's timer runs from the request it received: from when it was sent.
    let asked_at = t
        .frames()
        .get(sent.first_frame.saturating_sub(1) as usize)
        .map_or(confirm.at, |f| f.at);
    let told = t.wait_for(bound, |r| {
        r.header.source == target
            && r.header.destination == me
            && r.id() == Some(ids::RejectControl)
    })?;
    let before = [sent.evidence(), confirm.evidence()];
    let Some(told) = told else {
        return Ok(Outcome::fail(format!(
            "control taken and not refreshed; no RejectControl came within the timeout {timeout} \
             s + {LAPSE_SLACK_S} s: control is to lapse after ReportTimeout's seconds"
        ))
        .with(before));
    };
    let after = told.at - asked_at;
    let released = matches!(
        told.message(),
        Some(Message::RejectControl(r)) if r.response_code == RejectControlCode::ControlReleased
    );
    let outcome = if !released {
        Outcome::fail(format!(
            "control lapsed after {after:.2} s with a RejectControl whose ResponseCode is not \
             CONTROL_RELEASED (0)"
        ))
    } else if after < f64::from(timeout) - LAPSE_EARLY_S {
        Outcome::fail(format!(
            "control was released after {after:.2} s, before the timeout of {timeout} s \
             (ReportTimeout): an OCU refreshing inside the timeout would lose it"
        ))
    } else {
        Outcome::pass(format!(
            "control not refreshed lapsed after {after:.2} s (timeout {timeout} s) with \
             RejectControl CONTROL_RELEASED"
        ))
    };
    Ok(outcome.with(before).with([told.evidence()]))
}
