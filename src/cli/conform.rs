//! `jaus-ocu conform`: runs the conformance suites ([`crate::conform`]) against one JAUS
//! component and writes what they found: the report on the terminal (or JSON), and on request
//! a Markdown/HTML report, `JUnit` XML and the evidence capture (pcapng) whose frame numbers
//! the reports cite.

use std::fs;
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use clap::Args;

use super::identity::{self, Role};
use super::probe::{NetArgs, connect_list};
use crate::conform::run::{Options, Report, ReportHeader, Run, Suite};
use crate::conform::target::{self, NotFound, Search};
use crate::conform::tester::{Frame, Tester};
use crate::conform::{evidence, report, suites};
use crate::jaus::judp;
use crate::model::clock::rfc3339_utc;
use crate::net::link::Link;
use crate::net::rng::Rng;

/// Arguments of `jaus-ocu conform`.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Where to look and who we are (the component to test: --component, else the first
    /// that lists a manipulator service).
    #[command(flatten)]
    pub net: NetArgs,
    /// A suite to run (repeatable): discovery, transport, liveness, events, access-control,
    /// management, manipulator, robustness. Default: all but robustness.
    #[arg(long = "suite", value_name = "NAME", value_parser = Suite::parse)]
    pub suites: Vec<Suite>,
    /// Authority code of the tester's control requests.
    #[arg(long, default_value_t = 10)]
    pub authority: u8,
    /// Let the manipulator suite move the arm: small, slow steps inside the joint limits,
    /// then a stop. Without it no motion command is ever sent.
    #[arg(long)]
    pub allow_motion: bool,
    /// Write `JUnit` XML here (one test case per check).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write every datagram of the run here (pcapng); the reports cite its frame numbers.
    #[arg(long, value_name = "FILE")]
    pub pcapng: Option<PathBuf>,
    /// Write the report here: HTML when the name ends in .html, else Markdown.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds to look for the component.
    #[arg(long, value_name = "S", default_value_t = 3.0)]
    pub timeout: f64,
    /// Seconds to wait for each reply before a check says it did not come.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub reply_timeout: f64,
}

fn check_seconds(name: &str, s: f64, max: f64) -> Result<f64> {
    anyhow::ensure!(
        s.is_finite() && s > 0.0 && s <= max,
        "--{name} {s}: give a number of seconds above 0 and at most {max}"
    );
    Ok(s)
}

fn write_file(path: &Path, what: &str, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("writing the {what} to {}", path.display()))
}

/// Writes the capture, the `JUnit` XML and the report file that `args` ask for.
fn write_outputs(
    args: &ConformArgs,
    rep: &Report,
    frames: &[Frame],
    start_unix_ns: u64,
) -> Result<()> {
    if let Some(path) = &args.pcapng {
        let file = fs::File::create(path)
            .with_context(|| format!("creating the capture {}", path.display()))?;
        let comment = format!(
            "jaus-ocu conform: component {} at {} tested by {}; frame numbers as cited in the \
             report",
            rep.target, rep.address, rep.tester
        );
        evidence::write_pcapng(BufWriter::new(file), frames, start_unix_ns, &comment)
            .and_then(|mut w| std::io::Write::flush(&mut w))
            .with_context(|| format!("writing the capture {}", path.display()))?;
    }
    if let Some(path) = &args.junit {
        write_file(path, "JUnit XML", &report::junit(rep))?;
    }
    if let Some(path) = &args.report {
        let html = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
        let text = if html {
            report::html(rep)
        } else {
            report::markdown(rep)
        };
        write_file(path, "report", &text)?;
    }
    Ok(())
}

/// Runs the subcommand. Exit status 0 when no check failed, 1 when one did (or an output
/// file could not be written), 3 when no component to test was found.
pub fn run(args: &ConformArgs) -> Result<i32> {
    let timeout = check_seconds("timeout", args.timeout, 600.0)?;
    let reply_timeout = check_seconds("reply-timeout", args.reply_timeout, 60.0)?;
    super::probe::check_something_asked(&args.net.connect, args.net.no_multicast)?;
    let identity = identity::choose(args.net.jaus_id, Role::Tool)?;
    let start_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let link = Link::open(args.net.bind)?;
    let mut rng = Rng::from_entropy();
    let first_sequence = (rng.next_u64() & 0xFFFF) as u16;
    let connect = connect_list(&args.net.connect, args.net.no_multicast);
    let fallback = connect
        .first()
        .copied()
        .unwrap_or_else(super::probe::local_sim_address);
    let mut tester = Tester::new(
        link,
        identity.id,
        crate::jaus::JausId::BROADCAST,
        fallback,
        first_sequence,
    );
    tester.reply_bound = reply_timeout;
    let search = Search {
        connect: connect.clone(),
        named: args.net.connect.len(),
        multicast: (!args.net.no_multicast)
            .then(|| SocketAddr::from((judp::MULTICAST_GROUP, judp::PORT))),
        component: args.net.component,
        within: timeout,
    };
    let found = match target::find(&mut tester, &search)? {
        Ok(f) => f,
        Err(NotFound::Silence) => {
            let mut places: Vec<String> = connect.iter().map(ToString::to_string).collect();
            if let Some(m) = search.multicast {
                places.push(format!("multicast group {m}"));
            }
            eprintln!(
                "jaus-ocu conform: no JAUS component answered within {timeout:.1} s (asked {}). \
                 Is it running and reachable? Give its address with --connect ADDR, or its ID \
                 with --component S.N.C.",
                places.join(", ")
            );
            return Ok(3);
        }
        Err(NotFound::NoManipulator(ids)) => {
            let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
            eprintln!(
                "jaus-ocu conform: components answered ({}), none lists a manipulator service; \
                 name the one to test with --component S.N.C",
                ids.join(", ")
            );
            return Ok(3);
        }
    };
    tracing::info!("conform: testing {}", found.how);
    let options = Options {
        suites: if args.suites.is_empty() {
            Suite::defaults()
        } else {
            Suite::ALL
                .into_iter()
                .filter(|s| args.suites.contains(s))
                .collect()
        },
        authority: args.authority,
        allow_motion: args.allow_motion,
    };
    let started = tester.now();
    let mut run = Run::new(&mut tester, options);
    suites::run_all(&mut run);
    let seconds = run.tester.now() - started;
    let header = ReportHeader {
        started: rfc3339_utc(start_unix_ns),
        seconds,
        tool: concat!("jaus-ocu ", env!("CARGO_PKG_VERSION")).into(),
        capture: args.pcapng.as_ref().map(|p| {
            p.file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        }),
    };
    let rep = run.finish(header);
    let status = i32::from(!rep.passed());
    write_outputs(args, &rep, tester.frames(), start_unix_ns)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report::json(&rep))?);
    } else {
        print!("{}", report::text(&rep));
        println!("Testing {}.", found.how);
    }
    Ok(status)
}
