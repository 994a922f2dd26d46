//! The `robustness` suite (optional: run only when named): malformed and truncated input, one
//! kind per check. Whatever the component makes of it (dropping it is what the wire reference
//! recommends, §4.2), it must go on answering: after each, `QueryIdentification` must be
//! answered within the reply bound.
//!
//! The broken datagrams that still carry a query carry `QueryHeartbeatPulse`, so that an
//! answer to one of them is never taken for the answer to the probe that follows.

use std::io;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Facts, Options, Run};
use crate::conform::tester::{SendOptions, Tester, Wire};
use crate::jaus::core::QueryServices;
use crate::jaus::judp::{self, AckNak, DataFlags, Header};
use crate::jaus::message::ids;
use crate::net::rng::Rng;

use super::transport::{emit, query_identification, raw_evidence, raw_sequences};

/// A message ID no service we know defines.
const UNKNOWN_ID: u16 = 0x7E57;

/// Bytes of the random datagram.
const RANDOM_LEN: usize = 2048;

/// The seed of the random datagram (the same bytes every run: evidence that can be replayed).
const RANDOM_SEED: u64 = 0x4A41_5553_0000_0034;

/// One kind of broken input.
#[derive(Debug, Clone, Copy)]
enum Case {
    TruncatedHeader,
    DataSizePastEnd,
    ForeignVersion,
    LegacyFraming,
    ShortBody,
    UnknownId,
    NonZeroType,
    AckWithPayload,
    RandomBytes,
    LoneFirstFragment,
}

impl Case {
    const ALL: [Case; 10] = [
        Case::TruncatedHeader,
        Case::DataSizePastEnd,
        Case::ForeignVersion,
        Case::LegacyFraming,
        Case::ShortBody,
        Case::UnknownId,
        Case::NonZeroType,
        Case::AckWithPayload,
        Case::RandomBytes,
        Case::LoneFirstFragment,
    ];

    /// Check name, what was sent (the title's and the reason's words), reference.
    fn describe(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Case::TruncatedHeader => (
                "truncated-header",
                "a datagram cut off inside its JUDP header (5 bytes)",
                "wire reference §4.2",
            ),
            Case::DataSizePastEnd => (
                "data-size-past-end",
                "a block whose data size (512) runs past the end of its datagram",
                "wire reference §4.2",
            ),
            Case::ForeignVersion => (
                "foreign-version",
                "a datagram with transport version byte 0x01 (AS5669)",
                "wire reference §4.1",
            ),
            Case::LegacyFraming => (
                "legacy-framing",
                "a datagram in the legacy \"JAUS01.0\" framing",
                "wire reference §4.1",
            ),
            Case::ShortBody => (
                "short-body",
                "QueryServices whose NodeList count (3) is larger than its bytes (one node)",
                "wire reference §8.4",
            ),
            Case::UnknownId => (
                "unknown-message-id",
                "a message with an ID no service defines (0x7E57)",
                "wire reference §4.2",
            ),
            Case::NonZeroType => (
                "non-zero-type",
                "a block with type/HC byte 0x04 (OpenJAUS's configuration wrapper)",
                "wire reference §4.2",
            ),
            Case::AckWithPayload => (
                "ack-with-payload",
                "an ACK block that carries a payload",
                "wire reference §4.4, §9 C11",
            ),
            Case::RandomBytes => (
                "random-bytes",
                "2 KiB of random bytes",
                "wire reference §4.2",
            ),
            Case::LoneFirstFragment => (
                "lone-first-fragment",
                "the first fragment of a message whose other fragments never come",
                "wire reference §4.6",
            ),
        }
    }
}

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    for case in Case::ALL {
        let (name, what, reference) = case.describe();
        r.check(
            name,
            format!("The component goes on answering after {what}"),
            reference,
            move |t, facts, opts| robust(t, facts, opts, case),
        );
    }
}

/// A single-block datagram of `QueryHeartbeatPulse` to the target under a sequence number of
/// its own.
fn heartbeat_block<W: Wire>(t: &Tester<W>, header: impl FnOnce(Header) -> Header) -> Vec<u8> {
    let seq = raw_sequences(t, 1)[0];
    let payload = ids::QueryHeartbeatPulse.to_le_bytes();
    let mut w = judp::DatagramWriter::new();
    // A header and a 2-byte payload always frame.
    if w.push(&header(Header::new(t.target, t.me, seq)), &payload)
        .is_err()
    {
        return Vec::new();
    }
    w.finish()
}

