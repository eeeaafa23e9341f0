"""Resident memory of the daemon over a large store, and recall through its HTTP API.

A real ``fleetmem serve`` subprocess over a copy of the run's populated store of 100k
episodes (``--quick``: the first of :data:`bench.harness.QUICK_SIZES`, 1k, and fewer recalls;
``--tiny``: :data:`bench.harness.TINY_SIZES`; the store is the one ``bench_recall_scale``
measures, filled by :func:`bench.populate.populate_bulk` once per ``run_all`` through
:func:`bench.harness.shared_episode_store`, with the same 50k fallback when 100k would take
too long to populate). Its resident set (``VmRSS``) and peak (``VmHWM``) are read from
``/proc/<pid>/status``:

* ``after_start``: the server answers ``/healthz`` and nothing has been asked yet;
* ``after_warm_recalls``: after warm-up recalls through ``POST /api/v1/recall`` (the model,
  the vector matrix and the page cache of the index are loaded);
* ``after_measured_recalls``: after the measured recalls below.

Beside it, the physical references: the size of the vectors themselves (episodes x 384 x 4
bytes, what any in-memory brute-force index must hold) and of the store's files. The
recalls are timed too (``recall_http``: one request whole, from a client on the same machine,
scoped to one repository, limit 8), beside ``GET /healthz`` as the HTTP floor.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench import harness
from bench.common import FleetData, latency_summary, machine_line, timed_ms

FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))
SIZE = 100_000
WARM_RECALLS = 30
#: Runs recorded through the daemon after its recalls: recording embeds documents, which
#: loads the document model beside the query copy (``after_ingest``).
INGEST = 20
RECALLS = 100
#: ``--quick``: recalls before the memory reading, and recalls timed.
QUICK_WARM_RECALLS = 10
QUICK_RECALLS = 30
DIM = 384


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_memory_mib(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of a process, in MiB, from ``/proc/<pid>/status``."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key.lower()] = round(int(value.split()[0]) / 1024, 1)
    if "vmrss" not in out:
        raise RuntimeError(f"no VmRSS in /proc/{pid}/status")
    return out


def api_headers(home: Path) -> dict[str, str]:
    """The Authorization header of the daemon's control token (written at its start), or
    none when this version's API takes no token."""
    path = home / "control.token"
    if not path.is_file():
        return {}
    return {"Authorization": f"Bearer {path.read_text(encoding='utf-8').strip()}"}


def _wait_healthy(client: httpx.Client, proc: subprocess.Popen[bytes]) -> float:
    started = time.perf_counter()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"fleetmem serve exited with {proc.returncode}")
        try:
            if client.get("/healthz").status_code == 200:
                return time.perf_counter() - started
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("fleetmem serve did not answer /healthz within 120 s")


def _store(home: Path, planned: int, real_vectors: int, forced: bool) -> dict[str, Any]:
    from bench.populate import FALLBACK_LARGE, populate_bulk

    stop_at = FALLBACK_LARGE if planned > FALLBACK_LARGE and not forced else None
    real: list[Any] = []

    def build(h: Path) -> dict[str, Any]:
        return populate_bulk(h, FleetData(), planned, real, real_vectors, stop_at=stop_at)

    return harness.shared_episode_store(home, planned, real_vectors, build, stop_at=stop_at)


