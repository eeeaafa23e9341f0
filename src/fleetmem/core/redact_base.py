"""Building blocks shared by the redactor's rule modules.

A :class:`Rule` is a name, the literals that must occur for it to run, and a finder that
yields the spans of secrets in a text. The helpers here compile patterns the way every rule
module needs them (ASCII semantics, case folding on a lowercased copy) and turn a pattern
into a finder. They hold no rules themselves: tokens live in :mod:`redact_tokens`, secrets
known by their context in :mod:`redact_context`, and the table that orders them in
:mod:`redact_rules`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fleetmem.core.lazy_pattern import LazyPattern

#: What a secret is replaced by. A value that already starts with it was redacted before and
#: is not reported again (redacting twice changes nothing).
REDACTED: str = "[REDACTED]"

Span = tuple[int, int]
# A finder gets the text and, when lowercasing kept every character at its index (true unless
# the text holds one of the few characters whose lowercase is longer, like U+0130), the
# lowercased text; case-insensitive rules search the latter with a case-sensitive pattern,
# which is several times faster in `re` than IGNORECASE.
Finder = Callable[[str, str | None], Iterator[Span]]
# A labelled finder gives each span with its rule's name and whether that rule is specific.
LabelledFinder = Callable[[str, str | None], list[tuple[int, int, str, bool]]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret.

    ``triggers`` are lowercase literals of which at least one must occur in the lowercased text
    for the rule to run at all (a C-speed substring test that makes most rules free on most
    text); the empty string means "always run". ``specific`` rules identify a token by its
    own shape; the others (assignments, headers, URLs) identify it by context, and
    find_secrets prefers the specific name when both fire on the same span.
    """

    name: str
    triggers: tuple[str, ...]
    find: Finder | None = None
    specific: bool = True
    #: A finder that names each span itself, for one pass that serves several names.
    labelled: LabelledFinder | None = None


QUOTE_CHARS = "\"'`"
# Characters that at least one key/value rule accepts inside a value but a human puts after
# one: a sentence-ending dot stays outside the redaction.
_TRAILING = "."

_UPPER_OR_DIGIT = re.compile(r"[A-Z0-9]", re.ASCII)
_DIGIT = re.compile(r"[0-9]", re.ASCII)

# Boundary used before short prefixes so that "risk-", "task-" or a base64 blob do not start a
# match in the middle of a word, and so a failing run is entered only once, at its start.
# Every boundary also treats "]" (left) and "[" (right) as word characters: once a neighbour
# has become [REDACTED], a second pass must see the same boundary the first pass saw, or
# redact(redact(x)) would differ from redact(x).
B = r"(?<![A-Za-z0-9\]])"
#: The characters of :data:`B`, for :func:`regex_finder`'s ``left`` check.
B_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789]"
# The matching right boundary for fixed-length tokens.
E = r"(?![A-Za-z0-9\[])"


def looks_random(value: str) -> bool:
    """Real keys mix case or carry digits; "sk-learn-style-kebab-case-words" does neither."""
    return _UPPER_OR_DIGIT.search(value) is not None


def has_digit(value: str) -> bool:
    """True when ``value`` holds an ASCII digit."""
    return _DIGIT.search(value) is not None


def shannon_bits(value: str) -> float:
    """Shannon entropy of the character distribution of ``value``, in bits per character."""
    if not value:
        return 0.0
    total = len(value)
    # H = log2(n) - sum(c * log2(c)) / n: one log per distinct character, no division in the
    # loop; str.count per distinct character beats a Counter on the short values seen here.
    weighted = sum(c * math.log2(c) for c in map(value.count, set(value)) if c > 1)
    return max(0.0, math.log2(total) - weighted / total)


