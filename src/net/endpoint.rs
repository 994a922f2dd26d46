//! One sans-I/O JUDP endpoint: datagram intake and the framing of what is sent, shared by the
//! OCU's client, the simulated component and the passive observer of recordings (so the three
//! cannot drift apart). Decoding stays with the caller: it knows each source's decode context.
//!
//! Intake, in the order a datagram meets it ([`Endpoint::receive`], then [`Intake::next`] per
//! block):
//! - Version: another JUDP version or the legacy framing is *foreign*, anything else that does
//!   not frame is *malformed*; either drops the whole datagram.
//! - Blocks: walked in order; the first block that does not frame ends the datagram (malformed).
//! - Destination: an addressed endpoint takes blocks whose destination matches its ID
//!   (wildcards included) and counts the rest as not for us; a promiscuous one (the observer)
//!   takes every block.
//! - Source: a wildcard source, or one with a reserved 0 part, is malformed.
//! - Pinned peers: a block carrying a pinned peer's ID ([`Endpoint::pin`], the client's
//!   followed arms) from another address than the one it was found at is *elsewhere*
//!   ([`InboundKind::Elsewhere`]): not heard, not acknowledged, kept out of the duplicate
//!   window and the reassembler, so a spoofer can neither move where we send nor burn the
//!   arm's sequence numbers. The owner decides (counted as spoofed; re-pinned with
//!   [`Endpoint::repin`] only when the arm answers the owner's own query there).
//! - Peers: every other block refreshes its sender in the peer table (address, time heard).
//!   The table is bounded: when it is full, a peer is forgotten to make room — never a pinned
//!   one; first the least recently heard of those its owner does not value
//!   ([`PeerData::valued`]: the client values a peer that answered its own query recently),
//!   then the least recently heard of the rest. So a flood of made-up sources only ever
//!   displaces other strangers. An addressed endpoint keys peers by source; a promiscuous one
//!   by (source, destination), because a peer may number its blocks per destination and the
//!   observer sees both directions.
//! - ACK duty: an addressed endpoint answers every ACK request (duplicates and fragments
//!   included) with the ACK block ([`Inbound::ack`]), for the caller to send where the
//!   datagram came from.
//! - Duplicates: a whole message (a single block, or the fragment that completed one) whose
//!   sequence number its peer used within [`DUPLICATE_WINDOW_S`] is dropped; each peer
//!   remembers at most [`DUPLICATE_MEMORY`] numbers ([`SeqWindow`]: O(1) per block at any rate).
//! - Reassembly: fragments go to a bounded [`Reassembler`]; the fragment completing a message
//!   yields the message.
//!
//! Sending ([`Endpoint::send`]) frames a message to a peer or an address, one block per
//! datagram, cutting messages longer than [`judp::PREFERRED_BLOCK_PAYLOAD`] into multi-packet
//! blocks with consecutive sequence numbers. How blocks are numbered is one policy,
//! [`Numbering`] (one counter for every destination), applied in one place.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::net::SocketAddr;

// Looked up for every datagram, live and in replay: foldhash (seeded per map) rather than
// SipHash, whose share of the replay loader's time was measured at a fifth (issue 14).
use foldhash::{HashMap, HashMapExt};

use crate::jaus::judp::{self, AckNak, Block, Blocks, Broadcast, DataFlags, Datagram, Header};
use crate::jaus::{DecodeError, EncodeError, JausId};
use crate::model::update::Tolerated;
use crate::net::reassembly::{Reassembler, Reassembly};
use crate::net::rng::Rng;

/// How long a (peer, sequence number) pair counts as a duplicate, s.
pub const DUPLICATE_WINDOW_S: f64 = 2.0;
/// Sequence numbers remembered per peer for the duplicate check.
pub const DUPLICATE_MEMORY: usize = 256;

/// The sequence numbers a peer used recently: a queue for the time window and a bitset of what
/// the queue holds, so the check costs the same at any rate (a scan of 256 numbers cost ten
/// times more, `benches/net.rs`).
#[derive(Debug, Clone, Default)]
pub struct SeqWindow {
    recent: VecDeque<(u16, f64)>,
    /// One bit per sequence number; allocated on first use (peers listed but never heard from
    /// cost nothing).
    seen: Vec<u64>,
}

impl SeqWindow {
    /// An empty window.
    pub fn new() -> Self {
        Self::default()
    }

    fn bit(seq: u16) -> (usize, u64) {
        (usize::from(seq >> 6), 1u64 << (seq & 63))
    }

    fn forget_oldest(&mut self) {
        if let Some((s, _)) = self.recent.pop_front() {
            let (i, b) = Self::bit(s);
            self.seen[i] &= !b;
        }
    }

    /// Records `seq` seen at `now` and says whether it was seen within the window.
    pub fn duplicate(&mut self, seq: u16, now: f64) -> bool {
        if self.seen.is_empty() {
            self.seen = vec![0; 1 << 10];
        }
        while self
            .recent
            .front()
            .is_some_and(|(_, t)| now - t > DUPLICATE_WINDOW_S)
        {
            self.forget_oldest();
        }
        let (i, b) = Self::bit(seq);
        if self.seen[i] & b != 0 {
            return true;
        }
        if self.recent.len() >= DUPLICATE_MEMORY {
            self.forget_oldest();
        }
        self.recent.push_back((seq, now));
        self.seen[i] |= b;
        false
    }
}

