//! Stage: command line (output). The manual pages: `apply-patch(1)` and one
//! `apply-patch-SUBCOMMAND(1)` per subcommand (the main page's SEE ALSO names them), each with
//! a synopsis that shows every option's value name, and on the main page the formats, the
//! error codes and the exit status. Shell completion for both names lives here too.

use crate::usage::UsageError;
use clap_mangen::roff::{bold, italic, roman, Inline, Roff};
use clap_mangen::Man;

use super::*;

const FORMATS: &str = "\
The format is detected from the first line that starts `*** Begin Patch` (the agent patch \
language), `diff --git ` or `--- ` followed by `+++ ` (a unified diff), or `{` (a JSON edit \
request); a BOM, blank lines, a shell heredoc opener and prose before it are skipped. \
--format agent|unified|json forces one. PATCH is a file, - for standard input, or the patch \
text itself.";

/// SPEC §6's error codes, as `--json` reports them in `error.code`.
const ERROR_CODES: &[(&str, &str)] = &[
    ("parse_error", "the patch is malformed or cut off"),
    ("usage", "bad arguments (exit status 2)"),
    (
        "path_escape",
        "a path leads outside the root, into .git or a submodule",
    ),
    ("is_directory", "a path names a folder"),
    (
        "file_not_found",
        "a file to change or delete does not exist",
    ),
    ("file_exists", "an added or moved-to file exists already"),
    (
        "binary_file",
        "a binary change without data, or a binary file",
    ),
    (
        "invalid_utf8",
        "the agent language or JSON edits on a non-UTF-8 file",
    ),
    (
        "unsupported_file",
        "gitlinks; notebooks without --allow-notebooks",
    ),
    ("protected_file", "a file matched by --protect"),
    (
        "stale_file",
        "the file changed since its Base or since planning",
    ),
    ("context_not_found", "a hunk's lines are not in the file"),
    (
        "ambiguous_match",
        "a hunk matches several places (each is listed with its hint)",
    ),
    ("overlapping_hunks", "two hunks share deleted lines"),
    ("already_applied", "part of the patch is there already"),
    (
        "expected_mismatch",
        "a line_range edit's expected lines are not there",
    ),
    (
        "index_mismatch",
        "with --index, a file differs from its index entry",
    ),
    ("merge_conflict", "--3way could not merge cleanly"),
    (
        "unbalanced_edit",
        "with --strict-balance, brackets left unbalanced",
    ),
    ("risk_exceeded", "the risk score is above --max-risk"),
    ("not_read", "MCP: a file edited before it was read"),
    ("unknown_preview", "confirm: no such preview"),
    ("post_check_failed", "the --post-check command failed"),
    (
        "formatter_failed",
        "a --formatter command failed or timed out; nothing was written",
    ),
    ("busy", "another transaction holds the root"),
    ("permission_denied", "a file cannot be written"),
    ("io_error", "any other input or output failure"),
    (
        "rollback_failed",
        "a failed commit could not be undone: run apply-patch recover",
    ),
];

const EXIT_STATUS: &str = "0 applied (or would apply, with --check); 1 refused, nothing in the \
work tree changed; 2 usage error; 3 rollback failed (run apply-patch recover); 4 applied, but \
the --post-check command failed.";

/// The manual page of `apply-patch` (`sub` = None) or of one subcommand, in roff.
pub fn page(sub: Option<&str>) -> Result<Vec<u8>, Error> {
    let main = RawArgs::command();
    let cmd = match sub {
        None => main,
        Some(name) => {
            let found = main.find_subcommand(name).cloned().ok_or_else(|| {
                let names: Vec<&str> = main.get_subcommands().map(|c| c.get_name()).collect();
                Error::from(UsageError::UnknownPage {
                    name: name.to_string(),
                    pages: names.iter().map(|n| n.to_string()).collect(),
                })
            })?;
            let full = format!("apply-patch-{}", found.get_name());
            found
                .name(full.clone())
                .bin_name(full)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    render(&cmd, sub.is_none(), &mut out)
        .map_err(|e| Error::io("<stdout>", "cannot render the manual to", &e))?;
    Ok(out)
}

fn render(cmd: &clap::Command, main: bool, w: &mut Vec<u8>) -> std::io::Result<()> {
    let man = Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    synopsis(cmd, w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    if main {
        man.render_subcommands_section(w)?;
        man.render_extra_section(w)?;
        extra_sections(w)?;
    }
    man.render_version_section(w)
}

/// SYNOPSIS with the value name of every option (`--root DIR`, `-p N`), which clap_mangen's
/// own synopsis leaves out.
fn synopsis(cmd: &clap::Command, w: &mut Vec<u8>) -> std::io::Result<()> {
    let name = cmd.get_name().to_string();
    let mut line: Vec<Inline> = vec![bold(name), roman(" ")];
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let flag = match (arg.get_short(), arg.get_long()) {
            (_, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => continue,
        };
        line.push(roman("["));
        line.push(bold(flag));
        if arg.get_action().takes_values() {
            let value = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string());
            line.push(roman(" "));
            line.push(italic(value));
        }
        line.push(roman("] "));
    }
    for arg in cmd.get_positionals() {
        let value = arg
            .get_value_names()
            .and_then(|v| v.first())
            .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string());
        let (open, close) = if arg.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(format!("{open}{value}{close} ")));
    }
    if cmd.has_subcommands() {
        line.push(roman("<COMMAND>"));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]).text(line);
    roff.to_writer(w)
}

fn extra_sections(w: &mut Vec<u8>) -> std::io::Result<()> {
    let mut roff = Roff::new();
    roff.control("SH", ["FORMATS"]).text([roman(FORMATS)]);
    roff.control("SH", ["ERROR CODES"]);
    roff.text([roman(
        "A refusal names one code (error.code with --json); every refusal but usage exits 1.",
    )]);
    for (code, meaning) in ERROR_CODES {
        roff.control("TP", [])
            .text([bold(*code)])
            .text([roman(*meaning)]);
    }
    roff.control("SH", ["EXIT STATUS"])
        .text([roman(EXIT_STATUS)]);
    roff.to_writer(w)
}

/// `completions SHELL`: the script for `apply-patch`, then one for the `apply_patch` drop-in
/// name (its only argument is a patch file or the patch text).
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut RawArgs::command(), "apply-patch", &mut out);
    let mut codex = clap::Command::new("apply_patch")
        .about("Codex's apply_patch drop-in: the patch text or a patch file")
        .arg(
            clap::Arg::new("patch")
                .value_name("PATCH")
                .value_hint(clap::ValueHint::FilePath),
        );
    clap_complete::generate(shell, &mut codex, "apply_patch", &mut out);
    out
}
