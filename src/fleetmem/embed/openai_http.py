"""Embeddings from any OpenAI-compatible HTTP endpoint, plus the HTTP plumbing summaries share.

URL rule (used for every ``[model_api]`` call): the resource path is appended to
``base_url`` after ``/v1``. A ``base_url`` that already ends with ``/v1`` gets only the resource:

* ``http://localhost:11434``        -> ``http://localhost:11434/v1/embeddings``
* ``https://api.openai.com/v1``     -> ``https://api.openai.com/v1/embeddings``
* ``https://gw.example.com/openai/`` -> ``https://gw.example.com/openai/v1/embeddings``

Every call has one total deadline covering connect, upload, waiting and the whole body, so a
server that drips its answer byte by byte cannot hold a caller past it. Error messages carry a
status code or a failure class, never the texts sent, the answer body or the key: providers
echo parts of keys in their error bodies.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn
from urllib.parse import urlsplit

from fleetmem.embed.base import Vectors, normalise_rows
from fleetmem.errors import ConfigError, EmbeddingUnavailable

if TYPE_CHECKING:
    # httpx is imported where a request is made: it costs ~0.15 s, and every CLI command and
    # hook imports this module (summaries share its helpers) while few ever call out.
    import httpx
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

#: Inputs per request: far below OpenAI's 2,048 so one slow batch cannot eat the whole deadline.
MAX_BATCH = 128
#: An answer larger than this is not an embeddings answer we asked for (128 x 3,072 floats as
#: JSON text is ~8 MB).
MAX_EMBEDDINGS_BODY_BYTES = 64 * 1024 * 1024

FailureReason = Literal["timeout", "connect_error", "http_error", "too_large"]


def endpoint_url(base_url: str, resource: str) -> str:
    """``base_url`` + ``/v1/`` + ``resource``, without doubling a trailing ``/v1`` (module doc).

    Raises :class:`ConfigError` for ``model_api.base_url`` when it is not an http(s) URL.
    """
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError("model_api.base_url", base_url, "must be an http:// or https:// URL")
    root = base_url.rstrip("/")
    if not root.endswith("/v1"):
        root += "/v1"
    return f"{root}/{resource}"


def endpoint_host(base_url: str) -> str:
    """``host`` or ``host:port`` of ``base_url``, lower-cased, without any user info."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port is not None else host


@dataclass(frozen=True)
class PostAnswer:
    """A 2xx answer read completely within the deadline."""

    status: int
    body: bytes


@dataclass(frozen=True)
class PostFailure:
    """Why a call produced no usable answer; ``detail`` is safe to log (no body, no key)."""

    reason: FailureReason
    detail: str


def post_json(
    client: httpx.Client,
    url: str,
    payload: Mapping[str, Any],
    *,
    api_key: str | None,
    deadline_s: float,
    max_body_bytes: int,
) -> PostAnswer | PostFailure:
    """POST ``payload`` as JSON and return the complete answer, or why there is none.

    Never raises for network or HTTP trouble and never blocks longer than ``deadline_s``.
    httpx's timeouts bound each socket operation, not the whole exchange, so the request runs
    in a daemon thread that the caller stops waiting for at the deadline; that thread also
    checks the clock between body chunks, so an abandoned call ends soon after.
    """
    deadline = time.monotonic() + deadline_s
    outcome: list[PostAnswer | PostFailure] = []
    finished = threading.Event()

    def work() -> None:
        try:
            result = _post_streaming(client, url, payload, api_key, deadline, max_body_bytes)
        except Exception as exc:  # the caller must get an outcome whatever went wrong
            result = PostFailure("connect_error", type(exc).__name__)
        outcome.append(result)
        finished.set()

    threading.Thread(target=work, name="fleetmem-model-api-call", daemon=True).start()
    if not finished.wait(timeout=max(0.0, deadline - time.monotonic())):
        return PostFailure("timeout", f"no complete answer within {deadline_s:g}s")
    return outcome[0]


def _post_streaming(
    client: httpx.Client,
    url: str,
    payload: Mapping[str, Any],
    api_key: str | None,
    deadline: float,
    max_body_bytes: int,
) -> PostAnswer | PostFailure:
    import httpx

    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    remaining = max(0.001, deadline - time.monotonic())
    try:
        with client.stream(
            "POST", url, json=dict(payload), headers=headers, timeout=httpx.Timeout(remaining)
        ) as response:
            if not 200 <= response.status_code < 300:
                phrase = response.reason_phrase[:60]
                return PostFailure("http_error", f"HTTP {response.status_code} {phrase}".strip())
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                if time.monotonic() > deadline:
                    return PostFailure("timeout", "answer body still arriving at the deadline")
                size += len(chunk)
                if size > max_body_bytes:
                    return PostFailure("too_large", f"answer body over {max_body_bytes} bytes")
                chunks.append(chunk)
            return PostAnswer(response.status_code, b"".join(chunks))
    except httpx.TimeoutException as exc:
        return PostFailure("timeout", type(exc).__name__)
    except httpx.ConnectError as exc:
        return PostFailure("connect_error", type(exc).__name__)
    except httpx.HTTPError as exc:
        # Protocol errors (a server closing mid-answer, a bad status line) are the server's
        # fault, not the network's.
        return PostFailure("http_error", type(exc).__name__)


