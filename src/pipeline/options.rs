//! Stage: orchestration (options). What one run of the pipeline is asked to do: the typed
//! [`Options`] a library caller builds with [`Options::builder`], the git mode as one enum
//! ([`GitMode`]), and the run's [`Mode`] (write, check, preview) kept apart from them. The
//! command line, the MCP tools and the Python binding build these directly (the command line
//! maps its four git flags with [`GitMode::from_flags`]); [`Options::check`] is where a
//! combination that cannot mean anything becomes a usage error that says why.

use crate::usage::UsageError;
use std::time::Duration;

use super::formatter::Formatter;
use crate::error::Error;
use crate::guard::Globs;
use crate::locate::LocateOptions;
use crate::model::Format;
use crate::parse::ParseOptions;
use crate::plan::PlanOptions;
use crate::state::StateDir;
use crate::txn::Durability;

/// What a run does with its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Commit the plan (the default).
    #[default]
    Write,
    /// Plan only (`--check`): nothing is written, and a crashed transaction is not recovered
    /// but refused.
    Check,
    /// Keep the plan under an event id for `confirm` (`--preview`); nothing is written.
    Preview,
}

/// Where the git index takes part (SPEC §7). One enum instead of four flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GitMode {
    /// The work tree only (inside a repository, with git's write guards and blob ids).
    #[default]
    None,
    /// `--index`: the work tree and the index, together; touched files must match the index.
    Index,
    /// `--cached`: the index only; the work tree is not touched.
    Cached,
    /// `--3way`: a file whose hunks do not apply is merged from its diff's base blob, then
    /// written as `into` says; with `markers`, a conflict is written with git-style markers
    /// instead of refusing.
    ThreeWay { markers: bool, into: Stage },
}

/// Which trees a three-way apply writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stage {
    /// The work tree (`--3way`).
    #[default]
    WorkTree,
    /// The work tree and the index (`--3way --index`).
    Index,
    /// The index only (`--3way --cached`).
    Cached,
}

impl GitMode {
    /// The command line's four flags (`--index`, `--cached`, `--3way`,
    /// `--conflict-markers`) as one mode: `--cached` alone decides over `--index`, as git's
    /// `--cached --index` does; `--conflict-markers` without `--3way` is a usage error.
    pub fn from_flags(
        index: bool,
        cached: bool,
        three_way: bool,
        conflict_markers: bool,
    ) -> Result<GitMode, Error> {
        if conflict_markers && !three_way {
            return Err(UsageError::MarkersWithout3Way.into());
        }
        let into = match (index, cached) {
            (_, true) => Stage::Cached,
            (true, false) => Stage::Index,
            (false, false) => Stage::WorkTree,
        };
        Ok(match (three_way, into) {
            (true, into) => GitMode::ThreeWay {
                markers: conflict_markers,
                into,
            },
            (false, Stage::Cached) => GitMode::Cached,
            (false, Stage::Index) => GitMode::Index,
            (false, Stage::WorkTree) => GitMode::None,
        })
    }

    /// The index is written (with or without the work tree).
    pub fn writes_index(self) -> bool {
        matches!(
            self,
            GitMode::Index
                | GitMode::Cached
                | GitMode::ThreeWay {
                    into: Stage::Index | Stage::Cached,
                    ..
                }
        )
    }

    /// The plan is made against the index, and only the index is written.
    pub fn cached(self) -> bool {
        matches!(
            self,
            GitMode::Cached
                | GitMode::ThreeWay {
                    into: Stage::Cached,
                    ..
                }
        )
    }

    /// `Some(markers)` with `--3way`.
    pub fn three_way(self) -> Option<bool> {
        match self {
            GitMode::ThreeWay { markers, .. } => Some(markers),
            _ => None,
        }
    }

    /// The flag that asks for a git work tree, for messages.
    pub(crate) fn flag(self) -> Option<&'static str> {
        match self {
            GitMode::None => None,
            GitMode::Index => Some("--index"),
            m if m.cached() => Some("--cached"),
            _ => Some("--3way"),
        }
    }
}

/// Which front end runs the pipeline, so that a refusal's hint names what that caller can
/// do (the table is [`crate::spelling`]).
pub use crate::spelling::FrontEnd;

