"""Briefings and recall answers composed from the services that exist: runs and episodes.

The composition itself is pure (:mod:`fleetmem.core.briefing`); this module gathers its
inputs, draws a fresh nonce per document (``secrets.token_hex(16)``) and counts deliveries.
Facts come from an optional callable so the facts service can plug in without this module
knowing its types: it receives a :class:`Subject` and returns fact items, already ranked
(confidence, then recency, then id) and limited to what the subject may see.
"""

from __future__ import annotations

import copy
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fleetmem import metrics
from fleetmem.config import Settings
from fleetmem.core.briefing import (
    RECALL_ORDER,
    BriefingInputs,
    Composed,
    assemble_recall,
    collision_item,
    compose_briefing,
    episode_item,
    recent_run_item,
)
from fleetmem.core.episode_brief import EpisodeBrief, brief_from_episode
from fleetmem.core.fence import FenceError, NonceCollision
from fleetmem.core.scope import project_scope, validate_agent_name, validate_repo_key
from fleetmem.core.wrapper import Item
from fleetmem.errors import InvalidInput, StoreError
from fleetmem.service.memory import DEFAULT_RECALL_LIMIT, EpisodeHit, MemoryService
from fleetmem.service.runs import Caller, RunsService
from fleetmem.store.base import DeliveryRow, EpisodeRow, RunRow
from fleetmem.telemetry import span

log = logging.getLogger("fleetmem.briefings")

BRIEFING_EPISODES = 3
# Facts asked for beyond the section's cap of 8, so the section can say how many it left out.
BRIEFING_FACTS_CONSIDERED = 100
RECENT_RUNS = 5
MAX_COLLISIONS_CONSIDERED = 50
DELIVERIES = ("prompt", "tool", "resource")
_NONCE_ATTEMPTS = 4


@dataclass(frozen=True, slots=True)
class Subject:
    """Whom a briefing or recall answer is for, and what it may see."""

    agent: str
    repo: str | None
    branch: str | None
    scopes: tuple[str, ...]
    run_id: str | None = None
    files: tuple[str, ...] = ()

    @property
    def episode_scopes(self) -> tuple[str, ...]:
        return tuple(s for s in self.scopes if s.startswith("project:"))


#: Fact items for a subject. ``query`` is None for a briefing (top facts in scope), else the
#: recall query; ``limit`` is the most items wanted (more are allowed: the caller caps).
FactsSource = Callable[[Subject, str | None, int], Sequence[Item]]


def subject_of(caller: Caller) -> Subject:
    """The subject of an attributed caller: its run's repository, branch, scopes and files."""
    return Subject(
        agent=caller.agent,
        repo=caller.repo,
        branch=caller.branch,
        scopes=caller.scopes,
        run_id=caller.run_id,
        files=caller.files,
    )


def _fresh_nonce() -> str:
    return secrets.token_hex(16)


def _count(agent: str, delivery: str, outcome: str, reason: str | None, size: int | None) -> None:
    metrics.BRIEFINGS.labels(agent=agent, delivery=delivery, outcome=outcome).inc()
    if outcome == "skipped":
        metrics.BRIEFING_SKIPS.labels(agent=agent, reason=reason or "briefing_failed").inc()
    if size is not None:
        metrics.BRIEFING_BYTES.labels(agent=agent).set(size)


