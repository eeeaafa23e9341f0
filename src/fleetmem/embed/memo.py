"""One embedding per query, however many parts of a recall need it.

A recall embeds its query twice without this: once in the episode provider's index (the
built-in provider) and once to rank facts by meaning. :class:`RecentQueries` wraps the
configured embedder and remembers the vectors of single texts (queries) embedded in the last
few seconds, so the second use within one recall is free. It remembers nothing longer than
``ttl_s`` and at most ``size`` texts; batches (documents being indexed) pass straight through.
Everything else about the wrapped embedder (``model_id``, ``load``, ``close``...) is its own.

A recall ranks its facts and its episodes at the same time (on two threads), so both may ask
for the query's vector at once: the second asker waits for the embedding already running
instead of starting its own (on two cores, a second model run would slow both), and gets its
vector, or its error, when it finishes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from fleetmem.embed.base import Embedder, Vector, Vectors, embed_query

#: Long enough for every part of one recall, short enough never to serve a stale model.
DEFAULT_TTL_S = 5.0
DEFAULT_SIZE = 64


class RecentQueries:
    """An :class:`Embedder` that embeds a query once for all the callers of one recall."""

    def __init__(
        self,
        inner: Embedder,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        size: int = DEFAULT_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self._ttl_s = ttl_s
        self._size = size
        self._clock = clock
        self._lock = threading.Lock()
        # Keyed by ("text" or "query", text): a query may be embedded differently from the
        # same words as a document (the offline model's int8 copy).
        self._recent: OrderedDict[tuple[str, str], tuple[float, Vectors]] = OrderedDict()
        # Queries being embedded right now, so a concurrent asker waits instead of repeating.
        self._running: dict[tuple[str, str], Future[Vectors]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """As the wrapped embedder; a single text embedded in the last ``ttl_s`` (or being
        embedded by another thread right now) is reused."""
        if isinstance(texts, str) or len(texts) != 1:
            return self.inner.embed(texts)
        return self._once(("text", texts[0]), lambda: self.inner.embed(texts))

    def embed_query(self, text: str) -> Vector:
        """The query's vector by the wrapped embedder's query path (:func:`embed_query`),
        reused within ``ttl_s`` as :meth:`embed` reuses a single text."""
        row: Vector = self._once(("query", text), lambda: embed_query(self.inner, text)[None, :])[0]
        return row

    def _once(self, key: tuple[str, str], compute: Callable[[], Vectors]) -> Vectors:
        now = self._clock()
        with self._lock:
            hit = self._recent.get(key)
            if hit is not None and 0 <= now - hit[0] <= self._ttl_s:
                self._recent.move_to_end(key)
                return hit[1].copy()
            running = self._running.get(key)
            if running is None:
                mine: Future[Vectors] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result().copy()
        try:
            vectors = compute()
        except BaseException as exc:
            with self._lock:
                self._running.pop(key, None)
            mine.set_exception(exc)
            raise
        with self._lock:
            self._running.pop(key, None)
            self._recent[key] = (now, vectors.copy())
            self._recent.move_to_end(key)
            while len(self._recent) > self._size:
                self._recent.popitem(last=False)
        mine.set_result(vectors.copy())
        return vectors

    def forget(self) -> None:
        """Drop every remembered vector (benchmarks time each embedding on its own)."""
        with self._lock:
            self._recent.clear()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: load, close, the model's own.
        return getattr(self.inner, name)
