//! Where a followed arm is followed, and one JAUS ID answering at two addresses (issue 44).
//!
//! - An arm is followed at the address it answered our own query from (`discovery`), said
//!   in [`ArmFact::Address`] when it is followed and whenever that changes. An arm named
//!   before it is found (`--component`: its stop, a `Select`) is placed at the first
//!   `--connect` address; answering our discovery at another queried address before it was
//!   ever heard there, it is followed where it answered.
//! - The same ID answering our own discovery (a `ReportIdentification`, or a `ReportServices`
//!   naming it, from an address we asked: a `--connect` or implicit address, or anyone while
//!   a multicast query is recent) at a second address is an *address conflict*: two
//!   components under one ID, or one reached two ways. It is said in words once (a
//!   [`Remark::Error`] naming both addresses), never settled silently by which answered first:
//!   - exactly one of the two is a `--connect` address the operator gave: the arm is followed
//!     there (moved there if it was followed at the other: what was set up at the other is
//!     undone — a jog stopped, events cancelled, control released — and the arm is set up
//!     again at the named address, our wish to hold control and a pending stop kept);
//!   - both are `--connect` addresses, or neither is and both were asked by unicast: nothing
//!     says which is the arm meant. It stays followed where it was (its facts shown from
//!     there), and every command to it but the emergency stop and the release of control is
//!     refused in words naming both addresses; the emergency stop goes to both (stopping one
//!     component too many is the safe side; a stop is never refused);
//!   - neither is named and one answered the multicast query: said, followed where it
//!     answered first, not refused (a simulator bound to 0.0.0.0 answers the group from the
//!     host's network address and the local query from 127.0.0.1: one component, two ways).
//! - The other component's blocks are never applied; they are counted in
//!   [`NetStats::address_conflict`](crate::model::update::NetStats::address_conflict), not
//!   as spoofed. The conflict ends after [`CONFLICT_QUIET`] s without an answer from the
//!   other address (said when commands were refused).
//! - Untrusted senders stay as they were: a followed arm's ID from an address we never asked
//!   is spoofed (counted, changes nothing), unless the arm, silent where it is followed,
//!   moved there (`arm_elsewhere`).

use std::net::SocketAddr;

use super::{CONFLICT_QUIET, Client, MAX_LISTED, Output};
use crate::jaus::core::SetEmergency;
use crate::jaus::{DecodeContext, JausId, Message};
use crate::model::command::Command;
use crate::model::update::{ArmFact, LinkState, NetFact, Remark};
use crate::net::reports;

/// Another component answering our discovery with a followed arm's ID.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct AddressConflict {
    /// The address of the component not followed.
    pub(super) other: SocketAddr,
    /// When it last answered our discovery.
    pub(super) last: f64,
    /// Nothing says which of the two is the arm meant (neither or both are `--connect`
    /// addresses): commands but the stop and the release are refused.
    pub(super) ambiguous: bool,
}

/// Whether `message` is a discovery answer of `id`'s: a `ReportIdentification`, or a
/// `ReportServices` that names `id`.
fn answers_discovery(id: JausId, message: Option<&[u8]>) -> bool {
    message
        .and_then(|m| Message::parse_with(m, &DecodeContext::NONE).ok())
        .is_some_and(|m| match m {
            Message::ReportIdentification(_) => true,
            Message::ReportServices(r) => reports::listed_services_bounded(id, &r, MAX_LISTED)
                .0
                .iter()
                .any(|l| l.id == id),
            _ => false,
        })
}

impl Client {
    /// Says where arm `id` is followed now (and the other address of its conflict, if any).
    pub(super) fn say_address(&mut self, now: f64, id: JausId, out: &mut Output) {
        let Some(address) = self.endpoint.peer(id).map(|p| p.addr) else {
            return;
        };
        let other = self.conflict_of(id).map(|c| c.other);
        out.arm(
            id,
            ArmFact::Address {
                t: now,
                address,
                other,
            },
        );
        // The component list says where it is too (it was published at the address of
        // the report that named it).
        if let Some(p) = self.endpoint.peer_mut(id)
            && let Some(info) = &mut p.data.published
            && info.address != address
        {
            info.address = address;
            out.net(NetFact::Component {
                t: now,
                info: info.clone(),
            });
        }
    }

