//! Stage: plan (guards). The guards' refusals, each carrying its context (the path, the
//! heredoc's `cd`, the symlink followed, the glob, the two hashes) as fields. The message
//! and the next step are written once, when a refusal becomes the boundary [`Error`].

use crate::spelling::{Hint, Opt, Value};
use crate::error::{Error, ErrorCode};
use crate::tree::TreeError;

/// Why a guard refused a path or a file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// A path no file can have: a NUL byte, or a trailing `/`.
    #[error(
        "path {path:?} {}",
        if *nul { "holds a NUL byte" } else { "ends in `/`: it names a folder, not a file" }
    )]
    NotAFileName {
        path: String,
        /// The path holds a NUL byte (else it ends in `/`).
        nul: bool,
    },
    /// A path that, by its text, leaves the root or enters `.git/`.
    #[error("path {} {why}", shown(path, cd.as_deref()))]
    Escape {
        path: String,
        /// The heredoc's `cd DIR`, shown with a relative path.
        cd: Option<String>,
        why: EscapeWhy,
    },
    /// A path that, through its symlinks, leaves the root or enters `.git/` or another
    /// repository.
    #[error("path {path} {why}")]
    Symlink { path: String, why: SymlinkWhy },
    /// A `--protect` pattern that is not a glob.
    #[error("bad glob {glob:?}: {cause}")]
    BadGlob {
        glob: String,
        /// globset's words for the failure.
        cause: String,
    },
    /// The `--protect` patterns do not build one set.
    #[error("bad glob set: {cause}")]
    BadGlobSet { cause: String },
    /// A path a `--protect` glob matches.
    #[error("{path} is protected by --protect {glob}")]
    Protected { path: String, glob: String },
    /// A Jupyter notebook without `--allow-notebooks`.
    #[error("{path} is a Jupyter notebook (JSON with embedded outputs)")]
    Notebook { path: String },
    /// The file's SHA-256 does not start with the patch's `*** Base` / `base`.
    #[error(
        "{path} has changed since the patch was written: its SHA-256 does not start with the \
         base {expected}"
    )]
    StaleBase {
        path: String,
        /// The patch's base, lowercased.
        expected: String,
        /// The file's SHA-256 in hex.
        actual: String,
    },
    /// The tree could not say what a path on the way is (a refused look at the disk, git's
    /// checks of a path): the tree's error is kept whole and becomes the boundary error
    /// unchanged.
    #[error("{cause}")]
    Tree {
        #[source]
        cause: TreeError,
    },
}

impl From<TreeError> for GuardError {
    fn from(cause: TreeError) -> GuardError {
        GuardError::Tree { cause }
    }
}

/// How a path leaves the root by its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EscapeWhy {
    #[error("names the root itself, not a file")]
    RootItself,
    /// Absolute, with no root to strip.
    #[error("is absolute")]
    Absolute,
    #[error("is absolute and outside the root")]
    AbsoluteOutside,
    #[error("leads outside the root")]
    LeadsOutside,
    #[error("is inside .git/")]
    InsideGit,
}

/// How a path leaves the root through its symlinks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SymlinkWhy {
    #[error("passes through too many symlinks")]
    TooManyLinks,
    /// An absolute target, and a tree with no root to hold it.
    #[error("passes through a symlink to {target} outside the root")]
    AbsoluteTarget { target: String },
    #[error("passes through a symlink ({link} -> {target}) that leads outside the root")]
    LeadsOutside { link: String, target: String },
    #[error("reaches .git/ through the symlink {link}")]
    ReachesGit { link: String },
    /// A directory on the way holds its own `.git`.
    #[error("is inside {dir}, a submodule or nested repository")]
    NestedRepository { dir: String },
    #[error("resolves to the root itself")]
    RootItself,
}

/// A patch path as shown, with the heredoc's `cd` when it applies to it.
fn shown(path: &str, cd: Option<&str>) -> String {
    match cd {
        Some(dir) if !dir.is_empty() && !path.starts_with('/') => {
            format!("{path} (after `cd {dir}`)")
        }
        _ => path.to_string(),
    }
}

