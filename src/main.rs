//! The `jaus-ocu` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use jaus_ocu::cli;

/// jaus-ocu: an operator control unit for SAE JAUS robotic manipulators.
#[derive(Debug, Parser)]
#[command(name = "jaus-ocu", version, about, long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand: the GUI on the network.
    #[command(flatten)]
    gui: cli::gui::GuiArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The GUI with the built-in simulated arm (started in-process, reached over loopback UDP).
    Demo(cli::gui::DemoArgs),
    /// Decode one JUDP datagram (or bare JAUS message) given as hex, or one per line from stdin.
    Decode(cli::decode::DecodeArgs),
    /// Decode every JUDP datagram of a .pcap/.pcapng capture, or summarise an .mcap recording.
    Inspect(cli::inspect::InspectArgs),
    /// Replay a recording (.mcap) or capture (.pcap, .pcapng) in the GUI, with a timeline.
    Replay(cli::gui::ReplayArgs),
    /// Run a simulated JAUS manipulator component on UDP (default: the demo arm on 127.0.0.1:3794).
    Sim(cli::sim::SimArgs),
    /// Discover JAUS components and show the selected manipulator (headless network side).
    Probe(cli::probe::ProbeArgs),
    /// Command the manipulator from a terminal (request-control, go-to, emergency set|clear,
    /// resume, standby, release); exit status 0 only when every action happened.
    Control(cli::control::ControlArgs),
    /// Record every datagram the network side sends and receives to an MCAP file (headless).
    Record(cli::record::RecordArgs),
    /// Export a recording or capture: raw datagrams as pcapng, series as CSV, the arm as URDF.
    Export(cli::export::ExportArgs),
    /// Render the demo UI offscreen to a PNG (no display needed).
    Screenshot(cli::screenshot::ScreenshotArgs),
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
        None => cli::gui::run_live(&cli.gui),
        Some(Command::Demo(args)) => cli::gui::run_demo(args),
        Some(Command::Decode(args)) => cli::decode::run(args),
        Some(Command::Inspect(args)) => cli::inspect::run(args),
        Some(Command::Replay(args)) => cli::gui::run_replay(args),
        Some(Command::Sim(args)) => cli::sim::run(args),
        Some(Command::Probe(args)) => cli::probe::run(args),
        Some(Command::Control(args)) => cli::control::run(args),
        Some(Command::Screenshot(args)) => cli::screenshot::run(args),
        Some(Command::Record(args)) => cli::record::run(args),
        Some(Command::Export(args)) => cli::export::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        // `jaus-ocu inspect big.mcap --json | head`: the reader left; that is not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
