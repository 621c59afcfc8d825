//! Stage: agent read. `apply-patch read PATH [--lines A:B]`: a file's lines numbered from 1
//! (the form agents expect: the number right-aligned, a tab, the line, tabs kept as tabs) and
//! the file's version — a SHA-256 prefix to send back as `*** Base:` / JSON `base` — so that a
//! later edit can prove which content it was written against.
//!
//! Reads only, confined to the root; never prints a binary or non-UTF-8 file (it says so, as
//! `binary_file` / `invalid_utf8`, with the version so the file can still be deleted or
//! replaced). Keeping the served content for rebases is the caller's choice (a
//! snapshot store).

// The line server's one caller is `pipeline::read` (the `mcp` feature, as the `read` front
// ends): built with `git` alone, only the types here are used.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use super::AgentError;
use std::path::Path;

use crate::agent::snapshots::SnapshotStore;
use crate::agent::{sha256_hex, version_of};
use crate::error::Error;
use crate::guard;
use crate::text::{Ending, Text};
use crate::tree::DiskTree;
use crate::txn::Found;

/// The function (else block, else element) enclosing a line, served as `read` serves lines:
/// `read --around`, the MCP `read` tool's `around` and the Python `read(around=)`.
#[cfg(feature = "mcp")]
pub(crate) use super::around::read_around;
#[cfg(feature = "mcp")]
pub use super::around::{AroundOutput, AroundRange};

/// `--lines A:B`: 1-based, inclusive; either side may be left out (`A:`, `:B`), and a single
/// number reads one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LineRange {
    pub start: Option<usize>,
    pub end: Option<usize>,
}

impl LineRange {
    /// Parse `A:B`, `A:`, `:B` or `A`.
    pub fn parse(s: &str) -> Result<LineRange, Error> {
        let bad = || -> Error { AgentError::BadLineRange { range: s.into() }.into() };
        let num = |t: &str| -> Result<Option<usize>, Error> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            match t.parse::<usize>() {
                Ok(0) | Err(_) => Err(bad()),
                Ok(n) => Ok(Some(n)),
            }
        };
        let range = match s.split_once(':') {
            Some((a, b)) => LineRange {
                start: num(a)?,
                end: num(b)?,
            },
            None => {
                let n = num(s)?.ok_or_else(bad)?;
                LineRange {
                    start: Some(n),
                    end: Some(n),
                }
            }
        };
        if let (Some(a), Some(b)) = (range.start, range.end) {
            if b < a {
                return Err(bad());
            }
        }
        Ok(range)
    }
}

/// What `read` serves: the JSON form of `read --json` and of the MCP `read` tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ReadOutput {
    /// Root-relative, `/`-separated.
    pub path: String,
    /// The version to send back as `*** Base:` / JSON `base`.
    pub base: String,
    /// The full SHA-256 of the file's bytes.
    pub sha256: String,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// 1-based number of `lines[0]` (0 when no line is served).
    pub start_line: usize,
    /// 1-based number of the last line served (0 when none).
    pub end_line: usize,
    /// The lines served, without their endings.
    pub lines: Vec<String>,
    /// `lf`, `crlf`, `mixed`, or `none` (no line ends in a newline).
    pub line_ending: String,
    /// The file's last line ends in a newline (true for an empty file).
    pub final_newline: bool,
    /// The file starts with a UTF-8 byte-order mark (not shown in line 1).
    pub bom: bool,
}

