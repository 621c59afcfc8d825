//! The `apply-patch` command: a thin layer over the library. Parsing and validating the
//! arguments and rendering the outcome live in `cli`; this file only prints.

mod cli;

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = cli::run(std::env::args_os().collect(), &cli::Env::current());
    // A closed pipe (`apply-patch … | head`) is not an error worth a second message.
    let _ = std::io::stdout().write_all(&outcome.stdout);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.status)
}
