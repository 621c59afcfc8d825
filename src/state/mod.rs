//! Where apply-patch keeps its own state for a root: the transaction lock, the journal, the
//! undo history, the audit log, and folders other features ask for (`sub`).
//!
//! Stage: infrastructure for the commit. It never touches the user's files; it only decides
//! paths and creates its own folders. Inside a git work tree the state is `.git/apply-patch/`
//! (the git dir as the one discovery, `root::git_dir_of`, finds it: `GIT_DIR`/`GIT_WORK_TREE`
//! honoured; a linked worktree's or submodule's `.git` file is followed to its git dir, but only
//! when that is a valid git dir: a `gitdir:` naming anything else makes no repository); elsewhere
//! it is
//! `$XDG_STATE_HOME/apply-patch/<16 hex of sha256(canonical root)>/` (default
//! `~/.local/state`), and the journal is a hidden folder at the root, `.apply-patch-txn/`, that
//! exists only while a transaction runs (backups must stay on the root's file system).
//!
//! Whose state is it? A git dir is used only when the repository is the user's
//! (`root::open_repo` refuses another's, as git does), and every folder of the state place
//! must be the user's and writable by no one else ([`safety`]): the place is checked when it
//! is found, and each folder when it is made or used. Folders are made 0700.

use std::path::{Path, PathBuf};

pub mod safety;
use safety::Keeps;

use sha2::{Digest, Sha256};

use crate::error::IoFailure;
use crate::{Error, ErrorCode};

/// Why the state place could not be used, with the name or path as a field. The message
/// and the next step are written once, when a refusal becomes the boundary [`Error`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// A feature asked for a folder whose name is not one plain name (a bug of ours).
    #[error("invalid state folder name {name:?}")]
    BadFolderName { name: String },
    /// The secret file does not hold [`SECRET_LEN`] bytes.
    #[error("the state secret {} is damaged (not {SECRET_LEN} bytes)", path.display())]
    DamagedSecret { path: PathBuf },
    /// Neither `XDG_STATE_HOME` nor `HOME` names a place for the state.
    #[error("cannot find a state directory: neither XDG_STATE_HOME nor HOME is set")]
    NoStateDir,
    /// What stands at `path`, where apply-patch keeps `keeps`, may not be used: see
    /// [`safety`] (a symlink, another kind of file, another user's, writable by others, too
    /// large).
    #[error("{}", safety::message(path, *keeps, found))]
    Unsafe {
        path: PathBuf,
        keeps: Keeps,
        found: safety::Found,
    },
    /// The operating system refused a step (`what`, "cannot create the state folder") on
    /// `path`: `permission_denied` or `io_error`, as [`Error::io`] words it.
    #[error("{what} {path}: {cause}")]
    Io {
        path: String,
        what: &'static str,
        #[source]
        cause: IoFailure,
    },
    /// A step outside the state place failed (the root's check, the repository's discovery):
    /// its error is kept whole and becomes the boundary error unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for StateError {
    fn from(cause: Error) -> StateError {
        StateError::Outside {
            cause: Box::new(cause),
        }
    }
}

impl StateError {
    /// The operating system's refusal of `what` on `path` (see [`StateError::Io`]), kept as
    /// its kind and words (and its OS error number).
    pub(crate) fn io(path: &Path, what: &'static str, cause: &std::io::Error) -> StateError {
        StateError::Io {
            path: path.display().to_string(),
            what,
            cause: IoFailure::copy_of(cause),
        }
    }
}

impl StateError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            StateError::BadFolderName { .. } => ErrorCode::Usage,
            StateError::DamagedSecret { .. } | StateError::NoStateDir => ErrorCode::IoError,
            // An owner or mode to fix, as git's ownership refusal; else a file that is not
            // apply-patch's.
            StateError::Unsafe { found, .. } => match found {
                safety::Found::Owner { .. } | safety::Found::Writable { .. } => ErrorCode::Usage,
                _ => ErrorCode::IoError,
            },
            StateError::Io { cause, .. } => cause.code(),
            StateError::Outside { cause } => cause.code,
        }
    }
}