/// How many of the sequence numbers sent last are remembered to recognise our own echo
/// (a few seconds of what an OCU sends at its busiest).
const RECENT_SENT: usize = 1024;

/// How an endpoint numbers the blocks it sends: one counter for every block, whatever its
/// destination (wire reference §4.5, §9 C12). Receivers such as Junior-based node managers drop
/// a block whose (source, sequence number) repeats within their window whatever its
/// destination, so per-destination counters collide (a discovery round and a re-ask to the
/// component carrying the same number); one counter cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// One counter for all destinations (discovery included), starting where
    /// [`Endpoint::with_first_sequence`] says (a random number by default: a second process
    /// under the same ID, or a restarted one, must not look like a repeat of the first to a
    /// receiver's duplicate window).
    OneCounter,
}

/// What an endpoint's owner keeps about each peer, and how much it values the peer when the
/// bounded table must forget one.
pub trait PeerData: Default {
    /// Whether the peer is worth keeping ahead of strangers at `now` (the client: it answered
    /// our own query recently). Peers that are not are forgotten first.
    fn valued(&self, _now: f64) -> bool {
        false
    }
}

impl PeerData for () {}

/// One peer as an endpoint knows it, with what the endpoint's owner keeps about it.
#[derive(Debug, Clone)]
pub struct Peer<P> {
    /// Where its datagrams last came from, and where ours to it go.
    pub addr: SocketAddr,
    /// When it was last heard (or listed, for a peer added by [`Endpoint::insert_peer`]), s.
    pub last_heard: f64,
    /// The owner's own data (the client: identification, services, lost or not).
    pub data: P,
    window: SeqWindow,
}

/// The endpoint's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams received.
    pub datagrams: u64,
    /// Datagrams of another JUDP version or the legacy framing.
    pub foreign_version: u64,
    /// Datagrams or blocks that did not frame, and blocks with an invalid source.
    pub malformed: u64,
    /// Blocks addressed to another component.
    pub not_for_us: u64,
    /// Messages dropped as duplicates.
    pub duplicates: u64,
    /// Multi-packet messages reassembled.
    pub reassembled: u64,
    /// Fragments dropped by the reassembler (timeouts, limits).
    pub fragments_dropped: u64,
    /// ACK blocks made in answer to requests.
    pub acks_sent: u64,
    /// Datagrams framed to send (ACKs included).
    pub sent: u64,
    /// Blocks that could not be framed.
    pub encode_errors: u64,
    /// ACK/NAK blocks that carried a payload (§9 C11), skipped and counted.
    pub ack_payloads: u64,
    /// Blocks carrying a pinned peer's ID from another address ([`InboundKind::Elsewhere`]).
    pub elsewhere: u64,
    /// Peers forgotten to keep the table within its bound.
    pub evicted: u64,
}

// How an owner's counters (the client's `NetStats`, the simulator's `SimStats`, the observer's
// `ObserverStats`) join the endpoint's: one rule, so the three count alike.
impl EndpointStats {
    /// Datagrams and blocks that did not frame or decode: the endpoint's, with `own`, those
    /// its owner's decoder refused.
    pub fn malformed_with(&self, own: u64) -> u64 {
        self.malformed + own
    }

    /// Peer deviations accepted: `own`, its owner's count, with the ACK payloads the endpoint
    /// skipped.
    pub fn tolerated_with(&self, own: Tolerated) -> Tolerated {
        Tolerated {
            ack_payload: self.ack_payloads,
            ..own
        }
    }
}

/// What one block of a received datagram amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InboundKind<'a> {
    /// Addressed to another component.
    NotForUs,
    /// Its source ID is a wildcard or has a reserved 0 part.
    BadSource,
    /// An ACK or NAK (no payload).
    Ack,
    /// A fragment of a multi-packet message, stored or refused by the reassembler.
    Fragment,
    /// A whole message its peer already sent within the duplicate window.
    Duplicate,
    /// A block carrying our own source ID that we sent ourselves (a multicast echo).
    OwnEcho,
    /// A block carrying our own source ID that we did not send: another client uses our ID,
    /// or somebody forged it.
    SameId,
    /// A block carrying a pinned peer's ID from another address than the peer's: spoofed, or
    /// the peer moved. With the message bytes of a single-block message (fragments are not
    /// reassembled), for the owner to judge; nothing of the endpoint's state changed.
    Elsewhere(Option<Cow<'a, [u8]>>),
    /// A whole message (with its message ID): a single block, or the message its last
    /// fragment completed.
    Message(Cow<'a, [u8]>),
}

/// One block of a received datagram as the endpoint judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound<'a> {
    /// The block's header (for a reassembled message: the completing fragment's).
    pub header: Header,
    /// What it amounts to.
    pub kind: InboundKind<'a>,
    /// The ACK datagram answering the block's ACK request, to send where the datagram came from.
    pub ack: Option<Vec<u8>>,
}

