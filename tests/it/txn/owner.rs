//! Whose state place is it (issue 23, item 1; SPEC §6)? A repository the user does not own
//! is refused as git refuses it (`usage`, naming `safe.directory`) and nothing in it is read:
//! a `.git` above the victim's project in a shared folder, or named by a `.git` file from an
//! unpacked archive, holding the attacker's secret, a forged journal and a forged undo record
//! that, were they trusted, would delete or replace the victim's file. git's `safe.directory`
//! is honoured, and then the state folders must still be the user's; root follows git's rule
//! (`SUDO_UID`). The folders and files apply-patch makes are its user's alone.
//!
//! The two-user tests run the binary as two unprivileged uids (the test process must be root,
//! as in CI; elsewhere they are skipped with a message).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use apply_patch::hash::sha256_hex as hex;
use apply_patch::txn::dirfd::Dir;
use apply_patch::txn::journal::{Entry, Journal, Phase, State, VERSION};
use apply_patch::txn::AuditRecord;

/// The victim and the attacker: unprivileged uids (no account needed).
const VICTIM: u32 = 4242;
const ATTACKER: u32 = 4343;

/// The forged transaction's id.
const ID: &str = "1764460800000000000-4242";

/// The secret the attacker planted (so the forged journals carry a valid MAC).
const SECRET: [u8; 32] = [7; 32];

fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

/// Can this test switch users? Says why not when it cannot.
fn switchable(test: &str) -> bool {
    if !is_root() {
        eprintln!("skipped {test}: switching users needs root (CI runs the tests as root)");
        return false;
    }
    true
}

fn chown_all(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).expect("chown");
    if std::fs::symlink_metadata(path).expect("lstat").is_dir() {
        for item in std::fs::read_dir(path).expect("read_dir") {
            chown_all(&item.expect("entry").path(), uid);
        }
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("lstat").mode() & 0o7777
}

/// A shared folder (mode 1777, as `/tmp`), the victim's home, and where the test's files are.
struct Scene {
    tmp: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().expect("temp dir");
        chmod(tmp.path(), 0o755);
        let scene = Scene { tmp };
        std::fs::create_dir(scene.shared()).expect("mkdir");
        chmod(&scene.shared(), 0o1777);
        std::fs::create_dir(scene.home()).expect("mkdir");
        chown_all(&scene.home(), VICTIM);
        chmod(&scene.home(), 0o700);
        scene
    }

    fn shared(&self) -> PathBuf {
        self.tmp
            .path()
            .canonicalize()
            .expect("canonical")
            .join("shared")
    }

    fn home(&self) -> PathBuf {
        self.tmp
            .path()
            .canonicalize()
            .expect("canonical")
            .join("home")
    }

    /// The victim's project `name` in the shared folder: `a.txt`, private (0600).
    fn project(&self, name: &str) -> PathBuf {
        let proj = self.shared().join(name);
        std::fs::create_dir(&proj).expect("mkdir");
        std::fs::write(proj.join("a.txt"), b"private\n").expect("write");
        chmod(&proj.join("a.txt"), 0o600);
        chown_all(&proj, VICTIM);
        proj
    }

    /// Runs the binary as `uid` in `dir` with the victim's home (git's global config there).
    fn run_as(&self, uid: u32, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_apply-patch"));
        cmd.args(args);
        self.run(cmd, uid, dir, env)
    }

    fn run(&self, mut cmd: Command, uid: u32, dir: &Path, env: &[(&str, &str)]) -> Ran {
        cmd.current_dir(dir)
            .uid(uid)
            .gid(uid)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("XDG_STATE_HOME", self.home().join("state"))
            // The machine's own git configuration must not decide (it may list `*`).
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        let out = cmd.output().expect("the binary runs as another user");
        Ran {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `git config --global --add safe.directory PATH` in the victim's home.
    fn mark_safe(&self, path: &Path) {
        let config = self.home().join(".gitconfig");
        let text = format!("[safe]\n\tdirectory = {}\n", path.display());
        std::fs::write(&config, text).expect("write");
        chown_all(&config, VICTIM);
    }
}

struct Ran {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("one JSON object ({e}): {} {}", self.stdout, self.stderr))
    }
}

