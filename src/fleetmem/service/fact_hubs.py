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

# The neighbour arithmetic is shared with episode recall (providers/episode_hubs.py).
from fleetmem.embed.neighbours import NEIGHBOURS, neighbour_similarity

__all__ = ["HUB_WEIGHT", "NEIGHBOURS", "NeighbourCache", "adjusted", "neighbour_similarity"]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float32]
else:
    from fleetmem.lazy_numpy import np

    Floats = object

#: How much of a fact's neighbour similarity above the workspace's mean is taken off its
#: cosine (and how much below it is added).
HUB_WEIGHT = 0.4


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
