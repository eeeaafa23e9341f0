"""Statements people already keep elsewhere, read out of the files other tools write.

Pure parsing only: each reader turns a file's text into candidate fact bodies, in file order,
with the line each came from. Nothing here decides whether a statement is kept; the fact
service proposes every candidate for review, where a person accepts or rejects it.

Readers:

* ``claude-md``: Claude Code's memory files (``CLAUDE.md``, ``CLAUDE.local.md``, the
  auto-memory ``MEMORY.md``): every list item and every paragraph outside code blocks becomes
  one candidate. Headings, tables, HTML comments, ``@path`` import lines and front matter are
  structure, not statements, and are passed over.
* ``memory-json``: the knowledge graph of the MCP reference memory server (``memory.json``,
  one JSON object per line: entities with observations, and relations; older versions wrote
  one object with ``entities`` and ``relations`` lists). Each observation becomes
  "ENTITY (TYPE): observation" and each relation "FROM relation TO".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

FORMATS: tuple[str, ...] = ("claude-md", "memory-json")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One statement found in a file."""

    body: str
    line: int


class UnreadableImport(ValueError):
    """The file is not in the format it was read as; ``line`` says where (1-based)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.*)$")
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_TABLE = re.compile(r"^\s*\|")
_IMPORT = re.compile(r"^\s*@\S+\s*$")
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"
_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"(\*\*|__)(.+?)\1")


def read_claude_md(text: str) -> list[Candidate]:
    """Candidates from a Claude Code memory file (see the module docstring)."""
    found: list[Candidate] = []
    paragraph: list[str] = []
    start = 0
    in_code = in_comment = False
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter, as auto-memory files have
        closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if closing is not None:
            lines = [""] * (closing + 1) + lines[closing + 1 :]

    def flush() -> None:
        if paragraph:
            _keep(found, " ".join(paragraph), start)
            paragraph.clear()

    for number, line in enumerate(lines, 1):
        if in_comment:
            in_comment = _COMMENT_CLOSE not in line
            continue
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.lstrip().startswith(_COMMENT_OPEN):
            flush()
            in_comment = _COMMENT_CLOSE not in line
            continue
        if not line.strip() or _HEADING.match(line) or _RULE.match(line):
            flush()
            continue
        if _TABLE.match(line) or _IMPORT.match(line):
            flush()
            continue
        item = _ITEM.match(line)
        if item is not None:
            flush()
            paragraph.append(item.group("text"))
            start = number
            continue
        if not paragraph:
            start = number
        paragraph.append(line.strip())
    flush()
    return found


def _keep(found: list[Candidate], text: str, line: int) -> None:
    body = _SPACE.sub(" ", _MARKUP.sub(r"\2", text)).strip()
    if len(body) >= 3 and any(ch.isalpha() for ch in body):
        found.append(Candidate(body, line))


def read_memory_json(text: str) -> list[Candidate]:
    """Candidates from an MCP memory server's ``memory.json`` (either layout)."""
    found: list[Candidate] = []
    for number, item in _graph_items(text):
        kind = item.get("type")
        if kind == "entity" or ("observations" in item and "name" in item):
            name = _label(item.get("name"), number, "name")
            entity_type = item.get("entityType")
            label = f"{name} ({entity_type})" if isinstance(entity_type, str) else name
            observations = item.get("observations") or []
            if not isinstance(observations, list):
                raise UnreadableImport(number, "observations must be a list of strings")
            for observation in observations:
                if isinstance(observation, str) and observation.strip():
                    _keep(found, f"{label}: {observation.strip()}", number)
        elif kind == "relation" or "relationType" in item:
            source = _label(item.get("from"), number, "from")
            target = _label(item.get("to"), number, "to")
            relation = _label(item.get("relationType"), number, "relationType")
            _keep(found, f"{source} {relation.replace('_', ' ')} {target}", number)
        else:
            raise UnreadableImport(number, "is neither an entity nor a relation")
    return found


def _graph_items(text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    stripped = text.strip()
    if not stripped:
        return
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and ("entities" in whole or "relations" in whole):
        for key in ("entities", "relations"):
            items = whole.get(key) or []
            if not isinstance(items, list):
                raise UnreadableImport(1, f"{key} must be a list")
            for item in items:
                if not isinstance(item, dict):
                    raise UnreadableImport(1, f"every item of {key} must be an object")
                yield 1, {"type": key[:-1], **item}
        return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UnreadableImport(number, f"is not JSON ({exc.msg})") from exc
        if not isinstance(item, dict):
            raise UnreadableImport(number, "must be a JSON object")
        yield number, item


def _label(value: object, line: int, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UnreadableImport(line, f"{name} must be a non-empty string")
    return value.strip()


def read_candidates(fmt: str, text: str) -> list[Candidate]:
    """Candidates from ``text`` read as ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "claude-md":
        return read_claude_md(text)
    if fmt == "memory-json":
        return read_memory_json(text)
    raise ValueError(f"unknown import format {fmt!r}")
