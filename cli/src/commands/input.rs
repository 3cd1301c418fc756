//! Reading message logs: standard input or a file, split into lines of bounded length.

use super::failure::Failure;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The default `--max-line-bytes`: 4 MiB.
///
/// A line holds one message, and the services the dialects model cap messages well below this:
/// an SNS message is at most 256 KiB and an Event Grid event at most 1 MB. The vector shape can
/// inflate a message (attribute values and an SNS body are JSON strings inside the line, and
/// escaping makes text up to six times longer, so 1.5 MiB at worst), which still leaves more than
/// twice that as margin. The limit also bounds the memory a line needs. An SNS body (body scope)
/// or an Event Grid event is read from the line's bytes, keeping only what the filter reads, so
/// a line costs about its own size whatever it holds; the other dialects' vector shape is parsed
/// into a JSON tree, which costs a multiple of the line, small for text but up to about 75 times
/// for a line of tiny numbers or objects (4 MiB → about 300 MB). `--max-line-bytes` raises or
/// lowers the limit.
pub(super) const DEFAULT_MAX_LINE_BYTES: u64 = 4 << 20;

/// An opened input: its name for messages, its size when known, and its lines.
pub(super) struct Input {
    /// The file name, or `<stdin>`.
    pub(super) name: String,
    /// The size in bytes of a regular file (for a progress bar's ETA).
    pub(super) size: Option<u64>,
    /// The lines.
    pub(super) lines: Lines<BufReader<Box<dyn Read + Send>>>,
}

impl Input {
    /// Opens `path` (standard input when `None` or `-`), reading lines of at most `max` bytes.
    pub(super) fn open(path: Option<&Path>, max: u64) -> Result<Input, Failure> {
        let (name, size, reader): (String, Option<u64>, Box<dyn Read + Send>) = match path {
            Some(p) if !super::is_stdin(p) => {
                let file = std::fs::File::open(p)
                    .map_err(|e| Failure::error(format!("{}: cannot open: {e}", p.display())))?;
                let size = file
                    .metadata()
                    .ok()
                    .filter(std::fs::Metadata::is_file)
                    .map(|m| m.len());
                (p.display().to_string(), size, Box::new(file))
            }
            _ => ("<stdin>".to_owned(), None, Box::new(std::io::stdin())),
        };
        Ok(Input {
            name,
            size,
            lines: Lines::new(BufReader::with_capacity(1 << 16, reader), max),
        })
    }
}

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// A line within the limit: its bytes, and its terminator (`\n`, `\r\n`, or empty for a
    /// last line without one).
    Whole {
        content: &'a [u8],
        terminator: &'a [u8],
    },
    /// A line longer than the limit, read past without being held: its length in bytes, not
    /// counting its terminator.
    TooLong { bytes: u64 },
}

/// Splits input into lines, holding at most `max + 2` bytes of a line at a time.
pub(super) struct Lines<R> {
    reader: R,
    max: u64,
    line: Vec<u8>,
    /// Lines returned so far.
    number: u64,
}

impl<R> Lines<R> {
    /// The reader and the line limit, for reading the rest another way (in batches).
    pub(super) fn into_parts(self) -> (R, u64) {
        (self.reader, self.max)
    }
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(reader: R, max: u64) -> Lines<R> {
        Lines {
            reader,
            max,
            line: Vec::new(),
            number: 0,
        }
    }

    /// The number of lines returned so far (the 1-based number of the last one).
    pub(super) fn number(&self) -> u64 {
        self.number
    }

