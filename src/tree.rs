//! Stage: plan (input side). The trees a patch applies to: a directory on disk, read through
//! the transaction module so that what is planned and what the commit re-checks agree, or an
//! in-memory [`MemTree`] (path → bytes + mode) for callers without a file system.
//!
//! Nothing here writes to a directory: the disk tree only reads (writing is `txn::commit`'s
//! job); the memory tree is changed only by [`MemTree::apply_changes`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::content::Content;
use crate::txn::{Change, NewState, Snapshot};

/// What a root-relative path holds, as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Missing,
    /// A regular file with its permission bits (`0o644`, `0o755`, …).
    File {
        bytes: Content,
        mode: u32,
    },
    Symlink {
        target: Vec<u8>,
    },
    Directory,
}

/// What a path is, without reading a file's content (for path resolution).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Missing,
    File,
    Symlink(Vec<u8>),
    Directory,
}

/// A tree a patch can be planned against.
pub trait Tree {
    /// The absolute root, when there is one (absolute paths in a patch must lie inside it).
    fn root(&self) -> Option<&Path>;
    /// What `path` is, not following a symlink at its last component. Earlier components are
    /// real directories (the guards resolve symlinks before asking).
    fn kind(&self, path: &str) -> Result<Kind, TreeError>;
    /// Read `path` once: its content and the snapshot the commit re-checks.
    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError>;
    /// True when [`Tree::read`] of `path` gives the bytes its snapshot describes, so that the
    /// snapshot's hash is theirs. A tree that shows other content at a path (the merge base
    /// of a three-way apply) says false there.
    fn shows_snapshot(&self, _path: &str) -> bool {
        true
    }
    /// True when the root lies in a git work tree: a folder below it holding its own `.git`
    /// is then a submodule (or nested repository) and out of bounds.
    fn in_repository(&self) -> bool {
        true
    }
    /// True when the folder `dir` holds a `.git` (a nested repository or submodule): the
    /// path guard's probe of each folder a path goes through, inside a repository.
    fn holds_git(&self, dir: &str) -> Result<bool, TreeError> {
        Ok(self.kind(&format!("{dir}/.git"))? != Kind::Missing)
    }
    /// Compare a diff's `index` blob id with `bytes`, the content of `path`: None when the
    /// id names no content, else whether it matches and the full id. Outside git the bytes
    /// are hashed as they are; the git work tree hashes them as `git add` would store them.
    fn blob_matches(
        &self,
        _path: &str,
        id: &str,
        bytes: &[u8],
    ) -> Result<Option<(bool, String)>, TreeError> {
        Ok(crate::hash::blob_matches(id, bytes))
    }
}

/// A directory on disk.
#[derive(Debug, Clone)]
pub struct DiskTree {
    root: PathBuf,
    in_repository: bool,
    /// The folder [`Tree::kind`] looked in last (shared by clones).
    last: Arc<Mutex<LastFolder>>,
    /// The open root and folders [`Tree::read`] reads through, opened at the first read
    /// (shared by clones): a patch's files are read without a walk from the root each.
    reader: Arc<Mutex<Option<crate::txn::SnapshotReader>>>,
}

/// The folders of the last lookups, kept open by root-relative path: the path checks ask for
/// a path's components one after the other (`a`, `a/b`, `a/b/c`, …) and for the files of a
/// patch folder after folder, so each lookup starts from the nearest folder already open
/// instead of the root. Looked up by whole path, a deep path cost its depth in every lookup
/// (depth² in all) and failed past `PATH_MAX` (`File name too long`); reopened from the root
/// at each change of folder, a many-file patch cost a walk per file.
#[derive(Default)]
struct LastFolder(std::collections::HashMap<String, crate::txn::dirfd::Dir>);

/// The most folders [`LastFolder`] keeps open (all but the one opened last are let go past
/// it: a patch's paths come folder by folder).
const KEPT_FOLDERS: usize = 64;

impl std::fmt::Debug for LastFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LastFolder").field(&self.0.len()).finish()
    }
}

impl DiskTree {
    /// A tree rooted at `root` (made absolute; it must be a directory).
    pub fn new(root: &Path) -> Result<Self, TreeError> {
        let root = crate::root::check_root(root)?;
        // The one discovery (`root::git_dir_of`); a repository that cannot be opened keeps the
        // nested-repository guard on, the safe side.
        let in_repository = crate::root::git_dir_of(&root).map_or(true, |dir| dir.is_some());
        Ok(DiskTree::at(root, in_repository))
    }

