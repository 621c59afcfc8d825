//! Stage: commit. The commit protocol (prepare, then commit; any failure before the commit
//! point rolls back):
//!
//! 1. lock the root (`busy` after ~2 s); recover a journal a crash left behind;
//! 2. open every target's folder component by component without following symlinks
//!    (`path_escape`), re-check every target against its `before` snapshot (`stale_file`,
//!    nothing written), drop changes that would not change content or mode; a file whose
//!    modification time is unchanged but too recent to trust has its content re-checked
//!    (up to 1 MiB in all right here, else on another thread during steps 3–4a: a
//!    difference then rolls the staged files back);
//! 3. write the journal (phase `prepared`: old and new states, backup and staged names,
//!    folders to create; the root's device and inode; a MAC with the state place's secret),
//!    fsync it and its folder, name the transaction in the state place's `last` file, and
//!    fsync the folder holding the journal folder — before anything in the tree changes;
//! 4. create missing folders; stage each new content in a temporary file beside its target
//!    (owner/group of the old file where permitted, mode); the SHA-256 of a large new
//!    content the planner did not hash is taken on another thread meanwhile, and the journal
//!    is written again with it (until then its `after` hash is empty: no rename has
//!    happened); hard-link each replaced or deleted file into the journal folder as its
//!    backup (a copy only across file systems); without a companion, write the committed
//!    journal (step 7) into the journal's temporary file; create the marker `renaming` in
//!    the journal folder (recovery's proof that a missing staged file was renamed); then one
//!    durability point makes the staged files, the backups, that file, the marker and the
//!    journal folder durable together ([`super::durable`]: one `syncfs` on Linux, else an
//!    `fsync` of each);
//! 5. rename every staged file over its target (unlink for a delete), each right after
//!    checking that the target is still the file step 2 saw; one durability point for the
//!    folders of the renames and the created folders;
//! 6. check every written path: a file is the very file that was staged (device, inode,
//!    size, mode), a symlink points where planned, a deleted path is gone;
//!    with a [`Companion`] (the git index of `--index`), its whole new content is then
//!    written into its lock file and synced (the journal records the lock file from step 3);
//! 7. the commit point: rewrite the journal with phase `committed` (and the companion's hash)
//!    — the rename of the file written ahead in step 4 and an fsync of its folder, or with
//!    a companion a whole journal write; the companion is installed right after it (a
//!    failure rolls the work tree back);
//! 8. clean up: remove folders emptied by deletes, append the audit line, move the journal
//!    folder into the undo history (its backups are what undo restores).
//!
//! Must not plan, parse or decide what the new bytes are: it writes what it is given.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::dirfd::{self, Dir, Kind};
use super::durable::{Durability, Point};
use super::failpoint::Failpoints;
use super::handles::Handles;
use super::journal::{self, current_state, Entry, Journal, Located, Phase, State};
use super::lock::Lock;
use super::{Staleness, TxnError, Worker};
use super::{
    cleanup, place, recover, AuditRecord, Change, Committed, Companion, NewState, Snapshot,
    TxnOptions, TxnWarning,
};
use crate::content::ContentHash;
use crate::state::{StateDir, ROOT_JOURNAL_DIR};
use crate::{Error, ErrorCode};

/// Commits `changes` atomically under `opts.root` (see the module docs for the protocol).
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' one-call form
pub fn commit(
    opts: &TxnOptions,
    changes: Vec<Change>,
    audit: &AuditRecord,
) -> Result<Committed, Error> {
    commit_with(opts, changes, audit, None)
}

/// [`commit`], with a file that changes together with the work tree (the git index of
/// `--index`): written before the commit mark, installed after it, and installed or
/// removed by a recovery with the work tree.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' one-call form
pub fn commit_with(
    opts: &TxnOptions,
    changes: Vec<Change>,
    audit: &AuditRecord,
    companion: Option<&mut dyn Companion>,
) -> Result<Committed, Error> {
    prepare(opts, changes, audit)?.commit(companion)
}

/// A transaction prepared (step 1 and the checks of step 2): the root locked, a crashed
/// transaction recovered, every target checked against its snapshot. Nothing is written
/// yet; dropping it releases the lock. The caller prepares what changes with it (the index)
/// before [`Prepared::commit`], so that nothing commits until everything is prepared.
#[must_use = "a prepared transaction writes nothing until it is committed"]
pub struct Prepared {
    state: StateDir,
    _lock: Lock,
    recovered: Vec<super::TxnWarning>,
    root: Dir,
    /// The folders the checks opened, for the commit's steps.
    handles: Handles,
    planned: Vec<Planned>,
    audit: AuditRecord,
    fp: Failpoints,
    durability: Durability,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("root", &self.state.root())
            .field("paths", &self.planned.len())
            .finish()
    }
}

/// Prepares `changes` under `opts.root` (see [`Prepared`]).
pub fn prepare(
    opts: &TxnOptions,
    changes: Vec<Change>,
    audit: &AuditRecord,
) -> Result<Prepared, Error> {
    let state = opts.state_dir()?;
    let lock = Lock::acquire_in(&state, opts.lock_wait)?;
    let recovered = recover::recover_locked(&state)?.warnings();
    let fp = Failpoints::new(opts.failpoint.or_else(super::Failpoint::from_env));
    let root_path = state.root();
    let root = Dir::open(root_path)
        .map_err(|e| TxnError::io_of(&root_path.display().to_string(), "cannot open the root", &e))?;
    let mut handles = Handles::new(&root)?;
    let planned =
        check_all(&root, &mut handles, changes).map_err(|err| recovered_hint(err, &recovered))?;
    Ok(Prepared {
        state,
        _lock: lock,
        recovered,
        root,
        handles,
        planned,
        audit: audit.clone(),
        fp,
        durability: opts.durability,
    })
}

