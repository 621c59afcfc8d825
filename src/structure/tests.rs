//! Unit tests of the structure signals: one regression test per trap a lexer must not fall
//! into, and the shape of every problem.

use super::*;

fn balanced(text: &str, lang: Lang) {
    let got = check_balance(text, lang);
    assert_eq!(got, Balance::Balanced, "{lang}: {text:?}");
}

fn problem(text: &str, lang: Lang) -> Problem {
    match check_balance(text, lang) {
        Balance::Unbalanced { problem } => problem,
        other => panic!("{lang}: expected a problem in {text:?}, got {other:?}"),
    }
}

/// `(line, column, found, open)` of the first problem.
fn at(text: &str, lang: Lang) -> (usize, usize, String, Option<(String, usize, usize)>) {
    let p = problem(text, lang);
    let open = p.open.map(|o| (o.text, o.line, o.column));
    (p.line, p.column, p.found, open)
}

#[test]
fn slashes_inside_strings_and_urls_are_not_comments() {
    balanced("let u = \"http://x.org/{\"; f(u);\n", Lang::Rust);
    balanced("const u = 'http://x.org/(';\n", Lang::JavaScript);
    balanced("a { background: url(http://x.org/a.png); }\n", Lang::Css);
    balanced("a { background: url(//cdn.x/a'b.png); }\n", Lang::Css);
    balanced(
        "char *s = \"/* not a comment\"; int f() { return 1; }\n",
        Lang::C,
    );
}

#[test]
fn brackets_and_quotes_inside_comments_are_ignored() {
    balanced(
        "// (unclosed [ and a quote ' \"\nfn f() {}\n/* { ' */\n",
        Lang::Rust,
    );
    balanced(
        "/* outer /* nested { */ still comment ( */ fn f() {}\n",
        Lang::Rust,
    );
    balanced("# (unclosed ' \"\ndef f():\n    return [1]\n", Lang::Python);
    balanced("echo hi # it's ( fine\n", Lang::Shell);
    balanced("key: value # don't [\n", Lang::Yaml);
    balanced("<!-- <div> ' ( -->\n<p>x</p>\n", Lang::Html);
}

#[test]
fn complete_strings_are_not_judged_unclosed() {
    balanced("let s = \"a \\\" b {\";\n", Lang::Rust);
    balanced(
        "let s = r#\"a \" } \"#; let t = br##\"x\"#\"##;\n",
        Lang::Rust,
    );
    balanced("let b = b'\\''; let c = '\"'; let d = '{';\n", Lang::Rust);
    balanced(
        "fn f<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer x; } }\n",
        Lang::Rust,
    );
    balanced("let r#type = 1; let e = 'é';\n", Lang::Rust);
    balanced(
        "auto s = R\"x(a \" ) { )x\"; int n = 1'000'000;\n",
        Lang::Cpp,
    );
    balanced("String s = \"\"\"\n  a \" { \"\n  \"\"\";\n", Lang::Java);
    balanced(
        "var s = @\"C:\\dir\"\"{\"; var t = $\"{a} {{ {b[\"k\"]}\";\n",
        Lang::CSharp,
    );
    balanced("s := `raw \" {`; r := '\\''\n", Lang::Go);
    balanced("x = 'it\\'s' + \"a \\\" (\"\n", Lang::Python);
}

#[test]
fn javascript_templates_and_regexes() {
    balanced("const s = `a ${b ? `c ${d}` : '}'} e`;\n", Lang::JavaScript);
    balanced(
        "const r = /[(]\"/g; const q = a / b / c;\n",
        Lang::JavaScript,
    );
    balanced(
        "if (/\\/{/.test(x)) { y = x.split(/[/]/); }\n",
        Lang::TypeScript,
    );
    balanced("return /'/.test(s);\n", Lang::JavaScript);
    balanced(
        "const half = (a) / 2; const t = x[1] / 3;\n",
        Lang::JavaScript,
    );
}

#[test]
fn python_strings() {
    balanced(
        "def f():\n    '''Doc with def g( and \"quote.'''\n    return f\"{x['k']} {{ {y:{w}}}\"\n",
        Lang::Python,
    );
    balanced("s = rb'\\d(' + r\"\\\"\"\n", Lang::Python);
    let (line, col, found, open) = at("x = '''never\nclosed\n", Lang::Python);
    assert_eq!((line, col, found.as_str()), (3, 1, "end of file"));
    assert_eq!(open, Some(("'''".to_string(), 1, 5)));
}

