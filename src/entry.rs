//! The process entry of the command line: arguments in, output printed, exit status out.
//! `src/main.rs` is this call; other front ends (the Python wheel's `apply-patch` command and
//! `python -m apply_patch`) call it too, so every way of running the command runs the same
//! code in the same way.

use std::ffi::OsString;
use std::io::Write as _;

/// Run the `apply-patch` command line for `args` (argv\[0\] first) in this process: read the
/// patch, apply it, print to this process's standard output and error, and return the exit
/// status (SPEC §8: 0 applied, 1 refused, 2 usage error, 3 rollback failed, 4 post-check
/// failed).
pub fn run_cli(args: Vec<OsString>) -> u8 {
    let outcome = crate::cli::run(args, &crate::cli::Env::current());
    // A closed pipe (`apply-patch … | head`) is not an error worth a second message.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(&outcome.stdout);
    let _ = stdout.flush();
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    outcome.status
}
