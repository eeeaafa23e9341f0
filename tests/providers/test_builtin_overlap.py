"""The built-in provider searches words beside the query's embedding: on a thread of its own,
waited for before the answer is made, and inline once the provider is closed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fleetmem.embed.local import LocalMiniLM
from fleetmem.errors import EmbeddingUnavailable, StoreError
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

API = "project:github.com/acme/api"
#: How long a side waits for the other before the test calls the two sequential.
PATIENCE_S = 10.0


class _Model:
    """The real model, with a hook run before each embedding."""

    def __init__(self, before: Callable[[], None] = lambda: None) -> None:
        self._model = LocalMiniLM()
        self.model_id = self._model.model_id
        self.dim = self._model.dim
        self.before = before

    def embed(self, texts: Sequence[str]) -> Any:
        self.before()
        return self._model.embed(texts)


class _Store:
    """``store`` with a hook run inside each word search, on the thread that searches."""

    def __init__(self, store: Any, during: Callable[[], None]) -> None:
        self._store = store
        self.during = during
        self.threads: list[str] = []

    def search_text_scored(self, match: str, scopes: Sequence[str], limit: int) -> Any:
        self.threads.append(threading.current_thread().name)
        self.during()
        return self._store.search_text_scored(match, scopes, limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _filled(make_app: Callable[..., App]) -> tuple[App, dict[str, str]]:
    app = make_app()
    texts = {
        "ledger": "the ledger reconciliation test fails at midnight rollover",
        "clock": "pinned the clock in the ledger test so reconciliation is stable",
        "lint": "bumped the linter version in the pre-commit hooks",
    }
    ids = {}
    for n, (key, text) in enumerate(texts.items()):
        record = make_record(
            run_id=f"run-{n}",
            result_text=text,
            sessions=[session(repo="github.com/acme/api")],
            started_at=f"2026-11-28T0{n}:00:00Z",
            ended_at=f"2026-11-28T0{n}:10:00Z",
        )
        episode_id = app.memory.ingest_run(record).episode_id
        assert episode_id is not None
        ids[key] = episode_id
    return app, ids


def test_the_word_search_runs_while_the_query_is_embedded(make_app: Callable[..., App]) -> None:
    """The word search waits inside for the embedding to begin: called one after the other,
    it would wait out its patience and the test fails."""
    app, ids = _filled(make_app)
    embedding = threading.Event()
    waited: list[bool] = []
    store = _Store(app.store, lambda: waited.append(embedding.wait(PATIENCE_S)))
    model = _Model(before=embedding.set)
    provider = BuiltinProvider(store, model, RankingOptions())
    try:
        reference = BuiltinProvider(app.store, LocalMiniLM(), RankingOptions())
        found = provider.recall("why does the ledger reconciliation fail", [API], 8, [])
        expected = reference.recall("why does the ledger reconciliation fail", [API], 8, [])
        assert waited == [True]
        assert store.threads and store.threads[0].startswith("fleetmem-words")
        assert found.degraded is None
        assert [i.id for i in found.items] == [i.id for i in expected.items]
        assert found.items[0].id == ids["ledger"]
        reference.close()
    finally:
        provider.close()


def test_a_closed_provider_searches_words_inline(make_app: Callable[..., App]) -> None:
    app, ids = _filled(make_app)
    store = _Store(app.store, lambda: None)
    provider = BuiltinProvider(store, _Model(), RankingOptions())
    provider.close()
    found = provider.recall("ledger reconciliation", [API], 8, [])
    assert store.threads == [threading.current_thread().name]
    assert found.items and found.items[0].id in {ids["ledger"], ids["clock"]}


def test_a_failed_word_search_fails_the_recall_after_the_vector_side(
    make_app: Callable[..., App],
) -> None:
    app, _ = _filled(make_app)
    embedded = threading.Event()

    def fail() -> None:
        embedded.wait(PATIENCE_S)
        raise StoreError("the text index is unreadable")

    provider = BuiltinProvider(_Store(app.store, fail), _Model(before=embedded.set))
    try:
        with pytest.raises(StoreError, match="unreadable"):
            provider.recall("ledger reconciliation", [API], 8, [])
        assert embedded.is_set()
    finally:
        provider.close()


def test_an_embedder_that_cannot_run_leaves_the_words(make_app: Callable[..., App]) -> None:
    """Degraded to words: the word search's answer is still waited for and used."""
    app, ids = _filled(make_app)

    def unavailable() -> None:
        raise EmbeddingUnavailable("the model file is missing")

    store = _Store(app.store, lambda: None)
    provider = BuiltinProvider(store, _Model(before=unavailable), RankingOptions())
    try:
        found = provider.recall("ledger reconciliation midnight", [API], 8, [])
        assert found.degraded == "embeddings_unavailable"
        assert found.items and found.items[0].id == ids["ledger"]
    finally:
        provider.close()


def test_closing_while_recalls_run_loses_none(make_app: Callable[..., App]) -> None:
    """Recalls on several threads while the provider closes: each answers, by a thread of
    the pool or inline, never with a pool refusing work."""
    app, ids = _filled(make_app)
    provider = BuiltinProvider(app.store, LocalMiniLM(), RankingOptions())
    answers: list[str] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(5):
                found = provider.recall("ledger reconciliation midnight", [API], 8, [])
                answers.append(found.items[0].id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    provider.close()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert answers == [ids["ledger"]] * 20