impl InboundKind<'_> {
    /// The same, owning its bytes.
    pub fn into_owned(self) -> InboundKind<'static> {
        match self {
            InboundKind::NotForUs => InboundKind::NotForUs,
            InboundKind::BadSource => InboundKind::BadSource,
            InboundKind::Ack => InboundKind::Ack,
            InboundKind::Fragment => InboundKind::Fragment,
            InboundKind::Duplicate => InboundKind::Duplicate,
            InboundKind::OwnEcho => InboundKind::OwnEcho,
            InboundKind::SameId => InboundKind::SameId,
            InboundKind::Elsewhere(m) => {
                InboundKind::Elsewhere(m.map(|m| Cow::Owned(m.into_owned())))
            }
            InboundKind::Message(m) => InboundKind::Message(Cow::Owned(m.into_owned())),
        }
    }
}

impl Inbound<'_> {
    /// Whether the block counts as hearing its sender (it was for us and its source is valid).
    pub fn heard(&self) -> bool {
        !matches!(
            self.kind,
            InboundKind::NotForUs
                | InboundKind::BadSource
                | InboundKind::OwnEcho
                | InboundKind::SameId
                | InboundKind::Elsewhere(_)
        )
    }
}

/// One datagram being taken in, block by block ([`Intake::next`]). It borrows only the bytes,
/// so the caller can use its endpoint (to send answers) between blocks.
#[derive(Debug)]
pub struct Intake<'a> {
    blocks: Blocks<'a>,
    now: f64,
    from: SocketAddr,
}

impl<'a> Intake<'a> {
    /// The next block, judged by `endpoint` (the one that made this intake). `Err` once, for
    /// the first block that does not frame; the rest of the datagram is lost.
    pub fn next<P: PeerData>(
        &mut self,
        endpoint: &mut Endpoint<P>,
    ) -> Option<Result<Inbound<'a>, DecodeError>> {
        match self.blocks.next()? {
            Ok(b) => Some(Ok(endpoint.block(self.now, self.from, &b.block))),
            Err(e) => {
                endpoint.stats.malformed += 1;
                Some(Err(e))
            }
        }
    }
}

/// Key of the peer table: (source, destination) packed in one integer (one hash write: the
/// simulator looks its peers up 30 000 times a simulated second); an addressed endpoint puts
/// its own ID as the destination, so it keys by source alone.
type Link = u64;

fn link(source: JausId, destination: JausId) -> Link {
    u64::from(u32::from_le_bytes(source.to_bytes())) << 32
        | u64::from(u32::from_le_bytes(destination.to_bytes()))
}

fn link_source(key: Link) -> JausId {
    JausId::from_bytes(((key >> 32) as u32).to_le_bytes())
}

/// The bounded peer table.
#[derive(Debug)]
struct Peers<P> {
    map: HashMap<Link, Peer<P>>,
    max: usize,
    /// Peers never forgotten (the client's followed arms; at most `MAX_ARMS` of them), and
    /// heard only from the address they have in the table.
    pinned: Vec<JausId>,
    /// Peers forgotten to stay within `max`.
    evicted: u64,
}

impl<P: PeerData> Peers<P> {
    /// The peer of `key`, added (forgetting another when full, see [`Peers::entry`]) if new,
    /// with `addr` and `last_heard` refreshed either way.
    fn heard(&mut self, key: Link, addr: SocketAddr, now: f64) -> &mut Peer<P> {
        let p = self.entry(key, addr, now);
        p.addr = addr;
        p.last_heard = now;
        p
    }

