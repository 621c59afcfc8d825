//! Build script: only the link of the `apply-patch` executable is changed, and only when asked
//! (`APPLY_PATCH_NO_PIE=1`) on Linux with glibc, where the executable is then linked as a
//! fixed-address (non-PIE) one. By default nothing is changed: the executable is
//! position-independent, as rustc links it, and its image is address-randomised.
//!
//! Why the opt-in exists: a position-independent executable carries one dynamic relocation per
//! pointer in its read-only data (about 18,500 here: vtables, string tables, clap's and gix's
//! statics), and the dynamic loader writes every one of them at start, dirtying about 80 pages
//! before `main` on every run. A fixed-address executable has them resolved at link time
//! (README "Performance" gives what that still buys, measured). A build script is the one
//! place that reaches every build of the binary (`cargo install` included: a
//! `.cargo/config.toml` or `RUSTFLAGS` would not); it can set link arguments but not
//! `-C relocation-model`, so the code stays position-independent and only the link is fixed
//! (`-no-pie` after rustc's own `-pie`; the last one wins). A C compiler too old to know
//! `-no-pie` fails the link with "unrecognized option", on which rustc itself retries without
//! every `-no-pie` (a position-independent build).
//!
//! What the opt-in gives up: the executable's own image is not randomised (ASLR still applies
//! to the stack, the heap and the shared libraries), a hardening that Debian, Fedora and
//! Ubuntu require by policy. The library, the Python module and the test executables are never
//! affected (`rustc-link-arg-bins` reaches the package's binaries only).

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=APPLY_PATCH_NO_PIE");
    let target = |key: &str| env::var(key).unwrap_or_default();
    let linux_gnu =
        target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu";
    // A static glibc build links `-static-pie`; `-no-pie` would not simply undo it.
    let crt_static = target("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    let fixed_address = env::var_os("APPLY_PATCH_NO_PIE").is_some_and(|v| v == "1");
    if linux_gnu && !crt_static && fixed_address {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
