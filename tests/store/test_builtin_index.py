"""The built-in index at scale: scoped FTS, phrase pruning, the scoring cap, neighbours.

Every search goes through the real SQLite store; the thresholds that normally only apply to
large stores are lowered with monkeypatch so a handful of rows exercises them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import App
from fleetmem.store.sqlite import builtin_index, term_stats
from fleetmem.store.sqlite.builtin_index import scope_token
from fleetmem.store.sqlite.packed import unpack
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import make_record, session
from tests.store.schema_at import store_before

API = "github.com/acme/api"
WEB = "github.com/acme/web"
SCOPE = [f"project:{API}"]


def _episode(app: App, n: int, repo: str, text: str, *, minute: int = 0) -> str:
    """Store one episode of ``repo`` and index ``text`` as its whole text.

    Recording an episode re-indexes its neighbours with their stored text, so every earlier
    episode's chosen text is written again afterwards.
    """
    record = make_record(
        run_id=f"run-{repo.rsplit('/', 1)[-1]}-{n}",
        started_at=f"2026-11-28T09:{minute:02d}:{n % 60:02d}Z",
        ended_at=f"2026-11-28T09:{minute:02d}:{n % 60:02d}Z",
        sessions=[session(repo=repo)],
    )
    episode_id = app.memory.ingest_run(record).episode_id
    assert episode_id is not None
    held, texts = _TEXTS.setdefault(id(app), (app, {}))
    assert held is app
    texts[episode_id] = text
    for known, chosen in texts.items():
        app.store.builtin_put(known, chosen, None, None, "", "")
    return episode_id


# Each app's texts by episode id. The app itself is held too: an id is reused once its object
# is freed, and a later test's app would then re-index episodes of a closed store.
_TEXTS: dict[int, tuple[App, dict[str, str]]] = {}


def _scope_of(app: App, ids: list[str]) -> set[str]:
    return {row.scope for row in app.store.get_episodes(ids).values()}


@pytest.mark.sqlite_only(reason="the scope token is FTS5's scope_key column (PostgreSQL: a column)")
def test_scope_token_in_the_migration_equals_the_one_written(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    scope = "project:gitlab.example/équipe/api"
    sql = "SELECT 's' || lower(hex(?)) || '0'"  # the expression of m0011
    assert app.store.db.conn.execute(sql, (scope,)).fetchone()[0] == scope_token(scope)
    assert scope_token(scope) != scope_token("project:gitlab.example/equipe/api")


def test_scoped_search_never_returns_another_scopes_rows(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin_index, "PRUNE_FLOOR_DOCS", 0)
    app = make_app()
    api = [_episode(app, i, API, f"ledger drift case {i}") for i in range(4)]
    web = [_episode(app, i, WEB, f"ledger drift case {i}") for i in range(4)]
    match = fts_match("ledger drift")
    assert match is not None
    assert set(app.store.search_text(match, [f"project:{API}"], 20)) == set(api)
    assert set(app.store.search_text(match, [f"project:{WEB}"], 20)) == set(web)
    both = app.store.search_text(match, [f"project:{API}", f"project:{WEB}"], 20)
    assert set(both) == set(api) | set(web)
    # Naming another scope's token as a query word finds nothing outside the caller's scope.
    forged = fts_match(f"ledger {scope_token('project:' + WEB)}")
    assert forged is not None
    found = app.store.search_text(forged, [f"project:{API}"], 20)
    assert found and _scope_of(app, found) == {f"project:{API}"}


def test_common_phrases_are_pruned_but_never_all_of_them(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin_index, "PRUNE_FLOOR_DOCS", 0)
    monkeypatch.setattr(builtin_index, "PRUNE_SHARE", 0.5)
    app = make_app()
    scope = [f"project:{API}"]
    common = [_episode(app, i, API, f"deploy pipeline step {i}") for i in range(5)]
    rare = _episode(app, 9, API, "reconcile ledger")
    # "deploy" is in 5 of 6 documents (over half): only "ledger" is scored.
    match = fts_match("deploy ledger")
    assert match is not None
    assert app.store.search_text(match, scope, 20) == [rare]
    # Every word common: the rarest is kept, so the query still finds something.
    only_common = fts_match("deploy pipeline")
    assert only_common is not None
    assert set(app.store.search_text(only_common, scope, 20)) == set(common)
    # Below the floor nothing is pruned: both words rank.
    monkeypatch.setattr(builtin_index, "PRUNE_FLOOR_DOCS", 1_000)
    assert set(app.store.search_text(match, scope, 20)) == {*common, rare}


def test_forgotten_rows_are_skipped_and_the_list_still_fills(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    scope = [f"project:{API}"]
    ids = [_episode(app, i, API, "ledger " * (10 - i) + f"filler{i}") for i in range(8)]
    match = fts_match("ledger")
    assert match is not None
    best = app.store.search_text(match, scope, 3)
    assert len(best) == 3
    for episode_id in ids[:6]:
        # Tombstoned, index row not yet removed (the forget job has not run).
        app.store.tombstone_episode(episode_id, 1.0)
    assert app.store.builtin_has(ids[0])
    # The six best are forgotten: the inner list widens until the live ones are reached.
    assert app.store.search_text(match, scope, 3) == [ids[6], ids[7]]


def test_only_the_newest_rows_are_scored_past_the_cap(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    scope = [f"project:{API}"]
    ids = [_episode(app, i, API, f"ledger case{i}") for i in range(6)]
    match = fts_match("ledger")
    assert match is not None
    monkeypatch.setattr(builtin_index, "MAX_SCORED", 2)
    assert set(app.store.search_text(match, scope, 10)) == set(ids[-2:])


def test_neighbours_are_the_closest_in_the_window_whatever_comes_later(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    first = _episode(app, 1, API, "a", minute=0)
    middle = _episode(app, 2, API, "b", minute=1)
    after = _episode(app, 3, API, "c", minute=2)
    _episode(app, 4, WEB, "other repository, closer in time", minute=1)
    for n in range(5, 30):  # many later episodes must not hide the close ones
        _episode(app, n, API, "later", minute=30)
    row = app.store.get_episode(middle)
    assert row is not None
    before, nxt = app.store.builtin_neighbours(row, 3600)
    assert before is not None and before.id == first
    assert nxt is not None and nxt.id == after
    assert app.store.builtin_neighbours(row, 30) == (None, None)  # 60 s apart: outside


def test_vector_search_over_two_scopes_merges_by_similarity(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    a = _episode(app, 1, API, "a")
    b = _episode(app, 2, WEB, "b")
    c = _episode(app, 3, API, "c")
    for episode_id, vec in ((a, [1, 0, 0]), (b, [0.8, 0.6, 0]), (c, [0, 1, 0])):
        app.store.builtin_put(episode_id, "t", None, np.array(vec, np.float32), episode_id, "m")
    q = np.array([1, 0, 0], dtype=np.float32)
    both = [f"project:{API}", f"project:{WEB}"]
    assert [i for i, _ in app.store.search_vector(q, "m", both, 3)] == [a, b, c]
    assert [i for i, _ in app.store.search_vector(q, "m", [f"project:{API}"], 3)] == [a, c]
    app.store.builtin_delete(b)
    assert [i for i, _ in app.store.search_vector(q, "m", both, 3)] == [a, c]


@pytest.mark.sqlite_only(reason="rebuilds an FTS5 table of SQLite's migration 11")
def test_migration_11_gives_existing_rows_their_scope_token(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = store_before(path, 11)
    conn.execute(
        "INSERT INTO episodes (rowid, id, run_id, agent, adapter, repo, outcome, scope,"
        " trust_class, started_at, recorded_at, text) VALUES (7, 'ep_00000000000000000007',"
        " 'r', 'a', 'x', 'acme/api', 'succeeded', 'project:acme/api', 'standard', 1, 1, 't')"
    )
    conn.execute(
        "INSERT INTO builtin_fts (rowid, text, summary, context)"
        " VALUES (7, 'ledger drift', '', 'neighbour words')"
    )
    conn.close()
    store = SqliteStore(path)
    # Migration 21 keeps what was indexed beside the (now contentless) index.
    row = store.db.conn.execute("SELECT indexed FROM builtin_fts_source WHERE rowid = 7").fetchone()
    text, _summary, context, scope_key = json.loads(unpack(row[0]) or "")
    assert (text, context, scope_key) == (
        "ledger drift",
        "neighbour words",
        scope_token("project:acme/api"),
    )
    match = fts_match("ledger")
    assert match is not None
    assert store.search_text(match, ["project:acme/api"], 5) == ["ep_00000000000000000007"]
    assert store.search_text(match, ["project:acme/web"], 5) == []
    store.close()


def test_vectors_for_returns_the_stored_vectors_of_one_model(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    a = _episode(app, 1, API, "a")
    b = _episode(app, 2, API, "b")
    app.store.builtin_put(a, "t", None, np.array([1, 0], np.float32), "ha", "m")
    app.store.builtin_put(b, "t", None, np.array([0, 1], np.float32), "hb", "other")
    got = app.store.builtin_vectors_for([a, b, "ep_missing"], "m")
    assert list(got) == [a]
    np.testing.assert_array_equal(got[a], np.array([1, 0], np.float32))
    assert app.store.builtin_vectors_for([], "m") == {}


# ---- phrase-pruning counts shared through the store (migration 13) -------------------------
def _vocab_walks(store: SqliteStore) -> list[str]:
    """The statements of ``store``'s connection on this thread that count a term's postings."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(
        lambda sql: seen.append(sql) if "builtin_index_vocab" in sql and "max(doc)" in sql else None
    )
    return seen


