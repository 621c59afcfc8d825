//! Stage: agent MCP (the server). `apply-patch mcp [--read-only]` serves the Model Context Protocol over
//! standard input and output (rmcp), so an agent can read and edit files of one root through
//! tools whose descriptions teach the model the formats and what to do on each error.
//!
//! Permission modes: `--read-only` offers only the reading tools (`read`, `range`,
//! `check_balance`); the default refuses a change to an
//! existing file the session has not read (`not_read`, see [`crate::agent::permit`]). The
//! server keeps, per session, what it served or wrote for each path (hash and line count).
//! The only commands it runs are the operator's `--post-check`s, picked by name
//! ([`crate::agent::catalog`], which also derives the schemas, annotations and instructions
//! from what is offered). Every tool error, bad arguments included, is the JSON report.
//! Must not write the work tree except through the applier's transaction.

use crate::agent::{AgentError, BadArguments};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, RoleServer, ServerHandler, ServiceExt};

use crate::agent::catalog::{self, PostCheckChoice, PostChecks};
use crate::agent::permit::{self, ReadRecord};
use crate::agent::read::LineRange;
use crate::pipeline::read::{ReadSetup, ReadWhat};
use crate::agent::{oversize, sha256_hex, tools, AgentState};
use crate::pipeline::hooks::{Facts, Hook};
use crate::pipeline::sink::Run;
use crate::pipeline::{self, AgentReport, ConfirmReport, FrontEnd, Mode, RawOptions};
use crate::error::Error;
use crate::model::Format;
use crate::report::Warning;
use crate::text::Text;
use crate::tree::DiskTree;

/// The most lines `read` serves when no `end_line` is given.
pub const MAX_READ_LINES: usize = 2000;

/// How much the server lets a client change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Permission {
    /// Only the reading tools: `read`, `range`, `check_balance`.
    ReadOnly,
    /// Changes to existing files need a `read` of them first in this session.
    ReadBeforeEdit,
}

/// Everything a session shares between its tool calls.
#[derive(Debug)]
struct Session {
    root: PathBuf,
    state: Option<AgentState>,
    reads: Mutex<HashMap<String, ReadRecord>>,
    /// The server may write (recovers a crashed transaction rather than refusing).
    writes: bool,
    /// The operator's checks: the only commands a tool may run.
    checks: PostChecks,
    /// How durable the writing tools' commits are (the operator's choice).
    durability: crate::txn::Durability,
    /// The operator's `--formatter GLOB=CMD`s, for every write.
    formatters: Vec<String>,
}

/// The MCP server of one root.
#[derive(Debug, Clone)]
pub struct McpServer {
    session: Arc<Session>,
    tool_router: ToolRouter<Self>,
    /// Derived from the tools offered ([`catalog::instructions`]).
    instructions: String,
}

/// Arguments of `read`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ReadArgs {
    /// Path of the file, relative to the project root.
    pub path: String,
    /// First line to return (1-based); default 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<usize>,
    /// Last line to return (1-based, inclusive); default: the end of the file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<usize>,
    /// Instead of a line range: return the function (else block, else element) enclosing
    /// this line (1-based), found from the text alone.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub around: Option<usize>,
}

/// The agent options every writing tool takes.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct WriteOptions {
    /// Merge the change onto a file that changed since the `*** Base:` / `base` you read
    /// (refused as merge_conflict when both changed the same lines).
    #[serde(default)]
    pub rebase: bool,
    /// Only check: report what would change, write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// A choice among the operator's checks (never a command): its schema, and whether it is
    /// offered at all, come from [`catalog::shape`].
    #[serde(default)]
    #[schemars(skip)]
    pub post_check: Option<PostCheckChoice>,
    /// Undo the change when the post_check fails (offered with post_check).
    #[serde(default)]
    #[schemars(skip)]
    pub rollback_on_fail: bool,
    /// Refuse (risk_exceeded) a change whose risk score is above this.
    #[serde(default)]
    pub max_risk: Option<u32>,
    /// Refuse (unbalanced_edit) a change that leaves a balanced file's brackets, tags or
    /// quotes unbalanced, instead of warning.
    #[serde(default)]
    pub strict_balance: bool,
    /// How many lines from its line-number hint a match still counts as near (`--window`,
    /// default 20).
    #[serde(default)]
    pub window: Option<usize>,
    /// When a hunk is found nowhere, how many outer context lines at each end may be
    /// ignored, the rest having to be unique in the whole file (`--fuzz`, default 2; 0 turns
    /// it off).
    #[serde(default)]
    pub fuzz: Option<usize>,
    /// The file of SEARCH/REPLACE blocks and its Base (`apply_patch` and `preview` take them
    /// as arguments of their own).
    #[serde(skip)]
    #[schemars(skip)]
    pub blocks: (Option<String>, Option<String>),
}

