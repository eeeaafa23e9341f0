"""Real ``fleetmem serve`` daemons for the fleet benchmark, and what it reads from their store.

* :class:`Daemon`: one ``fleetmem serve`` subprocess on 127.0.0.1 over a home of its own (or
  a home another daemon also serves, for the SQLite rows), with an HTTP client carrying the
  home's control token; it can be killed with SIGKILL and started again on the same port.
* :func:`fresh_schema` / :func:`drop_schema`: an empty PostgreSQL schema per measurement,
  so nothing measured sees another measurement's rows.
* :class:`Audit`: triggers the benchmark adds to the store once the daemons have migrated it,
  recording into a table of its own every write the product makes that a job running twice
  would repeat (see :mod:`bench.bench_fleet` for what counts as "ran twice"). They record;
  they change nothing the product reads.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import psycopg

FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))
SCHEMA_PREFIX = "fleetmem_bench_fleet_"
#: The daemons' configuration: the benchmark stores' (offline model, no summaries, nothing
#: retired by age: the synthetic runs are dated weeks back), plus the store's keys.
CONFIG = """\
[model_api]
embedding_model = "local:minilm"

[memory.episodes]
summary = false
retention = "10y"
"""
START_PATIENCE_S = 180.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_home(home: Path, *, url: str | None, claim_timeout: str = "5s") -> None:
    """A daemon's home: the benchmark configuration, and the shared store when ``url``."""
    home.mkdir(parents=True, exist_ok=True)
    store = f'\n[store]\nurl = "{url}"\nclaim_timeout = "{claim_timeout}"\n' if url else ""
    (home / "fleetmem.toml").write_text(CONFIG + store, encoding="utf-8")


