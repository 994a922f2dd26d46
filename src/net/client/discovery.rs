//! Discovery and the components found: `QueryIdentification` to the multicast group and every
//! `--connect` address, `QueryServices` to each responder, every listed component recorded
//! (marked lost after a silence), and the selection of the arm to work with.
//!
//! Every sender is untrusted (JAUS has no authentication), so what discovery takes is bounded
//! and solicited:
//! - A discovery report is taken only as the answer to a query of ours: a
//!   `ReportIdentification` from an address we queried (a `--connect` address, or anyone
//!   while a multicast query is recent), a `ReportServices` from a component we asked for its
//!   services (or from a `--connect` address we asked) within [`SOLICIT_WINDOW`]. Others are
//!   counted (`NetStats::unsolicited`), said once, never applied.
//! - At most [`MAX_OUTSTANDING`] services queries are outstanding at once; past that an
//!   identification is counted as unsolicited rather than asked about.
//! - A report names at most [`MAX_LISTED`] components; the rest are counted, not taken.
//! - A component that answered our own query is *valued* for [`VALUED_FOR`]: when the peer
//!   table (at most `MAX_COMPONENTS`) is full, strangers that never did are forgotten first,
//!   a followed arm never.
//! - A manipulator is followed only once it has answered our own services query itself, from
//!   its address (a report by another component naming it only makes us ask it); it is then
//!   pinned to that address (`Endpoint::pin`).

use std::net::SocketAddr;

use super::arm::{FollowedArm, MOVE_PROBES};
use super::{Client, MAX_LISTED, Output};
use crate::jaus::JausId;
use crate::jaus::Message;
use crate::jaus::core::{
    CancelEvent, QueryIdentification, QueryServices, QueryServicesNode, QueryType, ReleaseControl,
    ReportIdentification, ReportServices,
};
use crate::model::update::{
    ArmFact, ComponentId, ComponentInfo, ControlState, LinkState, MAX_ARMS, NetFact, Remark,
};
use crate::net::endpoint::PeerData;
use crate::net::reports;

/// How long after a query of ours its answer is taken, s (answers come within milliseconds;
/// a late one is asked again by the next round).
pub(super) const SOLICIT_WINDOW: f64 = 5.0;
/// Most services queries outstanding at once (each identification from a new component asks
/// one; a flood of identifications must not make us a sender of as many queries).
pub(super) const MAX_OUTSTANDING: usize = 64;
/// How long a component that answered our own query is kept ahead of strangers, s.
pub(super) const VALUED_FOR: f64 = 30.0;

use super::sub::SubState;

/// What the client knows of a peer besides what the endpoint keeps (address, time heard).
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub(super) identification: Option<String>,
    pub(super) services: Vec<(String, u8, u8)>,
    pub(super) services_asked: f64,
    pub(super) lost: bool,
    /// When it last answered a services query of ours (valued until [`VALUED_FOR`] after).
    pub(super) answered: f64,
    /// What was last published of it ([`NetFact::Component`] goes out only on a change).
    pub(super) published: Option<ComponentInfo>,
}

impl PeerData for Known {
    fn valued(&self, now: f64) -> bool {
        now - self.answered <= VALUED_FOR
    }
}

impl Default for Known {
    fn default() -> Self {
        Self {
            identification: None,
            services: Vec::new(),
            services_asked: f64::NEG_INFINITY,
            lost: false,
            answered: f64::NEG_INFINITY,
            published: None,
        }
    }
}

impl Known {
    pub(super) fn is_manipulator(&self) -> bool {
        reports::is_manipulator(&self.services)
    }

    pub(super) fn offers(&self, uri: &str) -> bool {
        // Before ReportServices arrives we do not know, so we try.
        self.services.is_empty() || self.services.iter().any(|(u, _, _)| u == uri)
    }
}

impl Client {
    /// A block from `id` arrived (the endpoint has refreshed its address and time): a lost
    /// component is back, and the selected arm's link may come back too.
    pub(super) fn heard(&mut self, now: f64, id: JausId, out: &mut Output) {
        if let Some(p) = self.endpoint.peer_mut(id)
            && p.data.lost
        {
            p.data.lost = false;
            out.net(NetFact::ComponentLost {
                t: now,
                id: id.into(),
                lost: false,
            });
        }
        if self.follows(id) {
            self.with_arm(id, out, |c, out| c.arm_heard(now, id, out));
        }
    }

