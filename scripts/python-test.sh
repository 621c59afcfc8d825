#!/usr/bin/env bash
# The wheel, tested as its users use it: build it with maturin, install it into a fresh
# virtual environment, and run python/tests/ there (the Python API on temporary trees, the
# installed `apply-patch` command, and the pre-commit hook installed from the wheel with no
# Rust toolchain on PATH).
#
# Needs python3 (3.9+) and PyPI for the build and test tools; when PyPI cannot be reached
# (`pip download` fails) it says so and exits 0 without testing. Everything it keeps lives
# under target/python-ci/: a wheelhouse of the tools, maturin's own venv, the wheel.
#
#   scripts/python-test.sh                 release build (what is published)
#   APPLY_PATCH_WHEEL_PROFILE=dev ...      the debug profile: builds in a fraction of the
#                                          time, the same code and the same tests
#   scripts/python-test.sh -k pre_commit   extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
python="${PYTHON:-python3}"
profile="${APPLY_PATCH_WHEEL_PROFILE:-release}"
work="$repo/target/python-ci"
house="$work/wheelhouse"
mkdir -p "$house"

start=$SECONDS
if ! "$python" -m pip download --quiet --disable-pip-version-check --retries 1 --timeout 20 \
    --dest "$house" \
    maturin pytest pre-commit setuptools >"$work/pip-download.log" 2>&1; then
  echo "python-test: SKIPPED: PyPI is not reachable (pip download failed; see" \
    "target/python-ci/pip-download.log): the wheel was not built or tested"
  exit 0
fi
echo "python-test: PyPI is reachable: building the wheel ($profile profile) and testing it"

offline=(--quiet --disable-pip-version-check --no-index --find-links "$house")
if [ ! -x "$work/tools/bin/maturin" ]; then
  "$python" -m venv "$work/tools"
  "$work/tools/bin/pip" install "${offline[@]}" maturin
fi

rm -rf "$work/dist"
(cd python && "$work/tools/bin/maturin" build --profile "$profile" --out "$work/dist")
wheel="$(ls "$work"/dist/apply_patch-*.whl)"
echo "python-test: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $((SECONDS - start)) s"

# A fresh environment every run, with nothing in it but the wheel and the test tools.
rm -rf "$work/venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install "${offline[@]}" "$wheel" pytest pre-commit

# Run from outside the repository so that nothing but the installed package is importable.
cd "$work"
APPLY_PATCH_WHEELS="$work/dist $house" \
  "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$repo/python/tests" "$@"
echo "python-test: done in $((SECONDS - start)) s"
