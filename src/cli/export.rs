//! `jaus-ocu export`: a recording (`.mcap`) or capture (`.pcap`, `.pcapng`) to other tools'
//! formats — the raw datagrams as a pcapng capture (Wireshark, tshark, `inspect`, `replay`),
//! the joint and force/torque series of every arm as CSV (the GUI's export,
//! [`crate::record::export`]), and the vehicle with every arm as URDF
//! ([`crate::record::urdf`]); `--component` picks one arm for both.
//!
//! Every output is written to a hidden temporary file beside it (`.NAME.PID.partial`) and
//! renamed into place only when complete, so a failed export leaves nothing under the final
//! name. A damaged input is exported as far as it is readable, and the command says where
//! reading stopped (exit status 1).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args};

use crate::jaus::{JausId, judp};
use crate::model::update::ComponentId;
use crate::model::vehicle::Vehicle;
use crate::net::tap::Direction;
use crate::record::capture::{CaptureEvent, CaptureReader};
use crate::record::export::write_vehicle_csv;
use crate::record::format;
use crate::record::io_error::describe_io;
use crate::record::pcapng::{PacketDirection, PcapngError, PcapngWriter};
use crate::record::player::Replay;
use crate::record::source::{SourceInfo, SourceKind, WireSource};
use crate::record::urdf::{UrdfArm, write_vehicle_urdf};

pub use crate::record::format::KEY_LOCAL_ADDRESS;

/// The OCU's side of IPv4 datagrams when the recording does not say it: loopback, port 0
/// (port 0: unknown).
pub const PLACEHOLDER_V4: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);
/// The OCU's side of IPv6 datagrams when the recording does not say it.
pub const PLACEHOLDER_V6: SocketAddr = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 0);