    /// The tree of a state place's root, with the repository its discovery found (the
    /// pipeline discovers it once per run for both).
    pub(crate) fn of_state(state: &crate::state::StateDir) -> Self {
        DiskTree::at(state.root().to_path_buf(), state.git_dir().is_some())
    }

    /// The tree of `root_canon` (a canonical directory, as [`crate::root::check_root`]
    /// returns it), with what a discovery already found: whether it lies in a work tree.
    pub(crate) fn at(root_canon: PathBuf, in_repository: bool) -> Self {
        DiskTree {
            root: root_canon,
            in_repository,
            last: Arc::default(),
            reader: Arc::default(),
        }
    }

    /// The canonical root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }
}

impl DiskTree {
    /// Lets go of the folders kept open for lookups and reads (the tree opens them again if
    /// asked): before a commit, which may remove one of them — Windows refuses to remove a
    /// folder while a handle holds it open.
    pub(crate) fn close_folders(&self) {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .clear();
        *self.reader.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Opens `folder` (relative to the root) from the nearest folder above it already open,
    /// and keeps it open. Symlinks on the way are followed, as a lookup by path follows them
    /// (the path checks decide about them, not this).
    fn folder<'l>(
        &self,
        last: &'l mut LastFolder,
        folder: &str,
    ) -> std::io::Result<&'l crate::txn::dirfd::Dir> {
        use crate::txn::dirfd::Dir;
        if !last.0.contains_key(folder) {
            let mut base = folder;
            let (mut dir, rest) = loop {
                let rest = folder[base.len()..].split('/').filter(|c| !c.is_empty());
                if let Some(above) = last.0.get(base) {
                    let mut rest = rest;
                    let first = rest.next().expect("an open folder above differs from it");
                    break (above.open_child_following(first.as_bytes())?, rest);
                }
                if base.is_empty() {
                    break (Dir::open(&self.root)?, rest);
                }
                base = base.rsplit_once('/').map_or("", |(up, _)| up);
            };
            for comp in rest {
                dir = dir.open_child_following(comp.as_bytes())?;
            }
            if last.0.len() >= KEPT_FOLDERS {
                last.0.clear();
            }
            last.0.insert(folder.to_string(), dir);
        }
        Ok(&last.0[folder])
    }
}

impl Tree for DiskTree {
    fn root(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn in_repository(&self) -> bool {
        self.in_repository
    }

    fn kind(&self, path: &str) -> Result<Kind, TreeError> {
        use crate::txn::dirfd::Kind as DiskKind;
        let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let found = match self.folder(&mut last, folder) {
            Ok(dir) => dir.stat(name.as_bytes()),
            Err(e) => Err(e),
        };
        let stat = match found {
            Ok(Some(st)) => st,
            // A missing folder, or a component that is a file, makes everything below it
            // missing.
            Ok(None) => return Ok(Kind::Missing),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Kind::Missing)
            }
            Err(e) => return Err(TreeError::io(path, "cannot inspect", &e)),
        };
        let dir = &last.0[folder];
        Ok(match stat.kind {
            DiskKind::Symlink => Kind::Symlink(
                dir.read_link(name.as_bytes())
                    .map_err(|e| TreeError::io(path, "cannot read the link", &e))?,
            ),
            DiskKind::Directory => Kind::Directory,
            DiskKind::File | DiskKind::Other => Kind::File,
        })
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError> {
        use crate::txn::Found;
        let (snapshot, content) = {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            let reader = match &mut *reader {
                Some(reader) => reader,
                empty => empty.insert(crate::txn::SnapshotReader::open(&self.root)?),
            };
            reader.read(path)?
        };
        let node = match content {
            Found::Missing => Node::Missing,
            Found::Directory => Node::Directory,
            Found::Symlink(target) => Node::Symlink { target },
            Found::File(bytes) => {
                let mode = match &snapshot {
                    Snapshot::File { mode, .. } => *mode,
                    _ => 0o644,
                };
                Node::File { bytes, mode }
            }
        };
        Ok((snapshot, node))
    }
}

/// One entry of a [`MemTree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemEntry {
    /// A regular file and its permission bits.
    File { bytes: Vec<u8>, mode: u32 },
    /// A symbolic link and its target.
    Symlink { target: Vec<u8> },
}

