//! The conformance tester's end of the wire: it frames what a check sends (with the options a
//! check needs: an ACK request, a given sequence number, fragments), reads every datagram that
//! comes back, reassembles and decodes it, answers ACK requests, and keeps every datagram both
//! ways as a numbered [`Frame`] — the evidence capture's frame numbers.
//!
//! Every wait has a deadline; nothing here blocks past it.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;

use crate::jaus::judp::{self, AckNak, Broadcast, DataFlags, Datagram, Header};
use crate::jaus::message::message_name;
use crate::jaus::wire::DecodeContext;
use crate::jaus::{DecodeError, JausId, Message};
use crate::net::link::{Link, LinkDatagram};
use crate::net::reassembly::{Reassembler, Reassembly};

use super::check::Evidence;

/// Received messages kept for later waits; the oldest go first past this.
pub const MAX_INBOX: usize = 4096;

/// Received datagrams kept as frames at most (about 100 MB at the largest UDP payloads of a
/// JUDP component's usual 1.4 kB; a run against the simulator keeps about 450).
pub const MAX_FRAMES: usize = 65_536;

/// Seconds [`Tester::drain`] reads what is already waiting.
const DRAIN_S: f64 = 0.02;

/// What the tester sends and reads through: a [`Link`] (a UDP socket), or a test's stand-in.
pub trait Wire {
    /// Seconds since the wire was opened.
    fn now(&self) -> f64;
    /// Sends one datagram; returns when.
    fn send(&mut self, to: SocketAddr, bytes: &[u8]) -> io::Result<f64>;
    /// The next datagram, or `None` once `deadline` has passed.
    fn recv_until(&mut self, deadline: f64) -> io::Result<Option<LinkDatagram>>;
    /// The local address datagrams to `toward` leave from.
    fn local_toward(&self, toward: SocketAddr) -> SocketAddr;
}

impl Wire for Link {
    fn now(&self) -> f64 {
        Link::now(self)
    }
    fn send(&mut self, to: SocketAddr, bytes: &[u8]) -> io::Result<f64> {
        Link::send(self, to, bytes)
    }
    fn recv_until(&mut self, deadline: f64) -> io::Result<Option<LinkDatagram>> {
        Link::recv_until(self, deadline)
    }
    fn local_toward(&self, toward: SocketAddr) -> SocketAddr {
        Link::local_toward(self, toward)
    }
}

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the tester.
    Sent,
    /// To the tester.
    Received,
}

/// One datagram of the exchange.
#[derive(Debug, Clone)]
pub struct Frame {
    /// 1-based, as in the evidence capture.
    pub number: u32,
    /// Seconds since the wire was opened.
    pub at: f64,
    /// Which way.
    pub direction: Direction,
    /// The tester's address.
    pub local: SocketAddr,
    /// The other end.
    pub remote: SocketAddr,
    /// The UDP payload.
    pub bytes: Vec<u8>,
}

/// What a received block carried.
#[derive(Debug, Clone)]
pub enum Body {
    /// An ACK block (§4.4).
    Ack,
    /// A NAK block.
    Nak,
    /// A whole message (reassembled when it came in fragments).
    Message {
        /// Its message ID.
        id: u16,
        /// ID and body.
        bytes: Vec<u8>,
        /// Decoded with what the tester knows (joint kinds).
        parsed: Result<Message, DecodeError>,
        /// Blocks it came in (1 when not fragmented).
        fragments: u32,
    },
}

/// One received block's meaning, with where it came from.
#[derive(Debug, Clone)]
pub struct Received {
    /// The frame that completed it.
    pub frame: u32,
    /// The frame of its first fragment (= `frame` when not fragmented).
    pub first_frame: u32,
    /// Seconds since the wire was opened.
    pub at: f64,
    /// The sender's address.
    pub from: SocketAddr,
    /// The header of the block that completed it.
    pub header: Header,
    /// What it carried.
    pub body: Body,
}

impl Received {
    /// The message ID, when it is a message.
    pub fn id(&self) -> Option<u16> {
        match &self.body {
            Body::Message { id, .. } => Some(*id),
            Body::Ack | Body::Nak => None,
        }
    }

    /// The decoded message, when it is one and decoded.
    pub fn message(&self) -> Option<&Message> {
        match &self.body {
            Body::Message { parsed: Ok(m), .. } => Some(m),
            _ => None,
        }
    }

