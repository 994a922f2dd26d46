//! Byte-exact vectors from the wire reference §5: real traffic (§5.2 capture, §5.3 format.py
//! live, §5.4 third party) must parse to the documented meaning and re-emit to the same bytes;
//! our computed vectors (§5.5) are round-trip checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use jaus_ocu::cli::parse_hex;
use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::iop::*;
use jaus_ocu::jaus::judp::{
    self, AckNak, Block, Broadcast, DataFlags, Datagram, DatagramWriter, Header, Priority,
};
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::wire::{Scale, scales};
use jaus_ocu::jaus::{DecodeContext, DecodeErrorKind, EmbeddedMessage, JausId, JointKind, Message};

const C: JausId = JausId::new(126, 1, 20);
const S: JausId = JausId::new(126, 1, 10);

fn hex(s: &str) -> Vec<u8> {
    parse_hex(s).expect("test vector is valid hex")
}

/// Parses every block of a datagram, asserts it re-emits byte for byte, and returns the blocks.
fn blocks(bytes: &[u8]) -> Vec<(Header, Option<Message>)> {
    let dg = Datagram::new_checked(bytes).expect("datagram frames");
    let mut out = Vec::new();
    let mut w = DatagramWriter::new();
    for b in dg.blocks() {
        let b = b.expect("block frames");
        let h = Header::parse(&b.block);
        let m = if h.ack_nak == AckNak::Ack {
            assert!(b.block.payload().is_empty());
            w.push(&h, &[]).unwrap();
            None
        } else {
            let m = Message::parse(b.block.payload()).expect("message decodes");
            w.push(&h, &m.emit().expect("message re-encodes")).unwrap();
            Some(m)
        };
        out.push((h, m));
    }
    assert_eq!(w.finish(), bytes, "re-emitted datagram differs");
    out
}

fn one(bytes: &[u8]) -> (Header, Message) {
    let mut b = blocks(bytes);
    assert_eq!(b.len(), 1);
    let (h, m) = b.remove(0);
    (h, m.expect("a message"))
}

#[test]
fn capture_request_control_with_ack_request_to_multicast() {
    let (h, m) = one(&hex(
        "02 00 11 00 19 0a 01 7e 00 14 01 7e 00 0d 00 c8 01 00",
    ));
    assert_eq!(h.priority, Priority::Standard);
    assert_eq!(h.broadcast, Broadcast::Global);
    assert_eq!(h.ack_nak, AckNak::Request);
    assert_eq!(h.data_flags, DataFlags::Single);
    assert_eq!((h.destination, h.source, h.sequence), (S, C, 1));
    assert_eq!(
        m,
        Message::RequestControl(RequestControl {
            authority_code: 200
        })
    );
}

#[test]
fn capture_ack_block_has_no_payload_and_echoes_sequence() {
    let b = blocks(&hex("02 00 0e 00 31 14 01 7e 00 0a 01 7e 00 01 00"));
    assert_eq!(b.len(), 1);
    let (h, m) = &b[0];
    assert_eq!(h.ack_nak, AckNak::Ack);
    assert_eq!((h.destination, h.source, h.sequence), (C, S, 1));
    assert!(m.is_none());
    // The ACK we would send for capture frame 1 is exactly frame 2.
    let req = Header {
        ack_nak: AckNak::Request,
        broadcast: Broadcast::Global,
        ..Header::new(S, C, 1)
    };
    assert_eq!(
        judp::single(&req.ack(), &[]).unwrap(),
        hex("02 00 0e 00 31 14 01 7e 00 0a 01 7e 00 01 00")
    );
}

#[test]
fn capture_confirm_control_accepted() {
    let (h, m) = one(&hex(
        "02 00 11 00 01 14 01 7e 00 0a 01 7e 00 0f 00 00 01 00",
    ));
    assert_eq!((h.destination, h.source, h.sequence), (C, S, 1));
    assert_eq!(
        m,
        Message::ConfirmControl(ConfirmControl {
            response_code: ConfirmControlCode::ControlAccepted
        })
    );
}

