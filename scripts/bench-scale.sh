#!/usr/bin/env bash
# Scale rows: the three inputs where a cost used to grow faster than the input (issue 13,
# item 11). Times the release binary (wall clock, best of BENCH_RUNS runs) on generated
# inputs and prints one line per row:
#   nowhere    a 2,000-line hunk that matches nowhere in 100,000 identical lines (refused)
#   deep       an Add at folder depth 1,000, folder names of 100 characters (a 101 KB path)
#   many       100,000 added files, 100 per folder: --check, then the apply itself
# Each row also checks its outcome (exit status; the files written), so a fast wrong answer
# fails the script.
#
# Usage: scripts/bench-scale.sh [BINARY]   (default target/release/apply-patch;
#                                           BENCH_RUNS=N runs per row, default 3;
#                                           SCALE=K divides the sizes by K, for a quick look)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/release/apply-patch}")"
runs="${BENCH_RUNS:-3}"
scale="${SCALE:-1}"
[ -x "$bin" ] || { echo "bench-scale: $bin is missing (cargo build --release)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_STATE_HOME="$work/state"
failed=0

# best_of NAME EXPECTED_STATUS SETUP COMMAND: runs SETUP then times COMMAND, BENCH_RUNS times.
best_of() {
  local name="$1" want="$2" setup="$3" cmd="$4" best="" status
  for _ in $(seq "$runs"); do
    eval "$setup"
    local start end
    start=$(date +%s%N)
    set +e
    eval "$cmd" >"$work/out" 2>&1
    status=$?
    set -e
    end=$(date +%s%N)
    if [ "$status" != "$want" ]; then
      printf '%-34s   failed (exit %s): %s\n' "$name" "$status" "$(head -c 120 "$work/out" | tr '\n' ' ')"
      failed=1
      return
    fi
    local ms=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  printf '%-34s %8d ms\n' "$name" "$best"
}

# ---- nowhere: 100,000 identical lines; a hunk of 1,999 of them and one line not there ----
lines=$((100000 / scale)); hunk=$((2000 / scale))
python3 - "$work" "$lines" "$hunk" <<'PY'
import sys
work, lines, hunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f"{work}/same.txt", "w") as f:
    f.write("the same line\n" * lines)
body = "".join("-the same line\n" for _ in range(hunk - 1)) + "-a line that is not there\n"
with open(f"{work}/nowhere.patch", "w") as f:
    f.write("*** Begin Patch\n*** Update File: same.txt\n@@\n" + body + "+new\n*** End Patch\n")
PY
mkdir -p "$work/t1"
best_of "nowhere ($hunk-line hunk, $lines lines)" 1 \
  "cp $work/same.txt $work/t1/same.txt" \
  "$bin --root $work/t1 $work/nowhere.patch"

# ---- deep: one Add 1,000 folders down, 100-character folder names ----
depth=$((1000 / scale))
python3 - "$work" "$depth" <<'PY'
import sys
work, depth = sys.argv[1], int(sys.argv[2])
path = "/".join(f"{i:04d}" + "d" * 96 for i in range(depth)) + "/f.txt"
with open(f"{work}/deep.patch", "w") as f:
    f.write(f"*** Begin Patch\n*** Add File: {path}\n+deep\n*** End Patch\n")
PY
best_of "deep (Add at depth $depth)" 0 \
  "rm -rf $work/t2 && mkdir -p $work/t2" \
  "$bin --root $work/t2 $work/deep.patch"
[ "$(find "$work/t2" -name f.txt -execdir cat {} + 2>/dev/null)" = "deep" ] || { echo "bench-scale: the deep file was not written" >&2; failed=1; }

# ---- many: 100,000 added files, 100 per folder ----
files=$((100000 / scale))
python3 - "$work" "$files" <<'PY'
import sys
work, files = sys.argv[1], int(sys.argv[2])
with open(f"{work}/many.patch", "w") as f:
    f.write("*** Begin Patch\n")
    for i in range(files):
        f.write(f"*** Add File: d{i // 100}/f{i}.txt\n+file {i}\n")
    f.write("*** End Patch\n")
PY
best_of "many --check ($files added files)" 0 \
  "rm -rf $work/t3 && mkdir -p $work/t3" \
  "$bin --check --root $work/t3 $work/many.patch"
best_of "many apply ($files added files)" 0 \
  "rm -rf $work/t3 $work/state && mkdir -p $work/t3 && sync" \
  "$bin --root $work/t3 $work/many.patch"
[ "$(find "$work/t3" -name '*.txt' | wc -l)" = "$files" ] || { echo "bench-scale: not every file was added" >&2; failed=1; }
exit "$failed"
