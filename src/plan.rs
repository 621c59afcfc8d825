//! Stage: plan. A parsed [`PatchSet`] plus a [`Tree`] in, the complete new state of every
//! touched path out (or a refusal), with nothing written: the transaction commits a plan only
//! when every hunk of every file found its place (SPEC §6 "all or nothing").
//!
//! File operations run in sequence; each sees the result of the previous ones (an overlay of
//! planned contents over the tree), except the copy and rename sources of a git diff, which
//! are read as they were before the patch (a diff between two trees; see `preimage`).
//! Every path is read once. Pure apart from reading the
//! tree; never writes.

use std::collections::BTreeMap;

use crate::content::{Content, ContentHash};
use crate::error::Error;
use crate::guard;
pub use crate::guard::Globs;
use crate::locate::LocateOptions;
use crate::model::{Body, FileOp, FilePatch, Format, Mode, PatchSet, Rules};
use crate::report::{hex, FileReport, HunkReport, Snippet, Warning, WarningCode};

use crate::tree::{Node, Tree};
use crate::txn::{Change, NewState, Snapshot};
use content::{
    added_node, changed_mode, deletion_matches, full_blob_matches, is_link_patch, node_bytes,
    node_sha256, refuse_gitlinks,
};

/// What the planner needs to know beyond the patch.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PlanOptions {
    pub locate: LocateOptions,
    /// `--strict-base`: a git blob id that does not match is `stale_file`, not a warning.
    pub strict_base: bool,
    /// `--protect GLOB`.
    pub protect: Globs,
    /// `--allow-notebooks`.
    pub allow_notebooks: bool,
    /// `--diff`: render the resulting unified diff.
    pub diff: bool,
    /// `--strict-balance`: an edit that unbalances a file refuses the patch (Issue 7).
    pub strict_balance: bool,
    /// `-R`: the patch was reversed, so what is "already there" is already reverted, and
    /// the messages say so.
    pub reversed: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            locate: LocateOptions::default(),
            strict_base: false,
            protect: Globs::new(&[]).expect("an empty glob set always builds"),
            allow_notebooks: false,
            diff: false,
            strict_balance: false,
            reversed: false,
        }
    }
}

/// A complete plan: what the report shows and what the commit writes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Plan {
    pub files: Vec<FileReport>,
    pub warnings: Vec<Warning>,
    /// Every path whose final state differs from what it holds now, in first-touch order.
    pub changes: Vec<Change>,
    /// The unified diff (`PlanOptions::diff`), rendered from the plan's pieces.
    pub diff: Option<String>,
    /// Each file's diff, in the order the planner recorded them: a later step that changes
    /// what a file will hold (formatter, three-way merge, rebase) changes its piece, and the
    /// text is rendered again by [`Plan::render_diff`] (never searched or edited).
    pub(crate) pieces: Vec<DiffPiece>,
}

/// One file's part of a plan's diff: the paths it is shown with (None: added or deleted)
/// and its bytes before and after.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DiffPiece {
    pub old: Option<String>,
    pub new: Option<String>,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

impl Plan {
    /// Render [`Plan::diff`] from the pieces, when a diff was asked for: the one place the
    /// text is made.
    pub(crate) fn render_diff(&mut self) {
        if let Some(diff) = &mut self.diff {
            *diff = self
                .pieces
                .iter()
                .map(|p| {
                    crate::render::file_diff(
                        p.old.as_deref(),
                        p.new.as_deref(),
                        &p.before,
                        &p.after,
                    )
                })
                .collect();
        }
    }
}

/// A refused plan: the error, and the files planned up to the refusal.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Refusal {
    pub error: Error,
    pub files: Vec<FileReport>,
    pub warnings: Vec<Warning>,
}

/// Plan `patch` against `tree`.
pub fn plan(
    tree: &dyn Tree,
    patch: &PatchSet<'_>,
    opts: &PlanOptions,
) -> Result<Plan, Box<Refusal>> {
    let mut plan = unrendered(tree, patch, opts)?;
    plan.render_diff();
    Ok(plan)
}

