"""The one redactor: every string fleetmem stores, summarizes or sends to a provider passes here.

Two steps, always in this order:

1. :func:`strip_invisible` removes control characters (except ``\\n`` and ``\\t``), lone
   surrogates and every Unicode format character (category ``Cf``: zero-width spaces and
   joiners, bidi overrides and isolates, the BOM, tag characters...). This runs first so that
   a secret split by an invisible character (``gh\\u200bp_...``) is whole again before the
   rules look at it, and so that nothing stored can visually disguise its own content.
2. A fixed table of rules (:mod:`fleetmem.core.redact_rules`) finds secret spans; overlapping
   or touching spans are merged and each merged span becomes ``[REDACTED]``. For assignments,
   URLs and headers only the value is replaced, so ``password=[REDACTED]`` still says *what*
   was there.
3. Runs that decode or join into other text (base64, ``%xx``, ``\\uXXXX``, HTML entities,
   backslash-newline continuations, adjacent quoted strings; see
   :mod:`fleetmem.core.redact_encoded`) are decoded, scanned together with the same table
   (two levels deep), and each run whose decoded text holds a secret is replaced whole.

Design constraints, because hostile text is an expected input (agents paste logs, dumps and
whole files):

* Pure: standard library only, no I/O, no clock, no randomness.
* Never raises. Internal failure yields a fully masked result instead of the input, because
  failing open would store the secret.
* Linear-ish time. Every rule starts with a literal (boundaries are checked after the match,
  so `re` keeps its fast prefix search), each rule runs only if a cheap substring prefilter
  says it could match, runs of characters that end a pattern are left unbounded (nothing
  follows them, so nothing can backtrack into them; and a bound would leak the tail of a
  megabyte-long token), runs that something must follow are either bounded, possessive, or
  preceded by a boundary so that one run is scanned once.
* The rules are our own, written from the published formats of each token type, in the spirit
  of public rule sets such as gitleaks' but not copied from them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from fleetmem.core.redact_encoded import derived_runs
from fleetmem.core.redact_rules import BASE64_RULE, REDACTED, RULE_NAMES, RULES

__all__ = ["REDACTED", "find_secrets", "redact", "redact_value", "strip_invisible"]

# Name reported by find_secrets when the redactor itself failed. Callers use find_secrets to
# refuse writes; an empty list after an internal error would wave a secret through.
_ERROR_RULE = "redactor_error"

# Beyond this nesting depth (or on a reference cycle) redact_value masks the whole container:
# failing closed is the only safe answer when we cannot look inside.
_MAX_DEPTH = 200

# ---------------------------------------------------------------------------------------------
# Step 1: invisible characters
# ---------------------------------------------------------------------------------------------

# C0 controls except \t (0x09) and \n (0x0A); DEL; C1 controls. \r goes too: a bare carriage
# return can overwrite what a terminal shows, and CRLF -> LF loses nothing we need.
_CONTROL_RANGES: tuple[tuple[int, int], ...] = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F))

# Lone surrogates are not characters; they make UTF-8 encoding (SQLite, JSON, HTTP) raise later.
_SURROGATE_RANGES: tuple[tuple[int, int], ...] = ((0xD800, 0xDFFF),)

# Every code point of general category Cf, written out rather than computed from unicodedata at
# import time (scanning 1.1M code points costs ~100 ms per process start). This is the Unicode
# 14 set (Python 3.11) plus the Egyptian hieroglyph format controls that Unicode 15 added at
# U+13439-U+1343F; a test checks that the running interpreter's Cf set is covered.
_FORMAT_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x0600, 0x0605),  # Arabic number signs
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),  # Mongolian vowel separator (zero-width)
    (0x200B, 0x200F),  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates, deprecated format characters
    (0xFEFF, 0xFEFF),  # BOM / zero-width no-break space
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters (used to smuggle invisible ASCII)
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    # \UXXXXXXXX escapes keep surrogates and invisibles out of this source file.
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


#: Every range of code points :func:`strip_invisible` removes, surrogates aside (they never
#: reach it from valid JSON or UTF-8), for rules stated elsewhere (the OpenAPI document).
VISIBLE_EXCEPT: tuple[tuple[int, int], ...] = _CONTROL_RANGES + _FORMAT_RANGES

_INVISIBLE_RE = re.compile(
    "[" + _char_class(_CONTROL_RANGES + _SURROGATE_RANGES + _FORMAT_RANGES) + "]+"
)
# Pure-ASCII text (the common case) can only hold C0 controls and DEL; a small class is a
# bitmap test per character and about twice as fast as the full class above.
_ASCII_INVISIBLE_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")


def strip_invisible(text: str) -> str:
    """Remove invisible and control characters, keeping ``\\n`` and ``\\t``.

    Removed: C0/C1 controls other than tab and newline (so ``\\r`` too), lone surrogates, the
    zero-width characters U+200B-U+200D, U+2060, U+FEFF, U+180E, the bidi controls U+200E,
    U+200F, U+202A-U+202E, U+2066-U+2069, U+061C, and every other Unicode ``Cf`` character.
    """
    if not isinstance(text, str):
        text = str(text)
    if text.isascii():
        return _ASCII_INVISIBLE_RE.sub("", text)
    return _INVISIBLE_RE.sub("", text)


# ---------------------------------------------------------------------------------------------
# Step 2: the rules of :mod:`fleetmem.core.redact_rules`, merged
# ---------------------------------------------------------------------------------------------


# A span found in the text: start, end, the rule's name, and whether the rule is specific.
_Found = tuple[int, int, str, bool]

# Each rule with the character sets of its triggers, and the length from which they are used.
_RULE_TRIGGERS = tuple((rule, tuple(frozenset(t) for t in rule.triggers)) for rule in RULES)
_CHARSET_MIN = 2048

# Encoded forms are decoded and rescanned this many levels deep (base64 of a URL-encoded key
# is two levels); deeper nesting is left to the rules of the outer levels.
_MAX_DECODE_DEPTH = 2
# Joins the decoded runs into one text scanned once; no rule matches across it.
_RUN_SEPARATOR = "\n\x1e\n"


def _find(text: str, depth: int) -> list[_Found]:
    """Every secret span of ``text`` (already stripped of invisibles), unmerged."""
    lowered = text.lower()
    aligned = lowered if len(lowered) == len(text) else None
    found: list[_Found] = []
    # On long texts, first rule out the triggers that hold a character the text lacks: one
    # pass to collect the characters saves most of ~150 substring searches on texts made of
    # few characters (the hostile ones), and costs little on the rest.
    present = frozenset(lowered) if len(lowered) >= _CHARSET_MIN else None
    for rule, trigger_chars in _RULE_TRIGGERS:
        if present is None:
            if not any(trigger in lowered for trigger in rule.triggers):
                continue
        elif not any(
            chars <= present and trigger in lowered
            for trigger, chars in zip(rule.triggers, trigger_chars, strict=True)
        ):
            continue
        if rule.labelled is not None:
            found += rule.labelled(text, aligned)
        elif rule.find is not None:
            found.extend((s, e, rule.name, rule.specific) for s, e in rule.find(text, aligned))
    if depth < _MAX_DECODE_DEPTH:
        found.extend(_find_encoded(text, depth))
    return found


def _find_encoded(text: str, depth: int) -> list[_Found]:
    """Spans of the encoded or split runs whose decoded text holds a secret, each whole."""
    runs = derived_runs(text)
    if not runs:
        return []
    # Each distinct decoded text is scanned once, however often it occurs (hostile input
    # repeats one run thousands of times; real text rarely repeats one at all).
    by_text: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_text.setdefault(run.decoded, []).append(index)
    texts = list(by_text)
    offsets: list[int] = []
    cursor = 0
    for decoded in texts:
        offsets.append(cursor)
        cursor += len(decoded) + len(_RUN_SEPARATOR)
    inner = _find(_RUN_SEPARATOR.join(texts), depth + 1)
    found: list[_Found] = []
    for start, end, name, _specific in inner:
        first = bisect.bisect_right(offsets, start) - 1
        last = bisect.bisect_right(offsets, max(start, end - 1)) - 1
        for text_index in range(max(first, 0), last + 1):
            for index in by_text[texts[text_index]]:
                run = runs[index]
                label = BASE64_RULE if run.kind == "base64" else name
                found.append((run.start, run.end, label, True))
    return found


def _scan(text: str) -> tuple[str, list[str]]:
    """Redact ``text`` (already stripped of invisibles); return it and the rule names that fired."""
    spans = _find(text, 0)
    if not spans:
        return text, []
    spans.sort()

    pieces: list[str] = []
    names: list[str] = []
    cursor = 0
    i = 0
    count = len(spans)
    while i < count:
        start, end, name, specific = spans[i]
        i += 1
        if start < cursor:  # a span inside the previous merged span's reach
            start = cursor
        if i == count or spans[i][0] > end:
            # Alone: the common case, kept apart because a dense text has thousands.
            pieces.append(text[cursor:start])
            pieces.append(REDACTED)
            cursor = end
            if name not in names:
                names.append(name)
            continue
        fired = [(not specific, i - 1, name)]
        # Merge overlapping and touching spans: one secret matched by two rules, or a value
        # glued to a token, becomes a single [REDACTED].
        while i < count and spans[i][0] <= end:
            end = max(end, spans[i][1])
            fired.append((not spans[i][3], i, spans[i][2]))
            i += 1
        pieces.append(text[cursor:start])
        pieces.append(REDACTED)
        cursor = end
        fired.sort(key=lambda f: (f[0], _ORDER.get(f[2], len(_ORDER))))
        for rule_name in [f[2] for f in fired if not f[0]] or [fired[0][2]]:
            if rule_name not in names:
                names.append(rule_name)
    pieces.append(text[cursor:])
    return "".join(pieces), names


_ORDER = {name: index for index, name in enumerate(RULE_NAMES)}


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def redact(text: str) -> str:
    """Strip control chars (keep \\n and \\t), zero-width and bidi format characters, then
    replace every secret with [REDACTED].

    Never raises: a non-str is converted with ``str(value)`` first, and any internal error
    returns ``[REDACTED]`` (the whole input masked) rather than the input.
    """
    try:
        if not isinstance(text, str):
            text = str(text)
        return _scan(strip_invisible(text))[0]
    except Exception:
        return REDACTED


def find_secrets(text: str) -> list[str]:
    """Names of the rules that match (e.g. ``["github_token", "aws_access_key_id"]``).

    De-duplicated, in order of first match in the text. Never contains the secret value, so
    the result can be logged or put in an error message. When one span is matched both by a
    token rule and by a context rule (``api_key=sk-...``), only the token rule is named.
    Never raises: on an internal error the result is ``["redactor_error"]``, never ``[]``.
    """
    try:
        if not isinstance(text, str):
            text = str(text)
        return _scan(strip_invisible(text))[1]
    except Exception:
        return [_ERROR_RULE]


def redact_value(value: object) -> object:
    """Recursively redact every str inside dicts/lists/tuples (keys of dicts too), leaving
    other scalars alone.

    Sets and frozensets are walked as well; named tuples keep their type, other containers
    come back as the plain built-in type. A reference cycle or nesting deeper than 200 levels
    is replaced by ``[REDACTED]`` (fail closed). Two dict keys that redact to the same string
    collapse into one entry (the later value wins).
    """
    return _redact_value(value, 0, set())


def _redact_value(value: object, depth: int, active: set[int]) -> object:
    if isinstance(value, str):
        return redact(value)
    if not isinstance(value, dict | list | tuple | set | frozenset):
        return value
    if depth >= _MAX_DEPTH or id(value) in active:
        return REDACTED
    active.add(id(value))
    try:
        deeper = depth + 1
        if isinstance(value, dict):
            return {
                _redact_value(k, deeper, active): _redact_value(v, deeper, active)
                for k, v in value.items()
            }
        items = [_redact_value(item, deeper, active) for item in value]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            if hasattr(value, "_fields"):  # a named tuple: keep the type and field names
                factory: Callable[..., object] = type(value)
                try:
                    return factory(*items)
                except Exception:
                    return tuple(items)
            return tuple(items)
        if isinstance(value, frozenset):
            return frozenset(items)
        return set(items)
    finally:
        active.discard(id(value))
