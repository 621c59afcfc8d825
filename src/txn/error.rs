//! Stage: commit. The refusals the transaction layer composes around a cause (a step that
//! failed, and what the transaction did about it). The cause stays a field; the message is
//! written once, when the refusal becomes the boundary [`Error`], which keeps the cause's code,
//! path and details.

use crate::Error;

/// A failed step and what the transaction did about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TxnError {
    /// A crashed transaction had to be recovered before this run, and recovering it failed.
    #[error(
        "an interrupted transaction of this root must be recovered before this run, and \
         recovering it failed: {}",
        .cause.message
    )]
    RecoveryFailed { cause: Box<Error> },
    /// A commit failed after it had renamed files, and the work tree was rolled back.
    #[error("{}; the work-tree changes were rolled back", .cause.message)]
    RolledBack { cause: Box<Error> },
    /// A file changed since it was planned against (`stale_file`), right after a crashed
    /// transaction was recovered, which is what changed it.
    #[error("{}", .cause.message)]
    StaleAfterRecovery { cause: Box<Error> },
}

impl TxnError {
    /// The next step, when this refusal names one of its own.
    fn hint(&self) -> Option<&'static str> {
        match self {
            TxnError::RecoveryFailed { .. } => Some(
                "run `apply-patch recover` as a user who can write the root and its state \
                 place, then run this command again",
            ),
            TxnError::RolledBack { .. } => None,
            TxnError::StaleAfterRecovery { .. } => Some(
                "an interrupted transaction was just recovered, which changed files this patch \
                 was planned against; run the command again",
            ),
        }
    }
}

impl From<TxnError> for Error {
    fn from(err: TxnError) -> Error {
        let message = err.to_string();
        let hint = err.hint();
        let (TxnError::RecoveryFailed { cause }
        | TxnError::RolledBack { cause }
        | TxnError::StaleAfterRecovery { cause }) = err;
        let mut out = *cause;
        out.message = message;
        if let Some(hint) = hint {
            out.hint = Some(hint.to_string());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn a_refusal_keeps_its_causes_code_path_and_details() {
        let cause = Error::new(ErrorCode::PermissionDenied, "cannot write a.txt: denied")
            .with_path("a.txt")
            .with_hint("fix the permissions")
            .with_details(serde_json::json!({"k": 1}));
        let failed: Error = TxnError::RecoveryFailed {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(failed.code, ErrorCode::PermissionDenied);
        assert_eq!(failed.path.as_deref(), Some("a.txt"));
        assert_eq!(failed.details(), cause.details());
        assert!(failed
            .message
            .ends_with("recovering it failed: cannot write a.txt: denied"));
        assert!(failed
            .hint
            .is_some_and(|h| h.contains("apply-patch recover")));
        let rolled: Error = TxnError::RolledBack {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(
            rolled.message,
            "cannot write a.txt: denied; the work-tree changes were rolled back"
        );
        assert_eq!(
            rolled.hint, cause.hint,
            "the cause's own next step still holds"
        );
    }

    #[test]
    fn a_stale_file_after_a_recovery_keeps_its_message_and_says_why() {
        let cause = Error::new(ErrorCode::StaleFile, "a.txt changed since it was read")
            .with_path("a.txt")
            .with_hint("read the file again");
        let out: Error = TxnError::StaleAfterRecovery {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(out.code, ErrorCode::StaleFile);
        assert_eq!(out.message, cause.message);
        assert!(out
            .hint
            .is_some_and(|h| h.starts_with("an interrupted transaction was just recovered")));
    }
}
