//! The process entry of the command line: arguments in, output printed, exit status out.
//! `src/main.rs` is this call; other front ends (the Python wheel's `apply-patch` command and
//! `python -m apply_patch`) call it too, so every way of running the command runs the same
//! code in the same way.

use std::ffi::OsString;
use std::io::Write as _;

/// Run the `apply-patch` command line for `args` (argv\[0\] first) in this process: read the
/// patch, apply it, print to this process's standard output and error, and return the exit
/// status (SPEC §8: 0 applied, 1 refused, 2 usage error, 3 rollback failed, 4 post-check
/// failed). Output that cannot be written is reported on standard error and turns a success
/// into status 1 (the outcome itself, a commit, stands); a closed pipe is not reported.
pub fn run_cli(args: Vec<OsString>) -> u8 {
    #[cfg(unix)]
    raise_open_file_limit();
    let outcome = crate::cli::run(args, &crate::cli::Env::current());
    let mut status = outcome.status;
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(&outcome.stdout)
        .and_then(|()| stdout.flush());
    let mut stderr = outcome.stderr;
    match written {
        // A closed pipe (`apply-patch … | head`) is not an error worth a second message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        // Output that could not be written (a full disk, a closed descriptor) must not pass
        // for a report that was read: say so, and fail. The outcome itself (a commit) stands.
        Err(e) => {
            stderr.push_str(&format!(
                "apply-patch: cannot write the output: {e} (the command itself {})\n",
                if status == 0 { "succeeded" } else { "failed" }
            ));
            if status == 0 {
                status = 1;
            }
        }
        Ok(()) => {}
    }
    let _ = std::io::stderr().write_all(stderr.as_bytes());
    status
}

/// A patch touching thousands of folders opens a handle per folder while it commits: the
/// soft limit on open files (often 1,024) is raised to the hard one, as far as it allows.
/// (Windows has no such per-process limit on handles.)
#[cfg(unix)]
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            // An unlimited hard limit is refused above the kernel's own (`nr_open`, 2^20 by
            // default): then ask for that. A refusal leaves the limit as it was.
            for want in [limit.rlim_max, 1 << 20] {
                let raised = libc::rlimit {
                    rlim_cur: want.min(limit.rlim_max),
                    rlim_max: limit.rlim_max,
                };
                if raised.rlim_cur > limit.rlim_cur
                    && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0
                {
                    break;
                }
            }
        }
    }
}
