#!/usr/bin/env bash
# The npm packages, tested as their users use them: stage the main package and this
# machine's platform package (npm/stage.mjs), `npm pack` both, install the two tarballs into a
# fresh project outside the repository with no Rust toolchain on PATH, and run npm/test/
# there with node:test — the JavaScript API on temporary trees, the `apply-patch` and
# `apply_patch` commands, `npx apply-patch mcp` driven by the official TypeScript MCP SDK —
# then typecheck a TypeScript consumer of the package's hand-written types with tsc.
#
# Needs node (18+) and npm, and the npm registry for the SDK, TypeScript and @types/node:
# without node or npm, or when the registry cannot be reached, it says so and exits 0
# without testing. What it keeps lives under target/npm-ci/: the staged folders, the
# tarballs, an npm cache (the second run installs from it).
#
#   scripts/npm-test.sh                        builds the release binary and tests it
#   APPLY_PATCH_NPM_BINARY=target/debug/apply-patch scripts/npm-test.sh
#                                              packages that binary instead (CI: the debug
#                                              build `cargo test` made; the same code)
#   scripts/npm-test.sh --windows              the win32-x64 package instead, from the
#                                              x86_64-pc-windows-gnu cross build, installed
#                                              with `--os=win32 --cpu=x64` and run under Wine
#                                              (see README "Packaging"; not part of CI)
#   scripts/npm-test.sh -- --test-name-pattern=undo
#                                              extra arguments after -- go to node --test
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
work="$repo/target/npm-ci"
windows=0
if [ "${1:-}" = --windows ]; then
  windows=1
  shift
fi
[ "${1:-}" = -- ] && shift

skip() {
  echo "npm-test: SKIPPED: $1: the npm packages were not built or tested"
  exit 0
}

command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are not installed"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
  skip "node $(node --version) is older than 18"
mkdir -p "$work"
export npm_config_cache="$work/npm-cache"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
if ! npm view @modelcontextprotocol/sdk@1 version --fetch-retries=1 --fetch-timeout=20000 \
  >"$work/npm-view.log" 2>&1; then
  skip "the npm registry is not reachable (npm view failed; see target/npm-ci/npm-view.log)"
fi
start=$SECONDS

# The binary, and the platform package it goes into.
if [ "$windows" = 1 ]; then
  key=win32-x64
  target=x86_64-pc-windows-gnu
  if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
    echo "npm-test: --windows needs Wine and the MinGW linker" \
      "(apt-get install wine64 gcc-mingw-w64-x86-64; see scripts/wine-test.sh)" >&2
    exit 2
  fi
  rustup target list --installed | grep -qx "$target" || rustup target add "$target"
  # shellcheck source=SCRIPTDIR/wine-env.sh
  . scripts/wine-env.sh
  [ -n "${APPLY_PATCH_NPM_BINARY:-}" ] || cargo build --locked --release --target "$target" --bin apply-patch
  binary="${APPLY_PATCH_NPM_BINARY:-target/$target/release/apply-patch.exe}"
else
  key="$(node -p 'process.platform + "-" + process.arch')"
  if [ -z "${APPLY_PATCH_NPM_BINARY:-}" ]; then
    cargo build --locked --release --bin apply-patch
  fi
  binary="${APPLY_PATCH_NPM_BINARY:-target/release/apply-patch}"
fi
[ -f "$binary" ] || { echo "npm-test: no binary at $binary" >&2; exit 2; }
# A debug build carries its debug info (about 180 MB): packed without it, as a release is.
cp "$binary" "$work/binary"
if command -v strip >/dev/null && [ "$windows" = 0 ]; then strip --strip-debug "$work/binary"; fi

rm -rf "$work/stage" "$work/dist"
mkdir -p "$work/dist"
node npm/stage.mjs main "$work/stage/apply-patch"
node npm/stage.mjs platform "$key" "$work/binary" "$work/stage/$key"
(cd "$work/dist" && npm pack --silent "$work/stage/apply-patch" "$work/stage/$key" >/dev/null)
main_tgz="$(ls "$work"/dist/apply-patch-apply-patch-*.tgz)"
platform_tgz="$(ls "$work"/dist/apply-patch-"$key"-*.tgz)"
echo "npm-test: packed $(basename "$main_tgz") ($(du -k "$main_tgz" | cut -f1) KiB) and" \
  "$(basename "$platform_tgz") ($(du -k "$platform_tgz" | cut -f1) KiB)"

