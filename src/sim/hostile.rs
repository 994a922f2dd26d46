//! A bounded hostile sender, for proving that untrusted senders cannot take the OCU down or
//! rewrite an arm (issue 29). JAUS has no authentication: anyone who can reach the OCU's
//! port can claim any JAUS ID. [`Hostile`] makes the datagrams such a sender would: garbage,
//! broken JUDP framing, discovery floods from made-up IDs, facts about the real arm carrying
//! its ID from another address, multi-packet messages that never complete, and datagrams
//! carrying the OCU's own ID.
//!
//! Pure and seeded ([`Rng`]): equal seeds give equal datagrams, so a failure found by
//! `jaus-ocu flood --seed N` is found again with the same seed. Every datagram is built with
//! our own codec (a malformed one is a well-formed one cut or bent on purpose) and is at
//! most [`MAX_DATAGRAM`] bytes, the largest UDP payload over IPv4. Sending is the caller's
//! (`cli::flood`, loopback only).

use std::fmt;

use crate::jaus::core::{
    ComponentServices, ConfirmControl, ConfirmControlCode, Event, IdentificationType, NodeServices,
    QueryIdentification, QueryType, ReportControl, ReportHeartbeatPulse, ReportIdentification,
    ReportServices, ServiceRec,
};
use crate::jaus::judp::{
    self, AckNak, BLOCK_OVERHEAD, Broadcast, DataFlags, DatagramWriter, Header, Priority,
};
use crate::jaus::manipulator::{
    FirstJointParameters, JointSpecification, JointValue, ReportJointPositions,
    ReportManipulatorSpecifications, RevoluteJoint1, RevoluteJointSpecification,
};
use crate::jaus::{EmbeddedMessage, EncodeError, JausId, Message};
use crate::net::rng::Rng;

/// The largest datagram made: the largest UDP payload over IPv4 (65,535 − 8 − 20 bytes), so
/// every one can be sent as it is, and under 64 KiB.
pub const MAX_DATAGRAM: usize = 65_507;

/// Joints in a spoofed specification: one more than any real arm has, the most the list can
/// carry (`JointSpecificationList` is counted by a u8, plus joint 1).
pub const SPOOFED_JOINTS: usize = 255;

/// Services listed for each made-up component of a [`Kind::ServicesFlood`].
pub const SERVICES_PER_COMPONENT: usize = 20;

/// The manipulator service a flooded component claims now and then, so that the OCU would
/// try to follow it (it decides on this URI).
const MANIPULATOR_URI: &str = "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor";

/// What a hostile datagram tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Random bytes, mostly under 1500, now and then up to [`MAX_DATAGRAM`]; half of them
    /// start with the JUDP version byte so they reach the block parser.
    RandomBytes,
    /// The version byte and fewer than the 14 bytes of a block header.
    TruncatedHeader,
    /// A block whose data size is larger than the datagram (or smaller than a header),
    /// sometimes after a valid block.
    OversizedHeader,
    /// A valid block behind another version byte (or the legacy `JAUS01.0` framing).
    WrongVersion,
    /// `ReportServices` from a made-up ID listing 255 nodes or 255 components with
    /// [`SERVICES_PER_COMPONENT`] services each, some claiming to be manipulators.
    ServicesFlood,
    /// `ReportIdentification` from a made-up ID, with up to 255 bytes of text.
    IdentificationFlood,
    /// `ReportIdentification` carrying the real arm's ID, naming it something else.
    SpoofedIdentification,
    /// `ReportManipulatorSpecifications` with [`SPOOFED_JOINTS`] joints carrying the real
    /// arm's ID.
    SpoofedSpecification,
    /// `ReportJointPositions` carrying the real arm's ID (1 to 255 joints).
    SpoofedPositions,
    /// An `Event` wrapping `ReportJointPositions`, carrying the real arm's ID.
    SpoofedEvent,
    /// `ConfirmControl` (accepted) or `ReportControl` naming the OCU, carrying the real arm's
    /// ID: a control answer for a request the OCU never sent.
    SpoofedControl,
    /// First and middle blocks of a multi-packet message whose last block never comes, each
    /// under a new sequence number and, half the time, a made-up source.
    StrayFragment,
    /// `QueryIdentification`, `ReportControl`, `ConfirmControl` or `ReportHeartbeatPulse`
    /// carrying the OCU's own ID as source, from the sender's (a stranger's) address.
    SameIdStranger,
}

