//! The window's CPU budget (issue 21): the frames the window schedules by itself are spaced
//! so that its process stays within a share of one core, whatever a frame costs here.
//!
//! A frame of the whole window costs about 2 ms on a GPU and 35 ms of CPU under Mesa's
//! software renderer at 1280×800 (ARCHITECTURE.md, "Where a frame's time goes"): the same
//! schedule is a few per cent of a core on one laptop and half a core on another. So the pace
//! is measured, not assumed. Every [`SPAN`] the process's CPU time over wall time is compared
//! with the budget of what the window was doing, and the spacing of its own frames is
//! scaled by that ratio: `interval × share / budget`, at most halved or doubled per step,
//! between a floor (the rate each part's content asks for: [`super::app::MOTION_INTERVAL`],
//! the display's rate for the arm's motion, and [`super::app::LIVE_IDLE_INTERVAL`]) and a
//! ceiling ([`BUSY_MAX`], [`IDLE_MAX`]); busy frames start at [`BUSY_START`]. So the arm
//! moves at the display's rate where frames are cheap (a GPU: a few ms each) and as often
//! as the budget allows where they are not (a software renderer). With a
//! fixed cost `b` (the network side) and a cost `c` per frame, the share at interval `I` is
//! `b + c / I` and the step maps `I` to `(b·I + c) / budget`: it settles where the share
//! equals the budget, or at the ceiling when `b` alone exceeds it.
//!
//! What never waits for the pace: input (a click, a drag, a key draws at once), discrete
//! facts from the network side (an emergency, a lost link, a change of control: the urgent
//! waker), and a paused replay, which draws nothing at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Whether an OpenGL renderer's name (`GL_RENDERER`) is one of Mesa's software renderers
/// (llvmpipe, softpipe, the classic swrast), where every pixel egui fills costs CPU.
pub fn is_software_renderer(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["llvmpipe", "softpipe", "software rasterizer", "swrast"]
        .iter()
        .any(|s| name.contains(s))
}

/// Whether egui antialiases its shapes (feathering: a one-pixel fringe of extra triangles
/// around every filled shape and line) on this renderer. On a GPU the fringes are free; under
/// a software renderer they were about a quarter of a frame's CPU at 1280×800 (thousands of
/// one-pixel-wide triangles along the plot lines, ARCHITECTURE.md "Where a frame's time
/// goes"), so there shapes are drawn without them: lines and corners a little jagged, text
/// unchanged (it is antialiased in its glyph images). `JAUS_OCU_ANTIALIAS=on|off` (the
/// environment) overrides the choice, to compare.
pub fn antialias_shapes(renderer: &str, env: Option<&str>) -> bool {
    match env {
        Some("on") => true,
        Some("off") => false,
        _ => !is_software_renderer(renderer),
    }
}

/// The share of one core the process aims at while the window draws by itself at a
/// sub-second rate: live samples arriving, the arm moving, a replay playing.
pub const BUSY_BUDGET: f64 = 0.25;

/// The share of one core the process aims at while a live view has nothing fresh to show
/// (waiting for an arm, stale data, a lost link): its clock ticks on, and little else.
pub const IDLE_BUDGET: f64 = 0.015;

/// Where the busy spacing starts before the pace has measured what a frame costs here: 10
/// frames/s, which a software renderer affords. Cheap frames (a GPU) bring it down to its
/// floor, the display's rate ([`super::app::MOTION_INTERVAL`]), within three spans;
/// expensive ones hold it where the budget is met.
pub const BUSY_START: Duration = Duration::from_millis(100);

/// The longest spacing of busy frames: numbers still change twice a second.
pub const BUSY_MAX: Duration = Duration::from_millis(500);

/// The longest spacing of idle frames.
pub const IDLE_MAX: Duration = Duration::from_secs(5);

/// Wall time over which the process's CPU share is measured before the pace moves.
pub const SPAN: Duration = Duration::from_secs(2);

/// What the window was doing, for the budget that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Drawing by itself at a sub-second rate ([`BUSY_BUDGET`]).
    Busy,
    /// A live view with nothing fresh: its clock ticks ([`IDLE_BUDGET`]).
    Idle,
    /// Drawing only on input or events (a paused replay): nothing to pace.
    Still,
}

/// Where a measurement started.
#[derive(Debug, Clone, Copy)]
struct Span {
    mode: Mode,
    wall: Instant,
    cpu: Duration,
}

