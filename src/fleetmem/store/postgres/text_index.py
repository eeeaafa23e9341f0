"""The PostgreSQL store's text channel: FTS5's tokenizer and BM25, rebuilt over a tsvector.

PostgreSQL's own ranking (``ts_rank``) is not BM25: it ignores how rare a word is in the
store and how long a document is. So the store ranks as SQLite's FTS5 does, from parts
PostgreSQL keeps well:

- **Tokens.** Text is split and stemmed by FTS5's own ``porter unicode61`` tokenizer, run in
  an in-memory SQLite database of this process (the standard library's sqlite3, the same
  library the SQLite store indexes with): a query matches exactly the tokens FTS5 would
  match, and PostgreSQL's parser and dictionaries never touch the text.
- **Documents.** Each episode is one ``tsvector`` built from those tokens, with positions
  (so a phrase of several tokens matches only adjacent ones, as an FTS5 phrase) and a weight
  label per position naming its column: ``A`` the episode's text, ``B`` its summary, ``C`` its
  context (the neighbours' excerpts, weighted as in FTS5's bm25() call). Each term of it is
  also a row of ``builtin_postings`` (its positions counted per side:
  :attr:`IndexedDocument.counts`), which a query reads newest first; the ``tsvector`` gives
  a phrase's positions.
- **Statistics.** BM25 needs the store's document count, its average document length and
  each term's document count. ``builtin_totals`` and ``builtin_terms`` keep them exactly,
  updated in the same transaction as the index, with each term's count per column too (the
  SQLite store prunes and normalises by FTS5's per-column counts).
- **Score.** :func:`bm25` is FTS5's formula (k1 = 1.2, b = 0.75, its IDF clamped at 1e-6),
  computed here from the postings' counts (:func:`posting_frequency`) and, for a phrase of
  several tokens, from positions (:func:`frequency`), with the same arithmetic.

Known differences from FTS5 (docs/postgres.md measures them): a tsvector keeps positions
1 to 16,383 and at most 256 per term, so a term's frequency saturates in very long texts; the
IDF of a phrase of several tokens is taken from its rarest token's document count when that
token is common (an upper bound), and counted exactly otherwise.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: FTS5's bm25() parameters.
K1 = 1.2
B = 0.75
#: A tsvector holds positions 1..16383 and at most 256 positions per lexeme.
MAX_POSITION = 16_383
MAX_POSITIONS_PER_LEXEME = 256
#: The tsvector weight label of each column: text, summary, context.
COLUMNS = ("A", "B", "C")
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

    tsvector: str
    #: Tokens in every column, plus one for the scope (FTS5 counts its scope_key column).
    length: int
    #: The last position of the text, and of the summary (later ones are the context's).
    text_end: int
    summary_end: int
    #: Its distinct terms in each column: text, summary, context (``builtin_terms``' counts).
    columns: tuple[frozenset[str], frozenset[str], frozenset[str]]
    #: Each term's stored positions, counted: (in the text or summary, in the context). A
    #: posting of ``builtin_postings``; BM25 weighs the two as :func:`weighted` does.
    counts: Mapping[str, tuple[int, int]]

    @property
    def lexemes(self) -> frozenset[str]:
        return self.columns[0] | self.columns[1] | self.columns[2]


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def document(text: str, summary: str | None, context: str) -> IndexedDocument:
    """The tsvector literal of an episode's columns, each position labelled with its column
    (:data:`COLUMNS`); one empty position between columns so no phrase spans two of them.

    Terms past position :data:`MAX_POSITION` count in the length but are not stored (nor
    counted in ``builtin_terms``), so the statistics always describe what is stored."""
    positions: dict[str, list[str]] = {}
    counts: dict[str, list[int]] = {}
    length = 1
    position = 0
    seen: list[set[str]] = []
    ends: list[int] = []
    for column, weight in zip((text, summary or "", context), COLUMNS, strict=True):
        side = 1 if weight == COLUMNS[2] else 0  # the context's, or the text's and summary's
        found = tokens(column)
        length += len(found)
        stored: set[str] = set()
        for token in found:
            position += 1
            if position > MAX_POSITION:
                break
            stored.add(token)
            kept = positions.setdefault(token, [])
            if len(kept) < MAX_POSITIONS_PER_LEXEME:
                kept.append(f"{position}{weight}")
                counts.setdefault(token, [0, 0])[side] += 1
        seen.append(stored)
        ends.append(min(position, MAX_POSITION))
        position += 1
    literal = " ".join(f"{_quote(lex)}:{','.join(p)}" for lex, p in sorted(positions.items()))
    columns = (frozenset(seen[0]), frozenset(seen[1]), frozenset(seen[2]))
    held = {lexeme: (n[0], n[1]) for lexeme, n in counts.items()}
    return IndexedDocument(literal, length, ends[0], ends[1], columns, held)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One quoted phrase of a query, as its tokens."""

    text: str
    tokens: tuple[str, ...]

    def tsquery(self) -> str:
        if len(self.tokens) == 1:
            return _quote(self.tokens[0])
        return "(" + " <-> ".join(_quote(t) for t in self.tokens) + ")"


