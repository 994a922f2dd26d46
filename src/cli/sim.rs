//! `jaus-ocu sim`: runs the simulated manipulator component on a UDP socket.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::jaus::{Dialect, JausId, judp};
use crate::model::arm::Mount;
use crate::net::fault::Faults;
use crate::sim::arm_file::ArmFile;
use crate::sim::component::{Component, DEFAULT_ID, Drivers, Quirks, SimConfig};
use crate::sim::host;

/// Which encoding dialect the simulator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// SAE JSIDL: unit codes 1/2, `JointNamesList` under its presence bit.
    Jsidl,
    /// OpenJAUS: unit codes 0/1, `JointNamesList` always present without its bit.
    Openjaus,
}

/// A joint driver `sim --drivers` may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriverArg {
    /// `ManipulatorJointPositionDriver` (`SetJointPositions`).
    Position,
    /// `ManipulatorJointVelocityDriver` (`SetJointVelocity`).
    Velocity,
    /// `PrimitiveManipulator` (`SetJointEffort`).
    Effort,
    /// `ManipulatorEndEffectorVelocityStateDriver` (`SetEndEffectorVelocityState`, a tool-point
    /// twist in the manipulator frame).
    Tool,
}

/// The drivers `--drivers` lists.
pub fn drivers(list: &[DriverArg]) -> Drivers {
    Drivers {
        position: list.contains(&DriverArg::Position),
        velocity: list.contains(&DriverArg::Velocity),
        effort: list.contains(&DriverArg::Effort),
        tool: list.contains(&DriverArg::Tool),
    }
}

/// Arguments of `jaus-ocu sim`.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Arm description (TOML, see assets/arms/), or a built-in name: demo, puma560, ur5e.
    #[arg(long, value_name = "FILE", default_value = "demo")]
    pub arm: String,
    /// UDP address to bind. Bind 0.0.0.0:3794 to be found by multicast discovery on a network.
    #[arg(long, value_name = "ADDR", default_value_t = SocketAddr::from(([127, 0, 0, 1], judp::PORT)))]
    pub bind: SocketAddr,
    /// The component's JAUS ID.
    #[arg(long, value_name = "SUBSYS.NODE.COMP", default_value_t = DEFAULT_ID)]
    pub id: JausId,
    /// Pin the joints at these values (rad or m, comma-separated): no motion, no noise.
    #[arg(
        long,
        value_name = "Q1,Q2,...",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub hold: Option<Vec<f64>>,
    /// Physics update rate and highest event rate, Hz.
    #[arg(long, value_name = "HZ", default_value_t = 1000.0)]
    pub rate: f64,
    /// Probability of dropping each datagram sent.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub loss: f64,
    /// Probability of sending a datagram twice.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub duplicate: f64,
    /// Probability of sending a datagram after the next one.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub reorder: f64,
    /// Delay added to every datagram sent, ms.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub delay_ms: u64,
    /// Encoding dialect to write.
    #[arg(long, value_enum, default_value_t = DialectArg::Jsidl)]
    pub dialect: DialectArg,
    /// Show a behaviour of another implementation (repeatable; wire reference §9):
    /// wildcard-services (C8: a wildcard `QueryServices` answered by echoing 255 with no
    /// services), reversed-control (C9: `ReportControl`'s controller ID in header byte order),
    /// split-services (C13: one `ReportServices` record per service), core-v1.0 (C7: Transport,
    /// Discovery and Liveness listed as 1.0), ack-payload (C11: ACK blocks carrying the
    /// acknowledged payload). With --dialect openjaus for C1/C2.
    #[arg(long = "quirk", value_name = "NAME", value_parser = parse_quirk)]
    pub quirks: Vec<String>,
    /// Seed for sensor noise and fault injection (default: from the clock).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Access-control timeout, whole seconds (0 = control never lapses), as `ReportTimeout`
    /// says: when the controlling client stops renewing control for this long, control lapses
    /// and the arm stops.
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub control_timeout: u8,
    /// The joint drivers to offer (listed in discovery and obeyed; the others' commands are
    /// not handled), comma-separated. Position, velocity and tool-point commands need a
    /// `SetJointMotionProfile` first.
    #[arg(
        long,
        value_enum,
        value_name = "DRIVER,...",
        value_delimiter = ',',
        default_value = "position,velocity,effort,tool"
    )]
    pub drivers: Vec<DriverArg>,
    /// Cycle through the presets while nobody holds control.
    #[arg(long)]
    pub tour: bool,
    /// Mount the arm at X,Y,Z (m, vehicle frame: +x front, +y right, +z down), turned by YAW
    /// degrees about z: replaces the arm file's `[mount]` (several arms on one vehicle).
    #[arg(
        long,
        value_name = "X,Y,Z[,YAW]",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub mount: Option<Vec<f64>>,
}

