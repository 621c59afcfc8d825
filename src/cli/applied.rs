//! Stage: command line (apply output). Every apply — plain, with the git flags or with the
//! agent options — runs the one pipeline and is rendered here from its result
//! ([`apply_patch::pipeline::Applied`] / [`apply_patch::pipeline::Refused`]): the report
//! worded for `-R`, "did you mean" on `file_not_found`, `-v`'s hunk lines, `--stat` /
//! `--numstat` / `--summary`, and what the agent options add (risk, preview id, post-check).
//! Never writes the work tree itself.

use super::*;
use apply_patch::pipeline::AgentReport;

/// An apply: the pipeline's result as JSON, or as the human report; `--stat` and its kin,
/// counted from the patch, replace the per-file lines (and, without `--apply`, the run).
pub(crate) fn apply_outcome(
    opts: &Options,
    bytes: &[u8],
    options: &pipeline::Options,
    mode: Mode,
    show: Show,
) -> Outcome {
    let wants_stat = (show.stat || show.numstat || show.summary) && !opts.json;
    let stat = if wants_stat {
        match pipeline::parse(bytes, options) {
            Ok(patch) => Some(stat::render(&patch, bytes, &opts.root, show)),
            Err(e) => return Outcome::error(e, false, opts.style),
        }
    } else {
        None
    };
    if let (Some(stat), true) = (&stat, show.report_only) {
        return Outcome {
            stdout: stat.clone().into_bytes(),
            ..Outcome::default()
        };
    }
    let outcome = pipeline::apply_bytes(Target::Dir(&opts.root), bytes, options, mode);
    let mut report = AgentReport::of(&outcome);
    if let Some(e) = report.report.error.as_mut() {
        super::elsewhere::suggest(e, &opts.root);
    }
    if opts.json {
        return Outcome {
            stdout: report.to_json().into_bytes(),
            stderr: String::new(),
            status: report.exit,
        };
    }
    let (mut out, mut err) = render_report(&report, opts.style, show.verbose);
    if let Some(stat) = stat {
        out = if report.report.ok {
            stat
        } else {
            String::new()
        };
    }
    let (more_out, more_err) = agent_lines(&report, options, mode);
    out.push_str(&more_out);
    err.push_str(&more_err);
    Outcome {
        stdout: out.into_bytes(),
        stderr: err,
        status: report.exit,
    }
}

/// The report's human form (`-v`: with each hunk's line). The risk has its own line
/// ([`agent_lines`]), so it is left out of the error's details.
fn render_report(r: &AgentReport, style: Style, verbose: bool) -> (String, String) {
    let mut report = r.report.clone();
    if let Some(serde_json::Value::Object(d)) = report.error.as_mut().and_then(|e| e.details_mut())
    {
        d.remove("risk");
    }
    if verbose {
        report.render_human_verbose(style)
    } else {
        report.render_human(style)
    }
}

/// What the agent options add: the risk (with `--max-risk` or `--preview`), the preview's
/// id, the post-check's outcome with the tail of its output when it failed.
fn agent_lines(r: &AgentReport, options: &pipeline::Options, mode: Mode) -> (String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(risk) = &r.risk {
        if options.max_risk.is_some() || mode == Mode::Preview {
            let factors: Vec<String> = risk
                .factors
                .iter()
                .map(|f| {
                    let path = apply_patch::quote::quote_for_terminal(&f.path);
                    format!("{path} {} +{}", f.factor, f.points)
                })
                .collect();
            err.push_str(&format!("risk: {} ({})\n", risk.score, factors.join(", ")));
        }
    }
    if let Some(id) = &r.preview {
        out.push_str(&format!(
            "preview {id}: nothing was written; apply it with `apply-patch confirm {id}` \
             (within {} minutes)\n",
            apply_patch::agent::preview::PREVIEW_TTL.as_secs() / 60
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
    (out, err)
}
