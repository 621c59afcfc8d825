//! The `apply-patch` command: a thin layer over the library.

fn main() -> std::process::ExitCode {
    eprintln!("apply-patch: the command line is being built (see the README)");
    std::process::ExitCode::from(2)
}
