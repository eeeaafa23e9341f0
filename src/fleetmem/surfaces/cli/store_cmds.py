"""``fleetmem store copy``: move a whole memory between a SQLite file and a PostgreSQL
database (docs/postgres.md, "Moving between stores").

It names both stores itself (``--from``, ``--to``), so it opens no home and never goes
through a daemon. Progress goes to stderr, so ``--json`` on stdout stays one document.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit

#: Seconds between two progress lines of one table (its first and last are always shown).
PROGRESS_EVERY_S = 1.0


def register(sub: Any) -> dict[str, Handler]:
    p = sub.add_parser("store", help="copy a whole memory between stores (SQLite, PostgreSQL)")
    actions = p.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    c = actions.add_parser(
        "copy",
        help="copy every table from one store to another, verified; run again, it adds"
        " only what is new",
    )
    c.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="STORE",
        help="the store to read: a SQLite file's path or a postgresql:// URL",
    )
    c.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="STORE",
        help="the store to write (empty, or an earlier copy of --from): a path or a URL",
    )
    c.add_argument("--json", action="store_true")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return {"store": _cmd_store}


def _cmd_store(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.service.store_copy import copy_between

    progress = None if args.quiet else _Progress()
    report = copy_between(args.source, args.target, progress=progress)
    emit(args, report.as_dict(), _text)
    return EXIT_OK


class _Progress:
    """``copying episodes 5,000/100,000`` on stderr, at most once a second per stage."""

    def __init__(self) -> None:
        self._stage = ""
        self._shown = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage == self._stage and done < total and now - self._shown < PROGRESS_EVERY_S:
            return
        self._stage, self._shown = stage, now
        print(f"copying {stage} {done:,}/{total:,}", file=sys.stderr, flush=True)


def _text(d: dict[str, Any]) -> str:
    lines = [f"from {d['source']}", f"to   {d['target']}", ""]
    lines.append(f"{'table':<24} {'source':>9} {'copied':>9} {'present':>9} {'target':>9}")
    for t in d["tables"]:
        note = f"  ({t['differ']} differ: kept --to's)" if t["differ"] else ""
        lines.append(
            f"{t['table']:<24} {t['source']:>9,} {t['copied']:>9,} "
            f"{t['present'] + t['differ']:>9,} {t['target']:>9,}{note}"
        )
    index = d["builtin_index"]
    lines.append(
        f"{'built-in index':<24} {index['source']:>9,} {index['indexed']:>9,}"
        f" {index['present']:>9,}"
    )
    if index["vectors_missing"]:
        lines.append(
            f"{index['vectors_missing']} episodes had no vector in --from's embedding cache:"
            " the daemon's background backfill embeds them"
        )
    if d["nothing_new"]:
        lines.append("nothing new to copy: --to already holds everything in --from")
    else:
        lines.append(f"copied {d['copied']:,} rows in {d['seconds']:.1f} s; counts verified")
    if d["differ"]:
        lines.append(
            f"{d['differ']} rows of --from differ from the rows of the same key in --to"
            " (changed since the last copy); --to's were kept"
        )
    return "\n".join(lines)
