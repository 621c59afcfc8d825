//! Stage: agent post-check. `--post-check CMD` runs a command (`sh -c CMD`, in the root, no
//! standard input) after the commit — a build, a test, a linter — and reports its outcome in
//! the report's `verification` field. Whether a failure rolls the transaction back
//! (`--rollback-on-fail`) is the caller's decision; this module only runs and reports.
//!
//! Bounded: the command is killed after its timeout (default [`DEFAULT_TIMEOUT`]); only the
//! last 4 KiB of each output stream are kept (`crate::shell`). Must not write the work tree itself.

use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use crate::error::Error;
use crate::shell::tail;

/// How long a post-check may run before it is killed: 10 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The `verification` object of the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Verification {
    pub command: String,
    /// `passed`, `failed` (non-zero exit or killed by a signal) or `timed_out`.
    pub status: String,
    /// The exit code (None when killed by a signal or timed out).
    pub exit_code: Option<i32>,
    /// The last `TAIL_BYTES` (4 KiB) of standard output (lossily decoded).
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// The command was run with `--rollback-on-fail` and failed: the commit was undone.
    #[serde(default)]
    pub rolled_back: bool,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }

    /// The error a failed check becomes with `--rollback-on-fail`.
    pub fn to_error(&self) -> Error {
        crate::agent::AgentError::PostCheckFailed {
            verification: Box::new(self.clone()),
        }
        .into()
    }
}

/// Run `command` through `sh -c` in `root` and wait for it (at most `timeout`).
pub fn run(
    root: &Path,
    command: &str,
    timeout: Duration,
) -> Result<Verification, crate::agent::AgentError> {
    let mut cmd = crate::shell::command(root, command);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| crate::agent::AgentError::io("sh", "cannot run the post-check with", e))?;
    // Drain both pipes on their own threads so a chatty command never blocks on a full pipe.
    let out = child.stdout.take().map(|s| thread::spawn(move || tail(s)));
    let err = child.stderr.take().map(|s| thread::spawn(move || tail(s)));
    let status = crate::shell::wait(&mut child, timeout)
        .map_err(|e| crate::agent::AgentError::io("sh", "cannot wait for the post-check", e))?;
    let timed_out = status.is_none();
    let join =
        |h: Option<thread::JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    let exit_code = status.and_then(|s| s.code());
    let passed = status.is_some_and(|s| s.success());
    Ok(Verification {
        command: command.to_string(),
        status: if timed_out {
            "timed_out"
        } else if passed {
            "passed"
        } else {
            "failed"
        }
        .to_string(),
        exit_code,
        stdout_tail: join(out),
        stderr_tail: join(err),
        rolled_back: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::ErrorCode;
    use super::*;

    #[test]
    #[cfg_attr(
        windows,
        ignore = "runs sh, which Windows has only with Git Bash or MSYS"
    )]
    fn passing_and_failing_commands_are_reported() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("marker"), b"here").expect("write");
        let v = run(dir.path(), "cat marker; echo oops >&2", DEFAULT_TIMEOUT).expect("runs");
        assert!(v.passed());
        assert_eq!(v.stdout_tail, "here");
        assert_eq!(v.stderr_tail, "oops\n");
        let v = run(dir.path(), "exit 3", DEFAULT_TIMEOUT).expect("runs");
        assert_eq!((v.status.as_str(), v.exit_code), ("failed", Some(3)));
        let e = v.to_error();
        assert_eq!(e.code, ErrorCode::PostCheckFailed);
        assert!(e.message.contains("exited with status 3"), "{}", e.message);
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "runs sh, which Windows has only with Git Bash or MSYS"
    )]
    fn long_output_keeps_its_tail() {
        let dir = tempfile::tempdir().expect("temp dir");
        let v = run(dir.path(), "seq 1 20000", DEFAULT_TIMEOUT).expect("runs");
        assert!(v.stdout_tail.len() <= crate::shell::TAIL_BYTES);
        assert!(v.stdout_tail.ends_with("19999\n20000\n"));
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "runs sh, which Windows has only with Git Bash or MSYS"
    )]
    fn a_hanging_command_times_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let v = run(dir.path(), "sleep 5", Duration::from_millis(200)).expect("runs");
        assert_eq!(v.status, "timed_out");
        assert_eq!(v.exit_code, None);
    }
}
