#!/usr/bin/env bash
# Untrusted senders cannot take the OCU down or rewrite an arm (issue 29): a `jaus-ocu sim`,
# a `jaus-ocu probe` and the GUI (under Xvfb, Mesa's software renderer) both following it,
# all on loopback; after a warm-up, `jaus-ocu flood` (the bounded hostile sender: spoofed
# facts with the arm's ID, datagrams with the OCU's own ID, discovery floods from made-up
# IDs, fragments that never complete, broken framing) sends to all three ports at RATE
# datagrams/s each for SECONDS (default 20). Then, for the probe and the GUI:
#   - resident memory (VmRSS) grew by at most 64 MB (peak during the flood, and after);
#   - CPU (utime + stime from /proc/PID/stat, all threads, 500 ms windows) is back within
#     2 s: the probe under 5 % of a core (or 1 point above its own level before the flood,
#     when a debug build's live following costs more than that); the GUI, which draws and
#     holds its own CPU budget (ui/pace.rs), back to its pre-flood live level (+5 points,
#     or +20 % of it);
#   - the arm is still followed, link live, with its own specification (the probe's newest
#     JSON line: its joint count, not the spoofed 255), only the real arm followed, the
#     spoofed datagrams counted, no ID conflict caused by a stranger;
#   - the GUI is alive and still drawing: the window title still names the real arm, a
#     screenshot is not blank (as .ci/gui-smoke.sh), and two screenshots 1.5 s apart differ.
# Prints a table; exits 1 naming each check that failed and by how much. FLOOD_LOGS=DIR keeps
# the logs, the probe's JSON lines and the screenshots there.
# Needs Xvfb, xdotool, ImageMagick, python3 (apt-get install xvfb xdotool imagemagick).
# Usage: .ci/flood.sh BINARY [SECONDS]
#   FLOOD_RATE=300      datagrams/s to each port (default 300)
#   FLOOD_DISPLAY=:94   the X display to run Xvfb on
set -euo pipefail
BIN=$(realpath "$1")
SECONDS_=${2:-20}
RATE=${FLOOD_RATE:-300}
DISPLAY_NUM=${FLOOD_DISPLAY:-:94}
# IDs of our own, so that another sim on this machine (the GUI always looks at
# 127.0.0.1:3794 too) is not taken for ours.
ARM=126.29.10
PROBE_ID=200.29.78
GUI_ID=200.29.79
WORK=$(mktemp -d)
XPID=
SIM=
PROBE=
GUI=
FLOODS=
cleanup() {
    FLOODS=$(cat "$WORK/floods.pids" 2>/dev/null || true)
    kill ${FLOODS:-} ${GUI:-} ${PROBE:-} ${SIM:-} 2>/dev/null || true
    wait ${GUI:-} ${PROBE:-} ${SIM:-} 2>/dev/null || true
    if [ -n "$XPID" ]; then
        kill "$XPID" 2>/dev/null || true
        # The display is free for the next run only once its server has gone.
        wait "$XPID" 2>/dev/null || true
    fi
    if [ -n "${FLOOD_LOGS:-}" ]; then
        mkdir -p "$FLOOD_LOGS"
        cp "$WORK"/*.log "$WORK"/*.jsonl "$WORK"/*.png "$FLOOD_LOGS"/ 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
export JAUS_OCU_CONFIG_DIR=$WORK

free_port() {
    python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
SIM_PORT=$(free_port)
PROBE_PORT=$(free_port)
GUI_PORT=$(free_port)

# Waits (at most $1 s) until the command "${@:2}" succeeds.
wait_for() {
    local deadline=$(($(date +%s) + $1)) what=$2
    shift 2
    until "$@"; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "flood: $what did not happen within the deadline" >&2
            return 1
        fi
        sleep 0.2
    done
}

Xvfb "$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
if ! wait_for 10 "Xvfb on $DISPLAY_NUM" xdpyinfo -display "$DISPLAY_NUM" >/dev/null 2>&1; then
    echo "Xvfb did not start on $DISPLAY_NUM (another server there? set FLOOD_DISPLAY)" >&2
    exit 1
fi

"$BIN" sim --bind "127.0.0.1:$SIM_PORT" --id "$ARM" 2>"$WORK/sim.log" &
SIM=$!
"$BIN" probe --connect "127.0.0.1:$SIM_PORT" --no-multicast --json --timeout 60 \
    --bind "127.0.0.1:$PROBE_PORT" --jaus-id "$PROBE_ID" --component "$ARM" \
    >"$WORK/probe.jsonl" 2>"$WORK/probe.log" &
PROBE=$!
# The GUI asks only its --connect address (no multicast group, no 127.0.0.1:3794).
mkdir -p "$WORK/gui-data" "$WORK/gui-config"
env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET DISPLAY="$DISPLAY_NUM" \
    XDG_DATA_HOME="$WORK/gui-data" XDG_CONFIG_HOME="$WORK/gui-config" RUST_LOG=jaus_ocu::net=info \
    "$BIN" --connect "127.0.0.1:$SIM_PORT" --no-multicast --bind "127.0.0.1:$GUI_PORT" --jaus-id "$GUI_ID" \
    --component "$ARM" >/dev/null 2>"$WORK/gui.log" &
GUI=$!

# Warm-up: the probe follows the arm with its specification; the GUI's link is live and its
# window is up.
probe_follows() {
    tail -n 1 "$WORK/probe.jsonl" 2>/dev/null | python3 -c '
import json, sys
try:
    j = json.loads(sys.stdin.read())
except ValueError:
    sys.exit(1)
sys.exit(0 if j.get("component") == sys.argv[1] and j.get("link") == "live" and j.get("joints") else 1)
' "$ARM"
}
wait_for 60 "the probe following $ARM" probe_follows || { tail -n 20 "$WORK/probe.log" >&2; exit 1; }
wait_for 60 "the GUI's link to $ARM going live" grep -q "link live" "$WORK/gui.log" || {
    tail -n 20 "$WORK/gui.log" >&2
    exit 1
}
gui_window() { DISPLAY="$DISPLAY_NUM" xdotool search --pid "$GUI" 2>/dev/null | tail -1; }
wait_for 30 "the GUI's window" test -n "$(gui_window)"
WID=$(gui_window)
# Let the window settle (its first frames compile shaders and fill the plots).
sleep 5

python3 - "$WORK" "$PROBE" "$GUI" "$RATE" "$SECONDS_" "$BIN" "$ARM" "$PROBE_ID" "$GUI_ID" \
    "$PROBE_PORT" "$GUI_PORT" "$SIM_PORT" "$DISPLAY_NUM" "$WID" "$SIM" <<'EOF'
import json, os, re, subprocess, sys, time

(work, probe, gui, rate, seconds, binary, arm, probe_id, gui_id, probe_port, gui_port,
 sim_port, display, wid, sim) = sys.argv[1:]
probe, gui, sim = int(probe), int(gui), int(sim)
seconds = float(seconds)
TICKS = os.sysconf("SC_CLK_TCK")
RSS_LIMIT_MB = 64.0
PROBE_CPU_LIMIT = 5.0
SETTLE = 2.0
WINDOW = 0.5
XENV = dict(os.environ, DISPLAY=display)


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def shares(pids, window):
    """CPU of each pid over the next `window` seconds, % of one core."""
    c0, t0 = [cpu(p) for p in pids], time.monotonic()
    time.sleep(window)
    c1, t1 = [cpu(p) for p in pids], time.monotonic()
    return [100.0 * (b - a) / TICKS / (t1 - t0) for a, b in zip(c0, c1)]


def title():
    r = subprocess.run(["xdotool", "getwindowname", wid], env=XENV, capture_output=True, text=True)
    return r.stdout.strip()


def shot(path):
    subprocess.run(["import", "-window", "root", path], env=XENV, check=True,
                   stderr=subprocess.DEVNULL)
    colours = subprocess.run(["identify", "-format", "%k", path], capture_output=True,
                             text=True, check=True).stdout.strip()
    return int(colours or 0)


def differing_pixels(a, b):
    # `compare` prints the count on stderr and exits 1 when the images differ.
    r = subprocess.run(["compare", "-metric", "AE", a, b, "null:"], capture_output=True,
                       text=True)
    try:
        return int(float(r.stderr.split()[0]))
    except (ValueError, IndexError):
        return -1


def count_probe_lines():
    with open(f"{work}/probe.jsonl") as f:
        return sum(1 for _ in f)


def newest_probe_line():
    with open(f"{work}/probe.jsonl") as f:
        lines = f.read().splitlines()
    for line in reversed(lines):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {}


before = newest_probe_line()
joints = len(before.get("joints") or [])
datagrams_before = before.get("stats", {}).get("datagrams")
title_before = title()
rss0 = {"probe": rss_mb(probe), "gui": rss_mb(gui)}
pre = shares([probe, gui], 4.0)
cpu_before = {"probe": pre[0], "gui": pre[1]}

# The flood: one sender, each datagram to all three ports, posing as the arm and as either
# OCU; RATE datagrams/s per port.
floods = [
    subprocess.Popen([binary, "flood", "--json", "--seed", "29", "--rate", rate,
                      "--seconds", str(seconds), "--arm-id", arm,
                      "--ocu-id", probe_id, "--ocu-id", gui_id,
                      "--to", f"127.0.0.1:{probe_port}", "--to", f"127.0.0.1:{gui_port}",
                      "--to", f"127.0.0.1:{sim_port}"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
]
with open(f"{work}/floods.pids", "w") as f:
    f.write(" ".join(str(p.pid) for p in floods))
peak = dict(rss0)
deadline = time.monotonic() + seconds + 60
while any(p.poll() is None for p in floods):
    if time.monotonic() > deadline:
        for p in floods:
            p.kill()
        sys.exit("FAILED: the flood did not stop by itself")
    peak["probe"] = max(peak["probe"], rss_mb(probe))
    peak["gui"] = max(peak["gui"], rss_mb(gui))
    time.sleep(0.2)
end = time.monotonic()
lines_at_end = count_probe_lines()
summaries = []
for p in floods:
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"FAILED: flood exited {p.returncode}: {out} {err}")
    summaries.append(json.loads(out))

# CPU in the 2 s after the flood, in 500 ms windows, both processes at once.
windows = []
while time.monotonic() - end + WINDOW <= SETTLE + 0.05:
    s = shares([probe, gui], WINDOW)
    windows.append((time.monotonic() - end, s[0], s[1]))

# The GUI still draws: two screenshots 1.5 s apart, neither blank, and different.
colours = shot(f"{work}/after-1.png")
time.sleep(1.5)
colours = min(colours, shot(f"{work}/after-2.png"))
changed = differing_pixels(f"{work}/after-1.png", f"{work}/after-2.png")
title_after = title()

# The probe's newest line, printed well after the flood (a line every 500 ms, the counters
# once a second) and caught up with it: its counters include every datagram the flood sent
# it. Within a deadline.
to_probe = summaries[0]["sent"] // len(summaries[0]["addresses"])
at_least = (datagrams_before or 0) + to_probe
printed = time.monotonic() + 10
while time.monotonic() < printed:
    if (count_probe_lines() >= lines_at_end + 3
            and (newest_probe_line().get("stats", {}).get("datagrams") or 0) >= at_least):
        break
    time.sleep(0.1)
fresh = count_probe_lines() - lines_at_end
after = newest_probe_line()
for k in peak:
    peak[k] = max(peak[k], rss_mb(probe if k == "probe" else gui))
stats = after.get("stats", {})
arms = [a.get("component") for a in after.get("arms", [])]
gui_log = open(f"{work}/gui.log", errors="replace").read()
lost_in_gui = gui_log.count(f"net: {arm}: link lost")
gui_arms = sorted(set(re.findall(r"net: (\d+\.\d+\.\d+): link connecting", gui_log)))

probe_limit = max(PROBE_CPU_LIMIT, cpu_before["probe"] + 1.0)
gui_limit = max(cpu_before["gui"] + 5.0, cpu_before["gui"] * 1.2)
probe_back = next((t for t, p, _ in windows if p <= probe_limit), None)
gui_back = next((t for t, _, g in windows if g <= gui_limit), None)
win_text = lambda i: ", ".join(f"{w[0]:.1f}s {w[i]:.1f}%" for w in windows)

sent = sum(s["sent"] for s in summaries)
slowest = min(s["rate_per_address"] for s in summaries)
achieved = ", ".join("%.0f/s to %d port(s)" % (s["rate_per_address"], len(s["addresses"]))
                     for s in summaries)
print(f"flood: {seconds:.0f} s at {rate}/s per port; sent {sent} datagrams ({achieved})")
print("probe counters: " + ", ".join(f"{k} {stats.get(k)}" for k in (
    "datagrams", "malformed", "foreign_version", "not_for_us", "duplicates", "foreign_reports",
    "unexpected", "spoofed", "unsolicited", "same_id_strangers", "peers_evicted",
    "id_conflicts", "queue_dropped", "kernel_dropped", "arms_not_followed")))

checks = []


def check(what, ok, detail):
    checks.append((what, ok, detail))


for name, pid in (("probe", probe), ("gui", gui)):
    growth = peak[name] - rss0[name]
    check(f"{name}: RSS growth <= {RSS_LIMIT_MB:.0f} MB", growth <= RSS_LIMIT_MB,
          f"{rss0[name]:.1f} MB before, peak {peak[name]:.1f} MB: +{growth:.1f} MB")
fast_enough = slowest >= 0.95 * float(rate)
check(f"flood: >= 95 % of {rate}/s reached each port", fast_enough,
      f"{slowest:.0f}/s per port"
      + ("" if fast_enough else " (this machine could not send faster: the proof is weaker)"))
check("probe: alive", alive(probe), "")
check("probe: printing after the flood", fresh >= 3, f"{fresh} line(s) in the 10 s after")
check("probe: caught up (its counters count what the flood sent it)",
      (stats.get("datagrams") or 0) >= at_least,
      f"stats.datagrams {stats.get('datagrams')}, at least {at_least} "
      f"({datagrams_before} before the flood, {to_probe} from it)")
check("gui: alive", alive(gui), "")
check("sim: alive", alive(sim), "")
check(f"probe: CPU <= {probe_limit:.1f} % within 2 s", probe_back is not None,
      f"before {cpu_before['probe']:.1f} %; after: {win_text(1)}")
check(f"gui: CPU back to its live level (<= {gui_limit:.1f} %) within 2 s", gui_back is not None,
      f"before {cpu_before['gui']:.1f} %; after: {win_text(2)}")
check("probe: follows the real arm, link live",
      after.get("component") == arm and after.get("link") == "live",
      f"component {after.get('component')}, link {after.get('link')}")
n = len(after.get("joints") or [])
check("probe: the arm's own specification", n == joints and joints > 0,
      f"{n} joints (before the flood {joints}; spoofed 255)")
check("probe: only the real arm followed", arms == [arm],
      f"{len(arms)}: {', '.join(map(str, arms[:6]))}{' …' if len(arms) > 6 else ''}")
for k in ("spoofed", "unsolicited", "same_id_strangers"):
    check(f"probe: stats.{k} counted", (stats.get(k) or 0) > 0, f"{k} {stats.get(k)}")
check("probe: no ID conflict from a stranger", after.get("id_conflict") is None,
      f"id_conflict {after.get('id_conflict')}, id_suspect {after.get('id_suspect')}")
check("gui: window title still names the real arm", title_after == title_before,
      f"before '{title_before}', after '{title_after}'")
check("gui: screenshot not blank", colours >= 200, f"{colours} distinct colours")
check("gui: still drawing (screenshots 1.5 s apart differ)", changed > 0,
      f"{changed} pixels changed")
check("gui: the real arm's link never lost", lost_in_gui == 0,
      f"'{arm}: link lost' logged {lost_in_gui} time(s)")
check("gui: only the real arm followed", gui_arms == [arm],
      f"{len(gui_arms)}: {', '.join(gui_arms[:6])}{' …' if len(gui_arms) > 6 else ''}")

width = max(len(c[0]) for c in checks)
failed = [c for c in checks if not c[1]]
for what, ok, detail in checks:
    print(f"{'ok  ' if ok else 'FAIL'}  {what:<{width}}  {detail}")
if failed:
    print(f"FAILED: {len(failed)} check(s): " + "; ".join(f"{w} ({d})" for w, _, d in failed),
          file=sys.stderr)
    sys.exit(1)
EOF
