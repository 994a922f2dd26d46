#!/usr/bin/env bash
# A jog survives its OCU being killed (issue 32, "Done means"): `jaus-ocu control … jog`
# killed with SIGKILL mid-jog, against `jaus-ocu sim` on loopback, the arm's positions read by
# a `jaus-ocu probe --json` following the same sim (read-only: it never takes control).
#   (a) position driver only (`--drivers position`), KILLS times (default 5), a fresh sim each
#       time: joint 1 jogs at 0.3 rad/s (clamped to 20 % of its maximum speed v); once it
#       moves, and a random 0.3-1.3 s later, the jog is killed with SIGKILL. The joint's motion
#       after the kill must stay within the stated bound stop_bound(v, v/BRAKE_S, period) =
#       v*BRAKE_S/2 + v*period, BRAKE_S = 0.25 s, period 0.05 s (net/client/jog_stream.rs).
#       The position at the kill instant: the probe prints a line every 500 ms (each holds
#       the newest 50 Hz joint report), so it is the last line before the kill extrapolated
#       to the kill at the speed those lines show (the arm jogs at constant speed by then);
#       the error of that estimate is about the speed times the report's age (<= 40 ms),
#       printed as "±". The check fails when the motion exceeds the bound by more than that
#       error: a kill just after a target was sent from a fresh report moves the joint the
#       whole bound (by construction), and the estimate may then read up to the error above
#       it (seen once: 0.0280 ±0.0056 against 0.0280). The rest position: the first of two
#       lines 1 s apart that agree.
#   (b) velocity driver only with `--control-timeout 1` (1 s is within the default limit, so
#       no acknowledgement is needed): killed mid-jog, the sim's control lapses after 1 s and
#       it halts the arm. Reported: the distance after the kill, the stop time it implies at
#       the jog's speed (distance / speed), and the probe lines that bracket the stop. Fails
#       if the stop time is over 1 s + one period + 0.25 s of slack for the sim's own check.
#   (c) velocity driver only with `--control-timeout 60`: `control … jog` without
#       `--acknowledge-timeout` must exit non-zero with a message naming the 60 s, and joint 1
#       must not move; with `--acknowledge-timeout` it must exit 0 and move.
# Prints a table; exits 1 naming each check that failed.
# Usage: .ci/jog-kill.sh BINARY
#   JOG_KILLS=5   kills of the position-driver jog
set -euo pipefail
BIN=$(realpath "$1")
KILLS=${JOG_KILLS:-5}
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT
export JAUS_OCU_CONFIG_DIR=$WORK

python3 - "$BIN" "$WORK" "$KILLS" <<'EOF'
import json, os, random, signal, socket, subprocess, sys, threading, time

binary, work, kills = sys.argv[1], sys.argv[2], int(sys.argv[3])
BRAKE_S, PERIOD, SCALE = 0.25, 0.05, 0.2
random.seed(32)
children = []


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def spawn(name, args, **kw):
    log = open(f"{work}/{name}.log", "w")
    p = subprocess.Popen([binary] + args, stderr=log, **kw)
    children.append(p)
    with open(f"{work}/{name}.{p.pid}.pid", "w") as f:
        f.write(str(p.pid))
    return p


def stop(p):
    if p.poll() is None:
        p.kill()
    p.wait()


