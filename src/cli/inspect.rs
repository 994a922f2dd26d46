//! `jaus-ocu inspect`: decodes every JUDP datagram of a `.pcap` / `.pcapng` capture.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Map, Value, json};

use crate::jaus::DecodeContext;
use crate::jaus::dump::{datagram_error_json, decode_datagram};
use crate::jaus::judp::{self, Reassembler};
use crate::record::capture::{CaptureEvent, CaptureReader};

/// Arguments of `jaus-ocu inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The capture: `.pcap` or `.pcapng` (the format is detected from the content).
    pub file: PathBuf,
    /// Write one JSON object per datagram instead of the human dump.
    #[arg(long)]
    pub json: bool,
    /// UDP port that carries JUDP.
    #[arg(long, default_value_t = judp::PORT)]
    pub port: u16,
}

/// Counts for the closing summary.
#[derive(Debug, Default)]
struct Summary {
    datagrams: u64,
    clean: u64,
    undecodable: u64,
}

/// Runs the subcommand. Exit status 0 when the whole file was read (undecodable datagrams are
/// reported, not fatal), 1 when the file is damaged and reading stopped early.
pub fn run(args: &InspectArgs) -> Result<i32> {
    let mut reader = CaptureReader::open(&args.file, args.port)
        .with_context(|| format!("cannot inspect {}", args.file.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let ctx = DecodeContext::NONE;
    let mut reassembler = Reassembler::default();
    let mut summary = Summary::default();
    let mut start: Option<f64> = None;
    let mut fatal = None;
    for event in reader.by_ref() {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                fatal = Some(e);
                break;
            }
        };
        match event {
            CaptureEvent::Datagram(d) => {
                let t0 = *start.get_or_insert(d.time);
                summary.datagrams += 1;
                let decoded = decode_datagram(&d.payload, &ctx, Some((&mut reassembler, d.time)));
                let clean = decoded.as_ref().is_ok_and(|x| x.is_clean());
                if clean {
                    summary.clean += 1;
                } else {
                    summary.undecodable += 1;
                }
                if args.json {
                    let mut o = Map::new();
                    o.insert("frame".into(), d.frame.into());
                    o.insert("time".into(), json!(d.time));
                    o.insert("elapsed".into(), json!(d.time - t0));
                    o.insert("source".into(), d.source.to_string().into());
                    o.insert("destination".into(), d.destination.to_string().into());
                    let body = match &decoded {
                        Ok(x) => x.to_json(),
                        Err(e) => datagram_error_json(e),
                    };
                    if let Value::Object(b) = body {
                        o.extend(b);
                    }
                    writeln!(out, "{}", Value::Object(o))?;
                } else {
                    let prefix = format!(
                        "#{:<5} {:>10.6}  {} -> {}",
                        d.frame,
                        d.time - t0,
                        d.source,
                        d.destination
                    );
                    match &decoded {
                        Ok(x) => {
                            for line in x.to_lines() {
                                writeln!(out, "{prefix}  {line}")?;
                            }
                        }
                        Err(e) => writeln!(out, "{prefix}  UNDECODABLE {e}")?,
                    }
                }
            }
            CaptureEvent::Bad {
                frame,
                time,
                reason,
            } => {
                summary.undecodable += 1;
                if args.json {
                    writeln!(
                        out,
                        "{}",
                        json!({ "frame": frame, "time": time, "error": reason, "offset": null })
                    )?;
                } else {
                    writeln!(out, "#{frame:<5} BAD FRAME {reason}")?;
                }
            }
            CaptureEvent::Skipped { .. } | CaptureEvent::Fragment { .. } => {}
        }
    }
    out.flush()?;
    let stats = *reader.stats();
    eprintln!(
        "{}: {} frames, {} JUDP datagrams on port {} ({} decoded cleanly, {} with errors), {} other frames skipped, {} bad frames, {} unfinished IP fragments dropped",
        args.file.display(),
        stats.frames,
        summary.datagrams,
        args.port,
        summary.clean,
        summary.undecodable.saturating_sub(stats.bad),
        stats.skipped,
        stats.bad,
        stats.fragments_pending_dropped,
    );
    if let Some(e) = fatal {
        eprintln!(
            "error: {}: reading stopped early: {e}; everything before that point is shown above",
            args.file.display()
        );
        return Ok(1);
    }
    Ok(0)
}
