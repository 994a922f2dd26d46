//! What real peers send beyond the JSIDL (wire reference §9): unit codes 0/1, `JointNamesList`
//! without its presence bit, flooring encoders; and malformed bodies rejected with context.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::wire::scales;
use jaus_ocu::jaus::{DecodeContext, DecodeErrorKind, Dialect, JointKind, Message};

fn joint_positions(m: Message) -> Vec<JointValue> {
    match m {
        Message::ReportJointPositions(r) => r.joint_positions,
        other => panic!("not ReportJointPositions: {other:?}"),
    }
}

/// `ReportJointPositions` body with explicit unit codes and raw integers.
fn rjp(entries: &[(u8, u32)]) -> Vec<u8> {
    let mut b = vec![0x02, 0x46, entries.len() as u8];
    for (code, raw) in entries {
        b.push(*code);
        b.extend_from_slice(&raw.to_le_bytes());
    }
    b
}

fn ctx(kinds: &[JointKind]) -> DecodeContext {
    DecodeContext {
        joint_kinds: Some(kinds.to_vec()),
    }
}

#[test]
fn jsidl_codes_one_and_two_decode_as_rotary_and_linear() {
    let rad = scales::JOINT_POSITION_RAD.encode(0.5).unwrap();
    let m = scales::JOINT_POSITION_M.encode(0.25).unwrap();
    let v = joint_positions(Message::parse(&rjp(&[(1, rad), (2, m)])).unwrap());
    assert_eq!(v[0].joint_type, JointKind::Revolute);
    assert_eq!(v[1].joint_type, JointKind::Prismatic);
    assert!((v[1].value - 0.25).abs() <= scales::JOINT_POSITION_M.lsb());
}

#[test]
fn openjaus_codes_zero_and_one_decode_as_rotary_and_linear() {
    let rad = scales::JOINT_POSITION_RAD.encode(-1.0).unwrap();
    let m = scales::JOINT_POSITION_M.encode(0.75).unwrap();
    // A 0 in the list marks the OpenJAUS dialect, so the 1 is linear.
    let v = joint_positions(Message::parse(&rjp(&[(0, rad), (1, m)])).unwrap());
    assert_eq!(v[0].joint_type, JointKind::Revolute);
    assert_eq!(v[1].joint_type, JointKind::Prismatic);
    assert!((v[1].value - 0.75).abs() <= scales::JOINT_POSITION_M.lsb());
}

#[test]
fn ambiguous_code_one_follows_the_joint_type_from_the_specification() {
    let m = scales::JOINT_POSITION_M.encode(0.3).unwrap();
    let bytes = rjp(&[(1, m), (1, m)]);
    // Without context: the JSIDL reading (rotary).
    let v = joint_positions(Message::parse(&bytes).unwrap());
    assert!(v.iter().all(|j| j.joint_type == JointKind::Revolute));
    // With the specification saying joint 2 is prismatic, OpenJAUS's 1 = metre is meant.
    let v = joint_positions(
        Message::parse_with(&bytes, &ctx(&[JointKind::Revolute, JointKind::Prismatic])).unwrap(),
    );
    assert_eq!(v[0].joint_type, JointKind::Revolute);
    assert_eq!(v[1].joint_type, JointKind::Prismatic);
    assert!((v[1].value - 0.3).abs() <= scales::JOINT_POSITION_M.lsb());
}

#[test]
fn a_two_in_the_list_settles_code_one_as_rotary_whatever_the_context() {
    let rad = scales::JOINT_POSITION_RAD.encode(0.1).unwrap();
    let m = scales::JOINT_POSITION_M.encode(0.1).unwrap();
    let v = joint_positions(
        Message::parse_with(
            &rjp(&[(1, rad), (2, m)]),
            &ctx(&[JointKind::Prismatic, JointKind::Prismatic]),
        )
        .unwrap(),
    );
    assert_eq!(v[0].joint_type, JointKind::Revolute);
}

#[test]
fn undefined_unit_code_is_an_error_with_offset() {
    let e = Message::parse(&rjp(&[(1, 0), (7, 0)])).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::BadUnitCode(7));
    assert_eq!(e.field, "JointPosition");
    assert_eq!(e.offset, 3 + 5);
}

