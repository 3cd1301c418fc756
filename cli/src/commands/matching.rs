//! `filtervm match`: one message per line; a bad line is reported and skipped.

use super::Failure;
use super::output::{Stderr, Stdout};
use filtervm_compiler::{Evaluator, Filter, message_from_line};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::ExitCode;

/// The default `--max-line-bytes`: 4 MiB.
///
/// A line holds one message, and the services the dialects model cap messages well below this:
/// an SNS message is at most 256 KiB and an Event Grid event at most 1 MB. The vector shape can
/// inflate a message (attribute values and an SNS body are JSON strings inside the line, and
/// escaping makes text up to six times longer, so 1.5 MiB at worst), which still leaves more than
/// twice that as margin. The limit also bounds the memory `match` needs: reading a line costs a
/// multiple of its size, small for text but up to about 75 times for a line of tiny numbers or
/// objects (each becomes a JSON tree node), so a 4 MiB line peaks near 300 MB and a 16 MiB line
/// near 1.2 GB. `--max-line-bytes` raises or lowers the limit.
pub(super) const DEFAULT_MAX_LINE_BYTES: u64 = 4 << 20;

/// What `match` prints for each line.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mode {
    /// Pass matching lines through unchanged instead of printing a verdict per line.
    pub(super) only_matching: bool,
    /// The longest line (not counting its `\n` or `\r\n`) read as a message.
    pub(super) max_line_bytes: u64,
}

/// Matches every line of `input` (stdin when `None` or `-`). Exit 0, or 2 when some line could
/// not be read as a message (every other line is still processed). A closed standard output
/// ends the run early and quietly.
pub(super) fn run(filter: &Filter, input: Option<&Path>, mode: Mode) -> Result<ExitCode, Failure> {
    let (name, reader): (String, Box<dyn Read>) = match input {
        None => ("<stdin>".to_owned(), Box::new(std::io::stdin())),
        Some(p) if p.as_os_str() == "-" => ("<stdin>".to_owned(), Box::new(std::io::stdin())),
        Some(p) => {
            let file = std::fs::File::open(p)
                .map_err(|e| Failure::usage(format!("{}: cannot open: {e}", p.display())))?;
            (p.display().to_string(), Box::new(file))
        }
    };
    let mut lines = Lines::new(
        BufReader::with_capacity(1 << 16, reader),
        mode.max_line_bytes,
    );
    let mut out = Stdout::new();
    let mut evaluator = Evaluator::new();
    let mut number = 0usize;
    let mut bad = 0usize;
    loop {
        let line = lines.next().map_err(|e| Failure {
            message: format!("{name}: read error after line {number}: {e}"),
            code: 2,
        })?;
        let (content, terminator) = match line {
            None => break,
            Some(Line::Whole {
                content,
                terminator,
            }) => (content, terminator),
            Some(Line::TooLong { bytes }) => {
                number += 1;
                bad += 1;
                out.flush()?;
                writeln!(
                    Stderr,
                    "{name}:{number}: the line is {bytes} bytes, longer than the maximum of {} \
                     bytes (--max-line-bytes); skipped",
                    mode.max_line_bytes
                );
                if !mode.only_matching {
                    writeln!(out, "error")?;
                }
                continue;
            }
        };
        number += 1;
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let verdict = std::str::from_utf8(content)
            .map_err(|e| format!("not UTF-8: {e}"))
            .and_then(|text| {
                message_from_line(filter.dialect(), filter.options(), text)
                    .map_err(|e| e.to_string())
            })
            .and_then(|message| {
                evaluator
                    .try_matches(filter, &message)
                    .map_err(|e| e.to_string())
            });
        match verdict {
            // The line as read, with its own `\n` or `\r\n`; a last line without one gets `\n`
            // (like grep).
            Ok(true) if mode.only_matching => {
                out.write_bytes(content)?;
                out.write_bytes(if terminator.is_empty() {
                    b"\n"
                } else {
                    terminator
                })?;
            }
            Ok(false) if mode.only_matching => {}
            Ok(m) => writeln!(out, "{}", if m { "match" } else { "no-match" })?,
            Err(why) => {
                bad += 1;
                out.flush()?;
                writeln!(Stderr, "{name}:{number}: {why}");
                if !mode.only_matching {
                    writeln!(out, "error")?;
                }
            }
        }
        if out.is_closed() {
            break;
        }
    }
    out.flush()?;
    if bad > 0 {
        if !out.is_closed() {
            writeln!(
                Stderr,
                "{name}: {bad} of {number} lines could not be read as messages"
            );
        }
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
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
struct Lines<R> {
    reader: R,
    max: u64,
    line: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, max: u64) -> Lines<R> {
        Lines {
            reader,
            max,
            line: Vec::new(),
        }
    }

    /// The next line, or `None` at the end of the input.
    fn next(&mut self) -> std::io::Result<Option<Line<'_>>> {
        self.line.clear();
        // The content, and a `\r\n` terminator, fit in `max + 2` bytes.
        let limit = self.max.saturating_add(2);
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Ok(None);
        }
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
            self.reader.consume(newline.map_or(taken, |n| n + 1));
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
