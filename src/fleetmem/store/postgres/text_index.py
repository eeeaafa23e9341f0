"""The PostgreSQL store's text channel: FTS5's tokenizer and BM25, rebuilt over postings.

PostgreSQL's own ranking (``ts_rank``) is not BM25: it ignores how rare a word is in the
store and how long a document is. So the store ranks as SQLite's FTS5 does, from parts
PostgreSQL keeps well:

- **Tokens.** Text is split and stemmed by FTS5's own ``porter unicode61`` tokenizer, run in
  an in-memory SQLite database of this process (the standard library's sqlite3, the same
  library the SQLite store indexes with): a query matches exactly the tokens FTS5 would
  match, and PostgreSQL's parser and dictionaries never touch the text.
- **Documents.** An episode's columns (its text, its summary, its context: the neighbours'
  excerpts, weighted as in FTS5's bm25() call) are one sequence of token positions, with one
  empty position between columns so no phrase spans two of them. Each term is a row of
  ``builtin_postings``: its stored positions (:func:`pack_positions`), and how many of them
  are in the text or summary and how many in the context (:attr:`IndexedDocument.counts`).
  A query reads a term's rows newest first. Each two terms at adjacent positions are a row
  of ``builtin_pair_postings`` too (:func:`pair_id`, migration 10), with the positions where
  the pair starts: a phrase of several tokens is read from its pairs' rows, and one of three
  or more is checked on their starts (its ``k``-th pair starts ``k`` after its first).
- **Statistics.** BM25 needs the store's document count, its average document length and
  each term's document count. ``builtin_totals`` and ``builtin_terms`` keep them exactly,
  updated in the same transaction as the index, with each term's count per column too (the
  SQLite store prunes and normalises by FTS5's per-column counts).
- **Score.** FTS5's bm25() formula (k1 = 1.2, b = 0.75, its IDF clamped at 1e-6:
  :func:`bm25_norm`, :func:`bm25_term`), computed here from the postings' counts
  (:func:`posting_frequency`) and, for a phrase of several tokens, from positions
  (``builtin_index._checked``), with the same arithmetic.

Known differences from FTS5 (docs/postgres.md measures them): positions are kept from 1 to
16,383 and at most 256 per term (the bounds of the ``tsvector`` this index was first built
on, kept so that migrated and new rows agree), so a term's frequency saturates in very long
texts; the IDF of a phrase of several tokens is taken from its rarest token's document count
when that token is common (an upper bound), and counted exactly otherwise.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import sqlite3
import struct
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np

#: FTS5's bm25() parameters.
K1 = 1.2
B = 0.75
#: Positions kept: 1..16383, at most 256 per term (a ``tsvector``'s bounds; see above).
MAX_POSITION = 16_383
MAX_POSITIONS_PER_LEXEME = 256
#: The tokenizer of the SQLite store's index (store/sqlite/term_stats.py names the same).
TOKENIZER = "porter unicode61"
#: The scratch index is rebuilt after this many texts (deleted rows leave tombstones).
_REBUILD_EVERY = 10_000


class _Tokenizer:
    """FTS5 in an in-memory SQLite database: one text in, its tokens out (one at a time)."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.used = 0
        self._create()

    def _create(self) -> None:
        self.conn.execute("DROP TABLE IF EXISTS vocab")
        self.conn.execute("DROP TABLE IF EXISTS scratch")
        self.conn.execute(f"CREATE VIRTUAL TABLE scratch USING fts5 (x, tokenize = '{TOKENIZER}')")
        self.conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab (scratch, instance)")

    def tokens(self, text: str) -> list[str]:
        if not text:
            return []
        with self.lock:
            self.used += 1
            if self.used % _REBUILD_EVERY == 0:
                self._create()
            self.conn.execute("INSERT INTO scratch (rowid, x) VALUES (1, ?)", (text,))
            try:
                rows = self.conn.execute("SELECT term FROM vocab ORDER BY offset").fetchall()
            finally:
                self.conn.execute("DELETE FROM scratch")
        return [str(r[0]) for r in rows]


_TOKENIZER = _Tokenizer()


