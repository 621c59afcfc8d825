//! Stage: command line (options). Raw arguments validated into [`Options`]: what to do,
//! with what input; nothing here reads the patch or runs anything.

// `apply_patch::Error` is one rich shape shared by every stage (SPEC §8).
#![allow(clippy::result_large_err)]

use super::*;

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

pub(crate) fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Agent => Format::Agent,
        FormatArg::Unified => Format::Unified,
        FormatArg::Json => Format::Json,
    }
}

/// The first option given that only applying a patch uses (a subcommand ignores them, so
/// naming one with a subcommand is a mistake worth reporting). `convert` reads a patch: it
/// takes the parse options (`-p`, `--format`, `--recount`, `--unidiff-zero`).
pub(crate) fn apply_only_flag(raw: &RawArgs, convert: bool) -> Option<&'static str> {
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

pub(crate) fn usage(message: &str) -> Error {
    Error::new(ErrorCode::Usage, message).with_hint("run apply-patch --help for the options")
}

/// PATCH: none or `-` is standard input; text that is itself a patch is the patch; else a
/// file name.
pub(crate) fn input_of(arg: Option<OsString>) -> Result<Input, Error> {
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

/// `--lang NAME`: a known language or a usage error listing them.
pub(crate) fn lang_of(name: Option<&str>) -> Result<Option<structure::Lang>, Error> {
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
