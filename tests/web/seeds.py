"""Data the browser tests and the web benchmark put into a home before the daemon starts."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from fleetmem.core.episode import content_hash
from fleetmem.core.facts import Actor, normalize
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.service.files import Actor as FileActor

LABELLED = Path(__file__).resolve().parent.parent / "data" / "facts_paraphrase.json"
DELIVERY = "We never quote a delivery date shorter than ten working days."
EXTRA = [
    "Invoices go out on the first working day of the month.",
    "Escalate anything over 5,000 to a human.",
    "Rush orders still take five days to ship from the warehouse.",
    "The staging database is rebuilt nightly and must never hold real data.",
    "Release notes are written by the engineer who merged the change.",
    "Support answers every ticket within one business day.",
    "Design reviews happen on Thursdays at 15:00 UTC.",
    "The mobile app supports the two latest iOS versions only.",
    "Every new service ships with a runbook in the ops repository.",
    "Customer names never appear in log lines.",
    "The on-call rotation changes every Monday at 09:00 UTC.",
    "Feature flags are removed within two sprints of a full rollout.",
    "Translations are reviewed by a native speaker before release.",
    "Load tests run against the perf cluster, never production.",
    "The public status page is updated within 15 minutes of an incident.",
    "Pricing changes are announced 30 days in advance.",
]
USER = FileActor("user", "marina")


def seeding_facts(app: App, *, start: float, step: float = 60.0) -> FactService:
    """The app's fact service on a clock that starts at ``start`` and moves ``step`` seconds
    each time it is read, so seeded facts have different ages and never trip the per-minute
    rate limit; ``start`` in the past keeps them out of the daemon's own rate window."""
    now = [start]

    def clock() -> float:
        now[0] += step
        return now[0]

    return FactService(
        store=app.store, settings=lambda: app.config.current, embedder=app.embedder, clock=clock
    )


def clone_facts(app: App, me: Actor, count: int, *, days: float = 40.0) -> None:
    """``count`` active facts quickly: one added through the service, the rest stored as
    copies of its row with their own id, words and time (the service's near-duplicate check
    makes each add scan every fact, so 2,000 adds take minutes)."""
    start = time.time() - days * 86_400
    facts = seeding_facts(app, start=start)
    added = facts.add("Seeded rule number 0.", actor=me).fact
    first = facts.store.fact_get(facts.workspace, added.id)  # the stored row, to copy
    assert first is not None
    step = days * 86_400 / count
    with app.store.transaction():
        for i in range(1, count):
            body = f"Seeded rule number {i}."
            app.store.fact_insert(
                dataclasses.replace(
                    first,
                    id=f"f_{i:016x}",
                    body=body,
                    norm=normalize(body),
                    content_hash=content_hash(body),
                    created_at=start + i * step,
                    updated_at=start + i * step,
                    confirmed_at=start + i * step,
                )
            )


def labelled_bodies() -> list[str]:
    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    return [f["body"] for f in data["facts"]]


def seed_facts(app: App, bodies: list[str], me: Actor, *, days: float = 20.0) -> list[str]:
    """Add ``bodies`` as a person's facts spread over the last ``days``, oldest first."""
    step = days * 86_400 / max(1, 3 * len(bodies))
    facts = seeding_facts(app, start=time.time() - days * 86_400 - 3600, step=step)
    ids = []
    for body in bodies:
        ids.append(facts.add(body, actor=me).fact.id)
    return ids


def hundred_eighty(app: App, me: Actor) -> list[str]:
    """Seed 003 S2: 180 facts, one of them the delivery-date rule."""
    bodies = [b for b in labelled_bodies() if b != DELIVERY] + EXTRA
    bodies = bodies[:179]
    bodies.insert(120, DELIVERY)
    return seed_facts(app, bodies, me)
