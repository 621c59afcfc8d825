#!/usr/bin/env python3
"""MSRV check for the one toolchain CI has: every crate that a user of apply-patch compiles
(its normal and build dependencies, transitively, as Cargo.lock resolves them) must declare a
`rust-version` no newer than ours. Clippy's `incompatible_msrv` lint covers our own code (it
reads `rust-version` too and flags standard-library items stabilised after it); this covers
the dependencies. Language features newer than the MSRV are not caught by either.

Usage: scripts/msrv-check.py   (from anywhere; exits 1 naming every offending crate)
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def version_tuple(v):
    parts = [int(p) for p in v.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
    )
    packages = {p["id"]: p for p in meta["packages"]}
    root = next(p for p in meta["packages"]
                if p["name"] == "apply-patch" and p["source"] is None)
    msrv = root.get("rust_version")
    if not msrv:
        print("msrv-check: Cargo.toml declares no rust-version", file=sys.stderr)
        return 1
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    seen, todo = set(), [root["id"]]
    while todo:
        node = nodes[todo.pop()]
        for dep in node["deps"]:
            # Dev-dependencies are built only by our own tests, never by a user of the crate.
            if all(k["kind"] == "dev" for k in dep["dep_kinds"]):
                continue
            if dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
    newer = sorted(
        f'{packages[i]["name"]} {packages[i]["version"]} needs Rust {packages[i]["rust_version"]}'
        for i in seen
        if packages[i].get("rust_version")
        and version_tuple(packages[i]["rust_version"]) > version_tuple(msrv)
    )
    for line in newer:
        print(f"msrv-check: {line}, newer than rust-version {msrv}", file=sys.stderr)
    if newer:
        return 1
    print(f"msrv-check: {len(seen)} dependencies build with Rust {msrv} (rust-version)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
