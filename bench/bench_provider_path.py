"""The cost of having no fast path: recall through the MCP client vs the direct index call.

fleetmem reaches its built-in provider over the MCP SDK's in-process transport, exactly as
it reaches an upstream (seed 000 REQ-11): the request is built and validated against the
contract, sent through an ``mcp.Client`` on the background loop thread, served by the
built-in ``MCPServer`` (its tool runs in a worker thread), and the response is validated
again before the index filter. This benchmark measures what that costs.

Stores of 1k and 10k episodes (``--quick``: :data:`bench.harness.QUICK_SIZES`, text mode
only, fewer queries; ``--tiny``: :data:`bench.harness.TINY_SIZES`) are the ones
``bench_recall_scale`` measures (:func:`bench.populate.populate_bulk`: synthetic run
records through ``MemoryService.ingest_run(record, process_now=False)``, vectors embedded in
batches into fleetmem's embedding cache, then ``process_jobs`` records every episode to the
built-in provider over MCP, as the daemon's job thread does), shared for the length of a
``run_all`` (:func:`bench.harness.shared_episode_store`): each mode measures its own copy.
``text`` mode opens its copy with no embedder (``embedding_model = ""``), so only the text
channel answers; ``hybrid`` mode opens it with the local MiniLM model.

For each query (scoped to one repository, limit 8), in rotating order:

* ``service_mcp``: ``MemoryService.recall`` as shipped: MCP path plus fleetmem's index filter;
* ``mcp_call``: the MCP-backed provider's ``recall`` alone (client, loop thread, server,
  schema checks), no filter;
* ``direct_index``: ``BuiltinProvider.recall`` called in-process: the index work itself;
* ``service_direct``: ``MemoryService.recall`` over the ``BuiltinProvider`` object directly,
  i.e. the fast path fleetmem does not have (through the service's deadline thread pool, as
  the pre-MCP code did).

``overhead_ms`` is ``mcp_call - direct_index`` (p50): what the contract path adds per recall.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import harness
from bench.common import FleetData, latency_summary, machine_line

SIZES = (1_000, 10_000)
WARMUP = 20
QUICK_QUERIES = 40
QUICK_WARMUP = 5
MODES = {
    "text": '[model_api]\nembedding_model = ""\n',
    "hybrid": '[model_api]\nembedding_model = "local:minilm"\n',
}
COMMON = '[memory.episodes]\nsummary = false\nretention = "10y"\nprovider_timeout = "30s"\n'


def _open(home: Path, mode: str) -> Any:
    from fleetmem.service.bootstrap import build

    home.mkdir(parents=True, exist_ok=True)
    (home / "fleetmem.toml").write_text(MODES[mode] + COMMON, encoding="utf-8")
    return build(home, {"HOME": str(home), "FLEETMEM_HOME": str(home)})


def shared_store(home: Path, size: int, real_vectors: int) -> dict[str, Any]:
    """A copy of the run's populated store of ``size`` episodes in ``home``; its stats."""
    from bench.populate import populate_bulk

    real: list[Any] = []

    def build(h: Path) -> dict[str, Any]:
        return populate_bulk(h, FleetData(), size, real, real_vectors)

    stats = harness.shared_episode_store(home, size, real_vectors, build)
    return {
        "records": stats["records"],
        "seconds": stats["seconds"],
        "vectors_embedded": stats["vectors_embedded"],
        "shared_store_reused": stats.get("reused", False),
    }