/// `--post-check CMD`: a command run in the root after the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PostCheck {
    /// Run with `sh -c` in the root.
    pub command: String,
    /// How long it may run (None: the agent's default, ten minutes).
    pub timeout: Option<Duration>,
    /// `--rollback-on-fail`: a failing command reverts the transaction (and the index).
    pub rollback_on_fail: bool,
}

/// The variable hooks and agent sandboxes set instead of passing a durability: read here,
/// once, by [`RawOptions::resolve`], for every front end.
pub const DURABILITY_ENV: &str = "APPLY_PATCH_DURABILITY";

/// The options as a front end receives them — names as text, numbers unchecked, switches
/// that default by a rule left unset — in the Python API's names (its JSON is this struct).
/// [`RawOptions::resolve`] decides every rule once, for the command line, the MCP tools, the
/// Python module and (through the command line) the npm package: the front ends only map
/// their arguments here.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RawOptions {
    /// Plan only; nothing is written.
    pub check: bool,
    /// Keep the plan under an event id for `confirm`; nothing is written.
    pub preview: bool,
    pub index: bool,
    pub cached: bool,
    pub three_way: bool,
    pub conflict_markers: bool,
    pub diff: bool,
    pub reverse: bool,
    pub strip: Option<usize>,
    pub directory: Option<String>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub recount: bool,
    pub unidiff_zero: bool,
    /// None: the default (20).
    pub window: Option<usize>,
    /// Outer context lines fuzz may ignore at each end of a hunk; None: the default (2).
    pub fuzz: Option<usize>,
    /// One of [`Format::NAMES`]; None: detected.
    pub format: Option<String>,
    /// The file every SEARCH/REPLACE block edits (`--path`; SPEC §4b).
    pub path: Option<String>,
    /// The Base of the `path` file (`--base`): the blocks' line hints are then trusted.
    pub base: Option<String>,
    pub strict_base: bool,
    pub protect: Vec<String>,
    pub allow_notebooks: bool,
    pub strict_balance: bool,
    pub rebase: bool,
    pub max_risk: Option<u32>,
    /// A command run with `sh -c` in the root after the commit.
    pub post_check: Option<String>,
    pub rollback_on_fail: bool,
    /// `GLOB=CMD`, repeatable: the written files matching GLOB are piped through CMD (run
    /// with `sh -c` in the root) before the commit.
    pub formatter: Vec<String>,
    /// Seconds one formatter run may take; None: ten minutes.
    pub formatter_timeout: Option<u64>,
    /// None: the rule — a refused patch is kept as a chip, except by a plain check (one
    /// without `rebase` or `max_risk`), which keeps nothing.
    pub keep_chips: Option<bool>,
    /// None: with `max_risk` and in a preview.
    pub report_risk: Option<bool>,
    /// One of [`Durability::NAMES`]; None: [`DURABILITY_ENV`], else full.
    pub durability: Option<String>,
    /// Whose words a refusal's hint uses (not part of the JSON: each front end sets its own).
    #[serde(skip)]
    pub front_end: FrontEnd,
}

impl RawOptions {
    /// Every option rule, decided once: the mode from `check` and `preview`, the git mode,
    /// the names (format, durability, with [`DURABILITY_ENV`] read here), the window's range,
    /// whether chips are kept, and the combinations [`Options::check`] refuses. A refusal is
    /// `usage`, its message the same for every front end, its hint in the caller's words.
    pub fn resolve(self) -> Result<(Options, Mode), Error> {
        let env = std::env::var(DURABILITY_ENV).ok();
        self.resolve_with_env(env.as_deref())
    }

    /// [`RawOptions::resolve`] with the variable's value given (`env`).
    pub fn resolve_with_env(self, env: Option<&str>) -> Result<(Options, Mode), Error> {
        let front = self.front_end;
        self.resolve_inner(env).map_err(|e| e.for_front_end(front))
    }

