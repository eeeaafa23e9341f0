"""Retrieval quality on LoCoMo through fleetmem's real write and read paths.

Protocol (docs: DESIGN.md "Data for benchmarks"): for each of the 10 conversations a fresh
store; every turn is one run record ingested with ``MemoryService.ingest_run`` (so it becomes an
episode recorded through the built-in provider); every question is asked with
``MemoryService.recall(question, scopes=[that conversation's project scope], limit=20)``.

Scores: turn-level evidence recall@5/10/20 (the share of a question's evidence turns in the top
k, averaged) and MRR (first evidence turn) on categories 1-4, per category, and category 5
apart; session-level all-hit@3/5 (every evidence session is among the first k distinct
sessions of the ranking). Latency is the wall time of each ``recall`` call.

Each turn's speaker is recorded as the run's agent (lower-cased): a turn is what one speaker
produced, as an episode is what one agent's run produced. Context neighbours are the turns
around it in the conversation, whoever spoke them.

Rows ("path" says how each was measured). Rows named for a fusion or an index have the query
cues and the follow-up channel off (``NO_CUES``), so they measure what their name says:
- ``bm25``: BM25 alone, no context (provider built with no embedder, as with
  ``embedding_model = ""``; context window 0).
- ``vector``: cosine alone. The product has no switch for it, so this row is a direct call to
  the store's ``search_vector`` on the same store (labelled ``direct store call``).
- ``hybrid-rrf60``: plain RRF (k=60, equal weights), no context.
- ``hybrid-wrrf``: weighted RRF (k=10, cosine at 0.5, the fusion before score fusion), no
  context; ``hybrid-score``: score fusion (the default), no context.
- ``wrrf+context1``: weighted RRF over a one-neighbour context index.
- ``bm25+context``: BM25 alone over the default two-neighbour context index, vectors off.
- ``hybrid-rrf60+context``: plain RRF over the context index.
- ``previous-default``: the defaults before score fusion (weighted RRF, cues at 1 / 1 / 0.7).
- ``default-before-cues``: score fusion over the two-neighbour context index, no cues.
- ``default-no-periods``, ``default-no-agents``, ``default-no-follow-ups``,
  ``default-no-cues``: the defaults with one cue off (or every cue).
- ``bm25+context+cues``: the default without an embedder (BM25 and every channel).
- ``fleetmem-default``: the product's defaults (``RankingOptions()``).
- ``default-words-always-trusted``: the defaults with every word match earning the whole
  text weight, whatever its coverage of the question.
- ``default+vector-feedback3``: the defaults plus pseudo-relevance feedback on vectors
  (``RankingOptions(feedback_items=3)``).
- ``default-no-hubs``: the defaults without the correction for hubs (``hub_weight`` 0).
``--focus`` asks the rows the recall change is judged on (:data:`FOCUS_VARIANTS`), with no
held-out grid; with ``--quick``, on the first two conversations. ``--hubs`` asks the default
with and without the correction for hubs (``default-no-hubs``), ``--words`` with and without
the word channel's trust per question.

Ideas measured offline on the same data and not adopted, because none moved recall@10 by
more than 0.01 over two-neighbour context with weighted RRF: window-level vectors (each turn
embedded with its neighbours, alone, max-pooled or summed with its own vector), score-level
fusion (max-normalised BM25 and min-max cosine, convex weights 0.5-0.8), RRF k 5-20 and
cosine weights 0.35-0.7, BM25 term feedback from the first 3-5 items, dropping question filler
words, the text column without its empty fields, and names left out of the query vector.
Measured offline with the channels in place and not adopted (none above 0.005): a channel of
the turns of the best-matching sessions, smoothing scores along the conversation, weights by
question word, deeper candidate lists, a second embedding model (multilingual-e5-small, 4-bit),
turns embedded without the speaker's name, diversity penalties on adjacent turns (lower).

Held out (full runs): the three cue weights were chosen on these same questions, so a full
run also asks every question once per point of :data:`CUE_GRID` and scores each conversation
with the point that did best on the other nine (leave one conversation out). That figure is
what the cue weights are worth on conversations they were not chosen on. The weights of the
channels before the cues (cosine 0.5, context, RRF k) are not re-chosen per fold.

The data file is read in place and never copied (CC BY-NC 4.0, evaluation only).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from fleetmem.embed.base import Embedder, Vectors, embed_query
from fleetmem.embed.local import LocalMiniLM
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App, build
from fleetmem.service.memory import MemoryService


def _data_file() -> Path:
    """The shared LoCoMo file beside the checkout (a worktree sits one level deeper)."""
    here = Path(__file__).resolve()
    for up in (2, 3):
        candidate = here.parents[up] / "shared" / "data" / "locomo10.json"
        if candidate.exists():
            return candidate
    return here.parents[2] / "shared" / "data" / "locomo10.json"


DATA = _data_file()
RESULTS = Path(__file__).resolve().parent / "results"
LIMIT = 20
KS = (5, 10, 20)
SESSION_KS = (3, 5)
#: Seconds between two turns of one session: conversation pace, well inside the context window.
TURN_GAP_S = 30
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_DATE = "%I:%M %p on %d %B, %Y"


# ---- data --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    key: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def normalise_evidence(raw: Sequence[str]) -> tuple[str, ...]:
    """Evidence ids as ``D<session>:<turn>``: splits "D8:6; D9:17", fixes "D:11:26", "D30:05"."""
    out: dict[str, None] = {}
    for item in raw:
        for session, turn in _EVIDENCE.findall(str(item)):
            out[f"D{int(session)}:{int(turn)}"] = None
    return tuple(out)


def load(path: Path = DATA) -> list[Conversation]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    convs = []
    for i, sample in enumerate(samples):
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        turns = []
        for n in numbers:
            start = datetime.strptime(conv[f"session_{n}_date_time"], _DATE).replace(tzinfo=UTC)
            for j, t in enumerate(conv[f"session_{n}"]):
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shares {t['blip_caption']}]"
                at = start + timedelta(seconds=TURN_GAP_S * j)
                turns.append(Turn(t["dia_id"], n, t["speaker"], text, at))
        questions = tuple(
            Question(q["question"], normalise_evidence(q.get("evidence") or []), int(q["category"]))
            for q in sample["qa"]
        )
        convs.append(Conversation(f"conv-{i}", tuple(turns), questions))
    return convs


def agent_name(speaker: str) -> str:
    """The speaker as a run record's agent name (lower case, no spaces: the schema's form)."""
    return re.sub(r"[^a-z0-9._-]+", "-", speaker.lower()).strip("-") or "speaker"


def run_record(conv: Conversation, turn: Turn) -> dict[str, Any]:
    """One turn as a run record (docs/run-record.md): the speaker is the agent that ran."""
    stamp = turn.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": 1,
        "run_id": turn.dia_id,
        "agent": agent_name(turn.speaker),
        "adapter": "bench",
        "trigger": "manual",
        "started_at": stamp,
        "ended_at": stamp,
        "outcome": "succeeded",
        "reason": "completed",
        "spawned": True,
        "result_text": turn.text,
        "sessions": [
            {
                "id": "s1",
                "cwd": "/bench/locomo",
                "repo": f"bench.invalid/locomo/{conv.key}",
                "events": [],
            }
        ],
    }


# ---- an embedder that remembers documents ---------------------------------------------------
class DocumentCache:
    """Wraps the real embedder; while ``remember`` is on, repeated texts are embedded once.

    Every store of a conversation embeds the same turn texts (the embedded text carries no
    context), so the second ingest reuses vectors. Queries are never cached: recall latency
    includes embedding the question.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.remember = False
        self._memo: dict[str, np.ndarray[Any, Any]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.remember:
            return self.inner.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for text, vec in zip(missing, self.inner.embed(missing), strict=True):
                self._memo[text] = vec
        return np.stack([self._memo[t] for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> Any:
        """A question, by the model's own query path (its int8 copy), never cached."""
        return embed_query(self.inner, text)


# ---- variants ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    name: str
    store: str  # a key of STORES: how that store was indexed
    path: str
    options: RankingOptions = field(default_factory=RankingOptions)
    vectors: bool = True
    direct_vector: bool = False


#: The query cues (named periods and agents) and the follow-up channel off: what the rows
#: before them measured.
NO_CUES: dict[str, Any] = {"period_weight": 0.0, "agent_weight": 0.0, "follow_up_weight": 0.0}
#: The weighted RRF fusion that was the default before score fusion (k = 10, cosine at 0.5).
WRRF: dict[str, Any] = {"fusion": "rrf", "rrf_k": 10, "text_weight": 1.0, "vector_weight": 0.5}
#: Plain RRF: k = 60, equal weights.
RRF60: dict[str, Any] = {"fusion": "rrf", "rrf_k": 60, "text_weight": 1.0, "vector_weight": 1.0}
PLAIN = RankingOptions(context_window_s=0, **NO_CUES)
CONTEXT1 = RankingOptions(context_neighbours=1, **NO_CUES)
BEFORE_CUES = RankingOptions(**NO_CUES)
#: The defaults before this change: weighted RRF and all three cues on at 1, 1 and 0.7.
PREVIOUS = RankingOptions(**WRRF, period_weight=1.0, agent_weight=1.0, follow_up_weight=0.7)
_DEFAULTS = RankingOptions()
#: The product's (period_weight, agent_weight, follow_up_weight): a point of every cue grid.
DEFAULT_CUES = (_DEFAULTS.period_weight, _DEFAULTS.agent_weight, _DEFAULTS.follow_up_weight)
#: Each conversation is ingested once per indexing: no context, one neighbour, the default.
#: (Cues only change how a query is answered, so they need no store of their own.)
STORES: dict[str, RankingOptions] = {
    "plain": PLAIN,
    "context1": CONTEXT1,
    "context": RankingOptions(),
}
VARIANTS: tuple[Variant, ...] = (
    Variant("bm25", "plain", "recall, no embedder", PLAIN, vectors=False),
    Variant("vector", "plain", "direct store call: search_vector", PLAIN, direct_vector=True),
    Variant(
        "hybrid-rrf60",
        "plain",
        "recall",
        RankingOptions(**RRF60, context_window_s=0, **NO_CUES),
    ),
    Variant(
        "hybrid-wrrf", "plain", "recall", RankingOptions(**WRRF, context_window_s=0, **NO_CUES)
    ),
    Variant("hybrid-score", "plain", "recall, score fusion, no context", PLAIN),
    Variant("bm25+context1", "context1", "recall, no embedder", CONTEXT1, vectors=False),
    Variant(
        "wrrf+context1",
        "context1",
        "recall, weighted RRF, one neighbour",
        RankingOptions(**WRRF, context_neighbours=1, **NO_CUES),
    ),
    Variant("bm25+context", "context", "recall, no embedder", BEFORE_CUES, vectors=False),
    Variant(
        "hybrid-rrf60+context",
        "context",
        "recall",
        RankingOptions(**RRF60, **NO_CUES),
    ),
    Variant("previous-default", "context", "recall, the defaults before score fusion", PREVIOUS),
    Variant("default-before-cues", "context", "recall, cues off", BEFORE_CUES),
    Variant(
        "default-no-periods",
        "context",
        "recall, the defaults with the period channel off",
        RankingOptions(period_weight=0.0),
    ),
    Variant(
        "default-no-agents",
        "context",
        "recall, the defaults with the named-agent channel off",
        RankingOptions(agent_weight=0.0),
    ),
    Variant(
        "default-no-follow-ups",
        "context",
        "recall, the defaults with follow-ups off",
        RankingOptions(follow_up_weight=0.0),
    ),
    Variant(
        "default-no-cues",
        "context",
        "recall, the defaults with every cue off",
        RankingOptions(**NO_CUES),
    ),
    Variant("bm25+context+cues", "context", "recall, no embedder", vectors=False),
    Variant("fleetmem-default", "context", "recall (RankingOptions() defaults)"),
    Variant(
        "default-words-always-trusted",
        "context",
        "recall, the defaults with the word channel trusted whatever its best match covers",
        RankingOptions(words_low=0.0, words_high=0.0),
    ),
    Variant(
        "default-no-hubs",
        "context",
        "recall, the defaults without the correction for hubs",
        RankingOptions(hub_weight=0.0),
    ),
    Variant(
        "default+vector-feedback3",
        "context",
        "recall, RankingOptions(feedback_items=3)",
        RankingOptions(feedback_items=3),
    ),
)
#: Quick mode keeps the baseline, the vector channel alone, the default with its BM25 half and
#: the default without its query cues,
#: so only two stores per conversation are built: enough to catch a ranking regression.
QUICK_VARIANTS: tuple[str, ...] = (
    "bm25",
    "vector",
    "bm25+context",
    "default-before-cues",
    "fleetmem-default",
)
#: ``--focus``: the rows the recall change is judged on (two stores per conversation).
#: ``--words``: what reading the word channel's trust per question is worth.
WORDS_VARIANTS: tuple[str, ...] = (
    "fleetmem-default",
    "default-words-always-trusted",
)
#: ``--hubs``: what the correction for hubs (providers/episode_hubs.py) is worth.
HUBS_VARIANTS: tuple[str, ...] = ("fleetmem-default", "default-no-hubs")
FOCUS_VARIANTS: tuple[str, ...] = (
    "bm25",
    "vector",
    "hybrid-rrf60",
    "bm25+context",
    "hybrid-rrf60+context",
    "previous-default",
    "default-before-cues",
    "default-no-periods",
    "default-no-agents",
    "default-no-follow-ups",
    "default-no-cues",
    "fleetmem-default",
)


#: (period_weight, agent_weight, follow_up_weight) points of the held-out check: the defaults
#: (0.5, 0.5, 0.7) with each cue off, halved and doubled.
CUE_GRID: tuple[tuple[float, float, float], ...] = tuple(
    itertools.product((0.0, 0.5, 1.0), (0.25, 0.5, 1.0), (0.0, 0.35, 0.7))
)
#: Tiny runs try two points, so the tests run the check's code without its cost.
TINY_CUE_GRID: tuple[tuple[float, float, float], ...] = ((0.5, 0.5, 0.7), (0.0, 0.25, 0.35))


def cue_point_name(point: tuple[float, float, float]) -> str:
    period, agent, follow_up = point
    return f"period={period:g} agent={agent:g} follow_up={follow_up:g}"


def cue_variant(point: tuple[float, float, float]) -> Variant:
    period, agent, follow_up = point
    options = RankingOptions(period_weight=period, agent_weight=agent, follow_up_weight=follow_up)
    return Variant(cue_point_name(point), "context", "recall", options)


# ---- scoring -----------------------------------------------------------------------------
def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


@dataclass
class Scores:
    recall: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    rr: list[float] = field(default_factory=list)
    session_hit: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in SESSION_KS})

    def add(self, ranked: Sequence[str], evidence: Sequence[str]) -> None:
        wanted = set(evidence)
        for k in KS:
            self.recall[k].append(len(wanted & set(ranked[:k])) / len(wanted))
        self.rr.append(next((1 / r for r, d in enumerate(ranked, 1) if d in wanted), 0.0))
        sessions = list(dict.fromkeys(session_of(d) for d in ranked))
        need = {session_of(d) for d in wanted}
        for k in SESSION_KS:
            self.session_hit[k].append(float(need <= set(sessions[:k])))

    def summary(self) -> dict[str, Any]:
        n = len(self.rr)
        out: dict[str, Any] = {"n": n}
        for k in KS:
            out[f"recall@{k}"] = round(statistics.fmean(self.recall[k]), 4) if n else None
        out["mrr"] = round(statistics.fmean(self.rr), 4) if n else None
        for k in SESSION_KS:
            hits = self.session_hit[k]
            out[f"session_all_hit@{k}"] = round(statistics.fmean(hits), 4) if n else None
        return out


@dataclass
class Tally:
    main: Scores = field(default_factory=Scores)
    by_category: dict[int, Scores] = field(default_factory=dict)
    #: Categories 1-4 per conversation: whether a change helps across them or in one only.
    by_conversation: dict[str, Scores] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, q: Question, ranked: Sequence[str], ms: float, conversation: str = "") -> None:
        self.latencies_ms.append(ms)
        if not q.evidence:
            return
        self.by_category.setdefault(q.category, Scores()).add(ranked, q.evidence)
        if q.category != 5:
            self.main.add(ranked, q.evidence)
            self.by_conversation.setdefault(conversation, Scores()).add(ranked, q.evidence)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        return {
            **self.main.summary(),
            "per_category": {str(c): s.summary() for c, s in sorted(self.by_category.items())},
            "per_conversation_recall@10": {
                key: s.summary()["recall@10"] for key, s in self.by_conversation.items()
            },
            "latency_ms": {
                "p50": round(float(np.percentile(lat, 50)), 2),
                "p95": round(float(np.percentile(lat, 95)), 2),
                "n": len(lat),
            },
        }


