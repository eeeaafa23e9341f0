"""The right facts for a run: its pinned facts, then the facts relevant to what it is about.

A run's facts block (docs/facts.md, "Facts for runs") holds:

1. every pinned active fact of the run's scopes, oldest pin first;
2. up to :data:`MAX_RELEVANT` active facts ranked by relevance to what the run is about (a
   one-shot's prompt; an interactive session's prompt at each ``UserPromptSubmit``), each at
   or above :data:`RELEVANCE_FLOOR`, leaving out those the run was already shown;
3. when nothing reached the floor, the line "No remembered fact matched this run.", so that
   a run with recall on and nothing relevant reads differently from one with recall off
   (which has no block at all).

The block is held to 1,200 tokens by the context assembly, whole facts only, and every fact
kept is recorded as exposed to the run before the run sees it.

Relevance is the fact search's own score (:meth:`FactService.rank_servable`: meaning above
the search threshold fused with literal matches, 0.5 at the threshold, 1.0 for a near
duplicate or the query's whole phrase, at least 0.75 when every content word matches).
``RELEVANCE_FLOOR`` is this module's one calibrated constant: see its comment.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from fleetmem.core.facts import (
    NOTHING_ELSE_MATCHED,
    NOTHING_MATCHED,
    BlockItem,
    fit_block,
    visible_scopes,
)
from fleetmem.providers.base import MAX_QUERY_CHARS
from fleetmem.service.fact_runs import block_item
from fleetmem.service.facts import FactService

#: At most this many facts picked by relevance (the pinned ones come on top).
MAX_RELEVANT = 8
#: Facts scoring below this are not relevant enough to hand a run. Calibrated with
#: ``bench/bench_run_facts.py`` on its dev half (labelled one-shot prompts over 520 facts,
#: default offline embedder), the lowest floor on a 0.05 grid whose unrelated facts per run
#: stay at or below 1, on the dev and the held-out confirm half of two seeds (one seed's dev
#: half alone chose 0.70, which its confirm half did not hold). Figures: docs/facts.md.
RELEVANCE_FLOOR = 0.75
#: Candidates asked of the search, so enough survive the floor and the filters.
SEARCH_WIDTH = 20
#: Shown when a run's prompt matched no fact (recall on), with no pinned fact / with some.
NO_MATCH = NOTHING_MATCHED
NO_OTHER_MATCH = NOTHING_ELSE_MATCHED


@dataclass(frozen=True, slots=True)
class RunFacts:
    """A run's facts, in block order; ``matched`` False when no fact reached the floor."""

    pinned: tuple[BlockItem, ...]
    relevant: tuple[BlockItem, ...]
    matched: bool


def pinned_facts(service: FactService, *, agent: str, repo: str | None) -> tuple[BlockItem, ...]:
    """The run's pinned active facts, oldest pin first."""
    return service.pinned_for_run(agent=agent, repo=repo)


def relevant_facts(
    service: FactService,
    about: str,
    *,
    agent: str,
    repo: str | None,
    exclude: Collection[str] = (),
    floor: float = RELEVANCE_FLOOR,
    run_id: str | None = None,
) -> tuple[BlockItem, ...]:
    """Up to :data:`MAX_RELEVANT` active, unpinned facts of the run's scopes relevant to
    ``about`` at or above ``floor``, best first, none of ``exclude`` (ids already shown);
    for ``run_id`` (a run in flight) at the revisions it opened with."""
    query = " ".join(about.split())[:MAX_QUERY_CHARS].strip()
    if not query:
        return ()
    hits, _ = service.rank_servable(
        query, scopes=visible_scopes(agent, repo), limit=SEARCH_WIDTH, run_id=run_id
    )
    out: list[BlockItem] = []
    for hit in hits:
        fact = hit.fact
        if hit.served_as != "instruction" or fact.pinned or fact.id in exclude:
            continue
        if hit.score < floor:
            continue
        out.append(block_item(fact, hit.confidence, hit.score))
        if len(out) == MAX_RELEVANT:
            break
    return tuple(out)


def run_facts(service: FactService, about: str, *, agent: str, repo: str | None) -> RunFacts:
    """The pinned facts and the facts relevant to ``about`` (``""``: pinned only, its
    prompts not known yet)."""
    pinned = pinned_facts(service, agent=agent, repo=repo)
    if not about.strip():
        return RunFacts(pinned, (), True)
    relevant = relevant_facts(service, about, agent=agent, repo=repo)
    return RunFacts(pinned, relevant, bool(relevant))


#: Said to an interactive session when its prompt matched no fact at all.
NO_MATCH_PROMPT = "No remembered fact matched this prompt."


def facts_for_prompt(
    service: FactService, prompt: str, *, run_id: str, agent: str, repo: str | None
) -> str:
    """The facts block for one prompt of an interactive session: the facts relevant to it
    that the session was not shown yet, recorded as exposed first (surface ``prompt``);
    :data:`NO_MATCH_PROMPT` when nothing matched, ``""`` when all that matched was shown."""
    relevant = relevant_facts(service, prompt, agent=agent, repo=repo, run_id=run_id)
    if not relevant:
        return NO_MATCH_PROMPT
    shown = {row.fact_id for row in service.offered_to_run(run_id)}
    new = [item for item in relevant if item.fact_id not in shown]
    if not new:
        return ""
    fitted = fit_block((), new, count_tokens=service.count_tokens)
    served = set(
        service.serve_to_run(
            [i.fact_id for i in fitted.items],
            run_id=run_id,
            agent=agent,
            repo=repo,
            surface="prompt",
        )
    )
    kept = [item for item in fitted.items if item.fact_id in served]
    if not kept:
        return ""  # the exposure could not be written: nothing is shown unrecorded
    if len(kept) == len(fitted.items):
        return fitted.text
    return fit_block((), kept, count_tokens=service.count_tokens).text
