//! Git integration against real repositories built with the git CLI in temp dirs: discovery,
//! the write guard, blob ids, index matching, index writes (checked with `git status`,
//! `git diff --cached`, `git ls-files --stage` and `git fsck`) and the 3-way base lookup.

use apply_patch::git::{Conflicted, IndexChange, IndexRequirement, Repo, ThreeWay};
use apply_patch::model::{BlobIds, Body, FileOp, FilePatch, Mode};
use apply_patch::ErrorCode;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch repository driven by the git CLI.
pub struct Scratch {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    home: PathBuf,
}

impl Scratch {
    /// `git init` with a fixed identity and branch, no signing; `extra` goes to `git init`.
    pub fn new(extra: &[&str]) -> Scratch {
        let tmp = tempfile::tempdir().expect("a temp dir can be made");
        let home = tmp.path().join("home");
        let dir = tmp.path().join("repo");
        std::fs::create_dir_all(&home).expect("mkdir home");
        std::fs::create_dir_all(&dir).expect("mkdir repo");
        let s = Scratch {
            _tmp: tmp,
            dir,
            home,
        };
        let mut args = vec!["init", "-q", "-b", "main"];
        args.extend_from_slice(extra);
        s.git(&args);
        s.configure(&s.dir);
        s
    }

    pub fn configure(&self, dir: &Path) {
        for (k, v) in [
            ("user.name", "Test"),
            ("user.email", "test@example.com"),
            ("commit.gpgsign", "false"),
            ("init.defaultBranch", "main"),
        ] {
            self.git_in(dir, &["config", k, v]);
        }
    }

    /// Run git in the repository; panics (with its stderr) when it fails.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.dir, args)
    }

    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.command(dir, args).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        cmd
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    pub fn open(&self) -> Repo {
        Repo::discover(&self.dir)
            .expect("discovery works")
            .expect("the scratch dir is a repository")
    }

    /// `git fsck` passes and `git status --porcelain` has these lines, in any order.
    pub fn assert_status_set(&self, expected: &[&str]) {
        self.git(&["fsck", "--no-progress", "--strict"]);
        let actual = self.git(&["status", "--porcelain"]);
        let mut have: Vec<&str> = actual.lines().collect();
        have.sort_unstable();
        let mut want = expected.to_vec();
        want.sort_unstable();
        assert_eq!(have, want);
    }

    /// `git fsck` passes and `git status --porcelain` is as expected.
    pub fn assert_status(&self, expected: &str) {
        self.git(&["fsck", "--no-progress", "--strict"]);
        assert_eq!(self.git(&["status", "--porcelain"]), expected);
    }
}

fn file_patch(path: &str, old_id: &str) -> FilePatch<'static> {
    FilePatch {
        op: FileOp::Modify,
        old_path: Some(path.to_string()),
        new_path: Some(path.to_string()),
        old_mode: None,
        new_mode: None,
        base: None,
        blob_ids: Some(BlobIds {
            old: old_id.to_string(),
            new: "1234567".to_string(),
        }),
        body: Body::Hunks(Vec::new()),
        patch_line: 1,
    }
}

#[test]
fn discovery_finds_the_work_tree_from_a_subdirectory() {
    let s = Scratch::new(&[]);
    s.write("src/deep/a.txt", "a\n");
    s.commit_all("init");
    let repo = Repo::discover(&s.dir.join("src/deep")).unwrap().unwrap();
    assert_eq!(repo.root_prefix(), "src/deep");
    assert_eq!(repo.repo_path("a.txt").unwrap(), "src/deep/a.txt");
    assert_eq!(repo.repo_path("../x/./y").unwrap(), "src/x/y");
    let entry = repo.index_entry("a.txt").unwrap().expect("tracked");
    assert_eq!(entry.mode, Mode::FILE);
    let staged = s.git(&["ls-files", "--stage", "src/deep/a.txt"]);
    assert!(staged.contains(&entry.id.to_hex().to_string()), "{staged}");
    let err = repo
        .repo_path("../../../out")
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PathEscape);
}

