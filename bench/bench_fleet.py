"""A fleet of daemons over one store: writes, kill -9s and recall (issue 20's targets).

Every figure comes from real ``fleetmem serve`` subprocesses on 127.0.0.1, each with a home
(and control token) of its own, talking to the store their configuration names:

1. **Writes.** 8 writer threads post run records to ``POST /api/v1/runs`` (the route
   ``fleetmem runs ingest`` and the hooks use), writer ``w`` through daemon ``w mod 2``, each
   record once. On PostgreSQL both daemons' ``[store] url`` is one schema; on SQLite both
   daemons serve one home (``[store] url`` takes only a PostgreSQL URL, so two homes cannot
   name one SQLite file; the SQLite store documents one daemon per file and claims no jobs:
   the row shows what happens anyway). Reported: acknowledged runs per second over the
   phase's wall time, the latency of each acknowledged post (p50/p95), and every error (a
   status other than 2xx, or no answer).
2. **Kill -9s (PostgreSQL).** Writers post through daemon A while daemon B runs beside it;
   A is killed with SIGKILL :data:`KILLS` times at random moments (a request is always in
   flight) and started again, with ``[store] claim_timeout = "5s"``. A write is
   *acknowledged* when the daemon answered 2xx. After the last kill the writers stop, and
   the store is read directly:

   * **lost**: acknowledged run ids with no row in ``runs``, and live episodes of the
     store recorded by no provider (no ``provider_index`` row) once the jobs have drained;
   * **left claimed**: record jobs still pending (claimed or not) after
     ``claim_timeout`` plus two job intervals (15 s each) plus a margin;
   * **ran twice**: a record job's work done more than once. The built-in provider's work for
     an episode is one write of its ``builtin_fts`` row, and a finished job is one update of
     its ``jobs`` row to ``done``; the benchmark adds triggers (:class:`bench.fleet_procs.Audit`)
     that log every such write into a table of its own, so an episode indexed twice, or a
     job finished twice, is counted even when the second write changed nothing. The
     writers' runs each have a branch of their own, so no episode is a neighbour of another
     and nothing else rewrites an episode's index row (the built-in provider re-indexes an
     episode's neighbours as their context changes). Also reported, not a defect: jobs
     *claimed* more than once (a killed daemon's claim ran out and another took the job
     over), and runs with more than one episode (must be none).

3. **Recall.** The same store size on each store, filled through
   :func:`bench.populate.populate_bulk`'s path (only the first vectors really embedded, the
   rest reused, as it documents): SQLite by ``populate_bulk`` itself, PostgreSQL by the same
   chunks (:func:`bench.populate._add_chunk`) through a PostgreSQL home; ``fleetmem store
   copy`` is not used, because it rebuilds the whole index in one transaction and took
   118 s for 3,000 episodes on this machine (the populate path took 38 s for the SQLite
   store). Two daemons then recall at the same time, one client thread each, scoped to one
   repository (``POST /api/v1/recall``, limit 8); p50/p95 over both daemons' samples. When a
   larger PostgreSQL size is asked for (1,000,000 by default in a full run), it is made of
   copies of the measured store in SQL (:mod:`bench.pg_replicate`: N / size copies, each an
   older span of the same repositories, texts and vectors repeated) and measured the same
   way. ``--large-by chunks`` grows the store through the product instead, within
   ``--large-budget-s``, measures at the size reached and extrapolates the time the rest
   would take from the last chunk's pace, marked as such.

    PYTHONPATH=. .venv/bin/python -m bench.bench_fleet [--quick | --tiny] [--url URL]
        [--large N] [--large-by copies|chunks] [--large-budget-s S]
        [--only writes,kills,recall]

The URL defaults to ``FLEETMEM_TEST_STORE_URL``, else the cluster ``make postgres`` started;
without either the PostgreSQL parts say so and measure nothing. Each measurement gets a schema
of its own, dropped afterwards. Results: ``bench/results/fleet.json`` (``fleet-quick.json``).

Filling PostgreSQL is most of the recall phase's time (68 minutes for 100,000 episodes here,
2026-12-05). ``FLEETMEM_BENCH_PG_SCHEMA=NAME`` (the PostgreSQL counterpart of
``FLEETMEM_BENCH_STORES``) makes the recall phase use that schema of the server, created when
missing, filled only from the episodes it already holds up to the size asked for, and kept
afterwards; the result says how many episodes it found there. A schema filled by an older
fleetmem is migrated by the daemons as any store is. The copies for ``--large`` then go to
``NAME_x<factor>``, kept too, and made again only when it does not hold the size asked for.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from bench import harness
from bench.bench_pg_text import default_url
from bench.common import (
    RESULTS_ENV,
    FleetData,
    latency_summary,
    machine,
    machine_line,
    results_dir,
    write_result,
)
from bench.fleet_procs import (
    Audit,
    Daemon,
    bench_schema,
    drop_schema,
    fresh_schema,
    schema_bytes,
    stored_episodes,
    write_home,
)

WRITERS = 8
KILLS = 50
CLAIM_TIMEOUT_S = 5.0
JOB_INTERVAL_S = 15.0  # `fleetmem serve`'s background tick
#: Records of the write phases start here in the synthetic stream (beyond any populated store).
WRITE_BASE = 5_000_000
RECALL_SIZE = 100_000
LARGE_SIZE = 1_000_000
#: Seconds a full run may spend growing the PostgreSQL store beyond RECALL_SIZE by chunks
#: (``--large-by chunks``; the default makes copies of it, bench/pg_replicate.py).
LARGE_BUDGET_S = 1800.0
LARGE_BY = ("copies", "chunks")
PG_CHUNK = 10_000
PHASES = ("writes", "kills", "recall")


@dataclass(frozen=True)
class Plan:
    runs_per_writer: int
    kills: int
    kill_gap_s: tuple[float, float]
    recall_size: int
    real_vectors: int
    warm: int
    recalls: int  # per daemon
    large: int = 0
    large_budget_s: float = 0.0
    large_by: str = "copies"
    phases: tuple[str, ...] = PHASES


FULL = Plan(50, KILLS, (0.5, 2.5), RECALL_SIZE, 2_000, 20, 150, LARGE_SIZE, LARGE_BUDGET_S)
QUICK = Plan(12, 5, (0.5, 1.5), harness.QUICK_SIZES[0], harness.QUICK_REAL_VECTORS, 5, 30)
TINY = Plan(2, 2, (0.3, 0.6), harness.TINY_SIZES[-1], harness.TINY_REAL_VECTORS, 2, 6)


def plan(*, quick: bool, tiny: bool) -> Plan:
    return TINY if tiny else QUICK if quick else FULL


# ---- writers --------------------------------------------------------------------------------
def write_record(data: FleetData, i: int, tag: str) -> dict[str, Any]:
    """Run record ``WRITE_BASE + i`` of the synthetic stream, on a branch of its own."""
    record = data.record(WRITE_BASE + i)
    record["sessions"][0]["branch"] = f"bench/{tag}-{i}"
    return record


class Writers:
    """Writer threads posting fresh run records to their daemons, counting every answer."""

    def __init__(self, targets: Sequence[Daemon], data: FleetData, tag: str) -> None:
        self.targets = list(targets)
        self.data = data
        self.tag = tag
        self.acked: list[str] = []
        self.latency_ms: list[float] = []
        self.errors: Counter[str] = Counter()
        self.attempts = 0
        self._next = 0
        self._lock = threading.Lock()
        self.stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _take(self) -> int:
        with self._lock:
            self._next += 1
            self.attempts += 1
            return self._next - 1

    def _writer(self, target: Daemon, count: int | None) -> None:
        done = 0
        with httpx.Client(base_url=target.url, timeout=60) as client:
            while not self.stop.is_set() and (count is None or done < count):
                i = self._take()
                record = write_record(self.data, i, self.tag)
                body = json.dumps(record).encode()
                headers = {**target.headers(), "Content-Type": "application/json"}
                started = time.perf_counter()
                try:
                    got = client.post("/api/v1/runs", content=body, headers=headers)
                except httpx.ConnectError:
                    with self._lock:
                        self.errors["refused (daemon down)"] += 1
                    time.sleep(0.05)
                    continue
                except httpx.TransportError as exc:
                    with self._lock:
                        self.errors[f"no answer ({type(exc).__name__})"] += 1
                    continue
                ms = (time.perf_counter() - started) * 1000
                done += 1
                with self._lock:
                    if 200 <= got.status_code < 300:
                        self.acked.append(str(record["run_id"]))
                        self.latency_ms.append(ms)
                    else:
                        self.errors[f"HTTP {got.status_code}"] += 1

    def start(self, count: int | None = None) -> None:
        for target in self.targets:
            t = threading.Thread(target=self._writer, args=(target, count), daemon=True)
            t.start()
            self._threads.append(t)

    def join(self, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))


def _drain(audit: Audit, patience_s: float) -> tuple[float, dict[str, int]]:
    """Seconds until no record job is pending (or patience ran out), and the jobs then."""
    started = time.monotonic()
    while True:
        jobs = audit.jobs()
        if not jobs.get("pending") or time.monotonic() - started > patience_s:
            return round(time.monotonic() - started, 1), jobs
        time.sleep(1.0)


def _integrity(audit: Audit, acked: list[str]) -> dict[str, Any]:
    """What the store holds of the acknowledged writes, and any work done twice."""
    lost = audit.missing_runs(acked)
    twice_index = audit.repeated("index_write") if audit.kind == "postgresql" else {}
    twice_row = audit.repeated("index_row")
    twice_done = audit.repeated("job_done")
    claims = audit.repeated("job_claim") if audit.kind == "postgresql" else {}
    return {
        "lost_acknowledged": len(lost),
        "lost_run_ids": lost[:20],
        "unrecorded_episodes": audit.unindexed_episodes(),
        "runs_with_several_episodes": len(audit.episodes_of_runs()),
        # Keyed by episode (a record job per episode): one job's repeats counted once.
        "jobs_ran_twice": len(set(twice_index) | set(twice_row) | set(twice_done)),
        "episodes_indexed_twice": len(twice_index),
        "index_rows_written_twice": len(twice_row),
        "jobs_finished_twice": len(twice_done),
        "jobs_claimed_more_than_once": len(claims),
        "audit_counts": audit.counts(),
    }


def _pair(kind: str, tmp: Path, url: str | None) -> tuple[list[Daemon], Audit, Callable[[], None]]:
    """Two daemons over one store, started and healthy, with the audit installed."""
    if url is not None:
        homes = [tmp / "a", tmp / "b"]
        for home in homes:
            write_home(home, url=url)
        daemons = [Daemon("a", homes[0]), Daemon("b", homes[1])]
        daemons[0].start()  # migrations: the first daemon applies them
        daemons[1].start()
        audit = Audit(url=url)
    else:
        home = tmp / "shared"
        write_home(home, url=None)
        daemons = [Daemon("a", home), Daemon("b", home)]
        daemons[0].start()
        daemons[1].start()
        audit = Audit(sqlite_path=home / "fleetmem.db")
    audit.install()

    def close() -> None:
        for d in daemons:
            d.close()

    harness.progress(f"fleet: two daemons on {kind} up")
    return daemons, audit, close


def writes_phase(kind: str, tmp: Path, url: str | None, p: Plan) -> dict[str, Any]:
    """Phase 1 on one store: throughput of :data:`WRITERS` writers through two daemons."""
    daemons, audit, close = _pair(kind, tmp, url)
    try:
        writers = Writers([daemons[w % 2] for w in range(WRITERS)], FleetData(), f"w-{kind}")
        started = time.perf_counter()
        writers.start(count=p.runs_per_writer)
        writers.join()
        wall = time.perf_counter() - started
        drain_s, jobs = _drain(audit, CLAIM_TIMEOUT_S + 2 * JOB_INTERVAL_S + 15)
        return {
            "writers": WRITERS,
            "daemons": 2,
            "posted": writers.attempts,
            "acknowledged": len(writers.acked),
            "errors": sum(writers.errors.values()),
            "error_kinds": dict(writers.errors),
            "wall_s": round(wall, 2),
            "runs_per_s": round(len(writers.acked) / wall, 1),
            "latency": latency_summary(writers.latency_ms) if writers.latency_ms else None,
            "drain_s": drain_s,
            "jobs_after": jobs,
            **_integrity(audit, writers.acked),
            "loadavg": list(os.getloadavg()),
        }
    finally:
        close()


def kills_phase(tmp: Path, url: str, p: Plan) -> dict[str, Any]:
    """Phase 2: ``p.kills`` SIGKILLs of daemon A while writers post through it."""
    daemons, audit, close = _pair("postgresql", tmp, url)
    victim = daemons[0]
    rng = random.Random(20)
    try:
        writers = Writers([victim] * WRITERS, FleetData(), "k")
        writers.start()
        acked_at_kill: list[int] = []
        for k in range(p.kills):
            time.sleep(rng.uniform(*p.kill_gap_s))
            victim.kill9()
            acked_at_kill.append(len(writers.acked))
            victim.start()
            if (k + 1) % 10 == 0:
                harness.progress(f"fleet: {k + 1} kills, {len(writers.acked)} writes acknowledged")
        time.sleep(p.kill_gap_s[1])
        writers.stop.set()
        writers.join()
        stopped = time.monotonic()
        patience = CLAIM_TIMEOUT_S + 2 * JOB_INTERVAL_S + 15
        drain_s, jobs = _drain(audit, patience)
        return {
            "kills": p.kills,
            "claim_timeout_s": CLAIM_TIMEOUT_S,
            "posted": writers.attempts,
            "acknowledged": len(writers.acked),
            "failed_posts": dict(writers.errors),
            "acknowledged_between_kills_min": min(
                (b - a for a, b in zip([0, *acked_at_kill], acked_at_kill, strict=False)),
                default=0,
            ),
            "restart_s": latency_summary([s * 1000 for s in victim.start_s[1:]])
            if len(victim.start_s) > 1
            else None,
            "drain_s": drain_s,
            "waited_s": round(time.monotonic() - stopped, 1),
            "patience_s": patience,
            "jobs_after": jobs,
            "jobs_left_claimed_or_pending": int(jobs.get("pending", 0)),
            **_integrity(audit, writers.acked),
            "loadavg": list(os.getloadavg()),
        }
    finally:
        close()


# ---- recall ---------------------------------------------------------------------------------
def _populate_pg(
    url: str,
    home: Path,
    data: FleetData,
    start: int,
    upto: int,
    real: list[Any],
    p: Plan,
    budget_s: float | None = None,
) -> dict[str, Any]:
    """Grow the PostgreSQL store at ``url`` from ``start`` to ``upto`` episodes (or until
    ``budget_s`` is spent), by populate_bulk's chunks; stats with the size reached."""
    from bench.populate import _add_chunk
    from fleetmem.service.bootstrap import build

    write_home(home, url=url)
    app = build(home, {"HOME": str(home), "FLEETMEM_HOME": str(home)})
    try:
        harness.load_vectors(real, min(upto, p.real_vectors), app.embedder.model_id)
        started = time.perf_counter()
        done, chunks = start, []
        while done < upto:
            size = min(PG_CHUNK, upto - done)
            t0 = time.perf_counter()
            secs, _ = _add_chunk(app, data, done, size, real, p.real_vectors)
            done += size
            pace = size / (time.perf_counter() - t0)
            chunks.append(
                {"upto": done, "episodes_per_s": round(pace, 1)}
                | {k: round(v, 1) for k, v in secs.items()}
            )
            harness.progress(f"fleet: PostgreSQL store at {done:,} episodes ({pace:.0f}/s)")
            if budget_s is not None and time.perf_counter() - started > budget_s:
                break
        return {
            "records": done,
            "seconds": round(time.perf_counter() - started, 1),
            "episodes_per_s": round((done - start) / max(1e-9, time.perf_counter() - started), 1),
            "chunks": chunks,
            "path": f"bench.populate._add_chunk through a PostgreSQL home, chunks of {PG_CHUNK}",
        }
    finally:
        app.close()


