"""Facts search reads its candidates best first and stops once the rest cannot place
(service/fact_base.py): the hits must be exactly those reading every candidate gives."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from fleetmem.core.facts import Actor
from fleetmem.service import fact_base
from fleetmem.service.facts import FactService
from tests.facts.conftest import API, Clock

VOCABULARY = ["ledger", "deploy", "cache", "flaky", "billing", "tenant", "retry", "schema"]


def _crowd(seed: int, n: int) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """``n`` fact bodies around a handful of topics (many near the search threshold, some
    sharing the questions' words, some written at the same second) and the questions."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    dim = 48
    topics = rng.standard_normal((5, dim)).astype(np.float32)
    table: dict[str, np.ndarray] = {}
    bodies: list[str] = []
    for i in range(n):
        topic = topics[i % len(topics)]
        v = rng.uniform(0.6, 1.6) * topic + rng.standard_normal(dim).astype(np.float32)
        words = " ".join(pick.sample(VOCABULARY, pick.randint(0, 3)))
        body = " ".join(filter(None, ["fact", str(i), words, f"{pick.getrandbits(40):x}"]))
        table[body] = (v / np.linalg.norm(v)).astype(np.float32)
        bodies.append(body)
    questions = []
    for j in range(12):
        q = topics[j % len(topics)] + 0.8 * rng.standard_normal(dim).astype(np.float32)
        words = " ".join(pick.sample(VOCABULARY, pick.randint(0, 2)))
        question = " ".join(filter(None, ["question", str(j), words]))
        table[question] = (q / np.linalg.norm(q)).astype(np.float32)
        questions.append(question)
    return table, bodies, questions


def _hits(service: FactService, question: str, limit: int, scope: str | None) -> list[tuple]:
    found = service.search(question, limit=limit, scope=scope).hits
    return [(h.fact.id, h.score, h.strength, h.matched, h.similarity) for h in found]


@pytest.mark.parametrize("n", [7, 60, 400])
def test_reading_the_best_candidates_first_changes_no_hit(
    table_facts: Callable[[dict[str, np.ndarray]], FactService],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    n: int,
) -> None:
    seed = random.SystemRandom().randrange(2**32)
    table, bodies, questions = _crowd(seed, n)
    service = table_facts(table)
    for i, body in enumerate(bodies):
        if i % 3:  # every third fact written in the same second as the one before
            clock.advance(1.1)
        scope = f"project:{API}" if i % 4 == 0 else "workspace"
        service.add(body, scope=scope, actor=Actor("human", f"writer-{i % 40}"))
    assert service.counts()["live"] == n, seed
    cases = [
        (q, limit, scope)
        for q in questions
        for limit in (1, 3, 8, 20)
        for scope in (None, f"project:{API}")
    ]
    read: list[int] = []
    real = service.store.fact_search_rows

    def counting(*args: object, **kwargs: list[str]) -> object:
        read.append(len(kwargs["ids"]) + len(kwargs["ids_if_worded"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(service.store, "fact_search_rows", counting)
    pruned = {case: _hits(service, *case) for case in cases}
    monkeypatch.undo()
    # Reading every candidate at once: what the search did before it read them best first.
    monkeypatch.setattr(fact_base, "READ_BEST_FIRST", False)
    whole = {case: _hits(service, *case) for case in cases}
    assert pruned == whole, seed
    if n >= 60:
        # The crowd reaches the case that matters, hits capped by the limit, and the search
        # then read fewer candidates than there are facts.
        assert any(len(hits) >= 8 for hits in whole.values()), seed
        assert min(read) < n // 2, (seed, read)