#[test]
fn encoder_chooses_the_dialect() {
    let m = Message::from(ReportJointPositions {
        joint_positions: vec![
            JointValue::revolute(scales::JOINT_POSITION_RAD.quantize(0.5).unwrap()),
            JointValue::prismatic(scales::JOINT_POSITION_M.quantize(0.2).unwrap()),
        ],
    });
    let jsidl = m.emit_with(Dialect::Jsidl).unwrap();
    let oj = m.emit_with(Dialect::OpenJaus).unwrap();
    assert_eq!((jsidl[3], jsidl[8]), (1, 2));
    assert_eq!((oj[3], oj[8]), (0, 1));
    assert_eq!(Message::parse(&jsidl).unwrap(), m);
    assert_eq!(Message::parse(&oj).unwrap(), m);
}

fn spec(joint_names: Option<Vec<String>>) -> ReportManipulatorSpecifications {
    ReportManipulatorSpecifications {
        manipulator_coordinate_system: None,
        first_joint_parameters: FirstJointParameters::Revolute(RevoluteJoint1 {
            joint1_offset: scales::LENGTH_U16.quantize(0.3).unwrap(),
            joint1_min_value: None,
            joint1_max_value: None,
            joint1_max_speed: None,
            joint1_max_torque: None,
            offset_bounding_cylinder_radius: None,
        }),
        joint_specifications: vec![JointSpecification::Prismatic(PrismaticJointSpecification {
            link_length: scales::LENGTH_U16.quantize(0.0).unwrap(),
            twist_angle: scales::ANGLE_U16.quantize(0.0).unwrap(),
            joint_angle: scales::ANGLE_U16.quantize(0.0).unwrap(),
            min_value: scales::LIMIT_M.quantize(0.0).unwrap(),
            max_value: scales::LIMIT_M.quantize(0.5).unwrap(),
            max_speed: None,
            max_force: None,
            joint_bounding_cylinder_radius: None,
            link_length_bounding_cylinder_radius: None,
        })],
        joint_names,
    }
}

#[test]
fn joint_names_with_presence_bit_round_trip() {
    let m = Message::from(spec(Some(vec!["waist".into(), "telescope".into()])));
    let bytes = m.emit().unwrap();
    assert_eq!(bytes[2], 0b10, "PV bit 1 set for JointNamesList");
    assert_eq!(Message::parse(&bytes).unwrap(), m);
}

#[test]
fn joint_names_after_a_presence_vector_without_its_bit_are_accepted() {
    // §9 C2: OpenJAUS 2019 writes the list as mandatory and never sets bit 1.
    let m = Message::from(spec(Some(vec!["waist".into(), "telescope".into()])));
    let bytes = m.emit_with(Dialect::OpenJaus).unwrap();
    assert_eq!(bytes[2], 0, "OpenJAUS leaves PV bit 1 clear");
    assert_eq!(Message::parse(&bytes).unwrap(), m);
}

#[test]
fn absent_joint_names_decode_as_none_and_stray_bytes_are_refused() {
    let m = Message::from(spec(None));
    let mut bytes = m.emit().unwrap();
    assert_eq!(Message::parse(&bytes).unwrap(), m);
    bytes.push(0x09); // a count of 9 names with no names following
    let e = Message::parse(&bytes).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
}

#[test]
fn joint_kinds_come_from_the_specification() {
    assert_eq!(
        spec(None).joint_kinds(),
        vec![JointKind::Revolute, JointKind::Prismatic]
    );
}

#[test]
fn flooring_encoders_land_within_one_lsb() {
    // JTS truncates and OpenJAUS floors (§3.2): decode their integers and stay within 1 LSB.
    for (scale, v) in [
        (scales::JOINT_POSITION_RAD, 1.234_567),
        (scales::EFFORT, 0.0),
        (scales::EVENT_RATE, 10.0),
        (scales::IOP_TORQUE, -0.5),
        (scales::ANGLE_U16, std::f64::consts::FRAC_PI_2),
    ] {
        let floored = ((v - scale.lo) / scale.lsb()).floor() as u32;
        let rounded = scale.encode(v).unwrap();
        assert!(rounded - floored <= 1);
        assert!((scale.decode(floored) - v).abs() <= scale.lsb());
    }
}