def _recall_pair(daemons: list[Daemon], queries: list[tuple[str, Any]], p: Plan) -> dict[str, Any]:
    """Both daemons warmed, then recalling at the same time, one thread each."""
    mine = [queries[i::2] for i in range(2)]
    samples: list[list[float]] = [[], []]
    errors: Counter[str] = Counter()

    def ask(d: Daemon, query: str, repo: str) -> float:
        started = time.perf_counter()
        got = d.client.post("/api/v1/recall", json={"query": query, "repo": repo, "limit": 8})
        ms = (time.perf_counter() - started) * 1000
        if got.status_code != 200 or got.json().get("degraded"):
            errors[f"{got.status_code}"] += 1
        return ms

    for n, d in enumerate(daemons):
        for query, repo in mine[n][: p.warm]:
            ask(d, query, repo.key)

    def worker(n: int) -> None:
        for query, repo in mine[n][p.warm : p.warm + p.recalls]:
            samples[n].append(ask(daemons[n], query, repo.key))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "recall": latency_summary(samples[0] + samples[1]),
        "per_daemon_p95_ms": [latency_summary(s)["p95_ms"] for s in samples],
        "errors_or_degraded": dict(errors),
        "loadavg": list(os.getloadavg()),
    }


def _serve_pair(homes: Sequence[Path]) -> list[Daemon]:
    daemons = [Daemon(f"r{n}", home) for n, home in enumerate(homes)]
    for d in daemons:
        d.start()
    return daemons