/// Arguments of `jaus-ocu export`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 everything exported from a complete read; 1 the input is \
damaged (the outputs hold everything readable) or holds no arm specification for --urdf; 2 wrong \
arguments, an unreadable input, or an output that cannot be written (nothing is left under its \
name: outputs are written to a temporary file beside them and renamed when complete)."
)]
#[command(group(
    ArgGroup::new("outputs")
        .required(true)
        .multiple(true)
        .args(["pcapng", "csv", "urdf"])
))]
pub struct ExportArgs {
    /// A recording (`.mcap`) or capture (`.pcap`, `.pcapng`); the format is detected from the
    /// content.
    pub file: PathBuf,
    /// Write the raw datagrams as a pcapng capture: UDP over IPv4/IPv6 (raw IP link type)
    /// with the peers' real addresses and ports and nanosecond times, direction in each
    /// packet's flags. A recording does not say which address the OCU itself used: unless
    /// its session metadata has `local_address` or `--local` is given, the OCU's side is the
    /// placeholder 127.0.0.1:0 (`[::1]:0` for IPv6 peers).
    #[arg(long, value_name = "OUT")]
    pub pcapng: Option<PathBuf>,
    /// Write joint positions, velocities, efforts, joint torques and end-effector force/torque
    /// as CSV, as the GUI's File → Export does (default range: the whole session). Every arm
    /// in the file (each column name prefixed with its arm's ID, `126.1.10/q1`, when there
    /// are several), or the one `--component` names (columns without a prefix).
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Write the vehicle as URDF: every arm whose specification the file holds (the last one
    /// of each), attached to the `vehicle` root at its mount, every link and joint name
    /// prefixed with the arm's ID (`126.1.10/link_1`: the Foxglove channels' frame names);
    /// links, joints with axes and limits, the bounding cylinders as collision geometry, the
    /// tool point. `--component` writes one arm.
    #[arg(long, value_name = "OUT.urdf")]
    pub urdf: Option<PathBuf>,
    /// CSV and URDF: only this arm (its JAUS ID, subsystem.node.component; `inspect` lists
    /// the arms of a file).
    #[arg(long, value_name = "S.N.C")]
    pub component: Option<JausId>,
    /// CSV: first time to export, s since the session started (default: the start).
    #[arg(long, value_name = "S")]
    pub from: Option<f64>,
    /// CSV: last time to export, s since the session started (default: the end).
    #[arg(long, value_name = "S")]
    pub to: Option<f64>,
    /// pcapng: the OCU's own address (ip:port), for the packets it sent and received.
    #[arg(long, value_name = "ADDR")]
    pub local: Option<SocketAddr>,
    /// UDP port that carries JUDP in captures.
    #[arg(long, default_value_t = judp::PORT)]
    pub port: u16,
}

/// Runs the subcommand. Exit status 0 when everything was exported from a complete read;
/// 1 when the input is damaged (the outputs hold everything readable; the message says where
/// reading stopped) or holds no specification for `--urdf`; 2 (an error) for wrong
/// arguments, an unreadable input, or an output that cannot be written (nothing is left
/// under its name).
pub fn run(args: &ExportArgs) -> Result<i32> {
    check_range(args)?;
    // The input first: a file that cannot be read creates no output at all.
    let source = WireSource::open(&args.file, args.port)?;
    let kind = source.info().kind;
    // Metadata (the arm's name for the URDF): what the summary gave at open, or, after the
    // pcapng pass, everything read (a file without its summary has its metadata inline).
    let mut info = source.info().clone();
    let mut pcapng = args.pcapng.as_deref().map(AtomicFile::create).transpose()?;
    let mut csv = args.csv.as_deref().map(AtomicFile::create).transpose()?;
    let mut urdf = args.urdf.as_deref().map(AtomicFile::create).transpose()?;
    let mut stopped: Option<String> = None;
    let mut problems: Vec<String> = Vec::new();
    let mut report = Vec::new();

    if let Some(out) = &mut pcapng {
        let done = match kind {
            Some(SourceKind::Mcap) => export_recording(source, args, out)?,
            _ => {
                drop(source);
                export_capture(args, out)?
            }
        };
        report.push(done.line);
        if let Some(read) = done.info {
            info = read;
        }
        stopped = stopped.or(done.stopped);
        problems.extend(done.problems);
    }

    let mut no_spec = false;
    if csv.is_some() || urdf.is_some() {
        let (session, progress) = Replay::load_blocking(&args.file, args.port)?;
        if pcapng.is_none() {
            stopped = stopped.or(progress.stopped.clone());
            problems.extend(progress.problems.iter().cloned());
        }
        let component = args.component.map(ComponentId::from);
        if let Some(id) = component
            && session.arm(id).is_none()
        {
            let arms: Vec<String> = session.arms().map(|(id, _)| id.to_string()).collect();
            bail!(
                "--component {id}: {} holds no manipulator {id} ({}); nothing was written",
                args.file.display(),
                if arms.is_empty() {
                    "it holds no manipulator at all".to_owned()
                } else {
                    format!("its arms: {}", arms.join(", "))
                }
            );
        }
        if let Some(out) = &mut csv {
            report.push(export_csv(&session, component, args, out)?);
        }
        if let Some(out) = &mut urdf {
            match export_urdf(&session, component, &info, args, out)? {
                Some(line) => report.push(line),
                None => no_spec = true,
            }
        }
    }

    // Everything is written: put the files in place (the URDF only if there was an arm).
    let mut written = Vec::new();
    for out in [pcapng, csv].into_iter().flatten() {
        written.push(out.dest.display().to_string());
        out.commit()?;
    }
    if let Some(out) = urdf {
        if no_spec {
            drop(out);
        } else {
            written.push(out.dest.display().to_string());
            out.commit()?;
        }
    }
    for line in &report {
        eprintln!("{line}");
    }
    for p in &problems {
        eprintln!("warning: {}: {p}", args.file.display());
    }
    let mut code = 0;
    if no_spec {
        eprintln!(
            "error: {} holds no manipulator specification (no ReportManipulatorSpecifications \
             was recorded), so there is no arm to write as URDF; record a session in which the \
             OCU selects an arm",
            args.file.display()
        );
        code = 1;
    }
    if let Some(why) = stopped {
        eprintln!(
            "error: {}: reading stopped early: {why}; {} hold{} everything before that point",
            args.file.display(),
            written.join(", "),
            if written.len() == 1 { "s" } else { "" }
        );
        code = 1;
    } else if kind == Some(SourceKind::Mcap) && !problems.is_empty() {
        eprintln!(
            "error: {} is damaged (see the warnings above): what was readable is exported",
            args.file.display()
        );
        code = 1;
    }
    Ok(code)
}

/// Refuses a CSV range that is not finite or runs backwards, before anything is opened.
fn check_range(args: &ExportArgs) -> Result<()> {
    for (flag, v) in [("--from", args.from), ("--to", args.to)] {
        if let Some(v) = v
            && !v.is_finite()
        {
            bail!("{flag} {v}: give seconds since the session started, e.g. 12.5");
        }
    }
    if let (Some(a), Some(b)) = (args.from, args.to)
        && b < a
    {
        bail!("--from {a} is after --to {b}: give the earlier time first");
    }
    Ok(())
}

/// Writes the joint and force/torque series of `--from`..`--to` (default: the whole session)
/// of every arm, or of `component`, as CSV; returns the report line.
fn export_csv(
    vehicle: &Vehicle,
    component: Option<ComponentId>,
    args: &ExportArgs,
    out: &mut AtomicFile,
) -> Result<String> {
    let span = vehicle.span();
    let t0 = args.from.or(span.map(|s| s.0)).unwrap_or(0.0);
    let t1 = args.to.or(span.map(|s| s.1)).unwrap_or(0.0);
    let (rows, arms) =
        write_vehicle_csv(vehicle, component, t0, t1, out.writer()?).map_err(|e| out.failed(&e))?;
    let arms = match arms.as_slice() {
        [] => "no arm in the file".to_owned(),
        [one] => format!("arm {one}"),
        several => format!(
            "arms {} (columns prefixed with each arm's ID)",
            several
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(format!(
        "wrote {}: {rows} rows ({t0:.3} s to {t1:.3} s of the session), {arms}",
        out.dest.display()
    ))
}

/// Writes every arm's last specification (or `component`'s) as one vehicle URDF; returns the
/// report line, or `None` when no arm's specification is in the session (nothing is written).
fn export_urdf(
    vehicle: &Vehicle,
    component: Option<ComponentId>,
    info: &SourceInfo,
    args: &ExportArgs,
    out: &mut AtomicFile,
) -> Result<Option<String>> {
    let arms: Vec<UrdfArm<'_>> = vehicle
        .arms()
        .filter(|(id, _)| component.is_none_or(|c| c == *id))
        .filter_map(|(id, s)| {
            Some(UrdfArm {
                id,
                spec: s.latest.spec.as_ref()?,
                tool_point: s.latest.tool_point,
            })
        })
        .collect();
    if arms.is_empty() {
        return Ok(None);
    }
    let name = robot_name(info, &args.file, &arms);
    let text = write_vehicle_urdf(
        &arms,
        &name,
        crate::model::kinematics::DEFAULT_CYLINDER_RADIUS,
    )
    .with_context(|| {
        format!(
            "the specification in {} cannot be written as URDF",
            args.file.display()
        )
    })?;
    out.writer()?
        .write_all(text.as_bytes())
        .map_err(|e| out.failed(&e))?;
    let described: Vec<String> = arms
        .iter()
        .map(|a| {
            format!(
                "{} ({} joints, {})",
                a.id,
                a.spec.joints.len(),
                if a.tool_point.is_some() {
                    "tool point"
                } else {
                    "no tool point in the file"
                }
            )
        })
        .collect();
    Ok(Some(format!(
        "wrote {}: \"{name}\", {} arm{}: {}",
        out.dest.display(),
        arms.len(),
        if arms.len() == 1 { "" } else { "s" },
        described.join(", ")
    )))
}

/// What one pass wrote, and how the reading ended.
struct Pass {
    line: String,
    stopped: Option<String>,
    problems: Vec<String>,
    /// What the recording said of itself, all of it read (captures: `None`).
    info: Option<SourceInfo>,
}

/// The OCU's address for datagrams to and from `peer`: `--local`, else the recording's
/// `local_address` metadata, when of the peer's family; else the placeholder.
fn local_for(configured: Option<SocketAddr>, peer: SocketAddr) -> SocketAddr {
    match configured {
        Some(l) if l.is_ipv4() == peer.is_ipv4() => l,
        _ if peer.is_ipv4() => PLACEHOLDER_V4,
        _ => PLACEHOLDER_V6,
    }
}

fn export_recording(
    mut source: WireSource,
    args: &ExportArgs,
    out: &mut AtomicFile,
) -> Result<Pass> {
    let mut writer: Option<PcapngWriter<&mut BufWriter<File>>> = None;
    let mut configured = args.local;
    let mut placeholder_used = false;
    let mut skipped = Vec::new();
    let dest = out.dest.clone();
    let file = out.writer()?;
    // The writer is made at the first datagram: by then the session metadata (written first
    // in every recording) has been read, also from a file without its summary.
    let mut records = 0u64;
    // Not `for … in source.by_ref()`: the body reads the source's metadata between records.
    #[allow(clippy::while_let_on_iterator)]
    while let Some(rec) = source.next() {
        records += 1;
        if writer.is_none() {
            if configured.is_none() {
                configured = metadata_local(source.info());
            }
            let comment = comment(&args.file, configured);
            writer = Some(
                PcapngWriter::new(&mut *file, Some(&comment)).map_err(|e| io_failure(&dest, &e))?,
            );
        }
        let Some(w) = writer.as_mut() else { break };
        let local = local_for(configured, rec.peer);
        placeholder_used |= local == PLACEHOLDER_V4 || local == PLACEHOLDER_V6;
        let (src, dst, dir) = match rec.direction {
            Direction::Rx => (rec.peer, local, PacketDirection::Inbound),
            Direction::Tx => (local, rec.peer, PacketDirection::Outbound),
        };
        if let Err(e) = w.write_udp(rec.t_ns, src, dst, Some(dir), &rec.bytes) {
            match e {
                PcapngError::Io(io) => {
                    return Err(io_failure(&dest, &io));
                }
                other => skipped.push(format!(
                    "datagram {records} ({}) not exported: {other}",
                    rec.peer
                )),
            }
        }
    }
    let packets = match writer {
        Some(w) => {
            let n = w.packets();
            w.finish().map_err(|e| io_failure(&dest, &e))?;
            n
        }
        None => {
            // No datagram at all: still a valid (empty) capture.
            let comment = comment(
                &args.file,
                configured.or_else(|| metadata_local(source.info())),
            );
            PcapngWriter::new(&mut *file, Some(&comment))
                .and_then(|w| w.finish().map(|_| ()))
                .map_err(|e| io_failure(&dest, &e))?;
            0
        }
    };
    let mut problems: Vec<String> = source.problems().to_vec();
    problems.extend(skipped);
    let line = format!(
        "wrote {}: {packets} packets (UDP; times in ns){}",
        dest.display(),
        if placeholder_used {
            format!(
                "; the recording does not say the OCU's own address, so its side is {PLACEHOLDER_V4} / {PLACEHOLDER_V6} (use --local ADDR to set it)"
            )
        } else {
            String::new()
        }
    );
    Ok(Pass {
        line,
        stopped: source.stopped().map(str::to_owned),
        problems,
        info: Some(source.info().clone()),
    })
}

fn export_capture(args: &ExportArgs, out: &mut AtomicFile) -> Result<Pass> {
    let reader = CaptureReader::open(&args.file, args.port)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let dest = out.dest.clone();
    let file = out.writer()?;
    let note = format!("exported by jaus-ocu from {}", args.file.display());
    let mut w = PcapngWriter::new(&mut *file, Some(&note)).map_err(|e| io_failure(&dest, &e))?;
    let mut problems = Vec::new();
    let mut stopped = None;
    for event in reader {
        match event {
            Ok(CaptureEvent::Datagram(d)) => {
                let t_ns = (d.time * 1e9).round().max(0.0) as u64;
                if let Err(e) = w.write_udp(t_ns, d.source, d.destination, None, &d.payload) {
                    match e {
                        PcapngError::Io(io) => {
                            return Err(io_failure(&dest, &io));
                        }
                        other => problems.push(format!("frame {}: not exported: {other}", d.frame)),
                    }
                }
            }
            Ok(CaptureEvent::Bad { frame, reason, .. }) => {
                problems.push(format!("frame {frame}: {reason}"));
            }
            Ok(_) => {}
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        }
    }
    let packets = w.packets();
    w.finish().map_err(|e| io_failure(&dest, &e))?;
    Ok(Pass {
        line: format!(
            "wrote {}: {packets} packets (the JUDP datagrams on UDP port {}, reassembled)",
            dest.display(),
            args.port
        ),
        stopped,
        problems,
        info: None,
    })
}

fn metadata_local(info: &SourceInfo) -> Option<SocketAddr> {
    info.metadata
        .get(format::SESSION_METADATA)
        .and_then(|m| m.get(KEY_LOCAL_ADDRESS))
        .and_then(|v| v.trim().parse().ok())
}

fn comment(file: &Path, local: Option<SocketAddr>) -> String {
    match local {
        Some(l) => format!(
            "exported by jaus-ocu from {}; the OCU's side of each datagram is {l} (for peers \
             of the other IP version the placeholder {})",
            file.display(),
            if l.is_ipv4() {
                PLACEHOLDER_V6
            } else {
                PLACEHOLDER_V4
            }
        ),
        None => format!(
            "exported by jaus-ocu from {}; the recording does not say the OCU's own address: \
             its side of each datagram is the placeholder {PLACEHOLDER_V4} ({PLACEHOLDER_V6} \
             for IPv6 peers)",
            file.display()
        ),
    }
}

/// The robot's name: one arm written, its metadata's name (`arm/S.N.C`, or an old file's
/// `arm`), else "JAUS manipulator S.N.C"; several, the file's name ("JAUS vehicle" when it
/// has none).
fn robot_name(info: &SourceInfo, file: &Path, arms: &[UrdfArm<'_>]) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.trim().is_empty());
    let [arm] = arms else {
        return stem.unwrap_or_else(|| "JAUS vehicle".to_owned());
    };
    let id = arm.id.to_string();
    let meta = info
        .metadata
        .get(&format::arm_metadata_name(arm.id))
        .or_else(|| {
            info.metadata
                .get(format::ARM_METADATA)
                .filter(|m| m.get(format::KEY_COMPONENT_ID) == Some(&id))
        });
    if let Some(name) = meta
        .and_then(|m| m.get(format::KEY_NAME))
        .filter(|n| !n.trim().is_empty())
    {
        return name.trim().to_owned();
    }
    format!("JAUS manipulator {id}")
}

/// An output written under a temporary name beside its destination and renamed into place
/// by [`AtomicFile::commit`]; dropped without it, the temporary file is removed.
struct AtomicFile {
    dest: PathBuf,
    temp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    fn create(dest: &Path) -> Result<AtomicFile> {
        if dest.is_dir() {
            bail!(
                "cannot write {}: that is a folder — give a file name",
                dest.display()
            );
        }
        let Some(name) = dest.file_name() else {
            bail!("cannot write {}: give a file name", dest.display());
        };
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = dir.join(format!(
            ".{}.{}.partial",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {}", dest.display(), describe_io(&e)))?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            temp,
            file: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// The open file (always, until `commit` consumes the output).
    fn writer(&mut self) -> Result<&mut BufWriter<File>> {
        let dest = self.dest.display().to_string();
        self.file
            .as_mut()
            .with_context(|| format!("{dest} is already closed (a bug in jaus-ocu)"))
    }

    /// The error for a failed write.
    fn failed(&self, e: &io::Error) -> anyhow::Error {
        io_failure(&self.dest, e)
    }

    /// Flushes, syncs and renames the file into place.
    fn commit(mut self) -> Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let file = file
            .into_inner()
            .map_err(|e| io_failure(&self.dest, &e.into_error()))?;
        file.sync_all().map_err(|e| io_failure(&self.dest, &e))?;
        drop(file);
        std::fs::rename(&self.temp, &self.dest).map_err(|e| io_failure(&self.dest, &e))?;
        // In place: nothing to clean up.
        self.temp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

fn io_failure(dest: &Path, e: &io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot write {}: {}; nothing was left under that name",
        dest.display(),
        describe_io(e)
    )
}
