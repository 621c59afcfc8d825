//! The command line: clap's raw arguments ([`RawArgs`]) are validated into [`Options`], then
//! run against the library's public API. Nothing here places hunks or writes files; this
//! module only reads the patch input and turns reports into text.
//!
//! Every run yields an [`Outcome`] (stdout bytes, stderr text, exit status) that `main`
//! prints, so the whole command is testable without a process.

// `apply_patch::Error` is one rich shape shared by every stage (SPEC §8).
#![allow(clippy::result_large_err)]

use std::ffi::OsString;
use std::io::Read as _;
use std::path::PathBuf;

use apply_patch::agent::cli as agent_cli; // agent (issue 6)
use apply_patch::agent::run::AgentOptions; // agent (issue 6)
use apply_patch::apply::{self, ApplyOptions};
use apply_patch::model::Format;
use apply_patch::parse::ParseOptions;
use apply_patch::report::{error_text, Report, Style};
use apply_patch::structure;
use apply_patch::txn;
use apply_patch::{Error, ErrorCode};
use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Examples:
  apply-patch change.patch                 apply a patch file in the current directory
  apply-patch --root repo --check fix.diff plan only: would it apply? (writes nothing)
  git diff | apply-patch --root ../copy    apply a diff read from standard input
  apply-patch -R --diff fix.diff           revert a unified diff and show the result
  apply-patch --json edits.json            JSON edit request, JSON report
  apply-patch \"$(cat agent.patch)\"         patch text as the argument (Codex style)
  apply-patch undo                         revert the last applied patch
  apply-patch read src/app.py --lines 1:40 numbered lines and the version for *** Base:
  apply-patch mcp --root repo              serve MCP tools to an agent (stdio)

Exit status: 0 applied (or would apply); 1 refused, nothing changed; 2 usage error;
3 rollback failed (run `apply-patch recover`); 4 applied, but --post-check failed.";

/// Raw command-line arguments, as clap parses them.
#[derive(Debug, Parser)]
#[command(
    name = "apply-patch",
    version,
    about = "Apply multi-file patches safely: agent patches, git/unified diffs, JSON edits.",
    long_about = "Apply multi-file patches safely: the agent patch language (*** Begin Patch), \
git and plain unified diffs, and JSON edit requests. Every hunk goes to the one place it \
uniquely belongs or the patch is refused; all files change, or none does.",
    after_help = EXAMPLES,
    subcommand_negates_reqs = true
)]
pub struct RawArgs {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The patch: a file, `-` for standard input (the default), or the patch text itself.
    #[arg(value_name = "PATCH")]
    pub patch: Option<OsString>,
    /// Directory the patch's paths are relative to.
    #[arg(long, value_name = "DIR", global = true)]
    pub root: Option<PathBuf>,
    /// Plan only: report what would change and write nothing.
    #[arg(long)]
    pub check: bool,
    /// Print exactly one JSON object on standard output (also on failure).
    #[arg(long, global = true)]
    pub json: bool,
    /// Print the resulting unified diff.
    #[arg(long)]
    pub diff: bool,
    /// Apply the inverse of a unified diff.
    #[arg(long, short = 'R')]
    pub reverse: bool,
    /// Strip N leading path components from unified diff paths.
    #[arg(short = 'p', value_name = "N")]
    pub strip: Option<usize>,
    /// Prefix every path of the patch with DIR.
    #[arg(long, value_name = "DIR")]
    pub directory: Option<String>,
    /// Only apply files matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip files matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Ignore hunk line counts of unified diffs.
    #[arg(long)]
    pub recount: bool,
    /// Accept zero-context hunks and place them at their line numbers exactly.
    #[arg(long)]
    pub unidiff_zero: bool,
    /// How many lines from its hint a match still counts as near.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub window: usize,
    /// Force the patch format instead of detecting it.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Refuse (stale_file) when a diff's `index` blob id does not match the file.
    #[arg(long)]
    pub strict_base: bool,
    /// Refuse to touch files matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub protect: Vec<String>,
    /// Allow patching Jupyter notebooks (.ipynb).
    #[arg(long)]
    pub allow_notebooks: bool,
    /// Refuse (unbalanced_edit) an edit that leaves a balanced file's brackets, tags or
    /// quotes unbalanced, instead of warning.
    #[arg(long)]
    pub strict_balance: bool,
    // git integration (src/git/flow.rs):
    /// Apply to the work tree and the git index together (touched files must match the index).
    #[arg(long)]
    pub index: bool,
    /// Apply to the git index only; the work tree is not touched.
    #[arg(long)]
    pub cached: bool,
    /// When a hunk does not apply, merge from the diff's base blob (three-way).
    #[arg(long = "3way")]
    pub three_way: bool,
    /// With --3way: write conflicts into the files with git-style markers instead of refusing.
    #[arg(long)]
    pub conflict_markers: bool,
    // agent (issue 6): the agent options of an apply.
    /// Merge onto a file that changed since its `*** Base:` (snapshot, index or HEAD base).
    #[arg(long)]
    pub rebase: bool,
    /// Plan, keep the plan, print the diff and a preview id; write nothing.
    #[arg(long)]
    pub preview: bool,
    /// Run CMD (`sh -c`, in the root) after writing; its outcome is `verification`.
    #[arg(long, value_name = "CMD")]
    pub post_check: Option<String>,
    /// Revert the change when the post-check fails (post_check_failed).
    #[arg(long, requires = "post_check")]
    pub rollback_on_fail: bool,
    /// Refuse (risk_exceeded) a patch whose risk score is above N.
    #[arg(long, value_name = "N")]
    pub max_risk: Option<u32>,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Agent,
    Unified,
    Json,
}