    /// The peer of `key`, added with `addr` and `now` if new. When the table is full, one
    /// peer is forgotten first: never a pinned one; the least recently heard of those the
    /// owner does not value, else the least recently heard of the valued ones (one pass over
    /// the table, only when it is full and the key is new).
    fn entry(&mut self, key: Link, addr: SocketAddr, now: f64) -> &mut Peer<P> {
        if self.map.len() >= self.max && !self.map.contains_key(&key) {
            let pinned = &self.pinned;
            let victim = self
                .map
                .iter()
                .filter(|(k, _)| !pinned.contains(&link_source(**k)))
                .min_by(|a, b| {
                    (a.1.data.valued(now), a.1.last_heard)
                        .partial_cmp(&(b.1.data.valued(now), b.1.last_heard))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .map(|(k, _)| *k);
            if let Some(k) = victim {
                self.map.remove(&k);
                self.evicted += 1;
            }
        }
        self.map.entry(key).or_insert_with(|| Peer {
            addr,
            last_heard: now,
            data: P::default(),
            window: SeqWindow::new(),
        })
    }
}

/// The JUDP endpoint: intake, peer table, duplicate rule, reassembly, ACK duty and framing.
/// `P` is what the owner keeps per peer (nothing for the simulator and the observer).
#[derive(Debug)]
pub struct Endpoint<P = ()> {
    /// `None`: promiscuous (every destination, sends nothing).
    me: Option<JausId>,
    numbering: Numbering,
    /// The next sequence number (one counter for every destination, see [`Numbering`]).
    next_sequence: u16,
    /// The sequence numbers of the last [`RECENT_SENT`] blocks sent, oldest first: a block
    /// with our source ID and one of these is our own echo.
    recent_sent: VecDeque<u16>,
    /// Our own socket's port when known: a block with our ID from another port is not ours.
    local_port: Option<u16>,
    peers: Peers<P>,
    reassembler: Reassembler,
    stats: EndpointStats,
}

impl<P: PeerData> Endpoint<P> {
    /// The endpoint of component `me`, numbering what it sends by `numbering` and remembering
    /// at most `max_peers` peers.
    pub fn addressed(me: JausId, numbering: Numbering, max_peers: usize) -> Self {
        Self::new(Some(me), numbering, max_peers)
    }

    /// An endpoint that takes every block whatever its destination and sends nothing (a
    /// passive observer of all traffic), remembering at most `max_links` (source, destination)
    /// pairs.
    pub fn promiscuous(max_links: usize) -> Self {
        Self::new(None, Numbering::OneCounter, max_links)
    }

    fn new(me: Option<JausId>, numbering: Numbering, max: usize) -> Self {
        Self {
            me,
            numbering,
            next_sequence: Rng::from_entropy().next_u64() as u16,
            recent_sent: VecDeque::with_capacity(RECENT_SENT),
            local_port: None,
            peers: Peers {
                map: HashMap::new(),
                max: max.max(1),
                pinned: Vec::new(),
                evicted: 0,
            },
            reassembler: Reassembler::default(),
            stats: EndpointStats::default(),
        }
    }

    /// The same endpoint numbering from `first` (tests that compare bytes; the default is a
    /// random first number).
    #[must_use]
    pub fn with_first_sequence(mut self, first: u16) -> Self {
        self.next_sequence = first;
        self
    }

    /// Our socket's local port: a block carrying our ID from another port is another
    /// client's, whatever its sequence number.
    pub fn set_local_port(&mut self, port: Option<u16>) {
        self.local_port = port;
    }

    /// The endpoint's component ID (`None` when promiscuous).
    pub fn id(&self) -> Option<JausId> {
        self.me
    }

    /// The counters.
    pub fn stats(&self) -> EndpointStats {
        EndpointStats {
            fragments_dropped: self.reassembler.dropped,
            evicted: self.peers.evicted,
            ..self.stats
        }
    }

    /// Keeps `ids` in the peer table whatever the bound (the client's followed arms, a
    /// bounded few), each at the address it has now: a block with one of these IDs from
    /// another address is [`InboundKind::Elsewhere`].
    pub fn pin(&mut self, ids: &[JausId]) {
        self.peers.pinned.clear();
        self.peers.pinned.extend_from_slice(ids);
    }

    /// Moves pinned (or any) peer `id` to `addr`, heard at `now`, with a fresh duplicate
    /// window (a peer that moved is usually a restarted process, numbering anew). For the
    /// owner, once the peer has answered its own query at `addr`.
    pub fn repin(&mut self, id: JausId, addr: SocketAddr, now: f64) {
        let key = self.key(id, id);
        let p = self.peers.entry(key, addr, now);
        p.addr = addr;
        p.last_heard = now;
        p.window = SeqWindow::new();
    }

    /// How many peers the table holds (at most the bound it was made with).
    pub fn peer_count(&self) -> usize {
        self.peers.map.len()
    }

    /// Fragments and bytes the reassembler holds now.
    pub fn reassembly_held(&self) -> (usize, usize) {
        (
            self.reassembler.held_fragments(),
            self.reassembler.held_bytes(),
        )
    }

    fn key(&self, source: JausId, destination: JausId) -> Link {
        link(source, self.me.unwrap_or(destination))
    }

    /// Peer `id` (addressed endpoints).
    pub fn peer(&self, id: JausId) -> Option<&Peer<P>> {
        self.me.and_then(|me| self.peers.map.get(&link(id, me)))
    }

    /// Peer `id`, writable (addressed endpoints).
    pub fn peer_mut(&mut self, id: JausId) -> Option<&mut Peer<P>> {
        let me = self.me?;
        self.peers.map.get_mut(&link(id, me))
    }

    /// Whether peer `id` is in the table.
    pub fn contains(&self, id: JausId) -> bool {
        self.peer(id).is_some()
    }

    /// Peer `id`, added at `addr` (as heard at `now`) if it is not in the table: a component
    /// learnt of some other way than hearing it (listed by another, named by the operator).
    /// On a promiscuous endpoint the key is (`id`, `id`), which no block uses.
    pub fn insert_peer(&mut self, id: JausId, addr: SocketAddr, now: f64) -> &mut Peer<P> {
        let key = self.key(id, id);
        self.peers.entry(key, addr, now)
    }

    /// Every peer with its ID (the source part of its key), in no particular order.
    pub fn peers_mut(&mut self) -> impl Iterator<Item = (JausId, &mut Peer<P>)> {
        self.peers.map.iter_mut().map(|(k, p)| (link_source(*k), p))
    }

    /// Starts taking in `bytes`, received at `now` from `from`. A datagram-level error (another
    /// JUDP version, legacy framing, garbage) is counted and returned; the datagram is dropped.
    pub fn receive<'a>(
        &mut self,
        now: f64,
        from: SocketAddr,
        bytes: &'a [u8],
    ) -> Result<Intake<'a>, DecodeError> {
        self.stats.datagrams += 1;
        match Datagram::new_checked(bytes) {
            Ok(dg) => Ok(Intake {
                blocks: dg.blocks_tolerant(),
                now,
                from,
            }),
            Err(e) => {
                if judp::is_foreign(&e) {
                    self.stats.foreign_version += 1;
                } else {
                    self.stats.malformed += 1;
                }
                Err(e)
            }
        }
    }

