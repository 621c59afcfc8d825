//! The MCP server end to end: a real MCP client (rmcp's) starts `apply-patch mcp` as a child
//! process and drives every tool and refusal over standard input and output.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};

use crate::util::TempTree;

type Client = RunningService<RoleClient, ()>;

const APP: &str = "\
def load(path):
    with open(path) as f:
        return f.read()


def greet(name):
    message = 'hello ' + name
    print(message)
    return message
";

async fn start(t: &TempTree, extra: &[&str]) -> Client {
    let mut args = vec!["mcp".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    start_with(t, args).await
}

/// Start the binary with `args` (the subcommand included) in the root of `t`.
async fn start_with(t: &TempTree, args: Vec<String>) -> Client {
    start_durable(t, args, None).await
}

/// [`start_with`], with `APPLY_PATCH_DURABILITY` set to `durability` when given.
async fn start_durable(t: &TempTree, args: Vec<String>, durability: Option<&str>) -> Client {
    let state = t.outside("state");
    let root = t.root();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_apply-patch")).configure(|c| {
        c.args(&args)
            .current_dir(&root)
            .env("XDG_STATE_HOME", &state)
            .env("HOME", &state)
            .env_remove("APPLY_PATCH_FAILPOINT")
            .env_remove("APPLY_PATCH_DURABILITY");
        if let Some(mode) = durability {
            c.env("APPLY_PATCH_DURABILITY", mode);
        }
    });
    let transport = TokioChildProcess::new(cmd).expect("the server starts");
    ().serve(transport)
        .await
        .expect("the MCP handshake succeeds")
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().expect("arguments are an object");
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} reaches the server: {e}"))
}

/// The structured result, and whether the tool said it failed.
async fn data(client: &Client, tool: &str, args: Value) -> (Value, bool) {
    let r = call(client, tool, args).await;
    let failed = r.is_error == Some(true);
    (
        r.structured_content
            .expect("every tool returns structured content"),
        failed,
    )
}

async fn error_code(client: &Client, tool: &str, args: Value) -> String {
    let (value, failed) = data(client, tool, args).await;
    assert!(failed, "{tool} should fail: {value}");
    value["error"]["code"].as_str().unwrap_or("").to_string()
}

fn patch(base: &str, old: &str, new: &str) -> String {
    format!(
        "*** Begin Patch\n*** Update File: app.py\n*** Base: {base}\n@@ def greet(name):\n-    {old}\n+    {new}\n     print(message)\n*** End Patch\n"
    )
}

