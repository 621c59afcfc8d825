//! Why the root's repository could not be used: gix could not open the repository its
//! discovery found, or the repository is another user's ([`TrustError`]). The message is
//! written once, when a refusal becomes the boundary [`Error`].

#[cfg(feature = "git")]
use super::trust::TrustError;
use super::GixFailure;
use crate::error::{Error, ErrorCode};

/// Why the discovery of the root's repository failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RootError {
    /// gix found a repository and could not open it: what was done, then gix's causes.
    #[error("{0}")]
    Unopenable(#[source] GixFailure),
    /// The repository is another user's, and no `safe.directory` names it.
    #[cfg(feature = "git")]
    #[error("{cause}")]
    Untrusted {
        #[source]
        cause: TrustError,
    },
}

#[cfg(feature = "git")]
impl From<TrustError> for RootError {
    fn from(cause: TrustError) -> RootError {
        RootError::Untrusted { cause }
    }
}

impl RootError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            RootError::Unopenable(failure) => failure.code(),
            #[cfg(feature = "git")]
            RootError::Untrusted { .. } => ErrorCode::Usage,
        }
    }
}

impl From<RootError> for Error {
    fn from(err: RootError) -> Error {
        match err {
            #[cfg(feature = "git")]
            RootError::Untrusted { cause } => cause.into(),
            RootError::Unopenable(_) => Error::new(err.code(), err.to_string()).caused_by(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A repository gix cannot open reads as before (gix's code and words, no path, no
    /// hint), with the typed refusal as its source.
    #[test]
    fn an_unopenable_repository_keeps_gix_words_and_its_code() {
        let err = |denied| {
            RootError::Unopenable(GixFailure {
                message: "cannot open the git repository: bad config".into(),
                denied,
            })
        };
        let e = Error::from(err(false));
        assert_eq!(
            e,
            Error::new(
                ErrorCode::IoError,
                "cannot open the git repository: bad config"
            )
        );
        assert_eq!((e.path.as_deref(), e.hint.as_deref()), (None, None));
        let source = e.source().and_then(|s| s.downcast_ref::<RootError>());
        assert_eq!(source, Some(&err(false)));
        assert_eq!(Error::from(err(true)).code, ErrorCode::PermissionDenied);
    }

    /// Another user's repository: the trust refusal itself, whole (code, message, path,
    /// hint, details), with it as the source.
    #[cfg(feature = "git")]
    #[test]
    fn an_untrusted_repository_is_the_trust_refusal_unchanged() {
        let trust = TrustError::NotOwned {
            repo: "/srv/r".into(),
            path: "/srv/r/.git".into(),
            owner: 1234,
        };
        let e = Error::from(RootError::from(trust.clone()));
        let direct = Error::from(trust.clone());
        assert_eq!(e, direct);
        assert_eq!(e.code, ErrorCode::Usage);
        assert_eq!(
            serde_json::to_string(&e).expect("serialises"),
            serde_json::to_string(&direct).expect("serialises")
        );
        let source = e.source().and_then(|s| s.downcast_ref::<TrustError>());
        assert_eq!(source, Some(&trust));
        // Through the git integration too.
        let git = crate::git::GitError::from(RootError::from(trust));
        assert_eq!(Error::from(git), direct);
    }
}
