"""Recall's correction for hubs (providers/episode_hubs.py): each candidate's neighbour
similarity among the searched episodes, less its mean, taken off its cosine before the score
fusion; on both stores, with geometries laid out by hand and fresh random values."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from fleetmem.core.ranking import Calibration
from fleetmem.providers import episode_hubs
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.providers.episode_hubs import EpisodeHubs
from fleetmem.service.bootstrap import App
from tests.conftest import ingest_text
from tests.fakes.table_embedder import TableEmbedder

REPO = "github.com/acme/api"
SCOPES = [f"project:{REPO}"]
MODEL = "test:table"
#: The int8 MiniLM's calibration: any cosine above 0 counts, the question floor is low.
CALIBRATION = Calibration(floor=0.0, full=0.8, relevant=0.16)


def _store_vectors(
    app: App, vectors: Sequence[np.ndarray], texts: Sequence[str], *, first: int = 0
) -> list[str]:
    ids = [
        ingest_text(
            app.memory,
            f"run-{i}",
            f"2026-11-28T{9 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "x",
            repo=REPO,
        )
        for i in range(first, first + len(vectors))
    ]
    for eid, vector, text in zip(ids, vectors, texts, strict=True):
        # Written last, so no neighbour's later re-index replaces the chosen text.
        app.store.builtin_put(
            eid, text, None, np.asarray(vector, np.float32), f"h-{eid}", MODEL, ""
        )
    return ids


def _brute(matrix: np.ndarray, k: int = 3) -> np.ndarray:
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)
    near = np.sort(sims, axis=1)[:, -k:].mean(axis=1)
    return near - near.mean()


class _Counting:
    """The store, counting what the correction asks of it."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        self.calls[name] = self.calls.get(name, 0) + 1
        return getattr(self.store, name)


def _random_units(rng: np.random.Generator, n: int, dim: int = 32) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_offsets_are_each_episodes_neighbour_similarity_less_the_mean(
    make_app: Callable[..., App],
) -> None:
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    app = make_app()
    # Clusters of unequal tightness, so neighbour similarities differ widely.
    centres = _random_units(rng, 4)
    rows = []
    for i in range(40):
        v = centres[i % 4] + (0.2 + 0.3 * (i % 4)) * _random_units(rng, 1)[0]
        rows.append(v / np.linalg.norm(v))
    matrix = np.stack(rows).astype(np.float32)
    ids = _store_vectors(app, matrix, [f"text {i}" for i in range(40)])
    got = EpisodeHubs(app.store, background=False).offsets(ids, SCOPES, MODEL)
    want = _brute(matrix)
    assert set(got) == set(ids)
    # The SQLite store keeps its rows as int8: within a few thousandths.
    assert np.allclose([got[i] for i in ids], want, atol=0.01), seed
    hubs = EpisodeHubs(app.store, background=False)
    assert hubs.offsets(ids, ["project:elsewhere"], MODEL) == {}
    assert hubs.offsets(ids, SCOPES, "other:model") == {}