#[tokio::test]
async fn every_tool_and_refusal_over_stdio() {
    let t = TempTree::with(&[("app.py", APP), ("notes.txt", "a\nb\nc\n")]);
    let client = start(&t, &[]).await;

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "apply_patch",
            "check_balance",
            "confirm",
            "edit",
            "preview",
            "range",
            "read",
            "undo"
        ]
    );
    let apply = tools
        .iter()
        .find(|t| t.name == "apply_patch")
        .expect("apply_patch");
    let description = apply.description.as_deref().unwrap_or("");
    assert!(description.contains("*** Begin Patch") && description.contains("not_read"));
    let info = client.peer_info().expect("server info");
    assert!(info
        .instructions
        .as_deref()
        .is_some_and(|i| i.contains("read")));

    // Structure signals.
    let (value, failed) = data(&client, "range", json!({"path": "app.py", "line": 7})).await;
    assert!(!failed, "{value}");
    assert_eq!(
        (value["start_line"].as_u64(), value["end_line"].as_u64()),
        (Some(6), Some(9))
    );
    assert_eq!(value["kind"], "function");
    let bogus = json!({"path": "app.py", "line": 7, "kind": "class"});
    assert_eq!(error_code(&client, "range", bogus).await, "usage");
    let past = json!({"path": "app.py", "line": 99});
    assert_eq!(error_code(&client, "range", past).await, "usage");
    let (value, failed) = data(&client, "check_balance", json!({"path": "app.py"})).await;
    assert!(!failed);
    assert_eq!(value["status"], "balanced");
    t.write("broken.py", b"def f(:\n    return [1, 2\n");
    let (value, _) = data(&client, "check_balance", json!({"path": "broken.py"})).await;
    assert_eq!(value["status"], "unbalanced", "{value}");
    let missing = json!({"path": "nope.py"});
    assert_eq!(
        error_code(&client, "check_balance", missing).await,
        "file_not_found"
    );

    // Not read yet: refused, nothing written.
    let p = patch(
        "0000000000000000",
        "message = 'hello ' + name",
        "message = 'hi ' + name",
    );
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": p})).await,
        "not_read"
    );
    assert_eq!(t.read_str("app.py"), APP);

    // Read, then apply against the version read.
    let r = call(
        &client,
        "read",
        json!({"path": "app.py", "start_line": 6, "end_line": 7}),
    )
    .await;
    let text = r.content[0].as_text().expect("text").text.clone();
    assert!(
        text.contains("     6\tdef greet(name):\n     7\t    message = 'hello ' + name\n"),
        "{text}"
    );
    let base = r.structured_content.expect("data")["base"]
        .as_str()
        .expect("base")
        .to_string();
    let p = patch(&base, "message = 'hello ' + name", "message = 'hi ' + name");
    let (report, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{report}");
    assert_eq!(report["files"][0]["path"], "app.py");
    assert!(report["risk"]["score"].as_u64().is_some());
    assert!(t.read_str("app.py").contains("'hi ' + name"));

    // The same patch again: its Base is stale now.
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": p})).await,
        "stale_file"
    );
    // Wrong context: refused with a chip naming what failed.
    let bad = "*** Begin Patch\n*** Update File: app.py\n@@\n-    message = 'bye'\n+    x\n*** End Patch\n";
    let (value, failed) = data(&client, "apply_patch", json!({"patch": bad})).await;
    assert!(failed);
    assert_eq!(value["error"]["code"], "context_not_found");
    assert!(value["error"]["details"]["chip"].is_string(), "{value}");
    assert!(value["error"]["nearest"].is_object());
    // SEARCH/REPLACE blocks with `path`, and the `base` read handed out.
    let r = call(&client, "read", json!({"path": "app.py"})).await;
    let base = r.structured_content.expect("data")["base"]
        .as_str()
        .expect("base")
        .to_string();
    let blocks = "<<<<<<< SEARCH\n    message = 'hi ' + name\n=======\n    message = 'hey ' + name\n>>>>>>> REPLACE\n";
    let args = json!({"patch": blocks, "path": "app.py", "base": base});
    let (report, failed) = data(&client, "apply_patch", args).await;
    assert!(!failed, "{report}");
    assert!(t.read_str("app.py").contains("'hey ' + name"));
    let args = json!({"patch": blocks, "path": "nope.py"});
    assert_eq!(
        error_code(&client, "apply_patch", args).await,
        "file_not_found"
    );
    let garbled = "*** Begin Patch\n*** Frobnicate File: app.py\n*** End Patch\n";
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": garbled})).await,
        "parse_error"
    );
    let outside = "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch\n";
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": outside})).await,
        "path_escape"
    );

    // The session knows what it wrote: line-number edits work without another read.
    let edit = json!({"edits": [{"op": "insert", "path": "app.py", "after_line": 0, "content": "import sys\n"}]});
    let (value, failed) = data(&client, "edit", edit).await;
    assert!(!failed, "{value}");
    assert!(t.read_str("app.py").starts_with("import sys\ndef load"));

    // Someone else adds a line: line numbers from the session no longer hold.
    t.write(
        "app.py",
        format!("{}# tail\n", t.read_str("app.py")).as_bytes(),
    );
    let edit = json!({"edits": [{"op": "insert", "path": "app.py", "after_line": 1, "content": "import os\n"}]});
    assert_eq!(
        error_code(&client, "edit", edit.clone()).await,
        "stale_file"
    );
    // After a read it goes through; a same-count change since the read is only a warning.
    call(&client, "read", json!({"path": "app.py"})).await;
    t.write(
        "app.py",
        t.read_str("app.py").replace("# tail", "# TAIL").as_bytes(),
    );
    let (value, failed) = data(&client, "edit", edit).await;
    assert!(!failed, "{value}");
    assert_eq!(
        value["warnings"][0]["code"], "changed_since_read",
        "{value}"
    );

    // A new file needs no read; JSON edit refusals come through too.
    let create = json!({"edits": [{"op": "create", "path": "new.txt", "content": "fresh\n"}]});
    assert!(!data(&client, "edit", create).await.1);
    let wrong =
        json!({"edits": [{"op": "replace", "path": "new.txt", "old": "stale", "new": "x"}]});
    assert_eq!(
        error_code(&client, "edit", wrong).await,
        "context_not_found"
    );

    // Preview, confirm once, and undo.
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n a\n-b\n+B\n*** End Patch\n";
    let (value, failed) = data(&client, "preview", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    assert!(value["diff"].as_str().is_some_and(|d| d.contains("+B")));
    assert_eq!(
        t.read_str("notes.txt"),
        "a\nb\nc\n",
        "a preview writes nothing"
    );
    let id = value["preview"].as_str().expect("preview id").to_string();
    let (value, failed) = data(&client, "confirm", json!({"id": id})).await;
    assert!(!failed, "{value}");
    assert_eq!(t.read_str("notes.txt"), "a\nB\nc\n");
    assert_eq!(
        error_code(&client, "confirm", json!({"id": id})).await,
        "unknown_preview"
    );
    let (value, failed) = data(&client, "undo", json!({})).await;
    assert!(!failed, "{value}");
    assert_eq!(t.read_str("notes.txt"), "a\nb\nc\n");

    // Risk option; post-checks are the operator's (see a_model_supplied_command_never_runs).
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-c\n+C\n*** End Patch\n";
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": p, "max_risk": 0})).await,
        "risk_exceeded"
    );
    assert_eq!(t.read_str("notes.txt"), "a\nb\nc\n");

    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn rebase_merges_a_stale_base_over_mcp() {
    let t = TempTree::with(&[("app.py", APP)]);
    let client = start(&t, &[]).await;
    let r = call(&client, "read", json!({"path": "app.py"})).await;
    let base = r.structured_content.expect("data")["base"]
        .as_str()
        .expect("base")
        .to_string();
    // Another agent edits another function meanwhile.
    t.write(
        "app.py",
        APP.replace("open(path)", "open(path, encoding='utf-8')")
            .as_bytes(),
    );
    let p = patch(&base, "message = 'hello ' + name", "message = 'hi ' + name");
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": p})).await,
        "stale_file"
    );
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p, "rebase": true})).await;
    assert!(!failed, "{value}");
    assert_eq!(value["warnings"][0]["code"], "rebased");
    let text = t.read_str("app.py");
    assert!(
        text.contains("encoding='utf-8'") && text.contains("'hi ' + name"),
        "{text}"
    );
    client.cancel().await.expect("the session closes");
}

