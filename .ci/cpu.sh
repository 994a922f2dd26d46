#!/usr/bin/env bash
# The window's CPU use, under Xvfb with Mesa's software renderer (llvmpipe), in each state:
# the live demo, a replay paused, a replay playing at 1x, and a lost link (the GUI connected to
# a `jaus-ocu sim` in another process, which is then stopped). CPU = (utime + stime) from
# /proc/PID/stat over SECONDS of wall time after a warm-up, as a percentage of one core, and the
# frames/s the window logged over the same seconds (its debug line every 10 s; "-" when it drew
# fewer than one frame per 10 s or the binary does not log it).
# Usage: .ci/cpu.sh BINARY RECORDING.mcap [SECONDS]
#   CPU_SIZE=1920x1080   screen and window size (default 1280x800)
#   CPU_STATES="live lost"  which states, in this order (default: live paused playing lost)
#   CPU_SIM_PORT=37941   the UDP port of the lost-link state's simulator
# Make a recording first (it must play for longer than SECONDS + 10 s):
#   BINARY sim --tour & BINARY record --out rec.mcap --duration 70 --quiet; kill %1
set -euo pipefail
BIN=$1
REC=$2
SECONDS_=${3:-30}
SIZE=${CPU_SIZE:-1280x800}
W=${SIZE%x*}
H=${SIZE#*x}
STATES=${CPU_STATES:-live paused playing lost}
PORT=${CPU_SIM_PORT:-37941}
DISPLAY_NUM=${CPU_DISPLAY:-:96}
Xvfb "$DISPLAY_NUM" -screen 0 "${W}x${H}x24" -nolisten tcp >/dev/null 2>&1 &
XPID=$!
APID=
SPID=
SETTINGS=$(mktemp -d)
cleanup() {
    kill -CONT ${SPID:-} 2>/dev/null || true
    kill $XPID ${APID:-} ${SPID:-} 2>/dev/null || true
    # The display is free for the next run only once its server has gone.
    wait $XPID 2>/dev/null || true
    rm -rf "$SETTINGS"
}
trap cleanup EXIT
for _ in $(seq 50); do
    xdpyinfo -display "$DISPLAY_NUM" >/dev/null 2>&1 && break
    sleep 0.1
done
if ! xdpyinfo -display "$DISPLAY_NUM" >/dev/null 2>&1; then
    echo "Xvfb did not start on $DISPLAY_NUM (another server there? set CPU_DISPLAY)" >&2
    exit 1
fi
TICKS=$(getconf CLK_TCK)
x() { DISPLAY="$DISPLAY_NUM" "$@"; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Percent of one core used by $1 over SECONDS_, then the mean of the frames/s lines the window
# logged meanwhile.
measure() {
    local a b seen
    seen=$(frame_lines | wc -l)
    a=$(cpu_ticks "$1")
    sleep "$SECONDS_"
    b=$(cpu_ticks "$1")
    awk -v d=$((b - a)) -v t="$TICKS" -v s="$SECONDS_" 'BEGIN { printf "%.1f", 100 * d / t / s }'
    printf " %% of one core, "
    frame_lines | tail -n +$((seen + 1)) | awk '{ f += $1; n++ } END { if (n) printf "%.1f frames/s", f / n; else printf "- frames/s" }'
}

# The window's "N frames/s, M 3D pictures/s" lines so far.
frame_lines() { grep -o "[0-9.]* frames/s" "$SETTINGS/app.log" 2>/dev/null || true; }

# Starts the GUI with "$@", sizes its window to the screen (no window manager: the window
# opens at 1280x800 whatever the screen) and lets it settle.
run() {
    env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET DISPLAY="$DISPLAY_NUM" XDG_DATA_HOME="$SETTINGS" \
        RUST_LOG=jaus_ocu::ui=debug "$BIN" "$@" >"$SETTINGS/app.log" 2>&1 &
    APID=$!
    sleep 3
    WID=$(x xdotool search --pid $APID | tail -1)
    x xdotool windowsize "$WID" "$W" "$H" windowmove "$WID" 0 0
    sleep 5
}

stop_app() {
    kill $APID
    wait $APID 2>/dev/null || true
    APID=
}

echo "screen ${W}x${H}, $SECONDS_ s per state, $(basename "$BIN")"
for state in $STATES; do
    case $state in
    live)
        run demo
        echo "live demo:       $(measure $APID)"
        stop_app
        ;;
    paused)
        run replay "$REC"
        echo "replay paused:   $(measure $APID)"
        stop_app
        ;;
    playing)
        run replay "$REC"
        # Focus the window (windowfocus, then a click into the 3D view) and press Space.
        x xdotool windowfocus "$WID"
        x xdotool mousemove $((W / 2)) $((H * 3 / 8)) click 1 sleep 0.3 key space
        sleep 1
        echo "replay playing:  $(measure $APID)"
        # Proof that it played: the timeline's clock, on the screen.
        x import -window root "${CPU_SHOT:-/tmp/cpu-playing.png}" 2>/dev/null || true
        stop_app
        ;;
    lost)
        "$BIN" sim --bind "127.0.0.1:$PORT" --tour >/dev/null 2>&1 &
        SPID=$!
        run --connect "127.0.0.1:$PORT" --bind 127.0.0.1:0
        # The arm stops answering (as if powered off); the link is lost after a few seconds.
        kill -STOP $SPID
        sleep 8
        echo "link lost:       $(measure $APID)"
        x import -window root "${CPU_SHOT_LOST:-/tmp/cpu-lost.png}" 2>/dev/null || true
        stop_app
        kill -CONT $SPID
        kill $SPID
        wait $SPID 2>/dev/null || true
        SPID=
        ;;
    *)
        echo "unknown state $state (live, paused, playing, lost)" >&2
        exit 2
        ;;
    esac
done
