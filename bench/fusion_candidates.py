"""Candidate fusions scored over :mod:`bench.fusion_lab` captures."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence

import numpy as np

from bench.fusion_lab import (
    Capture,
    Fusion,
    Query,
    _by_score,
    bm25_only,
    cosine_only,
    metrics,
    rrf,
)


def _strength(c: float, floor: float, full: float) -> float:
    return min(1.0, max(0.0, (c - floor) / (full - floor)))


def current(
    tw: float = 0.6,
    vw: float = 0.4,
    k: int = 5,
    floor: float = 0.2,
    full: float = 0.8,
    words_full: float = 0.45,
    gate: bool = True,
    agent_w: float = 0.3,
    period_w: float = 0.3,
    follow_w: float = 0.0,
) -> Fusion:
    """The shipped score fusion, cues included (a replica, for fidelity checks)."""

    def base(q: Query) -> dict[str, float]:
        s: dict[str, float] = {}
        for r, (i, _) in enumerate(q.text_hits, 1):
            share = tw * (k + 1) / (k + r)
            c = q.cosine.get(i)
            if gate and c is not None:
                share *= min(1.0, max(0.0, (c - floor) / (words_full - floor)))
            s[i] = s.get(i, 0.0) + share
        for i, c in q.vec_hits:
            s[i] = s.get(i, 0.0) + vw * _strength(c, floor, full)
        worded = {i for i, _ in q.text_hits} if not gate else set()
        for i in list(s):
            if i in q.cosine and q.cosine[i] <= floor and i not in worded:
                del s[i]
        return s

    def fuse(q: Query) -> list[str]:
        s = base(q)
        s = {i: v for i, v in s.items() if v > 0}
        order = _by_score(s, q)
        extra: dict[str, float] = {}
        if follow_w > 0:
            for leader in order[:10]:
                nxt = q.follow.get(leader)
                if nxt:
                    extra[nxt] = extra.get(nxt, 0.0) + follow_w * s[leader]
        lists: list[tuple[list[str], float]] = []
        if q.period_ids is not None and period_w > 0:
            lists.append(([i for i in order if i in q.period_ids], period_w))
        if q.named and agent_w > 0:
            lists.append(([i for i in order if q.agent.get(i) in q.named], agent_w))
        if not lists and not extra:
            return order
        s2 = dict(s)
        for ids, w in lists:
            for r, i in enumerate(ids, 1):
                s2[i] = s2.get(i, 0.0) + w * (k + 1) / (k + r)
        for i, v in extra.items():
            s2[i] = s2.get(i, 0.0) + v
        return _by_score({i: v for i, v in s2.items() if v > 0}, q)

    return fuse


def absolute(
    wt: float = 0.5,
    floor: float = 0.2,
    full: float = 0.8,
    lex_full: float = 0.6,
    lex_pow: float = 1.0,
    cos_pow: float = 1.0,
    cues: float = 0.0,
    gate_floor: float | None = None,
) -> Fusion:
    """Both channels on absolute scales: BM25 over the query's summed IDF (how much of the
    query a document covers, weighted by rarity) and the calibrated cosine."""

    def fuse(q: Query) -> list[str]:
        total = sum(q.idf) or 1.0
        s: dict[str, float] = {}
        for i, b in q.text_hits:
            lex = min(1.0, (b / total) / lex_full) ** lex_pow
            s[i] = wt * lex
        for i, c in q.cosine.items():
            s[i] = s.get(i, 0.0) + (1 - wt) * _strength(c, floor, full) ** cos_pow
        if gate_floor is not None:
            s = {i: v for i, v in s.items() if q.cosine.get(i, 1.0) > gate_floor}
        s = {i: v for i, v in s.items() if v > 0}
        if cues > 0:
            order = _by_score(s, q)
            for ids in (
                [i for i in order if q.period_ids is not None and i in q.period_ids],
                [i for i in order if q.named and q.agent.get(i) in q.named],
            ):
                for r, i in enumerate(ids, 1):
                    s[i] += cues * 6 / (5 + r)
        return _by_score(s, q)

    return fuse


def minmax(wt: float = 0.5, cos_min: float | None = None) -> Fusion:
    """Convex combination of per-query max-normalised BM25 and min-max cosine."""

    def fuse(q: Query) -> list[str]:
        s: dict[str, float] = {}
        if q.text_hits:
            top = q.text_hits[0][1] or 1.0
            for i, b in q.text_hits:
                s[i] = wt * b / top
        cs = list(q.cosine.values())
        if cs:
            lo = min(cs) if cos_min is None else cos_min
            hi = max(cs)
            span = (hi - lo) or 1.0
            for i, c in q.cosine.items():
                s[i] = s.get(i, 0.0) + (1 - wt) * max(0.0, (c - lo) / span)
        return _by_score(s, q)

    return fuse


def oracle(q: Query) -> list[str]:
    """The better of BM25 and cosine per question (an upper bound of choosing a channel)."""
    a, b = bm25_only(q), cosine_only(q)

    def rank(x: list[str]) -> int:
        return next((n for n, i in enumerate(x) if i in q.gold), 999)

    return a if rank(a) <= rank(b) else b


CANDIDATES: dict[str, Fusion] = {
    "bm25": bm25_only,
    "cosine": cosine_only,
    "rrf60": rrf(60),
    "oracle-channel": oracle,
    "current": current(),
    "current-nocues": current(agent_w=0, period_w=0),
    "current-ungated": current(gate=False),
    "current-ungated+fu": current(gate=False, follow_w=0.7),
}
for wt, lf in itertools.product((0.4, 0.5, 0.6), (0.4, 0.6, 0.8)):
    CANDIDATES[f"abs wt={wt} lf={lf}"] = absolute(wt=wt, lex_full=lf)
for wt in (0.3, 0.5, 0.7):
    CANDIDATES[f"minmax wt={wt}"] = minmax(wt)


def report(caps: Sequence[Capture], names: Sequence[str] | None = None) -> None:
    import re

    pattern = re.compile("|".join(names)) if names else None
    chosen = {n: f for n, f in CANDIDATES.items() if pattern is None or pattern.search(n)}
    caps = sorted(caps, key=lambda c: (c.half != "dev", c.name))
    short = {
        "locomo": "LoCo",
        "locomo-sessions": "Sess",
        "runs-all": "RunsAll",
        "runs-own": "RunsOwn",
    }
    head = " | ".join(f"{short.get(c.name, c.name)} {c.half[:3]}" for c in caps)
    print(f"| fusion | {head} | dev gap | conf gap | unrel |")
    print("|" + "---|" * (len(caps) + 4))
    best = {
        (c.name, c.half): {
            m: max(metrics(c, CANDIDATES[b])[m] for b in ("bm25", "cosine", "rrf60"))
            for m in ("r10", "mrr")
        }
        for c in caps
    }
    for name, fuse in chosen.items():
        cells, gaps = [], {"dev": [], "confirm": []}
        unrel = 0.0
        for c in caps:
            m = metrics(c, fuse)
            b = best[(c.name, c.half)]
            gaps[c.half] += [m["r10"] - b["r10"], m["mrr"] - b["mrr"]]
            cells.append(f"{m['r10']:.3f}/{m['mrr']:.3f}")
            if c.name == "runs-all":
                unrel += m.get("unrel", 0.0)
        print(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {min(gaps['dev']):+.3f} | {min(gaps['confirm']):+.3f} | {unrel:.0f}/20 |"
        )
    sys.stdout.flush()


def adaptive(
    tw: float = 0.6,
    vw: float = 0.4,
    k: int = 5,
    c_lo: float = 0.1,
    c_hi: float = 0.4,
    floor: float = 0.2,
    full: float = 0.8,
    agent_w: float = 0.3,
    period_w: float = 0.3,
    follow_w: float = 0.0,
    item_floor: float | None = None,
    per_doc: bool = False,
) -> Fusion:
    """Rank-share words weighted by how much of the query the best word match covers, plus
    the calibrated cosine; cues as in the shipped fusion."""

    def fuse(q: Query) -> list[str]:
        total = sum(q.idf) or 1.0
        cov_top = (q.text_hits[0][1] / total) if q.text_hits else 0.0
        conf = min(1.0, max(0.0, (cov_top - c_lo) / (c_hi - c_lo)))
        s: dict[str, float] = {}
        for r, (i, b) in enumerate(q.text_hits, 1):
            c = conf
            if per_doc:
                c = min(1.0, max(0.0, (b / total - c_lo) / (c_hi - c_lo)))
            s[i] = tw * c * (k + 1) / (k + r)
        for i, cos in q.vec_hits:
            s[i] = s.get(i, 0.0) + vw * _strength(cos, floor, full)
        if item_floor is not None:
            s = {i: v for i, v in s.items() if q.cosine.get(i, 1.0) > item_floor}
        s = {i: v for i, v in s.items() if v > 0}
        order = _by_score(s, q)
        s2 = dict(s)
        if follow_w > 0:
            for leader in order[:10]:
                nxt = q.follow.get(leader)
                if nxt:
                    s2[nxt] = s2.get(nxt, 0.0) + follow_w * s[leader]
        lists: list[tuple[list[str], float]] = []
        if q.period_ids is not None and period_w > 0:
            lists.append(([i for i in order if i in q.period_ids], period_w))
        if q.named and agent_w > 0:
            lists.append(([i for i in order if q.agent.get(i) in q.named], agent_w))
        for ids, w in lists:
            for r, i in enumerate(ids, 1):
                s2[i] = s2.get(i, 0.0) + w * (k + 1) / (k + r)
        return _by_score(s2, q)

    return fuse


for lo, hi in ((0.1, 0.3), (0.1, 0.4), (0.15, 0.5), (0.2, 0.6), (0.05, 0.3)):
    CANDIDATES[f"adapt {lo}-{hi}"] = adaptive(c_lo=lo, c_hi=hi)
    CANDIDATES[f"adapt {lo}-{hi} fu"] = adaptive(c_lo=lo, c_hi=hi, follow_w=0.7)
CANDIDATES["adapt perdoc .1-.4"] = adaptive(per_doc=True)
CANDIDATES["adapt .1-.4 tw.5"] = adaptive(tw=0.5, vw=0.5)
CANDIDATES["adapt .1-.4 tw.7"] = adaptive(tw=0.7, vw=0.3)
CANDIDATES["adapt .1-.4 k10"] = adaptive(k=10)
CANDIDATES["adapt .1-.4 floor.1"] = adaptive(floor=0.1)
CANDIDATES["adapt .1-.4 full.6"] = adaptive(full=0.6)


def adaptive_cos(
    tw: float = 0.6,
    vw: float = 0.4,
    k: int = 5,
    r_lo: float = 0.5,
    r_hi: float = 0.8,
    top: int = 3,
    floor: float = 0.1,
    full: float = 0.8,
    agent_w: float = 0.3,
    period_w: float = 0.3,
) -> Fusion:
    """As :func:`adaptive`, the words' confidence read from the cosines of the best word
    matches relative to the best cosine (no term statistics needed)."""
    inner = adaptive(
        tw=tw,
        vw=vw,
        k=k,
        floor=floor,
        full=full,
        agent_w=agent_w,
        period_w=period_w,
        c_lo=0.0,
        c_hi=1.0,
    )

    def fuse(q: Query) -> list[str]:
        best = q.vec_hits[0][1] if q.vec_hits else 0.0
        tops = [q.cosine.get(i, 0.0) for i, _ in q.text_hits[:top]]
        ratio = (max(tops) / best) if tops and best > 0 else 0.0
        conf = min(1.0, max(0.0, (ratio - r_lo) / (r_hi - r_lo)))
        # reuse adaptive by faking idf so that cov_top maps to conf
        fake = Query(
            **{
                **q.__dict__,
                "idf": [q.text_hits[0][1] / conf] if conf > 0 and q.text_hits else [1e9],
            }
        )
        return inner(fake)

    return fuse


for lo, hi in ((0.4, 0.7), (0.5, 0.8), (0.6, 0.9), (0.7, 1.0)):
    CANDIDATES[f"adcos {lo}-{hi}"] = adaptive_cos(r_lo=lo, r_hi=hi)
for f in (0.05, 0.15, 0.2):
    CANDIDATES[f"adapt .1-.4 floor{f}"] = adaptive(floor=f)
    CANDIDATES[f"adapt .15-.5 floor{f}"] = adaptive(c_lo=0.15, c_hi=0.5, floor=f)
CANDIDATES["adapt .15-.5 floor.1"] = adaptive(c_lo=0.15, c_hi=0.5, floor=0.1)
CANDIDATES["adapt .15-.5 floor.1 fu"] = adaptive(c_lo=0.15, c_hi=0.5, floor=0.1, follow_w=0.7)
CANDIDATES["adapt .1-.4 floor.1 fu"] = adaptive(floor=0.1, follow_w=0.7)
CANDIDATES["adapt .1-.4 floor.1 nocue"] = adaptive(floor=0.1, agent_w=0, period_w=0)
CANDIDATES["adapt .1-.4 floor.1 noagent"] = adaptive(floor=0.1, agent_w=0)
CANDIDATES["adapt .1-.4 floor.1 noperiod"] = adaptive(floor=0.1, period_w=0)
CANDIDATES["adapt .1-.4 floor.1 tw.5"] = adaptive(floor=0.1, tw=0.5, vw=0.5)
CANDIDATES["adapt .1-.4 floor.1 tw.7"] = adaptive(floor=0.1, tw=0.7, vw=0.3)
CANDIDATES["adapt .1-.4 floor.1 k10"] = adaptive(floor=0.1, k=10)
CANDIDATES["adapt .1-.4 floor.1 k3"] = adaptive(floor=0.1, k=3)
CANDIDATES["adapt .1-.4 floor.1 full.6"] = adaptive(floor=0.1, full=0.6)


def previous(
    k: int = 10, wv: float = 0.5, agent_w: float = 1.0, period_w: float = 1.0, follow_w: float = 0.7
) -> Fusion:
    """The weighted-RRF default before score fusion (cues as rank channels)."""

    def fuse(q: Query) -> list[str]:
        s: dict[str, float] = {}
        for r, (i, _) in enumerate(q.text_hits, 1):
            s[i] = s.get(i, 0.0) + 1.0 / (k + r)
        for r, (i, _) in enumerate(q.vec_hits, 1):
            s[i] = s.get(i, 0.0) + wv / (k + r)
        order = _by_score(s, q)
        s2 = dict(s)
        if follow_w > 0:
            for leader in order[:10]:
                nxt = q.follow.get(leader)
                if nxt:
                    s2[nxt] = s2.get(nxt, 0.0) + follow_w * s[leader]
        if q.period_ids is not None and period_w > 0:
            for r, i in enumerate([i for i in order if i in q.period_ids], 1):
                s2[i] += period_w / (k + r)
        if q.named and agent_w > 0:
            for r, i in enumerate([i for i in order if q.agent.get(i) in q.named], 1):
                s2[i] += agent_w / (k + r)
        return _by_score(s2, q)

    return fuse


CANDIDATES["previous"] = previous()


def gated(inner: Fusion, q_floor: float = 0.2, cov_min: float = 0.5) -> Fusion:
    """Nothing relevant unless the best cosine is above ``q_floor`` or the best word match
    covers ``cov_min`` of the query's summed IDF."""

    def fuse(q: Query) -> list[str]:
        total = sum(q.idf) or 1.0
        cov_top = (q.text_hits[0][1] / total) if q.text_hits else 0.0
        top_cos = q.vec_hits[0][1] if q.vec_hits else -1.0
        if top_cos <= q_floor and cov_top < cov_min:
            return []
        return inner(q)

    return fuse


for aw, pw, fw in itertools.product((0.3, 0.5, 0.8), (0.3, 0.5, 0.8), (0.0, 0.5, 0.7)):
    CANDIDATES[f"cue a{aw} p{pw} f{fw}"] = adaptive(
        c_lo=0.15, c_hi=0.5, floor=0.1, agent_w=aw, period_w=pw, follow_w=fw
    )
for qf, cm in itertools.product((0.15, 0.2, 0.25), (0.4, 0.5, 0.7)):
    CANDIDATES[f"gate q{qf} c{cm}"] = gated(adaptive(c_lo=0.15, c_hi=0.5, floor=0.1), qf, cm)


if __name__ == "__main__":
    from bench.fusion_lab import load_captures

    report(load_captures(), sys.argv[1:] or None)
    _ = np