/// The `stale_file` hint over MCP names `rebase: true` when the Base's content was kept, and
/// says why nothing was merged when `rebase: true` found no such content.
#[tokio::test]
async fn stale_file_hints_name_rebase_true_over_mcp() {
    let t = TempTree::with(&[("app.py", APP)]);
    let client = start(&t, &[]).await;
    let r = call(&client, "read", json!({"path": "app.py"})).await;
    let base = r.structured_content.expect("data")["base"]
        .as_str()
        .expect("base")
        .to_string();
    t.write("app.py", format!("{APP}# edited\n").as_bytes());
    let p = patch(&base, "message = 'hello ' + name", "message = 'hi ' + name");
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(failed, "{value}");
    let e = &value["error"];
    assert_eq!(e["code"], "stale_file");
    let hint = e["hint"].as_str().expect("a hint");
    assert!(hint.contains("rebase: true"), "{hint}");
    assert!(
        !hint.contains("--rebase"),
        "the CLI's flag is not the tool's: {hint}"
    );

    let unknown = patch("00112233445566aa", "message = 'hello ' + name", "x = 1");
    let (value, failed) = data(
        &client,
        "apply_patch",
        json!({"patch": unknown, "rebase": true}),
    )
    .await;
    assert!(failed, "{value}");
    let e = &value["error"];
    assert_eq!(e["code"], "stale_file");
    let message = e["message"].as_str().expect("a message");
    assert!(message.contains("no snapshot"), "{message}");
    assert!(!message.contains("--rebase"), "{message}");
    let hint = e["hint"].as_str().expect("a hint");
    assert!(hint.contains("read tool"), "{hint}");
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn read_only_mode_offers_only_the_reading_tools() {
    let t = TempTree::with(&[("app.py", APP)]);
    let client = start(&t, &["--read-only"]).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["check_balance", "range", "read"]);
    let args = json!({"patch": "*** Begin Patch\n*** Add File: x\n+y\n*** End Patch\n"});
    let refused = client
        .call_tool(
            CallToolRequestParams::new("apply_patch")
                .with_arguments(args.as_object().cloned().expect("object")),
        )
        .await;
    assert!(refused.is_err(), "apply_patch is not offered: {refused:?}");
    assert!(!t.root().join("x").exists());
    let (value, failed) = data(&client, "read", json!({"path": "missing.py"})).await;
    assert!(failed);
    assert_eq!(value["error"]["code"], "file_not_found");
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn dry_run_writes_nothing_and_undo_of_nothing_succeeds() {
    let t = TempTree::with(&[("notes.txt", "a\nb\n")]);
    let client = start(&t, &[]).await;
    // As `apply-patch undo`: nothing to undo is a success that undid nothing.
    let (value, failed) = data(&client, "undo", json!({})).await;
    assert!(!failed, "{value}");
    assert_eq!(
        (&value["ok"], &value["undone"]),
        (&json!(true), &Value::Null)
    );
    assert_eq!(value["files"], json!([]));
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-b\n+B\n*** End Patch\n";
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p, "dry_run": true})).await;
    assert!(!failed, "{value}");
    assert_eq!(value["files"][0]["path"], "notes.txt");
    assert_eq!(t.read_str("notes.txt"), "a\nb\n");
    assert_eq!(
        error_code(&client, "confirm", json!({"id": "nonsense"})).await,
        "unknown_preview"
    );
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn strict_balance_refuses_an_unbalancing_edit_over_mcp() {
    let t = TempTree::with(&[("f.rs", "fn f() {\n    g(1);\n}\n")]);
    let client = start(&t, &[]).await;
    call(&client, "read", json!({"path": "f.rs"})).await;
    let p = "*** Begin Patch\n*** Update File: f.rs\n@@\n-    g(1);\n+    g(1;\n*** End Patch\n";
    let args = json!({"patch": p, "strict_balance": true});
    assert_eq!(
        error_code(&client, "apply_patch", args).await,
        "unbalanced_edit"
    );
    assert_eq!(t.read_str("f.rs"), "fn f() {\n    g(1);\n}\n");
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    assert!(
        value["warnings"].to_string().contains("unbalanced_edit"),
        "{value}"
    );
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn read_around_serves_the_enclosing_function() {
    let t = TempTree::with(&[("f.rs", "use x;\n\nfn f() {\n    g(1);\n}\n")]);
    let client = start(&t, &[]).await;
    let r = call(&client, "read", json!({"path": "f.rs", "around": 4})).await;
    let v = r.structured_content.expect("data");
    assert_eq!((&v["start_line"], &v["end_line"]), (&3.into(), &5.into()));
    assert_eq!(v["around"]["kind"], "function");
    // Reading around counts as reading: the file can now be edited.
    let p = "*** Begin Patch\n*** Update File: f.rs\n@@\n-    g(1);\n+    g(2);\n*** End Patch\n";
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    let args = json!({"path": "f.rs", "around": 1});
    assert_eq!(error_code(&client, "read", args).await, "context_not_found");
    let args = json!({"path": "f.rs", "around": 4, "start_line": 1});
    assert_eq!(error_code(&client, "read", args).await, "usage");
    client.cancel().await.expect("the session closes");
}

/// The input schema of `tool` as the server lists it.
async fn input_schema(client: &Client, tool: &str) -> Value {
    let tools = client.list_all_tools().await.expect("tools/list");
    let t = tools
        .iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("{tool} is offered"));
    Value::Object(t.input_schema.as_ref().clone())
}

