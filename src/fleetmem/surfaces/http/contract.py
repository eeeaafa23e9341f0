"""The rules of /api/v1's query parameters and body fields, written into the OpenAPI document.

The handlers take plain strings and integers and the services check them (so a bad value is
a 400 naming the field, on every surface alike). Left at that, the document would promise
that any string is a repository key and any integer a limit, and a client generating
requests from it (schemathesis does) would have good-looking requests refused. Each rule here
is the service's own rule spelled as JSON Schema, built from the same constants
(:data:`fleetmem.core.scope.REPO_KEY_PATTERN` is the repository-key check itself), so the
document and the server accept exactly the same values.
"""

from __future__ import annotations

from typing import Any

from fleetmem.core import labels
from fleetmem.core.contextfiles import AGENT_FILES, NOTEBOOK, WORKSPACE_FILES
from fleetmem.core.facts import STATUSES
from fleetmem.core.scope import (
    AGENT_NAME_PATTERN,
    MAX_AGENT_NAME_BYTES,
    MAX_REPO_KEY_BYTES,
    MAX_SCOPE_BYTES,
    REPO_KEY_PATTERN,
)
from fleetmem.providers.base import MAX_QUERY_CHARS
from fleetmem.service.activity import CURSOR_PATTERN as ACTIVITY_CURSOR_PATTERN
from fleetmem.service.activity import MAX_LIMIT as ACTIVITY_MAX_LIMIT
from fleetmem.service.fact_reads import CURSOR_PATTERN
from fleetmem.surfaces.http.schemas import VISIBLE_TEXT
from fleetmem.surfaces.http.schemas_facts import SCOPE_PATTERN

REPO_KEY: dict[str, Any] = {
    "type": "string",
    "pattern": f"^{REPO_KEY_PATTERN}$",
    "maxLength": MAX_REPO_KEY_BYTES,
    "description": "a repository key such as github.com/acme/api (ASCII; %XX for other bytes)",
}
AGENT_NAME: dict[str, Any] = {
    "type": "string",
    "pattern": f"^{AGENT_NAME_PATTERN.pattern}$",
    "maxLength": MAX_AGENT_NAME_BYTES,
    "description": "an agent name: lower-case letters, digits, '.', '_', '-'",
}
SCOPE: dict[str, Any] = {
    "type": "string",
    "pattern": SCOPE_PATTERN,
    "maxLength": MAX_SCOPE_BYTES,
    "description": "workspace, project:<repo key> or agent:<name>",
}
FILE_NAME: dict[str, Any] = {
    "type": "string",
    "enum": sorted({spec.slug for spec in (*WORKSPACE_FILES, *AGENT_FILES, NOTEBOOK)}),
    "description": "a context file: workspace, agent (with ?agent=) or project (with ?repo=)",
}
#: A repository-relative path as service/memory_inputs.check_paths takes it: not absolute,
#: no ``..`` segment, no control characters, at most 1,024 characters.
_PATH_CHAR = r"[^\x00-\x1f/]"
_PATH_SEGMENT = (
    rf"(?:[^\x00-\x1f/.]{_PATH_CHAR}*|\.|\.[^\x00-\x1f/.]{_PATH_CHAR}*|\.\.{_PATH_CHAR}+)"
)
REPO_PATH: dict[str, Any] = {
    "type": "string",
    "pattern": rf"^{_PATH_SEGMENT}(?:/(?:{_PATH_SEGMENT})?)*$",
    # Only "." segments ("./", "././.") name the repository itself, not a path inside it.
    "not": {"pattern": r"^\.(?:/+\.)*/*$"},
    "maxLength": 1024,
}
#: A search query: bounded as sent, with one visible character.
QUERY_TEXT: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_QUERY_CHARS,
    "pattern": VISIBLE_TEXT,
}


