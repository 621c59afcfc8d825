//! Stage: locate — re-basing inserted lines' indentation after a match at level 3 or 4
//! (SPEC §5 "What is written"): the whole inserted block is shifted from the patch's
//! indentation to the file's — lines shallower than the hunk's first line included — and
//! relative indentation is converted to the file's unit (tabs or N spaces) when the file's
//! style is unambiguous and the patch's is not the file's.
//!
//! Pure; touches only leading spaces and tabs of inserted lines, never their other bytes. A
//! line the shift would move left of column 0 is refused, never guessed.

use super::diagnose::{lossy, ws_words};
use super::{LocateError, PatchPart};

/// One level of indentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Tab,
    Spaces(usize),
}

impl Unit {
    fn render(self, levels: usize) -> Vec<u8> {
        match self {
            Unit::Tab => vec![b'\t'; levels],
            Unit::Spaces(n) => vec![b' '; levels * n],
        }
    }

    /// How many units `indent` is, if it is a whole number of them in this style.
    fn count(self, indent: &[u8]) -> Option<usize> {
        match self {
            Unit::Tab => indent.iter().all(|&b| b == b'\t').then_some(indent.len()),
            Unit::Spaces(n) => (indent.iter().all(|&b| b == b' ')
                && indent.len().is_multiple_of(n))
            .then_some(indent.len() / n),
        }
    }
}

/// Leading spaces and tabs.
pub(crate) fn indent(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(line.len());
    &line[..n]
}

fn is_blank(line: &[u8]) -> bool {
    super::ladder::trim(line).is_empty()
}

fn common_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The indentation unit of some lines: tabs when every indented line starts with a tab,
/// N spaces when every indented line starts with a space and (nearly) all widths are
/// multiples of the smallest; None when mixed or unclear.
pub(crate) fn unit_of<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<Unit> {
    unit_of_indents(lines.filter(|l| !is_blank(l)).map(indent))
}

/// [`unit_of`] from indentations alone (empty ones say nothing).
fn unit_of_indents<'a>(indents: impl Iterator<Item = &'a [u8]>) -> Option<Unit> {
    let (mut tabs, mut widths) = (0usize, Vec::new());
    for ind in indents {
        match ind.first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => widths.push(ind.iter().take_while(|&&b| b == b' ').count()),
            _ => {}
        }
    }
    match (tabs, widths.is_empty()) {
        (0, true) => None,
        (_, true) => Some(Unit::Tab),
        (0, false) => {
            let unit = *widths.iter().min().expect("widths is not empty");
            let fitting = widths.iter().filter(|&&w| w % unit == 0).count();
            // A stray odd line (a doc comment's " * ") must not hide a clear style.
            (fitting * 10 >= widths.len() * 9).then_some(Unit::Spaces(unit))
        }
        _ => None,
    }
}

/// How to re-indent a hunk's inserted lines: a shift from the patch's base indentation to
/// the file's, with relative indentation converted between units when `units` is set.
#[derive(Debug, Clone)]
pub(crate) struct Rebase {
    patch_base: Vec<u8>,
    file_base: Vec<u8>,
    /// (the patch's unit, the file's unit) when relative indentation is converted.
    units: Option<(Unit, Unit)>,
}

/// An inserted line the shift would move left of column 0 (or out of the file's
/// indentation, when that does not end with what the line lacks of the base).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooShallow {
    /// The line as the patch gives it.
    line: Vec<u8>,
    /// What the line lacks of the patch's base indentation.
    removed: Vec<u8>,
    /// The file's indentation of the matched line the shift is based on.
    file_base: Vec<u8>,
}

impl Rebase {
    /// From the patch's old side and the file lines it matched (same length), the hunk's
    /// lines (for the patch's unit) and the file's unit ([`unit_of`] its lines). None when
    /// no matched line is non-blank or nothing would change.
    ///
    /// The base is the non-blank old line whose shift carries the most non-blank old lines
    /// onto their matched lines' indentation, the first on a tie (SPEC §5 "What is
    /// written"): one line whose indentation alone changed in the file — a kept context
    /// line after fuzz may be one — cannot move the inserted lines.
    pub fn new(
        old: &[&[u8]],
        matched: &[&[u8]],
        patch_lines: &[&[u8]],
        file_unit: Option<Unit>,
    ) -> Option<Rebase> {
        let pairs: Vec<(&[u8], &[u8])> = old
            .iter()
            .zip(matched)
            .filter(|(o, _)| !is_blank(o))
            .map(|(o, f)| (indent(o), indent(f)))
            .collect();
        let carried = |base: &Rebase| {
            pairs
                .iter()
                .filter(|(o, f)| base.shift(o).is_ok_and(|s| s == *f))
                .count()
        };
        let mut rebase: Option<(Rebase, usize)> = None;
        for &(o, f) in &pairs {
            let candidate = Rebase {
                patch_base: o.to_vec(),
                file_base: f.to_vec(),
                units: None,
            };
            let n = carried(&candidate);
            if rebase.as_ref().is_none_or(|(_, best)| n > *best) {
                rebase = Some((candidate, n));
            }
        }
        let (mut rebase, _) = rebase?;
        if !rebase.shift_is_enough(old, matched, patch_lines, file_unit) {
            let patch_unit = unit_of_indents(rebase.fragments(patch_lines));
            rebase.units = patch_unit.zip(file_unit).filter(|(p, f)| p != f);
        }
        if rebase.patch_base == rebase.file_base && rebase.units.is_none() {
            return None;
        }
        Some(rebase)
    }