def _recall_through(
    homes: Sequence[Path], queries: list[tuple[str, Any]], p: Plan
) -> dict[str, Any]:
    """:func:`_recall_pair` through a daemon serving each home, stopped afterwards."""
    daemons = _serve_pair(homes)
    try:
        return _recall_pair(daemons, queries, p)
    finally:
        for d in daemons:
            d.close()


def recall_phase(tmp: Path, url: str | None, p: Plan) -> dict[str, Any]:
    """Phase 3: populate both stores, recall through two daemons on each."""
    from bench.populate import populate_bulk

    data = FleetData()
    queries = data.queries(2 * (p.warm + p.recalls))
    real: list[Any] = []
    out: dict[str, Any] = {"size": p.recall_size, "real_vectors": p.real_vectors}

    sqlite_home = tmp / "sqlite"

    def build(home: Path) -> dict[str, Any]:
        return populate_bulk(home, data, p.recall_size, real, p.real_vectors)

    stats = harness.shared_episode_store(sqlite_home, p.recall_size, p.real_vectors, build)
    out["sqlite"] = {
        "populate": {
            "records": stats["records"],
            "seconds": stats["seconds"]["total"],
            "shared_store_reused": stats.get("reused", False),
        },
        "store_mib": round(
            sum(f.stat().st_size for f in sqlite_home.glob("fleetmem.db*")) / 2**20, 1
        ),
    }
    out["sqlite"] |= _recall_through([sqlite_home, sqlite_home], queries, p)
    harness.progress(f"fleet: SQLite recall p95 {out['sqlite']['recall']['p95_ms']} ms")
    if url is None:
        out["postgresql"] = {"skipped": "no PostgreSQL server"}
        return out

    with bench_schema(url) as (schema, pg, found):
        homes = [tmp / "pg0", tmp / "pg1"]
        populated = _populate_pg(
            pg, homes[0], data, min(found or 0, p.recall_size), p.recall_size, real, p
        )
        if found is not None:
            populated["kept_schema"] = {"name": schema, "episodes_found": found}
        write_home(homes[1], url=pg)
        out["postgresql"] = {
            "populate": populated,
            "store_mib": round(schema_bytes(url, schema) / 2**20, 1),
        }
        out["postgresql"] |= _recall_through(homes, queries, p)
        harness.progress(f"fleet: PostgreSQL recall p95 {out['postgresql']['recall']['p95_ms']} ms")
        out["postgresql_large"] = _large(url, schema, pg, homes, data, real, p, populated)
    return out


