//! `jaus-ocu probe`: the network side without a GUI. Discovers components, follows every
//! manipulator and shows what the OCU knows of them (the focused one in full, every one in
//! `arms`), once (`--once`) or refreshed like `top`.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use super::identity::{self, Identity, Role};
use crate::jaus::{JausId, judp};
use crate::model::arm::{ArmSpec, JointType};
use crate::model::clearance::ArmFacts;
use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::clearance::scene::ArmInput;
use crate::model::state::ArmState;
use crate::model::update::{ControlState, LinkState, NetFact, PoseState, Signal, Update};
use crate::model::vehicle::Vehicle;
use crate::net::client::ClientConfig;
use crate::net::tap::{Epoch, Tap};
use crate::net::thread::{NetConfig, NetHandle};
use crate::record::clearance::ClearanceWatch;

/// Arguments of `jaus-ocu probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Where to look and who we are.
    #[command(flatten)]
    pub net: NetArgs,
    /// Print once when the arm is known, then exit.
    #[arg(long)]
    pub once: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for a manipulator before giving up. Exit status 0: shown; 1: nothing
    /// answered (or the arm never sent its specification and positions); 3: components
    /// answered, none is a manipulator (listed on stderr, and with --json on stdout).
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub timeout: f64,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, for each arm's clearance. Without it only
    /// the arms' own cylinders are checked.
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<std::path::PathBuf>,
}

/// The network options `probe`, `control`, `record`, `serve` and `conform` share.
#[derive(Debug, Args, Clone)]
pub struct NetArgs {
    /// Address of a JAUS component or node to query: IP, IP:PORT, HOST or HOST:PORT (port
    /// 3794 by default; repeatable). Without --no-multicast the multicast group and
    /// 127.0.0.1:3794 (a local `jaus-ocu sim`) are queried too; an arm answering here and
    /// elsewhere under one ID is followed here.
    #[arg(long, value_name = "ADDR", value_parser = super::parse_peer_addr)]
    pub connect: Vec<SocketAddr>,
    /// The manipulator to focus: where commands go, shown first (default: the first one
    /// found). Every manipulator found is followed.
    #[arg(long, value_name = "S.N.C")]
    pub component: Option<JausId>,
    /// Local UDP address to bind.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:0")]
    pub bind: SocketAddr,
    /// The OCU's own JAUS ID (default: a free one of this installation: subsystem and node
    /// from its identity file, the first component number no running jaus-ocu holds).
    #[arg(long, value_name = "S.N.C")]
    pub jaus_id: Option<JausId>,
    /// Query only the --connect addresses: no multicast group, and 127.0.0.1:3794 only when
    /// given with --connect.
    #[arg(long)]
    pub no_multicast: bool,
}

/// The local address of a `jaus-ocu sim` (127.0.0.1:3794).
pub fn local_sim_address() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], judp::PORT))
}

/// The unicast addresses discovery queries besides the `--connect` ones: the local
/// 127.0.0.1:3794 (a `--connect` must not make a local `jaus-ocu sim` invisible), unless
/// `--no-multicast` (then only the addresses asked) or it is among them already.
pub fn implicit_addresses(connect: &[SocketAddr], no_multicast: bool) -> Vec<SocketAddr> {
    let local = local_sim_address();
    if no_multicast || connect.contains(&local) {
        Vec::new()
    } else {
        vec![local]
    }
}

/// Every unicast address discovery queries, in order: the `--connect` addresses first (a
/// component named before it is found is tried at the first), then the implicit ones
/// ([`implicit_addresses`]).
pub fn connect_list(connect: &[SocketAddr], no_multicast: bool) -> Vec<SocketAddr> {
    let mut all = connect.to_vec();
    all.extend(implicit_addresses(connect, no_multicast));
    all
}

/// Refuses `--no-multicast` without a `--connect` address: nothing would be asked.
pub fn check_something_asked(connect: &[SocketAddr], no_multicast: bool) -> Result<()> {
    if no_multicast && connect.is_empty() {
        anyhow::bail!(
            "--no-multicast without --connect asks nobody: give the component's address with \
             --connect ADDR (127.0.0.1:3794 for a local `jaus-ocu sim`), or leave out \
             --no-multicast"
        );
    }
    Ok(())
}