    /// Judges one block received at `now` from `from`.
    fn block<'a>(&mut self, now: f64, from: SocketAddr, block: &Block<&'a [u8]>) -> Inbound<'a> {
        let header = Header::parse(block);
        let judged = |kind| Inbound {
            header,
            kind,
            ack: None,
        };
        if self.me.is_some_and(|me| !header.destination.matches(me)) {
            self.stats.not_for_us += 1;
            return judged(InboundKind::NotForUs);
        }
        if header.source.is_wildcard() || header.source.has_reserved_zero() {
            self.stats.malformed += 1;
            return judged(InboundKind::BadSource);
        }
        if self.me == Some(header.source) {
            // Our own ID: our multicast echo (a number we sent, from our port), or another
            // client under the same ID. Never a peer.
            let ours = self.recent_sent.contains(&header.sequence)
                && self.local_port.is_none_or(|p| p == from.port());
            return judged(if ours {
                InboundKind::OwnEcho
            } else {
                InboundKind::SameId
            });
        }
        let key = self.key(header.source, header.destination);
        if self.peers.pinned.contains(&header.source)
            && let Some(p) = self.peers.map.get(&key)
            && p.addr != from
        {
            // A followed arm's ID from elsewhere: nothing of ours changes (address, time
            // heard, duplicate window, reassembly, ACK); the owner judges the message.
            self.stats.elsewhere += 1;
            let message = (header.data_flags == DataFlags::Single
                && !matches!(header.ack_nak, AckNak::Ack | AckNak::Nak))
            .then(|| Cow::Borrowed(block.payload_slice()));
            return judged(InboundKind::Elsewhere(message));
        }
        let peer = self.peers.heard(key, from, now);
        let mut ack = None;
        if self.me.is_some()
            && header.ack_nak == AckNak::Request
            && let Ok(d) = judp::single(&header.ack(), &[])
        {
            self.stats.acks_sent += 1;
            self.stats.sent += 1;
            ack = Some(d);
        }
        let payload = block.payload_slice();
        let kind = if matches!(header.ack_nak, AckNak::Ack | AckNak::Nak) {
            if block.ack_payload_len() > 0 {
                self.stats.ack_payloads += 1;
            }
            InboundKind::Ack
        } else if header.data_flags == DataFlags::Single {
            if peer.window.duplicate(header.sequence, now) {
                self.stats.duplicates += 1;
                InboundKind::Duplicate
            } else {
                InboundKind::Message(Cow::Borrowed(payload))
            }
        } else {
            match self.reassembler.push(now, &header, payload) {
                Reassembly::Complete(m) => {
                    if peer.window.duplicate(header.sequence, now) {
                        self.stats.duplicates += 1;
                        InboundKind::Duplicate
                    } else {
                        self.stats.reassembled += 1;
                        InboundKind::Message(Cow::Owned(m))
                    }
                }
                Reassembly::Pending | Reassembly::Refused => InboundKind::Fragment,
            }
        };
        Inbound { header, kind, ack }
    }

    /// Drops fragments that waited longer than the reassembly timeout.
    pub fn expire(&mut self, now: f64) {
        self.reassembler.expire(now);
    }

    /// Frames `message` (with its message ID) from us to `to` and hands each datagram to
    /// `out`: at `via` when given (discovery, to an address rather than a peer), else at the
    /// peer's address; nothing when neither is known, or when promiscuous. `broadcast` sets the
    /// flags. A block that cannot be framed is counted and its error returned (after the
    /// others are handed over).
    pub fn send(
        &mut self,
        to: JausId,
        via: Option<SocketAddr>,
        broadcast: Broadcast,
        message: &[u8],
        out: impl FnMut(SocketAddr, Vec<u8>),
    ) -> Result<(), EncodeError> {
        self.send_framed(to, via, broadcast, AckNak::None, message, out)
            .map(|_| ())
    }

    /// [`Endpoint::send`] to the peer `to` with the JUDP ACK requested (§4.5): the block's
    /// sequence number, which the peer's ACK carries back (`None` when nothing was sent, or
    /// the message needs more than one block: only a single block asks). The receiver
    /// acknowledges a block it took in, so an ACK is the evidence that the command arrived.
    pub fn send_acked(
        &mut self,
        to: JausId,
        message: &[u8],
        out: impl FnMut(SocketAddr, Vec<u8>),
    ) -> Result<Option<u16>, EncodeError> {
        if message.len() > judp::PREFERRED_BLOCK_PAYLOAD {
            return self
                .send_framed(to, None, Broadcast::None, AckNak::None, message, out)
                .map(|_| None);
        }
        self.send_framed(to, None, Broadcast::None, AckNak::Request, message, out)
    }

    fn send_framed(
        &mut self,
        to: JausId,
        via: Option<SocketAddr>,
        broadcast: Broadcast,
        ack_nak: AckNak,
        message: &[u8],
        mut out: impl FnMut(SocketAddr, Vec<u8>),
    ) -> Result<Option<u16>, EncodeError> {
        let Some(me) = self.me else { return Ok(None) };
        let max = judp::PREFERRED_BLOCK_PAYLOAD;
        let blocks = message.len().div_ceil(max).max(1);
        let peer = self.peers.map.get(&link(to, me));
        let Some(addr) = via.or(peer.map(|p| p.addr)) else {
            return Ok(None);
        };
        let sequence = take_sequence(self.numbering, &mut self.next_sequence, blocks as u16);
        for i in 0..blocks as u16 {
            if self.recent_sent.len() == RECENT_SENT {
                self.recent_sent.pop_front();
            }
            self.recent_sent.push_back(sequence.wrapping_add(i));
        }
        let header = Header {
            broadcast,
            ack_nak,
            ..Header::new(to, me, sequence)
        };
        if blocks == 1 {
            return match judp::single(&header, message) {
                Ok(d) => {
                    self.stats.sent += 1;
                    out(addr, d);
                    Ok(Some(sequence))
                }
                Err(e) => {
                    self.stats.encode_errors += 1;
                    Err(e)
                }
            };
        }
        let mut result = Ok(());
        for (h, chunk) in judp::fragment(&header, message, max) {
            match judp::single(&h, chunk) {
                Ok(d) => {
                    self.stats.sent += 1;
                    out(addr, d);
                }
                Err(e) => {
                    self.stats.encode_errors += 1;
                    if result.is_ok() {
                        result = Err(e);
                    }
                }
            }
        }
        result.map(|()| Some(sequence))
    }
}

