//! Stage: agent MCP. What the server offers, derived in one place from its mode: the
//! operator's post-checks (the only commands a tool may run), each tool's input schema
//! (standard JSON Schema, the post-check choice), annotations, output schema and description,
//! and the server's instructions, written from the tools actually offered so that the two
//! never disagree.
//!
//! Pure: no I/O, no tool logic. The model never chooses a command: it may only pick one of
//! the checks the operator named when starting the server.

use super::AgentError;
use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

use crate::agent::tools;

/// One check the operator allows: `--post-check NAME=CMD` (or `--post-check CMD`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostCheck {
    /// What the model calls it (`check`, `check2`, … when the operator gave no name).
    pub name: String,
    /// The command, run by `sh -c` in the root; never shown to `sh` from the model.
    pub command: String,
}

/// The checks of one server, in the order the operator gave them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostChecks(Vec<PostCheck>);

/// What a model may send as `post_check`: `true` (the only check) or a check's name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum PostCheckChoice {
    Run(bool),
    Named(String),
}

impl PostChecks {
    /// Parse the operator's `--post-check` values: `NAME=CMD` when the text before the first
    /// `=` is a name (lowercase letters, digits, `-`, `_`, starting with a letter), else the
    /// whole value is the command (so `FOO=1 make` and `cargo test --x=y` stay commands).
    pub fn parse(values: &[String]) -> Result<PostChecks, AgentError> {
        let mut checks: Vec<PostCheck> = Vec::new();
        let mut unnamed = 0;
        for value in values {
            let (name, command) = match value.split_once('=') {
                Some((name, command)) if is_name(name) => (name.to_string(), command),
                _ => {
                    unnamed += 1;
                    let name = match unnamed {
                        1 => "check".to_string(),
                        n => format!("check{n}"),
                    };
                    (name, value.as_str())
                }
            };
            if command.trim().is_empty() {
                return Err(AgentError::CheckWithoutCommand {
                    value: value.to_string(),
                });
            }
            if checks.iter().any(|c| c.name == name) {
                return Err(AgentError::DuplicateCheck { name });
            }
            checks.push(PostCheck {
                name,
                command: command.to_string(),
            });
        }
        Ok(PostChecks(checks))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[cfg(test)]
    pub fn checks(&self) -> &[PostCheck] {
        &self.0
    }

    /// The command a tool call's `post_check` asks for, if any (`rollback_on_fail` without
    /// one is the option rule every front end shares: `pipeline::RawOptions::resolve`).
    /// Refuses (`usage`) anything but a choice among the operator's checks: whatever the
    /// model sends, only an operator's command can come out of here.
    pub fn resolve(
        &self,
        choice: Option<&PostCheckChoice>,
    ) -> Result<Option<String>, AgentError> {
        let found = match choice {
            None | Some(PostCheckChoice::Run(false)) => None,
            Some(_) if self.is_empty() => {
                return Err(AgentError::NoChecks { hint: self.hint() })
            }
            Some(PostCheckChoice::Run(true)) => match self.0.as_slice() {
                [only] => Some(only),
                _ => {
                    return Err(AgentError::AmbiguousCheck {
                        names: self.names(),
                        hint: self.hint(),
                    })
                }
            },
            Some(PostCheckChoice::Named(name)) => match self.0.iter().find(|c| &c.name == name) {
                Some(check) => Some(check),
                None => {
                    return Err(AgentError::UnknownCheck {
                        name: shorten(name),
                        names: self.names(),
                        hint: self.hint(),
                    })
                }
            },
        };
        Ok(found.map(|c| c.command.clone()))
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|c| c.name.as_str()).collect();
        names.join(", ")
    }

    fn hint(&self) -> String {
        if self.is_empty() {
            "send the change without post_check".to_string()
        } else {
            format!(
                "post_check takes {}; the commands are the operator's",
                self.choice_words()
            )
        }
    }

