//! Classic pcap (libpcap's format): a 24-byte file header, then 16-byte record headers each
//! followed by the captured bytes.

use std::io::Read;

use super::input::{Endian, Input, Part};
use super::{CaptureError, Format, MAX_FRAME_LEN, Record};

pub(super) struct PcapFormat {
    pub(super) endian: Endian,
    pub(super) nanos: bool,
    pub(super) link_type: u32,
}

/// Reads the rest of the classic pcap file header, after its 4-byte magic number.
pub(super) fn read_pcap_header<R: Read>(
    input: &mut Input<R>,
    endian: Endian,
    nanos: bool,
) -> Result<Format, CaptureError> {
    // Version (4), time zone (4), significant figures (4), snapshot length (4), link type (4).
    let mut header = [0; 20];
    let part = Part {
        frame: 1,
        offset: 0,
        what: "file header needs",
        needed: 24,
        before: 4,
    };
    input.fill(&mut header, part)?;
    // The upper 16 bits carry the FCS length of some captures, not the link type.
    let link_type = endian.u32([header[16], header[17], header[18], header[19]]) & 0xffff;
    Ok(Format::Pcap(PcapFormat {
        endian,
        nanos,
        link_type,
    }))
}

/// Reads one classic pcap record; `None` at a clean end of file.
pub(super) fn read_pcap_record<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    pcap: &PcapFormat,
    frame: u64,
) -> Result<Option<Record>, CaptureError> {
    let offset = input.offset;
    // Seconds (4), second fraction (4), captured length (4), original length (4).
    let mut header = [0; 16];
    let part = Part {
        frame,
        offset,
        what: "record header needs",
        needed: 16,
        before: 0,
    };
    if !input.fill_or_end(&mut header, part)? {
        return Ok(None);
    }
    let e = pcap.endian;
    let seconds = e.u32([header[0], header[1], header[2], header[3]]);
    let fraction = e.u32([header[4], header[5], header[6], header[7]]);
    let captured = e.u32([header[8], header[9], header[10], header[11]]);
    let original_len = e.u32([header[12], header[13], header[14], header[15]]);
    if captured > MAX_FRAME_LEN {
        return Err(CaptureError::Corrupt {
            frame,
            offset,
            reason: format!(
                "record header says {captured} bytes, more than the {MAX_FRAME_LEN}-byte limit"
            ),
        });
    }
    let captured = captured as usize;
    let part = Part {
        frame,
        offset,
        what: "record header says",
        needed: captured as u64,
        before: 0,
    };
    input.fill_vec(buf, captured, part)?;
    let scale = if pcap.nanos { 1e-9 } else { 1e-6 };
    Ok(Some(Record::Frame {
        time: f64::from(seconds) + f64::from(fraction) * scale,
        link_type: pcap.link_type,
        data: 0..captured,
        original_len,
    }))
}