def test_past_the_sample_neighbours_come_from_an_evenly_spaced_sample(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    app = make_app()
    matrix = _random_units(rng, 30)
    ids = _store_vectors(app, matrix, [f"text {i}" for i in range(30)])
    got = EpisodeHubs(app.store, sample=10, background=False).offsets(ids, SCOPES, MODEL)
    sampled, _ = app.store.builtin_vector_sample(SCOPES, MODEL, 10)
    columns = [ids.index(eid) for eid in sampled]
    assert len(columns) == 10, seed
    others = matrix[columns]
    sims = matrix @ others.T
    for at, column in enumerate(columns):
        sims[column, at] = -np.inf
    near = np.sort(sims, axis=1)[:, -3:].mean(axis=1)
    own = np.sort(np.where(np.eye(10, dtype=bool), -np.inf, others @ others.T), axis=1)[:, -3:]
    want = near - own.mean(axis=1).mean()
    assert np.allclose([got[i] for i in ids], want, atol=0.01), seed


def _counted(app: App, **kwargs: Any) -> tuple[EpisodeHubs, _Counting, list[float]]:
    counting = _Counting(app.store)
    now = [0.0]
    hubs = EpisodeHubs(
        counting,  # type: ignore[arg-type]
        recheck_s=30.0,
        clock=lambda: now[0],
        background=False,
        **kwargs,
    )
    return hubs, counting, now


def test_past_the_table_size_offsets_are_computed_once_when_first_asked_for(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    monkeypatch.setattr(episode_hubs, "WARM", 5)
    monkeypatch.setattr(episode_hubs, "TABLE_MAX", 5)
    monkeypatch.setattr(episode_hubs, "MIN_CHANGE", 2)
    ids = _store_vectors(app, _random_units(rng, 12), [f"text {i}" for i in range(12)])
    hubs, counting, now = _counted(app)
    first = hubs.offsets(ids, SCOPES, MODEL)
    assert counting.calls == {
        "builtin_vector_count": 1,
        "builtin_vector_sample": 1,
        "builtin_vectors_for": 1,
    }
    assert hubs.offsets(ids[:5], SCOPES, MODEL) == {i: first[i] for i in ids[:5]}
    assert counting.calls["builtin_vectors_for"] == 1  # kept
    assert counting.calls["builtin_vector_count"] == 1  # not checked again within 30 s
    now[0] = 31.0
    hubs.offsets(ids, SCOPES, MODEL)
    assert counting.calls["builtin_vector_count"] == 2  # checked: unchanged, sample kept
    assert counting.calls["builtin_vectors_for"] == 2  # (every sampled episode still there)
    assert counting.calls["builtin_vector_sample"] == 1
    # Three more episodes: more than a tenth, so a new sample, and offsets computed again.
    more = _store_vectors(app, _random_units(rng, 3), ["a", "b", "c"], first=12)
    assert not set(more) & set(ids)
    now[0] = 62.0
    again = hubs.offsets([*ids, *more], SCOPES, MODEL)
    assert counting.calls["builtin_vector_count"] == 3
    assert counting.calls["builtin_vector_sample"] == 2
    assert counting.calls["builtin_vectors_for"] == 3  # the fifteen, against the new sample
    assert set(again) == {*ids, *more}


@pytest.mark.parametrize("sample", [1024, 6])
def test_up_to_the_warm_size_every_offset_is_worked_out_with_the_sample(
    make_app: Callable[..., App], sample: int
) -> None:
    """No recall reads a stored vector: the offsets were all worked out when the sample was
    fetched (from the sample itself, or, past its size, from every episode fetched once);
    and they are the ones a recall would have worked out."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    ids = _store_vectors(app, _random_units(rng, 14), [f"text {i}" for i in range(14)])
    hubs, counting, _ = _counted(app, sample=sample)
    got = hubs.offsets(ids, SCOPES, MODEL)
    assert set(got) == set(ids)
    assert "builtin_vectors_for" not in counting.calls
    assert counting.calls["builtin_vector_sample"] == 1
    # Past the sample's size every stored vector is read once more, a page at a time.
    assert counting.calls.get("builtin_vectors_after", 0) == (0 if sample >= 14 else 2)
    cold, _, _ = _counted(app, sample=sample)
    key = (MODEL, tuple(SCOPES))
    fetched, _, _ = cold._fetch(tuple(SCOPES), MODEL, 14, 0.0)
    cold._samples[key] = fetched
    assert cold.offsets(ids, SCOPES, MODEL) == pytest.approx(got, abs=1e-4)


def test_past_the_warm_size_the_sample_serves_at_once_and_every_offset_follows(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between WARM and TABLE_MAX: the first recall gets its candidates' offsets worked out
    from their stored vectors, while every episode's is worked out in the background, a page
    at a time; after that, recalls read no stored vector, except for an episode stored
    since, and the offsets are the ones a recall would have worked out."""
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    app = make_app()
    monkeypatch.setattr(episode_hubs, "WARM", 5)
    monkeypatch.setattr(episode_hubs, "TABLE_MAX", 100)
    monkeypatch.setattr(episode_hubs, "PAGE", 4)
    # The first recall waits for the sample (the wait ends as soon as it is in), so its
    # offsets are always worked out, whatever the machine's load.
    monkeypatch.setattr(episode_hubs, "FIRST_WAIT_S", 10.0)
    ids = _store_vectors(app, _random_units(rng, 17), [f"text {i}" for i in range(17)])
    counting = _Counting(app.store)
    hubs = EpisodeHubs(counting, sample=6)  # type: ignore[arg-type]
    try:
        first = hubs.offsets(ids[:3], SCOPES, MODEL)
        assert set(first) == set(ids[:3]), seed
        hubs.settle()
        # 17 vectors in pages of 4: five pages, and the empty one that ends the reading.
        assert counting.calls["builtin_vectors_after"] == 6, seed
        sample = hubs._sample(tuple(SCOPES), MODEL)
        assert sample is not None and sample.table is not None
        assert len(sample.table.keys) == 17
        counting.calls.clear()
        got = hubs.offsets(ids, SCOPES, MODEL)
        assert set(got) == set(ids) and counting.calls.get("builtin_vectors_for", 0) == 0
        assert first == pytest.approx({i: got[i] for i in first}, abs=1e-4)  # the same
        cold = EpisodeHubs(app.store, sample=6, background=False)
        cold._samples[(MODEL, tuple(SCOPES))] = cold._fetch(tuple(SCOPES), MODEL, 17, 0.0)[0]
        assert cold.offsets(ids, SCOPES, MODEL) == pytest.approx(got, abs=1e-4), seed
        # One stored since the table was made: worked out when asked for, the rest looked up.
        more = _store_vectors(app, _random_units(rng, 1), ["new"], first=17)
        counting.calls.clear()
        assert set(hubs.offsets([*ids, *more], SCOPES, MODEL)) == {*ids, *more}
        assert counting.calls.get("builtin_vectors_for", 0) == 1
    finally:
        hubs.close()


def _store_other(app: App, rng: np.random.Generator, n: int) -> tuple[list[str], list[str]]:
    """``n`` episodes of a second repository, each with a random vector: (their ids, the
    scopes to search them)."""
    other = "github.com/acme/web"
    ids = []
    for i in range(n):
        eid = ingest_text(app.memory, f"web-{i}", f"2026-11-29T09:00:{i:02d}Z", "x", repo=other)
        app.store.builtin_put(eid, f"w{i}", None, _random_units(rng, 1)[0], f"h-{eid}", MODEL, "")
        ids.append(eid)
    return ids, [f"project:{other}"]


def test_with_more_sets_of_scopes_than_are_kept_tables_are_not_made_in_turn(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set of scopes pushed out by another and asked again within CHURN_S gets its
    sample but no table (its candidates' offsets are worked out on use); one asked again
    later gets its table again."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    monkeypatch.setattr(episode_hubs, "WARM", 5)
    monkeypatch.setattr(episode_hubs, "TABLE_MAX", 100)
    monkeypatch.setattr(episode_hubs, "MAX_SAMPLES", 1)
    mine = _store_vectors(app, _random_units(rng, 12), [f"t{i}" for i in range(12)])
    others, web = _store_other(app, rng, 12)
    hubs, counting, now = _counted(app, sample=6)

    def tables_made() -> int:
        return counting.calls.get("builtin_vectors_after", 0)

    assert set(hubs.offsets(mine, SCOPES, MODEL)) == set(mine)
    assert tables_made() == 2  # 12 rows in one page, and the empty one after
    assert set(hubs.offsets(others, web, MODEL)) == set(others)
    assert tables_made() == 4  # its first time: a table
    now[0] = 100.0
    assert set(hubs.offsets(mine, SCOPES, MODEL)) == set(mine)  # pushed out a moment ago
    assert tables_made() == 4
    sample = hubs._sample(tuple(SCOPES), MODEL)
    assert sample is not None and sample.table is None and len(sample.cached) == 12
    now[0] = 100.0 + episode_hubs.CHURN_S + 1
    assert set(hubs.offsets(others, web, MODEL)) == set(others)  # pushed out long ago
    assert tables_made() == 6


class _SlowPages(_Counting):
    """The store, logging what the correction reads and taking ``delay`` seconds a page."""

    def __init__(self, store: Any, delay: float) -> None:
        super().__init__(store)
        self.delay = delay
        self.log: list[tuple[str, tuple[str, ...]]] = []

    def builtin_vector_sample(self, scopes: Sequence[str], *args: Any) -> Any:
        self.log.append(("sample", tuple(scopes)))
        return self.store.builtin_vector_sample(scopes, *args)

    def builtin_vectors_after(self, scopes: Sequence[str], *args: Any) -> Any:
        self.log.append(("page", tuple(scopes)))
        time.sleep(self.delay)
        return self.store.builtin_vectors_after(scopes, *args)


def test_a_table_being_made_lets_another_scopes_first_sample_go_first(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is made a few pages a turn: a first recall of other scopes, meanwhile, gets
    its sample fetched between two turns rather than after the whole table; both tables
    end complete."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    monkeypatch.setattr(episode_hubs, "WARM", 5)
    monkeypatch.setattr(episode_hubs, "PAGE", 4)
    monkeypatch.setattr(episode_hubs, "PAGES_A_TURN", 1)
    monkeypatch.setattr(episode_hubs, "FIRST_WAIT_S", 10.0)
    ids = _store_vectors(app, _random_units(rng, 20), [f"t{i}" for i in range(20)])
    others, web = _store_other(app, rng, 8)
    slow = _SlowPages(app.store, 0.5)
    hubs = EpisodeHubs(slow, sample=6)  # type: ignore[arg-type]
    try:
        hubs.offsets(ids[:3], SCOPES, MODEL)  # back once the sample is in; pages follow
        hubs.offsets(others[:3], web, MODEL)
        hubs.settle()
        mine = tuple(SCOPES)
        last_page = max(n for n, entry in enumerate(slow.log) if entry == ("page", mine))
        assert slow.log.index(("sample", tuple(web))) < last_page, slow.log
        for scopes, wanted in ((mine, ids), (tuple(web), others)):
            sample = hubs._sample(scopes, MODEL)
            assert sample is not None and sample.table is not None
            assert len(sample.table.look_up(wanted)) == len(wanted)
    finally:
        hubs.close()


class _Slow(_Counting):
    """The store, taking ``delay`` seconds to hand back a sample."""

    def __init__(self, store: Any, delay: float) -> None:
        super().__init__(store)
        self.delay = delay

    def builtin_vector_sample(self, *args: Any) -> Any:
        time.sleep(self.delay)
        return self.store.builtin_vector_sample(*args)


def test_the_first_recall_of_a_scope_waits_a_moment_for_its_sample(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sample ready within FIRST_WAIT_S serves the very first recall; a slower one does
    not hold it up (that recall is not corrected), and serves the recalls after it."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    ids = _store_vectors(app, _random_units(rng, 10), [f"t{i}" for i in range(10)])
    # The wait ends as soon as the sample is in, so a long one costs nothing here and keeps
    # a loaded machine (a parallel test run) from making the sample late.
    monkeypatch.setattr(episode_hubs, "FIRST_WAIT_S", 10.0)
    quick = EpisodeHubs(_Slow(app.store, 0.01))  # type: ignore[arg-type]
    try:
        started = time.monotonic()
        assert set(quick.offsets(ids, SCOPES, MODEL)) == set(ids)
        assert time.monotonic() - started < 5.0  # back once the sample is in, not at 10 s
    finally:
        quick.close()
    monkeypatch.setattr(episode_hubs, "FIRST_WAIT_S", 0.05)
    slow = EpisodeHubs(_Slow(app.store, 4.0))  # type: ignore[arg-type]
    try:
        started = time.monotonic()
        assert slow.offsets(ids, SCOPES, MODEL) == {}
        assert time.monotonic() - started < 3.0  # not the 4 s the sample takes
        slow.settle()
        assert set(slow.offsets(ids, SCOPES, MODEL)) == set(ids)
    finally:
        slow.close()


def test_an_episode_forgotten_leaves_the_sample(make_app: Callable[..., App]) -> None:
    """Forgotten through this provider: its sample is dropped at once. Forgotten elsewhere
    (another daemon): the next check finds it gone and fetches the sample again."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    ids = _store_vectors(app, _random_units(rng, 12), [f"t{i}" for i in range(12)])
    now = [0.0]
    hubs = EpisodeHubs(app.store, clock=lambda: now[0], background=False)
    hubs.offsets(ids, SCOPES, MODEL)
    sampled = hubs._sample(tuple(SCOPES), MODEL)
    assert sampled is not None and ids[0] in sampled.columns
    hubs.forget(ids[0])
    assert app.store.builtin_delete(ids[0])
    after = hubs._sample(tuple(SCOPES), MODEL)
    assert after is not None and ids[0] not in after.columns
    # Elsewhere: the store loses an episode this object was not told about.
    assert app.store.builtin_delete(ids[1])
    assert ids[1] in after.columns
    now[0] += episode_hubs.RECHECK_S + 1
    refreshed = hubs._sample(tuple(SCOPES), MODEL)
    assert refreshed is not None and ids[1] not in refreshed.columns


def test_too_few_episodes_to_have_neighbours_get_no_correction(
    make_app: Callable[..., App],
) -> None:
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    app = make_app()
    ids = _store_vectors(app, _random_units(rng, 3), ["a", "b", "c"])
    assert EpisodeHubs(app.store, background=False).offsets(ids, SCOPES, MODEL) == {}


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7)) for _ in range(n))


def test_a_run_unlike_the_rest_outranks_a_crowd_of_runs_written_alike(
    make_app: Callable[..., App],
) -> None:
    """20 runs written alike (one template) and one run unlike them; the question is a little
    closer to every templated run than to the lone one it is about, and shares no word with
    any. Without the correction the crowd fills the top; with it the lone run comes first.
    (The crowd is smaller than the CORRECTED best candidates the correction reaches.)"""
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    words = random.Random(seed)
    dim = 64
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0].astype(np.float32)
    hub, lone, other = basis[0], basis[1], basis[2:]
    vectors, texts = [], []
    for i in range(20):
        v = hub + 0.25 * other[i % 40] * rng.choice([-1, 1])
        vectors.append(v / np.linalg.norm(v))
        texts.append(f"templated {_words(words, 3)}")
    vectors.append(lone)
    texts.append(f"unlike {_words(words, 3)}")
    q = 0.7 * hub + 0.62 * lone
    q = q + np.sqrt(max(0.0, 1 - float(q @ q))) * other[-1]
    question = f"question {_words(words, 2)}"
    app = make_app()
    ids = _store_vectors(app, vectors, texts)
    embedder = TableEmbedder({question: (q / np.linalg.norm(q)).astype(np.float32)}, MODEL)

    def first(weight: float) -> str:
        provider = BuiltinProvider(
            app.store, embedder, RankingOptions(hub_weight=weight), calibration=CALIBRATION
        )
        try:
            provider.recall(question, SCOPES, 5, [])
            provider.hubs.settle()  # the first recall of a scope may find no sample yet
            answer = provider.recall(question, SCOPES, 5, [])
        finally:
            provider.close()
        assert answer.items, seed
        return answer.items[0].id

    assert first(0.0) != ids[-1], seed  # the crowd wins on plain cosines
    assert first(RankingOptions().hub_weight) == ids[-1], seed


def test_the_correction_never_makes_an_unrelated_question_answered(
    make_app: Callable[..., App],
) -> None:
    """The question-level floor reads the plain cosines: a lone run far below it stays
    unanswered however isolated it is."""
    seed = random.SystemRandom().randrange(2**32)
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((32, 32)))[0].astype(np.float32)
    vectors = [basis[0] + 0.1 * basis[2 + i % 20] for i in range(20)] + [basis[1]]
    vectors = [v / np.linalg.norm(v) for v in vectors]
    app = make_app()
    _store_vectors(app, vectors, [f"t{i}" for i in range(21)])
    q = 0.1 * basis[1] + np.sqrt(1 - 0.01) * basis[-1]  # cosine 0.1 to the lone run
    embedder = TableEmbedder({"far away": q.astype(np.float32)}, MODEL)
    provider = BuiltinProvider(
        app.store, embedder, RankingOptions(hub_weight=1.0), calibration=CALIBRATION
    )
    try:
        provider.recall("far away", SCOPES, 5, [])
        provider.hubs.settle()
        assert provider.recall("far away", SCOPES, 5, []).items == (), seed
    finally:
        provider.close()


def test_hub_weight_is_checked() -> None:
    from fleetmem.errors import InvalidInput

    for bad in (-0.1, float("nan"), "0.2", True):
        with pytest.raises(InvalidInput, match="hub_weight"):
            RankingOptions(hub_weight=bad)  # type: ignore[arg-type]
