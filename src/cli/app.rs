//! The command line's definition (`Cli`, `Command`), in the library so that `jaus-ocu generate`
//! can render the man pages and shell completions from the same clap structs `main` parses.

use clap::{CommandFactory, Parser, Subcommand};

use crate::cli;

/// `jaus-ocu --version`: the crate version and the git commit it was built from (build.rs;
/// `-dirty` when tracked files differed from that commit, `unknown` outside a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("JAUS_OCU_GIT_COMMIT"),
    ")"
);

/// jaus-ocu: an operator control unit for SAE JAUS robotic manipulators.
#[derive(Debug, Parser)]
#[command(name = "jaus-ocu", version = VERSION, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// The subcommand; none runs the GUI on the network.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Without a subcommand: a recording (.mcap) or capture (.pcap, .pcapng) to open, as
    /// `jaus-ocu replay FILE` does (what the desktop entry's "Open with" passes).
    #[arg(value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// Without a subcommand: the GUI on the network.
    #[command(flatten)]
    pub gui: cli::gui::GuiArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
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
    /// Write the man pages or the shell completions (packaging; hidden from help and man pages).
    #[command(hide = true)]
    Generate(cli::generate::GenerateArgs),
    /// Send an untrusted sender's datagrams (spoofed IDs, floods, broken framing) to OCUs and
    /// arms on this machine, loopback only, bounded in rate and time (testing; hidden).
    #[command(hide = true)]
    Flood(cli::flood::FloodArgs),
}

/// The clap command `main` parses: what the man pages and completions are rendered from.
pub fn command() -> clap::Command {
    Cli::command()
}
