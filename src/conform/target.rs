//! Finding the component under test, as `probe` does: `QueryIdentification` and
//! `QueryServices` to every `--connect` address (and the multicast group), then the component
//! named with `--component`, or else the first that lists a manipulator service.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;

use crate::jaus::core::{
    QueryIdentification, QueryServices, QueryServicesNode, QueryType, ServiceRec,
};
use crate::jaus::judp::Broadcast;
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};
use crate::net::reports::is_manipulator_service;

use super::tester::{SendOptions, Tester, Wire};

/// Components remembered while looking, at most.
pub const MAX_CANDIDATES: usize = 256;

/// Where to look.
#[derive(Debug, Clone)]
pub struct Search {
    /// Addresses asked by unicast: the operator's `--connect` ones first, then the implicit
    /// local one (unless `--no-multicast`).
    pub connect: Vec<SocketAddr>,
    /// How many of `connect`, from the first, the operator named: a component answering at
    /// one of these and at another address is tested at the one named.
    pub named: usize,
    /// The multicast group, unless `--no-multicast`.
    pub multicast: Option<SocketAddr>,
    /// The component to test, when named.
    pub component: Option<JausId>,
    /// Seconds to look.
    pub within: f64,
}

impl Search {
    /// The addresses the operator named (`--connect`).
    pub fn named_addresses(&self) -> &[SocketAddr] {
        &self.connect[..self.named.min(self.connect.len())]
    }
}

/// A component that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where it answered from.
    pub addr: SocketAddr,
    /// Its services, the union of every record naming it in one report (§9 C13), when it
    /// answered `QueryServices` with any.
    pub services: Option<Vec<ServiceRec>>,
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Found {
    /// The component under test.
    pub id: JausId,
    /// Its address.
    pub addr: SocketAddr,
    /// How it was chosen, for the report.
    pub how: String,
}

/// Why no component was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotFound {
    /// Nothing answered.
    Silence,
    /// Components answered, none a manipulator (and none was named).
    NoManipulator(Vec<JausId>),
}

/// Whether `c` is a manipulator, by the OCU's rule ([`is_manipulator_service`]).
fn is_manipulator(c: &Candidate) -> bool {
    c.services
        .as_ref()
        .is_some_and(|s| s.iter().any(|r| is_manipulator_service(&r.uri)))
}

/// Sends `QueryIdentification` and a wildcard `QueryServices` to every `--connect` address,
/// and `QueryIdentification` to the multicast group.
fn ask_everywhere<W: Wire>(t: &mut Tester<W>, search: &Search) -> io::Result<()> {
    let identification: Message = QueryIdentification {
        query_type: QueryType::Subsystem,
    }
    .into();
    let services: Message = QueryServices::all().into();
    for &addr in &search.connect {
        for m in [&identification, &services] {
            t.send_with(
                m,
                &SendOptions {
                    to: Some(JausId::BROADCAST),
                    via: Some(addr),
                    ..SendOptions::default()
                },
            )?;
        }
    }
    if let Some(group) = search.multicast {
        t.send_with(
            &identification,
            &SendOptions {
                to: Some(JausId::BROADCAST),
                via: Some(group),
                broadcast: Broadcast::Global,
                ..SendOptions::default()
            },
        )?;
    }
    Ok(())
}

/// The component to test among those `seen`: the one named, else the first listing a
/// manipulator service.
fn choose(seen: &BTreeMap<JausId, Candidate>, search: &Search) -> Option<Found> {
    match search.component {
        Some(id) => match seen.get(&id) {
            Some(c) => Some(Found {
                id,
                addr: c.addr,
                how: format!("{id} (--component), answered discovery from {}", c.addr),
            }),
            None => search.connect.first().map(|&addr| Found {
                id,
                addr,
                how: format!(
                    "{id} (--component) did not answer discovery within {:.1} s; tested at \
                     {addr}, the first --connect address",
                    search.within
                ),
            }),
        },
        None => seen
            .iter()
            .find(|(_, c)| is_manipulator(c))
            .map(|(id, c)| Found {
                id: *id,
                addr: c.addr,
                how: format!(
                    "{id}, the first component listing a manipulator service, at {}",
                    c.addr
                ),
            }),
    }
}

/// Looks for components; the tester's target and address are set to the one chosen.
pub fn find<W: Wire>(t: &mut Tester<W>, search: &Search) -> io::Result<Result<Found, NotFound>> {
    ask_everywhere(t, search)?;
    let deadline = t.now() + search.within;
    let mut seen: BTreeMap<JausId, Candidate> = BTreeMap::new();
    loop {
        let left = deadline - t.now();
        if left <= 0.0 {
            break;
        }
        let Some(r) = t.wait_for(left, |r| r.id().is_some())? else {
            break;
        };
        // Untrusted senders: with no multicast query out, only the addresses asked answer;
        // a component keeps the address it first answered from; the table is bounded.
        if search.multicast.is_none() && !search.connect.contains(&r.from) {
            continue;
        }
        let source = r.header.source;
        let new = !seen.contains_key(&source);
        if new && seen.len() >= MAX_CANDIDATES {
            continue;
        }
        let entry = seen.entry(source).or_insert(Candidate {
            addr: r.from,
            services: None,
        });
        if entry.addr != r.from {
            // Its ID from another address: not where it answered, unless this one is an
            // address the operator named and the first was not (the named address first).
            let named = search.named_addresses();
            if !named.contains(&r.from) || named.contains(&entry.addr) {
                continue;
            }
            *entry = Candidate {
                addr: r.from,
                services: None,
            };
        }
        if new {
            // Asked for its own ID too: some answer a wildcard query with nothing (§9 C8).
            let own: Message = QueryServices {
                nodes: vec![QueryServicesNode {
                    node_id: source.node,
                    components: vec![source.component],
                }],
            }
            .into();
            t.send_with(
                &own,
                &SendOptions {
                    to: Some(source),
                    via: Some(r.from),
                    ..SendOptions::default()
                },
            )?;
        }
        if r.id() == Some(ids::ReportServices)
            && let Some(Message::ReportServices(rs)) = r.message()
        {
            // One report's records per component (§9 C13), each list replacing the last.
            let mut listed: BTreeMap<JausId, Vec<ServiceRec>> = BTreeMap::new();
            for node in &rs.nodes {
                for c in &node.components {
                    let id = JausId::new(source.subsystem, node.node_id, c.component_id);
                    if id.node == 255 || id.component == 255 {
                        continue; // the wildcard echo of §9 C8
                    }
                    listed
                        .entry(id)
                        .or_default()
                        .extend(c.services.iter().cloned());
                }
            }
            for (id, services) in listed {
                if !seen.contains_key(&id) && seen.len() >= MAX_CANDIDATES {
                    continue;
                }
                let e = seen.entry(id).or_insert(Candidate {
                    addr: r.from,
                    services: None,
                });
                if e.addr == r.from {
                    e.services = Some(services);
                }
            }
        }
        let done = match search.component {
            // Named with --connect addresses: found where the operator said, or the search
            // goes on (another address may only have answered first).
            Some(id) => seen.get(&id).is_some_and(|c| {
                c.services.is_some()
                    && (search.named == 0 || search.named_addresses().contains(&c.addr))
            }),
            None => seen.values().any(is_manipulator),
        };
        if done {
            break;
        }
    }
    let chosen = choose(&seen, search);
    Ok(match chosen {
        Some(f) => {
            t.target = f.id;
            t.addr = f.addr;
            Ok(f)
        }
        None if seen.is_empty() => Err(NotFound::Silence),
        None => Err(NotFound::NoManipulator(seen.into_keys().collect())),
    })
}
