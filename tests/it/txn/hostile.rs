//! Hostile files in the state place (issue 23, items 8 and 11): a FIFO, a symlink to
//! `/dev/zero` or to a file elsewhere, or a file larger than anything apply-patch writes
//! there, in the place of each state file — the journal, the lock, `last`, the secret, the
//! audit log, an undo record, a snapshot — never hangs a run nor exhausts its memory, and
//! is never followed: apply, `--rebase`, `undo` and `recover` each refuse with an error that
//! says what stands where (or, after the commit point, warn), within a time limit. A
//! `.apply-patch-txn` planted at a root outside git is named likewise, with how to clear it,
//! and `recover` does not fail "the same way" with a hint to run itself.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::TempTree;

/// What a run did, or that it had to be killed.
#[derive(Debug)]
struct Run {
    status: i32,
    stdout: String,
}

/// Runs the binary in the tree with `args`, killed (and the test failed) when it takes longer
/// than `limit`: a hang is the defect under test.
fn run_within(t: &TempTree, args: &[&str], limit: Duration) -> Run {
    let mut child = t
        .command(env!("CARGO_BIN_EXE_apply-patch"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stdout = String::new();
            use std::io::Read;
            let _ = child
                .stdout
                .take()
                .expect("piped")
                .read_to_string(&mut stdout);
            return Run {
                status: status.code().unwrap_or(-1),
                stdout,
            };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("apply-patch {args:?} hung (killed after {limit:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What is planted.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Fifo,
    DevZero,
    /// A symlink to a regular file outside the state place (must stay as it is).
    Elsewhere,
    /// A regular file one byte over the place's limit (sparse).
    Huge(u64),
}

impl Kind {
    /// What the refusal says it found.
    fn found(self) -> &'static str {
        match self {
            Kind::Fifo => "fifo",
            Kind::DevZero | Kind::Elsewhere => "symlink",
            Kind::Huge(_) => "too_large",
        }
    }
}

/// Replaces whatever is at `path` with `kind`.
fn plant(t: &TempTree, path: &Path, kind: Kind) {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.is_dir() {
            std::fs::remove_dir_all(path).expect("rm -r");
        } else {
            std::fs::remove_file(path).expect("rm");
        }
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    match kind {
        Kind::Fifo => {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no nul");
            // SAFETY: a valid C string.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        }
        Kind::DevZero => std::os::unix::fs::symlink("/dev/zero", path).expect("symlink"),
        Kind::Elsewhere => std::os::unix::fs::symlink(elsewhere(t), path).expect("symlink"),
        Kind::Huge(limit) => {
            let f = std::fs::File::create(path).expect("create");
            f.set_len(limit + 1).expect("sparse");
        }
    }
}

/// The regular file outside the state place that a planted symlink points at.
fn elsewhere(t: &TempTree) -> PathBuf {
    t.outside("elsewhere.txt")
}

/// What a command must do with a hostile file at a place.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// Refused: an error naming the place and what was found there; the tree unchanged.
    Refused,
    /// Applied, with a `cleanup` warning naming the place (after the commit point).
    Warned,
    /// The place is not used by this command: anything but a hang.
    Any,
}

const PATCH: &str = "*** Begin Patch\n*** Update File: c.txt\n@@\n-sea\n+SEA\n*** End Patch\n";

/// A git work tree after one committed patch of `a.txt` (so every state file exists: lock,
/// secret, last, audit log, an undo record that `undo` can revert), with `b.txt` read once
/// (a snapshot kept) and then edited by someone else, so that a patch made from the read
/// version needs `--rebase`; [`PATCH`] edits `c.txt`.
fn setup() -> (TempTree, String) {
    let t = TempTree::with(&[("a.txt", "zero\n"), ("b.txt", B), ("c.txt", "sea\n")]);
    t.git_dir();
    std::fs::write(elsewhere(&t), b"someone's file\n").expect("write");
    let first = "*** Begin Patch\n*** Update File: a.txt\n@@\n-zero\n+one\n*** End Patch\n";
    assert_eq!(t.run(&["--json", first], "").status, 0);
    let read = t.run(&["--json", "read", "b.txt"], "").json();
    let version = read["base"].as_str().expect("a version").to_string();
    t.write("b.txt", format!("{B}b7\n").as_bytes());
    let rebase = format!(
        "*** Begin Patch\n*** Update File: b.txt\n*** Base: {version}\n@@\n-b1\n+B1\n b2\n*** End Patch\n"
    );
    (t, rebase)
}

/// `b.txt` as read.
const B: &str = "b1\nb2\nb3\nb4\nb5\nb6\n";

/// The work tree's files as [`setup`] leaves them.
fn files(t: &TempTree) -> [String; 3] {
    ["a.txt", "b.txt", "c.txt"].map(|p| t.read_str(p))
}

/// The state place of [`setup`]'s tree.
fn state(t: &TempTree) -> PathBuf {
    t.root().join(".git/apply-patch")
}

/// The one undo record of the tree.
fn record(t: &TempTree) -> PathBuf {
    let undo = state(t).join("undo");
    let id = std::fs::read_dir(&undo)
        .expect("undo")
        .next()
        .expect("a record")
        .expect("entry")
        .file_name();
    undo.join(id)
}

/// The one snapshot of the tree.
fn snapshot(t: &TempTree) -> PathBuf {
    let dir = state(t).join("snapshots");
    let name = std::fs::read_dir(&dir)
        .expect("snapshots")
        .next()
        .expect("a snapshot")
        .expect("entry")
        .file_name();
    dir.join(name)
}

fn check(t: &TempTree, place: &Path, kind: Kind, command: &str, run: &Run, want: Want) {
    let case = format!("{command} with {kind:?} at {}", place.display());
    let json: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{case}: one JSON object ({e}): {}", run.stdout));
    let canonical = place.parent().and_then(|p| p.canonicalize().ok());
    let shown = canonical
        .map(|p| p.join(place.file_name().expect("a name")))
        .unwrap_or_else(|| place.to_path_buf())
        .display()
        .to_string();
    match want {
        Want::Refused => {
            assert_ne!(run.status, 0, "{case}: {json}");
            let error = &json["error"];
            assert_eq!(error["details"]["state"], shown.as_str(), "{case}: {error}");
            assert_eq!(error["details"]["found"], kind.found(), "{case}: {error}");
            let hint = error["hint"].as_str().unwrap_or_default();
            assert!(!hint.contains("apply-patch recover"), "{case}: {hint}");
            let unchanged = ["one\n".into(), format!("{B}b7\n"), "sea\n".into()];
            assert_eq!(files(t), unchanged, "{case}: the tree changed");
        }
        Want::Warned => {
            assert_eq!(run.status, 0, "{case}: {json}");
            let warned = json["warnings"].as_array().into_iter().flatten().any(|w| {
                w["code"] == "cleanup" && w["message"].as_str().is_some_and(|m| m.contains(&shown))
            });
            assert!(warned, "{case}: {json}");
        }
        Want::Any => {}
    }
    let outside = std::fs::read(elsewhere(t)).expect("the file elsewhere");
    assert_eq!(
        outside, b"someone's file\n",
        "{case}: written through a symlink"
    );
}

/// Each command, as the test runs it: apply, `--rebase`, undo, recover.
fn args<'a>(command: &str, rebase: &'a str) -> Vec<&'a str> {
    match command {
        "apply" => vec!["--json", PATCH],
        "rebase" => vec!["--json", "--rebase", rebase],
        "undo" => vec!["--json", "undo"],
        _ => vec!["--json", "recover"],
    }
}

