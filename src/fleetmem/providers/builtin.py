"""The built-in provider: hybrid BM25 + vector ranking over fleetmem's own store.

Its ids are episode ids. It honours the scope hint itself, but the memory service filters
its answers through the provider index exactly as it does an external provider's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.core.episode import content_hash
from fleetmem.core.ranking import reciprocal_rank_fusion
from fleetmem.core.textquery import fts_match
from fleetmem.embed.base import Embedder
from fleetmem.errors import EmbeddingUnavailable
from fleetmem.providers.base import MAX_ITEM_TEXT, ProviderItem, ProviderRecall
from fleetmem.store.base import Store, Vector

log = logging.getLogger(__name__)

BUILTIN = "builtin"
#: Candidates taken from each channel before fusion; wide enough that fusion can reorder.
CANDIDATES = 50


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

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        self._store = store
        self._embedder = embedder

    @property
    def name(self) -> str:
        return BUILTIN

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

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
        vector, digest, model_id = self.embed_document(episode)
        summary = episode.get("summary")
        self._store.builtin_put(
            episode_id,
            text,
            summary if isinstance(summary, str) else None,
            vector,
            digest,
            model_id,
        )
        return [episode_id]

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        degraded: str | None = None
        match = fts_match(query)
        text_ids = self._store.search_text(match, scopes, CANDIDATES) if match else []
        vector_ids: list[str] = []
        if self._embedder is not None:
            try:
                qvec = self._embedder.embed([query])[0]
            except EmbeddingUnavailable:
                degraded = "embeddings_unavailable"
            else:
                hits = self._store.search_vector(qvec, self._embedder.model_id, scopes, CANDIDATES)
                vector_ids = [i for i, _ in hits]
        candidates = list(dict.fromkeys([*text_ids, *vector_ids]))
        if not candidates:
            return ProviderRecall(items=(), degraded=degraded)
        rows = self._store.get_episodes(candidates)
        wanted = set(paths)
        boosted = frozenset(
            eid
            for eid, row in rows.items()
            if wanted and row.episode and wanted & set(row.episode.get("files_touched") or ())
        )
        fused = reciprocal_rank_fusion(
            [text_ids, vector_ids] if vector_ids else [text_ids],
            recency={eid: row.started_at for eid, row in rows.items()},
            boosted=boosted,
            limit=limit,
        )
        items = []
        for ranked in fused:
            row = rows.get(ranked.id)
            if row is None or row.text is None:
                continue
            items.append(
                ProviderItem(id=ranked.id, text=row.text[:MAX_ITEM_TEXT], score=ranked.score)
            )
        return ProviderRecall(items=tuple(items), degraded=degraded)

    def forget(self, provider_id: str) -> bool:
        return self._store.builtin_delete(provider_id)
