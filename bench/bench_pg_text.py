"""The PostgreSQL store's word channel against SQLite FTS5's, same data, same run.

LoCoMo's retrieval protocol (docs/benchmarks.md): one store per conversation, one episode per
turn ingested through the product's own path (vectors off, no summaries, so the only channel
is words), each question asked of ``search_text_scored`` on both stores. Reported: evidence
recall@5/10/20 and MRR over categories 1-4 for each store, how often the two top-10 lists are
identical, the largest coverage difference between the stores on one question's hits, and the
channel's latency on each.

    python -m bench.bench_pg_text [--url POSTGRESQL_URL] [--conversations N]
    python -m bench.run_all --only pg_text [--quick]

The URL defaults to ``FLEETMEM_TEST_STORE_URL``, else the cluster ``make postgres`` started;
without either the benchmark is skipped, saying so. Each conversation gets a schema of its
own, dropped afterwards. ``--quick`` asks two conversations.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

from bench.bench_locomo import DATA, KS, Conversation, load, run_record
from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import App, build

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DEPTH = 20


def _app(home: Path, url: str | None) -> App:
    home.mkdir(parents=True)
    store = f'[store]\nurl = "{url}"\n' if url else ""
    (home / "fleetmem.toml").write_text(
        '[model_api]\nembedding_model = ""\n[memory.episodes]\nexcerpt_chars = 2000\n'
        f"summary = false\n{store}",
        encoding="utf-8",
    )
    return build(home, {"HOME": str(home)})


def _ingest(app: App, conv: Conversation) -> dict[str, str]:
    to_dia: dict[str, str] = {}
    for turn in conv.turns:
        result = app.memory.ingest_run(run_record(conv, turn))
        if result.status != "recorded" or result.episode_id is None:
            raise RuntimeError(f"{turn.dia_id}: {result.status}")
        to_dia[result.episode_id] = turn.dia_id
    return to_dia


def _scores(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    wanted = set(evidence)
    out = {f"recall@{k}": len(wanted & set(ranked[:k])) / len(wanted) for k in KS}
    first = next((i for i, d in enumerate(ranked) if d in wanted), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return out


__all__ = ["DATA", "main", "run"]


def default_url() -> str | None:
    """The test server's URL: ``FLEETMEM_TEST_STORE_URL``, else ``make postgres``'s."""
    import os

    found = os.environ.get("FLEETMEM_TEST_STORE_URL", "").strip()
    url_file = ROOT / ".venv" / "postgres" / "url"
    if not found and url_file.is_file():
        found = url_file.read_text(encoding="utf-8").strip()
    return found or None


def run(
    *, quick: bool = False, url: str | None = None, conversations: int | None = None
) -> dict[str, Any]:
    url = url or default_url()
    if url is None:
        return {"skipped": "no PostgreSQL server: run make postgres or set FLEETMEM_TEST_STORE_URL"}
    return compare(url, conversations or (2 if quick else 10))


def compare(url: str, conversations: int) -> dict[str, Any]:
    convs = load()[:conversations]
    sums: dict[str, dict[str, float]] = {"sqlite": {}, "postgresql": {}}
    latency: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    ingest_s = {"sqlite": 0.0, "postgresql": 0.0}
    asked = identical = 0
    worst_coverage = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            schema = "fleetmem_bench_" + secrets.token_hex(4)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}")
            sep = "&" if "?" in url else "?"
            pg_url = f"{url}{sep}options={quote(f'-c search_path={schema},public')}"
            apps: dict[str, App] = {}
            maps: dict[str, dict[str, str]] = {}
            try:
                for kind, store_url in (("sqlite", None), ("postgresql", pg_url)):
                    started = time.perf_counter()
                    apps[kind] = _app(Path(tmp) / conv.key / kind, store_url)
                    maps[kind] = _ingest(apps[kind], conv)
                    ingest_s[kind] += time.perf_counter() - started
                scope = [apps["sqlite"].store.episode_scopes()[0]]
                for q in conv.questions:
                    match = fts_match(q.text)
                    if q.category not in (1, 2, 3, 4) or not q.evidence or match is None:
                        continue
                    asked += 1
                    hits: dict[str, list[tuple[str, float]]] = {}
                    for kind, app in apps.items():
                        started = time.perf_counter()
                        found = app.store.search_text_scored(match, scope, DEPTH)
                        latency[kind].append((time.perf_counter() - started) * 1000)
                        hits[kind] = [(maps[kind][e], c) for e, c in found]
                        ranked = [d for d, _ in hits[kind]]
                        for name, value in _scores(ranked, q.evidence).items():
                            sums[kind][name] = sums[kind].get(name, 0.0) + value
                    a, b = hits["sqlite"][:10], hits["postgresql"][:10]
                    identical += [d for d, _ in a] == [d for d, _ in b]
                    coverage = dict(a)
                    for d, c in b:
                        if d in coverage:
                            worst_coverage = max(worst_coverage, abs(coverage[d] - c))
            finally:
                for app in apps.values():
                    app.close()
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA {schema} CASCADE")
    report: dict[str, Any] = {
        "conversations": len(convs),
        "questions": asked,
        "top10_identical": round(identical / asked, 4) if asked else None,
        "max_coverage_difference": worst_coverage,
    }
    for kind in sums:
        pcts = sorted(latency[kind])
        report[kind] = {
            **{name: round(total / asked, 4) for name, total in sums[kind].items()},
            "text_channel_ms_p50": round(statistics.median(pcts), 2),
            "text_channel_ms_p95": round(pcts[int(0.95 * (len(pcts) - 1))], 2),
            "ingest_s": round(ingest_s[kind], 1),
        }
    return report


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default=None, help="PostgreSQL URL (default: make postgres's)")
    parser.add_argument("--conversations", type=int, default=10)
    args = parser.parse_args(list(argv) or None)
    report = run(url=args.url, conversations=args.conversations)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pg_text.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
