//! Frames a top-level JSON array into raw elements, one at a time, from any reader; also the
//! array under one member of a top-level object (Grok's `{"conversations":[…]}`) and a whole
//! document as a single element (small side files that are a bare object or an array).
//!
//! Only strings and brackets are tracked, so framing runs at memory speed and never holds more
//! than one element. Whether an element is valid JSON is the decoder's business: a broken
//! element is rejected on its own with its byte offset, and the elements around it go on.

mod members;

use std::io::{self, Read};

use memchr::memchr;

use crate::sources::read_ahead::ReadAhead;

/// How many bytes are read from the input at a time.
const READ_SIZE: usize = 1 << 20;
/// Largest file read whole as one record (a PAM conversation file, a small side file); its size
/// is known before it is read, so nothing is buffered to find out.
pub const MAX_ELEMENT_BYTES: usize = 1 << 30;
/// Largest element framed unless the reader says otherwise
/// ([`ArrayFramer::with_element_limit`], `--max-record-size`). A broken file (a stray quote,
/// unbalanced brackets) would otherwise pull the rest of the input into one element, and an
/// element is held in memory until it is found too large: this bounds that memory. A larger
/// element is walked to its end without keeping its bytes and rejected on its own. Real
/// conversations are far smaller (the largest seen in public exports is a few MB).
pub const DEFAULT_ELEMENT_LIMIT: u64 = 256 << 20;
/// Deepest nesting of arrays and objects in one element. The decoders' parsers recurse once a
/// level, and a 100,000-deep element overflowed a decode thread's stack; real exports nest about
/// 20 levels. A deeper element is walked to its end without keeping its bytes and rejected on
/// its own, before any parser sees it.
pub const MAX_DEPTH: u64 = 512;

/// Makes room in `bytes` for `more` bytes, doubling as `Vec` does but never past `ceiling`
/// (unless `more` itself needs it): with a 256 MiB limit, plain doubling let a buffer that
/// held 257 MiB take 512.
fn reserve_within(bytes: &mut Vec<u8>, more: usize, ceiling: usize) {
    let needed = bytes.len().saturating_add(more);
    if needed <= bytes.capacity() {
        return;
    }
    let target = bytes.capacity().saturating_mul(2).max(needed).min(ceiling.max(needed));
    bytes.reserve_exact(target - bytes.len());
}

/// One element of the array, as bytes, with where it was.
#[derive(Debug)]
pub struct RawElement {
    /// Byte offset of the element's first byte in the input.
    pub offset: u64,
    /// Position in the array, from 0.
    pub index: u64,
    /// The element's bytes, exactly as in the input.
    pub bytes: Vec<u8>,
}