/// [`plan`] with its diff's pieces and no text yet (an empty [`Plan::diff`] when one was
/// asked for): the pipeline renders it once, after the steps that change pieces.
pub(crate) fn unrendered(
    tree: &dyn Tree,
    patch: &PatchSet<'_>,
    opts: &PlanOptions,
) -> Result<Plan, Box<Refusal>> {
    let mut planner = Planner {
        tree,
        opts,
        format: patch.format,
        rules: patch.rules,
        slots: BTreeMap::new(),
        order: Vec::new(),
        files: Vec::new(),
        warnings: Vec::new(),
        done: Vec::new(),
        already: Vec::new(),
        missing_deletes: Vec::new(),
        defer_missing_deletes: patch.files.len() > 1,
        diff: Vec::new(),
    };
    for fp in &patch.files {
        let mut report = FileReport::new(fp.op, fp.path());
        if let Err(error) = planner.file(fp, patch.cd.as_deref(), &mut report) {
            planner.files.push(report);
            // A deferred Delete of a missing file came first in the patch: its refusal.
            let error = match planner.missing_deletes.first() {
                Some((_, first)) => first.clone(),
                None => error,
            };
            return Err(planner.refuse(error));
        }
        planner.files.push(report);
    }
    planner.finish()
}

/// The state of one path during planning.
struct Slot {
    snapshot: Snapshot,
    /// What the path held when it was read (a file's content shared with the node read, not
    /// copied): decides whether the final state is a change, and is what a git diff's copy
    /// and rename sources read (`preimage`).
    original: Node,
    /// The content as planned so far; a file's content remembers its SHA-256 once taken
    /// (each content is hashed once, and the hash travels on to the report and the
    /// transaction).
    current: Node,
}

impl Slot {
    /// True when the path ends up holding what it held when it was read.
    fn unchanged(&self) -> bool {
        self.original == self.current
    }
}

struct Planner<'a> {
    tree: &'a dyn Tree,
    opts: &'a PlanOptions,
    /// The patch's format, for messages only.
    format: Format,
    /// How the patch's hunks are read.
    rules: Rules,
    slots: BTreeMap<String, Slot>,
    order: Vec<String>,
    files: Vec<FileReport>,
    warnings: Vec<Warning>,
    /// Units (hunks, file operations) that change something, by name.
    done: Vec<String>,
    /// Units that are already applied, by name.
    already: Vec<String>,
    /// Deletes of missing files (path shown, their `file_not_found`), decided once the other
    /// operations are known: the whole patch may be the already-applied no-op (SPEC §5).
    missing_deletes: Vec<(String, PlanError)>,
    /// The patch has more than one operation, so a Delete of a missing file waits.
    defer_missing_deletes: bool,
    diff: Vec<DiffPiece>,
}

/// The new content of one file and what placing its hunks produced.
struct Edited {
    bytes: Content,
    hunks: Vec<HunkReport>,
    added: usize,
    removed: usize,
    snippet: Option<Snippet>,
    /// 1-based numbers of hunks already applied.
    already: Vec<usize>,
    /// 1-based numbers of hunks that change something.
    done: Vec<usize>,
    /// Where the changing hunks stand in the new file (for the balance check).
    regions: Vec<balance::Region>,
}

impl Edited {
    fn unchanged(bytes: Content) -> Self {
        Edited {
            bytes,
            hunks: Vec::new(),
            added: 0,
            removed: 0,
            snippet: None,
            already: Vec::new(),
            done: Vec::new(),
            regions: Vec::new(),
        }
    }
}

impl<'a> Planner<'a> {
    /// The refusal of the plan: `error` becomes the boundary [`Error`] here.
    fn refuse(self, error: PlanError) -> Box<Refusal> {
        Box::new(Refusal {
            error: error.into(),
            files: self.files,
            warnings: self.warnings,
        })
    }

