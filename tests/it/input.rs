//! Issue 23, inputs: what the PATCH argument may be (never an arbitrary file under the Codex
//! name, never a FIFO or device, never over the size limit), parse errors that quote no input
//! that is not a patch, one patch per input, and a library entry that leaves its host's
//! process limits alone.

/// `run_cli` is also a library call (the Python module's): it must not raise the host
/// process's open-file limit; only the binary's `main` does. The soft limit is first set
/// just below the hard one (still generous, so tests running beside this one do not notice)
/// so that a raise would show.
#[cfg(unix)]
#[test]
fn run_cli_leaves_the_hosts_open_file_limit_alone() {
    let get = || {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct passed.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        assert!(ok, "getrlimit");
        limit
    };
    let set = |limit: &libc::rlimit| {
        // SAFETY: setrlimit only reads the struct passed.
        let ok = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, limit) } == 0;
        assert!(ok, "setrlimit");
    };
    let before = get();
    let low = if before.rlim_max == libc::RLIM_INFINITY {
        1 << 16
    } else {
        before.rlim_max - 1
    };
    set(&libc::rlimit {
        rlim_cur: low.min(before.rlim_cur),
        rlim_max: before.rlim_max,
    });
    let lowered = get().rlim_cur;
    let root = tempfile::tempdir().expect("a temp dir");
    let status = apply_patch::run_cli(vec![
        "apply-patch".into(),
        "--root".into(),
        root.path().into(),
        "recover".into(),
    ]);
    let after = get().rlim_cur;
    set(&before);
    assert_eq!(status, 0);
    assert_eq!(after, lowered, "run_cli changed the host's soft limit");
}
