"""RecentQueries: a recall's query is embedded once, for a few seconds, and nothing more."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fleetmem.embed.base import Embedder, Vectors
from fleetmem.embed.memo import RecentQueries


class Counting:
    """A deterministic embedder that counts the texts it was asked to embed."""

    model_id = "test:counting"
    dim = 3

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.closed = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen.extend(texts)
        rows = [[float(len(t)), 1.0, 0.0] for t in texts]
        out = np.asarray(rows, dtype=np.float32).reshape(-1, 3)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def close(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_query_is_embedded_once_within_the_ttl() -> None:
    inner, clock = Counting(), Clock()
    memo = RecentQueries(inner, ttl_s=5.0, clock=clock)
    assert isinstance(memo, Embedder) and memo.model_id == "test:counting" and memo.dim == 3
    first = memo.embed(["flaky ledger"])
    again = memo.embed(["flaky ledger"])
    assert inner.seen == ["flaky ledger"]
    assert np.array_equal(first, again) and first is not again
    again[0, 0] = 42.0  # a caller's changes never reach the next caller
    assert memo.embed(["flaky ledger"])[0, 0] != 42.0
    clock.now += 5.1
    memo.embed(["flaky ledger"])
    assert inner.seen == ["flaky ledger", "flaky ledger"]


def test_batches_pass_through_and_the_memory_is_bounded() -> None:
    inner = Counting()
    memo = RecentQueries(inner, size=2, clock=Clock())
    memo.embed(["a", "b"])
    memo.embed(["a", "b"])
    assert inner.seen == ["a", "b", "a", "b"]
    assert memo.embed([]).shape == (0, 3)
    for text in ("one", "two", "three", "one"):
        memo.embed([text])
    assert inner.seen[4:] == ["one", "two", "three", "one"]  # "one" was pushed out
    memo.forget()
    memo.embed(["three"])
    assert inner.seen[-1] == "three" and len(inner.seen) == 9


def test_everything_else_is_the_wrapped_embedders() -> None:
    inner = Counting()
    memo = RecentQueries(inner)
    memo.close()  # type: ignore[attr-defined]
    assert inner.closed and memo.inner is inner
