//! `memport serve`: a memory store answered over UMP's bindings. The operations
//! ([`operations`]) are the binding-independent part; [`mcp`] carries them as MCP tools on
//! stdio, [`http`] as UMP's HTTP binding with capability tokens ([`token`]).

pub mod http;
pub mod mcp;
pub mod operations;
pub mod token;
