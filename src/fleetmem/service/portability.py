"""Export, import and backup: a memory that can be carried to another machine or store.

An archive is JSON Lines (docs/portability.md): a header line naming the format and its
version, one line per table row or run, and an end line with the counts, so a truncated file
is recognised as such. Everything in it is redacted on the way out and, because an archive is
input from outside like any other, redacted again on the way in.

Import reads and checks the whole archive before it writes anything: an unknown format, a
newer version, a truncated file, a malformed row or a run record that would be refused stops
it with an error naming the line and the field, and the store is as it was. Table rows are then
restored in one transaction; runs are ingested one by one afterwards (each in its own
transaction, exactly as a harness posting them would), so an import stopped during that phase
finishes when it is run again: every step skips what is already present.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fleetmem import __version__
from fleetmem.core.episode import content_hash
from fleetmem.core.facts import LIVE, normalize
from fleetmem.core.redact import redact, redact_value
from fleetmem.errors import InvalidInput
from fleetmem.service.runrecords import parse_run_record
from fleetmem.store.archive import ARCHIVE_TABLES, TABLES_BY_NAME, ArchiveStore, ArchiveTable

log = logging.getLogger(__name__)

FORMAT_NAME = "fleetmem-archive"
FORMAT_VERSION = 1

#: One line of an archive at the most; a longer one is refused rather than read into memory.
MAX_LINE_BYTES = 8 * 1024 * 1024

#: Called as ``progress(done, total)`` while a long export or import goes on.
Progress = Callable[[int, int], None]

_RUNS = "runs"


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What an export wrote."""

    path: Path
    counts: dict[str, int]
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "counts": self.counts, "bytes": self.bytes}


@dataclass(slots=True)
class ImportSummary:
    """What an import found and did: per table, rows inserted and rows already present."""

    inserted: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    #: Runs ingested whose episode was not assembled (the agent's settings here skip it).
    runs_without_episode: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "inserted": self.inserted,
            "present": self.present,
            "runs_without_episode": self.runs_without_episode,
        }


@dataclass(slots=True)
class _Parsed:
    rows: dict[str, list[dict[str, Any]]]
    runs: list[tuple[str, dict[str, Any]]]

    @property
    def total(self) -> int:
        return sum(len(r) for r in self.rows.values()) + len(self.runs)


