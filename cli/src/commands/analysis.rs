//! `filtervm example` and `filtervm diff`: a message a policy matches (or does not), and whether
//! two policies match the same messages, with witness messages.
//!
//! The library ([`filtervm_compiler::analysis`]) judges every message it returns by the VM; this
//! command judges each by the reference interpreter too before printing it, out of process as
//! `filtervm bench` does (`filtervm-conformance --reference`, found next to this executable or
//! at `$FILTERVM_REFERENCE`). Without the reference (`--no-reference`, or not built) the output
//! says the message was judged by the VM only.

use super::explain::load;
use super::failure::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK, Failure};
use super::{Policy, PolicyArgs, print_errors};
use clap::Args;
use filtervm_compiler::analysis::{self, Exactness, Example, Verdict, Witness};
use filtervm_compiler::{Dialect, Filter};
use filtervm_vm::json::{Map, Value};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

/// The arguments of `filtervm example`.
#[derive(Args, Debug)]
pub(super) struct ExampleArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// A message the policy does not match (default: one it matches).
    #[arg(long)]
    not: bool,
    /// Print the result as JSON: {"found", "message", "verified_by"} or {"found": false,
    /// "exact", "reason"}.
    #[arg(long)]
    json: bool,
    /// Do not judge the message by the reference interpreter (the VM still judges it).
    #[arg(long)]
    no_reference: bool,
}

/// The arguments of `filtervm diff`.
#[derive(Args, Debug)]
pub(super) struct DiffArgs {
    #[command(flatten)]
    first: PolicyArgs,
    /// The second policy's dialect (default: the first's).
    #[arg(long = "dialect2", short = 'D')]
    dialect2: Option<Dialect>,
    /// A file holding the second policy; `-` reads it from standard input.
    #[arg(long = "policy2", short = 'P', conflicts_with = "filter2")]
    policy2: Option<PathBuf>,
    /// The second policy given inline.
    #[arg(long = "filter2", short = 'F')]
    filter2: Option<String>,
    /// The second policy's options (default: the first's when the dialects are the same).
    #[arg(long = "options2")]
    options2: Option<String>,
    /// Print the result as JSON: {"verdict", "exact", "reason", "first_only", "second_only",
    /// "keys", "verified_by"}, and "assuming" with --assume.
    #[arg(long)]
    json: bool,
    /// Do not judge the witnesses by the reference interpreter (the VM still judges them).
    #[arg(long)]
    no_reference: bool,
    /// Compare only on documents of these kinds (comma-separated or repeated):
    /// canonical-documents (no member named twice, numbers in their shortest round-trip form,
    /// member names spelled as the policies spell them), no-arrays (no array at or on the way
    /// to a member the policies read). The search builds no other document; the answer names
    /// them.
    #[arg(long, value_name = "ASSUMPTION", value_delimiter = ',')]
    assume: Vec<String>,
}

/// The assumptions named by `--assume` (each a name or a comma-separated list).
fn assumptions(names: &[String]) -> Result<analysis::Assumptions, Failure> {
    names.iter().try_fold(analysis::Assumptions::NONE, |a, n| {
        a.with(n).ok_or_else(|| {
            Failure::usage(format!(
                "--assume: unknown assumption `{n}` (known: {})",
                analysis::Assumptions::NAMES.join(", ")
            ))
        })
    })
}

/// Runs `filtervm example`: exit 0 with a message, 1 when none exists (proved), 2 when none was
/// found within a bounded search.
pub(super) fn run_example(args: ExampleArgs) -> Result<ExitCode, Failure> {
    let read = args.policy.read()?;
    let Some(filter) = compile(&read)? else {
        return Ok(ExitCode::from(EXIT_NEGATIVE));
    };
    let want = !args.not;
    let answer = analysis::example(&filter, want).map_err(|e| Failure::error(e.to_string()))?;
    let mut out = match analysis::example_json(&answer, want) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let code = match &answer {
        Example::Found(w) => {
            let by = verify(&[&read], &[&filter], w, args.no_reference)?;
            out.insert("verified_by".into(), by);
            EXIT_OK
        }
        Example::NoneExists(exact) => {
            if *exact == Exactness::Exact {
                EXIT_NEGATIVE
            } else {
                EXIT_ERROR
            }
        }
    };
    let text = if args.json {
        super::output::pretty_json(&Value::Object(out))
    } else {
        match &answer {
            Example::Found(w) => super::output::pretty_json(&w.document),
            Example::NoneExists(exact) => {
                let what = if want {
                    "no message matches this policy"
                } else {
                    "every message matches this policy"
                };
                match exact {
                    Exactness::Exact => format!("{what} (proved over every class of values)"),
                    Exactness::Bounded(why) => format!(
                        "no such message found within a bounded search, so it is not proved \
                         that {what}: {why}"
                    ),
                }
            }
        }
    };
    super::output::print(&format!("{text}\n"))?;
    Ok(ExitCode::from(code))
}

