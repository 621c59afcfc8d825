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
        TreeError::Io {
            path: path.to_string(),
            what,
            cause: IoFailure::copy_of(cause),
        }
    }

    /// The stable error code: a failure from outside keeps its own.
    pub fn code(&self) -> ErrorCode {
        match self {
            TreeError::Io { cause, .. } => cause.code(),
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
    use crate::error::stage_checks::{foreign, passes_through, reads_as_error_io};

    /// A refused look at the disk reads as [`Error::io`] wrote it, with the failure itself at
    /// the end of its chain.
    #[test]
    fn an_io_refusal_reads_as_error_io_did() {
        for failure in [
            std::io::Error::from_raw_os_error(13),
            std::io::Error::other("disk gone"),
        ] {
            let typed = TreeError::io("a/b.txt", "cannot inspect", &failure);
            let code = typed.code();
            reads_as_error_io(typed, code, "a/b.txt", "cannot inspect", &failure);
        }
    }

    /// An error from outside the tree passes through whole.
    #[test]
    fn an_error_from_outside_passes_through_unchanged() {
        passes_through(&foreign(), TreeError::code);
    }

    #[test]
    fn a_tree_error_stays_small() {
        assert!(std::mem::size_of::<TreeError>() < 128);
    }
}
