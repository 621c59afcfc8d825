//! Stage: command line (arguments). clap's raw arguments and subcommands, exactly as typed;
//! nothing here validates or runs them.

use super::*;

pub(crate) const EXAMPLES: &str = "\
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
    subcommand_negates_reqs = true,
    // `--help` covers it, and every subcommand the manual names has a page of its own.
    disable_help_subcommand = true
)]
pub struct RawArgs {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Directory the patch's paths are relative to.
    #[arg(long, value_name = "DIR", global = true)]
    pub root: Option<PathBuf>,
    /// Print exactly one JSON object on standard output (also on failure).
    #[arg(long, global = true)]
    pub json: bool,
    /// Whose words the hints use (the npm package's API passes `javascript`); not for people.
    #[arg(long, value_name = "NAME", global = true, hide = true,
          value_parser = apply_patch::spelling::FrontEnd::NAMES)]
    pub front_end: Option<String>,
    /// Everything that only applying a patch uses: a usage error with a subcommand.
    #[command(flatten)]
    pub apply: ApplyArgs,
    /// The options of [`ApplyArgs`] given on the command line (`--check`, `PATCH`…), as
    /// shown to the user; filled by [`parse_args`] when a subcommand is given (the one case
    /// that refuses them), empty otherwise.
    #[arg(skip)]
    pub apply_given: Vec<String>,
}

/// The arguments of applying a patch: one clap group, so that naming any of them with a
/// subcommand is refused without a hand-kept list.
#[derive(Debug, Default, clap::Args)]
pub struct ApplyArgs {
    /// The patch: a file, `-` for standard input (the default), or the patch text itself.
    #[arg(value_name = "PATCH")]
    pub patch: Option<OsString>,
    /// Read the patch from FILE (as GNU patch's -i); `-` is standard input.
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        conflicts_with = "patch"
    )]
    pub input: Option<OsString>,
    /// Plan only: report what would change and write nothing.
    #[arg(long, visible_alias = "dry-run")]
    pub check: bool,
    /// Print the resulting unified diff.
    #[arg(long)]
    pub diff: bool,
    /// Apply the inverse of a unified diff.
    #[arg(long, short = 'R')]
    pub reverse: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Prefix every path of the patch with DIR.
    #[arg(long, value_name = "DIR")]
    pub directory: Option<String>,
    /// Only apply files matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip files matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// How many lines from its hint a match still counts as near.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub window: usize,
    /// When a hunk is found nowhere, ignore up to N outer context lines at each end of it,
    /// taking the result only where it is unique in the whole file (0: off).
    #[arg(long, short = 'F', value_name = "N", default_value_t = apply_patch::locate::DEFAULT_FUZZ)]
    pub fuzz: usize,
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
    /// Accepted for GNU patch users; already the default: a patch that is entirely applied
    /// already is a no-op (exit 0), a partly applied one is refused, never applied twice.
    #[arg(short = 'N', long)]
    pub forward: bool,
    /// Print a diffstat of the patch (as git apply --stat) and write nothing, unless --apply.
    #[arg(long)]
    pub stat: bool,
    /// Print added and deleted line counts per file, tab-separated (as git apply
    /// --numstat), and write nothing, unless --apply.
    #[arg(long)]
    pub numstat: bool,
    /// Print the created, deleted, renamed, copied and mode-changed files (as git apply
    /// --summary), and write nothing, unless --apply.
    #[arg(long)]
    pub summary: bool,
    /// With --stat, --numstat or --summary: apply the patch as well.
    #[arg(long)]
    pub apply: bool,
    /// Also print where each hunk went: its line, match level and offset.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Not supported: a patch applies whole or not at all (a refused patch is kept as a
    /// chip; use --check first, or fix the hunk named in the error).
    #[arg(long, hide = true)]
    pub reject: bool,
    // git integration (src/git/flow.rs):
    /// Apply to the work tree and the git index together (touched files must match the index).
    #[arg(long)]
    pub index: bool,
    /// Apply to the git index only; the work tree is not touched.
    #[arg(long)]
    pub cached: bool,
    /// When a hunk does not apply, merge from the diff's base blob (three-way).
    #[arg(long = "3way", short = '3')]
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
    /// Pipe each written file matching GLOB through CMD (`sh -c`, in the root: the planned
    /// bytes on stdin, the formatted bytes on stdout) before the commit; repeatable, the
    /// first matching one formats a file. A failure refuses the patch (formatter_failed).
    #[arg(long, value_name = "GLOB=CMD")]
    pub formatter: Vec<String>,
    /// Seconds one --formatter run may take before it is killed (default: 600).
    #[arg(long, value_name = "SECS", requires = "formatter")]
    pub formatter_timeout: Option<u64>,
    /// Refuse (risk_exceeded) a patch whose risk score is above N.
    #[arg(long, value_name = "N")]
    pub max_risk: Option<u32>,
    /// How durable the commit is: `full` (the default: flushed to the disk step by step, so
    /// a commit survives a power loss or an OS crash) or `atomic` (nothing flushed: still all
    /// or nothing and recovered after a killed process, but not after a power loss or an OS
    /// crash; for sandboxes, CI, tmpfs). `fsync` is `full` with one fsync per file, never a
    /// syncfs. Default: $APPLY_PATCH_DURABILITY, else full.
    #[arg(long, value_name = "MODE", value_parser = apply_patch::pipeline::Durability::NAMES)]
    pub durability: Option<String>,
}

