"""How often facts were used: the "used in N runs" of the facts list (seed 003 §6.2).

A read over the exposure records the fact service writes whenever it serves a fact to a run
(briefing, recall, resource or prompt). Kept apart from the fact service so that surfaces ask
a service, never the store.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleetmem.service.facts import FactService


def runs_using(facts: FactService, fact_ids: Sequence[str]) -> dict[str, int]:
    """Distinct runs each fact of ``fact_ids`` was served to (0 for a fact never served)."""
    out: dict[str, int] = {}
    for fact_id in dict.fromkeys(fact_ids):
        rows = facts.store.fact_exposures(facts.workspace, fact_id=fact_id)
        out[fact_id] = len({row.run_id for row in rows})
    return out