impl From<StateError> for Error {
    fn from(err: StateError) -> Error {
        if let StateError::Outside { cause } = err {
            return *cause;
        }
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: StateError) -> crate::Error {
    let out = Error::new(err.code(), err.to_string());
    match err {
        StateError::BadFolderName { .. } => out,
        StateError::DamagedSecret { path } => out.with_path(path.display().to_string()).with_hint(
            "remove it: a new one is made (journals and undo records made with the old one \
             are then refused)",
        ),
        StateError::NoStateDir => out.with_hint("set XDG_STATE_HOME to a writable directory"),
        StateError::Unsafe { path, keeps, found } => out
            .with_path(path.display().to_string())
            .with_hint(safety::hint(&path, keeps, &found))
            .with_details(serde_json::json!({
                "state": path.display().to_string(),
                "found": found.word(),
            })),
        StateError::Io { path, .. } => out.with_path(path),
        // Passed through whole by the conversion, before this.
        StateError::Outside { cause } => *cause,
    }
}

/// Name of the hidden journal folder at the root of a work tree outside git.
pub const ROOT_JOURNAL_DIR: &str = ".apply-patch-txn";

/// The state place of one root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
    base: PathBuf,
    git_dir: Option<PathBuf>,
}

impl StateDir {
    /// The state place of `root` (which must exist). See the module docs for where it is.
    pub fn for_root(root: &Path) -> Result<StateDir, Error> {
        let root = crate::root::check_root(root)?;
        let git_dir = crate::root::git_dir_of(&root)?;
        Ok(StateDir::with_git_dir(root, git_dir)?)
    }

    /// [`StateDir::for_root`] for a canonical root whose repository the caller opened (with
    /// `root::open_repo`), so that a run opens it once.
    #[cfg(feature = "git")]
    pub(crate) fn for_opened(
        root_canon: PathBuf,
        repo: Option<&gix::Repository>,
    ) -> Result<StateDir, StateError> {
        let git_dir = repo.and_then(|r| crate::root::git_dir_in(&root_canon, r));
        StateDir::with_git_dir(root_canon, git_dir)
    }

    fn with_git_dir(root: PathBuf, git_dir: Option<PathBuf>) -> Result<StateDir, StateError> {
        let base = match &git_dir {
            Some(git) => git.join("apply-patch"),
            None => {
                // The folder of every root's state: another user's, or one others may write,
                // could swap a root's folder for theirs.
                let all = user_state_dir()?.join("apply-patch");
                safety::check_folder(&all, Keeps::Folder)?;
                all.join(root_key(&root))
            }
        };
        safety::check_folder(&base, Keeps::Folder)?;
        Ok(StateDir {
            root,
            base,
            git_dir,
        })
    }