    /// The current state of a (resolved) path, reading it on first use.
    fn node(&mut self, path: &str) -> Result<&Node, PlanError> {
        if !self.slots.contains_key(path) {
            let (snapshot, node) = self.tree.read(path)?;
            // A disk read's snapshot holds the very content read; another tree's known hash
            // is its content's when it shows the snapshot.
            if let (
                Snapshot::File {
                    sha256: ContentHash::Known(hash),
                    ..
                },
                Node::File { bytes, .. },
            ) = (&snapshot, &node)
            {
                if self.tree.shows_snapshot(path) {
                    bytes.know_sha256(*hash);
                }
            }
            self.order.push(path.to_string());
            self.slots.insert(
                path.to_string(),
                Slot {
                    snapshot,
                    original: node.clone(),
                    current: node,
                },
            );
        }
        Ok(&self.slots[path].current)
    }

    /// Take the current node of `path` out of its slot (read on first use); [`Self::set`]
    /// puts a node back.
    fn take(&mut self, path: &str) -> Result<Node, PlanError> {
        self.node(path)?;
        Ok(match self.slots.get_mut(path) {
            Some(slot) => std::mem::replace(&mut slot.current, Node::Missing),
            None => Node::Missing,
        })
    }

    /// Set the node of `path`.
    fn set(&mut self, path: &str, node: Node) {
        if let Some(slot) = self.slots.get_mut(path) {
            slot.current = node;
        }
    }

    /// Set `path` to edited content: a symlink's new target when `link`, else a file with
    /// `mode`.
    fn set_edited(&mut self, path: &str, bytes: Content, (link, mode): (bool, u32)) {
        if link {
            self.set(
                path,
                Node::Symlink {
                    target: bytes.into_vec(),
                },
            );
        } else {
            self.set(path, Node::File { bytes, mode });
        }
    }

    /// Normalise, confine and resolve one patch path.
    fn path(
        &self,
        raw: &str,
        cd: Option<&str>,
        follow_last: bool,
    ) -> Result<(String, String), PlanError> {
        let shown = guard::normalize(raw, cd, self.tree.root())?;
        let real = guard::resolve(self.tree, &shown, follow_last)?;
        for p in [&shown, &real] {
            guard::check_protected(&self.opts.protect, p)?;
            guard::check_notebook(p, self.opts.allow_notebooks)?;
        }
        Ok((shown, real))
    }

    fn file(
        &mut self,
        fp: &FilePatch<'_>,
        cd: Option<&str>,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        refuse_gitlinks(fp)?;
        let link_patch = is_link_patch(fp);
        let missing_path = || PlanError::NoPath {
            line: fp.patch_line,
        };
        match fp.op {
            FileOp::Add => {
                let raw = fp.new_path.as_deref().ok_or_else(missing_path)?;
                let (shown, real) = self.path(raw, cd, false)?;
                report.path = shown.clone();
                self.add(fp, &shown, &real, report)
            }
            FileOp::Delete => {
                let raw = fp.old_path.as_deref().ok_or_else(missing_path)?;
                let (shown, real) = self.path(raw, cd, false)?;
                report.path = shown.clone();
                self.delete(fp, &shown, &real, report)
            }
            FileOp::Modify | FileOp::Mode => {
                let raw = fp
                    .new_path
                    .as_deref()
                    .or(fp.old_path.as_deref())
                    .ok_or_else(missing_path)?;
                let (shown, real) = self.path(raw, cd, !link_patch)?;
                report.path = shown.clone();
                self.modify(fp, &shown, &real, report)
            }
            FileOp::Rename | FileOp::Copy => {
                let old = fp.old_path.as_deref().ok_or_else(missing_path)?;
                let new = fp.new_path.as_deref().ok_or_else(missing_path)?;
                let (old_shown, old_real) = self.path(old, cd, false)?;
                let (new_shown, new_real) = self.path(new, cd, false)?;
                report.path = new_shown.clone();
                report.old_path = Some(old_shown.clone());
                if old_real == new_real {
                    report.op = FileOp::Modify;
                    report.old_path = None;
                    return self.modify(fp, &new_shown, &new_real, report);
                }
                self.relocate(fp, (&old_shown, &old_real), (&new_shown, &new_real), report)
            }
        }
    }