def tokens(text: str) -> list[str]:
    """The tokens of ``text``, in order, exactly as FTS5's ``porter unicode61`` yields them."""
    return _TOKENIZER.tokens(text)


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """One episode as the text index stores it."""

    #: Tokens in every column, plus one for the scope (FTS5 counts its scope_key column).
    length: int
    #: The last position of the text, and of the summary (later ones are the context's).
    text_end: int
    summary_end: int
    #: Each term's stored positions, ascending: a posting of ``builtin_postings``.
    positions: Mapping[str, tuple[int, ...]]

    @property
    def columns(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """Its distinct terms in each column: text, summary, context (``builtin_terms``'
        counts), read from the stored positions as a stored document's are read again when
        it is replaced or removed, so the counts added are the counts taken away."""
        return columns_of(self.positions, self.text_end, self.summary_end)

    @property
    def counts(self) -> dict[str, tuple[int, int]]:
        """Each term's stored positions, counted: (in the text or summary, in the context).
        BM25 weighs the two as :func:`frequency` does."""
        return {
            lexeme: (main := in_main(at, self.summary_end), len(at) - main)
            for lexeme, at in self.positions.items()
        }

    @property
    def pairs(self) -> dict[int, tuple[int, list[int]]]:
        """Each pair of adjacent terms (:func:`pair_starts`): how many of its starts are in
        the text or summary, and the starts."""
        return {
            pair: (in_main(starts, self.summary_end), starts)
            for pair, starts in pair_starts(self.positions).items()
        }


def in_main(positions: Sequence[int], summary_end: int) -> int:
    """How many of ``positions`` are in the text or summary (up to ``summary_end``)."""
    return sum(1 for p in positions if p <= summary_end)


def document(text: str, summary: str | None, context: str) -> IndexedDocument:
    """An episode's columns as positions: the text's first, then the summary's, then the
    context's, one empty position between columns so no phrase spans two of them.

    Terms past position :data:`MAX_POSITION`, and a term's positions past its
    :data:`MAX_POSITIONS_PER_LEXEME`-th, count in the length but are not stored (nor counted
    in ``builtin_terms``' columns), so the statistics always describe what is stored."""
    positions: dict[str, list[int]] = {}
    length = 1
    position = 0
    ends: list[int] = []
    for column in (text, summary or "", context):
        found = tokens(column)
        length += len(found)
        for token in found:
            position += 1
            if position > MAX_POSITION:
                break
            kept = positions.setdefault(token, [])
            if len(kept) < MAX_POSITIONS_PER_LEXEME:
                kept.append(position)
        ends.append(min(position, MAX_POSITION))
        position += 1
    held = {lexeme: tuple(at) for lexeme, at in positions.items()}
    return IndexedDocument(length, ends[0], ends[1], held)


def pair_id(first: str, second: str) -> int:
    """The term of two terms at adjacent positions in ``builtin_pair_postings``: the first
    eight bytes of the MD5 of ``first second``, as a signed 64-bit integer (migration 10
    computes the same in SQL: ``('x' || left(md5(a || ' ' || b), 16))::bit(64)::int8``).
    Two pairs would share one once in about 2^64 / (pairs in the store)^2."""
    digest = hashlib.md5(f"{first} {second}".encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def phrase_pair_ids(tokens: Sequence[str]) -> list[int]:
    """The pairs of the phrase ``tokens``, in order: the ``k``-th starts ``k`` positions after
    the phrase does (a phrase of one token has none)."""
    return [pair_id(a, b) for a, b in itertools.pairwise(tokens)]


def pair_starts(positions: Mapping[str, Sequence[int]]) -> dict[int, list[int]]:
    """Every two terms stored at adjacent positions of one document, by :func:`pair_id`: the
    positions where the pair starts, ascending (columns are one empty position apart, so no
    pair spans two)."""
    at = {p: lexeme for lexeme, held in positions.items() for p in held}
    starts: dict[int, list[int]] = {}
    for p in sorted(at):
        if p + 1 in at:
            starts.setdefault(pair_id(at[p], at[p + 1]), []).append(p)
    return starts


#: A packed position, as numpy reads it (two bytes, big-endian, signed: :func:`pack_positions`).
PACKED_POSITION = ">i2"


def pack_positions(positions: Sequence[int]) -> bytes:
    """A posting's positions as stored: two bytes each, big-endian (what PostgreSQL's
    ``int2send`` writes, so migration 8 packs a ``tsvector``'s positions the same way)."""
    return struct.pack(f">{len(positions)}h", *positions)


def unpack_positions(packed: bytes) -> tuple[int, ...]:
    """The positions :func:`pack_positions` stored."""
    return struct.unpack(f">{len(packed) // 2}h", packed)


def columns_of(
    positions: Mapping[str, Sequence[int]], text_end: int, summary_end: int
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The distinct terms of one document in each column (text, summary, context), from each
    term's positions: the text's run to ``text_end``, the summary's to ``summary_end``."""
    found: tuple[set[str], set[str], set[str]] = (set(), set(), set())
    for lexeme, at in positions.items():
        for position in at:
            column = 0 if position <= text_end else 1 if position <= summary_end else 2
            found[column].add(lexeme)
    return (frozenset(found[0]), frozenset(found[1]), frozenset(found[2]))


@dataclass(frozen=True, slots=True)
class Phrase:
    """One quoted phrase of a query, as its tokens."""

    text: str
    tokens: tuple[str, ...]


def phrases(raw: Sequence[str]) -> list[Phrase]:
    """The query's phrases, in order, as FTS5 scores them: two words with one stem ("dogs",
    "dog") are two phrases, each counted; a phrase with no token matches nothing but still
    counts in the coverage's sum of IDFs (as a phrase found nowhere)."""
    return [Phrase(text, tuple(tokens(text))) for text in dict.fromkeys(raw)]


def idf(total: int, containing: int) -> float:
    """FTS5's inverse document frequency, clamped to a small positive number as there."""
    return max(1e-6, math.log((total - containing + 0.5) / (containing + 0.5)))


def posting_frequency(main: int, context: int, context_weight: float) -> float:
    """A one-token phrase's weighted count in a document, from its posting's counts (FTS5's
    sum over columns: the text's and summary's positions weigh 1, then the context's
    ``context_weight`` each)."""
    return sum(
        itertools.chain(itertools.repeat(1.0, main), itertools.repeat(context_weight, context))
    )


def bm25_norm(doc_len: npt.NDArray[np.int64], avgdl: float) -> npt.NDArray[np.float64]:
    """BM25's length normalisation of each document (FTS5's), from their lengths. Element
    by element the same operations, in the same order, as FTS5's scalar formula."""
    if avgdl <= 0:
        return np.full(doc_len.shape, K1, dtype=np.float64)
    return np.asarray(K1 * (1 - B + B * doc_len / avgdl), dtype=np.float64)


def bm25_term(
    idf_: float, f: npt.NDArray[np.float64], norm: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """One phrase's share of FTS5's bm25() in documents finding it ``f`` times each (a
    document's score is the sum of these over the query's phrases)."""
    return idf_ * (f * (K1 + 1)) / (f + norm)