#[test]
fn outside_any_repository_discovery_is_none() {
    let tmp = tempfile::tempdir().unwrap();
    // The temp dir could sit inside some repository on an odd machine; only check when not.
    let probe = Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(tmp.path())
        .output()
        .expect("git runs");
    if probe.status.success() {
        eprintln!("skipped: the temp dir is inside a git work tree");
        return;
    }
    assert!(Repo::discover(tmp.path()).unwrap().is_none());
}

#[test]
fn a_repository_without_commits_has_an_empty_index() {
    let s = Scratch::new(&[]);
    s.write("new.txt", "x\n");
    let repo = s.open();
    assert!(repo.index_entry("new.txt").unwrap().is_none());
    repo.check_index_matches(&[IndexRequirement::Untracked("new.txt".into())])
        .unwrap();
    let err = repo
        .check_index_matches(&[IndexRequirement::Tracked("new.txt".into())])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IndexMismatch);
    assert!(err
        .message
        .contains("new.txt (does not exist in the index)"));
}

#[test]
fn a_linked_worktree_is_its_own_work_tree() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "main\n");
    s.commit_all("init");
    let linked = s.dir.parent().unwrap().join("linked");
    s.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        linked.to_str().unwrap(),
    ]);
    std::fs::write(linked.join("a.txt"), "side\n").unwrap();
    s.git_in(&linked, &["add", "a.txt"]);
    let repo = Repo::discover(&linked).unwrap().unwrap();
    assert_eq!(repo.workdir(), std::fs::canonicalize(&linked).unwrap());
    let entry = repo.index_entry("a.txt").unwrap().unwrap();
    let expected = s.git_in(&linked, &["rev-parse", ":a.txt"]);
    assert_eq!(entry.id.to_hex().to_string(), expected.trim());
    repo.check_index_matches(&[IndexRequirement::Tracked("a.txt".into())])
        .unwrap();
}

#[test]
fn the_guard_refuses_git_dir_submodules_and_nested_repositories() {
    let sub = Scratch::new(&[]);
    sub.write("inner.txt", "inner\n");
    sub.commit_all("sub");
    let s = Scratch::new(&[]);
    s.write("a.txt", "a\n");
    s.commit_all("init");
    s.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.dir.to_str().unwrap(),
        "libs/sub",
    ]);
    s.git(&["commit", "-q", "-m", "add submodule"]);
    s.write("vendor/nested/x.txt", "x\n");
    s.git_in(&s.dir.join("vendor/nested"), &["init", "-q"]);
    let repo = s.open();
    repo.check_path("a.txt").unwrap();
    let err = repo
        .check_path(".git/config")
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PathEscape);
    assert!(err.message.contains("inside .git"), "{}", err.message);
    let err = repo
        .check_path("libs/sub/inner.txt")
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PathEscape);
    assert!(
        err.message.contains("inside the submodule libs/sub"),
        "{}",
        err.message
    );
    let err = repo
        .check_path("vendor/nested/x.txt")
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert!(
        err.message.contains("nested repository vendor/nested"),
        "{}",
        err.message
    );
    // From inside the submodule, its own files are fine.
    let inner = Repo::discover(&s.dir.join("libs/sub")).unwrap().unwrap();
    inner.check_path("inner.txt").unwrap();
    // A root inside .git is refused outright.
    let err = Repo::discover(&s.dir.join(".git"))
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PathEscape);
}

#[test]
fn blob_ids_equal_git_hash_object_through_filters() {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "true"]);
    s.write(".gitattributes", "*.bin -text\n");
    s.commit_all("attrs");
    let repo = s.open();
    for (name, content) in [
        ("plain.txt", "one\ntwo\n"),
        ("crlf.txt", "one\r\ntwo\r\n"),
        ("raw.bin", "one\r\ntwo\r\n"),
    ] {
        s.write(name, content);
        let ours = repo
            .blob_id_of_worktree_file(name, content.as_bytes(), false)
            .unwrap();
        let git = s.git(&["hash-object", name]);
        assert_eq!(ours.to_hex().to_string(), git.trim(), "{name}");
    }
}

