//! The one integration test binary: one module per area.

mod agent;
mod api;
mod blocks;
mod cli;
mod conformance;
mod convert;
// The formatters run `sh`.
#[cfg(unix)]
mod formatter;
mod front;
// The git tests build their fixtures with the git CLI and check modes and symlinks: Unix
// only (the Windows run under Wine has no git).
#[cfg(unix)]
mod git;
mod input;
mod install;
mod locate;
mod mcp;
mod mcp_python;
mod parse_agent;
mod parse_blocks;
mod parse_unified;
mod props;
mod regression;
mod roundtrip;
mod searchreplace;
mod structure;
mod txn;
mod util;
