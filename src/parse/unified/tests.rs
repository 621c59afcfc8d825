//! Unit tests of the unified front end: -p defaults, prose, headers, quoted paths, counts,
//! recount, zero-context hunks, binary headers.

use super::*;
use crate::model::{Body, FileOp, LineKind, Mode};

fn opts() -> ParseOptions {
    ParseOptions::default()
}

fn parse_ok(text: &str, o: &ParseOptions) -> PatchSet<'static> {
    match parse(text.as_bytes(), 0, o) {
        Ok(s) => s.into_owned(),
        Err(e) => panic!("{e}\n{text}"),
    }
}

fn parse_err(text: &str, o: &ParseOptions) -> ParseError {
    parse(text.as_bytes(), 0, o).expect_err("must be refused")
}

#[test]
fn strip_defaults() {
    let git = "diff --git a/x/y b/x/y\n--- a/x/y\n+++ b/x/y\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(parse_ok(git, &opts()).files[0].path(), "x/y");
    let p2 = ParseOptions {
        strip: Some(2),
        ..opts()
    };
    assert_eq!(parse_ok(git, &p2).files[0].path(), "y");
    let p0 = ParseOptions {
        strip: Some(0),
        ..opts()
    };
    // -p0 keeps a/ and b/: the two sides then name different files.
    assert!(parse_err(git, &p0).message.contains("two different files"));
    let p3 = ParseOptions {
        strip: Some(3),
        ..opts()
    };
    assert!(parse_err(git, &p3).message.contains("cannot strip 3"));

    let plain = "--- x/y\t2024-01-01\n+++ x/y\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(parse_ok(plain, &opts()).files[0].path(), "x/y");
    let add = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n";
    let set = parse_ok(add, &opts());
    assert_eq!(
        (set.files[0].op, set.files[0].path()),
        (FileOp::Add, "new.txt")
    );
    let renamed = "--- foo.c.orig\n+++ foo.c\n@@ -1 +1 @@\n-a\n+b\n";
    let f = &parse_ok(renamed, &opts()).files[0];
    assert_eq!(
        (f.op, f.old_path.as_deref()),
        (FileOp::Modify, Some("foo.c"))
    );
}

#[test]
fn prose_before_the_first_header_is_skipped() {
    let mail = "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n\nbody text\n---\n x | 2 +-\n--- not a header\n 1 file changed\n\ndiff --git a/x b/x\nindex 1111111..2222222 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n\n";
    let set = parse_ok(mail, &opts());
    assert_eq!(set.files.len(), 1);
    let f = &set.files[0];
    assert_eq!(f.patch_line, 10);
    assert_eq!(f.old_mode, Some(Mode::FILE));
    assert_eq!(f.blob_ids.as_ref().map(|b| b.new.as_str()), Some("2222222"));
    assert_eq!(f.body.hunks()[0].patch_line, 14);
}

#[test]
fn start_offset_counts_lines_from_the_input() {
    let text = b"ignored\nalso\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    let set = parse(text, 13, &opts()).expect("parses");
    assert_eq!(set.files[0].patch_line, 3);
    // No file header at all: no patch, so the error quotes none of the input.
    let err = parse(b"x\ny\n@@ -1 +1 @@\n", 2, &opts()).expect_err("no header");
    assert!(!err.located && err.line_text.is_empty());
}

#[test]
fn git_extended_headers_set_op_and_modes() {
    let text = "diff --git a/old b/new\nsimilarity index 90%\nrename from old\nrename to new\n--- a/old\n+++ b/new\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/m b/m\nold mode 100644\nnew mode 100755\ndiff --git a/s b/s\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\ndiff --git a/d b/d\ndeleted file mode 100644\nindex 1234567..0000000\ndiff --git a/c b/c2\ncopy from c\ncopy to c2\ndiff --git a/e b/e\nold mode 100755\nnew mode 100644\n--- a/e\n+++ b/e\n@@ -1 +1 @@\n-a\n+b\n";
    let set = parse_ok(text, &opts());
    let ops: Vec<_> = set
        .files
        .iter()
        .map(|f| (f.op, f.old_path.as_deref(), f.new_path.as_deref()))
        .collect();
    assert_eq!(
        ops,
        vec![
            (FileOp::Rename, Some("old"), Some("new")),
            (FileOp::Mode, Some("m"), Some("m")),
            (FileOp::Add, None, Some("s")),
            (FileOp::Delete, Some("d"), None),
            (FileOp::Copy, Some("c"), Some("c2")),
            (FileOp::Modify, Some("e"), Some("e")),
        ]
    );
    assert_eq!(
        (set.files[1].old_mode, set.files[1].new_mode),
        (Some(Mode::FILE), Some(Mode::EXECUTABLE))
    );
    assert_eq!(set.files[2].new_mode, Some(Mode::SYMLINK));
    assert!(set.files[2].body.hunks()[0].new_no_newline);
    assert_eq!(set.files[3].old_mode, Some(Mode::FILE));
    assert_eq!(set.files[5].new_mode, Some(Mode::FILE));
}

