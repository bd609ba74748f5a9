//! The one integration test binary, split into modules by what they cover.

// Test helpers unwrap: a failure there is a failed test, with the location in the message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod aime;
mod aimem;
mod aimem_peers;
mod brain_http;
mod chatgpt_edge_cases;
mod chatgpt_samples;
mod claude;
mod cli;
mod contract;
mod copilot;
mod engine;
mod evidence_quotes;
mod extraction;
mod format_inputs;
mod gemini;
mod grok;
mod http_binding;
mod malformed;
mod mcp_client;
mod merge;
mod mif;
mod object_storage;
mod pam;
mod parquet_dataset;
mod peer_validators;
mod pipelines;
mod regression;
mod spark;
mod store;
mod store_postgres;
mod sync;
mod sync_postgres;
mod ump;
