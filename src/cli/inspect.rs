//! `jaus-ocu inspect`: decodes every JUDP datagram of a `.pcap` / `.pcapng` capture, and
//! summarises (or, with `--json`, decodes datagram by datagram) an `.mcap` recording.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Map, Value, json};

use crate::jaus::DecodeContext;
use crate::jaus::dump::{datagram_error_json, decode_datagram};
use crate::jaus::judp;
use crate::model::clock::rfc3339_utc;
use crate::net::reassembly::Reassembler;
use crate::net::tap::Direction;
use crate::record::capture::{CaptureEvent, CaptureReader};
use crate::record::observer::{Observer, ObserverStats};
use crate::record::source::{MCAP_MAGIC, SourceKind, WireSource};

/// Arguments of `jaus-ocu inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A recording (`.mcap`) or capture (`.pcap`, `.pcapng`); the format is detected from
    /// the content, not the name.
    pub file: PathBuf,
    /// Write one JSON object per datagram instead of the human dump (with `--summary`: the
    /// summary as one JSON object).
    #[arg(long)]
    pub json: bool,
    /// Only the summary: duration, message counts by type, peers, gaps, and per arm (every
    /// manipulator replay follows) what it sent and was sent, its joints and its gaps (the
    /// default for recordings, which can hold millions of datagrams).
    #[arg(long)]
    pub summary: bool,
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
    let mut magic = [0u8; 8];
    let got = std::fs::File::open(&args.file)
        .and_then(|mut f| read_up_to(&mut f, &mut magic))
        .unwrap_or(0);
    let is_mcap = magic == *MCAP_MAGIC;
    let is_capture = got >= 4
        && matches!(
            magic[..4],
            [0xd4, 0xc3, 0xb2, 0xa1]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0xa1, 0xb2, 0x3c, 0x4d]
                | [0x0a, 0x0d, 0x0d, 0x0a]
        );
    // A file that is neither (or cannot be read) goes through the recording path, whose
    // error says what the GUI says: "not an MCAP recording or a pcap/pcapng capture".
    if is_mcap || !is_capture || args.summary {
        return run_recording(args);
    }
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
                let decoded = decode_datagram(
                    &d.payload,
                    &ctx,
                    Some(&mut reassembler.defragmenter(d.time)),
                );
                let clean = decoded
                    .as_ref()
                    .is_ok_and(super::super::jaus::dump::DecodedDatagram::is_clean);
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
                    write_object(&mut out, o, &decoded)?;
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

/// Writes one JSON line: where the datagram came from (`o`), then its decode or its error.
fn write_object(
    out: &mut impl Write,
    mut o: Map<String, Value>,
    decoded: &Result<crate::jaus::dump::DecodedDatagram, crate::jaus::DecodeError>,
) -> std::io::Result<()> {
    let body = match decoded {
        Ok(x) => x.to_json(),
        Err(e) => datagram_error_json(e),
    };
    if let Value::Object(b) = body {
        o.extend(b);
    }
    writeln!(out, "{}", Value::Object(o))
}

