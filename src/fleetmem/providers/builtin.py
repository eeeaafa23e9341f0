"""The built-in provider: hybrid BM25 + vector ranking over fleetmem's own store.

Its ids are episode ids. It honours the scope hint itself, but the memory service filters
its answers through the provider index exactly as it does an external provider's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetmem.config import RECALL_CUES
from fleetmem.core.episode import content_hash
from fleetmem.core.named_agents import named_agents, without_names
from fleetmem.core.periods import Period, named_periods
from fleetmem.core.ranking import reciprocal_rank_fusion
from fleetmem.core.textquery import fts_match
from fleetmem.embed.base import Embedder
from fleetmem.errors import EmbeddingUnavailable, InvalidInput
from fleetmem.providers.base import MAX_ITEM_TEXT, ProviderItem, ProviderRecall
from fleetmem.store.base import EpisodeRow, Store, Vector

log = logging.getLogger(__name__)

BUILTIN = "builtin"
#: Candidates taken from each channel before fusion; wide enough that fusion can reorder.
CANDIDATES = 50
#: Characters of each neighbouring episode's excerpt indexed as context.
CONTEXT_CHARS = 600
#: How many of the first fused episodes may lend their follow-up run to the follow-up channel.
FOLLOW_UP_FROM = 10
#: The fields whose values the text column holds, in rendering order: what a run did and
#: where (the summary has a column of its own). Ids, times, costs, trust class and scope are
#: left out; every episode has them, so as words they only dilute BM25's length
#: normalisation (field labels likewise).
INDEXED_FIELDS = (
    "agent",
    "model",
    "repo",
    "branch",
    "outcome",
    "reason",
    "files_touched",
    "pull_request",
    "verify_failures",
    "result_excerpt",
)


@dataclass(frozen=True, slots=True)
class RankingOptions:
    """How the built-in provider indexes and fuses; the defaults are the measured best.

    ``rrf_k`` and ``vector_weight`` shape the fusion: the small-model cosine channel is the
    weaker one, so it counts half and a small ``k`` keeps top ranks decisive (plain RRF with
    k=60 and equal weights scored below BM25 alone in bench/bench_locomo.py).
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
    2023", "in July"): the candidates started in that period, in fused order. Words cannot
    find a date (a run started at 2023-07-31T09:12Z holds no "July"); on LoCoMo it found
    evidence that neither channel ranked.
    ``agent_weight`` > 0 adds a channel when the query names some, not all, of the agents
    with episodes in the searched scopes: that agent's candidates, in fused order. The name
    is also taken out of the words and the vector searched with, since every one of the
    agent's episodes holds it.
    ``follow_up_weight`` > 0 adds a channel of follow-ups: when one of the first
    :data:`FOLLOW_UP_FROM` fused episodes ends its thread's run on a question (its excerpt
    holds a "?"), the next run on that thread (its later context neighbour) is where the
    answer is, whatever words it uses. On LoCoMo the answer to a question is the next turn.
    """

    candidates: int = CANDIDATES
    rrf_k: int = 10
    vector_weight: float = 0.5
    context_window_s: float = 3600.0
    context_neighbours: int = 2
    feedback_items: int = 0
    feedback_weight: float = 0.5
    period_weight: float = 1.0
    agent_weight: float = 1.0
    follow_up_weight: float = 0.7

    def __post_init__(self) -> None:
        # A negative count would silently mean "off"; say so instead.
        for name in ("candidates", "rrf_k", "context_neighbours", "feedback_items"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"RankingOptions.{name}", value, "must be an integer >= 0")
        for name in ("period_weight", "agent_weight", "follow_up_weight"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise InvalidInput(f"RankingOptions.{name}", value, "must be a number >= 0")


def index_text(episode: Mapping[str, Any]) -> str:
    """What the text channel indexes of an episode: the values of :data:`INDEXED_FIELDS`."""
    parts = []
    for name in INDEXED_FIELDS:
        value = episode.get(name)
        if name == "files_touched":
            value = " ".join(str(f) for f in value or ())
        elif name == "verify_failures":
            value = " ".join(str(f.get("error_class", "")) for f in value or ())
        if value:
            parts.append(str(value).replace("\n", " "))
    return "\n".join(parts)


def semantic_text(episode: Mapping[str, Any]) -> str:
    """The part of an episode worth embedding: what happened, not its bookkeeping fields.

    Field labels and ids in the text rendering would dilute a small sentence embedder, so
    the vector is built from the outcome, summary, excerpt, files and failures only.
    """
    parts = [f"{episode.get('outcome', '')} ({episode.get('reason', '')})"]
    if episode.get("summary"):
        parts.append(str(episode["summary"]))
    if episode.get("result_excerpt"):
        parts.append(str(episode["result_excerpt"]))
    files = episode.get("files_touched") or []
    if files:
        parts.append("files: " + ", ".join(str(f) for f in files[:20]))
    failures = episode.get("verify_failures") or []
    if failures:
        parts.append("failures: " + ", ".join(str(f.get("error_class")) for f in failures))
    return "\n".join(parts)


class BuiltinProvider:
    """Episodes indexed in the local store; nothing leaves the machine."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        options: RankingOptions | None = None,
        cues: Callable[[], Collection[str]] | None = None,
    ) -> None:
        """``cues`` says, at each recall, which of :data:`RECALL_CUES` are on (the
        ``[memory.episodes] recall_cues`` setting); without it, all are. A cue whose weight
        in ``options`` is 0 is off either way."""
        self._store = store
        self._embedder = embedder
        self._options = options or RankingOptions()
        self._cues = cues

    @property
    def options(self) -> RankingOptions:
        return self._options

    @property
    def name(self) -> str:
        return BUILTIN

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def cues(self) -> Callable[[], Collection[str]] | None:
        return self._cues

    def embed_document(self, episode: Mapping[str, Any]) -> tuple[Vector | None, str, str]:
        """(vector or None, hash of the embedded text, model id), using the cache first."""
        text = semantic_text(episode)
        digest = content_hash(text)
        if self._embedder is None:
            return None, digest, ""
        model_id = self._embedder.model_id
        cached = self._store.cached_embedding(digest, model_id)
        if cached is not None:
            return cached, digest, model_id
        try:
            vector = self._embedder.embed([text])[0]
        except EmbeddingUnavailable as exc:
            # The episode is still indexed for text search; a background job retries.
            log.warning("builtin.embed_failed episode=%s error=%s", episode.get("episode_id"), exc)
            return None, digest, model_id
        return vector, digest, model_id

    def record(
        self,
        episode_id: str,
        scope: str,
        trust_class: str,
        episode: Mapping[str, Any],
        text: str,
    ) -> list[str]:
        # ``text`` (the rendering) is what a provider keeps to show; this index searches the
        # fields that say what the run did instead (:func:`index_text`).
        vector, digest, model_id = self.embed_document(episode)
        summary = episode.get("summary")
        row = self._store.get_episodes([episode_id]).get(episode_id)
        near = self._neighbours(row) if row is not None else []
        self._store.builtin_put(
            episode_id,
            index_text(episode),
            summary if isinstance(summary, str) else None,
            vector,
            digest,
            model_id,
            context=_context(near),
        )
        # This episode is now a neighbour of the ones around it: their context changes.
        self._reindex(near)
        return [episode_id]

    def _neighbours(self, row: EpisodeRow) -> list[EpisodeRow]:
        """Up to ``context_neighbours`` live episodes on the same branch of the same
        repository and scope on each side of ``row``, whichever agent ran them, nearest first
        on each side (earlier ones, then later ones).

        Each step is the store's nearest-neighbour lookup from the previous one, so a chain
        of runs each within the window of the next counts as one thread of work.
        """
        window = self._options.context_window_s
        if window <= 0 or self._options.context_neighbours <= 0:
            return []
        near: list[EpisodeRow] = []
        for side in (0, 1):  # 0: earlier, 1: later
            anchor = row
            for _ in range(self._options.context_neighbours):
                step = self._store.builtin_neighbours(anchor, window)[side]
                if step is None or step.id == row.id:
                    break
                near.append(step)
                anchor = step
        return near

    def _reindex(self, rows: Sequence[EpisodeRow]) -> None:
        """Rewrite the text index entry of already indexed episodes with fresh context."""
        for row in rows:
            if row.episode is None or not self._store.builtin_has(row.id):
                continue
            # No vector: the embedded text has no context, so the stored vector stays valid.
            self._store.builtin_put(
                row.id,
                index_text(row.episode),
                row.summary,
                None,
                "",
                "",
                context=_context(self._neighbours(row)),
            )

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        degraded: str | None = None
        opts = self._options
        on = frozenset(self._cues()) if self._cues is not None else frozenset(RECALL_CUES)
        named = self._named_agents(query, scopes) if "agents" in on else frozenset()
        periods = named_periods(query) if opts.period_weight > 0 and "periods" in on else ()
        follow = opts.follow_up_weight > 0 and opts.context_window_s > 0 and "follow_ups" in on
        # The name says whose episodes to favour, not what they hold; searched with, it
        # would rank the other agents' runs that mention it. A query that is nothing but
        # the name keeps it.
        searched = (without_names(query, named) or query) if named else query
        match = fts_match(searched)
        wide = opts.candidates
        text_ids = self._store.search_text(match, scopes, wide) if match else []
        vector_ids: list[str] = []
        feedback_ids: list[str] = []
        if self._embedder is not None:
            try:
                qvec = self._embedder.embed([searched])[0]
            except EmbeddingUnavailable:
                degraded = "embeddings_unavailable"
            else:
                hits = self._store.search_vector(qvec, self._embedder.model_id, scopes, wide)
                vector_ids = [i for i, _ in hits]
                feedback_ids = self._feedback(qvec, text_ids, vector_ids, scopes)
        candidates = list(dict.fromkeys([*text_ids, *vector_ids, *feedback_ids]))
        if not candidates:
            return ProviderRecall(items=(), degraded=degraded)
        # Bodies are decoded only where needed: every candidate's when paths boost by files
        # touched, otherwise only the fused winners' (decoding ~100 JSON bodies per recall
        # cost more than either channel's search at 100k episodes).
        rows: dict[str, EpisodeRow] = self._store.get_episodes(candidates) if paths else {}
        facets: dict[str, tuple[float, str]] = (
            {
                eid: (row.started_at, row.agent)
                for eid, row in rows.items()
                if row.forgotten_at is None
            }
            if paths
            else self._store.builtin_facets(candidates)
        )
        recency = {eid: started for eid, (started, _) in facets.items()}
        wanted = set(paths)
        boosted = frozenset(
            eid
            for eid, row in rows.items()
            if wanted and row.episode and wanted & set(row.episode.get("files_touched") or ())
        )
        channels = [text_ids, vector_ids, feedback_ids] if vector_ids else [text_ids]
        if not feedback_ids:
            channels = channels[:2]
        channels = [[i for i in ids if i in recency] for ids in channels]
        weights = [1.0, *[opts.vector_weight] * (len(channels) - 1)]
        self._add_cue_channels(channels, weights, recency, facets, rows, periods, named, follow)
        fused = reciprocal_rank_fusion(
            channels,
            recency=recency,
            boosted=boosted,
            k=opts.rrf_k,
            weights=weights,
            limit=limit,
        )
        # Bodies are decoded for the answer's items not decoded yet (all of them, or those
        # beyond the follow-up leaders, or follow-ups new to the candidates).
        missing = [r.id for r in fused if r.id not in rows]
        if missing:
            rows.update(self._store.get_episodes(missing))
        items = []
        for ranked in fused:
            row = rows.get(ranked.id)
            if row is None or row.text is None:
                continue
            items.append(
                ProviderItem(id=ranked.id, text=row.text[:MAX_ITEM_TEXT], score=ranked.score)
            )
        return ProviderRecall(items=tuple(items), degraded=degraded)

    def _named_agents(self, query: str, scopes: Sequence[str]) -> frozenset[str]:
        """The agents ``query`` names, when naming them narrows the scopes' agents at all."""
        if self._options.agent_weight <= 0:
            return frozenset()
        known = self._store.builtin_agent_names(scopes)
        named = named_agents(query, known)
        # Naming the only agent (or every agent) of a scope singles nothing out.
        return named if len(named) < len(set(known)) else frozenset()

    def _add_cue_channels(
        self,
        channels: list[list[str]],
        weights: list[float],
        recency: dict[str, float],
        facets: dict[str, tuple[float, str]],
        rows: dict[str, EpisodeRow],
        periods: Sequence[Period],
        named: frozenset[str],
        follow: bool,
    ) -> None:
        """Append the period, named-agent and follow-up channels, where they apply.

        The period and agent channels are the candidates that fit the cue, in the order the
        other channels fuse them into: a cue picks among what the words and the vector
        found. Follow-ups may be new; their start time and agent join ``recency`` and
        ``facets``, and the bodies decoded to look for questions join ``rows``.
        """
        opts = self._options
        if not periods and not named and not follow:
            return
        order = [
            r.id
            for r in reciprocal_rank_fusion(
                channels, recency=recency, k=opts.rrf_k, weights=weights
            )
        ]
        extra: list[tuple[list[str], float]] = []
        if follow:
            ups = self._follow_ups(order, named, recency, facets, rows)
            extra.append((ups, opts.follow_up_weight))
        if periods:
            in_period = [i for i in order if any(p.contains(facets[i][0]) for p in periods)]
            extra.append((in_period[: opts.candidates], opts.period_weight))
        if named:
            by_named = [i for i in order if facets[i][1] in named]
            extra.append((by_named[: opts.candidates], opts.agent_weight))
        for ids, weight in extra:
            if ids:
                channels.append(ids)
                weights.append(weight)

    def _follow_ups(
        self,
        order: Sequence[str],
        named: frozenset[str],
        recency: dict[str, float],
        facets: dict[str, tuple[float, str]],
        rows: dict[str, EpisodeRow],
    ) -> list[str]:
        """The next run on the thread of each leading episode whose excerpt asks a question
        (only the named agents' runs when the query names any), in the leaders' order."""
        leading = order[:FOLLOW_UP_FROM]
        # The leaders are mostly the answer's first items: decoded once, for both uses.
        rows.update(self._store.get_episodes([i for i in leading if i not in rows]))
        found: list[str] = []
        for eid in leading:
            row = rows.get(eid)
            if row is None or row.episode is None:
                continue
            if "?" not in str(row.episode.get("result_excerpt") or ""):
                continue
            nxt = self._store.builtin_neighbours(row, self._options.context_window_s)[1]
            if nxt is None or (named and nxt.agent not in named) or nxt.id in found:
                continue
            found.append(nxt.id)
            recency.setdefault(nxt.id, nxt.started_at)
            facets.setdefault(nxt.id, (nxt.started_at, nxt.agent))
        return found

    def _feedback(
        self, qvec: Vector, text_ids: list[str], vector_ids: list[str], scopes: Sequence[str]
    ) -> list[str]:
        """The feedback channel's ranking, or [] when it is off or has nothing to go on."""
        opts = self._options
        if opts.feedback_items <= 0 or not vector_ids or self._embedder is None:
            return []
        first = reciprocal_rank_fusion(
            [text_ids, vector_ids],
            recency={},
            k=opts.rrf_k,
            weights=[1.0, opts.vector_weight],
            limit=opts.feedback_items,
        )
        model_id = self._embedder.model_id
        stored = self._store.builtin_vectors_for([r.id for r in first], model_id)
        if not stored:
            return []
        centre = np.mean(np.stack(list(stored.values())), axis=0)
        expanded = np.asarray(qvec, dtype=np.float32) + opts.feedback_weight * centre
        norm = float(np.linalg.norm(expanded))
        if norm == 0.0:
            return []
        hits = self._store.search_vector(
            (expanded / norm).astype(np.float32), model_id, scopes, opts.candidates
        )
        return [i for i, _ in hits]

    def forget(self, provider_id: str) -> bool:
        deleted = self._store.builtin_delete(provider_id)
        # A forgotten episode's words must not keep finding its neighbours.
        row = self._store.get_episodes([provider_id]).get(provider_id)
        if row is not None:
            self._reindex(self._neighbours(row))
        return deleted


def _context(rows: Sequence[EpisodeRow]) -> str:
    """The index-only context built from the neighbours' excerpts (and summaries)."""
    parts = []
    for row in rows:
        if row.episode is None:
            continue
        excerpt = str(row.episode.get("result_excerpt") or "")[:CONTEXT_CHARS]
        summary = row.summary or ""
        text = " ".join(p for p in (summary, excerpt) if p).replace("\n", " ")
        if text:
            parts.append(text)
    return "\n".join(parts)
