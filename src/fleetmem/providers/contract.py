"""The episode-provider contract, version 1 (seed 000 REQ-3): four MCP tools and their schemas.

The JSON Schemas ship as package data (``fleetmem/schemas/provider/<tool>.<input|output>.json``)
and are printed by ``fleetmem provider schema``. Every response is checked here:

* a response that fails its schema outside the items of a recall is a provider error
  (:class:`ContractViolation`);
* a recall item that breaks its bounds (text over 2,000 characters, id over 128, a score that
  is not a finite number, a wrong type) is only *invalid*: it is dropped and counted, and the
  rest of the answer is used.

Messages name tools, fields and schema keywords only, never values: a value may be provider
text, and logs carry ids, sizes and outcomes only.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from fleetmem.core.redact import redact

if TYPE_CHECKING:  # jsonschema costs ~0.1 s to import: loaded when a call is first checked
    import jsonschema

CONTRACT_VERSION: Final = 1
SUPPORTED_CONTRACTS: Final = frozenset({1})
TOOLS: Final = ("memory_contract", "memory_record_episode", "memory_recall", "memory_forget")
DIRECTIONS: Final = ("input", "output")

#: Only these values of a recall's optional ``degraded`` field are carried to the caller.
KNOWN_DEGRADED: Final = frozenset({"embeddings_unavailable"})


class ContractViolation(Exception):
    """A response failed its schema as a whole (or a tool answered with an error)."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"{tool}: {reason}")
        self.tool = tool
        self.reason = reason


@functools.cache
def schema(tool: str, direction: str) -> Mapping[str, Any]:
    """The JSON Schema of ``tool``'s ``input`` or ``output``."""
    if tool not in TOOLS or direction not in DIRECTIONS:
        raise KeyError(f"{tool}.{direction}")
    path = resources.files("fleetmem").joinpath(f"schemas/provider/{tool}.{direction}.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def all_schemas() -> dict[str, dict[str, Mapping[str, Any]]]:
    """Every schema, by tool then direction, in contract order."""
    return {tool: {d: schema(tool, d) for d in DIRECTIONS} for tool in TOOLS}


@functools.cache
def _validator(tool: str, direction: str) -> jsonschema.protocols.Validator:
    from jsonschema.validators import validator_for

    body = schema(tool, direction)
    cls = validator_for(body)
    return cls(body)


@functools.cache
def _passes(tool: str, direction: str) -> Callable[[object], object]:
    """``tool``'s schema compiled to Python by fastjsonschema: raises on the first problem.

    Every recall answer is checked; jsonschema took ~0.3 ms over eight items (it resolves
    ``$ref`` and builds an error tree as it goes), this ~0.02. Only a verdict: an answer it
    rejects is checked again by jsonschema, which names every problem and each item's.
    """
    import fastjsonschema

    body = dict(schema(tool, direction))
    # fastjsonschema knows drafts 4, 6 and 7 by URI; these schemas use nothing that reads
    # differently between draft 7 and 2020-12 (a test compares the two verdicts).
    body.pop("$schema", None)
    compiled: Callable[[object], object] = fastjsonschema.compile(body)
    return compiled


def _where(path: Sequence[object]) -> str:
    return "/".join(str(p) for p in path) or "<root>"


def schema_problems(tool: str, direction: str, data: object) -> list[str]:
    """Every place ``data`` breaks the schema, as ``path: keyword`` (no values)."""
    errors = _validator(tool, direction).iter_errors(data)  # type: ignore[arg-type]
    return sorted(f"{_where(list(e.absolute_path))}: {e.validator}" for e in errors)


@dataclass(frozen=True, slots=True)
class CheckedResponse:
    """A response that passed its schema as a whole; ``invalid_items`` are recall item indexes."""

    data: Mapping[str, Any]
    invalid_items: frozenset[int] = frozenset()
    problems: tuple[str, ...] = ()


def check_response(tool: str, data: object) -> CheckedResponse:
    """Validate one tool response; raise :class:`ContractViolation` if it fails as a whole."""
    if not isinstance(data, dict):
        raise ContractViolation(tool, "the response is not a JSON object")
    invalid: set[int] = set()
    problems: list[str] = []
    for error in _schema_errors(tool, data):
        path = list(error.absolute_path)
        where = f"{_where(path)}: {error.validator}"
        problems.append(where)
        in_item = len(path) >= 2 and path[0] == "items" and isinstance(path[1], int)
        if tool == "memory_recall" and in_item:
            invalid.add(int(path[1]))
            continue
        raise ContractViolation(tool, f"the response fails its schema at {where}")
    if tool == "memory_recall":
        for index, item in enumerate(data.get("items") or ()):
            score = item.get("score") if isinstance(item, dict) else None
            if isinstance(score, float) and not math.isfinite(score):
                invalid.add(index)
                problems.append(f"items/{index}/score: finite")
    return CheckedResponse(data=data, invalid_items=frozenset(invalid), problems=tuple(problems))


def _schema_errors(tool: str, data: Mapping[str, Any]) -> Iterator[Any]:
    """jsonschema's errors of ``tool``'s answer; none, without running it, for an answer the
    compiled schema passes."""
    from fastjsonschema import JsonSchemaValueException

    try:
        _passes(tool, "output")(data)
    except JsonSchemaValueException:
        yield from _validator(tool, "output").iter_errors(data)


def payload_of(
    tool: str, *, is_error: bool, structured: object, texts: Sequence[str]
) -> dict[str, Any]:
    """The JSON object a tool answered, from its text content or its structured content.

    Providers answer either way (a tool returning a plain dict comes back as JSON text with no
    structured content). The text is preferred when it holds a JSON object: it is what the
    provider wrote, while structured content has been through a serializer that turns a
    non-finite score into null, and such a score must be seen to be dropped.
    """
    if is_error:
        message = error_text(texts) or "no message"
        raise ContractViolation(tool, f"the tool answered with an error: {message}")
    for text in texts:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    if isinstance(structured, dict):
        return dict(structured)
    raise ContractViolation(tool, "the response holds no JSON object")


def error_text(texts: Sequence[str], limit: int = 200) -> str:
    """A tool error's own message: redacted, on one line, bounded. The provider wrote it, so
    it is treated like any text from outside before a log line or a report carries it."""
    joined = " ".join(t.strip() for t in texts if t.strip())
    return " ".join(redact(joined).split())[:limit]


# ---- canonical requests ---------------------------------------------------------------------


def record_request(
    episode_id: str, scope: str, trust_class: str, episode: Mapping[str, Any], text: str
) -> dict[str, Any]:
    """The arguments of ``memory_record_episode``."""
    return {
        "episode_id": episode_id,
        "scope": scope,
        "trust_class": trust_class,
        "episode": dict(episode),
        "text": text,
    }


def recall_request(
    query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
) -> dict[str, Any]:
    """The arguments of ``memory_recall``; ``paths`` is left out when there are none."""
    args: dict[str, Any] = {"query": query, "scope": list(scopes), "limit": limit}
    if paths:
        args["paths"] = list(paths)
    return args


def forget_request(provider_id: str) -> dict[str, Any]:
    """The arguments of ``memory_forget``."""
    return {"id": provider_id}
