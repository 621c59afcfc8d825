#!/usr/bin/env bash
# Side-by-side benchmark of the apply-patch binary (release build) against GNU patch on the
# synthetic scale workload of ../shared/bench/gen_synth.py (a 36 MB, 1,000,000-line file and a
# 10,000-hunk git diff: exact hints, every hint 37 lines off, CRLF), and against `git apply`
# on a 20x smaller variant (50,000 lines, 500 hunks). Every output is checked byte for byte
# against the expected file; time is wall clock (best of BENCH_RUNS runs), memory the peak
# resident set size, both from `/usr/bin/time -v` (whose clock ticks in 10 ms: a ratio against
# a run that took "0.00 s" is shown as n/a).
#
# Usage: scripts/bench.sh            (BENCH_DIR=DIR keeps the generated workload for reuse;
#                                     BENCH_RUNS=N runs per measurement, default 3;
#                                     GEN_SYNTH=PATH points at gen_synth.py)
# Needs python3, GNU patch, GNU time and git: `apt-get install -y patch time git`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

# The shared workload generator sits beside the checkout (../shared), or one level further
# up for a worktree under wt/.
gen="${GEN_SYNTH:-}"
for candidate in "$(cd .. && pwd)/shared" "$(cd ../.. && pwd)/shared"; do
  if [ -z "$gen" ] && [ -f "$candidate/bench/gen_synth.py" ]; then
    gen="$candidate/bench/gen_synth.py"
  fi
done
runs="${BENCH_RUNS:-3}"
for tool in python3 patch git /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install -y patch time git)" >&2; exit 2; }
done
[ -f "$gen" ] || { echo "bench: gen_synth.py not found (set GEN_SYNTH)" >&2; exit 2; }

work="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# apply-patch keeps its undo history and audit log in the user's state directory outside a
# git work tree: keep that out of $HOME.
export XDG_STATE_HOME="$scratch/state"

cargo build --release --quiet
bin="$root/target/release/apply-patch"

if [ ! -f "$work/full/big.txt" ]; then
  mkdir -p "$work/full"
  python3 "$gen" --out "$work/full" >/dev/null
fi
if [ ! -f "$work/small/big.txt" ]; then
  mkdir -p "$work/small"
  python3 "$gen" --out "$work/small" --lines 50000 --hunks 500 >/dev/null
fi

# measure TOOL DIR INPUT DIFF EXPECTED -> "seconds kilobytes" (best time of $runs; its memory)
measure() {
  local tool="$1" dir="$2" input="$3" diff="$4" expected="$5"
  local best="" best_kb="" t="$scratch/tree"
  for _ in $(seq "$runs"); do
    rm -rf "$t" && mkdir -p "$t" && cp "$dir/$input" "$t/big.txt"
    case "$tool" in
      apply-patch) cmd=("$bin" --root "$t" "$dir/$diff") ;;
      patch) cmd=(patch -s -p1 -d "$t" -i "$dir/$diff") ;;
      git) cmd=(git -C "$t" apply "$dir/$diff") ;;
    esac
    if ! /usr/bin/time -v -o "$scratch/time" "${cmd[@]}" >"$scratch/out" 2>"$scratch/err"; then
      echo "bench: $tool failed on $diff:" >&2
      cat "$scratch/err" >&2
      exit 1
    fi
    cmp -s "$t/big.txt" "$dir/$expected" || { echo "bench: $tool output differs from $expected" >&2; exit 1; }
    local wall kb
    wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$scratch/time" |
      awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')"
    kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")"
    if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best="$wall"
      best_kb="$kb"
    fi
  done
  echo "$best $best_kb"
}

