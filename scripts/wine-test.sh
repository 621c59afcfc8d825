#!/usr/bin/env bash
# Windows, checked under Wine: builds the library's unit tests and the integration test binary
# for x86_64-pc-windows-gnu and runs the library tests and the transaction tests (`it txn`)
# with Wine as cargo's runner. Extra arguments go to both test runs (e.g. `-- --nocapture`;
# a filter there would be added to `txn`, not narrow it). Needs the target (`rustup target add x86_64-pc-windows-gnu`), Wine and the MinGW
# linker (`apt-get install wine64 gcc-mingw-w64-x86-64`): run as root with apt-get, the
# script installs what is missing; elsewhere it says what is missing and stops with status 2.
#
# The tests that need Unix (permission bits, owners, FIFOs, the git CLI, inode numbers,
# Unix symlinks) are `#[cfg(unix)]`; README "Platforms" lists them.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu

missing() {
  echo "wine-test: $1" >&2
  exit 2
}

if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  rustup target add "$target" || missing "cannot install the Rust target $target"
fi
if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine64 gcc-mingw-w64-x86-64 >/dev/null
  fi
  command -v wine >/dev/null || missing "wine is not installed (apt-get install wine64)"
  command -v x86_64-w64-mingw32-gcc >/dev/null ||
    missing "the MinGW linker is not installed (apt-get install gcc-mingw-w64-x86-64)"
fi

# The Wine prefix under target/, with what Rust's standard library needs from it.
# shellcheck source=SCRIPTDIR/wine-env.sh
. scripts/wine-env.sh

cargo test --target "$target" --lib "$@"
cargo test --target "$target" --test it txn "$@"