/// Arguments of `apply_patch`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ApplyArgs {
    /// The patch: the agent patch language (`*** Begin Patch` … `*** End Patch`), a git /
    /// unified diff, a JSON edit request, or SEARCH/REPLACE blocks.
    pub patch: String,
    /// With SEARCH/REPLACE blocks: the file every block edits, relative to the project root
    /// (exactly; never guessed). Without it, the line before each block names its file.
    #[serde(default)]
    pub path: Option<String>,
    /// With `path`: the `base` that `read` returned for that file; the blocks'
    /// `:start_line:N` hints are then trusted.
    #[serde(default)]
    pub base: Option<String>,
    #[serde(flatten)]
    pub options: WriteOptions,
}

/// Arguments of `edit`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EditArgs {
    /// The edits (see the tool description for each `op`).
    #[schemars(extend("items" = {
        "type": "object",
        "properties": {
            "op": {"type": "string",
                   "enum": ["replace", "line_range", "insert", "append", "create", "delete"]},
            "path": {"type": "string"}
        },
        "required": ["op", "path"]
    }))]
    pub edits: Vec<serde_json::Value>,
    /// Path → the `base` that `read` returned for it.
    #[serde(default)]
    pub base: Option<HashMap<String, String>>,
    #[serde(flatten)]
    pub options: WriteOptions,
}

/// Arguments of `preview`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct PreviewArgs {
    /// The patch, in any format `apply_patch` takes.
    pub patch: String,
    /// As in `apply_patch`.
    #[serde(default)]
    pub rebase: bool,
    /// As in `apply_patch`.
    #[serde(default)]
    pub window: Option<usize>,
    /// As in `apply_patch`.
    #[serde(default)]
    pub fuzz: Option<usize>,
}

/// Arguments of `confirm`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ConfirmArgs {
    /// The preview id that `preview` returned.
    pub id: String,
}

/// Arguments of `range`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct RangeArgs {
    /// Path of the file, relative to the project root.
    pub path: String,
    /// A 1-based line inside the range wanted.
    #[schemars(range(min = 1))]
    pub line: usize,
    /// `function`, `block` or `tag`; default: the innermost function, else block.
    #[serde(default)]
    #[schemars(extend("enum" = crate::structure::Kind::NAMES))]
    pub kind: Option<String>,
}

/// Arguments of `check_balance`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct BalanceArgs {
    /// Path of the file, relative to the project root.
    pub path: String,
}

/// Arguments of `undo` (none).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct UndoArgs {}

#[tool_router]
impl McpServer {
    /// A server for `root` (absolute); `state` keeps what `read` served (for rebases),
    /// previews and chips. Without a state place, preview, confirm and undo are refused.
    /// `checks` are the operator's post-checks, the only commands the tools may run.
    pub fn new(
        root: PathBuf,
        permission: Permission,
        state: Option<AgentState>,
        checks: PostChecks,
    ) -> Self {
        Self::with_durability(root, permission, state, checks, Default::default())
    }