/// Why framing stopped early. The elements before it were delivered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The input does not start with `[`.
    #[error("byte {offset}: expected a JSON array, found {found}")]
    NotAnArray {
        /// Where the unexpected byte is.
        offset: u64,
        /// What was found, described for people.
        found: String,
    },
    /// Something other than `,` or `]` follows an element.
    #[error("byte {offset}: expected `,` or `]` after element {index}, found {found}")]
    BadSeparator {
        /// Where the unexpected byte is.
        offset: u64,
        /// The element before it.
        index: u64,
        /// What was found.
        found: String,
    },
    /// The input ends inside the array.
    #[error("byte {end}: input ends inside element {index} (which starts at byte {element_offset}); the file looks truncated")]
    TruncatedInElement {
        /// Total bytes read.
        end: u64,
        /// The unfinished element.
        index: u64,
        /// Where it starts.
        element_offset: u64,
    },
    /// The input ends between elements, before the closing `]`.
    #[error("byte {end}: input ends after element {last_index} without the closing `]`; the file looks truncated")]
    TruncatedBetweenElements {
        /// Total bytes read.
        end: u64,
        /// Index of the next element that never came.
        last_index: u64,
    },
    /// An element grew past the framer's element limit; it was skipped and framing goes on.
    #[error(
        "byte {element_offset}: element {index} is larger than the limit of {limit} bytes ({length} bytes); it was skipped (--max-record-size raises the limit)"
    )]
    ElementTooLarge {
        /// The element.
        index: u64,
        /// Where it starts.
        element_offset: u64,
        /// Its length in bytes.
        length: u64,
        /// The limit it broke.
        limit: u64,
    },
    /// An element nests arrays and objects deeper than [`MAX_DEPTH`]; it was skipped and
    /// framing goes on.
    #[error(
        "byte {element_offset}: element {index} nests arrays and objects more than {MAX_DEPTH} levels deep ({depth} levels); it was skipped"
    )]
    ElementTooDeep {
        /// The element.
        index: u64,
        /// Where it starts.
        element_offset: u64,
        /// Its deepest nesting.
        depth: u64,
    },
    /// An element that starts like a number or a literal but is neither (`x"`, `tru`); it was
    /// skipped and framing goes on. Without this check such bytes reached whoever splices
    /// elements into an array of their own, which then no longer framed.
    #[error("byte {element_offset}: element {index} is not a JSON value (it starts with {found}); it was skipped")]
    NotAValue {
        /// The element.
        index: u64,
        /// Where it starts.
        element_offset: u64,
        /// What it starts with.
        found: String,
    },
    /// Something other than whitespace follows the array's closing `]` (two files joined
    /// with `cat`, say).
    #[error(
        "byte {offset}: more data follows the array that ended before it ({found}); it was not read — was a second file appended to this one?"
    )]
    TrailingData {
        /// Where the data starts.
        offset: u64,
        /// What was found.
        found: String,
    },
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl FrameError {
    /// Byte offset the problem refers to, for reject records.
    pub fn offset(&self) -> u64 {
        match self {
            FrameError::NotAnArray { offset, .. } | FrameError::BadSeparator { offset, .. } => *offset,
            FrameError::TruncatedInElement { element_offset, .. }
            | FrameError::ElementTooLarge { element_offset, .. }
            | FrameError::ElementTooDeep { element_offset, .. }
            | FrameError::NotAValue { element_offset, .. } => *element_offset,
            FrameError::TruncatedBetweenElements { end, .. } => *end,
            FrameError::TrailingData { offset, .. } => *offset,
            FrameError::Io(_) => 0,
        }
    }

    /// The index of the element the problem is in, where it is in one.
    pub fn element_index(&self) -> Option<u64> {
        match self {
            FrameError::TruncatedInElement { index, .. }
            | FrameError::ElementTooLarge { index, .. }
            | FrameError::ElementTooDeep { index, .. }
            | FrameError::NotAValue { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// Whether only the one element is lost: it was walked to its end and framing goes on
    /// with the next one (the caller rejects it and asks for more).
    pub fn is_element_only(&self) -> bool {
        matches!(self, FrameError::ElementTooLarge { .. } | FrameError::ElementTooDeep { .. } | FrameError::NotAValue { .. })
    }
}

/// Why the element being framed is skipped, found while it is walked.
#[derive(Debug, Clone, Copy)]
enum Oversized {
    /// Longer than the element limit, which it carries.
    Large(u64),
    /// Nested deeper than [`MAX_DEPTH`]; the deepest level seen so far.
    Deep(u64),
}

impl Oversized {
    /// The error for element `index` at `offset`, `length` bytes long.
    fn error(self, index: u64, offset: u64, length: u64) -> FrameError {
        match self {
            Oversized::Large(limit) => FrameError::ElementTooLarge { index, element_offset: offset, length, limit },
            Oversized::Deep(depth) => FrameError::ElementTooDeep { index, element_offset: offset, depth },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    Start,
    /// After `[` or `,`: an element or `]` comes next (`,]` is tolerated).
    ExpectElement,
    /// After an element: `,` or `]` comes next.
    ExpectSeparator,
    /// After the closing `]`.
    Done,
    /// Before a top-level value that is framed whole as element 0.
    WholeDocument,
    /// Before a top-level object whose member named by `member` holds the array to frame.
    SeekMember,
}

/// Pulls elements of a top-level JSON array out of a reader.
pub struct ArrayFramer<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    filled: usize,
    /// Input bytes before `buffer[0]`.
    buffer_offset: u64,
    state: State,
    next_index: u64,
    at_input_start: bool,
    /// For [`ArrayFramer::member_array`]: the names of the members leading to the array, from
    /// the top-level object down, as JSON string bytes with quotes.
    member: Vec<Vec<u8>>,
    /// The member's value is framed whole as one element instead of as an array.
    member_whole: bool,
    /// Skipped values are walked without keeping their bytes (a large member before the wanted
    /// one costs no memory).
    discarding: bool,
    /// For [`ArrayFramer::keeping_members`]: the raw keys (with quotes) of the members kept of
    /// each element; empty when elements are kept whole.
    kept_members: Vec<Vec<u8>>,
    /// For [`ArrayFramer::reading_ahead`]: where blocks come from instead of `reader`.
    ahead: Option<ReadAhead>,
    /// Largest element kept, in bytes ([`DEFAULT_ELEMENT_LIMIT`] unless set).
    element_limit: u64,
}

impl ArrayFramer<io::Empty> {
    /// Frames the array `reader` holds, as [`ArrayFramer::new`], with `reader` read on a thread
    /// of its own a few blocks ahead ([`ReadAhead`]).
    ///
    /// # Errors
    /// When the reading thread cannot be started.
    pub fn reading_ahead(reader: Box<dyn Read + Send>) -> io::Result<Self> {
        let mut framer = ArrayFramer::new(io::empty());
        framer.ahead = Some(ReadAhead::spawn(reader)?);
        Ok(framer)
    }
}

impl<R: Read> ArrayFramer<R> {
    /// Frames the array `reader` holds. A UTF-8 byte-order mark before `[` is skipped.
    pub fn new(reader: R) -> Self {
        ArrayFramer {
            reader,
            buffer: vec![0; READ_SIZE],
            position: 0,
            filled: 0,
            buffer_offset: 0,
            state: State::Start,
            next_index: 0,
            at_input_start: true,
            member: Vec::new(),
            member_whole: false,
            discarding: false,
            kept_members: Vec::new(),
            ahead: None,
            element_limit: DEFAULT_ELEMENT_LIMIT,
        }
    }

    /// The most `bytes` may need to hold an element that starts at `element_start` and stays
    /// within the limit: the limit, plus the one read that finds it too large.
    fn element_ceiling(&self, element_start: usize) -> usize {
        element_start.saturating_add(usize::try_from(self.element_limit).unwrap_or(usize::MAX)).saturating_add(READ_SIZE)
    }

    /// Skips (and reports) elements longer than `limit` bytes instead of
    /// [`DEFAULT_ELEMENT_LIMIT`]. Memory held by one element is bounded by the limit, so it is
    /// raised only for inputs known to hold such elements.
    #[must_use]
    pub fn with_element_limit(mut self, limit: u64) -> Self {
        self.element_limit = limit;
        self
    }

    /// Frames the elements of the array held by member `name` of the top-level object
    /// `reader` holds. Members before it are skipped; reading stops at the array's end. An
    /// object without the member frames no elements.
    pub fn member_array(reader: R, name: &str) -> Self {
        ArrayFramer::member_path(reader, &[name])
    }

    /// Frames the elements of the array at `path` of nested objects (`["extensions", "memport",
    /// "memories"]`). An object without it frames no elements.
    pub fn member_path(reader: R, path: &[&str]) -> Self {
        let mut framer = ArrayFramer::new(reader);
        framer.state = State::SeekMember;
        framer.member = path.iter().map(|name| format!("\"{name}\"").into_bytes()).collect();
        framer
    }

    /// Frames the value of member `name` of the top-level object, whatever its type, as one
    /// element (MIF's `vendor_extensions`). An object without it frames no element.
    pub fn member_value(reader: R, name: &str) -> Self {
        let mut framer = ArrayFramer::member_path(reader, &[name]);
        framer.member_whole = true;
        framer
    }

    /// Frames the whole top-level value `reader` holds as one element.
    pub fn whole_document(reader: R) -> Self {
        let mut framer = ArrayFramer::new(reader);
        framer.state = State::WholeDocument;
        framer
    }

    /// Total input bytes consumed so far.
    pub fn bytes_consumed(&self) -> u64 {
        self.buffer_offset + self.position as u64
    }

    /// Returns the next element, or `Ok(None)` after the closing `]`.
    ///
    /// # Errors
    /// A [`FrameError`] when the input is not an array, is truncated or cannot be read; calling
    /// again after an error returns `Ok(None)`.
    pub fn next_element(&mut self) -> Result<Option<RawElement>, FrameError> {
        let mut bytes = Vec::new();
        Ok(self.next_element_into(&mut bytes)?.map(|(offset, index)| RawElement { offset, index, bytes }))
    }

    /// Appends the next element's bytes to `out` and returns its offset and index, or
    /// `Ok(None)` after the closing `]`. Lets the caller pack many elements into one buffer.
    ///
    /// # Errors
    /// As [`ArrayFramer::next_element`]; `out` may then hold a partial element past its old end.
    pub fn next_element_into(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError> {
        let result = self.advance(out);
        if let Err(error) = &result {
            // An oversized array element was walked to its end: the next one can be framed.
            // Anything else leaves the framer lost.
            self.state = if error.is_element_only() && self.state == State::ExpectElement { State::ExpectSeparator } else { State::Done };
        }
        result
    }

    fn advance(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError> {
        loop {
            match self.state {
                State::Done => return Ok(None),
                State::WholeDocument => {
                    if self.skip_whitespace()?.is_none() {
                        return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: "an empty file".into() });
                    }
                    let element = self.take_value(out)?;
                    self.state = State::Done;
                    return Ok(Some(element));
                }
                State::SeekMember => {
                    if self.seek_member()? {
                        if self.member_whole {
                            let element = self.take_value(out)?;
                            self.state = State::Done;
                            return Ok(Some(element));
                        }
                        self.state = State::ExpectElement;
                    } else {
                        self.state = State::Done;
                        return Ok(None);
                    }
                }
                State::Start => {
                    let Some(byte) = self.skip_whitespace()? else {
                        return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: "end of input".into() });
                    };
                    if byte != b'[' {
                        return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: describe(byte) });
                    }
                    self.position += 1;
                    self.state = State::ExpectElement;
                }
                State::ExpectSeparator => {
                    let Some(byte) = self.skip_whitespace()? else {
                        return Err(FrameError::TruncatedBetweenElements { end: self.bytes_consumed(), last_index: self.next_index });
                    };
                    match byte {
                        b',' => {
                            self.position += 1;
                            self.state = State::ExpectElement;
                        }
                        b']' => {
                            self.position += 1;
                            self.state = State::Done;
                            self.check_nothing_follows()?;
                            return Ok(None);
                        }
                        other => {
                            return Err(FrameError::BadSeparator {
                                offset: self.bytes_consumed(),
                                index: self.next_index.saturating_sub(1),
                                found: describe(other),
                            });
                        }
                    }
                }
                State::ExpectElement => {
                    let Some(byte) = self.skip_whitespace()? else {
                        return Err(FrameError::TruncatedBetweenElements { end: self.bytes_consumed(), last_index: self.next_index });
                    };
                    if byte == b']' {
                        // `[]`, or a trailing comma before `]` (not JSON, but harmless).
                        self.position += 1;
                        self.state = State::Done;
                        self.check_nothing_follows()?;
                        return Ok(None);
                    }
                    let element = if self.kept_members.is_empty() { self.take_value(out)? } else { self.take_members(out)? };
                    self.state = State::ExpectSeparator;
                    return Ok(Some(element));
                }
            }
        }
    }

    /// Walks the members of the top-level object (and of the nested objects `self.member`
    /// names) down to the wanted member, and consumes its opening `[` (or, for
    /// [`ArrayFramer::member_value`], stops before its value). Returns false when there is no
    /// such member.
    fn seek_member(&mut self) -> Result<bool, FrameError> {
        let expect = |framer: &mut Self, what: &str| -> Result<u8, FrameError> {
            match framer.skip_whitespace()? {
                Some(byte) => Ok(byte),
                None => {
                    Err(FrameError::NotAnArray { offset: framer.bytes_consumed(), found: format!("end of input where {what} should be") })
                }
            }
        };
        if expect(self, "`{`")? != b'{' {
            let found = describe(self.buffer[self.position]);
            return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: format!("{found} instead of an object") });
        }
        self.position += 1;
        let mut depth = 0;
        let mut scratch = Vec::new();
        loop {
            match expect(self, "a member name")? {
                b'}' => return Ok(false),
                b'"' => {}
                other => return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: describe(other) }),
            }
            scratch.clear();
            self.take_value(&mut scratch)?;
            let is_wanted = self.member.get(depth).is_some_and(|name| scratch == *name);
            if expect(self, "`:`")? != b':' {
                return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: describe(self.buffer[self.position]) });
            }
            self.position += 1;
            let value_start = expect(self, "a value")?;
            let is_last = depth + 1 >= self.member.len();
            if is_wanted && is_last && self.member_whole {
                self.next_index = 0;
                return Ok(true);
            }
            if is_wanted && is_last && value_start == b'[' {
                self.position += 1;
                self.next_index = 0;
                return Ok(true);
            }
            if is_wanted && is_last && value_start != b'n' {
                // Present but not an array (`null` reads as no elements): without this it would
                // be skipped like any other member, and the run would find nothing, silently.
                let name = String::from_utf8_lossy(&scratch).into_owned();
                let found = match value_start {
                    b'{' => "an object".to_owned(),
                    b'"' => "a string".to_owned(),
                    other => describe(other),
                };
                return Err(FrameError::NotAnArray {
                    offset: self.bytes_consumed(),
                    found: format!("{found} as member {name} where an array should be"),
                });
            }
            if is_wanted && !is_last && value_start == b'{' {
                // Down into the nested object; members after it at this level are never reached.
                self.position += 1;
                depth += 1;
                continue;
            }
            // Another member (projects, media posts, a large array before the wanted one):
            // walked without keeping its bytes.
            scratch.clear();
            self.discarding = true;
            let skipped = self.take_value(&mut scratch);
            self.discarding = false;
            match skipped {
                // Too large or too deep, but not wanted: walked to its end all the same.
                Err(error) if error.is_element_only() => {}
                other => {
                    other?;
                }
            }
            match expect(self, "`,` or `}`")? {
                b',' => self.position += 1,
                b'}' => return Ok(false),
                other => return Err(FrameError::NotAnArray { offset: self.bytes_consumed(), found: describe(other) }),
            }
        }
    }

    /// Refills the buffer when it is used up. Returns false at the end of input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.position < self.filled {
            return Ok(true);
        }
        self.buffer_offset += self.filled as u64;
        self.position = 0;
        self.filled = 0;
        self.filled = match &mut self.ahead {
            Some(ahead) => ahead.next_block(&mut self.buffer)?,
            None => read_some(&mut self.reader, &mut self.buffer)?,
        };
        if self.filled == 0 {
            return Ok(false);
        }
        if self.at_input_start {
            self.at_input_start = false;
            // A byte-order mark that fits in the first read is skipped; JSON never starts with 0xEF.
            if self.buffer[..self.filled].starts_with(b"\xEF\xBB\xBF") {
                self.position = 3;
                return self.fill();
            }
        }
        Ok(true)
    }

    /// Skips JSON whitespace and returns the next byte without consuming it.
    fn skip_whitespace(&mut self) -> io::Result<Option<u8>> {
        loop {
            if !self.fill()? {
                return Ok(None);
            }
            while self.position < self.filled {
                let byte = self.buffer[self.position];
                if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(byte));
                }
                self.position += 1;
            }
        }
    }

    /// Appends one complete JSON value starting at the current (non-whitespace) byte to `bytes`.
    fn take_value(&mut self, bytes: &mut Vec<u8>) -> Result<(u64, u64), FrameError> {
        let offset = self.bytes_consumed();
        let index = self.next_index;
        self.next_index += 1;
        let element_start = bytes.len();
        let mut depth: u64 = 0;
        let mut in_string = false;
        let mut escaped = false;
        let mut segment_start = self.position;
        let first = self.buffer[self.position];
        let is_scalar = !matches!(first, b'{' | b'[' | b'"');
        // Set once the element is too large or too deep: from then on it is only walked.
        let mut oversized: Option<Oversized> = None;
        loop {
            if self.position >= self.filled {
                if oversized.is_none() && self.bytes_consumed() - offset > self.element_limit {
                    oversized = Some(Oversized::Large(self.element_limit));
                }
                if self.discarding || oversized.is_some() {
                    bytes.truncate(element_start);
                } else {
                    let segment = &self.buffer[segment_start..self.filled];
                    reserve_within(bytes, segment.len(), self.element_ceiling(element_start));
                    bytes.extend_from_slice(segment);
                }
                if !self.fill()? {
                    if is_scalar && bytes.len() > element_start {
                        // A scalar ends at end of input; the missing `]` is reported next. One
                        // that is no JSON value (`\xff"`) is not handed on as one: spliced
                        // into the arrays memport builds from elements, it would break them.
                        if !self.discarding && oversized.is_none() {
                            scalar_or_skipped(bytes, element_start, None, (offset, index))?;
                        }
                        return Ok((offset, index));
                    }
                    return Err(FrameError::TruncatedInElement { end: self.bytes_consumed(), index, element_offset: offset });
                }
                segment_start = self.position;
            }
            if is_scalar {
                let byte = self.buffer[self.position];
                if matches!(byte, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                    let framed = self.end_value(bytes, element_start, segment_start, oversized, (offset, index))?;
                    if !self.discarding {
                        scalar_or_skipped(bytes, element_start, Some(byte), (offset, index))?;
                    }
                    return Ok(framed);
                }
                self.position += 1;
                continue;
            }
            if in_string {
                if self.cross_string(&mut escaped) {
                    in_string = false;
                    if depth == 0 {
                        return self.end_value(bytes, element_start, segment_start, oversized, (offset, index));
                    }
                }
                continue;
            }
            // Outside strings only quotes and brackets matter. Bytes are classed by a table and
            // tested in order of frequency: a `match` on the byte compiled to a jump per byte.
            let window = &self.buffer[self.position..self.filled];
            let mut advanced = window.len();
            for (distance, &byte) in window.iter().enumerate() {
                let class = STRUCTURE[usize::from(byte)];
                if class == OTHER {
                    continue;
                }
                if class == QUOTE {
                    in_string = true;
                    advanced = distance + 1;
                    break;
                }
                if class == OPEN {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        match &mut oversized {
                            Some(Oversized::Deep(deepest)) => *deepest = (*deepest).max(depth),
                            Some(Oversized::Large(_)) => {}
                            None => oversized = Some(Oversized::Deep(depth)),
                        }
                    }
                    continue;
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    self.position += distance + 1;
                    return self.end_value(bytes, element_start, segment_start, oversized, (offset, index));
                }
            }
            self.position += advanced;
        }
    }

    /// Ends the element framed from `element_start` of `bytes`: appends its last segment (the
    /// buffer from `segment_start` to the current position), or, when it was `oversized`,
    /// drops what was kept of it and reports why.
    fn end_value(
        &mut self,
        bytes: &mut Vec<u8>,
        element_start: usize,
        segment_start: usize,
        oversized: Option<Oversized>,
        (offset, index): (u64, u64),
    ) -> Result<(u64, u64), FrameError> {
        // Lengths are checked at each read; an element that ends in the read it started in (or
        // the one after the last check) is measured here.
        let oversized = match oversized {
            None if self.bytes_consumed() - offset > self.element_limit => Some(Oversized::Large(self.element_limit)),
            other => other,
        };
        match oversized {
            None => {
                if self.discarding {
                    bytes.truncate(element_start);
                } else {
                    bytes.extend_from_slice(&self.buffer[segment_start..self.position]);
                }
                Ok((offset, index))
            }
            Some(reason) => {
                bytes.truncate(element_start);
                Err(reason.error(index, offset, self.bytes_consumed() - offset))
            }
        }
    }

    /// After the closing `]` of a top-level array: only whitespace may follow. Data after it
    /// (a second array appended with `cat`) would otherwise be dropped without a word.
    fn check_nothing_follows(&mut self) -> Result<(), FrameError> {
        if !self.member.is_empty() {
            // The rest of the enclosing object is not this framer's business.
            return Ok(());
        }
        match self.skip_whitespace()? {
            None => Ok(()),
            Some(byte) => Err(FrameError::TrailingData { offset: self.bytes_consumed(), found: describe(byte) }),
        }
    }
}

