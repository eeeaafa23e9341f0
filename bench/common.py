"""Shared pieces of the benchmarks: the machine they ran on, timing, synthetic fleet data.

Nothing here touches the network or downloads anything. Synthetic data is a pure function of
its seed, so two runs of a benchmark measure the same records and the same queries.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.fleet import (
    AGENTS,
    CAUSES,
    DEPENDENCIES,
    EPOCH,
    ERROR_CLASSES,
    FEATURES,
    FIXES,
    MODULES,
    OBSTACLES,
    OUTCOMES,
    REPOS,
    SHARED_FILES,
    SYMPTOMS,
    TEST_CMDS,
    FleetData,
    Repo,
)

#: The synthetic fleet lives in bench/fleet.py; its names are re-exported from here.
__all__ = [
    "AGENTS",
    "CAUSES",
    "DEPENDENCIES",
    "EPOCH",
    "ERROR_CLASSES",
    "FEATURES",
    "FIXES",
    "MODULES",
    "OBSTACLES",
    "OUTCOMES",
    "REPOS",
    "RESULTS",
    "RESULTS_ENV",
    "ROOT",
    "SHARED_FILES",
    "SYMPTOMS",
    "TEST_CMDS",
    "FleetData",
    "Repo",
    "latency_summary",
    "machine",
    "machine_line",
    "percentile",
    "results_dir",
    "rss_mib",
    "timed_ms",
    "write_result",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


# ---- the machine ---------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _git_commit() -> str | None:
    """The commit measured, with ``+dirty`` when src/ has uncommitted changes."""
    commit = _git("rev-parse", "--short", "HEAD")
    if not commit:
        return None
    return commit + ("+dirty" if _git("status", "--porcelain", "--", "src") else "")


def compile_sources() -> None:
    """Byte-compile fleetmem's modules, as installing a wheel does. Where
    PYTHONDONTWRITEBYTECODE is set (this machine sets it) nothing else writes
    ``__pycache__``, and every fleetmem process a benchmark times would compile each module
    edited since the last compilation again (46 of them once here: 60 ms per process)."""
    import compileall

    import fleetmem

    compileall.compile_dir(str(Path(fleetmem.__file__).parent), quiet=1)
    warm_user_caches()


def warm_user_caches() -> None:
    """Fill the user's tables of compiled dataclass methods and regular expressions
    (:mod:`fleetmem.dataclass_cache`, :mod:`fleetmem.pattern_cache`) as a user's first fleetmem
    commands do: a child imports every fleetmem module and compiles its patterns, with
    bytecode writing allowed. Hook processes the benchmarks start must then point
    ``XDG_CACHE_HOME`` here (:func:`bench.bench_hooks._env`), since they run with a
    ``HOME`` of their own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    script = (
        "import importlib, pkgutil, fleetmem\n"
        "for m in pkgutil.walk_packages(fleetmem.__path__, 'fleetmem.', onerror=print):\n"
        "    if m.name.endswith('__main__'):\n"
        "        continue  # runs the command line\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception:\n"
        "        pass\n"
        "from fleetmem.core import lazy_pattern\n"
        "lazy_pattern.compile_all()  # kept by fleetmem.pattern_cache at exit\n"
    )
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True)


def machine() -> dict[str, Any]:
    """What the figures were measured on; written into every results file."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 1
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_gib": _mem_total_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "onnxruntime": _version("onnxruntime"),
        "sqlite": sqlite3.sqlite_version,
        "query_embedding": query_path(),
        "fleetmem": _version("fleetmem"),
        "commit": _git_commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        # Other work on a shared machine shows up here; read the figures with it in mind.
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


def query_path() -> str:
    """What the offline model embeds queries with here: its int8 copy once this machine has
    made one (fleetmem.embed.query_model), else the shipped model."""
    try:
        from fleetmem.embed import local, query_model
    except ImportError:
        return "unknown"
    if not query_model.wanted():
        return "shipped model (FLEETMEM_QUERY_MODEL=full)"
    ready = query_model.ready(query_model.cache_file(local.MODEL_SHA256))
    return "int8 copy" if ready else "shipped model (no int8 copy made)"


def prepare_query_copy() -> str:
    """Make this machine's int8 query copy if it is missing (a child process does the work,
    as in a daemon), so every benchmark measures queries as a running daemon embeds them."""
    try:
        from fleetmem.embed import local, query_model
    except ImportError:
        return "unknown"
    if query_model.wanted():
        query_model.prepare(local._model_file(), query_model.cache_file(local.MODEL_SHA256))
    return query_path()


def machine_line(m: dict[str, Any]) -> str:
    """One line for summaries and docs."""
    return (
        f"{m.get('cpu')}, {m.get('cores_usable')} cores, {m.get('memory_gib')} GiB, "
        f"Python {m.get('python')}, numpy {m.get('numpy')}, onnxruntime {m.get('onnxruntime')}, "
        f"SQLite {m.get('sqlite')}, {m.get('date')}"
    )


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays (and anything else with ``tolist``/``item``) as plain JSON."""
    for attr in ("tolist", "item"):
        if hasattr(value, attr):
            return getattr(value, attr)()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


#: Set by ``run_all --results-dir`` (and by ``--tiny``) so results land outside bench/results.
RESULTS_ENV = "FLEETMEM_BENCH_RESULTS"


def results_dir() -> Path:
    """Where results are written: ``$FLEETMEM_BENCH_RESULTS`` when set, else bench/results."""
    chosen = os.environ.get(RESULTS_ENV)
    return Path(chosen) if chosen else RESULTS


def write_result(
    name: str, result: dict[str, Any], m: dict[str, Any] | None = None, *, suffix: str = ""
) -> Path:
    """Write ``<results dir>/<name><suffix>.json``: benchmark name, machine block, figures."""
    directory = results_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}{suffix}.json"
    body = {"benchmark": name, "machine": m or machine(), **result}
    text = json.dumps(body, indent=2, ensure_ascii=False, default=_jsonable)
    path.write_text(text + "\n", encoding="utf-8")
    return path


# ---- timing --------------------------------------------------------------------------
def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), nearest rank: a value that was actually observed."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float | int]:
    """p50/p95/p99/mean/max of millisecond samples, rounded for reading."""
    n = len(samples_ms)
    return {
        "n": n,
        "p50_ms": round(percentile(samples_ms, 50), 3),
        "p95_ms": round(percentile(samples_ms, 95), 3),
        "p99_ms": round(percentile(samples_ms, 99), 3),
        "mean_ms": round(sum(samples_ms) / n, 3),
        "max_ms": round(max(samples_ms), 3),
    }


def timed_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(milliseconds, result) of one call, on the monotonic high-resolution clock."""
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000.0, out


def rss_mib() -> float:
    """This process's resident set size (VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("VmRSS not found in /proc/self/status")