#[test]
fn sha256_repositories_hash_and_resolve_with_their_own_format() {
    let s = Scratch::new(&["--object-format=sha256"]);
    s.write("a.txt", "hello\n");
    s.commit_all("init");
    let repo = s.open();
    let id = repo
        .blob_id_of_worktree_file("a.txt", b"hello\n", false)
        .unwrap();
    assert_eq!(
        id.to_hex().to_string(),
        s.git(&["hash-object", "a.txt"]).trim()
    );
    assert_eq!(id.to_hex().to_string().len(), 64);
    let short = &id.to_hex().to_string()[..9];
    let (found, data) = repo.find_blob_by_prefix(short).unwrap().expect("found");
    assert_eq!(found, id);
    assert_eq!(data, b"hello\n");
}

#[test]
fn base_ids_of_a_git_diff_are_checked_against_the_file() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "one\ntwo\n");
    s.commit_all("init");
    s.write("a.txt", "one\nTWO\n");
    let diff = s.git(&["diff", "a.txt"]);
    let index_line = diff.lines().find(|l| l.starts_with("index ")).unwrap();
    let old = index_line[6..].split("..").next().unwrap().to_string();
    s.git(&["checkout", "--", "a.txt"]);
    let repo = s.open();
    let patch = file_patch("a.txt", &old);
    let check = repo
        .check_blob_ids(&patch, Some(b"one\ntwo\n"), false)
        .unwrap();
    assert_eq!(check, apply_patch::git::BaseCheck::Matches);
    let check = repo
        .check_blob_ids(&patch, Some(b"one\nchanged\n"), false)
        .unwrap();
    let message = check.message().unwrap();
    assert!(message.contains("patch was made against a different version of a.txt"));
    assert_eq!(check.into_stale_error().unwrap().code, ErrorCode::StaleFile);
}

#[test]
fn index_matching_detects_unstaged_changes_and_racy_entries() {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.trustctime", "false"]);
    s.write("a.txt", "aaaa\n");
    s.write("b.txt", "bbbb\n");
    s.commit_all("init");
    let tracked = |p: &str| IndexRequirement::Tracked(p.to_string());
    s.open()
        .check_index_matches(&[tracked("a.txt"), tracked("b.txt")])
        .unwrap();

    // An unstaged change is a mismatch; staging it makes the paths agree again.
    s.write("a.txt", "AAAA-changed\n");
    let err = s
        .open()
        .check_index_matches(&[tracked("a.txt")])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IndexMismatch);
    assert_eq!(err.path.as_deref(), Some("a.txt"));
    s.git(&["add", "a.txt"]);
    s.open().check_index_matches(&[tracked("a.txt")]).unwrap();

    // Racy: same size, same mtime as the entry, the index written in that same second; only
    // hashing can tell. The stat alone (ctime not trusted) would say "unchanged".
    let stamp = "@1700000000";
    s.git(&["update-index", "--really-refresh"]);
    Command::new("touch")
        .args(["-d", stamp, "b.txt"])
        .current_dir(&s.dir)
        .status()
        .unwrap();
    s.git(&["update-index", "--really-refresh"]);
    std::fs::write(s.dir.join("b.txt"), "BBBB\n").unwrap();
    Command::new("touch")
        .args(["-d", stamp, "b.txt", ".git/index"])
        .current_dir(&s.dir)
        .status()
        .unwrap();
    let err = s
        .open()
        .check_index_matches(&[tracked("b.txt")])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert!(err
        .message
        .contains("b.txt (the work-tree file differs from the index)"));
    // Restored content with the same racy stat matches again (hash equal).
    std::fs::write(s.dir.join("b.txt"), "bbbb\n").unwrap();
    Command::new("touch")
        .args(["-d", stamp, "b.txt", ".git/index"])
        .current_dir(&s.dir)
        .status()
        .unwrap();
    s.open().check_index_matches(&[tracked("b.txt")]).unwrap();

    // Several offenders are all named; an added path must not be in the index.
    s.write("a.txt", "again\n");
    s.write("b.txt", "again\n");
    let err = s
        .open()
        .check_index_matches(&[
            tracked("a.txt"),
            tracked("b.txt"),
            IndexRequirement::Untracked("a.txt".into()),
        ])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert!(
        err.message.contains("a.txt (") && err.message.contains("b.txt ("),
        "{}",
        err.message
    );
    assert!(err.path.is_none());
}