// Issue 15 item 1: a model's `post_check` text is never run; only the operator's checks are,
// picked by name (or by `true` when there is one).
#[tokio::test]
async fn a_model_supplied_command_never_runs() {
    let t = TempTree::with(&[("notes.txt", "a\nb\nc\n")]);
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-c\n+C\n*** End Patch\n";
    let pwn = "touch pwned";

    // Without --post-check: no parameter offered, and any post_check is refused.
    let client = start(&t, &[]).await;
    for tool in ["apply_patch", "edit"] {
        let props = &input_schema(&client, tool).await["properties"];
        assert!(props.get("post_check").is_none(), "{tool}: {props}");
        assert!(props.get("rollback_on_fail").is_none(), "{tool}: {props}");
    }
    call(&client, "read", json!({"path": "notes.txt"})).await;
    for choice in [json!(pwn), json!(true)] {
        let args = json!({"patch": p, "post_check": choice});
        assert_eq!(error_code(&client, "apply_patch", args).await, "usage");
    }
    let edit = json!({"edits": [{"op": "append", "path": "notes.txt", "content": "d\n"}],
                      "post_check": pwn});
    assert_eq!(error_code(&client, "edit", edit).await, "usage");
    assert!(!t.root().join("pwned").exists(), "the model's command ran");
    assert_eq!(t.read_str("notes.txt"), "a\nb\nc\n");
    client.cancel().await.expect("the session closes");

    // One operator check: a boolean; the model's text is still refused.
    let client = start(&t, &["--post-check", "touch checked"]).await;
    let schema = input_schema(&client, "apply_patch").await;
    assert_eq!(schema["properties"]["post_check"]["type"], "boolean");
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let args = json!({"patch": p, "post_check": pwn});
    assert_eq!(error_code(&client, "apply_patch", args).await, "usage");
    assert!(!t.root().join("pwned").exists(), "the model's command ran");
    let (value, failed) = data(
        &client,
        "apply_patch",
        json!({"patch": p, "post_check": true}),
    )
    .await;
    assert!(!failed, "{value}");
    assert_eq!(value["verification"]["status"], "passed", "{value}");
    assert_eq!(value["verification"]["command"], "touch checked");
    assert!(t.root().join("checked").exists());
    client.cancel().await.expect("the session closes");

    // Named checks: an enum of names; a failing one rolls back when asked.
    let named = [
        "--post-check",
        "fail=exit 1",
        "--post-check",
        "mark=touch marked",
    ];
    let client = start(&t, &named).await;
    let schema = input_schema(&client, "edit").await;
    assert_eq!(
        schema["properties"]["post_check"]["enum"],
        json!(["fail", "mark"])
    );
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let undo_c = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-C\n+c\n*** End Patch\n";
    for choice in [json!(pwn), json!(true), json!("touch marked")] {
        let args = json!({"patch": undo_c, "post_check": choice});
        assert_eq!(error_code(&client, "apply_patch", args).await, "usage");
    }
    let args = json!({"patch": undo_c, "post_check": "fail", "rollback_on_fail": true});
    assert_eq!(
        error_code(&client, "apply_patch", args).await,
        "post_check_failed"
    );
    assert_eq!(t.read_str("notes.txt"), "a\nb\nC\n");
    let args = json!({"patch": undo_c, "rollback_on_fail": true});
    assert_eq!(error_code(&client, "apply_patch", args).await, "usage");
    let (value, failed) = data(
        &client,
        "apply_patch",
        json!({"patch": undo_c, "post_check": "mark"}),
    )
    .await;
    assert!(!failed, "{value}");
    assert!(t.root().join("marked").exists());
    assert!(!t.root().join("pwned").exists(), "the model's command ran");
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn the_server_commits_with_the_durability_of_its_environment() {
    let t = TempTree::with(&[("notes.txt", "a\nb\n")]);
    let client = start_durable(&t, vec!["mcp".into()], Some("atomic")).await;
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-b\n+B\n*** End Patch\n";
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    assert_eq!(t.read_str("notes.txt"), "a\nB\n");
    client.cancel().await.expect("the session closes");
    // A mode that does not exist is the operator's mistake: the server does not start.
    let out = t
        .command(env!("CARGO_BIN_EXE_apply-patch"))
        .arg("mcp")
        .env("APPLY_PATCH_DURABILITY", "relaxed")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run apply-patch mcp");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("APPLY_PATCH_DURABILITY"), "{stderr}");
}

#[test]
fn operator_post_check_flags_are_checked() {
    let t = TempTree::new();
    let out = t.run(&["mcp", "--read-only", "--post-check", "true"], "");
    assert_eq!(out.status, 2, "{}", out.normalized());
    let out = t.run(&["mcp", "--post-check", "a=x", "--post-check", "a=y"], "");
    assert_eq!(out.status, 2, "{}", out.normalized());
    assert!(out.stderr.contains("named 'a'"), "{}", out.normalized());
}

// Issue 15 item 2: `read` numbers lines from 1, in the schema and in the handler.
#[tokio::test]
async fn read_line_numbers_count_from_one() {
    let t = TempTree::with(&[("f.txt", "one\ntwo\nthree\n")]);
    let client = start(&t, &[]).await;
    let schema = input_schema(&client, "read").await;
    for field in ["start_line", "end_line", "around"] {
        assert_eq!(
            schema["properties"][field]["minimum"], 1,
            "{field}: {schema}"
        );
    }
    assert_eq!(
        input_schema(&client, "range").await["properties"]["line"]["minimum"],
        1
    );
    for args in [
        json!({"path": "f.txt", "start_line": 0}),
        json!({"path": "f.txt", "start_line": 0, "end_line": 1}),
        json!({"path": "f.txt", "end_line": 0}),
        json!({"path": "f.txt", "start_line": 3, "end_line": 2}),
        json!({"path": "f.txt", "around": 0}),
        json!({"path": "f.txt", "start_line": -1}),
    ] {
        assert_eq!(
            error_code(&client, "read", args.clone()).await,
            "usage",
            "{args}"
        );
    }
    let args = json!({"path": "f.txt", "line": 0});
    assert_eq!(error_code(&client, "range", args).await, "usage");
    let (value, failed) = data(
        &client,
        "read",
        json!({"path": "f.txt", "start_line": 2, "end_line": 2}),
    )
    .await;
    assert!(!failed, "{value}");
    assert_eq!(
        (&value["start_line"], &value["lines"]),
        (&json!(2), &json!(["two"]))
    );
    client.cancel().await.expect("the session closes");
}

// Issue 15 item 3: invalid arguments are the JSON report (`usage`), not rmcp's plain text.
#[tokio::test]
async fn invalid_arguments_are_the_json_report() {
    let t = TempTree::with(&[("f.txt", "one\n")]);
    let client = start(&t, &[]).await;
    for (tool, args) in [
        ("read", json!({})),
        ("read", json!({"path": "f.txt", "start_line": "two"})),
        ("apply_patch", json!({"patch": 7})),
        ("apply_patch", json!({"patch": "x", "max_risk": -1})),
        ("edit", json!({"edits": "nope"})),
        ("confirm", json!({})),
        ("range", json!({"path": "f.txt"})),
        ("check_balance", json!({"file": "f.txt"})),
    ] {
        let r = call(&client, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}");
        let value = r.structured_content.expect("a JSON report");
        assert_eq!(value["ok"], false, "{tool} {args}: {value}");
        assert_eq!(value["error"]["code"], "usage", "{tool} {args}: {value}");
        let message = value["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.starts_with(&format!("invalid arguments for {tool}: ")),
            "{message}"
        );
        let text = r.content[0].as_text().expect("text").text.clone();
        let from_text: Value = serde_json::from_str(&text).expect("the text is the same JSON");
        assert_eq!(from_text, value);
    }
    client.cancel().await.expect("the session closes");
}

/// The tool names a text mentions in backquotes.
fn named_tools(text: &str) -> Vec<&'static str> {
    [
        "read",
        "apply_patch",
        "edit",
        "preview",
        "confirm",
        "undo",
        "range",
        "check_balance",
    ]
    .into_iter()
    .filter(|n| text.contains(&format!("`{n}`")))
    .collect()
}