    fn choice_words(&self) -> String {
        match self.0.as_slice() {
            [_] => "true or false".to_string(),
            _ => format!("one of the names {}", self.names()),
        }
    }

    /// The `post_check` property of a writing tool's input schema; `None` without checks.
    fn schema(&self) -> Option<Value> {
        let listed: Vec<String> = self
            .0
            .iter()
            .map(|c| format!("`{}` runs `{}`", c.name, c.command))
            .collect();
        let description = format!(
            "Run the operator's check after writing, in the project root; its outcome is the \
             report's `verification`. {}.",
            listed.join("; ")
        );
        match self.0.as_slice() {
            [] => None,
            [_] => Some(json!({"type": "boolean", "default": false, "description": description})),
            _ => {
                let names: Vec<&str> = self.0.iter().map(|c| c.name.as_str()).collect();
                Some(json!({"type": "string", "enum": names, "description": description}))
            }
        }
    }

    /// The sentence the writing tools' descriptions add about the checks.
    fn describe(&self) -> String {
        let listed: Vec<String> = self
            .0
            .iter()
            .map(|c| format!("`{}` (`{}`)", c.name, c.command))
            .collect();
        format!(
            "post_check ({}): run the operator's check {} after writing; its outcome is \
             `verification` (a failed check leaves the change written, with isError). \
             rollback_on_fail: undo the change when the check fails. post_check_failed: the \
             check failed and the change was rolled back; read `error.details` (stdout_tail, \
             stderr_tail), fix, send again.",
            self.choice_words(),
            listed.join(" or ")
        )
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// At most 60 characters of what a model sent, for an error message.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The tools that write the work tree and so may take a post-check.
const CHECKING_TOOLS: [&str; 2] = ["apply_patch", "edit"];

/// Finish a tool as the router built it: standard schemas, the post-check choice, its
/// annotations, output schema and description.
pub fn shape(tool: &mut Tool, checks: &PostChecks) {
    let mut schema = tool.input_schema.as_ref().clone();
    standardise(&mut schema);
    if CHECKING_TOOLS.contains(&tool.name.as_ref()) {
        if let (Some(Value::Object(props)), Some(check)) =
            (schema.get_mut("properties"), checks.schema())
        {
            props.insert("post_check".into(), check);
            props.insert(
                "rollback_on_fail".into(),
                json!({"type": "boolean", "default": false,
                       "description": "Undo the change when the post_check fails (post_check_failed)."}),
            );
        }
        if !checks.is_empty() {
            let text = format!(
                "{}\n{}",
                tool.description.as_deref().unwrap_or(""),
                checks.describe()
            );
            tool.description = Some(Cow::Owned(text));
        }
    }
    // Some clients want `properties` on every object schema, even an empty one (`undo`).
    schema.entry("properties").or_insert_with(|| json!({}));
    tool.input_schema = Arc::new(schema);
    tool.annotations = Some(annotations(&tool.name));
    tool.output_schema = output_schema(&tool.name).map(Arc::new);
}

/// Make a schemars schema plain JSON Schema: drop the non-standard integer formats (`uint`,
/// `uint32`, `int64`…; the bounds say it already) and the `null` of optional properties
/// (leaving them out is how a model says "default").
pub fn standardise(schema: &mut JsonObject) {
    if let Some(Value::String(f)) = schema.get("format") {
        let numeric = ["int", "uint", "float", "double"].iter().any(|p| {
            f.strip_prefix(p)
                .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
        });
        if numeric {
            schema.remove("format");
        }
    }
    let required: Vec<String> = match schema.get("required") {
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let Value::Object(p) = prop {
                if !required.contains(name) {
                    drop_null_type(p);
                }
            }
        }
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(o) => standardise(o),
            Value::Array(items) => items.iter_mut().for_each(|v| {
                if let Value::Object(o) = v {
                    standardise(o)
                }
            }),
            _ => {}
        }
    }
}

