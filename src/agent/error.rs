//! Stage: agent. The refusals of the agent tools (read, the read-before-write permit,
//! chips, previews, the post-check catalog, the MCP server's arguments), each carrying its
//! context (paths, ids, line numbers, the file's version) as fields. The message and the
//! next step are written once, when a refusal becomes the boundary [`Error`]; a refusal
//! that wraps another stage's error (a chip kept for a refused patch, a read that failed)
//! keeps that error as a field.

use crate::agent::chips::{HunkStatus, MAX_CHIPS};
use crate::error::{Error, ErrorCode};
use crate::spelling::{Hint, Opt};
use crate::txn::{IoFailure, TxnError};

/// Why an agent tool refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// `--lines` / `start_line:end_line` that is not a range.
    #[error("invalid line range '{range}': expected A:B, A:, :B or A (1-based)")]
    BadLineRange { range: String },
    /// A read that starts past the end of the file.
    #[error("line {start} is past the end of {path} ({total} lines)")]
    PastTheEnd {
        path: String,
        start: usize,
        total: usize,
    },
    /// A binary file is never served as text.
    #[error("{path} is a binary file ({size} bytes): not shown")]
    BinaryFile {
        path: String,
        size: usize,
        /// The file's version (for a whole-file replacement).
        base: String,
    },
    /// A file that is not UTF-8 is never served as text.
    #[error("{path} is not UTF-8 (line {line}, byte {offset}): not shown")]
    NotUtf8 {
        path: String,
        line: usize,
        offset: usize,
        size: usize,
        base: String,
    },
    /// A file the structure tools read that is not UTF-8 (no position: nothing is shown).
    #[error("{path} is not UTF-8")]
    TextNotUtf8 { path: String },
    #[error("{path} is a directory")]
    IsDirectory { path: String },
    /// The root itself was named.
    #[error("{path} is the root")]
    IsRoot { path: String },
    /// A symlink was swapped in while the file was read.
    #[error("{path}: a symbolic link was put in its place while it was read; not followed")]
    SymlinkSwapped { path: String },
    #[error("{path} does not exist")]
    NotFound { path: String },
    /// Reading `path` failed (`cause` names the file the link led to). The cause is always
    /// the commit stage's snapshot read of the file (`txn::read_snapshot`).
    #[error("{cause}")]
    Unreadable {
        path: String,
        /// The file actually read, when a symlink led elsewhere.
        read_as: String,
        #[source]
        cause: Box<TxnError>,
    },
    /// A change to a file not read in this session.
    #[error("{path} was not read in this session: read it before changing it")]
    NotRead { path: String },
    /// Line numbers of a read that no longer hold.
    #[error(
        "{path} has {now} lines now, {then} when it was read: line numbers from that read no \
         longer hold"
    )]
    LineCountChanged {
        path: String,
        now: usize,
        then: usize,
    },
    #[error("no kept patch (chip) with id '{id}'")]
    UnknownChip { id: String },
    /// A refused patch kept as chip `chip`: the refusal, with what would have applied. The
    /// cause stays the wide [`Error`]: a chip keeps whatever refused the patch (parse, locate,
    /// plan, guard, commit …), by design any stage's refusal.
    #[error("{}", cause.message)]
    Chipped {
        #[source]
        cause: Box<Error>,
        chip: String,
        hunks: Vec<HunkStatus>,
    },
    #[error("preview {id} {why}")]
    UnknownPreview { id: String, why: PreviewGone },
    #[error("cannot encode the preview: {cause}")]
    PreviewUnencodable { cause: String },
    /// A preview that writes the index, confirmed when the root is in no work tree.
    #[error("preview {id} writes the git index, and the root is in no git work tree now")]
    PreviewWithoutWorkTree { id: String },
    /// A file the preview changes that changed since.
    #[error("{path} changed since preview {id}: the previewed change no longer fits")]
    PreviewStale { id: String, path: String },
    /// `--rebase`: the patch's change overlaps changes made since its base.
    #[error("{path}: the patch changes lines that also changed since its base: {summary}")]
    RebaseConflict {
        path: String,
        /// The conflicted regions in words.
        summary: String,
        /// Both sides of each conflict (the error's `details`).
        conflicts: Box<serde_json::Value>,
    },
    /// `post_check` asked of a server that runs none.
    #[error("this server runs no checks: the operator started it without --post-check")]
    NoChecks { hint: String },
    /// `post_check: true` with several checks.
    #[error("post_check: true is ambiguous: name one of {names}")]
    AmbiguousCheck { names: String, hint: String },
    #[error("post_check '{name}' is not one of this server's checks ({names})")]
    UnknownCheck {
        name: String,
        names: String,
        hint: String,
    },
    /// `--post-check NAME=` with no command.
    #[error("--post-check '{value}' has no command")]
    CheckWithoutCommand { value: String },
    #[error("two --post-check values are named '{name}'")]
    DuplicateCheck { name: String },
    /// The post-check failed and the change was rolled back.
    #[error("post-check `{}` {}; the change was rolled back", verification.command, failure(verification))]
    PostCheckFailed {
        verification: Box<crate::agent::postcheck::Verification>,
    },
    /// A tool needs the state place, which could not be opened.
    #[error("{tool} needs the state place of the root, which could not be opened")]
    NoStatePlace { tool: String },
    /// A tool's work stopped (a panic or a cancelled task).
    #[error("the tool stopped unexpectedly: {cause}")]
    ToolStopped { cause: String },
    /// Arguments that do not fit a tool's input schema.
    #[error("invalid arguments for {tool}: {detail}")]
    InvalidArguments { tool: String, detail: String },
    /// Arguments of a tool that contradict each other or are out of range.
    #[error("{0}")]
    BadArguments(BadArguments),
    /// The MCP server could not run.
    #[error("mcp server: {what}: {cause}")]
    Server { what: String, cause: String },
    /// The operating system refused a step of an agent tool (`what`, "cannot keep the
    /// refused patch in") on `path`: `permission_denied` or `io_error`, as [`Error::io`]
    /// words it.
    #[error("{what} {path}: {cause}")]
    Io {
        path: String,
        what: String,
        #[source]
        cause: IoFailure,
    },
    /// A step outside the agent stage failed (the root's check, path confinement, the state
    /// place): its refusal is kept whole and becomes the boundary error unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for AgentError {
    fn from(cause: Error) -> AgentError {
        AgentError::Outside {
            cause: Box::new(cause),
        }
    }
}