def measure(app: Any, data: FleetData, n_queries: int, warmup: int = WARMUP) -> dict[str, Any]:
    from fleetmem.service.memory import MemoryService

    builtin = app.providers.builtin
    mcp = app.providers.provider("builtin")
    fast = MemoryService(store=app.store, settings=lambda: app.config.current, provider=builtin)
    try:
        paths: dict[str, Callable[[str, str], Any]] = {
            "service_mcp": lambda q, s: app.memory.recall(q, scopes=[s], limit=8),
            "mcp_call": lambda q, s: mcp.recall(q, [s], 8, []),
            "direct_index": lambda q, s: builtin.recall(q, [s], 8, []),
            "service_direct": lambda q, s: fast.recall(q, scopes=[s], limit=8),
        }
        queries = data.queries(n_queries + warmup)
        samples: dict[str, list[float]] = {name: [] for name in paths}
        names = list(paths)
        same = 0
        for i, (query, repo) in enumerate(queries):
            order = names[i % len(names) :] + names[: i % len(names)]
            answers: dict[str, Any] = {}
            for name in order:
                began = time.perf_counter()
                answers[name] = paths[name](query, repo.scope)
                elapsed = (time.perf_counter() - began) * 1000
                if i >= warmup:
                    samples[name].append(elapsed)
            if i >= warmup:
                via_mcp = [h.episode_id for h in answers["service_mcp"].items]
                direct = [h.episode_id for h in answers["service_direct"].items]
                same += via_mcp == direct
        out: dict[str, Any] = {name: latency_summary(s) for name, s in samples.items()}
        out["overhead_ms"] = {
            "p50": round(out["mcp_call"]["p50_ms"] - out["direct_index"]["p50_ms"], 3),
            "p95": round(out["mcp_call"]["p95_ms"] - out["direct_index"]["p95_ms"], 3),
        }
        out["same_answers"] = f"{same}/{n_queries}"
        return out
    finally:
        fast.close()


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Measure both paths at 1k and 10k episodes; ``quick`` skips hybrid mode and uses the
    quick stores and fewer queries; ``tiny`` is quick on the tiny stores."""
    from bench.populate import REAL_VECTORS

    data = FleetData()
    sizes = harness.TINY_SIZES if tiny else harness.QUICK_SIZES if quick else SIZES
    # The same vectors as recall_scale's stores of this mode, so the stores are shared.
    real_vectors = (
        harness.TINY_REAL_VECTORS if tiny else harness.QUICK_REAL_VECTORS if quick else REAL_VECTORS
    )
    n_queries = harness.TINY_QUERIES if tiny else QUICK_QUERIES if quick else 300
    warmup = 2 if tiny else QUICK_WARMUP if quick else WARMUP
    modes = ["text"] if quick or tiny else ["text", "hybrid"]
    out: dict[str, Any] = {"quick": quick, "tiny": tiny, "queries": n_queries, "modes": {}}
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-provider-"))
    try:
        for mode in modes:
            result: dict[str, Any] = {}
            for size in sizes:
                harness.progress(f"provider_path: {mode} mode, {size:,} episodes")
                home = work / mode / str(size)
                fill = shared_store(home, size, real_vectors)
                app = _open(home, mode)
                try:
                    if app.embedder is not None:
                        app.embedder.embed(["load the model before timing"])
                    result[str(size)] = {
                        "populate": fill,
                        **measure(app, data, n_queries, warmup),
                    }
                finally:
                    app.close()
                shutil.rmtree(home, ignore_errors=True)
            out["modes"][mode] = result
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarize(result: dict[str, Any]) -> str:
    lines = []
    if "machine" in result:
        lines.append(machine_line(result["machine"]))
    lines.append(
        f"{'mode':>6} {'episodes':>9} | {'service+MCP':>11} | {'MCP call':>9} | {'direct':>7}"
        f" | {'service direct':>14} | {'MCP overhead':>12}   (p50 ms; p95 in brackets)"
    )
    for mode, sizes in result["modes"].items():
        for size, r in sizes.items():
            cells = [
                f"{r[k]['p50_ms']:.2f} ({r[k]['p95_ms']:.1f})"
                for k in ("service_mcp", "mcp_call", "direct_index", "service_direct")
            ]
            over = f"{r['overhead_ms']['p50']:+.2f} ({r['overhead_ms']['p95']:+.1f})"
            lines.append(
                f"{mode:>6} {int(size):>9,} | {cells[0]:>11} | {cells[1]:>9} | {cells[2]:>7}"
                f" | {cells[3]:>14} | {over:>12}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    import json
    import sys

    res = run(quick="--quick" in sys.argv, tiny="--tiny" in sys.argv)
    print(json.dumps(res, indent=2))
    print(summarize(res), file=sys.stderr)