/// Sends the broken input of `case`; returns its frames as evidence.
fn send_case<W: Wire>(t: &mut Tester<W>, case: Case) -> io::Result<Vec<Evidence>> {
    let (_, what, _) = case.describe();
    let addr = t.addr;
    let raw = |t: &mut Tester<W>, bytes: &[u8]| -> io::Result<Vec<Evidence>> {
        let frame = t.send_raw(addr, bytes)?;
        Ok(vec![raw_evidence(frame, None, what)])
    };
    match case {
        Case::TruncatedHeader => {
            let mut bytes = heartbeat_block(t, |h| h);
            bytes.truncate(5);
            raw(t, &bytes)
        }
        Case::DataSizePastEnd => {
            let mut bytes = heartbeat_block(t, |h| h);
            bytes[2..4].copy_from_slice(&512u16.to_le_bytes());
            raw(t, &bytes)
        }
        Case::ForeignVersion => {
            let mut bytes = heartbeat_block(t, |h| h);
            bytes[0] = 0x01;
            raw(t, &bytes)
        }
        Case::LegacyFraming => {
            let mut bytes = b"JAUS01.0".to_vec();
            bytes.extend_from_slice(&heartbeat_block(t, |h| h)[1..]);
            raw(t, &bytes)
        }
        Case::NonZeroType => {
            let mut bytes = heartbeat_block(t, |h| h);
            bytes[1] = 0x04;
            raw(t, &bytes)
        }
        Case::AckWithPayload => {
            let bytes = heartbeat_block(t, |h| Header {
                ack_nak: AckNak::Ack,
                ..h
            });
            raw(t, &bytes)
        }
        Case::RandomBytes => {
            let mut rng = Rng::new(RANDOM_SEED);
            let bytes: Vec<u8> = (0..RANDOM_LEN / 8)
                .flat_map(|_| rng.next_u64().to_le_bytes())
                .collect();
            raw(t, &bytes)
        }
        Case::LoneFirstFragment => {
            let whole = emit(&QueryServices::all().into())?;
            let header = Header {
                data_flags: DataFlags::First,
                ..Header::new(t.target, t.me, raw_sequences(t, 1)[0])
            };
            let framed = judp::single(&header, &whole[..whole.len() / 2])
                .map_err(|e| io::Error::other(format!("framing a block: {e}")))?;
            let frame = t.send_raw(addr, &framed)?;
            Ok(vec![raw_evidence(
                frame,
                Some(ids::QueryServices),
                "QueryServices, first fragment only",
            )])
        }
        Case::ShortBody => {
            let payload = short_query_services();
            let sent = t.send_payload(&payload, &SendOptions::default())?;
            Ok(vec![raw_evidence(
                sent.first_frame,
                Some(ids::QueryServices),
                "QueryServices cut short",
            )])
        }
        Case::UnknownId => {
            let mut payload = UNKNOWN_ID.to_le_bytes().to_vec();
            payload.extend_from_slice(&[1, 2, 3, 4]);
            let sent = t.send_payload(&payload, &SendOptions::default())?;
            Ok(vec![raw_evidence(
                sent.first_frame,
                Some(UNKNOWN_ID),
                "0x7E57 (no such message)",
            )])
        }
    }
}

/// `QueryServices` saying 3 nodes and holding one (node 255, component 255).
fn short_query_services() -> Vec<u8> {
    let mut p = ids::QueryServices.to_le_bytes().to_vec();
    p.extend_from_slice(&[3, 255, 1, 255]);
    p
}

fn robust<W: Wire>(
    t: &mut Tester<W>,
    _: &mut Facts,
    _: &Options,
    case: Case,
) -> io::Result<Outcome> {
    let (_, what, _) = case.describe();
    let q = query_identification();
    let before = t.send(&q)?;
    let Some(answer) = t.wait_message(ids::ReportIdentification)? else {
        return Ok(Outcome::not_applicable(format!(
            "the component did not answer QueryIdentification (frame {}) within {:.1} s even \
             before anything broken was sent: nothing to compare with",
            before.first_frame, t.reply_bound,
        ))
        .with([before.evidence()]));
    };
    let broken = send_case(t, case)?;
    let probe = t.send(&q)?;
    let started = t
        .frames()
        .get((probe.first_frame as usize).wrapping_sub(1))
        .map_or_else(|| t.now(), |f| f.at);
    let reply = t.wait_message(ids::ReportIdentification)?;
    let mut evidence = vec![before.evidence(), answer.evidence()];
    evidence.extend(broken);
    evidence.push(probe.evidence());
    Ok(match reply {
        Some(r) => {
            let ms = (r.at - started).max(0.0) * 1e3;
            evidence.push(r.evidence());
            Outcome::pass(format!(
                "after {what} the component still answered QueryIdentification (frame {}) \
                 within {ms:.1} ms",
                probe.first_frame
            ))
        }
        None => Outcome::fail(format!(
            "stopped answering after {what}: QueryIdentification (frame {}) got no \
             ReportIdentification within {:.1} s (it answered one just before); broken input \
             must be dropped or answered, never stop the component",
            probe.first_frame, t.reply_bound
        )),
    }
    .with(evidence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jaus::Message;
    use crate::jaus::message::message_name;

    #[test]
    fn unknown_id_is_unknown() {
        assert!(message_name(UNKNOWN_ID).is_none());
    }

    #[test]
    fn short_query_services_does_not_decode() {
        assert!(Message::parse(&short_query_services()).is_err());
    }

    #[test]
    fn case_names_are_distinct() {
        let mut names: Vec<&str> = Case::ALL.iter().map(|c| c.describe().0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Case::ALL.len());
    }
}
