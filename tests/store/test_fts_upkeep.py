"""Merging an FTS5 index's segments: same answers, bounded steps, resumable, on the hourly pass.

A bare FTS5 table on a real SQLite file shows the mechanics; a real app's built-in index shows
the store, ``fleetmem status`` and the daemon's jobs use them.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleetmem import metrics
from fleetmem.core.textquery import fts_match
from fleetmem.service import doctor
from fleetmem.service.bootstrap import App
from fleetmem.service.jobs import BackgroundJobs
from fleetmem.store.sqlite import fts_upkeep
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.fts_upkeep import compact, segment_count
from tests.conftest import make_record, session

pytestmark = pytest.mark.sqlite_only(
    reason="FTS5 segments and merges; PostgreSQL's GIN index has none (tests/store/"
    "test_postgres.py checks its store reports one segment and a no-op pass)"
)

WORDS = ["ledger", "drift", "cache", "deploy", "token", "rotate", "shard", "replica"]
WORDS += ["quorum", "lease", "backoff", "jitter"]
QUERIES = ["ledger", "drift OR cache", "quorum lease", "rotate OR jitter OR shard", "nothing"]


def _text(i: int) -> str:
    # A hundred words of its own per row, so the merged index spans many leaf pages.
    own = " ".join(f"note{i}x{k}" for k in range(100))
    return " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 6)) + " " + own


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[Database]:
    """An FTS5 table fed one row per transaction, as the daemon feeds the episode index.

    FTS5's automatic merging is off (and its emergency merge far away), so 80 small rows
    leave the many segments that only a far larger index would otherwise reach.
    """
    db = Database(tmp_path / "notes.db")
    with db.write() as conn:
        conn.execute("CREATE VIRTUAL TABLE notes_fts USING fts5 (body, tokenize = 'porter')")
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('crisismerge', 200)")
    for i in range(80):
        with db.write() as conn:
            conn.execute("INSERT INTO notes_fts (rowid, body) VALUES (?, ?)", (i + 1, _text(i)))
    yield db
    db.close()


def _answers(db: Database) -> dict[str, list[tuple[int, float]]]:
    sql = "SELECT rowid, bm25(notes_fts) FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid"
    return {q: [(int(r[0]), float(r[1])) for r in db.conn.execute(sql, (q,))] for q in QUERIES}


def _data(db: Database) -> list[tuple[int, bytes]]:
    return [tuple(r) for r in db.conn.execute("SELECT id, block FROM notes_fts_data ORDER BY id")]


class Clock:
    """A pass's clock, moved by ``step`` seconds on every reading after the first."""

    def __init__(self, step: float, on_read: Callable[[], None] | None = None) -> None:
        self.now, self.step, self.reads, self.on_read = 0.0, step, 0, on_read

    def __call__(self) -> float:
        self.reads += 1
        if self.reads > 1:
            self.now += self.step
            if self.on_read is not None:
                self.on_read()
        return self.now


def test_many_segments_become_one_and_every_query_answers_the_same(notes: Database) -> None:
    before = segment_count(notes.conn, "notes_fts")
    assert before >= fts_upkeep.COMPACT_MIN_SEGMENTS  # one row per transaction spreads out
    answers = _answers(notes)
    assert all(answers[q] for q in QUERIES[:-1]) and answers["nothing"] == []

    done = compact(notes, "notes_fts", pages=1)

    assert (done.segments_before, done.segments_after, done.complete) == (before, 1, True)
    assert done.steps >= 2  # small steps: the rewrite took several transactions
    assert segment_count(notes.conn, "notes_fts") == 1
    assert _answers(notes) == answers  # same rows, same BM25 scores
    check = "INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)"
    with notes.write() as conn:
        conn.execute(check)


def test_deleted_rows_stay_deleted_and_scores_keep_the_store_size(notes: Database) -> None:
    with notes.write() as conn:
        conn.execute("DELETE FROM notes_fts WHERE rowid % 3 = 0")
    answers = _answers(notes)
    compact(notes, "notes_fts")
    assert _answers(notes) == answers
    ids = [r for q in QUERIES for r, _ in _answers(notes)[q]]
    assert ids and all(r % 3 for r in ids)