    /// A plain shift is enough when it gives every matched line the file's indentation, and
    /// either some matched line is indented relative to the base (so the patch and the file
    /// agree on relative indentation) or all the patch's relative indentation is already in
    /// the file's unit. Only then is the patch's unit, guessed from few lines, not needed.
    fn shift_is_enough(
        &self,
        old: &[&[u8]],
        matched: &[&[u8]],
        patch_lines: &[&[u8]],
        file_unit: Option<Unit>,
    ) -> bool {
        let mut relative = false;
        for (o, f) in old.iter().zip(matched).filter(|(o, _)| !is_blank(o)) {
            let ind = indent(o);
            relative |= ind != &self.patch_base[..];
            if self.shift(ind).ok().as_deref() != Some(indent(f)) {
                return false;
            }
        }
        relative
            || file_unit.is_none_or(|u| self.fragments(patch_lines).all(|f| u.count(f).is_some()))
    }

    /// What the patch's non-blank lines add to, or lack of, its base indentation.
    fn fragments<'a>(&'a self, lines: &'a [&'a [u8]]) -> impl Iterator<Item = &'a [u8]> + 'a {
        lines
            .iter()
            .filter(|l| !is_blank(l))
            .flat_map(move |l| {
                let ind = indent(l);
                let c = common_len(ind, &self.patch_base);
                [&self.patch_base[c..], &ind[c..]]
            })
            .filter(|f| !f.is_empty())
    }

    /// One inserted line, shifted. An empty line stays empty; a whitespace-only line the
    /// shift cannot move keeps only what follows its indentation (it is blank either way).
    pub fn apply(&self, line: &[u8]) -> Result<Vec<u8>, TooShallow> {
        if line.is_empty() {
            return Ok(Vec::new());
        }
        let ind = indent(line);
        let rest = &line[ind.len()..];
        match self.shift(ind) {
            Ok(mut out) => {
                out.extend_from_slice(rest);
                Ok(out)
            }
            Err(_) if is_blank(line) => Ok(rest.to_vec()),
            Err(removed) => Err(TooShallow {
                line: line.to_vec(),
                removed,
                file_base: self.file_base.clone(),
            }),
        }
    }

    /// The file's indentation for a patch indentation `ind`: the file's base, less what
    /// `ind` lacks of the patch's base, plus (converted) what `ind` adds to it. Err(what it
    /// lacks) when the file's base does not end with that.
    fn shift(&self, ind: &[u8]) -> Result<Vec<u8>, Vec<u8>> {
        let c = common_len(ind, &self.patch_base);
        let (removed, added) = (&self.patch_base[c..], &ind[c..]);
        let kept = self.strip(removed).ok_or_else(|| removed.to_vec())?;
        let mut out = self.file_base[..kept].to_vec();
        out.extend_from_slice(&self.convert(added));
        Ok(out)
    }

    /// The length of the file's base once `removed` (converted, else as it is) is taken off
    /// its end; None when the base does not end with it.
    fn strip(&self, removed: &[u8]) -> Option<usize> {
        if removed.is_empty() {
            return Some(self.file_base.len());
        }
        [self.convert(removed), removed.to_vec()]
            .into_iter()
            .find(|r| self.file_base.ends_with(r))
            .map(|r| self.file_base.len() - r.len())
    }

    fn convert(&self, rel: &[u8]) -> Vec<u8> {
        match self.units {
            Some((from, to)) => match from.count(rel) {
                Some(levels) => to.render(levels),
                None => rel.to_vec(),
            },
            None => rel.to_vec(),
        }
    }
}

