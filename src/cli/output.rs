//! Stage: command line (output). What each command prints: reports, errors, `range`,
//! `check-balance`, `undo` and `recover` as text or JSON. Never writes the work tree.

use super::*;
use crate::usage::UsageError;
use apply_patch::quote::{escape_for_terminal, quote_for_terminal};

/// What a run prints and returns.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub status: u8,
}

impl Outcome {
    pub(crate) fn error(error: Error, json: bool, style: Style) -> Self {
        let status = error.exit_status();
        if json {
            let report = Report::failure(error, Vec::new(), Vec::new());
            return Outcome {
                stdout: report.to_json().into_bytes(),
                stderr: String::new(),
                status,
            };
        }
        Outcome {
            stdout: Vec::new(),
            stderr: error_text(&error, style),
            status,
        }
    }
}

/// Why a FILE argument of `range` / `check-balance` cannot be read as text (a missing one is
/// a usage error). The message is written once, when it becomes the boundary [`Error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FileArgError {
    #[error("{path} is a directory")]
    IsDirectory { path: String },
    /// A fifo, a socket, a device.
    #[error("{path} is {}: only regular files are read", if *fifo { "a fifo" } else { "not a regular file" })]
    NotRegular { path: String, fifo: bool },
    #[error("{path} is not UTF-8 text")]
    NotUtf8 { path: String },
}

impl FileArgError {
    fn code(&self) -> ErrorCode {
        match self {
            FileArgError::IsDirectory { .. } => ErrorCode::IsDirectory,
            FileArgError::NotRegular { .. } => ErrorCode::UnsupportedFile,
            FileArgError::NotUtf8 { .. } => ErrorCode::InvalidUtf8,
        }
    }
}

impl From<FileArgError> for Error {
    fn from(err: FileArgError) -> Error {
        let out = Error::new(err.code(), err.to_string()).caused_by(err.clone());
        match err {
            FileArgError::IsDirectory { path }
            | FileArgError::NotRegular { path, .. }
            | FileArgError::NotUtf8 { path } => out.with_path(path),
        }
    }
}

/// A text file for `range` / `check-balance`, relative to the root: `Ok(None)` when it is
/// not UTF-8. Only a regular file is read: a FIFO or device is `unsupported_file` (opened
/// without blocking, checked on the open file), never a read that waits forever.
pub(crate) fn read_text(
    root: &std::path::Path,
    file: &std::path::Path,
) -> Result<Option<String>, Error> {
    use std::io::Read as _;
    let shown = file.display().to_string();
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => UsageError::FileUnreadable {
            path: shown.clone(),
            cause: e.to_string(),
        }
        .into(),
        _ => Error::io(&shown, "cannot read", &e),
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Windows has no FIFO to block on.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut f = options.open(root.join(file)).map_err(io)?;
    let kind = f.metadata().map_err(io)?.file_type();
    if kind.is_dir() {
        return Err(FileArgError::IsDirectory { path: shown }.into());
    }
    if !kind.is_file() {
        #[cfg(unix)]
        let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&kind);
        #[cfg(not(unix))]
        let fifo = false;
        return Err(FileArgError::NotRegular { path: shown, fifo }.into());
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok(String::from_utf8(bytes).ok())
}

