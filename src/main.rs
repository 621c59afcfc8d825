//! The `apply-patch` command: a thin layer over the library. Parsing and validating the
//! arguments and rendering the outcome live in the library's `cli` module; this file only
//! hands it the process's arguments, and sets up what belongs to the process rather than
//! to the library (its open-file limit).

use std::process::ExitCode;

fn main() -> ExitCode {
    #[cfg(unix)]
    raise_open_file_limit();
    ExitCode::from(apply_patch::run_cli(std::env::args_os().collect()))
}

/// A patch touching thousands of folders opens a handle per folder while it commits: the
/// soft limit on open files (often 1,024) is raised to the hard one, as far as it allows.
/// Only this process's own entry does it: `run_cli` is also a library call (the Python
/// module's), and a library must not change its host's limits. (Windows has no such
/// per-process limit on handles.)
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
