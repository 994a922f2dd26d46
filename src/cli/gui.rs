//! The GUI entry points: `jaus-ocu` (arms on the network), `jaus-ocu demo` (the built-in
//! simulated arms, `--arms N` of them on one vehicle, started in-process and reached over real
//! loopback UDP) and `jaus-ocu replay`.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

use super::identity::{self, Role};
use super::sim::load_arm;
use crate::jaus::{JausId, judp};
use crate::model::clearance::obstacles::VehicleGeometry;
use crate::net::client::ClientConfig;
use crate::net::fault::Faults;
use crate::net::thread::NetConfig;
use crate::sim::component::{Component, SimConfig};
use crate::sim::host;
use crate::sim::vehicle::{MAX_DEMO_ARMS, vehicle_arms};
use crate::ui::sources::LiveKind;

/// Options of the GUI on the network (`jaus-ocu` without a subcommand).
#[derive(Debug, Args, Default)]
pub struct GuiArgs {
    /// Address of a JAUS component or node to query: IP, IP:PORT, HOST or HOST:PORT (port
    /// 3794 by default; repeatable). Without --no-multicast the multicast group and
    /// 127.0.0.1:3794 (a local `jaus-ocu sim`) are queried too; an arm answering here and
    /// elsewhere under one ID is followed here.
    #[arg(long, value_name = "ADDR", value_parser = super::parse_peer_addr)]
    pub connect: Vec<SocketAddr>,
    /// Query only the --connect addresses: no multicast group (nothing sent to it, so no
    /// send errors where there is no multicast route), and 127.0.0.1:3794 only when given
    /// with --connect.
    #[arg(long)]
    pub no_multicast: bool,
    /// The manipulator to focus: where commands go, what the gauges show (default: the first
    /// one found). Every manipulator found is followed.
    #[arg(long, value_name = "S.N.C")]
    pub component: Option<JausId>,
    /// Local UDP address to bind.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:0")]
    pub bind: Option<SocketAddr>,
    /// The OCU's own JAUS ID (default: this installation's GUI ID, subsystem.node.1 from its
    /// identity file, or the next free component when another jaus-ocu holds it).
    #[arg(long, value_name = "S.N.C")]
    pub jaus_id: Option<JausId>,
    /// The session's memory budget for this run: 512M, 2G, 1.5GiB or a share of this
    /// machine's memory such as 25% (default: as set in View → Memory, else a quarter of the
    /// memory, at most 4 GiB). Beyond it the oldest samples are kept as a min/max envelope.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// Start the live view server at once, on ADDR (e.g. 127.0.0.1:8765; View → Live view
    /// server starts and stops it later): the session served read-only to Foxglove and
    /// Lichtblick. Loopback unless asked; see README on SSH tunnels.
    #[arg(long, value_name = "ADDR")]
    pub live_view: Option<SocketAddr>,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, which the clearance shown and the jog's
    /// guard keep off (default: none: the arms' own cylinders only).
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<std::path::PathBuf>,
}

/// Arguments of `jaus-ocu demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Arm description (TOML) or built-in name: demo, puma560, ur5e.
    #[arg(long, value_name = "FILE", default_value = "demo")]
    pub arm: String,
    /// How many simulated arms the vehicle carries (1 to 8): IDs 126.1.10, 126.1.11, …, each
    /// on its own loopback socket, mounted 0.8 m apart across the vehicle, facing outward.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=MAX_DEMO_ARMS as i64))]
    pub arms: u8,
    /// The OCU's own JAUS ID (default: as `gui`).
    #[arg(long, value_name = "S.N.C")]
    pub jaus_id: Option<JausId>,
    /// Accepted as the GUI's: the demo never queries the multicast group or 127.0.0.1:3794
    /// (only its own simulated arms' addresses).
    #[arg(long)]
    pub no_multicast: bool,
    /// The session's memory budget for this run: 512M, 2G, 1.5GiB or a share of this
    /// machine's memory such as 25% (default: as set in View → Memory, else a quarter of the
    /// memory, at most 4 GiB). Beyond it the oldest samples are kept as a min/max envelope.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// Start the live view server at once, on ADDR (e.g. 127.0.0.1:8765; View → Live view
    /// server starts and stops it later): the session served read-only to Foxglove and
    /// Lichtblick. Loopback unless asked; see README on SSH tunnels.
    #[arg(long, value_name = "ADDR")]
    pub live_view: Option<SocketAddr>,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, which the clearance shown and the jog's
    /// guard keep off (default: the built-in demo vehicle).
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<std::path::PathBuf>,
}