#[test]
fn unknown_presence_bits_are_rejected_with_field_and_offset() {
    // RejectEventRequest defines PV bits 0 and 1 only.
    let e = Message::parse(&[0xf4, 0x01, 0x04, 0x07]).unwrap_err();
    assert_eq!(e.field, "PresenceVector");
    assert_eq!(e.offset, 2);
    assert!(matches!(
        e.kind,
        DecodeErrorKind::UnknownPresenceBits { bits: 4, known: 3 }
    ));
}

#[test]
fn unknown_variant_tag_is_an_error() {
    // QueryEvents has four alternatives.
    let e = Message::parse(&[0xf0, 0x21, 0x04, 0x00]).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::BadVariantTag(4));
    assert_eq!(e.field, "QueryEventsVar");
}

#[test]
fn trailing_bytes_after_a_known_message_are_an_error() {
    let e = Message::parse(&[0x02, 0x20, 0x00]).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    assert_eq!(e.field, "QueryStatus");
}

#[test]
fn undefined_enumeration_values_are_kept() {
    let Message::ReportStatus(r) = Message::parse(&[0x02, 0x40, 0x09, 0, 0, 0, 0]).unwrap() else {
        panic!()
    };
    assert_eq!(r.status, Status::Other(9));
    assert_eq!(
        Message::from(r).emit().unwrap(),
        vec![0x02, 0x40, 0x09, 0, 0, 0, 0]
    );
}

#[test]
fn unknown_message_ids_are_data_not_errors() {
    let m = Message::parse(&[0x34, 0x12, 1, 2, 3]).unwrap();
    assert_eq!(
        m,
        Message::Unknown {
            id: 0x1234,
            body: vec![1, 2, 3]
        }
    );
    assert_eq!(m.name(), "Unknown");
    assert_eq!(m.emit().unwrap(), vec![0x34, 0x12, 1, 2, 3]);
}

#[test]
fn encoding_out_of_range_is_an_error_never_a_clamp() {
    let m = Message::from(ReportJointPositions {
        joint_positions: vec![JointValue::prismatic(12.0)],
    });
    let e = m.emit().unwrap_err();
    assert_eq!(e.field, "JointPosition");
    assert!(e.to_string().contains("outside the field's range"));
}

#[test]
fn json_uses_spec_field_names_and_si_values() {
    let m = Message::from(ReportStatus {
        status: Status::Emergency,
        reserved: 0,
    });
    let j = m.to_json();
    assert_eq!(j["id"], "0x4002");
    assert_eq!(j["name"], "ReportStatus");
    assert_eq!(j["status"], "EMERGENCY");
    let ft = Message::from(
        jaus_ocu::jaus::iop::ReportManipulatorEndEffectorForceTorque::full(
            [1.0, 2.0, 3.0],
            [0.1, 0.2, 0.3],
        ),
    )
    .to_json();
    assert_eq!(ft["force_x"], 1.0);
    let keys: Vec<&str> = ft.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(&keys[..3], &["id", "name", "force_x"]);
}

// -------------------------------------------------------------------------------------------
// Tolerated peer deviations (issue 13; wire reference §9 C8–C11), each with the count the replay
// observer keeps — the `tolerated` object of `inspect FILE --summary --json`.

mod tolerated {
    use std::net::SocketAddr;

    use jaus_ocu::model::update::*;
    use jaus_ocu::net::tap::{Direction, WireRecord};
    use jaus_ocu::record::observer::Observer;

    const PEER: [u8; 4] = [10, 1, 126, 0];
    const OCU: [u8; 4] = [1, 1, 200, 0];

    /// One block (§4.2), built by hand.
    fn block(flags: u8, dst: [u8; 4], src: [u8; 4], payload: &[u8], seq: u16) -> Vec<u8> {
        let mut b = vec![0x00];
        b.extend_from_slice(&(14 + payload.len() as u16).to_le_bytes());
        b.push(flags);
        b.extend_from_slice(&dst);
        b.extend_from_slice(&src);
        b.extend_from_slice(payload);
        b.extend_from_slice(&seq.to_le_bytes());
        b
    }