def _shared_rows(app: App) -> dict[str, tuple[int, int]]:
    rows = app.store.db.conn.execute("SELECT term, docs, taken_at FROM builtin_term_counts")
    return {str(t): (int(d), int(a)) for t, d, a in rows}


@pytest.fixture
def counting(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> tuple[App, list[str], str]:
    """A store small enough to read (pruning and sharing thresholds lowered): five episodes
    saying "deploy pipeline" and one saying "reconcile ledger"; (app, common, rare)."""
    monkeypatch.setattr(builtin_index, "PRUNE_FLOOR_DOCS", 0)
    monkeypatch.setattr(builtin_index, "PRUNE_SHARE", 0.5)
    monkeypatch.setattr(term_stats, "SHARE_MIN_DOCS", 2)
    app = make_app()
    common = [_episode(app, i, API, f"deploy pipeline step {i}") for i in range(5)]
    return app, common, _episode(app, 9, API, "reconcile ledger")


def _other_process(app: App) -> SqliteStore:
    """The same store opened again: its own connection and its own in-process memo."""
    return SqliteStore(Path(app.store.db.path))


@pytest.mark.sqlite_only(
    reason="FTS5's fts5vocab counts shared in builtin_term_counts; PostgreSQL keeps exact"
    " counts in builtin_terms (tests/store/test_postgres.py)"
)
def test_a_second_process_prunes_with_the_counts_the_first_one_took(
    counting: tuple[App, list[str], str],
) -> None:
    app, common, rare = counting
    match = fts_match("deploy ledger")
    assert match is not None
    first = _other_process(app)
    walks = _vocab_walks(first)
    # "deploy" is in 5 of 6 documents (over half): only "ledger" is scored.
    assert first.search_text(match, SCOPE, 20) == [rare]
    assert len(walks) == 2, "the first process counts both (stemmed) terms itself"
    # Only the common term is shared ("ledger" is in one document, under SHARE_MIN_DOCS).
    shared = _shared_rows(app)
    assert set(shared) == {"deploi"} and shared["deploi"][0] == len(common)
    # Another process asks the same: the common term's posting list is not walked again,
    # and it prunes exactly as the first did.
    second = _other_process(app)
    walks = _vocab_walks(second)
    assert second.search_text(match, SCOPE, 20) == [rare]
    assert len(walks) == 1 and "deploi" not in str(walks)
    first.db.close()
    second.db.close()


@pytest.mark.sqlite_only(
    reason="FTS5's fts5vocab counts shared in builtin_term_counts; PostgreSQL keeps exact"
    " counts in builtin_terms (tests/store/test_postgres.py)"
)
def test_counts_taken_at_another_store_size_are_taken_again(
    counting: tuple[App, list[str], str],
) -> None:
    app, common, _rare = counting
    with app.store.db.write() as conn:  # a count taken when the store was far larger
        conn.execute("INSERT INTO builtin_term_counts VALUES ('deploi', 900, 160)")
    match = fts_match("deploy pipeline")
    assert match is not None
    fresh = _other_process(app)
    walks = _vocab_walks(fresh)
    assert set(fresh.search_text(match, SCOPE, 20)) == set(common)
    assert len(walks) == 2  # "deploy" too: its stored count is from another size
    total = fresh._term_stats.total_docs(fresh.db.conn)
    assert _shared_rows(app)["deploi"] == (len(common), total)
    fresh.db.close()


@pytest.mark.sqlite_only(
    reason="FTS5's fts5vocab counts shared in builtin_term_counts; PostgreSQL keeps exact"
    " counts in builtin_terms (tests/store/test_postgres.py)"
)
def test_a_store_busy_writing_keeps_the_counts_in_the_process_and_still_answers(
    counting: tuple[App, list[str], str],
) -> None:
    app, common, _rare = counting
    match = fts_match("deploy pipeline")
    assert match is not None
    reader = _other_process(app)
    other = sqlite3.connect(app.store.db.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with reader.db.try_write(10) as conn:
            assert conn is None
        assert set(reader.search_text(match, SCOPE, 20)) == set(common)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert _shared_rows(app) == {}
    # The write lock is free again: the next process to count shares.
    again = _other_process(app)
    assert set(again.search_text(match, SCOPE, 20)) == set(common)
    assert set(_shared_rows(app)) == {"deploi", "pipelin"}
    reader.db.close()
    again.db.close()
