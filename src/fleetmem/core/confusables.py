"""How a character may be read: the detection copy behind marker neutralisation (pure).

A fence marker is only dangerous if a reader can take some text for it, and readers (models
included) read ``＜/ｆáct›``, ``«/FACT»`` and ``</f\u2009a\u2009c\u2009t>`` as ``</fact>``.
So markers are looked for in what text *reads as*, not in what it is: :func:`reads_as` gives
each character the set of ASCII characters it may be taken for, after

- compatibility decomposition (NFKD: full-width, small, mathematical, circled and other
  compatibility forms become their plain letters) with every combining mark dropped, so an
  accent or an overlay on a delimiter or a letter does not hide it, and case folding;
- a table of confusables NFKD leaves alone: Latin look-alikes from Cyrillic, Greek, Armenian,
  Cherokee, IPA and small capitals (Latin alpha ``ɑ`` reads as ``a``), and look-alikes of the
  delimiters themselves (guillemets, angle brackets of CJK and mathematics, runes, syllabics,
  and slash, pipe, dash and square-bracket forms);
- every Unicode space (no-break, thin, hair, ideographic...) reads as a space.

A character may read as several letters (Greek ``ν`` as ``v`` or ``n``), so matching a name
asks, per position, whether the wanted letter is among them. :func:`is_ignorable` says which
characters a reader does not see at all between two others (combining marks, variation
selectors); invisible format characters are removed before this module is asked.

Only stdlib ``unicodedata``; results are cached per character.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

#: Characters that read as an opening angle bracket. NFKD folds the full-width and small forms
#: and ``≮`` (a test checks that every such character of the running Unicode tables is here).
LESS_THAN: Final = frozenset(
    "<\ufe64\uff1c\u226e"  # plain, small, full-width, not-less-than (NFKD '<' + overlay)
    "\u2039\u00ab"  # single and double guillemets
    "\u3008\u2329\u27e8\u27ea\u276c\u276e\u2770\u29fc\u2aa1\ufe3f\u300a"  # angle brackets
    "\u1438\u02c2\u02f1\u16b2\u227a\u22b2"  # syllabics, modifier letters, a rune, math
)
#: Characters that read as an opening square bracket.
SQUARE: Final = frozenset("[\uff3b\ufe47\u3010\u3014\u3016\u3018\u301a\u27e6\u2045\ufe5d\u23a1")
SLASHES: Final = frozenset("/\\\uff0f\uff3c\u2044\u2215\u29f8\u29f5\u2571\u2572\u27cb\u2f03\u30ce")
PIPES: Final = frozenset("|\uff5c\u2223\u01c0\u2502\u05c0\u23d0\u2758\u00a6\u0964\u16c1\ufe31")
DASHES: Final = frozenset(
    "-_\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\uff0d\uff3f\u02d7\u2796"
    "\u2e3a\u2e3b\u30fc\u4e00\u2500"
)

# Letters NFKD does not fold to the Latin letter they look like (lower case, as after folding).
_LETTERS: Final[dict[str, str]] = {
    # Latin IPA and small capitals
    "\u0251": "a", "\u0250": "a", "\u1d00": "a", "\u0261": "g", "\u0262": "g",
    "\u0269": "i", "\u026a": "i", "\u0131": "i", "\u0237": "j", "\u029f": "l",
    "\u1d04": "c", "\u1d05": "d", "\u1d07": "e", "\u025b": "e", "\ua730": "f",
    "\u029c": "h", "\u1d0a": "j", "\u1d0b": "k", "\u1d0d": "m", "\u0274": "n",
    "\u1d0f": "o", "\u1d18": "p", "\u0280": "r", "\ua731": "s", "\u1d1b": "t",
    "\u1d1c": "u", "\u1d20": "v", "\u1d21": "w", "\u028f": "y", "\u1d22": "z",
    # Cyrillic (upper case folds to these)
    "\u0430": "a", "\u0432": "b", "\u0441": "c", "\u0501": "d", "\u0435": "e",
    "\u0433": "r", "\u04bb": "h", "\u043d": "hn", "\u0456": "i", "\u04cf": "il",
    "\u04c0": "il", "\u0458": "j", "\u043a": "k", "\u043c": "m", "\u043e": "o",
    "\u0440": "p", "\u051b": "q", "\u0455": "s", "\u0442": "t", "\u0443": "y",
    "\u0445": "x", "\u051d": "w", "\u0451": "e", "\u0457": "i", "\u0491": "r",
    # Greek (upper case folds to these)
    "\u03b1": "a", "\u03b2": "b", "\u03f2": "c", "\u03b5": "e", "\u03b7": "hn",
    "\u03b9": "il", "\u03ba": "k", "\u03bc": "mu", "\u03bd": "nv", "\u03bf": "o",
    "\u03c1": "p", "\u03c4": "t", "\u03c5": "uy", "\u03c7": "x", "\u03b6": "z",
    "\u03c9": "w", "\u03f3": "j",
    # Armenian and Cherokee
    "\u0578": "n", "\u0585": "o", "\u057d": "u", "\u0570": "h", "\u0581": "g",
    "\u13a0": "d", "\u13a1": "r", "\u13a2": "t", "\u13a5": "i", "\u13a9": "y",
    "\u13aa": "a", "\u13ab": "j", "\u13ac": "e", "\u13b3": "w", "\u13b7": "m",
    "\u13bb": "h", "\u13bd": "y", "\u13c0": "g", "\u13c2": "h", "\u13c3": "z",
    "\u13cf": "b", "\u13d2": "r", "\u13da": "s", "\u13de": "l", "\u13df": "c",
    "\u13e2": "p", "\u13e6": "k", "\u13e7": "d", "\u13ee": "v", "\u13f4": "b",
}  # fmt: skip


def _delimiter(char: str) -> str:
    if char in LESS_THAN:
        return "<"
    if char in SQUARE:
        return "["
    if char in SLASHES:
        return "/"
    if char in PIPES:
        return "|"
    if char in DASHES:
        return "-"
    return ""


@functools.lru_cache(maxsize=8192)
def reads_as(char: str) -> frozenset[str]:
    """The ASCII characters ``char`` may be read as (lower case; a space for any space).

    Empty for a character that reads as nothing ASCII (most letters of other scripts).
    """
    if char.isascii():
        if char.isspace():
            return frozenset(" ")
        found = {char.lower()}
    else:
        found = set()
        if char.isspace() or unicodedata.category(char) == "Zs":
            found.add(" ")
        base = "".join(
            c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)
        )
        for form in (char, base, base.casefold(), char.casefold()):
            if len(form) == 1:
                if form.isascii():
                    found.add(" " if form.isspace() else form.lower())
                found.update(_LETTERS.get(form, ""))
                mark = _delimiter(form)
                if mark:
                    found.add(mark)
    mark = _delimiter(char)
    if mark:
        found.add(mark)
    return frozenset(found)


@functools.lru_cache(maxsize=4096)
def is_ignorable(char: str) -> bool:
    """True for a character a reader does not see between two others: a combining mark
    (accents, overlays, enclosing marks), a variation selector, or a format character
    (zero-width joiners and spaces, tag characters) where text keeps them."""
    if char.isascii():
        return False
    return unicodedata.combining(char) != 0 or unicodedata.category(char) in ("Mn", "Me", "Cf")


def reads(char: str, wanted: str) -> bool:
    """Whether ``char`` may be read as the ASCII character ``wanted``."""
    return wanted in reads_as(char)
