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
  the cosine of a clear paraphrase. The word channel gives each match a share of its weight
  by how much of the question the match covers (:func:`coverage_share`): a question in
  other words than its target shares only common words with the store, covers little of
  them, and is ranked by meaning. Both readings are absolute (a cosine, a share of the
  question's IDF), so answers of several provider calls (one per two scopes) merge by score.
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

    ``floor``: the meaning channel gives nothing at or below it (texts this far apart in the
    model's space are unrelated), and rises linearly to its whole weight at ``full`` (the
    cosine of a clear paraphrase). ``relevant``: the question-level floor. A recall whose
    best cosine is at or below it, and whose best word match covers too little of the
    question (:attr:`RankingOptions.words_answer`), answers "nothing relevant" instead of
    the least unrelated items.
    """

    floor: float
    full: float
    relevant: float

    def __post_init__(self) -> None:
        if not -1.0 <= self.floor < self.full <= 1.0 or not -1.0 <= self.relevant <= 1.0:
            raise ValueError(
                f"calibration needs -1 <= floor < full <= 1, relevant in [-1, 1]: {self}"
            )

    def strength(self, cosine: float) -> float:
        """0 at or below the floor, rising linearly to 1 at ``full`` and staying there."""
        return min(1.0, max(0.0, (cosine - self.floor) / (self.full - self.floor)))


#: Episode-recall calibration per embedder model id (``Embedder.model_id``), read off the
#: development halves of bench/fusion_lab.py's sets (LoCoMo's even conversations, LoCoMo
#: sessions, the coding-agent runs of bench/recall_sets.py) and confirmed on their other
#: halves through the product (docs/episodes.md "Relevance floor"). ADD ANOTHER EMBEDDER
#: HERE: its own row, measured the same way (its cosines sit on another scale, so MiniLM's
#: figures mean nothing for it): ``relevant`` is the highest question-level floor that keeps
#: every development question answered, ``floor`` and ``full`` the grid's best on dev.
CALIBRATIONS: Mapping[str, Calibration] = {
    "local:all-MiniLM-L6-v2-onnx-int8": Calibration(floor=0.0, full=0.8, relevant=0.16),
}
#: For an embedder nobody measured: the seed's run-recall threshold (0.72, written for a
#: large embedding model) as the question-level floor, so an uncalibrated model errs on
#: answering less.
UNCALIBRATED = Calibration(floor=0.5, full=0.95, relevant=0.72)


def calibration_for(model_id: str) -> Calibration:
    """The measured calibration of ``model_id``, or :data:`UNCALIBRATED`."""
    return CALIBRATIONS.get(model_id, UNCALIBRATED)


def coverage_share(coverage: float, low: float, high: float) -> float:
    """How much of the word channel's weight a word match earns from its coverage.

    ``coverage`` is a match's BM25 score over the summed IDF of the question's terms
    (:meth:`fleetmem.store.base.Store.search_text_scored`): about 1 when a document holds
    each term once, near 0 when it holds only a common word of the question. A question put
    in other words than its target still shares a few common words with many documents, and
    BM25 ranks them anyway; their order is noise, and their coverage says so. The share is 0
    up to ``low``, 1 from ``high``, linear between. Unlike a rank, it does not depend on
    which other documents a call saw, so answers of several calls merge by score.
    """
    if high <= low:
        return 1.0 if coverage >= high else 0.0
    return min(1.0, max(0.0, (coverage - low) / (high - low)))


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
    word_coverage: Mapping[str, float] | None = None,
    word_ramp: tuple[float, float] = (0.0, 0.0),
) -> list[Ranked]:
    """Fuse ranked lists and cosine similarities on one scale (see the module docstring).

    score(id) = sum over ``rankings`` of weight * (k + 1) / (k + rank)
              + ``similar_weight`` * calibration.strength(cosine of id),
    except that with ``word_coverage`` the first ranking (the words) gives each of its
    items weight * :func:`coverage_share` of its coverage between the two ends of
    ``word_ramp`` instead of a share by rank (an item it lacks gets nothing).

    ``similar`` maps ids to their cosine with the query (any id may be missing: it then
    contributes nothing there). An id whose total is 0 (only a cosine at or below the
    calibration's floor, or a word match covering too little) is left out: nothing points
    at it.
    ``bonus`` adds a fixed amount to ids already scored or new (the follow-up cue's
    inherited share of its leader). ``boosted`` ids get one top rank of the lightest weight,
    as in :func:`reciprocal_rank_fusion`. Ties break by recency, then id.
    """
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    if similar and calibration is None:
        raise ValueError("cosine similarities need the embedder's calibration")
    low, high = word_ramp
    scores: dict[str, float] = {}
    for n, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        for rank, item in enumerate(ranking, start=1):
            if n == 0 and word_coverage is not None:
                share = weight * coverage_share(word_coverage.get(item, 0.0), low, high)
            else:
                share = weight * rank_share(rank, k)
            scores[item] = scores.get(item, 0.0) + share
    if similar and calibration is not None and similar_weight > 0:
        for item, cosine in similar.items():
            scores[item] = scores.get(item, 0.0) + similar_weight * calibration.strength(cosine)
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
