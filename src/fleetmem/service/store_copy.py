"""``fleetmem store copy``: move a whole memory between a SQLite file and a PostgreSQL
database (either way, or between two of a kind), verified table by table.

What is copied and what is rebuilt is :mod:`fleetmem.store.copying`'s list. The source is
read from one snapshot (daemons may go on writing to it); the target is written in one
transaction, so a copy that fails (a bad row, a lost connection, Ctrl-C) leaves the target as
it was, and a SQLite file the copy created is removed again.

A copy is idempotent: each row whose key the target holds already is left alone, so a second
run of the same copy inserts nothing and says so. A target that holds anything else than an
earlier copy of the same source is refused: rows numbered by each store (journal entries,
proposals) could not be told apart.

Counts are verified before the transaction commits: for every table, the rows read from the
source are the rows inserted plus those already there (the same or, counted apart, different),
and the target holds exactly as many more rows as were inserted; every episode of the source's
built-in index is in the target's, with its vector when the source had one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fleetmem.config.values import Invalid, postgres_url
from fleetmem.errors import InvalidInput, StoreError
from fleetmem.providers.builtin import BuiltinProvider, _context, index_text
from fleetmem.store.base import IndexEntry, Store
from fleetmem.store.copying import (
    COPIED,
    COPIED_FROM,
    ENGINE_COLUMNS,
    NOT_COPIED,
    REBUILT,
    CopiedTable,
    CopyReader,
    CopyStore,
    Row,
)

#: Rows inserted per statement batch (and between two progress reports).
BATCH = 500
#: Called as ``progress(stage, done, total)``: a table's name, or ``builtin index``.
Progress = Callable[[str, int, int], None]
INDEX_STAGE = "builtin index"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Generation counters moved on in the target, so a daemon already serving it reloads.
_GENERATIONS = ("vector_generation", "fact_generation", "fact_vector_generation")


class CopyableStore(Store, CopyStore, Protocol):
    """A store that can be copied from and to (both implementations are)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One side of a copy: ``--from`` or ``--to``, a SQLite path or a PostgreSQL URL."""

    argument: str
    kind: str
    value: str

    @property
    def shown(self) -> str:
        if self.kind == "sqlite":
            return self.value
        from fleetmem.store.postgres.db import redact_url

        return redact_url(self.value)


@dataclass(frozen=True, slots=True)
class TableCount:
    """One table's verified counts: rows read, inserted, already there (the same, or not)."""

    table: str
    source: int
    copied: int
    present: int
    differ: int
    target: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "source": self.source,
            "copied": self.copied,
            "present": self.present,
            "differ": self.differ,
            "target": self.target,
        }


