"""The SQLite store's compact layout (issue 20, footprint): int8 vectors with a scale each, a
contentless text index beside the words it indexed, and free pages handed back."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import App
from fleetmem.store.sqlite import vector_blob
from fleetmem.store.sqlite.builtin_index import scope_token
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.packed import unpack
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import make_record, session
from tests.store.schema_at import store_before
from tests.store.test_builtin_index import _episode

API = "github.com/acme/api"
SCOPE = [f"project:{API}"]

pytestmark = pytest.mark.sqlite_only(reason="the SQLite store's own layout")


def _unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# ---- vectors ---------------------------------------------------------------------------
def test_a_stored_vector_keeps_every_cosine_within_its_rounding() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    for dim in (1, 7, 8, 384, 1024, 1536):
        rows = _unit_rows(rng, 200, dim)
        blobs = [vector_blob.encode(r) for r in rows]
        back = np.stack([vector_blob.decode(b) for b in blobs])
        assert back.dtype == np.float32
        # A format byte, a float32 scale, a byte a component, and a pad byte for odd sizes:
        # always an odd length, so never confused with a float32 blob of before.
        assert {len(b) for b in blobs} == {1 + 4 + dim + dim % 2}
        assert np.array_equal(vector_blob.decode_rows(blobs, dim), back)
        # Each component is off by at most half a step (the row's peak / 127), so a cosine
        # with any query q is off by at most |q|_1 times that.
        step = np.abs(rows).max(axis=1) / 127
        assert bool(np.all(np.abs(back - rows) <= step[:, None] / 2 + 1e-7))
        queries = _unit_rows(rng, 50, dim)
        bound = np.abs(queries).sum(axis=1)[:, None] * step[None, :] / 2 + 1e-6
        assert bool(np.all(np.abs(queries @ back.T - queries @ rows.T) <= bound))
        if dim >= 384:  # the embedders' sizes: a cosine moves by about a thousandth at most
            assert float(np.abs(queries @ back.T - queries @ rows.T).max()) < 2e-3


def test_vectors_written_before_int8_read_as_they_were() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    row = _unit_rows(rng, 1, 384)[0]
    legacy = row.astype("<f4").tobytes()  # before migration 21
    half = bytes((2,)) + row.astype("<f2").tobytes()  # migration 21 until int8
    assert np.array_equal(vector_blob.decode(legacy), row)
    assert vector_blob.as_float32_bytes(legacy) == legacy
    assert np.array_equal(vector_blob.decode(half), row.astype("<f2").astype(np.float32))
    mixed = vector_blob.decode_rows([legacy, half, vector_blob.encode(row)], 384)
    assert mixed.shape == (3, 384) and np.array_equal(mixed[0], row)
    assert float(np.abs(mixed[1:] - row).max()) < 1e-3


def test_vectors_of_any_magnitude_and_zero_round_trip() -> None:
    big = np.array([1e6, -3e5, 0.0, 2.5], dtype=np.float32)
    back = vector_blob.decode(vector_blob.encode(big))
    assert float(np.abs(back - big).max()) <= 1e6 / 127 / 2 + 1
    zero = vector_blob.decode(vector_blob.encode(np.zeros(5, np.float32)))
    assert zero.shape == (5,) and not zero.any()
    assert vector_blob.decode(vector_blob.encode(np.zeros(0, np.float32))).shape == (0,)


def test_bad_vectors_and_blobs_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        vector_blob.decode(b"\x07" + b"\x00" * 8)
    with pytest.raises(ValueError, match="unknown format"):
        vector_blob.decode(b"\x03\x00\x00")  # too short to hold its scale
    with pytest.raises(ValueError, match="finite"):
        vector_blob.encode(np.array([0.5, np.nan], dtype=np.float32))
    with pytest.raises(ValueError, match="finite"):
        vector_blob.encode(np.array([np.inf, 0.0], dtype=np.float32))
    with pytest.raises(ValueError, match="has 4 components, not 8"):
        vector_blob.decode_rows([np.zeros(4, "<f4").tobytes()], 8)


def test_recall_finds_the_same_nearest_rows_from_stored_int8(tmp_path: Path) -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    store = SqliteStore(tmp_path / "v.db")
    rows = _unit_rows(rng, 300, 64)
    for i, row in enumerate(rows):
        store.cache_embedding(f"h{i}", "m", row)
    got = np.stack([store.cached_embedding(f"h{i}", "m") for i in range(300)])
    queries = _unit_rows(rng, 50, 64)
    scores = queries @ rows.T
    stored = np.argsort(-(queries @ got.T), axis=1)[:, :5]
    # Random rows often lie within a thousandth of each other, so near ties may swap (CI saw
    # the best two of 300 do so); what may not happen is a row taking a place it is more
    # than the int8 rounding (a few thousandths at 64 dimensions) away from.
    best = np.sort(scores, axis=1)[:, ::-1][:, :5]
    picked = np.take_along_axis(scores, stored, axis=1)
    # Each stored cosine is off by at most |q|_1 x half a step (see the test above); a row
    # can only take a better one's place when both are off, towards each other.
    step = np.abs(rows).max(axis=1).max() / 127
    bound = 2 * np.abs(queries).sum(axis=1)[:, None] * step / 2
    assert bool(np.all(best - picked <= bound + 1e-6))
    store.close()


# ---- the contentless text index --------------------------------------------------------
def _vocabulary(app: App) -> dict[str, int]:
    conn = app.store.db.conn
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.test_vocab"
        " USING fts5vocab (main, builtin_fts, row)"
    )
    return {str(t): int(d) for t, d in conn.execute("SELECT term, doc FROM test_vocab")}


def test_replacing_and_deleting_an_entry_takes_its_own_words_out(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    # A trailing digit keeps the porter stemmer from shortening a word ("zq67e6051e"
    # would be indexed as "zq67e6051"), so the vocabulary holds the words as written.
    old, new = f"zq{secrets.token_hex(4)}7", f"zq{secrets.token_hex(4)}7"
    eid = _episode(app, 1, API, f"ledger {old} drift")
    assert _vocabulary(app).get(old) == 1
    app.store.builtin_put(eid, f"ledger {new} drift", None, None, "", "", context="near")
    words = _vocabulary(app)
    assert old not in words and words.get(new) == 1
    match = fts_match(new)
    assert match is not None and app.store.search_text(match, SCOPE, 5) == [eid]
    gone = fts_match(old)
    assert gone is not None and app.store.search_text(gone, SCOPE, 5) == []
    source = app.store.db.conn.execute("SELECT indexed FROM builtin_fts_source").fetchall()
    assert len(source) == 1 and isinstance(source[0][0], bytes)  # deflated
    assert json.loads(unpack(source[0][0]) or "")[0] == f"ledger {new} drift"
    assert app.store.builtin_delete(eid) is True
    assert new not in _vocabulary(app)
    assert tuple(
        app.store.db.conn.execute("SELECT count(*) FROM builtin_fts_source").fetchone()
    ) == (0,)
    assert app.store.builtin_delete(eid) is False


def _old_store(path: Path) -> None:
    """A store as migration 20 left it, with one row in each table migration 21 rebuilds."""
    conn = store_before(path, 21)
    conn.execute(
        "INSERT INTO episodes (rowid, id, run_id, agent, adapter, repo, outcome, scope,"
        " trust_class, started_at, recorded_at, text) VALUES (7, 'ep_00000000000000000007',"
        " 'r', 'a', 'x', 'acme/api', 'succeeded', 'project:acme/api', 'standard', 1, 1, 't')"
    )
    conn.execute(
        "INSERT INTO builtin_fts (rowid, text, summary, context, scope_key)"
        " VALUES (7, 'ledger drift', '', 'neighbour words', ?)",
        (scope_token("project:acme/api"),),
    )
    conn.execute(
        "INSERT INTO sessions (run_id, session_id, ord, subagent, cwd)"
        " VALUES ('r', 's1', 0, 0, '/w')"
    )
    conn.executemany(
        "INSERT INTO events (run_id, session_id, seq, type, path, passed, error_class)"
        " VALUES ('r', ?, 0, 'edit', ?, NULL, NULL)",
        [("s1", "src/a.py"), ("gone", "src/b.py")],
    )
    conn.close()


def test_migration_21_carries_every_row_and_old_vectors_stay_exact(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_store(path)
    rng = np.random.default_rng(secrets.randbits(32))
    row = _unit_rows(rng, 1, 16)[0]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO embeddings (content_hash, model_id, dim, vector) VALUES ('h', 'm', 16, ?)",
        (row.astype("<f4").tobytes(),),
    )
    conn.close()
    store = SqliteStore(path)
    conn = store.db.conn
    got = store.cached_embedding("h", "m")
    assert got is not None and np.array_equal(got, row)  # untouched by the migration
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
    assert "WITHOUT ROWID" in sql[0]
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'events_path'").fetchone() is None
    # The orphan (its session gone, as the cascade would have left it) is not carried.
    assert [tuple(r) for r in conn.execute("SELECT type, path FROM events")] == [
        ("edit", "src/a.py")
    ]
    assert (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'builtin_fts_content'").fetchone()
        is None
    )
    match = fts_match("neighbour")
    assert match is not None
    assert store.search_text(match, ["project:acme/api"], 5) == ["ep_00000000000000000007"]
    # A carried-over entry is replaced as cleanly as a new one.
    store.builtin_put("ep_00000000000000000007", "payroll export", None, None, "", "")
    ledger = fts_match("ledger")
    assert ledger is not None and store.search_text(ledger, ["project:acme/api"], 5) == []
    store.close()


# ---- free pages ------------------------------------------------------------------------
def _file_pages(db: Database) -> tuple[int, int]:
    conn = db.conn
    return (
        int(conn.execute("PRAGMA page_count").fetchone()[0]),
        int(conn.execute("PRAGMA freelist_count").fetchone()[0]),
    )


def test_a_new_store_hands_freed_pages_back(tmp_path: Path) -> None:
    db = Database(tmp_path / "f.db")
    assert tuple(db.conn.execute("PRAGMA auto_vacuum").fetchone()) == (2,)
    with db.write() as conn:
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany(
            "INSERT INTO filler VALUES (?)", [(secrets.token_bytes(3000),) for _ in range(600)]
        )
    with db.write() as conn:
        conn.execute("DELETE FROM filler WHERE rowid % 3 != 0")
    pages, free = _file_pages(db)
    assert free > 300
    released = db.release_free_pages(step=100)
    assert released == free
    assert _file_pages(db) == (pages - free, 0)
    assert tuple(db.conn.execute("SELECT count(*) FROM filler").fetchone()) == (200,)
    with pytest.raises(ValueError, match="step must be positive, got 0"):
        db.release_free_pages(step=0)
    db.close()


def test_a_store_made_without_incremental_vacuum_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_store(path)  # created with auto_vacuum off, as every store before this change
    db = Database(path)
    assert tuple(db.conn.execute("PRAGMA auto_vacuum").fetchone()) == (0,)
    assert db.release_free_pages() == 0
    db.close()


# ---- file paths stored once ------------------------------------------------------------
def _edit(app: App, run_id: str, *paths: str) -> None:
    record = make_record(run_id=run_id, sessions=[session(repo=API, edits=paths)])
    assert app.memory.ingest_run(record).status == "recorded"


def _names(app: App) -> list[tuple[str, str]]:
    rows = app.store.db.conn.execute("SELECT repo, path FROM store_paths ORDER BY path")
    return [tuple(r) for r in rows]


def test_each_path_is_stored_once_and_leaves_with_the_last_run_naming_it(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    shared = f"src/{secrets.token_hex(3)}/ledger.py"
    only = f"src/{secrets.token_hex(3)}/tax.py"
    _edit(app, "run-a", shared, only)
    _edit(app, "run-b", shared)
    assert _names(app) == sorted([(API, shared), (API, only)], key=lambda r: r[1])
    conn = app.store.db.conn
    assert conn.execute("SELECT count(*) FROM run_path_links").fetchone()[0] == 3
    # Recorded twice, linked once (the view's trigger skips a pair already there).
    app.store.record_run_paths("run-a", [(API, shared)], 1.0)
    assert conn.execute("SELECT count(*) FROM run_paths WHERE run_id = 'run-a'").fetchone()[0] == 2
    folder = shared.rsplit("/", 1)[0] + "/"
    assert {r.run_id for r in app.store.runs_editing(API, [folder], 10)} == {"run-a", "run-b"}
    assert [r.run_id for r in app.store.runs_editing(API, [only], 10)] == ["run-a"]
    # Forgetting a run's files (as run_forget does) drops a path no other run names.
    with app.store.db.write() as w:
        w.execute("DELETE FROM run_path_links WHERE run_id = 'run-a'")
    assert _names(app) == [(API, shared)]
    assert app.store.runs_editing(API, [only], 10) == []
    with app.store.db.write() as w:
        w.execute("DELETE FROM run_paths WHERE run_id = 'run-b'")
    assert _names(app) == []


def test_migration_22_carries_each_runs_paths(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = store_before(path, 22)
    for run in ("r1", "r2"):
        conn.execute(
            "INSERT INTO runs (run_id, agent, adapter, trigger, started_at, ended_at, outcome,"
            " reason, cost_source, spawned, repo, record_json, record_hash, episode_status,"
            " ingested_at) VALUES (?, 'a', 'x', 'manual', 1, 2, 'succeeded', 'done', 'none',"
            " 0, ?, '{}', 'h', 'recorded', 2)",
            (run, API),
        )
    rows = [("r1", "src/a.py", 2.0), ("r1", "src/b.py", 2.0), ("r2", "src/a.py", 3.0)]
    rows.append(("gone", "src/c.py", 4.0))  # its run was deleted: not carried
    conn.executemany(
        "INSERT INTO run_paths (run_id, repo, path, ended_at) VALUES (?, ?, ?, ?)",
        [(r, API, p, t) for r, p, t in rows],
    )
    conn.close()
    store = SqliteStore(path)
    got = store.db.conn.execute(
        "SELECT run_id, repo, path, ended_at FROM run_paths ORDER BY run_id, path"
    ).fetchall()
    assert [tuple(r) for r in got] == [(r, API, p, t) for r, p, t in rows[:3]]
    assert store.db.conn.execute("SELECT count(*) FROM store_paths").fetchone()[0] == 2
    assert [r.run_id for r in store.runs_editing(API, ["src/a.py"], 5)] == ["r2", "r1"]
    # A deleted run's links go by the cascade, and its only path with them.
    with store.db.write() as w:
        w.execute("DELETE FROM runs WHERE run_id = 'r1'")
    left = store.db.conn.execute("SELECT path FROM store_paths").fetchall()
    assert [tuple(r) for r in left] == [("src/a.py",)]
    store.close()
