"""What an agent's run reads from memory: its stored briefing and recall answers.

The MCP server (and, for prompt one-shots, the supervisor) call these methods. Composition is
:class:`fleetmem.service.briefings.BriefingService`'s; this module adds what only a run has:

* **Attribution.** A run token resolves to a :class:`Caller`; no token, or an unknown one, is
  an unattributed caller: ``briefing`` is refused ``not_attributed`` and ``recall`` answers
  with workspace facts only and no episodes (seed 000 REQ-9).
* **One briefing per run** (REQ-15). The first read (or the spawn, with ``memory_briefing``)
  computes it and stores it; every later read, from any process, serves the stored document
  unchanged, until the run asks for ``refresh``. It is computed once whichever daemon of a
  fleet is asked: the one that takes the run's briefing lease computes it, the others wait
  for the stored document (or take the lease over when its holder died mid-computation).
* **The agent's workspace.** Every method taking a caller acts in the workspace its agent is
  bound to (``[agent.NAME] workspace``; ``default`` without one), through the copy
  :meth:`for_caller` picks, whichever copy it was called on: the facts a run is shown, the
  exposures recorded, its proposals, votes, notes and context files all belong there. A key
  naming no workspace is an error (UnknownAgentWorkspace), never a fallback to ``default``.
* **Exposure** (REQ-17). Every fact a document shows to a run is recorded as served before
  the document is returned, by ``FactService.serve_to_run``; a fact whose exposure cannot be
  written, or that may no longer be served (forgotten, rejected since), is taken out of the
  document first. Only the facts the document actually shows count: a fact the composer
  dropped for size was never served. Operator previews write nothing.

What a run may write (fact proposals, votes, notes) is the other half of the class:
:mod:`fleetmem.service.agent_writes`.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from fleetmem.config import Settings
from fleetmem.core.briefing import Composed
from fleetmem.core.facts import visible_scopes
from fleetmem.core.scope import WORKSPACE, project_scope
from fleetmem.core.wrapper import Document, parse, render
from fleetmem.errors import InvalidInput, NotAttributed, StoreError
from fleetmem.service.agent_writes import AgentWritesMixin, routed
from fleetmem.service.briefings import RECENT_RUNS, BriefingService, Subject, subject_of
from fleetmem.service.fact_items import FactItems
from fleetmem.service.facts import FactService
from fleetmem.service.files import ContextFileService
from fleetmem.service.memory import DEFAULT_RECALL_LIMIT, MemoryService, RecallResult
from fleetmem.service.records.briefings import RunBriefing, run_briefing_of
from fleetmem.service.records.facts import Fact
from fleetmem.service.records.runs import StoredRun, stored_run_of
from fleetmem.service.runs import Caller, RunsService
from fleetmem.store.briefings import RunBriefingStore, StoredBriefing
from fleetmem.store.leases import holder_tag

log = logging.getLogger("fleetmem.agent_memory")

#: Stored briefings are deleted this long after they were computed.
BRIEFING_KEEP_S = 30 * 86_400.0
#: How a briefing reaches a run, and the exposure surface each one records.
DELIVERY_SURFACE = {"tool": "briefing", "resource": "resource", "prompt": "prompt"}
ORIGINS = ("read", "spawn", "refresh")
#: Stored briefings older than BRIEFING_KEEP_S are pruned at most this often per process.
_PRUNE_EVERY_S = 3600.0
#: The degraded reason of a briefing or recall answer served while the store is unavailable.
STORE_UNAVAILABLE = "store_unavailable"
#: The caller of a run token that could not be checked because the store did not answer.
UNREACHABLE = Caller(run_id="", agent="", repo=None, branch=None, scopes=(), state="live")
#: How often a process waiting for another's computation of a briefing looks for it.
BRIEFING_POLL_S = 0.05
#: How much longer than the lease's hold a waiter waits before computing the briefing itself.
BRIEFING_WAIT_SLACK_S = 5.0
#: The subject of an unattributed recall: no agent, no repository, workspace facts only.
UNATTRIBUTED = Subject(agent="", repo=None, branch=None, scopes=())


@dataclass(frozen=True, slots=True)
class ServedBriefing:
    """A run's briefing as served now.

    ``text`` is the document (empty when there is nothing to brief); ``facts`` the facts it
    shows, each recorded as served; ``version`` counts computations (a refresh adds one).
    """

    run_id: str
    agent: str
    text: str
    facts: tuple[str, ...]
    version: int
    origin: str
    computed_at: float
    degraded: str | None
    computed_now: bool

    @property
    def size_bytes(self) -> int:
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class RecallAnswer:
    """A recall answer as served. ``facts`` are the facts it shows (recorded as served when
    the caller is attributed); ``shown`` counts items per section."""

    text: str
    attributed: bool
    facts: tuple[str, ...]
    shown: dict[str, int]
    truncated: int
    degraded: str | None
    withheld: int = 0


#: ``OperatorRecall.repo`` of a recall across every repository.
EVERY_REPO = "*"


@dataclass(frozen=True, slots=True)
class OperatorRecall:
    """An operator's recall (``fleetmem recall``): the three sections as data, no exposure."""

    repo: str
    episodes: RecallResult
    facts: tuple[tuple[Fact, float], ...]
    recent_runs: tuple[StoredRun, ...]


