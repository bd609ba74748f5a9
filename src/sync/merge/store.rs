//! The two `memory-store.json` files a merge reads (what each one is, checked before anything
//! is written) and the merged one it writes, laid out byte for byte as the PAM sink lays out a
//! full store: the delta's root members in their order, `export_type: "full"`, no
//! `base_export_id`, `since` or `signature`, and the computed index, relations, memories and
//! integrity each on a line of its own.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::RunError;
use crate::jcs::write_string;
use crate::spec::pam::STORE_FILE;

use super::malformed;
use super::memories::{MergedMemories, integrity, integrity_block, write_canonical_lines};
use super::raw_object::{Member, RawObject, write_lines};

/// The root members read item by item: a merge computes them.
const LISTS: [&str; 3] = ["conversations_index", "relations", "memories"];
/// The root members a merge computes, in the order the sink writes them (last, each on a line
/// of its own).
const COMPUTED: [&str; 4] = ["conversations_index", "relations", "memories", "integrity"];
/// The delta's root members the merged store leaves out: it is a full export, and unsigned.
const DROPPED: [&str; 3] = ["base_export_id", "since", "signature"];

/// One store's `memory-store.json`, read.
pub(super) struct Store {
    /// The store folder.
    pub(super) folder: PathBuf,
    /// Its root members; the lists are taken out by the merge.
    pub(super) root: RawObject,
}

impl Store {
    /// Reads the store in `folder`.
    ///
    /// # Errors
    /// [`crate::error::ConfigError::Input`] when it is not a PAM store, I/O errors reading it.
    pub(super) fn read(folder: &Path) -> Result<Store, RunError> {
        let path = folder.join(STORE_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(malformed(
                    folder,
                    "no memory-store.json here, so it is not a PAM store; name the folder that holds memory-store.json and conversations/"
                        .to_owned(),
                ));
            }
            Err(error) => return Err(RunError::read(path.display().to_string(), error)),
        };
        let root = RawObject::parse(&bytes, &LISTS)
            .map_err(|error| malformed(folder, format!("memory-store.json is not a PAM store memport can read: {error}")))?;
        match root.string("schema").as_deref() {
            Some("portable-ai-memory") => Ok(Store { folder: folder.to_owned(), root }),
            Some(other) => {
                Err(malformed(folder, format!("memory-store.json is not a PAM store: its schema is `{other}`, not `portable-ai-memory`")))
            }
            None => Err(malformed(folder, "memory-store.json names no schema, so it is not a PAM store".to_owned())),
        }
    }

    /// `export_type` (`full` when absent, the schema's default).
    pub(super) fn export_type(&self) -> String {
        self.root.string("export_type").unwrap_or_else(|| "full".to_owned())
    }

    /// `export_id`.
    pub(super) fn export_id(&self) -> Option<String> {
        self.root.string("export_id")
    }

    /// `base_export_id`.
    pub(super) fn base_export_id(&self) -> Option<String> {
        self.root.string("base_export_id")
    }

    /// `owner.id`.
    pub(super) fn owner_id(&self) -> Option<String> {
        self.root.value("owner").and_then(|owner| owner.get("id").and_then(Value::as_str).map(str::to_owned))
    }

    /// Whether the store carries a signature (PAM §18).
    pub(super) fn is_signed(&self) -> bool {
        self.root.raw("signature").is_some_and(|raw| raw.get() != "null")
    }

    /// Takes the items of the list member `key` (none when it is missing).
    pub(super) fn take(&mut self, key: &str) -> Vec<Box<RawValue>> {
        self.root.take_items(key)
    }
}

/// What the merge computed, for the merged `memory-store.json`.
pub(super) struct Parts<'a> {
    /// The merged `conversations_index` entries, in order.
    pub(super) index: &'a [Box<RawValue>],
    /// The merged memories and relations.
    pub(super) memories: &'a MergedMemories,
}

/// Writes the merged `memory-store.json` at `path`: see the module docs.
///
/// # Errors
/// I/O errors writing it.
pub(super) fn write_store(path: &Path, delta_root: &RawObject, parts: &Parts<'_>) -> io::Result<()> {
    let (digest, total) = integrity(&parts.memories.memories);
    let integrity_member = integrity_block(&digest, total);
    let mut root = RootWriter { out: BufWriter::with_capacity(1 << 20, File::create(path)?), members: 0, on_lines: false };
    root.out.write_all(b"{")?;
    let mut computed: Vec<&str> = Vec::with_capacity(COMPUTED.len());
    for (key, member) in &delta_root.members {
        let key = key.as_str();
        if DROPPED.contains(&key) || computed.contains(&key) {
            continue;
        }
        if COMPUTED.contains(&key) {
            root.key(key, true)?;
            write_computed(&mut root.out, key, parts, &integrity_member)?;
            computed.push(key);
            continue;
        }
        root.key(key, false)?;
        match member {
            _ if key == "export_type" => root.out.write_all(b"\"full\"")?,
            Member::Raw(raw) => root.out.write_all(raw.get().as_bytes())?,
            Member::Items(items) => {
                let mut lines = Vec::new();
                write_lines(&mut lines, items.iter().map(|item| item.get().as_bytes()));
                root.out.write_all(&lines)?;
            }
        }
    }
    for key in COMPUTED {
        if !computed.contains(&key) {
            root.key(key, true)?;
            write_computed(&mut root.out, key, parts, &integrity_member)?;
        }
    }
    root.out.write_all(b"}\n")?;
    root.out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok(())
}

/// Writes the root's members with the sink's separators: `,` between the short members of the
/// head, `,\n` before the long ones and everything after them.
struct RootWriter<W: Write> {
    out: W,
    members: usize,
    on_lines: bool,
}

impl<W: Write> RootWriter<W> {
    /// Starts member `key`; `long` for the index, relations, memories and integrity.
    fn key(&mut self, key: &str, long: bool) -> io::Result<()> {
        self.on_lines |= long;
        if self.members > 0 {
            self.out.write_all(if self.on_lines { b",\n" } else { b"," })?;
        }
        self.members += 1;
        let mut name = Vec::with_capacity(key.len() + 3);
        write_string(&mut name, key);
        name.push(b':');
        self.out.write_all(&name)
    }
}

/// Writes the value of the computed member `key`.
fn write_computed(out: &mut impl Write, key: &str, parts: &Parts<'_>, integrity_member: &[u8]) -> io::Result<()> {
    match key {
        "conversations_index" => {
            out.write_all(b"[")?;
            for (position, entry) in parts.index.iter().enumerate() {
                out.write_all(if position == 0 { b"\n" } else { b",\n" })?;
                out.write_all(entry.get().as_bytes())?;
            }
            out.write_all(b"]")
        }
        "relations" => write_canonical_lines(out, &parts.memories.relations),
        "memories" => write_canonical_lines(out, &parts.memories.memories),
        _ => out.write_all(integrity_member),
    }
}
