//! The `transport` suite: JUDP as the component speaks it (wire reference §4): the header of
//! its replies, its sequence numbers, ACKs, several blocks in one datagram, multi-packet
//! messages both ways, and what it does with a repeated block.
//!
//! Every check asks `QueryIdentification` (every component answers it: Discovery is core),
//! except `fragmented-reply`, which asks the discovery queries whose answers can be large.

use std::io;

use crate::conform::check::{Evidence, Outcome};
use crate::conform::run::{Facts, Options, Run, ask};
use crate::conform::tester::{Body, Direction, Received, SendOptions, Sent, Tester, Wire};
use crate::jaus::core::{
    QueryIdentification, QueryServiceList, QueryServices, QueryType, ServiceListComponent,
    ServiceListNode, ServiceListSubsystem,
};
use crate::jaus::judp::{self, DataFlags, Datagram, Header};
use crate::jaus::manipulator::QueryManipulatorSpecifications;
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};

/// Replies the `sequence-numbers` check reads.
const SEQUENCE_SAMPLES: usize = 5;

/// Runs the suite's checks.
pub fn run<W: Wire>(r: &mut Run<'_, W>) {
    r.check(
        "header",
        "Replies are JUDP version 2 blocks: type/HC 0x00, data size = block length, source = \
         the component, destination = the tester",
        "wire reference §4.2, §4.3",
        header,
    );
    r.check(
        "sequence-numbers",
        "The component's sequence numbers advance per block",
        "wire reference §4.5, §9 C12",
        sequence_numbers,
    );
    r.check(
        "repeated-query-new-sequence",
        "The same query sent twice under new sequence numbers is answered twice",
        "wire reference §9 C12",
        repeated_query,
    );
    r.check(
        "ack-on-request",
        "A query asking for an ACK gets a header-only ACK block (same sequence number) and its \
         reply",
        "wire reference §4.4, §9 C11",
        ack_on_request,
    );
    r.check(
        "multi-block-datagram",
        "Two queries in one datagram (one version byte, two blocks) are both answered",
        "wire reference §4.6",
        multi_block_datagram,
    );
    r.check(
        "fragmented-request",
        "A query cut into 1-byte fragments is reassembled and answered, in order and reversed",
        "wire reference §4.6",
        fragmented_request,
    );
    r.check(
        "fragmented-reply",
        "A reply sent in several blocks has First/Middle/Last flags, consecutive sequence \
         numbers, and decodes once reassembled",
        "wire reference §4.6",
        fragmented_reply,
    );
    r.check(
        "duplicate-block",
        "The same block (same sequence number) sent twice is answered once",
        "wire reference §4.5",
        duplicate_block,
    );
}

/// `QueryIdentification` of the component itself.
pub(super) fn query_identification() -> Message {
    QueryIdentification {
        query_type: QueryType::Component,
    }
    .into()
}

/// Message bytes (ID and body) of `m`.
pub(super) fn emit(m: &Message) -> io::Result<Vec<u8>> {
    m.emit()
        .map_err(|e| io::Error::other(format!("encoding {}: {e}", m.name())))
}

/// `n` (at most 4) sequence numbers for blocks a check frames itself: half the counter away
/// from the tester's own numbers (so the component's duplicate window never sees them again,
/// §9 C12), and apart from every earlier such allocation of the run, because every allocation
/// is followed by at least one sent frame.
pub(super) fn raw_sequences<W: Wire>(t: &Tester<W>, n: u16) -> Vec<u16> {
    let n = n.min(4);
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the frame count wraps with the counter on purpose"
    )]
    let base = t
        .peek_sequence()
        .wrapping_add(0x8000)
        .wrapping_add((t.frame_count() as u16).wrapping_mul(4));
    (0..n).map(|i| base.wrapping_add(i)).collect()
}

/// A frame sent on purpose as it is, as evidence.
pub(super) fn raw_evidence(frame: u32, message_id: Option<u16>, what: &str) -> Evidence {
    Evidence {
        frame,
        message_id,
        what: what.into(),
    }
}

/// Whether `r` is the component's `id` message.
fn from_target(target: JausId, id: u16) -> impl Fn(&Received) -> bool {
    move |r| r.header.source == target && r.id() == Some(id)
}