#[test]
fn shell_heredocs_cases_and_expansions() {
    balanced(
        "cat <<'EOF' > x\n( ' { \"\nEOF\ncase $1 in\n  a|b) echo ab ;;\n  (c) echo c ;;\n  *) echo \"${x#*(}\" ;;\nesac\n",
        Lang::Shell,
    );
    balanced(
        "cat <<-EOF\n\t(\n\tEOF\necho $(( 1 << 2 )) \"$(echo ')')\"\n",
        Lang::Shell,
    );
    balanced("echo \\( $'it\\'s' `echo )`\n", Lang::Shell);
    // zsh's `#` glob operator after a group is no comment (ripgrep's rg.zsh).
    balanced(
        "f() {\n  [[ $V == (4|5.<0-3>)(.*)# ]] &&\n  x=1\n}\n",
        Lang::Shell,
    );
    let (_, _, found, open) = at("cat <<EOF\nbody\n", Lang::Shell);
    assert_eq!(found, "end of file");
    assert_eq!(open, Some(("<<EOF".to_string(), 1, 5)));
}

#[test]
fn markup_comments_voids_scripts_and_cdata() {
    balanced(
        "<!DOCTYPE html>\n<html><body>\n<!-- <div> -->\n<img src=\"a>b\"><br/><input disabled>\n<script>if (a < b) { x = '</div>'; }</script>\n<style>a::before { content: \"}\"; }</style>\n<ul><li>one<li>two</ul>\n<p>text with ( and '\n</body></html>\n",
        Lang::Html,
    );
    balanced(
        "<?xml version=\"1.0\"?>\n<a><![CDATA[ <b> ( ]]><c/></a>\n",
        Lang::Xml,
    );
    balanced("<template>\n  <div :class=\"{ a: b }\">{{ x > 1 }}</div>\n</template>\n<script setup lang=\"ts\">\nconst a = (b: number) => { return b; };\n</script>\n", Lang::Vue);
    let (line, col, found, open) = at("<div>\n  <span>\n</div>\n", Lang::Xml);
    assert_eq!((line, col, found.as_str()), (3, 1, "</div>"));
    assert_eq!(open, Some(("<span>".to_string(), 2, 3)));
}

#[test]
fn jsx_text_and_expressions() {
    balanced(
        "export function A() {\n  return (\n    <div className=\"a\" onClick={() => f({ x: 1 })}>\n      Don't {items.map(i => <Item key={i} />)} (\n      <>frag</>\n    </div>\n  );\n}\n",
        Lang::Jsx,
    );
    balanced("const ok = a < b && c > d;\n", Lang::Tsx);
    balanced(
        "const el = <p>It's {n > 1 ? 'many' : 'one'}</p>;\nconst lt = a < b;\n",
        Lang::JavaScript,
    );
    balanced(
        "const n = <number>x; if (a < b) { f(); }\n",
        Lang::TypeScript,
    );
    let (_, _, found, open) = at("const x = <div><span></div>;\n", Lang::Tsx);
    assert_eq!(found, "</div>");
    assert_eq!(open, Some(("<span>".to_string(), 1, 16)));
}

#[test]
fn yaml_scalars() {
    balanced(
        "on: [push, pull_request]\njobs:\n  build:\n    steps:\n      - run: |\n          echo \"unclosed (\n          it's\n      - name: it's a [plain scalar\n        with: {a: 'x''y', b: \"}\"}\n",
        Lang::Yaml,
    );
    let (line, _, found, open) = at("a: [1, 2\nb: 3\n", Lang::Yaml);
    assert_eq!((line, found.as_str()), (3, "end of file"));
    assert_eq!(open, Some(("[".to_string(), 1, 4)));
}

#[test]
fn problems_name_what_was_open_and_where() {
    let p = problem("fn f() {\n    let x = (1, 2];\n}\n", Lang::Rust);
    assert_eq!(p.kind, ProblemKind::Mismatched);
    assert_eq!((p.line, p.column, p.found.as_str()), (2, 18, "]"));
    assert_eq!(
        p.to_string(),
        "`]` at line 2, column 18 does not close `(` opened at line 2, column 13"
    );
    let p = problem("a)\n", Lang::Go);
    assert_eq!(p.kind, ProblemKind::UnexpectedClose);
    assert_eq!(p.to_string(), "`)` at line 1, column 2 closes nothing");
    let p = problem("let s = \"abc;\nlet t = 1;\n", Lang::JavaScript);
    assert_eq!((p.line, p.column, p.found.as_str()), (1, 14, "end of line"));
    assert_eq!(
        p.open.map(|o| (o.text, o.column)),
        Some(("\"".to_string(), 9))
    );
    let p = problem("/* never closed\n", Lang::C);
    assert_eq!(p.open.map(|o| o.text), Some("/*".to_string()));
    let p = problem("x = f(\"é\", [1)\n", Lang::Python);
    assert_eq!((p.line, p.column), (1, 14), "columns count characters");
}