#[test]
fn quoted_paths_decode_and_non_utf8_is_refused() {
    let text = "diff --git \"a/sp ace\\303\\251\" \"b/sp ace\\303\\251\"\nnew file mode 100644\nindex 0000000..e69de29\n";
    let set = parse_ok(text, &opts());
    assert_eq!(set.files[0].path(), "sp ace\u{e9}");
    assert_eq!(set.files[0].body, Body::Hunks(vec![]));
    let bad = "--- \"a/caf\\351\"\n+++ \"b/caf\\351\"\n@@ -1 +1 @@\n-a\n+b\n";
    let err = parse_err(bad, &opts());
    assert!(err.message.contains("not valid UTF-8"), "{}", err.message);
    assert_eq!(err.line, 1);
    let unquoted_spaces = "diff --git a/my file b/my file\nold mode 100644\nnew mode 100755\n";
    assert_eq!(
        parse_ok(unquoted_spaces, &opts()).files[0].path(),
        "my file"
    );
}

#[test]
fn zero_context_hunks_need_unidiff_zero() {
    let u0 = "--- a/x\n+++ b/x\n@@ -5,0 +6,2 @@\n+a\n+b\n@@ -9 +11 @@\n-c\n+d\n";
    let err = parse_err(u0, &opts());
    assert!(err.message.contains("no context lines"), "{}", err.message);
    assert_eq!(err.line, 3);
    let z = ParseOptions {
        unidiff_zero: true,
        ..opts()
    };
    let set = parse_ok(u0, &z);
    assert_eq!(set.files[0].body.hunks().len(), 2);
    assert!(!set.files[0].body.hunks()[0].end_of_file);
    let whole = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    let set = parse_ok(whole, &opts());
    assert!(
        set.files[0].body.hunks()[0].end_of_file,
        "a whole-file hunk is pinned to the end"
    );
}

#[test]
fn stray_lines_and_orphan_hunks_are_refused() {
    let extra = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n";
    assert!(parse_err(extra, &opts())
        .message
        .contains("more lines than its header"));
    let orphan = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ngarbage\n@@ -5 +5 @@\n-x\n+y\n";
    let err = parse_err(orphan, &opts());
    assert_eq!(err.line, 7);
    let r = ParseOptions {
        recount: true,
        ..opts()
    };
    let set = parse_ok(extra, &r);
    assert_eq!(set.files[0].body.hunks()[0].new_count, Some(2));
}

#[test]
fn add_and_delete_bodies_are_one_sided() {
    let bad =
        "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -1 +1,2 @@\n a\n+b\n";
    assert!(parse_err(bad, &opts()).message.contains("only insert"));
    let del = "diff --git a/n b/n\ndeleted file mode 100644\n--- a/n\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n";
    let f = &parse_ok(del, &opts()).files[0];
    assert_eq!(f.op, FileOp::Delete);
    assert!(f.body.hunks()[0]
        .lines
        .iter()
        .all(|l| l.kind == LineKind::Delete));
}

#[test]
fn binary_headers() {
    let text = "diff --git a/i.png b/i.png\nindex 1111111..2222222 100644\nBinary files a/i.png and b/i.png differ\nBinary files x.bin and y.bin differ\n";
    let set = parse_ok(text, &opts());
    assert_eq!(set.files.len(), 2);
    assert_eq!(set.files[0].body, Body::BinaryWithoutData);
    assert_eq!(set.files[1].path(), "y.bin");
}

#[test]
fn inconsistent_names_are_refused() {
    let text = "diff --git a/x b/y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
    assert!(parse_err(text, &opts())
        .message
        .contains("without a 'rename from'"));
}

