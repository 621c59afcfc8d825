//! Stage: orchestration (the formatter hook). `--formatter GLOB=CMD`: after the plan, each
//! file the run writes (added, modified, or the new path of a rename or copy — never a
//! deletion) whose path matches GLOB is piped through CMD (`sh -c CMD` in the root, the
//! planned bytes on its standard input, the formatted bytes read from its standard output,
//! killed after its timeout), and the plan takes the formatted bytes: they are what the
//! transaction writes, what the report's diff, hashes, line counts and snippet show, and what
//! an undo reverts. A command that fails, times out or cannot run refuses the whole patch
//! (`formatter_failed`, its standard error's tail in the details); nothing is written. The
//! first formatter whose glob matches a path formats it. Runs only commands the caller named;
//! writes nothing itself.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use super::hooks::{Facts, Hook};
use super::sink::Run;
use super::source::Planned;
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::guard::Globs;
use crate::report::{FileReport, Snippet};
use crate::shell::tail;
use crate::tree::Tree;
use crate::txn::{NewState, Snapshot};
use crate::usage::UsageError;

/// How long one formatter run may take before it is killed (the post-check's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The snippet's context and its largest region, as the planner's.
const SNIPPET_CONTEXT: usize = 3;
const SNIPPET_MAX_LINES: usize = 200;

/// The variable a formatter finds the root-relative path of the file in (for formatters that
/// choose their rules by the file's name, e.g. `prettier --stdin-filepath "$APPLY_PATCH_PATH"`).
pub const PATH_ENV: &str = "APPLY_PATCH_PATH";

/// `--formatter GLOB=CMD`: the written files matching `glob` are piped through `command`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Formatter {
    /// A glob as `--protect` takes them: one without `/` matches the file's name anywhere.
    pub glob: String,
    /// Run with `sh -c` in the root: the planned bytes in, the formatted bytes out.
    pub command: String,
    /// How long one run may take (None: [`DEFAULT_TIMEOUT`]).
    pub timeout: Option<Duration>,
}

impl Formatter {
    /// `GLOB=CMD` (split at the first `=`): a usage error when the `=` is missing, either
    /// side is empty, or the glob does not compile.
    pub fn parse(spec: &str) -> Result<Formatter, Error> {
        let bad = |why: String| -> Error {
            UsageError::BadFormatter {
                spec: spec.to_string(),
                why,
            }
            .into()
        };
        let Some((glob, command)) = spec.split_once('=') else {
            return Err(bad("it has no `=` between the glob and the command".into()));
        };
        if glob.trim().is_empty() {
            return Err(bad("the glob before `=` is empty".into()));
        }
        if command.trim().is_empty() {
            return Err(bad("the command after `=` is empty".into()));
        }
        Globs::new(&[glob.to_string()]).map_err(|e| bad(e.message))?;
        Ok(Formatter {
            glob: glob.to_string(),
            command: command.to_string(),
            timeout: None,
        })
    }
}

/// Why a formatter refused the patch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatterError {
    #[error("the formatter `{command}` failed on {path}: {how}")]
    Failed {
        path: String,
        command: String,
        /// `exited with status N`, `was killed by a signal`, `timed out after N s`, `printed
        /// nothing for a file that is not empty`, or why it could not run.
        how: String,
        /// `failed`, `timed_out` or `empty_output`.
        status: &'static str,
        exit_code: Option<i32>,
        stderr_tail: String,
    },
}

impl From<FormatterError> for Error {
    fn from(err: FormatterError) -> Error {
        let message = err.to_string();
        let FormatterError::Failed {
            path,
            command,
            status,
            exit_code,
            stderr_tail,
            ..
        } = err;
        Error::new(ErrorCode::FormatterFailed, message)
            .with_path(path.clone())
            .with_hint("fix the formatter or the patch and run again; nothing was written")
            .with_details(serde_json::json!({
                "path": path,
                "command": command,
                "status": status,
                "exit_code": exit_code,
                "stderr_tail": stderr_tail,
            }))
    }
}

/// The hook: the run's formatters (their globs compiled when it runs).
pub(crate) struct FormatterHook<'o> {
    pub formatters: &'o [Formatter],
}

