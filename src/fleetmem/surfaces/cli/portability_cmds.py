"""``fleetmem export``, ``import`` and ``backup``: carry a memory, restore it, copy it safely.

``import`` reads three kinds of file: a fleetmem archive (restored), and Claude Code memory
files or an MCP memory server's ``memory.json`` (their statements become proposed facts for
review). It tells them apart by content unless ``--from`` says which.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fleetmem.core.memory_imports import FORMATS, UnreadableImport, read_candidates
from fleetmem.errors import InvalidInput
from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit

_ARCHIVE = "archive"


def register(sub: Any) -> dict[str, Handler]:
    p = sub.add_parser("export", help="write facts, context files and runs to a JSON Lines archive")
    p.add_argument("path", help="the archive to write (must not exist)")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser(
        "import",
        help="restore an archive, or propose facts from CLAUDE.md / MEMORY.md / memory.json",
    )
    p.add_argument("path", help="the file to read")
    p.add_argument(
        "--from",
        dest="source_format",
        choices=(_ARCHIVE, *FORMATS),
        help="what the file is (default: told from its content)",
    )
    p.add_argument(
        "--scope",
        default="workspace",
        help="scope of proposed facts: workspace, project:<repo> or agent:<name>",
    )
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("backup", help="a consistent copy of the store while the daemon runs")
    p.add_argument("path", help="the SQLite file to write (must not exist)")
    p.add_argument("--json", action="store_true")
    return {"export": _cmd_export, "import": _cmd_import, "backup": _cmd_backup}


def _progress(verb: str) -> Any:
    # Progress goes to stderr so that --json output on stdout stays one document.
    def show(done: int, total: int) -> None:
        print(f"{verb} {done}/{total}", file=sys.stderr, flush=True)

    return show


def _cmd_export(app: Any, args: argparse.Namespace) -> int:
    summary = app.portability.export(Path(args.path), progress=_progress("exported"))
    emit(
        args,
        summary.as_dict(),
        lambda d: (
            f"wrote {d['path']} ({d['bytes']} bytes): "
            + ", ".join(f"{n} {name}" for name, n in d["counts"].items())
        ),
    )
    return EXIT_OK


def _cmd_backup(app: Any, args: argparse.Namespace) -> int:
    path = app.portability.backup(Path(args.path))
    size = path.stat().st_size
    emit(args, {"path": str(path), "bytes": size}, lambda d: f"wrote {d['path']} ({size} bytes)")
    return EXIT_OK


def _cmd_import(app: Any, args: argparse.Namespace) -> int:
    path = Path(args.path)
    fmt = args.source_format or _guess(path)
    if fmt == _ARCHIVE:
        summary = app.portability.import_archive(path, progress=_progress("imported"))
        emit(args, summary.as_dict(), _archive_text)
        return EXIT_OK
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("path", str(path), f"cannot be read as UTF-8 text: {exc}") from exc
    try:
        candidates = read_candidates(fmt, text)
    except UnreadableImport as exc:
        raise InvalidInput(f"{path.name}:{exc.line}", fmt, exc.reason) from exc
    result = app.facts.propose_imported(
        candidates, origin_name=path.name, scope=args.scope, progress=_progress("proposed")
    )
    emit(args, {"format": fmt, "found": len(candidates), **result.as_dict()}, _facts_text)
    return EXIT_OK


def _guess(path: Path) -> str:
    """archive, claude-md or memory-json, from the file's name and first line."""
    if path.suffix.lower() in (".md", ".markdown"):
        return "claude-md"
    try:
        with path.open("rb") as handle:
            first = handle.readline(4096)
    except OSError as exc:
        raise InvalidInput("path", str(path), f"cannot be read: {exc.strerror}") from exc
    if b'"fleetmem-archive"' in first:
        return _ARCHIVE
    if first.lstrip().startswith(b"{"):
        return "memory-json"
    return "claude-md"


def _archive_text(d: dict[str, Any]) -> str:
    lines = [
        f"{name:<24} {d['inserted'][name]:>6} added  {d['present'].get(name, 0):>6} already here"
        for name in d["inserted"]
    ]
    if d["runs_without_episode"]:
        lines.append(
            f"{d['runs_without_episode']} runs were stored without an episode"
            " (this home's agent settings skip them)"
        )
    return "\n".join(lines)


def _facts_text(d: dict[str, Any]) -> str:
    lines = [
        f"{d['found']} statements found: {d['proposed']} proposed for review,"
        f" {d['duplicates']} already known, {d['dropped']} dropped (review queue full),"
        f" {len(d['refused'])} refused"
    ]
    lines += [f"  line {r['line']}: {r['reason']}" for r in d["refused"]]
    if d["proposed"]:
        lines.append(
            "review them: fleetmem facts list --status proposed, then fleetmem facts review"
        )
    return "\n".join(lines)