/// Whether `a` and `b` are one block (a copy the network duplicated): same source, same
/// sequence number.
fn same_block(a: &Received, b: &Received) -> bool {
    a.header.source == b.header.source && a.header.sequence == b.header.sequence
}

/// Up to `n` distinct blocks `pred` accepts within `within` seconds; returns early once `n` came.
fn wait_n<W: Wire>(
    t: &mut Tester<W>,
    n: usize,
    within: f64,
    pred: impl Fn(&Received) -> bool,
) -> io::Result<Vec<Received>> {
    let deadline = t.now() + within;
    let mut got = Vec::new();
    while got.len() < n {
        let left = deadline - t.now();
        if left <= 0.0 {
            break;
        }
        match t.wait_for(left, &pred)? {
            // A copy the network duplicated (same source and sequence number) is one block.
            Some(r) if got.iter().any(|g: &Received| same_block(g, &r)) => {}
            Some(r) => got.push(r),
            None => break,
        }
    }
    Ok(got)
}

/// Datagrams received since frame `after` that did not frame as JUDP v2, as a clause.
fn malformed_since<W: Wire>(t: &Tester<W>, after: u32) -> Option<String> {
    let bad: Vec<String> = t
        .malformed
        .iter()
        .filter(|(f, _)| *f > after)
        .map(|(f, e)| format!("frame {f}: {e}"))
        .collect();
    (!bad.is_empty()).then(|| format!("; received datagrams that do not frame: {}", bad.join("; ")))
}

/// "no reply": `query` (frame N) got no `reply` within the bound.
fn no_reply<W: Wire>(t: &Tester<W>, sent: &Sent, reply: &str) -> String {
    format!(
        "{} (frame {}) got no {reply} from {} within {:.1} s{}",
        sent.evidence().what,
        sent.first_frame,
        t.target,
        t.reply_bound,
        malformed_since(t, sent.first_frame).unwrap_or_default(),
    )
}

/// What is wrong with the header of reply `r` (read from its frame's bytes); empty when
/// nothing is.
fn header_problems<W: Wire>(t: &Tester<W>, r: &Received) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(frame) = t.frames().get((r.frame as usize).wrapping_sub(1)) else {
        return vec![format!("frame {} is not in the capture", r.frame)];
    };
    let bytes = &frame.bytes;
    let name = r.evidence().what;
    if bytes.first() != Some(&judp::VERSION) {
        problems.push(format!(
            "frame {} ({name}) starts with version byte 0x{:02X}, not 0x02",
            r.frame,
            bytes.first().copied().unwrap_or(0)
        ));
    }
    // Walk the blocks by their data sizes: together they must cover the datagram exactly.
    let mut pos = 1;
    let mut overrun = false;
    while pos + judp::BLOCK_OVERHEAD <= bytes.len() {
        let type_hc = bytes[pos];
        let size = usize::from(u16::from_le_bytes([bytes[pos + 1], bytes[pos + 2]]));
        if type_hc != 0 {
            problems.push(format!(
                "frame {}: a block at byte {pos} has type/HC byte 0x{type_hc:02X}, not 0x00",
                r.frame
            ));
        }
        if size < judp::BLOCK_OVERHEAD || pos + size > bytes.len() {
            problems.push(format!(
                "frame {}: a block at byte {pos} gives data size {size}, but {} bytes are left",
                r.frame,
                bytes.len() - pos
            ));
            overrun = true;
            break;
        }
        pos += size;
    }
    if !overrun && pos != bytes.len() {
        problems.push(format!(
            "frame {} ({} bytes): {} bytes follow the last block, counted by no data size",
            r.frame,
            bytes.len(),
            bytes.len().saturating_sub(pos)
        ));
    }
    if r.header.source != t.target {
        problems.push(format!(
            "{name} (frame {}) gives source {}, not the component's ID {}",
            r.frame, r.header.source, t.target
        ));
    }
    if r.header.destination != t.me {
        problems.push(format!(
            "{name} (frame {}) is addressed to {}, not to the tester {}",
            r.frame, r.header.destination, t.me
        ));
    }
    problems
}