impl Prepared {
    /// Commits the prepared transaction (steps 3–8), with its companion.
    pub fn commit(mut self, companion: Option<&mut dyn Companion>) -> Result<Committed, Error> {
        let tx = Txn {
            state: &self.state,
            operation: "apply",
            undoes: None,
            durability: self.durability,
        };
        let planned = std::mem::take(&mut self.planned);
        let root = (&self.root, &mut self.handles);
        match tx.run_checked(root, planned, &self.audit, &mut self.fp, companion) {
            Ok(mut done) => {
                done.recovered = std::mem::take(&mut self.recovered);
                Ok(done)
            }
            Err(err) => Err(recovered_hint(err, &self.recovered).into()),
        }
    }
}

/// The plan was made while a crashed transaction's files were still in the tree.
fn recovered_hint(err: TxnError, recovered: &[super::TxnWarning]) -> TxnError {
    if err.code() == ErrorCode::StaleFile && !recovered.is_empty() {
        return super::TxnError::StaleAfterRecovery {
            cause: Box::new(err),
        };
    }
    err
}

/// One transaction's fixed parameters. The paths are relative to the state place's root.
pub(crate) struct Txn<'a> {
    pub state: &'a StateDir,
    /// `apply` or `undo`.
    pub operation: &'a str,
    /// For an undo: the id of the transaction it reverts (its record is dropped at the end)
    /// and the transaction before that one (the last one once the undo is done).
    pub undoes: Option<(String, Option<String>)>,
    /// How durable the commit is made.
    pub durability: Durability,
}

/// What the steps of a commit need besides the tree: the state place, its secret (the
/// journal's MAC), and the companion file.
struct Ctx<'a, 'c> {
    state: &'a StateDir,
    secret: [u8; crate::state::SECRET_LEN],
    companion: Option<&'c mut dyn Companion>,
    /// The folder holding the journal folder (`None`: the root), synced after the first
    /// journal write (see [`open_journal_dir`]).
    journal_parent: Option<Dir>,
    durability: Durability,
}

/// A change that survived the staleness check and will be written.
struct Planned {
    change: Change,
    /// The target's name and components; its folder is not held open (see [`Handles`]).
    located: Located,
    /// A folder on the way was missing at the check (the commit creates it).
    folder_missing: bool,
    /// What the staleness check saw at the path: checked again just before the rename.
    seen: Option<dirfd::Stat>,
    /// The content must be checked too (the modification time is too recent to trust).
    recheck: bool,
    /// The journal form of `change.after`, hashed once (the new content can be large); an
    /// empty hash until it is taken while the content is staged (see [`journal_after`]).
    after: State,
}

impl Planned {
    /// The new content's SHA-256 is still to be taken while it is staged.
    fn hash_pending(&self) -> bool {
        matches!(&self.after, State::File { sha256, .. } if sha256.is_empty())
    }
}

