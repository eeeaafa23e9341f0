"""Fusion laboratory: capture each channel of every question once, then try fusions offline.

Choosing fusion weights through ``MemoryService.recall`` costs a full pass over every set per
point. This module asks the product's own store for what each channel found (BM25 scores over
the context index, cosines of the active embedder, the cue facets the provider reads) for
every question of every set, keeps it in a pickle, and scores any fusion function over the
captures in seconds. The figures that are reported for a choice are measured afterwards
through the product (``bench_recall_sets``, ``bench_locomo``); this is where candidates are
found and where a weight is read off the development half before the confirmation half is
looked at.

Sets (each with a ``dev`` and a ``confirm`` half):

* ``locomo``: LoCoMo turns, one store per conversation (even conversations dev, odd ones
  confirm), categories 1-4, turn-level evidence.
* ``locomo-sessions``: LoCoMo sessions as documents (each session's turns joined), the half's
  conversations in one scope: long documents, the regime of a coding-assistant session log.
* ``runs-own`` / ``runs-all``: :func:`bench.recall_sets.runs_set`, asked within the target's
  repository and across all 14.
* ``packages``: the installed Python distributions' descriptions, each asked for by its
  one-line summary, the package's name masked in both (CRC-32 of the name even: dev).

``python -m bench.fusion_lab capture [SETS]`` writes ``$TMPDIR/fusion-lab/*.pkl`` (or
``$FUSION_LAB_DIR``); ``python -m bench.fusion_lab grid`` scores the shipped fusion and
every point of :data:`GRID` beside BM25 alone, cosine alone and plain RRF, and writes
``bench/results/fusion-lab.json``. Nothing here runs under pytest but its tiny smoke test.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import pickle
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench import recall_sets as rs
from bench.bench_locomo import Conversation, _app, load, run_record
from fleetmem.core.named_agents import named_agents, without_names
from fleetmem.core.periods import named_periods, splits
from fleetmem.core.ranking import Calibration, calibration_for, score_fusion
from fleetmem.core.textquery import fts_match, match_phrases
from fleetmem.embed.base import embed_query
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.providers.episode_hubs import corrected, to_correct
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from fleetmem.store.sqlite.builtin_index import CONTEXT_WEIGHT, TEXT_COLUMNS, scope_token

OUT = Path(os.environ.get("FUSION_LAB_DIR", Path(tempfile.gettempdir()) / "fusion-lab"))
WIDE = 50


@dataclass
class Query:
    text: str
    gold: frozenset[str]
    kind: str
    text_hits: list[tuple[str, float]]  # (id, BM25 score, higher is better)
    idf: list[float]  # per query phrase, FTS5's formula
    vec_hits: list[tuple[str, float]]
    cosine: dict[str, float]  # every candidate's cosine (text hits included)
    started: dict[str, float]
    agent: dict[str, str]
    named: frozenset[str]
    period_ids: frozenset[str] | None  # candidates in the named period, None: no period cue
    follow: dict[str, str] = field(default_factory=dict)  # question leader -> next on thread
    # Each candidate's neighbour similarity among the episodes searched, less its mean there
    # (providers/episode_hubs.py): what the correction for hubs takes off its cosine.
    hub: dict[str, float] = field(default_factory=dict)


@dataclass
class Capture:
    name: str
    half: str
    queries: list[Query]
    unrelated: list[Query] = field(default_factory=list)


# ---- capturing ---------------------------------------------------------------------------
def _bm25_hits(app: App, match: str, scopes: Sequence[str]) -> list[tuple[str, float]]:
    conn: sqlite3.Connection = app.store.db.conn  # type: ignore[attr-defined]
    tokens = " OR ".join(f'"{scope_token(s)}"' for s in dict.fromkeys(scopes))
    scoped = f"scope_key : ({tokens}) AND {{{TEXT_COLUMNS}}} : ({match})"
    rows = conn.execute(
        f"SELECT e.id, bm25(builtin_fts, 1.0, 1.0, {CONTEXT_WEIGHT}, 0.0) AS s"
        " FROM builtin_fts JOIN episodes e ON e.rowid = builtin_fts.rowid"
        " WHERE builtin_fts MATCH ? AND e.forgotten_at IS NULL"
        " ORDER BY s, e.started_at DESC, e.id LIMIT ?",
        [scoped, WIDE],
    ).fetchall()
    return [(str(r[0]), -float(r[1])) for r in rows]


def _idf(app: App, match: str) -> list[float]:
    store: Any = app.store
    conn = store.db.conn
    phrases = match_phrases(match)
    total = store._term_stats.total_docs(conn)
    counts = store._term_stats.phrase_counts(conn, phrases, total)
    out = []
    for p in phrases:
        n = counts.get(p, 0)
        out.append(max(1e-6, math.log((total - n + 0.5) / (n + 0.5))))
    return out


def _hubs(provider: BuiltinProvider, ids: Sequence[str], scopes: Sequence[str]) -> dict[str, float]:
    """Every candidate's hub offset, as the product's own correction reads it (its sample
    fetched first, so the product's next recall is corrected too)."""
    assert provider.embedder is not None
    model_id = provider.embedder.model_id
    provider.hubs.offsets(list(ids)[:1], scopes, model_id)  # starts the sample's fetch
    provider.hubs.settle()
    return provider.hubs.offsets(ids, scopes, model_id)


def _capture_one(
    app: App,
    provider: BuiltinProvider,
    text: str,
    gold: frozenset[str],
    kind: str,
    scopes: Sequence[str],
) -> Query:
    store: Any = app.store
    known = store.builtin_agent_names(scopes)
    named = named_agents(text, known) if known else frozenset()
    if len(named) >= len(set(known)):
        named = frozenset()
    searched = (without_names(text, named, known) or text) if named else text
    match = fts_match(searched)
    text_hits = _bm25_hits(app, match, scopes) if match else []
    idf = _idf(app, match) if match else []
    assert provider.embedder is not None
    qvec = embed_query(provider.embedder, searched)
    vec_hits = store.search_vector(qvec, provider.embedder.model_id, scopes, WIDE)
    cosine = {i: float(c) for i, c in vec_hits}
    missing = [i for i, _ in text_hits if i not in cosine]
    for eid, v in store.builtin_vectors_for(missing, provider.embedder.model_id).items():
        cosine[eid] = float(np.dot(v, qvec))
    ids = list(dict.fromkeys([i for i, _ in text_hits] + [i for i, _ in vec_hits]))
    facets = store.builtin_facets(ids)
    periods = named_periods(text)
    period_ids = None
    if periods:
        starts = [facets[i][0] for i in ids if i in facets]
        if splits(periods, starts):
            period_ids = frozenset(
                i for i in ids if i in facets and any(p.contains(facets[i][0]) for p in periods)
            )
    follow: dict[str, str] = {}
    rows = store.get_episodes(ids)
    for eid in ids:
        row = rows.get(eid)
        if row is None or row.episode is None:
            continue
        if "?" not in str(row.episode.get("result_excerpt") or ""):
            continue
        nxt = store.builtin_neighbours(row, 3600.0)[1]
        if nxt is not None:
            follow[eid] = nxt.id
            facets.setdefault(nxt.id, (nxt.started_at, nxt.agent))
            if nxt.id not in cosine:
                vec = store.builtin_vectors_for([nxt.id], provider.embedder.model_id)
                if nxt.id in vec:
                    cosine[nxt.id] = float(np.dot(vec[nxt.id], qvec))
    return Query(
        text=text,
        gold=gold,
        kind=kind,
        text_hits=text_hits,
        idf=idf,
        vec_hits=[(i, float(c)) for i, c in vec_hits],
        cosine=cosine,
        started={i: f[0] for i, f in facets.items()},
        agent={i: f[1] for i, f in facets.items()},
        named=frozenset(named),
        period_ids=period_ids,
        follow=follow,
        hub=_hubs(provider, list(cosine), scopes),
    )


def _memory(app: App) -> tuple[MemoryService, BuiltinProvider]:
    from fleetmem.embed.local import LocalMiniLM

    provider = BuiltinProvider(app.store, LocalMiniLM(), RankingOptions())
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    return memory, provider


def _ingest(memory: MemoryService, records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """run_id -> episode id."""
    out: dict[str, str] = {}
    for n, record in enumerate(records):
        result = memory.ingest_run(record)
        if result.status != "recorded" or result.episode_id is None:
            raise RuntimeError(f"{record['run_id']}: {result.status}")
        out[str(record["run_id"])] = result.episode_id
        if n % 500 == 499:
            print(f"  ingested {n + 1}/{len(records)}", file=sys.stderr)
    return out


def capture_locomo(half: str, convs: Sequence[Conversation], work: Path) -> Capture:
    picked = [c for i, c in enumerate(convs) if (i % 2 == 0) == (half == "dev")]
    queries: list[Query] = []
    for conv in picked:
        app = _app(work / f"locomo-{conv.key}")
        memory, provider = _memory(app)
        ids = _ingest(memory, [run_record(conv, t) for t in conv.turns])
        scope = f"project:bench.invalid/locomo/{conv.key}"
        for q in conv.questions:
            if q.category == 5 or not q.evidence:
                continue
            gold = frozenset(ids[e] for e in q.evidence if e in ids)
            if gold:
                queries.append(
                    _capture_one(app, provider, q.text, gold, f"cat{q.category}", [scope])
                )
        memory.close()
        app.close()
        print(f"  {conv.key}: {len(queries)} questions so far", file=sys.stderr)
    return Capture("locomo", half, queries)


def capture_locomo_sessions(half: str, convs: Sequence[Conversation], work: Path) -> Capture:
    """Each session one document (its turns joined), the half's conversations in one scope."""
    picked = [c for i, c in enumerate(convs) if (i % 2 == 0) == (half == "dev")]
    app = _app(work / f"sessions-{half}")
    memory, provider = _memory(app)
    records: list[dict[str, Any]] = []
    gold_of: list[tuple[str, frozenset[str], str]] = []
    for conv in picked:
        by_session: dict[int, list[Any]] = {}
        for t in conv.turns:
            by_session.setdefault(t.session, []).append(t)
        for n, turns in by_session.items():
            text = "\n".join(t.text for t in turns)
            first = turns[0]
            rec = run_record(conv, first)
            rec["run_id"] = f"{conv.key}-s{n}"
            rec["result_text"] = text
            rec["agent"] = "assistant"
            rec["sessions"][0]["repo"] = "bench.invalid/locomo-sessions"
            rec["sessions"][0]["branch"] = f"{conv.key}-s{n}"  # no context neighbours
            records.append(rec)
        for q in conv.questions:
            if q.category == 5 or not q.evidence:
                continue
            sessions = {f"{conv.key}-s{e.split(':')[0][1:]}" for e in q.evidence}
            gold_of.append((q.text, frozenset(sessions), f"cat{q.category}"))
    records.sort(key=lambda r: str(r["started_at"]))
    ids = _ingest(memory, records)
    scope = "project:bench.invalid/locomo-sessions"
    queries = []
    for text, sessions, kind in gold_of:
        gold = frozenset(ids[s] for s in sessions if s in ids)
        if gold:
            queries.append(_capture_one(app, provider, text, gold, kind, [scope]))
    memory.close()
    app.close()
    return Capture("locomo-sessions", half, queries)


#: Where installed distributions keep their metadata (the bench's own venv and the system's).
METADATA_GLOBS = (
    "*.dist-info/METADATA",
    "*.egg-info/PKG-INFO",
)


def package_texts() -> list[tuple[str, str, str]]:
    """(name, summary, description) of every installed distribution with both, the name
    masked in each: real technical prose written by many authors, none of it fleetmem's."""
    import email
    import site
    import sysconfig

    roots = {Path(sysconfig.get_paths()["purelib"]), *map(Path, site.getsitepackages())}
    roots.add(Path("/usr/lib/python3/dist-packages"))
    seen: dict[str, tuple[str, str, str]] = {}
    for root in sorted(roots):
        for pattern in METADATA_GLOBS:
            for path in sorted(root.glob(pattern)):
                msg = email.message_from_string(path.read_text(encoding="utf-8", errors="replace"))
                name = str(msg.get("Name") or "")
                summary = str(msg.get("Summary") or "")
                body = msg.get_payload()
                body = (
                    body
                    if isinstance(body, str) and body.strip()
                    else str(msg.get("Description") or "")
                )
                key = re.sub(r"[-_.]+", "-", name.lower())
                if not key or key in seen or len(summary) < 20 or len(body) < 300:
                    continue
                forms = {
                    name,
                    key,
                    key.replace("-", "_"),
                    key.replace("-", " "),
                    key.replace("-", ""),
                }
                mask = re.compile(
                    "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True) if f), re.I
                )
                # Many descriptions open with the summary itself: taken out, the question has
                # to be matched to what the description says in its own words.
                body = body.replace(summary.strip(), " ")
                question = mask.sub("this package", summary)
                if len(question.replace("this package", " ").split()) < 3:
                    continue  # a summary that is little more than the name asks nothing
                seen[key] = (
                    key,
                    question,
                    mask.sub("this package", body[:4000]),
                )
    return [seen[k] for k in sorted(seen)]


def capture_packages(half: str, work: Path) -> Capture:
    """Installed distributions' descriptions as documents, each asked for by its one-line
    summary (the package name masked in both)."""
    import zlib

    texts = [t for t in package_texts() if (zlib.crc32(t[0].encode()) % 2 == 0) == (half == "dev")]
    app = _app(work / f"packages-{half}")
    memory, provider = _memory(app)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    records = []
    for n, (name, _, body) in enumerate(texts):
        at = (start + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        records.append(
            {
                "version": 1,
                "run_id": f"pkg-{n}",
                "agent": "maintainer",
                "adapter": "bench",
                "trigger": "manual",
                "started_at": at,
                "ended_at": at,
                "outcome": "succeeded",
                "reason": "completed",
                "spawned": True,
                "result_text": body,
                "sessions": [
                    {
                        "id": "s1",
                        "cwd": "/bench",
                        "repo": "bench.invalid/packages",
                        "branch": name,
                        "events": [],
                    }
                ],
            }
        )
    ids = _ingest(memory, records)
    scope = "project:bench.invalid/packages"
    queries = [
        _capture_one(app, provider, summary, frozenset({ids[f"pkg-{n}"]}), "summary", [scope])
        for n, (_, summary, _) in enumerate(texts)
    ]
    memory.close()
    app.close()
    return Capture("packages", half, queries)


def capture_runs(half: str, work: Path) -> tuple[Capture, Capture]:
    seed = rs.DEV_SEED if half == "dev" else rs.CONFIRM_SEED
    data = rs.runs_set(half, seed)
    app = _app(work / f"runs-{half}")
    memory, provider = _memory(app)
    ids = _ingest(memory, data.records)
    scopes = [f"project:{r}" for r in data.repos]
    own, every = [], []
    for q in data.questions:
        gold = frozenset({ids[q.target]})
        own.append(_capture_one(app, provider, q.text, gold, q.kind, [f"project:{q.repo}"]))
        every.append(_capture_one(app, provider, q.text, gold, q.kind, scopes))
    unrelated = [
        _capture_one(app, provider, u, frozenset(), "unrelated", scopes) for u in data.unrelated
    ]
    memory.close()
    app.close()
    return (
        Capture("runs-own", half, own, unrelated),
        Capture("runs-all", half, every, unrelated),
    )


def capture(which: Sequence[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="fusion-lab-"))
    try:
        convs = load() if any(w.startswith("locomo") for w in which) else []
        for half in rs.HALVES:
            started = time.perf_counter()
            caps: list[Capture] = []
            if "locomo" in which:
                caps.append(capture_locomo(half, convs, work))
            if "locomo-sessions" in which:
                caps.append(capture_locomo_sessions(half, convs, work))
            if "runs" in which:
                caps.extend(capture_runs(half, work))
            if "packages" in which:
                caps.append(capture_packages(half, work))
            for cap in caps:
                path = OUT / f"{cap.name}-{cap.half}.pkl"
                path.write_bytes(pickle.dumps(cap))
                print(f"{path}: {len(cap.queries)} questions", file=sys.stderr)
            print(f"{half}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class _Unpickler(pickle.Unpickler):
    """Captures written by ``python -m bench.fusion_lab`` name their classes ``__main__``."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "__main__":
            module = __name__
        return super().find_class(module, name)


def load_captures() -> list[Capture]:
    out = []
    for path in sorted(OUT.glob("*.pkl")):
        with path.open("rb") as f:
            out.append(_Unpickler(f).load())
    return out


# ---- scoring -----------------------------------------------------------------------------
Fusion = Callable[[Query], list[str]]


def metrics(cap: Capture, fuse: Fusion) -> dict[str, float]:
    r10, rr = [], []
    for q in cap.queries:
        ranked = fuse(q)[:20]
        r10.append(len(q.gold & set(ranked[:10])) / len(q.gold))
        first = next((n for n, i in enumerate(ranked, 1) if i in q.gold), None)
        rr.append(1.0 / first if first else 0.0)
    out = {"r10": float(np.mean(r10)), "mrr": float(np.mean(rr))}
    if cap.unrelated:
        out["unrel"] = float(sum(1 for q in cap.unrelated if fuse(q)))
    return out


def _by_score(scores: dict[str, float], q: Query) -> list[str]:
    return [
        i
        for i, _ in sorted(
            scores.items(), key=lambda kv: (-kv[1], -q.started.get(kv[0], 0.0), kv[0])
        )
    ]


def bm25_only(q: Query) -> list[str]:
    return [i for i, _ in q.text_hits]


def cosine_only(q: Query) -> list[str]:
    return [i for i, _ in q.vec_hits]


def rrf(k: float = 60, wt: float = 1.0, wv: float = 1.0) -> Fusion:
    def fuse(q: Query) -> list[str]:
        s: dict[str, float] = {}
        for r, (i, _) in enumerate(q.text_hits, 1):
            s[i] = s.get(i, 0.0) + wt / (k + r)
        for r, (i, _) in enumerate(q.vec_hits, 1):
            s[i] = s.get(i, 0.0) + wv / (k + r)
        return _by_score(s, q)

    return fuse


def shipped(options: RankingOptions, calibration: Calibration) -> Fusion:
    """The built-in provider's fusion over a capture, through the product's own functions
    (:func:`~fleetmem.core.ranking.score_fusion` with word coverage): the question-level
    floor, each word match's coverage, the calibrated cosines and the three cues, as
    :meth:`BuiltinProvider.recall` applies them."""

    def fuse(q: Query) -> list[str]:
        if options.hub_weight > 0 and q.hub:
            # As the provider does after its floor, through its own two functions.
            offsets = {i: q.hub[i] for i in to_correct(q.cosine) if i in q.hub}
            q = dataclasses.replace(q, cosine=corrected(q.cosine, offsets, options.hub_weight))
        total = sum(q.idf) or 1.0
        coverage = {i: b / total for i, b in q.text_hits}
        best = max(coverage.values(), default=0.0)
        top_cos = max((c for _, c in q.vec_hits), default=None)
        if top_cos is not None and best < options.words_answer and top_cos <= calibration.relevant:
            return []
        text = [i for i, _ in q.text_hits]
        recency = q.started

        def run(
            rankings: list[list[str]], weights: list[float], bonus: dict[str, float]
        ) -> list[str]:
            fused = score_fusion(
                rankings,
                weights,
                similar=q.cosine,
                similar_weight=options.vector_weight,
                calibration=calibration,
                recency=recency,
                k=options.rrf_k,
                bonus=bonus,
                word_coverage=coverage,
                word_ramp=(options.words_low, options.words_high),
            )
            return [r.id for r in fused]

        first = score_fusion(
            [text],
            [options.text_weight],
            similar=q.cosine,
            similar_weight=options.vector_weight,
            calibration=calibration,
            recency=recency,
            k=options.rrf_k,
            word_coverage=coverage,
            word_ramp=(options.words_low, options.words_high),
        )
        order = [r.id for r in first]
        score = {r.id: r.score for r in first}
        rankings, weights, bonus = [text], [options.text_weight], {}
        if options.follow_up_weight > 0:
            for leader in order[:10]:
                nxt = q.follow.get(leader)
                if nxt and q.agent.get(nxt) != q.agent.get(leader):
                    if q.named and q.agent.get(nxt) not in q.named:
                        continue
                    bonus[nxt] = bonus.get(nxt, 0.0) + options.follow_up_weight * score[leader]
        if q.period_ids is not None and options.period_weight > 0:
            rankings.append([i for i in order if i in q.period_ids])
            weights.append(options.period_weight)
        if q.named and options.agent_weight > 0:
            rankings.append([i for i in order if q.agent.get(i) in q.named])
            weights.append(options.agent_weight)
        if len(rankings) == 1 and not bonus:
            return order
        return run(rankings, weights, bonus)

    return fuse


def baselines() -> dict[str, Fusion]:
    return {"bm25": bm25_only, "cosine": cosine_only, "rrf60": rrf(60)}


def gaps(
    cap: Capture, fuse: Fusion, best: dict[str, float]
) -> tuple[dict[str, float], list[float]]:
    m = metrics(cap, fuse)
    return m, [m["r10"] - best["r10"], m["mrr"] - best["mrr"]]


#: Points around the default asked by ``grid`` (field: values), one field changed at a time.
GRID: dict[str, tuple[float, ...]] = {
    "text_weight": (0.6, 0.65, 0.75, 0.8),
    "rrf_k": (3, 8, 10),
    "words_low": (0.0, 0.1, 0.2, 0.25),
    "words_high": (0.8, 1.0, 1.6, 2.0),
    "agent_weight": (0.0, 0.3, 0.8),
    "period_weight": (0.0, 0.3, 0.8),
    "follow_up_weight": (0.0, 0.35, 1.0),
    "floor": (-0.1, 0.05, 0.1, 0.15),
    "full": (0.6, 0.7, 0.9),
    "relevant": (0.1, 0.14, 0.18, 0.2),
    "hub_weight": (0.0, 0.1, 0.3, 0.4, 0.6),
}


def grid(caps: Sequence[Capture], model_id: str) -> dict[str, Any]:
    """Every point of :data:`GRID` on every set, dev and confirm apart, beside the baselines.

    The rule the defaults were chosen by, on the dev halves only: the highest mean gap to
    the best baseline (recall@10 and MRR of every set), among points whose smallest gap is
    no worse than the default's by more than one question of the smallest set."""
    base_opts, base_cal = RankingOptions(), calibration_for(model_id)
    points: list[tuple[str, RankingOptions, Calibration]] = [("default", base_opts, base_cal)]
    for name, values in GRID.items():
        for value in values:
            if name in ("floor", "full", "relevant"):
                try:
                    cal = dataclasses.replace(base_cal, **{name: value})
                except ValueError:
                    continue
                points.append((f"{name}={value:g}", base_opts, cal))
            else:
                changes: dict[str, Any] = {name: int(value) if name == "rrf_k" else value}
                if name == "text_weight":  # the two channels' weights add up to 1
                    changes["vector_weight"] = round(1 - value, 3)
                opts = dataclasses.replace(base_opts, **changes)
                points.append((f"{name}={value:g}", opts, base_cal))
    best = {
        (c.name, c.half): {
            m: max(metrics(c, f)[m] for f in baselines().values()) for m in ("r10", "mrr")
        }
        for c in caps
    }
    out: dict[str, Any] = {"baselines": {}, "points": {}}
    for c in caps:
        out["baselines"][f"{c.name}/{c.half}"] = {
            name: metrics(c, f) for name, f in baselines().items()
        }
    for name, opts, cal in points:
        fuse = shipped(opts, cal)
        row: dict[str, Any] = {"sets": {}, "gaps": {"dev": [], "confirm": []}}
        for c in caps:
            m, g = gaps(c, fuse, best[(c.name, c.half)])
            row["sets"][f"{c.name}/{c.half}"] = m
            row["gaps"][c.half] += g
        for half in ("dev", "confirm"):
            g = row["gaps"][half]
            row[f"{half}_min_gap"] = min(g) if g else 0.0
            row[f"{half}_mean_gap"] = float(np.mean(g)) if g else 0.0
        del row["gaps"]
        out["points"][name] = row
    return out


def table(result: dict[str, Any]) -> str:
    sets = sorted(
        next(iter(result["points"].values()))["sets"], key=lambda s: (s.split("/")[1] != "dev", s)
    )
    head = "| point | " + " | ".join(sets) + " | dev min / mean gap | confirm min / mean gap |"
    lines = [head, "|" + "---|" * (len(sets) + 3)]
    for base in ("bm25", "cosine", "rrf60"):
        cells = [
            f"{result['baselines'][s][base]['r10']:.3f} / {result['baselines'][s][base]['mrr']:.3f}"
            for s in sets
        ]
        lines.append(f"| {base} | " + " | ".join(cells) + " | | |")
    for name, row in result["points"].items():
        cells = [f"{row['sets'][s]['r10']:.3f} / {row['sets'][s]['mrr']:.3f}" for s in sets]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {row['dev_min_gap']:+.3f} / {row['dev_mean_gap']:+.3f}"
            + f" | {row['confirm_min_gap']:+.3f} / {row['confirm_mean_gap']:+.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fusion_lab")
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("sets", nargs="*", default=["runs", "locomo", "locomo-sessions", "packages"])
    sub.add_parser("grid")
    args = parser.parse_args(list(argv) or None)
    if args.cmd == "capture":
        capture(args.sets)
        return 0
    from bench.common import write_result
    from fleetmem.embed.local import MODEL_ID

    result = grid(load_captures(), MODEL_ID)
    path = write_result("fusion-lab", result)
    print(table(result))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