    /// [`McpServer::new`] whose patch-applying tools commit with `durability` (the
    /// operator's choice: `apply-patch mcp` takes `APPLY_PATCH_DURABILITY`; `new` is full).
    /// Recovery, undo and confirm always flush.
    pub fn with_durability(
        root: PathBuf,
        permission: Permission,
        state: Option<AgentState>,
        checks: PostChecks,
        durability: crate::txn::Durability,
    ) -> Self {
        let mut tool_router = Self::tool_router();
        if permission == Permission::ReadOnly {
            let names: Vec<String> = tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            let reading = ["read", "range", "check_balance"];
            for name in names.iter().filter(|n| !reading.contains(&n.as_str())) {
                tool_router.remove_route(name);
            }
        }
        for route in tool_router.map.values_mut() {
            catalog::shape(&mut route.attr, &checks);
        }
        let instructions = catalog::instructions(&tool_router.list_all(), &checks);
        McpServer {
            session: Arc::new(Session {
                root,
                state,
                reads: Mutex::new(HashMap::new()),
                writes: permission != Permission::ReadOnly,
                checks,
                durability,
                formatters: Vec::new(),
            }),
            tool_router,
            instructions,
        }
    }

    /// This server with the operator's formatters (`apply-patch mcp --formatter GLOB=CMD`):
    /// every write pipes the files it writes that match a glob through its command, as
    /// `--formatter` does for an apply. A tool cannot name one.
    pub fn with_formatters(self, formatters: Vec<String>) -> Self {
        let McpServer {
            session,
            tool_router,
            instructions,
        } = self;
        let session = match Arc::try_unwrap(session) {
            Ok(mut s) => {
                s.formatters = formatters;
                s
            }
            // A server already shared keeps its session as it is, with these formatters.
            Err(shared) => Session {
                root: shared.root.clone(),
                state: shared.state.clone(),
                reads: Mutex::new(shared.reads().clone()),
                writes: shared.writes,
                checks: shared.checks.clone(),
                durability: shared.durability,
                formatters,
            },
        };
        McpServer {
            session: Arc::new(session),
            tool_router,
            instructions,
        }
    }

    #[tool(name = "read", description = tools::READ)]
    async fn read_tool(&self, Parameters(args): Parameters<ReadArgs>) -> CallToolResult {
        let session = self.session.clone();
        blocking(move || session.read(args)).await
    }

    #[tool(name = "apply_patch", description = tools::APPLY_PATCH)]
    async fn apply_patch_tool(&self, Parameters(args): Parameters<ApplyArgs>) -> CallToolResult {
        let session = self.session.clone();
        let mut options = args.options;
        options.blocks = (args.path, args.base);
        blocking(move || session.write(args.patch.into_bytes(), None, options, false)).await
    }

    #[tool(name = "edit", description = tools::EDIT)]
    async fn edit_tool(&self, Parameters(args): Parameters<EditArgs>) -> CallToolResult {
        let request =
            serde_json::json!({"edits": args.edits, "base": args.base.unwrap_or_default()});
        let bytes = request.to_string().into_bytes();
        let session = self.session.clone();
        blocking(move || session.write(bytes, Some(Format::Json), args.options, false)).await
    }

    #[tool(name = "preview", description = tools::PREVIEW)]
    async fn preview_tool(&self, Parameters(args): Parameters<PreviewArgs>) -> CallToolResult {
        let options = WriteOptions {
            rebase: args.rebase,
            window: args.window,
            fuzz: args.fuzz,
            ..WriteOptions::default()
        };
        let session = self.session.clone();
        blocking(move || session.write(args.patch.into_bytes(), None, options, true)).await
    }

    #[tool(name = "confirm", description = tools::CONFIRM)]
    async fn confirm_tool(&self, Parameters(args): Parameters<ConfirmArgs>) -> CallToolResult {
        let session = self.session.clone();
        blocking(move || session.confirm(&args.id)).await
    }

    #[tool(name = "range", description = tools::RANGE)]
    async fn range_tool(&self, Parameters(args): Parameters<RangeArgs>) -> CallToolResult {
        let session = self.session.clone();
        blocking(move || session.reading(|s| s.range(args))).await
    }

    #[tool(name = "check_balance", description = tools::CHECK_BALANCE)]
    async fn check_balance_tool(
        &self,
        Parameters(args): Parameters<BalanceArgs>,
    ) -> CallToolResult {
        let session = self.session.clone();
        blocking(move || session.reading(|s| s.check_balance(args))).await
    }

