//! Stage: plan (guards). The checks a file patch must pass before any hunk is placed (SPEC §6):
//! paths confined to the root (`path_escape`), protected globs, notebooks, NUL bytes,
//! `*** Base` hashes and git blob ids.
//!
//! Pure apart from asking a [`Tree`] what a path is (to follow symlinks); never reads file
//! content itself and never writes.

use std::path::Path;

mod error;

pub use error::{EscapeWhy, GuardError, SymlinkWhy};

use crate::tree::{Kind, Tree};

/// How many symlinks one path may pass through before we give up (as the OS does).
const MAX_LINKS: usize = 40;

/// Turn a patch path into a normalised root-relative path: joins the heredoc `cd` directory,
/// strips an absolute root prefix, folds `.` and `..`, and refuses anything that leaves the
/// root or enters `.git/`.
pub fn normalize(path: &str, cd: Option<&str>, root: Option<&Path>) -> Result<String, GuardError> {
    match confine(path, cd, root)? {
        Some(rel) => Ok(rel),
        None => Err(escape_error(path, cd, EscapeWhy::RootItself)),
    }
}

/// The confinement itself (one policy for patches and for `read`): [`normalize`], except that
/// a path naming the root itself is `Ok(None)` (the caller says what that means to it).
pub fn confine(path: &str, cd: Option<&str>, root: Option<&Path>) -> Result<Option<String>, GuardError> {
    let escape = |why: EscapeWhy| escape_error(path, cd, why);
    // Every front end's paths pass here: what no file name can be is a patch error.
    if path.contains('\0') || path.ends_with('/') {
        return Err(GuardError::NotAFileName {
            path: path.to_string(),
            nul: path.contains('\0'),
        });
    }
    let joined = join_cd(cd, path);
    let relative = if joined.starts_with('/') {
        let Some(root) = root else {
            return Err(escape(EscapeWhy::Absolute));
        };
        // Fold `.` and `..` first, as the OS would: `/root/../root/x` names `/root/x`.
        strip_root(&fold_absolute(&joined), root)
            .ok_or_else(|| escape(EscapeWhy::AbsoluteOutside))?
    } else {
        joined
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(escape(EscapeWhy::LeadsOutside));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(escape(EscapeWhy::InsideGit));
    }
    Ok(Some(parts.join("/")))
}

/// The `path_escape` refusal of a path (shown with the heredoc's `cd` when there is one).
fn escape_error(path: &str, cd: Option<&str>, why: EscapeWhy) -> GuardError {
    GuardError::Escape {
        path: path.to_string(),
        cd: cd.map(str::to_string),
        why,
    }
}

/// A patch path as the shell would see it after the heredoc's `cd DIR`: an absolute path
/// stays as it is; a relative one is taken from DIR, which may itself be absolute (then the
/// result is absolute, and must lie inside the root like any absolute path).
pub fn join_cd(cd: Option<&str>, path: &str) -> String {
    match cd {
        Some(dir) if !dir.is_empty() && !path.starts_with('/') => {
            format!("{}/{path}", dir.trim_end_matches('/'))
        }
        _ => path.to_string(),
    }
}

/// An absolute path with `.` and `..` folded lexically (`..` at `/` stays at `/`).
fn fold_absolute(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `path` without the root prefix. The patch may name the root through a symlinked parent
/// (`/tmp` vs `/private/tmp`…), and the file may not exist yet: the longest existing ancestor
/// is made canonical and the rest appended (any `..` left in the rest is folded, and checked,
/// by the caller).
fn strip_root(path: &str, root: &Path) -> Option<String> {
    let p = Path::new(path);
    if let Ok(rest) = p.strip_prefix(root) {
        return Some(rest.to_string_lossy().into_owned());
    }
    let mut existing = p;
    let mut tail: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(existing) {
            let full = tail
                .iter()
                .rev()
                .fold(canonical, |acc, part| acc.join(part));
            return full
                .strip_prefix(root)
                .ok()
                .map(|r| r.to_string_lossy().into_owned());
        }
        tail.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// Resolve the symlinks on a normalised path: every directory component is followed (it must
/// stay inside the root), and the last one too when `follow_last` (an Update edits the link's
/// target; a Delete removes the link itself). A directory holding its own `.git` (a
/// submodule or nested repository) is refused as well.
pub fn resolve(tree: &dyn Tree, path: &str, follow_last: bool) -> Result<String, GuardError> {
    let escape = |why: SymlinkWhy| GuardError::Symlink {
        path: path.to_string(),
        why,
    };
    let mut pending: Vec<String> = path.split('/').rev().map(str::to_string).collect();
    let mut done: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        let last = pending.is_empty();
        done.push(part);
        let here = done.join("/");
        match tree.kind(&here)? {
            Kind::Symlink(target) if !last || follow_last => {
                hops += 1;
                if hops > MAX_LINKS {
                    return Err(escape(SymlinkWhy::TooManyLinks));
                }
                done.pop();
                let target = String::from_utf8_lossy(&target).into_owned();
                let base = if target.starts_with('/') {
                    let root = tree.root().ok_or_else(|| {
                        escape(SymlinkWhy::AbsoluteTarget {
                            target: target.clone(),
                        })
                    })?;
                    strip_root(&target, root).ok_or_else(|| escape(leads_outside(&here, &target)))?
                } else {
                    format!("{}/{target}", done.join("/"))
                };
                let folded = fold(&base).ok_or_else(|| escape(leads_outside(&here, &target)))?;
                if folded.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
                    return Err(escape(SymlinkWhy::ReachesGit { link: here }));
                }
                done.clear();
                for p in folded.into_iter().rev() {
                    pending.push(p);
                }
            }
            Kind::Directory
                if !last
                    && tree.in_repository()
                    && tree.holds_git(&here)? =>
            {
                return Err(escape(SymlinkWhy::NestedRepository { dir: here }));
            }
            _ => {}
        }
    }
    if done.is_empty() {
        return Err(escape(SymlinkWhy::RootItself));
    }
    Ok(done.join("/"))
}

