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
else:
    from fleetmem.lazy_numpy import np

    Floats = object

#: How many nearest other rows a row's neighbour similarity averages.
NEIGHBOURS = 3
#: Past this many rows, neighbours are looked for among an evenly spaced sample of this
#: many, so the one-off cost grows linearly (60 ms at 2,000 facts, 0.5 s at 20,000); a
#: row's neighbour similarity is then a little lower for every row alike, and only its
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
            sims[rows - start, rows] = -np.inf  # a row is not its own neighbour
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