impl NetArgs {
    /// The network side's configuration, with this process's JAUS ID (keep the
    /// [`Identity`] while the network side runs: it holds the ID's lock).
    pub fn net_config(&self) -> Result<(NetConfig, Identity)> {
        check_something_asked(&self.connect, self.no_multicast)?;
        let identity = identity::choose(self.jaus_id, Role::Tool)?;
        tracing::info!("{}", identity.describe());
        let cfg = NetConfig {
            bind: self.bind,
            client: ClientConfig {
                id: identity.id,
                connect: self.connect.clone(),
                implicit: implicit_addresses(&self.connect, self.no_multicast),
                multicast: (!self.no_multicast)
                    .then(|| SocketAddr::from((judp::MULTICAST_GROUP, judp::PORT))),
                component: self.component,
                ..ClientConfig::default()
            },
            ..NetConfig::default()
        };
        Ok((cfg, identity))
    }

    /// Where `cfg` looks, for error messages.
    pub fn looked_at(&self, cfg: &NetConfig) -> String {
        let mut places: Vec<String> = cfg
            .client
            .connect
            .iter()
            .chain(&cfg.client.implicit)
            .map(std::string::ToString::to_string)
            .collect();
        if let Some(m) = cfg.client.multicast {
            places.push(format!("multicast group {m}"));
        }
        places.join(", ")
    }

    /// [`NetArgs::net_config`] with the surroundings of the `--vehicle` file at `vehicle`
    /// (read first: a bad file is said before an ID is taken), and those surroundings as read
    /// (`None` without the option) for a recorder, a live view or a clearance watch.
    pub fn net_config_with_vehicle(
        &self,
        vehicle: Option<&std::path::Path>,
    ) -> Result<(NetConfig, Identity, Option<Arc<VehicleGeometry>>)> {
        let geometry = super::read_vehicle_file(vehicle)?;
        let (mut cfg, identity) = self.net_config()?;
        if let Some(g) = &geometry {
            cfg.client.vehicle = g.clone();
        }
        Ok((cfg, identity, geometry))
    }

    /// Starts the network side on `cfg` with its datagrams offered to `tap` on `epoch`'s clock
    /// (a recorder's or a live view's); returns it and the places it looks at.
    pub fn spawn_tapped(
        &self,
        mut cfg: NetConfig,
        tap: &Tap,
        epoch: Epoch,
    ) -> Result<(NetHandle, String)> {
        cfg.tap = tap.clone();
        cfg.epoch = Some(epoch);
        let looked = self.looked_at(&cfg);
        let net = NetHandle::spawn(cfg).context("starting the network side")?;
        Ok((net, looked))
    }
}

fn kind_name(k: JointType) -> &'static str {
    match k {
        JointType::Revolute => "revolute",
        JointType::Prismatic => "prismatic",
    }
}

fn control_name(c: ControlState) -> String {
    match c {
        ControlState::Held { authority } => format!("held (authority {authority})"),
        ControlState::Released | ControlState::Requested => c.name().into(),
    }
}

fn pose_json(p: PoseState) -> Value {
    match p {
        PoseState::Unknown => Value::Null,
        PoseState::At(id) => json!({ "at": id }),
        PoseState::Moving { from, to } => json!({ "from": from, "to": to }),
    }
}

/// Who holds control as the arm last reported it (`ReportControl`, this process included):
/// `{"id": "200.7.3", "authority": 200}`, or `null` while nobody does or the arm has not
/// said. One shape for `probe` and `control`.
pub fn controller_json(s: &ArmState) -> Value {
    s.controller
        .and_then(|c| {
            c.id.map(|id| json!({ "id": id.to_string(), "authority": c.authority }))
        })
        .unwrap_or(Value::Null)
}

/// Where the arm is followed: as the network side said it, else where its component
/// answered (a replay).
pub fn followed_at(s: &ArmState) -> Option<SocketAddr> {
    s.address.or_else(|| {
        s.selected
            .and_then(|id| s.components.get(&id))
            .map(|c| c.0.address)
    })
}

/// " at ADDR" for the text screens (nothing while unknown), with the other address of a
/// conflict.
fn at_words(s: &ArmState) -> String {
    let mut o = followed_at(s).map_or_else(String::new, |a| format!(" at {a}"));
    if let Some(other) = s.address_other {
        let _ = write!(o, " (its ID also answers at {other}: not followed)");
    }
    o
}

