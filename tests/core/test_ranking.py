from __future__ import annotations

import random

import pytest

from fleetmem.core.ranking import (
    CALIBRATIONS,
    UNCALIBRATED,
    Calibration,
    calibration_for,
    coverage_share,
    reciprocal_rank_fusion,
    score_fusion,
)
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


# ---- score fusion and calibration ---------------------------------------------------------
CAL = Calibration(floor=0.2, full=0.45, relevant=0.25)


def test_strength_is_zero_at_the_floor_and_one_from_full() -> None:
    rng = random.Random()
    floor = rng.uniform(-0.5, 0.6)
    full = rng.uniform(floor + 0.01, 1.0)
    cal = Calibration(floor, full, floor)
    assert cal.strength(floor) == 0.0 and cal.strength(floor - rng.random()) == 0.0
    assert cal.strength(full) == 1.0 and cal.strength(min(1.0, full + rng.random())) == 1.0
    middle = (floor + full) / 2
    assert abs(cal.strength(middle) - 0.5) < 1e-9
    with pytest.raises(ValueError):
        Calibration(0.5, 0.5, 0.6)
    with pytest.raises(ValueError):
        Calibration(0.1, 0.8, 1.5)


def test_a_strong_meaning_match_outranks_every_word_only_match() -> None:
    # The old fusion capped a vector-only hit at 0.5 / 11, below any word hit ranked 1-11.
    words = [f"w{i}" for i in range(12)]
    fused = score_fusion(
        [words],
        [0.3],
        similar={"meaning": 0.6, **{w: 0.3 for w in words}},
        similar_weight=0.7,
        calibration=Calibration(floor=0.2, full=0.6, relevant=0.2),
        recency={},
        k=10,
    )
    assert fused[0].id == "meaning"
    assert abs(fused[0].score - 0.7) < 1e-12
    # The word channel's top scores its weight, (k + 1) / (k + 1) * 0.3, plus its meaning.
    assert abs({r.id: r.score for r in fused}["w0"] - (0.3 + 0.7 * 0.25)) < 1e-12


def test_agreement_beats_either_channel_alone() -> None:
    fused = score_fusion(
        [["t1", "both"]],
        [0.3],
        similar={"both": 0.4, "v1": 0.45},
        similar_weight=0.7,
        calibration=CAL,
        recency={},
        k=10,
    )
    scores = {r.id: r.score for r in fused}
    assert abs(scores["both"] - (0.3 * 11 / 12 + 0.7 * 0.8)) < 1e-9
    assert [r.id for r in fused] == ["both", "v1", "t1"]


def test_an_item_found_only_at_or_below_the_floor_is_left_out() -> None:
    fused = score_fusion(
        [[]],
        [0.3],
        similar={"unrelated": 0.19, "also": 0.2},
        similar_weight=0.7,
        calibration=CAL,
        recency={},
    )
    assert fused == []
    # A word match keeps its rank score whatever its cosine (without coverage, by rank).
    words = score_fusion(
        [["unrelated", "weak"]],
        [0.6],
        similar={"unrelated": 0.1, "weak": 0.3},
        similar_weight=0.4,
        calibration=Calibration(floor=0.2, full=0.8, relevant=0.2),
        recency={},
        k=5,
    )
    scores = {r.id: r.score for r in words}
    assert abs(scores["unrelated"] - 0.6) < 1e-12
    assert abs(scores["weak"] - (0.6 * 6 / 7 + 0.4 * (0.1 / 0.6))) < 1e-12


def test_word_coverage_replaces_the_words_rank_share() -> None:
    rng = random.Random()
    low, high = rng.uniform(0.05, 0.3), rng.uniform(0.8, 1.5)
    cal = Calibration(floor=0.0, full=0.8, relevant=0.15)
    coverage = {"full": high + rng.random(), "half": (low + high) / 2, "noise": low / 2}
    fused = score_fusion(
        [["noise", "half", "full"]],  # BM25's order is not what counts with coverage
        [0.7],
        similar={"meaning": 0.4},
        similar_weight=0.3,
        calibration=cal,
        recency={},
        word_coverage=coverage,
        word_ramp=(low, high),
    )
    scores = {r.id: r.score for r in fused}
    assert abs(scores["full"] - 0.7) < 1e-12
    assert abs(scores["half"] - 0.35) < 1e-9
    assert "noise" not in scores  # under the ramp's start, and no meaning: nothing points at it
    assert abs(scores["meaning"] - 0.3 * 0.5) < 1e-12
    # The same items scored in a call that saw fewer of them score the same.
    alone = score_fusion(
        [["half"]], [0.7], recency={}, word_coverage=coverage, word_ramp=(low, high)
    )
    assert abs(alone[0].score - scores["half"]) < 1e-12


def test_coverage_share_is_a_ramp_between_its_ends() -> None:
    rng = random.Random()
    low = rng.uniform(0.05, 0.3)
    high = low + rng.uniform(0.1, 1.0)
    assert coverage_share(low, low, high) == 0.0
    assert coverage_share(low - rng.random(), low, high) == 0.0
    assert coverage_share(high, low, high) == 1.0
    assert coverage_share(high + rng.random(), low, high) == 1.0
    assert abs(coverage_share((low + high) / 2, low, high) - 0.5) < 1e-9
    # A step where both ends meet.
    assert coverage_share(0.3, 0.3, 0.3) == 1.0 and coverage_share(0.29, 0.3, 0.3) == 0.0


def test_bonus_and_limit_and_checks() -> None:
    bonus = {"c": 0.5, "b": 0.2}
    fused = score_fusion([["a", "b"]], [1.0], recency={}, k=10, bonus=bonus)
    assert [r.id for r in fused] == ["b", "a", "c"]  # a bonus may add a new item
    assert abs(fused[0].score - (11 / 12 + 0.2)) < 1e-12
    limited = score_fusion([["a", "b"]], [1.0], recency={}, k=10, bonus=bonus, limit=2)
    assert [r.id for r in limited] == ["b", "a"]
    with pytest.raises(ValueError):
        score_fusion([["a"]], [], recency={})
    with pytest.raises(ValueError):
        score_fusion([["a"]], [1.0], similar={"a": 0.5}, similar_weight=1.0, recency={})


def test_scores_do_not_depend_on_which_scopes_were_searched() -> None:
    # The same item with the same cosine scores the same in a call that sees fewer
    # candidates: what lets the service merge several provider calls by score.
    rng = random.Random()
    cosines = {f"e{i}": rng.uniform(0.0, 0.7) for i in range(30)}
    whole = {
        r.id: r.score
        for r in score_fusion(
            [[]], [0.3], similar=cosines, similar_weight=0.7, calibration=CAL, recency={}
        )
    }
    part = dict(list(cosines.items())[:10])
    some = score_fusion([[]], [0.3], similar=part, similar_weight=0.7, calibration=CAL, recency={})
    assert all(abs(whole[r.id] - r.score) < 1e-12 for r in some)


def test_every_calibrated_model_has_a_sane_row() -> None:
    for model, cal in CALIBRATIONS.items():
        assert model and -1.0 <= cal.floor < cal.full < 1.0 and cal.floor <= cal.relevant < 1.0
    assert calibration_for("nobody:measured") == UNCALIBRATED
    assert UNCALIBRATED.relevant == 0.72  # the seed's run-recall threshold
