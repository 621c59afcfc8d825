//! Stage: plan (a pure helper of it). A line-based three-way merge of byte contents, built on
//! gix's text merge driver (the same algorithm family as `git merge-file`).
//!
//! Used by `--3way` (merging a diff's base blob → patched base onto the current file) and by the
//! agent's `--rebase`. Pure: no repository, no I/O, no panics on any input.

use gix::diff::blob::InternedInput;
use gix::merge::blob::builtin_driver::text::{
    Conflict, ConflictStyle, Labels as GixLabels, Options,
};
use gix::merge::blob::Resolution;
use std::num::NonZeroU8;

/// The names written after the conflict markers (`<<<<<<< ours`, `>>>>>>> theirs`) and, when
/// given, after the base marker of diff3 style (`||||||| base`, only with `base: Some`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Labels<'a> {
    /// The current content (the file as it is).
    pub ours: &'a str,
    /// The incoming content (the patched base).
    pub theirs: &'a str,
    /// The common ancestor; `Some` switches the marked text to diff3 style (base section shown).
    pub base: Option<&'a str>,
}

impl Default for Labels<'_> {
    /// `ours` / `theirs`, the labels `git apply --3way` writes.
    fn default() -> Self {
        Labels {
            ours: "ours",
            theirs: "theirs",
            base: None,
        }
    }
}

/// One conflicting region of a failed merge.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConflictRegion {
    /// 1-based line of the `<<<<<<<` marker in [`Conflicts::marked`].
    pub line: usize,
    /// The current content's lines of the region (without line endings, lossily decoded).
    pub ours: Vec<String>,
    /// The incoming content's lines of the region.
    pub theirs: Vec<String>,
}

/// Why a merge was not clean: every conflicting region, and the whole text with git-style
/// conflict markers (what `--conflict-markers` writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts {
    pub regions: Vec<ConflictRegion>,
    /// The merged text with `<<<<<<<`/`=======`/`>>>>>>>` markers (7 characters, as git).
    pub marked: Vec<u8>,
}

impl Conflicts {
    /// The regions as the JSON `details` of a `merge_conflict` error.
    pub fn to_details(&self) -> serde_json::Value {
        serde_json::json!({ "conflicts": self.regions })
    }

    /// A one-line summary: "2 conflicting regions (at lines 3 and 17 of the merged text)".
    pub fn summary(&self) -> String {
        let lines: Vec<String> = self.regions.iter().map(|r| r.line.to_string()).collect();
        let noun = if self.regions.len() == 1 {
            "conflicting region"
        } else {
            "conflicting regions"
        };
        format!(
            "{} {noun} (at line{} {} of the merged text)",
            self.regions.len(),
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", ")
        )
    }
}

/// Merge the change `base → theirs` into `ours`.
///
/// A clean merge returns the merged bytes (changes made identically on both sides are taken
/// once, as git does); overlapping different changes return [`Conflicts`].
///
/// ```
/// use apply_patch::merge::{three_way, Labels};
/// let base = b"a\nb\nc\nd\ne\n";
/// let ours = b"a\nB\nc\nd\ne\n"; // the file changed line 2 since the patch was made
/// let theirs = b"a\nb\nc\nd\nE\n"; // the patch changes line 5
/// let merged = three_way(base, ours, theirs, Labels::default()).unwrap();
/// assert_eq!(merged, b"a\nB\nc\nd\nE\n");
/// ```
pub fn three_way(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    labels: Labels<'_>,
) -> Result<Vec<u8>, Conflicts> {
    let style = if labels.base.is_some() {
        ConflictStyle::Diff3
    } else {
        ConflictStyle::Merge
    };
    let gix_labels = GixLabels {
        ancestor: labels.base.map(|s| s.as_bytes().into()),
        current: Some(labels.ours.as_bytes().into()),
        other: Some(labels.theirs.as_bytes().into()),
    };
    let (marked, resolution) = run(base, ours, theirs, gix_labels, style, 7);
    if resolution != Resolution::Conflict {
        return Ok(marked);
    }
    // The regions are read back from a second rendering whose markers are longer than any
    // marker-like run in the inputs, so a line of the file can never pass for a marker.
    let size = unique_marker_size(&[base, ours, theirs]);
    // Markers take one line whatever their size, so the probe's line numbers are the marked
    // text's.
    let (probe, _) = run(base, ours, theirs, GixLabels::default(), style, size);
    let regions = regions_of(&probe, size as usize);
    Err(Conflicts { regions, marked })
}

/// One run of gix's text driver with the given marker style and size.
fn run(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    labels: GixLabels<'_>,
    style: ConflictStyle,
    marker_size: u8,
) -> (Vec<u8>, Resolution) {
    let marker_size = NonZeroU8::new(marker_size).unwrap_or(NonZeroU8::MIN);
    let options = Options {
        conflict: Conflict::Keep { style, marker_size },
        ..Options::default()
    };
    let mut input = InternedInput::default();
    let mut out = Vec::new();
    let resolution = gix::merge::blob::builtin_driver::text(
        &mut out, &mut input, labels, ours, base, theirs, options,
    );
    (out, resolution)
}

