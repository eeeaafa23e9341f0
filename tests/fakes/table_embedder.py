"""An embedder whose vectors the test lays out by hand: each known text maps to its vector."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class TableEmbedder:
    def __init__(self, table: dict[str, np.ndarray], model_id: str = "test:table") -> None:
        self.table = table
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return len(next(iter(self.table.values())))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).astype(np.float32)
