"""The PostgreSQL store's text channel: FTS5's tokenizer and BM25, rebuilt over a tsvector.

PostgreSQL's own ranking (``ts_rank``) is not BM25: it ignores how rare a word is in the
store and how long a document is. So the store ranks as SQLite's FTS5 does, from parts
PostgreSQL keeps well:

- **Tokens.** Text is split as FTS5's ``unicode61`` tokenizer splits it (runs of letters and
  digits, lower-cased, diacritics removed) and each token is stemmed by the original Porter
  algorithm (``porter``, as FTS5's porter tokenizer; tokens shorter than 3 characters or
  longer than 64 are kept whole, as there). Both the documents and the queries go through
  :func:`tokens`, so PostgreSQL's parser and dictionaries never touch them: a query matches
  exactly the tokens FTS5 would match.
- **Documents.** Each episode is one ``tsvector`` built from those tokens, with positions
  (so a phrase of several tokens matches only adjacent ones, as an FTS5 phrase) and a weight
  label per position naming its column: ``A`` the episode's text, ``B`` its summary, ``C`` its
  context (the neighbours' excerpts, weighted as in FTS5's bm25() call). A GIN index finds
  the matching rows.
- **Statistics.** BM25 needs the store's document count, its average document length and
  each term's document count. ``builtin_totals`` and ``builtin_terms`` keep them exactly,
  updated in the same transaction as the index, with each term's count per column too (the
  SQLite store prunes and normalises by FTS5's per-column counts).
- **Score.** :func:`bm25` is FTS5's formula (k1 = 1.2, b = 0.75, its IDF clamped at 1e-6),
  computed here over the matching rows' positions of the query's terms.

Known differences from FTS5 (docs/postgres.md measures them): a tsvector keeps positions
1 to 16,383 and at most 256 per term, so a term's frequency saturates in very long texts; the
IDF of a phrase of several tokens is taken from its rarest token's document count when that
token is common (an upper bound), and counted exactly otherwise; Python's Unicode tables and
Porter implementation may split or stem a rare word differently from SQLite's.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

#: FTS5's bm25() parameters.
K1 = 1.2
B = 0.75
#: A tsvector holds positions 1..16383 and at most 256 positions per lexeme.
MAX_POSITION = 16_383
MAX_POSITIONS_PER_LEXEME = 256
#: FTS5's porter tokenizer leaves shorter and longer tokens as they are.
STEM_MIN = 3
STEM_MAX = 64

#: The tsvector weight label of each column: text, summary, context.
COLUMNS = ("A", "B", "C")

_TOKEN = re.compile(r"[^\W_]+")
_local = threading.local()


def _stemmer() -> snowballstemmer.stemmer:
    found: snowballstemmer.stemmer | None = getattr(_local, "stemmer", None)
    if found is None:
        found = snowballstemmer.stemmer("porter")
        _local.stemmer = found
    return found


@lru_cache(maxsize=100_000)
def _stem(token: str) -> str:
    if len(token) < STEM_MIN or len(token.encode("utf-8")) > STEM_MAX:
        return token
    return str(_stemmer().stemWord(token))


def _fold(text: str) -> str:
    """Lower case without diacritics (unicode61's ``remove_diacritics``)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFD", lowered)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    )


def tokens(text: str) -> list[str]:
    """The stemmed tokens of ``text``, in order, as FTS5's ``porter unicode61`` yields them."""
    return [_stem(m.group(0)) for m in _TOKEN.finditer(_fold(text))]


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """One episode as the text index stores it."""

    tsvector: str
    #: Tokens in every column, plus one for the scope (FTS5 counts its scope_key column).
    length: int
    #: Its distinct terms in each column: text, summary, context (``builtin_terms``' counts).
    columns: tuple[frozenset[str], frozenset[str], frozenset[str]]

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
    length = 1
    position = 0
    seen: list[set[str]] = []
    for column, weight in zip((text, summary or "", context), COLUMNS, strict=True):
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
        seen.append(stored)
        position += 1
    literal = " ".join(f"{_quote(lex)}:{','.join(p)}" for lex, p in sorted(positions.items()))
    columns = (frozenset(seen[0]), frozenset(seen[1]), frozenset(seen[2]))
    return IndexedDocument(literal, length, columns)


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
    """The query's phrases that hold at least one token, in order, without repeats."""
    out: dict[tuple[str, ...], Phrase] = {}
    for text in raw:
        toks = tuple(tokens(text))
        if toks and toks not in out:
            out[toks] = Phrase(text, toks)
    return list(out.values())


def tsquery(kept: Iterable[Phrase]) -> str:
    return " | ".join(p.tsquery() for p in kept)


def idf(total: int, containing: int) -> float:
    """FTS5's inverse document frequency, clamped to a small positive number as there."""
    return max(1e-6, math.log((total - containing + 0.5) / (containing + 0.5)))


#: A lexeme's positions in one document: (position, column weight) pairs.
Postings = Mapping[str, Sequence[tuple[int, float]]]


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
    norm = K1 * (1 - B + B * doc_len / avgdl) if avgdl > 0 else K1
    for phrase, weight in zip(kept, idfs, strict=True):
        f = frequency(phrase, postings)
        if f:
            score += weight * (f * (K1 + 1)) / (f + norm)
    return score
