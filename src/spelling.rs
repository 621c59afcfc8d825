//! The caller's words for an option: one table that says how each front end spells the
//! options (and the commands) a hint names — `--rebase` on the command line, `rebase=True` in
//! Python, `rebase: true` to JavaScript and MCP callers — and the structured [`Hint`] that
//! refers to them. A hint that names an option is built from [`Hint`]'s parts where the
//! refusal is made; the front end that runs renders it ([`crate::Error::set_front_end`]).
//! Nothing rewrites a finished text. A leaf: it depends on nothing else in the crate.

use std::borrow::Cow;

/// Which front end runs, so that a hint names what that caller can do. It changes words
/// only, never what is planned or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FrontEnd {
    /// The `apply-patch` command (and a Rust library caller, who reads the same words).
    #[default]
    CommandLine,
    /// An MCP tool (`apply_patch`, `edit`, `preview`, `read`, ...).
    McpTool,
    /// The Python package (`apply_patch.apply(..., rebase=True)`).
    Python,
    /// The npm package's JavaScript API (`applyPatch(root, patch, { rebase: true })`).
    JavaScript,
}

impl FrontEnd {
    /// The names [`FrontEnd::from_name`] takes (the command line's hidden `--front-end`).
    pub const NAMES: [&'static str; 4] = ["cli", "mcp", "python", "javascript"];

    /// The front end named `name` (one of [`FrontEnd::NAMES`]).
    pub fn from_name(name: &str) -> Option<FrontEnd> {
        Some(match name {
            "cli" => FrontEnd::CommandLine,
            "mcp" => FrontEnd::McpTool,
            "python" => FrontEnd::Python,
            "javascript" => FrontEnd::JavaScript,
            _ => return None,
        })
    }
}

/// An option, or a command, that a hint names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Opt {
    AllowNotebooks,
    Cached,
    Check,
    ConflictMarkers,
    Directory,
    Durability,
    Format,
    Index,
    /// `range --kind` (the MCP `range` tool's `kind`).
    Kind,
    MaxRisk,
    PostCheck,
    Preview,
    Protect,
    Rebase,
    Recount,
    RollbackOnFail,
    /// The root the paths are relative to (`--root`, the API's `root` argument).
    Root,
    StrictBalance,
    StrictBase,
    Strip,
    ThreeWay,
    UnidiffZero,
    Window,
    /// The `read` command (the MCP `read` tool, the APIs' `read` function).
    Read,
    /// The file of SEARCH/REPLACE blocks (`--path`, the APIs' and MCP's `path`).
    Path,
    /// The Base of that file (`--base`, `base`).
    Base,
    /// `--formatter GLOB=CMD` (the APIs' `formatter`; MCP: the operator's flag only).
    Formatter,
}

