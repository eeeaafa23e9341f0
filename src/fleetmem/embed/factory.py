"""Builds the embedder ``[model_api].embedding_model`` asks for.

``""`` turns vectors off (recall then runs on text search alone), ``"local:minilm"`` is the
built-in offline model, and any other value names a model served by ``base_url``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from fleetmem.embed.base import Embedder
from fleetmem.embed.local import LocalMiniLM
from fleetmem.errors import ConfigError

if TYPE_CHECKING:  # httpx costs ~0.15 s to import: only a remote embedder needs it
    import httpx

LOCAL_MINILM = "local:minilm"
DEFAULT_EMBEDDING_MODEL = LOCAL_MINILM


def make_embedder(
    embedding_model: str,
    base_url: str | None,
    api_key_env: str | None,
    environ: Mapping[str, str],
    *,
    timeout_s: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> Embedder | None:
    """The configured embedder, or ``None`` when ``embedding_model`` is ``""`` (vectors off).

    Nothing is loaded or contacted here: the local model loads on first use and a remote one is
    first called on first use. Raises :class:`ConfigError` for a remote model without
    ``base_url``, for an unknown ``local:`` name (a typo must not be sent to a remote server
    as a model name), and when ``api_key_env`` names a variable that is not set.
    """
    if embedding_model == "":
        return None
    if embedding_model == LOCAL_MINILM:
        return LocalMiniLM()
    if embedding_model.startswith("local:"):
        raise ConfigError(
            "model_api.embedding_model",
            embedding_model,
            f'unknown local model; the built-in one is "{LOCAL_MINILM}"',
        )
    if not base_url:
        raise ConfigError(
            "model_api.base_url",
            base_url,
            f"required: model_api.embedding_model = {embedding_model!r} names a remote model",
        )
    api_key = read_api_key(api_key_env, environ)
    from fleetmem.embed.openai_http import OpenAICompatibleEmbedder

    return OpenAICompatibleEmbedder(
        base_url, embedding_model, api_key, timeout_s=timeout_s, transport=transport
    )


def read_api_key(api_key_env: str | None, environ: Mapping[str, str]) -> str | None:
    """The key in the variable ``api_key_env`` names; ``None`` when no variable is named.

    Raises :class:`ConfigError` naming the variable (never a value) when it is unset or empty:
    every call would otherwise be refused and the user could not tell why.
    """
    if not api_key_env:
        return None
    value = environ.get(api_key_env)
    if not value:
        raise ConfigError("model_api.api_key_env", api_key_env, "environment variable is not set")
    return value
