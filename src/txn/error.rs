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
        }
    }
}

impl From<TxnError> for Error {
    fn from(err: TxnError) -> Error {
        let message = err.to_string();
        let hint = err.hint();
        let (TxnError::RecoveryFailed { cause } | TxnError::RolledBack { cause }) = err;
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
}
