//! Property tests: `parse(render(p)) == p` for generated unified patch sets,
//! `reverse(reverse(p)) == p`, and no input makes the unified parser panic.

use apply_patch::model::{
    BinaryData, BinaryKind, BinaryPatch, BlobIds, Body, FileOp, FilePatch, Format, Hunk, Line,
    LineKind, Mode, PatchSet,
};
use apply_patch::parse::{unified, ParseOptions};
use apply_patch::{render, transform};
use proptest::prelude::*;

use crate::parse_unified::without_lines;

fn path() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        4 => "[a-z]{1,4}",
        1 => "[a-z]{1,2} [a-z]{1,2}",
        1 => "[a-z]\u{e9}[a-z]",
        1 => "[a-z]\t[a-z]",
    ];
    proptest::collection::vec(segment, 1..4).prop_map(|v| v.join("/"))
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => "[a-z =(){};]{0,8}".prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..6)
            .prop_map(|v| v.into_iter().filter(|&b| b != b'\n').collect::<Vec<u8>>()),
        // A line whose own text ends in CR (a CR as content: the renderer must write it so
        // that it reads back, in created, deleted and changed files alike).
        1 => "[a-z]{0,4}\r{1,2}".prop_map(String::into_bytes),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::FILE),
        Just(Mode::EXECUTABLE),
        Just(Mode::SYMLINK)
    ]
}

fn blob_ids() -> impl Strategy<Value = BlobIds> {
    ("[0-9a-f]{7}", "[0-9a-f]{7}").prop_map(|(old, new)| BlobIds { old, new })
}

/// `\ No newline` flags that a diff can express for these lines.
fn flags(lines: &[Line<'static>], choice: u8) -> (bool, bool) {
    let last_old = lines.iter().rposition(|l| l.kind != LineKind::Insert);
    let last = lines.len().checked_sub(1);
    match (choice, lines.last().map(|l| l.kind)) {
        (1, Some(LineKind::Context)) => (true, true),
        (2, Some(LineKind::Insert)) => (false, true),
        (3, _) => match last_old {
            Some(i)
                if lines[i].kind == LineKind::Delete
                    && lines[i + 1..].iter().all(|l| l.kind == LineKind::Insert)
                    && last.is_some() =>
            {
                (true, false)
            }
            _ => (false, false),
        },
        _ => (false, false),
    }
}

/// A hunk of a modified file: at least one context line, counts from its lines.
fn modify_hunk() -> impl Strategy<Value = Hunk<'static>> {
    let line = (0u8..3, text()).prop_map(|(k, t)| {
        let kind = [LineKind::Context, LineKind::Delete, LineKind::Insert][usize::from(k)];
        Line::new(kind, t)
    });
    (
        proptest::collection::vec(line, 0..6),
        text(),
        0usize..3,
        1usize..50,
        1usize..50,
        0u8..4,
    )
        .prop_map(|(mut lines, ctx, at, old_start, new_start, choice)| {
            let at = at.min(lines.len());
            lines.insert(at, Line::new(LineKind::Context, ctx));
            let (old_no_newline, new_no_newline) = flags(&lines, choice);
            Hunk {
                old_start: Some(old_start),
                old_count: Some(lines.iter().filter(|l| l.kind != LineKind::Insert).count()),
                new_start: Some(new_start),
                new_count: Some(lines.iter().filter(|l| l.kind != LineKind::Delete).count()),
                lines,
                old_no_newline,
                new_no_newline,
                ..Hunk::default()
            }
        })
}

/// The one hunk of an added (`insert`) or deleted file.
fn whole_file_hunk(kind: LineKind) -> impl Strategy<Value = Hunk<'static>> {
    (proptest::collection::vec(text(), 1..5), any::<bool>()).prop_map(move |(texts, nl)| {
        let n = texts.len();
        let add = kind == LineKind::Insert;
        Hunk {
            old_start: Some(usize::from(!add)),
            old_count: Some(if add { 0 } else { n }),
            new_start: Some(usize::from(add)),
            new_count: Some(if add { n } else { 0 }),
            lines: texts.into_iter().map(|t| Line::new(kind, t)).collect(),
            old_no_newline: nl && !add,
            new_no_newline: nl && add,
            ..Hunk::default()
        }
    })
}

