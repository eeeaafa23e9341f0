"""Choosing the hub correction of facts search on development sets, confirming it on others.

Facts search orders the facts that match by meaning by their cosine less
``HUB_WEIGHT * (neighbour similarity - mean)`` (:mod:`fleetmem.service.fact_hubs`). This lab
embeds each set once with the default offline model and scores, for every point of a grid of
(neighbours, weight), the share of paraphrased questions whose fact ranks in the top 3 by
the corrected cosine alone (no threshold, no words: the ranking the correction changes).

Sets (every question shares no content word with its fact):

* development: the lexicon's dev half of :func:`bench.recall_sets.facts_set` (25 targets
  among 520 generated team facts) at three seeds, and the 164 facts of
  ``tests/data/facts_paraphrase.json`` with 336 generated facts (98 questions);
* confirmation: the lexicon's confirm half at three seeds; the 164 facts with 1,836
  generated ones of another seed; the 214 hand-written facts of both (every target fact,
  no generated one: 148 questions); the same with the set's rewordings and 300 generated
  facts.

The point chosen is the best mean top-3 over the development sets; the confirmation sets
are read only for the report. ``python -m bench.fact_hubs_lab`` writes
``bench/results/fact-hubs.json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench import recall_lexicon as lex
from bench import recall_sets as rs
from bench.bench_facts import DATA, synthetic_facts
from bench.common import write_result
from fleetmem.embed.local import LocalMiniLM
from fleetmem.service.fact_hubs import HUB_WEIGHT, NEIGHBOURS, adjusted, neighbour_similarity

NEIGHBOUR_GRID = (3, 5, 10, 20)
WEIGHT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class LabSet:
    name: str
    bodies: list[str]
    pairs: list[tuple[str, str]]  # (question, the fact's body)


def sets() -> dict[str, list[LabSet]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    labelled = [f["body"] for f in data["facts"]]
    by_id = {f["id"]: f["body"] for f in data["facts"]}
    asked = [(q["query"], by_id[q["fact"]]) for q in data["queries"]]
    every = list(labelled)
    every_asked = list(asked)
    for half in rs.HALVES:
        for fact, question in lex.FACTS[half]:
            every.append(fact)
            every_asked.append((question, fact))
    rewordings = [d["body"] for d in data["duplicates"]]
    out: dict[str, list[LabSet]] = {"dev": [], "confirm": []}
    for half in rs.HALVES:
        for seed in SEEDS:
            x = rs.facts_set(half, seed)
            out[half].append(
                LabSet(
                    f"{half} seed {seed}", list(x.bodies), [(q.text, q.target) for q in x.questions]
                )
            )
    out["dev"].append(LabSet("labelled + 336", labelled + synthetic_facts(336), asked))
    out["confirm"].append(
        LabSet("labelled + 1836", labelled + synthetic_facts(1836, seed=7), asked)
    )
    out["confirm"].append(LabSet("hand-written only", every, every_asked))
    out["confirm"].append(
        LabSet(
            "hand-written + rewordings + 300",
            every + rewordings + synthetic_facts(300, seed=9),
            every_asked,
        )
    )
    return out


def _top3(cosines: np.ndarray, gold: np.ndarray) -> float:
    right = cosines[np.arange(len(gold)), gold]
    return float(np.mean((cosines > right[:, None]).sum(axis=1) < 3))


def run() -> dict[str, Any]:
    embed = LocalMiniLM().embed  # batches (by length) itself
    prepared = {}
    for half, members in sets().items():
        for s in members:
            index = {body: i for i, body in enumerate(s.bodies)}
            facts = embed(s.bodies)
            questions = embed([q for q, _ in s.pairs])
            gold = np.array([index[body] for _, body in s.pairs])
            prepared[s.name] = (half, facts, questions @ facts.T, gold)
    grid = []
    for k in NEIGHBOUR_GRID:
        neighbours = {name: neighbour_similarity(p[1], k) for name, p in prepared.items()}
        for weight in WEIGHT_GRID:
            if weight == 0 and k != NEIGHBOUR_GRID[0]:
                continue  # the same plain cosine at every k
            row: dict[str, Any] = {"neighbours": k, "weight": weight, "top3": {}}
            for name, (_, _, cosines, gold) in prepared.items():
                ranked = np.stack([adjusted(c, neighbours[name], weight) for c in cosines])
                row["top3"][name] = round(_top3(ranked, gold), 3)
            for half in ("dev", "confirm"):
                names = [n for n, p in prepared.items() if p[0] == half]
                row[f"{half}_mean"] = round(float(np.mean([row["top3"][n] for n in names])), 3)
            grid.append(row)
    best = max(grid, key=lambda r: (r["dev_mean"], -r["weight"]))
    plain = next(r for r in grid if r["weight"] == 0)
    shipped = next(r for r in grid if r["neighbours"] == NEIGHBOURS and r["weight"] == HUB_WEIGHT)
    return {
        "sets": {n: {"half": p[0], "facts": int(p[1].shape[0]), "questions": len(p[3])}
                 for n, p in prepared.items()},
        "chosen_on_dev": {"neighbours": best["neighbours"], "weight": best["weight"]},
        "shipped": {"neighbours": NEIGHBOURS, "weight": HUB_WEIGHT},
        "plain": plain,
        "shipped_row": shipped,
        "grid": grid,
    }  # fmt: skip


def main(argv: Sequence[str] = ()) -> int:
    report = run()
    path = write_result("fact-hubs", report)
    names = list(report["sets"])
    print("neighbours weight  dev  conf  " + "  ".join(names))
    for row in sorted(report["grid"], key=lambda r: -r["dev_mean"]):
        cells = "  ".join(f"{row['top3'][n]:.3f}" for n in names)
        means = f"{row['dev_mean']:.3f} {row['confirm_mean']:.3f}"
        print(f"{row['neighbours']:>10} {row['weight']:>6.2f} {means}  {cells}")
    print(f"chosen on dev: {report['chosen_on_dev']}; shipped: {report['shipped']} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
