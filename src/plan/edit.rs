//! Stage: plan (edit). A file patch's body applied to a file's bytes: the hunks or JSON
//! edits placed by the locator, the new bytes spliced, and the reports of each placement.
//! A large text file is planned on two threads (see [`Planner::checked_edit`]).

use crate::content::{Content, Runs};
use crate::guard;
use crate::locate::{self, Level, LocateOptions, Piece, Placement};
use crate::model::{Body, FilePatch, Format, Hunk, Rules};
use crate::report::{HunkReport, Warning, WarningCode};
use crate::text::Text;

use super::content::{level_words, sequential_spans, snippet, spans, without_bom, Span};
use super::trust;
use super::{balance, Edited, Planner};
use super::{BinaryWhy, PlanError};

/// From this size on, a file's hunks are placed and its hashes taken on two threads (below
/// it a thread costs more than it saves), and its new content is a recipe of the old one
/// (see [`crate::content`]).
pub(super) const PARALLEL_BYTES: usize = 1 << 20;

/// Hunks (or JSON edits) placed in a file's lines.
struct Placed<'b> {
    lines: Lines<'b>,
    placements: Vec<Placement>,
    /// Where each placement's new side stands in the new file.
    spans: Vec<Span>,
    /// The patch drops the file's BOM (see `content::without_bom`).
    drops_bom: bool,
}

/// What [`Placed`] keeps of the file's lines: the lines themselves (a small file, spliced
/// later into a buffer of its own), or, for a large file, the recipe of its new content,
/// made where the hunks were placed — on the placing thread, while the other one hashes —
/// so the lines (16 bytes each) are freed there too.
enum Lines<'b> {
    Text(Text<'b>),
    Spliced(Runs),
    /// The new content, already made (hunks placed one after the other).
    Done(Vec<u8>),
}

/// Split `bytes` into lines and place the hunks or edits of `body` in them. Pure (no
/// planner state), so it can run on another thread.
fn place<'b>(
    body: &Body<'_>,
    rules: Rules,
    bytes: &'b [u8],
    opts: &LocateOptions,
) -> Result<Placed<'b>, locate::LocateError> {
    if let (true, Body::Hunks(hunks)) = (rules.sequential, body) {
        if hunks.len() > 1 {
            return place_in_sequence(hunks, rules, bytes, opts);
        }
    }
    let (text, placements, drops_bom) = locate_in(body, rules, bytes, opts)?;
    let lines = if bytes.len() >= PARALLEL_BYTES && !drops_bom {
        Lines::Spliced(crate::splice::splice_runs(bytes, &text, &placements))
    } else {
        Lines::Text(text)
    };
    Ok(Placed {
        lines,
        spans: spans(&placements),
        placements,
        drops_bom,
    })
}

/// The lines of `bytes`, the placements of `body` in them, and whether the patch drops the
/// file's BOM.
fn locate_in<'b>(
    body: &Body<'_>,
    rules: Rules,
    bytes: &'b [u8],
    opts: &LocateOptions,
) -> Result<(Text<'b>, Vec<Placement>, bool), locate::LocateError> {
    let text = if rules.bom_is_a_line && bytes == crate::text::BOM {
        // Only a BOM: no lines for us, one line (`\u{feff}`) for the diff tool that wrote
        // the patch; match it as that line.
        Text::single_line(bytes)
    } else {
        Text::parse(bytes)
    };
    let mut drops_bom = false;
    let opts = &LocateOptions {
        ends_with_newline: Some(text.ends_with_newline()),
        ..opts.clone()
    };
    let placements = match body {
        Body::Hunks(hunks) => {
            let rebased = text.bom.then(|| without_bom(hunks)).flatten();
            let hunks = match &rebased {
                Some((h, drops)) => {
                    drops_bom = *drops;
                    h.as_slice()
                }
                None => hunks.as_slice(),
            };
            locate::locate_hunks(text.contents(), hunks, rules, opts)?
        }
        Body::Edits(edits) => locate::locate_edits(&text, edits, opts)?,
        Body::Binary(_) | Body::BinaryWithoutData => Vec::new(),
    };
    Ok((text, placements, drops_bom))
}