/// Why a preview id cannot be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PreviewGone {
    #[error("is not a preview id (12 hex digits)")]
    NotAnId,
    #[error("is unknown or was already confirmed")]
    Unknown,
    #[error("is damaged")]
    Damaged,
    #[error("expired (previews can be confirmed for {minutes} minutes)")]
    Expired { minutes: u64 },
}

/// Tool arguments that contradict each other or are out of range (`usage`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadArguments {
    #[error("give either around or start_line/end_line, not both")]
    AroundAndRange,
    #[error("line numbers count from 1: start_line, end_line and around are at least 1")]
    LineZero,
    #[error("end_line {end} is before start_line {start}")]
    EndBeforeStart { start: usize, end: usize },
    #[error("line counts from 1")]
    RangeLineZero,
    #[error("unknown kind '{kind}': use function, block or tag")]
    UnknownKind { kind: String },
}

/// How a failed post-check failed.
fn failure(v: &crate::agent::postcheck::Verification) -> String {
    match (v.status.as_str(), v.exit_code) {
        ("timed_out", _) => "timed out".to_string(),
        (_, Some(code)) => format!("exited with status {code}"),
        _ => "was killed by a signal".to_string(),
    }
}

impl AgentError {
    /// The refusal of a step outside the agent stage, passed through whole
    /// ([`AgentError::Outside`]): whatever stage error it is, it becomes its boundary
    /// [`Error`] first, so that the conversion back returns exactly that.
    pub(crate) fn outside(cause: impl Into<Error>) -> AgentError {
        AgentError::Outside {
            cause: Box::new(cause.into()),
        }
    }