class PortabilityService:
    """Export, import and backup over one store."""

    def __init__(
        self,
        store: ArchiveStore,
        ingest_run: Callable[[dict[str, Any]], object],
        *,
        after_import: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        # MemoryService.ingest_run: runs come in as a harness would post them.
        self._ingest_run = ingest_run
        self._after_import = after_import
        self._clock = clock

    # ---- export -------------------------------------------------------------------------
    def export(self, target: Path, *, progress: Progress | None = None) -> ExportSummary:
        """Write the archive to ``target`` (refused if it exists); nothing is left on failure."""
        if target.exists():
            raise InvalidInput("path", str(target), "exists already; choose a new file name")
        total = sum(self.store.archive_count(t) for t in ARCHIVE_TABLES)
        total += self.store.archive_run_count()
        partial = target.with_name(target.name + ".partial")
        counts: dict[str, int] = {}
        done = 0
        try:
            with partial.open("w", encoding="utf-8") as out:
                _write(out, self._header())
                for table in ARCHIVE_TABLES:
                    counts[table.name] = 0
                    for row in self.store.archive_rows(table):
                        _write(out, {"table": table.name, "row": redact_value(row)})
                        counts[table.name] += 1
                        done = _tick(progress, done, total)
                counts[_RUNS] = 0
                for run in self.store.archive_runs():
                    _write(out, {"run": redact_value(dict(run.record))})
                    counts[_RUNS] += 1
                    done = _tick(progress, done, total)
                _write(out, {"end": True, "counts": counts})
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        if progress is not None:
            progress(total, total)
        size = target.stat().st_size
        log.info("archive.exported rows=%d bytes=%d", sum(counts.values()), size)
        return ExportSummary(target, counts, size)

    def _header(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "fleetmem": __version__,
            "created_at": self._clock(),
            "tables": {t.name: list(t.columns) for t in ARCHIVE_TABLES},
        }

    # ---- import -------------------------------------------------------------------------
    def import_archive(self, source: Path, *, progress: Progress | None = None) -> ImportSummary:
        """Restore an archive into this store, keeping whatever is already present."""
        parsed = self._read(source)
        total = parsed.total
        summary = ImportSummary()
        done = 0
        with self.store.transaction():
            self._drop_known_facts(parsed, summary)
            for table in ARCHIVE_TABLES:
                rows = parsed.rows[table.name]
                inserted = self.store.archive_restore(table, rows)
                summary.inserted[table.name] = inserted
                summary.present[table.name] = summary.present.get(table.name, 0) + len(rows)
                summary.present[table.name] -= inserted
                done += len(rows)
                if progress is not None and rows:
                    progress(done, total)
        summary.inserted[_RUNS] = summary.present[_RUNS] = 0
        for run_id, record in parsed.runs:
            if self.store.get_run(run_id) is not None:
                summary.present[_RUNS] += 1
            else:
                result = self._ingest_run(record)
                summary.inserted[_RUNS] += 1
                if getattr(result, "episode_id", None) is None:
                    summary.runs_without_episode += 1
            done = _tick(progress, done, total)
        if progress is not None:
            progress(total, total)
        self._after_import()
        log.info(
            "archive.imported inserted=%d present=%d",
            sum(summary.inserted.values()),
            sum(summary.present.values()),
        )
        return summary

    def _drop_known_facts(self, parsed: _Parsed, summary: ImportSummary) -> None:
        """Leave out archived facts this store already holds under another id: the same
        wording live in the same scope, or the same idempotency key. Their history rows go
        with them, so no revision or vote is left pointing at a fact that is not here."""
        facts = parsed.rows["facts"]
        ids = [row["id"] for row in facts]
        here = set()
        for workspace in {row["workspace"] for row in facts}:
            here |= set(self.store.fact_get_many(workspace, ids))
        known: set[str] = set()
        for row in facts:
            if row["id"] in here:
                continue
            same = None
            if row["status"] in LIVE:
                same = self.store.fact_find_norm(
                    row["workspace"], row["scope"], row["norm"], sorted(LIVE)
                )
            key = row["idempotency_key"]
            if same is None and key is not None:
                same = self.store.fact_by_idempotency(row["workspace"], key)
            if same is not None:
                known.add(row["id"])
        if not known:
            return
        for table in ARCHIVE_TABLES:
            rows = parsed.rows[table.name]
            column = "id" if table.name == "facts" else "fact_id"
            if column not in table.columns:
                continue
            kept = [row for row in rows if row[column] not in known]
            summary.present[table.name] = len(rows) - len(kept)
            parsed.rows[table.name] = kept

    def _read(self, source: Path) -> _Parsed:
        try:
            handle = source.open("rb")
        except OSError as exc:
            raise InvalidInput("path", str(source), f"cannot be read: {exc.strerror}") from exc
        parsed = _Parsed({t.name: [] for t in ARCHIVE_TABLES}, [])
        with handle:
            lines = _lines(handle)
            header = next(lines, None)
            if header is None:
                raise InvalidInput("archive", str(source), "is empty")
            _check_header(*header)
            end: dict[str, Any] | None = None
            for number, item in lines:
                if end is not None:
                    raise InvalidInput(f"line {number}", "after the end line", "nothing may follow")
                if item.get("end") is True:
                    end = item
                elif "run" in item:
                    parsed.runs.append(_checked_run(number, item))
                else:
                    name, row = _checked_row(number, item)
                    parsed.rows[name].append(row)
        if end is None:
            raise InvalidInput("archive", str(source), "is truncated: it has no end line")
        _check_counts(end, parsed)
        return parsed

    # ---- backup -------------------------------------------------------------------------
    def backup(self, target: Path) -> Path:
        """A consistent copy of the whole store, taken while the daemon goes on writing."""
        if target.exists():
            raise InvalidInput("path", str(target), "exists already; choose a new file name")
        self.store.backup_to(target)
        log.info("store.backup bytes=%d", target.stat().st_size)
        return target


# ---- reading an archive --------------------------------------------------------------------
def _lines(handle: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidInput(
                f"line {number}", f"over {MAX_LINE_BYTES} bytes", "is longer than a line may be"
            )
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a BOM some editors add; the same rule as every other input file
        if not raw.strip():
            continue
        try:
            item = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise InvalidInput(f"line {number}", "not JSON", f"cannot be read: {exc}") from exc
        if not isinstance(item, dict):
            raise InvalidInput(f"line {number}", type(item).__name__, "must be a JSON object")
        yield number, item


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _check_header(number: int, header: Mapping[str, Any]) -> None:
    if header.get("format") != FORMAT_NAME:
        raise InvalidInput(
            f"line {number}.format", str(header.get("format"))[:40], f"is not {FORMAT_NAME}"
        )
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(f"line {number}.version", str(version)[:20], "must be a whole number")
    if version > FORMAT_VERSION:
        raise InvalidInput(
            "archive.version",
            str(version),
            f"is newer than this fleetmem ({__version__}) reads (format {FORMAT_VERSION});"
            " upgrade fleetmem to import it",
        )


def _checked_row(number: int, item: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    name = item.get("table")
    table = TABLES_BY_NAME.get(name) if isinstance(name, str) else None
    if table is None:
        raise InvalidInput(f"line {number}.table", str(name)[:40], "is not a table archives hold")
    row = item.get("row")
    if not isinstance(row, dict):
        raise InvalidInput(f"line {number}.row", type(row).__name__, "must be a JSON object")
    unknown = sorted(set(row) - set(table.columns))
    if unknown:
        raise InvalidInput(f"line {number}.row.{unknown[0][:40]}", name, "is not a column of it")
    clean: dict[str, Any] = {}
    for column in table.columns:
        clean[column] = _cell(f"line {number}.row.{column}", row.get(column))
    missing = [c for c in table.required if clean[c] is None]
    if missing:
        raise InvalidInput(f"line {number}.row.{missing[0]}", "null", "must have a value")
    return table.name, _refresh_fact(table, clean)


def _cell(where: str, value: object) -> object:
    if value is None or isinstance(value, str):
        return None if value is None else redact(value)
    if isinstance(value, bool):
        raise InvalidInput(where, str(value), "must be a number, a string or null")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(where, str(value), "must be a finite number")
        return value
    raise InvalidInput(where, type(value).__name__, "must be a number, a string or null")


def _refresh_fact(table: ArchiveTable, row: dict[str, Any]) -> dict[str, Any]:
    # A body the redactor changed on the way in no longer matches its stored norm and hash;
    # recompute both so duplicates and vectors are found by what is really stored.
    if table.name == "facts" and content_hash(row["body"]) != row["content_hash"]:
        row["norm"] = normalize(row["body"])
        row["content_hash"] = content_hash(row["body"])
    return row


def _checked_run(number: int, item: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    record = item.get("run")
    if not isinstance(record, dict):
        raise InvalidInput(f"line {number}.run", type(record).__name__, "must be a JSON object")
    try:
        parsed, _ = parse_run_record(record)
    except InvalidInput as exc:
        raise InvalidInput(f"line {number}.run.{exc.field}", exc.value, exc.reason) from exc
    return parsed.run_id, record


def _check_counts(end: Mapping[str, Any], parsed: _Parsed) -> None:
    counts = end.get("counts")
    if not isinstance(counts, dict):
        raise InvalidInput("archive.end.counts", type(counts).__name__, "must be a JSON object")
    found = {name: len(rows) for name, rows in parsed.rows.items()}
    found[_RUNS] = len(parsed.runs)
    for name, count in found.items():
        if counts.get(name, 0) != count:
            raise InvalidInput(
                f"archive.end.counts.{name}",
                str(counts.get(name)),
                f"does not match the {count} lines the archive holds: it is damaged",
            )


# ---- writing -------------------------------------------------------------------------------
def _write(out: IO[str], item: Mapping[str, Any]) -> None:
    out.write(json.dumps(item, ensure_ascii=False, sort_keys=True, allow_nan=False))
    out.write("\n")


def _tick(progress: Progress | None, done: int, total: int) -> int:
    done += 1
    if progress is not None and done % 500 == 0:
        progress(done, total)
    return done
