#!/usr/bin/env bash
# Side-by-side benchmark of the apply-patch binary (release build) against GNU patch on the
# synthetic scale workload of ../shared/bench/gen_synth.py (a 36 MB, 1,000,000-line file and a
# 10,000-hunk git diff: exact hints, every hint 37 lines off, CRLF), and against `git apply`
# on a 20x smaller variant (50,000 lines, 500 hunks). Every output is checked byte for byte
# against the expected file. The tools run turn about (GNU patch, apply-patch, git apply, then
# again), BENCH_RUNS times each, so that a shared machine's changing load falls on all of them
# alike; time is the wall clock around each run, in microseconds, reported as the best and the
# median run with their ratios to GNU patch's; memory is the peak resident set size from
# `/usr/bin/time -v` (the largest of the runs).
#
# Usage: scripts/bench.sh            (BENCH_DIR=DIR keeps the generated workload for reuse;
#                                     BENCH_RUNS=N runs per measurement, default 5;
#                                     GEN_SYNTH=PATH points at gen_synth.py;
#                                     BENCH_BIN=PATH another apply-patch binary;
#                                     BENCH_BASE=PATH adds an older binary's rows, turn
#                                     about with the others, to compare;
#                                     BENCH_ATOMIC=1 adds apply-patch --durability atomic)
# Needs python3, GNU patch, GNU time and git: `apt-get install -y patch time git`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

name=bench
. "$root/scripts/bench-common.sh"
# The shared workload generator (../shared/bench/gen_synth.py, see bench-common.sh).
gen="${GEN_SYNTH:-$(shared_dir bench/gen_synth.py)}"
runs="${BENCH_RUNS:-5}"
[ -f "$gen" ] || { echo "bench: gen_synth.py not found (set GEN_SYNTH)" >&2; exit 2; }
pick_bin

work="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"

if [ ! -f "$work/full/big.txt" ]; then
  mkdir -p "$work/full"
  python3 "$gen" --out "$work/full" >/dev/null
fi
if [ ! -f "$work/small/big.txt" ]; then
  mkdir -p "$work/small"
  python3 "$gen" --out "$work/small" --lines 50000 --hunks 500 >/dev/null
fi

# once TOOL DIR INPUT DIFF EXPECTED -> "seconds kilobytes" of one run on a fresh copy of the
# input (wall clock to the nanosecond around the run; peak memory from /usr/bin/time -v).
once() {
  local tool="$1" dir="$2" input="$3" diff="$4" expected="$5" t="$scratch/tree"
  rm -rf "$t" && mkdir -p "$t" && cp "$dir/$input" "$t/big.txt"
  # Every run starts with nothing waiting to be written back, as a file that has been on
  # disk for a while: the fresh copy (which apply-patch keeps as its undo backup) would
  # otherwise be flushed in the middle of a later run of either tool.
  sync
  case "$tool" in
    apply-patch) cmd=("$bin" --root "$t" "$dir/$diff") ;;
    atomic) cmd=("$bin" --durability atomic --root "$t" "$dir/$diff") ;;
    base) cmd=("$BENCH_BASE" --root "$t" "$dir/$diff") ;;
    patch) cmd=(patch -s -p1 -d "$t" -i "$dir/$diff") ;;
    patch-no-orig) cmd=(patch -s -p1 --no-backup-if-mismatch -d "$t" -i "$dir/$diff") ;;
    git) cmd=(git -C "$t" apply "$dir/$diff") ;;
  esac
  local start end
  start=$(date +%s%N)
  if ! /usr/bin/time -v -o "$scratch/time" "${cmd[@]}" >"$scratch/out" 2>"$scratch/err"; then
    echo "bench: $tool failed on $diff:" >&2
    cat "$scratch/err" >&2
    exit 1
  fi
  end=$(date +%s%N)
  cmp -s "$t/big.txt" "$dir/$expected" || { echo "bench: $tool output differs from $expected" >&2; exit 1; }
  echo "$(( (end - start) / 1000 )) $(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")"
}

# apply-patch keeps the last 20 transactions for undo and removes the oldest at each commit:
# measure it in that steady state (each commit then also removes a 36 MB backup), not in
# the cheaper first 20 commits of a fresh history.
for _ in $(seq 20); do
  once apply-patch "$work/full" big.txt big.diff big.expected.txt >/dev/null
done

printf '%-22s %-16s %8s %8s %8s %11s %11s %10s\n' workload tool best median "peak MB" "best/patch" "med/patch" "mem/input"
# row LABEL DIR INPUT DIFF EXPECTED OTHER: the tools run turn about, $runs times each, so that
# the machine's load drifts over all of them alike; best and median wall time, their ratios to
# GNU patch's, and the largest peak memory against input + diff. OTHER adds `git apply`
# (git) or GNU patch without its `.orig` file (no-orig: by default, when a hunk applies at
# an offset, GNU patch keeps the old file as `big.txt.orig` and renames the new one into a
# free name, which spares it the flush ext4 does when a rename replaces a file; with
# `--no-backup-if-mismatch` it leaves the tree as apply-patch does).
row() {
  local label="$1" dir="$2" input="$3" diff="$4" expected="$5" other="$6"
  local size tools=(patch apply-patch) samples="$scratch/samples"
  [ -n "${BENCH_ATOMIC:-}" ] && tools+=(atomic)
  [ -n "${BENCH_BASE:-}" ] && tools+=(base)
  [ "$other" = git ] && tools+=(git)
  [ "$other" = no-orig ] && tools+=(patch-no-orig)
  size=$(($(stat -c %s "$dir/$input") + $(stat -c %s "$dir/$diff")))
  : >"$samples"
  for _ in $(seq "$runs"); do
    for tool in "${tools[@]}"; do
      echo "$tool $(once "$tool" "$dir" "$input" "$diff" "$expected")" >>"$samples"
    done
  done
  python3 - "$label" "$size" "$samples" <<'PY'
import statistics, sys
label, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = {}
for line in open(path):
    tool, micros, kb = line.split()
    runs.setdefault(tool, []).append((int(micros) / 1e6, int(kb)))
def stats(tool):
    times = [t for t, _ in runs[tool]]
    return min(times), statistics.median(times), max(kb for _, kb in runs[tool])
ref_best, ref_med, _ = stats("patch")
for tool, name in (("apply-patch", "apply-patch"), ("atomic", "... atomic"),
                   ("base", "BENCH_BASE"), ("patch", "patch"),
                   ("patch-no-orig", "patch, no .orig"), ("git", "git apply")):
    if tool not in runs:
        continue
    best, med, kb = stats(tool)
    print("%-22s %-16s %8.3f %8.3f %8.1f %10.2fx %10.2fx %9.2fx" % (
        label, name, best, med, kb / 1024, best / ref_best, med / ref_med, kb * 1024 / size))
PY
}

