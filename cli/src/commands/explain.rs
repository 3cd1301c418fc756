//! `filtervm explain`: why a message did or did not match a policy.

use super::failure::{EXIT_NEGATIVE, EXIT_OK, Failure};
use super::{Policy, PolicyArgs, print_errors};
use clap::Args;
use filtervm_compiler::explain::{ExplainError, Explanation, explain_parts};
use filtervm_compiler::{CompileError, Dialect, Filter, compile_value, read_messages};
use filtervm_vm::json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `filtervm explain`.
#[derive(Args, Debug)]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// The message: a file holding one message as `match` reads a line (`-` for stdin): JSON in
    /// one of the message shapes (`{"attributes", "headers", "body"}`, the AWS SNS shapes), or
    /// any other JSON document as the body itself (an SNS body, an Event Grid event; an Event
    /// Grid batch is explained event by event).
    #[arg(long, short)]
    message: PathBuf,
    /// Print the explanation as JSON (the shape is documented in `filtervm_compiler::explain`).
    #[arg(long)]
    json: bool,
    /// Also list the program's own test instructions, each run alone on the message.
    #[arg(long)]
    trace: bool,
}

/// The policy as written (JSON, or the stream text form as a JSON string), best effort.
fn policy_value(policy: &Policy) -> Option<Value> {
    let stream = policy.dialect == Dialect::Stream;
    match filtervm_vm::json::parse(policy.text.as_bytes()) {
        Ok(v) if v.is_object() || v.is_array() || !stream => Some(v),
        _ if stream => Some(Value::String(policy.text.clone())),
        _ => None,
    }
}

/// Compiles the policy and reads it as a value; `Err` is an invalid policy.
pub(super) fn load(policy: &Policy) -> Result<(Filter, Option<Value>), CompileError> {
    let value = policy_value(policy);
    match policy.compile() {
        Ok(filter) => Ok((filter, value)),
        // The stream text form in a file: compile the text.
        Err(e) => match (&value, &policy.options) {
            (Some(v @ Value::String(_)), Ok(options)) if policy.dialect == Dialect::Stream => {
                compile_value(Dialect::Stream, v, options).map(|f| (f, value.clone()))
            }
            _ => Err(e),
        },
    }
}

fn read_bytes(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::error(format!("<stdin>: cannot read the message: {e}")))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| {
            Failure::error(format!("{}: cannot read the message: {e}", path.display()))
        })?;
    }
    Ok(bytes)
}

/// Reads `bytes` as `match` reads a line ([`read_messages`]) and explains each message it holds
/// by its parts: whether it was a batch (of events), and the explanations in order.
pub(super) fn explain_messages(
    filter: &Filter,
    policy: Option<&Value>,
    bytes: &[u8],
) -> Result<(bool, Vec<Explanation>), ExplainError> {
    let messages = read_messages(bytes, filter.options())?;
    let batch = messages.is_batch();
    let explanations = messages
        .map(|message| explain_parts(filter, policy, &message.parts()))
        .collect::<Result<_, _>>()?;
    Ok((batch, explanations))
}