def test_an_index_under_the_threshold_is_not_rewritten(tmp_path: Path) -> None:
    db = Database(tmp_path / "small.db")
    with db.write() as conn:
        conn.execute("CREATE VIRTUAL TABLE notes_fts USING fts5 (body)")
        conn.executemany(
            "INSERT INTO notes_fts (body) VALUES (?)", [(_text(i),) for i in range(50)]
        )
    blocks = _data(db)
    done = compact(db, "notes_fts")
    assert (done.steps, done.segments_before, done.segments_after) == (0, 1, 1)
    assert _data(db) == blocks
    # An empty index has no segment at all and nothing to do either.
    with db.write() as conn:
        conn.execute("CREATE VIRTUAL TABLE empty_fts USING fts5 (body)")
    assert compact(db, "empty_fts", min_segments=0).steps == 0
    db.close()


@pytest.mark.parametrize(
    ("sizes", "worth"),
    [
        ([], False),
        ([500], False),
        ([100] * 7, False),  # under 8 segments: left to FTS5's own merging
        ([100] * 8, True),
        ([1000] + [10] * 7, False),  # 6.5% outside the largest: not yet
        ([1000] + [16] * 7, True),  # 10.1%
        ([10_000] + [1] * 30, False),  # many tiny segments cost a query little
    ],
)
def test_a_rewrite_waits_for_enough_segments_and_enough_data_outside_the_largest(
    sizes: list[int], worth: bool
) -> None:
    assert fts_upkeep.worth_merging(sizes, fts_upkeep.COMPACT_MIN_SEGMENTS) is worth


def test_a_few_small_segments_beside_a_large_one_are_left_until_they_add_up(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "grown.db")
    with db.write() as conn:
        conn.execute("CREATE VIRTUAL TABLE notes_fts USING fts5 (body)")
        conn.executemany(
            "INSERT INTO notes_fts (body) VALUES (?)", [(_text(i),) for i in range(1000)]
        )
        conn.execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')")  # one segment
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('crisismerge', 200)")

    def add_one(i: int) -> None:
        with db.write() as conn:
            conn.execute("INSERT INTO notes_fts (body) VALUES (?)", (f"ledger entry {i}",))

    for i in range(9):
        add_one(i)
    sizes = fts_upkeep.segment_sizes(db.conn, "notes_fts")
    assert len(sizes) == 10 and sum(sizes[1:]) < fts_upkeep.COMPACT_MIN_SHARE * sum(sizes)
    blocks = _data(db)
    assert compact(db, "notes_fts").steps == 0  # nine one-row segments: not worth a rewrite
    assert _data(db) == blocks
    for i in range(9, 15):
        add_one(i)
    assert segment_count(db.conn, "notes_fts") == 16
    assert compact(db, "notes_fts").steps == 0  # fifteen tiny ones, a few pages: still not
    with db.write() as conn:  # then a tenth of the index arrives at once
        conn.executemany(
            "INSERT INTO notes_fts (body) VALUES (?)", [(_text(i),) for i in range(100)]
        )
    sizes = fts_upkeep.segment_sizes(db.conn, "notes_fts")
    assert fts_upkeep.outside_share(sizes) >= fts_upkeep.COMPACT_MIN_SHARE
    done = compact(db, "notes_fts")
    assert done.steps >= 1 and done.segments_after == 1
    db.close()


def test_a_spent_budget_leaves_the_rest_to_the_next_pass(notes: Database, tmp_path: Path) -> None:
    answers = _answers(notes)
    first = compact(notes, "notes_fts", pages=1, budget_s=1.0, clock=Clock(step=1.0))
    assert first.steps == 1 and not first.complete and first.segments_after > 1
    # Mid-merge the index still answers exactly as before.
    assert _answers(notes) == answers
    # The unfinished merge lives in the index itself: another process (here another
    # connection, as `fleetmem jobs` beside the daemon) finishes it.
    other = Database(tmp_path / "notes.db")
    second = compact(other, "notes_fts", pages=1, min_segments=2)
    other.close()
    assert second.complete and second.segments_after == 1
    assert _answers(notes) == answers