def _large(
    url: str,
    schema: str,
    pg: str,
    homes: list[Path],
    data: FleetData,
    real: list[Any],
    p: Plan,
    first: dict[str, Any],
) -> dict[str, Any]:
    """Grow the PostgreSQL store towards ``p.large`` within the budget; recall at the size
    reached; the time to ``p.large`` extrapolated from the last chunk's pace."""
    if p.large <= p.recall_size:
        return {"skipped": "no larger size asked for"}
    if p.large_by == "copies":
        return _large_by_copies(url, schema, data, p)
    out: dict[str, Any] = {"target": p.large, "budget_s": p.large_budget_s}
    reached, spent, chunks = p.recall_size, float(first["seconds"]), list(first["chunks"])
    if p.large_budget_s > 0:
        grown = _populate_pg(pg, homes[0], data, p.recall_size, p.large, real, p, p.large_budget_s)
        reached, spent = int(grown["records"]), spent + float(grown["seconds"])
        chunks += grown["chunks"]
        out["populate"] = grown
        out["store_mib"] = round(schema_bytes(url, schema) / 2**20, 1)
        out |= _recall_through(homes, data.queries(2 * (p.warm + p.recalls)), p)
    out["reached"] = reached
    if reached < p.large:
        pace = float(chunks[-1]["episodes_per_s"]) if chunks else 0.0
        rest = (p.large - reached) / pace if pace else None
        out["extrapolated"] = {
            "from_pace_episodes_per_s": pace,
            "remaining_episodes": p.large - reached,
            "remaining_s": round(rest) if rest else None,
            "total_populate_s": round(spent + rest) if rest else None,
            "note": "extrapolated, not measured: at the last chunk's pace, which falls as"
            " the store grows, so this is a lower bound",
        }
    return out


