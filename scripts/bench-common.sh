# Sourced by scripts/bench.sh and scripts/bench-real.sh after they set `name` (for messages)
# and `root` (the checkout): the tools both need, a scratch folder removed on exit, the state
# directory kept out of $HOME, and `pick_bin`, which sets the apply-patch binary to time
# (`bin`) once the script's own checks have passed.

# shared_dir SUBPATH: SUBPATH under ../shared beside the checkout, or one level further up
# (a worktree under wt/); empty when neither exists.
shared_dir() {
  local candidate
  for candidate in "$(cd "$root/.." && pwd)/shared" "$(cd "$root/../.." && pwd)/shared"; do
    if [ -e "$candidate/$1" ]; then
      echo "$candidate/$1"
      return
    fi
  done
}

for tool in python3 patch git /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$name: $tool is missing (apt-get install -y patch time git)" >&2; exit 2; }
done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# apply-patch keeps its undo history and audit log in the user's state directory outside a
# git work tree: keep that out of $HOME.
export XDG_STATE_HOME="$scratch/state"

# BENCH_BIN, else this checkout's release build (built now).
pick_bin() {
  if [ -n "${BENCH_BIN:-}" ]; then
    bin="$BENCH_BIN"
  else
    cargo build --release --quiet
    bin="$root/target/release/apply-patch"
  fi
}
