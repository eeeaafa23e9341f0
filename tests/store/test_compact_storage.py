"""The SQLite store's compact layout (issue 20, footprint): int8 vectors with a scale each, a
contentless text index beside the words it indexed, and free pages handed back."""

from __future__ import annotations

import json
import random
import re
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import App
from fleetmem.store.sqlite import fts_source, int8_scores, vector_blob
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
        if dim >= 384:
            # At the embedders' sizes a cosine moves by about a thousandth. The rounding errors
            # are uniform within half a step, so one cosine's error has a standard deviation of
            # |q|_2 * step / sqrt(12), about 4.5e-4 at 384 dimensions; over these 10,000 pairs
            # the largest reached 2.1e-3 once in 25 runs. 3e-3 is past 6 deviations.
            assert float(np.abs(queries @ back.T - queries @ rows.T).max()) < 3e-3


def test_int8_blobs_load_into_the_search_as_the_integers_they_were_written_as() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    for dim in (7, 384):
        rows = _unit_rows(rng, 50, dim)
        blobs = [vector_blob.encode(r) for r in rows]
        quantized, scales = vector_blob.quantized_rows(blobs, dim)
        want_q, want_s = int8_scores.quantize_rows(rows)
        assert quantized.dtype == np.int8 and np.array_equal(quantized, want_q)
        assert np.array_equal(scales, want_s)
        # Older formats are quantized as they are read.
        half = [bytes((2,)) + r.astype("<f2").tobytes() for r in rows]
        q_half, _ = vector_blob.quantized_rows(half, dim)
        assert int(np.abs(q_half.astype(np.int16) - want_q).max()) <= 1


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
    held = fts_source.of_episode(app.store.db.conn, eid)
    assert held is not None and held[0] == f"ledger {new} drift"
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
    # (events is a view since migration 23, of event_rows, WITHOUT ROWID as 21 made events)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'event_rows'").fetchone()
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


def _old_run(conn: sqlite3.Connection, run: str) -> None:
    """A run row of ``API`` as an older store holds it (seeding a migration's test)."""
    conn.execute(
        "INSERT INTO runs (run_id, agent, adapter, trigger, started_at, ended_at, outcome,"
        " reason, cost_source, spawned, repo, record_json, record_hash, episode_status,"
        " ingested_at) VALUES (?, 'a', 'x', 'manual', 1, 2, 'succeeded', 'done', 'none',"
        " 0, ?, '{}', 'h', 'recorded', 2)",
        (run, API),
    )


