"""Re-embedding after an embedder switch, and how far it has got.

Vectors are stored under the ``model_id`` of the embedder that made them, and recall only
compares a query with vectors of its own model. So when ``[model_api] embedding_model``
changes (the daemon picks it up at its next start), every episode and fact lacks a vector in
the new space. The daemon's background jobs fill them in, a time budget per tick, newest
first, while recall stays available: an item that already has a new vector is found by words
and meaning; one that does not is found by its words alone until its turn comes. Old vectors
are not used for queries meanwhile: that would need the old model loaded beside the new one,
doubling memory, to embed each query twice.

Progress is shown by ``fleetmem status`` (the ``reembed`` block) and ``fleetmem vectors``,
which can also run the work in the foreground.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from fleetmem.core.facts import LIVE
from fleetmem.embed.base import Embedder

#: Episodes embedded per step; small enough that a step between two recalls stays short.
EPISODE_STEP = 32
#: Facts embedded per step (one embed call per step).
FACT_STEP = 128
#: How long one background tick may spend re-embedding before it yields to other work.
TICK_BUDGET_S = 5.0


class Backfills(Protocol):
    """One step of each kind of re-embedding; each returns how many items it embedded."""

    def episodes(self, limit: int) -> int: ...
    def facts(self, limit: int) -> int: ...


class EpisodeBackfill(Protocol):
    def backfill_vectors(self, limit: int = ...) -> int: ...


class ReembedSteps:
    """The two re-embedding steps over a memory service and (optionally) the facts."""

    def __init__(self, memory: EpisodeBackfill, facts: object) -> None:
        self._memory = memory
        self._facts_backfill = getattr(facts, "backfill", None)

    def episodes(self, limit: int) -> int:
        return self._memory.backfill_vectors(limit)

    def facts(self, limit: int) -> int:
        if not callable(self._facts_backfill):
            return 0
        fixed: int = self._facts_backfill(limit)
        return fixed


def vector_progress(store: object, embedder: Embedder | None) -> dict[str, Any]:
    """How many episodes and facts have a vector of the active model, JSON-ready.

    ``complete`` is true when none is missing; ``percent`` covers both kinds together. With no
    embedder there is nothing to re-embed and the block says so (``model`` is ``None``).
    """
    if embedder is None:
        return {"model": None, "complete": True, "percent": 100.0, "episodes": None, "facts": None}
    model = embedder.model_id
    episodes = _pair(getattr(store, "builtin_vector_progress", None), model)
    facts = _pair(getattr(store, "fact_vector_progress", None), model, sorted(LIVE))
    total = sum(p["total"] for p in (episodes, facts) if p is not None)
    done = sum(p["done"] for p in (episodes, facts) if p is not None)
    return {
        "model": model,
        "complete": done >= total,
        "percent": 100.0 if total == 0 else round(100.0 * done / total, 1),
        "episodes": episodes,
        "facts": facts,
    }


def reembed_line(progress: dict[str, Any]) -> str:
    """One line for people, e.g. ``1,204 of 10,000 episodes, 0 of 512 facts (12.0 %)``."""
    if progress.get("model") is None:
        return "no embedder: nothing to embed"
    parts = []
    for kind in ("episodes", "facts"):
        pair = progress.get(kind)
        if pair is not None:
            parts.append(f"{pair['done']:,} of {pair['total']:,} {kind}")
    state = "complete" if progress.get("complete") else "in progress"
    return f"{', '.join(parts)} ({progress.get('percent', 0.0)} %, {state})"


def _pair(count: Any, *args: Any) -> dict[str, int] | None:
    if not callable(count):
        return None
    total, done = count(*args)
    return {"total": int(total), "done": int(done), "missing": int(total) - int(done)}


def run_reembed(
    steps: Backfills,
    *,
    budget_s: float | None = TICK_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, int]:
    """Embed missing episodes and facts in small steps until none is left or ``budget_s``
    has passed (``None``: until done). A step that embeds nothing (the embedder is down, or
    nothing is missing) ends that kind for this call; returns the counts embedded."""
    start = clock()
    done = {"episodes": 0, "facts": 0}
    active = {"episodes": True, "facts": True}
    while any(active.values()):
        for kind, step, limit in (
            ("episodes", steps.episodes, EPISODE_STEP),
            ("facts", steps.facts, FACT_STEP),
        ):
            if not active[kind]:
                continue
            fixed = step(limit)
            done[kind] += fixed
            if fixed == 0:
                active[kind] = False
        if budget_s is not None and clock() - start >= budget_s:
            break
    return done
