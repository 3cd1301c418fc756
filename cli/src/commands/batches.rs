//! Message logs in batches, judged on worker threads, results in input order (`match`, `route`).
//!
//! [`BatchReader`] reads the input in large chunks straight into a batch's buffer and splits it
//! on newlines: a batch is the buffer and the place of each line in it, so a line is copied once,
//! from the input into the buffer (only the unfinished line at the end of a chunk is moved to the
//! next batch's buffer). A line longer than `--max-line-bytes` is never held: once an unfinished
//! line reaches the limit, the rest of it is read past a chunk at a time and only its length is
//! kept ([`Line::TooLong`]), as [`super::input::Lines`] does for one line at a time.
//!
//! [`judge_in_order`] hands the batches to worker threads, each with its own state (an
//! evaluator, a router), and gives their results back in input order. At most two batches per
//! worker are in flight, and spent buffers are reused, so memory stays bounded whatever the
//! input; with one thread the batches are judged on the calling thread.

use super::failure::Failure;
use super::input::{Input, Line};
use std::collections::BTreeMap;
use std::io::{self, BufReader, Read};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

impl Input {
    /// The input read in batches of lines instead ([`BatchReader`]), with the same limit.
    pub(super) fn batches(self) -> BatchReader<BufReader<Box<dyn Read + Send>>> {
        let (reader, max) = self.lines.into_parts();
        BatchReader::new(reader, max)
    }
}

/// Bytes read from the input per batch (a line longer than this, within the limit, makes its
/// batch longer).
const CHUNK: usize = 256 << 10;

/// Bytes read from the input. Its vector is zeroed once when it grows and then reused (a spent
/// batch's buffer is read into again), so reading a chunk costs no clearing of it.
#[derive(Debug, Default)]
struct Buffer {
    bytes: Vec<u8>,
    /// How many of `bytes` were read.
    filled: usize,
}

impl Buffer {
    /// The bytes read.
    fn filled(&self) -> &[u8] {
        self.bytes.get(..self.filled).unwrap_or_default()
    }

    /// How many bytes were read.
    fn len(&self) -> usize {
        self.filled
    }

    /// Forgets the bytes read from `len` on.
    fn truncate(&mut self, len: usize) {
        self.filled = self.filled.min(len);
    }

    /// Appends `bytes`.
    fn extend(&mut self, bytes: &[u8]) {
        let end = self.filled + bytes.len();
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        if let Some(to) = self.bytes.get_mut(self.filled..end) {
            to.copy_from_slice(bytes);
        }
        self.filled = end;
    }

