"""Run records as typed, immutable values.

A run record arrives as JSON and is first validated against the shipped JSON Schema
(``fleetmem.runrecords`` does that, outside core). This module turns a validated mapping
into frozen dataclasses and applies the checks a schema cannot express (time order).
It never sees the filesystem or the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from fleetmem.errors import InvalidRunRecord

Outcome = Literal["succeeded", "failed", "cancelled", "timed_out", "crashed"]
TrustClass = Literal["standard", "untrusted_input"]


@dataclass(frozen=True, slots=True)
class EditEvent:
    path: str


@dataclass(frozen=True, slots=True)
class VerifyEvent:
    passed: bool
    error_class: str


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    parent_id: str | None
    subagent: bool
    cwd: str
    repo: str | None
    branch: str | None
    edits: tuple[EditEvent, ...]
    verifies: tuple[VerifyEvent, ...]

    @property
    def is_subagent(self) -> bool:
        """A session with a parent is a subagent's even when the flag was left out."""
        return self.subagent or self.parent_id is not None


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    agent: str
    adapter: str
    trace_id: str | None
    model_served: str | None
    model_pinned: str | None
    model_configured: str | None
    trigger: str
    started_at: datetime
    ended_at: datetime
    outcome: Outcome
    reason: str
    cost_usd: float | None
    cost_source: str
    result_text: str
    spawned: bool
    prompt: str | None
    sessions: tuple[Session, ...]
    pull_request: str | None

    @property
    def model(self) -> str | None:
        """The served model, else the pinned one, else the configured one."""
        return self.model_served or self.model_pinned or self.model_configured

    @property
    def duration_ms(self) -> int:
        return int((self.ended_at - self.started_at).total_seconds() * 1000)

    @property
    def externally_triggered(self) -> bool:
        """Webhook and channel triggers carry text that no operator wrote."""
        return self.trigger.startswith(("webhook:", "channel:"))


def parse_timestamp(field: str, text: str) -> datetime:
    """An RFC 3339 timestamp as an aware UTC datetime; naive input is refused."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidRunRecord(field, text, "not an RFC 3339 timestamp") from exc
    if value.tzinfo is None:
        raise InvalidRunRecord(field, text, "timestamp needs a time zone offset or Z")
    return value.astimezone(UTC)


def _session(index: int, raw: Mapping[str, Any]) -> Session:
    edits: list[EditEvent] = []
    verifies: list[VerifyEvent] = []
    # Only two event types matter to memory; everything else (tool calls, messages,
    # payloads) is deliberately dropped here so it can never reach an episode.
    for event in raw.get("events", ()):
        kind = event.get("type")
        if kind == "edit":
            edits.append(EditEvent(path=event["path"]))
        elif kind == "verify":
            verifies.append(
                VerifyEvent(passed=event["passed"], error_class=event.get("error_class", "unknown"))
            )
    return Session(
        id=raw["id"],
        parent_id=raw.get("parent_id"),
        subagent=bool(raw.get("subagent", False)),
        cwd=raw["cwd"],
        repo=raw.get("repo"),
        branch=raw.get("branch"),
        edits=tuple(edits),
        verifies=tuple(verifies),
    )


def from_validated(data: Mapping[str, Any]) -> RunRecord:
    """Build a RunRecord from a mapping that already passed the JSON Schema."""
    started = parse_timestamp("started_at", data["started_at"])
    ended = parse_timestamp("ended_at", data["ended_at"])
    if ended < started:
        raise InvalidRunRecord("ended_at", data["ended_at"], "is before started_at")
    sessions_raw: Sequence[Mapping[str, Any]] = data.get("sessions", ())
    ids = [s["id"] for s in sessions_raw]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InvalidRunRecord("sessions[].id", dup, "session ids must be unique within a run")
    model = data.get("model") or {}
    cost = data.get("cost")
    return RunRecord(
        run_id=data["run_id"],
        agent=data["agent"],
        adapter=data["adapter"],
        trace_id=data.get("trace_id"),
        model_served=model.get("served"),
        model_pinned=model.get("pinned"),
        model_configured=model.get("configured"),
        trigger=data["trigger"],
        started_at=started,
        ended_at=ended,
        outcome=data["outcome"],
        reason=data["reason"],
        cost_usd=float(cost["usd"]) if cost else None,
        cost_source=cost["source"] if cost else "unknown",
        result_text=data.get("result_text", ""),
        spawned=data["spawned"],
        prompt=data.get("prompt"),
        sessions=tuple(_session(i, s) for i, s in enumerate(sessions_raw)),
        pull_request=data.get("pull_request"),
    )
