"""Facts search orders by a cosine corrected for hubs (service/fact_hubs.py): the neighbour
similarities against brute force, the correction's scale, and through FactService that it
reorders the facts that match without changing which facts match."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from fleetmem.service.fact_hubs import (
    HUB_WEIGHT,
    NeighbourCache,
    adjusted,
    neighbour_similarity,
)
from fleetmem.service.facts import FactService
from tests.facts.conftest import ALICE, Clock


def _unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _brute(matrix: np.ndarray, k: int, columns: Sequence[int] | None = None) -> np.ndarray:
    cols = list(range(len(matrix))) if columns is None else list(columns)
    out = []
    for i, row in enumerate(matrix):
        sims = sorted((float(row @ matrix[j]) for j in cols if j != i), reverse=True)
        out.append(np.mean(sims[:k]) if sims else 0.0)
    return np.array(out, dtype=np.float32)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 17, 600, 1300])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_neighbour_similarity_is_the_mean_of_the_k_nearest_others(n: int, k: int) -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    matrix = _unit_rows(rng, n, 24)
    got = neighbour_similarity(matrix, k)
    assert got.shape == (n,)
    if n < 2:
        assert not got.any()
        return
    np.testing.assert_allclose(got, _brute(matrix, k), rtol=0, atol=1e-5)


def test_past_the_sample_size_neighbours_come_from_an_evenly_spaced_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fleetmem.embed.neighbours as hubs

    monkeypatch.setattr(hubs, "SAMPLE", 50)
    monkeypatch.setattr(hubs, "BLOCK", 16)
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    matrix = _unit_rows(rng, 203, 16)
    step = -(-203 // 50)
    np.testing.assert_allclose(
        hubs.neighbour_similarity(matrix, 3),
        _brute(matrix, 3, columns=range(0, 203, step)),
        rtol=0,
        atol=1e-5,
    )


def test_a_vector_that_is_not_finite_is_nobodys_neighbour() -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    matrix = _unit_rows(rng, 12, 8)
    matrix[4] = np.nan
    got = neighbour_similarity(matrix, 3)
    assert np.isfinite(got).all()
    clean = np.delete(matrix, 4, axis=0)
    np.testing.assert_allclose(np.delete(got, 4), _brute(clean, 3), atol=1e-5)
    assert got[4] == pytest.approx(float(np.delete(got, 4).mean()), abs=1e-6)


def test_the_correction_keeps_the_plain_cosines_scale() -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    cosines = rng.uniform(-1, 1, 40).astype(np.float32)
    neighbours = rng.uniform(0, 1, 40).astype(np.float32)
    out = adjusted(cosines, neighbours)
    # A fact of average density keeps its cosine; the mean over the workspace is unchanged.
    assert float(out.mean()) == pytest.approx(float(cosines.mean()), abs=1e-5)
    np.testing.assert_allclose(
        out - cosines, -HUB_WEIGHT * (neighbours - neighbours.mean()), atol=1e-6
    )
    assert adjusted(cosines, np.zeros(0, dtype=np.float32)) is cosines


def test_the_cache_recomputes_only_when_the_facts_change() -> None:
    rng = np.random.default_rng(1)
    matrix = _unit_rows(rng, 10, 8)
    cache = NeighbourCache()
    ids, hashes = tuple(f"f{i}" for i in range(10)), tuple(f"h{i}" for i in range(10))
    first = cache.get(ids, hashes, matrix)
    assert cache.get(ids, hashes, matrix) is first
    edited = (*hashes[:-1], "h9-new")
    moved = matrix.copy()
    moved[9] = -moved[9]
    assert not np.allclose(cache.get(ids, edited, moved), first)


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7)) for _ in range(n))


def _layout(seed: int, *, below: bool) -> tuple[dict[str, np.ndarray], list[str], str, str]:
    """30 templated facts close to one another, one fact unlike the rest, and a question a
    little closer to every templated one than to the unlike one (or, ``below``, with the
    unlike one under the search threshold of an uncalibrated model, 0.55)."""
    rng = np.random.default_rng(seed)
    words = random.Random(seed)
    dim = 64
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0].astype(np.float32)
    hub, lone, other = basis[0], basis[1], basis[2:]
    templated = []
    table: dict[str, np.ndarray] = {}
    for i in range(30):
        v = hub + 0.25 * (other[i % len(other)] * rng.choice([-1, 1]))
        body = f"templated {_words(words, 3)}"
        table[body] = (v / np.linalg.norm(v)).astype(np.float32)
        templated.append(body)
    unlike = f"unlike {_words(words, 3)}"
    table[unlike] = lone
    # cos(question, templated) ~ 0.68 for each; cos(question, unlike) = 0.62 or 0.5.
    towards_lone = 0.5 if below else 0.62
    q = 0.7 * hub + towards_lone * lone
    rest = np.sqrt(max(0.0, 1 - float(q @ q)))
    q = q + rest * other[-1]
    question = f"question {_words(words, 2)}"
    table[question] = (q / np.linalg.norm(q)).astype(np.float32)
    return table, templated, unlike, question


def _laid_out(
    table_facts: Callable[[dict[str, np.ndarray]], FactService], clock: Clock, *, below: bool
) -> tuple[int, FactService, dict[str, np.ndarray], list[str], dict[str, str], str, str]:
    """A service holding :func:`_layout`'s facts: (seed, service, table, templated, ids,
    unlike, question)."""
    seed = random.SystemRandom().randrange(2**32)
    table, templated, unlike, question = _layout(seed, below=below)
    service = table_facts(table)
    ids = {}
    for body in [*templated, unlike]:
        clock.advance(1.1)
        ids[body] = service.add(body, actor=ALICE).fact.id
    return seed, service, table, templated, ids, unlike, question


def test_a_fact_unlike_the_rest_outranks_a_crowd_of_alike_ones(
    table_facts: Callable[[dict[str, np.ndarray]], FactService], clock: Clock
) -> None:
    seed, service, table, templated, ids, unlike, question = _laid_out(
        table_facts, clock, below=False
    )
    t = service.thresholds()
    plain = {b: float(table[question] @ table[b]) for b in [*templated, unlike]}
    assert min(plain[b] for b in templated) > plain[unlike] > t.search, seed
    hits = service.search(question).hits
    assert hits[0].fact.id == ids[unlike], seed
    # Every hit matched by meaning; the bar shown is the corrected order's, and the strength
    # (what calibrated floors compare) is the plain cosine's.
    assert all(h.matched == ("meaning",) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    by_id = {h.fact.id: h for h in hits}
    assert by_id[ids[unlike]].strength < max(h.strength for h in hits), seed


def test_the_correction_never_makes_a_fact_match(
    table_facts: Callable[[dict[str, np.ndarray]], FactService], clock: Clock
) -> None:
    seed, service, table, _, ids, unlike, question = _laid_out(table_facts, clock, below=True)
    assert float(table[question] @ table[unlike]) < service.thresholds().search, seed
    got = [h.fact.id for h in service.search(question).hits]
    assert ids[unlike] not in got and got, seed
