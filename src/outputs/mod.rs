//! Where a run's outputs go, and how they get there, for every format alike (each format's
//! part is its descriptor, `crate::sinks::formats`): [`paths`] checks which paths a run may
//! write before anything is opened; [`guard`] locks each target for the length of the run,
//! removes the folders a failed run created and a killed run's leftovers; [`publish`] builds
//! each output in a staging folder and moves it into place once the run report is written.
//! Uploads to object storage are in `pipeline/remote_outputs.rs`, which knows the run's
//! options.

pub mod created_folders;
pub mod guard;
pub mod paths;
pub mod publish;