fn header<W: Wire>(t: &mut Tester<W>, facts: &mut Facts, _: &Options) -> io::Result<Outcome> {
    let (sent, reply) = ask(t, facts, &query_identification(), ids::ReportIdentification)?;
    let Some(reply) = reply else {
        return Ok(
            Outcome::fail(no_reply(t, &sent, "ReportIdentification")).with([sent.evidence()])
        );
    };
    let (sent2, reply2) = ask(t, facts, &QueryServices::all().into(), ids::ReportServices)?;
    let mut evidence = vec![sent.evidence(), reply.evidence(), sent2.evidence()];
    let mut problems = header_problems(t, &reply);
    if let Some(r2) = &reply2 {
        evidence.push(r2.evidence());
        problems.extend(header_problems(t, r2));
    }
    let checked = if reply2.is_some() {
        "ReportIdentification and ReportServices"
    } else {
        "ReportIdentification (QueryServices was not answered)"
    };
    Ok(if problems.is_empty() {
        Outcome::pass(format!(
            "{checked}: version 0x02, type/HC 0x00, data sizes that cover each datagram \
             exactly, source {}, destination the tester {}",
            t.target, t.me
        ))
    } else {
        Outcome::fail(format!(
            "{}; §4.2 wants version 0x02, type/HC 0x00 and data size = 14 + payload, §4.3 the \
             component's own ID as source and the asker as destination",
            problems.join("; ")
        ))
    }
    .with(evidence))
}

fn sequence_numbers<W: Wire>(t: &mut Tester<W>, _: &mut Facts, _: &Options) -> io::Result<Outcome> {
    let q = query_identification();
    let mut evidence = Vec::new();
    let mut replies: Vec<Received> = Vec::new();
    for _ in 0..SEQUENCE_SAMPLES {
        // A copy of the last reply the network duplicated is not a reply of this query.
        t.drain()?;
        let (sent, reply) = t.query(&q, ids::ReportIdentification)?;
        evidence.push(sent.evidence());
        let Some(reply) = reply else {
            return Ok(Outcome::fail(format!(
                "{} (answered {} of the earlier ones)",
                no_reply(t, &sent, "ReportIdentification"),
                replies.len()
            ))
            .with(evidence));
        };
        evidence.push(reply.evidence());
        replies.push(reply);
    }
    let seqs: Vec<u16> = replies.iter().map(|r| r.header.sequence).collect();
    let list = seqs
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut sorted = seqs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() < seqs.len() {
        return Ok(Outcome::fail(format!(
            "{SEQUENCE_SAMPLES} ReportIdentification replies carried sequence numbers {list}: \
             a number was used again, and a receiver with a duplicate window (Junior-based \
             node managers, §9 C12) drops the repeat; §4.5: senders increment per block"
        ))
        .with(evidence));
    }
    let backwards = seqs
        .windows(2)
        .filter(|w| w[1].wrapping_sub(w[0]) >= 0x8000)
        .count();
    Ok(if backwards == 0 {
        Outcome::pass(format!(
            "{SEQUENCE_SAMPLES} ReportIdentification replies carried sequence numbers {list}: \
             distinct and advancing"
        ))
    } else {
        Outcome::warning(format!(
            "{SEQUENCE_SAMPLES} ReportIdentification replies carried sequence numbers {list}: \
             distinct, but {backwards} step(s) went backwards; §4.5 says senders increment \
             per block (receivers rely only on the numbers not repeating, §9 C12)"
        ))
    }
    .with(evidence))
}

fn repeated_query<W: Wire>(t: &mut Tester<W>, _: &mut Facts, _: &Options) -> io::Result<Outcome> {
    let q = query_identification();
    let (s1, r1) = t.query(&q, ids::ReportIdentification)?;
    let Some(r1) = r1 else {
        return Ok(Outcome::fail(no_reply(t, &s1, "ReportIdentification")).with([s1.evidence()]));
    };
    t.drain()?;
    let (s2, r2) = t.query(&q, ids::ReportIdentification)?;
    let evidence = [s1.evidence(), r1.evidence(), s2.evidence()];
    Ok(match r2 {
        Some(r2) => Outcome::pass(format!(
            "QueryIdentification under sequence numbers {} and {} was answered both times",
            s1.sequence, s2.sequence
        ))
        .with(evidence)
        .with([r2.evidence()]),
        None => Outcome::fail(format!(
            "QueryIdentification was answered under sequence number {} (frame {}) but the \
             same query under the new number {} (frame {}) got no ReportIdentification \
             within {:.1} s: a new sequence number makes it a new message (§9 C12)",
            s1.sequence, s1.first_frame, s2.sequence, s2.first_frame, t.reply_bound
        ))
        .with(evidence),
    })
}

