//! Microsoft Copilot activity CSVs (provider-formats.md §4): the layout is told apart by the
//! header row; rows are spilled and regrouped into conversations (by title and time
//! proximity, newest-first files reversed without sorting, so an answer stays after the
//! question it shares a timestamp with), then decoded like any other conversation element.

pub mod normalize;

use std::io::Read;

use serde::{Deserialize, Serialize};

use crate::error::RunError;
use crate::model::{Micros, Origin};
use crate::sources::regroup::{GroupKey, Regrouper};
use crate::sources::{DecodeOptions, Decoded, Decoder, RecordReject, SourceOptions};
use crate::timefmt::parse_wall_time;

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

/// One CSV row as spilled for regrouping.
#[derive(Debug, Serialize, Deserialize)]
pub struct Row {
    /// Byte offset of the row in the CSV.
    pub offset: u64,
    /// Line number of the row (the header is line 1).
    pub line: u64,
    /// Conversation title (or client app).
    pub title: String,
    /// The time as written.
    pub time: String,
    /// Author as written (`Human`, `AI`, `user`, `bot`, …); empty for prompt-only layouts.
    pub author: String,
    /// Message text.
    pub text: String,
    /// Why the row cannot be used, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// True when cells were not valid UTF-8 and were decoded lossily.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
}

/// Reads a Copilot CSV and regroups its rows into a JSON array of conversations.
///
/// # Errors
/// I/O errors reading the CSV or writing the spill files.
pub fn regroup(
    reader: Box<dyn Read + Send>,
    display: &str,
    layout: CsvLayout,
    options: &SourceOptions,
) -> Result<Box<dyn Read + Send>, RunError> {
    let mut csv = csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(1 << 20).from_reader(reader);
    let mut regrouper = Regrouper::new(display, options.gap)?;
    let mut record = csv::ByteRecord::new();
    let mut positions: Option<[Option<usize>; 4]> = None;
    let mut json = Vec::with_capacity(4096);
    loop {
        let offset = csv.position().byte();
        let line = csv.position().line();
        match csv.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(error) => match error.kind() {
                csv::ErrorKind::Io(_) => return Err(RunError::read(display, std::io::Error::from(error))),
                // A malformed row becomes a reject of its own; the rest goes on.
                _ => {
                    let row = Row {
                        offset,
                        line,
                        title: String::new(),
                        time: String::new(),
                        author: String::new(),
                        text: String::new(),
                        problem: Some(format!("unreadable CSV row: {error}")),
                        lossy: false,
                    };
                    push_row(&mut regrouper, &row, None, &mut json)?;
                    continue;
                }
            },
        }
        let Some(columns) = positions else {
            positions = Some(header_positions(&record, layout));
            continue;
        };
        let cell = |column: Option<usize>| -> (String, bool) {
            match column.and_then(|index| record.get(index)) {
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => (text.to_owned(), false),
                    Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
                },
                None => (String::new(), false),
            }
        };
        let (title, lossy_title) = cell(columns[0]);
        let (time, lossy_time) = cell(columns[1]);
        let (author, lossy_author) = cell(columns[2]);
        let (text, lossy_text) = cell(columns[3]);
        let required = columns
            .iter()
            .enumerate()
            .filter(|(slot, _)| *slot != 2 || layout != CsvLayout::WindowsApps)
            .filter_map(|(_, column)| *column)
            .max()
            .unwrap_or(0);
        let problem =
            if record.len() <= required { Some(format!("row has {} cells, the header has {}", record.len(), required + 1)) } else { None };
        let parsed_time = parse_wall_time(&time).map(|time| time.to_utc(options.time_zone.offset_seconds));
        let row = Row { offset, line, title, time, author, text, problem, lossy: lossy_title || lossy_time || lossy_author || lossy_text };
        push_row(&mut regrouper, &row, parsed_time, &mut json)?;
    }
    regrouper.finish()
}

fn push_row(regrouper: &mut Regrouper, row: &Row, time: Option<Micros>, json: &mut Vec<u8>) -> Result<(), RunError> {
    json.clear();
    serde_json::to_writer(&mut *json, row).map_err(|error| RunError::Internal(format!("cannot serialize a CSV row: {error}")))?;
    regrouper.push(&GroupKey::Title(row.title.clone()), time, json)
}

/// Where each of (title, time, author, message) sits in this file's header.
fn header_positions(header: &csv::ByteRecord, layout: CsvLayout) -> [Option<usize>; 4] {
    let names: Vec<String> =
        header.iter().map(|name| String::from_utf8_lossy(name).trim_start_matches('\u{feff}').trim().to_ascii_lowercase()).collect();
    layout.columns().map(|wanted| wanted.and_then(|wanted| names.iter().position(|name| name == wanted)))
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
}
