//! Stage: commit. A bounded set of open folder handles for the steps of one commit: a folder
//! is opened component by component without following symlinks (as [`journal::locate`]
//! does) from the nearest folder already open, and at most [`LIMIT`] stay open. Holding
//! every target's folder open for the whole commit ran out of file descriptors past ~1,000
//! folders; walking down from the root for every folder of a deep chain cost depth² opens.
//! Must not decide anything: it only opens folders.

use std::collections::HashMap;
use std::sync::Arc;

use super::dirfd::{self, Dir};
use super::journal;
use crate::Error;

/// The most folder handles kept open at once (besides the root's).
pub const LIMIT: usize = 64;

/// Open folders by root-relative path (`""` is the root).
pub(crate) struct Handles {
    open: HashMap<String, Arc<Dir>>,
}

/// The folder part of a root-relative path (`""` for a name at the top).
pub(crate) fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Handles {
    /// Handles under `root` (a handle of its own on the root is kept).
    pub fn new(root: &Dir) -> Result<Handles, Error> {
        let top = Dir::open_child(root, b".")
            .map_err(|e| Error::io(".", "cannot open the root for the commit", &e))?;
        let mut open = HashMap::new();
        open.insert(String::new(), Arc::new(top));
        Ok(Handles { open })
    }

    /// The folder holding `path` (root-relative); `None` when a folder on the way is missing.
    pub fn parent(&mut self, root: &Dir, path: &str) -> Result<Option<Arc<Dir>>, Error> {
        self.folder(root, folder_of(path), path)
    }

    /// The folder `dir` (root-relative, `""` for the root); `None` when a component is
    /// missing. `path` names the target in errors; a symlink or non-folder on the way is
    /// refused as [`journal::locate`] refuses it.
    pub fn folder(&mut self, root: &Dir, dir: &str, path: &str) -> Result<Option<Arc<Dir>>, Error> {
        if let Some(d) = self.open.get(dir) {
            return Ok(Some(Arc::clone(d)));
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
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) if dirfd::is_not_a_real_dir(&e) => {
                    // The walk from the root names the symlink (`path_escape`) or the file.
                    return Err(journal::locate(root, path)
                        .err()
                        .unwrap_or_else(|| Error::io(path, "cannot open a folder of", &e)));
                }
                Err(e) => return Err(Error::io(path, "cannot open a folder of", &e)),
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
            assert_eq!(err.code, crate::ErrorCode::PathEscape);
        }
    }
}