class Probe:
    """A `probe --json` following the sim: joint 1's position per line, with the time the
    line was read (time.monotonic())."""

    def __init__(self, port, jaus_id):
        self.p = spawn(f"probe-{port}", [
            "probe", "--connect", f"127.0.0.1:{port}", "--no-multicast", "--json",
            "--timeout", "30", "--bind", "127.0.0.1:0", "--jaus-id", jaus_id],
            stdout=subprocess.PIPE, text=True)
        self.lines = []  # (t, position, max_speed)
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            t = time.monotonic()
            try:
                j = json.loads(line)
                joint = j["joints"][0]
                q = joint["position"]
            except (ValueError, KeyError, IndexError, TypeError):
                continue
            if q is None:
                continue
            with self.cv:
                self.lines.append((t, q, joint.get("max_speed")))
                self.cv.notify_all()

    def wait(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cv:
            while not pred(self.lines):
                left = deadline - time.monotonic()
                if left <= 0:
                    # What the processes said, before the trap removes their logs.
                    for name in sorted(os.listdir(work)):
                        if name.endswith(".log"):
                            with open(os.path.join(work, name), errors="replace") as f:
                                tail = f.readlines()[-15:]
                            print(f"--- {name} (last lines)\n{''.join(tail)}", file=sys.stderr)
                    raise RuntimeError(f"{what} did not happen within {timeout} s")
                self.cv.wait(left)
            return list(self.lines)

    def at_rest(self, since, timeout=10.0):
        """The first line after `since` that a line >= 1 s later agrees with (1e-4 rad)."""
        def rest(lines):
            after = [x for x in lines if x[0] > since]
            for i, a in enumerate(after):
                for b in after[i + 1:]:
                    if b[0] - a[0] >= 1.0:
                        if abs(b[1] - a[1]) < 1e-4:
                            return a
                        break
            return None
        self.wait(lambda ls: rest(ls) is not None, timeout, "the joint coming to rest")
        return rest(self.lines)


def start_sim(drivers, timeout):
    port = free_port()
    sim = spawn(f"sim-{port}", ["sim", "--bind", f"127.0.0.1:{port}", "--drivers", drivers,
                                "--control-timeout", str(timeout)])
    return port, sim


def control(port, jaus_id, seconds, extra=()):
    return spawn(f"control-{jaus_id}", [
        "control", "--connect", f"127.0.0.1:{port}", "--no-multicast", "--bind",
        "127.0.0.1:0", "--jaus-id", jaus_id, *extra, "resume", "jog", "1", "0.3",
        str(seconds)], stdout=subprocess.DEVNULL)


def log_of(p):
    for name in os.listdir(work):
        if name.endswith(f".{p.pid}.pid"):
            with open(f"{work}/{name[:-len(f'.{p.pid}.pid')]}.log", errors="replace") as f:
                return f.read()
    return ""


checks = []


def check(what, ok, detail):
    checks.append((what, ok, detail))


def moving(start, by=0.01):
    return lambda ls: bool(ls) and abs(ls[-1][1] - start) > by


def killed_jog(drivers, timeout, jaus_id, extra_delay):
    """Jogs joint 1, kills the jog with SIGKILL mid-jog; the probe's view around it."""
    port, sim = start_sim(drivers, timeout)
    probe = Probe(port, f"200.33.{jaus_id}")
    lines = probe.wait(lambda ls: len(ls) >= 2, 30, "the probe following the sim")
    q0, vmax = lines[-1][1], lines[-1][2]
    jog = control(port, f"200.34.{jaus_id}", 10)
    probe.wait(moving(q0), 15, "joint 1 moving")
    # Two lines while moving at full speed (the speed estimate), then the random delay.
    n = len(probe.lines)
    probe.wait(lambda ls: len(ls) >= n + 2, 5, "two probe lines while jogging")
    time.sleep(extra_delay)
    os.kill(jog.pid, signal.SIGKILL)
    t_kill = time.monotonic()
    jog.wait()
    rest = probe.at_rest(t_kill)
    lines = list(probe.lines)
    before = [x for x in lines if x[0] <= t_kill]
    (ta, qa, _), (tb, qb, _) = before[-2], before[-1]
    speed = (qb - qa) / (tb - ta)
    q_kill = qb + speed * (t_kill - tb)
    after = [x for x in lines if x[0] > t_kill]
    stop(probe.p)
    stop(sim)
    return dict(vmax=vmax, speed=speed, q_kill=q_kill, q_last=qb, rest=rest, t_kill=t_kill,
                after=after, before=before)


rows = []
# (a) position driver: the bound holds by construction.
for i in range(kills):
    r = killed_jog("position", 5, 10 + i, 0.3 + random.random())
    v = SCALE * r["vmax"]
    bound = v * BRAKE_S / 2 + v * PERIOD
    moved = abs(r["rest"][1] - r["q_kill"])
    err = abs(r["speed"]) * 0.04
    rows.append(("position", i + 1, f"{r['speed']:+.4f}", f"{moved:.4f} ±{err:.4f}",
                 f"{bound:.4f}", f"{r['rest'][0] - r['t_kill']:.2f}"))
    check(f"(a) position kill {i + 1}: motion after the kill <= bound (within the estimate's "
          f"error)", moved - err <= bound,
          f"{moved:.4f} rad (±{err:.4f}) vs bound {bound:.4f} rad "
          f"(v = 20 % of {r['vmax']:.3f} = {v:.3f} rad/s; measured jog speed {r['speed']:+.4f})")

# (b) velocity driver, access timeout 1 s: stops when the timeout lapses.
r = killed_jog("velocity", 1, 20, 0.5)
moved = abs(r["rest"][1] - r["q_kill"])
speed = abs(r["speed"])
t_stop = moved / speed if speed > 0 else float("nan")
still = [x for x in r["after"] if x[0] <= r["rest"][0]]
bracket = ", ".join(f"{x[0] - r['t_kill']:.2f}s {x[1]:+.4f}" for x in still[-3:])
rows.append(("velocity 1 s", 1, f"{r['speed']:+.4f}", f"{moved:.4f}",
             "timeout", f"{r['rest'][0] - r['t_kill']:.2f}"))
limit = 1.0 + PERIOD + 0.25
check("(b) velocity, --control-timeout 1: stops when the timeout lapses",
      t_stop <= limit,
      f"{moved:.4f} rad after the kill at {speed:.4f} rad/s: stopped ~{t_stop:.2f} s after "
      f"it (limit {limit:.2f} s); probe lines up to rest (s after kill, q): {bracket}")

# (c) velocity driver, access timeout 60 s: refused without the acknowledgement.
port, sim = start_sim("velocity", 60)
probe = Probe(port, "200.33.30")
lines = probe.wait(lambda ls: len(ls) >= 2, 30, "the probe following the sim")
q0 = lines[-1][1]
jog = control(port, "200.34.30", 3)
try:
    code = jog.wait(timeout=30)
except subprocess.TimeoutExpired:
    stop(jog)
    code = "hung"
words = log_of(jog)
time.sleep(1.0)
q1 = probe.lines[-1][1]
named = "60 s" in words
check("(c) 60 s timeout, no acknowledgement: refused, names the 60 s, nothing moves",
      code not in (0, "hung") and named and abs(q1 - q0) < 1e-3,
      f"exit {code}; message names 60 s: {named}; joint 1 moved {q1 - q0:+.4f} rad; "
      f"stderr: {' | '.join(l for l in words.splitlines() if 'jog' in l)[:300]}")
rows.append(("velocity 60 s", "refuse", "", f"{abs(q1 - q0):.4f}", "", f"exit {code}"))
jog = control(port, "200.34.31", 2, ["--acknowledge-timeout"])
try:
    code = jog.wait(timeout=30)
except subprocess.TimeoutExpired:
    stop(jog)
    code = "hung"
time.sleep(1.0)
q2 = probe.lines[-1][1]
check("(c) 60 s timeout, --acknowledge-timeout: jogs", code == 0 and abs(q2 - q1) > 0.05,
      f"exit {code}; joint 1 moved {q2 - q1:+.4f} rad")
rows.append(("velocity 60 s", "ack", "", f"{abs(q2 - q1):.4f}", "", f"exit {code}"))
stop(probe.p)
stop(sim)

print(f"{'sim':<14} {'run':>6} {'jog rad/s':>10} {'moved after kill (rad)':>24} "
      f"{'bound (rad)':>12} {'rest after (s)':>15}")
for row in rows:
    print(f"{row[0]:<14} {row[1]!s:>6} {row[2]:>10} {row[3]:>24} {row[4]:>12} {row[5]:>15}")
failed = [c for c in checks if not c[1]]
width = max(len(c[0]) for c in checks)
for what, ok, detail in checks:
    print(f"{'ok  ' if ok else 'FAIL'}  {what:<{width}}  {detail}")
for p in children:
    if p.poll() is None:
        p.kill()
if failed:
    print(f"FAILED: {len(failed)} check(s): " + "; ".join(w for w, _, _ in failed),
          file=sys.stderr)
    sys.exit(1)
EOF
