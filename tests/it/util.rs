//! Temp-tree helper for integration tests: write a tree from a map, snapshot a tree to bytes
//! and modes, run the real binary, and render its output for snapshots with temp paths
//! normalised.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a path of a tree holds (modes are permission bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File { bytes: Vec<u8>, mode: u32 },
    Symlink(Vec<u8>),
    Dir,
}

/// A whole tree: root-relative path → entry, directories included (so empty folders count).
pub type TreeSnapshot = BTreeMap<String, Entry>;

/// A temporary directory holding the work tree (`root/`) and a private state directory, so
/// runs never touch the user's own state.
pub struct TempTree {
    dir: tempfile::TempDir,
}

impl TempTree {
    /// An empty tree.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temp dir can be created because /tmp is writable");
        std::fs::create_dir(dir.path().join("root")).expect("fresh temp dir");
        std::fs::create_dir(dir.path().join("state")).expect("fresh temp dir");
        TempTree { dir }
    }

    /// A tree holding `files` (mode 0644).
    pub fn with(files: &[(&str, &str)]) -> Self {
        let t = TempTree::new();
        for (p, c) in files {
            t.write(p, c.as_bytes());
        }
        t
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// A path beside the root (for patch files that must not be part of the tree).
    pub fn outside(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, path: &str, bytes: &[u8]) {
        let full = self.root().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("parent dirs in a temp tree");
        }
        std::fs::write(full, bytes).expect("write in a temp tree");
    }

    pub fn write_mode(&self, path: &str, bytes: &[u8], mode: u32) {
        self.write(path, bytes);
        set_mode(&self.root().join(path), mode);
    }

    pub fn symlink(&self, path: &str, target: &str) {
        symlink(target, &self.root().join(path));
    }

    /// A valid git dir at `.git` (objects, refs, HEAD), as git and gix recognise one: an
    /// empty `.git` folder is no repository.
    pub fn git_dir(&self) {
        for sub in [".git/objects", ".git/refs/heads"] {
            self.mkdir(sub);
        }
        self.write(".git/HEAD", b"ref: refs/heads/main\n");
    }

    pub fn mkdir(&self, path: &str) {
        std::fs::create_dir_all(self.root().join(path)).expect("mkdir in a temp tree");
    }

    pub fn read(&self, path: &str) -> Vec<u8> {
        std::fs::read(self.root().join(path)).unwrap_or_default()
    }

    pub fn read_str(&self, path: &str) -> String {
        String::from_utf8_lossy(&self.read(path)).into_owned()
    }

    /// Every entry of the work tree.
    pub fn snapshot(&self) -> TreeSnapshot {
        snapshot_dir(&self.root())
    }

    /// Run the binary with `args`, the root as working directory, and `stdin`.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_apply-patch"));
        cmd.args(args);
        self.spawn(cmd, stdin)
    }

    /// [`TempTree::run`] with the test build's failpoint `failpoint` set (e.g.
    /// `commit:3:abort`, see `src/txn/failpoint.rs`).
    pub fn run_with_failpoint(&self, args: &[&str], stdin: &str, failpoint: &str) -> Output {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_apply-patch"));
        cmd.args(args).env("APPLY_PATCH_FAILPOINT", failpoint);
        self.spawn(cmd, stdin)
    }

    /// Run the binary under the name `apply_patch` (the Codex drop-in).
    pub fn run_as_codex(&self, args: &[&OsStr], stdin: &str) -> Output {
        let link = self
            .dir
            .path()
            .join(format!("apply_patch{}", std::env::consts::EXE_SUFFIX));
        if !link.exists() {
            // A copy on Windows, where a symlink needs a privilege.
            #[cfg(unix)]
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_apply-patch"), &link)
                .expect("symlink to the binary");
            #[cfg(windows)]
            std::fs::copy(env!("CARGO_BIN_EXE_apply-patch"), &link).expect("copy of the binary");
        }
        let mut cmd = self.command(&link);
        cmd.args(args);
        self.spawn(cmd, stdin)
    }

    /// `program` (the binary, or a shell that runs it) set up as every test runs it: the root
    /// as working directory, a private state directory, no colour, no inherited failpoint.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.root())
            .env("XDG_STATE_HOME", self.outside("state"))
            .env("HOME", self.outside("state"))
            .env("NO_COLOR", "1")
            .env_remove("APPLY_PATCH_FAILPOINT")
            .env_remove("APPLY_PATCH_DURABILITY");
        cmd
    }

    fn spawn(&self, mut cmd: Command, stdin: &str) -> Output {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the binary runs");
        let written = child
            .stdin
            .take()
            .expect("stdin was piped")
            .write_all(stdin.as_bytes());
        // A run that answers without reading all of its input (a usage error, a refusal
        // decided early) closes the pipe first: its output is what the test checks.
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.expect("write stdin"),
        }
        let out = child.wait_with_output().expect("the binary finishes");
        Output {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status.code().unwrap_or(-1),
            temp: self.dir.path().to_path_buf(),
        }
    }
}

