//! The one integration test binary.

mod git;
