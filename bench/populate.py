"""Filling benchmark stores with synthetic episodes, and timing the write path as they grow.

The stores that ``recall_scale``, ``daemon``, ``provider_path`` and ``mcp_recall`` measure are
all filled here, from one deterministic stream of run records (:class:`bench.common.FleetData`),
into a temporary ``FLEETMEM_HOME`` with ``embedding_model = "local:minilm"`` and summaries off.

* :func:`populate_by_ingest`: every record through ``MemoryService.ingest_run`` one by one,
  embedding included: the real synchronous write path, timed record by record, beside the
  time of the embedding model alone on the same episode text.
* :func:`populate_bulk`: in chunks of :data:`CHUNK`, records stored with ``ingest_run(record,
  process_now=False)`` (:data:`TX_RECORDS` per transaction), their embedding texts embedded in
  batches of :data:`EMBED_BATCH` and written into fleetmem's own embedding cache, then
  ``MemoryService.process_jobs`` records them through the built-in provider exactly as the
  daemon's background job does (finding each vector in the cache).
* Only the first ``real_vectors`` episodes are really embedded: episode ``i`` beyond them
  reuses the vector of ``i mod real_vectors``. Brute-force cosine costs the same whatever the
  vector values, and embedding 100k texts on two cores would take longer than every other
  step together. Within one ``run_all`` the embedded vectors are kept on disk
  (:func:`bench.harness.load_vectors`), so each text is embedded once per run, whichever
  benchmark builds a store first.
* :func:`write_path_at_size`: the latency of recording one more run into a store of a given
  size, its vector already cached.
* Once filled, a bulk store gets the upkeep pass the daemon runs hourly
  (``MemoryService.compact_index``: the text index's segments merged into one), as any store
  the daemon has run on for an hour has had. :func:`compact_and_time` times the text channel
  on the same queries before and after, so the report shows what the pass is worth.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from bench import harness
from bench.common import FleetData, latency_summary, timed_ms

CONFIG = """\
[model_api]
embedding_model = "local:minilm"

