#!/usr/bin/env bash
# Side-by-side benchmark of the apply-patch binary (release build) against GNU patch and
# `git apply` on real release diffs, and on the small edit agents make all day.
#
# Real rows: each workload is a BEFORE tree, an AFTER tree and a diff between them (the fd
# and ripgrep release diffs of ../shared/bench/real, see its README; more with BENCH_REAL).
# Each run copies BEFORE afresh, writes the copy back (`sync`, untimed), applies the diff
# with one tool, and checks the result against AFTER (bytes and exec bits, no extra file).
# One-line row: a git checkout of the ripgrep tree (made once), a one-line diff of one file
# applied and then reverted (`-R`) by each tool; the time of the pair is reported, for
# apply-patch both in its default (full durability: fsync at each durability point) and with
# `--durability atomic` (nothing flushed; all or nothing against a killed process only), and
# through the MCP server, as an agent drives it: "mcp" (full durability) and "mcp atomic".
# An agent keeps one `apply-patch mcp` running for its session, so there the pair is two
# `apply_patch` calls to a warm server, no process start: scripts/mcp-oneline.py starts one
# server per mode before the timed runs (initialize, a `read` of the file as the server's
# default policy requires, 3 untimed pairs) and keeps them idle while the other tools take
# their turn; at each of its turns it times ONE pair (first request written to second reply
# read, inside the client) and checks every reply, and the script checks the work tree after
# it as after every other tool's pair. The MCP rows are skipped with a message when python3
# is missing or the binary has no `mcp` command. With them, two runs of `true` are timed the
# command-line way (`date` and `/usr/bin/time` around each), turn about with the rest, and
# printed under the row: the floor of any command-line pair here, which the MCP pairs, timed
# inside the client, do not carry.
#
# The tools run turn about (GNU patch, apply-patch, git apply, then again), BENCH_RUNS times
# each, so that a shared machine's changing load falls on all of them alike; time is the wall
# clock around each run, reported as the best and the median run with their ratios to the
# reference tool (GNU patch for the real rows, `git apply` for the one-line row); memory is
# the peak resident set size from `/usr/bin/time -v` (the largest of the runs).
#
# Usage: scripts/bench-real.sh        (BENCH_RUNS=N runs per measurement, default 11;
#                                      BENCH_REAL_DIR=DIR the real workloads, default
#                                      ../shared/bench/real;
#                                      BENCH_REAL="LABEL:BEFORE:AFTER:DIFF ..." more rows
#                                      (any before tree, after tree and diff; no spaces);
#                                      BENCH_GIT_REPO=REPO adds git's release diffs, made
#                                      from REPO (a clone or bare mirror of git.git) by
#                                      scripts/git-release-triple.py: BENCH_GIT_PAIRS, default
#                                      "v2.44.0:v2.45.0 v2.45.0:v2.50.0 v2.30.0:v2.50.0";
#                                      BENCH_GIT_DIR=DIR keeps the made trees for reuse;
#                                      BENCH_WARM=N commits before a row's timed runs (20);
#                                      BENCH_SKIP_BUILTIN=1 leaves out the fd and ripgrep rows;
#                                      BENCH_BIN=PATH another apply-patch binary;
#                                      BENCH_BASE=PATH adds an older binary's rows, turn
#                                      about with the others, to compare;
#                                      BENCH_ATOMIC=1 adds apply-patch with
#                                      --durability atomic to the real rows (the
#                                      one-line row always has it);
#                                      BENCH_FSYNC=1 adds apply-patch with
#                                      APPLY_PATCH_DURABILITY=fsync (an fsync per object
#                                      instead of one syncfs);
#                                      BENCH_ONLY=real|oneline one part only;
#                                      the one-line row times each command-line pair by
#                                      bash's clock around the two runs alone, as the MCP
#                                      pairs are timed (peak memory from one untimed pair
#                                      per tool); BENCH_BARE=0 times them through `date`
#                                      and `/usr/bin/time` instead, which adds ~3.5 ms to
#                                      every pair and so pulls the ratios towards 1)
# Needs python3, GNU patch, GNU time and git: `apt-get install -y patch time git`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

