//! The sans-I/O part of `jaus-ocu relay` (hidden; issue 44): a lossy two-way relay between an
//! OCU and an arm on this machine, for measuring what a radio link that loses datagrams both
//! ways does to the emergency stop.
//!
//! [`Relay::receive`] is told who sent a datagram and says where it goes and whether it is lost:
//!
//! - From the arm's address (`--to`): **down**, to the last address that sent from the OCU
//!   side; before anyone has, nowhere ([`Fate::NoOcu`]: counted, neither forwarded nor dropped).
//! - From any other address: **up**, to the arm; that address becomes the OCU side.
//! - Each direction drops with its own probability from its own seeded generator, so the
//!   decisions of one direction do not depend on how much traffic the other carried: equal
//!   seeds and equal datagram counts give equal decisions.
//!
//! [`contents`] names the JAUS messages of a datagram's blocks with the project's codec, for
//! the relay's log. The socket loop is `cli::relay`'s, over [`crate::net::link::Link`].

use std::net::SocketAddr;

use crate::jaus::Message;
use crate::jaus::judp::{AckNak, DataFlags, Datagram};
use crate::jaus::message::{ids, message_name};
use crate::net::rng::Rng;

/// Which way a datagram travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the OCU side to the arm.
    Up,
    /// From the arm to the OCU side.
    Down,
}

impl Direction {
    /// The word the log and the summary use: `up` or `down`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

/// What became of a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Sent on to [`Decision::to`].
    Forwarded,
    /// Lost on purpose (the loss probability of its direction).
    Dropped,
    /// From the arm before any datagram came from the OCU side: there is nowhere to send it.
    NoOcu,
}

impl Fate {
    /// The word the log uses: `forwarded`, `dropped` or `no_ocu`.
    pub fn name(self) -> &'static str {
        match self {
            Fate::Forwarded => "forwarded",
            Fate::Dropped => "dropped",
            Fate::NoOcu => "no_ocu",
        }
    }
}

/// The relay's answer for one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Which way it travels.
    pub direction: Direction,
    /// Forwarded, dropped, or nowhere to go.
    pub fate: Fate,
    /// Where it goes (or would have gone, when dropped); `None` only for [`Fate::NoOcu`].
    pub to: Option<SocketAddr>,
}

/// The counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Datagrams received (= forwarded + dropped + `no_ocu`).
    pub received: u64,
    /// Datagrams the relay decided to send on (including those the system then refused).
    pub forwarded: u64,
    /// Datagrams lost on purpose.
    pub dropped: u64,
    /// Datagrams from the arm before the OCU side was known (always 0 up).
    pub no_ocu: u64,
    /// Forwarded datagrams whose send the system refused ([`Relay::send_failed`]).
    pub send_errors: u64,
}

/// The loss probability of each direction, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loss {
    /// OCU → arm.
    pub up: f64,
    /// Arm → OCU.
    pub down: f64,
}

/// The lossy relay's state: who the OCU side is, the two generators, the counters.
#[derive(Debug, Clone)]
pub struct Relay {
    arm: SocketAddr,
    loss: Loss,
    up_rng: Rng,
    down_rng: Rng,
    ocu: Option<SocketAddr>,
    up: Counts,
    down: Counts,
}

