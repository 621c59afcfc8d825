//! The one model every front end produces: a patch set of file patches, each with hunks of
//! lines (or, for JSON edit requests, edits that are not line hunks).
//!
//! Stage: model. No parsing and no I/O here; the model borrows line text from the patch input
//! where it can (`Cow`), and [`PatchSet::into_owned`] detaches it when a plan must outlive the
//! input (previews, chips).

use std::borrow::Cow;

/// Which front end produced a patch set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Format {
    /// The agent patch language (`*** Begin Patch` … `*** End Patch`).
    Agent,
    /// A git or plain unified diff.
    Unified,
    /// A JSON edit request (`{"edits": [...]}`).
    Json,
    /// SEARCH/REPLACE edit blocks (Aider, Cline, Roo Code; SPEC §4b).
    Blocks,
}

impl Format {
    /// Every format, in the order their names are listed.
    pub const ALL: [Format; 4] = [Format::Agent, Format::Unified, Format::Json, Format::Blocks];

    /// The names `--format` (and every front end's `format` option) takes.
    pub const NAMES: [&'static str; 4] = ["agent", "unified", "json", "blocks"];

    /// The format called `name` (one of [`Format::NAMES`]).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The name used on the command line (`--format`) and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Agent => "agent",
            Format::Unified => "unified",
            Format::Json => "json",
            Format::Blocks => "blocks",
        }
    }
}

/// How the hunks of a patch set are to be read: what the planner and the locator need to know
/// of the front end that made them, so that nothing past parsing asks which format it was.
/// Each front end sets its own ([`Rules::AGENT`], [`Rules::UNIFIED`], [`Rules::JSON`],
/// [`Rules::BLOCKS`]); the format itself only names the patch in messages and reports.
///
/// ```
/// use apply_patch::model::{Rules, Trust};
/// assert_eq!(Rules::UNIFIED.line_numbers, Trust::UnlessStale);
/// assert!(Rules::BLOCKS.sequential && !Rules::AGENT.sequential);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Rules {
    /// Whether the hunks' line numbers are evidence of where they go (SPEC §5 "Trust in line
    /// numbers").
    pub line_numbers: Trust,
    /// A hunk without line numbers is looked for from the line after the previous hunk of
    /// its file (an agent hunk's derived hint); false: nothing but the order of hunks and
    /// file-wide uniqueness places it.
    pub follows_previous: bool,
    /// Ends are anchored as `git apply` anchors them: a hunk without leading context whose old
    /// side starts at line 0 or 1 matches only at the start of the file, one without trailing
    /// context (unless `--unidiff-zero`) only at the end (SPEC §5 "Anchored ends").
    pub anchored_ends: bool,
    /// With `--unidiff-zero`, a hunk without context goes exactly to its line numbers.
    pub zero_context_at_numbers: bool,
    /// The hunks of a file apply one after the other, each to the content the previous ones
    /// left and each unique in that whole content (SPEC §4b); false: all against the file as
    /// it was, each below the previous one (SPEC §5 "Order").
    pub sequential: bool,
    /// Line numbers that are not trusted are ignored altogether (no window is centred on
    /// them); false: they still centre the window (SPEC §5).
    pub untrusted_numbers_ignored: bool,
    /// A file that is not UTF-8 is matched byte for byte at level 1; false: it is refused
    /// (`invalid_utf8`).
    pub bytes_ok: bool,
    /// A file that holds only a BOM is one line, `\u{feff}` (as diff tools see it); false: it
    /// is an empty file.
    pub bom_is_a_line: bool,
    /// The patch is a difference between two trees (a git diff): copy and rename sources are
    /// read as they were before the patch, and a file's old side is named once. False: the
    /// file operations run in sequence, each seeing the result of the previous ones.
    pub two_trees: bool,
    /// An Add may fill an existing empty file (a SEARCH/REPLACE block with an empty SEARCH);
    /// false: an existing file is `file_exists` unless it holds exactly the content.
    pub add_fills_empty: bool,
    /// The patch can be reversed (`-R`).
    pub reversible: bool,
    /// Added and deleted files carry no mode lines: they are regular files.
    pub modeless: bool,
    /// What an `ambiguous_match` gives each candidate as the hint that selects it.
    pub selector: Selector,
}

/// Whose line numbers are trusted (SPEC §5 "Trust in line numbers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trust {
    /// Trusted unless the patch's `index` blob id is known to differ from the file.
    UnlessStale,
    /// Trusted only under the file's Base (`*** Base:`, `--base`, `base`), which proves they
    /// were read from this version: models guess line numbers.
    UnderBase,
}