printf '%-22s %-12s %9s %9s %11s %12s\n' workload tool seconds "peak MB" "time/patch" "mem/(in+diff)"
row() {
  local label="$1" dir="$2" input="$3" diff="$4" expected="$5" other="$6"
  local size
  size=$(($(stat -c %s "$dir/$input") + $(stat -c %s "$dir/$diff")))
  read -r ref_s ref_kb <<<"$(measure patch "$dir" "$input" "$diff" "$expected")"
  read -r our_s our_kb <<<"$(measure apply-patch "$dir" "$input" "$diff" "$expected")"
  for entry in "apply-patch $our_s $our_kb" "patch $ref_s $ref_kb"; do
    read -r name s kb <<<"$entry"
    awk -v l="$label" -v n="$name" -v s="$s" -v kb="$kb" -v ref="$ref_s" -v size="$size" \
      'BEGIN { r = ref > 0 ? sprintf("%.2fx", s/ref) : "n/a"; printf "%-22s %-12s %9.2f %9.1f %11s %11.2fx\n", l, n, s, kb/1024, r, kb*1024/size }'
  done
  if [ "$other" = git ]; then
    read -r git_s git_kb <<<"$(measure git "$dir" "$input" "$diff" "$expected")"
    awk -v l="$label" -v s="$git_s" -v kb="$git_kb" -v ref="$ref_s" -v size="$size" \
      'BEGIN { r = ref > 0 ? sprintf("%.2fx", s/ref) : "n/a"; printf "%-22s %-12s %9.2f %9.1f %11s %11.2fx\n", l, "git apply", s, kb/1024, r, kb*1024/size }'
  fi
}

row "1M lines, exact" "$work/full" big.txt big.diff big.expected.txt none
row "1M lines, hints +37" "$work/full" big.txt big.shift37.diff big.expected.txt none
row "1M lines, CRLF" "$work/full" big.crlf.txt big.crlf.diff big.crlf.expected.txt none
row "50k lines, exact" "$work/small" big.txt big.diff big.expected.txt git
row "50k lines, hints +37" "$work/small" big.txt big.shift37.diff big.expected.txt git

# refused LABEL DIR INPUT DIFF: apply-patch must refuse (exit 1) and leave the file as it was;
# prints its best time and memory. The refusal names which hunks would apply (the chip), so
# every hunk is assessed: this must stay about as fast as an apply.
refused() {
  local label="$1" dir="$2" input="$3" diff="$4"
  local best="" best_kb="" t="$scratch/tree" status
  for _ in $(seq "$runs"); do
    rm -rf "$t" && mkdir -p "$t" && cp "$dir/$input" "$t/big.txt"
    status=0
    /usr/bin/time -v -o "$scratch/time" "$bin" --root "$t" "$dir/$diff" >"$scratch/out" 2>"$scratch/err" || status=$?
    [ "$status" -eq 1 ] || { echo "bench: $label: expected a refusal (exit 1), got $status" >&2; cat "$scratch/err" >&2; exit 1; }
    cmp -s "$t/big.txt" "$dir/$input" || { echo "bench: $label: a refusal changed the file" >&2; exit 1; }
    local wall kb
    wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$scratch/time" |
      awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')"
    kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")"
    if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best="$wall"
      best_kb="$kb"
    fi
  done
  awk -v l="$label" -v s="$best" -v kb="$best_kb" \
    'BEGIN { printf "%-22s %-12s %9.2f %9.1f %11s %12s\n", l, "apply-patch", s, kb/1024, "-", "-" }'
}

# Re-applying the diff: the hunks with inserted lines are already applied, the pure deletions
# are not found (SPEC: a partly applied patch is refused). An unrelated file of the same size
# (every `let` spelled `var`): no hunk fits.
for size in full small; do
  [ -f "$work/$size/unrelated.txt" ] || sed 's/\blet\b/var/g' "$work/$size/big.txt" >"$work/$size/unrelated.txt"
done
refused "1M lines, re-applied" "$work/full" big.expected.txt big.diff
refused "1M lines, unrelated" "$work/full" unrelated.txt big.diff
refused "50k lines, re-applied" "$work/small" big.expected.txt big.diff
refused "50k lines, unrelated" "$work/small" unrelated.txt big.diff
echo "targets: time/patch <= 1.00x on the 1M-line rows; peak memory < 3.00x (input + diff)"