    /// The address conflict of followed arm `id` (in hand or not).
    fn conflict_of(&self, id: JausId) -> Option<AddressConflict> {
        match &self.arm {
            Some(a) if a.id == id => a.address_conflict,
            _ => self.arms.get(&id).and_then(|a| a.address_conflict),
        }
    }

    /// The other address of arm `id`'s conflict while nothing says which is the arm meant.
    pub(super) fn ambiguous_other(&self, id: JausId) -> Option<SocketAddr> {
        self.conflict_of(id)
            .filter(|c| c.ambiguous)
            .map(|c| c.other)
    }

    /// A block with followed arm `id`'s ID from `addr`, not where it is followed (`pinned`):
    /// `true` when it belongs to an address conflict (the other component's, counted; or a
    /// new conflict, said and settled), `false` when it is for the untrusted-sender rules.
    pub(super) fn elsewhere_conflict(
        &mut self,
        now: f64,
        id: JausId,
        pinned: SocketAddr,
        addr: SocketAddr,
        message: Option<&[u8]>,
        out: &mut Output,
    ) -> bool {
        let answer = answers_discovery(id, message) && self.asked_at(addr, now);
        let Some(arm) = self.arms.get_mut(&id) else {
            return false;
        };
        if let Some(c) = &mut arm.address_conflict
            && c.other == addr
        {
            self.stats.address_conflict += 1;
            if answer {
                c.last = now;
            }
            return true;
        }
        if !answer {
            return false;
        }
        // Placed at an address before it was found (named by the operator), never heard
        // there, and now answering our discovery here: here it is — unless it was placed at
        // a --connect address and answers at one nobody named (the arm named may only be
        // slower to answer: that is a conflict, below).
        let named = |a: SocketAddr| self.cfg.connect.contains(&a);
        let heard = arm.heard;
        if !heard && (named(addr) || !named(pinned)) {
            self.placed_found += 1;
            self.follow_elsewhere(now, id, addr, out);
            self.say_address(now, id, out);
            return true;
        }
        // An arm silent where it is followed may have moved: the untrusted-sender rules
        // decide (`arm_elsewhere`: followed at the new address once it answers there).
        if arm.link == LinkState::Lost {
            return false;
        }
        self.stats.address_conflict += 1;
        let unicast = |a: SocketAddr| self.queried().any(|q| q == a);
        let (pinned_named, other_named) = (named(pinned), named(addr));
        // Neither named: ambiguous when both were asked by unicast. An answer to the
        // multicast query may be the same component reached another way (a simulator bound
        // to 0.0.0.0 answers the group from the host's network address and the local query
        // from 127.0.0.1): said, followed where it answered first, not refused.
        let (at, not, ambiguous) = match (pinned_named, other_named) {
            (true, false) => (pinned, addr, false),
            (false, true) => (addr, pinned, false),
            (true, true) => (pinned, addr, true),
            (false, false) => (pinned, addr, unicast(pinned) && unicast(addr)),
        };
        let Some(arm) = self.arms.get_mut(&id) else {
            return false;
        };
        arm.address_conflict = Some(AddressConflict {
            other: not,
            last: now,
            ambiguous,
        });
        let both = if heard {
            format!(
                "{id} answers our discovery at two addresses, {pinned} and {addr} (two \
                 components under one JAUS ID, or one reached two ways)"
            )
        } else {
            format!(
                "{id} answers our discovery at {addr}, and is named at {pinned}, where it has \
                 not answered yet"
            )
        };
        let message = if ambiguous {
            let which = if pinned_named {
                "both --connect addresses given"
            } else {
                "neither a --connect address given"
            };
            format!(
                "{both}, {which}: nothing says which is the arm meant. Its facts are shown \
                 from {pinned}; every command to {id} but the emergency stop and the release \
                 of control is refused while both answer (an emergency stop goes to both). \
                 Give each component its own JAUS ID, or name the arm's address alone with \
                 --connect ADDR --no-multicast"
            )
        } else if pinned_named || other_named {
            format!(
                "{both}: followed at {at}, the --connect address given; nothing from {not} is \
                 applied (counted: 'address_conflict'). If they are two components, give each \
                 its own JAUS ID"
            )
        } else {
            format!(
                "{both}: followed at {at}, where it answered first (the other answered the \
                 multicast query); nothing from {not} is applied (counted: \
                 'address_conflict'). If they are two components, give each its own JAUS ID, \
                 or name the arm's address with --connect ADDR"
            )
        };
        if at != pinned {
            self.follow_elsewhere(now, id, at, out);
        }
        self.say_address(now, id, out);
        out.arm(id, Remark::Error { t: now, message });
        true
    }

