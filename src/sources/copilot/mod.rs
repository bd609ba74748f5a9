//! Microsoft Copilot activity CSVs (provider-formats.md §4): the layout is told apart by the
//! header row; rows are indexed and regrouped into conversations (by title and time
//! proximity, newest-first files reversed without sorting, so an answer stays after the
//! question it shares a timestamp with), then decoded like any other conversation element.

pub mod csv_rows;
pub mod normalize;

use std::fs::File;
use std::io::Read;
use std::sync::Arc;

use crate::error::RunError;
use crate::model::Origin;
use crate::sources::container::Entry;
use crate::sources::contract::{
    DecodeOptions, Decoded, Decoder, ElementReader, Elements, Framing, InputPlan, RecordReject, SourceOptions, Stream,
};
use crate::sources::regroup::{GroupKey, GroupedElements, Regrouper, push_binary_row};
use crate::timefmt::parse_wall_time;
use csv_rows::{RowScanner, cell};

/// Which Copilot CSV it is, by header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvLayout {
    /// `copilot-activity-history.csv`: `Conversation,Time,Author,Message`.
    ActivityHistory,
    /// `copilot-chat-activity.csv` and the Microsoft 365 apps file:
    /// `CreatedAt,MessageContent,Author,ChatName`.
    ChatActivity,
    /// `windows-apps-copilot-activity-history.csv`: `Timestamp,ClientApp,Prompt` (prompts only).
    WindowsApps,
}

impl CsvLayout {
    /// The layout whose header this is (a leading BOM is ignored).
    pub fn from_header(header: &str) -> Option<CsvLayout> {
        let header = header.trim_start_matches('\u{feff}');
        let names: Vec<String> = header.split(',').map(|name| name.trim().trim_matches('"').to_ascii_lowercase()).collect();
        let has = |wanted: &[&str]| wanted.iter().all(|name| names.iter().any(|present| present == name));
        if has(&["conversation", "time", "author", "message"]) {
            Some(CsvLayout::ActivityHistory)
        } else if has(&["createdat", "messagecontent", "author", "chatname"]) {
            Some(CsvLayout::ChatActivity)
        } else if has(&["timestamp", "clientapp", "prompt"]) {
            Some(CsvLayout::WindowsApps)
        } else {
            None
        }
    }

    /// For `inspect` and the report.
    pub fn describe(self) -> &'static str {
        match self {
            CsvLayout::ActivityHistory => "Copilot activity history CSV (Conversation,Time,Author,Message)",
            CsvLayout::ChatActivity => "Copilot chat activity CSV (CreatedAt,MessageContent,Author,ChatName)",
            CsvLayout::WindowsApps => "Copilot in Windows apps CSV (Timestamp,ClientApp,Prompt; prompts only)",
        }
    }

    /// Column names of (title, time, author, message); `None` where the layout has no column.
    fn columns(self) -> [Option<&'static str>; 4] {
        match self {
            CsvLayout::ActivityHistory => [Some("conversation"), Some("time"), Some("author"), Some("message")],
            CsvLayout::ChatActivity => [Some("chatname"), Some("createdat"), Some("author"), Some("messagecontent")],
            CsvLayout::WindowsApps => [Some("clientapp"), Some("timestamp"), None, Some("prompt")],
        }
    }
}

/// Reads a Copilot CSV and regroups its rows into conversations. Each element is the
/// header's column positions ([`encode_columns`]) followed by the conversation's rows as
/// [`RowFormat::Binary`](crate::sources::regroup::RowFormat) rows: CSV offset, line and the
/// raw row, which the decoder splits. Rows of an unpacked file are read back from it, so
/// nothing but the index is written.
///
/// # Errors
/// I/O errors reading the CSV or writing the spill files.
pub fn regroup(
    reader: Box<dyn Read + Send>,
    display: &str,
    layout: CsvLayout,
    options: &SourceOptions,
    input_file: Option<File>,
) -> Result<GroupedElements, RunError> {
    let mut scanner = RowScanner::new(reader);
    let mut regrouper = Regrouper::new(display, options.gap)?;
    if let Some(file) = input_file {
        regrouper = regrouper.read_back_from(file);
    }
    let mut fields = Vec::new();
    let mut columns: Option<Columns> = None;
    let mut spilled = Vec::new();
    while let Some(row) = scanner.next_row(&mut fields).map_err(|error| RunError::read(display, error))? {
        let Some(columns) = columns else {
            let found = header_positions(row.bytes, &fields, layout);
            regrouper.set_element_prefix(encode_columns(&found).to_vec());
            columns = Some(found);
            continue;
        };
        let cell_of = |column: Option<usize>| column.and_then(|index| fields.get(index)).map(|range| cell(&row.bytes[range.clone()]));
        let title = cell_of(columns[0]).map(|title| String::from_utf8_lossy(&title).into_owned()).unwrap_or_default();
        let time = cell_of(columns[1])
            .and_then(|time| parse_wall_time(&String::from_utf8_lossy(&time)))
            // A time out of range is rejected with its row by the decoder; here it only groups.
            .and_then(|time| time.to_utc(options.time_zone.offset_seconds).ok());
        let key = GroupKey::Title(title);
        if regrouper.reads_back() {
            regrouper.push_input_record(&key, time, (row.offset, row.line), row.bytes.len())?;
        } else {
            spilled.clear();
            push_binary_row(&mut spilled, row.offset, row.line, row.bytes);
            regrouper.push(&key, time, &spilled)?;
        }
    }
    regrouper.finish()
}