    #[tool(name = "undo", description = tools::UNDO)]
    async fn undo_tool(&self, Parameters(_): Parameters<UndoArgs>) -> CallToolResult {
        let session = self.session.clone();
        blocking(move || session.undo()).await
    }
}

/// Run a tool's (blocking: file I/O, a post-check command) work off the protocol's thread.
async fn blocking(work: impl FnOnce() -> CallToolResult + Send + 'static) -> CallToolResult {
    match tokio::task::spawn_blocking(work).await {
        Ok(r) => r,
        Err(e) => error_result(&AgentError::ToolStopped {
            cause: e.to_string(),
        }
        .into()),
    }
}

impl Session {
    fn reads(&self) -> std::sync::MutexGuard<'_, HashMap<String, ReadRecord>> {
        // A poisoned lock only means another call panicked mid-update of a plain map.
        self.reads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Step zero of every tool that reads the tree (SPEC §6): a transaction a crash left is
    /// finished or rolled back first (a read-only server refuses instead, naming `apply-patch
    /// recover`), so no tool serves or plans against a half-applied tree.
    fn recover_first(&self, check: bool) -> Result<Vec<Warning>, Error> {
        let opts = crate::txn::TxnOptions {
            state: self.state.as_ref().map(|s| s.state.clone()),
            ..crate::txn::TxnOptions::new(&self.root)
        };
        crate::pipeline::recover_first(&opts, check || !self.writes)
    }

    /// A reading tool after [`Session::recover_first`]; what a recovery did is added to the
    /// result as a text block per warning.
    fn reading(&self, tool: impl FnOnce(&Self) -> CallToolResult) -> CallToolResult {
        let recovered = match self.recover_first(false) {
            Ok(w) => w,
            Err(e) => return error_result(&e),
        };
        let mut result = tool(self);
        for w in recovered {
            let text = format!("warning: {}: {}", w.code.as_str(), w.message);
            result.content.push(ContentBlock::text(text));
        }
        result
    }

