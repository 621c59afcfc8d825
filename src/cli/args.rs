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