/// Where each of (title, time, author, message) sits in a file's header.
pub type Columns = [Option<usize>; 4];

/// Bytes of [`encode_columns`]' output.
pub const COLUMNS_BYTES: usize = 16;

/// The column positions as four little-endian `u32` (`u32::MAX` for an absent column).
pub fn encode_columns(columns: &Columns) -> [u8; COLUMNS_BYTES] {
    let mut bytes = [0u8; COLUMNS_BYTES];
    for (slot, column) in columns.iter().enumerate() {
        let value = column.and_then(|column| u32::try_from(column).ok()).unwrap_or(u32::MAX);
        bytes[slot * 4..slot * 4 + 4].copy_from_slice(&value.to_le_bytes());
    }
    bytes
}

/// Reads [`encode_columns`]' output back; `None` when `bytes` is too short.
pub fn decode_columns(bytes: &[u8]) -> Option<Columns> {
    let bytes = bytes.get(..COLUMNS_BYTES)?;
    let mut columns = [None; 4];
    for (slot, column) in columns.iter_mut().enumerate() {
        let mut four = [0u8; 4];
        four.copy_from_slice(&bytes[slot * 4..slot * 4 + 4]);
        let value = u32::from_le_bytes(four);
        *column = (value != u32::MAX).then_some(value as usize);
    }
    Some(columns)
}

/// Where each of (title, time, author, message) sits in this file's header.
fn header_positions(header: &[u8], fields: &[std::ops::Range<usize>], layout: CsvLayout) -> Columns {
    let names: Vec<String> = fields
        .iter()
        .map(|range| String::from_utf8_lossy(&cell(&header[range.clone()])).trim_start_matches('\u{feff}').trim().to_ascii_lowercase())
        .collect();
    layout.columns().map(|wanted| wanted.and_then(|wanted| names.iter().position(|name| name == wanted)))
}

/// Plans Copilot activity CSVs: each file regrouped into conversations, then decoded by its
/// layout.
pub fn plan(plan: &mut InputPlan, container_kind: &str, csv_files: Vec<(CsvLayout, Entry)>, options: &SourceOptions) {
    let mut layouts = Vec::new();
    for (layout, entry) in csv_files {
        layouts.push(layout.describe());
        let decoder = Arc::new(CopilotDecoder { layout, options: options.clone() });
        let framing = Framing::Own(Arc::new(CsvRegrouping { layout, options: options.clone() }));
        plan.streams.push(Stream::new(entry, framing, decoder));
    }
    layouts.dedup();
    plan.layout = format!("{container_kind}, {}", layouts.join(" + "));
}

/// The rows of a Copilot CSV, regrouped into conversations ([`regroup`]).
#[derive(Debug)]
struct CsvRegrouping {
    layout: CsvLayout,
    options: SourceOptions,
}

impl ElementReader for CsvRegrouping {
    fn open(&self, entry: &Entry, reader: Box<dyn Read + Send>, _pool: &rayon::ThreadPool) -> Result<Elements, RunError> {
        Ok(Elements::Grouped(regroup(reader, &entry.display, self.layout, &self.options, entry.reopen_on_disk())?))
    }
}

/// Decodes regrouped Copilot conversations.
pub struct CopilotDecoder {
    /// The CSV layout.
    pub layout: CsvLayout,
    /// How zoneless times are read.
    pub options: SourceOptions,
}

impl Decoder for CopilotDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        normalize::decode_conversation(bytes, origin, self, options)
    }

    fn fingerprint(&self, bytes: &[u8]) -> crate::hash::Fingerprint {
        crate::sources::regroup::rows_fingerprint(bytes, COLUMNS_BYTES)
    }
}