def _large_by_copies(url: str, schema: str, data: FleetData, p: Plan) -> dict[str, Any]:
    """Recall on ``p.large / p.recall_size`` copies of the measured store, made in SQL
    (bench/pg_replicate.py): schema ``<kept>_x<factor>`` kept beside a kept schema (made once,
    reused while it holds the size), else a fresh one dropped afterwards."""
    from bench.pg_replicate import replicate

    factor, rest = divmod(p.large, p.recall_size)
    if rest or factor < 2:
        raise ValueError(
            f"--large: {p.large:,} is not a multiple (2 or more) of the recall size"
            f" {p.recall_size:,}, so copies of the store cannot make it (use --large-by chunks)"
        )
    with bench_schema(url, suffix=f"_x{factor}") as (target, target_url, held):
        out: dict[str, Any] = {"target": p.large, "by": "copies", "schema_kept": held is not None}
        if held == p.large:
            out["populate"] = {"reused": True, "episodes": held, "factor": factor}
        else:
            if held:
                drop_schema(url, target)
            out["populate"] = replicate(url, schema, target, factor, harness.progress)
        out["store_mib"] = round(schema_bytes(url, target) / 2**20, 1)
        homes = [Path(tempfile.mkdtemp(prefix="fleetmem-bench-large-")) for _ in range(2)]
        for home in homes:
            write_home(home, url=target_url)
        try:
            out |= _recall_through(homes, data.queries(2 * (p.warm + p.recalls)), p)
        finally:
            for home in homes:
                shutil.rmtree(home, ignore_errors=True)
        out["reached"] = stored_episodes(url, target)
        harness.progress(
            f"fleet: PostgreSQL recall p95 at {out['reached']:,} {out['recall']['p95_ms']} ms"
        )
    return out