fn ack_on_request<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let sent = t.send_with(
        &query_identification(),
        &SendOptions {
            ack: true,
            ..SendOptions::default()
        },
    )?;
    let target = t.target;
    let ack = t.wait_for(t.reply_bound, |r| {
        r.header.source == target && matches!(r.body, Body::Ack | Body::Nak)
    })?;
    let reply = t.wait_message(ids::ReportIdentification)?;
    let mut evidence = vec![sent.evidence()];
    evidence.extend(ack.iter().map(Received::evidence));
    evidence.extend(reply.iter().map(Received::evidence));
    let Some(ack) = ack else {
        return Ok(Outcome::fail(format!(
            "QueryIdentification with ACK/NAK = 1 (frame {}, sequence {}) got no ACK block \
             within {:.1} s{}; §4.4: the receiver answers every ACK request with a \
             header-only ACK block",
            sent.first_frame,
            sent.sequence,
            t.reply_bound,
            if reply.is_some() {
                " (the ReportIdentification came)"
            } else {
                " and no ReportIdentification"
            }
        ))
        .with(evidence));
    };
    let mut problems = Vec::new();
    if matches!(ack.body, Body::Nak) {
        problems.push(format!(
            "frame {} is a NAK (ACK/NAK = 2), not an ACK",
            ack.frame
        ));
    }
    if ack.header.sequence != sent.sequence {
        problems.push(format!(
            "the ACK (frame {}) carries sequence number {}, not the request's {}",
            ack.frame, ack.header.sequence, sent.sequence
        ));
    }
    if ack.header.destination != t.me {
        problems.push(format!(
            "the ACK (frame {}) is addressed to {}, not to the tester {}",
            ack.frame, ack.header.destination, t.me
        ));
    }
    if reply.is_none() {
        problems.push(format!(
            "no ReportIdentification came within {:.1} s",
            t.reply_bound
        ));
    }
    if !problems.is_empty() {
        return Ok(Outcome::fail(format!(
            "QueryIdentification with ACK/NAK = 1 (frame {}): {}; §4.4: an ACK block has \
             ACK/NAK = 3, swapped IDs and the acknowledged block's sequence number",
            sent.first_frame,
            problems.join("; ")
        ))
        .with(evidence));
    }
    if t.ack_payloads.contains(&ack.frame) {
        let text = "ACK blocks carry a payload (the acknowledged message)";
        facts.deviations.insert(text.into(), "§9 C11".into());
        return Ok(Outcome::warning(format!(
            "deviation: the ACK (frame {}) carries a payload; §4.4 wants a header-only block \
             (data size 14); receivers that skip it by its data size still interoperate \
             (wire reference §9 C11)",
            ack.frame
        ))
        .with(evidence));
    }
    Ok(Outcome::pass(format!(
        "QueryIdentification with ACK/NAK = 1 (sequence {}) got a header-only ACK (frame {}, \
         same sequence number, addressed to the tester) and its ReportIdentification",
        sent.sequence, ack.frame
    ))
    .with(evidence))
}

fn multi_block_datagram<W: Wire>(
    t: &mut Tester<W>,
    _: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let payload = emit(&query_identification())?;
    let seqs = raw_sequences(t, 2);
    let mut w = judp::DatagramWriter::new();
    for &s in &seqs {
        w.push(&Header::new(t.target, t.me, s), &payload)
            .map_err(|e| io::Error::other(format!("framing a block: {e}")))?;
    }
    let frame = t.send_raw(t.addr, &w.finish())?;
    let sent = raw_evidence(
        frame,
        Some(ids::QueryIdentification),
        "QueryIdentification ×2 (two blocks in one datagram)",
    );
    let target = t.target;
    let replies = wait_n(
        t,
        2,
        t.reply_bound,
        from_target(target, ids::ReportIdentification),
    )?;
    let evidence: Vec<Evidence> = std::iter::once(sent)
        .chain(replies.iter().map(Received::evidence))
        .collect();
    Ok(match replies.len() {
        2 => Outcome::pass(format!(
            "both QueryIdentification blocks of frame {frame} (sequence numbers {} and {}) \
             were answered",
            seqs[0], seqs[1]
        )),
        n => Outcome::fail(format!(
            "frame {frame} held two QueryIdentification blocks (sequence numbers {} and {}); \
             {n} ReportIdentification came within {:.1} s; §4.6: a receiver reads blocks \
             until the datagram is exhausted",
            seqs[0], seqs[1], t.reply_bound,
        )),
    }
    .with(evidence))
}

