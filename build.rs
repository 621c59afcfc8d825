//! Build script: only the link of the `apply-patch` executable is changed, and only on Linux
//! with glibc, where the executable is linked as a fixed-address (non-PIE) one.
//!
//! Why: a position-independent executable carries one dynamic relocation per pointer in its
//! read-only data (about 18,500 here: vtables, string tables, clap's and gix's statics), and
//! the dynamic loader writes every one of them at start, dirtying about 80 pages (340 KB)
//! before `main` on every run — about 35% of the page faults of `apply-patch --version` and
//! ~0.1–0.4 ms per run on the development VM. A fixed-address executable has them resolved at
//! link time. A build script is the one place that reaches every build of the binary
//! (`cargo install` included: a `.cargo/config.toml` or `RUSTFLAGS` would not); it can set
//! link arguments but not `-C relocation-model`, so the code stays position-independent and
//! only the link is fixed (`-no-pie` after rustc's own `-pie`; the last one wins). A C
//! compiler too old to know `-no-pie` fails the link with "unrecognized option", on which
//! rustc itself retries without every `-no-pie` (a position-independent build, as before).
//!
//! What is given up: the executable's own image is not randomised (ASLR still applies to the
//! stack, the heap and the shared libraries). `APPLY_PATCH_PIE=1` at build time keeps the
//! default position-independent link (for distributions whose policy requires PIE).
//! The library, the Python module and the test executables are not affected
//! (`rustc-link-arg-bins` reaches the package's binaries only).

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=APPLY_PATCH_PIE");
    let target = |key: &str| env::var(key).unwrap_or_default();
    let linux_gnu =
        target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu";
    // A static glibc build links `-static-pie`; `-no-pie` would not simply undo it.
    let crt_static = target("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    let keep_pie = env::var_os("APPLY_PATCH_PIE").is_some_and(|v| v == "1");
    if linux_gnu && !crt_static && !keep_pie {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