impl TooShallow {
    /// The refusal (`context_not_found`, SPEC §5) of the hunk or JSON `replace` edit
    /// `index`: `at` the 0-based first matched line, `expected` the lines matched.
    pub fn into_error(
        self,
        (unit, index): (PatchPart, usize),
        at: usize,
        expected: &[&[u8]],
    ) -> LocateError {
        let (what, line) = match unit {
            PatchPart::Edit => ("`old`", format!("line `{}` of `new`", lossy(&self.line))),
            PatchPart::Hunk => ("context", format!("inserted line `{}`", lossy(&self.line))),
        };
        let file = match self.file_base.is_empty() {
            true => "no indentation".to_string(),
            false => format!("only {}", ws_words(&self.file_base)),
        };
        let message = format!(
            "{what} matches at line {} only when leading whitespace is ignored, and {line} cannot \
             be shifted to the file's indentation: it is indented {} less than the matched line \
             the shift is based on, which has {file} in the file, so it would need negative indentation",
            at + 1,
            ws_words(&self.removed),
        );
        LocateError::ContextNotFound {
            unit,
            hunk: index,
            message,
            below: None,
            expected: expected.iter().map(|l| lossy(l)).collect(),
            nearest: None,
            hint: "write the lines with the file's indentation (copy them from the file), so \
                   that no new line is less indented than the file allows"
                .to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_detected() {
        let tabs: Vec<&[u8]> = vec![b"a", b"\tb", b"\t\tc", b""];
        assert_eq!(unit_of(tabs.into_iter()), Some(Unit::Tab));
        let spaces: Vec<&[u8]> = vec![b"a", b"    b", b"        c", b"   "];
        assert_eq!(unit_of(spaces.into_iter()), Some(Unit::Spaces(4)));
        let mixed: Vec<&[u8]> = vec![b"\ta", b"  b"];
        assert_eq!(unit_of(mixed.into_iter()), None);
    }

    #[test]
    fn base_and_unit_are_rebased() {
        // The patch indents with 2 spaces from column 0; the file with tabs from one tab.
        let old: Vec<&[u8]> = vec![b"if x {", b"  y();"];
        let matched: Vec<&[u8]> = vec![b"\tif x {", b"\t\ty();"];
        let file: Vec<&[u8]> = vec![b"fn f() {", b"\tif x {", b"\t\ty();", b"\t}", b"}"];
        let rebase =
            Rebase::new(&old, &matched, &old, unit_of(file.into_iter())).expect("bases differ");
        assert_eq!(rebase.apply(b"  z();"), Ok(b"\t\tz();".to_vec()));
        assert_eq!(rebase.apply(b"w();"), Ok(b"\tw();".to_vec()));
        assert_eq!(rebase.apply(b""), Ok(Vec::new()));
    }

    #[test]
    fn shallower_lines_are_shifted_and_too_shallow_ones_refused() {
        // The patch is 4 spaces deeper than the file: every line moves 4 columns left.
        let old: Vec<&[u8]> = vec![b"        a", b"            b"];
        let matched: Vec<&[u8]> = vec![b"    a", b"        b"];
        let unit = unit_of(matched.clone().into_iter());
        let rebase = Rebase::new(&old, &matched, &old, unit).expect("bases differ");
        assert_eq!(rebase.apply(b"    c"), Ok(b"c".to_vec()));
        assert_eq!(rebase.apply(b"      "), Ok(b"  ".to_vec()));
        assert_eq!(rebase.apply(b"  "), Ok(Vec::new()));
        let err = rebase.apply(b"d").expect_err("4 columns left of 0");
        assert_eq!((err.removed.len(), err.file_base.len()), (8, 4));
    }

    #[test]
    fn agreeing_relative_indentation_is_not_converted() {
        // The patch's only relative indentation is 8 spaces (two of the file's levels): its
        // unit, guessed alone, would be 8; the matched lines show a plain shift is right.
        let old: Vec<&[u8]> = vec![b"  a", b"          b"];
        let matched: Vec<&[u8]> = vec![b"    a", b"            b"];
        let file: Vec<&[u8]> = vec![b"x", b"    a", b"        y", b"            b"];
        let rebase = Rebase::new(&old, &matched, &old, unit_of(file.into_iter())).expect("shift");
        assert_eq!(rebase.apply(b"          c"), Ok(b"            c".to_vec()));
    }

    #[test]
    fn one_line_whose_indentation_alone_changed_does_not_choose_the_base() {
        // The first matched line was re-indented in the file (a context line kept by fuzz
        // may be); the other two agree on a shift of 4 spaces: that shift is the base.
        let old: Vec<&[u8]> = vec![b"x = 1", b"    y = 2", b"    z = 3"];
        let matched: Vec<&[u8]> = vec![b"        x = 1", b"        y = 2", b"        z = 3"];
        let rebase = Rebase::new(&old, &matched, &old, Some(Unit::Spaces(4))).expect("shift");
        assert_eq!(rebase.apply(b"    w = 4"), Ok(b"        w = 4".to_vec()));
        // All lines agreeing, the first non-blank one is the base, as before.
        let rebase = Rebase::new(&old[1..], &matched[1..], &old, Some(Unit::Spaces(4)));
        assert_eq!(
            rebase.expect("shift").apply(b"    w"),
            Ok(b"        w".to_vec())
        );
    }

    #[test]
    fn same_style_changes_nothing() {
        let old: Vec<&[u8]> = vec![b"    a"];
        assert!(Rebase::new(&old, &old, &old, unit_of(old.clone().into_iter())).is_none());
    }
}