class OpenAICompatibleEmbedder:
    """Embedder backed by ``POST {base_url}/v1/embeddings`` (URL rule in the module doc).

    ``timeout_s`` is the total deadline of one request (inputs are sent in batches of
    :data:`MAX_BATCH`). ``dim`` is learned from the first answer, or declared up front; every
    later answer must match it. Reading :attr:`dim` before any embed sends one short probe
    request and may therefore raise :class:`EmbeddingUnavailable`.

    The embedder keeps one HTTP connection pool; call :meth:`close` (or use it as a context
    manager) when done. An unclosed embedder closes its pool when garbage collected.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        *,
        dim: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("model_api.embedding_model", model, "must name a model")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self._url = endpoint_url(base_url, "embeddings")
        self._model = model
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._model_id = f"openai:{endpoint_host(base_url)}/{model}"
        self._dim = dim
        self._dim_lock = threading.Lock()
        import httpx

        self._client = httpx.Client(transport=transport, follow_redirects=False)
        # The pool holds sockets; closing it at collection avoids unclosed-socket warnings from
        # owners that forget close(). The finalizer must not reference self.
        self._finalizer = weakref.finalize(self, self._client.close)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector length; probes the endpoint once if no answer has been seen yet."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None  # embed() either learned it or raised
        return self._dim

    def close(self) -> None:
        """Close the connection pool; later embeds raise :class:`EmbeddingUnavailable`."""
        self._finalizer()

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order: float32 ``(n, dim)``, rows L2-normalised.

        Empty texts are sent as one space because OpenAI rejects empty inputs.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if len(texts) == 0:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        if not self._finalizer.alive:
            raise EmbeddingUnavailable("the embedder was closed", model=self._model_id)
        parts = [
            self._embed_batch([text or " " for text in texts[start : start + MAX_BATCH]])
            for start in range(0, len(texts), MAX_BATCH)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        answer = post_json(
            self._client,
            self._url,
            {"model": self._model, "input": texts},
            api_key=self._api_key,
            deadline_s=self._timeout_s,
            max_body_bytes=MAX_EMBEDDINGS_BODY_BYTES,
        )
        if isinstance(answer, PostFailure):
            raise EmbeddingUnavailable(
                "the embeddings endpoint did not answer usefully",
                model=self._model_id,
                reason=answer.reason,
                detail=answer.detail,
            )
        matrix = self._parse(answer.body, expected_rows=len(texts))
        with self._dim_lock:
            if self._dim is None:
                self._dim = matrix.shape[1]
            elif self._dim != matrix.shape[1]:
                self._bad(f"dimension changed from {self._dim} to {matrix.shape[1]}")
        return normalise_rows(matrix)

    def _parse(self, body: bytes, *, expected_rows: int) -> np.ndarray[Any, np.dtype[np.float64]]:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            self._bad("answer is not JSON")
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list) or len(data) != expected_rows:
            self._bad(f"expected a 'data' list of {expected_rows} items")
        if not all(isinstance(item, dict) and "embedding" in item for item in data):
            self._bad("an item has no 'embedding'")
        indexes = [item.get("index") for item in data]
        if any(index is not None for index in indexes):
            # Servers may answer out of order; 'index' is what ties a row to its input.
            if sorted(i for i in indexes if isinstance(i, int)) != list(range(expected_rows)):
                self._bad("item indexes are not 0..n-1")
            data = sorted(data, key=lambda item: int(item["index"]))
        try:
            rows = [np.asarray(item["embedding"]) for item in data]
        except (ValueError, TypeError):  # ragged nested lists
            self._bad("an embedding is not a flat list of numbers")
        first = rows[0]
        if first.ndim != 1 or first.size == 0:
            self._bad("an embedding is not a flat list of numbers")
        for row in rows:
            if row.ndim != 1 or row.dtype.kind not in "if" or row.shape != first.shape:
                self._bad("embeddings are not equal-length lists of numbers")
        matrix = np.stack(rows).astype(np.float64)
        if not np.isfinite(matrix).all():
            self._bad("an embedding holds a non-finite number")
        if (np.linalg.norm(matrix, axis=1) == 0.0).any():
            self._bad("an embedding is all zeros")
        return matrix

    def _bad(self, what: str) -> NoReturn:
        """Raise for a malformed answer, naming what was wrong but not the answer itself."""
        raise EmbeddingUnavailable(
            "the embeddings endpoint answered in an unexpected shape",
            model=self._model_id,
            reason="bad_shape",
            detail=what,
        )