/// Place hunks one after the other, each in the content the ones before it left, each unique
/// in the whole of that content (SEARCH/REPLACE blocks, SPEC §4b), and splice each in turn. A
/// placement's `start` is a line of the content its hunk was placed in; a line hint names a
/// line of the file as it was, and is moved by the hunks placed above it.
fn place_in_sequence<'b>(
    hunks: &[Hunk<'_>],
    rules: Rules,
    bytes: &[u8],
    opts: &LocateOptions,
) -> Result<Placed<'b>, locate::LocateError> {
    let mut current = bytes.to_vec();
    let mut placements: Vec<Placement> = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        let mut hunk = hunk.clone();
        hunk.old_start = hunk.old_start.map(|n| {
            placements.iter().fold(n, |line, p| {
                let delta = p.pieces.len() as isize - p.old_len as isize;
                match p.start + p.old_len < line {
                    true => (line as isize + delta).max(1) as usize,
                    false => line,
                }
            })
        });
        let body = Body::Hunks(vec![hunk]);
        let (text, mut placed, drops_bom) =
            locate_in(&body, rules, &current, opts).map_err(|e| renumbered(e, index))?;
        let mut new = crate::splice::splice(&text, &placed);
        if drops_bom && new.starts_with(crate::text::BOM) {
            new.drain(..crate::text::BOM.len().min(new.len()));
        }
        current = new;
        for p in &mut placed {
            p.hunk = index;
        }
        placements.extend(placed);
    }
    Ok(Placed {
        lines: Lines::Done(current),
        spans: sequential_spans(&placements),
        placements,
        drops_bom: false,
    })
}

/// A refusal of the one hunk placed alone as the refusal of hunk `index` of its file.
fn renumbered(mut error: locate::LocateError, index: usize) -> locate::LocateError {
    use locate::LocateError::*;
    match &mut error {
        ContextNotFound { hunk, .. }
        | AmbiguousMatch { hunk, .. }
        | OverlappingHunks { hunk, .. }
        | ExpectedMismatch { hunk, .. } => *hunk = index,
    }
    error
}

/// Refuse NUL bytes and (unless the rules match bytes) non-UTF-8 files; pick the locate
/// options. Pure, so that it can run on another thread. `format` names the patch's format in
/// the refusal.
fn text_checks(
    shown: &str,
    bytes: &[u8],
    link: bool,
    (format, rules): (Format, Rules),
    locate: &LocateOptions,
) -> Result<LocateOptions, PlanError> {
    if !link && guard::is_binary(bytes) {
        return Err(PlanError::Binary {
            path: shown.into(),
            why: BinaryWhy::EditedAsText,
        });
    }
    let mut opts = locate.clone();
    if std::str::from_utf8(bytes).is_err() {
        if !rules.bytes_ok {
            return Err(PlanError::NotUtf8 {
                path: shown.into(),
                format,
            });
        }
        opts.bytes_only = true;
    }
    Ok(opts)
}