/// How `convert` reads its patch: the parse options of an apply.
#[derive(Debug, Default, clap::Args)]
pub struct ReadArgs {
    /// Strip N leading path components from unified diff paths.
    #[arg(short = 'p', value_name = "N")]
    pub strip: Option<usize>,
    /// Force the patch format instead of detecting it.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Ignore hunk line counts of unified diffs.
    #[arg(long)]
    pub recount: bool,
    /// Accept zero-context hunks.
    #[arg(long)]
    pub unidiff_zero: bool,
}

/// `convert --to` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    Unified,
    Agent,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Revert the last patch applied under the root.
    Undo,
    /// Finish or roll back a transaction interrupted by a crash.
    Recover,
    /// Convert a patch to another format (printed on standard output).
    Convert {
        /// The target format.
        #[arg(long, value_enum)]
        to: ConvertTo,
        /// The patch: a file, `-` for standard input (the default), or the patch text.
        #[arg(value_name = "PATCH")]
        patch: Option<OsString>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff).
    Man,
    /// Check that patch files still apply to the staged tree (git; writes nothing).
    CheckPatches {
        /// Patch files, or directories searched for *.patch and *.diff (default: the root).
        #[arg(value_name = "PATHS")]
        paths: Vec<PathBuf>,
    },
    // agent (issue 6)
    /// Print a file with numbered lines and its version (for `*** Base:`).
    Read {
        /// The file, relative to the root.
        path: String,
        /// Only lines A to B (1-based, inclusive): `A:B`, `A:`, `:B` or `A`.
        #[arg(long, value_name = "A:B")]
        lines: Option<String>,
        /// Only the function (else block, else element) enclosing line N.
        #[arg(long, value_name = "N", conflicts_with = "lines")]
        around: Option<usize>,
    },
    /// Apply a change kept by `--preview`, exactly once.
    Confirm {
        /// The preview id.
        id: String,
    },
    /// Print a refused patch kept as a chip (named in its error).
    Chip {
        /// The chip id.
        id: String,
    },
    /// Serve the Model Context Protocol on standard input and output.
    Mcp {
        /// Offer only the reading tools (read, range, check_balance).
        #[arg(long)]
        read_only: bool,
    },
    /// Print the function, block or element enclosing a line of FILE (no compiler needed).
    Range {
        /// The file to read.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The 1-based line.
        #[arg(long, value_name = "N")]
        line: usize,
        /// What to find (default: the element for HTML/XML/Vue, the block for YAML/CSS/JSON,
        /// else the function, falling back to the block).
        #[arg(long, value_enum)]
        kind: Option<KindArg>,
        /// The file's language (default: from its extension).
        #[arg(long, value_name = "LANG")]
        lang: Option<String>,
    },
    /// Check that the brackets, tags and quotes of each FILE balance, ignoring strings and
    /// comments (exit 0 balanced, 1 not).
    CheckBalance {
        /// The files to check.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// Their language (default: from each file's extension).
        #[arg(long, value_name = "LANG")]
        lang: Option<String>,
    },
}