    fn resolve_inner(self, env: Option<&str>) -> Result<(Options, Mode), Error> {
        let mode = match (self.check, self.preview) {
            (true, true) => return Err(UsageError::PreviewWithCheck.into()),
            (true, false) => Mode::Check,
            (false, true) => Mode::Preview,
            (false, false) => Mode::Write,
        };
        let git = GitMode::from_flags(
            self.index,
            self.cached,
            self.three_way,
            self.conflict_markers,
        )?;
        let format = match self.format.as_deref() {
            None => None,
            Some(name) => {
                Some(
                    Format::from_name(name).ok_or_else(|| UsageError::UnknownFormat {
                        name: name.to_string(),
                        known: &Format::NAMES,
                    })?,
                )
            }
        };
        let durability = durability_of(self.durability.as_deref(), env)?;
        if self.rollback_on_fail && self.post_check.is_none() {
            return Err(UsageError::RollbackWithoutPostCheck.into());
        }
        if self.base.is_some() && self.path.is_none() {
            return Err(UsageError::BaseWithoutPath.into());
        }
        let timeout = match self.formatter_timeout {
            Some(0) => return Err(UsageError::ZeroFormatterTimeout.into()),
            t => t.map(Duration::from_secs),
        };
        let formatters = self
            .formatter
            .iter()
            .map(|spec| {
                Formatter::parse(spec).map(|mut f| {
                    f.timeout = timeout;
                    f
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let post_check = self.post_check.map(|command| PostCheck {
            command,
            timeout: None,
            rollback_on_fail: self.rollback_on_fail,
        });
        let options = Options {
            format,
            path: self.path,
            base: self.base,
            strip: self.strip,
            recount: self.recount,
            unidiff_zero: self.unidiff_zero,
            reverse: self.reverse,
            directory: self.directory,
            include: self.include,
            exclude: self.exclude,
            window: self.window.unwrap_or(LocateOptions::default().window),
            fuzz: self.fuzz.unwrap_or(crate::locate::DEFAULT_FUZZ),
            strict_base: self.strict_base,
            protect: self.protect,
            allow_notebooks: self.allow_notebooks,
            strict_balance: self.strict_balance,
            diff: self.diff,
            git,
            rebase: self.rebase,
            max_risk: self.max_risk,
            keep_chips: self
                .keep_chips
                .unwrap_or(mode != Mode::Check || self.rebase || self.max_risk.is_some()),
            report_risk: self
                .report_risk
                .unwrap_or(self.max_risk.is_some() || mode == Mode::Preview),
            post_check,
            formatters,
            state: None,
            front_end: self.front_end,
            durability,
        };
        options.check(mode)?;
        Ok((options, mode))
    }
}

/// The durability named by the option, else by the variable (`env`, its value), else full.
/// A name that is not a mode is a usage error (a typo must not silently keep, or drop, the
/// flushes).
fn durability_of(option: Option<&str>, env: Option<&str>) -> Result<Durability, Error> {
    let (name, from_env) = match (option, env) {
        (Some(name), _) => (name, false),
        (None, Some(name)) if !name.is_empty() => (name, true),
        (None, _) => return Ok(Durability::Full),
    };
    Durability::from_name(name).ok_or_else(|| {
        UsageError::UnknownDurability {
            from_env,
            name: name.to_string(),
            known: &Durability::NAMES,
        }
        .into()
    })
}

/// The options of one run (everything but the [`Mode`]). Build with [`Options::builder`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// `--format`: skip detection.
    pub format: Option<Format>,
    /// `-p N`; None: SPEC §3's defaults.
    pub strip: Option<usize>,
    pub recount: bool,
    pub unidiff_zero: bool,
    /// `--path FILE`: the file of every SEARCH/REPLACE block (SPEC §4b); blocks only.
    pub path: Option<String>,
    /// `--base HEX`: the Base of the `path` file, under which the blocks' line hints are
    /// trusted.
    pub base: Option<String>,
    /// `--reverse` (unified diffs only).
    pub reverse: bool,
    /// `--directory DIR`: prefix every path.
    pub directory: Option<String>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub window: usize,
    /// `--fuzz N` (SPEC §5 "Fuzz"): outer context lines a hunk found nowhere may lose at each
    /// end, under uniqueness in the whole file; 0 turns it off.
    pub fuzz: usize,
    pub strict_base: bool,
    pub protect: Vec<String>,
    pub allow_notebooks: bool,
    pub strict_balance: bool,
    /// `--diff`: the resulting unified diff in the result.
    pub diff: bool,
    pub git: GitMode,
    /// `--rebase`: merge onto a file that changed since its `*** Base:`.
    pub rebase: bool,
    /// `--max-risk N`: refuse (`risk_exceeded`) a patch scoring more.
    pub max_risk: Option<u32>,
    pub post_check: Option<PostCheck>,
    /// `--formatter GLOB=CMD`: the written files matching a glob are formatted before the
    /// commit (the first matching formatter).
    pub formatters: Vec<Formatter>,
    /// The state place (None: the root's own).
    pub state: Option<StateDir>,
    /// Put the risk score in the result (always with `max_risk` and in a preview).
    pub report_risk: bool,
    /// Keep a patch refused at placement as a chip (the command line and MCP do).
    pub keep_chips: bool,
    /// Whose words a refusal's hint uses.
    pub front_end: FrontEnd,
    /// How durable a commit is made: [`Durability::Full`] (SPEC §6, the default) or, for
    /// callers that do not need a commit to survive a power loss, [`Durability::Atomic`]
    /// (README "Transactions, undo and recovery").
    pub durability: Durability,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: None,
            strip: None,
            recount: false,
            unidiff_zero: false,
            path: None,
            base: None,
            reverse: false,
            directory: None,
            include: Vec::new(),
            exclude: Vec::new(),
            window: LocateOptions::default().window,
            fuzz: crate::locate::DEFAULT_FUZZ,
            strict_base: false,
            protect: Vec::new(),
            allow_notebooks: false,
            strict_balance: false,
            diff: false,
            git: GitMode::None,
            rebase: false,
            max_risk: None,
            post_check: None,
            formatters: Vec::new(),
            state: None,
            report_risk: false,
            keep_chips: false,
            front_end: FrontEnd::CommandLine,
            durability: Durability::Full,
        }
    }
}

/// Builds [`Options`]; every setter consumes and returns the builder.
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct OptionsBuilder {
    opts: Options,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $($(#[$doc])* pub fn $name(mut self, value: $ty) -> Self {
            self.opts.$name = value.into();
            self
        })*
    };
}