/// The mount `--mount X,Y,Z[,YAW_DEG]` describes.
pub fn parse_mount(values: &[f64]) -> Result<Mount> {
    match values {
        [x, y, z] => Ok(Mount::at([*x, *y, *z], 0.0)),
        [x, y, z, yaw] => Ok(Mount::at([*x, *y, *z], yaw.to_radians())),
        _ => bail!(
            "--mount takes X,Y,Z or X,Y,Z,YAW (metres, and degrees about z), got {} values",
            values.len()
        ),
    }
}

/// The installed package's data directory, `/usr/share/jaus-ocu` for `/usr/bin/jaus-ocu`
/// (`<binary's dir>/../share/jaus-ocu`), if it exists; `None` for a build in `target/`.
pub fn installed_data_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("share").join("jaus-ocu");
    dir.is_dir().then_some(dir)
}

/// An arm file the package installed, for an `--arm` that is no file here: `NAME` as
/// `<data dir>/arms/NAME.toml`, and the README's `assets/arms/FILE.toml` as
/// `<data dir>/arms/FILE.toml` (so its examples work outside a checkout too).
fn installed_arm(arm: &str) -> Option<PathBuf> {
    let arms = installed_data_dir()?.join("arms");
    let path = Path::new(arm);
    let candidate = if path.components().count() == 1 && path.extension().is_none() {
        arms.join(format!("{arm}.toml"))
    } else if path.starts_with("assets/arms") {
        arms.join(path.file_name()?)
    } else {
        return None;
    };
    candidate.is_file().then_some(candidate)
}

/// Loads `--arm`: a built-in name or a file (here, else among the installed arm files).
pub fn load_arm(arm: &str) -> Result<ArmFile> {
    let mut path = PathBuf::from(arm);
    if !path.exists()
        && let Some(a) = ArmFile::builtin(arm)
    {
        return Ok(a);
    }
    if !path.exists()
        && let Some(installed) = installed_arm(arm)
    {
        path = installed;
    }
    if !path.exists() && path.extension().is_none() && path.components().count() == 1 {
        // A bare word that is neither a built-in nor a file: most likely a mistyped name.
        bail!(
            "--arm {arm}: no built-in arm of that name and no such file; the built-in arms \
             are {} (or give the path of an arm file, e.g. assets/arms/demo.toml)",
            crate::sim::arm_file::BUILTIN.join(", ")
        );
    }
    ArmFile::load(&path).map_err(|e| {
        anyhow::anyhow!(
            "{e} (--arm takes an arm file or a built-in name: {})",
            crate::sim::arm_file::BUILTIN.join(", ")
        )
    })
}

fn probability(name: &str, p: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&p) {
        bail!("--{name} {p}: a probability must be between 0 and 1");
    }
    Ok(p)
}

impl SimArgs {
    /// The component configuration and faults these arguments describe.
    pub fn config(&self, arm: &ArmFile) -> Result<(SimConfig, Faults)> {
        if !(self.rate.is_finite() && (1.0..=10_000.0).contains(&self.rate)) {
            bail!(
                "--rate {}: the physics rate must be between 1 and 10000 Hz",
                self.rate
            );
        }
        if let Some(q) = &self.hold {
            let n = arm.spec.joint_count();
            if q.len() != n {
                bail!(
                    "--hold gives {} values but {} has {n} joints",
                    q.len(),
                    arm.name
                );
            }
            for (i, (v, j)) in q.iter().zip(&arm.spec.joints).enumerate() {
                if !v.is_finite() || j.clamp(*v) != *v {
                    bail!(
                        "--hold: joint {} value {v} is outside its limits {:?}..{:?}",
                        i + 1,
                        j.min,
                        j.max
                    );
                }
            }
        }
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
        let cfg = SimConfig {
            id: self.id,
            dialect: match self.dialect {
                DialectArg::Jsidl => Dialect::Jsidl,
                DialectArg::Openjaus => Dialect::OpenJaus,
            },
            rate_hz: self.rate,
            seed,
            hold: self.hold.clone(),
            control_timeout_s: self.control_timeout,
            event_timeout_min: 1,
            tour: self.tour,
            drivers: drivers(&self.drivers),
            quirks: {
                let mut q = Quirks::default();
                for name in &self.quirks {
                    q.set(name).map_err(anyhow::Error::msg)?;
                }
                q
            },
        };
        let faults = Faults {
            loss: probability("loss", self.loss)?,
            duplicate: probability("duplicate", self.duplicate)?,
            reorder: probability("reorder", self.reorder)?,
            delay: Duration::from_millis(self.delay_ms),
        };
        Ok((cfg, faults))
    }
}

