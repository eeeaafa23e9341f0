"""Keeping an FTS5 index in one segment, so a query reads each term's postings once.

FTS5 writes each transaction's terms as a new segment and merges segments a few at a time
(its ``automerge``), so an index fed one episode at a time holds more segments the larger it
grows, and every query term is looked up in each of them. On the 100k-episode bench store,
23 segments merged into one took the text channel from 7.2 / 13.9 ms to 4.1 / 6.4 ms
(p50 / p95, the same 200 queries, one run).

Merging rewrites the whole index, so it is done in steps of :data:`MERGE_PAGES` leaf pages,
each step its own short write transaction: an ingest waits behind one step at most (about
20 ms at 200 pages on this machine), never behind the whole rewrite. A pass stops when one
segment is left or its time budget is spent; the next pass picks up the merge where it
stopped (FTS5 keeps an unfinished merge in the index itself).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable

from fleetmem.store.base import Compaction
from fleetmem.store.sqlite.db import Database

#: Leaf pages merged per write transaction.
MERGE_PAGES = 200
#: Below this many segments a pass leaves the index as it is: rewriting the whole index to
#: save a query two or three lookups per term is waste.
COMPACT_MIN_SEGMENTS = 8
#: ...and from that count on, it merges only once this share of the index lies outside its
#: largest segment. Merging rewrites everything, so waiting for a tenth of new data bounds the
#: rewriting to about ten times what was written. Small new segments cost a query little: on
#: the 100k bench store, 430 runs recorded after a full merge left 22 segments holding 11.7%
#: of the index, and the text channel went from 3.6 / 5.8 ms to 4.0 / 6.1 ms (p50 / p95).
COMPACT_MIN_SHARE = 0.10
#: The longest one pass merges before leaving the rest to the next pass.
PASS_BUDGET_S = 30.0

_TABLE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def segment_sizes(conn: sqlite3.Connection, table: str) -> list[int]:
    """Each segment's size in ``%_idx`` rows (about its leaf pages), largest first.

    Every segment, an unfinished merge's output included, has at least one row in the
    ``%_idx`` shadow table (one per leaf page that starts a new term range), so the list has
    exactly one entry per segment.
    """
    _check_name(table)
    rows = conn.execute(f"SELECT count(*) FROM {table}_idx GROUP BY segid").fetchall()
    return sorted((int(r[0]) for r in rows), reverse=True)


def segment_count(conn: sqlite3.Connection, table: str) -> int:
    """How many segments ``table`` (an FTS5 table) holds."""
    return len(segment_sizes(conn, table))


def outside_share(sizes: list[int]) -> float:
    """The share of an index (segment sizes, largest first) outside its largest segment."""
    total = sum(sizes)
    return (total - max(sizes)) / total if total else 0.0


def worth_merging(sizes: list[int], min_segments: int) -> bool:
    """Whether segments of these sizes (largest first) are worth a whole rewrite."""
    if len(sizes) < max(min_segments, 2):
        return False
    return outside_share(sizes) >= COMPACT_MIN_SHARE


def compact(
    db: Database,
    table: str,
    *,
    min_segments: int | None = None,
    pages: int | None = None,
    budget_s: float = PASS_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
) -> Compaction:
    """Merge ``table``'s segments towards one, in steps, within ``budget_s``.

    Nothing happens when it holds fewer than ``min_segments`` segments (default
    :data:`COMPACT_MIN_SEGMENTS`), nor while less than :data:`COMPACT_MIN_SHARE` of it lies
    outside its largest segment (see :func:`worth_merging`). Each step merges ``pages`` leaf
    pages (default :data:`MERGE_PAGES`). Queries see the same rows and the same BM25 scores
    before, during and after: a merge moves postings between segments and drops nothing but
    the entries of deleted rows.
    """
    _check_name(table)
    min_segments = COMPACT_MIN_SEGMENTS if min_segments is None else min_segments
    pages = MERGE_PAGES if pages is None else pages
    if pages <= 0:
        raise ValueError(f"pages must be positive, got {pages}")
    if budget_s < 0:
        raise ValueError(f"budget_s must not be negative, got {budget_s}")
    start = clock()
    sizes = segment_sizes(db.conn, table)
    before = len(sizes)
    if not worth_merging(sizes, min_segments):
        return Compaction(table, before, before, 0, 0.0, True)
    segments, steps, moved = before, 0, True
    while moved and segments > 1 and (steps == 0 or clock() - start < budget_s):
        with db.write() as conn:
            shape = _structure(conn, table)
            # A negative page count puts every segment on one level first and merges even
            # two of them: the whole index ends in one segment, as 'optimize' would leave it,
            # without holding the write lock for the whole rewrite.
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (-pages,))
            # An unchanged structure record means FTS5 found nothing to merge: stop rather
            # than spin (writers adding segments between steps are merged by the next pass).
            moved = _structure(conn, table) != shape
        steps += 1
        segments = segment_count(db.conn, table)
    return Compaction(table, before, segments, steps, round(clock() - start, 3), segments <= 1)


def _structure(conn: sqlite3.Connection, table: str) -> bytes | None:
    # FTS5 keeps its segment list in one record of the %_data table, at id 10.
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()
    return None if row is None else bytes(row[0])


def _check_name(table: str) -> None:
    # The name is put into SQL text (FTS5 commands take no bound table name): only the
    # store's own identifiers may get there.
    if not _TABLE_NAME.match(table):
        raise ValueError(f"table must be a plain identifier, got {table!r}")