    /// This block as evidence (its first frame: where the message ID is).
    pub fn evidence(&self) -> Evidence {
        match &self.body {
            Body::Message { id, .. } => Evidence {
                frame: self.first_frame,
                message_id: Some(*id),
                what: name_of(*id),
            },
            Body::Ack => Evidence {
                frame: self.frame,
                message_id: None,
                what: "ACK".into(),
            },
            Body::Nak => Evidence {
                frame: self.frame,
                message_id: None,
                what: "NAK".into(),
            },
        }
    }
}

/// The message's name, or its ID in hex when we do not know it.
pub fn name_of(id: u16) -> String {
    message_name(id).map_or_else(|| format!("0x{id:04X}"), str::to_string)
}

/// How to send one message.
#[derive(Debug, Clone, Copy)]
pub struct SendOptions {
    /// Ask for an ACK (§4.4).
    pub ack: bool,
    /// The first block's sequence number (default: the next of the tester's counter).
    pub sequence: Option<u16>,
    /// Cut the message into blocks of at most this many payload bytes (§4.6).
    pub max_fragment: Option<usize>,
    /// Send the fragments last first.
    pub reversed: bool,
    /// The destination (default: the target).
    pub to: Option<JausId>,
    /// The address (default: the target's).
    pub via: Option<SocketAddr>,
    /// The broadcast flags.
    pub broadcast: Broadcast,
    /// The source ID (default: the tester's own): a second client, added with
    /// [`Tester::add_identity`] so that its replies are read.
    pub from: Option<JausId>,
}

impl Default for SendOptions {
    fn default() -> Self {
        SendOptions {
            ack: false,
            sequence: None,
            max_fragment: None,
            reversed: false,
            to: None,
            via: None,
            broadcast: Broadcast::None,
            from: None,
        }
    }
}

/// What was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    /// First frame sent.
    pub first_frame: u32,
    /// Last frame sent.
    pub last_frame: u32,
    /// The first block's sequence number.
    pub sequence: u16,
    /// The message ID (the first two payload bytes, when there are two).
    pub id: Option<u16>,
}

impl Sent {
    /// The frame holding the message ID, as evidence.
    pub fn evidence(&self) -> Evidence {
        Evidence {
            frame: self.first_frame,
            message_id: self.id,
            what: self.id.map_or_else(|| "sent".into(), name_of),
        }
    }
}

/// The tester: our ID, the target, the numbered frames, and what came back.
pub struct Tester<W: Wire> {
    wire: W,
    /// The tester's JAUS ID.
    pub me: JausId,
    /// The component under test.
    pub target: JausId,
    /// Where it is.
    pub addr: SocketAddr,
    /// Seconds a reply may take before a check says it did not come (every wait is bounded).
    pub reply_bound: f64,
    /// What decoding knows (joint kinds, once the specification is read).
    pub ctx: DecodeContext,
    next_sequence: u16,
    frames: Vec<Frame>,
    inbox: VecDeque<Received>,
    reassembler: Reassembler,
    /// Datagrams that were not JUDP v2 or had a bad block: frame and error.
    pub malformed: Vec<(u32, String)>,
    /// ACK/NAK blocks that carried a payload (§9 C11): frames.
    pub ack_payloads: Vec<u32>,
    /// Received messages dropped from a full inbox.
    pub inbox_dropped: u64,
    /// Datagrams from other addresses than the component's, once it was found: not read.
    pub strangers: u64,
    /// Datagrams received past [`MAX_FRAMES`]: not read, not in the capture.
    pub unrecorded: u64,
    /// Further IDs the tester answers to (a second client on the same socket).
    others: Vec<JausId>,
}

impl<W: Wire> Tester<W> {
    /// A tester as `me`, aimed at `target` at `addr`, numbering blocks from `first_sequence`
    /// (random per run, §9 C14).
    pub fn new(wire: W, me: JausId, target: JausId, addr: SocketAddr, first_sequence: u16) -> Self {
        Tester {
            wire,
            me,
            target,
            addr,
            reply_bound: 1.0,
            ctx: DecodeContext::NONE,
            next_sequence: first_sequence,
            frames: Vec::new(),
            inbox: VecDeque::new(),
            reassembler: Reassembler::default(),
            malformed: Vec::new(),
            ack_payloads: Vec::new(),
            inbox_dropped: 0,
            strangers: 0,
            unrecorded: 0,
            others: Vec::new(),
        }
    }

