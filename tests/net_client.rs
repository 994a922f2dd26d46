use jaus_ocu::model::update::*;
use jaus_ocu::net::client::{Client, ClientConfig, Output};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use std::net::SocketAddr;

#[test]
fn smoke() {
    let sim_addr: SocketAddr = "127.0.0.1:3794".parse().unwrap();
    let ocu_addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let mut sim = Component::new(ArmFile::demo(), SimConfig::default());
    let mut client = Client::new(ClientConfig {
        connect: vec![sim_addr],
        multicast: None,
        ..ClientConfig::default()
    });
    let mut out = Output::default();
    let mut sim_out = Vec::new();
    let mut updates = Vec::new();
    let mut t = 0.0;
    for step in 0..3000 {
        t = step as f64 * 0.001;
        if step == 1000 {
            client.handle_command(t, Command::RequestControl { authority: 10 }, &mut out);
        }
        if step == 1100 {
            client.handle_command(t, Command::GoToPreset { pose_id: 2 }, &mut out);
        }
        client.tick(t, &mut out);
        for (to, d) in out.datagrams.drain(..) {
            assert_eq!(to, sim_addr);
            sim.handle_datagram(t, ocu_addr, &d, &mut sim_out);
        }
        sim.tick(t, &mut sim_out);
        for o in sim_out.drain(..) {
            assert_eq!(o.to, ocu_addr);
            client.handle_datagram(t, sim_addr, &o.bytes, &mut out);
        }
        updates.extend(out.updates.drain(..));
    }
    let kinds: std::collections::BTreeMap<String, usize> =
        updates.iter().fold(Default::default(), |mut m, u| {
            *m.entry(
                format!("{:?}", u)
                    .split(['{', '(', ' '])
                    .next()
                    .unwrap()
                    .to_string(),
            )
            .or_default() += 1;
            m
        });
    println!("{kinds:?}");
    for u in &updates {
        match u {
            Update::JointPositions { .. }
            | Update::JointVelocities { .. }
            | Update::JointEfforts { .. }
            | Update::JointForceTorques { .. }
            | Update::ForceTorque { .. }
            | Update::Stats { .. } => {}
            u => println!("{u:?}"),
        }
    }
    println!("t={t} stats {:?} sim {:?}", client.stats(), sim.stats());
}
