//! Stage: locate — re-basing inserted lines' indentation after a match at level 3 or 4
//! (SPEC §5 "What is written"): the patch's base indentation becomes the file's, and relative
//! indentation is converted to the file's unit (tabs or N spaces) when the file's style is
//! unambiguous.
//!
//! Pure; touches only leading spaces and tabs of inserted lines, never their other bytes.

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

/// The indentation unit of some lines: tabs when every indented line starts with a tab,
/// N spaces when every indented line starts with a space and (nearly) all widths are
/// multiples of the smallest; None when mixed or unclear.
pub(crate) fn unit_of<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<Unit> {
    let (mut tabs, mut widths) = (0usize, Vec::new());
    for line in lines.filter(|l| !is_blank(l)) {
        match line.first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => widths.push(indent(line).iter().take_while(|&&b| b == b' ').count()),
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

/// How to re-indent a hunk's inserted lines.
#[derive(Debug, Clone)]
pub(crate) struct Rebase {
    patch_base: Vec<u8>,
    file_base: Vec<u8>,
    /// (the patch's unit, the file's unit) when both are known.
    units: Option<(Unit, Unit)>,
}

impl Rebase {
    /// From the patch's old side and the file lines it matched (same length), the hunk's
    /// lines (for the patch's unit) and the file's unit ([`unit_of`] its lines). None when
    /// no matched line is non-blank or nothing would change.
    pub fn new(
        old: &[&[u8]],
        matched: &[&[u8]],
        patch_lines: &[&[u8]],
        file_unit: Option<Unit>,
    ) -> Option<Rebase> {
        let j = old.iter().position(|l| !is_blank(l))?;
        let patch_base = indent(old[j]).to_vec();
        let file_base = indent(matched.get(j)?).to_vec();
        let patch_unit = unit_of(patch_lines.iter().copied());
        let units = patch_unit.zip(file_unit).filter(|(p, f)| p != f);
        if patch_base == file_base && units.is_none() {
            return None;
        }
        Some(Rebase {
            patch_base,
            file_base,
            units,
        })
    }

    /// One inserted line, re-based. Blank lines are written as the patch gives them.
    pub fn apply(&self, line: &[u8]) -> Vec<u8> {
        if is_blank(line) {
            return line.to_vec();
        }
        let ind = indent(line);
        let rest = &line[ind.len()..];
        let mut out = Vec::with_capacity(line.len() + 8);
        match ind.strip_prefix(&self.patch_base[..]) {
            Some(rel) => {
                out.extend_from_slice(&self.file_base);
                out.extend_from_slice(&self.convert(rel));
            }
            // Less indented than the base: convert it as a whole.
            None => out.extend_from_slice(&self.convert(ind)),
        }
        out.extend_from_slice(rest);
        out
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
        assert_eq!(rebase.apply(b"  z();"), b"\t\tz();");
        assert_eq!(rebase.apply(b"w();"), b"\tw();");
        assert_eq!(rebase.apply(b"   "), b"   ");
    }

    #[test]
    fn same_style_changes_nothing() {
        let old: Vec<&[u8]> = vec![b"    a"];
        assert!(Rebase::new(&old, &old, &old, unit_of(old.clone().into_iter())).is_none());
    }
}