// Issue 15 items 4 and 5: in every mode the instructions name exactly the tools offered, and
// each tool has annotations, standard schemas and an output schema its results follow.
#[tokio::test]
async fn instructions_and_tools_agree_in_every_mode() {
    let t = TempTree::with(&[("f.txt", "one\n")]);
    for mode in [&[][..], &["--read-only"][..], &["--post-check", "true"][..]] {
        let client = start(&t, mode).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let mut offered: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        offered.sort();
        let instructions = client
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .expect("instructions");
        let mut named = named_tools(&instructions);
        named.sort();
        assert_eq!(named, offered, "{mode:?}: {instructions}");
        assert_eq!(
            instructions.contains("post_check"),
            mode.contains(&"--post-check"),
            "{mode:?}: {instructions}"
        );
        for tool in &tools {
            let a = tool.annotations.as_ref().expect("annotations");
            let reading =
                ["read", "range", "check_balance", "preview"].contains(&tool.name.as_ref());
            assert_eq!(a.read_only_hint, Some(reading), "{}", tool.name);
            assert!(a.idempotent_hint.is_some() && a.open_world_hint == Some(false));
            assert_eq!(
                a.destructive_hint,
                (!reading).then_some(true),
                "{}",
                tool.name
            );
            let schema = serde_json::to_string(&*tool.input_schema).expect("json");
            assert!(!schema.contains("\"format\""), "{}: {schema}", tool.name);
            assert!(!schema.contains("\"null\""), "{}: {schema}", tool.name);
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(output["type"], "object", "{}", tool.name);
        }
        let (value, failed) = data(&client, "read", json!({"path": "f.txt"})).await;
        assert!(!failed);
        let read = tools.iter().find(|t| t.name == "read").expect("read");
        let required = read.output_schema.as_ref().expect("schema")["anyOf"][0]["required"].clone();
        for field in required.as_array().expect("required fields") {
            let field = field.as_str().expect("a name");
            assert!(value.get(field).is_some(), "read lacks {field}: {value}");
        }
        client.cancel().await.expect("the session closes");
    }
}

