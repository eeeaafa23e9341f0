"""Hostile documents for the bad-input suite, generated fresh each run.

Each case is raw bytes plus the field the refusal must name. The random parts (which numeric
field holds the NaN, how deep the nesting goes, what the strings say) change every run, so
the suite does not pass by knowing a fixed list.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetmem.core.strictjson import MAX_DEPTH
from tests.conftest import make_record

RNG = random.Random()  # seeded from the OS: fresh values every run


@dataclass(frozen=True)
class Case:
    name: str
    raw: bytes
    fields: tuple[str, ...]  # the error's ``field`` must start with one of these


def _word() -> str:
    return "".join(RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(RNG.randint(4, 12)))


def _record(**overrides: Any) -> dict[str, Any]:
    return make_record(run_id=f"bad-{_word()}", **overrides)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8")


def _nested(depth: int) -> str:
    kind = RNG.choice(["list", "object"])
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def record_cases(max_bytes: int) -> list[Case]:
    """Run records (``POST /api/v1/runs``, ``fleetmem runs ingest``) that must be refused."""
    spelling = RNG.choice(["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
    with_cost = _dumps(_record(cost={"usd": 1.5, "source": "reported"}))
    nan_record = with_cost.replace(b'"usd": 1.5', b'"usd": ' + spelling.encode())
    depth = RNG.choice([MAX_DEPTH + 1 + RNG.randint(0, 50), RNG.randint(900, 5000)])
    deep = _dumps(_record()).replace(b'"version": 1', b'"version": ' + _nested(depth).encode())
    surrogate = _dumps(_record(prompt="PLACEHOLDER")).replace(
        b'"PLACEHOLDER"', f'"{_word()}\\u{RNG.randint(0xD800, 0xDFFF):04x}"'.encode()
    )
    repeated = _dumps(_record()).replace(b'"version": 1', b'"version": 1, "version": 1')
    huge = _dumps(_record(prompt="x" * (max_bytes + RNG.randint(1, 4096))))
    return [
        Case("empty", b"", ("<record>",)),
        Case("whitespace", b" \n\t ", ("<record>",)),
        Case("not an object", _dumps([_word(), RNG.randint(0, 9)]), ("<record>",)),
        Case("wrong type", _dumps(_record(spawned=_word())), ("spawned",)),
        # Names stay fixed (pytest-xdist workers must collect the same ids); values are fresh.
        Case("non-finite number", nan_record, ("cost.usd",)),
        # Deep enough to stop the parser itself, the document is named; otherwise the field.
        Case("nested deep", deep, ("<record>", "version")),
        Case("lone surrogate", surrogate, ("prompt",)),
        Case("repeated key", repeated, ("version",)),
        Case(
            "big integer", _dumps(_record(cost={"usd": 2**70, "source": "reported"})), ("cost.usd",)
        ),
        Case("overlong utf-8", b'{"run_id": "\xc0\xaf' + _word().encode() + b'"}', ("<record>",)),
        Case("huge", huge, ("<record>", "<body>")),
        Case("bad agent", _dumps(_record(agent=_word().upper())), ("agent",)),
    ]


def body_cases() -> list[Case]:
    """JSON bodies for a small route (``POST /api/v1/facts``) that must be refused."""
    text = f"{_word()} {_word()}"
    spelling = RNG.choice(["NaN", "Infinity", "-Infinity"])
    bom = "\ufeff" + json.dumps({"body": text})
    return [
        Case("BOM", bom.encode("utf-8"), ("<body>",)),
        Case("non-finite flag", f'{{"body": "{text}", "pin": {spelling}}}'.encode(), ("pin",)),
        Case(
            "nested",
            f'{{"body": "{text}", "source": {_nested(RNG.randint(40, 3000))}}}'.encode(),
            ("<body>", "source"),
        ),
        Case("huge", _dumps({"body": "y" * (2 * 1024 * 1024)}), ("<body>",)),
        Case("wrong type", _dumps({"body": RNG.randint(1, 10**6)}), ("body",)),
        Case("bad scope", _dumps({"body": text, "scope": f"agent:{_word().upper()}"}), ("scope",)),
        Case(
            "lone surrogate",
            f'{{"body": "{text}\\udc{RNG.randint(0, 255):02x}"}}'.encode(),
            ("body",),
        ),
        Case("not JSON", b"{" + _word().encode() + b":", ("<body>",)),
        Case("array", _dumps([text]), ("<body>",)),
    ]


def store_digest(home: Path) -> str:
    """Every row of every table of the home's database, hashed; WAL content included (the
    reader sees committed WAL frames)."""
    db = sqlite3.connect(f"file:{home / 'fleetmem.db'}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in sorted(tables):
            if table.startswith("sqlite_") or "_fts" in table:
                continue
            rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
            digest.update(f"{table}:{len(rows)}:{sorted(map(repr, rows))}".encode())
        return digest.hexdigest()
    finally:
        db.close()
