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

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::assert_cli_snapshot;
use crate::util::TempTree;

const AGENT: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n";
const SECRET: &str = "root:$6$saltsecret$hash:19000:0:99999:7:::\n";

fn tree() -> TempTree {
    TempTree::with(&[("a.txt", "one\ntwo\nthree\n"), ("secret.txt", SECRET)])
}

/// What a run printed and its status, for runs that must end by themselves.
struct Ended {
    stdout: String,
    stderr: String,
    status: i32,
}

/// Run `cmd`, failing the test (and killing the run) when it has not ended after 30 s: a
/// FIFO or device must never make a run wait or read forever.
fn ends(mut cmd: Command, stdin: Stdio) -> Ended {
    let mut child = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    Ended {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code().unwrap_or(-1),
    }
}

fn binary(t: &TempTree, args: &[&OsStr]) -> Command {
    let mut cmd = t.command(env!("CARGO_BIN_EXE_apply-patch"));
    cmd.args(args);
    cmd
}

/// Item 3: under the name `apply_patch` the argument is the patch text, never a file name:
/// `apply_patch /etc/shadow` must not read the file, nor quote it in its error.
#[test]
fn the_drop_in_never_opens_its_argument() {
    let t = tree();
    let secret = t.root().join("secret.txt");
    for arg in [OsStr::new("secret.txt"), secret.as_os_str()] {
        let out = t.run_as_codex(&[arg], "");
        assert_eq!(out.status, 1, "{}", out.normalized());
        assert!(out.stderr.contains("no patch found"), "{}", out.stderr);
        assert!(!out.stderr.contains("saltsecret"), "leaks: {}", out.stderr);
    }
    // `-i FILE` still reads a file, as standard input does.
    let patch = t.outside("fix.patch");
    std::fs::write(&patch, AGENT).expect("write the patch");
    let out = t.run_as_codex(&[OsStr::new("-i"), patch.as_os_str()], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
    let out = t.run_as_codex(&[OsStr::new("-i"), secret.as_os_str()], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert!(!out.stderr.contains("saltsecret"), "leaks: {}", out.stderr);
}

/// Item 3: input holding no patch is refused without quoting any of it, in human output and
/// in JSON; other parse errors quote at most the offending line, cut to 80 characters.
#[test]
fn parse_errors_quote_no_input_that_holds_no_patch_and_at_most_80_characters() {
    let t = tree();
    let out = t.run(&["secret.txt"], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert!(!out.stderr.contains("saltsecret"), "leaks: {}", out.stderr);
    assert_cli_snapshot!("input_no_patch_quotes_nothing", out);
    let json = t.run(&["--json", "secret.txt"], "");
    assert_eq!(json.json()["error"]["code"], "parse_error");
    assert!(
        !json.stdout.contains("saltsecret"),
        "leaks: {}",
        json.stdout
    );
    for format in ["agent", "unified", "json"] {
        let out = t.run(&["--format", format, "secret.txt"], "");
        assert_eq!(out.status, 1, "{format}: {}", out.normalized());
        assert!(
            !out.stderr.contains("saltsecret"),
            "{format} leaks: {}",
            out.stderr
        );
    }
    // A patch whose offending line is long: 80 of its characters are shown.
    let long = format!(
        "*** Begin Patch\n*** Frobnicate File: {}\n*** End Patch\n",
        "x".repeat(500)
    );
    let out = t.run(&[&long], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    let widest = out
        .stderr
        .lines()
        .map(|l| l.chars().filter(|&c| c == 'x').count());
    assert!(widest.max().unwrap_or(0) <= 80, "{}", out.stderr);
}

/// Item 3: PATCH must be a regular file; a FIFO is opened without waiting for a writer and a
/// device is never read.
#[cfg(unix)]
#[test]
fn a_fifo_device_or_folder_as_patch_is_a_usage_error_at_once() {
    let t = tree();
    let fifo = t.outside("fifo");
    let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("no NUL");
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
    let folder = t.outside("state");
    for (path, kind) in [
        (fifo.as_os_str(), "a FIFO"),
        (OsStr::new("/dev/zero"), "a device"),
        (folder.as_os_str(), "a folder"),
    ] {
        for flag in [None, Some("-i")] {
            let mut args: Vec<&OsStr> = flag.iter().map(OsStr::new).collect();
            args.push(path);
            let out = ends(binary(&t, &args), Stdio::null());
            assert_eq!(out.status, 2, "{path:?}: {}", out.stderr);
            assert!(
                out.stderr
                    .contains(&format!("is {kind}: PATCH must be a regular file")),
                "{path:?}: {}",
                out.stderr
            );
        }
    }
    assert_eq!(t.read_str("a.txt"), "one\ntwo\nthree\n");
}

/// Item 3: input over 1 GiB is refused before it is read whole — as PATCH, with `-i`, and on
/// standard input (a sparse file: nothing is written to the disk).
#[test]
fn input_over_the_size_limit_is_refused_before_it_is_read() {
    let t = tree();
    let big = t.outside("big.patch");
    let file = std::fs::File::create(&big).expect("create");
    file.set_len((1 << 30) + 1).expect("a sparse file");
    let started = Instant::now();
    let runs = [
        (vec![big.as_os_str()], Stdio::null()),
        (vec![OsStr::new("-i"), big.as_os_str()], Stdio::null()),
        (
            vec![],
            Stdio::from(std::fs::File::open(&big).expect("open")),
        ),
        (
            vec![OsStr::new("-")],
            Stdio::from(std::fs::File::open(&big).expect("open")),
        ),
    ];
    for (args, stdin) in runs {
        let out = ends(binary(&t, &args), stdin);
        assert_eq!(out.status, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("larger than the 1 GiB limit (1073741825 bytes)"),
            "{}",
            out.stderr
        );
        assert!(out.stdout.is_empty());
    }
    // Refused on its size, not after reading a gigabyte four times.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Items 3 and 10: an argument holding a line break is patch text, even when a file of that
/// very name exists (text wins: a file name almost never holds a line break, patch text
/// almost always does; without one, an existing file is the file).
#[cfg(unix)]
#[test]
fn an_argument_with_a_line_break_is_text_even_when_a_file_has_that_name() {
    let t = tree();
    t.write(
        AGENT,
        b"*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n",
    );
    let out = t.run(&[AGENT], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
}

/// Item 4: prose quoting a diff before the real envelope — the quoted diff must not be
/// applied (nor the envelope dropped): two patches, a parse error naming where each begins,
/// through the command line and the drop-in.
#[test]
fn a_diff_quoted_in_prose_before_the_envelope_is_a_second_patch() {
    let text = format!(
        "Here is what I changed:\n\ndiff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n\
         @@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\nand the patch to apply:\n\n{AGENT}"
    );
    let t = tree();
    let before = t.snapshot();
    let out = t.run(&[&text], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert_cli_snapshot!("input_two_patches", out);
    let codex = t.run_as_codex(&[OsStr::new(&text)], "");
    assert_eq!(codex.status, 1, "{}", codex.normalized());
    assert!(
        codex.stderr.contains("more than one patch"),
        "{}",
        codex.stderr
    );
    assert_eq!(t.snapshot(), before);
}

/// Items 4 and 9: a second heredoc in one argument is a second patch, not skipped.
#[test]
fn a_second_heredoc_is_a_second_patch() {
    let other = AGENT.replace("+2", "+II");
    let text = format!("apply_patch <<'EOF'\n{AGENT}EOF\napply_patch <<'EOF'\n{other}EOF\n");
    let t = tree();
    for out in [
        t.run(&[&text], ""),
        t.run_as_codex(&[OsStr::new(&text)], ""),
    ] {
        assert_eq!(out.status, 1, "{}", out.normalized());
        assert!(
            out.stderr
                .contains("an agent patch starts at line 2 and an agent patch at line 10"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(t.read_str("a.txt"), "one\ntwo\nthree\n");
}

/// Item 4: a bare `diff --git` header is no patch (git apply: "No valid patches in input"),
/// never an empty change reported as applied.
#[test]
fn a_bare_git_header_is_no_patch() {
    let t = tree();
    let out = t.run(&["diff --git a/a.txt b/a.txt\n"], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert!(
        out.stderr.contains("changes nothing: it is no patch"),
        "{}",
        out.stderr
    );
    let json = t.run(&["--json", "diff --git a/a.txt b/a.txt\n"], "");
    assert_eq!(json.json()["error"]["code"], "parse_error");
}

/// Item 5: a path holding control characters is quoted as git quotes it wherever human output
/// prints it — the per-file line, `--stat`, `--numstat`, `--summary`, the drop-in's lines,
/// errors, `undo` — so that it cannot rewrite the terminal; `--json` keeps the raw path.
#[cfg(unix)]
#[test]
fn paths_with_control_characters_are_quoted_in_human_output() {
    let name = "x\u{1b}[1A\u{1b}[2K\rM setup.py";
    let add = format!("*** Begin Patch\n*** Add File: {name}\n+hi\n*** End Patch\n");
    let t = tree();
    let mut shown = String::new();
    for args in [
        vec!["--stat", "--numstat", "--summary"],
        vec!["--check"],
        vec![],
    ] {
        let mut args = args;
        args.push(&add);
        let out = t.run(&args, "");
        assert_eq!(out.status, 0, "{}", out.normalized());
        shown.push_str(&out.normalized());
    }
    let out = t.run(&[&add.replace("+hi", "+other")], "");
    assert_eq!(
        out.status,
        1,
        "an Add over the file it made: {}",
        out.normalized()
    );
    shown.push_str(&out.normalized());
    let undo = t.run(&["undo"], "").normalized();
    // The transaction id is a timestamp: the rest of the line is what is checked.
    let id = undo
        .split("undid transaction ")
        .nth(1)
        .and_then(|r| r.split('\n').next());
    shown.push_str(&undo.replace(id.unwrap_or("?"), "[ID]"));
    let out = t.run_as_codex(&[OsStr::new(&add)], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    shown.push_str(&out.normalized());
    assert!(
        !shown.contains(['\u{1b}', '\r']),
        "raw control characters: {shown:?}"
    );
    insta::with_settings!({
        snapshot_path => "../../snapshots/cli",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("input_control_characters_quoted", shown);
    });
    let delete = format!("*** Begin Patch\n*** Delete File: {name}\n*** End Patch\n");
    let json = t.run(&["--json", "--check", &delete], "");
    assert_eq!(json.json()["files"][0]["path"], name, "{}", json.stdout);
}
