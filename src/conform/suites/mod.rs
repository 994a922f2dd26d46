//! The test suites, one file each. Every check names the behaviour it checks and where the
//! wire reference (`../shared/jaus-wire-reference.md` in the project's notes, cited as §N)
//! or the service's state machine defines it.

pub mod access_control;
pub mod discovery;
pub mod events;
pub mod liveness;
pub mod management;
pub mod manipulator;
pub mod robustness;
pub mod transport;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Facts, Run, Suite, ask};
use crate::conform::tester::{Tester, Wire};
use crate::jaus::message::ids;

/// Runs the options' suites in [`Suite::ALL`]'s order.
pub fn run_all<W: Wire>(r: &mut Run<'_, W>) {
    if !r.options.suites.contains(&Suite::Discovery) {
        // The other suites skip what the component does not list: learn it quietly.
        if let Err(e) = r
            .tester
            .drain()
            .and_then(|()| discovery::learn(r.tester, &mut r.facts))
        {
            tracing::warn!("conform: asking for the component's services: {e}");
        }
    }
    for suite in Suite::ALL {
        if !r.options.suites.contains(&suite) {
            continue;
        }
        r.begin_suite(suite);
        if matches!(suite, Suite::Transport | Suite::Robustness) && !answers_identification(r) {
            r.check(
                "probe-query",
                "The suite's probe, QueryIdentification, is answered",
                "wire reference §8.2 Discovery",
                |t, facts, _| {
                    Ok(Outcome::not_applicable(format!(
                        "the suite's checks ask QueryIdentification and watch its answer; the \
                         component did not answer it within {:.1} s (no Discovery service?){}",
                        t.reply_bound,
                        facts.unknown_note()
                    )))
                },
            );
            continue;
        }
        match suite {
            Suite::Transport => transport::run(r),
            Suite::Discovery => discovery::run(r),
            Suite::Liveness => liveness::run(r),
            Suite::Events => events::run(r),
            Suite::AccessControl => access_control::run(r),
            Suite::Management => management::run(r),
            Suite::Manipulator => manipulator::run(r),
            Suite::Robustness => robustness::run(r),
        }
    }
    if r.options.suites.contains(&Suite::Transport) {
        r.begin_suite(Suite::Transport);
        r.check(
            "ack-blocks-bare",
            "Every ACK/NAK block the component sent during the run was header-only",
            "wire reference §4.4, §9 C11",
            |t, facts, _| Ok(ack_blocks_bare(t, facts)),
        );
    }
}

/// Whether the component answers `QueryIdentification` (the transport and robustness suites'
/// probe): asked once, up to twice, before those suites run.
fn answers_identification<W: Wire>(r: &mut Run<'_, W>) -> bool {
    let q = transport::query_identification();
    for _ in 0..2 {
        match r
            .tester
            .drain()
            .and_then(|()| ask(r.tester, &mut r.facts, &q, ids::ReportIdentification))
        {
            Ok((_, Some(_))) => return true,
            Ok((_, None)) => {}
            Err(e) => {
                tracing::warn!("conform: QueryIdentification: {e}");
                return false;
            }
        }
    }
    false
}

/// Over the whole run: ACK/NAK blocks that carried a payload (§9 C11: format.py copies the
/// acknowledged payload into its ACK).
fn ack_blocks_bare<W: Wire>(t: &Tester<W>, facts: &mut Facts) -> Outcome {
    let frames = &t.ack_payloads;
    let Some(&first) = frames.first() else {
        return Outcome::pass("no ACK/NAK block with a payload in the whole run");
    };
    let d = "ACK/NAK blocks carry the acknowledged payload";
    facts
        .deviations
        .insert(d.into(), "wire reference §9 C11".into());
    let shown: Vec<String> = frames.iter().take(8).map(ToString::to_string).collect();
    Outcome::warning(format!(
        "deviation: {d} ({} blocks, frames {}); receivers that skip it by its data size read \
         on (§9 C11), strict ones drop the datagram",
        frames.len(),
        shown.join(", ")
    ))
    .with([Evidence {
        frame: first,
        message_id: None,
        what: "ACK".into(),
    }])
}
