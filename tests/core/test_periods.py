"""Days and months a query names, and which start times they hold."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetmem.core.periods import MAX_PERIODS, Period, named_periods


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did Maria do on 31 July, 2023?", [Period(7, 31, 2023)]),
        ("Who came to dinner on May 3, 2023?", [Period(5, 3, 2023)]),
        ("the 3rd of May 2023", [Period(5, 3, 2023)]),
        ("which runs failed on 2026-11-03", [Period(11, 3, 2026)]),
        ("runs of 2026-11", [Period(11, None, 2026)]),
        ("Where did Joanna travel to in July 2022?", [Period(7, None, 2022)]),
        ("When did Melanie go camping in June?", [Period(6)]),
        ("What happened on Aug 15th?", [Period(8, 15)]),
        ("Sept 2023 and Mar 3", [Period(9, None, 2023), Period(3, 3)]),
        ("between August 11 and August 15 2023", [Period(8, 11), Period(8, 15, 2023)]),
        ("What did they plan in May?", [Period(5)]),
        ("early May", [Period(5)]),
        ("Caroline May leave", []),  # "May" with no cue word right before it
        ("mid May", [Period(5)]),
        ("May I ask what broke?", []),  # the verb
        ("the tests 3 may fail", []),  # the verb after a number
        ("march on", [Period(3)]),  # a full month name counts; the caller's words decide
        ("marching band", []),
        ("jan 2025", [Period(1, None, 2025)]),
        ("mar alone", []),  # a short form needs a day or a year
        ("on 31 February", []),  # impossible: dropped, not read as "February"
        ("29 February", [Period(2, 29)]),
        ("in 2023", []),  # a year alone is too wide to favour anything
        ("May 3, 2023 and again May 3, 2023", [Period(5, 3, 2023)]),
        ("", []),
        ("at 10:30 on the 5th", []),
    ],
)
def test_periods_named_in_text(text: str, expected: list[Period]) -> None:
    assert list(named_periods(text)) == expected


def test_a_list_of_dates_is_cut_to_the_first_few() -> None:
    text = " ".join(f"{d} June 2024" for d in range(1, 20))
    assert len(named_periods(text)) == MAX_PERIODS


def _at(stamp: str) -> float:
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("period", "stamp", "holds"),
    [
        (Period(7, 31, 2023), "2023-07-31T09:12:00", True),
        (Period(7, 31, 2023), "2023-08-01T05:00:00", True),  # a day's slack for time zones
        (Period(7, 31, 2023), "2023-07-30T23:00:00", True),
        (Period(7, 31, 2023), "2023-08-02T00:00:00", False),
        (Period(7, 31, 2023), "2022-07-31T09:00:00", False),
        (Period(7, 31), "2022-07-31T09:00:00", True),  # no year: any year
        (Period(7, None, 2023), "2023-07-15T00:00:00", True),
        (Period(7, None, 2023), "2023-06-30T12:00:00", True),
        (Period(7, None, 2023), "2023-06-29T12:00:00", False),
        (Period(12), "2025-01-01T03:00:00", True),  # 31 December, give or take a day
        (Period(2, 29), "2024-02-29T10:00:00", True),
    ],
)
def test_a_period_holds_start_times_within_a_day_of_it(
    period: Period, stamp: str, holds: bool
) -> None:
    assert period.contains(_at(stamp)) is holds


def test_a_period_cues_only_when_it_splits_the_candidates() -> None:
    from datetime import UTC, datetime

    from fleetmem.core.periods import named_periods, splits

    may3 = datetime(2026, 5, 3, 12, tzinfo=UTC).timestamp()
    june = datetime(2026, 6, 20, 12, tzinfo=UTC).timestamp()
    periods = named_periods("what broke on 3 May 2026?")
    assert splits(periods, [may3, june])
    assert not splits(periods, [may3, may3 + 60])  # every candidate is in it
    assert not splits(periods, [june])  # none is
    assert not splits((), [may3, june])
