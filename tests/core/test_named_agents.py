"""Agent names in a query: found as whole words, and taken out of the searched words."""

from __future__ import annotations

import pytest

from fleetmem.core.named_agents import named_agents, without_names

KNOWN = ("caroline", "melanie", "codex", "claude-code", "x")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Caroline paint?", {"caroline"}),
        ("Caroline's kids and MELANIE", {"caroline", "melanie"}),
        ("what did claude-code change", {"claude-code"}),
        ("what did codex-mini change", set()),  # part of a longer name
        ("the codexes", set()),
        ("x marks the spot", set()),  # one letter is not a name
        ("", set()),
    ],
)
def test_names_are_whole_words_in_any_case(query: str, expected: set[str]) -> None:
    assert named_agents(query, KNOWN) == expected


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        ("What did Caroline paint?", {"caroline"}, "What did paint?"),
        ("What are Caroline's plans", {"caroline"}, "What are plans"),
        ("Caroline\u2019s plans", {"caroline"}, "plans"),
        ("did claude-code or codex fail", {"claude-code", "codex"}, "did or fail"),
        ("Caroline", {"caroline"}, ""),
        ("ask bot.v2 and bot", {"bot", "bot.v2"}, "ask and"),
    ],
)
def test_names_and_their_possessive_are_taken_out(
    query: str, names: set[str], expected: str
) -> None:
    assert without_names(query, names) == expected


def test_regex_characters_in_a_name_are_literal() -> None:
    assert named_agents("ask bot.v2 now", ["bot.v2"]) == {"bot.v2"}
    assert named_agents("ask botxv2 now", ["bot.v2"]) == frozenset()


PEOPLE = ("fahim-khan", "maria-lopez", "maria_santos", "review-bot", "claude-code", "al-b")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did Fahim Khan fix in billing?", {"fahim-khan"}),
        ("what did fahim  khan fix?", {"fahim-khan"}),  # a display name in any case
        ("Fahim's flaky test", {"fahim-khan"}),  # a capitalised first name
        ("did fahim look at it", set()),  # a first name counts only capitalised
        ("what did Maria change?", set()),  # two Marias: ambiguous
        ("Maria Lopez and Maria Santos", {"maria-lopez", "maria_santos"}),
        ("Review the failing build", set()),  # 'review-bot' is not named by 'Review'
        ("what did the review bot say", {"review-bot"}),
        ("Claude Code's refactor", {"claude-code"}),
        ("Al said so", set()),  # a first name of two letters is too short
        ("Fahimeh reported it", set()),  # part of a longer word
    ],
)
def test_display_names_and_first_names_count(query: str, expected: set[str]) -> None:
    assert named_agents(query, PEOPLE) == expected


def test_every_written_form_of_a_named_agent_is_taken_out() -> None:
    assert without_names("Fahim Khan: why did Fahim's build fail", {"fahim-khan"}, PEOPLE) == (
        ": why did build fail"
    )
    assert without_names("what did fahim-khan do", {"fahim-khan"}) == "what did do"