/// The spacing of the window's own frames, kept within the CPU budgets.
#[derive(Debug)]
pub struct Pace {
    /// The budgets (busy, idle); `None`: frames at their floors, unpaced.
    budgets: Option<(f64, f64)>,
    floors: (Duration, Duration),
    busy: Duration,
    idle: Duration,
    span: Option<Span>,
    /// The busy spacing in microseconds, for the network side's waker (which asks for a
    /// frame when samples arrive).
    shared: Arc<AtomicU64>,
}

impl Pace {
    /// A pace with the given budgets (shares of one core, busy and idle; `None` to draw at
    /// the floors always) and floors (busy and idle spacing). Paced, the busy spacing
    /// starts at [`BUSY_START`] (or its floor, if slower) and moves towards the faster of
    /// the floor and what the measured cost of a frame allows within the budget.
    pub fn new(budgets: Option<(f64, f64)>, busy_floor: Duration, idle_floor: Duration) -> Self {
        let budgets = budgets.filter(|(b, i)| *b > 0.0 && *i > 0.0);
        let busy = if budgets.is_some() {
            busy_floor.max(BUSY_START)
        } else {
            busy_floor
        };
        Self {
            budgets,
            floors: (busy_floor, idle_floor),
            busy,
            idle: idle_floor,
            span: None,
            shared: Arc::new(AtomicU64::new(micros(busy))),
        }
    }

    /// [`Pace::new`] with the default budgets, or what `JAUS_OCU_CPU_BUDGET` says: `off`
    /// (unpaced, for measuring what frames cost) or the busy budget in per cent of a core.
    pub fn from_env(busy_floor: Duration, idle_floor: Duration) -> Self {
        let budgets = match std::env::var("JAUS_OCU_CPU_BUDGET").as_deref() {
            Ok("off") => None,
            Ok(percent) => match percent.trim_end_matches('%').parse::<f64>() {
                Ok(p) if p > 0.0 => Some((p / 100.0, IDLE_BUDGET)),
                _ => {
                    tracing::warn!(
                        "JAUS_OCU_CPU_BUDGET={percent:?} is neither `off` nor a percentage; using {} %",
                        BUSY_BUDGET * 100.0
                    );
                    Some((BUSY_BUDGET, IDLE_BUDGET))
                }
            },
            Err(_) => Some((BUSY_BUDGET, IDLE_BUDGET)),
        };
        Self::new(budgets, busy_floor, idle_floor)
    }

    /// Takes one frame's observation: what the window is doing, and `cpu`, which reads the
    /// process's CPU time (`None` where it cannot be read: the pace stays where it is). It is
    /// called only where a measurement starts or ends, not every frame.
    pub fn observe(&mut self, mode: Mode, now: Instant, cpu: impl FnOnce() -> Option<Duration>) {
        let span = self.span.filter(|s| s.mode == mode && now >= s.wall);
        let wall = span.map(|s| now.duration_since(s.wall));
        if wall.is_some_and(|w| w < SPAN) {
            return;
        }
        let Some(cpu) = cpu() else {
            self.span = None;
            return;
        };
        self.span = Some(Span {
            mode,
            wall: now,
            cpu,
        });
        let (Some(span), Some(wall)) = (span, wall) else {
            return;
        };
        let Some((busy_budget, idle_budget)) = self.budgets else {
            return;
        };
        let share = cpu.saturating_sub(span.cpu).as_secs_f64() / wall.as_secs_f64();
        let (interval, budget, floor, ceiling) = match mode {
            Mode::Busy => (&mut self.busy, busy_budget, self.floors.0, BUSY_MAX),
            Mode::Idle => (&mut self.idle, idle_budget, self.floors.1, IDLE_MAX),
            Mode::Still => return,
        };
        let factor = (share / budget).clamp(0.5, 2.0);
        *interval = interval.mul_f64(factor).clamp(floor, ceiling.max(floor));
        self.shared.store(micros(self.busy), Ordering::Relaxed);
        tracing::debug!(
            "pace: {mode:?} at {:.1} % of a core; frames every {:?} busy, {:?} idle",
            share * 100.0,
            self.busy,
            self.idle
        );
    }

    /// The spacing of frames while busy (the arm moving, samples arriving, playing).
    pub fn busy(&self) -> Duration {
        self.busy
    }

