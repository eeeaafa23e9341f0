"""Duration strings: what parses, what is refused and why, and display round trips."""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetmem.core import durations
from fleetmem.core.durations import MAX_SECONDS, format_duration, parse_duration

DAY = 86_400


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("0s", 0.0),
        ("2s", 2.0),
        ("30m", 1_800.0),
        ("1h", 3_600.0),
        ("90d", 90 * DAY),
        ("2w", 14 * DAY),
        ("1y", 365 * DAY),
        ("10y", 3_650 * DAY),
        ("1h30m", 5_400.0),
        ("1d2h3m4s5ms", DAY + 2 * 3_600 + 3 * 60 + 4.005),
        ("100y", MAX_SECONDS),
        ("0500ms", 0.5),
    ],
)
def test_valid_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, abs=1e-9)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("-1h", "negative"),
        ("5", "missing unit"),
        ("5x", "unknown unit 'x'"),
        ("5H", "unknown unit 'H'"),
        ("5sec", "unknown unit 'sec'"),
        ("1.5h", "fractions"),
        ("1,5h", "fractions"),
        ("h", "expected a number"),
        ("+5s", "expected a number"),
        ("30m1h", "largest first"),
        ("1h1h", "largest first"),
        ("1 h", "whitespace"),
        (" 1h", "whitespace"),
        ("1h\n", "whitespace"),
        ("1h\t", "whitespace"),
        ("1\u00a0h", "whitespace"),  # no-break space
        ("\uff19\uff10d", "ASCII"),  # full-width 9 0
        ("\u0669\u0660d", "ASCII"),  # Arabic-Indic 9 0
        ("9\u200bd", "ASCII"),  # zero-width space
        ("\U0001d7d7d", "ASCII"),  # mathematical bold digit 9
        ("101y", "100 years"),
        ("36501d", "100 years"),
        ("9999999999999999s", "too large"),
        ("1h" * 40, "longer than"),
        ("1h\x00", "expected a number"),
    ],
)
def test_invalid_durations_say_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert reason in str(info.value)


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_duration(90)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.5, "500ms"),
        (2, "2s"),
        (5_400, "1h30m"),
        (90 * DAY, "90d"),
        (14 * DAY, "14d"),
        (DAY + 0.001, "1d1ms"),
        (0.0004, "0s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_format_rejects_negative_and_non_finite(bad: float) -> None:
    with pytest.raises(ValueError):
        format_duration(bad)


def test_format_rejects_non_numbers() -> None:
    with pytest.raises(TypeError):
        format_duration(True)


@given(st.integers(min_value=0, max_value=MAX_SECONDS * 1000))
def test_format_then_parse_round_trips_milliseconds(milliseconds: int) -> None:
    seconds = milliseconds / 1000
    assert round(parse_duration(format_duration(seconds)) * 1000) == milliseconds


@given(st.text(max_size=12))
def test_parse_either_succeeds_within_bounds_or_raises_value_error(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except ValueError:
        return
    assert 0 <= seconds <= MAX_SECONDS
    assert all("0" <= ch <= "9" or ch in "mshdwy" for ch in text)


def test_module_is_pure() -> None:
    tree = ast.parse(Path(durations.__file__).read_text(encoding="utf-8"))
    imported = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
    assert not imported & {"os", "time", "datetime", "random"}
