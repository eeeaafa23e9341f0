"""The nonce fence: how text fleetmem did not write is made safe to put in front of a model.

Pure: no clock, no randomness. The nonce is made by the caller (the service draws
``secrets.token_hex(16)``, 128 bits from the OS CSPRNG) and passed in.

Three things happen to every untrusted string before it is fenced (:func:`sanitize`):

1. Invisible characters go: C0/C1 controls except newline and tab, lone surrogates, every
   Unicode format character (zero-width spaces and joiners, bidi embeddings, overrides and
   isolates, tag characters), and letters that render as blank space (Hangul fillers, the
   blank braille pattern). Line and paragraph separators (U+2028, U+2029) become newlines,
   so "a line" means the same thing to every reader.
2. Look-alikes of fence markers are neutralised. Markers are looked for in what the text
   *reads as* (:mod:`fleetmem.core.confusables`): after compatibility decomposition with
   combining marks dropped, case folding, a table of confusable letters (Cyrillic, Greek,
   Latin alpha, small capitals...) and of delimiter look-alikes (guillemets, full-width and
   CJK brackets, slash, pipe and dash forms), with any kind of space allowed around the
   bracket, the slash and between spaced-out letters. An opening angle bracket look-alike
   that starts a tag named like a marker in play, or a chat-template special token
   (``<|im_start|>``), becomes ``&lt;``; a square-bracket look-alike that starts a closing
   one (``[/fact``) becomes ``&#91;``. Nothing else in the text changes.
3. The nonce must not occur in the result, compared after NFKC and case folding (so
   full-width digits do not count as different). If it does, :class:`NonceCollision` is
   raised and the caller draws a fresh nonce; with a CSPRNG nonce this only happens when
   someone guessed it.

Sanitising is idempotent: ``sanitize(sanitize(s)) == sanitize(s)``.

This module also renders the single-block fence used to prepend a briefing to a one-shot
prompt::

    <untrusted-data source="fleetmem-memory" field="briefing" nonce="N">
    BODY
    </untrusted-data nonce="N">
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from fleetmem.core import confusables
from fleetmem.core.redact import strip_invisible

#: A nonce is 128 bits as 32 lower-case hex digits.
NONCE_PATTERN: Final = re.compile(r"[0-9a-f]{32}")

#: The tag name of the single-block fence.
BLOCK_TAG: Final = "untrusted-data"
#: The tag name of the context's reference-data fence (:mod:`fleetmem.core.context`).
REFERENCE_TAG: Final = "reference-data"
#: The largest body the single-block fence carries (the briefing cap is the same number).
MAX_BLOCK_BYTES: Final = 4096

NEUTRALISED_ANGLE: Final = "&lt;"
#: What an opening square-bracket look-alike of a closing marker (``[/fact``) becomes.
NEUTRALISED_SQUARE: Final = "&#91;"

# Letters that render as blank space although Unicode calls them letters (category Lo/So).
_BLANK_LETTERS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_BLANK_LETTERS_RE: Final = re.compile("[" + "".join(sorted(_BLANK_LETTERS)) + "]+")
_LINE_SEPARATORS_RE: Final = re.compile("[\u2028\u2029]")
#: Bidirectional embeddings, overrides, isolates and marks: they make text display in another
#: order than it reads (Trojan Source), and nothing fleetmem shows needs them.
BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_BIDI_RE: Final = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "]")

# The delimiter families of :mod:`fleetmem.core.confusables` (names kept for the tests).
_ANGLES: Final = confusables.LESS_THAN
_SQUARES: Final = confusables.SQUARE
_SLASHES: Final = confusables.SLASHES
_PIPES: Final = confusables.PIPES
_OPENER_RE: Final = re.compile("[" + re.escape("".join(sorted(_ANGLES | _SQUARES))) + "]")
_ANGLE_RE: Final = re.compile("[" + re.escape("".join(sorted(_ANGLES))) + "]")


class FenceError(ValueError):
    """A fence cannot be rendered or parsed as given (bad nonce, body too large, bad block)."""


class NonceCollision(FenceError):
    """The nonce occurs in the content; draw a fresh one and render again."""

    def __init__(self) -> None:
        super().__init__("the nonce occurs in the content; render again with a fresh nonce")


def check_nonce(nonce: str) -> str:
    """Return ``nonce`` if it is 32 lower-case hex digits (128 bits), else raise FenceError."""
    if not isinstance(nonce, str) or not NONCE_PATTERN.fullmatch(nonce):
        raise FenceError("a nonce must be 32 lower-case hex digits (128 bits)")
    return nonce


def fold(text: str) -> str:
    """NFKC and case folding: the form in which two strings that read alike compare equal."""
    return unicodedata.normalize("NFKC", text).casefold()


def contains_nonce(text: str, nonce: str) -> bool:
    """True when ``nonce`` occurs in ``text``, also in full-width or other NFKC forms."""
    if text.isascii():
        return nonce in text.lower()
    if nonce in text:
        return True
    folded = fold(text)
    if nonce in folded:
        return True
    # Combining marks between the digits (0\u0301123...) do not hide them from a reader either.
    return nonce in "".join(c for c in folded if not confusables.is_ignorable(c))


def ensure_absent(nonce: str, texts: Iterable[str]) -> None:
    """Raise :class:`NonceCollision` when ``nonce`` occurs in any of ``texts``."""
    for text in texts:
        if contains_nonce(text, nonce):
            raise NonceCollision()


def strip_unseen(text: str) -> str:
    """Step 1 of :func:`sanitize`: drop invisible characters, make line separators newlines."""
    text = strip_invisible(text)
    if text.isascii():
        return text
    text = _BLANK_LETTERS_RE.sub("", text)
    return _LINE_SEPARATORS_RE.sub("\n", text)


def strip_bidi(text: str) -> str:
    """``text`` without :data:`BIDI_CONTROLS` (everything else, zero-width joiners of emoji
    sequences included, is kept)."""
    return text if text.isascii() else _BIDI_RE.sub("", text)


def _skip(text: str, i: int, *, spaces: bool) -> int:
    """The first index from ``i`` that is not an ignorable mark (nor a space, if asked)."""
    end = len(text)
    while i < end and (
        confusables.is_ignorable(text[i]) or (spaces and confusables.reads(text[i], " "))
    ):
        i += 1
    return i


def _is_name_char(char: str) -> bool:
    return char.isalnum() or any(c.isalnum() or c in "-_" for c in confusables.reads_as(char))


def _name_at(text: str, i: int, name: str) -> bool:
    """Does ``text`` from ``i`` read as ``name`` followed by something that ends a name?

    A dash in the name may be written as up to three dash, underscore or space look-alikes,
    or nothing; letters may be spaced out by one space each; marks on them are not seen.
    """
    end = len(text)
    first = True
    for letter in name:
        j = _skip(text, i, spaces=False)
        if letter in "-_":
            # Up to three dashes, underscores or spaces (of any look), or none.
            for _ in range(3):
                j = _skip(text, i, spaces=False)
                if j < end and (confusables.reads(text[j], "-") or confusables.reads(text[j], " ")):
                    i = j + 1
                else:
                    break
            continue
        if not first and j < end and confusables.reads(text[j], " "):
            spaced = _skip(text, j + 1, spaces=False)
            if spaced < end and confusables.reads(text[spaced], letter):
                j = spaced
        if j >= end or not confusables.reads(text[j], letter):
            return False
        i, first = j + 1, False
    j = _skip(text, i, spaces=False)
    return j >= end or not _is_name_char(text[j])


def _starts_marker(text: str, start: int, names: frozenset[str]) -> bool:
    """Does the bracket look-alike at ``text[start]`` open something that reads as a marker?

    Angle brackets: ``<name``, ``</name`` and chat-template tokens ``<|``. Square brackets
    only in the closing form ``[/name``, since ``[facts]`` is a TOML table, not a fence.
    Spaces of any kind and combining marks may pad the bracket, the slash and the name.
    """
    angle = text[start] in _ANGLES
    i = _skip(text, start + 1, spaces=True)
    end = len(text)
    if i >= end:
        return False
    seen = confusables.reads_as(text[i])
    if angle and "|" in seen:
        return True  # a chat-template special token such as <|im_start|>
    if "/" in seen:
        i = _skip(text, i + 1, spaces=True)
        if i >= end:
            return False
        seen = confusables.reads_as(text[i])
    elif not angle:
        return False
    # Only names whose first letter this character may be read as (cheap on "<<<<...").
    if seen.isdisjoint(_initials(names)):
        return False
    return any(name[0] in seen and _name_at(text, i, name) for name in names)


@functools.lru_cache(maxsize=64)
def _initials(names: frozenset[str]) -> frozenset[str]:
    return frozenset(name[0] for name in names)


@functools.lru_cache(maxsize=64)
def _wanted(names: frozenset[str]) -> frozenset[str]:
    return frozenset(n.lower().replace("_", "-") for n in names)


@functools.lru_cache(maxsize=64)
def _ascii_markers(names: frozenset[str]) -> re.Pattern[str]:
    """:func:`_starts_marker` for ASCII text as one regular expression (the same rules:
    spaces around the slash, a spaced-out name, dashes as ``-``, ``_`` or spaces)."""

    def name_pattern(name: str) -> str:
        parts: list[str] = []
        for index, char in enumerate(name):
            if char in "-_":
                parts.append(r"[-_\s]{0,3}")
            else:
                if index and name[index - 1] not in "-_":
                    parts.append(r"\s?")
                parts.append(re.escape(char))
        return "".join(parts)

    alternatives = "|".join(name_pattern(n) for n in sorted(names, key=len, reverse=True))
    named = rf"(?:{alternatives})(?![A-Za-z0-9_-])"
    return re.compile(
        rf"<(?=\s*(?:\||[/\\]?\s*{named}))|\[(?=\s*[/\\]\s*{named})",
        re.IGNORECASE | re.ASCII,
    )


def neutralise_markers(text: str, names: Iterable[str]) -> str:
    """Step 2 of :func:`sanitize`: turn every look-alike opener of a ``names`` marker into
    ``&lt;`` (an angle bracket) or ``&#91;`` (a square one); the rest of the text is kept."""
    if _OPENER_RE.search(text) is None:
        return text
    wanted = _wanted(names if isinstance(names, frozenset) else frozenset(names))
    if not wanted:
        return text
    if text.isascii():
        hits = [m.start() for m in _ascii_markers(wanted).finditer(text)]
    else:
        hits = [
            m.start() for m in _OPENER_RE.finditer(text) if _starts_marker(text, m.start(), wanted)
        ]
    if not hits:
        return text
    pieces: list[str] = []
    cursor = 0
    for at in hits:
        pieces.append(text[cursor:at])
        pieces.append(NEUTRALISED_ANGLE if text[at] in _ANGLES else NEUTRALISED_SQUARE)
        cursor = at + 1
    pieces.append(text[cursor:])
    return "".join(pieces)


def sanitize(text: str, marker_names: Iterable[str]) -> str:
    """Invisible characters removed and look-alikes of ``marker_names`` tags neutralised."""
    return neutralise_markers(strip_unseen(text), marker_names)


# --------------------------------------------------------------------------- single block

_TOKEN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_BLOCK_OPEN = re.compile(
    r'<untrusted-data source="(?P<source>[a-z0-9-]+)" field="(?P<field>[a-z0-9-]+)"'
    r' nonce="(?P<nonce>[0-9a-f]{32})">\n'
)


@dataclass(frozen=True, slots=True)
class Block:
    """A parsed single-block fence."""

    source: str
    field: str
    nonce: str
    body: str


def fence_block(
    body: str,
    *,
    nonce: str,
    source: str = "fleetmem-memory",
    field: str = "briefing",
    max_bytes: int | None = MAX_BLOCK_BYTES,
    marker_names: Iterable[str] = (BLOCK_TAG,),
) -> str:
    """``body`` sanitised and fenced as one ``<untrusted-data>`` block (no trailing newline).

    Look-alikes of ``marker_names`` (always including the block's own tag) are neutralised.
    Raises :class:`FenceError` when the sanitised body exceeds ``max_bytes`` (the block is
    refused rather than cut; None: no cap, for a caller whose bodies are bounded elsewhere)
    and :class:`NonceCollision` when the nonce occurs in it.
    """
    check_nonce(nonce)
    for name, value in (("source", source), ("field", field)):
        if not _TOKEN.fullmatch(value):
            raise FenceError(f"{name} must match [a-z0-9][a-z0-9-]*")
    clean = sanitize(body, frozenset((BLOCK_TAG, *marker_names)))
    if max_bytes is not None and len(clean.encode("utf-8")) > max_bytes:
        raise FenceError(f"the body is larger than {max_bytes} bytes")
    ensure_absent(nonce, (clean,))
    return (
        f'<{BLOCK_TAG} source="{source}" field="{field}" nonce="{nonce}">\n'
        f"{clean}\n"
        f'</{BLOCK_TAG} nonce="{nonce}">'
    )


def parse_block(text: str) -> tuple[Block, str]:
    """Read a block at the start of ``text``; return it and what follows its closing line."""
    opened = _BLOCK_OPEN.match(text)
    if opened is None:
        raise FenceError("no <untrusted-data> block at the start of the text")
    nonce = opened.group("nonce")
    closing = f'\n</{BLOCK_TAG} nonce="{nonce}">'
    # The body cannot contain the nonce, so the first closing line with it is the real one.
    end = text.find(closing, opened.end())
    if end == -1:
        raise FenceError("the block has no closing line with its nonce")
    body = text[opened.end() : end]
    block = Block(opened.group("source"), opened.group("field"), nonce, body)
    return block, text[end + len(closing) :]


def prepend_briefing(briefing: str, prompt: str, *, nonce: str) -> str:
    """The REQ-16 prompt: the fenced briefing, a blank line, then ``prompt`` byte for byte.

    An empty briefing prepends nothing and returns ``prompt`` unchanged.
    """
    if not briefing:
        return prompt
    return fence_block(briefing, nonce=nonce) + "\n\n" + prompt