// Issue 15 item 5 (and issue 12's window): `window` reaches the locator from the MCP tools.
#[tokio::test]
async fn window_argument_narrows_the_search() {
    let mut text = String::new();
    for n in 1..=50 {
        text.push_str(if n == 5 || n == 40 { "x\n" } else { "line\n" });
    }
    let t = TempTree::with(&[("w.txt", &text)]);
    let client = start(&t, &[]).await;
    for tool in ["apply_patch", "edit", "preview"] {
        let schema = input_schema(&client, tool).await;
        assert_eq!(schema["properties"]["window"]["type"], "integer", "{tool}");
    }
    call(&client, "read", json!({"path": "w.txt"})).await;
    let p = "--- a/w.txt\n+++ b/w.txt\n@@ -10,3 +10,3 @@\n line\n-x\n+y\n line\n";
    // The match at line 4 is within the default 20 lines of the hint 10; the one at 39 is not.
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p, "dry_run": true})).await;
    assert!(!failed, "{value}");
    assert_eq!(value["files"][0]["hunks"][0]["line"], 4, "{value}");
    for tool in ["apply_patch", "preview"] {
        let args = json!({"patch": p, "dry_run": true, "window": 2});
        let args = if tool == "preview" {
            json!({"patch": p, "window": 2})
        } else {
            args
        };
        assert_eq!(
            error_code(&client, tool, args).await,
            "ambiguous_match",
            "{tool}"
        );
    }
    assert_eq!(t.read_str("w.txt"), text);
    client.cancel().await.expect("the session closes");
}

// Issue 24 item 1: `fuzz` reaches the locator from the MCP tools (0 turns it off).
#[tokio::test]
async fn fuzz_argument_reaches_the_locator() {
    let text = "x\na\nb\nc\nd\ny\n";
    let t = TempTree::with(&[("f.txt", text)]);
    let client = start(&t, &[]).await;
    for tool in ["apply_patch", "preview"] {
        let schema = input_schema(&client, tool).await;
        assert_eq!(schema["properties"]["fuzz"]["type"], "integer", "{tool}");
    }
    call(&client, "read", json!({"path": "f.txt"})).await;
    // `zero` and `four` are not in the file: the hunk is found once they are ignored.
    let p = "*** Begin Patch\n*** Update File: f.txt\n@@\n zero\n a\n-b\n+B\n c\n four\n*** End Patch\n";
    for tool in ["apply_patch", "preview"] {
        let args = match tool {
            "preview" => json!({"patch": p, "fuzz": 0}),
            _ => json!({"patch": p, "dry_run": true, "fuzz": 0}),
        };
        assert_eq!(
            error_code(&client, tool, args).await,
            "context_not_found",
            "{tool}"
        );
    }
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    assert_eq!(value["files"][0]["hunks"][0]["fuzz"], 2, "{value}");
    assert_eq!(value["warnings"][0]["code"], "fuzz", "{value}");
    assert_eq!(t.read_str("f.txt"), "x\na\nB\nc\nd\ny\n");
    client.cancel().await.expect("the session closes");
}

// The README's client configuration is the one this test starts the server from.
#[tokio::test]
async fn the_readme_client_configuration_works() {
    let readme = include_str!("../../README.md");
    let section = readme
        .split("### The MCP server")
        .nth(1)
        .expect("README has the MCP server section");
    let block = section
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has a JSON client configuration");
    let config: Value = serde_json::from_str(block).expect("the configuration is JSON");
    let server = &config["mcpServers"]["apply-patch"];
    assert_eq!(server["command"], "apply-patch");
    let t = TempTree::with(&[("f.txt", "one\n")]);
    let root = t.root().display().to_string();
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| {
            a.as_str()
                .expect("string args")
                .replace("/path/to/project", &root)
        })
        .collect();
    assert!(args.contains(&root), "the example names a root: {args:?}");
    let client = start_with(&t, args).await;
    let schema = input_schema(&client, "apply_patch").await;
    assert_eq!(
        schema["properties"]["post_check"]["enum"],
        json!(["check", "test"])
    );
    let (value, failed) = data(&client, "read", json!({"path": "f.txt"})).await;
    assert!(!failed, "{value}");
    client.cancel().await.expect("the session closes");
}

