"""An int8 copy of the offline model, made once per machine, that embeds queries.

Why a copy: the shipped MiniLM stores its weights in int8, but onnxruntime folds them back to
float32 when it builds the session, so every matrix product of a query runs in float32: about
5-7 ms of a 10,000-episode recall's 10-16 (measured 2026-12-06, this project's 2-core
machine). Quantized per output channel, with each product's input quantized on the fly
(onnxruntime's dynamic quantization), the same model embeds a 14-token query in about half
that on one thread, and frees the other core for SQLite's word search meanwhile.

Only queries use it. Measured with cosine alone (`bench.bench_embedders`' sets): queries from
the copy against documents from the shipped model rank as the shipped model does (LoCoMo,
1,536 questions: recall@10 0.454 both, MRR 0.297 / 0.300; coding runs, 192 questions: MRR
0.592 / 0.590; facts top-3 0.72 both), while embedding the documents with it too lost 0.007
recall@10 on LoCoMo and 0.014 MRR on coding runs. So stored vectors stay the shipped
model's and keep its ``model_id``.

Making the copy peaks near 500 MiB and takes a few seconds of CPU, so it runs in a child
process at low priority (:func:`prepare`), never inside a daemon's own heap, and the result
is kept in ``$XDG_CACHE_HOME/fleetmem/models/`` under a name that carries the source file's
sha256 and the versions of onnxruntime and onnx that made it. A sidecar holds the copy's
sha256 and the shipped model's vectors of a few probe texts; a copy whose bytes do not match
it is made again, and one that does not embed the probes alike is not used. Until a copy
exists, queries use the shipped model: slower, never different in what they find.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: ``FLEETMEM_QUERY_MODEL=full`` embeds queries with the shipped model and makes no copy.
ENV = "FLEETMEM_QUERY_MODEL"
#: How long making the copy may take before the child is stopped (it takes about 5 s).
PREPARE_TIMEOUT_S = 300.0
#: A lock older than this was left by a process that died while making the copy.
STALE_LOCK_S = 600.0
_SIDECAR = ".json"
#: Texts the copy's maker embeds with the shipped model and records beside the copy; a
#: process checks that the copy embeds them alike before using it (``local.MIN_AGREEMENT``).
PROBES = (
    "why did the flaky ledger test fail after the migration",
    "deploy billing on fridays",
    "The parser crashed on an empty YAML key; the fix added a default and a regression test.",
)


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """False when queries are to use the shipped model (``FLEETMEM_QUERY_MODEL=full``)."""
    return environ.get(ENV, "").strip().lower() != "full"


def cache_file(source_sha256: str, environ: Mapping[str, str] = os.environ) -> Path:
    """Where the copy of the model whose sha256 is ``source_sha256`` is kept.

    Under ``$XDG_CACHE_HOME``, else ``~/.cache``; with neither (no home directory at all),
    under the system's temporary folder, so a process without a home still finds a copy.
    """
    base = environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no HOME and no passwd entry
            base = tempfile.gettempdir()
    versions = f"ort{_version('onnxruntime')}-onnx{_version('onnx')}"
    name = f"minilm-query-int8-{source_sha256[:16]}-{versions}.onnx"
    return Path(base) / "fleetmem" / "models" / name


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + _SIDECAR)


def _record(path: Path) -> dict[str, Any] | None:
    """What the copy's maker recorded, if ``path``'s bytes still match it."""
    try:
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("sha256") != sha256_of(path):
            return None
    except (OSError, ValueError):
        return None
    return record


def ready(path: Path) -> bool:
    """True when ``path`` holds a copy whose bytes match the sha256 its maker recorded."""
    return probe_vectors(path) is not None


def probe_vectors(path: Path) -> dict[str, list[float]] | None:
    """The shipped model's vector of each of :data:`PROBES`, as recorded when the copy at
    ``path`` was made; None when there is no such copy, its bytes changed, or the record
    does not hold every probe as 384 finite numbers."""
    record = _record(path)
    probes = record.get("probes") if record else None
    if not isinstance(probes, dict):
        return None
    out: dict[str, list[float]] = {}
    for text in PROBES:
        vector = probes.get(text)
        if not (
            isinstance(vector, list)
            and len(vector) == 384
            and all(isinstance(x, float) and math.isfinite(x) for x in vector)
        ):
            return None
        out[text] = vector
    return out


def prepare(source: Path, out: Path, *, timeout_s: float = PREPARE_TIMEOUT_S) -> bool:
    """Make the copy of ``source`` at ``out`` unless a good one is there; True when it is.

    The work runs in a child process (``python -m fleetmem.embed.query_model``). Processes
    that ask at once make it once: the first takes a lock file beside ``out``, the others
    wait for its result. Failures are logged and answered False: queries then keep using the
    shipped model.
    """
    if ready(out):
        return True
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("embed.query_model_unavailable reason=cache_folder error=%s", exc)
        return False
    lock = out.with_name(out.name + ".lock")
    deadline = time.monotonic() + timeout_s
    while not _take(lock):
        if ready(out):
            return True
        if time.monotonic() > deadline:
            log.warning("embed.query_model_unavailable reason=another_process_still_making_it")
            return False
        time.sleep(0.2)
    try:
        if ready(out):
            return True
        command = [sys.executable, "-m", "fleetmem.embed.query_model", str(source), str(out)]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=max(1.0, deadline - time.monotonic()),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("embed.query_model_unavailable reason=%s", type(exc).__name__)
            return False
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            log.warning(
                "embed.query_model_unavailable reason=child_failed code=%d error=%s",
                done.returncode,
                last[:300],
            )
            return False
        log.info("embed.query_model_made seconds=%.1f path=%s", time.monotonic() - started, out)
        return ready(out)
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()


def _take(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_S:
                lock.unlink()
        except OSError:
            pass
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


def make(source: Path, out: Path) -> None:
    """Write the int8 copy of ``source`` to ``out`` and its sha256 beside it (the child's work).

    onnxruntime first writes the model with its int8 weights folded to float32 (what it runs
    today); onnx's dynamic quantization then quantizes each weight matrix per output channel.
    Both land in temporary names and are renamed into place, so a reader never sees half.
    """
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    stem = out.parent / f".{out.name}.{os.getpid()}"
    folded, quantized = Path(f"{stem}.folded"), Path(f"{stem}.tmp")
    try:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        onnxruntime.InferenceSession(
            str(source), sess_options=options, providers=["CPUExecutionProvider"]
        )
        quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True)
        digest = sha256_of(quantized)
        # What the shipped model makes of the probes, for every later process to check the
        # copy against (loading it here costs this short-lived child, not a daemon).
        from fleetmem.embed.local import LocalMiniLM

        shipped = LocalMiniLM(query_copy=False).embed(list(PROBES))
        record = {
            "sha256": digest,
            "source": str(source),
            "probes": {
                text: [float(x) for x in row] for text, row in zip(PROBES, shipped, strict=True)
            },
        }
        os.replace(quantized, out)
        sidecar = Path(f"{stem}.json")
        sidecar.write_text(json.dumps(record), encoding="utf-8")
        os.replace(sidecar, _sidecar(out))
    finally:
        for leftover in (folded, quantized):
            with contextlib.suppress(OSError):
                leftover.unlink()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m fleetmem.embed.query_model SOURCE.onnx OUT.onnx", file=sys.stderr)
        return 2
    # A few seconds of CPU that must not take a core from the recalls being served.
    with contextlib.suppress(OSError):
        os.nice(10)
    logging.disable(logging.WARNING)  # onnx's quantizer advises pre-processing on stderr
    make(Path(args[0]), Path(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
