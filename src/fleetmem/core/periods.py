"""Calendar periods a query names: "on 3 May 2023", "in July", "2026-11-03".

Recall uses them to favour episodes started in the period a question asks about. BM25 cannot
do it: "31 July, 2023" shares no term with a run started at 2023-07-31T09:12Z, and a sentence
embedder does not compare dates. Only explicit dates and months count; relative phrases
("last week") depend on when the question was asked and are left alone.

A period without a year ("in June", "March 3") matches that month or day in any year: the
question names no year, so any is as likely as the current one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
#: Short forms count only next to a day or a year ("Mar 3", "Sept 2023"): alone, "mar" and
#: "jan" are too often something else.
_SHORT = {m[:3]: i for i, m in enumerate(MONTHS, 1)} | {"sept": 9}
_FULL = {m: i for i, m in enumerate(MONTHS, 1)}
#: Words after which a bare "May" is the month, not the verb ("in May", "early May").
_MAY_CUES = frozenset(
    ["in", "during", "since", "until", "till", "by", "of", "early", "mid", "late", "last", "next"]
)
#: A period matches a start time up to a day either side: the question's day is the asker's
#: local day, a run's start time is UTC.
TOLERANCE = timedelta(days=1)
#: More named periods than this is a list of dates, not a question about one period.
MAX_PERIODS = 8

_MONTH_WORD = (
    r"(?P<{g}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
    r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{g}>(?:19|20)\d\d)"
_ISO_DAY = re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)(?!\d)")
_ISO_MONTH = re.compile(r"(?<![\d-])(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)(?![\d-])")
# "3 May 2023", "3rd of May, 2023", "3 May"
_DAY_MONTH = re.compile(
    rf"\b{_DAY.format(g='d')}\s+(?:of\s+)?{_MONTH_WORD.format(g='m')}\b"
    rf"(?:,?\s+{_YEAR.format(g='y')})?\b",
    re.IGNORECASE,
)
# "May 3, 2023", "May 3rd", "May 2023", "May"
_MONTH_FIRST = re.compile(
    rf"\b{_MONTH_WORD.format(g='m')}\b(?:\.?\s+{_DAY.format(g='d')}(?![\d:]))?"
    rf"(?:,?\s+{_YEAR.format(g='y')})?\b",
    re.IGNORECASE,
)
_WORD_BEFORE = re.compile(r"(\w+)\W*$")


@dataclass(frozen=True, slots=True)
class Period:
    """One named day or month; ``year`` None means any year, ``day`` None the whole month."""

    month: int
    day: int | None = None
    year: int | None = None

    def contains(self, started_at: float) -> bool:
        """Whether a start time (epoch seconds) falls in the period, give or take a day."""
        moment = datetime.fromtimestamp(started_at, UTC).date()
        slack = TOLERANCE.days
        return any(
            self._holds(moment + timedelta(days=shift)) for shift in range(-slack, slack + 1)
        )

    def _holds(self, day: date) -> bool:
        if self.year is not None and day.year != self.year:
            return False
        if day.month != self.month:
            return False
        return self.day is None or day.day == self.day


def named_periods(text: str) -> tuple[Period, ...]:
    """The days and months ``text`` names, in order of appearance, without repeats.

    Impossible dates ("31 February") are dropped rather than guessed at.
    """
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for m in _ISO_DAY.finditer(text):
        _add(found, taken, m.span(), int(m["m"]), int(m["d"]), int(m["y"]))
    for m in _ISO_MONTH.finditer(text):
        if free(m.span()):
            _add(found, taken, m.span(), int(m["m"]), None, int(m["y"]))
    for m in _DAY_MONTH.finditer(text):
        # "3 may fail" is a verb; the month is written "May" or comes with a year.
        verb = m["m"].lower() == "may" and m["m"][0] != "M" and not m["y"]
        if free(m.span()) and not verb:
            year = int(m["y"]) if m["y"] else None
            _add(found, taken, m.span(), _month(m["m"]), int(m["d"]), year)
    for m in _MONTH_FIRST.finditer(text):
        if not free(m.span()):
            continue
        word = m["m"].lower()
        day = int(m["d"]) if m["d"] else None
        year = int(m["y"]) if m["y"] else None
        if day is None and year is None and not _bare_month(word, m["m"], text[: m.start()]):
            continue
        _add(found, taken, m.span(), _month(word), day, year)
    ordered = [p for _, p in sorted(found, key=lambda item: item[0])]
    return tuple(dict.fromkeys(ordered))[:MAX_PERIODS]


def _month(word: str) -> int:
    word = word.lower()
    return _FULL.get(word) or _SHORT[word[:4] if word.startswith("sept") else word[:3]]


def _bare_month(word: str, written: str, before: str) -> bool:
    """Whether a month name with no day or year beside it is meant as the month."""
    if word not in _FULL:
        return False  # "mar", "jan": only with a day or year
    if word != "may":
        return True
    # Only the word right before matters; a short tail keeps the search linear in the text.
    previous = _WORD_BEFORE.search(before[-32:])
    return written[0] == "M" and previous is not None and previous[1].lower() in _MAY_CUES


def _add(
    found: list[tuple[int, Period]],
    taken: list[tuple[int, int]],
    span: tuple[int, int],
    month: int,
    day: int | None,
    year: int | None,
) -> None:
    # The span is taken even when the date is impossible, so "31 February" is not read
    # again as plain "February".
    taken.append(span)
    if not 1 <= month <= 12:
        return
    if day is not None:
        try:
            # A leap year stands in when none is given, so "29 February" stays possible.
            date(year if year is not None else 2024, month, day)
        except ValueError:
            return
    found.append((span[0], Period(month=month, day=day, year=year)))


def splits(periods: Sequence[Period], started: Sequence[float]) -> bool:
    """Whether ``periods`` single out some of the start times ``started``, but not all.

    A period every candidate falls in (one day's conversation asked "on 3 May"), or none
    does, tells the candidates nothing apart; a cue built on it would lift all or none alike,
    only shifting scores against the other channels.
    """
    inside = sum(1 for s in started if any(p.contains(s) for p in periods))
    return 0 < inside < len(started)
