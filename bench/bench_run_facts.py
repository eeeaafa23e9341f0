"""The right facts per run: does a one-shot's facts block hold the fact its prompt is about?

Over 164 labelled facts plus synthetic distractors (``--facts``, at least 500 in all), two
labelled sets of one-shot task prompts, each ending with 20 prompts no fact should match:

* ``paraphrase``: each labelled query of ``tests/data/facts_paraphrase.json`` (it shares no
  content word with its fact) wrapped into a task ("Fix the retry loop in billing; mind
  {query}.");
* ``named``: for each labelled fact, two of its own content words drawn at random, put into
  a task that names them as its subject ("Fix the {a} {b} problem."), the way a person names
  what a task is about ("Fix the flaky ledger test").

For each prompt, the run's relevant facts are picked as a real run picks them
(:func:`fleetmem.service.context_facts.relevant_facts`: by meaning at or above a floor, by the
prompt's words, or as the one fact holding a pair of its words; at most 8, then the
1,200-token facts budget, whole facts only), and two figures are reported:

* ``delivered``: the share of labelled prompts whose fact is in the block (target >= 0.9);
* ``unrelated``: facts in the block other than the labelled one, per run, over every prompt,
  the unrelated ones included (target <= 1).

Each set is split in two halves (even and odd positions, each with its own task templates).
Three modes are measured (:data:`MODES`): in use, before 2026-12-05 (the prompt's own search
alone at floor 0.75), and by words alone (a hook answering in its own process); and the mode
in use over a floor grid, with the lowest floor whose unrelated count is at most 1 on both
sets' dev halves reported as ``chosen_on_dev``. Uses the default offline embedder.
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
from bench.common import machine

FACTS = 520
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


NAMED_TEMPLATES = {
    "dev": [
        "Fix the {a} {b} problem.",
        "Update how we do {a} for {b}.",
        "Add tests for the {a} {b} code.",
    ],
    "confirm": [
        "Something about {b} and {a} is broken; fix it.",
        "Review the {a} handling around {b}.",
        "Please clean up {a} in the {b} module.",
    ],
}

Prompts = dict[str, list[tuple[str, str | None]]]


def _prompts(data: dict[str, Any], rng: random.Random) -> Prompts:
    halves: Prompts = {"dev": [], "confirm": []}
    for i, q in enumerate(data["queries"]):
        half = "dev" if i % 2 == 0 else "confirm"
        halves[half].append((rng.choice(TEMPLATES[half]).format(q=q["query"]), q["fact"]))
    for i, q in enumerate(data["negatives"]):
        half = "dev" if i % 2 == 0 else "confirm"
        halves[half].append((rng.choice(TEMPLATES[half]).format(q=q["query"]), None))
    return halves


def _named(data: dict[str, Any], rng: random.Random) -> Prompts:
    """Each labelled fact named by two of its own content words (longer than 3 letters)."""
    from fleetmem.core.textquery import terms

    halves: Prompts = {"dev": [], "confirm": []}
    for i, fact in enumerate(data["facts"]):
        words = sorted(w for w in terms(fact["body"]) if len(w) > 3 and w.isalpha())
        if len(words) < 2:
            continue
        a, b = rng.sample(words, 2)
        half = "dev" if i % 2 == 0 else "confirm"
        halves[half].append((rng.choice(NAMED_TEMPLATES[half]).format(a=a, b=b), fact["id"]))
    for i, q in enumerate(data["negatives"]):
        half = "dev" if i % 2 == 0 else "confirm"
        template = rng.choice(NAMED_TEMPLATES[half])
        halves[half].append((template.format(a=q["query"], b="service"), None))
    return halves


#: How a run's facts are searched: as in use (the daemon, ``fleetmem run``), as before the
#: focus pairs (the prompt's own search alone, floor 0.75), and by words alone (a hook in
#: its own process). ``floor`` None: the floor in use (or the grid's).
MODES: dict[str, dict[str, Any]] = {
    "in_use": {},
    "before": {"focus_pairs": 0, "floor": 0.75},
    "words_only": {"by_meaning": False},
}
GRID = [0.7, 0.75, 0.8, 0.85, 0.9]


def _blocks(
    facts: Any, prompts: list[tuple[str, str | None]], mode: str, floor: float | None = None
) -> list[list[tuple[str, float]]]:
    """Per prompt, the (fact id, score) pairs a run would be offered, searched as ``mode``
    says (:data:`MODES`), at ``floor`` when given."""
    from fleetmem.service.context_facts import relevant_facts

    options: dict[str, Any] = dict(MODES[mode])
    if floor is not None:
        options["floor"] = floor
    return [
        [(i.fact_id, i.score) for i in relevant_facts(facts, p, agent=AGENT, repo=None, **options)]
        for p, _ in prompts
    ]


def _score(
    offered: list[list[tuple[str, float]]],
    prompts: list[tuple[str, str | None]],
    by_key: dict[str, str],
    bodies: dict[str, str],
) -> dict[str, float]:
    from fleetmem.core.budget import truncate_feed
    from fleetmem.tokenize import get_tokenizer

    codec = get_tokenizer()
    labelled = hit = unrelated = 0
    for pairs, (_, key) in zip(offered, prompts, strict=True):
        ids = [i for i, _ in pairs]  # the floor was applied by the selection
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
    from fleetmem.service.context_facts import FOCUS_MAX_FACTS, FOCUS_PAIRS, RELEVANCE_FLOOR

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
        sets = {"paraphrase": _prompts(data, rng), "named": _named(data, rng)}
        halves = ("dev", "confirm")
        count = sum(len(p) for h in sets.values() for p in h.values())

        def measure(mode: str, floor: float | None = None) -> tuple[dict[str, Any], float]:
            began = time.monotonic()
            figures = {
                f"{name}/{half}": _score(
                    _blocks(facts, sets[name][half], mode, floor), sets[name][half], by_key, bodies
                )
                for name in sets
                for half in halves
            }
            return figures, (time.monotonic() - began) * 1000 / count

        modes, per_prompt_ms = {}, {}
        for mode in MODES:
            modes[mode], spent = measure(mode)
            per_prompt_ms[mode] = round(spent, 1)
        grid = {str(f): measure("in_use", f)[0] for f in GRID}
        chosen = next(
            (
                f
                for f in GRID
                if all(grid[str(f)][f"{n}/dev"]["unrelated_per_run"] <= 1.0 for n in sets)
            ),
            GRID[-1],
        )
        app.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "seed": seed,
        "facts": len(ids),
        "prompts": {f"{n}/{h}": len(p) for n, halves in sets.items() for h, p in halves.items()},
        "populate_s": round(populated, 1),
        "ms_per_prompt": per_prompt_ms,
        "chosen_on_dev": chosen,
        "floor_in_use": RELEVANCE_FLOOR,
        "focus": {"max_facts": FOCUS_MAX_FACTS, "pairs": FOCUS_PAIRS},
        "modes": modes,
        "grid": grid,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=FACTS)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    result = {**run(args.facts, args.seed), "machine": machine()}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
