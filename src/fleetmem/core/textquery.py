"""Turning untrusted query text into a safe FTS5 MATCH expression.

User text never reaches FTS5 unquoted: every term is extracted as a run of word
characters and wrapped in double quotes, so operators (AND, NEAR, column filters, ``*``)
in the input are inert. Terms are OR-ed so recall is not lost to one missing word; BM25
already rewards documents that match more of them.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
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
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
