"""Facts: list and search speed at 2,000 facts, and the quality of calibrated search.

One temporary ``FLEETMEM_HOME`` with ``embedding_model = "local:minilm"``. The workspace holds
the 164 facts of the labelled set (``tests/data/facts_paraphrase.json``) plus synthetic
coding-team facts (deterministic, built from :mod:`bench.common`'s fleet vocabulary) up to
2,000, all written through ``FactService.add`` (their vectors are embedded in batches first
and land in fleetmem's own embedding cache, which ``add`` then finds). ``--quick``:
:data:`QUICK_SIZE` facts and :data:`QUICK_REPEATS` repeats, for catching regressions.

Speed, each beside its physical baseline measured in the same run:

* the list's first page (``FactService.list``, 50 rows) against the bare SQL query behind it;
* a search (``FactService.search``: query embedding, cosine over every fact's vector, literal
  matching, fusion) against one query embedding alone, a numpy cosine over the same 2,000
  vectors alone, and a bare SQL substring scan (``LIKE``) over the same rows;
* the facts block of a run with a query (seed 003 NFR-2 allows 2,000 ms).

Quality: top-1/top-3/top-10 accuracy of the calibrated search on the labelled paraphrase
queries (no query shares a content word with its fact), over the labelled facts alone and
over the whole 2,000; how many unrelated queries still get a hit; and the calibration curve
behind the thresholds (docs/facts.md explains the rules).
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import CAUSES, FEATURES, FIXES, MODULES, REPOS, SYMPTOMS, latency_summary
from bench.common import ROOT as _ROOT

DATA = _ROOT / "tests" / "data" / "facts_paraphrase.json"
CONFIG = '[model_api]\nembedding_model = "local:minilm"\n'
SIZE = 2000
#: ``--quick``: the labelled set plus distractors, and fewer timed repeats per operation.
QUICK_SIZE = 300
QUICK_REPEATS = 30
EMBED_BATCH = 64


class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def synthetic_facts(n: int, seed: int = 20261129) -> list[str]:
    """``n`` distinct, plausible facts a coding team would keep."""
    rng = random.Random(seed)
    shapes = (
        "In {repo}, {pkg}/{mod}: the {symptom} came from {cause}; we {fix}.",
        "{repo} owns {pkg}/{mod}; changes there need a review from its owner.",
        "Before touching {pkg}/{mod} in {repo}, run its tests twice: the {symptom} is known.",
        "The {feature} work in {repo} lives behind a flag until {pkg} is migrated.",
        "When the {symptom} shows up in {repo}, check whether {cause}.",
        "{repo}: {pkg}/{mod} is deprecated; new code goes to {pkg2}/{mod2}.",
    )
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        repo = rng.choice(REPOS)
        pkg = rng.choice(repo.packages)
        pkg2 = rng.choice(repo.packages)
        text = rng.choice(shapes).format(
            repo=repo.name,
            pkg=pkg,
            mod=rng.choice(MODULES[pkg]),
            pkg2=pkg2,
            mod2=rng.choice(MODULES[pkg2]),
            symptom=rng.choice(SYMPTOMS),
            cause=rng.choice(CAUSES),
            fix=rng.choice(FIXES),
            feature=rng.choice(FEATURES),
        )
        text = text[0].upper() + text[1:]
        if text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out


def _open(home: Path) -> tuple[Any, Any, _Clock]:
    from fleetmem.service.bootstrap import build
    from fleetmem.service.facts import FactService

    home.mkdir(parents=True, exist_ok=True)
    (home / "fleetmem.toml").write_text(CONFIG, encoding="utf-8")
    app = build(home, {"HOME": str(home)})
    clock = _Clock()
    facts = FactService(
        store=app.store, settings=lambda: app.config.current, embedder=app.embedder, clock=clock
    )
    return app, facts, clock


def _populate(app: Any, facts: Any, clock: _Clock, bodies: list[str]) -> dict[str, str]:
    from fleetmem.core.episode import content_hash
    from fleetmem.core.facts import Actor

    model = app.embedder.model_id
    for start in range(0, len(bodies), EMBED_BATCH):
        chunk = bodies[start : start + EMBED_BATCH]
        for body, vector in zip(chunk, app.embedder.embed(chunk), strict=True):
            app.store.cache_embedding(content_hash(body), model, vector)
    actor = Actor("human", "bench")
    ids = {}
    for body in bodies:
        clock.now += 1.5  # under the 60-writes-a-minute limit
        ids[body] = facts.add(body, actor=actor).fact.id
    return ids


def _accuracy(facts: Any, data: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    by_key = {f["id"]: ids[f["body"]] for f in data["facts"]}
    ranks: list[int | None] = []
    for q in data["queries"]:
        got = [h.fact.id for h in facts.search(q["query"]).hits]
        target = by_key[q["fact"]]
        ranks.append(got.index(target) if target in got else None)
    n = len(ranks)
    negatives = [len(facts.search(q["query"]).hits) for q in data["negatives"]]
    return {
        "queries": n,
        "top1": round(sum(r is not None and r < 1 for r in ranks) / n, 3),
        "top3": round(sum(r is not None and r < 3 for r in ranks) / n, 3),
        "top10": round(sum(r is not None and r < 10 for r in ranks) / n, 3),
        "found_at_all": round(sum(r is not None for r in ranks) / n, 3),
        "negatives": len(negatives),
        "negatives_with_a_hit": sum(1 for k in negatives if k),
    }


def _calibration(app: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The curve behind the thresholds: cosine alone, no literal matching."""
    embed = app.embedder.embed
    facts = embed([f["body"] for f in data["facts"]])
    index = {f["id"]: i for i, f in enumerate(data["facts"])}
    queries = embed([q["query"] for q in data["queries"]])
    negatives = embed([q["query"] for q in data["negatives"]])
    gold = np.array([index[q["fact"]] for q in data["queries"]])
    sims = queries @ facts.T
    gold_sims = sims[np.arange(len(gold)), gold]
    ranks = (sims > gold_sims[:, None]).sum(axis=1)
    worst_negative = (negatives @ facts.T).max(axis=1)
    curve = []
    for t in np.round(np.arange(0.15, 0.601, 0.05), 2):
        curve.append(
            {
                "threshold": float(t),
                "top3": round(float(((ranks < 3) & (gold_sims >= t)).mean()), 3),
                "negatives_with_a_hit": round(float((worst_negative >= t).mean()), 3),
            }
        )
    return {
        "top3_without_threshold": round(float((ranks < 3).mean()), 3),
        "gold_cosine_median": round(float(np.median(gold_sims)), 3),
        "negative_best_cosine_median": round(float(np.median(worst_negative)), 3),
        "seed_search_threshold_0_55_top3": round(
            float(((ranks < 3) & (gold_sims >= 0.55)).mean()), 3
        ),
        "curve": curve,
    }


