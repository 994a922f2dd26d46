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
