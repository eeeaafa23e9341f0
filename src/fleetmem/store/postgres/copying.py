"""``fleetmem store copy`` over a PostgreSQL store (:class:`fleetmem.store.copying.CopyStore`)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import IsolationLevel

from fleetmem.errors import StoreError
from fleetmem.store.copying import CopiedTable, CopyReader, Row
from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.fact_activity import bump

#: Rows a server-side cursor sends at a time.
_FETCH = 1000
#: The identity column standing for SQLite's rowid, for tables read in row order.
_ROW_ORDER = {"episodes": "erow"}


class _Reader:
    """Reads one PostgreSQL connection (a snapshot, or the target's write transaction)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def tables(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for table, column in self._conn.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c"
            " JOIN information_schema.tables t ON t.table_schema = c.table_schema"
            " AND t.table_name = c.table_name"
            " WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'"
            " ORDER BY c.table_name, c.ordinal_position"
        ):
            found.setdefault(str(table), []).append(str(column))
        return {name: tuple(columns) for name, columns in found.items()}

    def count(self, table: str) -> int:
        found = self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(found[0]) if found else 0

    def _select(self, sql: str) -> Iterator[Row]:
        # A server-side cursor: a large table is never held in memory whole.
        with self._conn.cursor(name=f"fleetmem_copy_{secrets.token_hex(4)}") as cursor:
            cursor.itersize = _FETCH
            cursor.execute(sql)
            for row in cursor:
                yield tuple(row)

    def rows(self, table: CopiedTable, columns: Sequence[str]) -> Iterator[Row]:
        if table.in_row_order:
            order = _ROW_ORDER.get(table.name, "seq")
        else:
            # NULLS FIRST: SQLite's order for the same key.
            order = ", ".join(f"{c} NULLS FIRST" for c in (table.key or columns))
        yield from self._select(f"SELECT {', '.join(columns)} FROM {table.name} ORDER BY {order}")

    def builtin_entries(self) -> Iterator[tuple[str, str | None, str | None]]:
        for episode_id, digest, model in self._select(
            "SELECT f.episode_id, v.content_hash, v.model_id FROM builtin_fts f"
            " LEFT JOIN builtin_vectors v ON v.episode_id = f.episode_id ORDER BY f.erow"
        ):
            yield str(episode_id), digest, model


class CopyMixin:
    """Implements :class:`fleetmem.store.copying.CopyStore` over ``self.db``."""

    db: PgDatabase

    @contextmanager
    def copy_snapshot(self) -> Iterator[CopyReader]:
        # A connection of its own in one REPEATABLE READ, READ ONLY transaction: every table
        # is read as of the same moment while the fleet's daemons go on writing.
        try:
            conn = psycopg.connect(self.db.url, connect_timeout=5)
        except psycopg.Error as exc:
            raise StoreError(f"cannot read the store: {exc}", url=self.db.path) from None
        with conn:
            conn.isolation_level = IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            try:
                yield _Reader(conn)
            finally:
                conn.rollback()

    @contextmanager
    def copy_target(self) -> Iterator[CopyReader]:
        with self.db.write() as conn:
            yield _Reader(conn)

    def copy_insert(self, table: str, columns: Sequence[str], rows: Sequence[Row]) -> None:
        marks = ", ".join("%s" for _ in columns)
        try:
            with self.db.write() as conn, conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", list(rows)
                )
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"--to refused rows of {table}: {reason}; nothing was written", url=self.db.path
            ) from None

    def copy_replace(
        self, table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[Row]
    ) -> None:
        sets = ", ".join(f"{c} = %s" for c in columns)
        where = " AND ".join(f"{c} = %s" for c in key)
        at = [list(columns).index(c) for c in key]
        try:
            with self.db.write() as conn, conn.cursor() as cursor:
                cursor.executemany(
                    f"UPDATE {table} SET {sets} WHERE {where}",
                    [(*row, *(row[i] for i in at)) for row in rows],
                )
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"--to refused rows of {table}: {reason}; nothing was written", url=self.db.path
            ) from None

    def copy_after(self, table: str) -> None:
        """Move each id sequence of ``table`` past the ids copied in with their rows."""
        with self.db.write() as conn:
            columns = conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass"
                " AND attidentity = 'd' AND NOT attisdropped",
                (table,),
            ).fetchall()
            for (column,) in columns:
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence(%s, %s), max({column}))"
                    f" FROM {table} HAVING max({column}) IS NOT NULL",
                    (table, column),
                )

    def copy_meta(self, key: str, value: str | None = None) -> str | None:
        with self.db.write() as conn:
            if value is not None:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
                return value
            found = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
            return None if found is None else str(found[0])

    def copy_bump(self, key: str) -> None:
        with self.db.write() as conn:
            bump(conn, key)