fn drop_null_type(p: &mut JsonObject) {
    if let Some(Value::Array(types)) = p.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let kept = match kept.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(kept),
        };
        p.insert("type".into(), kept);
    }
    if p.get("default") == Some(&Value::Null) {
        p.remove("default");
    }
}

/// What a client may assume of each tool. Nothing reaches outside the root (not open-world);
/// the writing tools may delete files (destructive) and repeat an effect (`edit`'s append,
/// `undo` of the one before), so none of them is idempotent.
fn annotations(name: &str) -> ToolAnnotations {
    let (read_only, destructive, idempotent) = match name {
        // `preview` keeps a preview record in the state place, never in the work tree.
        "read" | "range" | "check_balance" | "preview" => (true, false, true),
        // A second confirm of the same id is refused: no further effect.
        "confirm" => (false, true, true),
        _ => (false, true, false),
    };
    let a = ToolAnnotations::new()
        .read_only(read_only)
        .idempotent(idempotent)
        .open_world(false);
    if read_only {
        a
    } else {
        a.destructive(destructive)
    }
}

/// The shape of a tool's `structuredContent`: its success, or the refusal every tool shares
/// (`{ok: false, error}` with `isError`), so that every result conforms.
fn output_schema(name: &str) -> Option<JsonObject> {
    let success = match name {
        "read" => tools::read_output_schema(),
        "range" => tools::range_output_schema(),
        "check_balance" => tools::balance_output_schema(),
        "apply_patch" | "edit" | "preview" | "confirm" => tools::report_output_schema(),
        "undo" => tools::undo_output_schema(),
        _ => return None,
    };
    let Value::Object(mut schema) = success else {
        return None;
    };
    let required = schema.remove("required").unwrap_or_else(|| json!([]));
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props
            .entry("ok")
            .or_insert_with(|| json!({"type": "boolean"}));
        props
            .entry("error")
            .or_insert_with(|| json!({"type": ["object", "null"]}));
    }
    schema.insert(
        "anyOf".into(),
        json!([
            {"required": required},
            {"required": ["ok", "error"],
             "properties": {"ok": {"const": false}, "error": {"type": "object"}}}
        ]),
    );
    Some(schema)
}

