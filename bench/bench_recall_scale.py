"""Recall latency, write throughput and memory as the store grows (1k, 10k, 100k episodes).

Every size gets a fresh store holding a prefix of one deterministic stream of synthetic run
records, filled by :mod:`bench.populate` (its docstring says how, and which vectors are
really embedded):

* full run: the 1k store through ``MemoryService.ingest_run`` one by one, embedding included
  (the real synchronous write path, reported beside the embedding model alone on the same
  text); 10k and the largest through the deferred bulk path, shared for the length of a
  ``run_all`` with ``mcp_recall``, ``daemon`` and ``provider_path``
  (:func:`bench.harness.shared_episode_store`). The largest store stops at 50k when
  populating 50k took more than half of a 10-minute budget (see ``notes`` in the result);
  ``FLEETMEM_BENCH_LARGE=100000`` forces the size.
* ``--quick``: stores of :data:`bench.harness.QUICK_SIZES` (1k and 3k), both from the shared
  bulk path with :data:`bench.harness.QUICK_REAL_VECTORS` embedded vectors; the synchronous
  write path is timed on its own store of :data:`QUICK_INGEST` records; fewer queries, and
  no single-BLAS-thread rerun (below). Numbers for catching regressions, not publishing.
* At every size, more runs are recorded one at a time (vector already cached) to show how
  the write path itself scales with the store
  (:func:`bench.populate.write_path_at_size`).

Recall is measured in a separate process per size (the daemon-like process: the store
opened through ``bootstrap.build`` and the HTTP app created), so its resident memory is
not inflated by the population step. For every query, one query embedding alone, then in
shuffled order: fleetmem's ``MemoryService.recall`` end to end (query embedding included,
scoped to one repository), its two store channels alone, brute-force cosine in numpy over
the same vectors, and a bare FTS5 ``MATCH ... ORDER BY bm25 LIMIT 50`` on the same table.
The service wraps its embedder in a few-second memo of recent queries; it is cleared
before every timed operation so each recall pays for its own query embedding, as a new
query does, and "embed alone" always calls the model itself. A second process then times
the matrix-bound operations again with ``OPENBLAS_NUM_THREADS=1``: on a busy two-core
machine OpenBLAS's second thread waits for a scheduler slice, which can cost a
matrix-vector product ~10 ms instead of ~0.2 ms.
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
from dataclasses import dataclass
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
from bench.populate import (
    EXTRA_WRITES,
    FALLBACK_LARGE,
    LARGE_BUDGET_S,
    LARGE_ENV,
    REAL_VECTORS,
    embedding_model,
    forget_queries,
    open_store,
    populate_bulk,
    populate_by_ingest,
    store_mib,
    write_path_at_size,
)
from fleetmem.embed.base import embed_query
from fleetmem.store.sqlite import vector_blob

# Other benchmarks import the population pieces from here; they live in bench.populate.
__all__ = [
    "FALLBACK_LARGE",
    "LARGE_BUDGET_S",
    "LARGE_ENV",
    "REAL_VECTORS",
    "_open",
    "main",
    "measure",
    "populate_bulk",
    "run",
    "summarize",
]
_open = open_store

SIZES = (1_000, 10_000, 100_000)
WARMUP_QUERIES = 20
QUERIES = 300
#: ``--quick``: records timed through the synchronous write path, queries per size, the
#: warm-up before them, and the one-at-a-time writes at each size.
QUICK_INGEST = 50
QUICK_QUERIES = 40
QUICK_WARMUP = 5
QUICK_WRITES = 50


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
    home: Path,
    size: int,
    n_queries: int,
    ops: Sequence[str] = tuple(OPS),
    warmup: int = WARMUP_QUERIES,
) -> dict[str, Any]:
    """Recall and reference timings over the store in ``home``; the child's entry point."""
    from fleetmem.core.textquery import fts_match

    app = open_store(home)
    web = True
    try:
        from fleetmem.surfaces.http.app import create_app

        create_app(app)  # what the daemon holds in memory besides the store
    except ImportError:
        web = False
    rss_open = rss_mib()
    data = FleetData()
    queries = data.queries(warmup + n_queries)
    first_ms, _ = timed_ms(lambda: app.memory.recall(queries[0][0], scopes=[queries[0][1].scope]))
    rss_warm = rss_mib()
    for query, repo in queries[1:warmup]:
        app.memory.recall(query, scopes=[repo.scope])

    conn = app.store.db.conn
    model_id = app.embedder.model_id
    blobs = conn.execute(
        "SELECT m.vector FROM builtin_vectors v JOIN embeddings m"
        " ON m.content_hash = v.content_hash AND m.model_id = v.model_id WHERE v.model_id = ?",
        (model_id,),
    ).fetchall()
    matrix = vector_blob.decode_rows([b[0] for b in blobs], 384)
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
        forget_queries(app)
        c0 = time.process_time()
        ms, value = timed_ms(fn)
        cpu[name].append((time.process_time() - c0) * 1000)
        samples[name].append(ms)
        return value

    counts = {"items": 0, "degraded": 0, "wrong_scope": 0}
    share = 0.0
    order_rng = random.Random(7)
    for query, repo in queries[warmup:]:
        scopes = [repo.scope]
        share += scope_counts.get(repo.scope, 0) / size
        match = fts_match(query) or '""'
        qv = timed("embed", lambda q=query: embed_query(embedding_model(app), q))

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
        "store_mib": store_mib(home),
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
    home: Path,
    size: int,
    n_queries: int,
    ops: Sequence[str] = tuple(OPS),
    blas_threads: int = 0,
    warmup: int = WARMUP_QUERIES,
) -> dict[str, Any]:
    """Run :func:`measure` in a fresh process; ``blas_threads`` > 0 pins OpenBLAS's pool."""
    env = dict(os.environ)
    if blas_threads:
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "bench.bench_recall_scale", "--measure", str(home)),
            *("--size", str(size), "--queries", str(n_queries), "--ops", ",".join(ops)),
            *("--warmup", str(warmup)),
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
@dataclass(frozen=True)
class Plan:
    """How much one run measures."""

    sizes: tuple[int, ...]
    real_vectors: int
    queries: int
    warmup: int
    #: Records timed through the synchronous write path; 0: the first size's store itself
    #: is filled that way (and measured), as in a full run.
    separate_ingest: int
    writes: int
    #: Time the matrix-bound operations again in a process with one BLAS thread.
    blas_rerun: bool