// The session reads back what a write committed, through the run's own tree (one discovery of
// the repository per call): a line-number edit right after a write that changed the line count
// goes ahead without a new `read`, a renamed file is known by its new path only, and an edit of
// a file changed behind the session's back after its write is still refused.
#[tokio::test]
async fn the_session_knows_the_files_it_wrote() {
    let t = TempTree::with(&[
        ("f.txt", "aaa1\naaa2\naaa3\naaa4\naaa5\n"),
        ("g.txt", "g\n"),
    ]);
    t.git_dir();
    let client = start(&t, &[]).await;
    let (value, failed) = data(&client, "read", json!({"path": "f.txt"})).await;
    assert!(!failed, "{value}");
    // Two lines more: the read's count (5) is no longer the file's.
    let grow =
        "*** Begin Patch\n*** Update File: f.txt\n@@\n aaa2\n+bbb1\n+bbb2\n aaa3\n*** End Patch\n";
    let (report, failed) = data(&client, "apply_patch", json!({"patch": grow})).await;
    assert!(!failed, "{report}");
    let edit = json!({"edits": [{"op": "line_range", "path": "f.txt", "start_line": 5,
        "end_line": 7, "expected": "aaa3\naaa4\naaa5\n", "new_content": "ccc3\nccc4\nccc5\n"}]});
    let (report, failed) = data(&client, "edit", edit).await;
    assert!(!failed, "{report}");
    assert_eq!(
        t.read_str("f.txt"),
        "aaa1\naaa2\nbbb1\nbbb2\nccc3\nccc4\nccc5\n"
    );

    // Moved by a patch: the new path is known, the old one forgotten.
    let (value, failed) = data(&client, "read", json!({"path": "g.txt"})).await;
    assert!(!failed, "{value}");
    let mv =
        "*** Begin Patch\n*** Update File: g.txt\n*** Move to: h.txt\n@@\n-g\n+h\n*** End Patch\n";
    let (report, failed) = data(&client, "apply_patch", json!({"patch": mv})).await;
    assert!(!failed, "{report}");
    let again = "*** Begin Patch\n*** Update File: h.txt\n@@\n-h\n+i\n*** End Patch\n";
    let (report, failed) = data(&client, "apply_patch", json!({"patch": again})).await;
    assert!(!failed, "{report}");
    assert_eq!(t.read_str("h.txt"), "i\n");
    t.write("g.txt", b"g again\n");
    let old = "*** Begin Patch\n*** Update File: g.txt\n@@\n-g again\n+x\n*** End Patch\n";
    assert_eq!(
        error_code(&client, "apply_patch", json!({"patch": old})).await,
        "not_read"
    );

    // Changed behind the session's back after its write, to another line count: refused.
    t.write("f.txt", b"only\n");
    let edit = json!({"edits": [{"op": "line_range", "path": "f.txt", "start_line": 1,
        "end_line": 3, "expected": "aaa1\naaa2\nbbb1\n", "new_content": "x\n"}]});
    assert_eq!(error_code(&client, "edit", edit).await, "stale_file");
    client.cancel().await.expect("the session closes");
}

