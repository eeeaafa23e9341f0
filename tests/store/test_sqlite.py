"""The store contract (both stores): the embedding cache, other connections' writes, many
writers, a closed store; and the SQLite store's own: WAL, migrations, its connections."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fleetmem.errors import StoreError
from fleetmem.service.bootstrap import App
from fleetmem.store.base import Store
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.migrations import MIGRATIONS
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import make_record, reopen, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for

SQLITE_DB = "the sqlite3 module's connections, PRAGMAs and migrations; test_postgres.py has the"
SQLITE_DB += " PostgreSQL store's"


@pytest.mark.sqlite_only(reason=SQLITE_DB)
def test_migrations_are_recorded_once_and_wal_is_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    a = SqliteStore(path)
    b = SqliteStore(path)  # reopening applies nothing twice
    rows = a.db.conn.execute("SELECT version, name FROM schema_migrations").fetchall()
    assert [tuple(r) for r in rows] == [(v, n) for v, n, _ in MIGRATIONS]
    assert rows[0][1] == "runs_episodes_index_queue"
    assert a.db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert b.db.schema_version() == MIGRATIONS[-1][0]
    a.close()
    b.close()


def test_embedding_cache_round_trips(new_store: Callable[[], Store]) -> None:
    store = new_store()
    vec = np.arange(4, dtype=np.float32) / 7
    store.cache_embedding("h", "m", vec)
    store.cache_embedding("h", "m", vec * 2)  # first write wins: the key is the content
    got = store.cached_embedding("h", "m")
    # SQLite keeps vectors as int8 with a scale each (store/sqlite/vector_blob.py),
    # PostgreSQL in single precision: both give back each component to within half of
    # SQLite's step (the largest component / 127).
    assert got is not None and got.dtype == np.float32
    np.testing.assert_allclose(got, vec, atol=float(vec.max()) / 254 + 1e-6, rtol=0)
    assert store.cached_embedding("h", "other-model") is None


def test_vector_cache_sees_other_connections_adds_and_deletes(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    ep1 = app.memory.ingest_run(make_record(run_id="1")).episode_id
    ep2 = app.memory.ingest_run(make_record(run_id="2")).episode_id
    store = app.store
    other = reopen(store)  # a second process's view of the same store
    scope = ["project:github.com/acme/api"]
    v1 = np.array([1, 0, 0], dtype=np.float32)
    v2 = np.array([0, 1, 0], dtype=np.float32)
    store.builtin_put(ep1, "t1", None, v1, "h1", "m")
    assert [i for i, _ in other.search_vector(v1, "m", scope, 5)] == [ep1]
    store.builtin_put(ep2, "t2", None, v2, "h2", "m")
    assert [i for i, _ in other.search_vector(v2, "m", scope, 5)] == [ep2, ep1]
    assert other.search_vector(v2, "m", ["project:elsewhere"], 5) == []
    store.builtin_delete(ep2 or "")
    assert [i for i, _ in other.search_vector(v2, "m", scope, 5)] == [ep1]
    other.close()


def test_two_processes_ingesting_at_once_lose_nothing(
    home: Path, tmp_path: Path, store_env: dict[str, str], new_store: Callable[[], Store]
) -> None:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    procs = []
    for p in range(3):
        script = "\n".join(json.dumps(make_record(run_id=f"p{p}-{i}")) for i in range(8))
        files = []
        for i, line in enumerate(script.splitlines()):
            f = tmp_path / f"r-{p}-{i}.json"
            f.write_text(line)
            files.append(str(f))
        cmd = " && ".join(f"{FLEETMEM} runs ingest {f}" for f in files)
        env = {**env_for(home), **store_env}
        procs.append(subprocess.Popen(["sh", "-c", cmd], env=env, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    store = SqliteStore(home / "fleetmem.db") if not store_env else new_store()
    assert store.episode_counts()["live"] == 24
    assert store.job_counts() == {}
    store.close()


# Threads read in a loop while the main thread closes the store under them. Before close()
# left other threads' connections alone, this crashed CPython's sqlite3 (SIGSEGV) within
# twenty rounds every time. It runs in a child process so that a crash fails this test
# instead of ending the whole run (as it did CI's, in a test that closed an app early).
CLOSE_UNDER_READERS = """
import json, sys, threading, time
from fleetmem.errors import StoreError
from fleetmem.store.sqlite.db import Database
seen = set()
for round_ in range(int(sys.argv[2])):
    db = Database(f"{sys.argv[1]}/s{round_}.db")
    db.conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    db.conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, str(i)) for i in range(2000)])
    stop = threading.Event()
    def read() -> None:
        while not stop.is_set():
            try:
                db.conn.execute("SELECT a, count(DISTINCT b) FROM t GROUP BY a % 7, a").fetchall()
            except StoreError as exc:
                seen.add(str(exc).split(" (")[0])
            except Exception as exc:  # a statement cut short by the close
                seen.add(type(exc).__name__)
    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    time.sleep(0.01)
    db.close()
    time.sleep(0.005)  # long enough for a reader to come back to a closed store
    stop.set()
    for t in readers:
        t.join()
print(json.dumps(sorted(seen)))
"""


@pytest.mark.sqlite_only(
    reason="a crash of CPython's sqlite3 when a connection closes under a reader"
)
def test_closing_the_store_while_other_threads_read_does_not_crash(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLOSE_UNDER_READERS, str(tmp_path), "20"],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    # Readers that come back after the close are told so by name, nothing else leaks out.
    assert json.loads(done.stdout) == ["the store is closed"]


def test_a_closed_store_refuses_reads_and_writes_by_name(new_store: Callable[[], Store]) -> None:
    store = new_store()
    store.close()
    with pytest.raises(StoreError, match="the store is closed"):
        store.episode_counts()
    with pytest.raises(StoreError, match="the store is closed"), store.transaction():
        pass
    with pytest.raises(StoreError, match="the store is closed"):
        store.enqueue("record", "builtin", "ep_x", None, 1.0)


@pytest.mark.sqlite_only(reason=SQLITE_DB)
def test_a_finished_threads_connection_is_closed_when_another_thread_connects(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "s.db")
    opened: list[sqlite3.Connection] = []

    def use() -> None:
        opened.append(db.conn)
        db.conn.execute("SELECT 1").fetchall()

    def in_a_thread() -> None:
        t = threading.Thread(target=use)
        t.start()
        t.join()

    in_a_thread()
    assert opened[0].execute("SELECT 1").fetchone()[0] == 1  # still open: nobody connected
    in_a_thread()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")
    # Short-lived threads (the daemon's request threads end when idle) no longer pile up
    # open files: two per thread before, until the process ran out.
    fds = Path("/proc/self/fd")
    if fds.is_dir():
        before = len(list(fds.iterdir()))
        for _ in range(200):
            in_a_thread()
        assert len(list(fds.iterdir())) <= before + 4
    db.close()
