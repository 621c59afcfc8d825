//! The one integration test binary: one module per area.

mod locate;
mod parse_agent;
mod txn;