def _time(fn: Any, repeats: int) -> dict[str, float | int]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000.0)
    return latency_summary(samples)


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    from fleetmem.core.facts import LIVE
    from fleetmem.embed.base import embed_query

    data = json.loads(DATA.read_text(encoding="utf-8"))
    if tiny:
        from bench.harness import tiny_labelled_set

        data = tiny_labelled_set(data)
    labelled = [f["body"] for f in data["facts"]]
    # tiny (the test suite's run): the labelled set and a few distractors, a few repeats.
    size = len(labelled) + 40 if tiny else QUICK_SIZE if quick else SIZE
    repeats = 3 if tiny else QUICK_REPEATS if quick else 300
    base = Path(tempfile.mkdtemp(prefix="fleetmem-bench-facts-"))
    try:
        # Quality on the labelled set alone.
        app, facts, clock = _open(base / "labelled")
        ids = _populate(app, facts, clock, labelled)
        thresholds = facts.thresholds()
        alone = _accuracy(facts, data, ids)
        calibration = _calibration(app, data)
        facts.close()
        app.close()

        # Speed (and quality among distractors) at 2,000 facts.
        app, facts, clock = _open(base / "full")
        started = time.perf_counter()
        ids = _populate(app, facts, clock, labelled + synthetic_facts(size - len(labelled)))
        populate_s = time.perf_counter() - started
        among = _accuracy(facts, data, ids)
        conn = app.store.db.conn
        statuses = sorted(LIVE)
        marks = ",".join("?" * len(statuses))
        list_sql = (
            "SELECT * FROM facts WHERE workspace = ? AND status IN (" + marks + ")"
            " ORDER BY created_at DESC, id DESC LIMIT 51"
        )
        like_sql = (
            "SELECT id FROM facts WHERE workspace = ? AND status IN (" + marks + ")"
            " AND body LIKE ? ESCAPE '\\'"
        )
        queries = [q["query"] for q in data["queries"]]
        model = app.embedder.model_id
        matrix = np.ascontiguousarray(facts.store.fact_matrix("default", model).matrix)
        assert matrix.shape[0] == size
        qvecs = app.embedder.embed(queries)
        cycle = iter(range(10**9))

        def next_query() -> str:
            return queries[next(cycle) % len(queries)]

        def numpy_cosine() -> None:
            q = qvecs[next(cycle) % len(qvecs)]
            sims = matrix @ q
            top = np.argpartition(-sims, 50)[:50]
            top[np.argsort(-sims[top])]

        facts.search(queries[0])  # warm: model loaded, vectors decoded
        result = {
            "facts": size,
            "populate_s": round(populate_s, 1),
            "thresholds": {
                "model": model,
                "search": thresholds.search,
                "recall": thresholds.recall,
                "near_duplicate": thresholds.near_duplicate,
            },
            "list_first_page": {
                "fleetmem": _time(lambda: facts.list(limit=50), repeats),
                "bare_sql": _time(
                    lambda: conn.execute(list_sql, ["default", *statuses]).fetchall(), repeats
                ),
            },
            "search": {
                "fleetmem": _time(lambda: facts.search(next_query()), repeats),
                "embed_query_alone": _time(
                    lambda: embed_query(app.embedder, next_query()), repeats
                ),
                "numpy_cosine_alone": _time(numpy_cosine, repeats),
                "bare_sql_like": _time(
                    lambda: conn.execute(
                        like_sql, ["default", *statuses, f"%{next_query()}%"]
                    ).fetchall(),
                    repeats,
                ),
            },
            "facts_block_with_query": _time(
                lambda: facts.facts_block(
                    run_id=f"bench-{next(cycle)}",
                    agent="api-fixer",
                    repo="github.com/acme/api",
                    query=next_query(),
                ),
                max(20, repeats // 5),
            ),
            "accuracy_labelled_set": alone,
            "accuracy_among_2000": among,
            "calibration": calibration,
            "targets_ms_p95": {"list_first_page": 20, "search": 50},
        }
        facts.close()
        app.close()
        return result
    finally:
        shutil.rmtree(base, ignore_errors=True)


def summarize(result: dict[str, Any]) -> str:
    lst, srch = result["list_first_page"], result["search"]
    acc, among, t = (
        result["accuracy_labelled_set"],
        result["accuracy_among_2000"],
        result["thresholds"],
    )
    return "\n".join(
        [
            f"  {result['facts']} facts; thresholds for {t['model']}: search {t['search']},"
            f" recall {t['recall']}, near-duplicate {t['near_duplicate']}",
            f"  list first page p50/p95 {lst['fleetmem']['p50_ms']}/{lst['fleetmem']['p95_ms']} ms"
            f" (bare SQL {lst['bare_sql']['p50_ms']}/{lst['bare_sql']['p95_ms']}; target p95 20)",
            f"  search p50/p95 {srch['fleetmem']['p50_ms']}/{srch['fleetmem']['p95_ms']} ms"
            f" (embed alone {srch['embed_query_alone']['p50_ms']}/"
            f"{srch['embed_query_alone']['p95_ms']}, numpy cosine"
            f" {srch['numpy_cosine_alone']['p50_ms']}/{srch['numpy_cosine_alone']['p95_ms']},"
            f" bare SQL LIKE {srch['bare_sql_like']['p50_ms']}/{srch['bare_sql_like']['p95_ms']};"
            " target p95 50)",
            f"  facts block with a query p50/p95 {result['facts_block_with_query']['p50_ms']}/"
            f"{result['facts_block_with_query']['p95_ms']} ms (NFR-2 allows 2000)",
            f"  calibrated search top-1/3/10 on the labelled set: {acc['top1']}/{acc['top3']}/"
            f"{acc['top10']} ({acc['queries']} queries); unrelated queries with a hit:"
            f" {acc['negatives_with_a_hit']}/{acc['negatives']}",
            f"  among {result['facts']} facts: top-1/3/10 {among['top1']}/{among['top3']}/"
            f"{among['top10']}; seed threshold 0.55 would give top-3"
            f" {result['calibration']['seed_search_threshold_0_55_top3']}",
        ]
    )