/// `range --kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Function,
    Block,
    Tag,
}

/// Where the patch comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
    Text(String),
}

/// What to do, validated.
#[derive(Debug)]
pub enum Action {
    Apply {
        input: Input,
        apply: ApplyOptions,
        // agent (issue 6)
        agent: Box<AgentOptions>,
    },
    // agent (issue 6)
    Read {
        path: String,
        lines: Option<String>,
        around: Option<usize>,
    },
    Confirm(String),
    Chip(String),
    Mcp {
        read_only: bool,
    },
    Undo,
    Recover,
    Convert {
        input: Input,
        to: ConvertTo,
        parse: ParseOptions,
    },
    Completions(clap_complete::Shell),
    Man,
    CheckPatches(Vec<PathBuf>),
    Range {
        file: PathBuf,
        line: usize,
        kind: Option<structure::Kind>,
        lang: Option<structure::Lang>,
    },
    CheckBalance {
        files: Vec<PathBuf>,
        lang: Option<structure::Lang>,
    },
}

/// Validated options: one struct every later flag joins.
#[derive(Debug)]
pub struct Options {
    pub action: Action,
    pub root: PathBuf,
    pub json: bool,
    pub style: Style,
}

/// What a run prints and returns.
#[derive(Debug, Default)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub status: u8,
}

impl Outcome {
    fn report(report: &Report, opts: &Options) -> Self {
        if opts.json {
            return Outcome {
                stdout: report.to_json().into_bytes(),
                stderr: String::new(),
                status: report.exit_status(),
            };
        }
        let (out, err) = report.render_human(opts.style);
        Outcome {
            stdout: out.into_bytes(),
            stderr: err,
            status: report.exit_status(),
        }
    }

    fn error(error: Error, json: bool, style: Style) -> Self {
        let status = error.exit_status();
        if json {
            let report = Report::failure(error, Vec::new(), Vec::new());
            return Outcome {
                stdout: report.to_json().into_bytes(),
                stderr: String::new(),
                status,
            };
        }
        Outcome {
            stdout: Vec::new(),
            stderr: error_text(&error, style),
            status,
        }
    }
}

/// The environment a run sees (injected so tests need no process).
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

/// Run the command for `args` (argv[0] first).
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
    let raw = match RawArgs::try_parse_from(&args) {
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
        let error = usage("no patch given: name a patch file, pass the patch text, or pipe it in");
        return Outcome::error(error, wants_json, style);
    }
    execute(opts)
}

fn clap_error(e: clap::Error, json: bool) -> Outcome {
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
        let error = Error::new(ErrorCode::Usage, message)
            .with_hint("run apply-patch --help for the options");
        return Outcome::error(error, true, Style::Plain);
    }
    Outcome {
        stdout: Vec::new(),
        stderr: e.to_string(),
        status: ErrorCode::Usage.exit_status(),
    }
}

