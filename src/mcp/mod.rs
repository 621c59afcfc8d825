//! Stage: agent MCP (feature `mcp`). `apply-patch mcp [--read-only]` serves the Model Context
//! Protocol over standard input and output ([`serve_mcp`]); the server itself, its tools and
//! session are in `server`. A front end like the command line: it builds the pipeline's
//! options ([`crate::pipeline::Options`], worded for an MCP tool) and renders the result, so
//! it sits above the pipeline and the agent building blocks, and nothing below depends on it.

use std::path::Path;

use crate::agent::{catalog, check_root, AgentState};
use crate::error::Error;

crate::internal_mod! {
    server;
}

pub use server::Permission;

/// Serve the MCP tools (`read`, `apply_patch`, `edit`, `preview`, `confirm`, `range`,
/// `check_balance`, `undo`) for `root` on standard input and output until the client closes
/// them: what `apply-patch mcp` runs. `post_checks` are the operator's `--post-check`
/// commands (`CMD` or `NAME=CMD`): the only ones a tool may run. Blocks the calling thread.
pub fn serve_mcp(root: &Path, permission: Permission, post_checks: &[String]) -> Result<(), Error> {
    check_root(root)?;
    let checks = catalog::PostChecks::parse(post_checks)?;
    let root = std::fs::canonicalize(root)
        .map_err(|e| Error::io(&root.display().to_string(), "cannot open the root", &e))?;
    let state = AgentState::for_root(&root).ok();
    server::serve_stdio(server::McpServer::new(root, permission, state, checks))
}
