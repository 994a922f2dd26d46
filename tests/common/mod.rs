//! Waiting in tests: poll for what should happen, with a generous deadline, instead of sleeping
//! a fixed time and then asserting. A loaded machine then only makes a test slower, never red.

use std::time::{Duration, Instant};

/// How often a condition is checked again.
const POLL: Duration = Duration::from_millis(10);

/// Checks `cond` until it holds. Panics naming `what` (what did not happen) if it still does
/// not after `deadline`.
pub fn wait_until(deadline: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < deadline,
            "{what} did not happen within {deadline:?}"
        );
        std::thread::sleep(POLL);
    }
}

/// Applies a live network side's updates to `state` until `done` holds or `timeout` passes;
/// returns whether it held.
#[allow(
    dead_code,
    reason = "shared by the loopback suites; other suites use only wait_until"
)]
pub fn pump(
    h: &jaus_ocu::net::thread::NetHandle,
    state: &mut jaus_ocu::model::state::ArmState,
    timeout: Duration,
    mut done: impl FnMut(&jaus_ocu::model::state::ArmState, &jaus_ocu::model::update::Update) -> bool,
) -> bool {
    let deadline = Instant::now() + timeout;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if let Ok(u) = h
            .updates()
            .recv_timeout(left.min(Duration::from_millis(50)))
        {
            state.apply(&u);
            if done(state, &u) {
                return true;
            }
        }
    }
    false
}

/// The outcome of the next command of `kind` the network side reports within `timeout`
/// (applying every update to `state` meanwhile); `None` if none came.
#[allow(
    dead_code,
    reason = "shared by the loopback suites; other suites use only wait_until"
)]
pub fn outcome_of(
    h: &jaus_ocu::net::thread::NetHandle,
    state: &mut jaus_ocu::model::state::ArmState,
    kind: jaus_ocu::model::update::CommandKind,
    timeout: Duration,
) -> Option<jaus_ocu::model::update::Outcome> {
    let mut o = None;
    pump(h, state, timeout, |_, u| match u {
        jaus_ocu::model::update::Update::CommandOutcome {
            command, outcome, ..
        } if *command == kind => {
            o = Some(outcome.clone());
            true
        }
        _ => false,
    });
    o
}