/// Raw arguments → validated options.
pub fn validate(raw: RawArgs, style: Style) -> Result<Options, Error> {
    let root = raw.root.clone().unwrap_or_else(|| PathBuf::from("."));
    if raw.command.is_some() {
        let convert = matches!(raw.command, Some(Command::Convert { .. }));
        if let Some(flag) = apply_only_flag(&raw, convert) {
            return Err(usage(&format!(
                "{flag} applies a patch; it cannot be combined with a subcommand"
            )));
        }
    }
    let action = match raw.command {
        Some(Command::Undo) => Action::Undo,
        Some(Command::Recover) => Action::Recover,
        Some(Command::Convert { to, patch, read }) => Action::Convert {
            input: input_of(patch)?,
            to,
            // Given before the subcommand or after it.
            parse: ParseOptions {
                format: read.format.or(raw.format).map(format_of),
                strip: read.strip.or(raw.strip),
                recount: read.recount || raw.recount,
                unidiff_zero: read.unidiff_zero || raw.unidiff_zero,
            },
        },
        Some(Command::Completions { shell }) => Action::Completions(shell),
        Some(Command::Man) => Action::Man,
        Some(Command::CheckPatches { paths }) => Action::CheckPatches(paths),
        // agent (issue 6)
        Some(Command::Read {
            path,
            lines,
            around,
        }) => {
            if around == Some(0) {
                return Err(usage("--around counts lines from 1"));
            }
            Action::Read {
                path,
                lines,
                around,
            }
        }
        Some(Command::Confirm { id }) => Action::Confirm(id),
        Some(Command::Chip { id }) => Action::Chip(id),
        Some(Command::Mcp { read_only }) => Action::Mcp { read_only },
        Some(Command::Range {
            file,
            line,
            kind,
            lang,
        }) => {
            if line == 0 {
                return Err(usage("--line counts from 1"));
            }
            let kind = kind.map(|k| match k {
                KindArg::Function => structure::Kind::Function,
                KindArg::Block => structure::Kind::Block,
                KindArg::Tag => structure::Kind::Tag,
            });
            Action::Range {
                file,
                line,
                kind,
                lang: lang_of(lang.as_deref())?,
            }
        }
        Some(Command::CheckBalance { files, lang }) => Action::CheckBalance {
            files,
            lang: lang_of(lang.as_deref())?,
        },
        None => {
            if raw.window == 0 {
                return Err(usage("--window must be at least 1"));
            }
            let apply = ApplyOptions {
                format: raw.format.map(format_of),
                strip: raw.strip,
                recount: raw.recount,
                unidiff_zero: raw.unidiff_zero,
                reverse: raw.reverse,
                directory: raw.directory,
                include: raw.include,
                exclude: raw.exclude,
                window: raw.window,
                strict_base: raw.strict_base,
                protect: raw.protect,
                allow_notebooks: raw.allow_notebooks,
                check: raw.check,
                diff: raw.diff,
                index: raw.index,
                cached: raw.cached,
                three_way: raw.three_way,
                conflict_markers: raw.conflict_markers,
                strict_balance: raw.strict_balance,
            };
            // agent (issue 6)
            let agent = AgentOptions {
                rebase: raw.rebase,
                preview: raw.preview,
                post_check: raw.post_check,
                post_check_timeout: None,
                rollback_on_fail: raw.rollback_on_fail,
                max_risk: raw.max_risk,
                state: None,
                report_risk: raw.max_risk.is_some() || raw.preview,
            };
            if agent.preview && apply.check {
                return Err(usage("--preview and --check do not go together"));
            }
            Action::Apply {
                input: input_of(raw.patch)?,
                apply,
                agent: Box::new(agent),
            }
        }
    };
    Ok(Options {
        action,
        root,
        json: raw.json,
        style,
    })
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Agent => Format::Agent,
        FormatArg::Unified => Format::Unified,
        FormatArg::Json => Format::Json,
    }
}

/// The first option given that only applying a patch uses (a subcommand ignores them, so
/// naming one with a subcommand is a mistake worth reporting). `convert` reads a patch: it
/// takes the parse options (`-p`, `--format`, `--recount`, `--unidiff-zero`).
fn apply_only_flag(raw: &RawArgs, convert: bool) -> Option<&'static str> {
    let parse_flags = [
        (raw.strip.is_some(), "-p"),
        (raw.recount, "--recount"),
        (raw.unidiff_zero, "--unidiff-zero"),
        (raw.format.is_some(), "--format"),
    ];
    let parse_flags = parse_flags.into_iter().filter(|_| !convert);
    let flags = [
        (raw.patch.is_some(), "PATCH"),
        (raw.check, "--check"),
        (raw.diff, "--diff"),
        (raw.reverse, "--reverse"),
        (raw.directory.is_some(), "--directory"),
        (!raw.include.is_empty(), "--include"),
        (!raw.exclude.is_empty(), "--exclude"),
        (raw.window != 20, "--window"),
        (raw.strict_base, "--strict-base"),
        (!raw.protect.is_empty(), "--protect"),
        (raw.allow_notebooks, "--allow-notebooks"),
        (raw.strict_balance, "--strict-balance"),
    ];
    flags
        .into_iter()
        .chain(parse_flags)
        .find(|(used, _)| *used)
        .map(|(_, name)| name)
}

