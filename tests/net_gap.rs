//! A burst of 128–255 lost events makes the u8 event sequence number look as if it went
//! backwards; the client must follow the new numbering instead of discarding good reports.

use std::net::SocketAddr;

use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::jaus::{DecodeContext, Message};
use jaus_ocu::model::update::Update;
use jaus_ocu::net::client::{Client, ClientConfig, Output, Rates};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};

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
    let mut sim = Component::new(
        ArmFile::demo(),
        SimConfig {
            tour: true,
            ..SimConfig::default()
        },
    );
    let mut client = Client::new(ClientConfig {
        connect: vec![sim_addr],
        multicast: None,
        rates: Rates {
            positions: 1000.0,
            ..Rates::default()
        },
        ..ClientConfig::default()
    });
    let mut out = Output::default();
    let mut sim_out = Vec::new();
    let (gap_start, gap_end) = (2.0, 2.2005);
    let mut dropped = 0;
    let mut first_after_gap = None;
    for step in 0..3000u32 {
        let t = f64::from(step) * 0.001;
        client.tick(t, &mut out);
        for (_, d) in std::mem::take(&mut out.datagrams) {
            sim.handle_datagram(t, ocu_addr, &d, &mut sim_out);
        }
        sim.tick(t, &mut sim_out);
        for o in sim_out.drain(..) {
            if (gap_start..gap_end).contains(&t) && is_position_event(&o.bytes) {
                dropped += 1;
                continue;
            }
            client.handle_datagram(t, sim_addr, &o.bytes, &mut out);
        }
        for u in out.updates.drain(..) {
            if let Update::JointPositions { t: ut, .. } = u
                && ut >= gap_end
                && first_after_gap.is_none()
            {
                first_after_gap = Some(ut);
            }
        }
    }
    assert!((190..=210).contains(&dropped), "{dropped} events dropped");
    let resumed = first_after_gap.expect("positions resumed") - gap_end;
    // At 1 kHz: at most the two events it takes to recognise the gap, not 56.
    assert!(
        resumed <= 0.005,
        "positions resumed {:.0} ms after the gap",
        resumed * 1000.0
    );
}
