//! Stage: commit. One transaction at a time per root: an exclusive lock on a lock file in
//! the state place (`File::try_lock`: `flock` on Unix, `LockFileEx` on Windows). The kernel
//! drops the lock when the holder dies (even by SIGKILL), so a crash never leaves a stale
//! lock; the crash's journal is what the next run recovers. A second run waits about 2 s
//! with backoff, then fails with `busy`. The lock file is opened as every state file is
//! ([`super::place`]: no symlink followed, no wait on a FIFO, a regular file only). Must not
//! touch the work tree.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::state::StateDir;
use super::TxnError;

/// How long a second run waits for the lock before `busy`.
pub const WAIT: Duration = Duration::from_secs(2);

/// A held lock; dropping it (or the process dying) releases it.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the lock at `path`, waiting up to `wait` with exponential backoff.
    pub fn acquire(path: &Path, wait: Duration) -> Result<Lock, TxnError> {
        let shown = path.display().to_string();
        let file = open(path)?;
        Lock::take(file, &shown, wait)
    }

    /// [`Lock::acquire`] of a state place's lock, the state folder created first when it is
    /// missing (only then: it exists from the first run on, and a `mkdir` that fails with
    /// "exists" on every run is two system calls for nothing).
    pub fn acquire_in(state: &StateDir, wait: Duration) -> Result<Lock, TxnError> {
        let path = state.lock_path();
        let shown = path.display().to_string();
        let file = match open(&path) {
            Err(_) if !state.base().exists() => {
                state.ensure()?;
                open(&path)
            }
            other => other,
        }?;
        Lock::take(file, &shown, wait)
    }

    fn take(file: File, shown: &str, wait: Duration) -> Result<Lock, TxnError> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(TryLockError::Error(e)) => return Err(TxnError::io(shown, "cannot lock", e)),
            }
            let waited = start.elapsed();
            if waited >= wait {
                return Err(busy(shown, waited));
            }
            std::thread::sleep(pause.min(wait - waited));
            pause = (pause * 2).min(Duration::from_millis(250));
        }
    }
}

fn open(path: &Path) -> Result<File, TxnError> {
    Ok(super::place::open_file(
        path,
        OpenOptions::new().create(true).truncate(false).write(true),
        "cannot open the lock file",
    )?)
    .map(|(file, _)| file)
}

fn busy(lock: &str, waited: Duration) -> TxnError {
    TxnError::Busy {
        lock: lock.to_string(),
        waited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn a_second_lock_is_busy_until_the_first_is_dropped() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let path = tmp.path().join("lock");
        let first = Lock::acquire(&path, WAIT).expect("first lock");
        let err = Lock::acquire(&path, Duration::from_millis(50)).expect_err("busy");
        assert_eq!(err.code(), ErrorCode::Busy);
        drop(first);
        Lock::acquire(&path, Duration::from_millis(50)).expect("free again");
    }

    #[test]
    fn a_lock_in_a_state_place_creates_its_folder_only_when_missing() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state/deep")).expect("state");
        let first = Lock::acquire_in(&state, WAIT).expect("folder made, lock taken");
        assert!(state.lock_path().is_file());
        let err = Lock::acquire_in(&state, Duration::from_millis(50)).expect_err("busy");
        assert_eq!(err.code(), ErrorCode::Busy);
        drop(first);
        Lock::acquire_in(&state, Duration::from_millis(50)).expect("free again");
    }
}