fn binary_body() -> impl Strategy<Value = Body<'static>> {
    let data = proptest::collection::vec(any::<u8>(), 0..60).prop_map(|data| BinaryData {
        kind: BinaryKind::Literal,
        size: data.len() as u64,
        data,
    });
    prop_oneof![
        (data.clone(), proptest::option::of(data))
            .prop_map(|(forward, reverse)| Body::Binary(BinaryPatch { forward, reverse })),
        Just(Body::BinaryWithoutData),
    ]
}

fn file_patch() -> impl Strategy<Value = FilePatch<'static>> {
    let hunks =
        |s: BoxedStrategy<Hunk<'static>>| proptest::collection::vec(s, 0..2).prop_map(Body::Hunks);
    let base = |op,
                old: Option<String>,
                new: Option<String>,
                modes: (Option<Mode>, Option<Mode>),
                ids,
                body| FilePatch {
        op,
        old_path: old,
        new_path: new,
        old_mode: modes.0,
        new_mode: modes.1,
        base: None,
        blob_ids: ids,
        body,
        patch_line: 0,
    };
    let add = (
        path(),
        mode(),
        proptest::option::of(blob_ids()),
        prop_oneof![
            hunks(whole_file_hunk(LineKind::Insert).boxed()),
            binary_body()
        ],
    )
        .prop_map(move |(p, m, ids, body)| {
            base(FileOp::Add, None, Some(p), (None, Some(m)), ids, body)
        });
    let delete = (
        path(),
        mode(),
        proptest::option::of(blob_ids()),
        hunks(whole_file_hunk(LineKind::Delete).boxed()),
    )
        .prop_map(move |(p, m, ids, body)| {
            base(FileOp::Delete, Some(p), None, (Some(m), None), ids, body)
        });
    let modes = prop_oneof![
        Just((None, None)),
        (mode(), mode())
            .prop_filter("a mode change", |(a, b)| a != b)
            .prop_map(|(a, b)| (Some(a), Some(b))),
    ];
    let changed = proptest::collection::vec(modify_hunk(), 1..4)
        .prop_map(|mut hs| {
            // Only the last hunk of a file may end without a newline.
            let n = hs.len();
            for h in &mut hs[..n - 1] {
                h.old_no_newline = false;
                h.new_no_newline = false;
            }
            Body::Hunks(hs)
        })
        .boxed();
    let modify = (
        path(),
        modes.clone(),
        proptest::option::of(blob_ids()),
        prop_oneof![4 => changed.clone(), 1 => binary_body()],
    )
        .prop_map(move |(p, m, ids, body)| {
            // Equal modes only show on an index line.
            let m = if ids.is_some() && m.0.is_none() {
                (Some(Mode::FILE), Some(Mode::FILE))
            } else {
                m
            };
            base(FileOp::Modify, Some(p.clone()), Some(p), m, ids, body)
        });
    let moved = (
        prop_oneof![Just(FileOp::Rename), Just(FileOp::Copy)],
        path(),
        path(),
        modes,
        prop_oneof![Just(Body::Hunks(vec![])), changed],
    )
        .prop_filter("two paths", |(_, a, b, _, _)| a != b)
        .prop_map(move |(op, a, b, m, body)| base(op, Some(a), Some(b), m, None, body));
    let mode_only = (path(), mode(), mode())
        .prop_filter("a mode change", |(_, a, b)| a != b)
        .prop_map(move |(p, a, b)| {
            base(
                FileOp::Mode,
                Some(p.clone()),
                Some(p),
                (Some(a), Some(b)),
                None,
                Body::Hunks(vec![]),
            )
        });
    prop_oneof![add, delete, modify, moved, mode_only]
}

fn patch_set() -> impl Strategy<Value = PatchSet<'static>> {
    proptest::collection::vec(file_patch(), 1..4).prop_map(|files| PatchSet {
        format: Format::Unified,
        rules: apply_patch::Rules::UNIFIED,
        cd: None,
        files,
    })
}

