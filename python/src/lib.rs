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

use apply_patch::agent::read::{read_around, read_file, LineRange};
use apply_patch::agent::AgentState;
use apply_patch::pipeline::{self, GitMode, Mode, Target};
use apply_patch::report::Report;
use apply_patch::{Error, ErrorCode, Format};
use pyo3::prelude::*;

/// The options of `apply_patch.apply`, as the Python layer sends them (JSON, so that a new
/// option is one field here and one keyword there). Names are the command line's flags.
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Options {
    check: bool,
    index: bool,
    cached: bool,
    three_way: bool,
    conflict_markers: bool,
    diff: bool,
    reverse: bool,
    strip: Option<usize>,
    directory: Option<String>,
    include: Vec<String>,
    exclude: Vec<String>,
    recount: bool,
    unidiff_zero: bool,
    window: usize,
    fuzz: usize,
    format: Option<String>,
    strict_base: bool,
    protect: Vec<String>,
    allow_notebooks: bool,
    strict_balance: bool,
    /// `--path`: the file of every SEARCH/REPLACE block.
    path: Option<String>,
    /// `--base`: the Base of the `path` file.
    base: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        let d = pipeline::Options::default();
        Options {
            check: false,
            index: false,
            cached: false,
            three_way: false,
            conflict_markers: false,
            diff: d.diff,
            reverse: d.reverse,
            strip: d.strip,
            directory: d.directory,
            include: d.include,
            exclude: d.exclude,
            recount: d.recount,
            unidiff_zero: d.unidiff_zero,
            window: d.window,
            fuzz: d.fuzz,
            format: None,
            strict_base: d.strict_base,
            protect: d.protect,
            allow_notebooks: d.allow_notebooks,
            strict_balance: d.strict_balance,
            path: None,
            base: None,
        }
    }
}

impl Options {
    /// The pipeline's options and mode, refusing (`usage`) what the command line refuses
    /// too, with the command line's words.
    fn into_pipeline(self) -> Result<(pipeline::Options, Mode), Error> {
        let usage = |m: String| Error::new(ErrorCode::Usage, m);
        if self.window == 0 {
            return Err(usage("window must be at least 1".into()));
        }
        let format = match self.format.as_deref() {
            None => None,
            Some("agent") => Some(Format::Agent),
            Some("unified") => Some(Format::Unified),
            Some("json") => Some(Format::Json),
            Some("blocks") => Some(Format::Blocks),
            Some(other) => {
                return Err(usage(format!(
                    "unknown format {other:?}: expected \"agent\", \"unified\", \"json\" or \
                     \"blocks\""
                )))
            }
        };
        let git = self.git_mode()?;
        let mode = if self.check { Mode::Check } else { Mode::Write };
        let mut builder = pipeline::Options::builder()
            .recount(self.recount)
            .unidiff_zero(self.unidiff_zero)
            .reverse(self.reverse)
            .include(self.include)
            .exclude(self.exclude)
            .window(self.window)
            .fuzz(self.fuzz)
            .strict_base(self.strict_base)
            .protect(self.protect)
            .allow_notebooks(self.allow_notebooks)
            .strict_balance(self.strict_balance)
            .diff(self.diff)
            .git(git)
            // As the command line's plain apply: a refused patch is kept as a chip, except
            // by a check, which keeps nothing.
            .keep_chips(!self.check);
        if let Some(format) = format {
            builder = builder.format(format);
        }
        if let Some(strip) = self.strip {
            builder = builder.strip(strip);
        }
        if self.base.is_some() && self.path.is_none() {
            return Err(usage("base needs path: a Base belongs to one file".into()));
        }
        if let Some(path) = self.path {
            builder = builder.path(path);
        }
        if let Some(base) = self.base {
            builder = builder.base(base);
        }
        if let Some(directory) = self.directory {
            builder = builder.directory(directory);
        }
        Ok((builder.build(), mode))
    }

    /// The four git flags as one [`GitMode`], mapped as the command line maps them.
    fn git_mode(&self) -> Result<GitMode, Error> {
        GitMode::from_flags(
            self.index,
            self.cached,
            self.three_way,
            self.conflict_markers,
        )
    }
}

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

/// Apply (or with `check`, only plan) `patch` to the directory `root`: the report of
/// `apply-patch --json`, refusals included (the command line's plain apply, which keeps a
/// refused patch as a chip).
#[pyfunction]
fn apply(py: Python<'_>, root: PathBuf, patch: Vec<u8>, options: &str) -> String {
    let opts = serde_json::from_str::<Options>(options)
        .map_err(|e| Error::new(ErrorCode::Usage, format!("bad options: {e}")))
        .and_then(Options::into_pipeline);
    match opts {
        Ok((opts, mode)) => py.detach(|| {
            Report::from(&pipeline::apply_bytes(
                Target::Dir(&root),
                &patch,
                &opts,
                mode,
            ))
            .to_json()
        }),
        Err(e) => failure_json(e),
    }
}

/// `apply-patch read PATH [--lines A:B | --around N] --json`: the lines and the version of
/// one file, or the function (else block, else element) enclosing line N (the snapshot kept
/// for later rebases, as the command line does), or a failure.
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
        let usage = |m: &str| Error::new(ErrorCode::Usage, m.to_string());
        let out = apply_patch::agent::check_root(&root).and_then(|()| {
            // A state place that cannot be made must not stop a read (as in the CLI).
            let state = AgentState::for_root(&root).ok();
            let store = state.as_ref().map(|s| &s.snapshots);
            match (around, lines) {
                (Some(_), Some(_)) => Err(usage("give either lines or around, not both")),
                (Some(0), None) => Err(usage("around counts lines from 1")),
                (Some(line), None) => {
                    read_around(&root, &path, line, store).map(|out| to_json(&out))
                }
                (None, lines) => {
                    let range = lines
                        .as_deref()
                        .map(LineRange::parse)
                        .transpose()?
                        .unwrap_or_default();
                    read_file(&root, &path, range, store).map(|out| to_json(&out))
                }
            }
        });
        out.unwrap_or_else(failure_json)
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
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binding maps the git flags, the check and the usage refusals as the command
    /// line does (one mapping, `GitMode::from_flags`), so the Python-visible reports stay the
    /// command line's.
    #[test]
    fn options_map_as_the_command_line_maps_its_flags() {
        let cases = [
            (false, false, false, false, false),
            (true, false, false, false, false),
            (false, true, false, false, false),
            (false, false, true, false, false),
            (false, true, true, false, false),
            (false, false, false, true, false),
            (false, true, false, true, true),
            (false, false, true, true, false),
            (false, false, false, false, true),
        ];
        for (check, index, cached, three_way, conflict_markers) in cases {
            let ours = Options {
                check,
                index,
                cached,
                three_way,
                conflict_markers,
                strip: Some(2),
                ..Options::default()
            }
            .into_pipeline();
            let cli = GitMode::from_flags(index, cached, three_way, conflict_markers);
            match (ours, cli) {
                (Ok((ours, mode)), Ok(git)) => {
                    let want = if check { Mode::Check } else { Mode::Write };
                    assert_eq!((ours.git, mode), (git, want));
                    let default = pipeline::Options::default();
                    assert_eq!((ours.strip, ours.window), (Some(2), default.window));
                    assert_eq!(ours.keep_chips, !check);
                }
                (Err(ours), Err(cli)) => assert_eq!(
                    serde_json::to_string(&ours).expect("plain data"),
                    serde_json::to_string(&cli).expect("plain data")
                ),
                (ours, cli) => panic!("{ours:?} != {cli:?}"),
            }
        }
    }
}