impl GuardError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            GuardError::NotAFileName { .. } => ErrorCode::ParseError,
            GuardError::Escape { .. } | GuardError::Symlink { .. } => ErrorCode::PathEscape,
            GuardError::BadGlob { .. } | GuardError::BadGlobSet { .. } => ErrorCode::Usage,
            GuardError::Protected { .. } => ErrorCode::ProtectedFile,
            GuardError::Notebook { .. } => ErrorCode::UnsupportedFile,
            GuardError::StaleBase { .. } => ErrorCode::StaleFile,
            GuardError::Tree { cause } => cause.code(),
        }
    }

    /// The path the refusal is about (every message names its own).
    fn path(&self) -> Option<&str> {
        match self {
            GuardError::NotAFileName { path, .. }
            | GuardError::Escape { path, .. }
            | GuardError::Symlink { path, .. }
            | GuardError::Protected { path, .. }
            | GuardError::Notebook { path }
            | GuardError::StaleBase { path, .. } => Some(path),
            GuardError::BadGlob { .. } | GuardError::BadGlobSet { .. } | GuardError::Tree { .. } => {
                None
            }
        }
    }

    /// The next step to take, when the refusal names one.
    fn hint(&self) -> Option<Hint> {
        let hint = match self {
            GuardError::NotAFileName { .. } => "name a file: no NUL byte, no trailing `/`",
            GuardError::Escape { .. } => {
                return Some(
                    Hint::new()
                        .text("patch paths must stay inside the root")
                        .clause(Hint::new().text(" (").name(Opt::Root).text(")"))
                        .text(" and outside .git/"),
                )
            }
            GuardError::Symlink {
                why: SymlinkWhy::NestedRepository { dir },
                ..
            } => {
                return Some(
                    Hint::new().text("apply the change inside that repository").clause(
                        Hint::new()
                            .text(": ")
                            .opt(Opt::Root, Value::Text(dir.clone().into())),
                    ),
                )
            }
            GuardError::Symlink { .. } => {
                "patch paths must stay inside the root, also through symlinks"
            }
            GuardError::Protected { .. } => {
                return Some(
                    Hint::new().text("leave this file alone").clause(
                        Hint::new()
                            .text(", or drop the ")
                            .name(Opt::Protect)
                            .text(" pattern if the change is intended"),
                    ),
                )
            }
            GuardError::Notebook { .. } => {
                return Some(
                    Hint::new().text("edit notebooks with a notebook tool").clause(
                        Hint::new().text(", or pass ").on(Opt::AllowNotebooks),
                    ),
                )
            }
            GuardError::StaleBase { .. } => {
                "re-read the file and write the patch against its current content"
            }
            GuardError::BadGlob { .. } | GuardError::BadGlobSet { .. } | GuardError::Tree { .. } => {
                return None
            }
        };
        Some(Hint::from(hint))
    }
}

impl From<GuardError> for Error {
    fn from(err: GuardError) -> Error {
        if let GuardError::Tree { cause } = err {
            return cause.into();
        }
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: GuardError) -> crate::Error {
    let details = match &err {
        GuardError::StaleBase {
            expected, actual, ..
        } => Some(serde_json::json!({"expected": expected, "actual": actual})),
        _ => None,
    };
    Error::of_stage(
        err.code(),
        err.to_string(),
        err.path(),
        err.hint(),
        details,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escape_shows_the_cd_and_names_the_path() {
        let err = |cd: Option<&str>, path: &str| -> Error {
            GuardError::Escape {
                path: path.into(),
                cd: cd.map(str::to_string),
                why: EscapeWhy::LeadsOutside,
            }
            .into()
        };
        let e = err(Some("sub"), "../../x");
        assert_eq!(e.code, ErrorCode::PathEscape);
        assert_eq!(e.message, "path ../../x (after `cd sub`) leads outside the root");
        assert_eq!(e.path.as_deref(), Some("../../x"));
        assert!(!e.path_unnamed());
        assert_eq!(
            e.hint.as_deref(),
            Some("patch paths must stay inside the root (--root) and outside .git/")
        );
        assert_eq!(err(Some("sub"), "/x").message, "path /x leads outside the root");
    }

    #[test]
    fn a_nested_repository_names_its_root_in_the_hint() {
        let e: Error = GuardError::Symlink {
            path: "sub/a".into(),
            why: SymlinkWhy::NestedRepository { dir: "sub".into() },
        }
        .into();
        assert_eq!(e.code, ErrorCode::PathEscape);
        assert_eq!(e.message, "path sub/a is inside sub, a submodule or nested repository");
        assert_eq!(
            e.hint.as_deref(),
            Some("apply the change inside that repository: --root sub")
        );
        let e: Error = GuardError::Symlink {
            path: "l/x".into(),
            why: SymlinkWhy::TooManyLinks,
        }
        .into();
        assert_eq!(
            e.hint.as_deref(),
            Some("patch paths must stay inside the root, also through symlinks")
        );
    }

    #[test]
    fn each_refusal_has_its_code_and_fields() {
        let cases: [(GuardError, ErrorCode, Option<&str>); 5] = [
            (
                GuardError::NotAFileName {
                    path: "a/".into(),
                    nul: false,
                },
                ErrorCode::ParseError,
                Some("a/"),
            ),
            (
                GuardError::BadGlob {
                    glob: "a[".into(),
                    cause: "unclosed".into(),
                },
                ErrorCode::Usage,
                None,
            ),
            (
                GuardError::Protected {
                    path: "x.lock".into(),
                    glob: "*.lock".into(),
                },
                ErrorCode::ProtectedFile,
                Some("x.lock"),
            ),
            (
                GuardError::Notebook { path: "n.ipynb".into() },
                ErrorCode::UnsupportedFile,
                Some("n.ipynb"),
            ),
            (
                GuardError::StaleBase {
                    path: "a".into(),
                    expected: "dead".into(),
                    actual: "beef".into(),
                },
                ErrorCode::StaleFile,
                Some("a"),
            ),
        ];
        for (err, code, path) in cases {
            assert_eq!(err.code(), code);
            let out = Error::from(err);
            assert_eq!((out.code, out.path.as_deref()), (code, path));
        }
        let stale: Error = GuardError::StaleBase {
            path: "a".into(),
            expected: "dead".into(),
            actual: "beef".into(),
        }
        .into();
        assert_eq!(
            stale.details(),
            Some(&serde_json::json!({"expected": "dead", "actual": "beef"}))
        );
        let bad: Error = GuardError::BadGlob {
            glob: "a[".into(),
            cause: "unclosed".into(),
        }
        .into();
        assert_eq!((bad.message.as_str(), bad.hint), ("bad glob \"a[\": unclosed", None));
    }
}