#[test]
fn executable_bit_changes_are_an_index_mismatch() {
    let s = Scratch::new(&[]);
    s.write("run.sh", "echo hi\n");
    s.commit_all("init");
    let mut perms = std::fs::metadata(s.dir.join("run.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(s.dir.join("run.sh"), perms).unwrap();
    let err = s
        .open()
        .check_index_matches(&[IndexRequirement::Tracked("run.sh".into())])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IndexMismatch);
}

#[test]
fn staging_modify_add_remove_rename_and_mode_matches_git() {
    let s = Scratch::new(&[]);
    s.write("keep.txt", "keep\n");
    s.write("mod.txt", "old\n");
    s.write("gone.txt", "gone\n");
    s.write("from.txt", "moving\n");
    s.write("dir/tool.sh", "echo\n");
    s.commit_all("init");
    // The work tree as the transaction would leave it.
    s.write("mod.txt", "new\n");
    std::fs::remove_file(s.dir.join("gone.txt")).unwrap();
    std::fs::rename(s.dir.join("from.txt"), s.dir.join("to.txt")).unwrap();
    s.write("added/new.txt", "fresh\n");
    let mut perms = std::fs::metadata(s.dir.join("dir/tool.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(s.dir.join("dir/tool.sh"), perms).unwrap();

    let repo = s.open();
    let mut index = repo.lock_index().unwrap();
    let put = |path: &str, content: &str, mode: Mode| IndexChange::Put {
        path: path.into(),
        content: content.as_bytes().to_vec(),
        mode,
    };
    let changes = vec![
        put("mod.txt", "new\n", Mode::FILE),
        IndexChange::Remove {
            path: "gone.txt".into(),
        },
        IndexChange::Remove {
            path: "from.txt".into(),
        },
        put("to.txt", "moving\n", Mode::FILE),
        put("added/new.txt", "fresh\n", Mode::FILE),
        put("dir/tool.sh", "echo\n", Mode::EXECUTABLE),
    ];
    index.stage(&repo, &changes, true).unwrap();
    index.commit().unwrap();

    s.assert_status(
        "A  added/new.txt\nM  dir/tool.sh\nD  gone.txt\nM  mod.txt\nR  from.txt -> to.txt\n",
    );
    assert!(s
        .git(&["ls-files", "--stage", "dir/tool.sh"])
        .starts_with("100755 "));
    assert!(s
        .git(&["diff", "--cached", "mod.txt"])
        .contains("-old\n+new\n"));
    assert_eq!(
        s.git(&["diff"]),
        "",
        "the work tree agrees with the new index"
    );
    // The cached tree extension was dropped: a commit records the new content.
    s.git(&["commit", "-q", "-m", "staged by apply-patch"]);
    assert_eq!(s.git(&["show", "HEAD:mod.txt"]), "new\n");
    s.assert_status("");
}

#[test]
fn cached_staging_leaves_the_work_tree_alone() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "one\n");
    s.commit_all("init");
    s.write("a.txt", "work tree edit\n");
    let repo = s.open();
    let (blob, mode) = repo.index_blob("a.txt").unwrap().unwrap();
    assert_eq!((blob.as_slice(), mode), (&b"one\n"[..], Mode::FILE));
    let mut index = repo.lock_index().unwrap();
    index
        .stage(
            &repo,
            &[IndexChange::Put {
                path: "a.txt".into(),
                content: b"one\ntwo\n".to_vec(),
                mode: Mode::FILE,
            }],
            false,
        )
        .unwrap();
    index.commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(s.dir.join("a.txt")).unwrap(),
        "work tree edit\n"
    );
    assert_eq!(s.git(&["show", ":a.txt"]), "one\ntwo\n");
    s.assert_status("MM a.txt\n");
}

