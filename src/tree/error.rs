//! Stage: plan (input side). Why a tree could not say what a path holds: the operating
//! system's refusal of a look at the disk, kept with its path and words, or a failure of a
//! step outside the tree (the root's check, the transaction layer's read, git's checks of
//! a path), kept whole. The message is written once, when a refusal becomes the boundary
//! [`Error`].

use crate::error::{Error, ErrorCode};
use crate::txn::IoFailure;

/// Why a [`Tree`](super::Tree) could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    /// The operating system refused a look at `path` (`what`: "cannot inspect", "cannot read
    /// the link"): `permission_denied` or `io_error`, as [`Error::io`] words it.
    #[error("{what} {path}: {cause}")]
    Io {
        path: String,
        what: &'static str,
        #[source]
        cause: IoFailure,
    },
    /// A step outside the tree failed (the root's check, the transaction layer's read of a
    /// file, git's checks of a path): its error is kept whole and becomes the boundary error
    /// unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for TreeError {
    fn from(cause: Error) -> TreeError {
        TreeError::Outside {
            cause: Box::new(cause),
        }
    }
}

/// The transaction layer's read of the disk (the snapshot reader), kept whole: the same
/// boundary error as before, with the transaction's refusal as its source.
impl From<crate::txn::TxnError> for TreeError {
    fn from(cause: crate::txn::TxnError) -> TreeError {
        Error::from(cause).into()
    }
}

impl TreeError {
    /// The operating system's refusal of `what` on `path` (see [`TreeError::Io`]), kept as
    /// its kind and words (and its OS error number).
    pub(crate) fn io(path: &str, what: &'static str, cause: &std::io::Error) -> TreeError {
        let copy = match cause.raw_os_error() {
            Some(n) => std::io::Error::from_raw_os_error(n),
            None => std::io::Error::new(cause.kind(), cause.to_string()),
        };
        TreeError::Io {
            path: path.to_string(),
            what,
            cause: copy.into(),
        }
    }

    /// The stable error code: a failure from outside keeps its own.
    pub fn code(&self) -> ErrorCode {
        match self {
            TreeError::Io { cause, .. } => {
                if cause.io().kind() == std::io::ErrorKind::PermissionDenied {
                    ErrorCode::PermissionDenied
                } else {
                    ErrorCode::IoError
                }
            }
            TreeError::Outside { cause } => cause.code,
        }
    }
}

impl From<TreeError> for Error {
    fn from(err: TreeError) -> Error {
        match err {
            TreeError::Outside { cause } => *cause,
            TreeError::Io { ref path, .. } => Error::new(err.code(), err.to_string())
                .with_path(path.clone())
                .caused_by(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A refused look at the disk reads as [`Error::io`] wrote it (code, message, path,
    /// JSON), with the failure itself at the end of its chain.
    #[test]
    fn an_io_refusal_reads_as_error_io_did() {
        for failure in [
            std::io::Error::from_raw_os_error(13),
            std::io::Error::other("disk gone"),
        ] {
            let typed = TreeError::io("a/b.txt", "cannot inspect", &failure);
            let e = Error::from(typed.clone());
            let wide = Error::io("a/b.txt", "cannot inspect", &failure);
            assert_eq!(e, wide);
            assert_eq!(
                serde_json::to_string(&e).expect("serialises"),
                serde_json::to_string(&wide).expect("serialises")
            );
            assert_eq!(typed.code(), wide.code);
            assert_eq!(e.terminal_message(), wide.terminal_message());
            let source = e.source().and_then(|s| s.downcast_ref::<TreeError>());
            assert_eq!(source, Some(&typed));
            let io = e
                .source()
                .and_then(|s| s.source())
                .and_then(|s| s.source())
                .and_then(|s| s.downcast_ref::<std::io::Error>())
                .expect("the I/O failure ends the chain");
            assert_eq!(io.to_string(), failure.to_string());
            assert_eq!(io.raw_os_error(), failure.raw_os_error());
        }
    }

    /// An error from outside the tree passes through whole: the identical error (code,
    /// message, path, hint, details), its source chain the original's.
    #[test]
    fn an_error_from_outside_passes_through_unchanged() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let original = Error::io("a.txt", "cannot read", &io)
            .with_hint("h")
            .with_details(serde_json::json!({"k": 1}));
        let through = TreeError::from(original.clone());
        assert_eq!(through.code(), ErrorCode::PermissionDenied);
        assert_eq!(through.to_string(), original.message);
        let back = Error::from(through);
        assert_eq!(back, original);
        assert_eq!(back.hint.as_deref(), Some("h"));
        assert_eq!(
            serde_json::to_string(&back).expect("serialises"),
            serde_json::to_string(&original).expect("serialises")
        );
        let source = back.source().map(|s| s.to_string());
        assert_eq!(source.as_deref(), Some("denied"));
    }

    #[test]
    fn a_tree_error_stays_small() {
        assert!(std::mem::size_of::<TreeError>() < 128);
    }
}
