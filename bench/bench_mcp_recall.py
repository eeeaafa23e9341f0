"""Recall end to end through the agent-facing MCP tool, and briefing computation.

Stores of 10k episodes and 100k (``--quick``: 1k episodes and 500 facts; ``--tiny``: 100
episodes, 20 facts, one repository, a handful of queries) are the very stores
``bench_recall_scale`` measures:
within one ``run_all`` the first of the two to need a size populates it
(:func:`bench.bench_recall_scale.populate_bulk`: synthetic run records through
``ingest_run(process_now=False)``, vectors embedded in batches with the local MiniLM model into
fleetmem's embedding cache, then recorded to the built-in provider by ``process_jobs`` over MCP;
episode ``i`` past ``REAL_VECTORS`` reuses the vector of ``i mod REAL_VECTORS``) and the other
gets a copy (:func:`bench.harness.shared_episode_store`). The same 50k fallback applies when
populating 100k would blow the budget, and the result's ``notes`` say so. Each store then gets
2,000 facts (``bench_facts.synthetic_facts``, three in four in the project scope of the
repository they name, the rest workspace-wide, taught through ``FactService.add``), and three
live runs per repository (collisions).

Iterating on recall speed: populating 100k episodes takes many minutes. Point
``$FLEETMEM_BENCH_STORES`` at a directory of your own (``run_all`` then leaves it in place) and
every populated store is kept there and copied for the next run instead of being built again;
with ``FLEETMEM_BENCH_LARGE=100000`` the large store is built whole (no 50k fallback), e.g.
``FLEETMEM_BENCH_STORES=~/.cache/fleetmem-bench FLEETMEM_BENCH_LARGE=100000 python -m
bench.run_all --only mcp_recall``. Developer-only: nothing else reads these variables.

For each query (``FleetData.queries``, scoped to one repository, limit 8), in rotating order,
every figure with the query embedding included (the vector a recall embeds once for its
episodes and its facts is forgotten before each row; each stdio server sees a query once):

* ``mcp_stdio``: the ``recall`` tool of a real ``fleetmem mcp`` subprocess (one per
  repository, attributed by a run token), called through the official SDK client over stdio;
* ``mcp_in_process``: the same tool through the SDK's in-process transport;
* ``service``: ``AgentMemory.recall``: facts, episodes and recent runs composed and fenced,
  exposure rows written (what the tool calls); its facts are ranked while the provider
  searches episodes (``MemoryService.recall_alongside``);
* ``service_sequential``: the same with the two one after the other (``overlap_recalls`` off),
  which is what the overlap buys;
* ``episodes_service``: ``MemoryService.recall`` alone (the provider over MCP and the index
  filter);
* ``bare_index``: ``BuiltinProvider.recall`` called directly (embedding, FTS5, vectors, fusion);
* ``facts_rank``: the facts section's ranking alone (``FactItems.rank``: embedding, cosine over
  every fact, words), what runs beside the episodes;
* ``text_channel`` and ``vector_channel``: the built-in index's two searches alone (FTS5 BM25;
  cosine over the scope's vectors, the query already embedded);
* ``embed_query``: one query embedding alone.

Briefings, per repository's run, repeatedly:

* ``briefing_compute_no_provider``: ``BriefingService.briefing`` with an episode provider that
  is down (collisions, recent runs, 2,000 facts ranked, composition): the seed's target;
* ``briefing_compute``: the same with the built-in provider answering;
* ``briefing_served``: ``AgentMemory.briefing`` of a run whose briefing is stored (read,
  exposure rows, metrics): what every read after the first costs;
* ``briefing_mcp_in_process``: the ``briefing`` tool through the SDK, in process.

``briefing_profile``: the top of a cProfile of ``briefing_compute_no_provider`` (cumulative
time), so a missed target comes with the place the time goes.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import itertools
import logging
import os
import pstats
import shutil
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import harness
from bench.common import REPOS, FleetData, Repo, latency_summary, machine_line

SIZES = (10_000, 100_000)
#: Quick runs: one small store (shared with recall_scale's quick 1k) and fewer facts.
QUICK_SIZES = (1_000,)
QUICK_FACTS = 500
FACTS = 2_000
QUERIES = 200
QUICK_QUERIES = 60
WARMUP = 10
BRIEFING_ROUNDS = 25
LIVE_PER_REPO = 3
PROFILE_ROUNDS = 5
PROFILE_TOP = 15


@dataclass(frozen=True)
class Plan:
    """How much of everything one run measures."""

    sizes: tuple[int, ...]
    real_vectors: int
    facts: int
    queries: int
    warmup: int
    briefing_rounds: int
    repos: tuple[Repo, ...]


def plan(quick: bool, tiny: bool) -> Plan:
    from bench.bench_recall_scale import REAL_VECTORS

    if tiny:
        return Plan(
            (harness.TINY_SIZES[-1],), harness.TINY_REAL_VECTORS, 20, harness.TINY_QUERIES,
            2, 2, REPOS[:1],
        )  # fmt: skip
    if quick:
        return Plan(
            QUICK_SIZES, harness.QUICK_REAL_VECTORS, QUICK_FACTS, QUICK_QUERIES, WARMUP,
            BRIEFING_ROUNDS, REPOS,
        )  # fmt: skip
    return Plan(SIZES, REAL_VECTORS, FACTS, QUERIES, WARMUP, BRIEFING_ROUNDS, REPOS)


ROWS = (
    "mcp_stdio",
    "mcp_in_process",
    "service",
    "service_sequential",
    "episodes_service",
    "bare_index",
    "facts_rank",
    "text_channel",
    "vector_channel",
    "embed_query",
)


# ---- setting up ------------------------------------------------------------------------
def _open(home: Path) -> Any:
    from bench.bench_recall_scale import _open as open_scale

    return open_scale(home)


#: (model, fact body) -> vector: every store gets the same facts, so each is embedded once.
_FACT_VECTORS: dict[tuple[str, str], Any] = {}


def add_facts(app: Any, n: int = FACTS) -> dict[str, Any]:
    """``n`` facts taught by people: 3 in 4 scoped to the repository they name."""
    from bench.bench_facts import synthetic_facts
    from fleetmem.core.episode import content_hash
    from fleetmem.core.facts import Actor
    from fleetmem.core.scope import WORKSPACE

    started = time.perf_counter()
    bodies = synthetic_facts(n)
    model = app.embedder.model_id
    missing = [b for b in bodies if (model, b) not in _FACT_VECTORS]
    for start in range(0, len(missing), 64):
        chunk = missing[start : start + 64]
        for body, vector in zip(chunk, app.embedder.embed(chunk), strict=True):
            _FACT_VECTORS[(model, body)] = vector
    with app.store.transaction():
        for body in bodies:
            app.store.cache_embedding(content_hash(body), model, _FACT_VECTORS[(model, body)])
    scoped = 0
    for i, body in enumerate(bodies):
        repo = next((r for r in REPOS if r.name in body), None)
        scope = repo.scope if repo is not None and i % 4 else WORKSPACE
        scoped += scope != WORKSPACE
        # 50 writers, so no one of them passes the 60-writes-a-minute limit.
        app.facts.add(body, scope=scope, actor=Actor("human", f"bench-{i % 50}"))
    return {
        "facts": n,
        "project_scoped": scoped,
        "seconds": round(time.perf_counter() - started, 1),
    }


def open_runs(app: Any, repos: tuple[Repo, ...] = REPOS) -> dict[str, Any]:
    """One attributed run per repository (the measured caller), plus live peers."""
    from bench.common import AGENTS

    callers: dict[str, Any] = {}
    names = itertools.cycle(a[0] for a in AGENTS)
    for repo in repos:
        mine = app.runs.open_run("api-fixer", repo=repo.key, branch="main", source="api")
        callers[repo.key] = mine
        for i in range(LIVE_PER_REPO):
            peer = app.runs.open_run(next(names), repo=repo.key, branch="main", source="api")
            pkg = repo.packages[i % len(repo.packages)]
            app.runs.touch(peer.token, [f"{pkg}/module_{i}.py"])
    return callers


class _Down:
    """An episode provider that is down: fails at once, as after its breaker opened."""

    enforces_deadlines = True
    name = "builtin"

    def record(self, *args: object) -> list[str]:
        raise ConnectionError("down")

    def recall(self, *args: object) -> Any:
        raise ConnectionError("down")

    def forget(self, provider_id: str) -> bool:
        raise ConnectionError("down")


# ---- measuring ---------------------------------------------------------------------------
def _queries(runs: dict[str, Any], wanted: int) -> list[tuple[str, Repo]]:
    """The first ``wanted`` queries scoped to a repository that has a measured run."""
    out: list[tuple[str, Repo]] = []
    drawn = wanted
    while len(out) < wanted:
        out = [q for q in FleetData().queries(drawn) if q[1].key in runs][:wanted]
        drawn *= 2
    return out


def _children_cpu() -> float:
    """CPU seconds used so far by this process's child processes (the stdio servers)."""
    me, total, tick = os.getpid(), 0.0, os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # fields[1] is the parent's pid, 13 and 14 user and system
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def settle_servers(app: Any, quiet_s: float = 1.0, timeout_s: float = 120.0) -> float:
    """Wait for the correction for hubs' background work: this process's (``settle``) and
    the stdio servers' (until their CPU time stops growing for ``quiet_s``); seconds waited."""
    started = time.monotonic()
    app.providers.builtin.hubs.settle(timeout=timeout_s)
    if not Path("/proc").is_dir():
        return round(time.monotonic() - started, 1)
    last, quiet_since = _children_cpu(), time.monotonic()
    while time.monotonic() - started < timeout_s:
        time.sleep(0.25)
        now = _children_cpu()
        if now - last > 0.02:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            break
    return round(time.monotonic() - started, 1)


