//! Unit tests of the SEARCH/REPLACE front end: every dialect, every refusal, escapes, line
//! hints, CRLF, paths and the tool-call forms. (Rendered refusals are snapshot-tested from
//! the fixtures of tests/fixtures/parse/blocks/.)

use std::borrow::Cow;

use super::*;

fn ok<'a>(input: &'a str, path: Option<&str>) -> Blocks<'a> {
    match parse(input.as_bytes(), path) {
        Ok(blocks) => blocks,
        Err(e) => panic!("{}", e.render()),
    }
}

fn err(input: &str, path: Option<&str>) -> ParseError {
    match parse(input.as_bytes(), path) {
        Ok(blocks) => panic!("parsed: {blocks:?}"),
        Err(e) => e,
    }
}

fn texts(lines: &[Cow<'_, [u8]>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// (path, search, replace) of every block.
fn triples(blocks: &Blocks<'_>) -> Vec<(String, Vec<String>, Vec<String>)> {
    blocks
        .blocks
        .iter()
        .map(|b| (b.path.clone(), texts(&b.search), texts(&b.replace)))
        .collect()
}

fn triple(path: &str, search: &[&str], replace: &[&str]) -> (String, Vec<String>, Vec<String>) {
    let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    (path.to_string(), own(search), own(replace))
}

#[test]
fn aider_reply_with_prose_fences_and_two_files() {
    let reply = "Here are the changes.\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n\nAnd the other file:\n\n```\nsrc/b.py\n<<<<<<< SEARCH\n=======\ncreated\n>>>>>>> REPLACE\n```\nDone.\n";
    let blocks = ok(reply, None);
    assert_eq!(blocks.form, Form::Text);
    assert_eq!(
        triples(&blocks),
        vec![
            triple("src/a.py", &["old"], &["new"]),
            triple("src/b.py", &[], &["created"]),
        ]
    );
    assert_eq!(blocks.blocks[0].path_from, PathFrom::Line(3));
    assert_eq!(blocks.blocks[0].patch_line, 5);
    assert_eq!(blocks.blocks[1].path_from, PathFrom::Line(15));
    assert!(blocks.blocks[1].is_empty_search());
}

#[test]
fn aider_path_above_several_fence_lines() {
    // A model that closes and reopens the fence between the path and the block.
    let reply = " ```python\nfoo.txt\n```\n```python\n<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE\n```\n";
    let blocks = ok(reply, None);
    assert_eq!(
        triples(&blocks),
        vec![triple("foo.txt", &["one"], &["two"])]
    );
    assert_eq!(blocks.blocks[0].path_from, PathFrom::Line(2));
}

#[test]
fn a_block_without_its_own_path_line_takes_the_previous_one() {
    let reply = "a.txt\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\n3\n=======\n4\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n5\n=======\n6\n>>>>>>> REPLACE\nb.txt\n<<<<<<< SEARCH\n7\n=======\n8\n>>>>>>> REPLACE\n";
    let blocks = ok(reply, None);
    let paths: Vec<(&str, PathFrom)> = blocks
        .blocks
        .iter()
        .map(|b| (b.path.as_str(), b.path_from))
        .collect();
    assert_eq!(
        paths,
        vec![
            ("a.txt", PathFrom::Line(1)),
            ("a.txt", PathFrom::Previous(1)),
            ("a.txt", PathFrom::Previous(2)),
            ("b.txt", PathFrom::Line(18)),
        ]
    );
}

#[test]
fn a_prose_line_before_the_opener_is_taken_as_the_path_exactly() {
    // Never guessed: the line names a file, which the planner will not find (file_not_found)
    // rather than this block landing in the previous block's file.
    let reply = "a.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nNow the tests:\n<<<<<<< SEARCH\np\n=======\nq\n>>>>>>> REPLACE\n";
    let blocks = ok(reply, None);
    assert_eq!(blocks.blocks[1].path, "Now the tests");
}

#[test]
fn no_path_at_all_is_refused_at_the_opener() {
    let e = err(
        "Here:\n\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n",
        None,
    );
    assert_eq!((e.line, e.column), (4, 1));
    assert!(e.message.contains("names no file"), "{}", e.message);
    assert!(e.hint.as_deref().is_some_and(|h| h.contains("--path")));
}

#[test]
fn the_given_path_applies_to_every_block_and_lines_outside_are_prose() {
    let text = "test.ts\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\nother.txt\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n";
    let blocks = ok(text, Some("./src/FILE.txt"));
    for b in &blocks.blocks {
        assert_eq!(
            (b.path.as_str(), b.path_from),
            ("src/FILE.txt", PathFrom::Given)
        );
    }
    // Without a path line and with a path given, a lone block is fine.
    assert_eq!(
        ok("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE", Some("f"))
            .blocks
            .len(),
        1
    );
    let e = err(
        "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
        Some("dir/"),
    );
    assert_eq!(e.line, 1);
    assert!(e.message.contains("folder"), "{}", e.message);
}

#[test]
fn cline_blocks_old_and_new_markers_mix() {
    let text = "------- SEARCH\nfirst\n=======\n1st\n+++++++ REPLACE\n----- SEARCH\nsecond\n=====\n2nd\n+++ REPLACE>\n<<<<<<< SEARCH>\nthird\n==========\n3rd\n>>>>> REPLACE\n";
    let blocks = ok(text, Some("f"));
    assert_eq!(
        triples(&blocks),
        vec![
            triple("f", &["first"], &["1st"]),
            triple("f", &["second"], &["2nd"]),
            triple("f", &["third"], &["3rd"]),
        ]
    );
}

#[test]
fn markers_are_recognised_on_the_trimmed_line() {
    let text = "  <<<<<<< SEARCH  \n    body\n\t=======\t\n  new\n >>>>>>> REPLACE \n";
    assert_eq!(
        triples(&ok(text, Some("f"))),
        vec![triple("f", &["    body"], &["  new"])]
    );
}

#[test]
fn roo_header_gives_the_line_hint_and_is_not_text() {
    let text = "<<<<<<< SEARCH\n:start_line:12\n:end_line:14\n-------\nfn a() {\n=======\nfn b() {\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n:start_line: 3 \n-------\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n-------\nz\n=======\n>>>>>>> REPLACE\n";
    let blocks = ok(text, Some("f"));
    let b = &blocks.blocks;
    assert_eq!(texts(&b[0].search), ["fn a() {"]);
    assert_eq!(
        b[0].hint,
        Some(LineHint {
            line: 12,
            source: HintSource::StartLine
        })
    );
    assert_eq!(b[0].end_line, Some(14));
    assert_eq!(b[1].hint.map(|h| h.line), Some(3));
    assert_eq!(
        (b[2].hint, texts(&b[2].search)),
        (None, vec!["z".to_string()])
    );
    assert!(b[2].replace.is_empty());
}

#[test]
fn the_divider_is_exactly_seven_dashes_so_yaml_front_matter_stays_text() {
    let text = "<<<<<<< SEARCH\n---\ntitle: x\n---\n=======\n---\ntitle: y\n---\n>>>>>>> REPLACE\n";
    let blocks = ok(text, Some("f"));
    assert_eq!(texts(&blocks.blocks[0].search), ["---", "title: x", "---"]);
}

#[test]
fn malformed_roo_headers_are_refused() {
    for (header, needle) in [
        (":start_line:0", "start at 1"),
        (":start_line:x", "expected a line number"),
        (":start_line:", "expected a line number"),
        (":end_line:99999999999999999999999", "too large"),
    ] {
        let e = err(
            &format!("<<<<<<< SEARCH\n{header}\na\n=======\nb\n>>>>>>> REPLACE\n"),
            Some("f"),
        );
        assert_eq!(e.line, 2, "{header}");
        assert!(e.message.contains(needle), "{header}: {}", e.message);
    }
}

#[test]
fn header_lines_away_from_the_opener_are_refused_unless_escaped() {
    let e = err(
        "<<<<<<< SEARCH\na\n=======\n  :start_line:5  \nb\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!((e.line, e.column), (4, 3));
    assert!(e.message.contains("`:start_line:` inside"), "{}", e.message);
    let e = err(
        "<<<<<<< SEARCH\n-------\n:end_line:3\na\n=======\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!(e.line, 3);
    let text = "<<<<<<< SEARCH\na\n=======\n\\:start_line:5\n\\:end_line:10\n>>>>>>> REPLACE\n";
    assert_eq!(
        texts(&ok(text, Some("f")).blocks[0].replace),
        [":start_line:5", ":end_line:10"]
    );
}

#[test]
fn escaped_markers_are_text_without_their_backslash() {
    let text = "<<<<<<< SEARCH\nbefore\n\\<<<<<<< SEARCH\n\\=======\n\\>>>>>>> REPLACE\n\\<<<<<<< HEAD\n  \\-------\n\\\\=======\n\\n stays\nafter\n=======\n\\+++++++ REPLACE\n>>>>>>> REPLACE\n";
    let blocks = ok(text, Some("f"));
    assert_eq!(
        texts(&blocks.blocks[0].search),
        [
            "before",
            "<<<<<<< SEARCH",
            "=======",
            ">>>>>>> REPLACE",
            "<<<<<<< HEAD",
            "  -------",
            "\\=======",
            "\\n stays",
            "after"
        ]
    );
    assert_eq!(texts(&blocks.blocks[0].replace), ["+++++++ REPLACE"]);
}

#[test]
fn git_conflict_markers_other_than_the_separator_are_text() {
    let text = "<<<<<<< SEARCH\n<<<<<<< HEAD\nours\n\\=======\ntheirs\n>>>>>>> feature\n=======\nmerged\n>>>>>>> REPLACE\n";
    let blocks = ok(text, Some("f"));
    assert_eq!(
        texts(&blocks.blocks[0].search),
        [
            "<<<<<<< HEAD",
            "ours",
            "=======",
            "theirs",
            ">>>>>>> feature"
        ]
    );
}

#[test]
fn a_second_separator_is_refused_pointing_at_the_escape() {
    let e = err(
        "x\n<<<<<<< SEARCH\na\n=======\nb\n=======\nc\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!((e.line, e.column), (6, 1));
    assert!(e.message.contains("a second `=======`"), "{}", e.message);
    assert!(
        e.message.contains("line 2") && e.message.contains("line 4"),
        "{}",
        e.message
    );
    assert!(e.hint.as_deref().is_some_and(|h| h.contains("`\\=======`")));
}

#[test]
fn a_closer_before_the_separator_is_refused() {
    let e = err(
        "------- SEARCH\nline2\n+++++++ REPLACE\nreplaced",
        Some("f"),
    );
    assert_eq!(e.line, 3);
    assert!(
        e.message.contains("before the `=======` line"),
        "{}",
        e.message
    );
    // Cline's `------- =======` is no separator, so its closer comes first too.
    let e = err(
        "------- SEARCH\nline2\n------- =======\nreplaced\n+++++++ REPLACE",
        Some("f"),
    );
    assert_eq!(e.line, 5);
}

#[test]
fn an_opener_inside_a_block_is_refused() {
    let e = err(
        "<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!(e.line, 5);
    assert!(
        e.message.contains("inside the block that starts on line 1"),
        "{}",
        e.message
    );
}

#[test]
fn a_block_cut_off_is_refused_at_its_last_line() {
    for (text, line, missing) in [
        ("<<<<<<< SEARCH\na\n=======\nb", 4, "without its closer"),
        (
            "p\n<<<<<<< SEARCH\na\n=======\nreplaced\n\n\n",
            5,
            "without its closer",
        ),
        ("<<<<<<< SEARCH\na\nb\n", 3, "without its `=======` line"),
        ("<<<<<<< SEARCH", 1, "without its `=======` line"),
        (
            "<<<<<<< SEARCH\n:start_line:4\n",
            2,
            "without its `=======` line",
        ),
    ] {
        let e = err(text, Some("f"));
        assert_eq!(e.line, line, "{text:?}");
        assert!(e.message.contains("cut off"), "{}", e.message);
        assert!(e.message.contains(missing), "{}", e.message);
    }
}

#[test]
fn a_closer_outside_any_block_is_refused() {
    for text in [
        "<<-- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE",
        "-------SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE",
        "=======\ncontent\n>>>>>>> REPLACE",
    ] {
        let e = err(text, Some("f"));
        assert!(
            e.message.contains("outside any block"),
            "{text:?}: {}",
            e.message
        );
    }
    // After a good block too: a malformed second opener must not make its block vanish.
    let e = err("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n<<<<<<<SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n", Some("f"));
    assert_eq!(e.line, 10);
}

#[test]
fn input_without_blocks_is_refused() {
    let e = err("test.ts\nInvalid diff format", Some("f"));
    assert!(
        e.message.starts_with("no SEARCH/REPLACE block found"),
        "{}",
        e.message
    );
    let e = err("\n  \n", None);
    assert!(e.message.contains("empty"), "{}", e.message);
    let e = err("", None);
    assert_eq!((e.line, e.column), (1, 1));
}

#[test]
fn line_number_prefixes_on_every_line_are_stripped_and_give_the_hint() {
    let text = "<<<<<<< SEARCH\n 9 | function p() {\n10 |     return 1;\n11 |\n=======\n 9 | function p() {\n10 |     return 2;\n11 |\n>>>>>>> REPLACE\n";
    let b = &ok(text, Some("f")).blocks[0];
    assert_eq!(texts(&b.search), ["function p() {", "    return 1;", ""]);
    assert_eq!(texts(&b.replace), ["function p() {", "    return 2;", ""]);
    assert_eq!(
        b.hint,
        Some(LineHint {
            line: 9,
            source: HintSource::LinePrefixes
        })
    );
}

#[test]
fn numbered_search_with_plain_or_empty_replace() {
    // REPLACE without numbers: SEARCH's are stripped but give no hint (SPEC §4b).
    let b = &ok(
        "<<<<<<< SEARCH\n1 | a\n2 | b\n=======\nc\n>>>>>>> REPLACE\n",
        Some("f"),
    )
    .blocks[0];
    assert_eq!(
        (texts(&b.search), texts(&b.replace)),
        (vec!["a".into(), "b".into()], vec!["c".into()])
    );
    assert_eq!(b.hint, None);
    // REPLACE empty: the hint holds.
    let b = &ok(
        "<<<<<<< SEARCH\n2 | gone\n=======\n>>>>>>> REPLACE\n",
        Some("f"),
    )
    .blocks[0];
    assert_eq!(
        b.hint.map(|h| (h.line, h.source)),
        Some((2, HintSource::LinePrefixes))
    );
    // `:start_line:` wins over the prefixes.
    let b = &ok(
        "<<<<<<< SEARCH\n:start_line:7\n-------\n2 | x\n=======\n>>>>>>> REPLACE\n",
        Some("f"),
    )
    .blocks[0];
    assert_eq!(
        b.hint.map(|h| (h.line, h.source)),
        Some((7, HintSource::StartLine))
    );
}

#[test]
fn numbered_replace_under_plain_search_is_text() {
    let text = "<<<<<<< SEARCH\n| Pipe\n|---|\n=======\n1 | | Pipe\n2 | |---|\n>>>>>>> REPLACE\n";
    let b = &ok(text, Some("f")).blocks[0];
    assert_eq!(texts(&b.search), ["| Pipe", "|---|"]);
    assert_eq!(texts(&b.replace), ["1 | | Pipe", "2 | |---|"]);
    assert_eq!(b.hint, None);
}

#[test]
fn line_numbers_on_some_lines_only_are_refused() {
    let e = err(
        "<<<<<<< SEARCH\n1 | a\n    b\n3 | c\n=======\nx\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!(e.line, 3);
    assert!(
        e.message.contains("some SEARCH lines only"),
        "{}",
        e.message
    );
    let e = err(
        "<<<<<<< SEARCH\na\n2 | b\n=======\nx\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!(e.line, 3);
    let e = err(
        "<<<<<<< SEARCH\n1 | a\n=======\n1 | x\ny\n>>>>>>> REPLACE\n",
        Some("f"),
    );
    assert_eq!(e.line, 5);
    assert!(
        e.message.contains("some REPLACE lines only"),
        "{}",
        e.message
    );
}

#[test]
fn crlf_input_loses_its_crs_and_keeps_positions() {
    let text = "a.txt\r\n<<<<<<< SEARCH\r\n:start_line:2\r\n-------\r\n1 | x\r\n=======\r\n\\=======\r\n>>>>>>> REPLACE\r\n";
    let blocks = ok(text, None);
    let b = &blocks.blocks[0];
    assert_eq!((b.path.as_str(), b.patch_line), ("a.txt", 2));
    assert_eq!(texts(&b.search), ["x"]);
    assert_eq!(texts(&b.replace), ["======="]);
    assert_eq!(b.hint.map(|h| h.line), Some(2));
    let e = err(
        "<<<<<<< SEARCH\r\na\r\n=======\r\nb\r\n=======\r\n",
        Some("f"),
    );
    assert_eq!((e.line, e.line_text.as_str()), (5, "======="));
}

#[test]
fn lines_borrow_from_the_input_unless_an_escape_changed_them() {
    let text = "<<<<<<< SEARCH\nx\n  \\=======\n=======\n\\=======\n>>>>>>> REPLACE\n";
    let b = &ok(text, Some("f")).blocks[0];
    assert!(matches!(b.search[0], Cow::Borrowed(_)));
    assert!(matches!(b.search[1], Cow::Owned(_)));
    assert!(matches!(b.replace[0], Cow::Borrowed(_)));
    let owned = ok(text, Some("f")).into_owned();
    assert_eq!(texts(&owned.blocks[0].search), ["x", "  ======="]);
}

#[test]
fn a_bom_is_skipped_and_text_need_not_be_utf8() {
    let mut input =
        b"\xEF\xBB\xBFa.txt\n<<<<<<< SEARCH\n\xff\xfe\n=======\n\xfd\n>>>>>>> REPLACE\n".to_vec();
    let blocks = parse(&input, None).expect("parses");
    assert_eq!(blocks.blocks[0].path, "a.txt");
    assert_eq!(blocks.blocks[0].search[0].as_ref(), b"\xff\xfe");
    input[3] = 0xff;
    let e = parse(&input, None).expect_err("a non-UTF-8 path");
    assert!(e.message.contains("UTF-8"), "{}", e.message);
}

#[test]
fn json_tool_call() {
    let call = r#"{"path": "src/a.rs", "diff": "<<<<<<< SEARCH\n:start_line:3\n-------\nold\n=======\nnew\n>>>>>>> REPLACE"}"#;
    let blocks = ok(call, None);
    assert_eq!(blocks.form, Form::JsonCall);
    assert_eq!(
        triples(&blocks),
        vec![triple("src/a.rs", &["old"], &["new"])]
    );
    assert_eq!(blocks.blocks[0].path_from, PathFrom::ToolCall);
    assert_eq!(
        (
            blocks.blocks[0].patch_line,
            blocks.blocks[0].hint.map(|h| h.line)
        ),
        (1, Some(3))
    );
    // Prose before the object, and the same path given out of band.
    let with_prose = format!("Calling the tool:\n{call}\n");
    let blocks = ok(&with_prose, Some("src/a.rs"));
    assert_eq!(blocks.blocks[0].path_from, PathFrom::Given);
}

#[test]
fn json_tool_call_refusals() {
    for (call, needle, line) in [
        (r#"{"path": "a", "diff": "x""#, "ends too early", 1),
        (r#"{}"#, "missing field `path`", 1),
        (r#"{"path": "a"}"#, "missing field `diff`", 1),
        (r#"{"diff": "x"}"#, "missing field `path`", 1),
        (r#"{"edits": []}"#, "unknown field `edits`", 1),
        (
            r#"{"path": "a", "path": "b", "diff": ""}"#,
            "given twice",
            1,
        ),
        (
            r#"{"path": 3, "diff": ""}"#,
            "`path` must be a string, found a number",
            1,
        ),
        (
            r#"{"path": "a", "diff": null}"#,
            "`diff` must be a string, found null",
            1,
        ),
        (r#"{"path": "", "diff": ""}"#, "the path is empty", 1),
        (
            "{\"path\": \"a\", \"diff\": \"\"}\nmore",
            "unexpected text after",
            2,
        ),
        (
            r#"{"path": "a", "diff": "<<<<<<< SEARCH\nx\n=======\ny\n=======\n>>>>>>> REPLACE"}"#,
            "in the `diff` string: a second `=======`",
            5,
        ),
        (
            r#"{"path": "a", "diff": "no blocks"}"#,
            "in the `diff` string: no SEARCH/REPLACE block",
            1,
        ),
    ] {
        let e = err(call, None);
        assert!(e.what().contains(needle), "{call}: {}", e.what());
        assert_eq!(e.line, line, "{call}");
    }
    let e = err(r#"{"path": "a", "diff": "x"}"#, Some("b"));
    assert!(
        e.message.contains("names `a` but the path given is `b`"),
        "{}",
        e.message
    );
}

#[test]
fn xml_tool_calls_of_cline_and_roo() {
    let cline = "I'll fix it.\n\n<replace_in_file>\n<path>src/a.ts</path>\n<diff>\n------- SEARCH\nold\n=======\nnew\n+++++++ REPLACE\n</diff>\n<task_progress>\n- [x] fix\n</task_progress>\n</replace_in_file>\n";
    let blocks = ok(cline, None);
    assert_eq!(blocks.form, Form::XmlCall("replace_in_file"));
    assert_eq!(
        triples(&blocks),
        vec![triple("src/a.ts", &["old"], &["new"])]
    );
    assert_eq!(
        (blocks.blocks[0].path_from, blocks.blocks[0].patch_line),
        (PathFrom::ToolCall, 6)
    );
    let roo = "<apply_diff><path> b.py </path><diff><<<<<<< SEARCH\n:start_line:1\n-------\nx\n=======\ny\n>>>>>>> REPLACE</diff></apply_diff>";
    let blocks = ok(roo, None);
    assert_eq!(blocks.form, Form::XmlCall("apply_diff"));
    assert_eq!(triples(&blocks), vec![triple("b.py", &["x"], &["y"])]);
    // Lines of the diff outside blocks are prose: no path line is read there.
    let prose = "<apply_diff>\n<diff>\nother.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n</diff>\n<path>b.py</path>\n</apply_diff>\nDone.\n";
    assert_eq!(ok(prose, None).blocks[0].path, "b.py");
}

#[test]
fn xml_tool_call_refusals() {
    let diff = "<diff>\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n</diff>";
    for (call, needle, line) in [
        (
            format!("<replace_in_file>\n{diff}\n</replace_in_file>"),
            "has no `<path>`",
            1,
        ),
        (
            "<apply_diff>\n<path>a</path>\n</apply_diff>".to_string(),
            "has no `<diff>`",
            1,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n{diff}\n"),
            "ends without `</apply_diff>`",
            9,
        ),
        (
            "<apply_diff>\n<path>a</path>\n<diff>\nx".to_string(),
            "ends without `</diff>`",
            4,
        ),
        (
            "<apply_diff>\n<path>a".to_string(),
            "ends without `</path>`",
            2,
        ),
        (
            format!(
                "<apply_diff>\n<path>a</path>\n<start_line>3</start_line>\n{diff}\n</apply_diff>"
            ),
            "unknown element `<start_line>`",
            3,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n{diff}\nhello\n</apply_diff>"),
            "unexpected text `hello`",
            10,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n{diff}\n</replace_in_file>"),
            "does not close",
            10,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n<path>b</path>\n{diff}\n</apply_diff>"),
            "a second `<path>`",
            3,
        ),
        (
            format!("<apply_diff>\n<path>dir/</path>\n{diff}\n</apply_diff>"),
            "names a folder",
            2,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n{diff}\n</apply_diff>\n<apply_diff>"),
            "after the `<apply_diff>` call",
            11,
        ),
        (
            format!("<apply_diff>\n<path>a</path>\n{diff}\n</apply_diff>\n<<<<<<< SEARCH"),
            "after the `<apply_diff>` call",
            11,
        ),
        (
            "<apply_diff>\n<path>a</path>\n<diff>\n<<<<<<< SEARCH\nx\n</diff>\n</apply_diff>"
                .to_string(),
            "cut off",
            5,
        ),
    ] {
        let e = err(&call, None);
        assert!(e.message.contains(needle), "{call}: {}", e.message);
        assert_eq!(e.line, line, "{call}");
    }
    // Lines inside the call's diff count from the start of the input.
    let e = err(
        "<apply_diff>\n<path>a</path>\n<diff>\n<<<<<<< SEARCH\nx\n=======\n</diff>\n</apply_diff>",
        None,
    );
    assert_eq!(e.line, 6);
    assert!(e.message.contains("starts on line 4"), "{}", e.message);
    let e = err(
        &format!("<apply_diff><path>a</path>{diff}</apply_diff>"),
        Some("b"),
    );
    assert!(
        e.message.contains("but the path given is `b`"),
        "{}",
        e.message
    );
}

#[test]
fn a_tool_call_among_bare_blocks_is_refused() {
    let text = "a.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n<replace_in_file>\n<path>b</path>\n";
    let e = err(text, None);
    assert_eq!(e.line, 7);
    assert!(e.message.contains("tool call among"), "{}", e.message);
}

#[test]
fn a_tool_tag_inside_a_sentence_is_prose() {
    let text = "Instead of <apply_diff>, here are blocks:\n\na.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nNo <replace_in_file> needed.\n";
    let blocks = ok(text, None);
    assert_eq!(
        (blocks.form, blocks.blocks[0].path.as_str()),
        (Form::Text, "a.txt")
    );
}

#[test]
fn the_form_is_chosen_by_the_first_telling_line() {
    // An opener before a `{` line: bare blocks, the `{` line is text of the block.
    let text = "a\n<<<<<<< SEARCH\n{\n=======\n}\n>>>>>>> REPLACE\n";
    assert_eq!(ok(text, None).form, Form::Text);
    // A `{` that is indented is no JSON start (as detection reads it).
    let text = "  {\na\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
    assert_eq!(ok(text, None).blocks[0].path, "a");
}
