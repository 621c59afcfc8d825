//! Unit tests of rendering: git-style output, agent output and its refusals, convert, and
//! file_diff checked by parsing and applying it.

use super::*;
use crate::error::ErrorCode;
use crate::model::Line;
use crate::parse::{unified, ParseOptions};

fn set(text: &str) -> PatchSet<'static> {
    unified::parse(text.as_bytes(), 0, &ParseOptions::default())
        .expect("valid diff")
        .into_owned()
}

fn strip_lines(mut s: PatchSet<'_>) -> PatchSet<'_> {
    for f in &mut s.files {
        f.patch_line = 0;
        if let Body::Hunks(hs) = &mut f.body {
            for h in hs {
                h.patch_line = 0;
            }
        }
    }
    s
}

const GIT: &str = "diff --git \"a/sp ace\\303\\251\" \"b/sp ace\\303\\251\"\nold mode 100644\nnew mode 100755\nindex 1111111..2222222\n--- \"a/sp ace\\303\\251\"\n+++ \"b/sp ace\\303\\251\"\n@@ -1,3 +1,3 @@\n x\n-a\n+b\n y\n\\ No newline at end of file\ndiff --git a/old b/new\nrename from old\nrename to new\ndiff --git a/gone b/gone\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/gone\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-p\n-q\ndiff --git a/img b/img\nindex 4444444..5555555 100644\nBinary files a/img and b/img differ\n";

#[test]
fn unified_render_is_what_git_writes() {
    let s = set(GIT);
    assert_eq!(String::from_utf8(to_unified(&s)).expect("utf-8"), GIT);
}

#[test]
fn agent_hunks_get_line_numbers_and_counts() {
    let s = PatchSet {
        format: Format::Agent,
        rules: crate::model::Rules::AGENT,
        cd: None,
        files: vec![FilePatch {
            op: FileOp::Modify,
            old_path: Some("f".into()),
            new_path: Some("f".into()),
            old_mode: None,
            new_mode: None,
            base: None,
            blob_ids: None,
            body: Body::Hunks(vec![
                Hunk {
                    lines: vec![Line::new(LineKind::Insert, &b"top"[..])],
                    ..Hunk::default()
                },
                Hunk {
                    old_start: Some(10),
                    old_count: Some(99),
                    lines: vec![
                        Line::new(LineKind::Context, &b"c"[..]),
                        Line::new(LineKind::Delete, &b"d"[..]),
                    ],
                    ..Hunk::default()
                },
            ]),
            patch_line: 1,
        }],
    };
    let text = String::from_utf8(to_unified(&s)).expect("utf-8");
    assert!(
        text.contains("@@ -0,0 +1 @@\n+top\n@@ -10,2 +11 @@\n c\n-d\n"),
        "{text}"
    );
    let back = unified::parse(
        text.as_bytes(),
        0,
        &ParseOptions {
            unidiff_zero: true,
            ..Default::default()
        },
    );
    assert!(back.is_ok(), "{back:?}");
}

#[test]
fn agent_render() {
    let s = set("diff --git a/x b/y\nrename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -3,2 +3,2 @@\n k\n-a\n+b\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+1\n+2\ndiff --git a/d b/d\ndeleted file mode 100644\n");
    let text = to_agent(&s).expect("expressible");
    assert_eq!(
        text,
        "*** Begin Patch\n*** Update File: x\n*** Move to: y\n@@ -3,2 +3,2 @@\n k\n-a\n+b\n*** Add File: n\n+1\n+2\n*** Delete File: d\n*** End Patch\n"
    );
}

#[test]
fn agent_render_refuses_what_it_cannot_express() {
    let cases = [
        ("diff --git a/m b/m\nold mode 100644\nnew mode 100755\n", "file mode"),
        ("diff --git a/c b/d\ncopy from c\ncopy to d\n", "a copy"),
        ("diff --git a/i b/i\nBinary files a/i and b/i differ\n", "binary"),
        ("diff --git a/s b/s\nnew file mode 120000\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+t\n\\ No newline at end of file\n", "symbolic link"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n\\ No newline at end of file\n", "final newline"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n k\n-\u{e9}\n+b\n", "dummy"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n *** End Patch\n-a\n+b\n", "marker"),
    ];
    for (text, want) in cases {
        let mut s = set(text);
        if want == "dummy" {
            if let Body::Hunks(h) = &mut s.files[0].body {
                h[0].lines[1].text = vec![0xff].into();
            }
        }
        let want = if want == "dummy" { "non-UTF-8" } else { want };
        let err = crate::Error::from(to_agent(&s).expect_err(want));
        assert_eq!(err.code, ErrorCode::Usage);
        assert!(err.message.contains(want), "{}: {}", want, err.message);
    }
}

#[test]
fn convert_refuses_anchors() {
    let mut s = set("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n");
    if let Body::Hunks(h) = &mut s.files[0].body {
        h[0].anchors.push(b"fn main".to_vec().into());
    }
    let refusal = convert_set(&s, Format::Unified).unwrap_err();
    assert_eq!(
        refusal,
        ConvertError::AnchorToUnified {
            path: "x".into(),
            hunk: 1
        }
    );
    let err = crate::Error::from(refusal.clone());
    assert_eq!(err.hunk, Some(1));
    let source = std::error::Error::source(&err).expect("a source");
    assert_eq!(source.downcast_ref::<ConvertError>(), Some(&refusal));
    assert_eq!(
        strip_lines(set(GIT)),
        strip_lines(set(&String::from_utf8(
            convert_set(&set(GIT), Format::Unified).expect("ok")
        )
        .expect("utf-8")))
    );
}

/// Apply a parsed diff's hunks at their exact line numbers (test helper only).
fn apply_exact(old: &[u8], set: &PatchSet<'_>) -> Vec<u8> {
    let lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let mut out: Vec<u8> = Vec::new();
    let mut next = 0;
    for h in set.files[0].body.hunks() {
        let start = h.old_start.unwrap_or(0);
        let start = if h.old_count == Some(0) {
            start
        } else {
            start - 1
        };
        for l in &lines[next..start] {
            out.extend_from_slice(l);
        }
        next = start;
        let new_lines: Vec<&[u8]> = h.new_lines().collect();
        for (i, t) in new_lines.iter().enumerate() {
            out.extend_from_slice(t);
            if !(i + 1 == new_lines.len() && h.new_no_newline) {
                out.push(b'\n');
            }
        }
        next += h.old_lines().count();
    }
    for l in &lines[next..] {
        out.extend_from_slice(l);
    }
    out
}

proptest::proptest! {
    #[test]
    fn file_diff_parses_and_applies(
        old in proptest::collection::vec("[abc]{0,2}", 0..12),
        new in proptest::collection::vec("[abc]{0,2}", 0..12),
        old_nl in proptest::bool::ANY,
        new_nl in proptest::bool::ANY,
    ) {
        let join = |v: &Vec<String>, nl: bool| {
            let mut s = v.join("\n");
            if nl && !v.is_empty() { s.push('\n'); }
            s.into_bytes()
        };
        let (a, b) = (join(&old, old_nl), join(&new, new_nl));
        let d = file_diff(Some("f"), Some("f"), &a, &b);
        if a == b {
            proptest::prop_assert_eq!(d, "");
        } else {
            let o = ParseOptions { unidiff_zero: true, ..Default::default() };
            let parsed = unified::parse(d.as_bytes(), 0, &o);
            proptest::prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed, d);
            let parsed = parsed.expect("checked");
            proptest::prop_assert_eq!(apply_exact(&a, &parsed), b, "{}", d);
        }
    }
}

#[test]
fn file_diff_headers() {
    assert_eq!(
        file_diff(None, Some("n.txt"), b"", b"x"),
        "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"
    );
    assert_eq!(
        file_diff(Some("a"), Some("b"), b"same\n", b"same\n"),
        "diff --git a/a b/b\nrename from a\nrename to b\n"
    );
    assert!(file_diff(Some("bin"), Some("bin"), b"\0a", b"\0b")
        .contains("Binary files a/bin and b/bin differ"));
    assert_eq!(file_diff(Some("x"), Some("x"), b"1\n", b"1\n"), "");
}

#[test]
fn convert_takes_the_heredoc_cd_into_the_paths() {
    let input = b"cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nEOF\n";
    let out = convert(input, &ParseOptions::default(), Format::Unified).expect("converts");
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.starts_with("diff --git a/sub/a.txt b/sub/a.txt\nnew file mode 100644\n")
            || text.contains("+++ b/sub/a.txt"),
        "{text}"
    );
    let err = convert(
        b"{\"edits\": [{\"op\": \"append\", \"path\": \"x\", \"content\": \"y\"}]}",
        &ParseOptions::default(),
        Format::Unified,
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::Usage);
    // `convert` makes the boundary error once: the typed refusal is its source.
    let source = std::error::Error::source(&err).expect("a source");
    assert_eq!(
        source.downcast_ref::<ConvertError>(),
        Some(&ConvertError::EditsToUnified)
    );
}

#[test]
fn huge_line_numbers_render_without_overflow() {
    let s = set(
        "--- a/x\n+++ b/x\n@@ -18446744073709551615,2 +18446744073709551615,2 @@\n k\n-a\n+b\n",
    );
    let text = String::from_utf8(to_unified(&s)).expect("utf-8");
    assert!(
        text.contains("@@ -18446744073709551615,2 +18446744073709551615,2 @@"),
        "{text}"
    );
    let mut s = s;
    if let Body::Hunks(h) = &mut s.files[0].body {
        h[0].new_start = None;
        h.push(Hunk {
            old_start: None,
            new_start: None,
            ..h[0].clone()
        });
    }
    let text = String::from_utf8(to_unified(&s)).expect("utf-8");
    assert!(text.contains("@@ -18446744073709551615,2 +"), "{text}");
}