#[test]
fn conflicts_are_recorded_in_stages_one_two_three() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "base\n");
    s.commit_all("init");
    s.write(
        "a.txt",
        "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n",
    );
    let repo = s.open();
    let mut index = repo.lock_index().unwrap();
    let side = |t: &str| Some((t.as_bytes().to_vec(), Mode::FILE));
    index
        .stage(
            &repo,
            &[IndexChange::Conflict {
                path: "a.txt".into(),
                base: side("base\n"),
                ours: side("mine\n"),
                theirs: side("theirs\n"),
            }],
            true,
        )
        .unwrap();
    index.commit().unwrap();
    let stages: Vec<String> = s
        .git(&["ls-files", "--stage"])
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
        .collect();
    assert_eq!(stages, vec!["1", "2", "3"]);
    s.assert_status("UU a.txt\n");
    assert!(s.open().index_entry("a.txt").unwrap().unwrap().conflicted);
    // Resolving by staging a stage-0 entry removes the other stages, as `git add` does.
    s.write("a.txt", "resolved\n");
    let repo = s.open();
    let mut index = repo.lock_index().unwrap();
    let put = IndexChange::Put {
        path: "a.txt".into(),
        content: b"resolved\n".to_vec(),
        mode: Mode::FILE,
    };
    index.stage(&repo, &[put], true).unwrap();
    index.commit().unwrap();
    s.assert_status("M  a.txt\n");
}

#[test]
fn a_held_index_lock_is_busy_and_dropping_ours_leaves_the_index() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "a\n");
    s.commit_all("init");
    let before = std::fs::read(s.dir.join(".git/index")).unwrap();
    let repo = s.open();
    {
        let mut index = repo.lock_index().unwrap();
        let err = apply_patch::Error::from(repo.lock_index().unwrap_err());
        assert_eq!(err.code, ErrorCode::Busy);
        index
            .stage(
                &repo,
                &[IndexChange::Remove {
                    path: "a.txt".into(),
                }],
                false,
            )
            .unwrap();
        // Dropped without commit: rolled back.
    }
    assert_eq!(std::fs::read(s.dir.join(".git/index")).unwrap(), before);
    assert!(!s.dir.join(".git/index.lock").exists());
    s.assert_status("");
}

#[test]
fn staging_in_a_repository_without_commits_creates_the_index() {
    let s = Scratch::new(&[]);
    s.write("first.txt", "first\n");
    let repo = s.open();
    let mut index = repo.lock_index().unwrap();
    index
        .stage(
            &repo,
            &[IndexChange::Put {
                path: "first.txt".into(),
                content: b"first\n".to_vec(),
                mode: Mode::FILE,
            }],
            true,
        )
        .unwrap();
    index.commit().unwrap();
    s.assert_status("A  first.txt\n");
}