# ---- the benchmark --------------------------------------------------------------------------
def run(
    quick: bool = False,
    *,
    tiny_sizes: bool = False,
    url: str | None = None,
    large: int | None = None,
    large_budget_s: float | None = None,
    large_by: str | None = None,
    size: int | None = None,
    phases: Sequence[str] = PHASES,
    on_phase: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Measure the phases asked for; ``on_phase`` is given the figures so far after each
    phase (the CLI writes them, so a long run that stops keeps what it measured)."""
    p = plan(quick=quick, tiny=tiny_sizes)
    p = replace(
        p,
        recall_size=p.recall_size if size is None else size,
        large=p.large if large is None else large,
        large_budget_s=p.large_budget_s if large_budget_s is None else large_budget_s,
        large_by=p.large_by if large_by is None else large_by,
        phases=tuple(phases),
    )
    url = url or default_url()
    notes = [
        "SQLite: [store] url takes only a PostgreSQL URL, so two daemons share one SQLite file"
        " only by serving one home; the SQLite store documents one daemon per file and claims"
        " no jobs (docs/postgres.md). Its rows are measured that way and are not a supported"
        " configuration.",
        "The kill -9 phase runs on PostgreSQL only (the store a fleet of daemons shares).",
    ]
    out: dict[str, Any] = {"plan": asdict(p), "notes": notes}

    def done(phase: str) -> None:
        out[phase]["measured"] = {"date": machine()["date"], "commit": machine()["commit"]}
        if on_phase is not None:
            on_phase(out)

    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-fleet-"))
    try:
        if "writes" in p.phases:
            out["writes"] = {}
            for kind in ("postgresql", "sqlite"):
                if kind == "postgresql" and url is None:
                    out["writes"][kind] = {"skipped": "no PostgreSQL server"}
                    continue
                schema, pg = fresh_schema(url) if kind == "postgresql" and url else ("", None)
                try:
                    harness.progress(f"fleet: writes through two daemons on {kind}")
                    out["writes"][kind] = writes_phase(kind, work / f"w-{kind}", pg, p)
                finally:
                    if schema and url:
                        drop_schema(url, schema)
            done("writes")
        if "kills" in p.phases:
            if url is None:
                out["kills"] = {"skipped": "no PostgreSQL server"}
            else:
                schema, pg = fresh_schema(url)
                try:
                    harness.progress(f"fleet: {p.kills} kill -9s of a daemon mid-write")
                    out["kills"] = kills_phase(work / "kills", pg, p)
                finally:
                    drop_schema(url, schema)
            done("kills")
        if "recall" in p.phases:
            out["recall"] = recall_phase(work / "recall", url, p)
            done("recall")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["loadavg"] = list(os.getloadavg())
    return out


def summarize(result: dict[str, Any]) -> str:
    lines = [machine_line(result["machine"])] if "machine" in result else []
    for kind, w in result.get("writes", {}).items():
        if kind == "measured":
            continue
        if "skipped" in w:
            lines.append(f"  writes {kind}: skipped ({w['skipped']})")
            continue
        lat = w["latency"] or {}
        lines.append(
            f"  writes {kind}: {w['runs_per_s']} runs/s from {w['writers']} writers through 2"
            f" daemons, p50 {lat.get('p50_ms')} ms p95 {lat.get('p95_ms')} ms, errors"
            f" {w['errors']}, lost {w['lost_acknowledged']}, ran twice {w['jobs_ran_twice']}"
        )
    k = result.get("kills")
    if k and "skipped" not in k:
        lines.append(
            f"  kill -9 x{k['kills']}: {k['acknowledged']} acknowledged, lost"
            f" {k['lost_acknowledged']}, unrecorded {k['unrecorded_episodes']}, jobs left"
            f" {k['jobs_left_claimed_or_pending']} (drained in {k['drain_s']} s), ran twice"
            f" {k['jobs_ran_twice']}, claimed again {k['jobs_claimed_more_than_once']}"
        )
    r = result.get("recall", {})
    for kind in ("sqlite", "postgresql", "postgresql_large"):
        cell = r.get(kind, {})
        if "recall" in cell:
            size = cell.get("reached", r.get("size"))
            lines.append(
                f"  recall {kind} at {size:,}: p50 {cell['recall']['p50_ms']} ms p95"
                f" {cell['recall']['p95_ms']} ms (two daemons at once"
                + (", on copies of the store)" if cell.get("by") == "copies" else ")")
            )
        if "extrapolated" in cell:
            e = cell["extrapolated"]
            lines.append(
                f"  {kind}: reached {cell['reached']:,}; {cell['target']:,} would take about"
                f" {e['total_populate_s']} s to populate (extrapolated)"
            )
    lines.extend(f"  note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes, a few kills")
    mode.add_argument(
        "--tiny",
        action="store_true",
        help="the quick path at a few dozen items, for the tests (needs $"
        + RESULTS_ENV
        + ": never written into bench/results)",
    )
    parser.add_argument("--url", default=None, help="PostgreSQL URL (default: make postgres's)")
    parser.add_argument("--large", type=int, default=None, help="grow PostgreSQL to this size")
    parser.add_argument("--large-budget-s", type=float, default=None)
    parser.add_argument(
        "--large-by",
        choices=LARGE_BY,
        default=None,
        help="copies of the recall store made in SQL (default), or chunks through the product",
    )
    parser.add_argument("--size", type=int, default=None, help="recall store size")
    parser.add_argument("--only", default=",".join(PHASES), help="phases, comma-separated")
    args = parser.parse_args(argv)
    if args.tiny and not os.environ.get(RESULTS_ENV):
        parser.error(f"--tiny writes only where ${RESULTS_ENV} says, never into bench/results")
    phases = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in phases if x not in PHASES]
    if unknown:
        parser.error(f"unknown phase(s) {unknown}; have {', '.join(PHASES)}")
    mode_name = "tiny" if args.tiny else "quick" if args.quick else "full"
    suffix = {"full": "", "quick": "-quick", "tiny": "-tiny"}[mode_name]
    # A run of some phases replaces those in the existing results, keeping the others (each
    # phase says when and at which commit it was measured).
    existing = results_dir() / f"fleet{suffix}.json"
    kept: dict[str, Any] = {}
    if set(phases) != set(PHASES) and existing.is_file():
        old = json.loads(existing.read_text(encoding="utf-8"))
        kept = {k: old[k] for k in PHASES if k in old and k not in phases}

    def save(figures: dict[str, Any]) -> Path:
        body = {"mode": mode_name, "quick": args.quick, **kept, **figures}
        return write_result("fleet", body, suffix=suffix)

    result = run(
        quick=args.quick or args.tiny,
        tiny_sizes=args.tiny,
        url=args.url,
        large=args.large,
        large_budget_s=args.large_budget_s,
        large_by=args.large_by,
        size=args.size,
        phases=phases,
        on_phase=save,
    )
    path = save(result)
    body = json.loads(path.read_text(encoding="utf-8"))
    print(summarize(body))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