impl Kind {
    /// Every kind, in the order [`Hostile::next_datagram`] makes them.
    pub const ALL: [Kind; 13] = [
        Kind::RandomBytes,
        Kind::SpoofedSpecification,
        Kind::TruncatedHeader,
        Kind::ServicesFlood,
        Kind::OversizedHeader,
        Kind::SpoofedPositions,
        Kind::WrongVersion,
        Kind::IdentificationFlood,
        Kind::SpoofedEvent,
        Kind::StrayFragment,
        Kind::SpoofedIdentification,
        Kind::SameIdStranger,
        Kind::SpoofedControl,
    ];

    /// The kind's name in `flood`'s summary and JSON (`snake_case`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::RandomBytes => "random_bytes",
            Kind::TruncatedHeader => "truncated_header",
            Kind::OversizedHeader => "oversized_header",
            Kind::WrongVersion => "wrong_version",
            Kind::ServicesFlood => "services_flood",
            Kind::IdentificationFlood => "identification_flood",
            Kind::SpoofedIdentification => "spoofed_identification",
            Kind::SpoofedSpecification => "spoofed_specification",
            Kind::SpoofedPositions => "spoofed_positions",
            Kind::SpoofedEvent => "spoofed_event",
            Kind::SpoofedControl => "spoofed_control",
            Kind::StrayFragment => "stray_fragment",
            Kind::SameIdStranger => "same_id_stranger",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The generator: seeded, pure, endless (an [`Iterator`] of `(Kind, datagram)`); the kinds
/// come in the rotation of [`Kind::ALL`].
#[derive(Debug, Clone)]
pub struct Hostile {
    rng: Rng,
    arm: JausId,
    ocus: Vec<JausId>,
    /// The OCU this datagram is aimed at (one of `ocus`, picked per datagram).
    ocu: JausId,
    made: u64,
}

impl Hostile {
    /// A generator from `seed`, spoofing the arm `arm` and the OCUs `ocus` (each datagram
    /// aimed at one of them, or at every component; with none, at made-up OCUs).
    pub fn new(seed: u64, arm: JausId, ocus: &[JausId]) -> Self {
        Self {
            rng: Rng::new(seed),
            arm,
            ocus: ocus.to_vec(),
            ocu: JausId::BROADCAST,
            made: 0,
        }
    }

    /// The next datagram in the rotation, with its kind.
    pub fn next_datagram(&mut self) -> (Kind, Vec<u8>) {
        let kind = Kind::ALL[(self.made % Kind::ALL.len() as u64) as usize];
        self.made += 1;
        (kind, self.datagram(kind))
    }

    /// One datagram of `kind`.
    pub fn datagram(&mut self, kind: Kind) -> Vec<u8> {
        // Every value below is within its field's range, so encoding does not fail; should it
        // ever, the datagram is garbage instead, which is hostile too.
        match self.try_datagram(kind) {
            Ok(d) if d.len() <= MAX_DATAGRAM => d,
            _ => self.random_bytes(),
        }
    }

