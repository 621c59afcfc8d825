//! Running a caller's command line (`sh -c CMD` in the root) for the hooks that run one: the
//! post-check (after the commit) and the formatters (before it). The command runs in a
//! process group of its own, so that a timeout kills its children too (they would otherwise
//! keep the output pipes open); only the last [`TAIL_BYTES`] of a diagnostic stream are kept.
//! Runs only what the caller named; writes nothing itself.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

/// How much of a diagnostic stream is kept: its last 4 KiB.
pub(crate) const TAIL_BYTES: usize = 4096;

/// `sh -c command` in `root`, in a process group of its own; the caller sets the streams.
pub(crate) fn command(root: &Path, command: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(root);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

/// Wait for `child` at most `timeout`: its exit status, or None when it ran out of time and
/// was killed (with its process group). A failure to wait kills it too.
pub(crate) fn wait(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(child);
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(child);
                let _ = child.wait();
                return Err(e);
            }
        }
    }
}

fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group `command` made for
        // the child; it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

/// A stream read to its end, keeping only its last [`TAIL_BYTES`] (lossily decoded).
pub(crate) fn tail(mut r: impl Read) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * TAIL_BYTES {
                    kept.drain(..kept.len() - TAIL_BYTES);
                }
            }
        }
    }
    if kept.len() > TAIL_BYTES {
        kept.drain(..kept.len() - TAIL_BYTES);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_only() {
        let long = "x".repeat(3 * TAIL_BYTES) + "end";
        let kept = tail(long.as_bytes());
        assert_eq!(kept.len(), TAIL_BYTES);
        assert!(kept.ends_with("end"));
        assert_eq!(tail(&b"short"[..]), "short");
    }

    #[cfg(unix)]
    #[test]
    fn a_command_past_its_timeout_is_killed_with_its_children() {
        let root = std::env::temp_dir();
        let mut child = command(&root, "sleep 30 & sleep 30")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("sh runs");
        let started = Instant::now();
        assert!(wait(&mut child, Duration::from_millis(200))
            .expect("waits")
            .is_none());
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
