"""Stable runs: a run in flight keeps the fact revisions it started with (seed FR-7, S3, S20).

A run's context and briefing are assembled once, at its start, and stay as they were given.
What it recalls later must agree with them: a fact edited after the run opened is served to
that run at the revision that was current when it opened (from the fact's own revision
history), so an edit reaches the next run, never one already under way. A fact written after
the run opened is new knowledge and is served as it is; a fact forgotten since is not served
at all (forget means forget).

The fact page's "N runs in flight still hold the previous version" counts those runs
(``store.fact_in_flight``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from fleetmem.service.fact_results import RecalledFact
from fleetmem.store.facts import FactRow, FactStore


def run_started_at(store: FactStore, run_id: str) -> float | None:
    """When a live run opened; None for a run fleetmem did not open (no revisions to keep)."""
    row = store.get_live_run(run_id)
    return None if row is None else row.opened_at


def as_of(store: FactStore, fact: FactRow, started_at: float) -> FactRow:
    """``fact`` as it read when a run opened at ``started_at`` (itself when unchanged since,
    or when it did not exist yet)."""
    if fact.updated_at <= started_at:
        return fact
    earlier = [r for r in store.fact_revisions(fact.id) if r.at <= started_at]
    if not earlier:
        return fact
    then = max(earlier, key=lambda r: r.revision)
    if then.revision >= fact.revision:
        return fact
    return dataclasses.replace(fact, body=then.body, revision=then.revision)


def recalled_as_of(
    store: FactStore, items: Sequence[RecalledFact], run_id: str
) -> list[RecalledFact]:
    """Recall hits for ``run_id``, each fact at the revision the run started with."""
    started = run_started_at(store, run_id)
    if started is None:
        return list(items)
    return [dataclasses.replace(i, fact=as_of(store, i.fact, started)) for i in items]