def _limit(top: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": top}


#: Query and path parameters by name, wherever they appear.
_BY_NAME: dict[str, dict[str, Any]] = {
    "repo": REPO_KEY,
    "agent": AGENT_NAME,
    "to": AGENT_NAME,
    "scope": SCOPE,
    "name": FILE_NAME,
}
#: Parameters whose rule depends on the route: (path, name) -> schema.
_BY_ROUTE: dict[tuple[str, str], dict[str, Any]] = {
    ("/api/v1/facts", "limit"): _limit(500),
    ("/api/v1/facts", "status"): {"type": "string", "enum": ["all", *STATUSES]},
    ("/api/v1/facts", "cursor"): {"type": "string", "pattern": f"^{CURSOR_PATTERN}$"},
    ("/api/v1/facts/search", "limit"): _limit(50),
    ("/api/v1/facts/tidy-up", "limit"): _limit(500),
    ("/api/v1/facts/search", "q"): QUERY_TEXT,
    ("/api/v1/facts/search", "status"): {"type": "string", "enum": ["all", *STATUSES]},
    ("/api/v1/context-files/activity", "limit"): _limit(1000),
    ("/api/v1/activity", "limit"): _limit(ACTIVITY_MAX_LIMIT),
    ("/api/v1/activity", "cursor"): {
        "type": "string",
        "pattern": f"^{ACTIVITY_CURSOR_PATTERN}$",
    },
    ("/api/v1/episodes", "limit"): _limit(1000),
    ("/api/v1/runs", "limit"): _limit(1000),
}


def constrain(document: dict[str, Any]) -> None:
    """Write the parameter rules into ``document`` (FastAPI's OpenAPI dict), in place."""
    for path, operations in document.get("paths", {}).items():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for param in operation.get("parameters", []):
                rule = _BY_ROUTE.get((path, param["name"])) or _BY_NAME.get(param["name"])
                if rule is None:
                    continue
                schema = param.setdefault("schema", {})
                # FastAPI spells ``str | None`` as anyOf [string, null]; a query parameter
                # that is not given is simply absent, so the rule replaces both.
                schema.pop("anyOf", None)
                schema.update(rule)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


#: ``GET /api/v1/episodes?since=``: a single-unit duration back from now, or an RFC 3339
#: date or date-time (the CLI's ``--since`` also takes compound durations such as 1h30m).
SINCE_DURATION = r"[0-9]{1,4}(?:ms|s|m|h|d)|[0-9]{1,3}w"
SINCE: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "pattern": f"^(?:{SINCE_DURATION})$"},
        {"type": "string", "format": "date"},
        {"type": "string", "format": "date-time"},
    ],
    "description": "7d, 12h, 2w, or a date such as 2026-11-01 (or an RFC 3339 date-time)",
}
_BY_NAME["since"] = SINCE


def recall_body() -> dict[str, Any]:
    """``POST /api/v1/recall``: exactly one of repo, agent and ``all_repos: true`` (null and
    false count as absent)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": QUERY_TEXT,
            "repo": _nullable(REPO_KEY),
            "agent": _nullable(AGENT_NAME),
            "all_repos": {"type": "boolean", "description": "every repository with an episode"},
            "paths": {"type": "array", "items": REPO_PATH, "maxItems": 20},
            "limit": _limit(20),
        },
        "oneOf": [
            {"required": ["repo"], "properties": {"repo": REPO_KEY}},
            {"required": ["agent"], "properties": {"agent": AGENT_NAME}},
            {"required": ["all_repos"], "properties": {"all_repos": {"const": True}}},
        ],
    }


def open_run_body() -> dict[str, Any]:
    """``POST /api/v1/runs/open``: the service's own field rules (service/runs.py)."""
    from fleetmem.service import runs

    ident = {"type": "string", "pattern": labels.RULES["ident"].pattern}
    branch = {"type": "string", "pattern": labels.RULES["branch"].pattern}
    adapter = {"type": "string", "pattern": labels.RULES["adapter"].pattern}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["agent"],
        "properties": {
            "agent": AGENT_NAME,
            "repo": _nullable(REPO_KEY),
            "workdir": _nullable({"type": "string", "pattern": "^/[^\\x00]*$"}),
            "branch": _nullable(branch),
            "adapter": _nullable(adapter),
            "run_id": _nullable(ident),
            "source": {"type": "string", "enum": list(runs.SOURCES)},
        },
        "anyOf": [
            {"required": ["repo"], "properties": {"repo": REPO_KEY}},
            {"required": ["workdir"], "properties": {"workdir": {"type": "string"}}},
        ],
    }
