"""The SQLite store's in-memory vectors as int8 rows (issue 20: the daemon's resident set).

The scores come from onnxruntime's integer kernel over a model written by hand in ONNX's
wire format; these tests hold its products to numpy's exact ones and the quantized cosine to
within a few thousandths of float32's.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import numpy as np
import pytest

from fleetmem.service.bootstrap import App
from fleetmem.store.sqlite import int8_scores
from fleetmem.store.sqlite.builtin_index import _Block
from tests.store.test_builtin_index import API, _episode
from tests.store.test_compact_storage import _unit_rows

pytestmark = pytest.mark.sqlite_only(reason="the SQLite store's in-memory vectors")

# How far a row's score against itself may stray from 1 when both the row and the query are
# quantized: the error is about twice a single side's. Over 200,000 random unit rows the
# largest seen was 0.0084 at 64 dimensions (0.07 % of rows beyond 0.005, which once failed
# CI with 0.00546) and 0.0047 at 384.
SELF_BOUND = {64: 0.012, 384: 0.0075}


def test_the_kernels_products_are_numpys_exact_integer_products() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    for n, dim in ((1, 1), (7, 3), (1000, 384), (257, 1024)):
        rows = rng.integers(-127, 128, size=(n, dim), dtype=np.int8)
        rows[0, :] = 127  # the extremes, where an 8-bit overflow would show
        query = rng.integers(-127, 128, size=(dim, 1), dtype=np.int8)
        query[:, 0] = -127
        got = int8_scores._run(rows, query)
        exact = rows.astype(np.int64) @ query.astype(np.int64)
        assert got.dtype == np.int32 and got.shape == (n, 1)
        assert np.array_equal(got.astype(np.int64), exact)


@pytest.mark.parametrize(("dim", "bound"), [(8, 0.02), (64, 0.01), (384, 0.005), (1024, 0.005)])
def test_quantized_cosines_stay_within_a_few_thousandths(dim: int, bound: float) -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    rows = _unit_rows(rng, 5000, dim)
    quantized, scales = int8_scores.quantize_rows(rows)
    assert quantized.dtype == np.int8 and scales.dtype == np.float32
    assert int(np.abs(quantized.astype(np.int16)).max()) == int8_scores.LEVELS
    for query in _unit_rows(rng, 5, dim):
        got = int8_scores.scores(quantized, scales, query)
        assert got.dtype == np.float32
        assert float(np.abs(got - rows @ query).max()) < bound


def test_the_nearest_row_is_still_found_first() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    rows = _unit_rows(rng, 20_000, 384)
    quantized, scales = int8_scores.quantize_rows(rows)
    targets = rng.choice(len(rows), 50, replace=False)
    # Queries near a row, as a paraphrase is near what it paraphrases (cosine ~0.9).
    noise = _unit_rows(rng, 50, 384)
    queries = rows[targets] * 0.9 + noise * np.sqrt(1 - 0.81)
    for target, query in zip(targets, queries, strict=True):
        got = int8_scores.scores(quantized, scales, query)
        assert int(np.argmax(got)) == int(target)
        # Below the first, random rows lie within thousandths of each other, so the order
        # may change among near ties; what may not happen is a row taking a place it is
        # more than the quantization error away from.
        exact = rows @ query
        tenth = float(np.sort(exact)[-10])
        assert float(exact[np.argsort(-got)[:10]].min()) > tenth - 0.01


def test_zero_rows_empty_blocks_and_a_wrong_query_length() -> None:
    quantized, scales = int8_scores.quantize_rows(np.zeros((3, 4), dtype=np.float32))
    assert not quantized.any() and not scales.any()
    query = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
    assert int8_scores.scores(quantized, scales, query).tolist() == [0.0, 0.0, 0.0]
    empty = np.zeros((0, 4), dtype=np.int8)
    assert int8_scores.scores(empty, np.zeros(0, np.float32), query).shape == (0,)
    with pytest.raises(ValueError, match="the query has 3 components, the rows 4"):
        int8_scores.scores(quantized, scales, query[:3])
    with pytest.raises(ValueError, match="must be a matrix"):
        int8_scores.quantize_rows(np.zeros(4, dtype=np.float32))


def test_a_block_holds_a_quarter_of_float32s_bytes() -> None:
    rng = np.random.default_rng(secrets.randbits(32))
    block = _Block()
    rows = _unit_rows(rng, 1000, 384)
    block.append(list(range(1, 1001)), rows)
    held = block.vectors.nbytes + block.scales.nbytes
    assert block.vectors.dtype == np.int8
    assert held <= 1.25 * 1000 * (384 + 4)  # room to grow by a quarter at most
    assert held < 0.3 * rows.nbytes
    top = block.top(rows[17], 3)
    assert top[0][0] == 18 and abs(top[0][1] - 1.0) < SELF_BOUND[384]


def test_a_stores_vector_search_ranks_from_the_int8_rows(make_app: Callable[..., App]) -> None:
    # Through the store: written as int8 blobs, searched as the same int8 rows in memory.
    rng = np.random.default_rng(secrets.randbits(32))
    app = make_app()
    rows = _unit_rows(rng, 60, 64)
    ids = [_episode(app, n, API, f"episode {n}") for n in range(len(rows))]
    for episode_id, row in zip(ids, rows, strict=True):
        app.store.builtin_put(episode_id, "t", None, row, episode_id, "m")
    for i in rng.choice(len(rows), 10, replace=False):
        hits = app.store.search_vector(rows[i], "m", [f"project:{API}"], 5)
        assert hits[0][0] == ids[i] and abs(hits[0][1] - 1.0) < SELF_BOUND[64]
        fifth = float(np.sort(rows @ rows[i])[-5])
        by_id = dict(zip(ids, rows @ rows[i], strict=True))
        assert min(float(by_id[h]) for h, _ in hits) > fifth - 0.02