    /// A `ReportIdentification` from `from` at `addr`: taken only as the answer to a
    /// discovery query of ours; its services are asked for when unknown or old (within the
    /// bound of queries outstanding).
    pub(super) fn identified(
        &mut self,
        now: f64,
        from: JausId,
        addr: SocketAddr,
        r: ReportIdentification,
        out: &mut Output,
    ) {
        let asked_there = self.asked_at(addr, now) || self.follows(from);
        if !asked_there {
            self.unsolicited(now, "ReportIdentification", out);
            return;
        }
        let period = self.cfg.discovery_period;
        let retry = self.cfg.retry;
        let room = self.outstanding(now) < MAX_OUTSTANDING;
        let Some(p) = self.endpoint.peer_mut(from) else {
            return;
        };
        let p = &mut p.data;
        p.identification = Some(r.identification);
        let due = now - p.services_asked > period * 5.0
            || p.services.is_empty() && now - p.services_asked >= retry;
        if !due {
            return;
        }
        if !room {
            self.unsolicited(
                now,
                "ReportIdentification (too many queries outstanding)",
                out,
            );
            return;
        }
        p.services_asked = now;
        self.services_asked.push_back((from, now));
        self.send(from, QueryServices::all(), out);
    }

    /// Whether a discovery query of ours went to `addr` (a `--connect` address) or to the
    /// multicast group within [`SOLICIT_WINDOW`] of `now`.
    pub(super) fn asked_at(&self, addr: SocketAddr, now: f64) -> bool {
        now - self.multicast_asked <= SOLICIT_WINDOW
            || self
                .connect_asked
                .iter()
                .any(|(a, t)| *a == addr && now - t <= SOLICIT_WINDOW)
    }

    /// Services queries outstanding at `now` (sent within [`SOLICIT_WINDOW`], not answered).
    pub(super) fn outstanding(&mut self, now: f64) -> usize {
        while self
            .services_asked
            .front()
            .is_some_and(|(_, t)| now - t > SOLICIT_WINDOW)
        {
            self.services_asked.pop_front();
        }
        self.services_asked.len()
    }

    /// Whether a `ReportServices` from `from` at `addr` answers a query of ours: we asked
    /// `from` itself, or the `--connect` address it came from, within [`SOLICIT_WINDOW`].
    pub(super) fn services_solicited(&self, from: JausId, addr: SocketAddr, now: f64) -> bool {
        let asked_peer = self
            .endpoint
            .peer(from)
            .is_some_and(|p| now - p.data.services_asked <= SOLICIT_WINDOW);
        let asked_addr = self
            .connect_asked
            .iter()
            .any(|(a, t)| *a == addr && now - t <= SOLICIT_WINDOW);
        asked_peer || asked_addr
    }

    /// A discovery report nobody asked for: counted, said once, not applied.
    pub(super) fn unsolicited(&mut self, now: f64, what: &str, out: &mut Output) {
        self.stats.unsolicited += 1;
        self.warn_once(
            now,
            super::Warned::Unsolicited,
            format!(
                "a {what} that no query of ours asked for was ignored: discovery answers are taken only from where we asked, and the bound of queries outstanding is {MAX_OUTSTANDING} (every such report is counted: 'unsolicited')"
            ),
            out,
        );
    }