    /// Moves live arm `id` to `addr`: what was set up at its old address is undone there
    /// (a jog stopped, events cancelled, control released; our intent to hold control and a
    /// pending stop are kept), then it is set up again at `addr` as an arm come back.
    fn follow_elsewhere(&mut self, now: f64, id: JausId, addr: SocketAddr, out: &mut Output) {
        self.with_arm(id, out, |c, out| {
            c.jog_stop_now(now, out);
            c.leave_address(out);
        });
        self.endpoint.repin(id, addr, now);
        if let Some(p) = self.endpoint.peer_mut(id) {
            p.data.answered = now;
        }
        if let Some(arm) = self.arms.get_mut(&id) {
            // Set up again from the start when heard, as after a silence.
            arm.link = LinkState::Lost;
        }
        self.heard(now, id, out);
    }

    /// The address conflict of the arm in hand ends after [`CONFLICT_QUIET`] s without an
    /// answer from the other address.
    pub(super) fn address_timers(&mut self, now: f64, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let Some(c) = s.address_conflict else { return };
        if now < c.last + CONFLICT_QUIET {
            return;
        }
        s.address_conflict = None;
        let id = s.id;
        self.say_address(now, id, out);
        if c.ambiguous {
            out.remark(Remark::Error {
                t: now,
                message: format!(
                    "no answer as {id} from {} for {CONFLICT_QUIET:.0} s: {id} is the \
                     component followed, and commands to it are accepted again",
                    c.other
                ),
            });
        }
    }

    /// When the address conflict of `s` next needs a tick.
    pub(super) fn address_deadline(s: &super::arm::FollowedArm) -> f64 {
        s.address_conflict
            .map_or(f64::INFINITY, |c| c.last + CONFLICT_QUIET)
    }

    /// Whether `cmd` for the focused arm is refused because two components answer as it and
    /// nothing says which is meant (the stops, the release of control and the focus never
    /// are).
    pub(super) fn refused_for_address(&self, cmd: &Command) -> Option<String> {
        if matches!(
            cmd,
            Command::SetEmergency
                | Command::SetEmergencyOf(_)
                | Command::SetEmergencyAll
                | Command::ReleaseControl
                | Command::Select(_)
                | Command::Shutdown
        ) {
            return None;
        }
        let id = self.focus?;
        let other = self.ambiguous_other(id)?;
        let at = self.endpoint.peer(id).map(|p| p.addr)?;
        Some(format!(
            "two components answer as {id}, at {at} and at {other}, and nothing says which is \
             the arm meant: nothing was sent. Give each its own JAUS ID, or name the arm's \
             address alone with --connect ADDR --no-multicast"
        ))
    }

    /// The emergency stop of the arm in hand also goes to the other address of an
    /// ambiguous conflict.
    pub(super) fn stop_other(&mut self, out: &mut Output) {
        let Some(s) = &self.arm else { return };
        let id = s.id;
        if let Some(c) = s.address_conflict.filter(|c| c.ambiguous) {
            let m: Message = SetEmergency { emergency_code: 1 }.into();
            self.send_to_addr(Some(c.other), id, false, &m, out);
        }
    }
}