impl Txn<'_> {
    /// Runs the transaction with the lock held and any old journal recovered.
    pub fn run(
        &self,
        changes: Vec<Change>,
        audit: &AuditRecord,
        fp: &mut Failpoints,
        companion: Option<&mut dyn Companion>,
    ) -> Result<Committed, TxnError> {
        let root_path = self.state.root();
        let root = Dir::open(root_path)
            .map_err(|e| TxnError::io_of(&root_path.display().to_string(), "cannot open the root", &e))?;
        let mut handles = Handles::new(&root)?;
        let planned = check_all(&root, &mut handles, changes)?;
        self.run_checked((&root, &mut handles), planned, audit, fp, companion)
    }

    /// [`Txn::run`] once every change is checked against its snapshot.
    fn run_checked(
        &self,
        (root, handles): (&Dir, &mut Handles),
        mut planned: Vec<Planned>,
        audit: &AuditRecord,
        fp: &mut Failpoints,
        companion: Option<&mut dyn Companion>,
    ) -> Result<Committed, TxnError> {
        if planned.is_empty() {
            return Ok(Committed {
                id: String::new(),
                recovered: vec![],
                warnings: vec![],
                written: vec![],
            });
        }
        let id = new_id();
        let mut ctx = Ctx {
            state: self.state,
            secret: place::secret(self.state)?,
            companion,
            journal_parent: None,
            durability: self.durability,
        };
        let mut journal = self.journal(&id, &planned, audit, root)?;
        if let Some(companion) = ctx.companion.as_deref() {
            journal.index = Some(index_lock(companion)?);
        }
        // The oldest undo record that this apply's record will push out goes now, before the
        // staging, when it is small: one record of a few files is a few system calls, less
        // than starting a thread costs, and its folder, emptied, becomes the journal folder
        // (in the state place of a git work tree, where both are: a folder made and one
        // removed, each commit, cost more). A large one goes on a thread of its own beside
        // the staging (each unlink of a backup can cost a millisecond on a busy disk; a
        // thread that cannot be started leaves it to the clean-up after the commit).
        let recycle = self.state.git_dir().map(|_| self.state.journal_dir());
        let room = self
            .undoes
            .is_none()
            .then(|| cleanup::make_room(self.state, recycle.as_deref()));
        let made = matches!(room, Some(Ok(cleanup::Room::Recycled)));
        let (jdir, jpath, parent) = open_journal_dir(self.state, root, (self.durability, made))?;
        ctx.journal_parent = parent;
        let pruning = matches!(room, Some(Ok(cleanup::Room::Large)))
            .then(|| {
                let state = self.state.clone();
                std::thread::Builder::new()
                    .name("prune".into())
                    .spawn(move || cleanup::prune_undo(&state, recover::UNDO_HISTORY - 1))
                    .ok()
            })
            .flatten();
        let mut renamed = 0;
        let executed = execute(
            (root, handles),
            (&jdir, &jpath),
            &mut journal,
            &mut planned,
            (fp, &mut ctx),
            &mut renamed,
        );
        // The clean-up and a rollback remove folders, which Windows refuses while a handle
        // holds one open.
        handles.close_all();
        let pruned = match room {
            Some(Ok(cleanup::Room::Large)) => pruning.map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(TxnError::WorkerPanicked {
                        worker: Worker::Pruning,
                    })
                })
            }),
            other => other.map(|r| r.map(drop)),
        };
        match executed {
            Ok(later) => {
                // Windows cannot move or remove a folder while a handle holds it open.
                drop(jdir);
                let mut warnings = later;
                let room = matches!(pruned, Some(Ok(())));
                warnings.extend(cleanup::finish_with(
                    self.state,
                    root,
                    (&journal, &jpath),
                    fp,
                    super::audit::COMMITTED,
                    room,
                ));
                if let Some(Err(e)) = pruned {
                    warnings.push(cleanup::cleanup_warning(e));
                }
                let written = journal.entries.iter().map(|e| e.path.clone()).collect();
                Ok(Committed {
                    id,
                    recovered: vec![],
                    warnings,
                    written,
                })
            }
            Err(err) => Err(recover::roll_back_failed_commit(
                self.state,
                root,
                &mut journal,
                (jdir, &jpath),
                (err, renamed),
            )),
        }
    }

    fn journal(
        &self,
        id: &str,
        planned: &[Planned],
        audit: &AuditRecord,
        root: &Dir,
    ) -> Result<Journal, TxnError> {
        let (root_dev, root_ino) = root.identity().map_err(|e| {
            TxnError::io_of(
                &self.state.root().display().to_string(),
                "cannot open the root",
                &e,
            )
        })?;
        let previous = match &self.undoes {
            Some((_, before)) => before.clone(),
            None => place::read_last(self.state)?,
        };
        let mut created: Vec<String> = Vec::new();
        let mut created_set: HashSet<String> = HashSet::new();
        let mut entries = Vec::new();
        for (i, p) in planned.iter().enumerate() {
            let comps = &p.located.components;
            if p.folder_missing {
                for depth in p.located.existing + 1..comps.len() {
                    let dir = path_of(&comps[..depth])?;
                    if created_set.insert(dir.clone()) {
                        created.push(dir);
                    }
                }
            }
            let before = State::from_snapshot(&p.change.before);
            let after = p.after.clone();
            entries.push(Entry {
                path: p.change.path.clone(),
                backup: matches!(before, State::File { .. }).then(|| format!("b{i}")),
                stage: (after != State::Missing).then(|| format!(".apply-patch-{id}-{i}.tmp")),
                before,
                after,
            });
        }
        Ok(Journal {
            version: journal::VERSION,
            id: id.to_string(),
            root: self.state.root().to_path_buf(),
            phase: Phase::Prepared,
            operation: self.operation.to_string(),
            undoes: self.undoes.as_ref().map(|(id, _)| id.clone()),
            entries,
            created_dirs: created,
            audit: audit.clone(),
            root_dev,
            root_ino,
            previous,
            index: None,
            mac: String::new(),
        })
    }
}

/// Once every new content is staged and synced (and the old ones re-checked), no content is
/// needed any more: the new ones and the old ones the snapshots hold are handed back on
/// another thread, while this one goes on with the renames (together: a new content may be
/// a recipe of an old one, and whichever goes last frees the memory).
fn let_go_of_contents(planned: &mut [Planned]) {
    let mut contents = Vec::new();
    for p in planned.iter_mut() {
        if let NewState::File { bytes, .. } = &mut p.change.after {
            contents.push(std::mem::take(bytes));
        }
        if let Snapshot::File { sha256, .. } = &mut p.change.before {
            if sha256.content().is_some() {
                let known = ContentHash::Known(sha256.get());
                if let ContentHash::Of(old) = std::mem::replace(sha256, known) {
                    contents.push(old);
                }
            }
        }
    }
    let size = contents.iter().map(|c| c.len()).sum();
    crate::release::release(contents, size);
}

/// From this size on, a new content whose SHA-256 is not known yet is hashed while it is
/// staged rather than before the journal is written (which then costs a second journal
/// write).
const HASH_WHILE_STAGING: usize = 1 << 20;

fn path_of(comps: &[Vec<u8>]) -> Result<String, TxnError> {
    let parts: Result<Vec<&str>, _> = comps.iter().map(|c| std::str::from_utf8(c)).collect();
    parts
        .map(|p| p.join("/"))
        .map_err(|_| TxnError::PathNotUtf8)
}

impl State {
    /// The journal form of a planning snapshot.
    pub fn from_snapshot(snap: &Snapshot) -> State {
        match snap {
            Snapshot::Missing => State::Missing,
            Snapshot::File { mode, sha256, .. } => State::File {
                sha256: journal::hex(&sha256.get()),
                mode: *mode,
            },
            Snapshot::Symlink { target } => State::Symlink {
                target: target.clone(),
            },
            Snapshot::Directory => State::Directory,
        }
    }

