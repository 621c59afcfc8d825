//! The one integration test binary: one module per area.

mod parse_unified;
mod roundtrip;