class Daemon:
    """``fleetmem serve --port PORT`` over ``home``; :meth:`start` again after a kill."""

    def __init__(self, name: str, home: Path, port: int | None = None) -> None:
        self.name = name
        self.home = home
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start_s: list[float] = []
        self._log = (home / f"serve-{name}.log").open("ab")
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)

    def start(self, *, wait: bool = True) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
        env["FLEETMEM_HOME"] = str(self.home)
        env["HF_HUB_OFFLINE"] = "1"
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [FLEETMEM, "serve", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.starts += 1
        if wait:
            self.wait_healthy()
            self.start_s.append(time.perf_counter() - started)

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + START_PATIENCE_S
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                tail = (self.home / f"serve-{self.name}.log").read_bytes()[-1500:]
                raise RuntimeError(f"daemon {self.name} exited: {tail.decode(errors='replace')}")
            with contextlib.suppress(httpx.TransportError):
                if self.client.get("/healthz").status_code == 200:
                    token = (self.home / "control.token").read_text(encoding="utf-8").strip()
                    self.client.headers["Authorization"] = f"Bearer {token}"
                    return
            time.sleep(0.1)
        raise RuntimeError(f"daemon {self.name} did not answer /healthz in {START_PATIENCE_S} s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def headers(self) -> dict[str, str]:
        return dict(self.client.headers)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        self.client.close()
        self._log.close()


# ---- PostgreSQL schemas ---------------------------------------------------------------------
def fresh_schema(base: str) -> tuple[str, str]:
    """A new empty schema in the server's database: (its name, a URL that uses it)."""
    name = SCHEMA_PREFIX + secrets.token_hex(4)
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return name, schema_url(base, name)


def schema_url(base: str, name: str) -> str:
    """``base`` with schema ``name`` first on its search path (pgvector's type is in public)."""
    options = quote(f"-c search_path={name},public")
    joiner = "&" if urlsplit(base).query else "?"
    return f"{base}{joiner}options={options}"


def kept_schema(base: str, name: str) -> tuple[str, str]:
    """Schema ``name`` of the server (created when missing, never emptied): (its name, a URL
    that uses it)."""
    if not name.isidentifier() or not name.islower():
        raise ValueError(f"FLEETMEM_BENCH_PG_SCHEMA: {name!r} is not a lower-case identifier")
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {name}")
    return name, schema_url(base, name)


def stored_episodes(base: str, name: str) -> int:
    """Episodes indexed in schema ``name`` (0 before its first migration)."""
    with psycopg.connect(base, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass(%s)", (f"{name}.builtin_fts",)).fetchone()
        if not exists or exists[0] is None:
            return 0
        row = conn.execute(f"SELECT count(*) FROM {name}.builtin_fts").fetchone()
    return int(row[0]) if row else 0


def drop_schema(base: str, name: str) -> None:
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


#: A PostgreSQL schema a benchmark fills once and keeps between runs (``bench_fleet``'s
#: recall phase, ``bench_footprint``).
PG_SCHEMA_ENV = "FLEETMEM_BENCH_PG_SCHEMA"


@contextlib.contextmanager
def bench_schema(base: str, suffix: str = "") -> Iterator[tuple[str, str, int | None]]:
    """The schema a benchmark measures on: (its name, a URL that uses it, the episodes it
    holds already). ``$FLEETMEM_BENCH_PG_SCHEMA`` (plus ``suffix``) names one that is kept
    afterwards, with what it holds; otherwise a fresh one, dropped afterwards (and None for
    its episodes)."""
    kept = os.environ.get(PG_SCHEMA_ENV)
    name, url = kept_schema(base, kept + suffix) if kept else fresh_schema(base)
    try:
        yield name, url, stored_episodes(base, name) if kept else None
    finally:
        if not kept:
            drop_schema(base, name)


def schema_bytes(base: str, name: str) -> int:
    """Bytes of every relation in schema ``name`` (tables, indexes, TOAST)."""
    with psycopg.connect(base, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (name,),
        ).fetchone()
    return int(row[0]) if row else 0


# ---- the audit ------------------------------------------------------------------------------
_PG_AUDIT = """
CREATE TABLE bench_audit (what text NOT NULL, key text NOT NULL, at double precision NOT NULL);
CREATE FUNCTION bench_audit_index() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO bench_audit VALUES ('index_write', NEW.episode_id,
  extract(epoch from clock_timestamp())); RETURN NEW; END $$;
CREATE FUNCTION bench_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO bench_audit VALUES ('index_row', NEW.episode_id,
  extract(epoch from clock_timestamp())); RETURN NEW; END $$;
CREATE FUNCTION bench_audit_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO bench_audit VALUES ('job_claim', NEW.id::text,
  extract(epoch from clock_timestamp())); RETURN NEW; END $$;
CREATE FUNCTION bench_audit_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO bench_audit VALUES ('job_done', NEW.episode_id,
  extract(epoch from clock_timestamp())); RETURN NEW; END $$;
CREATE TRIGGER bench_audit_index AFTER INSERT OR UPDATE ON builtin_fts
  FOR EACH ROW EXECUTE FUNCTION bench_audit_index();
CREATE TRIGGER bench_audit_row BEFORE INSERT ON provider_index
  FOR EACH ROW EXECUTE FUNCTION bench_audit_row();
CREATE TRIGGER bench_audit_claim AFTER UPDATE ON jobs FOR EACH ROW
  WHEN (NEW.claimed_until IS NOT NULL AND NEW.claimed_until IS DISTINCT FROM OLD.claimed_until)
  EXECUTE FUNCTION bench_audit_claim();
CREATE TRIGGER bench_audit_done AFTER UPDATE ON jobs FOR EACH ROW
  WHEN (NEW.state = 'done' AND NEW.kind = 'record') EXECUTE FUNCTION bench_audit_done();
"""
# SQLite's text index is an FTS5 table, which takes no trigger: its rows are counted through
# the provider index rows and the jobs finished (a SQLite job row is deleted when it is done;
# one deleted because its episode was forgotten first did not run).
_SQLITE_AUDIT = """
CREATE TABLE bench_audit (what TEXT NOT NULL, key TEXT NOT NULL, at REAL NOT NULL);
CREATE TRIGGER bench_audit_row BEFORE INSERT ON provider_index BEGIN
  INSERT INTO bench_audit VALUES ('index_row', NEW.episode_id,
    (julianday('now') - 2440587.5) * 86400.0); END;
CREATE TRIGGER bench_audit_done AFTER DELETE ON jobs
  WHEN OLD.state = 'pending' AND OLD.kind = 'record' AND NOT EXISTS (
    SELECT 1 FROM episodes WHERE id = OLD.episode_id AND forgotten_at IS NOT NULL) BEGIN
  INSERT INTO bench_audit VALUES ('job_done', OLD.episode_id,
    (julianday('now') - 2440587.5) * 86400.0); END;
"""


class Audit:
    """The benchmark's view of one store: its audit triggers and the counts it checks."""

    def __init__(self, *, url: str | None = None, sqlite_path: Path | None = None) -> None:
        if (url is None) == (sqlite_path is None):
            raise ValueError("one of url and sqlite_path")
        self.url = url
        self.sqlite_path = sqlite_path

    @property
    def kind(self) -> str:
        return "postgresql" if self.url else "sqlite"

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.url is not None:
            with psycopg.connect(self.url, autocommit=True) as conn:
                return [tuple(r) for r in conn.execute(sql, params).fetchall()]
        assert self.sqlite_path is not None
        conn = sqlite3.connect(self.sqlite_path, timeout=60)
        try:
            return [tuple(r) for r in conn.execute(sql.replace("%s", "?"), params).fetchall()]
        finally:
            conn.close()

    def install(self) -> None:
        """Add the triggers (after the daemons migrated the store)."""
        if self.url is not None:
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(_PG_AUDIT)
            return
        assert self.sqlite_path is not None
        conn = sqlite3.connect(self.sqlite_path, timeout=60)
        try:
            conn.executescript(_SQLITE_AUDIT)
        finally:
            conn.close()

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        rows = self._rows(sql, params)
        return int(rows[0][0] or 0) if rows else 0

    def repeated(self, what: str) -> dict[str, int]:
        """Keys the audit saw ``what`` for more than once, with their counts."""
        rows = self._rows(
            "SELECT key, count(*) FROM bench_audit WHERE what = %s GROUP BY key"
            " HAVING count(*) > 1",
            (what,),
        )
        return {str(k): int(n) for k, n in rows}

    def counts(self) -> dict[str, int]:
        rows = self._rows("SELECT what, count(*) FROM bench_audit GROUP BY what")
        return {str(w): int(n) for w, n in rows}

    def missing_runs(self, run_ids: list[str]) -> list[str]:
        """Of ``run_ids``, those with no row in ``runs``."""
        found: set[str] = set()
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i : i + 500]
            marks = ", ".join(["%s"] * len(chunk))
            found |= {
                str(r[0])
                for r in self._rows(f"SELECT run_id FROM runs WHERE run_id IN ({marks})", (*chunk,))
            }
        return [r for r in run_ids if r not in found]

    def unindexed_episodes(self) -> int:
        """Live episodes with no provider index row: recorded by no daemon."""
        return self.value(
            "SELECT count(*) FROM episodes e WHERE e.forgotten_at IS NULL"
            " AND NOT EXISTS (SELECT 1 FROM provider_index p WHERE p.episode_id = e.id)"
        )

    def episodes_of_runs(self) -> dict[str, int]:
        """Runs with more than one episode (one run, one episode)."""
        rows = self._rows(
            "SELECT run_id, count(*) FROM episodes GROUP BY run_id HAVING count(*) > 1"
        )
        return {str(k): int(n) for k, n in rows}

    def jobs(self) -> dict[str, int]:
        """Record and forget jobs by state, and those still claimed."""
        out = {
            str(state): int(n)
            for state, n in self._rows("SELECT state, count(*) FROM jobs GROUP BY state")
        }
        if self.url is not None:
            out["claimed"] = self.value(
                "SELECT count(*) FROM jobs WHERE state = 'pending' AND claimed_until IS NOT NULL"
            )
        return out
