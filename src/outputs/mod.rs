//! Where a run's outputs go, and how they get there, for every format alike (each format's
//! part is its descriptor, `crate::sinks::formats`): [`paths`] checks which paths a run may
//! write before anything is opened; [`guard`] locks each target for the length of the run,
//! removes the folders a failed run created and a killed run's leftovers; [`publish`] builds
//! each output in a staging folder and moves it into place once the run report is written;
//! [`upload`] puts a run's outputs on object storage (written locally, uploaded, published). A
//! sync's outputs: [`parquet_runs`] grows its Parquet dataset by a partition per run, and
//! [`sync_upload`] uploads a run before the state commits it.

pub mod created_folders;
pub mod guard;
pub mod parquet_runs;
pub mod paths;
pub mod publish;
pub mod sync_upload;
pub mod upload;