/// True when a path of the set is absolute.
fn absolute(set: &PatchSet<'_>) -> bool {
    set.files.iter().any(|f| {
        [f.old_path.as_deref(), f.new_path.as_deref()]
            .into_iter()
            .flatten()
            .any(|p| p.starts_with('/'))
    })
}

fn no_copies(set: &PatchSet<'_>) -> bool {
    set.files.iter().all(|f| f.op != FileOp::Copy)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn unified_render_then_parse_is_identity(set in patch_set()) {
        let text = render::to_unified(&set);
        let back = unified::parse(&text, 0, &ParseOptions::default());
        prop_assert!(back.is_ok(), "{:?}\n{}", back, String::from_utf8_lossy(&text));
        let back = without_lines(back.expect("checked").into_owned());
        prop_assert_eq!(back, set, "{}", String::from_utf8_lossy(&text));
    }

    #[test]
    fn reverse_is_an_involution(set in patch_set().prop_filter("copies cannot be reversed", no_copies)) {
        let reversible = set.files.iter().all(|f| !matches!(&f.body, Body::Binary(b) if b.reverse.is_none()));
        match transform::reverse(set.clone()) {
            Ok(rev) => {
                prop_assert!(reversible);
                // The reversed patch is itself a diff that reads back the same.
                let text = render::to_unified(&rev);
                let back = unified::parse(&text, 0, &ParseOptions::default());
                prop_assert!(back.is_ok(), "{:?}\n{}", back, String::from_utf8_lossy(&text));
                prop_assert_eq!(without_lines(back.expect("checked").into_owned()), rev.clone());
                prop_assert_eq!(transform::reverse(rev).expect("reversible twice"), set);
            }
            Err(e) => prop_assert!(!reversible, "{}", e),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..600), start in 0usize..700, recount: bool, zero: bool, strip in proptest::option::of(0usize..3)) {
        let opts = ParseOptions::default().with_strip(strip).with_recount(recount).with_unidiff_zero(zero);
        let _ = unified::parse(&input, start.min(input.len()), &opts);
    }

    #[test]
    fn diff_shaped_noise_never_panics(lines in proptest::collection::vec(prop_oneof![
        Just("diff --git a/x b/x".to_string()), Just("--- a/x".to_string()), Just("+++ b/x".to_string()),
        Just("@@ -1,2 +1,2 @@".to_string()), Just("@@ -0,0 +1 @@".to_string()), Just(" ctx".to_string()),
        Just("-old".to_string()), Just("+new".to_string()), Just("\\ No newline at end of file".to_string()),
        Just(String::new()), Just("GIT binary patch".to_string()), Just("literal 3".to_string()),
        Just("delta 2".to_string()), Just("HcmV?d00001".to_string()), Just("new file mode 100644".to_string()),
        Just("rename from \"q\\".to_string()), Just("Binary files a and b differ".to_string()), Just("-- ".to_string()),
        Just("old mode 100644".to_string()), Just("new mode 100755".to_string()), Just("index 1234567..89abcde 100644".to_string()),
        Just("--- /dev/null".to_string()), Just("+++ /dev/null".to_string()), Just("deleted file mode 100644".to_string()),
        Just("rename from x".to_string()), Just("rename to y".to_string()), Just("copy from z".to_string()), Just("@@ -1 +1 @@".to_string()),
        "[ -~]{0,12}",
    ], 0..40), recount: bool, zero: bool) {
        let input = lines.join("\n");
        let opts = ParseOptions::default().with_recount(recount).with_unidiff_zero(zero);
        // Whatever is accepted renders back to a diff that reads the same.
        if let Ok(set) = unified::parse(input.as_bytes(), 0, &opts) {
            let set = without_lines(set.into_owned());
            let text = render::to_unified(&set);
            let back = unified::parse(&text, 0, &opts);
            prop_assert!(back.is_ok(), "{:?}\n{}\n---\n{}", back, input, String::from_utf8_lossy(&text));
            prop_assert_eq!(without_lines(back.expect("checked").into_owned()), set, "{}", input);
        }
    }
}