/// A valid git dir at `dir`.
fn git_dir(dir: &Path) {
    super::git_dir_layout(dir);
}

/// The attacker's state in the git dir `git` for the victim's root `root`: the secret, a
/// prepared journal whose rollback would delete `a.txt`, and an undo record (named by
/// `last`) whose undo would replace it with the attacker's bytes, mode 0644 — each with a
/// valid MAC, made with the planted secret for the victim's very root — all of it writable
/// by everyone.
fn plant_attack(git: &Path, root: &Path) {
    let state = git.join("apply-patch");
    std::fs::create_dir_all(state.join("journal")).expect("mkdir");
    std::fs::create_dir_all(state.join(format!("undo/{ID}"))).expect("mkdir");
    std::fs::write(state.join("secret"), SECRET).expect("secret");
    std::fs::write(state.join("last"), format!("{ID}\n")).expect("last");
    let (dev, ino) = (
        std::fs::metadata(root).expect("stat").dev(),
        std::fs::metadata(root).expect("stat").ino(),
    );
    let journal = |phase, before: State, after: State, backup: Option<&str>| Journal {
        version: VERSION,
        id: ID.into(),
        root: root.to_path_buf(),
        phase,
        operation: "apply".into(),
        undoes: None,
        entries: vec![Entry {
            path: "a.txt".into(),
            before,
            after,
            backup: backup.map(str::to_string),
            stage: None,
        }],
        created_dirs: vec![],
        audit: AuditRecord::default(),
        root_dev: dev,
        root_ino: ino,
        previous: None,
        index: None,
        mac: String::new(),
    };
    let private = State::File {
        sha256: hex(b"private\n"),
        mode: 0o600,
    };
    let mut deleting = journal(Phase::Prepared, State::Missing, private.clone(), None);
    let jdir = state.join("journal");
    deleting
        .write(&Dir::open(&jdir).expect("open"), &jdir, &SECRET)
        .expect("forge the journal");
    let evil = State::File {
        sha256: hex(b"attacker\n"),
        mode: 0o644,
    };
    let mut replacing = journal(Phase::Committed, evil, private, Some("b0"));
    let record = state.join(format!("undo/{ID}"));
    replacing
        .write(&Dir::open(&record).expect("open"), &record, &SECRET)
        .expect("forge the record");
    std::fs::write(record.join("b0"), b"attacker\n").expect("backup");
    std::fs::write(state.join("lock"), b"").expect("lock");
    // Open to everyone, so that the victim's runs can write there as they would in a folder
    // of their own (the attack needs them to take the lock and act on the journal).
    let mut stack = vec![git.to_path_buf()];
    while let Some(dir) = stack.pop() {
        chmod(&dir, 0o777);
        for item in std::fs::read_dir(&dir).expect("read_dir") {
            let path = item.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                chmod(&path, 0o666);
            }
        }
    }
}

/// Every path under `dir` with its owner, mode and content: the attacker's files, to prove
/// nothing of them was changed, removed or added to.
fn listing(dir: &Path) -> Vec<(String, u32, u32, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for item in std::fs::read_dir(&d).expect("read_dir") {
            let path = item.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let bytes = if meta.is_file() {
                std::fs::read(&path).expect("read")
            } else {
                stack.push(path.clone());
                vec![]
            };
            out.push((path.display().to_string(), meta.uid(), meta.mode(), bytes));
        }
    }
    out.sort();
    out
}

/// The victim's `a.txt` is untouched: its bytes, its mode.
fn assert_private(proj: &Path) {
    assert_eq!(
        std::fs::read(proj.join("a.txt")).expect("a.txt"),
        b"private\n"
    );
    assert_eq!(mode(&proj.join("a.txt")), 0o600);
}

/// A refusal as git's: `usage`, "dubious ownership", and git's advice for `repo`.
fn assert_refused_as_git(ran: &Ran, repo: &Path) {
    assert_eq!(ran.status, 2, "{} {}", ran.stdout, ran.stderr);
    let error = &ran.json()["error"];
    assert_eq!(error["code"], "usage", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("dubious ownership"), "{message}");
    assert!(message.contains(&format!("uid {ATTACKER}")), "{message}");
    let hint = error["hint"].as_str().unwrap_or_default();
    let advice = format!(
        "git config --global --add safe.directory {}",
        repo.display()
    );
    assert!(hint.ends_with(&advice), "{hint}");
}

