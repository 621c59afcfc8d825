#!/bin/sh
set -e
cd "$(dirname "$0")/.."
python3 -m pytest -q tests