#[test]
fn what_is_not_checked() {
    assert!(matches!(
        check_balance("{", Lang::Unknown),
        Balance::NotChecked { .. }
    ));
    assert!(matches!(
        check_balance("a\0{", Lang::Rust),
        Balance::NotChecked { .. }
    ));
    let deep = format!("const s = {}", "`${".repeat(300));
    assert!(matches!(
        check_balance(&deep, Lang::JavaScript),
        Balance::NotChecked { .. }
    ));
    balanced("\u{feff}fn f() {}\n", Lang::Rust);
}

#[test]
fn edit_balance_blames_only_new_problems() {
    let ok = b"fn f() { g(1); }\n";
    let broken = b"fn f() { g(1; }\n";
    assert_eq!(edit_balance("a.rs", ok, ok), EditBalance::StillBalanced);
    assert_eq!(edit_balance("a.rs", b"", ok), EditBalance::StillBalanced);
    assert!(matches!(
        edit_balance("a.rs", broken, broken),
        EditBalance::AlreadyUnbalanced { .. }
    ));
    assert!(matches!(
        edit_balance("a.txt", ok, broken),
        EditBalance::NotChecked { .. }
    ));
    assert!(matches!(
        edit_balance("a.rs", ok, b"\xff{"),
        EditBalance::NotChecked { .. }
    ));
    let got = edit_balance("a.rs", ok, broken);
    let EditBalance::NewlyUnbalanced { problem } = &got else {
        panic!("expected a new problem, got {got:?}");
    };
    assert_eq!((problem.line, problem.column), (1, 15));
    let err = got
        .to_error("a.rs", None)
        .expect("a new problem is an error under --strict-balance");
    assert_eq!(err.code, crate::ErrorCode::UnbalancedEdit);
    assert_eq!((err.path.as_deref(), err.hunk), (Some("a.rs"), None));
    assert_eq!(
        err.details().and_then(|d| d.get("line")),
        Some(&serde_json::json!(1))
    );
    assert!(err
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("--strict-balance")));
    let blamed = got.to_error("a.rs", Some(2)).expect("the same problem");
    assert_eq!(blamed.hunk, Some(2));
    assert_eq!(
        blamed.message,
        err.message.replacen("a.rs: ", "a.rs: hunk 2: ", 1),
        "the blamed hunk is named after the path"
    );
    let warning =
        crate::report::Warning::unbalanced_edit("a.rs", &got).expect("a new problem is a warning");
    assert_eq!(warning.path.as_deref(), Some("a.rs"));
    assert_eq!(
        warning.message,
        "the edit leaves the file unbalanced: `}` at line 1, column 15 does not close `(` opened at line 1, column 11"
    );
    assert!(EditBalance::StillBalanced.warning_message().is_none());
}

fn lines(text: &str, line: usize, kind: Option<Kind>, lang: Lang) -> (usize, usize, Kind) {
    let r = range(text, line, kind, lang).unwrap_or_else(|e| panic!("{lang} line {line}: {e}"));
    (r.start_line, r.end_line, r.kind)
}

#[test]
fn rust_function_ranges_start_at_the_signature() {
    let text = "/// Doc.\n#[inline]\npub fn long<T>(\n    a: T,\n) -> T\nwhere\n    T: Copy,\n{\n    if true {\n        a\n    } else {\n        a\n    }\n}\n";
    assert_eq!(lines(text, 10, None, Lang::Rust), (3, 14, Kind::Function));
    assert_eq!(
        lines(text, 10, Some(Kind::Block), Lang::Rust),
        (9, 11, Kind::Block)
    );
    assert_eq!(
        lines(text, 12, Some(Kind::Block), Lang::Rust),
        (11, 13, Kind::Block)
    );
    assert_eq!(lines(text, 4, None, Lang::Rust), (3, 14, Kind::Function));
    assert!(matches!(
        range(text, 1, Some(Kind::Function), Lang::Rust),
        Err(RangeError::NotFound { .. })
    ));
    assert!(matches!(
        range(text, 99, None, Lang::Rust),
        Err(RangeError::LineOutOfRange { lines: 14, .. })
    ));
}

