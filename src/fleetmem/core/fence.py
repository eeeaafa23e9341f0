"""The nonce fence: how text fleetmem did not write is made safe to put in front of a model.

Pure: no clock, no randomness. The nonce is made by the caller (the service draws
``secrets.token_hex(16)``, 128 bits from the OS CSPRNG) and passed in.

Three things happen to every untrusted string before it is fenced (:func:`sanitize`):

1. Invisible characters go: C0/C1 controls except newline and tab, lone surrogates, every
   Unicode format character (zero-width spaces and joiners, bidi embeddings, overrides and
   isolates, tag characters), and letters that render as blank space (Hangul fillers, the
   blank braille pattern). Line and paragraph separators (U+2028, U+2029) become newlines,
   so "a line" means the same thing to every reader.
2. Look-alikes of fence markers are neutralised: an opening angle bracket (``<`` or any
   character that normalises to it under NFKC, such as the full-width and small forms, or a
   common homoglyph such as U+2039 or U+27E8) that starts a tag named like one of the
   markers in play (compared after NFKC, case folding, and folding of dash, slash and Latin
   look-alike letters) is replaced by ``&lt;``. So is one that starts a chat-template
   special token (``<|im_start|>``, ``<|user|>``...). Nothing else in the text changes.
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

from fleetmem.core.redact import strip_invisible

#: A nonce is 128 bits as 32 lower-case hex digits.
NONCE_PATTERN: Final = re.compile(r"[0-9a-f]{32}")

#: The tag name of the single-block fence.
BLOCK_TAG: Final = "untrusted-data"
#: The largest body the single-block fence carries (the briefing cap is the same number).
MAX_BLOCK_BYTES: Final = 4096

NEUTRALISED_ANGLE: Final = "&lt;"

# Letters that render as blank space although Unicode calls them letters (category Lo/So).
_BLANK_LETTERS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_BLANK_LETTERS_RE: Final = re.compile("[" + "".join(sorted(_BLANK_LETTERS)) + "]+")
_LINE_SEPARATORS_RE: Final = re.compile("[\u2028\u2029]")

# Opening angle brackets: everything that NFKC maps to '<' (a test checks this against the
# running interpreter's Unicode tables) plus homoglyphs that NFKC leaves alone.
_ANGLES: Final = frozenset(
    "<\ufe64\uff1c"  # '<', small and full-width forms (NFKC '<')
    "\u2039\u3008\u2329\u27e8\u276c\u276e\u1438\u02c2\u2aa1\u29fc"
)
_ANGLE_RE: Final = re.compile("[" + re.escape("".join(sorted(_ANGLES))) + "]")
_SLASHES: Final = frozenset("/\uff0f\u2044\u2215\u29f8\u2571")
_PIPES: Final = frozenset("|\uff5c\u2223\u01c0\u2502\u05c0\u23d0\u2758")

# Latin look-alike letters NFKC does not fold: Cyrillic, Greek, Armenian and small capitals.
_CONFUSABLE_LETTERS: Final[dict[str, str]] = {
    "\u0430": "a", "\u03b1": "a", "\u1d00": "a",
    "\u0441": "c", "\u03f2": "c", "\u1d04": "c",
    "\u0501": "d", "\u1d05": "d",
    "\u0435": "e", "\u03b5": "e", "\u1d07": "e",
    "\ua730": "f",
    "\u0456": "i", "\u03b9": "i", "\u0131": "i", "\u026a": "i", "\u04cf": "i",
    "\u04c0": "l", "\u029f": "l",
    "\u1d0d": "m",
    "\u0578": "n", "\u0274": "n",
    "\u043e": "o", "\u03bf": "o", "\u1d0f": "o", "\u0585": "o",
    "\u0440": "p", "\u03c1": "p", "\u1d18": "p",
    "\u0280": "r", "\u0433": "r",
    "\u0455": "s", "\ua731": "s",
    "\u03c4": "t", "\u1d1b": "t", "\u0442": "t",
    "\u057d": "u", "\u03c5": "u", "\u1d1c": "u",
    "\u0443": "y", "\u028f": "y",
}  # fmt: skip
_DASHES: Final = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\uff0d")
_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
# How far past an angle bracket a marker name may start (slash and spaces included).
_MAX_LOOKAHEAD: Final = 16


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
    return nonce in text or nonce in fold(text)


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


def _fold_char(char: str) -> str:
    if char in _DASHES:
        return "-"
    if char in _CONFUSABLE_LETTERS:
        return _CONFUSABLE_LETTERS[char]
    if char.isascii():
        return char.lower()
    return fold(char)


def _starts_marker(text: str, start: int, names: frozenset[str]) -> bool:
    """Does the tag opening at ``text[start]`` (an angle bracket) read as a marker?"""
    i = start + 1
    end = len(text)
    if i < end and text[i] in _PIPES:
        return True  # a chat-template special token such as <|im_start|>
    limit = min(end, start + 1 + _MAX_LOOKAHEAD)
    while i < limit and (text[i] in _SLASHES or text[i].isspace()):
        i += 1
    word: list[str] = []
    longest = max(len(name) for name in names)
    while i < end and len(word) <= longest:
        folded = _fold_char(text[i])
        if not folded or any(c not in _NAME_CHARS for c in folded):
            break
        word.append(folded)
        i += 1
    candidate = "".join(word).replace("_", "-")
    return any(candidate == name.replace("_", "-") for name in names)


@functools.lru_cache(maxsize=64)
def _wanted(names: frozenset[str]) -> frozenset[str]:
    return frozenset(n.lower() for n in names)


def neutralise_markers(text: str, names: Iterable[str]) -> str:
    """Step 2 of :func:`sanitize`: turn look-alike tag openers of ``names`` into ``&lt;``."""
    if _ANGLE_RE.search(text) is None:
        return text
    wanted = _wanted(names if isinstance(names, frozenset) else frozenset(names))
    if not wanted:
        return text
    hits = [m.start() for m in _ANGLE_RE.finditer(text) if _starts_marker(text, m.start(), wanted)]
    if not hits:
        return text
    pieces: list[str] = []
    cursor = 0
    for at in hits:
        pieces.append(text[cursor:at])
        pieces.append(NEUTRALISED_ANGLE)
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
    body: str, *, nonce: str, source: str = "fleetmem-memory", field: str = "briefing"
) -> str:
    """``body`` sanitised and fenced as one ``<untrusted-data>`` block (no trailing newline).

    Raises :class:`FenceError` when the sanitised body exceeds :data:`MAX_BLOCK_BYTES` (the
    block is refused rather than cut) and :class:`NonceCollision` when the nonce occurs in it.
    """
    check_nonce(nonce)
    for name, value in (("source", source), ("field", field)):
        if not _TOKEN.fullmatch(value):
            raise FenceError(f"{name} must match [a-z0-9][a-z0-9-]*")
    clean = sanitize(body, (BLOCK_TAG,))
    if len(clean.encode("utf-8")) > MAX_BLOCK_BYTES:
        raise FenceError(f"the body is larger than {MAX_BLOCK_BYTES} bytes")
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
