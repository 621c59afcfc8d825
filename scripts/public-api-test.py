#!/usr/bin/env python3
"""The check of scripts/public-api.py itself: a small crate whose public API is known, built
to rustdoc JSON in a temporary folder (no dependencies: a few seconds), listed by the script,
and compared with what the listing must say — a type re-exported at a second path is listed
once plus a `pub use` line, fields, variants, methods and derived impls appear under their
type, a crate-private type in a public signature is reported unnameable, and a changed
surface fails --check with the diff.

Usage: scripts/public-api-test.py
Exits 0 with a message ("skipped") where rustdoc JSON cannot be built, like the script.
"""
import contextlib
import importlib.util
import io
import json
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("public_api", HERE / "public-api.py")
public_api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(public_api)

LIB = """
mod hidden {
    /// Crate-private, yet a public function below takes it.
    pub struct Secret;
}

pub mod shapes {
    /// A point.
    #[derive(Debug, Clone, Default)]
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    impl Point {
        pub fn new(x: i32, y: i32) -> Self {
            Point { x, y }
        }
        pub(crate) fn private_helper(&self) {}
    }

    #[non_exhaustive]
    pub enum Shape<'a> {
        Dot(Point),
        Named { name: &'a str, at: Option<Point> },
    }

    pub fn open(_key: &crate::hidden::Secret) -> Result<Vec<Point>, String> {
        Ok(Vec::new())
    }
}

pub use shapes::Point;
"""

# Listed at its shortest public path (`demo::Point`), the other one a `pub use` line.
EXPECTED = [
    "pub struct demo::Point",
    "pub field demo::Point::x: i32",
    "pub field demo::Point::y: i32",
    "pub fn demo::Point::new(x: i32, y: i32) -> Self",
    "impl core::clone::Clone for demo::Point",
    "impl core::default::Default for demo::Point",
    "impl core::fmt::Debug for demo::Point",
    "pub mod demo::shapes",
    "pub use demo::shapes::Point = demo::Point",
    "#[non_exhaustive] pub enum demo::shapes::Shape<'a>",
    "pub variant demo::shapes::Shape::Dot(demo::Point)",
    "pub variant demo::shapes::Shape::Named { name: &'a str, at: Option<demo::Point> }",
    "pub fn demo::shapes::open(_key: &<unnameable demo::hidden::Secret>) -> Result<Vec<demo::Point>, String>",
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "src").mkdir()
        (root / "Cargo.toml").write_text(
            '[package]\nname = "demo"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n')
        (root / "src" / "lib.rs").write_text(LIB)
        try:
            path = public_api.build_json(root, "demo")
            api = public_api.Api(json.loads(path.read_text()))
        except public_api.Skip as why:
            print("public-api-test: skipped: %s" % why)
            return 0
        lines = api.listing()
        failures = []
        # Each expected line, and in this order (a type's lines stay together).
        at = [lines.index(line) if line in lines else -1 for line in EXPECTED]
        for line, i in zip(EXPECTED, at):
            if i < 0:
                failures.append("missing: " + line)
        found = [i for i in at if i >= 0]
        if found != sorted(found):
            failures.append("out of order: %s" % found)
        if any("private_helper" in line or "hidden::Secret" in line and "unnameable" not in line
               for line in lines):
            failures.append("a crate-private item is listed")
        if sorted(api.unnameable) != ["demo::hidden::Secret"]:
            failures.append("unnameable: %s" % sorted(api.unnameable))
        # --check: the snapshot without one line is a changed surface.
        snapshot = root / "public-api.txt"
        snapshot.write_text("".join(line + "\n" for line in lines if "Point::y:" not in line))
        public_api.SNAPSHOT = snapshot
        public_api.ROOT = root
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            status = public_api.main(["--check", "--json", str(path)])
        if status != 1 or "+pub field demo::Point::y: i32" not in buf.getvalue():
            failures.append("--check did not fail with the diff:\n" + buf.getvalue())
        if failures:
            print("public-api-test: FAILED\n" + "\n".join(failures) + "\n--- listing:\n" + "\n".join(lines))
            return 1
    print("public-api-test: ok (%d lines listed as expected)" % len(EXPECTED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