fn usage(message: &str) -> Error {
    Error::new(ErrorCode::Usage, message).with_hint("run apply-patch --help for the options")
}

/// PATCH: none or `-` is standard input; text that is itself a patch is the patch; else a
/// file name.
fn input_of(arg: Option<OsString>) -> Result<Input, Error> {
    let Some(arg) = arg else {
        return Ok(Input::Stdin);
    };
    if arg == "-" {
        return Ok(Input::Stdin);
    }
    if let Some(text) = arg.to_str() {
        if apply_patch::parse::is_inline_patch_text(text) {
            return Ok(Input::Text(text.to_string()));
        }
    }
    Ok(Input::File(PathBuf::from(arg)))
}

fn read_input(input: &Input) -> Result<Vec<u8>, Error> {
    match input {
        Input::Text(t) => Ok(t.clone().into_bytes()),
        Input::File(p) => {
            let shown = p.display().to_string();
            std::fs::read(p).map_err(|e| {
                let mut err = Error::io(&shown, "cannot read the patch", &e);
                if e.kind() == std::io::ErrorKind::NotFound || p.is_dir() {
                    err.code = ErrorCode::Usage;
                    err.hint = Some(
                        "PATCH is a file, `-` for standard input, or the patch text itself".into(),
                    );
                }
                err
            })
        }
        Input::Stdin => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Error::io("<stdin>", "cannot read the patch from", &e))?;
            Ok(buf)
        }
    }
}

fn execute(opts: Options) -> Outcome {
    let (json, style) = (opts.json, opts.style);
    match &opts.action {
        // agent (issue 6): applies with agent options go through the agent layer (risk,
        // preview, rebase, post-check); the others through the plain and git flows, with a
        // refused patch kept as a chip.
        Action::Apply {
            input,
            apply,
            agent,
        } if agent_cli::any(agent) => match read_input(input) {
            Ok(bytes) => agent_outcome(agent_cli::apply(
                &opts.root, &bytes, apply, agent, json, style,
            )),
            Err(e) => Outcome::error(e, json, style),
        },
        Action::Apply { input, apply, .. } => match read_input(input) {
            Ok(bytes) => Outcome::report(
                &apply_patch::agent::run::apply_plain(&opts.root, &bytes, apply),
                &opts,
            ),
            Err(e) => Outcome::error(e, json, style),
        },
        Action::Read {
            path,
            around: Some(line),
            ..
        } => agent_outcome(agent_cli::read_around(&opts.root, path, *line, json, style)),
        Action::Read { path, lines, .. } => agent_outcome(agent_cli::read(
            &opts.root,
            path,
            lines.as_deref(),
            json,
            style,
        )),
        Action::Confirm(id) => agent_outcome(agent_cli::confirm(&opts.root, id, json, style)),
        Action::Chip(id) => agent_outcome(agent_cli::chip(&opts.root, id, json, style)),
        Action::Mcp { read_only } => agent_outcome(agent_cli::serve_mcp(&opts.root, *read_only)),
        Action::Convert { input, to, parse } => {
            match read_input(input).and_then(|b| convert(&b, parse, *to)) {
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
        Action::CheckPatches(paths) => {
            let report = apply_patch::git::check_patches(&opts.root, paths);
            Outcome {
                stdout: if json {
                    report.to_json().into_bytes()
                } else {
                    report.render_human().into_bytes()
                },
                stderr: String::new(),
                status: report.exit_status(),
            }
        }
        Action::Recover => txn_outcome(txn::recover(&opts.root), &opts, recover_text),
        Action::Completions(shell) => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut RawArgs::command(), "apply-patch", &mut out);
            Outcome {
                stdout: out,
                ..Outcome::default()
            }
        }
        Action::Man => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(RawArgs::command()).render(&mut out) {
                Ok(()) => Outcome {
                    stdout: out,
                    ..Outcome::default()
                },
                Err(e) => Outcome::error(
                    Error::io("<stdout>", "cannot render the manual to", &e),
                    json,
                    style,
                ),
            }
        }
    }
}