impl Hook for FormatterHook<'_> {
    fn after_plan(
        &mut self,
        run: &Run<'_, '_>,
        planned: &mut Planned,
        _facts: &mut Facts,
    ) -> Result<(), Error> {
        // A memory tree was refused before (the commands run in the root).
        let Some(tree) = run.tree else { return Ok(()) };
        let globs = self
            .formatters
            .iter()
            .map(|f| Ok((f, Globs::new(std::slice::from_ref(&f.glob))?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let matching = |path: &str| {
            globs
                .iter()
                .find(|(_, g)| g.matching(path).is_some())
                .map(|(f, _)| *f)
        };
        let plan = &mut planned.plan;
        for i in 0..plan.changes.len() {
            let change = &plan.changes[i];
            let NewState::File { bytes, mode } = &change.after else {
                continue;
            };
            let Some(formatter) = matching(&change.path) else {
                continue;
            };
            let formatted = format(tree.path(), formatter, &change.path, bytes.as_slice())?;
            if formatted == bytes.as_slice() {
                continue;
            }
            let (path, mode, planned_bytes) = (change.path.clone(), *mode, bytes.clone());
            let formatted = Content::from(formatted);
            if let Some(report) = plan.files.iter_mut().find(|f| f.path == path) {
                let before = before_of(run, &plan.changes, report);
                restate(report, before.as_deref(), &formatted);
                // The piece that wrote the planned bytes: the last one shown with the path.
                let piece = plan.pieces.iter_mut().rev().find(|p| {
                    p.new.as_deref() == Some(path.as_str()) && p.after == planned_bytes.as_slice()
                });
                if let Some(piece) = piece {
                    piece.after = formatted.as_slice().to_vec();
                }
            }
            plan.changes[i].after = NewState::File {
                bytes: formatted,
                mode,
            };
        }
        Ok(())
    }
}

/// A written file's bytes before the patch (None: it is new), read from the path it came from.
fn before_of(
    run: &Run<'_, '_>,
    changes: &[crate::txn::Change],
    report: &FileReport,
) -> Option<Vec<u8>> {
    use crate::model::FileOp;
    let from = report
        .old_path
        .clone()
        .unwrap_or_else(|| report.path.clone());
    if report.op == FileOp::Add {
        return None;
    }
    let kept = changes
        .iter()
        .find(|c| c.path == from)
        .and_then(|c| match &c.before {
            Snapshot::File { sha256, .. } => sha256.content().map(|c| c.as_slice().to_vec()),
            _ => None,
        });
    let read = || match run.tree?.read(&from).ok()?.1 {
        crate::tree::Node::File { bytes, .. } => Some(bytes.into_vec()),
        _ => None,
    };
    kept.or_else(read)
}

/// The report's hash, line counts and snippet for the formatted bytes (its hunks still say
/// where the patch's hunks went in the original file).
fn restate(report: &mut FileReport, before: Option<&[u8]>, formatted: &Content) {
    report.set_new_content(formatted);
    let split = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split_inclusive(|&c| c == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (old, new) = (
        split(before.unwrap_or_default()),
        split(formatted.as_slice()),
    );
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    let (mut added, mut removed) = (0, 0);
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {}
            _ => {
                added += new_range.len();
                removed += old_range.len();
            }
        }
    }
    (report.added, report.removed) = (added, removed);
    let groups = similar::group_diff_ops(ops, SNIPPET_CONTEXT);
    let region = groups.first().zip(groups.last()).and_then(|(first, last)| {
        Some((
            first.first()?.new_range().start,
            last.last()?.new_range().end,
        ))
    });
    report.snippet = region
        .filter(|(lo, hi)| hi - lo <= SNIPPET_MAX_LINES + 2 * SNIPPET_CONTEXT)
        .map(|(lo, hi)| Snippet {
            start_line: lo + 1,
            lines: lines(formatted.as_slice(), lo, hi),
        });
}

/// Lines `from..to` (0-based) of `bytes` without their endings (a BOM left out).
fn lines(bytes: &[u8], from: usize, to: usize) -> Vec<String> {
    let body = bytes.strip_prefix(crate::text::BOM).unwrap_or(bytes);
    body.split_inclusive(|&b| b == b'\n')
        .skip(from)
        .take(to.saturating_sub(from))
        .map(|line| {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            String::from_utf8_lossy(line).into_owned()
        })
        .collect()
}

/// Pipe `input` through the formatter (in `root`, for `path`); its standard output when it
/// exits with status 0 in time.
fn format(root: &Path, f: &Formatter, path: &str, input: &[u8]) -> Result<Vec<u8>, Error> {
    let failed = |how: String, status: &'static str, exit_code: Option<i32>, stderr: String| {
        Error::from(FormatterError::Failed {
            path: path.to_string(),
            command: f.command.clone(),
            how,
            status,
            exit_code,
            stderr_tail: stderr,
        })
    };
    let mut cmd = crate::shell::command(root, &f.command);
    cmd.env(PATH_ENV, path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| failed(format!("cannot run sh: {e}"), "failed", None, String::new()))?;
    // Feed and drain on their own threads: a formatter may write before it has read all.
    let stdin = child.stdin.take();
    let input_was_empty = input.is_empty();
    let input = input.to_vec();
    let feeder = thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // A formatter that stops reading early is judged by its exit status.
            let _ = stdin.write_all(&input);
        }
    });
    let out = child.stdout.take().map(|mut s| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = s.read_to_end(&mut bytes);
            bytes
        })
    });
    let err = child.stderr.take().map(|s| thread::spawn(move || tail(s)));
    let timeout = f.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let status = crate::shell::wait(&mut child, timeout).map_err(|e| {
        failed(
            format!("cannot wait for it: {e}"),
            "failed",
            None,
            String::new(),
        )
    })?;
    let _ = feeder.join();
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    match status {
        // Nothing printed for a file that has bytes is a formatter that formats in place
        // (`prettier --write`) or lost its input: writing its output would empty the file.
        Some(s) if s.success() && stdout.is_empty() && !input_was_empty => Err(failed(
            "printed nothing for a file that is not empty (a formatter here reads the file \
             on its standard input and prints the formatted file; one that rewrites the \
             file in place does not)"
                .to_string(),
            "empty_output",
            Some(0),
            stderr,
        )),
        Some(s) if s.success() => Ok(stdout),
        Some(s) => {
            let how = match s.code() {
                Some(code) => format!("exited with status {code}"),
                None => "was killed by a signal".to_string(),
            };
            Err(failed(how, "failed", s.code(), stderr))
        }
        None => {
            let how = format!("timed out after {} s", timeout.as_secs_f64());
            Err(failed(how, "timed_out", None, stderr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatter_is_glob_equals_command_and_anything_else_is_a_usage_error() {
        let f = Formatter::parse("*.py=black -q - ").expect("parses");
        assert_eq!(
            (f.glob.as_str(), f.command.as_str()),
            ("*.py", "black -q - ")
        );
        let f = Formatter::parse("src/*.rs=sed s/a=b/").expect("split at the first =");
        assert_eq!(
            (f.glob.as_str(), f.command.as_str()),
            ("src/*.rs", "sed s/a=b/")
        );
        for (spec, why) in [
            ("black", "it has no `=` between the glob and the command"),
            ("=black", "the glob before `=` is empty"),
            ("*.py= ", "the command after `=` is empty"),
        ] {
            let e = Formatter::parse(spec).expect_err(spec);
            assert_eq!(e.code, ErrorCode::Usage);
            assert_eq!(e.message, format!("{spec:?} is not a formatter: {why}"));
            assert!(e.hint.is_some_and(|h| h.contains("--formatter GLOB=CMD")));
        }
        let e = Formatter::parse("a[=cat").expect_err("bad glob");
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(
            e.message.starts_with("\"a[=cat\" is not a formatter: "),
            "{}",
            e.message
        );
    }

    #[test]
    fn the_snippet_and_counts_follow_the_formatted_bytes() {
        let mut report = FileReport::new(crate::model::FileOp::Modify, "a.py");
        let before = b"x=1\ny=2\nz=3\n";
        restate(
            &mut report,
            Some(before),
            &Content::from(b"x = 1\ny=2\nz=3\n".to_vec()),
        );
        assert_eq!((report.added, report.removed), (1, 1));
        let snippet = report.snippet.expect("a region");
        assert_eq!(snippet.start_line, 1);
        assert_eq!(snippet.lines, ["x = 1", "y=2", "z=3"]);
    }
}
