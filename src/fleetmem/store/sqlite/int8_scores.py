"""Cosine scores over an int8 matrix: the SQLite store's in-memory vectors.

The built-in index searches vectors by brute force in memory (module docstring of
``builtin_index``). Held as float32 they were the daemon's largest part at 100,000 episodes
(146.5 MiB of about 405). Each row is held here as int8 with a float32 scale of its own
(``row ≈ scale * int8 row``; 388 bytes a row at 384 dimensions instead of 1,536), and the
query is quantized the same way. The product of the two integer sequences is exact (int32
accumulation), so the only error is the two roundings: a few thousandths of cosine at most
(tests/store/test_int8_scores.py bounds it, and bench/bench_int8_scores.py compares the
rankings with float32's on real embeddings).

numpy has no fast int8 matrix product (without BLAS its int8 matrix-vector product took
34 ms at 100k x 384 here, wrapping around on overflow besides), so the product runs in
onnxruntime's ``MatMulInteger`` kernel, which fleetmem already depends on for the local
embedder: about 7 ms at 100k x 384 on one thread, against 11 ms for the float32 product it
replaces. The one-node model is written here, in ONNX's protobuf wire format, rather than
shipped as a file or built with the ``onnx`` package (not a dependency): :func:`scores_model`
is the whole of it, and its 151 bytes are the ones ``onnx.helper`` serializes for the same
graph (compared once, by hand, with onnx 1.x).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np


#: Largest magnitude of a quantized component: symmetric int8, so -127..127.
LEVELS: Final = 127

# ONNX's TensorProto.DataType values.
_INT8: Final = 3
_INT32: Final = 6

_session_lock = threading.Lock()
_session: Any = None


# ---- quantization ----------------------------------------------------------------------
def quantize_rows(
    rows: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """``rows`` (n x d, float) as int8 rows and one scale per row: ``row ≈ scale * q``.

    The scale maps each row's largest magnitude to :data:`LEVELS`; a zero row gets scale 0
    (it scores 0 against everything, as it did in float)."""
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError(f"rows must be a matrix, got shape {rows.shape}")
    peak = np.abs(rows).max(axis=1) if rows.shape[1] else np.zeros(rows.shape[0], np.float32)
    scales = (peak / LEVELS).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float32)
    quantized = np.rint(rows / safe[:, None])
    return np.clip(quantized, -LEVELS, LEVELS).astype(np.int8), scales


def quantize_query(query: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], float]:
    """A query vector as an int8 column (d x 1) and its scale."""
    q, scales = quantize_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))
    return np.ascontiguousarray(q.reshape(-1, 1)), float(scales[0])


def scores(
    rows: npt.NDArray[np.int8],
    scales: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """The dot product of each quantized row with ``query`` (cosine, for unit rows)."""
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    q, q_scale = quantize_query(query)
    if rows.shape[1] != q.shape[0]:
        raise ValueError(f"the query has {q.shape[0]} components, the rows {rows.shape[1]}")
    products = _run(np.ascontiguousarray(rows), q).reshape(-1).astype(np.float32)
    return products * scales * np.float32(q_scale)


def _run(rows: npt.NDArray[np.int8], q: npt.NDArray[np.int8]) -> npt.NDArray[np.int32]:
    out: npt.NDArray[np.int32] = _scores_session().run(None, {"rows": rows, "query": q})[0]
    return out


def _scores_session() -> Any:
    global _session
    if _session is None:
        with _session_lock:
            if _session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                # On the calling thread: a recall embeds its query on onnxruntime's other
                # threads first, and a pool here would wait for a slice of a busy core.
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3
                _session = onnxruntime.InferenceSession(
                    scores_model(), sess_options=options, providers=["CPUExecutionProvider"]
                )
    return _session


# ---- the model, in protobuf's wire format ------------------------------------------------
def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _number(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _nested(field: int, body: bytes | str) -> bytes:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, elem_type: int, dims: tuple[str, str]) -> bytes:
    """A ValueInfoProto: ``name``, a tensor of ``elem_type`` with named (free) dimensions."""
    shape = b"".join(_nested(1, _nested(2, d)) for d in dims)  # Dimension.dim_param
    tensor = _number(1, elem_type) + _nested(2, shape)  # TypeProto.Tensor
    return _nested(1, name) + _nested(2, _nested(1, tensor))  # ValueInfoProto


def scores_model() -> bytes:
    """An ONNX model of one ``MatMulInteger`` node: rows (n x d, int8) times query (d x 1,
    int8) gives n x 1 int32. IR version 8, opset 13 (both long supported by onnxruntime)."""
    node = _nested(1, "rows") + _nested(1, "query") + _nested(2, "products")
    node += _nested(4, "MatMulInteger")
    graph = (
        _nested(1, node)
        + _nested(2, "int8_scores")
        + _nested(11, _tensor("rows", _INT8, ("n", "d")))
        + _nested(11, _tensor("query", _INT8, ("d", "one")))
        + _nested(12, _tensor("products", _INT32, ("n", "one")))
    )
    opset = _nested(1, "") + _number(2, 13)
    return _number(1, 8) + _nested(7, graph) + _nested(8, opset)
