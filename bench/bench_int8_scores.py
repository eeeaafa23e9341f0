"""The SQLite store's in-memory vectors as int8 rows against float32, in one run.

Two measurements (``fleetmem.store.sqlite.int8_scores`` explains the representation):

1. **Rankings on real embeddings.** The run texts and questions of both halves of
   :func:`bench.recall_sets.runs_set` (608 runs each) are embedded with the local MiniLM; each
   question's top 10 by float32 cosine is compared with its top 10 from the int8 rows:
   top-1 agreement, overlap of the top 10, the largest score difference, and how far below
   float32's tenth score any int8 top-10 row lies (0 when only near ties changed places).
2. **Cost at 100,000 x 384.** Random unit rows (random rows are the worst case for ranking
   ties, so only time and memory are read from them): the bytes held, and per-query time of
   the float32 product the store used before (``einsum`` on the calling thread) against the
   int8 kernel, p50/p95 over the same queries.

    PYTHONPATH=. .venv/bin/python -m bench.bench_int8_scores [--quick]

Results: ``bench/results/int8-scores.json`` (``-quick``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench import recall_sets as rs
from bench.common import latency_summary, write_result
from fleetmem.embed.local import LocalMiniLM
from fleetmem.store.sqlite import int8_scores

ROWS = 100_000
DIM = 384
QUERIES = 200
TOP = 10


def _texts() -> tuple[list[str], list[str]]:
    runs: list[str] = []
    questions: list[str] = []
    for half, seed in zip(rs.HALVES, (rs.DEV_SEED, rs.CONFIRM_SEED), strict=True):
        built = rs.runs_set(half, seed)
        runs += [str(r["result_text"]) for r in built.records]
        questions += [q.text for q in built.questions] + list(built.unrelated)
    return runs, questions


def rankings(limit_runs: int | None = None) -> dict[str, Any]:
    runs, questions = _texts()
    runs = runs[:limit_runs] if limit_runs else runs
    model = LocalMiniLM()
    rows = np.asarray(model.embed(runs), dtype=np.float32)
    asked = np.asarray(model.embed(questions), dtype=np.float32)
    quantized, scales = int8_scores.quantize_rows(rows)
    same_first = 0
    overlaps: list[int] = []
    worst_error = 0.0
    worst_displacement = 0.0
    for query in asked:
        exact = rows @ query
        got = int8_scores.scores(quantized, scales, query)
        worst_error = max(worst_error, float(np.abs(got - exact).max()))
        exact_top = np.argsort(-exact)[:TOP]
        got_top = np.argsort(-got)[:TOP]
        same_first += int(exact_top[0] == got_top[0])
        overlaps.append(len(set(exact_top.tolist()) & set(got_top.tolist())))
        tenth = float(exact[exact_top[-1]])
        worst_displacement = max(worst_displacement, tenth - float(exact[got_top].min()))
    n = len(asked)
    return {
        "rows": len(rows),
        "questions": n,
        "top1_same": f"{same_first}/{n}",
        "top10_overlap_mean": round(float(np.mean(overlaps)), 3),
        "top10_identical_sets": f"{sum(o == TOP for o in overlaps)}/{n}",
        "max_abs_score_error": round(worst_error, 5),
        "max_below_float32_tenth": round(max(worst_displacement, 0.0), 5),
    }


def cost(rows_n: int, queries_n: int) -> dict[str, Any]:
    rng = np.random.default_rng(20261205)
    rows = rng.standard_normal((rows_n, DIM)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    queries = rng.standard_normal((queries_n, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    quantized, scales = int8_scores.quantize_rows(rows)
    int8_scores.scores(quantized, scales, queries[0])  # the session, built once

    def timed(score: Any) -> dict[str, float | int]:
        samples = []
        for q in queries:
            started = time.perf_counter()
            score(q)
            samples.append((time.perf_counter() - started) * 1000)
        return latency_summary(samples)

    return {
        "rows": rows_n,
        "dim": DIM,
        "float32_mib": round(rows.nbytes / 2**20, 1),
        "int8_mib": round((quantized.nbytes + scales.nbytes) / 2**20, 1),
        "float32_einsum": timed(lambda q: np.einsum("ij,j->i", rows, q)),
        "int8_kernel": timed(lambda q: int8_scores.scores(quantized, scales, q)),
    }


def main(argv: Sequence[str] = ()) -> int:
    quick = "--quick" in argv
    result = {
        "rankings": rankings(200 if quick else None),
        "cost": cost(10_000 if quick else ROWS, 30 if quick else QUERIES),
    }
    path = write_result("int8-scores", result, suffix="-quick" if quick else "")
    r, c = result["rankings"], result["cost"]
    print(
        f"rankings over {r['rows']} real rows, {r['questions']} questions: top-1 same"
        f" {r['top1_same']}, top-10 overlap {r['top10_overlap_mean']}, identical top-10"
        f" {r['top10_identical_sets']}, max score error {r['max_abs_score_error']}, worst"
        f" row below float32's tenth {r['max_below_float32_tenth']}"
    )
    print(
        f"at {c['rows']:,} x {c['dim']}: {c['float32_mib']} MiB float32 vs {c['int8_mib']} MiB"
        f" int8; p50/p95 {c['float32_einsum']['p50_ms']}/{c['float32_einsum']['p95_ms']} ms"
        f" vs {c['int8_kernel']['p50_ms']}/{c['int8_kernel']['p95_ms']} ms"
    )
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
