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
/// Largest element framed. A broken file (a stray quote, unbalanced brackets) would otherwise
/// pull the rest of the input into one element.
pub const MAX_ELEMENT_BYTES: usize = 1 << 30;

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
    /// An element grew past [`MAX_ELEMENT_BYTES`].
    #[error("byte {element_offset}: element {index} is larger than {MAX_ELEMENT_BYTES} bytes; the file is probably broken from here on")]
    ElementTooLarge {
        /// The element.
        index: u64,
        /// Where it starts.
        element_offset: u64,
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
            FrameError::TruncatedInElement { element_offset, .. } | FrameError::ElementTooLarge { element_offset, .. } => *element_offset,
            FrameError::TruncatedBetweenElements { end, .. } => *end,
            FrameError::Io(_) => 0,
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
        }
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
        if result.is_err() {
            self.state = State::Done;
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
            skipped?;
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
        loop {
            if self.position >= self.filled {
                if self.discarding {
                    bytes.truncate(element_start);
                } else {
                    bytes.extend_from_slice(&self.buffer[segment_start..self.filled]);
                }
                if bytes.len() - element_start > MAX_ELEMENT_BYTES {
                    return Err(FrameError::ElementTooLarge { index, element_offset: offset });
                }
                if !self.fill()? {
                    if is_scalar && bytes.len() > element_start {
                        // A scalar ends at end of input; the missing `]` is reported next.
                        return Ok((offset, index));
                    }
                    return Err(FrameError::TruncatedInElement { end: self.bytes_consumed(), index, element_offset: offset });
                }
                segment_start = self.position;
            }
            if is_scalar {
                let byte = self.buffer[self.position];
                if matches!(byte, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                    bytes.extend_from_slice(&self.buffer[segment_start..self.position]);
                    return Ok((offset, index));
                }
                self.position += 1;
                continue;
            }
            if in_string {
                if self.cross_string(&mut escaped) {
                    in_string = false;
                    if depth == 0 {
                        bytes.extend_from_slice(&self.buffer[segment_start..self.position]);
                        return Ok((offset, index));
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
                    continue;
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    self.position += distance + 1;
                    bytes.extend_from_slice(&self.buffer[segment_start..self.position]);
                    return Ok((offset, index));
                }
            }
            self.position += advanced;
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

fn describe(byte: u8) -> String {
    if byte.is_ascii_graphic() { format!("`{}`", byte as char) } else { format!("byte 0x{byte:02x}") }
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
}
