"""Runs as the services return them: a live run as presence shows it, and a stored run with
its sessions and events as ``runs show`` and the recall's recent runs show them. Built from
the run store's rows here, so the surfaces never see the store's columns."""

from __future__ import annotations

from dataclasses import dataclass

from fleetmem.service.records import project
from fleetmem.store.base import EventRow, RunRow, SessionRow
from fleetmem.store.runs import LiveRunRow


@dataclass(frozen=True, slots=True)
class LiveRunInfo:
    """A run opened and not yet closed by its record (or closed since): where it works,
    when it was last heard from, and the files it edited. ``source`` says what opened it
    (``fleetmem run``, a hook, the API); ``close_reason`` is ``record`` or ``expired``."""

    run_id: str
    agent: str
    adapter: str | None
    repo: str | None
    branch: str | None
    workdir: str | None
    source: str
    opened_at: float
    last_seen_at: float
    closed_at: float | None
    close_reason: str | None
    files: tuple[str, ...]


def live_run_of(row: LiveRunRow) -> LiveRunInfo:
    return project(LiveRunInfo, row)


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run whose record was ingested: who ran it, where, how it ended, and whether its
    episode was written (``episode_status``)."""

    run_id: str
    agent: str
    adapter: str
    model: str | None
    trigger: str
    repo: str | None
    branch: str | None
    started_at: float
    ended_at: float
    outcome: str
    reason: str
    pull_request: str | None
    episode_status: str


def stored_run_of(row: RunRow) -> StoredRun:
    return project(StoredRun, row)


@dataclass(frozen=True, slots=True)
class RunSession:
    """One agent session of a stored run; ``parent_id`` names the session that started a
    subagent's."""

    session_id: str
    parent_id: str | None
    subagent: bool
    cwd: str
    repo: str | None
    branch: str | None


def session_of(row: SessionRow) -> RunSession:
    return project(RunSession, row)


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One event of a session, in order: ``type`` is ``edit`` or ``verify``; ``path`` is the
    file an edit touched (None for a verification)."""

    session_id: str
    type: str
    path: str | None


def event_of(row: EventRow) -> RunEvent:
    return project(RunEvent, row)