    /// `read`: the library's one read (which recovers a crashed transaction first, or, on a
    /// read-only server, refuses naming `apply-patch recover`); what a recovery did is added
    /// to the result as a text block per warning.
    fn read(&self, args: ReadArgs) -> CallToolResult {
        if let Err(e) = check_read_args(&args) {
            return error_result(&e);
        }
        let what = match args.around {
            Some(_) if args.start_line.is_some() || args.end_line.is_some() => {
                return error_result(&AgentError::BadArguments(BadArguments::AroundAndRange).into())
            }
            Some(line) => ReadWhat::Around(line),
            // A model's context is finite: without an end, serve at most MAX_READ_LINES lines
            // (the header and a note say how many more there are).
            None => ReadWhat::Lines(LineRange {
                start: args.start_line,
                end: args.end_line.or_else(|| {
                    Some(
                        args.start_line
                            .unwrap_or(1)
                            .saturating_add(MAX_READ_LINES - 1),
                    )
                }),
            }),
        };
        let setup = ReadSetup {
            state: self.state.as_ref(),
            read_only: !self.writes,
            front_end: FrontEnd::McpTool,
        };
        match pipeline::read::read(&self.root, &args.path, what, &setup) {
            Ok(done) => {
                let out = done.served.lines();
                self.reads().insert(
                    out.path.clone(),
                    ReadRecord {
                        sha256: out.sha256.clone(),
                        total_lines: out.total_lines,
                    },
                );
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(done.served.render())]);
                result.structured_content = serde_json::to_value(&done.served).ok();
                for w in &done.warnings {
                    let text = format!("warning: {}: {}", w.code.as_str(), w.message);
                    result.content.push(ContentBlock::text(text));
                }
                result
            }
            Err(e) => error_result(&e),
        }
    }

    /// `apply_patch`, `edit` and `preview`: the permission check, then the agent apply.
    fn write(
        &self,
        input: Vec<u8>,
        format: Option<Format>,
        options: WriteOptions,
        preview: bool,
    ) -> CallToolResult {
        // Only an operator's command can come out of this; anything else is refused here.
        let post_check = match self
            .checks
            .resolve(options.post_check.as_ref())
        {
            Ok(c) => c,
            Err(e) => return error_result(&e.into()),
        };
        if preview && self.state.is_none() {
            return error_result(&no_state("preview"));
        }
        // The arguments as the library's raw options; every rule is decided there, once.
        let raw = RawOptions {
            check: options.dry_run,
            preview,
            diff: preview,
            strict_balance: options.strict_balance,
            rebase: options.rebase,
            window: options.window,
            fuzz: options.fuzz,
            format: format.map(|f| f.as_str().to_string()),
            path: options.blocks.0.clone(),
            base: options.blocks.1.clone(),
            post_check,
            rollback_on_fail: options.rollback_on_fail,
            // The operator's, never a tool argument's.
            formatter: self.formatters.clone(),
            max_risk: options.max_risk,
            // The tools always report the risk.
            report_risk: Some(true),
            front_end: FrontEnd::McpTool,
            ..RawOptions::default()
        };
        let mut opts = match raw.resolve() {
            Ok((opts, _)) => opts,
            Err(e) => return error_result(&e),
        };
        let mode = if preview {
            Mode::Preview
        } else if options.dry_run {
            Mode::Check
        } else {
            Mode::Write
        };
        // The operator's durability (resolved once, when the server started).
        opts.durability = self.durability;
        opts.state = self.state.as_ref().map(|s| s.state.clone());
        // The pipeline recovers first, then runs the permission check (which reads the
        // files the patch names) on the patch it parsed, before it plans; after a commit,
        // the gate reads back what was written. Both read through the run's own tree.
        let mut gate = SessionGate {
            session: self,
            notices: Vec::new(),
            written: Vec::new(),
        };
        // The library's one door for patch bytes, with the session's hooks (the options
        // were checked when they were resolved; a parse error is worded like any refusal).
        let outcome = pipeline::apply_bytes_with(
            pipeline::Target::Dir(&self.root),
            &input,
            &opts,
            mode,
            Some(Box::new(&mut gate)),
        );
        let mut report = AgentReport::of(&outcome);
        for n in gate.notices {
            report
                .report
                .warnings
                .push(Warning::new(n.code, n.message).with_path(n.path));
        }
        if report.report.ok && mode == Mode::Write {
            self.remember_written(gate.written);
        }
        let value = serde_json::to_value(&report).unwrap_or_default();
        report_result(value, report.exit != 0)
    }

    /// After a `confirm`, the session knows the files as it wrote them (read back through
    /// one tree).
    fn remember_confirmed(&self, paths: &[(String, Option<String>)]) {
        let tree = DiskTree::new(&self.root).ok();
        let written = paths
            .iter()
            .map(|(path, old_path)| Written {
                path: path.clone(),
                old_path: old_path.clone(),
                record: tree.as_ref().and_then(|t| read_back(t, path)),
            })
            .collect();
        self.remember_written(written);
    }

    /// After a write, the session knows the files as it wrote them.
    fn remember_written(&self, written: Vec<Written>) {
        let mut reads = self.reads();
        for w in written {
            if let Some(old) = &w.old_path {
                reads.remove(old);
            }
            match w.record {
                Some(record) => reads.insert(w.path, record),
                None => reads.remove(&w.path),
            };
        }
    }

    /// The text of a file for the structure tools (UTF-8 only, confined to the root).
    fn text_of(&self, path: &str) -> Result<(String, String), Error> {
        let (rel, bytes) = crate::agent::read::read_confined(&self.root, path)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::from(AgentError::TextNotUtf8 { path: rel.clone() })
        })?;
        Ok((rel, text))
    }

    fn range(&self, args: RangeArgs) -> CallToolResult {
        use crate::structure::{range, Kind, Lang, RangeReport};
        if args.line == 0 {
            return error_result(&AgentError::BadArguments(BadArguments::RangeLineZero).into());
        }
        let kind = match args.kind.as_deref() {
            None => None,
            Some(name) if Kind::from_name(name).is_some() => Kind::from_name(name),
            Some(other) => {
                return error_result(
                    &AgentError::BadArguments(BadArguments::UnknownKind {
                        kind: other.to_string(),
                    })
                    .into(),
                )
            }
        };
        let found = self.text_of(&args.path).and_then(|(rel, text)| {
            let r = range(&text, args.line, kind, Lang::from_path(&rel))
                .map_err(|e| Error::from(e).with_unnamed_path(&rel))?;
            Ok(RangeReport {
                path: rel,
                range: r,
            })
        });
        match found {
            Ok(report) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(report.render())]);
                result.structured_content = serde_json::to_value(&report).ok();
                result
            }
            Err(e) => error_result(&e),
        }
    }

    fn check_balance(&self, args: BalanceArgs) -> CallToolResult {
        use crate::structure::{check_balance, FileBalance, Lang};
        match self.text_of(&args.path) {
            Ok((rel, text)) => {
                let lang = Lang::from_path(&rel);
                let report = FileBalance {
                    balance: check_balance(&text, lang),
                    path: rel,
                    lang,
                };
                let mut result = CallToolResult::success(vec![ContentBlock::text(report.render())]);
                result.structured_content = serde_json::to_value(&report).ok();
                result
            }
            Err(e) => error_result(&e),
        }
    }

    fn confirm(&self, id: &str) -> CallToolResult {
        let Some(state) = &self.state else {
            return error_result(&no_state("confirm"));
        };
        let r = ConfirmReport::of(id, &pipeline::confirm::confirm(&self.root, id, Some(state.state.clone())));
        if r.ok {
            let paths: Vec<(String, Option<String>)> = r
                .files
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| {
                    let path = f["path"].as_str()?.to_string();
                    Some((path, f["old_path"].as_str().map(str::to_string)))
                })
                .collect();
            self.remember_confirmed(&paths);
        }
        let failed = !r.ok;
        report_result(serde_json::to_value(&r).unwrap_or_default(), failed)
    }

    fn undo(&self) -> CallToolResult {
        let Some(state) = &self.state else {
            return error_result(&no_state("undo"));
        };
        // Nothing to undo is a success with `undone: null`, as `apply-patch undo` says.
        match crate::txn::undo_with(&state.state, None) {
            Ok(u) => {
                // What the files hold now is not what this session read or wrote.
                let mut reads = self.reads();
                for f in &u.files {
                    reads.remove(f);
                }
                drop(reads);
                let mut value = serde_json::to_value(&u).unwrap_or_default();
                if let Some(map) = value.as_object_mut() {
                    map.insert("ok".into(), true.into());
                    map.insert("error".into(), serde_json::Value::Null);
                }
                report_result(value, false)
            }
            Err(e) => error_result(&e),
        }
    }
}

