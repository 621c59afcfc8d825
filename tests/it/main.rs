//! The one integration test binary: one module per area.

mod git;
mod locate;
mod parse_agent;
mod txn;