#[test]
fn c_family_and_js_function_headers() {
    let c = "#include <stdio.h>\n\nstatic int\nmain(int argc, char **argv)\n{\n    for (;;) {\n        return 0;\n    }\n}\n";
    assert_eq!(lines(c, 7, None, Lang::C), (3, 9, Kind::Function));
    let java = "class A {\n    @Override\n    public String toString() {\n        return \"}\";\n    }\n}\n";
    assert_eq!(lines(java, 4, None, Lang::Java), (3, 5, Kind::Function));
    assert_eq!(lines(java, 2, None, Lang::Java), (1, 6, Kind::Block));
    let js = "import x from 'y'\n\nconst f = async (a) => {\n  if (a) {\n    return 1\n  }\n}\n";
    assert_eq!(lines(js, 5, None, Lang::JavaScript), (3, 7, Kind::Function));
    let go = "package main\n\nimport \"fmt\"\n\nfunc (s *S) Run(\n\tx int,\n) error {\n\treturn nil\n}\n";
    assert_eq!(lines(go, 8, None, Lang::Go), (5, 9, Kind::Function));
}

#[test]
fn python_ranges_ignore_docstrings_and_comments() {
    let text = "class A:\n    @property\n    def f(self,\n          x):\n        \"\"\"Doc.\ndef not_a_function():\n        \"\"\"\n# a comment at column 0\n        return x\n\n    def g(self):\n        pass\n";
    assert_eq!(lines(text, 9, None, Lang::Python), (3, 9, Kind::Function));
    assert_eq!(lines(text, 6, None, Lang::Python), (3, 9, Kind::Function));
    assert_eq!(
        lines(text, 12, None, Lang::Python),
        (11, 12, Kind::Function)
    );
    assert_eq!(lines(text, 2, None, Lang::Python), (1, 12, Kind::Function));
}

#[test]
fn yaml_and_markup_ranges() {
    let yaml = "jobs:\n  build:\n    steps:\n    - run: |\n        echo hi\n      name: x\n    - b\nother: 1\n";
    // The block scalar's lines belong to the `-` item that holds it.
    assert_eq!(lines(yaml, 5, None, Lang::Yaml), (4, 6, Kind::Block));
    assert_eq!(lines(yaml, 6, None, Lang::Yaml), (4, 6, Kind::Block));
    assert_eq!(lines(yaml, 7, None, Lang::Yaml), (3, 7, Kind::Block));
    let html = "<div>\n  <ul>\n    <li>a\n    <li>b\n  </ul>\n  <img\n    src=\"x\">\n</div>\n";
    assert_eq!(lines(html, 3, None, Lang::Html), (3, 3, Kind::Tag));
    assert_eq!(lines(html, 7, None, Lang::Html), (6, 7, Kind::Tag));
    assert_eq!(lines(html, 5, None, Lang::Html), (2, 5, Kind::Tag));
    assert!(matches!(
        range(html, 1, Some(Kind::Tag), Lang::Python),
        Err(RangeError::Unsupported { .. })
    ));
}

#[test]
fn unknown_languages_fall_back_to_braces() {
    let r = range("thing {\n  x\n}\n", 2, None, Lang::Unknown).expect("braces enclose line 2");
    assert!(r.fallback);
    assert_eq!((r.start_line, r.end_line, r.kind), (1, 3, Kind::Block));
}

#[test]
fn c_preprocessor_reads_one_branch_and_skips_directive_text() {
    balanced(
        "#include <a'b.h>\n#error don't \\\n  ever (\n#define BEGIN {\n#define X 1 /* a ( comment\n   over lines */\nint f(int a,\n#if NEW\n      int b);\n#else\n      long b);\n#endif\n#if 0\n}\n#elif OTHER\nint g() {}\n#else\n{\n#endif\n",
        Lang::C,
    );
    balanced("#region it's here\nclass A { }\n#endregion\n", Lang::CSharp);
}

#[test]
fn html_omitted_end_tags() {
    balanced(
        "<p>one\n<p>two\n<div>three</div>\n</p>\n<table><tr><td>a<td>b<tr><td>c</table>\n",
        Lang::Html,
    );
    let (_, _, found, open) = at("<ul>\n<li><b>x</li>\n</ul>\n", Lang::Html);
    assert_eq!(found, "</li>");
    assert_eq!(open, Some(("<b>".to_string(), 2, 5)));
}

