"""Query latency of the default ranking at 10,000 episodes, embedding included, and ingest
embedding throughput beside it.

The store is filled by :func:`bench.populate.populate_bulk` (the deferred write path of
bench/bench_recall_scale.py, :data:`bench.populate.REAL_VECTORS` of its vectors really
embedded), then measured in a child process by :func:`bench.bench_recall_scale.measure`, as
the scale benchmark does: ``MemoryService.recall`` end to end, scoped to one repository, the
service's query memo cleared before every call so each recall embeds its own query. Ingest
throughput is the embedding model alone on the first records' texts (episodes per second).
``--size N`` measures another size.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.bench_recall_scale import _measure_in_child
from bench.common import FleetData, write_result
from bench.populate import REAL_VECTORS, populate_bulk, populate_by_ingest

SIZE = 10_000
QUERIES = 200
WARMUP = 20


def run(size: int = SIZE, queries: int = QUERIES) -> dict[str, Any]:
    data = FleetData()
    work = Path(tempfile.mkdtemp(prefix="fleetmem-latency-"))
    try:
        stats, real = populate_by_ingest(work / "ingest", data, min(200, size))
        shutil.rmtree(work / "ingest", ignore_errors=True)
        home = work / str(size)
        started = time.perf_counter()
        population = populate_bulk(home, data, size, real, min(REAL_VECTORS, size))
        built_s = time.perf_counter() - started
        measured = _measure_in_child(home, size, queries, warmup=WARMUP)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "size": size,
        "queries": queries,
        "ingest_one_by_one": stats,
        "populate_s": round(built_s, 1),
        "populate": population,
        "measured": measured,
    }


def main(argv: Sequence[str] = ()) -> int:
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else SIZE
    report = run(size)
    path = write_result("recall-latency", report)
    recall = report["measured"].get("recall_ms") or report["measured"]
    print(f"{size:,} episodes: recall {recall}")
    print(f"ingest (one by one, embedding included): {report['ingest_one_by_one']}")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
