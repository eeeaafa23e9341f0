"""The tables an archive carries, and the store operations that read and restore them.

An archive (``fleetmem export``) holds what a person taught or an agent left for people to
review: facts with their whole history, context files with every revision, and the runs
whose episodes are still remembered. Everything an archive does not carry can be computed
again from what it does: vectors, text indexes, term statistics, the embedding cache, jobs,
the provider call log, rate-limit windows and live runs.

The column lists are part of the documented format (docs/portability.md), not read from the
database, so a later migration that adds a column does not silently change what an archive of
format 1 holds. ``key`` names the columns that identify a row: restoring a row whose key is
already present keeps the stored row, which is what makes an import idempotent. Tables whose
own id is a local sequence number carry no id in the archive; their key is the whole row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fleetmem.store.base import RunRow
from fleetmem.store.facts import FactRow


@dataclass(frozen=True, slots=True)
class ArchiveTable:
    """One table as an archive carries it."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    #: Columns that must hold a value (the rest may be null).
    required: tuple[str, ...]
    #: Meta counters that tell in-memory caches the table changed.
    generations: tuple[str, ...] = ()


def _table(
    name: str,
    columns: str,
    *,
    key: str | None = None,
    optional: str = "",
    generations: tuple[str, ...] = (),
) -> ArchiveTable:
    cols = tuple(columns.split())
    keys = tuple(key.split()) if key else cols
    nullable = set(optional.split())
    required = tuple(c for c in cols if c not in nullable)
    return ArchiveTable(name, cols, keys, required, generations)


#: Facts first (revisions, provenance, journal and votes name a fact), then context files.
ARCHIVE_TABLES: tuple[ArchiveTable, ...] = (
    _table(
        "facts",
        "id workspace body norm kind scope status pinned pinned_at origin author run_id"
        " conversation source revision content_hash created_at updated_at confirmed_at"
        " forgotten_at forgotten_from merged_into idempotency_key",
        key="id",
        optional="pinned_at run_id conversation source confirmed_at forgotten_at"
        " forgotten_from merged_into idempotency_key",
        generations=("fact_generation", "fact_vector_generation"),
    ),
    _table(
        "fact_revisions",
        "fact_id revision body actor_kind actor at",
        key="fact_id revision",
    ),
    _table(
        "fact_provenance",
        "fact_id origin author run_id conversation merged_from at",
        optional="run_id conversation merged_from",
    ),
    _table(
        "fact_journal",
        "workspace fact_id action actor_kind actor run_id at before_json after_json",
        optional="run_id before_json after_json",
    ),
    _table(
        "fact_votes",
        "workspace fact_id revision run_id agent repo stance counted reason at",
        key="workspace fact_id run_id",
        optional="repo",
    ),
    _table(
        "context_files",
        "workspace kind owner name mode mode_seq revision body updated_at author_kind author"
        " run_id",
        key="workspace kind owner name",
        optional="mode run_id",
    ),
    _table(
        "context_file_revisions",
        "workspace kind owner name revision body created_at author_kind author run_id action"
        " restored_from",
        key="workspace kind owner name revision",
        optional="run_id restored_from",
    ),
    _table(
        "context_file_activity",
        "workspace at actor_kind actor run_id action ref revision detail",
        optional="run_id revision detail",
    ),
    _table(
        "notes_proposals",
        "workspace agent run_id mode base_revision proposed_text diff created_at status"
        " decided_at decided_by applied_revision",
        optional="run_id decided_at decided_by applied_revision",
    ),
)

TABLES_BY_NAME: Mapping[str, ArchiveTable] = {t.name: t for t in ARCHIVE_TABLES}


class FactLookups(Protocol):
    """The fact lookups an import uses to recognise a fact it already holds."""

    def fact_find_norm(
        self, workspace: str, scope: str, norm: str, statuses: Sequence[str]
    ) -> FactRow | None: ...
    def fact_by_idempotency(self, workspace: str, key: str) -> FactRow | None: ...
    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]: ...
    def get_run(self, run_id: str) -> RunRow | None: ...


@dataclass(frozen=True, slots=True)
class ArchivedRun:
    """A run as an archive carries it: its stored (redacted) record, with each session's
    repository filled in from what this store resolved, so that assembling its episode again
    elsewhere does not depend on that machine's checkouts."""

    run_id: str
    record: Mapping[str, Any]


class ArchiveStore(FactLookups, Protocol):
    """What export, import and backup need from a store."""

    def transaction(self) -> AbstractContextManager[object]: ...

    def archive_rows(self, table: ArchiveTable) -> Iterator[dict[str, Any]]: ...
    def archive_count(self, table: ArchiveTable) -> int: ...
    def archive_restore(self, table: ArchiveTable, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert the rows whose key is not present yet; return how many were inserted.

        Joins the caller's transaction (see ``Store.transaction``)."""
        ...

    def archive_runs(self) -> Iterator[ArchivedRun]: ...
    def archive_run_count(self) -> int: ...
    def backup_to(self, target: Path) -> None:
        """A consistent copy of the whole store at ``target`` while writers go on."""
        ...
