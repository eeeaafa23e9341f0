"""What ``fleetmem store copy`` carries from one store to another, and the store operations
it uses (docs/postgres.md, "Moving between stores").

A copy is table by table, not an archive: every row of every table both stores keep, with
the ids that other rows or people refer to (a notes proposal's number, a journal entry's
sequence). What is not a table row in both stores is rebuilt in the target from the rows
copied: the built-in text index (FTS5 in SQLite, a ``tsvector`` with BM25 statistics in
PostgreSQL) and its term counts, the vector links (the vectors themselves travel in the
``embeddings`` table), and the caches' generation counters.

:data:`COPIED` lists the tables in the order they are written (a row's foreign keys name rows
copied before it). :data:`REBUILT` and :data:`NOT_COPIED` name the rest; a table a migration
adds to either store that none of the three lists names stops every copy with an error naming
it (``tests/store/test_store_copy.py`` also fails), so a new table cannot be left behind
silently.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CopiedTable:
    """One table as a copy carries it.

    ``key`` identifies a row (what makes a second copy skip it); an empty key means the whole
    row. ``in_row_order`` tables are read in the order their rows were written (SQLite's
    rowid, PostgreSQL's identity column standing for it), so the target numbers them alike.
    """

    name: str
    key: tuple[str, ...]
    in_row_order: bool = False
    #: The target's own row under a key the source also has yields to the source's (the
    #: ``default`` workspace's row, which every new store makes with its own name and time).
    source_wins: bool = False


def _t(
    name: str, key: str = "", *, in_row_order: bool = False, source_wins: bool = False
) -> CopiedTable:
    return CopiedTable(name, tuple(key.split()), in_row_order, source_wins)


#: Every table copied, in write order (parents before the rows that name them).
COPIED: tuple[CopiedTable, ...] = (
    _t("workspaces", "id", source_wins=True),
    _t("runs", "run_id", in_row_order=True),
    _t("sessions", "run_id session_id"),
    _t("events", "run_id session_id seq"),
    _t("run_paths", "run_id repo path"),
    _t("episodes", "id", in_row_order=True),
    _t("provider_index", "provider provider_id"),
    _t("jobs", "id"),
    _t("embeddings", "content_hash model_id"),
    _t("builtin_agents", "scope agent"),
    _t("facts", "id", in_row_order=True),
    _t("fact_revisions", "fact_id revision"),
    _t("fact_provenance", "seq"),
    _t("fact_journal", "seq"),
    _t("fact_vectors", "fact_id model_id"),
    _t("fact_exposures", "seq"),
    _t("fact_votes", "seq"),
    _t("fact_rate"),
    _t("fact_pairs_kept", "workspace first_id second_id"),
    _t("context_files", "workspace kind owner name", in_row_order=True),
    _t("context_file_revisions", "workspace kind owner name revision"),
    _t("context_file_activity", "id"),
    _t("run_context_loads", "run_id segment ref", in_row_order=True),
    _t("live_runs", "run_id"),
    _t("live_run_files", "run_id path"),
    _t("run_briefings", "run_id"),
    _t("notes_proposals", "id"),
    _t("call_log", "id"),
    _t("degraded_recalls", "id"),
    _t("utility_calls", "id"),
    _t("provider_health", "provider"),
    _t("briefing_deliveries", "id"),
)

COPIED_BY_NAME = {t.name: t for t in COPIED}

#: Tables rebuilt in the target from the copied rows (the built-in index and its statistics).
REBUILT = frozenset(
    {
        "builtin_fts",
        "builtin_fts_config",
        "builtin_fts_content",
        "builtin_fts_data",
        "builtin_fts_docsize",
        "builtin_fts_source",
        "builtin_fts_idx",
        "builtin_pair_postings",
        "builtin_postings",
        "builtin_scopes",
        "builtin_term_counts",
        "builtin_terms",
        "builtin_totals",
        "builtin_vectors",
    }
)

#: Each store's own bookkeeping: its migrations, SQLite's sequences, the caches' counters
#: (``meta``: bumped in the target instead, so running daemons reload what changed).
NOT_COPIED = frozenset({"schema_migrations", "sqlite_sequence", "meta", "store_leases"})

#: Columns only one store has, standing for the other's hidden row order (SQLite's rowid,
#: PostgreSQL's identity columns) or for a claim that means nothing in another store.
ENGINE_COLUMNS = frozenset({"rowid", "seq", "erow", "claimed_until"})

#: The target's ``meta`` key naming the store it is a copy of (what lets a second copy
#: from the same store add to it; any other non-empty target is refused).
COPIED_FROM = "copied_from"

Row = tuple[Any, ...]


class CopyReader(Protocol):
    """One consistent view of a store's tables (a snapshot, or the target's transaction)."""

    def tables(self) -> dict[str, tuple[str, ...]]:
        """Every table of the store, with its columns in order."""
        ...

    def count(self, table: str) -> int: ...
    def rows(self, table: CopiedTable, columns: Sequence[str]) -> Iterator[Row]:
        """The rows of ``table`` (only ``columns``), in row order or key order."""
        ...

    def builtin_entries(self) -> Iterator[tuple[str, str | None, str | None]]:
        """(episode id, vector content hash, vector model) of each episode in the built-in
        index, in row order; the hash and model are None for an episode without a vector."""
        ...


class CopyStore(Protocol):
    """What ``fleetmem store copy`` needs of a store, beside the Store protocol."""

    kind: str

    @property
    def location(self) -> str: ...

    def copy_snapshot(self) -> AbstractContextManager[CopyReader]:
        """A read-only snapshot of the whole store, on a connection of its own: what the
        copy reads is one moment's data while writers go on."""
        ...

    def copy_target(self) -> AbstractContextManager[CopyReader]:
        """One write transaction for the whole copy (rolled back if the block raises), and a
        reader of the target inside it."""
        ...

    def copy_insert(self, table: str, columns: Sequence[str], rows: Sequence[Row]) -> None:
        """Insert ``rows`` (inside :meth:`copy_target`)."""
        ...

    def copy_replace(
        self, table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[Row]
    ) -> None:
        """Overwrite the target's rows that have the ``key`` columns of ``rows`` (inside
        :meth:`copy_target`)."""
        ...

    def copy_after(self, table: str) -> None:
        """After a table's rows went in with their ids: later rows get ids above them."""
        ...

    def copy_meta(self, key: str, value: str | None = None) -> str | None:
        """Read ``meta[key]``, or set it when ``value`` is given (inside :meth:`copy_target`)."""
        ...

    def copy_bump(self, key: str) -> None:
        """Move a cache generation counter on, so running daemons reload what it covers."""
        ...
