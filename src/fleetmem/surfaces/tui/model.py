"""What each screen shows, as plain rows and lines computed from the API's documents.

Kept apart from the widgets so that what the terminal says can be tested without a terminal,
and so the widgets only lay out what these functions decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Strongest first, as the daemon ranks collisions (fleetmem.service.runs).
_STRENGTHS = ("files", "branch", "repository")

#: One key per review action in the review queue, with the action it sends.
REVIEW_KEYS: Mapping[str, str] = {
    "c": "confirm",
    "e": "evidence",
    "x": "restrict",
    "d": "reject",
    "s": "stale",
}


@dataclass(frozen=True, slots=True)
class AgentRow:
    agent: str
    last_run: str
    last_outcome: str
    live: int
    collisions: str


def agent_rows(
    runs: Sequence[Mapping[str, Any]], live: Sequence[Mapping[str, Any]]
) -> list[AgentRow]:
    """One row per agent seen in recent or live runs, alphabetically."""
    names = sorted({r["agent"] for r in runs} | {r["agent"] for r in live})
    rows = []
    for name in names:
        recorded = [r for r in runs if r["agent"] == name and r.get("state") != "live"]
        last = recorded[0] if recorded else None
        mine = [r for r in live if r["agent"] == name]
        rows.append(
            AgentRow(
                agent=name,
                last_run=(last["run_id"] if last else "-"),
                last_outcome=(
                    f"{last['outcome']} ({last['reason']}) {last['ended_at'] or ''}".strip()
                    if last
                    else "-"
                ),
                live=len(mine),
                collisions=_collisions(mine, live),
            )
        )
    return rows


def _collisions(mine: Sequence[Mapping[str, Any]], live: Sequence[Mapping[str, Any]]) -> str:
    """How many other live runs share a repository with this agent's, and the strongest way."""
    others: dict[str, str] = {}
    for run in mine:
        for other in live:
            if other["run_id"] == run["run_id"] or other["repo"] != run["repo"]:
                continue
            if set(run.get("files") or ()) & set(other.get("files") or ()):
                strength = "files"
            elif run.get("branch") is not None and other.get("branch") == run.get("branch"):
                strength = "branch"
            else:
                strength = "repository"
            before = others.get(other["run_id"], "repository")
            others[other["run_id"]] = min(strength, before, key=_STRENGTHS.index)
    if not others:
        return "-"
    strongest = min(others.values(), key=_STRENGTHS.index)
    return f"{len(others)} ({strongest})"


def overlay_lines(b: Mapping[str, Any]) -> list[str]:
    """The briefing overlay's summary: where, how big against the caps, how delivered."""
    where = b.get("repo") or "no repository"
    if b.get("branch"):
        where += f" on {b['branch']}"
    delivery = (
        "memory_briefing: on - prepended to every run's prompt"
        if b.get("memory_briefing")
        else "memory_briefing: off - the agent pulls it with the briefing tool"
    )
    provider = f"provider: {b['provider']}"
    provider += f" (degraded: {b['degraded']})" if b.get("degraded") else " (ok)"
    size = (
        f"size: {b['chars']:,} / {b['max_chars']:,} characters (briefing_max_chars),"
        f" {b['bytes']:,} / {b['max_bytes']:,} bytes"
    )
    lines = [f"briefing for {b['agent']} in {where}", delivery, provider, size]
    if b.get("empty"):
        lines.append("the briefing is empty: nothing to tell this agent now")
    return lines


def section_rows(b: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """(section, items shown, characters used of its share, dropped) for the overlay table."""
    return [
        (
            s["name"],
            str(s["shown"]),
            f"{s.get('chars', 0):,} / {s.get('budget_chars', 0):,}",
            str(s["omitted"]),
        )
        for s in b.get("sections", ())
    ]


def status_lines(s: Mapping[str, Any]) -> list[str]:
    """The status screen: one ``key: value`` line per scalar, nested tables indented."""
    return list(_flatten(s, 0))


def _flatten(value: Any, depth: int) -> Any:
    pad = "  " * depth
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, Mapping | list) and item:
                yield f"{pad}{key}:"
                yield from _flatten(item, depth + 1)
            else:
                yield f"{pad}{key}: {_scalar(item)}"
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield f"{pad}-"
                yield from _flatten(item, depth + 1)
            else:
                yield f"{pad}- {_scalar(item)}"


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping | list):
        return "none"
    return str(value)