impl ReadOutput {
    /// The human form: one header line, then every line as `{number:>6}\t{line}`.
    pub fn render(&self) -> String {
        let path = crate::quote::quote_for_terminal(&self.path);
        let mut out = if self.total_lines == 0 {
            format!("{path}  (empty file)  *** Base: {}\n", self.base)
        } else {
            format!(
                "{path}  lines {}-{} of {}  *** Base: {}\n",
                self.start_line, self.end_line, self.total_lines, self.base
            )
        };
        let width = self.end_line.to_string().len().max(6);
        for (i, line) in self.lines.iter().enumerate() {
            out.push_str(&format!("{:>width$}\t{line}\n", self.start_line + i));
        }
        let mut notes = Vec::new();
        if self.line_ending == "crlf" || self.line_ending == "mixed" {
            notes.push(format!("line endings: {}", self.line_ending));
        }
        if !self.final_newline {
            notes.push("no newline at end of file".to_string());
        }
        if self.bom {
            notes.push("starts with a UTF-8 BOM".to_string());
        }
        if self.end_line < self.total_lines {
            notes.push(format!(
                "{} more lines: read on from line {}",
                self.total_lines - self.end_line,
                self.end_line + 1
            ));
        }
        if !notes.is_empty() {
            out.push_str(&format!("({})\n", notes.join("; ")));
        }
        out
    }
}

/// Read `path` (relative to `root`, or absolute inside it), serve `range` of its lines, and
/// keep its content in `store` when one is given. The library's door is
/// `pipeline::read::read`, which recovers first.
pub(crate) fn read_file(
    root: &Path,
    path: &str,
    range: LineRange,
    store: Option<&SnapshotStore>,
) -> Result<ReadOutput, AgentError> {
    let (rel, bytes) = read_confined(root, path)?;
    let sha256 = sha256_hex(&bytes);
    let base = version_of(&bytes);
    check_text(&rel, &bytes, &base)?;
    if let Some(store) = store {
        store.keep(&sha256, &bytes)?;
    }
    let text = Text::parse(&bytes);
    let total = text.len();
    let (start, end) = clamp(&rel, range, total)?;
    let lines = text.contents()[start.saturating_sub(1)..end]
        .iter()
        // check_text proved the whole file UTF-8, and lines split at ASCII bytes.
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    Ok(ReadOutput {
        path: rel,
        base,
        sha256,
        total_lines: total,
        start_line: start,
        end_line: end,
        lines,
        line_ending: endings(&text).to_string(),
        final_newline: text.ends_with_newline(),
        bom: text.bom,
    })
}

/// The 1-based inclusive bounds to serve (0, 0 for an empty file).
fn clamp(rel: &str, range: LineRange, total: usize) -> Result<(usize, usize), AgentError> {
    if total == 0 {
        return Ok((0, 0));
    }
    let start = range.start.unwrap_or(1);
    if start > total {
        return Err(AgentError::PastTheEnd {
            path: rel.into(),
            start,
            total,
        });
    }
    Ok((start, range.end.unwrap_or(total).min(total)))
}

/// Refuse to serve a binary (a NUL byte) or non-UTF-8 file, naming where and its version.
fn check_text(rel: &str, bytes: &[u8], base: &str) -> Result<(), AgentError> {
    if bytes.contains(&0) {
        return Err(AgentError::BinaryFile {
            path: rel.into(),
            size: bytes.len(),
            base: base.into(),
        });
    }
    if let Err(e) = std::str::from_utf8(bytes) {
        let offset = e.valid_up_to();
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(AgentError::NotUtf8 {
            path: rel.into(),
            line,
            offset,
            size: bytes.len(),
            base: base.into(),
        });
    }
    Ok(())
}