#[test]
fn hostile_files_in_the_state_place_never_hang_a_run_and_are_named() {
    use Want::{Any, Refused, Warned};
    const GIB: u64 = 1 << 30;
    // The place (from a fresh tree), the kinds planted there, and per command (apply,
    // --rebase, undo, recover) what must happen.
    type Place = fn(&TempTree) -> PathBuf;
    let places: Vec<(&str, Place, Vec<Kind>, [Want; 4])> = vec![
        (
            "journal",
            |t| state(t).join("journal/journal.json"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere, Kind::Huge(GIB)],
            [Refused; 4],
        ),
        (
            "lock",
            |t| state(t).join("lock"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere],
            [Refused; 4],
        ),
        (
            "last",
            |t| state(t).join("last"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere, Kind::Huge(4096)],
            [Refused, Refused, Refused, Any],
        ),
        (
            "secret",
            |t| state(t).join("secret"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere, Kind::Huge(4096)],
            [Refused, Refused, Refused, Any],
        ),
        (
            "audit",
            |t| state(t).join("audit.jsonl"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere],
            [Warned, Warned, Warned, Any],
        ),
        (
            "undo record",
            |t| record(t).join("journal.json"),
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere, Kind::Huge(GIB)],
            [Any, Any, Refused, Any],
        ),
        (
            "snapshot",
            snapshot,
            vec![Kind::Fifo, Kind::DevZero, Kind::Elsewhere],
            [Any; 4],
        ),
    ];
    let limit = Duration::from_secs(30);
    for (name, place, kinds, wants) in places {
        for kind in kinds {
            for (command, want) in ["apply", "rebase", "undo", "recover"].iter().zip(wants) {
                let (t, rebase) = setup();
                let path = place(&t);
                plant(&t, &path, kind);
                let run = run_within(&t, &args(command, &rebase), limit);
                check(&t, &path, kind, &format!("{command} ({name})"), &run, want);
            }
        }
    }
}

