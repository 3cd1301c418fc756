//! `filtervm match`: one message per line; a bad line is reported and skipped.

use super::Failure;
use filtervm_compiler::{Evaluator, Filter, message_from_line};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Matches every line of `input` (stdin when `None` or `-`). Exit 0, or 2 when some line could
/// not be read as a message (every other line is still processed).
pub(super) fn run(
    filter: &Filter,
    input: Option<&Path>,
    only_matching: bool,
) -> Result<ExitCode, Failure> {
    let (name, reader): (String, Box<dyn Read>) = match input {
        None => ("<stdin>".to_owned(), Box::new(std::io::stdin())),
        Some(p) if p.as_os_str() == "-" => ("<stdin>".to_owned(), Box::new(std::io::stdin())),
        Some(p) => {
            let file = std::fs::File::open(p)
                .map_err(|e| Failure::usage(format!("{}: cannot open: {e}", p.display())))?;
            (p.display().to_string(), Box::new(file))
        }
    };
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut evaluator = Evaluator::new();
    let mut line = Vec::new();
    let mut number = 0usize;
    let mut bad = 0usize;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| Failure {
            message: format!("{name}: read error after line {number}: {e}"),
            code: 2,
        })?;
        if n == 0 {
            break;
        }
        number += 1;
        let raw = trim_newline(&line);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let verdict = std::str::from_utf8(raw)
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
        let written = match verdict {
            Ok(true) if only_matching => out.write_all(raw).and_then(|_| out.write_all(b"\n")),
            Ok(false) if only_matching => Ok(()),
            Ok(m) => writeln!(out, "{}", if m { "match" } else { "no-match" }),
            Err(why) => {
                bad += 1;
                let _ = out.flush();
                eprintln!("{name}:{number}: {why}");
                if only_matching {
                    Ok(())
                } else {
                    writeln!(out, "error")
                }
            }
        };
        if let Err(e) = written {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(Failure {
                message: format!("cannot write: {e}"),
                code: 2,
            });
        }
    }
    out.flush().map_err(|e| Failure {
        message: format!("cannot write: {e}"),
        code: 2,
    })?;
    if bad > 0 {
        eprintln!("{name}: {bad} of {number} lines could not be read as messages");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
