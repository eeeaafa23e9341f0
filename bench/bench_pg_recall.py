"""Hybrid recall on the PostgreSQL store against the SQLite store, same data, same run.

The coding-agent run sets of :mod:`bench.recall_sets` (dev and confirm halves: 608 runs in 14
repositories each), ingested through the product's own path into one store of each kind with
the default offline embedder, and every question asked through ``MemoryService.recall`` with
the default ranking, within its repository and across all 14 (which the service asks two
scopes at a time). What differs between the stores is their channels: PostgreSQL's word
channel computes FTS5's BM25 itself, and its vector channel is pgvector's HNSW index, an
approximate search, where SQLite multiplies every vector. Reported per store: recall@10 and MRR
of the question's run, how often the two stores' top-10 lists are identical, and recall's
latency on each (wall clock; the machine's load is in the result).

    python -m bench.bench_pg_recall [--url POSTGRESQL_URL] [--half dev|confirm]

The URL defaults to ``FLEETMEM_TEST_STORE_URL``, else the cluster ``make postgres`` started;
without either the benchmark says so and measures nothing. Each half gets a schema of its
own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

from bench import recall_sets as rs
from bench.bench_pg_text import default_url
from bench.common import write_result
from fleetmem.service.bootstrap import App, build

LIMIT = 20


def _app(home: Path, url: str | None) -> App:
    home.mkdir(parents=True)
    store = f'[store]\nurl = "{url}"\n' if url else ""
    (home / "fleetmem.toml").write_text(
        f"[memory.episodes]\nexcerpt_chars = 2000\nsummary = false\n{store}", encoding="utf-8"
    )
    return build(home, {"HOME": str(home)})


def _half(url: str, half: str, tmp: Path) -> dict[str, Any]:
    seed = rs.DEV_SEED if half == "dev" else rs.CONFIRM_SEED
    data = rs.runs_set(half, seed)
    schema = "fleetmem_bench_" + secrets.token_hex(4)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in url else "?"
    pg_url = f"{url}{sep}options={quote(f'-c search_path={schema},public')}"
    apps: dict[str, App] = {}
    to_run: dict[str, dict[str, str]] = {}
    out: dict[str, Any] = {"seed": seed, "runs": len(data.records)}
    try:
        for kind, store_url in (("sqlite", None), ("postgresql", pg_url)):
            apps[kind] = _app(tmp / half / kind, store_url)
            started = time.perf_counter()
            ids: dict[str, str] = {}
            for record in data.records:
                result = apps[kind].memory.ingest_run(record)
                if result.status != "recorded" or result.episode_id is None:
                    raise RuntimeError(f"{kind} {record['run_id']}: {result.status}")
                ids[result.episode_id] = str(record["run_id"])
            to_run[kind] = ids
            out[f"ingest_s_{kind}"] = round(time.perf_counter() - started, 1)
        every = [f"project:{repo}" for repo in data.repos]
        scores: dict[str, dict[str, list[float]]] = {k: {} for k in apps}
        latency: dict[str, list[float]] = {k: [] for k in apps}
        identical = asked = 0
        for q in data.questions:
            group = "words" if q.kind in ("lexical", "paraphrase") else "cued"
            for where, scopes in (("own", [f"project:{q.repo}"]), ("all", every)):
                ranked: dict[str, list[str]] = {}
                for kind, app in apps.items():
                    started = time.perf_counter()
                    result = app.memory.recall(q.text, scopes=scopes, limit=LIMIT)
                    latency[kind].append((time.perf_counter() - started) * 1000)
                    ranked[kind] = [to_run[kind][h.episode_id] for h in result.items]
                    rank = ranked[kind].index(q.target) + 1 if q.target in ranked[kind] else 0
                    cell = scores[kind].setdefault(f"{where}:{group}", [])
                    cell.append(float(0 < rank <= 10))
                    scores[kind].setdefault(f"{where}:{group}:rr", []).append(
                        1.0 / rank if rank else 0.0
                    )
                asked += 1
                identical += ranked["sqlite"][:10] == ranked["postgresql"][:10]
        for kind in apps:
            cells = {
                name: {
                    "recall@10": round(statistics.fmean(values), 3),
                    "mrr": round(statistics.fmean(scores[kind][name + ":rr"]), 3),
                }
                for name, values in scores[kind].items()
                if not name.endswith(":rr")
            }
            lat = sorted(latency[kind])
            out[kind] = {
                **cells,
                "recall_ms_p50": round(statistics.median(lat), 2),
                "recall_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2),
            }
        out["top10_identical"] = round(identical / asked, 3)
        out["asked"] = asked
    finally:
        for app in apps.values():
            app.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return out


def run(*, url: str | None = None, halves: Sequence[str] = rs.HALVES) -> dict[str, Any]:
    url = url or default_url()
    if url is None:
        return {"skipped": "no PostgreSQL server: run make postgres or set FLEETMEM_TEST_STORE_URL"}
    with tempfile.TemporaryDirectory() as tmp:
        return {
            "halves": {half: _half(url, half, Path(tmp)) for half in halves},
            "loadavg": os.getloadavg(),
        }


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default=None, help="PostgreSQL URL (default: make postgres's)")
    parser.add_argument("--half", choices=rs.HALVES, action="append", default=[])
    args = parser.parse_args(list(argv) or None)
    report = run(url=args.url, halves=args.half or rs.HALVES)
    path = write_result("pg-recall", report)
    for half, out in report.get("halves", {}).items():
        for kind in ("sqlite", "postgresql"):
            cells = {k: v for k, v in out[kind].items() if isinstance(v, dict)}
            line = "  ".join(f"{k} {v['recall@10']:.3f}/{v['mrr']:.3f}" for k, v in cells.items())
            print(
                f"{half:8} {kind:10} {line}  p50/p95 {out[kind]['recall_ms_p50']}/"
                f"{out[kind]['recall_ms_p95']} ms"
            )
        print(f"{half:8} top-10 identical {out['top10_identical']} of {out['asked']} asks")
    print(report.get("skipped", f"-> {path}"))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