    /// The next line, or `None` at the end of the input.
    pub(super) fn next(&mut self) -> std::io::Result<Option<Line<'_>>> {
        self.line.clear();
        // The content, and a `\r\n` terminator, fit in `max + 2` bytes.
        let limit = self.max.saturating_add(2);
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        let terminated = self.line.last() == Some(&b'\n');
        if !terminated && read as u64 == limit {
            let last = self.line.last().copied();
            self.line.clear();
            let bytes = self.skip_line(read as u64, last)?;
            return Ok(Some(Line::TooLong { bytes }));
        }
        let content_len = self.line.len()
            - if self.line.ends_with(b"\r\n") {
                2
            } else {
                usize::from(terminated)
            };
        let (content, terminator) = self.line.split_at(content_len);
        if content.len() as u64 > self.max {
            return Ok(Some(Line::TooLong {
                bytes: content.len() as u64,
            }));
        }
        Ok(Some(Line::Whole {
            content,
            terminator,
        }))
    }

    /// Reads past the rest of a line, a buffer at a time, without keeping it. `bytes_before`
    /// bytes of it were read already, the last of them `last`; returns the line's length in
    /// bytes, not counting its terminator.
    fn skip_line(&mut self, bytes_before: u64, mut last: Option<u8>) -> std::io::Result<u64> {
        let mut bytes = bytes_before;
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                // The last line, without a terminator.
                return Ok(bytes);
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let taken = newline.unwrap_or(chunk.len());
            if let Some(&before) = chunk.get(..taken).and_then(<[u8]>::last) {
                last = Some(before);
            }
            bytes += taken as u64;
            let used = newline.map_or(taken, |n| n + 1);
            self.reader.consume(used);
            if newline.is_some() {
                return Ok(bytes - u64::from(last == Some(b'\r')));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Line, Lines};
    use std::io::BufReader;

    /// Every line of `input` with a limit of `max` bytes, read through a buffer of `buffer`
    /// bytes: `Ok((content, terminator))` or `Err(length)` for a line over the limit.
    fn split(input: &[u8], max: u64, buffer: usize) -> Vec<Result<(String, String), u64>> {
        let mut lines = Lines::new(BufReader::with_capacity(buffer, input), max);
        let mut out = Vec::new();
        while let Some(line) = lines.next().unwrap() {
            out.push(match line {
                Line::Whole {
                    content,
                    terminator,
                } => Ok((
                    String::from_utf8_lossy(content).into_owned(),
                    String::from_utf8_lossy(terminator).into_owned(),
                )),
                Line::TooLong { bytes } => Err(bytes),
            });
        }
        out
    }

    fn whole(content: &str, terminator: &str) -> Result<(String, String), u64> {
        Ok((content.to_owned(), terminator.to_owned()))
    }

    #[test]
    fn lines_keep_their_terminators_and_long_lines_are_measured() {
        let input = b"abcd\r\nabcde\nabcdefghij\r\n\r\nabc\nabcdefgh\r";
        // Every buffer size, so that line ends and `\r\n` pairs fall across chunk boundaries.
        for buffer in 1..=input.len() + 1 {
            assert_eq!(
                split(input, 4, buffer),
                [
                    whole("abcd", "\r\n"),
                    Err(5),
                    Err(10),
                    whole("", "\r\n"),
                    whole("abc", "\n"),
                    Err(9),
                ],
                "buffer {buffer}"
            );
            assert_eq!(
                split(input, 100, buffer),
                [
                    whole("abcd", "\r\n"),
                    whole("abcde", "\n"),
                    whole("abcdefghij", "\r\n"),
                    whole("", "\r\n"),
                    whole("abc", "\n"),
                    whole("abcdefgh\r", ""),
                ],
                "buffer {buffer}"
            );
        }
        assert_eq!(split(b"", 4, 8), []);
        assert_eq!(split(b"abcdef", 4, 8), [Err(6)]);
        assert_eq!(split(b"abcde\r\n\n", 4, 2), [Err(5), whole("", "\n")]);
    }

    #[test]
    fn a_skipped_line_is_not_held() {
        // 1 MB on one line, a limit of 10 bytes: the line buffer never grows past the limit.
        let mut input = vec![b'x'; 1 << 20];
        input.extend_from_slice(b"\nok\n");
        let mut lines = Lines::new(BufReader::with_capacity(4096, &input[..]), 10);
        assert_eq!(
            lines.next().unwrap(),
            Some(Line::TooLong { bytes: 1 << 20 })
        );
        assert!(lines.line.capacity() < 64, "{}", lines.line.capacity());
        assert_eq!(
            lines.next().unwrap(),
            Some(Line::Whole {
                content: b"ok",
                terminator: b"\n"
            })
        );
    }
}
