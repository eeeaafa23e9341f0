"""Recall latency, write throughput and memory as the store grows (1k, 10k, 100k episodes).

Every size gets a fresh store (a temporary ``FLEETMEM_HOME`` with ``embedding_model =
"local:minilm"`` and summaries off) holding a prefix of one deterministic stream of synthetic
run records (:class:`bench.common.FleetData`). ``--quick`` stops at 10k.

* 1k: every record goes through ``MemoryService.ingest_run`` one by one, embedding included:
  the real synchronous write path. Its latency and throughput are reported, and beside them
  the time of ``app.embedder.embed([text])`` alone on the same episode text.
* 10k and above, in chunks of 10k: records are stored with ``ingest_run(record,
  process_now=False)`` (1,000 per transaction), their embedding texts are embedded in
  batches of 64 by the same embedder and written into fleetmem's own embedding cache, then
  ``MemoryService.process_jobs`` records them through the built-in provider exactly as the
  daemon's background job does (finding each vector in the cache).
* Embedding 100k texts of ~160 tokens on a small machine takes longer than the rest of the
  benchmark together (10-45 texts/s on a busy two-core machine), so only the first 2k
  episodes (1k with ``--quick``) are embedded; episode ``i`` beyond that reuses the vector of
  episode ``i mod 2k``. Brute-force cosine costs the same whatever the vector values, and
  the text channel always indexes each episode's own text. The result file says how many
  vectors were embedded and reused.
* The service wraps its embedder in a few-second memo of recent queries; it is cleared
  before every timed operation so each recall pays for its own query embedding, as a new
  query does, and "embed alone" always calls the model itself.
* The largest store stops at 50k when populating 50k took more than half of a 10-minute
  budget (see ``notes`` in the result); ``FLEETMEM_BENCH_LARGE=100000`` forces the size.
* At every size, 200 more runs are recorded one at a time (vector already cached) to show
  how the write path itself scales with the store.

Recall is measured in a separate process per size (the daemon-like process: the store
opened through ``bootstrap.build`` and the HTTP app created), so its resident memory is
not inflated by the population step. For every query, one query embedding alone, then in
shuffled order: fleetmem's ``MemoryService.recall`` end to end (query embedding included,
scoped to one repository), its two store channels alone, brute-force cosine in numpy over
the same vectors, and a bare FTS5 ``MATCH ... ORDER BY bm25 LIMIT 50`` on the same table.
A second process then times the matrix-bound operations again with
``OPENBLAS_NUM_THREADS=1``: on a busy two-core machine OpenBLAS's second thread waits for a
scheduler slice, which can cost a matrix-vector product ~10 ms instead of ~0.2 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import harness
from bench.common import (
    REPOS,
    ROOT,
    FleetData,
    latency_summary,
    machine_line,
    percentile,
    rss_mib,
    timed_ms,
)

CONFIG = """\
[model_api]
embedding_model = "local:minilm"

[memory.episodes]
summary = false
retention = "10y"
"""
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
FALLBACK_LARGE = 50_000
#: Populating the largest store may take this long; beyond it the fallback size is used.
LARGE_BUDGET_S = 600.0
#: Set to a number of episodes to build the largest store at that size whatever it takes.
LARGE_ENV = "FLEETMEM_BENCH_LARGE"
CHUNK = 10_000
#: Episodes whose vectors are really embedded (the rest reuse them; see the module doc).
REAL_VECTORS = 2_000
EMBED_BATCH = 64
TX_RECORDS = 1_000
WARMUP_QUERIES = 20
EXTRA_WRITES = 200


def _open(home: Path) -> Any:
    from fleetmem.service.bootstrap import build

    home.mkdir(parents=True, exist_ok=True)
    (home / "fleetmem.toml").write_text(CONFIG, encoding="utf-8")
    return build(home, {"HOME": str(home), "FLEETMEM_HOME": str(home)})


def _model(app: Any) -> Any:
    """The embedding model itself, under any memo the service wraps it in."""
    return getattr(app.embedder, "inner", app.embedder)


def _forget_queries(app: Any) -> None:
    """Clear the service's memo of recently embedded queries, if it has one."""
    forget = getattr(app.embedder, "forget", None)
    if callable(forget):
        forget()


def _semantic(app: Any, episode_id: str) -> str:
    from fleetmem.providers.builtin import semantic_text

    row = app.store.get_episode(episode_id)
    return semantic_text(row.episode)


def _store_mib(home: Path) -> float:
    total = sum(p.stat().st_size for p in home.glob("fleetmem.db*"))
    return round(total / 1024 / 1024, 1)


