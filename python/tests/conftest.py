"""Shared helpers: the conformance vectors, with each JSON member kept as the exact text the
vector wrote (so numbers such as 1e400 or 9007199254740993.5 reach filtervm unchanged)."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, List, Optional

VECTORS = Path(
    os.environ.get("FILTERVM_VECTORS", Path(__file__).resolve().parents[2] / "conformance" / "vectors")
)

_decoder = json.JSONDecoder()


def raw_members(line: str) -> Dict[str, str]:
    """The top-level members of a JSON object line, each as the exact text of its value."""
    members: Dict[str, str] = {}
    i = line.index("{") + 1
    ws = " \t\r\n"
    while True:
        while line[i] in ws:
            i += 1
        if line[i] == "}":
            return members
        if line[i] == ",":
            i += 1
            continue
        key, i = json.decoder.scanstring(line, i + 1)
        while line[i] in ws:
            i += 1
        assert line[i] == ":", line[i:]
        i += 1
        while line[i] in ws:
            i += 1
        _, end = _decoder.raw_decode(line, i)
        members[key] = line[i:end]
        i = end


def exact(text: str) -> Any:
    """JSON text as Python values with exact numbers (non-integers as Decimal)."""
    return json.loads(text, parse_float=Decimal)


def has_duplicate_members(text: str) -> bool:
    """Whether some object of the JSON text names a member twice (a dict cannot say so)."""
    found = []

    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            found.append(True)
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return bool(found)


class Vector:
    """One conformance case."""

    def __init__(self, path: Path, line: str) -> None:
        raw = raw_members(line)
        case = json.loads(line)
        self.file = str(path.relative_to(VECTORS))
        self.id: str = case["id"]
        self.dialect: str = case["dialect"]
        self.expect: str = case["expect"]
        self.error: Optional[str] = case.get("error")
        self.policy_text: str = raw["policy"]
        self.options_text: Optional[str] = raw.get("options")
        self.message_text: Optional[str] = raw.get("message")

    def __repr__(self) -> str:
        return f"{self.file}:{self.id}"


def load_vectors() -> List[Vector]:
    """Every case of conformance/vectors/*.jsonl and conformance/vectors/local/*.jsonl."""
    files = sorted(VECTORS.glob("*.jsonl")) + sorted((VECTORS / "local").glob("*.jsonl"))
    assert files, f"no vector files under {VECTORS} (set FILTERVM_VECTORS)"
    out = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(Vector(path, line))
    return out