/// A hunk as the agent language writes it: anchors, an optional line-number hint, lines.
fn agent_hunk() -> impl Strategy<Value = Hunk<'static>> {
    let line = (0u8..3, "[a-z(){};= ]{0,8}").prop_map(|(k, t)| {
        let kind = [LineKind::Context, LineKind::Delete, LineKind::Insert][usize::from(k)];
        Line::new(kind, t.into_bytes())
    });
    let anchor = "[a-z][a-z (){}]{0,6}[a-z)]".prop_map(|a| a.into_bytes().into());
    let hint = proptest::option::of((
        1usize..500,
        proptest::option::of(0usize..9),
        proptest::option::of((1usize..500, proptest::option::of(0usize..9))),
    ));
    (
        proptest::collection::vec(anchor, 0..3),
        hint,
        proptest::collection::vec(line, 1..6),
        any::<bool>(),
    )
        .prop_map(|(anchors, hint, lines, end_of_file)| Hunk {
            old_start: hint.map(|h| h.0),
            old_count: hint.and_then(|h| h.1),
            new_start: hint.and_then(|h| h.2.map(|n| n.0)),
            new_count: hint.and_then(|h| h.2.and_then(|n| n.1)),
            anchors,
            end_of_file,
            lines,
            ..Hunk::default()
        })
}

fn agent_file() -> impl Strategy<Value = FilePatch<'static>> {
    let agent_path = proptest::collection::vec("[a-z]{1,4}", 1..3).prop_map(|v| v.join("/"));
    let base = proptest::option::of("[0-9a-f]{8,16}");
    let file =
        |op, old: Option<String>, new: Option<String>, base: Option<String>, hunks| FilePatch {
            op,
            old_path: old,
            new_path: new,
            old_mode: None,
            new_mode: None,
            base,
            blob_ids: None,
            body: Body::Hunks(hunks),
            patch_line: 0,
        };
    let add_lines = proptest::collection::vec("[a-z ]{0,6}", 0..4).prop_map(|texts| {
        if texts.is_empty() {
            return vec![];
        }
        vec![Hunk {
            lines: texts
                .into_iter()
                .map(|t| Line::new(LineKind::Insert, t.into_bytes()))
                .collect(),
            ..Hunk::default()
        }]
    });
    prop_oneof![
        (agent_path.clone(), add_lines).prop_map(move |(p, h)| file(
            FileOp::Add,
            None,
            Some(p),
            None,
            h
        )),
        (agent_path.clone(), base.clone()).prop_map(move |(p, b)| file(
            FileOp::Delete,
            Some(p),
            None,
            b,
            vec![]
        )),
        (
            agent_path.clone(),
            base.clone(),
            proptest::collection::vec(agent_hunk(), 1..3)
        )
            .prop_map(move |(p, b, h)| file(
                FileOp::Modify,
                Some(p.clone()),
                Some(p),
                b,
                h
            )),
        (
            agent_path.clone(),
            agent_path,
            base,
            proptest::collection::vec(agent_hunk(), 0..3)
        )
            .prop_filter("two paths", |(a, b, _, _)| a != b)
            .prop_map(move |(a, b, base, h)| file(
                FileOp::Rename,
                Some(a),
                Some(b),
                base,
                h
            )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn agent_render_then_parse_is_identity(files in proptest::collection::vec(agent_file(), 1..4)) {
        let set = PatchSet { format: Format::Agent, rules: apply_patch::Rules::AGENT, cd: None, files };
        let text = render::to_agent(&set).expect("agent-shaped patch sets are expressible");
        let back = apply_patch::parse::parse(text.as_bytes(), &ParseOptions::default());
        prop_assert!(back.is_ok(), "{:?}\n{}", back, text);
        prop_assert_eq!(without_lines(back.expect("checked").into_owned()), set, "{}", text);
    }
}

/// Every regular file under `dir`, by `/`-separated relative path.
fn load_tree(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable tree").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let rel = path.strip_prefix(dir).expect("below the root");
                out.insert(rel.to_string_lossy().replace('\\', "/"), bytes);
            }
        }
    }
    out
}