    fn add(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        real: &str,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        let wanted = added_node(fp, shown)?;
        let fills_empty = self.rules.add_fills_empty;
        let there = match self.node(real)? {
            Node::Missing => None,
            // A SEARCH/REPLACE block with an empty SEARCH fills an empty file (SPEC §4b).
            Node::File { bytes, mode } if fills_empty && bytes.is_empty() => {
                let mode = *mode;
                return self.fill_empty(shown, real, wanted, mode, report);
            }
            Node::Directory => return Err(PlanError::IsDirectory { path: shown.into() }),
            Node::File { bytes, .. } if matches!(&wanted, Node::File { bytes: b, .. } if b == bytes) => {
                Some(true)
            }
            Node::Symlink { target } if matches!(&wanted, Node::Symlink { target: t } if t == target) => {
                Some(false)
            }
            _ => {
                return Err(PlanError::AddExists {
                    path: shown.into(),
                    format: self.format,
                })
            }
        };
        if let Some(file) = there {
            if file {
                report.new_sha256 = self.slots.get(real).map(|s| hex(&node_sha256(&s.current)));
            }
            self.already.push(format!("{shown} (already added)"));
            return Ok(());
        }
        report.added = content::line_count(node_bytes(&wanted));
        report.new_sha256 = Some(hex(&node_sha256(&wanted)));
        report.new_mode = fp.new_mode.filter(|m| *m != Mode::FILE);
        self.record_diff(None, Some(shown), b"", node_bytes(&wanted));
        self.done.push(format!("{shown} (add)"));
        self.set(real, wanted);
        Ok(())
    }

    /// An Add that writes an empty file's content (its mode kept): a change of that file.
    fn fill_empty(
        &mut self,
        shown: &str,
        real: &str,
        wanted: Node,
        mode: u32,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        let Node::File { bytes, .. } = wanted else {
            return Ok(());
        };
        if bytes.is_empty() {
            self.already.push(format!("{shown} (already empty)"));
            return Ok(());
        }
        report.op = FileOp::Modify;
        report.set_old_content(&Content::default());
        report.added = content::line_count(bytes.as_slice());
        report.new_sha256 = Some(hex(&bytes.sha256()));
        self.record_diff(Some(shown), Some(shown), b"", bytes.as_slice());
        self.done.push(format!("{shown} (filled)"));
        self.set(real, Node::File { bytes, mode });
        Ok(())
    }

    fn delete(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        real: &str,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        self.check_not_gone(shown, real)?;
        let current = self.take(real)?;
        if matches!(current, Node::Missing) && self.defer_missing_deletes {
            let error = PlanError::MissingToDelete { path: shown.into() };
            self.missing_deletes.push((shown.to_string(), error));
            self.set(real, current);
            return Ok(());
        }
        let result = self.delete_node(fp, shown, report, &current);
        match result {
            Ok(()) => self.set(real, Node::Missing),
            Err(_) => self.set(real, current),
        }
        result
    }

    /// [`Self::delete`] on the content taken from the slot.
    fn delete_node(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        report: &mut FileReport,
        current: &Node,
    ) -> Result<(), PlanError> {
        let content = match current {
            Node::Missing => return Err(PlanError::MissingToDelete { path: shown.into() }),
            Node::Directory => return Err(PlanError::IsDirectory { path: shown.into() }),
            Node::File { bytes, .. } => bytes.clone(),
            Node::Symlink { target } => Content::from(target.as_slice()),
        };
        self.check_bases(fp, shown, &content)?;
        let bytes = content.as_slice();
        if fp.body == Body::BinaryWithoutData && !full_blob_matches(fp, bytes) {
            return Err(PlanError::Binary {
                path: shown.into(),
                why: BinaryWhy::DeletedUnchecked,
            });
        }
        let hunks = fp.body.hunks();
        if !hunks.is_empty() && !deletion_matches(bytes, hunks) {
            return Err(PlanError::DeleteDiffers { path: shown.into() });
        }
        report.set_old_content(&content);
        report.removed = content::line_count(bytes);
        self.record_diff(Some(shown), None, bytes, b"");
        self.done.push(format!("{shown} (delete)"));
        Ok(())
    }

