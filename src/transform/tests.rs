//! Unit tests of the transforms: reverse, select, prefix.

use super::*;
use crate::error::ErrorCode;
use crate::parse::{unified, ParseOptions};

fn set(text: &str) -> PatchSet<'static> {
    unified::parse(text.as_bytes(), 0, &ParseOptions::default())
        .expect("valid diff")
        .into_owned()
}

const TWO: &str = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n x\n-a\n+b\n\\ No newline at end of file\ndiff --git a/docs/new.md b/docs/new.md\nnew file mode 100755\n--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+hi\n";

#[test]
fn reverse_swaps_everything_and_is_an_involution() {
    let s = set(TWO);
    let r = reverse(s.clone()).expect("reversible");
    assert_eq!(r.files[0].op, FileOp::Delete);
    assert_eq!(r.files[0].old_mode, Some(crate::model::Mode::EXECUTABLE));
    assert_eq!(r.files[0].new_path, None);
    let h = &r.files[1].body.hunks()[0];
    assert_eq!(h.lines[1].kind, LineKind::Insert);
    assert!(h.old_no_newline && !h.new_no_newline);
    assert_eq!(reverse(r).expect("reversible"), s);
}

#[test]
fn reverse_refuses_other_formats_and_copies() {
    let mut s = set(TWO);
    s.format = crate::model::Format::Agent;
    s.rules = crate::model::Rules::AGENT;
    assert_eq!(
        reverse(s).map(|_| ()).unwrap_err(),
        ConvertError::ReverseNotUnified {
            format: crate::model::Format::Agent
        }
    );
    let copy = set("diff --git a/x b/y\ncopy from x\ncopy to y\n");
    let err = reverse(copy).unwrap_err();
    assert_eq!(
        err,
        ConvertError::Irreversible {
            path: "y".into(),
            what: Irreversible::Copy
        }
    );
    // The boundary error is built from it once, with it as its source.
    let e = crate::Error::from(err.clone());
    assert_eq!(e.code, ErrorCode::Usage);
    assert!(e.message.contains("a copy cannot be reversed"));
    let source = std::error::Error::source(&e).expect("a source");
    assert_eq!(source.downcast_ref::<ConvertError>(), Some(&err));
}

#[test]
fn select_by_new_or_old_path() {
    let s = set(TWO);
    let only = |inc: &[&str], exc: &[&str]| {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        select(s.clone(), &v(inc), &v(exc))
            .expect("valid globs")
            .files
            .iter()
            .map(|f| f.path().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(only(&["src/*"], &[]), vec!["src/a.rs"]);
    assert_eq!(only(&["*.md"], &[]), vec!["docs/new.md"]);
    assert_eq!(only(&[], &["*.md"]), vec!["src/a.rs"]);
    assert_eq!(only(&["*"], &["src/**"]), vec!["docs/new.md"]);
    let renamed = set("diff --git a/old/x b/new/x\nrename from old/x\nrename to new/x\n");
    let kept = select(renamed, &["old/*".to_string()], &[]).expect("valid");
    assert_eq!(kept.files.len(), 1, "the old path counts too");
    let err = select(s, &["a[".to_string()], &[]).unwrap_err();
    assert!(
        matches!(&err, ConvertError::BadGlob { flag: "--include", glob, .. } if glob == "a["),
        "{err:?}"
    );
    assert_eq!(crate::Error::from(err).code, ErrorCode::Usage);
}

#[test]
fn prefix_prepends_a_directory() {
    let p = prefix(set(TWO), "./sub/dir/");
    assert_eq!(p.files[0].old_path.as_deref(), Some("sub/dir/src/a.rs"));
    assert_eq!(p.files[1].old_path, None);
    assert_eq!(p.files[1].new_path.as_deref(), Some("sub/dir/docs/new.md"));
    assert_eq!(prefix(set(TWO), "."), set(TWO));
}
