//! The process entry of the command line: arguments in, output printed, exit status out.
//! `src/main.rs` is this call; other front ends (the Python wheel's `apply-patch` command and
//! `python -m apply_patch`) call it too, so every way of running the command runs the same
//! code in the same way. It changes nothing of the process it runs in beyond printing: a
//! library call must leave its host's limits alone (the binary raises its open-file limit in
//! `src/main.rs`, before calling it).

use std::ffi::OsString;
use std::io::Write as _;

/// Run the `apply-patch` command line for `args` (argv\[0\] first) in this process: read the
/// patch, apply it, print to this process's standard output and error, and return the exit
/// status (SPEC §8: 0 applied, 1 refused, 2 usage error, 3 rollback failed, 4 post-check
/// failed). Output that cannot be written is reported on standard error and turns a success
/// into status 1 (the outcome itself, a commit, stands); a closed pipe is not reported.
///
/// The process's limits are left as they are: a process that runs the command as its whole
/// job (the binary, the wheel's `apply-patch` command) raises its own open-file limit first.
pub fn run_cli(args: Vec<OsString>) -> u8 {
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
