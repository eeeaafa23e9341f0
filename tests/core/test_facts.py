"""The pure rules of facts: bodies, duplicates, transitions, confidence, ranking, the block."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetmem.core.facts import (
    BLOCK_HEADER,
    BLOCK_TOKEN_CAP,
    INSTRUCTION,
    KEPT,
    LIVE,
    NOTHING_ELSE_MATCHED,
    NOTHING_MATCHED,
    REVIEW_ACTIONS,
    SERVABLE,
    STATUSES,
    WORD_WEIGHT,
    Actor,
    BlockItem,
    Tally,
    block_score,
    check_reference,
    check_workspace,
    clean_body,
    confidence,
    corroborated,
    estimate_tokens,
    find_source,
    fit_block,
    independence,
    is_suspect,
    literal_match,
    meaning_score,
    normalize,
    recency_weight,
    review_action,
    review_target,
    search_score,
    visible_scopes,
    vote_counts,
    word_overlap,
)
from fleetmem.errors import InvalidInput, InvalidTransition

DAY = 86_400.0


# ---- bodies -------------------------------------------------------------------------------------
def test_clean_body_trims_collapses_and_strips_invisibles() -> None:
    assert clean_body("  Use\u200b  UTC\n\tin   cron.  ") == "Use UTC in cron."
    assert clean_body("e\u0301") == "\u00e9"  # NFC


def test_clean_body_bounds_and_secrets() -> None:
    assert len(clean_body("x" * 500)) == 500
    with pytest.raises(InvalidInput, match="is 501 characters"):
        clean_body("x" * 501)
    with pytest.raises(InvalidInput, match="must not be empty"):
        clean_body(" \n ")
    with pytest.raises(InvalidInput, match="must be a string"):
        clean_body(42)
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    with pytest.raises(InvalidInput) as info:
        clean_body(f"the key is {secret}")
    assert "aws_access_key_id" in str(info.value) and secret not in str(info.value)


def test_normalize_makes_trivial_variants_equal() -> None:
    assert normalize("Never force-push to MAIN!") == normalize("  never force-push  to main ")
    assert normalize("Don\u2019t deploy \u2014 ever.") == normalize("don't deploy - ever")
    assert normalize("Use tabs.") != normalize("Use spaces.")


def test_word_overlap() -> None:
    assert word_overlap("deploys frozen on fridays", "Fridays: deploys frozen!") == 1.0
    assert word_overlap("alpha beta", "gamma delta") == 0.0
    assert word_overlap("the a of", "x") == 0.0


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("Runbook at https://wiki.acme.dev/oncall.", "https://wiki.acme.dev/oncall"),
        ("See docs/runbooks/oncall.md for paging.", "docs/runbooks/oncall.md"),
        ("Status page is status.acme.dev", "status.acme.dev"),
        ("Nothing to point at here", None),
        ("an e-mail ops@acme.dev is not a source", None),
    ],
)
def test_find_source(text: str, source: str | None) -> None:
    assert find_source(text) == source


def test_check_reference() -> None:
    assert check_reference("Docs at docs/x.md", None) == "docs/x.md"
    assert (
        check_reference("Our dashboards", "https://grafana.acme.dev") == "https://grafana.acme.dev"
    )
    with pytest.raises(InvalidInput, match="must be a URL or a repository path"):
        check_reference("Our dashboards", "the grafana one")
    with pytest.raises(InvalidInput) as info:
        check_reference("Our dashboards", None)
    assert info.value.field == "source"
    with pytest.raises(InvalidInput, match="instead of inlining"):
        check_reference("docs/x.md " + "y" * 300, None)


def test_workspace_names() -> None:
    assert check_workspace("default") == "default"
    for bad in ("", "Default", "a b", "-x", "x" * 65, None):
        with pytest.raises(InvalidInput):
            check_workspace(bad)


# ---- statuses -----------------------------------------------------------------------------------
def test_status_sets_are_consistent() -> None:
    assert INSTRUCTION <= SERVABLE <= LIVE | KEPT
    assert KEPT <= LIVE and set(LIVE) <= set(STATUSES)
    never_served = {"proposed", "rejected", "stale", "forgotten", "restricted", "merged"}
    assert not never_served & SERVABLE
    for sources, target in REVIEW_ACTIONS.values():
        assert sources <= LIVE and target in STATUSES


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("action", sorted(REVIEW_ACTIONS))
def test_review_target_follows_the_table(status: str, action: str) -> None:
    sources, target = REVIEW_ACTIONS[action]
    if status in sources:
        assert review_target(status, action, "f_1") == target
    else:
        with pytest.raises(InvalidTransition):
            review_target(status, action, "f_1")


def test_review_aliases() -> None:
    assert [review_action(a) for a in ("accept", "discard", "evidence-only", "mark-stale")] == [
        "confirm",
        "reject",
        "evidence",
        "stale",
    ]
    with pytest.raises(InvalidInput):
        review_action("approve")


def test_actor_origin() -> None:
    assert Actor("human", "a").origin == "human"
    assert Actor("agent", "b", "r").origin == "agent"
    assert Actor("system", "fleetmem").origin == "tidy-up"


def test_visible_scopes() -> None:
    assert visible_scopes("bot", "github.com/a/b") == [
        "workspace",
        "project:github.com/a/b",
        "agent:bot",
    ]
    assert visible_scopes("bot", None) == ["workspace", "agent:bot"]


# ---- votes and confidence -----------------------------------------------------------------------
def test_vote_counts() -> None:
    assert vote_counts(exposed=False, author_run=False, repeat=False) == (True, "independent")
    assert vote_counts(exposed=True, author_run=False, repeat=False) == (False, "exposed")
    assert vote_counts(exposed=False, author_run=True, repeat=False) == (False, "author_run")
    assert vote_counts(exposed=True, author_run=True, repeat=True) == (False, "repeat")


def test_independence_rewards_distinct_agents_and_repositories() -> None:
    assert independence(Tally()) == 0.0
    assert independence(Tally(10, 1, 1)) == 3.25
    assert independence(Tally(4, 4, 2)) == 4.5
    assert independence(Tally(4, 4, 2)) > independence(Tally(4, 1, 1))


tallies = st.builds(
    lambda runs, agents, repos: Tally(runs, min(agents, runs), min(repos, runs)),
    st.integers(0, 30),
    st.integers(1, 30),
    st.integers(1, 30),
)


@given(tallies, tallies, st.booleans())
def test_confidence_is_a_probability_that_moves_the_right_way(
    support: Tally, against: Tally, human: bool
) -> None:
    c = confidence(support, against, human=human)
    assert 0.0 < c < 1.0
    more = Tally(support.runs + 1, support.agents + 1, support.repos)
    assert confidence(more, against, human=human) >= c
    worse = Tally(against.runs + 1, against.agents + 1, against.repos)
    assert confidence(support, worse, human=human) <= c
    assert confidence(support, against, human=True) >= confidence(support, against, human=False)


def test_confidence_priors() -> None:
    assert confidence(Tally(), Tally(), human=True) == pytest.approx(0.8889, abs=1e-4)
    assert confidence(Tally(), Tally(), human=False) == 0.5


def test_suspect_and_corroboration_rules() -> None:
    assert is_suspect(Tally(), Tally(3, 2, 1), 3)
    assert not is_suspect(Tally(), Tally(2, 2, 1), 3)
    assert not is_suspect(Tally(5, 5, 3), Tally(3, 2, 1), 3)
    assert corroborated(Tally(3, 2, 1), Tally(), min_runs=3, min_agents=2)
    assert not corroborated(Tally(3, 1, 1), Tally(), min_runs=3, min_agents=2)
    assert not corroborated(Tally(5, 3, 2), Tally(1, 1, 1), min_runs=3, min_agents=2)


# ---- ranking ------------------------------------------------------------------------------------
def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("日本語") == 3
    assert estimate_tokens("ab日本") == 3


def test_recency_weight_has_a_30_day_half_life_on_half_the_weight() -> None:
    assert recency_weight(0) == 1.0
    assert recency_weight(30 * DAY) == pytest.approx(0.75)
    assert recency_weight(60 * DAY) == pytest.approx(0.625)
    assert recency_weight(3650 * DAY) == pytest.approx(0.5)
    assert recency_weight(-5) == 1.0


def test_block_score_weighs_relevance_recency_and_confidence() -> None:
    fresh = block_score(0.6, 0, 0.9)
    assert block_score(0.6, 30 * DAY, 0.9) < fresh
    assert block_score(0.6, 0, 0.5) < fresh
    assert block_score(0.7, 0, 0.9) > fresh
    # A strong old match still beats a weak fresh one.
    assert block_score(0.9, 120 * DAY, 0.9) > block_score(0.45, 0, 0.9)


def test_literal_match_and_search_score() -> None:
    assert literal_match("initech", "Ask about the Initech  integration") == "phrase"
    assert literal_match("integration initech", "Ask about the Initech integration") == "words"
    assert literal_match("initech billing", "Ask about the Initech integration") is None
    assert search_score(None, None, threshold=0.3, strong=0.7) is None
    assert search_score(0.29, None, threshold=0.3, strong=0.7) is None
    assert search_score(0.3, None, threshold=0.3, strong=0.7) == 0.5
    assert search_score(0.9, None, threshold=0.3, strong=0.7) == 1.0
    assert search_score(0.1, "phrase", threshold=0.3, strong=0.7) == 1.0
    assert search_score(0.1, "words", threshold=0.3, strong=0.7) == 0.75
    assert search_score(0.69, "words", threshold=0.3, strong=0.7) == pytest.approx(0.9875)


def test_meaning_score_adds_a_small_bonus_per_shared_word() -> None:
    assert meaning_score(0.3, 0, 2) == 0.3
    assert meaning_score(0.3, 1, 2) == pytest.approx(0.3 + WORD_WEIGHT / 2)
    assert meaning_score(0.3, 2, 2) == pytest.approx(0.3 + WORD_WEIGHT)
    assert meaning_score(0.3, 0, 0) == 0.3


def item(n: int, length: int = 40, pinned: bool = False, score: float = 0.5) -> BlockItem:
    return BlockItem(f"f_{n}", 1, "note", "workspace", "x" * length, pinned, score, 0.9)


def test_fit_block_texts() -> None:
    assert fit_block([], []).text == f"{BLOCK_HEADER}\n{NOTHING_MATCHED}"
    only = fit_block([item(1)], [])
    assert only.text.endswith(NOTHING_ELSE_MATCHED) and only.items[0].pinned
    both = fit_block([item(1)], [item(2)])
    assert NOTHING_ELSE_MATCHED not in both.text and both.dropped == 0


@given(
    st.lists(st.integers(1, 500), max_size=20),
    st.lists(st.integers(1, 500), max_size=8),
    st.integers(100, 2000),
)
def test_fit_block_never_exceeds_its_cap_and_drops_from_the_end(
    pinned_lengths: list[int], recalled_lengths: list[int], cap: int
) -> None:
    pinned = [item(i, n, pinned=True) for i, n in enumerate(pinned_lengths)]
    recalled = [item(100 + i, n) for i, n in enumerate(recalled_lengths)]
    fitted = fit_block(pinned, recalled, cap)
    assert fitted.tokens == estimate_tokens(fitted.text)
    assert fitted.tokens <= cap or not fitted.items
    everything = [i.fact_id for i in pinned + recalled]
    shown = [i.fact_id for i in fitted.items]
    assert shown == everything[: len(shown)]  # a prefix: dropped whole from the lowest
    assert fitted.dropped == len(everything) - len(shown)
    for shown_item in fitted.items:
        assert f"- {shown_item.body} (" in fitted.text


def test_the_real_cap_is_1200() -> None:
    pinned = [item(90 + i, 500, pinned=True) for i in range(2)]
    recalled = [item(i, 500) for i in range(8)]
    everything = "\n".join([BLOCK_HEADER, *(i.line() for i in [*pinned, *recalled])])
    assert estimate_tokens(everything) > BLOCK_TOKEN_CAP
    fitted = fit_block(pinned, recalled)
    assert fitted.tokens <= BLOCK_TOKEN_CAP and fitted.dropped == 2
    assert [i.fact_id for i in fitted.items] == ["f_90", "f_91", *(f"f_{i}" for i in range(6))]
