"""The SQLite fact store: its literal matching agrees with the pure rule, the vector matrix
follows changes made by another process, and purging removes words but keeps the journal."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fleetmem.core.episode import content_hash
from fleetmem.core.facts import literal_match, literal_terms, normalize
from fleetmem.store.base import Store
from fleetmem.store.facts import FactRow, JournalRow
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import stored_bytes

_ids = itertools.count()


def row(body: str, *, workspace: str = "default", status: str = "active") -> FactRow:
    return FactRow(
        id=f"f_{next(_ids):06d}",
        workspace=workspace,
        body=body,
        norm=normalize(body),
        kind="note",
        scope="workspace",
        status=status,
        pinned=False,
        pinned_at=None,
        origin="human",
        author="t",
        run_id=None,
        conversation=None,
        source=None,
        revision=1,
        content_hash=content_hash(body),
        created_at=1.0,
        updated_at=1.0,
        confirmed_at=1.0,
        forgotten_at=None,
        forgotten_from=None,
        merged_into=None,
        idempotency_key=None,
    )


@pytest.mark.sqlite_only(reason="reads sqlite_master (PostgreSQL's schema: test_postgres.py)")
def test_the_migration_is_recorded(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    try:
        versions = {r[0] for r in store.db.conn.execute("SELECT version FROM schema_migrations")}
        assert 2 in versions
        tables = {
            r[0] for r in store.db.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        assert {"facts", "fact_journal", "fact_exposures", "fact_votes", "fact_rate"} <= tables
    finally:
        store.close()


words = st.sampled_from(["Deploy", "deploy", "Café", "CAFE", "main", "Ünïcode", "a", "ß", "ss"])
texts = st.lists(words, min_size=1, max_size=6).map(" ".join)


# The store is opened again for each example and emptied of the previous one's facts.
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bodies=st.lists(texts, min_size=1, max_size=5, unique_by=normalize), query=texts)
def test_sql_literal_matching_is_the_pure_rule(
    new_store: Callable[[], Store], bodies: list[str], query: str
) -> None:
    store = new_store()
    try:
        for stale in store.fact_candidates("default", ["active"], None):
            store.fact_purge("default", stale.id)  # an earlier example's rows (same store)
        rows = [row(b) for b in bodies]
        for r in rows:
            store.fact_insert(r)
        phrase, terms = literal_terms(query)
        everything = [r.id for r in rows]
        got = {
            r.id: (r.literal, r.words_found)
            for r in store.fact_search_rows(
                "default", ["active"], None, ids=everything, phrase=phrase, words=terms
            )
        }
        expected = {
            r.id: (literal_match(query, r.body), sum(w in r.norm for w in terms)) for r in rows
        }
        assert got == expected
        literal_only = store.fact_search_rows(
            "default", ["active"], None, ids=[], phrase=phrase, words=terms
        )
        assert {r.id for r in literal_only} == {k for k, v in expected.items() if v[0]}
        # Which facts hold each word, as the focus of a run's facts asks (one index read).
        holders = store.fact_word_holders("default", ["active"], None, terms)
        assert holders == {w: frozenset(r.id for r in rows if w in r.norm) for w in terms}
    finally:
        store.close()


def test_the_matrix_follows_another_processs_changes(new_store: Callable[[], Store]) -> None:
    a, b = new_store(), new_store()
    try:
        fact = row("Vectors change.")
        a.fact_insert(fact)
        assert b.fact_matrix("default", "m").ids == ()
        vec = np.ones(4, dtype=np.float32) / 2
        a.cache_embedding(fact.content_hash, "m", vec)
        a.fact_link_vector(fact.id, "m", fact.content_hash)
        seen = b.fact_matrix("default", "m")
        assert seen.ids == (fact.id,) and np.allclose(seen.matrix[0], vec)
        assert b.fact_matrix("default", "m") is seen  # cached while nothing changed
        assert b.fact_matrix("other", "m").ids == ()  # another workspace sees nothing
        a.fact_purge("default", fact.id)
        assert b.fact_matrix("default", "m").ids == ()
        assert a.cached_embedding(fact.content_hash, "m") is None  # its cached vector went too
    finally:
        a.close()
        b.close()


def test_purge_keeps_the_journal_and_drops_the_words(new_store: Callable[[], Store]) -> None:
    store = new_store()
    try:
        fact = row("Words to purge.", status="forgotten")
        store.fact_insert(fact)
        store.fact_journal_add(
            JournalRow("default", fact.id, "create", "human", "t", None, 1.0, None, {"s": 1})
        )
        store.fact_purge("other", fact.id)  # another workspace cannot purge it
        assert store.fact_get("default", fact.id) is not None
        store.fact_purge("default", fact.id)
        assert store.fact_get("default", fact.id) is None
        assert [j.action for j in store.fact_journal("default", fact.id)] == ["create"]
        dump = stored_bytes(store, files=False)
        assert b"Words to purge" not in dump and fact.id.encode() in dump
    finally:
        store.close()