#[test]
fn capture_query_status_and_report_status_standby() {
    let (_, q) = one(&hex("02 00 10 00 01 0a 01 7e 00 14 01 7e 00 02 20 02 00"));
    assert_eq!(q, Message::QueryStatus(QueryStatus));
    let (h, r) = one(&hex(
        "02 00 15 00 01 14 01 7e 00 0a 01 7e 00 02 40 02 00 00 00 00 02 00",
    ));
    assert_eq!(h.sequence, 2);
    assert_eq!(
        r,
        Message::ReportStatus(ReportStatus {
            status: Status::Standby,
            reserved: 0
        })
    );
}

#[test]
fn capture_resume_set_emergency_and_reject_control() {
    let (h, m) = one(&hex("02 00 10 00 01 0a 01 7e 00 14 01 7e 00 04 00 03 00"));
    assert_eq!((m, h.sequence), (Message::Resume(Resume), 3));
    let (h, m) = one(&hex(
        "02 00 12 00 01 0a 01 7e 00 14 01 7e 00 06 00 00 00 05 00",
    ));
    // The tool sent EmergencyCode 0, which the JSIDL does not define; it is kept as sent.
    assert_eq!(
        (m, h.sequence),
        (Message::SetEmergency(SetEmergency { emergency_code: 0 }), 5)
    );
    let (_, m) = one(&hex(
        "02 00 11 00 01 14 01 7e 00 0a 01 7e 00 10 00 00 06 00",
    ));
    assert_eq!(
        m,
        Message::RejectControl(RejectControl {
            response_code: RejectControlCode::ControlReleased
        })
    );
}

#[test]
fn format_py_report_identification() {
    let (h, m) = one(&hex(
        "02 00 1a 00 01 14 01 7e 00 0a 01 7e 00 00 4b 02 11 27 06 73 75 62 73 79 73 00 00",
    ));
    assert_eq!(h.sequence, 0);
    assert_eq!(
        m,
        Message::ReportIdentification(ReportIdentification {
            query_type: QueryType::Subsystem,
            kind: IdentificationType::Vehicle,
            identification: "subsys".into(),
        })
    );
}

#[test]
fn format_py_report_control_uncontrolled() {
    let (_, m) = one(&hex(
        "02 00 15 00 01 14 01 7e 00 0a 01 7e 00 0d 40 00 00 00 00 00 03 00",
    ));
    assert_eq!(
        m,
        Message::ReportControl(ReportControl {
            subsystem_id: 0,
            node_id: 0,
            component_id: 0,
            authority_code: 0
        })
    );
}

#[test]
fn format_py_request_bodies_we_send_are_byte_exact() {
    let cases: [(Message, &str); 6] = [
        (
            QueryIdentification {
                query_type: QueryType::Subsystem,
            }
            .into(),
            "00 2b 02",
        ),
        (QueryHeartbeatPulse.into(), "02 22"),
        (QueryControl.into(), "0d 20"),
        (
            RequestControl {
                authority_code: 200,
            }
            .into(),
            "0d 00 c8",
        ),
        (QueryStatus.into(), "02 20"),
        (
            CreateEvent {
                request_id: 7,
                event_type: EventType::Periodic,
                requested_periodic_rate: scales::EVENT_RATE.decode(120),
                query_message: EmbeddedMessage::new(&QueryHeartbeatPulse.into()).unwrap(),
            }
            .into(),
            "f0 01 07 00 78 00 02 00 00 00 02 22",
        ),
    ];
    for (m, bytes) in cases {
        assert_eq!(m.emit().unwrap(), hex(bytes), "{}", m.name());
        assert_eq!(Message::parse(&hex(bytes)).unwrap(), m);
    }
}

