//! The one integration test binary.

mod txn;