# ---- population -----------------------------------------------------------------------
def populate_by_ingest(home: Path, data: FleetData, n: int) -> tuple[dict[str, Any], list[Any]]:
    """Ingest ``n`` records one by one (embedding included); returns stats and the vectors."""
    from fleetmem.core.episode import content_hash

    app = _open(home)
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
            text = _semantic(app, result.episode_id)
            ms, _ = timed_ms(lambda t=text: _model(app).embed([t]))
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
    records 0..len(real)-1 and is extended in place up to ``real_vectors``. When ``stop_at``
    is reached and the time spent so far plus the rest at the last chunk's pace (with a
    quarter's margin: populating slows as the store grows) would exceed
    :data:`LARGE_BUDGET_S`, the store stops there; ``records`` in the result says how many it
    holds.
    """
    app = _open(home)
    try:
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
        model_id = app.embedder.model_id
        if app.store.builtin_missing_vectors(model_id, 1):
            raise RuntimeError("vectors are missing after population")
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
            "seconds": {k: round(v, 1) for k, v in totals.items()}
            | {"total": round(time.perf_counter() - started, 1)},
            "ingest_deferred_per_s": round(done / totals["ingest_deferred"], 1),
            "process_jobs_per_s": round(done / totals["process_jobs"], 1),
            "embed_batch_texts_per_s": (
                round(embedded / totals["embed_batches"], 1) if embedded else None
            ),
            "chunks": chunks,
            "loadavg": list(os.getloadavg()),
        }
    finally:
        app.close()


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
        texts.extend(_semantic_of(rows[e].episode) for e in ids)
    want = min(start + size, real_vectors)
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


def _semantic_of(episode: Any) -> str:
    from fleetmem.providers.builtin import semantic_text

    return semantic_text(episode)


def write_path_at_size(
    home: Path, data: FleetData, n: int, real: list[Any], writes: int = EXTRA_WRITES
) -> dict[str, Any]:
    """Latency of recording one more run into a store of ``n``, its vector already cached.

    ``ingest_run(process_now=False)`` then ``process_jobs(episode_id=...)`` is the code
    ``ingest_run`` runs synchronously, minus the embedding (measured separately at 1k).
    """
    from fleetmem.core.episode import content_hash

    app = _open(home)
    try:
        samples: list[float] = []
        for i, record in enumerate(data.records(writes, n)):
            ms1, result = timed_ms(lambda r=record: app.memory.ingest_run(r, process_now=False))
            text = _semantic(app, result.episode_id)
            vec = real[i % len(real)]
            app.store.cache_embedding(content_hash(text), app.embedder.model_id, vec)
            ms2, done = timed_ms(lambda e=result.episode_id: app.memory.process_jobs(episode_id=e))
            if done != {"record:ok": 1}:
                raise RuntimeError(f"process_jobs gave {done}")
            samples.append(ms1 + ms2)
        return latency_summary(samples)
    finally:
        app.close()


# ---- measurement (runs in a child process) --------------------------------------------
#: Timed operations per query, and the key each one is reported under.
OPS = {
    "recall": "recall",
    "embed": "embed_query",
    "numpy": "numpy_bruteforce",
    "fts5": "fts5_bare",
    "text_channel": "store_text_channel",
    "vector_channel": "store_vector_channel",
    "provider_direct": "builtin_provider_direct",
}
#: What the single-BLAS-thread rerun times: the operations that multiply the matrix.
BLAS_OPS = ("recall", "embed", "numpy", "vector_channel")


def measure(
    home: Path, size: int, n_queries: int, ops: Sequence[str] = tuple(OPS)
) -> dict[str, Any]:
    """Recall and reference timings over the store in ``home``; the child's entry point."""
    from fleetmem.core.textquery import fts_match

    app = _open(home)
    web = True
    try:
        from fleetmem.surfaces.http.app import create_app

        create_app(app)  # what the daemon holds in memory besides the store
    except ImportError:
        web = False
    rss_open = rss_mib()
    data = FleetData()
    queries = data.queries(WARMUP_QUERIES + n_queries)
    first_ms, _ = timed_ms(lambda: app.memory.recall(queries[0][0], scopes=[queries[0][1].scope]))
    rss_warm = rss_mib()
    for query, repo in queries[1:WARMUP_QUERIES]:
        app.memory.recall(query, scopes=[repo.scope])

    conn = app.store.db.conn
    model_id = app.embedder.model_id
    blobs = conn.execute(
        "SELECT m.vector FROM builtin_vectors v JOIN embeddings m"
        " ON m.content_hash = v.content_hash AND m.model_id = v.model_id WHERE v.model_id = ?",
        (model_id,),
    ).fetchall()
    matrix = np.frombuffer(b"".join(b[0] for b in blobs), dtype=np.float32).reshape(-1, 384)
    del blobs
    fts = sqlite3.connect(f"file:{home / 'fleetmem.db'}?mode=ro", uri=True)
    scope_counts = dict(conn.execute("SELECT scope, count(*) FROM episodes GROUP BY scope"))

    def numpy_top(q: Any) -> Any:
        sims = matrix @ q
        top = np.argpartition(-sims, 49)[:50]
        return top[np.argsort(-sims[top])]

    def bare_fts(match: str) -> Any:
        return fts.execute(
            "SELECT rowid FROM builtin_fts WHERE builtin_fts MATCH ?"
            " ORDER BY bm25(builtin_fts) LIMIT 50",
            (match,),
        ).fetchall()

    hub = getattr(app, "providers", None)
    builtin = getattr(hub, "builtin", None)
    samples: dict[str, list[float]] = {k: [] for k in OPS}
    # CPU time of the whole process (every thread) beside wall time: on a shared machine the
    # wall clock also counts time spent waiting for a core, the CPU clock does not.
    cpu: dict[str, list[float]] = {k: [] for k in OPS}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        _forget_queries(app)
        c0 = time.process_time()
        ms, value = timed_ms(fn)
        cpu[name].append((time.process_time() - c0) * 1000)
        samples[name].append(ms)
        return value

    counts = {"items": 0, "degraded": 0, "wrong_scope": 0}
    share = 0.0
    order_rng = random.Random(7)
    for query, repo in queries[WARMUP_QUERIES:]:
        scopes = [repo.scope]
        share += scope_counts.get(repo.scope, 0) / size
        match = fts_match(query) or '""'
        qv = timed("embed", lambda q=query: _model(app).embed([q])[0])

        def do_recall(q: str = query, s: list[str] = scopes) -> None:
            result = app.memory.recall(q, scopes=s)
            counts["items"] += len(result.items)
            counts["degraded"] += result.degraded is not None
            counts["wrong_scope"] += sum(f"project:{h.repo}" not in s for h in result.items)

        calls: dict[str, Callable[[], Any]] = {
            "recall": do_recall,
            "numpy": lambda v=qv: numpy_top(v),
            "fts5": lambda m=match: bare_fts(m),
            "text_channel": lambda m=match, s=scopes: app.store.search_text(m, s, 50),
            "vector_channel": lambda v=qv, s=scopes: app.store.search_vector(v, model_id, s, 50),
        }
        if builtin is not None:
            # The built-in index's own work: no MCP hop, no service-side index filter.
            calls["provider_direct"] = lambda q=query, s=scopes: builtin.recall(q, s, 8, [])
        todo = [name for name in calls if name in ops]
        order_rng.shuffle(todo)  # no operation always runs first on a cold page cache
        for name in todo:
            timed(name, calls[name])
    out: dict[str, Any] = {
        "episodes": size,
        "store_mib": _store_mib(home),
        "queries": n_queries,
        "mean_scope_share": round(share / n_queries, 3),
        "first_recall_ms": round(first_ms, 1),
        "rss_mib": {"after_open": rss_open, "after_warm_recall": rss_warm, "web_app": web},
    }
    for name, key in OPS.items():
        if samples[name]:
            out[key] = latency_summary(samples[name]) | {
                "cpu_p50_ms": round(percentile(cpu[name], 50), 3),
                "cpu_p95_ms": round(percentile(cpu[name], 95), 3),
            }
    if "recall" in ops:
        out["mean_items"] = round(counts["items"] / n_queries, 2)
        out["degraded"] = counts["degraded"]
        out["wrong_scope"] = counts["wrong_scope"]
    out["loadavg"] = list(os.getloadavg())
    fts.close()
    app.close()
    return out


