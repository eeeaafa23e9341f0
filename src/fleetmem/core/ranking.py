"""Fusion of per-channel rankings into one list, and how far an embedder's cosine can be trusted.

The store answers each channel (full text, vectors) with its own ranked list; this module
decides the final order. Two fusions live here:

* :func:`reciprocal_rank_fusion`: score(id) = sum of weight / (k + rank). Kept for the
  benchmarks' plain-RRF baseline and for ``RankingOptions(fusion="rrf")``. With it a hit found
  by one channel alone is capped by that channel's weight / (k + 1): with the cosine channel
  at half weight and k = 10, a paraphrase found only by meaning scored below any word match
  ranked 1 to 11 and could never reach the top 10.
* :func:`score_fusion`, the default: every channel contributes a number between 0 and its
  weight. A ranked channel (BM25, the cue channels) gives ``(k + 1) / (k + rank)``: 1 at the
  top, half at rank k + 2. The vector channel gives the cosine's *strength* for the active
  embedder (:class:`Calibration`): 0 at or below the embedder's floor of unrelated text, 1 at
  the cosine of a clear paraphrase. A strong meaning match therefore outranks a weak word
  match, and the fused score means the same thing whichever scopes were searched, so answers
  of several provider calls (one per two scopes) can be merged by score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Ranked:
    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """How one embedder's cosine similarities read, measured on development data.

    ``floor``: at or below it, two texts are unrelated (most questions about something the
    store does not hold score about this much against their best item); recall shows no item
    whose cosine with the query is at or below it, whatever words it shares. ``full``: the
    vector channel's strength rises linearly from the floor to 1 here. ``words_full``: a word
    match counts in full only from this cosine up, and in proportion from the floor to it: a
    run that shares a word with the query but not its meaning is a weak match.
    """

    floor: float
    full: float
    words_full: float

    def __post_init__(self) -> None:
        if not -1.0 <= self.floor < min(self.full, self.words_full) <= 1.0:
            raise ValueError(f"calibration needs -1 <= floor < full, words_full <= 1: {self}")

    def strength(self, cosine: float) -> float:
        """0 at or below the floor, rising linearly to 1 at ``full`` and staying there."""
        return min(1.0, max(0.0, (cosine - self.floor) / (self.full - self.floor)))

    def word_share(self, cosine: float) -> float:
        """The share of a word match's rank score kept at ``cosine``: 0 at the floor, 1 from
        ``words_full``."""
        return min(1.0, max(0.0, (cosine - self.floor) / (self.words_full - self.floor)))


#: Episode-recall calibration per embedder model id (``Embedder.model_id``), chosen on the
#: channel lists of bench/recall_sets.py's development runs and of LoCoMo, and confirmed on
#: the confirmation runs through the product (bench/bench_recall_sets.py --grid; docs/episodes.md
#: "Relevance floor"). ADD ANOTHER EMBEDDER HERE: its own row, measured the same way (its
#: cosines sit on another scale, so MiniLM's figures mean nothing for it): the floor is the
#: highest cosine that keeps about 98% of the dev targets (the dev unrelated questions' best
#: cosines sit around it), ``words_full`` and ``full`` the grid's best on dev.
CALIBRATIONS: Mapping[str, Calibration] = {
    "local:all-MiniLM-L6-v2-onnx-int8": Calibration(floor=0.2, full=0.8, words_full=0.45),
}
#: For an embedder nobody measured: the seed's run-recall threshold (0.72, written for a
#: large embedding model) as the floor, so an uncalibrated model errs on answering less.
UNCALIBRATED = Calibration(floor=0.72, full=0.95, words_full=0.85)


def calibration_for(model_id: str) -> Calibration:
    """The measured calibration of ``model_id``, or :data:`UNCALIBRATED`."""
    return CALIBRATIONS.get(model_id, UNCALIBRATED)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    recency: Mapping[str, float],
    boosted: frozenset[str] = frozenset(),
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
    bonus: Mapping[str, float] | None = None,
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
    _add_bonus(scores, bonus)
    boost = min(weights, default=1.0) / (k + 1)
    return _ordered(scores, boosted, boost, recency, limit)


def rank_share(rank: int, k: int) -> float:
    """A ranked channel's contribution at ``rank`` (1-based): 1 at the top, (k+1)/(k+rank)."""
    return (k + 1) / (k + rank)


def score_fusion(
    rankings: Sequence[Sequence[str]],
    weights: Sequence[float],
    *,
    similar: Mapping[str, float] | None = None,
    similar_weight: float = 0.0,
    calibration: Calibration | None = None,
    recency: Mapping[str, float],
    boosted: frozenset[str] = frozenset(),
    k: int = 10,
    limit: int | None = None,
    bonus: Mapping[str, float] | None = None,
    gate_words: bool = True,
) -> list[Ranked]:
    """Fuse ranked lists and cosine similarities on one scale (see the module docstring).

    score(id) = sum over ``rankings`` of weight * (k + 1) / (k + rank)
              + ``similar_weight`` * calibration.strength(cosine of id),
    where the first ranking (the words) is scaled by calibration.word_share(cosine of id)
    when the id's cosine is known, and an id whose cosine is at or below the floor is left
    out (the relevance floor). With ``gate_words`` False, word matches keep their whole rank
    score and only items no word matched are held to the floor.

    ``similar`` maps ids to their cosine with the query (any id may be missing: it then
    contributes nothing there). An id whose total is 0 (say, only a cosine at or below the
    floor) is left out: nothing points at it. ``bonus`` adds a fixed amount to ids already
    scored or new (the follow-up cue's inherited share of its leader). ``boosted`` ids get
    one top rank of the lightest weight, as in :func:`reciprocal_rank_fusion`. Ties break by
    recency, then id.
    """
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    if similar and calibration is None:
        raise ValueError("cosine similarities need the embedder's calibration")
    cosine_of = similar or {}
    gate = calibration if similar and calibration is not None else None
    scores: dict[str, float] = {}
    for n, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        for rank, item in enumerate(ranking, start=1):
            share = weight * rank_share(rank, k)
            if n == 0 and gate is not None and gate_words and item in cosine_of:
                share *= gate.word_share(cosine_of[item])
            scores[item] = scores.get(item, 0.0) + share
    if similar and calibration is not None and similar_weight > 0:
        for item, cosine in similar.items():
            scores[item] = scores.get(item, 0.0) + similar_weight * calibration.strength(cosine)
    if gate is not None:
        # The relevance floor: nothing whose meaning is unrelated, whatever else points at it.
        worded = set(rankings[0]) if rankings and not gate_words else set()
        for item in [i for i in scores if i in cosine_of and cosine_of[i] <= gate.floor]:
            if item not in worded:
                del scores[item]
    _add_bonus(scores, bonus)
    scores = {item: s for item, s in scores.items() if s > 0.0}
    lightest = min([*weights, similar_weight] if similar else weights, default=1.0)
    return _ordered(scores, boosted, lightest, recency, limit)


def _add_bonus(scores: dict[str, float], bonus: Mapping[str, float] | None) -> None:
    for item, extra in (bonus or {}).items():
        scores[item] = scores.get(item, 0.0) + extra


def _ordered(
    scores: dict[str, float],
    boosted: frozenset[str],
    boost: float,
    recency: Mapping[str, float],
    limit: int | None,
) -> list[Ranked]:
    for item in boosted:
        if item in scores:
            scores[item] += boost
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], -recency.get(kv[0], 0.0), kv[0]))
    if limit is not None:
        ordered = ordered[:limit]
    return [Ranked(id=i, score=s) for i, s in ordered]
