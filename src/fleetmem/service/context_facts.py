"""The right facts for a run: its pinned facts, then the facts relevant to what it is about.

A run's facts block (docs/facts.md, "Facts for runs") holds:

1. every pinned active fact of the run's scopes, oldest pin first;
2. up to :data:`MAX_RELEVANT` active facts relevant to what the run is about (a one-shot's
   prompt; an interactive session's prompt at each ``UserPromptSubmit``), best first,
   leaving out those the run was already shown;
3. when no fact is relevant, the line "No remembered fact matched this run.", so that
   a run with recall on and nothing relevant reads differently from one with recall off
   (which has no block at all).

The block is held to 1,200 tokens by the context assembly, whole facts only, and every fact
kept is recorded as exposed to the run before the run sees it.

A fact is relevant to a prompt in one of three ways:

- **by meaning**: the fact search (:meth:`FactService.rank_servable`: meaning above the
  search threshold fused with literal matches; 0.5 at the threshold, 1.0 for a near
  duplicate) scores it at or above :data:`RELEVANCE_FLOOR`;
- **by the prompt's words**: it holds the prompt's whole phrase or every content word of it;
- **by a focus pair**: it is the one fact (:data:`FOCUS_MAX_FACTS`) that holds a pair of the
  prompt's words together. A task names its subject among words that say what to do with it
  ("Fix the flaky ledger test"): the prompt neither means what "The ledger tests are flaky
  on CI: rerun them with a fixed random seed" means nor holds all its words ("fix"), but
  "flaky" and "ledger" together are in that fact alone.

The constants are calibrated together on two labelled sets: see :data:`RELEVANCE_FLOOR`.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from fleetmem.core.facts import (
    NOTHING_ELSE_MATCHED,
    NOTHING_MATCHED,
    BlockItem,
    fit_block,
    literal_matcher,
    normalize,
    visible_scopes,
)
from fleetmem.core.textquery import terms as query_terms
from fleetmem.providers.base import MAX_QUERY_CHARS
from fleetmem.service.fact_runs import block_item
from fleetmem.service.facts import FactService

#: At most this many facts picked by relevance (the pinned ones come on top).
MAX_RELEVANT = 8
#: Facts scoring below this by meaning are not relevant enough to hand a run. With
#: :data:`FOCUS_MAX_FACTS` and :data:`FOCUS_PAIRS`, chosen with ``bench/bench_run_facts.py``
#: (two labelled sets of one-shot prompts over 520 facts, default offline embedder: prompts
#: that paraphrase their fact, prompts that name its subject by two of its words) on the dev
#: halves of two seeds: the most named prompts given their fact with at most 1 unrelated fact
#: per run on every dev half (then fewest unrelated facts), over floors 0.75 to 0.9, pairs
#: held by at most 1 to 4 facts, 1 or 2 pairs. Confirmed on the held-out halves; the
#: paraphrasing prompts lose half of their few hits (floor 0.75 gave them 8-14 %, 0.8 gives
#: 4-8 %). Figures: docs/facts.md#the-right-facts-per-run.
RELEVANCE_FLOOR = 0.8
#: A pair of the prompt's words is a focus when at least one and at most this many facts
#: hold both.
FOCUS_MAX_FACTS = 1
#: At most this many focus pairs are searched for (those held by the fewest facts first).
FOCUS_PAIRS = 1
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
    focus_max_facts: int = FOCUS_MAX_FACTS,
    focus_pairs: int = FOCUS_PAIRS,
    by_meaning: bool = True,
) -> tuple[BlockItem, ...]:
    """Up to :data:`MAX_RELEVANT` active, unpinned facts of the run's scopes relevant to
    ``about`` (by meaning at or above ``floor``, by its words, or by a focus pair: see the
    module's docstring), best first, none of ``exclude`` (ids already shown); for ``run_id``
    (a run in flight) at the revisions it opened with; ``by_meaning`` False: by words alone,
    without loading the embedder."""
    query = " ".join(about.split())[:MAX_QUERY_CHARS].strip()
    if not query:
        return ()
    scopes = visible_scopes(agent, repo)
    search = functools.partial(
        service.rank_servable, scopes=scopes, limit=SEARCH_WIDTH, run_id=run_id
    )
    hits, _ = search(query, by_meaning=by_meaning)
    literal = literal_matcher(query)
    found = {
        hit.fact.id: hit
        for hit in hits
        if hit.strength >= floor or literal(normalize(hit.fact.body)) is not None
    }
    for pair in focus_of(
        service, query, scopes=scopes, max_facts=focus_max_facts, pairs=focus_pairs
    ):
        # By words alone: every hit holds both words (its meaning is the prompt's search).
        more, _ = search(pair, by_meaning=False)
        for hit in more:
            if hit.fact.id not in found or hit.score > found[hit.fact.id].score:
                found[hit.fact.id] = hit
    out: list[BlockItem] = []
    for hit in sorted(found.values(), key=lambda hit: -hit.score):
        fact = hit.fact
        if hit.served_as != "instruction" or fact.pinned or fact.id in exclude:
            continue
        out.append(block_item(fact, hit.confidence, hit.score))
        if len(out) == MAX_RELEVANT:
            break
    return tuple(out)


def focus_of(
    service: FactService,
    query: str,
    *,
    scopes: Sequence[str],
    max_facts: int = FOCUS_MAX_FACTS,
    pairs: int = FOCUS_PAIRS,
) -> list[str]:
    """Pairs of ``query``'s words that at least one and at most ``max_facts`` facts of
    ``scopes`` hold together, each as "a b": those held by the fewest facts first (then the
    rarer words, then the query's order), at most ``pairs``, no two picking the same facts."""
    if pairs <= 0:
        return []
    holders = service.facts_containing(query_terms(query), scopes=scopes)
    words = [word for word, ids in holders.items() if ids]
    candidates = []
    for i, first in enumerate(words):
        for j in range(i + 1, len(words)):
            second = words[j]
            both = holders[first] & holders[second]
            if 0 < len(both) <= max_facts:
                rarity = len(holders[first]) + len(holders[second])
                candidates.append((len(both), rarity, i, j, both))
    chosen: list[str] = []
    picked: list[frozenset[str]] = []
    for *_, i, j, both in sorted(candidates, key=lambda c: c[:4]):
        if both in picked:
            continue
        picked.append(both)
        chosen.append(f"{words[i]} {words[j]}")
        if len(chosen) == pairs:
            break
    return chosen


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
    service: FactService,
    prompt: str,
    *,
    run_id: str,
    agent: str,
    repo: str | None,
    by_meaning: bool = True,
) -> str:
    """The facts block for one prompt of an interactive session: the facts relevant to it
    that the session was not shown yet, recorded as exposed first (surface ``prompt``);
    :data:`NO_MATCH_PROMPT` when nothing matched, ``""`` when all that matched was shown.
    ``by_meaning`` False: matched by words alone (see :func:`relevant_facts`)."""
    relevant = relevant_facts(
        service, prompt, agent=agent, repo=repo, run_id=run_id, by_meaning=by_meaning
    )
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