name=bench-real
# shellcheck source=SCRIPTDIR/bench-common.sh
. "$root/scripts/bench-common.sh"
real="${BENCH_REAL_DIR:-$(shared_dir bench/real)}"
[ -d "$real" ] || { echo "bench-real: the real workloads were not found (set BENCH_REAL_DIR)" >&2; exit 2; }
pick_bin
runs="${BENCH_RUNS:-11}"
only="${BENCH_ONLY:-}"

# Every regular file and symlink under DIR with its exec bit and content hash, one a line:
# two trees are the same when these listings are.
listing() {
  python3 - "$1" <<'PY'
import hashlib, os, stat, sys
top = sys.argv[1]
for folder, dirs, files in os.walk(top):
    dirs[:] = sorted(d for d in dirs if not (folder == top and d == ".git"))
    for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
        path = os.path.join(folder, name)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            data = os.readlink(path).encode("utf-8", "surrogateescape")
        elif stat.S_ISREG(st.st_mode):
            data = open(path, "rb").read()
        else:
            continue
        rel = os.path.relpath(path, top).encode("utf-8", "surrogateescape")
        sys.stdout.buffer.write(b"%s %d %s\n" % (rel, (st.st_mode & 0o100) != 0,
                                                  hashlib.sha1(data).hexdigest().encode()))
PY
}

# timed OUT_SAMPLES TOOL CMD... -> appends "TOOL micros kilobytes" for one run of CMD.
timed() {
  local samples="$1" tool="$2" start end
  shift 2
  start=$(date +%s%N)
  if ! /usr/bin/time -v -o "$scratch/time" "$@" >"$scratch/out" 2>"$scratch/err"; then
    echo "bench-real: $tool failed: $*" >&2
    cat "$scratch/err" >&2
    exit 1
  fi
  end=$(date +%s%N)
  echo "$tool $(( (end - start) / 1000 )) $(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time")" >>"$samples"
}

# report LABEL REFERENCE SAMPLES: best, median, peak memory and the ratios to REFERENCE.
report() {
  python3 - "$@" <<'PY'
import statistics, sys
label, ref, path = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for line in open(path):
    tool, micros, kb = line.split()
    runs.setdefault(tool, []).append((int(micros) / 1e6, int(kb)))
def stats(tool):
    times = [t for t, _ in runs[tool]]
    return min(times), statistics.median(times), max(kb for _, kb in runs[tool])
ref_best, ref_med, _ = stats(ref)
names = {"apply-patch": "apply-patch", "atomic": "... atomic", "fsync": "... fsync",
         "base": "BENCH_BASE", "mcp": "mcp", "mcp-atomic": "mcp atomic",
         "patch": "GNU patch", "git": "git apply"}
for tool in ("apply-patch", "atomic", "fsync", "base", "mcp", "mcp-atomic", "patch", "git"):
    if tool in runs:
        best, med, kb = stats(tool)
        print("%-26s %-12s %8.4f %8.4f %8.1f %9.2fx %9.2fx" % (
            label, names[tool], best, med, kb / 1024, best / ref_best, med / ref_med))
PY
}

tools=(patch apply-patch)
[ -n "${BENCH_ATOMIC:-}" ] && tools+=(atomic)
[ -n "${BENCH_FSYNC:-}" ] && tools+=(fsync)
[ -n "${BENCH_BASE:-}" ] && tools+=(base)
tools+=(git)

printf '%-26s %-12s %8s %8s %8s %10s %10s\n' workload tool best median "peak MB" "best/ref" "med/ref"

