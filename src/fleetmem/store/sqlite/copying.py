"""``fleetmem store copy`` over a SQLite store (:class:`fleetmem.store.copying.CopyStore`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetmem.errors import StoreError
from fleetmem.store.copying import CopiedTable, CopyReader, Row
from fleetmem.store.sqlite import vector_blob
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.packed import pack, pack_against, unpack

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

#: Rows fetched from a snapshot at a time.
_FETCH = 1000

#: Columns this store keeps deflated (:mod:`fleetmem.store.sqlite.packed`): a copy reads and
#: writes them as text, as the other store holds them.
PACKED = {
    "runs": ("record_json",),
    "episodes": ("episode_json",),
}

#: Views that stand for a table of the other store, with the tables they are made of.
VIEWS = {
    "run_paths": ("store_paths", "run_path_links"),
    "events": ("event_rows", "event_paths"),
}
_BEHIND_VIEWS = frozenset(t for tables in VIEWS.values() for t in tables)

_Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]  # (stored -> copied, back)


def _vector_in(value: Any) -> Any:
    return None if value is None else vector_blob.encode(np.frombuffer(bytes(value), "<f4"))


def _vector_out(value: Any) -> Any:
    return None if value is None else vector_blob.as_float32_bytes(bytes(value))


#: Every column a copy converts alone, by table: the packed text, and the vectors this store
#: keeps as int8 (:mod:`fleetmem.store.sqlite.vector_blob`) and the other as float32. An
#: episode's rendering is converted with its row (:func:`convert_rendering`).
CODECS: dict[str, dict[str, _Codec]] = {
    table: {column: (unpack, pack) for column in columns} for table, columns in PACKED.items()
}
CODECS["embeddings"] = {"vector": (_vector_out, _vector_in)}


def _coded_at(table: str, columns: Sequence[str]) -> list[tuple[int, _Codec]]:
    codecs = CODECS.get(table, {})
    return [(i, codecs[c]) for i, c in enumerate(columns) if c in codecs]


def _map(row: Row, at: Sequence[tuple[int, _Codec]], way: int) -> Row:
    """``row`` with each coded column converted (``way`` 0: as stored -> as copied)."""
    if not at:
        return row
    out = list(row)
    for i, codec in at:
        out[i] = codec[way](out[i])
    return tuple(out)


def rendering_at(table: str, columns: Sequence[str]) -> tuple[int, int] | None:
    """Where an episode's rendering and body are in ``columns``: the rendering is packed
    against the body (``packed.pack_against``), so it is converted with the row, not alone."""
    if table != "episodes" or "text" not in columns or "episode_json" not in columns:
        return None
    return list(columns).index("text"), list(columns).index("episode_json")


def convert_rendering(row: Row, at: tuple[int, int] | None, way: int) -> Row:
    """``row`` with its rendering converted beside its body, which must be unpacked already
    (``way`` 0: stored -> copied, after the columns; 1: before them)."""
    if at is None:
        return row
    text, body = at
    out = list(row)
    out[text] = unpack(out[text], out[body]) if way == 0 else pack_against(out[text], out[body])
    return tuple(out)


class _Reader:
    """Reads one SQLite connection (a snapshot, or the target's write transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def tables(self) -> dict[str, tuple[str, ...]]:
        # A copy sees the tables as both stores share them: a view standing for one (with
        # its triggers) instead of the tables behind it.
        names = [
            str(r[0])
            for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                f" OR (type = 'view' AND name IN ({', '.join('?' for _ in VIEWS)})) ORDER BY name",
                list(VIEWS),
            )
            if str(r[0]) not in _BEHIND_VIEWS
        ]
        return {
            name: tuple(str(c[1]) for c in self._conn.execute(f"PRAGMA table_info('{name}')"))
            for name in names
        }

    def count(self, table: str) -> int:
        return int(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def rows(self, table: CopiedTable, columns: Sequence[str]) -> Iterator[Row]:
        order = "rowid" if table.in_row_order else ", ".join(table.key or columns)
        cursor = self._conn.execute(
            f"SELECT {', '.join(columns)} FROM {table.name} ORDER BY {order}"
        )
        at = _coded_at(table.name, columns)
        rendering = rendering_at(table.name, columns)
        while batch := cursor.fetchmany(_FETCH):
            for row in batch:
                yield convert_rendering(_map(tuple(row), at, 0), rendering, 0)

    def builtin_entries(self) -> Iterator[tuple[str, str | None, str | None]]:
        cursor = self._conn.execute(
            "SELECT e.id, v.content_hash, v.model_id FROM builtin_fts_source f"
            " JOIN episodes e ON e.rowid = f.rowid"
            " LEFT JOIN builtin_vectors v ON v.episode_id = e.id ORDER BY e.rowid"
        )
        while batch := cursor.fetchmany(_FETCH):
            for episode_id, digest, model in batch:
                yield str(episode_id), digest, model


class CopyMixin:
    """Implements :class:`fleetmem.store.copying.CopyStore` over ``self.db``."""

    db: Database

    @contextmanager
    def copy_snapshot(self) -> Iterator[CopyReader]:
        # A connection of its own, read-only, in one read transaction: WAL keeps what it
        # reads at the moment of its first read while the daemon goes on writing.
        uri = Path(self.db.path).resolve().as_uri() + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the store: {exc}", path=self.db.path) from exc
        with closing(conn):
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("BEGIN")
            try:
                yield _Reader(conn)
            finally:
                conn.execute("ROLLBACK")

    @contextmanager
    def copy_target(self) -> Iterator[CopyReader]:
        with self.db.write() as conn:
            yield _Reader(conn)

    def copy_insert(self, table: str, columns: Sequence[str], rows: Sequence[Row]) -> None:
        marks = ", ".join("?" for _ in columns)
        at = _coded_at(table, columns)
        rendering = rendering_at(table, columns)
        try:
            with self.db.write() as conn:
                conn.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                    [_map(convert_rendering(row, rendering, 1), at, 1) for row in rows],
                )
        except sqlite3.Error as exc:
            raise StoreError(
                f"--to refused rows of {table}: {exc}; nothing was written", path=self.db.path
            ) from None

    def copy_replace(
        self, table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[Row]
    ) -> None:
        # Only tables whose source wins are replaced (workspaces): never an episode, whose
        # rendering and index entry are packed against the body it holds (fts_source.py).
        if table == "episodes":
            raise StoreError("a copy never replaces an episode row", path=self.db.path)
        sets = ", ".join(f"{c} = ?" for c in columns)
        where = " AND ".join(f"{c} = ?" for c in key)
        at = [list(columns).index(c) for c in key]
        coded = _coded_at(table, columns)
        try:
            with self.db.write() as conn:
                conn.executemany(
                    f"UPDATE {table} SET {sets} WHERE {where}",
                    [(*_map(row, coded, 1), *(row[i] for i in at)) for row in rows],
                )
        except sqlite3.Error as exc:
            raise StoreError(
                f"--to refused rows of {table}: {exc}; nothing was written", path=self.db.path
            ) from None

    def copy_after(self, table: str) -> None:
        """Nothing to do: SQLite numbers a new row above the largest id present."""

    def copy_meta(self, key: str, value: str | None = None) -> str | None:
        with self.db.write() as conn:
            if value is not None:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
                return value
            found = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return None if found is None else str(found[0])

    def copy_bump(self, key: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
                " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (key,),
            )
