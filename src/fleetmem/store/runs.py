"""What the runs service needs from persistence: live runs, and reads over stored runs.

A live run is one that has been opened (by ``fleetmem run``, a hook or the API) and not yet
closed by its run record; it may have gone silent (expired). Stored runs are the run records
already ingested (``runs``, ``sessions``, ``events``). Times are UNIX seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

from fleetmem.store.base import EventRow, RunRow, SessionRow

CloseReason = Literal["record", "expired"]


@dataclass(frozen=True, slots=True)
class LiveRunRow:
    run_id: str
    agent: str
    adapter: str | None
    repo: str | None
    branch: str | None
    root: str | None
    workdir: str | None
    source: str
    opened_at: float
    last_seen_at: float
    closed_at: float | None
    close_reason: str | None
    files: tuple[str, ...] = ()


class LiveRunStore(Protocol):
    """Live runs and the run-graph reads built on stored runs."""

    def transaction(self) -> AbstractContextManager[object]:
        """Group several writes into one atomic transaction (nested calls join it)."""
        ...

    def open_live_run(self, row: LiveRunRow, token_hash: str) -> bool:
        """Insert a new live run; False (and nothing written) when its run id exists."""
        ...

    def live_run_by_token(self, token_hash: str) -> LiveRunRow | None: ...
    def get_live_run(self, run_id: str) -> LiveRunRow | None: ...
    def heartbeat_live_run(
        self,
        run_id: str,
        now: float,
        *,
        branch: str | None,
        files: Sequence[str],
        max_files: int,
    ) -> None:
        """Mark the run seen at ``now`` (reopening it if it had expired), add files."""
        ...

    def close_live_run(self, run_id: str, agent: str, now: float, reason: CloseReason) -> bool:
        """Close an open or expired run of ``agent``; False when there was none."""
        ...

    def expire_live_runs(self, seen_before: float, now: float) -> int:
        """Close, as expired, every open run last seen before ``seen_before``."""
        ...

    def open_live_runs(self, repo: str | None, seen_since: float) -> list[LiveRunRow]:
        """Open runs seen since ``seen_since`` (all repositories when ``repo`` is None)."""
        ...

    def list_live_runs(
        self, *, repo: str | None, agent: str | None, include_closed: bool, limit: int
    ) -> list[LiveRunRow]: ...
    def count_open_live_runs(self) -> int: ...

    # stored runs
    def record_run_paths(
        self, run_id: str, edits: Sequence[tuple[str, str]], ended_at: float
    ) -> None:
        """Remember the repository-relative paths a stored run edited, as (repo, path)."""
        ...

    def recent_runs(self, repo: str, branch: str | None, limit: int) -> list[RunRow]: ...
    def runs_editing(self, repo: str, paths: Sequence[str], limit: int) -> list[RunRow]:
        """Stored runs that edited any of ``paths`` (a path ending in ``/`` is a directory)."""
        ...

    def list_runs(self, *, repo: str | None, agent: str | None, limit: int) -> list[RunRow]: ...
    def get_run(self, run_id: str) -> RunRow | None: ...
    def run_sessions(self, run_id: str) -> list[SessionRow]: ...
    def run_events(self, run_id: str) -> list[EventRow]: ...
    def get_runs(self, run_ids: Sequence[str]) -> Mapping[str, RunRow]: ...
