"""A real HTTP server on 127.0.0.1 that speaks the OpenAI wire format, for tests.

It serves ``POST /v1/embeddings`` and ``POST /v1/chat/completions`` from a
``ThreadingHTTPServer`` in a background thread, so clients under test go through real sockets,
real timeouts and real HTTP parsing. Use it as a context manager::

    with FakeOpenAI() as server:
        server.mode = "error_503"
        ...  # point the code under test at server.base_url
        assert server.requests[0].json["model"] == "m"

or through the ``fake_openai`` fixture defined here. Register it once for the whole suite with
``pytest_plugins = ["tests.fakes.openai_server"]`` in the root ``tests/conftest.py`` (importing
the fixture into a test module works too, but ruff then flags every use as F811).

Behaviour is switched with :attr:`FakeOpenAI.mode` at any time (it applies to both endpoints):

``ok``                 well-formed answers (below)
``error_503``          503 with an OpenAI-style error body that echoes the Authorization header,
                       as real providers echo key fragments: tests can check it never leaks
``slow``               waits :attr:`slow_s` seconds, then answers as ``ok``
``broken_json``        200 whose body is truncated JSON
``oversized_summary``  chat answers a valid JSON summary of 900 characters; embeddings as ``ok``
``wrong_shape``        200, valid JSON, wrong structure (embeddings: one row too few and no
                       ``embedding`` key; chat: a message without ``content``)
``drip``               the ``ok`` body sent one byte every :attr:`drip_interval_s` seconds

Answers in ``ok`` mode:

* embeddings: :func:`bag_of_words_vector` of each input, a deterministic hashed bag of words of
  :attr:`embedding_dim` (64) dimensions, scaled by 3 so clients must normalise; texts sharing
  words are similar. Rows are returned in reverse order with their ``index`` so clients must
  sort by index.
* chat: ``choices[0].message.content`` is :attr:`chat_content` (default: a JSON summary).

If :attr:`required_api_key` is set, a request without ``Authorization: Bearer <that key>`` gets
401. Every request is recorded in :attr:`requests` (method, path, headers, body, parsed JSON)
and :meth:`received_bytes` gives everything that arrived, so a test can assert that a secret
never reached the server.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

Mode = Literal["ok", "error_503", "slow", "broken_json", "oversized_summary", "wrong_shape", "drip"]
MODES: tuple[Mode, ...] = (
    "ok",
    "error_503",
    "slow",
    "broken_json",
    "oversized_summary",
    "wrong_shape",
    "drip",
)
DEFAULT_SUMMARY = "The agent fixed the flaky login test and all checks passed."
OVERSIZED_SUMMARY_CHARS = 900


def bag_of_words_vector(text: str, dim: int = 64) -> list[float]:
    """The fake's embedding of ``text`` (before its x3 scaling): word counts hashed into ``dim``."""
    vector = [0.0] * dim
    words = re.findall(r"\w+", text.lower()) or [text]
    for word in words:
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        vector[int.from_bytes(digest[:4], "big") % dim] += 1.0
    return vector


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None