/// The refusal of a symlink `link -> target` that leads outside the root.
fn leads_outside(link: &str, target: &str) -> SymlinkWhy {
    SymlinkWhy::LeadsOutside {
        link: link.to_string(),
        target: target.to_string(),
    }
}

/// Fold `.` and `..` of a relative path; None when it climbs above the root.
fn fold(path: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p.to_string()),
        }
    }
    Some(parts)
}

/// `--protect GLOB` patterns. A glob without `/` also matches the file name in any directory.
#[derive(Debug, Clone)]
pub struct Globs {
    patterns: Vec<String>,
    full: globset::GlobSet,
    names: globset::GlobSet,
}

impl Globs {
    /// Compile patterns; a bad pattern is a usage error. (A public door: the boundary
    /// error; [`Globs::compile`] is the guard's own.)
    pub fn new(patterns: &[String]) -> Result<Self, crate::error::Error> {
        Ok(Globs::compile(patterns)?)
    }

    /// [`Globs::new`], with the guard's refusal.
    pub(crate) fn compile(patterns: &[String]) -> Result<Self, GuardError> {
        let mut full = globset::GlobSetBuilder::new();
        let mut names = globset::GlobSetBuilder::new();
        for p in patterns {
            let glob = globset::GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .map_err(|e| GuardError::BadGlob {
                    glob: p.clone(),
                    cause: e.to_string(),
                })?;
            if !p.contains('/') {
                names.add(glob.clone());
            }
            full.add(glob);
        }
        let build = |b: globset::GlobSetBuilder| {
            b.build().map_err(|e| GuardError::BadGlobSet {
                cause: e.to_string(),
            })
        };
        Ok(Globs {
            patterns: patterns.to_vec(),
            full: build(full)?,
            names: build(names)?,
        })
    }

    /// The first pattern that matches `path`, if any.
    pub fn matching(&self, path: &str) -> Option<&str> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut hits = self.full.matches(path);
        if hits.is_empty() {
            // `names` holds only the slash-free patterns, in order: map back to them.
            let slashless: Vec<&String> =
                self.patterns.iter().filter(|p| !p.contains('/')).collect();
            hits = self
                .names
                .matches(name)
                .into_iter()
                .filter_map(|i| self.patterns.iter().position(|p| p == slashless[i]))
                .collect();
        }
        hits.first().map(|&i| self.patterns[i].as_str())
    }
}

/// `protected_file` when a `--protect` glob matches.
pub fn check_protected(globs: &Globs, path: &str) -> Result<(), GuardError> {
    match globs.matching(path) {
        Some(glob) => Err(GuardError::Protected {
            path: path.to_string(),
            glob: glob.to_string(),
        }),
        None => Ok(()),
    }
}

/// `unsupported_file` for Jupyter notebooks unless `--allow-notebooks`.
pub fn check_notebook(path: &str, allow: bool) -> Result<(), GuardError> {
    if !allow && path.to_ascii_lowercase().ends_with(".ipynb") {
        return Err(GuardError::Notebook {
            path: path.to_string(),
        });
    }
    Ok(())
}

/// True when the bytes look binary (hold a NUL byte), as git decides. Through `memchr`
/// (about twice the speed of the standard library's search on a large file).
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, bytes).is_some()
}