/// One arm's JSON object: what `probe --json` writes at the top level for the focused arm
/// and in `arms` for every arm.
pub fn arm_json(s: &ArmState) -> serde_json::Map<String, Value> {
    let component = s.selected.and_then(|id| s.components.get(&id));
    let joints: Vec<Value> = s
        .spec
        .as_ref()
        .map(|spec| {
            spec.joints
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    let at = |x: &Option<crate::model::state::Stamped<Vec<f64>>>| {
                        x.as_ref().and_then(|v| v.value.get(i).copied())
                    };
                    json!({
                        "name": j.name,
                        "type": kind_name(j.kind),
                        "position": at(&s.positions),
                        "velocity": at(&s.velocities),
                        "effort_percent": at(&s.efforts),
                        "force_torque": at(&s.joint_force_torques),
                        "min": j.min,
                        "max": j.max,
                        "max_speed": j.max_speed,
                        "max_effort": j.max_effort,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let frames = s.tool_point_frames();
    let object = json!({
        "component": s.selected.map(|id| id.to_string()),
        "address": followed_at(s).map(|a| a.to_string()),
        "address_conflict": s.address_other.map(|a| a.to_string()),
        "identification": component.and_then(|c| c.0.identification.clone()),
        "services": component.map(|c| c.0.services.iter().map(|(u, a, b)| format!("{u} {a}.{b}")).collect::<Vec<_>>()),
        "link": LinkState::name(s.link),
        "status": s.status.name(),
        "control": control_name(s.control),
        "controller": controller_json(s),
        "control_text": s.control_words(),
        "joints": joints,
        "mount": s.spec.as_ref().and_then(|sp| sp.mount).map(|m| json!({"position": m.position, "orientation": m.orientation})),
        "tool_offset": s.tool_point,
        "tool_point_manipulator": frames.map(|f| f.0),
        "tool_point_vehicle": frames.map(|f| f.1),
        "force_torque": s.force_torque.as_ref().map(|ft| json!({"force": ft.value.0, "torque": ft.value.1})),
        "presets": s.presets.iter().map(|p| json!({"id": p.id, "name": p.name, "positions": p.positions})).collect::<Vec<_>>(),
        "current_pose": pose_json(s.pose),
        "stale": s.stale.iter().filter(|(_, v)| **v).map(|(k, _)| k.name()).collect::<Vec<_>>(),
    });
    match object {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// Measures every arm's clearance at its newest positions (the watch keeps what it saw
/// first, as the window's tracker does).
pub fn measure_clearance(v: &Vehicle<ArmState>, watch: &mut ClearanceWatch) {
    let facts: Vec<ArmFacts<'_>> = v
        .arms()
        .filter_map(|(id, s)| {
            Some(ArmFacts {
                input: ArmInput {
                    id,
                    spec: s.spec.as_ref()?,
                    positions: &s.positions.as_ref()?.value,
                },
                presets: &s.presets,
            })
        })
        .collect();
    // Events are the recording's; a probe shows the state.
    watch.update(&facts, 0, &mut Vec::new());
}

/// One arm's `clearance` object (as `/jaus/arm_state` has it), `null` while not measured.
fn clearance_json(s: &ArmState, clearance: &ClearanceWatch) -> Value {
    s.selected
        .and_then(|id| clearance.summary(id, s.spec.as_ref()))
        .unwrap_or(Value::Null)
}

/// The probe's JSON object: the focused arm's fields at the top level (as before several
/// arms were followed), the network's (our ID, components, counters), and `arms`, one object
/// per manipulator followed with the same per-arm fields; each arm's `clearance` as
/// `clearance` measured it.
pub fn to_json(v: &Vehicle<ArmState>, clearance: &ClearanceWatch) -> Value {
    let s = v.focused();
    let mut object = arm_json(s);
    object.insert("clearance".into(), clearance_json(s, clearance));
    let arm_with_clearance = |a: &ArmState| {
        let mut o = arm_json(a);
        o.insert("clearance".into(), clearance_json(a, clearance));
        Value::Object(o)
    };
    let network = json!({
        "ocu_id": s.ocu_id.map(|id| id.to_string()),
        "id_conflict": s.id_conflict.as_ref().map(|c| json!({
            "address": c.address.map(|a| a.to_string()), "evidence": c.evidence,
        })),
        // Our ID seen from a stranger's address: shown, nothing refused (issue 29).
        "id_suspect": s.id_suspect.as_ref().map(|c| json!({
            "address": c.address.map(|a| a.to_string()), "evidence": c.evidence,
        })),
        "arms": v.arms().map(|(_, a)| arm_with_clearance(a)).collect::<Vec<_>>(),
        "components": s.components.values().map(|(c, lost)| json!({
            "id": c.id.to_string(), "address": c.address.to_string(), "manipulator": c.manipulator, "lost": lost,
        })).collect::<Vec<_>>(),
        "stats": {
            "datagrams": s.stats.datagrams, "malformed": s.stats.malformed, "foreign_version": s.stats.foreign_version,
            "not_for_us": s.stats.not_for_us, "duplicates": s.stats.duplicates, "foreign_reports": s.stats.foreign_reports,
            "unexpected": s.stats.unexpected, "sent": s.stats.sent, "id_conflicts": s.stats.id_conflicts,
            "queue_dropped": s.stats.queue_dropped, "kernel_dropped": s.stats.kernel_dropped,
            "arms_not_followed": s.stats.arms_not_followed,
            "spoofed": s.stats.spoofed, "address_conflict": s.stats.address_conflict, "unsolicited": s.stats.unsolicited,
            "same_id_strangers": s.stats.same_id_strangers, "peers_evicted": s.stats.peers_evicted,
            "scheduling": s.stats.scheduling.label(),
        },
    });
    if let Value::Object(n) = network {
        object.extend(n);
    }
    Value::Object(object)
}

/// The probe's text screen: the focused arm in full, then one line per other arm, each with
/// its line of clearance.
pub fn vehicle_text(
    v: &Vehicle<ArmState>,
    rates: Option<&dyn Fn(Signal) -> f64>,
    clearance: &ClearanceWatch,
) -> String {
    let mut o = to_text(v.focused(), rates);
    let clearance_line = |o: &mut String, s: &ArmState, indent: &str| {
        if let Some(words) = s
            .selected
            .and_then(|id| clearance.nearest_words(id, s.spec.as_ref()))
        {
            let _ = writeln!(o, "{indent}clearance: {words}");
        }
    };
    clearance_line(&mut o, v.focused(), "  ");
    let others: Vec<_> = v
        .arms()
        .filter(|(id, _)| Some(*id) != v.focused_id())
        .collect();
    if !others.is_empty() {
        let _ = writeln!(o, "\nother arms:");
    }
    for (id, s) in others {
        let tool = s
            .tool_point_frames()
            .map(|(_, [x, y, z])| format!(", tool point (vehicle) ({x:.4}, {y:.4}, {z:.4}) m"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  {id}{}: link {}, status {:?}, {}{tool}",
            at_words(s),
            LinkState::name(s.link),
            s.status,
            s.control_words()
        );
        clearance_line(&mut o, s, "    ");
    }
    o
}

fn fmt_opt(v: Option<f64>, unit: &str) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}{unit}"))
}

/// The probe's text screen for the selected arm.
pub fn to_text(s: &ArmState, rates: Option<&dyn Fn(Signal) -> f64>) -> String {
    let mut o = String::new();
    write_components(&mut o, s);
    let Some(id) = s.selected else {
        let _ = writeln!(o, "no manipulator selected yet");
        return o;
    };
    let _ = writeln!(
        o,
        "\nmanipulator {id}{}: link {}, status {:?}, control {}",
        at_words(s),
        LinkState::name(s.link),
        s.status,
        control_name(s.control)
    );
    if let Some(spec) = &s.spec {
        write_joints(&mut o, s, spec);
    } else {
        let _ = writeln!(o, "  waiting for the specification");
    }
    if let Some(([mx, my, mz], [vx, vy, vz])) = s.tool_point_frames() {
        let _ = writeln!(
            o,
            "  tool point: manipulator frame ({mx:.4}, {my:.4}, {mz:.4}) m, vehicle frame ({vx:.4}, {vy:.4}, {vz:.4}) m"
        );
    }
    if let Some(ft) = &s.force_torque {
        let f = |x: [Option<f64>; 3]| {
            x.map(|v| v.map_or("-".into(), |v| format!("{v:.2}")))
                .join(", ")
        };
        let _ = writeln!(
            o,
            "  F = ({}) N, T = ({}) N·m",
            f(ft.value.0),
            f(ft.value.1)
        );
    }
    if !s.presets.is_empty() {
        let names: Vec<String> = s
            .presets
            .iter()
            .map(|p| {
                let here = s.pose == PoseState::At(p.id);
                format!("{}{} {}", if here { "*" } else { "" }, p.id, p.name)
            })
            .collect();
        let _ = writeln!(o, "  presets: {} (pose: {:?})", names.join(", "), s.pose);
    }
    // Rates and counters only mean something on a refreshing screen.
    if let Some(rates) = rates {
        write_rates(&mut o, s, rates);
    }
    if let Some((t, e)) = s.errors.last() {
        let _ = writeln!(o, "  last error at {t:.1} s: {e}");
    }
    o
}

/// The components section of the text screen: every component heard, lost ones marked.
fn write_components(o: &mut String, s: &ArmState) {
    let _ = writeln!(o, "components:");
    for (c, lost) in s.components.values() {
        let _ = writeln!(
            o,
            "  {} at {}{}{} ({} services){}",
            c.id,
            c.address,
            if c.manipulator { " manipulator" } else { "" },
            c.identification
                .as_ref()
                .map(|i| format!(" \"{i}\""))
                .unwrap_or_default(),
            c.services.len(),
            if *lost { " LOST" } else { "" }
        );
    }
}

/// The joint table of the text screen: one row per joint of the specification, with the
/// latest position, velocity and effort.
fn write_joints(o: &mut String, s: &ArmState, spec: &ArmSpec) {
    let _ = writeln!(
        o,
        "  {:<3} {:<14} {:<9} {:>10} {:>10} {:>9} {:>21}",
        "#", "name", "type", "position", "velocity", "effort%", "limits"
    );
    for (i, j) in spec.joints.iter().enumerate() {
        let at = |x: &Option<crate::model::state::Stamped<Vec<f64>>>| {
            x.as_ref().and_then(|v| v.value.get(i).copied())
        };
        let unit = if j.kind == JointType::Revolute {
            ""
        } else {
            "m"
        };
        let limits = match (j.min, j.max) {
            (Some(a), Some(b)) => format!("{a:.3}..{b:.3}{unit}"),
            _ => "continuous".into(),
        };
        let _ = writeln!(
            o,
            "  {:<3} {:<14} {:<9} {:>10} {:>10} {:>9} {:>21}",
            i + 1,
            j.name.as_deref().unwrap_or("-"),
            kind_name(j.kind),
            fmt_opt(at(&s.positions), unit),
            fmt_opt(at(&s.velocities), ""),
            fmt_opt(at(&s.efforts), ""),
            limits
        );
    }
}

/// The rates and counters of the text screen.
fn write_rates(o: &mut String, s: &ArmState, rates: &dyn Fn(Signal) -> f64) {
    let rate_line: Vec<String> = Signal::ALL
        .iter()
        .filter(|sig| s.counts.contains_key(sig))
        .map(|sig| {
            let stale = if s.stale.get(sig).copied().unwrap_or(false) {
                " STALE"
            } else {
                ""
            };
            format!("{} {:.0} Hz{stale}", sig.name(), rates(*sig))
        })
        .collect();
    let _ = writeln!(o, "  rates: {}", rate_line.join(", "));
    let st = &s.stats;
    let _ = writeln!(
        o,
        "  datagrams {} (malformed {}, foreign version {}, not for us {}, duplicates {}, foreign reports {})",
        st.datagrams,
        st.malformed,
        st.foreign_version,
        st.not_for_us,
        st.duplicates,
        st.foreign_reports
    );
}

/// Exit status: a manipulator was found and shown.
pub const EXIT_OK: i32 = 0;
/// Exit status: no JAUS component answered, or the manipulator never sent what is shown.
pub const EXIT_NOTHING: i32 = 1;
/// Exit status: components answered, none is a manipulator (they are listed).
pub const EXIT_NOT_A_MANIPULATOR: i32 = 3;
/// Exit status (`--once`): the arm was shown, and its own words show another client using
/// this process's JAUS ID (`id_conflict` in the JSON).
pub const EXIT_ID_CONFLICT: i32 = 5;

/// How long after the first component answered `probe` gives up when none is a manipulator.
const NOT_AN_ARM_AFTER: Duration = Duration::from_secs(5);

/// The components that answered, as JSON: ID, address, identification, services, whether it
/// is a manipulator, and a note when it listed no services.
pub fn components_json(s: &ArmState) -> Value {
    Value::Array(
        s.components
            .values()
            .map(|(c, lost)| {
                json!({
                    "id": c.id.to_string(),
                    "address": c.address.to_string(),
                    "identification": c.identification,
                    "services": c.services.iter().map(|(uri, major, minor)| json!({
                        "uri": uri, "version": format!("{major}.{minor}")
                    })).collect::<Vec<_>>(),
                    "manipulator": c.manipulator,
                    "lost": lost,
                    "note": c.services.is_empty().then_some(crate::model::state::NO_SERVICES_NOTE),
                })
            })
            .collect(),
    )
}

/// The components that answered, one paragraph each, for the terminal.
pub fn components_text(s: &ArmState) -> String {
    let mut o = String::new();
    for (c, lost) in s.components.values() {
        let _ = writeln!(
            o,
            "  {} at {}{}: {}",
            c.id,
            c.address,
            if *lost { " (silent now)" } else { "" },
            c.identification.as_deref().unwrap_or("no identification")
        );
        if c.services.is_empty() {
            let _ = writeln!(o, "    {}", crate::model::state::NO_SERVICES_NOTE);
        } else {
            for (uri, major, minor) in &c.services {
                let _ = writeln!(o, "    {uri} {major}.{minor}");
            }
        }
    }
    o
}

/// Says why no manipulator is shown (stderr; with `--json` also the object on stdout) and
/// returns the exit status.
fn give_up(args: &ProbeArgs, state: &ArmState, looked: &str, handle: NetHandle) -> i32 {
    let (detail, code) = match (state.selected, &state.spec) {
        (None, _) if state.components.is_empty() => {
            ("no JAUS component answered".to_string(), EXIT_NOTHING)
        }
        (None, _) => (
            format!(
                "{} component(s) answered but none offers manipulator services{}",
                state.components.len(),
                args.net
                    .component
                    .map(|c| format!(" as {c}"))
                    .unwrap_or_default()
            ),
            EXIT_NOT_A_MANIPULATOR,
        ),
        (Some(id), None) => (
            format!("manipulator {id} answered but never sent its specification"),
            EXIT_NOTHING,
        ),
        (Some(id), Some(_)) => (
            format!(
                "manipulator {id} sent its specification but no joint positions or tool offset"
            ),
            EXIT_NOTHING,
        ),
    };
    if args.json {
        println!(
            "{}",
            json!({
                "error": detail, "looked_at": looked, "components": components_json(state),
                "ocu_id": state.ocu_id.map(|id| id.to_string()),
            })
        );
    }
    if code == EXIT_NOT_A_MANIPULATOR {
        eprintln!(
            "error: no manipulator: {detail}. Looked at {looked}. These answered:\n{}",
            components_text(state)
        );
    } else {
        eprintln!(
            "error: no manipulator within {} s: {detail}. Looked at {looked}. Is `jaus-ocu sim` (or the robot) running? Use --connect ADDR for unicast-only networks.{}",
            args.timeout,
            if state.components.is_empty() {
                String::new()
            } else {
                format!(" These answered:\n{}", components_text(state))
            }
        );
    }
    handle.shutdown(Duration::from_millis(200));
    code
}

/// Longest the probe applies updates before it looks at the time again (to draw).
const DRAIN_BUDGET: Duration = Duration::from_millis(50);
/// `--once`: how long presets and the first F/T sample get to follow the positions.
const STATS_SETTLE: Duration = Duration::from_millis(300);
/// `--once`: the longest wait for the other arms to be complete once the focused one is.
const ARMS_WAIT: Duration = Duration::from_secs(2);
/// `--once`: the longest wait after that for fresh counters (they come once a second).
const STATS_WAIT: Duration = Duration::from_millis(1500);

/// Runs the subcommand.
pub fn run(args: &ProbeArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        anyhow::bail!(
            "--timeout {}: give a positive number of seconds",
            args.timeout
        );
    }
    let (cfg, _identity, geometry) = args.net.net_config_with_vehicle(args.vehicle.as_deref())?;
    let mut clearance = ClearanceWatch::new(geometry);
    let looked = args.net.looked_at(&cfg);
    let handle = NetHandle::spawn(cfg)?;
    let mut vehicle: Vehicle<ArmState> = Vehicle::new();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(args.timeout);
    // None until the first screen: the first refresh draws at once.
    let mut last_draw: Option<Instant> = None;
    let mut window: Vec<(Instant, std::collections::BTreeMap<Signal, u64>)> = Vec::new();
    let mut complete_at: Option<Instant> = None;
    let mut first_component: Option<Instant> = None;
    // `--once`: when the arm had a moment to settle, and whether the network side's counters
    // (published once a second) have been refreshed since: the first are all zeros.
    let mut settled_at: Option<Instant> = None;
    let mut fresh_stats = false;
    loop {
        match handle.updates().recv_timeout(Duration::from_millis(50)) {
            Ok(u) => {
                // Drained with a time budget: under a flood the channel is never empty, and
                // the screen must still be drawn (what is left waits in the channel, whose
                // producer coalesces and counts when it is full).
                let budget = Instant::now() + DRAIN_BUDGET;
                for u in std::iter::once(u).chain(handle.updates().try_iter()) {
                    fresh_stats |=
                        settled_at.is_some() && matches!(u, Update::Net(NetFact::Stats { .. }));
                    vehicle.apply(&u);
                    if Instant::now() >= budget {
                        break;
                    }
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the network thread stopped")
            }
        }
        let now = Instant::now();
        let state = vehicle.focused();
        if state.is_complete() && complete_at.is_none() {
            complete_at = Some(now);
        }
        if args.once {
            // Give presets and the first F/T sample a moment to follow the positions, and
            // the other arms (found in the same discovery rounds) a moment to be complete too.
            let others_complete = vehicle.arms().all(|(_, a)| a.is_complete());
            if settled_at.is_none()
                && complete_at.is_some_and(|t| {
                    now - t > STATS_SETTLE && (others_complete || now - t > ARMS_WAIT)
                })
            {
                settled_at = Some(now);
            }
            // Then the next counters (at most a second away), so that `stats` says what
            // happened, kernel drops and scheduling included.
            if settled_at.is_some_and(|t| fresh_stats || now - t > STATS_WAIT) {
                measure_clearance(&vehicle, &mut clearance);
                if args.json {
                    println!("{}", to_json(&vehicle, &clearance));
                } else {
                    print!("{}", vehicle_text(&vehicle, None, &clearance));
                }
                let conflict = vehicle.focused().id_conflict.is_some();
                handle.shutdown(Duration::from_millis(300));
                return Ok(if conflict { EXIT_ID_CONFLICT } else { EXIT_OK });
            }
        }
        if !state.components.is_empty() && first_component.is_none() {
            first_component = Some(now);
        }
        // Components answered, none is a manipulator: no need to wait the whole timeout once
        // a few discovery rounds (and the specific services queries) had their chance.
        let none_is_an_arm =
            state.selected.is_none() && first_component.is_some_and(|t| now - t > NOT_AN_ARM_AFTER);
        if (now >= deadline || none_is_an_arm) && complete_at.is_none() {
            return Ok(give_up(args, state, &looked, handle));
        }
        if !args.once && last_draw.is_none_or(|t| now - t >= Duration::from_millis(500)) {
            last_draw = Some(now);
            window.push((now, state.counts.clone()));
            window.retain(|(t, _)| now - *t <= Duration::from_secs(2));
            let (t0, c0) = window
                .first()
                .cloned()
                .unwrap_or((now, std::collections::BTreeMap::default()));
            let dt = (now - t0).as_secs_f64().max(1e-3);
            let rates = |sig: Signal| {
                (state.counts.get(&sig).copied().unwrap_or(0) - c0.get(&sig).copied().unwrap_or(0))
                    as f64
                    / dt
            };
            measure_clearance(&vehicle, &mut clearance);
            if args.json {
                println!("{}", to_json(&vehicle, &clearance));
            } else {
                print!(
                    "\x1b[2J\x1b[H{}",
                    vehicle_text(&vehicle, Some(&rates), &clearance)
                );
            }
        }
    }
}
