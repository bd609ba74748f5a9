//! `memport serve`: a memory store answered over UMP's bindings. The operations
//! ([`operations`]) are the binding-independent part; [`mcp`] carries them as MCP tools.

pub mod mcp;
pub mod operations;