# Values that are references to a secret, not the secret: ${VAR}, $(cmd), {{ var }}, {% %},
# <%= %>, %(name)s, $VAR, <placeholder>. Matched against the text at the value's start, since
# an unquoted value stops at the "{" or "(" that opens the reference.
PLACEHOLDER_OPEN_RE = re.compile(r"\$\{|\$\(|\{\{|\{%|<%|%\(", re.ASCII)
_PLACEHOLDER_WHOLE_RE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*\Z|<[^<>\n]*>\Z", re.ASCII)
# A mask someone typed instead of the value: ****, xxxxxxxx, ..., ####, or "xxx-xxxx".
_MASK_RE = re.compile(r"[xX*.#_-]{3,}\Z|\.\.\.\Z|…\Z", re.ASCII)


#: Every first character of a value :func:`is_placeholder` accepts: a cheap test before it.
PLACEHOLDER_START = "${<%xX*.#_-\u2026"


def is_placeholder(value: str) -> bool:
    """True for a reference to a secret (``${X}``, ``<token>``, ``$X``) or a typed mask."""
    return (
        PLACEHOLDER_OPEN_RE.match(value) is not None
        or _PLACEHOLDER_WHOLE_RE.match(value) is not None
        or _MASK_RE.match(value) is not None
    )


def trim_end(text: str, start: int, end: int) -> int:
    """Move ``end`` left past a sentence-ending dot that closed the value."""
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return end


def regex_finder(
    pattern: LazyPattern | tuple[LazyPattern, LazyPattern],
    groups: tuple[str, ...] = ("s",),
    check: Callable[[str], bool] | None = None,
    overlapping: bool = False,
    left: str = "",
    from_group: str | None = None,
) -> Finder:
    """A finder yielding the span of the first participating group of ``groups`` per match.

    ``pattern`` is one case-sensitive pattern run on the text, or a pair from :func:`rx_folded`
    run on the lowercased text (falling back to the IGNORECASE twin on the original text).
    Spans always index the original text, and ``check`` sees the original characters.

    ``overlapping`` resumes the search one character after each match start instead of after
    its end. It is for rules whose run swallows the start of a glued neighbour's prefix but
    stops at the prefix's separator ("ghp_<36>ghp_<36>": the first run ends at the second
    "_", which would leave the second token's body visible). Only safe when the run cannot
    contain the whole prefix, otherwise every position of a long run would rescan it.

    ``left`` lists characters that must not stand right before the match. Checked here rather
    than by a leading lookbehind, because a pattern that starts with a lookbehind loses the
    literal-prefix search of `re` and costs a step at every position of the text.

    ``from_group`` makes each span run from that group's start to the match's end: for a
    token whose head is a class ("32 hex digits, then -us1"), written to open with the
    literal that follows the head and to read the head in a lookbehind holding the group, so
    `re` finds the literal by its fast search instead of trying the class at every position.
    """
    refused = frozenset(left)

    def matches(subject: str, lazy: LazyPattern) -> Iterator[re.Match[str]]:
        compiled = lazy.compiled
        if not overlapping and not refused:
            yield from compiled.finditer(subject)
            return
        pos = 0
        while (match := compiled.search(subject, pos)) is not None:
            start = match.start()
            if refused and start > 0 and subject[start - 1] in refused:
                # Refused: look again from the next position, since a real token may start
                # inside what this attempt took.
                pos = start + 1
                continue
            yield match
            pos = start + 1 if overlapping else max(match.end(), start + 1)

    def find(text: str, lowered: str | None) -> Iterator[Span]:
        if isinstance(pattern, tuple):
            folded, ignorecase = pattern
            subject, compiled = (text, ignorecase) if lowered is None else (lowered, folded)
        else:
            subject, compiled = text, pattern
        for match in matches(subject, compiled):
            if from_group is not None:
                start, end = match.start(from_group), match.end()
            else:
                for group in groups:
                    start, end = match.span(group)
                    if start >= 0:
                        break
                else:
                    continue
            end = trim_end(text, start, end)
            if end <= start:
                continue
            if check is not None and not check(text[start:end]):
                continue
            yield start, end

    return find


