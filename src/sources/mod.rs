//! Sources: what an input is, which provider made it (by content, never by name alone), and
//! the decoder that turns its framed elements into canonical conversations.
//!
//! - [`contract`]: the types every source hands the engine ([`InputPlan`], [`Stream`],
//!   [`Decoder`]); it knows no provider.
//! - [`registry`]: [`plan_input`] looks at an input once and hands it to the provider that made
//!   it.
//! - One folder per provider (`chatgpt`, `claude`, `copilot`, `gemini`, `grok`), each with its
//!   planning (`mod.rs`), serde model (`raw.rs`) and decoder (`normalize.rs`); [`formats`] reads
//!   memport's own formats back.
//! - Shared readers: [`container`] (zip, folder, file), [`detect`] (which provider, by content),
//!   [`json_array`] (the framer), [`regroup`] (activity records into conversations), [`tree`],
//!   [`lenient`], [`html_text`], [`provider_fields`], [`manifest`], [`read_ahead`].

pub mod chatgpt;
pub mod claude;
pub mod container;
pub mod contract;
pub mod copilot;
pub mod detect;
pub mod formats;
pub mod gemini;
pub mod grok;
pub mod html_text;
pub mod json_array;
pub mod json_walk;
pub mod lenient;
pub mod manifest;
pub mod provider_fields;
pub mod read_ahead;
pub mod registry;
pub mod regroup;
pub mod supplied;
pub mod tree;

pub use contract::{
    BranchPolicy, Carried, DecodeOptions, Decoded, Decoder, ElementReader, Elements, Framing, InputPlan, RecordReject, SourceOptions,
    Stream, TimeZone,
};
pub use detect::{Sniffed, sniff};
pub use registry::plan_input;