    /// The operating system's refusal of `what` on `path` (see [`AgentError::Io`]).
    pub(crate) fn io(path: &str, what: &str, cause: std::io::Error) -> AgentError {
        AgentError::Io {
            path: path.to_string(),
            what: what.to_string(),
            cause: cause.into(),
        }
    }

    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            AgentError::Io { cause, .. } => cause.code(),
            AgentError::BadLineRange { .. }
            | AgentError::PastTheEnd { .. }
            | AgentError::UnknownChip { .. }
            | AgentError::NoChecks { .. }
            | AgentError::AmbiguousCheck { .. }
            | AgentError::UnknownCheck { .. }
            | AgentError::CheckWithoutCommand { .. }
            | AgentError::DuplicateCheck { .. }
            | AgentError::InvalidArguments { .. }
            | AgentError::BadArguments(_) => ErrorCode::Usage,
            AgentError::BinaryFile { .. } => ErrorCode::BinaryFile,
            AgentError::NotUtf8 { .. } | AgentError::TextNotUtf8 { .. } => ErrorCode::InvalidUtf8,
            AgentError::IsDirectory { .. } | AgentError::IsRoot { .. } => ErrorCode::IsDirectory,
            AgentError::SymlinkSwapped { .. } => ErrorCode::PathEscape,
            AgentError::NotFound { .. } => ErrorCode::FileNotFound,
            AgentError::Unreadable { cause, .. } => cause.code(),
            AgentError::Chipped { cause, .. } | AgentError::Outside { cause } => cause.code,
            AgentError::NotRead { .. } => ErrorCode::NotRead,
            AgentError::LineCountChanged { .. } => ErrorCode::StaleFile,
            AgentError::UnknownPreview { .. } => ErrorCode::UnknownPreview,
            AgentError::PreviewWithoutWorkTree { .. } => ErrorCode::IndexMismatch,
            AgentError::PreviewStale { .. } => ErrorCode::StaleFile,
            AgentError::RebaseConflict { .. } => ErrorCode::MergeConflict,
            AgentError::PostCheckFailed { .. } => ErrorCode::PostCheckFailed,
            AgentError::PreviewUnencodable { .. }
            | AgentError::NoStatePlace { .. }
            | AgentError::ToolStopped { .. }
            | AgentError::Server { .. } => ErrorCode::IoError,
        }
    }

    /// The next step to take, when the refusal names one.
    fn hint(&self) -> Option<Hint> {
        let hint = match self {
            AgentError::PastTheEnd { total, .. } => {
                return Some(format!("ask for lines 1:{total} or fewer").into())
            }
            AgentError::BinaryFile { .. } => {
                "binary files cannot be edited as text; replace or delete it whole"
            }
            AgentError::NotUtf8 { .. } => {
                "edit it with a unified diff (matched byte for byte) or convert it to UTF-8"
            }
            AgentError::IsDirectory { .. } => "read a file inside it",
            AgentError::PreviewStale { .. } => "read the file again and preview the change again",
            AgentError::RebaseConflict { .. } => {
                "read the file again and redo the change on its current content \
                 (`error.details.conflicts` shows both sides)"
            }
            AgentError::SymlinkSwapped { .. } => "read it again",
            AgentError::NotFound { .. } => {
                "check the path (relative to the root); list the directory to find it"
            }
            AgentError::NotRead { path } => {
                return Some(Hint::from(format!(
                    "call `read` with path \"{path}\", then send the change again"
                )))
            }
            AgentError::LineCountChanged { .. } => {
                "read the file again and use the new line numbers"
            }
            AgentError::UnknownChip { .. } => {
                return Some(Hint::from(format!(
                    "chips are the last {MAX_CHIPS} refused patches, named in their errors"
                )))
            }
            AgentError::UnknownPreview { .. } => {
                return Some(
                    Hint::new()
                        .text("run the patch with ")
                        .on(Opt::Preview)
                        .text(" again and confirm the new id"),
                )
            }
            AgentError::NoChecks { hint }
            | AgentError::AmbiguousCheck { hint, .. }
            | AgentError::UnknownCheck { hint, .. } => return Some(Hint::from(hint.clone())),
            AgentError::DuplicateCheck { .. } => {
                "give each check its own name: --post-check NAME=CMD"
            }
            AgentError::PostCheckFailed { .. } => {
                "read the command's output in `verification`, fix the patch and send it again"
            }
            AgentError::NoStatePlace { .. } => {
                "set XDG_STATE_HOME (or HOME) to a writable directory, or work in a git \
                 repository"
            }
            AgentError::InvalidArguments { .. } => {
                "check the argument names and types against the tool's input schema"
            }
            AgentError::Unreadable { .. }
            | AgentError::Io { .. }
            | AgentError::Outside { .. }
            | AgentError::Chipped { .. }
            | AgentError::BadLineRange { .. }
            | AgentError::IsRoot { .. }
            | AgentError::TextNotUtf8 { .. }
            | AgentError::PreviewUnencodable { .. }
            | AgentError::PreviewWithoutWorkTree { .. }
            | AgentError::CheckWithoutCommand { .. }
            | AgentError::ToolStopped { .. }
            | AgentError::BadArguments(_)
            | AgentError::Server { .. } => return None,
        };
        Some(Hint::from(hint))
    }

    /// The path the refusal is about (every message names its own).
    fn path(&self) -> Option<&str> {
        match self {
            AgentError::PastTheEnd { path, .. }
            | AgentError::BinaryFile { path, .. }
            | AgentError::NotUtf8 { path, .. }
            | AgentError::TextNotUtf8 { path }
            | AgentError::IsDirectory { path }
            | AgentError::IsRoot { path }
            | AgentError::SymlinkSwapped { path }
            | AgentError::NotFound { path }
            | AgentError::NotRead { path }
            | AgentError::LineCountChanged { path, .. }
            | AgentError::PreviewStale { path, .. }
            | AgentError::RebaseConflict { path, .. }
            | AgentError::Io { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The structured data the refusal carries.
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            AgentError::BinaryFile { size, base, .. } | AgentError::NotUtf8 { size, base, .. } => {
                Some(serde_json::json!({"base": base, "size": size}))
            }
            AgentError::PostCheckFailed { verification } => {
                Some(serde_json::to_value(verification).unwrap_or_default())
            }
            AgentError::RebaseConflict { conflicts, .. } => Some((**conflicts).clone()),
            _ => None,
        }
    }
}

