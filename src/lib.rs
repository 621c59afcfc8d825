//! apply-patch applies multi-file patches safely: the agent patch language
//! (`*** Begin Patch` … `*** End Patch`), git and plain unified diffs, and JSON edit requests
//! all become one model; every hunk is placed where it uniquely belongs or refused with an
//! error that teaches; and every file of a patch is committed atomically, or none is.
//!
//! The pipeline, one module per stage:
//! parse → [`model`] → [`locate`] → plan ([`splice`]) → check → commit / rollback → report.
//!
//! The command line is part of the library too: [`run_cli`] runs it in-process (the binary
//! and the Python wheel's `apply-patch` command are that one call).

#![cfg_attr(docsrs, feature(doc_cfg))]

// The command line's module names the library by its crate name, as a binary would.
extern crate self as apply_patch;

pub mod agent;
pub mod apply;
// The command line's internals: public for `run_cli`'s callers' sake only, not a stable API.
#[doc(hidden)]
pub mod cli;
pub mod content;
mod entry;
pub mod error;
pub mod git;
pub mod guard;
pub mod locate;
pub mod merge;
pub mod model;
pub mod parse;
pub mod pipeline;
pub mod plan;
mod release;
pub mod render;
pub mod report;
mod root;
pub mod splice;
pub mod state;
pub mod structure;
pub mod text;
pub mod transform;
pub mod tree;
pub mod txn;

pub use entry::run_cli;
pub use error::{Error, ErrorCode};
pub use model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet};