# ---- running -----------------------------------------------------------------------------
def _app(home: Path) -> App:
    home.mkdir(parents=True)
    (home / "fleetmem.toml").write_text(
        "[memory.episodes]\nexcerpt_chars = 2000\nsummary = false\n", encoding="utf-8"
    )
    return build(home, {"HOME": str(home)})


def _ingest(
    app: App, conv: Conversation, options: RankingOptions, cache: DocumentCache
) -> tuple[dict[str, str], float]:
    provider = BuiltinProvider(app.store, cache, options)
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    to_dia: dict[str, str] = {}
    cache.remember = True
    started = time.perf_counter()
    for turn in conv.turns:
        result = memory.ingest_run(run_record(conv, turn))
        if result.status != "recorded" or result.episode_id is None:
            raise RuntimeError(f"{turn.dia_id}: {result.status}")
        to_dia[result.episode_id] = turn.dia_id
    cache.remember = False
    memory.close()
    return to_dia, time.perf_counter() - started


def held_out(grid: dict[str, Tally], default: str) -> dict[str, Any]:
    """Leave one conversation out: each conversation's questions are scored with the grid
    point whose recall@10 over the other conversations' questions is highest (the earlier
    point on a tie), and the scores are pooled over all questions of categories 1-4."""
    per_point = {
        name: {conv: s.recall[10] for conv, s in t.by_conversation.items()}
        for name, t in grid.items()
    }
    convs = list(per_point[default])

    def pooled(name: str, keep: Sequence[str]) -> float:
        return statistics.fmean(x for conv in keep for x in per_point[name][conv])

    chosen: dict[str, str] = {}
    scores: list[float] = []
    for conv in convs:
        others = [c for c in convs if c != conv]
        # With one conversation there are no others: the fold falls back to all of them.
        best = max(per_point, key=lambda name: pooled(name, others or convs))
        chosen[conv] = best
        scores.extend(per_point[best][conv])
    in_sample = {name: pooled(name, convs) for name in per_point}
    best_in_sample = max(in_sample, key=lambda name: in_sample[name])
    return {
        "protocol": "leave one conversation out over the cue-weight grid, categories 1-4",
        "grid_points": len(per_point),
        "held_out_recall@10": round(statistics.fmean(scores), 4),
        "default": default,
        "default_recall@10": round(in_sample[default], 4),
        "best_in_sample": best_in_sample,
        "best_in_sample_recall@10": round(in_sample[best_in_sample], 4),
        "chosen": chosen,
        "grid_recall@10": {name: round(value, 4) for name, value in in_sample.items()},
    }


