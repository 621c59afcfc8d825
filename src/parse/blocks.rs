//! Stage: parse — SEARCH/REPLACE edit blocks, the edit format of Aider, Cline and Roo Code
//! (SPEC §4b; normative grammar: `grammar/blocks.ebnf`), into a syntax tree ([`Blocks`]) and
//! from it into the model's hunks ([`into_files`]). Every nom function of this front end
//! implements one production of the grammar and names it in a `/// grammar:` line. Pure: no
//! I/O and no placement decisions (where a block goes, and what an empty SEARCH means for an
//! existing file, are the locator's and the planner's business); nom's error type stays in
//! this module and leaves it as a [`ParseError`]. Line text borrows from the input where it
//! can.
//!
//! [`crate::parse::parse`] reaches it when detection finds a SEARCH opener (or a block tool
//! call), or with `--format blocks`; [`parse_set`] gives the model, with [`Rules::BLOCKS`].
//!
//! Submodules: `lex` (lines, markers, the private error type), `document` (blocks, their
//! markers and paths), `part` (SEARCH and REPLACE lines: line numbers, escapes), `wrapper`
//! (the tool-call forms) and `convert` (blocks → hunks).

use std::borrow::Cow;

use super::one_patch;
use super::position::LineCounter;
use super::{ParseError, ParseOptions};
use crate::model::{Format, PatchSet, Rules};

mod convert;
mod document;
mod lex;
mod part;
mod wrapper;

#[cfg_attr(not(feature = "internals"), allow(unused_imports))]
pub use convert::{block_hunk, into_files, into_patches, Change, FileBlocks};

/// Read SEARCH/REPLACE blocks into the model (SPEC §4b): [`parse`] with `opts.path`, then
/// [`into_patches`] with `opts.base`. The patch set's rules are [`Rules::BLOCKS`]: the blocks
/// of a file apply in sequence, each unique in the whole file as the blocks before it left
/// it; an empty SEARCH is an Add that may also fill an empty file.
///
/// ```
/// use apply_patch::parse::{blocks, ParseOptions};
/// use apply_patch::{FileOp, Format};
/// let opts = ParseOptions::default().with_path(Some("a.txt".into()));
/// let set = blocks::parse_set(b"<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n", &opts)
///     .unwrap();
/// assert_eq!(set.format, Format::Blocks);
/// assert_eq!((set.files[0].op, set.files[0].path()), (FileOp::Modify, "a.txt"));
/// ```
pub fn parse_set<'a>(input: &'a [u8], opts: &ParseOptions) -> Result<PatchSet<'a>, ParseError> {
    let base = match (&opts.base, &opts.path) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(ParseError::about_input(
                "--base needs --path: a Base belongs to one file",
            )
            .with_hint("name the file the blocks edit with --path FILE"))
        }
        (Some(base), Some(_)) => Some(checked_base(base)?),
    };
    let blocks = parse(input, opts.path.as_deref())?;
    Ok(PatchSet {
        format: Format::Blocks,
        rules: Rules::BLOCKS,
        cd: None,
        files: into_patches(blocks, base),
    })
}

/// A Base given out of band: at least 8 hexadecimal digits, lowercased.
fn checked_base(base: &str) -> Result<String, ParseError> {
    let hex = base.trim();
    if hex.len() < 8 || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParseError::about_input(format!(
            "--base needs 8 to 64 hexadecimal digits, found `{}`",
            super::position::shown(hex.as_bytes())
        ))
        .with_hint("give a prefix of the SHA-256 of the file's bytes, as `apply-patch read` shows it"));
    }
    Ok(hex.to_ascii_lowercase())
}

/// A line that, trimmed, is a SEARCH opener (`<<<<<<< SEARCH`, `------- SEARCH`): where
/// detection finds blocks (SPEC §1).
pub(crate) fn is_opener_line(content: &[u8]) -> bool {
    lex::is_opener(content)
}

/// A line that starts a block tool call: `{`, `<replace_in_file>` or `<apply_diff>`.
pub(crate) fn is_call_line(content: &[u8]) -> bool {
    content.trim_ascii_start().starts_with(b"{") || lex::tool_tag(content).is_some()
}

/// `text` starts with a JSON object that has a `diff` member and no `edits`: the arguments
/// of a `replace_in_file` / `apply_diff` call, not an edit request.
pub(crate) fn is_tool_call(text: &[u8]) -> bool {
    let mut stream = serde_json::Deserializer::from_slice(text)
        .into_iter::<std::collections::BTreeMap<String, serde::de::IgnoredAny>>();
    match stream.next() {
        Some(Ok(members)) => members.contains_key("diff") && !members.contains_key("edits"),
        _ => false,
    }
}