def test_migration_22_carries_each_runs_paths(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = store_before(path, 22)
    for run in ("r1", "r2"):
        _old_run(conn, run)
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


# ---- packed against the body, finished jobs gone (migration 23) --------------------------
def _ingest(app: App, marker: str) -> str:
    record = make_record(
        run_id=f"run-{marker}",
        result_text=f"fixed the {marker} ledger test",
        sessions=[session(repo=API)],
    )
    episode_id = app.memory.ingest_run(record).episode_id
    assert episode_id is not None
    return episode_id


def test_the_rendering_is_packed_against_the_body_and_reads_back(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    marker = f"zq{secrets.token_hex(4)}7"
    eid = _ingest(app, marker)
    raw = app.store.db.conn.execute(
        "SELECT text, episode_json FROM episodes WHERE id = ?", (eid,)
    ).fetchone()
    assert bytes(raw[0])[0] == 2  # packed against the body
    rendering = unpack(raw[0], unpack(raw[1]))
    assert rendering is not None and marker in rendering
    assert len(raw[0]) < 0.5 * len(rendering.encode())
    got = app.store.get_episode(eid)
    assert got is not None and got.text == rendering


def test_the_index_entry_stays_removable_after_its_body_changes(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    marker = f"zq{secrets.token_hex(4)}7"
    eid = _ingest(app, marker)
    assert _vocabulary(app).get(marker) == 1
    row = app.store.get_episode(eid)
    assert row is not None and row.episode is not None
    # A new body (as a summary arriving does) is written after the entry was indexed.
    body = {**row.episode, "summary": f"summary {secrets.token_hex(3)}"}
    app.store.update_episode_body(
        eid, summary=body["summary"], summary_outcome="ok", episode=body, text="t", content_hash="h"
    )
    held = fts_source.of_episode(app.store.db.conn, eid)
    assert held is not None and marker in held[0]
    # A forget drops the body; the entry is still read, and taken out with its words.
    app.store.tombstone_episode(eid, 1.0)
    assert fts_source.of_episode(app.store.db.conn, eid) is not None
    assert app.store.builtin_delete(eid) is True
    assert marker not in _vocabulary(app)
    assert app.store.db.conn.execute("SELECT count(*) FROM builtin_fts_source").fetchone()[0] == 0


def test_a_finished_or_cancelled_job_leaves_no_row(make_app: Callable[..., App]) -> None:
    app = make_app()
    _ingest(app, "done")  # recorded at once: its job ran and finished
    jobs = app.store.db.conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
    assert jobs == 0
    record = make_record(run_id="run-later", sessions=[session(repo=API)])
    later = app.memory.ingest_run(record, process_now=False).episode_id
    assert later is not None
    pending = app.store.db.conn.execute("SELECT state FROM jobs").fetchall()
    assert [tuple(r) for r in pending] == [("pending",)]
    app.store.tombstone_episode(later, 2.0)
    assert app.store.db.conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0


def test_migration_23_removes_finished_jobs_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = store_before(path, 23)
    conn.executemany(
        "INSERT INTO jobs (kind, provider, episode_id, state, created_at, next_attempt_at)"
        " VALUES ('record', 'builtin', ?, ?, 1, 1)",
        [("ep_a", "done"), ("ep_b", "pending"), ("ep_c", "failed"), ("ep_d", "done")],
    )
    conn.close()
    store = SqliteStore(path)
    left = store.db.conn.execute("SELECT episode_id, state FROM jobs ORDER BY episode_id")
    assert [tuple(r) for r in left] == [("ep_b", "pending"), ("ep_c", "failed")]
    store.close()


def _event_paths(store: SqliteStore) -> list[tuple[str, int]]:
    rows = store.db.conn.execute("SELECT path, refs FROM event_paths ORDER BY path")
    return [(str(r[0]), int(r[1])) for r in rows]


def test_migration_23_interns_event_paths_and_drops_each_with_its_last_event(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    conn = store_before(path, 23)
    shared, own = f"src/{secrets.token_hex(3)}.py", f"src/{secrets.token_hex(3)}.py"
    for run in ("r1", "r2"):
        _old_run(conn, run)
        conn.execute(
            "INSERT INTO sessions (run_id, session_id, ord, subagent, cwd)"
            " VALUES (?, 's1', 0, 0, '/w')",
            (run,),
        )
    events = [
        ("r1", 0, "edit", shared, None, None),
        ("r1", 1, "edit", own, None, None),
        ("r1", 2, "verify", None, 0, "test_failure"),
        ("r2", 0, "edit", shared, None, None),
    ]
    conn.executemany(
        "INSERT INTO events (run_id, session_id, seq, type, path, passed, error_class)"
        " VALUES (?, 's1', ?, ?, ?, ?, ?)",
        events,
    )
    conn.close()
    store = SqliteStore(path)
    got = store.db.conn.execute(
        "SELECT run_id, seq, type, path, passed, error_class FROM events ORDER BY run_id, seq"
    ).fetchall()
    assert [tuple(r) for r in got] == events
    assert _event_paths(store) == sorted([(shared, 2), (own, 1)])
    assert [e.path for e in store.run_events("r1")] == [shared, own, None]
    # A run's events going (as a forget drops them) takes the paths only it named.
    with store.db.write() as w:
        w.execute("DELETE FROM events WHERE run_id = 'r1'")
    assert _event_paths(store) == [(shared, 1)]
    # The cascade from a run's sessions likewise.
    with store.db.write() as w:
        w.execute("DELETE FROM sessions WHERE run_id = 'r2'")
    assert _event_paths(store) == []
    assert store.db.conn.execute("SELECT count(*) FROM event_rows").fetchone()[0] == 0
    store.close()


def test_a_forgotten_run_leaves_no_event_path_behind(make_app: Callable[..., App]) -> None:
    app = make_app()
    mine, theirs = f"src/{secrets.token_hex(3)}.py", f"src/{secrets.token_hex(3)}.py"
    ids = []
    for n, edits in enumerate(((mine, theirs), (theirs,))):
        record = make_record(run_id=f"run-{n}", sessions=[session(repo=API, edits=edits)])
        episode_id = app.memory.ingest_run(record).episode_id
        assert episode_id is not None
        ids.append(episode_id)
    assert isinstance(app.store, SqliteStore)
    assert _event_paths(app.store) == sorted([(mine, 1), (theirs, 2)])
    app.memory.forget(ids[0])
    assert _event_paths(app.store) == [(theirs, 1)]
    assert [e.path for e in app.store.run_events("run-1") if e.type == "edit"] == [theirs]


def test_the_pull_request_lookup_reads_its_partial_index(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    plan = store.db.conn.execute(
        "EXPLAIN QUERY PLAN SELECT pull_request FROM runs WHERE repo = ? AND branch = ?"
        " AND started_at < ? AND pull_request IS NOT NULL"
        " ORDER BY started_at DESC, run_id DESC LIMIT 1",
        (API, "main", 5.0),
    ).fetchall()
    assert any("runs_pull_requests" in str(r[-1]) for r in plan), plan
    store.close()


def test_a_body_edited_behind_the_stores_back_is_rendered_again(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    marker = f"zq{secrets.token_hex(4)}7"
    eid = _ingest(app, marker)
    row = app.store.get_episode(eid)
    assert row is not None and row.episode is not None and marker in (row.text or "")
    edited = {**row.episode, "result_excerpt": f"edited {marker}8"}
    with app.store.db.write() as w:  # the rendering is left packed against the old body
        w.execute("UPDATE episodes SET episode_json = ? WHERE id = ?", (json.dumps(edited), eid))
    again = app.store.get_episode(eid)
    assert again is not None and again.episode == edited
    assert f"edited {marker}8" in (again.text or "")


def test_the_index_holds_exactly_the_live_entries_words_through_any_sequence_of_changes(
    make_app: Callable[..., App],
) -> None:
    """Random ingests, re-indexes, new bodies, forgets and index deletes: after every step
    each episode's marker words are in the index exactly while its entry is, and every entry
    can be read back (it is always packed against the body its episode holds)."""
    from fleetmem.providers.builtin import index_text

    rng = random.Random(secrets.randbits(32))
    app = make_app()
    store = app.store
    assert isinstance(store, SqliteStore)
    words: dict[str, set[str]] = {}  # episode id -> the markers its entry indexed
    for step in range(60):
        live = [e for e in words if store.get_episode(e) is not None]
        op = rng.choice(["ingest", "ingest", "reindex", "body", "forget", "delete"])
        if op == "ingest" or not live:
            marker = f"zq{secrets.token_hex(4)}{step}7"
            eid = _ingest(app, marker)
            words[eid] = {marker}
        else:
            eid = rng.choice(live)
            row = store.get_episode(eid)
            assert row is not None
            if op == "reindex" and row.episode is not None and words[eid]:
                # As the provider re-indexes an episode (its neighbours' context changed).
                store.builtin_put(eid, index_text(row.episode), None, None, "", "", context="x")
            elif op == "body" and row.episode is not None:
                body = {**row.episode, "summary": f"now {secrets.token_hex(3)}"}
                store.update_episode_body(
                    eid, summary=body["summary"], summary_outcome="ok", episode=body,
                    text="t", content_hash="h",
                )  # fmt: skip
            elif op == "forget":
                store.tombstone_episode(eid, float(step))
            elif op == "delete":
                store.builtin_delete(eid)
                words[eid] = set()
        vocabulary = _vocabulary(app)
        entries = {}
        for episode_id, markers in words.items():
            held = fts_source.of_episode(store.db.conn, episode_id)  # never unreadable
            assert (held is not None) == bool(markers), (step, op, episode_id)
            if held is not None:
                assert markers <= set(re.findall(r"\w+", held[0])), (step, op, markers)
                entries[episode_id] = set(re.findall(r"\w+", " ".join(held[:3])))
        # Every marker is indexed by exactly the entries holding it (its own, and its
        # neighbours' context): nothing forgotten or replaced was left behind.
        for marker in {w for w in vocabulary if w.startswith("zq")} | {
            m for ms in words.values() for m in ms
        }:
            want = sum(marker in held_words for held_words in entries.values())
            assert vocabulary.get(marker, 0) == want, (step, op, marker)