    fn modify(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        real: &str,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        self.check_not_gone(shown, real)?;
        // Taken out of its slot rather than cloned (the file can be large); put back when the
        // edit fails, replaced by the new content when it succeeds.
        let current = self.take(real)?;
        let result = self.modify_node(fp, shown, real, report, &current);
        if result.is_err() {
            self.set(real, current);
        } else {
            let size = node_bytes(&current).len();
            crate::release::release(current, size);
        }
        result
    }

    /// [`Self::modify`] on the content taken from the slot of `real`.
    fn modify_node(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        real: &str,
        report: &mut FileReport,
        current: &Node,
    ) -> Result<(), PlanError> {
        let (bytes, mode, link) = match current {
            Node::Missing => {
                return Err(PlanError::MissingToUpdate {
                    path: shown.into(),
                    format: self.format,
                })
            }
            Node::Directory => return Err(PlanError::IsDirectory { path: shown.into() }),
            Node::File { bytes, mode } => (bytes.clone(), *mode, false),
            Node::Symlink { target } => (Content::from(target.as_slice()), 0, true),
        };
        let edited = self.checked_edit(fp, shown, &bytes, link)?;
        if !link {
            self.check_balance(fp, shown, &bytes, &edited, report)?;
        }
        let new_mode = if link { mode } else { changed_mode(mode, fp) };
        let wants_mode = fp
            .new_mode
            .is_some_and(|m| Some(m) != fp.old_mode && !m.is_symlink());
        if new_mode != mode {
            report.new_mode = fp.new_mode;
            self.done.push(format!("{shown} (mode)"));
        } else if wants_mode && !link {
            self.already.push(format!(
                "{shown} (mode already {:o})",
                fp.new_mode.map_or(0, |m| m.0)
            ));
        }
        self.fill_report(report, shown, &bytes, &edited);
        report.binary = matches!(fp.body, Body::Binary(_));
        self.record_diff(Some(shown), Some(shown), &bytes, &edited.bytes);
        self.set_edited(real, edited.bytes, (link, new_mode));
        Ok(())
    }

    /// Rename or copy.
    fn relocate(
        &mut self,
        fp: &FilePatch<'_>,
        (old_shown, old_real): (&str, &str),
        (new_shown, new_real): (&str, &str),
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        let source = self.source(fp.op, old_shown, old_real)?;
        let dest = self.node(new_real)?.clone();
        if dest == Node::Directory {
            return Err(PlanError::IsDirectory {
                path: new_shown.into(),
            });
        }
        if self.copied_already(fp, new_shown, &dest)? {
            self.already.push(format!("{new_shown} (already copied)"));
            return Ok(());
        }
        let (bytes, mode, link) = match source {
            Node::Directory => {
                return Err(PlanError::IsDirectory {
                    path: old_shown.into(),
                })
            }
            Node::Missing => return self.moved_already(fp, old_shown, new_shown, dest),
            Node::File { bytes, mode } => (bytes, mode, false),
            Node::Symlink { target } => (Content::from(target), 0, true),
        };
        if link && !fp.body.hunks().is_empty() && !is_link_patch(fp) {
            return Err(PlanError::SymlinkEdited {
                path: old_shown.into(),
            });
        }
        let edited = self.checked_edit(fp, old_shown, &bytes, link)?;
        let new_mode = if link { mode } else { changed_mode(mode, fp) };
        if dest != Node::Missing {
            let same = match &dest {
                Node::Symlink { target } => link && edited.bytes == *target.as_slice(),
                Node::File { bytes, mode } => !link && *bytes == edited.bytes && *mode == new_mode,
                _ => false,
            };
            if same && fp.op == FileOp::Copy {
                self.already.push(format!("{new_shown} (already copied)"));
                return Ok(());
            }
            return Err(PlanError::DestinationExists {
                op: fp.op,
                old: old_shown.into(),
                new: new_shown.into(),
            });
        }
        self.fill_report(report, old_shown, &bytes, &edited);
        report.binary = matches!(fp.body, Body::Binary(_));
        if !link {
            self.check_balance(fp, new_shown, &bytes, &edited, report)?;
        }
        if new_mode != mode {
            report.new_mode = fp.new_mode;
        }
        self.record_diff(Some(old_shown), Some(new_shown), &bytes, &edited.bytes);
        self.done.push(format!("{new_shown} ({})", fp.op.as_str()));
        if fp.op == FileOp::Rename {
            self.set(old_real, Node::Missing);
        }
        self.set_edited(new_real, edited.bytes, (link, new_mode));
        Ok(())
    }