/// Item 11: a file, a FIFO or a symlink planted where a root outside git keeps its journal
/// folder is named — what it is, and how to clear it — by every run (`--check` and `recover`
/// too), never followed or removed; once the user removes it, the root works again.
#[test]
fn a_planted_journal_place_says_what_it_is_and_how_to_clear_it() {
    for kind in ["file", "fifo", "symlink"] {
        let t = TempTree::with(&[("a.txt", "one\n")]);
        let place = t
            .root()
            .canonicalize()
            .expect("canonical")
            .join(".apply-patch-txn");
        // A symlink to a folder holding a journal: were it followed, that would be acted on.
        let target = t.outside("planted");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("journal.json"), b"{}").expect("write");
        match kind {
            "file" => std::fs::write(&place, b"not a folder\n").expect("write"),
            "fifo" => plant(&t, &place, Kind::Fifo),
            _ => std::os::unix::fs::symlink(&target, &place).expect("symlink"),
        }
        let what = match kind {
            "file" => "is a regular file, where apply-patch keeps the journal folder",
            "fifo" => "is a FIFO, where apply-patch keeps the journal folder",
            _ => "is a symbolic link (to ",
        };
        let shown = place.display().to_string();
        let fix = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
        for args in [
            &["--json", fix][..],
            &["--json", "--check", fix],
            &["--json", "recover"],
        ] {
            let run = run_within(&t, args, Duration::from_secs(30));
            let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
            assert_eq!(run.status, 1, "{kind} {args:?}: {json}");
            let error = &json["error"];
            assert_eq!(error["code"], "io_error", "{kind}: {error}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with(&shown) && message.contains(what),
                "{kind}: {message}"
            );
            let hint = error["hint"].as_str().unwrap_or_default();
            assert!(hint.contains(&shown), "{kind}: {hint}");
            assert!(!hint.contains("apply-patch recover"), "{kind}: {hint}");
            assert_eq!(t.read_str("a.txt"), "one\n");
        }
        assert!(
            std::fs::symlink_metadata(&place).is_ok(),
            "{kind}: left as it is"
        );
        assert!(
            target.join("journal.json").is_file(),
            "{kind}: the target is untouched"
        );
        std::fs::remove_file(&place).expect("the user removes it, as the hint says");
        let run = run_within(&t, &["--json", fix], Duration::from_secs(30));
        assert_eq!(run.status, 0, "{kind}: {}", run.stdout);
        assert_eq!(t.read_str("a.txt"), "ONE\n");
    }
}