    /// The journal form of a planned new state (a content's SHA-256 is taken once: the
    /// content remembers it).
    pub fn from_new(new: &NewState) -> State {
        match new {
            NewState::Absent => State::Missing,
            NewState::File { bytes, mode } => State::File {
                sha256: journal::hex(&bytes.sha256()),
                mode: *mode,
            },
            NewState::Symlink { target } => State::Symlink {
                target: target.clone(),
            },
        }
    }
}

/// The journal form of `change.after`, with an empty hash when it is left to be taken while
/// the content is staged: a large content not hashed yet that is not a no-op. It cannot be one
/// when its size or mode differs from the old file's; when they are the same, it is
/// compared with the old bytes the snapshot holds (a fraction of a hash), or else hashed.
fn journal_after(change: &Change) -> State {
    if let NewState::File { bytes, mode } = &change.after {
        let differs = match &change.before {
            Snapshot::File {
                len,
                mode: was,
                sha256,
                ..
            } if *len == bytes.len() as u64 && was == mode => match sha256.content() {
                Some(old) if old == bytes => {
                    // The same bytes: the old hash is theirs (the change is dropped).
                    bytes.know_sha256(sha256.get());
                    false
                }
                Some(_) => true,
                None => false,
            },
            _ => true,
        };
        if bytes.known_sha256().is_none() && bytes.len() >= HASH_WHILE_STAGING && differs {
            return State::File {
                sha256: String::new(),
                mode: *mode,
            };
        }
    }
    State::from_new(&change.after)
}

/// Step 2: locate every target and check it against its snapshot; drop no-op changes.
fn check_all(
    root: &Dir,
    handles: &mut Handles,
    changes: Vec<Change>,
) -> Result<Vec<Planned>, TxnError> {
    let mut seen = HashSet::new();
    let mut planned = Vec::new();
    for change in changes {
        if !seen.insert(change.path.clone()) {
            return Err(TxnError::Twice { path: change.path });
        }
        let mut located = handles.locate(root, &change.path)?;
        let (seen, recheck) = check_fresh(&located, &change)?;
        // Not held here past the check (the handles keep a bounded number open): a patch may
        // touch more folders than files may be open.
        let folder_missing = located.parent.take().is_none();
        let after = journal_after(&change);
        if State::from_snapshot(&change.before) == after {
            continue;
        }
        planned.push(Planned {
            change,
            located,
            folder_missing,
            seen,
            recheck,
            after,
        });
    }
    Ok(planned)
}

/// Is the target still what was planned? Size and mode first, then the modification time;
/// when that differs, the content's SHA-256. When it is the same but too recent to trust
/// (git's "racy" rule), the content is checked too, but while the new content is staged
/// ([`recheck_contents`]): the second value asks for that.
fn check_fresh(located: &Located, change: &Change) -> Result<(Option<dirfd::Stat>, bool), TxnError> {
    let path = change.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot check", &e);
    let stat = match &located.parent {
        Some(dir) => dir.stat(&located.name).map_err(io)?,
        None => None,
    };
    let found = |how| stale(path, how);
    match (&change.before, stat) {
        (Snapshot::Missing, None) => Ok((stat, false)),
        (Snapshot::Missing, Some(_)) => Err(found(Staleness::ExistsNow)),
        (_, None) => Err(found(Staleness::Removed)),
        (
            Snapshot::File {
                len,
                mtime,
                mode,
                sha256,
            },
            Some(st),
        ) if st.kind == Kind::File => {
            if st.len != *len {
                return Err(found(Staleness::Size {
                    now: st.len,
                    was: *len,
                }));
            }
            if !dirfd::same_mode(st.mode, *mode) {
                return Err(found(Staleness::Mode {
                    now: st.mode,
                    was: *mode,
                }));
            }
            if st.mtime != *mtime {
                let dir = located
                    .parent
                    .as_ref()
                    .expect("stat found the file, so its folder is open");
                let (now, _) = dir.hash_file(&located.name).map_err(io)?;
                same_content(path, &sha256.get(), &now)?;
                return Ok((Some(st), false));
            }
            Ok((Some(st), racy(st.mtime)))
        }
        (Snapshot::Symlink { target }, Some(st)) if st.kind == Kind::Symlink => {
            let dir = located
                .parent
                .as_ref()
                .expect("stat found the link, so its folder is open");
            let now = dir.read_link(&located.name).map_err(io)?;
            if now != *target {
                return Err(found(Staleness::SymlinkElsewhere));
            }
            Ok((Some(st), false))
        }
        (Snapshot::Directory, Some(st)) if st.kind == Kind::Directory => Ok((Some(st), false)),
        _ => Err(found(Staleness::OtherKind)),
    }
}

/// The content read at planning (`was`) is what the file holds now (`now`).
fn same_content(path: &str, was: &[u8; 32], now: &[u8; 32]) -> Result<(), TxnError> {
    if was == now {
        return Ok(());
    }
    Err(stale(
        path,
        Staleness::Content {
            expected: journal::hex(was),
            actual: journal::hex(now),
        },
    ))
}

/// Up to this many bytes in all, racy targets are re-checked before the staging, on this
/// thread, rather than beside it on another.
const RECHECK_HERE: u64 = 1 << 20;

/// A racy target whose content is checked while the new contents are staged.
struct Recheck {
    path: String,
    /// The size read at planning.
    len: u64,
    /// The SHA-256 read at planning.
    was: [u8; 32],
    /// The bytes read at planning, when the snapshot holds them: compared rather than
    /// hashed.
    bytes: Option<crate::content::Content>,
}

impl Recheck {
    fn of(p: &Planned) -> Option<Self> {
        let Snapshot::File { sha256, len, .. } = &p.change.before else {
            return None;
        };
        Some(Recheck {
            path: p.change.path.clone(),
            len: *len,
            was: sha256.get(),
            bytes: sha256.content().cloned(),
        })
    }
}

