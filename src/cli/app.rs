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
    /// resume, standby, release, jog); exit status 0 only when every action happened.
    Control(cli::control::ControlArgs),
    /// Check a JAUS component against the wire reference: named suites, a verdict per check
    /// with its reason and evidence frames, `JUnit` XML and a pcapng capture.
    Conform(cli::conform::ConformArgs),
    /// Record every datagram the network side sends and receives to an MCAP file (headless).
    Record(cli::record::RecordArgs),
    /// Serve the live session of every arm (or a recording, at 1×) to Foxglove and Lichtblick
    /// over their WebSocket protocol, read-only (headless; loopback by default).
    Serve(cli::serve::ServeArgs),
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
    /// Relay JUDP between an OCU and an arm on this machine, losing a fraction of the
    /// datagrams each way, loopback only, bounded in time (testing; hidden).
    #[command(hide = true)]
    Relay(cli::relay::RelayArgs),
}

/// The clap command `main` parses: what the man pages and completions are rendered from.
pub fn command() -> clap::Command {
    Cli::command()
}

/// The error for a first argument that is neither a subcommand nor a file (`jaus-ocu replya
/// FILE`, where clap took `replya` for the FILE to open and then refused the second word as
/// a subcommand): what was wrong, the nearest subcommand, where the list is. `None` when the
/// arguments are for clap to judge (an option first, a subcommand, or a path that exists).
pub fn misspelled_subcommand(args: &[std::ffi::OsString]) -> Option<String> {
    let word = args.get(1)?.to_str()?;
    if word.starts_with('-') || std::path::Path::new(word).exists() {
        return None;
    }
    let cmd = command();
    // Hidden subcommands (generate, flood, relay) are subcommands too; only the listed ones are
    // offered.
    if word == "help" || cmd.get_subcommands().any(|c| c.get_name() == word) {
        return None;
    }
    let names: Vec<&str> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(clap::Command::get_name)
        .collect();
    let nearest = names
        .iter()
        .map(|n| (edit_distance(word, n), *n))
        .min()
        .filter(|(d, n)| *d <= 2 || n.starts_with(word));
    // A word with an extension is a file that is not there: the GUI says so when it opens
    // it, with the path; a bare word is a subcommand mistyped.
    if nearest.is_none() && std::path::Path::new(word).extension().is_some() {
        return None;
    }
    let hint = nearest.map_or_else(String::new, |(_, n)| format!(" Did you mean `{n}`?"));
    Some(format!(
        "'{word}' is neither a file nor a subcommand.{hint} The subcommands are {} \
         (`jaus-ocu --help` says what each does).",
        names.join(", ")
    ))
}

/// Levenshtein distance between two short words (characters inserted, deleted or changed).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<std::ffi::OsString> {
        words.iter().map(Into::into).collect()
    }

    #[test]
    fn a_mistyped_subcommand_is_named_with_the_nearest_one() {
        let said = misspelled_subcommand(&args(&["jaus-ocu", "replya", "FILE"])).unwrap();
        assert!(
            said.starts_with("'replya' is neither a file nor a subcommand"),
            "{said}"
        );
        assert!(said.contains("Did you mean `replay`?"), "{said}");
        let said = misspelled_subcommand(&args(&["jaus-ocu", "prob"])).unwrap();
        assert!(said.contains("`probe`"), "{said}");
        // What clap and the GUI judge themselves.
        for ok in [
            &["jaus-ocu", "replay", "x.mcap"][..],
            &["jaus-ocu", "--connect", "127.0.0.1:3794"],
            &["jaus-ocu", "missing.mcap"],
            &["jaus-ocu", "help"],
            &["jaus-ocu", "flood", "--help"],
            &["jaus-ocu", "relay", "--help"],
            &["jaus-ocu", "generate"],
            &["jaus-ocu", "Cargo.toml"],
            &["jaus-ocu"],
        ] {
            assert_eq!(misspelled_subcommand(&args(ok)), None, "{ok:?}");
        }
        assert_eq!(edit_distance("replya", "replay"), 2);
        assert_eq!(edit_distance("", "sim"), 3);
    }
}
