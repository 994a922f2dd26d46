//! The evidence capture: every frame of the run, both ways, in a pcapng file whose frame
//! numbers are the ones the report cites (frame N of the run is Wireshark's `frame.number`
//! N).

use std::io::{self, Write};

use crate::record::pcapng::{PacketDirection, PcapngWriter};

use super::tester::{Direction, Frame};

/// Writes `frames` to `out`; `start_unix_ns` is when the tester's clock read zero.
pub fn write_pcapng<W: Write>(
    out: W,
    frames: &[Frame],
    start_unix_ns: u64,
    comment: &str,
) -> io::Result<W> {
    let mut w = PcapngWriter::new(out, Some(comment))?;
    for f in frames {
        let t_ns = start_unix_ns.saturating_add((f.at * 1e9) as u64);
        let (source, destination, direction) = match f.direction {
            Direction::Sent => (f.local, f.remote, PacketDirection::Outbound),
            Direction::Received => (f.remote, f.local, PacketDirection::Inbound),
        };
        // A frame we cannot write would shift every later frame number: an error, not a skip.
        w.write_udp(t_ns, source, destination, Some(direction), &f.bytes)
            .map_err(|e| io::Error::other(format!("frame {}: {e}", f.number)))?;
    }
    w.finish()
}