def rx(pattern: str, flags: int = 0) -> LazyPattern:
    """Compile with ASCII and VERBOSE semantics, on first use (:class:`LazyPattern`).

    re.ASCII everywhere: \\s, \\b and IGNORECASE then mean exactly what the prefilter (ASCII
    lowercase literals) assumes; under Unicode folding "ſ" would match "s" and the prefilter
    could skip a rule the regex would have fired.
    """
    return LazyPattern(pattern, flags | re.ASCII | re.VERBOSE)


def rx_folded(pattern: str) -> tuple[LazyPattern, LazyPattern]:
    """A case-insensitive rule written in lowercase: (for lowered text, IGNORECASE twin).
    The twin is compiled only if a text ever needs it (see :data:`Finder`)."""
    return rx(pattern), rx(pattern, re.IGNORECASE)


_HEX = re.compile(r"[0-9a-fA-F]+\Z", re.ASCII)
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/=_.~:@!$%^*-]+\Z", re.ASCII)
# Letter runs of four or more: a capital and three lower-case letters or more (camelCase), four
# lower-case letters or more, or (for values with no lower case) four capitals or more.
_LONG_WORD_RUNS = re.compile(r"[A-Z][a-z]{3,}|[a-z]{4,}", re.ASCII)
_LONG_UPPER_RUNS = re.compile(r"[A-Z]{4,}", re.ASCII)
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z", re.ASCII)


#: The shortest value :func:`random_value` can accept.
RANDOM_VALUE_MIN = 16


_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANTS_4 = re.compile(r"[b-df-hj-np-tv-xz]{4}", re.ASCII | re.IGNORECASE)


def _wordlike(run: str) -> bool:
    return not _VOWELS.isdisjoint(run) and _CONSONANTS_4.search(run) is None


def random_value(value: str) -> bool:
    """True for a value shaped like a key: long, one token, high entropy, not words or a name."""
    if len(value) < RANDOM_VALUE_MIN or _TOKEN_CHARS.match(value) is None:
        return False
    # Every placeholder and mask starts with one of these; the test spares three regexes on
    # the values that matter (this runs once per assignment of a dense hostile text).
    if value[0] in PLACEHOLDER_START and is_placeholder(value):
        return False
    if "://" in value or value[0] in "/~.":
        return False
    if "." in value and _DOTTED_NAME.match(value) is not None:
        return False
    if _HEX.match(value):
        return len(value) >= 20 and _bits_at_least(value, 3.0)
    # Words (snake_case, camelCase, UPPER_CASE with a number or two) put most characters in
    # letter runs of four or more; random text puts about one in five there, rarely half.
    # Upper-case runs count as words only in a value with no lower case (CONSTANT_NAMES):
    # in mixed-case random text they are as common as lower-case ones.
    has_lower = value.upper() != value  # the value is ASCII (_TOKEN_CHARS)
    runs = _LONG_WORD_RUNS if has_lower else _LONG_UPPER_RUNS
    # A run with no vowel or four consonants in a row is not a word: random letters make
    # those about as often as not, names rarely ("csrf" and "ngth" aside). Without this, one
    # random 24-character value in 300 read as words and was kept.
    worded = sum(len(run) for run in runs.findall(value) if _wordlike(run))
    if worded >= 0.65 * len(value):
        return False
    if not has_digit(value):
        # No digit: only a long mixed-case run passes (snake_case names have one case).
        mixed = has_lower and value.lower() != value
        return mixed and len(value) >= 20 and shannon_bits(value) >= 3.8
    return _bits_at_least(value, 3.2)


def _bits_at_least(value: str, floor: float) -> bool:
    """``shannon_bits(value) >= floor`` for floors up to 3.2, skipping the sum when it must be.

    With d distinct characters among n, d >= 12 and d >= 3n/4, the entropy is lowest when
    d - 1 characters occur once and one takes the rest; that is about 3.27 bits at n = 16 and
    more for longer values, so the floor holds without computing it.
    """
    distinct = len(set(value))
    if floor <= 3.2 and distinct >= 12 and 4 * distinct >= 3 * len(value):
        return True
    return shannon_bits(value) >= floor
