//! apply-patch applies multi-file patches safely: the agent patch language
//! (`*** Begin Patch` … `*** End Patch`), git and plain unified diffs, and JSON edit requests
//! all become one model; every hunk is placed where it uniquely belongs or refused with an
//! error that teaches; and every file of a patch is committed atomically, or none is.
//!
//! The pipeline, one module per stage:
//! parse → [`model`] → [`locate`] → plan ([`splice`]) → check → commit / rollback → report.

pub mod agent;
pub mod apply;
pub mod content;
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
pub mod splice;
pub mod state;
pub mod structure;
pub mod text;
pub mod transform;
pub mod tree;
pub mod txn;

pub use error::{Error, ErrorCode};
pub use model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet};