/// Runs `filtervm explain`: exit 0 (whatever the verdict), 1 for an invalid policy, 2 for a
/// message that cannot be read.
pub(super) fn run(args: ExplainArgs) -> Result<ExitCode, Failure> {
    if args.policy.reads_stdin() && super::is_stdin(&args.message) {
        return Err(Failure::usage(
            "the policy and the message cannot both come from standard input",
        ));
    }
    let source = args.policy.read()?;
    let (filter, policy) = match load(&source) {
        Ok(loaded) => loaded,
        Err(e) => {
            print_errors(&source, &e);
            return Ok(ExitCode::from(EXIT_NEGATIVE));
        }
    };
    // The message is read exactly as `match` reads a line: one reader of message shapes, each
    // message explained by its parts (an Event Grid batch: each event in turn).
    let bytes = read_bytes(&args.message)?;
    let failed =
        |e: &dyn std::fmt::Display| Failure::error(format!("{}: {e}", args.message.display()));
    let (batch, explanations) =
        explain_messages(&filter, policy.as_ref(), &bytes).map_err(|e| failed(&e))?;
    let mut text = String::new();
    if args.json {
        let value = if batch {
            Value::Array(
                explanations
                    .iter()
                    .enumerate()
                    .map(|(index, e)| {
                        let mut event = filtervm_vm::json::Map::new();
                        event.insert("event".into(), Value::Number(index.into()));
                        if let Value::Object(members) = e.to_json() {
                            for (name, member) in members.iter() {
                                event.insert(name.clone(), member.clone());
                            }
                        }
                        Value::Object(event)
                    })
                    .collect(),
            )
        } else {
            explanations
                .first()
                .map_or(Value::Null, Explanation::to_json)
        };
        text = super::output::pretty_json(&value);
        text.push('\n');
    } else {
        for (index, explanation) in explanations.iter().enumerate() {
            if batch {
                if index > 0 {
                    text.push('\n');
                }
                text.push_str(&format!("event {index}:\n"));
            }
            text.push_str(&explanation.to_string());
            if args.trace {
                text.push_str(
                    "\ninstructions (the program's own tests, each run alone on the message):\n",
                );
                text.push_str(&explanation.render_instructions());
            }
        }
    }
    super::output::print(&text)?;
    Ok(ExitCode::from(EXIT_OK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::matching::{Verdicts, verdict};
    use filtervm_compiler::{Options, SnsScope};
    use std::path::Path;

    /// Every conformance vector's message, read by `match` (its verdict function) and by
    /// `explain` (the function `filtervm explain` runs), in both sns scopes: the same verdict, or
    /// the same error. In the vector's own options the verdict is the vector's.
    #[test]
    fn explain_reads_every_vector_message_as_match_does() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["conformance/vectors", "conformance/vectors/local"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
        files.sort();
        let mut matcher = filtervm::Matcher::new();
        let (mut compared, mut errors, mut in_own_scope) = (0, 0, 0);
        for file in files {
            for line in std::fs::read_to_string(&file).unwrap().lines() {
                if line.trim().is_empty() {
                    continue;
                }
                let mut case = filtervm_vm::json::parse(line.as_bytes()).unwrap();
                if case.get("dialect").and_then(Value::as_str) == Some("eventbridge") {
                    // Patterns and events give every occurrence of a repeated member name a
                    // meaning (EB-3, EB-7): read the line keeping them all.
                    let mut keep = filtervm_vm::json::ParseOptions::default();
                    keep.duplicates = filtervm_vm::json::Duplicates::KeepAll;
                    keep.max_depth = filtervm_vm::json::MAX_DEPTH_CEILING;
                    case = filtervm_vm::json::parse_with(line.as_bytes(), &keep).unwrap();
                }
                let (Some(message), Some(expect)) = (
                    case.get("message"),
                    case.get("expect").and_then(Value::as_str),
                ) else {
                    continue;
                };
                if expect == "invalid" {
                    continue;
                }
                let dialect: Dialect = case
                    .get("dialect")
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                let own = match case.get("options") {
                    Some(o) => Options::from_json(dialect, o.to_string().as_str()).unwrap(),
                    None => Options::from(dialect),
                };
                let mut options = vec![own.clone()];
                if dialect == Dialect::Sns {
                    options = vec![
                        Options::from(SnsScope::MessageAttributes),
                        Options::from(SnsScope::MessageBody),
                    ];
                }
                let policy = case.get("policy").unwrap();
                let bytes = message.to_string().into_bytes();
                for options in options {
                    let Ok(filter) = compile_value(dialect, policy, &options) else {
                        continue;
                    };
                    let id = format!("{} ({options})", case.get("id").unwrap());
                    let facade = filtervm::Filter::from_compiled(filter.clone(), None);
                    let matched = verdict(&mut matcher, &facade, &bytes).map(|(v, _)| v);
                    let explained = explain_messages(&filter, Some(policy), &bytes);
                    match (&matched, &explained) {
                        (Ok(Verdicts::One(m)), Ok((false, e))) => {
                            assert_eq!(e.len(), 1, "{id}");
                            assert_eq!(*m, e[0].matched, "{id}: match says {m}");
                            if options == own {
                                assert_eq!(*m, expect == "match", "{id}: expected {expect}");
                                in_own_scope += 1;
                            }
                        }
                        (Ok(Verdicts::Events(m)), Ok((true, e))) => {
                            let m: Vec<bool> = m.iter().map(|v| *v.as_ref().unwrap()).collect();
                            let e: Vec<bool> = e.iter().map(|e| e.matched).collect();
                            assert_eq!(m, e, "{id}");
                        }
                        (Err(m), Err(e)) => {
                            assert_eq!(m.code, e.code().as_str(), "{id}: {} / {e}", m.message);
                            assert!(
                                m.message.ends_with(&e.to_string()) || m.message == e.to_string(),
                                "{id}: {} / {e}",
                                m.message
                            );
                            // The vectors judge an Event Grid event that is not an object
                            // (EG-2); every entry point refuses it before evaluation
                            // (filtervm/MESSAGES.md).
                            let not_an_event =
                                dialect == Dialect::EventGrid && !message.is_object();
                            assert!(
                                options != own || not_an_event,
                                "{id}: the vector's own message is an error: {e}"
                            );
                            errors += 1;
                        }
                        _ => panic!("{id}: match read {matched:?}, explain {explained:?}"),
                    }
                    compared += 1;
                }
            }
        }
        // Every vector with a message, both scopes for sns; the errors are sns messages without
        // the other scope's part.
        assert!(compared > 700, "{compared}");
        assert!(in_own_scope > 600, "{in_own_scope}");
        assert!(errors > 50, "{errors}");
    }
}
