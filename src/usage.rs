//! The usage errors (SPEC §8, exit status 2), kept in one place: the library's option checks
//! (`pipeline::Options::check`, `GitMode::from_flags`, a target that cannot take a mode),
//! the root check, and the command line's own argument checks all refuse through
//! [`UsageError`], so that a refusal both raise reads the same from both. Each variant
//! carries the flags, names and paths as fields; the message and the next step are written
//! once, when it becomes the boundary [`Error`]. A leaf: it depends on the error type only.

use std::path::PathBuf;

use crate::error::{Error, ErrorCode};
use crate::spelling::{Hint, Opt, Value};

/// The next step of every refusal of the arguments that names no better one.
const HELP: &str = "run apply-patch --help for the options";

/// Why the arguments (or options) were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// clap's refusal of the command line, first line, without its `error: `.
    #[error("{message}")]
    Arguments { message: String },
    // The option rules (`pipeline::RawOptions::resolve`, `Options::check`): every front end
    // meets them, so their messages name no front end's spelling, and their hints name the
    // options in the caller's words.
    #[error("conflict markers need a three-way merge")]
    MarkersWithout3Way,
    #[error(
        "a rebase merges onto the file in the work tree, and a cached apply plans against the \
         index, not the work tree"
    )]
    RebaseCached,
    #[error(
        "a preview keeps a change to confirm later, and a change written with conflict markers \
         is a conflict to resolve, not a change to confirm"
    )]
    PreviewMarkers,
    /// A post-check with a check (`check`) or a preview.
    #[error(
        "a post-check runs after a write, and a {} writes nothing",
        if *check { "check" } else { "preview" }
    )]
    PostCheckWithoutWrite { check: bool },
    #[error("rolling back on a failed post-check needs a post-check")]
    RollbackWithoutPostCheck,
    /// A Base for SEARCH/REPLACE blocks without the one file it belongs to.
    #[error("a Base belongs to one file: a base needs the path of the file the blocks edit")]
    BaseWithoutPath,
    #[error("a preview and a check do not go together")]
    PreviewWithCheck,
    #[error("the window must be at least 1 line")]
    ZeroWindow,
    /// A `--formatter` that is not `GLOB=CMD` (`why`: what is wrong with it).
    #[error("{spec:?} is not a formatter: {why}")]
    BadFormatter { spec: String, why: String },
    /// `--formatter-timeout 0`.
    #[error("a formatter's timeout must be at least 1 second")]
    ZeroFormatterTimeout,
    /// A durability mode that does not exist, from the option or (`from_env`) the variable.
    #[error(
        "{}{name:?} is not a durability mode; known: {}",
        if *from_env { "APPLY_PATCH_DURABILITY=" } else { "" },
        known.join(", ")
    )]
    UnknownDurability {
        from_env: bool,
        name: String,
        known: &'static [&'static str],
    },
    /// A patch format name that does not exist.
    #[error("{name:?} is not a patch format; known: {}", known.join(", "))]
    UnknownFormat {
        name: String,
        known: &'static [&'static str],
    },
    /// A front end name that does not exist (the command line's hidden `--front-end`).
    #[error("{name:?} is not a front end; known: {}", known.join(", "))]
    UnknownFrontEnd {
        name: String,
        known: &'static [&'static str],
    },
    #[error("--apply goes with --stat, --numstat or --summary")]
    ApplyWithoutStat,
    #[error("--around counts lines from 1")]
    ZeroAround,
    #[error("--line counts from 1")]
    ZeroLine,
    #[error(
        "--reject is not supported: a patch applies whole or not at all, never leaving .rej files"
    )]
    Reject,
    /// An apply flag given with a subcommand.
    #[error("{flag} applies a patch; it cannot be combined with a subcommand")]
    ApplyFlagWithSubcommand { flag: String },
    #[error("unknown language `{name}`; known: {}", known.join(", "))]
    UnknownLanguage {
        name: String,
        known: Vec<&'static str>,
    },
    #[error("no subcommand `{name}`; pages: {}", pages.join(", "))]
    UnknownPage { name: String, pages: Vec<String> },
    /// Standard input is a terminal and no patch was named.
    #[error("no patch given: name a patch file, pass the patch text, or pipe it in")]
    NoPatch,
    /// An argument that names no file and holds no patch. The argument is not shown: it may
    /// be kilobytes of text, or text that must not be echoed.
    #[error(
        "no such file, and no patch was found in the argument (no `*** Begin Patch`, \
         `diff --git`, `---`/`+++` or JSON `{{` line)"
    )]
    NeitherFileNorPatch,
    /// PATCH (or `-i FILE`) names a folder, a FIFO, a device or a socket (`kind`).
    #[error("the patch {path} is {kind}: PATCH must be a regular file, or `-` for standard input")]
    PatchNotRegular { path: String, kind: &'static str },
    /// Patch input over the limit (`from`: "the patch FILE" or "the patch on standard
    /// input"; `size` when known before reading).
    #[error(
        "{from} is larger than the {} GiB limit{}",
        limit >> 30,
        size.map(|s| format!(" ({s} bytes)")).unwrap_or_default()
    )]
    PatchTooLarge {
        from: String,
        size: Option<u64>,
        limit: u64,
    },
    /// Patch text given as an argument that is not UTF-8.
    #[error("the patch text of the argument is not valid UTF-8")]
    PatchTextNotUtf8,
    /// The Codex drop-in given more than its one argument.
    #[error("apply_patch takes one argument, the patch text (or `-i FILE`, or the patch on standard input)")]
    CodexArguments,
    /// A patch file that is missing or a directory.
    #[error("cannot read the patch {path}: {cause}")]
    PatchUnreadable { path: String, cause: String },
    /// A FILE argument (of `range`, `check-balance`) that is missing.
    #[error("cannot read {path}: {cause}")]
    FileUnreadable { path: String, cause: String },
    /// The root is not an existing directory.
    #[error("the root {} is not a directory", root.display())]
    RootNotDirectory { root: PathBuf },
    /// A git mode, and a root in no git work tree.
    #[error("{flag} needs a git work tree, and {} is in none", root.display())]
    NoWorkTree { flag: &'static str, root: PathBuf },
    /// An option the target cannot take (`why` says which and why).
    #[error("{why}")]
    TargetCannot { why: &'static str },
    /// An option that needs the `git` feature, in a build without it.
    #[error("{what} needs git: build apply-patch with its `git` feature")]
    NeedsGitFeature { what: &'static str },
}

impl UsageError {
    /// The stable error code: always `usage`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Usage
    }

    /// The next step to take: for an option rule, the options in the caller's words.
    fn hint(&self) -> Option<Hint> {
        let leave_out =
            |a: Opt, b: Opt| Hint::new().text("leave out ").name(a).text(" or ").name(b);
        Some(match self {
            UsageError::MarkersWithout3Way => Hint::new()
                .text("add ")
                .on(Opt::ThreeWay)
                .text(", or leave out ")
                .name(Opt::ConflictMarkers),
            UsageError::RebaseCached => leave_out(Opt::Rebase, Opt::Cached),
            UsageError::PreviewMarkers => leave_out(Opt::Preview, Opt::ConflictMarkers),
            UsageError::PostCheckWithoutWrite { check } => leave_out(
                Opt::PostCheck,
                if *check { Opt::Check } else { Opt::Preview },
            ),
            UsageError::RollbackWithoutPostCheck => Hint::new()
                .text("name a command with ")
                .name(Opt::PostCheck)
                .text(", or leave out ")
                .name(Opt::RollbackOnFail),
            UsageError::PreviewWithCheck => leave_out(Opt::Preview, Opt::Check),
            UsageError::BaseWithoutPath => Hint::new()
                .text("name the file with ")
                .name(Opt::Path)
                .text(", or leave out ")
                .name(Opt::Base),
            UsageError::BadFormatter { .. } => Hint::new()
                .text("give ")
                .opt(Opt::Formatter, Value::Text("GLOB=CMD".into()))
                .text(
                    ": a glob such as *.py, then a command that reads the file on its standard \
                     input and writes it formatted",
                ),
            UsageError::ZeroFormatterTimeout => Hint::from(
                "give a number of seconds of 1 or more, or leave it out for the default (600)",
            ),
            UsageError::ZeroWindow => Hint::new()
                .text("give ")
                .opt(Opt::Window, Value::Number("N".into()))
                .text(" with N of 1 or more, or leave it out for the default (20)"),
            UsageError::UnknownDurability { from_env: true, .. } => {
                Hint::from("set APPLY_PATCH_DURABILITY to one of them, or unset it")
            }
            UsageError::UnknownDurability { .. } => Hint::new()
                .text("give ")
                .name(Opt::Durability)
                .text(" one of them, or leave it out for full"),
            UsageError::UnknownFormat { .. } => Hint::new()
                .text("give ")
                .name(Opt::Format)
                .text(" one of them, or leave it out to detect the format"),
            _ => Hint::from(self.plain_hint()?),
        })
    }

    /// The next step of a refusal of the command line's own arguments.
    fn plain_hint(&self) -> Option<&'static str> {
        Some(match self {
            UsageError::Reject => {
                "run with --check first; when a patch is refused, the error names the hunk to \
                 fix and the refused patch is kept as a chip (`apply-patch chip ID`)"
            }
            UsageError::NeitherFileNorPatch
            | UsageError::PatchUnreadable { .. }
            | UsageError::PatchNotRegular { .. } => {
                "PATCH is a file, `-` for standard input, or the patch text itself"
            }
            UsageError::PatchTooLarge { .. } => {
                "split the change into several patches, each under the limit"
            }
            UsageError::PatchTextNotUtf8 => {
                "pass a patch of other bytes as a file or on standard input"
            }
            UsageError::CodexArguments => {
                "pass the whole patch as one argument: apply_patch \"$(cat fix.patch)\""
            }
            UsageError::FileUnreadable { .. } => {
                "FILE is relative to --root (default: the current directory)"
            }
            UsageError::RootNotDirectory { .. } => "pass an existing directory with --root",
            _ => HELP,
        })
    }

    /// The path the refusal is about (its message names it).
    fn path(&self) -> Option<&str> {
        match self {
            UsageError::PatchUnreadable { path, .. }
            | UsageError::FileUnreadable { path, .. }
            | UsageError::PatchNotRegular { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl From<UsageError> for Error {
    fn from(err: UsageError) -> Error {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: UsageError) -> crate::Error {
    Error::of_stage(err.code(), err.to_string(), err.path(), err.hint(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_refusals_point_to_help_and_the_rest_to_their_step() {
        let e: Error = UsageError::PostCheckWithoutWrite { check: true }.into();
        assert_eq!(e.code, ErrorCode::Usage);
        assert_eq!(e.exit_status(), 2);
        assert_eq!(
            e.message,
            "a post-check runs after a write, and a check writes nothing"
        );
        assert_eq!(e.hint.as_deref(), Some("leave out --post-check or --check"));
        let python = e.clone().for_front_end(crate::spelling::FrontEnd::Python);
        assert_eq!(python.message, e.message);
        assert_eq!(
            python.hint.as_deref(),
            Some("leave out post_check or check")
        );
        let e: Error = UsageError::ZeroLine.into();
        assert_eq!(e.hint.as_deref(), Some(HELP));
        assert_eq!(e.path, None);
        let e: Error = UsageError::RootNotDirectory {
            root: PathBuf::from("/no/such"),
        }
        .into();
        assert_eq!(e.message, "the root /no/such is not a directory");
        assert_eq!(
            e.hint.as_deref(),
            Some("pass an existing directory with --root")
        );
    }

    #[test]
    fn an_unreadable_file_names_its_path() {
        let e: Error = UsageError::PatchUnreadable {
            path: "p.diff".into(),
            cause: "No such file or directory (os error 2)".into(),
        }
        .into();
        assert_eq!(e.path.as_deref(), Some("p.diff"));
        assert!(!e.path_unnamed());
        assert_eq!(
            e.message,
            "cannot read the patch p.diff: No such file or directory (os error 2)"
        );
        let e: Error = UsageError::UnknownLanguage {
            name: "cobol".into(),
            known: vec!["rust", "python"],
        }
        .into();
        assert_eq!(e.message, "unknown language `cobol`; known: rust, python");
        assert_eq!(e.hint.as_deref(), Some(HELP));
    }
}
