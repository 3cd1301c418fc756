#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the conformance vectors.

Run from the repository root:  python3 fuzz/seed_corpus.py
It fills fuzz/corpus/<target>/ (git-ignored) with one file per distinct seed:
  compile_<dialect>      selector byte (the options, see src/lib.rs `options_for`) + policy text
  stream_text_roundtrip  0x00 + every stream policy given in the text form
  message_attributes     sns attribute-scope and basaltic messages, as JSON lines
  message_body           sns body-scope message bodies (the raw body text)
  message_event          eventgrid events, as JSON lines
  message_headers        stream and expr messages, as JSON lines
  message_trusted        a selector byte + each sns body and eventgrid event above
  program_from_bytes     0x00 + `filtervm compile --output` of each valid policy (only when
                         target/release/filtervm exists: `cargo build --release`)
"""
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
FILTERVM = os.path.join(ROOT, "target", "release", "filtervm")


def put(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def selector(dialect, options):
    options = options or {}
    if dialect == "sns":
        return 1 if options.get("scope") == "MessageBody" else 0
    if dialect == "eventgrid":
        return 1 if options.get("schema") == "CloudEventSchemaV1_0" else 0
    if dialect == "expr" and "max_depth" in options:
        return 3
    return 0


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "conformance", "vectors", "*.jsonl")))
    files += sorted(glob.glob(os.path.join(ROOT, "conformance", "vectors", "local", "*.jsonl")))
    programs = []
    count = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                case = json.loads(line)
                dialect = case["dialect"]
                options = case.get("options")
                policy = case.get("policy")
                text = policy if isinstance(policy, str) else json.dumps(policy, ensure_ascii=False)
                put("compile_" + dialect, bytes([selector(dialect, options)]) + text.encode("utf-8"))
                if dialect == "stream" and isinstance(policy, str):
                    put("stream_text_roundtrip", b"\x00" + policy.encode("utf-8"))
                if case.get("expect") != "invalid":
                    programs.append((dialect, options, policy))
                message = case.get("message")
                if message is None:
                    continue
                as_line = json.dumps(message, ensure_ascii=False)
                if dialect == "sns" and (options or {}).get("scope") == "MessageBody":
                    body = message.get("body")
                    if isinstance(body, str):
                        put("message_body", body)
                        put("message_trusted", bytes([count % 5]) + body.encode("utf-8"))
                elif dialect in ("sns", "basaltic"):
                    put("message_attributes", as_line)
                elif dialect == "eventgrid":
                    put("message_event", as_line)
                    put("message_trusted", bytes([count % 5]) + as_line.encode("utf-8"))
                else:
                    put("message_headers", as_line)
                count += 1
    if os.path.exists(FILTERVM):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "program.bin")
            for dialect, options, policy in programs[:400]:
                inline = policy if isinstance(policy, str) else json.dumps(policy)
                args = [FILTERVM, "compile", "-d", dialect, "-f", inline, "-o", out,
                        "--options", json.dumps(options or {})]
                if subprocess.run(args, capture_output=True).returncode == 0:
                    with open(out, "rb") as f:
                        put("program_from_bytes", b"\x00" + f.read())
    else:
        print("no target/release/filtervm: program_from_bytes gets no seeds", file=sys.stderr)
    print(f"seeded from {len(files)} vector files ({count} messages) into {CORPUS}")


if __name__ == "__main__":
    main()
