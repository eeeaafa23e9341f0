"""Token budgets: truncation, load reports and budget splits (core/budget.py).

Two codecs: a byte codec (one token per UTF-8 byte, so a cut can fall inside any multi-byte
character) and the real o200k_base tokenizer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.core.budget import (
    AUTHORED_MARKER,
    FAIR_FLOOR_SHARE,
    FEED_MARKER,
    SKIPPED_END,
    SKIPPED_LABEL,
    LoadReport,
    percent_of,
    render_marked,
    split_budget,
    state_of,
    truncate_authored,
    truncate_feed,
)
from fleetmem.tokenize import get_tokenizer

CORPUS = Path(__file__).resolve().parent.parent / "files" / "corpus"


class ByteCodec:
    """One token per UTF-8 byte."""

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        return bytes(tokens)


BYTES = ByteCodec()
WORDS = [
    "deploy",
    "the",
    "ledger",
    "tests",
    "été",
    "中文",
    "Always",
    "never",
    "on",
    "Fridays.",
    "`make`",
]
REAL = get_tokenizer()


def corpus_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.iterdir()))


def check_report(text: str, report: LoadReport, budget: int, codec: object) -> None:
    """Invariants every authored report keeps."""
    count = codec.count  # type: ignore[attr-defined]
    assert report.budget == budget
    assert report.tokens == count(text)
    assert report.delivered_tokens == count(report.delivered)
    if report.skipped is None:
        assert report.delivered == text and report.used == report.tokens
        assert report.skipped_tokens == 0
        return
    assert report.delivered_tokens <= budget
    if report.delivered:  # an over-budget text takes its whole budget, and is that far over
        assert (report.used, report.skipped_tokens) == (budget, report.tokens - budget)
    region = report.skipped
    head, tail = text[: region.char_start], text[region.char_end :]
    assert 0 <= region.char_start < region.char_end <= len(text)
    assert region.line_start == text.count("\n", 0, region.char_start) + 1
    assert region.line_end == text.count("\n", 0, region.char_end - 1) + 1
    if report.delivered:
        # Exactly: the head, one marker line, the tail.
        sep = "" if not head or head.endswith("\n") else "\n"
        after = "\n" + tail if tail else ""
        assert report.delivered == head + sep + AUTHORED_MARKER + after
        assert report.delivered.count(AUTHORED_MARKER) == text.count(AUTHORED_MARKER) + 1
    assert 0 < report.skipped_tokens <= report.tokens


# ---- state and percent ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tokens", "state"),
    [(0, "under"), (1349, "under"), (1350, "near"), (1500, "near"), (1501, "over")],
)
def test_state_thresholds_follow_fr41(tokens: int, state: str) -> None:
    assert state_of(tokens, 1500) == state


def test_percent_is_of_the_whole_text_not_of_what_is_delivered() -> None:
    assert percent_of(4100, 1500) == 273.3
    assert percent_of(340, 1500) == 22.7
    assert percent_of(0, 0) == 0.0


# ---- authored text: head and tail -----------------------------------------------------------
def test_under_budget_delivers_the_text_whole() -> None:
    text = "Short sentences.\nNo exclamation marks.\n"
    report = truncate_authored(text, 1500, REAL)
    check_report(text, report, 1500, REAL)
    assert report.state == "under" and not report.truncated


def test_over_budget_keeps_seventy_percent_head_and_thirty_percent_tail() -> None:
    lines = [f"line {i:04d}: always check the staging branch first." for i in range(2000)]
    text = "\n".join(lines) + "\n"
    report = truncate_authored(text, 1500, REAL)
    check_report(text, report, 1500, REAL)
    assert report.state == "over" and report.used == 1500
    region = report.skipped
    assert region is not None
    head = REAL.count(text[: region.char_start])
    tail = REAL.count(text[region.char_end :])
    room = head + tail
    line = REAL.count(lines[0] + "\n")
    # Whole lines: the shares are kept to within a line of 70/30.
    assert abs(head - 0.7 * room) <= line + 3 and abs(tail - 0.3 * room) <= line + 3
    assert text[: region.char_start].endswith("\n") and text[region.char_start - 1] == "\n"
    assert report.delivered_tokens > 1500 - 2 * line
    assert text.startswith("line 0000") and report.delivered.startswith("line 0000")
    assert report.delivered.endswith(lines[-1] + "\n")


def test_scenario_s6_notes_of_4100_tokens_against_1500() -> None:
    unit = "Rotate the API credentials on the first of each quarter.\n"
    text = unit * (4100 // REAL.count(unit) + 1)
    while REAL.count(text) > 4100:
        text = text[:-1]
    assert REAL.count(text) == 4100
    report = truncate_authored(text, 1500, REAL)
    check_report(text, report, 1500, REAL)
    assert (report.used, report.budget, report.state) == (1500, 1500, "over")
    assert report.skipped_tokens == 2600  # the meter: "1,500 / 1,500 · 2,600 skipped"
    # The agent receives whole lines and the marker, never more than the budget.
    region = report.skipped
    assert region is not None and text[region.char_start - 1] == "\n"
    assert report.delivered_tokens <= 1500
    assert report.delivered.count(AUTHORED_MARKER) == 1


def test_a_single_long_line_is_cut_inside_the_line() -> None:
    text = "word " * 3000  # no line break to cut at
    report = truncate_authored(text, 200, REAL)
    check_report(text, report, 200, REAL)
    assert report.delivered.startswith("word word") and report.delivered_tokens >= 190


def test_cuts_fall_on_line_boundaries_for_generated_files(rng: random.Random) -> None:
    # Line lengths vary widely, so a first line can be longer than the head's share and a
    # last line longer than what the head leaves: whole lines are still due whenever the
    # first and last lines fit the room together.
    marker_cost = REAL.count(f"\n{AUTHORED_MARKER}\n")
    line_cuts = 0
    for _ in range(200):
        longest = rng.choice([30, 80, 150])
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, longest)))
            for _ in range(rng.randint(2, 400))
        ]
        text = "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")
        budget = rng.randint(60, 1500)
        report = truncate_authored(text, budget, REAL)
        check_report(text, report, budget, REAL)
        ends = REAL.count(lines[0] + "\n") + REAL.count(lines[-1]) + 2
        if report.skipped is not None and report.delivered and ends <= budget - marker_cost:
            region = report.skipped
            assert region.char_start == 0 or text[region.char_start - 1] == "\n", budget
            assert region.char_end == len(text) or text[region.char_end - 1] == "\n", budget
            line_cuts += 1
    assert line_cuts > 50  # the check above ran on many cuts, not a handful


@pytest.mark.parametrize("budget", [1, 5, 17, 18, 19, 25, 60, 150, 400])
def test_small_budgets_never_overflow(budget: int) -> None:
    text = corpus_text()
    report = truncate_authored(text, budget, REAL)
    check_report(text, report, budget, REAL)


def test_a_budget_too_small_for_the_marker_delivers_nothing() -> None:
    text = "word " * 200
    report = truncate_authored(text, 3, REAL)
    assert report.delivered == "" and report.used == 0
    assert report.skipped is not None and report.skipped.char_start == 0
    assert report.skipped.char_end == len(text) and report.skipped_tokens == report.tokens


@given(st.text(min_size=0, max_size=400), st.integers(min_value=0, max_value=300))
@settings(max_examples=300, deadline=None)
def test_byte_codec_cuts_never_split_a_character(text: str, budget: int) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    report = truncate_authored(text, budget, BYTES)
    check_report(text, report, budget, BYTES)


@given(
    st.lists(
        st.sampled_from(
            [
                "ab",
                "é",
                "中文",
                "👩‍👩‍👧‍👦",
                "🇺🇸",
                "\n",
                "  ",
                "\t",
                "def f():",
                "ß",
                "e\u0301",
                "🏳️‍🌈",
            ]
        ),
        max_size=400,
    ),
    st.integers(min_value=0, max_value=200),
)
@settings(max_examples=200, deadline=None)
def test_real_tokenizer_invariants_on_mixed_unicode(pieces: list[str], budget: int) -> None:
    text = "".join(pieces)
    report = truncate_authored(text, budget, REAL)
    check_report(text, report, budget, REAL)


def test_every_corpus_file_at_many_budgets() -> None:
    for path in sorted(CORPUS.iterdir()):
        text = path.read_text(encoding="utf-8")
        for budget in (20, 40, 75, 120, 150, 200, 1000):
            check_report(text, truncate_authored(text, budget, REAL), budget, REAL)


# ---- feeds: newest first --------------------------------------------------------------------
def test_feed_keeps_whole_entries_from_the_top() -> None:
    entries = [f"run r{i:03d} by api-fixer: succeeded after {i} retries" for i in range(200)]
    report = truncate_feed(entries, 300, REAL)
    assert report.shape == "feed" and report.used <= 300
    assert report.used == REAL.count(report.delivered)
    kept = report.delivered.split("\n")
    assert kept[-1] == FEED_MARKER
    assert kept[:-1] == entries[: len(kept) - 1]  # newest first, none cut in half
    assert len(kept) > 10
    region = report.skipped
    assert region is not None
    assert region.line_start == len(kept)  # the first dropped entry's line
    assert region.line_end == len(entries)
    whole = "\n".join(entries)
    assert whole[region.char_start :] == "\n".join(entries[len(kept) - 1 :])


def test_feed_that_fits_is_whole_and_an_empty_feed_is_empty() -> None:
    assert truncate_feed(["a", "b"], 100, REAL).delivered == "a\nb"
    empty = truncate_feed([], 100, REAL)
    assert empty.delivered == "" and empty.used == 0 and not empty.truncated


def test_feed_entry_larger_than_the_budget_is_dropped_not_cut() -> None:
    report = truncate_feed(["x " * 500, "short"], 50, REAL)
    assert report.delivered == FEED_MARKER
    assert "x x" not in report.delivered


# ---- splitting one budget -------------------------------------------------------------------
def test_split_keeps_lengths_when_they_fit() -> None:
    assert split_budget([340, 700], 1500) == [340, 700]


def test_split_is_proportional_and_adds_up_exactly() -> None:
    shares = split_budget([1000, 2000, 1], 1500)
    assert sum(shares) == 1500
    assert shares == [500, 999, 1]  # the 1-token file is whole, not cut to nothing
    assert split_budget([1, 1, 1], 2) == [1, 1, 0]  # ties go to the earlier file
    assert split_budget([3, 3, 3], 8) == [3, 3, 2]


@given(st.lists(st.integers(min_value=0, max_value=20_000), max_size=6), st.integers(0, 3000))
def test_split_never_exceeds_a_length_or_the_total(lengths: list[int], total: int) -> None:
    shares = split_budget(lengths, total)
    assert all(0 <= s <= n for s, n in zip(shares, lengths, strict=True))
    assert sum(shares) == min(total, sum(lengths))


def test_a_short_file_beside_a_long_one_is_kept_whole() -> None:
    # The case: an 81-character "About you" (6 tokens) beside a long "Voice".
    assert split_budget([6, 3000], 1500) == [6, 1494]


@given(
    st.lists(st.integers(min_value=0, max_value=20_000), min_size=1, max_size=6),
    st.integers(0, 3000),
)
def test_every_file_gets_its_whole_size_or_at_least_the_fair_floor(
    lengths: list[int], total: int
) -> None:
    shares = split_budget(lengths, total)
    floor = int(total * FAIR_FLOOR_SHARE / len(lengths))
    assert all(s == n or s >= floor for s, n in zip(shares, lengths, strict=True))


def test_split_refuses_negative_numbers() -> None:
    with pytest.raises(ValueError):
        split_budget([-1], 10)


# ---- marking the skipped region --------------------------------------------------------------
def test_marked_preview_labels_the_region_and_loses_nothing() -> None:
    text = "\n".join(f"Line {i}: keep what matters at the top." for i in range(1, 400)) + "\n"
    report = truncate_authored(text, 200, REAL)
    marked = render_marked(text, report)
    lines = marked.split("\n")
    begin = [i for i, line in enumerate(lines) if SKIPPED_LABEL in line]
    end = [i for i, line in enumerate(lines) if SKIPPED_END in line]
    assert len(begin) == 1 and len(end) == 1 and begin[0] < end[0]
    region = report.skipped
    assert region is not None
    assert f"lines {region.line_start}–{region.line_end}" in lines[begin[0]]
    assert f"{region.chars:,} characters ({report.skipped_tokens:,} tokens)" in lines[begin[0]]
    assert unmark(marked, text, report) == text


def unmark(marked: str, text: str, report: LoadReport) -> str:
    """Take the two marker lines (and the newlines put in front of them) out again."""
    region = report.skipped
    assert region is not None
    lines = marked.split("\n")
    b = next(i for i, line in enumerate(lines) if SKIPPED_LABEL in line)
    e = next(i for i, line in enumerate(lines) if SKIPPED_END in line)
    head = "\n".join(lines[:b])
    middle = "\n".join(lines[b + 1 : e])
    tail = "\n".join(lines[e + 1 :])
    # A region that starts or ends inside a line got a newline before its marker line.
    if region.char_start and text[region.char_start - 1] == "\n":
        head += "\n"
    if region.char_end - region.char_start and text[region.char_end - 1] == "\n":
        middle += "\n"
    assert head == text[: region.char_start]
    assert middle == text[region.char_start : region.char_end]
    return head + middle + tail


def test_marked_preview_of_a_mid_line_cut_still_restores_the_text() -> None:
    text = "x" * 5000  # one long line: the cut falls inside it
    report = truncate_authored(text, 100, BYTES)
    marked = render_marked(text, report)
    region = report.skipped
    assert region is not None and region.line_start == region.line_end == 1
    assert unmark(marked, text, report) == text


def test_marked_preview_under_budget_is_the_text() -> None:
    text = "fits\n"
    assert render_marked(text, truncate_authored(text, 100, REAL)) == text