impl Relay {
    /// A relay towards the arm at `arm`, losing `loss` each way, its decisions drawn from
    /// `seed`. Refuses a probability outside `[0, 1]` (or not a number), naming it.
    pub fn new(arm: SocketAddr, loss: Loss, seed: u64) -> Result<Self, String> {
        for (what, p) in [("up", loss.up), ("down", loss.down)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!(
                    "the {what} loss {p} is not a probability: give a fraction from 0 to 1"
                ));
            }
        }
        // One generator per direction, both from the seed.
        let mut seeds = Rng::new(seed);
        Ok(Self {
            arm,
            loss,
            up_rng: Rng::new(seeds.next_u64()),
            down_rng: Rng::new(seeds.next_u64()),
            ocu: None,
            up: Counts::default(),
            down: Counts::default(),
        })
    }

    /// Decides the fate of one datagram from `from` and counts it. The OCU side is the last
    /// address other than the arm's that sent anything, a dropped datagram included (the
    /// relay heard it).
    pub fn receive(&mut self, from: SocketAddr) -> Decision {
        let (direction, to) = if from == self.arm {
            (Direction::Down, self.ocu)
        } else {
            self.ocu = Some(from);
            (Direction::Up, Some(self.arm))
        };
        let (p, rng, counts) = match direction {
            Direction::Up => (self.loss.up, &mut self.up_rng, &mut self.up),
            Direction::Down => (self.loss.down, &mut self.down_rng, &mut self.down),
        };
        counts.received += 1;
        let fate = if to.is_none() {
            counts.no_ocu += 1;
            Fate::NoOcu
        } else if rng.chance(p) {
            counts.dropped += 1;
            Fate::Dropped
        } else {
            counts.forwarded += 1;
            Fate::Forwarded
        };
        Decision {
            direction,
            fate,
            to,
        }
    }

    /// Counts a forwarded datagram of `direction` that the system refused to send.
    pub fn send_failed(&mut self, direction: Direction) {
        self.counts_mut(direction).send_errors += 1;
    }

    /// The counters of `direction`.
    pub fn counts(&self, direction: Direction) -> Counts {
        match direction {
            Direction::Up => self.up,
            Direction::Down => self.down,
        }
    }

    /// The OCU side: the last address other than the arm's that sent a datagram.
    pub fn ocu(&self) -> Option<SocketAddr> {
        self.ocu
    }

    /// The arm's address (`--to`).
    pub fn arm(&self) -> SocketAddr {
        self.arm
    }

    /// The loss probabilities.
    pub fn loss(&self) -> Loss {
        self.loss
    }

    fn counts_mut(&mut self, direction: Direction) -> &mut Counts {
        match direction {
            Direction::Up => &mut self.up,
            Direction::Down => &mut self.down,
        }
    }
}

/// What a datagram carries, as far as the codec reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Contents {
    /// One name per block that framed: the message's name (`SetEmergency`), with the report
    /// an Event carries (`Event(ReportStatus)`), `Unknown 0x1234` for an ID the codec does not
    /// know, `ACK` / `NAK`, `… (first fragment)` for the start of
    /// a multi-packet message, `(fragment)` for the rest of one.
    pub messages: Vec<String>,
    /// Why the datagram, or a block of it, did not decode (the blocks before it are named).
    pub undecodable: Option<String>,
}

