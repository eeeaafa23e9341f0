"""The built-in provider: hybrid BM25 + vector ranking over fleetmem's own store.

Its ids are episode ids. It honours the scope hint itself, but the memory service filters
its answers through the provider index exactly as it does an external provider's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from fleetmem.config import RECALL_CUES
from fleetmem.core.episode import content_hash
from fleetmem.core.named_agents import named_agents, without_names
from fleetmem.core.periods import Period, named_periods, splits
from fleetmem.core.ranking import Calibration, calibration_for, reciprocal_rank_fusion
from fleetmem.core.textquery import fts_match
from fleetmem.embed.base import Embedder, embed_query
from fleetmem.errors import EmbeddingUnavailable
from fleetmem.providers.base import MAX_ITEM_TEXT, ProviderItem, ProviderRecall
from fleetmem.providers.episode_hubs import EpisodeHubs, corrected, to_correct
from fleetmem.providers.ranking_options import FOLLOW_UP_FROM, RankingOptions, _Channels
from fleetmem.store.base import EpisodeRow, Store, Vector

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

__all__ = [
    "BUILTIN",
    "BuiltinProvider",
    "RankingOptions",
    "index_text",
    "semantic_text",
]

log = logging.getLogger(__name__)

BUILTIN = "builtin"
#: Characters of each neighbouring episode's excerpt indexed as context.
CONTEXT_CHARS = 600
#: Query vectors kept for the recalls that ask again with the same query (one call per two
#: scopes of a wide recall).
RECENT_QUERIES = 16
#: Threads searching words beside the query's embedding: as many as the hub's threads that
#: recall through this provider, so one recall never waits for another's word search.
WORD_THREADS = 4
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
        calibration: Calibration | None = None,
    ) -> None:
        """``cues`` says, at each recall, which of :data:`RECALL_CUES` are on (the
        ``[memory.episodes] recall_cues`` setting); without it, all are. A cue whose weight
        in ``options`` is 0 is off either way. ``calibration`` replaces the embedder's row of
        :data:`fleetmem.core.ranking.CALIBRATIONS` (the benchmarks' grid uses it)."""
        self._store = store
        self._embedder = embedder
        self._options = options or RankingOptions()
        self._cues = cues
        self._calibration = calibration
        self._lock = threading.Lock()
        self._recent: dict[tuple[str, str], Vector] = {}
        self._hubs = EpisodeHubs(store)
        self._word_pool: ThreadPoolExecutor | None = None
        self._closed = False

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
        known = self._store.builtin_agent_names(scopes) if self._agents_on(on) else []
        named = self._named_agents(query, known)
        periods = named_periods(query) if opts.period_weight > 0 and "periods" in on else ()
        follow = opts.follow_up_weight > 0 and opts.context_window_s > 0 and "follow_ups" in on
        # The name says whose episodes to favour, not what they hold; searched with, it
        # would rank the other agents' runs that mention it. A query that is nothing but
        # the name keeps it.
        searched = (without_names(query, named, known) or query) if named else query
        match = fts_match(searched)
        wide = opts.candidates
        # The word channel runs beside the query's embedding and the vector search: the store
        # (or PostgreSQL) works on one while the model works on the other.
        words = self._beside(match, scopes, wide) if match and self._embedder else None
        text_hits: list[tuple[str, float]] = []
        if match and words is None:
            text_hits = self._store.search_text_scored(match, scopes, wide)
        vector_ids: list[str] = []
        feedback_ids: list[str] = []
        cosines: dict[str, float] = {}
        qvec: Vector | None = None
        if self._embedder is not None:
            try:
                qvec = self._query_vector(searched)
                hits = self._store.search_vector(qvec, self._embedder.model_id, scopes, wide)
            except EmbeddingUnavailable:
                degraded = "embeddings_unavailable"
            else:
                vector_ids = [i for i, _ in hits]
                cosines = {i: float(c) for i, c in hits}
            finally:
                # Waited for whatever the vector side did, so no search outlives the call.
                text_hits = words.result() if words is not None else text_hits
        text_ids = [eid for eid, _ in text_hits]
        if qvec is not None:
            feedback_ids = self._feedback(qvec, text_ids, vector_ids, scopes)
        candidates = list(dict.fromkeys([*text_ids, *vector_ids, *feedback_ids]))
        coverage = text_hits[0][1] if text_hits else 0.0
        if not candidates or not self._relevant(cosines, coverage):
            return ProviderRecall(items=(), degraded=degraded)
        if qvec is not None and opts.fusion == "score":
            self._fill_cosines(qvec, text_ids, cosines)
            if opts.hub_weight > 0:
                # After the floor above, which reads the plain cosines: this only reorders.
                cosines = self._corrected(cosines, scopes)
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
        base = _Channels.start(opts, text_ids, vector_ids, feedback_ids, cosines, recency)
        base.calibration = self.calibration
        base.coverage = {eid: c for eid, c in text_hits if eid in recency}
        cued = self._with_cues(base, recency, facets, rows, periods, named, follow)
        fused = cued.fuse(opts, recency=recency, boosted=boosted, limit=limit)
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

    def _relevant(self, cosines: Mapping[str, float], coverage: float) -> bool:
        """Whether the store holds anything the query is about: its best cosine is above the
        embedder's question-level floor, or its best word match covers enough of it. Without
        cosines (no embedder, or no vectors yet) any word match counts, as before vectors."""
        if not cosines or self._options.fusion != "score":
            return True
        if coverage >= self._options.words_answer:
            return True
        return max(cosines.values()) > self.calibration.relevant

    @property
    def calibration(self) -> Calibration:
        """How the active embedder's cosines read (:data:`fleetmem.core.ranking.CALIBRATIONS`)."""
        if self._calibration is not None:
            return self._calibration
        model = self._embedder.model_id if self._embedder is not None else ""
        return calibration_for(model)

    def _query_vector(self, text: str) -> Vector:
        """The query's vector; the last few are kept, since a recall over many scopes asks
        this provider once per two scopes with the same query."""
        assert self._embedder is not None
        key = (self._embedder.model_id, text)
        with self._lock:
            cached = self._recent.get(key)
        if cached is not None:
            return cached
        vector: Vector = embed_query(self._embedder, text)
        with self._lock:
            self._recent[key] = vector
            while len(self._recent) > RECENT_QUERIES:
                self._recent.pop(next(iter(self._recent)))
        return vector

    def _beside(
        self, match: str, scopes: Sequence[str], wide: int
    ) -> Future[list[tuple[str, float]]] | None:
        """The word channel's search, started on a thread of this provider's own (None once
        the provider is closed: the caller then searches inline)."""
        with self._lock:
            if self._closed:
                return None
            if self._word_pool is None:
                self._word_pool = ThreadPoolExecutor(
                    max_workers=WORD_THREADS, thread_name_prefix="fleetmem-words"
                )
            return self._word_pool.submit(self._store.search_text_scored, match, list(scopes), wide)

    def close(self) -> None:
        """Stop the word channel's threads (a recall after this searches words inline)."""
        with self._lock:
            pool, self._word_pool = self._word_pool, None
            self._closed = True
        if pool is not None:
            pool.shutdown(wait=True)
        self._hubs.close()

    @property
    def hubs(self) -> EpisodeHubs:
        """The correction for hubs (``hubs.settle()`` waits for its samples)."""
        return self._hubs

    def _corrected(self, cosines: dict[str, float], scopes: Sequence[str]) -> dict[str, float]:
        """``cosines`` less ``hub_weight`` times each candidate's neighbour similarity above
        the searched episodes' mean (providers/episode_hubs.py), for the best by cosine."""
        assert self._embedder is not None
        offsets = self._hubs.offsets(to_correct(cosines), scopes, self._embedder.model_id)
        return corrected(cosines, offsets, self._options.hub_weight)

    def _fill_cosines(self, qvec: Vector, ids: Sequence[str], cosines: dict[str, float]) -> None:
        """The cosine of every text hit the vector search did not return (stored vectors are
        unit length), so a word match with unrelated meaning is judged on its cosine too."""
        assert self._embedder is not None
        wanted = [i for i in ids if i not in cosines]
        if not wanted:
            return
        cosines.update(self._store.builtin_cosines(qvec, wanted, self._embedder.model_id))

    def _agents_on(self, on: frozenset[str]) -> bool:
        return self._options.agent_weight > 0 and "agents" in on

    def _named_agents(self, query: str, known: Sequence[str]) -> frozenset[str]:
        """The agents ``query`` names, when naming them narrows the scopes' agents at all."""
        if not known:
            return frozenset()
        named = named_agents(query, known)
        # Naming the only agent (or every agent) of a scope singles nothing out.
        return named if len(named) < len(set(known)) else frozenset()

    def _with_cues(
        self,
        base: _Channels,
        recency: dict[str, float],
        facets: dict[str, tuple[float, str]],
        rows: dict[str, EpisodeRow],
        periods: Sequence[Period],
        named: frozenset[str],
        follow: bool,
    ) -> _Channels:
        """The base channels plus the period, named-agent and follow-up cues, where they apply.

        The period and agent channels are the candidates that fit the cue, in the order the
        word and meaning channels fuse them into: a cue picks among what they found. The
        period channel applies only when the period splits the candidates (some in it, some
        not): otherwise it would lift every candidate alike. A follow-up (the next run on the
        thread of a leading run that ends on a question) inherits ``follow_up_weight`` times
        its leader's fused score, so the follow-up of a weak leader stays weak. Follow-ups
        may be new; their start time and agent join ``recency`` and ``facets``, and the
        bodies decoded to look for questions join ``rows``.
        """
        opts = self._options
        if not periods and not named and not follow:
            return base
        first = base.fuse(opts, recency=recency)
        order = [r.id for r in first]
        out = base.copy()
        if follow:
            score = {r.id: r.score for r in first}
            for leader, nxt in self._follow_ups(order, named, recency, facets, rows):
                out.bonus[nxt] = out.bonus.get(nxt, 0.0) + opts.follow_up_weight * score[leader]
        if periods:
            starts = [facets[i][0] for i in order]
            if splits(periods, starts):
                in_period = [i for i in order if any(p.contains(facets[i][0]) for p in periods)]
                out.add(in_period[: opts.candidates], opts.period_weight)
        if named:
            by_named = [i for i in order if facets[i][1] in named]
            out.add(by_named[: opts.candidates], opts.agent_weight)
        return out

    def _follow_ups(
        self,
        order: Sequence[str],
        named: frozenset[str],
        recency: dict[str, float],
        facets: dict[str, tuple[float, str]],
        rows: dict[str, EpisodeRow],
    ) -> list[tuple[str, str]]:
        """(leader, follow-up) for each leading episode whose excerpt asks a question: the
        next run on its thread when another agent ran it (the answer to the question; only
        the named agents' runs when the query names any)."""
        leading = order[:FOLLOW_UP_FROM]
        # The leaders are mostly the answer's first items: decoded once, for both uses.
        rows.update(self._store.get_episodes([i for i in leading if i not in rows]))
        found: list[tuple[str, str]] = []
        seen: set[str] = set()
        for eid in leading:
            row = rows.get(eid)
            if row is None or row.episode is None:
                continue
            if "?" not in str(row.episode.get("result_excerpt") or ""):
                continue
            nxt = self._store.builtin_neighbours(row, self._options.context_window_s)[1]
            if nxt is None or nxt.agent == row.agent or nxt.id in seen:
                continue
            if named and nxt.agent not in named:
                continue
            seen.add(nxt.id)
            found.append((eid, nxt.id))
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
            weights=[opts.text_weight, opts.vector_weight],
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
        self._hubs.forget(provider_id)
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
