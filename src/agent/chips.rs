//! Stage: agent chips. A refused patch is kept in the state place (`StateDir::sub("chips")`)
//! as a "chip", and the error names it together with the hunks that would have applied and
//! the ones that failed, so the caller fixes only the failing hunk and sends the patch again
//! (`apply-patch chip ID` prints the kept patch to start from).
//!
//! The id is the first 12 hex digits of the patch's SHA-256: sending the same patch again
//! names the same chip. The store keeps the [`MAX_CHIPS`] most recent chips. Must not write
//! the work tree.

use super::AgentError;
use std::fs;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::agent::read::{confine_to, read_confined_in};
use crate::agent::sha256_hex;
use crate::error::{Error, ErrorCode};
use crate::locate::{assess_hunks, locate_edits, locate_hunks, LineNumbers, LocateOptions};
use crate::model::{Body, FileOp, FilePatch, PatchSet, Trust};
use crate::text::Text;

/// How many chips are kept (the oldest are pruned first).
pub const MAX_CHIPS: usize = 50;

/// One hunk (or edit) of a refused patch and whether it would have applied.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct HunkStatus {
    pub path: String,
    /// 1-based hunk (or edit) number within its file patch; 0 for a whole-file operation
    /// (add, delete, rename without hunks).
    pub hunk: usize,
    pub applies: bool,
    /// Why it does not apply (the error code), when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// The folder of kept chips.
#[derive(Debug, Clone)]
pub struct ChipStore {
    dir: PathBuf,
}

impl ChipStore {
    pub fn new(dir: PathBuf) -> Self {
        ChipStore { dir }
    }

    /// Keep a refused `patch`; returns its chip id.
    pub fn keep(&self, patch: &[u8]) -> Result<String, AgentError> {
        let mut id = sha256_hex(patch);
        id.truncate(12);
        let shown = self.dir.display().to_string();
        let io = |e: std::io::Error| AgentError::io(&shown, "cannot keep the refused patch in", e);
        crate::state::create_dir_all(&self.dir).map_err(AgentError::outside)?;
        let path = self.dir.join(format!("{id}.patch"));
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(io)?;
        std::io::Write::write_all(&mut tmp, patch).map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
        self.prune();
        Ok(id)
    }

    /// The kept patch of chip `id` (`apply-patch chip ID`).
    #[cfg(any(test, feature = "cli"))]
    pub fn load(&self, id: &str) -> Result<Vec<u8>, AgentError> {
        let unknown = || AgentError::UnknownChip { id: id.to_string() };
        if id.len() != 12 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(unknown());
        }
        // Read as every state file is (`txn::place`): a link or a FIFO planted in its place
        // is refused, saying what it is, never followed or waited on.
        let path = self.dir.join(format!("{}.patch", id.to_ascii_lowercase()));
        let bytes = match crate::txn::place::read_file(&path, crate::txn::place::KEPT_LIMIT) {
            Ok(Some((bytes, _))) => bytes,
            Ok(None) => return Err(unknown()),
            Err(e @ crate::state::StateError::Unsafe { .. }) => return Err(AgentError::outside(e)),
            Err(_) => return Err(unknown()),
        };
        if !sha256_hex(&bytes).starts_with(&id.to_ascii_lowercase()) {
            return Err(unknown());
        }
        Ok(bytes)
    }

    fn prune(&self) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut chips: Vec<(SystemTime, PathBuf)> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".patch"))
            .map(|e| {
                let t = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (t, e.path())
            })
            .collect();
        if chips.len() <= MAX_CHIPS {
            return;
        }
        chips.sort();
        for (_, p) in &chips[..chips.len() - MAX_CHIPS] {
            let _ = fs::remove_file(p);
        }
    }
}

/// The refusals worth a chip: the patch reached placement, so some of its hunks may be fine
/// (a stale file is refused whole: read it again).
pub fn keeps_chip(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::ContextNotFound
            | ErrorCode::AmbiguousMatch
            | ErrorCode::OverlappingHunks
            | ErrorCode::ExpectedMismatch
            | ErrorCode::AlreadyApplied
            | ErrorCode::MergeConflict
    )
}

