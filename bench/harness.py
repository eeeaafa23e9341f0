"""What the benchmark modules share while one ``run_all`` is running.

* **Progress lines.** A full run takes tens of minutes; :func:`progress` prefixes each line
  with the minutes and seconds since the run started (``run_all`` exports its start time, so
  child processes print on the same clock).
* **Populated stores, built once.** Filling a store of 100k episodes is the longest step of
  the whole run. :func:`shared_episode_store` keeps every populated store in a directory that
  ``run_all`` creates for the run (``$FLEETMEM_BENCH_STORES``) and hands each later consumer
  its own copy, so ``recall_scale``, ``mcp_recall``, ``daemon`` and ``provider_path`` measure
  the same store without filling it again and without seeing each other's writes. Without
  the variable (a module run on its own) every call simply builds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

STORES_ENV = "FLEETMEM_BENCH_STORES"
STARTED_ENV = "FLEETMEM_BENCH_STARTED"
STAMP = "populate.json"

_started = time.time()


def run_started() -> float:
    """Epoch seconds at which this benchmark run started (this process, if not exported)."""
    raw = os.environ.get(STARTED_ENV)
    try:
        return float(raw) if raw else _started
    except ValueError:
        return _started


def progress(message: str) -> None:
    """One progress line on stderr, stamped with the run's elapsed time."""
    elapsed = max(0, int(time.time() - run_started()))
    print(f"   [{elapsed // 60:02d}:{elapsed % 60:02d}] {message}", file=sys.stderr, flush=True)


def store_key(planned: int, real_vectors: int, stop_at: int | None) -> str:
    """The name of a populated store: everything that decides its contents."""
    return f"episodes-{planned}-vectors-{real_vectors}-stop-{stop_at or 'none'}"


def copy_store(source: Path, dest: Path) -> None:
    """Copy a closed store's home (database, WAL if any, config) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.name == STAMP:
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, dest / item.name)


def shared_episode_store(
    dest: Path,
    planned: int,
    real_vectors: int,
    build: Callable[[Path], dict[str, Any]],
    *,
    stop_at: int | None = None,
) -> dict[str, Any]:
    """Make ``dest`` a populated store of ``planned`` episodes; return its population stats.

    ``build(home)`` must fill ``home`` and close it. When ``$FLEETMEM_BENCH_STORES`` is set,
    the first call for a key builds into ``dest`` and keeps a copy; later calls copy that
    store into their ``dest`` and return the original stats with ``reused: true``.
    """
    cache_root = os.environ.get(STORES_ENV)
    if not cache_root:
        return build(dest)
    cached = Path(cache_root) / store_key(planned, real_vectors, stop_at)
    stamp = cached / STAMP
    if stamp.is_file():
        progress(f"reusing the populated store of {planned:,} episodes")
        started = time.perf_counter()
        copy_store(cached, dest)
        stats: dict[str, Any] = json.loads(stamp.read_text(encoding="utf-8"))
        stats["reused"] = True
        stats["copy_s"] = round(time.perf_counter() - started, 1)
        return stats
    progress(f"populating a store of {planned:,} episodes (kept for the other benchmarks)")
    stats = build(dest)
    shutil.rmtree(cached, ignore_errors=True)
    copy_store(dest, cached)
    stamp.write_text(json.dumps(stats, default=str), encoding="utf-8")
    progress(f"populated {stats.get('records', planned):,} episodes")
    return {**stats, "reused": False}


# ---- embedded vectors, once per run ------------------------------------------------------
def _vectors_path(model_id: str) -> Path | None:
    cache_root = os.environ.get(STORES_ENV)
    if not cache_root:
        return None
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)
    return Path(cache_root) / f"vectors-{safe}.npy"


def load_vectors(real: list[Any], want: int, model_id: str) -> int:
    """Extend ``real`` towards ``want`` vectors from the run's cache; how many were added.

    The populated stores all embed the same first records of one deterministic stream, so a
    vector embedded while one benchmark filled its store serves every later one.
    """
    path = _vectors_path(model_id)
    if path is None or not path.is_file() or len(real) >= want:
        return 0
    cached = np.load(path)
    added = list(cached[len(real) : want])
    real.extend(added)
    return len(added)


def save_vectors(real: list[Any], model_id: str) -> None:
    """Keep ``real`` in the run's cache when it holds more vectors than the cache does."""
    path = _vectors_path(model_id)
    if path is None or not real:
        return
    if path.is_file() and len(np.load(path, mmap_mode="r")) >= len(real):
        return
    partial = path.with_suffix(".partial.npy")
    path.parent.mkdir(parents=True, exist_ok=True)  # the variable may name a new directory
    np.save(partial, np.stack(real).astype(np.float32))
    partial.replace(path)


# ---- quick mode -------------------------------------------------------------------------
#: Store sizes of ``--quick`` runs (recall_scale, provider_path; daemon takes the first):
#: enough to catch a regression and show the curve's slope in well under two minutes.
QUICK_SIZES = (1_000, 3_000)
#: Vectors really embedded in quick stores (episode i beyond them reuses i mod this): one
#: embedding batch, the dearest step of populating on a busy machine. Benchmarks that pass
#: the same number share one populated store per size.
QUICK_REAL_VECTORS = 64


# ---- tiny mode --------------------------------------------------------------------------
#: Store sizes of ``--tiny`` runs: large enough for a top-50 over every vector, small
#: enough that the whole tiny run stays well under a minute.
TINY_SIZES = (50, 100)
#: Vectors really embedded in tiny stores (the rest reuse them, as in full runs): embedding
#: is the dearest step on a busy machine.
TINY_REAL_VECTORS = 8
TINY_QUERIES = 6
TINY_TURNS = 24
TINY_QUESTIONS = 5


def tiny_conversation(conv: Any, turns: int = TINY_TURNS, questions: int = TINY_QUESTIONS) -> Any:
    """The first ``turns`` turns of a LoCoMo conversation and the first ``questions``
    questions whose evidence lies entirely inside them (so every score is computable)."""
    kept = tuple(conv.turns[:turns])
    ids = {t.dia_id for t in kept}
    asked = [q for q in conv.questions if q.evidence and set(q.evidence) <= ids]
    return dataclasses.replace(conv, turns=kept, questions=tuple(asked[:questions]))


def tiny_labelled_set(data: dict[str, Any], facts: int = 24) -> dict[str, Any]:
    """The first ``facts`` facts of the labelled facts set, the queries that target them and
    a few negatives: the same shape as the whole set, a tenth of the embedding work."""
    kept = data["facts"][:facts]
    ids = {f["id"] for f in kept}
    queries = [q for q in data["queries"] if q["fact"] in ids]
    return {**data, "facts": kept, "queries": queries, "negatives": data["negatives"][:4]}
