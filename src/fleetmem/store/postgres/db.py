"""PostgreSQL connection handling: a bounded pool, timeouts, transactions, migrations.

Connections come from a :class:`psycopg_pool.ConnectionPool` (bounded, opened eagerly so a
bad URL or an unreachable server fails at start-up with a clear error). They are in
autocommit mode: a read outside a transaction sees every commit made before it, as the
SQLite store's reads do. :meth:`PgDatabase.write` opens one transaction and keeps its
connection for the thread, so the reads and nested writes made inside it join it (the
SQLite store's ``write()`` does the same). Every connection has a statement timeout.

Writes take one transaction-scoped advisory lock first (:data:`WRITER_LOCK`, per schema):
like SQLite's single writer, a transaction that reads and then writes (a compare-and-save,
an append to a notebook, a utility-limit claim) is never interleaved with another writer,
whichever daemon it comes from, and no two writers can deadlock. Reads never wait for it.

Numbered migrations (:mod:`fleetmem.store.postgres.migrations`) are applied under a
PostgreSQL advisory lock, each in its own transaction, so several daemons starting together
against one database apply each exactly once.

Errors: a URL psycopg cannot parse, a server that does not answer, a refused password all
become :class:`~fleetmem.errors.StoreError` naming ``store.url`` with the password hidden.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from fleetmem.errors import StoreError
from fleetmem.store.postgres.migrations import MIGRATIONS
from fleetmem.store.schema_guard import refuse_newer

log = logging.getLogger(__name__)

#: Connections kept by each store object (a daemon has one store): request threads beyond
#: this wait up to POOL_WAIT_S for one rather than opening more.
POOL_MAX = 8
POOL_MIN = 1
CONNECT_TIMEOUT_S = 5
POOL_WAIT_S = 10.0
STATEMENT_TIMEOUT_MS = 30_000
#: How long a request waits for a connection before a server that is down is reported (a
#: StoreError: reads degrade, writes are refused); see ``PgDatabase._pooled``.
OUTAGE_WAIT_S = 1.0
#: The advisory lock key under which migrations run (one per schema, see ``migrate``).
MIGRATION_LOCK = "fleetmem:migrations"
#: The advisory lock every write transaction holds (one per schema): the store's one writer.
WRITER_LOCK = "fleetmem:writer"

Row = tuple[Any, ...]
Params = Sequence[Any] | Mapping[str, Any]


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (safe for messages and logs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def _reason(exc: BaseException) -> str:
    """The first line of a driver error, without anything that could echo a password."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


