"""What recall reads of the built-in index besides its two searches, on both stores: for the
correction for hubs (providers/episode_hubs.py) how many vectors a set of scopes holds, an
evenly spaced sample of them and every one page by page; the cosines of named episodes; and
episodes read without their bodies."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import numpy as np

from fleetmem.service.bootstrap import App
from tests.conftest import ingest_text

API = "github.com/acme/api"
WEB = "github.com/acme/web"
MODEL = "test:sample"


def _unit(rng: np.random.Generator, dim: int = 24) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def _fill(app: App, rng: np.random.Generator, repo: str, n: int) -> dict[str, np.ndarray]:
    """``n`` episodes of ``repo``, each indexed with a random unit vector under MODEL."""
    out = {}
    for i in range(n):
        at = f"2026-11-28T09:{i // 60:02d}:{i % 60:02d}Z"
        eid = ingest_text(app.memory, f"run-{repo.rsplit('/', 1)[-1]}-{i}", at, "x", repo=repo)
        vector = _unit(rng)
        app.store.builtin_put(eid, f"text {i}", None, vector, f"h-{eid}", MODEL, "")
        out[eid] = vector
    return out


def _two_repos(
    make_app: Callable[..., App], api_n: int, web_n: int
) -> tuple[int, np.random.Generator, App, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """A fresh app with ``api_n`` indexed episodes in API and ``web_n`` in WEB: (seed, its
    generator, the app, API's vectors by id, WEB's)."""
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    app = make_app()
    return seed, rng, app, _fill(app, rng, API, api_n), _fill(app, rng, WEB, web_n)


def test_count_and_sample_cover_the_scopes_asked_and_no_other(
    make_app: Callable[..., App],
) -> None:
    seed, _, app, api, web = _two_repos(make_app, 23, 9)
    store = app.store
    assert store.builtin_vector_count([f"project:{API}"], MODEL) == 23, seed
    assert store.builtin_vector_count([f"project:{API}", f"project:{WEB}"], MODEL) == 32
    assert store.builtin_vector_count([f"project:{WEB}", f"project:{WEB}"], MODEL) == 9
    assert store.builtin_vector_count([], MODEL) == 0
    assert store.builtin_vector_count([f"project:{API}"], "other:model") == 0
    for nothing in (
        store.builtin_vector_sample([f"project:{API}"], "other:model", 10),
        store.builtin_vector_sample([f"project:{API}"], MODEL, 0),
        store.builtin_vector_sample([], MODEL, 10),
    ):
        assert nothing[0] == [] and nothing[1].shape[0] == 0

    ids, rows = store.builtin_vector_sample([f"project:{API}"], MODEL, 100)
    assert sorted(ids) == sorted(api)
    assert rows.dtype == np.float32 and rows.shape == (23, 24)
    for eid, vector in zip(ids, rows, strict=True):
        # The SQLite store hands back its int8 rows: close, not equal.
        assert np.allclose(vector, api[eid], atol=0.02), (seed, eid)

    ids, rows = store.builtin_vector_sample([f"project:{API}", f"project:{WEB}"], MODEL, 8)
    assert 4 <= len(ids) <= 8 and len(set(ids)) == len(ids) == rows.shape[0], ids
    assert set(ids) <= set(api) | set(web)
    # Evenly spaced: not the first eight stored.
    assert set(ids) != set(list(api)[:8])


def test_a_deleted_episode_leaves_the_count_and_the_sample(make_app: Callable[..., App]) -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    api = _fill(app, rng, API, 6)
    gone = next(iter(api))
    assert app.store.builtin_delete(gone)
    scopes = [f"project:{API}"]
    assert app.store.builtin_vector_count(scopes, MODEL) == 5
    assert gone not in app.store.builtin_vector_sample(scopes, MODEL, 50)[0]


def test_pages_read_every_vector_of_the_scopes_once_in_stored_order(
    make_app: Callable[..., App],
) -> None:
    seed, _, app, api, web = _two_repos(make_app, 13, 6)
    both = {**api, **web}
    store = app.store
    scopes = [f"project:{WEB}", f"project:{API}"]
    for limit in (1, 4, 19, 50):
        seen: list[str] = []
        after = 0
        while True:
            ids, rows, last = store.builtin_vectors_after(scopes, MODEL, after, limit)
            if last == after:
                assert ids == [] and rows.shape[0] == 0
                break
            assert 0 < len(ids) <= limit and rows.shape == (len(ids), 24), seed
            assert rows.dtype == np.float32 and last > after
            for eid, row in zip(ids, rows, strict=True):
                assert np.allclose(row, both[eid], atol=0.02), seed  # int8 rows on SQLite
            seen += ids
            after = last
        assert seen == [*api, *web], (seed, limit)  # every one once, as they were stored
    only_web = store.builtin_vectors_after([f"project:{WEB}"], MODEL, 0, 100)[0]
    assert only_web == list(web)
    for nothing in (
        store.builtin_vectors_after(scopes, "other:model", 0, 10),
        store.builtin_vectors_after(scopes, MODEL, 0, 0),
        store.builtin_vectors_after([], MODEL, 0, 10),
        store.builtin_vectors_after(["project:elsewhere"], MODEL, 7, 10),
    ):
        assert nothing[0] == [] and nothing[1].shape[0] == 0
    assert store.builtin_vectors_after(scopes, MODEL, 7, 0)[2] == 7
    gone = list(api)[5]
    assert store.builtin_delete(gone)
    assert gone not in store.builtin_vectors_after(scopes, MODEL, 0, 100)[0]
    assert len(store.builtin_vectors_after(scopes, MODEL, 0, 100)[0]) == 18


def test_cosines_of_named_episodes_match_what_the_vector_search_scores(
    make_app: Callable[..., App],
) -> None:
    """builtin_cosines (the word-only hits' meaning) gives each episode the figure the vector
    search gives it, in any scope, leaving out ids with no vector of the model."""
    seed, rng, app, api, web = _two_repos(make_app, 17, 6)
    store = app.store
    query = _unit(rng)
    both = [f"project:{API}", f"project:{WEB}"]
    searched = dict(store.search_vector(query, MODEL, both, 100))
    assert set(searched) == set(api) | set(web), seed
    asked = [*rng.permutation(list(api))[:9].tolist(), *web, "ep_00000000000000000000"]
    got = store.builtin_cosines(query, [*asked, asked[0]], MODEL)
    assert set(got) == set(asked) - {"ep_00000000000000000000"}, seed
    for eid, cosine in got.items():
        assert abs(cosine - searched[eid]) < 1e-5, (seed, eid)
        # Close to the float cosine (the SQLite store scores its int8 rows).
        exact = float(np.dot(query, api.get(eid, web.get(eid))))
        assert abs(cosine - exact) < 0.012, (seed, eid)
    assert store.builtin_cosines(query, asked, "other:model") == {}
    assert store.builtin_cosines(query, [], MODEL) == {}
    gone = asked[1]
    assert store.builtin_delete(gone)
    assert gone not in store.builtin_cosines(query, asked, MODEL)


def test_episodes_read_without_bodies_carry_every_other_column(
    make_app: Callable[..., App],
) -> None:
    """get_episodes(bodies=False), what recall's index filter reads: the same rows with the
    body and its rendering left unread."""
    app = make_app()
    ids = [
        ingest_text(app.memory, f"run-heads-{i}", f"2026-11-28T09:00:0{i}Z", f"did {i}", repo=API)
        for i in range(3)
    ]
    app.memory.forget(ids[1])  # its row stays (body cleared): forgotten_at is read too
    whole = app.store.get_episodes([*ids, "ep_00000000000000000000"])
    heads = app.store.get_episodes([*ids, "ep_00000000000000000000"], bodies=False)
    assert set(heads) == set(whole) == set(ids)
    assert heads[ids[1]].forgotten_at is not None
    for eid in ids:
        if eid != ids[1]:
            assert whole[eid].episode is not None and whole[eid].text
        assert heads[eid].episode is None and heads[eid].text is None
        assert heads[eid] == dataclasses.replace(whole[eid], episode=None, text=None)
    assert app.store.get_episodes([], bodies=False) == {}