#[test]
fn crlf_texts_and_scripts_inside_markup() {
    let py = "def f():\r\n    x = 1\r\n\r\ny = 2\r\n";
    assert_eq!(lines(py, 2, None, Lang::Python), (1, 2, Kind::Function));
    let a = around(py, 2, Lang::Python).expect("line 2 is in f");
    assert_eq!(a.render(), "     1\tdef f():\n     2\t    x = 1\n");
    let vue = "<template>\n  <p>{{ n }}</p>\n</template>\n<script>\nexport default {\n  data() {\n    return { n: 1 };\n  },\n};\n</script>\n";
    assert_eq!(lines(vue, 7, None, Lang::Vue), (4, 10, Kind::Tag));
    assert_eq!(
        lines(vue, 7, Some(Kind::Function), Lang::Vue),
        (6, 8, Kind::Function)
    );
    let ts = "class A {\n  private x = 1;\n  get y(): number {\n    return this.x;\n  }\n  async run<T>(a: T): Promise<void> {\n    await a;\n  }\n}\n";
    assert_eq!(lines(ts, 4, None, Lang::TypeScript), (3, 5, Kind::Function));
    assert_eq!(lines(ts, 7, None, Lang::TypeScript), (6, 8, Kind::Function));
    assert_eq!(lines(ts, 2, None, Lang::TypeScript), (1, 9, Kind::Block));
    let cs = "namespace N {\n  [Serializable]\n  public class C : B {\n    [Obsolete]\n    public C(int a) : base(a) {\n      if (a > 0) { }\n    }\n  }\n}\n";
    assert_eq!(lines(cs, 6, None, Lang::CSharp), (5, 7, Kind::Function));
    assert_eq!(lines(cs, 4, None, Lang::CSharp), (3, 8, Kind::Block));
}

#[test]
fn a_missing_brace_is_located_by_indentation() {
    let text = "fn a() {\n    if x {\n        f();\n}\n\nfn b() {\n}\n";
    let p = problem(text, Lang::Rust);
    assert_eq!(p.open.as_ref().map(|o| o.line), Some(1));
    assert_eq!(
        p.hint.as_deref(),
        Some("a `}` may be missing before line 4: the `}` there closes the `{` of line 2, which is indented differently")
    );
    // Allman and K&R styles, and closers after other code, raise no suspicion.
    let p = problem("fn a()\n{\n    g(|| {\n        h();\n    });\n", Lang::Rust);
    assert_eq!(p.hint, None);
}

#[test]
fn edit_introduced_problem_lexes_the_old_text_only_for_a_broken_new_one() {
    let ok = b"fn f() { g(1); }\n";
    let broken = b"fn f() { g(1; }\n";
    assert_eq!(edit_introduced_problem("a.rs", ok, ok), None);
    // Fixed by the edit, or broken before and after: not the edit's problem.
    assert_eq!(edit_introduced_problem("a.rs", broken, ok), None);
    assert_eq!(edit_introduced_problem("a.rs", broken, broken), None);
    assert_eq!(edit_introduced_problem("a.txt", ok, broken), None);
    assert_eq!(edit_introduced_problem("a.rs", ok, b"\xff{"), None);
    assert_eq!(edit_introduced_problem("a.rs", b"\xff", broken), None);
    assert_eq!(
        edit_introduced_problem("a.rs", ok, broken),
        Some(edit_balance("a.rs", ok, broken))
    );
}

proptest::proptest! {
    /// `edit_introduced_problem` is `edit_balance`'s new problem, in every language, whatever
    /// the order it lexes the two texts in.
    #[test]
    fn edit_introduced_problem_is_edit_balances_new_problem(
        path in proptest::sample::select(vec!["a.rs", "a.py", "a.sh", "a.html", "a.yaml", "a.json", "a.txt"]),
        before in proptest::collection::vec(proptest::sample::select(b"(){}[]<>/\"'#*\n ab:-\\".to_vec()), 0..24),
        after in proptest::collection::vec(proptest::sample::select(b"(){}[]<>/\"'#*\n ab:-\\".to_vec()), 0..24),
    ) {
        let full = edit_balance(path, &before, &after);
        let expected = full.new_problem().is_some().then_some(full);
        proptest::prop_assert_eq!(edit_introduced_problem(path, &before, &after), expected);
    }
}
