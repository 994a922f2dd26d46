//! A simulated vehicle: several copies of one arm on one subsystem, each at its own mount
//! (`jaus-ocu demo --arms N`, the two-arm screenshot). The arms stand in a row across the
//! vehicle, [`SPACING`] m apart along y, each turned outward (the left ones to the left, the
//! right ones to the right, a middle one to the front), so their working spaces do not
//! overlap at home.

use std::net::SocketAddr;
use std::time::Duration;

use crate::jaus::{JausId, judp};
use crate::model::arm::Mount;
use crate::model::update::Update;
use crate::net::client::ClientConfig;
use crate::sim::arm_file::ArmFile;
use crate::sim::component::{Component, DEFAULT_ID, SimConfig};
use crate::sim::harness::SimNet;

/// Most arms a simulated vehicle carries (`demo --arms`).
pub const MAX_DEMO_ARMS: usize = 8;

/// Distance between neighbouring mounts, m (along the vehicle's y).
pub const SPACING: f64 = 0.8;

/// The `n` arms of the vehicle (1..=[`MAX_DEMO_ARMS`]; more are cut to it): IDs
/// 126.1.10, 126.1.11, … (after [`DEFAULT_ID`]), each a copy of `arm` at its mount. One arm
/// keeps the file's own mount (today's demo).
pub fn vehicle_arms(arm: &ArmFile, n: usize) -> Vec<(JausId, ArmFile)> {
    let n = n.clamp(1, MAX_DEMO_ARMS);
    (0..n)
        .map(|i| {
            let mut a = arm.clone();
            if n > 1 {
                a.spec.mount = Some(vehicle_mount(arm.spec.mount, i, n));
            }
            let component = DEFAULT_ID.component.saturating_add(i as u8);
            (
                JausId::new(DEFAULT_ID.subsystem, DEFAULT_ID.node, component),
                a,
            )
        })
        .collect()
}

/// The updates of `seconds` of an in-memory session of `n` copies of `arm` on one vehicle
/// ([`vehicle_arms`]: IDs from 126.1.10, each a peer at its own address, the idle tour on),
/// as the real client following every arm publishes them (per-arm facts in
/// [`Update::Arm`]); the first arm is focused. For the UI's tests, screenshots and
/// benchmarks of a vehicle.
pub fn vehicle_updates(arm: &ArmFile, n: usize, seconds: f64) -> Vec<Update> {
    let ocu = SocketAddr::from(([127, 0, 0, 1], 5000));
    let arms = vehicle_arms(arm, n);
    let addrs: Vec<SocketAddr> = (0..arms.len())
        .map(|i| SocketAddr::from(([127, 0, 0, 1], judp::PORT + i as u16)))
        .collect();
    let cfg = ClientConfig {
        connect: addrs.clone(),
        multicast: None,
        component: arms.first().map(|(id, _)| *id),
        ..ClientConfig::default()
    };
    let mut net = SimNet::new(cfg, ocu, Duration::from_millis(2), 1);
    for (i, ((id, arm), addr)) in arms.into_iter().zip(addrs).enumerate() {
        let sim = SimConfig {
            id,
            tour: true,
            seed: 1 + i as u64,
            ..SimConfig::default()
        };
        net.add_peer(addr, Component::new(arm, sim));
    }
    while net.now() < seconds {
        net.step();
    }
    net.published(0)
}

/// The mount of arm `i` of `n`: the file's mount (`base`) moved along y to its place in the
/// row and turned outward about the vehicle's z.
fn vehicle_mount(base: Option<Mount>, i: usize, n: usize) -> Mount {
    let base = base.unwrap_or(Mount::IDENTITY);
    let y = (i as f64 - (n as f64 - 1.0) / 2.0) * SPACING;
    let yaw = if y.abs() < 1e-9 {
        0.0
    } else {
        y.signum() * std::f64::consts::FRAC_PI_2
    };
    let turn = Mount::at([0.0; 3], yaw).orientation;
    let [x, y0, z] = base.position;
    Mount {
        position: [x, y0 + y, z],
        orientation: quaternion_product(turn, base.orientation),
    }
}

/// `a ⊗ b` of two scalar-first quaternions (`b` first, then `a`).
fn quaternion_product(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [w1, x1, y1, z1] = a;
    let [w2, x2, y2, z2] = b;
    [
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinematics::forward;

    #[test]
    fn two_arms_stand_apart_on_one_subsystem_facing_outward() {
        let demo = ArmFile::demo();
        let arms = vehicle_arms(&demo, 2);
        let ids: Vec<String> = arms.iter().map(|(id, _)| id.to_string()).collect();
        assert_eq!(ids, ["126.1.10", "126.1.11"]);
        // Reaching out (2.17 m ahead when mounted as the file says).
        let reach = &demo
            .presets
            .iter()
            .find(|p| p.name.contains("Reach"))
            .unwrap()
            .positions;
        let tools: Vec<_> = arms
            .iter()
            .map(|(_, a)| {
                forward(&a.spec, reach, a.tool_point)
                    .unwrap()
                    .tool_point_vehicle
            })
            .collect();
        let bases: Vec<f64> = arms
            .iter()
            .map(|(_, a)| a.spec.mount.unwrap().position[1])
            .collect();
        assert!((bases[1] - bases[0] - SPACING).abs() < 1e-12, "{bases:?}");
        // Outward: the left arm's tool point is left of its base, the right one's right.
        assert!(tools[0].y < bases[0] && tools[1].y > bases[1], "{tools:?}");
        assert!(tools[0].y < bases[0] - 1.0 && tools[1].y > bases[1] + 1.0);
        // The same height as the file's mount: only turned about z.
        let alone = forward(&demo.spec, reach, demo.tool_point).unwrap();
        assert!((tools[0].z - alone.tool_point_vehicle.z).abs() < 1e-9);
    }

    #[test]
    fn one_arm_is_the_files_and_the_row_is_bounded() {
        let demo = ArmFile::demo();
        assert_eq!(vehicle_arms(&demo, 1)[0].1.spec.mount, demo.spec.mount);
        assert_eq!(vehicle_arms(&demo, 40).len(), MAX_DEMO_ARMS);
    }
}