/// A parsed SEARCH/REPLACE input: its blocks in input order, each with its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks<'a> {
    /// How the blocks came: bare, or inside a tool call.
    pub form: Form,
    pub blocks: Vec<Block<'a>>,
}

/// The shape of the input around the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Blocks in text (an Aider reply, a `diff` parameter given as is).
    Text,
    /// `{"path": P, "diff": D}`: the arguments of a `replace_in_file` / `apply_diff` call.
    JsonCall,
    /// `<replace_in_file>` (Cline) or `<apply_diff>` (Roo Code) with `<path>` and `<diff>`.
    XmlCall(&'static str),
}

/// One block: the whole lines SEARCH names are replaced by REPLACE's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// The file, relative to the root (trimmed, a leading `./` dropped); never guessed.
    pub path: String,
    /// Where the path came from.
    pub path_from: PathFrom,
    /// SEARCH's lines, without line endings, escapes and line-number prefixes.
    pub search: Vec<Cow<'a, [u8]>>,
    /// REPLACE's lines, the same way.
    pub replace: Vec<Cow<'a, [u8]>>,
    /// Roo's `:start_line:N`, or the `N | ` prefixes of every SEARCH line: a line hint, which
    /// the engine trusts only with the file's Base (SPEC §4b).
    pub hint: Option<LineHint>,
    /// Roo's `:end_line:N`, read and kept; it places nothing (as in Roo).
    pub end_line: Option<usize>,
    /// 1-based line of the opener in the text read (for a JSON tool call: in its `diff`
    /// string).
    pub patch_line: usize,
}

/// Where a block's path came from (SPEC §4b "Paths").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFrom {
    /// Out of band: the `path` argument of the parse call (`--path`, MCP, library).
    Given,
    /// The `path` of the tool call around the blocks.
    ToolCall,
    /// Aider's path line, at this 1-based line of the text read.
    Line(usize),
    /// No path line of its own: the path of the block before it (1-based block number).
    Previous(usize),
}

/// A line-number hint of a block and what wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineHint {
    /// 1-based line of the file where SEARCH starts, as the model says.
    pub line: usize,
    pub source: HintSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintSource {
    /// `:start_line:N` right after the opener.
    StartLine,
    /// `N | ` before every SEARCH line (and every REPLACE line, or an empty REPLACE).
    LinePrefixes,
}

impl Block<'_> {
    /// True when SEARCH has no line at all: the whole-file case of SPEC §4b (create a missing
    /// file, already applied, or `file_exists`), which the planner decides.
    pub fn is_empty_search(&self) -> bool {
        self.search.is_empty()
    }

    /// Detach the block from its input.
    pub fn into_owned(self) -> Block<'static> {
        let own = |lines: Vec<Cow<'_, [u8]>>| {
            lines
                .into_iter()
                .map(|l| Cow::Owned(l.into_owned()))
                .collect()
        };
        Block {
            path: self.path,
            path_from: self.path_from,
            search: own(self.search),
            replace: own(self.replace),
            hint: self.hint,
            end_line: self.end_line,
            patch_line: self.patch_line,
        }
    }
}

impl Blocks<'_> {
    /// Detach the blocks from their input.
    pub fn into_owned(self) -> Blocks<'static> {
        Blocks {
            form: self.form,
            blocks: self.blocks.into_iter().map(Block::into_owned).collect(),
        }
    }
}

/// Read SEARCH/REPLACE blocks from `input` (SPEC §4b).
///
/// `path` is the out-of-band path (`--path`, the `path` argument of the MCP tool and of the
/// library calls): it applies to every block, and every line outside the blocks is prose.
/// Without it, a tool call's `path` does; without either, Aider's path lines do (the line
/// right before the opener, or right before the fence lines above it). The form is chosen
/// by the first line that is a SEARCH opener, holds a `<replace_in_file>` or `<apply_diff>`
/// tag, or starts with `{`.
///
/// grammar: blocks_input
///
/// ```
/// use apply_patch::parse::blocks::{self, PathFrom};
/// let reply = b"Here you go:\n\nsrc/a.rs\n```rust\n<<<<<<< SEARCH\nold\n=======\nnew\n\
///     >>>>>>> REPLACE\n```\n";
/// let parsed = blocks::parse(reply, None).unwrap();
/// let block = &parsed.blocks[0];
/// assert_eq!(block.path, "src/a.rs");
/// assert_eq!(block.path_from, PathFrom::Line(3));
/// assert_eq!(block.search[0].as_ref(), b"old");
/// assert_eq!(block.replace[0].as_ref(), b"new");
/// ```
pub fn parse<'a>(input: &'a [u8], path: Option<&str>) -> Result<Blocks<'a>, ParseError> {
    let body = match lex::bom(input) {
        Ok((rest, _)) => rest,
        Err(_) => input,
    };
    let given = match path {
        Some(p) => Some(given_path(input, p)?),
        None => None,
    };
    match wrapper::form_of(body) {
        Some((at, Form::JsonCall)) => wrapper::json_call(input, at, given.as_deref()),
        Some((at, Form::XmlCall(tool))) => wrapper::xml_call(input, at, tool, given.as_deref()),
        _ => {
            let blocks = read_text(input, body, given.as_deref())?;
            Ok(Blocks {
                form: Form::Text,
                blocks,
            })
        }
    }
}

