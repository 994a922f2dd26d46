//! The `jaus-ocu` command line.

use std::process::ExitCode;

use clap::Parser;

use jaus_ocu::cli;
use jaus_ocu::cli::app::{Cli, Command};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(said) = jaus_ocu::cli::app::misspelled_subcommand(&args) {
        eprintln!("error: {said}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse_from(args);
    let result = match &cli.command {
        None => match &cli.file {
            Some(file) => cli::gui::run_open(file, &cli.gui, &cli::app::command()),
            None => cli::gui::run_live(&cli.gui),
        },
        Some(Command::Demo(args)) => cli::gui::run_demo(args),
        Some(Command::Decode(args)) => cli::decode::run(args),
        Some(Command::Inspect(args)) => cli::inspect::run(args),
        Some(Command::Replay(args)) => cli::gui::run_replay(args),
        Some(Command::Sim(args)) => cli::sim::run(args),
        Some(Command::Probe(args)) => cli::probe::run(args),
        Some(Command::Control(args)) => cli::control::run(args),
        Some(Command::Screenshot(args)) => cli::screenshot::run(args),
        Some(Command::Record(args)) => cli::record::run(args),
        Some(Command::Serve(args)) => cli::serve::run(args),
        Some(Command::Conform(args)) => cli::conform::run(args),
        Some(Command::Export(args)) => cli::export::run(args),
        Some(Command::Generate(args)) => cli::generate::run(args, &cli::app::command()),
        Some(Command::Flood(args)) => cli::flood::run(args),
        Some(Command::Relay(args)) => cli::relay::run(args),
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