    /// A Move whose source is gone: already applied when the destination holds the result.
    fn moved_already(
        &mut self,
        fp: &FilePatch<'_>,
        old: &str,
        new: &str,
        dest: Node,
    ) -> Result<(), PlanError> {
        let bytes = match dest {
            Node::File { bytes, .. } if fp.op == FileOp::Rename => bytes,
            _ => {
                return Err(PlanError::MissingSource {
                    path: old.into(),
                    op: fp.op,
                })
            }
        };
        // A probe: its placement warnings are not this run's.
        let warnings = self.warnings.len();
        let edited =
            self.edit(fp, new, &bytes, (false, None))
                .map_err(|_| PlanError::MissingSource {
                    path: old.into(),
                    op: fp.op,
                })?;
        self.warnings.truncate(warnings);
        if !edited.done.is_empty() {
            return Err(PlanError::MissingSource {
                path: old.into(),
                op: fp.op,
            });
        }
        self.already
            .push(format!("{new} (already moved from {old})"));
        Ok(())
    }

    /// Fill the report of an edited file. The new content's SHA-256 is left to whoever
    /// takes it first (the transaction, while it writes the content, or the report), once.
    fn fill_report(
        &mut self,
        report: &mut FileReport,
        shown: &str,
        old: &Content,
        edited: &Edited,
    ) {
        report.set_old_content(old);
        report.set_new_content(&edited.bytes);
        report.hunks = edited.hunks.clone();
        report.added = edited.added;
        report.removed = edited.removed;
        report.snippet = edited.snippet.clone();
        for h in &edited.done {
            self.done.push(format!("hunk {h} of {shown}"));
        }
        for h in &edited.already {
            self.already.push(format!("hunk {h} of {shown}"));
        }
    }

    /// `*** Base` (SHA-256 prefix) and git `index` blob ids: the file's blob id when the
    /// diff's `index` id is known to differ from it (a warning, or `stale_file` with
    /// `--strict-base`), which makes its line numbers untrusted (SPEC §5).
    fn check_bases(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        current: &Content,
    ) -> Result<Option<String>, PlanError> {
        if let Some(base) = &fp.base {
            guard::check_base(shown, base, &current.sha256())?;
        }
        let bytes = current.as_slice();
        let Some(ids) = &fp.blob_ids else {
            return Ok(None);
        };
        // git integration: the repository's object format and filters decide the blob id.
        let matched = self.tree.blob_matches(shown, &ids.old, bytes)?;
        let Some((true_match, full)) = matched else {
            return Ok(None);
        };
        if true_match {
            return Ok(None);
        }
        let message = format!(
            "the diff was made against blob {}, but the file is blob {full}",
            ids.old
        );
        if self.opts.strict_base || matches!(fp.body, Body::Binary(_)) {
            return Err(PlanError::BaseMismatch {
                path: shown.into(),
                expected: ids.old.clone(),
                actual: full,
            });
        }
        self.warnings
            .push(Warning::new(WarningCode::BaseMismatch, message).with_path(shown));
        Ok(Some(full))
    }