    /// A `ReportServices` from `from` at `addr`: each component it lists (its records merged,
    /// wire reference §9 C13) is recorded with this report's list, which replaces an earlier
    /// report's; every manipulator is followed (up to [`MAX_ARMS`]), and the first (or the
    /// configured one) focused.
    pub(super) fn services_reported(
        &mut self,
        now: f64,
        from: JausId,
        addr: SocketAddr,
        r: &ReportServices,
        out: &mut Output,
    ) {
        if !self.services_solicited(from, addr, now) {
            self.unsolicited(now, "ReportServices", out);
            return;
        }
        self.services_asked.retain(|(id, _)| *id != from);
        if let Some(p) = self.endpoint.peer_mut(from) {
            p.data.answered = now;
        }
        let (listed, past) = reports::listed_services_bounded(from, r, MAX_LISTED);
        if past > 0 {
            self.stats.unsolicited += past as u64;
            self.warn_once(
                now,
                super::Warned::TooManyListed,
                format!(
                    "{from} listed more than {MAX_LISTED} components in one ReportServices; the first {MAX_LISTED} were taken, the rest counted ('unsolicited')"
                ),
                out,
            );
        }
        for listed in listed {
            // §9 C8: wildcard IDs in the body are never a component; the sender is.
            let id = listed.id;
            let wildcard = listed.wildcard_records > 0;
            self.stats.tolerated.wildcard_services += listed.wildcard_records;
            let identification = self
                .endpoint
                .peer(from)
                .and_then(|p| p.data.identification.clone());
            let peer = self.endpoint.insert_peer(id, addr, now);
            let known = &mut peer.data;
            reports::take_services(&mut known.services, listed.services);
            // Each such reply (the wildcard queries are paced by `identified`) is followed
            // by one specific query until the services are known.
            let ask_specifically = wildcard && known.services.is_empty();
            if known.identification.is_none() {
                known.identification = identification;
            }
            let info = ComponentInfo {
                id: id.into(),
                address: peer.addr,
                identification: peer.data.identification.clone(),
                services: peer.data.services.clone(),
                manipulator: peer.data.is_manipulator(),
            };
            let manipulator = info.manipulator;
            // Said only when something changed: a component answering every round costs
            // the UI nothing.
            if peer.data.published.as_ref() != Some(&info) {
                peer.data.published = Some(info.clone());
                out.net(NetFact::Component { t: now, info });
            }
            if ask_specifically {
                // The peer echoed our wildcards and listed nothing: ask with its own node
                // and component, which such a peer answers properly.
                let q = QueryServices {
                    nodes: vec![QueryServicesNode {
                        node_id: from.node,
                        components: vec![from.component],
                    }],
                };
                if let Some(p) = self.endpoint.peer_mut(from) {
                    p.data.services_asked = now;
                }
                self.send(from, q, out);
            }
            if manipulator && id != from && !self.follows(id) {
                // Named by another component: followed once it answers our own query itself.
                let ask = self
                    .endpoint
                    .peer(id)
                    .is_some_and(|p| now - p.data.services_asked > self.cfg.retry);
                if ask && self.outstanding(now) < MAX_OUTSTANDING {
                    if let Some(p) = self.endpoint.peer_mut(id) {
                        p.data.services_asked = now;
                    }
                    self.services_asked.push_back((id, now));
                    self.send(id, QueryServices::all(), out);
                }
            } else if manipulator {
                self.follow(now, id, out);
                if self.focus.is_none() && self.cfg.component.is_none_or(|c| c == id) {
                    self.focus_on(now, id, out);
                }
            }
        }
    }