/// Runs `filtervm diff`: exit 0 the same (proved), 1 different (with witnesses), 2 unknown.
pub(super) fn run_diff(args: DiffArgs) -> Result<ExitCode, Failure> {
    let first = args.first.read()?;
    let dialect2 = args.dialect2.or(args.first.dialect);
    let options2 = match (&args.options2, args.dialect2) {
        (Some(o), _) => o.clone(),
        (None, Some(d)) if Some(d) != args.first.dialect => "{}".to_owned(),
        (None, _) => args.first.options.clone(),
    };
    let second = PolicyArgs {
        dialect: dialect2,
        policy: args.policy2.clone(),
        filter: args.filter2.clone(),
        options: options2,
    }
    .read()?;
    let (Some(a), Some(b)) = (compile(&first)?, compile(&second)?) else {
        return Ok(ExitCode::from(EXIT_NEGATIVE));
    };
    let assume = assumptions(&args.assume)?;
    let d = analysis::diff_assuming(&a, &b, assume).map_err(|e| Failure::error(e.to_string()))?;
    let assuming = if d.assumptions.is_none() {
        String::new()
    } else {
        format!(", assuming {}", d.assumptions.describe())
    };
    let mut by = Value::Null;
    for w in [&d.first_only, &d.second_only].into_iter().flatten() {
        by = verify(&[&first, &second], &[&a, &b], w, args.no_reference)?;
    }
    let code = match d.verdict {
        Verdict::Same => EXIT_OK,
        Verdict::Different => EXIT_NEGATIVE,
        Verdict::Unknown => EXIT_ERROR,
    };
    let text = if args.json {
        let mut out = match analysis::diff_json(&d) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        out.insert("verified_by".into(), by);
        super::output::pretty_json(&Value::Object(out))
    } else {
        let mut t = String::new();
        match d.verdict {
            Verdict::Same => t.push_str(&format!(
                "same: P1 ({}) and P2 ({}) match exactly the same messages (proved over every \
                 class of values{assuming})",
                first.name, second.name
            )),
            Verdict::Unknown => t.push_str(&format!(
                "unknown: no difference found{assuming}, but the search was bounded: {}",
                match &d.exactness {
                    Exactness::Bounded(why) => why.as_str(),
                    Exactness::Exact => "",
                }
            )),
            Verdict::Different => {
                t.push_str(&format!(
                    "different: P1 ({}) and P2 ({}){}\n",
                    first.name,
                    second.name,
                    if assuming.is_empty() {
                        String::new()
                    } else {
                        format!(" (witnesses{assuming})")
                    }
                ));
                for (label, w) in [
                    ("matched by P1 only", &d.first_only),
                    ("matched by P2 only", &d.second_only),
                ] {
                    match w {
                        Some(w) => t.push_str(&format!("{label}:\n  {}\n", w.document)),
                        None => t.push_str(&format!(
                            "{label}: none{}\n",
                            match &d.exactness {
                                Exactness::Exact => " (proved)".to_owned(),
                                Exactness::Bounded(why) => format!(" found ({why})"),
                            }
                        )),
                    }
                }
                for k in &d.keys {
                    for (who, values) in [("P1", &k.first_only), ("P2", &k.second_only)] {
                        if !values.is_empty() {
                            t.push_str(&format!(
                                "  `{}`: {who} only for {}\n",
                                k.key,
                                values.join(", ")
                            ));
                        }
                    }
                }
            }
        }
        t.trim_end().to_owned()
    };
    super::output::print(&format!("{text}\n"))?;
    Ok(ExitCode::from(code))
}

