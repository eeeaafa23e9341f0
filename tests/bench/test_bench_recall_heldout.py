"""The held-out recall set (bench/heldout_runs) is what its docstring says, and
bench_recall_heldout scores it: the set's invariants on both halves, the scoring on hand-made
rankings, and one repository of half A end to end through the product (a few seconds; the
full benchmark is ``python -m bench.bench_recall_heldout``, never a test). No recall figure is
asserted beyond what the data guarantees (BM25 cannot find a paraphrase's target)."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from bench.heldout_runs import data as heldout
from bench.heldout_runs.incidents import INCIDENTS
from bench.heldout_runs.vocab import PERSONS, REPOS, UNRELATED
from bench.recall_sets import RunQuestion, RunsSet

from bench import bench_recall_heldout as bench
from fleetmem.embed import query_model

#: Runs per half: a pure function of the seed, so a change to the generator shows here.
RUNS = {"A": 327, "B": 323}
Built = tuple[RunsSet, heldout.Info]


@pytest.fixture(scope="module")
def halves() -> dict[str, Built]:
    return {half: heldout.build(half) for half in heldout.SEEDS}


def _records(data: RunsSet) -> dict[str, dict[str, Any]]:
    return {str(r["run_id"]): r for r in data.records}


# ---- the set ---------------------------------------------------------------------------
@pytest.mark.parametrize("half", ["A", "B"])
def test_each_half_has_the_counts_it_promises(halves: dict[str, Built], half: str) -> None:
    data, info = halves[half]
    assert data.seed == heldout.SEEDS[half]
    assert len(data.records) == RUNS[half]
    assert len(data.repos) == len(REPOS) == 10
    assert Counter(q.kind for q in data.questions) == {"lexical": 40, "paraphrase": 40, "agent": 12}
    assert len(data.unrelated) == 10 and list(data.unrelated) == UNRELATED[half]
    assert info.problems == []
    assert len(info.meta_q) == len(info.docs) == len(data.questions)
    kinds = Counter(m["kind"] for m in info.runs_meta.values())
    assert kinds["incident"] == 40 and kinds["twin"] == 12
    assert sum(k.startswith("filler:") for k in kinds.elements()) == 26 * 10


@pytest.mark.parametrize("half", ["A", "B"])
def test_every_question_targets_one_run_of_its_repository(
    halves: dict[str, Built], half: str
) -> None:
    data, _ = halves[half]
    runs = _records(data)
    assert len(runs) == len(data.records)  # run ids are unique
    for q in data.questions:
        assert q.target in runs, q
        assert runs[q.target]["sessions"][0]["repo"] == q.repo


def test_the_halves_share_no_incident_and_no_question(halves: dict[str, Built]) -> None:
    (a, a_info), (b, b_info) = halves["A"], halves["B"]
    slugs = {h: {m["slug"] for m in info.meta_q} for h, info in (("A", a_info), ("B", b_info))}
    assert len(INCIDENTS) == 80 and len({i.slug for i in INCIDENTS}) == 80
    assert len(slugs["A"]) == len(slugs["B"]) == 40 and not slugs["A"] & slugs["B"]
    assert not {q.text for q in a.questions} & {q.text for q in b.questions}
    assert not set(a.unrelated) & set(b.unrelated)


@pytest.mark.parametrize("half", ["A", "B"])
def test_every_paraphrase_shares_no_content_word_with_its_target(
    halves: dict[str, Built], half: str
) -> None:
    data, info = halves[half]
    runs = _records(data)
    for q, doc in zip(data.questions, info.docs, strict=True):
        target = heldout.episode_text(runs[q.target])
        assert runs[q.target]["result_text"] in target and target in doc
        if q.kind == "paraphrase":
            # the run's own indexed text, and its neighbours' on the branch (the context)
            assert heldout.shared_content(q.text, target) == set(), q.text
            assert heldout.shared_content(q.text, doc) == set(), q.text
        elif q.kind == "lexical":  # asked in the run's own words
            assert len(heldout.shared_content(q.text, target)) >= 2, q.text


def test_the_word_check_sees_stems_and_what_fts5_matches() -> None:
    doc = "TestConcurrentTransfers failed: the ledger rows were locked in opposite order."
    assert heldout.shared_content("why do ledgers fail?", doc) == {"ledgers", "fail"}
    assert heldout.shared_content("what locking problem?", doc) == {"locking"}
    assert heldout.shared_content("concurrent transfers", doc) == {"concurrent", "transfers"}
    assert heldout.shared_content("Which wine goes with salmon?", doc) == set()


@pytest.mark.parametrize("half", ["A", "B"])
def test_unrelated_questions_have_no_target(halves: dict[str, Built], half: str) -> None:
    data, _ = halves[half]
    assert not set(data.unrelated) & {q.text for q in data.questions}
    texts = [heldout.episode_text(r) for r in data.records]
    for question in data.unrelated:
        # no run is about it: at most one common word with any run (lexical questions: 2+)
        assert max(len(heldout.shared_content(question, t)) for t in texts) <= 1, question


@pytest.mark.parametrize("half", ["A", "B"])
def test_the_agents_named_exist_and_ran_the_target(halves: dict[str, Built], half: str) -> None:
    data, info = halves[half]
    runs = _records(data)
    agents = {r["agent"] for r in data.records}
    first_names = [p.split("-")[0] for p in PERSONS]
    assert len(set(first_names)) == len(first_names)  # a first name names one person
    asked = [(q, m) for q, m in zip(data.questions, info.meta_q, strict=True) if q.kind == "agent"]
    assert len(asked) == 12
    for q, meta in asked:
        agent = meta["agent"]
        assert agent in agents and runs[q.target]["agent"] == agent
        shown = agent.split("-")[0].capitalize() if agent in PERSONS else agent
        assert shown in q.text, (agent, q.text)
        kind = info.runs_meta[q.target]["kind"]
        assert kind == meta["target_is"] and info.runs_meta[q.target]["slug"] == meta["slug"]
    assert Counter(m["target_is"] for _, m in asked) == {"incident": 8, "twin": 4}


def test_a_half_is_a_pure_function_of_its_seed(halves: dict[str, Built]) -> None:
    again, info = heldout.build("B")
    assert again == halves["B"][0] and info == halves["B"][1]


# ---- the scoring -----------------------------------------------------------------------
def test_recall_and_mrr_per_kind_and_scope() -> None:
    questions = [
        RunQuestion("q1", "r1", "repo", "lexical"),
        RunQuestion("q2", "r2", "repo", "paraphrase"),
        RunQuestion("q3", "r3", "repo", "paraphrase"),
        RunQuestion("q4", "r4", "repo", "agent"),
    ]
    eleven = [f"x{n}" for n in range(10)] + ["r2"]
    detail = bench.Detail(
        questions=[
            {"own": ["r1", "x"], "all": ["x", "y", "r1"]},  # rank 1, then 3
            {"own": ["x", "r2"], "all": eleven},  # rank 2, then 11 (outside the top 10)
            {"own": [], "all": ["x"]},  # not found
            {"own": ["r4"], "all": ["x", "x", "x", "r4"]},
        ],
        unrelated=[[], ["x"], []],
    )
    out = bench.metrics(questions, detail)
    assert out["own:lexical"] == {"n": 1, "recall@10": 1.0, "mrr": 1.0}
    assert out["all:lexical"] == {"n": 1, "recall@10": 1.0, "mrr": 0.3333}
    assert out["own:paraphrase"] == {"n": 2, "recall@10": 0.5, "mrr": 0.25}
    assert out["all:paraphrase"] == {"n": 2, "recall@10": 0.0, "mrr": round(1 / 22, 4)}
    assert out["own:words"] == {"n": 3, "recall@10": 0.6667, "mrr": 0.5}
    assert out["all:agent"] == {"n": 1, "recall@10": 1.0, "mrr": 0.25}
    assert out["unrelated_answered"] == "1/3"
    assert bench.rank_of(eleven, "r2") == 11 and bench.rank_of(eleven, "r9") is None


def test_the_default_is_compared_question_by_question() -> None:
    questions = (
        RunQuestion("q1", "r1", "repo", "paraphrase"),
        RunQuestion("q2", "r2", "repo", "paraphrase"),
    )
    data = RunsSet("A", 1, (), questions, ())
    info = heldout.Info([{"slug": "one"}, {"slug": "two"}], [], {}, {}, {}, ["", ""])

    def detail(first: list[str], second: list[str]) -> bench.Detail:
        return bench.Detail([{"own": first, "all": first}, {"own": second, "all": second}])

    details = {
        "bm25": detail([], []),
        "cosine": detail(["x", "r1"], ["r2"]),
        "rrf60": detail(["x", "x", "r1"], []),
        "default": detail(["r1"], ["x", "r2"]),  # better on q1, worse on q2
    }
    rows = {name: bench.metrics(questions, d) for name, d in details.items()}
    out = bench.against_baselines(data, info, rows, details)
    assert out["per_question"]["own:paraphrase"] == {
        "default_better": 1,
        "default_worse": 1,
        "same": 0,
    }
    worse = [w for w in out["default_worse"] if w["where"] == "own"]
    assert worse == [
        {
            "question": "q2",
            "kind": "paraphrase",
            "where": "own",
            "incident": "two",
            "best_baseline": "cosine",
            "ranks": {"bm25": None, "cosine": 1, "rrf60": None, "default": 2},
        }
    ]
    cell = next(c for c in out["cells"] if c["cell"] == "own:paraphrase")
    assert cell["best_mrr_row"] == "cosine" and cell["mrr_delta"] == 0.0


def test_the_rows_are_the_benchmarks_and_the_diagnostics_are_marked() -> None:
    names = [row.name for row in bench.ROWS]
    assert names[:4] == ["bm25", "cosine", "rrf60", "default"]
    assert set(names[4:]) == set(bench.DIAGNOSTICS) == {"default-no-hubs", "default words_low=0.2"}
    low = next(row for row in bench.ROWS if row.name == "default words_low=0.2")
    assert low.store == "context" and low.options is not None and low.options.words_low == 0.2


def test_queries_are_embedded_by_the_shipped_model_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(query_model.ENV, raising=False)
    assert bench.queries_by_shipped_model() == "full"
    assert os.environ[query_model.ENV] == "full" and not query_model.wanted()
    monkeypatch.setenv(query_model.ENV, "int8")
    assert bench.queries_by_shipped_model() == "int8"


def test_restrict_keeps_the_first_repositories_runs_and_questions(
    halves: dict[str, Built],
) -> None:
    data, info = halves["A"]
    small, small_info = bench.restrict(data, info, 2)
    assert small.repos == data.repos[:2]
    assert {q.repo for q in small.questions} == set(data.repos[:2])
    assert len(small_info.meta_q) == len(small_info.docs) == len(small.questions)
    assert small.unrelated == data.unrelated
    runs = _records(small)
    assert all(q.target in runs for q in small.questions)


# ---- end to end ------------------------------------------------------------------------
@pytest.mark.slow
def test_one_repository_of_half_a_end_to_end() -> None:
    report = bench.run(("A",), repos=1)
    out = report["halves"]["A"]
    assert out["repositories"] == 1 and out["data_problems"] == []
    assert list(out["rows"]) == [row.name for row in bench.ROWS]
    # this loop scores each main row as bench_recall_sets' own does
    assert out["crosscheck_bench_ask"] == dict.fromkeys(bench.MAIN, "identical")
    n = out["questions"]
    for row in out["rows"].values():
        assert row["own:words"]["n"] == n["lexical"] + n["paraphrase"]
        assert row["all:agent"]["n"] == n["agent"] and row["latency_ms"]["n"] > 0
    # a paraphrase shares no word with its run: BM25 never returns the run at all
    assert out["rows"]["bm25"]["own:paraphrase"] == {
        "n": n["paraphrase"],
        "recall@10": 0.0,
        "mrr": 0.0,
    }
    assert report["queries"][query_model.ENV] == "full"
    text = bench.table(report)
    assert "| `default words_low=0.2` (*diagnostic*) |" in text
    assert "| `default` |" in text and "identical for bm25, cosine, rrf60, default" in text
