"""Fusion of per-channel rankings into one list.

The store answers each channel (full text, vectors) with its own ranked list; this module
decides the final order. Reciprocal rank fusion needs no score calibration between BM25
and cosine, which are not comparable, and degrades gracefully to one channel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Ranked:
    id: str
    score: float


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    recency: Mapping[str, float],
    boosted: frozenset[str] = frozenset(),
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[Ranked]:
    """Fuse ranked id lists: score(id) = sum over lists of weight / (k + rank).

    ``boosted`` ids (episodes whose files_touched contain a requested path) get one extra
    top-rank contribution of the lightest channel, enough to lift them over an equal
    candidate without letting a path match alone outrank a strong match in both channels
    (with unequal weights a full top-rank of the heaviest channel would). Ties break by recency
    (larger ``recency`` value first), then by id, so the order is total and reproducible.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    boost = min(weights, default=1.0) / (k + 1)
    for item in boosted:
        if item in scores:
            scores[item] += boost
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], -recency.get(kv[0], 0.0), kv[0]))
    if limit is not None:
        ordered = ordered[:limit]
    return [Ranked(id=i, score=s) for i, s in ordered]