fn apply_in_memory(
    start: &std::collections::BTreeMap<String, Vec<u8>>,
    patch: &[u8],
    opts: &apply_patch::pipeline::Options,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut tree = apply_patch::tree::MemTree::new();
    for (p, b) in start {
        tree.insert(p, b.clone());
    }
    let report = apply_patch::report::Report::from(&apply_patch::pipeline::apply_bytes(
        apply_patch::pipeline::Target::Memory(&mut tree),
        patch,
        opts,
        apply_patch::pipeline::Mode::Write,
    ));
    assert!(report.ok, "{:?}", report.error);
    tree.entries()
        .filter_map(|(p, e)| match e {
            apply_patch::tree::MemEntry::File { bytes, .. } => Some((p.to_string(), bytes.clone())),
            apply_patch::tree::MemEntry::Symlink { .. } => None,
        })
        .collect()
}

/// The real diffs of the benchmark corpus (env APPLY_PATCH_REAL_BENCH) turn `before` into
/// `after`, reversed turn `after` into `before`, and say the same in the agent language.
#[test]
fn real_diffs_apply_forward_reversed_and_as_agent() {
    let Some(dir) = std::env::var_os("APPLY_PATCH_REAL_BENCH") else {
        eprintln!("skipping: APPLY_PATCH_REAL_BENCH is not set");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let case = dir.join("fd-v8.7.1--v9.0.0");
    let Ok(diff) = std::fs::read(dir.join("fd-v8.7.1--v9.0.0.diff")) else {
        eprintln!("skipping: no fd diff in {}", dir.display());
        return;
    };
    let (before, after) = (
        load_tree(&case.join("before")),
        load_tree(&case.join("after")),
    );
    let opts = apply_patch::pipeline::Options::default();
    assert!(apply_in_memory(&before, &diff, &opts) == after, "forward");
    let reverse = apply_patch::pipeline::Options::builder()
        .reverse(true)
        .build();
    assert!(
        apply_in_memory(&after, &diff, &reverse) == before,
        "reversed"
    );
    let agent =
        render::convert(&diff, &ParseOptions::default(), Format::Agent).expect("expressible");
    assert!(apply_in_memory(&before, &agent, &opts) == after, "as agent");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `apply(diff(a, b), a) == b` through the whole pipeline, final newlines included, for
    /// LF and CRLF files. Diffs carry no line endings: inserted lines take the file's (the
    /// replaced line's, else the line above's, else the line below's), so a CRLF file stays
    /// CRLF whenever it has a line with an ending to take it from.
    #[test]
    fn file_diff_applies_through_the_pipeline(
        old in proptest::collection::vec("[abc]{0,3}", 0..14),
        new in proptest::collection::vec("[abc]{0,3}", 0..14),
        old_nl: bool,
        new_nl: bool,
        crlf: bool,
    ) {
        let has_ending = old.len() >= 2 || (old.len() == 1 && old_nl);
        let eol = if crlf && has_ending { "\r\n" } else { "\n" };
        let join = |v: &Vec<String>, nl: bool| {
            let mut s = v.join(eol);
            if nl && !v.is_empty() {
                s.push_str(eol);
            }
            s.into_bytes()
        };
        let (a, b) = (join(&old, old_nl), join(&new, new_nl));
        prop_assume!(a != b);
        let diff = render::file_diff(Some("f.txt"), Some("f.txt"), &a, &b);
        let start = std::collections::BTreeMap::from([("f.txt".to_string(), a.clone())]);
        let mut tree = apply_patch::tree::MemTree::new();
        tree.insert("f.txt", a.clone());
        let report = apply_patch::report::Report::from(&apply_patch::pipeline::apply_bytes(apply_patch::pipeline::Target::Memory(&mut tree), diff.as_bytes(), &apply_patch::pipeline::Options::default(), apply_patch::pipeline::Mode::Write));
        prop_assert!(report.ok, "{:?}\n{}", report.error, diff);
        prop_assert_eq!(tree.get("f.txt"), Some(&b[..]), "{}\n{:?}", diff, start);
    }
}

/// The unified fixtures, as seeds for mutation.
fn unified_fixtures() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parse/unified");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("fixtures")
        .flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Mutated fixtures never make the parser panic, and whatever it still accepts renders
    /// back to a diff that reads the same.
    #[test]
    fn mutated_fixtures_never_panic_and_round_trip(
        seed in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..3, any::<u8>()), 1..6),
        recount: bool,
    ) {
        let fixtures = unified_fixtures();
        let mut input = seed.get(&fixtures).clone();
        for (at, kind, byte) in edits {
            let pos = at.index(input.len() + 1);
            match kind {
                0 => input.insert(pos, byte),
                1 if pos < input.len() => { input.remove(pos); }
                _ if pos < input.len() => input[pos] = byte,
                _ => input.push(byte),
            }
        }
        let opts = ParseOptions::default().with_recount(recount);
        // Absolute paths (`-p0` of `/x`) have no git form: `convert` refuses them.
        if let Some(set) = unified::parse(&input, 0, &opts).map(|s| without_lines(s.into_owned())).ok().filter(|s| !absolute(s)) {
            let text = render::to_unified(&set);
            let back = unified::parse(&text, 0, &opts.with_strip(None));
            prop_assert!(back.is_ok(), "{:?}\n{}", back, String::from_utf8_lossy(&text));
            prop_assert_eq!(without_lines(back.expect("checked").into_owned()), set);
        }
    }
}

