//! Stage: the agent interface around the applier — what an agent pipeline needs besides
//! "apply this patch":
//! - [`read`]: numbered lines and the file's version (for `*** Base:`); `snapshots` keeps
//!   what it served;
//! - [`run`]: an apply with the agent options — `rebase` (three-way merge of a stale Base),
//!   the risk score (`--max-risk`; `risk` is in the core, pure), `preview` (`--preview` /
//!   `confirm`), `postcheck` (`--post-check`, `--rollback-on-fail`) and `chips` (kept
//!   refusals);
//! - `mcp`: the MCP server ([`serve_mcp`]), with `permit` (read before edit) and `tools` (the tool
//!   descriptions). What the command line prints for all of it is the `cli` module's.
//!
//! Nothing here places hunks or writes the work tree itself: placing is the locator's and the
//! planner's job, writing the transaction's. This module reads files, keeps its own records in
//! the state place (never in the work tree) and calls the public entry points of the other
//! stages.

mod error;
pub mod read;
pub mod run;

pub use error::{AgentError, BadArguments, PreviewGone};

crate::internal_mod! {
    // `range --around` of the command line and the MCP server.
    #[cfg(feature = "mcp")]
    around;
    #[cfg(feature = "mcp")]
    catalog;
    chips;
    #[cfg(feature = "mcp")]
    mcp;
    #[cfg(feature = "mcp")]
    oversize;
    #[cfg(feature = "mcp")]
    permit;
    postcheck;
    preview;
    rebase;
    snapshots;
    #[cfg(feature = "mcp")]
    tools;
}

use crate::error::Error;
use crate::state::StateDir;

/// Refuse (`usage`) a root that is not an existing directory: [`crate::root::check_root`],
/// the one check every front end shares.
pub fn check_root(root: &std::path::Path) -> Result<(), Error> {
    crate::root::check_root(root).map(drop)
}

/// The agent features' folders in the state place of a root (never in the work tree).
#[derive(Debug, Clone)]
pub struct AgentState {
    pub state: StateDir,
    pub snapshots: snapshots::SnapshotStore,
    pub previews: preview::PreviewStore,
    pub chips: chips::ChipStore,
}

impl AgentState {
    /// The state of `root` (`.git/apply-patch/` in a git work tree, else the user's state
    /// directory).
    pub fn for_root(root: &std::path::Path) -> Result<AgentState, Error> {
        AgentState::in_state_dir(StateDir::for_root(root)?)
    }

    /// The agent folders of an explicit state place.
    pub fn in_state_dir(state: StateDir) -> Result<AgentState, Error> {
        Ok(AgentState {
            snapshots: snapshots::SnapshotStore::new(state.sub("snapshots")?),
            previews: preview::PreviewStore::new(state.sub("previews")?),
            chips: chips::ChipStore::new(state.sub("chips")?),
            state,
        })
    }
}

#[cfg(feature = "mcp")]
pub use mcp::Permission as McpPermission;

/// Serve the MCP tools (`read`, `apply_patch`, `edit`, `preview`, `confirm`, `range`,
/// `check_balance`, `undo`) for `root` on standard input and output until the client closes
/// them: what `apply-patch mcp` runs. `post_checks` are the operator's `--post-check`
/// commands (`CMD` or `NAME=CMD`): the only ones a tool may run. Blocks the calling thread.
#[cfg(feature = "mcp")]
pub fn serve_mcp(
    root: &std::path::Path,
    permission: McpPermission,
    post_checks: &[String],
) -> Result<(), Error> {
    check_root(root)?;
    let checks = catalog::PostChecks::parse(post_checks)?;
    let root = std::fs::canonicalize(root)
        .map_err(|e| Error::io(&root.display().to_string(), "cannot open the root", &e))?;
    let state = AgentState::for_root(&root).ok();
    mcp::serve_stdio(mcp::McpServer::new(root, permission, state, checks))
}

/// How many hex digits of the SHA-256 a file version has (SPEC §2 accepts ≥ 8 as `*** Base:`;
/// 16 keeps collisions out of reach while staying short enough to copy).
pub const VERSION_DIGITS: usize = 16;

pub(crate) use crate::hash::sha256_hex;

/// The version of a file's bytes as `read` hands it out and `*** Base:` takes it back: the
/// first [`VERSION_DIGITS`] hex digits of its SHA-256.
pub fn version_of(bytes: &[u8]) -> String {
    let mut hex = sha256_hex(bytes);
    hex.truncate(VERSION_DIGITS);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_a_prefix_of_the_sha256() {
        let full = sha256_hex(b"hello\n");
        assert_eq!(
            full,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(version_of(b"hello\n"), &full[..VERSION_DIGITS]);
    }
}
