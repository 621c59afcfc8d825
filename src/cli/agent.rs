//! Stage: command line (agent commands). What `read`, `confirm`, `chip` and `mcp` print, as
//! an [`Outcome`]. An apply with agent options is not here: every apply is rendered by
//! [`super::apply`]. Never writes the work tree itself.

use std::path::Path;

use super::*;
use apply_patch::agent::read::LineRange;
use apply_patch::agent::AgentState;
use apply_patch::mcp::server as mcp;
use apply_patch::pipeline::read::{ReadSetup, ReadWhat};
use apply_patch::pipeline::ConfirmReport;

/// A JSON answer of a subcommand.
fn json_outcome(value: &impl serde::Serialize, status: u8) -> Outcome {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    Outcome {
        stdout: text.into_bytes(),
        stderr: String::new(),
        status,
    }
}

/// `apply-patch read PATH [--lines A:B | --around N] [--json]`: the library's one `read`
/// (which recovers a crashed transaction first), printed.
pub(crate) fn read(
    opts: &Options,
    path: &str,
    lines: Option<&str>,
    around: Option<usize>,
) -> Outcome {
    let (json, style) = (opts.json, opts.style);
    let what = match (around, lines.map(LineRange::parse).transpose()) {
        (Some(line), _) => ReadWhat::Around(line),
        (None, Ok(range)) => ReadWhat::Lines(range.unwrap_or_default()),
        (None, Err(e)) => return Outcome::error(e.for_front_end(opts.front_end), json, style),
    };
    let setup = ReadSetup::for_front_end(opts.front_end);
    match pipeline::read::read(&opts.root, path, what, &setup) {
        Ok(done) if json => Outcome {
            stdout: json_object(&done, true),
            ..Outcome::default()
        },
        Ok(done) => Outcome {
            stdout: done.served.render().into_bytes(),
            stderr: done
                .warnings
                .iter()
                .map(|w| format!("warning: {}: {}\n", w.code.as_str(), w.message))
                .collect(),
            status: 0,
        },
        Err(e) => Outcome::error(e, json, style),
    }
}

/// `apply-patch confirm ID` (the run's one opening of the root checks it).
pub(crate) fn confirm(opts: &Options, id: &str) -> Outcome {
    let (root, json, style) = (opts.root.as_path(), opts.json, opts.style);
    let mut r = ConfirmReport::of(id, &pipeline::confirm::confirm(root, id, None));
    if let Some(e) = r.error.as_mut() {
        e.set_front_end(opts.front_end);
    }
    let status = r.exit_status();
    if json {
        return json_outcome(&r, status);
    }
    match &r.error {
        Some(e) => Outcome {
            stdout: Vec::new(),
            stderr: error_text(e, style),
            status,
        },
        None => {
            let mut out = format!("confirmed preview {}\n", r.preview);
            for f in r.files.as_array().into_iter().flatten() {
                let op = f["op"].as_str().unwrap_or("modify");
                let path = f["path"].as_str().unwrap_or("");
                let path = apply_patch::quote::quote_for_terminal(path);
                out.push_str(&format!("{op} {path}\n"));
            }
            Outcome {
                stdout: out.into_bytes(),
                stderr: String::new(),
                status,
            }
        }
    }
}

/// `apply-patch chip ID`: print a kept refused patch.
pub(crate) fn chip(root: &Path, id: &str, json: bool, style: Style) -> Outcome {
    if let Err(e) = apply_patch::agent::check_root(root) {
        return Outcome::error(e, json, style);
    }
    match AgentState::for_root(root).and_then(|s| Ok(s.chips.load(id)?)) {
        Ok(bytes) if json => json_outcome(
            &serde_json::json!({
                "ok": true, "chip": id, "patch": String::from_utf8_lossy(&bytes), "error": null
            }),
            0,
        ),
        Ok(bytes) => Outcome {
            stdout: bytes,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(e, json, style),
    }
}

/// `apply-patch mcp [--read-only] [--post-check [NAME=]CMD]... [--formatter GLOB=CMD]...`:
/// serve MCP on standard input and output until closed. The `--post-check` and
/// `--formatter` commands are the only ones a tool may run.
pub(crate) fn serve_mcp(
    root: &Path,
    read_only: bool,
    post_checks: &[String],
    formatters: &[String],
) -> Outcome {
    let plain = |e: Error| Outcome::error(e, false, Style::Plain);
    if let Err(e) = apply_patch::agent::check_root(root) {
        return plain(e);
    }
    let checks = match apply_patch::agent::catalog::PostChecks::parse(post_checks) {
        Ok(c) => c,
        Err(e) => return plain(e.into()),
    };
    // Refused before serving, in the command line's words (each call decides it again).
    if let Err(e) = formatters
        .iter()
        .try_for_each(|f| pipeline::Formatter::parse(f).map(drop))
    {
        return plain(e);
    }
    let permission = if read_only {
        mcp::Permission::ReadOnly
    } else {
        mcp::Permission::ReadBeforeEdit
    };
    let root = match std::fs::canonicalize(root) {
        Ok(r) => r,
        Err(e) => {
            return plain(Error::io(
                &root.display().to_string(),
                "cannot open the root",
                &e,
            ))
        }
    };
    // The operator's APPLY_PATCH_DURABILITY, read where every front end reads it.
    let durability = match pipeline::RawOptions::default().resolve() {
        Ok((options, _)) => options.durability,
        Err(e) => return plain(e),
    };
    let state = AgentState::for_root(&root).ok();
    let server = mcp::McpServer::with_durability(root, permission, state, checks, durability)
        .with_formatters(formatters.to_vec());
    match mcp::serve_stdio(server) {
        Ok(()) => Outcome::default(),
        Err(e) => plain(e),
    }
}
