//! `memport serve`: a memory store answered over UMP's bindings. The operations
//! ([`operations`]) are the binding-independent part; [`mcp`] carries them as MCP tools on
//! stdio, [`http`] as UMP's HTTP binding with capability tokens ([`token`]).

pub mod brain;
pub mod brain_routes;
mod bundle_body;
pub mod http;
pub mod mcp;
pub mod operations;
pub mod token;

/// Now, in microseconds since the epoch: when a record is remembered, revised or forgotten,
/// and what a token's expiry is checked against.
pub fn now_micros() -> i64 {
    let elapsed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX)
}