    /// A second client's JAUS ID on the tester's socket (the tester's subsystem and node, the
    /// next free component number, never the tester's or the target's ID), read from now on.
    pub fn second_client(&mut self) -> JausId {
        let me = self.me;
        let mut component = me.component;
        loop {
            component = if component >= 250 { 2 } else { component + 1 };
            let id = JausId::new(me.subsystem, me.node, component);
            if id != self.target && id != me {
                self.add_identity(id);
                return id;
            }
        }
    }

    /// Sends `message` as `from` (`None`: the tester's own ID).
    pub fn send_as(&mut self, message: &Message, from: Option<JausId>) -> io::Result<Sent> {
        self.send_with(
            message,
            &SendOptions {
                from,
                ..SendOptions::default()
            },
        )
    }

    /// The first message `id` from the target addressed to `to`, within the reply bound.
    pub fn reply_to(&mut self, to: JausId, id: u16) -> io::Result<Option<Received>> {
        let target = self.target;
        self.wait_for(self.reply_bound, |r| {
            r.header.source == target && r.header.destination == to && r.id() == Some(id)
        })
    }

    /// Reads blocks addressed to `id` too (a second client; send as it with
    /// [`SendOptions::from`]). Received blocks keep their destination in their header.
    pub fn add_identity(&mut self, id: JausId) {
        if id != self.me && !self.others.contains(&id) {
            self.others.push(id);
        }
    }

    /// Seconds since the wire was opened.
    pub fn now(&self) -> f64 {
        self.wire.now()
    }

    /// Every frame so far.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// Frames so far (the next frame's number minus one).
    pub fn frame_count(&self) -> u32 {
        u32::try_from(self.frames.len()).unwrap_or(u32::MAX)
    }

    /// The next sequence number the tester's counter gives, without taking it.
    pub fn peek_sequence(&self) -> u16 {
        self.next_sequence
    }

    fn record(&mut self, at: f64, direction: Direction, remote: SocketAddr, bytes: Vec<u8>) -> u32 {
        let number = self.frame_count() + 1;
        let local = self.wire.local_toward(remote);
        self.frames.push(Frame {
            number,
            at,
            direction,
            local,
            remote,
            bytes,
        });
        number
    }

    /// Sends a datagram as it is (a check's malformed one); returns its frame.
    pub fn send_raw(&mut self, to: SocketAddr, bytes: &[u8]) -> io::Result<u32> {
        let at = self.wire.send(to, bytes)?;
        Ok(self.record(at, Direction::Sent, to, bytes.to_vec()))
    }

    /// Sends `message` to the target, one block, the next sequence number.
    pub fn send(&mut self, message: &Message) -> io::Result<Sent> {
        self.send_with(message, &SendOptions::default())
    }

    /// Sends `message` as `opts` say.
    pub fn send_with(&mut self, message: &Message, opts: &SendOptions) -> io::Result<Sent> {
        let bytes = message
            .emit()
            .map_err(|e| io::Error::other(format!("encoding {}: {e}", message.name())))?;
        self.send_payload(&bytes, opts)
    }

