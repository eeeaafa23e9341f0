"""Every string field of the run-record JSON Schema, found by reading the schema itself.

A field added to the schema later is found here without anyone listing it, so the boundary
tests cover it the day it is added.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from fleetmem.service.runrecords import schema


@dataclass(frozen=True)
class StringField:
    path: str  # "sessions[].events[].path": [] is any array item
    node: dict[str, Any]  # the string schema (pattern, maxLength, enum...)
    event_type: str | None  # for an event field only valid on one event type (edit, verify)


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    target: Any = root
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return _resolve(root, target)


def _is_string(node: dict[str, Any]) -> bool:
    if node.get("type") == "string":
        return True
    values = node.get("enum", [node["const"]] if "const" in node else [])
    return bool(values) and all(isinstance(v, str) for v in values)


def string_fields() -> list[StringField]:
    """All string-valued fields of the schema, by path, each once."""
    root = schema()
    found: dict[str, StringField] = {}

    def walk(node: dict[str, Any], path: str, event_type: str | None) -> None:
        node = _resolve(root, node)
        if _is_string(node):
            found.setdefault(path, StringField(path, node, event_type))
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            walk(branch, path, event_type)
        for part in node.get("allOf", []):
            kind = part.get("if", {}).get("properties", {}).get("type", {}).get("const")
            if "then" in part:
                walk(part["then"], path, kind if isinstance(kind, str) else event_type)
            walk({k: v for k, v in part.items() if k not in ("if", "then")}, path, event_type)
        for name, child in node.get("properties", {}).items():
            walk(child, f"{path}.{name}" if path else name, event_type)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", event_type)

    walk(root, "", None)
    return sorted(found.values(), key=lambda f: f.path)


def base_record(run_id: str) -> dict[str, Any]:
    """A valid record in which every string field of the schema is present."""
    return {
        "version": 1,
        "run_id": run_id,
        "agent": "api-fixer",
        "adapter": "claude-code",
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "model": {"served": "claude-sonnet-4-5", "pinned": "sonnet-4-5", "configured": "sonnet"},
        "trigger": "manual",
        "started_at": "2026-11-28T09:14:03Z",
        "ended_at": "2026-11-28T09:31:47Z",
        "outcome": "failed",
        "reason": "verify_failed",
        "cost": {"usd": 0.42, "source": "reported"},
        "spawned": True,
        "prompt": "Fix the flaky ledger test.",
        "result_text": "Pinned the clock in tests/test_ledger.py.",
        "pull_request": "https://github.com/acme/api/pull/7",
        "sessions": [
            {
                "id": "s1",
                "cwd": "/home/dev/src/api",
                "repo": "github.com/acme/api",
                "branch": "fix/flaky-ledger",
                "events": [
                    {"type": "edit", "path": "billing/ledger.py", "at": "2026-11-28T09:15:00Z"},
                    {"type": "verify", "passed": False, "error_class": "test_failure"},
                    {"type": "tool_call", "name": "bash", "args": {"cmd": "pytest -q"}},
                ],
            },
            {"id": "s2", "parent_id": "s1", "subagent": True, "cwd": "/home/dev/src/api",
             "repo": "github.com/acme/api", "events": [{"type": "edit", "path": "docs/x.md"}]},
        ],
    }  # fmt: skip


def _containers(record: dict[str, Any], parts: list[str], event_type: str | None) -> Any:
    """The object holding the field at ``parts`` (all but the last name), first match."""
    node: Any = record
    for part in parts:
        many = part.endswith("[]")
        node = node[part.removesuffix("[]")]
        if many:
            if part == "events[]" and event_type is not None:
                node = next(e for e in node if e["type"] == event_type)
            else:
                node = node[0]
    return node


def with_value(
    record: dict[str, Any], field: StringField, value: str
) -> tuple[dict[str, Any], str]:
    """A copy of ``record`` with ``value`` at ``field``; and the field's concrete name as an
    error would give it (``sessions[0].events[1].error_class``)."""
    data = copy.deepcopy(record)
    parts = field.path.split(".")
    holder = _containers(data, parts[:-1], field.event_type)
    holder[parts[-1]] = value
    concrete = []
    node: Any = data
    for part in parts[:-1]:
        name = part.removesuffix("[]")
        node_list = node[name]
        if part.endswith("[]"):
            index = next(i for i, item in enumerate(node_list) if _holds(item, holder))
            concrete.append(f"{name}[{index}]")
            node = node_list[index]
        else:
            concrete.append(name)
            node = node_list
    concrete_name = ".".join([*concrete, parts[-1]])
    return data, concrete_name


def _holds(item: Any, target: Any) -> bool:
    if item is target:
        return True
    if isinstance(item, dict):
        return any(_holds(v, target) for v in item.values())
    if isinstance(item, list):
        return any(_holds(v, target) for v in item)
    return False


def base_value(record: dict[str, Any], field: StringField) -> str:
    parts = field.path.split(".")
    holder = _containers(record, parts[:-1], field.event_type)
    value = holder.get(parts[-1], "")
    return value if isinstance(value, str) else ""
