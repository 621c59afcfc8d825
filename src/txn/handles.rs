//! Stage: commit. A bounded set of open folder handles for the steps of one commit: a folder
//! is opened component by component without following symlinks (as [`journal::locate`]
//! does) from the nearest folder already open, and at most [`LIMIT`] stay open. Holding
//! every target's folder open for the whole commit ran out of file descriptors past ~1,000
//! folders; walking down from the root for every folder of a deep chain cost depth² opens.
//! The staleness check of a commit fills it and the later steps use it, so that a folder is
//! opened once per transaction, not once per step; a folder found missing is remembered
//! (every target under it is missing too) until the commit creates folders.
//! Must not decide anything: it only opens folders.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::dirfd::{self, Dir};
use super::journal;
use super::TxnError;

/// The most folder handles kept open at once (besides the root's).
pub const LIMIT: usize = 64;

/// Open folders by root-relative path (`""` is the root).
#[derive(Clone)]
pub(crate) struct Handles {
    open: HashMap<String, Arc<Dir>>,
    /// Folders found missing (each one's parent was there), until [`Handles::forget_missing`].
    missing: HashSet<String>,
}

/// The folder part of a root-relative path (`""` for a name at the top).
pub(crate) fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Handles {
    /// Handles under `root` (a handle of its own on the root is kept).
    pub fn new(root: &Dir) -> Result<Handles, TxnError> {
        let top = Dir::open_child(root, b".")
            .map_err(|e| TxnError::io_of(".", "cannot open the root for the commit", &e))?;
        let mut open = HashMap::new();
        open.insert(String::new(), Arc::new(top));
        Ok(Handles {
            open,
            missing: HashSet::new(),
        })
    }

    /// The parent folder of `path` and its final name, as [`journal::locate`] finds them
    /// (a symlink on the way is `path_escape`), through the folders open here.
    pub fn locate(&mut self, root: &Dir, path: &str) -> Result<journal::Located, TxnError> {
        let comps = journal::checked_components(path)?;
        let (name, parents) = comps
            .split_last()
            .expect("split('/') yields at least one component because it always does");
        let dir = folder_of(path);
        let (parent, existing) = match self.folder(root, dir, path)? {
            Some(d) => (Some(d), parents.len()),
            None => (None, self.existing_depth(dir)),
        };
        Ok(journal::Located {
            parent,
            name: name.to_vec(),
            existing,
            components: comps.iter().map(|c| c.to_vec()).collect(),
        })
    }

    /// How many leading components of `dir` exist, once [`Handles::folder`] found it
    /// missing: one less than those of the missing folder above it (whose parent was there).
    fn existing_depth(&self, dir: &str) -> usize {
        let mut at = dir;
        let mut shallowest = None;
        while !at.is_empty() {
            if self.missing.contains(at) {
                shallowest = Some(at);
            }
            at = folder_of(at);
        }
        shallowest.map_or(0, |m| m.split('/').count() - 1)
    }

    /// Closes the handle of `dir` if one is open (before the folder is removed: Windows
    /// cannot remove a folder while a handle holds it).
    pub fn close(&mut self, dir: &str) {
        if !dir.is_empty() {
            self.open.remove(dir);
        }
    }

    /// Closes every folder's handle but the root's (before the clean-up after a commit or
    /// its rollback removes folders: Windows cannot remove a folder while a handle holds it).
    pub fn close_all(&mut self) {
        self.open.retain(|dir, _| dir.is_empty());
    }

    /// Forgets the folders found missing (the commit is about to create folders).
    pub fn forget_missing(&mut self) {
        self.missing.clear();
    }

    /// `dir` or a folder above it was found missing.
    fn known_missing(&self, dir: &str) -> bool {
        if self.missing.is_empty() {
            return false;
        }
        let mut at = dir;
        while !at.is_empty() {
            if self.missing.contains(at) {
                return true;
            }
            at = folder_of(at);
        }
        false
    }

    /// The folder holding `path` (root-relative); `None` when a folder on the way is missing.
    pub fn parent(&mut self, root: &Dir, path: &str) -> Result<Option<Arc<Dir>>, TxnError> {
        self.folder(root, folder_of(path), path)
    }

    /// The folder `dir` (root-relative, `""` for the root); `None` when a component is
    /// missing. `path` names the target in errors; a symlink or non-folder on the way is
    /// refused as [`journal::locate`] refuses it.
    pub fn folder(&mut self, root: &Dir, dir: &str, path: &str) -> Result<Option<Arc<Dir>>, TxnError> {
        self.walk(root, dir, path, false)
    }

    /// [`Handles::parent`] for a read: a regular file where a folder of the way should be
    /// makes `path` missing, as a missing folder does (a patch may name `a/b` where the
    /// file `a` stands: that is a file that does not exist, not a failure to read). A
    /// symlink on the way is still refused.
    pub fn parent_to_read(&mut self, root: &Dir, path: &str) -> Result<Option<Arc<Dir>>, TxnError> {
        self.walk(root, folder_of(path), path, true)
    }

    fn walk(
        &mut self,
        root: &Dir,
        dir: &str,
        path: &str,
        file_is_missing: bool,
    ) -> Result<Option<Arc<Dir>>, TxnError> {
        if let Some(d) = self.open.get(dir) {
            return Ok(Some(Arc::clone(d)));
        }
        if self.known_missing(dir) {
            return Ok(None);
        }
        let mut base = folder_of(dir);
        let mut current = loop {
            if let Some(d) = self.open.get(base) {
                break Arc::clone(d);
            }
            base = folder_of(base);
        };
        let rest = if base.is_empty() {
            dir
        } else {
            &dir[base.len() + 1..]
        };
        let mut so_far = base.to_string();
        for comp in rest.split('/') {
            let child = match current.open_child(comp.as_bytes()) {
                Ok(c) => Arc::new(c),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let gone = if so_far.is_empty() {
                        comp.to_string()
                    } else {
                        format!("{so_far}/{comp}")
                    };
                    self.missing.insert(gone);
                    return Ok(None);
                }
                Err(e)
                    if file_is_missing
                        && dirfd::is_not_a_real_dir(&e)
                        && matches!(
                            current.stat(comp.as_bytes()),
                            Ok(Some(dirfd::Stat { kind: dirfd::Kind::File, .. }))
                        ) =>
                {
                    return Ok(None);
                }
                Err(e) if dirfd::is_not_a_real_dir(&e) => {
                    // The walk from the root names the symlink (`path_escape`) or the file.
                    return Err(journal::locate(root, path)
                        .err()
                        .unwrap_or_else(|| TxnError::io_of(path, "cannot open a folder of", &e)));
                }
                Err(e) => return Err(TxnError::io_of(path, "cannot open a folder of", &e)),
            };
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(comp);
            if self.open.len() > LIMIT {
                // Forget all but the root: the folders of one commit are mostly visited in
                // order, so the next ones are found below the folder opened last.
                self.open.retain(|k, _| k.is_empty());
            }
            self.open.insert(so_far.clone(), Arc::clone(&child));
            current = child;
        }
        Ok(Some(current))
    }

    /// How many handles are open (for tests of the bound).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deep_chain_and_many_folders_stay_within_the_bound() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let deep: Vec<String> = (0..150).map(|i| format!("d{i}")).collect();
        std::fs::create_dir_all(tmp.path().join(deep.join("/"))).expect("mkdir");
        for i in 0..200 {
            std::fs::create_dir_all(tmp.path().join(format!("w/f{i}"))).expect("mkdir");
        }
        let root = Dir::open(tmp.path()).expect("root");
        let mut handles = Handles::new(&root).expect("handles");
        let bottom = deep.join("/");
        assert!(handles
            .folder(&root, &bottom, &bottom)
            .expect("opens")
            .is_some());
        assert!(handles.len() <= LIMIT + 2);
        for depth in 1..=deep.len() {
            let dir = deep[..depth].join("/");
            assert!(handles.folder(&root, &dir, &dir).expect("opens").is_some());
            assert!(handles.len() <= LIMIT + 2);
        }
        for i in 0..200 {
            let path = format!("w/f{i}/x");
            assert!(handles.parent(&root, &path).expect("opens").is_some());
            assert!(handles.len() <= LIMIT + 2);
        }
        assert!(handles
            .parent(&root, "w/none/x")
            .expect("missing")
            .is_none());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", tmp.path().join("w/link")).expect("symlink");
            let Err(err) = handles.parent(&root, "w/link/x") else {
                panic!("a symlink on the way is refused");
            };
            assert_eq!(err.code(), crate::ErrorCode::PathEscape);
        }
    }

    #[test]
    fn a_missing_folder_is_remembered_until_folders_are_created() {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut handles = Handles::new(&root).expect("handles");
        let found = handles.locate(&root, "a/b/x.txt").expect("found");
        assert!(found.parent.is_some());
        assert_eq!(found.existing, 2);
        let missing = handles.locate(&root, "a/b/c/d/e.txt").expect("missing");
        assert!(missing.parent.is_none());
        assert_eq!(missing.existing, 2, "a and a/b exist");
        assert_eq!(missing.components.len(), 5);
        // Below a folder known to be missing, nothing is opened and the depth is the same.
        std::fs::create_dir_all(tmp.path().join("a/b/c/d")).expect("made behind its back");
        let below = handles.locate(&root, "a/b/c/d/f.txt").expect("still missing");
        assert!(below.parent.is_none());
        assert_eq!(below.existing, 2);
        let top = handles.locate(&root, "z/y.txt").expect("missing at the top");
        assert_eq!((top.parent.is_none(), top.existing), (true, 0));
        handles.forget_missing();
        let now = handles.locate(&root, "a/b/c/d/f.txt").expect("found now");
        assert!(now.parent.is_some());
        assert_eq!(now.existing, 4);
        assert_eq!(handles.locate(&root, "top.txt").expect("root").existing, 0);
    }
}