#[test]
fn format_py_two_blocks_in_one_datagram_confirm_and_event() {
    let b = blocks(&hex(
        "02 00 14 00 01 14 01 7e 00 0a 01 7e 00 f3 01 07 00 2c 01 06 00 \
         00 18 00 01 14 01 7e 00 0a 01 7e 00 f1 41 00 00 02 00 00 00 02 42 07 00",
    ));
    assert_eq!(b.len(), 2);
    let Some(Message::ConfirmEventRequest(c)) = &b[0].1 else {
        panic!("first block is {:?}", b[0].1);
    };
    assert_eq!((c.request_id, c.event_id), (7, 0));
    // 0x012C = 300 -> 300 * 1092 / 65535 = 4.9989 Hz.
    assert!((c.confirmed_periodic_rate - 4.998_855_6).abs() < 1e-6);
    let Some(Message::Event(e)) = &b[1].1 else {
        panic!("second block is {:?}", b[1].1);
    };
    assert_eq!((e.event_id, e.sequence_number), (0, 0));
    assert_eq!(
        e.report_message.decode(&DecodeContext::NONE).unwrap(),
        Message::ReportHeartbeatPulse(ReportHeartbeatPulse)
    );
    assert_eq!(b[1].0.sequence, 7);
}

#[test]
fn third_party_broadcast_query_identification() {
    let (h, m) = one(&hex(
        "02 00 11 00 09 ff ff ff ff 02 01 e8 03 00 2b 02 04 00",
    ));
    assert_eq!(h.broadcast, Broadcast::Global);
    assert_eq!(h.priority, Priority::Standard);
    assert_eq!(h.destination, JausId::BROADCAST);
    assert_eq!(h.source, JausId::new(1000, 1, 2));
    assert_eq!(h.sequence, 4);
    assert_eq!(
        m,
        Message::QueryIdentification(QueryIdentification {
            query_type: QueryType::Subsystem
        })
    );
}

#[test]
fn third_party_set_local_waypoint_is_unknown_but_kept_and_scales_as_documented() {
    let bytes = hex("0d 04 00 dc 46 03 80 00 00 00 80");
    let m = Message::parse(&bytes).unwrap();
    let Message::Unknown { id, body } = &m else {
        panic!("0x040D is not a message we decode: {m:?}");
    };
    assert_eq!(*id, 0x040D);
    assert_eq!(m.emit().unwrap(), bytes);
    let s = Scale::new(-100_000.0, 100_000.0, 4);
    let x = u32::from_le_bytes([body[1], body[2], body[3], body[4]]);
    let y = u32::from_le_bytes([body[5], body[6], body[7], body[8]]);
    assert!((s.decode(x) - 10.000_006_3).abs() < 1e-6);
    assert!((s.decode(y) - 2.3e-5).abs() < 1e-6);
}

#[test]
fn ours_query_manipulator_specifications_both_parts() {
    let (h, m) = one(&hex(
        "02 00 11 00 01 0a 01 7e 00 14 01 7e 00 00 26 03 01 00",
    ));
    assert_eq!((h.destination, h.source, h.sequence), (S, C, 1));
    assert_eq!(
        m,
        Message::QueryManipulatorSpecifications(QueryManipulatorSpecifications {
            presence_vector: 3
        })
    );
}

#[test]
fn ours_report_joint_positions_two_revolute() {
    let bytes =
        hex("02 00 1b 00 01 14 01 7e 00 0a 01 7e 00 02 46 02 01 0d e6 8b 82 01 e4 33 e8 7a 07 00");
    let (_, m) = one(&bytes);
    let Message::ReportJointPositions(r) = &m else {
        panic!("{m:?}")
    };
    let lsb = scales::JOINT_POSITION_RAD.lsb();
    assert_eq!(r.joint_positions.len(), 2);
    assert!((r.joint_positions[0].value - 0.5).abs() <= lsb);
    assert!((r.joint_positions[1].value + 1.0).abs() <= lsb);
    // Built from the SI values, our encoder writes exactly these bytes.
    let built = Message::from(ReportJointPositions {
        joint_positions: vec![JointValue::revolute(0.5), JointValue::revolute(-1.0)],
    });
    let mut w = DatagramWriter::new();
    w.push(&Header::new(C, S, 7), &built.emit().unwrap())
        .unwrap();
    assert_eq!(w.finish(), bytes);
}

