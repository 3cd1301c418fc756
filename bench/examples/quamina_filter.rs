//! A line filter built on quamina-rs, the peer `filtervm match --only-matching` is measured
//! against on a large NDJSON file (BENCHMARKS.md, "filtervm match on a large file"): reads the
//! file line by line and prints the lines quamina matches with the pattern.
//!
//! `bench/target/release/examples/quamina_filter PATTERN.json FILE > matches.ndjson`
#![allow(missing_docs, clippy::expect_used)]

use std::io::{BufRead, BufReader, BufWriter, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(pattern), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: quamina_filter PATTERN.json FILE");
        std::process::exit(64);
    };
    let pattern = std::fs::read_to_string(pattern).expect("the pattern file");
    let mut q = quamina::Quamina::<u64>::new();
    q.add_pattern(1, pattern.trim())
        .expect("quamina takes the pattern");
    let file = std::fs::File::open(path).expect("the input file");
    let mut input = BufReader::with_capacity(1 << 16, file);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::new();
    let (mut lines, mut matched, mut errors) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).expect("read") == 0 {
            break;
        }
        let content = line.strip_suffix(b"\n").unwrap_or(&line);
        lines += 1;
        match q.matches_for_event(content) {
            Ok(m) if !m.is_empty() => {
                matched += 1;
                out.write_all(content).expect("write");
                out.write_all(b"\n").expect("write");
            }
            Ok(_) => {}
            Err(_) => errors += 1,
        }
    }
    out.flush().expect("write");
    eprintln!("quamina_filter: {lines} lines, {matched} matched, {errors} errors");
}