impl OptionsBuilder {
    setters! {
        /// Skip format detection.
        format: Format;
        /// Strip N leading path components (`-p N`).
        strip: usize;
        /// Recount hunk line numbers.
        recount: bool;
        /// Hunks without context (`--unidiff-zero`).
        unidiff_zero: bool;
        /// The file every SEARCH/REPLACE block edits (`--path`).
        path: String;
        /// The Base of the `path` file (`--base`): the blocks' line hints are trusted.
        base: String;
        /// Apply a unified diff in reverse.
        reverse: bool;
        /// Prefix every path with this folder.
        directory: String;
        /// The search window around a line hint.
        window: usize;
        /// Outer context lines fuzz may ignore at each end of a hunk (0: off).
        fuzz: usize;
        /// A diff's blob id that does not match is `stale_file`, not a warning.
        strict_base: bool;
        /// Allow patching notebooks.
        allow_notebooks: bool;
        /// An edit that unbalances a balanced file is refused.
        strict_balance: bool;
        /// Render the resulting unified diff.
        diff: bool;
        /// Where the git index takes part.
        git: GitMode;
        /// Merge onto a file changed since its `*** Base:`.
        rebase: bool;
        /// Refuse a patch whose risk score is above this.
        max_risk: u32;
        /// Run a command after the commit.
        post_check: PostCheck;
        /// The state place.
        state: StateDir;
        /// Report the risk score.
        report_risk: bool;
        /// Keep a refused patch as a chip.
        keep_chips: bool;
        /// Whose words a refusal's hint uses.
        front_end: FrontEnd;
        /// How durable a commit is made.
        durability: Durability;
    }

    /// Only files matching these globs.
    pub fn include(mut self, globs: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.opts.include = globs.into_iter().map(Into::into).collect();
        self
    }

    /// Skip files matching these globs.
    pub fn exclude(mut self, globs: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.opts.exclude = globs.into_iter().map(Into::into).collect();
        self
    }

    /// Pipe the written files matching a glob through a command (in this order; the first
    /// matching one formats a file).
    pub fn formatters(mut self, formatters: impl IntoIterator<Item = Formatter>) -> Self {
        self.opts.formatters = formatters.into_iter().collect();
        self
    }