class PgDatabase:
    """A PostgreSQL database reached through a bounded pool, with migrations applied."""

    def __init__(
        self,
        url: str,
        *,
        max_size: int = POOL_MAX,
        connect_timeout_s: int = CONNECT_TIMEOUT_S,
        statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
        pool_wait_s: float = POOL_WAIT_S,
    ) -> None:
        self.url = url
        self.path = redact_url(url)  # what messages and the doctor show
        self._local = threading.local()
        self._closed = False
        self._statement_timeout_ms = int(statement_timeout_ms)
        self._pool_wait_s = float(pool_wait_s)
        try:
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise StoreError(
                f"store.url is not a PostgreSQL URL psycopg understands: {_reason(exc)}",
                url=self.path,
            ) from None
        # One plain connection first: a bad address or login is reported at once, with the
        # server's reason, instead of the pool retrying in the background until it times out.
        try:
            with psycopg.connect(url, connect_timeout=connect_timeout_s):
                pass
        except psycopg.Error as exc:
            reason = _reason(exc).replace(url, self.path)
            raise StoreError(
                f"cannot reach the PostgreSQL store at store.url: {reason}", url=self.path
            ) from None
        self.pool = ConnectionPool(
            url,
            min_size=min(POOL_MIN, max_size),
            max_size=max_size,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout_s},
            configure=self._configure,
            # A connection the server dropped (a restart, pg_terminate_backend, a failover)
            # is found dead when borrowed and replaced, instead of failing a request.
            check=ConnectionPool.check_connection,
            timeout=pool_wait_s,
            open=False,
            name="fleetmem-store",
        )
        try:
            self.pool.open(wait=True, timeout=max(2.0, connect_timeout_s * 2.0))
        except PoolTimeout:
            self.pool.close()
            raise StoreError(
                "cannot open connections to the PostgreSQL store at store.url", url=self.path
            ) from None
        try:
            self.migrate()
        except BaseException:
            self.pool.close()
            raise

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(f"SET statement_timeout = {self._statement_timeout_ms}")
        # psycopg prepares a statement run five times on a connection, and PostgreSQL may
        # then serve it from one generic plan, which cannot see how selective a term or
        # a list of scopes is: the text channel's candidate query took 16.5 ms (p50) on its
        # generic plan against 5.5 ms planned for its values, at 20,000 episodes. Each
        # execution is planned for its own values (planning costs well under a millisecond).
        conn.execute("SET plan_cache_mode = force_custom_plan")

    # ---- connections --------------------------------------------------------------------
    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's transaction connection if a write is open, else one from the pool."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._borrow() as borrowed:
            yield borrowed

    @contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection[Any]]:
        if self._closed:
            raise StoreError("the store is closed", url=self.path)
        try:
            with self._pooled() as conn:
                yield conn
        except PoolTimeout:
            raise StoreError(
                "the PostgreSQL store did not give a connection in time (store.url)",
                url=self.path,
            ) from None
        except PoolClosed:
            raise StoreError("the store is closed", url=self.path) from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"the PostgreSQL store failed: {_reason(exc)}", url=self.path) from exc

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection from the pool. A server that is down (or a network that is cut) is
        noticed within :data:`OUTAGE_WAIT_S`: only a pool whose every connection is busy is
        waited on for the rest of :data:`POOL_WAIT_S`, so a request during an outage
        degrades in about a second instead of hanging."""
        started = time.monotonic()
        try:
            conn = self.pool.getconn(timeout=min(OUTAGE_WAIT_S, self._pool_wait_s))
        except PoolTimeout:
            stats = self.pool.get_stats()
            busy = stats.get("pool_size", 0) >= self.pool.max_size and not stats.get(
                "pool_available", 0
            )
            rest = self._pool_wait_s - (time.monotonic() - started)
            if not busy or rest <= 0:
                raise
            conn = self.pool.getconn(timeout=rest)
        try:
            with conn:  # as ConnectionPool.connection(): commit or roll back, then return it
                yield conn
        finally:
            self.pool.putconn(conn)

    @contextmanager
    def write(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction; rolled back when the block raises. Nested calls join it."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._borrow() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s || current_schema(), 0))",
                        (WRITER_LOCK,),
                    )
                    yield conn
            finally:
                self._local.conn = None

    @contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction for reads that need transaction-scoped settings (no writer lock);
        joins this thread's write transaction when one is open."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._borrow() as conn, conn.transaction():
            yield conn

    # ---- statements ---------------------------------------------------------------------
    def rows(self, sql: str, params: Params = (), *, binary: bool = False) -> list[Row]:
        """The statement's rows. ``binary`` has PostgreSQL send them in its binary format:
        the same Python values, read faster when there are tens of thousands (postings:
        about a third less time than parsing their text, bytea's hex above all)."""
        with self.connection() as conn:
            return list(conn.execute(sql, params, binary=binary).fetchall())

    def row(self, sql: str, params: Params = ()) -> Row | None:
        with self.connection() as conn:
            found: Row | None = conn.execute(sql, params).fetchone()
            return found

    def value(self, sql: str, params: Params = ()) -> Any:
        found = self.row(sql, params)
        return None if found is None else found[0]

    def run(self, sql: str, params: Params = ()) -> int:
        """Execute one writing statement (in a write transaction); returns the rows changed."""
        with self.write() as conn:
            return conn.execute(sql, params).rowcount

    def returning(self, sql: str, params: Params = ()) -> list[Row]:
        """Execute one writing statement that returns rows (``... RETURNING``)."""
        with self.write() as conn:
            return list(conn.execute(sql, params).fetchall())

    def many(self, sql: str, params: Iterable[Sequence[Any]]) -> None:
        """Execute one writing statement once per parameter set, in one write transaction."""
        batch = list(params)
        if not batch:
            return
        with self.write() as conn, conn.cursor() as cur:
            cur.executemany(sql, batch)

    # ---- migrations ---------------------------------------------------------------------
    def migrate(self) -> None:
        """Apply every migration not yet recorded, under an advisory lock, one transaction
        each (several daemons starting at once apply each exactly once).

        Without the statement timeout: a migration that rebuilds a table takes minutes on a
        large store (migration 8, 100,000 episodes), and a daemon starting beside it waits
        for the lock as long; neither is a query with a 30-second budget."""
        with self._borrow() as conn:
            conn.execute("SET statement_timeout = 0")
            try:
                self._migrate_locked(conn)
            finally:  # the connection goes back to the pool with the budget of queries
                conn.execute(f"SET statement_timeout = {self._statement_timeout_ms}")

    def _migrate_locked(self, conn: psycopg.Connection[Any]) -> None:
        """:meth:`migrate`'s work on one connection: the lock, then each migration due."""
        conn.execute(
            "SELECT pg_advisory_lock(hashtextextended(%s || current_schema(), 0))",
            (MIGRATION_LOCK,),
        )
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
                ' name text COLLATE "C" NOT NULL, applied_at double precision NOT NULL)'
            )
            done = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
            refuse_newer(done, MIGRATIONS[-1][0], url=self.path)
            for version, name, sql in MIGRATIONS:
                if version in done:
                    continue
                log.info("store.migrating version=%s name=%s", version, name)
                started = time.monotonic()
                with conn.transaction():
                    conn.execute(sql)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at)"
                        " VALUES (%s, %s, %s)",
                        (version, name, time.time()),
                    )
                log.info(
                    "store.migrated version=%s seconds=%.1f",
                    version,
                    time.monotonic() - started,
                )
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot migrate the PostgreSQL store: {_reason(exc)}", url=self.path
            ) from exc
        finally:
            conn.execute(
                "SELECT pg_advisory_unlock(hashtextextended(%s || current_schema(), 0))",
                (MIGRATION_LOCK,),
            )

    def schema_version(self) -> int:
        return int(self.value("SELECT coalesce(max(version), 0) FROM schema_migrations") or 0)

    def close(self) -> None:
        self._closed = True
        self.pool.close()
