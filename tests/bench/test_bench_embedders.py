"""bench_embedders on small inputs: its data set means what the docs say, and a row has every
figure the table prints. No figure is asserted (speed and quality are measured in bench/)."""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np

from bench import bench_embedders

#: Words that carry no topic; everything else counts as a content word.
_FUNCTION_TEXT = """
    the a an and or of to for in on at by from with our we do did does is are was were be it
    its this that which why how what where who when now only some so up too after before each
    since than then their there they one all no not new old make made used stop kept keep
    instead whole
"""
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())


def content_words(text: str) -> set[str]:
    return {
        w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in FUNCTION_WORDS and len(w) > 2
    }


def test_every_question_shares_no_content_word_with_its_note() -> None:
    for note, question in bench_embedders.PAIRS:
        assert not content_words(note) & content_words(question), (note, question)


def test_the_coding_set_points_each_question_at_its_own_note() -> None:
    rng = random.Random()
    targets = rng.randint(5, 12)
    data = bench_embedders.coding_set(rng, targets=targets, distractors=rng.randint(20, 60))
    notes = dict((q, n) for n, q in bench_embedders.PAIRS)
    assert len(data["questions"]) == targets
    for question, gold in data["questions"]:
        assert notes[question] in data["docs"][gold]
    assert len(set(data["docs"])) >= targets  # targets are distinct documents


def test_a_measured_row_has_every_figure_of_the_table() -> None:
    row = bench_embedders.measure(
        "minilm-l6-int8 (fleetmem default)",
        seed=random.randrange(1000),
        conversations=0,
        targets=6,
        distractors=30,
        cost_texts=16,
    )
    assert "error" not in row, row
    for key in ("texts_per_s", "query_ms_p50", "query_ms_p95", "load_s", "rss_mb", "install_mb"):
        assert isinstance(row[key], float) and row[key] >= 0, key
    assert 0.0 <= row["coding"]["mrr"] <= 1.0 and row["coding"]["n"] == 6
    assert 0.0 <= row["facts"]["top3"] <= 1.0 and row["facts"]["n"] == 50  # both halves
    assert row["install_mb"] > 20  # the 22.9 MB model file is counted
    missing = bench_embedders.measure("static 10k/64d int8 (tokenlearn)", seed=1, conversations=0)
    text = bench_embedders.table({"rows": [row, missing]})
    assert text.count("\n") == 3 and "minilm-l6-int8" in text
    if "error" in missing:  # not installed here: said so in its row, not dropped
        assert "not installed" in text


def test_the_query_copy_row_embeds_queries_by_the_copy_and_documents_by_the_model(
    tmp_path: Any, monkeypatch: Any
) -> None:
    # A cache of its own: the row makes the copy there (a child process, a few seconds).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    name = "minilm-l6-int8, queries by the int8 copy (what a daemon runs)"
    query, doc, dists = bench_embedders.CANDIDATES[name]()
    assert list(tmp_path.rglob("minilm-query-int8-*.onnx"))
    text = "why did the purchase end-to-end spec fail only sometimes"
    by_copy, by_model = query([text])[0], doc([text])[0]
    # Not the model's own vector, yet close to it (the copy's documented agreement).
    assert not np.array_equal(by_copy, by_model)
    assert float(by_copy @ by_model) >= 0.98
    assert "onnx" in dists
    row = bench_embedders.measure(
        name, seed=random.randrange(1000), conversations=0, targets=6, distractors=30, cost_texts=16
    )
    assert "error" not in row, row
    assert row["coding"]["n"] == 6 and row["facts"]["n"] == 50
