"""The int8 copy of the offline model that embeds queries (fleetmem.embed.query_model).

Real model, real child processes, real onnxruntime: each test that makes a copy spends the
few seconds it takes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fleetmem.embed import local, query_model
from fleetmem.embed.base import embed_query
from fleetmem.embed.local import LocalMiniLM
from fleetmem.embed.memo import RecentQueries
from fleetmem.integrations import hookmain
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

QUESTION = "why did the nightly ledger reconciliation fail"


def _env(cache: Path, **extra: str) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(cache), **extra}


def _copy_path(cache: Path) -> Path:
    return query_model.cache_file(local.MODEL_SHA256, _env(cache))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder holding a copy made by the real child process."""
    cache = tmp_path_factory.mktemp("query-model-cache")
    model = LocalMiniLM(query_copy=True, environ=_env(cache))
    assert model.prepare_query_model() is True
    return cache


def _clone(made: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(made, cache)
    return cache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_queries_embed_by_the_copy_and_documents_by_the_shipped_model(made: Path) -> None:
    model = LocalMiniLM(query_copy=True, environ=_env(made))
    shipped = LocalMiniLM(query_copy=False)
    model.load()
    health = model.health(probe=False)
    assert health.state == "ok" and health.queries == "the int8 copy of the model"
    assert "queries by the int8 copy" in health.sentence()
    assert health.as_dict()["queries"] == "the int8 copy of the model"
    # Answering queries needs only the copy: the shipped model's session is not loaded.
    assert model.document_model_loaded is False
    # The copy's session shrinks onnxruntime's arena after each run, as the shipped model's.
    copy = model._query
    assert copy is not None
    assert copy.run_options.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    fast = model.embed_query(QUESTION)
    assert model.document_model_loaded is False
    full = shipped.embed([QUESTION])[0]
    assert fast.shape == (384,) and fast.dtype == np.float32
    assert abs(float(np.linalg.norm(fast)) - 1.0) < 1e-5
    cosine = float(fast @ full)
    assert local.MIN_AGREEMENT <= cosine < 0.99999  # the copy's own vector, close to the model's
    # Documents are always the shipped model's: stored vectors never depend on the copy.
    documents = model.embed([QUESTION, "a second document about billing deploys"])
    assert model.document_model_loaded is True
    assert np.allclose(
        documents, shipped.embed([QUESTION, "a second document about billing deploys"])
    )


def test_the_copy_ranks_a_query_as_the_shipped_model_does(made: Path) -> None:
    documents = [
        "pinned the clock in the ledger reconciliation test so it passes at midnight",
        "bumped the linter in the pre-commit hooks",
        "the deploy pipeline now waits for the database migration to finish",
        "rewrote the billing export to stream rows instead of loading them all",
        "fixed a flaky websocket reconnect test by waiting for the handshake",
        "the docs site build failed because a link pointed at a removed page",
    ]
    queries = [
        "why is the reconciliation flaky around midnight",
        "which change made deploys wait for migrations",
        "billing export runs out of memory",
        "the socket test fails sometimes",
    ]
    model = LocalMiniLM(query_copy=True, environ=_env(made))
    shipped = LocalMiniLM(query_copy=False)
    vectors = shipped.embed(documents)
    for query in queries:
        by_copy = np.argsort(-(vectors @ model.embed_query(query)))[:3]
        by_shipped = np.argsort(-(vectors @ shipped.embed([query])[0]))[:3]
        assert by_copy[0] == by_shipped[0], query


def test_the_shipped_model_is_let_go_when_documents_stop(made: Path) -> None:
    clock = Clock()
    model = LocalMiniLM(query_copy=True, environ=_env(made), clock=clock, document_idle_s=3600.0)
    first = model.embed(["a document"])
    assert model.document_model_loaded is True
    clock.now += 1800
    assert model.release_idle_document_model() is False  # still within the idle time
    assert model.document_model_loaded is True
    clock.now += 1801
    assert model.release_idle_document_model() is True
    assert model.document_model_loaded is False
    assert model.embed_query(QUESTION).shape == (384,)  # queries never needed it
    assert model.document_model_loaded is False
    again = model.embed(["a document"])  # loaded again on demand, same vector
    assert model.document_model_loaded is True and np.allclose(first, again)


def test_without_the_copy_the_shipped_model_is_kept_for_queries(tmp_path: Path) -> None:
    clock = Clock()
    model = LocalMiniLM(
        query_copy=True, environ=_env(tmp_path / "empty"), clock=clock, document_idle_s=1.0
    )
    assert "not made yet" in (model.health().queries or "")
    vector = model.embed_query(QUESTION)
    assert np.array_equal(vector, model.embed([QUESTION])[0])
    clock.now += 10
    assert model.release_idle_document_model() is False
    assert model.document_model_loaded is True
    assert not (tmp_path / "empty").exists()  # loading alone never makes a copy


def test_full_setting_keeps_queries_on_the_shipped_model(made: Path) -> None:
    model = LocalMiniLM(environ=_env(made, FLEETMEM_QUERY_MODEL="full"))
    assert model.prepare_query_model() is False
    assert model.health().queries == "the shipped model (FLEETMEM_QUERY_MODEL=full)"
    assert np.array_equal(model.embed_query(QUESTION), model.embed([QUESTION])[0])
    assert query_model.wanted({"FLEETMEM_QUERY_MODEL": " Full "}) is False
    assert query_model.wanted({}) is True


def test_a_copy_whose_bytes_changed_is_not_used_and_is_made_again(
    made: Path, tmp_path: Path
) -> None:
    cache = _clone(made, tmp_path)
    path = _copy_path(cache)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert query_model.ready(path) is False
    model = LocalMiniLM(query_copy=True, environ=_env(cache))
    assert "not made yet" in (model.health().queries or "")
    assert np.array_equal(model.embed_query(QUESTION), model.embed([QUESTION])[0])
    assert model.prepare_query_model() is True
    assert query_model.ready(path) is True
    assert model.health().queries == "the int8 copy of the model"
    assert path.read_bytes() == _copy_path(made).read_bytes()  # made the same way again


def test_a_copy_that_embeds_the_probes_otherwise_is_not_used(made: Path, tmp_path: Path) -> None:
    cache = _clone(made, tmp_path)
    sidecar = _copy_path(cache).with_name(_copy_path(cache).name + ".json")
    record = json.loads(sidecar.read_text())
    texts = list(record["probes"])
    # Each probe's recorded vector swapped for another's: the bytes still match, the
    # meaning does not.
    record["probes"] = {
        t: record["probes"][texts[(i + 1) % len(texts)]] for i, t in enumerate(texts)
    }
    sidecar.write_text(json.dumps(record))
    assert query_model.ready(_copy_path(cache)) is True
    model = LocalMiniLM(query_copy=True, environ=_env(cache))
    note = model.health().queries or ""
    assert note.startswith("the shipped model (the int8 copy disagrees with it: cosine")
    assert np.array_equal(model.embed_query(QUESTION), model.embed([QUESTION])[0])


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r.pop("probes"),
        lambda r: r["probes"].popitem(),
        lambda r: r["probes"].update({query_model.PROBES[0]: [0.0] * 383}),
        lambda r: r["probes"].update({query_model.PROBES[0]: [float("nan")] * 384}),
        lambda r: r["probes"].update({query_model.PROBES[0]: ["0.1"] * 384}),
        lambda r: r.update({"sha256": "0" * 64}),
    ],
    ids=["no-probes", "a-probe-missing", "short", "nan", "strings", "wrong-sha"],
)
def test_a_damaged_record_means_no_copy(
    made: Path, tmp_path: Path, damage: Callable[[dict[str, object]], object]
) -> None:
    cache = _clone(made, tmp_path)
    path = _copy_path(cache)
    sidecar = path.with_name(path.name + ".json")
    record = json.loads(sidecar.read_text())
    damage(record)
    sidecar.write_text(json.dumps(record))
    assert query_model.ready(path) is False
    assert query_model.probe_vectors(path) is None
    sidecar.write_text("{not json")
    assert query_model.ready(path) is False