#[test]
fn index_changes_for_a_transaction_clean_crlf_content() {
    use apply_patch::txn::{Change, NewState, Snapshot};
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "true"]);
    s.write("a.txt", "one\r\n");
    s.commit_all("init");
    s.write("a.txt", "one\r\ntwo\r\n");
    let repo = s.open();
    let changes = repo
        .index_changes_for(&[Change {
            path: "a.txt".into(),
            before: Snapshot::Missing,
            after: NewState::File {
                bytes: b"one\r\ntwo\r\n".to_vec().into(),
                mode: 0o644,
            },
        }])
        .unwrap();
    let mut index = repo.lock_index().unwrap();
    index.stage(&repo, &changes, true).unwrap();
    index.commit().unwrap();
    assert_eq!(s.git(&["show", ":a.txt"]), "one\ntwo\n");
    s.assert_status("M  a.txt\n");
}

#[test]
fn abbreviated_base_blobs_resolve_and_ambiguity_is_refused() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "base\n");
    s.commit_all("init");
    let repo = s.open();
    let id = repo.index_entry("a.txt").unwrap().unwrap().id;
    let hex = id.to_hex().to_string();
    let (found, data) = repo.find_blob_by_prefix(&hex[..7]).unwrap().unwrap();
    assert_eq!((found, data.as_slice()), (id, &b"base\n"[..]));
    assert!(repo.find_blob_by_prefix("0000000").unwrap().is_none());

    // Two blobs sharing a 4-digit prefix: found by hashing in memory, then written with git.
    let mut seen = std::collections::HashMap::new();
    let (a, b) = (0..100_000u32)
        .find_map(|i| {
            let text = format!("blob {i}\n");
            let id = apply_patch::git::blob_id_of_bytes(gix::hash::Kind::Sha1, text.as_bytes());
            let key = id.to_hex().to_string()[..4].to_string();
            seen.insert(key, text.clone()).map(|other| (other, text))
        })
        .expect("a 4-digit collision exists among 100000 blobs");
    for text in [&a, &b] {
        let mut child = s
            .command(&s.dir, &["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    }
    let prefix = apply_patch::git::blob_id_of_bytes(gix::hash::Kind::Sha1, a.as_bytes())
        .to_hex()
        .to_string()[..4]
        .to_string();
    let err = apply_patch::Error::from(s.open().find_blob_by_prefix(&prefix).unwrap_err());
    assert!(err.message.contains("ambiguous"), "{}", err.message);
}

#[test]
fn three_way_merges_from_the_base_blob() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "1\n2\n3\n4\n5\n6\n7\n");
    s.commit_all("init");
    let base_id = s
        .git(&["rev-parse", "--short", ":a.txt"])
        .trim()
        .to_string();
    let repo = s.open();
    let patch = file_patch("a.txt", &base_id);
    let replace_7 = |base: &[u8]| {
        Ok(String::from_utf8_lossy(base)
            .replace("7\n", "seven\n")
            .into_bytes())
    };
    // The file changed elsewhere since: a clean merge.
    let current = b"one\n2\n3\n4\n5\n6\n7\n";
    match repo.three_way(&patch, current, replace_7).unwrap().unwrap() {
        ThreeWay::Clean { merged, .. } => assert_eq!(merged, b"one\n2\n3\n4\n5\n6\nseven\n"),
        other => panic!("expected a clean merge, got {other:?}"),
    }
    // The same line changed: a conflict with its region.
    let current = b"1\n2\n3\n4\n5\n6\nSIEBEN\n";
    match repo.three_way(&patch, current, replace_7).unwrap().unwrap() {
        ThreeWay::Conflict {
            conflicts,
            base,
            theirs,
            ..
        } => {
            assert_eq!(conflicts.regions.len(), 1);
            assert_eq!(conflicts.regions[0].ours, vec!["SIEBEN".to_string()]);
            assert_eq!(conflicts.regions[0].theirs, vec!["seven".to_string()]);
            assert_eq!(base, b"1\n2\n3\n4\n5\n6\n7\n");
            assert_eq!(theirs, b"1\n2\n3\n4\n5\n6\nseven\n");
            let err = ThreeWay::conflict_error("a.txt", &conflicts, Conflicted::Refused);
            assert_eq!(err.code(), ErrorCode::MergeConflict);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // No base blob in the repository: no 3-way.
    let unknown = file_patch("a.txt", "abcdef0");
    assert!(repo
        .three_way(&unknown, current, replace_7)
        .unwrap()
        .is_none());
}

/// Run the ignored test `name` of this binary in a child process with `envs` (environment
/// variables are process-wide, so they are never set in the test process itself).
fn run_child_test(name: &str, envs: &[(&str, &Path)]) {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--ignored",
        "--exact",
        name,
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn git_dir_and_git_index_file_are_honoured_as_in_hooks() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "committed\n");
    s.commit_all("init");
    // An alternative index (as `git commit <paths>` hands to hooks) that stages other content.
    let alt = s.dir.join(".git/alt-index");
    let mut cmd = s.command(&s.dir, &["add", "a.txt"]);
    s.write("a.txt", "in the alternative index\n");
    let status = cmd.env("GIT_INDEX_FILE", &alt).status().unwrap();
    assert!(status.success());
    s.write("a.txt", "committed\n");
    let elsewhere = tempfile::tempdir().unwrap();
    run_child_test(
        "git::env_child_sees_the_alternative_index",
        &[
            ("GIT_DIR", &s.dir.join(".git")),
            ("GIT_WORK_TREE", &s.dir),
            ("GIT_INDEX_FILE", &alt),
            ("APPLY_PATCH_TEST_ROOT", &s.dir),
            ("APPLY_PATCH_TEST_ELSEWHERE", elsewhere.path()),
        ],
    );
}

#[test]
#[ignore = "run by git_dir_and_git_index_file_are_honoured_as_in_hooks in a child process"]
fn env_child_sees_the_alternative_index() {
    let root = PathBuf::from(std::env::var_os("APPLY_PATCH_TEST_ROOT").expect("set by the parent"));
    let repo = Repo::discover(&root).unwrap().unwrap();
    let (blob, _) = repo.index_blob("a.txt").unwrap().unwrap();
    assert_eq!(blob, b"in the alternative index\n");
    // GIT_DIR wins over discovery: a root outside that work tree is not in it.
    let elsewhere =
        PathBuf::from(std::env::var_os("APPLY_PATCH_TEST_ELSEWHERE").expect("set by the parent"));
    assert!(Repo::discover(&elsewhere).unwrap().is_none());
}

#[test]
fn symlinks_are_matched_and_staged_as_links() {
    let s = Scratch::new(&[]);
    s.write("target.txt", "t\n");
    std::os::unix::fs::symlink("target.txt", s.dir.join("link")).unwrap();
    s.commit_all("init");
    let repo = s.open();
    let entry = repo.index_entry("link").unwrap().unwrap();
    assert_eq!(entry.mode, Mode::SYMLINK);
    repo.check_index_matches(&[IndexRequirement::Tracked("link".into())])
        .unwrap();
    // Retarget the link as the transaction would, then stage it.
    std::fs::remove_file(s.dir.join("link")).unwrap();
    std::os::unix::fs::symlink("other.txt", s.dir.join("link")).unwrap();
    let err = s
        .open()
        .check_index_matches(&[IndexRequirement::Tracked("link".into())])
        .map_err(apply_patch::Error::from)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IndexMismatch);
    let repo = s.open();
    let mut index = repo.lock_index().unwrap();
    let put = IndexChange::Put {
        path: "link".into(),
        content: b"other.txt".to_vec(),
        mode: Mode::SYMLINK,
    };
    index.stage(&repo, &[put], true).unwrap();
    index.commit().unwrap();
    assert!(s
        .git(&["ls-files", "--stage", "link"])
        .starts_with("120000 "));
    assert_eq!(s.git(&["show", ":link"]), "other.txt");
    s.assert_status("M  link\n");
}

mod cli;
mod combine;
mod copies;
mod crlf;
mod folders;
mod hooks_env;
mod resend;
mod subdirs;
mod threeway;