# PATH without any folder that holds cargo, rustc or rustup: the user has no Rust.
clean_path=""
IFS=: read -ra folders <<<"$PATH"
for folder in "${folders[@]}"; do
  if [ -e "$folder/cargo" ] || [ -e "$folder/rustc" ] || [ -e "$folder/rustup" ]; then continue; fi
  clean_path="${clean_path:+$clean_path:}$folder"
done
if PATH="$clean_path" command -v cargo >/dev/null || ! PATH="$clean_path" command -v npm >/dev/null; then
  echo "npm-test: cannot make a PATH with npm and without cargo" >&2
  exit 2
fi

# A fresh project outside the repository, removed at the end (kept with NPM_TEST_KEEP=1).
project="$(mktemp -d "${TMPDIR:-/tmp}/apply-patch-npm-test.XXXXXX")"
[ "${NPM_TEST_KEEP:-0}" = 1 ] && echo "npm-test: the project is $project" ||
  trap 'rm -rf "$project"' EXIT
# The platform package is not on the registry before a release: `overrides` points its name at
# the tarball. Only the main package is installed; npm reaches the platform package as that
# package's optional dependency and installs it only where its os and cpu (and libc) match,
# as it will from the registry (the other platforms' packages are not found: skipped).
printf '{"name": "npm-test-project", "version": "1.0.0", "private": true,
  "overrides": {"@apply-patch/%s": "file:%s"}}\n' "$key" "$platform_tgz" >"$project/package.json"
cp npm/test/*.mjs npm/test/consumer.mts npm/test/tsconfig.json "$project/"
export XDG_STATE_HOME="$project/state" # undo records, snapshots: not the user's
cd "$project"

install=(npm install --loglevel=error --prefer-offline --fetch-retries=1 --fetch-timeout=60000)
tools=(@modelcontextprotocol/sdk@1 typescript@5 @types/node)
installed="node_modules/@apply-patch/$key/bin/$(basename "$(ls "$work/stage/$key/bin/"*)")"
if [ "$windows" = 1 ]; then
  # On this Linux machine npm must skip the Windows package; told that the machine is a
  # Windows x64 one (`--os`, `--cpu`), it must install it.
  PATH="$clean_path" "${install[@]}" "$main_tgz" "${tools[@]}"
  [ ! -e "node_modules/@apply-patch/$key" ] ||
    { echo "npm-test: npm installed the $key package on $(uname -s)" >&2; exit 1; }
  PATH="$clean_path" "${install[@]}" --os=win32 --cpu=x64
  [ -f "$installed" ] || { echo "npm-test: npm --os=win32 --cpu=x64 did not install $installed" >&2; exit 1; }
  # Node runs here on Linux: the API and the MCP server reach the Windows executable through
  # APPLY_PATCH_BINARY, a script that runs it under Wine (which has no `sh` for post-checks).
  printf '#!/bin/sh\nexec wine %s "$@"\n' "$project/$installed" >"$project/wine-apply-patch"
  chmod +x "$project/wine-apply-patch"
  export APPLY_PATCH_BINARY="$project/wine-apply-patch" APPLY_PATCH_NPM_TEST_NO_SH=1
  # The drop-in under its Windows name: a copy called apply_patch.exe, as Codex would run it.
  mkdir -p dropin && cp "$installed" dropin/apply_patch.exe && printf 'one\ntwo\n' >dropin/a.txt
  out="$(cd dropin && wine ./apply_patch.exe "$(printf '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch')" | tr -d '\r')"
  [ "$out" = "$(printf 'Success. Updated the following files:\nM a.txt')" ] ||
    { echo "npm-test: apply_patch.exe under Wine printed: $out" >&2; exit 1; }
  [ "$(cat dropin/a.txt)" = "$(printf 'one\n2')" ] || { echo "npm-test: apply_patch.exe did not apply" >&2; exit 1; }
  tests=(api.test.mjs mcp.test.mjs)
else
  PATH="$clean_path" "${install[@]}" "$main_tgz" "${tools[@]}"
  [ -f "$installed" ] || { echo "npm-test: npm did not install $installed" >&2; exit 1; }
  tests=(api.test.mjs commands.test.mjs mcp.test.mjs)
fi
export APPLY_PATCH_NPM_MAIN_TGZ="$main_tgz"
echo "npm-test: installed into a fresh project in $((SECONDS - start)) s; running the tests"

PATH="$clean_path" node --test "$@" "${tests[@]}"
PATH="$clean_path" npx tsc -p tsconfig.json
echo "npm-test: the types check; done in $((SECONDS - start)) s"