/// Every single-byte deletion of every fixture, with and without `--recount`: whatever still
/// parses renders back to a diff that reads the same (an exhaustive neighbour of the mutation
/// property above, which once found such a case only rarely).
#[test]
fn every_single_byte_deletion_round_trips() {
    for fixture in unified_fixtures() {
        for pos in 0..fixture.len() {
            let mut input = fixture.clone();
            input.remove(pos);
            for recount in [false, true] {
                let opts = ParseOptions::default().with_recount(recount);
                let Some(set) = unified::parse(&input, 0, &opts)
                    .map(|s| without_lines(s.into_owned()))
                    .ok()
                    .filter(|s| !absolute(s))
                else {
                    continue;
                };
                let text = render::to_unified(&set);
                let back = unified::parse(&text, 0, &opts.with_strip(None))
                    .map(|s| without_lines(s.into_owned()));
                assert_eq!(
                    back.as_ref().ok(),
                    Some(&set),
                    "input:\n{}\nrendered:\n{}",
                    String::from_utf8_lossy(&input),
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }
}

/// A line inserted at the top of a CRLF file, above a context line of the same hunk, takes
/// that line's CRLF (the line below), not LF.
#[test]
fn an_insert_above_a_context_line_takes_its_crlf() {
    let mut tree = apply_patch::tree::MemTree::new();
    tree.insert("f", b"\r\n".to_vec());
    let diff = b"--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n+a\n \n";
    let report = apply_patch::report::Report::from(&apply_patch::pipeline::apply_bytes(
        apply_patch::pipeline::Target::Memory(&mut tree),
        diff,
        &apply_patch::pipeline::Options::default(),
        apply_patch::pipeline::Mode::Write,
    ));
    assert!(report.ok, "{:?}", report.error);
    assert_eq!(tree.get("f"), Some(&b"a\r\n\r\n"[..]));
}

/// Found by `diff_shaped_noise_never_panics`: with `--recount`, two `-- ` lines (deletions of
/// "- ", or an e-mail signature) after a hunk header.
#[test]
fn recount_with_signature_like_deletions_round_trips() {
    let input = "diff --git a/x b/x\n@@ -1,2 +1,2 @@\n-- \n-- \n";
    let opts = ParseOptions::default().with_recount(true);
    if let Ok(set) = unified::parse(input.as_bytes(), 0, &opts) {
        let set = without_lines(set.into_owned());
        let text = render::to_unified(&set);
        let back = unified::parse(&text, 0, &opts);
        assert!(
            back.is_ok(),
            "{back:?}\n---\n{}",
            String::from_utf8_lossy(&text)
        );
        assert_eq!(without_lines(back.expect("checked").into_owned()), set);
    }
}
