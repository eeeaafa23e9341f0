"""make_embedder: which embedder each ``[model_api].embedding_model`` value gives."""

from __future__ import annotations

import pytest

from fleetmem.embed.base import Embedder
from fleetmem.embed.factory import DEFAULT_EMBEDDING_MODEL, make_embedder, read_api_key
from fleetmem.embed.local import LocalMiniLM
from fleetmem.embed.openai_http import OpenAICompatibleEmbedder
from fleetmem.errors import ConfigError
from tests.fakes.openai_server import FakeOpenAI


def test_empty_model_turns_vectors_off() -> None:
    assert make_embedder("", "http://model.test", "KEY", {"KEY": "k"}) is None


def test_default_is_the_local_model_and_loads_nothing_yet() -> None:
    assert DEFAULT_EMBEDDING_MODEL == "local:minilm"
    embedder = make_embedder("local:minilm", None, None, {})
    assert isinstance(embedder, LocalMiniLM)
    assert isinstance(embedder, Embedder)
    assert embedder._files is None and not embedder.document_model_loaded


def test_local_model_ignores_remote_settings() -> None:
    # A base_url and an unset key variable belong to other features; they must not break this.
    embedder = make_embedder("local:minilm", "http://model.test", "UNSET_VARIABLE", {})
    assert isinstance(embedder, LocalMiniLM)


def test_an_unknown_local_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"model_api\.embedding_model.*local:minilm"):
        make_embedder("local:mini-lm", "http://model.test", None, {})


def test_a_remote_model_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match=r"model_api\.base_url"):
        make_embedder("text-embedding-3-small", None, None, {})


def test_a_remote_model_uses_the_key_from_the_named_variable(
    fake_openai: FakeOpenAI,
) -> None:
    environ = {"FLEETMEM_TEST_KEY": "sk-from-env"}
    embedder = make_embedder(
        "text-embedding-3-small", fake_openai.base_url, "FLEETMEM_TEST_KEY", environ
    )
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    try:
        assert embedder.model_id == f"openai:127.0.0.1:{fake_openai.port}/text-embedding-3-small"
        assert embedder.embed(["hello"]).shape == (1, 64)
    finally:
        embedder.close()
    (request,) = fake_openai.requests
    assert request.headers["authorization"] == "Bearer sk-from-env"
    assert request.json is not None and request.json["model"] == "text-embedding-3-small"


def test_no_key_variable_means_no_key(fake_openai: FakeOpenAI) -> None:
    embedder = make_embedder("m", fake_openai.base_url, None, {"OPENAI_API_KEY": "sk-ambient"})
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    with embedder:
        embedder.embed(["hello"])
    # An ambient key the config did not name must not be sent anywhere.
    assert b"sk-ambient" not in fake_openai.received_bytes()


@pytest.mark.parametrize("environ", [{}, {"MY_KEY": ""}])
def test_a_named_but_unset_variable_is_a_config_error(environ: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"model_api\.api_key_env = 'MY_KEY'"):
        make_embedder("m", "http://model.test", "MY_KEY", environ)


def test_read_api_key() -> None:
    assert read_api_key(None, {"X": "1"}) is None
    assert read_api_key("", {"X": "1"}) is None
    assert read_api_key("X", {"X": "1"}) == "1"