/// A file a write committed, as the session will know it: its record as read back after the
/// commit (None when it is gone, or cannot be read).
struct Written {
    path: String,
    old_path: Option<String>,
    record: Option<ReadRecord>,
}

/// The session's hooks around a write (a [`Hook`]): the permission check before the plan,
/// and the read-back of the written files after the commit, both through the run's tree (no
/// second discovery of the repository per call).
struct SessionGate<'s> {
    session: &'s Session,
    notices: Vec<permit::Notice>,
    written: Vec<Written>,
}

impl Hook for SessionGate<'_> {
    fn before_plan(&mut self, run: &Run<'_, '_>) -> Result<(), Error> {
        if let Some(tree) = run.tree {
            self.notices = permit::check(tree, run.req.patch, &self.session.reads())?;
        }
        Ok(())
    }

    fn after_commit(
        &mut self,
        run: &Run<'_, '_>,
        applied: &pipeline::Applied,
        _written: Option<&pipeline::sink::Written>,
        _facts: &mut Facts,
    ) -> Result<(), Error> {
        let Some(tree) = run.tree else { return Ok(()) };
        self.written = applied
            .files
            .iter()
            .map(|f| Written {
                path: f.path.clone(),
                old_path: f.old_path.clone(),
                record: read_back(tree, &f.path),
            })
            .collect();
        Ok(())
    }
}

