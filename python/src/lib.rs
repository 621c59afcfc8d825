//! `apply_patch._native`: the wheel's bridge to the library, kept thin on purpose. Every
//! function takes plain values, calls one public library function and returns its result as
//! the JSON text the command line prints with `--json`; the Python package
//! (`python/apply_patch/__init__.py`) turns that into dicts and `ApplyPatchError`s. When the
//! library's entry points change, only the few calls below move.
//!
//! The GIL is released while the library works, so other Python threads run meanwhile.

// `apply_patch::Error` is one rich shape shared by every stage (SPEC §8).
#![allow(clippy::result_large_err)]

use std::ffi::OsString;
use std::path::PathBuf;

use apply_patch::agent::read::LineRange;
use apply_patch::pipeline::read::{ReadSetup, ReadWhat};
use apply_patch::pipeline::{self, AgentReport, ConfirmReport, FrontEnd, RawOptions, Target};
use apply_patch::report::Report;
use apply_patch::{Error, ErrorCode};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A failure in the shape of `--json`'s: `{"ok": false, "files": [], "warnings": [],
/// "error": {...}}`.
fn failure_json(error: Error) -> String {
    Report::failure(error, Vec::new(), Vec::new()).to_json()
}

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| {
        failure_json(Error::new(
            ErrorCode::Usage,
            format!("cannot serialise: {e}"),
        ))
    })
}

/// Apply (or with `check`, only plan; with `preview`, keep for `confirm`) `patch` to the
/// directory `root`: the report of `apply-patch --json` with the same options, refusals
/// included. `options` is the JSON of [`RawOptions`] (the Python keywords are its fields):
/// every rule is the library's, decided in [`RawOptions::resolve`].
#[pyfunction]
fn apply(py: Python<'_>, root: PathBuf, patch: Vec<u8>, options: &str) -> String {
    let opts = serde_json::from_str::<RawOptions>(options)
        .map_err(|e| Error::new(ErrorCode::Usage, format!("bad options: {e}")))
        .and_then(|mut raw| {
            raw.front_end = FrontEnd::Python;
            raw.resolve()
        });
    match opts {
        Ok((opts, mode)) => py.detach(|| {
            let outcome = pipeline::apply_bytes(Target::Dir(&root), &patch, &opts, mode);
            AgentReport::of(&outcome).to_json()
        }),
        Err(e) => failure_json(e),
    }
}

/// `apply-patch read PATH [--lines A:B | --around N] --json`: the library's one `read`, which
/// recovers a crashed transaction first and keeps the snapshot later rebases merge from.
#[pyfunction]
#[pyo3(signature = (root, path, lines=None, around=None))]
fn read(
    py: Python<'_>,
    root: PathBuf,
    path: String,
    lines: Option<String>,
    around: Option<usize>,
) -> String {
    py.detach(|| {
        let what = match (around, lines) {
            (Some(_), Some(_)) => Err(Error::new(
                ErrorCode::Usage,
                "give either lines or around, not both",
            )),
            (Some(line), None) => Ok(ReadWhat::Around(line)),
            (None, lines) => lines
                .as_deref()
                .map(LineRange::parse)
                .transpose()
                .map(|r| ReadWhat::Lines(r.unwrap_or_default())),
        };
        let setup = ReadSetup::for_front_end(FrontEnd::Python);
        let out = what.and_then(|what| pipeline::read::read(&root, &path, what, &setup));
        match out {
            Ok(done) => to_json(&done),
            Err(e) => failure_json(e.for_front_end(FrontEnd::Python)),
        }
    })
}

/// `apply-patch confirm ID --json`: apply the preview `id` kept by `apply(..., preview=True)`
/// if nothing it touches has changed since.
#[pyfunction]
fn confirm(py: Python<'_>, root: PathBuf, id: String) -> String {
    py.detach(|| {
        if let Err(e) = apply_patch::agent::check_root(&root) {
            return failure_json(e);
        }
        let mut report = ConfirmReport::of(&id, &pipeline::confirm::confirm(&root, &id, None));
        if let Some(e) = report.error.as_mut() {
            e.set_front_end(FrontEnd::Python);
        }
        to_json(&report)
    })
}

/// `apply-patch undo --json`: revert the last applied patch of `root`.
#[pyfunction]
fn undo(py: Python<'_>, root: PathBuf) -> String {
    py.detach(|| match apply_patch::transaction::undo(&root) {
        Ok(report) => to_json(&report),
        Err(e) => failure_json(e),
    })
}

/// A patch file named by a path (`apply(root, pathlib.Path(...))`), read by the command
/// line's one reader: a regular file only, opened without blocking, within the 1 GiB limit
/// (a FIFO, a device or a folder is a `usage` refusal at once). Returns the bytes, or the
/// failure's JSON.
#[pyfunction]
fn read_patch_file(py: Python<'_>, path: PathBuf) -> (Option<Py<PyBytes>>, Option<String>) {
    match py.detach(|| apply_patch::patch_file::read_patch_file(&path)) {
        Ok(bytes) => (Some(PyBytes::new(py, &bytes).unbind()), None),
        Err(mut e) => {
            e.set_front_end(FrontEnd::Python);
            (None, Some(failure_json(e)))
        }
    }
}

/// The whole command line in this process (argv\[0\] first); returns the exit status.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| apply_patch::run_cli(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(undo, m)?)?;
    m.add_function(wrap_pyfunction!(confirm, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(read_patch_file, m)?)?;
    Ok(())
}