    /// Sends message bytes (ID + body, possibly broken on purpose) as `opts` say.
    pub fn send_payload(&mut self, payload: &[u8], opts: &SendOptions) -> io::Result<Sent> {
        let max = opts.max_fragment.unwrap_or(judp::PREFERRED_BLOCK_PAYLOAD);
        let blocks = payload.len().div_ceil(max.max(1)).max(1);
        let sequence = opts.sequence.unwrap_or(self.next_sequence);
        if opts.sequence.is_none() {
            self.next_sequence = self
                .next_sequence
                .wrapping_add(u16::try_from(blocks).unwrap_or(u16::MAX));
        }
        let header = Header {
            broadcast: opts.broadcast,
            ack_nak: if opts.ack {
                AckNak::Request
            } else {
                AckNak::None
            },
            ..Header::new(
                opts.to.unwrap_or(self.target),
                opts.from.unwrap_or(self.me),
                sequence,
            )
        };
        let mut datagrams = Vec::with_capacity(blocks);
        for (h, chunk) in judp::fragment(&header, payload, max) {
            datagrams.push(
                judp::single(&h, chunk)
                    .map_err(|e| io::Error::other(format!("framing a block: {e}")))?,
            );
        }
        if opts.reversed {
            datagrams.reverse();
        }
        let to = opts.via.unwrap_or(self.addr);
        let mut frames = Vec::with_capacity(datagrams.len());
        for d in datagrams {
            frames.push(self.send_raw(to, &d)?);
        }
        let first_frame = if opts.reversed {
            frames.last().copied()
        } else {
            frames.first().copied()
        }
        .unwrap_or(0);
        Ok(Sent {
            first_frame,
            last_frame: frames.iter().copied().max().unwrap_or(0),
            sequence,
            id: payload.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])),
        })
    }

    /// Reads one datagram if one comes before `deadline`: records it, answers its ACK
    /// requests and puts what it carried in the inbox. `false` when none came.
    fn pump(&mut self, deadline: f64) -> io::Result<bool> {
        // Past the deadline nothing more is read, however much keeps coming (a component
        // streaming events must not keep a wait going).
        if self.now() > deadline {
            return Ok(false);
        }
        let Some(d) = self.wire.recv_until(deadline)? else {
            return Ok(false);
        };
        // Once the component is found, only its address speaks for it: anyone can send to our
        // port and claim its ID. Strangers are counted, not read, not kept.
        if self.target != JausId::BROADCAST && d.from != self.addr {
            self.strangers += 1;
            return Ok(true);
        }
        // Memory bounded whatever the component sends: past MAX_FRAMES received datagrams are
        // counted, not kept (a run against the simulator keeps about 450).
        if self.frames.len() >= MAX_FRAMES {
            self.unrecorded += 1;
            return Ok(true);
        }
        let frame = self.record(d.at, Direction::Received, d.from, d.bytes.clone());
        self.take(frame, &d)?;
        Ok(true)
    }

    fn take(&mut self, frame: u32, d: &LinkDatagram) -> io::Result<()> {
        let datagram = match Datagram::new_checked(&d.bytes) {
            Ok(x) => x,
            Err(e) => {
                self.malformed.push((frame, e.to_string()));
                return Ok(());
            }
        };
        let mut acks = Vec::new();
        for block in datagram.blocks_tolerant() {
            let block = match block {
                Ok(b) => b.block,
                Err(e) => {
                    self.malformed.push((frame, e.to_string()));
                    break;
                }
            };
            let header = Header::parse(&block);
            let mine =
                |me: JausId| header.destination == me || is_wildcard_for(header.destination, me);
            if !mine(self.me) && !self.others.iter().copied().any(mine) {
                continue;
            }
            let body = match header.ack_nak {
                AckNak::Ack | AckNak::Nak => {
                    if block.ack_payload_len() > 0 {
                        self.ack_payloads.push(frame);
                    }
                    if header.ack_nak == AckNak::Ack {
                        Body::Ack
                    } else {
                        Body::Nak
                    }
                }
                AckNak::Request | AckNak::None | AckNak::Other(_) => {
                    if header.ack_nak == AckNak::Request {
                        acks.push(header.ack());
                    }
                    let payload = block.payload();
                    let (bytes, first_frame, fragments) = if header.data_flags == DataFlags::Single
                    {
                        (payload.to_vec(), frame, 1)
                    } else {
                        match self.reassembler.push(d.at, &header, payload) {
                            Reassembly::Complete(m) => {
                                // Its first fragment's frame, and the blocks it came in.
                                let (first, n) = self.find_first_fragment(&header).map_or(
                                    (frame, 1),
                                    |(f, seq)| {
                                        (f, u32::from(header.sequence.wrapping_sub(seq)) + 1)
                                    },
                                );
                                (m, first, n)
                            }
                            Reassembly::Pending | Reassembly::Refused => continue,
                        }
                    };
                    let Some(id) = bytes.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) else {
                        self.malformed
                            .push((frame, "a message shorter than its message ID".into()));
                        continue;
                    };
                    let parsed = Message::parse_with(&bytes, &self.ctx);
                    self.push_inbox(Received {
                        frame,
                        first_frame,
                        at: d.at,
                        from: d.from,
                        header,
                        body: Body::Message {
                            id,
                            bytes,
                            parsed,
                            fragments,
                        },
                    });
                    continue;
                }
            };
            self.push_inbox(Received {
                frame,
                first_frame: frame,
                at: d.at,
                from: d.from,
                header,
                body,
            });
        }
        for h in acks {
            let bytes = judp::single(&h, &[])
                .map_err(|e| io::Error::other(format!("framing an ACK: {e}")))?;
            self.send_raw(d.from, &bytes)?;
        }
        Ok(())
    }

    /// The newest received frame holding a "first" block from `last`'s source to us: its
    /// frame number and sequence number.
    fn find_first_fragment(&self, last: &Header) -> Option<(u32, u16)> {
        self.frames
            .iter()
            .rev()
            .filter(|f| f.direction == Direction::Received)
            .take(1024)
            .find_map(|f| {
                let d = Datagram::new_checked(&f.bytes).ok()?;
                d.blocks_tolerant().flatten().find_map(|b| {
                    let h = Header::parse(&b.block);
                    (h.source == last.source
                        && h.data_flags == DataFlags::First
                        && last.sequence.wrapping_sub(h.sequence) < 1024)
                        .then_some((f.number, h.sequence))
                })
            })
    }

    fn push_inbox(&mut self, r: Received) {
        if self.inbox.len() >= MAX_INBOX {
            self.inbox.pop_front();
            self.inbox_dropped += 1;
        }
        self.inbox.push_back(r);
    }

    /// Forgets what came so far: reads what is waiting without waiting, then empties the inbox
    /// (a check starts from a quiet wire, frames keep their numbers).
    pub fn drain(&mut self) -> io::Result<()> {
        // What the system holds now: read for at most 20 ms and 4096 datagrams.
        let deadline = self.now() + DRAIN_S;
        let mut n = 0;
        while n < MAX_INBOX && self.pump(deadline)? {
            n += 1;
        }
        self.inbox.clear();
        Ok(())
    }

    /// The first received block `pred` accepts within `within` seconds (from the inbox first),
    /// taken out of the inbox.
    pub fn wait_for(
        &mut self,
        within: f64,
        mut pred: impl FnMut(&Received) -> bool,
    ) -> io::Result<Option<Received>> {
        let deadline = self.now() + within;
        let mut looked = 0;
        loop {
            if let Some(i) = self.inbox.iter().skip(looked).position(&mut pred) {
                return Ok(self.inbox.remove(looked + i));
            }
            looked = self.inbox.len();
            if !self.pump(deadline)? {
                return Ok(None);
            }
            // A full inbox dropped from the front: look again from the start.
            looked = looked.min(self.inbox.len().saturating_sub(1));
        }
    }

    /// Every received block `pred` accepts until `within` seconds have passed, taken out of
    /// the inbox.
    pub fn collect(
        &mut self,
        within: f64,
        mut pred: impl FnMut(&Received) -> bool,
    ) -> io::Result<Vec<Received>> {
        let deadline = self.now() + within;
        while self.pump(deadline)? {}
        let mut taken = Vec::new();
        let mut kept = VecDeque::with_capacity(self.inbox.len());
        for r in self.inbox.drain(..) {
            if pred(&r) {
                taken.push(r);
            } else {
                kept.push_back(r);
            }
        }
        self.inbox = kept;
        Ok(taken)
    }

    /// A message with ID `id` from the target within [`Tester::reply_bound`].
    pub fn wait_message(&mut self, id: u16) -> io::Result<Option<Received>> {
        let target = self.target;
        self.wait_for(self.reply_bound, |r| {
            r.header.source == target && r.id() == Some(id)
        })
    }

    /// Sends `query` and waits for `reply_id` from the target within the reply bound.
    pub fn query(
        &mut self,
        query: &Message,
        reply_id: u16,
    ) -> io::Result<(Sent, Option<Received>)> {
        let sent = self.send(query)?;
        let reply = self.wait_message(reply_id)?;
        Ok((sent, reply))
    }

    /// The frames `first..=last` so far, for a report; `None` when there were none.
    pub fn frames_since(&self, before: u32) -> Option<(u32, u32)> {
        let now = self.frame_count();
        (now > before).then_some((before + 1, now))
    }
}

/// Whether `dest` is a wildcard that includes `me` (§4.3: 65535 / 255 / 255 mean all).
fn is_wildcard_for(dest: JausId, me: JausId) -> bool {
    (dest.subsystem == 0xFFFF || dest.subsystem == me.subsystem)
        && (dest.node == 0xFF || dest.node == me.node)
        && (dest.component == 0xFF || dest.component == me.component)
}