/// The hint an `ambiguous_match` gives each candidate (SPEC §5 "Uniqueness").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selector {
    /// An `@@ -N @@` line (with the `*** Base:` line of the file).
    AgentHeader,
    /// The full `@@ -N,M +N,M @@` header (with the `index` line when the blob id differs).
    UnifiedHeader,
    /// A `:start_line:N` line right after the block's SEARCH opener (with the file's Base).
    StartLine,
}

impl Rules {
    /// The agent patch language (SPEC §2).
    pub const AGENT: Rules = Rules {
        line_numbers: Trust::UnderBase,
        follows_previous: true,
        anchored_ends: false,
        zero_context_at_numbers: false,
        sequential: false,
        untrusted_numbers_ignored: false,
        bytes_ok: false,
        bom_is_a_line: false,
        two_trees: false,
        add_fills_empty: false,
        reversible: false,
        modeless: true,
        selector: Selector::AgentHeader,
    };
    /// Git and plain unified diffs (SPEC §3).
    pub const UNIFIED: Rules = Rules {
        line_numbers: Trust::UnlessStale,
        follows_previous: false,
        anchored_ends: true,
        zero_context_at_numbers: true,
        sequential: false,
        untrusted_numbers_ignored: false,
        bytes_ok: true,
        bom_is_a_line: true,
        two_trees: true,
        add_fills_empty: false,
        reversible: true,
        modeless: false,
        selector: Selector::UnifiedHeader,
    };
    /// JSON edit requests (SPEC §4): their edits carry no hunks; create and delete read as
    /// the agent language's Add and Delete.
    pub const JSON: Rules = Rules {
        selector: Selector::AgentHeader,
        ..Rules::AGENT
    };
    /// SEARCH/REPLACE edit blocks (SPEC §4b): each block unique in the whole file as the
    /// blocks before it left it, its line hint trusted only under the file's Base.
    pub const BLOCKS: Rules = Rules {
        follows_previous: false,
        sequential: true,
        untrusted_numbers_ignored: true,
        add_fills_empty: true,
        selector: Selector::StartLine,
        ..Rules::AGENT
    };
}

impl From<Format> for Rules {
    /// The rules of the front end of `format` (for library callers that place hunks
    /// themselves).
    fn from(format: Format) -> Self {
        match format {
            Format::Agent => Rules::AGENT,
            Format::Unified => Rules::UNIFIED,
            Format::Json => Rules::JSON,
            Format::Blocks => Rules::BLOCKS,
        }
    }
}

/// A parsed patch: file operations in the order they must run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchSet<'a> {
    /// The front end that read it (for messages and reports).
    pub format: Format,
    /// How its hunks are read: set by the front end.
    pub rules: Rules,
    /// Directory (relative to the root) that a heredoc opener `cd DIR && apply_patch <<EOF`
    /// named; every path of the patch is relative to it. `None` when there was none.
    pub cd: Option<String>,
    pub files: Vec<FilePatch<'a>>,
}

/// What a file patch does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileOp {
    /// Create `new_path`.
    Add,
    /// Remove `old_path`.
    Delete,
    /// Change `old_path` in place (`new_path` equals it).
    Modify,
    /// Move `old_path` to `new_path`, with or without hunks.
    Rename,
    /// Copy `old_path` to `new_path`, with or without hunks; the source stays.
    Copy,
    /// Only the file mode changes (no hunks).
    Mode,
}

impl FileOp {
    /// The name used in reports (`op` of SPEC §8).
    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Add => "add",
            FileOp::Delete => "delete",
            FileOp::Modify => "modify",
            FileOp::Rename => "rename",
            FileOp::Copy => "copy",
            FileOp::Mode => "mode",
        }
    }
}

/// A git file mode as written in diff headers (`100644`, `100755`, `120000`, `160000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mode(pub u32);

impl Mode {
    pub const FILE: Mode = Mode(0o100644);
    pub const EXECUTABLE: Mode = Mode(0o100755);
    pub const SYMLINK: Mode = Mode(0o120000);
    pub const GITLINK: Mode = Mode(0o160000);

    pub fn is_symlink(self) -> bool {
        self.0 & 0o170000 == 0o120000
    }

    pub fn is_gitlink(self) -> bool {
        self.0 & 0o170000 == 0o160000
    }

    pub fn is_executable(self) -> bool {
        self.0 & 0o170000 == 0o100000 && self.0 & 0o111 != 0
    }
}