def plan(quick: bool, tiny: bool) -> Plan:
    """The sizes and counts of a full, ``quick`` or ``tiny`` run (see the module docstring)."""
    if tiny:
        return Plan(
            harness.TINY_SIZES, harness.TINY_REAL_VECTORS, harness.TINY_QUERIES,
            WARMUP_QUERIES, 0, 10, True,
        )  # fmt: skip
    if quick:
        return Plan(
            harness.QUICK_SIZES, harness.QUICK_REAL_VECTORS, QUICK_QUERIES, QUICK_WARMUP,
            QUICK_INGEST, QUICK_WRITES, False,
        )  # fmt: skip
    return Plan(SIZES, REAL_VECTORS, QUERIES, WARMUP_QUERIES, 0, EXTRA_WRITES, True)


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Populate stores of each size, measure them; see the module docstring.

    ``tiny`` (the test suite's run) uses :data:`bench.harness.TINY_SIZES` and a few queries.
    """
    data = FleetData()
    p = plan(quick, tiny)
    sizes = list(p.sizes)
    forced = bool(os.environ.get(LARGE_ENV))
    if forced and not (quick or tiny):
        sizes[-1] = int(os.environ[LARGE_ENV])
    real_vectors = p.real_vectors
    notes: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-"))
    out: dict[str, Any] = {"quick": quick, "sizes": {}, "notes": notes}
    try:
        # The first store is filled (and measured) through the synchronous write path, unless
        # the plan times that path on a small store of its own.
        first: Path | None = work / "ingest"
        stats, real = populate_by_ingest(first, data, p.separate_ingest or sizes[0])
        out["ingest"] = stats
        if p.separate_ingest:
            shutil.rmtree(first, ignore_errors=True)
            first = None
        populations: dict[str, Any] = {}
        for planned in sizes:
            size = planned
            if first is not None and size == sizes[0]:
                home = first
            else:
                home = work / str(size)
                large = size == max(sizes) and not quick and size > FALLBACK_LARGE
                stop_at = None if forced or not large else FALLBACK_LARGE
                # Built once per run_all and shared with the other store benchmarks.
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
            harness.progress(f"recall_scale: measuring {size:,} episodes")
            result = _measure_in_child(home, size, p.queries, warmup=p.warmup)
            if p.blas_rerun:
                single = _measure_in_child(
                    home, size, p.queries, BLAS_OPS, blas_threads=1, warmup=p.warmup
                )
                result["openblas_1_thread"] = {
                    key: single[key] for key in (OPS[op] for op in BLAS_OPS)
                } | {"loadavg": single["loadavg"]}
            result["write_path_ms"] = write_path_at_size(home, data, size, real, p.writes)
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
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--warmup", type=int, default=WARMUP_QUERIES)
    parser.add_argument("--ops", default=",".join(OPS), help="(internal) operations to time")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.measure is not None:
        ops = [op for op in args.ops.split(",") if op in OPS]
        print(json.dumps(measure(args.measure, args.size, args.queries, ops, args.warmup)))
        return 0
    print(json.dumps(run(quick=args.quick), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