/// The value a hint gives an option.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Value {
    /// A switch turned on (`--rebase`, `rebase=True`, `rebase: true`).
    On,
    /// A switch left off, with its preposition: `without --index`, `with index=False`,
    /// `with index: false`.
    Off,
    /// A number, or a placeholder for one (`--max-risk N`, `max_risk=N`).
    Number(Cow<'static, str>),
    /// A text (`--format json`, `format="json"`, `format: "json"`).
    Text(Cow<'static, str>),
    /// The option alone, as a name (a command, or a list option such as `--protect`); no
    /// quoting (the hint's text adds backticks where it wants them).
    Name,
}

impl Opt {
    /// The command line's flag (`--rebase`); the short `-p` for `strip`.
    fn flag(self) -> &'static str {
        match self {
            Opt::AllowNotebooks => "--allow-notebooks",
            Opt::Cached => "--cached",
            Opt::Check => "--check",
            Opt::ConflictMarkers => "--conflict-markers",
            Opt::Directory => "--directory",
            Opt::Durability => "--durability",
            Opt::Format => "--format",
            Opt::Index => "--index",
            Opt::Kind => "--kind",
            Opt::MaxRisk => "--max-risk",
            Opt::PostCheck => "--post-check",
            Opt::Preview => "--preview",
            Opt::Protect => "--protect",
            Opt::Rebase => "--rebase",
            Opt::Recount => "--recount",
            Opt::RollbackOnFail => "--rollback-on-fail",
            Opt::Root => "--root",
            Opt::StrictBalance => "--strict-balance",
            Opt::StrictBase => "--strict-base",
            Opt::Strip => "-p",
            Opt::ThreeWay => "--3way",
            Opt::UnidiffZero => "--unidiff-zero",
            Opt::Window => "--window",
            Opt::Read => "`apply-patch read`",
            Opt::Path => "--path",
            Opt::Base => "--base",
            Opt::Formatter => "--formatter",
        }
    }

    /// The Python keyword (and the MCP argument, where MCP has it).
    fn snake(self) -> &'static str {
        match self {
            Opt::AllowNotebooks => "allow_notebooks",
            Opt::Cached => "cached",
            Opt::Check => "check",
            Opt::ConflictMarkers => "conflict_markers",
            Opt::Directory => "directory",
            Opt::Durability => "durability",
            Opt::Format => "format",
            Opt::Index => "index",
            Opt::Kind => "kind",
            Opt::MaxRisk => "max_risk",
            Opt::PostCheck => "post_check",
            Opt::Preview => "preview",
            Opt::Protect => "protect",
            Opt::Rebase => "rebase",
            Opt::Recount => "recount",
            Opt::RollbackOnFail => "rollback_on_fail",
            Opt::Root => "root",
            Opt::StrictBalance => "strict_balance",
            Opt::StrictBase => "strict_base",
            Opt::Strip => "strip",
            Opt::ThreeWay => "three_way",
            Opt::UnidiffZero => "unidiff_zero",
            Opt::Window => "window",
            Opt::Read => "read",
            Opt::Path => "path",
            Opt::Base => "base",
            Opt::Formatter => "formatter",
        }
    }

    /// The JavaScript option name.
    fn camel(self) -> Cow<'static, str> {
        let snake = self.snake();
        if !snake.contains('_') {
            return Cow::Borrowed(snake);
        }
        let mut out = String::with_capacity(snake.len());
        let mut upper = false;
        for c in snake.chars() {
            match (c, upper) {
                ('_', _) => upper = true,
                (c, true) => {
                    out.push(c.to_ascii_uppercase());
                    upper = false;
                }
                (c, false) => out.push(c),
            }
        }
        Cow::Owned(out)
    }

    /// What the MCP tools call it: the tools' argument where they take one (`dry_run` for a
    /// check), a tool for a command; None where no tool offers it (the operator's flags, the
    /// options of the command line and the APIs only).
    fn mcp(self) -> Option<&'static str> {
        Some(match self {
            Opt::Check => "dry_run",
            Opt::Kind
            | Opt::MaxRisk
            | Opt::PostCheck
            | Opt::Rebase
            | Opt::RollbackOnFail
            | Opt::StrictBalance
            | Opt::Path
            | Opt::Base
            | Opt::Window => self.snake(),
            Opt::Read => "the read tool",
            Opt::Preview => "the preview tool",
            _ => return None,
        })
    }

    /// This option with `value`, as `front` spells it; None when that front end does not
    /// offer it (a hint then leaves out the clause that names it, see [`Hint::clause`]).
    pub fn spell(self, front: FrontEnd, value: &Value) -> Option<String> {
        // A command is named, not given a value.
        let command = self == Opt::Read;
        Some(match front {
            FrontEnd::CommandLine => match (self, value) {
                (Opt::Strip, Value::Number(n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                    format!("-p{n}")
                }
                (_, Value::On | Value::Name) => self.flag().to_string(),
                (_, Value::Off) => format!("without {}", self.flag()),
                (_, Value::Number(v) | Value::Text(v)) => format!("{} {v}", self.flag()),
            },
            FrontEnd::Python => match (self, value) {
                (Opt::Kind, _) => return None,
                (Opt::Read, _) => "`apply_patch.read()`".into(),
                (Opt::Root, Value::Text(v)) => format!("root={v:?}"),
                (Opt::Root, _) => "the `root` argument".into(),
                (_, Value::On) => format!("{}=True", self.snake()),
                (_, Value::Off) => format!("with {}=False", self.snake()),
                (_, Value::Number(v)) => format!("{}={v}", self.snake()),
                (_, Value::Text(v)) => format!("{}={v:?}", self.snake()),
                (_, Value::Name) => self.snake().to_string(),
            },
            FrontEnd::JavaScript => match (self, value) {
                (Opt::Read, _) => "`read()`".into(),
                (Opt::Root, Value::Text(v)) => format!("the `root` argument {v:?}"),
                (Opt::Root, _) => "the `root` argument".into(),
                (Opt::Kind, _) => return None,
                (_, Value::On) => format!("{}: true", self.camel()),
                (_, Value::Off) => format!("with {}: false", self.camel()),
                (_, Value::Number(v)) => format!("{}: {v}", self.camel()),
                (_, Value::Text(v)) => format!("{}: {v:?}", self.camel()),
                (_, Value::Name) => self.camel().into_owned(),
            },
            FrontEnd::McpTool => {
                let name = self.mcp()?;
                match value {
                    _ if command || self == Opt::Preview => name.to_string(),
                    Value::On => format!("{name}: true"),
                    Value::Off => format!("with {name}: false"),
                    Value::Number(v) => format!("{name}: {v}"),
                    Value::Text(v) => format!("{name}: {v:?}"),
                    Value::Name => name.to_string(),
                }
            }
        })
    }
}