def run(
    quick: bool = False,
    variants: Sequence[Variant] = VARIANTS,
    tiny: bool = False,
    cue_grid: Sequence[tuple[float, float, float]] | None = None,
) -> dict[str, Any]:
    """Every variant over the same stores; quick = the first 2 conversations and
    :data:`QUICK_VARIANTS`; tiny = a few turns and questions of those 2
    (:func:`bench.harness.tiny_conversation`). ``cue_grid`` (by default :data:`CUE_GRID`
    in full runs, :data:`TINY_CUE_GRID` in tiny ones, none in quick ones) feeds
    :func:`held_out`."""
    from bench.harness import tiny_conversation

    convs = load()[: 2 if quick or tiny else None]
    if quick and variants is VARIANTS:
        variants = tuple(v for v in VARIANTS if v.name in QUICK_VARIANTS)
    if tiny:
        convs = [tiny_conversation(c) for c in convs]
    if cue_grid is None:
        cue_grid = () if quick else TINY_CUE_GRID if tiny else CUE_GRID
    if cue_grid and DEFAULT_CUES not in cue_grid:
        raise ValueError(f"cue_grid: the defaults {DEFAULT_CUES} must be one of its points")
    grid = [cue_variant(point) for point in cue_grid]
    grid_tallies = {v.name: Tally() for v in grid}
    tallies = {v.name: Tally() for v in variants}
    # The grid's points are asked on the store their variant names, like any row.
    to_ask = [(v, tallies[v.name]) for v in variants] + [(v, grid_tallies[v.name]) for v in grid]
    ingest_s: dict[str, float] = dict.fromkeys(STORES, 0.0)
    turns = 0
    scratch = Path(tempfile.mkdtemp(prefix="fleetmem-locomo-"))
    cache = DocumentCache(LocalMiniLM())
    try:
        for conv in convs:
            turns += len(conv.turns)
            scope = f"project:bench.invalid/locomo/{conv.key}"
            for store_kind, opts in STORES.items():
                asked = [(v, t) for v, t in to_ask if v.store == store_kind]
                if not asked:
                    continue
                app = _app(scratch / conv.key / store_kind)
                to_dia, took = _ingest(app, conv, opts, cache)
                ingest_s[store_kind] += took
                for v, tally in asked:
                    _ask(app, v, cache, scope, conv, to_dia, tally)
                app.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    extra: dict[str, Any] = {}
    if grid:
        extra["held_out"] = held_out(grid_tallies, cue_point_name(DEFAULT_CUES))
    return {
        "benchmark": "locomo-retrieval",
        "data": str(DATA),
        "conversations": len(convs),
        "turns": turns,
        "quick": quick,
        "embedding_model": "local:all-MiniLM-L6-v2-onnx-int8",
        "ingest_ms_per_turn": {
            k: round(1000 * s / max(turns, 1), 2)
            for k, s in ingest_s.items()
            if any(v.store == k for v, _ in to_ask)
        },
        "rows": {
            name: {"path": _path(variants, name), **t.summary()} for name, t in tallies.items()
        },
        **extra,
    }


