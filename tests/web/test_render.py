"""The pages' formatting rules, with no browser: ages, bars, and the marked text of a chip,
which must be exactly what "ask an agent" sends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.core.budget import render_marked, truncate_authored
from fleetmem.surfaces.web.render import age, marked, num, pct_class, plural
from fleetmem.tokenize import get_tokenizer


def test_age_reads_like_the_seed() -> None:
    now = 1_000_000.0
    assert age(now - 5, now) == "just now"
    assert age(now - 60, now) == "1 minute ago"
    assert age(now - 3 * 3600, now) == "3 hours ago"
    assert age(now - 3 * 86_400, now) == "3 days ago"
    assert age(now - 8 * 86_400, now) == "1 week ago"
    assert age(now - 400 * 86_400, now) == "1 year ago"
    assert age(None, now) == "never"


def test_bars_are_classes_and_numbers_have_separators() -> None:
    assert pct_class(0, 100) == "pct-0"
    assert pct_class(0.001, 1) == "pct-1"  # anything above zero shows
    assert pct_class(340, 1500) == "pct-23"
    assert pct_class(4100, 1500) == "pct-100"
    assert pct_class(5, 0) == "pct-0"
    assert num(10412) == "10,412" and num(None) == "—" and num(2.5) == "2.5"
    assert plural(1, "run") == "1 run" and plural(2, "match", "matches") == "2 matches"


lines = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=40),
    min_size=0,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(lines, st.integers(min_value=20, max_value=200), st.booleans())
def test_the_chip_text_is_exactly_what_is_sent(body: list[str], budget: int, final: bool) -> None:
    text = "\n".join(body) + ("\n" if final else "")
    report = truncate_authored(text, budget, get_tokenizer())
    split = marked(text, report)
    if report.skipped is None:
        assert split is None
        return
    assert split is not None
    assert split.sent == render_marked(text, report)
    assert split.head + split.middle + split.tail == text


def test_meter_percentages() -> None:
    from fleetmem.core.budget import percent_of
    from fleetmem.surfaces.web.render import percent

    assert percent(percent_of(1305, 1500)) == "87 %"
    assert percent(percent_of(1950, 1500)) == "130 %"  # over budget
    assert percent(percent_of(6, 1500)) == "0.4 %"
    assert percent(percent_of(0, 1500)) == "0.0 %"
    assert percent(None) == ""  # read on demand: no budget