/// Arguments of `jaus-ocu replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A recording (`.mcap`, from `jaus-ocu record` or the record button) or a capture
    /// (`.pcap`, `.pcapng`); the format is detected from the content.
    pub file: std::path::PathBuf,
    /// UDP port that carries JUDP in captures.
    #[arg(long, default_value_t = judp::PORT)]
    pub port: u16,
    /// Accepted as the GUI's and every network command's: a replay queries nobody (no
    /// multicast group, no address), with or without it.
    #[arg(long)]
    pub no_multicast: bool,
    /// The session's memory budget for this run: 512M, 2G, 1.5GiB or a share of this
    /// machine's memory such as 25% (default: as set in View → Memory, else a quarter of the
    /// memory, at most 4 GiB). Beyond it the oldest samples are kept as a min/max envelope.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, which the clearance shown and the jog's
    /// guard keep off (default: none: the arms' own cylinders only).
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<std::path::PathBuf>,
}

/// `--memory-limit` as clap reads it.
fn parse_memory_limit(text: &str) -> Result<u64, String> {
    crate::ui::memory::parse_limit(text, crate::ui::memory::physical_memory())
}

/// The vehicle file at `path` (`--vehicle`), else `default`: a file that cannot be read or
/// used is an error naming it and what to fix.
pub fn load_vehicle(
    path: Option<&std::path::Path>,
    default: impl FnOnce() -> VehicleGeometry,
) -> Result<Arc<VehicleGeometry>> {
    let Some(path) = path else {
        return Ok(Arc::new(default()));
    };
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "vehicle file {}: cannot be read (give --vehicle a readable TOML vehicle file, \
             as assets/vehicles/demo.toml)",
            path.display()
        )
    })?;
    let vehicle = VehicleGeometry::parse(&text, &path.display().to_string())?;
    tracing::info!(
        "vehicle {:?} from {}: {} obstacles, {} pairs allowed by the file",
        vehicle.name,
        path.display(),
        vehicle.obstacles.len(),
        vehicle.allow.len()
    );
    Ok(Arc::new(vehicle))
}

/// Opens the GUI replaying a file.
pub fn run_replay(args: &ReplayArgs) -> Result<i32> {
    let vehicle = load_vehicle(args.vehicle.as_deref(), VehicleGeometry::default)?;
    crate::ui::run_replay(&args.file, args.port, args.memory_limit, vehicle)?;
    Ok(0)
}

/// Refuses the network options that make no sense with a FILE to replay (`--connect`,
/// `--component`, `--jaus-id`); `--no-multicast` asks for less network, which a replay uses
/// none of: accepted.
fn check_file_options(file: &std::path::Path, gui: &GuiArgs) -> Result<()> {
    if !gui.connect.is_empty() || gui.component.is_some() || gui.jaus_id.is_some() {
        anyhow::bail!(
            "{}: a file is replayed, not connected to; give either a FILE or the network \
             options (--connect, --component, --jaus-id), not both",
            file.display()
        );
    }
    Ok(())
}

/// `jaus-ocu FILE` (the desktop entry's "Open with"): replays the file, with the memory
/// budget given; the network options make no sense with a file and are refused. `cmd` is the
/// clap command `main` parses (`cli::app::command()`), for the subcommands a mistyped one is
/// told.
pub fn run_open(file: &std::path::Path, gui: &GuiArgs, cmd: &clap::Command) -> Result<i32> {
    check_file_options(file, gui)?;
    if !file.exists() && file.extension().is_none() && file.components().count() == 1 {
        // `jaus-ocu demoo`: a mistyped subcommand reads as a file name.
        let subcommands: Vec<String> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_owned())
            .collect();
        anyhow::bail!(
            "'{}' is neither a file nor a subcommand; the subcommands are {} \
             (jaus-ocu --help)",
            file.display(),
            subcommands.join(", ")
        );
    }
    run_replay(&ReplayArgs {
        file: file.to_path_buf(),
        port: judp::PORT,
        no_multicast: gui.no_multicast,
        memory_limit: gui.memory_limit,
        vehicle: gui.vehicle.clone(),
    })
}

/// The live source's network configuration from the GUI's options: `--connect`,
/// `--no-multicast` (no multicast group, no implicit local address), `--component`,
/// `--bind`, with the OCU's own ID `id`.
pub fn live_config(args: &GuiArgs, id: JausId, vehicle: Arc<VehicleGeometry>) -> NetConfig {
    NetConfig {
        bind: args
            .bind
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
        client: ClientConfig {
            id,
            connect: args.connect.clone(),
            implicit: super::probe::implicit_addresses(&args.connect, args.no_multicast),
            multicast: (!args.no_multicast)
                .then(|| SocketAddr::from((judp::MULTICAST_GROUP, judp::PORT))),
            component: args.component,
            vehicle,
            ..ClientConfig::default()
        },
        ..NetConfig::default()
    }
}

