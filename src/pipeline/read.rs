//! Stage: orchestration (read, feature `mcp`). `read` as one library function, the one the
//! command line (`apply-patch read`), the MCP `read` tool and the Python `read` call: check
//! the root, recover a transaction a crash left (SPEC §6: nothing is served from a
//! half-applied tree; a caller that must not write refuses instead, naming `apply-patch
//! recover`), then serve the lines (or the range around a line) and keep the snapshot that a
//! later `rebase` merges from. Writes nothing in the work tree but what a recovery finishes.

use std::path::Path;

use crate::agent::read::{read_around, read_file, AroundOutput, LineRange, ReadOutput};
use crate::agent::AgentState;
use crate::error::Error;
use crate::report::Warning;
use crate::spelling::FrontEnd;
use crate::txn::TxnOptions;

/// What to serve of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadWhat {
    /// A range of lines (the whole file by default).
    Lines(LineRange),
    /// The function (else block, else element) enclosing this 1-based line.
    Around(usize),
}

impl Default for ReadWhat {
    fn default() -> Self {
        ReadWhat::Lines(LineRange::default())
    }
}

/// How a front end reads: where its state place is, whether it may finish a crashed
/// transaction, and whose words its refusals use.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReadSetup<'s> {
    /// The agent state (its snapshots keep what is served); None: the root's own, when it
    /// can be made (a state place that cannot be made does not stop a read).
    pub state: Option<&'s AgentState>,
    /// A read-only caller (the MCP server's `--read-only`): a crashed transaction is refused,
    /// naming `apply-patch recover`, rather than recovered.
    pub read_only: bool,
    /// Whose words a refusal's hint uses.
    pub front_end: FrontEnd,
}

impl<'s> ReadSetup<'s> {
    /// A writing caller's read with the root's own state place, worded for `front_end`.
    pub fn for_front_end(front_end: FrontEnd) -> Self {
        ReadSetup {
            front_end,
            ..ReadSetup::default()
        }
    }

    /// With an explicit agent state (see [`ReadSetup::state`]).
    pub fn with_state(mut self, state: Option<&'s AgentState>) -> Self {
        self.state = state;
        self
    }

    /// Refusing, rather than recovering, a crashed transaction (see [`ReadSetup::read_only`]).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }
}

/// What a read served.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Served {
    Lines(ReadOutput),
    Around(AroundOutput),
}

impl Served {
    /// The lines served, with the file's version.
    pub fn lines(&self) -> &ReadOutput {
        match self {
            Served::Lines(out) => out,
            Served::Around(out) => &out.read,
        }
    }

    /// The human form (`apply-patch read` without `--json`).
    pub fn render(&self) -> String {
        match self {
            Served::Lines(out) => out.render(),
            Served::Around(out) => out.render(),
        }
    }
}

/// A read's result: what was served, and what the recovery before it did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Read {
    #[serde(flatten)]
    pub served: Served,
    /// `recovered` warnings when a crashed transaction was finished or rolled back first
    /// (absent from the JSON when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// Read `path` of `root` as [`ReadWhat`] says, after recovering a crashed transaction.
pub fn read(root: &Path, path: &str, what: ReadWhat, setup: &ReadSetup<'_>) -> Result<Read, Error> {
    read_for(root, path, what, setup).map_err(|e| e.for_front_end(setup.front_end))
}

fn read_for(root: &Path, path: &str, what: ReadWhat, setup: &ReadSetup<'_>) -> Result<Read, Error> {
    if let ReadWhat::Around(0) = what {
        return Err(crate::usage::UsageError::ZeroAround.into());
    }
    let canonical = crate::root::check_root(root)?;
    let own;
    let state = match setup.state {
        Some(s) => Some(s),
        None => {
            own = AgentState::for_root(root).ok();
            own.as_ref()
        }
    };
    // Without a state place there is no journal to find (and, as before, a state place that
    // cannot be made does not stop a read).
    let place = match state {
        Some(s) => Some(s.state.clone()),
        None => crate::state::StateDir::for_root(&canonical).ok(),
    };
    let warnings = match place {
        Some(place) => {
            let txn = TxnOptions {
                state: Some(place),
                ..TxnOptions::new(canonical)
            };
            super::recover_first(&txn, setup.read_only)?
        }
        None => Vec::new(),
    };
    let store = state.map(|s| &s.snapshots);
    let served = match what {
        ReadWhat::Lines(range) => Served::Lines(read_file(root, path, range, store)?),
        ReadWhat::Around(line) => Served::Around(read_around(root, path, line, store)?),
    };
    Ok(Read { served, warnings })
}
