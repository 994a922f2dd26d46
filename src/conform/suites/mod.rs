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

use crate::conform::run::{Run, Suite};
use crate::conform::tester::Wire;

/// Runs the options' suites in [`Suite::ALL`]'s order.
pub fn run_all<W: Wire>(r: &mut Run<'_, W>) {
    for suite in Suite::ALL {
        if !r.options.suites.contains(&suite) {
            continue;
        }
        r.begin_suite(suite);
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
}