def phrases(raw: Sequence[str]) -> list[Phrase]:
    """The query's phrases, in order, as FTS5 scores them: two words with one stem ("dogs",
    "dog") are two phrases, each counted; a phrase with no token matches nothing but still
    counts in the coverage's sum of IDFs (as a phrase found nowhere)."""
    return [Phrase(text, tuple(tokens(text))) for text in dict.fromkeys(raw)]


def tsquery(kept: Iterable[Phrase]) -> str:
    return " | ".join(p.tsquery() for p in kept if p.tokens)


def idf(total: int, containing: int) -> float:
    """FTS5's inverse document frequency, clamped to a small positive number as there."""
    return max(1e-6, math.log((total - containing + 0.5) / (containing + 0.5)))


#: A lexeme's positions in one document: (position, column weight) pairs.
Postings = Mapping[str, Sequence[tuple[int, float]]]


def weighted(
    positions: Sequence[int], summary_end: int, context_weight: float
) -> list[tuple[int, float]]:
    """A lexeme's positions in one document, each with its column's weight (text and summary
    weigh 1, the context ``context_weight``, as in FTS5's bm25() call)."""
    return [(p, 1.0 if p <= summary_end else context_weight) for p in positions]


def frequency(phrase: Phrase, postings: Postings) -> float:
    """The phrase's weighted hit count in one document (FTS5: sum over columns of the
    column's weight times the phrase's hits in it)."""
    first = postings.get(phrase.tokens[0], ())
    if len(phrase.tokens) == 1:
        return sum(weight for _, weight in first)
    later = [{pos for pos, _ in postings.get(t, ())} for t in phrase.tokens[1:]]
    return sum(
        weight for pos, weight in first if all(pos + k + 1 in seen for k, seen in enumerate(later))
    )


def posting_frequency(main: int, context: int, context_weight: float) -> float:
    """A one-token phrase's :func:`frequency` from its posting's counts (the same sum: the
    text's and summary's positions weigh 1, then the context's ``context_weight`` each)."""
    return sum(
        itertools.chain(itertools.repeat(1.0, main), itertools.repeat(context_weight, context))
    )


def bm25_norm(doc_len: int, avgdl: float) -> float:
    """BM25's length normalisation of one document (FTS5's)."""
    return K1 * (1 - B + B * doc_len / avgdl) if avgdl > 0 else K1


def bm25_term(idf_: float, f: float, norm: float) -> float:
    """One phrase's share of :func:`bm25` in a document found ``f`` times there."""
    return idf_ * (f * (K1 + 1)) / (f + norm)


def bm25(
    kept: Sequence[Phrase],
    postings: Postings,
    doc_len: int,
    *,
    idfs: Sequence[float],
    avgdl: float,
) -> float:
    """FTS5's bm25() of one document (positive: higher is better)."""
    score = 0.0
    norm = bm25_norm(doc_len, avgdl)
    for phrase, weight in zip(kept, idfs, strict=True):
        if not phrase.tokens:
            continue
        f = frequency(phrase, postings)
        if f:
            score += bm25_term(weight, f, norm)
    return score
