"""How the built-in provider fuses its channels: :class:`RankingOptions` and the channels of
one recall.

Split from :mod:`fleetmem.providers.builtin`, which re-exports :class:`RankingOptions`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleetmem.core.ranking import Calibration, Ranked, reciprocal_rank_fusion, score_fusion
from fleetmem.errors import InvalidInput

#: Candidates taken from each channel before fusion; wide enough that fusion can reorder.
CANDIDATES = 50
#: How many of the first fused episodes may lend their follow-up run to the follow-up channel.
FOLLOW_UP_FROM = 10
FUSIONS = ("score", "rrf")


@dataclass(frozen=True, slots=True)
class RankingOptions:
    """How the built-in provider indexes and fuses; the defaults are the measured best
    (bench/bench_recall_sets.py and bench/bench_locomo.py, docs/episodes.md).

    ``fusion`` is ``"score"`` (the default: :func:`fleetmem.core.ranking.score_fusion`) or
    ``"rrf"`` (weighted reciprocal rank fusion, the earlier default and the benchmarks'
    plain-RRF baseline). With ``"score"`` the text channel gives ``text_weight`` times
    (k + 1) / (k + rank) with k = ``rrf_k``, and the vector channel ``vector_weight`` times the
    cosine's strength for the active embedder (0 at its relevance floor, 1 at a clear
    paraphrase), so a strong meaning match can outrank every word match. With ``"rrf"`` each
    channel gives its weight / (k + rank).
    ``context_window_s`` > 0 indexes each episode's text together with the excerpts of its
    neighbours (the previous and next episode on the same branch of the same repository and
    scope, whichever agent ran it, started within that many seconds): work on one thread is
    spread over consecutive runs, and the words that find one run are often in the run before
    or after it. 0 turns it off.
    ``context_neighbours`` is how many such episodes on each side lend their words (each one
    within the window of the next): on LoCoMo two on each side found more evidence than one
    (an answer is often two turns away from the words of the question) and three fewer (a
    wider context starts to match everything).
    ``feedback_items`` > 0 adds a third channel (pseudo-relevance feedback on vectors): the
    query vector plus ``feedback_weight`` times the mean vector of the first fused items,
    searched again and fused at ``vector_weight``. No model call: the vectors are stored.
    ``period_weight`` > 0 adds a channel when the query names a day or a month ("on 3 May
    2023", "in July") and some, not all, candidates started in it: those candidates, in fused
    order. Words cannot find a date (a run started at 2023-07-31T09:12Z holds no "July").
    ``agent_weight`` > 0 adds a channel when the query names some, not all, of the agents
    with episodes in the searched scopes (by identifier, display name or first name): that
    agent's candidates, in fused order. The name is also taken out of the words and the
    vector searched with, since every one of the agent's episodes holds it.
    ``follow_up_weight`` > 0: when one of the first :data:`FOLLOW_UP_FROM` fused episodes
    asks a question (its excerpt holds a "?") and the next run on its thread (its later
    context neighbour) is another agent's, that run gains this weight times the leader's
    fused score: a question put to someone is answered in their next turn, whatever words it
    uses, and the answer is worth as much as the question's match is. A run followed by the
    same agent's next run is a continuation, not an answer, and lends nothing.
    ``words_low`` and ``words_high`` (score fusion with an embedder): a word match earns the
    text weight by how much of the query it covers (:func:`fleetmem.core.ranking.coverage_share`):
    nothing up to ``words_low``, all of it from ``words_high``. Without cosines to rank by
    (no embedder, no vectors yet) word matches earn by rank, as BM25 orders them.
    ``words_answer``: a word match covering this much of the query is relevant whatever its
    cosine (the question-level floor, :attr:`fleetmem.core.ranking.Calibration.relevant`,
    applies only below it).
    ``hub_weight`` (score fusion with an embedder): each candidate's cosine is read less this
    much of its neighbour similarity above the searched episodes' mean
    (:mod:`fleetmem.providers.episode_hubs`), so runs written alike stop crowding out the one
    a paraphrase is after. 0 turns it off.
    """

    candidates: int = CANDIDATES
    fusion: str = "score"
    rrf_k: int = 5
    text_weight: float = 0.7
    vector_weight: float = 0.3
    context_window_s: float = 3600.0
    context_neighbours: int = 2
    feedback_items: int = 0
    feedback_weight: float = 0.5
    period_weight: float = 0.5
    agent_weight: float = 0.5
    follow_up_weight: float = 0.7
    words_low: float = 0.15
    words_high: float = 1.2
    words_answer: float = 0.5
    hub_weight: float = 0.2

    def __post_init__(self) -> None:
        # A negative count would silently mean "off"; say so instead.
        if self.fusion not in FUSIONS:
            raise InvalidInput("RankingOptions.fusion", self.fusion, f"must be one of {FUSIONS}")
        for name in ("candidates", "rrf_k", "context_neighbours", "feedback_items"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"RankingOptions.{name}", value, "must be an integer >= 0")
        for name in (
            "text_weight",
            "vector_weight",
            "period_weight",
            "agent_weight",
            "follow_up_weight",
            "words_low",
            "words_high",
            "words_answer",
            "hub_weight",
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise InvalidInput(f"RankingOptions.{name}", value, "must be a number >= 0")
        if self.words_high < self.words_low:
            raise InvalidInput("RankingOptions.words_high", self.words_high, "must be >= words_low")


@dataclass(slots=True)
class _Channels:
    """What one recall fuses: ranked lists with their weights, the candidates' cosines (score
    fusion only) and fixed bonuses (follow-ups)."""

    rankings: list[list[str]]
    weights: list[float]
    cosines: dict[str, float]
    bonus: dict[str, float] = field(default_factory=dict)
    calibration: Calibration | None = None
    #: The word matches' coverage (:meth:`Store.search_text_scored`), by id.
    coverage: dict[str, float] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        opts: RankingOptions,
        text_ids: Sequence[str],
        vector_ids: Sequence[str],
        feedback_ids: Sequence[str],
        cosines: Mapping[str, float],
        live: Mapping[str, float],
    ) -> _Channels:
        """The word and meaning channels, restricted to the ``live`` candidates."""

        def keep(ids: Sequence[str]) -> list[str]:
            return [i for i in ids if i in live]

        rankings, weights = [keep(text_ids)], [opts.text_weight]
        similar: dict[str, float] = {}
        if opts.fusion == "score":
            similar = {i: c for i, c in cosines.items() if i in live}
        elif vector_ids:
            rankings.append(keep(vector_ids))
            weights.append(opts.vector_weight)
        if feedback_ids:
            rankings.append(keep(feedback_ids))
            weights.append(opts.vector_weight)
        return cls(rankings, weights, similar)

    def copy(self) -> _Channels:
        return _Channels(
            [list(r) for r in self.rankings],
            list(self.weights),
            dict(self.cosines),
            dict(self.bonus),
            self.calibration,
            dict(self.coverage),
        )

    def add(self, ids: list[str], weight: float) -> None:
        if ids and weight > 0:
            self.rankings.append(ids)
            self.weights.append(weight)

    def fuse(
        self,
        opts: RankingOptions,
        *,
        recency: Mapping[str, float],
        boosted: frozenset[str] = frozenset(),
        limit: int | None = None,
    ) -> list[Ranked]:
        if opts.fusion == "rrf":
            return reciprocal_rank_fusion(
                self.rankings,
                recency=recency,
                boosted=boosted,
                k=opts.rrf_k,
                weights=self.weights,
                limit=limit,
                bonus=self.bonus,
            )
        return score_fusion(
            self.rankings,
            self.weights,
            similar=self.cosines,
            similar_weight=opts.vector_weight,
            calibration=self.calibration,
            recency=recency,
            boosted=boosted,
            k=opts.rrf_k,
            limit=limit,
            bonus=self.bonus,
            # Without cosines there is nothing else to rank by: the words count by rank.
            word_coverage=self.coverage if self.cosines else None,
            word_ramp=(opts.words_low, opts.words_high),
        )
