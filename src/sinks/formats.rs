//! The formats memport writes, one descriptor each ([`FORMATS`]): its name, the file name it
//! gets in an output folder, how it sits on disk, what it needs from the run, and how its sink
//! is built. Everything that handles outputs (paths, staging, checks before a run,
//! publishing, uploads) reads these descriptors instead of naming formats, so a new format is a
//! descriptor here, a sink, a spec and a validator.

use std::path::{Path, PathBuf};

use crate::error::{ConfigError, RunError};
use crate::sinks::{Sink, SinkSettings, aime, aimem, mif, pam, parquet, store, ump};
use crate::spec::pam::{CONVERSATIONS_FOLDER, EMBEDDINGS_FILE, STORE_FILE};

/// Formats memport writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// AIMEM bundle: one JSON object (`.aimem.json`).
    Aimem,
    /// AIMEM NDJSON stream: envelope line, then `_kind`-tagged records (`.aimem.ndjson`).
    AimemNdjson,
    /// Parquet dataset: a folder of tables for analysis.
    Parquet,
    /// PAM v1.0 store: a folder with `memory-store.json` and `conversations/`.
    Pam,
    /// AIME v1.0 document (`.aime.json`): messages with session metadata.
    Aime,
    /// MIF v2 document (`.mif.json`): messages and provider memories as memories.
    Mif,
    /// UMP 0.1 records as a JSON array (`.ump.json`).
    Ump,
    /// UMP 0.1 records, one per line.
    UmpNdjson,
    /// UMP 0.1 records, one `.ump.md` file each, in a folder.
    UmpMd,
    /// A memory store: the UMP records in one SQLite file that `memport serve` answers from.
    Store,
}

/// How an output sits on disk, which says how it is checked before a run and published after.
#[derive(Clone, Copy)]
pub enum Shape {
    /// One file, replaced whole.
    File,
    /// One file a run updates: built from a copy of the one in place (`seed`, which refuses a
    /// file memport may not replace), then replaced whole like a [`Shape::File`].
    UpdatedFile {
        /// Copies the target, when there is one, to the path the output is built at; returns
        /// what keeps the target's other writers off until the output replaces it.
        seed: fn(&Path, &Path) -> Result<Option<crate::store::WriteHold>, RunError>,
    },
    /// A folder of records that memport replaces whole (its manifest beside it says so).
    RecordsFolder,
    /// A folder whose own files memport replaces inside it, leaving anything else there (the
    /// folder may be a mount point): the format checks and publishes it itself.
    OwnFolder {
        /// The names the format writes at the folder's top level (any other file there is
        /// left alone).
        own_names: fn() -> Vec<&'static str>,
        /// Refuses a target memport may not replace.
        check_replaceable: fn(&Path) -> Result<(), RunError>,
        /// Moves the built folder's files into the target.
        publish: fn(&Path, &Path) -> Result<(), RunError>,
    },
}

impl Shape {
    /// Whether the output is a folder (then `-o` names that folder even for one format).
    pub fn is_folder(self) -> bool {
        !matches!(self, Shape::File | Shape::UpdatedFile { .. })
    }
}

/// What a sink needs from the run, declared by each format so the pipeline never names formats:
/// decoding pays only for what some output of the run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SinkNeeds {
    /// The sink signs its output when `--sign-key` is given.
    pub signs: bool,
    /// The sink writes each message's unmodeled provider fields.
    pub provider_fields: bool,
    /// The sink writes each message's PAM `content_hash` digest, computed while decoding.
    pub pam_digests: bool,
}

/// Builds a format's sink writing to a path.
pub type BuildSink = fn(&Path, &SinkSettings) -> Result<Box<dyn Sink>, RunError>;

/// Everything the run knows of one format.
pub struct FormatDescriptor {
    /// The format.
    pub format: OutputFormat,
    /// Its name on the command line, in pipeline files and in reports.
    pub name: &'static str,
    /// Its file (or folder) name when `-o` names a folder.
    pub default_file_name: &'static str,
    /// How it sits on disk.
    pub shape: Shape,
    /// What its sink needs from the run.
    pub needs: SinkNeeds,
    /// Builds its sink writing to a path.
    pub build: BuildSink,
}

