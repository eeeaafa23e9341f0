"""Would episode recall gain from the correction for hubs that facts search uses? A lab, not
a product path: cosine ranking alone, with and without the correction.

:mod:`fleetmem.service.fact_hubs` orders facts by their cosine less a share of how close
each sits to its nearest neighbours. Episodes are where a fleet's texts are most alike (a
repository's routine runs), so the same correction is measured here on:

* the coding-agent runs of :func:`bench.recall_sets.runs_set` (both halves, their
  paraphrased questions, i.e. every kind but ``lexical``), within the question's repository
  (``own``) and across all repositories (``all``); neighbours are looked for among the
  episodes searched;
* LoCoMo (``--conversations N``, categories 1-4, turn-level evidence), one conversation at a
  time.

Texts are embedded as they are written (a run's result text, a turn's line), not through
the built-in provider's document text, so the figures compare the orders, not the product.
``python -m bench.episode_hubs_lab`` writes ``bench/results/episode-hubs.json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench import recall_sets as rs
from bench.bench_locomo import load
from bench.common import write_result
from fleetmem.embed.local import LocalMiniLM
from fleetmem.service.fact_hubs import adjusted, neighbour_similarity

POINTS = ((0, 0.0), (3, 0.2), (3, 0.4), (10, 0.4), (20, 0.4))
CATEGORIES = (1, 2, 3, 4)


def runs(embed: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for half in rs.HALVES:
        data = rs.runs_set(half, rs.DEV_SEED if half == "dev" else rs.CONFIRM_SEED)
        ids = [r["run_id"] for r in data.records]
        repo = np.array([r["sessions"][0]["repo"] for r in data.records])
        docs = embed([r["result_text"] for r in data.records])
        asked = [q for q in data.questions if q.paraphrase]
        queries = embed([q.text for q in asked])
        # The episodes a question searches: its repository's ("own"), or every one ("all").
        searched_by = {
            "own": {r: np.flatnonzero(repo == r) for r in set(repo.tolist())},
            "all": {"*": np.arange(len(ids))},
        }
        for where, searched_in in searched_by.items():
            for k, weight in POINTS:
                # Each searched set's neighbour similarities, once per point.
                neighbours = (
                    {key: neighbour_similarity(docs[at], k) for key, at in searched_in.items()}
                    if weight
                    else {}
                )
                reciprocal, within = [], []
                for qi, q in enumerate(asked):
                    key = q.repo if where == "own" else "*"
                    searched = searched_in[key]
                    scores = docs[searched] @ queries[qi]
                    if weight:
                        scores = adjusted(scores, neighbours[key], weight)
                    target = int(np.flatnonzero(searched == ids.index(q.target))[0])
                    rank = int((scores > scores[target]).sum())
                    reciprocal.append(1 / (rank + 1))
                    within.append(rank < 10)
                out[f"runs {half} {where} k={k} w={weight}"] = {
                    "questions": len(asked),
                    "mrr": round(float(np.mean(reciprocal)), 3),
                    "recall@10": round(float(np.mean(within)), 3),
                }
    return out


def locomo(embed: Any, conversations: int) -> dict[str, Any]:
    tallies: dict[tuple[int, float], list[tuple[float, float]]] = {p: [] for p in POINTS}
    for conv in load()[:conversations]:
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        docs = embed([t.text for t in conv.turns])
        asked = [
            q
            for q in conv.questions
            if q.category in CATEGORIES and any(e in index for e in q.evidence)
        ]
        cosines = embed([q.text for q in asked]) @ docs.T
        for k, weight in POINTS:
            neighbours = neighbour_similarity(docs, k) if weight else None
            for qi, q in enumerate(asked):
                scores = (
                    cosines[qi] if neighbours is None else adjusted(cosines[qi], neighbours, weight)
                )
                order = np.argsort(-scores)
                evidence = {index[e] for e in q.evidence if e in index}
                found = len(evidence & set(order[:10].tolist())) / len(evidence)
                first = min(int(np.flatnonzero(order == e)[0]) for e in evidence)
                tallies[(k, weight)].append((found, 1 / (first + 1)))
    return {
        f"locomo k={k} w={weight}": {
            "questions": len(rows),
            "recall@10": round(float(np.mean([r[0] for r in rows])), 3),
            "mrr": round(float(np.mean([r[1] for r in rows])), 3),
        }
        for (k, weight), rows in tallies.items()
    }


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    args = parser.parse_args(list(argv))
    embed = LocalMiniLM().embed  # batches (by length) itself
    report = {**runs(embed), **locomo(embed, args.conversations)}
    path = write_result("episode-hubs", {"points": report})
    for name, row in report.items():
        print(f"{name:32} MRR {row['mrr']:.3f}  R@10 {row['recall@10']:.3f}  n={row['questions']}")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
