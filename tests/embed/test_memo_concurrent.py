"""RecentQueries under concurrency: a query asked for by two threads at once is embedded once.

A recall ranks facts and episodes on two threads, and both need the query's vector. The
second asker must wait for the embedding already running (never start its own), and must get
the same vector, or the same error, as the first.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from fleetmem.embed.base import Vectors
from fleetmem.embed.memo import RecentQueries
from fleetmem.errors import EmbeddingUnavailable

#: How long the test lets the second thread run before checking that it is still waiting.
#: Only a broken memo lets it finish; a slow machine can only make the check pass.
SETTLE_S = 0.3


class Gated:
    """An embedder whose first call blocks until the test opens the gate."""

    model_id = "test:gated"
    dim = 2

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.fail = fail

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.extend(texts)
        if len(self.calls) == 1:
            self.entered.set()
            self.gate.wait(30)
            if self.fail:
                raise EmbeddingUnavailable("the model is down")
        return np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def _in_thread(memo: RecentQueries, text: str, out: dict[str, object]) -> threading.Thread:
    def run() -> None:
        try:
            out["vector"] = memo.embed([text])
        except Exception as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_second_asker_waits_for_the_running_embedding_and_shares_it() -> None:
    inner = Gated()
    memo = RecentQueries(inner)
    first: dict[str, object] = {}
    second: dict[str, object] = {}
    a = _in_thread(memo, "flaky ledger", first)
    assert inner.entered.wait(30)
    b = _in_thread(memo, "flaky ledger", second)
    b.join(SETTLE_S)
    assert b.is_alive(), "the second asker embedded again instead of waiting"
    inner.gate.set()
    a.join(30)
    b.join(30)
    assert inner.calls == ["flaky ledger"]
    va, vb = first["vector"], second["vector"]
    assert isinstance(va, np.ndarray) and isinstance(vb, np.ndarray)
    assert np.array_equal(va, vb) and va is not vb
    # Another text is never held up by, nor served from, the one being embedded.
    assert memo.embed(["other"]).tolist() == [[5.0, 1.0]]


def test_the_waiting_asker_gets_the_same_error_and_the_next_one_tries_again() -> None:
    inner = Gated(fail=True)
    memo = RecentQueries(inner)
    first: dict[str, object] = {}
    second: dict[str, object] = {}
    a = _in_thread(memo, "flaky ledger", first)
    assert inner.entered.wait(30)
    b = _in_thread(memo, "flaky ledger", second)
    b.join(SETTLE_S)
    inner.gate.set()
    a.join(30)
    b.join(30)
    assert isinstance(first.get("error"), EmbeddingUnavailable)
    assert isinstance(second.get("error"), EmbeddingUnavailable)
    assert inner.calls == ["flaky ledger"]
    # A failure is not remembered: the next recall asks the model again.
    assert memo.embed(["flaky ledger"]).tolist() == [[12.0, 1.0]]
    assert inner.calls == ["flaky ledger", "flaky ledger"]
