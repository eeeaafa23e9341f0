"""Duration strings such as ``"500ms"``, ``"90d"`` or ``"1h30m"``: parsing and display.

Pure: standard library only, no clock, no environment.

Grammar: one or more ``<digits><unit>`` parts with no separators, units largest first and
each at most once. Digits are ASCII ``0-9`` only (``str.isdigit`` would also accept full-width
and Arabic-Indic digits, which is how a value that looks right is read as something else).
Units: ``ms``, ``s``, ``m`` (minutes), ``h``, ``d``, ``w`` (7 days), ``y`` (365 days).
Whole numbers only: ``"1500ms"``, not ``"1.5s"``. Durations are never negative and never
longer than 100 years.
"""

from __future__ import annotations

import math
from typing import Final

_MS_PER_UNIT: Final[dict[str, int]] = {
    "y": 365 * 86_400_000,
    "w": 7 * 86_400_000,
    "d": 86_400_000,
    "h": 3_600_000,
    "m": 60_000,
    "s": 1_000,
    "ms": 1,
}
_RANK: Final[dict[str, int]] = {unit: rank for rank, unit in enumerate(_MS_PER_UNIT)}
# Units used for display: days are the largest, so "90d" shows as "90d", not "12w6d".
_DISPLAY_UNITS: Final = ("d", "h", "m", "s", "ms")

MAX_SECONDS: Final = 100 * 365 * 86_400
_MAX_TEXT = 64
_MAX_DIGITS = 15


def _is_ascii_digit(char: str) -> bool:
    return "0" <= char <= "9"


def _is_ascii_letter(char: str) -> bool:
    return "a" <= char <= "z" or "A" <= char <= "Z"


def parse_duration(text: str) -> float:
    """Return the number of seconds ``text`` denotes.

    Raises ``ValueError`` whose message is a short reason ("unknown unit 'x'", ...).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__}")
    if not text:
        raise ValueError("empty duration")
    if len(text) > _MAX_TEXT:
        raise ValueError(f"longer than {_MAX_TEXT} characters")
    if text.startswith("-"):
        raise ValueError("negative durations are not allowed")
    if any(char.isspace() for char in text):
        raise ValueError("whitespace is not allowed")
    if not text.isascii():
        raise ValueError("only ASCII digits 0-9 and units are allowed")

    total_ms = 0
    last_rank = -1
    position = 0
    while position < len(text):
        digits_end = position
        while digits_end < len(text) and _is_ascii_digit(text[digits_end]):
            digits_end += 1
        if digits_end == position:
            raise ValueError(f"expected a number at {text[position:]!r}")
        digits = text[position:digits_end]
        if len(digits) > _MAX_DIGITS:
            raise ValueError("number too large")
        unit_end = digits_end
        while unit_end < len(text) and _is_ascii_letter(text[unit_end]):
            unit_end += 1
        unit = text[digits_end:unit_end]
        if not unit:
            if digits_end < len(text) and text[digits_end] in ".,":
                raise ValueError("fractions are not allowed; use a smaller unit, e.g. 1500ms")
            raise ValueError(f"missing unit after {digits} (use ms, s, m, h, d, w or y)")
        if unit not in _MS_PER_UNIT:
            raise ValueError(f"unknown unit {unit!r} (use ms, s, m, h, d, w or y)")
        rank = _RANK[unit]
        if rank <= last_rank:
            raise ValueError("each unit at most once, largest first (e.g. 1h30m)")
        last_rank = rank
        total_ms += int(digits) * _MS_PER_UNIT[unit]
        position = unit_end

    seconds = total_ms / 1000
    if seconds > MAX_SECONDS:
        raise ValueError("longer than 100 years")
    return seconds


def format_duration(seconds: float) -> str:
    """Render ``seconds`` for display, e.g. ``5400.0`` as ``"1h30m"``; rounds to milliseconds.

    The result parses back with ``parse_duration`` to the same number of milliseconds
    (for values up to 100 years).
    """
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"expected a number of seconds, got {type(seconds).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a displayable duration: {seconds!r}")
    remaining = round(seconds * 1000)
    if remaining == 0:
        return "0s"
    parts: list[str] = []
    for unit in _DISPLAY_UNITS:
        count, remaining = divmod(remaining, _MS_PER_UNIT[unit])
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
