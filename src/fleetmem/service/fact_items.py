"""Facts as wrapper items: the facts section of briefings and recall answers.

This is the facts source :class:`fleetmem.service.briefings.BriefingService` is plugged with
(see ``bootstrap.build``). It selects and ranks facts *without* writing exposure: the caller
composes the document first (which may drop facts to fit its caps) and then records as
served exactly the facts the document shows (``FactService.serve_to_run``), so a fact that
did not fit never blocks a run's vote (seed 000 REQ-17).

* A briefing (no query) gets the run's facts block selection: pinned active facts, then the
  active facts of its scopes by confidence, then recency, then id
  (``FactService.select_for_run``).
* A recall answer gets active, evidence and suspect facts of the caller's scopes by meaning
  and by words, best first, each labelled with its status (seed 000 REQ-12), from
  ``FactService.rank_servable``, which ranks without writing exposure (``recall_for_run``
  writes it for every fact it returns).

Provenance comes from the fact rows: id, scope, status, confidence, the writing agent and its
run, and when it was written; ``untrusted`` is set on every fact a person did not write.
An agent whose ``[agent.NAME] memory_recall`` is off is served no facts at all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from fleetmem.core.briefing import BRIEFING_RULES, fact_item
from fleetmem.core.facts import ACTIVE, visible_scopes
from fleetmem.core.scope import WORKSPACE
from fleetmem.core.wrapper import Item
from fleetmem.service.briefings import Subject
from fleetmem.service.facts import FactService
from fleetmem.service.records.facts import Fact
from fleetmem.store.facts import FactFilter, FactRow

log = logging.getLogger("fleetmem.briefings")

#: The most facts a recall answer asks the ranking for (REQ-12 caps ``limit`` at 20).
MAX_RECALL_FACTS = 20
#: A briefing shows at most 8 facts; this many are counted for its "(N more)" line.
BRIEFING_FACTS_COUNTED = 100
BRIEFING_FACTS_SHOWN = next(r.max_items for r in BRIEFING_RULES if r.name == "facts")


class FactItems:
    """A ``FactsSource`` over a :class:`FactService` (one workspace)."""

    def __init__(self, facts: FactService) -> None:
        self._facts = facts

    def __call__(self, subject: Subject, query: str | None, limit: int) -> Sequence[Item]:
        if subject.agent and not self._facts.settings.agent(subject.agent).memory_recall:
            return []
        if query is None:
            return self.for_briefing(subject, max(limit, 1))
        return self.for_recall(subject, query, limit)

    def for_briefing(self, subject: Subject, limit: int = BRIEFING_FACTS_COUNTED) -> list[Item]:
        """The run's facts block selection, best first (pinned, then by confidence); then, for
        the section's ``(N more: call recall)`` line, the other active facts of its scopes."""
        if not subject.agent:
            return []
        facts = self._facts
        scopes = fact_scopes(subject)
        picked = facts.select_for_run(agent=subject.agent, repo=subject.repo, query=None)
        rows = facts.store.fact_get_many(facts.workspace, [item.fact_id for item in picked])
        items = [
            _item(rows[item.fact_id], item.confidence)
            for item in picked
            if item.fact_id in rows and rows[item.fact_id].scope in scopes
        ]
        room = limit - len(items)
        # With fewer than the section's cap selected, the selection is every active fact.
        if room > 0 and len(items) >= BRIEFING_FACTS_SHOWN:
            seen = {item.fact_id for item in picked}
            rest = facts.store.fact_list(
                facts.workspace,
                FactFilter(statuses=(ACTIVE,), scopes=tuple(scopes), limit=room + len(seen)),
            )
            # Counted, never shown: the composer shows at most its cap, all of them from the
            # selection above, so these stand for the rest by id alone.
            items += [
                Item(kind="fact", text="", provenance=(("id", r.id),))
                for r in rest
                if r.id not in seen
            ][:room]
        return items

    def for_recall(self, subject: Subject, query: str, limit: int) -> list[Item]:
        """Servable facts of the subject's scopes matching ``query``, best first."""
        return [_item(row, conf) for row, conf in self.rank(fact_scopes(subject), query, limit)]

    def rank(self, scopes: Sequence[str], query: str, limit: int) -> list[tuple[Fact, float]]:
        """Active, evidence and suspect facts of ``scopes`` matching ``query`` by meaning and
        by words, best first, each with its confidence; at most ``limit`` (1 to 20)."""
        if not scopes or not query.strip():
            return []
        limit = max(1, min(int(limit), MAX_RECALL_FACTS))
        ranked, _degraded = self._facts.rank_servable(
            query.strip()[:512], scopes=list(scopes), limit=limit
        )
        return [(item.fact, item.confidence) for item in ranked]


def fact_scopes(subject: Subject) -> list[str]:
    """The fact scopes a subject sees: the workspace, its repository's project and its agent;
    only the workspace for an unattributed caller (a subject with no agent)."""
    if not subject.agent:
        return [WORKSPACE]
    return visible_scopes(subject.agent, subject.repo)


def _item(row: FactRow | Fact, confidence: float) -> Item:
    agent_written = row.origin == "agent"
    return fact_item(
        fact_id=row.id,
        text=row.body,
        scope=row.scope,
        # Active facts read as live, as in the wrapper's examples; others keep their status.
        status="live" if row.status == ACTIVE else row.status,
        confidence=round(float(confidence), 2),
        agent=row.author if agent_written else None,
        run_id=row.run_id if agent_written else None,
        created_at=row.created_at,
        untrusted=row.origin != "human",
    )