/// An in-memory tree: `/`-separated relative path → file or symlink. Directories exist
/// implicitly (a path is a directory when some entry lies below it).
///
/// ```
/// use apply_patch::tree::MemTree;
/// let mut tree = MemTree::new();
/// tree.insert("src/lib.rs", b"fn main() {}\n".to_vec());
/// assert_eq!(tree.get("src/lib.rs"), Some(&b"fn main() {}\n"[..]));
/// assert!(tree.is_dir("src"));
/// ```
///
/// Made for snapshot-tested suites: build it from `(path, text)` pairs, apply a patch, and
/// snapshot its [`Display`](std::fmt::Display) (every path in order, a header per file, the
/// content as it is; see [`MemTree::fmt`](#impl-Display-for-MemTree)) or its JSON
/// (`serde_json::to_string(&tree)`), with the report beside it:
///
/// ```
/// use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
/// use apply_patch::report::Report;
/// use apply_patch::tree::MemTree;
///
/// let mut tree = MemTree::from_pairs([("greet.py", "print('hi')\n"), ("notes", "draft")]);
/// let patch = b"*** Begin Patch\n*** Update File: greet.py\n@@\n-print('hi')\n+print('hello')\n*** End Patch\n";
/// let result = apply_bytes(Target::Memory(&mut tree), patch, &Options::default(), Mode::Write);
/// let report = Report::from(&result);
/// assert!(report.ok);
/// // In a suite: insta::assert_snapshot!(tree);
/// assert_eq!(
///     tree.to_string(),
///     "=== greet.py\nprint('hello')\n=== notes\ndraft\n\\ No newline at end of file\n"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemTree {
    entries: BTreeMap<String, MemEntry>,
}

impl MemTree {
    pub fn new() -> Self {
        MemTree::default()
    }

    /// A tree of regular files (mode `0o644`) from `(path, content)` pairs; a later pair
    /// replaces an earlier one with the same path.
    pub fn from_pairs<P, C>(pairs: impl IntoIterator<Item = (P, C)>) -> Self
    where
        P: AsRef<str>,
        C: Into<Vec<u8>>,
    {
        let mut tree = MemTree::new();
        for (path, content) in pairs {
            tree.insert(path.as_ref(), content.into());
        }
        tree
    }

    /// Add or replace a regular file with mode `0o644`.
    pub fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        self.insert_entry(path, MemEntry::File { bytes, mode: 0o644 });
    }

    /// Add or replace any entry.
    pub fn insert_entry(&mut self, path: &str, entry: MemEntry) {
        self.entries.insert(path.to_string(), entry);
    }

    /// The bytes of a regular file.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        match self.entries.get(path)? {
            MemEntry::File { bytes, .. } => Some(bytes),
            MemEntry::Symlink { .. } => None,
        }
    }

    /// Any entry.
    pub fn entry(&self, path: &str) -> Option<&MemEntry> {
        self.entries.get(path)
    }

    /// Every entry, sorted by path.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &MemEntry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// True when some entry lies below `path`.
    pub fn is_dir(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.entries
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// Apply a committed plan's changes.
    pub fn apply_changes(&mut self, changes: &[Change]) {
        for c in changes {
            match &c.after {
                NewState::File { bytes, mode, .. } => {
                    self.entries.insert(
                        c.path.clone(),
                        MemEntry::File {
                            bytes: bytes.to_vec(),
                            mode: *mode,
                        },
                    );
                }
                NewState::Symlink { target } => {
                    self.entries.insert(
                        c.path.clone(),
                        MemEntry::Symlink {
                            target: target.clone(),
                        },
                    );
                }
                NewState::Absent => {
                    self.entries.remove(&c.path);
                }
            }
        }
    }
}

impl<P: AsRef<str>, C: Into<Vec<u8>>> FromIterator<(P, C)> for MemTree {
    /// As [`MemTree::from_pairs`].
    fn from_iter<I: IntoIterator<Item = (P, C)>>(pairs: I) -> Self {
        MemTree::from_pairs(pairs)
    }
}

impl Tree for MemTree {
    fn root(&self) -> Option<&Path> {
        None
    }

