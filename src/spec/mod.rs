//! Format specifications that readers, writers and validators all look down to: file and
//! member names, how a file names its format (sniffers and the one detection entry point,
//! [`detect`]), and the id rules (UUID shapes, UMP URNs, AIMEM producer namespaces).
//!
//! Nothing here knows about sources, sinks, stages or validation; it depends only on the
//! foundation modules (errors, hashes).

pub mod aime;
pub mod aimem;
pub mod detect;
pub mod ids;
pub mod json_member;
pub mod mif;
pub mod pam;
pub mod ump;