#[tokio::test]
async fn a_patch_sent_twice_over_mcp_is_applied_once() {
    let t = TempTree::with(&[("app.py", APP)]);
    let client = start(&t, &[]).await;
    call(&client, "read", json!({"path": "app.py"})).await;
    let p = "*** Begin Patch\n*** Update File: app.py\n@@\n+import os\n def load(path):\n*** End Patch\n";
    let (first, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{first}");
    let (again, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{again}");
    assert_eq!(again["warnings"][0]["code"], "already_applied", "{again}");
    assert_eq!(t.read_str("app.py"), format!("import os\n{APP}"));
    client.cancel().await.expect("the session closes");
}

/// Issue 25 item 3: one place decides every option rule, so the same bad option is refused
/// with the same code and message by the command line and by the MCP tools (which took
/// `window: 0` before); only the hint names the option each one's way.
#[tokio::test]
async fn the_same_bad_option_is_refused_alike_by_the_cli_and_mcp() {
    let t = TempTree::with(&[("notes.txt", "a\nb\nc\n")]);
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-b\n+B\n*** End Patch\n";
    let cli = t.run(&["--json", "--window", "0"], p).json();
    assert_eq!(cli["error"]["code"], "usage", "{cli}");
    let client = start(&t, &[]).await;
    call(&client, "read", json!({"path": "notes.txt"})).await;
    for (tool, args) in [
        ("apply_patch", json!({"patch": p, "window": 0})),
        (
            "apply_patch",
            json!({"patch": p, "window": 0, "dry_run": true}),
        ),
        ("preview", json!({"patch": p, "window": 0})),
    ] {
        let (value, failed) = data(&client, tool, args).await;
        assert!(failed, "{tool}: {value}");
        let (ours, theirs) = (&value["error"], &cli["error"]);
        assert_eq!(
            (&ours["code"], &ours["message"]),
            (&theirs["code"], &theirs["message"]),
            "{tool}"
        );
        assert_eq!(
            ours["hint"]
                .as_str()
                .map(|h| h.starts_with("give window: N")),
            Some(true)
        );
    }
    assert_eq!(
        cli["error"]["hint"]
            .as_str()
            .map(|h| h.starts_with("give --window N")),
        Some(true),
        "{cli}"
    );
    assert_eq!(t.read_str("notes.txt"), "a\nb\nc\n");
    client.cancel().await.expect("the session closes");
}

/// Issue 27 item 2: a hint that names an option names it as the caller spells it — the
/// command line's flag, the MCP tools' argument, the JavaScript API's option (the npm
/// package runs the command line with `--front-end javascript`).
#[tokio::test]
async fn hints_name_options_in_each_callers_words() {
    let t = TempTree::with(&[("app.py", APP)]);
    let read = t.run(&["read", "app.py", "--json"], "").json();
    let base = read["base"].as_str().expect("base").to_string();
    t.write("app.py", format!("{APP}# edited\n").as_bytes());
    let p = patch(&base, "message = 'hello ' + name", "message = 'hi ' + name");
    let hint = |args: &[&str], patch: &str| {
        let out = t.run(args, patch).json();
        out["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let cli = hint(&["--json"], &p);
    assert!(cli.contains("run again with --rebase"), "{cli}");
    let js = hint(&["--json", "--front-end", "javascript"], &p);
    assert!(js.contains("run again with rebase: true"), "{js}");
    assert!(!js.contains("--rebase"), "{js}");
    let fresh = TempTree::with(&[("a.txt", "one\ntwo\n")]);
    let risky = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n";
    let risk = |args: &[&str]| {
        let out = fresh.run(args, risky).json();
        assert_eq!(out["error"]["code"], "risk_exceeded", "{out}");
        out["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(risk(&["--json", "--max-risk", "0"]).ends_with("a higher --max-risk"));
    assert!(
        risk(&["--json", "--max-risk", "0", "--front-end", "javascript"])
            .ends_with("a higher maxRisk")
    );
    let client = start(&fresh, &[]).await;
    call(&client, "read", json!({"path": "a.txt"})).await;
    let (value, failed) = data(
        &client,
        "apply_patch",
        json!({"patch": risky, "max_risk": 0}),
    )
    .await;
    assert!(failed, "{value}");
    let hint = value["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.ends_with("a higher max_risk"), "{hint}");
    assert_eq!(fresh.read_str("a.txt"), "one\ntwo\n");
    client.cancel().await.expect("the session closes");
}

/// Crashes a commit of `patch` in `t` at the first step that leaves a journal; returns
/// whether one was left (the failpoint `commit:K:abort` of the test build).
fn crash_with_journal(t: &TempTree, patch: &str) -> bool {
    let journal = t.root().join(".apply-patch-txn/journal.json");
    for k in 1..40 {
        let out = t.run_with_failpoint(&[], patch, &format!("commit:{k}:abort"));
        if journal.exists() {
            return true;
        }
        assert_ne!(out.status, 0, "step {k}: the commit ran through");
    }
    false
}

/// Issue 25 item 1 (`read`): `read` is one library function that recovers a crashed
/// transaction first in every front end. Before, only the MCP tool recovered: the command
/// line served the half-applied tree.
#[tokio::test]
async fn read_recovers_a_crashed_transaction_in_every_front_end() {
    let two = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n\
               *** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n";
    let recovered = |warnings: &Value| {
        warnings
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w["code"] == "recovered"))
    };
    let whole = |t: &TempTree| {
        let (a, b) = (t.read_str("a.txt"), t.read_str("b.txt"));
        assert!(
            (a == "one\n" && b == "bee\n") || (a == "ONE\n" && b == "BEE\n"),
            "wholly old or wholly new: {a:?} {b:?}"
        );
    };
    // The command line.
    let t = TempTree::with(&[("a.txt", "one\n"), ("b.txt", "bee\n")]);
    assert!(crash_with_journal(&t, two), "a crash left a journal");
    let out = t.run(&["read", "a.txt", "--json"], "");
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    let value = out.json();
    assert!(recovered(&value["warnings"]), "{value}");
    assert!(!t.root().join(".apply-patch-txn/journal.json").exists());
    whole(&t);
    assert_eq!(value["lines"][0], t.read_str("a.txt").trim_end());
    // Without --json, the recovery is a warning on standard error.
    let t = TempTree::with(&[("a.txt", "one\n"), ("b.txt", "bee\n")]);
    assert!(crash_with_journal(&t, two));
    let out = t.run(&["read", "b.txt"], "");
    assert!(
        out.stderr.starts_with("warning: recovered: "),
        "{}",
        out.stderr
    );
    whole(&t);
    // The MCP tool (the same function).
    let t = TempTree::with(&[("a.txt", "one\n"), ("b.txt", "bee\n")]);
    assert!(crash_with_journal(&t, two));
    let client = start(&t, &[]).await;
    let r = call(&client, "read", json!({"path": "a.txt"})).await;
    assert_ne!(r.is_error, Some(true));
    let texts: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("warning: recovered: ")),
        "{texts:?}"
    );
    whole(&t);
    client.cancel().await.expect("the session closes");
}

// Issue 25 item 2: `apply-patch mcp --formatter GLOB=CMD` is the operator's; every write of
// the tools pipes the matching files through it, and no tool argument names one.
#[cfg(unix)]
#[tokio::test]
async fn the_operators_formatter_formats_what_the_tools_write() {
    let t = TempTree::with(&[("notes.txt", "a\nb\n")]);
    let client = start(&t, &["--formatter", "*.txt=tr a-z A-Z"]).await;
    call(&client, "read", json!({"path": "notes.txt"})).await;
    let p = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-b\n+c\n*** End Patch\n";
    let (value, failed) = data(&client, "apply_patch", json!({"patch": p})).await;
    assert!(!failed, "{value}");
    assert_eq!(t.read_str("notes.txt"), "A\nC\n");
    let schema = input_schema(&client, "apply_patch").await;
    assert!(
        !schema.to_string().contains("formatter"),
        "no tool argument names a formatter: {schema}"
    );
    client.cancel().await.expect("the session closes");
}

#[test]
fn operator_formatter_flags_are_checked() {
    let t = TempTree::new();
    let out = t.run(&["mcp", "--formatter", "*.txt"], "");
    assert_eq!(out.status, 2, "{}", out.normalized());
    assert!(
        out.stderr.contains("is not a formatter"),
        "{}",
        out.normalized()
    );
    let out = t.run(&["mcp", "--read-only", "--formatter", "*.txt=cat"], "");
    assert_eq!(out.status, 2, "{}", out.normalized());
}