const PATCH: &str = "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n";

#[test]
fn another_users_git_dir_above_the_project_is_refused_and_nothing_in_it_is_read() {
    if !switchable("another_users_git_dir_above_the_project_is_refused") {
        return;
    }
    let scene = Scene::new();
    let shared = scene.shared();
    let proj = scene.project("proj");
    git_dir(&shared.join(".git"));
    plant_attack(&shared.join(".git"), &proj);
    chown_all(&shared.join(".git"), ATTACKER);
    let attacker = listing(&shared.join(".git"));
    for args in [
        &["--json", PATCH][..],
        &["--json", "undo"],
        &["--json", "recover"],
    ] {
        let ran = scene.run_as(VICTIM, &proj, args, &[]);
        assert_refused_as_git(&ran, &shared);
        assert_private(&proj);
        assert!(!proj.join("b.txt").exists(), "{args:?}: applied");
        assert_eq!(
            listing(&shared.join(".git")),
            attacker,
            "{args:?}: the git dir changed"
        );
    }
    // git refuses it the same way (where git is installed).
    if Command::new("git").arg("--version").output().is_ok() {
        let mut git = Command::new("git");
        git.args(["status", "--porcelain"]);
        let ran = scene.run(git, VICTIM, &proj, &[]);
        assert_ne!(ran.status, 0, "git accepted it: {}", ran.stdout);
        assert!(ran.stderr.contains("dubious ownership"), "{}", ran.stderr);
    }
}

#[test]
fn a_git_file_from_an_archive_naming_another_users_git_dir_is_refused() {
    if !switchable("a_git_file_from_an_archive_naming_another_users_git_dir_is_refused") {
        return;
    }
    let scene = Scene::new();
    let shared = scene.shared();
    let proj = scene.project("unpacked");
    let theirs = shared.join("theirs.git");
    git_dir(&theirs);
    plant_attack(&theirs, &proj);
    chown_all(&theirs, ATTACKER);
    std::fs::write(proj.join(".git"), format!("gitdir: {}\n", theirs.display())).expect("write");
    chown_all(&proj.join(".git"), VICTIM);
    let attacker = listing(&theirs);
    for args in [&["--json", PATCH][..], &["--json", "undo"]] {
        let ran = scene.run_as(VICTIM, &proj, args, &[]);
        assert_eq!(ran.status, 2, "{args:?}: {} {}", ran.stdout, ran.stderr);
        let message = ran.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains("dubious ownership"), "{message}");
        assert_private(&proj);
        assert_eq!(listing(&theirs), attacker, "{args:?}: the git dir changed");
    }
}

#[test]
fn safe_directory_admits_a_shared_repository_but_not_another_users_state_folder() {
    if !switchable("safe_directory_admits_a_shared_repository") {
        return;
    }
    let scene = Scene::new();
    let shared = scene.shared();
    let proj = scene.project("proj");
    let git = shared.join(".git");
    git_dir(&git);
    plant_attack(&git, &proj);
    chown_all(&git, ATTACKER);
    scene.mark_safe(&shared);
    // Trusted as a repository, its state folder is still the attacker's: refused.
    let ran = scene.run_as(VICTIM, &proj, &["--json", PATCH], &[]);
    assert_eq!(ran.status, 2, "{} {}", ran.stdout, ran.stderr);
    let error = &ran.json()["error"];
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("belongs to another user (uid {ATTACKER})")),
        "{message}"
    );
    assert_eq!(
        error["details"]["state"],
        git.join("apply-patch").display().to_string()
    );
    assert_private(&proj);
    // A shared repository whose git dir the victim may write, without anyone's state yet: the
    // victim's state is made there, the victim's alone.
    std::fs::remove_dir_all(git.join("apply-patch")).expect("rm");
    chmod(&git, 0o777);
    let ran = scene.run_as(VICTIM, &proj, &["--json", PATCH], &[]);
    assert_eq!(ran.status, 0, "{} {}", ran.stdout, ran.stderr);
    let state = git.join("apply-patch");
    assert_eq!(std::fs::metadata(&state).expect("made").uid(), VICTIM);
    assert_eq!(mode(&state), 0o700);
    for file in ["secret", "audit.jsonl", "last", "lock"] {
        assert_eq!(mode(&state.join(file)), 0o600, "{file}");
    }
}