/// Blob ids from a git `index OLD..NEW [MODE]` line, as written (possibly abbreviated hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobIds {
    pub old: String,
    pub new: String,
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch<'a> {
    pub op: FileOp,
    /// The path before (None for Add). Already stripped (`-p`) and normalised to `/`
    /// separators; still relative to the root (or to `PatchSet::cd`).
    pub old_path: Option<String>,
    /// The path after (None for Delete; equal to `old_path` for Modify and Mode).
    pub new_path: Option<String>,
    pub old_mode: Option<Mode>,
    pub new_mode: Option<Mode>,
    /// `*** Base:` or JSON `base`: a lowercase hex prefix (≥ 8 digits) of the SHA-256 of the
    /// file's bytes as they are on disk.
    pub base: Option<String>,
    /// From a git `index` line.
    pub blob_ids: Option<BlobIds>,
    /// What changes inside the file.
    pub body: Body<'a>,
    /// 1-based line of the patch input where this file patch starts (for messages).
    pub patch_line: usize,
}

impl<'a> FilePatch<'a> {
    /// A file patch without modes, base or blob ids (the front ends add those they read).
    pub fn new(
        op: FileOp,
        old_path: Option<String>,
        new_path: Option<String>,
        body: Body<'a>,
        patch_line: usize,
    ) -> Self {
        FilePatch {
            op,
            old_path,
            new_path,
            old_mode: None,
            new_mode: None,
            base: None,
            blob_ids: None,
            body,
            patch_line,
        }
    }

    /// The path this patch is reported under: the new path, else the old one.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }
}

/// The content change of one file patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    /// Line hunks (agent language, unified diffs). Empty for a pure rename / mode change /
    /// delete. For Add, one hunk whose lines are all inserts (or no hunk: an empty file).
    Hunks(Vec<Hunk<'a>>),
    /// JSON edits of one file, all against the file as it was before the request.
    Edits(Vec<Edit<'a>>),
    /// `GIT binary patch` data.
    Binary(BinaryPatch),
    /// `Binary files a and b differ`: a binary change without data (always refused).
    BinaryWithoutData,
}

impl Body<'_> {
    /// True for hunks or JSON edits, the bodies that edit text; a binary patch, a pure
    /// rename or a mode change does not.
    pub fn edits_text(&self) -> bool {
        match self {
            Body::Hunks(hunks) => !hunks.is_empty(),
            Body::Edits(edits) => !edits.is_empty(),
            Body::Binary(_) | Body::BinaryWithoutData => false,
        }
    }

    /// The hunks, or an empty slice for other bodies.
    pub fn hunks(&self) -> &[Hunk<'_>] {
        match self {
            Body::Hunks(h) => h,
            _ => &[],
        }
    }
}

/// One hunk: a run of context / delete / insert lines with optional placement hints.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk<'a> {
    /// `@@ -N,M +N,M @@`: 1-based old start and counts, as written. For unified diffs these are
    /// always present; for agent hunks only with the `@@ -N` form.
    pub old_start: Option<usize>,
    pub old_count: Option<usize>,
    pub new_start: Option<usize>,
    pub new_count: Option<usize>,
    /// Agent `@@ ANCHOR` lines, outermost first (consecutive `@@` lines narrow step by step).
    /// Empty when there is none. Unified diffs' section text after `@@ … @@` is not kept here:
    /// it is ignored, as git does.
    pub anchors: Vec<Cow<'a, [u8]>>,
    /// `*** End of File`: the hunk must end at the end of the file.
    pub end_of_file: bool,
    pub lines: Vec<Line<'a>>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_newline: bool,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_no_newline: bool,
    /// 1-based line of the patch input where this hunk starts (for messages).
    pub patch_line: usize,
}

impl<'a> Hunk<'a> {
    /// The old side: context and deleted lines, in order.
    pub fn old_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Insert)
            .map(|l| l.text.as_ref())
    }

    /// The new side: context and inserted lines, in order.
    pub fn new_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Delete)
            .map(|l| l.text.as_ref())
    }

    /// True when the hunk has no context and no deleted lines.
    pub fn is_pure_insertion(&self) -> bool {
        self.lines.iter().all(|l| l.kind == LineKind::Insert)
    }
}

/// What a hunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineKind {
    Context,
    Delete,
    Insert,
}

/// One line of a hunk, without its line ending (a CR before the LF of a CRLF patch is not
/// part of the text either: line endings never count, SPEC §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    pub kind: LineKind,
    pub text: Cow<'a, [u8]>,
}

impl<'a> Line<'a> {
    pub fn new(kind: LineKind, text: impl Into<Cow<'a, [u8]>>) -> Self {
        Line {
            kind,
            text: text.into(),
        }
    }
}