/// Every format, in the order of [`OutputFormat`]'s variants.
pub const FORMATS: [FormatDescriptor; 10] = [
    FormatDescriptor {
        format: OutputFormat::Aimem,
        name: "aimem",
        default_file_name: "memory.aimem.json",
        shape: Shape::File,
        needs: SinkNeeds { signs: false, provider_fields: false, pam_digests: false },
        build: |path, settings| Ok(Box::new(aimem::AimemSink::create(path, aimem::Framing::Bundle, settings.aimem.clone())?)),
    },
    FormatDescriptor {
        format: OutputFormat::AimemNdjson,
        name: "aimem-ndjson",
        default_file_name: "memory.aimem.ndjson",
        shape: Shape::File,
        needs: SinkNeeds { signs: false, provider_fields: false, pam_digests: false },
        build: |path, settings| Ok(Box::new(aimem::AimemSink::create(path, aimem::Framing::Ndjson, settings.aimem.clone())?)),
    },
    FormatDescriptor {
        format: OutputFormat::Parquet,
        name: "parquet",
        default_file_name: "parquet",
        shape: Shape::OwnFolder {
            own_names: || parquet::schema::Table::every().map(parquet::schema::Table::name).collect(),
            check_replaceable: parquet::check_replaceable,
            publish: parquet::publish,
        },
        // The metadata column keeps the provider's fields; the `content_hash` column holds PAM
        // digests the sink does not compute itself.
        needs: SinkNeeds { signs: false, provider_fields: true, pam_digests: true },
        build: |path, settings| {
            let layout = parquet::ParquetLayout { partition_by_provider: settings.partition_by_provider, ..Default::default() };
            Ok(Box::new(parquet::ParquetSink::create(path, layout)?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::Pam,
        name: "pam",
        default_file_name: "pam",
        shape: Shape::OwnFolder {
            own_names: || vec![STORE_FILE, EMBEDDINGS_FILE, CONVERSATIONS_FOLDER],
            check_replaceable: pam::check_replaceable,
            publish: pam::publish,
        },
        // PAM keeps the provider's fields (`raw_metadata`) and is signed with `--sign-key`.
        needs: SinkNeeds { signs: true, provider_fields: true, pam_digests: false },
        build: |path, settings| {
            let pam_settings = pam::PamSettings {
                incremental: settings.incremental.clone(),
                owner_id: settings.owner_id.clone(),
                exported_at: settings.aimem.exported_at,
                sign_key: settings.sign_key.clone(),
            };
            Ok(Box::new(pam::PamSink::create(path, pam_settings)?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::Aime,
        name: "aime",
        default_file_name: "memory.aime.json",
        shape: Shape::File,
        needs: SinkNeeds { signs: false, provider_fields: false, pam_digests: false },
        build: |path, settings| Ok(Box::new(aime::AimeSink::create(path, settings.aimem.exported_at)?)),
    },
    FormatDescriptor {
        format: OutputFormat::Mif,
        name: "mif",
        default_file_name: "memory.mif.json",
        shape: Shape::File,
        needs: SinkNeeds { signs: false, provider_fields: false, pam_digests: false },
        build: |path, settings| {
            Ok(Box::new(mif::MifSink::create(path, settings.aimem.exported_at, &settings.owner_id, &settings.mif_vendor_extensions)?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::Ump,
        name: "ump",
        default_file_name: "memory.ump.json",
        shape: Shape::File,
        needs: SinkNeeds { signs: true, provider_fields: false, pam_digests: false },
        build: |path, settings| {
            Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Json, &settings.owner_id, settings.sign_key.clone())?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::UmpNdjson,
        name: "ump-ndjson",
        default_file_name: "memory.ump.ndjson",
        shape: Shape::File,
        needs: SinkNeeds { signs: true, provider_fields: false, pam_digests: false },
        build: |path, settings| {
            Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Ndjson, &settings.owner_id, settings.sign_key.clone())?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::UmpMd,
        name: "ump-md",
        default_file_name: "ump-md",
        shape: Shape::RecordsFolder,
        needs: SinkNeeds { signs: true, provider_fields: false, pam_digests: false },
        build: |path, settings| {
            Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Markdown, &settings.owner_id, settings.sign_key.clone())?))
        },
    },
    FormatDescriptor {
        format: OutputFormat::Store,
        name: "store",
        default_file_name: "memory.db",
        // Records remembered, revised or forgotten through `memport serve` since the last run
        // stay: a run loads its records into a copy of the store in place.
        shape: Shape::UpdatedFile { seed: store::seed_from_target },
        // Its records are UMP's, signed the same way with `--sign-key`.
        needs: SinkNeeds { signs: true, provider_fields: false, pam_digests: false },
        build: |path, settings| Ok(Box::new(store::StoreSink::create(path, &settings.owner_id, settings.sign_key.clone())?)),
    },
];

impl OutputFormat {
    /// Every format, with its name on the command line.
    pub const ALL: [(&'static str, OutputFormat); FORMATS.len()] = {
        let mut all = [("", OutputFormat::Aimem); FORMATS.len()];
        let mut index = 0;
        while index < FORMATS.len() {
            all[index] = (FORMATS[index].name, FORMATS[index].format);
            index += 1;
        }
        all
    };

    /// This format's descriptor.
    pub fn descriptor(self) -> &'static FormatDescriptor {
        // FORMATS lists the variants in order (a test checks it).
        &FORMATS[self as usize]
    }

    /// Parses a format name as given to `--to`.
    ///
    /// # Errors
    /// [`ConfigError::Option`] listing the formats that exist.
    pub fn parse(name: &str) -> Result<OutputFormat, ConfigError> {
        let wanted = name.trim().to_ascii_lowercase();
        FORMATS.iter().find(|descriptor| descriptor.name == wanted).map(|descriptor| descriptor.format).ok_or_else(|| ConfigError::Option {
            option: "--to".into(),
            reason: format!(
                "unknown format `{name}` (available: {})",
                FORMATS.iter().map(|descriptor| descriptor.name).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// File name used when `-o` names a folder.
    pub fn default_file_name(self) -> &'static str {
        self.descriptor().default_file_name
    }

    /// True for formats written as a folder (then `-o` names that folder even for one format).
    pub fn is_folder(self) -> bool {
        self.descriptor().shape.is_folder()
    }

    /// What this format's sink needs from the run beyond the canonical conversations.
    pub fn needs(self) -> SinkNeeds {
        self.descriptor().needs
    }
}

/// Works out each format's output path: `-o` is the file for one format and a folder for several.
///
/// # Errors
/// [`ConfigError::Option`] when no format is given.
pub fn output_paths(formats: &[OutputFormat], output: &Path) -> Result<Vec<(OutputFormat, PathBuf)>, ConfigError> {
    let in_database = crate::store::is_postgres_url(&output.to_string_lossy());
    match formats {
        [] => Err(ConfigError::Option { option: "--to".into(), reason: "name at least one format".into() }),
        [OutputFormat::Store] if in_database => Ok(vec![(OutputFormat::Store, output.to_owned())]),
        _ if in_database => Err(ConfigError::Option {
            option: "-o".into(),
            reason: "a PostgreSQL database holds a memory store only: give --to store alone, and write the other formats to files in another run".into(),
        }),
        [single] if single.is_folder() || !output.is_dir() => Ok(vec![(*single, output.to_owned())]),
        several => Ok(several.iter().map(|format| (*format, output.join(format.default_file_name()))).collect()),
    }
}

/// Builds the sink for `format` writing to `path`.
///
/// # Errors
/// I/O errors creating the output's temporary file.
pub fn build(format: OutputFormat, path: &Path, settings: &SinkSettings) -> Result<Box<dyn Sink>, RunError> {
    (format.descriptor().build)(path, settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_format_in_the_order_of_its_variants_with_its_own_names() {
        for (index, descriptor) in FORMATS.iter().enumerate() {
            assert_eq!(descriptor.format as usize, index, "{}", descriptor.name);
            assert_eq!(OutputFormat::parse(descriptor.name).ok(), Some(descriptor.format));
        }
        let mut file_names: Vec<&str> = FORMATS.iter().map(|descriptor| descriptor.default_file_name).collect();
        file_names.sort_unstable();
        file_names.dedup();
        assert_eq!(file_names.len(), FORMATS.len(), "two formats share a file name in an output folder");
    }
}