#[test]
fn ours_create_event_ten_hertz_joint_positions() {
    let bytes =
        hex("02 00 1a 00 01 0a 01 7e 00 14 01 7e 00 f0 01 01 00 58 02 02 00 00 00 02 26 02 00");
    let (_, m) = one(&bytes);
    let built = Message::from(CreateEvent {
        request_id: 1,
        event_type: EventType::Periodic,
        requested_periodic_rate: 10.0,
        query_message: EmbeddedMessage::new(&QueryJointPositions.into()).unwrap(),
    });
    let mut w = DatagramWriter::new();
    w.push(&Header::new(S, C, 2), &built.emit().unwrap())
        .unwrap();
    assert_eq!(w.finish(), bytes);
    let Message::CreateEvent(c) = m else { panic!() };
    // 600 on the wire reads back as 9.9977 Hz.
    assert!((c.requested_periodic_rate - 9.997_711).abs() < 1e-5);
}

#[test]
fn ours_set_joint_positions_body() {
    let bytes = hex("02 06 02 01 06 f3 45 81 01 1b cc 17 85");
    let built = Message::from(SetJointPositions {
        joint_positions: vec![JointValue::revolute(0.25), JointValue::revolute(1.0)],
    });
    assert_eq!(built.emit().unwrap(), bytes);
    let Message::SetJointPositions(p) = Message::parse(&bytes).unwrap() else {
        panic!()
    };
    assert!((p.joint_positions[0].value - 0.25).abs() <= scales::JOINT_POSITION_RAD.lsb());
}

/// A revolute and a prismatic joint's profile: 0.5 rad/s, 1 and 2 rad/s²; 0.1 m/s, 0.5 and
/// 1 m/s².
fn two_joint_profile() -> Vec<JointMotionProfile> {
    vec![
        JointMotionProfile {
            joint_type: JointKind::Revolute,
            max_speed: 0.5,
            max_acceleration: 1.0,
            max_deceleration: 2.0,
        },
        JointMotionProfile {
            joint_type: JointKind::Prismatic,
            max_speed: 0.1,
            max_acceleration: 0.5,
            max_deceleration: 1.0,
        },
    ]
}

#[test]
fn ours_set_joint_motion_profile_body_follows_the_reference_layout() {
    // §6.3 0x0607: u8 count; per joint a u8 variant tag (0 revolute, 1 prismatic) then
    // JointMaxSpeed, JointMaxAccelerationRate, JointMaxDecelerationRate as u32 over
    // 0..10π (revolute) or 0..5 m/s and 0..20 m/s² (prismatic), round half up.
    let bytes = hex("07 06 02 \
         00 b0 09 13 04 5f 13 26 08 be 26 4c 10 \
         01 52 b8 1e 05 66 66 66 06 cd cc cc 0c");
    let built = Message::from(SetJointMotionProfile {
        joint_motion_profiles: two_joint_profile(),
    });
    assert_eq!(built.emit().unwrap(), bytes);
    // The same body in the OpenJAUS dialect: a variant tag, not a unit code, so no change.
    assert_eq!(
        built.emit_with(jaus_ocu::jaus::Dialect::OpenJaus).unwrap(),
        bytes
    );
    let Message::SetJointMotionProfile(p) = Message::parse(&bytes).unwrap() else {
        panic!()
    };
    for (got, sent) in p.joint_motion_profiles.iter().zip(two_joint_profile()) {
        assert_eq!(got.joint_type, sent.joint_type);
        let (speed, rate) = JointMotionProfile::scales(sent.joint_type);
        assert!((got.max_speed - sent.max_speed).abs() <= speed.lsb());
        assert!((got.max_acceleration - sent.max_acceleration).abs() <= rate.lsb());
        assert!((got.max_deceleration - sent.max_deceleration).abs() <= rate.lsb());
    }
    // The report has the same layout under its own ID.
    let mut report = bytes.clone();
    report[1] = 0x46;
    let Message::ReportJointMotionProfile(r) = Message::parse(&report).unwrap() else {
        panic!()
    };
    assert_eq!(r.joint_motion_profiles, p.joint_motion_profiles);
}

