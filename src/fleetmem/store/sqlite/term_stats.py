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
magnitude.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

#: The built-in index's tokenizer (migrations m0001 and m0006).
TOKENIZER = "porter unicode61"
#: Remembered counts are dropped when the store size moves by more than this share.
DRIFT = 0.25
#: More remembered terms than this and the memo starts over (bounded memory).
MAX_TERMS = 50_000

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

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._taken_at_size = 0

    def total_docs(self, conn: sqlite3.Connection) -> int:
        """An upper bound of the indexed episodes: the highest rowid (an O(log n) lookup).

        Rowids of forgotten episodes are not reused, so this can only overstate the size,
        which makes pruning more cautious, never more aggressive.
        """
        row = conn.execute("SELECT rowid FROM builtin_fts ORDER BY rowid DESC LIMIT 1").fetchone()
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
        return known

    def forget(self) -> None:
        """Drop every remembered count (after deletes; the next query recounts)."""
        with self._lock:
            self._counts = {}
            self._taken_at_size = 0
