"""The right facts per run: does a one-shot's facts block hold the fact its prompt is about?

Over 164 labelled facts plus synthetic distractors (``--facts``, at least 500 in all), each
labelled paraphrase query of ``tests/data/facts_paraphrase.json`` is wrapped into a one-shot
task prompt ("Fix the retry loop in billing; mind {query}."), and the 20 unrelated queries
likewise (no fact should match them). For each prompt, the run's relevant facts are picked as
a real run picks them (:func:`fleetmem.service.context_facts.relevant_facts`: the fact search,
at most 8 at or above a floor, then the 1,200-token facts budget, whole facts only), and two
figures are reported per floor on a 0.05 grid:

* ``delivered``: the share of labelled prompts whose fact is in the block (target >= 0.9);
* ``unrelated``: facts in the block other than the labelled one, per run, over every prompt,
  the unrelated ones included (target <= 1).

The prompts are split in two halves by query (even and odd positions, each with its own
wrapping templates): the floor is chosen on the ``dev`` half (the lowest floor whose
unrelated count is at most 1) and reported on the ``confirm`` half. The floor in use,
``RELEVANCE_FLOOR``, is reported beside it. Uses the default offline embedder.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_facts import DATA, _open, _populate, synthetic_facts

FACTS = 520
GRID = [round(0.5 + 0.05 * i, 2) for i in range(10)]
AGENT = "bench-agent"
BLOCK_BUDGET = 1200

# Task prompts a person gives a one-shot, each naming the topic of the labelled query.
TEMPLATES = {
    "dev": [
        "Fix the failing build; keep in mind the {q}.",
        "Refactor the module that deals with {q}.",
        "Write tests around {q} and make them pass.",
        "I need a change related to {q}. Open a pull request.",
        "Look into {q} and tell me what needs to change.",
    ],
    "confirm": [
        "Please update the code for {q} and run the checks.",
        "Something is off with {q}; investigate and fix it.",
        "Add docs about {q} to the README.",
        "Review how we handle {q} and clean it up.",
        "Implement the next step for {q}, with tests.",
    ],
}


def _prompts(data: dict[str, Any], rng: random.Random) -> dict[str, list[tuple[str, str | None]]]:
    halves: dict[str, list[tuple[str, str | None]]] = {"dev": [], "confirm": []}
    for i, q in enumerate(data["queries"]):
        half = "dev" if i % 2 == 0 else "confirm"
        halves[half].append((rng.choice(TEMPLATES[half]).format(q=q["query"]), q["fact"]))
    for i, q in enumerate(data["negatives"]):
        half = "dev" if i % 2 == 0 else "confirm"
        halves[half].append((rng.choice(TEMPLATES[half]).format(q=q["query"]), None))
    return halves


def _blocks(facts: Any, prompts: list[tuple[str, str | None]]) -> list[list[tuple[str, float]]]:
    """Per prompt, the (fact id, score) pairs a run would be offered with no floor."""
    from fleetmem.service.context_facts import relevant_facts

    return [
        [(i.fact_id, i.score) for i in relevant_facts(facts, p, agent=AGENT, repo=None, floor=0.0)]
        for p, _ in prompts
    ]


def _score(
    offered: list[list[tuple[str, float]]],
    prompts: list[tuple[str, str | None]],
    by_key: dict[str, str],
    bodies: dict[str, str],
    floor: float,
) -> dict[str, float]:
    from fleetmem.core.budget import truncate_feed
    from fleetmem.tokenize import get_tokenizer

    codec = get_tokenizer()
    labelled = hit = unrelated = 0
    for pairs, (_, key) in zip(offered, prompts, strict=True):
        ids = [i for i, s in pairs if s >= floor]
        lines = [f"- {bodies[i]} (fact {i})" for i in ids]
        kept = truncate_feed(lines, BLOCK_BUDGET, codec).delivered
        shown = [i for i in ids if f"(fact {i})" in kept]
        target = by_key.get(key) if key else None
        if key is not None:
            labelled += 1
            hit += target in shown
        unrelated += sum(1 for i in shown if i != target)
    return {
        "delivered": round(hit / max(labelled, 1), 3),
        "unrelated_per_run": round(unrelated / len(prompts), 3),
        "labelled": labelled,
        "runs": len(prompts),
    }


def run(n_facts: int = FACTS, seed: int | None = None) -> dict[str, Any]:
    from fleetmem.service.context_facts import RELEVANCE_FLOOR

    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    labelled_bodies = [f["body"] for f in data["facts"]]
    distractors = [b for b in synthetic_facts(n_facts, seed=seed) if b not in labelled_bodies][
        : max(0, n_facts - len(labelled_bodies))
    ]
    base = Path(tempfile.mkdtemp(prefix="fleetmem-bench-run-facts-"))
    try:
        app, facts, clock = _open(base / "home")
        began = time.monotonic()
        ids = _populate(app, facts, clock, labelled_bodies + distractors)
        populated = time.monotonic() - began
        by_key = {f["id"]: ids[f["body"]] for f in data["facts"]}
        bodies = {v: k for k, v in ids.items()}
        halves = _prompts(data, rng)
        offered = {h: _blocks(facts, p) for h, p in halves.items()}
        grid = {
            h: {str(f): _score(offered[h], halves[h], by_key, bodies, f) for f in GRID}
            for h in halves
        }
        chosen = next(
            (f for f in GRID if grid["dev"][str(f)]["unrelated_per_run"] <= 1.0), GRID[-1]
        )
        in_use = {h: _score(offered[h], halves[h], by_key, bodies, RELEVANCE_FLOOR) for h in halves}
        app.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "seed": seed,
        "facts": len(ids),
        "prompts": {h: len(p) for h, p in halves.items()},
        "populate_s": round(populated, 1),
        "chosen_on_dev": chosen,
        "floor_in_use": RELEVANCE_FLOOR,
        "in_use": in_use,
        "grid": grid,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=FACTS)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    print(json.dumps(run(args.facts, args.seed), indent=1))


if __name__ == "__main__":
    main()
