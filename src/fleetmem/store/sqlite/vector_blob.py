"""How the SQLite store keeps a vector in ``embeddings.vector`` (issue 20, footprint).

A vector is written as int8 with a float32 scale of its own, behind a format byte: 1 + 4 +
dim bytes (389 for the local model's 384 dimensions) instead of float32's 4 x dim (1,536).
The quantization is the one the in-memory search uses (``int8_scores.quantize_rows``: the
row's largest magnitude maps to 127), so loading a stored row into the search matrix gives
back the very integers it was written with, and a cosine computed from a stored row differs
from the float32 one by a few thousandths at most (``tests/store/test_compact_storage.py``
bounds it). Vectors are widened back to float32 as they are read.

Formats read, each told apart by its length and first byte:

- int8 (written now): format byte 3 for an even number of components, 4 for an odd one,
  which carries one pad byte at the end so that every formatted blob has an odd length;
- half precision (written from migration 21 until int8): format byte 2, then float16s;
- float32 (written before migration 21): no format byte, an even length of 4 x dim.

No migration rewrites stored vectors; a blob is read in the format it was written in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fleetmem.store.base import Vector
from fleetmem.store.sqlite import int8_scores

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np

_HALF = 2  # little-endian float16 components follow
_INT8_EVEN = 3  # a little-endian float32 scale, then one int8 a component
_INT8_ODD = 4  # the same, then one pad byte (the blob's length stays odd)
_SCALE_BYTES = 4


def encode(vector: Vector) -> bytes:
    """``vector`` as stored."""
    values = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(values)):
        raise ValueError("a stored vector must hold finite numbers")
    quantized, scales = int8_scores.quantize_rows(values.reshape(1, -1))
    odd = values.size % 2 == 1
    return b"".join(
        (
            bytes((_INT8_ODD if odd else _INT8_EVEN,)),
            scales.astype("<f4").tobytes(),
            quantized.tobytes(),
            b"\x00" if odd else b"",
        )
    )


def _int8_dim(data: bytes) -> int:
    return len(data) - 1 - _SCALE_BYTES - (1 if data[0] == _INT8_ODD else 0)


def decode(blob: bytes) -> Vector:
    """A stored vector as float32, whichever format it was written in."""
    data = bytes(blob)
    if len(data) % 2 == 0:
        return np.frombuffer(data, dtype="<f4").astype(np.float32)
    kind = data[0]
    if kind == _HALF:
        return np.frombuffer(data, dtype="<f2", offset=1).astype(np.float32)
    if kind in (_INT8_EVEN, _INT8_ODD) and len(data) >= 1 + _SCALE_BYTES:
        dim = _int8_dim(data)
        scale = np.frombuffer(data, dtype="<f4", count=1, offset=1)[0]
        values = np.frombuffer(data, dtype=np.int8, count=dim, offset=1 + _SCALE_BYTES)
        return values.astype(np.float32) * np.float32(scale)
    raise ValueError(f"stored vector of unknown format {data[:1]!r}")


def _int8_parts(
    blobs: Sequence[bytes], dim: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]] | None:
    """The int8 rows and scales of ``blobs`` when every one is an int8 blob of ``dim``
    components (the common case: one join for the whole batch), else None."""
    width = 1 + _SCALE_BYTES + dim + dim % 2
    kind = _INT8_ODD if dim % 2 else _INT8_EVEN
    if not blobs or not all(len(b) == width and b[0] == kind for b in blobs):
        return None
    joined = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    scales = joined[:, 1 : 1 + _SCALE_BYTES].copy().view("<f4").reshape(-1).astype(np.float32)
    return joined[:, 1 + _SCALE_BYTES : 1 + _SCALE_BYTES + dim].view(np.int8), scales


def quantized_rows(
    blobs: Sequence[bytes], dim: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Stored vectors of one dimension as the in-memory search holds them: int8 rows and a
    scale each. int8 blobs are taken as they are (no round trip through float32); older
    formats are quantized as they are read."""
    parts = _int8_parts(blobs, dim)
    if parts is not None:
        return parts[0].copy(), parts[1]
    return int8_scores.quantize_rows(decode_rows(blobs, dim))


def decode_rows(blobs: Sequence[bytes], dim: int) -> Vector:
    """Stored vectors of one dimension as a float32 ``(len(blobs), dim)`` matrix."""
    out = np.empty((len(blobs), dim), dtype=np.float32)
    parts = _int8_parts(blobs, dim)
    if parts is not None:
        np.multiply(parts[0], parts[1][:, None], out=out, dtype=np.float32)
        return out
    for i, blob in enumerate(blobs):
        row = decode(blob)
        if row.shape[0] != dim:
            raise ValueError(f"stored vector {i} has {row.shape[0]} components, not {dim}")
        out[i] = row
    return out


def as_float32_bytes(blob: bytes) -> bytes:
    """A stored vector as the four-byte form other stores keep (``fleetmem store copy``)."""
    return decode(blob).astype("<f4").tobytes()
