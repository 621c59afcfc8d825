//! Stage: report (agent commands). What the command line prints for the agent features —
//! `read`, an apply with agent options, `confirm`, `chip` and `mcp` — as (stdout, stderr,
//! status), so the binary's `cli` only dispatches. Never writes the work tree itself.

use std::path::Path;

use crate::agent::read::{read_file, LineRange};
use crate::agent::run::{self, AgentOptions, AgentReport, ConfirmReport};
use crate::agent::{AgentState, McpPermission};
use crate::apply::ApplyOptions;
use crate::error::Error;
use crate::report::{error_text, Report, Style};

/// What a command prints and its exit status.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub status: u8,
}

impl Output {
    /// A refusal before anything ran (`--json`: the one JSON object).
    pub fn error(error: Error, json: bool, style: Style) -> Output {
        let status = error.exit_status();
        if json {
            let report = Report::failure(error, Vec::new(), Vec::new());
            return Output {
                stdout: report.to_json().into_bytes(),
                stderr: String::new(),
                status,
            };
        }
        Output {
            stdout: Vec::new(),
            stderr: error_text(&error, style),
            status,
        }
    }

    fn json(value: &impl serde::Serialize, status: u8) -> Output {
        let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
        text.push('\n');
        Output {
            stdout: text.into_bytes(),
            stderr: String::new(),
            status,
        }
    }
}

/// `apply-patch read PATH [--lines A:B] [--json]`.
pub fn read(root: &Path, path: &str, lines: Option<&str>, json: bool, style: Style) -> Output {
    if let Err(e) = crate::agent::check_root(root) {
        return Output::error(e, json, style);
    }
    let range = match lines.map(LineRange::parse).transpose() {
        Ok(r) => r.unwrap_or_default(),
        Err(e) => return Output::error(e, json, style),
    };
    // The snapshot is a convenience for later rebases: a state place that cannot be made
    // must not stop a read.
    let state = AgentState::for_root(root).ok();
    let read = read_file(root, path, range, state.as_ref().map(|s| &s.snapshots));
    read_output(
        read.map(|out| (serde_json::to_value(&out), out.render())),
        json,
        style,
    )
}

/// `apply-patch read PATH --around N [--json]`: the function (else block, else element)
/// enclosing line N, with `read`'s header and version.
pub fn read_around(root: &Path, path: &str, line: usize, json: bool, style: Style) -> Output {
    if let Err(e) = crate::agent::check_root(root) {
        return Output::error(e, json, style);
    }
    let state = AgentState::for_root(root).ok();
    let read =
        crate::agent::around::read_around(root, path, line, state.as_ref().map(|s| &s.snapshots));
    read_output(
        read.map(|out| (serde_json::to_value(&out), out.render())),
        json,
        style,
    )
}

/// A read's output: its data with `ok` and `error` (JSON), or its rendering.
fn read_output(
    read: Result<(serde_json::Result<serde_json::Value>, String), Error>,
    json: bool,
    style: Style,
) -> Output {
    match read {
        Ok((value, _)) if json => {
            let mut value = value.unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("ok".into(), true.into());
                map.insert("error".into(), serde_json::Value::Null);
            }
            Output::json(&value, 0)
        }
        Ok((_, text)) => Output {
            stdout: text.into_bytes(),
            ..Output::default()
        },
        Err(e) => Output::error(e, json, style),
    }
}

/// True when any agent option is set (the plain apply path is used otherwise).
pub fn any(agent: &AgentOptions) -> bool {
    agent.rebase
        || agent.preview
        || agent.post_check.is_some()
        || agent.rollback_on_fail
        || agent.max_risk.is_some()
}

/// An apply with agent options: the report plus risk, verification and preview id.
pub fn apply(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
    json: bool,
    style: Style,
) -> Output {
    let report = run::apply_to_dir(root, input, opts, agent);
    if json {
        return Output {
            stdout: report.to_json().into_bytes(),
            stderr: String::new(),
            status: report.exit,
        };
    }
    render_human(&report, agent, style)
}