#[test]
fn motion_profile_errors_name_the_field_and_offset() {
    // Tag 2 names no alternative: its length is unknowable.
    let e = Message::parse(&hex("07 06 01 02 00 00 00 00 00 00 00 00 00 00 00 00")).unwrap_err();
    assert_eq!((e.field, e.offset), ("JointType", 3));
    assert_eq!(e.kind, DecodeErrorKind::BadVariantTag(2));
    // A count of two with one entry's bytes.
    let e = Message::parse(&hex("07 06 02 00 b0 09 13 04 5f 13 26 08 be 26 4c 10")).unwrap_err();
    assert_eq!((e.field, e.offset), ("JointMotionProfileList", 3));
    assert!(matches!(
        e.kind,
        DecodeErrorKind::Truncated {
            needed: 26,
            available: 13
        }
    ));
    // A negative speed or a prismatic rate past 20 m/s² is not sent.
    let mut profile = two_joint_profile();
    profile[0].max_speed = -0.1;
    let e = Message::from(SetJointMotionProfile {
        joint_motion_profiles: profile,
    })
    .emit()
    .unwrap_err();
    assert_eq!(e.field, "JointMaxSpeed");
    let mut profile = two_joint_profile();
    profile[1].max_deceleration = 25.0;
    let e = Message::from(ReportJointMotionProfile {
        joint_motion_profiles: profile,
    })
    .emit()
    .unwrap_err();
    assert_eq!(e.field, "JointMaxDecelerationRate");
}