/// The out-of-band path, checked as a path line's is. It is the caller's argument, not part
/// of the input, so an error about it stands at the input's first line.
fn given_path(input: &[u8], path: &str) -> Result<String, ParseError> {
    document::checked_path(path.as_bytes())
        .map_err(|(message, hint)| ParseError::at(input, 0, message).with_hint(hint))
}

/// Read the blocks of `doc` (a slice of `text`, the text errors and line numbers refer to).
/// `given` is the path every block takes, if any, and `from` says where it came from.
fn read_document<'a>(
    text: &'a [u8],
    doc: &'a [u8],
    given: Option<&str>,
    from: PathFrom,
) -> Result<Vec<Block<'a>>, ParseError> {
    let given = given.map(|p| (p, from));
    match document::block_document(text, doc, given) {
        Ok(raw) => Ok(number_lines(raw, text)),
        Err(nom::Err::Error(f) | nom::Err::Failure(f)) => Err(to_parse_error(text, f)),
        Err(nom::Err::Incomplete(_)) => {
            Err(ParseError::at(text, text.len(), "the blocks end too early"))
        }
    }
}

/// [`read_document`] of blocks written as text (not inside a tool call), refusing a second
/// patch — an agent envelope or a unified diff — in the prose before, between or after the
/// blocks (SPEC §1: one input, one patch; the prose is never searched for a patch to apply).
fn read_text<'a>(
    input: &'a [u8],
    body: &'a [u8],
    given: Option<&str>,
) -> Result<Vec<Block<'a>>, ParseError> {
    let raw = match document::block_document(input, body, given.map(|p| (p, PathFrom::Given))) {
        Ok(raw) => raw,
        Err(nom::Err::Error(f) | nom::Err::Failure(f)) => return Err(to_parse_error(input, f)),
        Err(nom::Err::Incomplete(_)) => {
            return Err(ParseError::at(input, input.len(), "the blocks end too early"))
        }
    };
    let base = input.as_ptr() as usize;
    let offset = |addr: usize| addr.saturating_sub(base);
    if let Some(first) = raw.first() {
        let start = (Format::Blocks, offset(first.at));
        let mut from = 0;
        for b in &raw {
            one_patch::no_patch_in_block_prose(input, start, from, offset(b.at))?;
            from = offset(b.end);
        }
        one_patch::no_patch_in_block_prose(input, start, from, input.len())?;
    }
    Ok(number_lines(raw, input))
}

/// A private failure of the productions as the stage's error.
fn to_parse_error(text: &[u8], f: lex::Fail) -> ParseError {
    let offset = f
        .addr
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    let err = ParseError::at(text, offset, f.message);
    match f.hint {
        Some(hint) => err.with_hint(hint),
        None => err,
    }
}

/// While parsing, line fields hold byte offsets of `text` (the productions see only
/// slices); here they become 1-based line numbers, in one pass.
fn number_lines<'a>(raw: Vec<document::RawBlock<'a>>, text: &[u8]) -> Vec<Block<'a>> {
    let base = text.as_ptr() as usize;
    let mut counter = LineCounter::new(text);
    let mut line_of = |addr: usize| counter.line_of(addr.saturating_sub(base));
    raw.into_iter()
        .map(|b| {
            let path_from = match b.path_from {
                document::RawPathFrom::Line(addr) => PathFrom::Line(line_of(addr)),
                document::RawPathFrom::Other(from) => from,
            };
            Block {
                path: b.path,
                path_from,
                search: b.search,
                replace: b.replace,
                hint: b.hint,
                end_line: b.end_line,
                patch_line: line_of(b.at),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
