//! Discovery and the components found: `QueryIdentification` to the multicast group and every
//! `--connect` address, `QueryServices` to each responder, every listed component recorded
//! (never forgotten, marked lost after a silence), and the selection of the arm to work with.

use std::net::SocketAddr;

use super::arm::FollowedArm;
use super::{Client, Output};
use crate::jaus::JausId;
use crate::jaus::Message;
use crate::jaus::core::{
    CancelEvent, QueryIdentification, QueryServices, QueryServicesNode, QueryType, ReleaseControl,
    ReportIdentification, ReportServices,
};
use crate::model::update::{ComponentId, ComponentInfo, ControlState, LinkState, MAX_ARMS, Update};
use crate::net::reports;

use super::subscriptions::SubState;

/// What the client knows of a peer besides what the endpoint keeps (address, time heard).
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub(super) identification: Option<String>,
    pub(super) services: Vec<(String, u8, u8)>,
    pub(super) services_asked: f64,
    pub(super) lost: bool,
}

impl Default for Known {
    fn default() -> Self {
        Self {
            identification: None,
            services: Vec::new(),
            services_asked: f64::NEG_INFINITY,
            lost: false,
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
            out.updates.push(Update::ComponentLost {
                t: now,
                id: id.into(),
                lost: false,
            });
        }
        if self.follows(id) {
            self.with_arm(id, out, |c, out| c.arm_heard(now, id, out));
        }
    }

    /// A `ReportIdentification` from `from`: its services are asked for when unknown or old.
    pub(super) fn identified(
        &mut self,
        now: f64,
        from: JausId,
        r: ReportIdentification,
        out: &mut Output,
    ) {
        if let Some(p) = self.endpoint.peer_mut(from) {
            let p = &mut p.data;
            p.identification = Some(r.identification);
            if now - p.services_asked > self.cfg.discovery_period * 5.0
                || p.services.is_empty() && now - p.services_asked >= self.cfg.retry
            {
                p.services_asked = now;
                self.send(from, QueryServices::all(), out);
            }
        }
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
        for listed in reports::listed_services(from, r) {
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
            out.updates.push(Update::Component { t: now, info });
            if ask_specifically {
                // The peer echoed our wildcards and listed nothing: ask with its own node
                // and component, which such a peer answers properly.
                let q = QueryServices {
                    nodes: vec![QueryServicesNode {
                        node_id: from.node,
                        components: vec![from.component],
                    }],
                };
                self.send(from, q, out);
            }
            if manipulator {
                self.follow(now, id, out);
                if self.focus.is_none() && self.cfg.component.is_none_or(|c| c == id) {
                    self.focus_on(now, id, out);
                }
            }
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
                out.updates.push(Update::Error {
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
        let arm = ComponentId::from(id);
        out.updates.push(Update::for_arm(
            arm,
            Update::Link {
                t: now,
                state: LinkState::Connecting,
            },
        ));
        out.updates.push(Update::for_arm(
            arm,
            Update::Control {
                t: now,
                state: ControlState::Released,
            },
        ));
        true
    }

    /// Focuses followed arm `id`: the operator's commands go to it from now on.
    pub(super) fn focus_on(&mut self, now: f64, id: JausId, out: &mut Output) {
        self.focus = Some(id);
        out.updates.push(Update::Selected {
            t: now,
            id: id.into(),
        });
    }

    /// The `--connect` addresses where no followed arm answers yet.
    pub(super) fn unfollowed_connect(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.cfg.connect.iter().copied().filter(|addr| {
            !self
                .arms
                .keys()
                .any(|id| self.endpoint.peer(*id).is_some_and(|p| p.addr == *addr))
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
    fn teardown_arm(&mut self, _now: f64, out: &mut Output) {
        let Some(s) = self.arm.take() else { return };
        for sub in &s.subs {
            if let SubState::Active { event_id, .. } = sub.state {
                let rid = self.request_id();
                self.send(
                    s.id,
                    CancelEvent {
                        request_id: rid,
                        event_id,
                    },
                    out,
                );
            }
        }
        if matches!(
            s.control,
            ControlState::Held { .. } | ControlState::Requested
        ) {
            self.send(s.id, ReleaseControl, out);
        }
    }

    /// A discovery round: `QueryIdentification` to the multicast group and every `--connect`
    /// address when `full`, else (a fast round) only to the addresses where no arm answers
    /// yet, and to the group while no arm is followed; each address without an arm is also
    /// asked for its services at once (the answer names the component and follows it: one
    /// round trip instead of two, which counts on a lossy link).
    pub(super) fn discover(&mut self, full: bool, out: &mut Output) {
        let q: Message = QueryIdentification {
            query_type: QueryType::Subsystem,
        }
        .into();
        if let Some(addr) = self.cfg.multicast
            && (full || self.arms.is_empty())
        {
            self.send_to_addr(Some(addr), JausId::BROADCAST, true, &q, out);
        }
        let services: Message = QueryServices::all().into();
        let unfollowed: Vec<SocketAddr> = self.unfollowed_connect().collect();
        for addr in self.cfg.connect.clone() {
            let without_arm = unfollowed.contains(&addr);
            if full || without_arm {
                self.send_to_addr(Some(addr), JausId::BROADCAST, false, &q, out);
            }
            if without_arm {
                self.send_to_addr(Some(addr), JausId::BROADCAST, false, &services, out);
            }
        }
    }

    pub(super) fn peer_liveness(&mut self, now: f64, out: &mut Output) {
        let limit = self.cfg.discovery_period * 2.0 + self.cfg.lost_after;
        for (id, p) in self.endpoint.peers_mut() {
            let heard = p.last_heard;
            let p = &mut p.data;
            if !p.lost
                && now - heard > limit
                && (!p.services.is_empty() || p.identification.is_some())
            {
                p.lost = true;
                out.updates.push(Update::ComponentLost {
                    t: now,
                    id: id.into(),
                    lost: true,
                });
            }
        }
    }
}
