"""The OpenAI-compatible embedder against a real local HTTP server (and MockTransport for
answers no sane server sends)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from fleetmem.embed.base import Embedder
from fleetmem.embed.openai_http import MAX_BATCH, OpenAICompatibleEmbedder, endpoint_url
from fleetmem.errors import ConfigError, EmbeddingUnavailable
from tests.fakes.openai_server import FakeOpenAI

SECRET_KEY = "sk-test-0123456789abcdef-DO-NOT-LEAK"


@pytest.fixture
def embedder(fake_openai: FakeOpenAI) -> Iterator[OpenAICompatibleEmbedder]:
    with OpenAICompatibleEmbedder(
        fake_openai.base_url, "embed-small", SECRET_KEY, timeout_s=1.0
    ) as client:
        yield client


def _unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_embeds_in_input_order_with_unit_rows(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
) -> None:
    texts = ["fix the login test", "deploy to staging", "login test is flaky"]
    vectors = embedder.embed(texts)
    assert isinstance(embedder, Embedder)
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    # The fake answers rows in reverse order and scaled by 3: both must be undone.
    for row, text in zip(vectors, texts, strict=True):
        np.testing.assert_allclose(row, _unit(fake_openai.expected_embedding(text)), atol=1e-6)
    assert float(vectors[0] @ vectors[2]) > float(vectors[0] @ vectors[1])
    assert embedder.dim == 64


def test_sends_model_inputs_and_bearer_key(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
) -> None:
    embedder.embed(["alpha", ""])
    (request,) = fake_openai.requests
    assert request.method == "POST"
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {SECRET_KEY}"
    # OpenAI rejects empty inputs, so an empty text travels as one space.
    assert request.json == {"model": "embed-small", "input": ["alpha", " "]}


def test_no_key_means_no_authorization_header(fake_openai: FakeOpenAI) -> None:
    with OpenAICompatibleEmbedder(fake_openai.base_url, "m", None, timeout_s=1.0) as client:
        client.embed(["x"])
    assert "authorization" not in fake_openai.requests[0].headers


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_url_rule_against_the_server(fake_openai: FakeOpenAI, suffix: str) -> None:
    with OpenAICompatibleEmbedder(fake_openai.base_url + suffix, "m", None) as client:
        client.embed(["x"])
    assert fake_openai.requests[0].path == "/v1/embeddings"


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1/embeddings"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/embeddings"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/embeddings"),
        ("https://gw.example.com/openai/", "https://gw.example.com/openai/v1/embeddings"),
        ("https://gw.example.com/v1beta", "https://gw.example.com/v1beta/v1/embeddings"),
    ],
)
def test_endpoint_url(base_url: str, url: str) -> None:
    assert endpoint_url(base_url, "embeddings") == url


@pytest.mark.parametrize("base_url", ["localhost:8080", "ftp://host", "http://", ""])
def test_a_base_url_that_is_not_http_is_a_config_error(base_url: str) -> None:
    with pytest.raises(ConfigError, match=r"model_api\.base_url"):
        OpenAICompatibleEmbedder(base_url, "m", None)


def test_model_id_names_host_and_model() -> None:
    with OpenAICompatibleEmbedder("https://User:pw@API.Example.com/v1", "text-emb-3", None) as e:
        assert e.model_id == "openai:api.example.com/text-emb-3"
    with OpenAICompatibleEmbedder("http://127.0.0.1:8080", "nomic", None) as e:
        assert e.model_id == "openai:127.0.0.1:8080/nomic"


def test_dim_before_any_embed_probes_once(fake_openai: FakeOpenAI) -> None:
    with OpenAICompatibleEmbedder(fake_openai.base_url, "m", None) as client:
        assert client.dim == 64
        assert client.dim == 64
    assert len(fake_openai.requests) == 1


def test_dim_probe_failure_is_embedding_unavailable(fake_openai: FakeOpenAI) -> None:
    fake_openai.mode = "error_503"
    with (
        OpenAICompatibleEmbedder(fake_openai.base_url, "m", None) as client,
        pytest.raises(EmbeddingUnavailable),
    ):
        _ = client.dim


def test_large_inputs_go_in_batches_and_keep_their_order(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
) -> None:
    texts = [f"text number {i}" for i in range(MAX_BATCH * 2 + 5)]
    vectors = embedder.embed(texts)
    assert vectors.shape == (len(texts), 64)
    assert [len(r.json["input"]) for r in fake_openai.requests] == [MAX_BATCH, MAX_BATCH, 5]
    np.testing.assert_allclose(vectors[-1], _unit(fake_openai.expected_embedding(texts[-1])))


def test_empty_input_sends_nothing(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
) -> None:
    assert embedder.embed([]).shape[0] == 0
    assert fake_openai.requests == []


def test_503_is_unavailable_and_never_leaks_key_or_texts(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
) -> None:
    fake_openai.mode = "error_503"
    with pytest.raises(EmbeddingUnavailable) as caught:
        embedder.embed(["private episode text"])
    message = str(caught.value)
    assert "503" in message
    assert "http_error" in message
    # The fake's error body echoes the Authorization header, as real providers echo key
    # fragments; none of it may reach the message.
    assert SECRET_KEY not in message
    assert "0123456789" not in message
    assert "private episode text" not in message
    assert caught.value.code == "embeddings_unavailable"


@pytest.mark.parametrize("mode", ["broken_json", "wrong_shape"])
def test_malformed_answers_are_unavailable(
    fake_openai: FakeOpenAI,
    embedder: OpenAICompatibleEmbedder,
    mode: str,
) -> None:
    fake_openai.mode = mode  # type: ignore[assignment]
    with pytest.raises(EmbeddingUnavailable, match="bad_shape") as caught:
        embedder.embed(["one", "two"])
    assert "one" not in caught.value.message


@pytest.mark.parametrize("mode", ["slow", "drip"])
def test_slow_or_dripping_answers_time_out_at_the_deadline(
    fake_openai: FakeOpenAI,
    mode: str,
) -> None:
    fake_openai.mode = mode  # type: ignore[assignment]
    with OpenAICompatibleEmbedder(fake_openai.base_url, "m", None, timeout_s=0.6) as client:
        started = time.monotonic()
        with pytest.raises(EmbeddingUnavailable, match="timeout"):
            client.embed(["x"])
        assert time.monotonic() - started < 0.6 + 0.3


def test_nothing_listening_is_a_connect_error() -> None:
    with (
        OpenAICompatibleEmbedder(f"http://127.0.0.1:{_free_port()}", "m", None) as client,
        pytest.raises(EmbeddingUnavailable, match="connect_error"),
    ):
        client.embed(["x"])


def test_a_closed_embedder_refuses_to_embed(fake_openai: FakeOpenAI) -> None:
    client = OpenAICompatibleEmbedder(fake_openai.base_url, "m", None)
    client.close()
    client.close()  # idempotent
    with pytest.raises(EmbeddingUnavailable, match="closed"):
        client.embed(["x"])


def _mock(answer: object, status: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=json.dumps(answer).encode())

    return httpx.MockTransport(handler)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([{"index": 0, "embedding": [1.0, float("nan")]}], "non-finite"),
        ([{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}], "equal-length"),
        ([{"index": 0, "embedding": [0.0, 0.0]}], "all zeros"),
        ([{"index": 0, "embedding": ["1", "2"]}], "numbers"),
        ([{"index": 0, "embedding": []}], "flat list"),
        ([{"index": 0, "embedding": [[1.0], [2.0]]}], "flat list"),
        ([{"index": 0, "embedding": [[1.0], [2.0, 3.0]]}], "flat list"),
        ([{"index": 0, "embedding": {"x": 1.0}}], "flat list"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}], "indexes"),
        ([{"index": 5, "embedding": [1.0]}], "indexes"),
        ({"embedding": [1.0]}, "'data' list"),
    ],
)
def test_invalid_vectors_are_refused(data: object, problem: str) -> None:
    rows = 2 if isinstance(data, list) and len(data) == 2 else 1
    texts = ["a", "b"][:rows]
    mock = _mock({"data": data})
    with (
        OpenAICompatibleEmbedder("http://model.test", "m", None, transport=mock) as client,
        pytest.raises(EmbeddingUnavailable, match=problem),
    ):
        client.embed(texts)


def test_absurdly_deep_json_is_refused() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    mock = httpx.MockTransport(lambda request: httpx.Response(200, content=deep))
    with (
        OpenAICompatibleEmbedder("http://model.test", "m", None, transport=mock) as client,
        pytest.raises(EmbeddingUnavailable, match="not JSON"),
    ):
        client.embed(["a"])


def test_rows_without_index_keep_their_position() -> None:
    mock = _mock({"data": [{"embedding": [1.0, 0.0]}, {"embedding": [0.0, 2.0]}]})
    with OpenAICompatibleEmbedder("http://model.test", "m", None, transport=mock) as client:
        np.testing.assert_array_equal(client.embed(["a", "b"]), [[1.0, 0.0], [0.0, 1.0]])


def test_a_dimension_change_between_answers_is_refused() -> None:
    sizes = iter([2, 3])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0] * next(sizes)}]})

    transport = httpx.MockTransport(handler)
    with OpenAICompatibleEmbedder("http://model.test", "m", None, transport=transport) as client:
        client.embed(["a"])
        with pytest.raises(EmbeddingUnavailable, match="dimension changed"):
            client.embed(["b"])


def test_a_declared_dim_is_enforced_from_the_first_answer() -> None:
    mock = _mock({"data": [{"index": 0, "embedding": [1.0, 2.0]}]})
    with OpenAICompatibleEmbedder("http://model.test", "m", None, transport=mock, dim=3) as client:
        assert client.dim == 3
        with pytest.raises(EmbeddingUnavailable, match="dimension changed"):
            client.embed(["a"])