fn parse_quirk(name: &str) -> Result<String, String> {
    Quirks::default().set(name).map(|()| name.to_string())
}

/// Runs the simulator until the process is stopped, printing counters every 10 s.
pub fn run(args: &SimArgs) -> Result<i32> {
    let mut arm = load_arm(&args.arm)?;
    if let Some(m) = &args.mount {
        arm.spec.mount = Some(parse_mount(m)?);
    }
    let (cfg, faults) = args.config(&arm)?;
    let socket = host::bind(args.bind)?;
    let addr = socket.local_addr()?;
    eprintln!(
        "jaus-ocu sim: {} ({} joints, {} presets) as JAUS {} on udp {addr}, {:?} dialect, physics {} Hz, drivers {}, control timeout {} s{}{}; Ctrl-C stops",
        arm.name,
        arm.spec.joint_count(),
        arm.presets.len(),
        cfg.id,
        cfg.dialect,
        cfg.rate_hz,
        cfg.drivers.service_names().join(", "),
        cfg.control_timeout_s,
        if cfg.hold.is_some() {
            ", joints held"
        } else {
            ""
        },
        if args.quirks.is_empty() {
            String::new()
        } else {
            format!(", quirks {}", args.quirks.join(", "))
        },
    );
    let seed = cfg.seed;
    let handle = host::spawn(Component::new(arm, cfg), socket, faults, seed)
        .context("starting the simulator")?;
    loop {
        std::thread::sleep(Duration::from_secs(10));
        let (s, f) = handle.stats();
        eprintln!(
            "sim: received {} sent {} (events {}, acks {}); malformed {} foreign {} not-for-us {} unhandled {} refused {}; faults: dropped {} duplicated {} reordered {}",
            s.received,
            s.sent,
            s.events_sent,
            s.acks_sent,
            s.malformed,
            s.foreign_version,
            s.not_for_us,
            s.unhandled,
            s.refused_commands,
            f.dropped,
            f.duplicated,
            f.reordered
        );
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::app::{Cli, Command};
    use crate::sim::arm_file::ArmFile;
    use crate::sim::component::Drivers;

    fn sim_config(words: &[&str]) -> Result<crate::sim::component::SimConfig, String> {
        let cli = Cli::try_parse_from(["jaus-ocu", "sim"].iter().chain(words))
            .map_err(|e| e.to_string())?;
        let Some(Command::Sim(args)) = cli.command else {
            return Err("not the sim subcommand".into());
        };
        args.config(&ArmFile::demo())
            .map(|(cfg, _)| cfg)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sim_drivers_and_control_timeout_reach_the_component_config() {
        let cfg = sim_config(&[]).unwrap();
        assert_eq!((cfg.drivers, cfg.control_timeout_s), (Drivers::ALL, 5));
        let cfg =
            sim_config(&["--drivers", "position,velocity", "--control-timeout", "1"]).unwrap();
        assert_eq!(
            cfg.drivers,
            Drivers {
                position: true,
                velocity: true,
                effort: false,
                tool: false,
            }
        );
        assert_eq!(cfg.control_timeout_s, 1);
        let cfg = sim_config(&["--drivers", "velocity"]).unwrap();
        assert!(cfg.drivers.velocity && !cfg.drivers.position && !cfg.drivers.effort);
        assert!(!cfg.drivers.tool);
        let cfg = sim_config(&["--drivers", "tool"]).unwrap();
        assert!(cfg.drivers.tool && !cfg.drivers.velocity);
        let e = sim_config(&["--drivers", "velocity,warp"]).unwrap_err();
        assert!(e.contains("warp"), "{e}");
    }
}
