"""Background work of the daemon: record and forget retries, retention, the facts purge, the
text index's upkeep, re-embedding (vector backfill of episodes and facts).

Several daemons may share one store (a fleet on PostgreSQL, or a daemon and ``fleetmem
jobs`` on one SQLite file). Record and forget jobs are claimed one by one by the store
(``due_jobs``); the rest is done under leases (:mod:`fleetmem.store.leases`), so across all
of them the hourly pass (retention, the facts purge, the index's upkeep) runs once an hour
and one daemon at a time fills in missing vectors. A daemon killed mid-pass loses its lease
after ``[store] claim_timeout``; another then takes the work over.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fleetmem import process_memory, tokenize
from fleetmem.errors import StoreError
from fleetmem.service.memory import MemoryService
from fleetmem.service.reembed import TICK_BUDGET_S, ReembedSteps, run_reembed
from fleetmem.store.leases import holder_tag

log = logging.getLogger("fleetmem.jobs")

#: The lease of the hourly pass (retention, facts purge, index upkeep), fleet-wide.
HOURLY_LEASE = "jobs:hourly"
#: The lease of the vector backfill: one daemon embeds at a time.
REEMBED_LEASE = "jobs:reembed"
#: Seconds without a count after which a daemon drops the token counter's vocabulary (about
#: 61 MiB). Counts are cached on disk, so a daemon needs it only for new text; reloading
#: takes about 0.3 s, paid by the first count after a quiet spell.
TOKENIZER_IDLE_S = 120.0


class FactPurger(Protocol):
    """What the jobs need from the fact service: purge facts past their 30 restorable days."""

    def purge_expired(self) -> int: ...


class DeliveryCounts(Protocol):
    def adopt_deliveries(self) -> int: ...


@dataclass(frozen=True, slots=True)
class HourlyPass:
    """What one hourly pass did: episodes forgotten by retention, facts purged past their
    30 restorable days, and the text index's upkeep (``Compaction.as_dict``, empty when that
    step failed). ``errors`` holds each step that failed, by name, with its exception."""

    retention_forgotten: int
    facts_purged: int
    index_compacted: dict[str, Any]
    errors: dict[str, Exception] = field(default_factory=dict)


def hourly_pass(memory: MemoryService, facts: FactPurger | None) -> HourlyPass:
    """The hourly work, the same for a daemon's jobs thread and for ``fleetmem jobs``; the
    caller holds :data:`HOURLY_LEASE`.

    Retention goes first so the index's upkeep then merges away what it forgot. Each step
    is guarded on its own: a failed purge must not skip retention or the upkeep (each step
    is its own transaction, so a failure leaves the store as correct as before), and the
    next pass tries again.
    """
    errors: dict[str, Exception] = {}

    def step(name: str, work: Callable[[], Any], otherwise: Any) -> Any:
        try:
            return work()
        except Exception as exc:
            log.warning("jobs.%s_failed error=%s", name, type(exc).__name__)
            errors[name] = exc
            return otherwise

    pruned = step("retention", memory.apply_retention, 0)
    if pruned:
        log.info("jobs.retention forgotten=%d", pruned)
    purged = 0 if facts is None else step("facts_purge", facts.purge_expired, 0)
    if purged:
        log.info("jobs.facts_purged count=%d", purged)
    compacted = step("index_compact", lambda: memory.compact_index().as_dict(), {})
    # Retention and upkeep can read the whole store: hand back the heap pages they leave
    # free, which glibc would otherwise keep resident.
    process_memory.give_back()
    return HourlyPass(pruned, purged, compacted, errors)


def hourly_pass_once(memory: MemoryService, facts: FactPurger) -> HourlyPass | None:
    """The daemon's hourly pass, done once by a process that is not a daemon (``fleetmem
    jobs`` from cron), under the same lease as the daemons' own: None when a daemon holds it
    at that moment (it is doing the same work). Here rather than in the CLI because the lease
    and its holder tag belong to the store, which no surface reaches. A step that failed is
    raised once the others have run, so the command reports it."""
    holder = holder_tag()
    hold = memory.settings.store.claim_timeout_s
    if not memory.store.claim_lease(HOURLY_LEASE, holder, now=memory.now(), hold_s=hold):
        return None
    try:
        done = hourly_pass(memory, facts)
    finally:
        memory.store.release_lease(HOURLY_LEASE, holder, done_at=memory.now())
    if done.errors:
        raise next(iter(done.errors.values()))
    return done


class BackgroundJobs:
    """A daemon thread that ticks every ``interval_s`` and prunes every ``retention_every_s``.

    Each tick is wrapped so one failure is logged and the next tick still runs. ``clock``
    (UNIX seconds) times the leases, which every process sharing the store compares.
    """

    def __init__(
        self,
        memory: MemoryService,
        *,
        interval_s: float = 15.0,
        retention_every_s: float = 3600.0,
        clock: Callable[[], float] = time.time,
        facts: FactPurger | None = None,
        briefings: DeliveryCounts | None = None,
        reembed_budget_s: float = TICK_BUDGET_S,
        tokenizer_idle_s: float = TOKENIZER_IDLE_S,
    ) -> None:
        self._memory = memory
        self._tokenizer_idle = tokenizer_idle_s
        self._reembed_budget = reembed_budget_s
        self._facts = facts
        self._briefings = briefings
        if briefings is not None:
            briefings.adopt_deliveries()  # start counting from now
        self._interval = interval_s
        self._retention_every = retention_every_s
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: This process's name on the leases it takes.
        self.holder = holder_tag()
        self.ticks = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="fleetmem-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def tick(self) -> None:
        """One round of work; public so tests and ``fleetmem jobs run`` can drive it."""
        try:
            done = self._memory.process_jobs()
        except StoreError as exc:
            # The database is down: nothing of this tick can be done; the next one retries.
            log.warning("jobs.store_unavailable error=%s", exc)
            return
        if done:
            log.info("jobs.processed %s", " ".join(f"{k}={v}" for k, v in sorted(done.items())))
        if self._claim(HOURLY_LEASE, every_s=self._retention_every):
            try:
                hourly_pass(self._memory, self._facts)
            finally:
                self._release(HOURLY_LEASE, done=True)
        self._probe_provider()
        self._adopt_deliveries()
        if tokenize.release_idle(self._tokenizer_idle):
            log.info("jobs.token_counter_released idle_s=%d", self._tokenizer_idle)
            process_memory.give_back()
        if self._claim(REEMBED_LEASE, every_s=0.0):
            try:
                self._reembed()
            finally:
                self._release(REEMBED_LEASE, done=False)
        self.ticks += 1

    def _claim(self, lease: str, *, every_s: float) -> bool:
        """Whether this daemon may do the work of ``lease`` now (no other daemon is doing
        it, and, for periodic work, it is due fleet-wide)."""
        hold = self._memory.settings.store.claim_timeout_s
        return self._memory.store.claim_lease(
            lease, self.holder, now=self._clock(), hold_s=hold, every_s=every_s
        )

    def _release(self, lease: str, *, done: bool) -> None:
        try:
            self._memory.store.release_lease(
                lease, self.holder, done_at=self._clock() if done else None
            )
        except Exception as exc:  # the lease then runs out by itself
            log.warning("jobs.lease_release_failed lease=%s error=%s", lease, type(exc).__name__)

    def _reembed(self) -> None:
        # Vectors missing under the active model (an embedder switch, or an outage) are
        # filled in for up to a budget per tick, so a switch over 10,000 episodes finishes in
        # minutes while each tick still leaves room for records and recalls.
        try:
            done = run_reembed(
                ReembedSteps(self._memory, self._facts), budget_s=self._reembed_budget
            )
        except Exception as exc:
            log.warning("jobs.reembed_failed error=%s", type(exc).__name__)
            return
        if done["episodes"] or done["facts"]:
            log.info("jobs.backfill vectors=%d facts=%d", done["episodes"], done["facts"])

    def _adopt_deliveries(self) -> None:
        # Briefings that `fleetmem run` and hook processes served reach /metrics here.
        if self._briefings is None:
            return
        try:
            self._briefings.adopt_deliveries()
        except Exception as exc:
            log.warning("jobs.deliveries_failed error=%s", type(exc).__name__)

    def _probe_provider(self) -> None:
        # Every tick (15 s): a provider that died while nothing called it is noticed and
        # its outage recorded, so the doctor's five-minute rule counts from the real start.
        try:
            self._memory.probe_provider()
        except Exception as exc:
            log.warning("jobs.provider_probe_failed error=%s", type(exc).__name__)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("jobs.tick_failed")
            self._stop.wait(self._interval)
