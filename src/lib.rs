//! memport: streaming ETL from AI-assistant data exports to portable memory formats.
//!
//! The data flows in one direction:
//!
//! ```text
//! sources (framing, sequential I/O) → decode + normalize (rayon, parallel)
//!   → ordered stages (dedup) → sinks (one thread each, same order)
//! ```
//!
//! - [`sources`] find what an input is (zip, folder, file), detect the provider by content and
//!   frame the top-level JSON array into one raw element per conversation.
//! - Each source's decoder turns a raw element into the canonical [`model::Conversation`].
//! - [`stages`] run in input order on one thread (dedup keeps the first copy).
//! - [`sinks`] write the formats; several sinks share one read.
//! - [`pipeline`] wires it together, counts every record in the run report and writes rejects.
//! - [`validate`] checks files a sink (or anybody else) wrote.

#![forbid(unsafe_code)]

pub mod ascii_word;
pub mod buffers;
pub mod cli;
pub mod error;
pub mod hash;
pub mod jcs;
pub mod json_embed;
pub mod key_set;
pub mod model;
pub mod normalize;
pub mod outputs;
pub mod pipeline;
pub mod remote;
pub mod serve;
pub mod signing;
pub mod sinks;
pub mod sources;
pub mod spec;
pub mod stages;
pub mod store;
pub mod sync;
pub mod timefmt;
pub mod validate;

pub use error::{ConfigError, RunError};
pub use pipeline::{Options, run};