def test_processes_asking_at_once_make_the_copy_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = local._model_file()
    out = _copy_path(tmp_path)
    answers: list[bool] = []
    caplog.set_level(logging.INFO, logger="fleetmem.embed.query_model")
    threads = [
        threading.Thread(target=lambda: answers.append(query_model.prepare(source, out)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert answers == [True, True, True]
    made_records = [r for r in caplog.records if "embed.query_model_made" in r.getMessage()]
    assert len(made_records) == 1
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name, out.name + ".json"]


def test_a_failing_child_leaves_nothing_behind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = _copy_path(tmp_path)
    assert query_model.prepare(tmp_path / "no-such-model.onnx", out) is False
    assert "child_failed" in caplog.text
    assert list(out.parent.iterdir()) == []  # no lock, no half-made file
    model = LocalMiniLM(query_copy=True, environ=_env(tmp_path))
    assert np.array_equal(model.embed_query(QUESTION), model.embed([QUESTION])[0])


def test_a_stale_lock_is_taken_over_and_a_live_one_waited_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = _copy_path(tmp_path)
    out.parent.mkdir(parents=True)
    lock = out.with_name(out.name + ".lock")
    lock.write_text("12345")
    old = time.time() - query_model.STALE_LOCK_S - 5
    os.utime(lock, (old, old))
    # A lock left by a dead maker is taken over: this attempt reaches the child (which
    # fails here, on a missing source, quickly).
    assert query_model.prepare(tmp_path / "missing.onnx", out) is False
    assert "child_failed" in caplog.text and not lock.exists()
    lock.write_text("12345")  # a live maker: the asker waits, then gives up at its deadline
    started = time.monotonic()
    assert query_model.prepare(tmp_path / "missing.onnx", out, timeout_s=0.5) is False
    assert 0.4 < time.monotonic() - started < 5
    assert "another_process_still_making_it" in caplog.text and lock.exists()


def test_a_cache_folder_that_cannot_be_made_keeps_the_shipped_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    model = LocalMiniLM(query_copy=True, environ=_env(blocker))
    assert model.prepare_query_model() is False
    assert "could not be made" in (model.health().queries or "")
    assert "reason=cache_folder" in caplog.text


def test_the_daemon_warm_up_makes_the_copy_and_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hookmain, "QUERY_MODEL_AFTER_S", 0.0)
    model = LocalMiniLM(query_copy=True, environ=_env(tmp_path))
    app = SimpleNamespace(embedder=RecentQueries(model), files=None)  # assembly fails: logged
    hookmain.warm_for_hooks(app)
    assert model.health(probe=False).queries == "the int8 copy of the model"
    assert query_model.ready(_copy_path(tmp_path))


class Spy(LocalMiniLM):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[override]
        self.queries.append(text)
        return super().embed_query(text)


def test_recall_embeds_its_question_by_the_query_path(
    made: Path, make_app: Callable[..., App]
) -> None:
    app = make_app()
    spy = Spy(query_copy=True, environ=_env(made))
    record = make_record(
        run_id="run-q-1",
        result_text="pinned the clock in the ledger reconciliation test",
        sessions=[session(repo="github.com/acme/api")],
    )
    episode_id = app.memory.ingest_run(record).episode_id
    assert episode_id is not None
    row = app.store.get_episode(episode_id)
    assert row is not None and row.episode is not None and row.text is not None
    provider = BuiltinProvider(app.store, spy, RankingOptions())
    provider.record(episode_id, row.scope, row.trust_class, row.episode, row.text)
    answer = provider.recall(QUESTION, ["project:github.com/acme/api"], 8, [])
    assert answer.degraded is None and [i.id for i in answer.items] == [episode_id]
    assert spy.queries == [QUESTION]


def test_the_memo_keeps_queries_apart_from_documents() -> None:
    class Both:
        model_id = "test:both"
        dim = 2

        def __init__(self) -> None:
            self.calls: list[tuple[str, str]] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.calls.extend(("document", t) for t in texts)
            return np.tile(np.asarray([1.0, 0.0], dtype=np.float32), (len(texts), 1))

        def embed_query(self, text: str) -> np.ndarray:
            self.calls.append(("query", text))
            return np.asarray([0.0, 1.0], dtype=np.float32)

    inner = Both()
    memo = RecentQueries(inner)  # type: ignore[arg-type]
    assert embed_query(memo, "q").tolist() == [0.0, 1.0]  # type: ignore[arg-type]
    assert memo.embed_query("q").tolist() == [0.0, 1.0]
    assert memo.embed(["q"]).tolist() == [[1.0, 0.0]]
    assert memo.embed(["q"]).tolist() == [[1.0, 0.0]]
    assert inner.calls == [("query", "q"), ("document", "q")]

    class DocumentsOnly:
        model_id = "test:plain"
        dim = 2

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.tile(np.asarray([0.6, 0.8], dtype=np.float32), (len(texts), 1))

    plain = RecentQueries(DocumentsOnly())  # type: ignore[arg-type]
    assert plain.embed_query("q").tolist() == pytest.approx([0.6, 0.8])


def test_the_copy_is_kept_under_the_cache_folder_or_a_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = "ab" * 32
    named = query_model.cache_file(sha, {"XDG_CACHE_HOME": str(tmp_path)})
    assert named.parent == tmp_path / "fleetmem" / "models"
    assert named.name.startswith(f"minilm-query-int8-{sha[:16]}-ort") and named.suffix == ".onnx"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert query_model.cache_file(sha, {}).parent == tmp_path / "home/.cache/fleetmem/models"

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    fallback = query_model.cache_file(sha, {})
    assert fallback.parent == Path(tempfile.gettempdir()) / "fleetmem" / "models"