    /// Add a file's diff to the plan's when it was asked for (a recipe is only joined for
    /// a diff).
    fn record_diff<B, A>(&mut self, old: Option<&str>, new: Option<&str>, before: &B, after: &A)
    where
        B: AsRef<[u8]> + ?Sized,
        A: AsRef<[u8]> + ?Sized,
    {
        if !self.opts.diff {
            return;
        }
        let (before, after) = (before.as_ref(), after.as_ref());
        if before != after || old != new {
            self.diff.push(DiffPiece {
                old: old.map(str::to_string),
                new: new.map(str::to_string),
                before: before.to_vec(),
                after: after.to_vec(),
            });
        }
    }

    /// A planned file (or symlink) cannot lie below another planned file: `Add x` with
    /// `Add x/y` would only fail at commit time (and pass `--check`), so it is refused here.
    fn check_layout(&self) -> Result<(), PlanError> {
        let holds_file = |p: &str| {
            self.slots
                .get(p)
                .is_some_and(|s| matches!(s.current, Node::File { .. } | Node::Symlink { .. }))
        };
        for (path, slot) in &self.slots {
            if !matches!(slot.current, Node::File { .. } | Node::Symlink { .. }) {
                continue;
            }
            // A path that held nothing may lie under a file the patch does not name (a file
            // that stood where its folder would go): the write would fail at commit time.
            // Once a folder is seen standing, every folder above it does too.
            let mut created = matches!(slot.original, Node::Missing);
            let mut parent = path.as_str();
            while let Some((up, _)) = parent.rsplit_once('/') {
                if holds_file(up) {
                    return Err(PlanError::FileUnderFile {
                        path: path.clone(),
                        parent: up.to_string(),
                    });
                }
                if created && !self.slots.contains_key(up) {
                    match self.tree.kind(up)? {
                        crate::tree::Kind::File => {
                            return Err(PlanError::UnderExistingFile {
                                path: path.clone(),
                                parent: up.to_string(),
                            })
                        }
                        crate::tree::Kind::Directory => created = false,
                        crate::tree::Kind::Missing | crate::tree::Kind::Symlink(_) => {}
                    }
                }
                parent = up;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Plan, Box<Refusal>> {
        // A Delete of a missing file stays `file_not_found` (a mistyped path must not pass
        // silently) unless every other operation of the patch is already applied.
        if let Some((_, first)) = self.missing_deletes.first() {
            if !self.done.is_empty() || self.already.is_empty() {
                let error = first.clone();
                return Err(self.refuse(error));
            }
            for (shown, _) in std::mem::take(&mut self.missing_deletes) {
                self.already.push(format!("{shown} (already deleted)"));
            }
        }
        let whole = if self.opts.reversed {
            "the patch is already reverted (none of its changes are in the files); nothing to do"
        } else {
            "the patch is already applied; nothing to do"
        };
        if !self.done.is_empty() && !self.already.is_empty() {
            let error = PlanError::PartlyApplied {
                already: self.already.clone(),
                not_applied: self.done.clone(),
                reversed: self.opts.reversed,
            };
            return Err(self.refuse(error));
        }
        if self.done.is_empty() && !self.already.is_empty() {
            self.warnings
                .push(Warning::new(WarningCode::AlreadyApplied, whole));
        }
        if let Err(error) = self.check_layout() {
            return Err(self.refuse(error));
        }
        let mut changes = Vec::new();
        for path in &self.order {
            // Moved out, not cloned: the new content can be large and the planner is done.
            let Some(slot) = self.slots.remove(path) else {
                continue;
            };
            if slot.unchanged() {
                continue;
            }
            let after = match slot.current {
                Node::File { bytes, mode } => NewState::File { bytes, mode },
                Node::Symlink { target } => NewState::Symlink { target },
                Node::Missing | Node::Directory => NewState::Absent,
            };
            changes.push(Change {
                path: path.clone(),
                before: slot.snapshot,
                after,
            });
        }
        Ok(Plan {
            files: self.files,
            warnings: self.warnings,
            changes,
            diff: self.opts.diff.then(String::new),
            pieces: self.diff,
        })
    }
}

mod balance;
mod content;
mod edit;
mod error;
mod preimage;
mod trust;

pub use error::{BinaryWhy, PlanError};
#[cfg(test)]
mod tests;
