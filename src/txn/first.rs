//! Stage: commit, its step zero, taken before anything is planned. A crash leaves a journal
//! and a tree that may be half old, half new; a run that planned against that tree would
//! blame its own patch ("partly applied", "no such file"), or find it "already applied" in the
//! renamed half while a later run rolls that half back. So every run that reads the tree
//! first finishes or rolls back a crashed transaction of its root (SPEC §6), under the root's
//! lock, and only then plans.
//!
//! A run that must not write (`--check`) or cannot (no permission, a read-only mount) refuses
//! instead, naming `apply-patch recover`. Must not plan, and writes only through
//! [`recover_with`] (the single recovery entry point).
//!
//! [`recover_first`] is one call for every entry point (the plain and git applies, the agent
//! apply, a preview's confirm, the MCP tools), so the future unified pipeline takes it as is.

use super::lock::Lock;
use super::{recover_with, TxnError, TxnOptions, TxnWarning};
use crate::state::safety::{self, Keeps};
use crate::state::StateDir;
use crate::{Error, ErrorCode};
use crate::spelling::Hint;

/// What the run about to plan may do to the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// It may write: a crashed transaction is recovered first.
    Write,
    /// It must not write (`--check`): a crashed transaction is refused.
    ReadOnly,
}

/// Finishes or rolls back a transaction a crash left under the root of `opts` (see the module
/// docs); returns the `recovered` warnings (none when there was nothing to recover).
///
/// When no journal is there, this only looks: no lock, no state folder created.
pub fn recover_first(opts: &TxnOptions, access: Access) -> Result<Vec<TxnWarning>, Error> {
    let state = opts.state_dir()?;
    if !journal_present(&state) {
        return Ok(Vec::new());
    }
    // What stands there must be a journal folder of the user's before anything else is said
    // about it: a symlink, a file or a FIFO planted there is named, never "recovered".
    safety::check_folder(&state.journal_dir(), Keeps::JournalFolder)?;
    match access {
        Access::Write => match recover_with(&state) {
            Ok(report) => Ok(report.warnings()),
            Err(e) => Err(cannot_recover(e.into())),
        },
        Access::ReadOnly => refuse_read_only(&state, opts),
    }
}

/// A journal folder stands in the state place (a transaction runs, or one crashed).
fn journal_present(state: &StateDir) -> bool {
    // An error other than "not found" (a folder we may not search) counts as present: the
    // recovery then reports it properly rather than the plan running against a mixed tree.
    !matches!(
        std::fs::symlink_metadata(state.journal_dir()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    )
}

/// `--check` with a journal present: a live transaction is waited for (its lock); a crashed
/// one is refused, since recovering it would write.
fn refuse_read_only(state: &StateDir, opts: &TxnOptions) -> Result<Vec<TxnWarning>, Error> {
    let lock = match Lock::acquire(&state.lock_path(), opts.lock_wait) {
        Ok(lock) => lock,
        Err(e) if e.code() == ErrorCode::Busy => return Err(e.into()),
        Err(e) => return Err(cannot_recover(e)),
    };
    if !journal_present(state) {
        return Ok(Vec::new());
    }
    drop(lock);
    Err(TxnError::UnfinishedUnderCheck {
        journal: state.journal_dir(),
    }
    .into())
}

/// Recovery was needed and failed (no permission, a read-only mount, a file that would not
/// come back): the run is refused, naming `apply-patch recover`.
fn cannot_recover(cause: TxnError) -> Error {
    let e = Error::from(cause.clone());
    // Their own messages already say what to do; for a state file that is not apply-patch's
    // (or not the user's), `apply-patch recover` would meet the same.
    if matches!(e.code, ErrorCode::Busy | ErrorCode::RollbackFailed) || safety::is_refusal(&e) {
        return e;
    }
    // A journal that is not this root's, damaged or left over: its own next step (what to
    // remove, and that no file is to be restored from it) stays, since `apply-patch
    // recover` would refuse it the same way.
    let own = e
        .details()
        .is_some_and(|d| d.get("journal").is_some())
        .then(|| e.hint.clone())
        .flatten();
    let mut out: Error = TxnError::RecoveryFailed {
        cause: Box::new(cause),
    }
    .into();
    if own.is_some() {
        out.set_hint(own.map(Hint::from));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts_in(tmp: &std::path::Path) -> TxnOptions {
        let root = tmp.join("root");
        std::fs::create_dir_all(&root).expect("mkdir root");
        let state = StateDir::outside_git(&root, tmp.join("state")).expect("state");
        TxnOptions {
            state: Some(state),
            ..TxnOptions::new(root)
        }
    }

    #[test]
    fn without_a_journal_nothing_is_created() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let opts = opts_in(tmp.path());
        for access in [Access::Write, Access::ReadOnly] {
            let warnings = recover_first(&opts, access).expect("nothing to do");
            assert!(warnings.is_empty());
        }
        assert!(!tmp.path().join("state").exists(), "no state folder made");
    }

    #[test]
    fn read_only_refuses_a_journal_and_names_recover() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let opts = opts_in(tmp.path());
        let state = opts.state_dir().expect("state");
        std::fs::create_dir_all(state.base()).expect("state folder");
        std::fs::create_dir(state.journal_dir()).expect("journal folder");
        let err = recover_first(&opts, Access::ReadOnly).expect_err("refused");
        assert_eq!(err.code, ErrorCode::Busy);
        assert!(err
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("apply-patch recover"));
        assert!(state.journal_dir().exists(), "left alone");
        // An empty journal folder: nothing was touched; a writing run just removes it.
        assert!(recover_first(&opts, Access::Write)
            .expect("recovered")
            .is_empty());
        assert!(!state.journal_dir().exists());
    }
}
