#!/usr/bin/env bash
# Proof of determinism: the whole suite, N times back to back, and print the counts.
#
#   tests/soak.sh [N]          N runs (default 10), one after another
#   tests/soak.sh --load [N]   N runs (default 3), each with a second full run beside it, and
#                              a probe that opens and stops a native observation, as a
#                              separate process of the same user, again and again throughout
#
# Exit 0 only if every run (and, under load, every run beside it and every probe) is green.
# Each run's output is kept in $SOAK_DIR (default: a new temporary directory). $SOAK_ONLY
# (test paths, space-separated) narrows every run to those, to try the script itself quickly.
set -uo pipefail
cd "$(dirname "$0")/.."

load=0
if [[ "${1:-}" == "--load" ]]; then
  load=1
  shift
fi
runs="${1:-$((load ? 3 : 10))}"
dir="${SOAK_DIR:-$(mktemp -d -t wisp-soak.XXXXXX)}"
mkdir -p "$dir"
python=.venv/bin/python
# The README's test command (tests/test_project.py holds README and .ci/run to it).
suite=("$python" -m pytest -q -p no:cacheprovider)
if [[ -n "${SOAK_ONLY:-}" ]]; then
  read -r -a only <<<"$SOAK_ONLY"
  suite+=("${only[@]}")
fi

# The probe: a separate process of this user that opens (and stops) a native observation
# (pending's, on watchdog's inotify reader) every PROBE_EVERY_S seconds until the run it
# watches ends, and counts the starts that failed (the suites used up this user's inotify
# instances) and the stops after which it still held an instance (one leaked).
# It is a test tool, so a bounded loop with a short sleep is what it should be.
PROBE_EVERY_S=0.2
PROBE_AT_MOST_S=1800
probe_code='
import os, sys, tempfile, time
from pending import Backend, WatchHints, observe
watched, every, at_most = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])

def instances():
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            held += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            continue
    return held

starts = failed = leaked = 0
first = None
clock = "%H:%M:%S"
end = time.monotonic() + at_most
with tempfile.TemporaryDirectory() as where:
    while time.monotonic() < end:
        try:
            os.kill(watched, 0)
        except ProcessLookupError:
            break
        starts += 1
        try:
            observation = observe([where], WatchHints(on_change=lambda *a: None), backend=Backend.NATIVE)
        except OSError as exc:
            failed += 1
            first = first or f"{exc.strerror or exc} at {time.strftime(clock)}"
        else:
            observation.stop()
        if instances():
            leaked += 1
            first = first or f"an instance still held after a stop at {time.strftime(clock)}"
        time.sleep(every)
print(f"probe: {starts} native observations tried, {failed} failed, {leaked} left an instance held" + (f" (first: {first})" if first else ""))
sys.exit(1 if failed or leaked or not starts else 0)
'

summary() {  # the last line pytest printed: "N passed, M skipped in Ss"
  grep -E '(passed|failed|error|no tests ran)' "$1" | tail -n 1
}

green=0
red=0
for ((i = 1; i <= runs; i++)); do
  ok=1
  if ((load)); then
    "${suite[@]}" >"$dir/beside-$i.txt" 2>&1 &
    beside=$!
    "${suite[@]}" >"$dir/run-$i.txt" 2>&1 &
    main=$!
    "$python" -c "$probe_code" "$main" "$PROBE_EVERY_S" "$PROBE_AT_MOST_S" >"$dir/probe-$i.txt" 2>&1 &
    probe=$!
    wait "$main" || ok=0
    wait "$beside" || ok=0
    wait "$probe" || ok=0
    echo "run $i: $(summary "$dir/run-$i.txt") | beside: $(summary "$dir/beside-$i.txt") | $(tail -n 1 "$dir/probe-$i.txt")"
  else
    "${suite[@]}" >"$dir/run-$i.txt" 2>&1 || ok=0
    echo "run $i: $(summary "$dir/run-$i.txt")"
  fi
  if ((ok)); then green=$((green + 1)); else red=$((red + 1)); fi
done
mode=""
if ((load)); then mode=" under load"; fi
echo "soak$mode: $runs run(s), $green green, $red red (output in $dir)"
((red == 0))