/// The server's instructions, from the tools it offers: a mode that lacks a tool never
/// names it.
pub fn instructions(offered: &[Tool], checks: &PostChecks) -> String {
    let has = |n: &str| offered.iter().any(|t| t.name == n);
    let mut parts = vec![tools::INSTRUCTIONS_INTRO.to_string()];
    let writers: Vec<&str> = [
        ("apply_patch", tools::USE_APPLY_PATCH),
        ("edit", tools::USE_EDIT),
    ]
    .into_iter()
    .filter(|(n, _)| has(n))
    .map(|(_, text)| text)
    .collect();
    if writers.is_empty() {
        parts.push(tools::READ_ONLY_MODE.to_string());
    } else {
        parts.push(format!(
            "{} {}.",
            tools::READ_BEFORE_EDIT,
            writers.join(" or ")
        ));
        parts.push(tools::PASS_BASE.to_string());
    }
    for (tool, text) in [
        ("preview", tools::USE_PREVIEW),
        ("undo", tools::USE_UNDO),
        ("range", tools::USE_RANGE),
        ("check_balance", tools::USE_CHECK_BALANCE),
    ] {
        if has(tool) {
            parts.push(text.to_string());
        }
    }
    if !writers.is_empty() && !checks.is_empty() {
        parts.push(format!(
            "After writing, `post_check` runs one of the operator's checks ({}); you cannot run \
             other commands.",
            checks.names()
        ));
    }
    parts.push(tools::ON_RESULT.to_string());
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use crate::ErrorCode;
    use super::*;

    fn checks(values: &[&str]) -> PostChecks {
        let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
        PostChecks::parse(&values).expect("valid flags")
    }

    #[test]
    fn operator_flags_name_their_checks() {
        let c = checks(&[
            "cargo check -q",
            "test=cargo test",
            "FOO=1 make",
            "cargo b --x=y",
        ]);
        let pairs: Vec<(&str, &str)> = c
            .checks()
            .iter()
            .map(|c| (c.name.as_str(), c.command.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("check", "cargo check -q"),
                ("test", "cargo test"),
                ("check2", "FOO=1 make"),
                ("check3", "cargo b --x=y")
            ]
        );
        let dup = PostChecks::parse(&["a=x".into(), "a=y".into()]);
        assert_eq!(dup.map_err(|e| e.code()), Err(ErrorCode::Usage));
        let empty = PostChecks::parse(&["lint=".into()]);
        assert_eq!(empty.map_err(|e| e.code()), Err(ErrorCode::Usage));
    }

    #[test]
    fn only_an_operator_command_comes_out() {
        let none = PostChecks::default();
        let one = checks(&["cargo check -q"]);
        let two = checks(&["lint=make lint", "test=make test"]);
        let named = |s: &str| PostCheckChoice::Named(s.to_string());
        let run = PostCheckChoice::Run(true);
        assert_eq!(none.resolve(None).ok(), Some(None));
        assert_eq!(
            none.resolve(Some(&PostCheckChoice::Run(false))).ok(),
            Some(None)
        );
        for (c, choice) in [
            (&none, named("touch pwned")),
            (&none, run.clone()),
            (&one, named("touch pwned")),
            (&two, named("touch pwned")),
            (&two, run.clone()),
        ] {
            let e = c.resolve(Some(&choice)).expect_err("refused");
            assert_eq!(e.code(), ErrorCode::Usage, "{choice:?}");
        }
        assert_eq!(
            one.resolve(Some(&run)).ok(),
            Some(Some("cargo check -q".to_string()))
        );
        assert_eq!(
            one.resolve(Some(&named("check"))).ok(),
            Some(Some("cargo check -q".to_string()))
        );
        assert_eq!(
            two.resolve(Some(&named("test"))).ok(),
            Some(Some("make test".to_string()))
        );
    }

    #[test]
    fn schemas_become_standard_json_schema() {
        let mut schema = json!({
            "type": "object",
            "required": ["line"],
            "properties": {
                "line": {"type": "integer", "format": "uint", "minimum": 1},
                "max": {"type": ["integer", "null"], "format": "uint32", "default": null},
                "name": {"type": "string", "format": "uri"},
                "nested": {"type": "array", "items": {"type": "integer", "format": "int64"}}
            }
        });
        let Value::Object(ref mut o) = schema else {
            unreachable!("built as an object")
        };
        standardise(o);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "required": ["line"],
                "properties": {
                    "line": {"type": "integer", "minimum": 1},
                    "max": {"type": "integer"},
                    "name": {"type": "string", "format": "uri"},
                    "nested": {"type": "array", "items": {"type": "integer"}}
                }
            })
        );
    }

    #[test]
    fn instructions_name_only_offered_tools() {
        let tool = |n: &'static str| Tool::new(n, "", Arc::new(JsonObject::new()));
        let reading = [tool("read"), tool("range"), tool("check_balance")];
        let text = instructions(&reading, &PostChecks::default());
        for absent in ["apply_patch", "`edit`", "preview", "undo", "post_check"] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
        assert!(text.contains("`read`"), "{text}");
        let mut all = reading.to_vec();
        all.extend(["apply_patch", "edit", "preview", "confirm", "undo"].map(tool));
        let text = instructions(&all, &checks(&["cargo check -q"]));
        for present in [
            "apply_patch",
            "`edit`",
            "preview",
            "undo",
            "post_check",
            "check",
        ] {
            assert!(text.contains(present), "{present} not in {text}");
        }
        assert!(!text.contains("cargo check"), "{text}");
    }
}