class AgentMemory(AgentWritesMixin):
    """Briefings and recall answers served to runs, with exposure records."""

    def __init__(
        self,
        *,
        runs: RunsService,
        memory: MemoryService,
        briefings: BriefingService,
        facts: FactService,
        files: ContextFileService,
        store: RunBriefingStore,
        settings: Callable[[], Settings],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._runs = runs
        self._memory = memory
        self._briefings = briefings
        self._facts = facts
        self._fact_items = FactItems(facts)
        self._files = files
        self._store = store
        self._settings = settings
        self._clock = clock
        self._last_prune: float | None = None
        #: This process's name on the briefing leases it takes.
        self._holder = holder_tag()

    def in_workspace(
        self, facts: FactService, files: ContextFileService, briefings: BriefingService
    ) -> AgentMemory:
        """A copy serving another workspace's facts and files (its operator recall and
        previews); runs, episodes and stored briefings are shared."""
        other = copy.copy(self)
        other._facts = facts
        other._fact_items = FactItems(facts)
        other._files = files
        other._briefings = briefings
        return other

    # ---- attribution ------------------------------------------------------------------
    def caller(self, token: str | None) -> Caller | None:
        """The caller a run token stands for, or None when it is not attributed;
        :data:`UNREACHABLE` when the store cannot be asked (reads then degrade, writes are
        refused with a StoreError)."""
        if not token:
            return None
        try:
            return self._runs.resolve_caller(token)
        except NotAttributed:
            return None
        except StoreError as exc:
            log.warning("caller.store_unavailable error=%s", exc)
            return UNREACHABLE

    # ---- briefings --------------------------------------------------------------------
    @routed
    def briefing(
        self,
        caller: Caller | None,
        *,
        delivery: str = "tool",
        refresh: bool = False,
        call_id: str | None = None,
    ) -> ServedBriefing:
        """The run's briefing (REQ-15): stored at its first read, then served unchanged.

        ``refresh`` recomputes and stores it again. ``delivery`` is ``tool``, ``resource``
        or ``prompt`` (exposure surface and metric label). Raises NotAttributed without a
        caller. Never fails on a provider or facts failure: the sections degrade instead.
        """
        if caller is None:
            raise NotAttributed("the briefing belongs to a run: call with its run token")
        if delivery not in DELIVERY_SURFACE:
            raise InvalidInput("delivery", delivery, "must be tool, resource or prompt")
        if not isinstance(refresh, bool):
            raise InvalidInput("refresh", refresh, "must be true or false")
        try:
            return self._briefing(caller, delivery, refresh, call_id)
        except StoreError as exc:
            # As for a provider outage: a degraded (empty) briefing, never an error to the
            # run; nothing is stored, so the run's first read after the outage computes it.
            log.warning("briefing.store_unavailable run=%s error=%s", caller.run_id, exc)
            return ServedBriefing(
                run_id=caller.run_id,
                agent=caller.agent,
                text="",
                facts=(),
                version=0,
                origin="unavailable",
                computed_at=self._clock(),
                degraded=STORE_UNAVAILABLE,
                computed_now=False,
            )

    def _briefing(
        self, caller: Caller, delivery: str, refresh: bool, call_id: str | None
    ) -> ServedBriefing:
        if caller is UNREACHABLE:
            raise StoreError("the store is unavailable: the run's token cannot be checked")
        stored = None if refresh else self._store.get_run_briefing(caller.run_id)
        computed_now = stored is None
        if refresh:
            stored = self._compute(caller, origin="refresh")
        elif stored is None:
            stored, computed_now = self._compute_once(caller, origin="read")
        served = self._serve(stored, caller, DELIVERY_SURFACE[delivery], call_id)
        self._briefings.count_delivery(
            caller.agent, delivery, Composed(text=served.text, document=None, nonce=None)
        )
        log.info(
            "briefing.served run=%s agent=%s delivery=%s version=%d computed=%s bytes=%d facts=%d",
            caller.run_id,
            caller.agent,
            delivery,
            served.version,
            computed_now,
            served.size_bytes,
            len(served.facts),
        )
        return replace(served, computed_now=computed_now)

    def compute_at_spawn(self, caller: Caller) -> StoredBriefing:
        """Compute and store a run's briefing before it starts (``memory_briefing = true``).

        A run that already has one keeps it (a respawn reuses its briefing). Writes no
        exposure: serving it (``briefing(..., delivery="prompt")``) does.
        """
        found = self._store.get_run_briefing(caller.run_id)
        if found is not None:
            return found
        return self.for_caller(caller)._compute_once(caller, origin="spawn")[0]

    def keep_briefing(
        self,
        composed: Composed,
        *,
        run_id: str,
        agent: str,
        repo: str | None,
        branch: str | None,
        origin: str = "spawn",
    ) -> StoredBriefing:
        """Store a briefing computed elsewhere (the supervisor's, at spawn) as the run's own,
        so the tool and the resource serve that document. A run that has one keeps it."""
        if origin not in ORIGINS:
            raise InvalidInput("origin", origin, "must be read, spawn or refresh")
        row = StoredBriefing(
            run_id=run_id,
            agent=agent,
            repo=repo,
            branch=branch,
            text=composed.text,
            fact_ids=composed.ids("facts"),
            degraded=composed.degraded,
            origin=origin,
            computed_at=self._clock(),
            version=1,
        )
        return self._store.add_run_briefing(row)

    def stored_briefing(self, run_id: str) -> RunBriefing | None:
        """The stored briefing of a run, as computed (operators; no exposure)."""
        row = self._store.get_run_briefing(run_id)
        return None if row is None else run_briefing_of(row)

    def _compute_once(self, caller: Caller, *, origin: str) -> tuple[StoredBriefing, bool]:
        """The run's briefing, computed here under its lease, or by whichever process holds
        the lease (waited for); True when computed here."""
        lease = f"briefing:{caller.run_id}"
        # Long enough for one computation (the provider's recall is the slow part); a holder
        # that died loses the lease then, and a waiter takes it over.
        hold = 2 * self._settings().memory.episodes.provider_timeout_s + 10.0
        give_up = time.monotonic() + hold + BRIEFING_WAIT_SLACK_S
        while True:
            if self._store.claim_lease(lease, self._holder, now=self._clock(), hold_s=hold):
                try:
                    found = self._store.get_run_briefing(caller.run_id)
                    if found is not None:  # computed by another process just before
                        return found, False
                    return self._compute(caller, origin=origin), True
                finally:
                    self._store.release_lease(lease, self._holder, forget=True)
            found = self._store.get_run_briefing(caller.run_id)
            if found is not None:
                return found, False
            if time.monotonic() >= give_up:
                # Never wait forever: computing too is safe (the first stored one is served).
                return self._compute(caller, origin=origin), True
            time.sleep(BRIEFING_POLL_S)

    def _compute(self, caller: Caller, *, origin: str) -> StoredBriefing:
        composed = self._briefings.briefing_for_caller(caller)
        self._prune()
        if origin == "refresh":
            row = StoredBriefing(
                run_id=caller.run_id,
                agent=caller.agent,
                repo=caller.repo,
                branch=caller.branch,
                text=composed.text,
                fact_ids=composed.ids("facts"),
                degraded=composed.degraded,
                origin=origin,
                computed_at=self._clock(),
                version=1,
            )
            return self._store.replace_run_briefing(row)
        # Two processes computing at once: the first stored document is the one served.
        return self.keep_briefing(
            composed,
            run_id=caller.run_id,
            agent=caller.agent,
            repo=caller.repo,
            branch=caller.branch,
            origin=origin,
        )

    def _serve(
        self, stored: StoredBriefing, caller: Caller, surface: str, call_id: str | None
    ) -> ServedBriefing:
        text, shown = stored.text, stored.fact_ids
        if shown:
            allowed = self._expose(shown, caller, surface, call_id)
            if set(allowed) != set(shown):
                text = without_facts(text, set(shown) - set(allowed))
                shown = tuple(f for f in shown if f in set(allowed))
                log.warning(
                    "briefing.facts_withheld run=%s surface=%s withheld=%d",
                    caller.run_id,
                    surface,
                    len(stored.fact_ids) - len(shown),
                )
        return ServedBriefing(
            run_id=stored.run_id,
            agent=stored.agent,
            text=text,
            facts=shown,
            version=stored.version,
            origin=stored.origin,
            computed_at=stored.computed_at,
            degraded=stored.degraded,
            computed_now=False,
        )

    def _expose(
        self, shown: Sequence[str], caller: Caller, surface: str, call_id: str | None
    ) -> tuple[str, ...]:
        """Record ``shown`` as served to the caller's run; the ids that may be shown (none
        when the exposure cannot be written: the facts are then withheld, never the answer)."""
        try:
            return self._facts.serve_to_run(
                shown,
                run_id=caller.run_id,
                agent=caller.agent,
                repo=caller.repo,
                surface=surface,
                call_id=call_id,
            )
        except Exception as exc:
            log.warning(
                "facts.serve_failed run=%s surface=%s facts=%d error=%s",
                caller.run_id,
                surface,
                len(shown),
                type(exc).__name__,
            )
            return ()

    def _prune(self) -> None:
        now = self._clock()
        if self._last_prune is not None and 0 <= now - self._last_prune < _PRUNE_EVERY_S:
            return
        self._last_prune = now
        try:
            gone = self._store.delete_run_briefings_before(now - BRIEFING_KEEP_S)
        except Exception as exc:  # pruning is housekeeping; it never fails a briefing
            log.warning("briefing.prune_failed error=%s", type(exc).__name__)
            return
        if gone:
            log.info("briefing.pruned count=%d", gone)

    # ---- recall -----------------------------------------------------------------------
    @routed
    def recall(
        self,
        caller: Caller | None,
        query: str,
        *,
        paths: Sequence[str] = (),
        limit: int = DEFAULT_RECALL_LIMIT,
        call_id: str | None = None,
    ) -> RecallAnswer:
        """A recall answer for a run (REQ-12), or for an unattributed caller: workspace facts
        only, no episodes, no recent runs (REQ-9). Raises InvalidInput outside the bounds.
        With the store unavailable: an empty answer, ``degraded="store_unavailable"``."""
        subject = UNATTRIBUTED if caller is None else subject_of(caller)
        try:
            if caller is UNREACHABLE:
                raise StoreError("the store is unavailable: the run's token cannot be checked")
            return self._recall(caller, subject, query, paths, limit, call_id)
        except StoreError as exc:
            log.warning("recall.store_unavailable error=%s", exc)
            composed = self._briefings.unavailable_recall(query, paths=paths, limit=limit)
            return RecallAnswer(
                text=composed.text,
                attributed=False,
                facts=(),
                shown=dict(composed.shown),
                truncated=0,
                degraded=STORE_UNAVAILABLE,
            )

    def _recall(
        self,
        caller: Caller | None,
        subject: Subject,
        query: str,
        paths: Sequence[str],
        limit: int,
        call_id: str | None,
    ) -> RecallAnswer:
        composed = self._briefings.recall(subject, query, paths=paths, limit=limit)
        text, shown = composed.text, composed.ids("facts")
        withheld = 0
        if caller is not None and shown:
            allowed = self._expose(shown, caller, "recall", call_id)
            if set(allowed) != set(shown):
                text = without_facts(text, set(shown) - set(allowed))
                withheld = len(shown) - len(set(allowed) & set(shown))
                shown = tuple(f for f in shown if f in set(allowed))
        counts = dict(composed.shown)
        counts["facts"] = len(shown)
        log.info(
            "recall.served run=%s facts=%d episodes=%d runs=%d truncated=%d degraded=%s",
            caller.run_id if caller else "-",
            len(shown),
            counts.get("episodes", 0),
            counts.get("recent_runs", 0),
            composed.truncated,
            composed.degraded or "-",
        )
        return RecallAnswer(
            text=text,
            attributed=caller is not None,
            facts=shown,
            shown=counts,
            truncated=composed.truncated,
            degraded=composed.degraded,
            withheld=withheld,
        )

    def operator_recall(
        self,
        query: str,
        *,
        repo: str | None = None,
        agent: str | None = None,
        every_repo: bool = False,
        paths: Sequence[str] = (),
        limit: int = DEFAULT_RECALL_LIMIT,
    ) -> OperatorRecall:
        """What a recall in ``repo`` (or as ``agent`` would, in the repository of its latest
        run; or, ``every_repo``, in every repository with an episode) shows: facts, episodes
        and the runs that edited ``paths``. Writes no exposure. Across every repository the
        answer's ``repo`` is :data:`EVERY_REPO`, its facts are the workspace's and every
        project's, and runs that edited ``paths`` are left out (a path names a file of one
        repository)."""
        try:
            return self._operator_recall(query, repo, agent, every_repo, paths, limit)
        except StoreError as exc:
            # As an agent's recall: degraded, empty, never an error (the arguments were
            # checked first, so a bad one is still refused).
            self._memory.check_recall_arguments(query, limit=limit, paths=paths)
            log.warning("recall.store_unavailable operator error=%s", exc)
            episodes = RecallResult(
                items=(), provider=self._memory.provider.name, degraded=STORE_UNAVAILABLE
            )
            shown = EVERY_REPO if every_repo else (repo or agent or "")
            return OperatorRecall(repo=shown, episodes=episodes, facts=(), recent_runs=())

    def _operator_recall(
        self,
        query: str,
        repo: str | None,
        agent: str | None,
        every_repo: bool,
        paths: Sequence[str],
        limit: int,
    ) -> OperatorRecall:
        scopes = self._memory.scopes_for(repo=repo, agent=agent, every_repo=every_repo)
        episodes = self._memory.recall(query, scopes=scopes, limit=limit, paths=paths)
        if every_repo:
            facts = self._fact_items.rank([WORKSPACE, *scopes], query, limit)
            return OperatorRecall(
                repo=EVERY_REPO, episodes=episodes, facts=tuple(facts), recent_runs=()
            )
        key = scopes[0].removeprefix("project:")
        if agent is not None:
            facts_in = visible_scopes(agent, key)
            recall_on = self._settings().agent(agent).memory_recall
        else:
            facts_in, recall_on = [WORKSPACE, project_scope(key)], True
        facts = self._fact_items.rank(facts_in, query, limit) if recall_on else []
        runs = self._runs.runs_editing(key, paths, RECENT_RUNS) if paths else []
        return OperatorRecall(
            repo=key,
            episodes=episodes,
            facts=tuple(facts),
            recent_runs=tuple(stored_run_of(r) for r in runs),
        )


def without_facts(text: str, fact_ids: Collection[str]) -> str:
    """``text`` (a wrapper document) with the fact items ``fact_ids`` taken out, same nonce.

    A briefing left with nothing in any section becomes the empty briefing.
    """
    if not text or not fact_ids:
        return text
    doc, nonce = parse(text)
    sections = tuple(
        replace(s, items=tuple(i for i in s.items if i.get("id") not in fact_ids))
        if s.name == "facts"
        else s
        for s in doc.sections
    )
    kept = Document(kind=doc.kind, sections=sections, attrs=doc.attrs)
    if doc.kind == "briefing" and not any(s.items or s.omitted for s in sections):
        return ""
    return render(kept, nonce)