/// Which hunks of `patch` would apply to the files under `tree` (the run's, so that nothing
/// opens the root again) as they are now. Each file
/// patch is assessed on its own against the file on disk (a later operation on a path the
/// patch already changed is assessed against the disk too); within a file, hunks are tried in
/// order and a hunk counts as applicable when it can be placed together with the applicable
/// hunks before it.
pub fn assess(
    tree: &crate::tree::DiskTree,
    patch: &PatchSet<'_>,
    opts: &LocateOptions,
) -> Vec<HunkStatus> {
    let mut out = Vec::new();
    for fp in &patch.files {
        let joined = |p: &str| crate::guard::join_cd(patch.cd.as_deref(), p);
        let shown = fp.path().to_string();
        let current = fp
            .old_path
            .as_deref()
            .and_then(|p| read_confined_in(tree, &joined(p)).ok())
            .map(|(_, bytes)| bytes);
        match fp.op {
            FileOp::Add => {
                let exists = fp
                    .new_path
                    .as_deref()
                    .and_then(|p| confine_to(tree.path(), &joined(p)).ok())
                    .is_some_and(|rel| tree.path().join(rel).exists());
                out.push(whole(&shown, !exists, ErrorCode::FileExists));
            }
            _ => match current {
                None => out.push(whole(&shown, false, ErrorCode::FileNotFound)),
                Some(bytes) => assess_file(&shown, fp, patch, &bytes, opts, &mut out),
            },
        }
    }
    out
}

fn whole(path: &str, applies: bool, code: ErrorCode) -> HunkStatus {
    HunkStatus {
        path: path.to_string(),
        hunk: 0,
        applies,
        code: (!applies).then(|| code.as_str().to_string()),
    }
}

fn assess_file(
    path: &str,
    fp: &FilePatch<'_>,
    patch: &PatchSet<'_>,
    bytes: &[u8],
    opts: &LocateOptions,
    out: &mut Vec<HunkStatus>,
) {
    let text = Text::parse(bytes);
    let lines = text.contents();
    // As the planner places them: an agent patch's line numbers count under a Base that
    // matches the file (SPEC §5 "Trust in line numbers").
    let based = fp
        .base
        .as_deref()
        .is_some_and(|b| sha256_hex(bytes).starts_with(&b.to_ascii_lowercase()));
    let opts = &LocateOptions {
        ends_with_newline: Some(text.ends_with_newline()),
        line_numbers: if based && patch.rules.line_numbers == Trust::UnderBase {
            LineNumbers::Trusted
        } else {
            opts.line_numbers
        },
        ..opts.clone()
    };
    let status = |hunk: usize, result: Result<(), ErrorCode>| HunkStatus {
        path: path.to_string(),
        hunk,
        applies: result.is_ok(),
        code: result.err().map(|c| c.as_str().to_string()),
    };
    match &fp.body {
        Body::Hunks(hunks) if patch.rules.sequential => {
            // Blocks apply one after the other: each is assessed on the content the
            // applicable ones before it left.
            let mut current = bytes.to_vec();
            for (i, h) in hunks.iter().enumerate() {
                let text = Text::parse(&current);
                let step = LocateOptions {
                    ends_with_newline: Some(text.ends_with_newline()),
                    ..opts.clone()
                };
                let placed = locate_hunks(text.contents(), std::slice::from_ref(h), patch.rules, &step);
                let next = placed.as_ref().ok().map(|p| crate::splice::splice(&text, p));
                out.push(status(i + 1, placed.map(|_| ()).map_err(|e| e.code())));
                if let Some(next) = next {
                    current = next;
                }
            }
        }
        Body::Hunks(hunks) if !hunks.is_empty() => {
            for (i, r) in assess_hunks(lines, hunks, patch.rules, opts)
                .into_iter()
                .enumerate()
            {
                out.push(status(i + 1, r));
            }
        }
        Body::Edits(edits) => {
            let mut accepted = Vec::new();
            for (i, e) in edits.iter().enumerate() {
                let mut trial = accepted.clone();
                trial.push(e.clone());
                let r = locate_edits(&text, &trial, opts);
                if r.is_ok() {
                    accepted = trial;
                }
                out.push(status(i + 1, r.map(|_| ()).map_err(|e| e.code())));
            }
        }
        _ => out.push(whole(path, true, ErrorCode::FileNotFound)),
    }
}