/// The first sequence number of the next `blocks` blocks, advancing `counter`. The one place
/// the numbering policy applies.
fn take_sequence(numbering: Numbering, counter: &mut u16, blocks: u16) -> u16 {
    match numbering {
        Numbering::OneCounter => {
            let s = *counter;
            *counter = s.wrapping_add(blocks);
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: JausId = JausId::new(126, 1, 10);
    const A: JausId = JausId::new(200, 1, 1);
    const B: JausId = JausId::new(200, 1, 2);

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn kinds(ep: &mut Endpoint, now: f64, bytes: &[u8]) -> Vec<InboundKind<'static>> {
        kinds_from(ep, now, addr(1), bytes)
    }

    fn kinds_from(
        ep: &mut Endpoint,
        now: f64,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Vec<InboundKind<'static>> {
        let mut intake = ep.receive(now, from, bytes).unwrap();
        let mut v = Vec::new();
        while let Some(item) = intake.next(ep) {
            v.push(item.unwrap().kind.into_owned());
        }
        v
    }

    /// The duplicate rule as the client had it: a linear scan of the window.
    fn linear(recent: &mut VecDeque<(u16, f64)>, seq: u16, now: f64) -> bool {
        while recent
            .front()
            .is_some_and(|(_, t)| now - t > DUPLICATE_WINDOW_S)
        {
            recent.pop_front();
        }
        if recent.iter().any(|(s, _)| *s == seq) {
            return true;
        }
        if recent.len() >= DUPLICATE_MEMORY {
            recent.pop_front();
        }
        recent.push_back((seq, now));
        false
    }

    #[test]
    fn seq_window_answers_as_a_scan_of_the_window_does() {
        let (mut recent, mut window) = (VecDeque::new(), SeqWindow::new());
        let (mut x, mut now, mut dups) = (1u64, 0.0, 0);
        for i in 0..200_000u32 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            // Mostly the next number; sometimes a recent one again, a far one, or a pause.
            let seq = match x >> 60 {
                0 => (i as u16).wrapping_sub((x >> 40) as u16 % 300),
                1 => (x >> 20) as u16,
                _ => i as u16,
            };
            now += if x >> 58 == 63 { 2.5 } else { 20e-6 };
            let a = linear(&mut recent, seq, now);
            assert_eq!(a, window.duplicate(seq, now), "at {i}");
            dups += u32::from(a);
        }
        assert!(dups > 1000);
    }

    #[test]
    fn duplicates_are_dropped_per_source_and_acks_answered_once_each() {
        let mut ep: Endpoint = Endpoint::addressed(ME, Numbering::OneCounter, 8);
        let h = Header {
            ack_nak: AckNak::Request,
            ..Header::new(ME, A, 7)
        };
        let d = judp::single(&h, &[0x02, 0x20]).unwrap();
        assert_eq!(
            kinds(&mut ep, 0.0, &d),
            [InboundKind::Message(Cow::Owned(vec![0x02, 0x20]))]
        );
        assert_eq!(kinds(&mut ep, 1.0, &d), [InboundKind::Duplicate]);
        // Another source may use the same number; after the window, so may the first.
        let other = judp::single(&Header::new(ME, B, 7), &[0x02, 0x20]).unwrap();
        assert!(matches!(
            kinds(&mut ep, 1.0, &other)[0],
            InboundKind::Message(_)
        ));
        assert!(matches!(
            kinds(&mut ep, 3.5, &d)[0],
            InboundKind::Message(_)
        ));
        let s = ep.stats();
        assert_eq!((s.duplicates, s.acks_sent, s.sent), (1, 3, 3));
    }

    #[test]
    fn a_promiscuous_endpoint_keys_duplicates_by_source_and_destination() {
        let mut ep: Endpoint = Endpoint::promiscuous(8);
        let to_a = judp::single(&Header::new(A, ME, 1), &[0x02, 0x20]).unwrap();
        let to_b = judp::single(&Header::new(B, ME, 1), &[0x02, 0x20]).unwrap();
        assert!(matches!(
            kinds(&mut ep, 0.0, &to_a)[0],
            InboundKind::Message(_)
        ));
        assert!(matches!(
            kinds(&mut ep, 0.0, &to_b)[0],
            InboundKind::Message(_)
        ));
        assert_eq!(kinds(&mut ep, 0.1, &to_b), [InboundKind::Duplicate]);
        assert_eq!(ep.stats().not_for_us, 0);
    }

    #[test]
    fn the_peer_table_forgets_the_least_recently_heard_but_not_the_pinned() {
        let mut ep: Endpoint = Endpoint::addressed(ME, Numbering::OneCounter, 2);
        let from = |id: JausId| judp::single(&Header::new(ME, id, 1), &[0x02, 0x20]).unwrap();
        let c = JausId::new(200, 1, 3);
        ep.pin(&[A]);
        kinds(&mut ep, 0.0, &from(A));
        kinds(&mut ep, 1.0, &from(B));
        kinds(&mut ep, 2.0, &from(c));
        assert!(ep.contains(A), "pinned, though least recently heard");
        assert!(!ep.contains(B));
        assert!(ep.contains(c));
    }

    #[derive(Debug, Default)]
    struct Valued(bool);

    impl PeerData for Valued {
        fn valued(&self, _now: f64) -> bool {
            self.0
        }
    }

    #[test]
    fn a_full_table_forgets_strangers_before_valued_peers() {
        let mut ep: Endpoint<Valued> = Endpoint::addressed(ME, Numbering::OneCounter, 3);
        let from = |id: JausId| judp::single(&Header::new(ME, id, 1), &[0x02, 0x20]).unwrap();
        let heard = |ep: &mut Endpoint<Valued>, now: f64, id: JausId| {
            let bytes = from(id);
            let mut intake = ep.receive(now, addr(1), &bytes).unwrap();
            while intake.next(ep).is_some() {}
        };
        heard(&mut ep, 0.0, A);
        ep.peer_mut(A).unwrap().data.0 = true;
        // A thousand strangers later, the valued peer heard first of all is still there.
        for i in 0..1000u16 {
            heard(&mut ep, 1.0 + f64::from(i), JausId::new(300 + i, 1, 1));
            assert!(ep.peer_count() <= 3);
        }
        assert!(ep.contains(A));
        assert_eq!(ep.stats().evicted, 998);
    }

    #[test]
    fn a_pinned_peer_from_another_address_changes_nothing() {
        let mut ep: Endpoint = Endpoint::addressed(ME, Numbering::OneCounter, 8);
        let request = Header {
            ack_nak: AckNak::Request,
            ..Header::new(ME, A, 40)
        };
        let real = judp::single(&request, &[0x02, 0x20]).unwrap();
        kinds_from(&mut ep, 0.0, addr(1), &real);
        ep.pin(&[A]);
        // The same ID from elsewhere, with the arm's next sequence number and an ACK request.
        let spoof = judp::single(
            &Header {
                ack_nak: AckNak::Request,
                ..Header::new(ME, A, 41)
            },
            &[0x02, 0x20],
        )
        .unwrap();
        let mut intake = ep.receive(1.0, addr(2), &spoof).unwrap();
        let inbound = intake.next(&mut ep).unwrap().unwrap();
        assert_eq!(
            inbound.kind.into_owned(),
            InboundKind::Elsewhere(Some(Cow::Owned(vec![0x02, 0x20])))
        );
        assert!(inbound.ack.is_none(), "a spoofer was acknowledged");
        let peer = ep.peer(A).unwrap();
        assert_eq!(peer.addr, addr(1));
        assert_eq!(peer.last_heard, 0.0);
        // The real arm's next number is not burnt as a duplicate.
        let next = judp::single(&Header::new(ME, A, 41), &[0x02, 0x20]).unwrap();
        assert!(matches!(
            kinds_from(&mut ep, 2.0, addr(1), &next)[..],
            [InboundKind::Message(_)]
        ));
        assert_eq!(ep.stats().elsewhere, 1);
        // Re-pinned at the new address (the owner's decision), the old one is elsewhere.
        ep.repin(A, addr(2), 3.0);
        assert!(matches!(
            kinds_from(&mut ep, 3.5, addr(1), &next)[..],
            [InboundKind::Elsewhere(_)]
        ));
        assert!(matches!(
            kinds_from(&mut ep, 3.5, addr(2), &next)[..],
            [InboundKind::Message(_)]
        ));
    }

    #[test]
    fn sends_number_per_peer_and_fragment_large_messages() {
        let mut ep: Endpoint =
            Endpoint::addressed(ME, Numbering::OneCounter, 8).with_first_sequence(0);
        let mut sent = Vec::new();
        // Unknown destination: only with an address, numbered 0.
        ep.send(A, None, Broadcast::None, &[1, 2], |a, d| sent.push((a, d)))
            .unwrap();
        assert!(sent.is_empty());
        ep.send(A, Some(addr(9)), Broadcast::Global, &[1, 2], |a, d| {
            sent.push((a, d));
        })
        .unwrap();
        ep.insert_peer(A, addr(5), 0.0);
        let big = vec![7u8; 3000];
        ep.send(A, None, Broadcast::None, &big, |a, d| sent.push((a, d)))
            .unwrap();
        ep.send(A, None, Broadcast::None, &[1, 2], |a, d| sent.push((a, d)))
            .unwrap();
        let seqs: Vec<(SocketAddr, u16, DataFlags)> = sent
            .iter()
            .map(|(a, d)| {
                let b = Datagram::new_checked(d).unwrap().blocks().next().unwrap();
                let h = Header::parse(&b.unwrap().block);
                (*a, h.sequence, h.data_flags)
            })
            .collect();
        assert_eq!(
            seqs,
            [
                (addr(9), 0, DataFlags::Single),
                (addr(5), 1, DataFlags::First),
                (addr(5), 2, DataFlags::Middle),
                (addr(5), 3, DataFlags::Last),
                (addr(5), 4, DataFlags::Single),
            ]
        );
        assert_eq!(ep.stats().sent, 5);
    }

    #[test]
    fn one_counter_numbers_every_destination_discovery_included() {
        // Issue 13 item 1 (§9 C12): a peer keying repeats by (source, sequence) alone must
        // never see one number twice, whatever the destinations.
        let mut ep: Endpoint =
            Endpoint::addressed(ME, Numbering::OneCounter, 8).with_first_sequence(0);
        ep.insert_peer(A, addr(5), 0.0);
        ep.insert_peer(B, addr(6), 0.0);
        let mut sent = Vec::new();
        for _ in 0..3 {
            ep.send(
                JausId::BROADCAST,
                Some(addr(9)),
                Broadcast::Global,
                &[1, 2],
                |a, d| {
                    sent.push((a, d));
                },
            )
            .unwrap();
            ep.send(A, None, Broadcast::None, &[1, 2], |a, d| sent.push((a, d)))
                .unwrap();
            ep.send(B, None, Broadcast::None, &[1, 2], |a, d| sent.push((a, d)))
                .unwrap();
        }
        let seqs: Vec<u16> = sent
            .iter()
            .map(|(_, d)| {
                let b = Datagram::new_checked(d).unwrap().blocks().next().unwrap();
                Header::parse(&b.unwrap().block).sequence
            })
            .collect();
        assert_eq!(seqs, (0..9).collect::<Vec<u16>>());
    }

    #[test]
    fn an_ack_carrying_a_payload_is_skipped_counted_and_the_next_block_decoded() {
        // Issue 13 item 3 (§9 C11): ACK block with 3 payload bytes (size 17), then ConfirmControl.
        let mut ep: Endpoint = Endpoint::addressed(ME, Numbering::OneCounter, 8);
        let mut d = vec![0x02];
        d.extend_from_slice(&[0x00, 17, 0x00, 0x31]);
        d.extend_from_slice(&ME.to_bytes());
        d.extend_from_slice(&A.to_bytes());
        d.extend_from_slice(&[0x0d, 0x00, 0xc8, 0x01, 0x00]);
        d.extend_from_slice(&[0x00, 17, 0x00, 0x01]);
        d.extend_from_slice(&ME.to_bytes());
        d.extend_from_slice(&A.to_bytes());
        d.extend_from_slice(&[0x0f, 0x00, 0x00, 0x02, 0x00]);
        assert_eq!(
            kinds(&mut ep, 0.0, &d),
            [
                InboundKind::Ack,
                InboundKind::Message(Cow::Owned(vec![0x0f, 0x00, 0x00]))
            ]
        );
        assert_eq!(ep.stats().ack_payloads, 1);
        assert_eq!(ep.stats().malformed, 0);
    }

    #[test]
    fn two_endpoints_of_one_id_start_numbering_apart() {
        // Issue 18 item 2: a second process under the same ID must not repeat the first's
        // numbers (a receiver drops a repeated (source, sequence) within its window). Random
        // first numbers: two of ten endpoints may share one by chance (1 in 65,536 per pair),
        // so the test asks only that they are not all equal.
        let firsts: Vec<u16> = (0..10)
            .map(|_| {
                let mut ep: Endpoint = Endpoint::addressed(ME, Numbering::OneCounter, 8);
                let mut seq = None;
                ep.send(A, Some(addr(9)), Broadcast::None, &[1, 2], |_, d| {
                    let b = Datagram::new_checked(&d).unwrap().blocks().next().unwrap();
                    seq = Some(Header::parse(&b.unwrap().block).sequence);
                })
                .unwrap();
                seq.unwrap()
            })
            .collect();
        assert!(firsts.iter().any(|s| *s != firsts[0]), "{firsts:?}");
    }

    #[test]
    fn our_own_id_is_an_echo_when_we_sent_it_and_another_client_otherwise() {
        let mut ep: Endpoint =
            Endpoint::addressed(ME, Numbering::OneCounter, 8).with_first_sequence(100);
        ep.set_local_port(Some(5000));
        let mut sent = Vec::new();
        ep.send(
            JausId::BROADCAST,
            Some(addr(9)),
            Broadcast::Global,
            &[1, 2],
            |_, d| {
                sent.push(d);
            },
        )
        .unwrap();
        let ours = SocketAddr::from(([127, 0, 0, 1], 5000));
        // Our multicast echo: our number, from our port.
        assert_eq!(
            kinds_from(&mut ep, 0.0, ours, &sent[0]),
            [InboundKind::OwnEcho]
        );
        // The same bytes from another port: another process under our ID.
        let other = SocketAddr::from(([127, 0, 0, 1], 5001));
        assert_eq!(
            kinds_from(&mut ep, 0.0, other, &sent[0]),
            [InboundKind::SameId]
        );
        // From our port with a number we never sent: not ours either.
        let foreign = judp::single(&Header::new(JausId::BROADCAST, ME, 7), &[1, 2]).unwrap();
        assert_eq!(
            kinds_from(&mut ep, 0.0, ours, &foreign),
            [InboundKind::SameId]
        );
        assert!(!ep.contains(ME), "our own ID is never a peer");
    }
}
