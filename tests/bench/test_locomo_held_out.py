"""The LoCoMo held-out check: each conversation scored with the weights the others chose."""

from __future__ import annotations

import pytest
from bench.bench_locomo import (
    CUE_GRID,
    DEFAULT_CUES,
    Question,
    Tally,
    cue_point_name,
    held_out,
)

DEFAULT = cue_point_name(DEFAULT_CUES)


def tally(per_conversation: dict[str, list[bool]]) -> Tally:
    """A tally whose questions each have one evidence turn, found in the top 10 or not."""
    t = Tally()
    for conv, found in per_conversation.items():
        for hit in found:
            q = Question("q", ("D1:1",), 1)
            t.add(q, ["D1:1"] if hit else ["D1:2"], 1.0, conv)
    return t


def test_each_conversation_is_scored_with_the_point_the_others_chose() -> None:
    # "a" wins on conv-0 and conv-1, "b" on conv-2 by a wide margin: conv-2 left out, the
    # others choose "a"; conv-0 or conv-1 left out, "b" has the best pooled rest.
    grid = {
        "a": tally({"conv-0": [True, True], "conv-1": [True, False], "conv-2": [False] * 4}),
        "b": tally({"conv-0": [True, False], "conv-1": [False, False], "conv-2": [True] * 4}),
    }
    out = held_out(grid, "a")
    assert out["chosen"] == {"conv-0": "b", "conv-1": "b", "conv-2": "a"}
    # conv-0 with b: 1 of 2; conv-1 with b: 0 of 2; conv-2 with a: 0 of 4.
    assert out["held_out_recall@10"] == pytest.approx(1 / 8, abs=1e-4)
    assert out["default_recall@10"] == pytest.approx(3 / 8, abs=1e-4)
    assert out["best_in_sample"] == "b" and out["best_in_sample_recall@10"] == 0.625
    assert out["grid_points"] == 2


def test_a_tie_goes_to_the_earlier_point_and_one_conversation_uses_itself() -> None:
    same = {"conv-0": [True, False]}
    out = held_out({"first": tally(same), "second": tally(same)}, "second")
    assert out["chosen"] == {"conv-0": "first"}
    assert out["held_out_recall@10"] == 0.5


def test_the_grid_halves_and_doubles_the_defaults() -> None:
    names = [cue_point_name(p) for p in CUE_GRID]
    assert DEFAULT in names and len(set(names)) == len(names) == 27
