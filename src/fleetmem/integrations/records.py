"""From what a run did to its run record: the outcome vocabulary and the record itself.

Outcome rules (first match wins; docs/agents.md has the table):

1. the process could not be started: ``crashed`` / ``spawn_failed`` (no episode);
2. the run's ``timeout`` passed and fleetmem stopped it: ``timed_out`` / ``deadline``;
3. the operator stopped ``fleetmem run`` (SIGINT, SIGTERM): ``cancelled`` / ``operator_cancelled``;
4. a signal fleetmem did not send killed it: ``crashed`` / ``killed``;
5. the agent's stream reported a failure: ``failed`` with that reason (``model_error``,
   ``budget_exceeded``, ``agent_error``...);
6. its last verification failed: ``failed`` / ``verify_failed`` (checks still failed at the end);
7. a non-zero exit status: ``failed`` / ``agent_error``;
8. otherwise ``succeeded`` / ``completed``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fleetmem.core import labels
from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation
from fleetmem.integrations.verify import PatternLike, classify

MAX_PROMPT_CHARS = 1_048_576


@dataclass(frozen=True, slots=True)
class ProcessEnd:
    """How one agent process ended."""

    returncode: int | None = None
    spawn_error: str | None = None
    timed_out: bool = False
    cancelled: bool = False
    #: The process is gone and nothing said how it ended (a hooked session whose agent died
    #: before its SessionEnd hook).
    vanished: bool = False

    @property
    def signal(self) -> int | None:
        code = self.returncode
        return -code if code is not None and code < 0 else None


@dataclass(frozen=True, slots=True)
class Verify:
    passed: bool
    error_class: str
    subagent: bool = False


def check_of(run: CommandRun, patterns: Sequence[PatternLike] = ()) -> Verify | None:
    """The verify event of a command run, or None when it is not a verification."""
    # What an agent's stream reports is outside input: an error class outside the label's set
    # is not passed on (the record would be refused and the run lost), it becomes "unknown".
    reported = run.error_class and (labels.coerce("error_class", run.error_class) or "unknown")
    error_class = reported or classify(run.command, patterns)
    return None if error_class is None else Verify(not run.failed, error_class, run.subagent)


def verifications(
    commands: Sequence[CommandRun], patterns: Sequence[PatternLike] = ()
) -> list[Verify]:
    """The verify events among ``commands``: tests, builds, linters and type checks."""
    return [v for run in commands if (v := check_of(run, patterns)) is not None]


def decide_outcome(
    end: ProcessEnd, observation: Observation, checks: Sequence[Verify]
) -> tuple[str, str]:
    """``(outcome, reason)`` in the run-record vocabulary, by the rules above."""
    if end.spawn_error is not None:
        return "crashed", "spawn_failed"
    if end.timed_out:
        return "timed_out", "deadline"
    if end.cancelled:
        return "cancelled", "operator_cancelled"
    if end.signal is not None:
        return "crashed", "killed"
    if end.vanished:
        return "crashed", "unknown"
    if observation.failure is not None:
        return "failed", observation.failure
    main_checks = [c for c in checks if not c.subagent]
    if main_checks and not main_checks[-1].passed:
        return "failed", "verify_failed"
    if end.returncode not in (0, None):
        return "failed", "agent_error"
    return "succeeded", "completed"


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _model(value: str | None) -> str | None:
    # A model name the agent's stream (or a provider) reports: kept only when it is a valid
    # model label, so an odd one costs the label, not the whole run record.
    return labels.coerce("model", value)


def _session_id(value: str | None, fallback: str) -> str:
    if value and len(value) <= 200 and labels.coerce("ident", value) is not None:
        return value
    return fallback


@dataclass(frozen=True, slots=True)
class SessionPart:
    """One agent process (or interactive session) of a run, with what it did."""

    observation: Observation
    cwd: str
    patterns: tuple[PatternLike, ...] = ()
    extra_edits: tuple[str, ...] = ()  # from git: absolute paths


def session_dicts(run_id: str, parts: Sequence[SessionPart]) -> list[dict[str, Any]]:
    """The record's sessions: one per part, plus one per part whose subagents acted."""
    sessions: list[dict[str, Any]] = []
    used: set[str] = set()
    for n, part in enumerate(parts):
        sid = _session_id(part.observation.session_id, f"{run_id}-{n + 1}")
        while sid in used:
            sid = f"{sid}-{n + 1}"
        used.add(sid)
        main: list[dict[str, Any]] = []
        sub: list[dict[str, Any]] = []
        for event in part.observation.events:
            target = sub if event.subagent else main
            if isinstance(event, Edit):
                if 0 < len(event.path) <= 4096:
                    target.append({"type": "edit", "path": event.path})
            elif (check := check_of(event, part.patterns)) is not None:
                target.append(
                    {"type": "verify", "passed": check.passed, "error_class": check.error_class}
                )
        seen = {_normal(e["path"], part.cwd) for e in main if e["type"] == "edit"}
        for path in part.extra_edits:
            if _normal(path, part.cwd) not in seen and 0 < len(path) <= 4096:
                main.append({"type": "edit", "path": path, "source": "git"})
        sessions.append({"id": sid, "cwd": part.cwd, "events": main})
        if sub:
            sessions.append(
                {"id": f"{sid}-subagents", "parent_id": sid, "subagent": True, "cwd": part.cwd,
                 "events": sub}
            )  # fmt: skip
    return sessions


def _normal(path: str, cwd: str) -> str:
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))


def build_record(
    *,
    run_id: str,
    agent: str,
    adapter: str,
    started_at: float,
    ended_at: float,
    outcome: tuple[str, str],
    parts: Sequence[SessionPart],
    spawned: bool,
    prompt: str | None,
    configured_model: str | None = None,
    trigger: str = "manual",
) -> dict[str, Any]:
    """A run record (docs/run-record.md) from the parts of a run; validated at ingest."""
    last = parts[-1].observation if parts else Observation()
    served = next((p.observation.model for p in reversed(parts) if p.observation.model), None)
    record: dict[str, Any] = {
        "version": 1,
        "run_id": run_id,
        "agent": agent,
        "adapter": adapter,
        "trigger": trigger,
        "started_at": rfc3339(started_at),
        "ended_at": rfc3339(max(ended_at, started_at)),
        "outcome": outcome[0],
        "reason": outcome[1],
        "spawned": spawned,
        "sessions": session_dicts(run_id, parts),
    }
    model = {"served": _model(served), "configured": _model(configured_model)}
    if any(model.values()):
        record["model"] = {k: v for k, v in model.items() if v}
    costs = [p.observation.cost_usd for p in parts if p.observation.cost_usd is not None]
    if costs:
        record["cost"] = {"usd": round(sum(costs), 6), "source": "reported"}
    if last.result_text:
        record["result_text"] = last.result_text
    if prompt is not None:
        record["prompt"] = prompt[:MAX_PROMPT_CHARS]
    return record
