"""The part of the Store protocol that keeps context files, revisions and run loads.

Rows are frozen. ``ref`` strings name a file as ``workspace/NAME``, ``agent/AGENT/NAME`` or
``project/REPO/notebook``; every query is filtered by workspace (the tenant), so a row of
another workspace is indistinguishable from a missing one.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class FileKey:
    workspace: str
    kind: str
    owner: str
    name: str


@dataclass(frozen=True, slots=True)
class FileRow:
    key: FileKey
    mode: str | None
    revision: int
    body: str
    updated_at: float
    author_kind: str
    author: str
    run_id: str | None


@dataclass(frozen=True, slots=True)
class RevisionRow:
    key: FileKey
    revision: int
    body: str
    created_at: float
    author_kind: str
    author: str
    run_id: str | None
    action: str  # created, save, restore, append
    restored_from: int | None


@dataclass(frozen=True, slots=True)
class NewRevision:
    body: str
    author_kind: str
    author: str
    run_id: str | None
    action: str
    restored_from: int | None = None


@dataclass(frozen=True, slots=True)
class ActivityRow:
    workspace: str
    at: float
    actor_kind: str
    actor: str
    run_id: str | None
    action: str  # save, restore, append, mode, read, proposed
    ref: str
    revision: int | None
    detail: str | None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class LoadRow:
    """What one run loaded: one row per file (or provider segment) of its context."""

    workspace: str
    run_id: str
    agent: str
    repo: str | None
    segment: str
    ref: str  # "" for a provider segment
    revision: int | None
    budget: int
    tokens: int
    used: int
    loaded_at: float


class FileStore(Protocol):
    def transaction(self) -> AbstractContextManager[object]: ...

    def get_file(self, key: FileKey) -> FileRow | None: ...
    def list_files(self, workspace: str, kind: str, owner: str | None = None) -> list[FileRow]: ...
    def file_owners(self, workspace: str, kind: str) -> list[str]: ...
    def create_file(self, key: FileKey, mode: str | None, now: float) -> FileRow:
        """Create the file empty at revision 0 (by the system) unless it exists; return it."""
        ...

    def write_revision(
        self,
        key: FileKey,
        base_revision: int,
        new: NewRevision,
        now: float,
        *,
        keep_last: int,
        keep_after: float,
    ) -> tuple[FileRow, bool]:
        """Compare and save: when ``base_revision`` is current, store ``new`` as the next
        revision and prune old ones (keeping the last ``keep_last`` and all created at or after
        ``keep_after``). Returns the current row and whether it was written."""
        ...

    def set_mode(
        self, key: FileKey, mode: str, now: float, *, max_every_run: int
    ) -> tuple[FileRow, list[str]]:
        """Set a workspace file's mode unless that would put more than ``max_every_run`` files
        on every run; returns the row and, when refused, the names of the every-run files."""
        ...

    def list_revisions(self, key: FileKey) -> list[RevisionRow]: ...
    def get_revision(self, key: FileKey, revision: int) -> RevisionRow | None: ...

    def add_activity(self, row: ActivityRow) -> None: ...
    def list_activity(
        self, workspace: str, limit: int, ref: str | None = None
    ) -> list[ActivityRow]: ...

    def file_activity_page(
        self,
        workspace: str,
        before: tuple[float, int] | None,
        limit: int,
        actions: Sequence[str],
    ) -> list[ActivityRow]:
        """Activity rows with one of ``actions``, newest first (``at``, then ``id``,
        descending), only those strictly before ``before`` = (at, id) when given."""
        ...

    def write_times(self, workspace: str, actor_kind: str, actor: str, since: float) -> list[float]:
        """Times (ascending) of the actor's writes (save, restore, append, mode) since then."""
        ...

    def record_loads(self, rows: Sequence[LoadRow]) -> None: ...
    def loads_for_run(self, workspace: str, run_id: str) -> list[LoadRow]: ...
    def last_loads(self, workspace: str, agent: str) -> list[LoadRow]:
        """The loads of the agent's most recent run that recorded any."""
        ...

    def runs_in_flight(self, workspace: str, ref: str, below_revision: int, since: float) -> int:
        """Runs not yet closed that loaded ``ref`` at a revision below ``below_revision``."""
        ...
