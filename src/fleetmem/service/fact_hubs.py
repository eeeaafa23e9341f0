"""Hubs among a workspace's facts: the cosine that orders facts search, corrected for how
close each fact sits to its neighbours.

A small sentence model puts facts written alike (one template, one team's phrasing) close
to each other and to almost any question in their vocabulary: such a fact is a *hub*, near
the top for many questions it does not answer, while a fact phrased unlike the rest (often
the one a paraphrased question is after) is outranked. Each fact's *neighbour similarity*
is the mean cosine to its :data:`NEIGHBOURS` nearest other facts; the ranking cosine is

    cosine - HUB_WEIGHT * (neighbour similarity - its mean over the workspace)

(a local scaling in the manner of CSLS, Conneau et al. 2018). Subtracting the workspace's
mean keeps the scale of the plain cosine, so a fact of average density ranks as before.
The adjusted cosine only orders: whether a fact matches by meaning at all is still decided
by its plain cosine against the calibrated threshold (service/fact_base.py), so what is
answered "nothing relevant" does not change.

The constants were chosen on development sets and confirmed on others (bench/fact_hubs_lab.py
and docs/facts.md, "Ranking facts by meaning"): paraphrased questions' top-3 rose from 0.69 to
0.87 on the development sets and from 0.68 to 0.77 on the confirmation sets.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float32]
else:
    from fleetmem.lazy_numpy import np

    Floats = object

#: How many nearest other facts a fact's neighbour similarity averages.
NEIGHBOURS = 3
#: How much of a fact's neighbour similarity above the workspace's mean is taken off its
#: cosine (and how much below it is added).
HUB_WEIGHT = 0.4
#: Past this many facts, neighbours are looked for among an evenly spaced sample of this
#: many, so the one-off cost grows linearly (60 ms at 2,000 facts, 0.5 s at 20,000); a
#: fact's neighbour similarity is then a little lower for every fact alike, and only its
#: difference from the mean is used.
SAMPLE = 2048
#: Rows compared at a time (bounds the temporary matrix to BLOCK x SAMPLE floats).
BLOCK = 512


def neighbour_similarity(matrix: Floats, k: int = NEIGHBOURS) -> Floats:
    """Each row's mean cosine to its ``k`` nearest other rows (rows L2-normalised); 0 for
    every row when there are fewer than two."""
    n = int(matrix.shape[0])
    out = np.zeros(n, dtype=np.float32)
    if n < 2 or k < 1:
        return out
    step = max(1, -(-n // SAMPLE))
    columns = np.arange(0, n, step)
    others = matrix[columns]
    take = min(k, len(columns) - 1) if step == 1 else min(k, len(columns))
    if take < 1:
        return out
    for start in range(0, n, BLOCK):
        sims = matrix[start : start + BLOCK] @ others.T
        # A vector that is not finite (a remote model's bad answer) is nobody's neighbour.
        sims[~np.isfinite(sims)] = -np.inf
        rows = np.arange(start, min(n, start + BLOCK))
        if step == 1:
            sims[rows - start, rows] = -np.inf  # a fact is not its own neighbour
        else:
            sampled = rows[rows % step == 0]
            sims[sampled - start, sampled // step] = -np.inf
        top = np.partition(sims, sims.shape[1] - take, axis=1)[:, -take:]
        with np.errstate(invalid="ignore"):
            out[start : start + len(rows)] = top.mean(axis=1)
    # A row with no finite neighbour gets the others' mean: no correction either way.
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = out[~bad].mean() if (~bad).any() else 0.0
    return out


def adjusted(cosines: Floats, neighbours: Floats, weight: float = HUB_WEIGHT) -> Floats:
    """The ranking cosines: ``cosines`` less ``weight`` times each fact's neighbour similarity
    above the mean (both arrays in the matrix's row order)."""
    if neighbours.size == 0:
        return cosines
    return cosines - np.float32(weight) * (neighbours - np.float32(neighbours.mean()))


class NeighbourCache:
    """The neighbour similarities of the last matrix seen, recomputed when its facts or their
    bodies change (a workspace's matrix is rebuilt by the store only then)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._value: Floats | None = None

    def get(self, ids: tuple[str, ...], hashes: tuple[str, ...], matrix: Floats) -> Floats:
        key = (ids, hashes)
        with self._lock:
            if self._value is not None and self._key == key:
                return self._value
        value = neighbour_similarity(matrix)
        with self._lock:
            self._key, self._value = key, value
        return value
