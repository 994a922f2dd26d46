//! A burst of 128–255 lost events makes the u8 event sequence number look as if it went
//! backwards; the client must follow the new numbering instead of discarding good reports.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::jaus::{DecodeContext, Message};
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::{ClientConfig, Rates};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::harness::SimNet;

fn is_position_event(bytes: &[u8]) -> bool {
    let Ok(dg) = Datagram::new_checked(bytes) else {
        return false;
    };
    dg.blocks().flatten().any(|b| {
        let _ = Header::parse(&b.block);
        matches!(Message::parse(b.block.payload()), Ok(Message::Event(e))
            if matches!(e.report_message.decode(&DecodeContext::NONE), Ok(Message::ReportJointPositions(_))))
    })
}

#[test]
fn positions_resume_at_once_after_a_burst_of_200_lost_events() {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let cfg = ClientConfig {
        connect: vec![sim_addr],
        multicast: None,
        rates: Rates {
            positions: 1000.0,
            ..Rates::default()
        },
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, ocu_addr, Duration::from_millis(1), 1);
    net.add_peer(
        sim_addr,
        Component::new(
            ArmFile::demo(),
            SimConfig {
                tour: true,
                ..SimConfig::default()
            },
        ),
    );
    let (gap_start, gap_end) = (2.0, 2.2005);
    let dropped = Rc::new(Cell::new(0));
    let count = dropped.clone();
    net.drop_to_client = Some(Box::new(move |t, bytes| {
        let lost = (gap_start..gap_end).contains(&t) && is_position_event(bytes);
        count.set(count.get() + u32::from(lost));
        lost
    }));
    for _ in 0..3000 {
        net.step();
    }
    let first_after_gap = net.updates.iter().find_map(|u| match u {
        Update::Arm {
            fact: ArmFact::JointPositions { t, .. },
            ..
        } if *t >= gap_end => Some(*t),
        _ => None,
    });
    let dropped = dropped.get();
    assert!((190..=210).contains(&dropped), "{dropped} events dropped");
    let resumed = first_after_gap.expect("positions resumed") - gap_end;
    // At 1 kHz: at most the two events it takes to recognise the gap, not 56.
    assert!(
        resumed <= 0.005,
        "positions resumed {:.0} ms after the gap",
        resumed * 1000.0
    );
}