# real LABEL BEFORE AFTER DIFF: the three tools turn about on fresh copies of BEFORE.
real_row() {
  local label="$1" before="$2" after="$3" diff="$4" t="$scratch/tree" samples="$scratch/samples"
  listing "$after" >"$scratch/expected"
  : >"$samples"
  # apply-patch keeps the last 20 transactions of a root for undo and removes the oldest at
  # each commit: measure it in that steady state, not in the cheaper first 20 commits.
  for _ in $(seq "${BENCH_WARM:-20}"); do
    rm -rf "$t" && cp -r "$before" "$t" && chmod -R u+w "$t"
    "$bin" --root "$t" "$diff" >/dev/null 2>&1 || { echo "bench-real: apply-patch failed on $diff" >&2; exit 1; }
  done
  for _ in $(seq "$runs"); do
    for tool in "${tools[@]}"; do
      rm -rf "$t" && cp -r "$before" "$t" && chmod -R u+w "$t"
      sync
      case "$tool" in
        apply-patch) timed "$samples" "$tool" "$bin" --root "$t" "$diff" ;;
        atomic) timed "$samples" "$tool" "$bin" --durability atomic --root "$t" "$diff" ;;
        fsync) timed "$samples" "$tool" env APPLY_PATCH_DURABILITY=fsync "$bin" --root "$t" "$diff" ;;
        base) timed "$samples" "$tool" "$BENCH_BASE" --root "$t" "$diff" ;;
        patch) timed "$samples" "$tool" patch -s -p1 -d "$t" -i "$diff" ;;
        git) timed "$samples" "$tool" git -C "$t" apply "$diff" ;;
      esac
      listing "$t" >"$scratch/got"
      cmp -s "$scratch/got" "$scratch/expected" || { echo "bench-real: $tool's result differs from $after" >&2; diff "$scratch/expected" "$scratch/got" | head >&2; exit 1; }
    done
  done
  report "$label" patch "$samples"
  echo "  (load average at the row's end: $(cut -d' ' -f1-3 /proc/loadavg))"
}

# git's own release diffs (thousands of files, renames), made once from BENCH_GIT_REPO.
git_rows() {
  local dir="${BENCH_GIT_DIR:-$scratch/git}" pair from to out
  if [ -z "${BENCH_GIT_REPO:-}" ]; then
    echo "bench-real: no git release rows (set BENCH_GIT_REPO to a clone of git.git)" >&2
    return
  fi
  for pair in ${BENCH_GIT_PAIRS:-v2.44.0:v2.45.0 v2.45.0:v2.50.0 v2.30.0:v2.50.0}; do
    from="${pair%%:*}" to="${pair#*:}" out="$dir/$from--$to"
    if [ ! -f "$out/diff" ]; then
      rm -rf "$out"
      python3 "$root/scripts/git-release-triple.py" "$BENCH_GIT_REPO" "$from" "$to" "$out" >&2
    fi
    real_row "git $from -> $to" "$out/before" "$out/after" "$out/diff"
  done
}

if [ "$only" != oneline ]; then
  if [ -z "${BENCH_SKIP_BUILTIN:-}" ]; then
    real_row "fd 8.7.1 -> 9.0.0" "$real/fd-v8.7.1--v9.0.0/before" "$real/fd-v8.7.1--v9.0.0/after" "$real/fd-v8.7.1--v9.0.0.diff"
    real_row "ripgrep 13 -> 14" "$real/rg-13.0.0--14.0.0/before" "$real/rg-13.0.0--14.0.0/after" "$real/rg-13.0.0--14.0.0.diff"
    real_row "ripgrep 13 -> 14, renames" "$real/rg-13.0.0--14.0.0/before" "$real/rg-13.0.0--14.0.0/after" "$real/rg-13.0.0--14.0.0.M.diff"
  fi
  for spec in ${BENCH_REAL:-}; do
    IFS=: read -r label before after diff <<<"$spec"
    real_row "$label" "$before" "$after" "$diff"
  done
  git_rows
fi

