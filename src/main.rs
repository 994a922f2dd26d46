//! The `jaus-ocu` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use jaus_ocu::cli;

/// jaus-ocu: an operator control unit for SAE JAUS robotic manipulators.
#[derive(Debug, Parser)]
#[command(name = "jaus-ocu", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode one JUDP datagram (or bare JAUS message) given as hex, or one per line from stdin.
    Decode(cli::decode::DecodeArgs),
    /// Decode every JUDP datagram in a .pcap or .pcapng capture.
    Inspect(cli::inspect::InspectArgs),
    /// Run a simulated JAUS manipulator component on UDP (default: the demo arm on 127.0.0.1:3794).
    Sim(cli::sim::SimArgs),
    /// Discover JAUS components and show the selected manipulator (headless network side).
    Probe(cli::probe::ProbeArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Decode(args) => cli::decode::run(args),
        Command::Inspect(args) => cli::inspect::run(args),
        Command::Sim(args) => cli::sim::run(args),
        Command::Probe(args) => cli::probe::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