/// A marker length (≥ 7) longer than every run of `<`, `=`, `>` or `|` that starts a line of
/// the inputs (255 at most).
fn unique_marker_size(inputs: &[&[u8]]) -> u8 {
    let longest = inputs
        .iter()
        .flat_map(|text| text.split(|&b| b == b'\n'))
        .map(|line| match line.first() {
            Some(&c) if matches!(c, b'<' | b'=' | b'>' | b'|') => {
                line.iter().take_while(|&&b| b == c).count()
            }
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    u8::try_from((longest + 1).max(7)).unwrap_or(u8::MAX)
}

/// Is `line` a conflict marker of exactly `size` characters `c`?
fn is_marker(line: &[u8], c: u8, size: usize) -> bool {
    line.len() >= size
        && line[..size].iter().all(|&b| b == c)
        && !matches!(line.get(size), Some(&b) if b == c)
}

/// The conflicting regions of a text rendered with markers of `size` characters.
fn regions_of(text: &[u8], size: usize) -> Vec<ConflictRegion> {
    #[derive(PartialEq)]
    enum Side {
        Outside,
        Ours,
        Base,
        Theirs,
    }
    let mut regions = Vec::new();
    let mut side = Side::Outside;
    let mut current = ConflictRegion {
        line: 0,
        ours: Vec::new(),
        theirs: Vec::new(),
    };
    for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        let content = strip_ending(line);
        match side {
            Side::Outside if is_marker(content, b'<', size) => {
                current.line = i + 1;
                side = Side::Ours;
            }
            Side::Ours | Side::Base if is_marker(content, b'=', size) => side = Side::Theirs,
            Side::Ours if is_marker(content, b'|', size) => side = Side::Base,
            Side::Ours => current.ours.push(lossy(content)),
            Side::Base => {}
            Side::Theirs if is_marker(content, b'>', size) => {
                regions.push(std::mem::replace(
                    &mut current,
                    ConflictRegion {
                        line: 0,
                        ours: Vec::new(),
                        theirs: Vec::new(),
                    },
                ));
                side = Side::Outside;
            }
            Side::Theirs => current.theirs.push(lossy(content)),
            Side::Outside => {}
        }
    }
    regions
}

fn strip_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(base: &str, ours: &str, theirs: &str) -> Result<String, Conflicts> {
        three_way(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            Labels::default(),
        )
        .map(|b| String::from_utf8(b).expect("inputs are utf-8"))
    }

    #[test]
    fn disjoint_changes_merge_cleanly() {
        let merged = merge(
            "1\n2\n3\n4\n5\n6\n",
            "1\nTWO\n3\n4\n5\n6\n",
            "1\n2\n3\n4\n5\nSIX\n",
        );
        assert_eq!(merged.unwrap(), "1\nTWO\n3\n4\n5\nSIX\n");
    }

    #[test]
    fn identical_changes_are_taken_once() {
        let merged = merge("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n");
        assert_eq!(merged.unwrap(), "a\nB\nc\n");
    }

    #[test]
    fn overlapping_changes_conflict_with_regions_and_markers() {
        let conflicts = merge("a\nb\nc\n", "a\nours\nc\n", "a\ntheirs\nc\n").unwrap_err();
        assert_eq!(
            conflicts.regions,
            vec![ConflictRegion {
                line: 2,
                ours: vec!["ours".into()],
                theirs: vec!["theirs".into()],
            }]
        );
        assert_eq!(
            String::from_utf8_lossy(&conflicts.marked),
            "a\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\nc\n"
        );
        assert_eq!(
            conflicts.summary(),
            "1 conflicting region (at line 2 of the merged text)"
        );
    }

    #[test]
    fn marker_like_lines_in_the_inputs_do_not_confuse_the_regions() {
        let base = "<<<<<<< x\nb\n=======\n";
        let ours = "<<<<<<< x\nmine\n=======\n";
        let theirs = "<<<<<<< x\nyours\n=======\n";
        let conflicts = merge(base, ours, theirs).unwrap_err();
        assert_eq!(conflicts.regions.len(), 1);
        assert_eq!(conflicts.regions[0].line, 2);
        assert_eq!(conflicts.regions[0].ours, vec!["mine".to_string()]);
        assert_eq!(conflicts.regions[0].theirs, vec!["yours".to_string()]);
    }

    #[test]
    fn crlf_content_keeps_its_endings() {
        let merged = merge(
            "a\r\nb\r\nc\r\nd\r\n",
            "A\r\nb\r\nc\r\nd\r\n",
            "a\r\nb\r\nc\r\nD\r\n",
        );
        assert_eq!(merged.unwrap(), "A\r\nb\r\nc\r\nD\r\n");
    }

    #[test]
    fn diff3_style_shows_the_base_when_labelled() {
        let labels = Labels {
            base: Some("base"),
            ..Labels::default()
        };
        let conflicts = three_way(b"a\nb\nc\n", b"a\nx\nc\n", b"a\ny\nc\n", labels).unwrap_err();
        let text = String::from_utf8_lossy(&conflicts.marked).into_owned();
        assert!(text.contains("||||||| base\nb\n"), "{text}");
        assert_eq!(conflicts.regions[0].line, 2);
        assert_eq!(conflicts.regions[0].ours, vec!["x".to_string()]);
        assert_eq!(conflicts.regions[0].theirs, vec!["y".to_string()]);
    }

    #[test]
    fn empty_inputs_merge() {
        assert_eq!(merge("", "", "new\n").unwrap(), "new\n");
        assert_eq!(merge("", "", "").unwrap(), "");
    }

    proptest::proptest! {
        /// A side that did not change takes the other side whole.
        #[test]
        fn one_sided_changes_take_the_other_side(
            base in proptest::collection::vec("[abc]{0,2}\n", 0..8),
            other in proptest::collection::vec("[abcd]{0,2}\n", 0..8),
        ) {
            let base = base.concat();
            let other = other.concat();
            let b = base.as_bytes();
            let o = other.as_bytes();
            proptest::prop_assert_eq!(three_way(b, b, o, Labels::default()).ok(), Some(o.to_vec()));
            proptest::prop_assert_eq!(three_way(b, o, b, Labels::default()).ok(), Some(o.to_vec()));
        }
    }
}