    fn try_datagram(&mut self, kind: Kind) -> Result<Vec<u8>, EncodeError> {
        self.ocu = if self.ocus.is_empty() {
            self.stranger()
        } else {
            let i = self.below(self.ocus.len());
            self.ocus[i]
        };
        match kind {
            Kind::RandomBytes => Ok(self.random_bytes()),
            Kind::TruncatedHeader => self.truncated_header(),
            Kind::OversizedHeader => self.oversized_header(),
            Kind::WrongVersion => self.wrong_version(),
            Kind::ServicesFlood => self.services_flood(),
            Kind::IdentificationFlood => {
                let from = self.stranger();
                let text = self.text(0, 255);
                self.identification(from, text)
            }
            Kind::SpoofedIdentification => {
                let text = format!("SPOOFED {}", self.text(1, 40));
                self.identification(self.arm, text)
            }
            Kind::SpoofedSpecification => {
                let spec = spoofed_specification(&mut self.rng);
                self.message(
                    self.arm,
                    &Message::ReportManipulatorSpecifications(Box::new(spec)),
                )
            }
            Kind::SpoofedPositions => {
                let n = self.below(SPOOFED_JOINTS) + 1;
                let m = Message::ReportJointPositions(self.positions(n));
                self.message(self.arm, &m)
            }
            Kind::SpoofedEvent => {
                let inner = Message::ReportJointPositions(self.positions(SPOOFED_JOINTS));
                let event = Event {
                    event_id: self.rng.next_u64() as u8,
                    sequence_number: self.rng.next_u64() as u8,
                    report_message: EmbeddedMessage::new(&inner)?,
                };
                self.message(self.arm, &Message::Event(event))
            }
            Kind::SpoofedControl => {
                let m = if self.rng.chance(0.5) {
                    Message::ConfirmControl(ConfirmControl {
                        response_code: ConfirmControlCode::ControlAccepted,
                    })
                } else {
                    self.report_control_naming_the_ocu()
                };
                self.message(self.arm, &m)
            }
            Kind::StrayFragment => self.stray_fragment(),
            Kind::SameIdStranger => {
                let m = match self.below(4) {
                    0 => Message::QueryIdentification(QueryIdentification {
                        query_type: QueryType::Component,
                    }),
                    1 => self.report_control_naming_the_ocu(),
                    2 => Message::ConfirmControl(ConfirmControl {
                        response_code: ConfirmControlCode::ControlAccepted,
                    }),
                    _ => Message::ReportHeartbeatPulse(ReportHeartbeatPulse),
                };
                self.message(self.ocu, &m)
            }
        }
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    /// A valid JAUS ID that is neither the arm's nor an OCU's.
    fn stranger(&mut self) -> JausId {
        loop {
            let id = JausId::new(
                1 + (self.rng.next_u64() % 65_534) as u16,
                1 + self.below(254) as u8,
                1 + self.below(254) as u8,
            );
            if id != self.arm && !self.ocus.contains(&id) {
                return id;
            }
        }
    }

    /// Printable text of `min..=max` bytes.
    fn text(&mut self, min: usize, max: usize) -> String {
        let n = min + self.below(max - min + 1);
        (0..n)
            .map(|_| char::from(b' ' + self.below(95) as u8))
            .collect()
    }

    fn random_bytes(&mut self) -> Vec<u8> {
        let len = if self.below(16) == 0 {
            1 + self.below(MAX_DATAGRAM)
        } else {
            1 + self.below(1500)
        };
        let mut out: Vec<u8> = (0..len).map(|_| self.rng.next_u64() as u8).collect();
        if self.rng.chance(0.5) {
            out[0] = judp::VERSION;
        }
        out
    }

    /// A header from `source` to the OCU (or every component), with a random sequence number
    /// (never a duplicate by accident), priority and, now and then, an ACK request.
    fn header(&mut self, source: JausId) -> Header {
        let broadcast = self.rng.chance(0.5);
        Header {
            priority: Priority::from_raw(self.below(4) as u8),
            broadcast: if broadcast {
                Broadcast::Global
            } else {
                Broadcast::None
            },
            ack_nak: if self.below(4) == 0 {
                AckNak::Request
            } else {
                AckNak::None
            },
            data_flags: DataFlags::Single,
            destination: if broadcast {
                JausId::BROADCAST
            } else {
                self.ocu
            },
            source,
            sequence: self.rng.next_u64() as u16,
        }
    }

    /// One datagram of one block carrying `m` from `source`.
    fn message(&mut self, source: JausId, m: &Message) -> Result<Vec<u8>, EncodeError> {
        let header = self.header(source);
        judp::single(&header, &m.emit()?)
    }

    fn identification(&mut self, source: JausId, text: String) -> Result<Vec<u8>, EncodeError> {
        let m = Message::ReportIdentification(ReportIdentification {
            query_type: QueryType::Component,
            kind: IdentificationType::from_raw(self.rng.next_u64() as u16),
            identification: text,
        });
        self.message(source, &m)
    }

    fn report_control_naming_the_ocu(&mut self) -> Message {
        Message::ReportControl(ReportControl {
            subsystem_id: self.ocu.subsystem,
            node_id: self.ocu.node,
            component_id: self.ocu.component,
            authority_code: self.rng.next_u64() as u8,
        })
    }

    /// Joint positions of `n` revolute joints, anywhere in the field's range.
    fn positions(&mut self, n: usize) -> ReportJointPositions {
        let range = 8.0 * std::f64::consts::PI;
        ReportJointPositions {
            joint_positions: (0..n)
                .map(|_| JointValue::revolute((self.rng.uniform() * 2.0 - 1.0) * range * 0.99))
                .collect(),
        }
    }

    /// A valid block, as the tail of a malformed datagram.
    fn valid_block(&mut self) -> Result<Vec<u8>, EncodeError> {
        let header = self.header(self.arm);
        let mut block = Vec::new();
        header.emit(
            &Message::QueryIdentification(QueryIdentification {
                query_type: QueryType::Component,
            })
            .emit()?,
            &mut block,
        )?;
        Ok(block)
    }

    fn truncated_header(&mut self) -> Result<Vec<u8>, EncodeError> {
        let block = self.valid_block()?;
        let keep = self.below(BLOCK_OVERHEAD - 2);
        let mut out = vec![judp::VERSION];
        out.extend_from_slice(&block[..keep]);
        Ok(out)
    }

    fn oversized_header(&mut self) -> Result<Vec<u8>, EncodeError> {
        let mut out = vec![judp::VERSION];
        if self.rng.chance(0.5) {
            out.extend(self.valid_block()?);
        }
        let at = out.len();
        out.extend(self.valid_block()?);
        let real = out.len() - at;
        let size: u16 = match self.below(3) {
            // Larger than the datagram, by a little or by everything.
            0 => (real + 1 + self.below(64)) as u16,
            1 => u16::MAX,
            // Smaller than a block header.
            _ => self.below(BLOCK_OVERHEAD) as u16,
        };
        out[at + 1..at + 3].copy_from_slice(&size.to_le_bytes());
        Ok(out)
    }

    fn wrong_version(&mut self) -> Result<Vec<u8>, EncodeError> {
        let block = self.valid_block()?;
        let mut out = if self.below(8) == 0 {
            b"JAUS01.0".to_vec()
        } else {
            // Any version but ours.
            let v = (1 + self.below(255)) as u8;
            vec![if v == judp::VERSION { 0 } else { v }]
        };
        out.extend(block);
        Ok(out)
    }

    /// A service list of [`SERVICES_PER_COMPONENT`] short made-up services, the first the
    /// manipulator service one time in eight.
    fn services(&mut self) -> Vec<ServiceRec> {
        (0..SERVICES_PER_COMPONENT)
            .map(|i| {
                if i == 0 && self.below(8) == 0 {
                    ServiceRec::new(MANIPULATOR_URI, 2, 0)
                } else {
                    // One draw per name: its length (3 to 7) and letters (this is the bulk of
                    // the flood's work; a debug build sends faster for it).
                    let r = self.rng.next_u64().to_le_bytes();
                    let name: String = r[1..4 + usize::from(r[0] % 5)]
                        .iter()
                        .map(|b| char::from(b'a' + b % 26))
                        .collect();
                    ServiceRec::new(&name, r[0], 0)
                }
            })
            .collect()
    }

    fn services_flood(&mut self) -> Result<Vec<u8>, EncodeError> {
        let from = self.stranger();
        // Bytes left for the node list: the datagram, less the version byte, the block's
        // overhead, the message ID and the node count.
        let mut budget = MAX_DATAGRAM - 1 - BLOCK_OVERHEAD - 2 - 1;
        let mut nodes: Vec<NodeServices> = Vec::new();
        let one_node = self.rng.chance(0.5);
        for i in 0..255u8 {
            let services = self.services();
            let bytes: usize = 3 + services.iter().map(|s| 3 + s.uri.len()).sum::<usize>();
            let node_bytes = if one_node && i > 0 { 0 } else { 2 };
            if bytes + node_bytes > budget {
                break;
            }
            budget -= bytes + node_bytes;
            let component = ComponentServices {
                // Component IDs 1..=255: the last is the wildcard, which a receiver must not
                // take for a component.
                component_id: if one_node { i + 1 } else { from.component },
                instance_id: 0,
                services,
            };
            if one_node && i > 0 {
                if let Some(n) = nodes.last_mut() {
                    n.components.push(component);
                }
            } else {
                nodes.push(NodeServices {
                    node_id: if one_node { from.node } else { i + 1 },
                    components: vec![component],
                });
            }
        }
        self.message(from, &Message::ReportServices(ReportServices { nodes }))
    }

    fn stray_fragment(&mut self) -> Result<Vec<u8>, EncodeError> {
        let source = if self.rng.chance(0.5) {
            self.arm
        } else {
            self.stranger()
        };
        let whole = Message::ReportManipulatorSpecifications(Box::new(spoofed_specification(
            &mut self.rng,
        )))
        .emit()?;
        let header = Header {
            ack_nak: AckNak::None,
            ..self.header(source)
        };
        let piece = 256 + self.below(judp::MAX_BLOCK_PAYLOAD - 256);
        let pieces = judp::fragment(&header, &whole, piece);
        // Never the last piece: a first block and some of the middle ones, or a middle one
        // alone (its first never came either).
        let usable = pieces.len().saturating_sub(1).max(1);
        let (from, count) = if self.rng.chance(0.5) {
            (0, 1 + self.below(usable))
        } else {
            let at = if usable > 1 {
                1 + self.below(usable - 1)
            } else {
                0
            };
            (at, 1)
        };
        let mut w = DatagramWriter::new();
        for (h, payload) in pieces.iter().skip(from).take(count) {
            if w.len() + Header::block_len(payload.len()) > MAX_DATAGRAM {
                break;
            }
            w.push(h, payload)?;
        }
        Ok(w.finish())
    }
}

impl Iterator for Hostile {
    type Item = (Kind, Vec<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_datagram())
    }
}

/// A specification of [`SPOOFED_JOINTS`] revolute joints with absurd but encodable
/// dimensions and a name each: nothing like the real arm.
fn spoofed_specification(rng: &mut Rng) -> ReportManipulatorSpecifications {
    let mut len = || (rng.uniform() * 2.0 - 1.0) * 9.9;
    let joints: Vec<JointSpecification> = (1..SPOOFED_JOINTS)
        .map(|_| {
            JointSpecification::Revolute(RevoluteJointSpecification {
                link_length: len(),
                twist_angle: 1.5,
                joint_offset: len(),
                min_value: Some(-3.0),
                max_value: Some(3.0),
                max_speed: Some(30.0),
                max_torque: Some(4999.0),
                offset_bounding_cylinder_radius: Some(9.9),
                link_length_bounding_cylinder_radius: Some(9.9),
            })
        })
        .collect();
    ReportManipulatorSpecifications {
        manipulator_coordinate_system: None,
        first_joint_parameters: FirstJointParameters::Revolute(RevoluteJoint1 {
            joint1_offset: 9.9,
            joint1_min_value: None,
            joint1_max_value: None,
            joint1_max_speed: Some(30.0),
            joint1_max_torque: Some(4999.0),
            offset_bounding_cylinder_radius: Some(9.9),
        }),
        joint_specifications: joints,
        joint_names: Some(
            (1..=SPOOFED_JOINTS)
                .map(|i| format!("spoofed{i}"))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{Hostile, Kind, MAX_DATAGRAM, SERVICES_PER_COMPONENT, SPOOFED_JOINTS};
    use crate::jaus::judp::{self, DataFlags, Datagram};
    use crate::jaus::{DecodeContext, JausId, Message};

    const ARM: JausId = JausId::new(126, 1, 10);
    const OCU: JausId = JausId::new(200, 37, 2);

    fn made(seed: u64, n: usize) -> Vec<(Kind, Vec<u8>)> {
        Hostile::new(seed, ARM, &[OCU]).take(n).collect()
    }

    /// The blocks of a datagram that parse, with their messages when single-packet.
    fn blocks(d: &[u8]) -> Vec<(judp::Header, Option<Message>)> {
        let Ok(dg) = Datagram::new_checked(d) else {
            return Vec::new();
        };
        dg.blocks()
            .map_while(Result::ok)
            .map(|b| {
                let h = judp::Header::parse(&b.block);
                let m = (h.data_flags == DataFlags::Single)
                    .then(|| Message::parse_with(b.block.payload(), &DecodeContext::NONE).ok())
                    .flatten();
                (h, m)
            })
            .collect()
    }

    #[test]
    fn every_kind_is_made_in_each_rotation() {
        let mut counts: BTreeMap<Kind, usize> = BTreeMap::new();
        for (k, _) in made(1, Kind::ALL.len() * 4) {
            *counts.entry(k).or_default() += 1;
        }
        for k in Kind::ALL {
            assert_eq!(counts.get(&k), Some(&4), "{k}");
        }
    }

    #[test]
    fn every_datagram_is_bounded_and_none_fails_to_encode() {
        for seed in 0..20 {
            let mut h = Hostile::new(seed, ARM, &[OCU]);
            for k in Kind::ALL {
                let d = h.try_datagram(k).unwrap_or_else(|e| panic!("{k}: {e}"));
                assert!(!d.is_empty() && d.len() <= MAX_DATAGRAM, "{k}: {}", d.len());
            }
        }
    }

    #[test]
    fn equal_seeds_make_equal_datagrams_and_other_seeds_others() {
        assert_eq!(made(7, 100), made(7, 100));
        assert_ne!(made(7, 100), made(8, 100));
    }

    #[test]
    fn malformed_kinds_do_not_pass_the_framing() {
        let mut h = Hostile::new(3, ARM, &[OCU]);
        for _ in 0..50 {
            for k in [Kind::TruncatedHeader, Kind::WrongVersion] {
                assert!(Datagram::new_checked(&h.datagram(k)).is_err(), "{k}");
            }
            let d = h.datagram(Kind::OversizedHeader);
            let dg = Datagram::new_checked(&d).unwrap();
            assert!(dg.blocks().any(|b| b.is_err()), "oversized: {d:?}");
        }
    }

    #[test]
    fn spoofed_facts_carry_the_arms_id_and_say_what_the_arm_never_would() {
        let mut h = Hostile::new(4, ARM, &[OCU]);
        let (header, m) = blocks(&h.datagram(Kind::SpoofedSpecification)).remove(0);
        assert_eq!(header.source, ARM);
        assert!(header.destination == OCU || header.destination == JausId::BROADCAST);
        match m {
            Some(Message::ReportManipulatorSpecifications(s)) => {
                assert_eq!(s.joint_count(), SPOOFED_JOINTS);
            }
            other => panic!("{other:?}"),
        }
        let (header, m) = blocks(&h.datagram(Kind::SpoofedEvent)).remove(0);
        assert_eq!(header.source, ARM);
        match m {
            Some(Message::Event(e)) => assert!(matches!(
                e.report_message.decode(&DecodeContext::NONE),
                Ok(Message::ReportJointPositions(p)) if p.joint_positions.len() == SPOOFED_JOINTS
            )),
            other => panic!("{other:?}"),
        }
        for _ in 0..20 {
            let (header, m) = blocks(&h.datagram(Kind::SpoofedControl)).remove(0);
            assert_eq!(header.source, ARM);
            assert!(matches!(
                m,
                Some(Message::ConfirmControl(_) | Message::ReportControl(_))
            ));
            let (header, _) = blocks(&h.datagram(Kind::SameIdStranger)).remove(0);
            assert_eq!(header.source, OCU);
        }
    }

    #[test]
    fn datagrams_posing_as_an_ocu_pose_as_each_one_given() {
        let other = JausId::new(200, 37, 1);
        let mut h = Hostile::new(9, ARM, &[OCU, other]);
        let sources: std::collections::BTreeSet<JausId> = (0..40)
            .map(|_| blocks(&h.datagram(Kind::SameIdStranger)).remove(0).0.source)
            .collect();
        assert_eq!(sources, [other, OCU].into_iter().collect());
    }

    #[test]
    fn a_services_flood_lists_255_components_of_20_services_from_a_stranger() {
        let mut h = Hostile::new(5, ARM, &[OCU]);
        for _ in 0..6 {
            let (header, m) = blocks(&h.datagram(Kind::ServicesFlood)).remove(0);
            assert!(header.source != ARM && header.source != OCU);
            let Some(Message::ReportServices(r)) = m else {
                panic!("{m:?}")
            };
            let components: Vec<_> = r.nodes.iter().flat_map(|n| &n.components).collect();
            assert_eq!(components.len(), 255);
            assert!(
                r.nodes.len() == 1 || r.nodes.len() == 255,
                "{}",
                r.nodes.len()
            );
            assert!(
                components
                    .iter()
                    .all(|c| c.services.len() == SERVICES_PER_COMPONENT)
            );
        }
    }

    #[test]
    fn stray_fragments_never_include_a_last_block() {
        let mut h = Hostile::new(6, ARM, &[OCU]);
        for _ in 0..50 {
            let b = blocks(&h.datagram(Kind::StrayFragment));
            assert!(!b.is_empty());
            for (header, _) in b {
                assert!(
                    matches!(header.data_flags, DataFlags::First | DataFlags::Middle),
                    "{header:?}"
                );
            }
        }
    }
}
