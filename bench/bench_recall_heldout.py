"""Episode recall on the held-out runs set (:mod:`bench.heldout_runs`), never used for tuning.

Set: :func:`bench.heldout_runs.data.build`, written on 2026-12-07 apart from
``bench/recall_sets.py`` and ``bench/common.py``: coding-agent runs in 10 repositories, two
halves (A: seed 4242, 327 runs; B: seed 777, 323 runs), each with 40 lexical questions (in the
run's own words), 40 paraphrases sharing no content word with the run, 12 questions naming the
agent, and 10 unrelated questions. Nothing was chosen on it: it measures, it does not tune.

Machinery: :mod:`bench.bench_recall_sets`'s own (its ``ROWS``, ``LIMIT`` = 20, ``_ingest``
into the same two stores: ``plain`` for the baselines, ``context`` for the defaults, and its
``rankings`` for each row), keeping every ranking so the scores can be split by question kind.
Every question is asked through ``MemoryService.recall`` twice: scoped to its repository
(``own``) and across all 10 (``all``). On the four main rows the scores here are checked
against the same rankings scored by ``bench_recall_sets.tally_of`` (``crosscheck_bench_ask``).

Rows:

- ``bm25``: BM25 alone (no embedder, no context, no cues).
- ``cosine``: cosine alone, a direct ``search_vector`` call over the same scopes.
- ``rrf60``: plain RRF (k = 60, equal weights), no context, no cues.
- ``default``: ``RankingOptions()`` with the calibration of the embedder (the product).

Diagnostics, not the default (:data:`DIAGNOSTICS`): ``default-no-hubs`` (``hub_weight`` 0)
and ``default words_low=0.2`` (``RankingOptions(words_low=0.2)``; the default is 0.15). They
are here to read, not to choose by: a change picked on these figures would make this a
development set.

Scores, per half and per row: recall@10 and MRR of the run each question is about, for
lexical, paraphrase and agent questions and for ``words`` (lexical and paraphrase together),
``own`` and ``all``; how many unrelated questions still got any answer (the relevance floor);
recall latency. Also where the default ranks a target below the best baseline, question by
question. Queries are embedded by the shipped model (``FLEETMEM_QUERY_MODEL=full`` is set
for this process unless it is already set), as in the other recall-quality benchmarks.

``python -m bench.bench_recall_heldout`` writes ``recall-heldout.json`` (about a minute on two
cores); ``--half A`` or ``--half B`` runs one half and writes ``recall-heldout-A.json`` or
``recall-heldout-B.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import bench_recall_sets as brs
from bench import recall_sets as rs
from bench.bench_locomo import DocumentCache, _app
from bench.common import latency_summary, query_path, write_result
from bench.heldout_runs import data as heldout
from fleetmem.core.ranking import calibration_for
from fleetmem.embed import query_model
from fleetmem.embed.local import LocalMiniLM
from fleetmem.providers.builtin import RankingOptions

NAME = "recall-heldout"
HALVES: tuple[str, ...] = tuple(heldout.SEEDS)
#: The rows the set is read by, from :data:`bench.bench_recall_sets.ROWS`.
MAIN = ("bm25", "cosine", "rrf60", "default")
BASELINES = ("bm25", "cosine", "rrf60")
#: Diagnostic rows, not the default: what each changes from it.
DIAGNOSTICS: dict[str, str] = {
    "default-no-hubs": "the default without the correction for hubs (hub_weight 0)",
    "default words_low=0.2": "the default with words_low 0.2 instead of 0.15",
}
ROWS: tuple[brs.Row, ...] = (
    *(r for r in brs.ROWS if r.name in MAIN or r.name in DIAGNOSTICS),
    brs.Row("default words_low=0.2", "context", RankingOptions(words_low=0.2)),
)
KINDS = ("lexical", "paraphrase", "agent")
#: Question groups scored: each kind, and ``words`` (lexical and paraphrase together).
GROUPS = (*KINDS, "words")
WHERE = ("own", "all")
CELLS = tuple(f"{w}:{g}" for w in WHERE for g in GROUPS)
#: bench_recall_sets' groups and ours: the cross-check compares these cells.
CROSSCHECK = {
    "own:words": "own:words",
    "all:words": "all:words",
    "own:paraphrase": "own:paraphrase",
    "all:paraphrase": "all:paraphrase",
    "own:cued": "own:agent",
    "all:cued": "all:agent",
}


def queries_by_shipped_model() -> str:
    """Embed queries by the shipped model in this process unless told otherwise."""
    os.environ.setdefault(query_model.ENV, "full")
    return os.environ[query_model.ENV]


#: One row's rankings for every question (kept, so scores can be split by kind).
Detail = brs.Rankings
#: Every question of a set asked of one row.
ask = brs.rankings


def rank_of(ranked: Sequence[str], target: str) -> int | None:
    """1-based rank of ``target`` in ``ranked``; None when it is not there."""
    return ranked.index(target) + 1 if target in ranked else None


def metrics(questions: Sequence[rs.RunQuestion], detail: Detail) -> dict[str, Any]:
    """recall@10 and MRR per cell (``own``/``all`` x group), unrelated questions answered."""
    table: dict[str, Any] = {}
    for where in WHERE:
        for group in GROUPS:
            kinds = ("lexical", "paraphrase") if group == "words" else (group,)
            hits: list[float] = []
            rr: list[float] = []
            for q, ranked in zip(questions, detail.questions, strict=True):
                if q.kind not in kinds:
                    continue
                r = rank_of(ranked[where], q.target)
                hits.append(float(r is not None and r <= 10))
                rr.append(1.0 / r if r else 0.0)
            table[f"{where}:{group}"] = {
                "n": len(rr),
                "recall@10": round(statistics.fmean(hits), 4) if rr else None,
                "mrr": round(statistics.fmean(rr), 4) if rr else None,
            }
    answered = sum(bool(r) for r in detail.unrelated)
    table["unrelated_answered"] = f"{answered}/{len(detail.unrelated)}"
    return table


def crosscheck(mine: dict[str, Any], bench: dict[str, Any]) -> str | dict[str, Any]:
    """ "identical" when ``bench_recall_sets.tally_of`` scored the rankings as :func:`metrics`
    did, else the cells that differ (theirs, ours)."""
    differ = {
        theirs: {"bench_recall_sets": bench.get(theirs), "here": mine[ours]}
        for theirs, ours in CROSSCHECK.items()
        if bench.get(theirs) != mine[ours]
    }
    if bench.get("unrelated_answered") != mine["unrelated_answered"]:
        differ["unrelated_answered"] = {
            "bench_recall_sets": bench.get("unrelated_answered"),
            "here": mine["unrelated_answered"],
        }
    return differ or "identical"


def against_baselines(
    data: rs.RunsSet, info: heldout.Info, rows: dict[str, Any], details: dict[str, Detail]
) -> dict[str, Any]:
    """Where the default stands against the best baseline: per cell, per question, and the
    questions it ranks lower than the best baseline does."""
    cells = []
    for cell in CELLS:
        best_mrr = max(BASELINES, key=lambda b: rows[b][cell]["mrr"] or 0.0)
        best_r10 = max(BASELINES, key=lambda b: rows[b][cell]["recall@10"] or 0.0)
        d = rows["default"][cell]
        if d["mrr"] is None:
            continue
        cells.append(
            {
                "cell": cell,
                "default_mrr": d["mrr"],
                "best_baseline_mrr": rows[best_mrr][cell]["mrr"],
                "best_mrr_row": best_mrr,
                "mrr_delta": round(d["mrr"] - rows[best_mrr][cell]["mrr"], 4),
                "default_r10": d["recall@10"],
                "best_baseline_r10": rows[best_r10][cell]["recall@10"],
                "best_r10_row": best_r10,
                "r10_delta": round(d["recall@10"] - rows[best_r10][cell]["recall@10"], 4),
            }
        )
    tally: dict[str, dict[str, int]] = {}
    worse = []
    for i, (q, meta) in enumerate(zip(data.questions, info.meta_q, strict=True)):
        for where in WHERE:
            ranks = {name: rank_of(d.questions[i][where], q.target) for name, d in details.items()}
            default = ranks["default"] or brs.LIMIT + 1
            best = min(BASELINES, key=lambda b: ranks[b] or brs.LIMIT + 1)
            baseline = ranks[best] or brs.LIMIT + 1
            counts = tally.setdefault(
                f"{where}:{q.kind}", {"default_better": 0, "default_worse": 0, "same": 0}
            )
            key = (
                "default_better"
                if default < baseline
                else "default_worse"
                if default > baseline
                else "same"
            )
            counts[key] += 1
            if default > baseline:
                worse.append(
                    {
                        "question": q.text,
                        "kind": q.kind,
                        "where": where,
                        "incident": meta.get("slug"),
                        "best_baseline": best,
                        "ranks": ranks,
                    }
                )
    return {"cells": cells, "per_question": tally, "default_worse": worse}


def restrict(data: rs.RunsSet, info: heldout.Info, repos: int) -> tuple[rs.RunsSet, heldout.Info]:
    """The set cut to its first ``repos`` repositories (their runs and questions; every
    unrelated question kept), for a quick run."""
    kept = set(data.repos[:repos])
    pairs = [(q, m) for q, m in zip(data.questions, info.meta_q, strict=True) if q.repo in kept]
    docs = [d for q, d in zip(data.questions, info.docs, strict=True) if q.repo in kept]
    small = replace(
        data,
        records=tuple(r for r in data.records if r["sessions"][0]["repo"] in kept),
        questions=tuple(q for q, _ in pairs),
    )
    return small, replace(info, meta_q=[m for _, m in pairs], docs=docs)


def run(halves: Sequence[str] = HALVES, repos: int | None = None) -> dict[str, Any]:
    """Measure every row on each half; ``repos`` cuts each half to its first repositories."""
    queries = queries_by_shipped_model()
    cache = DocumentCache(LocalMiniLM())
    scratch = Path(tempfile.mkdtemp(prefix="fleetmem-recall-heldout-"))
    report: dict[str, Any] = {
        "embedding_model": cache.model_id,
        "calibration": brs.vars_of(calibration_for(cache.model_id)),
        "queries": {query_model.ENV: queries, "embedded_by": query_path()},
        "limit": brs.LIMIT,
        "rows": list(MAIN),
        "diagnostic_rows_not_the_default": DIAGNOSTICS,
        "halves": {},
    }
    if repos is not None:
        report["repositories_kept"] = repos
    try:
        for half in halves:
            data, info = heldout.build(half)
            if repos is not None:
                data, info = restrict(data, info, repos)
            out: dict[str, Any] = {
                "seed": data.seed,
                "runs": len(data.records),
                "repositories": len(data.repos),
                "questions": {k: sum(q.kind == k for q in data.questions) for k in KINDS},
                "unrelated": len(data.unrelated),
                "data_problems": info.problems,
                "rows": {},
                "crosscheck_bench_ask": {},
            }
            details: dict[str, Detail] = {}
            for store in ("plain", "context"):
                options = RankingOptions(**brs.PLAIN) if store == "plain" else RankingOptions()
                app = _app(scratch / half / store)
                try:
                    started = time.perf_counter()
                    to_run = brs._ingest(app, data, options, cache)
                    out[f"ingest_s_{store}"] = round(time.perf_counter() - started, 2)
                    for row in ROWS:
                        if row.store != store:
                            continue
                        detail = ask(app, row, cache, data, to_run)
                        details[row.name] = detail
                        scores = metrics(data.questions, detail)
                        scores["latency_ms"] = latency_summary(detail.latencies_ms)
                        out["rows"][row.name] = scores
                        if row.name in MAIN:  # the same rankings scored as the benchmark does
                            theirs = brs.tally_of(data, detail).summary()
                            out["crosscheck_bench_ask"][row.name] = crosscheck(scores, theirs)
                finally:
                    app.close()
            out["default_vs_best_baseline"] = against_baselines(data, info, out["rows"], details)
            report["halves"][half] = out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def _cell(score: dict[str, Any]) -> str:
    if score["mrr"] is None:
        return "-"
    return f"{score['recall@10']:.3f} / {score['mrr']:.3f}"


def table(report: dict[str, Any]) -> str:
    """A Markdown table per half: recall@10 / MRR per cell, unrelated answered, p95 latency."""
    parts = []
    for half, out in report["halves"].items():
        q = out["questions"]
        parts.append(
            f"### Half {half} (seed {out['seed']}): {out['runs']} runs in "
            f"{out['repositories']} repositor{'y' if out['repositories'] == 1 else 'ies'}; "
            f"{q['lexical']} lexical, {q['paraphrase']} "
            f"paraphrased, {q['agent']} agent-naming and {out['unrelated']} unrelated questions"
        )
        parts.append("")
        parts.append(
            "Cells: recall@10 / MRR. `own`: within the target's repository; `all`: across "
            "every repository. Rows marked *diagnostic* are not the default."
        )
        parts.append("")
        head = ["row", *CELLS, "unrelated answered", "p95 ms"]
        parts.append("| " + " | ".join(head) + " |")
        parts.append("|" + "|".join([":---"] + ["---:"] * (len(head) - 1)) + "|")
        for name, row in out["rows"].items():
            label = f"`{name}`" + (" (*diagnostic*)" if name in DIAGNOSTICS else "")
            cells = [_cell(row[c]) for c in CELLS]
            p95 = row["latency_ms"].get("p95_ms", float("nan"))
            parts.append(
                "| " + " | ".join([label, *cells, row["unrelated_answered"], f"{p95:.1f}"]) + " |"
            )
        checks = out["crosscheck_bench_ask"]
        same = [n for n, v in checks.items() if v == "identical"]
        differ = [n for n, v in checks.items() if v != "identical"]
        parts.append("")
        line = f"Cross-check against `bench_recall_sets.tally_of`: identical for {', '.join(same)}"
        parts.append(line + (f"; DIFFERS for {', '.join(differ)}" if differ else "") + ".")
        if out["data_problems"]:
            parts.append(f"Data problems: {out['data_problems']}")
        parts.append("")
    return "\n".join(parts).rstrip()


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_recall_heldout")
    parser.add_argument("--half", choices=HALVES, help="run one half (default: both)")
    args = parser.parse_args(list(argv))
    halves = (args.half,) if args.half else HALVES
    started = time.perf_counter()
    report = run(halves)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    path = write_result(NAME, report, suffix=f"-{args.half}" if args.half else "")
    print(table(report))
    print(f"\n-> {path} ({report['wall_s']} s)")
    differs = any(
        v != "identical"
        for out in report["halves"].values()
        for v in out["crosscheck_bench_ask"].values()
    )
    problems = any(out["data_problems"] for out in report["halves"].values())
    return 1 if differs or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