@dataclass(slots=True)
class CopyReport:
    """What a copy found and did."""

    source: str
    target: str
    tables: list[TableCount] = field(default_factory=list)
    #: Episodes of the built-in index: (in the source, indexed now, already indexed).
    indexed: tuple[int, int, int] = (0, 0, 0)
    #: Episodes indexed with their vector, and those whose vector was not in the source's
    #: embedding cache (embedded again by the daemon's background backfill).
    vectors: int = 0
    vectors_missing: int = 0
    seconds: float = 0.0

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables) + self.indexed[1]

    @property
    def differ(self) -> int:
        return sum(t.differ for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        source, done, present = self.indexed
        return {
            "source": self.source,
            "target": self.target,
            "tables": [t.as_dict() for t in self.tables],
            "builtin_index": {
                "source": source,
                "indexed": done,
                "present": present,
                "vectors": self.vectors,
                "vectors_missing": self.vectors_missing,
            },
            "copied": self.copied,
            "differ": self.differ,
            "nothing_new": self.copied == 0,
            "seconds": round(self.seconds, 3),
        }


def endpoint(argument: str, value: str) -> Endpoint:
    """``value`` of ``--from`` or ``--to`` read as a PostgreSQL URL or a SQLite path; raises
    InvalidInput naming ``argument`` for a malformed URL or an empty path."""
    text = value.strip()
    if not text:
        raise InvalidInput(argument, value, "give a SQLite file's path or a postgresql:// URL")
    if "://" in text:
        try:
            postgres_url(text)
        except Invalid as exc:
            from fleetmem.store.postgres.db import redact_url

            raise InvalidInput(argument, redact_url(text), exc.reason) from None
        return Endpoint(argument, "postgresql", text)
    return Endpoint(argument, "sqlite", str(Path(text).expanduser()))


def _check_sqlite(end: Endpoint, *, must_exist: bool) -> bool:
    """Whether the file exists; raises InvalidInput naming the argument when it cannot be
    the store asked for."""
    path = Path(end.value)
    if path.is_dir():
        raise InvalidInput(end.argument, end.value, "is a directory; give the store's file")
    if not path.exists():
        if must_exist:
            raise InvalidInput(end.argument, end.value, "no such file")
        if not path.parent.is_dir():
            raise InvalidInput(end.argument, end.value, "its directory does not exist")
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise InvalidInput(end.argument, end.value, f"cannot be read: {exc.strerror}") from None
    if head and head != _SQLITE_MAGIC:
        raise InvalidInput(end.argument, end.value, "is not a SQLite database")
    return True


def open_endpoint(end: Endpoint) -> CopyableStore:
    """Open (migrating if needed) the store ``end`` names; StoreError names the argument."""
    try:
        if end.kind == "sqlite":
            from fleetmem.store.sqlite.store import SqliteStore

            return SqliteStore(end.value)
        from fleetmem.store.postgres.store import PostgresStore

        return PostgresStore(end.value)
    except StoreError as exc:
        message = exc.message.replace("store.url", end.argument)
        raise StoreError(f"{end.argument}: {message}", **exc.context) from None


def copy_between(
    source_arg: str, target_arg: str, *, progress: Progress | None = None
) -> CopyReport:
    """Copy everything from the store ``source_arg`` names to the one ``target_arg`` names
    (``--from`` and ``--to``), verified; see the module's docstring."""
    source_end = endpoint("--from", source_arg)
    target_end = endpoint("--to", target_arg)
    if source_end.kind == "sqlite":
        _check_sqlite(source_end, must_exist=True)
    created = target_end.kind == "sqlite" and not _check_sqlite(target_end, must_exist=False)
    if source_end.kind == target_end.kind and (
        source_end.value == target_end.value
        or (
            source_end.kind == "sqlite"
            and not created
            and Path(source_end.value).resolve() == Path(target_end.value).resolve()
        )
    ):
        raise InvalidInput("--to", target_end.shown, "is the same store as --from")
    source = open_endpoint(source_end)
    try:
        target = open_endpoint(target_end)
    except BaseException:
        source.close()
        _remove_created(target_end, created)
        raise
    ok = False
    try:
        report = copy_store(source, target, progress=progress)
        ok = True
        return report
    finally:
        target.close()
        source.close()
        if not ok:
            _remove_created(target_end, created)


def _remove_created(end: Endpoint, created: bool) -> None:
    if not created:
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        with suppress(OSError):
            Path(end.value + suffix).unlink()


def copy_store(
    source: CopyableStore, target: CopyableStore, *, progress: Progress | None = None
) -> CopyReport:
    """Copy every table and rebuild the built-in index of ``source`` in ``target``."""
    started = time.monotonic()
    report = CopyReport(source=source.location, target=target.location)
    with source.copy_snapshot() as src, target.copy_target() as dst:
        plan = _plan(src.tables(), dst.tables())
        _check_target(target, dst, source.location)
        for table, columns in plan:
            report.tables.append(_copy_table(table, columns, src, dst, target, progress))
        _rebuild_index(src, dst, target, report, progress)
        if report.copied:
            for key in _GENERATIONS:
                target.copy_bump(key)
        target.copy_meta(COPIED_FROM, source.location)
    report.seconds = time.monotonic() - started
    return report


def _plan(
    src: dict[str, tuple[str, ...]], dst: dict[str, tuple[str, ...]]
) -> list[tuple[CopiedTable, tuple[str, ...]]]:
    """Each copied table with the columns written; StoreError for a table or column the
    copy does not know how to carry (the two stores' schemas differ)."""
    known = {t.name for t in COPIED} | REBUILT | NOT_COPIED
    for side, tables in (("--from", src), ("--to", dst)):
        unknown = sorted(set(tables) - known)
        if unknown:
            raise StoreError(
                f"{side} has tables store copy does not know: {', '.join(unknown)}"
                " (is this fleetmem older than the store?)"
            )
    plan = []
    for table in COPIED:
        if table.name not in src or table.name not in dst:
            side = "--from" if table.name not in src else "--to"
            raise StoreError(f"{side} has no table {table.name}: is its schema current?")
        dropped = {"claimed_until"} | ({"rowid", "seq", "erow"} if table.in_row_order else set())
        columns = tuple(c for c in src[table.name] if c in dst[table.name] and c not in dropped)
        odd = (set(src[table.name]) ^ set(dst[table.name])) - ENGINE_COLUMNS
        if odd:
            raise StoreError(
                f"table {table.name} differs between --from and --to: {', '.join(sorted(odd))}"
            )
        plan.append((table, columns))
    return plan


def _check_target(target: CopyableStore, dst: CopyReader, source_location: str) -> None:
    """Refuse a target holding rows that did not come from this source."""
    if target.copy_meta(COPIED_FROM) == source_location:
        return
    for table in COPIED:
        if table.name in ("provider_health", "workspaces"):
            # A daemon started on the empty store probed its provider, and every new store
            # has its default workspace's row: neither is memory.
            continue
        held = dst.count(table.name)
        if held:
            raise InvalidInput(
                "--to",
                target.location,
                f"already holds data ({held} rows in {table.name}) and is not a copy of"
                " --from; copy into an empty store",
            )


def _normal(value: Any) -> Any:
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, bool):
        return int(value)
    return value


