"""The daemon's background jobs purge facts past their 30 restorable days (docs/facts.md)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from fleetmem.errors import UnknownFact
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.service.jobs import BackgroundJobs, hourly_pass_once
from tests.facts.conftest import ALICE, Clock

DAY = 86_400.0


class Monotonic:
    """The jobs' own schedule clock (monotonic seconds), moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def forget_new(facts: FactService, clock: Clock, body: str) -> str:
    clock.advance(1.0)
    fact = facts.add(body, actor=ALICE).fact
    assert fact is not None
    facts.forget(fact.id, actor=ALICE)
    return fact.id


def test_a_tick_purges_facts_forgotten_31_days_ago_and_keeps_29(
    make_facts: Callable[..., tuple[App, FactService]],
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, facts = make_facts()
    old = forget_new(facts, clock, "Deploys freeze on the last Friday of a quarter.")
    clock.advance(2 * DAY)
    recent = forget_new(facts, clock, "The staging database is reset every Monday.")
    clock.advance(29 * DAY)  # old: forgotten 31 days ago; recent: 29 days ago
    jobs = BackgroundJobs(app.memory, clock=Monotonic(), facts=facts)
    with caplog.at_level(logging.INFO, logger="fleetmem.jobs"):
        jobs.tick()
    with pytest.raises(UnknownFact):
        facts.get(old)
    assert facts.get(recent).fact.status == "forgotten"
    assert [e.change.action for e in facts.history(old).entries] == ["create", "forget", "purge"]
    assert [e.change.action for e in facts.history(recent).entries] == ["create", "forget"]
    lines = [r.getMessage() for r in caplog.records if "facts_purged" in r.getMessage()]
    # Counts only: no fact id and no words reach the log.
    assert lines == ["jobs.facts_purged count=1"]


def test_the_purge_runs_with_the_hourly_retention_pass(
    make_facts: Callable[..., tuple[App, FactService]], clock: Clock
) -> None:
    app, facts = make_facts()
    schedule = Monotonic()
    jobs = BackgroundJobs(app.memory, clock=schedule, facts=facts, retention_every_s=3600.0)
    jobs.tick()  # the first pass, with nothing to purge
    fact_id = forget_new(facts, clock, "Use the blue-green rollout for the api.")
    clock.advance(31 * DAY)
    schedule.now += 600.0
    jobs.tick()  # ten minutes after the last pass: not due
    assert facts.get(fact_id).fact.status == "forgotten"
    schedule.now += 3000.0
    jobs.tick()  # an hour after the last pass
    with pytest.raises(UnknownFact):
        facts.get(fact_id)


class FailsOnce:
    """The fact service with a purge that fails the first time (a store error, say): a
    failure injected where the real store cannot be made to fail for the purge alone."""

    def __init__(self, facts: FactService) -> None:
        self.facts = facts
        self.calls = 0

    def purge_expired(self) -> int:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("database is locked")
        return self.facts.purge_expired()


def test_a_failed_purge_never_stops_later_ticks(
    make_facts: Callable[..., tuple[App, FactService]],
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, facts = make_facts()
    fact_id = forget_new(facts, clock, "Pin the node version in CI.")
    clock.advance(31 * DAY)
    schedule = Monotonic()
    purger = FailsOnce(facts)
    jobs = BackgroundJobs(app.memory, clock=schedule, facts=purger, retention_every_s=3600.0)
    with caplog.at_level(logging.WARNING, logger="fleetmem.jobs"):
        jobs.tick()
    assert jobs.ticks == 1  # the tick finished its other work
    assert "jobs.facts_purge_failed error=RuntimeError" in caplog.text
    assert facts.get(fact_id).fact.status == "forgotten"
    schedule.now += 3600.0
    jobs.tick()
    assert purger.calls == 2
    with pytest.raises(UnknownFact):
        facts.get(fact_id)


def test_purge_expired_works_through_more_than_one_batch(
    make_facts: Callable[..., tuple[App, FactService]], clock: Clock
) -> None:
    _app, facts = make_facts()
    ids = [forget_new(facts, clock, f"Fact number {n} about release trains.") for n in range(5)]
    clock.advance(31 * DAY)
    assert facts.purge_expired(batch=2) == 5
    for fact_id in ids:
        with pytest.raises(UnknownFact):
            facts.get(fact_id)
    assert facts.purge_expired(batch=2) == 0


def test_the_cron_pass_does_every_step_before_it_reports_a_failed_one(
    make_facts: Callable[..., tuple[App, FactService]],
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # `fleetmem jobs` and the daemon's tick share one pass: a failed purge still lets the
    # index's upkeep run, the lease is given back, and the command then reports the failure.
    app, facts = make_facts()
    forget_new(facts, clock, "Rotate the signing key every quarter.")
    clock.advance(31 * DAY)
    upkeep: list[bool] = []
    compact = app.memory.compact_index

    def counted_compact() -> object:
        upkeep.append(True)
        return compact()

    app.memory.compact_index = counted_compact  # type: ignore[method-assign]
    with (
        caplog.at_level(logging.WARNING, logger="fleetmem.jobs"),
        pytest.raises(RuntimeError, match="database is locked"),
    ):
        hourly_pass_once(app.memory, FailsOnce(facts))
    assert upkeep == [True]
    assert "jobs.facts_purge_failed error=RuntimeError" in caplog.text
    done = hourly_pass_once(app.memory, facts)  # the lease was released: a second pass runs
    assert done is not None and done.facts_purged == 1 and done.errors == {}
