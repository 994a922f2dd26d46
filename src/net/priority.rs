//! Scheduling priority of the network threads (issue 14: receive→update p99 ≤ 1 ms while a
//! software-rendered GUI, a recorder and other programs keep both cores busy).
//!
//! Under contention the OCU's two network threads (`jaus-net-rx`, `jaus-net`) otherwise wait in
//! the run queue behind whatever else runs: at normal priority they get their fair share, but
//! only after the busy threads' time slices (milliseconds). They need little CPU (a few µs per
//! datagram, `benches/net.rs`) and must run *soon*, the case real-time scheduling is for.
//!
//! [`raise_current`] asks, in turn, for:
//! 1. `SCHED_FIFO` at [`REALTIME_PRIORITY`] (a low real-time priority: above every normal
//!    thread, below audio servers and the kernel's own real-time threads). The network threads
//!    block on their socket or channel between datagrams, and the kernel keeps 5 % of every
//!    second for normal threads (`/proc/sys/kernel/sched_rt_runtime_us`), so a bug cannot
//!    freeze the laptop.
//! 2. Failing that, nice [`RAISED_NICE`] (a larger share and an earlier deadline under the
//!    normal scheduler).
//! 3. Failing both, the default; the caller warns once, saying what to do.
//!
//! Both need privilege on Linux: `CAP_SYS_NICE` (`sudo setcap cap_sys_nice+ep
//! target/release/jaus-ocu`), or a real-time limit for the user (`ulimit -r`; in
//! `/etc/security/limits.conf` a line `@operators - rtprio 10`, and `@operators - nice -10`
//! for the second step). Uses the `thread-priority` crate (no FFI of our own).

use thread_priority::{
    NormalThreadSchedulePolicy, RealtimeThreadSchedulePolicy, ThreadPriority,
    ThreadPriorityOsValue, ThreadPriorityValue, ThreadSchedulePolicy,
};

use crate::model::update::Scheduling;

/// `SCHED_FIFO` priority asked for (1 is the lowest real-time priority, 99 the highest).
pub const REALTIME_PRIORITY: u8 = 10;
/// Nice value asked for when real time is refused (-20 is the highest priority, 0 the default).
pub const RAISED_NICE: i8 = -10;

/// Raises the calling thread's scheduling priority as far as allowed (see the module doc);
/// what it got.
pub fn raise_current() -> Scheduling {
    if set_current(
        REALTIME_PRIORITY,
        ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
    ) {
        return Scheduling::Realtime(REALTIME_PRIORITY);
    }
    // The crate maps 0..=99 linearly onto nice 19..=-20 for the normal policy.
    let value = ((19 - i32::from(RAISED_NICE)) * 99 / 39).clamp(0, 99) as u8;
    if set_current(
        value,
        ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other),
    ) {
        return Scheduling::Nice(current_nice().unwrap_or(RAISED_NICE));
    }
    Scheduling::Normal
}

/// Sets the calling thread's policy with the crate's priority `value` (0..=99); whether the
/// system allowed it.
fn set_current(value: u8, policy: ThreadSchedulePolicy) -> bool {
    ThreadPriorityValue::try_from(value).is_ok_and(|value| {
        thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            ThreadPriority::Crossplatform(value),
            policy,
        )
        .is_ok()
    })
}

/// What the protocol thread calls first: raises it when `raise` (as the receive thread raises
/// itself), logs what it got, warning once with what to do when nothing was granted.
pub fn raise_network_thread(raise: bool) -> Scheduling {
    if !raise {
        return Scheduling::Normal;
    }
    let got = raise_current();
    if got == Scheduling::Normal {
        tracing::warn!("net: {HOW_TO_RAISE}");
    } else {
        tracing::debug!("net: network threads scheduled {}", got.label());
    }
    got
}

/// Puts the calling thread back to the default scheduling (normal policy, nice 0), as far as
/// allowed. Threads inherit their creator's scheduling: a thread spawned from a raised one
/// that should not run raised calls this first (the load threads of `benches/net.rs`).
pub fn reset_current() -> Scheduling {
    let ok = thread_priority::set_thread_priority_and_policy(
        thread_priority::thread_native_id(),
        ThreadPriority::Os(ThreadPriorityOsValue::default()),
        ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other),
    )
    .is_ok();
    match current_nice() {
        Some(n) if ok && n != 0 => Scheduling::Nice(n),
        _ if ok => Scheduling::Normal,
        _ => Scheduling::Unknown,
    }
}

/// The calling thread's nice value as the kernel reports it (`/proc/thread-self/stat`, field
/// 19), where the system says.
fn current_nice() -> Option<i8> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) may hold spaces: fields are counted after its ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(16)?.parse().ok()
}

/// What an operator should do when the network threads run at the default priority.
pub const HOW_TO_RAISE: &str = "the network threads run at normal priority: under a busy CPU \
    updates can wait several ms. Allow real-time scheduling with \
    `sudo setcap cap_sys_nice+ep <path to jaus-ocu>` or an `rtprio` limit for your user \
    (/etc/security/limits.conf), see README \"Under load\"";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_reports_what_the_kernel_granted() {
        // Runs on a fresh thread: whatever it gets must not leak into other tests.
        let got = std::thread::Builder::new()
            .name("test-priority".into())
            .spawn(|| {
                let got = raise_current();
                let policy = thread_priority::thread_schedule_policy().unwrap();
                (got, policy, current_nice())
            })
            .unwrap()
            .join()
            .unwrap();
        match got {
            (Scheduling::Realtime(p), policy, _) => {
                assert_eq!(p, REALTIME_PRIORITY);
                assert_eq!(
                    policy,
                    ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo)
                );
            }
            (Scheduling::Nice(n), _, nice) => {
                assert!(n < 0, "{n}");
                assert_eq!(Some(n), nice);
            }
            // Without privilege nothing changes.
            (Scheduling::Normal | Scheduling::Unknown, policy, nice) => {
                assert_eq!(
                    policy,
                    ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other)
                );
                assert!(nice.is_none_or(|n| n >= 0), "{nice:?}");
            }
        }
    }

    #[test]
    fn reset_undoes_a_raise() {
        let (raised, reset, policy, nice) = std::thread::Builder::new()
            .name("test-priority-reset".into())
            .spawn(|| {
                let raised = raise_current();
                let reset = reset_current();
                let policy = thread_priority::thread_schedule_policy().unwrap();
                (raised, reset, policy, current_nice())
            })
            .unwrap()
            .join()
            .unwrap();
        // Lowering is always allowed, so whatever the raise got, the thread is back to normal.
        assert_eq!(reset, Scheduling::Normal, "after {raised:?}");
        assert_eq!(
            policy,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other)
        );
        assert_eq!(nice, Some(0));
    }

    #[test]
    fn nice_is_read_from_the_kernel() {
        let n = current_nice().expect("Linux says");
        assert!((-20..=19).contains(&n), "{n}");
    }
}
