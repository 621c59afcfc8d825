//! The `apply-patch` command: a thin layer over the library. Parsing and validating the
//! arguments and rendering the outcome live in the library's `cli` module; this file only
//! hands it the process's arguments.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(apply_patch::run_cli(std::env::args_os().collect()))
}