#[test]
fn ours_commanded_joint_velocity_query_and_report_bodies() {
    // §6.3 0x2611 has no body; 0x4611 is SetJointVelocity's list: u8 count, then per joint a
    // type-and-units code (JSIDL 1 rad/s, 2 m/s) and a u32 over ±10π rad/s or ±5 m/s.
    assert_eq!(
        Message::from(QueryCommandedJointVelocity).emit().unwrap(),
        hex("11 26")
    );
    assert_eq!(
        Message::from(QueryJointMotionProfile).emit().unwrap(),
        hex("07 26")
    );
    let bytes = hex("11 46 02 01 6b c2 04 81 02 eb 51 b8 7e");
    let built = Message::from(ReportCommandedJointVelocity {
        joint_velocities: vec![JointValue::revolute(0.25), JointValue::prismatic(-0.05)],
    });
    assert_eq!(built.emit().unwrap(), bytes);
    let Message::ReportCommandedJointVelocity(v) = Message::parse(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!(v.joint_velocities[1].joint_type, JointKind::Prismatic);
    assert!((v.joint_velocities[0].value - 0.25).abs() <= scales::JOINT_VELOCITY_RAD.lsb());
    assert!((v.joint_velocities[1].value + 0.05).abs() <= scales::JOINT_VELOCITY_M.lsb());
}

/// The twist of the end-effector velocity vectors: 0.1, 0, −0.2 rad/s; 0.05, −0.1, 0 m/s.
fn twist() -> EndEffectorVelocity {
    EndEffectorVelocity {
        angular: [0.1, 0.0, -0.2],
        linear: [0.05, -0.1, 0.0],
    }
}

#[test]
fn ours_set_end_effector_velocity_state_body_follows_the_reference_layout() {
    // §6.3 0x0612: angular X, Y, Z as u32 over ±20π rad/s, then linear X, Y, Z as u32 over
    // ±10 m/s, round half up (zero is 0x80000000); no presence vector, no frame field.
    let body = "e2 26 34 80 00 00 00 80 3b b2 97 7f 0a d7 a3 80 eb 51 b8 7e 00 00 00 80";
    let bytes = hex(&format!("12 06 {body}"));
    let built = Message::from(SetEndEffectorVelocityState { velocity: twist() });
    assert_eq!(built.emit().unwrap(), bytes);
    // No unit codes: the OpenJAUS dialect writes the same bytes.
    assert_eq!(
        built.emit_with(jaus_ocu::jaus::Dialect::OpenJaus).unwrap(),
        bytes
    );
    let Message::SetEndEffectorVelocityState(s) = Message::parse(&bytes).unwrap() else {
        panic!()
    };
    let sent = twist();
    for (got, want) in s.velocity.angular.iter().zip(sent.angular) {
        assert!((got - want).abs() <= scales::EE_ANGULAR_VELOCITY.lsb());
    }
    for (got, want) in s.velocity.linear.iter().zip(sent.linear) {
        assert!((got - want).abs() <= scales::EE_LINEAR_VELOCITY.lsb());
    }
    // The commanded echo and the sensor's report have the same layout under their own IDs.
    let echo = hex(&format!("12 46 {body}"));
    let Message::ReportCommandedEndEffectorVelocityState(e) = Message::parse(&echo).unwrap() else {
        panic!()
    };
    assert_eq!(e.velocity, s.velocity);
    let actual = hex(&format!("16 46 {body}"));
    let Message::ReportEndEffectorVelocityState(a) = Message::parse(&actual).unwrap() else {
        panic!()
    };
    assert_eq!(a.velocity, s.velocity);
    assert_eq!(
        Message::from(ReportEndEffectorVelocityState { velocity: twist() })
            .emit()
            .unwrap(),
        actual
    );
    // Both queries have no body.
    assert_eq!(
        Message::from(QueryCommandedEndEffectorVelocityState)
            .emit()
            .unwrap(),
        hex("12 26")
    );
    assert_eq!(
        Message::from(QueryEndEffectorVelocityState).emit().unwrap(),
        hex("16 26")
    );
}

#[test]
fn end_effector_velocity_errors_name_the_field_and_offset() {
    // Five of the six u32s: the sixth, linear Z, is missing at offset 22.
    let e = Message::parse(&hex(
        "12 06 e2 26 34 80 00 00 00 80 3b b2 97 7f 0a d7 a3 80 eb 51 b8 7e",
    ))
    .unwrap_err();
    assert_eq!((e.field, e.offset), ("LinearVelocityComponentZ", 22));
    assert!(matches!(
        e.kind,
        DecodeErrorKind::Truncated {
            needed: 4,
            available: 0
        }
    ));
    // 11 m/s and 21π rad/s are past the ranges and not sent.
    let mut fast = twist();
    fast.linear[1] = 11.0;
    let e = Message::from(SetEndEffectorVelocityState { velocity: fast })
        .emit()
        .unwrap_err();
    assert_eq!(e.field, "LinearVelocityComponentY");
    let mut spin = twist();
    spin.angular[2] = 21.0 * std::f64::consts::PI;
    let e = Message::from(ReportCommandedEndEffectorVelocityState { velocity: spin })
        .emit()
        .unwrap_err();
    assert_eq!(e.field, "AngularVelocityComponentZ");
}

#[test]
fn ours_end_effector_force_torque_body() {
    let bytes =
        hex("99 d9 3f 93 18 04 80 57 04 ff 7f 39 25 20 80 18 02 00 80 ce fb ff 7f 63 08 00 80");
    let built = Message::from(ReportManipulatorEndEffectorForceTorque::full(
        [12.5, -3.0, 98.1],
        [0.25, -0.5, 1.0],
    ));
    assert_eq!(built.emit().unwrap(), bytes);
    let Message::ReportManipulatorEndEffectorForceTorque(ft) = Message::parse(&bytes).unwrap()
    else {
        panic!()
    };
    assert!((ft.force_z.unwrap() - 98.1).abs() <= scales::IOP_FORCE.lsb());
    assert!((ft.torque_y.unwrap() + 0.5).abs() <= scales::IOP_TORQUE.lsb());
}

#[test]
fn preset_pose_command_example_body() {
    // §7.2: go to pose 3 with request 0x11.
    let m = Message::from(SetCurrentPose {
        request_id: 0x11,
        pose_id: 3,
    });
    assert_eq!(m.emit().unwrap(), hex("03 f0 11 03"));
}

#[test]
fn header_view_setters_write_every_byte() {
    // Emit into a buffer pre-filled with 0xa5 so an unwritten byte would show.
    let mut buf = [0xa5u8; 17];
    let mut b = Block::new_unchecked(&mut buf[..]);
    b.set_type_hc(0);
    b.set_data_size(17);
    b.set_flags(0x19);
    b.set_destination(S);
    b.set_source(C);
    b.payload_mut().copy_from_slice(&[0x0d, 0x00, 0xc8]);
    b.set_sequence(1);
    assert_eq!(
        buf.to_vec(),
        hex("00 11 00 19 0a 01 7e 00 14 01 7e 00 0d 00 c8 01 00")
    );
}
