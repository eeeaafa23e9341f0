"""bench/pg_replicate.py: copies of a filled PostgreSQL store are the same memory again, older.

The 1,000,000-episode recall figure of issue 20 is measured on such copies, so what it copies
must be a store the product reads as it reads its own: every copy's episodes found by words and
by meaning with the scores of their originals, ids in the product's format, row numbers that
follow time, statistics that match the postings, and new writes numbered after every copy.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from bench.fleet_procs import schema_url
from bench.pg_replicate import replicate

from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import build
from fleetmem.store.postgres import text_index
from fleetmem.store.postgres.store import PostgresStore
from tests import store_kinds
from tests.conftest import ingest_text, write_config

WORDS = [
    *("ledger", "settlement", "refunds", "webhook", "retry", "cache", "pagination", "tokens"),
    *("oauth", "rollout", "canary", "histogram", "exporter", "dedupe", "backfill", "parser"),
    *("flaky", "timezone", "rounding", "invoice"),
]
MODEL = "bench-test-model"
COUNTED = (
    "runs",
    "episodes",
    "provider_index",
    "builtin_fts",
    "builtin_postings",
    "builtin_pair_postings",
)


@pytest.fixture
def schemas() -> Iterator[tuple[str, list[str]]]:
    base = store_kinds.required_url()
    made: list[str] = []
    yield base, made
    for name in made:
        store_kinds.drop_schema(base, name)


def _fill(base: str, made: list[str], tmp: Path, seed: int) -> tuple[str, dict[str, np.ndarray]]:
    """A small store in a schema of its own: runs in two repositories, indexed by words and
    given vectors (their embeddings cached, as the product keeps them)."""
    name, url = store_kinds.fresh_schema(base)
    made.append(name)
    home = tmp / name
    home.mkdir()
    write_config(home, f'[model_api]\nembedding_model = ""\n[store]\nurl = "{url}"\n')
    app = build(home, {"HOME": str(tmp)})
    rng = random.Random(seed)
    vectors: dict[str, np.ndarray] = {}
    try:
        for i in range(14):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
            repo = "github.com/acme/api" if i % 3 else "github.com/acme/web"
            at = f"2026-11-{1 + i:02d}T10:00:00Z"
            eid = ingest_text(app.memory, f"run-{seed}-{i}", at, text, repo=repo)
            vec = np.asarray([rng.gauss(0, 1) for _ in range(8)], dtype=np.float32)
            vec /= np.linalg.norm(vec)
            digest = f"h{seed}-{i}"
            row = app.store.get_episode(eid)
            assert row is not None and row.text is not None
            app.store.builtin_put(eid, row.text, row.summary, vec, digest, MODEL)
            app.store.cache_embedding(digest, MODEL, vec)
            vectors[eid] = vec
    finally:
        app.close()
    return name, vectors


def _count(base: str, schema: str, table: str) -> int:
    with psycopg.connect(base) as conn:
        row = conn.execute(f"SELECT count(*) FROM {schema}.{table}").fetchone()
    return int(row[0]) if row else 0


def test_copies_are_found_as_their_originals_and_new_writes_come_after_them(
    schemas: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, made = schemas
    seed = random.randrange(2**32)
    source, vectors = _fill(base, made, tmp_path, seed)
    target = store_kinds.fresh_schema(base)[0]
    made.append(target)
    factor = 3
    before = {t: _count(base, source, t) for t in (*COUNTED, "builtin_vectors", "sessions")}

    out = replicate(base, source, target, factor)

    assert out["episodes"] == factor * len(vectors) == out["source_episodes"] * factor
    for table in (*COUNTED, "builtin_vectors"):
        assert _count(base, target, table) == factor * before[table], (table, seed)
    assert _count(base, target, "sessions") == before["sessions"]  # copied once
    store = PostgresStore(schema_url(base, target))
    original = PostgresStore(schema_url(base, source))
    try:
        ids = [str(r[0]) for r in store.db.rows("SELECT id FROM episodes ORDER BY erow DESC")]
        assert len(set(ids)) == len(ids) and all(re.fullmatch(r"ep_[0-9a-f]{20}", i) for i in ids)
        # Copy 0 is the source and holds the highest row numbers; each further copy is older.
        newest = ids[: len(vectors)]
        assert set(newest) == set(vectors), seed
        starts = [
            float(r[0]) for r in store.db.rows("SELECT started_at FROM episodes ORDER BY erow")
        ]
        assert starts == sorted(starts), seed
        # The statistics the word channel's IDF reads match the postings themselves.
        terms = dict(store.db.rows("SELECT lexeme, docs FROM builtin_terms"))
        counted = dict(
            store.db.rows(
                "SELECT lexeme, count(DISTINCT erow) FROM builtin_postings GROUP BY lexeme"
            )
        )
        assert terms == counted, seed
        scope = ["project:github.com/acme/api", "project:github.com/acme/web"]
        copy_of = {eid: eid for eid in vectors} | {
            _copy_id(eid, k): eid for eid in vectors for k in range(1, factor)
        }
        for word in random.Random(seed).sample(WORDS, 5):
            match = fts_match(word)
            mine = dict(original.search_text_scored(match, scope, 100))
            theirs = store.search_text_scored(match, scope, 100)
            assert len(theirs) == factor * len(mine), (word, seed)
            assert [s for _, s in theirs] == sorted((s for _, s in theirs), reverse=True)
            # One word: its IDF is one factor for every document, so each original and all
            # its copies score the source's score times one constant.
            ratios = [s / mine[copy_of[eid]] for eid, s in theirs]
            assert max(ratios) - min(ratios) <= 1e-9 * max(ratios), (word, seed)
        # A phrase of two words is read from the pairs' postings: each holder and its copies.
        row = original.get_episode(next(iter(vectors)))
        assert row is not None and row.text is not None
        written = text_index.tokens(row.text)
        for a, b in random.Random(seed).sample(list(itertools.pairwise(written)), 2):
            match = fts_match(f"{a}_{b}")
            mine = dict(original.search_text_scored(match, scope, 100))
            theirs = store.search_text_scored(match, scope, 100)
            assert mine and len(theirs) == factor * len(mine), (a, b, seed)
            assert {copy_of[eid] for eid, _ in theirs} == set(mine), (a, b, seed)
        for eid, vec in list(vectors.items())[:4]:
            hits = store.search_vector(vec, MODEL, scope, factor)
            assert len(hits) == factor and all(abs(s - 1.0) < 1e-5 for _, s in hits), seed
            assert eid in {i for i, _ in hits}
            found = store.builtin_vectors_for([i for i, _ in hits], MODEL)
            assert all(np.allclose(v, vec, atol=1e-6) for v in found.values()), seed
    finally:
        store.close()
        original.close()

    # A daemon's write after the copies is numbered after all of them, so "newest first" reads
    # find it first.
    home = tmp_path / "after"
    home.mkdir()
    write_config(
        home, f'[model_api]\nembedding_model = ""\n[store]\nurl = "{schema_url(base, target)}"\n'
    )
    app = build(home, {"HOME": str(tmp_path)})
    try:
        eid = ingest_text(app.memory, "run-after", "2026-11-30T10:00:00Z", "zanzibar ledger")
        top = app.store.db.value("SELECT id FROM episodes ORDER BY erow DESC LIMIT 1")
        assert top == eid
        scope = ["project:github.com/acme/api"]
        assert [i for i, _ in app.store.search_text_scored('"zanzibar"', scope, 5)] == [eid]
    finally:
        app.close()


def _copy_id(eid: str, k: int) -> str:
    """The id copy ``k`` gives episode ``eid`` (bench/pg_replicate.py)."""
    return "ep_" + hashlib.md5(f"{eid}:{k}".encode()).hexdigest()[:20]


def test_bad_arguments_are_refused_naming_them(
    schemas: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, made = schemas
    source, _ = _fill(base, made, tmp_path, 7)
    empty = store_kinds.fresh_schema(base)[0]
    made.append(empty)
    with pytest.raises(ValueError, match="factor: 0"):
        replicate(base, source, empty, 0)
    with pytest.raises(ValueError, match="is the source schema"):
        replicate(base, source, source, 2)
    with pytest.raises(ValueError, match="not a lower-case identifier"):
        replicate(base, source, "Bad-Name", 2)
    with pytest.raises(ValueError, match="holds no indexed episode"):
        replicate(base, empty, source + "_x", 2)
    made.append(source + "_x")
    replicate(base, source, empty, 2)
    before = _count(base, empty, "episodes")
    with pytest.raises(ValueError, match="already holds episodes"):
        replicate(base, source, empty, 2)
    assert _count(base, empty, "episodes") == before
