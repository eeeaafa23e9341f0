"""Episode recall on coding-agent runs the ranking was not tuned on: choose on dev, confirm.

Sets: :func:`bench.recall_sets.runs_set` for the ``dev`` half (seed :data:`DEV_SEED`) and the
``confirm`` half (another seed, other incidents), 608 runs in 14 repositories each. Every
question is asked twice through ``MemoryService.recall``: scoped to its repository ("own")
and across all 14 ("all": fourteen scopes, which the service asks the provider for two at a
time and merges). Rows, all measured in one run on the same stores:

- ``bm25``: BM25 alone (no embedder, no context, no cues).
- ``cosine``: cosine alone, a direct ``search_vector`` call over the same scopes (the product
  has no switch for it).
- ``rrf60``: plain RRF (k = 60, equal weights), no context, no cues.
- ``previous-default``: the defaults before this change (weighted RRF k = 10, cosine at 0.5,
  all three cues on at 1 / 1 / 0.7).
- ``default``: ``RankingOptions()`` with the calibration of the embedder.
- ``default-no-periods``, ``default-no-follow-ups``, ``default-no-agents``: one cue off each.
- ``default-words-always-trusted``: the default with the word channel trusted whatever its
  best match covers (what reading the words' trust per question is worth).
- ``default-no-hubs``: the default without the correction for hubs (``hub_weight`` 0).

Scores: recall@10 and MRR of the run each question is about, over lexical and paraphrased
questions (``words``), paraphrases alone, and cued questions (naming the agent or the day);
and how many unrelated questions still got any answer (the relevance floor).
``--grid`` also asks every point of :data:`GRID` (text weight, k, floor, full, relevant)
on both halves. ``--dev`` runs the dev half only.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import recall_sets as rs
from bench.bench_locomo import DocumentCache, _app
from bench.common import latency_summary, write_result
from fleetmem.core.ranking import Calibration, calibration_for
from fleetmem.embed.local import LocalMiniLM
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService

LIMIT = 20
NO_CUES: dict[str, Any] = {"period_weight": 0.0, "agent_weight": 0.0, "follow_up_weight": 0.0}
PLAIN = {"context_window_s": 0.0, **NO_CUES}
PREVIOUS = RankingOptions(
    fusion="rrf",
    rrf_k=10,
    text_weight=1.0,
    vector_weight=0.5,
    period_weight=1.0,
    agent_weight=1.0,
    follow_up_weight=0.7,
)
_D = RankingOptions()


@dataclass(frozen=True)
class Row:
    name: str
    store: str  # "plain" or "context"
    options: RankingOptions | None  # None: the cosine row (direct store call)
    vectors: bool = True
    calibration: Calibration | None = None


ROWS: tuple[Row, ...] = (
    Row("bm25", "plain", RankingOptions(**PLAIN), vectors=False),
    Row("cosine", "plain", None),
    Row(
        "rrf60",
        "plain",
        RankingOptions(fusion="rrf", rrf_k=60, text_weight=1.0, vector_weight=1.0, **PLAIN),
    ),
    Row("previous-default", "context", PREVIOUS),
    Row("default", "context", _D),
    Row("default-no-periods", "context", RankingOptions(period_weight=0.0)),
    Row("default-no-follow-ups", "context", RankingOptions(follow_up_weight=0.0)),
    Row("default-no-agents", "context", RankingOptions(agent_weight=0.0)),
    Row("default-words-always-trusted", "context", RankingOptions(words_low=0.0, words_high=0.0)),
    Row("default-no-hubs", "context", RankingOptions(hub_weight=0.0)),
)
#: ``--words``: what reading the word channel's trust per question is worth.
WORDS_ROWS = ("default", "default-words-always-trusted")
#: (text weight, k, floor, full, relevant) around the defaults; the vector weight is
#: 1 - text weight. The defaults were chosen offline on the dev halves' channel lists
#: (bench/fusion_lab.py); these points are asked through the product on both halves.
GRID: tuple[tuple[float, int, float, float, float], ...] = (
    (0.6, 5, 0.1, 0.8, 0.16),
    (0.5, 5, 0.1, 0.8, 0.16),
    (0.7, 5, 0.1, 0.8, 0.16),
    (0.6, 10, 0.1, 0.8, 0.16),
    (0.6, 5, 0.15, 0.8, 0.16),
    (0.6, 5, 0.1, 0.6, 0.16),
    (0.6, 5, 0.1, 0.8, 0.2),
    (0.6, 5, 0.1, 0.8, 0.12),
)


def grid_row(point: tuple[float, int, float, float, float]) -> Row:
    tw, k, floor, full, relevant = point
    options = RankingOptions(text_weight=tw, vector_weight=round(1 - tw, 3), rrf_k=k)
    name = f"grid tw={tw:g} k={k} floor={floor:g} full={full:g} relevant={relevant:g}"
    return Row(name, "context", options, calibration=Calibration(floor, full, relevant))


@dataclass
class Score:
    hits10: list[float] = field(default_factory=list)
    rr: list[float] = field(default_factory=list)

    def add(self, ranked: Sequence[str], target: str) -> None:
        self.hits10.append(float(target in ranked[:10]))
        rank = ranked.index(target) + 1 if target in ranked else None
        self.rr.append(1.0 / rank if rank else 0.0)

    def summary(self) -> dict[str, Any]:
        n = len(self.rr)
        return {
            "n": n,
            "recall@10": round(statistics.fmean(self.hits10), 4) if n else None,
            "mrr": round(statistics.fmean(self.rr), 4) if n else None,
        }


@dataclass
class Tally:
    groups: dict[str, Score] = field(default_factory=dict)
    unrelated_answered: int = 0
    unrelated: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, group: str, ranked: Sequence[str], target: str) -> None:
        self.groups.setdefault(group, Score()).add(ranked, target)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {g: s.summary() for g, s in sorted(self.groups.items())}
        out["unrelated_answered"] = f"{self.unrelated_answered}/{self.unrelated}"
        out["latency_ms"] = latency_summary(self.latencies_ms) if self.latencies_ms else {}
        return out


def _ingest(
    app: App, data: rs.RunsSet, options: RankingOptions, cache: DocumentCache
) -> dict[str, str]:
    provider = BuiltinProvider(app.store, cache, options)
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    cache.remember = True
    to_run: dict[str, str] = {}
    for record in data.records:
        result = memory.ingest_run(record)
        if result.status != "recorded" or result.episode_id is None:
            raise RuntimeError(f"{record['run_id']}: {result.status}")
        to_run[result.episode_id] = str(record["run_id"])
    cache.remember = False
    memory.close()
    return to_run


class Ranker:
    """How one row ranks a question over some scopes, as run ids best first: cosine alone
    by a direct ``search_vector`` call, every other row through ``MemoryService.recall``
    with the row's options; each call's time is kept. Close it when done."""

    def __init__(self, app: App, row: Row, cache: DocumentCache, to_run: dict[str, str]):
        self._app, self._row, self._cache, self._to_run = app, row, cache, to_run
        self.latencies_ms: list[float] = []
        self._memory: MemoryService | None = None
        if row.options is not None:
            embedder = cache if row.vectors else None
            provider = BuiltinProvider(
                app.store, embedder, row.options, calibration=row.calibration
            )
            self._memory = MemoryService(
                store=app.store, settings=lambda: app.config.current, provider=provider
            )

    def __call__(self, query: str, scopes: list[str]) -> list[str]:
        started = time.perf_counter()
        if self._memory is None:
            qvec = self._cache.embed_query(query)
            hits = self._app.store.search_vector(qvec, self._cache.model_id, scopes, LIMIT)
            ids = [i for i, _ in hits]
        else:
            result = self._memory.recall(query, scopes=scopes, limit=LIMIT)
            if result.degraded:
                raise RuntimeError(f"{self._row.name}: recall degraded: {result.degraded}")
            ids = [hit.episode_id for hit in result.items]
        self.latencies_ms.append(1000 * (time.perf_counter() - started))
        return [self._to_run[i] for i in ids]

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


@dataclass
class Rankings:
    """One row's rankings (run ids, best first, up to :data:`LIMIT`) for every question of a
    set: ``{"own": …, "all": …}`` per question, one per unrelated question (across all)."""

    questions: list[dict[str, list[str]]] = field(default_factory=list)
    unrelated: list[list[str]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)


def rankings(
    app: App, row: Row, cache: DocumentCache, data: rs.RunsSet, to_run: dict[str, str]
) -> Rankings:
    """Every question of ``data`` asked of ``row``, within its repository and across all."""
    out = Rankings()
    every = [f"project:{repo}" for repo in data.repos]
    rank = Ranker(app, row, cache, to_run)
    try:
        for q in data.questions:
            out.questions.append(
                {"own": rank(q.text, [f"project:{q.repo}"]), "all": rank(q.text, every)}
            )
        out.unrelated = [rank(text, every) for text in data.unrelated]
    finally:
        rank.close()
    out.latencies_ms = rank.latencies_ms
    return out


def tally_of(data: rs.RunsSet, ranked: Rankings) -> Tally:
    """The scores of ``ranked``: lexical and paraphrased questions as ``words``, the cued ones
    as ``cued``, paraphrases also on their own; unrelated questions answered."""
    tally = Tally(latencies_ms=list(ranked.latencies_ms))
    for q, where_ranked in zip(data.questions, ranked.questions, strict=True):
        group = {"lexical": "words", "paraphrase": "words"}.get(q.kind, "cued")
        for where in ("own", "all"):
            tally.add(f"{where}:{group}", where_ranked[where], q.target)
            if q.kind == "paraphrase":
                tally.add(f"{where}:paraphrase", where_ranked[where], q.target)
    tally.unrelated = len(ranked.unrelated)
    tally.unrelated_answered = sum(bool(r) for r in ranked.unrelated)
    return tally


def _ask(
    app: App, row: Row, cache: DocumentCache, data: rs.RunsSet, to_run: dict[str, str]
) -> Tally:
    return tally_of(data, rankings(app, row, cache, data, to_run))


def run(
    halves: Sequence[str] = rs.HALVES, grid: bool = False, only: Sequence[str] = ()
) -> dict[str, Any]:
    seeds = {"dev": rs.DEV_SEED, "confirm": rs.CONFIRM_SEED}
    cache = DocumentCache(LocalMiniLM())
    scratch = Path(tempfile.mkdtemp(prefix="fleetmem-recall-sets-"))
    report: dict[str, Any] = {"embedding_model": cache.model_id, "sets": {}}
    report["calibration"] = vars_of(calibration_for(cache.model_id))
    try:
        for half in halves:
            data = rs.runs_set(half, seeds[half])
            rows = list(ROWS) + ([grid_row(p) for p in GRID] if grid else [])
            if only:
                rows = [r for r in rows if r.name in only]
            out: dict[str, Any] = {
                "seed": seeds[half],
                "runs": len(data.records),
                "repositories": len(data.repos),
                "questions": len(data.questions),
                "rows": {},
            }
            for store in ("plain", "context"):
                if not any(row.store == store for row in rows):
                    continue
                options = RankingOptions(**PLAIN) if store == "plain" else RankingOptions()
                app = _app(scratch / half / store)
                started = time.perf_counter()
                to_run = _ingest(app, data, options, cache)
                out[f"ingest_s_{store}"] = round(time.perf_counter() - started, 2)
                for row in rows:
                    if row.store == store:
                        out["rows"][row.name] = _ask(app, row, cache, data, to_run).summary()
                app.close()
            report["sets"][half] = out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def vars_of(c: Calibration) -> dict[str, float]:
    return {"floor": c.floor, "full": c.full, "relevant": c.relevant}


def table(report: dict[str, Any]) -> str:
    cols = ("own:words", "all:words", "own:paraphrase", "all:paraphrase", "own:cued", "all:cued")
    head = f"{'set':8} {'row':40} " + " ".join(f"{c:>17}" for c in cols) + "  unrelated  p95ms"
    lines = [head, " " * 50 + "   (recall@10 / MRR)", "-" * len(head)]
    for half, out in report["sets"].items():
        for name, row in out["rows"].items():
            cells = []
            for c in cols:
                s = row.get(c)
                cells.append(f"{s['recall@10']:.3f} / {s['mrr']:.3f}" if s else "-")
            p95 = row["latency_ms"].get("p95_ms", float("nan"))
            lines.append(
                f"{half:8} {name:40} "
                + " ".join(f"{c:>17}" for c in cells)
                + f"  {row['unrelated_answered']:>9}  {p95:5.1f}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    grid = "--grid" in argv
    halves = ("dev",) if "--dev" in argv else rs.HALVES
    words = "--words" in argv
    report = run(halves, grid=grid, only=WORDS_ROWS if words else ())
    suffix = "-grid" if grid else "-words" if words else ""
    path = write_result("recall-sets" + suffix, report)
    print(table(report))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
