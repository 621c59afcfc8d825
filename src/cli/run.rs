//! Stage: command line (run). Parses the arguments, reads the patch input and dispatches
//! the validated action to the library; the Codex drop-in lives here too.

use super::*;
use crate::usage::UsageError;
use apply_patch::pipeline::CheckReport;

/// The environment a run sees (injected so tests need no process).
#[non_exhaustive]
pub struct Env {
    pub stdin_is_terminal: bool,
    pub stdout_is_terminal: bool,
    pub stderr_is_terminal: bool,
    pub no_color: Option<OsString>,
}

impl Env {
    /// The real process environment.
    pub fn current() -> Self {
        use std::io::IsTerminal as _;
        Env {
            stdin_is_terminal: std::io::stdin().is_terminal(),
            stdout_is_terminal: std::io::stdout().is_terminal(),
            stderr_is_terminal: std::io::stderr().is_terminal(),
            no_color: std::env::var_os("NO_COLOR"),
        }
    }
}

/// Run the command for `args` (argv\[0\] first).
pub fn run(args: Vec<OsString>, env: &Env) -> Outcome {
    if invoked_as_codex(&args) {
        return run_codex(&args[1..]);
    }
    // One style for both streams: colour only when both are terminals.
    let style = Style::detect(
        env.stdout_is_terminal && env.stderr_is_terminal,
        env.no_color.as_deref(),
    );
    let wants_json = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    let raw = match parse_args(&args) {
        Ok(raw) => raw,
        Err(e) => return clap_error(e, wants_json),
    };
    let opts = match validate(raw, style) {
        Ok(o) => o,
        Err(e) => return Outcome::error(e, wants_json, style),
    };
    let reads_stdin = matches!(
        &opts.action,
        Action::Apply {
            input: Input::Stdin,
            ..
        } | Action::Convert {
            input: Input::Stdin,
            ..
        }
    );
    if reads_stdin && env.stdin_is_terminal {
        let error = UsageError::NoPatch.into();
        return Outcome::error(error, wants_json, style);
    }
    execute(opts)
}

pub(crate) fn clap_error(e: clap::Error, json: bool) -> Outcome {
    use clap::error::ErrorKind;
    let informational = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational {
        return Outcome {
            stdout: e.to_string().into_bytes(),
            stderr: String::new(),
            status: 0,
        };
    }
    if json {
        let message = e
            .to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string();
        let error = UsageError::Arguments { message }.into();
        return Outcome::error(error, true, Style::Plain);
    }
    Outcome {
        stdout: Vec::new(),
        stderr: e.to_string(),
        status: ErrorCode::Usage.exit_status(),
    }
}

pub(crate) fn execute(opts: Options) -> Outcome {
    let (json, style) = (opts.json, opts.style);
    match &opts.action {
        // Every apply, with agent options or without, is one pipeline and one rendering.
        Action::Apply {
            input,
            options,
            mode,
            show,
        } => match read_input(input) {
            Ok(bytes) => apply_outcome(&opts, &bytes, options, *mode, *show),
            Err(e) => Outcome::error(e, json, style),
        },
        Action::Read {
            path,
            lines,
            around,
        } => agent::read(&opts, path, lines.as_deref(), *around),
        Action::Confirm(id) => agent::confirm(&opts, id),
        Action::Chip(id) => agent::chip(&opts.root, id, json, style),
        Action::Mcp {
            read_only,
            post_check,
            formatter,
        } => agent::serve_mcp(&opts.root, *read_only, post_check, formatter),
        Action::Convert { input, to, parse } => {
            match read_input(input).and_then(|b| convert(&opts.root, &b, parse, *to)) {
                Ok(out) => Outcome {
                    stdout: out,
                    ..Outcome::default()
                },
                Err(e) => Outcome::error(e, json, style),
            }
        }
        Action::Range {
            file,
            line,
            kind,
            lang,
        } => range_outcome(&opts, file, *line, *kind, *lang),
        Action::CheckBalance { files, lang } => balance_outcome(&opts, files, *lang),
        Action::Undo => txn_outcome(txn::undo(&opts.root), &opts, undo_text),
        Action::CheckPatches(paths, fuzz) => {
            let report = CheckReport::of(&pipeline::check_patches(&opts.root, paths, *fuzz));
            Outcome {
                stdout: if json {
                    report.to_json().into_bytes()
                } else {
                    check::check_text(&report, style).into_bytes()
                },
                stderr: String::new(),
                status: report.exit_status(),
            }
        }
        Action::Recover => txn_outcome(txn::recover(&opts.root), &opts, recover_text),
        Action::Completions(shell) => Outcome {
            stdout: manual::completions(*shell),
            ..Outcome::default()
        },
        Action::Man(page) => match manual::page(page.as_deref()) {
            Ok(out) => Outcome {
                stdout: out,
                ..Outcome::default()
            },
            Err(e) => Outcome::error(e, json, style),
        },
    }
}

/// Invoked as `apply_patch` (a symlink or copy): the Codex drop-in.
pub(crate) fn invoked_as_codex(args: &[OsString]) -> bool {
    args.first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .is_some_and(|n| n == "apply_patch")
}

/// Codex's `apply_patch`: the patch text as the only argument (never opened as a file),
/// `-i FILE`, or standard input without one; our placement and safety rules, Codex's output.
pub(crate) fn run_codex(args: &[OsString]) -> Outcome {
    let bytes = match codex_input(args).and_then(|input| read_input(&input)) {
        Ok(b) => b,
        Err(e) => return Outcome::error(e, false, Style::Plain),
    };
    let report = Report::from(&pipeline::apply_bytes(
        Target::Dir(std::path::Path::new(".")),
        &bytes,
        &pipeline::Options::default(),
        Mode::Write,
    ));
    let (out, err) = report.render_codex();
    Outcome {
        stdout: out.into_bytes(),
        stderr: err,
        status: report.exit_status(),
    }
}