/// `*** Base:` / JSON `base`: must be a prefix of the SHA-256 of the file's bytes (`sha256`).
pub fn check_base(path: &str, base: &str, sha256: &[u8; 32]) -> Result<(), GuardError> {
    let actual = crate::report::hex(sha256);
    let wanted = base.to_ascii_lowercase();
    if actual.starts_with(&wanted) {
        return Ok(());
    }
    Err(GuardError::StaleBase {
        path: path.to_string(),
        expected: wanted,
        actual,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::tree::{MemEntry, MemTree};

    #[test]
    #[cfg_attr(
        windows,
        ignore = "absolute paths are recognised by a leading `/` only (README Platforms)"
    )]
    fn normalize_folds_and_confines() {
        assert_eq!(normalize("a/./b/../c", None, None).ok(), Some("a/c".into()));
        assert_eq!(normalize("x", Some("sub"), None).ok(), Some("sub/x".into()));
        let code = |p: &str| normalize(p, None, None).err().map(|e| e.code());
        assert_eq!(code("../x"), Some(ErrorCode::PathEscape));
        assert_eq!(code("a/../../x"), Some(ErrorCode::PathEscape));
        assert_eq!(code(".git/config"), Some(ErrorCode::PathEscape));
        assert_eq!(code("/etc/passwd"), Some(ErrorCode::PathEscape));
        let root = Path::new("/work/root");
        assert_eq!(
            normalize("/work/root/a.txt", None, Some(root)).ok(),
            Some("a.txt".into())
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let real = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let new_file = format!("{}/new/dir/f.txt", dir.path().display());
        assert_eq!(
            normalize(&new_file, None, Some(&real)).ok(),
            Some("new/dir/f.txt".into())
        );
        let sneaky = format!("{}/new/../../x", dir.path().display());
        assert_eq!(
            normalize(&sneaky, None, Some(&real)).err().map(|e| e.code()),
            Some(ErrorCode::PathEscape)
        );
    }

    fn link(tree: &mut MemTree, path: &str, target: &str) {
        tree.insert_entry(
            path,
            MemEntry::Symlink {
                target: target.as_bytes().to_vec(),
            },
        );
    }

    #[test]
    fn symlinks_inside_are_followed_and_outside_refused() {
        let mut t = MemTree::new();
        t.insert("real/f.txt", b"x".to_vec());
        link(&mut t, "dir", "real");
        link(&mut t, "f", "real/f.txt");
        link(&mut t, "out", "../elsewhere");
        link(&mut t, "abs", "/etc");
        assert_eq!(
            resolve(&t, "dir/f.txt", false).ok(),
            Some("real/f.txt".into())
        );
        assert_eq!(resolve(&t, "f", true).ok(), Some("real/f.txt".into()));
        assert_eq!(resolve(&t, "f", false).ok(), Some("f".into()));
        for p in ["out/x", "abs/passwd"] {
            assert_eq!(
                resolve(&t, p, true).err().map(|e| e.code()),
                Some(ErrorCode::PathEscape)
            );
        }
    }

    #[test]
    fn nested_repositories_are_refused() {
        let mut t = MemTree::new();
        t.insert("sub/.git", b"gitdir: ../.git/modules/sub\n".to_vec());
        t.insert("sub/a.txt", b"x".to_vec());
        assert_eq!(
            resolve(&t, "sub/a.txt", true).err().map(|e| e.code()),
            Some(ErrorCode::PathEscape)
        );
    }

    #[test]
    fn protect_globs_match_names_and_paths() {
        let g = Globs::new(&["*.lock".into(), "secrets/**".into()]).expect("valid globs");
        assert_eq!(g.matching("a/Cargo.lock"), Some("*.lock"));
        assert_eq!(g.matching("secrets/k/x"), Some("secrets/**"));
        assert_eq!(g.matching("src/main.rs"), None);
        assert!(Globs::new(&["a[".into()]).is_err());
    }

    #[test]
    fn base_is_a_sha256_prefix() {
        // sha256("") = e3b0c442…
        let empty = crate::txn::sha256(b"");
        assert!(check_base("x", "E3B0C442", &empty).is_ok());
        let e = check_base("x", "deadbeef", &empty).expect_err("mismatch");
        assert_eq!(e.code(), ErrorCode::StaleFile);
    }


    /// A tree that cannot answer: a refused look at the disk.
    struct Refusing;

    impl Tree for Refusing {
        fn root(&self) -> Option<&Path> {
            None
        }
        fn kind(&self, path: &str) -> Result<Kind, crate::tree::TreeError> {
            let denied = std::io::Error::from_raw_os_error(13);
            Err(crate::tree::TreeError::io(path, "cannot inspect", &denied))
        }
        fn read(
            &self,
            path: &str,
        ) -> Result<(crate::txn::Snapshot, crate::tree::Node), crate::tree::TreeError> {
            Err(crate::error::Error::new(ErrorCode::IoError, format!("no {path}")).into())
        }
    }

    /// A tree's failure met by the guard becomes the same boundary error as the tree's
    /// own: the guard adds no words and no step, and the tree's error stays its source.
    #[test]
    fn a_trees_failure_passes_through_the_guard_unchanged() {
        use std::error::Error as _;
        let guard = resolve(&Refusing, "a/b.txt", true).expect_err("the tree refuses");
        let tree = Refusing.kind("a").expect_err("the tree refuses");
        assert_eq!(guard, GuardError::Tree { cause: tree.clone() });
        assert_eq!(guard.code(), ErrorCode::PermissionDenied);
        let e = crate::error::Error::from(guard);
        let direct = crate::error::Error::from(tree.clone());
        assert_eq!(e, direct);
        assert_eq!(e.path.as_deref(), Some("a"));
        assert_eq!(e.hint, None);
        assert_eq!(
            serde_json::to_string(&e).expect("serialises"),
            serde_json::to_string(&direct).expect("serialises")
        );
        let source = e.source().and_then(|s| s.downcast_ref::<crate::tree::TreeError>());
        assert_eq!(source, Some(&tree));
    }
}
