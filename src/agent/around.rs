//! Stage: agent read (around). `apply-patch read PATH --around N` and the MCP `read` tool's
//! `around`: the function (else the block, else the element) enclosing line N, numbered,
//! with the same header and version as `read` — the unit an agent edits, without a
//! compiler or language server.
//!
//! Reads only, through [`read_file`] (so the same confinement, refusals and snapshot apply);
//! the range comes from [`crate::structure::around`]. Never guesses silently: an unknown
//! language says the range was found by braces.

use std::path::Path;

use crate::agent::read::{read_file, LineRange, ReadOutput};
use crate::agent::snapshots::SnapshotStore;
use crate::agent::AgentError;
use crate::error::Error;
use crate::structure::{around, Lang, Range};

/// What `read --around` serves: the lines of the range as `read` serves lines, and the range.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct AroundOutput {
    #[serde(flatten)]
    pub read: ReadOutput,
    pub around: AroundRange,
}

/// The range found around the line asked for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct AroundRange {
    /// The 1-based line asked for.
    pub line: usize,
    #[serde(flatten)]
    pub range: Range,
}

impl AroundOutput {
    /// `read`'s header and numbered lines, then a line naming what was found.
    pub fn render(&self) -> String {
        let r = &self.around.range;
        let mut out = self.read.render();
        let lang = if r.fallback {
            "unknown language: found by braces".to_string()
        } else {
            r.lang.to_string()
        };
        out.push_str(&format!(
            "around line {}: {} ({lang}), lines {}-{}\n",
            self.around.line, r.kind, r.start_line, r.end_line
        ));
        if let Some(w) = &r.warning {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}

/// Read `path` (relative to `root`) and serve the range enclosing its 1-based `line`;
/// `store` keeps the file's content as [`read_file`] does.
///
/// A line past the end is a `usage` error, a line inside no function or block
/// `context_not_found`.
pub fn read_around(
    root: &Path,
    path: &str,
    line: usize,
    store: Option<&SnapshotStore>,
) -> Result<AroundOutput, AgentError> {
    let mut read = read_file(root, path, LineRange::default(), store)?;
    // `read_file` proved the file UTF-8 and split it into lines without endings or BOM, so
    // the joined text numbers its lines exactly as the file does.
    let text = read.lines.join("\n");
    let lang = Lang::from_path(&read.path);
    // The structure stage's refusal, about this file (its message names no path).
    let found = around(&text, line, lang)
        .map_err(|e| AgentError::outside(Error::from(e).with_unnamed_path(&read.path)))?;
    let range = found.range;
    read.lines = read
        .lines
        .get(range.start_line - 1..range.end_line)
        .map(<[String]>::to_vec)
        .unwrap_or_default();
    read.start_line = range.start_line;
    read.end_line = range.end_line;
    Ok(AroundOutput {
        read,
        around: AroundRange { line, range },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "use std::fmt;\n\nfn parse(input: &str) -> u32 {\n    let n = input\n        .trim();\n    n.len() as u32\n}\n\nfn other() {}\n";

    fn tree(name: &str, content: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(name), content).expect("write");
        dir
    }

    #[test]
    fn serves_the_enclosing_function_with_reads_header() {
        let dir = tree("lib.rs", LIB);
        let out = read_around(dir.path(), "lib.rs", 5, None).expect("found");
        assert_eq!((out.read.start_line, out.read.end_line), (3, 7));
        assert_eq!(out.read.total_lines, 9);
        assert_eq!(out.read.lines[0], "fn parse(input: &str) -> u32 {");
        let text = out.render();
        assert!(
            text.starts_with(&format!(
                "lib.rs  lines 3-7 of 9  *** Base: {}\n",
                out.read.base
            )),
            "{text}"
        );
        assert!(text.contains("     5\t        .trim();\n"), "{text}");
        assert!(
            text.ends_with("around line 5: function (rust), lines 3-7\n"),
            "{text}"
        );
    }

    #[test]
    fn crlf_files_number_their_lines_as_the_file() {
        let dir = tree("lib.rs", &LIB.replace('\n', "\r\n"));
        let out = read_around(dir.path(), "lib.rs", 6, None).expect("found");
        assert_eq!((out.read.start_line, out.read.end_line), (3, 7));
        assert_eq!(out.read.lines[4], "}");
    }

    #[test]
    fn outside_any_function_or_past_the_end_is_refused() {
        let dir = tree("lib.rs", LIB);
        let err = Error::from(read_around(dir.path(), "lib.rs", 1, None).expect_err("no function"));
        assert_eq!(err.code, crate::ErrorCode::ContextNotFound);
        assert_eq!(err.path.as_deref(), Some("lib.rs"));
        let err = read_around(dir.path(), "lib.rs", 99, None).expect_err("past the end");
        assert_eq!(err.code(), crate::ErrorCode::Usage);
    }
}