impl<R: Read> ArrayFramer<R> {
    /// Moves through the string being framed, up to and past its closing quote if the buffer
    /// holds it (then returns true), else to the end of the buffer. `escaped` carries an escape
    /// cut by the end of the buffer over to the next read.
    ///
    /// Only a quote can end a string: this jumps from quote to quote and counts the backslashes
    /// before each, instead of stopping at every escape (answer HTML is mostly `\u003c`
    /// escapes). Every scan starts at a byte that is not escaped.
    fn cross_string(&mut self, escaped: &mut bool) -> bool {
        if *escaped {
            *escaped = false;
            self.position += 1;
            return false;
        }
        let window = &self.buffer[self.position..self.filled];
        match find_quote(window) {
            None => {
                // An odd run of backslashes at the end escapes the first byte of the next read.
                *escaped = trailing_backslashes(window) % 2 == 1;
                self.position = self.filled;
                false
            }
            Some(distance) => {
                let quote_is_escaped = trailing_backslashes(&window[..distance]) % 2 == 1;
                self.position += distance + 1;
                !quote_is_escaped
            }
        }
    }
}

/// Bytes outside strings that framing ignores.
const OTHER: u8 = 0;
/// `"`.
const QUOTE: u8 = 1;
/// `{` or `[`.
const OPEN: u8 = 2;
/// `}` or `]`.
const CLOSE: u8 = 3;