/// The content check of racy targets (see [`check_fresh`]), run on its own thread while the
/// new contents are written and synced: each target is found again through its folder's
/// handle (opened without following a symlink) and read in pieces, compared with the bytes read at planning when they are at hand, else
/// hashed.
fn recheck_contents(
    (root, handles): (&Dir, &mut Handles),
    targets: &[Recheck],
) -> Result<(), TxnError> {
    // Each folder opened once (not walked from the root for every target).
    for t in targets {
        let path = t.path.as_str();
        let io = |e: std::io::Error| TxnError::io_of(path, "cannot check", &e);
        let name = path.rsplit('/').next().unwrap_or(path).as_bytes();
        let Some(dir) = handles.parent(root, path)? else {
            return Err(stale(path, Staleness::Removed));
        };
        if let Some(bytes) = &t.bytes {
            if dir.holds(name, bytes.as_slice()).map_err(io)? {
                continue;
            }
        }
        let (now, _) = dir.hash_file(name).map_err(io)?;
        same_content(path, &t.was, &now)?;
    }
    Ok(())
}

fn stale(path: &str, how: Staleness) -> TxnError {
    TxnError::Stale {
        path: path.to_string(),
        how,
    }
}

/// A modification time within 2 s of now may hide a same-tick edit: hash to be sure.
fn racy(mtime: Option<SystemTime>) -> bool {
    match mtime {
        None => true,
        Some(t) => SystemTime::now()
            .duration_since(t)
            .map_or(true, |age| age < Duration::from_secs(2)),
    }
}

/// A sortable, unique transaction id: seconds and nanoseconds since the epoch, and the pid.
fn new_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{:010}{:09}-{}",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id()
    )
}

/// Creates (or opens; `made`: it was made already, from an undo record) the journal folder;
/// returns it with the folder holding it (`None`:
/// the root), which [`prepare`] syncs right after the first journal write, so that one
/// commit of the file system's journal makes both durable (synced before that write, the
/// new folder's entry cost a commit of its own).
type JournalDir = (Dir, PathBuf, Option<Dir>);
fn open_journal_dir(
    state: &StateDir,
    root: &Dir,
    (durability, made): (Durability, bool),
) -> Result<JournalDir, TxnError> {
    let path = state.journal_dir();
    let shown = path.display().to_string();
    let io = |e: std::io::Error| TxnError::io_of(&shown, "cannot create the journal folder", &e);
    if state.git_dir().is_some() {
        if !made {
            crate::state::create_dir_all(&path)?;
        }
        let dir = Dir::open(&path).map_err(io)?;
        // Opened only to be synced.
        let base = match durability.syncs() {
            true => Some(Dir::open(state.base()).map_err(io)?),
            false => None,
        };
        return Ok((dir, path, base));
    }
    // Made 0700: its backups are the old versions of the user's files.
    match root.mkdir_private(ROOT_JOURNAL_DIR.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(io(e)),
        _ => {}
    }
    let dir = root.open_child(ROOT_JOURNAL_DIR.as_bytes()).map_err(io)?;
    Ok((dir, path, None))
}

