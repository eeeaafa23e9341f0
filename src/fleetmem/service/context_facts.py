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
duplicate or the query's whole phrase, at least 0.75 when every content word matches),
taken over two searches: the prompt itself, and its *focus*, the two rarest words of the
prompt among those that at most :data:`FOCUS_MAX_FACTS` facts contain. A task names its
subject among words that say what to do with it ("Fix the flaky ledger test"): the whole
prompt neither means what the fact about flaky ledger tests means nor holds all its words,
while "ledger flaky" finds that fact by its words (a fact holding both scores 0.75, as any
fact holding all of a query's words does). A single rare word is not a focus: one word
shared with a fact is too weak a sign, and measured so (it doubled the unrelated facts of
runs whose prompts paraphrase their fact). The constants are calibrated together: see the
comment on :data:`FOCUS_MAX_FACTS`.
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
    visible_scopes,
)
from fleetmem.core.textquery import terms as query_terms
from fleetmem.providers.base import MAX_QUERY_CHARS
from fleetmem.service.fact_runs import block_item
from fleetmem.service.facts import FactService

#: At most this many facts picked by relevance (the pinned ones come on top).
MAX_RELEVANT = 8
#: Facts scoring below this are not relevant enough to hand a run. Calibrated with
#: ``bench/bench_run_facts.py`` (labelled one-shot prompts over 520 facts, default offline
#: embedder), the lowest floor on a 0.05 grid whose unrelated facts per run stay at or below 1
#: on the dev and the held-out confirm halves of two seeds (one seed's dev half alone chose
#: 0.70, which its confirm half did not hold). Figures: docs/facts.md.
RELEVANCE_FLOOR = 0.75
#: A prompt word can be part of its focus when at most this many facts contain it. Chosen on
#: the dev halves of both labelled sets of ``bench/bench_run_facts.py`` (prompts that
#: paraphrase their fact, prompts that name its subject), two seeds, grid 2 to 48: at 8 the
#: naming prompts get their fact 0.27-0.29 more often than with no focus, the paraphrasing
#: ones as often, and unrelated facts stay at 0.79-0.86 per run; each doubling past 8 adds at
#: most 0.06 and takes unrelated facts to 0.94-1.00, the target's edge.
FOCUS_MAX_FACTS = 8
#: The focus is this many words, the rarest first; fewer qualifying words, no focus.
FOCUS_WORDS = 2
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
    focus_words: int = FOCUS_WORDS,
    by_meaning: bool = True,
) -> tuple[BlockItem, ...]:
    """Up to :data:`MAX_RELEVANT` active, unpinned facts of the run's scopes relevant to
    ``about`` at or above ``floor``, best first, none of ``exclude`` (ids already shown);
    for ``run_id`` (a run in flight) at the revisions it opened with; ``by_meaning`` False:
    by words alone (the prompt's and its focus's), without loading the embedder."""
    query = " ".join(about.split())[:MAX_QUERY_CHARS].strip()
    if not query:
        return ()
    scopes = visible_scopes(agent, repo)
    search = functools.partial(
        service.rank_servable, scopes=scopes, limit=SEARCH_WIDTH, run_id=run_id,
        by_meaning=by_meaning,
    )  # fmt: skip
    hits, _ = search(query)
    focus = focus_of(service, query, scopes=scopes, max_facts=focus_max_facts, words=focus_words)
    if focus and focus != query:
        more, _ = search(focus)
        best = {hit.fact.id: hit for hit in hits}
        for hit in more:
            if hit.fact.id not in best or hit.score > best[hit.fact.id].score:
                best[hit.fact.id] = hit
        hits = sorted(best.values(), key=lambda hit: -hit.score)
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


def focus_of(
    service: FactService,
    query: str,
    *,
    scopes: Sequence[str],
    max_facts: int = FOCUS_MAX_FACTS,
    words: int = FOCUS_WORDS,
) -> str:
    """The ``words`` rarest words of ``query`` among those that at least one and at most
    ``max_facts`` facts of ``scopes`` contain (in the query's order among equals), joined by
    spaces; ``""`` when fewer qualify or ``words`` is 0."""
    if words <= 0:
        return ""
    counts = service.facts_containing(query_terms(query), scopes=scopes)
    rare = sorted((n, i, w) for i, (w, n) in enumerate(counts.items()) if 0 < n <= max_facts)
    if len(rare) < words:
        return ""
    return " ".join(w for _, _, w in rare[:words])


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