/// A JSON edit (SPEC §4) other than create / delete, which become Add / Delete file patches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit<'a> {
    /// Replace `old` (exactly once, or every occurrence with `all`) by `new`.
    Replace {
        old: Cow<'a, str>,
        new: Cow<'a, str>,
        all: bool,
    },
    /// Replace lines `start..=end` (1-based), proven by `expected`.
    LineRange {
        start: usize,
        end: usize,
        expected: Cow<'a, str>,
        new_content: Cow<'a, str>,
    },
    /// Insert `content` as new lines after line `after` (0: at the top).
    Insert { after: usize, content: Cow<'a, str> },
    /// Add `content` after the file's last byte.
    Append { content: Cow<'a, str> },
}

/// `GIT binary patch` data: the forward change, and the reverse one when the diff has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryPatch {
    pub forward: BinaryData,
    pub reverse: Option<BinaryData>,
}

/// One side of a binary patch, already base85-decoded and inflated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryData {
    pub kind: BinaryKind,
    /// The size the header declares (of the result for literal data, of the delta for deltas).
    pub size: u64,
    /// Inflated bytes: the new content (literal) or a git delta (delta).
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    Literal,
    Delta,
}

impl<'a> PatchSet<'a> {
    /// Detach the patch set from its input.
    pub fn into_owned(self) -> PatchSet<'static> {
        PatchSet {
            format: self.format,
            rules: self.rules,
            cd: self.cd,
            files: self.files.into_iter().map(FilePatch::into_owned).collect(),
        }
    }
}

fn own_bytes(c: Cow<'_, [u8]>) -> Cow<'static, [u8]> {
    Cow::Owned(c.into_owned())
}

fn own_str(c: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(c.into_owned())
}

impl<'a> FilePatch<'a> {
    pub fn into_owned(self) -> FilePatch<'static> {
        FilePatch {
            op: self.op,
            old_path: self.old_path,
            new_path: self.new_path,
            old_mode: self.old_mode,
            new_mode: self.new_mode,
            base: self.base,
            blob_ids: self.blob_ids,
            body: self.body.into_owned(),
            patch_line: self.patch_line,
        }
    }
}

impl<'a> Body<'a> {
    pub fn into_owned(self) -> Body<'static> {
        match self {
            Body::Hunks(h) => Body::Hunks(h.into_iter().map(Hunk::into_owned).collect()),
            Body::Edits(e) => Body::Edits(e.into_iter().map(Edit::into_owned).collect()),
            Body::Binary(b) => Body::Binary(b),
            Body::BinaryWithoutData => Body::BinaryWithoutData,
        }
    }
}

impl<'a> Hunk<'a> {
    pub fn into_owned(self) -> Hunk<'static> {
        Hunk {
            old_start: self.old_start,
            old_count: self.old_count,
            new_start: self.new_start,
            new_count: self.new_count,
            anchors: self.anchors.into_iter().map(own_bytes).collect(),
            end_of_file: self.end_of_file,
            lines: self
                .lines
                .into_iter()
                .map(|l| Line {
                    kind: l.kind,
                    text: own_bytes(l.text),
                })
                .collect(),
            old_no_newline: self.old_no_newline,
            new_no_newline: self.new_no_newline,
            patch_line: self.patch_line,
        }
    }
}

impl<'a> Edit<'a> {
    pub fn into_owned(self) -> Edit<'static> {
        match self {
            Edit::Replace { old, new, all } => Edit::Replace {
                old: own_str(old),
                new: own_str(new),
                all,
            },
            Edit::LineRange {
                start,
                end,
                expected,
                new_content,
            } => Edit::LineRange {
                start,
                end,
                expected: own_str(expected),
                new_content: own_str(new_content),
            },
            Edit::Insert { after, content } => Edit::Insert {
                after,
                content: own_str(content),
            },
            Edit::Append { content } => Edit::Append {
                content: own_str(content),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_new_sides_split_by_kind() {
        let hunk = Hunk {
            lines: vec![
                Line::new(LineKind::Context, &b"a"[..]),
                Line::new(LineKind::Delete, &b"b"[..]),
                Line::new(LineKind::Insert, &b"c"[..]),
            ],
            ..Hunk::default()
        };
        assert_eq!(hunk.old_lines().collect::<Vec<_>>(), vec![&b"a"[..], b"b"]);
        assert_eq!(hunk.new_lines().collect::<Vec<_>>(), vec![&b"a"[..], b"c"]);
        assert!(!hunk.is_pure_insertion());
    }

    #[test]
    fn modes_classify() {
        assert!(Mode::SYMLINK.is_symlink());
        assert!(Mode::GITLINK.is_gitlink());
        assert!(Mode::EXECUTABLE.is_executable());
        assert!(!Mode::FILE.is_executable());
    }
}