/// Parse `args` (argv[0] first) and note which apply options were typed.
pub fn parse_args(args: &[OsString]) -> Result<RawArgs, clap::Error> {
    use clap::FromArgMatches as _;
    let matches = RawArgs::command().try_get_matches_from(text_after_dashes(args))?;
    let mut raw = RawArgs::from_arg_matches(&matches)?;
    // Listing the apply options builds their clap arguments again: an apply, the everyday
    // run, does not need the list, so only a subcommand pays for it.
    let Some(command) = &raw.command else {
        return Ok(raw);
    };
    let convert = matches!(command, Command::Convert { .. });
    raw.apply_given = apply_arg_names(convert)
        .into_iter()
        .filter(|(id, _)| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|(_, shown)| shown)
        .collect();
    Ok(raw)
}

/// An argument holding a newline is patch text, never an option, even when it starts with
/// `-` (a unified diff's `--- a/…`): it is moved after a `--` so that clap takes it as PATCH.
fn text_after_dashes(args: &[OsString]) -> Vec<OsString> {
    let is_text = |a: &OsString| {
        a.to_str()
            .is_some_and(|s| s.starts_with('-') && s.contains('\n'))
    };
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    if !args[..end].iter().skip(1).any(is_text) {
        return args.to_vec();
    }
    let (mut rest, mut text) = (Vec::new(), Vec::new());
    for (i, arg) in args[..end].iter().enumerate() {
        if i > 0 && is_text(arg) {
            text.push(arg.clone());
        } else {
            rest.push(arg.clone());
        }
    }
    rest.push("--".into());
    rest.append(&mut text);
    rest.extend(args[end..].iter().skip(1).cloned());
    rest
}

/// The ids of [`ApplyArgs`] and how each is shown (`--check`, `-p`, `PATCH`). `convert`
/// reads a patch, so it takes the parse options ([`ReadArgs`]) and they are left out.
fn apply_arg_names(convert: bool) -> Vec<(String, String)> {
    use clap::Args as _;
    let parse_ids: Vec<String> = ReadArgs::augment_args(clap::Command::new("read"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    ApplyArgs::augment_args(clap::Command::new("apply"))
        .get_arguments()
        .filter(|a| !(convert && parse_ids.iter().any(|id| id == a.get_id().as_str())))
        .map(|a| {
            let shown = match (a.get_long(), a.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => a.get_id().as_str().to_uppercase(),
            };
            (a.get_id().to_string(), shown)
        })
        .collect()
}

/// How `convert` reads its patch: the parse options of an apply.
#[derive(Debug, Default, clap::Args)]
pub struct ReadArgs {
    /// Strip N leading path components from unified diff paths.
    #[arg(short = 'p', value_name = "N")]
    pub strip: Option<usize>,
    /// Force the patch format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_parser = Format::NAMES)]
    pub format: Option<String>,
    /// Ignore hunk line counts of unified diffs.
    #[arg(long)]
    pub recount: bool,
    /// Accept zero-context hunks.
    #[arg(long)]
    pub unidiff_zero: bool,
    /// The file every SEARCH/REPLACE block edits (lines outside the blocks are then prose).
    #[arg(long, value_name = "FILE")]
    pub path: Option<String>,
    /// The Base of the --path file (≥ 8 hex digits of its SHA-256): the blocks' line hints
    /// are then trusted.
    #[arg(long, value_name = "HEX")]
    pub base: Option<String>,
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
    /// Print the manual page (roff) of apply-patch, or of one subcommand.
    Man {
        /// The subcommand whose page to print (default: the main page).
        #[arg(value_name = "SUBCOMMAND")]
        page: Option<String>,
    },
    /// Check that patch files still apply to the staged tree (git; writes nothing).
    CheckPatches {
        /// Patch files, or directories searched for *.patch and *.diff (default: the root).
        #[arg(value_name = "PATHS")]
        paths: Vec<PathBuf>,
        /// Accept patches that apply only with up to N outer context lines ignored (fuzz);
        /// without it such a patch fails: it needs refreshing.
        #[arg(long, short = 'F', value_name = "N")]
        fuzz: Option<usize>,
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
        #[arg(long, conflicts_with = "post_check")]
        read_only: bool,
        /// A check the writing tools may run after writing (`sh -c`, in the root), as CMD or
        /// NAME=CMD; repeatable. The model only picks one by name; without this flag the
        /// tools run nothing.
        #[arg(long, value_name = "[NAME=]CMD")]
        post_check: Vec<String>,
        /// Pipe each file the writing tools write whose path matches GLOB through CMD (`sh
        /// -c`, in the root) before the commit, as `--formatter` of an apply; repeatable.
        /// The operator's only: no tool argument names a formatter.
        #[arg(long, value_name = "GLOB=CMD", conflicts_with = "read_only")]
        formatter: Vec<String>,
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
        #[arg(long, value_name = "KIND", value_parser = structure::Kind::NAMES)]
        kind: Option<String>,
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