row "1M lines, exact" "$work/full" big.txt big.diff big.expected.txt none
row "1M lines, hints +37" "$work/full" big.txt big.shift37.diff big.expected.txt no-orig
row "1M lines, CRLF" "$work/full" big.crlf.txt big.crlf.diff big.crlf.expected.txt none
row "50k lines, exact" "$work/small" big.txt big.diff big.expected.txt git
row "50k lines, hints +37" "$work/small" big.txt big.shift37.diff big.expected.txt git

# refused LABEL DIR INPUT DIFF: apply-patch must refuse (exit 1) and leave the file as it was;
# prints its best time and memory. The refusal names which hunks would apply (the chip), so
# every hunk is assessed: this must stay about as fast as an apply.
refused() {
  local label="$1" dir="$2" input="$3" diff="$4"
  local t="$scratch/tree" status start end samples="$scratch/samples"
  : >"$samples"
  for _ in $(seq "$runs"); do
    rm -rf "$t" && mkdir -p "$t" && cp "$dir/$input" "$t/big.txt"
    sync
    status=0
    start=$(date +%s%N)
    /usr/bin/time -v -o "$scratch/time" "$bin" --root "$t" "$dir/$diff" >"$scratch/out" 2>"$scratch/err" || status=$?
    end=$(date +%s%N)
    [ "$status" -eq 1 ] || { echo "bench: $label: expected a refusal (exit 1), got $status" >&2; cat "$scratch/err" >&2; exit 1; }
    cmp -s "$t/big.txt" "$dir/$input" || { echo "bench: $label: a refusal changed the file" >&2; exit 1; }
    echo "$(( (end - start) / 1000 )) $(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")" >>"$samples"
  done
  python3 - "$label" "$samples" <<'PY'
import statistics, sys
label, path = sys.argv[1], sys.argv[2]
rows = [line.split() for line in open(path)]
times = [int(m) / 1e6 for m, _ in rows]
kb = max(int(k) for _, k in rows)
print("%-22s %-16s %8.3f %8.3f %8.1f %11s %11s %10s" % (
    label, "apply-patch", min(times), statistics.median(times), kb / 1024, "-", "-", "-"))
PY
}

# resent LABEL DIR INPUT DIFF: the diff sent again to its own result is a no-op (exit 0, an
# `already_applied` warning, the file as it was); prints its best time and memory.
resent() {
  local label="$1" dir="$2" input="$3" diff="$4"
  local t="$scratch/tree" start end samples="$scratch/samples"
  : >"$samples"
  for _ in $(seq "$runs"); do
    rm -rf "$t" && mkdir -p "$t" && cp "$dir/$input" "$t/big.txt"
    sync
    start=$(date +%s%N)
    /usr/bin/time -v -o "$scratch/time" "$bin" --root "$t" "$dir/$diff" >"$scratch/out" 2>"$scratch/err" \
      || { echo "bench: $label: expected a no-op (exit 0)" >&2; cat "$scratch/err" >&2; exit 1; }
    end=$(date +%s%N)
    grep -q already_applied "$scratch/err" || { echo "bench: $label: no already_applied warning" >&2; exit 1; }
    cmp -s "$t/big.txt" "$dir/$input" || { echo "bench: $label: a re-sent diff changed the file" >&2; exit 1; }
    echo "$(( (end - start) / 1000 )) $(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")" >>"$samples"
  done
  python3 - "$label" "$samples" <<'PY'
import statistics, sys
label, path = sys.argv[1], sys.argv[2]
rows = [line.split() for line in open(path)]
times = [int(m) / 1e6 for m, _ in rows]
kb = max(int(k) for _, k in rows)
print("%-22s %-16s %8.3f %8.3f %8.1f %11s %11s %10s" % (
    label, "apply-patch", min(times), statistics.median(times), kb / 1024, "-", "-", "-"))
PY
}

# Re-applying the diff: every hunk is already applied (the pure deletions too, by their
# context lines joined), so it is a no-op. An unrelated file of the same size (every `let`
# spelled `var`): no hunk fits.
for size in full small; do
  [ -f "$work/$size/unrelated.txt" ] || sed 's/\blet\b/var/g' "$work/$size/big.txt" >"$work/$size/unrelated.txt"
done
resent "1M lines, re-applied" "$work/full" big.expected.txt big.diff
refused "1M lines, unrelated" "$work/full" unrelated.txt big.diff
resent "50k lines, re-applied" "$work/small" big.expected.txt big.diff
refused "50k lines, unrelated" "$work/small" unrelated.txt big.diff
echo "targets: apply-patch's time/patch <= 1.00x on the 1M-line rows; peak memory < 3.00x (input + diff)"