[memory.episodes]
summary = false
retention = "10y"
"""
#: The largest store stops at this size when populating the planned size would take longer
#: than :data:`LARGE_BUDGET_S`.
FALLBACK_LARGE = 50_000
#: Populating the largest store may take this long; beyond it the fallback size is used.
LARGE_BUDGET_S = 600.0
#: Set to a number of episodes to build the largest store at that size whatever it takes.
LARGE_ENV = "FLEETMEM_BENCH_LARGE"
CHUNK = 10_000
#: Episodes whose vectors are really embedded in a full run (the rest reuse them).
REAL_VECTORS = 2_000
EMBED_BATCH = 64
TX_RECORDS = 1_000
EXTRA_WRITES = 200
#: Queries timed on the text channel before and after a store's upkeep pass.
COMPACTION_QUERIES = 200


def open_store(home: Path) -> Any:
    """The application over ``home`` (created, with the benchmark's configuration)."""
    from fleetmem.service.bootstrap import build

    home.mkdir(parents=True, exist_ok=True)
    (home / "fleetmem.toml").write_text(CONFIG, encoding="utf-8")
    return build(home, {"HOME": str(home), "FLEETMEM_HOME": str(home)})


def embedding_model(app: Any) -> Any:
    """The embedding model itself, under any memo the service wraps it in."""
    return getattr(app.embedder, "inner", app.embedder)


def forget_queries(app: Any) -> None:
    """Clear the service's memo of recently embedded queries, if it has one."""
    forget = getattr(app.embedder, "forget", None)
    if callable(forget):
        forget()


def semantic_of(episode: Any) -> str:
    """The text the built-in provider embeds for ``episode``."""
    from fleetmem.providers.builtin import semantic_text

    return semantic_text(episode)


def semantic_of_id(app: Any, episode_id: str) -> str:
    return semantic_of(app.store.get_episode(episode_id).episode)


def store_mib(home: Path) -> float:
    """Size of the store's database files (WAL included), in MiB."""
    total = sum(p.stat().st_size for p in home.glob("fleetmem.db*"))
    return round(total / 1024 / 1024, 1)


# ---- the synchronous write path ------------------------------------------------------------
def populate_by_ingest(home: Path, data: FleetData, n: int) -> tuple[dict[str, Any], list[Any]]:
    """Ingest ``n`` records one by one (embedding included); returns stats and the vectors."""
    from fleetmem.core.episode import content_hash

    app = open_store(home)
    try:
        app.embedder.embed(["load the model before timing"])  # the daemon loads it at start
        ingest_ms: list[float] = []
        embed_ms: list[float] = []
        vectors: list[Any] = []
        model_id = app.embedder.model_id
        for record in data.records(n):
            ms, result = timed_ms(lambda r=record: app.memory.ingest_run(r))
            if result.status != "recorded":
                raise RuntimeError(f"ingest gave {result.status} for {result.run_id}")
            ingest_ms.append(ms)
            text = semantic_of_id(app, result.episode_id)
            ms, _ = timed_ms(lambda t=text: embedding_model(app).embed([t]))
            embed_ms.append(ms)
            vectors.append(app.store.cached_embedding(content_hash(text), model_id))
        total_s = sum(ingest_ms) / 1000
        stats = {
            "records": n,
            "path": "MemoryService.ingest_run(record) one by one, embedding included",
            "records_per_s": round(n / total_s, 1),
            "ingest_run": latency_summary(ingest_ms),
            "embed_only": latency_summary(embed_ms),
            "embedding_share": round(sum(embed_ms) / sum(ingest_ms), 3),
            "loadavg": list(os.getloadavg()),
        }
        return stats, vectors
    finally:
        app.close()


# ---- the deferred (bulk) write path --------------------------------------------------------
def populate_bulk(
    home: Path,
    data: FleetData,
    n: int,
    real: list[Any],
    real_vectors: int,
    *,
    stop_at: int | None = None,
) -> dict[str, Any]:
    """Fill a fresh store with up to ``n`` records through the deferred write path.

    Records go in chunks of :data:`CHUNK` (stored, vectors cached, jobs processed), so the
    rate of each step is reported as the store grows. ``real`` holds the embedded vectors of
    records 0..len(real)-1 and is extended in place up to ``real_vectors`` (from the run's
    vector cache when another benchmark embedded them already). When ``stop_at`` is reached
    and the time spent so far plus the rest at the last chunk's pace (with a quarter's
    margin: populating slows as the store grows) would exceed :data:`LARGE_BUDGET_S`, the
    store stops there; ``records`` in the result says how many it holds.
    """
    app = open_store(home)
    try:
        model_id = app.embedder.model_id
        from_cache = harness.load_vectors(real, min(n, real_vectors), model_id)
        totals = {"ingest_deferred": 0.0, "embed_batches": 0.0, "cache_vectors": 0.0}
        totals["process_jobs"] = 0.0
        chunks: list[dict[str, Any]] = []
        embedded = 0
        done = 0
        started = time.perf_counter()
        while done < n:
            size = min(CHUNK, n - done)
            secs, embedded_now = _add_chunk(app, data, done, size, real, real_vectors)
            for key, value in secs.items():
                totals[key] += value
            embedded += embedded_now
            done += size
            chunks.append(
                {
                    "upto": done,
                    "ingest_deferred_per_s": round(size / secs["ingest_deferred"], 1),
                    "process_jobs_per_s": round(size / secs["process_jobs"], 1),
                }
            )
            spent = time.perf_counter() - started - totals["embed_batches"]
            # The rest at the pace of the last chunk (the slowest so far: writes slow down as
            # the store grows), with a quarter's margin for the growth still to come.
            last = secs["ingest_deferred"] + secs["process_jobs"] + secs["cache_vectors"]
            rest = 1.25 * last * (n - done) / size
            over_budget = spent + rest > LARGE_BUDGET_S
            if stop_at is not None and done >= stop_at and done < n and over_budget:
                break
        if embedded:
            harness.save_vectors(real, model_id)
        if app.store.builtin_missing_vectors(model_id, 1):
            raise RuntimeError("vectors are missing after population")
        compaction = compact_and_time(app, data)
        return {
            "records": done,
            "path": (
                f"per chunk of {CHUNK}: ingest_run(process_now=False), {TX_RECORDS} per"
                f" transaction; embed in batches of {EMBED_BATCH} into the embedding cache;"
                " process_jobs(limit=1000) until none are due"
            ),
            "vectors_embedded": min(done, real_vectors),
            "vectors_reused": max(0, done - real_vectors),
            "embedded_now": embedded,
            "vectors_from_run_cache": from_cache,
            "seconds": {k: round(v, 1) for k, v in totals.items()}
            | {"total": round(time.perf_counter() - started, 1)},
            "ingest_deferred_per_s": round(done / totals["ingest_deferred"], 1),
            "process_jobs_per_s": round(done / totals["process_jobs"], 1),
            "embed_batch_texts_per_s": (
                round(embedded / totals["embed_batches"], 1) if embedded else None
            ),
            "chunks": chunks,
            "compaction": compaction,
            "loadavg": list(os.getloadavg()),
        }
    finally:
        app.close()


def compact_and_time(
    app: Any, data: FleetData, queries: int = COMPACTION_QUERIES
) -> dict[str, Any]:
    """Run the daemon's hourly index upkeep on ``app``; the text channel before and after.

    Each side is timed on the same repository-scoped queries after one untimed pass over
    them, so both read warm pages and shared term counts; the counts are cleared afterwards.
    """
    from fleetmem.core.textquery import fts_match

    asked = [(m, [repo.scope]) for q, repo in data.queries(queries) if (m := fts_match(q))]

    def search(match: str, scopes: list[str]) -> Any:
        return app.store.search_text(match, scopes, 50)

    def timed() -> dict[str, float | int]:
        for match, scopes in asked:
            search(match, scopes)
        return latency_summary([timed_ms(lambda m=m, s=s: search(m, s))[0] for m, s in asked])

    before = timed()
    done = app.memory.compact_index()
    after = timed()
    # The recall benchmarks time each term's first count too, as on a store no recall has
    # touched yet: the counts these queries shared are taken back out.
    with app.store.db.write() as conn:
        conn.execute("DELETE FROM builtin_term_counts")
    return done.as_dict() | {"text_channel_before": before, "text_channel_after": after}


def _add_chunk(
    app: Any, data: FleetData, start: int, size: int, real: list[Any], real_vectors: int
) -> tuple[dict[str, float], int]:
    """Store records ``start .. start+size-1``, cache their vectors, record them."""
    from fleetmem.core.episode import content_hash

    t0 = time.perf_counter()
    episode_ids: list[str] = []
    for offset in range(0, size, TX_RECORDS):
        with app.store.transaction():
            for record in data.records(min(TX_RECORDS, size - offset), start + offset):
                result = app.memory.ingest_run(record, process_now=False)
                if result.status != "pending":
                    raise RuntimeError(f"ingest gave {result.status} for {result.run_id}")
                episode_ids.append(result.episode_id)
    t1 = time.perf_counter()

    texts: list[str] = []
    for offset in range(0, size, 500):
        ids = episode_ids[offset : offset + 500]
        rows = app.store.get_episodes(ids)
        texts.extend(semantic_of(rows[e].episode) for e in ids)
    want = min(start + size, real_vectors)
    if len(real) < want and start > len(real):
        # The vectors are the first records' own: a fill that resumes past them needs them
        # kept ($FLEETMEM_BENCH_STORES), or it would wait forever for texts it never reads.
        raise RuntimeError(
            f"filling from record {start:,} needs the first {want:,} vectors, and {len(real):,}"
            " are loaded: set FLEETMEM_BENCH_STORES to a cache that holds them"
        )
    embedded = 0
    while len(real) < want:
        first = len(real)
        batch = texts[first - start : min(first + EMBED_BATCH, want) - start]
        real.extend(app.embedder.embed(batch))
        embedded += len(batch)
    t2 = time.perf_counter()

    model_id = app.embedder.model_id
    with app.store.transaction():
        for offset, text in enumerate(texts):
            i = start + offset
            vec = real[i] if i < len(real) else real[i % real_vectors]
            app.store.cache_embedding(content_hash(text), model_id, vec)
    t3 = time.perf_counter()

    recorded = 0
    while True:
        done = app.memory.process_jobs(limit=1_000)
        if not done:
            break
        if set(done) != {"record:ok"}:
            raise RuntimeError(f"process_jobs gave {done}")
        recorded += done["record:ok"]
    if recorded != size:
        raise RuntimeError(f"recorded {recorded} of {size} episodes")
    t4 = time.perf_counter()
    secs = {
        "ingest_deferred": t1 - t0,
        "embed_batches": t2 - t1,
        "cache_vectors": t3 - t2,
        "process_jobs": t4 - t3,
    }
    return secs, embedded


# ---- one more write into a store of a given size -------------------------------------------
def write_path_at_size(
    home: Path, data: FleetData, n: int, real: list[Any], writes: int = EXTRA_WRITES
) -> dict[str, Any]:
    """Latency of recording one more run into a store of ``n``, its vector already cached.

    ``ingest_run(process_now=False)`` then ``process_jobs(episode_id=...)`` is the code
    ``ingest_run`` runs synchronously, minus the embedding (measured separately).
    """
    from fleetmem.core.episode import content_hash

    app = open_store(home)
    try:
        samples: list[float] = []
        for i, record in enumerate(data.records(writes, n)):
            ms1, result = timed_ms(lambda r=record: app.memory.ingest_run(r, process_now=False))
            text = semantic_of_id(app, result.episode_id)
            vec = real[i % len(real)]
            app.store.cache_embedding(content_hash(text), app.embedder.model_id, vec)
            ms2, done = timed_ms(lambda e=result.episode_id: app.memory.process_jobs(episode_id=e))
            if done != {"record:ok": 1}:
                raise RuntimeError(f"process_jobs gave {done}")
            samples.append(ms1 + ms2)
        return latency_summary(samples)
    finally:
        app.close()
