"""Turning untrusted query text into a safe FTS5 MATCH expression.

User text never reaches FTS5 unquoted: every term is extracted as a run of word
characters and wrapped in double quotes, so operators (AND, NEAR, column filters, ``*``)
in the input are inert. Terms are OR-ed so recall is not lost to one missing word; BM25
already rewards documents that match more of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"\w+", re.UNICODE)
#: One double-quoted FTS5 phrase, with doubled quotes inside.
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')
MAX_TERMS = 64

#: Words too common to help ranking; dropping them keeps OR-queries from matching everything.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "did",
        "does",
        "what's",
        "who's",
    ]
)


def terms(text: str) -> list[str]:
    """Distinct lower-cased content words of ``text`` in first-seen order."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        word = match.group(0)
        if word in STOPWORDS or word.strip("_") == "":
            continue
        seen.setdefault(word, None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def fts_match(text: str) -> str | None:
    """A quoted, OR-ed MATCH expression, or None when the text has no usable term."""
    words = terms(text)
    if not words:
        # A query of only stopwords still deserves an answer rather than nothing.
        words = list(dict.fromkeys(m.group(0) for m in _WORD.finditer(text.lower())))[:MAX_TERMS]
    return or_match(words)


def match_phrases(match: str) -> list[str]:
    """The phrases of a MATCH expression built by :func:`fts_match`, unquoted, in order.

    The store inspects a query's phrases (to look up how common each is) without being handed
    the raw user text again; only the quoted OR-list this module builds is understood.
    """
    return [p.replace('""', '"') for p in _PHRASE.findall(match)]


def or_match(phrases: list[str]) -> str | None:
    """A quoted, OR-ed MATCH expression over ``phrases`` (already extracted words)."""
    if not phrases:
        return None
    return " OR ".join('"' + p.replace('"', '""') + '"' for p in phrases)


def prune_common(
    doc_counts: Mapping[str, int], total_docs: int, *, share: float, floor: int
) -> list[str]:
    """The phrases worth scoring: those in at most ``max(floor, share * total_docs)`` documents.

    ``doc_counts`` maps each phrase of a query (in query order) to the number of documents it
    occurs in. An OR-query's cost grows with every document any of its phrases matches, while a
    phrase found in a large share of the documents adds almost nothing to BM25 (its inverse
    document frequency is near zero), so such phrases are dropped on large stores. ``floor``
    keeps small stores exact: nothing is pruned until a phrase is in more than ``floor``
    documents. Phrases found nowhere are dropped too (they cannot match). Never returns an
    empty list while some phrase occurs somewhere: the rarest one is kept.
    """
    cap = max(floor, int(share * total_docs))
    present = {p: n for p, n in doc_counts.items() if n > 0}
    kept = [p for p, n in present.items() if n <= cap]
    if kept or not present:
        return kept
    rarest = min(present.items(), key=lambda kv: kv[1])[0]
    return [rarest]