def _batches(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    batch: list[Row] = []
    for row in rows:
        batch.append(tuple(_normal(v) for v in row))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy_table(
    table: CopiedTable,
    columns: Sequence[str],
    src: CopyReader,
    dst: CopyReader,
    target: CopyableStore,
    progress: Progress | None,
) -> TableCount:
    """Insert the source rows whose key the target lacks; count and verify."""
    total = src.count(table.name)
    before = dst.count(table.name)
    key_at = [columns.index(c) for c in table.key] if table.key else list(range(len(columns)))

    def key_of(row: Row) -> Row:
        return tuple(row[i] for i in key_at)

    # What the target holds already, by key (a fingerprint of each row, not the row).
    held: dict[Row, int] = {}
    keyless: Counter[Row] = Counter()
    if before:
        for batch in _batches(dst.rows(table, columns), BATCH):
            for row in batch:
                if table.key:
                    held[key_of(row)] = hash(row)
                else:
                    keyless[row] += 1
    copied = present = differ = done = 0
    replaced: list[Row] = []
    for batch in _batches(src.rows(table, columns), BATCH):
        new = []
        for row in batch:
            if not table.key:
                if keyless[row]:
                    keyless[row] -= 1
                    present += 1
                else:
                    new.append(row)
                continue
            fingerprint = held.get(key_of(row))
            if fingerprint is None:
                new.append(row)
                held[key_of(row)] = hash(row)
            elif fingerprint == hash(row):
                present += 1
            elif table.source_wins:
                replaced.append(row)
                held[key_of(row)] = hash(row)
            else:
                differ += 1
        if new:
            target.copy_insert(table.name, columns, new)
            copied += len(new)
        if replaced:
            target.copy_replace(table.name, columns, table.key, replaced)
            present += len(replaced)
            replaced = []
        done += len(batch)
        if progress is not None:
            progress(table.name, done, total)
    if copied:
        target.copy_after(table.name)
    after = dst.count(table.name)
    if done != total or copied + present + differ != total or after != before + copied:
        raise StoreError(
            f"the copy of {table.name} does not add up: {total} rows in --from, {done} read,"
            f" {copied} copied, {present + differ} already in --to, which held {before}"
            f" and now holds {after}; nothing was written"
        )
    return TableCount(table.name, total, copied, present, differ, after)


def _rebuild_index(
    src: CopyReader,
    dst: CopyReader,
    target: CopyableStore,
    report: CopyReport,
    progress: Progress | None,
) -> None:
    """Index every episode of the source's built-in index in the target, as the built-in
    provider would have (the same words, the same neighbours' context), with the source's
    vector taken from the copied embedding cache."""
    entries = list(src.builtin_entries())
    held = {eid: (digest, model) for eid, digest, model in dst.builtin_entries()}
    # The provider's own neighbour walk and context (no embedder: vectors come from the cache).
    provider = BuiltinProvider(target, None)
    indexed = present = vectors = missing = 0
    for offset in range(0, len(entries), BATCH):
        batch = entries[offset : offset + BATCH]
        rows = target.get_episodes([eid for eid, _, _ in batch])
        puts: list[IndexEntry] = []
        for eid, digest, model in batch:
            if eid in held and (digest is None or held[eid] == (digest, model)):
                present += 1
                continue
            row = rows.get(eid)
            if row is None:
                raise StoreError(
                    f"the built-in index of --from names episode {eid}, which it does not hold"
                )
            vector = None
            if digest is not None and model is not None:
                vector = target.cached_embedding(digest, model)
                if vector is None:
                    missing += 1
                else:
                    vectors += 1
            episode = row.episode
            summary = episode.get("summary") if episode is not None else row.summary
            puts.append(
                (
                    eid,
                    index_text(episode) if episode is not None else (row.text or ""),
                    summary if isinstance(summary, str) else None,
                    vector,
                    digest or "",
                    model or "",
                    _context(provider._neighbours(row)),
                )
            )
            indexed += 1
        # One call per batch: the term statistics move once for the batch, not per episode.
        target.builtin_put_many(puts)
        if progress is not None:
            progress(INDEX_STAGE, offset + len(batch), len(entries))
    after = {eid for eid, _, _ in dst.builtin_entries()}
    lost = [eid for eid, _, _ in entries if eid not in after]
    if lost:
        raise StoreError(
            f"the built-in index of --to lacks {len(lost)} of the {len(entries)} episodes"
            " indexed in --from; nothing was written"
        )
    report.indexed = (len(entries), indexed, present)
    report.vectors = vectors
    report.vectors_missing = missing
