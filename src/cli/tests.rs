//! Command-line unit tests: validation, colour, JSON usage errors (no process needed).

use super::*;

fn env(terminal: bool, no_color: Option<&str>) -> Env {
    Env {
        stdin_is_terminal: false,
        stdout_is_terminal: terminal,
        stderr_is_terminal: terminal,
        no_color: no_color.map(OsString::from),
    }
}

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

fn temp_with_patch() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    let patch = dir.path().join("p.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n",
    )
    .expect("write");
    (dir, patch.to_string_lossy().into_owned())
}

#[test]
fn colour_only_on_terminals_without_no_color() {
    let (dir, patch) = temp_with_patch();
    let root = dir.path().to_string_lossy().into_owned();
    let a = args(&["apply-patch", "--root", &root, "--check", &patch]);
    let coloured = run(a.clone(), &env(true, None));
    assert_eq!(coloured.status, 0, "{}", coloured.stderr);
    assert!(String::from_utf8_lossy(&coloured.stdout).contains("\x1b["));
    let plain = run(a.clone(), &env(true, Some("1")));
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "M a.txt +1 -1\n");
    let piped = run(a, &env(false, None));
    assert!(!String::from_utf8_lossy(&piped.stdout).contains('\x1b'));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt"))
            .ok()
            .as_deref(),
        Some("one\n")
    );
}

#[test]
fn usage_errors_are_json_with_json() {
    let out = run(
        args(&["apply-patch", "--json", "--window", "0"]),
        &env(false, None),
    );
    assert_eq!(out.status, 2);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["error"]["code"], "usage");
    let out = run(
        args(&["apply-patch", "--json", "-p", "x"]),
        &env(false, None),
    );
    assert_eq!(out.status, 2);
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok());
}

#[test]
fn subcommands_take_global_options_but_not_apply_options() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_string_lossy().into_owned();
    let parsed = RawArgs::try_parse_from(["apply-patch", "--root", &root, "--json", "undo"])
        .expect("global options before a subcommand");
    let opts = validate(parsed, Style::Plain).expect("valid");
    assert!(matches!(opts.action, Action::Undo) && opts.json);
    let parsed =
        parse_args(&args(&["apply-patch", "--check", "recover"])).expect("clap accepts it");
    let err = validate(parsed, Style::Plain).expect_err("--check with recover");
    assert_eq!(err.code, ErrorCode::Usage);
}

#[test]
fn terminal_stdin_without_patch_is_a_usage_error() {
    let mut e = env(false, None);
    e.stdin_is_terminal = true;
    let out = run(args(&["apply-patch"]), &e);
    assert_eq!(out.status, 2);
    assert!(out.stderr.contains("no patch given"));
}

#[test]
fn missing_root_is_a_usage_error() {
    let out = run(
        args(&[
            "apply-patch",
            "--root",
            "/no/such/dir",
            "*** Begin Patch\n*** Add File: x\n+y\n*** End Patch\n",
        ]),
        &env(false, None),
    );
    assert_eq!(out.status, 2, "{}", out.stderr);
}

#[test]
fn inline_patch_text_is_recognised() {
    let text = "*** Begin Patch\n*** Add File: x\n+y\n*** End Patch\n";
    assert_eq!(
        input_of(Some(text.into())).ok(),
        Some(Input::Text(text.into()))
    );
    assert_eq!(input_of(Some("-".into())).ok(), Some(Input::Stdin));
    assert_eq!(input_of(None).ok(), Some(Input::Stdin));
    // Neither a file nor a patch: a usage error, not a file that cannot be read later.
    let err = input_of(Some("no-such-fix.diff".into())).expect_err("no such file");
    assert_eq!(err.code, ErrorCode::Usage);
    let (_dir, patch) = temp_with_patch();
    assert_eq!(
        input_of(Some(patch.clone().into())).ok(),
        Some(Input::File(patch.into()))
    );
}

#[test]
fn the_durability_flag_reaches_the_pipeline_options() {
    let raw = parse_args(&args(&["apply-patch", "--durability", "atomic", "-"])).expect("parses");
    let Action::Apply { options, .. } = validate(raw, Style::detect(false, None))
        .expect("valid")
        .action
    else {
        panic!("an apply");
    };
    assert_eq!(options.durability, crate::txn::Durability::Atomic);
    let bad = args(&["apply-patch", "--durability", "relaxed", "-"]);
    assert!(parse_args(&bad).is_err(), "clap refuses an unknown mode");
}

#[test]
fn a_file_argument_refusal_names_its_path_and_code() {
    use super::output::FileArgError;
    let e: Error = FileArgError::NotRegular {
        path: "p".into(),
        fifo: true,
    }
    .into();
    assert_eq!(e.code, ErrorCode::UnsupportedFile);
    assert_eq!(e.message, "p is a fifo: only regular files are read");
    assert_eq!((e.path.as_deref(), e.hint), (Some("p"), None));
    let e: Error = FileArgError::IsDirectory { path: "d".into() }.into();
    assert_eq!(
        (e.code, e.message.as_str()),
        (ErrorCode::IsDirectory, "d is a directory")
    );
    let e: Error = FileArgError::NotUtf8 { path: "b".into() }.into();
    assert_eq!(
        (e.code, e.path.as_deref()),
        (ErrorCode::InvalidUtf8, Some("b"))
    );
}