    /// The spacing of a live view's frames while it has nothing fresh.
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// The busy spacing in microseconds, shared with the network side's waker.
    pub fn shared_busy(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared)
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Clock ticks per second of `/proc/<pid>/stat` times: `USER_HZ`, 100 on every Linux ABI.
const USER_HZ: u64 = 100;

/// The CPU time (user + system) of this process, all threads, so far; `None` where
/// `/proc/self/stat` cannot be read (not Linux).
pub fn process_cpu_time() -> Option<Duration> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// User + system time from the text of a `/proc/<pid>/stat` file.
fn parse_stat(text: &str) -> Option<Duration> {
    // The command name (field 2) is in parentheses and may hold spaces and parentheses:
    // the fields after its last `)` start at field 3; utime and stime are fields 14 and 15.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_millis(ticks.checked_mul(1000 / USER_HZ)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use super::*;

    const FLOOR: Duration = Duration::from_millis(100);
    const IDLE_FLOOR: Duration = Duration::from_secs(1);

    #[test]
    fn shapes_are_antialiased_on_a_gpu_and_not_in_software() {
        for software in [
            "llvmpipe (LLVM 19.1.7, 256 bits)",
            "softpipe",
            "Mesa DRI Software Rasterizer",
        ] {
            assert!(is_software_renderer(software), "{software}");
            assert!(!antialias_shapes(software, None), "{software}");
            assert!(antialias_shapes(software, Some("on")), "{software}");
        }
        for gpu in [
            "Mesa Intel(R) UHD Graphics 620 (KBL GT2)",
            "NVIDIA GeForce RTX 3060/PCIe/SSE2",
            "AMD Radeon Graphics (radeonsi, renoir, LLVM 15.0.6, DRM 3.49)",
        ] {
            assert!(!is_software_renderer(gpu), "{gpu}");
            assert!(antialias_shapes(gpu, None), "{gpu}");
            assert!(!antialias_shapes(gpu, Some("off")), "{gpu}");
        }
        // An unknown override leaves the choice to the renderer.
        assert_eq!(
            antialias_shapes("llvmpipe", Some("yes")),
            antialias_shapes("llvmpipe", None)
        );
    }

    /// Runs `pace` for `spans` spans of a process costing `base` (share of a core) plus
    /// `per_frame` of CPU per frame at the pace's spacing for `mode`; the spacing after.
    fn settle(pace: &mut Pace, mode: Mode, base: f64, per_frame: Duration, spans: u32) {
        let start = Instant::now();
        let mut cpu = Duration::ZERO;
        let mut now = start;
        pace.observe(mode, now, || Some(cpu));
        for _ in 0..spans {
            let interval = match mode {
                Mode::Busy => pace.busy(),
                _ => pace.idle(),
            };
            let frames = SPAN.as_secs_f64() / interval.as_secs_f64();
            cpu += SPAN.mul_f64(base) + per_frame.mul_f64(frames);
            now += SPAN;
            pace.observe(mode, now, || Some(cpu));
        }
    }

    fn share(base: f64, per_frame: Duration, interval: Duration) -> f64 {
        base + per_frame.as_secs_f64() / interval.as_secs_f64()
    }

    #[test]
    fn a_cheap_frame_keeps_the_content_rate() {
        let mut pace = Pace::new(Some((0.25, 0.015)), FLOOR, IDLE_FLOOR);
        settle(&mut pace, Mode::Busy, 0.02, Duration::from_millis(2), 10);
        assert_eq!(pace.busy(), FLOOR);
        assert_eq!(pace.shared_busy().load(Ordering::Relaxed), 100_000);
    }

    #[test]
    fn an_expensive_frame_is_spaced_to_the_budget() {
        let mut pace = Pace::new(Some((0.25, 0.015)), FLOOR, IDLE_FLOOR);
        let cost = Duration::from_millis(35);
        settle(&mut pace, Mode::Busy, 0.06, cost, 20);
        let s = share(0.06, cost, pace.busy());
        assert!((s - 0.25).abs() < 0.01, "share {s} at {:?}", pace.busy());
        assert!(pace.busy() > FLOOR && pace.busy() < BUSY_MAX);
        assert_eq!(
            pace.shared_busy().load(Ordering::Relaxed),
            micros(pace.busy())
        );
        // Cheaper frames (the window made smaller): back towards the floor.
        settle(&mut pace, Mode::Busy, 0.06, Duration::from_millis(5), 20);
        assert_eq!(pace.busy(), FLOOR);
    }

    /// A 60 Hz display's frame interval, the floor of the arm's motion.
    const DISPLAY: Duration = Duration::from_micros(16_667);

    #[test]
    fn the_motion_interval_reaches_the_display_rate_where_frames_are_cheap() {
        // A GPU: 2 ms of CPU a frame, the network side 5 % of a core.
        let mut pace = Pace::new(Some((BUSY_BUDGET, IDLE_BUDGET)), DISPLAY, IDLE_FLOOR);
        assert_eq!(
            pace.busy(),
            BUSY_START,
            "unmeasured, it starts at 10 frames/s"
        );
        settle(&mut pace, Mode::Busy, 0.05, Duration::from_millis(2), 3);
        assert_eq!(pace.busy(), DISPLAY, "three spans: at the display's rate");
        let s = share(0.05, Duration::from_millis(2), pace.busy());
        assert!(s < BUSY_BUDGET, "within the budget: {s}");
        settle(&mut pace, Mode::Busy, 0.05, Duration::from_millis(2), 20);
        assert_eq!(pace.busy(), DISPLAY, "and it stays there");
    }

    #[test]
    fn the_motion_interval_is_held_to_the_budget_where_frames_are_expensive() {
        // Mesa's llvmpipe at 1280×800: 41 ms, then 30 ms of CPU a frame.
        for (cost, fps_at_least) in [(41, 4.5), (30, 6.0)] {
            let cost = Duration::from_millis(cost);
            let mut pace = Pace::new(Some((BUSY_BUDGET, IDLE_BUDGET)), DISPLAY, IDLE_FLOOR);
            settle(&mut pace, Mode::Busy, 0.055, cost, 20);
            let s = share(0.055, cost, pace.busy());
            assert!(
                (s - BUSY_BUDGET).abs() < 0.01,
                "share {s} at {:?}",
                pace.busy()
            );
            let fps = 1.0 / pace.busy().as_secs_f64();
            assert!(fps > fps_at_least && fps < 10.0, "{cost:?}: {fps} frames/s");
            // The window made small: frames cheap enough for the display's rate.
            settle(&mut pace, Mode::Busy, 0.055, Duration::from_millis(3), 20);
            assert_eq!(pace.busy(), DISPLAY);
        }
    }

    #[test]
    fn a_fixed_cost_above_the_budget_stops_at_the_ceiling() {
        let mut pace = Pace::new(Some((0.25, 0.015)), FLOOR, IDLE_FLOOR);
        settle(&mut pace, Mode::Busy, 0.4, Duration::from_millis(35), 20);
        assert_eq!(pace.busy(), BUSY_MAX);
    }

    #[test]
    fn idle_frames_have_their_own_budget_and_busy_keeps_its_pace() {
        let mut pace = Pace::new(Some((0.25, 0.015)), FLOOR, IDLE_FLOOR);
        settle(&mut pace, Mode::Idle, 0.002, Duration::from_millis(35), 20);
        let s = share(0.002, Duration::from_millis(35), pace.idle());
        assert!((s - 0.015).abs() < 0.001, "idle share {s}");
        assert_eq!(pace.busy(), FLOOR);
    }

    #[test]
    fn unpaced_or_unmeasured_stays_at_the_floors() {
        let mut off = Pace::new(None, FLOOR, IDLE_FLOOR);
        settle(&mut off, Mode::Busy, 0.5, Duration::from_millis(50), 10);
        assert_eq!(off.busy(), FLOOR);
        let mut blind = Pace::new(Some((0.25, 0.015)), FLOOR, IDLE_FLOOR);
        let t = Instant::now();
        for k in 0..10 {
            blind.observe(Mode::Busy, t + SPAN * k, || None);
        }
        assert_eq!(blind.busy(), FLOOR);
        // A still window (a paused replay) is not paced either.
        settle(&mut blind, Mode::Still, 0.5, Duration::from_millis(50), 10);
        assert_eq!((blind.busy(), blind.idle()), (FLOOR, IDLE_FLOOR));
    }

    #[test]
    fn stat_lines_parse_with_odd_command_names() {
        let line = "4242 (jaus (ocu) x) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 31 0 0 20 0 9 0";
        assert_eq!(parse_stat(line), Some(Duration::from_millis(2810)));
        assert_eq!(parse_stat("4242 (x) S 1 2"), None);
        assert_eq!(parse_stat("garbage"), None);
        assert!(process_cpu_time().is_some_and(|t| t < Duration::from_secs(1 << 30)));
    }
}