fn fragmented_request<W: Wire>(
    t: &mut Tester<W>,
    _: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let q = query_identification();
    let blocks = emit(&q)?.len();
    let cut = |reversed| SendOptions {
        max_fragment: Some(1),
        reversed,
        ..SendOptions::default()
    };
    let s1 = t.send_with(&q, &cut(false))?;
    let r1 = t.wait_message(ids::ReportIdentification)?;
    let Some(r1) = r1 else {
        return Ok(Outcome::fail(format!(
            "QueryIdentification in {blocks} one-byte fragments (frames {}–{}, First/Middle/\
             Last, sequence numbers from {}) got no ReportIdentification within {:.1} s; \
             §4.6: reassemble from a First to a Last block with consecutive numbers",
            s1.first_frame, s1.last_frame, s1.sequence, t.reply_bound,
        ))
        .with([fragments_evidence(&s1, blocks, false)]));
    };
    t.drain()?;
    let s2 = t.send_with(&q, &cut(true))?;
    let r2 = t.wait_message(ids::ReportIdentification)?;
    // The fragments went out back to back: consecutive frames.
    let s2_from = (s2.last_frame + 1).saturating_sub(u32::try_from(blocks).unwrap_or(1));
    let evidence = [
        fragments_evidence(&s1, blocks, false),
        r1.evidence(),
        fragments_evidence(&s2, blocks, true),
    ];
    Ok(match r2 {
        Some(r2) => Outcome::pass(format!(
            "QueryIdentification in {blocks} one-byte fragments was answered, sent in order \
             (frames {}–{}) and last fragment first (frames {}–{})",
            s1.first_frame, s1.last_frame, s2_from, s2.last_frame
        ))
        .with(evidence)
        .with([r2.evidence()]),
        None => Outcome::warning(format!(
            "QueryIdentification in {blocks} one-byte fragments was answered in order, but not \
             sent last fragment first (frames {}–{}, no ReportIdentification within {:.1} s): \
             UDP may reorder datagrams and the majority implementations reorder fragments \
             (wire reference §4.6)",
            s2_from, s2.last_frame, t.reply_bound
        ))
        .with(evidence),
    })
}

/// The frame of a one-byte-fragmented query's First block, as evidence: it holds no whole
/// message ID.
fn fragments_evidence(s: &Sent, blocks: usize, reversed: bool) -> Evidence {
    raw_evidence(
        s.first_frame,
        None,
        &format!(
            "{}, first of {blocks} one-byte fragments{}",
            s.evidence().what,
            if reversed { " (sent last)" } else { "" }
        ),
    )
}

/// The queries whose replies may need several blocks, and their replies' IDs.
fn large_reply_queries(facts: &Facts) -> Vec<(Message, u16)> {
    let mut v: Vec<(Message, u16)> = vec![
        (QueryServices::all().into(), ids::ReportServices),
        (
            QueryServiceList {
                subsystems: vec![ServiceListSubsystem {
                    subsystem_id: u16::MAX,
                    nodes: vec![ServiceListNode {
                        node_id: 255,
                        components: vec![ServiceListComponent {
                            component_id: 255,
                            search_filter: None,
                        }],
                    }],
                }],
            }
            .into(),
            ids::ReportServiceList,
        ),
    ];
    if facts.lists("manipulator:ManipulatorSpecificationService") != Some(false) {
        v.push((
            QueryManipulatorSpecifications { presence_vector: 3 }.into(),
            ids::ReportManipulatorSpecifications,
        ));
    }
    v
}

