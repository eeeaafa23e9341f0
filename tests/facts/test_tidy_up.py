"""Tidy up (seed 003 S13): proposed merges of near-duplicate active facts, Merge keeping both
provenances, Keep both remembered; it works when the limit is reached by active facts."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.core.episode import content_hash
from fleetmem.core.facts import MAX_KEPT, NEAR_DUPLICATE_WORDS, Actor, normalize, word_overlap
from fleetmem.core.tidy import word_pairs
from fleetmem.errors import CapReached, InvalidInput, InvalidTransition, UnknownFact
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from tests.facts.conftest import ALICE, API, MINILM, Clock

ONE = "Database migrations run from the deploy job only."
ONE_AGAIN = "Database migrations run only from the deploy job."  # the same words, reordered
OTHER = "Invoices go out on the first working day of the month."


def add(facts: FactService, clock: Clock, body: str, **kw: object) -> str:
    clock.advance(61)  # past the per-minute rate window
    return facts.add(body, actor=ALICE, **kw).fact.id  # type: ignore[arg-type]


# ---- the word rule (no embedder) -------------------------------------------------------------
WORDS = ["deploy", "job", "migrations", "run", "database", "only", "invoices", "month", "alpha"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=12))
def test_word_pairs_are_exactly_the_pairs_a_full_comparison_finds(texts: list[str]) -> None:
    expected = [
        (i, j, word_overlap(texts[i], texts[j]))
        for i, j in itertools.combinations(range(len(texts)), 2)
        if word_overlap(texts[i], texts[j]) >= NEAR_DUPLICATE_WORDS
    ]
    assert word_pairs(texts, NEAR_DUPLICATE_WORDS) == expected


def test_a_threshold_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError):
        word_pairs(["a b"], 0)


# ---- the review --------------------------------------------------------------------------------
def test_near_duplicates_are_proposed_once_per_pair_within_a_scope(
    facts: FactService, clock: Clock
) -> None:
    first = add(facts, clock, ONE)
    facts.pin(first, actor=ALICE)
    second = add(facts, clock, ONE_AGAIN)
    add(facts, clock, OTHER)
    add(facts, clock, ONE, scope=f"project:{API}")  # the same words in another scope
    tidy = facts.tidy_up()
    assert tidy.degraded == "embeddings_unavailable" and tidy.total == 1
    (pair,) = tidy.pairs
    assert (pair.keep.id, pair.fold.id, pair.matched) == (first, second, "words")
    assert pair.similarity == 1.0


def test_merge_folds_one_into_the_other_keeping_both_provenances(
    facts: FactService, clock: Clock
) -> None:
    older = add(facts, clock, ONE)
    newer = add(facts, clock, ONE_AGAIN)
    (pair,) = facts.tidy_up().pairs
    assert (pair.keep.id, pair.fold.id) == (older, newer)  # the older is kept
    facts.review(pair.fold.id, "merge", into=pair.keep.id, actor=ALICE)
    assert facts.tidy_up().pairs == ()
    sources = facts.get(older).provenance
    assert [p.merged_from for p in sources] == [None, newer]


def test_keep_both_is_remembered_until_one_is_reworded(facts: FactService, clock: Clock) -> None:
    a = add(facts, clock, ONE)
    b = add(facts, clock, ONE_AGAIN)
    kept = facts.keep_both(b, a, actor=ALICE)
    assert (kept.first_id, kept.second_id) == tuple(sorted((a, b)))
    assert facts.tidy_up().pairs == () and facts.tidy_up().total == 0
    journal = facts.store.fact_journal(facts.workspace, min(a, b))
    assert journal[-1].action == "keep_both"
    assert journal[-1].after is not None and journal[-1].after["kept_apart_from"] == max(a, b)
    clock.advance(61)
    facts.edit(b, "Database migrations only run from the deploy job.", actor=ALICE)
    (again,) = facts.tidy_up().pairs  # reworded: compared anew
    assert {again.keep.id, again.fold.id} == {a, b}


def test_keep_both_takes_two_active_facts_of_this_workspace(
    facts: FactService, clock: Clock
) -> None:
    a = add(facts, clock, ONE)
    b = add(facts, clock, ONE_AGAIN)
    with pytest.raises(InvalidInput):
        facts.keep_both(a, a, actor=ALICE)
    with pytest.raises(InvalidInput):
        facts.keep_both(a, b, actor=Actor("agent", "research", "run-1"))
    theirs = facts.in_workspace("acme").add(ONE_AGAIN, actor=ALICE).fact.id
    with pytest.raises(UnknownFact):
        facts.keep_both(a, theirs, actor=ALICE)
    facts.forget(b, actor=ALICE)
    with pytest.raises(InvalidTransition):
        facts.keep_both(a, b, actor=ALICE)


def test_tidy_up_works_when_active_facts_fill_the_memory(facts: FactService, clock: Clock) -> None:
    """S13: at 2,000 active facts nothing else can be added; Tidy up finds the duplicates
    among them (the proposals queue was empty), and a merge makes room."""
    a = add(facts, clock, ONE)
    b = add(facts, clock, ONE_AGAIN)
    row = facts.store.fact_get(facts.workspace, b)  # the stored row, to copy
    assert row is not None
    with facts.store.transaction():
        for i in range(MAX_KEPT - 2):
            body = f"Seeded rule number {i}."
            facts.store.fact_insert(
                dataclasses.replace(
                    row,
                    id=f"f_s{i:05d}",
                    body=body,
                    norm=normalize(body),
                    content_hash=content_hash(body),
                    pinned=False,
                )
            )
    assert facts.counts()["active"] == MAX_KEPT and facts.counts()["proposed"] == 0
    with pytest.raises(CapReached):
        add(facts, clock, OTHER)
    (pair,) = facts.tidy_up().pairs
    assert (pair.keep.id, pair.fold.id) == (a, b)
    facts.review(pair.fold.id, "merge", into=pair.keep.id, actor=ALICE)
    assert add(facts, clock, OTHER)  # room again


def test_by_meaning_with_the_offline_embedder(
    make_facts: Callable[..., tuple[App, FactService]], clock: Clock
) -> None:
    _, facts = make_facts(MINILM)
    a = add(facts, clock, "We deploy to production every Tuesday.")
    b = add(facts, clock, "Production deploys happen on Tuesdays.")
    add(facts, clock, OTHER)
    tidy = facts.tidy_up()
    assert tidy.degraded is None
    (pair,) = tidy.pairs
    assert ({pair.keep.id, pair.fold.id}, pair.matched) == ({a, b}, "meaning")
    assert pair.similarity >= facts.thresholds().near_duplicate
