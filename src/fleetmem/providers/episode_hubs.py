"""Hubs among the episodes a recall searches: how much of each candidate's cosine to take off
(or give back) for how close it sits to its neighbours.

A repository's routine runs are written alike (one agent's template, one build's log lines),
so the small sentence model puts them close to each other and to any question in their
vocabulary: such a *hub* scores high for questions it does not answer, while the run a
paraphrased question is after, often worded unlike the rest, is outranked. Facts search
corrects for this (:mod:`fleetmem.service.fact_hubs`); recall does the same before its score
fusion: each candidate's *neighbour similarity* is its mean cosine to its
:data:`~fleetmem.embed.neighbours.NEIGHBOURS` nearest episodes among an evenly spaced sample
of at most :data:`SAMPLE` of the searched scopes' episodes, and the fusion reads

    cosine - hub_weight * (neighbour similarity - the sample's own mean)

(``RankingOptions.hub_weight``). Whether a recall answers at all is still decided on the plain
cosines (the question-level floor), so the correction reorders and never makes an unrelated
store answer.

Costs, so recall stays within its latency budget: the sample is fetched once per set of
scopes and fetched again only when the scopes' episode count has moved by more than a tenth
(checked at most every :data:`RECHECK_S` seconds; a forgotten episode leaves the sample at
that check); a candidate's neighbour similarity is computed once per sample (one matrix
product of the new candidates against the sample, about 1.5 ms for 100 candidates) and
kept.

Chosen on the fusion laboratory's development halves and confirmed on its confirmation
halves (bench/fusion_lab.py, docs/benchmarks.md "episode hubs").
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fleetmem.embed.neighbours import NEIGHBOURS, neighbour_similarity

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from fleetmem.store.base import Store

    Floats = npt.NDArray[np.float32]
else:
    from fleetmem.lazy_numpy import np

    Floats = object

#: Most episodes of a set of scopes that neighbours are looked for among: exact up to this
#: many, an evenly spaced sample beyond (every candidate's similarity is then a little lower
#: alike, and only its difference from the sample's mean is used).
SAMPLE = 1024
#: Seconds between two checks of whether a set of scopes' episode count has moved.
RECHECK_S = 30.0
#: The count must move by more than this share (and more than :data:`MIN_CHANGE`) for the
#: sample to be fetched again.
GROWTH = 0.1
MIN_CHANGE = 16
#: Sets of scopes kept (a sample is at most SAMPLE x dim floats: 1.5 MiB at 384 dimensions).
MAX_SAMPLES = 16
#: Candidates' neighbour similarities kept per sample before the oldest are dropped.
MAX_CACHED = 100_000


@dataclass(slots=True)
class _Sample:
    count: int
    checked: float
    columns: dict[str, int]
    matrix: Floats | None
    mean: float
    cached: OrderedDict[str, float] = field(default_factory=OrderedDict)


class EpisodeHubs:
    """Each candidate's neighbour similarity less its mean, per set of scopes and model."""

    def __init__(
        self,
        store: Store,
        *,
        sample: int = SAMPLE,
        recheck_s: float = RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._size = sample
        self._recheck_s = recheck_s
        self._clock = clock
        self._lock = threading.Lock()
        self._samples: OrderedDict[tuple[str, tuple[str, ...]], _Sample] = OrderedDict()

    def offsets(self, ids: Sequence[str], scopes: Sequence[str], model_id: str) -> dict[str, float]:
        """Neighbour similarity less the sample's mean, for each of ``ids`` with a stored
        vector (none when the scopes hold too few episodes to have neighbours)."""
        if not ids or not scopes:
            return {}
        sample = self._sample(tuple(sorted(set(scopes))), model_id)
        if sample.matrix is None:
            return {}
        with self._lock:
            missing = [i for i in dict.fromkeys(ids) if i not in sample.cached]
        if missing:
            self._compute(sample, missing, model_id)
        with self._lock:
            return {i: sample.cached[i] for i in ids if i in sample.cached}

    def _compute(self, sample: _Sample, ids: list[str], model_id: str) -> None:
        assert sample.matrix is not None
        dim = int(sample.matrix.shape[1])
        stored = self._store.builtin_vectors_for(ids, model_id)
        found = [i for i in ids if i in stored and np.asarray(stored[i]).shape == (dim,)]
        if not found:
            return
        rows = np.stack([np.asarray(stored[i], dtype=np.float32) for i in found])
        sims = rows @ sample.matrix.T
        for r, eid in enumerate(found):
            column = sample.columns.get(eid)
            if column is not None:
                sims[r, column] = -np.inf  # an episode is not its own neighbour
        sims[~np.isfinite(sims)] = -np.inf
        take = min(NEIGHBOURS, sims.shape[1] - 1)
        top = np.partition(sims, sims.shape[1] - take, axis=1)[:, -take:]
        with np.errstate(invalid="ignore"):
            values = top.mean(axis=1)
        with self._lock:
            for eid, value in zip(found, values, strict=True):
                # A vector that is not finite is nobody's hub: no correction either way.
                sample.cached[eid] = float(value) - sample.mean if np.isfinite(value) else 0.0
            while len(sample.cached) > MAX_CACHED:
                sample.cached.popitem(last=False)

    def _sample(self, scopes: tuple[str, ...], model_id: str) -> _Sample:
        key = (model_id, scopes)
        now = self._clock()
        with self._lock:
            current = self._samples.get(key)
            if current is not None:
                self._samples.move_to_end(key)
                if now - current.checked < self._recheck_s:
                    return current
        count = self._store.builtin_vector_count(scopes, model_id)
        if current is not None and abs(count - current.count) <= max(
            MIN_CHANGE, GROWTH * current.count
        ):
            with self._lock:
                current.checked = now
            return current
        fresh = self._fetch(scopes, model_id, count, now)
        with self._lock:
            self._samples[key] = fresh
            self._samples.move_to_end(key)
            while len(self._samples) > MAX_SAMPLES:
                self._samples.popitem(last=False)
        return fresh

    def _fetch(self, scopes: tuple[str, ...], model_id: str, count: int, now: float) -> _Sample:
        pairs = self._store.builtin_vector_sample(scopes, model_id, self._size)
        dims = {int(np.asarray(v).shape[0]) for _, v in pairs}
        if len(pairs) <= NEIGHBOURS or len(dims) != 1:
            # Too few episodes to speak of neighbours (or a model's vectors of two sizes,
            # which one model id cannot have): no correction.
            return _Sample(count=count, checked=now, columns={}, matrix=None, mean=0.0)
        raw = np.stack([np.asarray(v, dtype=np.float32) for _, v in pairs])
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        own = neighbour_similarity(matrix)
        mean = float(own.mean()) if np.isfinite(own).all() else 0.0
        return _Sample(
            count=count,
            checked=now,
            columns={eid: n for n, (eid, _) in enumerate(pairs)},
            matrix=matrix,
            mean=mean,
        )
