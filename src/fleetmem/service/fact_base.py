"""What every part of the fact service shares: wiring, thresholds, embedding, ranking, the
journal and rate limits. :class:`fleetmem.service.facts.FactService` is the public class."""

from __future__ import annotations

import dataclasses
import getpass
import logging
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from fleetmem import metrics
from fleetmem.config import FactThresholds, Settings
from fleetmem.core.episode import content_hash
from fleetmem.core.facts import (
    ACTIVE,
    DEFAULT_WORKSPACE,
    KEPT,
    LIVE,
    MAX_KEPT,
    MAX_PINNED,
    MAX_PROPOSED,
    NEAR_DUPLICATE_WORDS,
    PROPOSED,
    SUSPECT,
    WORD_WEIGHT,
    Actor,
    Tally,
    check_workspace,
    confidence,
    literal_terms,
    meaning_score,
    normalize,
    search_score,
    word_overlap,
)
from fleetmem.embed.base import Embedder, embed_query
from fleetmem.errors import EmbeddingUnavailable, RateLimited, UnknownFact
from fleetmem.service.fact_hubs import NeighbourCache, adjusted
from fleetmem.service.fact_results import NearDuplicate, SearchHit
from fleetmem.service.fact_revisions import hits_as_of
from fleetmem.service.records.facts import Fact, fact_of
from fleetmem.store.base import Vector
from fleetmem.store.facts import (
    FactRow,
    FactStore,
    JournalRow,
    ProvenanceRow,
    RevisionRow,
    SearchRow,
)
from fleetmem.tokenize import get_tokenizer

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

_T = TypeVar("_T")
#: A hit being ranked: (score, ranking, row, how it matched, strength).
_Scored = tuple[float, float, SearchRow, tuple[str, ...], float]
#: Facts search reads only the candidates that could place (False: all of them, as before)...
READ_BEST_FIRST = True
#: ...and, when some were of other scopes or statuses, this many times more.
READ_MORE = 4

log = logging.getLogger("fleetmem.facts")

#: Calibrated on tests/data/facts_paraphrase.json by bench/bench_facts.py (docs/facts.md):
#: search keeps top-3 accuracy within 2 points of no threshold at all; recall admits no fact
#: for any unrelated query; near-duplicate sits between the closest two different facts and
#: the farthest rewording of one fact.
CALIBRATED: Mapping[str, FactThresholds] = {
    "local:all-MiniLM-L6-v2-onnx-int8": FactThresholds(
        search=0.25, recall=0.42, near_duplicate=0.72
    ),
}
#: For a model nobody calibrated: the seeds' figures (written for a larger embedding model).
UNCALIBRATED = FactThresholds(search=0.55, recall=0.72, near_duplicate=0.92)

#: Facts written while no embedder answered are embedded this many at a time.
BACKFILL_BATCH = 128


@dataclass(frozen=True, slots=True)
class Limits:
    """A workspace's caps (seed 003 FR-3, FR-4, FR-14); smaller ones only in tests."""

    kept: int = MAX_KEPT
    proposed: int = MAX_PROPOSED
    pinned: int = MAX_PINNED


@dataclass(frozen=True, slots=True)
class Thresholds:
    search: float
    recall: float
    near_duplicate: float


def local_user() -> Actor:
    """The person at this machine (the CLI's and the loopback API's user until tokens exist)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = "local"
    return Actor("human", name or "local")


def exact_tokens(text: str) -> int:
    """``text``'s tokens in ``o200k_base`` (``fleetmem.tokenize``; loaded on first use)."""
    return get_tokenizer().count(text)


def new_fact_id() -> str:
    return "f_" + secrets.token_hex(8)


def snapshot(row: FactRow | None) -> dict[str, Any] | None:
    """A fact's state for the journal: everything but its body (bodies live in revisions, so
    purging a fact removes its words while the journal keeps what happened)."""
    if row is None:
        return None
    return {
        "status": row.status,
        "pinned": row.pinned,
        "kind": row.kind,
        "scope": row.scope,
        "revision": row.revision,
        "source": row.source,
        "merged_into": row.merged_into,
    }


