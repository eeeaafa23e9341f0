"""How the SQLite store keeps a vector in ``embeddings.vector`` (issue 20, footprint).

A vector is written as half precision behind a format byte: 1 + 2 x dim bytes (769 for the
local model's 384 dimensions) instead of 4 x dim (1,536). Rows are unit length, so every
component lies in [-1, 1], where float16 keeps about three significant digits; a cosine
computed from the stored halves differs from the float32 one by about 1e-4 at most.
Vectors are widened back to float32 as they are read, so every search still multiplies
float32 (numpy has no fast float16 product).

A blob of an even length is a row written before this module, four bytes a component, read
as it is: no migration rewrites stored vectors. The format byte makes new blobs odd-length,
so the two can never be confused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fleetmem.store.base import Vector

_HALF = 2  # format byte: little-endian float16 components follow


def encode(vector: Vector) -> bytes:
    """``vector`` as stored."""
    values = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(values)):
        raise ValueError("a stored vector must hold finite numbers")
    if values.size and float(np.abs(values).max()) > 65_504.0:
        # The largest float16; embedders' rows are unit length, far below it.
        raise ValueError("a stored vector's components must lie within float16's range")
    return bytes((_HALF,)) + values.astype("<f2").tobytes()


def decode(blob: bytes) -> Vector:
    """A stored vector as float32, whichever format it was written in."""
    data = bytes(blob)
    if len(data) % 2 == 1:
        if data[0] != _HALF:
            raise ValueError(f"stored vector of unknown format {data[:1]!r}")
        return np.frombuffer(data, dtype="<f2", offset=1).astype(np.float32)
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


def decode_rows(blobs: Sequence[bytes], dim: int) -> Vector:
    """Stored vectors of one dimension as a float32 ``(len(blobs), dim)`` matrix."""
    out = np.empty((len(blobs), dim), dtype=np.float32)
    if all(len(b) == 1 + 2 * dim for b in blobs):
        # The common case, one join and one conversion for the whole batch.
        joined = b"".join(bytes(b)[1:] for b in blobs)
        out[:] = np.frombuffer(joined, dtype="<f2").reshape(-1, dim)
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
