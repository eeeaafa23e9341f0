"""SQLite connection handling: WAL, one writer, numbered migrations.

Every thread gets its own connection (sqlite3 connections are not shareable across
threads). Writes are serialised twice: a process-wide lock keeps this process's threads
from queueing inside SQLite, and ``BEGIN IMMEDIATE`` with a busy timeout takes the
database's write lock up front so two processes (the daemon and a CLI) never deadlock
upgrading a read transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from fleetmem.errors import StoreError
from fleetmem.store.schema_guard import refuse_newer
from fleetmem.store.sqlite.migrations import MIGRATIONS

#: ``PRAGMA auto_vacuum``'s value for incremental mode.
_INCREMENTAL = 2

BUSY_TIMEOUT_MS = 10_000


class Database:
    """A SQLite file opened in WAL mode with migrations applied."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = str(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._write_lock = threading.RLock()
        # Every connection opened, with the thread it belongs to, so close() can tell the
        # ones no other thread can be using from the ones it must not pull away.
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._all_lock = threading.Lock()
        self._closed = False
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.migrate()

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,  # transactions are explicit, see write()
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store: {exc}", path=self.path) from exc
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        # Only a new, empty file takes this (and only before WAL is on): pages freed later,
        # by merging the text index above all, can then be handed back to the file system
        # (release_free_pages). An existing store keeps its mode; VACUUM would change it.
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        with self._all_lock:
            if self._closed:
                conn.close()
                raise StoreError("the store is closed", path=self.path)
            # A finished thread's connection can no longer be in use: close it now instead
            # of when the store closes. The daemon's request threads end after a while idle,
            # and each new one opens its own connection, so keeping them leaked two file
            # descriptors per thread until the process ran out.
            kept = []
            for owner, old in self._all:
                if owner.is_alive():
                    kept.append((owner, old))
                else:
                    with suppress(sqlite3.Error):
                        old.close()
            kept.append((threading.current_thread(), conn))
            self._all = kept
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection, for reads (autocommit: each statement sees fresh data)."""
        if self._closed:
            raise StoreError("the store is closed", path=self.path)
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back when the block raises."""
        with self._write_lock:
            conn = self.conn
            if conn.in_transaction:
                # Nested use joins the outer transaction instead of failing.
                yield conn
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"the store is busy: {exc}", path=self.path) from exc
            with _committed(conn):
                yield conn

    @contextmanager
    def try_write(self, wait_ms: int) -> Iterator[sqlite3.Connection | None]:
        """A write transaction if one can start within ``wait_ms``, else ``None``.

        For best-effort cache writes made on a read path (a recall must not wait seconds
        behind the daemon's ingest for the sake of a cache): the process's write lock and
        SQLite's are both given ``wait_ms`` at most.
        """
        if not self._write_lock.acquire(timeout=wait_ms / 1000):
            yield None
            return
        try:
            conn = self.conn
            if conn.in_transaction:
                yield conn  # nested use joins the outer transaction
                return
            conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                began = False
            else:
                began = True
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            if not began:
                yield None
                return
            with _committed(conn):
                yield conn
        finally:
            self._write_lock.release()

    def migrate(self) -> None:
        """Apply every migration not yet recorded, each in its own transaction."""
        with self.write() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            done = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
        refuse_newer(done, MIGRATIONS[-1][0], path=self.path)
        for version, name, sql in MIGRATIONS:
            with self.write() as conn:
                # Checked inside the write lock so two processes starting together apply
                # each migration exactly once.
                done = conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
                ).fetchone()
                if done:
                    continue
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, time.time()),
                )

    def release_free_pages(
        self,
        *,
        step: int = 1_000,
        budget_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> int:
        """Shrink the file by its free pages, ``step`` at a time, within ``budget_s``;
        how many were released (0 for a store made before incremental vacuum was on)."""
        if step <= 0:
            raise ValueError(f"step must be positive, got {step}")
        conn = self.conn
        if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) != _INCREMENTAL:
            return 0
        released, start = 0, clock()
        while released == 0 or clock() - start < budget_s:
            free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
            if free == 0:
                break
            take = min(step, free)
            with self._write_lock:
                try:
                    # Run by sqlite3_exec, which steps the pragma to its end: a statement
                    # stepped once, as execute() does, frees a single page.
                    conn.executescript(
                        f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({int(take)}); COMMIT;"
                    )
                except sqlite3.OperationalError:
                    # Upkeep, not a write anyone waits for: another process holds the lock.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    break
            released += take
        return released

    def schema_version(self) -> int:
        row = self.conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        """Close this thread's connection and those of finished threads; let go of the rest.

        A connection closed while another thread is inside one of its statements crashes the
        interpreter (CPython's sqlite3 reads the freed handle when the statement returns).
        So a connection that may be in use elsewhere is not closed here: dropping the
        references held by ``_all`` and the thread-local closes it as soon as the thread
        using it lets go, while every later ``conn`` raises :class:`StoreError`.
        """
        me = threading.current_thread()
        with self._all_lock:
            self._closed = True
            opened, self._all = self._all, []
        self._local = threading.local()
        for owner, conn in opened:
            if owner is me or not owner.is_alive():
                with suppress(sqlite3.Error):
                    conn.close()


@contextmanager
def _committed(conn: sqlite3.Connection) -> Iterator[None]:
    """Commit the transaction ``conn`` began when the block ends, roll it back if it raises."""
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def _statements(sql: str) -> list[str]:
    """Split a migration script on blank-line-separated statements ending with ';'."""
    parts: list[str] = []
    buf: list[str] = []
    for line in sql.splitlines():
        buf.append(line)
        if line.rstrip().endswith(";") and sqlite3.complete_statement("\n".join(buf)):
            parts.append("\n".join(buf).strip())
            buf = []
    rest = "\n".join(buf).strip()
    if rest:
        parts.append(rest)
    return [p for p in parts if p]
