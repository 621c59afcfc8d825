//! Stage: command line (options). Raw arguments validated into [`Options`]: what to do,
//! with what input; nothing here reads the patch or runs anything.

use super::*;
use crate::usage::UsageError;

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
        options: Box<pipeline::Options>,
        mode: Mode,
        show: Show,
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
        post_check: Vec<String>,
    },
    Undo,
    Recover,
    Convert {
        input: Input,
        to: ConvertTo,
        parse: ParseOptions,
    },
    Completions(clap_complete::Shell),
    Man(Option<String>),
    /// The patch files, and `--fuzz N` when given.
    CheckPatches(Vec<PathBuf>, Option<usize>),
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

/// What an apply prints besides its report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Show {
    /// `--stat`: a diffstat.
    pub stat: bool,
    /// `--numstat`: added and deleted counts per file.
    pub numstat: bool,
    /// `--summary`: created, deleted, renamed and mode-changed files.
    pub summary: bool,
    /// Any of the three without `--apply`: they replace the report and nothing is written.
    pub report_only: bool,
    /// `-v`: where each hunk went.
    pub verbose: bool,
}

/// Validated options: one struct every later flag joins.
#[derive(Debug)]
pub struct Options {
    pub action: Action,
    pub root: PathBuf,
    pub json: bool,
    pub style: Style,
}

/// Raw arguments → validated options.
pub fn validate(raw: RawArgs, style: Style) -> Result<Options, Error> {
    let root = raw.root.clone().unwrap_or_else(|| PathBuf::from("."));
    if raw.command.is_some() {
        if let Some(flag) = raw.apply_given.first() {
            return Err(UsageError::ApplyFlagWithSubcommand {
                flag: flag.to_string(),
            }
            .into());
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
                format: read.format.or(raw.apply.read.format).map(format_of),
                strip: read.strip.or(raw.apply.read.strip),
                recount: read.recount || raw.apply.read.recount,
                unidiff_zero: read.unidiff_zero || raw.apply.read.unidiff_zero,
                path: read.path.or(raw.apply.read.path),
                base: read.base.or(raw.apply.read.base),
            },
        },
        Some(Command::Completions { shell }) => Action::Completions(shell),
        Some(Command::Man { page }) => Action::Man(page),
        Some(Command::CheckPatches { paths, fuzz }) => Action::CheckPatches(paths, fuzz),
        // agent (issue 6)
        Some(Command::Read {
            path,
            lines,
            around,
        }) => {
            if around == Some(0) {
                return Err(UsageError::ZeroAround.into());
            }
            Action::Read {
                path,
                lines,
                around,
            }
        }
        Some(Command::Confirm { id }) => Action::Confirm(id),
        Some(Command::Chip { id }) => Action::Chip(id),
        Some(Command::Mcp {
            read_only,
            post_check,
        }) => Action::Mcp {
            read_only,
            post_check,
        },
        Some(Command::Range {
            file,
            line,
            kind,
            lang,
        }) => {
            if line == 0 {
                return Err(UsageError::ZeroLine.into());
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
        None => apply_action(raw.apply)?,
    };
    Ok(Options {
        action,
        root,
        json: raw.json,
        style,
    })
}

/// The apply options, validated.
fn apply_action(raw: ApplyArgs) -> Result<Action, Error> {
    if raw.window == 0 {
        return Err(UsageError::ZeroWindow.into());
    }
    if raw.reject {
        return Err(UsageError::Reject.into());
    }
    let report_only = (raw.stat || raw.numstat || raw.summary) && !raw.apply;
    if raw.apply && !(raw.stat || raw.numstat || raw.summary) {
        return Err(UsageError::ApplyWithoutStat.into());
    }
    let show = Show {
        stat: raw.stat,
        numstat: raw.numstat,
        summary: raw.summary,
        report_only,
        verbose: raw.verbose,
    };
    let input = match raw.input {
        Some(file) if file == "-" => Input::Stdin,
        Some(file) => Input::File(PathBuf::from(file)),
        None => input_of(raw.patch)?,
    };
    // --stat and its kin print and write nothing, as git apply does.
    let check = raw.check || report_only;
    if raw.preview && check {
        return Err(UsageError::PreviewWithCheck.into());
    }
    let mode = match (check, raw.preview) {
        (true, _) => Mode::Check,
        (false, true) => Mode::Preview,
        (false, false) => Mode::Write,
    };
    let git = GitMode::from_flags(raw.index, raw.cached, raw.three_way, raw.conflict_markers)?;
    let post_check = raw.post_check.map(|command| PostCheck {
        command,
        timeout: None,
        rollback_on_fail: raw.rollback_on_fail,
    });
    let options = pipeline::Options {
        format: raw.read.format.map(format_of),
        strip: raw.read.strip,
        recount: raw.read.recount,
        unidiff_zero: raw.read.unidiff_zero,
        path: raw.read.path,
        base: raw.read.base,
        reverse: raw.reverse,
        directory: raw.directory,
        include: raw.include,
        exclude: raw.exclude,
        window: raw.window,
        fuzz: raw.fuzz,
        strict_base: raw.strict_base,
        protect: raw.protect,
        allow_notebooks: raw.allow_notebooks,
        strict_balance: raw.strict_balance,
        diff: raw.diff,
        git,
        durability: durability_of(
            raw.durability.as_deref(),
            std::env::var(DURABILITY_ENV).ok().as_deref(),
        )?,
        rebase: raw.rebase,
        max_risk: raw.max_risk,
        // A plain `--check` keeps no chip; every other run does.
        keep_chips: mode != Mode::Check || raw.rebase || raw.max_risk.is_some(),
        report_risk: raw.max_risk.is_some() || raw.preview,
        post_check,
        state: None,
        front_end: FrontEnd::CommandLine,
    };
    options.check(mode)?;
    if raw.rollback_on_fail && options.post_check.is_none() {
        return Err(UsageError::RollbackWithoutPostCheck.into());
    }
    Ok(Action::Apply {
        input,
        options: Box::new(options),
        mode,
        show,
    })
}

/// The variable hooks and agent sandboxes set instead of passing `--durability`.
pub(crate) const DURABILITY_ENV: &str = "APPLY_PATCH_DURABILITY";

/// `--durability MODE`, else `APPLY_PATCH_DURABILITY` (`env`, its value), else full. A mode
/// the variable names that does not exist is a usage error (a typo must not silently keep,
/// or drop, the flushes).
pub(crate) fn durability_of(flag: Option<&str>, env: Option<&str>) -> Result<Durability, Error> {
    let (name, source) = match (flag, env) {
        (Some(name), _) => (name, "--durability"),
        (None, Some(name)) if !name.is_empty() => (name, DURABILITY_ENV),
        (None, _) => return Ok(Durability::Full),
    };
    Durability::from_name(name).ok_or_else(|| {
        UsageError::UnknownDurability {
            given_by: source,
            name: name.to_string(),
            known: &Durability::NAMES,
        }
        .into()
    })
}

pub(crate) fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Agent => Format::Agent,
        FormatArg::Unified => Format::Unified,
        FormatArg::Json => Format::Json,
        FormatArg::Blocks => Format::Blocks,
    }
}

/// `--lang NAME`: a known language or a usage error listing them.
pub(crate) fn lang_of(name: Option<&str>) -> Result<Option<structure::Lang>, Error> {
    let Some(name) = name else {
        return Ok(None);
    };
    structure::Lang::from_name(name).map(Some).ok_or_else(|| {
        UsageError::UnknownLanguage {
            name: name.to_string(),
            known: structure::Lang::names(),
        }
        .into()
    })
}