    /// Refuse to touch files matching these globs.
    pub fn protect(mut self, globs: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.opts.protect = globs.into_iter().map(Into::into).collect();
        self
    }

    pub fn build(self) -> Options {
        self.opts
    }
}

impl Options {
    pub fn builder() -> OptionsBuilder {
        OptionsBuilder::default()
    }

    /// Refuse (`usage`, saying why) a combination that cannot mean anything in `mode`; the
    /// README's table lists every pair. The front ends call it before they read the patch,
    /// and every run calls it again.
    pub fn check(&self, mode: Mode) -> Result<(), Error> {
        if self.rebase && self.git.cached() {
            return Err(UsageError::RebaseCached.into());
        }
        if mode == Mode::Preview && self.git.three_way() == Some(true) {
            return Err(UsageError::PreviewMarkers.into());
        }
        if self.post_check.is_some() && mode != Mode::Write {
            let check = mode == Mode::Check;
            return Err(UsageError::PostCheckWithoutWrite { check }.into());
        }
        if self.window == 0 {
            return Err(UsageError::ZeroWindow.into());
        }
        Ok(())
    }

    /// Without the `git` feature: the first option asked for that needs it, for the usage
    /// error (the memory tree and a plain directory need none).
    #[cfg(not(feature = "git"))]
    pub(crate) fn needs_git(&self, mode: Mode) -> Option<&'static str> {
        if let Some(flag) = self.git.flag() {
            return Some(flag);
        }
        [
            (mode == Mode::Preview, "--preview"),
            (self.rebase, "--rebase"),
            (self.post_check.is_some(), "--post-check"),
            (self.keep_chips, "keeping a refused patch as a chip"),
        ]
        .into_iter()
        .find_map(|(asked, what)| asked.then_some(what))
    }

    pub(crate) fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            format: self.format,
            strip: self.strip,
            recount: self.recount,
            unidiff_zero: self.unidiff_zero,
            path: self.path.clone(),
            base: self.base.clone(),
        }
    }

    pub(crate) fn locate_options(&self) -> LocateOptions {
        LocateOptions {
            window: self.window,
            unidiff_zero: self.unidiff_zero,
            fuzz: self.fuzz,
            ..LocateOptions::default()
        }
    }

    /// The planner's options; a preview always renders the diff it shows.
    pub(crate) fn plan_options(&self, mode: Mode) -> Result<PlanOptions, Error> {
        Ok(PlanOptions {
            locate: self.locate_options(),
            strict_base: self.strict_base,
            protect: Globs::new(&self.protect)?,
            allow_notebooks: self.allow_notebooks,
            diff: self.diff || mode == Mode::Preview,
            strict_balance: self.strict_balance,
            reversed: self.reverse,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn durability(option: Option<&str>, env: Option<&str>) -> Result<Durability, Error> {
        let raw = RawOptions {
            durability: option.map(str::to_string),
            ..RawOptions::default()
        };
        raw.resolve_with_env(env).map(|(o, _)| o.durability)
    }

    #[test]
    fn durability_comes_from_the_option_then_the_variable_and_a_typo_is_a_usage_error() {
        assert_eq!(durability(None, None).ok(), Some(Durability::Full));
        assert_eq!(durability(None, Some("")).ok(), Some(Durability::Full));
        assert_eq!(
            durability(None, Some("atomic")).ok(),
            Some(Durability::Atomic)
        );
        assert_eq!(
            durability(Some("full"), Some("atomic")).ok(),
            Some(Durability::Full)
        );
        assert_eq!(
            durability(Some("fsync"), None).ok(),
            Some(Durability::FullFsync)
        );
        let e = durability(None, Some("relaxed")).expect_err("typo");
        assert_eq!(e.code, ErrorCode::Usage);
        assert_eq!(
            e.message,
            "APPLY_PATCH_DURABILITY=\"relaxed\" is not a durability mode; known: full, fsync, atomic"
        );
        let e = durability(Some("relaxed"), None).expect_err("typo");
        assert_eq!(
            e.message,
            "\"relaxed\" is not a durability mode; known: full, fsync, atomic"
        );
    }

    /// Every rule in one place: the same raw option is refused with the same code and
    /// message whichever front end sends it; only the hint's spelling differs.
    #[test]
    fn the_rules_are_decided_once_and_hints_follow_the_front_end() {
        let fronts = [
            (FrontEnd::CommandLine, "--window N", "--format"),
            (FrontEnd::McpTool, "window: N", "format"),
            (FrontEnd::Python, "window=N", "format"),
            (FrontEnd::JavaScript, "window: N", "format"),
        ];
        for (front, window, format) in fronts {
            let raw = RawOptions {
                window: Some(0),
                front_end: front,
                ..RawOptions::default()
            };
            let e = raw.resolve_with_env(None).expect_err("window 0");
            assert_eq!(
                (e.code, e.message.as_str()),
                (ErrorCode::Usage, "the window must be at least 1 line")
            );
            let hint = e.hint.unwrap_or_default();
            assert!(
                hint.starts_with(&format!("give {window} with N")),
                "{front:?}: {hint}"
            );
            let raw = RawOptions {
                format: Some("yaml".into()),
                front_end: front,
                ..RawOptions::default()
            };
            let e = raw.resolve_with_env(None).expect_err("no such format");
            assert_eq!(
                e.message,
                "\"yaml\" is not a patch format; known: agent, unified, json, blocks"
            );
            assert!(e
                .hint
                .unwrap_or_default()
                .starts_with(&format!("give {format} one of")));
        }
        let chips = |check: bool, rebase: bool, keep: Option<bool>| {
            let raw = RawOptions {
                check,
                rebase,
                keep_chips: keep,
                ..RawOptions::default()
            };
            raw.resolve_with_env(None).map(|(o, _)| o.keep_chips).ok()
        };
        assert_eq!(chips(false, false, None), Some(true));
        assert_eq!(chips(true, false, None), Some(false));
        assert_eq!(chips(true, true, None), Some(true));
        assert_eq!(chips(false, false, Some(false)), Some(false));
        let both = RawOptions {
            check: true,
            preview: true,
            ..RawOptions::default()
        };
        let e = both.resolve_with_env(None).expect_err("preview and check");
        assert_eq!(e.message, "a preview and a check do not go together");
        let rollback = RawOptions {
            rollback_on_fail: true,
            front_end: FrontEnd::JavaScript,
            ..RawOptions::default()
        };
        let e = rollback
            .resolve_with_env(None)
            .expect_err("nothing to roll back");
        assert_eq!(
            e.hint.as_deref(),
            Some("name a command with postCheck, or leave out rollbackOnFail")
        );
    }

    #[test]
    fn options_and_plan_options_can_cross_threads() {
        fn send<T: Send + Sync>() {}
        send::<Options>();
        send::<PlanOptions>();
    }

    #[test]
    fn flags_map_to_one_git_mode_and_meaningless_pairs_say_why() {
        let git = GitMode::from_flags(true, false, true, false).expect("maps");
        let want = GitMode::ThreeWay {
            markers: false,
            into: Stage::Index,
        };
        assert_eq!(git, want);
        assert!(git.writes_index() && !git.cached());
        assert_eq!(
            GitMode::from_flags(true, true, false, false).ok(),
            Some(GitMode::Cached)
        );
        let e = GitMode::from_flags(false, false, false, true).expect_err("markers alone");
        assert_eq!(e.message, "conflict markers need a three-way merge");
        assert_eq!(
            e.hint.as_deref(),
            Some("add --3way, or leave out --conflict-markers")
        );
        let built = Options::builder().git(want).max_risk(5).build();
        assert_eq!((built.git, built.max_risk), (want, Some(5)));
        assert!(built.check(Mode::Write).is_ok());
        let rebase = Options::builder().git(GitMode::Cached).rebase(true).build();
        let e = rebase.check(Mode::Write).expect_err("meaningless");
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(
            e.message.contains("a cached apply plans against the index"),
            "{}",
            e.message
        );
        let post = Options::builder()
            .post_check(PostCheck {
                command: "true".into(),
                timeout: None,
                rollback_on_fail: false,
            })
            .build();
        let e = post.check(Mode::Check).expect_err("nothing to check after");
        assert!(
            e.message.contains("a check writes nothing"),
            "{}",
            e.message
        );
    }
}