impl From<String> for Hint {
    fn from(text: String) -> Hint {
        Hint::new().text(text)
    }
}

impl From<&str> for Hint {
    fn from(text: &str) -> Hint {
        Hint::new().text(text.to_string())
    }
}

impl From<Cow<'static, str>> for Hint {
    fn from(text: Cow<'static, str>) -> Hint {
        Hint::new().text(text)
    }
}

impl From<&String> for Hint {
    fn from(text: &String) -> Hint {
        Hint::new().text(text.clone())
    }
}

/// One part of a [`Hint`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(Cow<'static, str>),
    Opt(Opt, Value),
    /// Shown only where the front end offers every option it names.
    Clause(Vec<Part>),
}

/// A hint that names options: text and option references, rendered for one front end by
/// [`Hint::render`]. Build it with [`Hint::text`], [`Hint::opt`] and [`Hint::clause`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[must_use]
pub struct Hint {
    parts: Vec<Part>,
}

impl Hint {
    pub fn new() -> Hint {
        Hint::default()
    }

    /// Words, the same for every front end.
    pub fn text(mut self, text: impl Into<Cow<'static, str>>) -> Hint {
        self.parts.push(Part::Text(text.into()));
        self
    }

    /// An option with a value, spelled by the front end.
    pub fn opt(mut self, opt: Opt, value: Value) -> Hint {
        self.parts.push(Part::Opt(opt, value));
        self
    }

    /// A switch turned on (`--rebase`, `rebase=True`, `rebase: true`).
    pub fn on(self, opt: Opt) -> Hint {
        self.opt(opt, Value::On)
    }

    /// A command, or an option by its name alone.
    pub fn name(self, opt: Opt) -> Hint {
        self.opt(opt, Value::Name)
    }

    /// A part left out where the front end lacks an option it names (`, or pass --recount
    /// to ...` is no advice to an MCP client, whose tools have no `recount`).
    pub fn clause(mut self, clause: Hint) -> Hint {
        self.parts.push(Part::Clause(clause.parts));
        self
    }