impl From<AgentError> for Error {
    fn from(err: AgentError) -> Error {
        if let AgentError::Outside { cause } = err {
            return *cause;
        }
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: AgentError) -> crate::Error {
    let err = match err {
        AgentError::Unreadable {
            path,
            read_as,
            cause,
        } => return unreadable(path, &read_as, Error::from(*cause)),
        AgentError::Chipped { cause, chip, hunks } => return chipped(*cause, &chip, &hunks),
        err => err,
    };
    Error::of_stage(
        err.code(),
        err.to_string(),
        err.path(),
        err.hint(),
        err.details(),
    )
}

/// A failed read of `path` (the file read was `read_as`): the cause, about `path`.
fn unreadable(path: String, read_as: &str, cause: Error) -> Error {
    let named = cause.path.as_deref() == Some(read_as) && read_as == path && !cause.path_unnamed();
    let out = cause;
    if named {
        out.with_path(path)
    } else {
        out.with_unnamed_path(path)
    }
}

/// A refusal kept as chip `id`: the chip, what would have applied and what failed in its
/// details, and the next step after the refusal's own.
fn chipped(error: Error, id: &str, hunks: &[HunkStatus]) -> Error {
    let applicable: Vec<&HunkStatus> = hunks.iter().filter(|h| h.applies).collect();
    let failed: Vec<&HunkStatus> = hunks.iter().filter(|h| !h.applies).collect();
    let mut details = match error.details().cloned() {
        Some(serde_json::Value::Object(map)) => map,
        Some(other) => {
            let mut map = serde_json::Map::new();
            map.insert("detail".into(), other);
            map
        }
        None => serde_json::Map::new(),
    };
    details.insert("chip".into(), id.into());
    details.insert("applicable".into(), serde_json::json!(applicable));
    details.insert("failed".into(), serde_json::json!(failed));
    let names = |list: &[&HunkStatus]| {
        list.iter()
            .map(|h| {
                if h.hunk == 0 {
                    h.path.clone()
                } else {
                    format!("hunk {} of {}", h.hunk, h.path)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let step = (!failed.is_empty() && !applicable.is_empty()).then(|| {
        format!(
            "only {} failed ({} would apply): fix {} and send the patch again \
             (kept as chip {id}; `apply-patch chip {id}` prints it)",
            names(&failed),
            names(&applicable),
            if failed.len() == 1 { "it" } else { "them" }
        )
    });
    let hint = match (error.hint_as_parts(), step) {
        (Some(h), Some(step)) => Some(h.text("; ").text(step)),
        (None, Some(step)) => Some(Hint::from(step)),
        (hint, None) => hint,
    };
    let out = error.with_details(serde_json::Value::Object(details));
    match hint {
        Some(hint) => out.with_hint(hint),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::stage_checks::{foreign, passes_through, reads_as_error_io};

    #[test]
    fn a_read_refusal_names_its_path_code_and_next_step() {
        let e: Error = AgentError::PastTheEnd {
            path: "a.txt".into(),
            start: 9,
            total: 3,
        }
        .into();
        assert_eq!(e.code, ErrorCode::Usage);
        assert_eq!(e.message, "line 9 is past the end of a.txt (3 lines)");
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        assert_eq!(e.hint.as_deref(), Some("ask for lines 1:3 or fewer"));
        let e: Error = AgentError::NotUtf8 {
            path: "b".into(),
            line: 2,
            offset: 7,
            size: 9,
            base: "v1".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::InvalidUtf8);
        assert_eq!(e.message, "b is not UTF-8 (line 2, byte 7): not shown");
        assert_eq!(
            e.details(),
            Some(&serde_json::json!({"base": "v1", "size": 9}))
        );
    }

    #[test]
    fn a_preview_says_why_it_is_gone() {
        let e: Error = AgentError::UnknownPreview {
            id: "abc".into(),
            why: PreviewGone::Expired { minutes: 10 },
        }
        .into();
        assert_eq!(e.code, ErrorCode::UnknownPreview);
        assert_eq!(
            e.message,
            "preview abc expired (previews can be confirmed for 10 minutes)"
        );
    }

    #[test]
    fn a_read_through_a_link_puts_the_asked_path_before_the_cause() {
        let cause = Error::io("target.txt", "cannot read", &std::io::Error::other("boom"));
        let same: Error = AgentError::Unreadable {
            path: "target.txt".into(),
            read_as: "target.txt".into(),
            cause: Box::new(cause.clone().into()),
        }
        .into();
        assert_eq!(same, cause);
        assert!(!same.path_unnamed());
        let linked: Error = AgentError::Unreadable {
            path: "link.txt".into(),
            read_as: "target.txt".into(),
            cause: Box::new(cause.clone().into()),
        }
        .into();
        assert_eq!(linked.path.as_deref(), Some("link.txt"));
        assert_eq!(linked.message, cause.message);
        assert!(linked.path_unnamed());
    }

    #[test]
    fn codes_follow_the_spec() {
        assert_eq!(
            AgentError::NotRead { path: "a".into() }.code(),
            ErrorCode::NotRead
        );
        assert_eq!(
            AgentError::BadArguments(BadArguments::LineZero).code(),
            ErrorCode::Usage
        );
        assert_eq!(
            AgentError::NoStatePlace { tool: "t".into() }.code(),
            ErrorCode::IoError
        );
        let cause = Error::new(ErrorCode::ContextNotFound, "c");
        let chipped = AgentError::Chipped {
            cause: Box::new(cause),
            chip: "id".into(),
            hunks: Vec::new(),
        };
        assert_eq!(chipped.code(), ErrorCode::ContextNotFound);
    }

    #[test]
    fn preview_and_rebase_refusals_carry_their_fields() {
        let e: Error = AgentError::PreviewStale {
            id: "p1".into(),
            path: "a.txt".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::StaleFile);
        assert_eq!(
            e.message,
            "a.txt changed since preview p1: the previewed change no longer fits"
        );
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        assert_eq!(
            e.hint.as_deref(),
            Some("read the file again and preview the change again")
        );
        let e: Error = AgentError::PreviewWithoutWorkTree { id: "p1".into() }.into();
        assert_eq!(
            (e.code, e.path, e.hint),
            (ErrorCode::IndexMismatch, None, None)
        );
        let e: Error = AgentError::RebaseConflict {
            path: "a.txt".into(),
            summary: "1 conflicting region (line 2)".into(),
            conflicts: Box::new(serde_json::json!({"conflicts": []})),
        }
        .into();
        assert_eq!(e.code, ErrorCode::MergeConflict);
        assert_eq!(
            e.message,
            "a.txt: the patch changes lines that also changed since its base: 1 conflicting \
             region (line 2)"
        );
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        assert_eq!(e.details(), Some(&serde_json::json!({"conflicts": []})));
        assert!(e
            .hint
            .is_some_and(|h| h.contains("error.details.conflicts")));
    }

    /// The causes below `e`, outermost first.
    fn chain(e: &Error) -> Vec<&(dyn std::error::Error + 'static)> {
        use std::error::Error as _;
        let mut out = Vec::new();
        let mut at = e.source();
        while let Some(c) = at {
            out.push(c);
            at = c.source();
        }
        out
    }

    #[test]
    fn an_outside_refusal_passes_through_unchanged() {
        passes_through(&foreign(), AgentError::code);
        // A stage's error becomes its boundary error first.
        let usage = crate::usage::UsageError::ZeroWindow;
        let back: Error = AgentError::outside(usage.clone()).into();
        assert_eq!(back, Error::from(usage));
        assert!(std::error::Error::source(&back)
            .and_then(|s| s.downcast_ref::<crate::usage::UsageError>())
            .is_some());
    }

    #[test]
    fn an_io_refusal_is_worded_as_error_io_and_chains_to_the_failure() {
        for raw in [13, 28] {
            let (path, what) = ("/s/chips", "cannot keep the refused patch in");
            let e = AgentError::io(path, what, std::io::Error::from_raw_os_error(raw));
            let code = e.code();
            reads_as_error_io(e, code, path, what, &std::io::Error::from_raw_os_error(raw));
        }
    }

    #[test]
    fn an_unreadable_file_chains_to_the_commit_stages_read() {
        let denied = std::io::Error::from_raw_os_error(13);
        let step = TxnError::io_of("a.txt", "cannot read", &denied);
        let e: Error = AgentError::Unreadable {
            path: "a.txt".into(),
            read_as: "a.txt".into(),
            cause: Box::new(step.clone()),
        }
        .into();
        assert_eq!(e, Error::from(step.clone()));
        let below = chain(&e);
        assert!(matches!(
            below[0].downcast_ref::<AgentError>(),
            Some(AgentError::Unreadable { .. })
        ));
        let cause = below[1]
            .downcast_ref::<Box<TxnError>>()
            .expect("the commit stage's read");
        assert_eq!(**cause, step);
        assert!(below
            .last()
            .and_then(|c| c.downcast_ref::<std::io::Error>())
            .is_some_and(|io| io.raw_os_error() == Some(13)));
    }

    #[test]
    fn an_agent_error_stays_small() {
        assert!(std::mem::size_of::<AgentError>() < 128);
    }
}