/// Name chip `id` in a refusal, with what would have applied and what failed, and teach the
/// next step.
pub fn attach(error: Error, id: &str, hunks: &[HunkStatus]) -> Error {
    AgentError::Chipped {
        cause: Box::new(error),
        chip: id.to_string(),
        hunks: hunks.to_vec(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(path: &str, hunk: usize, applies: bool) -> HunkStatus {
        HunkStatus {
            path: path.into(),
            hunk,
            applies,
            code: (!applies).then(|| "context_not_found".to_string()),
        }
    }

    /// A link planted where a kept chip was is refused as the state place's own refusal
    /// (what stands there, and what to do), not followed and not called an unknown chip.
    #[test]
    #[cfg(unix)]
    fn a_link_planted_as_a_chip_is_refused_saying_what_stands_there() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = ChipStore::new(dir.path().join("chips"));
        let id = store.keep(b"patch").expect("kept");
        let kept = dir.path().join("chips").join(format!("{id}.patch"));
        std::fs::remove_file(&kept).expect("removed");
        std::fs::write(dir.path().join("elsewhere"), b"patch").expect("written");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &kept).expect("symlink");
        let e = store.load(&id).expect_err("a link is refused");
        assert!(matches!(e, AgentError::Outside { .. }), "{e:?}");
        let e = Error::from(e);
        assert_eq!(e.details().expect("details")["found"], "symlink");
        assert_eq!(e.path.as_deref(), Some(kept.to_string_lossy().as_ref()));
    }

    #[test]
    fn a_chip_is_kept_and_named_in_the_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = ChipStore::new(dir.path().join("chips"));
        let patch = b"*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch\n";
        let id = store.keep(patch).expect("kept");
        assert_eq!(
            store.keep(patch).expect("kept again"),
            id,
            "same patch, same chip"
        );
        assert_eq!(store.load(&id).expect("loads"), patch.to_vec());
        assert_eq!(
            store.load("ffffffffffff").map_err(|e| e.code()),
            Err(ErrorCode::Usage)
        );
        let e = Error::new(
            ErrorCode::ContextNotFound,
            "hunk 2 of a.rs: context not found",
        )
        .with_hint("read a.rs again");
        let e = attach(
            e,
            &id,
            &[
                status("a.rs", 1, true),
                status("a.rs", 2, false),
                status("b.rs", 1, true),
            ],
        );
        let d = e.details().expect("details");
        assert_eq!(d["chip"], id.as_str());
        assert_eq!(d["applicable"].as_array().map(Vec::len), Some(2));
        assert_eq!(d["failed"][0]["hunk"], 2);
        let hint = e.hint.expect("hint");
        assert!(
            hint.starts_with("read a.rs again; only hunk 2 of a.rs failed"),
            "{hint}"
        );
        assert!(hint.contains(&format!("apply-patch chip {id}")), "{hint}");
    }

    #[test]
    fn assessment_names_the_hunks_that_would_apply() {
        use crate::model::{Format, Hunk, Line, LineKind};
        let dir = tempfile::tempdir().expect("temp dir");
        fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\nfive\n").expect("write");
        let hunk = |old: &'static [u8], new: &'static [u8]| Hunk {
            lines: vec![
                Line::new(LineKind::Delete, old),
                Line::new(LineKind::Insert, new),
            ],
            ..Hunk::default()
        };
        let fp = |op: FileOp, path: &str, hunks: Vec<Hunk<'static>>| {
            let old = (op != FileOp::Add).then(|| path.to_string());
            FilePatch::new(op, old, Some(path.to_string()), Body::Hunks(hunks), 1)
        };
        let patch = PatchSet {
            format: Format::Agent,
            rules: crate::model::Rules::AGENT,
            cd: None,
            files: vec![
                fp(
                    FileOp::Modify,
                    "a.txt",
                    vec![hunk(b"two", b"2"), hunk(b"six", b"6"), hunk(b"five", b"5")],
                ),
                fp(FileOp::Add, "a.txt", vec![]),
                fp(FileOp::Modify, "gone.txt", vec![hunk(b"x", b"y")]),
            ],
        };
        let tree = crate::tree::DiskTree::new(dir.path()).expect("tree");
        let got: Vec<(String, usize, bool)> = assess(&tree, &patch, &LocateOptions::default())
            .into_iter()
            .map(|h| (h.path, h.hunk, h.applies))
            .collect();
        let want = |p: &str, h, a| (p.to_string(), h, a);
        assert_eq!(
            got,
            vec![
                want("a.txt", 1, true),
                want("a.txt", 2, false),
                want("a.txt", 3, true),
                want("a.txt", 0, false),
                want("gone.txt", 0, false),
            ]
        );
    }

    #[test]
    fn old_chips_are_pruned() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = ChipStore::new(dir.path().to_path_buf());
        for i in 0..MAX_CHIPS + 5 {
            store.keep(format!("patch {i}").as_bytes()).expect("kept");
        }
        let n = fs::read_dir(dir.path()).expect("list").count();
        assert_eq!(n, MAX_CHIPS);
    }
}
