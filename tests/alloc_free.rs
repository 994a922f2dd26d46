//! Hot paths that must not allocate: the JUDP header parse (views over the datagram, `Copy`
//! headers) and the kinematics fast paths the simulator and UI call every tick / frame.
//! (Its own test binary with one test: dhat's global allocator counts every allocation in the
//! process, so nothing may run beside it.)

use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::model::arm::{ArmSpec, Joint};
use jaus_ocu::model::kinematics;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

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