/// Steps 3 and 4a: the journal, the missing folders, every new content staged and synced
/// (and the pending hashes taken meanwhile, then journaled); the `fstat` of each staged
/// file.
fn stage_steps(
    (root, handles, point): (&Dir, &mut Handles, &mut Point),
    (jdir, jpath): (&Dir, &Path),
    journal: &mut Journal,
    planned: &mut [Planned],
    (fp, ctx): (&mut Failpoints, &Ctx),
) -> Result<Vec<Option<dirfd::Stat>>, TxnError> {
    let jshown = jpath.display().to_string();
    fp.step("journal write")
        .map_err(|e| TxnError::io_of(&jshown, "cannot write the journal", &e))?;
    journal.write_with(jdir, jpath, &ctx.secret, ctx.durability)?;
    // Before anything in the tree changes: should the undo record of this transaction be
    // lost, `undo` then knows that its newest record is not the last transaction.
    if journal.undoes.is_none() {
        place::write_last_with(ctx.state, Some(&journal.id), ctx.durability)?;
    }
    // The journal folder's own entry (cheap now: the journal's sync committed it).
    if ctx.durability.syncs() {
        ctx.journal_parent
            .as_ref()
            .unwrap_or(root)
            .sync()
            .map_err(|e| TxnError::io_of(&jshown, "cannot create the journal folder", &e))?;
    }
    create_dirs(root, handles, &journal.created_dirs, fp)?;
    let pending: Vec<&crate::content::Content> = planned
        .iter()
        .filter(|p| p.hash_pending())
        .filter_map(|p| match &p.change.after {
            NewState::File { bytes, .. } => Some(bytes),
            _ => None,
        })
        .collect();
    let staged = std::thread::scope(|scope| {
        // Each content remembers its hash: the journal below and the report read it there.
        let hashing = (!pending.is_empty()).then(|| {
            crate::pool::beside(scope, || {
                pending.iter().for_each(|c| {
                    c.sha256();
                });
            })
        });
        let staged = stage_all((root, handles, point), planned, journal, fp);
        if let Some(hashing) = hashing {
            hashing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        staged
    })?;
    if planned.iter().any(Planned::hash_pending) {
        for (p, e) in planned.iter_mut().zip(journal.entries.iter_mut()) {
            if p.hash_pending() {
                p.after = State::from_new(&p.change.after);
                e.after = p.after.clone();
            }
        }
        fp.step("journal hashes")
            .map_err(|e| TxnError::io_of(&jshown, "cannot write the journal", &e))?;
        journal.write_with(jdir, jpath, &ctx.secret, ctx.durability)?;
    }
    Ok(staged)
}

/// Step 4a proper: every new content staged; each is made durable with the backups, at the
/// durability point before the renames ([`Point`]). The files are written on a bounded pool
/// of threads ([`crate::pool`]; creating a file is the costly part of a many-file commit),
/// [`STAGE_BATCH`] targets at a time: their folders are opened on this thread and held for
/// the batch only. The failpoint steps are counted here, in order, before a batch is written,
/// so a crash at any of them leaves the targets before it staged and none after it, as
/// staging one by one does.
fn stage_all(
    (root, handles, point): (&Dir, &mut Handles, &mut Point),
    planned: &[Planned],
    journal: &Journal,
    fp: &mut Failpoints,
) -> Result<Vec<Option<dirfd::Stat>>, TxnError> {
    let mut staged = Vec::with_capacity(planned.len());
    let batches = planned
        .chunks(STAGE_BATCH)
        .zip(journal.entries.chunks(STAGE_BATCH));
    for (batch, entries) in batches {
        let mut jobs = Vec::with_capacity(batch.len());
        for (p, e) in batch.iter().zip(entries) {
            if e.stage.is_some() {
                let dir = parent_of(root, handles, p)?;
                let path = p.change.path.as_str();
                fp.step(&format!("stage {path}"))
                    .map_err(|e| TxnError::io_of(path, "cannot stage the new content of", &e))?;
                jobs.push((dir, p, e));
            }
        }
        let stage = |(dir, p, e): &(Arc<Dir>, &Planned, &Entry)| stage_one(dir, p, e);
        // A pool of one thread would still ask the system how many cores there are.
        let written: Vec<_> = if jobs.len() < 2 * crate::pool::MIN_ITEMS_PER_THREAD {
            jobs.iter().map(stage).collect()
        } else {
            crate::pool::map(&jobs, stage)
        };
        let mut jobs = jobs.iter().zip(written);
        for e in entries {
            let file = match e.stage {
                Some(_) => jobs.next().map_or(Ok(None), |(_, file)| file)?,
                None => None,
            };
            staged.push(file.as_ref().map(|(_, st)| *st));
            if let Some((file, st)) = file {
                point.file(&e.path, file, st.dev)?;
            }
        }
    }
    Ok(staged)
}

/// Targets staged together (their folders open at once, see [`stage_all`]).
const STAGE_BATCH: usize = 64;

/// Steps 3–7 (and the companion's install right after the commit mark). Any error returned
/// means the commit point was not reached, or that the companion could not be installed
/// (the rollback then takes the work tree back too); the warnings returned name paths
/// changed by another program after their rename ([`verify_one`]).
fn execute(
    (root, handles): (&Dir, &mut Handles),
    (jdir, jpath): (&Dir, &Path),
    journal: &mut Journal,
    planned: &mut [Planned],
    (fp, ctx): (&mut Failpoints, &mut Ctx),
    renamed: &mut usize,
) -> Result<Vec<TxnWarning>, TxnError> {
    let jshown = jpath.display().to_string();
    let mut rechecks: Vec<Recheck> = planned
        .iter()
        .filter(|p| p.recheck)
        .filter_map(Recheck::of)
        .collect();
    if rechecks.iter().map(|r| r.len).sum::<u64>() < RECHECK_HERE {
        // A thread would cost more than reading a few small files here.
        recheck_contents((root, handles), &rechecks)?;
        rechecks.clear();
    }
    let shown = ctx.state.root().display().to_string();
    let mut point = Point::new(root, shown, ctx.durability)?;
    // The checking thread finds its folders through handles of its own (the same folders).
    let mut theirs = (!rechecks.is_empty()).then(|| handles.clone());
    let staged = std::thread::scope(|scope| {
        let checking = theirs.as_mut().map(|theirs| {
            crate::pool::beside(scope, || recheck_contents((root, theirs), &rechecks))
        });
        let staged = stage_steps(
            (root, &mut *handles, &mut point),
            (jdir, jpath),
            journal,
            planned,
            (&mut *fp, &*ctx),
        );
        if let Some(checking) = checking {
            checking
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        }
        staged
    })?;
    drop((rechecks, theirs));
    let_go_of_contents(planned);
    for (p, e) in planned.iter().zip(&journal.entries) {
        if e.backup.is_some() {
            backup_one(&*parent_of(root, handles, p)?, p, e, (jdir, ctx.durability), fp)?;
        }
    }
    let mark = mark_ahead(journal, (jdir, jpath), ctx, &mut point)?;
    // Every content is staged and backed up: from here a staged file that is gone was
    // renamed (what a recovery needs to tell a later edit from a stale target).
    mark_renaming(jdir).map_err(|e| TxnError::io_of(&jshown, "cannot write in the journal folder", &e))?;
    // The staged contents, the backups, the created folders and the marker become
    // durable together.
    point.dir_ref(&jshown, jdir)?;
    point.sync()?;
    for (p, e) in planned.iter().zip(&journal.entries) {
        replace_one(&*parent_of(root, handles, p)?, p, e, fp)?;
        *renamed += 1;
    }
    fp.step("folder sync")
        .map_err(|e| TxnError::io_of(&jshown, "cannot sync folders", &e))?;
    sync_parents(
        (root, &mut *handles, &mut point),
        planned,
        &journal.created_dirs,
    )?;
    let mut later = Vec::new();
    for ((p, e), st) in planned.iter().zip(&journal.entries).zip(&staged) {
        let dir = parent_of(root, handles, p)?;
        later.extend(verify_one(&dir, p, e, st.as_ref(), fp)?);
    }
    if let (Some(companion), Some(lock)) = (ctx.companion.as_deref_mut(), journal.index.as_mut()) {
        fp.step("companion write")
            .map_err(|e| TxnError::io_of(&jshown, "cannot write the git index", &e))?;
        lock.sha256 = journal::hex(&companion.write()?);
    }
    fp.step("commit mark")
        .map_err(|e| TxnError::io_of(&jshown, "cannot write the journal", &e))?;
    match mark {
        Some(marked) => {
            Journal::install_pending(jdir, jpath, ctx.durability)?;
            *journal = marked;
        }
        None => {
            journal.phase = Phase::Committed;
            journal.write_with(jdir, jpath, &ctx.secret, ctx.durability)?;
        }
    }
    if let Some(companion) = ctx.companion.as_deref_mut() {
        fp.step("companion install")
            .map_err(|e| TxnError::io_of(&jshown, "cannot replace the git index", &e))?;
        companion.install()?;
    }
    Ok(later)
}

/// Creates the marker [`super::forward::RENAMING`] in the journal folder: a recovery asks only
/// whether the name is there, so it is a hard link of the journal (synced already) rather
/// than a file of its own, whose creation costs a new inode; an empty file where the file
/// system has no hard links.
fn mark_renaming(jdir: &Dir) -> std::io::Result<()> {
    let marker = super::forward::RENAMING.as_bytes();
    let made = match jdir.link(journal::FILE.as_bytes(), jdir, marker) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            jdir.create_file(marker, 0o600).map(drop)
        }
        other => other,
    };
    match made {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// The committed journal, written ahead into the journal's temporary file so that it is made
/// durable at the point before the renames: the commit mark is then its rename and one sync
/// of the journal folder (a write of its own cost a second commit of the file system's
/// journal). Not with a companion, whose hash is known only after the renames. A crash
/// before the mark leaves the temporary file beside the prepared journal, as a crash in the
/// middle of any journal write does (recovery rolls back).
fn mark_ahead(
    journal: &Journal,
    (jdir, jpath): (&Dir, &Path),
    ctx: &Ctx,
    point: &mut Point,
) -> Result<Option<Journal>, TxnError> {
    if ctx.companion.is_some() {
        return Ok(None);
    }
    let mut marked = journal.clone();
    marked.phase = Phase::Committed;
    let file = marked.write_pending(jdir, jpath, &ctx.secret)?;
    if point.syncs() {
        let st = dirfd::file_stat(&file)
            .map_err(|e| TxnError::io_of(&jpath.display().to_string(), "cannot write the journal", &e))?;
        point.file(&jpath.display().to_string(), file, st.dev)?;
    }
    Ok(Some(marked))
}

/// The journal's record of the companion's lock file, before anything is written to it.
fn index_lock(companion: &dyn Companion) -> Result<journal::IndexLock, TxnError> {
    let lock = companion.lock_path();
    let (dev, ino) = dirfd::path_identity(&lock)
        .map_err(|e| TxnError::io_of(&lock.display().to_string(), "cannot inspect", &e))?;
    Ok(journal::IndexLock {
        lock,
        dev,
        ino,
        sha256: String::new(),
    })
}

/// The open folder of a target (its folders exist once step 4 created them).
fn parent_of(root: &Dir, handles: &mut Handles, p: &Planned) -> Result<Arc<Dir>, TxnError> {
    handles.parent(root, &p.change.path)?.ok_or_else(|| {
        TxnError::FolderNotCreated {
            path: p.change.path.clone(),
        }
    })
}

/// Creates the missing folders, listed parents first: each is found from the folder open
/// last, not by a walk from the root (which cost depth² opens for a deep new path).
fn create_dirs(
    root: &Dir,
    handles: &mut Handles,
    dirs: &[String],
    fp: &mut Failpoints,
) -> Result<(), TxnError> {
    // The folders found missing at the checks are the ones created now.
    handles.forget_missing();
    for dir in dirs {
        let io = |e: std::io::Error| TxnError::io_of(dir, "cannot create the folder", &e);
        fp.step(&format!("mkdir {dir}")).map_err(io)?;
        let parent = handles
            .parent(root, dir)?
            .ok_or_else(|| io(std::io::ErrorKind::NotFound.into()))?;
        let name = dir.rsplit('/').next().unwrap_or(dir);
        parent.mkdir(name.as_bytes()).map_err(io)?;
    }
    Ok(())
}

/// Step 4a: the new content in a temporary file beside the target; the file is returned
/// for the durability point, with its `fstat` (what the verification expects at the
/// target).
fn stage_one(
    dir: &Dir,
    p: &Planned,
    entry: &Entry,
) -> Result<Option<(std::fs::File, dirfd::Stat)>, TxnError> {
    let Some(stage) = &entry.stage else {
        return Ok(None);
    };
    let path = p.change.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot stage the new content of", &e);
    match &p.change.after {
        NewState::File { bytes, mode, .. } => {
            // Created with its permission bits (less the umask), so that the mode need not be
            // set again most of the time; its identity and owner now, before any content: a
            // file that is not the old one's owner's is given it first, so the content is
            // never readable by more than the final file's owner, group and mode allow.
            let file = dir.create_file(stage.as_bytes(), *mode & 0o777).map_err(io)?;
            let mut st = dirfd::file_stat(&file).map_err(io)?;
            let mut chowned = false;
            if let Some(old) = p.seen.filter(|st| st.kind == Kind::File) {
                if (old.uid, old.gid) != (st.uid, st.gid) {
                    dirfd::fchown_if_permitted(&file, old.uid, old.gid).map_err(io)?;
                    chowned = true;
                }
            }
            bytes
                .write_to(&mut dirfd::WritingBack::new(&file))
                .map_err(io)?;
            // Set-id bits, bits the umask took, and those a chown cleared: set exactly.
            if chowned || !dirfd::same_mode(st.mode, *mode) {
                dirfd::fchmod(&file, *mode).map_err(io)?;
            }
            st.len = bytes.len() as u64;
            st.mode = *mode;
            Ok(Some((file, st)))
        }
        NewState::Symlink { target } => dir
            .symlink(target, stage.as_bytes())
            .map(|_| None)
            .map_err(io),
        NewState::Absent => Ok(None),
    }
}

/// Step 4b: the old file hard-linked into the journal folder (copied across file systems).
fn backup_one(
    dir: &Dir,
    p: &Planned,
    entry: &Entry,
    (jdir, durability): (&Dir, Durability),
    fp: &mut Failpoints,
) -> Result<(), TxnError> {
    let Some(backup) = &entry.backup else {
        return Ok(());
    };
    let path = p.change.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot back up", &e);
    fp.step(&format!("backup {path}")).map_err(io)?;
    match dir.link(&p.located.name, jdir, backup.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let (bytes, st) = dir.read_file(&p.located.name).map_err(io)?;
            let mut file = jdir.create_file(backup.as_bytes(), 0o600).map_err(io)?;
            file.write_all(&bytes).map_err(io)?;
            dirfd::fchmod(&file, st.mode).map_err(io)?;
            if durability.syncs() {
                file.sync_all().map_err(io)?;
            }
            Ok(())
        }
        other => other.map_err(io),
    }
}

