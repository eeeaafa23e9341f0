"""The Embedder protocol: what every source of vectors promises the rest of fleetmem.

Vectors are compared by dot product, so every implementation returns unit-length rows; the
store keeps ``model_id`` beside each cached vector so a model change never mixes two spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np


#: The array every embedder returns: float32, shape ``(len(texts), dim)``, rows L2-normalised.
if TYPE_CHECKING:
    Vectors = npt.NDArray[np.float32]
    Vector = npt.NDArray[np.float32]
else:  # numpy is imported on first use (fleetmem.lazy_numpy); the alias is for annotations
    Vectors = Any
    Vector = Any


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``model_id`` is stable across processes and versions of fleetmem for the same model, e.g.
    ``"local:all-MiniLM-L6-v2-onnx-int8"`` or ``"openai:api.example.com/text-embedding-3-small"``;
    vectors made under different ids must never be compared.
    """

    @property
    def model_id(self) -> str:
        """Stable identifier stored beside every cached vector."""
        ...

    @property
    def dim(self) -> int:
        """Length of every row :meth:`embed` returns."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order: float32 ``(len(texts), dim)``, each row L2-normalised.

        An empty sequence gives an empty ``(0, dim)`` array. Any failure (model missing, API
        down, bad answer) raises :class:`fleetmem.errors.EmbeddingUnavailable`.
        """
        ...


def normalise_rows(matrix: npt.ArrayLike) -> Vectors:
    """Scale each row to unit L2 length, leaving an all-zero row at zero instead of NaN."""
    as_f32 = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(as_f32, axis=1, keepdims=True)
    # A zero row has no direction; dividing by 1 keeps it zero rather than poisoning scores.
    safe = np.where(norms > 0.0, norms, np.float32(1.0))
    return np.ascontiguousarray(as_f32 / safe, dtype=np.float32)


def embed_query(embedder: Embedder, text: str) -> Vector:
    """The vector of one search query.

    An embedder may embed queries its own way (the offline model uses its int8 copy, see
    :mod:`fleetmem.embed.query_model`) through an ``embed_query(text)`` method; any other is
    asked ``embed([text])``. Documents are always embedded by ``embed``.
    """
    own = getattr(embedder, "embed_query", None)
    if callable(own):
        vector: Vector = own(text)
        return vector
    first: Vector = embedder.embed([text])[0]
    return first
