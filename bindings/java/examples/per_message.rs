//! The Rust side of the Java binding's cost per message (BENCHMARKS.md, "Java"): the same
//! messages and policies as `java/bench/dev/filtervm/PerMessage.java`, through the bindings'
//! adapter as the JNI functions call it after reading their arguments.
//!
//! ```sh
//! python3 bench/workloads.py bench-data
//! cargo run --release --manifest-path bindings/java/Cargo.toml --example per_message -- \
//!     bench-data/pol1c.jsonl bench-data/pol10k.jsonl bench-data/attrs.jsonl
//! ```
//!
//! The first 10,000 lines of the messages file (flat JSON objects) as attributes (strings →
//! String, numbers → Number, as byte strings: what the JNI side decodes from `Message`), and as
//! a document; the single filter is the first line of the first policy file (attribute scope, and
//! `MessageBody` scope for the document), the set the first 1,000 lines of the second. Prints
//! `name: ns` lines, CPU time per message (this thread's, so that the other processes of a shared
//! machine do not count), the median of 5 rounds of at least 0.3 s each; and the matches of one
//! pass.

use filtervm_bindings::filtervm::AttributeType;
use filtervm_bindings::{DocumentInput, Filter, Input, Parts, Set};
use std::hint::black_box;
use std::time::Instant;

const MESSAGES: usize = 10_000;
const SUBSCRIPTIONS: usize = 1_000;

type Triple<'a> = (&'a [u8], AttributeType, &'a [u8]);

fn triples(line: &str) -> Result<Vec<(String, AttributeType, String)>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(line)?;
    let mut out = Vec::new();
    if let serde_json::Value::Object(members) = value {
        for (name, v) in members {
            match v {
                serde_json::Value::String(s) => out.push((name, AttributeType::String, s)),
                serde_json::Value::Number(n) => {
                    out.push((name, AttributeType::Number, n.to_string()));
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Attributes as `dev.filtervm.Message` encodes them (`src/message.rs`).
fn encode(triples: &[(String, AttributeType, String)]) -> Vec<u8> {
    let mut out = vec![2u8];
    let put = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(b);
    };
    out.extend_from_slice(
        &u32::try_from(triples.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    for (name, ty, value) in triples {
        put(&mut out, name.as_bytes());
        // The type byte of `Message`'s typed methods (`src/message.rs`).
        out.push(if *ty == AttributeType::Number { 2 } else { 1 });
        put(&mut out, value.as_bytes());
    }
    out
}

/// The time this thread has spent on a CPU, in ns (`/proc/thread-self/schedstat`): the
/// machine is shared, and wall time would count the time other processes ran.
fn cpu_ns() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

/// Prints the median CPU time per message of 5 rounds of at least 0.3 s (one round: `round`
/// over `n` messages).
fn report(name: &str, n: usize, mut round: impl FnMut() -> usize) {
    let mut per_message = Vec::new();
    for _ in 0..5 {
        let (start, cpu) = (Instant::now(), cpu_ns());
        let mut passes = 0u32;
        while start.elapsed().as_secs_f64() < 0.3 {
            black_box(round());
            passes += 1;
        }
        per_message.push((cpu_ns() - cpu) / f64::from(passes) / n as f64);
    }
    per_message.sort_by(f64::total_cmp);
    println!(
        "{name}: {:.1}",
        per_message.get(2).copied().unwrap_or(f64::NAN)
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [single, many, messages] = args.as_slice() else {
        return Err("usage: per_message POLICY.jsonl POLICIES.jsonl MESSAGES.jsonl".into());
    };
    let single = std::fs::read_to_string(single)?;
    let single = single.lines().next().ok_or("no policy")?;
    let many = std::fs::read_to_string(many)?;
    let lines: Vec<String> = std::fs::read_to_string(messages)?
        .lines()
        .take(MESSAGES)
        .map(str::to_owned)
        .collect();
    let owned: Vec<Vec<(String, AttributeType, String)>> =
        lines.iter().map(|l| triples(l)).collect::<Result<_, _>>()?;
    let borrowed: Vec<Vec<Triple<'_>>> = owned
        .iter()
        .map(|t| {
            t.iter()
                .map(|(n, ty, v)| (n.as_bytes(), *ty, v.as_bytes()))
                .collect()
        })
        .collect();
    let attributes = Filter::compile("sns", single.as_bytes(), None)?;
    let body = Filter::compile(
        "sns",
        single.as_bytes(),
        Some(br#"{"scope": "MessageBody"}"#),
    )?;
    let mut set = Set::new();
    for (id, policy) in (0u64..).zip(many.lines().take(SUBSCRIPTIONS)) {
        set.add(id, &Filter::compile("sns", policy.as_bytes(), None)?)?;
    }
    let n = lines.len();
    let parts = |t: &[Triple<'_>]| -> bool {
        let input = Input::Parts(Parts {
            attributes: Some(t),
            ..Parts::<[Triple<'_>], [(&[u8], &[u8])]>::default()
        });
        attributes.matches(&input).unwrap_or(false)
    };
    let filter_attributes = || borrowed.iter().filter(|t| parts(t)).count();
    // The same attributes in the encoding `dev.filtervm.Message` writes, decoded on each call
    // as the JNI side does (all it adds to the adapter but the JNI call and the array's copy).
    let encoded: Vec<Vec<u8>> = owned.iter().map(|t| encode(t)).collect();
    let filter_attributes_decoded = || {
        encoded
            .iter()
            .filter(|e| {
                filtervm_jni::message::decode(e)
                    .and_then(|d| attributes.matches(&d.input()))
                    .unwrap_or(false)
            })
            .count()
    };
    let filter_document_body = || {
        lines
            .iter()
            .filter(|l| {
                let input: DocumentInput<'_> = Input::Document(l.as_bytes());
                body.matches(&input).unwrap_or(false)
            })
            .count()
    };
    let (mut ids, mut unjudged) = (Vec::new(), Vec::new());
    let mut set_attributes = || {
        let mut found = 0;
        for t in &borrowed {
            ids.clear();
            unjudged.clear();
            let input = Input::Parts(Parts {
                attributes: Some(&t[..]),
                ..Parts::<[Triple<'_>], [(&[u8], &[u8])]>::default()
            });
            set.matching(&input, &mut ids, &mut unjudged);
            found += ids.len();
        }
        found
    };
    println!(
        "matches per pass: filter_attributes {} (decoded {}), filter_document_body {}, \
         set_attributes {}",
        filter_attributes(),
        filter_attributes_decoded(),
        filter_document_body(),
        set_attributes()
    );
    report("rust_filter_attributes", n, filter_attributes);
    report(
        "rust_filter_attributes_decoded",
        n,
        filter_attributes_decoded,
    );
    report("rust_decode_only", n, || {
        encoded
            .iter()
            .filter(|e| filtervm_jni::message::decode(e).is_ok())
            .count()
    });
    report("rust_filter_document_body", n, filter_document_body);
    report("rust_set_attributes", n, set_attributes);
    println!("messages: {n}, subscriptions: {}", set.len());
    Ok(())
}