/// The record of `path` as it is now (None when it is gone or cannot be read).
fn read_back(tree: &DiskTree, path: &str) -> Option<ReadRecord> {
    let (_, bytes) = crate::agent::read::read_confined_in(tree, path).ok()?;
    Some(ReadRecord {
        sha256: sha256_hex(&bytes),
        total_lines: Text::parse(&bytes).len(),
    })
}

fn no_state(tool: &str) -> Error {
    AgentError::NoStatePlace {
        tool: tool.to_string(),
    }
    .into()
}

/// A report as the tool result: structured content, and the same JSON as text.
fn report_result(value: serde_json::Value, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    }
}

/// A refusal as the tool result a model sees: `isError`, the error object as structured
/// content and as text (so clients that show only text still see code, message and hint).
pub fn error_result(e: &Error) -> CallToolResult {
    let e = e.clone().for_front_end(FrontEnd::McpTool);
    CallToolResult::structured_error(serde_json::json!({"ok": false, "error": e}))
}

/// `read`'s line numbers count from 1 (as `apply-patch read --lines` does): a 0 would number
/// the first line 0 and put an agent's edit one line off.
fn check_read_args(args: &ReadArgs) -> Result<(), Error> {
    if [args.start_line, args.end_line, args.around].contains(&Some(0)) {
        return Err(AgentError::BadArguments(BadArguments::LineZero).into());
    }
    if let (Some(start), Some(end)) = (args.start_line, args.end_line) {
        if end < start {
            return Err(AgentError::BadArguments(BadArguments::EndBeforeStart { start, end }).into());
        }
    }
    Ok(())
}

/// Invalid arguments, which rmcp answers as plain text, become the JSON report (`usage`)
/// that every other refusal is.
fn arguments_as_report(tool: &str, mut response: CallToolResponse) -> CallToolResponse {
    let CallToolResponse::Complete(result) = &mut response else {
        return response;
    };
    if result.is_error != Some(true) || result.structured_content.is_some() {
        return response;
    }
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    let detail = text
        .strip_prefix("failed to deserialize parameters:")
        .unwrap_or(&text)
        .trim();
    let e = Error::from(AgentError::InvalidArguments {
        tool: tool.to_string(),
        detail: detail.to_string(),
    });
    *result = error_result(&e);
    response
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "apply-patch",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.instructions.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let tool = request.name.to_string();
        let call = ToolCallContext::new(self, request, context);
        let response = self.tool_router.call(call).await?;
        Ok(arguments_as_report(&tool, response))
    }

    /// The stand-in for a request over the size limit (see [`oversize`]) is answered with
    /// an error carrying its id; any other unknown method is not found.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CustomResult, rmcp::ErrorData> {
        if request.method == oversize::TOO_LARGE {
            return Err(oversize::too_large(request.params.as_ref()));
        }
        Err(rmcp::ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }
}

/// Serve `server` over standard input and output until the client closes them.
pub fn serve_stdio(server: McpServer) -> Result<(), Error> {
    let io_err = |what: &str, e: &dyn std::fmt::Display| {
        Error::from(AgentError::Server {
            what: what.to_string(),
            cause: e.to_string(),
        })
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_err("cannot start the runtime", &e))?;
    runtime.block_on(async move {
        // Lines are bounded before rmcp sees them, so that one over the limit is answered
        // rather than dropped (rmcp's own limit is then never reached).
        let input = oversize::Bounded::new(tokio::io::stdin(), oversize::MAX_REQUEST);
        let transport =
            rmcp::transport::async_rw::AsyncRwTransport::new_server(input, tokio::io::stdout())
                .with_max_line_length(oversize::MAX_REQUEST + 1);
        let running = server
            .serve(transport)
            .await
            .map_err(|e| io_err("initialisation failed", &e))?;
        running.waiting().await.map_err(|e| io_err("stopped", &e))?;
        Ok(())
    })
}