# The one-line edit: a real checkout (the ripgrep 14 tree, committed once), a one-line diff
# of crates/core/main.rs applied and reverted by each tool in turn; the pair is timed.
oneline_row() {
  local repo="$scratch/checkout" samples="$scratch/samples" diff="$scratch/oneline.diff" f=crates/core/main.rs
  local rdiff="$scratch/oneline.R.diff"
  cp -r "$real/rg-13.0.0--14.0.0/after" "$repo" && chmod -R u+w "$repo"
  git -C "$repo" init -q && git -C "$repo" add -A
  git -C "$repo" -c user.email=bench@example.com -c user.name=bench commit -qm base
  sed -i '3s/$/ \/\/ edited/' "$repo/$f"
  git -C "$repo" diff >"$diff"
  git -C "$repo" diff -R >"$rdiff" # the MCP tool has no -R: the revert is its own diff
  git -C "$repo" checkout -q "$f"
  sync
  : >"$samples"
  # pair TOOL: TOOL applies the diff, then reverts it; timed together; the file must be back.
  # pair TOOL [OUT]: as above; the sample goes to OUT (default the row's samples).
  pair() {
    local tool="$1" out="${2:-$samples}" start end kb1 kb2 fwd rev
    case "$tool" in
      mcp | mcp-atomic) mcp_pair "$tool"; return ;;
      harness) fwd=("$(type -P true)"); rev=("${fwd[@]}") ;; # a process, not the builtin
      apply-patch) fwd=("$bin" "$diff"); rev=("$bin" -R "$diff") ;;
      atomic) fwd=("$bin" --durability atomic "$diff"); rev=("$bin" --durability atomic -R "$diff") ;;
      fsync) fwd=(env APPLY_PATCH_DURABILITY=fsync "$bin" "$diff"); rev=(env APPLY_PATCH_DURABILITY=fsync "$bin" -R "$diff") ;;
      base) fwd=("$BENCH_BASE" "$diff"); rev=("$BENCH_BASE" -R "$diff") ;;
      patch) fwd=(patch -s -p1 -i "$diff"); rev=(patch -s -R -p1 -i "$diff") ;;
      git) fwd=(git apply "$diff"); rev=(git apply -R "$diff") ;;
    esac
    if [ "${BENCH_BARE:-1}" != 0 ] && [ "$out" = "$samples" ]; then
      bare_pair "$tool"
      return
    fi
    start=$(date +%s%N)
    /usr/bin/time -v -o "$scratch/time1" "${fwd[@]}" >/dev/null 2>"$scratch/err" || { echo "bench-real: $tool failed" >&2; cat "$scratch/err" >&2; exit 1; }
    /usr/bin/time -v -o "$scratch/time2" "${rev[@]}" >/dev/null 2>"$scratch/err" || { echo "bench-real: $tool -R failed" >&2; cat "$scratch/err" >&2; exit 1; }
    end=$(date +%s%N)
    kb1=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time1")
    kb2=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time2")
    echo "$tool $(( (end - start) / 1000 )) $(( kb1 > kb2 ? kb1 : kb2 ))" >>"$out"
    reverted "$tool"
  }
  # bare_pair TOOL (BENCH_BARE, with pair's fwd and rev): the two runs alone between two
  # readings of bash's own clock; the peak memory of TOOL's untimed pair before the rounds.
  bare_pair() {
    local start end
    start=${EPOCHREALTIME/[.,]/}
    "${fwd[@]}" >/dev/null 2>"$scratch/err" || { echo "bench-real: $1 failed" >&2; cat "$scratch/err" >&2; exit 1; }
    "${rev[@]}" >/dev/null 2>"$scratch/err" || { echo "bench-real: $1 -R failed" >&2; cat "$scratch/err" >&2; exit 1; }
    end=${EPOCHREALTIME/[.,]/}
    echo "$1 $(( 10#$end - 10#$start )) ${peak[$1]}" >>"$samples"
    reverted "$1"
  }
  reverted() {
    [ -z "$(git status --porcelain)" ] || { echo "bench-real: $1 did not revert the edit" >&2; git status --short >&2; exit 1; }
  }
  # mcp_pair TOOL: one pair timed by the client on TOOL's server (see the header).
  mcp_pair() {
    local micros kb
    echo "$1" >&"${MCP[1]}"
    if ! read -r -t 120 micros kb <&"${MCP[0]}" || [ -z "$kb" ]; then
      echo "bench-real: $1 failed (scripts/mcp-oneline.py's message is above)" >&2
      exit 1
    fi
    echo "$1 $micros $kb" >>"$samples"
    reverted "$1"
  }
  (
    cd "$repo"
    for _ in $(seq 20); do "$bin" "$diff" >/dev/null && "$bin" -R "$diff" >/dev/null; done
    local -a mcp_tools=()
    local ready=""
    if command -v python3 >/dev/null && "$bin" mcp --help >/dev/null 2>&1; then
      mcp_tools=(mcp mcp-atomic)
      coproc MCP { exec python3 "$root/scripts/mcp-oneline.py" "$bin" "$diff" --reverse "$rdiff" --serve mcp=full --serve mcp-atomic=atomic; }
      read -r -t 120 ready <&"${MCP[0]}" || true
      if [ "$ready" != ready ]; then
        echo "bench-real: the MCP servers did not start (scripts/mcp-oneline.py's message is above)" >&2
        exit 1
      fi
    else
      echo "bench-real: no MCP rows (python3 is missing, or $bin has no mcp command)" >&2
    fi
    # The default and the opt-in mode side by side, then the MCP server in both, turn about
    # with the others.
    local -a row_tools=()
    for tool in "${tools[@]}"; do
      [ "$tool" = atomic ] && continue # added right after apply-patch
      row_tools+=("$tool")
      [ "$tool" = apply-patch ] && row_tools+=(atomic "${mcp_tools[@]}")
    done
    # The command-line pairs are timed from outside, through `date` and `/usr/bin/time`; the
    # MCP pairs inside the client. A pair of `true` timed the outside way, turn about with
    # the rest, shows what that harness alone adds to the other rows.
    [ "${#mcp_tools[@]}" -gt 0 ] && row_tools+=(harness)
    local -A peak=()
    if [ "${BENCH_BARE:-1}" != 0 ]; then
      [ -n "${EPOCHREALTIME:-}" ] || { echo "bench-real: timing a bare pair needs bash 5 (EPOCHREALTIME); set BENCH_BARE=0" >&2; exit 2; }
      for tool in "${row_tools[@]}"; do
        case "$tool" in mcp*) continue ;; esac
        pair "$tool" "$scratch/memory"
        peak[$tool]=$(awk -v t="$tool" '$1 == t {kb = $3} END {print kb}' "$scratch/memory")
      done
    fi
    for _ in $(seq "$runs"); do
      for tool in "${row_tools[@]}"; do pair "$tool"; done
    done
    if [ "${#mcp_tools[@]}" -gt 0 ]; then
      # shellcheck disable=SC2153 # MCP_PID is set by coproc
      local mcp_pid="$MCP_PID" mcp_in="${MCP[1]}"
      exec {mcp_in}>&- # end of input: the client stops its servers and checks they exit 0
      wait "$mcp_pid" || { echo "bench-real: scripts/mcp-oneline.py failed at its end" >&2; exit 1; }
    fi
  )
  report "one-line edit + revert" git "$samples"
  if grep -q '^harness ' "$samples"; then
    local floor
    floor=$(awk '$1 == "harness" {print $2}' "$samples" | sort -n |
      awk '{t[NR] = $1} END {printf "%.4f s best, %.4f s median", t[1] / 1e6, (t[int((NR + 1) / 2)] + t[int(NR / 2) + 1]) / 2e6}')
    if [ "${BENCH_BARE:-1}" != 0 ]; then
      echo "  (the command-line and git apply pairs are timed by bash's clock around"
      echo "   the two runs alone, memory from an untimed pair each: two runs of \`true\` took"
    else
      echo "  (BENCH_BARE=0: the command-line and git apply pairs are timed from outside, through date and"
      echo "   /usr/bin/time: two runs of \`true\` timed so took"
    fi
    echo "   $floor; the MCP pairs, timed in the client, start no process)"
  fi
  echo "  (load average at the row's end: $(cut -d' ' -f1-3 /proc/loadavg))"
}

if [ "$only" != real ]; then
  oneline_row
fi
echo "targets: real rows apply-patch/GNU patch <= 1.00x; one-line edit apply-patch/git apply <= 1.00x (ratios: time / the reference tool's)"
