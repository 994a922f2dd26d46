//! The memory budget over a 12-hour shift (issue 21). Run: `cargo bench --bench memory`
//! (about two minutes; `MEMORY_BENCH_HOURS` shortens the shift, default 12;
//! `MEMORY_BENCH_MIB` sets the budget, default 512).
//!
//! The demo arm (7 joints) reports joint positions and end-effector force/torque at 1 kHz
//! each, as `Update`s through `Vehicle::apply` (the path live mode and the replay loader
//! take), synthetic smooth motion plus noise, made on the fly. The same shift is fed twice,
//! each in a child process of this binary (so each has its own peak RSS, `VmHWM`): once into a
//! vehicle with the budget, once without one. Each child checks `memory_bytes()` after every
//! simulated second and writes out the whole-shift envelope of every channel at 1920 columns
//! and `state_at` at 300 times in the bounded run's exact window. The parent prints both runs
//! side by side and asserts: peak `memory_bytes()` <= budget; the envelopes equal bit for bit;
//! every `state_at` equal.
//!
//! Then (criterion) the cost of one push through `Session::apply`, with and without a budget
//! (8 MiB: the exact tier compacts every few seconds of data, so compaction is in the figure).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jaus_ocu::model::session::Session;
use jaus_ocu::model::update::{ArmFact, ComponentId, Update};
use jaus_ocu::model::vehicle::Vehicle;

const ARM: ComponentId = ComponentId::new(126, 1, 10);
const JOINTS: usize = 7;
const ROLE: &str = "MEMORY_BENCH_ROLE";
const OUT: &str = "MEMORY_BENCH_OUT";
const STATE_FROM: &str = "MEMORY_BENCH_STATE_FROM";
const COLUMNS: usize = 1920;
const STATES: usize = 300;

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Noise in [-1, 1) from a 64-bit xorshift: cheap enough for 86 million updates.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The updates of millisecond `i`: joint positions (slow sines per joint, a few mrad of
/// noise) and the wrench (a slow push and twist, 0.2 N of noise).
fn updates(i: u64, noise: &mut Noise) -> [Update; 2] {
    let t = i as f64 * 0.001;
    let values: Vec<f64> = (0..JOINTS)
        .map(|j| {
            let j = j as f64;
            (t * (0.05 + 0.01 * j) + j).sin() * (1.0 + 0.2 * j) + noise.next() * 0.003
        })
        .collect();
    let push = (t * 0.02).sin() * 30.0;
    let f = |k: f64, n: &mut Noise| Some(push * k + n.next() * 0.2);
    let force = [f(1.0, noise), f(-0.5, noise), f(0.25, noise)];
    let torque = [f(0.01, noise), f(0.02, noise), f(-0.01, noise)];
    [
        Update::arm(ARM, ArmFact::JointPositions { t, values }),
        Update::arm(ARM, ArmFact::ForceTorque { t, force, torque }),
    ]
}

/// Peak resident set of this process, kB (`VmHWM`).
fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One run (a child): feeds the shift, writes the envelopes and states to `out`, prints one
/// `key=value` line of figures.
fn child(bounded: bool, out: &Path) {
    let hours = env_f64("MEMORY_BENCH_HOURS", 12.0);
    let budget = (env_f64("MEMORY_BENCH_MIB", 512.0) * 1024.0 * 1024.0) as usize;
    let mut v: Vehicle = Vehicle::new();
    if bounded {
        v.set_memory_budget(Some(budget));
    }
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let ms = (hours * 3_600_000.0) as u64;
    let mut peak = 0;
    let start = Instant::now();
    for second in 0..ms.div_ceil(1000) {
        for i in second * 1000..((second + 1) * 1000).min(ms) {
            for u in updates(i, &mut noise) {
                v.apply(&u);
            }
        }
        peak = peak.max(v.memory_bytes());
    }
    let feed = start.elapsed().as_secs_f64();
    let s = v.arm(ARM).expect("the arm");
    let (t0, t1) = s.span().expect("samples");
    let mut text = String::new();
    let mut env = Vec::new();
    for (name, h) in [("positions", &s.positions), ("ft", &s.ft)] {
        for c in 0..h.channels() {
            h.envelope(c, t0, t1, COLUMNS, &mut env);
            for e in &env {
                let _ = writeln!(
                    text,
                    "E {name} {c} {} {} {} {}",
                    e.t0.to_bits(),
                    e.t1.to_bits(),
                    e.min.to_bits(),
                    e.max.to_bits()
                );
            }
        }
    }
    let exact_from = s.envelope_before();
    let from = std::env::var(STATE_FROM)
        .ok()
        .and_then(|v| v.parse().ok())
        .or(exact_from)
        .unwrap_or(t0);
    for k in 0..STATES {
        let t = from + (t1 - from) * k as f64 / STATES as f64;
        let _ = writeln!(text, "S {k} {:?}", s.state_at(t));
    }
    std::fs::write(out, text).expect("write the child's results");
    println!(
        "RESULT peak_bytes={peak} final_bytes={} hwm_kb={} feed_s={feed:.2} updates={} exact_from={} span_end={t1} floor={}",
        v.memory_bytes(),
        vm_hwm_kb(),
        2 * ms,
        exact_from.map_or("none".to_string(), |f| f.to_string()),
        s.positions.floor_block(),
    );
}

/// Runs this binary as a child in `role`, returning its figures and its results file.
fn run_child(role: &str, state_from: Option<f64>) -> (Vec<(String, String)>, String) {
    let exe = std::env::current_exe().expect("this bench's binary");
    let out = std::env::temp_dir().join(format!(
        "jaus-ocu-bench-memory-{}-{role}.txt",
        std::process::id()
    ));
    let mut cmd = Command::new(exe);
    cmd.env(ROLE, role).env(OUT, &out);
    if let Some(f) = state_from {
        cmd.env(STATE_FROM, f.to_string());
    }
    let output = cmd.output().expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{role} run failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .expect("the child's figures");
    let figures = line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let text = std::fs::read_to_string(&out).expect("the child's results");
    let _ = std::fs::remove_file(&out);
    (figures, text)
}

fn get<'a>(figures: &'a [(String, String)], key: &str) -> &'a str {
    figures
        .iter()
        .find(|(k, _)| k == key)
        .map_or("?", |(_, v)| v.as_str())
}

