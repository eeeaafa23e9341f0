"""Prompt templates: ``{{name}}`` variables from the run, event fields only when fenced.

Pure: parsing and rendering take everything they need as arguments. A template is text with
placeholders:

- ``{{agent}}``, ``{{run_id}}``, ``{{repo}}``, ``{{branch}}``, ``{{workdir}}``, ``{{date}}``,
  ``{{trigger}}``: values fleetmem knows about the run (an unknown value renders empty);
- ``{{untrusted event.FIELD}}``: a field of the event that started the run (a webhook's
  payload, say). Text no operator wrote, so it is only ever rendered inside a nonce fence,
  and only for an agent with ``untrusted_inline = true`` (``memory_briefing`` does not open
  it). A bare ``{{event.FIELD}}`` is refused so the fence cannot be forgotten.

Anything else between ``{{`` and ``}}``, or a ``{{`` that is never closed, is an error naming
what was found. There is no escape syntax: a prompt that needs literal braces goes in
``prompt`` or ``prompt_file``, which are never templated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

VARIABLES: Final = frozenset({"agent", "run_id", "repo", "branch", "workdir", "date", "trigger"})

_PLACEHOLDER: Final = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_NAME: Final = re.compile(r"[a-z_]+")
_EVENT: Final = re.compile(r"untrusted\s+event\.([a-z0-9_]{1,64}(?:\.[a-z0-9_]{1,64}){0,4})")
_BARE_EVENT: Final = re.compile(r"event\.[A-Za-z0-9_.]*")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


class TemplateError(ValueError):
    """A template that cannot be used as written; the message says why."""


@dataclass(frozen=True, slots=True)
class Placeholder:
    """One ``{{...}}``: a run variable (``event`` is None) or an untrusted event field."""

    start: int
    end: int
    variable: str | None = None
    event: str | None = None


def parse(template: str) -> tuple[Placeholder, ...]:
    """The placeholders of ``template`` in order; TemplateError for anything unknown."""
    found: list[Placeholder] = []
    cursor = 0
    for match in _PLACEHOLDER.finditer(template):
        stray = template.find("{{", cursor, match.start())
        if stray != -1:
            raise TemplateError(f"'{{{{' at offset {stray} is never closed")
        cursor = match.end()
        inner = match.group(1).strip()
        event = _EVENT.fullmatch(inner)
        if event is not None:
            found.append(Placeholder(match.start(), match.end(), event=event.group(1)))
        elif _BARE_EVENT.fullmatch(inner):
            raise TemplateError(
                f"{{{{{inner}}}}}: event fields are text no operator wrote; write "
                f"{{{{untrusted {inner}}}}} (it needs untrusted_inline = true)"
            )
        elif _NAME.fullmatch(inner) and inner in VARIABLES:
            found.append(Placeholder(match.start(), match.end(), variable=inner))
        else:
            shown = inner if len(inner) <= 40 else inner[:40] + "..."
            known = ", ".join(sorted(VARIABLES))
            raise TemplateError(f"unknown placeholder {{{{{shown}}}}}; known: {known}")
    if template.find("{{", cursor) != -1:
        raise TemplateError(f"'{{{{' at offset {template.find('{{', cursor)} is never closed")
    return tuple(found)


def uses_untrusted(template: str) -> bool:
    """True when ``template`` reads an event field (so the agent needs untrusted_inline)."""
    return any(p.event is not None for p in parse(template))


def render(
    template: str,
    variables: Mapping[str, str | None],
    *,
    event: Mapping[str, object] | None = None,
    fence: Callable[[str, str], str] | None = None,
) -> str:
    """``template`` with its placeholders filled.

    Run variables lose control characters (a newline in a branch name cannot start a new
    line of instructions). Each event field is passed, with its dotted name, to ``fence``,
    which returns the fenced block; without an event (a manual run) a field renders empty,
    and without ``fence`` an event field is refused.
    """
    pieces: list[str] = []
    cursor = 0
    for p in parse(template):
        pieces.append(template[cursor : p.start])
        cursor = p.end
        if p.variable is not None:
            value = variables.get(p.variable) or ""
            pieces.append(_CONTROL.sub("", value))
            continue
        assert p.event is not None
        if fence is None:
            raise TemplateError(f"event.{p.event} needs a fence to be rendered")
        field = _lookup(event, p.event) if event is not None else None
        pieces.append(fence(p.event, field) if field else "")
    pieces.append(template[cursor:])
    return "".join(pieces)


def _lookup(event: Mapping[str, object], dotted: str) -> str | None:
    node: object = event
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if node is None or isinstance(node, (dict, list)):
        return None
    return str(node)