/// `inspect` of a recording (or `--summary` of a capture): the summary, or with `--json` one
/// decoded object per datagram. Exit status 1 when the file is damaged.
/// Reads up to `buf.len()` bytes (fewer at the end of a short file).
fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match std::io::Read::read(f, &mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

fn run_recording(args: &InspectArgs) -> Result<i32> {
    let mut source = WireSource::open(&args.file, args.port)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let per_datagram = args.json && !args.summary;
    let ctx = DecodeContext::NONE;
    let mut reassembler = Reassembler::default();
    let mut observer: Option<Observer> = None;
    let mut updates = Vec::new();
    let (mut first, mut last) = (None::<u64>, 0u64);
    let (mut rx, mut tx, mut latched) = (0u64, 0u64, 0u64);
    let mut index = 0u64;
    while let Some(rec) = source.next() {
        latched += u64::from(rec.latched.is_some());
        let first_ns = *first.get_or_insert(rec.t_ns);
        last = last.max(rec.t_ns);
        match rec.direction {
            Direction::Rx => rx += 1,
            Direction::Tx => tx += 1,
        }
        // The GUI's time origin (the session's start for recordings), so gap times agree.
        observer
            .get_or_insert_with(|| Observer::new(source.info().time_origin(Some(&rec))))
            .observe(&rec, &mut updates);
        updates.clear();
        if per_datagram {
            let t = rec.t_ns as f64 / 1e9;
            let decoded = decode_datagram(&rec.bytes, &ctx, Some(&mut reassembler.defragmenter(t)));
            let mut o = Map::new();
            o.insert("index".into(), index.into());
            o.insert("time".into(), json!(t));
            o.insert(
                "elapsed".into(),
                json!((rec.t_ns.saturating_sub(first_ns)) as f64 / 1e9),
            );
            o.insert("direction".into(), rec.direction.as_str().into());
            o.insert("peer".into(), rec.peer.to_string().into());
            write_object(&mut out, o, &decoded)?;
        }
        index += 1;
    }
    let stats = observer.as_mut().map(|o| {
        o.finish(last, &mut updates);
        o.stats()
    });
    let stats = stats.unwrap_or_default();
    let info = source.info().clone();
    let duration = first.map_or(0.0, |f| last.saturating_sub(f) as f64 / 1e9);
    let summary = json!({
        "file": args.file.display().to_string(),
        "format": match info.kind {
            Some(SourceKind::Mcap) => "mcap",
            Some(SourceKind::Pcap) => "pcap",
            Some(SourceKind::Pcapng) => "pcapng",
            None => "unknown",
        },
        "complete": info.complete,
        "start_time": first.map(rfc3339_utc),
        "duration_s": duration,
        "datagrams": { "total": rx + tx, "received": rx, "sent": tx, "latched": latched },
        "malformed": stats.malformed,
        "duplicates": stats.duplicates,
        "tolerated": stats.tolerated.named().iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect::<Map<_, _>>(),
        "messages": stats.messages,
        "peers": stats.peers.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<Map<_, _>>(),
        "gaps": stats.gaps.iter().map(|g| json!({ "component": g.arm, "start_s": g.start, "end_s": g.end, "length_s": g.end - g.start })).collect::<Vec<_>>(),
        "focus": stats.focus,
        "arms": arms_json(&stats),
        "arms_not_followed": stats.arms_not_followed,
        "metadata": info.metadata,
        "problems": source.problems(),
        "stopped": source.stopped(),
    });
    if args.json && args.summary {
        writeln!(out, "{summary}")?;
    } else if !per_datagram {
        write!(out, "{}", summary_text(&summary))?;
    }
    out.flush()?;
    if per_datagram {
        eprintln!(
            "{}: {} datagrams ({rx} received, {tx} sent) over {duration:.3} s",
            args.file.display(),
            rx + tx
        );
    }
    if let Some(why) = source.stopped() {
        eprintln!(
            "error: {}: reading stopped early: {why}; everything before that point is {}",
            args.file.display(),
            if per_datagram {
                "shown above"
            } else {
                "summarised above"
            }
        );
        return Ok(1);
    }
    Ok(0)
}

/// Every followed arm, by ID: what it sent and was sent, when it was heard, its silences.
fn arms_json(stats: &ObserverStats) -> Map<String, Value> {
    stats
        .arms
        .iter()
        .map(|(id, a)| {
            let total = |m: &std::collections::BTreeMap<String, u64>| m.values().sum::<u64>();
            (
                id.to_string(),
                json!({
                    "name": a.name,
                    "joints": a.joints,
                    "first_s": a.heard.map(|h| h.0),
                    "last_s": a.heard.map(|h| h.1),
                    "messages_sent": total(&a.sent),
                    "messages_received": total(&a.received),
                    "sent": a.sent,
                    "received": a.received,
                    "gaps": a.gaps.iter().map(|(s, e)| json!({ "start_s": s, "end_s": e, "length_s": e - s })).collect::<Vec<_>>(),
                }),
            )
        })
        .collect()
}

/// The human form of the summary object.
fn summary_text(s: &Value) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let get = |k: &str| s.get(k).cloned().unwrap_or(Value::Null);
    let _ = writeln!(
        o,
        "{} ({}{})",
        get("file").as_str().unwrap_or(""),
        get("format").as_str().unwrap_or(""),
        if get("format") == "mcap" && get("complete") == false {
            ", not finished: the recorder stopped abruptly"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "  start     {}",
        get("start_time").as_str().unwrap_or("-")
    );
    let _ = writeln!(
        o,
        "  duration  {:.3} s",
        get("duration_s").as_f64().unwrap_or(0.0)
    );
    let d = get("datagrams");
    let _ = writeln!(
        o,
        "  datagrams {} ({} received, {} sent), {} malformed, {} duplicates",
        d["total"],
        d["received"],
        d["sent"],
        get("malformed"),
        get("duplicates")
    );
    if d["latched"].as_u64().unwrap_or(0) > 0 {
        let _ = writeln!(
            o,
            "  latched   {} datagrams of state received before recording began, written at \
             its start",
            d["latched"]
        );
    }
    if let Value::Object(m) = get("tolerated") {
        let seen: Vec<String> = m
            .iter()
            .filter(|(_, n)| n.as_u64().unwrap_or(0) > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if !seen.is_empty() {
            let _ = writeln!(
                o,
                "  tolerated peer deviations (wire reference §9): {}",
                seen.join(", ")
            );
        }
    }
    if let Value::Object(m) = get("messages") {
        let _ = writeln!(o, "  messages");
        let mut v: Vec<_> = m.iter().collect();
        v.sort_by(|a, b| b.1.as_u64().cmp(&a.1.as_u64()).then(a.0.cmp(b.0)));
        for (name, n) in v {
            let _ = writeln!(o, "    {:>10}  {name}", n.as_u64().unwrap_or(0));
        }
    }
    if let Value::Object(m) = get("peers") {
        let _ = writeln!(o, "  peers");
        for (peer, n) in m {
            let _ = writeln!(o, "    {:>10}  {peer}", n.as_u64().unwrap_or(0));
        }
    }
    arms_text(&mut o, s);
    match get("gaps") {
        Value::Array(g) if !g.is_empty() => {
            let _ = writeln!(o, "  gaps (no traffic from a manipulator)");
            for x in g {
                let _ = writeln!(
                    o,
                    "    {:>10.3} s .. {:.3} s ({:.3} s)  {}",
                    x["start_s"].as_f64().unwrap_or(0.0),
                    x["end_s"].as_f64().unwrap_or(0.0),
                    x["length_s"].as_f64().unwrap_or(0.0),
                    x["component"].as_str().unwrap_or("")
                );
            }
        }
        _ => {
            let _ = writeln!(o, "  gaps      none");
        }
    }
    if let Value::Object(m) = get("metadata") {
        for (name, kv) in m {
            let _ = writeln!(o, "  metadata {name}: {kv}");
        }
    }
    if let Value::Array(p) = get("problems") {
        for x in p {
            let _ = writeln!(o, "  problem: {}", x.as_str().unwrap_or(""));
        }
    }
    o
}

/// The arms section of the human summary: one line per arm, then the messages it sent.
fn arms_text(o: &mut String, s: &Value) {
    use std::fmt::Write as _;
    let Some(arms) = s.get("arms").and_then(Value::as_object) else {
        return;
    };
    if arms.is_empty() {
        let _ = writeln!(o, "  arms      none found");
    } else {
        let focus = s.get("focus").and_then(Value::as_str).unwrap_or("-");
        let _ = writeln!(
            o,
            "  arms      {} followed (replay opens on {focus})",
            arms.len()
        );
    }
    for (id, a) in arms {
        let name = a["name"]
            .as_str()
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default();
        let joints = a["joints"]
            .as_u64()
            .map_or_else(|| "no specification".to_owned(), |n| format!("{n} joints"));
        let heard = match (a["first_s"].as_f64(), a["last_s"].as_f64()) {
            (Some(f), Some(l)) => format!("heard {f:.3} s .. {l:.3} s"),
            _ => "never heard".to_owned(),
        };
        let gaps = a["gaps"].as_array().map_or(0, Vec::len);
        let _ = writeln!(
            o,
            "    {id}{name}: {joints}, {heard}, {} messages sent, {} received, {gaps} gap{}",
            a["messages_sent"],
            a["messages_received"],
            if gaps == 1 { "" } else { "s" }
        );
        if let Value::Object(m) = &a["sent"] {
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|a, b| b.1.as_u64().cmp(&a.1.as_u64()).then(a.0.cmp(b.0)));
            for (name, n) in v {
                let _ = writeln!(o, "      {:>10}  {name}", n.as_u64().unwrap_or(0));
            }
        }
    }
    let ignored = s["arms_not_followed"].as_u64().unwrap_or(0);
    if ignored > 0 {
        let _ = writeln!(
            o,
            "  {ignored} more manipulator{} not followed (at most {} are)",
            if ignored == 1 { "" } else { "s" },
            crate::model::update::MAX_ARMS
        );
    }
}