/// A JSON object with `ok` and `error` added (the shape of every `--json` answer).
pub(crate) fn json_object(value: impl serde::Serialize, ok: bool) -> Vec<u8> {
    let mut value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("ok".into(), ok.into());
        map.insert("error".into(), serde_json::Value::Null);
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

pub(crate) fn range_outcome(
    opts: &Options,
    file: &std::path::Path,
    line: usize,
    kind: Option<structure::Kind>,
    lang: Option<structure::Lang>,
) -> Outcome {
    let shown = file.display().to_string();
    let found = read_text(&opts.root, file).and_then(|text| {
        let text = text.ok_or_else(|| {
            Error::from(FileArgError::NotUtf8 {
                path: shown.clone(),
            })
        })?;
        let lang = lang.unwrap_or_else(|| structure::Lang::from_path(file));
        structure::range(&text, line, kind, lang)
            .map_err(|e| Error::from(e).with_unnamed_path(&shown))
    });
    match found {
        Ok(range) => {
            let report = structure::RangeReport { path: shown, range };
            Outcome {
                stdout: if opts.json {
                    json_object(&report, true)
                } else {
                    report.render().into_bytes()
                },
                ..Outcome::default()
            }
        }
        Err(e) => Outcome::error(e, opts.json, opts.style),
    }
}

pub(crate) fn balance_outcome(
    opts: &Options,
    files: &[PathBuf],
    lang: Option<structure::Lang>,
) -> Outcome {
    let mut checked = Vec::new();
    for file in files {
        let text = match read_text(&opts.root, file) {
            Ok(t) => t,
            Err(e) => return Outcome::error(e, opts.json, opts.style),
        };
        let lang = lang.unwrap_or_else(|| structure::Lang::from_path(file));
        let balance = match text {
            Some(text) => structure::check_balance(&text, lang),
            None => structure::Balance::NotChecked {
                reason: "not UTF-8 text".into(),
            },
        };
        checked.push(structure::FileBalance {
            path: file.display().to_string(),
            lang,
            balance,
        });
    }
    let report = structure::BalanceReport::new(checked);
    Outcome {
        stdout: if opts.json {
            json_object(&report, report.ok)
        } else {
            report.render().into_bytes()
        },
        status: if report.ok { 0 } else { 1 },
        ..Outcome::default()
    }
}

/// `convert`. Hunks that apply in sequence (SEARCH/REPLACE blocks) have no line numbers of
/// the file they end in: their unified form is the diff they make to the files under `root`
/// (planned, nothing written).
pub(crate) fn convert(
    root: &std::path::Path,
    input: &[u8],
    parse: &ParseOptions,
    to: ConvertTo,
) -> Result<Vec<u8>, Error> {
    let set = apply_patch::parse::parse(input, parse)?;
    if to == ConvertTo::Unified && set.rules.sequential {
        let tree = apply_patch::tree::DiskTree::new(root)?;
        let mut opts = apply_patch::pipeline::Options::builder()
            .diff(true)
            .format(set.format);
        if let Some(path) = &parse.path {
            opts = opts.path(path.clone());
        }
        if let Some(base) = &parse.base {
            opts = opts.base(base.clone());
        }
        let plan = apply_patch::apply::plan(&tree, input, &opts.build()).map_err(|r| r.error)?;
        return Ok(plan.diff.unwrap_or_default().into_bytes());
    }
    let to = match to {
        ConvertTo::Unified => Format::Unified,
        ConvertTo::Agent => Format::Agent,
    };
    apply_patch::render::convert(input, parse, to)
}

/// `undo` and `recover`: their own report as JSON (plus `ok` and `error`), or a short
/// human summary.
pub(crate) fn txn_outcome<R: serde::Serialize>(
    result: Result<R, Error>,
    opts: &Options,
    human: impl Fn(&R) -> String,
) -> Outcome {
    let report = match result {
        Ok(r) => r,
        Err(e) => return Outcome::error(e, opts.json, opts.style),
    };
    if !opts.json {
        return Outcome {
            stdout: human(&report).into_bytes(),
            ..Outcome::default()
        };
    }
    let mut value = serde_json::to_value(&report).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("ok".into(), true.into());
        map.insert("error".into(), serde_json::Value::Null);
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    Outcome {
        stdout: text.into_bytes(),
        ..Outcome::default()
    }
}

pub(crate) fn undo_text(r: &txn::UndoReport) -> String {
    let mut s = warnings_text(&r.recovered);
    match &r.undone {
        None => s.push_str("nothing to undo\n"),
        Some(id) => {
            s.push_str(&format!("undid transaction {id}\n"));
            for f in &r.files {
                s.push_str(&format!("restored {}\n", quote_for_terminal(f)));
            }
        }
    }
    s + &warnings_text(&r.warnings)
}

pub(crate) fn recover_text(r: &txn::RecoverReport) -> String {
    let mut s = match (&r.id, r.action) {
        (Some(id), Some(txn::RecoverAction::RolledBack)) => {
            format!("rolled back interrupted transaction {id}\n")
        }
        (Some(id), Some(txn::RecoverAction::Completed)) => {
            format!("completed interrupted transaction {id}\n")
        }
        (Some(id), Some(txn::RecoverAction::CleanedUp)) => {
            format!("finished removing the journal folder of transaction {id}\n")
        }
        _ => "nothing to recover\n".to_string(),
    };
    for f in &r.restored {
        s.push_str(&format!("restored {}\n", quote_for_terminal(f)));
    }
    for f in &r.conflicts {
        s.push_str(&format!(
            "left as found (changed after the crash): {}\n",
            quote_for_terminal(f)
        ));
    }
    for b in &r.blocked {
        s.push_str(&format!("{}\n", crate::txn::blocked_text(b)));
    }
    if let Some(kept) = &r.kept {
        s.push_str(&format!(
            "journal and backups kept in {}\n",
            quote_for_terminal(&kept.display().to_string())
        ));
    }
    s + &warnings_text(&r.warnings)
}

pub(crate) fn warnings_text(warnings: &[txn::TxnWarning]) -> String {
    warnings
        .iter()
        .map(|w| format!("warning[{}]: {}\n", w.code, escape_for_terminal(&w.message)))
        .collect()
}