/// Runs the GUI on the network.
pub fn run_live(args: &GuiArgs) -> Result<i32> {
    super::probe::check_something_asked(&args.connect, args.no_multicast)?;
    let vehicle = load_vehicle(args.vehicle.as_deref(), VehicleGeometry::default)?;
    let identity = identity::choose(args.jaus_id, Role::Gui)?;
    tracing::info!("{}", identity.describe());
    let cfg = live_config(args, identity.id, vehicle);
    crate::ui::run(
        LiveKind::Live,
        cfg,
        Vec::new(),
        args.memory_limit,
        args.live_view,
    )?;
    Ok(0)
}

/// The physics and loop rate of the demo's simulated arms, Hz: above the highest event rate
/// the window asks for (100 Hz), a fifth of a stand-alone `jaus-ocu sim`'s.
pub const DEMO_SIM_RATE_HZ: f64 = 200.0;

/// Starts the simulated arms on loopback and the GUI connected to every one of them.
pub fn run_demo(args: &DemoArgs) -> Result<i32> {
    let arm = load_arm(&args.arm)?;
    let vehicle = load_vehicle(args.vehicle.as_deref(), VehicleGeometry::demo)?;
    let mut sims = Vec::new();
    let mut connect = Vec::new();
    let arms = vehicle_arms(&arm, usize::from(args.arms));
    // The first arm is focused whichever answers first.
    let first = arms.first().map(|(id, _)| *id);
    for (id, arm) in arms {
        let socket = host::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .with_context(|| format!("starting the simulated arm {id}"))?;
        connect.push(socket.local_addr()?);
        let cfg = SimConfig {
            id,
            tour: true,
            seed: 1 + u64::from(id.component),
            // The arm shares the window's process: its loop wakes at this rate (events are
            // at most 100 Hz). At the default 1 kHz it cost 5 % of a core by itself.
            rate_hz: DEMO_SIM_RATE_HZ,
            ..SimConfig::default()
        };
        sims.push(host::spawn(
            Component::new(arm, cfg),
            socket,
            Faults::default(),
            1,
        )?);
    }
    let identity = identity::choose(args.jaus_id, Role::Gui)?;
    tracing::info!("{}", identity.describe());
    let cfg = NetConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        client: ClientConfig {
            id: identity.id,
            connect,
            multicast: None,
            component: first,
            vehicle,
            ..ClientConfig::default()
        },
        ..NetConfig::default()
    };
    crate::ui::run(
        LiveKind::Simulated,
        cfg,
        sims,
        args.memory_limit,
        args.live_view,
    )?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "tests report a failure by panicking"
    )]

    use clap::Parser;

    use super::*;
    use crate::cli::app::{Cli, Command};

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    #[test]
    fn the_gui_takes_no_multicast_into_its_live_source_config() {
        let cli = parse(&["jaus-ocu", "--no-multicast", "--connect", "10.0.0.2"]);
        assert!(cli.command.is_none() && cli.gui.no_multicast);
        let id = JausId::new(200, 1, 1);
        let cfg = live_config(&cli.gui, id, Arc::new(VehicleGeometry::default()));
        assert_eq!(cfg.client.multicast, None);
        assert_eq!(
            cfg.client.connect,
            vec![SocketAddr::from(([10, 0, 0, 2], judp::PORT))]
        );
        // Nor the implicit local simulator: only the address asked.
        assert!(cfg.client.implicit.is_empty(), "{:?}", cfg.client.implicit);
        // Without it, the multicast group and the local address are queried too.
        let cli = parse(&["jaus-ocu", "--connect", "10.0.0.2"]);
        let cfg = live_config(&cli.gui, id, Arc::new(VehicleGeometry::default()));
        assert_eq!(
            cfg.client.multicast,
            Some(SocketAddr::from((judp::MULTICAST_GROUP, judp::PORT)))
        );
        assert!(!cfg.client.implicit.is_empty());
    }

    #[test]
    fn every_gui_subcommand_accepts_no_multicast() {
        let cli = parse(&["jaus-ocu", "demo", "--no-multicast"]);
        assert!(matches!(
            cli.command,
            Some(Command::Demo(DemoArgs {
                no_multicast: true,
                ..
            }))
        ));
        let cli = parse(&["jaus-ocu", "replay", "x.mcap", "--no-multicast"]);
        assert!(matches!(
            cli.command,
            Some(Command::Replay(ReplayArgs {
                no_multicast: true,
                ..
            }))
        ));
        // `jaus-ocu FILE --no-multicast` (a replay) is not refused for it.
        let cli = parse(&["jaus-ocu", "x.mcap", "--no-multicast"]);
        assert!(cli.gui.no_multicast);
        let file = cli.file.expect("the file");
        check_file_options(&file, &cli.gui).expect("--no-multicast with a file");
        // The network options that make no sense with a file still are refused.
        let cli = parse(&["jaus-ocu", "x.mcap", "--connect", "10.0.0.2"]);
        let err = check_file_options(&file, &cli.gui).unwrap_err();
        assert!(err.to_string().contains("not both"), "{err}");
    }
}