    /// A state place outside git at an explicit `base` (tests, and callers that keep state
    /// elsewhere); the journal is then the hidden folder at the root.
    pub fn outside_git(root: &Path, base: PathBuf) -> Result<StateDir, Error> {
        let root = root
            .canonicalize()
            .map_err(|e| StateError::io(root, "cannot open the root", &e))?;
        safety::check_folder(&base, Keeps::Folder)?;
        Ok(StateDir {
            root,
            base,
            git_dir: None,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The state folder itself (not created until something is written).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The git dir when the root is inside a git work tree.
    pub fn git_dir(&self) -> Option<&Path> {
        self.git_dir.as_deref()
    }

    /// The lock file that serialises transactions.
    pub fn lock_path(&self) -> PathBuf {
        self.base.join("lock")
    }

    /// The folder of the running (or crashed) transaction: `journal.json` and its backups.
    pub fn journal_dir(&self) -> PathBuf {
        match self.git_dir {
            Some(_) => self.base.join("journal"),
            None => self.root.join(ROOT_JOURNAL_DIR),
        }
    }

    /// The undo history: one folder per committed transaction, oldest pruned.
    pub fn undo_dir(&self) -> PathBuf {
        self.base.join("undo")
    }

    /// [`StateDir::undo_dir`], checked to be the user's own folder when it exists
    /// ([`safety`]) before anything in it is listed or read.
    pub(crate) fn checked_undo_dir(&self) -> Result<PathBuf, StateError> {
        let dir = self.undo_dir();
        safety::check_folder(&dir, Keeps::Folder)?;
        Ok(dir)
    }

    /// The audit log, one JSON line per transaction.
    pub fn audit_log(&self) -> PathBuf {
        self.base.join("audit.jsonl")
    }

    /// The file that names the last committed transaction (undo checks its record is the
    /// newest one).
    pub(crate) fn last_path(&self) -> PathBuf {
        self.base.join("last")
    }

    /// The file of this state place's secret (see `txn::place::secret`).
    pub(crate) fn secret_path(&self) -> PathBuf {
        self.base.join("secret")
    }

    /// A folder `name` inside the state place for another feature; created on demand.
    pub(crate) fn sub(&self, name: &str) -> Result<PathBuf, StateError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(StateError::BadFolderName {
                name: name.to_string(),
            });
        }
        let dir = self.base.join(name);
        create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Creates the state folder.
    pub fn ensure(&self) -> Result<(), Error> {
        Ok(create_dir_all(&self.base)?)
    }
}

/// Length of a state place's secret.
pub const SECRET_LEN: usize = 32;

/// Creates a folder of the state place and its missing parents, readable by their owner only
/// (0700), and checks it ([`safety`]); the error names the folder.
pub fn create_dir_all(dir: &Path) -> Result<(), StateError> {
    safety::create_folder(dir)
}

/// 16 hex digits of the SHA-256 of the canonical root.
fn root_key(root: &Path) -> String {
    // The bytes of the path as the OS gives them (on Unix exactly its bytes).
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// `$XDG_STATE_HOME`, else `$HOME/.local/state`; on Windows, where `HOME` is rarely set,
/// `%LOCALAPPDATA%` (the same kind of place) comes before `HOME`.
fn user_state_dir() -> Result<PathBuf, StateError> {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(PathBuf::from(dir));
    }
    #[cfg(windows)]
    if let Some(dir) = std::env::var_os("LOCALAPPDATA").filter(|d| Path::new(d).is_absolute()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local").join("state")),
        None => Err(StateError::NoStateDir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::stage_checks::{foreign, passes_through, reads_as_error_io};

    // The repository is found through gix: without the `git` feature the core finds none.
    #[cfg(feature = "git")]
    #[test]
    fn plain_git_dir_is_found_from_a_subfolder() {
        let tmp = tempfile::tempdir().expect("temp dir");
        git_dir_layout(&tmp.path().join(".git"));
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        let state = StateDir::for_root(&tmp.path().join("a/b")).expect("state");
        let git = tmp.path().canonicalize().expect("canon").join(".git");
        assert_eq!(state.base(), git.join("apply-patch"));
        assert_eq!(state.journal_dir(), git.join("apply-patch/journal"));
        assert_eq!(state.audit_log(), git.join("apply-patch/audit.jsonl"));
    }

    /// The files that make `dir` a valid git dir for gix (and git).
    fn git_dir_layout(dir: &Path) {
        for sub in ["objects", "refs/heads"] {
            std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
        }
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").expect("write");
    }

    #[cfg(feature = "git")]
    #[test]
    fn gitdir_file_of_a_linked_worktree_is_followed() {
        let tmp = tempfile::tempdir().expect("temp dir");
        git_dir_layout(&tmp.path().join("main/.git"));
        let real = tmp.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&real).expect("mkdir");
        std::fs::write(real.join("HEAD"), "ref: refs/heads/wt\n").expect("write");
        std::fs::write(real.join("commondir"), "../..\n").expect("write");
        std::fs::create_dir_all(tmp.path().join("wt")).expect("mkdir");
        std::fs::write(
            tmp.path().join("wt/.git"),
            "gitdir: ../main/.git/worktrees/wt\n",
        )
        .expect("write");
        let state = StateDir::for_root(&tmp.path().join("wt")).expect("state");
        let real = real.canonicalize().expect("canon");
        assert_eq!(state.git_dir(), Some(real.as_path()));
        assert_eq!(state.undo_dir(), real.join("apply-patch/undo"));
    }

    #[test]
    fn gitdir_file_naming_no_git_dir_is_no_repository() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(tmp.path().join("r")).expect("mkdir");
        let text = format!("gitdir: {}\n", elsewhere.display());
        std::fs::write(tmp.path().join("r/.git"), text).expect("write");
        let state = StateDir::for_root(&tmp.path().join("r")).expect("state");
        assert_eq!(state.git_dir(), None);
        std::fs::create_dir_all(&elsewhere).expect("an empty folder is no git dir either");
        let state = StateDir::for_root(&tmp.path().join("r")).expect("state");
        assert_eq!(state.git_dir(), None);
        assert!(!state.base().starts_with(&elsewhere));
    }

    #[test]
    fn root_key_is_sixteen_hex_digits() {
        let key = root_key(Path::new("/some/root"));
        assert_eq!(key.len(), 16);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(key, root_key(Path::new("/other/root")));
    }

    #[test]
    fn sub_refuses_names_with_slashes() {
        let tmp = tempfile::tempdir().expect("temp dir");
        git_dir_layout(&tmp.path().join(".git"));
        let state = StateDir::for_root(tmp.path()).expect("state");
        assert!(state.sub("../x").is_err());
        let dir = state.sub("previews").expect("sub");
        assert!(dir.is_dir());
    }

    #[test]
    fn state_refusals_carry_their_path_and_step() {
        let e: Error = StateError::DamagedSecret {
            path: PathBuf::from("/s/secret"),
        }
        .into();
        assert_eq!(e.code, ErrorCode::IoError);
        assert_eq!(e.message, "the state secret /s/secret is damaged (not 32 bytes)");
        assert_eq!(e.path.as_deref(), Some("/s/secret"));
        assert!(e.hint.is_some_and(|h| h.starts_with("remove it")));
        let e: Error = StateError::BadFolderName { name: "a/b".into() }.into();
        assert_eq!((e.code, e.hint), (ErrorCode::Usage, None));
        assert_eq!(e.message, "invalid state folder name \"a/b\"");
        let e: Error = StateError::Unsafe {
            path: PathBuf::from("/r/.apply-patch-txn"),
            keeps: Keeps::JournalFolder,
            found: safety::Found::Kind { what: "a FIFO" },
        }
        .into();
        assert_eq!(e.code, ErrorCode::IoError);
        assert_eq!(
            e.message,
            "/r/.apply-patch-txn is a FIFO, where apply-patch keeps the journal folder of a \
             running transaction"
        );
        assert_eq!(
            e.details(),
            Some(&serde_json::json!({"state": "/r/.apply-patch-txn", "found": "fifo"}))
        );
        assert!(e.hint.is_some_and(|h| h.contains("mv /r/.apply-patch-txn")));
        let e: Error = StateError::Unsafe {
            path: PathBuf::from("/s"),
            keeps: Keeps::Folder,
            found: safety::Found::Owner { uid: 7 },
        }
        .into();
        assert_eq!((e.code, e.path.as_deref()), (ErrorCode::Usage, Some("/s")));
        let e: Error = StateError::NoStateDir.into();
        assert_eq!(
            e.hint.as_deref(),
            Some("set XDG_STATE_HOME to a writable directory")
        );
    }

    /// An I/O refusal of the state place reads as [`Error::io`] wrote it, with the failure
    /// itself at the end of its chain.
    #[test]
    fn an_io_refusal_reads_as_error_io_did() {
        for failure in [
            std::io::Error::from_raw_os_error(13),
            std::io::Error::other("disk gone"),
        ] {
            let path = "/s/apply-patch";
            let what = "cannot create the state folder";
            let typed = StateError::io(Path::new(path), what, &failure);
            let code = typed.code();
            reads_as_error_io(typed, code, path, what, &failure);
        }
    }

    /// An error from outside the state place (the root's check) passes through whole, also
    /// through the transaction layer.
    #[test]
    fn an_error_from_outside_passes_through_unchanged() {
        passes_through(&foreign(), StateError::code);
        let txn = crate::txn::TxnError::from(StateError::from(foreign()));
        assert_eq!(Error::from(txn), foreign());
    }
}
