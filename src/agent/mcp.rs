//! Stage: agent MCP. `apply-patch mcp [--read-only]` serves the Model Context Protocol over
//! standard input and output (rmcp), so an agent can read and edit files of one root through
//! tools whose descriptions teach the model the formats and what to do on each error.
//!
//! Permission modes: `--read-only` offers only `read`; the default refuses a change to an
//! existing file the session has not read (`not_read`). The server keeps, per session, what
//! it served for each path (hash and line count) for that check. Must not write the work tree
//! except through the applier's transaction.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};

use crate::agent::permit::ReadRecord;
use crate::agent::read::{read_file, LineRange};
use crate::agent::snapshots::SnapshotStore;
use crate::agent::tools;
use crate::error::Error;

/// How much the server lets a client change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Only `read`.
    ReadOnly,
    /// Changes to existing files need a `read` of them first in this session.
    ReadBeforeEdit,
}

/// Everything a session shares between its tool calls.
#[derive(Debug)]
struct Session {
    root: PathBuf,
    store: Option<SnapshotStore>,
    reads: Mutex<HashMap<String, ReadRecord>>,
}

/// The MCP server of one root.
#[derive(Debug, Clone)]
pub struct McpServer {
    session: Arc<Session>,
    permission: Permission,
    tool_router: ToolRouter<Self>,
}

/// Arguments of `read`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ReadArgs {
    /// Path of the file, relative to the project root.
    pub path: String,
    /// First line to return (1-based); default 1.
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Last line to return (1-based, inclusive); default: the end of the file.
    #[serde(default)]
    pub end_line: Option<usize>,
}

#[tool_router]
impl McpServer {
    /// A server for `root`; `store` keeps what `read` served (for rebases).
    pub fn new(root: PathBuf, permission: Permission, store: Option<SnapshotStore>) -> Self {
        let mut tool_router = Self::tool_router();
        if permission == Permission::ReadOnly {
            let names: Vec<String> = tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            for name in names.iter().filter(|n| *n != "read") {
                tool_router.remove_route(name);
            }
        }
        McpServer {
            session: Arc::new(Session {
                root,
                store,
                reads: Mutex::new(HashMap::new()),
            }),
            permission,
            tool_router,
        }
    }

    /// The permission mode the server runs in.
    pub fn permission(&self) -> Permission {
        self.permission
    }

    /// What this session has read of `path`, if anything.
    pub fn read_record(&self, path: &str) -> Option<ReadRecord> {
        self.reads().get(path).cloned()
    }

    fn reads(&self) -> std::sync::MutexGuard<'_, HashMap<String, ReadRecord>> {
        // A poisoned lock only means another call panicked mid-update of a plain map.
        self.session.reads.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[tool(name = "read", description = tools::READ)]
    async fn read_tool(&self, Parameters(args): Parameters<ReadArgs>) -> CallToolResult {
        let range = LineRange {
            start: args.start_line,
            end: args.end_line,
        };
        match read_file(
            &self.session.root,
            &args.path,
            range,
            self.session.store.as_ref(),
        ) {
            Ok(out) => {
                self.reads().insert(
                    out.path.clone(),
                    ReadRecord {
                        sha256: out.sha256.clone(),
                        total_lines: out.total_lines,
                    },
                );
                let mut result = CallToolResult::success(vec![ContentBlock::text(out.render())]);
                result.structured_content = serde_json::to_value(&out).ok();
                result
            }
            Err(e) => error_result(&e),
        }
    }
}

/// A refusal as the tool result a model sees: `isError`, the error object as structured
/// content and as text (so clients that show only text still see code, message and hint).
pub fn error_result(e: &Error) -> CallToolResult {
    let value = serde_json::json!({"ok": false, "error": e});
    CallToolResult::structured_error(value)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "apply-patch",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(tools::INSTRUCTIONS)
    }
}

/// Serve `server` over standard input and output until the client closes them.
pub fn serve_stdio(server: McpServer) -> Result<(), Error> {
    let io_err = |what: &str, e: &dyn std::fmt::Display| {
        Error::new(
            crate::error::ErrorCode::IoError,
            format!("mcp server: {what}: {e}"),
        )
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_err("cannot start the runtime", &e))?;
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| io_err("initialisation failed", &e))?;
        running.waiting().await.map_err(|e| io_err("stopped", &e))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::RunningService;
    use rmcp::RoleClient;

    /// A real MCP client connected to `server` through an in-memory pipe.
    async fn connect(server: McpServer) -> RunningService<RoleClient, ()> {
        let (server_end, client_end) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_end).await.expect("the handshake succeeds")
    }

    async fn call(
        client: &RunningService<RoleClient, ()>,
        tool: &str,
        args: serde_json::Value,
    ) -> CallToolResult {
        let args = args.as_object().cloned().expect("arguments are an object");
        client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .expect("the call reaches the server")
    }

    #[tokio::test]
    async fn read_serves_numbered_lines_and_records_the_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.txt"), "one\n\ttwo\nthree\n").expect("write");
        let server = McpServer::new(dir.path().to_path_buf(), Permission::ReadBeforeEdit, None);
        let client = connect(server.clone()).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "read"));
        let r = call(
            &client,
            "read",
            serde_json::json!({"path": "a.txt", "start_line": 2}),
        )
        .await;
        assert_eq!(r.is_error, Some(false));
        let text = r.content[0].as_text().expect("text content").text.clone();
        assert!(text.contains("     2\t\ttwo\n     3\tthree\n"), "{text}");
        let data = r.structured_content.expect("structured content");
        assert_eq!(data["lines"], serde_json::json!(["\ttwo", "three"]));
        let rec = server.read_record("a.txt").expect("the read is recorded");
        assert_eq!(rec.total_lines, 3);
        let missing = call(&client, "read", serde_json::json!({"path": "nope.txt"})).await;
        assert_eq!(missing.is_error, Some(true));
        let data = missing.structured_content.expect("structured content");
        assert_eq!(data["error"]["code"], "file_not_found");
        client.cancel().await.expect("closes");
    }

    #[tokio::test]
    async fn read_only_offers_only_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let server = McpServer::new(dir.path().to_path_buf(), Permission::ReadOnly, None);
        let client = connect(server).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, vec!["read"]);
        client.cancel().await.expect("closes");
    }
}