    fn kind(&self, path: &str) -> Result<Kind, TreeError> {
        Ok(match self.entries.get(path) {
            Some(MemEntry::File { .. }) => Kind::File,
            Some(MemEntry::Symlink { target }) => Kind::Symlink(target.clone()),
            None if path.is_empty() || self.is_dir(path) => Kind::Directory,
            None => Kind::Missing,
        })
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError> {
        Ok(match self.entries.get(path) {
            Some(MemEntry::File { bytes, mode }) => (
                Snapshot::File {
                    len: bytes.len() as u64,
                    mtime: None,
                    mode: *mode,
                    sha256: crate::txn::sha256(bytes).into(),
                },
                Node::File {
                    bytes: bytes.clone().into(),
                    mode: *mode,
                },
            ),
            Some(MemEntry::Symlink { target }) => (
                Snapshot::Symlink {
                    target: target.clone(),
                },
                Node::Symlink {
                    target: target.clone(),
                },
            ),
            None if path.is_empty() || self.is_dir(path) => (Snapshot::Directory, Node::Directory),
            None => (Snapshot::Missing, Node::Missing),
        })
    }
}

mod error;
mod show;

pub use error::TreeError;

#[cfg(test)]
mod tests {
    use super::*;

    /// The open folders a disk tree keeps between reads change nothing it sees: every file
    /// of many folders, read twice in another order, the current bytes of a rewritten file,
    /// and a symlinked folder on the way still refused (`path_escape`).
    #[cfg(unix)]
    #[test]
    fn a_disk_tree_reads_through_its_open_folders_as_through_fresh_walks() {
        let tmp = tempfile::tempdir().expect("temp dir");
        for i in 0..100 {
            let dir = tmp.path().join(format!("d{i}/e"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join("f.txt"), format!("{i}")).expect("write");
        }
        std::os::unix::fs::symlink(tmp.path().join("d0"), tmp.path().join("link"))
            .expect("symlink");
        let tree = DiskTree::new(tmp.path()).expect("tree");
        let read = |path: &str| match tree.read(path).expect("read").1 {
            Node::File { bytes, .. } => {
                String::from_utf8(bytes.as_slice().to_vec()).expect("utf-8")
            }
            other => panic!("{path}: {other:?}"),
        };
        for i in (0..100).chain((0..100).rev()) {
            assert_eq!(read(&format!("d{i}/e/f.txt")), i.to_string());
            assert_eq!(
                tree.kind(&format!("d{i}/e/f.txt")).expect("kind"),
                Kind::File
            );
        }
        std::fs::write(tmp.path().join("d5/e/f.txt"), "new").expect("rewrite");
        assert_eq!(read("d5/e/f.txt"), "new");
        assert_eq!(tree.read("d5/e/none").expect("missing").1, Node::Missing);
        assert_eq!(tree.read("d500/e/f.txt").expect("missing").1, Node::Missing);
        let err = tree.read("link/e/f.txt").expect_err("a symlinked folder");
        assert_eq!(err.code(), crate::ErrorCode::PathEscape);
    }

    #[test]
    fn mem_tree_kinds() {
        let mut t = MemTree::new();
        t.insert("a/b.txt", b"x".to_vec());
        t.insert_entry(
            "l",
            MemEntry::Symlink {
                target: b"a/b.txt".to_vec(),
            },
        );
        assert_eq!(t.kind("a").ok(), Some(Kind::Directory));
        assert_eq!(t.kind("a/b.txt").ok(), Some(Kind::File));
        assert_eq!(t.kind("ab").ok(), Some(Kind::Missing));
        assert_eq!(t.kind("l").ok(), Some(Kind::Symlink(b"a/b.txt".to_vec())));
        let (_, node) = t.read("a/b.txt").expect("memory reads do not fail");
        assert_eq!(
            node,
            Node::File {
                bytes: b"x".to_vec().into(),
                mode: 0o644
            }
        );
    }

    #[test]
    fn mem_tree_applies_changes() {
        let mut t = MemTree::new();
        t.insert("gone", b"x".to_vec());
        t.apply_changes(&[
            Change {
                path: "gone".into(),
                before: Snapshot::Missing,
                after: NewState::Absent,
            },
            Change {
                path: "new".into(),
                before: Snapshot::Missing,
                after: NewState::File {
                    bytes: b"y".to_vec().into(),
                    mode: 0o755,
                },
            },
        ]);
        assert!(t.get("gone").is_none());
        assert_eq!(
            t.entry("new"),
            Some(&MemEntry::File {
                bytes: b"y".to_vec(),
                mode: 0o755
            })
        );
    }
}