def _path(variants: Sequence[Variant], name: str) -> str:
    return next(v.path for v in variants if v.name == name)


def _ask(
    app: App,
    v: Variant,
    cache: DocumentCache,
    scope: str,
    conv: Conversation,
    to_dia: dict[str, str],
    tally: Tally,
) -> None:
    provider = BuiltinProvider(app.store, cache if v.vectors else None, v.options)
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    try:
        for q in conv.questions:
            started = time.perf_counter()
            ranked = _rank(memory, app, cache, v, scope, q.text)
            ms = 1000 * (time.perf_counter() - started)
            tally.add(q, [to_dia[e] for e in ranked], ms, conv.key)
    finally:
        memory.close()


def _rank(
    memory: MemoryService, app: App, cache: DocumentCache, v: Variant, scope: str, query: str
) -> list[str]:
    if v.direct_vector:
        qvec = cache.embed_query(query)
        return [i for i, _ in app.store.search_vector(qvec, cache.model_id, [scope], LIMIT)]
    result = memory.recall(query, scopes=[scope], limit=LIMIT)
    if result.degraded:
        raise RuntimeError(f"recall degraded: {result.degraded}")
    return [hit.episode_id for hit in result.items]


def table(report: dict[str, Any]) -> str:
    head = (
        f"{'row':22} {'r@5':>6} {'r@10':>6} {'r@20':>6} {'MRR':>6} "
        f"{'c1@10':>6} {'c2@10':>6} {'c3@10':>6} {'c4@10':>6} {'c5@10':>6} "
        f"{'S@3':>6} {'S@5':>6} {'p50ms':>6} {'p95ms':>6}  path"
    )
    lines = [head, "-" * len(head)]
    for name, row in report["rows"].items():
        cats = row["per_category"]

        def cat(c: str, row_cats: dict[str, Any] = cats) -> str:
            return f"{row_cats[c]['recall@10']:6.3f}" if c in row_cats else f"{'-':>6}"

        lines.append(
            f"{name:22} {row['recall@5']:6.3f} {row['recall@10']:6.3f} {row['recall@20']:6.3f}"
            f" {row['mrr']:6.3f} {cat('1')} {cat('2')} {cat('3')} {cat('4')} {cat('5')}"
            f" {row['session_all_hit@3']:6.3f} {row['session_all_hit@5']:6.3f}"
            f" {row['latency_ms']['p50']:6.2f} {row['latency_ms']['p95']:6.2f}  {row['path']}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    quick = "--quick" in argv
    focus = "--focus" in argv or "--words" in argv or "--hubs" in argv
    if focus:
        chosen = (
            WORDS_VARIANTS
            if "--words" in argv
            else HUBS_VARIANTS
            if "--hubs" in argv
            else FOCUS_VARIANTS
        )
        rows = tuple(v for v in VARIANTS if v.name in chosen)
        report = run(quick=quick, variants=rows, cue_grid=())
    else:
        report = run(quick=quick)
    RESULTS.mkdir(exist_ok=True)
    kind = (
        "-words"
        if "--words" in argv
        else "-hubs"
        if "--hubs" in argv
        else "-focus"
        if focus
        else ""
    )
    name = "locomo" + kind + ("-quick" if quick else "")
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    n = next(iter(report["rows"].values()))["n"]
    print(f"LoCoMo retrieval, {report['conversations']} conversations, n={n} (categories 1-4)")
    print(table(report))
    if "held_out" in report:
        h = report["held_out"]
        print(
            f"held out (cue weights chosen on the other conversations): recall@10"
            f" {h['held_out_recall@10']:.4f}; defaults {h['default_recall@10']:.4f};"
            f" best of {h['grid_points']} points in sample {h['best_in_sample_recall@10']:.4f}"
            f" ({h['best_in_sample']})"
        )
    print(f"ingest ms/turn: {report['ingest_ms_per_turn']}  -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