def _measure_in_child(
    home: Path, size: int, n_queries: int, ops: Sequence[str] = tuple(OPS), blas_threads: int = 0
) -> dict[str, Any]:
    """Run :func:`measure` in a fresh process; ``blas_threads`` > 0 pins OpenBLAS's pool."""
    env = dict(os.environ)
    if blas_threads:
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "bench.bench_recall_scale", "--measure", str(home)),
            *("--size", str(size), "--queries", str(n_queries), "--ops", ",".join(ops)),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"measurement of {size} failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ---- entry points ---------------------------------------------------------------------
def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Populate stores of each size, measure them; see the module docstring.

    ``tiny`` (the test suite's run) uses :data:`bench.harness.TINY_SIZES` and a few queries.
    """
    data = FleetData()
    sizes = list(harness.TINY_SIZES if tiny else QUICK_SIZES if quick else SIZES)
    forced = bool(os.environ.get(LARGE_ENV))
    if forced and not (quick or tiny):
        sizes[-1] = int(os.environ[LARGE_ENV])
    real_vectors = harness.TINY_REAL_VECTORS if tiny else 1_000 if quick else REAL_VECTORS
    n_queries = harness.TINY_QUERIES if tiny else 200 if quick else 300
    notes: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-"))
    out: dict[str, Any] = {"quick": quick, "sizes": {}, "notes": notes}
    try:
        first = work / "1k"
        stats, real = populate_by_ingest(first, data, sizes[0])
        out["ingest"] = stats
        populations: dict[str, Any] = {}
        for planned in sizes:
            size = planned
            if size == sizes[0]:
                home = first
            else:
                home = work / str(size)
                large = size == max(sizes) and not quick and size > FALLBACK_LARGE
                stop_at = None if forced or not large else FALLBACK_LARGE
                # Built once per run_all and shared with mcp_recall and daemon (a copy each).
                stats = harness.shared_episode_store(
                    home,
                    size,
                    real_vectors,
                    lambda h, n=size, s=stop_at: populate_bulk(
                        h, data, n, real, real_vectors, stop_at=s
                    ),
                    stop_at=stop_at,
                )
                size = stats["records"]
                populations[str(size)] = stats
                if size != planned:
                    spent = stats["seconds"]["total"] - stats["seconds"]["embed_batches"]
                    notes.append(
                        f"the largest store holds {size:,} episodes, not {planned:,}: populating"
                        f" {size:,} took {spent / 60:.1f} min here, so {planned:,} would take"
                        f" more than the {LARGE_BUDGET_S / 60:.0f} min budget"
                        f" (set {LARGE_ENV}={planned} to force it)"
                    )
            print(f"  recall_scale: measuring {size} episodes", file=sys.stderr, flush=True)
            result = _measure_in_child(home, size, n_queries)
            single = _measure_in_child(home, size, n_queries, BLAS_OPS, blas_threads=1)
            result["openblas_1_thread"] = {
                key: single[key] for key in (OPS[op] for op in BLAS_OPS)
            } | {"loadavg": single["loadavg"]}
            writes = 10 if tiny else EXTRA_WRITES
            result["write_path_ms"] = write_path_at_size(home, data, size, real, writes)
            out["sizes"][str(size)] = result
            if home != first:
                shutil.rmtree(home, ignore_errors=True)
        out["populate"] = populations
        out["vectors"] = {
            "model": "local:all-MiniLM-L6-v2-onnx-int8",
            "embedded": min(max(sizes), real_vectors),
            "reuse_rule": f"episode i >= {real_vectors} reuses the vector of i mod {real_vectors}",
        }
        out["repositories"] = len(REPOS)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarize(result: dict[str, Any]) -> str:
    """A readable table of the figures, for run_all's summary."""
    lines = []
    if "machine" in result:
        lines.append(machine_line(result["machine"]))
    ing = result["ingest"]
    lines.append(
        f"ingest_run (1k, embedding included): {ing['records_per_s']} records/s,"
        f" p50 {ing['ingest_run']['p50_ms']} ms, p95 {ing['ingest_run']['p95_ms']} ms;"
        f" embed alone p50 {ing['embed_only']['p50_ms']} ms"
        f" ({ing['embedding_share']:.0%} of ingest time)"
    )
    lines.append(
        f"{'episodes':>9} | {'recall p50/p95/p99 ms':>22} | {'numpy p50':>9} | {'fts5 p50':>8}"
        f" | {'embed p50':>9} | {'RSS MiB':>7} | {'write p50':>9} | {'recall p50, 1 BLAS thr':>22}"
    )
    for size, r in result["sizes"].items():
        rc = r["recall"]
        single = r.get("openblas_1_thread", {}).get("recall", {}).get("p50_ms", float("nan"))
        lines.append(
            f"{int(size):>9,} | {rc['p50_ms']:>6.1f} /{rc['p95_ms']:>6.1f} /{rc['p99_ms']:>6.1f}"
            f" | {r['numpy_bruteforce']['p50_ms']:>9.2f} | {r['fts5_bare']['p50_ms']:>8.2f}"
            f" | {r['embed_query']['p50_ms']:>9.2f} | {r['rss_mib']['after_warm_recall']:>7.0f}"
            f" | {r['write_path_ms']['p50_ms']:>9.2f}"
            f" | {single:>22.1f}"
        )
    lines.extend(f"note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--measure", type=Path, help="(internal) measure the store in this home")
    parser.add_argument("--size", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--ops", default=",".join(OPS), help="(internal) operations to time")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.measure is not None:
        ops = [op for op in args.ops.split(",") if op in OPS]
        print(json.dumps(measure(args.measure, args.size, args.queries, ops)))
        return 0
    print(json.dumps(run(quick=args.quick), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
