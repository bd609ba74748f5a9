//! Framing that keeps only some members of each element: where an element is read back from
//! the input later and only a few of its top-level members are needed now (the time and
//! conversation URL of a Gemini activity record), they are picked out while the element is
//! framed. Nothing else of the element is copied, and nothing walks it a second time.

use std::io::Read;

use super::{ArrayFramer, FrameError, MAX_DEPTH, OPEN, OTHER, Oversized, QUOTE};

/// `,`, which ends a member of the element (other classes as in [`super::STRUCTURE`]).
const COMMA: u8 = 4;

/// [`super::STRUCTURE`] with [`COMMA`].
const MEMBER_STRUCTURE: [u8; 256] = {
    let mut classes = super::STRUCTURE;
    classes[b',' as usize] = COMMA;
    classes
};

impl<R: Read> ArrayFramer<R> {
    /// Makes [`ArrayFramer::next_element_into`] append, instead of each element's bytes, an
    /// object of the element's top-level members whose raw key (with its quotes, as written)
    /// is one of `keys`: `{"time":"…","details":[…]}`, each member exactly as in the input,
    /// `{}` when the element has none of them or is no object. The element's length is
    /// [`ArrayFramer::bytes_consumed`] after it less its offset.
    ///
    /// Members are told apart by their place alone, not checked: an element that is not valid
    /// JSON after a kept member still keeps it. Whether the element is valid is for whoever
    /// reads it back.
    pub fn keeping_members(mut self, keys: &[&[u8]]) -> Self {
        self.kept_members = keys.iter().map(|key| key.to_vec()).collect();
        self
    }