/// Step 5: the rename (or unlink) that makes the change visible.
fn replace_one(dir: &Dir, p: &Planned, entry: &Entry, fp: &mut Failpoints) -> Result<(), TxnError> {
    let path = p.change.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot replace", &e);
    fp.step(&format!("rename {path}")).map_err(io)?;
    // Checked again right before the rename, so that the window in which another program's
    // edit can be overwritten is this one system call, not the whole commit.
    let now = dir.stat(&p.located.name).map_err(io)?;
    if !same_file(now.as_ref(), p.seen.as_ref()) {
        return Err(stale(path, Staleness::DuringCommit));
    }
    match &entry.stage {
        Some(stage) => dir
            .rename(stage.as_bytes(), dir, &p.located.name)
            .map_err(io),
        None => dir.unlink(&p.located.name).map_err(io),
    }
}

/// The same file, unchanged: kind, identity, size, mode and modification time.
fn same_file(a: Option<&dirfd::Stat>, b: Option<&dirfd::Stat>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            (a.kind, a.dev, a.ino, a.len, a.mode, a.mtime)
                == (b.kind, b.dev, b.ino, b.len, b.mode, b.mtime)
        }
        _ => false,
    }
}

/// Step 5's durability point: the folders of the renames and of the created folders (each
/// once: many targets share a folder).
fn sync_parents(
    (root, handles, point): (&Dir, &mut Handles, &mut Point),
    planned: &[Planned],
    created: &[String],
) -> Result<(), TxnError> {
    // Asked once per folder (the point would look at each folder's identity per file).
    let mut folders = HashSet::new();
    for p in planned {
        if point.syncs() && folders.insert(super::handles::folder_of(&p.change.path)) {
            point.dir(&p.change.path, parent_of(root, handles, p)?)?;
        }
    }
    let syncs = point.syncs();
    for dir in created.iter().filter(|_| syncs) {
        if let Some(parent) = handles.parent(root, dir)? {
            point.dir(dir, parent)?;
        }
    }
    point.sync()
}