    fn observe(datagrams: &[(Direction, Vec<u8>)]) -> (Tolerated, Vec<Update>) {
        let peer: SocketAddr = "127.0.0.1:3794".parse().unwrap();
        let mut o = Observer::new(0);
        let mut updates = Vec::new();
        for (i, (direction, bytes)) in datagrams.iter().enumerate() {
            o.observe(
                &WireRecord {
                    t_ns: (i as u64 + 1) * 1_000_000,
                    direction: *direction,
                    peer,
                    bytes: bytes.clone(),
                    latched: None,
                },
                &mut updates,
            );
        }
        (o.stats().tolerated, updates)
    }

    fn datagram(blocks: &[Vec<u8>]) -> Vec<u8> {
        let mut d = vec![0x02];
        for b in blocks {
            d.extend_from_slice(b);
        }
        d
    }

    #[test]
    fn an_ack_with_a_payload_is_skipped_and_the_confirm_control_after_it_decoded() {
        // §9 C11: ACK (flags 0x31) copying RequestControl's 3 bytes, then ConfirmControl 0.
        let d = datagram(&[
            block(0x31, OCU, PEER, &[0x0d, 0x00, 0xc8], 1),
            block(0x01, OCU, PEER, &[0x0f, 0x00, 0x00], 2),
        ]);
        let (t, _) = observe(&[(Direction::Rx, d)]);
        assert_eq!(t.ack_payload, 1);
        assert_eq!(t.total(), 1);
    }

    #[test]
    fn a_one_byte_or_empty_emergency_code_is_an_emergency_stop() {
        // §9 C10: SetEmergency with a u8 code, ClearEmergency with none; a short Resume body
        // (none exists) and other short bodies are not tolerated.
        let (t, updates) = observe(&[
            (
                Direction::Tx,
                datagram(&[block(0x01, PEER, OCU, &[0x06, 0x00, 0x01], 1)]),
            ),
            (
                Direction::Tx,
                datagram(&[block(0x01, PEER, OCU, &[0x07, 0x00], 2)]),
            ),
            (
                Direction::Tx,
                datagram(&[block(0x01, PEER, OCU, &[0x02, 0x06, 0x01], 3)]),
            ),
        ]);
        assert_eq!(t.short_emergency_code, 2);
        let _ = updates;
    }

    #[test]
    fn a_wildcard_report_services_names_its_sender_not_a_phantom() {
        // §9 C8: one node 255 with one component 255 (instance 0) and no services.
        let d = datagram(&[block(
            0x01,
            OCU,
            PEER,
            &[0x03, 0x4b, 1, 255, 1, 255, 0, 0],
            1,
        )]);
        let (t, updates) = observe(&[(Direction::Rx, d)]);
        assert_eq!(t.wildcard_services, 1);
        let ids: Vec<ComponentId> = updates
            .iter()
            .filter_map(|u| match u {
                Update::Net(NetFact::Component { info, .. }) => Some(info.id),
                _ => None,
            })
            .collect();
        assert_eq!(
            ids,
            [ComponentId {
                subsystem: 126,
                node: 1,
                component: 10
            }]
        );
    }
}

// -------------------------------------------------------------------------------------------
// ReportServices with one component in several node records (issue 18 item 8; wire reference
// §9 C13): the JAUS Tool Set's components list each service in a record of its own, all with
// the same node and component ID.

mod services_per_record {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    use std::time::Duration;

    use jaus_ocu::jaus::core::{ComponentServices, NodeServices, ReportServices, ServiceRec};
    use jaus_ocu::jaus::judp::{self, Header};
    use jaus_ocu::jaus::{JausId, Message};
    use jaus_ocu::model::update::*;
    use jaus_ocu::net::client::ClientConfig;
    use jaus_ocu::net::tap::{Direction, WireRecord};
    use jaus_ocu::record::observer::Observer;
    use jaus_ocu::sim::arm_file::ArmFile;
    use jaus_ocu::sim::component::{self, Component, SimConfig};
    use jaus_ocu::sim::harness::{SimNet, Verdict};

