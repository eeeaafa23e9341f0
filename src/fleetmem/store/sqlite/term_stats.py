"""How many indexed episodes each query phrase occurs in, for pruning OR-queries.

An OR-query costs FTS5 work for every document any of its phrases matches, and BM25 gives
a phrase found in a large share of the store almost no weight. Knowing each phrase's
document count lets the text channel drop those phrases before FTS5 scores anything
(:func:`fleetmem.core.textquery.prune_common` decides which).

Phrases are tokenised by FTS5 itself (a connection-local temporary FTS5 table with the
index's tokenizer, read through ``fts5vocab``), so the counted terms are exactly the stemmed
tokens the index holds. Counts come from an ``fts5vocab`` view of the index's text columns
(the ``scope_key`` column is not text a user searches); walking a
common term's postings is the costly part, so counts are remembered until the store has
grown or shrunk by a quarter since they were taken: the pruning only needs their order of
magnitude. They are remembered twice: in this process, and in the store's
``builtin_term_counts`` table (migration 13), so a short-lived process (a ``fleetmem mcp``
started for one agent run) starts with the counts the daemon or an earlier run already took.
Writing that table is best effort: when the store's write lock is not free within a few
milliseconds the counts stay in this process only, and a recall never waits behind an ingest.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence

from fleetmem.store.sqlite.db import Database

log = logging.getLogger("fleetmem.store")

#: The built-in index's tokenizer (migrations m0001 and m0006).
TOKENIZER = "porter unicode61"
#: Remembered counts are dropped when the store size moves by more than this share.
DRIFT = 0.25
#: More remembered terms than this and the memo starts over (bounded memory).
MAX_TERMS = 50_000
#: Only terms in at least this many documents are shared through the store: rarer ones cost
#: little to count, and leaving them out bounds the table by the index's common vocabulary,
#: whatever callers type.
SHARE_MIN_DOCS = 100
#: The longest a recall waits for the write lock to share its counts.
SHARE_WAIT_MS = 20

_SETUP = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.builtin_query_tokens"
    f" USING fts5 (phrase, tokenize = '{TOKENIZER}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.builtin_query_vocab"
    " USING fts5vocab (temp, builtin_query_tokens, instance)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.builtin_index_vocab"
    " USING fts5vocab (main, builtin_fts, col)",
)


class TermStats:
    """Per-phrase document counts over ``builtin_fts``, with a size-bounded memo."""

    def __init__(self, db: Database | None = None) -> None:
        self._db = db  # None: counts stay in this process
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._taken_at_size = 0

    def total_docs(self, conn: sqlite3.Connection) -> int:
        """An upper bound of the indexed episodes: the highest rowid (an O(log n) lookup).

        Rowids of forgotten episodes are not reused, so this can only overstate the size,
        which makes pruning more cautious, never more aggressive.
        """
        row = conn.execute(
            "SELECT rowid FROM builtin_fts_source ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def phrase_counts(
        self, conn: sqlite3.Connection, phrases: Sequence[str], total: int
    ) -> dict[str, int]:
        """Each phrase's document count (its rarest token's: an upper bound for the phrase)."""
        tokens = self._tokenise(conn, phrases)
        wanted = sorted({t for toks in tokens.values() for t in toks})
        counts = self._term_counts(conn, wanted, total)
        return {
            phrase: min((counts.get(t, 0) for t in tokens.get(i, ())), default=0)
            for i, phrase in enumerate(phrases)
        }

    @staticmethod
    def _tokenise(conn: sqlite3.Connection, phrases: Sequence[str]) -> dict[int, list[str]]:
        for statement in _SETUP:
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO temp.builtin_query_tokens (rowid, phrase) VALUES (?, ?)",
            list(enumerate(phrases)),
        )
        try:
            rows = conn.execute(
                "SELECT doc, term FROM temp.builtin_query_vocab ORDER BY doc, offset"
            ).fetchall()
        finally:
            conn.execute("DELETE FROM temp.builtin_query_tokens")
        out: dict[int, list[str]] = {}
        for doc, term in rows:
            out.setdefault(int(doc), []).append(str(term))
        return out

    def _term_counts(
        self, conn: sqlite3.Connection, terms: Sequence[str], total: int
    ) -> dict[str, int]:
        with self._lock:
            base = self._taken_at_size
            if base == 0 or abs(total - base) > DRIFT * base or len(self._counts) > MAX_TERMS:
                self._counts = {}
                self._taken_at_size = total
            known = {t: self._counts[t] for t in terms if t in self._counts}
        missing = [t for t in terms if t not in known]
        if missing:
            shared = self._shared(conn, missing, total)
            with self._lock:
                self._counts.update(shared)
            known.update(shared)
            missing = [t for t in missing if t not in shared]
        if missing:
            # One lookup per term: fts5vocab answers ``term = ?`` by walking that term only.
            fresh = {t: 0 for t in missing}
            for term in missing:
                # Per column, not counting scope tokens; the largest column count stands
                # for the term (the context column repeats neighbours' words, so a sum
                # would count most documents twice).
                row = conn.execute(
                    "SELECT max(doc) FROM temp.builtin_index_vocab"
                    " WHERE term = ? AND col != 'scope_key'",
                    (term,),
                ).fetchone()
                if row is not None and row[0] is not None:
                    fresh[term] = int(row[0])
            with self._lock:
                self._counts.update(fresh)
            known.update(fresh)
            self._share(fresh, total)
        return known

    @staticmethod
    def _shared(conn: sqlite3.Connection, terms: Sequence[str], total: int) -> dict[str, int]:
        """Counts another process (or this one, earlier) stored, taken near today's size."""
        rows = conn.execute(
            "SELECT term, docs, taken_at FROM builtin_term_counts"
            f" WHERE term IN ({', '.join('?' * len(terms))})",
            list(terms),
        ).fetchall()
        return {
            str(term): int(docs)
            for term, docs, taken_at in rows
            if int(taken_at) > 0 and abs(total - int(taken_at)) <= DRIFT * int(taken_at)
        }

    def _share(self, fresh: dict[str, int], total: int) -> None:
        common = [(t, n, total) for t, n in fresh.items() if n >= SHARE_MIN_DOCS]
        if self._db is None or not common:
            return
        try:
            with self._db.try_write(SHARE_WAIT_MS) as conn:
                if conn is None:
                    return  # the store is busy writing: keep the counts in this process
                conn.executemany(
                    "INSERT INTO builtin_term_counts (term, docs, taken_at) VALUES (?, ?, ?)"
                    " ON CONFLICT (term) DO UPDATE SET docs = excluded.docs,"
                    " taken_at = excluded.taken_at",
                    common,
                )
        except sqlite3.Error as exc:  # a read-only store file, say: the cache is optional
            log.debug("term counts not shared: %s", type(exc).__name__)

    def forget(self) -> None:
        """Drop every remembered count (after deletes; the next query recounts)."""
        with self._lock:
            self._counts = {}
            self._taken_at_size = 0
