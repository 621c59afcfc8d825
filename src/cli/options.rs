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
        formatter: Vec<String>,
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
    /// Whose words the hints use (`--front-end`; the command line's by default).
    pub front_end: FrontEnd,
}

/// Raw arguments → validated options.
pub fn validate(raw: RawArgs, style: Style) -> Result<Options, Error> {
    let root = raw.root.clone().unwrap_or_else(|| PathBuf::from("."));
    // clap took only these names.
    let front_end = raw
        .front_end
        .as_deref()
        .and_then(FrontEnd::from_name)
        .unwrap_or_default();
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
                format: read
                    .format
                    .or(raw.apply.read.format)
                    .as_deref()
                    .and_then(Format::from_name),
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
            formatter,
        }) => Action::Mcp {
            read_only,
            post_check,
            formatter,
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
            // clap took only these names.
            let kind = kind.as_deref().and_then(structure::Kind::from_name);
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
        None => apply_action(raw.apply, front_end)?,
    };
    Ok(Options {
        action,
        root,
        json: raw.json,
        style,
        front_end,
    })
}

/// The apply options, validated.
fn apply_action(raw: ApplyArgs, front_end: FrontEnd) -> Result<Action, Error> {
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
    // The flags as the library's raw options; every rule is decided there, once.
    let raw_options = RawOptions {
        check,
        preview: raw.preview,
        index: raw.index,
        cached: raw.cached,
        three_way: raw.three_way,
        conflict_markers: raw.conflict_markers,
        diff: raw.diff,
        reverse: raw.reverse,
        strip: raw.read.strip,
        directory: raw.directory,
        include: raw.include,
        exclude: raw.exclude,
        recount: raw.read.recount,
        unidiff_zero: raw.read.unidiff_zero,
        window: Some(raw.window),
        format: raw.read.format,
        path: raw.read.path,
        base: raw.read.base,
        fuzz: Some(raw.fuzz),
        strict_base: raw.strict_base,
        protect: raw.protect,
        allow_notebooks: raw.allow_notebooks,
        strict_balance: raw.strict_balance,
        rebase: raw.rebase,
        max_risk: raw.max_risk,
        post_check: raw.post_check,
        rollback_on_fail: raw.rollback_on_fail,
        formatter: raw.formatter,
        formatter_timeout: raw.formatter_timeout,
        durability: raw.durability,
        front_end,
        ..RawOptions::default()
    };
    let (options, mode) = raw_options.resolve()?;
    Ok(Action::Apply {
        input,
        options: Box::new(options),
        mode,
        show,
    })
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