fn num(figures: &[(String, String)], key: &str) -> f64 {
    get(figures, key).parse().unwrap_or(f64::NAN)
}

/// Pushes `iters` wrench updates through `Session::apply`, timed, after ten minutes' worth.
fn push_cost(iters: u64, budget: Option<usize>) -> Duration {
    let mut s = Session::new();
    s.set_memory_budget(budget);
    let mut noise = Noise(7);
    // Ten minutes held first (the 8 MiB budget holds about three exact), so the figure is
    // the steady state, not an empty session's.
    let warm = 600_000;
    let wrench = |i: u64, n: &mut Noise| ArmFact::ForceTorque {
        t: i as f64 * 0.001,
        force: [Some(n.next()), Some(1.0), Some(2.0)],
        torque: [Some(0.1), Some(0.2), Some(n.next())],
    };
    for i in 0..warm {
        s.apply_arm(&wrench(i, &mut noise));
    }
    // Made in the loop (no heap: the wrench is inline), a few ns of the figure.
    let start = Instant::now();
    for i in warm..warm + iters {
        s.apply_arm(black_box(&wrench(i, &mut noise)));
    }
    let took = start.elapsed();
    black_box(s.memory_bytes());
    took
}

fn main() {
    if let (Ok(role), Ok(out)) = (std::env::var(ROLE), std::env::var(OUT)) {
        child(role == "bounded", Path::new(&out));
        return;
    }
    let hours = env_f64("MEMORY_BENCH_HOURS", 12.0);
    let mib = env_f64("MEMORY_BENCH_MIB", 512.0);
    let budget = mib * 1024.0 * 1024.0;
    println!(
        "shift: {hours} h of the demo arm ({JOINTS} joints), positions + F/T at 1 kHz each, budget {mib} MiB"
    );
    let (bounded, bounded_text) = run_child("bounded", None);
    let from = get(&bounded, "exact_from").parse::<f64>().ok();
    let (unbounded, unbounded_text) = run_child("unbounded", from);

    let lines = |text: &str, kind: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(kind))
            .map(str::to_string)
            .collect()
    };
    let (env_a, env_b) = (lines(&bounded_text, "E "), lines(&unbounded_text, "E "));
    let (st_a, st_b) = (lines(&bounded_text, "S "), lines(&unbounded_text, "S "));
    let peak = num(&bounded, "peak_bytes");
    let mb = |f: &[(String, String)], k: &str| num(f, k) / 1e6;
    println!("                         bounded    unbounded");
    println!(
        "peak memory_bytes, MB    {:>9.1}    {:>9.1}",
        mb(&bounded, "peak_bytes"),
        mb(&unbounded, "peak_bytes")
    );
    println!(
        "final memory_bytes, MB   {:>9.1}    {:>9.1}",
        mb(&bounded, "final_bytes"),
        mb(&unbounded, "final_bytes")
    );
    println!(
        "peak RSS (VmHWM), MB     {:>9.1}    {:>9.1}",
        num(&bounded, "hwm_kb") / 1e3,
        num(&unbounded, "hwm_kb") / 1e3
    );
    println!(
        "feed time, s             {:>9.1}    {:>9.1}",
        num(&bounded, "feed_s"),
        num(&unbounded, "feed_s")
    );
    println!(
        "ns per update            {:>9.0}    {:>9.0}",
        num(&bounded, "feed_s") * 1e9 / num(&bounded, "updates"),
        num(&unbounded, "feed_s") * 1e9 / num(&unbounded, "updates")
    );
    let end = num(&bounded, "span_end");
    let exact = from.map_or(end, |f| end - f);
    println!(
        "exact window, min        {:>9.1}    {:>9.1}   (envelope floor block: {} samples)",
        exact / 60.0,
        end / 60.0,
        get(&bounded, "floor")
    );
    println!("budget, MB               {:>9.1}", budget / 1e6);
    assert!(
        peak <= budget,
        "peak memory_bytes {peak} over the budget {budget}"
    );
    let same_env = env_a.iter().zip(&env_b).filter(|(a, b)| a == b).count();
    println!(
        "whole-shift envelope at {COLUMNS} columns: {same_env} of {} columns (14 channels) equal bit for bit",
        env_b.len()
    );
    assert!(
        env_a.len() == env_b.len() && same_env == env_a.len() && !env_a.is_empty(),
        "envelopes differ"
    );
    let same_states = st_a.iter().zip(&st_b).filter(|(a, b)| a == b).count();
    println!(
        "state_at at {} times in the exact window: {same_states} equal",
        st_b.len()
    );
    assert!(
        st_a.len() == STATES && same_states == STATES,
        "states differ"
    );

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    let mut g = c.benchmark_group("push");
    g.throughput(criterion::Throughput::Elements(1));
    g.bench_function("unbounded", |b| {
        b.iter_custom(|iters| push_cost(iters, None));
    });
    g.bench_function("budget_8MiB", |b| {
        b.iter_custom(|iters| push_cost(iters, Some(8 << 20)));
    });
    g.finish();
    c.final_summary();
}