/// [`OTHER`], [`QUOTE`], [`OPEN`] or [`CLOSE`] by byte.
const STRUCTURE: [u8; 256] = {
    let mut classes = [OTHER; 256];
    classes[b'"' as usize] = QUOTE;
    classes[b'{' as usize] = OPEN;
    classes[b'[' as usize] = OPEN;
    classes[b'}' as usize] = CLOSE;
    classes[b']' as usize] = CLOSE;
    classes
};

/// Position of the first `"` in `bytes`. Most strings in records are short (member names,
/// times, URLs) and a `memchr` call costs more than such a short search, so the first 16 bytes
/// are tested eight at a time in place (SWAR) before `memchr` takes over.
pub(crate) fn find_quote(bytes: &[u8]) -> Option<usize> {
    const NEAR: usize = 16;
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let Some(near) = bytes.get(..NEAR) else {
        return memchr(b'"', bytes);
    };
    for (word_index, word) in near.chunks_exact(8).enumerate() {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let quotes = u64::from_le_bytes(eight) ^ (ONES * u64::from(b'"'));
        // The classic has-zero-byte test: borrows can flag bytes above a real match, never
        // below it, so the lowest flagged byte is the first quote.
        let flagged = quotes.wrapping_sub(ONES) & !quotes & HIGH_BITS;
        if flagged != 0 {
            return Some(word_index * 8 + (flagged.trailing_zeros() / 8) as usize);
        }
    }
    memchr(b'"', &bytes[NEAR..]).map(|distance| NEAR + distance)
}