    /// Reads up to `chunk` more bytes from `reader`; returns how many (0 at its end).
    fn read_from(&mut self, reader: &mut impl Read, chunk: usize) -> io::Result<usize> {
        let end = self.filled + chunk;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        loop {
            match reader.read(self.bytes.get_mut(self.filled..end).unwrap_or_default()) {
                Ok(n) => {
                    self.filled += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Where a line is in its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `text[start..content_end]` is the content, `text[content_end..end]` the terminator.
    Whole {
        start: usize,
        content_end: usize,
        end: usize,
    },
    /// A line over the limit, read past: its length in bytes, not counting its terminator.
    TooLong { bytes: u64 },
}

/// Consecutive lines of the input.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// The batch's place in the input (0, 1, 2, ...).
    pub(super) index: usize,
    /// The lines' bytes as read, terminators included.
    text: Buffer,
    /// Each line's number (1-based, in the whole input) and place.
    places: Vec<(u64, Place)>,
    /// Input bytes read up to the end of this batch.
    pub(super) consumed: u64,
}

impl Batch {
    /// Whether the batch holds no line (the end of the input).
    pub(super) fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// The lines with their numbers, in input order (blank lines included).
    pub(super) fn lines(&self) -> impl Iterator<Item = (u64, Line<'_>)> {
        self.places.iter().map(|&(number, place)| {
            let line = match place {
                Place::Whole {
                    start,
                    content_end,
                    end,
                } => Line::Whole {
                    content: self
                        .text
                        .filled()
                        .get(start..content_end)
                        .unwrap_or_default(),
                    terminator: self.text.filled().get(content_end..end).unwrap_or_default(),
                },
                Place::TooLong { bytes } => Line::TooLong { bytes },
            };
            (number, line)
        })
    }
}

/// A line being read past because it is over the limit.
#[derive(Debug, Clone, Copy)]
struct Skipping {
    /// Its number.
    number: u64,
    /// Bytes of it read so far.
    bytes: u64,
    /// Whether the last of them is `\r` (not counted when `\n` follows).
    ends_in_cr: bool,
}

/// Reads an input in batches of whole lines (see the module documentation).
pub(super) struct BatchReader<R> {
    reader: R,
    /// The longest line content kept, in bytes.
    max: u64,
    /// The unfinished line at the end of the last chunk, the start of the next batch.
    carry: Vec<u8>,
    /// The over-long line being read past, if any.
    skipping: Option<Skipping>,
    /// Spent buffers, reused for new batches.
    spare: Vec<Buffer>,
    /// Lines found so far.
    number: u64,
    /// Bytes read so far.
    consumed: u64,
    /// Whether the input has ended.
    ended: bool,
    /// The next batch's index.
    next_index: usize,
}

impl<R: Read> BatchReader<R> {
    /// Batches of `reader`'s lines, keeping lines of at most `max` bytes.
    pub(super) fn new(reader: R, max: u64) -> BatchReader<R> {
        BatchReader {
            reader,
            max,
            carry: Vec::new(),
            skipping: None,
            spare: Vec::new(),
            number: 0,
            consumed: 0,
            ended: false,
            next_index: 0,
        }
    }

    /// Gives a spent batch's buffer back, to be read into again.
    pub(super) fn recycle(&mut self, batch: Batch) {
        // Keep a few: enough for the batches in flight, not a whole input's worth.
        if self.spare.len() < 16 && batch.text.bytes.capacity() <= 2 * CHUNK {
            self.spare.push(batch.text);
        }
    }

    /// The next batch: at least one line, unless the input has ended (then empty).
    pub(super) fn next_batch(&mut self) -> io::Result<Batch> {
        let mut text = self.spare.pop().unwrap_or_default();
        text.truncate(0);
        text.extend(&self.carry);
        self.carry.clear();
        let mut places = Vec::new();
        // Where the unfinished line starts, and how far it was searched for a newline.
        let (mut start, mut searched) = (0usize, 0usize);
        loop {
            if let Some(mut skip) = self.skipping {
                // Read past the over-long line: nothing before its newline is kept.
                match memchr::memchr(b'\n', text.filled().get(start..).unwrap_or_default()) {
                    Some(at) => {
                        let newline = start + at;
                        let before = text.filled().get(start..newline).unwrap_or_default();
                        skip.bytes += before.len() as u64;
                        if let Some(&last) = before.last() {
                            skip.ends_in_cr = last == b'\r';
                        }
                        let bytes = skip.bytes - u64::from(skip.ends_in_cr);
                        places.push((skip.number, Place::TooLong { bytes }));
                        self.skipping = None;
                        start = newline + 1;
                        searched = start;
                    }
                    None => {
                        let rest = text.filled().get(start..).unwrap_or_default();
                        skip.bytes += rest.len() as u64;
                        if let Some(&last) = rest.last() {
                            skip.ends_in_cr = last == b'\r';
                        }
                        text.truncate(start);
                        searched = start;
                        if self.ended {
                            places.push((skip.number, Place::TooLong { bytes: skip.bytes }));
                            self.skipping = None;
                            break;
                        }
                        self.skipping = Some(skip);
                        // The lines before it need not wait for its end.
                        if !places.is_empty() {
                            break;
                        }
                    }
                }
            } else {
                self.split(text.filled(), &mut start, &mut searched, &mut places);
                let unfinished = (text.len() - start) as u64;
                // A line whose unfinished part holds `max + 2` bytes has more than `max` bytes
                // of content whatever ends it (`\r\n` is two bytes): read past it.
                if unfinished >= self.max.saturating_add(2) {
                    self.number += 1;
                    self.skipping = Some(Skipping {
                        number: self.number,
                        bytes: unfinished,
                        ends_in_cr: text.filled().last() == Some(&b'\r'),
                    });
                    text.truncate(start);
                    searched = start;
                    continue;
                }
                if self.ended {
                    if unfinished > 0 {
                        // The last line, without a terminator.
                        self.number += 1;
                        places.push((self.number, self.place(start, text.len(), text.len())));
                        start = text.len();
                    }
                    break;
                }
                if !places.is_empty() && text.len() >= CHUNK {
                    break;
                }
            }
            if self.ended {
                break;
            }
            let read = text.read_from(&mut self.reader, CHUNK)?;
            self.consumed += read as u64;
            self.ended = read == 0;
        }
        // The unfinished line starts the next batch.
        if let Some(rest) = text.filled().get(start..) {
            self.carry.extend_from_slice(rest);
        }
        text.truncate(start);
        let index = self.next_index;
        self.next_index += 1;
        Ok(Batch {
            index,
            text,
            places,
            consumed: self.consumed - self.carry.len() as u64,
        })
    }

    /// Finds the whole lines in `text` from `start` (searched for a newline up to `searched`).
    fn split(
        &mut self,
        text: &[u8],
        start: &mut usize,
        searched: &mut usize,
        places: &mut Vec<(u64, Place)>,
    ) {
        let from = (*searched).max(*start);
        for at in memchr::memchr_iter(b'\n', text.get(from..).unwrap_or_default()) {
            let newline = from + at;
            let content_end = if newline > *start && text.get(newline - 1) == Some(&b'\r') {
                newline - 1
            } else {
                newline
            };
            self.number += 1;
            places.push((self.number, self.place(*start, content_end, newline + 1)));
            *start = newline + 1;
        }
        *searched = text.len();
    }

    /// The place of a line read whole: too long when its content is over the limit.
    fn place(&self, start: usize, content_end: usize, end: usize) -> Place {
        let bytes = (content_end - start) as u64;
        if bytes > self.max {
            Place::TooLong { bytes }
        } else {
            Place::Whole {
                start,
                content_end,
                end,
            }
        }
    }
}

/// The number of worker threads: `threads` when given, else the available parallelism.
pub(super) fn threads(threads: Option<std::num::NonZeroUsize>) -> usize {
    threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        std::num::NonZeroUsize::get,
    )
}

/// Judges every batch of `reader` and hands the results to `write` in input order; `write`
/// returns false to stop (standard output closed). `judge` runs on `threads` workers, each with
/// its own `state()`; with one thread, on this one. Returns the read error that ended the input
/// early, if any (the batches before it are judged and written).
pub(super) fn judge_in_order<R, S, T>(
    reader: &mut BatchReader<R>,
    threads: usize,
    state: impl Fn() -> S + Sync,
    judge: impl Fn(&mut S, &Batch) -> T + Sync,
    mut write: impl FnMut(T) -> Result<bool, Failure>,
) -> Result<Option<io::Error>, Failure>
where
    R: Read,
    T: Send,
{
    if threads <= 1 {
        let mut s = state();
        loop {
            let batch = match reader.next_batch() {
                Ok(b) => b,
                Err(e) => return Ok(Some(e)),
            };
            if batch.is_empty() {
                return Ok(None);
            }
            let result = judge(&mut s, &batch);
            reader.recycle(batch);
            if !write(result)? {
                return Ok(None);
            }
        }
    }
    let in_flight_limit = threads * 2;
    let (work, queue) = mpsc::sync_channel::<Batch>(in_flight_limit);
    let queue = Arc::new(Mutex::new(queue));
    let (done, results) = mpsc::channel::<(Batch, T)>();
    let (state, judge) = (&state, &judge);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let queue = Arc::clone(&queue);
            let done = done.clone();
            scope.spawn(move || {
                let mut s = state();
                loop {
                    let batch = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = batch else { return };
                    let result = judge(&mut s, &batch);
                    if done.send((batch, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done);
        let mut pending: BTreeMap<usize, T> = BTreeMap::new();
        let (mut next_write, mut in_flight) = (0usize, 0usize);
        let mut reading = true;
        let mut read_error = None;
        let mut outcome = Ok(true);
        loop {
            while reading && in_flight < in_flight_limit {
                match reader.next_batch() {
                    Ok(batch) if batch.is_empty() => reading = false,
                    Ok(batch) => {
                        if work.send(batch).is_err() {
                            reading = false;
                            break;
                        }
                        in_flight += 1;
                    }
                    Err(e) => {
                        read_error = Some(e);
                        reading = false;
                    }
                }
            }
            if in_flight == 0 {
                break;
            }
            let Ok((batch, result)) = results.recv() else {
                break;
            };
            in_flight -= 1;
            pending.insert(batch.index, result);
            reader.recycle(batch);
            while let Some(result) = pending.remove(&next_write) {
                next_write += 1;
                if matches!(outcome, Ok(true)) {
                    outcome = write(result);
                }
            }
            if !matches!(outcome, Ok(true)) {
                reading = false;
            }
        }
        drop(work);
        outcome.map(|_| read_error)
    })
}

#[cfg(test)]
mod tests {
    use super::super::input::{Line, Lines};
    use super::{BatchReader, CHUNK};
    use std::io::{BufReader, Read};

    /// A reader that returns at most `step` bytes per read, so that lines and `\r\n` pairs fall
    /// across reads.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// `Ok((content, terminator))` or `Err(length)`.
    type Owned = Result<(Vec<u8>, Vec<u8>), u64>;

    /// `(number, line)` per line.
    type Split = Vec<(u64, Owned)>;

    fn owned(line: Line<'_>) -> Owned {
        match line {
            Line::Whole {
                content,
                terminator,
            } => Ok((content.to_vec(), terminator.to_vec())),
            Line::TooLong { bytes } => Err(bytes),
        }
    }

    /// Every line through the batch reader, and the bytes it says it consumed.
    fn batched(input: &[u8], max: u64, step: usize) -> (Split, u64) {
        let mut reader = BatchReader::new(Trickle { data: input, step }, max);
        let mut out = Vec::new();
        let mut consumed = 0;
        loop {
            let batch = reader.next_batch().unwrap();
            if batch.is_empty() {
                break;
            }
            assert!(batch.consumed >= consumed, "consumed only grows");
            consumed = batch.consumed;
            out.extend(batch.lines().map(|(n, l)| (n, owned(l))));
            reader.recycle(batch);
        }
        (out, consumed)
    }

    /// The same through the line reader `match` used before (the reference).
    fn one_by_one(input: &[u8], max: u64) -> Split {
        let mut lines = Lines::new(BufReader::with_capacity(7, input), max);
        let mut out = Vec::new();
        while let Some(line) = lines.next().unwrap().map(owned) {
            out.push((lines.number(), line));
        }
        out
    }

    #[test]
    fn batches_split_lines_as_the_line_reader_does() {
        let inputs: [&[u8]; 6] = [
            b"abcd\r\nabcde\nabcdefghij\r\n\r\nabc\nabcdefgh\r",
            b"",
            b"abcdef",
            b"abcde\r\n\n",
            b"\n\n\r\n\rx\r\r\n",
            b"abcd\rabcd\r\nab\r\r\nabcdefghijklmnop",
        ];
        for input in inputs {
            for max in [1, 3, 4, 5, 8, 100] {
                let expected = one_by_one(input, max);
                for step in [1, 2, 3, 5, 64] {
                    let (got, consumed) = batched(input, max, step);
                    assert_eq!(
                        got,
                        expected,
                        "{:?} max {max} step {step}",
                        String::from_utf8_lossy(input)
                    );
                    assert_eq!(consumed, input.len() as u64);
                }
            }
        }
    }

    #[test]
    fn big_inputs_make_several_batches_and_long_lines_are_not_held() {
        // Lines of every length around the chunk size and the limit, some over the limit.
        let mut input = Vec::new();
        for i in 0..3000usize {
            let len = (i * 7919) % 3000;
            input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
            input.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
        }
        let big = vec![b'x'; 3 * CHUNK];
        input.extend_from_slice(&big);
        input.extend_from_slice(b"\r\nend");
        for max in [2000, 4 * CHUNK as u64] {
            let expected = one_by_one(&input, max);
            let (got, consumed) = batched(&input, max, 100_000);
            assert_eq!(got.len(), expected.len());
            assert!(got == expected, "max {max}");
            assert_eq!(consumed, input.len() as u64);
        }
        // Over the limit, the long line is counted, not kept: no batch grows past a chunk and
        // the limit.
        let mut reader = BatchReader::new(&input[..], 2000);
        loop {
            let batch = reader.next_batch().unwrap();
            if batch.is_empty() {
                break;
            }
            assert!(
                batch.text.bytes.capacity() <= 2 * CHUNK + 2002,
                "{}",
                batch.text.bytes.capacity()
            );
            reader.recycle(batch);
        }
    }
}