/// Step 6: what is on disk now is what was planned. A written file must be the very file
/// that was staged (same device and inode, size and mode: the content was written and
/// synced from the plan, so reading it back would only read the page cache again); a
/// symlink or a removal is checked by what stands at the path.
///
/// The rename already happened (it returned success), so a path that holds something else
/// now was changed by another program after it: a later edit, not a failure of this commit.
/// Rolling the other files back around it would leave a mix no recovery can tell from a
/// crash, and would revert an editor that saved exactly our bytes; so the commit goes on and
/// the path is reported (`later_edit`, README "Safety").
fn verify_one(
    dir: &Dir,
    p: &Planned,
    entry: &Entry,
    staged: Option<&dirfd::Stat>,
    fp: &mut Failpoints,
) -> Result<Option<TxnWarning>, TxnError> {
    let path = p.change.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot verify", &e);
    fp.step(&format!("verify {path}")).map_err(io)?;
    let holds_ours = if let (State::File { mode, .. }, Some(staged)) = (&entry.after, staged) {
        let now = dir.stat(&p.located.name).map_err(io)?;
        matches!(now, Some(st)
            if st.kind == Kind::File
                && (st.dev, st.ino, st.len) == (staged.dev, staged.ino, staged.len)
                && dirfd::same_mode(st.mode, *mode))
    } else {
        current_state(Some(dir), &p.located.name).map_err(io)? == entry.after
    };
    Ok((!holds_ours).then(|| later_edit(path)))
}

/// The warning for a path another program changed after this commit wrote it.
pub(crate) fn later_edit(path: &str) -> TxnWarning {
    TxnWarning {
        code: super::TxnWarningCode::LaterEdit,
        message: format!(
            "{path} was changed by another program right after the patch wrote it; that later \
             edit was kept (the rest of the patch is applied): check {path}"
        ),
        path: Some(path.to_string()),
    }
}