/// Reads what `reader` has into `buffer` (0 at the end), retrying when interrupted.
fn read_some(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buffer) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            result => return result,
        }
    }
}

/// How many backslashes `bytes` ends with.
pub(crate) fn trailing_backslashes(bytes: &[u8]) -> usize {
    bytes.iter().rev().take_while(|&&byte| byte == b'\\').count()
}

/// Checks the scalar element framed into `bytes[element_start..]`: one that is no JSON value
/// (`\xff"`, `tru`) is taken out of `bytes` and reported, so it never reaches whoever splices
/// elements into arrays of their own. `separator` is the byte that ended it, if any: what an
/// empty element (`[,1]`) is reported as starting with.
fn scalar_or_skipped(
    bytes: &mut Vec<u8>,
    element_start: usize,
    separator: Option<u8>,
    (element_offset, index): (u64, u64),
) -> Result<(), FrameError> {
    if is_json_scalar(&bytes[element_start..]) {
        return Ok(());
    }
    let found = bytes.get(element_start).copied().or(separator).map_or_else(|| "nothing".to_owned(), describe);
    bytes.truncate(element_start);
    Err(FrameError::NotAValue { index, element_offset, found })
}

/// Whether `bytes` is a JSON number, `true`, `false` or `null`.
fn is_json_scalar(bytes: &[u8]) -> bool {
    if matches!(bytes, b"true" | b"false" | b"null") {
        return true;
    }
    let digits = |bytes: &[u8]| bytes.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let mut rest = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let whole = digits(rest);
    if whole == 0 || (whole > 1 && rest[0] == b'0') {
        return false;
    }
    rest = &rest[whole..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let count = digits(fraction);
        if count == 0 {
            return false;
        }
        rest = &fraction[count..];
    }
    if let Some(exponent) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exponent = exponent.strip_prefix(b"+").or_else(|| exponent.strip_prefix(b"-")).unwrap_or(exponent);
        let count = digits(exponent);
        if count == 0 {
            return false;
        }
        rest = &exponent[count..];
    }
    rest.is_empty()
}

