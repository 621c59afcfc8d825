//! apply-patch applies multi-file patches safely: the agent patch language
//! (`*** Begin Patch` … `*** End Patch`), git and plain unified diffs, and JSON edit requests
//! all become one model; every hunk is placed where it uniquely belongs or refused with an
//! error that teaches; and every file of a patch is committed atomically, or none is.
//!
//! The pipeline, one module per stage:
//! [`parse`] → [`model`] → [`locate`] → [`plan`] ([`splice`]) → check → commit / rollback
//! ([`transaction`]) → [`report`].
//!
//! # Entry points
//!
//! - [`pipeline::apply_bytes`] (patch bytes) / [`pipeline::apply`] (a parsed [`PatchSet`]):
//!   the one door to apply a patch, to a directory or a [`tree::MemTree`]
//!   ([`pipeline::Target`]), with [`pipeline::Options`] (a builder) and a
//!   [`pipeline::Mode`]; `Result<Applied, Box<Refused>>`, whose JSON view (the object of the
//!   command line's `--json`) is [`report::Report`]`::from(&result)`.
//!   [`apply::plan`] plans without writing.
//! - [`parse::parse`]: patch bytes to a [`PatchSet`] (any of the four formats;
//!   [`parse::ParseOptions`] fixes the format or the strip count).
//! - [`locate::locate_hunks`] / [`locate::locate_edits`]: where hunks go in a [`text::Text`],
//!   pure (no file system); [`splice::splice`] writes placed hunks into the text.
//! - [`transaction::undo`] and [`transaction::recover`]: the disk transaction's history.
//! - `pipeline::read::read` (feature `mcp`): numbered lines and a version for `*** Base:`,
//!   recovering a crashed transaction first; `pipeline::confirm::confirm` (feature `git`)
//!   commits a kept preview, and `pipeline::AgentReport` / `pipeline::ConfirmReport` are the
//!   JSON views of an agent apply and of `confirm`.
//! - [`mcp::serve_mcp`] (feature `mcp`): the MCP server.
//! - [`structure`]: bracket, tag and indentation balance and enclosing ranges.
//! - [`command::run`] (feature `cli`): the whole `apply-patch` command as a function;
//!   [`run_cli`] runs it and prints (the binary and the Python wheel's command).
//!
//! ```
//! use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
//! use apply_patch::report::Report;
//! use apply_patch::tree::MemTree;
//!
//! let mut tree = MemTree::from_pairs([("hello.txt", "hello\nworld\n")]);
//! let patch = b"*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
//! let result = apply_bytes(Target::Memory(&mut tree), patch, &Options::default(), Mode::Write);
//! assert!(result.is_ok(), "{}", Report::from(&result).to_json());
//! assert_eq!(tree.to_string(), "=== hello.txt\nhello\nthere\n");
//! ```
//!
//! # Cargo features
//!
//! `git` (gix: blob ids through the repository's filters, `--index`, `--cached`, `--3way`,
//! the agent features), `mcp` (the MCP server; rmcp, tokio) and `cli` (the command line;
//! clap) are on by default. `default-features = false` leaves the core: parse, locate, plan,
//! the memory tree and the disk transaction (and the risk score); there a git mode,
//! `--preview`, `--rebase`, `--post-check` or a chip is a usage error naming the `git`
//! feature. `failpoints` and `internals` are for this crate's own tests only.
//!
//! # Stability
//!
//! Result, report, option and error types are `#[non_exhaustive]`: a new field or variant is
//! not a breaking change, so outside code builds them with their constructors or builders
//! and matches them with a `_` arm. The whole public surface, one line per item, is
//! `snapshots/public-api.txt` in the repository (`scripts/public-api.py`, checked in CI), so
//! every change to it shows in review.
//!
//! # The command line and the public API
//!
//! The binary (`src/main.rs`) calls [`run_cli`] only. The command line itself is this
//! library's crate-private `cli` module, and besides the public API it uses these
//! crate-private items: the MCP server's session (`mcp::server`, for `serve`), the post-check
//! catalog (`agent::catalog`) and the chip store of [`agent::AgentState`] (`apply-patch
//! chip`), the preview lifetime (`agent::preview::PREVIEW_TTL`), the text of a blocked
//! transaction (`txn::blocked_text`), terminal quoting (`quote`), the bounded patch readers of
//! `patch_file`, and the usage error type (`usage::UsageError`).

#![cfg_attr(docsrs, feature(doc_cfg))]

// `apply_patch::…` paths name this crate from inside it too: the command line (`cli`) was
// written against the public paths and keeps them; the crate-private items it uses besides
// are listed in the crate docs ("The command line and the public API").
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
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod parse;
pub mod patch_file;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod report;
mod root;
pub mod spelling;
pub mod splice;
pub mod structure;
pub mod text;
pub mod tree;
mod usage;

internal_mod! {
    content;
    #[cfg(feature = "git")]
    git;
    guard;
    hash;
    #[cfg(feature = "git")]
    merge;
    quote;
    risk;
    state;
    transform;
    txn;
}

mod pool;
mod release;
mod shell;

/// The disk transaction's entry points for a caller: undo the last applied patch, and recover
/// a transaction that a crash interrupted (SPEC §6). Every apply commits through the same
/// transaction and recovers first by itself; [`Change`](transaction::Change) is what a
/// [`Plan`](plan::Plan) would commit.
pub mod transaction {
    pub use crate::content::{Content, ContentHash};
    // The functions only: `txn::recover` and `txn::undo` are also crate-private modules,
    // which a `use` of the bare names would bring along.
    pub use crate::txn::recover::recover;
    pub use crate::txn::undo::undo;
    pub use crate::txn::{
        Blocked, Change, IoFailure, NewState, RecoverAction, RecoverReport, Restoring, Snapshot,
        Staleness, TxnError, TxnWarning, TxnWarningCode, UndoReport, Worker,
    };
}

#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod entry;

/// The `apply-patch` command as a function: arguments in, an [`Outcome`](command::Outcome)
/// (standard output, standard error, exit status) out. The binary only prints it.
#[cfg(feature = "cli")]
pub mod command {
    pub use crate::cli::{run, Env, Outcome};
}

#[cfg(feature = "cli")]
pub use entry::run_cli;
pub use error::{Error, ErrorCode};
pub use model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet, Rules};
