from __future__ import annotations

from fleetmem.core.ranking import reciprocal_rank_fusion
from fleetmem.core.textquery import fts_match, terms


def test_rrf_rewards_agreement_between_channels() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "x"]], recency={})
    assert {r.id for r in fused[:2]} == {"b", "c"}
    scores = {r.id: r.score for r in fused}
    assert scores["b"] > scores["a"] and scores["c"] > scores["x"]
    assert abs(scores["a"] - 1 / 61) < 1e-12


def test_ties_break_by_recency_then_id() -> None:
    fused = reciprocal_rank_fusion([["a"], ["b"]], recency={"a": 1.0, "b": 2.0})
    assert [r.id for r in fused] == ["b", "a"]
    fused = reciprocal_rank_fusion([["b"], ["a"]], recency={})
    assert [r.id for r in fused] == ["a", "b"]


def test_path_boost_lifts_an_equal_candidate_only() -> None:
    fused = reciprocal_rank_fusion([["a", "b"]], recency={}, boosted=frozenset({"b"}))
    assert [r.id for r in fused] == ["b", "a"]
    # A weak match on the path does not beat the top match of both channels.
    weak = [f"n{i}" for i in range(8)] + ["b"]
    strong = reciprocal_rank_fusion(
        [["a", *weak], ["a"]], recency={}, boosted=frozenset({"b", "zz"})
    )
    ids = [r.id for r in strong]
    assert ids[0] == "a" and "zz" not in ids


def test_limit_and_weights() -> None:
    fused = reciprocal_rank_fusion(
        [["a", "b"], ["b", "a"]], recency={}, weights=[2.0, 1.0], limit=1
    )
    assert [r.id for r in fused] == ["a"]


def test_fts_match_quotes_every_term() -> None:
    assert fts_match('ledger" OR text:* NEAR(a b)') == '"ledger" OR "text" OR "near" OR "b"'
    assert fts_match("the") == '"the"'
    assert fts_match("!!! ???") is None
    assert terms("Flaky flaky LEDGER test") == ["flaky", "ledger", "test"]


def test_small_k_and_channel_weight_keep_top_ranks_decisive() -> None:
    # The built-in provider's fusion: k=10, the cosine channel at half weight.
    fused = reciprocal_rank_fusion(
        [["t1", "both"], ["v1", "both"]], recency={}, k=10, weights=[1.0, 0.5]
    )
    ids = [r.id for r in fused]
    assert ids.index("both") < ids.index("v1")
    assert ids.index("t1") < ids.index("v1")  # the text channel's top beats the vector's
    scores = {r.id: r.score for r in fused}
    assert abs(scores["both"] - (1 / 12 + 0.5 / 12)) < 1e-12


def test_path_boost_is_one_top_rank_of_the_lightest_channel() -> None:
    # A deep text-only match on a requested path must not beat the top of both channels,
    # even when the text channel weighs twice the vector channel.
    weak = [f"n{i}" for i in range(8)] + ["b"]
    fused = reciprocal_rank_fusion(
        [["a", *weak], ["a"]], recency={}, boosted=frozenset({"b"}), k=10, weights=[1.0, 0.5]
    )
    ids = [r.id for r in fused]
    assert ids[0] == "a"
    scores = {r.id: r.score for r in fused}
    assert abs(scores["b"] - (1 / 20 + 0.5 / 11)) < 1e-12
    # ... but it still lifts a candidate over an equal one.
    even = reciprocal_rank_fusion(
        [["a", "b"], ["b", "a"]], recency={}, boosted=frozenset({"b"}), k=10, weights=[1.0, 0.5]
    )
    assert even[0].id == "b"