/// Sets the permission bits of `path`; nothing on Windows, which has none (the writer ignores
/// modes there as git's `core.filemode=false` does).
pub fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .expect("chmod in a temp tree");
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

/// The permission bits of a file; on Windows the constant the writer reports there.
pub fn mode_of(md: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        md.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = md;
        0o644
    }
}

/// Creates the symlink `link` pointing at `target` (on Windows a file symlink, with `\`
/// between components as Windows resolves them).
pub fn symlink(target: &str, link: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, link).expect("symlink in a temp tree");
    #[cfg(windows)]
    std::os::windows::fs::symlink_file(target.replace('/', "\\"), link)
        .expect("symlink in a temp tree");
}

/// A symlink's target as the bytes git records (`/` between components on every OS).
pub fn link_bytes(target: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        target.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    target.to_string_lossy().replace('\\', "/").into_bytes()
}

/// Snapshot any directory (used for the work tree and for `expected/` folders).
pub fn snapshot_dir(root: &Path) -> TreeSnapshot {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut TreeSnapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .expect("below root")
            .to_string_lossy()
            .into_owned();
        #[cfg(windows)]
        let rel = rel.replace('\\', "/");
        let md = std::fs::symlink_metadata(&path).expect("metadata of a listed entry");
        if md.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("read link");
            out.insert(rel, Entry::Symlink(link_bytes(&target)));
        } else if md.is_dir() {
            out.insert(rel, Entry::Dir);
            walk(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).expect("read a listed file");
            out.insert(
                rel,
                Entry::File {
                    bytes,
                    mode: mode_of(&md) & 0o777,
                },
            );
        }
    }
}

/// Copy a directory tree (files, modes, symlinks, empty folders).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy target");
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let md = std::fs::symlink_metadata(&src).expect("metadata");
        if md.file_type().is_symlink() {
            let target = std::fs::read_link(&src).expect("read link");
            symlink(&target.to_string_lossy(), &dst);
        } else if md.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy file");
        }
    }
}

/// One run of the binary.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
    temp: PathBuf,
}

impl Output {
    /// stdout, stderr and the exit status in one text, temp paths replaced by `[TEMP]`.
    pub fn normalized(&self) -> String {
        let text = format!(
            "----- stdout -----\n{}----- stderr -----\n{}[exit status: {}]\n",
            self.stdout, self.stderr, self.status
        );
        let temp = self.temp.to_string_lossy().into_owned();
        let canonical = std::fs::canonicalize(&self.temp)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| temp.clone());
        text.replace(&canonical, "[TEMP]").replace(&temp, "[TEMP]")
    }

    /// The JSON object printed with `--json`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is one JSON object ({e}): {}", self.stdout))
    }
}

/// Assert a CLI snapshot under `snapshots/cli/`.
#[macro_export]
macro_rules! assert_cli_snapshot {
    ($name:expr, $output:expr) => {
        insta::with_settings!({
            snapshot_path => "../../snapshots/cli",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $output.normalized());
        })
    };
}

/// Every production of a grammar has exactly one `/// grammar: NAME` parser function, and
/// every such tag names a production of that grammar.
pub fn assert_productions_tagged(
    productions: &std::collections::BTreeSet<String>,
    tags: &[String],
) {
    let tagged: std::collections::BTreeSet<String> = tags.iter().cloned().collect();
    assert_eq!(
        tags.len(),
        tagged.len(),
        "a production is tagged twice: {tags:?}"
    );
    let untagged: Vec<_> = productions.difference(&tagged).collect();
    assert!(
        untagged.is_empty(),
        "productions without a `/// grammar:` function: {untagged:?}"
    );
    let unknown: Vec<_> = tagged.difference(productions).collect();
    assert!(
        unknown.is_empty(),
        "`/// grammar:` tags naming no production: {unknown:?}"
    );
}
