"""Stable runs: a run in flight keeps the fact revisions it started with (seed FR-7, S3, S20).

A run's context and briefing are assembled once, at its start, and stay as they were given.
What it recalls later must agree with them: a fact edited after the run opened is served to
that run at the revision that was current when it opened (from the fact's own revision
history), so an edit reaches the next run, never one already under way. A fact written after
the run opened is new knowledge and is served as it is; a fact forgotten since is not served
at all (forget means forget).

Such a fact is also *ranked* by the words the run holds: an edit that changed its wording
must neither make it found by the new words nor hide it from the old ones, so the search
scores the facts edited since the run opened again on their earlier text
(:func:`hits_as_of`), the same way the store's search scores a current body.

The fact page's "N runs in flight still hold the previous version" counts those runs
(``store.fact_in_flight``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from fleetmem.core.facts import (
    WORD_WEIGHT,
    literal_matcher,
    literal_terms,
    meaning_score,
    normalize,
    search_score,
)
from fleetmem.service.fact_results import SearchHit
from fleetmem.service.records.facts import Fact, fact_of
from fleetmem.store.base import Vector
from fleetmem.store.facts import FactFilter, FactRow, FactStore

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

#: The most facts edited during one run that are scored again on their earlier text; more
#: edits than this while one run is open are ranked by their current text (and still served
#: at the earlier revision).
MAX_RESCORED = 200

#: A stored fact or the record a search hit holds: both are read as of a run's start.
AnyFact = TypeVar("AnyFact", FactRow, Fact)


def run_started_at(store: FactStore, run_id: str) -> float | None:
    """When a live run opened; None for a run fleetmem did not open (no revisions to keep)."""
    row = store.get_live_run(run_id)
    return None if row is None else row.opened_at


def as_of(store: FactStore, fact: AnyFact, started_at: float) -> AnyFact:
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


def hits_as_of(
    store: FactStore,
    workspace: str,
    hits: Sequence[SearchHit],
    *,
    since: float,
    statuses: Sequence[str],
    scopes: Sequence[str] | None,
    query: str,
    vector: Vector | None,
    embed: Callable[[str], Vector | None],
    thresholds: tuple[float, float],
) -> list[SearchHit]:
    """``hits`` (a search over current text) with every fact edited after ``since`` scored
    again on the text it had then: dropped when that text does not match, added when it
    does and the current one did not. ``thresholds`` is (search, near duplicate)."""
    edited = store.fact_list(
        workspace,
        FactFilter(
            statuses=tuple(statuses),
            scopes=None if scopes is None else tuple(scopes),
            updated_after=since,
            limit=MAX_RESCORED,
        ),
    )
    changed = [(fact, as_of(store, fact, since)) for fact in edited]
    changed = [(now, then) for now, then in changed if then.body != now.body]
    by_id = {hit.fact.id: hit for hit in hits}
    for now, then in changed:
        by_id.pop(now.id, None)
        rescored = score_body(then, query, vector, embed, thresholds)
        if rescored is not None:
            by_id[now.id] = rescored
    # Stable: the hits that were not scored again keep the search's order among equals.
    ranked = sorted(by_id.values(), key=lambda hit: -hit.score)
    # Beyond MAX_RESCORED edits, a hit ranked by its current text is still served as it read.
    scored_again = {now.id for now, _ in changed}
    return [
        dataclasses.replace(h, fact=as_of(store, h.fact, since))
        if h.fact.updated_at > since and h.fact.id not in scored_again
        else h
        for h in ranked
    ]


def score_body(
    fact: FactRow,
    query: str,
    vector: Vector | None,
    embed: Callable[[str], Vector | None],
    thresholds: tuple[float, float],
) -> SearchHit | None:
    """``fact`` scored against ``query`` on its own body, as the search scores a stored one:
    meaning from the cosine with the body's vector plus the word bonus, literal matches on
    the normalized body; None when it would not be a hit."""
    search, strong = thresholds
    _, words = literal_terms(query)
    body = normalize(fact.body)
    literal = literal_matcher(query)(body)
    found = sum(1 for word in words if word in body)
    cosine = None
    if vector is not None:
        embedded = embed(fact.body)
        if embedded is not None:
            cosine = float(np.dot(np.asarray(embedded, dtype=np.float32), vector))
    near = cosine is not None and cosine >= search - WORD_WEIGHT
    # The search's candidates: a cosine at the threshold, a shared word just below it, or a
    # literal match (see FactStore.fact_search_rows).
    if not ((cosine is not None and cosine >= search) or (near and found) or literal is not None):
        return None
    meaning = meaning_score(cosine, found, len(words)) if near and cosine is not None else None
    score = search_score(meaning, literal, threshold=search, strong=strong)
    if score is None:
        return None
    matched: tuple[str, ...] = ("meaning",) if meaning is not None and meaning >= search else ()
    if literal is not None:
        matched += (literal,)
    # The body it had is not among the workspace's vectors, so it has no neighbours to
    # correct for: it is ordered by its plain score.
    return SearchHit(
        fact_of(fact),
        round(score, 4),
        cosine if "meaning" in matched else None,
        matched,
        round(score, 4),
    )