/// The component's non-single blocks to the tester in frames `first..=last` with sequence
/// numbers in `from..from + n`: (frame, sequence, flags), in sequence order.
fn fragments_of<W: Wire>(t: &Tester<W>, r: &Received, n: u32) -> Vec<(u32, u16, DataFlags)> {
    let last_seq = r.header.sequence;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "sequence numbers wrap at 65536 on purpose"
    )]
    let first_seq = last_seq.wrapping_sub(n.saturating_sub(1) as u16);
    let mut out = Vec::new();
    for f in t
        .frames()
        .iter()
        .filter(|f| f.direction == Direction::Received)
        .filter(|f| (r.first_frame..=r.frame).contains(&f.number))
    {
        let Ok(d) = Datagram::new_checked(&f.bytes) else {
            continue;
        };
        for b in d.blocks_tolerant().flatten() {
            let h = Header::parse(&b.block);
            if h.source == t.target
                && h.destination == r.header.destination
                && h.data_flags != DataFlags::Single
                && u32::from(h.sequence.wrapping_sub(first_seq)) < n
            {
                out.push((f.number, h.sequence, h.data_flags));
            }
        }
    }
    out.sort_by_key(|(_, s, _)| s.wrapping_sub(first_seq));
    out
}

/// What is wrong with the blocks of fragmented reply `r`; empty when nothing is.
fn fragment_problems<W: Wire>(t: &Tester<W>, r: &Received, n: u32) -> Vec<String> {
    let mut problems = Vec::new();
    if let Body::Message {
        parsed: Err(e), id, ..
    } = &r.body
    {
        problems.push(format!("the reassembled 0x{id:04X} does not decode: {e}"));
    }
    let frags = fragments_of(t, r, n);
    if frags.len() != n as usize {
        problems.push(format!("{} blocks found for {n} fragments", frags.len()));
    }
    for (i, (frame, seq, flags)) in frags.iter().enumerate() {
        let want = match i {
            0 => DataFlags::First,
            i if i + 1 == frags.len() => DataFlags::Last,
            _ => DataFlags::Middle,
        };
        if *flags != want {
            problems.push(format!(
                "frame {frame} (sequence {seq}) has data flags {flags:?}, not {want:?}"
            ));
        }
        if i > 0 && seq.wrapping_sub(frags[i - 1].1) != 1 {
            problems.push(format!(
                "frame {frame}: sequence {seq} does not follow {}",
                frags[i - 1].1
            ));
        }
    }
    problems
}

fn fragmented_reply<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    _: &Options,
) -> io::Result<Outcome> {
    let mut evidence = Vec::new();
    let mut largest: Option<(String, usize)> = None;
    for (query, reply_id) in large_reply_queries(facts) {
        let (sent, reply) = ask(t, facts, &query, reply_id)?;
        let Some(reply) = reply else { continue };
        let Body::Message {
            bytes, fragments, ..
        } = &reply.body
        else {
            continue;
        };
        let (len, n) = (bytes.len(), *fragments);
        let name = reply.evidence().what;
        if largest.as_ref().is_none_or(|(_, l)| len > *l) {
            largest = Some((name.clone(), len));
        }
        if n <= 1 {
            continue;
        }
        evidence.extend([sent.evidence(), reply.evidence()]);
        let problems = fragment_problems(t, &reply, n);
        return Ok(if problems.is_empty() {
            Outcome::pass(format!(
                "{name} ({len} bytes) came in {n} blocks (frames {}–{}): First, Middle…, Last \
                 with consecutive sequence numbers, and decodes once reassembled",
                reply.first_frame, reply.frame
            ))
        } else {
            Outcome::fail(format!(
                "{name} ({len} bytes) came in {n} blocks (frames {}–{}): {}; §4.6: First, \
                 Middle…, Last with consecutive sequence numbers, the message ID only in the \
                 first",
                reply.first_frame,
                reply.frame,
                problems.join("; ")
            ))
        }
        .with(evidence));
    }
    Ok(match largest {
        Some((name, len)) => Outcome::not_applicable(format!(
            "no reply needed more than one block: the largest, {name}, is {len} bytes (one \
             block holds up to {} bytes at the preferred size)",
            judp::PREFERRED_BLOCK_PAYLOAD
        )),
        None => Outcome::not_applicable(format!(
            "none of QueryServices, QueryServiceList, QueryManipulatorSpecifications was \
             answered within {:.1} s{}",
            t.reply_bound,
            facts.unknown_note()
        )),
    })
}

