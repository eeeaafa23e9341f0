"""Each row's neighbour similarity: its mean cosine to its nearest other rows, the measure of
a *hub* (a text close to many others, so near the top for questions it does not answer).

Facts search (service/fact_hubs.py) and episode recall (providers/episode_hubs.py) both
correct their cosines by it, in the manner of CSLS (Conneau et al. 2018).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float32]
    Ints = npt.NDArray[np.int64]
else:
    from fleetmem.lazy_numpy import np

    Floats = object
    Ints = object

#: How many nearest other rows a row's neighbour similarity averages.
NEIGHBOURS = 3
#: Past this many rows, neighbours are looked for among an evenly spaced sample of this
#: many, so the one-off cost grows linearly (60 ms at 2,000 facts, 0.5 s at 20,000); a
#: row's neighbour similarity is then a little lower for every row alike, and only its
#: difference from the mean is used.
SAMPLE = 2048
#: Rows compared at a time (bounds the temporary matrix to BLOCK x SAMPLE floats).
BLOCK = 512


def nearest_mean(rows: Floats, others: Floats, own: Ints, take: int) -> Floats:
    """Each of ``rows``' mean cosine to its ``take`` nearest rows of ``others`` (all unit
    length). ``own[i]`` is the column of ``others`` that is row ``i`` itself, never its own
    neighbour (-1: none). A similarity that is not finite (a remote model's bad answer) is
    nobody's; a row left with no finite neighbour gets a value that is not finite, for the
    caller to settle."""
    n = int(rows.shape[0])
    out = np.empty(n, dtype=np.float32)
    for start in range(0, n, BLOCK):
        sims = rows[start : start + BLOCK] @ others.T
        sims[~np.isfinite(sims)] = -np.inf
        mine = own[start : start + BLOCK]
        itself = np.flatnonzero(mine >= 0)
        sims[itself, mine[itself]] = -np.inf
        top = np.partition(sims, sims.shape[1] - take, axis=1)[:, -take:]
        with np.errstate(invalid="ignore"):
            out[start : start + sims.shape[0]] = top.mean(axis=1)
    return out


def neighbour_similarity(matrix: Floats, k: int = NEIGHBOURS) -> Floats:
    """Each row's mean cosine to its ``k`` nearest other rows (rows L2-normalised); 0 for
    every row when there are fewer than two."""
    n = int(matrix.shape[0])
    out = np.zeros(n, dtype=np.float32)
    if n < 2 or k < 1:
        return out
    step = max(1, -(-n // SAMPLE))
    columns = np.arange(0, n, step)
    take = min(k, len(columns) - 1) if step == 1 else min(k, len(columns))
    if take < 1:
        return out
    every = np.arange(n)
    own = np.where(every % step == 0, every // step, -1)
    out = nearest_mean(matrix, matrix[columns], own, take)
    # A row with no finite neighbour gets the others' mean: no correction either way.
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = out[~bad].mean() if (~bad).any() else 0.0
    return out