    /// The options the hint names, in order (clauses included).
    pub fn options(&self) -> Vec<Opt> {
        fn walk(parts: &[Part], out: &mut Vec<Opt>) {
            for p in parts {
                match p {
                    Part::Text(_) => {}
                    Part::Opt(o, _) => out.push(*o),
                    Part::Clause(inner) => walk(inner, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.parts, &mut out);
        out
    }

    /// The hint in `front`'s words.
    pub fn render(&self, front: FrontEnd) -> String {
        fn walk(parts: &[Part], front: FrontEnd, out: &mut String) -> Option<()> {
            for p in parts {
                match p {
                    Part::Text(t) => out.push_str(t),
                    Part::Opt(o, v) => match o.spell(front, v) {
                        Some(s) => out.push_str(&s),
                        None => return None,
                    },
                    Part::Clause(inner) => {
                        let mut clause = String::new();
                        if walk(inner, front, &mut clause).is_some() {
                            out.push_str(&clause);
                        }
                    }
                }
            }
            Some(())
        }
        let mut out = String::new();
        if walk(&self.parts, front, &mut out).is_none() {
            // An option outside every clause that this front end lacks: its plain name,
            // rather than advice with a hole in it.
            out.clear();
            for p in &self.parts {
                match p {
                    Part::Text(t) => out.push_str(t),
                    Part::Opt(o, _) => out.push_str(o.snake()),
                    Part::Clause(_) => {}
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRONTS: [FrontEnd; 4] = [
        FrontEnd::CommandLine,
        FrontEnd::McpTool,
        FrontEnd::Python,
        FrontEnd::JavaScript,
    ];

    #[test]
    fn each_front_end_spells_an_option_its_own_way() {
        let spelled = |o: Opt, v: Value| FRONTS.map(|f| o.spell(f, &v));
        let s = |t: &str| Some(t.to_string());
        assert_eq!(
            spelled(Opt::Rebase, Value::On),
            [
                s("--rebase"),
                s("rebase: true"),
                s("rebase=True"),
                s("rebase: true")
            ]
        );
        assert_eq!(
            spelled(Opt::MaxRisk, Value::Number("N".into())),
            [
                s("--max-risk N"),
                s("max_risk: N"),
                s("max_risk=N"),
                s("maxRisk: N")
            ]
        );
        assert_eq!(
            spelled(Opt::Format, Value::Text("json".into())),
            [
                s("--format json"),
                None,
                s("format=\"json\""),
                s("format: \"json\"")
            ]
        );
        assert_eq!(
            spelled(Opt::Strip, Value::Number("0".into())),
            [s("-p0"), None, s("strip=0"), s("strip: 0")]
        );
        assert_eq!(
            spelled(Opt::Check, Value::On),
            [
                s("--check"),
                s("dry_run: true"),
                s("check=True"),
                s("check: true")
            ]
        );
        assert_eq!(
            spelled(Opt::UnidiffZero, Value::On)[3],
            s("unidiffZero: true")
        );
        assert_eq!(spelled(Opt::Read, Value::Name)[1], s("the read tool"));
        for f in FrontEnd::NAMES {
            let front = FrontEnd::from_name(f).expect("named");
            assert_eq!(
                FrontEnd::NAMES[FRONTS.iter().position(|x| *x == front).unwrap_or(9)],
                f
            );
        }
        assert_eq!(FrontEnd::from_name("perl"), None);
    }

    #[test]
    fn a_clause_naming_an_option_the_front_end_lacks_is_left_out() {
        let hint = Hint::new().text("fix the counts in the '@@' line").clause(
            Hint::new()
                .text(", or pass ")
                .on(Opt::Recount)
                .text(" to count the hunk's lines instead"),
        );
        assert_eq!(
            hint.render(FrontEnd::CommandLine),
            "fix the counts in the '@@' line, or pass --recount to count the hunk's lines instead"
        );
        assert_eq!(
            hint.render(FrontEnd::Python),
            "fix the counts in the '@@' line, or pass recount=True to count the hunk's lines instead"
        );
        assert_eq!(
            hint.render(FrontEnd::McpTool),
            "fix the counts in the '@@' line"
        );
        assert_eq!(hint.options(), vec![Opt::Recount]);
        let bare = Hint::new().text("pass ").on(Opt::Recount);
        assert_eq!(bare.render(FrontEnd::McpTool), "pass recount");
    }
}