def test_a_writer_gets_in_between_two_steps(notes: Database, tmp_path: Path) -> None:
    # Another process's connection with a short busy timeout: it could not write if a pass
    # held the write lock from its first step to its last.
    other = Database(tmp_path / "notes.db", busy_timeout_ms=50)
    written: list[int] = []

    def write_between_steps() -> None:
        if len(written) == 3:
            return
        rowid = 1000 + len(written)
        with other.write() as conn:
            conn.execute("INSERT INTO notes_fts (rowid, body) VALUES (?, 'ledger')", (rowid,))
        written.append(rowid)

    done = compact(notes, "notes_fts", pages=1, clock=Clock(0.0, write_between_steps))
    assert done.steps > 3 and len(written) == 3
    assert done.complete and segment_count(notes.conn, "notes_fts") == 1
    found = {r for r, _ in _answers(notes)["ledger"]}
    assert set(written) <= found
    other.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table": "notes_fts; DROP TABLE x"}, "table must be a plain identifier"),
        ({"table": "Notes"}, "table must be a plain identifier"),
        ({"pages": 0}, "pages must be positive, got 0"),
        ({"budget_s": -1.0}, "budget_s must not be negative, got -1.0"),
    ],
)
def test_bad_arguments_are_refused_by_name_before_any_write(
    notes: Database, kwargs: dict[str, object], message: str
) -> None:
    blocks = _data(notes)
    args: dict[str, object] = {"table": "notes_fts", **kwargs}
    with pytest.raises(ValueError, match=message):
        compact(notes, **args)  # type: ignore[arg-type]
    assert _data(notes) == blocks


def _ingest(app: App, n: int) -> None:
    record = make_record(
        run_id=f"run-{n}",
        started_at=f"2026-11-28T09:{n // 60:02d}:{n % 60:02d}Z",
        ended_at=f"2026-11-28T09:{n // 60:02d}:{n % 60:02d}Z",
        sessions=[session(repo="github.com/acme/api")],
    )
    assert app.memory.ingest_run(record).episode_id is not None


def _segmented_app(make_app: Callable[..., App], runs: int) -> App:
    """A real app whose episode index has as many segments as a far larger one would."""
    app = make_app()
    with app.store.db.write() as conn:
        conn.execute("INSERT INTO builtin_fts (builtin_fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO builtin_fts (builtin_fts, rank) VALUES ('crisismerge', 200)")
    for n in range(runs):
        _ingest(app, n)
    return app


def test_the_hourly_pass_compacts_the_episode_index_and_status_shows_it(
    make_app: Callable[..., App], caplog: pytest.LogCaptureFixture
) -> None:
    app = _segmented_app(make_app, 30)
    before = app.memory.status()["index_segments"]
    assert before >= fts_upkeep.COMPACT_MIN_SEGMENTS
    match = fts_match("tests fix")
    assert match is not None
    scopes = ["project:github.com/acme/api"]
    found = app.store.search_text(match, scopes, 50)
    assert found

    jobs = BackgroundJobs(app.memory, clock=lambda: 0.0, retention_every_s=3600.0)
    with caplog.at_level(logging.INFO, logger="fleetmem.memory"):
        jobs.tick()
    status = app.memory.status()
    assert (status["index_segments"], status["index_outside_largest"]) == (1, 0.0)
    assert metrics.REGISTRY.get_sample_value("fleetmem_index_segments") == 1
    assert f"jobs.index_compacted segments={before}->1" in caplog.text
    assert app.store.search_text(match, scopes, 50) == found


def test_the_doctor_warns_until_an_upkeep_pass_has_merged_the_segments(
    make_app: Callable[..., App],
) -> None:
    app = _segmented_app(make_app, 12)
    sizes = app.store.builtin_segments()
    assert len(sizes) >= fts_upkeep.COMPACT_MIN_SEGMENTS
    assert fts_upkeep.outside_share(sizes) >= doctor.INDEX_WARN_SHARE
    row = {c.name: c for c in doctor.run_checks(app)}["text index"]
    assert row.status == "warn"
    assert row.detail.startswith(f"{len(sizes)} segments, ") and "fleetmem jobs" in row.detail
    app.memory.compact_index()
    row = {c.name: c for c in doctor.run_checks(app)}["text index"]
    assert (row.status, row.detail) == ("ok", "1 segment")


def test_a_failed_compaction_never_stops_the_tick(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app()

    def broken(budget_s: float) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(app.store, "builtin_compact", broken)
    jobs = BackgroundJobs(app.memory, clock=lambda: 0.0)
    with caplog.at_level(logging.WARNING, logger="fleetmem.jobs"):
        jobs.tick()
    assert jobs.ticks == 1
    assert "jobs.index_compact_failed error=OperationalError" in caplog.text
