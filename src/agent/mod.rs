//! Stage: the agent interface around the applier — the building blocks an agent pipeline
//! needs besides "apply this patch", which the pipeline ([`crate::pipeline`]) and the MCP
//! server ([`crate::mcp`]) use:
//! - [`read`]: numbered lines and the file's version (for `*** Base:`); `snapshots` keeps
//!   what it served;
//! - the agent options' parts: `rebase` (three-way merge of a stale Base), `preview`
//!   (`--preview` / `confirm`), `postcheck` (`--post-check`, `--rollback-on-fail`) and
//!   `chips` (kept refusals); the risk score (`--max-risk`) is the core's `risk`;
//! - for the MCP server: `permit` (read before edit), `catalog` (the operator's checks),
//!   `tools` (the tool descriptions), `around` and `oversize`. What the command line prints
//!   for all of it is the `cli` module's.
//!
//! Nothing here places hunks or writes the work tree itself, and nothing here runs the
//! pipeline: this module sits below it (the dependency goes pipeline → agent only). It reads
//! files and keeps its own records in the state place (never in the work tree).

mod error;
pub mod read;

pub use chips::HunkStatus;
pub use error::{AgentError, BadArguments, PreviewGone};
pub use postcheck::Verification;

crate::internal_mod! {
    // `range --around` of the command line and the MCP server.
    #[cfg(feature = "mcp")]
    around;
    #[cfg(feature = "mcp")]
    catalog;
    chips;
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

/// Refuse (`usage`) a root that is not an existing directory: `root::check_root`,
/// the one check every front end shares.
pub fn check_root(root: &std::path::Path) -> Result<(), Error> {
    crate::root::check_root(root).map(drop)
}

/// The agent features' folders in the state place of a root (never in the work tree).
#[derive(Debug, Clone)]
pub struct AgentState {
    // Read by `pipeline::read` (the `mcp` feature).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) state: StateDir,
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) snapshots: snapshots::SnapshotStore,
    pub(crate) previews: preview::PreviewStore,
    pub(crate) chips: chips::ChipStore,
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