class BriefingService:
    """Computes briefings and recall documents; never fails on a provider or facts failure."""

    def __init__(
        self,
        *,
        memory: MemoryService,
        runs: RunsService,
        settings: Callable[[], Settings],
        facts: FactsSource | None = None,
        clock: Callable[[], float] = time.time,
        new_nonce: Callable[[], str] = _fresh_nonce,
    ) -> None:
        self._memory = memory
        self._runs = runs
        self._settings = settings
        self._facts = facts
        self._clock = clock
        self._new_nonce = new_nonce
        # Tags this process's delivery rows, so the daemon adds only other processes' rows.
        self._origin = secrets.token_hex(8)
        self._adopted: int | None = None

    def with_facts_source(self, facts: FactsSource | None) -> BriefingService:
        """A copy of this service whose facts section comes from ``facts`` (another
        workspace's); deliveries are still counted as this process's."""
        other = copy.copy(self)
        other._facts = facts
        return other

    def set_facts_source(self, facts: FactsSource | None) -> None:
        """Plug in (or remove) the facts section's source."""
        self._facts = facts

    # ---- subjects ---------------------------------------------------------------------
    def preview_subject(
        self, agent: str, *, repo: str | None = None, branch: str | None = None
    ) -> Subject:
        """Whom an operator preview is for: ``repo`` if given, else the agent's newest live
        run, else the repository of its latest stored run, else no repository at all."""
        validate_agent_name(agent)
        if repo is not None:
            key = validate_repo_key(repo)
            return Subject(agent=agent, repo=key, branch=branch, scopes=(project_scope(key),))
        caller = self._runs.newest_live_caller(agent)
        if caller is not None:
            return subject_of(caller)
        last = self._memory.store.latest_run(agent)
        if last is not None and last.repo is not None:
            return Subject(
                agent=agent,
                repo=last.repo,
                branch=branch or last.branch,
                scopes=(project_scope(last.repo),),
            )
        return Subject(agent=agent, repo=None, branch=None, scopes=())

    # ---- briefings --------------------------------------------------------------------
    def briefing(self, subject: Subject) -> Composed:
        """The briefing ``subject`` would receive now (REQ-14). Writes nothing."""
        max_chars = self._settings().agent(subject.agent).briefing_max_chars
        if subject.repo is None:
            return Composed(text="", document=None, nonce=None)
        collisions = self._runs.collisions(
            subject.repo,
            branch=subject.branch,
            files=subject.files,
            exclude_run_id=subject.run_id,
        )[:MAX_COLLISIONS_CONSIDERED]
        recent = self._runs.recent_runs(subject.repo, subject.branch, RECENT_RUNS)
        episodes: list[EpisodeBrief] = []
        degraded: str | None = None
        if subject.episode_scopes:
            query = " ".join(p for p in (subject.repo, subject.branch, subject.agent) if p)
            result = self._memory.recall(
                query[:512], scopes=subject.episode_scopes, limit=BRIEFING_EPISODES
            )
            episodes = self._episode_briefs(subject, result.items)
            degraded = result.degraded
        inputs = BriefingInputs(
            repo=subject.repo,
            branch=subject.branch,
            collisions=[
                collision_item(
                    run_id=c.run.run_id,
                    agent=c.run.agent,
                    branch=c.run.branch,
                    strength=c.strength,
                    last_seen=c.run.last_seen_at,
                    files=c.run.files,
                    overlap=c.overlap,
                )
                for c in collisions
            ],
            recent_runs=[_recent(r, show_branch=subject.branch is None) for r in recent],
            facts=self._fact_items(subject, None, BRIEFING_FACTS_CONSIDERED),
            episodes=episodes,
            episodes_provider=self._memory.provider.name,
            episodes_degraded=degraded,
        )
        return self._with_fresh_nonce(
            lambda nonce: compose_briefing(inputs, max_chars=max_chars, nonce=nonce)
        )

    def briefing_for_caller(self, caller: Caller) -> Composed:
        """The briefing of an attributed caller's run, as computed now."""
        return self.briefing(subject_of(caller))

    def preview(
        self, agent: str, *, repo: str | None = None, branch: str | None = None
    ) -> Composed:
        """An operator preview: exactly what the agent would receive now; no exposure."""
        return self.briefing(self.preview_subject(agent, repo=repo, branch=branch))

    def count_delivery(
        self,
        agent: str,
        delivery: str,
        briefing: Composed | None,
        *,
        reason: str | None = None,
    ) -> None:
        """Count a briefing served to a run (``None``: it could not be, so it was skipped,
        for ``reason``), here and in the store for the daemon's /metrics."""
        if delivery not in DELIVERIES:
            raise InvalidInput("delivery", delivery, "must be prompt, tool or resource")
        label = agent if agent in self._settings().agents else "other"
        outcome = "skipped" if briefing is None else "empty" if briefing.empty else "ok"
        if briefing is None:
            reason = reason or "briefing_failed"
        size = None if briefing is None else briefing.size_bytes
        # The span covers the counting; the briefing's text is never put in it.
        with span("fleetmem.briefing", agent=label, delivery=delivery, outcome=outcome, bytes=size):
            _count(label, delivery, outcome, reason, size)
            try:
                self._memory.store.note_briefing_delivery(
                    DeliveryRow(self._clock(), self._origin, label, delivery, outcome, reason, size)
                )
            except StoreError as exc:  # counted here; the daemon's /metrics misses this one
                log.warning("briefing.delivery_not_recorded error=%s", exc)

    def adopt_deliveries(self) -> int:
        """Add to this process's counters the deliveries other processes of the home made
        since the last call (the daemon, every tick); returns how many. The first call only
        marks where to start: counters begin when the daemon does."""
        store = self._memory.store
        if self._adopted is None:
            self._adopted = store.briefing_deliveries_top()
            return 0
        self._adopted, rows = store.briefing_deliveries_after(
            self._adopted, exclude_origin=self._origin
        )
        for row in rows:
            _count(row.agent, row.delivery, row.outcome, row.reason, row.bytes)
        return len(rows)

    # ---- recall -----------------------------------------------------------------------
    def recall(
        self,
        subject: Subject,
        query: str,
        *,
        paths: Sequence[str] = (),
        limit: int = DEFAULT_RECALL_LIMIT,
    ) -> Composed:
        """A recall answer (REQ-12): facts, episodes, recent runs editing ``paths``; 16 KiB."""
        # With no project scope (unattributed, or outside a repository) the provider is not
        # asked, but the arguments are still checked the same way. Facts are ranked while the
        # provider searches (both need the query's vector: it is embedded once, see
        # fleetmem.embed.memo); the sections are the ones the two give one after the other.
        result, facts = self._memory.recall_alongside(
            query,
            lambda: list(self._fact_items(subject, query, limit))[:limit],
            scopes=subject.episode_scopes,
            limit=limit,
            paths=paths,
        )
        episodes = [_episode(hit) for hit in result.items]
        degraded = result.degraded
        runs: list[RunRow] = []
        if paths and subject.repo is not None:
            runs = self._runs.runs_editing(subject.repo, paths, RECENT_RUNS)
        return self._with_fresh_nonce(
            lambda nonce: assemble_recall(
                facts=facts,
                episodes=episodes,
                recent_runs=[_recent(r, show_branch=True) for r in runs],
                nonce=nonce,
                repo=subject.repo,
                provider=self._memory.provider.name,
                degraded=degraded,
            )
        )

    def unavailable_recall(
        self, query: str, *, paths: Sequence[str] = (), limit: int = DEFAULT_RECALL_LIMIT
    ) -> Composed:
        """The recall answer served while the store is unavailable: no section has items,
        ``degraded="store_unavailable"`` (as a provider outage reads). Arguments are still
        checked, so a bad one is refused the same way in an outage."""
        self._memory.check_recall_arguments(query, limit=limit, paths=paths)
        return self._with_fresh_nonce(
            lambda nonce: assemble_recall(
                facts=(),
                episodes=(),
                recent_runs=(),
                nonce=nonce,
                provider=self._memory.provider.name,
                degraded="store_unavailable",
            )
        )

    # ---- helpers ----------------------------------------------------------------------
    def _episode_briefs(self, subject: Subject, hits: Sequence[EpisodeHit]) -> list[EpisodeBrief]:
        """The short forms of the episodes the provider chose, in its order, from our rows.

        Recall already dropped forgotten and out-of-scope hits; an episode forgotten since,
        or (defensively) not of this repository, is left out here too, never shown.
        """
        rows = self._memory.store.get_episodes([hit.episode_id for hit in hits])
        briefs: list[EpisodeBrief] = []
        for hit in hits:
            row = rows.get(hit.episode_id)
            if row is not None and _briefable(row, subject):
                briefs.append(
                    brief_from_episode(
                        episode_id=row.id,
                        run_id=row.run_id,
                        agent=row.agent,
                        branch=row.branch,
                        outcome=row.outcome,
                        started_at=row.started_at,
                        body=row.episode,
                        summary=row.summary,
                        adapter=row.adapter,
                        model=row.model,
                    )
                )
        return briefs

    def _fact_items(self, subject: Subject, query: str | None, limit: int) -> Sequence[Item]:
        if self._facts is None:
            return ()
        try:
            items = list(self._facts(subject, query, limit))
        except Exception as exc:  # a facts failure costs the section, never the document
            log.warning(
                "briefing.facts_failed agent=%s error=%s", subject.agent, type(exc).__name__
            )
            return ()
        return [i for i in items if isinstance(i, Item) and i.kind == "fact"]

    def _with_fresh_nonce(self, build: Callable[[str], Composed]) -> Composed:
        for _ in range(_NONCE_ATTEMPTS):
            try:
                return build(self._new_nonce())
            except NonceCollision:
                log.warning("briefing.nonce_collision drawing a fresh nonce")
        raise FenceError("could not draw a nonce absent from the content")


def _briefable(row: EpisodeRow, subject: Subject) -> bool:
    return (
        row.forgotten_at is None
        and row.repo == subject.repo
        and row.scope in subject.episode_scopes
    )


def _episode(hit: EpisodeHit) -> Item:
    return episode_item(
        episode_id=hit.episode_id,
        provider=hit.provider,
        text=hit.text,
        run_id=hit.run_id,
        agent=hit.agent,
        adapter=hit.adapter,
        model=hit.model,
        repo=hit.repo,
        branch=hit.branch,
        outcome=hit.outcome,
        started_at=hit.started_at,
    )


def _recent(row: RunRow, *, show_branch: bool) -> Item:
    return recent_run_item(
        run_id=row.run_id,
        agent=row.agent,
        adapter=row.adapter,
        outcome=row.outcome,
        reason=row.reason,
        ended_at=row.ended_at,
        duration_ms=round((row.ended_at - row.started_at) * 1000),
        branch=row.branch if show_branch else None,
        pull_request=row.pull_request,
    )


__all__ = ["RECALL_ORDER", "BriefingService", "FactsSource", "Subject", "subject_of"]