#[test]
fn root_uses_a_repository_of_roots_or_of_the_user_sudo_ran_for() {
    if !switchable("root_uses_a_repository_of_roots_or_of_the_user_sudo_ran_for") {
        return;
    }
    let scene = Scene::new();
    let proj = scene.project("proj");
    git_dir(&proj.join(".git"));
    chown_all(&proj, ATTACKER);
    let refused = scene.run_as(0, &proj, &["--json", PATCH], &[]);
    assert_refused_as_git(&refused, &proj);
    // As git does: `sudo` from the repository's owner.
    let sudo = [("SUDO_UID", "4343")];
    let ran = scene.run_as(0, &proj, &["--json", PATCH], &sudo);
    assert_eq!(ran.status, 0, "{} {}", ran.stdout, ran.stderr);
    // SUDO_UID grants nothing to a user who is not root.
    std::fs::remove_file(proj.join("b.txt")).expect("rm");
    let ran = scene.run_as(VICTIM, &proj, &["--json", PATCH], &sudo);
    assert_eq!(ran.status, 2, "{} {}", ran.stdout, ran.stderr);
}

/// The user's own state folders and secret must not be writable by others, and are never
/// followed as symlinks; what apply-patch makes is its user's alone (0700 folders, 0600
/// files; an older folder others could read is made so). No second user needed.
#[test]
fn state_folders_and_the_secret_are_the_users_alone() {
    let t = crate::util::TempTree::with(&[("a.txt", "one\n")]);
    t.git_dir();
    let state = t
        .root()
        .canonicalize()
        .expect("canonical")
        .join(".git/apply-patch");
    let edit = |from: &str, to: &str| {
        format!("*** Begin Patch\n*** Update File: a.txt\n@@\n-{from}\n+{to}\n*** End Patch\n")
    };
    assert_eq!(t.run(&["--json", &edit("one", "two")], "").status, 0);
    assert_eq!(mode(&state), 0o700);
    let record = std::fs::read_dir(state.join("undo"))
        .expect("undo")
        .next()
        .expect("a record");
    assert_eq!(mode(&record.expect("entry").path()), 0o700);
    for file in ["secret", "audit.jsonl", "last", "lock"] {
        assert_eq!(mode(&state.join(file)), 0o600, "{file}");
    }
    // Older state others may read is made private; state others may write is refused.
    chmod(&state, 0o755);
    assert_eq!(t.run(&["--json", &edit("two", "three")], "").status, 0);
    assert_eq!(mode(&state), 0o700);
    for (path, bits) in [(state.clone(), 0o777), (state.join("secret"), 0o666)] {
        let old = mode(&path);
        chmod(&path, bits);
        let ran = t.run(&["--json", &edit("three", "four")], "");
        assert_eq!(ran.status, 2, "{}: {}", path.display(), ran.stdout);
        let error = &ran.json()["error"];
        assert_eq!(error["code"], "usage");
        assert_eq!(error["details"]["found"], "writable_by_others");
        let hint = error["hint"].as_str().unwrap_or_default();
        assert!(
            hint.contains(&format!("chmod go-w {}", path.display())),
            "{hint}"
        );
        assert_eq!(t.read_str("a.txt"), "three\n");
        chmod(&path, old);
    }
    // The state folder as a symlink to another folder: refused, not followed.
    let moved = t.outside("moved-state");
    std::fs::rename(&state, &moved).expect("mv");
    std::os::unix::fs::symlink(&moved, &state).expect("symlink");
    let ran = t.run(&["--json", &edit("three", "four")], "");
    assert_eq!(ran.status, 1, "{}", ran.stdout);
    assert_eq!(ran.json()["error"]["details"]["found"], "symlink");
    assert_eq!(t.read_str("a.txt"), "three\n");
}