    const OCU: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 5000);
    const SIM: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 3794);
    const SIM_ID: JausId = component::DEFAULT_ID;

    /// `services` as JTS lists them: one node record per service, every record naming `id`.
    fn one_per_record(id: JausId, services: &[ServiceRec]) -> ReportServices {
        ReportServices {
            nodes: services
                .iter()
                .map(|s| NodeServices {
                    node_id: id.node,
                    components: vec![ComponentServices {
                        component_id: id.component,
                        instance_id: 0,
                        services: vec![s.clone()],
                    }],
                })
                .collect(),
        }
    }

    /// The last thing said of `id` in `updates`.
    fn last_info(updates: &[Update], id: JausId) -> Option<ComponentInfo> {
        updates.iter().rev().find_map(|u| match u {
            Update::Net(NetFact::Component { info, .. }) if info.id == id.into() => {
                Some(info.clone())
            }
            _ => None,
        })
    }

    #[test]
    fn a_manipulator_listing_one_service_per_record_is_selected_and_a_later_report_replaces_its_list()
     {
        let all = component::services();
        // The last record alone (what the client used to keep) is no manipulator service.
        assert!(!all.last().unwrap().uri.contains(":manipulator:"));
        let split = one_per_record(SIM_ID, &all);
        // Through our codec, as a peer would send it: every record survives the wire.
        let bytes = Message::from(split.clone()).emit().unwrap();
        assert_eq!(
            Message::parse(&bytes).unwrap(),
            Message::from(split.clone())
        );
        assert_eq!(split.nodes.len(), all.len());

        let cfg = ClientConfig {
            connect: vec![SIM],
            multicast: None,
            ..ClientConfig::default()
        };
        let mut net = SimNet::new(cfg, OCU, Duration::from_millis(1), 18);
        let i = net.add_peer(SIM, Component::new(ArmFile::demo(), SimConfig::default()));
        let reply = Message::from(split);
        net.peers[i].intercept = Some(Box::new(move |_, m| match m {
            Message::QueryServices(_) => Verdict::Reply(reply.clone()),
            _ => Verdict::Pass,
        }));
        // The replay observer sees the same wire.
        let mut observer = Observer::new(0);
        let mut observed = Vec::new();
        let mut subscribed = false;
        for _ in 0..5000 {
            net.step_with(&mut |p| {
                observer.observe(
                    &WireRecord {
                        t_ns: p.t_ns,
                        direction: p.direction,
                        peer: p.peer,
                        bytes: p.bytes.to_vec(),
                        latched: None,
                    },
                    &mut observed,
                );
            });
            subscribed = net.updates.iter().any(|u| {
                matches!(
                    u,
                    Update::Arm {
                        fact: ArmFact::Delivery {
                            delivery: Delivery::Event(_),
                            ..
                        },
                        ..
                    }
                )
            });
            if subscribed {
                break;
            }
        }
        assert!(
            net.updates.iter().any(
                |u| matches!(u, Update::Net(NetFact::Selected { id, .. }) if *id == SIM_ID.into())
            ),
            "not selected; components: {:?}",
            last_info(&net.updates, SIM_ID)
        );
        assert!(subscribed, "no subscription started within 5 s");
        assert_eq!(net.client.selected(), Some(SIM_ID));
        let info = last_info(&net.updates, SIM_ID).unwrap();
        assert_eq!(info.services, jaus_ocu::net::reports::service_list(&all));
        assert!(info.manipulator);
        let seen = last_info(&observed, SIM_ID).expect("the observer's component update");
        assert_eq!(seen.services, info.services);
        assert!(seen.manipulator);

        // A later report with a shorter list replaces the list; it is not merged with the first.
        let shorter: Vec<ServiceRec> = all
            .iter()
            .filter(|s| s.uri.ends_with(":Events") || s.uri.contains(":manipulator:Manipulator"))
            .take(3)
            .cloned()
            .collect();
        assert!(shorter.len() < all.len());
        let later = Message::from(one_per_record(SIM_ID, &shorter))
            .emit()
            .unwrap();
        let datagram = judp::single(&Header::new(net.client.id(), SIM_ID, 20_000), &later).unwrap();
        net.inject_to_client(SIM, &datagram);
        let info = last_info(&net.updates, SIM_ID).unwrap();
        assert_eq!(
            info.services,
            jaus_ocu::net::reports::service_list(&shorter)
        );
        assert!(info.manipulator);
        observer.observe(
            &WireRecord {
                t_ns: net.now_ns(),
                direction: Direction::Rx,
                peer: SIM,
                bytes: datagram,
                latched: None,
            },
            &mut observed,
        );
        assert_eq!(
            last_info(&observed, SIM_ID).unwrap().services,
            jaus_ocu::net::reports::service_list(&shorter)
        );
    }
}
