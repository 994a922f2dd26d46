//! Hot paths that must not allocate: the JUDP header parse (views over the datagram, `Copy`
//! headers) and the kinematics fast paths the simulator and UI call every tick / frame.
//! (Its own test binary with one test: dhat's global allocator counts every allocation in the
//! process, so nothing may run beside it.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::time::{Duration, Instant};

use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::model::arm::{ArmSpec, Joint};
use jaus_ocu::model::kinematics;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Waits until the test harness's main thread is done allocating. After starting this test's
/// thread it records the running test and blocks for its result, allocating as it goes, and dhat
/// counts every thread's allocations: on a loaded machine that can fall into the measured part.
/// So measure only once that thread sleeps and the count has stood still for a while.
fn wait_for_the_harness_to_settle() {
    let main_thread = format!("/proc/self/task/{}/stat", std::process::id());
    let asleep = || match std::fs::read_to_string(&main_thread) {
        // The state follows the command name in parentheses; "S" is waiting.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('S')),
        // No /proc: only the count tells.
        Err(_) => true,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut blocks = dhat::HeapStats::get().total_blocks;
    let mut still = 0;
    while still < 3 {
        assert!(
            Instant::now() < deadline,
            "the test harness did not stop allocating within 30 s"
        );
        std::thread::sleep(Duration::from_millis(10));
        // Only other threads allocate between the last count and this one (`asleep` itself
        // allocates, so it runs after).
        let quiet = dhat::HeapStats::get().total_blocks == blocks;
        still = if quiet && asleep() { still + 1 } else { 0 };
        blocks = dhat::HeapStats::get().total_blocks;
    }
}

#[test]
fn header_parse_and_kinematics_fast_paths_allocate_nothing() {
    let arm = ArmSpec {
        mount: None,
        joints: vec![
            Joint::revolute(0.0, 0.0, 0.3),
            Joint::revolute(0.1, 1.5, 0.0),
            Joint::prismatic(0.4, 0.0, 0.0, 0.0, 1.0),
            Joint::revolute(0.0, -1.5, 0.1),
        ],
    };
    let q = [0.1, 0.2, 0.5, -0.3];
    let datagram: Vec<u8> = vec![
        0x02, 0x00, 0x14, 0x00, 0x01, 0x14, 0x01, 0x7e, 0x00, 0x0a, 0x01, 0x7e, 0x00, 0xf3, 0x01,
        0x07, 0x00, 0x2c, 0x01, 0x06, 0x00, 0x00, 0x18, 0x00, 0x01, 0x14, 0x01, 0x7e, 0x00, 0x0a,
        0x01, 0x7e, 0x00, 0xf1, 0x41, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x42, 0x07, 0x00,
    ];
    let _profiler = dhat::Profiler::builder().testing().build();
    wait_for_the_harness_to_settle();
    let before = dhat::HeapStats::get();
    let mut sequences = 0u32;
    for _ in 0..1000 {
        let dg = Datagram::new_checked(&datagram).unwrap();
        for b in dg.blocks() {
            let b = b.unwrap();
            let h = Header::parse(&b.block);
            sequences += u32::from(h.sequence) + b.block.payload().len() as u32;
        }
    }
    let mut reach = 0.0;
    for _ in 0..1000 {
        reach += kinematics::tool_point(&arm, &q, [0.0, 0.0, 0.1])
            .unwrap()
            .length();
        reach += kinematics::end_effector_pose(&arm, &q, [0.0; 3])
            .unwrap()
            .0
            .length();
        // Errors allocate nothing either.
        assert!(kinematics::tool_point(&arm, &q[..2], [0.0; 3]).is_err());
    }
    let after = dhat::HeapStats::get();
    assert!(reach > 0.0);
    assert_eq!(sequences, 1000 * (6 + 6 + 7 + 10));
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
    // The same counter does see an allocation, so the assertion above can fail.
    let v = std::hint::black_box(vec![1u8; 16]);
    assert_eq!(dhat::HeapStats::get().total_blocks, after.total_blocks + 1);
    drop(v);
}
