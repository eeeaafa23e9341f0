"""A run's stored briefing as the agent-memory service returns it to the integrations that
spawn and resume runs (they check that a run has one and serve its text). Built from the
briefing store's row here, so the integrations never see the store's columns."""

from __future__ import annotations

from dataclasses import dataclass

from fleetmem.service.records import project
from fleetmem.store.briefings import StoredBriefing


@dataclass(frozen=True, slots=True)
class RunBriefing:
    """The briefing a run is served, unchanged for its life: ``text`` (empty for an empty
    briefing), the facts it shows, what computed it (``origin``: read, spawn or refresh) and
    how many computations it took (``version``, from 1)."""

    text: str
    fact_ids: tuple[str, ...]
    origin: str
    version: int


def run_briefing_of(row: StoredBriefing) -> RunBriefing:
    return project(RunBriefing, row)