/// The result of a scoped thread; its panic goes on in this thread.
fn joined<T>(result: std::thread::Result<T>) -> T {
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

impl Planner<'_> {
    /// Apply the body of a file patch to `current`; `stale`: the file's blob id when the
    /// diff's `index` id is known to differ from it (its line numbers are not trusted).
    pub(super) fn edit(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        current: &Content,
        (link, stale): (bool, Option<&str>),
    ) -> Result<Edited, PlanError> {
        let bytes = current.as_slice();
        match &fp.body {
            Body::BinaryWithoutData => Err(PlanError::Binary {
                path: shown.into(),
                why: BinaryWhy::ChangedWithoutData,
            }),
            Body::Binary(b) => {
                let new = crate::parse::binary::apply(bytes, &b.forward).map_err(|why| {
                    PlanError::Binary {
                        path: shown.into(),
                        why: BinaryWhy::Unappliable(why.to_string()),
                    }
                })?;
                let same = new == bytes;
                let mut e = Edited::unchanged(new.into());
                if same {
                    e.already.push(1);
                } else {
                    e.done.push(1);
                }
                Ok(e)
            }
            Body::Hunks(hunks) if hunks.is_empty() => Ok(Edited::unchanged(current.clone())),
            Body::Edits(edits) if edits.is_empty() => Ok(Edited::unchanged(current.clone())),
            body => {
                let kind = (self.format, self.rules);
                let mut opts = text_checks(shown, bytes, link, kind, &self.opts.locate)?;
                opts.line_numbers = trust::line_numbers(self.rules, fp, stale);
                let placed = place(body, self.rules, bytes, &opts)
                    .map_err(|e| self.locate_error(fp, (shown, current), stale, e))?;
                Ok(self.spliced((shown, fp.body.hunks()), placed, current))
            }
        }
    }

    /// [`Self::check_bases`], then [`Self::edit`]. On a large text file the two run side by
    /// side — the base's blob id is hashed and the file checked for NUL bytes and UTF-8 on
    /// this thread while the hunks are placed on another — with the outcome of running them
    /// one after the other: a base refusal still comes first, then a binary or non-UTF-8
    /// file.
    pub(super) fn checked_edit(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        current: &Content,
        link: bool,
    ) -> Result<Edited, PlanError> {
        let bytes = current.as_slice();
        if !fp.body.edits_text() || bytes.len() < PARALLEL_BYTES {
            let stale = self.check_bases(fp, shown, current)?;
            return self.edit(fp, shown, current, (link, stale.as_deref()));
        }
        // The other thread places the hunks as in a UTF-8 file whose base matches, the
        // common case; this one checks whether it is one. A file that is not is placed
        // again, byte for byte or with its line numbers untrusted.
        let (format, rules) = (self.format, self.rules);
        let assumed = LocateOptions {
            line_numbers: trust::line_numbers(rules, fp, None),
            ..self.opts.locate.clone()
        };
        let (bases, checks, placed) = std::thread::scope(|scope| {
            let placing = crate::pool::beside(scope, || place(&fp.body, rules, bytes, &assumed));
            let bases = self.check_bases(fp, shown, current);
            let checks = text_checks(shown, bytes, link, (format, rules), &self.opts.locate);
            (bases, checks, joined(placing.join()))
        });
        let stale = bases?;
        let mut opts = checks?;
        opts.line_numbers = trust::line_numbers(rules, fp, stale.as_deref());
        let placed = if opts == assumed {
            placed
        } else {
            place(&fp.body, rules, bytes, &opts)
        }
        .map_err(|e| self.locate_error(fp, (shown, current), stale.as_deref(), e))?;
        Ok(self.spliced((shown, fp.body.hunks()), placed, current))
    }

    /// A refusal of the locator for the file `shown`: the selectors of an ambiguity carry
    /// the line that makes the file's line numbers trusted (SPEC §5 "Uniqueness").
    fn locate_error(
        &self,
        fp: &FilePatch<'_>,
        (shown, current): (&str, &Content),
        stale: Option<&str>,
        error: locate::LocateError,
    ) -> PlanError {
        let line = match &error {
            locate::LocateError::AmbiguousMatch { .. } => {
                trust::trust_line(self.rules, fp, current, stale)
            }
            _ => None,
        };
        PlanError::Locate {
            path: shown.into(),
            error: Box::new(trust::with_trust(error, line.as_deref())),
        }
    }

    /// The new content of hunks placed in `base`, with its reports. The new content of a
    /// large file is a recipe of `base`: no second copy of the file is made here (the
    /// transaction writes and hashes it piece by piece).
    fn spliced(
        &mut self,
        (shown, hunks): (&str, &[Hunk<'_>]),
        placed: Placed<'_>,
        base: &Content,
    ) -> Edited {
        let Placed {
            lines,
            placements,
            spans,
            drops_bom,
        } = placed;
        let new = match lines {
            Lines::Spliced(runs) => Content::spliced(base.clone(), runs),
            Lines::Done(bytes) => Content::from(bytes),
            Lines::Text(text) => {
                let mut new = crate::splice::splice(&text, &placements);
                if drops_bom && new.starts_with(crate::text::BOM) {
                    new.drain(..crate::text::BOM.len().min(new.len()));
                }
                Content::from(new)
            }
        };
        let mut edited = self.edited((shown, hunks), new, &placements, &spans);
        edited.regions = balance::regions(&spans);
        edited
    }

    /// Hunk reports, counts, warnings and the snippet of placed hunks.
    fn edited(
        &mut self,
        (shown, hunks): (&str, &[Hunk<'_>]),
        bytes: Content,
        placements: &[Placement],
        spans: &[Span],
    ) -> Edited {
        let mut e = Edited::unchanged(Content::default());
        for p in placements {
            let n = p.hunk + 1;
            e.hunks.push(HunkReport {
                hunk: n,
                line: if p.old_len > 0 { p.start + 1 } else { p.start },
                level: p.level,
                fuzz: p.fuzz.lines(),
                offset: p.offset,
            });
            if let Some(hunk) = hunks.get(p.hunk).filter(|_| p.fuzz.lines() > 0) {
                self.warnings
                    .push(fuzz_warning(hunk, p).with_path(shown).with_hunk(n));
            }
            if p.already_applied {
                e.already.push(n);
                continue;
            }
            e.done.push(n);
            let kept = p
                .pieces
                .iter()
                .filter(|x| matches!(x, Piece::Keep(_)))
                .count();
            e.added += p.pieces.len() - kept;
            e.removed += p.old_len.saturating_sub(kept);
            if p.level != Level::Exact {
                self.warnings.push(
                    Warning::new(
                        WarningCode::FuzzyMatch,
                        format!(
                            "placed at line {} ignoring {}",
                            p.start + 1,
                            level_words(p.level)
                        ),
                    )
                    .with_path(shown)
                    .with_hunk(n),
                );
            }
            if let Some(off) = p.offset.filter(|o| *o != 0) {
                let dir = if off > 0 { "below" } else { "above" };
                self.warnings.push(
                    Warning::new(
                        WarningCode::Offset,
                        format!(
                            "placed {} line{} {dir} its line-number hint",
                            off.unsigned_abs(),
                            if off.unsigned_abs() == 1 { "" } else { "s" }
                        ),
                    )
                    .with_path(shown)
                    .with_hunk(n),
                );
            }
        }
        e.snippet = snippet(&bytes, spans);
        e.bytes = bytes;
        e
    }
}

/// The `fuzz` warning of a hunk placed (or found applied) with outer context lines ignored:
/// where, and which lines (SPEC §5 "Fuzz", §8).
fn fuzz_warning(hunk: &Hunk<'_>, p: &Placement) -> Warning {
    /// Longer lines are cut in the warning (the hunk itself shows them whole).
    const SHOWN: usize = 60;
    let n = hunk.lines.len();
    let quote = |line: &crate::model::Line<'_>, side: &str| {
        let text = String::from_utf8_lossy(&line.text);
        let cut: String = text.chars().take(SHOWN).collect();
        let more = if cut.len() < text.len() { "…" } else { "" };
        format!("`{cut}{more}` {side}")
    };
    let ignored: Vec<String> = hunk.lines[..p.fuzz.top]
        .iter()
        .map(|l| quote(l, "above"))
        .chain(
            hunk.lines[n - p.fuzz.bottom..]
                .iter()
                .map(|l| quote(l, "below")),
        )
        .collect();
    let count = p.fuzz.lines();
    let what = if p.already_applied {
        "found already applied"
    } else {
        "placed"
    };
    Warning::new(
        WarningCode::Fuzz,
        format!(
            "{what} at line {} ignoring {count} outer context line{} of the hunk (fuzz): {}",
            p.start + 1,
            if count == 1 { "" } else { "s" },
            ignored.join(", ")
        ),
    )
}