fn describe(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("`{}`", byte as char)
    } else if byte >= 0x80 {
        // Outside strings only ASCII belongs; a high byte there is usually broken UTF-8.
        format!("byte 0x{byte:02x}, which is not UTF-8 text here")
    } else {
        format!("byte 0x{byte:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame_all(input: &[u8]) -> (Vec<(u64, String)>, Option<String>) {
        let mut framer = ArrayFramer::new(input);
        let mut elements = Vec::new();
        loop {
            match framer.next_element() {
                Ok(Some(element)) => elements.push((element.offset, String::from_utf8(element.bytes).unwrap())),
                Ok(None) => return (elements, None),
                Err(error) => return (elements, Some(error.to_string())),
            }
        }
    }

    /// Up to 39 bytes, one in six special: quotes at every position around the eight-byte
    /// words and the 16-byte handover, with bytes that differ from `"` by one bit (the SWAR
    /// test's borrow cases) around them; the rest `x`.
    fn quote_search_bytes() -> impl Strategy<Value = Vec<u8>> {
        let special = prop::sample::select(vec![b'"', b'#', b'!', b'\\', 0xa2, 0x02, 0x23, b'a', 0]);
        prop::collection::vec(prop_oneof![5 => Just(b'x'), 1 => special], 0..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn quote_search_finds_the_first_quote_like_memchr(bytes in quote_search_bytes()) {
            prop_assert_eq!(find_quote(&bytes), memchr(b'"', &bytes), "{:?}", bytes);
        }
    }

    #[test]
    fn frames_objects_strings_and_scalars_with_offsets() {
        let input = br#" [ {"a":"x]}\"y","b":[1,{"c":2}]} , "s" ,12,null,[[]] ] "#;
        let (elements, error) = frame_all(input);
        assert_eq!(error, None);
        let texts: Vec<&str> = elements.iter().map(|(_, text)| text.as_str()).collect();
        assert_eq!(texts, [r#"{"a":"x]}\"y","b":[1,{"c":2}]}"#, r#""s""#, "12", "null", "[[]]"]);
        assert_eq!(elements[0].0, 3);
    }

    #[test]
    fn skips_bom_and_accepts_empty_array() {
        assert_eq!(frame_all(b"\xEF\xBB\xBF[]"), (vec![], None));
    }

    #[test]
    fn truncated_input_keeps_what_came_before() {
        let (elements, error) = frame_all(br#"[{"a":1},{"b":"#);
        assert_eq!(elements.len(), 1);
        assert!(error.unwrap().contains("inside element 1 (which starts at byte 9)"));
        let (elements, error) = frame_all(br#"[{"a":1},"#);
        assert_eq!(elements.len(), 1);
        assert!(error.unwrap().contains("truncated"));
    }

    #[test]
    fn not_an_array_is_reported() {
        let (_, error) = frame_all(br#"{"a":1}"#);
        assert!(error.unwrap().contains("expected a JSON array"));
    }

    #[test]
    fn frames_the_array_under_one_member() {
        let input = br#"{"projects":[{"x":"]"}],"conversations" : [ {"a":1}, {"b":[2]} ],"tasks":[]}"#;
        let mut framer = ArrayFramer::member_array(&input[..], "conversations");
        let first = framer.next_element().unwrap().unwrap();
        assert_eq!((first.index, first.bytes.as_slice()), (0, &br#"{"a":1}"#[..]));
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"b":[2]}"#);
        assert!(framer.next_element().unwrap().is_none());
        let mut missing = ArrayFramer::member_array(&br#"{"other":[1]}"#[..], "conversations");
        assert!(missing.next_element().unwrap().is_none());
    }

    #[test]
    fn frames_the_array_at_a_nested_path_and_a_member_value_whole() {
        let input = br#"{"messages":[1,2],"extensions":{"other":{"memories":[9]},"memport":{"n":"}","memories":[{"a":1},3]}}}"#;
        let mut framer = ArrayFramer::member_path(&input[..], &["extensions", "memport", "memories"]);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"a":1}"#);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, b"3");
        assert!(framer.next_element().unwrap().is_none());
        let mut value = ArrayFramer::member_value(&input[..], "extensions");
        assert!(value.next_element().unwrap().unwrap().bytes.starts_with(br#"{"other""#));
        let mut missing = ArrayFramer::member_path(&input[..], &["extensions", "nothing", "memories"]);
        assert!(missing.next_element().unwrap().is_none());
    }

    #[test]
    fn a_member_after_one_larger_than_a_read_is_found() {
        // The member before the wanted one spans several reads and is skipped without keeping
        // its bytes (a MIF document's `memories` before its `vendor_extensions`).
        let mut input = br#"{"memories":[""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * READ_SIZE));
        input.extend_from_slice(br#""],"producer":"p"}"#);
        let mut framer = ArrayFramer::member_value(&input[..], "producer");
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#""p""#);
    }

    #[test]
    fn frames_a_whole_document_as_one_element() {
        let mut framer = ArrayFramer::whole_document(&b" {\"a\":[1]} "[..]);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, b"{\"a\":[1]}");
        assert!(framer.next_element().unwrap().is_none());
    }

    /// Hands out its bytes a few at a time, so every position can fall at a read boundary.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let count = self.step.min(out.len()).min(self.bytes.len());
            out[..count].copy_from_slice(&self.bytes[..count]);
            self.bytes = &self.bytes[count..];
            Ok(count)
        }
    }

    #[test]
    fn escaped_quotes_and_backslash_runs_split_across_reads() {
        let input = br#"[{"a":"\\"},"\"","\\\"\\","x\\\\\"]y",{"b":"\u003c\\\\"}, "]\\\\\\\\"]"#;
        let (whole, error) = frame_all(input);
        assert_eq!(error, None, "{whole:?}");
        let texts: Vec<&str> = whole.iter().map(|(_, text)| text.as_str()).collect();
        assert_eq!(texts, [r#"{"a":"\\"}"#, r#""\"""#, r#""\\\"\\""#, r#""x\\\\\"]y""#, r#"{"b":"\u003c\\\\"}"#, r#""]\\\\\\\\""#]);
        for step in 1..8 {
            let mut framer = ArrayFramer::new(Trickle { bytes: input, step });
            let mut elements = Vec::new();
            while let Some(element) = framer.next_element().unwrap() {
                elements.push((element.offset, String::from_utf8(element.bytes).unwrap()));
            }
            assert_eq!(elements, whole, "reads of {step} bytes");
        }
    }

    #[test]
    fn elements_larger_than_the_read_buffer() {
        let big = "x".repeat(READ_SIZE * 2 + 17);
        let input = format!(r#"[{{"t":"{big}\\"}}, 1]"#);
        let (elements, error) = frame_all(input.as_bytes());
        assert_eq!(error, None);
        assert_eq!(elements.len(), 2);
        assert_eq!(elements[0].1.len(), big.len() + 10);
    }

    /// Guards the stack: a 100,000-deep element used to overflow a decode thread's stack.
    #[test]
    fn an_element_nested_too_deep_is_skipped_and_the_next_one_is_framed() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let input = format!(r#"[{{"a":1}},{{"m":{deep}}},{{"b":2}}]"#);
        let mut framer = ArrayFramer::new(input.as_bytes());
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"a":1}"#);
        let error = framer.next_element().unwrap_err();
        assert!(error.is_element_only());
        assert_eq!(error.element_index(), Some(1));
        assert!(error.to_string().contains("more than 512 levels deep (100001 levels)"), "{error}");
        let next = framer.next_element().unwrap().unwrap();
        assert_eq!((next.index, next.bytes.as_slice()), (2, &br#"{"b":2}"#[..]));
        assert!(framer.next_element().unwrap().is_none());
        // Exactly at the limit is still framed.
        let at_limit = format!("[{}{}]", "[".repeat(MAX_DEPTH as usize), "]".repeat(MAX_DEPTH as usize));
        let (elements, error) = frame_all(at_limit.as_bytes());
        assert_eq!((elements.len(), error), (1, None));
    }

    #[test]
    fn an_element_nested_too_deep_keeps_none_of_its_members() {
        let deep = format!("{}{}", "{\"x\":".repeat(600), "1".to_owned() + &"}".repeat(600));
        let input = format!(r#"[{{"time":"t","d":{deep}}},{{"time":"u"}}]"#);
        let mut framer = ArrayFramer::new(input.as_bytes()).keeping_members(&[b"\"time\""]);
        let mut kept = Vec::new();
        let error = framer.next_element_into(&mut kept).unwrap_err();
        assert!(matches!(error, FrameError::ElementTooDeep { depth: 601, .. }), "{error}");
        assert!(kept.is_empty());
        framer.next_element_into(&mut kept).unwrap().unwrap();
        assert_eq!(kept, br#"{"time":"u"}"#);
    }

    /// Guards against unbounded memory: an element over the limit is walked without keeping
    /// more than the limit of it, rejected alone, and the element after it still frames.
    #[test]
    fn an_element_over_the_limit_is_skipped_holding_at_most_the_limit() {
        let limit = 4u64 << 20;
        let big = format!(r#"{{"text":"{}"}}"#, "a".repeat(20 << 20));
        let input = format!(r#"[{{"n":1}},{big},{{"n":3}}]"#);
        for keeping_members in [false, true] {
            let mut framer = ArrayFramer::new(input.as_bytes()).with_element_limit(limit);
            if keeping_members {
                framer = framer.keeping_members(&[b"\"text\"", b"\"n\""]);
            }
            let mut kept = Vec::new();
            framer.next_element_into(&mut kept).unwrap().unwrap();
            kept.clear();
            let error = framer.next_element_into(&mut kept).unwrap_err();
            assert!(matches!(error, FrameError::ElementTooLarge { index: 1, limit: 4_194_304, .. }), "{error}");
            assert!(error.to_string().contains("--max-record-size"), "{error}");
            assert!(kept.is_empty());
            // Plain framing never grows its buffer past the limit and one read; kept members
            // are a few small fields in practice and grow as a `Vec` does.
            let most = if keeping_members { 4 * limit } else { limit + 2 * READ_SIZE as u64 };
            assert!(kept.capacity() as u64 <= most, "held {} bytes for a {limit}-byte limit", kept.capacity());
            framer.next_element_into(&mut kept).unwrap().unwrap();
            assert_eq!(kept, br#"{"n":3}"#);
            assert!(framer.next_element_into(&mut kept).unwrap().is_none());
        }
    }

    /// Guards the limit for elements shorter than one read: they were only measured when they
    /// crossed from one read into the next.
    #[test]
    fn an_element_over_the_limit_within_one_read_is_skipped_too() {
        let big = format!(r#"{{"text":"{}"}}"#, "a".repeat(5000));
        let input = format!(r#"[{{"n":1}},{big},{{"n":3}}]"#);
        for keeping_members in [false, true] {
            let mut framer = ArrayFramer::new(input.as_bytes()).with_element_limit(4096);
            if keeping_members {
                framer = framer.keeping_members(&[b"\"text\"", b"\"n\""]);
            }
            let mut kept = Vec::new();
            framer.next_element_into(&mut kept).unwrap().unwrap();
            kept.clear();
            let error = framer.next_element_into(&mut kept).unwrap_err();
            assert!(matches!(error, FrameError::ElementTooLarge { index: 1, limit: 4096, length: 5011, .. }), "{error}");
            framer.next_element_into(&mut kept).unwrap().unwrap();
            assert_eq!(kept, br#"{"n":3}"#);
        }
    }

    /// Guards against silent loss: `cat a.json b.json` used to read only the first array.
    #[test]
    fn data_after_the_closing_bracket_is_reported() {
        let (elements, error) = frame_all(b"[1,2]\n[3]");
        assert_eq!(elements.len(), 2);
        let error = error.unwrap();
        assert!(error.contains("byte 6: more data follows the array"), "{error}");
        let (_, clean) = frame_all(b"[1,2] \n\t");
        assert_eq!(clean, None);
    }

    /// Guards against silent loss: Grok's `conversations` as an object used to frame nothing.
    #[test]
    fn a_wanted_member_that_is_not_an_array_is_reported() {
        let mut framer = ArrayFramer::member_array(&br#"{"conversations":{"a":[1]}}"#[..], "conversations");
        let error = framer.next_element().unwrap_err().to_string();
        assert!(error.contains(r#"an object as member "conversations" where an array should be"#), "{error}");
        let mut null = ArrayFramer::member_array(&br#"{"conversations":null}"#[..], "conversations");
        assert!(null.next_element().unwrap().is_none());
    }

    /// Found by fuzzing: `[x", {…}]` framed `x"` as an element, and an array spliced from the
    /// elements no longer framed.
    #[test]
    fn an_element_that_is_no_json_value_is_skipped_and_the_next_one_is_framed() {
        let mut framer = ArrayFramer::new(&br#"[x", {"a":1}, -1.5e3, tru]"#[..]);
        let error = framer.next_element().unwrap_err();
        assert!(error.is_element_only() && error.to_string().contains("is not a JSON value (it starts with `x`)"), "{error}");
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"a":1}"#);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, b"-1.5e3");
        assert!(framer.next_element().unwrap_err().is_element_only());
        assert!(framer.next_element().unwrap().is_none());
        let (elements, error) = frame_all(b"[,1]");
        assert_eq!((elements.len(), error.unwrap().contains("starts with `,`")), (0, true));
        for scalar in [&b"0"[..], b"-0.5", b"12E+3", b"true", b"null"] {
            assert!(is_json_scalar(scalar), "{scalar:?}");
        }
        for not_scalar in [&b"01"[..], b"1.", b"-", b"1e", b"nul", b"x"] {
            assert!(!is_json_scalar(not_scalar), "{not_scalar:?}");
        }
    }

    /// Found by the `aime` fuzz target (`{"messages":[\xff"`): a scalar cut by the end of the
    /// input was handed on without being checked, and broke the group array memport splices
    /// from its records.
    #[test]
    fn a_scalar_cut_by_the_end_of_the_input_is_checked_like_any_other() {
        let mut framer = ArrayFramer::new(&b"[\xff\""[..]);
        let error = framer.next_element().unwrap_err();
        assert!(error.is_element_only() && error.to_string().contains("is not a JSON value"), "{error}");
        assert!(framer.next_element().is_err(), "the missing `]` is reported next");
        let mut framer = ArrayFramer::new(&b"[1, -2.5"[..]);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, b"1");
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, b"-2.5", "a JSON scalar at the end is still an element");
    }

    /// Found by fuzzing: a too-deep member before the wanted array stopped framing, and every
    /// conversation after it was lost.
    #[test]
    fn a_member_nested_too_deep_before_the_wanted_array_is_passed_over() {
        let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
        let input = format!(r#"{{"aaa":{deep},"conversations":[{{"a":1}},{{"b":2}}]}}"#);
        let mut framer = ArrayFramer::member_array(input.as_bytes(), "conversations");
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"a":1}"#);
        assert_eq!(framer.next_element().unwrap().unwrap().bytes, br#"{"b":2}"#);
        assert!(framer.next_element().unwrap().is_none());
    }

    /// Found by fuzzing: keeping members framed a broken scalar (`tru`) that the plain array
    /// skips, so the two disagreed on which elements there were.
    #[test]
    fn keeping_members_skips_the_elements_the_plain_array_skips() {
        let input = br#"[{"time":"t"}, tru, "s", [1], 7]"#;
        let mut framer = ArrayFramer::new(&input[..]).keeping_members(&[b"\"time\""]);
        let mut kept = Vec::new();
        assert_eq!(framer.next_element_into(&mut kept).unwrap(), Some((1, 0)));
        assert!(framer.next_element_into(&mut kept).unwrap_err().is_element_only());
        for _ in 0..3 {
            assert!(framer.next_element_into(&mut kept).unwrap().is_some());
        }
        assert!(framer.next_element_into(&mut kept).unwrap().is_none());
        assert_eq!(kept, br#"{"time":"t"}{}{}{}"#);
    }
}
