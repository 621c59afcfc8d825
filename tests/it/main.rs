//! The one integration test binary: one module per area.

mod agent;
mod cli;
mod conformance;
mod convert;
mod front;
mod git;
mod install;
mod locate;
mod mcp;
mod mcp_python;
mod parse_agent;
mod parse_unified;
mod props;
mod regression;
mod roundtrip;
mod structure;
mod txn;
mod util;