def profile_top(fn: Any, rounds: int = PROFILE_ROUNDS, top: int = PROFILE_TOP) -> list[str]:
    """The ``top`` lines of a cProfile of ``rounds`` calls of ``fn``, by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(rounds):
        fn()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
    lines = [line.rstrip() for line in text.getvalue().splitlines()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return [line for line in lines[start:] if line.strip()]


async def _measure(app: Any, home: Path, runs: dict[str, Any], n: int, p: Plan) -> dict[str, Any]:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from fleetmem.core.textquery import fts_match
    from fleetmem.embed.base import embed_query
    from fleetmem.service.briefings import BriefingService, subject_of
    from fleetmem.service.fact_items import FactItems, fact_scopes
    from fleetmem.service.memory import MemoryService
    from fleetmem.surfaces.mcp.server import build_server, fixed_token

    warmup = p.warmup
    queries = _queries(runs, warmup + n)
    fleetmem = str(Path(sys.executable).with_name("fleetmem"))
    memory = app.agent_memory
    callers = {key: memory.caller(run.token) for key, run in runs.items()}
    samples: dict[str, list[float]] = {row: [] for row in ROWS}
    briefing: dict[str, list[float]] = {
        k: []
        for k in (
            "briefing_compute_no_provider",
            "briefing_compute",
            "briefing_served",
            "briefing_mcp_in_process",
        )
    }
    counts = {"facts": 0, "episodes": 0, "degraded": 0}
    forget = getattr(app.embedder, "forget", lambda: None)
    fact_items = FactItems(app.facts)
    fact_scopes_of = {key: fact_scopes(subject_of(c)) for key, c in callers.items() if c}

    def sequential(caller: Any, query: str) -> Any:
        app.memory.overlap_recalls = False
        try:
            return memory.recall(caller, query)
        finally:
            app.memory.overlap_recalls = True

    def text_channel(query: str, scopes: list[str]) -> list[str]:
        match = fts_match(query)
        return app.store.search_text(match, scopes, 50) if match else []

    def vector_channel(query: str, scopes: list[str]) -> float:
        # The query's embedding is not part of this row: only the cosine search is timed.
        vector = embed_query(app.embedder, query)
        start = time.perf_counter()
        app.store.search_vector(vector, app.embedder.model_id, scopes, 50)
        return (time.perf_counter() - start) * 1000

    servers = {key: build_server(app, fixed_token(run.token)) for key, run in runs.items()}
    down = MemoryService(store=app.store, settings=lambda: app.config.current, provider=_Down())
    no_provider = BriefingService(
        memory=down,
        runs=app.runs,
        settings=lambda: app.config.current,
        facts=FactItems(app.facts),
    )
    err = (home / "mcp-stdio.log").open("w", encoding="utf-8")
    try:
        async with AsyncExitStack() as stack:
            local: dict[str, Any] = {}
            remote: dict[str, Any] = {}
            for key, run in runs.items():
                local[key] = await stack.enter_async_context(Client(servers[key], cache=None))
                env = {
                    **os.environ,
                    "FLEETMEM_HOME": str(home),
                    "FLEETMEM_RUN_TOKEN": run.token,
                    "HF_HUB_OFFLINE": "1",
                }
                params = StdioServerParameters(command=fleetmem, args=["mcp"], env=env)
                remote[key] = await stack.enter_async_context(
                    Client(stdio_client(params, errlog=err), cache=None)
                )

            async def tool(client: Any, query: str) -> str:
                result = await client.call_tool("recall", {"query": query, "limit": 8})
                if result.is_error:
                    raise RuntimeError(result.content[0].text)
                return str(result.content[0].text)

            def timed_sync(fn: Any) -> tuple[float, Any]:
                start = time.perf_counter()
                out = fn()
                return (time.perf_counter() - start) * 1000, out

            async def timed_async(coro: Any) -> tuple[float, Any]:
                start = time.perf_counter()
                out = await coro
                return (time.perf_counter() - start) * 1000, out

            # Each server loads its embedder on its first recall: not part of any figure.
            for key in runs:
                await tool(remote[key], "warm up the server")
                await tool(local[key], "warm up the server")
            # That first recall also starts the correction for hubs' one-time work for its
            # repository (a sample, then every episode's offset: about 0.7 s of CPU at
            # 12,500 episodes) on a background thread of each server: a steady-state figure
            # waits for it, in this process and in the stdio servers alike.
            await asyncio.to_thread(settle_servers, app)

            for i, (query, repo) in enumerate(queries):
                key, scopes = repo.key, [repo.scope]
                ops = {
                    "mcp_stdio": lambda q=query, k=key: timed_async(tool(remote[k], q)),
                    "mcp_in_process": lambda q=query, k=key: timed_async(tool(local[k], q)),
                }
                sync_ops = {
                    "service": lambda q=query, k=key: memory.recall(callers[k], q),
                    "service_sequential": lambda q=query, k=key: sequential(callers[k], q),
                    "facts_rank": lambda q=query, k=key: fact_items.rank(fact_scopes_of[k], q, 8),
                    "text_channel": lambda q=query, s=scopes: text_channel(q, s),
                    "episodes_service": lambda q=query, s=scopes: app.memory.recall(q, scopes=s),
                    "bare_index": lambda q=query, s=scopes: app.providers.builtin.recall(
                        q, s, 8, []
                    ),
                    "embed_query": lambda q=query: embed_query(app.embedder, q),
                }
                order = list(ROWS[i % len(ROWS) :] + ROWS[: i % len(ROWS)])
                for row in order:
                    # Every row pays for its query's embedding: nothing remembered from the
                    # row before (a recall embeds once for its episodes and facts alike).
                    forget()
                    if row in ops:
                        ms, out = await ops[row]()
                    elif row == "vector_channel":
                        ms, out = vector_channel(query, scopes), None
                    else:
                        ms, out = timed_sync(sync_ops[row])
                    if i < warmup:
                        continue
                    samples[row].append(ms)
                    if row == "service":
                        counts["facts"] += out.shown.get("facts", 0)
                        counts["episodes"] += out.shown.get("episodes", 0)
                        counts["degraded"] += bool(out.degraded)

            forget()
            for _ in range(p.briefing_rounds):
                for key, caller in callers.items():
                    subject = subject_of(caller)
                    ms, _ = timed_sync(lambda s=subject: no_provider.briefing(s))
                    briefing["briefing_compute_no_provider"].append(ms)
                    ms, _ = timed_sync(lambda s=subject: app.briefings.briefing(s))
                    briefing["briefing_compute"].append(ms)
                    memory.briefing(caller)  # stored at the first read
                    ms, _ = timed_sync(lambda c=caller: memory.briefing(c))
                    briefing["briefing_served"].append(ms)
                    ms, _ = await timed_async(local[key].call_tool("briefing", {}))
                    briefing["briefing_mcp_in_process"].append(ms)
            subjects = [subject_of(c) for c in callers.values()]
            profile = profile_top(lambda: [no_provider.briefing(s) for s in subjects])
    finally:
        err.close()
        down.close()
        for server in servers.values():
            server.close()
    out: dict[str, Any] = {row: latency_summary(samples[row]) for row in ROWS}
    out.update({k: latency_summary(v) for k, v in briefing.items()})
    out["briefing_profile"] = {
        "what": f"cProfile of {PROFILE_ROUNDS} rounds of briefing_compute_no_provider over"
        f" {len(subjects)} runs, top {PROFILE_TOP} by cumulative time",
        "top": profile,
    }
    measured = n
    out["queries"] = measured
    out["mean_facts_shown"] = round(counts["facts"] / measured, 2)
    out["mean_episodes_shown"] = round(counts["episodes"] / measured, 2)
    out["degraded"] = counts["degraded"]
    out["mcp_overhead_p50_ms"] = {
        "in_process_over_service": round(
            out["mcp_in_process"]["p50_ms"] - out["service"]["p50_ms"], 3
        ),
        "stdio_over_service": round(out["mcp_stdio"]["p50_ms"] - out["service"]["p50_ms"], 3),
    }
    out["overlap_saves_ms"] = {
        q: round(out["service_sequential"][f"{q}_ms"] - out["service"][f"{q}_ms"], 3)
        for q in ("p50", "p95")
    }
    out["loadavg"] = list(os.getloadavg())
    return out


def measure(home: Path, size: int, n: int, p: Plan) -> dict[str, Any]:
    """Facts, live runs, then every timing, over the store of ``size`` episodes in ``home``."""
    app = _open(home)
    # The provider that is down for the no-provider briefing logs each refusal; not news here.
    logging.getLogger("fleetmem.memory").setLevel(logging.ERROR)
    try:
        app.embedder.embed(["load the model before timing"])
        harness.progress(f"mcp_recall: {p.facts:,} facts into the store of {size:,}")
        facts = add_facts(app, p.facts)
        runs = open_runs(app, p.repos)
        harness.progress(f"mcp_recall: measuring {size:,} episodes, {n} queries")
        result = asyncio.run(_measure(app, home, runs, n, p))
        result["episodes"] = size
        result["facts_added"] = facts
        return result
    finally:
        app.close()


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Populate (or reuse) each size, add facts and runs, measure; see the module docstring."""
    from bench.bench_recall_scale import FALLBACK_LARGE, LARGE_BUDGET_S, LARGE_ENV, populate_bulk

    data = FleetData()
    p = plan(quick, tiny)
    sizes = list(p.sizes)
    forced = bool(os.environ.get(LARGE_ENV)) and not (quick or tiny)
    if forced:
        sizes[-1] = int(os.environ[LARGE_ENV])
    notes: list[str] = []
    out: dict[str, Any] = {"quick": quick, "tiny": tiny, "sizes": {}, "populate": {}}
    out["notes"] = notes
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-mcp-"))
    real: list[Any] = []
    try:
        for planned in sizes:
            home = work / str(planned)
            stop_at = FALLBACK_LARGE if planned > FALLBACK_LARGE and not forced else None

            def build(h: Path, n: int = planned, stop: int | None = stop_at) -> dict[str, Any]:
                return populate_bulk(h, data, n, real, p.real_vectors, stop_at=stop)

            stats = harness.shared_episode_store(
                home, planned, p.real_vectors, build, stop_at=stop_at
            )
            size = stats["records"]
            out["populate"][str(size)] = {
                "records": size,
                "seconds": stats["seconds"],
                "vectors_embedded": stats["vectors_embedded"],
                "vectors_reused": stats["vectors_reused"],
                "shared_store_reused": stats.get("reused", False),
                "compaction": stats.get("compaction"),
            }
            if size != planned:
                spent = stats["seconds"]["total"] - stats["seconds"]["embed_batches"]
                notes.append(
                    f"the large store holds {size:,} episodes, not {planned:,}: populating"
                    f" {size:,} took {spent / 60:.1f} min here, so {planned:,} would take more"
                    f" than the {LARGE_BUDGET_S / 60:.0f} min budget"
                )
            out["sizes"][str(size)] = measure(home, size, p.queries, p)
            shutil.rmtree(home, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["target"] = {"recall_p95_ms_at_100k": 25.0, "briefing_p95_ms_without_provider": 10.0}
    return out


def summarize(result: dict[str, Any]) -> str:
    lines = [machine_line(result["machine"])] if "machine" in result else []
    for size, r in result["sizes"].items():
        lines.append(f"  {int(size):,} episodes, {r['facts_added']['facts']:,} facts:")
        for row in (*ROWS, "briefing_compute_no_provider", "briefing_compute", "briefing_served"):
            s = r[row]
            lines.append(f"    {row:<30} p50 {s['p50_ms']:>8.2f} ms   p95 {s['p95_ms']:>8.2f} ms")
    lines += [f"  note: {n}" for n in result.get("notes", [])]
    return "\n".join(lines)


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick="--quick" in sys.argv, tiny="--tiny" in sys.argv), indent=2))