def measure(
    home: Path,
    episodes: int,
    warm: int,
    n: int,
    *,
    idle_s: float = 0.0,
    extra_env: dict[str, str] | None = None,
    ingest: int = 0,
) -> dict[str, Any]:
    """Start ``fleetmem serve`` over ``home``, recall through HTTP, read its memory; with
    ``ingest``, then record that many new runs through ``POST /api/v1/runs`` (each embeds
    its episode) and read it again (``after_ingest``); with ``idle_s``, read it again after
    that long without a request (``after_idle``: what the daemon gives back when quiet, such
    as the token counter's vocabulary and the document model). ``extra_env`` is set for the
    daemon on top of this process's environment (without its FLEETMEM_*)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env.update(extra_env or {})
    env["FLEETMEM_HOME"] = str(home)
    env["HF_HUB_OFFLINE"] = "1"
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen(
        [FLEETMEM, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    queries = FleetData().queries(warm + n)
    out: dict[str, Any] = {"episodes": episodes, "pid_command": "fleetmem serve"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            out["start_s"] = round(_wait_healthy(client, proc), 2)
            out["after_start"] = proc_memory_mib(proc.pid)
            client.headers.update(api_headers(home))

            def recall(query: str, repo: str) -> None:
                body = {"query": query, "repo": repo, "limit": 8}
                client.post("/api/v1/recall", json=body).raise_for_status()

            for query, repo in queries[:warm]:
                recall(query, repo.key)
            out["after_warm_recalls"] = proc_memory_mib(proc.pid)
            samples = [timed_ms(lambda q=q, r=r.key: recall(q, r))[0] for q, r in queries[warm:]]
            out["after_measured_recalls"] = proc_memory_mib(proc.pid)
            health = [
                timed_ms(lambda: client.get("/healthz").raise_for_status())[0] for _ in range(n)
            ]
            out["recall_http"] = latency_summary(samples)
            out["healthz"] = latency_summary(health)
            out["queries_by"] = client.get("/healthz").json().get("embedder", {}).get("queries")
            if ingest:
                # Run ids past the store's own, so each one is new and embeds its episode.
                records = FleetData().records(ingest, start=episodes + 1_000_000)
                written = [
                    timed_ms(lambda r=r: client.post("/api/v1/runs", json=r).raise_for_status())[0]
                    for r in records
                ]
                out["ingest_http"] = latency_summary(written)
                out["after_ingest"] = proc_memory_mib(proc.pid)
            if idle_s > 0:
                time.sleep(idle_s)
                out["after_idle"] = proc_memory_mib(proc.pid) | {"idle_s": idle_s}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
    store_bytes = sum(p.stat().st_size for p in home.glob("fleetmem.db*"))
    out["reference"] = {
        "vectors_mib": round(episodes * DIM * 4 / 2**20, 1),
        # What the SQLite store holds them as in memory: int8 rows and a float32 scale each.
        "int8_rows_mib": round(episodes * (DIM + 4) / 2**20, 1),
        "store_files_mib": round(store_bytes / 2**20, 1),
    }
    out["loadavg"] = list(os.getloadavg())
    return out


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """The daemon's memory over the run's largest store; see the module docstring."""
    from bench.populate import LARGE_ENV, REAL_VECTORS

    forced = bool(os.environ.get(LARGE_ENV)) and not (quick or tiny)
    if tiny:
        planned, real_vectors = harness.TINY_SIZES[-1], harness.TINY_REAL_VECTORS
        warm, n = 3, harness.TINY_QUERIES
    elif quick:
        planned, real_vectors = harness.QUICK_SIZES[0], harness.QUICK_REAL_VECTORS
        warm, n = QUICK_WARM_RECALLS, QUICK_RECALLS
    else:
        planned = int(os.environ[LARGE_ENV]) if forced else SIZE
        real_vectors, warm, n = REAL_VECTORS, WARM_RECALLS, RECALLS
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-daemon-"))
    try:
        home = work / "home"
        stats = _store(home, planned, real_vectors, forced)
        episodes = int(stats["records"])
        notes = []
        if episodes != planned:
            notes.append(
                f"the store holds {episodes:,} episodes, not {planned:,}: populating"
                " 100k would exceed the benchmark's population budget (see recall_scale)"
            )
        harness.progress(f"daemon: fleetmem serve over {episodes:,} episodes")
        result = measure(home, episodes, warm, n, ingest=3 if tiny or quick else INGEST)
        result["populate"] = {
            "records": episodes,
            "seconds": stats["seconds"],
            "shared_store_reused": stats.get("reused", False),
        }
        result["notes"] = notes
        result["target"] = "none set by the issues; reported for issue 3"
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarize(result: dict[str, Any]) -> str:
    lines = [machine_line(result["machine"])] if "machine" in result else []
    ref = result["reference"]
    lines.append(
        f"  fleetmem serve over {result['episodes']:,} episodes: RSS"
        f" {result['after_start']['vmrss']:.0f} MiB at start,"
        f" {result['after_warm_recalls']['vmrss']:.0f} MiB after warm-up recalls,"
        f" {result['after_measured_recalls']['vmrss']:.0f} MiB after the measured ones"
        f" (peak {result['after_measured_recalls'].get('vmhwm', float('nan')):.0f} MiB);"
        f" vectors alone {ref['vectors_mib']} MiB, store files {ref['store_files_mib']} MiB"
    )
    r, h = result["recall_http"], result["healthz"]
    lines.append(
        f"  recall over HTTP p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms"
        f" (GET /healthz p50 {h['p50_ms']:.2f} ms)"
    )
    lines.extend(f"  note: {n}" for n in result.get("notes", []))
    return "\n".join(lines)