/// Compiles a policy; `None` (errors printed) when it is invalid.
fn compile(policy: &Policy) -> Result<Option<Filter>, Failure> {
    match load(policy) {
        Ok((filter, _)) => Ok(Some(filter)),
        Err(e) => {
            print_errors(policy, &e);
            Ok(None)
        }
    }
}

/// Judges a witness by the reference interpreter, each filter on its own dialect's vector
/// message; the engines that judged it (`["vm", "reference"]`), or a failure naming the
/// disagreement.
fn verify(
    policies: &[&Policy],
    filters: &[&Filter],
    w: &Witness,
    skip: bool,
) -> Result<Value, Failure> {
    let vm = Value::from("vm");
    if skip {
        return Ok(Value::Array(vec![vm]));
    }
    let Some(binary) = super::bench::reference_binary()? else {
        return Err(Failure::error(
            "the reference interpreter is needed to judge the message before it is printed \
             (build it with `cargo build -p filtervm-conformance`, or give --no-reference)",
        ));
    };
    for (i, (policy, filter)) in policies.iter().zip(filters).enumerate() {
        let (Some(vector), Some(expected)) = (w.vectors.get(i), w.verdicts.get(i)) else {
            continue;
        };
        let got = reference_verdict(&binary, policy, filter, vector)?;
        if got != *expected {
            return Err(Failure::error(format!(
                "the VM and the reference interpreter disagree on {vector} for {} (VM: {expected}, \
                 reference: {got}); please report this",
                policy.name
            )));
        }
    }
    Ok(Value::Array(vec![vm, Value::from("reference")]))
}