@dataclass
class FakeOpenAI:
    """The fake server; start it with ``with FakeOpenAI() as server`` or :meth:`start`."""

    mode: Mode = "ok"
    embedding_dim: int = 64
    slow_s: float = 3.0
    drip_interval_s: float = 0.5
    chat_content: str = field(default_factory=lambda: json.dumps({"summary": DEFAULT_SUMMARY}))
    required_api_key: str | None = None

    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _requests: list[RecordedRequest] = field(default_factory=list, init=False, repr=False)
    _raw: list[bytes] = field(default_factory=list, init=False, repr=False)
    _handlers: list[threading.Thread] = field(default_factory=list, init=False, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        # A mistyped mode would otherwise answer "ok" and let a failure test pass vacuously.
        if name == "mode" and value not in MODES:
            raise ValueError(f"unknown mode {value!r}; one of {', '.join(MODES)}")
        super().__setattr__(name, value)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("already started")
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake sleeping handlers and close every socket (waits up to 5 s)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            handlers = list(self._handlers)
        for handler in handlers:
            handler.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # -- what tests read ---------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no ``/v1``: clients append it)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def received_bytes(self) -> bytes:
        """Everything received: request lines, headers and bodies, concatenated."""
        with self._lock:
            return b"".join(self._raw)

    def clear(self) -> None:
        """Forget the requests recorded so far."""
        with self._lock:
            self._requests.clear()
            self._raw.clear()

    def expected_embedding(self, text: str) -> list[float]:
        """The unnormalised vector the server answers for ``text`` (for exact assertions)."""
        return [3.0 * x for x in bag_of_words_vector(text, self.embedding_dim)]

    # -- used by the handler -----------------------------------------------------------------

    def _record(self, request: RecordedRequest, raw: bytes) -> None:
        with self._lock:
            self._requests.append(request)
            self._raw.append(raw)
            self._handlers[:] = [t for t in self._handlers if t.is_alive()]
            self._handlers.append(threading.current_thread())

    def _answer(self, path: str, payload: Any) -> tuple[int, bytes]:
        """Status and body for one request; the transport quirks (slow, drip) are the handler's."""
        mode = self.mode
        if path == "/v1/embeddings":
            return self._embeddings(payload, mode)
        return self._chat(payload, mode)

    def _embeddings(self, payload: Any, mode: Mode) -> tuple[int, bytes]:
        inputs = payload.get("input") if isinstance(payload, dict) else None
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(i, str) and i for i in inputs):
            return 400, _error("'input' must be a non-empty string or list of them")
        if mode == "broken_json":
            return 200, b'{"object": "list", "data": [{"embedding": [0.1, 0.'
        if mode == "wrong_shape":
            rows = [{"object": "embedding", "index": i} for i in range(len(inputs) - 1)]
            return 200, json.dumps({"object": "list", "data": rows}).encode()
        rows = [
            {"object": "embedding", "index": i, "embedding": self.expected_embedding(text)}
            for i, text in enumerate(inputs)
        ]
        rows.reverse()  # legal in the wire format; clients must order rows by index
        body = {
            "object": "list",
            "data": rows,
            "model": payload.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
        return 200, json.dumps(body).encode()

    def _chat(self, payload: Any, mode: Mode) -> tuple[int, bytes]:
        messages = payload.get("messages") if isinstance(payload, dict) else None
        if not isinstance(messages, list) or not messages:
            return 400, _error("'messages' must be a non-empty list")
        if mode == "broken_json":
            return 200, b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "{\\"sum'
        message: dict[str, Any] = {"role": "assistant", "content": self.chat_content}
        if mode == "oversized_summary":
            message["content"] = json.dumps({"summary": "x" * OVERSIZED_SUMMARY_CHARS})
        if mode == "wrong_shape":
            message = {"role": "assistant"}
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": payload.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        return 200, json.dumps(body).encode()


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients under test hang up on slow answers on purpose; that is not a server error.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: nothing idles after a test

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    def do_GET(self) -> None:
        self._record(b"")
        self._send(404, _error("only POST /v1/embeddings and /v1/chat/completions"))

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        payload = self._record(body)
        if self.path not in ("/v1/embeddings", "/v1/chat/completions"):
            self._send(404, _error(f"no route {self.path}"))
            return
        key = fake.required_api_key
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            self._send(401, _error("Incorrect API key provided"))
            return
        if fake.mode == "error_503":
            echoed = self.headers.get("Authorization", "")
            self._send(503, _error(f"The server is overloaded (request had {echoed!r})"))
            return
        if payload is None:
            self._send(400, _error("body is not JSON"))
            return
        if fake.mode == "slow" and fake._stopping.wait(fake.slow_s):
            return  # the server is stopping: hang up instead of answering
        status, answer = fake._answer(self.path, payload)
        if fake.mode == "drip":
            self._drip(status, answer, fake)
        else:
            self._send(status, answer)

    def _record(self, body: bytes) -> Any:
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        head = f"{self.requestline}\r\n{self.headers}".encode("latin-1", "replace")
        self.server.fake._record(
            RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                json=payload,
            ),
            head + body,
        )
        return payload

    def _send(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up; nothing to do

    def _drip(self, status: int, body: bytes, fake: FakeOpenAI) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                if fake._stopping.wait(fake.drip_interval_s):
                    return
        except OSError:
            pass  # the client hung up mid-drip, as a client with a deadline should


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started :class:`FakeOpenAI` in ``ok`` mode, stopped after the test."""
    with FakeOpenAI() as server:
        yield server
