"""The cost of having no fast path: recall through the MCP client vs the direct index call.

fleetmem reaches its built-in provider over the MCP SDK's in-process transport, exactly as
it reaches an upstream (seed 000 REQ-11): the request is built and validated against the
contract, sent through an ``mcp.Client`` on the background loop thread, served by the
built-in ``MCPServer`` (its tool runs in a worker thread), and the response is validated
again before the index filter. This benchmark measures what that costs.

Stores of 1k and 10k episodes are filled through fleetmem's real write path: synthetic run
records (:class:`bench.common.FleetData`) go through ``MemoryService.ingest_run(record,
process_now=False)``, then ``process_jobs`` records every episode to the built-in provider
over MCP, as the daemon's job thread does. In ``hybrid`` mode (the local MiniLM model) the
episodes' embedding texts are first embedded in batches into fleetmem's embedding cache, so
population does not take minutes of one-at-a-time embedding; the recorded vectors are the
same.

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
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import FleetData, latency_summary, machine_line

SIZES = (1_000, 10_000)
WARMUP = 20
EMBED_BATCH = 64
TX_RECORDS = 1_000
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


def populate(app: Any, data: FleetData, start: int, n: int) -> dict[str, float]:
    """Ingest records ``start..start+n`` (deferred), prefill vectors, record them over MCP."""
    from fleetmem.core.episode import content_hash
    from fleetmem.providers.builtin import semantic_text

    began = time.perf_counter()
    ids: list[str] = []
    for offset in range(0, n, TX_RECORDS):
        with app.store.transaction():
            for record in data.records(min(TX_RECORDS, n - offset), start + offset):
                result = app.memory.ingest_run(record, process_now=False)
                if result.status != "pending":
                    raise RuntimeError(f"ingest gave {result.status}")
                ids.append(result.episode_id)
    ingest_s = time.perf_counter() - began
    embed_s = 0.0
    if app.embedder is not None:
        began = time.perf_counter()
        model_id = app.embedder.model_id
        for offset in range(0, len(ids), EMBED_BATCH):
            rows = app.store.get_episodes(ids[offset : offset + EMBED_BATCH])
            texts = [semantic_text(rows[i].episode) for i in ids[offset : offset + EMBED_BATCH]]
            vectors = app.embedder.embed(texts)
            with app.store.transaction():
                for text, vector in zip(texts, vectors, strict=True):
                    app.store.cache_embedding(content_hash(text), model_id, vector)
        embed_s = time.perf_counter() - began
    began = time.perf_counter()
    recorded = 0
    while True:
        done = app.memory.process_jobs(limit=1_000)
        if not done:
            break
        if set(done) != {"record:ok"}:
            raise RuntimeError(f"process_jobs gave {done}")
        recorded += done["record:ok"]
    record_s = time.perf_counter() - began
    if recorded != n:
        raise RuntimeError(f"recorded {recorded} of {n}")
    return {
        "ingest_s": round(ingest_s, 1),
        "embed_s": round(embed_s, 1),
        "record_over_mcp_s": round(record_s, 1),
        "record_over_mcp_per_s": round(n / record_s, 1),
    }


def measure(app: Any, data: FleetData, n_queries: int) -> dict[str, Any]:
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
        queries = data.queries(n_queries + WARMUP)
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
                if i >= WARMUP:
                    samples[name].append(elapsed)
            if i >= WARMUP:
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


def run(quick: bool = False) -> dict[str, Any]:
    """Measure both paths at 1k and 10k episodes; ``quick`` skips hybrid mode and uses fewer
    queries."""
    data = FleetData()
    n_queries = 100 if quick else 300
    modes = ["text"] if quick else ["text", "hybrid"]
    out: dict[str, Any] = {"quick": quick, "queries": n_queries, "modes": {}}
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-provider-"))
    try:
        for mode in modes:
            app = _open(work / mode, mode)
            try:
                if app.embedder is not None:
                    app.embedder.embed(["load the model before timing"])
                filled = 0
                result: dict[str, Any] = {}
                for size in SIZES:
                    print(f"  provider_path: {mode} {size}", file=sys.stderr, flush=True)
                    fill = populate(app, data, filled, size - filled)
                    filled = size
                    result[str(size)] = {"populate": fill, **measure(app, data, n_queries)}
                out["modes"][mode] = result
            finally:
                app.close()
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

    quick = "--quick" in sys.argv
    res = run(quick=quick)
    print(json.dumps(res, indent=2))
    print(summarize(res), file=sys.stderr)
