//! apply-patch applies multi-file patches safely: the agent patch language
//! (`*** Begin Patch` … `*** End Patch`), git and plain unified diffs, and JSON edit requests
//! all become one model; every hunk is placed where it uniquely belongs or refused with an
//! error that teaches; and every file of a patch is committed atomically, or none is.
//!
//! The pipeline, one module per stage:
//! parse → [`model`] → [`locate`] → plan ([`splice`]) → check → commit / rollback → report.

// `apply_patch::…` paths name this crate from inside it too: the command line (`cli`) was
// written against the public paths, and keeps them now that it is part of the library.
extern crate self as apply_patch;

/// Declares a module that is not part of the public API: crate-private in a normal build,
/// public (and hidden from the docs) with the `internals` feature, which only this crate's own
/// integration tests, benches and fuzz targets turn on.
macro_rules! internal_mod {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        $(#[$attr])*
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        $(#[$attr])*
        pub(crate) mod $name;
    )*};
}
pub(crate) use internal_mod;

#[cfg(feature = "git")]
pub mod agent;
pub mod apply;
pub mod error;
pub mod locate;
pub mod model;
pub mod parse;
pub mod plan;
pub mod render;
pub mod report;
pub mod splice;
pub mod structure;
pub mod text;
pub mod tree;

internal_mod! {
    content;
    #[cfg(feature = "git")]
    git;
    guard;
    hash;
    #[cfg(feature = "git")]
    merge;
    state;
    transform;
    txn;
}

mod release;

/// The disk transaction's entry points for a caller: undo the last applied patch, and recover
/// a transaction that a crash interrupted (SPEC §6). Every apply commits through the same
/// transaction and recovers first by itself; [`Change`](transaction::Change) is what a
/// [`Plan`](plan::Plan) would commit.
pub mod transaction {
    pub use crate::txn::{
        recover, undo, Change, NewState, RecoverAction, RecoverReport, Snapshot, TxnWarning,
        UndoReport,
    };
}

#[cfg(feature = "cli")]
mod cli;

/// The `apply-patch` command as a function: arguments in, an [`Outcome`](command::Outcome)
/// (standard output, standard error, exit status) out. The binary only prints it.
#[cfg(feature = "cli")]
pub mod command {
    pub use crate::cli::{run, Env, Outcome};
}

pub use error::{Error, ErrorCode};
pub use model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet};
