//! The JUDP header parse allocates nothing: views over the datagram, `Copy` headers.
//! (Its own test binary: dhat's global allocator counts every allocation in the process.)

use jaus_ocu::jaus::judp::{Datagram, Header};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn header_parse_allocates_nothing() {
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
    let after = dhat::HeapStats::get();
    assert_eq!(sequences, 1000 * (6 + 6 + 7 + 10));
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
    // The same counter does see an allocation, so the assertion above can fail.
    let v = std::hint::black_box(vec![1u8; 16]);
    assert_eq!(dhat::HeapStats::get().total_blocks, after.total_blocks + 1);
    drop(v);
}
