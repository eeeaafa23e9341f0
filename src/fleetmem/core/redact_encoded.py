"""Encoded and split forms of a secret: the runs of text the redactor decodes and rescans.

A secret can reach fleetmem wrapped so that no rule sees its shape: base64 (``echo ... |
base64``, a Kubernetes Secret, a docker config), URL-encoded (``ghp%5F...``), JSON- or
HTML-escaped (``\\u005f``, ``&#95;``), or cut in two (a backslash-newline continuation, a
quoted string concatenation). :func:`derived_runs` finds such runs and returns each with its
decoded text; :mod:`fleetmem.core.redact` scans the decoded texts together and replaces every
run whose decoded text holds a secret, whole (the encoded form of a secret is a secret).

Every pattern here is linear: each run is entered only at its start (a lookbehind refuses to
start inside a run), and every repeated part is possessive.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import NamedTuple

from fleetmem.core.scope import unquote


class DerivedRun(NamedTuple):
    """A span of the text and what it says once decoded or joined."""

    start: int
    end: int
    decoded: str
    kind: str  # "base64", "escaped" or "joined"


# --- base64 ---------------------------------------------------------------------------------

# No leading lookbehind (it would cost a step per position): finditer resumes after each run,
# so a run is only ever entered at its start, or within a shorter run that failed.
_B64_RUN_RE = re.compile(r"[A-Za-z0-9+/_-]{20,}+={0,2}", re.ASCII)
# A base64 block wrapped at a fixed width (76 for MIME, 64 for PEM, any width >= 40 here).
_B64_BLOCK_RE = re.compile(
    r"\n[\x20\t]*+[A-Za-z0-9+/]{40,160}+\r?\n"
    r"(?:[\x20\t]*+[A-Za-z0-9+/]{40,160}+\r?\n)*+[\x20\t]*+[A-Za-z0-9+/]{4,160}+={0,2}",
    re.ASCII,
)
_WHITESPACE_RE = re.compile(r"\s+", re.ASCII)
_MIN_DECODED = 12


def _b64_text(run: str) -> str | None:
    """The run decoded as base64 when that gives readable UTF-8 text, else None."""
    body = run.rstrip("=")
    urlsafe = "-" in body or "_" in body
    if urlsafe and ("+" in body or "/" in body):
        return None
    if len(body) % 4 == 1:
        body = body[:-1]
    body += "=" * (-len(body) % 4)
    try:
        data = base64.urlsafe_b64decode(body) if urlsafe else base64.b64decode(body, validate=True)
        decoded = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if len(decoded) < _MIN_DECODED:
        return None
    if not decoded.replace("\n", "").replace("\t", "").replace("\r", "").isprintable():
        return None
    return decoded


def _base64_runs(text: str) -> list[DerivedRun]:
    runs: list[DerivedRun] = []
    blocks: list[tuple[int, int]] = []
    if "\n" in text:
        # The block pattern starts at a newline (a literal `re` finds fast); one is put in
        # front so a block can open the text. Offsets shift back by one.
        for match in _B64_BLOCK_RE.finditer("\n" + text):
            block = match.group()
            decoded = _b64_text(_WHITESPACE_RE.sub("", block))
            if decoded is not None:
                start = match.start() - 1 + len(block) - len(block.lstrip())
                runs.append(DerivedRun(start, match.end() - 1, decoded, "base64"))
                blocks.append((start, match.end() - 1))
    block_index = 0
    seen: dict[str, str | None] = {}  # a run repeated in the text is decoded once
    for match in _B64_RUN_RE.finditer(text):
        start = match.start()
        while block_index < len(blocks) and blocks[block_index][1] <= start:
            block_index += 1
        if block_index < len(blocks) and blocks[block_index][0] <= start:
            continue  # one line of a block already decoded whole
        run = match.group()
        if run in seen:
            decoded = seen[run]
        else:
            decoded = seen[run] = _b64_text(run) if _could_be_text(run) else None
        if decoded is not None:
            runs.append(DerivedRun(start, match.end(), decoded, "base64"))
    return runs


# The first character of each 4-character group carries the top six bits of a byte; for ASCII
# text (below 0x80) that is one of these 32. Testing it first skips the decoding of random
# tokens and long identifiers, nearly all of which fail it.
_ASCII_HEADS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


def _could_be_text(run: str) -> bool:
    heads = run[::4]
    # Most heads, not all: UTF-8 text may hold a few non-ASCII characters.
    return sum(map(_ASCII_HEADS.__contains__, heads)) >= 0.9 * len(heads)


# --- escapes: %xx, \uXXXX, \xXX, \/, &#NN; and &#xHH; ----------------------------------------

_CH = r"A-Za-z0-9._~+/=:@$!*-"
_ESC = (
    r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|\\/"
    r"|&\#[0-9]{1,7};|&\#[xX][0-9A-Fa-f]{1,6};"
)
_ESCAPED_RUN_RE = re.compile(rf"(?<![{_CH}])[{_CH}]*+(?:{_ESC})(?:[{_CH}]|{_ESC})*+", re.ASCII)
_BACKSLASH_ESC_RE = re.compile(
    r"\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|\\(/)|&\#([0-9]{1,7});|&\#[xX]([0-9A-Fa-f]{1,6});",
    re.ASCII,
)


def _unescape_one(match: re.Match[str]) -> str:
    u, x, slash, dec, hexa = match.groups()
    if slash is not None:
        return "/"
    code = int(u or x or hexa, 16) if dec is None else int(dec)
    return chr(code) if code <= 0x10FFFF else ""


def _unescape(run: str) -> str:
    if "\\" in run or "&" in run:
        run = _BACKSLASH_ESC_RE.sub(_unescape_one, run)
    if "%" in run:
        run = unquote(run, errors="replace")
    return run


def _escaped_runs(text: str) -> list[DerivedRun]:
    if "%" not in text and "\\" not in text and "&#" not in text:
        return []
    return [
        DerivedRun(m.start(), m.end(), _unescape(m.group()), "escaped")
        for m in _ESCAPED_RUN_RE.finditer(text)
    ]


# --- a value cut in pieces ------------------------------------------------------------------

# Backslash-newline continuations, and adjacent quoted strings ("abc" "def", 'abc' + 'def',
# one per line inside parentheses) whose concatenation is the value.
_JOIN = r"""\\\r?\n[\x20\t]*+|["'][\x20\t]*+\+?[\x20\t]*+(?:\\?\r?\n[\x20\t]*+)?\+?[\x20\t]*+["']"""
_JOINED_RUN_RE = re.compile(rf"(?<![{_CH}])[{_CH}]{{4,}}+(?:(?:{_JOIN})[{_CH}]{{2,}}+)+", re.ASCII)
_JOIN_RE = re.compile(_JOIN, re.ASCII)


def _joined_runs(text: str) -> list[DerivedRun]:
    if "\\\n" not in text and "\\\r\n" not in text and '"' not in text and "'" not in text:
        return []
    return [
        DerivedRun(m.start(), m.end(), _JOIN_RE.sub("", m.group()), "joined")
        for m in _JOINED_RUN_RE.finditer(text)
    ]


def derived_runs(text: str) -> list[DerivedRun]:
    """Every run of ``text`` that decodes (base64, escapes) or joins into other text."""
    return _base64_runs(text) + _escaped_runs(text) + _joined_runs(text)
