//! Stage: command line (check-patches output). One line per patch file — `ok`, `skip` or
//! `FAIL` — then a summary line. A `FAIL` line is followed by what the refusal carries, as an
//! apply prints it: the expected lines, the nearest text of the file with its line numbers and
//! what differs, the candidates, and the hint; then the patch's warnings. Never writes.

use super::*;
use apply_patch::pipeline::CheckReport;
use apply_patch::quote::{escape_for_terminal, quote_for_terminal};

/// The lines under a `FAIL` line are indented past the `FAIL  ` column.
const INDENT: &str = "    ";

/// The human form of a `check-patches` report.
pub(crate) fn check_text(report: &CheckReport, style: Style) -> String {
    let mut out = String::new();
    if let Some(e) = &report.error {
        return error_text(e, style);
    }
    for p in &report.patches {
        let patch = quote_for_terminal(&p.patch);
        match (&p.error, p.skipped) {
            (None, _) => out.push_str(&format!("ok    {patch}\n")),
            (Some(e), true) => out.push_str(&format!("skip  {patch}: {}\n", e.terminal_message())),
            (Some(e), false) => {
                let message = e.terminal_message();
                let first = message.lines().next().unwrap_or("");
                out.push_str(&format!("FAIL  {patch}: {}: {first}\n", e.code));
                // The refusal as an apply prints it, less its first line (said above).
                for line in error_text(e, style).lines().skip(1) {
                    out.push_str(&format!("{INDENT}{line}\n"));
                }
            }
        }
        for w in &p.warnings {
            out.push_str(&format!(
                "      warning[{}]: {}\n",
                w.code.as_str(),
                escape_for_terminal(&w.message)
            ));
        }
    }
    out.push_str(&summary(report));
    out
}

/// `N patches checked against the staged tree: A apply, F do not[, S not checked …]`.
fn summary(report: &CheckReport) -> String {
    let total = report.patches.len();
    let failing = report
        .patches
        .iter()
        .filter(|p| !p.ok && !p.skipped)
        .count();
    let skipped = report.patches.iter().filter(|p| p.skipped).count();
    let applying = total - failing - skipped;
    let mut out = format!(
        "{total} patch{} checked against the staged tree: {applying} appl{}, {failing} do{} not",
        if total == 1 { "" } else { "es" },
        if applying == 1 { "ies" } else { "y" },
        if failing == 1 { "es" } else { "" }
    );
    if skipped > 0 {
        out.push_str(&format!(
            ", {skipped} not checked after a failure in their series"
        ));
    }
    out.push('\n');
    out
}
