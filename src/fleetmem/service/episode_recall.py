"""Recalling episodes: the provider's answer, filtered through fleetmem's own index.

The reading half of :class:`fleetmem.service.memory.MemoryService`. The provider ranks; only
the index decides what may be shown (a known id, not forgotten, in one of the caller's
scopes), whatever the provider says. ``recall_alongside`` runs a recall on the service's own
small pool while the caller does other work (the facts of a recall answer).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from fleetmem import metrics
from fleetmem.config import Settings
from fleetmem.errors import StoreError
from fleetmem.providers.base import MAX_ITEM_ID, MAX_ITEM_TEXT, EpisodeProvider
from fleetmem.service.episode_results import EpisodeHit, RecallResult
from fleetmem.service.memory_inputs import check_limit, check_paths, check_query, short_error
from fleetmem.service.recall_scopes import check_scopes, groups, merge
from fleetmem.store.base import Store
from fleetmem.telemetry import traced

log = logging.getLogger("fleetmem.memory")

DEFAULT_RECALL_LIMIT = 8
#: Episode recalls running beside other work (see ``recall_alongside``): two cores here, and
#: each recall mostly waits on the provider, so two threads keep both cores busy.
RECALL_WORKERS = 2
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Answer:
    """The merged answer of one or more provider calls."""

    items: Sequence[Any]
    degraded: str | None
    invalid: int


class EpisodeRecallMixin:
    """``recall`` and ``recall_alongside``; the service provides the attributes below."""

    store: Store
    provider: EpisodeProvider
    overlap_recalls: bool
    _recalls: ThreadPoolExecutor
    _calls: ThreadPoolExecutor
    _settings: Callable[[], Settings]
    _closed: bool
    _clock: Callable[[], float]

    def _call(self, fn: Callable[[], Any], *, timeout: float) -> Any:
        """``fn()`` (a provider call), given up on after ``timeout`` seconds."""
        if getattr(self.provider, "enforces_deadlines", False):
            # An MCP-backed provider cuts its own calls off at their deadline.
            return fn()
        future = self._calls.submit(fn)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout as exc:
            if future.done():
                raise  # the provider itself raised TimeoutError
            future.cancel()
            raise TimeoutError(f"provider call exceeded {timeout:g}s") from exc

    def check_recall_arguments(
        self, query: str, *, limit: int = DEFAULT_RECALL_LIMIT, paths: Sequence[str] = ()
    ) -> None:
        """Raise InvalidInput as ``recall`` would for these arguments (nothing is asked)."""
        check_query(query)
        check_limit(limit)
        check_paths(paths)

    def _note_degraded(self, provider: str, reason: str) -> None:
        # Kept for the doctor's 24-hour row (REQ-19); a store that cannot keep it (it is the
        # outage) costs the row, never the recall.
        try:
            self.store.note_degraded_recall(at=self._clock(), provider=provider, reason=reason)
        except StoreError as exc:
            log.warning("recall.degraded_not_recorded error=%s", exc)

    @traced("fleetmem.recall", lambda r: _recall_attrs(r))
    def recall(
        self,
        query: str,
        *,
        scopes: Sequence[str],
        limit: int = DEFAULT_RECALL_LIMIT,
        paths: Sequence[str] = (),
    ) -> RecallResult:
        """Episodes matching ``query`` in ``scopes``, filtered through fleetmem's own index."""
        query = check_query(query)
        limit = check_limit(limit)
        paths = check_paths(paths)
        scopes = check_scopes(scopes)
        provider = self.provider.name
        if not scopes:
            metrics.RECALLS.labels(provider=provider, outcome="ok").inc()
            return RecallResult(items=(), provider=provider, degraded=None)
        # The contract takes two scopes a call: more are asked in groups and merged.
        answers: list[Any] = []
        failed = 0
        for group in groups(scopes):
            answer = self._ask(provider, query, group, limit, paths)
            if answer is None:
                failed += 1
            else:
                answers.append(answer)
        if not answers:
            metrics.RECALLS.labels(provider=provider, outcome="degraded").inc()
            self._note_degraded(provider, "provider_unavailable")
            return RecallResult(items=(), provider=provider, degraded="provider_unavailable")
        # Merged whole: the index may still drop some, and ``_filter`` applies the limit.
        everything = sum(len(a.items) for a in answers)
        merged = (
            merge([a.items for a in answers], everything) if len(answers) > 1 else answers[0].items
        )
        reasons = [str(a.degraded) for a in answers if a.degraded]
        if failed:
            reasons.insert(0, "provider_unavailable")
        degraded = reasons[0] if reasons else None
        answer = _Answer(merged, degraded, sum(getattr(a, "invalid", 0) for a in answers))
        try:
            items, dropped = self._filter(answer.items, set(scopes), limit)
        except StoreError as exc:
            # Only fleetmem's own index may say what is shown: without it, nothing is.
            log.warning("recall.store_unavailable provider=%s error=%s", provider, exc)
            metrics.RECALLS.labels(provider=provider, outcome="degraded").inc()
            return RecallResult(items=(), provider=provider, degraded="store_unavailable")
        if answer.invalid:
            dropped["invalid"] = dropped.get("invalid", 0) + answer.invalid
        for reason, n in dropped.items():
            metrics.RESULTS_DROPPED.labels(provider=provider, reason=reason).inc(n)
        outcome = "degraded" if answer.degraded else "ok"
        metrics.RECALLS.labels(provider=provider, outcome=outcome).inc()
        if answer.degraded:
            self._note_degraded(provider, str(answer.degraded))
        return RecallResult(
            items=tuple(items), provider=provider, degraded=answer.degraded, dropped=dropped
        )

    def _ask(
        self, provider: str, query: str, scopes: list[str], limit: int, paths: list[str]
    ) -> Any:
        """One provider call for at most two scopes; None when the provider failed."""
        started = time.perf_counter()
        try:
            return self._call(
                lambda: self.provider.recall(query, scopes, limit, paths),
                timeout=self._settings().memory.episodes.provider_timeout_s,
            )
        except Exception as exc:
            log.warning(
                "recall.provider_unavailable provider=%s error=%s", provider, short_error(exc)
            )
            return None
        finally:
            metrics.PROVIDER_DURATION.labels(provider=provider, op="recall").observe(
                time.perf_counter() - started
            )

    def recall_alongside(
        self,
        query: str,
        alongside: Callable[[], T],
        *,
        scopes: Sequence[str],
        limit: int = DEFAULT_RECALL_LIMIT,
        paths: Sequence[str] = (),
    ) -> tuple[RecallResult, T]:
        """``recall(...)`` and ``alongside()`` at the same time: the recall on this service's
        own small pool, ``alongside`` in the calling thread; returns both results.

        A recall answer ranks facts while the provider searches episodes: most of an
        episode recall is spent waiting (the provider's session, SQLite, the model, all of
        which release the GIL), so the two overlap on two cores. The answer is the one the
        two calls give one after the other. Bad arguments raise here, before either runs;
        an error of ``alongside`` is raised once the recall has finished.
        """
        query = check_query(query)
        limit = check_limit(limit)
        paths = check_paths(paths)

        def episodes() -> RecallResult:
            return self.recall(query, scopes=scopes, limit=limit, paths=paths)

        pending = self._start_recall(episodes) if self.overlap_recalls else None
        if pending is None:
            return episodes(), alongside()
        try:
            beside = alongside()
        finally:
            # Never leave the recall running behind the caller (even when ``alongside`` fails).
            try:
                found = pending.result()
            except CancelledError:  # the service closed under it: recall here instead
                found = episodes()
        return found, beside

    def _start_recall(self, fn: Callable[[], RecallResult]) -> Future[RecallResult] | None:
        """``fn`` running on the recall pool, or None once the service is closed."""
        if self._closed:
            return None
        try:
            return self._recalls.submit(fn)
        except RuntimeError:  # shut down between the check and the submit
            return None

    def _filter(
        self, raw: Sequence[Any], allowed: set[str], limit: int
    ) -> tuple[list[EpisodeHit], dict[str, int]]:
        provider = self.provider.name
        dropped: Counter[str] = Counter()
        valid = []
        for item in raw:
            text, pid, score = getattr(item, "text", None), getattr(item, "id", None), item.score
            if (
                not isinstance(pid, str)
                or not isinstance(text, str)
                or not 0 < len(pid) <= MAX_ITEM_ID
                or len(text) > MAX_ITEM_TEXT
                or (score is not None and not math.isfinite(score))
            ):
                dropped["invalid"] += 1
                continue
            valid.append(item)
        index = self.store.index_rows(provider, [i.id for i in valid])
        # Only the columns the filter and the hits read: the text shown is the provider's.
        episodes = self.store.get_episodes([r.episode_id for r in index.values()], bodies=False)
        kept: list[EpisodeHit] = []
        for item in valid:
            row = index.get(item.id)
            if row is None:
                dropped["unknown_id"] += 1
                continue
            ep = episodes.get(row.episode_id)
            if row.forgotten_at is not None or ep is None or ep.forgotten_at is not None:
                dropped["forgotten"] += 1
                continue
            # The indexed scope is the only one trusted; the provider's opinion is ignored.
            if row.scope not in allowed:
                dropped["scope"] += 1
                continue
            if len(kept) >= limit:
                break
            kept.append(
                EpisodeHit(
                    episode_id=ep.id,
                    provider=provider,
                    provider_id=item.id,
                    text=item.text,
                    score=item.score,
                    run_id=ep.run_id,
                    agent=ep.agent,
                    adapter=ep.adapter,
                    model=ep.model,
                    repo=ep.repo,
                    branch=ep.branch,
                    outcome=ep.outcome,
                    started_at=ep.started_at,
                    trust_class=ep.trust_class,
                )
            )
        return kept, dict(dropped)


def _recall_attrs(result: RecallResult) -> dict[str, object]:
    # Counts and codes only: the query and the items' text never reach a span.
    return {
        "provider": result.provider,
        "items": len(result.items),
        "degraded": result.degraded or "none",
        "dropped": sum(result.dropped.values()),
    }