fn duplicate_block<W: Wire>(t: &mut Tester<W>, _: &mut Facts, _: &Options) -> io::Result<Outcome> {
    let q = query_identification();
    let s1 = t.send(&q)?;
    let s2 = t.send_with(
        &q,
        &SendOptions {
            sequence: Some(s1.sequence),
            ..SendOptions::default()
        },
    )?;
    let target = t.target;
    let mut replies = t.collect(
        t.reply_bound,
        from_target(target, ids::ReportIdentification),
    )?;
    // Copies the network duplicated are one reply: the component's answers differ in their
    // sequence numbers.
    let mut seen = Vec::new();
    replies.retain(|r| {
        let fresh = !seen.contains(&r.header.sequence);
        seen.push(r.header.sequence);
        fresh
    });
    let evidence: Vec<Evidence> = [s1.evidence(), s2.evidence()]
        .into_iter()
        .chain(replies.iter().map(Received::evidence))
        .collect();
    Ok(match replies.len() {
        0 => Outcome::fail(format!(
            "QueryIdentification sent twice under sequence number {} (frames {} and {}) got \
             no ReportIdentification within {:.1} s",
            s1.sequence, s1.first_frame, s2.first_frame, t.reply_bound,
        )),
        1 => Outcome::pass(format!(
            "QueryIdentification sent twice under sequence number {} (frames {} and {}) was \
             answered once: the repeat was dropped as a duplicate",
            s1.sequence, s1.first_frame, s2.first_frame
        )),
        n => Outcome::warning(format!(
            "QueryIdentification sent twice under sequence number {} (frames {} and {}) was \
             answered {n} times within {:.1} s: the component does not suppress duplicates \
             (Junior does, keyed by source and sequence number; AS5669A does not require it \
             as far as the wire reference knows, §4.5)",
            s1.sequence, s1.first_frame, s2.first_frame, t.reply_bound
        )),
    }
    .with(evidence))
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::net::SocketAddr;

    use super::*;
    use crate::net::link::LinkDatagram;

    const ME: JausId = JausId::new(200, 1, 1);
    const ARM: JausId = JausId::new(126, 1, 10);

    /// A wire that hands out the datagrams it was given.
    struct Scripted(VecDeque<Vec<u8>>);

    impl Wire for Scripted {
        fn now(&self) -> f64 {
            0.0
        }
        fn send(&mut self, _: SocketAddr, _: &[u8]) -> io::Result<f64> {
            Ok(0.0)
        }
        fn recv_until(&mut self, _: f64) -> io::Result<Option<LinkDatagram>> {
            Ok(self.0.pop_front().map(|bytes| LinkDatagram {
                at: 0.0,
                from: addr(),
                bytes,
            }))
        }
        fn local_toward(&self, toward: SocketAddr) -> SocketAddr {
            toward
        }
    }

    fn addr() -> SocketAddr {
        "127.0.0.1:3794".parse().unwrap()
    }

    fn tester(datagrams: Vec<Vec<u8>>) -> Tester<Scripted> {
        Tester::new(Scripted(datagrams.into()), ME, ARM, addr(), 100)
    }

    fn report(extra: &[u8]) -> Vec<u8> {
        let m: Message = crate::jaus::core::ReportHeartbeatPulse.into();
        let mut d = judp::single(&Header::new(ME, ARM, 7), &m.emit().unwrap()).unwrap();
        d.extend_from_slice(extra);
        d
    }

    #[test]
    fn clean_reply_has_no_header_problems() {
        let mut t = tester(vec![report(&[])]);
        let r = t.wait_for(1.0, |_| true).unwrap().unwrap();
        assert!(header_problems(&t, &r).is_empty());
    }

    #[test]
    fn bytes_no_data_size_counts_are_a_header_problem() {
        let mut t = tester(vec![report(&[0, 0, 0])]);
        let r = t.wait_for(1.0, |_| true).unwrap().unwrap();
        let p = header_problems(&t, &r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("3 bytes follow the last block"), "{p:?}");
    }

    #[test]
    fn raw_sequences_stay_half_the_counter_away_and_apart() {
        let mut t = tester(Vec::new());
        let a = raw_sequences(&t, 2);
        assert_eq!(a, vec![100 + 0x8000, 101 + 0x8000]);
        t.send_raw(addr(), &[0]).unwrap();
        let b = raw_sequences(&t, 2);
        assert!(b.iter().all(|s| !a.contains(s)));
    }
}
