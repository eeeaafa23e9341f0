"""Tidy up: proposed merges of near-duplicate active facts (seed 003 S13, §9's "propose
merges through the existing tidy-up flow").

Pairs of active facts of the same scope that say nearly the same, by the same rule a new
fact's near duplicates are found: cosine of their vectors at or above the near-duplicate
threshold of the embedder in use, or without an embedder the share of content words
(:data:`fleetmem.core.facts.NEAR_DUPLICATE_WORDS`). Nothing is merged on its own: a person
merges a pair (the existing merge review: both provenances kept) or keeps both, which is
remembered at the two revisions compared, so the pair is proposed again only if one of the
two is reworded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from fleetmem import metrics
from fleetmem.core.facts import ACTIVE, NEAR_DUPLICATE_WORDS, WRITES_PER_MINUTE, Actor
from fleetmem.core.tidy import word_pairs
from fleetmem.errors import InvalidInput, InvalidTransition
from fleetmem.service.fact_base import BACKFILL_BATCH, FactServiceBase, local_user, log, snapshot
from fleetmem.service.records.facts import Fact, KeptApart, fact_of, kept_apart_of
from fleetmem.store.facts import FactRow, JournalRow, KeptPairRow

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

#: Pairs one review shows at most (the most similar first).
TIDY_LIMIT = 50


@dataclass(frozen=True, slots=True)
class MergePair:
    """Two active facts that say nearly the same. ``keep`` is the one a plain Merge keeps
    (pinned first, then the older), ``fold`` the one merged into it."""

    keep: Fact
    fold: Fact
    similarity: float
    matched: Literal["meaning", "words"]


@dataclass(frozen=True, slots=True)
class TidyUp:
    pairs: tuple[MergePair, ...]
    #: Pairs found in all (``pairs`` holds at most the limit asked for).
    total: int
    #: ``embeddings_unavailable`` when the pairs were found by words alone.
    degraded: str | None


class FactTidyMixin(FactServiceBase):
    """The Tidy up half of :class:`fleetmem.service.facts.FactService`."""

    def tidy_up(self, *, limit: int = TIDY_LIMIT) -> TidyUp:
        """Near-duplicate pairs of active facts of the same scope, most similar first, less
        the pairs a person kept apart (unless one of the two was reworded since)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 500")
        rows = self.store.fact_candidates(self.workspace, [ACTIVE], None)
        by_scope: dict[str, list[FactRow]] = defaultdict(list)
        for row in rows:
            by_scope[row.scope].append(row)
        vectors = self._current_vectors(rows)
        degraded = None if vectors is not None else "embeddings_unavailable"
        kept = {
            (k.first_id, k.second_id): (k.first_revision, k.second_revision)
            for k in self.store.fact_kept_pairs(self.workspace)
        }
        found: list[MergePair] = []
        for group in by_scope.values():
            if len(group) < 2:
                continue
            for a, b, similarity, matched in self._similar(group, vectors):
                first, second = sorted((a, b), key=lambda r: r.id)
                if kept.get((first.id, second.id)) == (first.revision, second.revision):
                    continue
                keep, fold = sorted((a, b), key=_keep_order)
                found.append(MergePair(fact_of(keep), fact_of(fold), round(similarity, 4), matched))
        found.sort(key=lambda p: (-p.similarity, p.keep.id, p.fold.id))
        return TidyUp(tuple(found[:limit]), len(found), degraded)

    def keep_both(self, first_id: str, second_id: str, *, actor: Actor | None = None) -> KeptApart:
        """A person's "Keep both": the two facts are different; Tidy up stops proposing the
        pair (until one of them is reworded). Journaled on the first of the two."""
        actor = actor or local_user()
        if actor.kind != "human":
            raise InvalidInput("actor", actor.name, "only a person reviews facts")
        a, b = sorted((self._require(first_id), self._require(second_id)), key=lambda r: r.id)
        if a.id == b.id:
            raise InvalidInput("second", second_id, "a fact is not a duplicate of itself")
        for row in (a, b):
            if row.status != ACTIVE:
                raise InvalidTransition(
                    f"Tidy up compares active facts; {row.id} is {row.status}", existing=row.id
                )
        now = self.now()
        kept = KeptPairRow(self.workspace, a.id, a.revision, b.id, b.revision, actor.name, now)
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self.store.fact_keep_pair(kept)
            after = {**(snapshot(a) or {}), "kept_apart_from": b.id}
            self.store.fact_journal_add(
                JournalRow(
                    workspace=self.workspace,
                    fact_id=a.id,
                    action="keep_both",
                    actor_kind=actor.kind,
                    actor=actor.name,
                    run_id=None,
                    at=now,
                    before=snapshot(a),
                    after=after,
                )
            )
        metrics.FACT_WRITES.labels(action="keep_both", outcome="ok").inc()
        log.info("fact.kept_both first=%s second=%s actor=%s", a.id, b.id, actor.kind)
        return kept_apart_of(kept)

    # ---- internals ----------------------------------------------------------------------
    def _current_vectors(self, rows: Sequence[FactRow]) -> dict[str, np.ndarray] | None:
        """Each fact's vector of its current words, or None without an embedder. Facts saved
        while the embedder was down are embedded first, as a search does."""
        if self.embedder is None:
            return None
        model = self.embedder.model_id
        if self.store.fact_pending_vectors(self.workspace, model, [ACTIVE]):
            self.backfill(BACKFILL_BATCH)
        found = self.store.fact_matrix(self.workspace, model)
        digest = {row.id: row.content_hash for row in rows}
        return {
            fact_id: found.matrix[i]
            for i, fact_id in enumerate(found.ids)
            if digest.get(fact_id) == found.hashes[i]
        }

    def _similar(
        self, group: Sequence[FactRow], vectors: dict[str, np.ndarray] | None
    ) -> list[tuple[FactRow, FactRow, float, Literal["meaning", "words"]]]:
        """Pairs of ``group`` (one scope) at or above the near-duplicate threshold."""
        if vectors is None:
            pairs = word_pairs([r.norm for r in group], NEAR_DUPLICATE_WORDS)
            return [(group[i], group[j], sim, "words") for i, j, sim in pairs]
        embedded = [r for r in group if r.id in vectors]
        if len(embedded) < 2:
            return []
        matrix = np.stack([vectors[r.id] for r in embedded]).astype(np.float32)
        scores = matrix @ matrix.T
        floor = self.thresholds().near_duplicate
        rows_i, cols_j = np.nonzero(np.triu(scores >= floor, k=1))
        return [
            (embedded[i], embedded[j], float(scores[i, j]), "meaning")
            for i, j in zip(rows_i.tolist(), cols_j.tolist(), strict=True)
        ]


def _keep_order(row: FactRow) -> tuple[int, float, str]:
    """Which of two facts a plain Merge keeps: a pinned one, else the older."""
    return (0 if row.pinned else 1, row.created_at, row.id)