/// The reference interpreter's verdict of `policy` on one vector message.
fn reference_verdict(
    binary: &std::path::Path,
    policy: &Policy,
    filter: &Filter,
    vector: &Value,
) -> Result<bool, Failure> {
    let failed = |what: String| {
        Failure::error(format!(
            "the reference interpreter ({}): {what}",
            binary.display()
        ))
    };
    // One policy per line: JSON compacted (numbers and member order kept), text on one line.
    let line = match filtervm_vm::json::parse(policy.text.as_bytes()) {
        Ok(v) => v.to_string(),
        Err(_) => policy.text.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    let path = std::env::temp_dir().join(format!(
        "filtervm-analysis-{}-{}.policy",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::write(&path, format!("{line}\n")).map_err(|e| failed(e.to_string()))?;
    let options = filter.options().to_string();
    let run = || -> Result<bool, Failure> {
        let mut child = Command::new(binary)
            .arg("--reference")
            .args(["--dialect", filter.dialect().name(), "--options", &options])
            .arg("--policies")
            .arg(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(format!("{vector}\n").as_bytes())
                .map_err(|e| failed(e.to_string()))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| failed(e.to_string()))?;
        if !out.status.success() {
            return Err(failed(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text
            .lines()
            .find(|l| !l.starts_with('#'))
            .ok_or_else(|| failed("no verdict in its output".into()))?;
        Ok(first.split_whitespace().any(|t| t == "0"))
    };
    let verdict = run();
    let _ = std::fs::remove_file(&path);
    verdict
}

/// The arguments of `filtervm audit`.
#[derive(Args, Debug)]
pub(super) struct AuditArgs {
    /// The subscriptions, one per line, as `route --subscriptions` reads them: {"id",
    /// "dialect", "policy", "options"}.
    #[arg(value_name = "SUBS.ndjson")]
    subscriptions: PathBuf,
    /// Print the result as JSON: {"subscriptions", "never", "always", "equivalent",
    /// "unknown", "not_compared", "errors"}.
    #[arg(long)]
    json: bool,
}

/// Runs `filtervm audit`: exit 0, or 1 when something was found (a subscription that never or
/// always matches, equivalent subscriptions), 2 when a line could not be loaded or analysed.
pub(super) fn run_audit(args: AuditArgs) -> Result<ExitCode, Failure> {
    let (subs, invalid) = super::route::load_subscriptions(&args.subscriptions, false)?;
    let filters: Vec<&Filter> = (0..subs.len())
        .filter_map(|i| subs.filter(i).map(filtervm::Filter::compiled))
        .collect();
    let audit = analysis::audit::audit(&filters);
    let id = |i: usize| subs.id(i).to_owned();
    let ids = |list: &[(usize, Exactness)]| -> Vec<Value> {
        list.iter()
            .map(|(i, e)| {
                let mut m = Map::new();
                m.insert("id".into(), Value::from(id(*i).as_str()));
                analysis::exactness_json(&mut m, e);
                Value::Object(m)
            })
            .collect()
    };
    let found = !audit.never.is_empty() || !audit.always.is_empty() || !audit.groups.is_empty();
    let text = if args.json {
        let mut out = Map::new();
        out.insert(
            "subscriptions".into(),
            Value::Number((subs.len() as u64).into()),
        );
        out.insert("never".into(), Value::Array(ids(&audit.never)));
        out.insert("always".into(), Value::Array(ids(&audit.always)));
        let groups = audit
            .groups
            .iter()
            .map(|(g, w)| {
                Value::Object(Map::from_iter([
                    (
                        "ids".to_owned(),
                        Value::Array(g.iter().map(|&i| Value::from(id(i).as_str())).collect()),
                    ),
                    (
                        "matching".to_owned(),
                        w.as_ref().map_or(Value::Null, |w| w.document.clone()),
                    ),
                ]))
            })
            .collect();
        out.insert("equivalent".into(), Value::Array(groups));
        let unknown = audit
            .unknown
            .iter()
            .map(|(a, b, why)| {
                Value::Object(Map::from_iter([
                    (
                        "ids".to_owned(),
                        Value::Array(vec![
                            Value::from(id(*a).as_str()),
                            Value::from(id(*b).as_str()),
                        ]),
                    ),
                    ("reason".to_owned(), Value::from(why.as_str())),
                ]))
            })
            .collect();
        out.insert("unknown".into(), Value::Array(unknown));
        out.insert(
            "not_compared".into(),
            Value::Array(
                audit
                    .not_compared
                    .iter()
                    .map(|&i| Value::from(id(i).as_str()))
                    .collect(),
            ),
        );
        out.insert(
            "errors".into(),
            Value::Array(
                audit
                    .errors
                    .iter()
                    .map(|(i, e)| Value::from(format!("{}: {e}", id(*i)).as_str()))
                    .collect(),
            ),
        );
        super::output::pretty_json(&Value::Object(out))
    } else {
        let mut t = format!("{} subscriptions audited\n", subs.len());
        for (label, list) in [
            ("never matches", &audit.never),
            ("matches every message", &audit.always),
        ] {
            for (i, e) in list {
                let how = match e {
                    Exactness::Exact => "proved".to_owned(),
                    Exactness::Bounded(why) => format!("none found within a bounded search: {why}"),
                };
                t.push_str(&format!("{label}: {} ({how})\n", id(*i)));
            }
        }
        for (g, w) in &audit.groups {
            let names: Vec<String> = g.iter().map(|&i| id(i)).collect();
            t.push_str(&format!("equivalent: {}", names.join(", ")));
            if let Some(w) = w {
                t.push_str(&format!(" (all match {})", w.document));
            }
            t.push('\n');
        }
        for (a, b, why) in &audit.unknown {
            t.push_str(&format!("not decided: {} and {} ({why})\n", id(*a), id(*b)));
        }
        if !audit.not_compared.is_empty() {
            t.push_str(&format!(
                "{} subscriptions not compared for equivalence (too many distinct filters with the same verdicts on the probe messages)\n",
                audit.not_compared.len()
            ));
        }
        for (i, e) in &audit.errors {
            t.push_str(&format!("error: {}: {e}\n", id(*i)));
        }
        t.trim_end().to_owned()
    };
    super::output::print(&format!("{text}\n"))?;
    Ok(ExitCode::from(if invalid > 0 || !audit.errors.is_empty() {
        EXIT_ERROR
    } else if found {
        EXIT_NEGATIVE
    } else {
        EXIT_OK
    }))
}

/// The arguments of `filtervm translate`.
#[derive(Args, Debug)]
pub(super) struct TranslateArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// The target dialect (one reading the same part of a message).
    #[arg(long)]
    to: Dialect,
    /// The target dialect's options as JSON (default: its defaults).
    #[arg(long = "to-options", default_value = "{}")]
    to_options: String,
    /// Print the result as JSON: {"policy", "assuming"} or {"error": {"code", "pointer",
    /// "message", "witness", "assuming"}}.
    #[arg(long)]
    json: bool,
    /// Between two document dialects (sns bodies, eventbridge, eventgrid), prove the
    /// translation on documents of these kinds only (comma-separated or repeated):
    /// canonical-documents (the default there: no member named twice, numbers in their
    /// shortest round-trip form, member names spelled as the policies spell them), no-arrays
    /// (no array at or on the way to a member the policies read), none (every document). The
    /// result names them; elsewhere nothing is assumed.
    #[arg(long, value_name = "ASSUMPTION", value_delimiter = ',')]
    assume: Vec<String>,
}

/// Runs `filtervm translate`: exit 0 with the policy in the target dialect (proved to match the
/// same messages), 1 when it cannot be expressed there (the error names the part and why).
pub(super) fn run_translate(args: TranslateArgs) -> Result<ExitCode, Failure> {
    let read = args.policy.read()?;
    let to = super::options::parse(args.to, &args.to_options)?
        .map_err(|e| Failure::usage(format!("--to-options: {e}")))?;
    let (filter, policy) = match load(&read) {
        Ok((f, Some(p))) => (f, p),
        Ok((_, None)) => return Err(Failure::error("the policy could not be read as JSON")),
        Err(e) => {
            print_errors(&read, &e);
            return Ok(ExitCode::from(EXIT_NEGATIVE));
        }
    };
    // Between two document dialects the proof needs an assumption about the documents (they
    // read a repeated member, member names of another case and over-precise numbers
    // differently): canonical-documents unless --assume says otherwise.
    let documents = analysis::model::Model::of(&to) == analysis::model::Model::Document
        && analysis::model_of(filter.options()) == analysis::model::Model::Document
        && filter.dialect() != to.dialect();
    let assume = if !documents {
        analysis::Assumptions::NONE
    } else if args.assume.is_empty() {
        analysis::Assumptions {
            canonical_documents: true,
            ..analysis::Assumptions::NONE
        }
    } else {
        assumptions(&args.assume)?
    };
    match analysis::translate::translate_assuming(&filter, &policy, &to, assume) {
        Ok(t) => {
            let text = if args.json {
                let mut m = Map::from_iter([("policy".to_owned(), t.policy)]);
                if !t.assumptions.is_none() {
                    m.insert("assuming".into(), t.assumptions.to_json());
                }
                super::output::pretty_json(&Value::Object(m))
            } else {
                super::output::pretty_json(&t.policy)
            };
            super::output::print(&format!("{text}\n"))?;
            if !args.json && !t.assumptions.is_none() {
                writeln!(
                    super::output::Stderr,
                    "{}: proved equivalent on every document assuming {}",
                    read.name,
                    t.assumptions.describe()
                );
            }
            Ok(ExitCode::from(EXIT_OK))
        }
        Err(e) => {
            if args.json {
                let mut m = Map::new();
                m.insert("code".into(), Value::from(e.code));
                m.insert("pointer".into(), Value::from(e.pointer.as_str()));
                m.insert("message".into(), Value::from(e.message.as_str()));
                m.insert(
                    "witness".into(),
                    e.witness
                        .as_ref()
                        .map_or(Value::Null, |w| w.document.clone()),
                );
                if !assume.is_none() {
                    m.insert("assuming".into(), assume.to_json());
                }
                let out = Value::Object(Map::from_iter([("error".to_owned(), Value::Object(m))]));
                super::output::print(&format!("{}\n", super::output::pretty_json(&out)))?;
            } else {
                let mut text = format!("{}: cannot translate to {}: {e}", read.name, args.to);
                if let Some(w) = &e.witness {
                    text.push_str(&format!(
                        "\n  a message the two judge differently: {}",
                        w.document
                    ));
                }
                writeln!(super::output::Stderr, "{text}");
            }
            Ok(ExitCode::from(EXIT_NEGATIVE))
        }
    }
}