    /// Frames one element from the current (non-whitespace) byte, appending its kept members
    /// to `out` (see [`ArrayFramer::keeping_members`]).
    pub(super) fn take_members(&mut self, out: &mut Vec<u8>) -> Result<(u64, u64), FrameError> {
        if self.buffer[self.position] != b'{' {
            // No object, so no members: framed as usual without keeping its bytes, except a
            // number or literal, kept to be checked as the plain array checks it (so both frame
            // and skip the same elements).
            let mut scratch = Vec::new();
            self.discarding = matches!(self.buffer[self.position], b'[' | b'"');
            let framed = self.take_value(&mut scratch);
            self.discarding = false;
            if framed.is_ok() {
                out.extend_from_slice(b"{}");
            }
            return framed;
        }
        let offset = self.bytes_consumed();
        let index = self.next_index;
        self.next_index += 1;
        let object_start = out.len();
        out.push(b'{');
        let mut depth: u64 = 0;
        let mut in_string = false;
        let mut escaped = false;
        // At depth 1 (the element's own members), whether the next string is a key.
        let mut expect_key = false;
        let mut in_key = false;
        // While a member is being kept: where it starts in `out` (with the `,` before it) and
        // where its key starts; `segment_start` is then its first byte in the buffer not yet
        // copied.
        let mut kept_from: Option<usize> = None;
        let mut key_from = 0;
        let mut segment_start = self.position;
        // Set once the element is too large or too deep: from then on nothing more is kept.
        let mut oversized: Option<Oversized> = None;
        loop {
            if self.position >= self.filled {
                if oversized.is_none() && self.bytes_consumed() - offset > self.element_limit {
                    oversized = Some(Oversized::Large(self.element_limit));
                    kept_from = None;
                }
                if kept_from.is_some() {
                    out.extend_from_slice(&self.buffer[segment_start..self.filled]);
                }
                if !self.fill()? {
                    return Err(FrameError::TruncatedInElement { end: self.bytes_consumed(), index, element_offset: offset });
                }
                segment_start = self.position;
            }
            if in_string {
                if self.cross_string(&mut escaped) {
                    in_string = false;
                    if in_key {
                        in_key = false;
                        out.extend_from_slice(&self.buffer[segment_start..self.position]);
                        segment_start = self.position;
                        let key = &out[key_from..];
                        if !self.kept_members.iter().any(|kept| kept.as_slice() == key)
                            && let Some(from) = kept_from.take()
                        {
                            out.truncate(from);
                        }
                    }
                }
                continue;
            }
            let window = &self.buffer[self.position..self.filled];
            let mut advanced = window.len();
            for (distance, &byte) in window.iter().enumerate() {
                let class = MEMBER_STRUCTURE[usize::from(byte)];
                if class == OTHER {
                    continue;
                }
                if class == QUOTE {
                    if depth == 1 && expect_key && oversized.is_none() {
                        // A member's key: kept from here until it turns out not to be wanted.
                        expect_key = false;
                        in_key = true;
                        kept_from = Some(out.len());
                        if out.len() > object_start + 1 {
                            out.push(b',');
                        }
                        key_from = out.len();
                        segment_start = self.position + distance;
                    }
                    in_string = true;
                    advanced = distance + 1;
                    break;
                }
                if class == COMMA {
                    if depth == 1 {
                        if kept_from.take().is_some() {
                            out.extend_from_slice(&self.buffer[segment_start..self.position + distance]);
                        }
                        expect_key = true;
                    }
                    continue;
                }
                if class == OPEN {
                    depth += 1;
                    expect_key = depth == 1;
                    if depth > MAX_DEPTH {
                        match &mut oversized {
                            Some(Oversized::Deep(deepest)) => *deepest = (*deepest).max(depth),
                            Some(Oversized::Large(_)) => {}
                            None => {
                                oversized = Some(Oversized::Deep(depth));
                                kept_from = None;
                            }
                        }
                    }
                    continue;
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    // An element that ends in the read it started in is measured here.
                    if oversized.is_none() && self.bytes_consumed() + distance as u64 + 1 - offset > self.element_limit {
                        oversized = Some(Oversized::Large(self.element_limit));
                    }
                    if let Some(reason) = oversized {
                        self.position += distance + 1;
                        out.truncate(object_start);
                        return Err(reason.error(index, offset, self.bytes_consumed() - offset));
                    }
                    if kept_from.take().is_some() {
                        out.extend_from_slice(&self.buffer[segment_start..self.position + distance]);
                    }
                    out.push(b'}');
                    self.position += distance + 1;
                    return Ok((offset, index));
                }
            }
            self.position += advanced;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&[u8]; 3] = [b"\"time\"", b"\"titleUrl\"", b"\"details\""];

    /// Each element's kept members and length, framed through a reader that hands out
    /// `chunk` bytes at a time (so members straddle refills).
    fn kept(input: &[u8], chunk: usize) -> (Vec<(String, u64)>, Option<String>) {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
                let count = self.1.min(buffer.len()).min(self.0.len());
                buffer[..count].copy_from_slice(&self.0[..count]);
                self.0 = &self.0[count..];
                Ok(count)
            }
        }
        let mut framer = ArrayFramer::new(Trickle(input, chunk)).keeping_members(&KEYS);
        let mut found = Vec::new();
        loop {
            let mut members = Vec::new();
            match framer.next_element_into(&mut members) {
                Ok(Some((offset, _))) => {
                    found.push((String::from_utf8(members).unwrap(), framer.bytes_consumed() - offset));
                }
                Ok(None) => return (found, None),
                Err(error) => return (found, Some(error.to_string())),
            }
        }
    }

    #[test]
    fn keeps_only_the_named_top_level_members_as_written() {
        let input = br#"[ {"title":"say \"time\":1","time" : "t1" ,"details":[{"time":"inner","url":"u,}"}],"html":"\u003cp\u003e\\"},
            {"titleUrl":"https://gemini.google.com/app/x"}, [1,{"time":2}], "time", {}, {"time":12,"time":13} ]"#;
        for chunk in [1, 2, 3, 7, 1 << 20] {
            let (found, error) = kept(input, chunk);
            assert_eq!(error, None, "chunk {chunk}");
            let members: Vec<&str> = found.iter().map(|(members, _)| members.as_str()).collect();
            assert_eq!(
                members,
                [
                    r#"{"time" : "t1" ,"details":[{"time":"inner","url":"u,}"}]}"#,
                    r#"{"titleUrl":"https://gemini.google.com/app/x"}"#,
                    "{}",
                    "{}",
                    "{}",
                    r#"{"time":12,"time":13}"#,
                ],
                "chunk {chunk}"
            );
            let lengths: Vec<u64> = found.iter().map(|&(_, length)| length).collect();
            let whole = ArrayFramer::new(&input[..]);
            let mut whole = whole;
            let mut expected = Vec::new();
            while let Some(element) = whole.next_element().unwrap() {
                expected.push(element.bytes.len() as u64);
            }
            assert_eq!(lengths, expected, "chunk {chunk}");
        }
    }

    #[test]
    fn broken_input_reports_like_whole_framing() {
        for input in [&br#"[{"time":"x","a":"unclosed}]"#[..], br#"[{"time":1},{"details":[1,2"#, br#"[{"time":1} {"a":2}]"#] {
            let (_, error) = kept(input, 3);
            let mut whole = ArrayFramer::new(input);
            let expected = loop {
                match whole.next_element() {
                    Ok(Some(_)) => continue,
                    Ok(None) => break None,
                    Err(error) => break Some(error.to_string()),
                }
            };
            assert_eq!(error, expected, "{}", String::from_utf8_lossy(input));
            assert!(error.is_some());
        }
    }
}