/// Names the messages of a JUDP datagram's blocks (no state: a fragment is named as a
/// fragment, not reassembled). Never panics, whatever the bytes.
pub fn contents(datagram: &[u8]) -> Contents {
    let mut out = Contents::default();
    let dg = match Datagram::new_checked(datagram) {
        Ok(dg) => dg,
        Err(e) => {
            out.undecodable = Some(e.to_string());
            return out;
        }
    };
    for block in dg.blocks_tolerant() {
        let block = match block {
            Ok(b) => b.block,
            Err(e) => {
                out.undecodable = Some(e.to_string());
                break;
            }
        };
        let id = block
            .payload()
            .first_chunk::<2>()
            .map(|b| u16::from_le_bytes(*b));
        let named =
            |id: u16| message_name(id).map_or_else(|| format!("Unknown 0x{id:04X}"), str::to_owned);
        let name = match (block.ack_nak(), block.data_flags(), id) {
            (AckNak::Ack, _, _) => "ACK".to_owned(),
            (AckNak::Nak, _, _) => "NAK".to_owned(),
            (_, DataFlags::Single, Some(ids::Event)) => {
                // The report an Event carries is what the receiver acts on: name it too.
                match Message::parse(block.payload()) {
                    Ok(Message::Event(e)) => e.report_message.message_id().map_or_else(
                        || "Event(empty)".to_owned(),
                        |id| format!("Event({})", named(id)),
                    ),
                    _ => "Event(undecodable)".to_owned(),
                }
            }
            (_, DataFlags::Single, Some(id)) => named(id),
            (_, DataFlags::First, Some(id)) => format!("{} (first fragment)", named(id)),
            (_, DataFlags::Middle | DataFlags::Last, _) => "(fragment)".to_owned(),
            (_, DataFlags::Single | DataFlags::First, None) => "(no message ID)".to_owned(),
            (_, DataFlags::Other(f), _) => format!("(data flags {f})"),
        };
        out.messages.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use super::*;
    use crate::jaus::JausId;
    use crate::jaus::core::{Event, ReportStatus};
    use crate::jaus::core::{QueryStatus, SetEmergency};
    use crate::jaus::judp::{DatagramWriter, Header};
    use crate::jaus::message::EmbeddedMessage;

    const ARM: SocketAddr =
        SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 4000);

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn lossless() -> Relay {
        Relay::new(ARM, Loss { up: 0.0, down: 0.0 }, 1).unwrap()
    }

    #[test]
    fn the_arms_datagrams_go_to_the_last_ocu_side_sender() {
        let mut r = lossless();
        // Nobody on the OCU side yet: nowhere to go, counted.
        let d = r.receive(ARM);
        assert_eq!(
            d,
            Decision {
                direction: Direction::Down,
                fate: Fate::NoOcu,
                to: None
            }
        );
        let d = r.receive(at(5000));
        assert_eq!(
            (d.direction, d.fate, d.to),
            (Direction::Up, Fate::Forwarded, Some(ARM))
        );
        assert_eq!(r.receive(ARM).to, Some(at(5000)));
        // Another OCU-side sender takes over the way back.
        assert_eq!(r.receive(at(5001)).to, Some(ARM));
        assert_eq!(r.receive(ARM).to, Some(at(5001)));
        assert_eq!(r.ocu(), Some(at(5001)));
        assert_eq!(
            r.counts(Direction::Down),
            Counts {
                received: 3,
                forwarded: 2,
                dropped: 0,
                no_ocu: 1,
                send_errors: 0
            }
        );
        assert_eq!(r.counts(Direction::Up).received, 2);
    }

    #[test]
    fn a_dropped_datagram_still_names_the_ocu_side() {
        let mut r = Relay::new(ARM, Loss { up: 1.0, down: 0.0 }, 3).unwrap();
        let d = r.receive(at(5000));
        assert_eq!((d.fate, d.to), (Fate::Dropped, Some(ARM)));
        assert_eq!(r.receive(ARM).to, Some(at(5000)));
        assert_eq!(r.receive(ARM).fate, Fate::Forwarded);
    }

    #[test]
    fn each_direction_drops_about_its_own_fraction() {
        let mut r = Relay::new(ARM, Loss { up: 0.4, down: 0.1 }, 44).unwrap();
        let n = 20_000;
        for _ in 0..n {
            r.receive(at(5000));
            r.receive(ARM);
        }
        for (dir, p) in [(Direction::Up, 0.4), (Direction::Down, 0.1)] {
            let c = r.counts(dir);
            assert_eq!(c.received, n);
            assert_eq!(c.forwarded + c.dropped + c.no_ocu, c.received);
            let got = c.dropped as f64 / n as f64;
            // 0.4: σ = 0.0035 over 20,000; the band is more than 5 σ.
            assert!((got - p).abs() < 0.02, "{dir:?}: dropped {got}, asked {p}");
        }
    }

    #[test]
    fn equal_seeds_equal_decisions_whatever_the_other_direction_carried() {
        let fates = |seed: u64, down_traffic: usize| {
            let mut r = Relay::new(ARM, Loss { up: 0.5, down: 0.5 }, seed).unwrap();
            (0..200)
                .map(|_| {
                    for _ in 0..down_traffic {
                        r.receive(ARM);
                    }
                    r.receive(at(5000)).fate
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(fates(7, 0), fates(7, 0));
        assert_eq!(fates(7, 0), fates(7, 3));
        assert_ne!(fates(7, 0), fates(8, 0));
    }

    #[test]
    fn no_loss_never_drops_and_full_loss_always_does() {
        let mut r = lossless();
        let mut all = Relay::new(ARM, Loss { up: 1.0, down: 1.0 }, 9).unwrap();
        for _ in 0..1000 {
            assert_eq!(r.receive(at(5000)).fate, Fate::Forwarded);
            assert_eq!(all.receive(at(5000)).fate, Fate::Dropped);
            assert_eq!(all.receive(ARM).fate, Fate::Dropped);
        }
    }

    #[test]
    fn refuses_a_loss_that_is_not_a_probability() {
        for (up, down) in [(1.5, 0.0), (0.0, -0.1), (f64::NAN, 0.0)] {
            let e = Relay::new(ARM, Loss { up, down }, 1).unwrap_err();
            assert!(e.contains("is not a probability"), "{e}");
        }
    }

    #[test]
    fn send_errors_are_counted_per_direction() {
        let mut r = lossless();
        r.receive(at(5000));
        r.send_failed(Direction::Up);
        assert_eq!(r.counts(Direction::Up).send_errors, 1);
        assert_eq!(r.counts(Direction::Down).send_errors, 0);
    }

    #[test]
    fn names_every_block_of_a_stop_with_its_status_query_and_an_ack() {
        let arm = JausId::new(126, 1, 10);
        let ocu = JausId::new(200, 1, 2);
        let mut w = DatagramWriter::new();
        let stop = Message::from(SetEmergency { emergency_code: 1 })
            .emit()
            .unwrap();
        let query = Message::from(QueryStatus).emit().unwrap();
        w.push(&Header::new(arm, ocu, 1), &stop).unwrap();
        w.push(&Header::new(arm, ocu, 2), &query).unwrap();
        w.push(&Header::new(arm, ocu, 3).ack(), &[]).unwrap();
        w.push(&Header::new(arm, ocu, 4), &0xBEEFu16.to_le_bytes())
            .unwrap();
        let status = ReportStatus {
            status: crate::jaus::core::Status::Emergency,
            reserved: 0,
        };
        let event = Message::from(Event {
            event_id: 1,
            sequence_number: 7,
            report_message: EmbeddedMessage::new(&status.into()).unwrap(),
        })
        .emit()
        .unwrap();
        w.push(&Header::new(ocu, arm, 5), &event).unwrap();
        let c = contents(&w.finish());
        assert_eq!(
            c.messages,
            [
                "SetEmergency",
                "QueryStatus",
                "ACK",
                "Unknown 0xBEEF",
                "Event(ReportStatus)"
            ]
        );
        assert_eq!(c.undecodable, None);
    }

    #[test]
    fn says_why_a_datagram_does_not_decode_and_keeps_the_blocks_before() {
        let c = contents(b"JAUS01.0 legacy");
        assert!(c.messages.is_empty());
        assert!(c.undecodable.unwrap().contains("JAUS01.0"));
        assert!(contents(&[]).undecodable.is_some());
        let arm = JausId::new(126, 1, 10);
        let ocu = JausId::new(200, 1, 2);
        let stop = Message::from(SetEmergency { emergency_code: 1 })
            .emit()
            .unwrap();
        let mut bytes = crate::jaus::judp::single(&Header::new(arm, ocu, 1), &stop).unwrap();
        bytes.extend_from_slice(&[0, 0xff]);
        let c = contents(&bytes);
        assert_eq!(c.messages, ["SetEmergency"]);
        assert!(c.undecodable.is_some());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut rng = Rng::new(5);
        for len in 0..300 {
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Some(b) = bytes.first_mut() {
                *b = 2;
            }
            let _ = contents(&bytes);
        }
    }
}