fn render_human(r: &AgentReport, agent: &AgentOptions, style: Style) -> Output {
    // The chip's hint already names the hunks that failed and applied, and the risk has its
    // own line; the raw lists are for JSON readers.
    let mut report = r.report.clone();
    if let Some(serde_json::Value::Object(d)) =
        report.error.as_mut().and_then(|e| e.details.as_mut())
    {
        // Printed on its own line below.
        d.remove("risk");
    }
    let (mut out, mut err) = report.render_human(style);
    if let Some(risk) = &r.risk {
        if agent.max_risk.is_some() || agent.preview {
            let factors: Vec<String> = risk
                .factors
                .iter()
                .map(|f| format!("{} {} +{}", f.path, f.factor, f.points))
                .collect();
            err.push_str(&format!("risk: {} ({})\n", risk.score, factors.join(", ")));
        }
    }
    if let Some(id) = &r.preview {
        out.push_str(&format!(
            "preview {id}: nothing was written; apply it with `apply-patch confirm {id}` \
             (within {} minutes)\n",
            crate::agent::preview::PREVIEW_TTL.as_secs() / 60
        ));
    }
    if let Some(v) = &r.verification {
        let how = match v.exit_code {
            Some(code) => format!("{} (exit status {code})", v.status),
            None => v.status.clone(),
        };
        err.push_str(&format!("post-check `{}`: {how}\n", v.command));
        if !v.passed() {
            for line in v.stdout_tail.lines().chain(v.stderr_tail.lines()) {
                err.push_str(&format!("  | {line}\n"));
            }
        }
    }
    Output {
        stdout: out.into_bytes(),
        stderr: err,
        status: r.exit,
    }
}

/// `apply-patch confirm ID`.
pub fn confirm(root: &Path, id: &str, json: bool, style: Style) -> Output {
    if let Err(e) = crate::agent::check_root(root) {
        return Output::error(e, json, style);
    }
    let r: ConfirmReport = run::confirm(root, id, None);
    let status = r.exit_status();
    if json {
        return Output::json(&r, status);
    }
    match &r.error {
        Some(e) => Output {
            stdout: Vec::new(),
            stderr: error_text(e, style),
            status,
        },
        None => {
            let mut out = format!("confirmed preview {}\n", r.preview);
            for f in r.files.as_array().into_iter().flatten() {
                let op = f["op"].as_str().unwrap_or("modify");
                let path = f["path"].as_str().unwrap_or("");
                out.push_str(&format!("{op} {path}\n"));
            }
            Output {
                stdout: out.into_bytes(),
                stderr: String::new(),
                status,
            }
        }
    }
}

/// `apply-patch chip ID`: print a kept refused patch.
pub fn chip(root: &Path, id: &str, json: bool, style: Style) -> Output {
    if let Err(e) = crate::agent::check_root(root) {
        return Output::error(e, json, style);
    }
    match AgentState::for_root(root).and_then(|s| s.chips.load(id)) {
        Ok(bytes) if json => Output::json(
            &serde_json::json!({
                "ok": true, "chip": id, "patch": String::from_utf8_lossy(&bytes), "error": null
            }),
            0,
        ),
        Ok(bytes) => Output {
            stdout: bytes,
            ..Output::default()
        },
        Err(e) => Output::error(e, json, style),
    }
}

/// `apply-patch mcp [--read-only] [--post-check [NAME=]CMD]...`: serve MCP on standard input
/// and output until closed. The `--post-check` commands are the only ones a tool may run.
pub fn serve_mcp(root: &Path, read_only: bool, post_checks: &[String]) -> Output {
    let permission = if read_only {
        McpPermission::ReadOnly
    } else {
        McpPermission::ReadBeforeEdit
    };
    match crate::agent::serve_mcp(root, permission, post_checks) {
        Ok(()) => Output::default(),
        Err(e) => Output::error(e, false, Style::Plain),
    }
}
