//! The `liveness` suite (wire reference §8.2 "Liveness", §8.4 0x2202/0x4202): the heartbeat
//! is answered, every time.

use crate::conform::check::Outcome;
use crate::conform::run::{Run, ask};
use crate::conform::tester::Wire;
use crate::jaus::Message;
use crate::jaus::core::QueryHeartbeatPulse;
use crate::jaus::message::ids;

/// Queries in a row for `heartbeat-repeat`.
const REPEATS: usize = 10;

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    r.check(
        "heartbeat",
        "QueryHeartbeatPulse is answered with ReportHeartbeatPulse",
        "wire reference §8.2 Liveness, §8.4 0x2202/0x4202",
        |t, facts, _| {
            if let Some(na) = facts.requires("core:Liveness") {
                return Ok(na);
            }
            let q: Message = QueryHeartbeatPulse.into();
            let (sent, got) = ask(t, facts, &q, ids::ReportHeartbeatPulse)?;
            Ok(match got {
                Some(g) if g.message().is_some() => {
                    Outcome::pass("ReportHeartbeatPulse came").with([sent.evidence(), g.evidence()])
                }
                Some(g) => Outcome::fail("ReportHeartbeatPulse came with a body (it has none)")
                    .with([sent.evidence(), g.evidence()]),
                None => Outcome::fail(format!(
                    "no ReportHeartbeatPulse within {:.1} s{}",
                    t.reply_bound,
                    facts.unknown_note()
                ))
                .with([sent.evidence()]),
            })
        },
    );
    r.check(
        "heartbeat-repeat",
        "Every one of 10 heartbeat queries in a row is answered",
        "wire reference §8.2 Liveness",
        |t, facts, _| {
            if let Some(na) = facts.requires("core:Liveness") {
                return Ok(na);
            }
            let q: Message = QueryHeartbeatPulse.into();
            let mut answered = 0;
            let mut worst: f64 = 0.0;
            let mut evidence = Vec::new();
            let mut missed = 0;
            for _ in 0..REPEATS {
                if missed == 2 {
                    break; // two unanswered in a row: the rest would only cost time
                }
                let sent = t.send(&q)?;
                let at = t.now();
                if let Some(g) = t.wait_message(ids::ReportHeartbeatPulse)? {
                    missed = 0;
                    answered += 1;
                    worst = worst.max(g.at - at);
                    if evidence.is_empty() {
                        evidence.extend([sent.evidence(), g.evidence()]);
                    }
                } else {
                    missed += 1;
                    if evidence.len() < 4 {
                        evidence.push(sent.evidence());
                    }
                }
            }
            Ok(if answered == REPEATS {
                Outcome::pass(format!(
                    "{answered} of {REPEATS} answered, the slowest in {:.1} ms",
                    worst * 1e3
                ))
            } else {
                Outcome::fail(format!(
                    "{answered} of {REPEATS} answered within {:.1} s each (stopped after two \
                     unanswered in a row){}",
                    t.reply_bound,
                    facts.unknown_note()
                ))
            }
            .with(evidence))
        },
    );
}