// agent (issue 6)
fn agent_outcome(o: agent_cli::Output) -> Outcome {
    Outcome {
        stdout: o.stdout,
        stderr: o.stderr,
        status: o.status,
    }
}

/// `--lang NAME`: a known language or a usage error listing them.
fn lang_of(name: Option<&str>) -> Result<Option<structure::Lang>, Error> {
    let Some(name) = name else {
        return Ok(None);
    };
    structure::Lang::from_name(name).map(Some).ok_or_else(|| {
        usage(&format!(
            "unknown language `{name}`; known: {}",
            structure::Lang::names().join(", ")
        ))
    })
}

/// A text file for `range` / `check-balance`, relative to the root: `Ok(None)` when it is
/// not UTF-8. Only a regular file is read: a FIFO or device is `unsupported_file` (opened
/// without blocking, checked on the open file), never a read that waits forever.
fn read_text(root: &std::path::Path, file: &std::path::Path) -> Result<Option<String>, Error> {
    use std::io::Read as _;
    let shown = file.display().to_string();
    let io = |e: std::io::Error| {
        let mut err = Error::io(&shown, "cannot read", &e);
        if e.kind() == std::io::ErrorKind::NotFound {
            err.code = ErrorCode::Usage;
            err.hint = Some("FILE is relative to --root (default: the current directory)".into());
        }
        err
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Windows has no FIFO to block on.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut f = options.open(root.join(file)).map_err(io)?;
    let kind = f.metadata().map_err(io)?.file_type();
    if kind.is_dir() {
        return Err(
            Error::new(ErrorCode::IsDirectory, format!("{shown} is a directory")).with_path(&shown),
        );
    }
    if !kind.is_file() {
        #[cfg(unix)]
        let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&kind);
        #[cfg(not(unix))]
        let fifo = false;
        let what = if fifo { "a fifo" } else { "not a regular file" };
        return Err(Error::new(
            ErrorCode::UnsupportedFile,
            format!("{shown} is {what}: only regular files are read"),
        )
        .with_path(&shown));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok(String::from_utf8(bytes).ok())
}

/// A JSON object with `ok` and `error` added (the shape of every `--json` answer).
fn json_object(value: impl serde::Serialize, ok: bool) -> Vec<u8> {
    let mut value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("ok".into(), ok.into());
        map.insert("error".into(), serde_json::Value::Null);
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

fn range_outcome(
    opts: &Options,
    file: &std::path::Path,
    line: usize,
    kind: Option<structure::Kind>,
    lang: Option<structure::Lang>,
) -> Outcome {
    let shown = file.display().to_string();
    let found = read_text(&opts.root, file).and_then(|text| {
        let text = text.ok_or_else(|| {
            Error::new(ErrorCode::InvalidUtf8, format!("{shown} is not UTF-8 text"))
                .with_path(&shown)
        })?;
        let lang = lang.unwrap_or_else(|| structure::Lang::from_path(file));
        structure::range(&text, line, kind, lang).map_err(|e| Error::from(e).with_path(&shown))
    });
    match found {
        Ok(range) => {
            let report = structure::RangeReport { path: shown, range };
            Outcome {
                stdout: if opts.json {
                    json_object(&report, true)
                } else {
                    report.render().into_bytes()
                },
                ..Outcome::default()
            }
        }
        Err(e) => Outcome::error(e, opts.json, opts.style),
    }
}

fn balance_outcome(opts: &Options, files: &[PathBuf], lang: Option<structure::Lang>) -> Outcome {
    let mut checked = Vec::new();
    for file in files {
        let text = match read_text(&opts.root, file) {
            Ok(t) => t,
            Err(e) => return Outcome::error(e, opts.json, opts.style),
        };
        let lang = lang.unwrap_or_else(|| structure::Lang::from_path(file));
        let balance = match text {
            Some(text) => structure::check_balance(&text, lang),
            None => structure::Balance::NotChecked {
                reason: "not UTF-8 text".into(),
            },
        };
        checked.push(structure::FileBalance {
            path: file.display().to_string(),
            lang,
            balance,
        });
    }
    let report = structure::BalanceReport::new(checked);
    Outcome {
        stdout: if opts.json {
            json_object(&report, report.ok)
        } else {
            report.render().into_bytes()
        },
        status: if report.ok { 0 } else { 1 },
        ..Outcome::default()
    }
}

fn convert(input: &[u8], parse: &ParseOptions, to: ConvertTo) -> Result<Vec<u8>, Error> {
    let to = match to {
        ConvertTo::Unified => Format::Unified,
        ConvertTo::Agent => Format::Agent,
    };
    apply_patch::render::convert(input, parse, to)
}

/// `undo` and `recover`: their own report as JSON (plus `ok` and `error`), or a short
/// human summary.
fn txn_outcome<R: serde::Serialize>(
    result: Result<R, Error>,
    opts: &Options,
    human: impl Fn(&R) -> String,
) -> Outcome {
    let report = match result {
        Ok(r) => r,
        Err(e) => return Outcome::error(e, opts.json, opts.style),
    };
    if !opts.json {
        return Outcome {
            stdout: human(&report).into_bytes(),
            ..Outcome::default()
        };
    }
    let mut value = serde_json::to_value(&report).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("ok".into(), true.into());
        map.insert("error".into(), serde_json::Value::Null);
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    Outcome {
        stdout: text.into_bytes(),
        ..Outcome::default()
    }
}

fn undo_text(r: &txn::UndoReport) -> String {
    let mut s = warnings_text(&r.recovered);
    match &r.undone {
        None => s.push_str("nothing to undo\n"),
        Some(id) => {
            s.push_str(&format!("undid transaction {id}\n"));
            for f in &r.files {
                s.push_str(&format!("restored {f}\n"));
            }
        }
    }
    s + &warnings_text(&r.warnings)
}

fn recover_text(r: &txn::RecoverReport) -> String {
    let mut s = match (&r.id, r.action) {
        (Some(id), Some(txn::RecoverAction::RolledBack)) => {
            format!("rolled back interrupted transaction {id}\n")
        }
        (Some(id), Some(txn::RecoverAction::Completed)) => {
            format!("completed interrupted transaction {id}\n")
        }
        _ => "nothing to recover\n".to_string(),
    };
    for f in &r.restored {
        s.push_str(&format!("restored {f}\n"));
    }
    for f in &r.conflicts {
        s.push_str(&format!("left as found (changed after the crash): {f}\n"));
    }
    if let Some(kept) = &r.kept {
        s.push_str(&format!("journal and backups kept in {}\n", kept.display()));
    }
    s + &warnings_text(&r.warnings)
}

fn warnings_text(warnings: &[txn::TxnWarning]) -> String {
    warnings
        .iter()
        .map(|w| format!("warning[{}]: {}\n", w.code, w.message))
        .collect()
}

/// Invoked as `apply_patch` (a symlink or copy): the Codex drop-in.
fn invoked_as_codex(args: &[OsString]) -> bool {
    args.first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .is_some_and(|n| n == "apply_patch")
}

/// Codex's `apply_patch`: the patch text or a patch file as the only argument (standard input
/// without one), our placement and safety rules, Codex's output.
fn run_codex(args: &[OsString]) -> Outcome {
    if args.len() > 1 {
        return Outcome {
            stderr: "apply_patch: expected exactly one argument: the patch text or a patch file\n"
                .into(),
            status: 2,
            ..Outcome::default()
        };
    }
    let input = match input_of(args.first().cloned()) {
        Ok(i) => i,
        Err(e) => return Outcome::error(e, false, Style::Plain),
    };
    let bytes = match read_input(&input) {
        Ok(b) => b,
        Err(e) => return Outcome::error(e, false, Style::Plain),
    };
    let report = apply::apply_to_dir(std::path::Path::new("."), &bytes, &ApplyOptions::default());
    let (out, err) = report.render_codex();
    Outcome {
        stdout: out.into_bytes(),
        stderr: err,
        status: report.exit_status(),
    }
}

#[cfg(test)]
mod tests;
