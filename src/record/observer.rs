//! A passive, sans-I/O decoder of JUDP traffic: wire records in (either direction, any
//! source and destination), [`Update`]s out, through the same codec and the same report →
//! update mapping as the live client. Replay and the recorder's decoded channels use it.
//!
//! SKELETON: signatures agreed between modules; bodies are being written (issue 6).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::model::update::Update;
use crate::net::tap::WireRecord;

/// What the observer has seen (for `inspect` summaries).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObserverStats {
    /// Datagrams observed.
    pub datagrams: u64,
    /// Datagrams or blocks that did not frame or decode.
    pub malformed: u64,
    /// Duplicate blocks dropped (same source and sequence number within 2 s).
    pub duplicates: u64,
    /// Messages by name (e.g. "ReportJointPositions"), ACKs as "ack".
    pub messages: BTreeMap<String, u64>,
    /// Datagrams by peer address.
    pub peers: BTreeMap<SocketAddr, u64>,
    /// Gaps in traffic from the selected component: (start, end), s.
    pub gaps: Vec<(f64, f64)>,
}

/// The passive decoder.
#[derive(Debug)]
pub struct Observer {
    start_ns: u64,
}

impl Observer {
    /// An observer whose times are seconds since `start_ns` (ns since the Unix epoch).
    pub fn new(start_ns: u64) -> Self {
        let _ = start_ns;
        todo!("issue 6: Observer::new")
    }

    /// The time origin, ns since the Unix epoch.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Observes one datagram; pushes the updates it implies onto `out`.
    pub fn observe(&mut self, rec: &WireRecord, out: &mut Vec<Update>) {
        let _ = (rec, out);
        todo!("issue 6: Observer::observe")
    }

    /// The end of the input at `end_ns`: closes a trailing gap or staleness.
    pub fn finish(&mut self, end_ns: u64, out: &mut Vec<Update>) {
        let _ = (end_ns, out);
        todo!("issue 6: Observer::finish")
    }

    /// What has been seen so far.
    pub fn stats(&self) -> &ObserverStats {
        todo!("issue 6: Observer::stats")
    }
}
