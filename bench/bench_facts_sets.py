"""Facts search on paraphrased questions among 520 distractors: dev and confirm sets.

:func:`bench.recall_sets.facts_set` builds each set (the lexicon's dev or confirm half of 25
target facts, each asked by a question sharing no content word with it, shuffled among 520
generated team facts). Every fact is written with ``FactService.add`` into a fresh workspace
with the offline embedder, and every question asked with ``FactService.search``, so the
answer is the product's: meaning above the search threshold fused with literal matches.

Reported per set: top-1/3/10 accuracy, how many unrelated questions still got a hit, and the
calibration curve the search threshold is read from (cosine alone: for each threshold, the
share of targets in the top 3 and above it, and of unrelated questions with any fact above
it), beside the seed's 0.55.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import recall_sets as rs
from bench.bench_facts import _open, _populate
from bench.common import latency_summary, write_result

THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.1, 0.61, 0.05))


def _calibration(app: Any, data: rs.FactsSet) -> dict[str, Any]:
    embed = app.embedder.embed
    bodies = list(data.bodies)
    index = {b: i for i, b in enumerate(bodies)}
    facts = np.concatenate([embed(bodies[i : i + 64]) for i in range(0, len(bodies), 64)])
    queries = embed([q.text for q in data.questions])
    unrelated = embed(list(data.unrelated))
    gold = np.array([index[q.target] for q in data.questions])
    sims = queries @ facts.T
    gold_sims = sims[np.arange(len(gold)), gold]
    ranks = (sims > gold_sims[:, None]).sum(axis=1)
    worst = (unrelated @ facts.T).max(axis=1)
    curve = [
        {
            "threshold": t,
            "top3": round(float(((ranks < 3) & (gold_sims >= t)).mean()), 3),
            "unrelated_with_a_hit": round(float((worst >= t).mean()), 3),
        }
        for t in THRESHOLDS
    ]
    return {
        "cosine_top3_without_threshold": round(float((ranks < 3).mean()), 3),
        "gold_cosine_min_median": [
            round(float(gold_sims.min()), 3),
            round(float(np.median(gold_sims)), 3),
        ],
        "unrelated_best_cosine_median_max": [
            round(float(np.median(worst)), 3),
            round(float(worst.max()), 3),
        ],
        "curve": curve,
    }


def run(halves: Sequence[str] = rs.HALVES) -> dict[str, Any]:
    seeds = {"dev": rs.DEV_SEED, "confirm": rs.CONFIRM_SEED}
    base = Path(tempfile.mkdtemp(prefix="fleetmem-facts-sets-"))
    report: dict[str, Any] = {"sets": {}}
    try:
        for half in halves:
            data = rs.facts_set(half, seeds[half])
            app, facts, clock = _open(base / half)
            try:
                ids = _populate(app, facts, clock, list(data.bodies))
                ranks: list[int | None] = []
                latencies = []
                for q in data.questions:
                    started = time.perf_counter()
                    hits = facts.search(q.text).hits
                    latencies.append(1000 * (time.perf_counter() - started))
                    got = [h.fact.id for h in hits]
                    target = ids[q.target]
                    ranks.append(got.index(target) if target in got else None)
                n = len(ranks)
                answered = sum(1 for u in data.unrelated if facts.search(u).hits)
                report["embedding_model"] = app.embedder.model_id
                report["thresholds"] = dataclasses.asdict(facts.thresholds())
                report["sets"][half] = {
                    "seed": seeds[half],
                    "facts": len(data.bodies),
                    "questions": n,
                    "top1": round(sum(r is not None and r < 1 for r in ranks) / n, 3),
                    "top3": round(sum(r is not None and r < 3 for r in ranks) / n, 3),
                    "top10": round(sum(r is not None and r < 10 for r in ranks) / n, 3),
                    "unrelated_with_a_hit": f"{answered}/{len(data.unrelated)}",
                    "search_ms": latency_summary(latencies),
                    "calibration": _calibration(app, data),
                }
            finally:
                facts.close()
                app.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return report


def main(argv: Sequence[str] = ()) -> int:
    report = run()
    path = write_result("facts-sets", report)
    for half, s in report["sets"].items():
        print(
            f"{half:8} facts={s['facts']} q={s['questions']} top1={s['top1']:.3f}"
            f" top3={s['top3']:.3f} top10={s['top10']:.3f}"
            f" unrelated answered {s['unrelated_with_a_hit']}"
            f" p95 {s['search_ms'].get('p95_ms', 0):.1f} ms"
        )
        for point in s["calibration"]["curve"]:
            print(
                f"    t={point['threshold']:.2f} top3={point['top3']:.3f}"
                f" unrelated={point['unrelated_with_a_hit']:.3f}"
            )
    print(f"thresholds in force: {report.get('thresholds')} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