#[test]
fn arbitrary_prefix_bytes_never_panic() {
    let samples: [&[u8]; 6] = [
        b"",
        b"\xff\xfe--- a\n+++ b\n@@",
        b"diff --git \"",
        b"--- a\n+++ b\n@@ -1",
        b"diff --git a/x b/x\nGIT binary patch\nliteral 1\n",
        b"diff --git a/x b/x\nGIT binary patch\ndelta 5\nzzzzz\n",
    ];
    for s in samples {
        let _ = parse(s, 0, &opts());
    }
}

#[test]
fn a_bom_before_the_first_line_is_skipped() {
    let text = b"\xEF\xBB\xBFdiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n";
    let set = parse(text, 0, &opts()).expect("parses");
    assert_eq!((set.files[0].path(), set.files[0].patch_line), ("x", 1));
}

#[test]
fn diff_dash_n_epoch_timestamps_mean_a_missing_side() {
    // `diff -ruN old new` (found by the harden GNU patch comparison): no /dev/null, the
    // missing side has the epoch as its timestamp.
    let add = "--- o/new\t1970-01-01 00:00:00.000000000 +0000\n+++ n/new\t2026-11-30 03:43:01.588674793 +0000\n@@ -0,0 +1 @@\n+x\n";
    let del = "--- o/gone\t2026-11-30 03:43:01.5 +0000\n+++ n/gone\t1969-12-31 19:00:00.000000000 -0500\n@@ -1 +0,0 @@\n-x\n";
    let p1 = ParseOptions {
        strip: Some(1),
        ..opts()
    };
    let set = parse_ok(&format!("{add}{del}"), &p1);
    assert_eq!(set.files[0].op, FileOp::Add);
    assert_eq!(set.files[0].new_path.as_deref(), Some("new"));
    assert_eq!(set.files[1].op, FileOp::Delete);
    assert_eq!(set.files[1].old_path.as_deref(), Some("gone"));
    // An epoch stamp on a side whose hunks have lines is just an old file.
    let old_file = "--- o/f\t1970-01-01 00:00:00 +0000\n+++ n/f\t2026-11-30 03:43:01 +0000\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(parse_ok(old_file, &p1).files[0].op, FileOp::Modify);
    assert!(!file::has_epoch_timestamp(
        b"--- f\t1970-01-01 00:00:01 +0000"
    ));
    assert!(file::has_epoch_timestamp(
        b"--- f\t1970-01-01 01:00:00 +0100"
    ));
}

#[test]
fn crs_of_created_and_deleted_files_are_content() {
    let texts = |set: &PatchSet<'_>| -> Vec<Vec<u8>> {
        set.files[0].body.hunks()[0]
            .lines
            .iter()
            .map(|l| l.text.to_vec())
            .collect()
    };
    let add = "--- /dev/null\r\n+++ b/n.txt\r\n@@ -0,0 +1,2 @@\r\n+a\r\n+b\n";
    assert_eq!(
        texts(&parse_ok(add, &opts())),
        [b"a\r".to_vec(), b"b".to_vec()]
    );
    let del = "--- a/n.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\r\n-b\r\n";
    assert_eq!(
        texts(&parse_ok(del, &opts())),
        [b"a\r".to_vec(), b"b\r".to_vec()]
    );
    // In a changed file the endings are the file's: the CRs go.
    let modify = "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n";
    assert_eq!(
        texts(&parse_ok(modify, &opts())),
        [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
}

#[test]
fn a_bare_git_header_is_no_patch_alone_or_beside_others() {
    let diff = "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
    for (text, line) in [
        ("diff --git a/x b/x\n".to_string(), 1),
        ("diff --git a/x b/x\nindex 1111111..2222222 100644\n".into(), 1),
        (format!("{diff}diff --git a/x b/x\n"), 7),
        (format!("diff --git a/x b/x\n{diff}"), 1),
    ] {
        let err = parse_err(&text, &opts());
        assert!(err.message.contains("changes nothing"), "{text}: {err}");
        assert_eq!(err.line, line, "{text}");
    }
    // A header that changes a mode, a name or existence is a patch without hunks.
    for text in [
        "diff --git a/m b/m\nold mode 100644\nnew mode 100755\n",
        "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n",
        "diff --git a/o b/n\nsimilarity index 100%\nrename from o\nrename to n\n",
    ] {
        parse_ok(text, &opts());
    }
}