class FactServiceBase:
    """Shared state and helpers; bound to one workspace (see ``in_workspace``)."""

    def __init__(
        self,
        *,
        store: FactStore,
        settings: Callable[[], Settings],
        embedder: Embedder | None,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_fact_id,
        workspace: str = DEFAULT_WORKSPACE,
        limits: Limits | None = None,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        self.store = store
        # The facts block's 1,200-token cap is counted with the one exact tokenizer, as the
        # context assembly and the load meter count, unless a caller passes another counter.
        self.count_tokens: Callable[[str], int] = count_tokens or exact_tokens
        self._settings = settings
        self.embedder = embedder
        self._clock = clock
        self._new_id = new_id
        self.workspace = check_workspace(workspace)
        self.limits = limits or Limits()
        # Fact recall for a run is computed here so that a slow embedder cannot hold the run
        # past its deadline; threads start on first use and are shared by in_workspace copies.
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fleetmem-facts")
        self._hubs = NeighbourCache()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def in_workspace(self, workspace: str) -> Any:
        """The same service bound to another workspace (the tenant every call is scoped to)."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.workspace = check_workspace(workspace)
        return other

    @property
    def settings(self) -> Settings:
        return self._settings()

    def now(self) -> float:
        return self._clock()

    # ---- lookups ----------------------------------------------------------------------
    def _require(self, fact_id: object) -> FactRow:
        if not isinstance(fact_id, str) or not fact_id or len(fact_id) > 64:
            raise UnknownFact(str(fact_id)[:64])
        row = self.store.fact_get(self.workspace, fact_id)
        if row is None:
            # Another workspace's fact is exactly as absent as one that never existed.
            raise UnknownFact(fact_id)
        return row

    def confidence_of(self, row: FactRow | Fact, tally: tuple[Tally, Tally] | None = None) -> float:
        """A fact's confidence (0-1) from the (support, contradict) tallies of its counted
        votes, read from the store when not given; a person's word raises its prior."""
        support, contradict = tally or (
            self.store.fact_tally(self.workspace, row.id, row.revision, "support", 0.0),
            self.store.fact_tally(self.workspace, row.id, row.revision, "contradict", 0.0),
        )
        human = row.origin == "human" or row.confirmed_at is not None
        return confidence(support, contradict, human=human)

    # ---- thresholds and vectors -------------------------------------------------------
    def thresholds(self) -> Thresholds:
        """The cosine thresholds in force for the configured embedder."""
        base = UNCALIBRATED
        if self.embedder is not None:
            base = CALIBRATED.get(self.embedder.model_id, UNCALIBRATED)
        name = self.settings.model_api.embedding_model
        override = self.settings.memory.facts.thresholds.get(name, FactThresholds())
        merged = dataclasses.replace(
            base, **{k: v for k, v in dataclasses.asdict(override).items() if v is not None}
        )
        assert merged.search is not None and merged.recall is not None
        assert merged.near_duplicate is not None
        return Thresholds(merged.search, merged.recall, merged.near_duplicate)

    def _embed_one(self, text: str) -> Vector | None:
        """The vector of ``text`` (cached by content hash and model), or None when no embedder
        answers; a failure is logged, never raised."""
        if self.embedder is None:
            return None
        model = self.embedder.model_id
        digest = content_hash(text)
        cached = self.store.cached_embedding(digest, model)
        if cached is not None:
            return cached
        try:
            vector: Vector = self.embedder.embed([text])[0]
        except EmbeddingUnavailable as exc:
            log.warning("facts.embed_failed error=%s", exc)
            return None
        self.store.cache_embedding(digest, model, vector)
        return vector

    def _link_vector(self, row: FactRow, vector: Vector | None) -> None:
        if vector is not None and self.embedder is not None:
            self.store.fact_link_vector(row.id, self.embedder.model_id, row.content_hash)

    def _pending(self) -> int:
        """Live facts whose words have no vector yet (0 without an embedder)."""
        if self.embedder is None:
            return 0
        return self.store.fact_pending_vectors(self.workspace, self.embedder.model_id, sorted(LIVE))

    def backfill(self, limit: int = BACKFILL_BATCH) -> int:
        """Embed facts (any workspace) saved while the embedder was down; returns how many."""
        if self.embedder is None:
            return 0
        model = self.embedder.model_id
        rows = self.store.fact_missing_vectors(model, sorted(LIVE), limit)
        if not rows:
            return 0
        todo = [r for r in rows if self.store.cached_embedding(r.content_hash, model) is None]
        if todo:
            try:
                vectors = self.embedder.embed([r.body for r in todo])
            except EmbeddingUnavailable as exc:
                log.warning("facts.backfill_failed error=%s", exc)
                return 0
            for row, vector in zip(todo, vectors, strict=True):
                self.store.cache_embedding(row.content_hash, model, vector)
        with self.store.transaction():
            for row in rows:
                self.store.fact_link_vector(row.id, model, row.content_hash)
        log.info("facts.backfilled vectors=%d", len(rows))
        return len(rows)

    # ---- ranking ----------------------------------------------------------------------
    def _query_vector(self, query: str) -> tuple[Vector | None, str | None]:
        """The query's vector, or None and why (``embeddings_unavailable``)."""
        if self.embedder is None:
            return None, "embeddings_unavailable"
        try:
            vector: Vector = embed_query(self.embedder, query)
        except EmbeddingUnavailable as exc:
            log.warning("facts.query_embed_failed error=%s", exc)
            return None, "embeddings_unavailable"
        return vector, None

    def _above(
        self, vector: Vector, floor: float, *, ranked: bool = False
    ) -> dict[str, tuple[float, str, float]]:
        """Facts of the workspace whose vector scores at least ``floor``: id -> (cosine, hash
        of the body that was embedded, ranking cosine). One matrix product over every vector.
        The ranking cosine is the cosine itself, or with ``ranked`` the cosine corrected for
        the fact's closeness to its neighbours (service/fact_hubs.py)."""
        assert self.embedder is not None
        found = self.store.fact_matrix(self.workspace, self.embedder.model_id)
        if not found.ids or found.matrix.shape[1] != vector.shape[0]:
            return {}
        # einsum runs in the calling thread; BLAS would wake its thread pool, which right after
        # an embedding (onnxruntime's threads still spinning) cost ~15 ms instead of ~0.2 ms.
        scores = np.einsum("ij,j->i", found.matrix, np.asarray(vector, dtype=np.float32))
        ranking = (
            adjusted(scores, self._hubs.get(found.ids, found.hashes, found.matrix))
            if ranked
            else scores
        )
        kept = np.flatnonzero(scores >= floor)
        ids, hashes = found.ids, found.hashes
        # Whole columns to Python floats at once: hundreds of facts pass a floor this low.
        return {
            ids[i]: (cosine, hashes[i], rank)
            for i, cosine, rank in zip(
                kept.tolist(), scores[kept].tolist(), ranking[kept].tolist(), strict=True
            )
        }

    @staticmethod
    def _current(
        above: Mapping[str, tuple[float, str, float]], fact_id: str, digest: str
    ) -> float | None:
        """The cosine of a fact if its vector was made from its current body."""
        hit = above.get(fact_id)
        return hit[0] if hit is not None and hit[1] == digest else None

    def _rank(
        self,
        query: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        *,
        limit: int,
        as_of: float | None = None,
        by_meaning: bool = True,
    ) -> tuple[list[SearchHit], str | None]:
        """Meaning above the search threshold fused with literal matches (always kept).

        At most ``limit`` hits that matched by meaning alone; every literal hit is included.
        ``as_of``: the opening time of the run asking, whose facts edited since are ranked
        (and returned) at the revision it holds (service/fact_revisions.py). ``by_meaning``
        False: by words alone, the embedder never loaded (degraded as without one).
        """
        if by_meaning:
            vector, degraded = self._query_vector(query)
        else:
            vector, degraded = None, "embeddings_unavailable"
        t = self.thresholds()
        # Shared words can lift a fact by at most WORD_WEIGHT, so look that far below.
        above = (
            self._above(vector, t.search - WORD_WEIGHT, ranked=True) if vector is not None else {}
        )
        phrase, words = literal_terms(query)
        # The facts that match by meaning alone are capped at ``limit``, and each one's place
        # is bounded by its ranking cosine: it ranks between that (floored at the threshold)
        # and WORD_WEIGHT above it. So the candidates are read best first, only those that
        # could still reach the ``limit``-th best of the ones that match by meaning for
        # certain (every literal match is read whatever the candidates); when some of those
        # were of another scope or status and the unread could still place, READ_MORE
        # times as many are read, until none could. The hits are those reading them all
        # gives; among 2,000 facts, a recall of 8 read tens of candidates instead of ~560.
        order = sorted(above, key=lambda i: -above[i][2])
        read = _worth_reading(order, above, t.search, limit) if READ_BEST_FIRST else len(order)
        while True:
            scored = self._scored(order[:read], above, t, statuses, scopes, phrase, words)
            if read >= len(order):
                break
            if _settled(scored, limit, max(t.search, above[order[read]][2] + WORD_WEIGHT)):
                break
            read = max(read, limit) * READ_MORE
        kept = _meaning_only_capped(scored, limit, lambda item: item[3])
        full = self.store.fact_get_many(self.workspace, [item[2].id for item in kept])
        hits = [
            SearchHit(
                fact_of(full[row.id]),
                score,
                self._current(above, row.id, row.content_hash) if "meaning" in matched else None,
                matched,
                strength,
            )
            for score, _, row, matched, strength in kept
            if row.id in full
        ]
        if as_of is not None:
            hits = hits_as_of(
                self.store,
                self.workspace,
                hits,
                since=as_of,
                statuses=statuses,
                scopes=scopes,
                query=query,
                vector=vector,
                embed=self._embed_one,
                thresholds=(t.search, t.near_duplicate),
            )
            hits = _meaning_only_capped(hits, limit, lambda hit: hit.matched)
        return hits, degraded

    def _scored(
        self,
        ids: Sequence[str],
        above: Mapping[str, tuple[float, str, float]],
        t: Thresholds,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        phrase: str,
        words: Sequence[str],
    ) -> list[_Scored]:
        """The search's hits among ``ids`` (facts above the floor) and every literal match,
        best first: (score, ranking, row, how it matched, strength)."""
        # Below the threshold, only a fact that shares a word with the query can still reach it.
        high = [i for i in ids if above[i][0] >= t.search]
        low = [i for i in ids if above[i][0] < t.search]
        rows = self.store.fact_search_rows(
            self.workspace,
            statuses,
            scopes,
            ids=high,
            phrase=phrase,
            words=words,
            ids_if_worded=low,
        )
        scored: list[_Scored] = []
        for row in rows:
            cosine = self._current(above, row.id, row.content_hash)
            meaning = ranking = None
            if cosine is not None:
                meaning = meaning_score(cosine, row.words_found, len(words))
                # Matched (or not) by its plain cosine; ordered by the one corrected for
                # hubs, never below the threshold it passed.
                ranking = meaning
                if meaning >= t.search:
                    hubbed = meaning_score(above[row.id][2], row.words_found, len(words))
                    ranking = max(t.search, hubbed)
            strength = search_score(
                meaning, row.literal, threshold=t.search, strong=t.near_duplicate
            )
            if strength is None:
                continue
            score = search_score(ranking, row.literal, threshold=t.search, strong=t.near_duplicate)
            assert score is not None  # ``ranking`` passes wherever ``meaning`` does
            matched: tuple[str, ...] = ()
            if meaning is not None and meaning >= t.search:
                matched = ("meaning",)
            if row.literal is not None:
                matched += (row.literal,)
            scored.append((round(score, 4), ranking or 0.0, row, matched, round(strength, 4)))
        scored.sort(key=lambda s: (-s[0], -s[1], -s[2].created_at, s[2].id))
        return scored

    def _near_duplicates(
        self, body: str, scope: str, vector: Vector | None, exclude: str | None = None
    ) -> tuple[NearDuplicate, ...]:
        """Live facts of the same scope that say nearly the same (at most three)."""
        scored: list[tuple[float, FactRow]] = []
        if vector is not None and self.embedder is not None:
            above = self._above(vector, self.thresholds().near_duplicate)
            rows = self.store.fact_get_many(self.workspace, list(above))
            for row in rows.values():
                sim = self._current(above, row.id, row.content_hash)
                if sim is not None and row.scope == scope and row.status in LIVE:
                    scored.append((sim, row))
        else:
            mine = normalize(body)
            for row in self.store.fact_candidates(self.workspace, sorted(LIVE), [scope]):
                overlap = word_overlap(mine, row.norm)
                if overlap >= NEAR_DUPLICATE_WORDS:
                    scored.append((overlap, row))
        scored = [(sim, row) for sim, row in scored if row.id != exclude]
        scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        return tuple(NearDuplicate(r.id, round(sim, 4), r.body) for sim, r in scored[:3])

    def _insert(self, row: FactRow, actor: Actor, action: str) -> None:
        self.store.fact_insert(row)
        self.store.fact_add_revision(
            RevisionRow(row.id, 1, row.body, actor.kind, actor.name, row.created_at)
        )
        self.store.fact_add_provenance(
            [
                ProvenanceRow(
                    row.id,
                    row.origin,
                    row.author,
                    row.run_id,
                    row.conversation,
                    None,
                    row.created_at,
                )
            ]
        )
        self._journal(action, actor, None, row)

    def _proposal_row(
        self,
        body: str,
        norm: str,
        kind: str,
        scope: str,
        *,
        origin: str,
        author: str,
        run_id: str | None,
        conversation: str | None,
        source: str | None,
        idempotency_key: str | None,
        now: float,
    ) -> FactRow:
        """A new fact awaiting review (``proposed``), at its first revision."""
        return FactRow(
            id=self._new_id(),
            workspace=self.workspace,
            body=body,
            norm=norm,
            kind=kind,
            scope=scope,
            status=PROPOSED,
            pinned=False,
            pinned_at=None,
            origin=origin,
            author=author,
            run_id=run_id,
            conversation=conversation,
            source=source,
            revision=1,
            content_hash=content_hash(body),
            created_at=now,
            updated_at=now,
            confirmed_at=None,
            forgotten_at=None,
            forgotten_from=None,
            merged_into=None,
            idempotency_key=idempotency_key,
        )

    # ---- journal and limits -----------------------------------------------------------
    def _journal(
        self, action: str, actor: Actor, before: FactRow | None, after: FactRow | None
    ) -> None:
        subject = after or before
        assert subject is not None
        self.store.fact_journal_add(
            JournalRow(
                workspace=self.workspace,
                fact_id=subject.id,
                action=action,
                actor_kind=actor.kind,
                actor=actor.name,
                run_id=actor.run_id,
                at=self.now(),
                before=snapshot(before),
                after=snapshot(after),
            )
        )

    def _rate(self, actor: Actor, bucket: str, limit: int, window_s: float) -> None:
        """Count one request of ``actor`` in ``bucket``; raise RateLimited past ``limit``.

        Kept in the store, so the CLI and the daemon share one window per user.
        """
        now = self.now()
        who = f"{actor.kind}:{actor.name}"
        hits = self.store.fact_rate_hits(self.workspace, who, bucket, now - window_s)
        if len(hits) >= limit:
            retry = max(1.0, hits[0] + window_s - now)
            metrics.FACT_WRITES.labels(action=bucket, outcome="rate_limited").inc()
            raise RateLimited(
                f"at most {limit} {bucket} per {_window(window_s)} per user",
                retry_after=retry,
                user=actor.name,
            )
        self.store.fact_rate_add(self.workspace, who, bucket, now)

    @contextmanager
    def _write(self) -> Iterator[None]:
        with self.store.transaction():
            yield

    def _room_for_kept(self) -> bool:
        counts = self.store.fact_status_counts(self.workspace)
        return sum(counts.get(status, 0) for status in KEPT) < self.limits.kept

    def _room_for_proposal(self) -> bool:
        counts = self.store.fact_status_counts(self.workspace)
        return counts.get(PROPOSED, 0) < self.limits.proposed

    def _room_for_pin(self) -> bool:
        pinned = self.store.fact_pinned_count(self.workspace, [ACTIVE, SUSPECT])
        return pinned < self.limits.pinned

    def _save(self, before: FactRow, **changes: Any) -> FactRow:
        after = dataclasses.replace(before, **changes)
        self.store.fact_update(after)
        return after


def _worth_reading(
    order: Sequence[str], above: Mapping[str, tuple[float, str, float]], search: float, limit: int
) -> int:
    """How many of ``order`` (candidates by ranking cosine, best first) could rank with the
    ``limit``-th of those above the threshold by their plain cosine, which match by meaning
    whatever their words (when they are of the scopes and statuses asked)."""
    sure = [i for i in order if above[i][0] >= search][:limit]
    if len(sure) < limit:
        return len(order)
    bar = max(search, above[sure[-1]][2])
    read = 0
    while read < len(order) and max(search, above[order[read]][2] + WORD_WEIGHT) >= bar:
        read += 1
    return read


def _settled(scored: Sequence[_Scored], limit: int, unread_best: float) -> bool:
    """Whether ``limit`` facts matched by meaning alone rank above ``unread_best``, the
    highest ranking a candidate not read could reach (strictly: an equal one could still
    come first by its date)."""
    meaning_only = [item[1] for item in scored if item[3] == ("meaning",)]
    return (
        len(meaning_only) >= limit and sorted(meaning_only, reverse=True)[limit - 1] > unread_best
    )


def _meaning_only_capped(
    items: Sequence[_T], limit: int, matched: Callable[[_T], tuple[str, ...]]
) -> list[_T]:
    """``items`` in order, keeping at most ``limit`` that matched by meaning alone (every
    literal match is kept)."""
    kept: list[_T] = []
    meaning_only = 0
    for item in items:
        if matched(item) == ("meaning",):
            if meaning_only >= limit:
                continue
            meaning_only += 1
        kept.append(item)
    return kept


def _window(seconds: float) -> str:
    return "minute" if seconds == 60 else "hour" if seconds == 3600 else f"{seconds:g} s"