fn endings(text: &Text<'_>) -> &'static str {
    let crlf = text.endings().contains(&Ending::CrLf);
    let lf = text.endings().contains(&Ending::Lf);
    match (lf, crlf) {
        (true, true) => "mixed",
        (false, true) => "crlf",
        (true, false) => "lf",
        (false, false) => "none",
    }
}

/// The bytes of `path` under `root`, read as a commit would write it (SPEC §6, README
/// "Safety"): the path is normalised and confined ([`resolve`]); a symlink on it is followed
/// only to a target inside the root and outside `.git/` (`guard::resolve`); the file is then
/// opened through folder handles taken component by component without following symlinks,
/// and must be a regular file (a FIFO or device is `unsupported_file`, never opened for a
/// blocking read). So a symlink swapped in after the check cannot lead the read out of the
/// root. Returns the root-relative path as asked (not the link's target) and the bytes.
pub(crate) fn read_confined(root: &Path, path: &str) -> Result<(String, Vec<u8>), AgentError> {
    let rel = resolve(root, path)?;
    read_resolved(&DiskTree::new(root).map_err(AgentError::outside)?, rel)
}

/// [`read_confined`] through a tree a run already holds (the MCP session's checks around a
/// write, a chip's assessment), without a second discovery of the root's repository.
pub(crate) fn read_confined_in(
    tree: &DiskTree,
    path: &str,
) -> Result<(String, Vec<u8>), AgentError> {
    read_resolved(tree, confine_to(tree.path(), path)?)
}

/// The bytes of `rel` (root-relative, confined by its text) under `tree`, its symlinks
/// followed by `guard::resolve`.
fn read_resolved(tree: &DiskTree, rel: String) -> Result<(String, Vec<u8>), AgentError> {
    let real = guard::resolve(tree, &rel, true).map_err(AgentError::outside)?;
    let (_, found) =
        crate::txn::read_snapshot(tree.path(), &real).map_err(|e| AgentError::Unreadable {
            path: rel.clone(),
            read_as: real.clone(),
            cause: Box::new(e),
        })?;
    match found {
        Found::File(content) => Ok((rel, content.into_vec())),
        Found::Missing => Err(not_found(&rel)),
        Found::Directory => Err(AgentError::IsDirectory { path: rel }),
        // `guard::resolve` followed every link; one standing there now was swapped in.
        Found::Symlink(_) => Err(AgentError::SymlinkSwapped { path: rel }),
    }
}

fn not_found(rel: &str) -> AgentError {
    AgentError::NotFound { path: rel.into() }
}

/// Confine `path` to `root` by its text, by the patches' own rule ([`guard::confine`]):
/// `.` and `..` folded, an absolute path inside the root accepted, `.git/` and anything that
/// leads out refused. Returns the root-relative `/` path; symlinks on it are left to
/// [`read_confined`].
pub(crate) fn resolve(root: &Path, path: &str) -> Result<String, AgentError> {
    let canon = crate::root::check_root(root).map_err(AgentError::outside)?;
    confine_to(&canon, path)
}

/// [`resolve`] under a root already canonical.
pub(crate) fn confine_to(canon_root: &Path, path: &str) -> Result<String, AgentError> {
    guard::confine(path, None, Some(canon_root))
        .map_err(AgentError::outside)?
        .ok_or_else(|| AgentError::IsRoot { path: path.into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use std::fs;

    fn root_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (p, b) in files {
            let path = dir.path().join(p);
            fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
            fs::write(path, b).expect("write");
        }
        dir
    }

    #[test]
    fn ranges_parse() {
        let r = |a, b| LineRange { start: a, end: b };
        assert_eq!(LineRange::parse("3:7").expect("valid"), r(Some(3), Some(7)));
        assert_eq!(LineRange::parse("3:").expect("valid"), r(Some(3), None));
        assert_eq!(LineRange::parse(":7").expect("valid"), r(None, Some(7)));
        assert_eq!(LineRange::parse("5").expect("valid"), r(Some(5), Some(5)));
        for bad in ["0:3", "7:3", "a:b", "", "1:2:3"] {
            assert_eq!(
                LineRange::parse(bad).map_err(|e| e.code),
                Err(ErrorCode::Usage),
                "{bad}"
            );
        }
    }

    #[test]
    fn numbered_lines_keep_tabs_and_hide_endings() {
        let dir = root_with(&[("src/a.rs", b"fn a() {\r\n\tx();\r\n}")]);
        let out = read_file(dir.path(), "src/a.rs", LineRange::default(), None).expect("reads");
        assert_eq!(out.lines, vec!["fn a() {", "\tx();", "}"]);
        assert_eq!((out.start_line, out.end_line, out.total_lines), (1, 3, 3));
        assert_eq!(out.line_ending, "crlf");
        assert!(!out.final_newline);
        assert_eq!(out.base, version_of(b"fn a() {\r\n\tx();\r\n}"));
        let text = out.render();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(format!("src/a.rs  lines 1-3 of 3  *** Base: {}", out.base).as_str())
        );
        assert_eq!(lines.next(), Some("     1\tfn a() {"));
        assert_eq!(lines.next(), Some("     2\t\tx();"));
        assert_eq!(lines.next(), Some("     3\t}"));
        assert_eq!(
            lines.next(),
            Some("(line endings: crlf; no newline at end of file)")
        );
    }

    #[test]
    fn a_range_is_clamped_to_the_file() {
        let dir = root_with(&[("a.txt", b"1\n2\n3\n4\n")]);
        let out = read_file(
            dir.path(),
            "./a.txt",
            LineRange::parse("3:9").expect("valid"),
            None,
        )
        .expect("reads");
        assert_eq!(out.lines, vec!["3", "4"]);
        assert_eq!((out.start_line, out.end_line), (3, 4));
        let past = read_file(
            dir.path(),
            "a.txt",
            LineRange::parse("5:").expect("valid"),
            None,
        );
        assert_eq!(past.map_err(|e| e.code()), Err(ErrorCode::Usage));
    }

    #[test]
    fn binary_and_non_utf8_files_are_not_printed() {
        let dir = root_with(&[("b.bin", b"\x89PNG\0\0"), ("l1.txt", b"ok\ncaf\xe9\n")]);
        let e: Error = read_file(dir.path(), "b.bin", LineRange::default(), None)
            .expect_err("binary")
            .into();
        assert_eq!(e.code, ErrorCode::BinaryFile);
        assert!(e
            .details()
            .is_some_and(|d| d["base"] == version_of(b"\x89PNG\0\0")));
        let e: Error = read_file(dir.path(), "l1.txt", LineRange::default(), None)
            .expect_err("latin1")
            .into();
        assert_eq!(e.code, ErrorCode::InvalidUtf8);
        assert!(e.message.contains("line 2"), "{}", e.message);
    }

    #[test]
    fn paths_stay_inside_the_root() {
        let dir = root_with(&[("a.txt", b"x\n"), (".git/config", b"[core]\n")]);
        let code = |p: &str| {
            read_file(dir.path(), p, LineRange::default(), None)
                .map(|_| ())
                .map_err(|e| e.code())
        };
        assert_eq!(code("../a.txt"), Err(ErrorCode::PathEscape));
        assert_eq!(code("sub/../../a.txt"), Err(ErrorCode::PathEscape));
        assert_eq!(code(".git/config"), Err(ErrorCode::PathEscape));
        assert_eq!(code("/etc/passwd"), Err(ErrorCode::PathEscape));
        assert_eq!(code("missing.txt"), Err(ErrorCode::FileNotFound));
        let abs = dir.path().join("a.txt").display().to_string();
        // Only a `/`-rooted path is absolute on Windows too: `C:\…` is refused as a name
        // (README "Platforms").
        let abs_ok = if cfg!(windows) {
            code(&abs).is_err()
        } else {
            code(&abs) == Ok(())
        };
        assert!(abs_ok, "{abs}: {:?}", code(&abs));
        assert_eq!(code("x/../a.txt"), Ok(()));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", dir.path().join("out")).expect("symlink");
            assert_eq!(code("out"), Err(ErrorCode::PathEscape));
        }
    }

    #[test]
    fn served_content_is_kept_as_a_snapshot() {
        let dir = root_with(&[("a.txt", b"one\ntwo\n")]);
        let store = SnapshotStore::new(dir.path().join("state"));
        let out =
            read_file(dir.path(), "a.txt", LineRange::default(), Some(&store)).expect("reads");
        assert_eq!(store.find(&out.base).as_deref(), Some(&b"one\ntwo\n"[..]));
    }
}