    /// A block with followed arm `id`'s ID from `addr`, not the address it was found at (the
    /// endpoint changed nothing): counted as spoofed, said once, never applied. While the arm
    /// is silent where it was found (its link lost) it may have moved: `addr` is asked for
    /// its services (at most [`MOVE_PROBES`] addresses, each at most every `retry` s), and an
    /// answer from the arm itself there, naming it a manipulator, re-pins it (said to the
    /// operator).
    pub(super) fn arm_elsewhere(
        &mut self,
        now: f64,
        id: JausId,
        addr: SocketAddr,
        message: Option<&[u8]>,
        out: &mut Output,
    ) {
        let Some(pinned) = self.endpoint.peer(id).map(|p| p.addr) else {
            return;
        };
        // Another component under its ID that answered our own discovery is no spoofer.
        if self.elsewhere_conflict(now, id, pinned, addr, message, out) {
            return;
        }
        self.warn_once(
            now,
            super::Warned::Spoofed,
            format!(
                "a datagram from {addr} carried the ID of arm {id}, which was found at \
                 {pinned}: not applied. Facts about an arm are taken only from where it was \
                 found; an arm that really moved is followed at its new address once it is \
                 silent at the old one and answers our query at the new. Further ones are \
                 counted ('spoofed')"
            ),
            out,
        );
        let retry = self.cfg.retry;
        let Some(arm) = self.arms.get_mut(&id) else {
            return;
        };
        if arm.link != LinkState::Lost {
            return;
        }
        arm.move_probes.retain(|(_, t)| now - t <= SOLICIT_WINDOW);
        let asked = arm
            .move_probes
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|p| p.1);
        let answer = asked.is_some()
            && message
                .and_then(|m| Message::parse_with(m, &crate::jaus::DecodeContext::NONE).ok())
                .is_some_and(|m| match m {
                    Message::ReportServices(r) => {
                        reports::listed_services_bounded(id, &r, MAX_LISTED)
                            .0
                            .iter()
                            .any(|l| l.id == id && reports::is_manipulator(&l.services))
                    }
                    _ => false,
                });
        if answer {
            let silent = now - arm.last_heard;
            arm.move_probes.clear();
            self.endpoint.repin(id, addr, now);
            if let Some(p) = self.endpoint.peer_mut(id) {
                p.data.answered = now;
            }
            self.say_address(now, id, out);
            out.arm(
                id,
                Remark::Error {
                    t: now,
                    message: format!(
                        "arm {id} moved: silent at {pinned} for {silent:.1} s, it answered our \
                         query at {addr}; followed there from now on"
                    ),
                },
            );
            self.heard(now, id, out);
            return;
        }
        let due = asked.is_none_or(|t| now - t >= retry);
        if due && (asked.is_some() || arm.move_probes.len() < MOVE_PROBES) {
            arm.move_probes.retain(|(a, _)| *a != addr);
            arm.move_probes.push((addr, now));
            let q: Message = QueryServices::all().into();
            self.send_to_addr(Some(addr), id, false, &q, out);
        }
    }

    /// Starts following manipulator `id` (its setup queries, subscriptions, link and
    /// control), unless it is followed already; past [`MAX_ARMS`] it is not, and the
    /// operator is told once.
    pub(super) fn follow(&mut self, now: f64, id: JausId, out: &mut Output) -> bool {
        if self.follows(id) {
            return true;
        }
        if self.arms.len() >= MAX_ARMS {
            self.stats.arms_not_followed += 1;
            if !self.warned_too_many {
                self.warned_too_many = true;
                out.remark(Remark::Error {
                    t: now,
                    message: format!(
                        "manipulator {id} found, but {MAX_ARMS} arms are followed already (the \
                         most at once): it is listed, not followed. Focus it by ID \
                         (--component {id}) in a session of its own."
                    ),
                });
            }
            return false;
        }
        self.arms.insert(id, FollowedArm::new(id, self.cfg.id, now));
        // A followed arm is never forgotten to make room for another peer.
        let pinned: Vec<JausId> = self.arms.keys().copied().collect();
        self.endpoint.pin(&pinned);
        self.say_address(now, id, out);
        let arm = ComponentId::from(id);
        out.arm(
            arm,
            ArmFact::Link {
                t: now,
                state: LinkState::Connecting,
            },
        );
        out.arm(
            arm,
            ArmFact::Control {
                t: now,
                state: ControlState::Released,
            },
        );
        true
    }

    /// Focuses followed arm `id`: the operator's commands go to it from now on.
    pub(super) fn focus_on(&mut self, now: f64, id: JausId, out: &mut Output) {
        self.focus = Some(id);
        out.net(NetFact::Selected {
            t: now,
            id: id.into(),
        });
    }

    /// Every unicast address discovery queries: the `--connect` ones first, then the
    /// implicit ones (`ClientConfig::implicit`) not among them.
    pub(super) fn queried(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        let named = &self.cfg.connect;
        named
            .iter()
            .chain(self.cfg.implicit.iter().filter(|a| !named.contains(a)))
            .copied()
    }

    /// The first address discovery queries (the first `--connect` one): where an arm named
    /// before it is found is tried.
    pub(super) fn first_queried(&self) -> Option<SocketAddr> {
        self.queried().next()
    }

    /// The queried addresses where no followed arm answers yet (nor the other component of
    /// an arm's address conflict: it answered, and is not followed on purpose).
    pub(super) fn unfollowed_connect(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.queried().filter(|addr| {
            !self.arms.iter().any(|(id, arm)| {
                self.endpoint.peer(*id).is_some_and(|p| p.addr == *addr)
                    || arm.address_conflict.is_some_and(|c| c.other == *addr)
            })
        })
    }

    /// Cancels every followed arm's events and releases control of each.
    pub(super) fn teardown(&mut self, now: f64, out: &mut Output) {
        let ids: Vec<JausId> = self.arms.keys().copied().collect();
        for id in ids {
            self.with_arm(id, out, |c, out| c.teardown_arm(now, out));
        }
        self.arms.clear();
        self.endpoint.pin(&[]);
    }

    /// Cancels the events of the arm in hand and releases its control.
    fn teardown_arm(&mut self, now: f64, out: &mut Output) {
        // A jog streaming is stopped first (an explicit zero), then control released; a stop
        // still waiting for the arm's word is said as not confirmed.
        self.jog_stop_now(now, out);
        self.stop_abandoned(now, out);
        self.leave_address(out);
        self.arm = None;
    }

    /// Undoes at its address what the arm in hand set up there: its events cancelled, control
    /// released (what we want of it is kept: it may be set up again elsewhere).
    pub(super) fn leave_address(&mut self, out: &mut Output) {
        let Some(s) = &self.arm else { return };
        let id = s.id;
        let events: Vec<u8> = s
            .subs
            .iter()
            .filter_map(|sub| match sub.state {
                SubState::Active { event_id, .. } => Some(event_id),
                _ => None,
            })
            .collect();
        let release = matches!(
            s.control,
            ControlState::Held { .. } | ControlState::Requested
        );
        for event_id in events {
            let rid = self.request_id();
            self.send(
                id,
                CancelEvent {
                    request_id: rid,
                    event_id,
                },
                out,
            );
        }
        if release {
            self.send(id, ReleaseControl, out);
        }
    }

    /// A discovery round: `QueryIdentification` to the multicast group and every `--connect`
    /// address when `full`, else (a fast round) only to the addresses where no arm answers
    /// yet, and to the group while no arm is followed; each address without an arm is also
    /// asked for its services at once (the answer names the component and follows it: one
    /// round trip instead of two, which counts on a lossy link).
    pub(super) fn discover(&mut self, now: f64, full: bool, out: &mut Output) {
        let q: Message = QueryIdentification {
            query_type: QueryType::Subsystem,
        }
        .into();
        if let Some(addr) = self.cfg.multicast
            && (full || self.arms.is_empty())
        {
            self.multicast_asked = now;
            self.send_to_addr(Some(addr), JausId::BROADCAST, true, &q, out);
        }
        let services: Message = QueryServices::all().into();
        let unfollowed: Vec<SocketAddr> = self.unfollowed_connect().collect();
        let queried: Vec<SocketAddr> = self.queried().collect();
        for addr in queried {
            let without_arm = unfollowed.contains(&addr);
            if full || without_arm {
                self.mark_connect_asked(addr, now);
                self.send_to_addr(Some(addr), JausId::BROADCAST, false, &q, out);
            }
            if without_arm {
                self.send_to_addr(Some(addr), JausId::BROADCAST, false, &services, out);
            }
        }
    }

    /// A query went to `--connect` address `addr` at `now` (one entry per address: the list
    /// is the operator's, so this table is as long as it).
    fn mark_connect_asked(&mut self, addr: SocketAddr, now: f64) {
        match self.connect_asked.iter_mut().find(|(a, _)| *a == addr) {
            Some((_, t)) => *t = now,
            None => self.connect_asked.push((addr, now)),
        }
    }

    pub(super) fn peer_liveness(&mut self, now: f64, out: &mut Output) {
        let limit = self.cfg.discovery_period * 2.0 + self.cfg.lost_after;
        let awake_since = self.awake_since;
        for (id, p) in self.endpoint.peers_mut() {
            let heard = p.last_heard.max(awake_since);
            let p = &mut p.data;
            if !p.lost
                && now - heard > limit
                && (!p.services.is_empty() || p.identification.is_some())
            {
                p.lost = true;
                out.net(NetFact::ComponentLost {
                    t: now,
                    id: id.into(),
                    lost: true,
                });
            }
        }
    }
}
